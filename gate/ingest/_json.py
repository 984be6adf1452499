"""Strict JSON reading shared by every JSON-based format.

Python's ``json`` accepts ``NaN``, ``Infinity`` and duplicate keys (the last one
silently wins); a results file with any of those is ambiguous, so we refuse it
and say where. One exception, asked for by the caller (``non_finite=True``): Inspect AI
writes a score it could not give as the constant ``NaN`` on purpose (its unscored
marker; other non-finite floats as ``Infinity``/``-Infinity``), so its logs are read with
those three constants allowed. Duplicate keys, numbers too large for a float and the
bounds stay as strict for them.

Large files are parsed with orjson (2.6 times faster than ``json`` on the
benchmark's records) when the result is certainly what the strict parser would
give: orjson already rejects ``NaN`` and ``Infinity``, and :func:`_keys_unique` proves no key was
given twice. Whenever there is any doubt the strict stdlib parser reads the
text again, so errors are always located and worded the same way.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Final

from gate import limits
from gate.errors import InputError, Provenance
from gate.reading import (
    count_byte,
    json_depth_exceeds,
    json_values_exceed,
    open_input,
    read_whole,
    split_lines,
    text_blocks,
    too_large,
)

try:
    import orjson
except ImportError:  # pragma: no cover - without orjson the strict parser reads everything
    orjson = None  # type: ignore[assignment]


class _StrictJSONError(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _StrictJSONError(f"{name} is not valid JSON (use null or a finite number)")


#: the constants Python's json (and Inspect's writer) spell non-finite floats with.
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _StrictJSONError(f"duplicate key {key!r} in one object")
        result[key] = value
    return result


def _bounded_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > limits.INTEGER_DIGITS.value():
        raise _StrictJSONError(
            f"an integer of {digits} digits is too long ({limits.INTEGER_DIGITS.advice()})"
        )
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _StrictJSONError(f"the number {text} is too large (use a finite number)")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicate_keys,
    parse_constant=_reject_constant,
    parse_float=_finite_float,
    parse_int=_bounded_int,
)
#: the same, but NaN, Infinity and -Infinity are the floats they name (Inspect AI logs only).
_NON_FINITE_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicate_keys,
    parse_constant=_NON_FINITE.__getitem__,
    parse_float=_finite_float,
    parse_int=_bounded_int,
)


def decoder(non_finite: bool) -> json.JSONDecoder:
    """The strict decoder, or with ``non_finite`` the one that reads NaN/Infinity constants."""
    return _NON_FINITE_DECODER if non_finite else _DECODER


_SPACE = re.compile(r"[ \t\r\n\ufeff]*")

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
    r"|[{}\[\]:,]"
)


def _locate_refusal(text: str, non_finite: bool = False) -> tuple[int, str] | None:
    """Offset and JSON pointer of the first NaN/Infinity (unless ``non_finite`` allows them),
    overflowing number or repeated key.

    The decoder's hooks are not told where they are; this walk over the tokens of
    an otherwise well-formed text finds the place again (only ever run on a refusal).
    """
    frames: list[list[Any]] = []  # ["{", keys seen, current key, awaiting a key] | ["[", index]

    def here(last: str | None = None) -> str:
        parts = [f[2] if f[0] == "{" else f[1] for f in frames]
        if last is not None:
            parts[-1] = last
        return pointer(*[p for p in parts if p is not None])

    for match in _TOKEN.finditer(text):
        token = match.group()
        top = frames[-1] if frames else None
        if token in "{[":
            frames.append(["{", set(), None, True] if token == "{" else ["[", 0])
        elif token in "}]":
            if frames:
                frames.pop()
        elif token == ",":
            if top is not None and top[0] == "{":
                top[3] = True
            elif top is not None:
                top[1] += 1
        elif token == ":":
            if top is not None and top[0] == "{":
                top[3] = False
        elif token.startswith('"'):
            if top is not None and top[0] == "{" and top[3]:
                key = json.loads(token)
                top[2] = key
                if key in top[1]:
                    return match.start(), here(key)
                top[1].add(key)
        elif token.lstrip("-") in ("Infinity", "NaN"):
            if not non_finite:
                return match.start(), here()
        elif not math.isfinite(float(token)):
            return match.start(), here()
    return None


def _refusal(
    error: _StrictJSONError, text: str, where: Provenance, non_finite: bool = False
) -> InputError:
    located = _locate_refusal(text, non_finite)
    if located is None:
        return InputError(str(error), where)
    offset, at = located
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    place = f"column {column}" if where.line is not None else f"line {line}, column {column}"
    return InputError(f"{error} ({place})", replace(where, pointer=where.pointer or at or None))


def check_shape(data: bytes | str, where: Provenance) -> None:
    """Refuse a text nested deeper or holding more values than the limits, in linear time,
    before a (recursive, memory-hungry) parser sees it."""
    depth = limits.JSON_DEPTH.value()
    if json_depth_exceeds(data, depth):
        raise InputError(
            f"arrays and objects nest more than {depth} levels deep",
            where,
            expected=limits.JSON_DEPTH.advice(),
        )
    if json_values_exceed(data, limits.JSON_VALUES.value()):
        raise too_large(where, limits.JSON_VALUES, None, "the number of JSON values")


def loads(text: str, where: Provenance, *, non_finite: bool = False) -> Any:
    """Parse one JSON text; errors name ``where`` plus line/column inside the text.
    ``non_finite``: NaN, Infinity and -Infinity are read as floats (Inspect AI logs)."""
    check_shape(text, where)
    try:
        value, end = decoder(non_finite).raw_decode(text, _skip_space(text, 0))
    except _StrictJSONError as error:
        raise _refusal(error, text, where, non_finite) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})", where
        ) from None
    rest = _skip_space(text, end)
    if rest != len(text):
        raise InputError(
            f"unexpected data after the JSON value (character {rest})",
            where,
            expected="one JSON value per file (or use .jsonl for one record per line)",
        )
    return value


def _skip_space(text: str, index: int) -> int:
    # A regular expression, not a loop: 200 MiB of blanks is a known way to stall a parser.
    match = _SPACE.match(text, index)
    return match.end() if match else index


def read_text(path: str) -> str:
    """A whole document (at most :data:`gate.limits.DOCUMENT_BYTES`) as UTF-8 text."""
    data = read_whole(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text ({error.reason} at byte {error.start})", Provenance(path)
        ) from None


def load_file(path: str) -> Any:
    """Parse a whole JSON file strictly."""
    return loads(read_text(path), Provenance(path))


def iter_jsonl(path: str, offset: int = 0, first_line: int = 1) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) for each non-blank line of a JSONL file, strictly parsed.

    ``offset``/``first_line``: start at that byte offset (a line start), numbered from there.
    No line may be longer than :data:`gate.limits.LINE_BYTES` (counted in characters here).
    """
    import io

    maximum = limits.LINE_BYTES.value()
    with io.TextIOWrapper(open_input(path), encoding="utf-8") as handle:
        if offset:
            handle.seek(offset)  # a byte offset at a line start is a valid cookie for UTF-8
        line_number = first_line - 1
        try:
            while line := handle.readline(maximum + 1):
                line_number += 1
                if len(line) > maximum:
                    raise too_large(
                        Provenance(path, line_number), limits.LINE_BYTES, None, "the line"
                    )
                if line.strip():
                    yield line_number, loads(line.rstrip("\r\n"), Provenance(path, line_number))
        except UnicodeDecodeError as error:
            raise InputError(
                f"not UTF-8 text ({error.reason})", Provenance(path, line_number + 1)
            ) from None


