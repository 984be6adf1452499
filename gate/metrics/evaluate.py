"""Evaluate a registry metric on a suite: suite value, per-stimulus values, interval.

:func:`evaluate` takes a :class:`~gate.metrics.registry.BoundMetric` (from
:func:`~gate.metrics.registry.resolve`) and the suite's data:

- :class:`SuiteOutcomes` for pass/fail metrics: per-stimulus trials ``n`` and
  passes ``c``, optionally each stimulus's outcomes in trial order (reference
  004's order-dependent summaries need them) and category counts with their
  rewards (Bayes@N, avg@N, Max@k on categorical suites); a plain 0/1 matrix is
  read as scorio's ``R``.
- :class:`~gate.metrics.usage.TrialUsage` for cost, duration and tokens.

Conventions (scorio 0.2.3 on the stimuli × trials matrix): the suite value of
a per-stimulus metric is the mean over stimuli (rows); on a ragged suite each
stimulus uses its own n (the ``*_counts`` forms, which equal scorio's matrix
forms when every n is equal). ``geom_ds_at_k``, ``geo_spectrum_at_k`` and
``geo_spectrum_star_at_k`` blend suite means, as scorio does; for them (and for
Bayes@N, avg@N) a stimulus's own value is the metric computed on that stimulus
alone. Intervals are scorio's ``*_ci`` posterior summaries, clipped to the
metric's range, centred on the posterior mean (``MetricInterval.center``),
which is not the point estimate ``MetricValue.value``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._validation import (
    check_binary_matrix,
    check_category_counts,
    check_confidence,
    check_counts,
    check_limits,
    check_outcomes,
    check_weights,
)
from gate.metrics.intervals import CIResult
from gate.metrics.registry import Bound, BoundMetric
from gate.metrics.usage import (
    RESAMPLES,
    SEED,
    MissingUsageError,
    TrialUsage,
    cost_summary,
    duration_summary,
    tokens_summary,
)

__all__ = [
    "MetricDataError",
    "MetricInterval",
    "MetricValue",
    "StimulusVerdict",
    "SuiteOutcomes",
    "evaluate",
    "judge_stimuli",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class MetricDataError(ValueError):
    """The suite's data cannot give this metric (no trial order, k above n, no usage values)."""


