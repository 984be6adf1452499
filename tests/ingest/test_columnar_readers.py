"""The tau-bench, tau2-bench and Vally readers hand the table blocks of columns: the table they
fill is the one a plain per-record reading gives.

Each reference below reads the whole file with :mod:`json` and makes one
:class:`~gate.trials.Trial` per record from the formats' documented rules (gate/ingest/tau.py,
gate/ingest/vally.py docstrings), added to a table one by one; only the wording of a failure's
message is the readers' own (their renderers are called). The fixtures and generated files
with a few hundred records, odd ones included (errors, clipped rewards, missing trial indices,
usage values that are absent, wrong or negative, big trial indices, failures with no message),
must give the same outcomes, indices, scores, provenance, messages and usage.
"""

from __future__ import annotations

import json
import random
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, reader
from gate.ingest import vally as vally_module
from gate.ingest.tau import tau2_message, tau_info_message
from gate.ingest.values import message_text
from gate.table import TrialTable
from gate.trials import Coded, Trial, TrialColumns
from tests.ingest.conftest import FIXTURES

# -- references: one Trial per record ---------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def tau_reference(path: Path, bar: float | None = None) -> Iterator[Trial]:
    seen: Counter[str] = Counter()
    for position, run in enumerate(json.loads(path.read_text())):
        stimulus = str(run["task_id"])
        index = run.get("trial")
        if index is None:
            index = seen[stimulus]
            seen[stimulus] += 1
        reward = float(run["reward"])
        where = Provenance(str(path), pointer=f"/{position}")
        info = run.get("info")
        error = info.get("error") if isinstance(info, dict) else None
        if error:
            yield Trial(stimulus, int(index), status="error", message=message_text(error),
                        provenance=where)  # fmt: skip
            continue
        passed = abs(reward - 1.0) <= 1e-6 if bar is None else reward >= bar
        message = None if passed else tau_info_message(reward, info)
        yield Trial(stimulus, int(index), passed=passed, score=min(1.0, max(0.0, reward)),
                    message=message, provenance=where)  # fmt: skip


def tau2_reference(path: Path) -> Iterator[Trial]:
    document = json.loads(path.read_text())
    key = "simulation_index" if document.get("simulation_index") else "simulations"
    suite = document["info"]["environment_info"].get("domain_name") or "default"
    seen: Counter[str] = Counter()
    for position, simulation in enumerate(document[key]):
        stimulus = str(simulation["task_id"])
        index = simulation.get("trial")
        if index is None:
            index = seen[stimulus]
            seen[stimulus] += 1
        where = Provenance(str(path), pointer=f"/{key}/{position}")
        reason = simulation.get("termination_reason")
        reward_info = simulation.get("reward_info") if key == "simulations" else None
        if key == "simulations":
            raw = reward_info.get("reward") if isinstance(reward_info, dict) else None
        else:
            raw = simulation.get("reward")
        metadata = {
            target: simulation[source]
            for source, target in (("duration", "duration_s"), ("agent_cost", "cost_usd"))
            if _number(simulation.get(source))
        }
        if reason == "infrastructure_error":  # a harness fault, whatever its reward
            info = simulation.get("info") or {}
            text = f"termination_reason {reason}"
            if info.get("error"):
                text += f": {info['error_type']}: {info['error']}"
            yield Trial(stimulus, index, suite, "error", message=text, metadata=metadata,
                        provenance=where)  # fmt: skip
            continue
        if raw is None:
            text = "no reward" if reason is None else f"termination_reason {reason} (no reward)"
            yield Trial(stimulus, index, suite, "error", message=text, metadata=metadata,
                        provenance=where)  # fmt: skip
            continue
        reward = float(raw)
        passed = abs(reward - 1.0) <= 1e-6
        message = None if passed else tau2_message(reason, reward, reward_info)
        yield Trial(stimulus, index, suite, passed=passed, score=min(1.0, max(0.0, reward)),
                    message=message, metadata={**metadata, "reward": reward},
                    provenance=where)  # fmt: skip


