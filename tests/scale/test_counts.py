"""A counts file gives the verdicts of the trials it was made from; what it cannot say, it says."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import pytest

from gate.config import build_config
from gate.errors import InputError
from gate.ingest import IngestOptions, load
from gate.ingest.counts import counts_rows, write_counts
from gate.pipeline import CheckRequest, run_check
from gate.report.json_report import build_report
from gate.report.markdown import render_summary
from gate.schemas import validator
from gate.table import TrialTable
from gate.trials import CountsColumns, StimulusCounts, SuiteSpec, Trial
from tests.scale.conftest import random_jsonl

COUNTS = IngestOptions(format="counts")
# Reading counts warns that order-dependent metrics are unavailable; the reports test checks it.
pytestmark = pytest.mark.filterwarnings("ignore:.*given as counts:UserWarning")

CONFIGS = [
    {"gates": {"threshold": 0.45}},
    {"k": 2, "gates": {"pass_rate": {"min": 0.4, "bound": "lower"}, "pass_at_k": 0.7}},
    {"k": 3, "gates": {"pass_hat_k": {"min": 0.2, "bound": "interval"}}},
    {"k": 2, "gates": {"pass_rate": {"min": 0.6, "bound": "lower", "scope": "stimuli"}}},
    {"gates": {"max_flakiness": 0.45, "max_ci_half_width": 0.2}},
    {"errors": "exclude", "gates": {"pass_rate": {"min": 0.5, "scope": "stimuli", "tag": "geo"}}},
    {"interval": "jeffreys", "confidence": 0.9, "gates": {"pass_hat_k": {"min": 0.3, "k": 2}}},
]


@pytest.fixture
def trials_and_counts(tmp_path: Path) -> tuple[Path, Path]:
    trials = tmp_path / "trials.jsonl"
    random_jsonl(trials, random.Random(21), stimuli=80, trials=10, order="shuffled")
    table, _ = load([str(trials)])
    counts = tmp_path / "counts.jsonl"
    write_counts(table, str(counts))
    return trials, counts


@pytest.mark.parametrize("settings", CONFIGS)
def test_counts_give_the_verdicts_and_numbers_of_their_trials(
    trials_and_counts: tuple[Path, Path], settings: dict[str, object]
) -> None:
    trials, counts = trials_and_counts
    config = build_config(settings)
    from_trials = run_check(CheckRequest((str(trials),), config))
    from_counts = run_check(CheckRequest((str(counts),), config, COUNTS))
    assert [g.passed for g in from_counts.gates] == [g.passed for g in from_trials.gates]
    assert from_counts.gates == from_trials.gates
    assert from_counts.verdict == from_trials.verdict
    # Everything but the trial order is the same, number for number.
    expected = [{**s.as_dict(), "outcomes": ""} for s in from_trials.suite.stimuli]
    assert [s.as_dict() for s in from_counts.suite.stimuli] == expected
    assert dataclasses.replace(
        from_counts.suite, stimuli=from_trials.suite.stimuli
    ) == dataclasses.replace(from_trials.suite, stimuli=from_trials.suite.stimuli)


def test_reports_say_which_metrics_need_trials(trials_and_counts: tuple[Path, Path]) -> None:
    _, counts = trials_and_counts
    config = build_config({"gates": {"threshold": 0.1}})
    outcome = run_check(CheckRequest((str(counts),), config, COUNTS))
    assert any("order-dependent" in w and "counts" in w for w in outcome.warnings)
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    assert {s["outcomes"] for s in report["stimuli"]} == {""}
    summary = render_summary(outcome)
    assert "reliability decay curve" in summary  # the warning, Markdown-escaped


def test_json_array_form_equals_jsonl(trials_and_counts: tuple[Path, Path], tmp_path: Path) -> None:
    _, counts = trials_and_counts
    array = tmp_path / "counts.json"
    rows = [json.loads(line) for line in counts.read_text().splitlines()]
    array.write_text(json.dumps(rows, indent=1))
    one, _ = load([str(counts)], COUNTS)
    two, _ = load([str(array)], COUNTS)
    assert [(r.n(), r.c(), r.errors, r.skipped, r.score_sum(), r.scored, r.tags)
            for r in one.stimuli.values()] == [
        (r.n(), r.c(), r.errors, r.skipped, r.score_sum(), r.scored, r.tags)
        for r in two.stimuli.values()
    ]  # fmt: skip


def test_sql_nulls_and_categories(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    weights = {"wrong": 0.0, "partial": 0.5, "right": 1.0}
    lines = [
        {"type": "suite", "suite": "qa", "categories": weights},
        {"suite": "qa", "stimulus": "a", "n": 4, "c": 1, "errors": None, "skipped": None,
         "score_sum": None, "categories": {"wrong": 1, "partial": 2, "right": 1}, "tags": None},
        {"suite": "qa", "stimulus": "b", "n": 3, "c": 3, "categories": None},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    table, _ = load([str(path)], COUNTS)
    a, b = table.stimuli[("qa", "a")], table.stimuli[("qa", "b")]
    assert (a.n(), a.c(), a.errors, a.score_sum(), a.scored) == (4, 1, 0, 2.0, True)
    assert table.category_counts(a) == [1, 2, 1]
    assert (b.score_sum(), b.scored, b.ordered) == (3.0, False, False)
    with pytest.raises(ValueError, match="counts file"):
        _ = b.passed


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"stimulus": "a", "n": 3, "c": 3, "errors": 1}, ":2: stimulus 'a': c + errors exceeds n"),
        ({"stimulus": "a", "n": 3, "c": 1, "score_sum": 3.5}, "score_sum out of range"),
        ({"stimulus": "a", "n": 0, "c": 0}, "has no trials"),
        ({"stimulus": "a", "n": 2, "c": 1, "categories": {"x": 2}}, "'x' is not a category"),
        ({"stimulus": "a", "n": 3, "c": "1"}, ":2 at /c: wrong type"),
        ({"stimulus": "a", "n": 3, "c": 1, "trials": 3}, "unknown field 'trials'"),
        # JSON Schema's integer admits 1e308: past the table's 64-bit counts, as 2**63 is
        ({"stimulus": "a", "n": 1e308, "c": 1}, ":2: n is too large"),
        ({"stimulus": "a", "n": 2**63, "c": 1}, ":2: n is too large"),
    ],
)
def test_bad_rows_are_located(tmp_path: Path, row: dict[str, object], message: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"stimulus": "ok", "n": 1, "c": 1}) + "\n" + json.dumps(row))
    with pytest.raises(InputError, match=re.escape(message)):
        load([str(path)], COUNTS)


def test_whole_floats_count_as_their_integers(tmp_path: Path) -> None:
    # JSON Schema's integer admits 4.0 (a SQL engine's DOUBLE column writes it): read as 4,
    # in counts, categories and a message's trial and line, in JSONL and in a JSON array.
    weights = {"wrong": 0.0, "right": 1.0}
    row = {"suite": "qa", "stimulus": "a", "n": 4, "c": 1, "errors": 1, "skipped": 2,
           "categories": {"wrong": 2, "right": 1},
           "messages": [{"text": "boom", "trial": 3, "file": "run.log", "line": 7}]}  # fmt: skip
    as_floats = json.loads(json.dumps(row).replace(": 1", ": 1.0").replace(": 2", ": 2.0"))
    as_floats = {**as_floats, "n": 4.0, "messages": [{**row["messages"][0], "trial": 3.0}]}  # type: ignore[index]
    assert as_floats["skipped"] == 2.0 and type(as_floats["skipped"]) is float
    declaration = {"type": "suite", "suite": "qa", "categories": weights}
    seen = []
    for given in (row, as_floats):
        for text in (
            "\n".join(json.dumps(x) for x in (declaration, given)) + "\n",
            json.dumps([declaration, given]),
        ):
            path = tmp_path / "c.jsonl"
            path.write_text(text)
            table, _ = load([str(path)], COUNTS)
            a = table.stimuli[("qa", "a")]
            (message,) = a.trial_messages
            assert message.where is not None
            assert type(message.trial) is int and type(message.where.line) is int
            seen.append((a.n(), a.c(), a.errors, a.skipped, table.category_counts(a), message))
    # The error is one more "wrong" (errors count as failures), as with integers.
    assert seen[0][:5] == (4, 1, 1, 2, [3, 1])
    assert (seen[0][5].trial, str(seen[0][5].where)) == (3, "run.log:7")
    assert all(entry == seen[0] for entry in seen)


def test_a_stimulus_given_twice_names_both_places(tmp_path: Path) -> None:
    counts = tmp_path / "c.jsonl"
    counts.write_text(json.dumps({"stimulus": "a", "n": 2, "c": 1}) + "\n")
    trials = tmp_path / "t.jsonl"
    trials.write_text(json.dumps({"stimulus": "a", "trial": 0, "passed": True}) + "\n")
    with pytest.raises(InputError) as caught:
        table, _ = load([str(counts)], COUNTS)
        table.extend(_trials_of(trials)[:1])
    assert f"first at {counts}:1, again at {trials}:1" in str(caught.value)
    with pytest.raises(InputError) as caught:
        table, _ = load([str(trials)])
        table.extend(_counts_of(counts))
    assert f"first at {trials}:1, again at {counts}:1" in str(caught.value)
    counts.write_text(counts.read_text() * 2)
    with pytest.raises(InputError, match=f"first at {counts}:1, again at {counts}:2"):
        load([str(counts)], COUNTS)


def _counts_of(path: Path) -> list[StimulusCounts]:
    """Every row of a counts file, one by one (blocks of plain rows taken apart)."""
    from gate.ingest import counts

    rows: list[StimulusCounts] = []
    for item in counts.read(str(path), IngestOptions()):
        if isinstance(item, CountsColumns):
            rows.extend(item.row(i) for i in range(len(item)))
        elif isinstance(item, StimulusCounts):
            rows.append(item)
    return rows


def _random_counts(rng: random.Random, stimuli: int) -> list[dict[str, object]]:
    """Plain counts rows with every optional field present, null or absent at random."""
    rows: list[dict[str, object]] = []
    for s in range(stimuli):
        n = rng.randint(0, 40)
        errors = rng.randint(0, min(n, 3))
        c = rng.randint(0, n - errors)
        row: dict[str, object] = {"stimulus": f"s{s}", "n": n, "c": c}
        if rng.random() < 0.6:
            row["errors"] = rng.choice([errors, None]) if errors == 0 else errors
        elif errors:
            row["c"] = rng.randint(0, n)
        if rng.random() < 0.3 or n == 0:
            row["skipped"] = rng.choice([1, 2, None]) if n else 1
        if rng.random() < 0.5:
            row["score_sum"] = rng.choice([None, c, round(c * rng.random(), 3)])
        if rng.random() < 0.2:
            row["suite"] = rng.choice(["a", "b"])
        if rng.random() < 0.1:
            row[rng.choice(["tags", "messages", "categories"])] = None
        rows.append(row)
    return rows


def _table_state(table: TrialTable) -> list[tuple[object, ...]]:
    """Each stimulus's totals, in the table's order, and where its row was read."""
    where = table._packer.unpack
    return [
        (
            key,
            s.n(),
            s.c(),
            s.errors,
            s.skipped,
            s.score_sum(),
            s.scored,
            where(table._c_where[s._crow]),
        )
        for key, s in table.stimuli.items()
    ]


@pytest.mark.parametrize("seed", range(6))
def test_blocks_of_plain_rows_read_as_the_rows_one_by_one(tmp_path: Path, seed: int) -> None:
    """The counts reader gives plain rows to the table as columns; the table they make, and
    the first bad row's error, are those of adding each row alone."""
    rng = random.Random(seed)
    rows = _random_counts(rng, 3_000)
    lines = [json.dumps(r) for r in rows]
    lines.insert(rng.randrange(len(lines)), json.dumps({"type": "suite", "suite": "b"}))
    if seed % 2:  # a bad row somewhere: c past n, a stimulus twice, a score sum too large
        at = rng.randrange(len(lines))
        bad = [
            {"stimulus": "bad", "n": 2, "c": 3},
            {"stimulus": "s7", "n": 2, "c": 1},
            {"stimulus": "bad", "n": 2, "c": 1, "score_sum": 2.5},
        ][seed // 2]
        lines.insert(at, json.dumps(bad))
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    one_by_one = TrialTable()
    one_by_one.declare_suite(SuiteSpec(name="b"))
    try:
        for row in _counts_of(path):
            one_by_one.add_counts(row)
    except InputError as error:
        assert seed % 2, error
        with pytest.raises(InputError) as caught:
            load([str(path)], COUNTS)
        assert str(caught.value) == str(error)
        return
    assert not seed % 2
    table, _ = load([str(path)], COUNTS)
    assert any(isinstance(i, CountsColumns) for i in _read(path))
    assert len(table) == len(one_by_one)
    assert _table_state(table) == _table_state(one_by_one.finish())


def _read(path: Path) -> list[object]:
    from gate.ingest import counts

    return list(counts.read(str(path), IngestOptions()))


def _trials_of(path: Path) -> list[Trial]:
    from gate.ingest import native

    return [r for r in native.read_strict(str(path), IngestOptions()) if isinstance(r, Trial)]


def test_rows_round_trip_through_the_schema(trials_and_counts: tuple[Path, Path]) -> None:
    trials, _ = trials_and_counts
    table, _ = load([str(trials)])
    checker = validator("counts")
    assert all(checker.is_valid(row) for row in counts_rows(table))


def test_trials_past_the_limit_are_refused_at_the_first_over_and_totals_do_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trials given one by one are kept, 60-100 bytes each: past EVAL_GATE_MAX_TRIALS the
    input is refused at the first trial over, whether it came one by one or in a block, in
    one file or the next; a counts file's totals cost a row per stimulus and do not count."""
    records = [{"stimulus": f"s{i % 3}", "trial": i // 3, "passed": True} for i in range(7)]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in records[:4]))
    second.write_text("".join(json.dumps(r) + "\n" for r in records[4:]))
    monkeypatch.setenv("EVAL_GATE_MAX_TRIALS", "7")
    table, _ = load([str(first), str(second)])
    assert len(table) == 7
    monkeypatch.setenv("EVAL_GATE_MAX_TRIALS", "5")
    with pytest.raises(InputError, match=r"b\.jsonl:2: one trial more than the trials limit"):
        load([str(first), str(second)])
    one_by_one = TrialTable()
    for record in records[:5]:
        one_by_one.add(Trial(str(record["stimulus"]), int(str(record["trial"])), passed=True))
    one_by_one.add(Trial("s9", 0, passed=True))
    with pytest.raises(InputError, match=r"expected at most 5 trials .*counts file"):
        one_by_one.finish()
    counts = tmp_path / "c.jsonl"
    counts.write_text(json.dumps({"stimulus": "t", "n": 1_000, "c": 10}) + "\n")
    table, _ = load([str(counts), str(first)])
    assert len(table) == 1_004


def test_suites_past_the_limit_are_refused_naming_the_first_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each suite is scored and reported alone: past EVAL_GATE_MAX_SUITES (1,000 by default)
    the input is refused, naming the first suite over; raising the variable allows it. The
    per-suite scores of many suites equal each suite scored alone."""
    path = tmp_path / "c.jsonl"
    rows = [{"suite": f"u{i}", "stimulus": f"s{i % 3}", "n": 4 + i, "c": i} for i in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("EVAL_GATE_MAX_SUITES", "3")
    with pytest.raises(InputError, match=r"first past the limit: 'u3'\) is over the suites limit"):
        load([str(path)], COUNTS)
    monkeypatch.setenv("EVAL_GATE_MAX_SUITES", "4")
    outcome = run_check(CheckRequest((str(path),), build_config({"k": 2}), COUNTS))
    each = outcome.suites
    assert [s.name for s in each] == ["u0", "u1", "u2", "u3"]
    for i, suite in enumerate(each):
        alone = path.with_name(f"alone{i}.jsonl")
        alone.write_text(json.dumps(rows[i]) + "\n")
        (single,) = run_check(CheckRequest((str(alone),), build_config({"k": 2}), COUNTS)).suites
        assert suite.pass_rate == single.pass_rate == rows[i]["c"] / rows[i]["n"]
        assert suite.pass_hat_k_interval == single.pass_hat_k_interval
        assert suite.bayes() == single.bayes()


@pytest.mark.parametrize("tagged", [False, True])  # as columns, and row by row
def test_counts_past_what_the_tests_compute_exactly_are_refused_at_their_row(
    tmp_path: Path, tagged: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stimuli of 2^62 passing trials each added up to -2^63 in the table's 64-bit
    totals: an all-pass run failed its gate with "every counted trial errored" (exit 1). A
    stimulus may have 2^31 trials (its exact tests in logs of factorials stay within 10^-5
    there), a run 2^53 (exact as floats); past either, the row that crosses it is named."""
    from gate.table import model

    def rows(*counts: int) -> Path:
        path = tmp_path / "counts.jsonl"
        lines = [
            {"stimulus": f"s{i}", "n": n, "c": n, **({"tags": ["t"]} if tagged else {})}
            for i, n in enumerate(counts)
        ]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        return path

    table, _ = load([str(rows(2**31, 2**31))], COUNTS)
    assert table.summary().n.tolist() == [2**31, 2**31]
    with pytest.raises(InputError) as raised:
        load([str(rows(5, 2**31 + 1))], COUNTS)
    assert "counts.jsonl:2" in str(raised.value)
    assert "more than 2,147,483,648 (2^31) trials" in str(raised.value)
    with pytest.raises(InputError):
        load([str(rows(2**62, 2**62))], COUNTS)
    monkeypatch.setattr(model, "MOST_COUNTED_TRIALS", 100)
    table, _ = load([str(rows(50, 50))], COUNTS)
    with pytest.raises(InputError) as raised:
        load([str(rows(50, 50, 1))], COUNTS)
    assert "counts.jsonl:3" in str(raised.value)
    assert "add up to more than 100" in str(raised.value)
