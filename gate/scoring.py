"""Stimulus and suite scores (references 000, 001, 002) computed from the trial table.

Suite-level metrics are the mean of per-stimulus metrics, never a metric of the
pooled trials: mean_i p_i^k differs from (mean_i p_i)^k (statistics.md §2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import compress, repeat
from operator import attrgetter, is_
from typing import Any, Literal, NamedTuple, TypeVar, cast

import numpy as np
import numpy.typing as npt

from gate import metrics
from gate.errors import ConfigError, Provenance
from gate.metrics import Interval, IntervalMethod
from gate.metrics.reliability import ReliabilityRow, reliability_rows_flat
from gate.table import StimulusTrials, TableSummary, TrialTable
from gate.trials import TrialMessage

_T = TypeVar("_T")

Metric = Literal["pass_rate", "pass_at_k", "pass_hat_k", "score", "flakiness"]

#: where pass@k / pass^k count as "high" in the capability/consistency reading (reference 002).
HIGH = 0.8

PASS_AT_K_ESTIMATOR = "unbiased 1 - C(n-c,k)/C(n,k) (Chen et al. 2021)"
PASS_HAT_K_ESTIMATOR = (
    "unbiased C(c,k)/C(n,k) (Yao et al. 2024, tau-bench); plug-in (c/n)^k shown beside it"
)


#: the reading of trials that all errored: they say nothing about the agent
NOT_MEASURED = "not measured"


def reading(pass_at_k: float, pass_hat_k: float) -> str:
    """Reference 002's interpretation matrix, in words.

    >>> reading(1.0, 1.0), reading(1.0, 0.0), reading(0.0, 0.0)
    ('capable and consistent', 'capable but flaky', 'capability gap')
    """
    if pass_at_k < HIGH:
        return "capability gap"
    return "capable and consistent" if pass_hat_k >= HIGH else "capable but flaky"


class _ScoreColumns:
    """The per-stimulus values of one :func:`score_table` call, one array entry per scored
    stimulus: what the :class:`StimulusScore` views read (a 100,000-stimulus suite holds
    about 200 bytes per stimulus here instead of a kilobyte of Python objects). ``counts``:
    the scored stimuli's own summary (records, n, c, errors, skipped, score sums)."""

    __slots__ = (
        "at_hi",
        "at_k",
        "at_lo",
        "band",
        "confidence",
        "counts",
        "errors_counted",
        "hat_hi",
        "hat_k",
        "hat_lo",
        "labels",
        "percent",
        "plugin",
        "rate_hi",
        "rate_lo",
    )

    counts: TableSummary
    at_k: npt.NDArray[np.float64]
    hat_k: npt.NDArray[np.float64]
    plugin: npt.NDArray[np.float64]
    percent: npt.NDArray[np.float64]
    rate_lo: npt.NDArray[np.float64]
    rate_hi: npt.NDArray[np.float64]
    at_lo: npt.NDArray[np.float64]
    at_hi: npt.NDArray[np.float64]
    hat_lo: npt.NDArray[np.float64]
    hat_hi: npt.NDArray[np.float64]
    band: list[str]
    labels: tuple[str, str, str]
    confidence: float
    #: errored trials count as failures (and so are among each stimulus's trials)
    errors_counted: bool

    def __init__(self, counts: TableSummary, **columns: Any) -> None:
        self.counts = counts
        for name, value in columns.items():
            setattr(self, name, value)


