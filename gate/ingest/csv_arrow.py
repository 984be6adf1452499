"""Big CSV files cut into cells by pyarrow's parser (in C++), then read with the block
reader's own rules, applied once per distinct value of each column. pyarrow is optional
(``pip install 'eval-gate[arrow]'``; not in the action's image): without it, the block
reader reads every CSV file, with the same result.

Python's csv module alone takes about a second per million rows, and the block reader's
per-cell work (stripping, converting, checking) several more. Here pyarrow splits the file into
columns of text; each column is dictionary-encoded (a code per row, and its distinct values),
and :mod:`gate.ingest.tabular`'s helpers (``_texts``, ``_numbers``, ``_optional_texts``,
``_distinct``, ``_metadata_values``) read the distinct values only: a column of a million
verdicts is three readings of ``parse_bool``, not a million. The rows' interplay (a status
that says pass or fail where ``passed`` is blank; a row with no outcome at all) is decided
with numpy over the codes.

It reads a file only when it gives exactly what the block reader gives, and otherwise
declines (None), and the block reader reads the file instead and words any error:

- only files of :data:`MIN_BYTES` to :data:`MAX_BYTES` (smaller ones are read faster than
  pyarrow is imported; bigger ones are read in blocks, in bounded memory);
- the header on the first line, no bare carriage return, no record over the line or cell
  limits; a quoted cell may hold line ends and blank lines are left out, as the csv
  module's reader does (each row's line number, where it starts, is found with numpy);
- every quote part of a well-formed quoted cell (pyarrow and the csv module may read a
  stray quote differently: the csv module's strict mode refuses ``"ab"c``);
- every row as wide as the header, valid UTF-8 (pyarrow checks both);
- every value one that ``_columns`` (``typed=False``) would take as it is.

A test reads random files both ways and checks the same table, or a decline.
"""

from __future__ import annotations

import codecs
import importlib.util
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from gate import limits
from gate.errors import Provenance
from gate.ingest.tabular import (
    _NUMERIC_METADATA,
    _CsvFile,
    _distinct,
    _empty,
    _metadata_values,
    _NotColumnar,
    _numbers,
    _optional_texts,
    _status,
    _tag_tuple,
    _texts,
    _trial_numbers,
)
from gate.ingest.values import parse_bool
from gate.reading import open_input, read_block
from gate.trials import DEFAULT_SUITE, Coded, TrialColumns

if TYPE_CHECKING:
    import numpy as np

#: Below this size the block reader is done before pyarrow (0.2 s) is imported.
MIN_BYTES = 4 << 20
#: Above it the block reader reads the file a block at a time: this reader holds the file,
#: its cells and its columns at once (about 4 times the file).
MAX_BYTES = 256 << 20
#: pyarrow's block: the rows read, checked and added to the table at a time. Each block
#: converts its distinct cells to Python anew (every stimulus name, once a block): at a
#: million rows 16 MiB blocks read in 0.97 s where 4 MiB ones took 1.07 s (17 MB more).
#: The blocks are parsed on every core (``read_csv``; its streaming twin parses one block
#: at a time): pyarrow's part of a million rows, 0.31 s on one core, takes 0.21 s on two
#: (12 MB more peak).
_BLOCK = 16 << 20
#: the lines checked at a time (:func:`_record_lines`)
_GUARD_SLICE = 4 << 20

#: whether pyarrow is installed (``pip install 'eval-gate[arrow]'``); without it the block
#: reader reads every CSV file
_PYARROW = importlib.util.find_spec("pyarrow") is not None


def _utf8(data: bytes, piece: int = 1 << 24) -> bool:
    """Whether ``data`` is UTF-8 text, checked a piece at a time (an ASCII file at once)."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), piece):
            decoder.decode(data[start : start + piece])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def read_columns(source: _CsvFile) -> Iterator[TrialColumns] | None:
    """The file's rows (after its one-line header) as TrialColumns of a block each, or None:
    read it with the block reader instead. Every block is read (and so every reason to
    decline found) before the first is given."""
    if not _PYARROW:
        return None
    data = _whole_file(source.path)
    if data is None or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None  # a bare carriage return, a line end to pyarrow: declined before the parse
    if not _utf8(data):  # pyarrow checks only the columns it converts; the block reader all
        return None
    # pyarrow parses on its own threads, without the GIL, while numpy checks the lines
    # (numpy's loops let go of the GIL too): at a million rows 0.41 s → 0.30 s on two
    # cores. A file the lines decline waits for the parse it did not need (the rare case).
    parsing = _Background(lambda: _parse(data, source))
    lines = _record_lines(data, source.delimiter)
    try:
        table = parsing.result()
        readings = None if table is None or lines is None else _readings(table, lines, source)
    except ImportError:  # a library install without pyarrow: the block reader is as right
        return None
    except _NotColumnar:
        return None
    if readings is None:
        return None
    return _given(readings, source)


class _Background:
    """``work()`` on a thread of its own; :meth:`result` waits for it and gives its result,
    or raises what it raised."""

    def __init__(self, work: Callable[[], Any]) -> None:
        import threading

        self._outcome: tuple[bool, Any] = (False, None)

        def run() -> None:
            try:
                self._outcome = (True, work())
            except BaseException as error:  # given to the caller by result()
                self._outcome = (False, error)

        self._thread = threading.Thread(target=run, name="eval-gate-csv-parse", daemon=True)
        self._thread.start()

    def result(self) -> Any:
        self._thread.join()
        done, value = self._outcome
        if not done:
            raise value
        return value


def _given(readings: list[_Reading], source: _CsvFile) -> Iterator[TrialColumns]:
    """Each block's TrialColumns, letting go of its reading once given."""
    readings.reverse()
    while readings:
        yield readings.pop().columns(source)