def vally_reference(path: Path) -> Iterator[Trial]:
    statuses = {"success": "ok", "error": "error", "skipped": "skipped"}
    seen: Counter[tuple[str, str]] = Counter()
    for line, text in enumerate(path.read_text().splitlines(), start=1):
        if not text.strip():
            continue
        record = json.loads(text)
        if record.get("type") != "trial-result":
            continue
        suite = str(record.get("evalName") or "default")
        stimulus = str(record["stimulus"])
        index = record.get("trialIndex")
        if index is None:
            index = seen[(suite, stimulus)]
            seen[(suite, stimulus)] += 1
        status = statuses[record.get("status", "success")]
        grade = record.get("gradeResult") or {}
        passed, score = grade.get("passed"), grade.get("score")
        message = None
        if status != "ok":
            message = vally_module._message(record)
        elif passed is False or (passed is None and score < 1.0):
            message = vally_module._failure(grade)
        metadata: dict[str, Any] = {}
        if _number(record.get("durationMs")):
            metadata["duration_s"] = record["durationMs"] / 1000
        tokens: Any = record
        for step in ("trajectory", "metrics", "tokenUsage", "totalTokens"):
            tokens = tokens.get(step) if isinstance(tokens, dict) else None
        if type(tokens) is int:
            metadata["tokens"] = tokens
        yield Trial(stimulus, index, suite, status, passed, score, message=message,  # type: ignore[arg-type]
                    metadata=metadata, provenance=Provenance(str(path), line))  # fmt: skip


# -- what a table holds -----------------------------------------------------------------------


def one_by_one(trials: Iterator[Trial]) -> TrialTable:
    table = TrialTable()
    for trial in trials:
        table.add(trial)
    return table.finish()


def columnar(
    format_name: str, path: Path, said: list[str] | None = None, **options: Any
) -> TrialTable:
    """The table the reader fills; ``said`` gets its warnings."""
    table = TrialTable()

    def blocks() -> Iterator[TrialColumns]:
        for item in reader(format_name)(str(path), IngestOptions(**options)):
            assert isinstance(item, TrialColumns)
            yield item

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table.extend(blocks())
    if said is not None:
        said.extend(str(w.message).removeprefix(f"{path}: ") for w in caught)
    return table


def snapshot(table: TrialTable) -> dict[str, Any]:
    """Everything the table tells about its trials."""
    stimuli = {
        key: (
            record.indices,
            record.statuses,
            record.passed,
            record.scores,
            record.where,
            record.trial_messages,
            record.outcomes(),
            record.outcomes(errors_as_failures=False),
        )
        for key, record in table.stimuli.items()
    }
    usage = table.usage()
    summary = table.summary()
    return {
        "order": list(table.stimuli),
        "stimuli": stimuli,
        "usage": None
        if usage is None
        else {
            name: getattr(usage, name).tolist() if name != "stimuli" else usage.stimuli
            for name in ("stimuli", "stimulus", "passed", "cost_usd", "duration_s", "tokens")
        },
        "dropped": table.usage_dropped,
        "summary": (summary.n.tolist(), summary.c.tolist(), summary.score_sum.tolist()),
        "trials": len(table),
    }


def assert_same(new: TrialTable, reference: TrialTable) -> None:
    got, expected = snapshot(new), snapshot(reference)
    assert got["order"] == expected["order"]
    for key in expected["stimuli"]:
        assert got["stimuli"][key] == expected["stimuli"][key], key
    # NaN (a value not reported) compares equal to NaN here: usage lists are compared as text.
    assert repr(got["usage"]) == repr(expected["usage"])
    assert got == {**expected, "usage": got["usage"]}


# -- generated files --------------------------------------------------------------------------


def _tau_runs(rng: random.Random) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    for trial in range(8):
        for task in range(40):
            run: dict[str, Any] = {
                "task_id": task,
                "trial": trial,
                "reward": rng.choice([0.0, 1.0]),
            }
            roll = rng.random()
            if roll < 0.05:
                run["info"] = {"error": rng.choice(["RuntimeError('529 overloaded')", "  "])}
            elif roll < 0.15:
                run["reward"] = rng.choice([1.5, -0.25, 0.5, 1.0000001, 0, 1])
            elif roll < 0.3:
                run["info"] = {"reward_info": {"info": {"r_actions": run["reward"] == 1.0}}}
            elif roll < 0.35:
                run["info"] = {"source": "user", "user_cost": 0.01, "task": {"big": 1}}
            runs.append(run)
    # Task ids as strings, entries without a trial index, and an index past 64 bits.
    runs += [{"task_id": "x-1", "reward": 0.0}, {"task_id": "x-1", "reward": 1.0}]
    runs += [{"task_id": "x-2", "trial": 2**70, "reward": 0.0}, {"task_id": 99, "reward": 0.0}]
    return runs


