"""What the data allow about each stimulus's pass rate: draws for predictive simulations.

The advice for an inconclusive gate (:mod:`gate.metrics.decision`) and ``plan
--pilot`` simulate future trials. Simulating every stimulus at its observed rate
c/n (plug-in) takes each estimate for the truth: a stimulus that went 5/5 never
fails, and a suite estimated at 0.85 is 0.85. That advice decided the gate far
less often than it promised. Here every simulated run first draws the stimuli's
rates from their posterior given all the data, under a beta-binomial
hierarchical model (partial pooling; Gelman et al., *Bayesian Data Analysis*,
3rd ed., §5.3)::

    pᵢ | μ, κ ~ Beta(κμ, κ(1 − μ))      the population of stimuli: mean μ, concentration κ
    cᵢ | pᵢ   ~ Binomial(nᵢ, pᵢ)
    μ ~ Uniform(0, 1),  log κ ~ Uniform(log 1, log 10⁴)

A run draws (μ, κ) from their marginal posterior (evaluated on a grid), then
every pᵢ from Beta(cᵢ + κμ, nᵢ − cᵢ + κ(1 − μ)). Stimuli that look alike are
pulled toward each other; stimuli that differ keep their own rates. κ ranges
from populations whose stimuli mostly pass or fail outright (κ = 1: Beta(μ, 1 − μ))
to ones whose stimuli share one rate (κ = 10⁴), each decade equally likely a
priori. Reaching further down (κ ≥ 0.1, weighted toward small κ as BDA3's
p(α, β) ∝ (α + β)^(-5/2)) reads a handful of stimuli that all passed as stimuli
that never fail: on 4 stimuli × 5 trials (bench scenario ``small``) that advice
decided 0.69 of the gates, 0.74 with this range.

Why not each stimulus on its own, from its Jeffreys posterior Beta(c + ½, n − c + ½)?
That prior pulls every stimulus toward ½ by half a trial each way, and with few
trials per stimulus the pulls add up instead of averaging out: at 5 trials a
suite at 0.85 is simulated around 0.79, a 5/5 stimulus's pass^3 around 0.80. The
advice built on it decided 0.74 (pass rate), 0.65 (pass^3) and 0.57 (mostly easy
stimuli, a few hard) of the gates it promised 80% of, where this posterior
decides 0.78–0.80 (``bench/advice_calibration.py --posterior jeffreys``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from gate.metrics._special import _stirling_error

__all__ = ["posterior_rates"]

FloatArray = npt.NDArray[np.float64]

#: The concentrations κ of the grid, log-spaced (the prior: uniform in log κ).
_KAPPA = np.geomspace(1.0, 1e4, 40)
#: The population means μ of the grid: log-odds from -12 to 12 everywhere, and finer
#: around the pooled rate (± 8 of its standard errors), where the posterior is.
_GLOBAL_LOGITS = np.linspace(-12.0, 12.0, 49)
_LOCAL_POINTS, _LOCAL_WIDTH = 97, 8.0
_EDGE = 1e-9
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: Distinct counts handled at once (bounds the (μ, κ, counts) temporaries).
_CHUNK = 64
#: The grid's likelihood costs ~0.5 ms per distinct count (of passes, failures and trials):
#: past this many, (μ, κ) are learned from a seeded random subset of the stimuli.
_MAX_DISTINCT = 1_500


def _log_gamma(x: FloatArray) -> FloatArray:
    """log Γ(x) for x > 0, vectorised and without SciPy: Stirling's series at x + 10 when
    x < 10 (log Γ(x) = log Γ(x + 10) − Σⱼ₌₀⁹ log(x + j)), at x itself otherwise."""
    small = x < 10.0
    y = np.where(small, x + 10.0, x)
    value = (y - 0.5) * np.log(y) - y + _HALF_LOG_2PI + _stirling_error(y)
    if small.any():
        rising = np.ones_like(x)
        for j in range(10):
            rising = rising * np.where(small, x + j, 1.0)
        value = value - np.log(rising)
    return np.asarray(value, dtype=np.float64)


def _summed_log_gamma(base: FloatArray, values: npt.NDArray[np.int64]) -> FloatArray:
    """Σ over ``values`` (with repeats) of log Γ(base + v), for every entry of ``base``."""
    distinct, counts = np.unique(values, return_counts=True)
    total = np.zeros_like(base)
    for start in range(0, distinct.size, _CHUNK):
        v = distinct[start : start + _CHUNK].astype(np.float64)
        w = counts[start : start + _CHUNK].astype(np.float64)
        total += _log_gamma(base[..., None] + v) @ w
    return total


def _mean_grid(n: npt.NDArray[np.int64], c: npt.NDArray[np.int64]) -> FloatArray:
    """Grid points for μ: the global log-odds grid and a finer one around the pooled rate."""
    pooled = (c.sum() + 0.5) / (n.sum() + 1.0)
    rates = (c + 0.5) / (n + 1.0)
    spread = max(float(rates.var()), pooled * (1.0 - pooled) / max(float(n.mean()), 1.0))
    half = _LOCAL_WIDTH * math.sqrt(spread / n.size)
    local = np.linspace(max(pooled - half, _EDGE), min(pooled + half, 1.0 - _EDGE), _LOCAL_POINTS)
    return np.unique(np.concatenate([1.0 / (1.0 + np.exp(-_GLOBAL_LOGITS)), local]))


def _population_sample(
    n: npt.NDArray[np.int64], c: npt.NDArray[np.int64], rng: np.random.Generator
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The stimuli that (μ, κ) are learned from: all of them, unless their counts take more
    than ``_MAX_DISTINCT`` distinct values (thousands of trials per stimulus, each suite a
    different number), where the grid would take seconds to minutes. Then a random subset
    of a third of that many stimuli (drawn from ``rng``): it knows the population less
    well, so runs may draw more widely and the advice errs toward more trials. Every
    stimulus still draws its rate from its own trials."""
    distinct = np.unique(c).size + np.unique(n - c).size + np.unique(n).size
    if distinct <= _MAX_DISTINCT:
        return n, c
    chosen = np.sort(rng.choice(n.size, size=_MAX_DISTINCT // 3, replace=False))
    return n[chosen], c[chosen]


def posterior_rates(
    n: npt.ArrayLike, c: npt.ArrayLike, runs: int, rng: np.random.Generator
) -> FloatArray:
    """``runs`` draws of every stimulus's pass rate from what all the data allow, (runs, M).

    Each row is one draw of the population (μ, κ) from its posterior, then of every
    stimulus's rate given its own trials and that population (see the module docstring).
    Ten stimuli that each went 5/5 are not simulated as never failing: their suite rate
    averages 0.984 and is below 0.9 in 0.4% of runs, about what 50 passes of 50 allow
    (0.9^50 = 0.5%). A stimulus at 1/5 among nine perfect ones keeps its own rate:

    >>> draws = posterior_rates([5] * 10, [5] * 10, 20_000, np.random.default_rng(0))
    >>> below = np.mean(draws.mean(axis=1) < 0.9)
    >>> draws.shape, round(float(draws.mean()), 3), round(float(below), 3)
    ((20000, 10), 0.984, 0.004)
    >>> draws = posterior_rates([5] * 10, [5] * 9 + [1], 20_000, np.random.default_rng(0))
    >>> round(float(draws[:, :9].mean()), 2), round(float(draws[:, 9].mean()), 2)
    (0.98, 0.4)
    """
    n_arr = np.asarray(n, dtype=np.int64).ravel()
    c_arr = np.asarray(c, dtype=np.int64).ravel()
    if n_arr.size == 0:
        return np.zeros((runs, 0))
    n_fit, c_fit = _population_sample(n_arr, c_arr, rng)
    mu = _mean_grid(n_fit, c_fit)[:, None]
    kappa = _KAPPA[None, :]
    a, b = kappa * mu, kappa * (1.0 - mu)
    # log of Πᵢ B(cᵢ + a, nᵢ − cᵢ + b) / B(a, b): Γ terms of the passes, the failures and
    # the trials, each summed over the distinct counts, and the population's own terms.
    log_likelihood = (
        _summed_log_gamma(a, c_fit)
        + _summed_log_gamma(b, n_fit - c_fit)
        - _summed_log_gamma(np.broadcast_to(kappa, a.shape).copy(), n_fit)
        - n_fit.size * (_log_gamma(a) + _log_gamma(b) - _log_gamma(np.broadcast_to(kappa, a.shape)))
    )
    # Both priors uniform: on the log-spaced κ every point weighs the same; each μ point
    # weighs the width of μ it stands for.
    widths = np.gradient(mu[:, 0])[:, None]
    log_weight = log_likelihood + np.log(widths)
    weight = np.exp(log_weight - log_weight.max()).ravel()
    cell = rng.choice(weight.size, size=runs, p=weight / weight.sum())
    row, column = np.unravel_index(cell, a.shape)
    mu_run, kappa_run = mu[row, 0], _KAPPA[column]
    # A run at a time, the generator read in the same order as one call over (runs, M):
    # the same draws, without two (runs, M) arrays of parameters (256 MB at 800,000
    # stimuli × 20 runs).
    rates = np.empty((runs, n_arr.size), dtype=np.float64)
    failures = n_arr - c_arr
    for r, (m_r, k_r) in enumerate(zip(mu_run.tolist(), kappa_run.tolist(), strict=True)):
        rates[r] = rng.beta(c_arr + k_r * m_r, failures + k_r * (1.0 - m_r))
    return rates
