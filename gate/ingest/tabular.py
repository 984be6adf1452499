"""Generic CSV and JSONL tables: one trial per row, columns named by ``--map``.

``--map stimulus=case_id,trial=run,passed=ok`` says which source column holds
each trial-table field; a field left out is read from a column literally named
after it (``stimulus``, ``trial``, ``passed``, ...). Columns that map to no
field are kept as trial metadata. In JSONL a column may be a dotted path into
nested objects (``grade.passed``).

A CSV cell is always text, so the CSV reader accepts spellings (``yes``/``no``,
``1``/``0``, ``"0.75"``). JSON has types: the JSONL reader, like every other JSON
reader here, requires them (a JSON boolean for ``passed``, a JSON number for a
score or a numeric metadata field, a JSON integer for a trial index) and refuses
``"passed": "yes"`` or ``"score": "0.9"`` with an error naming file, line or
pointer, field, what was expected and what was found.

The value parsers live in :mod:`gate.ingest.values`, shared with every other adapter.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import math
import re
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest.values import (
    Appearance,
    finite_number,
    json_boolean,
    json_index,
    json_number,
    json_unit_score,
    parse_bool,
    trial_index,
    unit_score,
    warn,
)
from gate.reading import open_input, too_large
from gate.trials import DEFAULT_SUITE, Status, Trial, TrialColumns

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gate.ingest._json import JsonlChunk

_STATUS: dict[str, Status] = {
    "ok": "ok",
    "success": "ok",
    "succeeded": "ok",
    "completed": "ok",
    "done": "ok",
    "error": "error",
    "errored": "error",
    "crash": "error",
    "crashed": "error",
    "skipped": "skipped",
    "skip": "skipped",
}
#: statuses that also say whether the trial passed (a common way to write a verdict).
_STATUS_VERDICT = {"pass": True, "passed": True, "fail": False, "failed": False}

#: trial-table fields a column can be mapped to.
FIELDS = ("stimulus", "trial", "suite", "passed", "score", "status", "outcome", "message", "tags")
#: metadata fields with a known meaning (see docs/format.md); numeric ones are converted.
METADATA_FIELDS = ("duration_s", "cost_usd", "tokens", "model", "commit")
_NUMERIC_METADATA = ("duration_s", "cost_usd", "tokens")


def parse_column_map(text: str) -> dict[str, str]:
    """``FIELD=COLUMN`` pairs separated by commas or newlines, as ``--map`` and the action's
    ``map`` take them: each field one of :data:`FIELDS` or :data:`METADATA_FIELDS`, mapped
    once (``stimulus=case,stimulus=ok`` silently kept the last). Raises ValueError naming
    the pair.

    >>> parse_column_map("stimulus=case_id, passed=ok")
    {'stimulus': 'case_id', 'passed': 'ok'}
    """
    known = (*FIELDS, *METADATA_FIELDS)
    mapping: dict[str, str] = {}
    for part in re.split(r"[,\n]", text):
        if not part.strip():
            continue
        field, sep, column = part.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not field or not column:
            example = "e.g. stimulus=case_id,passed=ok"
            raise ValueError(f"{part.strip()!r} is not FIELD=COLUMN ({example})")
        if field not in known:
            raise ValueError(f"unknown field {field!r}; expected fields among {', '.join(known)}")
        if field in mapping:
            raise ValueError(f"field {field!r} is mapped twice")
        mapping[field] = column
    return mapping


_OUTCOME_FIELDS = ("passed", "score", "status", "outcome")


def _column_map(
    options: IngestOptions, columns: Iterable[str] | None, where: Provenance
) -> dict[str, str]:
    """Field → column, from ``--map`` plus same-named columns; checked against the header."""
    known = (*FIELDS, *METADATA_FIELDS)
    unknown = [f for f in options.column_map if f not in known]
    if unknown:
        raise InputError(
            f"--map names unknown field(s) {', '.join(map(repr, unknown))}",
            where,
            expected="fields among " + ", ".join(known),
        )
    mapping = dict(options.column_map)
    header = list(columns) if columns is not None else None
    if header is None:
        # JSONL records may leave keys out: a field not mapped is looked up by its own name.
        for field in FIELDS:
            mapping.setdefault(field, field)
    else:
        missing = [f"{f}={c}" for f, c in mapping.items() if c not in header]
        if missing:
            raise InputError(
                f"--map names column(s) not in the header: {', '.join(missing)}",
                where,
                expected="columns among " + ", ".join(map(repr, header)),
            )
        for field in FIELDS:
            if field not in mapping and field in header:
                mapping[field] = field
        if "stimulus" not in mapping:
            raise InputError(
                "no stimulus column",
                where,
                expected="a column named 'stimulus', or --map stimulus=COLUMN"
                + _likely_column("stimulus", header, _STIMULUS_LIKE),
                found="columns " + ", ".join(map(repr, header)),
            )
        if not any(field in mapping for field in _OUTCOME_FIELDS):
            raise InputError(
                "no outcome column",
                where,
                expected="a passed, score, status or outcome column (or --map passed=COLUMN"
                + _likely_column("passed", header, _PASSED_LIKE)
                + ")",
                found="columns " + ", ".join(map(repr, header)),
            )
    return mapping


#: column names that usually hold the eval case's id / the verdict, most likely first
_STIMULUS_LIKE = (
    "case_id", "task_id", "sample_id", "problem_id", "instance_id", "example_id",
    "question_id", "test_id", "id", "case", "task", "sample", "problem", "test", "name",
)  # fmt: skip
_PASSED_LIKE = ("ok", "pass", "success", "succeeded", "correct", "is_correct", "solved")


def _likely_column(field: str, header: Iterable[str], likely: tuple[str, ...]) -> str:
    """'; here perhaps --map stimulus=case_id' when a column is named as such columns usually
    are (only a plain name: a suggestion must be safe to paste)."""
    found = _likely_name(header, likely)
    return f"; here perhaps --map {field}={found}" if found is not None else ""


def _likely_name(names: Iterable[str], likely: tuple[str, ...]) -> str | None:
    by_name = {name.lower(): name for name in names if isinstance(name, str)}
    return next((by_name[name] for name in likely if name in by_name), None)


def _likely_path(row: Mapping[str, Any], likely: tuple[str, ...]) -> str | None:
    """A key of ``row`` holding a text or number, or a dotted path one object down
    (``case.id``), named as such a field usually is; None when none is (or the outer key is
    not a plain name, which a suggestion to paste must be)."""

    def ids(fields: Mapping[str, Any]) -> list[str]:
        return [k for k, v in fields.items() if type(v) in (str, int)]  # not bool, not objects

    found = _likely_name(ids(row), likely)
    if found is None:
        for key, value in row.items():
            inner = _likely_name(ids(value), likely) if isinstance(value, Mapping) else None
            if inner is not None and isinstance(key, str) and _PLAIN_NAME.fullmatch(key):
                return f"{key}.{inner}"
    return found


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _lookup(row: Mapping[str, Any], column: str) -> tuple[bool, Any]:
    """(found, value) of a column; in JSON rows a dotted path reaches into objects."""
    if column in row:
        return True, row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _null(value: Any) -> bool:
    return value is None


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _metadata_value(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            return text
        if math.isfinite(number):
            return int(number) if number == int(number) and "." not in text else number
        return text
    return value


def _status(value: Any, where: Provenance, column: str) -> tuple[Status, bool | None]:
    text = str(value).strip().lower()
    if text in _STATUS:
        return _STATUS[text], None
    if text in _STATUS_VERDICT:
        return "ok", _STATUS_VERDICT[text]
    raise InputError(
        f"column {column!r} is not a status",
        where,
        expected="ok/success, error, skipped (or pass/fail)",
        found=repr(value),
    )


def _row_trial(
    row: Mapping[str, Any],
    mapping: Mapping[str, str],
    where: Provenance,
    options: IngestOptions,
    order: Appearance,
    *,
    strict_keys: bool,
    typed: bool = False,
) -> Trial:
    """One trial from a row. ``typed``: the row is JSON, whose values carry their type."""

    def get(field: str) -> Any:
        column = mapping.get(field)
        if column is None:
            return None
        found, value = _lookup(row, column)
        if not found and strict_keys:
            raise InputError(f"no column {column!r} for {field}", where)
        return value

    def hint() -> str | None:
        # A --map typo shows up as a row without a value: say which mapped columns are absent.
        absent = [f"{f}={c}" for f, c in options.column_map.items() if not _lookup(row, c)[0]]
        return "no " + ", ".join(absent) + " in this row" if absent else None

    stimulus = get("stimulus")
    if _empty(stimulus) or isinstance(stimulus, bool | dict | list):
        likely = None if "stimulus" in options.column_map else _likely_path(row, _STIMULUS_LIKE)
        raise InputError(
            f"no stimulus in column {mapping['stimulus']!r}",
            where,
            expected="a non-empty id (name the column with --map stimulus=COLUMN"
            + (f"; here perhaps --map stimulus={likely}" if likely else "")
            + ")",
            found=hint() or repr(stimulus),
        )
    stimulus = str(stimulus).strip()
    suite_value = get("suite")
    suite = str(suite_value).strip() if not _empty(suite_value) else options.suite or DEFAULT_SUITE
    # JSONL looks a field up by its own name when --map leaves it out; then a record
    # without that key simply has no trial index and counts in order of appearance.
    has_trial = "trial" in mapping and (
        strict_keys or "trial" in options.column_map or _lookup(row, mapping["trial"])[0]
    )
    if has_trial:
        raw_trial = get("trial")
        if _empty(raw_trial):
            raise InputError(
                f"empty trial index in column {mapping['trial']!r}",
                where,
                expected="an integer ≥ 0",
            )
        read_index = json_index if typed else trial_index
        index = read_index(raw_trial, where, f"column {mapping['trial']!r}")
    else:
        index = order.next(suite, stimulus)
    status: Status = "ok"
    passed_column = f"column {mapping.get('passed', 'passed')!r}"
    passed = (
        json_boolean(get("passed"), where, passed_column)
        if typed
        else parse_bool(get("passed"), where, mapping.get("passed", "passed"))
    )
    raw_status = get("status")
    if not _empty(raw_status):
        status, verdict = _status(raw_status, where, mapping["status"])
        if passed is None:
            passed = verdict
    raw_score = get("score")
    # In JSON only null is "no value": "" is a string where a number belongs.
    absent = _null if typed else _empty
    read_score = json_unit_score if typed else unit_score
    score = (
        None if absent(raw_score) else read_score(raw_score, where, f"column {mapping['score']!r}")
    )
    outcome = get("outcome")
    outcome = None if _empty(outcome) else str(outcome)
    if status == "ok" and passed is None and score is None and outcome is None:
        raise InputError(
            "row has no outcome",
            where,
            expected="a passed, score, status or outcome value",
            found=hint(),
        )
    message = get("message")
    tags_value = get("tags")
    tags: tuple[str, ...] = ()
    if isinstance(tags_value, list):
        tags = tuple(str(tag) for tag in tags_value)
    elif not _empty(tags_value):
        tags = tuple(t.strip() for t in str(tags_value).replace(";", ",").split(",") if t.strip())
    # A column read through a dotted path ("grade.ok") uses up its whole top-level object.
    used = set(mapping.values()) | {column.split(".")[0] for column in mapping.values()}
    metadata: dict[str, Any] = {}
    for field in METADATA_FIELDS:
        if field in mapping:
            value = get(field)
            if not absent(value):
                read_number = json_number if typed else finite_number
                metadata[field] = (
                    read_number(value, where, f"column {mapping[field]!r}")
                    if field in _NUMERIC_METADATA and not isinstance(value, dict)
                    else value
                )
    for column, value in row.items():
        if column not in used and column is not None and not _empty(value):
            metadata.setdefault(column, _metadata_value(value))
    return Trial(
        stimulus=stimulus,
        trial=index,
        suite=suite,
        status=status,
        passed=passed,
        score=score,
        outcome=outcome,
        tags=tags,
        message=None if _empty(message) else str(message),
        metadata=metadata,
        provenance=where,
    )


def _delimiter(path: str, sample: str) -> str:
    if path.lower().endswith(".tsv"):
        return "\t"
    try:
        return csv.Sniffer().sniff(sample.splitlines()[0] if sample else "", ",;\t|").delimiter
    except (csv.Error, IndexError):
        return ","


def _bounded_lines(
    handle: io.TextIOBase, path: str, delimiter: str, base: int = 0
) -> Iterator[str]:
    """The physical lines of a CSV file, each checked before the csv module splits it (errors
    number them after ``base``).

    A line may be at most :data:`gate.limits.LINE_BYTES` long, and a long line (over 64 KiB)
    may hold at most as many delimiters as a header may have columns: a megabyte of commas
    would otherwise become a list of a million cells before its row could be refused.
    """
    maximum = limits.LINE_BYTES.value()
    columns = limits.CSV_COLUMNS.value()
    number = base
    while line := handle.readline(maximum + 1):
        number += 1
        if len(line) > maximum:
            raise too_large(Provenance(path, number), limits.LINE_BYTES, None, "the line")
        if len(line) > 64 * 1024 and line.count(delimiter) >= columns:
            raise too_large(
                Provenance(path, number), limits.CSV_COLUMNS, None, "the number of cells"
            )
        yield line


def read_csv(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read a CSV/TSV file with a header row; errors name the row's line.

    Blocks of about a megabyte of whole records are read as columns when certain, else row
    by row (:func:`_csv_blocks`); from a block it cannot cut or decode (a stray carriage
    return, invalid UTF-8, a quoted cell open for megabytes), the csv module reads the rest
    of the file, row by row, and words any error."""
    with io.TextIOWrapper(open_input(path), encoding="utf-8-sig", newline="") as handle:
        reader = None
        try:
            sample = handle.read(64 * 1024)
            handle.seek(0)
            delimiter = _delimiter(path, sample)
            lines = _bounded_lines(handle, path, delimiter)
            reader = csv.reader(lines, delimiter=delimiter, strict=True)
            header = next(reader, None)
            if header is None:
                raise InputError("empty file", Provenance(path), expected="a header row")
            if len(header) > limits.CSV_COLUMNS.value():
                raise too_large(Provenance(path, 1), limits.CSV_COLUMNS, len(header), "the header")
            header = [cell.strip() for cell in header]
            duplicates = sorted(column for column, n in Counter(header).items() if n > 1)
            if duplicates:
                raise InputError(
                    f"header names column(s) twice: {', '.join(map(repr, duplicates))}",
                    Provenance(path, 1),
                )
            source = _CsvFile(
                path, header, _column_map(options, header, Provenance(path, 1)), delimiter,
                options, Appearance(),
            )  # fmt: skip
            header_lines = reader.line_num
        except csv.Error as error:
            number = reader.line_num if reader is not None else None
            raise InputError(f"not valid CSV: {error}", Provenance(path, number)) from None
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text ({error.reason})", Provenance(path)) from None
    resume = (0, header_lines + 1)
    if header_lines == 1:
        from gate.ingest.csv_arrow import read_columns

        blocks = read_columns(source)
        if blocks is not None:
            yield from blocks
            return
        resume = yield from _csv_blocks(source)
    yield from _csv_rows(source, *resume)