def _whole_file(path: str) -> bytes | None:
    with open_input(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if not MIN_BYTES <= size <= MAX_BYTES:
            return None
        data = read_block(handle, MAX_BYTES + 1, Provenance(path))
    return data if len(data) <= MAX_BYTES else None


def _record_lines(data: bytes, delimiter: str) -> np.ndarray | None:
    """The line on which each record after the header starts (blank lines left out, as the
    csv module's reader leaves them out), if the csv module and pyarrow read every record of
    ``data`` alike: the header on the first line, no bare carriage return, no record over
    the line or cell limits, every quote part of a well-formed quoted cell, none left open;
    else None. A quoted cell may hold line ends. Checked a slice of whole lines at a time
    (numpy's arrays are a byte per byte), the quotes counted on from slice to slice."""
    import numpy as np

    carriage_returns = b"\r" in data
    longest = min(limits.LINE_BYTES.value(), limits.CSV_FIELD_CHARS.value())
    # The line each record after the header starts on, blank ones left out, slice by slice.
    starts: list[np.ndarray] = []
    inside = 0  # 1 when the slice starts inside a quoted cell
    lines, start = 0, 0  # the line ends before the slice, and where it starts
    last_end, last_line = -1, -1  # where the last record ended: its line end, and its index
    while start < len(data):
        stop = data.find(b"\n", start + _GUARD_SLICE) + 1 or len(data)
        if stop - (start + _GUARD_SLICE) > longest:
            return None  # a line too long, before a slice of it is scanned
        text = np.frombuffer(data, dtype=np.uint8, count=stop - start, offset=start)
        ends = np.flatnonzero(text == ord("\n"))
        if carriage_returns and not _each_before_line_end(text, ends):
            return None  # a bare carriage return
        if stop == len(data) and not data.endswith(b"\n"):
            ends = np.append(ends, text.size)  # the last line, without its line end
        if ends.size and int(np.diff(ends, prepend=-1).max()) > longest:
            return None  # a line too long: so is its record
        quotes = np.flatnonzero(text == ord('"'))
        after = _quotes_well_formed(text, quotes, inside, ord(delimiter))
        if after is None:
            return None
        # A line end ends a record unless an odd number of quotes comes before it.
        ending = np.flatnonzero((np.searchsorted(quotes, ends) + inside) % 2 == 0)
        if ending.size:
            at = ends[ending]
            lengths = np.diff(at + start, prepend=last_end)  # with the line end
            if int(lengths.max()) > longest:
                return None  # a record too long
            crlf = (lengths == 2) & (text[np.maximum(at - 1, 0)] == ord("\r"))
            kept = ~((lengths == 1) | crlf)  # not a blank line
            first_lines = np.append(last_line, ending[:-1] + lines) + 2
            if last_line < 0:  # the header: one line, not blank
                if ending[0] + lines != 0 or not kept[0]:
                    return None
                kept[0] = False
            starts.append(first_lines[kept].astype(np.int32))
            last_end, last_line = int(at[-1]) + start, int(ending[-1]) + lines
        if after and stop - last_end > longest:
            return None  # a quoted cell open past the limits: its record is too long
        inside, lines, start = after, lines + ends.size, stop
    if inside:
        return None  # a quoted cell left open
    rows = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int32)
    return rows if rows.size else None


def _each_before_line_end(text: np.ndarray, ends: np.ndarray) -> bool:
    """Whether every carriage return in ``text`` (whole lines) comes just before one of its
    line ends ``ends``: as many of them as of the characters before a line end. Checked a
    slice at a time, where counting both in the whole file took 0.1 s."""
    import numpy as np

    before = text[ends[ends > 0] - 1]
    return int(np.count_nonzero(text == ord("\r"))) == int(np.count_nonzero(before == ord("\r")))


