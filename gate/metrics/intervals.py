"""Confidence intervals for one pass rate, for pass@k / pass^k, and for suite means;
the one-sided p-values the rate intervals invert, and their exact coverage.

Default method: mid-p Clopper-Pearson with a coverage floor. Its exact coverage at
95% over p in [0.05, 0.95] has mean 98.5% / 97.7% / 96.6% / 95.9% / 95.3% at n = 3 /
5 / 10 / 20 / 50 and minimum 95.0% / 93.1% / 92.7% / 92.9% / 92.5%, where Wilson's
minimum falls to 82.8% (n = 3) and 89% (n = 5-10). Plain mid-p dips below 92% at
n = 6, 12, 13 and 14 (91.2% / 91.9% / 91.6% / 91.3%); there the weight on P(X = c) in
its tails is raised from 1/2 (:data:`MID_P_FLOOR_WEIGHTS`), which lifts the minimum to
95.0% / 93.2% / 92.7% / 92.1% with the mean at most 97.7%: see
:func:`interval_coverage`, ``bench/coverage.py`` and the table in ``docs/metrics.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, get_args

import numpy as np

from gate.metrics._binomial import point_probability, upper_tail, weighted_lower_bound
from gate.metrics._kernels import (
    FloatArray,
    IntArray,
    group_counts,
    normal_interval,
    posterior_score,
)
from gate.metrics._special import betainc_pair, betaincinv, normal_cdf, normal_quantile
from gate.metrics._validation import (
    check_choice,
    check_confidence,
    check_counts,
    check_float,
    check_int,
    check_k_against,
    check_prior,
    check_rate_grid,
    check_rates_like,
)

__all__ = [
    "Alternative",
    "CIResult",
    "Interval",
    "IntervalCoverage",
    "IntervalMethod",
    "SuiteMetric",
    "interval_coverage",
    "pass_at_k_interval",
    "pass_hat_k_interval",
    "rate_interval",
    "rate_p_value",
    "suite_interval",
    "suite_mean_interval",
    "z_value",
]

IntervalMethod = Literal["mid-p", "wilson", "jeffreys", "clopper-pearson", "beta", "wald"]
SuiteMetric = Literal["pass_rate", "pass_at_k", "pass_hat_k"]
Alternative = Literal["less", "greater"]
INTERVAL_METHODS: tuple[str, ...] = get_args(IntervalMethod)
SUITE_METRICS: tuple[str, ...] = get_args(SuiteMetric)
ALTERNATIVES: tuple[str, ...] = get_args(Alternative)
#: The product default (config, CLI, action, library): see the module docstring.
DEFAULT_METHOD: IntervalMethod = "mid-p"
#: Mid-p with a coverage floor: the weight w on P(X = c) in the tails
#: ``P(X > c) + w·P(X = c)`` (1/2 is mid-p, 1 Clopper-Pearson) at the whole n where
#: mid-p's exact 95% coverage falls below 92% somewhere in p = 0.05..0.95; 1/2 at every
#: other n. Each w is the smallest multiple of 0.001 whose exact coverage infimum
#: (taken at the interval ends, not on a grid) is >= 0.92, found by
#: ``bench/coverage.py --floor``, which scans n = 3..1000 (3..3000 with ``--max-n``):
#: no other n falls below.
#: Coverage rises with w, so the floor costs the least width that keeps it. The same
#: w is used at every confidence level (so the p-value is one function of c, n, p0
#: and the interval its inverse at every level); real-valued n (the suite interval
#: at n_eff) keeps w = 1/2.
MID_P_FLOOR_WEIGHTS: dict[int, float] = {6: 0.549, 12: 0.573, 13: 0.543, 14: 0.519}
#: The minimum exact coverage the weights keep at 95% (issue 11), over p in 0.05..0.95.
MID_P_COVERAGE_FLOOR = 0.92
#: How reports name the default per-stimulus method (the config name stays "mid-p").
MID_P_LABEL = "mid-p with a coverage floor"


class Interval(NamedTuple):
    """A two-sided interval: ``lo``/``hi`` are floats for scalar input, arrays otherwise.

    ``method`` names how it was computed (e.g. ``"wilson"``,
    ``"wilson, mapped through p^k"``, ``"wald (planning only)"``).
    """

    lo: float | FloatArray
    hi: float | FloatArray
    method: str
    confidence: float


class CIResult(NamedTuple):
    """Suite-level posterior summary, as scorio's ``*_ci`` return it: ``mu, sigma, lo, hi``.

    ``lo, hi = clip(mu ± z·sigma, bounds)``, a normal-approximation credible interval.
    """

    mu: float
    sigma: float
    lo: float
    hi: float


def ci_result(
    mu: float, sigma: float, confidence: Any, bounds: tuple[float, float] | None
) -> CIResult:
    """Assemble a :class:`CIResult` (inputs already checked except ``confidence``)."""
    lo, hi = normal_interval(mu, sigma, z_value(confidence), bounds)
    return CIResult(float(mu), float(sigma), float(lo), float(hi))


def z_value(confidence: float) -> float:
    """Two-sided standard-normal quantile: ``Phi^{-1}(1/2 + confidence/2)`` (1.96 at 0.95).

    >>> round(z_value(0.95), 4)
    1.96
    """
    return normal_quantile(0.5 + 0.5 * check_confidence(confidence))


def _as_result(values: FloatArray) -> float | FloatArray:
    return float(values) if values.ndim == 0 else values


def method_label(method: str, alpha0: float = 1.0, beta0: float = 1.0) -> str:
    """How a rate interval of ``method`` (a configuration name) is labelled in results.

    >>> method_label("mid-p"), method_label("wald"), method_label("beta", 2, 1)
    ('mid-p with a coverage floor', 'wald (planning only)', 'beta posterior (Beta(2, 1) prior)')
    """
    if method == "mid-p":
        return MID_P_LABEL
    if method == "wald":
        return "wald (planning only)"
    if method == "beta":
        if alpha0 == 1.0 and beta0 == 1.0:
            return "beta posterior (uniform prior)"
        return f"beta posterior (Beta({alpha0:g}, {beta0:g}) prior)"
    return method


def _rate_bounds(
    c: FloatArray,
    n: FloatArray,
    confidence: float,
    method: str,
    alpha0: float,
    beta0: float,
    *,
    coverage_floor: bool = True,
) -> tuple[FloatArray, FloatArray]:
    """Bounds of the two-sided ``method`` interval; ``c``, ``n`` broadcast (any shape).

    ``c`` and ``n`` may be real (the suite interval's c = estimate·n_eff); the result
    has their broadcast shape for every method. Inputs are trusted. ``coverage_floor``
    (mid-p only): use :data:`MID_P_FLOOR_WEIGHTS` at the n it lists; the suite interval
    turns it off, as its n_eff is a real number.
    """
    c, n = np.broadcast_arrays(np.asarray(c, dtype=np.float64), np.asarray(n, dtype=np.float64))
    tail = 0.5 * (1.0 - confidence)
    if method == "mid-p":
        return _mid_p_bounds(c, n, tail, coverage_floor)
    if method in ("wilson", "wald"):
        z = normal_quantile(1.0 - tail)
        p = c / n
        if method == "wald":
            half = z * np.sqrt(p * (1.0 - p) / n)
            return np.clip(p - half, 0.0, 1.0), np.clip(p + half, 0.0, 1.0)
        z2 = z * z
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
        # At c = 0 (c = n) the bound is exactly 0 (1); pin it against rounding.
        lo = np.where(c == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        hi = np.where(c == n, 1.0, np.clip(centre + half, 0.0, 1.0))
        return lo, hi
    if method == "jeffreys":
        a, b = c + 0.5, n - c + 0.5
        lo = np.where(c == 0, 0.0, betaincinv(a, b, tail))
        hi = np.where(c == n, 1.0, betaincinv(a, b, 1.0 - tail))
        return lo, hi
    if method == "clopper-pearson":
        # Beta(0, ·) and Beta(·, 0) are degenerate; substitute 1 and overwrite.
        lo = np.where(c == 0, 0.0, betaincinv(np.where(c == 0, 1.0, c), n - c + 1.0, tail))
        hi = np.where(c == n, 1.0, betaincinv(c + 1.0, np.where(c == n, 1.0, n - c), 1.0 - tail))
        return lo, hi
    a, b = c + alpha0, n - c + beta0
    return betaincinv(a, b, tail), betaincinv(a, b, 1.0 - tail)


def mid_p_weight(n: FloatArray) -> FloatArray:
    """The weight on ``P(X = c)`` of the default method at each n (:data:`MID_P_FLOOR_WEIGHTS`).

    >>> mid_p_weight(np.array([5.0, 6.0])).tolist()
    [0.5, 0.549]
    """
    weight = np.full(np.shape(n), 0.5)
    for trials, raised in MID_P_FLOOR_WEIGHTS.items():
        weight[n == trials] = raised
    return weight


def _mid_p_bounds(
    c: FloatArray, n: FloatArray, tail: float, coverage_floor: bool
) -> tuple[FloatArray, FloatArray]:
    """Mid-p bounds, solved once per distinct (c, n): a suite repeats a handful of pairs.

    The upper bound is the lower bound of the failures: U(c, n) = 1 - L(n - c, n), with
    the same weight (it depends on n only).
    """
    keys, inverse = np.unique(c.ravel() + 1j * n.ravel(), return_inverse=True)
    distinct_c, distinct_n = keys.real, keys.imag
    weight = mid_p_weight(distinct_n) if coverage_floor else np.full(keys.size, 0.5)
    lower = weighted_lower_bound(
        np.concatenate([distinct_c, distinct_n - distinct_c]),
        np.concatenate([distinct_n, distinct_n]),
        tail,
        np.concatenate([weight, weight]),
    )
    lo = lower[: keys.size][inverse].reshape(c.shape)
    hi = (1.0 - lower[keys.size :])[inverse].reshape(c.shape)
    return lo, hi


def rate_interval(
    c: Any,
    n: Any,
    confidence: float = 0.95,
    method: IntervalMethod = DEFAULT_METHOD,
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> Interval:
    """Two-sided interval for a pass rate p from c passes in n trials.

    Methods (Brown, Cai & DasGupta 2001; statistics.md §1), a = 1 - confidence,
    z = Phi^{-1}(1 - a/2), X ~ Bin(n, p):

    - ``"mid-p"`` (default; labelled ``"mid-p with a coverage floor"``): mid-p
      Clopper-Pearson (Lancaster 1961; Agresti & Gottard 2007). The lower bound L
      solves ``P(X > c | L) + w·P(X = c | L) = a/2`` (L = 0 at c = 0), the upper U
      ``P(X < c | U) + w·P(X = c | U) = a/2`` (U = 1 at c = n), with w = 1/2: the
      exact test with half the probability of the observed count. At n = 6, 12, 13
      and 14, where that lets the exact 95% coverage fall to 91.2-91.9% somewhere in
      p = 0.05-0.95, w is raised to 0.549, 0.573, 0.543 and 0.519
      (:data:`MID_P_FLOOR_WEIGHTS`: the least that keeps it >= 92%; w = 1 would be
      Clopper-Pearson). Exact coverage at 95% over p in [0.05, 0.95]: minimum >= 92%
      at every n from 5 to 1000 (92.5-95% at n = 3, 5, 10, 20, 50), mean 95.3-98.5%
      (``docs/metrics.md``), where Wilson's falls to 83% at n = 3.
    - ``"wilson"``: centre ``(p̂ + z²/2n)/(1 + z²/n)``, half-width
      ``z·sqrt(p̂(1-p̂)/n + z²/4n²)/(1 + z²/n)``.
    - ``"jeffreys"``: quantiles a/2, 1-a/2 of Beta(c+½, n-c+½); lower = 0 at
      c = 0, upper = 1 at c = n.
    - ``"clopper-pearson"``: ``[Beta_{a/2}(c, n-c+1), Beta_{1-a/2}(c+1, n-c)]``
      (conservative: coverage ≥ nominal).
    - ``"beta"``: equal-tailed posterior interval of Beta(c+alpha0, n-c+beta0),
      uniform prior by default; it excludes 0 at c = 0 (it brackets the
      posterior mean, not c/n).
    - ``"wald"``: ``p̂ ± z·sqrt(p̂(1-p̂)/n)``; zero width at c = 0 or n. For run
      planning only, never for a gate decision; labelled ``"wald (planning only)"``.

    Vectorised over c and n of any shape (ragged n allowed). Each interval is the
    set of p0 that :func:`rate_p_value` with the same method does not reject at
    a/2 on either side.

    >>> iv = rate_interval(4, 5)
    >>> round(iv.lo, 4), round(iv.hi, 4), iv.method
    (0.3344, 0.99, 'mid-p with a coverage floor')
    >>> iv = rate_interval(4, 5, method="wilson")
    >>> round(iv.lo, 4), round(iv.hi, 4)
    (0.3755, 0.9638)
    >>> rate_interval(0, 10, method="jeffreys").lo
    0.0
    >>> rate_interval(3, 3, method="wald").method
    'wald (planning only)'
    """
    method_name = check_choice(method, "interval method", INTERVAL_METHODS)
    level = check_confidence(confidence)
    prior_a, prior_b = check_prior(alpha0, beta0)
    n_arr, c_arr = check_counts(n, c)
    lo, hi = _rate_bounds(
        c_arr.astype(np.float64), n_arr.astype(np.float64), level, method_name, prior_a, prior_b
    )
    return Interval(
        _as_result(np.asarray(lo, dtype=np.float64)),
        _as_result(np.asarray(hi, dtype=np.float64)),
        method_label(method_name, prior_a, prior_b),
        level,
    )


def pass_at_k_interval(
    c: Any,
    n: Any,
    k: Any,
    confidence: float = 0.95,
    method: IntervalMethod = DEFAULT_METHOD,
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> Interval:
    """Interval for one stimulus's latent pass@k = 1 - (1-p)^k.

    pass@k is increasing in p, so the rate interval's endpoints map through:
    ``[1-(1-L)^k, 1-(1-U)^k]`` (statistics.md §2). It brackets the plug-in
    ``1-(1-c/n)^k``; the unbiased finite-sample estimate (e.g. 1.0 for 4/5 at
    k = 5) can sit above it. ``k`` may exceed ``n`` (the target is latent).

    >>> iv = pass_at_k_interval(4, 5, 2)
    >>> round(iv.lo, 4), round(iv.hi, 4), iv.method
    (0.557, 0.9999, 'mid-p with a coverage floor, mapped through 1-(1-p)^k')
    """
    k_int = check_int(k, "k", minimum=1)
    rate = rate_interval(c, n, confidence, method, alpha0=alpha0, beta0=beta0)
    with np.errstate(divide="ignore"):  # an endpoint at 1 maps to exactly 1
        lo = 0.0 - np.expm1(k_int * np.log1p(-np.asarray(rate.lo)))
        hi = 0.0 - np.expm1(k_int * np.log1p(-np.asarray(rate.hi)))
    return Interval(
        _as_result(lo), _as_result(hi), f"{rate.method}, mapped through 1-(1-p)^k", rate.confidence
    )


def pass_hat_k_interval(
    c: Any,
    n: Any,
    k: Any,
    confidence: float = 0.95,
    method: IntervalMethod = DEFAULT_METHOD,
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> Interval:
    """Interval for one stimulus's latent pass^k = p^k: ``[L^k, U^k]``.

    p^k is increasing in p, so the rate interval's endpoints map through
    (statistics.md §2). ``k`` may exceed ``n`` (the target is latent).

    >>> iv = pass_hat_k_interval(4, 5, 5)
    >>> round(iv.lo, 4), round(iv.hi, 4), iv.method
    (0.0042, 0.951, 'mid-p with a coverage floor, mapped through p^k')
    """
    k_int = check_int(k, "k", minimum=1)
    rate = rate_interval(c, n, confidence, method, alpha0=alpha0, beta0=beta0)
    lo = np.asarray(rate.lo) ** k_int
    hi = np.asarray(rate.hi) ** k_int
    return Interval(
        _as_result(lo), _as_result(hi), f"{rate.method}, mapped through p^k", rate.confidence
    )


def posterior_metric_moments(
    n: IntArray, c: IntArray, k: int, metric: str, alpha0: float, beta0: float
) -> tuple[float, float]:
    """Suite mean and sd of the mean over stimuli of g(p_i) under Beta posteriors.

    Inputs must already be checked. With ``a = alpha0 + c``, ``b = beta0 + n - c``:
    E[p^j] = B(a+j, b)/B(a, b) and E[(1-p)^j] = B(a, b+j)/B(a, b).
    """
    groups = group_counts(n, c)
    a = alpha0 + groups.c.astype(np.float64)
    b = beta0 + (groups.n - groups.c).astype(np.float64)
    degree = 1 if metric == "pass_rate" else k
    # g as a count score over a size-k subset: pass@k scores j >= 1, pass^k only j = k.
    values = np.zeros(degree + 1)
    if metric == "pass_hat_k":
        values[-1] = 1.0
    else:
        values[1:] = 1.0
    mean, var = posterior_score(a, b, values)
    count = int(groups.frequency.sum())
    weights = groups.frequency.astype(np.float64)
    mu = float(np.dot(weights, mean) / count)
    sigma = float(np.sqrt(float(np.dot(weights, np.maximum(var, 0.0))))) / count
    return mu, sigma


def suite_mean_interval(
    c: Any,
    n: Any,
    k: Any,
    metric: SuiteMetric,
    confidence: float = 0.95,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> tuple[float, float, Interval]:
    """Suite-level estimate and interval for the mean over stimuli of g(p_i).

    g is p (``"pass_rate"``, k ignored), 1-(1-p)^k (``"pass_at_k"``) or p^k
    (``"pass_hat_k"``). Each stimulus gets the posterior
    Beta(alpha0 + c_i, beta0 + n_i - c_i) (Hariri et al. 2026, as in scorio's
    ``*_ci``)::

        mu    = (1/M) sum_i E[g(p_i)]
        sigma = (1/M) sqrt(sum_i Var[g(p_i)])
        [lo, hi] = clip(mu ± z·sigma, 0, 1)

    Ragged ``n`` is allowed; ``k`` must not exceed any stimulus's ``n``.
    Never computes ``(mean p)^k`` (statistics.md §2).

    >>> mu, sigma, iv = suite_mean_interval([3, 4], [5, 5], 2, "pass_hat_k")
    >>> round(mu, 6), round(sigma, 6), round(iv.lo, 4), round(iv.hi, 4)
    (0.446429, 0.146167, 0.1599, 0.7329)
    >>> iv.method
    'beta posterior (uniform prior), normal approx.'
    """
    check_choice(metric, "metric", SUITE_METRICS)
    level = check_confidence(confidence)
    prior_a, prior_b = check_prior(alpha0, beta0)
    n_arr, c_arr = check_counts(n, c)
    k_int = check_k_against(k, n_arr) if metric != "pass_rate" else 1
    mu, sigma = posterior_metric_moments(n_arr, c_arr, k_int, metric, prior_a, prior_b)
    lo, hi = normal_interval(mu, sigma, z_value(level), (0.0, 1.0))
    prior = (
        "uniform prior"
        if prior_a == 1.0 and prior_b == 1.0
        else f"Beta({prior_a:g}, {prior_b:g}) prior"
    )
    return mu, sigma, Interval(lo, hi, f"beta posterior ({prior}), normal approx.", level)


def suite_interval(
    estimate: float,
    n: Any,
    k: Any = 1,
    confidence: float = 0.95,
    method: IntervalMethod = DEFAULT_METHOD,
) -> Interval:
    """Interval for a suite value: the mean over M stimuli of unbiased per-stimulus estimates.

    Each per-stimulus estimator of pass rate (k = 1), pass@k or pass^k is a
    U-statistic of degree k over the stimulus's n_i trials with a kernel in
    {0, 1}, so its variance is at most (k/n_i)·θ_i(1-θ_i) (Hoeffding 1948,
    "A class of statistics with asymptotically normal distribution", Var U ≤
    (k/n)·Var h). For the mean over M stimuli, by the concavity of θ(1-θ)::

        Var(mean) ≤ θ̄(1-θ̄) / n_eff,    n_eff = M · min_i(n_i) / k

    i.e. never more variable than one binomial proportion over n_eff trials, so
    the one-rate ``method`` at (c, n) = (estimate·n_eff, n_eff) is honest, and
    conservative when stimuli differ (c and n_eff may be fractional: every method
    is defined for real c, n). With k = 1 and equal n this is the pooled M·n trials.
    Seeded simulations of the default (mid-p) hold ≥ 90% coverage of the suite value
    on every profile of ``bench/suite_coverage.py``. The suite interval is plain mid-p
    (w = 1/2) at every n_eff, a real number: the per-stimulus coverage floor
    (:data:`MID_P_FLOOR_WEIGHTS`) is for whole trial counts.

    The interval always contains an estimate of exactly 0 or 1: ``lo = 0`` when the
    estimate is 0 and ``hi = 1`` when it is 1. Every method but ``"beta"`` does so by
    itself; the Beta posterior's equal-tailed interval brackets the posterior mean
    (an all-pass suite would get an interval that excludes 1), so its end at the
    observed boundary is pinned, as Jeffreys' is.

    >>> iv = suite_interval(0.4, [3, 3, 3, 3, 3], k=3)   # reference 002's pass^3
    >>> round(iv.lo, 4), round(iv.hi, 4)
    (0.0735, 0.8176)
    >>> iv.method
    'mid-p at the suite estimate, n_eff = M·min(nᵢ)/k = 5'
    >>> suite_interval(1.0, [5] * 10, method="beta").hi
    1.0
    """
    (interval,) = suite_intervals([estimate], [n], k, confidence, method)
    return interval


def suite_intervals(
    estimates: Sequence[float],
    n: Sequence[Any],
    k: Any = 1,
    confidence: float = 0.95,
    method: IntervalMethod = DEFAULT_METHOD,
) -> list[Interval]:
    """:func:`suite_interval` of many suites (``estimates[i]`` over trial counts ``n[i]``),
    the bounds solved together: a file of thousands of suites solves them in one call.

    >>> [round(iv.hi, 4) for iv in suite_intervals([0.4, 1.0], [[3] * 5, [4, 6]], k=3)]
    [0.8176, 1.0]
    """
    method_name = check_choice(method, "interval method", INTERVAL_METHODS)
    level = check_confidence(confidence)
    values, sizes, ks = [], [], []
    for estimate, counts in zip(estimates, n, strict=True):
        n_arr, _ = check_counts(counts, counts)
        k_int = check_k_against(k, n_arr)
        values.append(check_float(estimate, "estimate", low=0.0, high=1.0))
        sizes.append(n_arr.size * float(np.min(n_arr)) / k_int)
        ks.append(k_int)
    lo, hi = suite_bounds(np.array(values), np.array(sizes), level, method_name)
    return [
        Interval(a, b, suite_interval_label(method_name, size, k_int), level)
        for a, b, size, k_int in zip(lo.tolist(), hi.tolist(), sizes, ks, strict=True)
    ]


def suite_interval_label(method: str, n_eff: float, k: int) -> str:
    """How a suite interval was computed, for its ``method`` field. The ``/k`` is written
    only where k divides: a pass rate's n_eff, shown as ``M·min(nᵢ)/k = 15`` beside a
    report's k = 3, read as a wrong sum.

    >>> suite_interval_label("mid-p", 15, 1), suite_interval_label("mid-p", 5, 3)
    ('mid-p at the suite estimate, n_eff = M·min(nᵢ) = 15', \
'mid-p at the suite estimate, n_eff = M·min(nᵢ)/k = 5')
    >>> suite_interval_label("wilson", 1e6, 1), suite_interval_label("wilson", 4 / 3, 3)
    ('wilson at the suite estimate, n_eff = M·min(nᵢ) = 1,000,000', \
'wilson at the suite estimate, n_eff = M·min(nᵢ)/k = 1.333')
    """
    formula = "M·min(nᵢ)" if k == 1 else "M·min(nᵢ)/k"
    # Never in scientific notation (a million trials read as "1e+06" in a report).
    whole = n_eff >= 1000 or float(n_eff).is_integer()
    size = f"{n_eff:,.0f}" if whole else f"{n_eff:.4g}"
    return f"{method} at the suite estimate, n_eff = {formula} = {size}"


def suite_bounds(
    estimate: FloatArray, n_eff: float | FloatArray, confidence: float, method: str
) -> tuple[FloatArray, FloatArray]:
    """:func:`suite_interval`'s bounds for an array of suite estimates (trusted inputs).

    The one-rate ``method`` at c = estimate·n_eff, n = n_eff, with lo = 0 at an
    estimate of 0 and hi = 1 at 1; any shape (simulations pass one estimate per
    replicate).
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    size = np.asarray(n_eff, dtype=np.float64)
    lo, hi = _rate_bounds(
        estimate * size, size, confidence, method, 1.0, 1.0, coverage_floor=False
    )
    return np.where(estimate == 0.0, 0.0, lo), np.where(estimate == 1.0, 1.0, hi)


def _rate_p_value_greater(
    c: FloatArray, n: FloatArray, p0: FloatArray, method: str, alpha0: float, beta0: float
) -> FloatArray:
    """One-sided p-value against H0: p <= p0 (evidence that p > p0); arrays broadcast."""
    if method == "mid-p":
        return upper_tail(c, n, p0, weight=mid_p_weight(n))
    if method == "clopper-pearson":
        return upper_tail(c, n, p0, weight=1.0)
    if method in ("wilson", "wald"):
        observed = c / n
        spread = p0 * (1.0 - p0) if method == "wilson" else observed * (1.0 - observed)
        difference = observed - p0
        with np.errstate(divide="ignore", invalid="ignore"):
            score = difference / np.sqrt(spread / n)
        # A zero spread (p0 or the observed rate at 0 or 1): the statistic is ±inf,
        # or 0 when the observed rate equals p0.
        score = np.where(spread > 0.0, score, np.copysign(np.inf, difference))
        score = np.where(difference == 0.0, 0.0, score)
        return normal_cdf(-score)
    prior_a, prior_b = (0.5, 0.5) if method == "jeffreys" else (alpha0, beta0)
    below, _ = betainc_pair(c + prior_a, n - c + prior_b, p0)  # posterior P(p <= p0)
    if method == "jeffreys":
        below = np.where(c == 0, 1.0, below)  # as the interval's lower end is pinned to 0
    result: FloatArray = np.asarray(below, dtype=np.float64)
    return result


def _rate_p_value(
    c: FloatArray,
    n: FloatArray,
    p0: FloatArray,
    method: str,
    alternative: str,
    alpha0: float,
    beta0: float,
) -> FloatArray:
    """:func:`rate_p_value` on trusted float arrays (any broadcastable shapes)."""
    c, n, p0 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (c, n, p0)))
    if alternative == "greater":
        return _rate_p_value_greater(c, n, p0, method, alpha0, beta0)
    # Evidence that p < p0 is evidence that the failure rate 1 - p exceeds 1 - p0.
    return _rate_p_value_greater(n - c, n, 1.0 - p0, method, beta0, alpha0)