@dataclass(frozen=True)
class _CsvFile:
    """What every part of one CSV read needs: the file, its header and delimiter, the
    mapping, the options and the numbering of trials in order of appearance."""

    path: str
    header: list[str]
    mapping: Mapping[str, str]
    delimiter: str
    options: IngestOptions
    order: Appearance


def _csv_rows(source: _CsvFile, offset: int, first_line: int) -> Iterator[Record]:
    """Row by row with the csv module, from byte ``offset`` (line ``first_line``) on."""
    path = source.path
    with open_input(path) as raw:
        raw.seek(offset)
        encoding = "utf-8-sig" if offset == 0 else "utf-8"
        with io.TextIOWrapper(raw, encoding=encoding, newline="") as handle:
            # Lines are counted from the file's start (offset 0: the header is read again and
            # skipped), or from the line the columnar path stopped at.
            rows = _rows(
                source, handle, base=0 if offset == 0 else first_line - 1, skip_header=offset == 0
            )
            try:
                yield from rows
            except _NotCsv as error:
                raise InputError(
                    f"not valid CSV: {error.reason}", Provenance(path, error.line)
                ) from None
            except UnicodeDecodeError as error:
                raise InputError(f"not UTF-8 text ({error.reason})", Provenance(path)) from None


class _NotCsv(Exception):
    """The csv module refused the text at a line."""

    def __init__(self, reason: str, line: int | None) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


