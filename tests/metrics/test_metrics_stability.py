"""Numerical stability (statistics.md §3) against exact big-integer references."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from gate import metrics

HARD_CASES = [(10**6, 1, 1), (10**6, 10, 1000), (10**5, 2, 5 * 10**4)]


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def exact_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(comb(c, k), comb(n, k))


def relative_error(value: float, exact: Fraction) -> float:
    if exact == 0:
        return abs(value)
    return float(abs(Fraction(value) - exact) / exact)


@pytest.mark.parametrize(("n", "c", "k"), HARD_CASES)
def test_pass_at_k_hard_cases(n: int, c: int, k: int) -> None:
    value = float(metrics.pass_at_k_counts(n, c, k))
    assert np.isfinite(value)
    assert relative_error(value, exact_pass_at_k(n, c, k)) <= 1e-12


@pytest.mark.parametrize(("n", "c", "k"), HARD_CASES)
def test_pass_hat_k_hard_cases_on_the_complement(n: int, c: int, k: int) -> None:
    # C(n-c, k)/C(n, k) is pass^k of the complement; it is the tiny-ratio side.
    value = float(metrics.pass_hat_k_counts(n, n - c, k))
    assert np.isfinite(value)
    assert relative_error(value, exact_pass_hat_k(n, n - c, k)) <= 1e-12


@pytest.mark.parametrize(
    ("n", "c", "k"), [(10**6, 999_000, 500), (10**5, 99_990, 5), (2_000, 1_990, 1_000)]
)
def test_pass_hat_k_tiny_and_large_values(n: int, c: int, k: int) -> None:
    value = float(metrics.pass_hat_k_counts(n, c, k))
    assert relative_error(value, exact_pass_hat_k(n, c, k)) <= 1e-12


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [(10**6, 1, 1), (10**6, 10, 5), (10**5, 2, 2), (1_000, 500, 20), (50, 3, 3), (10**6, 3, 2)],
)
def test_pass_hat_k_few_passes_among_many_trials(n: int, c: int, k: int) -> None:
    # c much smaller than n: each factor (c-j)/(n-j) is tiny, and 1 - (n-c)/(n-j) cancels;
    # the exact integer ratio keeps the digits (statistics.md §3, pass^k form).
    value = float(metrics.pass_hat_k_counts(n, c, k))
    assert relative_error(value, exact_pass_hat_k(n, c, k)) <= 1e-14
    matrix = np.zeros((1, 50), dtype=int)
    if n == 50:
        matrix[0, :c] = 1
        assert (
            relative_error(float(metrics.pass_hat_k(matrix, k)), exact_pass_hat_k(n, c, k)) <= 1e-14
        )


def test_ragged_vector_of_hard_cases_never_nan() -> None:
    n = np.array([10**6, 10**6, 10**5, 10**6, 7])
    c = np.array([1, 10, 2, 0, 7])
    at = metrics.pass_at_k_counts(n, c, 1)
    assert np.all(np.isfinite(at))
    big_k = metrics.pass_at_k_counts(n[:3], c[:3], 1000)
    for value, (nn, cc) in zip(big_k, zip(n[:3], c[:3], strict=True), strict=True):
        assert relative_error(float(value), exact_pass_at_k(int(nn), int(cc), 1000)) <= 1e-12


def test_n_minus_c_below_k_is_exactly_one() -> None:
    # The common bug is `if c >= k: return 1`; the condition is n - c < k.
    assert float(metrics.pass_at_k_counts(5, 4, 2)) == 1.0
    assert float(metrics.pass_at_k_counts(10, 3, 2)) < 1.0


def test_posterior_intervals_finite_for_large_suites() -> None:
    mu, sigma, iv = metrics.suite_mean_interval(
        [1, 10, 2], [10**6, 10**6, 10**5], 1000, "pass_at_k"
    )
    assert np.isfinite([mu, sigma, iv.lo, iv.hi]).all()
    result = metrics.pass_hat_k_ci_counts([10**6, 10**5], [10**6 - 3, 10**5], 5000)
    assert np.isfinite(list(result)).all()


def test_small_exact_grid() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                at = float(metrics.pass_at_k_counts(n, c, k))
                hat = float(metrics.pass_hat_k_counts(n, c, k))
                assert abs(at - float(exact_pass_at_k(n, c, k))) <= 1e-15
                assert abs(hat - float(exact_pass_hat_k(n, c, k))) <= 1e-15