def rate_p_value(
    c: Any,
    n: Any,
    p0: Any,
    method: IntervalMethod = DEFAULT_METHOD,
    alternative: Alternative = "less",
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> float | FloatArray:
    """One-sided p-value for a pass rate against p0: the test each interval method inverts.

    ``alternative="less"`` measures the evidence that p < p0 (small when c/n is well
    below p0), ``"greater"`` that p > p0. For every method and confidence level,
    with a = 1 - confidence and [L, U] = ``rate_interval(c, n, confidence, method)``::

        U < p0  <=>  rate_p_value(c, n, p0, method, "less")    < a/2
        L > p0  <=>  rate_p_value(c, n, p0, method, "greater") < a/2

    (``<=`` on both sides when the bound equals p0), so a per-stimulus gate that
    decides on the interval and one that decides on these p-values (e.g. with Holm's
    step-down) agree at a single stimulus. With X ~ Bin(n, p0):

    - ``"mid-p"``: ``P(X < c) + w·P(X = c)`` (less), ``P(X > c) + w·P(X = c)``
      (greater): the exact tail with a weight w = 1/2 on the probability of the
      observed count, raised at n = 6, 12, 13 and 14 as in :func:`rate_interval`.
    - ``"clopper-pearson"``: ``P(X <= c)`` and ``P(X >= c)``, the exact binomial test.
    - ``"wilson"``: the score test, ``Phi(±(p̂ - p0)/sqrt(p0(1-p0)/n))``.
    - ``"wald"``: ``Phi(±(p̂ - p0)/sqrt(p̂(1-p̂)/n))`` (planning only, like its interval).
    - ``"jeffreys"`` and ``"beta"``: the posterior probability of the null side,
      ``P(p >= p0 | data)`` (less) and ``P(p <= p0 | data)`` (greater) under
      Beta(c + ½, n - c + ½) or Beta(c + alpha0, n - c + beta0). Jeffreys pins it to 1
      at c = n (less) and c = 0 (greater), as its interval pins U = 1 and L = 0.

    A small value says the data would be unusual if p were on the other side of p0
    (or, for the posterior methods, that little posterior mass is there); it is not
    the probability that p is on that side. Vectorised: c, n and p0 broadcast.

    >>> round(rate_p_value(1, 10, 0.5), 12)    # P(X <= 1) - P(X = 1)/2 = 6/1024
    0.005859375
    >>> round(rate_p_value(9, 10, 0.5, "clopper-pearson", "greater"), 6)   # 11/1024
    0.010742
    """
    method_name = check_choice(method, "interval method", INTERVAL_METHODS)
    side = check_choice(alternative, "alternative", ALTERNATIVES)
    prior_a, prior_b = check_prior(alpha0, beta0)
    n_arr, c_arr = check_counts(n, c)
    null = check_rates_like(p0, n_arr.shape, "p0")
    values = _rate_p_value(
        c_arr.astype(np.float64),
        n_arr.astype(np.float64),
        null,
        method_name,
        side,
        prior_a,
        prior_b,
    )
    return _as_result(np.asarray(values, dtype=np.float64))


class IntervalCoverage(NamedTuple):
    """Exact coverage of a rate interval: ``coverage[j]`` at ``p_grid[j]``, its min and mean."""

    minimum: float
    mean: float
    coverage: FloatArray


def interval_coverage(
    method: IntervalMethod,
    n: Any,
    p_grid: Any,
    confidence: float = 0.95,
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> IntervalCoverage:
    """Exact coverage probability of the ``method`` interval for n trials at each p of a grid.

    ``coverage(p) = sum_{c=0..n} P(X = c | p) · 1[L(c) <= p <= U(c)]``, X ~ Bin(n, p):
    no simulation noise. Coverage of a discrete interval oscillates in p; the
    minimum over a fine grid approaches its infimum from above (the dips sit just
    outside an interval end), so use a fine grid (step 0.0005 in ``bench/coverage.py``).

    >>> result = interval_coverage("clopper-pearson", 10, [0.1, 0.5, 0.9])
    >>> bool(result.minimum >= 0.95), round(result.mean, 4)
    (True, 0.9843)
    """
    method_name = check_choice(method, "interval method", INTERVAL_METHODS)
    level = check_confidence(confidence)
    prior_a, prior_b = check_prior(alpha0, beta0)
    trials = check_int(n, "n", minimum=1)
    rates = check_rate_grid(p_grid, "p_grid")
    counts = np.arange(trials + 1, dtype=np.float64)
    size = np.full_like(counts, float(trials))
    lo, hi = _rate_bounds(counts, size, level, method_name, prior_a, prior_b)
    pmf = point_probability(counts[None, :], size[None, :], rates[:, None])
    inside = (lo[None, :] <= rates[:, None]) & (rates[:, None] <= hi[None, :])
    coverage: FloatArray = np.sum(np.where(inside, pmf, 0.0), axis=1)
    return IntervalCoverage(float(coverage.min()), float(coverage.mean()), coverage)