def _tau2_document(rng: random.Random, info_last: bool, index: bool) -> dict[str, Any]:
    reasons = ["user_stop", "agent_stop", "max_steps", "too_many_errors", "infrastructure_error",
               "user_error", None]  # fmt: skip
    simulations = []
    for trial in range(6):
        for task in range(30):
            reason = rng.choice(reasons)
            reward = rng.choice([1.0, 0.0, 0.0, 0.5, 1.2, None])
            simulation: dict[str, Any] = {
                "id": f"{task}-{trial}",
                "task_id": f"task-{task}" if task % 7 else task,
                "termination_reason": reason,
                "duration": rng.choice([12.5, 3, None, "slow", -1.0]),
                "agent_cost": rng.choice([0.0123, 0, None, -0.5]),
            }
            if task % 5:  # every fifth task's simulations are numbered as they come
                simulation["trial"] = trial
            if index:
                simulation["reward"] = reward
            else:
                reward_info: dict[str, Any] | None = {
                    "reward": reward,
                    "reward_breakdown": {"DB": reward, "COMMUNICATE": 1.0},
                    "db_check": {"db_match": reward == 1.0},
                    "action_checks": [{"action_match": rng.random() < 0.5} for _ in range(2)],
                    "nl_assertions": [{"met": rng.random() < 0.5}],
                }
                simulation["reward_info"] = None if reward is None else reward_info
            simulations.append(simulation)
    info = {"num_trials": 6, "environment_info": {"domain_name": "retail"}}
    key = "simulation_index" if index else "simulations"
    if info_last:
        return {"timestamp": "2025-06-12T10:00:00", key: simulations, "info": info}
    return {"timestamp": "2025-06-12T10:00:00", "info": info, key: simulations}


def _vally_lines(rng: random.Random) -> list[str]:
    lines = []
    for trial in range(5):
        for stimulus in range(40):
            status = rng.choice(["success"] * 8 + ["error", "skipped"])
            record: dict[str, Any] = {
                "type": "trial-result",
                "itemId": f"suite::s{stimulus}",
                "evalName": rng.choice(["writer", "writer", "reviewer", ""]),
                "stimulus": f"s{stimulus}" if stimulus % 9 else stimulus,
                "status": status,
                "durationMs": rng.choice([41010, 1.5, None, "41s", -5, 2**60]),
            }
            if stimulus % 11:
                record["trialIndex"] = trial
            if status == "success":
                passed = rng.random() < 0.5
                grade: dict[str, Any] = rng.choice([
                    {"passed": passed, "score": 1.0 if passed else 0.25},
                    {"score": rng.choice([1.0, 0.5])},
                    {"passed": passed, "reason": "" if passed else "wrong file"},
                    {"passed": passed, "details": [
                        {"grader": "file-exists", "passed": passed, "message": "missing"},
                        {"name": "lint", "passed": True}]},
                    {"passed": False, "details": [{"grader": "ok", "passed": True}]},  # no message
                ])  # fmt: skip
                record["gradeResult"] = grade
                record["trajectory"] = rng.choice([
                    {"metrics": {"tokenUsage": {"totalTokens": 5121}}},
                    {"metrics": {"tokenUsage": {"totalTokens": "many"}}},
                    {"metrics": None},
                    "flat",
                ])  # fmt: skip
            else:
                record[rng.choice(["error", "errorMessage", "message"])] = rng.choice(
                    ["timeout", {"message": "sandbox died"}, "", None]
                )
            lines.append(json.dumps(record))
            if rng.random() < 0.03:
                lines.append(json.dumps({"type": "progress", "done": len(lines)}))
    lines.insert(100, "")  # a blank line: that chunk is read by the strict parser
    lines.append(json.dumps({"type": "run-summary", "trials": 200}))
    return lines


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("generated")
    rng = random.Random(20240607)
    paths = {
        "tau": folder / "tau.json",
        "tau2": folder / "tau2.json",
        "tau2-info-last": folder / "tau2-info-last.json",
        "tau2-index": folder / "tau2-index.json",
        "vally": folder / "vally.jsonl",
    }
    paths["tau"].write_text(json.dumps(_tau_runs(rng), indent=2))
    paths["tau2"].write_text(json.dumps(_tau2_document(rng, False, False), indent=2))
    paths["tau2-info-last"].write_text(json.dumps(_tau2_document(rng, True, False)))
    paths["tau2-index"].write_text(json.dumps(_tau2_document(rng, False, True)))
    paths["vally"].write_text("\n".join(_vally_lines(rng)) + "\n")
    return paths


