"""The native format: both forms, merging, and errors that name file, line/pointer and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.errors import InputError
from gate.ingest import IngestOptions, load
from tests.conftest import EXAMPLES, trials_of


def test_jsonl_and_document_forms_give_the_same_table(write_jsonl, tmp_path: Path) -> None:
    jsonl = write_jsonl(trials_of("a", "PPF") + trials_of("b", "FF"))
    document = tmp_path / "doc.json"
    document.write_text(
        json.dumps(
            {
                "schema_version": "1.0",
                "suite": "s",
                "stimuli": [
                    {"id": "a", "trials": [{"passed": True}, {"passed": True}, {"passed": False}]},
                    {"id": "b", "trials": [{"passed": False}, {"passed": False}]},
                ],
            }
        )
    )
    from_jsonl, _ = load([str(jsonl)])
    from_doc, _ = load([str(document)])
    for table in (from_jsonl, from_doc):
        assert {k: v.passed for k, v in table.stimuli.items()} == {
            ("s", "a"): [True, True, False],
            ("s", "b"): [False, False],
        }


def test_files_and_globs_merge_and_trials_sort_by_index(tmp_path: Path) -> None:
    (tmp_path / "part1.jsonl").write_text(
        json.dumps({"stimulus": "a", "trial": 2, "passed": False}) + "\n"
    )
    (tmp_path / "part2.jsonl").write_text(
        json.dumps({"stimulus": "a", "trial": 0, "passed": True})
        + "\n"
        + json.dumps({"stimulus": "a", "trial": 1, "passed": True})
        + "\n"
    )
    table, loaded = load([str(tmp_path / "part*.jsonl")])
    record = table.stimuli[("default", "a")]
    assert record.indices == [0, 1, 2]
    assert record.passed == [True, True, False]
    assert [x.format for x in loaded] == ["native", "native"]
    assert all(x.detected for x in loaded)


def test_same_trial_twice_names_both_places(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    two = tmp_path / "two.jsonl"
    one.write_text(json.dumps({"stimulus": "a", "trial": 0, "passed": True}) + "\n")
    two.write_text("\n" + json.dumps({"stimulus": "a", "trial": 0, "passed": False}) + "\n")
    with pytest.raises(InputError) as caught:
        load([str(one), str(two)])
    message = str(caught.value)
    assert f"first at {one}:1" in message
    assert f"again at {two}:2" in message


def test_ragged_stimuli_are_fine(write_jsonl) -> None:
    table, _ = load([str(write_jsonl(trials_of("a", "PPPPP") + trials_of("b", "PP")))])
    assert [len(r.indices) for r in table.stimuli.values()] == [5, 2]


@pytest.mark.parametrize(
    ("line", "expected_fragments"),
    [
        (
            '{"stimulus": "a", "trial": 0, "score": NaN}',
            ["results.jsonl:1", "NaN is not valid JSON"],
        ),
        (
            '{"stimulus": "a", "trial": 0, "passed": true, "passed": false}',
            ["results.jsonl:1", "duplicate key 'passed'"],
        ),
        ('{"stimulus": "a", "trial": 0, "score": Infinity}', ["Infinity is not valid JSON"]),
        (
            '{"stimulus": "a", "trial": 0, "score": 1.5}',
            ["results.jsonl:1 at /score", "expected a number ≤ 1", "found 1.5"],
        ),
        ('{"stimulus": "a", "trial": 0}', ["the trial has no outcome", "passed, score, outcome"]),
        ('{"stimulus": "a", "trial": 0, "pased": true}', ["unknown field 'pased'"]),
        (
            '{"stimulus": "a", "trial": "0", "passed": true}',
            ["at /trial", "wrong type", "expected integer (0-based index", 'found "0"'],
        ),
        (  # jsonschema's own sentence repeated the whole name, in Python's quotes
            '{"stimulus": "%s", "trial": 0, "passed": true}' % ("a" * 1001),
            ["at /stimulus", "too long; expected at most 1000 characters", 'found "aaa'],
        ),
        (
            '{"stimulus": "a", "trial": 0, "passed": true, "tags": ["x", "x"]}',
            ["at /tags", "an item is repeated; expected each item once", 'found ["x", "x"]'],
        ),
        (  # neither choice of a oneOf: the field's description says what either is
            '{"stimulus": "a", "trial": 0, "passed": true, "metadata": {"tokens": "5"}}',
            ["at /metadata/tokens", "an integer ≥ 0, or an object of integers", 'found "5"'],
        ),
        (  # the schema's words, not its regular expression
            '{"type": "suite", "suite": "s", "schema_version": "2.0"}',
            ["at /schema_version", 'expected "1" or "1.x", the version of', 'found "2.0"'],
        ),
        (
            '{"stimulus": "a", "trial": 0, "passed": true',
            ["results.jsonl:1: not valid JSON", "column 45"],
        ),
        (
            '{"stimulus": "a", "trial": 0, "status": "crashed"}',
            ["at /status", '"ok", "error", "skipped"', 'found "crashed"'],
        ),
    ],
)
def test_bad_jsonl_records_are_located(
    write_jsonl, line: str, expected_fragments: list[str]
) -> None:
    path = write_jsonl([line])
    with pytest.raises(InputError) as caught:
        load([str(path)])
    for fragment in expected_fragments:
        assert fragment in str(caught.value)


def test_bad_record_in_document_names_json_pointer(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": "1.0",
                "stimuli": [{"id": "a", "trials": [{"passed": True}, {"score": -0.5}]}],
            }
        )
    )
    with pytest.raises(InputError) as caught:
        load([str(path)])
    assert f"{path} at /stimuli/0/trials/1/score" in str(caught.value)


def test_categorical_outcomes_use_declared_weights(write_jsonl) -> None:
    path = write_jsonl(
        [
            {
                "type": "suite",
                "suite": "s",
                "categories": {"wrong": 0.0, "partial": 0.5, "right": 1.0},
            },
            {"suite": "s", "stimulus": "a", "trial": 0, "outcome": "right"},
            {"suite": "s", "stimulus": "a", "trial": 1, "outcome": "partial"},
        ]
    )
    table, _ = load([str(path)])
    record = table.stimuli[("s", "a")]
    assert record.scores == [1.0, 0.5]
    assert record.categories == [2, 1]
    assert record.passed == [True, False]  # without pass_threshold, only the best category passes


def test_undeclared_category_is_an_error(write_jsonl) -> None:
    path = write_jsonl([{"stimulus": "a", "trial": 0, "outcome": "right"}])
    with pytest.raises(InputError, match="not a category"):
        load([str(path)])


def test_missing_file_and_empty_glob_are_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load([str(tmp_path / "nope.jsonl")])
    with pytest.raises(InputError, match="no file matches"):
        load([str(tmp_path / "*.jsonl")])


def test_a_file_whose_name_looks_like_a_glob_is_that_file(tmp_path: Path) -> None:
    literal = tmp_path / "results[gpt-4].jsonl"  # as a glob: results followed by g, p, t, - or 4
    literal.write_text(json.dumps({"stimulus": "a", "trial": 0, "passed": True}) + "\n")
    (tmp_path / "resultsg.jsonl").write_text(
        json.dumps({"stimulus": "b", "trial": 0, "passed": False}) + "\n"
    )
    table, inputs = load([str(literal)])
    assert [i.path for i in inputs] == [str(literal)]
    assert [stimulus for _, stimulus in table.stimuli] == ["a"]
    table, _ = load([str(tmp_path / "results[gp].jsonl")])  # no such file: a glob
    assert [stimulus for _, stimulus in table.stimuli] == ["b"]


def test_inputs_are_never_modified(tmp_path: Path) -> None:
    source = EXAMPLES / "failing" / "results.jsonl"
    before = source.read_bytes()
    load([str(source)], IngestOptions(format="native"))
    assert source.read_bytes() == before


def test_suite_declared_twice_differently_is_an_error(write_jsonl) -> None:
    path = write_jsonl(
        [
            {"type": "suite", "suite": "s", "pass_threshold": 0.5},
            {"type": "suite", "suite": "s", "pass_threshold": 0.7},
        ]
    )
    with pytest.raises(InputError, match="declared twice with different settings"):
        load([str(path)])
