"""Geometric blends of capability and consistency (reference 003: Geom@k, GeoSpectrum).

``geom_at_k`` blends per-stimulus pass@k and pass^k (``P^a · U^b``) and then
averages; ``geom_ds_at_k`` averages first and blends the suite values.
``threshold_spectrum_at_k`` scores a size-k subset with j passes by
``A_j = sum_{r<=j} w_r``; ``geo_spectrum_at_k`` blends suite pass@k with the
spectrum, ``Pass@k^λ · S_w@k^(1-λ)``, with the upper-half mG weights
(``w_r = 2/k`` for ``r > ceil(k/2)``) by default (GeoSpectrum*@k).

Posterior summaries (``*_ci``) use the per-stimulus Beta posterior of
:mod:`gate.metrics.pass_family` and, for the geometric blends, first-order
delta propagation through ``g(x, y) = x^a y^b`` (as scorio does). Their ``k``
may exceed the number of trials (the target is latent); the point estimates
need ``k <= n``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gate.metrics._banks import BinaryBank, binary_bank_from_counts, binary_bank_from_matrix
from gate.metrics._kernels import (
    FloatArray,
    finite_score,
    posterior_score,
    posterior_score_covariance,
)
from gate.metrics._validation import (
    check_bounds,
    check_confidence,
    check_lambda,
    check_powers,
    check_prior,
    check_spectrum_weights,
)
from gate.metrics.intervals import CIResult, ci_result
from gate.metrics.pass_family import pass_score, threshold_score

__all__ = [
    "geo_spectrum_at_k",
    "geo_spectrum_at_k_ci",
    "geo_spectrum_at_k_ci_counts",
    "geo_spectrum_at_k_counts",
    "geo_spectrum_star_at_k",
    "geo_spectrum_star_at_k_ci",
    "geom_at_k",
    "geom_at_k_ci",
    "geom_at_k_ci_counts",
    "geom_at_k_counts",
    "geom_ds_at_k",
    "geom_ds_at_k_ci",
    "geom_ds_at_k_ci_counts",
    "geom_ds_at_k_counts",
    "threshold_spectrum_at_k",
    "threshold_spectrum_at_k_ci",
    "threshold_spectrum_at_k_ci_counts",
    "threshold_spectrum_at_k_counts",
]

Bounds = tuple[float, float]
UNIT: Bounds = (0.0, 1.0)
Weights = npt.ArrayLike | None


# --- helpers ---------------------------------------------------------------------


def mg_spectrum_weights(k: int) -> FloatArray:
    """Upper-half mG weights: ``w_r = 2/k`` for ``r > ceil(k/2)``, else 0."""
    weights = np.zeros(k)
    weights[(k + 1) // 2 :] = 2.0 / k
    return weights


def spectrum_score(weights: Any, k: int) -> FloatArray:
    """Count score ``[0, w_1, w_1+w_2, ...]`` of checked spectrum weights."""
    return np.concatenate(([0.0], np.cumsum(check_spectrum_weights(weights, k))))


def weighted_geometric_mean(
    x: FloatArray, y: FloatArray, x_power: float, y_power: float
) -> FloatArray:
    """``x^a · y^b`` elementwise; 0^negative is an error unless the other factor is 0^positive."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    bad_x = (x == 0.0) & (x_power < 0.0)
    bad_y = (y == 0.0) & (y_power < 0.0)
    rescued_x = bad_x & (y == 0.0) & (y_power > 0.0)
    rescued_y = bad_y & (x == 0.0) & (x_power > 0.0)
    if np.any(bad_x & ~rescued_x):
        raise ValueError(f"pass_power={x_power} is negative where pass@k is 0")
    if np.any(bad_y & ~rescued_y):
        raise ValueError(f"unanimous_power={y_power} is negative where the second factor is 0")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = x**x_power * y**y_power
    result: FloatArray = np.where(rescued_x | rescued_y, 0.0, value)
    return result


