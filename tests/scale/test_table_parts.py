"""The table's parts: one pass rule (against an independent model of it), per-trial usage,
the messages kept per stimulus, and trials added one by one (buffered) against batches."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import load
from gate.table import TrialTable
from gate.table.rule import resolve
from gate.trials import GraderResult, StimulusCounts, SuiteSpec, Trial, TrialBatch, TrialMessage

SPECS = [
    SuiteSpec("plain"),
    SuiteSpec("bar", pass_threshold=0.6, grader_weights={"a": 2.0, "b": 0.5}),
    SuiteSpec("rated", categories={"wrong": 0.0, "partial": 0.5, "right": 1.0}),
    SuiteSpec("rated-bar", categories={"no": 0.0, "half": 0.5, "yes": 0.9}, pass_threshold=0.5),
]


def written_rule(trial: Trial, spec: SuiteSpec) -> tuple[bool, float, int, bool] | str:
    """docs/format.md's "Deciding a trial", transcribed one trial at a time: (passed, score,
    category, scored), or the error's first words."""
    if trial.status != "ok":
        return (False, 0.0, 0, False)
    threshold = spec.pass_threshold
    category = -1
    if trial.graders:
        total = weights = 0.0
        for g in trial.graders:
            w = spec.grader_weights.get(g.name, 1.0)
            total += w * (g.score if g.score is not None else float(bool(g.passed)))
            weights += w
        score = total / weights if weights else 0.0
        every = all(
            g.passed if g.passed is not None else (g.score or 0) >= 1 for g in trial.graders
        )
        derived = score >= threshold if threshold is not None else every
        scored = True
    elif trial.outcome is not None:
        names = list(spec.categories or {})
        if trial.outcome not in names:
            return "outcome"
        assert spec.categories is not None
        category, score = names.index(trial.outcome), spec.categories[trial.outcome]
        best = max(spec.categories.values())
        derived, scored = (score >= threshold if threshold is not None else score >= best), True
    elif trial.score is not None:
        score, scored = trial.score, True
        derived = score >= (threshold if threshold is not None else 1.0)
    elif trial.passed is not None:
        score, scored, derived = float(trial.passed), False, trial.passed
    else:
        return "trial has no outcome"
    passed = trial.passed if trial.passed is not None else derived
    return (passed, score, category if category >= 0 else int(passed), scored)


def random_trial(rng: random.Random, index: int) -> Trial:
    fields: dict[str, Any] = {}
    roll = rng.random()
    if roll < 0.1:
        fields["status"] = rng.choice(["error", "skipped"])
    if rng.random() < 0.3:
        fields["graders"] = tuple(
            GraderResult(name, rng.choice([None, 0.0, 0.3, 1.0]), rng.choice([None, True, False]))
            for name in rng.sample(["a", "b", "c"], rng.randint(1, 3))
        )
    if rng.random() < 0.3:
        fields["outcome"] = rng.choice(["wrong", "partial", "right", "no", "half", "yes", "odd"])
    if rng.random() < 0.5:
        fields["score"] = rng.choice([0.0, 0.5, 0.6, 0.9, 1.0])
    if rng.random() < 0.5:
        fields["passed"] = rng.random() < 0.5
    return Trial(stimulus=f"s{index % 7}", trial=index, **fields)


def test_the_rule_is_the_written_rule_on_every_kind_of_trial() -> None:
    rng = random.Random(3)
    seen: set[str] = set()
    for index in range(3000):
        trial = random_trial(rng, index)
        spec = rng.choice(SPECS)
        expected = written_rule(trial, spec)
        if isinstance(expected, str):
            with pytest.raises(InputError, match=expected):
                resolve(trial, spec)
            seen.add(expected)
            continue
        got = resolve(trial, spec)
        assert (got.passed, got.score, got.category, got.scored) == expected
        seen.add(f"passed={expected[0]} scored={expected[3]}")
    assert len(seen) == 6  # every branch, both errors