def _rows(
    source: _CsvFile, handle: io.TextIOBase, *, base: int, skip_header: bool
) -> Iterator[Trial]:
    """The trials of the rows of CSV text, its lines numbered after ``base``; a row of blank
    cells is skipped. The csv module's refusal raises :class:`_NotCsv`."""
    path, header, delimiter = source.path, source.header, source.delimiter
    reader = None
    try:
        reader = csv.reader(
            _bounded_lines(handle, path, delimiter, base), delimiter=delimiter, strict=True
        )
        if skip_header:
            next(reader, None)
        line = base + reader.line_num
        for cells in reader:
            start, line = line + 1, base + reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            where = Provenance(path, start)
            if len(cells) != len(header):
                raise InputError(
                    "row has the wrong number of cells",
                    where,
                    expected=f"{len(header)} (as in the header)",
                    found=str(len(cells)),
                )
            row = dict(zip(header, cells, strict=True))
            yield _row_trial(
                row, source.mapping, where, source.options, source.order, strict_keys=True
            )
    except csv.Error as error:
        raise _NotCsv(str(error), base + reader.line_num if reader is not None else None) from None


class _CsvColumns:
    """The columns of a block of plain CSV lines (cells split at the delimiter)."""

    def __init__(self, header: list[str], cells: list[str]) -> None:
        self._index = {name: i for i, name in enumerate(header)}
        self._width = len(header)
        self._cells = cells

    def __call__(self, column: str) -> list[Any] | None:
        at = self._index.get(column)
        if at is None:
            return None
        return self._cells[at :: self._width]


