"""Three-outcome decision rules, and how much more data would decide them.

A gate asks whether the truth lies on the right side of a target
(statistics.md §8). With an interval [L, U] at the configured level and a
``min`` target t::

    pass          L ≥ t     (shown good)
    fail          U < t     (shown bad)
    inconclusive  otherwise (the data do not decide)

and a ``max`` target mirrors it. A rule on the point estimate has no third
outcome and no error control; a precision rule (interval half-width) passes or
is inconclusive. Paired regression rules use a harm margin δ and a
``detectable`` margin D ≥ δ (:func:`regression_outcome`).

Every rule here is vectorised over simulated runs: ``evaluate(n, c)`` takes
count matrices of shape (R, M) (R runs of M stimuli) and returns R outcomes, so
the verdict on the real data (R = 1) and the simulations behind advice and
planning (:func:`more_trials`, :func:`more_stimuli`) use one and the same rule.

The advice is *predictive* (an "assurance"): each simulated run first draws
every stimulus's pass rate from what the data allow (a posterior that pools the
stimuli, :func:`gate.metrics.posterior.posterior_rates`), then the future trials
at that rate. Simulating at the observed rates c/n instead took a stimulus that
went 5/5 for one that never fails and ignored the uncertainty of every estimate:
followed at known truths, that advice decided 0.58–0.71 of the gates it promised
80% of, the predictive one 0.74–0.81 (bench/advice_calibration.py). The
predictive probability is calibrated *on average over the truths the data allow*,
not for each fixed truth: for a truth exactly on the target nothing decides.

Outcomes are coded ``PASS = 1``, ``INCONCLUSIVE = 0``, ``FAIL = -1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple, TypeVar, cast

import numpy as np
import numpy.typing as npt

from gate.metrics._kernels import (
    distinct_values,
    group_counts,
    pass_at_k_values,
    pass_hat_k_values,
)
from gate.metrics._special import normal_quantile
from gate.metrics._validation import check_choice
from gate.metrics.exact_difference import exact_shifts
from gate.metrics.intervals import (
    Alternative,
    IntervalMethod,
    _rate_bounds,
    rate_p_value,
    suite_bounds,
)
from gate.metrics.paired import (
    alpha_of,
    difference_bounds,
    fisher_holm_rejects,
    holm_rejects,
    paired_bounds_batch,
)
from gate.metrics.posterior import posterior_rates
from gate.metrics.sequential import confidence_sequence, look_bounds, round_sums
from gate.metrics.skew import widened_t_moments
from gate.metrics.trial_noise import TrialCounts, floor_k, trial_noise_bounds

__all__ = [
    "FAIL",
    "INCONCLUSIVE",
    "OUTCOMES",
    "PASS",
    "IntervalRule",
    "PairedRule",
    "PointRule",
    "PrecisionRule",
    "RuleResult",
    "SequentialRule",
    "latent_target",
    "more_stimuli",
    "more_trials",
    "more_trials_paired",
    "more_trials_sequential",
    "regression_outcome",
    "stimulus_bounds",
    "stimulus_estimates",
    "stimulus_more_trials",
    "three_way",
]

_Scalar = TypeVar("_Scalar", bound=np.generic)
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
CodeArray = npt.NDArray[np.int8]
BoolArray = npt.NDArray[np.bool_]
Direction = Literal["min", "max"]
CountMetric = Literal["pass_rate", "pass_at_k", "pass_hat_k"]

PASS, INCONCLUSIVE, FAIL = 1, 0, -1
#: outcome code → name, as the report and the JSON write it.
OUTCOMES: dict[int, str] = {PASS: "pass", INCONCLUSIVE: "inconclusive", FAIL: "fail"}
# So that 0.7 computed as 0.7000000000000001 - ε still meets 0.7.
_TOLERANCE = 1e-12
#: the largest n at which a per-stimulus half-width is known (tested) to be single-peaked
#: in c for every method and metric (:func:`_widest`); past it, pair by pair.
_HALF_WIDTH_SHAPE_PROVEN = 100_000
#: the largest k of pass^k and pass@k at which the same is tested: every k up to 1,000 by
#: bench/half_width_shape.py (about two minutes), every k up to 100 and a sample of k past it
#: in tests/metrics/test_stimulus_rules.py; past it, pair by pair.
_HALF_WIDTH_SHAPE_PROVEN_K = 1_000
#: half-widths up to this count as equal in that shape: pass@k maps bounds within a few
#: ulps of 1 where c is near n, and there its half-width wobbles at ~1e-15. A target below
#: it is decided pair by pair.
_HALF_WIDTH_FLOOR = 1e-9
#: the most blocks at which a confidence sequence's bounds are tested to grow with the
#: passes (tests/metrics/test_metrics_sequential.py), so that the sequential advice may
#: read its outcomes from thresholds in the passes (:func:`_sequence_decided`).
_SEQUENCE_ORDER_PROVEN = 10_050
#: advice searches stop here: beyond it "more trials" is not an answer anyone can act on.
MAX_MORE_TRIALS = 10_000
MAX_MORE_STIMULI = 100_000
#: simulated runs per probability, and the element budget (runs × stimuli) they share:
#: 200 runs at 10,000 stimuli, fewer past that, down to _FEWEST_RUNS.
_FEWEST_RUNS, _MAX_RUNS, _ELEMENT_BUDGET = 20, 1_000, 2_000_000
_SEED = 20_261_123
#: an advice simulating at least _NORMAL_ELEMENTS stimulus-runs draws future passes from
#: the binomial's normal approximation where m·p(1 − p), the binomial's variance, is at
#: least _NORMAL_VARIANCE (:func:`_future_passes`).
_NORMAL_ELEMENTS, _NORMAL_VARIANCE = 200_000, 25.0
#: stimulus-runs simulated at a time (:func:`_future_pass_chunks`): a chunk's draws and the
#: rule's temporaries take tens of MB, however many stimuli (each run whole)
_CHUNK_ELEMENTS = 250_000


def _precision_codes(half_width: npt.ArrayLike, target: float) -> CodeArray:
    """The half-width rule: pass where the half-width is at most ``target``, else
    inconclusive (more data narrow it; it never fails).

    >>> _precision_codes([0.04, 0.05, 0.06], 0.05).tolist()
    [1, 1, 0]
    """
    half = np.asarray(half_width, dtype=np.float64)
    return np.where(half <= target + _TOLERANCE, PASS, INCONCLUSIVE).astype(np.int8)


def three_way(
    lower: npt.ArrayLike, upper: npt.ArrayLike, target: float, direction: Direction
) -> CodeArray:
    """Pass, fail or inconclusive from interval bounds (statistics.md §8).

    ``min``: pass when ``lower ≥ target``, fail when ``upper < target``.
    ``max``: pass when ``upper ≤ target``, fail when ``lower > target``.

    >>> three_way([0.82, 0.60, 0.55], [0.97, 0.85, 0.78], 0.8, "min").tolist()
    [1, 0, -1]
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if direction == "min":
        good, bad = lo >= target - _TOLERANCE, hi < target - _TOLERANCE
    else:
        good, bad = hi <= target + _TOLERANCE, lo > target + _TOLERANCE
    return np.where(good, PASS, np.where(bad, FAIL, INCONCLUSIVE)).astype(np.int8)


def _point(value: npt.ArrayLike, target: float, direction: Direction) -> CodeArray:
    v = np.asarray(value, dtype=np.float64)
    ok = v >= target - _TOLERANCE if direction == "min" else v <= target + _TOLERANCE
    return np.where(ok, PASS, FAIL).astype(np.int8)


def _combine(stimuli: CodeArray) -> CodeArray:
    """A per-stimulus gate: fail if any stimulus fails, else inconclusive if any is."""
    any_fail = (stimuli == FAIL).any(axis=-1)
    all_pass = (stimuli == PASS).all(axis=-1)
    return np.where(any_fail, FAIL, np.where(all_pass, PASS, INCONCLUSIVE)).astype(np.int8)


# --------------------------------------------------------------------------- per-stimulus values


def latent_target(metric: CountMetric, target: float, k: int) -> float:
    """The pass probability p0 at which the latent metric equals ``target``.

    g(p) = p, 1-(1-p)^k or p^k is increasing, so ``g(p) ≥ t`` ⇔ ``p ≥ g⁻¹(t)``.

    >>> latent_target("pass_hat_k", 0.729, 3), round(latent_target("pass_at_k", 0.875, 3), 12)
    (0.9, 0.5)
    """
    t = min(max(float(target), 0.0), 1.0)
    if metric == "pass_hat_k":
        return round(float(t ** (1.0 / k)), 15)
    if metric == "pass_at_k":
        return 1.0 - float((1.0 - t) ** (1.0 / k))
    return t


def _by_pair(
    n: npt.ArrayLike, c: npt.ArrayLike, values: Callable[[IntArray, IntArray], FloatArray]
) -> FloatArray:
    """``values`` once per distinct (n, c) pair, scattered back to ``n``'s shape."""
    n_arr = np.asarray(n, dtype=np.int64)
    c_arr = np.asarray(c, dtype=np.int64)
    if n_arr.size == 0:
        return np.zeros(n_arr.shape)
    groups = group_counts(n_arr, c_arr)
    return np.asarray(values(groups.n, groups.c), dtype=np.float64)[groups.inverse].reshape(
        n_arr.shape
    )


def stimulus_estimates(
    metric: CountMetric, n: npt.ArrayLike, c: npt.ArrayLike, k: int
) -> FloatArray:
    """Unbiased per-stimulus estimates of any shape: c/n, pass@k or pass^k.

    >>> stimulus_estimates("pass_hat_k", [[5, 5, 3]], [[4, 5, 1]], 2).tolist()
    [[0.6, 1.0, 0.0]]
    """
    if metric in ("pass_at_k", "pass_hat_k"):  # a few distinct pairs, many stimulus-runs
        return _by_pair(n, c, lambda nu, cu: _estimates_each(metric, nu, cu, k))
    return _estimates_each(metric, np.asarray(n), np.asarray(c), k)


