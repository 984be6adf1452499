"""Paired statistics of a candidate run against a baseline run (statistics.md §4, §5).

Pure numbers: no stimulus ids, no wording. :mod:`gate.compare` pairs the stimuli
of two runs and calls these; :mod:`gate.gates` turns the bounds into decisions;
the report words them.

Notation (``s`` is the per-stimulus value of the compared metric)::

    d_i = s_candidate,i - s_baseline,i          (i over the M paired stimuli)
    Δ   = mean(d)                               (negative: the candidate is worse)
    SE  = sd(d) / sqrt(M)                       (sd with M - 1 in the denominator)

Analysing per-stimulus means already clusters the K trials of a stimulus, so no
trial-level independence across stimuli is assumed (Miller 2024, "Adding Error
Bars to Evals", arXiv:2411.00640).

Suite-level test (:func:`paired_test`), chosen by :data:`T_MIN_STIMULI`:

- ``M ≥ 30``: paired t with ``M - 1`` degrees of freedom, each bound widened to Hall's
  skewness-corrected t's where that is wider (:mod:`gate.metrics.skew`).
- ``M < 30``: sign-flip permutation test (under H0 each d_i is symmetric around
  zero, so all ``2^M`` sign patterns are equally likely): exact enumeration when
  ``M ≤ 20``, else 65,536 random patterns with a fixed seed (Monte-Carlo,
  ``p = (1 + count)/(B + 1)``, valid by Phipson & Smyth 2010).
- Zero spread (every d_i equal; SE = 0 and t undefined): the exact sign-flip
  test in closed form, at any M.

Per stimulus: a one-sided Fisher exact test on the 2×2 pass/fail counts
(:func:`fisher_worse`), Holm's step-down (:func:`holm`) for a family-wise gate,
Benjamini-Hochberg (:func:`benjamini_hochberg`) for triage lists, and Newcombe's
hybrid score interval (:func:`difference_bounds`) to rule out a drop.

Only numpy, the standard library and ``scipy.special`` (through ``_special``) are
imported.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._kernels import log_comb, log_factorial
from gate.metrics._special import gammaln, normal_quantile
from gate.metrics._validation import check_choice, check_confidence, check_finite_values, check_int
from gate.metrics.skew import widened_t, widened_t_p
from gate.metrics.trial_noise import (
    TrialCounts,
    score_difference_bounds,
    trial_noise_bounds,
    trial_noise_p_value,
)

__all__ = [
    "DEFAULT_POWER",
    "ENUMERATE_MAX_STIMULI",
    "MONTE_CARLO_PATTERNS",
    "T_MIN_STIMULI",
    "PairedTest",
    "alpha_of",
    "benjamini_hochberg",
    "difference_bounds",
    "fisher_holm_rejects",
    "fisher_min",
    "fisher_worse",
    "fisher_worse_above",
    "fisher_worse_each",
    "fisher_worse_float",
    "fisher_worse_lower",
    "holm",
    "holm_rejects",
    "min_sign_flip_stimuli",
    "minimum_detectable_effect",
    "paired_bounds_batch",
    "paired_test",
    "trials_needed",
    "within_variance",
]

FloatArray = npt.NDArray[np.float64]
Method = Literal["auto", "t", "permutation"]
TestName = Literal[
    "paired t", "exact sign-flip permutation", "Monte-Carlo sign-flip permutation", "none"
]

#: From this many paired stimuli on, ``method="auto"`` uses the paired t test.
T_MIN_STIMULI = 30
#: Up to this many paired stimuli the 2^M sign patterns are all enumerated (2^20 ≈ 10^6).
ENUMERATE_MAX_STIMULI = 20
#: Random sign patterns drawn when there are too many to enumerate.
MONTE_CARLO_PATTERNS = 65_536
#: Power at which minimum detectable effects and advice are stated.
DEFAULT_POWER = 0.8

# Subset sums of rational differences (c/n - c'/n') that are 0 in exact arithmetic come out
# as ±1e-16 in floating point. A tie counts as "at least as extreme" (the conservative
# convention), so comparisons allow this much slack.
_TIE = 1e-9
# Fisher's exact test is summed in exact integers below this many trials, in logs above.
_EXACT_FISHER_MAX = 2_000
# fisher_worse_lower's bounds give up at least this much (relative) to their logs' rounding.
_FISHER_BOUND_SLACK = 1e-6
# fisher_worse_float's relative error is below 1e-10 up to _EXACT_FISHER_MAX trials; Holm
# decides on intervals this wide around it, and on exact values where they straddle a level.
_FISHER_FLOAT_SLACK = 1e-8
#: up to this many trials in all, :func:`fisher_worse_each` gives exact values.
_EXACT_EACH_MAX = 200
# Passes of fisher_holm_rejects' screen; any pass's level is a valid one, so stopping
# early only leaves more tables to compute.
_SCREEN_PASSES = 50
# From this many counts on, Wilson bounds are computed per distinct (n, c) and looked up.
_GRID_MIN_SIZE = 10_000


def alpha_of(confidence: float) -> float:
    """α = 1 - confidence, rounded so that 1 - 0.95 is 0.05 and not 0.050000000000000044.

    >>> alpha_of(0.95)
    0.05
    """
    return round(1.0 - check_confidence(confidence), 12)


# --------------------------------------------------------------------------- per stimulus


def holm(p_values: npt.ArrayLike) -> FloatArray:
    """Holm's step-down adjusted p-values (Holm 1979, Scand. J. Statist. 6:65-70).

    Sort ``p_(1) ≤ … ≤ p_(m)``; ``p̃_(i) = max_{j ≤ i} min(1, (m - j + 1) p_(j))``.
    Rejecting every hypothesis with ``p̃ ≤ α`` is exactly Holm's rule "reject while
    ``p_(i) ≤ α/(m - i + 1)``" and controls the family-wise error rate at α under
    any dependence between the tests. Works along the last axis (a batch of
    families at once).

    >>> holm([0.01, 0.04, 0.03, 0.005]).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim == 0:
        p = p.reshape(1)
    m = p.shape[-1]
    if m == 0:
        return np.empty(p.shape)
    order = np.argsort(p, axis=-1, kind="stable")
    ordered = np.take_along_axis(p, order, axis=-1)
    scaled = (m - np.arange(m)) * ordered
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled, axis=-1))
    adjusted = np.empty_like(adjusted_sorted)
    np.put_along_axis(adjusted, order, adjusted_sorted, axis=-1)
    return adjusted


def holm_rejects(p_values: npt.ArrayLike, alpha: float) -> npt.NDArray[np.bool_]:
    """``holm(p_values) <= alpha``, sorting only the p-values that can be rejected.

    A p-value above ``alpha`` is never rejected (its scaled value is at least itself),
    and every p-value ranked before a candidate is itself a candidate, so the candidates
    sorted are the head of the whole family's sorted order: the same ranks, the same
    products (m - j) p_(j), the same comparisons. An advice simulation decides 2 million
    stimuli-runs per step, most of them far from rejection; sorting them all was half
    of its time.

    >>> holm_rejects([0.01, 0.04, 0.03, 0.005], 0.05).tolist()
    [True, False, False, True]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim == 0:
        p = p.reshape(1)
    if alpha >= 1.0:
        # holm() caps at 1: every adjusted p-value is at most 1 ≤ alpha, NaN excepted.
        return np.asarray(~np.isnan(p))
    m = p.shape[-1]
    if m == 0:
        return np.zeros(p.shape, dtype=bool)
    rows = p.reshape(-1, m)
    row, column = np.nonzero(rows <= alpha)
    chosen = _holm_prefix(row, rows[row, column], rows.shape[0], m, alpha)
    rejected = np.zeros(rows.shape, dtype=bool)
    rejected[row[chosen], column[chosen]] = True
    return rejected.reshape(p.shape)


def _holm_prefix(
    row: npt.NDArray[np.intp], values: FloatArray, families: int, m: int, alpha: float
) -> npt.NDArray[np.bool_]:
    """Which of the candidates (p ≤ ``alpha``; ``row`` the family of each, in row-major
    order, as np.nonzero lists them) Holm rejects in families of ``m`` p-values."""
    # By row, then p-value; lexsort is stable, so ties keep holm()'s stable order.
    order = np.lexsort((values, row))
    row, values = row[order], values[order]
    starts = np.searchsorted(row, np.arange(families))
    rank = np.arange(row.size) - starts[row]
    above = (m - rank) * values > alpha
    # Rejected while no earlier (or this) candidate of its row was above its threshold.
    seen = np.cumsum(above)
    before_row = np.concatenate([[0], seen])[starts][row]
    chosen = np.zeros(row.size, dtype=bool)
    chosen[order] = seen == before_row
    return chosen


def benjamini_hochberg(p_values: npt.ArrayLike) -> FloatArray:
    """Benjamini-Hochberg adjusted p-values (q-values), for triage lists.

    ``q_(i) = min_{j ≥ i} min(1, m p_(j) / j)``; listing every stimulus with
    ``q ≤ α`` controls the false discovery rate at α (independent or positively
    dependent tests). Equal to ``scipy.stats.false_discovery_control(p)``. Not a
    build gate: use :func:`holm` to fail builds.

    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.005]).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return np.empty(0)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q_sorted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    q = np.empty(m)
    q[order] = q_sorted
    return q


