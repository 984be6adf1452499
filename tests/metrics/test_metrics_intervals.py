"""Intervals for one rate, their pass@k / pass^k mappings, and suite intervals."""

from __future__ import annotations

import math
from math import comb

import numpy as np
import pytest

from gate import metrics

METHODS = ("mid-p", "wilson", "jeffreys", "clopper-pearson", "beta", "wald")


def exact_coverage(method: str, n: int, rates: np.ndarray) -> np.ndarray:
    """Coverage at each p: sum of Binomial(n, p) pmf over the c whose interval holds p."""
    c = np.arange(n + 1)
    interval = metrics.rate_interval(c, np.full(n + 1, n), method=method)  # type: ignore[arg-type]
    binomial = np.array([comb(n, int(x)) for x in c], dtype=float)
    pmf = binomial * rates[:, None] ** c * (1 - rates[:, None]) ** (n - c)
    inside = (np.asarray(interval.lo) <= rates[:, None]) & (
        rates[:, None] <= np.asarray(interval.hi)
    )
    coverage: np.ndarray = (pmf * inside).sum(axis=1)
    return coverage


@pytest.mark.parametrize("n", [3, 5, 6, 10, 14, 20])
def test_default_method_simulated_coverage_is_honest(n: int) -> None:
    """Seeded simulation (the issue's check; the exact sum is its noiseless twin):
    draw c ~ Binomial(n, p) 4,000 times for each p of a grid and count how often the
    default interval (mid-p; at n = 6 and 14 with its raised weight) holds p. Every p:
    at least 92% (within noise), and the simulation agrees with the exact coverage to
    within its noise. The full requirement is tested exactly in test_metrics_mid_p.py."""
    rng = np.random.default_rng(20251123 + n)
    rates = np.linspace(0.05, 0.95, 19)
    draws = 4000
    c = rng.binomial(n, rates[:, None], size=(rates.size, draws))
    interval = metrics.rate_interval(c.ravel(), np.full(c.size, n))
    assert interval.method == "mid-p with a coverage floor"
    lo = np.asarray(interval.lo).reshape(c.shape)
    hi = np.asarray(interval.hi).reshape(c.shape)
    covered = (lo <= rates[:, None]) & (rates[:, None] <= hi)
    per_rate = covered.mean(axis=1)
    noise = 4 * np.sqrt(0.95 * 0.05 / draws)
    assert np.all(per_rate >= 0.92 - noise), (n, per_rate.min())
    assert 0.95 - noise <= float(per_rate.mean()) <= 0.99, (n, per_rate.mean())
    exact = np.clip(exact_coverage("mid-p", n, rates), 0.0, 1.0)  # sums of pmf reach 1 + 1e-16
    assert np.all(np.abs(per_rate - exact) <= 4 * np.sqrt(exact * (1 - exact) / draws) + 1e-9)


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("wilson", (0.954, 0.954, 0.952)),
        ("jeffreys", (0.957, 0.953, 0.950)),
        ("clopper-pearson", (0.99, 0.98, 0.97)),
        ("wald", (0.65, 0.78, 0.91)),
    ],
)
def test_mean_coverage_matches_statistics_table(method: str, expected: tuple[float, ...]) -> None:
    rates = np.linspace(0.01, 0.99, 981)
    for n, value in zip((5, 10, 50), expected, strict=True):
        mean = float(exact_coverage(method, n, rates).mean())
        tolerance = 0.0015 if len(str(value)) > 4 else 0.006
        assert abs(mean - value) <= tolerance, (method, n, mean)


def test_wilson_formula() -> None:
    c, n, z = 4, 5, 1.959963984540054
    p = c / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    interval = metrics.rate_interval(c, n, method="wilson")
    assert interval.lo == pytest.approx(centre - half, rel=1e-12)
    assert interval.hi == pytest.approx(centre + half, rel=1e-12)
    assert interval.confidence == 0.95


def test_edges() -> None:
    for method in ("mid-p", "wilson", "jeffreys", "clopper-pearson"):
        assert metrics.rate_interval(0, 7, method=method).lo == 0.0  # type: ignore[arg-type]
        assert metrics.rate_interval(7, 7, method=method).hi == 1.0  # type: ignore[arg-type]
    wald = metrics.rate_interval(0, 7, method="wald")
    assert (wald.lo, wald.hi) == (0.0, 0.0)
    assert wald.method == "wald (planning only)"
    beta = metrics.rate_interval(0, 7, method="beta")
    assert beta.lo > 0.0  # equal-tailed posterior interval of Beta(1, 8)
    assert beta.method == "beta posterior (uniform prior)"


