"""Errors a user can cause. Each one carries enough to say where and what."""

from __future__ import annotations

from dataclasses import dataclass

#: characters of an input an error message may quote (a value, the columns found): a
#: message must stay one readable line whatever the file holds.
QUOTED_CHARS = 300
#: why a path holding a NUL or a lone surrogate (which a library caller can pass, argv and
#: the environment cannot) names no file.
UNUSABLE_NAME = "not a file name (it holds a NUL or an unencodable character)"


def shorten(text: str, limit: int = QUOTED_CHARS) -> str:
    """``text`` cut to ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one record came from: a file plus a line (JSONL, CSV) or a JSON pointer."""

    file: str
    line: int | None = None
    pointer: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.pointer:
            where += f" at {self.pointer}"
        return where

    def element(self) -> tuple[str, int] | None:
        """(the array's pointer, the index) when this is the place of an array element: a
        pointer, no line, ending in an index written as JSON pointers write one
        ("/stimuli/3/trials/7" → ("/stimuli/3/trials", 7)); else None."""
        if self.line is not None or not self.pointer:
            return None
        head, _, tail = self.pointer.rpartition("/")
        if len(tail) < 19 and tail.isdigit() and str(int(tail)) == tail:
            return head, int(tail)
        return None


class EvalGateError(Exception):
    """Base class of every error caused by input, configuration or usage (exit code 2)."""

    exit_code = 2


class InputError(EvalGateError):
    """A results file is unreadable, malformed or contradicts another one."""

    def __init__(
        self,
        message: str,
        where: Provenance | None = None,
        *,
        expected: str | None = None,
        found: str | None = None,
    ) -> None:
        self.where = where
        self.expected = expected
        self.found = found
        # Messages, expectations and findings may quote the input (a CSV header of 100,000
        # columns, a value of a megabyte): each is shortened.
        message = shorten(message, 2 * QUOTED_CHARS)
        parts = [f"{where}: {message}" if where else message]
        if expected is not None:
            parts.append(f"expected {shorten(expected)}")
        if found is not None:
            parts.append(f"found {shorten(found)}")
        super().__init__("; ".join(parts))


class ConfigError(EvalGateError):
    """The gate configuration is invalid or cannot be evaluated on these results."""


class OutputError(EvalGateError):
    """An output file cannot be written. Callers that have a verdict keep it and warn."""


def describe_unexpected(error: BaseException) -> str:
    """One line for an exception nobody expected: exit code 2, never 1 (a failed gate)."""
    if isinstance(error, MemoryError):
        return (
            "out of memory: the input needs more memory than this machine has "
            "(the limits in docs/limits.md bound how much one file may take)"
        )
    if isinstance(error, RecursionError):
        return "internal error: an input nested too deep for a recursive step (a bug)"
    said = shorten(str(error), 200)
    return (
        f"internal error ({type(error).__name__}{': ' + said if said else ''}); this is a bug "
        "in eval-gate, please report it"
    )
