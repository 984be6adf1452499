"""The trials' binomial noise in the regression gate's bounds (gate.metrics.trial_noise).

Checked against a hand calculation, an independent implementation (the restricted
likelihood maximised by scipy's SLSQP, the bound found by brentq), and seeded
simulations of the settings where the sign-flip test alone passed a true drop of D or
failed an unchanged candidate far more often than α.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy import optimize, stats

from gate.compare import RunCounts, compare
from gate.metrics.decision import FAIL, PASS, PairedRule, more_stimuli, regression_outcome
from gate.metrics.paired import paired_bounds_batch, paired_test
from gate.metrics.trial_noise import TrialCounts, trial_noise_bounds, trial_noise_p_value
from gate.report import wording

IntArray = npt.NDArray[np.int64]


def test_all_passing_stimuli_by_hand() -> None:
    """M stimuli at n/n in both runs: s² = 0. For θ = −x < 0 the likeliest rates are
    p_b = 1 and p_c = 1 − x, so B = x(1 − x)/n, and the lower bound solves
    x = t·sqrt(x(1 − x)/(nM)): x = a/(1 + a) with a = t²/(nM). M = n = 5, t = t_{4, 0.95}."""
    t = stats.t.ppf(0.95, 4)
    a = t * t / 25
    counts = TrialCounts.of_runs([5] * 5, [5] * 5, [5] * 5, [5] * 5)
    bounds = trial_noise_bounds(counts, 0.95)
    assert float(bounds.lower[0]) == pytest.approx(-a / (1 + a), abs=1e-9)
    assert float(bounds.upper[0]) == pytest.approx(a / (1 + a), abs=1e-9)
    # At θ = −0.1: t = 0.1 / sqrt(0.9 · 0.1 / 25) = 1.6667 with 4 degrees of freedom.
    p = trial_noise_p_value(counts, -0.1, "better")[0]
    assert p == pytest.approx(stats.t.sf(0.1 / math.sqrt(0.09 / 25), 4), rel=1e-9)


def _slsqp_variance(
    n_b: IntArray, c_b: IntArray, n_c: IntArray, c_c: IntArray, theta: float
) -> float:
    """B(θ)/M from the restricted maximum likelihood, by a general-purpose optimiser."""
    m = n_b.size
    eps = 1e-10

    def nll(x: npt.NDArray[np.float64]) -> float:
        p_b, p_c = np.clip(x[:m], eps, 1 - eps), np.clip(x[m:], eps, 1 - eps)
        return -float(
            np.sum(c_b * np.log(p_b) + (n_b - c_b) * np.log(1 - p_b))
            + np.sum(c_c * np.log(p_c) + (n_c - c_c) * np.log(1 - p_c))
        )

    start = np.r_[np.clip(c_b / n_b, 0.05, 0.95), np.clip(c_c / n_c, 0.05, 0.95)]
    result = optimize.minimize(
        nll,
        start,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * (2 * m),
        constraints=[{"type": "eq", "fun": lambda x: float(np.mean(x[m:] - x[:m])) - theta}],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    p_b, p_c = result.x[:m], result.x[m:]
    return float(np.sum(p_b * (1 - p_b) / n_b + p_c * (1 - p_c) / n_c)) / (m * m)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_bounds_match_an_independent_implementation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 9))
    n_b, n_c = rng.integers(1, 11, m), rng.integers(1, 11, m)
    c_b, c_c = rng.binomial(n_b, 0.8), rng.binomial(n_c, 0.7)
    d = c_c / n_c - c_b / n_b
    q = stats.t.ppf(0.95, m - 1)
    spread = float(np.var(d, ddof=1)) / m

    def gap(theta: float, side: int) -> float:
        variance = max(_slsqp_variance(n_b, c_b, n_c, c_c, theta), spread)
        return side * (theta - d.mean()) - q * math.sqrt(variance)

    upper = optimize.brentq(gap, d.mean(), 1 - 1e-9, args=(1,), xtol=1e-12)
    lower = optimize.brentq(gap, -1 + 1e-9, d.mean(), args=(-1,), xtol=1e-12)
    bounds = trial_noise_bounds(TrialCounts.of_runs(n_b, c_b, n_c, c_c), 0.95)
    assert float(bounds.upper[0]) == pytest.approx(upper, abs=2e-6)
    assert float(bounds.lower[0]) == pytest.approx(lower, abs=2e-6)


def test_p_value_at_a_bound_is_alpha() -> None:
    n = np.array([5, 3, 10, 5])
    counts = TrialCounts.of_runs(n, [5, 2, 7, 4], n, [4, 3, 6, 1])
    bounds = trial_noise_bounds(counts, 0.9)
    assert trial_noise_p_value(counts, float(bounds.upper[0]), "worse")[0] == pytest.approx(0.1)
    assert trial_noise_p_value(counts, float(bounds.lower[0]), "better")[0] == pytest.approx(0.1)


def test_five_stimuli_at_five_of_five_no_longer_pass_a_ten_point_margin() -> None:
    """d = (0, 0, 0, 0, 0): the sign flip alone put both bounds at 0 and passed D = 0.10,
    although a candidate at 90% everywhere shows 25/25 in 0.9^25 = 7% of runs."""
    base = {s: RunCounts(5, 5) for s in "abcde"}
    result = compare(base, dict(base))
    plain = paired_test(result.differences)
    assert (plain.lower, plain.upper) == (0.0, 0.0)
    assert result.test.lower == pytest.approx(-0.1538, abs=1e-4)
    assert result.test.noise_floor == ("lower", "upper")
    assert (
        regression_outcome([result.test.lower], [result.test.upper], "max_regression", 0.05, 0.10)[
            0
        ]
        != PASS
    )
    reason = wording.paired_test_reason(result.test)
    assert reason.endswith(
        "; both bounds widened to cover the binomial noise of each stimulus's trials, "
        "which 5 differences alone understate"
    )


def test_the_t_test_is_left_as_it_is() -> None:
    """From 30 stimuli on, the t test's sd already carries the trials' noise: unchanged."""
    rng = np.random.default_rng(7)
    a, b = rng.binomial(5, 0.7, 40), rng.binomial(5, 0.6, 40)
    result = compare(
        {f"s{i}": RunCounts(5, int(x)) for i, x in enumerate(a)},
        {f"s{i}": RunCounts(5, int(x)) for i, x in enumerate(b)},
    )
    assert result.test.method == "paired t" and result.test.noise_floor == ()
    assert result.test.upper == paired_test(result.differences).upper


def _true_drop_runs(
    m: int, k_b: int, k_c: int, rate: float, drop: float, runs: int, seed: int
) -> tuple[IntArray, IntArray]:
    rng = np.random.default_rng(seed)
    return rng.binomial(k_b, rate, (runs, m)), rng.binomial(k_c, rate - drop, (runs, m))


@pytest.mark.parametrize(
    ("m", "k_b", "k_c", "rate", "delta", "old"),
    [
        (5, 1, 1, 0.95, 0.0, 0.61),  # d mostly all zero: the sign flip passed 61% of runs
        (8, 1, 1, 0.95, 0.05, 0.30),
        (5, 5, 5, 0.95, 0.0, 0.14),
        (16, 3, 3, 0.95, 0.0, 0.066),
    ],
)
def test_a_true_drop_of_d_passes_at_most_alpha(
    m: int, k_b: int, k_c: int, rate: float, delta: float, old: float
) -> None:
    """Every stimulus at ``rate`` in the baseline and ``rate − D`` in the candidate
    (D = δ + 0.05): a pass claims a drop of D is ruled out, so it may happen in at most
    α = 5% of runs (4,000 seeded runs; bound 0.05 + 3 s.e.). ``old``: the audit's rate
    for the sign-flip test alone (2,000 runs a setting)."""
    detectable = delta + 0.05
    runs = 4000
    base, cand = _true_drop_runs(m, k_b, k_c, rate, detectable, runs, seed=m * 100 + k_b)
    rule = PairedRule("max_regression", "pass_rate", 1, delta, detectable)
    outcome = rule.evaluate_counts(
        np.full((runs, m), k_b), base, np.full((runs, m), k_c), cand
    ).outcome
    passed = float(np.mean(outcome == PASS))
    assert passed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs), (passed, old)
    without = paired_bounds_batch((cand / k_c - base / k_b), confidence=0.95)
    assert float(np.mean(rule.decide_bounds(*without) == PASS)) > 0.05  # the old failure


def test_unequal_trial_counts_no_longer_raise_false_alarms() -> None:
    """Baseline 3 trials, candidate 10, every stimulus at 95% in both runs, 12 stimuli:
    the sign flip alone failed 8.6% of unchanged candidates (skewed differences)."""
    runs, m = 4000, 12
    base, cand = _true_drop_runs(m, 3, 10, 0.95, 0.0, runs, seed=12)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.05)
    outcome = rule.evaluate_counts(
        np.full((runs, m), 3), base, np.full((runs, m), 10), cand
    ).outcome
    assert float(np.mean(outcome == FAIL)) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


@pytest.mark.parametrize(("m", "k"), [(5, 5), (10, 3), (8, 1)])
def test_batch_rule_agrees_with_the_verdict(m: int, k: int) -> None:
    """Replicate by replicate, the vectorised rule (advice, planning) has the verdict's bounds
    (up to 2^10 stimuli both enumerate every sign pattern)."""
    base, cand = _true_drop_runs(m, k, k, 0.9, 0.05, 40, seed=m + k)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.05)
    batch = rule.evaluate_counts(np.full(base.shape, k), base, np.full(base.shape, k), cand)
    ids = [f"s{i:02d}" for i in range(m)]
    for row in range(base.shape[0]):
        result = compare(
            {s: RunCounts(k, int(c)) for s, c in zip(ids, base[row], strict=True)},
            {s: RunCounts(k, int(c)) for s, c in zip(ids, cand[row], strict=True)},
        )
        assert result.test.lower == pytest.approx(batch.lower[row], abs=1e-9), row
        assert result.test.upper == pytest.approx(batch.upper[row], abs=1e-9), row


def test_more_stimuli_resamples_the_trials_too() -> None:
    """Eight stimuli at 5/5 in both runs: resampling the differences alone (all 0) says
    the next stimulus decides; with the trials' noise, more are needed."""
    n = np.full(8, 5)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.05)
    zeros = np.zeros(8)
    plain = more_stimuli(rule, zeros)
    widened = more_stimuli(rule, zeros, counts=(n, n, n, n))
    assert plain == 9
    # Every resampled run is M' stimuli at 5/5: L = −a/(1 + a) with a = t²/(5M') (the
    # hand case above) passes once it is above −0.05, i.e. 19 t² < 5M'.
    needed = next(x for x in range(9, 100) if 19 * stats.t.ppf(0.95, x - 1) ** 2 < 5 * x)
    assert needed == 13
    assert widened == needed