def _quotes_well_formed(
    text: np.ndarray, quotes: np.ndarray, inside: int, delimiter: int
) -> int | None:
    """Whether the text ends inside a quoted cell (1) or not (0), given whether it starts
    inside one (``inside``) and the positions of its quotes; None when a quote is not part
    of a well-formed quoted cell: every one opens a quoted cell (at a line's start or after
    the delimiter), closes it (before the delimiter or a line end) or is one of a doubled
    pair inside it, as the csv module's strict mode reads them, left to right. ``text``
    starts at a line's start.

    Outside a quoted cell, a run of adjacent quotes opens one and then pairs up; inside, it
    pairs up: so before a run the reader is inside a cell exactly when the quotes before it
    (and ``inside``) are odd in number, and a run closes a cell exactly when the quotes up
    to its end are even in number."""
    import numpy as np

    if quotes.size == 0:
        return inside
    first = np.flatnonzero(np.diff(quotes, prepend=-2) != 1)  # each run's first quote
    last = np.append(first[1:], quotes.size) - 1
    opening = quotes[first[(first + inside) % 2 == 0]]
    before = text[np.maximum(opening - 1, 0)]
    if not np.all((opening == 0) | (before == delimiter) | (before == ord("\n"))):
        return None
    closing = quotes[last[(last + 1 + inside) % 2 == 0]] + 1
    after = text[np.minimum(closing, text.size - 1)]
    ends_cell = (after == delimiter) | (after == ord("\r")) | (after == ord("\n"))
    if not np.all((closing == text.size) | ends_cell):
        return None
    return (quotes.size + inside) % 2


def _chosen(source: _CsvFile) -> list[str]:
    """The keys (column positions, as text) of the columns read: those mapped, and usage."""
    wanted = {*source.mapping.values(), *_NUMERIC_METADATA} & set(source.header)
    return [str(i) for i, name in enumerate(source.header) if name in wanted]