class StimulusScore:
    """One stimulus: counts, estimators with intervals, flakiness (reference 000 StimulusScore).

    A read-only view of row ``index`` of its score's columns: each attribute is read (or
    derived) when asked for, as a plain Python value.
    """

    __slots__ = ("_columns", "_i")

    def __init__(self, columns: _ScoreColumns, index: int) -> None:
        self._columns = columns
        self._i = index

    #: the fields, as the dataclass this view replaces had them (equality compares them all)
    FIELDS = (
        "suite",
        "name",
        "tags",
        "trials",
        "passes",
        "errors",
        "skipped",
        "outcomes",
        "aggregate_score",
        "unscored",
        "pass_rate",
        "pass_rate_interval",
        "pass_at_k",
        "pass_at_k_interval",
        "pass_hat_k",
        "pass_hat_k_plugin",
        "pass_hat_k_interval",
        "flaky",
        "flakiness_percent",
        "flakiness_band",
        "messages",
    )

    def as_dict(self) -> dict[str, Any]:
        """Every field's value, by name."""
        return {name: getattr(self, name) for name in self.FIELDS}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StimulusScore):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash((self.suite, self.name, self.trials, self.passes, self.outcomes))

    def __repr__(self) -> str:
        return (
            f"StimulusScore(suite={self.suite!r}, name={self.name!r}, trials={self.trials}, "
            f"passes={self.passes}, outcomes={self.outcomes!r})"
        )

    @property
    def _record(self) -> StimulusTrials:
        record: StimulusTrials = self._columns.counts.records[self._i]
        return record

    @property
    def suite(self) -> str:
        return self._record.suite

    @property
    def name(self) -> str:
        return self._record.stimulus

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(sorted(self._record.tags))

    @property
    def trials(self) -> int:
        value: int = self._columns.counts.n.item(self._i)
        return value

    @property
    def passes(self) -> int:
        value: int = self._columns.counts.c.item(self._i)
        return value

    @property
    def errors(self) -> int:
        value: int = self._columns.counts.errors.item(self._i)
        return value

    @property
    def skipped(self) -> int:
        value: int = self._columns.counts.skipped.item(self._i)
        return value

    @property
    def outcomes(self) -> str:
        """P/F/E per counted trial in trial order; empty for a stimulus given as counts."""
        return self._columns.counts.outcomes(self._i)

    @property
    def aggregate_score(self) -> float:
        value: float = self._columns.counts.score_sum.item(self._i) / self.trials
        return value

    @property
    def unscored(self) -> bool:
        return not self._record.scored

    @property
    def pass_rate(self) -> float:
        return self.passes / self.trials

    def _interval(self, lo: Any, hi: Any, which: int) -> Interval:
        columns = self._columns
        return Interval(
            lo.item(self._i), hi.item(self._i), columns.labels[which], columns.confidence
        )

    @property
    def pass_rate_interval(self) -> Interval:
        return self._interval(self._columns.rate_lo, self._columns.rate_hi, 0)

    @property
    def pass_at_k(self) -> float:
        value: float = self._columns.at_k.item(self._i)
        return value

    @property
    def pass_at_k_interval(self) -> Interval:
        return self._interval(self._columns.at_lo, self._columns.at_hi, 1)

    @property
    def pass_hat_k(self) -> float:
        value: float = self._columns.hat_k.item(self._i)
        return value

    @property
    def pass_hat_k_plugin(self) -> float:
        value: float = self._columns.plugin.item(self._i)
        return value

    @property
    def pass_hat_k_interval(self) -> Interval:
        return self._interval(self._columns.hat_lo, self._columns.hat_hi, 2)

    @property
    def flaky(self) -> bool:
        return 0 < self.passes < self.trials

    @property
    def flakiness_percent(self) -> float:
        value: float = self._columns.percent.item(self._i)
        return value

    @property
    def flakiness_band(self) -> str:
        band: str = self._columns.band[self._i]
        return band

    @property
    def messages(self) -> tuple[TrialMessage, ...]:
        """Why trials did not pass: the first few read (gate.table.MESSAGES_KEPT), and the
        first error's when none of those is one."""
        return self._record.trial_messages

    @property
    def first_failure_where(self) -> Provenance | None:
        """Where its first failed or errored trial was read (``None`` for totals)."""
        return self._record.first_failure_where

    @property
    def reading(self) -> str:
        columns = self._columns
        return _reading_of(
            self.pass_at_k, self.pass_hat_k, self.trials, self.errors, columns.errors_counted
        )

    @property
    def ordered(self) -> bool:
        """Whether every counted trial's outcome is known in trial order (not a counts row)."""
        return _in_trial_order(self.outcomes, self.trials)

    def reliability(self) -> ReliabilityRow | None:
        """Reference 004's reliability summary of this stimulus's trials in order
        (``None`` without trial order: a counts file)."""
        return reliability_of([self])[0]

    @property
    def flakiness(self) -> float:
        """Minority outcomes / trials, min(c, n-c)/n, a fraction in [0, 0.5]."""
        return min(self.passes, self.trials - self.passes) / self.trials