def test_batch_widens_only_its_sign_flip_runs_when_each_run_has_its_own_rows() -> None:
    """From 30 stimuli the batch takes t except for runs whose differences are all equal;
    with trial counts too varied to share rows (each run keeps its own), only those runs
    are widened, with the verdict's bounds."""
    rng = np.random.default_rng(5)
    n_b = rng.integers(50, 400, (3, 30))
    n_c = n_b.copy()
    c_b = rng.binomial(n_b, 0.9)
    c_c = rng.binomial(n_c, 0.85)
    c_c[0] = c_b[0]  # run 0: every difference 0
    counts = TrialCounts.of_runs(n_b, c_b, n_c, c_c)
    assert counts.n_b.ndim == 2  # the per-run form
    d = c_c / n_c - c_b / n_b
    lower, upper = paired_bounds_batch(d, counts=counts)
    verdict = paired_test(d[0], counts=TrialCounts.of_runs(n_b[0], c_b[0], n_c[0], c_c[0]))
    assert verdict.noise_floor == ("lower", "upper")
    assert (lower[0], upper[0]) == pytest.approx((verdict.lower, verdict.upper), abs=1e-9)
    plain = paired_bounds_batch(d[1:])
    assert lower[1:] == pytest.approx(plain[0]) and upper[1:] == pytest.approx(plain[1])


