"""Every input is found and opened here: only regular files, only where allowed, never too much.

Results, baselines, counts files, the configuration and the runner's event payload all come
through :func:`open_input`, which

* opens without blocking (``O_NONBLOCK``: a named pipe would otherwise wait forever for a
  writer) and then judges the open descriptor, not the name, so nothing can be swapped in
  between the check and the read;
* reads only regular files: a directory, a FIFO, a socket or a device (``/dev/zero``,
  ``/dev/urandom``) is refused, and so is any file of the kernel's ``/proc`` and ``/sys``
  (``/proc/self/environ`` holds the environment, tokens included, and is "regular");
* in the GitHub Action (inside :func:`confined_to`), reads only files whose real path, links
  resolved, lies inside the workspace;
* refuses a file larger than the limit the caller names (:mod:`gate.limits`).

Folders and globs are expanded here too, without following symbolic links out of a folder
or round a loop, and visiting a bounded number of entries. JSON nesting is measured here
before any recursive parser sees a text (:func:`json_depth_exceeds`).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from functools import cache
from typing import BinaryIO, Protocol

from gate import limits
from gate.errors import UNUSABLE_NAME, InputError, Provenance
from gate.limits import Limit

_WORKSPACE: ContextVar[str | None] = ContextVar("eval_gate_workspace", default=None)
#: the kernel's pseudo file systems: their files look regular and may hold secrets.
_KERNEL_FOLDERS = ("/proc", "/sys")
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@contextmanager
def confined_to(root: str) -> Iterator[None]:
    """Inside this block, :func:`open_input` reads only files whose real path is under ``root``."""
    token = _WORKSPACE.set(os.path.realpath(root))
    try:
        yield
    finally:
        _WORKSPACE.reset(token)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str | None:
    """What a file that is not regular is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


@cache
def _kernel_devices() -> frozenset[int]:
    devices = set()
    for folder in _KERNEL_FOLDERS:
        with suppress(OSError):
            devices.add(os.stat(folder).st_dev)
    return frozenset(devices)