#: the numeric fields :func:`score_arrays` gives, by the :class:`StimulusScore` name
SCORE_ARRAY_FIELDS = (
    "trials",
    "passes",
    "errors",
    "skipped",
    "pass_rate",
    "pass_at_k",
    "pass_hat_k",
    "pass_hat_k_plugin",
    "aggregate_score",
    "flakiness",
    "flakiness_percent",
    "pass_rate_lo",
    "pass_rate_hi",
    "pass_at_k_lo",
    "pass_at_k_hi",
    "pass_hat_k_lo",
    "pass_hat_k_hi",
)


def score_arrays(
    stimuli: Sequence[StimulusScore], fields: Sequence[str] = SCORE_ARRAY_FIELDS
) -> dict[str, npt.NDArray[Any]]:
    """The numeric fields of many stimuli at once, one array each (:data:`SCORE_ARRAY_FIELDS`,
    or those of them named in ``fields``; ``*_lo``/``*_hi``: the bounds of the ``*_interval``
    fields): what a report of 100,000 stimuli reads column by column instead of attribute by
    attribute. Ask for the fields needed: at 800,000 stimuli each is 6.4 MB."""
    columns = _shared_columns(stimuli)
    if columns is None:  # stimuli of several scores: one by one
        return {name: np.array([_field(x, name) for x in stimuli]) for name in fields}
    counts = columns.counts
    rows = _positions(stimuli)
    made: dict[str, Callable[[], npt.NDArray[Any]]] = {
        "trials": lambda: counts.n[rows],
        "passes": lambda: counts.c[rows],
        "errors": lambda: counts.errors[rows],
        "skipped": lambda: counts.skipped[rows],
        "pass_rate": lambda: counts.c[rows] / counts.n[rows],
        "pass_at_k": lambda: columns.at_k[rows],
        "pass_hat_k": lambda: columns.hat_k[rows],
        "pass_hat_k_plugin": lambda: columns.plugin[rows],
        "aggregate_score": lambda: counts.score_sum[rows] / counts.n[rows],
        "flakiness": lambda: _flakiness(counts.c[rows], counts.n[rows]),
        "flakiness_percent": lambda: columns.percent[rows],
        "pass_rate_lo": lambda: columns.rate_lo[rows],
        "pass_rate_hi": lambda: columns.rate_hi[rows],
        "pass_at_k_lo": lambda: columns.at_lo[rows],
        "pass_at_k_hi": lambda: columns.at_hi[rows],
        "pass_hat_k_lo": lambda: columns.hat_lo[rows],
        "pass_hat_k_hi": lambda: columns.hat_hi[rows],
    }
    return {name: made[name]() for name in fields}


