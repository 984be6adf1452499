"""The records every input format is read into, and the trial table they are reduced to.

Adapters (``gate.ingest.*``) yield :class:`Trial` records (or, on the fast path,
a :class:`TrialBatch` of many records, or the per-stimulus totals of a
:class:`StimulusCounts` row) and may declare a :class:`SuiteSpec`. The table that
decides and stores them lives in :mod:`gate.table` (its storage engine in
:mod:`gate.table.store`, the pass rule in :mod:`gate.table.rule`); its names are
importable from here too. See docs/scale.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gate.errors import Provenance

if TYPE_CHECKING:
    # numpy and the table are imported where first needed, not at module import: the
    # CLI imports this module (via gate.ingest) for every command, ``--help`` too.
    import numpy as np

    from gate.table import PerTrialDataMissing as PerTrialDataMissing
    from gate.table import StimulusTrials as StimulusTrials
    from gate.table import TableSummary as TableSummary
    from gate.table import TrialTable as TrialTable
    from gate.table.rule import Resolved as Resolved
    from gate.table.rule import grader_aggregate as grader_aggregate
    from gate.table.rule import resolve as resolve

Status = Literal["ok", "error", "skipped"]
STATUSES: tuple[Status, ...] = ("ok", "error", "skipped")
DEFAULT_SUITE = "default"


@dataclass(frozen=True, slots=True)
class GraderResult:
    """One grader's verdict on one trial."""

    name: str
    score: float | None = None
    passed: bool | None = None


@dataclass(frozen=True, slots=True)
class Trial:
    """One run of one stimulus, as read from any format.

    At least one of ``passed``, ``score``, ``outcome`` or ``graders`` decides the
    trial unless ``status`` is ``error`` or ``skipped``.
    """

    stimulus: str
    trial: int
    suite: str = DEFAULT_SUITE
    status: Status = "ok"
    passed: bool | None = None
    score: float | None = None
    outcome: str | None = None
    graders: tuple[GraderResult, ...] = ()
    tags: tuple[str, ...] = ()
    message: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    provenance: Provenance | None = None


@dataclass(frozen=True, slots=True)
class SuiteSpec:
    """What a suite declares once for all its trials.

    ``categories`` maps a categorical outcome to its weight in [0, 1], in the
    order that defines the category index (scorio's ``R`` entries and ``w``).
    ``pass_threshold``: a trial whose aggregate score reaches it passes; when
    absent, graders must all pass and a bare score must reach 1.
    """

    name: str
    categories: Mapping[str, float] | None = None
    grader_weights: Mapping[str, float] = field(default_factory=dict)
    pass_threshold: float | None = None
    provenance: Provenance | None = None

    @property
    def category_names(self) -> tuple[str, ...]:
        return tuple(self.categories) if self.categories else ()

    @property
    def category_weights(self) -> np.ndarray:
        import numpy as np

        return np.array(list(self.categories.values()) if self.categories else [0.0, 1.0])


def trial_from_fields(
    fields: Mapping[str, Any],
    *,
    suite: str,
    stimulus: str,
    index: int,
    tags: tuple[str, ...] = (),
    where: Provenance | None = None,
) -> Trial:
    """A :class:`Trial` from the fields of a native trial record (docs/format.md)."""
    return Trial(
        stimulus=stimulus,
        trial=int(index),  # JSON Schema's "integer" admits 3.0; the table wants the int 3
        suite=suite,
        status=fields.get("status", "ok"),
        passed=fields.get("passed"),
        score=fields.get("score"),
        outcome=fields.get("outcome"),
        graders=tuple(
            GraderResult(g["name"], g.get("score"), g.get("passed"))
            for g in fields.get("graders", ())
        ),
        tags=tags + tuple(fields.get("tags", ())),
        message=fields.get("message"),
        metadata=fields.get("metadata", {}),
        provenance=where,
    )