def _parse(data: bytes, source: _CsvFile) -> Any:
    """pyarrow's table of the chosen columns of ``data`` (after its header line), each cell
    dictionary-encoded; None when pyarrow refuses the text (a row of another width, invalid
    UTF-8)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    keys = [str(i) for i in range(len(source.header))]
    chosen = _chosen(source)
    try:
        return pa_csv.read_csv(
            pa.BufferReader(data),
            memory_pool=_memory_pool(),
            read_options=pa_csv.ReadOptions(
                skip_rows=1, column_names=keys, block_size=_BLOCK, use_threads=True,
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=source.delimiter, quote_char='"', double_quote=True, escape_char=False,
                newlines_in_values=True, ignore_empty_lines=True,
            ),
            convert_options=pa_csv.ConvertOptions(
                # Each cell dictionary-encoded as it is read: each distinct text converted
                # to Python once, without pyarrow.compute (0.06 s to import).
                column_types=dict.fromkeys(chosen, pa.dictionary(pa.int32(), pa.string())),
                include_columns=chosen,
                strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=True,
            ),
        )  # fmt: skip
    except pa.ArrowException:
        return None


def _readings(table: Any, lines: np.ndarray, source: _CsvFile) -> list[_Reading] | None:
    """Each block's reading (:class:`_Reading`) of pyarrow's ``table`` (:func:`_parse`),
    its rows starting on ``lines``; None when pyarrow read another number of rows. Raises
    :class:`_NotColumnar` where ``_columns`` would."""
    import numpy as np
    import pyarrow as pa

    header = source.header
    chosen = _chosen(source)
    readings, row = [], 0
    try:
        for batch in table.to_batches():
            cells = {}
            for key in chosen:
                encoded = batch.column(key)
                values = encoded.dictionary.to_pylist()
                codes = encoded.indices.to_numpy().astype(np.min_scalar_type(len(values)))
                cells[header[int(key)]] = Coded(codes, values)
            if row + batch.num_rows > lines.size:
                return None
            readings.append(_Reading(cells, _numbers_of(lines[row : row + batch.num_rows]), source))
            row += batch.num_rows
    except pa.ArrowException:
        return None
    if row != lines.size or not readings:
        return None
    return readings


def _numbers_of(lines: np.ndarray) -> Sequence[int]:
    """Line numbers as a range where they follow each other (one record a line), so that
    no Python int is made per row."""
    if lines.size and int(lines[-1]) - int(lines[0]) == lines.size - 1:
        return range(int(lines[0]), int(lines[-1]) + 1)
    numbers: list[int] = lines.tolist()
    return numbers


def _memory_pool() -> Any:
    """pyarrow's jemalloc, told to give memory back at once: its default pool keeps what
    it freed (a third of the peak at a million rows), and so does malloc, fragmented."""
    import pyarrow as pa

    try:
        pa.jemalloc_set_decay_ms(0)
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a build without jemalloc
        return pa.system_memory_pool()


class _Reading:
    """One block's rows read as ``_columns`` (``typed=False``) reads them, each distinct cell
    once; raises :class:`_NotColumnar` where it would. :meth:`columns` gives its
    TrialColumns."""

    def __init__(self, cells: dict[str, Coded], lines: Sequence[int], source: _CsvFile):
        import numpy as np

        path, mapping = source.path, source.mapping
        size = self.size = len(lines)
        self.lines = lines

        def column(field: str) -> Coded | None:
            return cells.get(mapping[field]) if field in mapping else None

        stimuli = column("stimulus")
        if stimuli is None:
            raise _NotColumnar
        self.stimulus = stimuli.mapped(lambda v: _texts(v, typed=False))
        if None in self.stimulus.values:
            raise _NotColumnar
        default_suite = source.options.suite or DEFAULT_SUITE
        suites = column("suite")
        self.suite = (
            None
            if suites is None
            else suites.mapped(
                lambda v: [default_suite if t is None else t for t in _texts(v, False)]
            )
        )
        self.default_suite = default_suite
        trials = column("trial")
        self.trial = None if trials is None else trials.mapped(_trial_numbers)
        # Verdicts: 1 passed, 0 failed, -1 not given.
        passed = np.full(size, -1, dtype=np.int8)
        if (given := column("passed")) is not None:
            name = mapping["passed"]
            verdict = _distinct(given.values, lambda v: parse_bool(v, Provenance(path), name))
            passed = given.lookup(_verdict_codes([verdict[v] for v in given.values]), np.int8)
        self.status: Coded | None = None
        status_ok = np.ones(size, dtype=bool)
        if (given := column("status")) is not None:
            found = _distinct(
                given.values,
                lambda v: None if _empty(v) else _status(v, Provenance(path), mapping["status"]),
            )
            each = [found[v] for v in given.values]
            if any(f is not None for f in each):
                self.status = Coded(given.codes, ["ok" if f is None else f[0] for f in each])
                status_ok = self.status.where(lambda status: status == "ok")
            said = [None if f is None else f[1] for f in each]
            says = given.lookup(_verdict_codes(said), np.int8)
            passed = np.where(passed == -1, says, passed)
        self.passed = passed
        undecided = (passed == -1) & status_ok
        self.score = self.outcome = None
        if (given := column("score")) is not None:
            self.score = given.mapped(lambda v: _numbers(v, unit=True))
            undecided &= self.score.where(lambda score: score is None)
        if (given := column("outcome")) is not None:
            self.outcome = given.mapped(_optional_texts)
            undecided &= self.outcome.where(lambda outcome: outcome is None)
        if undecided.any():
            raise _NotColumnar  # "row has no outcome": the row reader says it
        messages, tags = column("message"), column("tags")
        self.message = None if messages is None else messages.mapped(_optional_texts)
        self.tags = None if tags is None else tags.mapped(lambda v: list(map(_tag_tuple, v)))
        self.usage: dict[str, Coded] = {}
        used = set(mapping.values()) | {c.split(".")[0] for c in mapping.values()}
        for field in _NUMERIC_METADATA:
            if (given := column(field)) is not None:
                if mapping.get(field, field) != field and field in cells:
                    raise _NotColumnar  # a blank mapped cell takes this column's: rows do that
                self.usage[field] = given.mapped(lambda v: _numbers(v, unit=False))
            elif field not in used and (plain := cells.get(field)) is not None:
                self.usage[field] = plain.mapped(_metadata_values)

    def columns(self, source: _CsvFile) -> TrialColumns:
        """The block's TrialColumns (trials numbered by ``source.order`` where the file
        gives no trial column), each column coded as read."""
        import numpy as np

        size = self.size
        every = np.zeros(size, dtype=np.uint8)  # a column of one value
        suites = Coded(every, [self.default_suite]) if self.suite is None else self.suite
        if self.trial is None:
            trial: Sequence[int] = source.order.numbers(suites.spread(), self.stimulus.spread())
        else:
            trial = self.trial
        return TrialColumns(
            file=source.path,
            lines=self.lines,
            stimulus=self.stimulus,
            suite=suites,
            trial=trial,
            status=Coded(every, ["ok"]) if self.status is None else self.status,
            passed=Coded(self.passed + 1, [None, False, True]),
            score=Coded(every, [None]) if self.score is None else self.score,
            outcome=self.outcome,
            message=self.message,
            tags=self.tags,
            usage=dict(self.usage),
        )


def _verdict_codes(verdicts: list[bool | None]) -> list[int]:
    """1 for True, 0 for False, -1 for None."""
    return [-1 if v is None else int(v) for v in verdicts]
