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

import io
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import (
    JsonlChunk,
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


#: what a native record without a trial index is told
NO_TRIAL_INDEX = (
    "a trial index (0, 1, ...) in every trial record; to number each stimulus's trials in "
    "order of appearance instead, read the file with --format jsonl"
)


def _strict_record(
    record: Any, where: Provenance, default_suite: str
) -> Iterator[SuiteSpec | Trial]:
    try:
        validate(record, "trial-record", where)
    except InputError as error:
        if str(error).endswith("missing field 'trial'") and isinstance(record, dict):
            raise InputError(
                "missing field 'trial'", error.where, expected=NO_TRIAL_INDEX
            ) from None
        raise
    suite = record.get("suite", default_suite)
    if record.get("type") == "suite":
        yield suite_spec(record, suite, where)
        return
    yield trial_from_fields(
        record, suite=suite, stimulus=record["stimulus"], index=record["trial"], where=where
    )


def _read_jsonl(path: str, options: IngestOptions) -> Iterator[Record | TrialBatch]:
    default_suite = options.suite or DEFAULT_SUITE
    # gate.ingest.load pauses the cycle collector around every reader.
    for chunk in jsonl_chunks(path, CHUNK_BYTES):
        if chunk.records is None:
            for line_number, record in chunk.strict:
                yield from _strict_record(record, Provenance(path, line_number), default_suite)
        else:
            yield from _reduce_chunk(path, chunk, chunk.records, default_suite)


def _reduce_chunk(
    path: str, chunk: JsonlChunk, records: list[Any], default_suite: str
) -> Iterator[Record | TrialBatch]:
    """Validate a parsed chunk (line ``first_line`` + i is record i) and yield it as batches."""
    import numpy as np

    first_line = chunk.first_line

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
        line = chunk.lines[end : end + 1]
        for line_number, record in strict_lines(path, first_line + end, line):
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


#: a stimulus's trials are parsed this many bytes of JSON at a time, at most
PIECE_BYTES = 1 << 20
#: trials validated (jsonschema-rs) in one call
_VALIDATE_TRIALS = 4096
#: what may be at the top of a results document besides its stimuli
_SETTINGS = ("schema_version", "suite", "categories", "grader_weights", "pass_threshold")


class _Fallback(Exception):
    """The streaming reader is not certain: the strict reader reads the document."""


def _read_document(path: str, options: IngestOptions) -> Iterator[Record | TrialBatch]:
    """A nested results document, streamed: a structural scan (:mod:`gate.ingest._jsonscan`)
    finds the stimuli and each one's trials array, then each is parsed by orjson a piece of
    at most :data:`PIECE_BYTES` at a time and validated a few thousand trials at a time, so
    memory holds a piece, never the document. Whatever the stream is not certain of (a
    piece orjson refuses, a key that may be repeated, an invalid record, a frame that is not
    a results document) is read again whole by the strict reader, which words the error;
    stimuli already given are then not given twice."""
    given = [0, 0]  # stimuli given whole, then trials given of the next one
    try:
        with open_input(path, limits.DOCUMENT_BYTES) as handle:
            yield from _stream_document(handle, path, options, given)
    except _Fallback:
        yield from _read_whole_document(path, options, skip=(given[0], given[1]))


class _Window:
    """Byte ranges of a file read in increasing order, a few megabytes at a time."""

    def __init__(self, handle: Any, size: int) -> None:
        self._handle = handle
        self._size = size
        self._start = 0
        self._data = b""

    def get(self, start: int, end: int) -> bytes:
        if not (self._start <= start and end <= self._start + len(self._data)):
            self._handle.seek(start)
            self._data = self._handle.read(max(end - start, self._size))
            self._start = start
            if len(self._data) < end - start:
                raise _Fallback  # the file changed under us
        return self._data[start - self._start : end - self._start]


class _Range(io.RawIOBase):
    """A byte range of a window, read as a file (to scan one large stimulus alone)."""

    def __init__(self, window: _Window, start: int, end: int) -> None:
        self._window, self._at, self._end = window, start, end

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        stop = self._end if size < 0 else min(self._end, self._at + size)
        data = self._window.get(self._at, stop) if stop > self._at else b""
        self._at = stop
        return data


def _parse(raw: bytes) -> Any:
    """``raw`` parsed as the strict parser parses it, else :class:`_Fallback` (the strict
    reader of the whole document words the error)."""
    from gate.ingest._json import REFUSED, decode_whole

    value = decode_whole(raw)
    if value is REFUSED:
        raise _Fallback
    return value


def _space(data: bytes, allowed: bytes = b"") -> bool:
    """``data`` is JSON whitespace around at most ``allowed``."""
    from gate.ingest._jsonscan import only_space

    text = data.strip(b" \t\r\n")
    return text == allowed or (not allowed and only_space(text))


#: stands for the stimuli array while the top of a document is parsed
_SENTINEL = b"-1.2345678901234567e-300"


def _stream_document(
    handle: Any, path: str, options: IngestOptions, given: list[int]
) -> Iterator[Record | TrialBatch]:
    import numpy as np

    from gate.ingest._jsonscan import CLOSE_ARRAY, CLOSE_OBJECT, OPEN_ARRAY, OPEN_OBJECT, scan
    from gate.schemas import is_valid

    frame = scan(handle, path, keep=3, chars=b"{}[]")
    if frame.deepest > limits.JSON_DEPTH.value() or frame.values > limits.JSON_VALUES.value():
        raise _Fallback  # the strict reader names the limit
    window = _Window(handle, 4 * PIECE_BYTES)
    position, char, depth = frame.position, frame.char, frame.depth
    top = np.flatnonzero(depth == 1)
    if top.size != 2 or char[top[0]] != OPEN_OBJECT or char[top[1]] != CLOSE_OBJECT:
        raise _Fallback  # not one object (or two values one after the other)
    start, end = int(position[top[0]]), int(position[top[1]])
    if not _space(window.get(0, start)) or not _space(window.get(end + 1, frame.end)):
        raise _Fallback
    # The stimuli: the one array at depth 2.
    arrays = np.flatnonzero((depth == 2) & ((char == OPEN_ARRAY) | (char == CLOSE_ARRAY)))
    if arrays.size != 2:
        raise _Fallback
    opened, closed = int(position[arrays[0]]), int(position[arrays[1]])
    # The top without the stimuli's elements: the suite's settings.
    head = window.get(start, opened) + _SENTINEL + window.get(closed + 1, end + 1)
    document = _parse(head)
    if [key for key, value in document.items() if value == -1.2345678901234567e-300] != [
        "stimuli"
    ] or any(key not in (*_SETTINGS, "stimuli") for key in document):
        raise _Fallback
    document["stimuli"] = []
    if not is_valid(document, "results"):
        raise _Fallback
    del document["stimuli"]
    suite = document.get("suite", options.suite or DEFAULT_SUITE)
    yield suite_spec(document, suite, Provenance(path, pointer=""))

    # Each stimulus: an object whose braces are at depth 3, commas between them.
    lo, hi = int(arrays[0]) + 1, int(arrays[1])
    elements = np.arange(lo, hi)
    if elements.size % 2 or np.any(char[elements[0::2]] != OPEN_OBJECT):
        raise _Fallback
    if np.any(char[elements[1::2]] != CLOSE_OBJECT) or np.any(depth[elements] != 3):
        raise _Fallback
    spans = position[elements].reshape(-1, 2).tolist()
    gaps = [opened, *(x for pair in spans for x in pair), closed]
    for i in range(0, len(gaps), 2):
        between = window.get(gaps[i] + 1, gaps[i + 1])
        edge = i == 0 or i == len(gaps) - 2
        if not _space(between, b"" if edge else b","):
            raise _Fallback

    pending: list[tuple[dict[str, Any], list[Any], TrialBatch, int, bool]] = []
    pending_trials = 0

    def checked() -> Iterator[TrialBatch]:
        nonlocal pending, pending_trials
        skeleton = {**document, "stimuli": [{**m, "trials": t} for m, t, *_ in pending]}
        if not is_valid(skeleton, "results"):
            raise _Fallback
        for _, trials, batch, s, last in pending:
            yield batch
            given[:] = [s + 1, 0] if last else [s, batch.first_position + len(trials)]
        pending, pending_trials = [], 0

    for s, (begin, finish) in enumerate(spans):
        for fields, offset, trials, last in _stimulus_pieces(window, begin, finish + 1):
            stimulus_id = fields.get("id")
            tags = fields.get("tags", ())
            if not isinstance(trials, list) or not isinstance(stimulus_id, str):
                raise _Fallback
            batch = TrialBatch(
                trials,
                path,
                pointer=pointer("stimuli", s, "trials"),
                suite=suite,
                stimulus=stimulus_id,
                tags=tuple(tags) if isinstance(tags, list) else (),
                indices=_positions(trials, offset),
                first_position=offset,
            )
            pending.append((fields, trials, batch, s, last))
            pending_trials += len(trials)
            if pending_trials >= _VALIDATE_TRIALS:
                yield from checked()
    if pending:
        yield from checked()


def _positions(trials: list[Any], offset: int) -> Any:
    """The trials' indices as int64 (``trial``, else the position), or :class:`_Fallback`
    when one is not an exact int (maybe orjson's float for an integer past 64 bits)."""
    import numpy as np

    try:
        listed = [t.get("trial", offset + i) for i, t in enumerate(trials)]
    except AttributeError:  # a trial that is not an object: invalid, the strict reader says
        raise _Fallback from None
    if set(map(type, listed)) != {int}:
        raise _Fallback
    try:
        return np.array(listed, dtype=np.int64)
    except OverflowError:
        raise _Fallback from None


def _stimulus_pieces(
    window: _Window, start: int, end: int
) -> Iterator[tuple[dict[str, Any], int, Any, bool]]:
    """(the stimulus's other fields, position of the first trial, trials, whether they are
    the last) of the stimulus object ``window[start:end]``: parsed whole when small, else
    its trials array a piece of at most :data:`PIECE_BYTES` at a time."""
    if end - start <= PIECE_BYTES:
        value = _parse(window.get(start, end))
        if not isinstance(value, dict):
            raise _Fallback
        trials = value.pop("trials", None)
        yield value, 0, trials, True
        return
    from gate.ingest._jsonscan import CLOSE_ARRAY, COMMA, OPEN_ARRAY, OPEN_OBJECT, scan
    from gate.ingest._jsonscan import CLOSE_OBJECT as CLOSE

    frame = scan(_Range(window, start, end), "", keep=2)  # type: ignore[arg-type]
    at, char, depth = frame.position + start, frame.char, frame.depth
    members = [(int(a), int(c)) for a, c, d in zip(at, char, depth, strict=True) if d == 1]
    if len(members) < 2 or members[0] != (start, OPEN_OBJECT) or members[-1] != (end - 1, CLOSE):
        raise _Fallback
    fields = _members(members[1:-1], start, end - 1, window)
    trials_member = [m for m in fields if m[0] == "trials"]
    if len(trials_member) != 1:
        raise _Fallback
    other = _object([m for m in fields if m[0] != "trials"], window)
    _, _, colon, value_end = trials_member[0]
    brackets = [
        int(a)
        for a, c, d in zip(at, char, depth, strict=True)
        if d == 2 and colon < a < value_end and c in (OPEN_ARRAY, CLOSE_ARRAY)
    ]
    if len(brackets) != 2:
        raise _Fallback
    opened, closed = brackets
    if not _space(window.get(colon + 1, opened)) or not _space(window.get(closed + 1, value_end)):
        raise _Fallback
    cuts = [opened, *(int(a) for a, c, d in zip(at, char, depth, strict=True)
                      if d == 2 and c == COMMA and opened < a < closed), closed]  # fmt: skip
    count = len(cuts) - 1  # element i lies between cuts[i] and cuts[i + 1]
    i = 0
    while i < count:
        j = min(count, max(i + 1, bisect_right(cuts, cuts[i] + PIECE_BYTES) - 1))
        yield other, i, _parse(b"[" + window.get(cuts[i] + 1, cuts[j]) + b"]"), j == count
        i = j


def _members(
    entries: list[tuple[int, int]], start: int, end: int, window: _Window
) -> list[tuple[Any, int, int, int]]:
    """(key, member start, colon, member end) of the object whose ``{`` is at ``start`` and
    ``}`` at ``end``; ``entries`` are its own commas and colons, (position, char)."""
    from gate.ingest._jsonscan import COLON, COMMA

    found: list[tuple[Any, int, int, int]] = []
    begin, colon = start + 1, -1
    for position, char in [*entries, (end, COMMA)]:
        if char == COLON:
            if colon >= 0:
                raise _Fallback
            colon = position
        elif char == COMMA:
            if colon < 0:
                if found or position != end or not _space(window.get(begin, position)):
                    raise _Fallback  # a member without a colon (or a stray comma)
                break  # an empty object
            key = _parse(window.get(begin, colon))
            if not isinstance(key, str):
                raise _Fallback
            found.append((key, begin, colon, position))
            begin, colon = position + 1, -1
        else:
            raise _Fallback
    keys = [key for key, *_ in found]
    if len(set(keys)) != len(keys):
        raise _Fallback  # a key given twice: the strict reader says where
    return found


def _object(members: list[tuple[Any, int, int, int]], window: _Window) -> dict[str, Any]:
    """The members as one parsed object."""
    if not members:
        return {}
    pieces = [window.get(begin, end) for _, begin, _, end in members]
    value: dict[str, Any] = _parse(b"{" + b",".join(pieces) + b"}")
    return value


def _read_whole_document(
    path: str, options: IngestOptions, skip: tuple[int, int] = (0, 0)
) -> Iterator[Record | TrialBatch]:
    """A nested document parsed whole (the strict reader's way, orjson when certain); what
    was already given is left out: ``skip`` = (stimuli given whole, trials given of the
    next one)."""
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
    stimuli_given, trials_given = skip
    for s, stimulus in enumerate(document["stimuli"]):
        if s < stimuli_given:
            continue
        first = trials_given if s == stimuli_given else 0
        trials: Sequence[Mapping[str, Any]] = stimulus["trials"][first:]
        yield TrialBatch(
            trials,
            path,
            pointer=pointer("stimuli", s, "trials"),
            suite=suite,
            stimulus=stimulus["id"],
            tags=tuple(stimulus.get("tags", ())),
            first_position=first,
        )