@dataclass(frozen=True, slots=True)
class TrialBatch:
    """Many schema-valid native trial records of one file, reduced column-wise in one call.

    JSONL: ``records`` are consecutive lines starting at ``first_line``; each
    carries ``stimulus`` and ``trial`` and maybe ``suite`` (else ``suite``).
    Nested document: ``records`` are trials of one ``stimulus`` found at ``pointer``
    (record i at ``pointer/(first_position + i)``; its index ``trial`` or that position).
    The result is exactly that of adding the records one by one as :class:`Trial`.
    """

    records: Sequence[Mapping[str, Any]]
    file: str
    first_line: int | None = None
    pointer: str | None = None
    suite: str = DEFAULT_SUITE
    stimulus: str | None = None
    tags: tuple[str, ...] = ()
    #: the records' trial indices when the reader already has them as int64 (saves a pass);
    #: nested document: given only when no record has a ``trial`` (each is its position)
    indices: Any = None
    #: nested document: the position of ``records[0]`` in its stimulus's trials array
    first_position: int = 0

    def where(self, position: int) -> Provenance:
        if self.first_line is not None:
            return Provenance(self.file, self.first_line + position)
        return Provenance(
            self.file, pointer=f"{self.pointer or ''}/{self.first_position + position}"
        )

    def trial(self, position: int) -> Trial:
        record = self.records[position]
        default_index = self.first_position + position
        return trial_from_fields(
            record,
            suite=record.get("suite", self.suite),
            stimulus=self.stimulus if self.stimulus is not None else record["stimulus"],
            index=record["trial"] if self.stimulus is None else record.get("trial", default_index),
            tags=self.tags,
            where=self.where(position),
        )


@dataclass(frozen=True, slots=True)
class StimulusCounts:
    """One stimulus given as totals (a counts file row) instead of trials.

    ``n`` trials count (status ok or error), ``c`` of them passed, ``errors``
    of them errored; ``skipped`` more never count. ``score_sum`` is the sum of
    the ok trials' scores (absent: each ok trial scores 1 if it passed, else 0,
    or its category's weight); ``categories`` counts the ok trials per category;
    ``messages`` say why trials failed, errored or were skipped, first ones first (text,
    or a :class:`TrialMessage`). No trial order is known, so order-dependent metrics
    cannot use it.
    """

    stimulus: str
    n: int
    c: int
    suite: str = DEFAULT_SUITE
    errors: int = 0
    skipped: int = 0
    score_sum: float | None = None
    categories: Mapping[str, int] | None = None
    tags: tuple[str, ...] = ()
    messages: tuple[str | TrialMessage, ...] = ()
    provenance: Provenance | None = None


