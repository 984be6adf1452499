"""Confidence intervals for one pass rate, for pass@k / pass^k, and for suite means.

Default method: Wilson. Exact mean coverage of the nominal 95% Wilson interval
over p = 0.05..0.95 is 95.8% (n=3), 95.8% (n=5), 95.6% (n=10), 95.3% (n=20);
see ``docs/metrics.md`` and ``tests/metrics/test_metrics_intervals.py``.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, get_args

import numpy as np

from gate.metrics._kernels import (
    FloatArray,
    IntArray,
    group_counts,
    normal_interval,
    posterior_score,
)
from gate.metrics._special import betaincinv, normal_quantile
from gate.metrics._validation import (
    check_choice,
    check_confidence,
    check_counts,
    check_float,
    check_int,
    check_k_against,
    check_prior,
)

__all__ = [
    "CIResult",
    "Interval",
    "IntervalMethod",
    "SuiteMetric",
    "pass_at_k_interval",
    "pass_hat_k_interval",
    "rate_interval",
    "suite_interval",
    "suite_mean_interval",
    "z_value",
]

IntervalMethod = Literal["wilson", "jeffreys", "clopper-pearson", "beta", "wald"]
SuiteMetric = Literal["pass_rate", "pass_at_k", "pass_hat_k"]
INTERVAL_METHODS: tuple[str, ...] = get_args(IntervalMethod)
SUITE_METRICS: tuple[str, ...] = get_args(SuiteMetric)


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


def _method_label(method: str, alpha0: float, beta0: float) -> str:
    if method == "wald":
        return "wald (planning only)"
    if method == "beta":
        if alpha0 == 1.0 and beta0 == 1.0:
            return "beta posterior (uniform prior)"
        return f"beta posterior (Beta({alpha0:g}, {beta0:g}) prior)"
    return method


def _rate_bounds(
    c: FloatArray, n: FloatArray, confidence: float, method: str, alpha0: float, beta0: float
) -> tuple[FloatArray, FloatArray]:
    tail = 0.5 * (1.0 - confidence)
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


def rate_interval(
    c: Any,
    n: Any,
    confidence: float = 0.95,
    method: IntervalMethod = "wilson",
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> Interval:
    """Two-sided interval for a pass rate p from c passes in n trials.

    Methods (Brown, Cai & DasGupta 2001; statistics.md §1), z = Phi^{-1}(1 - a/2):

    - ``"wilson"`` (default): centre ``(p̂ + z²/2n)/(1 + z²/n)``, half-width
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

    Vectorised over c and n (ragged n allowed).

    >>> iv = rate_interval(4, 5)
    >>> round(iv.lo, 4), round(iv.hi, 4), iv.method
    (0.3755, 0.9638, 'wilson')
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
        _method_label(method_name, prior_a, prior_b),
        level,
    )


def pass_at_k_interval(
    c: Any,
    n: Any,
    k: Any,
    confidence: float = 0.95,
    method: IntervalMethod = "wilson",
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
    (0.61, 0.9987, 'wilson, mapped through 1-(1-p)^k')
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
    method: IntervalMethod = "wilson",
    *,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> Interval:
    """Interval for one stimulus's latent pass^k = p^k: ``[L^k, U^k]``.

    p^k is increasing in p, so the rate interval's endpoints map through
    (statistics.md §2). ``k`` may exceed ``n`` (the target is latent).

    >>> iv = pass_hat_k_interval(4, 5, 5)
    >>> round(iv.lo, 4), round(iv.hi, 4), iv.method
    (0.0075, 0.8315, 'wilson, mapped through p^k')
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
    method: IntervalMethod = "wilson",
) -> Interval:
    """Interval for a suite value: the mean over M stimuli of unbiased per-stimulus estimates.

    Each per-stimulus estimator of pass rate (k = 1), pass@k or pass^k is a
    U-statistic of degree k over the stimulus's n_i trials with a kernel in
    {0, 1}, so its variance is at most (k/n_i)·θ_i(1-θ_i) (Hoeffding 1948,
    "A class of statistics with asymptotically normal distribution", Var U ≤
    (k/n)·Var h). For the mean over M stimuli, by the concavity of θ(1-θ)::

        Var(mean) ≤ θ̄(1-θ̄) / n_eff,    n_eff = M · min_i(n_i) / k

    i.e. never more variable than one binomial proportion over n_eff trials, so
    the one-rate ``method`` at (estimate, n_eff) is honest, and conservative when
    stimuli differ. With k = 1 and equal n this is the pooled M·n trials.

    >>> iv = suite_interval(0.4, [3, 3, 3, 3, 3], k=3)   # reference 002's pass^3
    >>> round(iv.lo, 4), round(iv.hi, 4)
    (0.1176, 0.7693)
    >>> iv.method
    'wilson at the suite estimate, n_eff = M·min(nᵢ)/k = 5'
    """
    method_name = check_choice(method, "interval method", INTERVAL_METHODS)
    level = check_confidence(confidence)
    n_arr, _ = check_counts(n, n)
    k_int = check_k_against(k, n_arr)
    value = check_float(estimate, "estimate", low=0.0, high=1.0)
    n_eff = n_arr.size * float(np.min(n_arr)) / k_int
    lo, hi = _rate_bounds(np.array(value * n_eff), np.array(n_eff), level, method_name, 1.0, 1.0)
    label = f"{method_name} at the suite estimate, n_eff = M·min(nᵢ)/k = {n_eff:.4g}"
    return Interval(float(lo), float(hi), label, level)


def rate_p_value(
    c: Any, n: Any, p0: float, method: str = "wilson", alternative: str = "less"
) -> FloatArray:
    """One-sided p-value of the test each interval method inverts (provisional, lead's copy).

    ``alternative="less"``: evidence that p < p0; ``"greater"``: that p > p0.
    """
    from gate.metrics._special import betainc, ndtr

    c_arr = np.asarray(c, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    p0 = float(p0)
    if method in ("wilson", "wald"):
        p0c = min(max(p0, 1e-300), 1.0 - 1e-16)
        z = (c_arr / n_arr - p0c) / np.sqrt(p0c * (1.0 - p0c) / n_arr)
        result = ndtr(z) if alternative == "less" else ndtr(-z)
    elif method == "clopper-pearson":
        # P(X ≤ c | p0) and P(X ≥ c | p0)
        if alternative == "less":
            tail = betainc(np.maximum(n_arr - c_arr, 1e-300), c_arr + 1.0, 1.0 - p0)
            result = np.where(c_arr >= n_arr, 1.0, tail)
        else:
            tail = betainc(np.maximum(c_arr, 1e-300), n_arr - c_arr + 1.0, p0)
            result = np.where(c_arr <= 0, 1.0, tail)
    else:
        a0 = 0.5 if method == "jeffreys" else 1.0
        a, b = c_arr + a0, n_arr - c_arr + a0
        below = betainc(a, b, p0)
        result = 1.0 - below if alternative == "less" else below
    return np.asarray(result, dtype=np.float64)
