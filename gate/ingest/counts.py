"""The counts artifact: one row of totals per stimulus instead of one record per trial.

Any engine that can ``GROUP BY`` can reduce billions of trials to one row per
stimulus (docs/scale.md has DuckDB and Spark SQL), and eval-gate gates on the
rows exactly as on the trials they summarise: every gate reads only a
stimulus's n, c (and score sum). What totals cannot carry is trial order, so
the outcome sequences in the reports are empty for such stimuli and
order-dependent metrics (the reliability decay curve) are unavailable; reading
a counts file says so in the report's warnings.

Form: JSONL, one record per line, validated by ``schemas/counts.schema.json``
(a ``{"type": "suite", ...}`` line declares a suite's settings as in trial
JSONL), or a JSON array of the same records.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gate.errors import InputError, Provenance
from gate.fileio import atomic_write
from gate.ingest import IngestOptions, Record
from gate.ingest._json import jsonl_chunks, load_bytes, load_file, read_bytes
from gate.ingest.native import CHUNK_BYTES, suite_spec
from gate.ingest.values import json_number
from gate.reading import read_head
from gate.schemas import first_invalid, validate
from gate.table import TrialTable
from gate.trials import DEFAULT_SUITE, CountsColumns, StimulusCounts, TrialMessage

#: What the report says once per counts file.
ORDER_WARNING = (
    "{path}: {count} given as counts (totals, not trials): the gates need only "
    "counts, but the trial order is unknown, so their outcome sequences are empty and "
    "order-dependent metrics (reliability decay curve, graceful degradation) are unavailable"
)


def read(path: str, options: IngestOptions) -> Iterator[Record | StimulusCounts | CountsColumns]:
    """Yield the suite declarations and per-stimulus totals of a counts file (blocks of
    plain rows as :class:`~gate.trials.CountsColumns`)."""
    default_suite = options.suite or DEFAULT_SUITE
    rows = 0
    for item in _items(path, default_suite):
        if isinstance(item, CountsColumns):
            rows += len(item)
        elif isinstance(item, StimulusCounts):
            rows += 1
        yield item
    count = f"{rows} stimulus is" if rows == 1 else f"{rows:,} stimuli are"
    warnings.warn(ORDER_WARNING.format(path=path, count=count), UserWarning, stacklevel=2)


def _items(path: str, default_suite: str) -> Iterator[Record | StimulusCounts | CountsColumns]:
    """Every record of a counts file (JSONL or a JSON array), schema-valid, in order."""
    if _is_array(path):
        document: list[Any] = load_bytes(read_bytes(path), Provenance(path))  # starts with [
        if not _exact_integers(document):
            document = load_file(path)
        for where, record in _validated(document, lambda i: Provenance(path, pointer=f"/{i}")):
            yield _item(record, default_suite, where)
        return
    for chunk in jsonl_chunks(path, CHUNK_BYTES, accept=_exact_integers):
        if chunk.records is None:
            for line_number, record in chunk.strict:
                where = Provenance(path, line_number)
                validate(record, "counts", where)
                yield _item(record, default_suite, where)
        elif first_invalid(chunk.records, "counts", 0) is None:
            yield from _valid_block(path, chunk.first_line, chunk.records, default_suite)
        else:
            for where, record in _validated(chunk.records, _lines(path, chunk.first_line)):
                yield _item(record, default_suite, where)


def _item(
    record: Mapping[str, Any], default_suite: str, where: Provenance
) -> Record | StimulusCounts:
    if record.get("type") == "suite":
        return suite_spec(record, record.get("suite", default_suite), where)
    return _counts(record, default_suite, where)


def _valid_block(
    path: str, first_line: int, records: list[Any], default_suite: str
) -> Iterator[Record | StimulusCounts | CountsColumns]:
    """A schema-valid block of lines: each suite declaration at its place, and the rows
    between them as columns where they are plain, else row by row."""
    suites = [i for i, r in enumerate(records) if r.get("type") == "suite"]
    start = 0
    for end in [*suites, len(records)]:
        if end > start:
            run = records[start:end]
            columns = _plain_columns(path, first_line + start, run, default_suite)
            if columns is not None:
                yield columns
            else:
                for i, record in enumerate(run, start=first_line + start):
                    yield _counts(record, default_suite, Provenance(path, i))
        if end < len(records):
            yield _item(records[end], default_suite, Provenance(path, first_line + end))
        start = end + 1


#: What a row may hold and still be read with its block as columns: categories, tags and
#: messages (unless null) make the block go row by row.
_PLAIN_KEYS = frozenset(
    ("type", "schema_version", "suite", "stimulus", "n", "c", "errors", "skipped", "score_sum")
)
_NULL_WHEN_PLAIN = frozenset(("categories", "tags", "messages"))


def _plain_columns(
    path: str, first_line: int, records: list[dict[str, Any]], default_suite: str
) -> CountsColumns | None:
    """Schema-valid rows (whole integers, as ``_exact_integers`` took them) as columns; None
    when a row has more than totals, or a value that ``_counts`` would refuse (it words why)."""
    keys = set().union(*records)
    extra = keys - _PLAIN_KEYS
    if not extra <= _NULL_WHEN_PLAIN or any(r.get(k) is not None for k in extra for r in records):
        return None
    totals = [
        [r.get(key) or 0 for r in records] if key in keys else [0] * len(records)
        for key in ("n", "c", "errors", "skipped")
    ]
    if max(map(max, totals)) > _MAX_COUNT:
        return None
    given = [r.get("score_sum") for r in records] if "score_sum" in keys else [None] * len(records)
    try:
        score_sum = [None if v is None else float(v) for v in given]
    except OverflowError:  # an integer past the float range: _counts words it
        return None
    if not all(map(math.isfinite, filter(None, score_sum))):
        return None
    n, c, errors, skipped = totals
    return CountsColumns(
        file=path,
        first_line=first_line,
        stimulus=[r["stimulus"] for r in records],
        suite=[r.get("suite", default_suite) for r in records],
        n=n,
        c=c,
        errors=errors,
        skipped=skipped,
        score_sum=score_sum,
    )


def _lines(path: str, first_line: int) -> Callable[[int], Provenance]:
    return lambda i: Provenance(path, first_line + i)


def _validated(
    records: list[Any], where: Callable[[int], Provenance]
) -> Iterator[tuple[Provenance, Any]]:
    """Records in order; the first invalid one raises its located error when it is reached."""
    start = 0
    while start < len(records):
        bad = first_invalid(records, "counts", start)
        end = len(records) if bad is None else bad
        for i in range(start, end):
            yield where(i), records[i]
        if bad is None:
            return
        validate(records[bad], "counts", where(bad))
        yield where(bad), records[bad]  # the validators disagreed; jsonschema says valid
        start = bad + 1


def _exact_integers(records: list[Any]) -> bool:
    # orjson reads an integer past 64 bits as a float; only the strict parser keeps the int.
    return all(
        type(r.get(key, 0)) is int or r.get(key) is None
        for r in records
        if isinstance(r, dict)
        for key in ("n", "c", "errors", "skipped")
    )


def _is_array(path: str) -> bool:
    head = read_head(path, 4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


#: the table counts in 64-bit integers.
_MAX_COUNT = 2**63 - 1


def _count(value: Any, field: str, where: Provenance) -> int:
    """A schema-valid count as an int: JSON Schema's ``integer`` also admits ``3.0`` (and
    ``1e308``), which is read as 3 (or refused as too large); None is 0."""
    if value is None:
        return 0
    if not 0 <= value <= _MAX_COUNT:  # the schema has refused negative counts
        raise InputError(f"{field} is too large", where, expected=f"at most {_MAX_COUNT}")
    return int(value)


def _counts(record: Mapping[str, Any], default_suite: str, where: Provenance) -> StimulusCounts:
    n, c, errors, skipped = (
        _count(record.get(field), field, where) for field in ("n", "c", "errors", "skipped")
    )
    if record.get("score_sum") is not None:
        json_number(record["score_sum"], where, "score_sum")
    categories = record.get("categories")
    if categories is not None:
        categories = {
            name: _count(value, f"categories.{name}", where) for name, value in categories.items()
        }
    return StimulusCounts(
        stimulus=record["stimulus"],
        n=n,
        c=c,
        suite=record.get("suite", default_suite),
        errors=errors,
        skipped=skipped,
        score_sum=record.get("score_sum"),
        categories=categories,
        tags=tuple(record.get("tags") or ()),
        messages=tuple(_message(m, where) for m in record.get("messages") or ()),
        provenance=where,
    )


def _message(given: str | Mapping[str, Any], row: Provenance) -> str | TrialMessage:
    """A schema-valid counts message: its text, or a TrialMessage with what it says (its
    trial and line as ints, as :func:`_count` reads them)."""
    if isinstance(given, str):
        return given
    file = given.get("file")
    where = None
    line, trial = (
        None if given.get(key) is None else _count(given[key], f"messages.{key}", row)
        for key in ("line", "trial")
    )
    if file is not None:
        where = Provenance(file, line, given.get("pointer"))
    return TrialMessage(given["text"], given.get("outcome"), trial, where)


def _message_record(message: TrialMessage) -> dict[str, Any]:
    """A counts row's message: the report's fields, those with a value."""
    return {key: value for key, value in message.as_record().items() if value is not None}


def counts_rows(table: TrialTable) -> Iterator[dict[str, Any]]:
    """The counts records of ``table``: suite declarations, then one row per stimulus.

    Gating the rows gives the same verdicts as gating ``table`` (tests/scale);
    only the per-trial order is lost.
    """
    for name in sorted({suite for suite, _ in table.stimuli}):
        spec = table.spec(name)
        if spec.categories is not None or spec.grader_weights or spec.pass_threshold is not None:
            declaration: dict[str, Any] = {"type": "suite", "schema_version": "1.0", "suite": name}
            if spec.categories is not None:
                declaration["categories"] = dict(spec.categories)
            if spec.grader_weights:
                declaration["grader_weights"] = dict(spec.grader_weights)
            if spec.pass_threshold is not None:
                declaration["pass_threshold"] = spec.pass_threshold
            yield declaration
    for (suite, stimulus), record in table.stimuli.items():
        passed = record.c()
        row: dict[str, Any] = {
            "suite": suite,
            "stimulus": stimulus,
            "n": record.n(True),
            "c": passed,
            "errors": record.errors,
            "skipped": record.skipped,
        }
        if record.scored:
            row["score_sum"] = record.score_sum()
        if table.spec(suite).categories is not None and record.ordered:
            names = table.spec(suite).category_names
            by_index = table.category_counts(record, errors_as_failures=False)
            row["categories"] = dict(zip(names, by_index, strict=True))
        if record.tags:
            row["tags"] = sorted(record.tags)
        if record.trial_messages:
            row["messages"] = [_message_record(m) for m in record.trial_messages]
        yield row


def write_counts(table: TrialTable, path: str) -> None:
    """Write ``table`` as a counts JSONL file (atomically)."""
    lines = []
    for row in counts_rows(table):
        score = row.get("score_sum")
        if score is not None and not math.isfinite(score):  # pragma: no cover - never from a table
            raise ValueError(f"score_sum {score} of {row['stimulus']!r} is not finite")
        lines.append(json.dumps(row, ensure_ascii=False, allow_nan=False))
    atomic_write(path, "\n".join(lines) + "\n")
