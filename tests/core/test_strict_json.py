"""Strict JSON: refused values are located by line, column and JSON pointer, in both forms;
``validate`` also checks that the files go together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.errors import InputError
from gate.ingest import load

NESTED = """{
  "schema_version": "1.0",
  "suite": "s",
  "stimuli": [
    {"id": "a", "trials": [{"passed": true}, {"passed": true, "score": %s}]}
  ]
}
"""


@pytest.mark.parametrize(
    ("value", "message", "column"),
    [
        ("NaN", "NaN is not valid JSON", 72),
        ("-Infinity", "-Infinity is not valid JSON", 72),
        ("1e400", "the number 1e400 is too large", 72),
        ("-2.5E+999", "the number -2.5E+999 is too large", 72),
    ],
)
def test_nested_document_refusals_name_line_column_and_pointer(
    tmp_path: Path, value: str, message: str, column: int
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(NESTED % value)
    # The offending value starts at this column of line 5 (1-based), by construction.
    assert (NESTED % value).splitlines()[4].index(value) + 1 == column
    with pytest.raises(InputError) as caught:
        load([str(path)])
    text = str(caught.value)
    assert f"{path} at /stimuli/0/trials/1/score" in text
    assert message in text
    assert f"(line 5, column {column})" in text


def test_a_repeated_key_is_located_at_its_second_occurrence(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    text = NESTED.replace('"score": %s', '"passed": false')
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load([str(path)])
    second = text.splitlines()[4].rindex('"passed"') + 1
    assert "at /stimuli/0/trials/1/passed: duplicate key 'passed'" in str(caught.value)
    assert f"(line 5, column {second})" in str(caught.value)


def test_keys_that_repeat_in_different_objects_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(NESTED % "0.5")  # "passed" in two sibling objects
    table, _ = load([str(path)])
    assert len(table) == 2


def test_jsonl_refusal_names_line_column_and_pointer(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    good = json.dumps({"stimulus": "a", "trial": 0, "passed": True})
    bad = '{"stimulus": "a", "trial": 1, "passed": true, "metadata": {"duration_s": 1e400}}'
    path.write_text(good + "\n" + bad + "\n")
    with pytest.raises(InputError) as caught:
        load([str(path)])
    text = str(caught.value)
    assert f"{path}:2 at /metadata/duration_s" in text
    assert f"(column {bad.index('1e400') + 1})" in text


def test_overflowing_weight_is_refused_not_turned_into_nan(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(
        json.dumps({"schema_version": "1.0", "suite": "s", "stimuli": []})[:-1]
        + ', "grader_weights": {"a": 1e400}}'
    )
    with pytest.raises(InputError, match=r"at /grader_weights/a: the number 1e400 is too large"):
        load([str(path)])


def test_validate_reports_files_that_are_valid_alone_but_not_together(tmp_path: Path) -> None:
    record = json.dumps({"stimulus": "x", "trial": 1, "passed": True}) + "\n"
    (tmp_path / "a.jsonl").write_text(record)
    (tmp_path / "b.jsonl").write_text(record)
    runner = CliRunner()
    alone = runner.invoke(main, ["validate", str(tmp_path / "a.jsonl")])
    assert alone.exit_code == 0
    together = runner.invoke(
        main, ["validate", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    )
    assert together.exit_code == 2
    assert "valid one by one but not together" in together.output
    assert (
        f"first at {tmp_path / 'a.jsonl'}:1, again at {tmp_path / 'b.jsonl'}:1" in together.output
    )