def _map(metric: CountMetric, p: FloatArray, k: int) -> FloatArray:
    if metric == "pass_hat_k":
        return np.asarray(p**k, dtype=np.float64)
    if metric == "pass_at_k":
        with np.errstate(divide="ignore"):
            return np.asarray(0.0 - np.expm1(k * np.log1p(-p)), dtype=np.float64)
    return p


def stimulus_bounds(
    metric: CountMetric,
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    confidence: float,
    method: str,
) -> tuple[FloatArray, FloatArray]:
    """Per-stimulus two-sided interval of the latent metric, any shape (rate bounds mapped)."""

    def bounds(nu: IntArray, cu: IntArray) -> FloatArray:
        lo, hi = _rate_bounds(
            cu.astype(np.float64), nu.astype(np.float64), confidence, method, 1.0, 1.0
        )
        return np.stack([_map(metric, np.asarray(lo), k), _map(metric, np.asarray(hi), k)], -1)

    n_arr = np.asarray(n, dtype=np.int64)
    c_arr = np.asarray(c, dtype=np.int64)
    groups = group_counts(n_arr, c_arr)
    both = bounds(groups.n, groups.c)[groups.inverse]
    return both[:, 0].reshape(n_arr.shape), both[:, 1].reshape(n_arr.shape)


def _suite_bounds(
    metric: CountMetric,
    estimate: FloatArray,
    n: IntArray,
    k: int,
    confidence: float,
    method: str,
) -> tuple[FloatArray, FloatArray]:
    """:func:`gate.metrics.suite_interval` for a batch of runs (``n`` shape (R, M)).

    n_eff = M·min(nᵢ)/k, with k = 1 for the pass rate (a U-statistic of degree 1).
    """
    degree = 1 if metric == "pass_rate" else k
    n_eff = n.shape[-1] * np.min(n, axis=-1).astype(np.float64) / degree
    return suite_bounds(estimate, n_eff, confidence, method)


# --------------------------------------------------------------------------- rules


class RuleResult(NamedTuple):
    """A rule applied to R runs.

    Attributes:
        outcome: (R,) codes: ``PASS``, ``INCONCLUSIVE`` or ``FAIL``.
        value: (R,) the value the gate is about (suite estimate, or the worst stimulus's).
        lower, upper: (R,) the bounds decided on (NaN for a point-estimate rule).
        stimuli: (R, M) per-stimulus codes for a per-stimulus rule, else ``None``.
        worst: (R,) the index of the stimulus that ``value`` and the bounds belong to, for a
            rule that reports one stimulus's values (else ``None``).
    """

    outcome: CodeArray
    value: FloatArray
    lower: FloatArray
    upper: FloatArray
    stimuli: CodeArray | None = None
    worst: IntArray | None = None


def _matrices(*arrays: npt.ArrayLike) -> list[IntArray]:
    """Count arrays as (R, M) int64 matrices of one shape (a run's n broadcasts over runs)."""
    matrices = [np.atleast_2d(np.asarray(x, dtype=np.int64)) for x in arrays]
    return [np.ascontiguousarray(x) for x in np.broadcast_arrays(*matrices)]


def _worst(values: FloatArray, direction: Direction) -> IntArray:
    return np.asarray(
        np.argmin(values, axis=-1) if direction == "min" else np.argmax(values, axis=-1)
    )


def _pick(values: npt.NDArray[_Scalar], index: IntArray) -> npt.NDArray[_Scalar]:
    """Each run's (row's) value at its own index."""
    return np.take_along_axis(values, index[:, None], axis=-1)[:, 0]


