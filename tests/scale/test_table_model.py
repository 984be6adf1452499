"""The compact table against a plain model of it: per-stimulus Python lists, one metric call
per stimulus (what the table and scoring were before they were made to scale)."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gate import metrics
from gate.ingest import IngestOptions, load, native
from gate.scoring import score_table
from gate.trials import SuiteSpec, Trial, TrialTable, resolve
from tests.scale.conftest import random_jsonl


def model(path: Path) -> tuple[dict[tuple[str, str], list[tuple[int, Trial, Any]]], dict[str, Any]]:
    """(suite, stimulus) → [(index, trial, resolved)] sorted by index; the trials one by one."""
    specs: dict[str, SuiteSpec] = {}
    rows: dict[tuple[str, str], list[tuple[int, Trial, Any]]] = defaultdict(list)
    for record in native.read_strict(str(path), IngestOptions()):
        if isinstance(record, SuiteSpec):
            specs[record.name] = record
            continue
        spec = specs.setdefault(record.suite, SuiteSpec(record.suite))
        rows[(record.suite, record.stimulus)].append((record.trial, record, resolve(record, spec)))
    return {k: sorted(v, key=lambda x: x[0]) for k, v in rows.items()}, specs


def test_table_views_equal_the_list_model(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    random_jsonl(path, random.Random(11), stimuli=50, trials=30, order="shuffled")
    table, _ = load([str(path)])
    rows, _ = model(path)
    assert list(table.stimuli) == list(rows)  # first-seen order
    for key, trials in rows.items():
        record = table.stimuli[key]
        assert record.indices == [t for t, _, _ in trials]
        assert record.passed == [r.passed for _, _, r in trials]
        assert record.scores == [r.score for _, _, r in trials]
        assert record.categories == [r.category for _, _, r in trials]
        assert record.statuses == [trial.status for _, trial, _ in trials]
        assert record.scored == any(r.scored for _, _, r in trials)
        assert record.tags == {tag for _, trial, _ in trials for tag in trial.tags}
        messages = [trial.message for _, trial, _ in sorted(trials, key=_line)
                    if trial.message and trial.status != "ok"]  # fmt: skip
        assert record.messages == messages[:3]


def _line(item: tuple[int, Trial, Any]) -> int:
    where = item[1].provenance
    assert where is not None and where.line is not None
    return where.line


@pytest.mark.parametrize("errors", ["fail", "exclude"])
def test_vectorised_scores_equal_one_metric_call_per_stimulus(tmp_path: Path, errors: str) -> None:
    path = tmp_path / "r.jsonl"
    random_jsonl(path, random.Random(12), stimuli=40, trials=12)
    table, _ = load([str(path)])
    suite = score_table(table, errors=errors, k=3)  # type: ignore[arg-type]
    rows, _ = model(path)
    keep = ("ok", "error") if errors == "fail" else ("ok",)
    by_name = {(s.suite, s.name): s for s in suite.stimuli}
    for key, trials in rows.items():
        counted = [(trial, r) for _, trial, r in trials if trial.status in keep]
        if not counted:
            assert key[1] in suite.not_scored or f"{key[0]}/{key[1]}" in suite.not_scored
            continue
        n, c = len(counted), sum(r.passed for _, r in counted)
        score = by_name[key]
        assert (score.trials, score.passes) == (n, c)
        letters = "".join(
            "P" if r.passed else ("E" if t.status == "error" else "F") for t, r in counted
        )
        assert score.outcomes == letters
        assert score.aggregate_score == pytest.approx(float(np.mean([r.score for _, r in counted])))
        assert math.isclose(score.pass_at_k, float(metrics.pass_at_k_counts(n, c, 3)))
        assert math.isclose(score.pass_hat_k, float(metrics.pass_hat_k_counts(n, c, 3)))
        iv = metrics.rate_interval(c, n, 0.95, "mid-p")  # the default of score_table
        assert score.pass_rate_interval.lo == pytest.approx(float(iv.lo), abs=1e-15)
        assert score.pass_rate_interval.hi == pytest.approx(float(iv.hi), abs=1e-15)
        assert score.flakiness_band == metrics.flakiness_band(metrics.flakiness_percent(n, c))


def test_trials_added_one_by_one_in_any_order_give_the_same_table() -> None:
    rng = random.Random(5)
    trials = [
        Trial(stimulus=f"s{s}", trial=t, passed=rng.random() < 0.5, score=round(rng.random(), 2))
        for s in range(30)
        for t in range(rng.randint(1, 80))
    ]
    forward, backward = TrialTable(), TrialTable()
    forward.extend(trials)
    backward.extend(reversed(trials))
    for key, record in forward.stimuli.items():
        other = backward.stimuli[key]
        assert (record.indices, record.passed, record.scores) == (
            other.indices,
            other.passed,
            other.scores,
        )
        assert record.score_sum() == other.score_sum()  # exact: fsum, not order-dependent
    assert score_table(forward).stimuli == tuple(
        sorted(score_table(backward).stimuli, key=lambda s: int(s.name[1:]))
    )


def test_stimuli_without_counted_trials_are_left_out_and_k_is_bounded_by_the_fewest() -> None:
    """score_table's bookkeeping, by hand: 'skip' (all skipped) and 'broke' (all errored,
    errors excluded) are left out, named, with their counts; k over the fewest counted
    trials names the first stimulus that has fewer; no counted trial at all is an error."""
    from gate.errors import ConfigError
    from gate.scoring import NotScored

    table = TrialTable()
    table.extend(
        [Trial(stimulus="a", trial=t, passed=t % 2 == 0) for t in range(4)]
        + [Trial(stimulus="skip", trial=t, status="skipped") for t in range(3)]
        + [Trial(stimulus="b", trial=t, passed=True) for t in range(2)]
        + [Trial(stimulus="b", trial=2, status="error")]
        + [Trial(stimulus="broke", trial=t, status="error") for t in range(2)]
    )
    suite = score_table(table, errors="exclude")
    assert [s.name for s in suite.stimuli] == ["a", "b"] and suite.k == 2
    assert suite.not_scored == ("skip", "broke")
    assert suite.left_out == (
        NotScored("default", "skip", 3, 0),
        NotScored("default", "broke", 0, 2),
    )
    with pytest.raises(
        ConfigError, match=r"k = 3 exceeds the 2 counted trials of stimulus 'b'; choose k ≤ 2"
    ):
        score_table(table, errors="exclude", k=3)
    with pytest.raises(ConfigError, match=r"the 2 counted trials of stimulus 'broke'"):
        score_table(table, errors="fail", k=3)  # b's error counts (3 trials); broke's 2 do
    only_skipped = TrialTable()
    only_skipped.extend([Trial(stimulus="skip", trial=0, status="skipped")])
    with pytest.raises(ConfigError, match="no stimulus has a counted trial"):
        score_table(only_skipped)