def _flakiness(c: npt.NDArray[np.int64], n: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The minority outcome's share of each stimulus's trials, min(c, n - c) / n."""
    share: npt.NDArray[np.float64] = np.minimum(c, n - c) / n
    return share


#: the fields of :func:`score_arrays` a suite takes the mean of
_MEAN_FIELDS = ("pass_rate", "pass_at_k", "pass_hat_k", "pass_hat_k_plugin", "aggregate_score")


#: the fields of :func:`count_arrays`
COUNT_FIELDS = ("trials", "passes", "errors", "skipped")


def count_arrays(stimuli: Sequence[StimulusScore]) -> dict[str, npt.NDArray[np.int64]]:
    """The :data:`COUNT_FIELDS` of many stimuli, one array each: the part of
    :func:`score_arrays` that needs no interval."""
    columns = _shared_columns(stimuli)
    if columns is None:
        return {
            name: np.array([getattr(x, name) for x in stimuli], dtype=np.int64)
            for name in COUNT_FIELDS
        }
    return _counted(columns.counts, _positions(stimuli))


def _counted(counts: TableSummary, rows: npt.NDArray[np.int64]) -> dict[str, npt.NDArray[np.int64]]:
    return {
        "trials": counts.n[rows],
        "passes": counts.c[rows],
        "errors": counts.errors[rows],
        "skipped": counts.skipped[rows],
    }


def _shared_columns(stimuli: Sequence[StimulusScore]) -> _ScoreColumns | None:
    """The columns every one of ``stimuli`` is a view of; None when they are not all one
    score's (or there are none)."""
    if not stimuli:
        return None
    first = stimuli[0]._columns
    # map() in C: a report reads 100,000 stimuli a dozen times
    return first if all(map(is_, map(_COLUMNS_OF, stimuli), repeat(first))) else None


def _positions(stimuli: Sequence[StimulusScore]) -> npt.NDArray[np.int64]:
    return np.fromiter(map(_POSITION_OF, stimuli), dtype=np.int64, count=len(stimuli))


_COLUMNS_OF = attrgetter("_columns")
_POSITION_OF = attrgetter("_i")


def _together(
    stimuli: Sequence[StimulusScore],
    read: Callable[[TableSummary, list[int]], list[_T]],
    one: Callable[[StimulusScore], _T],
) -> list[_T]:
    """``read`` of the stimuli's table rows at once when they are one score's (the usual
    case), else ``one`` of each stimulus."""
    columns = _shared_columns(stimuli)
    if columns is None:
        return [one(s) for s in stimuli]
    return read(columns.counts, _positions(stimuli).tolist())


def outcomes_of(stimuli: Sequence[StimulusScore]) -> list[str]:
    """:attr:`StimulusScore.outcomes` of each stimulus, read from the table a block of
    stimuli at a time when they are one score's."""
    return _together(stimuli, TableSummary.outcomes_of, attrgetter("outcomes"))


def _trials_of(stimuli: Sequence[StimulusScore]) -> list[int]:
    return _together(stimuli, lambda counts, at: counts.n[at].tolist(), attrgetter("trials"))


def in_trial_order(stimuli: Sequence[StimulusScore]) -> list[bool]:
    """:attr:`StimulusScore.ordered` of each stimulus, read together."""
    return list(map(_in_trial_order, outcomes_of(stimuli), _trials_of(stimuli)))


def message_records_of(stimuli: Sequence[StimulusScore]) -> list[list[dict[str, Any]]]:
    """Each stimulus's messages as report entries (:meth:`TrialMessage.as_record`), read
    together."""
    return _together(
        stimuli,
        TableSummary.message_records_of,
        lambda s: [m.as_record() for m in s.messages],
    )


def scored_of(stimuli: Sequence[StimulusScore]) -> list[bool]:
    """Whether each stimulus has a score (:attr:`StimulusTrials.scored`), read together."""
    return _together(stimuli, TableSummary.scored_of, lambda s: s._record.scored)


def readings(
    stimuli: Sequence[StimulusScore], arrays: Mapping[str, npt.NDArray[Any]] | None = None
) -> list[str]:
    """:attr:`StimulusScore.reading` of each stimulus, a column at a time (``arrays``: their
    :func:`score_arrays`, when the caller has them)."""
    columns = ("pass_at_k", "pass_hat_k", "trials", "errors")
    if arrays is None:
        arrays = score_arrays(stimuli, columns)
    shared = _shared_columns(stimuli)
    counted: Any = (
        repeat(shared.errors_counted, len(stimuli))
        if shared is not None
        else [x._columns.errors_counted for x in stimuli]
    )
    return list(map(_reading_of, *(arrays[name].tolist() for name in columns), counted))


def _reading_of(
    pass_at_k: float, pass_hat_k: float, trials: int, errors: int, errors_counted: bool
) -> str:
    """A stimulus's reading; "not measured" when errors count and every counted trial
    errored: a harness that broke, not an agent that cannot."""
    if errors_counted and 0 < trials <= errors:
        return NOT_MEASURED
    return reading(pass_at_k, pass_hat_k)


def stimulus_records(stimuli: Sequence[StimulusScore]) -> list[StimulusTrials]:
    """The table's record of each stimulus (its names, tags, messages), a column at a time."""
    return [x._columns.counts.records[x._i] for x in stimuli]


def names_of(stimuli: Sequence[StimulusScore]) -> list[str]:
    """:attr:`StimulusScore.name` of each stimulus, read from the records together."""
    return [record.stimulus for record in stimulus_records(stimuli)]


def _field(stimulus: StimulusScore, name: str) -> Any:
    if name.endswith(("_lo", "_hi")):
        interval = getattr(stimulus, name[:-3] + "_interval")
        return interval.lo if name.endswith("_lo") else interval.hi
    return getattr(stimulus, name)


class NotScored(NamedTuple):
    """A stimulus with no counted trial (all skipped, or all errored with errors excluded)."""

    suite: str
    name: str
    skipped: int
    errors: int


def _in_trial_order(outcomes: str, trials: int) -> bool:
    """Whether ``outcomes`` (a stimulus's P/F/E string) gives every one of its counted
    ``trials`` in trial order: what :attr:`StimulusScore.ordered` says."""
    return bool(outcomes) and len(outcomes) == trials


def reliability_of(
    stimuli: Sequence[StimulusScore], outcomes: Sequence[str] | None = None
) -> list[ReliabilityRow | None]:
    """Reference 004's summaries of many stimuli at once (:func:`gate.metrics.reliability_rows`),
    ``None`` for a stimulus without trial order. ``outcomes``: each one's
    :attr:`StimulusScore.outcomes`, when the caller has them already."""
    if outcomes is None:
        outcomes = outcomes_of(stimuli)
    keep = list(map(_in_trial_order, outcomes, _trials_of(stimuli)))
    ordered = list(compress(outcomes, keep))
    passed = np.frombuffer("".join(ordered).encode("ascii"), dtype=np.uint8) == ord("P")
    sizes = np.fromiter(map(len, ordered), dtype=np.int64, count=len(ordered))
    rows = reliability_rows_flat(passed, sizes)
    if len(rows) == len(outcomes):
        return list(rows)
    found = iter(rows)
    return [next(found) if has_order else None for has_order in keep]


@dataclass(frozen=True)
class SuiteScore:
    """All stimuli of a check and their aggregates (reference 000 SkillScore)."""

    name: str
    k: int
    confidence: float
    interval_method: str
    errors_policy: Literal["fail", "exclude"]
    stimuli: tuple[StimulusScore, ...]
    not_scored: tuple[str, ...]
    score: float
    pass_rate: float
    pass_rate_interval: Interval
    pass_at_k: float
    pass_at_k_interval: Interval
    pass_hat_k: float
    pass_hat_k_plugin: float
    pass_hat_k_interval: Interval
    #: each stimulus of ``not_scored`` (same order) with its skipped and errored trials: a
    #: stimulus whose trials were all skipped is listed with its count, not dropped.
    left_out: tuple[NotScored, ...] = ()

    @cached_property
    def per_trial(self) -> bool:
        """Whether some stimulus came as trials (else every one is a counts row: no trial
        order, no messages, nothing for the views that read them to look for)."""
        return any(record.ordered for record in stimulus_records(self.stimuli))

    def count_arrays(self) -> dict[str, npt.NDArray[np.int64]]:
        """Each stimulus's trials, passes, errors and skipped trials, as arrays: made at each
        call (kept for the run, they would cost 32 bytes a stimulus)."""
        return count_arrays(self.stimuli)

    @cached_property
    def _totals(self) -> dict[str, int]:
        """Counts over the stimuli, summed once (a 100,000-stimulus report asks often)."""
        if not self.stimuli:
            return {"trials": 0, "passes": 0, "errors": 0, "skipped": 0, "flaky": 0}
        arrays = self.count_arrays()
        n, c = arrays["trials"], arrays["passes"]
        return {
            "trials": int(n.sum()),
            "passes": int(c.sum()),
            "errors": int(arrays["errors"].sum()),
            "skipped": int(arrays["skipped"].sum()),
            "flaky": int(np.count_nonzero((c > 0) & (c < n))),
        }

    @property
    def trials(self) -> int:
        return self._totals["trials"]

    @property
    def passes(self) -> int:
        return self._totals["passes"]

    @property
    def errors(self) -> int:
        """Errored trials, those of stimuli left unscored too (all errors, excluded)."""
        return self._totals["errors"] + sum(u.errors for u in self.left_out)

    @property
    def skipped(self) -> int:
        """Skipped trials, those of stimuli left unscored too (all of them skipped)."""
        return self._totals["skipped"] + sum(u.skipped for u in self.left_out)

    @property
    def flaky_stimuli(self) -> int:
        return self._totals["flaky"]

    @property
    def reading(self) -> str:
        counted = self._totals["trials"]
        if self.errors_policy == "fail" and counted and self._totals["errors"] >= counted:
            return NOT_MEASURED
        return reading(self.pass_at_k, self.pass_hat_k)

    @property
    def suite_interval_method(self) -> str:
        return self.pass_rate_interval.method

    @cached_property
    def suite_names(self) -> tuple[str, ...]:
        """The suites the stimuli belong to, sorted."""
        return tuple(sorted({record.suite for record in stimulus_records(self.stimuli)}))

    def chosen(self, tag: str | None = None, suite: str | None = None) -> list[StimulusScore]:
        """The stimuli carrying ``tag`` in the suite named ``suite`` (``None``: any)."""
        if tag is None and (suite is None or self.suite_names == (suite,)):
            return list(self.stimuli)
        return [
            s
            for s in self.stimuli
            if (tag is None or tag in s.tags) and (suite is None or s.suite == suite)
        ]

    def counts(
        self, tag: str | None = None, suite: str | None = None
    ) -> tuple[np.ndarray, np.ndarray, list[StimulusScore]]:
        chosen = self.chosen(tag, suite)
        if not chosen:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), chosen
        arrays = score_arrays(chosen, ("trials", "passes"))
        return arrays["trials"], arrays["passes"], chosen

    def bayes(self) -> metrics.MetricValue:
        """Bayes@N of these stimuli (Hariri et al. 2026; scorio's convention): the posterior
        mean pass rate with its credible interval at the suite's confidence."""
        return self._bayes

    @cached_property
    def _bayes(self) -> metrics.MetricValue:  # the summary, the JSON and the notes all ask
        n, c, _ = self.counts()
        data = metrics.SuiteOutcomes.from_counts(n, c)
        return metrics.evaluate(_bayes_metric(), data, confidence=self.confidence)

    def by_suite(self) -> tuple[SuiteScore, ...]:
        """One score per suite (sorted by name): its stimuli and their aggregates, at this
        score's k, level and interval method. A score of one suite is itself."""
        names = self.suite_names
        if len(names) <= 1:
            return (self,)
        # Grouped in one pass each: a file of many suites must not cost suites × stimuli.
        of_suite: dict[str, list[StimulusScore]] = {name: [] for name in names}
        for stimulus, record in zip(self.stimuli, stimulus_records(self.stimuli), strict=True):
            of_suite[record.suite].append(stimulus)
        left_out: dict[str, list[NotScored]] = {name: [] for name in names}
        for unscored in self.left_out:
            left_out.setdefault(unscored.suite, []).append(unscored)
        groups = [
            _Group(
                name,
                tuple(of_suite[name]),
                tuple(u.name for u in left_out[name]),
                tuple(left_out[name]),
            )
            for name in names
        ]
        return tuple(
            _aggregates(
                groups,
                k=self.k,
                confidence=self.confidence,
                interval=self.interval_method,
                errors=self.errors_policy,
            )
        )