@dataclass(frozen=True)
class SuiteOutcomes:
    """Pass/fail data of one suite, checked once; build it with a ``from_*`` constructor.

    ``n``/``c``: counted trials and passes per stimulus (every n >= 1);
    ``ordered``: each stimulus's outcomes in trial order, or ``None`` when the
    format has no order (a counts file); ``category_counts``/``weights``: per
    stimulus counts of each outcome category and the categories' rewards, or
    ``None`` (then Bayes@N, avg@N, Max@k read [n - c, c] with rewards [0, 1]);
    ``names``: stimulus names for error messages.
    """

    n: IntArray
    c: IntArray
    ordered: tuple[npt.NDArray[np.bool_], ...] | None = None
    category_counts: IntArray | None = None
    weights: FloatArray | None = None
    names: tuple[str, ...] | None = None

    @classmethod
    def from_counts(
        cls, n: npt.ArrayLike, c: npt.ArrayLike, names: Sequence[str] | None = None
    ) -> SuiteOutcomes:
        """Per-stimulus totals (no trial order), ragged n allowed.

        >>> suite = SuiteOutcomes.from_counts([5, 3], [4, 0], names=["a", "b"])
        >>> suite.n.tolist(), suite.c.tolist(), suite.ordered, suite.rectangular
        ([5, 3], [4, 0], None, False)
        """
        n_arr, c_arr = _counts(n, c, names)
        return cls(n_arr, c_arr, names=_names(names, n_arr.size))

    @classmethod
    def from_ordered(
        cls,
        outcomes: Sequence[Sequence[bool] | Sequence[int] | npt.ArrayLike],
        names: Sequence[str] | None = None,
    ) -> SuiteOutcomes:
        """Each stimulus's pass/fail outcomes in trial order (rows may differ in length).

        >>> suite = SuiteOutcomes.from_ordered([[1, 1, 0], [True, False]])
        >>> suite.n.tolist(), suite.c.tolist(), [row.tolist() for row in suite.ordered]
        ([3, 2], [2, 1], [[True, True, False], [True, False]])
        """
        label = _names(names, len(outcomes))
        rows = []
        for index, row in enumerate(outcomes):
            where = f"stimulus {label[index]!r}" if label else f"row {index}"
            try:
                rows.append(check_outcomes(row, "outcomes"))
            except ValueError as error:
                raise MetricDataError(f"{where}: {error}") from None
        if not rows:
            raise MetricDataError("outcomes is empty: there are no stimuli to score")
        n = np.array([row.size for row in rows], dtype=np.int64)
        c = np.array([int(np.count_nonzero(row)) for row in rows], dtype=np.int64)
        return cls(n, c, ordered=tuple(rows), names=label)

    @classmethod
    def from_matrix(cls, R: npt.ArrayLike, names: Sequence[str] | None = None) -> SuiteOutcomes:
        """scorio's M×N 0/1 matrix ``R`` (row = stimulus, columns in trial order).

        >>> SuiteOutcomes.from_matrix([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]).c.tolist()
        [3, 4]
        """
        try:
            matrix = check_binary_matrix(R).astype(np.bool_)
        except ValueError as error:
            raise MetricDataError(str(error)) from None
        label = _names(names, matrix.shape[0])
        n = np.full(matrix.shape[0], matrix.shape[1], dtype=np.int64)
        c = np.count_nonzero(matrix, axis=1).astype(np.int64)
        return cls(n, c, ordered=tuple(matrix), names=label)

    def with_categories(
        self, category_counts: npt.ArrayLike, weights: npt.ArrayLike
    ) -> SuiteOutcomes:
        """The same suite with per-stimulus category counts (rows summing to n) and rewards.

        >>> suite = SuiteOutcomes.from_counts([5, 5], [2, 3])
        >>> suite.with_categories([[1, 2, 2], [1, 1, 3]], [0.0, 0.5, 1.0]).weights.tolist()
        [0.0, 0.5, 1.0]
        """
        try:
            counts, rewards = check_category_counts(category_counts, weights, "category_counts")
        except ValueError as error:
            raise MetricDataError(str(error)) from None
        if counts.shape[0] != self.n.size:
            raise MetricDataError(
                f"category_counts has {counts.shape[0]} rows for {self.n.size} stimuli"
            )
        totals = counts.sum(axis=1)
        if np.any(totals != self.n):
            row = int(np.argmax(totals != self.n))
            raise MetricDataError(
                f"{self.name(row)}: its category counts add up to {totals[row]} trials, not "
                f"n = {self.n[row]}"
            )
        return SuiteOutcomes(self.n, self.c, self.ordered, counts, rewards, self.names)

    @property
    def size(self) -> int:
        """Number of stimuli."""
        return int(self.n.size)

    @property
    def rectangular(self) -> bool:
        """True when every stimulus has the same number of trials (scorio's matrix shape)."""
        return bool(np.all(self.n == self.n[0]))

    def name(self, index: int) -> str:
        """How a message names stimulus ``index``."""
        return f"stimulus {self.names[index]!r}" if self.names else f"stimulus row {index}"

    def categories(self) -> tuple[IntArray, FloatArray | None]:
        """Category counts and rewards: the suite's own, else [n - c, c] and ``None`` (= [0, 1])."""
        if self.category_counts is not None:
            return self.category_counts, self.weights
        return np.column_stack([self.n - self.c, self.c]), None


def _names(names: Sequence[str] | None, size: int) -> tuple[str, ...] | None:
    if names is None:
        return None
    label = tuple(str(name) for name in names)
    if len(label) != size:
        raise MetricDataError(f"names has {len(label)} entries for {size} stimuli")
    return label


