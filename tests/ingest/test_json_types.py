"""JSON readers take JSON's types at their word: a string is never read as a number or a boolean.

A CSV cell is text, so the CSV reader accepts ``yes`` and ``"0.75"``; in a JSON results file
``"reward": "1.0"`` or ``"success": "yes"`` means something wrote the wrong type, and reading it
as a pass would gate on a guess. Each case starts from a real fixture with one value changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gate.errors import InputError
from tests.ingest.conftest import FIXTURES, load_one


def _tau(value: Any, key: str = "reward") -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        runs = json.loads((FIXTURES / "tau-bench" / "gpt-4o-airline.trials.json").read_text())
        runs[3][key] = value
        path = folder / "tau.json"
        path.write_text(json.dumps(runs))
        return path

    return make


def _tau2(value: Any) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        document = json.loads((FIXTURES / "tau2" / "retail.results.json").read_text())
        document["simulations"][1]["reward_info"]["reward"] = value
        path = folder / "tau2.json"
        path.write_text(json.dumps(document))
        return path

    return make


def _promptfoo(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        document = json.loads((FIXTURES / "promptfoo" / "results.json").read_text())
        change(document["results"]["results"][2])
        path = folder / "results.json"
        path.write_text(json.dumps(document))
        return path

    return make


def _component_pass(result: dict[str, Any]) -> None:
    result["gradingResult"]["componentResults"][0]["pass"] = "true"


def _vally(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        lines = (FIXTURES / "vally" / "results.jsonl").read_text().splitlines()
        record = json.loads(lines[1])
        change(record)
        lines[1] = json.dumps(record)
        path = folder / "results.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path

    return make


def _jsonl(field: str, value: Any) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        records = [json.loads(line) for line in (FIXTURES / "tabular" / "runs.jsonl").open()]
        record = records[2]
        if field == "passed":
            record["grade"]["ok"] = value
        elif field == "score":
            record["grade"]["score"] = value
        else:
            record[field] = value
        path = folder / "t.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
        return path

    return make


JSONL_MAP = {
    "stimulus": "case.id",
    "trial": "attempt",
    "passed": "grade.ok",
    "score": "grade.score",
    "cost_usd": "cost_usd",
}

# (format, make the file, reader options, the whole error after the path)
CASES: list[tuple[str, Callable[[Path], Path], dict[str, Any], str]] = [
    (
        "tau-bench",
        _tau("1.0"),
        {},
        ' at /3: reward is not a number; expected a JSON number; found string "1.0"',
    ),
    (
        "tau-bench",
        _tau(True),
        {},
        " at /3: reward is not a number; expected a JSON number; found boolean true",
    ),
    (
        "tau-bench",
        _tau("0", key="trial"),
        {},
        ' at /3: trial is not a trial index; expected a JSON integer ≥ 0; found string "0"',
    ),
    (
        "tau2-bench",
        _tau2("1.0"),
        {},
        ' at /simulations/1: reward is not a number; expected a JSON number; found string "1.0"',
    ),
    (
        "promptfoo",
        _promptfoo(lambda r: r.update(success="yes")),
        {},
        " at /results/results/2: success is not a boolean; "
        'expected a JSON boolean (true or false); found string "yes"',
    ),
    (
        "promptfoo",
        _promptfoo(lambda r: r.update(success=1)),
        {},
        " at /results/results/2: success is not a boolean; "
        "expected a JSON boolean (true or false); found number 1",
    ),
    (
        "promptfoo",
        _promptfoo(lambda r: r.update(score="1")),
        {},
        ' at /results/results/2: score is not a number; expected a JSON number; found string "1"',
    ),
    (
        "promptfoo",
        _promptfoo(_component_pass),
        {},
        " at /results/results/2/gradingResult/componentResults/0: pass is not a boolean; "
        'expected a JSON boolean (true or false); found string "true"',
    ),
    (
        "vally",
        _vally(lambda r: r["gradeResult"].update(passed="true")),
        {},
        ":2: gradeResult.passed is not a boolean; "
        'expected a JSON boolean (true or false); found string "true"',
    ),
    (
        "vally",
        _vally(lambda r: r["gradeResult"].update(score="0.9")),
        {},
        ':2: gradeResult.score is not a number; expected a JSON number; found string "0.9"',
    ),
    (
        "vally",
        _vally(lambda r: r.update(trialIndex="1")),
        {},
        ':2: trialIndex is not a trial index; expected a JSON integer ≥ 0; found string "1"',
    ),
    (
        "jsonl",
        _jsonl("passed", "yes"),
        {"column_map": JSONL_MAP},
        ":3: column 'grade.ok' is not a boolean; "
        'expected a JSON boolean (true or false); found string "yes"',
    ),
    (
        "jsonl",
        _jsonl("score", "0.5"),
        {"column_map": JSONL_MAP},
        ":3: column 'grade.score' is not a number; expected a JSON number; found string \"0.5\"",
    ),
    (
        "jsonl",
        _jsonl("attempt", "2"),
        {"column_map": JSONL_MAP},
        ":3: column 'attempt' is not a trial index; expected a JSON integer ≥ 0; "
        'found string "2"',
    ),
    (
        "jsonl",
        _jsonl("cost_usd", "0.02"),
        {"column_map": JSONL_MAP},
        ":3: column 'cost_usd' is not a number; expected a JSON number; found string \"0.02\"",
    ),
]


@pytest.mark.parametrize(("format_name", "make", "options", "message"), CASES)
def test_a_string_where_json_has_a_number_or_boolean_is_refused(
    tmp_path: Path,
    format_name: str,
    make: Callable[[Path], Path],
    options: dict[str, Any],
    message: str,
) -> None:
    path = make(tmp_path)
    # auto detection reads it as the same format, and the error is the same
    for chosen in ("auto", format_name):
        with pytest.raises(InputError) as raised:
            load_one(path, format=chosen, **options)
        assert str(raised.value) == f"{path}{message}"


def test_the_unchanged_fixtures_still_read(tmp_path: Path) -> None:
    # The same files with the values of the right type: the change above is the whole cause.
    assert load_one(_tau(1.0)(tmp_path)).counts()[0] == 200
    assert load_one(_promptfoo(lambda r: r.update(success=True))(tmp_path)).counts()[0] == 24
    assert load_one(_vally(lambda r: r.update(trialIndex=0))(tmp_path)).counts()[0] > 0
    jsonl = load_one(_jsonl("attempt", 2)(tmp_path), format="jsonl", column_map=JSONL_MAP)
    assert jsonl.outcomes() == {"summarise-pr": "PPF", "triage-issue": "FEP"}


@pytest.mark.parametrize(
    "make",
    [_tau("1.0"), _promptfoo(lambda r: r.update(success="yes"))],
    ids=["tau-bench reward", "promptfoo success"],
)
def test_the_cli_exits_2_with_one_line(tmp_path: Path, make: Callable[[Path], Path]) -> None:
    from gate.cli import main

    path = make(tmp_path)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if str(path) in line]
    assert len(errors) == 1
    assert re.search(r"is not a (number|boolean); expected a JSON (number|boolean)", errors[0])