# -- the comparisons --------------------------------------------------------------------------


def test_tau_bench_fixture_and_generated_file_give_the_per_trial_table(
    generated: dict[str, Path],
) -> None:
    airline = FIXTURES / "tau-bench" / "gpt-4o-airline.trials.json"
    assert_same(columnar("tau-bench", airline), one_by_one(tau_reference(airline)))
    path = generated["tau"]
    said: list[str] = []
    new = columnar("tau-bench", path, said)
    assert_same(new, one_by_one(tau_reference(path)))
    outside = sum(not 0 <= run["reward"] <= 1 for run in json.loads(path.read_text()))
    assert said == [
        f"{outside} reward(s) outside [0, 1] were clipped to [0, 1] for the score "
        "(pass or fail is decided on the reward as given)"
    ]
    assert len(new) == 324 and new.stimuli[("default", "x-2")].indices == [2**70]
    lenient = columnar("tau-bench", path, pass_threshold=0.5)
    assert_same(lenient, one_by_one(tau_reference(path, bar=0.5)))


def test_tau_bench_blocks_of_usual_entries_are_read_a_column_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks whose every entry is the usual one are read as columns (_usual_columns), the
    others entry by entry, in the file's order: small pieces and blocks make many of both,
    some with one odd entry (a string task id, no trial, a reward outside [0, 1] or just
    inside the tolerance, an index past 64 bits, an integer reward); errored trials, -0.0
    and a trial given twice in both; blocks with infos and without."""
    from gate.ingest import jsonstream, tau

    monkeypatch.setattr(jsonstream, "PIECE_BYTES", 300)
    monkeypatch.setattr(tau, "BLOCK_TRIALS", 40)
    monkeypatch.setattr(tau, "_WAITING_TRIALS", 60)
    read_as_columns = []
    coded_messages = []  # blocks without an info: their messages made once per reward
    usual_columns = tau._usual_columns

    def counted(*args: Any) -> TrialColumns | None:
        columns = usual_columns(*args)
        read_as_columns.append(columns is not None)
        if columns is not None:
            coded_messages.append(isinstance(columns.message, Coded))
        return columns

    monkeypatch.setattr(tau, "_usual_columns", counted)
    rng = random.Random(7)
    odd: list[dict[str, Any]] = [
        {"task_id": "t-1", "trial": 0, "reward": 1.0},
        {"task_id": 3, "reward": 0.0},
        {"task_id": 4, "trial": 9, "reward": 0.0, "info": {"error": "RuntimeError('boom')"}},
        {"task_id": 5, "trial": 9, "reward": 1.5},
        {"task_id": 5, "trial": 9, "reward": 1.0 + 5e-7},
        {"task_id": 6, "trial": 2**64, "reward": 1.0},
        {"task_id": 7, "trial": 9, "reward": 1},
    ]
    runs: list[dict[str, Any]] = []
    for trial in range(12):
        for task in range(50):
            run: dict[str, Any] = {"task_id": task, "trial": trial}
            run["reward"] = rng.choice([0.0, 1.0, 0.5, -0.0, 1.0 - 5e-7, 1.0 - 2e-6, 0.999])
            if trial < 6 and rng.random() < 0.2:  # the last rounds without an info
                run["info"] = rng.choice([
                    {"reward_info": {"info": {"r_actions": False}}}, {"error": ""},
                    {"error": None}, "text", {"error": "RuntimeError('529')"}, {"error": [1]},
                ])  # fmt: skip
            runs.append(run)
        if trial % 3 == 1:
            runs.append({**rng.choice(odd), "task_id": f"odd-{trial}"})
    path = tmp_path / "tau.json"
    path.write_text(json.dumps(runs))
    for bar in (None, 0.5):
        read_as_columns.clear()
        assert_same(columnar("tau-bench", path, pass_threshold=bar),
                    one_by_one(tau_reference(path, bar=bar)))  # fmt: skip
        assert True in read_as_columns and False in read_as_columns
        assert True in coded_messages and False in coded_messages
    # A trial given twice inside a block read as columns: the error entry by entry.
    duplicated = [*runs[:100], dict(runs[60]), *runs[100:]]
    path.write_text(json.dumps(duplicated))
    errors = []
    for usual in (counted, lambda *args: None):
        monkeypatch.setattr(tau, "_usual_columns", usual)
        with pytest.raises(InputError) as raised:
            columnar("tau-bench", path)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and f"{path} at /100: trial 1 of stimulus '10'" in errors[0]


@pytest.mark.parametrize("name", ["tau2", "tau2-info-last", "tau2-index"])
def test_tau2_generated_files_give_the_per_trial_table(
    generated: dict[str, Path], name: str
) -> None:
    path = generated[name]
    said: list[str] = []
    new = columnar("tau2-bench", path, said)
    reference = list(tau2_reference(path))
    assert_same(new, one_by_one(iter(reference)))
    clipped = sum(t.score is not None and t.score != t.metadata.get("reward") for t in reference)
    excluded = sum(
        (t.message or "").startswith("termination_reason infrastructure_error") for t in reference
    )
    assert said == [
        f"{clipped} reward(s) outside [0, 1] were clipped to [0, 1] for the score "
        "(pass or fail is decided on the reward as given)",
        f"{excluded} simulation(s) ended with termination_reason infrastructure_error (never "
        "evaluated: tau2 leaves them out of its metrics and runs them again when the run is "
        "resumed): read as errored trials, which --errors exclude leaves out as tau2 does",
    ]
    assert len(new) == 180 and new.suite_names() == ["retail"]
    assert new.usage_dropped > 0  # the negative durations and costs


@pytest.mark.parametrize("name", ["retail.results.json", "dir-format.results.json"])
def test_tau2_fixtures_give_the_per_trial_table(name: str) -> None:
    path = FIXTURES / "tau2" / name
    assert_same(columnar("tau2-bench", path), one_by_one(tau2_reference(path)))


def test_vally_fixture_and_generated_file_give_the_per_trial_table(
    generated: dict[str, Path],
) -> None:
    fixture = FIXTURES / "vally" / "results.jsonl"
    assert_same(columnar("vally", fixture), one_by_one(vally_reference(fixture)))
    path = generated["vally"]
    new = columnar("vally", path)
    assert_same(new, one_by_one(vally_reference(path)))
    assert len(new) == 200
    # A failure whose grade names no reason and no failed grader has no message, and takes no
    # room from the stimulus's later messages.
    empty = [
        position
        for position, record in enumerate(vally_reference(path))
        if record.status == "ok" and record.passed is False and record.message is None
    ]
    assert empty


def test_rows_added_one_by_one_give_the_same_table(generated: dict[str, Path]) -> None:
    """Each block's rows as trials (what --duplicates pool and newest do) change nothing."""
    for format_name, path in (
        ("tau-bench", generated["tau"]),
        ("tau2-bench", generated["tau2"]),
        ("vally", generated["vally"]),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blocks = list(reader(format_name)(str(path), IngestOptions()))
        rows = [
            block.trial_at(i) for block in blocks if isinstance(block, TrialColumns)
            for i in range(len(block))
        ]  # fmt: skip
        assert_same(columnar(format_name, path), one_by_one(iter(rows)))


def test_a_duplicate_before_a_bad_record_is_the_error_reported(tmp_path: Path) -> None:
    """The first fault in file order is reported, whichever block holds it."""
    runs: list[Any] = [{"task_id": 1, "trial": 0, "reward": 1.0}] * 2 + [{"task_id": 2}]
    path = tmp_path / "tau.json"
    path.write_text(json.dumps(runs))
    with pytest.raises(InputError, match=r"trial 0 of stimulus '1' .* appears twice: first at "
                       r".*tau.json at /0, again at .*tau.json at /1"):  # fmt: skip
        columnar("tau-bench", path)
    path.write_text(json.dumps(runs[1:]))
    with pytest.raises(InputError, match=r"tau.json at /1: entry has no reward"):
        columnar("tau-bench", path)
    lines = [{"type": "trial-result", "stimulus": "a", "trialIndex": 0,
              "gradeResult": {"passed": True}}] * 2 + [{"type": "trial-result"}]  # fmt: skip
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(map(json.dumps, lines)))
    with pytest.raises(InputError, match=r"appears twice: first at .*results.jsonl:1, again at "
                       r".*results.jsonl:2"):  # fmt: skip
        columnar("vally", path)


