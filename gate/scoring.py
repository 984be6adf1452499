"""Stimulus and suite scores (references 000, 001, 002) computed from the trial table.

Suite-level metrics are the mean of per-stimulus metrics, never a metric of the
pooled trials: mean_i p_i^k differs from (mean_i p_i)^k (statistics.md §2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, cast

import numpy as np

from gate import metrics
from gate.errors import ConfigError
from gate.metrics import Interval, IntervalMethod
from gate.metrics.reliability import ReliabilityRow, reliability_rows
from gate.table import StimulusTrials, TrialTable
from gate.trials import TrialMessage

Metric = Literal["pass_rate", "pass_at_k", "pass_hat_k", "score", "flakiness"]

#: where pass@k / pass^k count as "high" in the capability/consistency reading (reference 002).
HIGH = 0.8

PASS_AT_K_ESTIMATOR = "unbiased 1 - C(n-c,k)/C(n,k) (Chen et al. 2021)"
PASS_HAT_K_ESTIMATOR = (
    "unbiased C(c,k)/C(n,k) (Yao et al. 2024, tau-bench); plug-in (c/n)^k shown beside it"
)


def reading(pass_at_k: float, pass_hat_k: float) -> str:
    """Reference 002's interpretation matrix, in words.

    >>> reading(1.0, 1.0), reading(1.0, 0.0), reading(0.0, 0.0)
    ('capable and consistent', 'capable but flaky', 'capability gap')
    """
    if pass_at_k < HIGH:
        return "capability gap"
    return "capable and consistent" if pass_hat_k >= HIGH else "capable but flaky"


@dataclass(frozen=True)
class StimulusScore:
    """One stimulus: counts, estimators with intervals, flakiness (reference 000 StimulusScore)."""

    suite: str
    name: str
    tags: tuple[str, ...]
    trials: int
    passes: int
    errors: int
    skipped: int
    outcomes: str
    aggregate_score: float
    unscored: bool
    pass_rate: float
    pass_rate_interval: Interval
    pass_at_k: float
    pass_at_k_interval: Interval
    pass_hat_k: float
    pass_hat_k_plugin: float
    pass_hat_k_interval: Interval
    flaky: bool
    flakiness_percent: float
    flakiness_band: str
    #: why trials did not pass: the first few read (gate.table.MESSAGES_KEPT)
    messages: tuple[TrialMessage, ...]

    @property
    def reading(self) -> str:
        return reading(self.pass_at_k, self.pass_hat_k)

    @property
    def ordered(self) -> bool:
        """Whether every counted trial's outcome is known in trial order (not a counts row)."""
        return bool(self.outcomes) and len(self.outcomes) == self.trials

    def reliability(self) -> ReliabilityRow | None:
        """Reference 004's reliability summary of this stimulus's trials in order
        (``None`` without trial order: a counts file)."""
        return reliability_of([self])[0]

    @property
    def flakiness(self) -> float:
        """Minority outcomes / trials, min(c, n-c)/n, a fraction in [0, 0.5]."""
        return min(self.passes, self.trials - self.passes) / self.trials


class NotScored(NamedTuple):
    """A stimulus with no counted trial (all skipped, or all errored with errors excluded)."""

    suite: str
    name: str
    skipped: int
    errors: int