@cache
def _bayes_metric() -> metrics.BoundMetric:
    """Bayes@N, checked once: resolving probes the metric on a tiny suite (a millisecond,
    which a file of thousands of suites paid per suite)."""
    return metrics.resolve("bayes", {})


def default_k(records: Sequence[StimulusTrials], errors_as_failures: bool) -> int:
    counted = [r.n(errors_as_failures) for r in records]
    positive = [n for n in counted if n > 0]
    return min(positive) if positive else 1


def score_table(
    table: TrialTable,
    *,
    k: int | None = None,
    confidence: float = 0.95,
    interval: str = "mid-p",
    errors: Literal["fail", "exclude"] = "fail",
) -> SuiteScore:
    """Score every stimulus of ``table`` and aggregate them into one suite.

    Per-stimulus metrics are computed as arrays over all stimuli at once (one
    numpy call per metric, not one per stimulus: 10,000 stimuli cost milliseconds),
    from the table's sufficient statistics n, c and the score sum.
    """
    errors_as_failures = errors == "fail"
    summary = table.summary(errors_as_failures)
    records = summary.records
    counted = summary.n
    scorable = np.flatnonzero(counted > 0)
    unscored: list[int] = np.flatnonzero(counted == 0).tolist()
    several = len(table.suite_names()) > 1

    def label(record: StimulusTrials) -> str:  # as _label, without re-sorting per stimulus
        return f"{record.suite}/{record.stimulus}" if several else record.stimulus

    not_scored = tuple(label(records[i]) for i in unscored)
    skipped, errored = summary.skipped, summary.errors
    left_out = tuple(
        NotScored(records[i].suite, records[i].stimulus, int(skipped[i]), int(errored[i]))
        for i in unscored
    )
    if not scorable.size:
        raise ConfigError("no stimulus has a counted trial (all skipped or excluded errors)")
    fewest = int(counted[scorable].min())
    chosen_k = k if k is not None else fewest
    if chosen_k > fewest:
        first = int(scorable[np.argmax(counted[scorable] < chosen_k)])
        raise ConfigError(
            f"k = {chosen_k} exceeds the {counted[first]} counted "
            f"{'trial' if counted[first] == 1 else 'trials'} of stimulus "
            f"{label(records[first])!r}; choose k ≤ {fewest}"
        )
    method = cast(IntervalMethod, interval)
    counts = summary.take(scorable.astype(np.int64))
    n_arr, c_arr = counts.n, counts.c
    rate_iv = metrics.rate_interval(c_arr, n_arr, confidence, method)
    at_iv = metrics.pass_at_k_interval(c_arr, n_arr, chosen_k, confidence, method)
    hat_iv = metrics.pass_hat_k_interval(c_arr, n_arr, chosen_k, confidence, method)
    at_k = metrics.pass_at_k_counts(n_arr, c_arr, chosen_k)
    hat_k = metrics.pass_hat_k_counts(n_arr, c_arr, chosen_k)
    plugin = metrics.pass_hat_k_plugin_counts(n_arr, c_arr, chosen_k)
    percent = metrics.flakiness_percent(n_arr, c_arr)
    bands = {p: metrics.flakiness_band(p) for p in set(percent.tolist())}
    ivs = {
        name + side: np.atleast_1d(np.asarray(getattr(iv, side), dtype=np.float64))
        for name, iv in (("rate_", rate_iv), ("at_", at_iv), ("hat_", hat_iv))
        for side in ("lo", "hi")
    }
    columns = _ScoreColumns(
        counts,
        at_k=np.asarray(at_k, dtype=np.float64),
        hat_k=np.asarray(hat_k, dtype=np.float64),
        plugin=np.asarray(plugin, dtype=np.float64),
        percent=np.asarray(percent, dtype=np.float64),
        band=[bands[p] for p in percent.tolist()],
        labels=(rate_iv.method, at_iv.method, hat_iv.method),
        confidence=rate_iv.confidence,
        errors_counted=errors_as_failures,
        **ivs,
    )
    stimuli = tuple(StimulusScore(columns, j) for j in range(len(scorable)))
    return aggregate(
        stimuli,
        name=", ".join(table.suite_names()),
        k=chosen_k,
        confidence=confidence,
        interval=interval,
        errors=errors,
        not_scored=not_scored,
        left_out=left_out,
    )