@pytest.mark.parametrize("container", [dict, MappingProxyType])
def test_a_batch_decides_as_one_trial_at_a_time(tmp_path: Path, container: Any) -> None:
    """The same trials as one batch of records and one by one: the same table, whether the
    records are dicts (looked up in C) or other mappings."""
    rng = random.Random(4)
    records = []
    for t in range(200):
        record: dict[str, Any] = {"stimulus": f"s{t % 9}", "trial": t // 9, "suite": "bar"}
        if rng.random() < 0.2:
            record["graders"] = [{"name": "a", "score": rng.choice([0.2, 0.7])}]
        elif rng.random() < 0.5:
            record["score"] = rng.choice([0.1, 0.6, 1.0])
        else:
            record["passed"] = rng.random() < 0.5
        if rng.random() < 0.1:
            record["status"] = "error"
        if rng.random() < 0.15:  # a second key that needs a look, in other records
            record["tags"] = [rng.choice(["x", "y"])]
        if rng.random() < 0.7:  # usage: some records without any, one value not a number
            record["metadata"] = rng.choice(
                [{}, {"tokens": t}, {"duration_s": t / 2, "cost_usd": "free"}, {"model": "m"}]
            )
        records.append(container(record))
    batched, single = TrialTable(), TrialTable()
    for table in (batched, single):
        table.declare_suite(SPECS[1])
    batch = TrialBatch(records, "r.jsonl", first_line=1)
    batched.add(batch)
    single.extend(batch.trial(i) for i in range(len(records)))
    for key, record in batched.stimuli.items():
        other = single.stimuli[key]
        assert (record.indices, record.passed, record.scores, record.categories) == (
            other.indices, other.passed, other.scores, other.categories,
        )  # fmt: skip
        assert record.where == other.where and record.scored == other.scored
        assert record.tags == other.tags and record.tags <= {"x", "y"}
    assert batched.usage_dropped == single.usage_dropped > 0
    assert sum(bool(r.tags) for r in batched.stimuli.values()) > 0
    usage, alone = batched.usage("bar"), single.usage("bar")
    assert usage is not None and alone is not None
    for field in ("cost_usd", "duration_s", "tokens"):
        column = getattr(usage, field)
        np.testing.assert_array_equal(column, getattr(alone, field))
        assert 0 < np.count_nonzero(np.isnan(column)) < column.size or field == "cost_usd"
    assert np.isnan(usage.cost_usd).all()  # "free" is not a number: dropped, counted


def test_usage_per_trial_for_a_suite_and_a_stimulus(write_jsonl: Any) -> None:
    path = write_jsonl(
        [
            {"stimulus": "a", "trial": 0, "passed": True,
             "metadata": {"cost_usd": 0.5, "duration_s": 3, "tokens": 120}},
            {"stimulus": "a", "trial": 1, "passed": False,
             "metadata": {"tokens": {"input": 100, "output": 20}}},
            {"stimulus": "b", "trial": 0, "status": "error", "metadata": {"duration_s": 9.5}},
            {"stimulus": "b", "trial": 1, "status": "skipped", "metadata": {"duration_s": 1}},
            {"stimulus": "b", "trial": 2, "passed": True,
             "metadata": {"tokens": {"input": 7, "output": 3, "total": 11}}},
        ]
    )  # fmt: skip
    table, _ = load([str(path)])
    usage = table.usage("default")
    assert usage is not None
    assert usage.stimuli == ("a", "b")
    assert usage.stimulus.tolist() == [0, 0, 1, 1]  # the skipped trial did not run
    assert usage.passed.tolist() == [True, False, False, True]
    np.testing.assert_array_equal(usage.cost_usd, [0.5, math.nan, math.nan, math.nan])
    np.testing.assert_array_equal(usage.duration_s, [3.0, math.nan, 9.5, math.nan])
    # An object's total when it has one, else input + output.
    np.testing.assert_array_equal(usage.tokens, [120.0, 120.0, math.nan, 11.0])
    one = table.stimuli[("default", "b")].usage()
    assert one is not None and one.duration_s.tolist()[0] == 9.5
    assert table.usage("no such suite") is None


def test_usage_that_is_no_number_is_left_out_and_said(write_jsonl: Any) -> None:
    lines = [{"stimulus": "a", "trial": t, "passed": True, "metadata": {"duration_s": t}}
             for t in range(40)]  # fmt: skip
    path = write_jsonl(lines)
    table, _ = load([str(path)])
    assert table.usage_dropped == 0
    trials = [
        Trial("a", 0, passed=True, metadata={"cost_usd": -1.0, "duration_s": True}),
        Trial("a", 1, passed=True, metadata={"cost_usd": 0.25, "tokens": "many"}),
    ]
    table = TrialTable()
    table.extend(trials)
    usage = table.usage()
    assert usage is not None and table.usage_dropped == 3
    np.testing.assert_array_equal(usage.cost_usd, [math.nan, 0.25])


def test_the_first_messages_of_trials_that_did_not_pass(tmp_path: Path) -> None:
    long = "x" * 5000
    records = [{"stimulus": "a", "trial": 0, "passed": True, "message": "fine"}]
    records += [{"stimulus": "a", "trial": t, "passed": False, "message": f"wrong {t}"}
                for t in range(1, 3)]  # fmt: skip
    records += [
        {"stimulus": "a", "trial": 3, "status": "error", "message": long},
        {"stimulus": "a", "trial": 4, "status": "error", "message": "late"},
        {"stimulus": "b", "trial": 0, "status": "skipped", "message": "no sandbox"},
    ]
    records += [{"stimulus": "c", "trial": t, "passed": False, "message": "same"}
                for t in range(100)]  # fmt: skip
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(map(json.dumps, records)) + "\n", encoding="utf-8")
    table, _ = load([str(path)])
    a = table.stimuli[("default", "a")].trial_messages
    keep = limits.KEPT_MESSAGE_CHARS.value()
    assert a == (
        TrialMessage("wrong 1", "failed", 1, Provenance(str(path), 2)),
        TrialMessage("wrong 2", "failed", 2, Provenance(str(path), 3)),
        TrialMessage("x" * (keep - 1) + "…", "errored", 3, Provenance(str(path), 4)),
    )
    assert table.stimuli[("default", "b")].trial_messages == (
        TrialMessage("no sandbox", "skipped", 0, Provenance(str(path), 6)),
    )
    c = table.stimuli[("default", "c")].trial_messages
    assert [m.trial for m in c] == [0, 1, 2]  # the batch path (100 records) keeps 3 too
    assert len(table._message_log._texts) == 5  # each distinct text once ("same" too)


