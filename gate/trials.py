"""The one trial table every input format is reduced to.

Adapters (``gate.ingest.*``) yield :class:`Trial` records (or, on the fast path,
a :class:`TrialBatch` of many records, or the per-stimulus totals of a
:class:`StimulusCounts` row) and may declare a :class:`SuiteSpec`;
:class:`TrialTable` resolves each trial's pass/fail and score once and reduces
it to compact per-stimulus storage: one outcome byte, one score and one packed
provenance integer per trial slot, indexed by trial number, so the trials of a
stimulus are always in trial order (order-dependent metrics need it) and the
same (suite, stimulus, trial) seen twice is rejected, naming both places.

Memory is about 17 bytes per trial plus a few hundred per stimulus (a Python
list of values per trial costs ~30 times that); suites too large for that go
through a counts file (``gate.ingest.counts``), where memory grows with the
number of stimuli only. See docs/scale.md.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gate.errors import InputError, Provenance

if TYPE_CHECKING:
    # numpy is imported where the table first needs it, not at module import: the
    # CLI imports this module (via gate.ingest) for every command, ``--help`` too.
    import numpy as np
    import numpy.typing as npt

Status = Literal["ok", "error", "skipped"]
STATUSES: tuple[Status, ...] = ("ok", "error", "skipped")
DEFAULT_SUITE = "default"

#: One byte per trial slot. ABSENT marks a trial index no trial has.
ABSENT, PASS, FAIL, ERROR, SKIPPED = 0, 1, 2, 3, 4
_STATUS_OF: dict[int, Status] = {PASS: "ok", FAIL: "ok", ERROR: "error", SKIPPED: "skipped"}
_CODE_OF_STATUS = {"error": ERROR, "skipped": SKIPPED}
#: outcome letters of the counted trials, in trial order (see ``StimulusScore.outcomes``).
_LETTERS = bytes.maketrans(bytes([PASS, FAIL, ERROR]), b"PFE")

#: A dense slot array never holds more than this many slots, or 4 per trial read,
#: whichever is larger; trial indices past its width go to a per-stimulus dict.
_DENSE_FLOOR = 1 << 20
#: A packed provenance: (source id + 1) << _POS_BITS | position; 0 means unknown.
_POS_BITS = 40
_POS_MASK = (1 << _POS_BITS) - 1
_MAX_SOURCES = (1 << 22) - 1
#: Batches smaller than this go trial by trial: numpy's per-call cost would dominate.
_SMALL_BATCH = 32


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
    Nested document: ``records`` are the trials of one ``stimulus`` found at
    ``pointer`` (record i at ``pointer/i``; its index ``trial`` or i).
    The result is exactly that of adding the records one by one as :class:`Trial`.
    """

    records: Sequence[Mapping[str, Any]]
    file: str
    first_line: int | None = None
    pointer: str | None = None
    suite: str = DEFAULT_SUITE
    stimulus: str | None = None
    tags: tuple[str, ...] = ()
    #: the records' trial indices when the reader already has them as int64 (saves a pass)
    indices: Any = None

    def where(self, position: int) -> Provenance:
        if self.first_line is not None:
            return Provenance(self.file, self.first_line + position)
        return Provenance(self.file, pointer=f"{self.pointer or ''}/{position}")

    def trial(self, position: int) -> Trial:
        record = self.records[position]
        return trial_from_fields(
            record,
            suite=record.get("suite", self.suite),
            stimulus=self.stimulus if self.stimulus is not None else record["stimulus"],
            index=record["trial"] if self.stimulus is None else record.get("trial", position),
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
    ``messages`` are those of errored or skipped trials, first ones first.
    No trial order is known, so order-dependent metrics cannot use it.
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
    messages: tuple[str, ...] = ()
    provenance: Provenance | None = None


def _where(trial: Trial) -> str:
    if trial.provenance:
        return str(trial.provenance)
    return f"trial {trial.trial} of {trial.stimulus!r}"


def grader_aggregate(graders: Iterable[GraderResult], weights: Mapping[str, float]) -> float:
    """Weighted mean of grader scores (reference 001); equal weights where none is given.

    A grader without a score counts as 1.0 when it passed and 0.0 otherwise.

    >>> g = [GraderResult("file-exists", 1.0), GraderResult("output-contains", 0.0)]
    >>> round(grader_aggregate(g, {"file-exists": 1.0, "output-contains": 0.5}), 2)
    0.67
    """
    total = weight_sum = 0.0
    for grader in graders:
        weight = weights.get(grader.name, 1.0)
        score = grader.score if grader.score is not None else float(bool(grader.passed))
        total += weight * score
        weight_sum += weight
    return total / weight_sum if weight_sum > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Resolved:
    """A trial's verdict after the suite's rules are applied."""

    passed: bool
    score: float
    category: int  # index into the suite's categories; 1/0 for pass/fail without categories
    scored: bool  # the score came from graders, a score or a category, not from pass/fail alone


def resolve(trial: Trial, spec: SuiteSpec) -> Resolved:
    """Apply the suite's pass rule to one trial (see docs/format.md, "Deciding a trial")."""
    if trial.status != "ok":
        return Resolved(False, 0.0, 0, False)
    threshold = spec.pass_threshold
    category = -1
    if trial.graders:
        score = grader_aggregate(trial.graders, spec.grader_weights)
        scored = True
        if threshold is not None:
            derived = score >= threshold
        else:
            derived = all(
                g.passed if g.passed is not None else (g.score or 0.0) >= 1.0 for g in trial.graders
            )
    elif trial.outcome is not None:
        names = spec.category_names
        if trial.outcome not in names:
            raise InputError(
                f"outcome {trial.outcome!r} is not a category of suite {spec.name!r}",
                trial.provenance,
                expected="one of " + (", ".join(map(repr, names)) or "(no categories declared)"),
            )
        category = names.index(trial.outcome)
        assert spec.categories is not None
        score = float(spec.categories[trial.outcome])
        scored = True
        best = max(spec.categories.values())
        derived = score >= threshold if threshold is not None else score >= best
    elif trial.score is not None:
        score = float(trial.score)
        scored = True
        derived = score >= (threshold if threshold is not None else 1.0)
    elif trial.passed is not None:
        score = float(trial.passed)
        scored = False
        derived = trial.passed
    else:
        raise InputError(
            "trial has no outcome",
            trial.provenance,
            expected="one of passed, score, outcome or graders (or status error/skipped)",
        )
    passed = trial.passed if trial.passed is not None else derived
    if category < 0:
        category = int(passed)
    return Resolved(bool(passed), score, category, scored)


def _neumaier(total: float, compensation: float, values: Iterable[float]) -> tuple[float, float]:
    """Compensated (Neumaier) summation, continued from (total, compensation).

    Sums run in trial-index order, never reading order, so a stimulus's score sum
    is the same however its trials were read or stored; compensation keeps it
    accurate to about one rounding whatever the number of trials.
    """
    for value in values:
        step = total + value
        if abs(total) >= abs(value):
            compensation += (total - step) + value
        else:
            compensation += (value - step) + total
        total = step
    return total, compensation


def _flat(array: npt.NDArray[Any]) -> Any:
    # numpy's stubs do not declare the buffer protocol for mypy (Python < 3.12).
    return memoryview(array.reshape(-1))  # type: ignore[arg-type]


def _code(status: str, passed: bool) -> int:
    if status == "ok":
        return PASS if passed else FAIL
    return _CODE_OF_STATUS[status]


class PerTrialDataMissing(ValueError):
    """A per-trial view was asked of a stimulus that came as totals (a counts file row)."""


class StimulusTrials:
    """One stimulus of a :class:`TrialTable`: a view on its trials (in trial order) or totals.

    The per-trial lists (``indices``, ``passed``, ``statuses``, ``scores``,
    ``categories``) are built on request; the sufficient statistics
    (:meth:`n`, :meth:`c`, ``errors``, ``skipped``, :meth:`score_sum`,
    :meth:`outcomes`) are what scoring reads. A stimulus from a counts file has
    only the latter (:attr:`ordered` is False).
    """

    __slots__ = ("_crow", "_row", "_table", "messages", "stimulus", "suite", "tags")

    def __init__(self, table: TrialTable, suite: str, stimulus: str) -> None:
        self._table = table
        self._row = -1  # row of the slot arrays, -1 until a trial arrives
        self._crow = -1  # row of the counts arrays, -1 unless given as totals
        self.suite = suite
        self.stimulus = stimulus
        self.tags: set[str] = set()
        #: the first three messages of errored or skipped trials, in reading order.
        self.messages: list[str] = []

    def __repr__(self) -> str:
        return f"StimulusTrials({self.suite!r}, {self.stimulus!r}, n={self.n()}, c={self.c()})"

    @property
    def ordered(self) -> bool:
        """True when per-trial outcomes in trial order are known (trials, not a counts row)."""
        return self._crow < 0

    def _cells(self) -> list[tuple[int, int, float, int]]:
        if self._crow >= 0:
            raise PerTrialDataMissing(
                f"stimulus {self.stimulus!r} of suite {self.suite!r} comes from a counts file: "
                "it has totals, not per-trial data"
            )
        return self._table._cells(self._row)

    @property
    def indices(self) -> list[int]:
        return [cell[0] for cell in self._cells()]

    @property
    def where(self) -> dict[int, Provenance | None]:
        """Where each trial was read, by trial index (unpacked on request)."""
        self._cells()  # refuses a counts row
        return self._table._provenances(self._row)

    @property
    def passed(self) -> list[bool]:
        return [cell[1] == PASS for cell in self._cells()]

    @property
    def statuses(self) -> list[Status]:
        return [_STATUS_OF[cell[1]] for cell in self._cells()]

    @property
    def scores(self) -> list[float]:
        return [cell[2] for cell in self._cells()]

    @property
    def categories(self) -> list[int]:
        return [cell[3] for cell in self._cells()]

    def counted(self, errors_as_failures: bool = True) -> list[int]:
        """Positions of the trials that count towards n: never skipped ones, errors by policy."""
        keep = (PASS, FAIL, ERROR) if errors_as_failures else (PASS, FAIL)
        return [i for i, cell in enumerate(self._cells()) if cell[1] in keep]

    def _totals(self) -> tuple[int, int, int, int]:
        """(passed, failed, errored, skipped) trials."""
        return self._table._totals(self)

    @property
    def errors(self) -> int:
        return self._totals()[2]

    @property
    def skipped(self) -> int:
        return self._totals()[3]

    def n(self, errors_as_failures: bool = True) -> int:
        """Trials that count: every one but skipped ones, and errored ones when excluded."""
        passed, failed, errored, _ = self._totals()
        return passed + failed + (errored if errors_as_failures else 0)

    def c(self) -> int:
        """Trials that passed."""
        return self._totals()[0]

    def score_sum(self) -> float:
        """Sum of the scores of the counted trials (errored ones score 0), in trial order."""
        return self._table._score_sum(self)

    def outcomes(self, errors_as_failures: bool = True) -> str:
        """Counted trials in trial order: P passed, F failed, E errored; "" without order."""
        return self._table._outcomes(self, errors_as_failures)

    @property
    def scored(self) -> bool:
        return self._table._is_scored(self)

    @property
    def has_graders(self) -> bool:
        return self._row >= 0 and bool(self._table._graders[self._row])


@dataclass(frozen=True)
class TableSummary:
    """The sufficient statistics of every stimulus, in table order, as arrays."""

    records: list[StimulusTrials]
    n: npt.NDArray[np.int64]
    c: npt.NDArray[np.int64]
    errors: npt.NDArray[np.int64]
    skipped: npt.NDArray[np.int64]
    score_sum: npt.NDArray[np.float64]
    errors_as_failures: bool

    def outcomes(self, i: int) -> str:
        return self.records[i].outcomes(self.errors_as_failures)


_Cell = tuple[int, float, int, int]  # (code, score, category, packed provenance)


class TrialTable:
    """All trials of a check, grouped by (suite, stimulus), duplicates rejected."""

    def __init__(self) -> None:
        import numpy as np

        self.suites: dict[str, SuiteSpec] = {}
        self.stimuli: dict[tuple[str, str], StimulusTrials] = {}
        self.sources: list[str] = []
        self._trials = 0
        # Dense slots: row r (a stimulus), column t (a trial index < width).
        self._rows: list[StimulusTrials] = []
        self._row_of: dict[tuple[str, str], int] = {}  # (suite, stimulus) → row, for batches
        self._cap = 0
        self._width = 0
        self._code = np.zeros((0, 0), dtype=np.uint8)
        self._score = np.zeros((0, 0), dtype=np.float64)
        self._where = np.zeros((0, 0), dtype=np.int64)
        self._views()
        self._cat: npt.NDArray[np.int16] | None = None  # only once a category is not 1/0
        self._scored = np.zeros(0, dtype=bool)
        self._graders = np.zeros(0, dtype=bool)
        self._bar = np.zeros(0, dtype=np.float64)  # the score a bare score must reach, per row
        self._bar_set = 0  # rows below this have their _bar
        # Trial indices at or past the width (sparse or ragged ones): row → index → cell.
        self._extra: dict[int, dict[int, _Cell]] = {}
        # Stimuli given as totals (counts rows), one entry per such stimulus.
        self._c_totals = array("q")  # passed, failed, errored, skipped: 4 per row
        self._c_score = array("d")
        self._c_scored = bytearray()
        self._c_where = array("q")
        self._c_categories: dict[int, tuple[int, ...]] = {}
        # Packed provenance: sources are (file, pointer prefix or None for a line number).
        self._sources: list[tuple[str, str | None]] = []
        self._source_ids: dict[tuple[str, str | None], int] = {}
        self._verbatim: list[Provenance] = []

    # -- suites -------------------------------------------------------------------------

    def declare_suite(self, spec: SuiteSpec) -> None:
        """Declare a suite's settings; repeating the same declaration (one per file) is fine."""
        if spec.categories is not None:
            for name, weight in spec.categories.items():
                if not (math.isfinite(weight) and 0.0 <= weight <= 1.0):
                    raise InputError(
                        f"category {name!r} of suite {spec.name!r} has weight {weight}",
                        spec.provenance,
                        expected="a weight in [0, 1]",
                    )
        known = self.suites.get(spec.name)
        if known is None:
            self.suites[spec.name] = spec
        elif (
            known.categories != spec.categories
            or dict(known.grader_weights) != dict(spec.grader_weights)
            or known.pass_threshold != spec.pass_threshold
        ):
            raise InputError(
                f"suite {spec.name!r} is declared twice with different settings "
                f"(first at {known.provenance or 'its first trial, which implied the defaults'})",
                spec.provenance,
            )

    def spec(self, suite: str) -> SuiteSpec:
        if suite not in self.suites:
            self.suites[suite] = SuiteSpec(name=suite)
        return self.suites[suite]

    # -- provenance, packed -------------------------------------------------------------

    def _source(self, file: str, prefix: str | None) -> int:
        key = (file, prefix)
        source = self._source_ids.get(key)
        if source is None:
            source = self._source_ids[key] = len(self._sources)
            self._sources.append(key)
        return source

    def _pack(self, where: Provenance | None) -> int:
        if where is None:
            return 0
        if where.pointer is None and where.line is not None and 0 <= where.line <= _POS_MASK:
            source = self._source(where.file, None)
            if source < _MAX_SOURCES:
                return (source + 1) << _POS_BITS | where.line
        elif where.pointer and where.line is None:
            # "/stimuli/3/trials/7" → source ("/stimuli/3/trials/") and position 7, so that
            # the sources grow with stimuli, not trials.
            head, _, tail = where.pointer.rpartition("/")
            if tail.isdigit() and str(int(tail)) == tail and int(tail) <= _POS_MASK:
                source = self._source(where.file, head + "/")
                if source < _MAX_SOURCES:
                    return (source + 1) << _POS_BITS | int(tail)
        self._verbatim.append(where)
        return len(self._verbatim)

    def _unpack(self, packed: int) -> Provenance | None:
        if packed == 0:
            return None
        source, position = (packed >> _POS_BITS) - 1, packed & _POS_MASK
        if source < 0:
            return self._verbatim[position - 1]
        file, prefix = self._sources[source]
        if prefix is None:
            return Provenance(file, position)
        return Provenance(file, pointer=f"{prefix}{position}")

    # -- slot storage -------------------------------------------------------------------

    def _record(self, suite: str, stimulus: str) -> StimulusTrials:
        record = self.stimuli.get((suite, stimulus))
        if record is None:
            record = self.stimuli[(suite, stimulus)] = StimulusTrials(self, suite, stimulus)
        return record

    def _give_row(self, record: StimulusTrials, where: Provenance | None) -> int:
        if record._row < 0:
            if record._crow >= 0:
                raise self._mixed_error(record, where)
            record._row = len(self._rows)
            self._rows.append(record)
            self._row_of[(record.suite, record.stimulus)] = record._row
        return record._row

    def _set_bar(self) -> None:
        """Give new rows their suite's bar (a suite's settings never change once used)."""
        for row in range(self._bar_set, len(self._rows)):
            spec = self.spec(self._rows[row].suite)
            self._bar[row] = spec.pass_threshold if spec.pass_threshold is not None else 1.0
        self._bar_set = len(self._rows)

    def _fit(self, rows: int, indices: npt.NDArray[np.int64] | int, incoming: int) -> None:
        """Make room for ``rows`` rows and, within the memory budget, for ``indices``.

        The dense arrays never hold more than 4 slots per trial read (or a floor):
        an index they cannot hold within that (a sparse 10**9, or one stimulus with
        far more trials than the rest) goes to the overflow dicts instead, and
        does not widen the arrays for everyone.
        """
        cap = self._cap
        if rows > cap:
            cap = max(64, 1 << (rows - 1).bit_length())
        budget = max(_DENSE_FLOOR, 4 * (self._trials + incoming))
        room = 1 << ((budget // cap).bit_length() - 1)  # the widest power of two in budget
        if isinstance(indices, int):
            fitting = indices if indices < room else -1
        else:
            fitting = int(indices[indices < room].max(initial=-1))
        width = self._width
        if fitting >= width:
            width = max(8, 1 << fitting.bit_length())
        width = min(width, room)
        if cap != self._cap or width != self._width:
            self._reshape(cap, width)

    def _reshape(self, cap: int, width: int) -> None:
        """Reallocate to ``cap`` rows × ``width`` slots; trials move so that a trial index is
        in the dense arrays exactly when it is below the width."""
        import numpy as np

        used = min(len(self._rows), self._cap)  # rows just given may not have storage yet
        if width < self._width:
            self._spill(width)
        keep = min(width, self._width)

        def grown(old: npt.NDArray[Any], dtype: Any) -> npt.NDArray[Any]:
            new = np.zeros((cap, width), dtype=dtype)
            new[:used, :keep] = old[:used, :keep]
            return new

        self._code = grown(self._code, np.uint8)
        self._score = grown(self._score, np.float64)
        self._where = grown(self._where, np.int64)
        self._views()
        if self._cat is not None:
            self._cat = grown(self._cat, np.int16)
        if cap != self._cap:
            for name in ("_scored", "_graders", "_bar"):
                old = getattr(self, name)
                new = np.zeros(cap, dtype=old.dtype)
                new[:used] = old[:used]
                setattr(self, name, new)
        self._cap, self._width = cap, width
        if self._extra:
            self._unspill()

    def _views(self) -> None:
        """Flat memoryviews of the slot arrays, for the trial-by-trial path."""
        self._v_code = _flat(self._code)
        self._v_score = _flat(self._score)
        self._v_where = _flat(self._where)

    def _spill(self, width: int) -> None:
        """Move the trials at indices ≥ ``width`` to the overflow dicts (ragged suites)."""
        import numpy as np

        rows, columns = np.nonzero(self._code[: self._cap, width:])
        for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
            t = column + width
            self._extra.setdefault(row, {})[t] = self._cell_at(row, t)

    def _unspill(self) -> None:
        """Move overflow trials that the (wider) dense arrays can now hold into them."""
        for row in list(self._extra):
            cells = self._extra[row]
            for t in [t for t in cells if t < self._width]:
                code, score, category, where = cells.pop(t)
                self._code[row, t], self._score[row, t], self._where[row, t] = code, score, where
                if self._cat is not None or category != (code == PASS):
                    self._ensure_categories()[row, t] = category
            if not cells:
                del self._extra[row]

    def _cell_at(self, row: int, t: int) -> _Cell:
        code = int(self._code[row, t])
        category = int(self._cat[row, t]) if self._cat is not None else int(code == PASS)
        return (code, float(self._score[row, t]), category, int(self._where[row, t]))

    def _ensure_categories(self) -> npt.NDArray[np.int16]:
        import numpy as np

        if self._cat is None:
            # Until now every category was 1 for a pass and 0 otherwise.
            self._cat = (self._code == PASS).astype(np.int16)
        return self._cat

    def _cells(self, row: int) -> list[tuple[int, int, float, int]]:
        """(trial index, code, score, category) of every trial of ``row``, in trial order."""
        import numpy as np

        if row < 0:
            return []
        width = self._width
        codes = self._code[row, :width]
        columns = np.flatnonzero(codes)
        cats = (
            self._cat[row, columns].tolist()
            if self._cat is not None
            else (codes[columns] == PASS).astype(int).tolist()
        )
        cells = list(
            zip(
                columns.tolist(),
                codes[columns].tolist(),
                self._score[row, columns].tolist(),
                cats,
                strict=True,
            )
        )
        for t, (code, score, category, _) in sorted(self._extra.get(row, {}).items()):
            cells.append((t, code, score, category))
        return cells

    def _provenances(self, row: int) -> dict[int, Provenance | None]:
        import numpy as np

        if row < 0:
            return {}
        columns = np.flatnonzero(self._code[row, : self._width])
        packed = self._where[row, columns].tolist()
        found = {t: self._unpack(p) for t, p in zip(columns.tolist(), packed, strict=True)}
        for t, cell in sorted(self._extra.get(row, {}).items()):
            found[t] = self._unpack(cell[3])
        return found

    def _slot(self, row: int, t: int) -> int:
        """The code at (row, t): ABSENT when no trial has that index."""
        if t < self._width:
            return int(self._code[row, t])
        cell = self._extra.get(row, {}).get(t)
        return cell[0] if cell else ABSENT

    def _first_where(self, row: int, t: int) -> int:
        if t < self._width:
            return int(self._where[row, t])
        return self._extra[row][t][3]

    # -- adding -------------------------------------------------------------------------

    def add(self, trial: Trial | TrialBatch | StimulusCounts) -> None:
        """Add one trial, a batch of native records, or one stimulus's totals."""
        if not isinstance(trial, Trial):
            if isinstance(trial, TrialBatch):
                self.add_batch(trial)
            else:
                self.add_counts(trial)
            return
        t = trial.trial
        if t < 0:
            raise InputError(
                "trial index is negative",
                trial.provenance,
                expected="an integer ≥ 0",
                found=str(t),
            )
        row = self._row_of.get((trial.suite, trial.stimulus))
        if row is None:
            record = self._record(trial.suite, trial.stimulus)
            row = self._give_row(record, trial.provenance)
        record = self._rows[row]
        if t >= self._width or row >= self._cap:
            self._fit(len(self._rows), t, 1)
        width = self._width
        slot = row * width + t
        # The flat memoryviews make one trial's reads and writes ~4 times cheaper than
        # numpy's scalar indexing: adapters that add trial by trial are not slowed down.
        if t < width:
            if self._v_code[slot] != ABSENT:
                self._raise_twice(trial, self._v_where[slot])
        elif t in self._extra.get(row, ()):
            self._raise_twice(trial, self._extra[row][t][3])
        resolved = resolve(trial, self.suites.get(trial.suite) or self.spec(trial.suite))
        passed = resolved.passed
        code = (PASS if passed else FAIL) if trial.status == "ok" else _CODE_OF_STATUS[trial.status]
        where = self._pack(trial.provenance)
        if t < width:
            self._v_code[slot] = code
            self._v_score[slot] = resolved.score
            self._v_where[slot] = where
            if self._cat is not None or resolved.category != (code == PASS):
                self._ensure_categories()[row, t] = resolved.category
        else:
            self._extra.setdefault(row, {})[t] = (code, resolved.score, resolved.category, where)
        self._trials += 1
        if resolved.scored:
            self._scored[row] = True
        if trial.graders:
            self._graders[row] = True
        if trial.tags:
            record.tags.update(trial.tags)
        if trial.message and trial.status != "ok" and len(record.messages) < 3:
            record.messages.append(trial.message)

    def _raise_twice(self, trial: Trial, first_where: int) -> None:
        first = self._unpack(first_where)
        raise InputError(
            f"trial {trial.trial} of stimulus {trial.stimulus!r} in suite {trial.suite!r} "
            f"appears twice: first at {first or 'an earlier record'}, again at {_where(trial)}",
            trial.provenance,
        )

    def extend(self, trials: Iterable[Trial | TrialBatch | StimulusCounts]) -> None:
        for trial in trials:
            self.add(trial)

    def add_batch(self, batch: TrialBatch) -> None:
        """Add schema-valid native records column-wise; the same result as one by one.

        Plain records (``passed``/``score``/``status``) are resolved with numpy; those
        with graders, an outcome or tags, trial by trial with :func:`resolve`. When a
        record is a duplicate or cannot be resolved, every record before it is added
        and then the error is raised, as adding them one by one would.
        """
        import numpy as np

        records = batch.records
        size = len(records)
        if size < _SMALL_BATCH:
            for position in range(size):
                self.add(batch.trial(position))
            return
        # 1. Which stimulus, which trial index.
        if batch.stimulus is not None:
            record = self._record(batch.suite, batch.stimulus)
            self.spec(batch.suite)
            rows = np.full(size, self._give_row(record, batch.where(0)), dtype=np.int64)
            indices: Sequence[int] = [int(r.get("trial", i)) for i, r in enumerate(records)]
        else:
            rows = self._rows_of(batch)
            indices = batch.indices if batch.indices is not None else [r["trial"] for r in records]
        try:
            t = np.asarray(indices, dtype=np.int64)
        except OverflowError:  # an index past 2**63: never dense, so any stand-in past the width
            t = np.array([min(i, 1 << 62) for i in indices], dtype=np.int64)
        if int(t.min()) < 0:  # not schema-valid after all: let add() say where
            for position in range(size):
                self.add(batch.trial(position))
            return
        self._fit(len(self._rows), t, size)
        self._set_bar()

        # 2. Resolve: plain records (passed and/or score) with numpy, the rest one by one.
        passed = np.array([r.get("passed", 2) for r in records], dtype=np.int8)
        raw = np.array([r.get("score", math.nan) for r in records], dtype=np.float64)
        has_score = ~np.isnan(raw)
        derived = np.where(has_score, raw >= self._bar[rows], passed == 1)
        verdict = np.where(passed == 2, derived, passed == 1)
        code = np.where(verdict, PASS, FAIL).astype(np.uint8)
        score = np.where(has_score, raw, verdict.astype(np.float64))
        scored = has_score.copy()
        # One pass finds the few records that need more than that rule.
        attention = [
            i
            for i, r in enumerate(records)
            if "status" in r or "graders" in r or "outcome" in r or "tags" in r
        ]
        not_ok: list[int] = []
        tagged: list[int] = []
        graders: list[int] = []
        complex_: set[int] = set()
        for i in attention:
            fields = records[i]
            status = fields.get("status", "ok")
            if status != "ok":
                not_ok.append(i)
                code[i] = _CODE_OF_STATUS[status]
                score[i] = 0.0
                scored[i] = False
                if fields.get("graders"):
                    graders.append(i)
            elif "graders" in fields or "outcome" in fields:
                complex_.add(i)
            if "tags" in fields:
                tagged.append(i)
        # An ok record with no verdict: resolve() raises its error.
        unresolved = (passed == 2) & ~has_score
        unresolved[not_ok] = False
        complex_.update(np.flatnonzero(unresolved).tolist())
        special: dict[int, int] = {}  # position → category, where it is not 1/0
        stop, error = size, None
        for i in sorted(complex_):
            trial = batch.trial(i)
            try:
                resolved = resolve(trial, self.spec(trial.suite))
            except InputError as caught:
                stop, error = i, caught
                break
            code[i] = _code(trial.status, resolved.passed)
            score[i] = resolved.score
            scored[i] = resolved.scored
            if resolved.category != int(code[i] == PASS):
                special[i] = resolved.category
            if trial.graders:
                graders.append(i)

        # 3. Duplicates: the first record whose (stimulus, index) came before.
        width = self._width
        dense = t < width
        dense_at = np.flatnonzero(dense)
        flat = rows[dense_at] * width + t[dense_at]
        seen_before = dense_at[self._code.reshape(-1)[flat] != ABSENT]
        order = np.argsort(flat, kind="stable")
        repeats = order[1:][flat[order[1:]] == flat[order[:-1]]]  # later ones of equal keys
        candidates = self._sparse_duplicates(rows, indices, np.flatnonzero(~dense))
        if seen_before.size:
            candidates.append(int(seen_before.min()))
        if repeats.size:
            candidates.append(int(dense_at[repeats].min()))
        duplicate = min(candidates, default=size)
        if duplicate <= stop:
            stop, error = duplicate, None

        # 4. Store everything before ``stop``.
        take = dense_at[dense_at < stop]
        flat_take = rows[take] * width + t[take]
        where = self._batch_where(batch, size)
        self._code.reshape(-1)[flat_take] = code[take]
        self._score.reshape(-1)[flat_take] = score[take]
        self._where.reshape(-1)[flat_take] = where[take]
        if special or self._cat is not None:
            cats = (code == PASS).astype(np.int16)
            for i, category in special.items():
                cats[i] = category
            self._ensure_categories().reshape(-1)[flat_take] = cats[take]
        for i in np.flatnonzero(~dense).tolist():
            if i < stop:
                category = special.get(i, int(code[i] == PASS))
                cell = (int(code[i]), float(score[i]), category, int(where[i]))
                self._extra.setdefault(int(rows[i]), {})[int(indices[i])] = cell
        self._trials += stop
        self._scored[rows[:stop][scored[:stop]]] = True
        self._graders[rows[[i for i in graders if i < stop]]] = True
        for i in not_ok:
            if i >= stop:
                break
            message = records[i].get("message")
            holder = self._rows[int(rows[i])]
            if message and len(holder.messages) < 3:
                holder.messages.append(message)
        if batch.tags:
            self._rows[int(rows[0])].tags.update(batch.tags)
        for i in tagged:
            if i >= stop:
                break
            self._rows[int(rows[i])].tags.update(records[i]["tags"])

        if error is not None:
            raise error
        if stop < size:
            self._raise_duplicate(batch, stop)

    def _rows_of(self, batch: TrialBatch) -> npt.NDArray[np.int64]:
        """The row of each JSONL record's (suite, stimulus), new stimuli given one in order."""
        import numpy as np

        records, default = batch.records, batch.suite
        known = self._row_of.get
        rows = np.array([known((r.get("suite", default), r["stimulus"]), -1) for r in records])
        for i in np.flatnonzero(rows < 0).tolist():
            suite = records[i].get("suite", default)
            self.spec(suite)
            record = self._record(suite, records[i]["stimulus"])
            rows[i] = self._give_row(record, batch.where(i))
        return rows

    def _sparse_duplicates(
        self, rows: npt.NDArray[np.int64], indices: Sequence[int], positions: npt.NDArray[Any]
    ) -> list[int]:
        seen: set[tuple[int, int]] = set()
        for i in positions.tolist():
            key = (int(rows[i]), int(indices[i]))
            if key in seen or self._slot(*key) != ABSENT:
                return [i]
            seen.add(key)
        return []

    def _batch_where(self, batch: TrialBatch, size: int) -> npt.NDArray[np.int64]:
        """Packed provenance of every record: one source (file, pointer prefix) plus position."""
        import numpy as np

        if batch.first_line is not None:
            key: tuple[str, str | None] = (batch.file, None)
            start = batch.first_line
        else:
            key, start = (batch.file, f"{batch.pointer or ''}/"), 0
        source = self._source(*key)
        if source < _MAX_SOURCES and start + size <= _POS_MASK:
            base = (source + 1) << _POS_BITS | start
            return base + np.arange(size, dtype=np.int64)
        return np.array([self._pack(batch.where(i)) for i in range(size)], dtype=np.int64)

    def _raise_duplicate(self, batch: TrialBatch, position: int) -> None:
        trial = batch.trial(position)
        row = self._row_of[(trial.suite, trial.stimulus)]
        self._raise_twice(trial, self._first_where(row, trial.trial))

    def add_counts(self, counts: StimulusCounts) -> None:
        """Add one stimulus given as totals; the same stimulus twice is an error naming both."""
        where = counts.provenance
        spec = self.spec(counts.suite)
        ok = counts.n - counts.errors
        if counts.c + counts.errors > counts.n:
            raise InputError(
                f"stimulus {counts.stimulus!r}: c + errors exceeds n",
                where,
                expected="c (passed) + errors ≤ n (trials that count)",
                found=f"n={counts.n}, c={counts.c}, errors={counts.errors}",
            )
        if counts.n + counts.skipped == 0:
            raise InputError(
                f"stimulus {counts.stimulus!r} has no trials",
                where,
                expected="n ≥ 1 or skipped ≥ 1",
                found="n=0, skipped=0",
            )
        categories: tuple[int, ...] | None = None
        score_sum = counts.score_sum
        if counts.categories is not None:
            names = spec.category_names
            for name in counts.categories:
                if name not in names:
                    raise InputError(
                        f"category {name!r} is not a category of suite {spec.name!r}",
                        where,
                        expected="one of " + (", ".join(map(repr, names)) or "(none declared)"),
                    )
            categories = tuple(int(counts.categories.get(name, 0)) for name in names)
            if sum(categories) != ok:
                raise InputError(
                    f"stimulus {counts.stimulus!r}: category counts do not add up",
                    where,
                    expected=f"category counts summing to n - errors = {ok}",
                    found=str(sum(categories)),
                )
            if score_sum is None:
                assert spec.categories is not None
                weights = list(spec.categories.values())
                score_sum = math.fsum(k * w for k, w in zip(categories, weights, strict=True))
        if score_sum is not None and not (0.0 <= score_sum <= ok + 1e-9 * max(ok, 1)):
            raise InputError(
                f"stimulus {counts.stimulus!r}: score_sum out of range",
                where,
                expected=f"a sum of scores in [0, n - errors = {ok}]",
                found=repr(score_sum),
            )
        record = self._record(counts.suite, counts.stimulus)
        if record._crow >= 0 or record._row >= 0:
            raise self._mixed_error(record, where)
        record._crow = len(self._c_score)
        self._c_totals.extend((counts.c, ok - counts.c, counts.errors, counts.skipped))
        self._c_score.append(float(score_sum) if score_sum is not None else float(counts.c))
        self._c_scored.append(score_sum is not None)
        self._c_where.append(self._pack(where))
        if categories is not None:
            self._c_categories[record._crow] = categories
        record.tags.update(counts.tags)
        record.messages.extend(counts.messages[:3])
        self._trials += counts.n + counts.skipped

    def _mixed_error(self, record: StimulusTrials, again: Provenance | None = None) -> InputError:
        if record._crow >= 0:
            first = self._unpack(self._c_where[record._crow])
        else:
            packed = self._where[record._row]
            known = packed[packed > 0]
            first = self._unpack(int(known.min())) if known.size else None  # the earliest read
            if first is None and record._row in self._extra:
                first = self._unpack(next(iter(self._extra[record._row].values()))[3])
        return InputError(
            f"stimulus {record.stimulus!r} in suite {record.suite!r} appears twice: "
            f"first at {first or 'an earlier record'}, again at {again or 'a later record'} "
            "(a stimulus is given either as trials or as one counts row)",
            again,
        )

    # -- reading ------------------------------------------------------------------------

    def _totals(self, record: StimulusTrials) -> tuple[int, int, int, int]:
        if record._crow >= 0:
            base = 4 * record._crow
            return (
                self._c_totals[base],
                self._c_totals[base + 1],
                self._c_totals[base + 2],
                self._c_totals[base + 3],
            )
        if record._row < 0:
            return (0, 0, 0, 0)
        import numpy as np

        counts = np.bincount(self._code[record._row, : self._width], minlength=5).tolist()
        for code, *_ in self._extra.get(record._row, {}).values():
            counts[code] += 1
        return (counts[PASS], counts[FAIL], counts[ERROR], counts[SKIPPED])

    def _score_sum(self, record: StimulusTrials) -> float:
        if record._crow >= 0:
            return self._c_score[record._crow]
        if record._row < 0:
            return 0.0
        extra = self._extra.get(record._row, {})
        values = self._score[record._row, : self._width].tolist()
        total, compensation = _neumaier(0.0, 0.0, values + [extra[t][1] for t in sorted(extra)])
        return total + compensation

    def _outcomes(self, record: StimulusTrials, errors_as_failures: bool) -> str:
        if record._row < 0:
            return ""
        drop = bytes([ABSENT, SKIPPED] if errors_as_failures else [ABSENT, SKIPPED, ERROR])
        codes = self._code[record._row, : self._width].tobytes()
        extra = self._extra.get(record._row)
        if extra:
            codes += bytes(extra[t][0] for t in sorted(extra))
        return codes.translate(_LETTERS, drop).decode("ascii")

    def _is_scored(self, record: StimulusTrials) -> bool:
        if record._crow >= 0:
            return bool(self._c_scored[record._crow])
        return record._row >= 0 and bool(self._scored[record._row])

    def category_counts(self, record: StimulusTrials, errors_as_failures: bool = True) -> list[int]:
        """Counted trials per category index of the suite (errored ones in category 0)."""
        names = self.spec(record.suite).category_names or ("fail", "pass")
        counts = [0] * len(names)
        if record._crow >= 0:
            by_category = self._c_categories.get(record._crow)
            passed, failed, errored, _ = self._totals(record)
            if by_category is None:
                by_category = (failed, passed) if len(names) == 2 else (0,) * len(names)
            counts = list(by_category)
            if errors_as_failures:
                counts[0] += errored
            return counts
        for _, code, _, category in record._table._cells(record._row):
            if code in (PASS, FAIL) or (code == ERROR and errors_as_failures):
                counts[category] += 1
        return counts

    def summary(self, errors_as_failures: bool = True) -> TableSummary:
        """Every stimulus's n, c, errors, skipped and score sum, vectorised over the table."""
        import numpy as np

        records = list(self.stimuli.values())
        rows = len(self._rows)
        dense = np.zeros((rows, 5), dtype=np.int64)
        codes = self._code[:rows, : self._width]
        for code in (PASS, FAIL, ERROR, SKIPPED):
            dense[:, code] = np.count_nonzero(codes == code, axis=1)
        for row, cells in self._extra.items():
            for code, *_ in cells.values():
                dense[row, code] += 1
        # Score sums in trial-index order, column by column: the same arithmetic as
        # _score_sum, so the two agree to the bit (absent slots add an exact 0).
        total = np.zeros(rows, dtype=np.float64)
        compensation = np.zeros(rows, dtype=np.float64)
        for column in np.ascontiguousarray(self._score[:rows, : self._width].T):
            step = total + column
            compensation += np.where(
                np.abs(total) >= np.abs(column), (total - step) + column, (column - step) + total
            )
            total = step
        for row, cells in self._extra.items():
            ordered = [cells[t][1] for t in sorted(cells)]
            total[row], compensation[row] = _neumaier(
                float(total[row]), float(compensation[row]), ordered
            )
        dense_sum = total + compensation
        counted = np.array(self._c_totals, dtype=np.int64).reshape(-1, 4)
        totals = np.zeros((len(records), 4), dtype=np.int64)
        score_sum = np.zeros(len(records), dtype=np.float64)
        for i, record in enumerate(records):
            if record._row >= 0:
                totals[i] = dense[record._row, 1:]
                score_sum[i] = dense_sum[record._row]
            elif record._crow >= 0:
                totals[i] = counted[record._crow]
                score_sum[i] = self._c_score[record._crow]
        n = totals[:, 0] + totals[:, 1] + (totals[:, 2] if errors_as_failures else 0)
        return TableSummary(
            records=records,
            n=n,
            c=totals[:, 0].copy(),
            errors=totals[:, 2].copy(),
            skipped=totals[:, 3].copy(),
            score_sum=score_sum,
            errors_as_failures=errors_as_failures,
        )

    def finish(self) -> TrialTable:
        """Kept for callers of the list-based table: trials are stored in index order."""
        return self

    def suite_names(self) -> list[str]:
        names = {suite for suite, _ in self.stimuli}
        return sorted(names)

    def of_suite(self, suite: str) -> Iterator[StimulusTrials]:
        return (record for (s, _), record in self.stimuli.items() if s == suite)

    @property
    def ordered(self) -> bool:
        """True when every stimulus has per-trial outcomes in trial order (no counts rows)."""
        return not self._c_score

    def __len__(self) -> int:
        return self._trials
