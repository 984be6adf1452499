"""eval-gate's own format: a nested JSON document or flat JSONL (see docs/format.md).

JSONL is streamed in chunks of about a megabyte: each chunk is parsed with
orjson, validated with one jsonschema-rs call and handed to the trial table
as one :class:`~gate.trials.TrialBatch`, so memory holds one chunk of records
at a time and per-record Python work is a few dict lookups. Any chunk the fast
path is not certain about (orjson refuses a line, a key may be duplicated, an
integer field is not an int) is read again line by line the strict way, which
is also what :func:`read_strict` does for a whole file: the reference the fast
path is tested against (tests/scale).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from gate import limits
from gate.errors import Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import (
    iter_jsonl,
    jsonl_chunks,
    load_bytes,
    load_file,
    pointer,
    read_bytes,
    strict_lines,
)
from gate.ingest.values import json_number
from gate.reading import open_input
from gate.schemas import first_invalid, validate
from gate.trials import DEFAULT_SUITE, SuiteSpec, Trial, TrialBatch, trial_from_fields

#: Bytes per chunk: big enough that per-call costs vanish, small enough to stay cache- and
#: memory-friendly (about 7,000 typical records).
CHUNK_BYTES = 1 << 20


def read(path: str, options: IngestOptions) -> Iterator[Record | TrialBatch]:
    """Read a native file: JSONL when its first non-blank character starts a line record."""
    if _looks_like_jsonl(path):
        yield from _read_jsonl(path, options)
    else:
        yield from _read_document(path, options)


def read_strict(path: str, options: IngestOptions) -> Iterator[Record]:
    """The plain reader: stdlib ``json`` and ``jsonschema``, one :class:`Trial` per record.

    Slow but simple; the fast path must give the same table (tests/scale).
    """
    default_suite = options.suite or DEFAULT_SUITE
    if _looks_like_jsonl(path):
        for line_number, record in iter_jsonl(path):
            yield from _strict_record(record, Provenance(path, line_number), default_suite)
        return
    document = load_file(path)
    validate(document, "results", Provenance(path))
    suite = document.get("suite", default_suite)
    yield suite_spec(document, suite, Provenance(path, pointer=""))
    for s, stimulus in enumerate(document["stimuli"]):
        tags = tuple(stimulus.get("tags", ()))
        for t, trial in enumerate(stimulus["trials"]):
            yield trial_from_fields(
                trial,
                suite=suite,
                stimulus=stimulus["id"],
                index=trial.get("trial", t),
                tags=tags,
                where=Provenance(path, pointer=pointer("stimuli", s, "trials", t)),
            )


def _looks_like_jsonl(path: str) -> bool:
    if path.endswith(".jsonl"):
        return True
    if path.endswith(".json"):
        return False
    maximum = limits.LINE_BYTES.value()
    with open_input(path) as handle:
        while raw := handle.readline(maximum + 1):
            line = raw.decode("utf-8", errors="replace")
            if line.strip():
                stripped = line.strip()
                return stripped.startswith("{") and stripped.endswith("}") and '"stimulus"' in line
    return False


def suite_spec(record: Mapping[str, Any], name: str, where: Provenance) -> SuiteSpec:
    """A suite declaration (schema-valid); its numbers must also fit in a float."""
    numbers = {"pass_threshold": record.get("pass_threshold")}
    for group in ("grader_weights", "categories"):
        values = record.get(group)
        if isinstance(values, Mapping):
            numbers.update({f"{group}.{key}": value for key, value in values.items()})
    for field, value in numbers.items():
        if value is not None:
            json_number(value, where, field)
    return SuiteSpec(
        name=name,
        categories=record.get("categories"),
        grader_weights=record.get("grader_weights", {}),
        pass_threshold=record.get("pass_threshold"),
        provenance=where,
    )


def _strict_record(
    record: Any, where: Provenance, default_suite: str
) -> Iterator[SuiteSpec | Trial]:
    validate(record, "trial-record", where)
    suite = record.get("suite", default_suite)
    if record.get("type") == "suite":
        yield suite_spec(record, suite, where)
        return
    yield trial_from_fields(
        record, suite=suite, stimulus=record["stimulus"], index=record["trial"], where=where
    )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while records stream through.

    A chunk's thousands of fresh dicts trigger collections that scan them all
    and find nothing: records hold no cycles and are freed by reference count
    as soon as their chunk is reduced. Pausing saves about 10 % of the reading time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_jsonl(path: str, options: IngestOptions) -> Iterator[Record | TrialBatch]:
    default_suite = options.suite or DEFAULT_SUITE
    with _collector_paused():
        for chunk in jsonl_chunks(path, CHUNK_BYTES):
            if chunk.records is None:
                for line_number, record in chunk.strict:
                    yield from _strict_record(record, Provenance(path, line_number), default_suite)
            else:
                yield from _reduce_chunk(
                    path, chunk.first_line, chunk.lines, chunk.records, default_suite
                )


def _reduce_chunk(
    path: str, first_line: int, lines: list[bytes], records: list[Any], default_suite: str
) -> Iterator[Record | TrialBatch]:
    """Validate a parsed chunk (line ``first_line`` + i is record i) and yield it as batches."""
    import numpy as np

    # A valid record without a trial index is a suite declaration (-1 here).
    try:
        listed = [r.get("trial", -1) for r in records]
    except AttributeError:  # a line that is not an object: invalid, found below
        listed = [r.get("trial", -1) if isinstance(r, dict) else -1 for r in records]
    try:
        indices = np.array(listed)
    except (OverflowError, ValueError):
        indices = np.array([])
    doubtful: list[int] = []
    if indices.dtype != np.int64 or indices.shape != (len(listed),):
        # orjson reads an integer past 64 bits as a float where json keeps the int: such a
        # trial index (or a float one) sends its line to the strict parser.
        doubtful = [i for i, v in enumerate(listed) if type(v) is not int or v >= 1 << 63]
        marked = set(doubtful)
        indices = np.array([-2 if i in marked else v for i, v in enumerate(listed)])
    start = 0
    while start < len(records):
        bad = first_invalid(records, "trial-record", start)
        end = len(records) if bad is None else bad
        end = min([end, *(i for i in doubtful if i >= start)])
        yield from _segments(path, first_line, records, indices, start, end, default_suite)
        if end == len(records):
            return
        # Record ``end`` is invalid (validate raises the located error), has a doubtful trial
        # index, or the validators disagree: the strict reading of its line decides.
        for line_number, record in strict_lines(path, first_line + end, lines[end : end + 1]):
            yield from _strict_record(record, Provenance(path, line_number), default_suite)
        start = end + 1


def _segments(
    path: str,
    first_line: int,
    records: list[Any],
    indices: Any,
    start: int,
    end: int,
    default_suite: str,
) -> Iterator[Record | TrialBatch]:
    """Batches of trial records between the suite declarations of ``records[start:end]``."""
    import numpy as np

    declarations = (np.flatnonzero(indices[start:end] < 0) + start).tolist()
    for stop in [*declarations, end]:
        if stop > start:
            yield TrialBatch(
                records[start:stop],
                path,
                first_line=first_line + start,
                suite=default_suite,
                indices=indices[start:stop],
            )
        if stop < end:
            declaration = records[stop]
            yield suite_spec(
                declaration,
                declaration.get("suite", default_suite),
                Provenance(path, first_line + stop),
            )
        start = stop + 1


def _read_document(path: str, options: IngestOptions) -> Iterator[Record | TrialBatch]:
    # A nested document is parsed whole (its trials sit inside one JSON value); use JSONL to
    # stream. Its trials are still reduced a stimulus at a time.
    document = load_bytes(read_bytes(path), Provenance(path))
    validate(document, "results", Provenance(path))
    if any(
        type(trial.get("trial", 0)) is not int
        for stimulus in document["stimuli"]
        for trial in stimulus["trials"]
    ):
        # Maybe orjson's float for an integer past 64 bits: the strict parser keeps the int.
        document = load_file(path)
    suite = document.get("suite", options.suite or DEFAULT_SUITE)
    yield suite_spec(document, suite, Provenance(path, pointer=""))
    for s, stimulus in enumerate(document["stimuli"]):
        trials: Sequence[Mapping[str, Any]] = stimulus["trials"]
        yield TrialBatch(
            trials,
            path,
            pointer=pointer("stimuli", s, "trials"),
            suite=suite,
            stimulus=stimulus["id"],
            tags=tuple(stimulus.get("tags", ())),
        )