def test_counts_rows_carry_their_messages() -> None:
    table = TrialTable()
    where = Provenance("c.jsonl", 4)
    table.add(StimulusCounts("a", n=3, c=1, errors=1, messages=("boom", "bust", "bang", "more"),
                             provenance=where))  # fmt: skip
    detailed = TrialMessage("x", "failed", 7, Provenance("t.xml", 9))
    table.add(StimulusCounts("b", n=1, c=0, messages=(detailed,), provenance=where))
    assert table.stimuli[("default", "a")].trial_messages == tuple(
        TrialMessage(text, None, None, where) for text in ("boom", "bust", "bang")
    )
    assert table.stimuli[("default", "b")].trial_messages == (detailed,)


def test_an_earlier_trials_error_comes_before_a_later_read_error() -> None:
    """Trials one by one are buffered: a duplicate read before a record the reader refuses is
    still the error raised, as it was read first."""

    def reader() -> Any:
        yield Trial("a", 0, passed=True, provenance=Provenance("f", 1))
        yield Trial("a", 0, passed=True, provenance=Provenance("f", 2))
        raise InputError("bad record", Provenance("f", 3))

    table = TrialTable()
    with pytest.raises(InputError, match="appears twice: first at f:1, again at f:2"):
        table.extend(reader())
    table = TrialTable()
    good = Trial("a", 0, passed=True, provenance=Provenance("f", 1))
    with pytest.raises(InputError, match="f:2: trial index is negative"):
        table.extend([good, Trial("a", -1, passed=True, provenance=Provenance("f", 2))])
    assert len(table) == 1  # the trial before the bad one is stored


