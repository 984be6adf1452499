"""Golden files pin the Markdown summary of the bundled examples.

After an intended change to the report, regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/core/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gate.pipeline import request_from_options, run_check
from gate.report.markdown import render_summary
from tests.conftest import EXAMPLES, ROOT

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize(
    ("example", "results"),
    [("passing", "results.json"), ("failing", "results.jsonl"), ("undecided", "results.jsonl")],
)
def test_example_summary_matches_golden_file(
    example: str, results: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES / example)
    outcome = run_check(request_from_options([results], config=None))
    rendered = render_summary(outcome)
    golden: Path = GOLDEN / f"{example}.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")


def test_comparison_with_baseline_matches_golden_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES / "failing")
    request = request_from_options(
        ["results.jsonl"],
        config=None,
        baseline=["baseline.jsonl"],
        overrides={"max_regression": "0.05"},
    )
    rendered = render_summary(run_check(request))
    golden = GOLDEN / "failing-vs-baseline.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")
