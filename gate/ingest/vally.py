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
the trial-results go to the table a few thousand at a time as
:class:`~gate.trials.TrialColumns` (:mod:`gate.ingest.blocks`), each at its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import jsonl_chunks
from gate.ingest.blocks import BLOCK_TRIALS, Rows, flushed_first
from gate.ingest.values import (
    Appearance,
    json_boolean,
    json_index,
    json_unit_score,
    message_text,
    metadata_number,
)
from gate.trials import DEFAULT_SUITE, Status, TrialColumns

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


def _row(
    record: Any, path: str, line: int, order: Appearance, default_suite: str
) -> tuple[Any, ...] | None:
    """The row (gate.ingest.blocks) of one line, or None for a record that is no trial-result;
    an error names the line and the field.

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
    grade = record.get("gradeResult")
    passed: bool | None = None
    score: float | None = None
    if type(grade) is dict:
        passed = grade.get("passed")
        if passed is not None and type(passed) is not bool:
            passed = json_boolean(passed, Provenance(path, line), "gradeResult.passed")
        score = grade.get("score")
        if score is not None and (type(score) is not float or not 0.0 <= score <= 1.0):
            score = json_unit_score(score, Provenance(path, line), "gradeResult.score")
    elif grade is not None:
        raise InputError(
            "gradeResult is not an object", Provenance(path, line), found=type(grade).__name__
        )
    message = None
    if status != "ok":
        message = _message(record)
    elif passed is None and score is None:
        raise InputError(
            "a successful trial-result has no grade",
            Provenance(path, line),
            expected="gradeResult with passed or score (was the eval run without graders?)",
        )
    elif passed is False or (passed is None and score is not None and score < 1.0):
        # Made now, not deferred to the table (gate.ingest.blocks): a grade is small to
        # render, and keeping its objects alive till the block is stored cost more.
        message = _failure(grade) if type(grade) is dict else None
    # Usage: durationMs and trajectory.metrics.tokenUsage.totalTokens (an integer).
    duration = record.get("durationMs")
    if duration is not None:
        if type(duration) is not float and not (type(duration) is int and -_BIG < duration < _BIG):
            duration = metadata_number(duration, Provenance(path, line), "durationMs")
        if duration is not None:
            duration = duration / 1000
    try:
        tokens = record["trajectory"]["metrics"]["tokenUsage"]["totalTokens"]
    except (KeyError, TypeError):  # absent, or not an object on the way
        tokens = None
    else:
        if type(tokens) is not int:
            tokens = None
    return (line, stimulus, suite, index, status, passed, score, message, duration, tokens)


def read(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read the trial-result records of a Vally results.jsonl, handing them to the table as
    blocks of columns."""
    rows = Rows(path, usage=("duration_s", "tokens"))
    yield from flushed_first(rows, _blocks(path, options, rows))


def _blocks(path: str, options: IngestOptions, rows: Rows) -> Iterator[TrialColumns]:
    order = Appearance()
    default_suite = options.suite or DEFAULT_SUITE
    append = rows.rows.append
    for chunk in jsonl_chunks(path, CHUNK_BYTES):
        # A chunk orjson could not be sure of is read by the strict parser, line by line.
        numbered = (
            chunk.strict if chunk.records is None else enumerate(chunk.records, chunk.first_line)
        )
        for line, record in numbered:
            row = _row(record, path, line, order, default_suite)
            if row is not None:
                append(row)
        if len(rows) >= BLOCK_TRIALS:
            yield rows.columns()
    yield from rows.flush()