def test_clopper_pearson_and_beta_quantiles() -> None:
    from scipy.special import betaincinv

    interval = metrics.rate_interval(3, 10, method="clopper-pearson")
    assert interval.lo == pytest.approx(betaincinv(3, 8, 0.025))
    assert interval.hi == pytest.approx(betaincinv(4, 7, 0.975))
    beta = metrics.rate_interval(3, 10, method="beta", alpha0=0.5, beta0=0.5)
    assert beta.lo == pytest.approx(betaincinv(3.5, 7.5, 0.025))
    assert "Beta(0.5, 0.5)" in beta.method


def test_vectorised_and_ragged() -> None:
    interval = metrics.rate_interval([0, 3, 5], [5, 10, 5], method="jeffreys")
    lo = np.asarray(interval.lo)
    hi = np.asarray(interval.hi)
    assert lo.shape == (3,)
    assert lo[0] == 0.0 and hi[2] == 1.0
    assert np.all(lo <= hi)


def test_mapped_intervals() -> None:
    rate = metrics.rate_interval(4, 5)
    at = metrics.pass_at_k_interval(4, 5, 3)
    hat = metrics.pass_hat_k_interval(4, 5, 3)
    assert at.lo == pytest.approx(1 - (1 - rate.lo) ** 3)
    assert at.hi == pytest.approx(1 - (1 - rate.hi) ** 3)
    assert hat.lo == pytest.approx(rate.lo**3)
    assert hat.hi == pytest.approx(rate.hi**3)
    assert at.method == "mid-p with a coverage floor, mapped through 1-(1-p)^k"
    assert hat.method == "mid-p with a coverage floor, mapped through p^k"
    assert metrics.pass_at_k_interval(5, 5, 3).hi == 1.0


@pytest.mark.parametrize("metric", ["pass_rate", "pass_at_k", "pass_hat_k"])
def test_suite_mean_interval_matches_scorio_style_ci(metric: str) -> None:
    rng = np.random.default_rng(3)
    R = rng.integers(0, 2, size=(40, 6))
    mu, sigma, interval = metrics.suite_mean_interval(R.sum(axis=1), 6, 3, metric)  # type: ignore[arg-type]
    reference = {
        "pass_rate": metrics.pass_at_k_ci(R, 1),
        "pass_at_k": metrics.pass_at_k_ci(R, 3),
        "pass_hat_k": metrics.pass_hat_k_ci(R, 3),
    }[metric]
    assert (mu, sigma, interval.lo, interval.hi) == pytest.approx(tuple(reference), abs=1e-12)
    assert interval.method == "beta posterior (uniform prior), normal approx."


def test_suite_mean_interval_ragged_is_the_mean_of_per_stimulus_moments() -> None:
    c = np.array([0, 2, 5, 1])
    n = np.array([3, 5, 5, 2])
    mu, sigma, _ = metrics.suite_mean_interval(c, n, 2, "pass_hat_k")
    a = 1 + c
    b = 1 + n - c
    first = a * (a + 1) / ((a + b) * (a + b + 1))
    second = np.prod([(a + i) / (a + b + i) for i in range(4)], axis=0)
    assert mu == pytest.approx(first.mean(), rel=1e-12)
    assert sigma == pytest.approx(np.sqrt((second - first**2).sum()) / 4, rel=1e-12)


def test_never_mean_p_to_the_k() -> None:
    # Two stimuli, one always passes, one never: mean of p^k is 1/2, (mean p)^k is 1/8.
    result = metrics.pass_hat_k_counts([4, 4], [4, 0], 3).mean()
    assert result == 0.5


@pytest.mark.parametrize("method", METHODS)
def test_interval_methods_reject_bad_input(method: str) -> None:
    with pytest.raises(ValueError, match="confidence"):
        metrics.rate_interval(1, 2, confidence=1.5, method=method)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="c=3 for row 1"):
        metrics.rate_interval([1, 3], [2, 2], method=method)  # type: ignore[arg-type]


def test_unknown_method() -> None:
    with pytest.raises(ValueError, match="unknown interval method 'agresti'"):
        metrics.rate_interval(1, 2, method="agresti")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown metric"):
        metrics.suite_mean_interval([1], [2], 1, "pass@k")  # type: ignore[arg-type]


def test_stdlib_normal_quantile_equals_scipy_ndtri() -> None:
    # gate.metrics._special replaces scipy.special.ndtri on the default path (cold start).
    from scipy.special import ndtri

    from gate.metrics._special import normal_quantile

    grid = [1e-300, 1e-12, 0.001, 0.025, 0.05, 0.3, 0.5, 0.8, 0.95, 0.975, 0.999, 1 - 1e-12]
    for p in grid:
        assert normal_quantile(p) == pytest.approx(float(ndtri(p)), rel=1e-14, abs=1e-14)
    assert normal_quantile(0.0) == -math.inf and normal_quantile(1.0) == math.inf