@functools.lru_cache(maxsize=4096)
def fisher_worse(n_a: int, c_a: int, n_b: int, c_b: int) -> float:
    """One-sided Fisher exact p-value that run B passes this stimulus less often than run A.

    A is the baseline (``c_a`` of ``n_a`` trials passed), B the candidate. Given
    both runs' trial counts and the total passes ``T = c_a + c_b`` (the margins of
    the 2×2 table), A's passes ``X`` follow ``Hypergeometric(N = n_a + n_b, T, n_a)``
    when the pass probability is the same in both runs::

        p = P(X ≥ c_a) = Σ_{x ≥ c_a} C(T, x) C(N - T, n_a - x) / C(N, n_a)

    Summed in exact integers (one correctly rounded division) up to 2,000 trials,
    in logs above. The smallest attainable value is :func:`fisher_min`.
    Cached: suites repeat the same few (n, c) tables.

    >>> fisher_worse(5, 5, 5, 2)  # 21/252
    0.08333333333333333
    """
    total, passes = n_a + n_b, c_a + c_b
    if n_a == 0 or n_b == 0:
        return 1.0
    top = min(passes, n_a)
    if total <= _EXACT_FISHER_MAX:
        numerator = sum(
            math.comb(passes, x) * math.comb(total - passes, n_a - x) for x in range(c_a, top + 1)
        )
        return min(1.0, numerator / math.comb(total, n_a))

    # The terms are log-concave in x, peaked at the mode: they fall at least geometrically
    # away from it, by the ratio of the two nearest the tail summed, and within 40 standard
    # deviations of it. Summing only the terms within 40 such scales of the tail's start
    # (the terms beyond are below e^-40 of it, nothing to a float sum) keeps a table of
    # 10^9 trials a side to a few hundred thousand terms (all of them took 19 GB).
    def log_terms(x: FloatArray) -> FloatArray:
        return log_comb(passes, x) + log_comb(total - passes, n_a - x) - log_comb(total, n_a)

    mode = (passes + 1) * (n_a + 1) // (total + 2)
    spread = n_a * passes * (total - passes) * (total - n_a) / (total * total * (total - 1))
    if c_a > mode:  # P(X ≥ c_a), from c_a up
        return min(1.0, _tail_sum(log_terms, c_a, top, 1, math.sqrt(spread)))
    reach = int(40.0 * math.sqrt(spread)) + 50
    first, last = max(c_a, mode - reach), min(top, mode + reach)
    if last - first < _DIRECT_TERMS_MOST:
        return min(1.0, _every_term_sum(log_terms, first, last))
    lowest = max(0, n_a - (total - passes))
    if c_a <= lowest:
        return 1.0
    # 1 − P(X ≤ c_a − 1), from c_a − 1 down: the terms past the mode span about 40 standard
    # deviations, those below c_a often far fewer (a table of 10^9 trials a side 45 → 2 ms).
    return min(1.0, max(0.0, 1.0 - _tail_sum(log_terms, c_a - 1, lowest, -1, math.sqrt(spread))))


#: up to this many terms, a p-value from below the mode is the sum of its terms from c_a on
_DIRECT_TERMS_MOST = 15_000


def _tail_sum(
    log_terms: Callable[[FloatArray], FloatArray], start: int, end: int, way: int, scale: float
) -> float:
    """Σ exp(log_terms(x)) for x from ``start`` to ``end`` (``way`` = 1: up, −1: down) of
    log-concave terms whose largest is at or before ``start`` on that way: the terms within
    40 scales of ``start``, the scale being the smaller of ``scale`` (their standard
    deviation) and 1 / the fall of the log from the first term to the next."""
    if way * (end - start) > 0:
        fall = float(np.diff(log_terms(np.array([start, start + way], dtype=np.float64)))[0])
        if fall < 0:
            scale = min(scale, -1.0 / fall)
    stop = start + way * min(way * (end - start), int(40.0 * scale) + 50)
    first, last = min(start, stop), max(start, stop)
    if last - first < _FISHER_TERMS_MOST:
        return _every_term_sum(log_terms, first, last)
    return _strided_sum(log_terms, first, last, scale)


def _every_term_sum(log_terms: Callable[[FloatArray], FloatArray], first: int, last: int) -> float:
    """Σ exp(log_terms(x)) over the integers x in [first, last], scaled by the largest."""
    terms = log_terms(np.arange(first, last + 1, dtype=np.float64))
    peak = float(np.max(terms))
    return math.exp(peak) * float(np.sum(np.exp(terms - peak)))


#: past this many terms (a table of about 10^8 trials a side), :func:`fisher_worse` sums
#: every ``step``-th term instead of all of them (:func:`_strided_sum`)
_FISHER_TERMS_MOST = 1_000_000


def _strided_sum(
    log_terms: Callable[[FloatArray], FloatArray], first: int, last: int, scale: float
) -> float:
    """Σ exp(log_terms(x)) over the integers x in [first, last], for terms that vary on a
    ``scale`` of thousands or more: every ``step``-th term (step ≈ scale / 64), with the
    Euler–Maclaurin ends of the trapezoid rule,

        Σ f(x) = h Σ_j f(a + jh) − (h − 1)(f(a) + f(b))/2 + (1 − h²)(f'(b) − f'(a))/12 + …

    (b = a + Jh; the terms past b, fewer than h, summed one by one). The next term is of
    order (h/scale)^4 of the sum: a relative error near 10^-8, where summing the 40·scale
    terms of a table of 10^13 trials a side took 35 s and 2 GB, and of 2^53 more memory
    than the machine has."""
    step = max(1, int(scale / 64))
    count = (last - first) // step
    end = first + count * step
    x = first + step * np.arange(count + 1, dtype=np.float64)
    terms = log_terms(x)
    tail = log_terms(np.arange(end + 1, last + 1, dtype=np.float64))
    ends = log_terms(np.array([first, first + 1, end - 1, end], dtype=np.float64))
    peak = max(float(np.max(terms)), float(np.max(tail, initial=-np.inf)), float(np.max(ends)))
    f = np.exp(terms - peak)
    f_a, f_a1, f_b1, f_b = (float(v) for v in np.exp(ends - peak))
    slope_a, slope_b = f_a1 - f_a, f_b - f_b1
    total = (
        step * float(np.sum(f))
        - (step - 1) * (f_a + f_b) / 2
        + (1 - step * step) * (slope_b - slope_a) / 12
        + float(np.sum(np.exp(tail - peak)))
    )
    return math.exp(peak) * total


def _tables(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike
) -> tuple[npt.NDArray[np.int64], ...]:
    """(c_a, n_a - c_a, c_b, n_b - c_b) as int64 arrays of one broadcast shape."""
    na, ca, nb, cb = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.int64) for x in (n_a, c_a, n_b, c_b))
    )
    return ca, na - ca, cb, nb - cb


#: a batch of tables is computed once per distinct table when their packed counts span
#: at most this many keys (a lookup array of that size) and they repeat: a plan or an
#: advice at equal trial counts has a few thousand distinct tables among millions.
_DISTINCT_KEYS_MAX = 1 << 22
#: ... and when at least this many tables are in the batch.
_DISTINCT_FROM = 1 << 14