@functools.cache
def _blank_line(delimiter: str) -> re.Pattern[str]:
    """A line end, then a line of nothing but delimiters and white space (as ``str.strip``
    counts it). Starting at the line end, not at ``(?m)^``, lets the regex engine jump from
    one line end to the next: 0.8 ms a MiB instead of 5.4 (0.25 s of a 54 MB CSV)."""
    return re.compile(rf"\n[\s{re.escape(delimiter)}]*\n")


def _has_blank_line(text: str, delimiter: str) -> bool:
    """Whether a line of ``text`` holds nothing but delimiters and white space."""
    pattern = _blank_line(delimiter)
    first = text[: text.find("\n") + 1]  # the first line has no line end before it
    return pattern.match("\n" + first) is not None or pattern.search(text) is not None


def _plain_cells(
    text: str, delimiter: str, width: int, first_line: int
) -> tuple[list[int], list[str]] | None:
    """(each row's line number, the text's first line being ``first_line``; every cell, row
    after row) of whole CSV records of ``width`` cells each, lines ending in LF or CRLF;
    None for anything else (a row of another width, text the csv module refuses). Text
    without quotes is split at line ends and delimiters; text with quoted cells (which may
    hold delimiters and line ends) by the csv module. Either way blank lines and rows of
    blank cells are left out, as the row reader leaves them out. A row of quoted blank cells
    may be given: the caller's stimulus check refuses it."""
    lines = text.count("\n") + (not text.endswith("\n"))
    numbers = list(range(first_line, first_line + lines))  # one record per line, mostly
    # A row of blank cells (a spreadsheet's export), which the row reader leaves out, is a
    # line of delimiters and spaces: it is left out below, by the split or, in text with
    # quotes, by the csv module's loop. (Looking for width - 1 delimiters in a row found any
    # delimiter at width 2.)
    maybe_blank_row = _has_blank_line(text, delimiter)
    if '"' not in text:
        rows = text.replace("\r\n", "\n").split("\n")
        if rows[-1] == "":
            rows.pop()
        if maybe_blank_row:  # left out here: the csv module took a second per 10^6 of them
            kept = [i for i, row in enumerate(rows) if row.replace(delimiter, "").strip()]
            rows, numbers = [rows[i] for i in kept], [first_line + i for i in kept]
            if not rows:
                return [], []
        if set(map(str.count, rows, itertools.repeat(delimiter))) == {width - 1}:
            return numbers, delimiter.join(rows).split(delimiter)
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
        parsed = list(reader)
        whole = reader.line_num == lines and len(parsed) == lines
        if whole and not maybe_blank_row and set(map(len, parsed)) == {width}:
            return numbers, list(itertools.chain.from_iterable(parsed))
        # Cells over several lines, blank lines or rows, rows of another width: row by row.
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
        parsed, numbers, end = [], [], 0
        for row in reader:
            if any(cell.strip() for cell in row):
                parsed.append(row)
                numbers.append(first_line + end)
            end = reader.line_num
    except csv.Error:
        return None
    if set(map(len, parsed)) != {width}:
        return None
    return numbers, list(itertools.chain.from_iterable(parsed))