# --------------------------------------------------------------------------- pass^k


def test_the_variance_of_the_pass_hat_k_estimate_by_enumeration() -> None:
    """Var(C(c, k)/C(n, k)) for c ~ Binomial(n, p), summed over every c, against the
    U-statistic form the floor uses (k = 1: p(1 − p)/n)."""
    from gate.metrics.trial_noise import _estimate_variance

    cases = [(5, 3, 0.9), (10, 3, 0.5), (3, 3, 0.95), (7, 2, 0.3), (20, 5, 0.8), (5, 1, 0.7)]
    for n, k, p in cases:
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        u = np.array([math.comb(c, k) / math.comb(n, k) for c in range(n + 1)])
        want = float(pmf @ (u * u) - (pmf @ u) ** 2)
        got = float(_estimate_variance(np.array(p), np.array(float(n)), k))
        assert got == pytest.approx(want, rel=1e-10, abs=1e-15)


def test_pass_hat_k_all_passing_stimuli_by_hand() -> None:
    """M stimuli at n/n in both runs, k = n: each estimate is the indicator of n/n, a
    Bernoulli(p^n) draw. For θ = −x the path keeps the baseline at 1 and puts the
    candidate's p^n at 1 − x, so B = x(1 − x) and the lower bound solves
    x = t·sqrt(x(1 − x)/M): x = a/(1 + a) with a = t²/M. M = 5, n = k = 3."""
    t = stats.t.ppf(0.95, 4)
    a = t * t / 5
    counts = TrialCounts.of_runs([3] * 5, [3] * 5, [3] * 5, [3] * 5, k=3)
    bounds = trial_noise_bounds(counts, 0.95)
    assert float(bounds.lower[0]) == pytest.approx(-a / (1 + a), abs=1e-9)
    assert float(bounds.upper[0]) == pytest.approx(a / (1 + a), abs=1e-9)