def reliability_of(stimuli: Sequence[StimulusScore]) -> list[ReliabilityRow | None]:
    """Reference 004's summaries of many stimuli at once (:func:`gate.metrics.reliability_rows`),
    ``None`` for a stimulus without trial order."""
    ordered = [s for s in stimuli if s.ordered]
    rows = reliability_rows(
        [np.frombuffer(s.outcomes.encode(), dtype=np.uint8) == ord("P") for s in ordered]
    )
    found = dict(zip((id(s) for s in ordered), rows, strict=True))
    return [found.get(id(s)) for s in stimuli]


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

    @property
    def trials(self) -> int:
        return sum(s.trials for s in self.stimuli)

    @property
    def passes(self) -> int:
        return sum(s.passes for s in self.stimuli)

    @property
    def errors(self) -> int:
        """Errored trials, those of stimuli left unscored too (all errors, excluded)."""
        return sum(s.errors for s in self.stimuli) + sum(u.errors for u in self.left_out)

    @property
    def skipped(self) -> int:
        """Skipped trials, those of stimuli left unscored too (all of them skipped)."""
        return sum(s.skipped for s in self.stimuli) + sum(u.skipped for u in self.left_out)

    @property
    def flaky_stimuli(self) -> int:
        return sum(s.flaky for s in self.stimuli)

    @property
    def reading(self) -> str:
        return reading(self.pass_at_k, self.pass_hat_k)

    @property
    def suite_interval_method(self) -> str:
        return self.pass_rate_interval.method

    @property
    def suite_names(self) -> tuple[str, ...]:
        """The suites the stimuli belong to, sorted."""
        return tuple(sorted({s.suite for s in self.stimuli}))

    def chosen(self, tag: str | None = None, suite: str | None = None) -> list[StimulusScore]:
        """The stimuli carrying ``tag`` in the suite named ``suite`` (``None``: any)."""
        return [
            s
            for s in self.stimuli
            if (tag is None or tag in s.tags) and (suite is None or s.suite == suite)
        ]

    def counts(
        self, tag: str | None = None, suite: str | None = None
    ) -> tuple[np.ndarray, np.ndarray, list[StimulusScore]]:
        chosen = self.chosen(tag, suite)
        n = np.array([s.trials for s in chosen], dtype=np.int64)
        c = np.array([s.passes for s in chosen], dtype=np.int64)
        return n, c, chosen

    def bayes(self) -> metrics.MetricValue:
        """Bayes@N of these stimuli (Hariri et al. 2026; scorio's convention): the posterior
        mean pass rate with its credible interval at the suite's confidence."""
        n, c, _ = self.counts()
        data = metrics.SuiteOutcomes.from_counts(n, c)
        return metrics.evaluate(metrics.resolve("bayes", {}), data, confidence=self.confidence)

    def by_suite(self) -> tuple[SuiteScore, ...]:
        """One score per suite (sorted by name): its stimuli and their aggregates, at this
        score's k, level and interval method. A score of one suite is itself."""
        names = self.suite_names
        if len(names) <= 1:
            return (self,)
        return tuple(
            aggregate(
                tuple(s for s in self.stimuli if s.suite == name),
                name=name,
                k=self.k,
                confidence=self.confidence,
                interval=self.interval_method,
                errors=self.errors_policy,
                not_scored=tuple(u.name for u in self.left_out if u.suite == name),
                left_out=tuple(u for u in self.left_out if u.suite == name),
            )
            for name in names
        )


def default_k(records: Sequence[StimulusTrials], errors_as_failures: bool) -> int:
    counted = [r.n(errors_as_failures) for r in records]
    positive = [n for n in counted if n > 0]
    return min(positive) if positive else 1


def _stimulus_score(
    record: StimulusTrials,
    i: int,
    columns: dict[str, list[Any]],
    labels: tuple[str, str, str],
    confidence: float,
    errors_as_failures: bool,
) -> StimulusScore:
    """Stimulus ``i`` of the per-stimulus ``columns`` that score_table computed as arrays."""
    n, c = columns["n"][i], columns["c"][i]

    def interval(name: str, label: str) -> Interval:
        return Interval(columns[name + "_lo"][i], columns[name + "_hi"][i], label, confidence)

    return StimulusScore(
        suite=record.suite,
        name=record.stimulus,
        tags=tuple(sorted(record.tags)),
        trials=n,
        passes=c,
        errors=columns["errors"][i],
        skipped=columns["skipped"][i],
        # Empty for a stimulus given as counts: its trial order is unknown.
        outcomes=record.outcomes(errors_as_failures),
        aggregate_score=columns["score_sum"][i] / n,
        unscored=not record.scored,
        pass_rate=c / n,
        pass_rate_interval=interval("rate", labels[0]),
        pass_at_k=columns["pass_at_k"][i],
        pass_at_k_interval=interval("at", labels[1]),
        pass_hat_k=columns["pass_hat_k"][i],
        pass_hat_k_plugin=columns["plugin"][i],
        pass_hat_k_interval=interval("hat", labels[2]),
        flaky=0 < c < n,
        flakiness_percent=columns["percent"][i],
        flakiness_band=columns["band"][i],
        messages=record.trial_messages,
    )