#: an escape that matters to the key count: an escaped backslash (skipped whole, so that its
#: second backslash never starts an escape) or an escaped colon.
_COLON_ESCAPE = re.compile(rb"\\\\|\\u003[aA]")


def _keys_unique(raw: bytes, values: Any) -> bool:
    """True when parsing ``raw`` into ``values`` dropped no key given twice.

    A ':' outside a string always separates a key from its value, so ``raw``
    holds one ':' per key written plus the colons inside strings, each written
    as ':' or as the escape \\u003a. Serialising what was parsed gives one ':'
    per key kept plus the same in-string colons (orjson escapes no ':'). Equal
    counts therefore mean that no key was dropped: an exact check at the cost of
    one serialisation, no tokenizer in Python. The escapes are counted only
    when there may be one (JSON from Go escapes '<', '>' and '&' as \\u003c,
    \\u003e, \\u0026); a match starts only at an escape's backslash, since an
    escaped backslash is matched whole.
    """
    if orjson is None:
        return False
    try:
        count = count_byte(orjson.dumps(values), b":")
    except (orjson.JSONEncodeError, TypeError):  # nested past orjson's 254 levels: in doubt
        return False
    escaped = 0
    # A one-byte search first: 2 ms over 160 MB, where the five-byte one takes 97 ms.
    if b"\\" in raw and b"\\u003" in raw:
        escaped = sum(len(m) == 6 for m in _COLON_ESCAPE.findall(raw))
    return count_byte(raw, b":") + escaped == count


