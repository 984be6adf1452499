"""Categorical outcomes with rewards (reference 003: Bayes@N, avg@N, Max@k).

``R`` is an M×N matrix of categories ``0..C`` and ``w`` the length-(C+1)
reward vector (``w = [0, 1]`` and binary ``R`` when omitted). Counts forms take
the per-stimulus category counts, an M×(C+1) matrix whose rows may have
different totals (ragged suites).

Bayes@N (Hariri et al. 2026, arXiv:2510.04265): each stimulus's category
probabilities get the posterior Dirichlet(ν), ``ν = counts + prior counts + 1``,
``T = sum(ν)``; the suite score is the mean posterior expected reward.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._banks import (
    CategoricalBank,
    categorical_bank_from_counts,
    categorical_bank_from_matrix,
)
from gate.metrics._kernels import (
    FloatArray,
    IntArray,
    group_counts,
    log_beta_power_moment,
    pass_at_k_values,
    unique_rows,
)
from gate.metrics._validation import check_bounds, check_confidence, check_int, check_k_against
from gate.metrics.intervals import CIResult, ci_result

__all__ = [
    "MeanSigma",
    "avg",
    "avg_ci",
    "avg_ci_counts",
    "avg_counts",
    "avg_each_counts",
    "bayes",
    "bayes_ci",
    "bayes_ci_counts",
    "bayes_counts",
    "bayes_each_counts",
    "max_at_k",
    "max_at_k_ci",
    "max_at_k_ci_counts",
    "max_at_k_counts",
]

Bounds = tuple[float, float]


class MeanSigma(NamedTuple):
    """``(mu, sigma)`` as scorio's ``bayes``/``avg`` return it; unpacks like a tuple."""

    mu: float
    sigma: float


def _scaled(weights: FloatArray) -> tuple[float, float, FloatArray]:
    """Rewards as ``offset + scale · normalised`` with normalised in [-1, 1] (no overflow)."""
    offset = float(weights[0])
    centred = weights - offset
    scale = float(np.max(np.abs(centred)))
    if scale == 0.0:
        return offset, 0.0, np.zeros_like(weights)
    return offset, scale, centred / scale