def _distinct_tables(
    *counts: npt.NDArray[np.int64],
) -> tuple[tuple[npt.NDArray[np.int64], ...], npt.NDArray[np.int64]] | None:
    """The distinct tables among ``counts`` (integer arrays of one shape: the same element
    of each is one table) and each table's index among them; None when there are few
    tables, their packed keys (each count less its least) span more than
    :data:`_DISTINCT_KEYS_MAX`, or they hardly repeat (computing each is then as cheap)."""
    flat = [np.asarray(x, dtype=np.int64).ravel() for x in counts]
    if flat[0].size < _DISTINCT_FROM:
        return None
    lows = [int(x.min()) for x in flat]
    spans = [int(x.max()) - low + 1 for x, low in zip(flat, lows, strict=True)]
    keys = math.prod(spans)
    if keys > _DISTINCT_KEYS_MAX:
        return None
    key = flat[0] - lows[0]
    for values, low, span in zip(flat[1:], lows[1:], spans[1:], strict=True):
        key = key * span + (values - low)
    present = np.flatnonzero(np.bincount(key, minlength=keys))
    if 4 * present.size > key.size:
        return None
    index = np.zeros(keys, dtype=np.int64)
    index[present] = np.arange(present.size)
    rest, unpacked = present, []
    for span in reversed(spans[1:]):
        unpacked.append(rest % span)
        rest = rest // span
    unpacked.append(rest)
    tables = tuple(values + low for values, low in zip(reversed(unpacked), lows, strict=True))
    return tables, index[key]


def _per_table(function: Callable[..., FloatArray], *counts: npt.NDArray[np.int64]) -> FloatArray:
    """``function(*counts)``, an element-wise function of tables, computed once per
    distinct table where tables repeat (:func:`_distinct_tables`)."""
    distinct = _distinct_tables(*counts)
    if distinct is None:
        return function(*counts)
    unique, inverse = distinct
    return np.asarray(function(*unique)[inverse].reshape(np.shape(counts[0])))


def _log_point(
    ca: npt.NDArray[np.int64],
    fa: npt.NDArray[np.int64],
    cb: npt.NDArray[np.int64],
    fb: npt.NDArray[np.int64],
) -> FloatArray:
    """log P(X = c_a) of Fisher's hypergeometric, from nine log-factorials::

    P(X = c_a) = T! (N - T)! n_a! n_b! / (N! c_a! c_b! (n_a - c_a)! (n_b - c_b)!)
    """
    value = log_factorial(ca + cb)
    value += log_factorial(fa + fb)
    value += log_factorial(ca + fa)
    value += log_factorial(cb + fb)
    value -= log_factorial(ca + fa + cb + fb)
    value -= log_factorial(ca)
    value -= log_factorial(cb)
    value -= log_factorial(fa)
    value -= log_factorial(fb)
    return value


def _log_error(*counts: npt.NDArray[np.int64]) -> float:
    """Relative error allowed for exp of :func:`_log_point` on these tables: 10⁻⁶, or
    10⁻¹³ log N! past N ≈ 10⁶ (nine log-factorials of at most log N! each: about
    50 ulp of log N!, i.e. 10⁻¹⁰ at 2,000 trials)."""
    # The sum of the largest counts is at least the largest N.
    largest = sum(int(x.max()) for x in counts) if counts[0].size else 0
    return max(_FISHER_BOUND_SLACK, 1e-13 * float(log_factorial(largest)))


def _lower_bound(
    ca: npt.NDArray[np.int64],
    fa: npt.NDArray[np.int64],
    cb: npt.NDArray[np.int64],
    fb: npt.NDArray[np.int64],
) -> FloatArray:
    error = _log_error(ca, fa, cb, fb)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore", under="ignore"):
        point = np.exp(_log_point(ca, fa, cb, fb))
        # P(X = c_a - 1) = P(X = c_a) c_a (n_b - c_b) / ((c_b + 1)(n_a - c_a + 1)), and r is
        # the same ratio one step further down: products of small integers.
        step_down = ca * fb / ((cb + 1.0) * (fa + 1.0))
        r = (ca - 1.0) * (fb - 1.0) / ((cb + 2.0) * (fa + 2.0))
        # Where X cannot be below c_a (c_a = 0, or n_b - c_b = 0; an empty run is one of
        # these), step_down is 0 and r < 1: the bound is exactly 1, as p is.
        below = point * step_down / (1.0 - r) * (1.0 + error)
        geometric = np.where(r < 1.0, 1.0 - below, 0.0)
    bound = np.maximum(point, geometric)
    bound *= 1.0 - error
    return bound


def fisher_worse_lower(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike
) -> FloatArray:
    """A lower bound of :func:`fisher_worse` for every table at once, from one
    hypergeometric probability per table (vectorised, nine log-factorial lookups).

    With X ~ Hypergeometric(N = n_a + n_b, T = c_a + c_b, n_a) and p = P(X ≥ c_a):

    - p ≥ P(X = c_a);
    - the distribution is log-concave, so r(x) = P(X = x − 1)/P(X = x) grows with x;
      where r = r(c_a − 1) is below 1, the lower tail is at most a geometric series,
      P(X ≤ c_a − 1) ≤ P(X = c_a − 1)/(1 − r), and p ≥ 1 − P(X = c_a − 1)/(1 − r)
      (= 1 where X cannot be below c_a).

    The larger of these, less a relative e = 10⁻⁶ (10⁻¹³ log N! past a million trials)
    for the rounding of the logs, which also widens P(X = c_a − 1) before it is
    subtracted from 1: so the value returned is a bound despite the rounding, however
    small (:func:`fisher_holm_rejects` compares it with levels near α/m).

    >>> fisher_worse_lower([5, 5], [5, 2], [5, 5], [0, 5]).round(6).tolist()
    [0.003968, 0.999999]
    """
    return _lower_bound(*_tables(n_a, c_a, n_b, c_b))


def fisher_worse_above(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike, alpha: float
) -> npt.NDArray[np.bool_]:
    """Where :func:`fisher_worse` is surely above ``alpha``: :func:`fisher_worse_lower`
    ``> alpha``; False where in doubt, so only the rest need the exact p-value.

    >>> fisher_worse_above([5, 5, 40], [5, 2, 20], [5, 5, 40], [2, 5, 30], 0.05).tolist()
    [True, True, True]
    >>> fisher_worse_above([5, 40], [5, 35], [5, 40], [0, 20], 0.05).tolist()
    [False, False]
    """
    return np.asarray(fisher_worse_lower(n_a, c_a, n_b, c_b) > alpha)


