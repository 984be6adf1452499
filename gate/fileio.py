"""Output files are written whole or not at all, redacted, and never over an input.

Text is written as UTF-8 with lone surrogates (which JSON can spell and UTF-8 cannot hold) as
backslash escapes: ``\\ud800`` in a JSON string is the same character again, and elsewhere it
is at least visible. A path that cannot be written raises :class:`~gate.errors.OutputError`,
which a command that already has a verdict turns into a warning.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Mapping

from gate.errors import UNUSABLE_NAME, EvalGateError, OutputError
from gate.redact import redact


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` (redacted) to ``path`` via a temporary file in the same folder and an
    atomic rename.

    A path that is not a regular file (``/dev/null``, ``/dev/stdout``, a named pipe) is
    written in place: renaming over it would replace the device with a file. A new file
    gets the mode the umask gives (not mkstemp's 0600); an existing one keeps its mode.
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
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        try:
            with open(
                path, "w", encoding="utf-8", errors="backslashreplace", newline="\n"
            ) as handle:
                for text in parts:
                    handle.write(redact(text))
        except OSError as error:
            raise OutputError(f"{path}: cannot write: {error.strerror}") from None
        return
    mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_current_umask()
    folder = os.path.dirname(os.path.abspath(path))
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
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        raise OutputError(f"{path}: cannot write: {error.strerror}") from None
    except BaseException:
        os.unlink(temporary)
        raise


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
