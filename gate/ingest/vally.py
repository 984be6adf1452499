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

The file is read in chunks of lines parsed by orjson (:func:`gate.ingest._json.jsonl_chunks`);
consecutive trial-results go to the table as one :class:`~gate.trials.TrialBatch` of native
trial records, each at its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import jsonl_chunks
from gate.ingest.values import (
    Appearance,
    json_boolean,
    json_index,
    json_unit_score,
    message_text,
    metadata_number,
)
from gate.trials import DEFAULT_SUITE, Status, TrialBatch

#: integers smaller than this are exact floats (larger ones go through the checks).
_BIG = 1 << 53
_STATUS: dict[str, Status] = {"success": "ok", "error": "error", "skipped": "skipped"}
#: bytes of lines parsed at a time: a chunk's objects stay in the processor's cache (1 MiB
#: chunks read a million lines in 12 s, 64 KiB ones in 5.3 s).
CHUNK_BYTES = 64 * 1024


def _message(record: Mapping[str, Any]) -> str | None:
    for key in ("error", "errorMessage", "message"):
        value = record.get(key)
        if isinstance(value, Mapping):
            value = value.get("message")
        if value:
            return message_text(value)
    return None


def _failure(grade: Mapping[str, Any]) -> str | None:
    """Why a graded trial failed: the grade's own reason, else the graders that failed."""
    reason = grade.get("reason") or grade.get("message") or grade.get("feedback")
    if reason:
        return message_text(reason)
    details = grade.get("details")
    if type(details) is not list:
        return None
    failed = []
    for detail in details:
        if type(detail) is dict and detail.get("passed") is False:
            name = detail.get("grader") or detail.get("name") or "a grader"
            why = detail.get("message") or detail.get("reason")
            failed.append(f"{name}: {why}" if why else str(name))
    return message_text("failed: " + "; ".join(failed)) if failed else None


def _metadata(record: Mapping[str, Any], path: str, line: int) -> dict[str, Any]:
    duration = record.get("durationMs")
    model = record.get("model")
    item = record.get("itemId")
    tokens = None
    trajectory = record.get("trajectory")
    if type(trajectory) is dict:
        metrics = trajectory.get("metrics")
        if type(metrics) is dict:
            usage = metrics.get("tokenUsage")
            if type(usage) is dict:
                tokens = usage.get("totalTokens")
    if (
        type(duration) is int
        and -_BIG < duration < _BIG
        and type(model) is str
        and type(tokens) is int
        and type(item) is str
    ):  # what Vally writes for a graded trial: one dict made at once
        return {"duration_s": duration / 1000, "model": model, "tokens": tokens, "item_id": item}
    metadata: dict[str, Any] = {}
    if duration is not None:
        if type(duration) is not float and not (type(duration) is int and -_BIG < duration < _BIG):
            duration = metadata_number(duration, Provenance(path, line), "durationMs")
        if duration is not None:
            metadata["duration_s"] = duration / 1000
    if type(model) is str:
        metadata["model"] = model
    if type(tokens) is int:
        metadata["tokens"] = tokens
    if type(item) is str:
        metadata["item_id"] = item
    return metadata


def _fields(
    record: Any, path: str, line: int, order: Appearance, default_suite: str
) -> dict[str, Any] | None:
    """The native trial record (gate/trials.py ``trial_from_fields``) of one line, or None
    for a record that is no trial-result; an error names the line and the field.

    Parsed lines are dicts of JSON types: exact type tests take the usual record, and the
    checks that word an error run only when something is unusual.
    """
    if type(record) is not dict:
        raise InputError(
            "line is not a JSON object", Provenance(path, line), found=type(record).__name__
        )
    if record.get("type") != "trial-result":
        return None
    suite = record.get("evalName") or default_suite
    if type(suite) is not str:
        suite = str(suite)
    stimulus = record.get("stimulus")
    if type(stimulus) is not str or not stimulus:
        if not isinstance(stimulus, str | int) or isinstance(stimulus, bool) or stimulus == "":
            raise InputError(
                "trial-result has no stimulus",
                Provenance(path, line),
                expected="a stimulus name",
                found=repr(stimulus),
            )
        stimulus = str(stimulus)
    index = record.get("trialIndex")
    if index is None:
        index = order.next(suite, stimulus)
    elif type(index) is not int or index < 0:
        index = json_index(index, Provenance(path, line), "trialIndex")
    raw_status = record.get("status", "success")
    status = _STATUS.get(raw_status) if type(raw_status) is str else None
    if status is None:
        raise InputError(
            "unknown status",
            Provenance(path, line),
            expected="success, error or skipped",
            found=repr(raw_status),
        )
    fields: dict[str, Any] = {"suite": suite, "stimulus": stimulus, "trial": index}
    grade = record.get("gradeResult")
    passed: bool | None = None
    score: float | None = None
    if type(grade) is dict:
        passed = grade.get("passed")
        if passed is not None:
            if type(passed) is not bool:
                passed = json_boolean(passed, Provenance(path, line), "gradeResult.passed")
            fields["passed"] = passed
        score = grade.get("score")
        if score is not None:
            if type(score) is not float or not 0.0 <= score <= 1.0:
                score = json_unit_score(score, Provenance(path, line), "gradeResult.score")
            fields["score"] = score
    elif grade is not None:
        raise InputError(
            "gradeResult is not an object", Provenance(path, line), found=type(grade).__name__
        )
    if status != "ok":
        fields["status"] = status
        message = _message(record)
        if message is not None:
            fields["message"] = message
    elif passed is None and score is None:
        raise InputError(
            "a successful trial-result has no grade",
            Provenance(path, line),
            expected="gradeResult with passed or score (was the eval run without graders?)",
        )
    elif passed is False or (passed is None and score is not None and score < 1.0):
        message = _failure(grade) if type(grade) is dict else None
        if message is not None:
            fields["message"] = message
    fields["metadata"] = _metadata(record, path, line)
    return fields


def read(path: str, options: IngestOptions) -> Iterator[Record | TrialBatch]:
    """Read the trial-result records of a Vally results.jsonl."""
    order = Appearance()
    default_suite = options.suite or DEFAULT_SUITE
    for chunk in jsonl_chunks(path, CHUNK_BYTES):
        if chunk.records is None:
            # A line orjson could not be sure of: the strict parser reads the chunk, line by line.
            for line, record in chunk.strict:
                fields = _fields(record, path, line, order, default_suite)
                if fields is not None:
                    yield TrialBatch([fields], path, first_line=line, suite=fields["suite"])
            continue
        # Consecutive trial-results go as one batch; another record type ends the batch.
        batch: list[dict[str, Any]] = []
        start = chunk.first_line
        for line, record in enumerate(chunk.records, chunk.first_line):
            fields = _fields(record, path, line, order, default_suite)
            if fields is None:
                if batch:
                    yield TrialBatch(batch, path, first_line=start, suite=batch[0]["suite"])
                batch, start = [], line + 1
            else:
                batch.append(fields)
        if batch:
            yield TrialBatch(batch, path, first_line=start, suite=batch[0]["suite"])