def _float_p(
    ca: npt.NDArray[np.int64],
    fa: npt.NDArray[np.int64],
    cb: npt.NDArray[np.int64],
    fb: npt.NDArray[np.int64],
) -> FloatArray:
    """fisher_worse_float on flat int64 arrays."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        log_point = _log_point(ca, fa, cb, fb)
        total = np.ones(ca.size)
        term = np.ones(ca.size)
        steps = np.minimum(cb, fa)  # X runs from c_a up to min(T, n_a) = c_a + steps
        active = np.flatnonzero(steps > 0)
        j = 0
        while active.size:
            down = (cb[active] - j) * (fa[active] - j)
            ratio = down / ((ca[active] + j + 1.0) * (fb[active] + j + 1.0))
            value = term[active] * ratio
            term[active] = value
            sums = total[active] + value
            total[active] = sums
            j += 1
            # Past a ratio of 1/2 the rest of the series is at most the last term.
            negligible = (ratio <= 0.5) & (value <= sums * 2.0**-60)
            active = active[(steps[active] > j) & ~negligible]
        p = np.exp(log_point) * total
    empty = (ca + fa == 0) | (cb + fb == 0)
    return np.where(empty, 1.0, np.where(np.isfinite(p), np.minimum(p, 1.0), np.nan))


def fisher_worse_float(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike
) -> FloatArray:
    """:func:`fisher_worse` in floating point, for every table at once.

    p = P(X ≥ c_a) = P(X = c_a) · Σ_{k ≥ 0} Π_{j < k} ρ_j, with P(X = c_a) from
    log-factorials and the terms by the hypergeometric's own recurrence::

        ρ_j = P(X = c_a + j + 1)/P(X = c_a + j)
            = (c_b − j)(n_a − c_a − j) / ((c_a + j + 1)(n_b − c_b + j + 1))

    (a product of small integers per step, no cancellation). The ρ_j fall with j
    (log-concavity), so once ρ ≤ 1/2 the rest of the sum is at most the last term; it
    stops when that is below 2⁻⁶⁰ of the sum. The relative error is then that of
    exp(log P(X = c_a)), nine log-factorials of at most log N! each: at most about
    10⁻¹⁰ at N = 2,000 (the tests find ≤ 10⁻¹² there), far inside the 10⁻⁸ that
    :func:`fisher_holm_rejects` allows. Where the sum overflows (c_a far below the
    mode, p ≈ 1): NaN, and the caller takes the exact value. Past 2,000 trials in all
    a table's value is :func:`fisher_worse`'s, which sums in logs over the terms within
    40 standard deviations of the mode: the recurrence would step through up to
    min(c_b, n_a − c_a) terms (17 s for one table of 10⁷ trials) and lose accuracy
    with the size of its first term's log-factorials.

    >>> round(float(fisher_worse_float(5, 5, 5, 2)), 12)  # 21/252
    0.083333333333
    """
    counts = _tables(n_a, c_a, n_b, c_b)
    return _float_or_log_p(*(x.ravel() for x in counts)).reshape(counts[0].shape)


def _float_or_log_p(
    ca: npt.NDArray[np.int64],
    fa: npt.NDArray[np.int64],
    cb: npt.NDArray[np.int64],
    fb: npt.NDArray[np.int64],
) -> FloatArray:
    """fisher_worse_float on flat tables: the float recurrence up to
    :data:`_EXACT_FISHER_MAX` trials in all (NaN where it overflows), fisher_worse's log
    sum past it."""
    large = ca + fa + cb + fb > _EXACT_FISHER_MAX
    p = np.empty(ca.shape)
    p[~large] = _float_p(ca[~large], fa[~large], cb[~large], fb[~large])
    p[large] = _fisher_each(ca[large], fa[large], cb[large], fb[large])
    return p


def fisher_worse_each(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike
) -> FloatArray:
    """:func:`fisher_worse` of every table, for a report: exact (integer sums, a few
    microseconds each) up to :data:`_EXACT_EACH_MAX` trials in all and past
    :data:`_EXACT_FISHER_MAX` (where it sums in logs); in between
    :func:`fisher_worse_float`, within 10⁻¹⁰ of it (exact where that overflows). The
    exact sum grows with the square of the trials: 10,000 stimuli of about 1,000 trials
    a side took a minute. Decisions on these p-values go through
    :func:`fisher_holm_rejects`, which is exact.

    >>> fisher_worse_each([5, 1_000], [5, 500], [5, 1_000], [2, 470]).round(6).tolist()
    [0.083333, 0.097223]
    """
    tables = _tables(n_a, c_a, n_b, c_b)
    ca, fa, cb, fb = (x.ravel() for x in tables)
    p, _ = _p_values(ca, fa, cb, fb, exact_up_to=_EXACT_EACH_MAX)
    return p.reshape(tables[0].shape)


def _p_values(
    ca: npt.NDArray[np.int64],
    fa: npt.NDArray[np.int64],
    cb: npt.NDArray[np.int64],
    fb: npt.NDArray[np.int64],
    exact_up_to: int,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """(Fisher p-values of flat tables, whether each is the exact one): the float form
    between ``exact_up_to`` and :data:`_EXACT_FISHER_MAX` trials in all, the exact test
    elsewhere and where the float form overflows. Past _EXACT_FISHER_MAX trials
    :func:`fisher_worse` sums in logs over the terms that matter, where the float
    recurrence would step through up to min(c_b, n_a − c_a) of them."""
    total = ca + fa + cb + fb
    p = np.full(total.shape, np.nan)
    above = total > exact_up_to
    p[above] = _float_or_log_p(ca[above], fa[above], cb[above], fb[above])
    missing = ~np.isfinite(p)
    p[missing] = _fisher_each(ca[missing], fa[missing], cb[missing], fb[missing])
    return p, missing | (total > _EXACT_FISHER_MAX)


def fisher_holm_rejects(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike, alpha: float
) -> npt.NDArray[np.bool_]:
    """``holm_rejects(fisher_worse(tables), alpha)`` along the last axis, the same
    answer, without a Python call per table.

    Three steps, each keeping Holm's answer exactly:

    1. Screen. A rejected p at 0-based rank r among its family's m satisfies
       (m − r) p ≤ α, and r < R = #{j : p_j ≤ p}; so every rejected p is at most
       t = α/(m − R + 1). Counting R with :func:`fisher_worse_lower` (L_j ≤ p_j) over
       the tables with L_j ≤ t bounds it from above; t starts at α and shrinks to a
       fixed point (a few passes). A table with L > t is not rejected, and setting its
       p to 1 changes no other decision: it sorts after every rejected p, and the first
       p not rejected is replaced by one at least as large at the same rank.
    2. Float p-values on the rest (:func:`fisher_worse_float`, relative error below
       10⁻¹⁰; the exact test past 2,000 trials, where it sums in logs itself), widened
       to [p (1 − 10⁻⁸), p (1 + 10⁻⁸)].
    3. Holm is monotone: lowering any p-values never un-rejects one (its sorted values
       fall, and the products (m − r) p_(r) with them). So Holm at the low ends rejects a
       superset of the exact answer and at the high ends a subset; where the two agree,
       that is the answer. The few families where they differ (a p within 10⁻⁸ of a
       Holm level) are decided on exact :func:`fisher_worse` values.

    An advice simulation decides millions of tables per step this way; the exact test,
    a Python call per table, took most of its time.

    >>> fisher_holm_rejects([[5, 5, 5]], [[5, 5, 3]], [[5, 5, 5]], [[0, 1, 3]], 0.05).tolist()
    [[True, True, False]]
    """
    counts = _tables(n_a, c_a, n_b, c_b)
    shape = counts[0].shape if counts[0].ndim else (1,)
    m = shape[-1]
    if m == 0 or alpha >= 1.0:
        return holm_rejects(np.zeros(shape), alpha)
    ca, fa, cb, fb = (x.reshape(-1, m) for x in counts)
    families = ca.shape[0]
    # Packed as (n, c) per run: at equal trial counts only the passes vary.
    lower = _per_table(
        lambda na, pa, nb, pb: _lower_bound(pa, na - pa, pb, nb - pb), ca + fa, ca, cb + fb, cb
    )
    # The bound on a rejected p, per family; the factor covers the rounding of (m - r) p.
    top = alpha * (1.0 + 1e-12)
    row, column = np.nonzero(lower <= top)
    bound = lower[row, column]
    for _ in range(_SCREEN_PASSES):
        level = top / (m - np.bincount(row, minlength=families) + 1)
        keep = bound <= level[row]
        if keep.all():
            break
        row, column, bound = row[keep], column[keep], bound[keep]
    d_ca, d_fa, d_cb, d_fb = (x[row, column] for x in (ca, fa, cb, fb))
    p, exact = _p_values(d_ca, d_fa, d_cb, d_fb, exact_up_to=0)
    slack = np.where(exact, 0.0, _FISHER_FLOAT_SLACK)
    # The tiny absolute term covers p-values below 1e-300, where exp underflows or loses
    # relative precision (Holm rejects those at any rank whatever their exact value).
    tiny = np.where(exact, 0.0, 1e-300)
    low = np.maximum(0.0, p * (1.0 - slack) - tiny)
    high = np.minimum(1.0, p * (1.0 + slack) + tiny)
    rejected_low = _holm_candidates(row, low, families, m, alpha)
    unsure = rejected_low != _holm_candidates(row, high, families, m, alpha)
    if unsure.any():
        redo = np.isin(row, row[unsure]) & ~exact
        low[redo] = _fisher_each(d_ca[redo], d_fa[redo], d_cb[redo], d_fb[redo])
        rejected_low = _holm_candidates(row, low, families, m, alpha)
    rejected = np.zeros(ca.shape, dtype=bool)
    rejected[row[rejected_low], column[rejected_low]] = True
    return rejected.reshape(shape)


def _holm_candidates(
    row: npt.NDArray[np.intp], values: FloatArray, families: int, m: int, alpha: float
) -> npt.NDArray[np.bool_]:
    """:func:`_holm_prefix` on entries of any value (those above ``alpha`` are not
    candidates: never rejected, and they rank after every candidate)."""
    chosen = np.zeros(row.size, dtype=bool)
    candidate = values <= alpha
    chosen[candidate] = _holm_prefix(row[candidate], values[candidate], families, m, alpha)
    return chosen


def _fisher_each(
    ca: npt.NDArray[np.int64],
    fa: npt.NDArray[np.int64],
    cb: npt.NDArray[np.int64],
    fb: npt.NDArray[np.int64],
) -> FloatArray:
    """:func:`fisher_worse` table by table (a Python call each)."""
    if ca.size == 0:
        return np.empty(0)
    each = np.vectorize(fisher_worse, otypes=[np.float64])
    return np.asarray(each(ca + fa, ca, cb + fb, cb), dtype=np.float64)


def fisher_min(n_a: int, n_b: int) -> float:
    """The smallest p-value :func:`fisher_worse` can reach at these trial counts.

    >>> fisher_min(3, 3)  # 1 / C(6, 3)
    0.05
    """
    total = n_a + n_b
    if total <= _EXACT_FISHER_MAX:
        # int / int: correctly rounded, down to a subnormal or 0.0 (C(1998, 999) ≈ 10^600
        # is past the float range, so 1.0 / C overflowed converting C).
        return 1 / math.comb(total, n_a)
    return math.exp(-(gammaln(total + 1) - gammaln(n_a + 1) - gammaln(n_b + 1)))


def _wilson(c: FloatArray, n: FloatArray, z: float) -> tuple[FloatArray, FloatArray]:
    p = c / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    lo = np.where(c == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    hi = np.where(c == n, 1.0, np.clip(centre + half, 0.0, 1.0))
    return lo, hi


def _wilson_rates(
    n: npt.ArrayLike, c: npt.ArrayLike, z: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(Wilson's lower and upper bounds, c/n) elementwise.

    Integer counts of many stimulus-runs but few distinct (n, c) (an advice simulation:
    two million of them, n at most a few hundred) are computed once per pair on the grid
    of all c ≤ n ≤ max(n) and looked up: the same operations on the same numbers, so the
    same values, at a third of the cost.
    """
    n_arr, c_arr = np.asarray(n), np.asarray(c)
    counts = np.issubdtype(n_arr.dtype, np.integer) and np.issubdtype(c_arr.dtype, np.integer)
    if counts and n_arr.shape == c_arr.shape and n_arr.size >= _GRID_MIN_SIZE:
        width = int(n_arr.max()) + 1
        fits = int(n_arr.min()) >= 1 and int(c_arr.min()) >= 0 and int(c_arr.max()) < width
        if fits and 4 * width * width <= n_arr.size:
            grid_n, grid_c = np.divmod(np.arange(width * width, dtype=np.float64), width)
            # Cells with c > n or n = 0 are never looked up.
            with np.errstate(invalid="ignore", divide="ignore"):
                lo, hi = _wilson(grid_c, grid_n, z)
                rate = grid_c / grid_n
            key = n_arr.astype(np.int64) * width + c_arr
            return lo[key], hi[key], rate[key]
    n_f, c_f = np.asarray(n, dtype=np.float64), np.asarray(c, dtype=np.float64)
    lo, hi = _wilson(c_f, n_f, z)
    return lo, hi, c_f / n_f


