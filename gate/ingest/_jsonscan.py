"""Where the structure of a large JSON document is, without parsing it: a streaming scan.

One pass over the file, a few megabytes at a time, finds every structural character
(``{ } [ ] , :``) outside strings and its nesting depth, with numpy over each block: a quote
preceded by an odd run of backslashes is escaped, the characters inside strings are those
after an odd number of unescaped quotes, and the depth is a running sum of +1 for an opening
and -1 for a closing bracket. It keeps those at depth ``keep`` or less (the document's
frame: for a results document, the stimuli array and its elements) as three compact
arrays, and measures what the limits bound: nesting depth, and an upper bound of the
number of values.

The reader (:mod:`gate.ingest.native`) then reads the document again piece by piece, each
piece a bounded byte range parsed strictly by orjson, so no whole-document tree is ever
built. The scan never decides validity: a piece that does not parse, or a frame that is not
what the reader expects, sends the document to the strict reader, which words the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from gate.errors import Provenance
from gate.reading import read_block

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: bytes scanned at a time
BLOCK_BYTES = 4 << 20
OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COMMA, COLON = b"{}[],:"
QUOTE, BACKSLASH = ord('"'), ord("\\")
_SPACE = b" \t\r\n"


@dataclass(frozen=True)
class Frame:
    """The structural characters of a JSON text at depth ≤ ``keep``, in order.

    ``depth`` of an opening or closing bracket is the depth of the container it opens or
    closes (the top-level value's is 1); of a comma or colon, that of the container it is
    in. ``deepest``: the deepest nesting; ``values``: at least the number of values (commas
    and opening brackets, in strings too, plus one); ``end``: the text's length.
    """

    position: npt.NDArray[np.int64]
    char: npt.NDArray[np.uint8]
    depth: npt.NDArray[np.int16]
    deepest: int
    values: int
    end: int


def scan(
    handle: BinaryIO,
    path: str,
    keep: int,
    chars: bytes = b"{}[],:",
    block: int = BLOCK_BYTES,
) -> Frame:
    """The :class:`Frame` of the JSON text ``handle`` reads (from its start), with the
    structural characters among ``chars`` (brackets only is quicker: a text has fewer)."""
    import numpy as np

    kinds = bytes(1 if c in chars else 0 for c in range(256))  # which are kept
    steps = np.zeros(256, dtype=np.int8)  # the depth step of each
    steps[[OPEN_OBJECT, OPEN_ARRAY]] = 1
    steps[[CLOSE_OBJECT, CLOSE_ARRAY]] = -1
    positions: list[npt.NDArray[np.int64]] = []
    kept: list[npt.NDArray[np.uint8]] = []
    depths: list[npt.NDArray[np.int16]] = []
    in_string = 0  # 1 when the previous block ended inside a string
    depth = 0  # the depth after the previous block
    trailing = 0  # backslashes that ended the previous block
    deepest = values = 0
    offset = 0
    while True:
        data = read_block(handle, block, Provenance(path))
        if not data:
            break
        raw = np.frombuffer(data, dtype=np.uint8)
        quotes = np.flatnonzero(raw == QUOTE)
        # A quote after a backslash may be escaped: count the run of backslashes before it.
        before = quotes[quotes > 0]
        escaped = before[raw[before - 1] == BACKSLASH].tolist()
        if trailing and quotes.size and quotes[0] == 0:
            escaped.insert(0, 0)
        if escaped:
            drop = []
            for candidate in escaped:
                run = 0
                j = candidate - 1
                while j >= 0 and data[j] == BACKSLASH:
                    run += 1
                    j -= 1
                if j < 0:
                    run += trailing
                if run % 2:
                    drop.append(candidate)
            if drop:
                quotes = np.setdiff1d(quotes, np.array(drop, dtype=quotes.dtype), True)
        stripped = data.rstrip(b"\\")
        run = len(data) - len(stripped)
        trailing = run + trailing if not stripped else run
        # A character is inside a string when an odd number of quotes precede it.
        candidates = np.flatnonzero(np.frombuffer(data.translate(kinds), dtype=np.bool_))
        outside = ((np.searchsorted(quotes, candidates) + in_string) & 1) == 0
        in_string = (quotes.size + in_string) & 1
        where = candidates[outside]
        found = raw[where]
        step = steps[found].astype(np.int32)
        level = np.cumsum(step) + depth
        if level.size:
            depth = int(level[-1])
            deepest = max(deepest, int(level.max()))
        # An opening bracket's depth is the level after it; a closing one's, before it.
        own = np.where(step < 0, level + 1, level)
        # Every value but the first follows a comma or an opening bracket: counted in the raw
        # bytes, strings included, this bounds the number of values from above.
        values += data.count(b",") + data.count(b"[") + data.count(b"{")
        chosen = own <= keep
        positions.append(where[chosen].astype(np.int64) + offset)
        kept.append(found[chosen])
        depths.append(own[chosen].astype(np.int16))
        offset += len(data)
    return Frame(
        position=np.concatenate(positions) if positions else np.zeros(0, dtype=np.int64),
        char=np.concatenate(kept) if kept else np.zeros(0, dtype=np.uint8),
        depth=np.concatenate(depths) if depths else np.zeros(0, dtype=np.int16),
        deepest=deepest,
        values=values + 1,
        end=offset,
    )


def only_space(data: bytes) -> bool:
    """True when ``data`` is JSON whitespace only (a byte order mark may start a text)."""
    return not data.lstrip(b"\xef\xbb\xbf").strip(_SPACE)
