"""Golden files pin what the bundled examples produce in every sink: the Markdown summary,
the JSON report and the annotations (as the workflow commands the action prints).

After an intended change to a report, regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/core/test_golden.py`` and review the diff.
The JSON report is normalised where it depends on the build, not on the data: the tool
version.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gate.github.runner import annotation_commands
from gate.pipeline import CheckOutcome, request_from_options, run_check
from gate.report.annotations import build_annotations
from gate.report.json_report import build_report, dumps
from gate.report.markdown import render_summary
from tests.conftest import EXAMPLES, ROOT

GOLDEN = ROOT / "tests" / "golden"


@dataclass(frozen=True)
class Case:
    name: str
    example: str
    results: str
    baseline: tuple[str, ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()


CASES = [
    Case("passing", "passing", "results.json"),
    Case("failing", "failing", "results.jsonl"),
    Case("undecided", "undecided", "results.jsonl"),
    Case(
        "failing-vs-baseline",
        "failing",
        "results.jsonl",
        baseline=("baseline.jsonl",),
        overrides=(("max_regression", "0.05"),),
    ),
]


def normalised_json(outcome: CheckOutcome) -> str:
    report = build_report(outcome)
    report["tool"]["version"] = "<version>"
    return dumps(report)


def annotations_text(outcome: CheckOutcome) -> str:
    return "".join(line + "\n" for line in annotation_commands(build_annotations(outcome)))


SINKS: dict[str, Callable[[CheckOutcome], str]] = {
    "md": render_summary,
    "json": normalised_json,
    "annotations.txt": annotations_text,
}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, CheckOutcome]:
    """Each case checked once (the gates' advice simulates), shared by every sink's test."""
    found = {}
    here = Path.cwd()
    try:
        for case in CASES:
            os.chdir(EXAMPLES / case.example)
            request = request_from_options(
                [case.results],
                config=None,
                baseline=case.baseline,
                overrides=dict(case.overrides),
            )
            found[case.name] = run_check(request)
    finally:
        os.chdir(here)
    return found


@pytest.mark.parametrize("sink", SINKS)
@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_example_matches_its_golden_file(
    case: str, sink: str, outcomes: dict[str, CheckOutcome]
) -> None:
    rendered = SINKS[sink](outcomes[case])
    golden: Path = GOLDEN / f"{case}.{sink}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")


def test_the_golden_json_reports_are_valid_reports() -> None:
    from gate.schemas import validator

    for case in CASES:
        data = json.loads((GOLDEN / f"{case.name}.json").read_text(encoding="utf-8"))
        assert validator("report").is_valid(data), case.name
