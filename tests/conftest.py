"""Shared fixtures: paths and a small writer for native JSONL results."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# The property tests draw the same examples on every run, so that CI passes or fails on the
# code alone, never on a new draw; ``HYPOTHESIS_PROFILE=explore make test`` draws new ones
# (and saves what fails in .hypothesis/, replayed first on the next run).
settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
REFERENCE = ROOT.parent / "shared" / "reference"


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Write records (dicts, or raw strings for malformed lines) to a .jsonl file in tmp."""

    def write(records: Iterable[dict[str, Any] | str], name: str = "results.jsonl") -> Path:
        path = tmp_path / name
        lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write


def trials_of(stimulus: str, outcomes: str, suite: str = "s") -> list[dict[str, Any]]:
    """Records for one stimulus from a pattern: P passed, F failed, E error, S skipped."""
    records = []
    for index, letter in enumerate(outcomes):
        record: dict[str, Any] = {"suite": suite, "stimulus": stimulus, "trial": index}
        if letter in "PF":
            record["passed"] = letter == "P"
        else:
            record["status"] = {"E": "error", "S": "skipped"}[letter]
        records.append(record)
    return records
