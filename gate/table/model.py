"""The trial table: suites, their stimuli and every trial, decided once and kept compactly.

Adapters add :class:`~gate.trials.Trial` records one by one, native readers add whole
:class:`~gate.trials.TrialBatch` chunks, counts files add :class:`~gate.trials.StimulusCounts`
totals. Trials added one by one are buffered and added a few thousand at a time, so both
ways go through one path (:meth:`TrialTable._add_columns`): the pass rule
(:func:`gate.table.rule.decide`) over columns, then the slot store
(:class:`gate.table.store.SlotStore`), which rejects a (suite, stimulus, trial) seen
twice, naming both places. An error is raised once every trial before the faulty one
is stored, exactly as adding them one at a time would; for trials added one by one it
is raised by the call that adds them to the store: the next :meth:`~TrialTable.flush`,
:meth:`~TrialTable.extend`, or any read.

Per trial, the store keeps one outcome byte, the score (8 bytes) and a packed provenance
(8 bytes): about 17 bytes. A category index (2 bytes) only for suites whose categories
are not just pass/fail, and cost, duration and tokens (8 bytes each) only once some
trial reports them. Per stimulus: a few hundred bytes, plus at most
:data:`MESSAGES_KEPT` messages and one more for an error's (each cut to
:data:`gate.limits.KEPT_MESSAGE_CHARS` characters, every distinct text stored once).
docs/scale.md has the layout.
"""

from __future__ import annotations

import math
import operator
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, TypeVar

