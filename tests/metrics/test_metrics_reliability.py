"""Reliability summary (reference 004): dot-path targets and the metrics object."""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import numpy as np
import pytest

from gate import metrics


def test_summary_fields_and_targets() -> None:
    summary = metrics.summarize([True, True, True, False])
    assert summary.decay_curve == (100, 100, 100, 31)
    assert summary.graceful_degradation == 60
    assert summary.variance_amplification == 87  # sd = sqrt(3/16) = 0.433 → 86.6
    assert summary.resolve_target("reliability.graceful_degradation") == 60
    assert summary.resolve_target("reliability.decay_curve") == [100, 100, 100, 31]
    assert summary.resolve_target("reliability.runs") == 4
    assert summary.resolve_target("reliability.pass_rate") == 0.75
    assert round(summary.resolve_target("reliability.confidence_band"), 3) == 0.49


def test_every_listed_target_resolves() -> None:
    summary = metrics.summarize([False, True])
    for path in metrics.RELIABILITY_TARGETS:
        summary.resolve_target(path)


def test_unknown_target_names_valid_paths() -> None:
    summary = metrics.summarize([True])
    with pytest.raises(KeyError) as caught:
        summary.resolve_target("reliability.grace")
    assert "reliability.graceful_degradation" in str(caught.value)
    with pytest.raises(ValueError, match="valid targets"):
        summary.resolve_target("graceful_degradation")


def test_metrics_object_is_json_ready() -> None:
    summary = metrics.summarize([False, True, True, True])
    payload = summary.metrics_object()
    assert json.loads(json.dumps(payload)) == payload
    assert payload["reliability"]["graceful_degradation"] == 90


def test_summary_is_frozen() -> None:
    summary = metrics.summarize([True])
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.runs = 2  # type: ignore[misc]


def test_decay_curve_floors_exactly() -> None:
    # (1/2)^2 = 25 exactly; (2/4)^4 = 6.25 → 6; no float round-off at the boundary.
    assert metrics.reliability_decay_curve([True, False]) == [100, 25]
    assert metrics.reliability_decay_curve([False, True, False, True]) == [0, 25, 3, 6]


def test_round_half_up() -> None:
    # 15 runs, only run 3 passes: 100 * 3/120 = 2.5 → 3 (half up, not banker's 2).
    outcomes = [position == 3 for position in range(1, 16)]
    assert metrics.graceful_degradation(outcomes) == 3


@pytest.mark.parametrize(("confidence", "runs"), [(0.90, 271), (0.95, 385), (0.99, 664)])
def test_recommend_runs_other_levels(confidence: float, runs: int) -> None:
    assert metrics.recommend_runs(0.05, confidence) == runs


def test_variance_amplification_from_counts_equals_every_ordering() -> None:
    # Order-free: the counts form equals the per-run form for every ordering of n runs.
    for n in range(1, 11):
        for bits in itertools.product([False, True], repeat=n):
            expected = metrics.variance_amplification(bits)
            assert metrics.variance_amplification_counts(n, sum(bits)).tolist() == expected
    assert metrics.variance_amplification_counts([4, 4, 2], [2, 3, 0]).tolist() == [100, 87, 0]


def test_decay_entries_are_exact_integers_for_every_count() -> None:
    """The float shortcut floors exactly as the integer formula does, for every (c, k)."""
    from gate.metrics.reliability import _decay_entry

    for k in range(1, 130):
        for c in range(k + 1):
            assert _decay_entry(c, k) == 100 * c**k // k**k, (c, k)


def test_rows_of_many_runs_agree_with_each_run_alone() -> None:
    """The vectorised rows (end to end or as separate runs) against the per-run functions,
    seeded runs of 1 to 400 outcomes (long ones reach the exact-integer floor path)."""
    from gate.metrics.reliability import reliability_rows, reliability_rows_flat

    rng = np.random.default_rng(7)
    runs = [rng.random(int(rng.integers(1, 400))) < rng.random() for _ in range(300)]
    runs += [np.ones(60, dtype=bool), np.zeros(1, dtype=bool), np.array([True, False] * 9)]
    expected = [
        (
            metrics.reliability_decay_curve(run.tolist()),
            metrics.variance_amplification(run.tolist()),
            metrics.graceful_degradation(run.tolist()),
        )
        for run in runs
    ]
    flat = reliability_rows_flat(np.concatenate(runs), [run.size for run in runs])
    assert [tuple(row) for row in flat] == expected
    assert [tuple(row) for row in reliability_rows(runs)] == expected
    assert reliability_rows_flat([], []) == []


@pytest.mark.parametrize(
    ("passed", "sizes", "message"),
    [
        ([True, False], [1, 0, 1], r"sizes\[1\] = 0"),
        ([True, False], [3], "add up to 3, not the 2 outcomes"),
        ([True, 2], [2], r"passed\[1\] = 2"),
        ([True], [1.0], "flat sequence of integers"),
    ],
)
def test_runs_end_to_end_are_checked(passed: list[Any], sizes: list[Any], message: str) -> None:
    from gate.metrics.reliability import reliability_rows_flat

    with pytest.raises(ValueError, match=message):
        reliability_rows_flat(passed, sizes)