@dataclass(frozen=True)
class IntervalRule:
    """Decide a count metric on its interval: pass when the interval clears the target.

    ``scope="suite"``: the suite value (mean of unbiased per-stimulus estimates) and
    its interval (:func:`gate.metrics.suite_interval`: the one-rate ``method`` at
    n_eff = M·min(nᵢ)/k). ``scope="stimuli"``: every stimulus decided on its own
    interval; a stimulus passes when min(lower bound, estimate) reaches the target
    (never more lenient than the estimate) and fails when Holm's step-down over the
    stimuli, at α/2 (the upper side of the two-sided interval), rejects "this
    stimulus meets the target" (family-wise error ≤ α/2 for the fail side; the pass
    side is an intersection-union test and needs no adjustment).
    """

    metric: CountMetric
    k: int
    target: float
    direction: Direction = "min"
    confidence: float = 0.95
    method: str = "mid-p"
    scope: Literal["suite", "stimuli"] = "suite"

    def evaluate(self, n: npt.ArrayLike, c: npt.ArrayLike) -> RuleResult:
        n2, c2 = _matrices(n, c)
        if self.scope == "suite":
            value = stimulus_estimates(self.metric, n2, c2, self.k).mean(axis=-1)
            lo, hi = _suite_bounds(self.metric, value, n2, self.k, self.confidence, self.method)
            return RuleResult(three_way(lo, hi, self.target, self.direction), value, lo, hi)
        codes, each = self._stimuli(n2, c2, estimates=True)
        assert each is not None
        worst = _worst(each, self.direction)
        value = _pick(each, worst)
        lower, upper = self._decided_bounds(_pick(n2, worst), _pick(c2, worst), value)
        return RuleResult(_combine(codes), value, lower, upper, codes)

    def stimulus_codes(self, n: npt.ArrayLike, c: npt.ArrayLike) -> CodeArray:
        """``evaluate(n, c).stimuli`` of a ``scope="stimuli"`` rule, without the worst
        stimulus's values (an advice reads the codes alone): on the threshold path the
        estimates are computed only where Holm could reject, not for every stimulus-run."""
        n2, c2 = _matrices(n, c)
        return self._stimuli(n2, c2, estimates=False)[0]

    def _stimuli(
        self, n: IntArray, c: IntArray, *, estimates: bool
    ) -> tuple[CodeArray, FloatArray | None]:
        """Per-stimulus codes, and (``estimates``) every stimulus-run's estimate."""
        # Everything but Holm's step-down is a function of the stimulus's (n, c): decided
        # once per distinct pair and gathered, or (many stimulus-runs per distinct n: an
        # advice step) from thresholds in c per distinct n, not once per stimulus and run.
        counts, at, _ = distinct_values(n)
        each: FloatArray | None = None
        if _thresholds_pay(n.size, counts):
            passes, p = self._sides_by_bisection(c, counts, at)
            if estimates:
                each = _estimates_each(self.metric, n, c, self.k)
            else:  # only a suspect (p ≤ Holm's level, else p = 1) can be shown bad
                suspects = p < 1.0
                each = np.full(n.shape, np.nan)
                each[suspects] = _estimates_each(self.metric, n[suspects], c[suspects], self.k)
        else:
            pairs = group_counts(n, c)
            each_pair = stimulus_estimates(self.metric, pairs.n, pairs.c, self.k)
            passes_pair = self._passes(pairs.n, pairs.c, each_pair)
            p_pair = self._p_values(pairs.n, pairs.c)
            back = pairs.inverse.reshape(n.shape)
            each, passes, p = each_pair[back], passes_pair[back], p_pair[back]
        # The fail side of each stimulus, with Holm's step-down across stimuli (NaN, where
        # no estimate was needed, is never missed).
        missed = each < self.target if self.direction == "min" else each > self.target
        shown_bad = holm_rejects(p, self._fail_level()) & missed
        codes = np.where(passes, PASS, np.where(shown_bad, FAIL, INCONCLUSIVE)).astype(np.int8)
        return codes, each

    def _decided_bounds(
        self, n: IntArray, c: IntArray, each: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """A stimulus's bounds as its pass side reads them: never more lenient than its
        estimate (min: min(lower, estimate); max: max(upper, estimate))."""
        lo, hi = stimulus_bounds(self.metric, n, c, self.k, self.confidence, self.method)
        if self.direction == "min":
            return np.minimum(lo, each), hi
        return lo, np.maximum(hi, each)

    def _passes(self, n: IntArray, c: IntArray, each: FloatArray) -> npt.NDArray[np.bool_]:
        """Whether each (n, c) with estimate ``each`` passes: its decided bounds clear the
        target."""
        lower, upper = self._decided_bounds(n, c, each)
        return np.asarray(three_way(lower, upper, self.target, self.direction) == PASS)

    def _fail_level(self) -> float:
        """Holm's level on the fail side: α/2, the upper side of the two-sided interval."""
        return alpha_of(self.confidence) / 2.0 + _TOLERANCE

    def _p_values(self, n: IntArray, c: IntArray) -> FloatArray:
        """One-sided p-values of "this stimulus meets the target"."""
        p0 = latent_target(self.metric, self.target, self.k)
        alternative: Alternative = "less" if self.direction == "min" else "greater"
        method = cast(IntervalMethod, self.method)
        return np.asarray(rate_p_value(c, n, p0, method, alternative), dtype=np.float64)

    def _sides_by_bisection(
        self, c: IntArray, counts: IntArray, at: IntArray
    ) -> tuple[npt.NDArray[np.bool_], FloatArray]:
        """Whether each stimulus-run passes, and its p-value where Holm could reject it (1
        elsewhere), from two bisections per distinct n (``counts``; ``at``: each
        stimulus-run's index in it): the same as pair by pair.

        For a given n, both sides are monotone in c (the estimate, the bounds and the
        p-value are; tests/metrics/test_stimulus_rules.py checks every method): a min gate
        passes from some count up, and its p-value is at most Holm's level up to some count.
        When every stimulus has its own number of trials, an advice step has about as many
        distinct pairs as stimulus-runs (millions), each a root search for its bounds; the
        bisections cost a few dozen bound searches per distinct n. A p-value above the
        level is never rejected and, set to 1, keeps every other's rank (Holm's m is the
        number of stimuli, unchanged), so only the candidates' p-values are computed.
        """

        def passing(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
            return self._passes(nn, cc, stimulus_estimates(self.metric, nn, cc, self.k))

        def not_passing(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
            return ~passing(nn, cc)

        level = self._fail_level()

        def candidate(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
            return np.asarray(self._p_values(nn, cc) <= level)

        def not_candidate(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
            return ~candidate(nn, cc)

        def first(side: str, predicate: _CountPredicate) -> IntArray:
            return _THRESHOLDS.first_true(self, side, counts, predicate)[at]

        if self.direction == "min":  # passes from a count up; a candidate below a count
            passes = c >= first("pass", passing)
            suspects = c < first("fail", not_candidate)
        else:  # passes below a count; a candidate from a count up
            passes = c < first("pass", not_passing)
            suspects = c >= first("fail", candidate)
        p = np.ones(c.shape, dtype=np.float64)
        if suspects.any():
            p[suspects] = self._p_values(counts[at[suspects]], c[suspects])
        return passes, p


def _estimates_each(
    metric: CountMetric, n: npt.NDArray[np.int64], c: npt.NDArray[np.int64], k: int
) -> FloatArray:
    """:func:`stimulus_estimates` element by element (no grouping by distinct pair)."""
    if metric == "pass_at_k":
        return np.asarray(pass_at_k_values(n, c, k), dtype=np.float64)
    if metric == "pass_hat_k":
        return np.asarray(pass_hat_k_values(n, c, k), dtype=np.float64)
    return np.asarray(c, dtype=np.float64) / np.asarray(n, dtype=np.float64)


def _thresholds_pay(size: int, counts: IntArray) -> bool:
    """Whether ``size`` stimulus-runs over the distinct n of ``counts`` (sorted) are
    decided more cheaply from thresholds in c per n (two bisections of ~log₂ n steps
    each) than pair by pair."""
    return size > 2 * counts.size * (int(counts[-1]) + 1).bit_length()


_CountPredicate = Callable[[IntArray, IntArray], npt.NDArray[np.bool_]]
_CountGuess = Callable[[IntArray], IntArray]
#: counts tried either side of a guess (:func:`_first_true`) in its one call.
_GUESS_REACH = 3


class _ThresholdMemo:
    """Per-n answers (thresholds :func:`_first_true` found, a half-width's peak), by rule
    and side, kept across calls: an advice evaluates its rule at n + m for every m it
    tries, and the stimuli's n + m repeat from one m to the next (a few thousand distinct n
    over dozens of calls). Bounded: past ``limit`` answers in all, it starts again."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._known: dict[tuple[object, str], tuple[IntArray, IntArray]] = {}

    def first_true(
        self,
        rule: object,
        side: str,
        counts: IntArray,
        predicate: _CountPredicate,
        guess: _CountGuess | None = None,
    ) -> IntArray:
        """:func:`_first_true` of ``counts`` (sorted, distinct), from memory where known.
        An n it does not know starts from the answer of the nearest n it knows, scaled to
        n (thresholds in c grow about in proportion to n, and an advice's n + m lie close
        to the n of its earlier steps), else from ``guess``."""

        def solve(missing: IntArray) -> IntArray:
            known_n, known_first = self._known.get((rule, side), (missing[:0], missing[:0]))
            if not known_n.size:
                return _first_true(missing, predicate, None if guess is None else guess(missing))
            right = np.minimum(np.searchsorted(known_n, missing), known_n.size - 1)
            left = np.maximum(right - 1, 0)
            near = np.where(
                np.abs(known_n[left] - missing) < np.abs(known_n[right] - missing), left, right
            )
            share = known_first[near] / np.maximum(known_n[near], 1)
            return _first_true(missing, predicate, np.rint(share * missing).astype(np.int64))

        return self.remember(rule, side, counts, solve)

    def remember(
        self, rule: object, side: str, counts: IntArray, solve: Callable[[IntArray], IntArray]
    ) -> IntArray:
        """``solve(counts)`` (one integer per n of ``counts``, sorted and distinct), calling
        ``solve`` only for the n not known from an earlier call of the same rule and side."""
        known_n, known_first = self._known.get((rule, side), (counts[:0], counts[:0]))
        at = np.minimum(np.searchsorted(known_n, counts), max(known_n.size - 1, 0))
        hit = known_n[at] == counts if known_n.size else np.zeros(counts.size, dtype=bool)
        result = np.empty_like(counts)
        result[hit] = known_first[at[hit]]
        missing = counts[~hit]
        if missing.size:
            found = solve(missing)
            result[~hit] = found
            if sum(n.size for n, _ in self._known.values()) + missing.size > self._limit:
                self._known.clear()
                known_n, known_first = counts[:0], counts[:0]
            merged_n = np.concatenate([known_n, missing])
            order = np.argsort(merged_n, kind="stable")
            self._known[(rule, side)] = (
                merged_n[order],
                np.concatenate([known_first, found])[order],
            )
        return result


_THRESHOLDS = _ThresholdMemo(limit=1_000_000)


def _first_true(
    counts: IntArray, predicate: _CountPredicate, guess: IntArray | None = None
) -> IntArray:
    """For each n of ``counts``, the smallest c in [0, n] at which ``predicate(n, c)``
    holds, or n + 1 when it holds at none; ``predicate`` is monotone in c (false, then
    true). Every n is bisected at once, one vectorised call per step.

    ``guess`` (an approximate answer per n) only narrows the search, never decides it: one
    call first tries the :data:`_GUESS_REACH` counts either side of it, and the bisection
    continues between the last false and the first true found there. A call costs about
    the same for a few n as for a thousand (the bounds' root searches loop in step), and
    an advice step has only a few new n, so a good guess saves most of the ~log₂ n calls.

    >>> _first_true(np.array([4, 10]), lambda n, c: 2 * c >= n).tolist()
    [2, 5]
    >>> _first_true(np.array([4, 10]), lambda n, c: 2 * c >= n, np.array([0, 9])).tolist()
    [2, 5]
    """
    low = np.zeros_like(counts)
    high = counts + 1
    if guess is not None and counts.size:
        offsets = np.arange(-_GUESS_REACH, _GUESS_REACH + 1)
        tried = np.clip(guess[:, None] + offsets, 0, counts[:, None])
        holds = predicate(np.repeat(counts, offsets.size), tried.ravel()).reshape(tried.shape)
        # Monotone: above every false tried and at or below every true tried.
        low = np.maximum(low, np.where(holds, 0, tried + 1).max(axis=1))
        high = np.minimum(high, np.where(holds, tried, counts[:, None] + 1).min(axis=1))
    while (open_ := np.flatnonzero(low < high)).size:
        mid = (low[open_] + high[open_]) // 2
        holds = predicate(counts[open_], mid)
        high[open_] = np.where(holds, mid, high[open_])
        low[open_] = np.where(holds, low[open_], mid + 1)
    return low


@dataclass(frozen=True)
class PointRule:
    """Decide on the point estimate alone: pass or fail, no error control."""

    metric: str
    k: int
    target: float
    direction: Direction = "min"
    scope: Literal["suite", "stimuli"] = "suite"

    def decide_values(self, values: npt.ArrayLike) -> RuleResult:
        """Per-stimulus values (R, M) of any metric → the suite mean or every stimulus."""
        v = np.atleast_2d(np.asarray(values, dtype=np.float64))
        nan = np.full(v.shape[0], np.nan)
        if self.scope == "suite":
            value = v.mean(axis=-1)
            return RuleResult(_point(value, self.target, self.direction), value, nan, nan)
        codes = _point(v, self.target, self.direction)
        worst = _worst(v, self.direction)
        return RuleResult(_combine(codes), _pick(v, worst), nan, nan, codes)

    def evaluate(self, n: npt.ArrayLike, c: npt.ArrayLike) -> RuleResult:
        n2, c2 = _matrices(n, c)
        if self.metric == "flakiness":
            values = np.minimum(c2, n2 - c2) / n2
        elif self.metric in ("pass_rate", "pass_at_k", "pass_hat_k"):
            values = stimulus_estimates(self.metric, n2, c2, self.k)  # type: ignore[arg-type]
        else:
            check_choice(self.metric, "counts metric", ("pass_rate", "pass_at_k", "pass_hat_k"))
        return self.decide_values(values)


@dataclass(frozen=True)
class PrecisionRule:
    """Enough data: pass when the interval half-width is at most ``target``, else inconclusive."""

    metric: CountMetric
    k: int
    target: float
    confidence: float = 0.95
    method: str = "mid-p"
    scope: Literal["suite", "stimuli"] = "suite"

    def evaluate(self, n: npt.ArrayLike, c: npt.ArrayLike) -> RuleResult:
        n2, c2 = _matrices(n, c)
        estimates = stimulus_estimates(self.metric, n2, c2, self.k)
        if self.scope == "suite":
            value = estimates.mean(axis=-1)
            lo, hi = _suite_bounds(self.metric, value, n2, self.k, self.confidence, self.method)
            half = (hi - lo) / 2.0
            return RuleResult(_precision_codes(half, self.target), half, lo, hi)
        lo, hi = stimulus_bounds(self.metric, n2, c2, self.k, self.confidence, self.method)
        half = (hi - lo) / 2.0
        codes = _precision_codes(half, self.target)
        worst = _worst(half, "max")
        return RuleResult(
            _combine(codes), _pick(half, worst), _pick(lo, worst), _pick(hi, worst), codes
        )

    def stimulus_codes(self, n: npt.ArrayLike, c: npt.ArrayLike) -> CodeArray:
        """``evaluate(n, c).stimuli`` of a ``scope="stimuli"`` rule, without the widest
        stimulus's values (an advice reads the codes alone).

        With many stimulus-runs per distinct n (an advice step where every stimulus has its
        own number of trials), n up to :data:`_HALF_WIDTH_SHAPE_PROVEN`, k up to
        :data:`_HALF_WIDTH_SHAPE_PROVEN_K` and a target of at least :data:`_HALF_WIDTH_FLOOR`,
        the codes come from :meth:`_codes_by_bisection`; otherwise every distinct (n, c)
        pair is decided, as :meth:`evaluate` does.
        """
        n2, c2 = _matrices(n, c)
        degree = 1 if self.metric == "pass_rate" else self.k
        shaped = 1 <= degree <= _HALF_WIDTH_SHAPE_PROVEN_K and self.target >= _HALF_WIDTH_FLOOR
        if self.scope == "stimuli" and n2.size and shaped:
            counts, at, _ = distinct_values(n2)
            proven = int(counts[0]) >= 1 and int(counts[-1]) <= _HALF_WIDTH_SHAPE_PROVEN
            if proven and _thresholds_pay(n2.size, counts):
                return self._codes_by_bisection(n2, c2, counts, at)
        return _precision_codes(self._half_width(n2, c2), self.target)

    def _half_width(self, n: IntArray, c: IntArray) -> FloatArray:
        lo, hi = stimulus_bounds(self.metric, n, c, self.k, self.confidence, self.method)
        return np.asarray((hi - lo) / 2.0)

    def _widest_share(self) -> float:
        """Where the half-width of the mapped Wald interval, g′(p)·√(p(1 − p)/n), peaks:
        p = 1/2 for the pass rate, 1 − 1/(2k) for pass^k (g = p^k) and 1/(2k) for pass@k."""
        if self.metric == "pass_hat_k":
            return 1.0 - 0.5 / self.k
        if self.metric == "pass_at_k":
            return 0.5 / self.k
        return 0.5

    def _edges(self, n: IntArray) -> tuple[IntArray, IntArray]:
        """Guesses of the first undecided c and the first decided c past the peak, from the
        mapped Wald half-width w(p) = g′(p)·z·√(p(1 − p)/n): where it crosses the target
        either side of its peak p* (:meth:`_widest_share`; w rises before it and falls
        after), each found by bisection in p. Only a starting point for
        :func:`_first_true` (exact whatever it is); near enough for most n and methods."""
        z = normal_quantile(1.0 - alpha_of(self.confidence) / 2.0)
        target, k, size = max(self.target, 0.0), self.k, np.asarray(n, dtype=np.float64)

        def above(p: FloatArray) -> npt.NDArray[np.bool_]:
            slope: FloatArray | float = 1.0
            if self.metric == "pass_hat_k":
                slope = k * p ** (k - 1)
            elif self.metric == "pass_at_k":
                slope = k * (1.0 - p) ** (k - 1)
            return np.asarray(slope * z * np.sqrt(p * (1.0 - p) / size) > target)

        peak = np.full(size.shape, self._widest_share())
        wide = above(peak)  # else even the peak is within the target: none undecided
        rise = [np.zeros_like(peak), peak.copy()]  # w(p) > target from rise[1] on
        fall = [peak.copy(), np.ones_like(peak)]  # w(p) <= target from fall[1] on
        for _ in range(40):
            middle = (rise[0] + rise[1]) / 2.0
            up = above(middle)
            rise = [np.where(up, rise[0], middle), np.where(up, middle, rise[1])]
            middle = (fall[0] + fall[1]) / 2.0
            down = ~above(middle)
            fall = [np.where(down, fall[0], middle), np.where(down, middle, fall[1])]
        first = np.where(wide, np.ceil(size * rise[1]), size + 1).astype(np.int64)
        last = np.where(wide, np.floor(size * fall[1]) + 1, 0).astype(np.int64)
        return first, last

    def _codes_by_bisection(
        self, n: IntArray, c: IntArray, counts: IntArray, at: IntArray
    ) -> CodeArray:
        """The codes from :func:`_undecided_ranges` (``counts``: the distinct n; ``at``:
        each stimulus-run's index in it): the same as pair by pair. When every stimulus has
        its own number of trials, an advice step otherwise sorts its stimulus-runs
        (millions) into distinct (n, c) and solves the bounds of each (up to a hundred
        thousand); the bisections solve a few per distinct n, most remembered from the step
        before. An n whose peak could not be shown is decided pair by pair."""
        ranges = _undecided_ranges(
            self, counts, self._half_width, self.target, self._widest_share(), self._edges
        )
        inside = (c >= ranges.first[at]) & (c < ranges.end[at])
        codes = np.where(inside, INCONCLUSIVE, PASS).astype(np.int8)
        unshown = ~ranges.shown[at]
        if unshown.any():
            codes[unshown] = _precision_codes(self._half_width(n[unshown], c[unshown]), self.target)
        return codes


_CountWidth = Callable[[IntArray, IntArray], FloatArray]


def _widest(counts: IntArray, half_width: _CountWidth, share: float) -> IntArray:
    """For each n of ``counts``: a count c* at which ``half_width(n, c)`` is widest over
    c = 0..n, or -1 where that could not be shown; ``share``·n is where to look first.

    The half-width, raised to :data:`_HALF_WIDTH_FLOOR` where below it, is single-peaked
    in c (it never rises again after it falls: tests/metrics/test_stimulus_rules.py checks
    every method and metric, k up to :data:`_HALF_WIDTH_SHAPE_PROVEN_K`, every c and n to
    a few hundred and windows of c at large n; tests/metrics/test_metrics_sequential.py
    the confidence sequence's). The first c after which it falls is found by bisection; a
    flat stretch on the falling side (values rounded alike near 0 or 1) can mislead that
    bisection, so the answer is kept only when checked: wider than the next count and than
    the count before, or equal to the count before where that one is wider than its own
    predecessor (two counts tie at the top, as c = ⌊n/2⌋ and ⌈n/2⌉ may). Single-peakedness
    makes such a local peak the widest of all.
    """

    def floored(n: IntArray, c: IntArray) -> FloatArray:
        return np.maximum(half_width(n, c), _HALF_WIDTH_FLOOR)

    def falls(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
        inside = cc < nn
        result = np.ones(cc.shape, dtype=bool)
        if inside.any():
            ni, ci = nn[inside], cc[inside]
            h = floored(np.concatenate([ni, ni]), np.concatenate([ci, ci + 1]))
            result[inside] = h[ni.size :] < h[: ni.size]
        return result

    peak = _first_true(counts, falls, np.rint(counts * share).astype(np.int64))
    around = np.arange(-2, 2)
    tried = peak[:, None] + around
    valid = (tried >= 0) & (tried <= counts[:, None])
    at = np.clip(tried, 0, counts[:, None]).ravel()
    h = floored(np.repeat(counts, around.size), at).reshape(tried.shape)
    before2, before, top, after = np.where(valid, h, -np.inf).T
    right = after < top
    left = (before < top) | ((before == top) & (before2 < before))
    return np.where(right & left, peak, -1)


class _Ranges(NamedTuple):
    """Per n: the undecided counts [first, end) (empty when first == end); ``shown``: false
    where the peak could not be shown (first and end are then -1: decide pair by pair)."""

    first: IntArray
    end: IntArray
    shown: BoolArray


def _undecided_ranges(
    rule: object,
    counts: IntArray,
    half_width: _CountWidth,
    target: float,
    share: float,
    edges: Callable[[IntArray], tuple[IntArray, IntArray]] | None = None,
) -> _Ranges:
    """For each n of ``counts`` (sorted, distinct), the c whose half-width is above
    ``target`` (undecided by a half-width rule, with its tolerance): a peak and two
    bisections per n, remembered by ``rule`` across calls.

    At a given n the half-width is widest at c* (:func:`_widest`) and single-peaked, so
    the undecided c are one range [a, b): none when c* is decided, else a is the first c
    whose half-width, with c clamped to at most c*, is above the target, and b the first
    whose half-width, with c clamped to at least c*, is not. Clamping keeps each predicate
    monotone on the whole of [0, n], so :func:`_first_true` and its memory serve
    unchanged. ``edges`` guesses (a, b) per n.
    """
    peaks = _THRESHOLDS.remember(
        rule, "half-width-peak", counts, lambda missing: _widest(missing, half_width, share)
    )
    shown = peaks >= 0
    proven, peak_of = counts[shown], peaks[shown]

    def undecided(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
        return np.asarray(_precision_codes(half_width(nn, cc), target) == INCONCLUSIVE)

    def peak(nn: IntArray) -> IntArray:
        return peak_of[np.searchsorted(proven, nn)]

    def lower_side(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
        return undecided(nn, np.minimum(cc, peak(nn)))

    def upper_side_decided(nn: IntArray, cc: IntArray) -> npt.NDArray[np.bool_]:
        return ~undecided(nn, np.maximum(cc, peak(nn)))

    first = np.full(counts.shape, -1, dtype=np.int64)
    end = np.full(counts.shape, -1, dtype=np.int64)
    if proven.size:
        lower_guess = None if edges is None else (lambda nn: edges(nn)[0])
        upper_guess = None if edges is None else (lambda nn: edges(nn)[1])
        first[shown] = _THRESHOLDS.first_true(
            rule, "half-width-lower", proven, lower_side, lower_guess
        )
        end[shown] = _THRESHOLDS.first_true(
            rule, "half-width-upper", proven, upper_side_decided, upper_guess
        )
    return _Ranges(first, end, shown)


def _latent(metric: CountMetric, p: FloatArray, k: int) -> FloatArray:
    """P(a block passes) = g(p): p, 1-(1-p)^k or p^k."""
    return _map(metric, p, k)


@dataclass(frozen=True)
class SequentialRule:
    """Decide a count metric on its confidence sequence (:mod:`gate.metrics.sequential`).

    The same three outcomes as :class:`IntervalRule`, on bounds that stay valid at
    every look: a CI job may re-run the check after each batch of trials and stop at
    the first pass or fail. ``precision=True`` is the half-width rule of
    :class:`PrecisionRule` on the sequence. ``scope="stimuli"``: every stimulus on
    its own sequence; the pass side needs every stimulus's lower bound (at α/2), the
    fail side a stimulus's upper bound at α/(2M) (Bonferroni, valid at every look).
    """

    metric: CountMetric
    k: int
    target: float
    direction: Direction = "min"
    confidence: float = 0.95
    scope: Literal["suite", "stimuli"] = "suite"
    precision: bool = False

    @property
    def degree(self) -> int:
        return 1 if self.metric == "pass_rate" else self.k

    def _decide(self, lo: FloatArray, hi: FloatArray) -> CodeArray:
        if self.precision:
            return _precision_codes((hi - lo) / 2.0, self.target)
        return three_way(lo, hi, self.target, self.direction)

    def evaluate_sums(self, sums: npt.ArrayLike, stimuli: int) -> RuleResult:
        """The suite rule on passes per complete round, shape (R, B) (R runs)."""
        s = np.atleast_2d(np.asarray(sums, dtype=np.int64))
        runs = s.shape[0]
        if s.shape[1] == 0:  # not one complete round yet: nothing is known
            zeros, ones = np.zeros(runs), np.ones(runs)
            outcome = self._decide(zeros, ones)
            return RuleResult(outcome, np.full(runs, np.nan), zeros, ones)
        cs = confidence_sequence(s, stimuli, self.confidence)
        lo, hi = cs.lower[:, -1], cs.upper[:, -1]
        value = s.sum(axis=1) / (stimuli * s.shape[1])
        if self.precision:
            value = (hi - lo) / 2.0
        return RuleResult(self._decide(lo, hi), value, lo, hi)

    def evaluate_outcomes(self, outcomes: list[npt.ArrayLike]) -> RuleResult:
        """The rule on every stimulus's pass/fail outcomes in trial order (one run)."""
        if self.scope == "suite":
            rounds = round_sums(outcomes, self.metric, self.k)
            return self.evaluate_sums(rounds.sums[None, :], rounds.stimuli)
        m = len(outcomes)
        alpha = alpha_of(self.confidence)
        per = [round_sums([x], self.metric, self.k).sums for x in outcomes]
        lows, highs, values = np.zeros(m), np.ones(m), np.full(m, np.nan)
        strict_lows, strict_highs = np.zeros(m), np.ones(m)
        # The stimuli with as many rounds as each other in one call (its rows are
        # independent sequences): one at a time took 7 ms each, 70 s for 10,000.
        by_rounds: dict[int, list[int]] = {}
        for i, sums in enumerate(per):
            if sums.size:
                by_rounds.setdefault(sums.size, []).append(i)
        for size, rows in by_rounds.items():
            matrix = np.stack([per[i] for i in rows])
            both = confidence_sequence(matrix, 1, self.confidence)
            strict = confidence_sequence(matrix, 1, 1.0 - alpha / m)
            lows[rows], highs[rows] = both.lower[:, -1], both.upper[:, -1]
            strict_lows[rows], strict_highs[rows] = strict.lower[:, -1], strict.upper[:, -1]
            values[rows] = matrix.sum(axis=1) / size
        if self.precision:
            codes = self._decide(lows, highs)
        elif self.direction == "min":
            codes = np.where(
                lows >= self.target - _TOLERANCE,
                PASS,
                np.where(strict_highs < self.target - _TOLERANCE, FAIL, INCONCLUSIVE),
            ).astype(np.int8)
        else:
            codes = np.where(
                highs <= self.target + _TOLERANCE,
                PASS,
                np.where(strict_lows > self.target + _TOLERANCE, FAIL, INCONCLUSIVE),
            ).astype(np.int8)
        if self.precision:  # the widest stimulus, and its half-width, as PrecisionRule
            values = (highs - lows) / 2.0
            worst = int(np.argmax(values))
        else:
            missing = np.inf if self.direction == "min" else -np.inf
            order = np.where(np.isnan(values), missing, values)
            worst = int(np.argmin(order) if self.direction == "min" else np.argmax(order))
        return RuleResult(
            _combine(codes[None, :]),
            np.array([values[worst]]),
            np.array([lows[worst]]),
            np.array([highs[worst]]),
            codes[None, :],
        )


def regression_outcome(
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    kind: Literal["max_regression", "min_improvement"],
    margin: float,
    detectable: float,
) -> CodeArray:
    """Three outcomes of a paired comparison from one-sided bounds of Δ.

    ``max_regression`` (harm margin δ = ``margin``, detectable D ≥ δ)::

        fail  U < -δ     a drop larger than δ is shown
        pass  L > -D     a drop of D or more is ruled out (at L = -D exactly, a drop of D
                         is still inside the confidence set: inconclusive)
        (fail wins when both hold: the harm is shown)

    ``min_improvement`` (claimed gain ε = ``margin``, detectable D ≥ ε)::

        pass  L > ε      a gain larger than ε is shown
        fail  U < D      a gain of D or more is ruled out
        (pass wins when both hold: the claim is shown)

    >>> lower, upper = [-0.20, -0.09, -0.15], [-0.07, 0.03, 0.02]
    >>> regression_outcome(lower, upper, "max_regression", 0.05, 0.10).tolist()
    [-1, 1, 0]
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if kind == "max_regression":
        bad = hi < -margin - _TOLERANCE
        good = lo > -detectable + _TOLERANCE
        return np.where(bad, FAIL, np.where(good, PASS, INCONCLUSIVE)).astype(np.int8)
    good = lo > margin + _TOLERANCE
    bad = hi < detectable - _TOLERANCE
    return np.where(good, PASS, np.where(bad, FAIL, INCONCLUSIVE)).astype(np.int8)


@dataclass(frozen=True)
class PairedRule:
    """A regression gate: candidate against baseline over paired stimuli.

    ``scope="suite"``: one-sided ``confidence`` bounds of Δ = mean(d_i) from the
    paired test (:func:`gate.metrics.paired.paired_test`), decided by
    :func:`regression_outcome`. ``scope="stimuli"`` (max_regression with δ = 0):
    a stimulus fails when its Holm-adjusted one-sided Fisher exact p-value is ≤ α
    (shown worse), passes when the lower bound of p_cand - p_base (the wider of
    Newcombe's and Miettinen & Nurminen's, lowered where the exact unconditional test
    needs it: :mod:`gate.metrics.exact_difference`) is above -D (a drop larger than D
    ruled out); the gate fails if any fails, else is inconclusive if any is.
    """

    kind: Literal["max_regression", "min_improvement"]
    metric: Literal["pass_rate", "pass_hat_k", "score"]
    k: int
    margin: float
    detectable: float
    confidence: float = 0.95
    scope: Literal["suite", "stimuli"] = "suite"

    def decide_bounds(self, lower: npt.ArrayLike, upper: npt.ArrayLike) -> CodeArray:
        return regression_outcome(lower, upper, self.kind, self.margin, self.detectable)

    def differences(self, n_b: IntArray, c_b: IntArray, n_c: IntArray, c_c: IntArray) -> FloatArray:
        metric: CountMetric = "pass_hat_k" if self.metric == "pass_hat_k" else "pass_rate"
        return stimulus_estimates(metric, n_c, c_c, self.k) - stimulus_estimates(
            metric, n_b, c_b, self.k
        )

    def evaluate_stimuli(
        self, n_b: npt.ArrayLike, c_b: npt.ArrayLike, n_c: npt.ArrayLike, c_c: npt.ArrayLike
    ) -> RuleResult:
        """The per-stimulus rule on count matrices of shape (R, M)."""
        nb, cb, nc, cc = _matrices(n_b, c_b, n_c, c_c)
        alpha = alpha_of(self.confidence)
        level = alpha + _TOLERANCE
        # Holm on Fisher's exact p-values, without the Python call per table that the exact
        # test costs (millions per advice step when every stimulus has its own trials).
        worse = fisher_holm_rejects(nb, cb, nc, cc, level)
        lower, upper = difference_bounds(nb, cb, nc, cc, self.confidence)
        # Lowered where the exact unconditional test needs it: a true drop of D passes
        # at most α, computed over every table of the design.
        shift = exact_shifts(nb, nc, self.detectable, self.confidence)
        lower = np.maximum(lower - shift, -1.0)
        ruled_out = lower > -self.detectable + _TOLERANCE
        codes = np.where(worse, FAIL, np.where(ruled_out, PASS, INCONCLUSIVE)).astype(np.int8)
        d = cc / nc - cb / nb
        worst = _worst(lower, "min")
        return RuleResult(
            _combine(codes),
            _pick(d, worst),
            _pick(lower, worst),
            _pick(upper, worst),
            codes,
            worst,
        )

    def evaluate_counts(
        self, n_b: npt.ArrayLike, c_b: npt.ArrayLike, n_c: npt.ArrayLike, c_c: npt.ArrayLike
    ) -> RuleResult:
        """Simulation path: R runs at once (the sign-flip test with sampled patterns)."""
        nb, cb, nc, cc = _matrices(n_b, c_b, n_c, c_c)
        if self.scope == "stimuli":
            return self.evaluate_stimuli(nb, cb, nc, cc)
        noise_k = floor_k(self.metric, self.k)
        counts = None if noise_k is None else TrialCounts.of_runs(nb, cb, nc, cc, noise_k)
        return self.evaluate_differences(self.differences(nb, cb, nc, cc), counts)

    def evaluate_differences(
        self, d: npt.ArrayLike, counts: TrialCounts | None = None
    ) -> RuleResult:
        """R runs of M differences; ``counts`` (pass rates and pass^k) widens the bounds to
        the trials' binomial noise, as the verdict's test does."""
        diffs = np.atleast_2d(np.asarray(d, dtype=np.float64))
        lower, upper = paired_bounds_batch(diffs, confidence=self.confidence, counts=counts)
        return RuleResult(self.decide_bounds(lower, upper), diffs.mean(axis=-1), lower, upper)


# --------------------------------------------------------------------------- advice


def _runs_within(stimuli: int, elements: int, most: int, fewest: int) -> int:
    """Simulated runs for ``stimuli`` stimuli: as many as keep runs × stimuli within
    ``elements``, but no more than ``most`` and no fewer than ``fewest``."""
    return int(min(most, max(fewest, elements // max(stimuli, 1))))


def _runs(stimuli: int) -> int:
    """Simulated runs per probability for ``stimuli`` stimuli: as many as the element budget
    allows, at most ``_MAX_RUNS``, at least ``_FEWEST_RUNS`` (reached at 100,000 stimuli).
    Past 10,000 stimuli (200 runs) the runs shrink, so that an advice at 100,000 stimuli
    takes seconds and tens of MB, not a minute and a GB; its probability is then coarser
    (± 0.09 at 20 runs instead of ± 0.03 at 200). Fewer than 20 were tried at 800,000
    stimuli (5: 5 s instead of 18) and not kept: where the gate is undecided the truths the
    data allow straddle the target, P(decided) grows slowly with m, and 5 runs named 224
    more trials where 20 named 31."""
    return _runs_within(stimuli, _ELEMENT_BUDGET, _MAX_RUNS, _FEWEST_RUNS)


def _future_rates(
    n: npt.ArrayLike, c: npt.ArrayLike, runs: int, seed: int, predictive: bool, stream: int = 1
) -> FloatArray:
    """The per-stimulus rates (runs, M) the future trials of an advice simulation are drawn at.

    Drawn once per advice (from a stream of their own, ``stream``), so every m of the search
    sees the same rates and P(decided at m) varies with m alone. ``predictive=False``: the
    observed c/n in every run (the plug-in simulation, which ignores the uncertainty of the
    estimates).
    """
    n_arr = np.asarray(n, dtype=np.int64).ravel()
    c_arr = np.asarray(c, dtype=np.int64).ravel()
    if not predictive:
        return np.broadcast_to(c_arr / n_arr, (runs, n_arr.size))
    return posterior_rates(n_arr, c_arr, runs, np.random.default_rng([seed, stream]))


def _future_passes(m: int, p: FloatArray, seed: int) -> IntArray:
    """Passes of m more trials at each rate of ``p``: Binomial(m, p), seeded.

    A simulation of at least ``_NORMAL_ELEMENTS`` stimulus-runs draws the binomial's
    normal approximation (rounded, within [0, m]) where m·p(1 − p) ≥ ``_NORMAL_VARIANCE``:
    numpy draws a binomial in 100-150 ns, so the two million of each step of a per-stimulus
    search (about 60 steps at 2,000 stimuli and more) took 15 s, and a normal costs a
    fraction of that. Its distribution function is then within 0.4·|1 − 2p|/(6σ) ≤ 1.3%
    of the binomial's (Edgeworth's skewness term, σ ≥ 5), inside the simulation's own
    noise (± 3% at 200 runs, ± 9% at 20); at 100,000 stimuli the answers moved less than
    another seed moves them (bench/advice_normal.py). Smaller simulations, and rates below
    that variance, draw the binomial itself: what they drew before.
    """
    chunks = list(_future_pass_chunks(m, p, seed, p.size))
    return np.concatenate(chunks) if chunks else np.zeros(p.shape, dtype=np.int64)


def _future_pass_chunks(
    m: int, p: FloatArray, seed: int, elements: int | None = None
) -> Iterator[IntArray]:
    """:func:`_future_passes` of ``p`` (runs, M) a few runs at a time (at most ``elements``
    a chunk, :data:`_CHUNK_ELEMENTS` by default; one run at least), in order. The draws are
    those of the whole array, number for number: both generators are read in the array's
    order, chunk after chunk, and whether the normal applies is decided for the whole
    array, so a simulation of 800,000 stimuli holds a chunk's temporaries, not twenty
    runs' (0.7 GB)."""
    rng = np.random.default_rng(seed)
    if p.size == 0:
        return
    runs = p.shape[0] if p.ndim == 2 else 1
    rows = p.reshape(runs, -1)
    chunks = _run_chunks(runs, rows.shape[1], elements)
    normal_branch = p.size >= _NORMAL_ELEMENTS and m * 0.25 >= _NORMAL_VARIANCE
    if normal_branch:
        normal_branch = any(
            bool(np.any(m * rows[c] * (1.0 - rows[c]) >= _NORMAL_VARIANCE)) for c in chunks
        )
    # A stream of each m's own: the binomial's draws at two m's from one seed fall out of
    # step within a few stimuli, so its runs at different m are as good as independent.
    # One normal stream for all m ties them instead, and the per-stimulus answers left
    # without one went from 38 to 96 of 10,870 (another seed: 48).
    gauss = np.random.default_rng([seed, m]) if normal_branch else None
    for chunk in chunks:
        q = rows[chunk]
        if gauss is None:
            extra = np.asarray(rng.binomial(m, q), dtype=np.int64)
        else:
            extra = _normal_passes(m, q, rng, gauss)
        yield extra.reshape((-1, *p.shape[1:]) if p.ndim == 2 else p.shape)


def _run_chunks(runs: int, stimuli: int, elements: int | None = None) -> list[slice]:
    """The runs simulated together: at most ``elements`` stimulus-runs a chunk
    (:data:`_CHUNK_ELEMENTS` by default), one run at least, in order."""
    step = max(1, (_CHUNK_ELEMENTS if elements is None else elements) // max(stimuli, 1))
    return [slice(start, start + step) for start in range(0, runs, step)]


def _normal_passes(
    m: int, q: FloatArray, rng: np.random.Generator, gauss: np.random.Generator
) -> IntArray:
    """One chunk of :func:`_future_passes`'s normal branch: the normal where m·p(1 − p)
    ≥ ``_NORMAL_VARIANCE``, the binomial (from ``rng``) elsewhere; ``gauss`` gives a draw
    for every element, used or not, so the chunks stay in step with the whole array."""
    variance = m * q * (1.0 - q)
    normal = variance >= _NORMAL_VARIANCE
    z = gauss.standard_normal(q.shape)
    # In place (a tenth of a step's time): floor(m·p + z·σ + 0.5) within [0, m].
    z *= np.sqrt(variance, out=variance)
    z += m * q
    z += 0.5
    extra = np.clip(np.floor(z, out=z), 0, m, out=z).astype(np.int64)
    exact = ~normal
    if exact.any():
        extra[exact] = rng.binomial(m, q[exact])
    return extra


def _smallest(
    probability: Callable[[int], float], power: float, cap: int, start: int = 1
) -> int | None:
    """Smallest m in [start, cap] with probability(m) ≥ power: :func:`_smallest_each` of
    one search."""

    def one(_: IntArray, m: IntArray) -> FloatArray:
        return np.array([probability(int(m[0]))])

    return _smallest_each(one, 1, power, cap, start)[0]


def _smallest_each(
    probabilities: Callable[[IntArray, IntArray], FloatArray],
    count: int,
    power: float,
    cap: int,
    start: int = 1,
) -> list[int | None]:
    """For each of ``count`` searches, the smallest m in [start, cap] with probability
    ≥ ``power``: m doubles from ``start`` until one reaches it (None if none does by
    ``cap``), then bisects between the last short m and that one. The searches run in
    step: ``probabilities(which, m)`` gives search ``which[j]``'s probability at
    ``m[j]``, and each search visits the m it would alone."""
    low = np.full(count, start - 1, dtype=np.int64)
    high = np.full(count, start, dtype=np.int64)
    doubling = np.ones(count, dtype=bool)
    open_ = np.ones(count, dtype=bool)
    answer: list[int | None] = [None] * count
    while open_.any():
        which = np.flatnonzero(open_)
        probe = np.where(doubling[which], high[which], (low[which] + high[which]) // 2)
        enough = probabilities(which, probe) >= power
        doubling_now = doubling[which]
        # Doubling: a probe short of the power moves on (or gives up at the cap).
        short = doubling_now & ~enough
        for i in which[short & (high[which] >= cap)].tolist():
            open_[i] = False
        grow = which[short & (high[which] < cap)]
        low[grow], high[grow] = high[grow], np.minimum(cap, high[grow] * 2)
        doubling[which[doubling_now & enough]] = False
        # Bisection: the probe becomes the bound on its side.
        halving = ~doubling_now
        high[which[halving & enough]] = probe[halving & enough]
        low[which[halving & ~enough]] = probe[halving & ~enough]
        for i in which[~doubling[which] & open_[which]].tolist():
            if high[i] - low[i] <= 1:
                answer[i] = int(high[i])
                open_[i] = False
    return answer


def _decided(outcome: CodeArray) -> float:
    return float(np.mean(outcome != INCONCLUSIVE))


def _decided_runs(outcome: CodeArray) -> int:
    """How many of the runs ``outcome`` decided (:func:`_decided` is their share)."""
    return int(np.count_nonzero(outcome != INCONCLUSIVE))


def _codes(
    rule: IntervalRule | PrecisionRule, n: npt.ArrayLike, c: npt.ArrayLike
) -> tuple[CodeArray, CodeArray | None]:
    """``rule.evaluate(n, c)``'s outcome and per-stimulus codes, all an advice reads: a
    per-stimulus rule skips the worst (widest) stimulus's values, which need every
    stimulus-run's estimate or bounds (``stimulus_codes``)."""
    if rule.scope == "stimuli":
        stimuli = rule.stimulus_codes(n, c)
        return _combine(stimuli), stimuli
    result = rule.evaluate(n, c)
    return result.outcome, result.stimuli


def more_trials(
    rule: IntervalRule | PrecisionRule,
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    *,
    power: float = 0.8,
    seed: int = _SEED,
    cap: int = MAX_MORE_TRIALS,
    predictive: bool = True,
    known: Mapping[int, float] | None = None,
) -> int | None:
    """Additional trials per stimulus that decide ``rule`` with probability ≥ ``power``.

    Predictive: each simulated run draws every stimulus's pass rate p from what the data
    allow (:func:`posterior_rates`), then its next m trials' passes from Binomial(m, p);
    the rule is applied to (n + m, c + those passes) in a few hundred runs (seeded, so the
    answer is reproducible) and m is the smallest with P(pass or fail) ≥ ``power``.

    That probability is an average over the truths the data allow, not a promise for each
    one: m decides about ``power`` of the gates left in this state, while at a truth right
    on the target nothing decides. ``None`` when even ``cap`` more trials would not (the
    data leave too much of the truth too close to the target). ``predictive=False`` is the
    plug-in simulation at the observed rates c/n (it takes a 5/5 stimulus for one that
    never fails and decided far less often than promised), kept only to measure that.

    ``known``: P(decided) at some m, from :func:`stimulus_more_trials`'s ``family`` on the
    same rule, counts, power and seed (the same simulation): not simulated again.
    """
    n_arr = np.asarray(n, dtype=np.int64).ravel()
    c_arr = np.asarray(c, dtype=np.int64).ravel()
    runs = _runs(n_arr.size)
    p = _future_rates(n_arr, c_arr, runs, seed, predictive)

    def probability(m: int) -> float:
        if known is not None and m in known:
            return known[m]
        chunks = _future_pass_chunks(m, p, seed)
        return sum(_decided_runs(_codes(rule, n_arr + m, c_arr + x)[0]) for x in chunks) / runs

    return _smallest(probability, power, cap)


def stimulus_more_trials(
    rule: IntervalRule | PrecisionRule,
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    *,
    power: float = 0.8,
    seed: int = _SEED,
    cap: int = MAX_MORE_TRIALS,
    predictive: bool = True,
    family: dict[int, float] | None = None,
) -> list[int | None]:
    """Per stimulus of a ``scope="stimuli"`` rule: more trials deciding it with ≥ ``power``.

    Stimuli decided now get 0. The family is simulated as a whole (Holm's
    adjustment couples the stimuli), predictively as in :func:`more_trials`, at a
    geometric grid of m, and each stimulus gets the first m on the grid at which it
    is decided with probability ≥ ``power`` (the grid steps by about 25%, so an
    answer may overshoot by that much). The probability is an average over the
    rates the data allow, not a promise at each fixed rate.

    ``family``, when given, receives P(the whole gate decided) at each m simulated, for
    :func:`more_trials`'s ``known``: at the m both visit (1, 2, 4) one simulation serves
    both, a third of a second each at 100,000 stimuli.
    """
    n_arr = np.asarray(n, dtype=np.int64).ravel()
    c_arr = np.asarray(c, dtype=np.int64).ravel()
    now = rule.evaluate(n_arr, c_arr).stimuli
    assert now is not None, "a scope='stimuli' rule"
    # -1: not decided yet (within the grid so far); 0: decided now.
    answer = np.where(now[0] != INCONCLUSIVE, 0, -1)
    if answer.min() == 0:
        return [0] * answer.size
    runs = _runs(n_arr.size)
    p = _future_rates(n_arr, c_arr, runs, seed, predictive)
    m = 1
    while m <= cap and answer.min() < 0:
        decided, stimuli_decided = 0, np.zeros(n_arr.size, dtype=np.int64)
        for extra in _future_pass_chunks(m, p, seed):
            outcome, codes = _codes(rule, n_arr + m, c_arr + extra)
            assert codes is not None
            decided += _decided_runs(outcome)
            stimuli_decided += np.count_nonzero(codes != INCONCLUSIVE, axis=0)
        if family is not None:
            family[m] = decided / runs
        rate = stimuli_decided / runs
        answer[(answer < 0) & (rate >= power)] = m
        m = max(m + 1, math.ceil(m * 1.25))
    return [None if a < 0 else a for a in answer.tolist()]


def more_trials_paired(
    rule: PairedRule,
    n_b: npt.ArrayLike,
    c_b: npt.ArrayLike,
    n_c: npt.ArrayLike,
    c_c: npt.ArrayLike,
    *,
    power: float = 0.8,
    seed: int = _SEED,
    cap: int = MAX_MORE_TRIALS,
    predictive: bool = True,
) -> int | None:
    """Additional trials per stimulus, on both runs, that decide a paired rule (≥ ``power``).

    Each run keeps its counts and adds m trials per paired stimulus; in each simulated
    run both the baseline's and the candidate's rate of every stimulus are drawn from
    what their data allow (:func:`posterior_rates`), as in :func:`more_trials`, so the
    probability is an average over the truths the data allow. More trials shrink only
    the within-stimulus noise: when the stimuli themselves differ, no number of trials
    may decide, and ``None`` says so (see :func:`more_stimuli`). Score comparisons have
    no trial model: ``None``.

    The two runs' rates are drawn independently: a stimulus that is hard on one run is
    not taken to be hard on the other, so the simulated differences spread more than
    paired truths do. Where the candidate's change is the same for every stimulus, the
    answer errs on the safe side: ``None`` more often than needed (48% of inconclusive
    gates in bench/advice_calibration.py's ``paired-trials``, where the plug-in said
    ``None`` for all), and the trials it names decided 95% of the gates there. Where each
    stimulus changes by its own amount (``paired-trials-spread``), the spread is real:
    ``None`` for 63%, and the trials it names decided 0.77. A joint model of the two rates
    (a shared difficulty, a log-odds shift and its spread across stimuli on a grid)
    decided 0.94 and 0.77 with ``None`` for 36% and 54%, and took 30 s to draw at 100,000
    stimuli of uneven trials: not adopted.
    """
    if rule.metric == "score":
        return None
    arrays = [np.asarray(x, dtype=np.int64).ravel() for x in (n_b, c_b, n_c, c_c)]
    nb, cb, nc, cc = arrays
    runs = _runs(nb.size)
    # Each run's rates from its own posterior: the candidate's stimuli may differ as a whole.
    pb = _future_rates(nb, cb, runs, seed, predictive, stream=1)
    pc = _future_rates(nc, cc, runs, seed, predictive, stream=2)

    # A few runs at a time, as :func:`_future_pass_chunks`: the baseline's draws of every
    # run first (kept as int32), then the candidate's, so the numbers are those of two
    # draws over all runs; 150,000 stimuli took 12 s and 750 MB.
    chunks = _run_chunks(runs, nb.size)

    def probability(m: int) -> float:
        rng = np.random.default_rng(seed)
        extra_b = [rng.binomial(m, pb[chunk]).astype(np.int32) for chunk in chunks]
        decided = 0
        for chunk, drawn_b in zip(chunks, extra_b, strict=True):
            drawn_c = rng.binomial(m, pc[chunk])
            result = rule.evaluate_counts(nb + m, cb + drawn_b, nc + m, cc + drawn_c)
            decided += _decided_runs(result.outcome)
        return decided / runs

    return _smallest(probability, power, cap)


def more_stimuli(
    rule: PairedRule,
    differences: npt.ArrayLike,
    *,
    power: float = 0.8,
    seed: int = _SEED,
    cap: int = MAX_MORE_STIMULI,
    counts: tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike] | None = None,
) -> int | None:
    """Paired stimuli in all (M' > M) that would decide a suite-level paired rule (≥ ``power``).

    A bootstrap of stimuli: the M' differences of a simulated run are drawn with
    replacement from the observed dᵢ (stimuli like the M observed ones, at the current
    trials per stimulus). Its centre is the observed Δ, but the spread of M' resampled
    stimuli carries the uncertainty about the stimuli, and seeded checks against known
    truths (bench/advice_calibration.py, scenario paired-stimuli) found it decided
    about the promised share: 0.78–0.82 of runs, never without an answer. A Bayesian
    bootstrap that keeps the M observed stimuli and adds new ones did no better
    (0.74–0.79), so this one stays. Returns the total M', or ``None`` when even ``cap``
    stimuli would not decide (the observed Δ sits on a margin).

    ``counts`` (the M stimuli's ``n_b, c_b, n_c, c_c``) resamples stimuli with their
    trials, so each simulated run's bounds also cover the trials' binomial noise, as the
    verdict's do, where the rule's metric has that floor
    (:func:`~gate.metrics.trial_noise.floor_k`; not scores).
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    if d.size == 0:
        return None
    runs = _runs(d.size)
    uniform = np.full(d.size, 1.0 / d.size)
    # Each observed stimulus's distinct count row: resampled stimuli add up per row.
    noise_k = floor_k(rule.metric, rule.k)
    trials, row = (
        (None, None)
        if counts is None or noise_k is None
        else TrialCounts.of_stimuli(*counts, k=noise_k)
    )

    def probability(total: int) -> float:
        rng = np.random.default_rng(seed)
        if total < 30:
            chosen = rng.integers(0, d.size, size=(runs, total))
            sample = d[chosen]
            noise = None
            if trials is not None and row is not None:
                noise = trials._replace(weights=_per_row(row[chosen], trials.n_b.size))
            return _decided(rule.evaluate_differences(sample, noise).outcome)
        drawn = rng.multinomial(total, uniform, size=runs).astype(np.float64)
        floor = None if trials is None or row is None else (trials, row)
        return _decided(rule.decide_bounds(*_drawn_bounds(d, drawn, rule.confidence, floor)))

    return _smallest(probability, power, cap, start=d.size + 1)


def _drawn_bounds(
    d: FloatArray,
    drawn: FloatArray,
    confidence: float,
    floor: tuple[TrialCounts, npt.NDArray[np.int64]] | None,
) -> tuple[FloatArray, FloatArray]:
    """The bounds of :func:`gate.metrics.paired.paired_bounds_batch` for runs that take
    ``drawn[r, i]`` copies of each observed difference (M' ≥ 30): the t path from the
    moments (:func:`_drawn_t_bounds`) and, with ``floor`` (the observed stimuli's counts
    and each one's row among them), the trials' noise floor where the verdict takes it."""
    lower, upper, zero = _drawn_t_bounds(d, drawn, confidence)
    if floor is None:
        return lower, upper
    trials, row = floor
    # Runs whose differences are all equal take the sign flip, and with it the floor;
    # matched 0/1 outcomes take the floor in the t test too.
    floored = zero if trials.matched_pairs is None else np.ones_like(zero)
    if floored.any():
        weights = _per_row(
            np.broadcast_to(row, drawn.shape)[floored], trials.n_b.size, drawn[floored]
        )
        widened = trial_noise_bounds(trials._replace(weights=weights), confidence)
        lower[floored] = np.minimum(lower[floored], widened.lower)
        upper[floored] = np.maximum(upper[floored], widened.upper)
    return lower, upper


def _drawn_t_bounds(
    d: FloatArray, drawn: FloatArray, confidence: float
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """The t path of :func:`gate.metrics.paired.paired_bounds_batch` for runs that take
    ``drawn[r, i]`` copies of each observed difference ``d[i]`` (M' = the row sums ≥ 30), from
    their moments alone: (lower, upper, zero spread). Zero-spread runs get their mean as
    both bounds (the caller gives them the sign flip's). The moments are taken about the
    observed mean, so that little cancels."""
    total = round(float(drawn[0].sum()))
    centre = float(d.mean())
    e = d - centre
    shift = drawn @ e / total
    raw_second = drawn @ (e * e) / total
    second = np.maximum(raw_second - shift * shift, 0.0)
    third = drawn @ e**3 / total - 3.0 * shift * raw_second + 2.0 * shift**3
    mean = centre + shift
    bounds = widened_t_moments(mean, second, third, total, confidence)
    # As the verdict's zero_spread: the drawn differences all equal (up to rounding).
    present = drawn > 0
    zero = np.ptp(np.where(present, d, d[np.argmax(present, axis=1)][:, None]), axis=1) <= 1e-9
    lower = np.clip(np.where(zero, mean, bounds.lower), -1.0, 1.0)
    upper = np.clip(np.where(zero, mean, bounds.upper), -1.0, 1.0)
    return lower, upper, zero


def _per_row(rows: IntArray, distinct: int, times: FloatArray | None = None) -> FloatArray:
    """Weights (R, U) of R runs whose stimuli are the distinct rows ``rows`` (R, M'), each
    counted once or ``times`` times."""
    runs = rows.shape[0]
    flat = (np.arange(runs)[:, None] * distinct + rows).ravel()
    each = None if times is None else times.ravel()
    total = np.bincount(flat, weights=each, minlength=runs * distinct)
    return np.asarray(total.reshape(runs, distinct), dtype=np.float64)


def stimulus_more_trials_sequential(
    rule: SequentialRule,
    outcomes: list[npt.ArrayLike],
    *,
    power: float = 0.8,
    seed: int = _SEED,
    cap: int = MAX_MORE_TRIALS,
) -> list[int | None]:
    """:func:`more_trials_sequential` of each stimulus on its own (``rule``: scope "suite").

    One stimulus enters that simulation only through its trials, its passes and its
    passing blocks, so the search runs once per distinct tally of the three (10,000
    searches took over 5 minutes). The searches run in step, each through the same m as
    alone: at each step every open search draws its runs, and one call of the sequence's
    bounds serves them all (hundreds of tallies of uneven trials, one call each per m,
    took over a minute).
    """
    tallies: dict[tuple[int, int, int], int] = {}
    draws: list[Callable[[int], tuple[FloatArray, int]]] = []
    order: list[int] = []
    for x in outcomes:
        trials = np.asarray(x, dtype=np.float64).ravel()
        blocks = round_sums([trials], rule.metric, rule.k).sums
        tally = (trials.size, int(trials.sum()), int(blocks.sum()))
        if tally not in tallies:
            tallies[tally] = len(draws)
            draws.append(_sequential_draws(rule, [trials], seed, predictive=True))
        order.append(tallies[tally])

    def probabilities(which: IntArray, m: IntArray) -> FloatArray:
        drawn = [draws[i](int(extra)) for i, extra in zip(which.tolist(), m.tolist(), strict=True)]
        passes = np.stack([p for p, _ in drawn])
        blocks = np.array([b for _, b in drawn], dtype=np.int64)
        return np.asarray(np.mean(_sequence_decided(rule, passes, blocks), axis=1))

    found = _smallest_each(probabilities, len(draws), power, cap)
    return [found[i] for i in order]


def _sequence_decided(rule: SequentialRule, passes: FloatArray, blocks: IntArray) -> BoolArray:
    """Whether ``rule`` decides each simulated run: row j of ``passes`` (R runs) holds the
    passing blocks of a sequence of ``blocks[j]`` blocks, read at its last look.

    Up to :data:`_SEQUENCE_ORDER_PROVEN` blocks, where the bounds' order and the
    half-width's single peak in the passes are tested, from thresholds in the passes per
    number of blocks (:func:`_sequence_cuts`; :func:`_undecided_ranges` for the half-width
    rule); past it, and where a peak could not be shown, from the bounds of each (passes,
    blocks) pair.
    """
    decided = np.empty(passes.shape, dtype=bool)
    by_cuts = blocks <= _SEQUENCE_ORDER_PROVEN
    if rule.precision and rule.target < _HALF_WIDTH_FLOOR:
        by_cuts[:] = False  # the half-width's shape holds only above the floor
    if by_cuts.any() and rule.precision:
        distinct, at = np.unique(blocks[by_cuts], return_inverse=True)

        def half_width(b: IntArray, s: IntArray) -> FloatArray:
            lo, hi = look_bounds(s, b, rule.confidence)
            return np.asarray((hi - lo) / 2.0)

        ranges = _undecided_ranges(rule, distinct, half_width, rule.target, 0.5)
        rows = passes[by_cuts]
        decided[by_cuts] = (rows < ranges.first[at, None]) | (rows >= ranges.end[at, None])
        by_cuts[by_cuts] = ranges.shown[at]  # the rest: pair by pair
    elif by_cuts.any():
        leave, reach = _sequence_cuts(rule, blocks[by_cuts])
        rows = passes[by_cuts]
        decided[by_cuts] = (rows < leave[:, None]) | (rows >= reach[:, None])
    if not by_cuts.all():
        pairs = ~by_cuts
        lo, hi = look_bounds(passes[pairs], blocks[pairs][:, None], rule.confidence)
        decided[pairs] = rule._decide(lo, hi) != INCONCLUSIVE
    return decided


def _sequence_cuts(rule: SequentialRule, blocks: IntArray) -> tuple[IntArray, IntArray]:
    """For one stimulus's sequence after each of ``blocks`` blocks, the passes ``(leave,
    reach)`` between which ``rule`` is undecided: decided below ``leave`` (fail, or pass
    for a max gate) and from ``reach`` up.

    Both bounds of the sequence grow with the passes, so along the passes the outcome
    runs from one decision through inconclusive to the other: two bisections per distinct
    number of blocks (remembered across calls) instead of a root search per pair of
    passes and blocks (tests/metrics/test_metrics_sequential.py checks the order and
    the answers). Not for the half-width rule, whose width is widest mid-way.
    """
    low_end = FAIL if rule.direction == "min" else PASS
    high_end = PASS if rule.direction == "min" else FAIL

    def codes(b: IntArray, s: IntArray) -> CodeArray:
        return rule._decide(*look_bounds(s, b, rule.confidence))

    def leaves(b: IntArray, s: IntArray) -> npt.NDArray[np.bool_]:
        return np.asarray(codes(b, s) != low_end)

    def reaches(b: IntArray, s: IntArray) -> npt.NDArray[np.bool_]:
        return np.asarray(codes(b, s) == high_end)

    distinct, at = np.unique(blocks, return_inverse=True)
    leave = _THRESHOLDS.first_true(rule, "sequence-leaves", distinct, leaves)
    reach = _THRESHOLDS.first_true(rule, "sequence-reaches", distinct, reaches)
    return leave[at], reach[at]


def _sequential_draws(
    rule: SequentialRule, outcomes: list[npt.ArrayLike], seed: int, predictive: bool
) -> Callable[[int], tuple[FloatArray, int]]:
    """The simulation of :func:`more_trials_sequential`: m more trials per stimulus ->
    (each run's passing blocks at the last look, the blocks), seeded anew at each m."""
    rounds = round_sums(outcomes, rule.metric, rule.k)
    arrays = [np.asarray(x, dtype=np.float64).ravel() for x in outcomes]
    shortest = min(x.size for x in arrays)
    n = np.array([x.size for x in arrays], dtype=np.int64)
    c = np.array([int(x.sum()) for x in arrays], dtype=np.int64)
    runs = _runs(n.size)
    block_pass = _latent(rule.metric, _future_rates(n, c, runs, seed, predictive), rule.k)
    past = int(rounds.sums.sum())

    def draw(m: int) -> tuple[FloatArray, int]:
        extra = max((shortest + m) // rule.degree - rounds.sums.size, 0)
        rng = np.random.default_rng(seed)
        passes = past + rng.binomial(extra, block_pass).sum(axis=1)
        return np.asarray(passes, dtype=np.float64), rounds.stimuli * (rounds.sums.size + extra)

    return draw


def more_trials_sequential(
    rule: SequentialRule,
    outcomes: list[npt.ArrayLike],
    *,
    power: float = 0.8,
    seed: int = _SEED,
    cap: int = MAX_MORE_TRIALS,
    predictive: bool = True,
) -> int | None:
    """Additional trials per stimulus that decide a sequential suite rule (≥ ``power``).

    Future rounds are simulated predictively: in each simulated run stimulus i's pass
    rate pᵢ is drawn from what its trials allow (:func:`posterior_rates`), block r
    passes with probability g(pᵢ), and stimulus i adds Binomial(rounds, g(pᵢ)) passing
    blocks; the probability is an average over the truths the data allow, as in
    :func:`more_trials`. The rule is applied at the last look only (the intersection
    with earlier looks can only narrow the bounds: the advice is slightly
    pessimistic), and trials left over from an incomplete block are ignored.
    ``None`` when even ``cap`` more trials would not decide.
    """
    draw = _sequential_draws(rule, outcomes, seed, predictive)

    def probability(m: int) -> float:
        passes, blocks = draw(m)
        return float(np.mean(_sequence_decided(rule, passes[None, :], np.array([blocks]))))

    return _smallest(probability, power, cap)
