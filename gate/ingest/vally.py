"""Vally ``results.jsonl``: one ``trial-result`` record per trial.

``vally eval --output-dir d`` writes ``d/<timestamp>/results.jsonl`` with lines
such as::

    {"type": "trial-result", "evalName": "test-writer", "stimulus": "basic",
     "trialIndex": 0, "totalTrials": 3, "status": "success",
     "gradeResult": {"passed": true, "score": 0.9}}

Other record types (``run-summary``, ...) are not trials and are skipped.
``evalName`` is the suite, ``status`` success/error/skipped maps to
ok/error/skipped, and ``gradeResult.passed``/``score`` decide an ok trial.
Without ``trialIndex``, trials are numbered in order of appearance. Values must
have their JSON types: ``passed`` a boolean, ``score`` a number in [0, 1],
``trialIndex`` an integer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import iter_jsonl
from gate.ingest.values import (
    Appearance,
    json_boolean,
    json_index,
    json_unit_score,
    metadata_number,
)
from gate.trials import DEFAULT_SUITE, Status, Trial

_STATUS: dict[str, Status] = {"success": "ok", "error": "error", "skipped": "skipped"}


def _message(record: Mapping[str, Any]) -> str | None:
    for key in ("error", "errorMessage", "message"):
        value = record.get(key)
        if isinstance(value, Mapping):
            value = value.get("message")
        if value:
            return str(value)
    return None


def _metadata(record: Mapping[str, Any], where: Provenance) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    duration = metadata_number(record.get("durationMs"), where, "durationMs")
    if duration is not None:
        metadata["duration_s"] = duration / 1000
    if isinstance(record.get("model"), str):
        metadata["model"] = record["model"]
    trajectory = record.get("trajectory")
    metrics = trajectory.get("metrics") if isinstance(trajectory, Mapping) else None
    usage = metrics.get("tokenUsage") if isinstance(metrics, Mapping) else None
    if isinstance(usage, Mapping) and isinstance(usage.get("totalTokens"), int):
        metadata["tokens"] = {"total": usage["totalTokens"]}
    if isinstance(record.get("itemId"), str):
        metadata["item_id"] = record["itemId"]
    return metadata


def read(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read the trial-result records of a Vally results.jsonl."""
    order = Appearance()
    for line, record in iter_jsonl(path):
        where = Provenance(path, line)
        if not isinstance(record, dict):
            raise InputError("line is not a JSON object", where, found=type(record).__name__)
        if record.get("type") != "trial-result":
            continue
        suite = record.get("evalName") or options.suite or DEFAULT_SUITE
        stimulus = record.get("stimulus")
        if not isinstance(stimulus, str | int) or isinstance(stimulus, bool) or stimulus == "":
            raise InputError(
                "trial-result has no stimulus",
                where,
                expected="a stimulus name",
                found=repr(stimulus),
            )
        stimulus = str(stimulus)
        if record.get("trialIndex") is None:
            index = order.next(str(suite), stimulus)
        else:
            index = json_index(record["trialIndex"], where, "trialIndex")
        raw_status = record.get("status", "success")
        if not isinstance(raw_status, str) or raw_status not in _STATUS:
            raise InputError(
                "unknown status",
                where,
                expected="success, error or skipped",
                found=repr(raw_status),
            )
        status = _STATUS[raw_status]
        passed: bool | None = None
        score: float | None = None
        grade = record.get("gradeResult")
        if isinstance(grade, Mapping):
            passed = json_boolean(grade.get("passed"), where, "gradeResult.passed")
            if grade.get("score") is not None:
                score = json_unit_score(grade["score"], where, "gradeResult.score")
        elif grade is not None:
            raise InputError("gradeResult is not an object", where, found=type(grade).__name__)
        if status == "ok" and passed is None and score is None:
            raise InputError(
                "a successful trial-result has no grade",
                where,
                expected="gradeResult with passed or score (was the eval run without graders?)",
            )
        yield Trial(
            stimulus=stimulus,
            trial=index,
            suite=str(suite),
            status=status,
            passed=passed,
            score=score,
            message=_message(record) if status != "ok" else None,
            metadata=_metadata(record, where),
            provenance=where,
        )