def _counts(n: Any, c: Any, names: Sequence[str] | None) -> tuple[IntArray, IntArray]:
    try:
        n_arr, c_arr = check_counts(n, c)
    except ValueError as error:
        raise MetricDataError(str(error)) from None
    if n_arr.ndim != 1:
        raise MetricDataError(f"n and c must be 1-D (one entry per stimulus), got {n_arr.shape}")
    return n_arr, c_arr


class MetricInterval(NamedTuple):
    """An interval for a metric, saying what it is and what it covers.

    ``method``: how it was made (e.g. ``"beta posterior (uniform prior), normal
    approx."``); ``confidence``: its level; ``estimand``: what it is an interval
    of; ``center``/``sigma``: the posterior mean and sd it is built from
    (``None`` for a bootstrap interval).
    """

    lo: float
    hi: float
    method: str
    confidence: float
    estimand: str
    center: float | None = None
    sigma: float | None = None


class MetricValue(NamedTuple):
    """The value of a registry metric on a suite (scipy.stats style: named, unpackable).

    ``value``: the suite value (``None`` where undefined, e.g. cost per pass with
    no pass); ``per_stimulus``: one value per stimulus, in the suite's order
    (``None`` for usage metrics; int64 for reference 004's integer percents);
    ``interval``: for metrics with an interval, else ``None``; ``estimator``:
    which estimator ``value`` is.
    """

    metric: str
    params: dict[str, Any]
    value: float | None
    per_stimulus: npt.NDArray[Any] | None
    interval: MetricInterval | None
    estimator: str

    def at(self, bound: Bound | None) -> float | None:
        """What a gate with ``bound`` decides on: the value, or the interval's lo/hi.

        ``None`` when that is undefined (no interval: too few stimuli for a bootstrap).

        >>> from gate.metrics.registry import resolve
        >>> value = evaluate(resolve("pass_at_k", {"k": 2}), [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]])
        >>> round(value.at("estimate"), 6), round(value.at("lower"), 4)
        (0.95, 0.6487)
        """
        if bound in (None, "estimate"):
            return self.value
        if self.interval is None:
            return None
        return self.interval.lo if bound == "lower" else self.interval.hi


class StimulusVerdict(NamedTuple):
    """Per-stimulus check of a ``scope: stimuli`` gate.

    ``failing``: indices of the stimuli outside [min, max]; ``worst``: the index
    of the stimulus farthest below min or above max (the closest to failing when
    none fails); ``worst_value``: its value.
    """

    failing: tuple[int, ...]
    worst: int
    worst_value: float


def judge_stimuli(
    per_stimulus: npt.ArrayLike, minimum: float | None = None, maximum: float | None = None
) -> StimulusVerdict:
    """Which stimuli fail ``minimum <= value <= maximum``, and the worst one.

    The shortfall of a stimulus is ``max(minimum - v, v - maximum)`` (a missing
    bound left out); it fails when the shortfall is positive; the worst has the
    largest shortfall (the first such stimulus on ties).

    >>> judge_stimuli([90, 60, 100, 75], minimum=80)
    StimulusVerdict(failing=(1, 3), worst=1, worst_value=60.0)
    """
    values = check_weights(per_stimulus, "per_stimulus")
    minimum, maximum = check_limits(minimum, maximum)
    shortfall = np.full(values.shape, -np.inf)
    if minimum is not None:
        shortfall = np.maximum(shortfall, minimum - values)
    if maximum is not None:
        shortfall = np.maximum(shortfall, values - maximum)
    worst = int(np.argmax(shortfall))
    failing = tuple(int(i) for i in np.flatnonzero(shortfall > 0.0))
    return StimulusVerdict(failing, worst, float(values[worst]))


# --- evaluation -----------------------------------------------------------------------


