"""``scipy.special`` functions, imported on first use; the normal distribution and the
regularized incomplete beta function without SciPy.

Importing ``scipy.special`` pulls in SciPy's array-API layer, which imports most
of numpy's submodules (f2py, testing, polynomial): about 0.12-0.3 s here, more
than the rest of a small ``eval-gate check``. The default path (mid-p intervals,
pass@k/pass^k from counts) needs none of it, so the import waits until a Beta
quantile, a log-gamma or a Student t is actually asked for. The default interval
needs binomial tail probabilities, i.e. the regularized incomplete beta function;
:func:`betainc_pair` computes it with numpy and the standard library (checked
against ``scipy.special.betainc`` in ``tests/metrics/test_metrics_special.py``).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_STANDARD_NORMAL = NormalDist()
_LOG_GAMMA = np.frompyfunc(math.lgamma, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_EPSILON = float(np.finfo(np.float64).eps)
_TINY = 1e-300
#: Up to this many entries the continued fraction runs in floats, not numpy arrays.
_FLOAT_LOOP_SIZE = 8
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: Coefficients of 1/x, 1/x³, … in Stirling's series for log Gamma (DLMF 5.11.1), highest
#: power first for Horner's rule.
_STIRLING_SERIES = (
    -3617.0 / 122400.0,
    1.0 / 156.0,
    -691.0 / 360360.0,
    1.0 / 1188.0,
    -1.0 / 1680.0,
    1.0 / 1260.0,
    -1.0 / 360.0,
    1.0 / 12.0,
)
#: Terms of the continued fraction before falling back to SciPy. It needs about
#: sqrt(max(a, b)) terms, so this covers a and b up to ~10^6 (trials per stimulus, or
#: n_eff of a suite); past that the fallback pays the SciPy import.
_FRACTION_TERMS = 3000


def normal_quantile(p: float) -> float:
    """``Phi^{-1}(p)`` (Wichura's AS 241, full double precision, as ``scipy.special.ndtri``).

    >>> round(normal_quantile(0.975), 6)
    1.959964
    """
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _STANDARD_NORMAL.inv_cdf(p)


def betaincinv(a: npt.ArrayLike, b: npt.ArrayLike, y: npt.ArrayLike) -> Any:
    """``scipy.special.betaincinv``: the ``y`` quantile of Beta(a, b)."""
    from scipy.special import betaincinv as function

    return function(a, b, y)


def betaln(a: npt.ArrayLike, b: npt.ArrayLike) -> Any:
    """``scipy.special.betaln``: ``log B(a, b)``."""
    from scipy.special import betaln as function

    return function(a, b)


def gammaln(x: npt.ArrayLike) -> Any:
    """``scipy.special.gammaln``: ``log |Gamma(x)|``."""
    from scipy.special import gammaln as function

    return function(x)


def stdtr(df: npt.ArrayLike, t: npt.ArrayLike) -> Any:
    """``scipy.special.stdtr``: the Student t CDF."""
    from scipy.special import stdtr as function

    return function(df, t)


def stdtrit(df: npt.ArrayLike, p: npt.ArrayLike) -> Any:
    """``scipy.special.stdtrit``: the Student t quantile."""
    from scipy.special import stdtrit as function

    return function(df, p)


def betainc(a: npt.ArrayLike, b: npt.ArrayLike, x: npt.ArrayLike) -> Any:
    """``scipy.special.betainc``: the regularized incomplete beta ``I_x(a, b)``."""
    from scipy.special import betainc as function

    return function(a, b, x)


def ndtr(x: npt.ArrayLike) -> Any:
    """``scipy.special.ndtr``: the standard normal CDF."""
    from scipy.special import ndtr as function

    return function(x)


def normal_cdf(x: npt.ArrayLike) -> FloatArray:
    """``Phi(x)`` elementwise, as ``0.5·erfc(-x/sqrt 2)`` (stdlib ``math.erfc``; no SciPy).

    >>> round(float(normal_cdf(-1.959963984540054)), 6)
    0.025
    """
    values = np.asarray(x, dtype=np.float64)
    result: FloatArray = 0.5 * np.asarray(_ERFC(-values / math.sqrt(2.0)), dtype=np.float64)
    return result


def log_gamma(x: npt.ArrayLike) -> FloatArray:
    """``log Gamma(x)`` for x > 0 elementwise (stdlib ``math.lgamma``; no SciPy).

    Elementwise Python calls: use it on the few distinct values of a suite, not on
    millions of entries.
    """
    result: FloatArray = np.asarray(_LOG_GAMMA(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return result


def _beta_fraction(a: FloatArray, b: FloatArray, x: FloatArray) -> tuple[FloatArray, Any]:
    """The continued fraction of I_x(a, b) (modified Lentz; Numerical Recipes §6.4).

    Converges fast for x < (a+1)/(a+b+2). Returns the fraction and a mask of the
    entries that had not converged after ``_FRACTION_TERMS`` terms. A few entries
    (a suite interval, one stimulus) go through plain floats: numpy's per-call cost
    would dominate there.
    """
    if x.size <= _FLOAT_LOOP_SIZE:
        entries = zip(a.tolist(), b.tolist(), x.tolist(), strict=True)
        pairs = [_beta_fraction_float(*entry) for entry in entries]
        fraction = np.array([value for value, _ in pairs], dtype=np.float64)
        return fraction, np.array([not done for _, done in pairs], dtype=bool)
    total = a + b
    d = 1.0 - total * x / (a + 1.0)
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    c = np.ones_like(x)
    fraction = d.copy()
    active = np.arange(x.size)
    for m in range(1, _FRACTION_TERMS + 1):
        aa, bb, xx = a[active], b[active], x[active]
        dd, cc = d[active], c[active]
        two_m = 2.0 * m
        for numerator in (
            m * (bb - m) * xx / ((aa + two_m - 1.0) * (aa + two_m)),
            -(aa + m) * (aa + bb + m) * xx / ((aa + two_m) * (aa + two_m + 1.0)),
        ):
            dd = 1.0 + numerator * dd
            dd = 1.0 / np.where(np.abs(dd) < _TINY, _TINY, dd)
            cc = 1.0 + numerator / cc
            cc = np.where(np.abs(cc) < _TINY, _TINY, cc)
            delta = dd * cc
            fraction[active] *= delta
        d[active], c[active] = dd, cc
        keep = np.abs(delta - 1.0) > _EPSILON
        active = active[keep]
        if active.size == 0:
            break
    unconverged = np.zeros(x.shape, dtype=bool)
    unconverged[active] = True
    return fraction, unconverged


def _beta_fraction_float(a: float, b: float, x: float) -> tuple[float, bool]:
    """:func:`_beta_fraction` for one entry, in floats (the same recurrence)."""
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) >= _TINY else _TINY)
    c = 1.0
    fraction = d
    for m in range(1, _FRACTION_TERMS + 1):
        two_m = 2.0 * m
        for numerator in (
            m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m)),
            -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) >= _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) >= _TINY else _TINY
            delta = d * c
            fraction *= delta
        if abs(delta - 1.0) <= _EPSILON:
            return fraction, True
    return fraction, False


def _stirling_error(x: FloatArray) -> FloatArray:
    """``log Gamma(x) - [(x - 1/2)·log x - x + log(2π)/2]``, accurate for every x > 0.

    From x = 10 on, the asymptotic series (DLMF 5.11.1; the next term is below 1e-17);
    below it, ``math.lgamma`` minus Stirling's formula, whose terms are small there.
    """
    large = x >= 10.0
    big = np.where(large, x, 10.0)
    inverse_square = 1.0 / (big * big)
    series = np.zeros_like(big)
    for coefficient in _STIRLING_SERIES:
        series = series * inverse_square + coefficient
    series = series / big
    result: FloatArray = np.array(series, dtype=np.float64)
    small = ~large
    if small.any():
        x_small = x[small]
        result[small] = log_gamma(x_small) - (
            (x_small - 0.5) * np.log(x_small) - x_small + _HALF_LOG_2PI
        )
    return result


def log_beta_front(a: FloatArray, b: FloatArray, x: FloatArray) -> FloatArray:
    """``log[x^a (1-x)^b / B(a, b)]`` for 0 < x < 1 without cancelling large terms.

    With s = a + b and Stirling's formula for the three Gamma functions,
    ``a·log(xs/a) + b·log((1-x)s/b) + log(ab/s)/2 - log(2π)/2 - δ(a) - δ(b) + δ(s)``
    (δ: :func:`_stirling_error`). Near the mode, d = xs - a is small and the two
    logarithms are taken as ``log1p(±d/·)``, whose first-order terms cancel exactly;
    ``a·log x + b·log(1-x) - log B(a, b)`` would lose ~1e-10 at a, b ~ 10^6.
    """
    total = a + b
    d = x * total - a
    near_a = np.abs(d) < 0.5 * a
    near_b = np.abs(d) < 0.5 * b
    term_a = a * np.where(
        near_a, np.log1p(np.where(near_a, d / a, 0.0)), np.log(x) + np.log(total / a)
    )
    term_b = b * np.where(
        near_b, np.log1p(np.where(near_b, -d / b, 0.0)), np.log1p(-x) + np.log(total / b)
    )
    result: FloatArray = (
        term_a
        + term_b
        + 0.5 * np.log(a * b / total)
        - _HALF_LOG_2PI
        - _stirling_error(a)
        - _stirling_error(b)
        + _stirling_error(total)
    )
    return result


def betainc_pair(
    a: npt.ArrayLike, b: npt.ArrayLike, x: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """``(I_x(a, b), 1 - I_x(a, b))``, each to near full relative precision; no SciPy.

    The regularized incomplete beta function (DLMF 8.17.2) for a, b > 0 and
    0 <= x <= 1, broadcast over the three arguments; with integer a, b it is the
    binomial tail ``P(X >= a | X ~ Bin(a+b-1, x))``. The continued fraction DLMF
    8.17.22 is evaluated on the side where it converges fast (x < (a+1)/(a+b+2),
    else for ``I_{1-x}(b, a)``), and the smaller of the two results is the one
    computed directly, so a tail probability of 1e-30 keeps its digits. Past a
    million or so in a or b the fraction is slow and ``scipy.special.betainc``
    finishes those entries.

    >>> lower, upper = betainc_pair(2.0, 4.0, 0.25)   # P(X >= 2), X ~ Bin(5, 1/4)
    >>> round(float(lower), 12), round(float(upper), 12)
    (0.3671875, 0.6328125)
    """
    lower, upper, _ = betainc_parts(a, b, x)
    return lower, upper


def betainc_parts(
    a: npt.ArrayLike, b: npt.ArrayLike, x: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`betainc_pair` and ``log[x^a (1-x)^b / B(a, b)]`` (-inf at x = 0 or 1).

    The third value, the log of the Beta density's prefactor, is a by-product; the
    binomial tails use it for ``P(X = c)`` without computing it again.
    """
    a_arr, b_arr, x_arr = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(a, b, x))
    shape = x_arr.shape
    a_flat, b_flat, x_flat = a_arr.ravel(), b_arr.ravel(), x_arr.ravel()
    swap = x_flat > (a_flat + 1.0) / (a_flat + b_flat + 2.0)
    first = np.where(swap, b_flat, a_flat)
    second = np.where(swap, a_flat, b_flat)
    inner = np.where(swap, 1.0 - x_flat, x_flat)
    interior = (x_flat > 0.0) & (x_flat < 1.0)
    log_front = log_beta_front(a_flat, b_flat, np.where(interior, x_flat, 0.5))
    fraction, unconverged = _beta_fraction(first, second, np.where(interior, inner, 0.0))
    direct = np.exp(log_front) * fraction / first
    if unconverged.any():
        from scipy.special import betainc as scipy_betainc

        direct[unconverged] = scipy_betainc(
            first[unconverged], second[unconverged], inner[unconverged]
        )
    direct = np.clip(direct, 0.0, 1.0)
    lower = np.where(swap, 1.0 - direct, direct)
    upper = np.where(swap, direct, 1.0 - direct)
    # The end points exactly: I_0 = 0 and I_1 = 1.
    lower = np.where(x_flat <= 0.0, 0.0, np.where(x_flat >= 1.0, 1.0, lower))
    upper = np.where(x_flat <= 0.0, 1.0, np.where(x_flat >= 1.0, 0.0, upper))
    log_front = np.where(interior, log_front, -np.inf)
    return lower.reshape(shape), upper.reshape(shape), log_front.reshape(shape)
