"""Trials gathered as plain tuples while a reader streams its records, handed to the table a
block at a time as :class:`~gate.trials.TrialColumns`.

A reader that checks its records one by one (tau-bench, tau2-bench, Vally) appends one tuple
per trial to :attr:`Rows.rows` — one allocation, no :class:`~gate.trials.Trial` — and
:meth:`Rows.columns` turns a block of them into columns with one ``zip``; the table then
decides and stores the block with numpy (``TrialTable._add_trial_columns``), exactly as it
would the trials one by one.

A row is ``(where, stimulus, suite, trial, status, passed, score, message, *usage)``:
``where`` the line of the record (or, with ``pointer``, its position in the array at that
JSON pointer), ``message`` a text, None, or the arguments of :attr:`Rows.render` (a message
made only if the table keeps it), ``usage`` one value per name of :attr:`Rows.usage` (None
where the record gives none).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from gate.errors import InputError
from gate.trials import TrialColumns

#: trials per block: large enough that numpy's per-call cost vanishes, small enough that a
#: block's tuples stay few (4,096 rows of 10 values: ~0.5 MB).
BLOCK_TRIALS = 4096

Row = tuple[Any, ...]
T = TypeVar("T")


class Rows:
    """The rows of one file not yet handed to the table."""

    __slots__ = ("file", "pointer", "render", "rows", "usage")

    def __init__(
        self,
        file: str,
        usage: Sequence[str] = (),
        pointer: str | None = None,
        render: Callable[..., str | None] | None = None,
    ) -> None:
        self.file = file
        self.pointer = pointer
        self.usage = tuple(usage)
        self.render = render
        #: append one row per trial; the list object stays the same (bind its ``append``)
        self.rows: list[Row] = []

    def __len__(self) -> int:
        return len(self.rows)

    def flush(self) -> Iterator[TrialColumns]:
        """The rows gathered so far as one block of columns, if there are any."""
        if self.rows:
            yield self.columns()

    def columns(self, suite: str | None = None) -> TrialColumns:
        """The rows gathered so far as columns (every row in suite ``suite`` when given), and
        none left."""
        width = 8 + len(self.usage)
        transposed: list[Sequence[Any]] = list(zip(*self.rows, strict=True)) or [()] * width
        self.rows.clear()
        where, stimulus, suites, trial, status, passed, score, message = transposed[:8]
        return TrialColumns(
            file=self.file,
            lines=where,
            stimulus=stimulus,
            suite=suites if suite is None else [suite] * len(stimulus),
            trial=trial,
            status=status,
            passed=passed,
            score=score,
            message=message,
            usage=dict(zip(self.usage, transposed[8:], strict=True)),
            pointer=self.pointer,
            render=self.render,
        )


class Pending(Protocol):
    """Rows gathered and not yet handed on (:class:`Rows`, or a reader's several of them)."""

    def flush(self) -> Iterator[TrialColumns]: ...


def flushed_first(pending: Pending, blocks: Iterator[T]) -> Generator[T | TrialColumns, None, None]:
    """``blocks``, and when it raises an :class:`InputError`, first the rows read before the
    faulty record: the table then raises an earlier trial's error (a duplicate) before it, as
    it would had the trials come one by one."""
    try:
        yield from blocks
    except InputError:
        yield from pending.flush()
        raise