def test_memory_per_trial_and_per_stimulus_stays_small() -> None:
    table = TrialTable()
    stimuli = 2000
    records = [{"stimulus": f"s{s}", "trial": t, "passed": t % 2 == 0, "score": 0.5,
                "metadata": {"duration_s": 1.5}}
               for t in range(50) for s in range(stimuli)]  # fmt: skip
    for start in range(0, len(records), 7000):
        table.add(TrialBatch(records[start : start + 7000], "r.jsonl", first_line=start + 1))
    store = table._store
    per_slot = sum(array.itemsize for array in store._dense.values())
    assert per_slot == 1 + 8 + 8 + 8  # code, score, where, duration: no category, cost or tokens
    assert store.slots <= 4 * len(table)


def test_a_finished_table_keeps_only_the_room_it_uses() -> None:
    # 300 stimuli × 100 trials: grown by doubling to 512 rows × 128 slots; finished,
    # exactly 300 × 100, with every trial where it was; trials added afterwards still fit
    # (the store grows again), a sparse index among them.
    from tests.scale.conftest import snapshot

    records = [{"stimulus": f"s{s}", "trial": t, "passed": (s + t) % 3 == 0, "score": 0.25,
                "metadata": {"tokens": t}}
               for t in range(100) for s in range(300)]  # fmt: skip
    table = TrialTable()
    table.add(TrialBatch(records, "r.jsonl", first_line=1))
    table.flush()
    assert (table._store._cap, table._store.width) == (512, 128)
    before = snapshot(table)
    usage = table.usage()
    table.finish()
    assert (table._store._cap, table._store.width) == (300, 100)
    assert snapshot(table) == before
    after = table.usage()
    assert usage is not None and after is not None
    assert np.array_equal(usage.tokens, after.tokens)
    assert np.array_equal(usage.stimulus, after.stimulus)
    more = [{"stimulus": "s7", "trial": 100, "passed": True}, {"stimulus": "new", "trial": 0,
            "passed": False}, {"stimulus": "s8", "trial": 10**6, "passed": True}]  # fmt: skip
    table.add(TrialBatch(more, "more.jsonl", first_line=1))
    table.finish()
    assert len(table) == 30_003
    assert table.stimuli[("default", "s7")].indices[-1] == 100
    assert table.stimuli[("default", "s8")].indices[-1] == 10**6
    assert (table.stimuli[("default", "new")].n(), table.stimuli[("default", "new")].c()) == (1, 0)


@pytest.mark.parametrize("errors_as_failures", [True, False])
def test_outcomes_and_scored_read_together_as_one_by_one(errors_as_failures: bool) -> None:
    """The report's block reads (:meth:`TableSummary.outcomes_of`, ``scored_of``,
    ``message_records_of``) against
    each record's own: plain rows, a row with a trial kept aside (index past the slots), one
    with an index past 64 bits, skipped and errored trials, a stimulus without a score and
    one given as counts."""
    table = TrialTable()
    rng = random.Random(11)
    for s in range(40):
        for t in range(rng.randint(1, 9)):
            status = rng.choice(["ok"] * 8 + ["error", "skipped"])
            passed = rng.random() < 0.6 if status == "ok" else None
            message = f"why {s}.{t}" if rng.random() < 0.5 else None
            where = rng.choice([Provenance("r.jsonl", 3 + t), Provenance("r.json", pointer="/x")])
            table.add(Trial(f"x{s}", t, status=status, passed=passed, message=message,
                            provenance=where))  # fmt: skip
    table.add(Trial("x3", 4_000_000, passed=True))
    table.add(Trial("x5", 1 << 70, passed=False, message="huge"))
    table.add(Trial("graded", 0, score=0.4))
    table.add(StimulusCounts("totals", n=5, c=2, messages=("a", "b")))
    table.flush()
    summary = table.summary(errors_as_failures)
    positions = list(range(len(summary.records)))[::-1]
    assert summary.outcomes_of(positions) == [summary.outcomes(i) for i in positions]
    assert summary.scored_of(positions) == [summary.records[i].scored for i in positions]
    assert summary.message_records_of(positions) == [
        [m.as_record() for m in summary.records[i].trial_messages] for i in positions
    ]
    assert sum(map(len, summary.message_records_of(positions))) > 40
    assert summary.outcomes_of([]) == [] and summary.scored_of([]) == []
    shown = dict(zip(positions, summary.outcomes_of(positions), strict=True))
    names = [r.stimulus for r in summary.records]
    assert shown[names.index("totals")] == ""
    assert shown[names.index("x3")][-1] == "P"  # the trial kept aside, last in trial order
    assert summary.scored_of([names.index("graded")]) == [True]