class Coded(Sequence[Any]):
    """A column given as a code per row and the value of each code (a dictionary-encoded
    column, as pyarrow reads a CSV block): a sequence of the values, with no Python object
    made per row until one is asked for. The table reads such a column through its few
    distinct values (a million verdicts are three lookups), not row by row.

    >>> import numpy as np
    >>> column = Coded(np.array([1, 0, 1]), ["fail", "pass"])
    >>> list(column), column[1:].count("pass"), len(column)
    (['pass', 'fail', 'pass'], 1, 3)
    """

    __slots__ = ("codes", "values")

    def __init__(self, codes: np.ndarray, values: list[Any]) -> None:
        self.codes = codes
        self.values = values

    @classmethod
    def of_integers(cls, integers: np.ndarray) -> Coded:
        """An integer array coded, its distinct values in increasing order: through a mark
        per value where they are few and small (trial indices, task ids; linear time, a
        tenth of a sort at a million), else by sorting.

        >>> import numpy as np
        >>> column = Coded.of_integers(np.array([7, 3, 7, 10**12]))
        >>> column.codes.tolist(), column.values
        ([1, 0, 1, 2], [3, 7, 1000000000000])
        >>> column = Coded.of_integers(np.array([2, 0, 2, 5]))
        >>> column.codes.tolist(), column.values
        ([1, 0, 1, 2], [0, 2, 5])
        """
        import numpy as np

        if integers.size and integers.min() >= 0 and integers.max() < 2 * integers.size + 1024:
            present = np.zeros(int(integers.max()) + 1, dtype=bool)
            present[integers] = True
            distinct = np.flatnonzero(present)
            codes = (np.cumsum(present) - 1)[integers]
        else:
            distinct, codes = np.unique(integers, return_inverse=True)
        return cls(codes.ravel(), distinct.tolist())

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, at: Any) -> Any:
        if isinstance(at, slice):
            return Coded(self.codes[at], self.values)
        return self.values[int(self.codes[at])]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.spread())

    def count(self, value: Any) -> int:
        import numpy as np

        matching = [code for code, each in enumerate(self.values) if each == value]
        return int(np.count_nonzero(np.isin(self.codes, matching)))

    def spread(self) -> list[Any]:
        """Each row's value."""
        import numpy as np

        distinct = np.empty(len(self.values), dtype=object)
        for code, value in enumerate(self.values):  # np.array() would make tuples rows
            distinct[code] = value
        spread: list[Any] = distinct[self.codes].tolist()
        return spread

    def where(self, test: Callable[[Any], bool]) -> np.ndarray:
        """Each row's ``test`` of its value, as booleans (``test`` called once a value)."""
        import numpy as np

        return self.lookup([test(value) for value in self.values], np.bool_)

    def mapped(self, reader: Callable[[list[Any]], list[Any]]) -> Coded:
        """The column with ``reader`` (given every distinct value at once) applied."""
        return Coded(self.codes, reader(self.values))

    def lookup(self, table: Sequence[Any], dtype: Any) -> np.ndarray:
        """Each row's entry of ``table`` (one per value, as an array of ``dtype``)."""
        import numpy as np

        found: np.ndarray = np.asarray(table, dtype=dtype)[self.codes]
        return found


@dataclass(frozen=True)
class TrialColumns:
    """Many trials of one file as columns, one entry per trial: what a columnar reader (a
    CSV or JSONL table read a block at a time) gives the table, which reduces them in one
    call with exactly the result of adding :meth:`trial` of each one by one.

    ``passed``/``score``/``outcome``: None where the row gives none; ``usage``: cost_usd,
    duration_s, tokens (None where not given). A column of numbers (``score``, a usage
    field) may be a float array, NaN where the row gives none. ``lines``: where each row
    starts, or, when ``pointer`` is given (the trials are elements of one JSON array), each
    one's position in the array at that JSON pointer (``""``: the root).

    ``render``: a message whose text costs more to make than the trial costs to read (tau-bench's
    reward details, tau2's reward breakdown) may be given as the tuple of arguments of
    ``render``, which makes its text (or None: no message) only for the messages the table
    keeps, a few per stimulus, and for :meth:`trial_at`.

    Any column may be :class:`Coded` (a code per row and the value of each code): the table
    then looks each distinct value up once (a stimulus's row, a verdict, a number), not
    once per row.
    """

    file: str
    lines: Sequence[int]
    stimulus: Sequence[str]
    suite: Sequence[str]
    trial: Sequence[int]
    status: Sequence[Status]
    passed: Sequence[bool | None]
    score: Sequence[float | None] | np.ndarray
    outcome: Sequence[str | None] | None = None
    message: Sequence[str | tuple[Any, ...] | None] | None = None
    tags: Sequence[tuple[str, ...]] | None = None
    usage: Mapping[str, Sequence[Any] | np.ndarray] = field(default_factory=dict)
    pointer: str | None = None
    render: Callable[..., str | None] | None = None

    def __len__(self) -> int:
        return len(self.stimulus)

    def message_of(self, i: int) -> str | None:
        """The message of row ``i`` (rendered when given as ``render``'s arguments)."""
        if self.message is None:
            return None
        message = self.message[i]
        if isinstance(message, tuple):
            assert self.render is not None, "a message given as arguments needs render"
            return self.render(*message)
        return message

    def where(self, i: int) -> Provenance:
        """Where row ``i`` was read: its line, or its element's JSON pointer."""
        if self.pointer is None:
            return Provenance(self.file, self.lines[i])
        return Provenance(self.file, pointer=f"{self.pointer}/{self.lines[i]}")

    def trial_at(self, i: int) -> Trial:
        """Row ``i`` as a :class:`Trial` (its usage as metadata)."""
        usage = {name: _given(values[i]) for name, values in self.usage.items()}
        return Trial(
            stimulus=self.stimulus[i],
            trial=self.trial[i],
            suite=self.suite[i],
            status=self.status[i],
            passed=self.passed[i],
            score=_given(self.score[i]),
            outcome=self.outcome[i] if self.outcome is not None else None,
            tags=self.tags[i] if self.tags is not None else (),
            message=self.message_of(i),
            metadata={name: value for name, value in usage.items() if value is not None},
            provenance=self.where(i),
        )