def _real_path(fd: int, path: str) -> str:
    """The real path of what ``fd`` opened (Linux names it; elsewhere resolve the name)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def too_large(
    where: Provenance, limit: Limit, size: int | None = None, what: str = ""
) -> InputError:
    """The error for an input past ``limit``: what, how much, the limit and how to raise it."""
    subject = what or limit.name
    amount = f" ({limit.describe(size)})" if size is not None else ""
    return InputError(
        f"{subject} is over the {limit.name} limit{amount}", where, expected=limit.advice()
    )


def open_input(
    path: str, limit: Limit | None = limits.INPUT_BYTES, *, confine: bool = True
) -> BinaryIO:
    """Open ``path`` for reading in binary mode, or raise :class:`InputError` saying why not.

    ``limit`` bounds the file's size as stored (readers that read more than they were told,
    from a file that grows, check again: :func:`read_whole`). ``confine=False`` for files the
    runner names (the event payload), which live outside the workspace.
    """
    where = Provenance(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", where) from None
    except ValueError:  # a NUL, or a lone surrogate a library caller passed: no file's name
        raise InputError(f"cannot read: {UNUSABLE_NAME}", where) from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise InputError(f"{kind}: only regular files are read", where)
        real = _real_path(fd, path)
        if info.st_dev in _kernel_devices() or any(_inside(real, k) for k in _KERNEL_FOLDERS):
            raise InputError(
                "a file of the kernel's /proc or /sys: refused (such files hold the "
                "environment and its secrets, not results)",
                where,
            )
        root = _WORKSPACE.get()
        if confine and root is not None and not _inside(real, root):
            raise InputError(
                f"outside the workspace: it resolves to {real}, and the action reads only "
                f"files inside {root}",
                where,
            )
        if limit is not None and info.st_size > limit.value():
            raise too_large(where, limit, info.st_size, "the file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class Reads(Protocol):
    """Anything read in blocks: a binary file, an archive member being unpacked."""

    def read(self, size: int = -1, /) -> bytes: ...


def read_block(handle: Reads, size: int, where: Provenance) -> bytes:
    """Up to ``size`` bytes of ``handle``; a read error (EIO, a vanished mount) is an
    :class:`InputError` at ``where``."""
    try:
        return handle.read(size)
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", where) from None


def read_whole(path: str, limit: Limit = limits.DOCUMENT_BYTES, *, confine: bool = True) -> bytes:
    """The whole content of ``path``, at most ``limit`` bytes of it (else an error)."""
    maximum = limit.value()
    with open_input(path, limit, confine=confine) as handle:
        data = read_block(handle, maximum + 1, Provenance(path))
    if len(data) > maximum:  # it grew while we read
        raise too_large(Provenance(path), limit, None, "the file")
    return data


def read_head(path: str, size: int) -> bytes:
    """The first ``size`` bytes of ``path`` (a format sniff)."""
    with open_input(path) as handle:
        return read_block(handle, size, Provenance(path))


def line_blocks(
    handle: BinaryIO, path: str, size: int, first_line: int = 1
) -> Iterator[tuple[int, int, list[bytes]]]:
    """(first line number, byte offset, lines) for blocks of about ``size`` bytes of whole lines.

    Lines end at b"\\n" (kept); none may be longer than :data:`gate.limits.LINE_BYTES`, which
    is checked before such a line is ever held whole.
    """
    for line_number, offset, data in text_blocks(handle, path, size, first_line):
        yield line_number, offset, split_lines(data)


def text_blocks(
    handle: BinaryIO, path: str, size: int, first_line: int = 1
) -> Iterator[tuple[int, int, bytes]]:
    """(first line number, byte offset, text) for blocks of about ``size`` bytes of whole
    lines, as :func:`line_blocks` gives them but not cut into lines (which a reader that
    parses a block at once never needs): block ``i``'s lines are ``split_lines(text)``.
    """
    maximum = limits.LINE_BYTES.value()
    line_number, offset = first_line, handle.tell()
    pending: list[bytes] = []  # the start of a line longer than a block, piece by piece
    pending_size = 0
    while True:
        block = read_block(handle, size, Provenance(path))
        if not block:
            break
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            pending.append(block)
            pending_size += len(block)
        else:
            data = b"".join([*pending, block[:cut]]) if pending else block[:cut]
            # A line within one block, or completed by this one, is over the limit too when
            # the limit is below the block size (lines keep their b"\n", the limit counts the
            # line's own bytes).
            if len(data) > maximum + 1:
                lines = split_lines(data)
                if max(map(len, lines)) > maximum + 1:
                    long = next(i for i, line in enumerate(lines) if len(line) > maximum + 1)
                    raise too_large(
                        Provenance(path, line_number + long), limits.LINE_BYTES, None, "the line"
                    )
            pending, pending_size = (
                ([block[cut:]], len(block) - cut) if cut < len(block) else ([], 0)
            )
            yield line_number, offset, data
            line_number += count_byte(data, b"\n")
            offset += len(data)
        if pending_size > maximum:
            raise too_large(Provenance(path, line_number), limits.LINE_BYTES, None, "the line")
    if pending:
        yield line_number, offset, b"".join(pending)


def count_byte(data: bytes, byte: bytes) -> int:
    """How many times ``byte`` is in ``data``: numpy's count, five times faster than
    ``bytes.count`` on a block (which goes a byte at a time for a one-byte needle)."""
    if len(data) < 4096:
        return data.count(byte)
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == ord(byte)))


def split_lines(text: bytes) -> list[bytes]:
    """The lines of ``text``, each with its b"\\n" (the last may have none): a b"\\r" ends no
    line here, where ``bytes.splitlines`` would end one at a bare b"\\r"."""
    if b"\r" not in text:
        return text.splitlines(keepends=True)  # the same lines, three times faster
    lines = [line + b"\n" for line in text.split(b"\n")]
    last = lines.pop()  # what follows the last b"\n" (with a b"\n" added): b"\n" if nothing
    return lines if last == b"\n" else [*lines, last[:-1]]


class _Entries:
    """Counts the directory entries one expansion visits."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.left = limits.FOLDER_ENTRIES.value()

    def scan(self, folder: str) -> Iterator[os.DirEntry[str]]:
        try:
            with os.scandir(folder or ".") as entries:
                for entry in entries:
                    self.left -= 1
                    if self.left < 0:
                        raise too_large(
                            Provenance(self.pattern),
                            limits.FOLDER_ENTRIES,
                            None,
                            "the folders this pattern walks",
                        )
                    yield entry
        except OSError:
            return


def _join(base: str, name: str) -> str:
    return os.path.join(base, name) if base else name