def _path_bounds(
    n_b: IntArray, c_b: IntArray, n_c: IntArray, c_c: IntArray, k: int, confidence: float
) -> tuple[float, float]:
    """The pass^k floor's bounds by an independent route: for each λ the rates are the
    quadratics' roots from numpy.roots, θ(λ) and the variance by summing the binomial
    distribution; brentq finds λ for θ, then θ at each bound."""
    m = n_b.size

    def rate(lam: float, n: int, c: int) -> float:
        if lam == 0:
            return c / n
        roots = np.roots([lam, -(n + lam), c]).real
        root = (min(r for r in roots if -1e-9 <= r <= c / n + 1e-9) if lam > 0
                else max(r for r in roots if c / n - 1e-9 <= r <= 1 + 1e-9))  # fmt: skip
        return float(np.clip(root, 0.0, 1.0))

    def variance(p: float, n: int) -> float:
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        u = np.array([math.comb(c, k) / math.comb(n, k) for c in range(n + 1)])
        return float(pmf @ (u * u) - (pmf @ u) ** 2)

    def at(lam: float) -> tuple[float, float]:
        p_c = [rate(lam, int(n), int(c)) for n, c in zip(n_c, c_c, strict=True)]
        p_b = [rate(-lam, int(n), int(c)) for n, c in zip(n_b, c_b, strict=True)]
        theta = float(np.mean([pc**k - pb**k for pc, pb in zip(p_c, p_b, strict=True)]))
        noise = sum(variance(pc, int(n)) for pc, n in zip(p_c, n_c, strict=True))
        noise += sum(variance(pb, int(n)) for pb, n in zip(p_b, n_b, strict=True))
        return theta, noise / (m * m)

    est = [math.comb(int(c), k) / math.comb(int(n), k) for n, c in zip(n_c, c_c, strict=True)]
    est_b = [math.comb(int(c), k) / math.comb(int(n), k) for n, c in zip(n_b, c_b, strict=True)]
    d = np.array(est) - np.array(est_b)
    q = stats.t.ppf(confidence, m - 1)
    spread = float(np.var(d, ddof=1)) / m

    def gap(lam: float, side: int) -> float:
        theta, noise = at(lam)
        return side * (theta - d.mean()) - q * math.sqrt(max(noise, spread))

    scale = 1e4 * max(int(n_b.max()), int(n_c.max()))
    upper_lam = optimize.brentq(gap, -scale, 0.0, args=(1,), xtol=1e-13, rtol=1e-14)
    lower_lam = optimize.brentq(gap, 0.0, scale, args=(-1,), xtol=1e-13, rtol=1e-14)
    return at(lower_lam)[0], at(upper_lam)[0]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pass_hat_k_bounds_match_an_independent_implementation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(4, 9)), int(rng.integers(2, 4))
    n_b, n_c = rng.integers(k, 11, m), rng.integers(k, 11, m)
    c_b, c_c = rng.binomial(n_b, 0.85), rng.binomial(n_c, 0.75)
    lower, upper = _path_bounds(n_b, c_b, n_c, c_c, k, 0.95)
    bounds = trial_noise_bounds(TrialCounts.of_runs(n_b, c_b, n_c, c_c, k=k), 0.95)
    assert float(bounds.lower[0]) == pytest.approx(lower, abs=1e-6)
    assert float(bounds.upper[0]) == pytest.approx(upper, abs=1e-6)