def _given(value: Any) -> Any:
    """A column's value, None where the row gives none (a float array's NaN); a number as
    Python's float, not numpy's."""
    if isinstance(value, float):  # numpy's float64 is one too
        return None if value != value else float(value)
    return value


@dataclass(frozen=True)
class CountsColumns:
    """Many plain counts rows of one file as columns (lines ``first_line`` on, one per
    row): what the counts reader gives the table for a block of rows with no categories,
    tags or messages, which adds them in one call with exactly the result of adding
    :meth:`row` of each one by one. ``score_sum``: None where a row gives none."""

    file: str
    first_line: int
    stimulus: Sequence[str]
    suite: Sequence[str]
    n: Sequence[int]
    c: Sequence[int]
    errors: Sequence[int]
    skipped: Sequence[int]
    score_sum: Sequence[float | None]

    def __len__(self) -> int:
        return len(self.stimulus)

    def row(self, i: int) -> StimulusCounts:
        """Row ``i`` as a :class:`StimulusCounts`."""
        return StimulusCounts(
            stimulus=self.stimulus[i],
            n=self.n[i],
            c=self.c[i],
            suite=self.suite[i],
            errors=self.errors[i],
            skipped=self.skipped[i],
            score_sum=self.score_sum[i],
            provenance=Provenance(self.file, self.first_line + i),
        )


Outcome = Literal["failed", "errored", "skipped"]


@dataclass(frozen=True, slots=True)
class TrialMessage:
    """Why a trial did not pass, as the table keeps it for the report: the message text (cut
    to :data:`gate.limits.KEPT_MESSAGE_CHARS`), the trial's outcome and index (None when a
    counts row gave the text without them) and where the trial was read."""

    text: str
    outcome: Outcome | None = None
    trial: int | None = None
    where: Provenance | None = None

    def as_record(self) -> dict[str, Any]:
        """The message as JSON fields (the report's, and a counts file's)."""
        where = self.where
        return {
            "trial": self.trial,
            "outcome": self.outcome,
            "text": self.text,
            "file": where.file if where else None,
            "line": where.line if where else None,
            "pointer": where.pointer if where else None,
        }


_TABLE_NAMES = {
    "TrialTable": "gate.table",
    "StimulusTrials": "gate.table",
    "TableSummary": "gate.table",
    "PerTrialDataMissing": "gate.table",
    "Resolved": "gate.table.rule",
    "resolve": "gate.table.rule",
    "grader_aggregate": "gate.table.rule",
}


def __getattr__(name: str) -> Any:
    """The table's names, importable from here as before the table had its own package
    (imported on first use: the table needs numpy, these records do not)."""
    module = _TABLE_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'gate.trials' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
