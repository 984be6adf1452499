"""Numeric kernels shared by the metrics. Inputs are trusted (checked upstream).

The kernels work on *unique* (n, c) pairs: an eval suite has thousands of
stimuli but only a handful of distinct (trials, passes) combinations, so every
per-stimulus formula is evaluated once per distinct pair and scattered back.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._special import betaln, gammaln

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Cap on the temporary (rows × terms) matrices, in elements (8 MiB of float64).
_CHUNK_ELEMENTS = 1 << 20


class CountGroups(NamedTuple):
    """Distinct (n, c) pairs of a suite and how to map them back to stimuli.

    ``inverse`` maps each stimulus to its pair; ``frequency`` counts stimuli per
    pair, so a suite mean is ``(value * frequency).sum() / M`` without scattering.
    """

    n: IntArray
    c: IntArray
    inverse: IntArray
    frequency: IntArray


def distinct_values(values: npt.ArrayLike) -> tuple[IntArray, IntArray, IntArray]:
    """(the distinct values, sorted; each element's index among them, in ``values``'s
    shape; how many elements hold each): a histogram in linear time when the values are
    non-negative and small next to the array, else a sort."""
    array = np.asarray(values, dtype=np.int64)
    flat = array.ravel()
    largest = int(flat.max())
    if flat.min() >= 0 and largest + 1 <= 4 * flat.size:
        histogram = np.bincount(flat, minlength=largest + 1)
        present = np.flatnonzero(histogram)
        # Map each value to its rank among the present values.
        rank = np.zeros(largest + 1, dtype=np.int64)
        rank[present] = np.arange(present.size)
        return present.astype(np.int64), rank[array], histogram[present].astype(np.int64)
    distinct, inverse, frequency = np.unique(flat, return_inverse=True, return_counts=True)
    return (
        distinct.astype(np.int64),
        inverse.astype(np.int64).reshape(array.shape),
        frequency.astype(np.int64),
    )


def group_counts(n: IntArray, c: IntArray) -> CountGroups:
    """Distinct (n, c) pairs; linear-time histogram when n is shared."""
    n_flat = np.ravel(n)
    c_flat = np.ravel(c)
    n_max = int(n_flat.max())
    if n_max == int(n_flat.min()):
        present, inverse, frequency = distinct_values(c_flat)
        return CountGroups(
            n=np.full(present.size, n_max, dtype=np.int64),
            c=present,
            inverse=inverse,
            frequency=frequency,
        )
    key = n_flat * (int(c_flat.max()) + 1) + c_flat
    _, first, inverse, frequency = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    return CountGroups(
        n=n_flat[first].astype(np.int64),
        c=c_flat[first].astype(np.int64),
        inverse=inverse.astype(np.int64).ravel(),
        frequency=frequency.astype(np.int64),
    )


def _log1m_ratio(removed: FloatArray | float, denom: FloatArray) -> FloatArray:
    """``log(1 - removed/denom)`` to full relative precision for integer-valued inputs.

    Near 0 the ``log1p`` form keeps the digits; near ``-inf`` (``removed`` close to
    ``denom``, e.g. pass^k with c much smaller than n) ``1 - x`` cancels, and the
    exact difference ``(denom - removed)/denom`` of two integers does not.
    """
    x = removed / denom
    with np.errstate(divide="ignore", invalid="ignore"):
        result: FloatArray = np.where(x <= 0.5, np.log1p(-x), np.log((denom - removed) / denom))
    return result


def log_comb_ratio(n: IntArray, m: IntArray, k: int) -> FloatArray:
    """``log(C(n-m, k) / C(n, k))`` elementwise; ``-inf`` where ``n - m < k``.

    Two exact product forms exist (statistics.md §3)::

        C(n-m, k)/C(n, k) = prod_{j<k} (1 - m/(n-j)) = prod_{i=n-m+1}^{n} (1 - k/i)

    The shorter one is summed term by term (:func:`_log1m_ratio`), which keeps full
    relative precision where ratios of ``comb`` overflow and differences of
    ``gammaln`` cancel, for c close to n and for c much smaller than n alike.
    """
    n_f = np.asarray(n, dtype=np.float64).ravel()
    m_f = np.asarray(m, dtype=np.float64).ravel()
    out = np.full(n_f.shape, -np.inf)
    feasible = (n_f - m_f) >= k
    if not feasible.any():
        return out.reshape(np.shape(n))
    n_ok = n_f[feasible]
    m_ok = m_f[feasible]
    longest_m = int(m_ok.max())
    result = np.empty(n_ok.shape)
    if k <= longest_m:
        terms = k
        step = np.arange(terms, dtype=np.float64)
        rows = max(1, _CHUNK_ELEMENTS // terms)
        for start in range(0, n_ok.size, rows):
            stop = start + rows
            denom = n_ok[start:stop, None] - step
            result[start:stop] = _log1m_ratio(m_ok[start:stop, None], denom).sum(axis=1)
    else:
        terms = longest_m
        step = np.arange(terms, dtype=np.float64)
        rows = max(1, _CHUNK_ELEMENTS // max(terms, 1))
        for start in range(0, n_ok.size, rows):
            stop = start + rows
            i = n_ok[start:stop, None] - step
            used = step < m_ok[start:stop, None]
            # i >= n-m+1 > k on used terms, so log1p stays finite.
            safe_i = np.where(used, i, np.inf)
            result[start:stop] = np.where(used, _log1m_ratio(float(k), safe_i), 0.0).sum(axis=1)
    out[feasible] = result
    return out.reshape(np.shape(n))


def pass_at_k_values(n: IntArray, c: IntArray, k: int) -> FloatArray:
    """Unbiased pass@k, ``1 - C(n-c, k)/C(n, k)``, elementwise."""
    # 0.0 - x rather than -x: no negative zero for c = 0.
    result: FloatArray = 0.0 - np.expm1(log_comb_ratio(n, c, k))
    return result


def pass_curve_values(n: IntArray, c: IntArray, k: int) -> FloatArray:
    """Unbiased pass@m for every budget m = 1..k at once; shape (U, k).

    ``log C(n-c, m)/C(n, m)`` is the running sum of ``log1p(-c/(n-j))`` over
    j < m, so one cumulative sum yields the whole curve.
    """
    n_col = np.asarray(n, dtype=np.float64).reshape(-1, 1)
    c_col = np.asarray(c, dtype=np.float64).reshape(-1, 1)
    j = np.arange(k, dtype=np.float64)
    feasible = j < n_col - c_col
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(feasible, np.log1p(-c_col / (n_col - j)), -np.inf)
    result: FloatArray = 0.0 - np.expm1(np.cumsum(terms, axis=1))
    return result


def pass_hat_k_values(n: IntArray, c: IntArray, k: int) -> FloatArray:
    """Unbiased pass^k, ``C(c, k)/C(n, k)``, elementwise (0 when c < k)."""
    return np.exp(log_comb_ratio(n, np.asarray(n) - np.asarray(c), k))


def log_comb(n: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    """``log C(n, k)`` elementwise; ``-inf`` outside ``0 <= k <= n``."""
    n_f = np.asarray(n, dtype=np.float64)
    k_f = np.asarray(k, dtype=np.float64)
    valid = (k_f >= 0) & (k_f <= n_f)
    with np.errstate(invalid="ignore"):
        value = gammaln(n_f + 1) - gammaln(k_f + 1) - gammaln(np.maximum(n_f - k_f, 0) + 1)
    return np.where(valid, value, -np.inf)


@functools.lru_cache(maxsize=8)
def _log_factorials(size: int) -> FloatArray:
    """``log(i!)`` for ``i < size`` (cached: suites reuse the same few trial counts)."""
    table: FloatArray = gammaln(np.arange(size, dtype=np.float64) + 1.0)
    table.setflags(write=False)
    return table


_TABLE_LIMIT = 1 << 16


def log_factorial(values: npt.ArrayLike) -> FloatArray:
    """``log(v!)`` elementwise for non-negative integers ``v``: lookups in a cached table
    of ``gammaln(i + 1)`` below ``_TABLE_LIMIT``, ``gammaln`` itself above.

    The same values as ``gammaln(v + 1)``, at the cost of a gather: a per-stimulus
    simulation asks for nine of them on each of millions of tables per step.
    """
    array = np.asarray(values, dtype=np.int64)
    largest = int(array.max()) if array.size else 0
    if largest < _TABLE_LIMIT:
        table = _log_factorials(1 << max(largest + 1, 16).bit_length())
        return np.asarray(table[array], dtype=np.float64)
    return np.asarray(gammaln(array.astype(np.float64) + 1.0), dtype=np.float64)


def hypergeometric_pmf(n: IntArray, c: IntArray, k: int) -> FloatArray:
    """``P(X = j)``, ``j = 0..k``, for X ~ Hypergeometric(n, c, k); shape (U, k+1).

    X is the number of passing trials in a size-k subset drawn without
    replacement from a stimulus with c passes in n trials.
    """
    n_col = np.asarray(n, dtype=np.int64).reshape(-1, 1)
    c_col = np.asarray(c, dtype=np.int64).reshape(-1, 1)
    n_max = int(n_col.max()) if n_col.size else 0
    if n_max < _TABLE_LIMIT:
        # Table lookups instead of nine gammaln calls per entry.
        table = _log_factorials(1 << max(n_max + 1, 16).bit_length())
        j = np.arange(k + 1, dtype=np.int64)
        fails = n_col - c_col
        valid = (j <= c_col) & (k - j <= fails)
        c_minus_j = np.where(valid, c_col - j, 0)
        rest = np.where(valid, fails - (k - j), 0)
        log_pmf: FloatArray = (
            table[c_col]
            - table[j]
            - table[c_minus_j]
            + table[fails]
            - table[k - j]
            - table[rest]
            - (table[n_col] - table[k] - table[n_col - k])
        )
        log_pmf = np.where(valid, log_pmf, -np.inf)
    else:
        n_f = n_col.astype(np.float64)
        c_f = c_col.astype(np.float64)
        j_f = np.arange(k + 1, dtype=np.float64)
        log_pmf = log_comb(c_f, j_f) + log_comb(n_f - c_f, k - j_f) - log_comb(n_f, float(k))
    pmf = np.exp(log_pmf)
    # gammaln carries ~1e-14 relative error; renormalising keeps the total at 1.
    result: FloatArray = pmf / pmf.sum(axis=1, keepdims=True)
    return result


def beta_binomial_pmf(degree: int, a: FloatArray, b: FloatArray) -> FloatArray:
    """``P(J = j)``, ``j = 0..degree``, for J ~ BetaBinomial(degree, a, b); shape (U, degree+1).

    This is the posterior-predictive count of passes in ``degree`` fresh trials
    when p ~ Beta(a, b), so ``E[sum_j v_j C(K,j) p^j (1-p)^(K-j)] = pmf @ v``.
    """
    a_col = np.asarray(a, dtype=np.float64).reshape(-1, 1)
    b_col = np.asarray(b, dtype=np.float64).reshape(-1, 1)
    j = np.arange(degree + 1, dtype=np.float64)
    log_pmf = (
        log_comb(float(degree), j) + betaln(a_col + j, b_col + (degree - j)) - betaln(a_col, b_col)
    )
    pmf = np.exp(log_pmf)
    result: FloatArray = pmf / pmf.sum(axis=1, keepdims=True)
    return result


def log_beta_power_moment(a: FloatArray, b: FloatArray, power: int) -> FloatArray:
    """``log E[p^power]`` for p ~ Beta(a, b), elementwise.

    ``E[p^j] = prod_{i<j} (a+i)/(a+b+i)``; summed as ``-log1p(b/(a+i))`` so the
    result keeps relative precision even when it is tiny. Very large powers
    fall back to ``betaln`` differences.
    """
    a_f = np.asarray(a, dtype=np.float64)
    b_f = np.asarray(b, dtype=np.float64)
    if power == 0:
        return np.zeros(np.broadcast_shapes(a_f.shape, b_f.shape))
    if power > 4096:
        result: FloatArray = betaln(a_f + power, b_f) - betaln(a_f, b_f)
        return result
    a_flat, b_flat = (x.ravel() for x in np.broadcast_arrays(a_f, b_f))
    out = np.empty(a_flat.shape)
    step = np.arange(power, dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // power)
    for start in range(0, a_flat.size, rows):
        stop = start + rows
        ratios = b_flat[start:stop, None] / (a_flat[start:stop, None] + step)
        out[start:stop] = -np.log1p(ratios).sum(axis=1)
    return out.reshape(np.broadcast_shapes(a_f.shape, b_f.shape))


def bernstein_product(u: FloatArray, v: FloatArray) -> FloatArray:
    """Degree-2k Bernstein coefficients of the product of two degree-k polynomials.

    If ``f(p) = sum_i u_i C(k,i) p^i (1-p)^(k-i)`` and g likewise with v, then
    ``f g = sum_t w_t C(2k,t) p^t (1-p)^(2k-t)`` with
    ``w_t = sum_{i+j=t} u_i v_j C(k,i) C(k,j) / C(2k,t)``.
    """
    k = u.size - 1
    i = np.arange(k + 1, dtype=np.float64)
    total = i[:, None] + i[None, :]
    # C(k,i) C(k,j) / C(2k,i+j) is a hypergeometric probability, so it never overflows.
    mix = np.exp(
        log_comb(float(k), i)[:, None]
        + log_comb(float(k), i)[None, :]
        - log_comb(float(2 * k), total)
    )
    terms = (u[:, None] * v[None, :]) * mix
    summed = np.bincount(total.astype(np.int64).ravel(), weights=terms.ravel(), minlength=2 * k + 1)
    return np.asarray(summed, dtype=np.float64)


ScoreKind = str  # "constant", "pass", "unanimous" or "general"


def score_kind(values: FloatArray) -> ScoreKind:
    """Recognise the two endpoint scores, which have exact closed forms."""
    if np.all(values == values[0]):
        return "constant"
    if values[0] == 0.0 and np.all(values[1:] == 1.0):
        return "pass"
    if values[-1] == 1.0 and np.all(values[:-1] == 0.0):
        return "unanimous"
    return "general"


def finite_score(n: IntArray, c: IntArray, values: FloatArray) -> FloatArray:
    """Unbiased finite-sample estimate of ``E[v(X)]``, X ~ Hypergeometric(n, c, k).

    ``values[j]`` is the score of a size-k subset holding j passes; k = len-1.
    Evaluated per (n, c) pair. pass@k and pass^k use the stable product forms.
    """
    k = values.size - 1
    kind = score_kind(values)
    if kind == "constant":
        return np.full(np.shape(n), float(values[0]))
    if kind == "pass":
        return pass_at_k_values(n, c, k)
    if kind == "unanimous":
        return pass_hat_k_values(n, c, k)
    n_flat = np.ravel(n)
    c_flat = np.ravel(c)
    out = np.empty(n_flat.shape)
    rows = max(1, _CHUNK_ELEMENTS // (k + 1))
    for start in range(0, n_flat.size, rows):
        stop = start + rows
        out[start:stop] = hypergeometric_pmf(n_flat[start:stop], c_flat[start:stop], k) @ values
    return out.reshape(np.shape(n))


def _power_variance(log_first: FloatArray, log_second: FloatArray) -> FloatArray:
    """``E[X^2] - E[X]^2`` from logs, as ``e^{l2}·(-expm1(2 l1 - l2))`` (no cancellation)."""
    with np.errstate(invalid="ignore"):
        gap = np.minimum(2.0 * log_first - log_second, 0.0)
        result: FloatArray = np.exp(log_second) * -np.expm1(gap)
    return np.where(np.isfinite(result), result, 0.0)


def posterior_score(
    a: FloatArray, b: FloatArray, values: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Posterior mean and variance of ``g(p) = sum_j v_j C(k,j) p^j (1-p)^(k-j)``, p ~ Beta(a, b).

    g(p) is the latent (i.i.d.-trials) value of the score; its moments are
    Beta-binomial expectations of v and of the Bernstein square of v.
    """
    k = values.size - 1
    kind = score_kind(values)
    if kind == "constant":
        return np.full(a.shape, float(values[0])), np.zeros(a.shape)
    if kind == "pass":
        log_miss = log_beta_power_moment(b, a, k)
        mean = 0.0 - np.expm1(log_miss)
        return mean, _power_variance(log_miss, log_beta_power_moment(b, a, 2 * k))
    if kind == "unanimous":
        log_all = log_beta_power_moment(a, b, k)
        return np.exp(log_all), _power_variance(log_all, log_beta_power_moment(a, b, 2 * k))
    mean = beta_binomial_pmf(k, a, b) @ values
    second = beta_binomial_pmf(2 * k, a, b) @ bernstein_product(values, values)
    return mean, np.maximum(second - mean * mean, 0.0)