def fast_loads_block(text: bytes) -> list[Any] | None:
    """Parse a block of JSONL lines with orjson, one value per line; ``None`` when in doubt.

    The block is parsed as one JSON array, a comma put before each line end: a third
    faster than a call per line, and no list of lines to make. It is the same reading:
    JSON allows no raw line end inside a string, so every line end stays between two
    array items, and as many items as lines means one value on each line.

    ``None`` for anything orjson refuses (a blank line, a byte order mark, a lone
    surrogate, invalid UTF-8, a syntax error) and when a key may be duplicated; the
    caller then reads the same lines with :func:`strict_lines`, which either agrees or
    raises the located error. Note: orjson reads an integer beyond 64 bits as a float
    where ``json`` keeps the int; callers that use an integer field check its type.
    """
    if orjson is None or json_values_exceed(text, limits.JSON_VALUES.value()):
        return None  # the strict reader says which line is too big
    ended = text.endswith(b"\n")
    items = text.replace(b"\n", b",\n")
    try:
        values = orjson.loads(b"[" + (items[:-2] if ended else items) + b"]")
    except orjson.JSONDecodeError:
        return None
    if len(values) != len(items) - len(text) + (not ended):  # a comma added per line end
        return None
    return values if _keys_unique(text, values) else None


def strict_lines(path: str, first_line: int, lines: Sequence[bytes]) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line in ``lines``, strictly parsed."""
    for line_number, raw in enumerate(lines, start=first_line):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(
                f"not UTF-8 text ({error.reason} at byte {error.start})",
                Provenance(path, line_number),
            ) from None
        if text.strip():
            yield line_number, loads(text.rstrip("\r\n"), Provenance(path, line_number))


def text_chunks(path: str, size: int) -> Iterator[tuple[int, int, bytes]]:
    """(first line number, byte offset, text) for successive chunks of about ``size`` bytes
    of whole lines (:func:`gate.reading.text_blocks`).

    Lines end at b"\\n" only; a chunk with a bare b"\\r" (which text mode would also
    end a line at) is the caller's to hand to :func:`iter_jsonl` from its offset. No line
    may be longer than :data:`gate.limits.LINE_BYTES`.
    """
    with open_input(path) as handle:
        yield from text_blocks(handle, path, size)


def has_bare_cr(raw: bytes) -> bool:
    """True when a b"\\r" not followed by b"\\n" would end a line in text mode."""
    return b"\r" in raw and raw.count(b"\r") != raw.count(b"\r\n")


@dataclass(frozen=True)
class JsonlChunk:
    """About ``size`` bytes of a JSONL file: parsed fast, or to be read strictly.

    ``records`` holds one value per line (line ``first_line + i`` is record i) when
    the fast path is certain of them; otherwise it is None and ``strict`` yields
    (line number, value) pairs from the strict parser, which raises located errors.
    """

    first_line: int
    text: bytes
    records: list[Any] | None
    strict: Iterable[tuple[int, Any]]

    @cached_property
    def lines(self) -> list[bytes]:
        """The chunk's lines, each with its line end (cut once, when a reader first asks)."""
        return split_lines(self.text)