@pytest.mark.parametrize("coded", [False, True])
def test_new_stimuli_from_columns_get_rows_as_one_by_one(coded: bool) -> None:
    """Columns of trials whose stimuli the table has not seen (given by name, or coded as
    the CSV engine gives them) make the same records, serials and rows as the same trials
    added one at a time; a stimulus already given as counts is still the located error."""
    from gate.trials import Coded, TrialColumns

    rng = random.Random(5)
    names = [f"n{rng.randrange(60)}" for _ in range(400)]
    indices: dict[str, int] = {}
    trials = []
    for name in names:
        indices[name] = indices.get(name, -1) + 1
        trials.append(indices[name])

    def coded(values: list[Any]) -> Any:
        """``values``, or (``coded``) as a code per row and the value of each code."""
        if not coded:
            return values
        distinct = list(dict.fromkeys(values))
        return Coded(np.array([distinct.index(v) for v in values]), distinct)

    def columns(stimuli: list[str], numbers: list[int], first_line: int) -> TrialColumns:
        size = len(stimuli)
        return TrialColumns(
            file="r.csv", lines=list(range(first_line, first_line + size)),
            stimulus=coded(stimuli), suite=coded(["s"] * size), trial=coded(numbers),
            status=coded(["ok"] * size), passed=coded([t % 2 == 0 for t in numbers]),
            score=coded([None] * size),
        )  # fmt: skip

    by_columns, one_by_one = TrialTable(), TrialTable()
    by_columns.add(columns(names[:150], trials[:150], 2))
    by_columns.add(columns(names[150:], trials[150:], 152))
    for i, (name, t) in enumerate(zip(names, trials, strict=True)):
        one_by_one.add(Trial(name, t, suite="s", passed=t % 2 == 0,
                             provenance=Provenance("r.csv", 2 + i)))  # fmt: skip
    one_by_one.flush()
    made = [(r.suite, r.stimulus, r._id, r._row, r.outcomes()) for r in by_columns._rows]
    assert made == [(r.suite, r.stimulus, r._id, r._row, r.outcomes()) for r in one_by_one._rows]
    owners = by_columns._row_owner[: len(names)], one_by_one._row_owner[: len(names)]
    assert owners[0].tolist() == owners[1].tolist()

    mixed = TrialTable()
    mixed.add(StimulusCounts("n7", n=2, c=1, suite="s"))
    with pytest.raises(InputError) as caught:
        mixed.add(columns(["fresh", "n7"], [0, 0], 10))
    assert caught.value.where == Provenance("r.csv", 11)
    assert ("s", "fresh") in mixed.stimuli


