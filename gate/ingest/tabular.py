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
import io
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import iter_jsonl
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
from gate.trials import DEFAULT_SUITE, Status, Trial

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
                expected="a column named 'stimulus', or --map stimulus=COLUMN",
                found="columns " + ", ".join(map(repr, header)),
            )
        if not any(field in mapping for field in _OUTCOME_FIELDS):
            raise InputError(
                "no outcome column",
                where,
                expected="a passed, score, status or outcome column (or --map passed=COLUMN)",
                found="columns " + ", ".join(map(repr, header)),
            )
    return mapping


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
        raise InputError(
            f"no stimulus in column {mapping['stimulus']!r}",
            where,
            expected="a non-empty id (name the column with --map stimulus=COLUMN)",
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


def _bounded_lines(handle: io.TextIOBase, path: str, delimiter: str) -> Iterator[str]:
    """The physical lines of a CSV file, each checked before the csv module splits it.

    A line may be at most :data:`gate.limits.LINE_BYTES` long, and a long line (over 64 KiB)
    may hold at most as many delimiters as a header may have columns: a megabyte of commas
    would otherwise become a list of a million cells before its row could be refused.
    """
    maximum = limits.LINE_BYTES.value()
    columns = limits.CSV_COLUMNS.value()
    number = 0
    while line := handle.readline(maximum + 1):
        number += 1
        if len(line) > maximum:
            raise too_large(Provenance(path, number), limits.LINE_BYTES, None, "the line")
        if len(line) > 64 * 1024 and line.count(delimiter) >= columns:
            raise too_large(
                Provenance(path, number), limits.CSV_COLUMNS, None, "the number of cells"
            )
        yield line


def read_csv(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read a CSV/TSV file with a header row; errors name the row's line."""
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
            mapping = _column_map(options, header, Provenance(path, 1))
            order = Appearance()
            line = reader.line_num
            for cells in reader:
                start, line = line + 1, reader.line_num
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
                yield _row_trial(row, mapping, where, options, order, strict_keys=True)
        except csv.Error as error:
            number = reader.line_num if reader is not None else None
            raise InputError(f"not valid CSV: {error}", Provenance(path, number)) from None
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text ({error.reason})", Provenance(path)) from None


def read_jsonl(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read JSONL with one trial object per line; columns are keys or dotted paths."""
    mapping = _column_map(options, None, Provenance(path))
    unseen = set(options.column_map.values())
    order = Appearance()
    for line, record in iter_jsonl(path):
        where = Provenance(path, line)
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
    numbered = sum(order._seen.values())
    if numbered:
        warn(
            path,
            f"{numbered} record(s) have no trial index (no {mapping['trial']!r} key): each "
            "stimulus's trials are numbered in order of appearance, so a trial given twice "
            "counts twice",
        )