def _dirichlet_moments(
    posterior: FloatArray, normalised: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Posterior mean and variance of ``w·π`` for π ~ Dirichlet(ν), one row of ν each.

    ``Var[w·π] = (E_π̄[w²] - E_π̄[w]²)/(T + 1)`` with ``π̄ = ν/T``.
    """
    total = posterior.sum(axis=1)
    probabilities = posterior / total[:, None]
    mean = probabilities @ normalised
    spread = np.maximum(probabilities @ normalised**2 - mean**2, 0.0)
    return mean, spread / (total + 1.0)


def _bayes(bank: CategoricalBank) -> MeanSigma:
    offset, scale, normalised = _scaled(bank.weights)
    if scale == 0.0:
        return MeanSigma(offset, 0.0)
    # Suites repeat the same count rows; moments are computed once per distinct row.
    posterior, _, frequency = unique_rows(bank.posterior_counts())
    mean, variance = _dirichlet_moments(posterior, normalised)
    size = bank.size
    return MeanSigma(
        offset + scale * float(np.dot(frequency, mean)) / size,
        scale * float(np.sqrt(np.dot(frequency, variance))) / size,
    )


def _avg(bank: CategoricalBank) -> MeanSigma:
    offset, scale, normalised = _scaled(bank.weights)
    if scale == 0.0:
        return MeanSigma(offset, 0.0)
    counts, _, frequency = unique_rows(bank.counts.astype(np.float64))
    trials = counts.sum(axis=1)
    per_stimulus = (counts @ normalised) / trials
    _, variance = _dirichlet_moments(counts + 1.0, normalised)
    # sigma_avg = (T/N) sigma_Bayes per stimulus (Bayes@N paper, Eq. 20), T = N + C + 1.
    total = trials + counts.shape[1]
    scaled_variance = (total / trials) ** 2 * variance
    size = bank.size
    return MeanSigma(
        offset + scale * float(np.dot(frequency, per_stimulus)) / size,
        scale * float(np.sqrt(np.dot(frequency, scaled_variance))) / size,
    )


def _interval(result: MeanSigma, confidence: Any, bounds: Any) -> CIResult:
    level = check_confidence(confidence)
    return ci_result(result.mu, result.sigma, level, check_bounds(bounds))


# --- Bayes@N ---------------------------------------------------------------------


def bayes(
    R: npt.ArrayLike, w: npt.ArrayLike | None = None, R0: npt.ArrayLike | None = None
) -> MeanSigma:
    """Bayes@N posterior mean and sd of the suite reward (Hariri et al. 2026).

    With ``ν_αk = n_αk + n⁰_αk + 1`` and ``T = 1 + C + D + N``::

        mu    = w_0 + (1/(M T)) sum_α sum_j ν_αj (w_j - w_0)
        sigma = sqrt( (1/(M²(T+1))) sum_α [ sum_j ν_αj/T (w_j-w_0)² - (sum_j ν_αj/T (w_j-w_0))² ] )

    >>> import numpy as np
    >>> R = np.array([[0, 1, 2, 2, 1],
    ...               [1, 1, 0, 2, 2]])
    >>> w = np.array([0.0, 0.5, 1.0])
    >>> R0 = np.array([[0, 2],
    ...                [1, 2]])
    >>> mu, sigma = bayes(R, w, R0)
    >>> round(mu, 6), round(sigma, 6)
    (0.575, 0.084275)
    >>> mu2, sigma2 = bayes(R, w)
    >>> round(mu2, 6), round(sigma2, 6)
    (0.5625, 0.091998)
    """
    return _bayes(categorical_bank_from_matrix(R, w, R0))


def bayes_ci(
    R: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    R0: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> CIResult:
    """Bayes@N with a normal-approximation credible interval ``mu ± z·sigma`` (clipped to bounds).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> mu, sigma, lo, hi = bayes_ci(R, bounds=(0.0, 1.0))
    >>> round(mu, 6), round(sigma, 6), round(lo, 4), round(hi, 4)
    (0.642857, 0.118451, 0.4107, 0.875)
    """
    return _interval(bayes(R, w, R0), confidence, bounds)


def bayes_counts(
    counts: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    prior_counts: npt.ArrayLike | None = None,
) -> MeanSigma:
    """Bayes@N from per-stimulus category counts (M × (C+1); rows may differ in total).

    Each stimulus uses its own ``T_α = 1 + C + D_α + N_α``.

    >>> bayes_counts([[1, 2, 2], [1, 2, 2]], [0.0, 0.5, 1.0]).mu
    0.5625
    """
    return _bayes(categorical_bank_from_counts(counts, w, prior_counts))


def bayes_each_counts(
    counts: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    prior_counts: npt.ArrayLike | None = None,
) -> FloatArray:
    """Bayes@N of each stimulus alone: :func:`bayes_counts` of every row on its own, at once.

    Row i's posterior mean reward ``Σ_j w_j (1 + D_ij + N_ij) / T_i``.

    >>> bayes_each_counts([[1, 2, 2], [0, 0, 5]], [0.0, 0.5, 1.0]).tolist()
    [0.5625, 0.8125]
    """
    bank = categorical_bank_from_counts(counts, w, prior_counts)
    offset, scale, normalised = _scaled(bank.weights)
    if scale == 0.0:
        return np.full(bank.size, offset)
    mean, _ = _dirichlet_moments(bank.posterior_counts(), normalised)
    return np.asarray(offset + scale * mean, dtype=np.float64)


def bayes_ci_counts(
    counts: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    prior_counts: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> CIResult:
    """:func:`bayes_ci` from per-stimulus category counts.

    >>> round(bayes_ci_counts([[2, 3], [1, 4]], bounds=(0, 1)).lo, 4)
    0.4107
    """
    return _interval(bayes_counts(counts, w, prior_counts), confidence, bounds)


# --- avg@N -----------------------------------------------------------------------


def avg(R: npt.ArrayLike, w: npt.ArrayLike | None = None) -> MeanSigma:
    """avg@N, the mean reward over all trials, with Bayesian sd ``sigma_a = (T/N) sigma_Bayes``.

    Uniform prior, no R0, ``T = 1 + C + N``.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> a, sigma = avg(R)
    >>> round(a, 6), round(sigma, 6)
    (0.7, 0.165831)
    >>> R = np.array([[0, 1, 2, 2, 1],
    ...               [1, 1, 0, 2, 2]])
    >>> a, sigma = avg(R, np.array([0.0, 0.5, 1.0]))
    >>> round(a, 6), round(sigma, 6)
    (0.6, 0.147196)
    """
    return _avg(categorical_bank_from_matrix(R, w))


def avg_ci(
    R: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> CIResult:
    """avg@N with ``a ± z·sigma_a``, clipped to bounds.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> a, sigma, lo, hi = avg_ci(R, bounds=(0.0, 1.0))
    >>> round(a, 4), round(sigma, 4), round(lo, 4), round(hi, 4)
    (0.7, 0.1658, 0.375, 1.0)
    >>> R = np.array([[0, 1, 2, 2, 1],
    ...               [1, 1, 0, 2, 2]])
    >>> a, sigma, lo, hi = avg_ci(R, np.array([0.0, 0.5, 1.0]), confidence=0.95)
    >>> round(a, 4), round(sigma, 4), round(lo, 4), round(hi, 4)
    (0.6, 0.1472, 0.3115, 0.8885)
    """
    return _interval(avg(R, w), confidence, bounds)


def avg_counts(counts: npt.ArrayLike, w: npt.ArrayLike | None = None) -> MeanSigma:
    """avg@N from category counts: mean over stimuli of each stimulus's mean reward.

    With ragged rows this weights stimuli equally (not trials), and
    ``sigma_a² = (1/M²) sum_α (T_α/N_α)² Var_α``.

    >>> avg_counts([[2, 3], [1, 4]]).mu
    0.7
    """
    return _avg(categorical_bank_from_counts(counts, w))


def avg_each_counts(counts: npt.ArrayLike, w: npt.ArrayLike | None = None) -> FloatArray:
    """avg@N of each stimulus alone (its mean reward): :func:`avg_counts` of every row, at once.

    >>> avg_each_counts([[2, 3], [1, 4], [0, 5]]).tolist()
    [0.6, 0.8, 1.0]
    """
    bank = categorical_bank_from_counts(counts, w)
    offset, scale, normalised = _scaled(bank.weights)
    if scale == 0.0:
        return np.full(bank.size, offset)
    return np.asarray(
        offset + scale * (bank.counts @ normalised) / bank.counts.sum(axis=1), dtype=np.float64
    )


def avg_ci_counts(
    counts: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> CIResult:
    """:func:`avg_ci` from category counts.

    >>> round(avg_ci_counts([[2, 3], [1, 4]], bounds=(0, 1)).lo, 4)
    0.375
    """
    return _interval(avg_counts(counts, w), confidence, bounds)


# --- Max@k -----------------------------------------------------------------------


def _levels(bank: CategoricalBank) -> tuple[FloatArray, IntArray]:
    """Distinct reward levels (ascending) and the level of each category."""
    levels, inverse = np.unique(bank.weights, return_inverse=True)
    return levels, inverse.astype(np.int64).ravel()


def _grouped(matrix: IntArray | FloatArray, inverse: IntArray, width: int) -> FloatArray:
    grouped = np.zeros((matrix.shape[0], width))
    for category, level in enumerate(inverse):
        grouped[:, level] += matrix[:, category]
    return grouped


def _max_per_stimulus(bank: CategoricalBank, k: int) -> FloatArray:
    """Unbiased Max@k per stimulus: ``r_1 + sum_l (r_{l+1} - r_l) P(max of k > r_l)``.

    P(max of k > r_l) is pass@k with "pass" = a trial above level l, so the
    stable pass@k kernel applies level by level.
    """
    levels, inverse = _levels(bank)
    if levels.size == 1:
        return np.full(bank.size, float(levels[0]))
    offset, scale, normalised = _scaled(levels)
    grouped = _grouped(bank.counts, inverse, levels.size).astype(np.int64)
    trials = grouped.sum(axis=1)
    at_or_below = np.cumsum(grouped, axis=1)[:, :-1]
    result = np.full(bank.size, normalised[0])
    for level, gap in enumerate(np.diff(normalised)):
        above = trials - at_or_below[:, level]
        groups = group_counts(trials, above)
        result += gap * pass_at_k_values(groups.n, groups.c, k)[groups.inverse]
    out: FloatArray = offset + scale * result
    return out


def _max_posterior(bank: CategoricalBank, k: int) -> MeanSigma:
    """Posterior mean and sd of latent Max@k under per-stimulus Dirichlet posteriors.

    With cumulative probability ``q_l = P(reward <= r_l)`` ~ Beta(a_l, T - a_l)::

        g = r_L - sum_l (r_{l+1} - r_l) q_l^k
        E[q_i^k q_j^k] = E_{Beta(a_j, T-a_j)}[x^{2k}] · E_{Beta(a_i, a_j-a_i)}[y^k]   (i < j)

    (q_i = q_j · y with y independent of q_j: Dirichlet aggregation).
    """
    levels, inverse = _levels(bank)
    if levels.size == 1:
        return MeanSigma(float(levels[0]), 0.0)
    offset, scale, normalised = _scaled(levels)
    gaps = np.diff(normalised)
    posterior, _, frequency = unique_rows(_grouped(bank.posterior_counts(), inverse, levels.size))
    total = posterior.sum(axis=1)
    cumulative = np.cumsum(posterior, axis=1)[:, :-1]
    rest = total[:, None] - cumulative
    log_first = log_beta_power_moment(cumulative, rest, k)
    log_second = log_beta_power_moment(cumulative, rest, 2 * k)
    mean = normalised[0] + (0.0 - np.expm1(log_first)) @ gaps
    mean = np.clip(mean, normalised[0], normalised[-1])
    variance = np.zeros(posterior.shape[0])
    boundaries = gaps.size
    for i in range(boundaries):
        for j in range(i, boundaries):
            if i == j:
                log_cross = log_second[:, i]
            else:
                log_cross = log_second[:, j] + log_beta_power_moment(
                    cumulative[:, i], cumulative[:, j] - cumulative[:, i], k
                )
            independent = log_first[:, i] + log_first[:, j]
            with np.errstate(invalid="ignore"):
                cov = np.exp(log_cross) * -np.expm1(np.minimum(independent - log_cross, 0.0))
            factor = 1.0 if i == j else 2.0
            variance += factor * gaps[i] * gaps[j] * np.where(np.isfinite(cov), cov, 0.0)
    size = bank.size
    mu = offset + scale * float(np.dot(frequency, mean)) / size
    sigma = scale * float(np.sqrt(np.dot(frequency, np.maximum(variance, 0.0)))) / size
    return MeanSigma(mu, sigma)


def max_at_k(R: npt.ArrayLike, k: int, w: npt.ArrayLike | None = None) -> float:
    """Max@k: expected best reward among k of the N trials (Bagirov et al. 2025, arXiv:2510.23393).

    With sorted rewards ``g_1 <= ... <= g_N`` of a stimulus::

        Max@k = (1/C(N, k)) sum_{i=k}^{N} C(i-1, k-1) g_i

    With ``w = [0, 1]`` this is pass@k.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(max_at_k(R, 2), 6)
    0.95
    >>> R = np.array([[0, 1, 2, 2, 1],
    ...               [1, 1, 0, 2, 2]])
    >>> round(max_at_k(R, 2, w=np.array([0.0, 0.5, 1.0])), 6)
    0.85
    """
    bank = categorical_bank_from_matrix(R, w)
    k_int = check_k_against(k, np.asarray(bank.counts.sum(axis=1).min()))
    return float(np.mean(_max_per_stimulus(bank, k_int)))


def max_at_k_counts(counts: npt.ArrayLike, k: int, w: npt.ArrayLike | None = None) -> FloatArray:
    """Per-stimulus Max@k from category counts (rows may differ in total).

    >>> max_at_k_counts([[1, 2, 2], [1, 2, 2]], 2, [0.0, 0.5, 1.0])
    array([0.85, 0.85])
    """
    bank = categorical_bank_from_counts(counts, w)
    k_int = check_k_against(k, bank.trials)
    return _max_per_stimulus(bank, k_int)


def _max_ci(bank: CategoricalBank, k: int, confidence: Any, bounds: Any) -> CIResult:
    if k == 1:
        # Max@1 is the expected reward: exactly Bayes@N (scorio: unclipped unless bounds given).
        return _interval(_bayes(bank), confidence, bounds)
    level = check_confidence(confidence)
    clip = check_bounds(bounds)
    if clip is None:
        clip = (float(np.min(bank.weights)), float(np.max(bank.weights)))
    result = _max_posterior(bank, k)
    return ci_result(result.mu, result.sigma, level, clip)


def max_at_k_ci(
    R: npt.ArrayLike,
    k: int,
    w: npt.ArrayLike | None = None,
    R0: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> CIResult:
    """Posterior summary of latent Max@k under the Bayes@N Dirichlet posterior (any k >= 1).

    k = 1 equals :func:`bayes_ci`. Without ``bounds`` the interval is clipped
    to the reward range ``[min w, max w]`` (k >= 2).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> mu, sigma, lo, hi = max_at_k_ci(R, 2)
    >>> round(mu, 6), round(sigma, 6), round(lo, 4), round(hi, 4)
    (0.839286, 0.097263, 0.6487, 1.0)
    >>> R = np.array([[0, 1, 2, 2, 1],
    ...               [1, 1, 0, 2, 2]])
    >>> mu, sigma, lo, hi = max_at_k_ci(R, 2, w=np.array([0.0, 0.5, 1.0]))
    >>> round(mu, 6), round(sigma, 6), round(lo, 4), round(hi, 4)
    (0.75, 0.08812, 0.5773, 0.9227)
    """
    k_int = check_int(k, "k", minimum=1)
    return _max_ci(categorical_bank_from_matrix(R, w, R0), k_int, confidence, bounds)


def max_at_k_ci_counts(
    counts: npt.ArrayLike,
    k: int,
    w: npt.ArrayLike | None = None,
    prior_counts: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> CIResult:
    """:func:`max_at_k_ci` from per-stimulus category counts.

    >>> round(max_at_k_ci_counts([[1, 2, 2], [1, 2, 2]], 2, [0.0, 0.5, 1.0]).mu, 6)
    0.75
    """
    k_int = check_int(k, "k", minimum=1)
    return _max_ci(categorical_bank_from_counts(counts, w, prior_counts), k_int, confidence, bounds)
