"""The suite interval covers the latent suite value (mean over stimuli of p_i^k or 1-(1-p_i)^k)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from gate.metrics import IntervalMethod, pass_at_k_counts, pass_hat_k_counts, suite_interval


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


@pytest.mark.parametrize(
    ("stimuli", "trials", "k"), [(10, 3, 3), (20, 5, 3), (40, 3, 1), (5, 10, 2)]
)
@pytest.mark.parametrize("metric", ["pass_hat_k", "pass_at_k"])
def test_coverage_of_the_latent_suite_value(stimuli: int, trials: int, k: int, metric: str) -> None:
    rng = np.random.default_rng(20261123 + stimuli * 100 + trials * 10 + k)
    replicates = 600
    covered = 0
    estimator = pass_hat_k_counts if metric == "pass_hat_k" else pass_at_k_counts
    for _ in range(replicates):
        p = rng.beta(2.0, 1.0, size=stimuli)  # stimulus pass rates as in statistics.md §4
        truth = np.mean(p**k) if metric == "pass_hat_k" else np.mean(1 - (1 - p) ** k)
        n = np.full(stimuli, trials)
        c = rng.binomial(trials, p)
        estimate = float(np.mean(estimator(n, c, k)))
        interval = suite_interval(estimate, n, k)
        covered += interval.lo <= truth <= interval.hi
    # Nominal 95%; the variance bound makes it conservative, so allow sampling noise below.
    assert covered / replicates >= 0.93


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