#: A quoted cell still open at the end of a block is read with the next blocks, up to this
#: many bytes; past it, the csv module reads the rest of the file. A cell holds at most
#: 131,072 characters (the csv module's limit), 512 KiB of UTF-8: 16 MiB held 60 million
#: lines of an open quote in 6 s and 1.3 GB (the held lines are joined again each block).
_OPEN_QUOTE_BYTES = 2 << 20


def _csv_blocks(source: _CsvFile) -> Generator[TrialColumns | Trial, None, tuple[int, int]]:
    """Blocks of whole records, as columns when plain, else row by row; returns (byte
    offset, line) where the csv module must read the rest of the file (the end of the file
    when every block was read).

    A block ends at a line end outside quotes: one that the csv module cannot read to its
    end (tried only when it holds an odd number of quotes: a quoted cell left open, unless a
    quote inside an unquoted cell made the count odd) is read together with the next. A
    block is read row by row alone only when that gives what reading the whole file would:
    its rows are gathered first, and if the csv module refuses the block (a quote the
    count misjudged), nothing of it is given and the csv module reads the rest of the
    file instead, which words any error."""
    from gate.reading import line_blocks

    path = source.path
    with open_input(path) as handle:
        head = handle.readline(limits.LINE_BYTES.value() + 1)
        if not head.endswith(b"\n"):
            return (0, 2)  # a header line that does not end: let the csv module say
        offset, line = handle.tell(), 2
        held: list[bytes] = []  # a block that ends inside a quoted cell, read with the next
        held_at = (offset, line)
        for first_line, start, block_lines in line_blocks(handle, path, 1 << 20, first_line=2):
            if held:
                (start, first_line), block_lines, held = held_at, held + block_lines, []
            data = b"".join(block_lines)
            if data.count(b'"') % 2 and not _whole_records(data, source.delimiter):
                if len(data) > _OPEN_QUOTE_BYTES:
                    return (start, first_line)
                held, held_at = block_lines, (start, first_line)
                continue
            if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):  # a bare CR
                return (start, first_line)
            if max(map(len, block_lines)) > limits.CSV_FIELD_CHARS.value():
                return (start, first_line)  # a cell may be over the csv module's limit: it says
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return (start, first_line)
            read: list[TrialColumns] | list[Trial] | None = _block_columns(source, text, first_line)
            if read is None:
                read = _block_rows(source, text, first_line)
            if read is None:
                return (start, first_line)
            yield from read
            offset, line = start + len(data), first_line + len(block_lines)
    if held:
        return held_at  # a quoted cell open at the end: the csv module says
    return (offset, line)


def _whole_records(data: bytes, delimiter: str) -> bool:
    """Whether the csv module reads ``data`` (whole lines) to its end: no quoted cell is
    left open at the end. Invalid UTF-8 counts as whole (the caller says what it is)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        for _ in reader:
            pass
    except csv.Error:
        return False
    return True


def _block_columns(source: _CsvFile, text: str, first_line: int) -> list[TrialColumns] | None:
    """A block of whole records as one TrialColumns; None unless it is certain."""
    split = _plain_cells(text, source.delimiter, len(source.header), first_line)
    if split is None:
        return None  # rows of other widths, text the csv module refuses
    numbers, cells = split
    if not numbers:
        return []  # blank lines only
    try:
        columns = _columns(
            _CsvColumns(source.header, cells), len(numbers), numbers, source.path,
            source.mapping, source.options, source.order, typed=False,
        )  # fmt: skip
    except _NotColumnar:
        return None
    return [columns]


def _block_rows(source: _CsvFile, text: str, first_line: int) -> list[Trial] | None:
    """A block of whole records row by row; None (and the numbering as it was) when the csv
    module refuses it: the caller lets it read the rest of the file instead. A bad value
    raises the row reader's error, as reading the whole file would."""
    before = source.order.copy()
    rows = _rows(source, io.StringIO(text, newline=""), base=first_line - 1, skip_header=False)
    try:
        return list(rows)
    except _NotCsv:
        source.order.restore(before)
        return None


def _jsonl_chunks(path: str) -> Iterator[tuple[int, list[Any], JsonlChunk | None]]:
    """(first line, records, the chunk when orjson parsed them) of each chunk: orjson when
    certain, else the strict parser, which words any error. orjson reads an integer past
    64 bits as a float where ``json`` keeps the int: whoever reads such a value as text
    reads the chunk's lines again strictly (:func:`_strictly`)."""
    from gate.ingest._json import jsonl_chunks

    for chunk in jsonl_chunks(path, 1 << 20):
        if chunk.records is not None:
            yield chunk.first_line, chunk.records, chunk
            continue
        records: list[Any] = []
        first = 0
        for line, record in chunk.strict:
            if records and (line != first + len(records) or len(records) >= 8192):
                yield first, records, None  # after a blank line, or enough
                records = []
            if not records:
                first = line
            records.append(record)
        if records:
            yield first, records, None


def _strictly(path: str, first_line: int, chunk: JsonlChunk | None, records: list[Any]) -> Any:
    """The records of a chunk as the strict parser reads them."""
    from gate.ingest._json import strict_lines

    if chunk is None:
        return records
    return [record for _, record in strict_lines(path, first_line, chunk.lines)]


def _big_float(values: list[Any], kinds: set[type]) -> bool:
    """A float that may be orjson's reading of an integer past 64 bits (``kinds``: the
    values' types)."""
    return float in kinds and any(type(v) is float and abs(v) >= 2.0**63 for v in values)


