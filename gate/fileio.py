"""Output files are written whole or not at all."""

from __future__ import annotations

import os
import stat
import tempfile

from gate.errors import EvalGateError


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and an atomic rename.

    A path that is not a regular file (``/dev/null``, ``/dev/stdout``, a named pipe) is
    written in place: renaming over it would replace the device with a file. A new file
    gets the mode the umask gives (not mkstemp's 0600); an existing one keeps its mode.
    """
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        except OSError as error:
            raise EvalGateError(f"{path}: cannot write: {error.strerror}") from None
        return
    mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_current_umask()
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".eval-gate-", dir=folder)
    except OSError as error:
        raise EvalGateError(f"{path}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        raise EvalGateError(f"{path}: cannot write: {error.strerror}") from None
    except BaseException:
        os.unlink(temporary)
        raise