def jsonl_chunks(
    path: str, size: int, accept: Callable[[list[Any]], bool] | None = None
) -> Iterator[JsonlChunk]:
    """The chunks of a JSONL file, each parsed by orjson when certain, else strictly.

    ``accept`` may refuse a fast-parsed chunk (e.g. an integer orjson read as a float),
    which then goes the strict way. A bare ``\\r`` (a line end in text mode, not here)
    sends the rest of the file to the text-mode reader, numbered as it numbers lines.
    """
    for first_line, offset, text in text_chunks(path, size):
        if has_bare_cr(text):
            yield JsonlChunk(first_line, text, None, iter_jsonl(path, offset, first_line))
            return
        records = fast_loads_block(text)
        if records is not None and (accept is None or accept(records)):
            yield JsonlChunk(first_line, text, records, ())
        else:
            yield JsonlChunk(first_line, text, None, _strict_text(path, first_line, text))


def _strict_text(path: str, first_line: int, text: bytes) -> Iterator[tuple[int, Any]]:
    """:func:`strict_lines` of ``text``'s lines, cut when the first is asked for."""
    yield from strict_lines(path, first_line, split_lines(text))


#: what :func:`decode_whole` gives for a text the strict parser refuses
REFUSED: Final = object()


def orjson_certain(raw: bytes) -> Any:
    """orjson's value of ``raw`` when it is certainly the strict parser's (no key dropped,
    :func:`_keys_unique`), else :data:`REFUSED` (orjson refuses it, or a key count in doubt)."""
    if orjson is None:
        return REFUSED
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return REFUSED
    return value if _keys_unique(raw, value) else REFUSED


def decode_whole(raw: bytes, *, non_finite: bool = False) -> Any:
    """``raw`` parsed as the strict parser parses it, in one call: by orjson when certain
    (:func:`_keys_unique`), else by the strict decoder (a lone surrogate, NaN where
    ``non_finite`` allows it, a key count in doubt); :data:`REFUSED` when that refuses it
    too (a syntax error, a duplicate key, invalid UTF-8, nesting or values past the limits),
    for a caller that locates and words the error its own way."""
    if json_values_exceed(raw, limits.JSON_VALUES.value()):
        return REFUSED
    value = orjson_certain(raw)
    if value is not REFUSED:
        return value
    if json_depth_exceeds(raw, limits.JSON_DEPTH.value()):
        return REFUSED
    try:
        return decoder(non_finite).decode(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError, _StrictJSONError, JSONDecodeError
        return REFUSED


def load_bytes(data: bytes, where: Provenance, *, non_finite: bool = False) -> Any:
    """Parse one whole JSON text: orjson when certain, else the strict parser (located errors).
    ``non_finite``: NaN, Infinity and -Infinity are read as floats (Inspect AI logs); orjson
    refuses them, so a text that holds one is read by the strict parser that allows them."""
    if json_values_exceed(data, limits.JSON_VALUES.value()):
        raise too_large(where, limits.JSON_VALUES, None, "the number of JSON values")
    value = orjson_certain(data)
    if value is not REFUSED:
        return value
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", where) from None
    return loads(text, where, non_finite=non_finite)


def read_bytes(path: str) -> bytes:
    """A whole document, at most :data:`gate.limits.DOCUMENT_BYTES`."""
    return read_whole(path)


def pointer(*parts: str | int) -> str:
    """RFC 6901 JSON pointer for a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