def read_jsonl(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read JSONL with one trial object per line; columns are keys or dotted paths.

    A chunk of records is read as columns when certain, else one record at a time."""
    mapping = _column_map(options, None, Provenance(path))
    unseen = set(options.column_map.values())
    order = Appearance()
    for first_line, records, chunk in _jsonl_chunks(path):
        if set(map(type, records)) <= {dict}:
            get = _JsonColumns(records)
            try:
                columns = _columns(
                    get,
                    len(records),
                    range(first_line, first_line + len(records)),
                    path,
                    mapping,
                    options,
                    order,
                    typed=True,
                )
            except _NotColumnar:
                pass
            else:
                unseen = {c for c in unseen if get(c) is None}
                yield columns
                continue
        for offset, record in enumerate(_strictly(path, first_line, chunk, records)):
            where = Provenance(path, first_line + offset)
            if not isinstance(record, dict):
                raise InputError("line is not a JSON object", where, found=type(record).__name__)
            if unseen:
                unseen = {column for column in unseen if not _lookup(record, column)[0]}
            yield _row_trial(record, mapping, where, options, order, strict_keys=False, typed=True)
    if unseen:
        # A typo in --map would otherwise read as "no value" on every line.
        raise InputError(
            f"--map names column(s) that no record has: {', '.join(sorted(unseen))}",
            Provenance(path),
        )
    if numbered := order.given:
        warn(
            path,
            f"{numbered} record(s) have no trial index (no {mapping['trial']!r} key): each "
            "stimulus's trials are numbered in order of appearance, so a trial given twice "
            "counts twice",
        )


class _JsonColumns:
    """A column of JSON records: the value of a key or dotted path in each (``_MISSING``
    where a record has none), None when no record has it (as a CSV file's column that its
    header lacks). Each column is looked up once."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self._records = records
        self._cache: dict[str, list[Any] | None] = {}
        # Every top-level key of the block, gathered in C: a key no record has is answered
        # without a pass over the records.
        self._keys: set[str] = set().union(*records)

    def __call__(self, column: str) -> list[Any] | None:
        if column not in self._cache:
            records = self._records
            found: list[Any] | None
            dotted = "." in column
            if dotted and column in self._keys:  # a key of that name first, as _lookup
                found = _path_values(records, column, literal=True)
            elif column in self._keys:
                try:  # a key every record has (the usual case): in C
                    found = list(map(itemgetter(column), records))
                except KeyError:
                    found = _get_each(records, column)
            elif dotted and column.split(".")[0] in self._keys:
                found = _path_values(records, column, literal=False)
                if _all_missing(found):
                    found = None
            else:
                found = None
            self._cache[column] = found
        return self._cache[column]


def _path_values(records: list[dict[str, Any]], column: str, literal: bool) -> list[Any]:
    """:func:`_value_at` of each record (a key named ``column`` first, when some record has
    one; then the dotted path through JSON objects)."""
    if literal:
        return [_value_at(r, column) for r in records]
    found: list[Any] = records
    for part in column.split("."):
        if set(map(type, found)) == {dict}:  # every value an object: looked up in C
            found = _get_each(found, part)
        else:
            found = [v.get(part, _MISSING) if type(v) is dict else _MISSING for v in found]
    return found


def _get_each(objects: list[dict[str, Any]], key: str) -> list[Any]:
    """Each object's value at ``key`` (``_MISSING`` where it has none), looked up in C."""
    return list(map(dict.get, objects, itertools.repeat(key), itertools.repeat(_MISSING)))


def _all_missing(values: list[Any]) -> bool:
    return values.count(_MISSING) == len(values)


def _absent_as_none(values: list[Any], kinds: set[type]) -> list[Any]:
    """The values (of these types) with None where a JSON row has none (``_MISSING``)."""
    if _ABSENT not in kinds:
        return values
    if kinds.isdisjoint((dict, list)):  # hashable: replaced in C
        return list(map({_MISSING: None}.get, values, values))
    return [None if v is _MISSING else v for v in values]


def _value_at(row: Mapping[str, Any], column: str) -> Any:
    found, value = _lookup(row, column)
    return value if found else _MISSING


# -- the columnar path ---------------------------------------------------------------------
#
# A block of rows is converted column by column (a vocabulary per column of verdicts and
# statuses, one conversion per column of numbers), into one TrialColumns for the table. It
# takes a row exactly as _row_trial does, or not at all: whatever it is not certain of (a
# value _row_trial would refuse, a spelling it would read some other way) raises
# _NotColumnar, and the rows are read one by one instead, which words the error.


class _NotColumnar(Exception):
    """The rows are read one by one (_row_trial) instead."""


_MISSING = object()
#: the type of _MISSING, which no JSON value has
_ABSENT = object
_NONE = type(None)
#: digits of an integer that a float holds exactly (2**53 has 16)
_EXACT_DIGITS = 15


def _texts(values: list[Any], typed: bool, kinds: set[type] | None = None) -> list[str | None]:
    """Values (of these types) that must be text or nothing, stripped: None for an empty one."""
    if kinds is None:
        kinds = set(map(type, values))
    if typed and (not kinds <= {str, _NONE, int, float} or _big_float(values, kinds)):
        raise _NotColumnar
    if kinds == {str}:  # CSV cells, JSON strings: stripped in C
        stripped: list[str | None] = list(map(str.strip, values))
        return [text or None for text in stripped] if "" in stripped else stripped
    if kinds == {type(None)}:  # a column no JSON row has
        return list(values)
    return [None if _empty(v) else str(v).strip() for v in values]


def _optional_texts(values: list[Any], kinds: set[type] | None = None) -> list[str | None]:
    """str() of each value (of these types), None where it is missing or empty (a message,
    an outcome)."""
    if kinds is None:
        kinds = set(map(type, values))
    if kinds <= {str, _NONE, _ABSENT}:
        nothing = {v for v in set(values) if type(v) is not str or not v.strip()}
        if not nothing:
            return list(values)
        return list(map(dict.fromkeys(nothing).get, values, values))  # None for those, in C
    return [None if v is _MISSING or _empty(v) else str(v) for v in values]


def _distinct(values: list[Any], read: Any) -> dict[Any, Any]:
    """``read`` of each distinct value; any error: not columnar."""
    try:
        return {value: read(value) for value in set(values)}
    except (InputError, TypeError):
        raise _NotColumnar from None


def _vocabulary(values: list[Any], read: Any) -> list[Any]:
    """``read`` of each value, computed once per distinct value; any error: not columnar."""
    return list(map(_distinct(values, read).__getitem__, values))


def _numbers(values: list[Any], unit: bool) -> list[float | None]:
    """:func:`_text_floats` as a list, None where a cell is blank."""
    import numpy as np

    array = _text_floats(values, unit)
    floats: list[float | None] = array.tolist()
    return [None if f != f else f for f in floats] if np.isnan(array).any() else floats


def _text_floats(values: list[Any], unit: bool) -> npt.NDArray[np.float64]:
    """Numbers of text cells as finite_number/unit_score take them, NaN where a cell is
    blank (no cell reads as NaN: that is not finite): converted in C. (JSON numbers:
    :func:`_json_floats`.)"""
    import numpy as np

    if set(map(type, values)) != {str}:
        raise _NotColumnar  # not CSV text: one by one
    stripped = list(map(str.strip, values))
    blank = "" in stripped
    given = list(filter(None, stripped)) if blank else stripped
    try:
        floats = np.fromiter(map(float, given), dtype=np.float64, count=len(given))
    except (OverflowError, ValueError):  # past the float range; text that is not a number
        raise _NotColumnar from None
    with np.errstate(invalid="ignore"):
        inside = (floats >= 0.0) & (floats <= 1.0) if unit else np.isfinite(floats)
    if not inside.all():
        raise _NotColumnar
    if not blank:
        return floats
    array = np.full(len(values), math.nan)
    array[np.fromiter(map(len, stripped), dtype=np.int64, count=len(stripped)) > 0] = floats
    return array


def _json_floats(values: list[Any], kinds: set[type], unit: bool) -> npt.NDArray[np.float64]:
    """JSON numbers (of these types) as json_number/json_unit_score take them, NaN where a
    row has none (JSON has no NaN of its own); anything else: not columnar."""
    import numpy as np

    if not kinds <= {int, float, _NONE}:
        raise _NotColumnar
    try:
        array = np.array(values, dtype=np.float64)  # None: NaN
    except OverflowError:  # an integer past the float range
        raise _NotColumnar from None
    with np.errstate(invalid="ignore"):
        good = (array >= 0.0) & (array <= 1.0) if unit else np.isfinite(array)
    if _NONE in kinds:
        good |= np.isnan(array)
    if not good.all():
        raise _NotColumnar
    return array


def _either(value: Any, otherwise: Any) -> Any:
    """``value``, or ``otherwise`` where a number column's value is none."""
    return otherwise if _no_number(value) else value


def _no_number(value: float | None) -> bool:
    """Whether a number column's value is none (None, or a JSON column's NaN)."""
    return value is None or value != value


def _trial_numbers(cells: list[str]) -> list[int]:
    """Trial indices of CSV cells: digits in every one, or not columnar."""
    stripped = list(map(str.strip, cells))
    digits = "".join(stripped)
    if "" in stripped or not (digits.isdigit() and digits.isascii()):
        raise _NotColumnar
    if max(map(len, stripped)) > _EXACT_DIGITS:
        raise _NotColumnar  # trial_index reads it through a float: one by one
    return list(map(int, stripped))


def _tag_tuple(value: Any) -> tuple[str, ...]:
    """A row's tags: a JSON list's items, or text split at commas and semicolons."""
    if isinstance(value, list):
        return tuple(str(tag) for tag in value)
    if value is _MISSING or _empty(value):
        return ()
    text = str(value).replace(";", ",")
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _metadata_values(values: list[Any]) -> list[Any]:
    """:func:`_metadata_value` of each value (None where empty or missing): at once when all
    the text is numbers (the table reads only whether and which number it is)."""
    try:
        return _numbers(values, unit=False)  # text only: numbers, or not columnar
    except _NotColumnar:
        return [None if v is _MISSING or _empty(v) else _metadata_value(v) for v in values]


def _columns(
    get: Any,
    size: int,
    lines: Sequence[int],
    path: str,
    mapping: Mapping[str, str],
    options: IngestOptions,
    order: Appearance,
    *,
    typed: bool,
) -> TrialColumns:
    """Rows as columns; ``get(column)`` gives a column's values (``_MISSING`` where a JSON row
    lacks the key), None when no row has the column. Raises :class:`_NotColumnar` rather
    than decide differently."""

    def raw(field: str) -> list[Any] | None:
        return get(mapping[field]) if field in mapping else None

    def column(field: str) -> tuple[list[Any], set[type]] | None:
        # A field's values, None where a row has none, and their types (read once: each
        # check below is a test of these, not another pass over the values).
        values = raw(field)
        if values is None:
            return None
        if not typed:
            return values, {str}  # CSV cells
        kinds = set(map(type, values))
        if _ABSENT in kinds:
            values = _absent_as_none(values, kinds)
            kinds = (kinds - {_ABSENT}) | {_NONE}
        return values, kinds

    stimuli = column("stimulus")
    if stimuli is None:
        raise _NotColumnar
    names = _texts(stimuli[0], typed, stimuli[1])
    if not all(names):  # a row without one: one by one says so
        raise _NotColumnar
    default_suite = options.suite or DEFAULT_SUITE
    suite_values = column("suite")
    if suite_values is None:
        suites = [default_suite] * size
    else:
        given = _texts(suite_values[0], typed, suite_values[1])
        suites = [default_suite if t is None else t for t in given]
    # The trial index: given in every row, or in none (numbered in order of appearance).
    trial_values = raw("trial")
    given_index = trial_values is not None
    if trial_values is None:
        if typed and "trial" in options.column_map:
            raise _NotColumnar  # --map names it: one by one says each row lacks it
    elif typed:
        if set(map(type, trial_values)) != {int} or min(trial_values) < 0:
            raise _NotColumnar  # a row without one (_MISSING), or not an index
        indices: list[int] = trial_values
    else:
        indices = _trial_numbers(trial_values)
    passed_values = column("passed")
    passed_kinds = {_NONE}
    if passed_values is None:
        passed: list[bool | None] = [None] * size
    elif typed:
        passed, passed_kinds = passed_values
        if not passed_kinds <= {bool, _NONE}:
            raise _NotColumnar
    else:
        column_name = mapping["passed"]
        passed = _vocabulary(
            passed_values[0], lambda v: parse_bool(v, Provenance(path), column_name)
        )
        passed_kinds = set(map(type, passed))
    statuses: list[Status] = ["ok"] * size
    status_values = column("status")
    if status_values is not None:
        raw_status, status_kinds = status_values
        if typed and not status_kinds <= {str, _NONE}:
            raise _NotColumnar
        read = _distinct(
            raw_status,
            lambda v: None if _empty(v) else _status(v, Provenance(path), mapping["status"]),
        )
        if any(found is not None for found in read.values()):
            named: dict[Any, Status] = {
                value: "ok" if found is None else found[0] for value, found in read.items()
            }
            statuses = list(map(named.__getitem__, raw_status))
        verdicts = {
            value: found[1] for value, found in read.items() if found and found[1] is not None
        }
        if verdicts and _NONE in passed_kinds:  # a status says pass/fail where passed does not
            passed = [
                verdicts.get(v) if p is None else p for p, v in zip(passed, raw_status, strict=True)
            ]
            passed_kinds = set(map(type, passed))
    score_values = column("score")
    scores: Sequence[float | None] | npt.NDArray[np.float64] = [None] * size
    if score_values is not None:
        scores = (
            _json_floats(*score_values, unit=True)
            if typed
            else _text_floats(score_values[0], unit=True)
        )
    texts = {name: column(name) for name in ("outcome", "message", "tags")}
    for values in texts.values():
        if typed and values is not None and _big_float(*values):
            raise _NotColumnar  # text of a number that may be orjson's float: one by one
    outcomes = None if texts["outcome"] is None else _optional_texts(*texts["outcome"])
    if _NONE in passed_kinds:
        for i in [i for i, p in enumerate(passed) if p is None]:
            undecided = statuses[i] == "ok" and _no_number(scores[i])
            if undecided and (outcomes is None or outcomes[i] is None):
                raise _NotColumnar  # "row has no outcome": one by one says it
    messages = None if texts["message"] is None else _optional_texts(*texts["message"])
    tags = None if texts["tags"] is None else list(map(_tag_tuple, texts["tags"][0]))
    usage: dict[str, Sequence[Any] | npt.NDArray[np.float64]] = {}
    used = set(mapping.values()) | {c.split(".")[0] for c in mapping.values()}
    for field in _NUMERIC_METADATA:
        values = column(field)
        # A column of the field's own name that no field uses is metadata, kept as
        # _row_trial keeps it (numeric text becomes a number) where --map's gives nothing.
        plain = None if field in used else get(field)
        found: Sequence[Any] | npt.NDArray[np.float64]
        if values is None:
            if plain is None:
                continue
            found = _metadata_values(plain)
        elif not typed:  # CSV cells: finite_number's numbers, or not columnar
            found = _text_floats(values[0], unit=False)
        elif dict in values[1]:  # {input, output, total} tokens among them: the table reads
            numeric = [v for v in values[0] if type(v) is not dict]
            _json_floats(numeric, values[1] - {dict}, unit=False)  # or not columnar
            found = values[0]
        else:
            found = _json_floats(*values, unit=False)
        if values is not None and plain is not None:
            given = found if isinstance(found, list) else found.tolist()
            found = list(map(_either, given, _metadata_values(plain)))
        usage[field] = found
    if not given_index:
        indices = order.numbers(suites, names)  # type: ignore[arg-type]
    return TrialColumns(
        file=path,
        lines=lines,
        stimulus=names,  # type: ignore[arg-type]
        suite=suites,
        trial=indices,
        status=statuses,
        passed=passed,
        score=scores,
        outcome=outcomes,
        message=messages,
        tags=tags,
        usage=usage,
    )