@pytest.mark.parametrize(
    ("m", "n", "k", "old"),
    [
        (5, 5, 3, 0.26),  # the sign flip alone passed 26% of runs (measured, 4,000)
        (5, 3, 3, 0.41),
        (8, 5, 2, 0.10),
    ],
)
def test_pass_hat_k_a_true_drop_of_d_passes_at_most_alpha(
    m: int, n: int, k: int, old: float
) -> None:
    """Every stimulus at 95% in the baseline; the candidate's pass^k lower by exactly
    D = 0.05 (δ = 0): a pass claims that drop is ruled out, so it may happen in at most
    α = 5% of runs (4,000 seeded runs; bound 0.05 + 3 s.e.)."""
    runs = 4000
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    p_c = (0.95**k - 0.05) ** (1 / k)
    base, cand = rng.binomial(n, 0.95, (runs, m)), rng.binomial(n, p_c, (runs, m))
    trials = np.full((runs, m), n)
    rule = PairedRule("max_regression", "pass_hat_k", k, 0.0, 0.05)
    passed = float(np.mean(rule.evaluate_counts(trials, base, trials, cand).outcome == PASS))
    assert passed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs), (passed, old)
    alone = rule.evaluate_differences(rule.differences(trials, base, trials, cand)).outcome
    assert float(np.mean(alone == PASS)) > 0.08  # the old failure, same runs


def test_pass_hat_k_through_compare_and_the_batch_rule() -> None:
    """compare() gives a pass^k comparison the same floor, its test line says so, and
    the batch rule (advice, planning) has the verdict's bounds run by run."""
    base = {s: RunCounts(5, 5) for s in "abcde"}
    result = compare(base, dict(base), metric="pass_hat_k", k=3)
    assert result.test.noise_floor == ("lower", "upper")
    assert result.test.lower < -0.2
    rng = np.random.default_rng(4)
    nb, cb = np.full((25, 6), 5), rng.binomial(5, 0.9, (25, 6))
    nc, cc = np.full((25, 6), 4), rng.binomial(4, 0.85, (25, 6))
    rule = PairedRule("max_regression", "pass_hat_k", 2, 0.0, 0.05)
    batch = rule.evaluate_counts(nb, cb, nc, cc)
    ids = [f"s{i}" for i in range(6)]
    for row in range(25):
        one = compare(
            {s: RunCounts(5, int(c)) for s, c in zip(ids, cb[row], strict=True)},
            {s: RunCounts(4, int(c)) for s, c in zip(ids, cc[row], strict=True)},
            metric="pass_hat_k",
            k=2,
        )
        assert one.test.lower == pytest.approx(batch.lower[row], abs=1e-9), row
        assert one.test.upper == pytest.approx(batch.upper[row], abs=1e-9), row


def test_the_pass_hat_k_floor_stops_at_its_largest_k() -> None:
    """Its variance has up to k terms per rate and bisection step: past MAX_FLOOR_K the
    comparison keeps the sign flip alone, as a graded score's does (docs/regression.md)."""
    from gate.metrics.trial_noise import MAX_FLOOR_K, floor_k

    assert (floor_k("pass_rate", None), floor_k("pass_hat_k", 3)) == (1, 3)
    assert floor_k("score", None) == 1  # pass/fail scores only (pass_fail_sums)
    assert floor_k("pass_hat_k", MAX_FLOOR_K + 1) is None
    k = MAX_FLOOR_K + 1
    base = {s: RunCounts(k + 5, k + 5) for s in "abcde"}
    beyond = compare(base, dict(base), metric="pass_hat_k", k=k)
    assert beyond.trial_counts is None and beyond.test.noise_floor == ()
    within = compare(base, dict(base), metric="pass_hat_k", k=MAX_FLOOR_K)
    assert within.test.noise_floor == ("lower", "upper")
