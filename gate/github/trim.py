"""Fit Markdown under GitHub's size limits without breaking it.

GitHub drops a job summary over 1 MiB (with an error annotation instead) and refuses a comment
over 65,536 characters. Cutting anywhere could leave a half table row, an open code fence that
swallows the rest of the page, or an unclosed ``<details>``; this cuts only between whole lines,
never inside a fence or between a table's header and its delimiter row, closes what it left
open and ends with a visible notice saying that, and how much, was left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_DETAILS_OPEN = re.compile(r"^\s*<details[\s>]", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details>", re.IGNORECASE)
#: a block :func:`fold_details` may fold: its title on its first line, as the reports write it
_FOLDABLE = re.compile(r"^<details><summary>(.*)</summary>\s*$")


def utf8_bytes(text: str) -> int:
    """Size of a job summary: the runner measures the file in bytes (as it is written)."""
    return len(text.encode("utf-8", "backslashreplace"))


def utf16_units(text: str) -> int:
    """Size of a comment body: never less than its character count however GitHub counts."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _lines(text: str) -> list[str]:
    """Lines ending at "\n" only, kept: str.splitlines() would also cut at U+0085, U+2028 or
    a form feed inside a table cell, and a row cut there is a broken table."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


#: what a line is to the Markdown around it (:func:`_kinds`)
_TEXT, _OPENS_CODE, _CODE = 0, 1, 2


def _kinds(lines: list[str]) -> list[int]:
    """Each line's kind: text; a fence that opens code; code (a line inside a fence, or the
    fence that closes it)."""
    kinds: list[int] = []
    fence: str | None = None
    for line in lines:
        mark = _FENCE.match(line)
        if fence is None:
            kinds.append(_OPENS_CODE if mark else _TEXT)
            fence = mark.group(1) if mark else None
        else:
            kinds.append(_CODE)
            if mark and mark.group(1)[0] == fence[0] and len(mark.group(1)) >= len(fence):
                fence = None
    return kinds


def fold_details(
    text: str,
    limit: int,
    left_out: str,
    measure: Callable[[str], int] = utf8_bytes,
    order: Callable[[str], int] | None = None,
) -> str:
    """``text`` with the bodies of its ``<details>`` blocks (those opened by a line
    ``<details><summary>…</summary>``, outside code, not inside another) replaced by the line
    ``left_out`` until it fits in ``limit`` or none is left; the block that makes it fit
    keeps the first of its rows that fit (a table's worst, or its first), followed by that
    line. Blocks go in the ``order`` their titles are given (lowest first: the report knows
    which of its tables a reader needs least), the largest first among equals.

    A cut at the end loses everything after the cut: in a summary of 400 stimuli the tables
    of stimuli, reliability and messages left no room for the comparison with the baseline
    and the methods that follow them. Folded, each table keeps its title; what comes after
    stays. A block that ends the text is left to the cut: nothing follows it to make room
    for.
    """
    size = measure(text)
    if size <= limit:
        return text
    lines = _lines(text)
    rank = order or (lambda _title: 0)
    # (rank, minus the body size, minus the first body line, closing line): the later block
    # first among equals, as the cut would take it
    blocks: list[tuple[int, int, int, int]] = []
    opened, title = -1, ""
    for i, (line, kind) in enumerate(zip(lines, _kinds(lines), strict=True)):
        if kind != _TEXT:
            continue
        opening = _FOLDABLE.match(line)
        if opened < 0 and opening and not _DETAILS_CLOSE.search(line):
            opened, title = i + 1, opening.group(1)  # the body's first line
        elif opened >= 0 and line.strip().lower() == "</details>":
            body_size = sum(map(measure, lines[opened:i]))
            blocks.append((rank(title), -body_size, -opened, i))
            opened = -1
        elif opened >= 0 and (_DETAILS_OPEN.match(line) or _DETAILS_CLOSE.search(line)):
            opened = -1  # nested or unusual: not ours to fold
    if blocks and not "".join(lines[blocks[-1][3] + 1 :]).strip():
        blocks.pop()  # the text's last part: a cut at the end keeps more of it than a fold
    empty = "\n" + left_out.strip("\n") + "\n\n"
    folded: dict[int, tuple[int, str]] = {}  # first body line: (closing line, new body)
    for _, minus_size, minus_first, closing in sorted(blocks):
        block_size, first = -minus_size, -minus_first
        if size <= limit:
            break
        if block_size <= measure(empty):
            continue
        room = block_size - (size - limit) - 1  # what this body may keep (1: a line end)
        body = empty
        if room > measure(empty):  # this block alone makes it fit: it keeps its first rows
            body = trim_markdown("".join(lines[first:closing]), room, lambda _: left_out, measure)
            body += "" if body.endswith("\n\n") else "\n"
        size -= block_size - measure(body)
        folded[first] = (closing, body)
    kept, i = [], 0
    while i < len(lines):
        if i in folded:
            i, body = folded[i]
            kept.append(body)
        kept.append(lines[i])
        i += 1
    return "".join(kept)


def trim_markdown(
    text: str,
    limit: int,
    notice: Callable[[int], str],
    measure: Callable[[str], int] = utf8_bytes,
    left_out: str | None = None,
    fold_order: Callable[[str], int] | None = None,
) -> str:
    """``text`` if it fits in ``limit``; else, with ``left_out`` given, first with the
    bodies of its ``<details>`` blocks folded to that line in ``fold_order``
    (:func:`fold_details`); then, if that is still too long, its longest safe prefix and
    ``notice(lines_cut)``.

    The result always fits when the notice alone does.
    """
    if measure(text) <= limit:
        return text
    if left_out is not None:
        text = fold_details(text, limit, left_out, measure, fold_order)
        if measure(text) <= limit:
            return text
    lines = _lines(text)
    # cut_points[i] = (prefix size, <details> left open) when keeping lines[:i] is safe, else None.
    cut_points: list[tuple[int, int] | None] = []
    open_details = 0
    size = 0
    for i, (line, kind) in enumerate(zip(lines, _kinds(lines), strict=True)):
        splits_table = i > 0 and kind == _TEXT and bool(_TABLE_DELIMITER.match(line))
        cut_points.append(None if kind == _CODE or splits_table else (size, open_details))
        size += measure(line)
        if kind == _TEXT:
            if _DETAILS_OPEN.match(line):
                open_details += 1
            open_details = max(0, open_details - len(_DETAILS_CLOSE.findall(line)))
    for i in range(len(lines) - 1, -1, -1):
        point = cut_points[i]
        if point is None:
            continue
        prefix_size, still_open = point
        prefix = "".join(lines[:i])
        if prefix and not prefix.endswith("\n"):
            prefix += "\n"
        ending = "\n" + "</details>\n\n" * still_open + notice(len(lines) - i).rstrip("\n") + "\n"
        if prefix_size + 1 + measure(ending) <= limit:
            return prefix + ending
    return notice(len(lines)).rstrip("\n") + "\n"