def test_messages_rendered_only_for_the_kept_ones(generated: dict[str, Path]) -> None:
    """A failure's message is made when the table keeps it (three per stimulus), not for each."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        blocks = list(reader("tau-bench")(str(generated["tau"]), IngestOptions()))
    deferred = sum(
        isinstance(m, tuple) for b in blocks if isinstance(b, TrialColumns) for m in b.message or ()
    )
    calls = 0

    def counting(render: Any) -> Any:
        def count(*arguments: Any) -> str | None:
            nonlocal calls
            calls += 1
            return render(*arguments)  # type: ignore[no-any-return]

        return count

    counted = [
        replace(block, render=counting(block.render))
        for block in blocks
        if isinstance(block, TrialColumns)
    ]
    table = TrialTable()
    table.extend(counted)
    kept = sum(len(record.trial_messages) for record in table.stimuli.values())
    assert deferred > 100 and 0 < calls <= kept < deferred
    for record in table.stimuli.values():
        # Three, and a fourth only for the first error when none of the three is one.
        first, extra = record.trial_messages[:3], record.trial_messages[3:]
        assert len(extra) <= 1
        assert not extra or (
            extra[0].outcome == "errored" and all(m.outcome != "errored" for m in first)
        )


def _load(paths: list[Path], duplicates: str) -> TrialTable:
    from gate.ingest import load

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, _ = load([str(p) for p in paths], IngestOptions(duplicates=duplicates))
    return table


def test_duplicates_pool_and_newest_take_the_blocks_row_by_row(tmp_path: Path) -> None:
    """--duplicates expands each block into trials: pool numbers a later file's trials on,
    newest keeps the newer file's trial; each keeps its file, pointer and message."""
    document = json.loads((FIXTURES / "tau2" / "retail.results.json").read_text())
    older, newer = tmp_path / "older.json", tmp_path / "newer.json"
    older.write_text(json.dumps(document))
    flipped = json.loads(json.dumps(document))
    flipped["timestamp"] = "2031-01-01T00:00:00"
    for simulation in flipped["simulations"]:
        if simulation.get("reward_info"):
            simulation["reward_info"]["reward"] = 1.0 - simulation["reward_info"]["reward"]
    newer.write_text(json.dumps(flipped))
    first, second = list(tau2_reference(older)), list(tau2_reference(newer))

    top: dict[str, int] = {}
    for trial in first:
        top[trial.stimulus] = max(top.get(trial.stimulus, -1), trial.trial)
    pooled = first + [replace(t, trial=t.trial + top[t.stimulus] + 1) for t in second]
    assert_same(_load([older, newer], "pool"), one_by_one(iter(pooled)))

    taken = {(t.stimulus, t.trial) for t in second}
    kept = second + [t for t in first if (t.stimulus, t.trial) not in taken]
    assert_same(_load([older, newer], "newest"), one_by_one(iter(kept)))
    # Every trial of the older file is superseded: the table is the newer file's alone.
    assert_same(_load([older, newer], "newest"), one_by_one(tau2_reference(newer)))


def test_duplicates_pool_over_vally_and_tau_bench_files(tmp_path: Path) -> None:
    fixture = FIXTURES / "vally" / "results.jsonl"
    again = tmp_path / "again.jsonl"
    again.write_text(fixture.read_text())
    first, second = list(vally_reference(fixture)), list(vally_reference(again))
    top: dict[tuple[str, str], int] = {}
    for trial in first:
        key = (trial.suite, trial.stimulus)
        top[key] = max(top.get(key, -1), trial.trial)
    pooled = first + [replace(t, trial=t.trial + top[(t.suite, t.stimulus)] + 1) for t in second]
    assert_same(_load([fixture, again], "pool"), one_by_one(iter(pooled)))

    airline = FIXTURES / "tau-bench" / "gpt-4o-airline.trials.json"
    copy = tmp_path / "airline.json"
    copy.write_text(airline.read_text())
    table = _load([airline, copy], "pool")
    assert len(table) == 400
    record = table.stimuli[("default", "1")]
    assert record.indices == list(range(8))
    assert record.where[5] == Provenance(str(copy), pointer="/51")
