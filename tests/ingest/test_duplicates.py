"""--duplicates: a folder of re-run logs is pooled, or its newest log counts, when asked.

fixtures/inspect/reruns holds two real logs of tests/ingest/inspect_task.py (inspect-ai
0.3.285, mockllm): the first run, then a re-run after a fix (``rerun``: 'flaky' right on
every epoch, 'boom' no longer errors), seven seconds later.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.errors import InputError
from gate.ingest import IngestOptions, load
from gate.ingest.duplicates import Duplicates, parse_time, started
from gate.trials import Trial, TrialBatch
from tests.ingest.conftest import FIXTURES, load_one

RERUNS = FIXTURES / "inspect" / "reruns"
FIRST, SECOND = sorted(RERUNS.glob("*.eval"))
# Under scorer 'match': the first run as in test_inspect.py, then the fixed re-run.
FIRST_RUN = {"easy": "PPPP", "hard": "FFFF", "flaky": "PFPF", "3": "PPPF", "boom": "PEPP"}
RE_RUN = {"easy": "PPPP", "hard": "FFFF", "flaky": "PPPP", "3": "PPPF", "boom": "PPPP"}


def test_the_fixtures_are_a_run_and_its_rerun() -> None:
    assert load_one(FIRST).outcomes() == FIRST_RUN
    assert load_one(SECOND).outcomes() == RE_RUN
    first, second = started(str(FIRST), "inspect"), started(str(SECOND), "inspect")
    assert first is not None and second is not None
    assert (second - first).total_seconds() == 7  # their own stats.started_at


def test_by_default_a_trial_in_two_files_is_an_error_that_says_the_way_out() -> None:
    with pytest.raises(InputError) as raised:
        load_one(RERUNS)
    message = str(raised.value)
    assert (
        f"trial 0 of stimulus 'easy' in suite 'mock_reliability' appears twice: first at {FIRST}"
        in message
    )
    assert f"again at {SECOND} at summaries.json#/0" in message
    assert "--duplicates pool keeps every file's trials" in message
    assert "--duplicates newest the newest file's" in message


def test_pool_keeps_every_epoch_of_every_log_numbered_on() -> None:
    pooled = load_one(RERUNS, duplicates="pool")
    assert pooled.outcomes() == {name: FIRST_RUN[name] + RE_RUN[name] for name in FIRST_RUN}
    easy = pooled.table.stimuli[("mock_reliability", "easy")]
    assert easy.indices == list(range(8))
    # Trials 4-7 are the second log's epochs 1-4, each at its own place.
    assert easy.where[4] is not None and easy.where[4].file == str(SECOND)
    assert any("--duplicates pool: 5 stimuli" in w and str(SECOND) in w for w in pooled.warnings)


def test_newest_keeps_the_newest_log_by_its_start_time_not_its_name(tmp_path: Path) -> None:
    newest = load_one(RERUNS, duplicates="newest")
    assert newest.outcomes() == RE_RUN
    assert [x.path for x in newest.inputs] == [str(SECOND), str(FIRST)]  # newest read first
    assert any(f"20 trial(s) of {FIRST}" in w and "left out" in w for w in newest.warnings)
    # Named the other way round, the re-run still wins: its log says when it started.
    swapped = tmp_path / "logs"
    swapped.mkdir()
    shutil.copy(SECOND, swapped / "a-first-by-name.eval")
    shutil.copy(FIRST, swapped / "b-last-by-name.eval")
    assert load_one(swapped, duplicates="newest").outcomes() == RE_RUN


def test_newest_refuses_files_that_record_no_start_time(tmp_path: Path) -> None:
    runs = [{"task_id": 0, "trial": 0, "reward": 1.0}]
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(json.dumps(runs))
    with pytest.raises(InputError, match=r"newest needs each file's own start time.*tau-bench"):
        load_one(tmp_path, duplicates="newest")
    assert load_one(tmp_path, duplicates="pool").outcomes() == {"0": "PP"}


def test_a_trial_twice_inside_one_file_stays_an_error(tmp_path: Path) -> None:
    path = tmp_path / "twice.json"
    path.write_text(json.dumps([{"task_id": 0, "trial": 0, "reward": 1.0}] * 2))
    for policy in ("pool", "newest"):
        with pytest.raises(InputError, match=r"at /1: trial 0 of stimulus '0'.*appears twice"):
            load([str(path)], IngestOptions(duplicates=policy))


def test_pool_numbers_batches_on(tmp_path: Path) -> None:
    """Native JSONL reaches the table as TrialBatch: pooled all the same."""
    lines = "".join(
        json.dumps({"stimulus": s, "trial": t, "passed": t == 0}) + "\n"
        for s in ("a", "b")
        for t in range(40)  # more than the table's smallest batch
    )
    for name in ("1.jsonl", "2.jsonl"):
        (tmp_path / name).write_text(lines)
    pooled = load_one(tmp_path, duplicates="pool")
    record = pooled.table.stimuli[("default", "a")]
    assert record.indices == list(range(80))
    assert record.passed == [t in (0, 40) for t in range(80)]
    assert record.where[40] is not None and record.where[40].file == str(tmp_path / "2.jsonl")


def test_newest_drops_the_older_records_of_a_batch_and_keeps_the_places_of_the_rest() -> None:
    duplicates = Duplicates("newest", [])
    duplicates._times = {
        "new.jsonl": parse_time("2025-01-02"),
        "old.jsonl": parse_time("2025-01-01"),
    }  # type: ignore[dict-item]
    duplicates.order = [("new.jsonl", "native", True), ("old.jsonl", "native", True)]
    newer = [Trial("a", 0, passed=True)]
    assert list(duplicates.records("new.jsonl", newer)) == newer
    older = TrialBatch(
        [{"stimulus": "a", "trial": 0, "passed": False}, {"stimulus": "a", "trial": 1}],
        "old.jsonl",
        first_line=10,
    )
    kept = list(duplicates.records("old.jsonl", [older]))
    assert [(t.trial, t.provenance) for t in kept if isinstance(t, Trial)] == [(1, older.where(1))]
    assert duplicates.notes == [
        "--duplicates newest: 1 trial(s) of old.jsonl (started 2025-01-01T00:00:00+00:00) are "
        "left out: newer files have the same trials"
    ]


def test_start_times_of_each_format_that_records_one() -> None:
    assert started(str(FIXTURES / "inspect" / "mock_reliability.json"), "inspect") == parse_time(
        "2026-11-23T01:55:18+00:00"
    )
    assert started(str(FIXTURES / "promptfoo" / "results.json"), "promptfoo") == parse_time(
        "2026-11-23T02:06:16.958Z"
    )
    assert started(str(FIXTURES / "junit" / "pytest-repeat.xml"), "junit") == parse_time(
        "2026-11-23T01:56:50.536128+00:00"
    )
    assert started(str(FIXTURES / "tau2" / "retail.results.json"), "tau2-bench") == parse_time(
        "2025-06-12T10:00:00"
    )
    assert started(str(FIXTURES / "junit" / "surefire-rerun.xml"), "junit") is None
    assert started(str(FIXTURES / "vally" / "results.jsonl"), "vally") is None


def test_the_cli_option_and_the_action_input() -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        ["check", str(RERUNS), "--duplicates", "newest", "--json", "-", "--min-pass-rate", "0"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {s["name"]: s["outcomes"] for s in report["stimuli"]} == RE_RUN
    refused = runner.invoke(main, ["check", str(RERUNS), "--duplicates", "latest"])
    assert refused.exit_code == 2 and "'latest' is not one of 'error', 'pool', 'newest'" in (
        refused.output
    )

    from gate.github.entrypoint import ingest_options
    from gate.github.inputs import ActionInputError, read_inputs

    env = {"INPUT_RESULTS": "logs/", "INPUT_DUPLICATES": "pool"}
    assert ingest_options(read_inputs(env)).duplicates == "pool"
    with pytest.raises(ActionInputError, match="input duplicates: 'latest' is not one of"):
        read_inputs({**env, "INPUT_DUPLICATES": "latest"})


def test_counts_files_are_not_pooled(tmp_path: Path) -> None:
    row = {"stimulus": "a", "n": 4, "c": 3}
    for name in ("1.jsonl", "2.jsonl"):
        (tmp_path / name).write_text(json.dumps(row) + "\n")
    with pytest.raises(
        InputError, match=r"stimulus 'a' in suite 'default' appears twice"
    ) as raised:
        load_one(tmp_path, duplicates="pool")
    assert "--duplicates" not in str(raised.value)  # pool was asked for: no way out to offer


def test_pool_numbers_columnar_rows_on(tmp_path: Path) -> None:
    """A generic CSV reaches the table as TrialColumns: pooled row by row all the same."""
    rows = "case,trial,ok\n" + "".join(f"a,{t},{'true' if t == 0 else 'false'}\n" for t in range(3))
    for name in ("1.csv", "2.csv"):
        (tmp_path / name).write_text(rows)
    pooled = load_one(
        tmp_path, format="csv", column_map={"stimulus": "case", "passed": "ok"}, duplicates="pool"
    )
    assert pooled.outcomes() == {"a": "PFFPFF"}
    with pytest.raises(InputError, match="appears twice"):
        load_one(tmp_path, format="csv", column_map={"stimulus": "case", "passed": "ok"})