def aggregate(
    stimuli: tuple[StimulusScore, ...],
    *,
    name: str,
    k: int,
    confidence: float,
    interval: str,
    errors: Literal["fail", "exclude"],
    not_scored: tuple[str, ...] = (),
    left_out: tuple[NotScored, ...] = (),
) -> SuiteScore:
    """The suite of ``stimuli`` (scored at ``k``): the means of their values, each with the
    suite interval at n_eff = M·min(nᵢ)/k (statistics.md §2)."""
    (suite,) = _aggregates(
        [_Group(name, stimuli, not_scored, left_out)],
        k=k,
        confidence=confidence,
        interval=interval,
        errors=errors,
    )
    return suite


class _Group(NamedTuple):
    name: str
    stimuli: tuple[StimulusScore, ...]
    not_scored: tuple[str, ...]
    left_out: tuple[NotScored, ...]


def _aggregates(
    groups: Sequence[_Group],
    *,
    k: int,
    confidence: float,
    interval: str,
    errors: Literal["fail", "exclude"],
) -> list[SuiteScore]:
    """:func:`aggregate` of each group, their suite intervals solved together (three calls
    for any number of suites)."""
    method = cast(IntervalMethod, interval)
    means: list[dict[str, float]] = []
    trials: list[npt.NDArray[np.int64]] = []
    for group in groups:
        fields = ("trials", *_MEAN_FIELDS)
        arrays = (
            score_arrays(group.stimuli, fields)
            if group.stimuli
            else {name: np.zeros(0) for name in fields}
        )
        trials.append(arrays.pop("trials").astype(np.int64))
        means.append({field: float(np.mean(a.astype(np.float64))) for field, a in arrays.items()})
    intervals = {
        metric: metrics.suite_intervals(
            [m[metric] for m in means], trials, degree, confidence, method
        )
        for metric, degree in (("pass_rate", 1), ("pass_at_k", k), ("pass_hat_k", k))
    }
    return [
        SuiteScore(
            name=group.name,
            k=k,
            confidence=confidence,
            interval_method=interval,
            errors_policy=errors,
            stimuli=group.stimuli,
            not_scored=group.not_scored,
            left_out=group.left_out,
            score=mean["aggregate_score"],
            pass_rate=mean["pass_rate"],
            pass_rate_interval=intervals["pass_rate"][i],
            pass_at_k=mean["pass_at_k"],
            pass_at_k_interval=intervals["pass_at_k"][i],
            pass_hat_k=mean["pass_hat_k"],
            pass_hat_k_plugin=mean["pass_hat_k_plugin"],
            pass_hat_k_interval=intervals["pass_hat_k"][i],
        )
        for i, (group, mean) in enumerate(zip(groups, means, strict=True))
    ]


