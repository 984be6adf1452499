"""Shared helpers for the scale tests: random native results and the slow reference reading."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from gate.ingest import IngestOptions, native
from gate.table import TrialTable

SUITES: dict[str, dict[str, Any]] = {
    "plain": {},
    "graded": {"pass_threshold": 0.6, "grader_weights": {"tests": 2.0, "style": 0.5}},
    "rated": {"categories": {"wrong": 0.0, "partial": 0.5, "right": 1.0}},
}


def random_record(rng: random.Random, suite: str, stimulus: str, index: Any) -> dict[str, Any]:
    """One valid native trial record exercising every way a trial can be decided."""
    record: dict[str, Any] = {"suite": suite, "stimulus": stimulus, "trial": index}
    roll = rng.random()
    if roll < 0.05:
        record["status"] = "error"
        if rng.random() < 0.7:
            record["message"] = rng.choice(["timed out: 600 s", "sandbox: OOM", "ünïcode fault"])
    elif roll < 0.08:
        record["status"] = "skipped"
    elif suite == "graded" and roll < 0.6:
        record["graders"] = [
            {"name": name, "score": round(rng.random(), 3)}
            if rng.random() < 0.7
            else {"name": name, "passed": rng.random() < 0.5}
            for name in rng.sample(["tests", "style", "lint"], rng.randint(1, 3))
        ]
    elif suite == "rated" and roll < 0.6:
        record["outcome"] = rng.choice(["wrong", "partial", "right"])
    else:
        kind = rng.random()
        if kind < 0.4:
            record["passed"] = rng.random() < 0.6
        elif kind < 0.7:
            record["score"] = rng.choice([0, 1, 0.25, 0.6, round(rng.random(), 3)])
        else:
            record["passed"] = rng.random() < 0.5
            record["score"] = round(rng.random(), 3)
    if rng.random() < 0.05:
        record["tags"] = rng.sample(["geo", "math", "critical"], rng.randint(1, 2))
    if rng.random() < 0.3:
        record["metadata"] = {
            "duration_s": round(rng.random() * 9, 2),
            "tokens": rng.randint(1, 99),
        }
    if rng.random() < 0.05:
        record.setdefault("status", "ok")
    if rng.random() < 0.02:
        record["type"] = "trial"
    return record


def random_jsonl(
    path: Path, rng: random.Random, stimuli: int, trials: int, *, order: str = "round"
) -> list[str]:
    """Write declarations then trial records (round-major or shuffled); returns the lines."""
    lines = [
        json.dumps({"type": "suite", "schema_version": "1.0", "suite": name, **settings})
        for name, settings in SUITES.items()
        if settings
    ]
    names = [(rng.choice(list(SUITES)), f"case-{s:03d}-é" if s % 7 == 0 else f"case-{s:03d}")
             for s in range(stimuli)]  # fmt: skip
    records = [
        random_record(rng, suite, stimulus, t) for t in range(trials) for suite, stimulus in names
    ]
    if order == "shuffled":
        rng.shuffle(records)
    lines += [
        json.dumps(r, ensure_ascii=rng.random() < 0.5, separators=rng.choice([None, (",", ":")]))
        for r in records
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def strict_table(paths: list[Path], options: IngestOptions | None = None) -> TrialTable:
    """The plain way: stdlib json, jsonschema, one Trial at a time (native.read_strict)."""
    table = TrialTable()
    for path in paths:
        table.extend(native.read_strict(str(path), options or IngestOptions()))
        table.sources.append(str(path))
    return table


def snapshot(table: TrialTable) -> dict[str, Any]:
    """Everything a table says, per stimulus in table order, as plain data."""
    stimuli = [
        (
            key,
            record.indices,
            record.passed,
            record.statuses,
            record.scores,
            record.categories,
            sorted(record.tags),
            record.messages,
            record.scored,
            record.has_graders,
            record.where,
        )
        for key, record in table.stimuli.items()
    ]
    return {"stimuli": stimuli, "suites": dict(table.suites), "trials": len(table)}


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many chunks from a small file, so that chunk edges are crossed everywhere."""
    monkeypatch.setattr(native, "CHUNK_BYTES", 3000)
