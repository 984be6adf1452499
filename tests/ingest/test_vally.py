"""Vally results.jsonl: trial-result records per eval (suite) and stimulus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.errors import InputError
from tests.ingest.conftest import FIXTURES, load_one

RESULTS = FIXTURES / "vally" / "results.jsonl"


def test_trial_results_become_trials_and_the_summary_is_skipped() -> None:
    loaded = load_one(RESULTS)
    assert [x.format for x in loaded.inputs] == ["vally"]
    assert loaded.table.suite_names() == ["code-review", "test-writer"]
    assert loaded.outcomes() == {
        "basic-test-generation": "PPP",
        "edge-case-handling": "FPE",
        "spot-the-bug": "PSF",
    }
    assert loaded.counts() == (9, 5, 1, 1)
    edge = loaded.table.stimuli[("test-writer", "edge-case-handling")]
    assert edge.messages == ["failed: file-exists", "agent timed out after 600s"]
    # Written out of order, sorted by trialIndex; each keeps its line.
    basic = loaded.table.stimuli[("test-writer", "basic-test-generation")]
    assert basic.scores == [0.9, 1.0, 0.95]
    assert [basic.where[i].line for i in range(3)] == [2, 1, 4]  # type: ignore[union-attr]


def test_missing_trial_index_counts_in_order_of_appearance(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [
        {
            "type": "trial-result",
            "evalName": "e",
            "stimulus": "s",
            "status": "success",
            "gradeResult": {"passed": passed, "score": float(passed)},
        }
        for passed in (True, False, True)
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert load_one(path).outcomes() == {"s": "PFP"}


def test_bad_status_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(
        RESULTS.read_text().splitlines()[0]
        + "\n"
        + json.dumps({"type": "trial-result", "stimulus": "s", "status": "crashed"})
        + "\n"
    )
    with pytest.raises(InputError, match=r"results\.jsonl:2: unknown status.*'crashed'"):
        load_one(path)


def test_success_without_a_grade_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(
        json.dumps(
            {"type": "trial-result", "stimulus": "s", "status": "success", "gradeResult": None}
        )
        + "\n"
    )
    with pytest.raises(
        InputError, match=r"results\.jsonl:1: a successful trial-result has no grade"
    ):
        load_one(path, format="vally")