def difference_bounds(
    n_a: npt.ArrayLike,
    c_a: npt.ArrayLike,
    n_b: npt.ArrayLike,
    c_b: npt.ArrayLike,
    confidence: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """One-sided bounds (lower, upper) of ``p_B - p_A`` at ``confidence`` each.

    Newcombe's hybrid score interval ("method 10", Newcombe 1998, "Interval
    estimation for the difference between independent proportions", Stat. Med.
    17:873-890), built from the Wilson bounds ``l, u`` of each proportion at
    ``z = z_{confidence}`` (one-sided)::

        lower = d̂ - sqrt((p̂_B - l_B)² + (u_A - p̂_A)²)
        upper = d̂ + sqrt((u_B - p̂_B)² + (p̂_A - l_A)²)

    Each bound is then the wider of this one and Miettinen & Nurminen's score bound
    (:func:`gate.metrics.trial_noise.score_difference_bounds`): one stimulus whose rate
    truly drops by D = 0.25 passed the per-stimulus rule on Newcombe's bound alone with
    probability up to 9.2% (5 trials a side), 8.5% (10) and 7.2% (20), computed exactly
    over every table at its worst rate; with the wider of the two, 5.1%, 5.6% and 5.4%.
    The rule then holds these bounds to the exact unconditional test
    (:mod:`gate.metrics.exact_difference`), which brings that to at most 5%.

    Both 10/10: Wilson's one-sided lower bound is 10/(10 + z²) = 0.7871 at
    z = 1.6449, so Newcombe's bound rules out a drop larger than 21.3 points; the score
    bound, a drop larger than 22.2:

    >>> lo, hi = difference_bounds(10, 10, 10, 10, 0.95)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.2217, 0.2217)
    """
    level = check_confidence(confidence)
    z = normal_quantile(level)

    def newcombe(
        na: npt.ArrayLike, ca: npt.ArrayLike, nb: npt.ArrayLike, cb: npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray]:
        lower, upper = newcombe_bounds(na, ca, nb, cb, z)
        score_lower, score_upper = _score_bounds(na, ca, nb, cb, level)
        shape = np.shape(lower)
        lower = np.minimum(lower, score_lower.reshape(shape))
        upper = np.maximum(upper, score_upper.reshape(shape))
        return np.clip(lower, -1.0, 1.0), np.clip(upper, -1.0, 1.0)

    tables = np.broadcast_arrays(*(np.asarray(x) for x in (n_a, c_a, n_b, c_b)))
    integers = all(np.issubdtype(x.dtype, np.integer) for x in tables)
    distinct = _distinct_tables(*tables) if integers and tables[0].size else None
    if distinct is None:
        return newcombe(n_a, c_a, n_b, c_b)
    unique, index = distinct
    lower, upper = newcombe(*unique)
    shape = tables[0].shape
    return lower[index].reshape(shape), upper[index].reshape(shape)


def newcombe_bounds(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike, z: float
) -> tuple[FloatArray, FloatArray]:
    """Newcombe's hybrid score bounds of ``p_B - p_A`` at the one-sided quantile ``z``
    (:func:`difference_bounds` takes the wider of these and the score bounds), unclipped."""
    la, ua, pa = _wilson_rates(n_a, c_a, z)
    lb, ub, pb = _wilson_rates(n_b, c_b, z)
    d = pb - pa
    lower = d - np.sqrt((pb - lb) ** 2 + (ua - pa) ** 2)
    upper = d + np.sqrt((ub - pb) ** 2 + (pa - la) ** 2)
    return lower, upper


#: Score bounds already computed, per level: (sorted packed tables, lower, upper). An
#: advice simulates the same tables at each of a dozen sizes (half a million stimulus-runs
#: of 500 stimuli, each its own n: 25 s computed afresh each time, 2 s kept).
_SCORE_MEMO: dict[float, tuple[npt.NDArray[np.int64], FloatArray, FloatArray]] = {}
#: tables kept per level before the memo starts over (24 bytes each: at most 25 MB; that
#: advice meets 174,000 distinct tables)
_SCORE_MEMO_MAX = 1 << 20
#: bits per count in a packed table (four counts in an int64)
_SCORE_KEY_BITS = 15


def _score_bounds(
    n_a: npt.ArrayLike, c_a: npt.ArrayLike, n_b: npt.ArrayLike, c_b: npt.ArrayLike, level: float
) -> tuple[FloatArray, FloatArray]:
    """:func:`~gate.metrics.trial_noise.score_difference_bounds` of each table (flat), each
    distinct integer table computed once per process (:data:`_SCORE_MEMO`)."""
    tables = [np.asarray(x).ravel() for x in np.broadcast_arrays(n_a, c_a, n_b, c_b)]
    small = all(np.issubdtype(x.dtype, np.integer) for x in tables) and all(
        int(x.min(initial=0)) >= 0 and int(x.max(initial=0)) < 1 << _SCORE_KEY_BITS for x in tables
    )
    if not small:
        bounds = score_difference_bounds(tables[0], tables[1], tables[2], tables[3], level)
        return bounds.lower, bounds.upper
    key = np.zeros(tables[0].size, dtype=np.int64)
    for values in tables:
        key = (key << _SCORE_KEY_BITS) | values.astype(np.int64)
    wanted, inverse = np.unique(key, return_inverse=True)
    known, known_lower, known_upper = _SCORE_MEMO.get(
        level, (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
    )
    at = np.minimum(np.searchsorted(known, wanted), max(known.size - 1, 0))
    found = (known[at] == wanted) if known.size else np.zeros(wanted.size, dtype=bool)
    missing = wanted[~found]
    if missing.size:
        if known.size + missing.size > _SCORE_MEMO_MAX:  # start over, with this call's tables
            known, known_lower, known_upper = missing[:0], np.zeros(0), np.zeros(0)
            missing = wanted
        mask = (1 << _SCORE_KEY_BITS) - 1
        n_a_, c_a_, n_b_, c_b_ = ((missing >> (_SCORE_KEY_BITS * (3 - j))) & mask for j in range(4))
        fresh = score_difference_bounds(n_a_, c_a_, n_b_, c_b_, level)
        merged = np.concatenate([known, missing])
        order = np.argsort(merged, kind="stable")
        known = merged[order]
        known_lower = np.concatenate([known_lower, fresh.lower])[order]
        known_upper = np.concatenate([known_upper, fresh.upper])[order]
        _SCORE_MEMO[level] = (known, known_lower, known_upper)
        at = np.searchsorted(known, wanted)
    lower, upper = known_lower[at], known_upper[at]
    return lower[inverse.ravel()], upper[inverse.ravel()]


# --------------------------------------------------------------------------- paired test


class PairedTest(NamedTuple):
    """The suite-level paired test of ``d_i = candidate_i - baseline_i``.

    Attributes:
        method: ``"paired t"``, ``"exact sign-flip permutation"``,
            ``"Monte-Carlo sign-flip permutation"``, or ``"none"`` (no pairs).
        stimuli: M, the number of paired differences.
        delta: Δ = mean(d); ``None`` when M = 0.
        se: sd(d)/sqrt(M); ``None`` when M < 2.
        statistic: For the t test, ``t = Δ / SE``; ``None`` otherwise.
        df: Degrees of freedom of the t test (M - 1), else ``None``.
        patterns: Sign patterns used by the permutation test (2^M, or the
            Monte-Carlo count plus the observed one), else ``None``.
        seed: Seed of the Monte-Carlo patterns, else ``None``.
        requested: The ``method`` asked for: ``"auto"``, or ``"t"``/``"permutation"`` forced.
        zero_spread: Every d_i is equal (SE = 0): t is undefined there.
        margin: δ of H0: Δ ≥ -δ (``p_worse``).
        gain: ε of H0: Δ ≤ ε (``p_better``).
        p_worse: One-sided p-value of H0: Δ ≥ -margin against Δ < -margin.
        p_better: One-sided p-value of H0: Δ ≤ gain against Δ > gain.
        rejects_worse: ``p_worse ≤ α``, equivalently ``upper < -margin``.
        rejects_better: ``p_better ≤ α``, equivalently ``lower > gain``.
        interval: Two-sided ``confidence`` interval of Δ.
        upper: One-sided upper ``confidence`` bound of Δ.
        lower: One-sided lower ``confidence`` bound of Δ.
        confidence: The confidence level; α = 1 - confidence.
        noise_floor: The bounds (``"lower"``, ``"upper"``) that the trials' binomial
            noise widened (:mod:`gate.metrics.trial_noise`); empty when the
            differences' own test was the wider one, or no counts were given.
        skew_widened: The bounds (``"lower"``, ``"upper"``) of the paired t test that
            Hall's skewness correction widened (:mod:`gate.metrics.skew`); empty for the
            sign-flip test, or when plain t's bounds were the wider ones.

    ``p_worse ≤ α`` ⇔ ``upper < -margin`` and ``p_better ≤ α`` ⇔ ``lower > gain``
    (the bounds are the inversions of the same tests). Bounds are clipped to the
    range Δ can take (``[-1, 1]`` for values in [0, 1]); a bound at that limit
    means the data cannot bound Δ on that side (the permutation test with M ≤ 4
    at 95%).
    """

    method: TestName
    stimuli: int
    delta: float | None
    se: float | None
    statistic: float | None
    df: int | None
    patterns: int | None
    seed: int | None
    requested: Method
    zero_spread: bool
    margin: float
    gain: float
    p_worse: float
    p_better: float
    rejects_worse: bool
    rejects_better: bool
    interval: tuple[float, float]
    upper: float
    lower: float
    confidence: float
    noise_floor: tuple[str, ...] = ()
    skew_widened: tuple[str, ...] = ()

    @property
    def can_reject(self) -> bool:
        """Whether any outcome of this test could reject at its level (2^M ≥ 1/α)."""
        if self.method == "none":
            return False
        # patterns is an exact integer (2^M can exceed any float): compare without converting.
        return self.patterns is None or self.patterns >= 1.0 / alpha_of(self.confidence) - 1e-9


def _subset_sums(d: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Sum and size of every subset of ``d`` (2^M entries, the empty set first).

    A sign pattern is identified with the set F of stimuli whose sign is flipped;
    its statistic differs from the observed one by ``-2 Σ_F d_i``. Doubling the
    arrays once per stimulus costs O(2^M) time and memory (16 MB at M = 20).
    """
    total = 1 << d.size
    sums = np.zeros(total)
    sizes = np.zeros(total, dtype=np.int64)
    filled = 1
    for value in d:
        np.add(sums[:filled], value, out=sums[filled : 2 * filled])
        np.add(sizes[:filled], 1, out=sizes[filled : 2 * filled])
        filled *= 2
    return sums, sizes


def _random_flips(m: int, patterns: int, seed: int) -> npt.NDArray[np.bool_]:
    """``patterns`` random flip sets of ``m`` stimuli (rows), after an empty first row."""
    rng = np.random.default_rng(seed)
    flips = np.zeros((patterns + 1, m), dtype=bool)
    # Draw in blocks of about 4 million signs so memory stays bounded whatever M is.
    block = max(1, (1 << 22) // max(m, 1))
    for start in range(1, patterns + 1, block):
        stop = min(start + block, patterns + 1)
        flips[start:stop] = rng.random((stop - start, m)) < 0.5
    return flips


def _random_subsets(
    d: FloatArray, patterns: int, seed: int
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """The observed pattern (empty flip set) plus ``patterns`` random ones, fixed seed."""
    flips = _random_flips(d.size, patterns, seed)
    return flips.astype(np.float64) @ d, flips.sum(axis=1).astype(np.int64)


def _rank_cut(level: float, total: int) -> int:
    """Largest count of patterns at least as extreme that still rejects at ``level``."""
    # p = count / total ≤ level ⇔ count ≤ floor(level · total); the epsilon keeps a product
    # that is an integer in exact arithmetic but 0.9999999999999999 in floats at 1.
    return math.floor(level * total + 1e-9)


class _SignFlip(NamedTuple):
    p_worse: float
    p_better: float
    rejects_worse: bool
    rejects_better: bool
    interval: tuple[float, float]
    upper: float
    lower: float
    patterns: int
    exact: bool


def _equal_differences(
    value: float, m: int, *, alpha: float, margin: float, gain: float, limits: tuple[float, float]
) -> _SignFlip:
    """The exact sign-flip test when every d_i equals ``value``, for any M.

    A flip set of size j moves the statistic by ``-2 j value``, so with θ = -margin
    every pattern is at least as extreme when ``value ≥ θ`` (p = 1) and only the
    observed one otherwise (p = 2^-M); every non-empty subset mean is ``value``, so
    U = L = ``value`` whenever a single pattern can reject (``α · 2^M ≥ 1``).
    """

    def can_reject(level: float) -> bool:
        return m >= -math.log2(level) - 1e-9

    worse = value + margin < -_TIE
    better = value - gain > _TIE
    return _SignFlip(
        p_worse=2.0**-m if worse else 1.0,
        p_better=2.0**-m if better else 1.0,
        rejects_worse=worse and can_reject(alpha),
        rejects_better=better and can_reject(alpha),
        interval=(
            value if can_reject(alpha / 2.0) else limits[0],
            value if can_reject(alpha / 2.0) else limits[1],
        ),
        upper=value if can_reject(alpha) else limits[1],
        lower=value if can_reject(alpha) else limits[0],
        patterns=2**m,
        exact=True,
    )


def _permutation(
    d: FloatArray,
    *,
    alpha: float,
    margin: float,
    gain: float,
    limits: tuple[float, float],
    patterns: int,
    seed: int,
) -> _SignFlip:
    """Sign-flip test of Δ against -margin and +gain, and its bounds by test inversion.

    For a hypothesised Δ = θ, the flip set F is at least as extreme (as low) as
    the observed pattern when ``Σ_F (d_i - θ) ≥ 0``, i.e. ``mean_F(d) ≥ θ``; the empty
    set (the observed pattern) always is. So::

        p_worse(θ) = #{F : Σ_F (d_i - θ) ≥ 0} / #patterns

    is non-increasing in θ, and the one-sided upper bound ``U`` (the largest θ not
    rejected at α) is the (r+1)-th largest subset mean, ``r = floor(α · #patterns)``,
    with the empty set's mean taken as +∞. Rejecting H0: Δ ≥ -δ (p_worse(-δ) ≤ α) is
    then the same as ``U < -δ``. The lower bound mirrors this. Under H0 shifted by θ
    the test assumes d_i - θ symmetric around 0: exact for θ = 0 with equal trial
    counts (exchangeability), a location-shift assumption otherwise.
    """
    if float(np.ptp(d)) <= _TIE:
        return _equal_differences(
            float(np.mean(d)), d.size, alpha=alpha, margin=margin, gain=gain, limits=limits
        )
    exact = d.size <= ENUMERATE_MAX_STIMULI
    if exact:
        sums, sizes = _subset_sums(d)
    else:
        sums, sizes = _random_subsets(d, patterns, seed)
    total = int(sums.size)
    slack = _TIE * max(1.0, float(np.max(np.abs(d))) * d.size)
    as_low = int(np.count_nonzero(sums + sizes * margin >= -slack))
    as_high = int(np.count_nonzero(sums - sizes * gain <= slack))
    means = sums / np.maximum(sizes, 1)
    empty = sizes == 0
    cuts = sorted({_rank_cut(alpha, total), _rank_cut(alpha / 2.0, total)})
    # U is the (cut+1)-th largest subset mean (the empty set counting as +∞), L the
    # (cut+1)-th smallest (empty as -∞); a partial sort finds both in O(2^M).
    high = np.partition(np.where(empty, np.inf, means), [total - 1 - c for c in cuts])
    low = np.partition(np.where(empty, -np.inf, means), cuts)

    def upper_at(level: float) -> float:
        return min(float(high[total - 1 - _rank_cut(level, total)]), limits[1])

    def lower_at(level: float) -> float:
        return max(float(low[_rank_cut(level, total)]), limits[0])

    cut = _rank_cut(alpha, total)
    return _SignFlip(
        p_worse=as_low / total,
        p_better=as_high / total,
        rejects_worse=as_low <= cut,
        rejects_better=as_high <= cut,
        interval=(lower_at(alpha / 2.0), upper_at(alpha / 2.0)),
        upper=upper_at(alpha),
        lower=lower_at(alpha),
        patterns=total,
        exact=exact,
    )


def paired_test(
    differences: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    margin: float = 0.0,
    gain: float = 0.0,
    method: Method = "auto",
    seed: int = 0,
    patterns: int = MONTE_CARLO_PATTERNS,
    limits: tuple[float, float] = (-1.0, 1.0),
    counts: TrialCounts | None = None,
) -> PairedTest:
    """Test the mean of paired differences ``d_i = candidate_i - baseline_i``.

    ``method="auto"``: paired t when ``M ≥ 30`` and sd(d) > 0; otherwise the
    sign-flip permutation test, enumerating all 2^M sign patterns when ``M ≤ 20``
    and drawing ``patterns`` random ones (``seed``) above. ``"t"`` and
    ``"permutation"`` force a method (t still falls back to the permutation test
    when SE = 0 or M < 2, where t is undefined).

    Paired t (M - 1 degrees of freedom, ``t_q`` its quantile)::

        p_worse  = F_t((Δ + margin) / SE)        H0: Δ ≥ -margin
        p_better = F_t(-(Δ - gain) / SE)         H0: Δ ≤ gain
        upper    = Δ + t_{1-α} SE,   lower = Δ - t_{1-α} SE
        interval = Δ ± t_{1-α/2} SE

    and each bound widened, each p-value raised, to those of Hall's skewness-corrected t
    (:mod:`gate.metrics.skew`) where they are wider: skewed differences (rates near 0 or
    1, unequal trial counts) make plain t miss on one side. ``skew_widened`` names the
    bounds it widened.

    ``limits`` is the range Δ can take; bounds are clipped to it.

    ``counts`` (pass rates and pass^k: the per-stimulus pass counts the differences come
    from) adds, wherever the sign-flip test decides, the test of
    :mod:`gate.metrics.trial_noise`, whose variance is never below the trials' binomial
    noise: each bound is the wider of the two, each p-value the larger, and
    ``noise_floor`` names the bounds it widened. (The t test's sd already carries that
    noise; the sign flip takes each difference as exact.) Where every estimate is 0 or 1
    by design (one trial a side), the t test takes that floor too: its differences are
    too discrete for it (:mod:`gate.metrics.matched_pairs`).

    >>> r = paired_test([-0.4, -0.2, -0.6, -0.2, -0.4])
    >>> r.method, r.p_worse, r.upper
    ('exact sign-flip permutation', 0.03125, -0.2)
    """
    check_choice(method, "method", ("auto", "t", "permutation"))
    alpha = alpha_of(confidence)
    d = check_finite_values(differences, "differences").ravel()
    margin = float(margin)
    gain = float(gain)
    m = int(d.size)
    lo_limit, hi_limit = limits
    requested = method
    if m == 0:
        return PairedTest(
            "none", 0, None, None, None, None, None, None, requested, False, margin, gain,
            1.0, 1.0, False, False, (lo_limit, hi_limit), hi_limit, lo_limit, 1.0 - alpha,
        )  # fmt: skip
    delta = float(np.mean(d))
    se: float | None = float(np.std(d, ddof=1)) / math.sqrt(m) if m >= 2 else None
    # Equal rationals can differ by rounding (1e-16); t of such a spread is noise, not data.
    zero_spread = float(np.ptp(d)) <= _TIE
    use_t = (method == "t" or (method == "auto" and m >= T_MIN_STIMULI)) and not zero_spread
    if use_t and se is not None:
        t_test = _paired_t(d, requested, margin, gain, alpha, limits)
        # Differences of matched 0/1 outcomes (−1, 0 or +1 each) are too discrete for t.
        if counts is None or counts.matched_pairs is None:
            return t_test
        return _with_trial_noise(t_test, counts, limits)
    flip = _permutation(
        d, alpha=alpha, margin=margin, gain=gain, limits=limits, patterns=patterns, seed=seed
    )
    result = PairedTest(
        method="exact sign-flip permutation" if flip.exact else "Monte-Carlo sign-flip permutation",
        stimuli=m,
        delta=delta,
        se=se,
        statistic=None,
        df=None,
        patterns=flip.patterns,
        seed=None if flip.exact else seed,
        requested=requested,
        zero_spread=zero_spread,
        margin=margin,
        gain=gain,
        p_worse=flip.p_worse,
        p_better=flip.p_better,
        rejects_worse=flip.rejects_worse,
        rejects_better=flip.rejects_better,
        interval=flip.interval,
        upper=flip.upper,
        lower=flip.lower,
        confidence=1.0 - alpha,
    )
    # The t test's sd already carries the trials' noise (M ≥ 30); the sign flip reads each
    # difference as exact, which is where a few stimuli near 0 or 1 pass a real drop.
    if counts is None or m < 2:
        return result
    return _with_trial_noise(result, counts, limits)


def _paired_t(
    d: FloatArray,
    requested: Method,
    margin: float,
    gain: float,
    alpha: float,
    limits: tuple[float, float],
) -> PairedTest:
    """The paired t test, each bound the wider of plain t's and Hall's skewness-corrected
    t's (:mod:`gate.metrics.skew`), each p-value the larger."""
    m = int(d.size)
    delta = float(np.mean(d))
    se = float(np.std(d, ddof=1)) / math.sqrt(m)
    bounds = widened_t(d[None, :], 1.0 - alpha)
    lo_limit, hi_limit = limits

    def clip(x: FloatArray) -> float:
        return min(max(float(x[0]), lo_limit), hi_limit)

    lower, upper = clip(bounds.lower), clip(bounds.upper)
    p_worse = widened_t_p(d, -margin, "worse")
    p_better = widened_t_p(d, gain, "better")
    return PairedTest(
        method="paired t",
        stimuli=m,
        delta=delta,
        se=se,
        statistic=delta / se,
        df=m - 1,
        patterns=None,
        seed=None,
        requested=requested,
        zero_spread=False,
        margin=margin,
        gain=gain,
        p_worse=p_worse,
        p_better=p_better,
        rejects_worse=p_worse <= alpha,
        rejects_better=p_better <= alpha,
        interval=(clip(bounds.interval_lower), clip(bounds.interval_upper)),
        upper=upper,
        lower=lower,
        confidence=1.0 - alpha,
        skew_widened=_widened((clip(bounds.plain_lower), clip(bounds.plain_upper)), (lower, upper)),
    )


def _with_trial_noise(
    test: PairedTest, counts: TrialCounts, limits: tuple[float, float]
) -> PairedTest:
    """``test`` with each bound widened, and each p-value raised, to those of the test
    whose variance covers the trials' binomial noise (:mod:`gate.metrics.trial_noise`)."""
    alpha = alpha_of(test.confidence)
    one_sided = trial_noise_bounds(counts, test.confidence)
    two_sided = trial_noise_bounds(counts, 1.0 - alpha / 2.0)
    lower = max(min(test.lower, float(one_sided.lower[0])), limits[0])
    upper = min(max(test.upper, float(one_sided.upper[0])), limits[1])
    p_worse = max(test.p_worse, float(trial_noise_p_value(counts, -test.margin, "worse")[0]))
    p_better = max(test.p_better, float(trial_noise_p_value(counts, test.gain, "better")[0]))
    return test._replace(
        p_worse=p_worse,
        p_better=p_better,
        rejects_worse=test.rejects_worse and p_worse <= alpha,
        rejects_better=test.rejects_better and p_better <= alpha,
        interval=(
            max(min(test.interval[0], float(two_sided.lower[0])), limits[0]),
            min(max(test.interval[1], float(two_sided.upper[0])), limits[1]),
        ),
        upper=upper,
        lower=lower,
        noise_floor=_widened((test.lower, test.upper), (lower, upper)),
    )


def _widened(before: tuple[float, float], after: tuple[float, float]) -> tuple[str, ...]:
    """The sides (``"lower"``, ``"upper"``) whose bound moved from ``before`` to ``after``."""
    return tuple(
        side
        for side, old, new in zip(("lower", "upper"), before, after, strict=True)
        if abs(new - old) > _TIE
    )


def paired_bounds_batch(
    d: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    patterns: int = 2_000,
    seed: int = 0,
    limits: tuple[float, float] = (-1.0, 1.0),
    counts: TrialCounts | None = None,
) -> tuple[FloatArray, FloatArray]:
    """One-sided (lower, upper) ``confidence`` bounds of Δ for many runs at once.

    ``d`` has shape (R, M): R simulated runs of M paired differences each. The
    test is :func:`paired_test`'s automatic choice: paired t from
    :data:`T_MIN_STIMULI` stimuli on (and spread > 0; each bound the wider of plain and
    skewness-corrected t's), else sign-flip, all 2^M
    patterns when ``2^M ≤ patterns``, else ``patterns`` random ones (one set for
    every run, ``seed``). For simulation (advice, planning), not for the verdict
    itself: the verdict always uses :func:`paired_test` with its full pattern count.
    ``counts`` (the runs' pass counts, for pass rates and pass^k) widens the sign-flip runs'
    bounds as :func:`paired_test` does, and the t runs' where every estimate is 0 or 1.

    >>> lo, hi = paired_bounds_batch([[-0.4, -0.2, -0.6, -0.2, -0.4]])
    >>> float(hi[0])
    -0.2
    """
    alpha = alpha_of(confidence)
    diffs = np.atleast_2d(np.asarray(d, dtype=np.float64))
    runs, m = diffs.shape
    lo_limit, hi_limit = limits
    lower = np.full(runs, lo_limit)
    upper = np.full(runs, hi_limit)
    if m == 0:
        return lower, upper
    spread = np.ptp(diffs, axis=1)
    equal = spread <= _TIE
    if m >= 2 and m >= T_MIN_STIMULI:
        use = ~equal
        bounds = widened_t(diffs[use], 1.0 - alpha)
        lower[use] = np.clip(bounds.lower, lo_limit, hi_limit)
        upper[use] = np.clip(bounds.upper, lo_limit, hi_limit)
        if counts is not None and counts.matched_pairs is not None and use.any():
            noise = trial_noise_bounds(counts.select(use), 1.0 - alpha)
            lower[use] = np.maximum(np.minimum(lower[use], noise.lower), lo_limit)
            upper[use] = np.minimum(np.maximum(upper[use], noise.upper), hi_limit)
        rest = equal
    else:
        rest = np.ones(runs, dtype=bool)
    if not rest.any():
        return lower, upper
    if (1 << m) <= patterns:
        flips = ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1).astype(bool)
    else:
        flips = _random_flips(m, patterns, seed)
    sizes = flips.sum(axis=1)
    empty = sizes == 0
    total = flips.shape[0]
    cut = _rank_cut(alpha, total)
    chosen = diffs[rest]
    means = (chosen @ flips.T.astype(np.float64)) / np.maximum(sizes, 1)
    high = np.partition(np.where(empty, np.inf, means), total - 1 - cut, axis=1)
    low = np.partition(np.where(empty, -np.inf, means), cut, axis=1)
    upper[rest] = np.minimum(high[:, total - 1 - cut], hi_limit)
    lower[rest] = np.maximum(low[:, cut], lo_limit)
    if counts is not None and m >= 2:
        noise = trial_noise_bounds(counts.select(rest), 1.0 - alpha)
        lower[rest] = np.maximum(np.minimum(lower[rest], noise.lower), lo_limit)
        upper[rest] = np.minimum(np.maximum(upper[rest], noise.upper), hi_limit)
    return lower, upper


# --------------------------------------------------------------------------- power


def minimum_detectable_effect(
    variance: float, stimuli: int, *, confidence: float = 0.95, power: float = DEFAULT_POWER
) -> float:
    """Smallest true difference a one-sided level-α paired test detects with this power.

    Solving statistics.md §4's ``M = (z_{1-α} + z_{power})² Var(d) / δ²`` for δ::

        MDE = (z_{1-α} + z_{power}) · sqrt(Var(d) / M)

    with ``Var(d) = ω² + σ_A²/K_A + σ_B²/K_B`` (normal approximation; optimistic
    for the sign-flip test at few stimuli).

    >>> round(minimum_detectable_effect(0.05, 40), 4)  # (1.6449 + 0.8416)·sqrt(0.05/40)
    0.0879
    """
    alpha = alpha_of(confidence)
    check_int(stimuli, "stimuli", minimum=1)
    z = normal_quantile(1.0 - alpha) + normal_quantile(check_confidence(power))
    return z * math.sqrt(max(variance, 0.0) / stimuli)


def trials_needed(
    effect: float,
    stimuli: int,
    between: float,
    within_baseline: float,
    within_candidate: float,
    *,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> int | None:
    """Trials per stimulus (the same K on both sides) for ``MDE ≤ effect`` at M stimuli.

    From ``M δ² / (z_{1-α} + z_{power})² ≥ ω² + (σ_A² + σ_B²) / K``::

        K = ceil((σ_A² + σ_B²) / (M δ² / (z_{1-α} + z_{power})² - ω²))

    ``None`` when the between-stimulus term ω² alone exceeds the budget: more trials
    cannot help, only more stimuli can.

    >>> trials_needed(0.1, 50, 0.0, 0.2, 0.2)  # ceil(0.4 / (50 · 0.01 / 2.486²)) = ceil(4.94)
    5
    """
    alpha = alpha_of(confidence)
    if effect <= 0.0 or stimuli <= 0:
        return None
    z = normal_quantile(1.0 - alpha) + normal_quantile(check_confidence(power))
    room = stimuli * effect**2 / z**2 - max(between, 0.0)
    if room <= 0.0:
        return None
    within = max(within_baseline, 0.0) + max(within_candidate, 0.0)
    # The 1e-9 keeps an exact integer answer (computed as 23.000000000000004) at 23.
    return max(1, math.ceil(within / room - 1e-9))


def within_variance(n: npt.ArrayLike, c: npt.ArrayLike) -> tuple[float | None, float | None]:
    """(σ², mean over stimuli of σ_i²/n_i) from the unbiased ``c(n-c)/(n(n-1))`` per stimulus.

    σ² is the mean per-trial pass/fail variance over stimuli with n ≥ 2 (Miller
    2024); ``None`` when there are none.

    >>> within_variance([5, 5], [5, 3])
    (0.15, 0.03)
    """
    n_arr = np.asarray(n, dtype=np.float64).ravel()
    c_arr = np.asarray(c, dtype=np.float64).ravel()
    usable = n_arr >= 2
    if not usable.any():
        return None, None
    nn, cc = n_arr[usable], c_arr[usable]
    per_trial = cc * (nn - cc) / (nn * (nn - 1.0))
    return float(np.mean(per_trial)), float(np.mean(per_trial / nn))


def min_sign_flip_stimuli(confidence: float) -> int:
    """Fewest stimuli whose 2^M sign patterns can reach p ≤ α (5 at α = 0.05).

    >>> min_sign_flip_stimuli(0.95), min_sign_flip_stimuli(0.99)
    (5, 7)
    """
    return max(1, math.ceil(-math.log2(alpha_of(confidence)) - 1e-9))