def posterior_score_covariance(
    a: FloatArray,
    b: FloatArray,
    left: FloatArray,
    right: FloatArray,
    left_mean: FloatArray,
    right_mean: FloatArray,
) -> FloatArray:
    """Posterior covariance of two latent scores of the same degree under Beta(a, b)."""
    k = left.size - 1
    kinds = {score_kind(left), score_kind(right)}
    if "constant" in kinds:
        return np.zeros(a.shape)
    if kinds == {"pass", "unanimous"}:
        # Cov(1-q^k, p^k) = E[p^k]E[q^k] - E[p^k q^k] >= 0.
        log_p = log_beta_power_moment(a, b, k)
        log_q = log_beta_power_moment(b, a, k)
        log_mixed = log_p + log_beta_power_moment(b, a + k, k)
        independent = log_p + log_q
        with np.errstate(invalid="ignore"):
            cov = np.exp(independent) * -np.expm1(np.minimum(log_mixed - independent, 0.0))
        return np.where(np.isfinite(cov), cov, 0.0)
    cross = beta_binomial_pmf(2 * k, a, b) @ bernstein_product(left, right)
    result: FloatArray = cross - left_mean * right_mean
    return result


def unique_rows(matrix: FloatArray) -> tuple[FloatArray, IntArray, IntArray]:
    """Distinct rows of a small-integer matrix, with inverse and counts."""
    ints = matrix.astype(np.int64)
    bases = ints.max(axis=0) + 1
    if float(np.prod(bases.astype(np.float64))) < 2.0**62:
        # Mixed-radix key: one 1-D unique instead of a lexicographic row sort.
        multipliers = np.concatenate(([1], np.cumprod(bases[:-1])))
        key = ints @ multipliers
        span = int(np.prod(bases))
        if span <= 4 * ints.shape[0]:
            # Small key range: a linear-time histogram instead of a sort.
            histogram = np.bincount(key, minlength=span)
            present = np.flatnonzero(histogram)
            rank = np.zeros(span, dtype=np.int64)
            rank[present] = np.arange(present.size)
            inverse = rank[key]
            # Any row with a given key will do as its representative: they are equal.
            representative = np.zeros(present.size, dtype=np.int64)
            representative[inverse] = np.arange(key.size)
            return matrix[representative], inverse, histogram[present].astype(np.int64)
        _, first, inverse, frequency = np.unique(
            key, return_index=True, return_inverse=True, return_counts=True
        )
        return matrix[first], inverse.ravel().astype(np.int64), frequency.astype(np.int64)
    rows, inverse, frequency = np.unique(ints, axis=0, return_inverse=True, return_counts=True)
    return rows.astype(np.float64), inverse.ravel().astype(np.int64), frequency.astype(np.int64)


def normal_interval(
    mu: float, sigma: float, confidence_z: float, bounds: tuple[float, float] | None
) -> tuple[float, float]:
    """Central normal interval ``mu ± z·sigma``, clipped to ``bounds`` if given."""
    lo = mu - confidence_z * sigma
    hi = mu + confidence_z * sigma
    if bounds is not None:
        lo = min(max(lo, bounds[0]), bounds[1])
        hi = min(max(hi, bounds[0]), bounds[1])
    return lo, hi