def walk_folder(folder: str, suffixes: tuple[str, ...]) -> list[str]:
    """Files under ``folder`` ending in one of ``suffixes``, sorted.

    Symbolic links to folders are not followed (no loops, no walk through ``/usr``); a link
    to a file is taken only when its target lies inside ``folder``, else it is skipped with
    a warning naming it.
    """
    root = os.path.realpath(folder)
    entries = _Entries(folder)
    found: list[str] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        for entry in entries.scan(current):
            path = entry.path
            if entry.name.startswith("."):
                continue  # as glob's "**" and "*": hidden files and folders are left out
            if entry.is_dir(follow_symlinks=False):
                pending.append(path)
                continue
            if not entry.name.endswith(suffixes):
                continue
            if entry.is_symlink():
                target = os.path.realpath(path)
                if not _inside(target, root):
                    warnings.warn(
                        f"{path}: skipped: a symbolic link to {target}, outside the folder "
                        f"{folder}",
                        UserWarning,
                        stacklevel=2,
                    )
                    continue
            if entry.is_file():
                found.append(path)
    return sorted(found)


def match_glob(pattern: str) -> list[str]:
    """Regular files matching ``pattern`` (``*``, ``?``, ``[...]``, and ``**`` for any depth).

    As :func:`glob.glob` with ``recursive=True`` (hidden names need a pattern that starts with
    a dot), except that ``**`` does not descend into symbolic links to folders, so a link
    loop or a link to ``/`` cannot make it walk forever, and the walk is bounded.
    """
    absolute = pattern.startswith(os.sep)
    parts = [part for part in pattern.split(os.sep) if part]
    if parts and parts[-1] == "**":
        parts.append("*")  # "a/**" matches the files at every depth below a
    entries = _Entries(pattern)
    matches = set(_matches(os.sep if absolute else "", parts, entries))
    return sorted(path for path in matches if os.path.isfile(path))


def _matches(base: str, parts: Sequence[str], entries: _Entries) -> Iterator[str]:
    if not parts:
        yield base
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        yield from _matches(base, rest, entries)
        for entry in entries.scan(base):
            if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                yield from _matches(_join(base, entry.name), parts, entries)
    elif glob.has_magic(head):
        for entry in entries.scan(base):
            if entry.name.startswith(".") and not head.startswith("."):
                continue
            if fnmatch.fnmatchcase(entry.name, head):
                # One level of a wildcard may cross a link: the pattern's length bounds it.
                if not rest:
                    yield _join(base, entry.name)
                elif entry.is_dir():
                    yield from _matches(_join(base, entry.name), rest, entries)
    else:
        path = _join(base, head)
        if not rest:
            if os.path.lexists(path):
                yield path
        elif os.path.isdir(path):
            yield from _matches(path, rest, entries)


# -- JSON nesting and size --------------------------------------------------------------------

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth_exceeds(data: bytes | str, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` deep in the JSON text ``data``.

    Linear time and no recursion: strings are cut out, the brackets left over are turned into
    +1/-1 steps and their running sum is the depth. A text with no more than ``limit``
    opening brackets in all (most lines of a JSONL file) is answered by counting alone.
    """
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= limit:
            return False
        data = data.encode("utf-8", "surrogatepass")
    elif data.count(b"[") + data.count(b"{") <= limit:
        return False
    import numpy as np

    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    steps = np.frombuffer(brackets, dtype=np.uint8)
    table = np.zeros(256, dtype=np.int8)
    table[[ord("["), ord("{")]] = 1
    table[[ord("]"), ord("}")]] = -1
    depth = np.cumsum(table[steps], dtype=np.int64)
    return bool(depth.max(initial=0) > limit)


def json_values_exceed(data: bytes | str, limit: int) -> bool:
    """Whether the JSON text ``data`` holds more than ``limit`` values, before it is parsed.

    Every value but the first follows a "," or opens an array or object, so counting those
    bounds the number from above; only when that bound is over the limit are strings cut out
    and the count made exact. Linear time, no parsing.
    """
    if len(data) <= limit:  # each value takes a byte at least
        return False
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if data.count(b",") + data.count(b"[") + data.count(b"{") < limit:
        return False
    bare = _JSON_STRING.sub(b"", data)
    return bare.count(b",") + bare.count(b"[") + bare.count(b"{") >= limit