def _check_k(metric: BoundMetric, suite: SuiteOutcomes) -> None:
    """k against every stimulus's trials, naming the first stimulus with too few."""
    k = metric.params.get("k")
    if k is None:
        return
    short = suite.n < k
    if short.any():
        row = int(np.argmax(short))
        raise MetricDataError(
            f"metric {metric.label()}: k={k} exceeds the {suite.n[row]} trials of "
            f"{suite.name(row)}; k can be at most {int(suite.n.min())} on this suite"
        )


def _suite_number(result: Any) -> float:
    """A suite value as a float: a ``MeanSigma`` gives its ``mu``."""
    return float(result.mu) if hasattr(result, "mu") else float(result)


def _each_alone(
    metric: BoundMetric, suite: SuiteOutcomes, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> FloatArray:
    """Each stimulus's value of a suite-level metric: the metric on that stimulus alone.

    All at once where the metric has a form for it (``recipe.alone``), else evaluated once
    per distinct row of the data (a suite has few, unless its stimuli ran thousands of
    trials each) and scattered.
    """
    recipe = metric.info.recipe
    assert recipe.values is not None
    if recipe.alone is not None:
        return np.asarray(recipe.alone(*args, **kwargs), dtype=np.float64)
    rows = np.column_stack(args) if recipe.data == "counts" else args[0]
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    values = np.empty(distinct.shape[0])
    for index, row in enumerate(distinct):
        if recipe.data == "counts":
            call: tuple[Any, ...] = (row[:1], row[1:])
        else:
            call = (row[None, :],)
        try:
            values[index] = _suite_number(recipe.values(*call, **kwargs))
        except ValueError as error:
            first = int(np.argmax(inverse.ravel() == index))
            raise MetricDataError(
                f"metric {metric.label()} on {suite.name(first)}: {error}"
            ) from None
    result: FloatArray = values[inverse.ravel()]
    return result


def _prior_label(params: dict[str, Any]) -> str:
    alpha0, beta0 = float(params.get("alpha0", 1.0)), float(params.get("beta0", 1.0))
    if alpha0 == 1.0 and beta0 == 1.0:
        return "uniform prior"
    return f"Beta({alpha0:g}, {beta0:g}) prior"


def _evaluate_outcomes(metric: BoundMetric, suite: SuiteOutcomes, level: float) -> MetricValue:
    info = metric.info
    recipe = info.recipe
    assert recipe.values is not None
    per_stimulus: npt.NDArray[Any]
    if recipe.data == "ordered":
        if suite.ordered is None:
            raise MetricDataError(
                f"metric {info.name!r} needs each stimulus's trials in order ({info.order_note}); "
                "these results give per-stimulus counts only, without trial order"
            )
        per_stimulus = np.array([recipe.values(row) for row in suite.ordered], dtype=np.int64)
        return MetricValue(
            info.name, dict(metric.params), float(np.mean(per_stimulus)), per_stimulus, None,
            info.estimator,
        )  # fmt: skip
    _check_k(metric, suite)
    point = metric.point_params()
    bounds = (0.0, 1.0)
    if recipe.data == "counts":
        args: tuple[Any, ...] = (suite.n, suite.c)
        keywords: dict[str, Any] = {}
    else:
        category_counts, weights = suite.categories()
        args = (category_counts,)
        keywords = {"w": weights}
        if weights is not None:
            bounds = (float(np.min(weights)), float(np.max(weights)))
    try:
        if recipe.per_stimulus:
            per_stimulus = np.asarray(recipe.values(*args, **keywords, **point))
            value = float(np.mean(per_stimulus))
        else:
            value = _suite_number(recipe.values(*args, **keywords, **point))
            per_stimulus = _each_alone(metric, suite, args, {**keywords, **point})
        interval = None
        if recipe.interval is not None:
            result: CIResult = recipe.interval(
                *args, **keywords, **metric.interval_params(), confidence=level, bounds=bounds
            )
            assert info.estimand is not None and info.interval_method is not None
            interval = MetricInterval(
                lo=result.lo,
                hi=result.hi,
                method=info.interval_method.format(prior=_prior_label(dict(metric.params))),
                confidence=level,
                estimand=info.estimand,
                center=result.mu,
                sigma=result.sigma,
            )
    except MetricDataError:
        raise
    except ValueError as error:
        raise MetricDataError(f"metric {metric.label()}: {error}") from None
    if info.family == "reliability":
        per_stimulus = per_stimulus.astype(np.int64)
    return MetricValue(
        info.name, dict(metric.params), value, per_stimulus, interval, info.estimator
    )


def _evaluate_usage(
    metric: BoundMetric, usage: TrialUsage, level: float, resamples: int, seed: int
) -> MetricValue:
    info = metric.info
    assert info.recipe.usage_path is not None
    field, statistic = info.recipe.usage_path
    interval = None
    try:
        if field == "cost_usd":
            with_interval = statistic == "mean_per_trial"
            cost = cost_summary(
                usage, level, resamples=resamples, seed=seed, interval=with_interval
            )
            value = getattr(cost, statistic)
            found = cost.mean_per_trial_interval
            if with_interval and found is not None:
                interval = MetricInterval(
                    found.lo, found.hi, found.method, found.confidence, found.estimand
                )
        elif field == "duration_s":
            value = getattr(duration_summary(usage), statistic)
        else:
            value = getattr(tokens_summary(usage), statistic)
    except MissingUsageError as error:
        raise MetricDataError(f"metric {info.name!r}: {error}") from None
    return MetricValue(info.name, dict(metric.params), value, None, interval, info.estimator)


def evaluate(
    metric: BoundMetric,
    data: SuiteOutcomes | TrialUsage | npt.ArrayLike,
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> MetricValue:
    """Suite value, per-stimulus values and interval of ``metric`` on ``data``.

    ``data``: :class:`SuiteOutcomes` (or scorio's 0/1 matrix ``R``) for pass/fail
    metrics, :class:`~gate.metrics.usage.TrialUsage` for usage metrics.
    ``confidence``: the interval's level; ``resamples``/``seed``: the bootstrap's
    (usage intervals only). Raises :class:`MetricDataError` when the data cannot
    give the metric: no trial order for an order-dependent one, k above a
    stimulus's trials, no trial reporting the usage value, or the wrong kind of data.

    On 003's worked example (scorio's ``R``), with the interval scorio's
    ``g_pass_at_k_tau_ci`` gives:

    >>> from gate.metrics.registry import resolve
    >>> R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    >>> value = evaluate(resolve("g_pass_at_k_tau", {"k": 3, "tau": 0.5}), R)
    >>> round(value.value, 6), value.per_stimulus.round(6).tolist()
    (0.85, [0.7, 1.0])
    >>> iv = value.interval
    >>> round(iv.center, 6), round(iv.sigma, 6), round(iv.lo, 4), round(iv.hi, 4), iv.method
    (0.684524, 0.151958, 0.3867, 0.9824, 'beta posterior (uniform prior), normal approx.')
    >>> evaluate(resolve("reliability.graceful_degradation"), [[0, 1, 1, 1], [1, 1, 1, 0]])[2:4]
    (75.0, array([90, 60]))
    """
    level = check_confidence(confidence)
    info = metric.info
    if info.usage:
        if not isinstance(data, TrialUsage):
            raise MetricDataError(
                f"metric {info.name!r} needs per-trial usage values (cost, duration, tokens), "
                "not pass/fail outcomes"
            )
        return _evaluate_usage(metric, data, level, resamples, seed)
    if isinstance(data, TrialUsage):
        raise MetricDataError(
            f"metric {info.name!r} needs pass/fail outcomes per stimulus, not usage values"
        )
    suite = data if isinstance(data, SuiteOutcomes) else SuiteOutcomes.from_matrix(data)
    return _evaluate_outcomes(metric, suite, level)