def test_messages_from_columns_are_kept_as_one_by_one() -> None:
    """The messages a block of columns keeps (a batch at a time): the first three of each
    stimulus's trials that did not pass, then its first error's when none of those is one;
    a message rendered to nothing or empty takes no room, a long one is cut, an index past
    64 bits kept whole: as the same trials added one at a time keep them."""
    from gate.trials import TrialColumns

    rng = random.Random(17)
    long_text = "x" * (limits.KEPT_MESSAGE_CHARS.value() + 50)
    rows = []
    for t in range(12):
        for s in range(25):
            status = rng.choice(["ok"] * 6 + ["error"])
            passed = rng.random() < 0.4 if status == "ok" else None
            said = rng.choice(["why", "", "silent", long_text, f"m{s}.{t}"])
            if s == 3:  # passes, and fails once at an index past 64 bits
                status, passed, said = "ok", t < 11, "huge"
            rows.append((f"s{s}", t if t < 11 else 1 << 70, status, passed, said))
    nothing = {"silent"}  # rendered to None: no message

    def render(text: str) -> str | None:
        return None if text in nothing else text

    columns = TrialColumns(
        file="r.jsonl", lines=list(range(1, len(rows) + 1)),
        stimulus=[r[0] for r in rows], suite=["default"] * len(rows),
        trial=[r[1] for r in rows], status=[r[2] for r in rows], passed=[r[3] for r in rows],
        score=[None] * len(rows), message=[(r[4],) for r in rows], render=render,
    )  # fmt: skip
    by_columns, one_by_one = TrialTable(), TrialTable()
    by_columns.add(columns)
    for line, (stimulus, t, status, passed, said) in enumerate(rows, start=1):
        where = Provenance("r.jsonl", line)
        one_by_one.add(
            Trial(stimulus, t, status=status, passed=passed, message=render(said), provenance=where)
        )
    one_by_one.flush()
    kept = {key: r.trial_messages for key, r in by_columns.stimuli.items()}
    assert kept == {key: r.trial_messages for key, r in one_by_one.stimuli.items()}
    assert sum(map(len, kept.values())) > 50
    assert any(m.trial == 1 << 70 for m in kept[("default", "s3")])
    assert any(m.text.endswith("…") for ms in kept.values() for m in ms)
    assert all(m.text != "silent" for ms in kept.values() for m in ms)


def test_an_empty_message_in_a_record_takes_no_room(tmp_path: Path) -> None:
    """A native record's ``"message": ""`` is no message, as a CSV cell's empty one is: the
    stimulus's next message is kept in its place (it was kept as an empty text)."""
    from gate.ingest import IngestOptions

    lines = [{"stimulus": "a", "trial": t, "passed": False, "message": m}
             for t, m in enumerate(["", "one", "", "two", "three", "four"])]  # fmt: skip
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    table, _ = load([str(path)], IngestOptions())
    kept = table.stimuli[("default", "a")].trial_messages
    assert [(m.text, m.trial) for m in kept] == [("one", 1), ("two", 3), ("three", 4)]


def test_an_array_elements_place_is_packed_by_its_array_and_index() -> None:
    """Provenance.element, which the packer and the Inspect reader share: an index only as
    a JSON pointer writes one (no sign, no leading zero, ASCII), and no line beside it."""
    from gate.errors import Provenance
    from gate.table.store import POS_BITS, POS_MASK, ProvenancePacker

    cases = {
        Provenance("f", pointer="/stimuli/3/trials/7"): ("/stimuli/3/trials", 7),
        Provenance("f", pointer="summaries.json#/12"): ("summaries.json#", 12),
        Provenance("f", pointer="/0"): ("", 0),
        Provenance("f", pointer="/07"): None,
        Provenance("f", pointer="/-1"): None,
        Provenance("f", pointer="/٣"): None,  # an Arabic-Indic digit
        Provenance("f", pointer="/x"): None,
        Provenance("f", pointer="/" + "9" * 5000): None,  # no int() of 5,000 digits
        Provenance("f", pointer=""): None,
        Provenance("f", 3): None,
        Provenance("f", 3, "/4"): None,
    }
    for where, element in cases.items():
        assert where.element() == element, where
    packer = ProvenancePacker()
    for where in [*cases, Provenance("f", pointer=f"/a/{POS_MASK + 1}")]:
        assert packer.unpack(packer.pack(where)) == where
    # Kept whole: the seven places that are no element or line, and an index past POS_MASK.
    assert len(packer._verbatim) == 8
    # Elements of one array share one source: 1,000 of them add one.
    packed = [packer.pack(Provenance("g", pointer=f"/s/{i}")) for i in range(1000)]
    assert len({p >> POS_BITS for p in packed}) == 1 and len(packer._verbatim) == 8