def _label(record: StimulusTrials, table: TrialTable) -> str:
    return record.stimulus if len(table.suite_names()) <= 1 else f"{record.suite}/{record.stimulus}"


@dataclass(frozen=True)
class MetricValues:
    """One metric at one k over a set of stimuli: per-stimulus values and the suite mean."""

    stimuli: tuple[StimulusScore, ...]
    values: np.ndarray
    #: each stimulus's interval (``lo``/``hi`` arrays), None for score and flakiness
    intervals: Interval | None
    suite_value: float
    suite_interval: Interval | None


def metric_values(
    suite: SuiteScore,
    metric: Metric,
    *,
    k: int | None = None,
    estimator: Literal["unbiased", "plugin"] = "unbiased",
    tag: str | None = None,
    suite_name: str | None = None,
) -> MetricValues:
    """Evaluate ``metric`` (at ``k``, default the suite's) on the stimuli carrying ``tag`` in
    the suite ``suite_name`` (``None``: every suite)."""
    n, c, chosen = suite.counts(tag, suite_name)
    if not chosen:
        raise ConfigError(f"no stimulus carries the tag {tag!r}")
    level, method = suite.confidence, suite.interval_method
    kk = k if k is not None else suite.k
    if metric in ("pass_at_k", "pass_hat_k") and int(n.min()) < kk:
        too_few = [s for s in chosen if s.trials < kk]
        if too_few:
            raise ConfigError(
                f"a gate needs k = {kk} but stimulus {too_few[0].name!r} has only "
                f"{too_few[0].trials} counted {'trial' if too_few[0].trials == 1 else 'trials'}; "
                "it cannot be evaluated"
            )
    interval_method = cast(IntervalMethod, method)
    per: Interval | None = None
    suite_iv: Interval | None = None
    if metric == "pass_rate":
        values = c / n
        per = metrics.rate_interval(c, n, level, interval_method)
        suite_iv = metrics.suite_interval(float(np.mean(values)), n, 1, level, interval_method)
    elif metric == "pass_at_k":
        values = metrics.pass_at_k_counts(n, c, kk)
        per = metrics.pass_at_k_interval(c, n, kk, level, interval_method)
        suite_iv = metrics.suite_interval(float(np.mean(values)), n, kk, level, interval_method)
    elif metric == "pass_hat_k":
        unbiased = metrics.pass_hat_k_counts(n, c, kk)
        plugin = estimator == "plugin"
        values = metrics.pass_hat_k_plugin_counts(n, c, kk) if plugin else unbiased
        per = metrics.pass_hat_k_interval(c, n, kk, level, interval_method)
        # The interval is for the latent mean of p_i^k, centred on its unbiased estimate
        # whichever point estimator the gate reports.
        suite_iv = metrics.suite_interval(float(np.mean(unbiased)), n, kk, level, interval_method)
    elif metric == "score":
        values = score_arrays(chosen, ("aggregate_score",))["aggregate_score"]
    else:
        values = score_arrays(chosen, ("flakiness",))["flakiness"]
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return MetricValues(tuple(chosen), values, per, float(np.mean(values)), suite_iv)