def delta_geometric(
    mean_x: FloatArray,
    var_x: FloatArray,
    mean_y: FloatArray,
    var_y: FloatArray,
    cov: FloatArray,
    x_power: float,
    y_power: float,
) -> tuple[FloatArray, FloatArray]:
    """First-order delta method for ``g(x, y) = x^a y^b``: mean g(μx, μy), variance ∇gᵀΣ∇g."""
    mean = weighted_geometric_mean(mean_x, mean_y, x_power, y_power)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        grad_x = (
            x_power * mean_x ** (x_power - 1.0) * mean_y**y_power
            if x_power != 0.0
            else np.zeros_like(mean)
        )
        grad_y = (
            y_power * mean_x**x_power * mean_y ** (y_power - 1.0)
            if y_power != 0.0
            else np.zeros_like(mean)
        )
        variance = grad_x**2 * var_x + grad_y**2 * var_y + 2.0 * grad_x * grad_y * cov
    zero = mean == 0.0
    return np.where(zero, 0.0, mean), np.where(zero, 0.0, np.maximum(variance, 0.0))


def _joint_posterior(
    bank: BinaryBank, left: FloatArray, right: FloatArray, alpha0: Any, beta0: Any
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per-pair posterior means, variances and covariance of two latent scores."""
    a, b = bank.posterior(*check_prior(alpha0, beta0))
    mean_l, var_l = posterior_score(a, b, left)
    mean_r, var_r = posterior_score(a, b, right)
    cov = posterior_score_covariance(a, b, left, right, mean_l, mean_r)
    return mean_l, var_l, mean_r, var_r, cov


def _suite_delta(
    bank: BinaryBank,
    left: FloatArray,
    right: FloatArray,
    x_power: float,
    y_power: float,
    alpha0: Any,
    beta0: Any,
) -> tuple[float, float]:
    """Delta method on the suite means (dataset-level blend)."""
    mean_l, var_l, mean_r, var_r, cov = _joint_posterior(bank, left, right, alpha0, beta0)
    m2 = float(bank.size) ** 2
    freq = bank.groups.frequency
    mu, var = delta_geometric(
        np.asarray(bank.mean(mean_l)),
        np.asarray(float(np.dot(freq, var_l)) / m2),
        np.asarray(bank.mean(mean_r)),
        np.asarray(float(np.dot(freq, var_r)) / m2),
        np.asarray(float(np.dot(freq, cov)) / m2),
        x_power,
        y_power,
    )
    return float(mu), float(np.sqrt(var))


def _finite(bank: BinaryBank, values: FloatArray) -> FloatArray:
    return finite_score(bank.groups.n, bank.groups.c, values)


# --- Geom@k (questionwise) -------------------------------------------------------


def _geom_values(bank: BinaryBank, k: int, a: float, b: float) -> FloatArray:
    return weighted_geometric_mean(
        _finite(bank, pass_score(k)), _finite(bank, threshold_score(k, k)), a, b
    )


def geom_at_k(
    R: npt.ArrayLike, k: int, pass_power: float = 0.5, unanimous_power: float = 0.5
) -> float:
    """Questionwise Geom@k: ``(1/M) sum_i P_i^a U_i^b`` with per-stimulus pass@k P and pass^k U.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(geom_at_k(R, 2), 6)
    0.647106
    """
    bank = binary_bank_from_matrix(R)
    k_int = bank.check_finite_k(k)
    a, b = check_powers(pass_power, unanimous_power)
    return bank.mean(_geom_values(bank, k_int, a, b))


def geom_at_k_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    pass_power: float = 0.5,
    unanimous_power: float = 0.5,
) -> FloatArray:
    """Per-stimulus ``P_i^a U_i^b`` from counts; the mean is :func:`geom_at_k`.

    >>> geom_at_k_counts([5, 5], [3, 4], 2).round(6)
    array([0.519615, 0.774597])
    """
    bank = binary_bank_from_counts(n, c)
    k_int = bank.check_finite_k(k)
    a, b = check_powers(pass_power, unanimous_power)
    return bank.per_stimulus(_geom_values(bank, k_int, a, b))


def _geom_ci(
    bank: BinaryBank,
    k: Any,
    pass_power: Any,
    unanimous_power: Any,
    confidence: Any,
    bounds: Any,
    alpha0: Any,
    beta0: Any,
) -> CIResult:
    k_int = bank.check_latent_k(k)
    a, b = check_powers(pass_power, unanimous_power)
    level = check_confidence(confidence)
    clip = check_bounds(bounds)
    mean_l, var_l, mean_r, var_r, cov = _joint_posterior(
        bank, pass_score(k_int), threshold_score(k_int, k_int), alpha0, beta0
    )
    means, variances = delta_geometric(mean_l, var_l, mean_r, var_r, cov, a, b)
    return ci_result(bank.mean(means), bank.mean_sd(variances), level, clip)


def geom_at_k_ci(
    R: npt.ArrayLike,
    k: int,
    pass_power: float = 0.5,
    unanimous_power: float = 0.5,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """Approximate posterior summary of questionwise Geom@k (per-stimulus delta method).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> mu, sigma, lo, hi = geom_at_k_ci(R, 2)
    >>> round(mu, 6), round(sigma, 6), round(lo, 4), round(hi, 4)
    (0.610666, 0.133107, 0.3498, 0.8716)
    """
    bank = binary_bank_from_matrix(R)
    return _geom_ci(bank, k, pass_power, unanimous_power, confidence, bounds, alpha0, beta0)


def geom_at_k_ci_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    pass_power: float = 0.5,
    unanimous_power: float = 0.5,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """:func:`geom_at_k_ci` from counts.

    >>> round(geom_at_k_ci_counts([5, 5], [3, 4], 2).mu, 6)
    0.610666
    """
    bank = binary_bank_from_counts(n, c)
    return _geom_ci(bank, k, pass_power, unanimous_power, confidence, bounds, alpha0, beta0)


# --- Geom@k (dataset level) ------------------------------------------------------


def _geom_ds(bank: BinaryBank, k: Any, pass_power: Any, unanimous_power: Any) -> float:
    k_int = bank.check_finite_k(k)
    a, b = check_powers(pass_power, unanimous_power)
    p = bank.mean(_finite(bank, pass_score(k_int)))
    u = bank.mean(_finite(bank, threshold_score(k_int, k_int)))
    return float(weighted_geometric_mean(np.asarray(p), np.asarray(u), a, b))


def geom_ds_at_k(
    R: npt.ArrayLike, k: int, pass_power: float = 0.5, unanimous_power: float = 0.5
) -> float:
    """Dataset-level Geom@k: ``Pass@k(R)^a · Unanimous@k(R)^b`` (average, then blend).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(geom_ds_at_k(R, 2), 6)
    0.653835
    """
    return _geom_ds(binary_bank_from_matrix(R), k, pass_power, unanimous_power)


def geom_ds_at_k_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    pass_power: float = 0.5,
    unanimous_power: float = 0.5,
) -> float:
    """:func:`geom_ds_at_k` from counts (a suite value: the blend is not per stimulus).

    >>> round(geom_ds_at_k_counts([5, 5], [3, 4], 2), 6)
    0.653835
    """
    return _geom_ds(binary_bank_from_counts(n, c), k, pass_power, unanimous_power)


def _geom_ds_ci(
    bank: BinaryBank,
    k: Any,
    pass_power: Any,
    unanimous_power: Any,
    confidence: Any,
    bounds: Any,
    alpha0: Any,
    beta0: Any,
) -> CIResult:
    k_int = bank.check_latent_k(k)
    a, b = check_powers(pass_power, unanimous_power)
    level = check_confidence(confidence)
    clip = check_bounds(bounds)
    mu, sigma = _suite_delta(
        bank, pass_score(k_int), threshold_score(k_int, k_int), a, b, alpha0, beta0
    )
    return ci_result(mu, sigma, level, clip)


def geom_ds_at_k_ci(
    R: npt.ArrayLike,
    k: int,
    pass_power: float = 0.5,
    unanimous_power: float = 0.5,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """Approximate posterior summary of dataset-level Geom@k (delta method on suite means).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> mu, sigma, lo, hi = geom_ds_at_k_ci(R, 2)
    >>> round(mu, 6), round(sigma, 6), round(lo, 4), round(hi, 4)
    (0.612112, 0.132755, 0.3519, 0.8723)
    """
    bank = binary_bank_from_matrix(R)
    return _geom_ds_ci(bank, k, pass_power, unanimous_power, confidence, bounds, alpha0, beta0)


def geom_ds_at_k_ci_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    pass_power: float = 0.5,
    unanimous_power: float = 0.5,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """:func:`geom_ds_at_k_ci` from counts.

    >>> round(geom_ds_at_k_ci_counts([5, 5], [3, 4], 2).mu, 6)
    0.612112
    """
    bank = binary_bank_from_counts(n, c)
    return _geom_ds_ci(bank, k, pass_power, unanimous_power, confidence, bounds, alpha0, beta0)


# --- threshold spectrum ----------------------------------------------------------


def threshold_spectrum_at_k(R: npt.ArrayLike, k: int, weights: npt.ArrayLike) -> float:
    """Threshold spectrum ``S_{w,k} = sum_r w_r T_{r,k}``, T_r = G-Pass with threshold r.

    Equivalently each size-k subset with j passes scores ``A_j = sum_{r<=j} w_r``
    (weights: length k, >= 0, sum <= 1).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(threshold_spectrum_at_k(R, 3, [0.0, 1/3, 2/3]), 6)
    0.45
    """
    bank = binary_bank_from_matrix(R)
    k_int = bank.check_finite_k(k)
    return bank.mean(_finite(bank, spectrum_score(weights, k_int)))


def threshold_spectrum_at_k_counts(
    n: npt.ArrayLike, c: npt.ArrayLike, k: int, weights: npt.ArrayLike
) -> FloatArray:
    """Per-stimulus threshold spectrum from counts (mean = :func:`threshold_spectrum_at_k`).

    >>> threshold_spectrum_at_k_counts([5, 5], [3, 4], 3, [0.0, 0.0, 1.0])
    array([0.1, 0.4])
    """
    bank = binary_bank_from_counts(n, c)
    k_int = bank.check_finite_k(k)
    return bank.per_stimulus(_finite(bank, spectrum_score(weights, k_int)))


def _spectrum_ci(
    bank: BinaryBank,
    k: Any,
    weights: Any,
    confidence: Any,
    bounds: Any,
    alpha0: Any,
    beta0: Any,
) -> CIResult:
    k_int = bank.check_latent_k(k)
    values = spectrum_score(weights, k_int)
    level = check_confidence(confidence)
    clip = check_bounds(bounds)
    a, b = bank.posterior(*check_prior(alpha0, beta0))
    means, variances = posterior_score(a, b, values)
    return ci_result(bank.mean(means), bank.mean_sd(variances), level, clip)


def threshold_spectrum_at_k_ci(
    R: npt.ArrayLike,
    k: int,
    weights: npt.ArrayLike,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """Posterior summary of the latent spectrum ``g(p) = sum_j A_j C(k,j) p^j (1-p)^(k-j)``.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(threshold_spectrum_at_k_ci(R, 3, [0.0, 0.0, 1.0]).mu, 6)
    0.327381
    """
    bank = binary_bank_from_matrix(R)
    return _spectrum_ci(bank, k, weights, confidence, bounds, alpha0, beta0)


def threshold_spectrum_at_k_ci_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    weights: npt.ArrayLike,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """:func:`threshold_spectrum_at_k_ci` from counts.

    >>> round(threshold_spectrum_at_k_ci_counts([5, 5], [3, 4], 3, [0, 0, 1]).mu, 6)
    0.327381
    """
    bank = binary_bank_from_counts(n, c)
    return _spectrum_ci(bank, k, weights, confidence, bounds, alpha0, beta0)


# --- GeoSpectrum -----------------------------------------------------------------


def _geo_spectrum(bank: BinaryBank, k: Any, lam: Any, weights: Any, lambda_: Any) -> float:
    lam_f = check_lambda(lam, lambda_)
    k_int = bank.check_finite_k(k)
    values = spectrum_score(mg_spectrum_weights(k_int) if weights is None else weights, k_int)
    pass_mean = bank.mean(_finite(bank, pass_score(k_int)))
    if lam_f == 1.0:
        return pass_mean
    spectrum_mean = bank.mean(_finite(bank, values))
    if lam_f == 0.0:
        return spectrum_mean
    blend = weighted_geometric_mean(
        np.asarray(pass_mean), np.asarray(spectrum_mean), lam_f, 1.0 - lam_f
    )
    return float(blend)


def geo_spectrum_at_k(
    R: npt.ArrayLike,
    k: int,
    lam: float = 0.5,
    weights: Weights = None,
    lambda_: float | None = None,
) -> float:
    """GeoSpectrum_{λ,w}@k = ``Pass@k(R)^λ · S_{w,k}(R)^(1-λ)``.

    Default weights are the upper-half mG weights, making the default
    ``sqrt(Pass@k · mG-Pass@k)`` (GeoSpectrum*@k). ``lambda_`` is an alias of ``lam``.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(geo_spectrum_at_k(R, 3), 6), round(geo_spectrum_at_k(R, 3, lam=1.0), 6)
    (0.408248, 1.0)
    """
    return _geo_spectrum(binary_bank_from_matrix(R), k, lam, weights, lambda_)


def geo_spectrum_at_k_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    lam: float = 0.5,
    weights: Weights = None,
    lambda_: float | None = None,
) -> float:
    """:func:`geo_spectrum_at_k` from counts (a suite value).

    >>> round(geo_spectrum_at_k_counts([5, 5], [3, 4], 3), 6)
    0.408248
    """
    return _geo_spectrum(binary_bank_from_counts(n, c), k, lam, weights, lambda_)


def geo_spectrum_star_at_k(R: npt.ArrayLike, k: int) -> float:
    """GeoSpectrum*@k = ``sqrt(Pass@k · mG-Pass@k)``: :func:`geo_spectrum_at_k` defaults.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(geo_spectrum_star_at_k(R, 3), 6)
    0.408248
    """
    return geo_spectrum_at_k(R, k)


def geo_spectrum_star_at_k_counts(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> float:
    """:func:`geo_spectrum_star_at_k` from counts (a suite value).

    >>> round(geo_spectrum_star_at_k_counts([5, 5], [3, 4], 3), 6)
    0.408248
    """
    return geo_spectrum_at_k_counts(n, c, k)


def _geo_spectrum_ci(
    bank: BinaryBank,
    k: Any,
    lam: Any,
    weights: Any,
    lambda_: Any,
    confidence: Any,
    bounds: Any,
    alpha0: Any,
    beta0: Any,
) -> CIResult:
    lam_f = check_lambda(lam, lambda_)
    k_int = bank.check_latent_k(k)
    values = spectrum_score(mg_spectrum_weights(k_int) if weights is None else weights, k_int)
    level = check_confidence(confidence)
    clip = check_bounds(bounds)
    if lam_f in (0.0, 1.0):
        a, b = bank.posterior(*check_prior(alpha0, beta0))
        means, variances = posterior_score(a, b, pass_score(k_int) if lam_f == 1.0 else values)
        return ci_result(bank.mean(means), bank.mean_sd(variances), level, clip)
    mu, sigma = _suite_delta(bank, pass_score(k_int), values, lam_f, 1.0 - lam_f, alpha0, beta0)
    return ci_result(mu, sigma, level, clip)


def geo_spectrum_at_k_ci(
    R: npt.ArrayLike,
    k: int,
    lam: float = 0.5,
    weights: Weights = None,
    lambda_: float | None = None,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """Approximate posterior summary of latent GeoSpectrum_{λ,w}@k (delta method).

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(geo_spectrum_at_k_ci(R, 3).mu, 6)
    0.447288
    """
    bank = binary_bank_from_matrix(R)
    return _geo_spectrum_ci(bank, k, lam, weights, lambda_, confidence, bounds, alpha0, beta0)


def geo_spectrum_at_k_ci_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    lam: float = 0.5,
    weights: Weights = None,
    lambda_: float | None = None,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """:func:`geo_spectrum_at_k_ci` from counts.

    >>> round(geo_spectrum_at_k_ci_counts([5, 5], [3, 4], 3).mu, 6)
    0.447288
    """
    bank = binary_bank_from_counts(n, c)
    return _geo_spectrum_ci(bank, k, lam, weights, lambda_, confidence, bounds, alpha0, beta0)


def geo_spectrum_star_at_k_ci(
    R: npt.ArrayLike,
    k: int,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """Posterior summary of GeoSpectrum*@k: :func:`geo_spectrum_at_k_ci` with its defaults.

    >>> import numpy as np
    >>> R = np.array([[0, 1, 1, 0, 1],
    ...               [1, 1, 0, 1, 1]])
    >>> round(geo_spectrum_star_at_k_ci(R, 3).mu, 6)
    0.447288
    """
    return geo_spectrum_at_k_ci(
        R, k, confidence=confidence, bounds=bounds, alpha0=alpha0, beta0=beta0
    )


def geo_spectrum_star_at_k_ci_counts(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    confidence: float = 0.95,
    bounds: Bounds = UNIT,
    alpha0: float = 1.0,
    beta0: float = 1.0,
) -> CIResult:
    """:func:`geo_spectrum_star_at_k_ci` from counts.

    >>> round(geo_spectrum_star_at_k_ci_counts([5, 5], [3, 4], 3).mu, 6)
    0.447288
    """
    return geo_spectrum_at_k_ci_counts(
        n, c, k, confidence=confidence, bounds=bounds, alpha0=alpha0, beta0=beta0
    )