from gate import limits
from gate.errors import InputError, Provenance
from gate.table import rule
from gate.table.rule import ABSENT, ERROR, FAIL, PASS, SKIPPED, TrialFeatures
from gate.table.store import HUGE_INDEX, Column, ProvenancePacker, SlotStore
from gate.trials import (
    Coded,
    CountsColumns,
    Outcome,
    Status,
    StimulusCounts,
    SuiteSpec,
    Trial,
    TrialBatch,
    TrialColumns,
    TrialMessage,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gate.metrics.usage import TrialUsage

_T = TypeVar("_T")

#: counts past these are refused (docs/limits.md): totals wrap in 64-bit integers, and
#: the exact tests' logs of factorials lose their precision
MOST_COUNTED_TRIALS = limits.RUN_COUNTED_TRIALS.default
MOST_STIMULUS_TRIALS = limits.STIMULUS_COUNTED_TRIALS.default

#: A counts row's score sum may exceed its ok trials by this much of them (float rounding
#: in whatever summed the scores).
_SUM_SLACK = 1e-9
#: Per-trial usage values the table keeps (NaN where a trial reports none).
USAGE_FIELDS = ("cost_usd", "duration_s", "tokens")
#: The largest usage value a trial may report (dollars, seconds or tokens): a trillion is
#: no real trial's, and a million trials of it still sum to a finite float.
USAGE_MAX = 1e12
#: Messages kept per stimulus: the first ones read of trials that did not pass.
MESSAGES_KEPT = 3
#: Trials added one by one, and small batches, are decided and stored this many at a time.
_PENDING = 4096

_STATUS_OF: dict[int, Status] = {PASS: "ok", FAIL: "ok", ERROR: "error", SKIPPED: "skipped"}
_OUTCOME_OF: dict[int, Outcome] = {FAIL: "failed", ERROR: "errored", SKIPPED: "skipped"}
#: outcome letters of the counted trials, in trial order (see ``StimulusScore.outcomes``).
_LETTERS = bytes.maketrans(bytes([PASS, FAIL, ERROR]), b"PFE")
#: slots read at a time by :meth:`TrialTable._outcomes_many` (a block is copied a few times)
_BLOCK_SLOTS = 1 << 22


def _slot_rows(records: Sequence[StimulusTrials]) -> npt.NDArray[np.int64]:
    """Each record's row of the slot store (-1: none)."""
    import numpy as np

    return np.fromiter(map(attrgetter("_row"), records), dtype=np.int64, count=len(records))


def _dropped(errors_as_failures: bool) -> bytes:
    """The slot values an outcome string leaves out: empty slots, skipped trials and, unless
    errors count as failures, errored ones."""
    return bytes([ABSENT, SKIPPED] if errors_as_failures else [ABSENT, SKIPPED, ERROR])


_COLUMNS = (
    Column("code", "uint8"),
    Column("score", "float64"),
    Column("where", "int64"),
    Column("category", "int16", lazy=True),
    *(Column(name, "float64", math.nan, lazy=True) for name in USAGE_FIELDS),
)


class PerTrialDataMissing(ValueError):
    """A per-trial view was asked of a stimulus that came as totals (a counts file row)."""


def usage_value(field: str, value: Any) -> float | None:
    """A usage value as a float: a number ≥ 0 (``tokens`` also as ``{input, output, total}``:
    its total, else input + output); ``None`` when absent, NaN when not a number in
    [0, :data:`USAGE_MAX`]."""
    if value is None:
        return None
    if field == "tokens" and isinstance(value, Mapping):
        if value.get("total") is not None:
            return usage_value(field, value["total"])
        parts = [usage_value(field, value.get(k)) for k in ("input", "output")]
        if all(p is None for p in parts):
            return None
        return math.fsum(p for p in parts if p is not None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    try:
        number = float(value)
    except OverflowError:
        return math.nan
    return number if 0 <= number <= USAGE_MAX else math.nan


class StimulusTrials:
    """One stimulus of a :class:`TrialTable`: a view on its trials (in trial order) or totals.

    The per-trial lists (``indices``, ``passed``, ``statuses``, ``scores``,
    ``categories``) are built on request; the sufficient statistics
    (:meth:`n`, :meth:`c`, ``errors``, ``skipped``, :meth:`score_sum`,
    :meth:`outcomes`) are what scoring reads. A stimulus from a counts file has
    only the latter (:attr:`ordered` is False).
    """

    __slots__ = ("_crow", "_id", "_row", "_table", "_tags", "stimulus", "suite")

    def __init__(
        self, table: TrialTable, suite: str, stimulus: str, serial: int, row: int = -1
    ) -> None:
        self._table = table
        self._id = serial
        self._row = row  # row of the slot store, -1 until a trial arrives
        self._crow = -1  # row of the counts arrays, -1 unless given as totals
        self._tags: set[str] | None = None
        self.suite = suite
        self.stimulus = stimulus

    def __repr__(self) -> str:
        return f"StimulusTrials({self.suite!r}, {self.stimulus!r}, n={self.n()}, c={self.c()})"

    @property
    def tags(self) -> set[str] | frozenset[str]:
        return self._tags if self._tags is not None else frozenset()

    def add_tags(self, tags: Iterable[str]) -> None:
        if self._tags is None:
            self._tags = set(tags)
        else:
            self._tags.update(tags)

    @property
    def trial_messages(self) -> tuple[TrialMessage, ...]:
        """Why trials did not pass: the first :data:`MESSAGES_KEPT` read (and the first
        errored trial's, when none of those is one), each with its trial index, outcome and
        where it was read."""
        return self._table._message_log.of(self._id, self._table)

    @property
    def messages(self) -> list[str]:
        """The texts of :attr:`trial_messages`."""
        return [m.text for m in self.trial_messages]

    @property
    def ordered(self) -> bool:
        """True when per-trial outcomes in trial order are known (trials, not a counts row)."""
        return self._crow < 0

    def _cells(self, *names: str) -> tuple[list[int], list[list[Any]]]:
        if self._crow >= 0:
            raise PerTrialDataMissing(
                f"stimulus {self.stimulus!r} of suite {self.suite!r} comes from a counts file: "
                "it has totals, not per-trial data"
            )
        self._table.flush()
        return self._table._store.cells(self._row, names)

    @property
    def indices(self) -> list[int]:
        return self._cells()[0]

    @property
    def where(self) -> dict[int, Provenance | None]:
        """Where each trial was read, by trial index (unpacked on request)."""
        indices, (packed,) = self._cells("where")
        unpack = self._table._packer.unpack
        return {t: unpack(p) for t, p in zip(indices, packed, strict=True)}

    @property
    def first_failure_where(self) -> Provenance | None:
        """Where the first trial in trial order that failed or errored was read (``None`` for
        a counts row, a stimulus with no such trial, or a format that gives no place)."""
        if self._crow >= 0:
            return None
        _, (codes, packed) = self._cells("code", "where")
        for code, place in zip(codes, packed, strict=True):
            if code in (FAIL, ERROR):
                found: Provenance | None = self._table._packer.unpack(place)
                return found
        return None

    @property
    def passed(self) -> list[bool]:
        return [code == PASS for code in self._cells("code")[1][0]]

    @property
    def statuses(self) -> list[Status]:
        return [_STATUS_OF[code] for code in self._cells("code")[1][0]]

    @property
    def scores(self) -> list[float]:
        return self._cells("score")[1][0]

    @property
    def categories(self) -> list[int]:
        return self._table._categories_of(self)

    def counted(self, errors_as_failures: bool = True) -> list[int]:
        """Positions of the trials that count towards n: never skipped ones, errors by policy."""
        keep = (PASS, FAIL, ERROR) if errors_as_failures else (PASS, FAIL)
        return [i for i, code in enumerate(self._cells("code")[1][0]) if code in keep]

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
        self._table.flush()
        return self._row >= 0 and bool(self._table._graders[self._row])

    def usage(self) -> TrialUsage | None:
        """This stimulus's per-trial cost, duration and tokens (see :meth:`TrialTable.usage`)."""
        return self._table._usage([self], lambda record: record.stimulus)


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

    def outcomes_of(self, positions: Sequence[int]) -> list[str]:
        """:meth:`outcomes` of the stimuli at ``positions``, read together."""
        return self._read(
            positions, lambda table, at: table._outcomes_many(at, self.errors_as_failures)
        )

    def message_records_of(self, positions: Sequence[int]) -> list[list[dict[str, Any]]]:
        """The report entries of the messages (``trial_messages``) of the stimuli at
        ``positions``, read together."""
        return self._read(positions, TrialTable._message_records)

    def scored_of(self, positions: Sequence[int]) -> list[bool]:
        """Whether each stimulus at ``positions`` has a score (its record's ``scored``)."""
        return self._read(positions, TrialTable._scored_many)

    def _read(
        self,
        positions: Sequence[int],
        read: Callable[[TrialTable, list[StimulusTrials]], list[_T]],
    ) -> list[_T]:
        """``read`` of the records at ``positions`` by their table (none: nothing to read)."""
        records = [self.records[i] for i in positions]
        return read(records[0]._table, records) if records else []

    def take(self, rows: npt.NDArray[np.int64]) -> TableSummary:
        """The summary of the stimuli at ``rows`` (positions, in that order)."""
        return TableSummary(
            [self.records[i] for i in rows.tolist()],
            self.n[rows],
            self.c[rows],
            self.errors[rows],
            self.skipped[rows],
            self.score_sum[rows],
            self.errors_as_failures,
        )


class _MessageLog:
    """The first few messages of each stimulus: a few flat arrays, each distinct text once."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._owner = array("q")
        self._trial = array("q")  # -1: no index (a counts row), -2: see _huge
        self._code = bytearray()
        self._where = array("q")
        self._text = array("q")
        self._texts: list[str] = []
        self._text_ids: dict[str, int] = {}
        self._huge: dict[int, int] = {}  # message → a trial index past 64 bits
        self._count: npt.NDArray[np.uint8] | None = None  # messages kept, per owner
        #: per owner: whether an errored trial's message is among those kept
        self.errored: npt.NDArray[np.bool_] | None = None
        #: messages ordered by owner (made when first asked for): kept, not the messages,
        #: which cost ~200 bytes each (a 100,000-stimulus report asks for them all)
        self._index: tuple[Any, Any] | None = None

    def owners(self, count: int) -> None:
        import numpy as np

        if self._count is None or count > self._count.size:
            size = max(64, 1 << max(count - 1, 0).bit_length())
            grown = np.zeros(size, dtype=np.uint8)
            errored = np.zeros(size, dtype=bool)
            if self._count is not None and self.errored is not None:
                grown[: self._count.size] = self._count
                errored[: self.errored.size] = self.errored
            self._count, self.errored = grown, errored

    def room(self, owner: int) -> bool:
        assert self._count is not None
        return bool(self._count[owner] < self.keep)

    def choose(self, owners: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Which of the messages of ``owners`` (in reading order) there is room for: the
        positions into ``owners``, in order."""
        import numpy as np

        assert self._count is not None
        room = self.keep - self._count[owners].astype(np.int64)
        if not (room > 0).any():
            return np.zeros(0, dtype=np.int64)
        order = np.argsort(owners, kind="stable")
        grouped = owners[order]
        first = np.ones(grouped.size, dtype=bool)
        first[1:] = grouped[1:] != grouped[:-1]
        starts = np.flatnonzero(first)
        rank = np.arange(grouped.size) - starts[np.cumsum(first) - 1]
        return np.sort(order[rank < room[order]])

    def add(self, owner: int, trial: int | None, code: int, text: str, where: int) -> None:
        """Keep one message (cut to the kept length) of ``owner``'s trial ``trial``."""
        self.add_many([owner], [trial], [code], [text], [where])

    def add_many(
        self,
        owners: list[int],
        trials: list[int] | list[int | None],
        codes: list[int],
        texts: list[str],
        wheres: list[int],
    ) -> None:
        """:meth:`add` of each message in turn, a column at a time (a million-trial file
        keeps tens of thousands)."""
        import numpy as np

        maximum = limits.KEPT_MESSAGE_CHARS.value()
        known, stored = self._text_ids, self._texts
        text_ids = []
        for text in texts:
            if len(text) > maximum:
                text = text[: maximum - 1] + "…"
            text_id = known.get(text)
            if text_id is None:
                text_id = known[text] = len(stored)
                stored.append(text)
            text_ids.append(text_id)
        indices = []
        for position, trial in enumerate(trials, start=len(self._owner)):
            if trial is None:
                trial = -1
            elif trial >= 1 << 63:
                self._huge[position] = trial
                trial = -2
            indices.append(trial)
        self._owner.extend(owners)
        self._trial.extend(indices)
        self._code.extend(codes)
        self._where.extend(wheres)
        self._text.extend(text_ids)
        assert self._count is not None and self.errored is not None
        at = np.asarray(owners, dtype=np.int64)
        np.add.at(self._count, at, 1)
        self.errored[at[np.asarray(codes, dtype=np.int64) == ERROR]] = True
        self._index = None

    def _sorted(self) -> tuple[Any, Any]:
        """(message positions ordered by owner, their owners), made when first asked for."""
        if self._index is None:
            import numpy as np

            owners = np.frombuffer(self._owner, dtype=np.int64)
            order = np.argsort(owners, kind="stable")
            self._index = (order, owners[order])
        return self._index

    def records_of(self, owners: Sequence[int], table: TrialTable) -> list[list[dict[str, Any]]]:
        """Each owner's messages (:meth:`of`) as :meth:`TrialMessage.as_record` gives them,
        for many owners at once: no message object on the way."""
        import numpy as np

        table.flush()
        if not self._owner:
            return [[] for _ in owners]
        order, sorted_owners = self._sorted()
        wanted = np.asarray(owners, dtype=np.int64)
        starts = sorted_owners.searchsorted(wanted).tolist()
        stops = sorted_owners.searchsorted(wanted + 1).tolist()
        positions: list[int] = order.tolist()
        fields = table._packer.fields
        texts, text_ids, trials, codes, wheres = (
            self._texts, self._text, self._trial, self._code, self._where
        )  # fmt: skip
        found = []
        for start, stop in zip(starts, stops, strict=True):
            entries = []
            for i in positions[start:stop]:
                trial = trials[i]
                file, line, pointer = fields(wheres[i])
                entries.append(
                    {
                        "trial": self._huge[i] if trial == -2 else (None if trial < 0 else trial),
                        "outcome": _OUTCOME_OF.get(codes[i]),
                        "text": texts[text_ids[i]],
                        "file": file,
                        "line": line,
                        "pointer": pointer,
                    }
                )
            found.append(entries)
        return found

    def of(self, owner: int, table: TrialTable) -> tuple[TrialMessage, ...]:
        table.flush()
        if not self._owner:
            return ()
        order, sorted_owners = self._sorted()
        start, stop = sorted_owners.searchsorted([owner, owner + 1])
        found = []
        for i in order[start:stop].tolist():
            trial = self._trial[i]
            found.append(
                TrialMessage(
                    text=self._texts[self._text[i]],
                    outcome=_OUTCOME_OF.get(self._code[i]),
                    trial=self._huge[i] if trial == -2 else (None if trial < 0 else trial),
                    where=table._packer.unpack(self._where[i]),
                )
            )
        return tuple(found)


@dataclass
class _Extras:
    """What trials about to be added carry besides the rule's inputs, by position."""

    #: positions of the trials with a message, in reading order
    messages: list[int] = field(default_factory=list)
    tags: list[tuple[int, Iterable[str]]] = field(default_factory=list)
    graders: list[int] = field(default_factory=list)
    usage: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)


@dataclass
class _Columns:
    """Trials about to be added, as columns in reading order."""

    rows: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    #: the true indices where ``indices`` holds stand-ins for indices past 64 bits
    exact: list[int] | None
    features: TrialFeatures
    where: npt.NDArray[np.int64]
    extras: _Extras
    #: the i-th trial as a record, for its error message
    trial_at: Callable[[int], Trial]
    #: the message of the i-th trial
    message_at: Callable[[int], Any]


class TrialTable:
    """All trials of a check, grouped by (suite, stimulus), duplicates rejected."""

    def __init__(self) -> None:
        import numpy as np

        self._suites: dict[str, SuiteSpec] = {}
        self._stimuli: dict[tuple[str, str], StimulusTrials] = {}
        self.sources: list[str] = []
        #: usage values that were not a number in [0, USAGE_MAX] (left out, as not reported)
        self.usage_dropped = 0
        self._trials = 0
        self._kept = 0  # trials given one by one (not as a counts row's totals)
        self._store = SlotStore(_COLUMNS)
        self._packer = ProvenancePacker()
        self._message_log = _MessageLog(MESSAGES_KEPT)
        self._pending: list[Trial | TrialBatch] = []
        self._pending_trials = 0
        # Rows of the store: one per stimulus given as trials, in order of first sight.
        self._rows: list[StimulusTrials] = []
        # suite → stimulus → row: a lookup by name per suite, no (suite, stimulus) key made
        self._suite_rows: dict[str, dict[str, int]] = {}
        self._scored = np.zeros(0, dtype=bool)
        self._graders = np.zeros(0, dtype=bool)
        # Each row's suite settings, as the rule reads them: pass threshold and best weight.
        self._bar = np.zeros(0, dtype=np.float64)
        self._best = np.zeros(0, dtype=np.float64)
        self._row_owner = np.zeros(0, dtype=np.int64)  # each row's stimulus serial (messages)
        self._rows_set = 0  # rows below this have their flags, bar and best
        # Stimuli given as totals (counts rows), one entry per such stimulus.
        self._c_totals = array("q")  # passed, failed, errored, skipped: 4 per row
        self._c_score = array("d")
        self._c_scored = bytearray()
        self._c_where = array("q")
        self._c_categories: dict[int, tuple[int, ...]] = {}

    @property
    def suites(self) -> dict[str, SuiteSpec]:
        """Every suite's settings, by name (declared, or implied by its first trial)."""
        self.flush()
        return self._suites

    @property
    def stimuli(self) -> dict[tuple[str, str], StimulusTrials]:
        """Every stimulus, by (suite, stimulus), in the order first seen."""
        self.flush()
        return self._stimuli

    # -- suites -------------------------------------------------------------------------

    def declare_suite(self, spec: SuiteSpec) -> None:
        """Declare a suite's settings; repeating the same declaration (one per file) is fine."""
        self.flush()
        if spec.categories is not None:
            for name, weight in spec.categories.items():
                if not (math.isfinite(weight) and 0.0 <= weight <= 1.0):
                    raise InputError(
                        f"category {name!r} of suite {spec.name!r} has weight {weight}",
                        spec.provenance,
                        expected="a weight in [0, 1]",
                    )
        known = self._suites.get(spec.name)
        if known is None:
            self._suites[spec.name] = spec
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
        if suite not in self._suites:
            self._suites[suite] = SuiteSpec(name=suite)
        return self._suites[suite]

    # -- stimuli and rows ---------------------------------------------------------------

    def _record(self, suite: str, stimulus: str) -> StimulusTrials:
        record = self._stimuli.get((suite, stimulus))
        if record is None:
            record = StimulusTrials(self, suite, stimulus, len(self._stimuli))
            self._stimuli[(suite, stimulus)] = record
        return record

    def _row_of(self, suite: str, stimulus: str) -> int | None:
        """The row of (suite, stimulus), None while it has none."""
        of_suite = self._suite_rows.get(suite)
        return None if of_suite is None else of_suite.get(stimulus)

    def _give_row(self, record: StimulusTrials, where: Provenance | None) -> int:
        if record._row < 0:
            if record._crow >= 0:
                raise self._mixed_error(record, where)
            record._row = len(self._rows)
            self._rows.append(record)
            self._suite_rows.setdefault(record.suite, {})[record.stimulus] = record._row
        return record._row

    def _new_rows(self, suite: str, names: list[str]) -> range | None:
        """Rows for stimuli of ``suite`` the table has never seen, named in order of first
        sight: made together, as one by one would make them; None (make them one by one)
        unless every name is given once and none is known (a counts row among them is an
        error that one by one reports)."""
        keys = list(zip(repeat(suite), names))
        if len(set(names)) != len(names) or not self._stimuli.keys().isdisjoint(keys):
            return None
        serial, first = len(self._stimuli), len(self._rows)
        rows = range(first, first + len(names))
        serials = range(serial, serial + len(names))
        records = list(map(StimulusTrials, repeat(self), repeat(suite), names, serials, rows))
        self._stimuli.update(zip(keys, records, strict=True))
        self._rows.extend(records)
        self._suite_rows.setdefault(suite, {}).update(zip(names, rows, strict=True))
        return rows

    def _set_rows(self) -> None:
        """Give new rows their flags and their suite's settings (which never change once used)."""
        import numpy as np

        rows = len(self._rows)
        if rows > self._scored.size:
            size = max(64, 1 << (rows - 1).bit_length())
            for name in ("_scored", "_graders", "_bar", "_best", "_row_owner"):
                old = getattr(self, name)
                new = np.zeros(size, dtype=old.dtype)
                new[: old.size] = old
                setattr(self, name, new)
        start = self._rows_set
        added = self._rows[start:rows]
        suites = set(map(attrgetter("suite"), added))
        if len(suites) == 1:  # the usual case: one suite's bars for every new row
            self._bar[start:rows], self._best[start:rows] = rule.bars(self.spec(suites.pop()))
        else:
            for row, record in enumerate(added, start):
                self._bar[row], self._best[row] = rule.bars(self.spec(record.suite))
        self._row_owner[start:rows] = list(map(attrgetter("_id"), added))
        self._rows_set = rows
        self._message_log.owners(len(self._stimuli))

    # -- adding -------------------------------------------------------------------------

    def add(
        self, trial: Trial | TrialBatch | TrialColumns | StimulusCounts | CountsColumns
    ) -> None:
        """Add one trial or a batch of native records (both buffered), many trials as
        columns, or one stimulus's totals or many as columns."""
        if isinstance(trial, TrialColumns):
            self.flush()
            self._add_trial_columns(trial)
            return
        if isinstance(trial, Trial):
            self._pending.append(trial)
            self._pending_trials += 1
        elif isinstance(trial, TrialBatch):
            self._pending.append(trial)
            self._pending_trials += len(trial.records)
        elif isinstance(trial, CountsColumns):
            self.add_counts_columns(trial)
            return
        else:
            self.flush()
            self.add_counts(trial)
            return
        if self._pending_trials >= _PENDING:
            self.flush()

    def add_batch(self, batch: TrialBatch) -> None:
        """Add schema-valid native records column-wise; the same result as one by one."""
        self.add(batch)

    def extend(
        self,
        items: Iterable[
            Trial | TrialBatch | TrialColumns | StimulusCounts | CountsColumns | SuiteSpec
        ],
    ) -> None:
        """Add every item (suite declarations too); every error is raised before this returns,
        and an earlier trial's error before one the items' reader raises later."""
        try:
            for item in items:
                if isinstance(item, SuiteSpec):
                    self.declare_suite(item)
                else:
                    self.add(item)
        except InputError:
            self.flush()  # a trial read before the failing one may hold an earlier error
            raise
        self.flush()

    def flush(self) -> None:
        """Decide and store the trials and batches added so far, in order (raising the first
        error after storing every trial before it)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        self._pending_trials = 0
        start = 0
        while start < len(pending):
            kind = type(pending[start])
            stop = start + 1
            while stop < len(pending) and type(pending[stop]) is kind:
                stop += 1
            run = pending[start:stop]
            if kind is Trial:
                self._add_trials(run)  # type: ignore[arg-type]
            else:
                self._add_batches(run)  # type: ignore[arg-type]
            start = stop

    def _add_trials(self, trials: list[Trial]) -> None:
        """Trials one by one into columns, then :meth:`_add_columns`."""
        import numpy as np

        size = len(trials)
        rows: list[int] = []
        where: list[int] = []
        specs: list[SuiteSpec] = []
        extras = _Extras()
        usage: dict[str, list[float]] = {}
        pack = self._packer.pack
        row_of = self._row_of
        suites = self._suites
        stop, error = size, None
        for i, trial in enumerate(trials):
            if trial.trial < 0:
                stop = i
                error = InputError(
                    "trial index is negative",
                    trial.provenance,
                    expected="an integer ≥ 0",
                    found=str(trial.trial),
                )
                break
            row = row_of(trial.suite, trial.stimulus)
            if row is None:
                self.spec(trial.suite)
                record = self._record(trial.suite, trial.stimulus)
                try:
                    row = self._give_row(record, trial.provenance)
                except InputError as caught:
                    stop, error = i, caught
                    break
            rows.append(row)
            specs.append(suites[trial.suite])
            where.append(pack(trial.provenance))
            if trial.message:
                extras.messages.append(i)
            if trial.tags:
                extras.tags.append((i, trial.tags))
            if trial.graders:
                extras.graders.append(i)
            metadata = trial.metadata
            if metadata:
                for name in USAGE_FIELDS:
                    given = metadata.get(name)
                    if given is not None:
                        value = usage_value(name, given)
                        if value is not None:
                            column = usage.get(name)
                            if column is None:
                                column = usage[name] = [math.nan] * size
                            column[i] = value
                            self.usage_dropped += math.isnan(value)
        kept = trials[:stop]
        extras.usage = {name: np.array(values[:stop]) for name, values in usage.items()}
        indices, exact = _int64([trial.trial for trial in kept])
        self._add_columns(
            _Columns(
                rows=np.array(rows, dtype=np.int64),
                indices=indices,
                exact=exact,
                features=rule.features(kept, specs),
                where=np.array(where, dtype=np.int64),
                extras=extras,
                trial_at=kept.__getitem__,
                message_at=lambda i: kept[i].message,
            )
        )
        if error is not None:
            raise error

    def _add_trial_columns(self, given: TrialColumns) -> None:
        """Trials given as columns (a columnar reader's), through :meth:`_add_columns`."""
        import numpy as np

        size = len(given)
        if size == 0:
            return
        suite = given.suite[0]
        if isinstance(given.stimulus, Coded) and given.suite.count(suite) == size:
            row_array, stop, error = self._coded_rows(given, given.stimulus, suite)
        else:
            row_array, stop, error = self._trial_rows(given)
        self._set_rows()
        statuses = given.status[:stop]
        if isinstance(statuses, Coded):
            status = statuses.lookup([rule.STATUS_CODES[s] for s in statuses.values], np.uint8)
        else:
            status = np.array(list(map(rule.STATUS_CODES.__getitem__, statuses)), np.uint8)
        # As floats, None is NaN: UNKNOWN where passed is not given.
        given_passed = _floats(given.passed[:stop])
        passed = np.where(np.isnan(given_passed), rule.UNKNOWN, given_passed).astype(np.int8)
        score = _floats(given.score[:stop])
        category = np.full(stop, rule.NO_CATEGORY, dtype=np.int16)
        weight = np.full(stop, math.nan)
        if given.outcome is not None:
            known: dict[tuple[str, str], tuple[int, float]] = {}
            for i, outcome in enumerate(given.outcome[:stop]):
                if outcome is not None:
                    key = (given.suite[i], outcome)
                    if key not in known:
                        known[key] = rule.category_of(outcome, self.spec(given.suite[i]))
                    category[i], weight[i] = known[key]
        extras = _Extras()
        if given.message is not None:
            extras.messages = _truthy(given.message[:stop])
        if given.tags is not None:
            extras.tags = [(i, given.tags[i]) for i in _truthy(given.tags[:stop])]
        for name, values in given.usage.items():
            column = self._usage_column(name, values[:stop])
            if column is not None:
                extras.usage[name] = column
        trials = given.trial[:stop]
        if isinstance(trials, Coded):
            distinct, exact_distinct = _int64(trials.values)
            indices = distinct[trials.codes]
            exact = None if exact_distinct is None else [exact_distinct[c] for c in trials.codes]
        else:
            indices, exact = _int64(list(trials))
        given_lines = given.lines[:stop]
        if isinstance(given_lines, range):  # one record per line: no Python int per row
            lines = np.arange(given_lines.start, given_lines.stop, given_lines.step)
        else:
            lines = np.asarray(given_lines, dtype=np.int64)
        self._add_columns(
            _Columns(
                rows=row_array,
                indices=indices,
                exact=exact,
                features=TrialFeatures(
                    status,
                    passed,
                    score,
                    np.full(stop, math.nan),
                    np.zeros(stop, dtype=bool),
                    category,
                    weight,
                    self._bar[row_array],
                    self._best[row_array],
                ),
                where=self._packer.pack_lines(given.file, lines, given.trial_at, given.pointer),
                extras=extras,
                trial_at=given.trial_at,
                message_at=given.message_of,
            )
        )
        if error is not None:
            raise error

    def _trial_rows(self, given: TrialColumns) -> tuple[np.ndarray, int, InputError | None]:
        """Each trial's row, a new stimulus given one at its first trial: (the rows, how
        many trials have one, the error that stopped the rest)."""
        import numpy as np

        row_of = self._row_of
        suite = given.suite[0]
        of_suite = self._suite_rows.get(suite)
        rows: list[int | None]
        one_suite = given.suite.count(suite) == len(given)
        if of_suite is not None and one_suite:  # one lookup
            rows = list(map(of_suite.get, given.stimulus))
        else:
            rows = list(map(row_of, given.suite, given.stimulus))
        stop, error = len(given), None
        if None in rows and one_suite:
            missing = [i for i, row in enumerate(rows) if row is None]
            fresh = list(dict.fromkeys(given.stimulus[i] for i in missing))
            self.spec(suite)
            made = self._new_rows(suite, fresh)
            if made is not None:
                row_of_new = dict(zip(fresh, made, strict=True))
                for i in missing:
                    rows[i] = row_of_new[given.stimulus[i]]
        if None in rows:
            for i in [i for i, row in enumerate(rows) if row is None]:
                suite, stimulus = given.suite[i], given.stimulus[i]
                row = row_of(suite, stimulus)
                if row is None:  # a new stimulus: its row, in order of first sight
                    self.spec(suite)
                    try:
                        row = self._give_row(self._record(suite, stimulus), given.where(i))
                    except InputError as caught:
                        stop, error = i, caught
                        break
                rows[i] = row
        return np.array(rows[:stop], dtype=np.int64), stop, error

    def _coded_rows(
        self, given: TrialColumns, stimuli: Coded, suite: str
    ) -> tuple[np.ndarray, int, InputError | None]:
        """:meth:`_trial_rows` of trials of one suite whose stimuli are given coded: a
        lookup per distinct name, not per trial."""
        import numpy as np

        codes, names = stimuli.codes, stimuli.values
        of_suite = self._suite_rows.get(suite, {})
        rows = np.array([of_suite.get(name, -1) for name in names], dtype=np.int64)
        stop, error = len(given), None
        new = np.flatnonzero(rows < 0)
        if new.size:
            first = np.full(len(names), len(codes), dtype=np.int64)
            np.minimum.at(first, codes, np.arange(len(codes)))
            self.spec(suite)
            todo = new[np.argsort(first[new], kind="stable")].tolist()
            made = self._new_rows(suite, [names[code] for code in todo])
            if made is not None:
                rows[todo] = made
                todo = []
            for code in todo:
                at = int(first[code])
                try:  # a name given twice (cells that differ only in spaces): its one row
                    rows[code] = self._give_row(self._record(suite, names[code]), given.where(at))
                except InputError as caught:
                    stop, error = at, caught
                    break
        return rows[np.asarray(codes[:stop])], stop, error

    def _add_batches(self, batches: list[TrialBatch]) -> None:
        """Schema-valid native records, column-wise; the same result as one by one.

        Plain records (``passed``/``score``/``status``) become columns with numpy; those
        with graders or an outcome are looked at one by one. When a record is a duplicate
        or cannot be decided, every record before it is added and then the error is
        raised, as adding them one by one would.
        """
        import numpy as np

        if len(batches) == 1:
            records: Sequence[Mapping[str, Any]] = batches[0].records
        else:
            records = [r for batch in batches for r in batch.records]
        size = len(records)
        if size == 0:
            return
        offsets = [0]
        for batch in batches:
            offsets.append(offsets[-1] + len(batch.records))

        def locate(i: int) -> tuple[TrialBatch, int]:
            b = bisect_right(offsets, i) - 1
            return batches[b], i - offsets[b]

        def trial_at(i: int) -> Trial:
            batch, position = locate(i)
            return batch.trial(position)

        # 1. Which stimulus, which trial index, where.
        rows_parts: list[Any] = []
        index_parts: list[tuple[Any, list[int] | None]] = []
        where_parts: list[Any] = []
        extras = _Extras()
        for batch, start in zip(batches, offsets, strict=False):
            count = len(batch.records)
            if count == 0:
                continue
            if batch.stimulus is not None:
                record = self._record(batch.suite, batch.stimulus)
                self.spec(batch.suite)
                row = self._give_row(record, batch.where(0))
                rows_parts.append((row, count))
                first = batch.first_position
                if batch.indices is not None:
                    index_parts.append((np.asarray(batch.indices, dtype=np.int64), None))
                else:
                    records_ = batch.records
                    index_parts.append(
                        _int64([int(r.get("trial", first + i)) for i, r in enumerate(records_)])
                    )
                prefix, begin = f"{batch.pointer or ''}/", first
            else:
                rows_parts.append((self._rows_of(batch), count))
                if batch.indices is not None:
                    index_parts.append((np.asarray(batch.indices, dtype=np.int64), None))
                else:
                    index_parts.append(_int64([r["trial"] for r in batch.records]))
                prefix, begin = None, batch.first_line or 0
            where_parts.append(self._packer.pack_run(batch.file, prefix, begin, count, batch.where))
            if batch.tags:
                extras.tags.append((start, batch.tags))
        rows = np.concatenate(
            [
                np.repeat(np.array([row for row, _ in run], dtype=np.int64), [n for _, n in run])
                if isinstance(run[0][0], int)
                else run[0][0]
                for run in _runs(rows_parts)
            ]
        )
        where = np.concatenate(where_parts)
        indices = np.concatenate([part for part, _ in index_parts])
        exact: list[int] | None = None
        if any(huge is not None for _, huge in index_parts):
            exact = [i for part, huge in index_parts for i in (huge or part.tolist())]
        negative = np.flatnonzero(indices < 0)
        stop, error = size, None
        if negative.size:  # not schema-valid after all: stop there, as one by one would
            stop = int(negative[0])
            trial = trial_at(stop)
            error = InputError(
                "trial index is negative",
                trial.provenance,
                expected="an integer ≥ 0",
                found=str(trial.trial),
            )
            records, rows, where, indices = (
                records[:stop],
                rows[:stop],
                where[:stop],
                indices[:stop],
            )
            exact = exact[:stop] if exact is not None else None
            size = stop
        self._set_rows()

        # 2. The rule's inputs: plain records with numpy, the rest one by one.
        keys: set[str] = set().union(*records)  # in C: a key no record has costs no pass
        passed = (
            np.array([r.get("passed", rule.UNKNOWN) for r in records], dtype=np.int8)
            if "passed" in keys
            else np.full(size, rule.UNKNOWN, dtype=np.int8)
        )
        score = (
            np.array([r.get("score", math.nan) for r in records], dtype=np.float64)
            if "score" in keys
            else np.full(size, math.nan)
        )
        status = np.zeros(size, dtype=np.uint8)
        graded = np.full(size, math.nan)
        all_passed = np.zeros(size, dtype=bool)
        category = np.full(size, rule.NO_CATEGORY, dtype=np.int16)
        weight = np.full(size, math.nan)
        extras.messages = (
            [i for i, r in enumerate(records) if "message" in r] if "message" in keys else []
        )
        # One pass finds the few records that need more than that.
        # A key test per key present is twice as fast as a set test per record.
        special = sorted(keys & {"status", "graders", "outcome", "tags"})
        attention = [i for i, r in enumerate(records) if special[0] in r] if special else []
        for key in special[1:]:
            attention = sorted({*attention, *(i for i, r in enumerate(records) if key in r)})
        for i in attention:
            fields = records[i]
            status[i] = rule.STATUS_CODES[fields.get("status", "ok")]
            if "graders" in fields or "outcome" in fields:
                trial = trial_at(i)
                spec = self.spec(trial.suite)
                if trial.graders:
                    graded[i] = rule.grader_aggregate(trial.graders, spec.grader_weights)
                    all_passed[i] = rule.graders_passed(trial.graders)
                    extras.graders.append(i)
                if trial.outcome is not None:
                    category[i], weight[i] = rule.category_of(trial.outcome, spec)
            if "tags" in fields:
                extras.tags.append((i, fields["tags"]))
        extras.tags.sort(key=lambda item: item[0])
        extras.usage = self._batch_usage(records) if "metadata" in keys else {}
        self._add_columns(
            _Columns(
                rows=rows,
                indices=indices,
                exact=exact,
                features=TrialFeatures(
                    status,
                    passed,
                    score,
                    graded,
                    all_passed,
                    category,
                    weight,
                    self._bar[rows],
                    self._best[rows],
                ),
                where=where,
                extras=extras,
                trial_at=trial_at,
                message_at=lambda i: records[i]["message"],
            )
        )
        if error is not None:
            raise error

    def _rows_of(self, batch: TrialBatch) -> npt.NDArray[np.int64]:
        """The row of each JSONL record's (suite, stimulus), new stimuli given one in order."""
        import numpy as np

        records, default = batch.records, batch.suite
        try:  # looked up in C: half the time of a Python loop
            get: Callable[..., Any] = dict.get  # a TypeError for other mappings
            suites = list(map(get, records, repeat("suite"), repeat(default)))
        except TypeError:  # a Mapping that is not a dict
            suites = [r.get("suite", default) for r in records]
        stimuli = map(itemgetter("stimulus"), records)
        first = suites[0] if suites else default
        if suites.count(first) == len(suites):  # one suite: a lookup by name, in C
            found = list(map(self._suite_rows.get(first, {}).get, stimuli, repeat(-1)))
        else:
            found = [-1 if row is None else row for row in map(self._row_of, suites, stimuli)]
        rows = np.array(found, dtype=np.int64)
        for i in np.flatnonzero(rows < 0).tolist():
            suite = records[i].get("suite", default)
            self.spec(suite)
            record = self._record(suite, records[i]["stimulus"])
            rows[i] = self._give_row(record, batch.where(i))
        return rows

    def _batch_usage(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Usage columns of native records (their ``metadata``), only those some record has."""
        no_metadata: Mapping[str, Any] = {}
        metas = [r.get("metadata") or no_metadata for r in records]
        found: dict[str, Any] = {}
        keys = set().union(*metas)
        for name in [n for n in USAGE_FIELDS if n in keys]:
            given = self._usage_column(name, [m.get(name) for m in metas])
            if given is not None:
                found[name] = given
        return found

    def _usage_column(
        self, name: str, values: Sequence[Any] | npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64] | None:
        """Usage values (a float array: NaN where not given) as floats (NaN: not given, or
        not a number in [0, USAGE_MAX], which :attr:`usage_dropped` counts); None when none
        is given."""
        import numpy as np

        column: npt.NDArray[np.float64]
        if isinstance(values, Coded):  # each distinct value read once
            distinct, given_distinct = _usage_floats(name, values.values)
            column, given = distinct[values.codes], given_distinct[values.codes]
        else:
            column, given = _usage_floats(name, values)
        if not given.any():
            return None
        with np.errstate(invalid="ignore"):
            bad = given & ~((column >= 0) & (column <= USAGE_MAX))  # NaN and ±inf too
        if bad.any():
            self.usage_dropped += int(np.count_nonzero(bad))
            column[bad] = math.nan
        return column

    @staticmethod
    def _too_many_trials(trial: Trial) -> InputError:
        """The error for the first trial past :data:`gate.limits.TRIALS`."""
        return InputError(
            "one trial more than the trials limit allows in one run",
            trial.provenance,
            expected=limits.TRIALS.advice()
            + ", or each stimulus's totals as a counts file (docs/scale.md)",
        )

    def _add_columns(self, columns: _Columns) -> None:
        """Decide and store trials given as columns: the one way trials enter the table."""
        import numpy as np

        size = len(columns.rows)
        if size == 0:
            return
        store = self._store
        self._set_rows()
        store.fit(len(self._rows), columns.indices, size)
        decision = rule.decide(columns.features)
        stop, error = size, None
        if decision.undecided >= 0:
            stop = decision.undecided
            trial = columns.trial_at(stop)
            error = rule.undecided_error(trial, self.spec(trial.suite))
        rows, indices = columns.rows, columns.indices
        exact = columns.exact
        duplicate = store.first_duplicate(
            rows[: stop + 1], indices[: stop + 1], None if exact is None else exact[: stop + 1]
        )
        if duplicate is not None and duplicate <= stop:
            stop, error = duplicate, None
        allowed = max(limits.TRIALS.value() - self._kept, 0)
        if allowed < stop or (allowed == stop < size and error is None):
            stop, error = allowed, self._too_many_trials(columns.trial_at(allowed))

        # Store everything before ``stop``.
        code = decision.code[:stop]
        values: dict[str, Any] = {
            "code": code,
            "score": decision.score[:stop],
            "where": columns.where[:stop],
        }
        category = decision.category[:stop]
        if store.has("category") or np.any(category != (code == PASS)):
            store.ensure("category", lambda occupancy: occupancy == PASS)
            values["category"] = category
        extras = columns.extras
        for name, column in extras.usage.items():
            if not np.isnan(column[:stop]).all():
                store.ensure(name, lambda occupancy: np.full(occupancy.shape, math.nan))
                values[name] = column[:stop]
        store.put(rows[:stop], indices[:stop], values, None if exact is None else exact[:stop])
        self._trials += stop
        self._kept += stop
        self._scored[rows[:stop][decision.scored[:stop]]] = True
        self._graders[rows[[i for i in extras.graders if i < stop]]] = True
        for i, tags in extras.tags:
            if i >= stop:
                break
            self._rows[int(rows[i])].add_tags(tags)
        if extras.messages:
            # The first few messages of each stimulus, of trials that did not pass.
            at = np.array(extras.messages, dtype=np.int64)
            at = at[at < stop]
            at = at[code[at] != PASS]
            log = self._message_log

            def keep(picked: npt.NDArray[np.int64], owners: npt.NDArray[np.int64]) -> bool:
                """Add the messages at ``picked``; whether one of them was empty."""
                trials = (
                    [exact[i] for i in picked.tolist()]
                    if exact is not None
                    else indices[picked].tolist()
                )
                # A message that says nothing (rendered to None, or empty, as a record's
                # "message": "" is) takes no room, as a trial's empty message takes none.
                texts = ["" if t is None else str(t) for t in map(columns.message_at, picked)]
                said = [i for i, text in enumerate(texts) if text]
                log.add_many(
                    owners[said].tolist(),
                    [trials[i] for i in said],
                    code[picked[said]].tolist(),
                    [texts[i] for i in said],
                    columns.where[picked[said]].tolist(),
                )
                return len(said) < len(texts)

            def first_errors(owners: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
                """Each stimulus's first errored trial, where none of those kept is one: the
                errored-trials table shows why the harness failed."""
                assert log.errored is not None
                lacking = np.flatnonzero(~log.errored[owners])
                _, firsts = np.unique(owners[lacking], return_index=True)
                return np.sort(lacking[firsts])

            # The first few of each stimulus, then the first error's when none of those is.
            for candidates, pick in ((at, log.choose), (at[code[at] == ERROR], first_errors)):
                while candidates.size:
                    owners = self._row_owner[rows[candidates]]
                    chosen = pick(owners)
                    if not keep(candidates[chosen], owners[chosen]):
                        break
                    # An empty message took no room: the stimulus's next one may have it.
                    rest = np.ones(candidates.size, dtype=bool)
                    rest[chosen] = False
                    candidates = candidates[rest]

        if error is not None:
            raise error
        if stop < size:
            trial = columns.trial_at(stop)
            row = int(rows[stop])
            t = exact[stop] if exact is not None else int(indices[stop])
            first = self._packer.unpack(store.value(row, t, "where"))
            again = trial.provenance or f"trial {trial.trial} of {trial.stimulus!r}"
            raise InputError(
                f"trial {trial.trial} of stimulus {trial.stimulus!r} in suite {trial.suite!r} "
                f"appears twice: first at {first or 'an earlier record'}, again at {again}",
                trial.provenance,
            )

    def add_counts(self, counts: StimulusCounts) -> None:
        """Add one stimulus given as totals; the same stimulus twice is an error naming both."""
        self.flush()
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
        if counts.n + counts.skipped > MOST_STIMULUS_TRIALS:
            raise InputError(
                f"stimulus {counts.stimulus!r} has more than {MOST_STIMULUS_TRIALS:,} (2^31) "
                "trials, past which its exact tests are not computed reliably",
                where,
                expected=f"n + skipped at most {MOST_STIMULUS_TRIALS:,}",
                found=f"{counts.n + counts.skipped:,}",
            )
        if self._trials + counts.n + counts.skipped > MOST_COUNTED_TRIALS:
            raise InputError(
                f"stimulus {counts.stimulus!r}: the run's trials add up to more than "
                f"{MOST_COUNTED_TRIALS:,} (2^53), past which its totals would not be exact",
                where,
                expected=f"n + skipped of every stimulus of a run adding up to at most "
                f"{MOST_COUNTED_TRIALS:,}",
                found=f"{self._trials + counts.n + counts.skipped:,}",
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
        if score_sum is not None and not (0.0 <= score_sum <= ok + _SUM_SLACK * max(ok, 1)):
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
        packed = self._packer.pack(where)
        self._c_where.append(packed)
        if categories is not None:
            self._c_categories[record._crow] = categories
        if counts.tags:
            record.add_tags(counts.tags)
        log = self._message_log
        log.owners(len(self._stimuli))
        for message in counts.messages:
            if not log.room(record._id):
                break
            if isinstance(message, TrialMessage):
                code = {"failed": FAIL, "errored": ERROR, "skipped": SKIPPED}.get(
                    message.outcome or "", ABSENT
                )
                at = self._packer.pack(message.where) if message.where else packed
                log.add(record._id, message.trial, code, message.text, at)
            else:
                log.add(record._id, None, ABSENT, str(message), packed)
        self._trials += counts.n + counts.skipped

    def add_counts_columns(self, rows: CountsColumns) -> None:
        """Add many stimuli given as totals: the same as :meth:`add_counts` of each row, which
        it falls back to (for the error of the first bad row) unless every row is sound."""
        import numpy as np

        self.flush()
        keys = list(zip(rows.suite, rows.stimulus, strict=True))
        n, c, errors, skipped = (
            np.array(column, dtype=np.int64)
            for column in (rows.n, rows.c, rows.errors, rows.skipped)
        )
        ok = n - errors
        given = np.array([s is not None for s in rows.score_sum], dtype=bool)
        # A row without a score sum scores 1 per pass, as add_counts takes it.
        score = np.array(
            [p if s is None else s for s, p in zip(rows.score_sum, rows.c, strict=True)],
            dtype=np.float64,
        )
        limit = ok + _SUM_SLACK * np.maximum(ok, 1)
        with np.errstate(invalid="ignore"):
            bad = (
                (c > ok)
                | ((n == 0) & (skipped == 0))
                | (given & ~((score >= 0.0) & (score <= limit)))
            )
        added = sum(rows.n) + sum(rows.skipped)  # exact: the int64 columns could wrap
        if (
            bad.any()
            or len(set(keys)) < len(keys)
            or not self._stimuli.keys().isdisjoint(keys)
            or self._trials + added > MOST_COUNTED_TRIALS
            or max(map(operator.add, rows.n, rows.skipped), default=0) > MOST_STIMULUS_TRIALS
        ):
            for i in range(len(rows)):
                self.add_counts(rows.row(i))
            return
        for suite in dict.fromkeys(rows.suite):  # in order of first sight, as add_counts
            self.spec(suite)
        serial, crow = len(self._stimuli), len(self._c_score)
        for i, key in enumerate(keys):
            record = StimulusTrials(self, key[0], key[1], serial + i)
            record._crow = crow + i
            self._stimuli[key] = record
        self._c_totals.frombytes(np.stack((c, ok - c, errors, skipped), axis=1).tobytes())
        self._c_score.frombytes(score.tobytes())
        self._c_scored.extend(given.tobytes())
        where = self._packer.pack_run(
            rows.file,
            None,
            rows.first_line,
            len(rows),
            lambda i: Provenance(rows.file, rows.first_line + i),
        )
        self._c_where.frombytes(where.astype(np.int64).tobytes())
        self._message_log.owners(len(self._stimuli))
        self._trials += added

    def _mixed_error(self, record: StimulusTrials, again: Provenance | None = None) -> InputError:
        if record._crow >= 0:
            first = self._packer.unpack(self._c_where[record._crow])
        else:
            _, (packed,) = self._store.cells(record._row, ("where",))
            known = [p for p in packed if p > 0]
            first = self._packer.unpack(min(known)) if known else None  # the earliest read
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
        self.flush()
        if record._row < 0:
            return (0, 0, 0, 0)
        codes = self._store.row_bytes(record._row)
        return (codes.count(PASS), codes.count(FAIL), codes.count(ERROR), codes.count(SKIPPED))

    def _score_sum(self, record: StimulusTrials) -> float:
        if record._crow >= 0:
            return self._c_score[record._crow]
        self.flush()
        if record._row < 0:
            return 0.0
        from gate.table.store import neumaier

        _, (scores,) = self._store.cells(record._row, ("score",))
        total, compensation = neumaier(0.0, 0.0, scores)
        return total + compensation

    def _outcomes(self, record: StimulusTrials, errors_as_failures: bool) -> str:
        self.flush()
        if record._row < 0:
            return ""
        drop = _dropped(errors_as_failures)
        return self._store.row_bytes(record._row).translate(_LETTERS, drop).decode("ascii")

    def _outcomes_many(
        self, records: Sequence[StimulusTrials], errors_as_failures: bool
    ) -> list[str]:
        """:meth:`_outcomes` of every record, their slot rows read as blocks of at most
        :data:`_BLOCK_SLOTS` slots: one translation per block, not one per stimulus."""
        import numpy as np

        self.flush()
        drop = _dropped(errors_as_failures)
        rows = _slot_rows(records)
        step = max(1, _BLOCK_SLOTS // max(1, self._store.width))
        found: list[str] = []
        for start in range(0, rows.size, step):
            block, whole = self._store.rows_block(rows[start : start + step])
            ends = np.cumsum(np.count_nonzero(~np.isin(block, list(drop)), axis=1)).tolist()
            text = block.tobytes().translate(_LETTERS, drop).decode("ascii")
            found += map(text.__getitem__, map(slice, [0, *ends[:-1]], ends))
            for i in np.flatnonzero(~whole).tolist():
                found[start + i] = self._outcomes(records[start + i], errors_as_failures)
        return found

    def _is_scored(self, record: StimulusTrials) -> bool:
        if record._crow >= 0:
            return bool(self._c_scored[record._crow])
        self.flush()
        return record._row >= 0 and bool(self._scored[record._row])

    def _message_records(self, records: Sequence[StimulusTrials]) -> list[list[dict[str, Any]]]:
        """Each record's ``trial_messages`` as report entries (:meth:`_MessageLog.records_of`)."""
        return self._message_log.records_of([r._id for r in records], self)

    def _scored_many(self, records: Sequence[StimulusTrials]) -> list[bool]:
        """:meth:`_is_scored` of every record, the slot rows' flags read at once."""
        import numpy as np

        self.flush()
        rows = _slot_rows(records)
        inside = (rows >= 0) & (rows < self._scored.size)
        found: list[bool] = [False] * rows.size
        if inside.any():
            found = (inside & self._scored[np.where(inside, rows, 0)]).tolist()
        for i in np.flatnonzero(rows < 0).tolist():
            found[i] = self._is_scored(records[i])
        return found

    def _categories_of(self, record: StimulusTrials) -> list[int]:
        if self._store.has("category"):
            return record._cells("category")[1][0]
        return [int(code == PASS) for code in record._cells("code")[1][0]]

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
        codes = record._cells("code")[1][0]
        for code, category in zip(codes, self._categories_of(record), strict=True):
            if code in (PASS, FAIL) or (code == ERROR and errors_as_failures):
                counts[category] += 1
        return counts

    def summary(self, errors_as_failures: bool = True) -> TableSummary:
        """Every stimulus's n, c, errors, skipped and score sum, vectorised over the table."""
        import numpy as np

        self.flush()
        records = list(self._stimuli.values())
        rows = len(self._rows)
        dense = self._store.count_values(rows, (PASS, FAIL, ERROR, SKIPPED))
        # Score sums in trial-index order, column by column: the same arithmetic as
        # _score_sum, so the two agree to the bit (absent slots add an exact 0).
        dense_sum = self._store.ordered_sums("score", rows)
        counted = np.array(self._c_totals, dtype=np.int64).reshape(-1, 4)
        row = np.array([r._row for r in records], dtype=np.int64)
        crow = np.array([r._crow for r in records], dtype=np.int64)
        totals = np.zeros((len(records), 4), dtype=np.int64)
        score_sum = np.zeros(len(records), dtype=np.float64)
        given = row >= 0
        totals[given] = dense[row[given], 1:5]
        score_sum[given] = dense_sum[row[given]]
        as_counts = crow >= 0
        totals[as_counts] = counted[crow[as_counts]]
        score_sum[as_counts] = np.array(self._c_score, dtype=np.float64)[crow[as_counts]]
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

    def has_usage(self) -> bool:
        """Whether any trial reports a cost, duration or tokens."""
        self.flush()
        return any(self._store.has(name) for name in USAGE_FIELDS)

    def usage(self, suite: str | None = None) -> TrialUsage | None:
        """Per-trial cost, duration and tokens of a suite (of every suite when ``None``), as
        :class:`gate.metrics.usage.TrialUsage`: one entry per trial that ran (passed, failed
        or errored; skipped trials did not run), NaN where a trial reports no value. Keys
        are stimulus names (``(suite, stimulus)`` pairs over every suite). ``None`` when no
        such trial exists (stimuli given as counts have no per-trial usage)."""
        chosen = [r for r in self.stimuli.values() if suite is None or r.suite == suite]
        if suite is None:
            return self._usage(chosen, lambda record: (record.suite, record.stimulus))
        return self._usage(chosen, lambda record: record.stimulus)

    def _usage(
        self, records: Sequence[StimulusTrials], key: Callable[[StimulusTrials], Any]
    ) -> TrialUsage | None:
        import numpy as np

        from gate.metrics.usage import TrialUsage

        self.flush()
        rows = [r._row for r in records if r._row >= 0]
        names = ["code", *(n for n in USAGE_FIELDS if self._store.has(n))]
        row_of, arrays = self._store.gather(rows, names)
        ran: Any = arrays[0] != SKIPPED
        if not ran.any():
            return None
        if ran.all():
            ran = slice(None)  # a view, not a copy of every array (a million trials: 40 MB)
        stored = [r for r in records if r._row >= 0]
        position = np.full(max(r._row for r in stored) + 1, -1, dtype=np.int64)
        position[[r._row for r in stored]] = np.arange(len(stored))
        values = dict(zip(names[1:], (a[ran] for a in arrays[1:]), strict=True))
        return TrialUsage.from_codes(
            [key(r) for r in stored],
            position[row_of[ran]],
            np.asarray(arrays[0][ran] == PASS),
            **values,
        )

    def finish(self) -> TrialTable:
        """Store what is buffered and give back the storage's spare room (a table that is
        read in full; adding more trials afterwards still works)."""
        self.flush()
        self._store.compact(len(self._rows))
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
        self.flush()
        return self._trials


def _runs(parts: list[tuple[Any, int]]) -> Iterator[list[tuple[Any, int]]]:
    """Consecutive parts that are one row each (an int) grouped; an array alone."""
    run: list[tuple[Any, int]] = []
    for part in parts:
        if isinstance(part[0], int):
            run.append(part)
            continue
        if run:
            yield run
            run = []
        yield [part]
    if run:
        yield run


def _usage_floats(
    name: str, values: Sequence[Any] | npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Usage values as floats (NaN where not a number) and which of them are given."""
    import numpy as np

    if isinstance(values, np.ndarray):
        column = values.astype(np.float64)  # a copy: the bad ones are set to NaN later
        return column, ~np.isnan(column)
    if set(map(type, values)) <= {int, float, type(None)}:
        try:
            column = np.array(values, dtype=np.float64)  # None: NaN
        except OverflowError:  # an integer past the float range
            column = np.array([usage_value(name, v) for v in values], dtype=np.float64)
            return column, np.array([v is not None for v in values], dtype=bool)
        return column, ~np.isnan(column)
    read = [usage_value(name, v) for v in values]
    given = np.array([u is not None for u in read], dtype=bool)
    return np.array([math.nan if u is None else u for u in read], dtype=np.float64), given


def _floats(column: Sequence[Any] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """A column of numbers, verdicts or None as floats (None: NaN)."""
    import numpy as np

    if isinstance(column, Coded):
        return column.lookup(column.values, np.float64)
    return np.array(column, dtype=np.float64)


def _truthy(column: Sequence[Any]) -> list[int]:
    """The positions of the entries that say something (a message, tags)."""
    import numpy as np

    if isinstance(column, Coded):
        says = column.lookup(list(map(bool, column.values)), np.bool_)
        at: list[int] = np.flatnonzero(says).tolist()
        return at
    return list(compress(range(len(column)), column))


def _int64(listed: Sequence[int]) -> tuple[npt.NDArray[np.int64], list[int] | None]:
    """Trial indices as int64, with stand-ins (and the true values) for those past 64 bits."""
    import numpy as np

    try:
        return np.asarray(listed, dtype=np.int64), None
    except OverflowError:
        exact = [int(i) for i in listed]
        return np.array([min(i, HUGE_INDEX) for i in exact], dtype=np.int64), exact
