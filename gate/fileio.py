"""Output files are written whole or not at all, redacted, and never over an input.

Text is written as UTF-8 with lone surrogates (which JSON can spell and UTF-8 cannot hold) as
backslash escapes: ``\\ud800`` in a JSON string is the same character again, and elsewhere it
is at least visible. A path that cannot be written raises :class:`~gate.errors.OutputError`,
which a command that already has a verdict turns into a warning.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from typing import TextIO

from gate.errors import UNUSABLE_NAME, EvalGateError, OutputError
from gate.redact import redact


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` (redacted) to ``path`` via a temporary file in the same folder and an
    atomic rename.

    A path that is not a regular file (``/dev/null``, a named pipe) or that leads through
    ``/proc`` (``/dev/stdout``) is written in place: renaming over it would replace the
    device or the link with a file; a named pipe that no process reads is refused, not
    waited on. A link is followed: its target is replaced. A new file gets the mode the
    umask gives (not mkstemp's 0600); an existing one keeps its mode.
    """
    atomic_write_parts(path, [text])


def atomic_write_parts(path: str, parts: Iterable[str]) -> None:
    """:func:`atomic_write` of the concatenation of ``parts``, written as they come (a large
    report need not be held whole). Each part is redacted: split parts only between JSON
    values or lines, never inside a value a secret could be part of."""
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    except ValueError:  # a NUL or a lone surrogate (a library caller's): nothing to write to
        raise OutputError(f"{path}: cannot write: {UNUSABLE_NAME}") from None
    try:
        target = _rename_target(path)
    except OSError as error:
        raise OutputError(f"{path}: cannot write: {error.strerror}") from None
    if target is None or (existing is not None and not stat.S_ISREG(existing.st_mode)):
        try:
            with _open_in_place(path) as handle:
                for text in parts:
                    handle.write(redact(text))
        except OSError as error:
            raise OutputError(f"{path}: cannot write: {error.strerror}") from None
        return
    mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_current_umask()
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".eval-gate-", dir=folder)
    except OSError as error:
        raise OutputError(f"{path}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(
            fd, "w", encoding="utf-8", errors="backslashreplace", newline="\n"
        ) as handle:
            for text in parts:
                handle.write(redact(text))
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as error:
        os.unlink(temporary)
        raise OutputError(f"{path}: cannot write: {error.strerror}") from None
    except BaseException:
        os.unlink(temporary)
        raise


def _rename_target(path: str) -> str | None:
    """Where the finished file is renamed to: ``path`` with its links followed, so that a
    link stays a link and its target gets the report (``os.replace`` onto the link would
    replace the link). None when the path leads through ``/proc``: ``/dev/stdout`` and
    ``/dev/fd/N`` name a descriptor of this process (a file the shell opened, perhaps to
    append), which only writing in place reaches; renaming onto it would replace the link
    ``/dev/stdout`` itself."""
    current = os.path.abspath(path)
    for _ in range(_MOST_LINKS):
        folder = os.path.realpath(os.path.dirname(current))
        if _DESCRIPTORS.fullmatch(folder):
            return None
        if folder == "/proc" or folder.startswith("/proc/"):  # kernel settings, not files
            raise OSError(errno.EACCES, "a /proc entry other than a descriptor")
        current = os.path.join(folder, os.path.basename(current))
        if not os.path.islink(current):
            return current
        current = os.path.join(folder, os.readlink(current))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))


#: the folder of this process's descriptors, as /dev/fd and /dev/stdout resolve
_DESCRIPTORS = re.compile(r"/proc/(?:self|\d+)(?:/task/\d+)?/fd")
#: links followed before a path is taken as a loop (Linux's own limit for a path).
_MOST_LINKS = 40


def open_to_append(path: str, create: bool = False) -> int:
    """A descriptor appending to ``path`` (``create``: made if missing), opened without
    waiting: a named pipe that no process reads would otherwise hold the command forever
    (OSError ENXIO instead, :data:`NO_READER`); one that has a reader (``--json >(jq .)``)
    is then written as a pipe is, waiting while the reader catches up."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | (os.O_CREAT if create else 0)
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ENXIO and stat.S_ISFIFO(os.stat(path).st_mode):
            raise OSError(errno.ENXIO, NO_READER) from None
        raise
    try:
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


#: why a named pipe is not written
NO_READER = "a named pipe that no process reads"


def _open_in_place(path: str) -> TextIO:
    """Open a path that is not a regular file (a device, a named pipe, ``/dev/stdout``) to
    write. Appending: a file behind /dev/stdout was emptied by the shell's ">", or is meant
    to grow (">>"); devices and pipes have no end to append at."""
    descriptor = open_to_append(path)
    return open(descriptor, "w", encoding="utf-8", errors="backslashreplace", newline="\n")


def refuse_overwriting(outputs: Mapping[str, str | None], inputs: Iterable[str]) -> None:
    """Refuse (exit code 2, before anything is read) an output path that is one of ``inputs``.

    ``outputs`` maps how each output was named (``--json``, ``input report``) to its path;
    paths are compared by their real paths, so a link or ``./`` changes nothing. Writing the
    report over ``results.jsonl`` would destroy the evidence it was computed from.
    """
    real_inputs: dict[str, str] = {}
    for path in inputs:
        real = _real_path(path)
        if real is not None:
            real_inputs.setdefault(real, path)
    for option, output in outputs.items():
        real = _real_path(output) if output else None
        clash = real_inputs.get(real) if real is not None else None
        if clash is not None:
            raise EvalGateError(
                f"{option} {output} is also an input ({clash}); refusing to overwrite it: write "
                "to another path"
            )


def _real_path(path: str) -> str | None:
    """The real path of ``path``; None for a name no file can have (reading or writing it
    says so)."""
    try:
        return os.path.realpath(path)
    except ValueError:  # a NUL or a lone surrogate
        return None
