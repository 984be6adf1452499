"""--format auto: every format told from content, the name only breaking ties; and every
format's malformed input is an InputError naming the file and the place in it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gate.errors import InputError
from gate.ingest import FORMAT_MODULES, reader
from gate.ingest.detect import detect, json_keys
from tests.conftest import EXAMPLES
from tests.ingest.conftest import FIXTURES, load_one


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("inspect/mock_reliability.eval", "inspect"),
        ("inspect/mock_reliability-deflate.eval", "inspect"),
        ("inspect/mock_reliability.json", "inspect"),
        ("promptfoo/results.json", "promptfoo"),
        ("promptfoo/results.jsonl", "promptfoo"),
        ("junit/pytest-repeat.xml", "junit"),
        ("junit/surefire-rerun.xml", "junit"),
        ("tau2/retail.results.json", "tau2-bench"),
        ("tau2/dir-format.results.json", "tau2-bench"),
        ("vally/results.jsonl", "vally"),
        ("tabular/runs.csv", "csv"),
        ("tabular/plain.csv", "csv"),
        ("tabular/runs.jsonl", "jsonl"),
    ],
)
def test_fixtures_are_detected_whatever_their_name(
    fixture: str, expected: str, tmp_path: Path
) -> None:
    assert detect(str(FIXTURES / fixture)) == expected
    if expected != "csv":  # a CSV without a 'stimulus' column needs its name (a tie)
        renamed = tmp_path / "results.dat"
        shutil.copy(FIXTURES / fixture, renamed)
        assert detect(str(renamed)) == expected


def test_native_files_are_still_native() -> None:
    natives = [p for p in EXAMPLES.rglob("*") if p.suffix in (".json", ".jsonl")]
    natives = [p for p in natives if '"stimulus"' in p.read_text() or '"stimuli"' in p.read_text()]
    for path in natives:
        assert detect(str(path)) == "native", path


def test_minified_and_single_line_documents(tmp_path: Path) -> None:
    tau = tmp_path / "tau.json"
    tau.write_text(json.dumps([{"task_id": 0, "reward": 1.0, "trial": 0}]))
    assert detect(str(tau)) == "tau-bench"
    promptfoo = tmp_path / "pf.json"
    document = json.loads((FIXTURES / "promptfoo" / "results.json").read_text())
    promptfoo.write_text(json.dumps(document))
    assert detect(str(promptfoo)) == "promptfoo"
    native = tmp_path / "one.jsonl"
    native.write_text(json.dumps({"stimulus": "a", "trial": 0, "passed": True}) + "\n")
    assert detect(str(native)) == "native"


def test_promptfoo_jsonl_is_detected_whatever_its_name(tmp_path: Path) -> None:
    """promptfoo eval -o results.jsonl: one result per line, told by testIdx and testCase, or
    by prompt.raw when a long transcript pushes those past the 64 KiB looked at."""
    results = json.loads((FIXTURES / "promptfoo" / "results.json").read_text())["results"]
    lines = tmp_path / "out.dat"
    lines.write_text("".join(json.dumps(result) + "\n" for result in results["results"]))
    assert detect(str(lines)) == "promptfoo"
    single = tmp_path / "single.json"  # one line, named like a document
    single.write_text(json.dumps(results["results"][0]) + "\n")
    assert detect(str(single)) == "promptfoo"
    # As the evaluator streams it: provider, prompt, vars, response first; here the response
    # fills the sniff, so testIdx and testCase lie beyond it.
    streamed = {
        "provider": {"id": "echo"},
        "prompt": {"raw": "Answer: Paris", "label": "Answer: {{question}}"},
        "vars": {"question": "Paris"},
        "response": {"output": "x" * 100_000},
        "success": True,
        "testIdx": 0,
        "testCase": {"vars": {"question": "Paris"}},
    }
    long = tmp_path / "long.dat"
    long.write_text(json.dumps(streamed) + "\n" + json.dumps(streamed) + "\n")
    assert detect(str(long)) == "promptfoo"
    # Another tool's JSONL with a prompt of its own stays generic.
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": 1, "prompt": "hi", "passed": True}) + "\n")
    assert detect(str(other)) == "jsonl"


def test_counts_files_are_detected(tmp_path: Path) -> None:
    declaration = {"type": "suite", "schema_version": "1.0", "suite": "math"}
    row = {"suite": "math", "stimulus": "p-1", "n": 10, "c": 7}
    jsonl = tmp_path / "totals.dat"
    jsonl.write_text(json.dumps(declaration) + "\n" + json.dumps(row) + "\n")
    assert detect(str(jsonl)) == "counts"
    array = tmp_path / "totals.json"
    array.write_text(json.dumps([row, {**row, "stimulus": "p-2"}], indent=2))
    assert detect(str(array)) == "counts"
    # A trial record with n and c fields in its metadata is still a trial record.
    trial = tmp_path / "trial.jsonl"
    trial.write_text(json.dumps({**row, "trial": 0, "passed": True}) + "\n")
    assert detect(str(trial)) == "native"


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"suite": "q", "stimulus": "s", "n": 3, "c": 1}, "counts"),
        ({"suite": "q", "stimulus": "s", "trial": 0, "outcome": "c7"}, "native"),
    ],
)
def test_a_suite_declaration_longer_than_the_sniff(
    tmp_path: Path, row: dict[str, object], expected: str
) -> None:
    """A first line declaring a suite of thousands of categories (about 100 KB, past the
    64 KiB sniff) is read on to the record after it, which tells native from counts; the
    generic JSONL reader it was taken for said the declaration had no stimulus."""
    categories = {f"c{i}": i / 5000 for i in range(5001)}
    declaration = {"type": "suite", "schema_version": "1.0", "suite": "q"}
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({**declaration, "categories": categories}) + "\n" + json.dumps(row))
    assert path.stat().st_size > 64 * 1024
    assert detect(str(path)) == expected


def test_nothing_fits(tmp_path: Path) -> None:
    cases = {
        "notes.txt": "just some words\n",
        "config.json": '{"name": "x", "version": 1}',
        "report.xml": '<?xml version="1.0"?>\n<!-- cov -->\n<coverage line-rate="1"/>',
        "archive.zip": None,
        "table.txt": "a,b\n1,2\n",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content is None:
            shutil.make_archive(str(tmp_path / "archive"), "zip", FIXTURES / "tabular")
        else:
            path.write_text(content)
        with pytest.raises(InputError, match=rf"{name}"):
            detect(str(path))


def test_json_keys_scanner_tolerates_a_cut_off_head() -> None:
    text = json.dumps({'k"}': {"x": "}]\\"}, "z": [1, {"y": 2}]})
    assert json_keys(text) == {('k"}',), ('k"}', "x"), ("z",), ("z", "[]", "y")}
    assert json_keys(text[:12]) == {('k"}',)}


def test_every_format_name_has_a_reader() -> None:
    assert {"native", "inspect", "promptfoo", "junit", "tau-bench", "tau2-bench", "vally"} | {
        "csv",
        "jsonl",
        "counts",
    } == set(FORMAT_MODULES)
    for name in FORMAT_MODULES:
        assert callable(reader(name))


# Each: (file name, content, format, message that must name the file and the place).
MALFORMED = [
    (
        "log.json",
        {"eval": {"task": "t"}, "samples": [{"id": "a"}]},
        "inspect",
        r"log\.json at /samples/0: sample has no epoch",
    ),
    (
        "results.json",
        {"results": {"results": [{"testIdx": 0}]}},
        "promptfoo",
        r"results\.json at /results/results/0: result has no testCase",
    ),
    (
        "tau.json",
        [{"task_id": 0, "trial": 0, "reward": 1}, {"task_id": 1, "trial": 0}],
        "tau-bench",
        r"tau\.json at /1: entry has no reward",
    ),
    (
        "tau.json",
        [{"task_id": 0, "trial": 0, "reward": "high"}],
        "tau-bench",
        r"tau\.json at /0: reward is not a number",
    ),
    (
        "tau2.json",
        {"simulations": [{"task_id": "1", "trial": 0}, {"trial": 1}]},
        "tau2-bench",
        r"tau2\.json at /simulations/1: task_id is missing",
    ),
    (
        "results.jsonl",
        '{"type":"trial-result","stimulus":"s","status":"success","gradeResult":'
        '{"passed":true}}\n{"type":"trial-result","stimulus":"s","trialIndex":"x"}\n',
        "vally",
        r"results\.jsonl:2: trialIndex is not a trial index",
    ),
    (
        "report.xml",
        '<testsuite>\n<testcase name="a">\n<failure>\n</testsuite>',
        "junit",
        r"report\.xml:4: not well-formed XML",
    ),
    ("t.csv", "stimulus,passed\na,true\na,perhaps\n", "csv", r"t\.csv:3: column 'passed'"),
    (
        "t.jsonl",
        '{"stimulus": "a", "passed": true}\n[1, 2]\n',
        "jsonl",
        r"t\.jsonl:2: line is not a JSON object",
    ),
    (
        "t.jsonl",
        '{"stimulus": "a", "passed": true}\n{"stimulus": "a", "passed": NaN}\n',
        "jsonl",
        r"t\.jsonl:2 at /passed: NaN is not valid JSON",
    ),
]


@pytest.mark.parametrize(("name", "content", "format_name", "message"), MALFORMED)
def test_malformed_input_names_file_and_place(
    tmp_path: Path, name: str, content: object, format_name: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(InputError, match=message):
        load_one(path, format=format_name)