def _scalar(interval: Interval) -> Interval:
    return Interval(float(interval.lo), float(interval.hi), interval.method, interval.confidence)


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
    counted: list[int] = summary.n.tolist()
    scorable = [i for i, n in enumerate(counted) if n > 0]
    several = len(table.suite_names()) > 1

    def label(record: StimulusTrials) -> str:  # as _label, without re-sorting per stimulus
        return f"{record.suite}/{record.stimulus}" if several else record.stimulus

    not_scored = tuple(label(records[i]) for i, n in enumerate(counted) if n == 0)
    skipped, errored = summary.skipped.tolist(), summary.errors.tolist()
    left_out = tuple(
        NotScored(records[i].suite, records[i].stimulus, skipped[i], errored[i])
        for i, n in enumerate(counted)
        if n == 0
    )
    if not scorable:
        raise ConfigError("no stimulus has a counted trial (all skipped or excluded errors)")
    fewest = min(counted[i] for i in scorable)
    chosen_k = k if k is not None else fewest
    if chosen_k > fewest:
        first = next(i for i in scorable if counted[i] < chosen_k)
        raise ConfigError(
            f"k = {chosen_k} exceeds the {counted[first]} counted trial(s) of stimulus "
            f"{label(records[first])!r}; choose k ≤ {fewest}"
        )
    method = cast(IntervalMethod, interval)
    chosen = np.array(scorable, dtype=np.int64)
    n_arr, c_arr = summary.n[chosen], summary.c[chosen]
    rate_iv = metrics.rate_interval(c_arr, n_arr, confidence, method)
    at_iv = metrics.pass_at_k_interval(c_arr, n_arr, chosen_k, confidence, method)
    hat_iv = metrics.pass_hat_k_interval(c_arr, n_arr, chosen_k, confidence, method)
    at_k = metrics.pass_at_k_counts(n_arr, c_arr, chosen_k)
    hat_k = metrics.pass_hat_k_counts(n_arr, c_arr, chosen_k)
    plugin = metrics.pass_hat_k_plugin_counts(n_arr, c_arr, chosen_k)
    percent = metrics.flakiness_percent(n_arr, c_arr)
    band = {p: metrics.flakiness_band(p) for p in set(percent.tolist())}
    columns: dict[str, list[Any]] = {
        "n": n_arr.tolist(),
        "c": c_arr.tolist(),
        "errors": summary.errors[chosen].tolist(),
        "skipped": summary.skipped[chosen].tolist(),
        "score_sum": summary.score_sum[chosen].tolist(),
        "pass_at_k": at_k.tolist(),
        "pass_hat_k": hat_k.tolist(),
        "plugin": plugin.tolist(),
        "percent": percent.tolist(),
        "band": [band[p] for p in percent.tolist()],
    }
    for name, iv in (("rate", rate_iv), ("at", at_iv), ("hat", hat_iv)):
        columns[name + "_lo"] = np.atleast_1d(np.asarray(iv.lo, dtype=np.float64)).tolist()
        columns[name + "_hi"] = np.atleast_1d(np.asarray(iv.hi, dtype=np.float64)).tolist()
    labels = (rate_iv.method, at_iv.method, hat_iv.method)
    level = rate_iv.confidence
    stimuli = tuple(
        _stimulus_score(records[i], j, columns, labels, level, errors_as_failures)
        for j, i in enumerate(scorable)
    )
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
    method = cast(IntervalMethod, interval)
    n_arr = np.array([s.trials for s in stimuli], dtype=np.int64)

    def mean(values: list[float]) -> float:
        return float(np.mean(np.array(values, dtype=np.float64)))

    pass_rate = mean([s.pass_rate for s in stimuli])
    pass_at_k = mean([s.pass_at_k for s in stimuli])
    pass_hat_k = mean([s.pass_hat_k for s in stimuli])
    return SuiteScore(
        name=name,
        k=k,
        confidence=confidence,
        interval_method=interval,
        errors_policy=errors,
        stimuli=stimuli,
        not_scored=not_scored,
        left_out=left_out,
        score=mean([s.aggregate_score for s in stimuli]),
        pass_rate=pass_rate,
        pass_rate_interval=metrics.suite_interval(pass_rate, n_arr, 1, confidence, method),
        pass_at_k=pass_at_k,
        pass_at_k_interval=metrics.suite_interval(pass_at_k, n_arr, k, confidence, method),
        pass_hat_k=pass_hat_k,
        pass_hat_k_plugin=mean([s.pass_hat_k_plugin for s in stimuli]),
        pass_hat_k_interval=metrics.suite_interval(pass_hat_k, n_arr, k, confidence, method),
    )


def _label(record: StimulusTrials, table: TrialTable) -> str:
    return record.stimulus if len(table.suite_names()) <= 1 else f"{record.suite}/{record.stimulus}"


@dataclass(frozen=True)
class MetricValues:
    """One metric at one k over a set of stimuli: per-stimulus values and the suite mean."""

    stimuli: tuple[StimulusScore, ...]
    values: np.ndarray
    intervals: tuple[Interval, ...]
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
    if metric in ("pass_at_k", "pass_hat_k"):
        too_few = [s for s in chosen if s.trials < kk]
        if too_few:
            raise ConfigError(
                f"a gate needs k = {kk} but stimulus {too_few[0].name!r} has only "
                f"{too_few[0].trials} counted trial(s); it cannot be evaluated"
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
        values = np.array([s.aggregate_score for s in chosen])
    else:
        values = np.array([s.flakiness for s in chosen])
    intervals: tuple[Interval, ...] = ()
    if per is not None:
        lo, hi = np.atleast_1d(per.lo), np.atleast_1d(per.hi)
        intervals = tuple(
            Interval(float(a), float(b), per.method, per.confidence)
            for a, b in zip(lo, hi, strict=True)
        )
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return MetricValues(tuple(chosen), values, intervals, float(np.mean(values)), suite_iv)
