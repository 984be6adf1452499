"""A JSON document's one large array, read in bounded pieces: no whole-document tree.

Results files of promptfoo, Inspect AI, tau-bench and tau2-bench are single JSON documents
whose size grows with the number of trials: one array (``results.results``, ``samples``,
``simulations``, the root array) holds nearly everything, and the few other members are small.
:class:`JsonStream` reads such a document in blocks and yields the array's elements about
:data:`PIECE_BYTES` at a time, while the other members are parsed whole (each at most
:data:`gate.limits.DOCUMENT_BYTES`) into :attr:`JsonStream.document`, with the array's place
holding :data:`STREAMED`. Memory is one block plus one piece of parsed elements, whatever the
size of the file.

How a piece is cut. A piece must end between two elements of the array. The first cut is found
exactly (:func:`structure`: strings masked out with numpy, brackets counted), and teaches the
bytes that separate two elements and open the next one's first key (``},\\n  {\\n    "id":``
in a pretty-printed file). Later cuts look for the last such separator in the next few
megabytes (one ``bytes.rfind``) and prove it by parsing: ``[`` + the elements + ``]`` parses
only if the cut lies between two elements of the array (a cut inside an element leaves it, or
a string, open). When that proof fails, the cut is found exactly again.

How a piece is parsed. With orjson (several times faster than :mod:`json`) when the result is
certainly what the strict parser would give, as :mod:`gate.ingest._json` decides it; else the
strict parser reads the elements one by one, so that an error names the file, the element's
JSON pointer (down to the field) and its line and column in the file, worded as for a whole
document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import _json
from gate.reading import json_values_exceed, open_input, read_block, too_large

#: bytes read from the file at a time.
BLOCK_BYTES = 4 * 1024 * 1024
#: a buffer that must hold a large value grows by at most this much at a time.
_GROWTH_BYTES = 64 * 1024 * 1024
#: about this many bytes of elements are parsed at a time. Small pieces keep the objects
#: alive at once few: on a 100,000-sample Inspect log, 32 KiB pieces read in 0.5 s what 2 MiB
#: pieces read in 3.7 s (Python's cycle collector traverses what is alive, often).
PIECE_BYTES = 32 * 1024

_SPACE = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(rb"[^\s,\]\}]+")
#: a separator between two elements plus the next one's first key: the cut's signature.
_SIGNATURE = re.compile(rb',[ \t\r\n]*\{[ \t\r\n]*"(?:[^"\\]|\\.)*"[ \t\r\n]*:', re.DOTALL)
_BOM = b"\xef\xbb\xbf"


class Readable(Protocol):
    """What the stream reads from: a binary file, or an archive member being unpacked."""

    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class _Streamed:
    """Marks where the streamed array sits in :attr:`JsonStream.document`."""

    def __repr__(self) -> str:
        return "STREAMED"


STREAMED: Final = _Streamed()


@dataclass(frozen=True, slots=True)
class Piece:
    """Consecutive elements of the streamed array: ``values[i]`` is element ``start + i``."""

    start: int
    values: list[Any]
    pointer: str  # the array's JSON pointer (element i is at f"{pointer}/{i}")


#: structure() looks at this many bytes at a time (its arrays take ~10 bytes per byte).
_SCAN_BYTES = 4 * 1024 * 1024


def structure(data: bytes, start: int, stop: int) -> Iterator[tuple[Any, Any, Any]]:
    """Positions, characters and running depth of the brackets and commas outside strings in
    ``data[start:stop]``, which starts outside a string: numpy arrays, positions absolute,
    depth counted from ``start``, a few megabytes at a time.

    A quote counts unless an odd number of backslashes precedes it; positions inside a string
    cut off at ``stop`` count as inside. Only meaningful for valid JSON: on anything else the
    caller's strict parser has the last word.
    """
    import numpy as np

    inside, depth = 0, 0
    while start < stop:
        end = min(stop, start + _SCAN_BYTES)
        while end < stop and data[end - 1] == 0x5C:  # never split a run of backslashes
            end += 1
        view = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
        quotes = np.flatnonzero(view == 0x22)
        if quotes.size:
            inner = quotes[quotes > 0]
            after_backslash = inner[view[inner - 1] == 0x5C]
            if after_backslash.size:
                backslashes = np.flatnonzero(view == 0x5C)
                runs = backslashes[np.concatenate(([True], np.diff(backslashes) != 1))]
                first = runs[np.searchsorted(runs, after_backslash - 1, side="right") - 1]
                escaped = after_backslash[(after_backslash - first) % 2 == 1]
                quotes = np.setdiff1d(quotes, escaped, assume_unique=True)
        marks = np.flatnonzero(_MARKS[view])
        outside = marks[(np.searchsorted(quotes, marks) + inside) % 2 == 0]
        chars = view[outside]
        steps = np.cumsum(_STEPS[chars], dtype=np.int64) + depth
        yield outside + start, chars, steps
        inside = (inside + quotes.size) % 2
        depth = int(steps[-1]) if steps.size else depth
        start = end


def _tables() -> tuple[Any, Any]:
    import numpy as np

    marks = np.zeros(256, dtype=bool)
    steps = np.zeros(256, dtype=np.int8)
    for char in b"[]{},":
        marks[char] = True
    for char in b"[{":
        steps[char] = 1
    for char in b"]}":
        steps[char] = -1
    return marks, steps


_MARKS: Any = None
_STEPS: Any = None


def _ensure_tables() -> None:
    global _MARKS, _STEPS
    if _MARKS is None:
        _MARKS, _STEPS = _tables()


class _Root:
    """Stands for the document's parent: the root value is stored as the stream's document."""

    def __init__(self, stream: JsonStream) -> None:
        self.stream = stream

    def __setitem__(self, slot: object, value: Any) -> None:
        self.stream.document = value


class JsonStream:
    """One JSON document whose array at one of ``paths`` is read piece by piece.

    ``paths`` are candidate places of the array, as member names from the root (``()`` is the
    root itself): each one the document has as an array is streamed, in document order. Iterate
    :meth:`pieces` once; :attr:`document` then holds every other member (the arrays' places
    hold :data:`STREAMED`), and :attr:`streamed` the paths that were streamed.
    ``source`` names the document in errors and pointers (``run.eval`` plus ``prefix``
    ``summaries.json#`` for an archive member); ``handle`` is read instead of opening it.
    ``non_finite``: NaN, Infinity and -Infinity are read as floats (Inspect AI logs only;
    see :mod:`gate.ingest._json`).
    """

    def __init__(
        self,
        source: str,
        paths: Sequence[tuple[str, ...]],
        *,
        handle: Readable | None = None,
        prefix: str = "",
        non_finite: bool = False,
    ) -> None:
        _ensure_tables()
        self.source = source
        self.prefix = prefix
        self.non_finite = non_finite
        self.paths = [tuple(p) for p in paths]
        self.document: Any = None
        self.streamed: list[tuple[str, ...]] = []
        self._handle = handle
        self._buffer = b""
        self._base = 0  # file offset of _buffer[0]
        self._lines = 0  # newlines before _buffer[0]
        self._column = 0  # bytes between the last of them and _buffer[0]
        self._eof = False
        self._signature: bytes | None = None

    # -- reading ---------------------------------------------------------------------------

    def _where(self, pointer: str = "", line: int | None = None) -> Provenance:
        return Provenance(self.source, line, self.prefix + pointer if self.prefix else pointer)

    def _more(self, at_least: int) -> bool:
        """Make the buffer hold ``at_least`` bytes if the file has them; False at its end.

        A buffer that has to grow (a large value) grows geometrically, so that reading a value
        of n bytes copies O(n) bytes, not O(n²).
        """
        assert self._handle is not None
        size = len(self._buffer)
        if size >= at_least or self._eof:
            return size >= at_least
        target = max(at_least, size + min(max(size, BLOCK_BYTES), _GROWTH_BYTES))
        parts = [self._buffer]
        while size < target:
            block = read_block(self._handle, target - size, self._where())
            if not block:
                self._eof = True
                break
            parts.append(block)
            size += len(block)
        self._buffer = b"".join(parts)
        return size >= at_least

    def _drop(self, position: int, always: bool = False) -> int:
        """Forget the buffer before ``position`` (consumed); returns the new position 0.
        Unless ``always``, only once a block's worth is consumed (each drop copies the rest)."""
        if always or position > BLOCK_BYTES:
            self._lines += self._buffer.count(b"\n", 0, position)
            newline = self._buffer.rfind(b"\n", 0, position)
            self._column = position - newline - 1 if newline >= 0 else self._column + position
            self._base += position
            self._buffer = self._buffer[position:]
            return 0
        return position

    def _line_column(self, position: int) -> tuple[int, int]:
        """1-based line and column of buffer ``position`` in the file."""
        line = self._lines + self._buffer.count(b"\n", 0, position) + 1
        newline = self._buffer.rfind(b"\n", 0, position)
        column = position - newline if newline >= 0 else self._column + position + 1
        return line, column

    def _skip_space(self, position: int) -> int:
        """The position of the next character that is not blank (the buffer's end if none).
        Blanks are dropped as they are read: 200 MiB of them cost one block of memory."""
        while True:
            match = _SPACE.match(self._buffer, position)
            end = match.end() if match else position
            if end < len(self._buffer):
                return end
            position = self._drop(end, always=True)
            if not self._more(position + 1):
                return position

    def _char(self, position: int) -> bytes:
        return self._buffer[position : position + 1]

    def _expect(self, position: int, chars: bytes, what: str, pointer: str) -> bytes:
        char = self._char(position)
        if not char or char not in chars:
            line, column = self._line_column(position)
            found = "the end of the file" if not char else repr(char.decode("latin-1"))
            raise InputError(
                f"not valid JSON: expected {what} (line {line}, column {column})",
                self._where(pointer),
                found=found,
            )
        return char

    # -- the document ----------------------------------------------------------------------

    def pieces(self) -> Iterator[Piece]:
        """The streamed array's elements, piece by piece, in order."""
        own = self._handle is None
        if own:
            self._handle = open_input(self.source)
        try:
            self._more(len(_BOM))
            position = len(_BOM) if self._buffer.startswith(_BOM) else 0
            position = self._skip_space(position)
            position = yield from self._value(position, (), "", self.paths, _Root(self), None)
            position = self._skip_space(position)
            if position < len(self._buffer):
                line, column = self._line_column(position)
                raise InputError(
                    f"unexpected data after the JSON value (line {line}, column {column})",
                    self._where(),
                    expected="one JSON value per file (or use .jsonl for one record per line)",
                )
        finally:
            if own and self._handle is not None:
                self._handle.close()

    def _value(
        self,
        position: int,
        path: tuple[str, ...],
        pointer: str,
        paths: list[tuple[str, ...]],
        holder: Any,
        slot: Any,
    ) -> Generator[Piece, None, int]:
        """Read the value at ``position`` into ``holder[slot]``; returns the position after it.

        Streams it when ``path`` is one of ``paths`` and it is an array, and descends into it
        when it is an object on the way to one of them.
        """
        char = self._char(position)
        if char == b"[" and path in paths and path not in self.streamed:
            self.streamed.append(path)
            holder[slot] = STREAMED
            return (yield from self._array(position + 1, pointer))
        if char == b"{" and any(p[: len(path)] == path and len(p) > len(path) for p in paths):
            members: dict[str, Any] = {}
            holder[slot] = members
            return (yield from self._object(position + 1, path, pointer, paths, members))
        value, end = self._whole(position, pointer)
        holder[slot] = value
        return end

    def _object(
        self,
        position: int,
        path: tuple[str, ...],
        pointer: str,
        paths: list[tuple[str, ...]],
        members: dict[str, Any],
    ) -> Generator[Piece, None, int]:
        position = self._skip_space(position)
        if self._char(position) == b"}":
            return position + 1
        while True:
            self._expect(position, b'"', "a member name in double quotes", pointer)
            name, position = self._name(position, pointer)
            if name in members:
                line, column = self._line_column(position)
                raise InputError(
                    f"duplicate key {name!r} in one object (line {line}, column {column})",
                    self._where(pointer + _json.pointer(name)),
                )
            position = self._skip_space(position)
            self._expect(position, b":", "':' after a member name", pointer)
            position = self._skip_space(position + 1)
            inner = pointer + _json.pointer(name)
            position = yield from self._value(position, (*path, name), inner, paths, members, name)
            position = self._skip_space(position)
            char = self._expect(position, b",}", "',' or '}' after a member", pointer)
            position = self._skip_space(position + 1)
            if char == b"}":
                return position

    def _name(self, position: int, pointer: str) -> tuple[str, int]:
        while True:
            match = _STRING.match(self._buffer, position)
            if match is not None:
                break
            if not self._more(len(self._buffer) + 1):
                line, column = self._line_column(position)
                raise InputError(
                    f"not valid JSON: unterminated string (line {line}, column {column})",
                    self._where(pointer),
                )
            self._check_size(position)
        value, _ = self._whole(position, pointer, match.end())
        if not isinstance(value, str):  # pragma: no cover - a string token parses to a str
            raise InputError("a member name is not a string", self._where(pointer))
        return value, match.end()

    def _check_size(self, position: int) -> None:
        if len(self._buffer) - position > limits.DOCUMENT_BYTES.value():
            raise too_large(self._where(), limits.DOCUMENT_BYTES, None, "one value of the document")

    def _whole(self, position: int, pointer: str, end: int | None = None) -> tuple[Any, int]:
        """Parse the one value at ``position`` whole (strictly, located); returns it and the
        position after it."""
        if end is None:
            end = self._value_end(position, pointer)
        data = self._buffer[position:end]
        line, column = self._line_column(position)
        value = parse_strict(
            data, self.source, self.prefix, pointer, line, column, non_finite=self.non_finite
        )
        return value, end

    def _value_end(self, position: int, pointer: str) -> int:
        """Where the value starting at ``position`` ends (exactly for valid JSON; the strict
        parse of the span says what is wrong with invalid JSON)."""
        char = self._char(position)
        if char == b'"':
            while (match := _STRING.match(self._buffer, position)) is None:
                if not self._more(len(self._buffer) + 1):
                    return len(self._buffer)
                self._check_size(position)
            return match.end()
        if char not in (b"[", b"{"):
            match = _SCALAR.match(self._buffer, position)
            end = match.end() if match else position
            while end == len(self._buffer) and self._more(end + 1):
                self._check_size(position)
                match = _SCALAR.match(self._buffer, position)
                end = match.end() if match else position
            return end
        scanned = position
        depth = 0
        while True:
            stop = len(self._buffer)
            resume, reached = scanned, depth
            for positions, _, steps in structure(self._buffer, scanned, stop):
                steps = steps + depth
                closed = (steps == 0).nonzero()[0]
                if closed.size:
                    return int(positions[closed[0]]) + 1
                # Go on after the last bracket or comma seen outside strings.
                if positions.size:
                    resume, reached = int(positions[-1]) + 1, int(steps[-1])
            scanned, depth = resume, reached
            self._check_size(position)
            if not self._more(len(self._buffer) + 1):
                return len(self._buffer)

    # -- the array -------------------------------------------------------------------------

    def _array(self, position: int, pointer: str) -> Generator[Piece, None, int]:
        position = self._skip_space(position)
        if self._char(position) == b"]":
            return position + 1
        index = 0
        while True:
            position = self._drop(position)
            cut, values, last = self._cut(position, pointer, index)
            error = None
            if values is None:
                values, cut, last, error = self._strict_elements(position, cut, pointer, index)
            if values:
                yield Piece(index, values, self.prefix + pointer)
                index += len(values)
            if error is not None:
                # Raised after the elements before the bad one reach the reader, so that its
                # errors come in document order whatever the size of the pieces.
                raise error
            if last:
                return cut + 1
            position = cut + 1

    def _cut(self, position: int, pointer: str, index: int) -> tuple[int, list[Any] | None, bool]:
        """(where the piece ends, its elements if parsed fast, whether the array ends there):
        the end is the ',' after the piece's last element or the array's closing ']'."""
        want = PIECE_BYTES
        while True:
            self._more(position + want)
            stop = min(len(self._buffer), position + want)
            if self._signature is not None:
                cut = self._buffer.rfind(self._signature, position, stop)
                if cut > position:
                    values = fast_elements(self._buffer[position:cut], self.non_finite)
                    if values is not None:
                        return cut, values, False
            cut = -1
            for positions, chars, depth in structure(self._buffer, position, stop):
                ends = (depth < 0).nonzero()[0]
                seen = int(ends[0]) if ends.size else len(depth)
                commas = ((chars[:seen] == 0x2C) & (depth[:seen] == 0)).nonzero()[0]
                if commas.size:
                    cut = int(positions[commas[-1]])
                if ends.size:
                    end = int(positions[ends[0]])
                    if chars[ends[0]] != 0x5D:  # a '}' closes the array: invalid; say so
                        return end, None, True
                    return end, fast_elements(self._buffer[position:end], self.non_finite), True
            if cut >= 0:
                match = _SIGNATURE.match(self._buffer, cut)
                if match is not None and match.end() <= stop:
                    self._signature = match.group()
                return cut, fast_elements(self._buffer[position:cut], self.non_finite), False
            if self._eof and stop == len(self._buffer):
                return stop, None, True  # the array never ends: the strict parser says where
            if want > limits.DOCUMENT_BYTES.value():
                raise too_large(
                    self._where(f"{pointer}/{index}"),
                    limits.DOCUMENT_BYTES,
                    None,
                    "one element of the array",
                )
            want *= 2

    def _strict_elements(
        self, position: int, cut: int, pointer: str, index: int
    ) -> tuple[list[Any], int, bool, InputError | None]:
        """Parse elements one by one with the strict parser from ``position`` until past
        ``cut``; returns them, the position of the ',' or ']' after the last, whether it
        was ']', and the located error of the first bad element (None: none), which ends
        the elements returned."""
        values: list[Any] = []
        position = self._skip_space(position)
        while True:
            here = f"{pointer}/{index + len(values)}"
            try:
                end = self._value_end(position, here)
                value, end = self._whole(position, here, end)
                values.append(value)
                end = self._skip_space(end)
                char = self._expect(
                    end, b",]", "',' or ']' after an element of the array", pointer
                )
            except InputError as error:
                return values, position, False, error
            if char == b"]":
                return values, end, True, None
            if end >= cut:
                return values, end, False, None
            position = self._skip_space(end + 1)


def fast_elements(data: bytes, non_finite: bool = False) -> list[Any] | None:
    """The elements of ``data`` (the inside of an array), parsed whole as the strict parser
    parses them (:func:`gate.ingest._json.decode_whole`); None when it refuses them, for the
    element by element route to locate and word the error.

    A piece orjson cannot take (a lone surrogate, NaN in an Inspect AI log, a key count in
    doubt) is thus still read in one call. The element by element route would give the same
    values, but it finds each element's end by scanning the rest of the buffer: megabytes per
    element, minutes for a file whose every element has one.
    """
    values = _json.decode_whole(b"".join((b"[", data, b"]")), non_finite=non_finite)
    return None if values is _json.REFUSED else values


def parse_strict(
    data: bytes,
    source: str,
    prefix: str,
    pointer: str,
    line: int,
    column: int,
    *,
    non_finite: bool = False,
) -> Any:
    """One JSON value parsed as :func:`gate.ingest._json.load_bytes` does, with errors placed in
    the whole document: ``pointer`` (the value's place) plus the pointer inside it, and the line
    and column in the file (the value starts at ``line``, ``column``)."""
    where = Provenance(source, None, prefix + pointer if prefix or pointer else None)
    if json_values_exceed(data, limits.JSON_VALUES.value()):
        raise too_large(where, limits.JSON_VALUES, None, "the number of JSON values")
    value = _json.orjson_certain(data)
    if value is not _json.REFUSED:
        return value
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        at_line = line + data.count(b"\n", 0, error.start)
        raise InputError(f"not UTF-8 text ({error.reason}, line {at_line})", where) from None
    return loads_at(text, where, line, column, non_finite=non_finite)


def _place(text: str, offset: int, line: int, column: int) -> str:
    """ "line L, column C" of ``offset`` in ``text``, which starts at ``line``, ``column``."""
    lines = text.count("\n", 0, offset)
    if lines:
        return f"line {line + lines}, column {offset - text.rfind(chr(10), 0, offset)}"
    return f"line {line}, column {column + offset}"


def loads_at(
    text: str, where: Provenance, line: int = 1, column: int = 1, *, non_finite: bool = False
) -> Any:
    """:func:`gate.ingest._json.loads` for a value that starts at ``line``, ``column`` of a
    larger document at ``where.pointer``: errors name the pointer down to the field and the
    line and column in the document."""
    _json.check_shape(text, where)
    start = _json._skip_space(text, 0)
    try:
        value, end = _json.decoder(non_finite).raw_decode(text, start)
    except _json._StrictJSONError as error:
        located = _json._locate_refusal(text, non_finite)
        if located is None:
            raise InputError(str(error), where) from None
        offset, inner = located
        pointer = (where.pointer or "") + inner
        raise InputError(
            f"{error} ({_place(text, offset, line, column)})",
            Provenance(where.file, where.line, pointer or None),
        ) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON: {error.msg} ({_place(text, error.pos, line, column)})", where
        ) from None
    rest = _json._skip_space(text, end)
    if rest != len(text):
        raise InputError(
            f"unexpected data after the JSON value ({_place(text, rest, line, column)})",
            where,
        )
    return value
