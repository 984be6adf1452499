"""The suite interval covers the latent suite value (mean over stimuli of p_i^k or 1-(1-p_i)^k)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from gate.metrics import IntervalMethod, interval_coverage, suite_interval, suite_intervals
from gate.metrics.intervals import suite_bounds
from tests.metrics.suite_simulation import grid, simulate


def test_reference_002_suite_pass_hat_3_interval() -> None:
    # pass^3 = 0.4 over 5 stimuli × 3 trials: n_eff = 5·3/3 = 5; Wilson at 2 of 5.
    z = 1.959963984540054
    p, n = 0.4, 5
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    interval = suite_interval(0.4, [3] * 5, 3, method="wilson")
    assert (interval.lo, interval.hi) == pytest.approx((centre - half, centre + half), rel=1e-12)
    assert interval.confidence == 0.95
    # The default, mid-p at 2 of 5: brentq on scipy.stats.binom's tails.
    interval = suite_interval(0.4, [3] * 5, 3)
    assert (interval.lo, interval.hi) == pytest.approx((0.0734570786778166, 0.8176248737387639))
    assert interval.method == "mid-p at the suite estimate, n_eff = M·min(nᵢ)/k = 5"


@pytest.mark.parametrize("method", ["mid-p", "wilson", "jeffreys", "clopper-pearson", "wald"])
def test_many_suites_at_once_are_each_suite_alone(method: IntervalMethod) -> None:
    """suite_intervals (a file of many suites, bounds solved together) gives each suite
    exactly what suite_interval gives it alone: bounds, label and level; estimates of 0 and
    1 keep their pinned ends, and a k past a suite's fewest trials is refused as alone."""
    rng = np.random.default_rng(5)
    counts = [rng.integers(3, 40, size=rng.integers(1, 30)) for _ in range(200)]
    estimates = [0.0, 1.0, *rng.uniform(0, 1, size=198).tolist()]
    together = suite_intervals(estimates, counts, 3, 0.9, method)
    alone = [suite_interval(e, n, 3, 0.9, method) for e, n in zip(estimates, counts, strict=True)]
    assert together == alone
    assert (together[0].lo, together[1].hi) == (0.0, 1.0)
    assert together[7].lo < estimates[7] < together[7].hi
    with pytest.raises(ValueError, match="k=3 exceeds the number of trials n=2"):
        suite_intervals([0.5, 0.5], [[5, 5], [2, 9]], 3)


def test_suite_interval_keeps_90_percent_coverage_on_every_profile() -> None:
    """Issue 11: all p = 0.5; p ~ Beta(2,1); 70% p = 1 / 20% p = 0 / 10% U(0,1); all
    p = 0.95; M = 5, 10, 20, 50; n = 3, 5, 10; pass rate, pass@k, pass^k for k = 2..n:
    528 cells, 2,000 seeded replicates each (bench/suite_coverage.py: the same grid with
    20,000). Coverage of the suite truth mean_i g(p_i) of the drawn stimuli."""
    cells = grid(2000)
    assert len(cells) == 4 * 4 * (5 + 9 + 19)
    worst = min(cells, key=lambda cell: cell.coverage)
    assert worst.coverage >= 0.90, worst
    # Nominal 95%, and the n_eff bound is conservative for mixed rates: the mean is high.
    assert sum(cell.coverage for cell in cells) / len(cells) >= 0.95


@pytest.mark.parametrize(("stimuli", "trials", "rate"), [(10, 5, 0.5), (20, 3, 0.95), (5, 3, 0.5)])
def test_simulation_agrees_with_the_exact_coverage(stimuli: int, trials: int, rate: float) -> None:
    # With equal rates the suite pass rate is one Binomial(M·n, p) proportion, whose mid-p
    # coverage interval_coverage computes exactly: the simulation must agree within noise.
    profile = "all p = 0.5" if rate == 0.5 else "all p = 0.95"
    (cell,) = [c for c in simulate(profile, stimuli, trials, 20_000, 7) if c.metric == "pass_rate"]
    exact = interval_coverage("mid-p", stimuli * trials, [rate]).mean
    assert abs(cell.coverage - exact) <= 4 * np.sqrt(exact * (1 - exact) / 20_000)


def test_suite_bounds_are_the_public_suite_interval() -> None:
    # The simulation calls the vectorised suite_bounds; it is what suite_interval returns.
    rng = np.random.default_rng(5)
    estimates = np.concatenate([[0.0, 1.0], rng.random(30)])
    lo, hi = suite_bounds(estimates, 10 * 5 / 3, 0.95, "mid-p")
    for value, low, high in zip(estimates, lo, hi, strict=True):
        interval = suite_interval(float(value), [5] * 10, 3)
        assert (interval.lo, interval.hi) == (low, high)


def test_unbiased_estimators_are_u_statistics_with_the_variance_bound() -> None:
    # Var of C(c,k)/C(n,k) for c ~ Bin(n, p) never exceeds (k/n)·θ(1-θ), θ = p^k.
    for n in (3, 5, 8):
        for k in range(1, n + 1):
            for p in np.linspace(0.05, 0.95, 19):
                pmf = np.array([comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)])
                u = np.array([comb(c, k) / comb(n, k) for c in range(n + 1)])
                variance = float(pmf @ u**2 - (pmf @ u) ** 2)
                theta = p**k
                assert variance <= k / n * theta * (1 - theta) + 1e-12


@pytest.mark.parametrize("method", ["mid-p", "wilson", "jeffreys", "clopper-pearson", "beta"])
def test_suite_interval_holds_an_all_pass_or_all_fail_estimate(method: IntervalMethod) -> None:
    # Before the pin, beta's interval of an all-pass suite of 10 × 5 trials was the
    # equal-tailed Beta(51, 1) interval [0.9302, 0.9995]: it excluded the observed 1.
    from scipy.stats import beta

    n = [5] * 10
    full = suite_interval(1.0, n, 1, method=method)
    empty = suite_interval(0.0, n, 1, method=method)
    assert full.hi == 1.0 and empty.lo == 0.0
    assert 0.0 < full.lo < 1.0 and 0.0 < empty.hi < 1.0
    if method == "beta":
        # The other end stays the posterior quantile of Beta(51, 1) / Beta(1, 51).
        assert full.lo == pytest.approx(beta(51, 1).ppf(0.025), rel=1e-12)
        assert empty.hi == pytest.approx(beta(1, 51).ppf(0.975), rel=1e-12)
        inside = suite_interval(0.98, n, 1, method=method)
        assert inside.hi == pytest.approx(beta(50, 2).ppf(0.975), rel=1e-12)  # no pin inside
