"""Hall's skewness correction of the paired t test (gate.metrics.skew).

Checked against a hand calculation, an independent implementation (scipy's sample
skewness, Hall's g by its defining polynomial, each bound found by brentq), and seeded
simulations of the settings where plain t bounds missed on one side far more often than
α: 30–50 stimuli near a pass rate of 1 with unequal trial counts (better, not all the way
to α at 30 stimuli).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy import optimize, stats

from gate.compare import RunCounts, compare
from gate.metrics.decision import FAIL, PairedRule, _drawn_t_bounds
from gate.metrics.paired import paired_bounds_batch, paired_test
from gate.metrics.skew import hall_inverse, hall_transform, skew_corrected, skew_corrected_p
from gate.report import wording

FloatArray = npt.NDArray[np.float64]


def test_skewness_and_bounds_by_hand() -> None:
    """d = (0, 0, 0, 0, −1): mean −0.2; central moments m2 = 0.8/5 = 0.16 and
    m3 = (4 · 0.008 − 0.512)/5 = −0.096, so γ̂ = −0.096/0.16^1.5 = −1.5 and
    b = −1.5/sqrt(5). With T = 1: g = 1 + b/6 + b/3 + b²/27 = 1 + b/2 + b²/27."""
    b = -1.5 / math.sqrt(5)
    result = skew_corrected([[0.0, 0.0, 0.0, 0.0, -1.0]], 0.95)
    assert float(result.b[0]) == pytest.approx(b, rel=1e-12)
    assert float(hall_transform(1.0, b)) == pytest.approx(1 + b / 2 + b * b / 27, rel=1e-12)
    # Each bound is where g(T) meets ∓t_{4, 0.95}: T = (Δ̂ − bound)/SE, SE = sqrt(0.2/5).
    q, se = stats.t.ppf(0.95, 4), math.sqrt(0.2 / 5)
    for bound, target in ((result.lower[0], q), (result.upper[0], -q)):
        assert float(hall_transform((-0.2 - bound) / se, b)) == pytest.approx(target, rel=1e-12)


def test_the_inverse_is_exact_and_continuous_at_zero_skew() -> None:
    x = np.linspace(-4.0, 4.0, 81)
    for b in (-0.9, -0.2, -1e-9, 0.0, 1e-9, 0.3, 1.1):
        assert hall_transform(hall_inverse(x, b), b) == pytest.approx(x, abs=1e-12)
    assert hall_inverse(x, 0.0) == pytest.approx(x, abs=0.0)


def _reference_bounds(d: FloatArray, confidence: float) -> tuple[float, float]:
    """Hall's bounds found numerically from scipy's (biased) sample skewness."""
    m = d.size
    mean, se = d.mean(), d.std(ddof=1) / math.sqrt(m)
    b = stats.skew(d, bias=True) / math.sqrt(m)
    q = stats.t.ppf(confidence, m - 1)

    def g(mu: float) -> float:
        t = (mean - mu) / se
        return float(t + b / 6 + b * t * t / 3 + b * b * t**3 / 27)

    lower = optimize.brentq(lambda mu: g(mu) - q, mean - 50 * se, mean, xtol=1e-14)
    upper = optimize.brentq(lambda mu: g(mu) + q, mean, mean + 50 * se, xtol=1e-14)
    return lower, upper


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_bounds_match_an_independent_implementation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(30, 80))
    k_b, k_c = (int(x) for x in rng.integers(1, 11, 2))
    rates = rng.beta(5, 1, m)
    d = rng.binomial(k_c, rates) / k_c - rng.binomial(k_b, rates) / k_b
    for confidence in (0.9, 0.95, 0.99):
        lower, upper = _reference_bounds(d, confidence)
        result = skew_corrected(d[None, :], confidence)
        assert float(result.lower[0]) == pytest.approx(lower, abs=1e-10)
        assert float(result.upper[0]) == pytest.approx(upper, abs=1e-10)
        # the p-value of each bound's own hypothesis is α
        alpha = 1 - confidence
        assert skew_corrected_p(d, upper, "worse") == pytest.approx(alpha, rel=1e-8)
        assert skew_corrected_p(d, lower, "better") == pytest.approx(alpha, rel=1e-8)


def test_the_verdict_takes_the_wider_bound_on_each_side() -> None:
    """Forty stimuli, ten dropping from 5/5 to 1/5: d is −0.8 ten times and 0 thirty times,
    skewed to the left. Hall's bounds shift toward the long tail: its lower bound is below
    plain t's, its upper bound too; each side keeps the wider of the two."""
    d = np.r_[np.full(10, -0.8), np.zeros(30)]
    result = paired_test(d)
    plain = stats.ttest_1samp(d, 0.0).confidence_interval(0.90)
    hall = skew_corrected(d[None, :], 0.95)
    assert result.lower == pytest.approx(min(plain.low, float(hall.lower[0])), abs=1e-12)
    assert result.upper == pytest.approx(max(plain.high, float(hall.upper[0])), abs=1e-12)
    assert result.skew_widened == ("lower",)
    assert result.lower < plain.low and result.upper == pytest.approx(plain.high, abs=1e-12)
    # p-values: the larger of the two tests' at each hypothesis
    worse_t = stats.ttest_1samp(d, -0.05, alternative="less").pvalue
    assert paired_test(d, margin=0.05).p_worse == pytest.approx(
        max(worse_t, skew_corrected_p(d, -0.05, "worse")), rel=1e-9
    )
    assert wording.paired_test_reason(result).endswith(
        "; the lower bound widened by Hall's correction for the differences' skew, which "
        "plain t bounds understate"
    )


def test_symmetric_differences_keep_plain_t() -> None:
    d = np.r_[np.linspace(-0.4, 0.4, 41)]
    result = paired_test(d)
    plain = stats.ttest_1samp(d, 0.0).confidence_interval(0.90)
    assert (result.lower, result.upper) == pytest.approx((plain.low, plain.high), abs=1e-12)
    assert result.skew_widened == ()


def _unchanged_runs(
    m: int, k_b: int, k_c: int, rate: float, runs: int, seed: int
) -> tuple[FloatArray, FloatArray]:
    rng = np.random.default_rng(seed)
    return rng.binomial(k_b, rate, (runs, m)), rng.binomial(k_c, rate, (runs, m))


@pytest.mark.parametrize(
    ("m", "k_b", "k_c", "side", "plain_at_least", "now_at_most"),
    [
        (30, 3, 10, "upper", 0.09, 0.07),  # measured 9.4% → 6.6%
        (50, 3, 10, "upper", 0.075, 0.06),  # 7.9% → 5.4%
        (30, 10, 3, "lower", 0.09, 0.07),  # 9.2% → 6.5%
    ],
)
def test_unequal_trial_counts_miss_far_less_often(
    m: int, k_b: int, k_c: int, side: str, plain_at_least: float, now_at_most: float
) -> None:
    """Every stimulus at 95% in both runs, 4,000 seeded runs. A bound that misses 0 on its
    side (an upper bound below 0 fails a δ = 0 regression gate; a lower bound above 0
    passes a claimed improvement) should do so in α = 5% of runs. Plain t's bound missed in
    7.9–9.4% of these runs; with Hall's correction 5.4% at 50 stimuli and 6.5–6.6% at 30
    (the correction is of first order in 1/sqrt(M): not all the way to α at 30)."""
    runs = 4000
    base, cand = _unchanged_runs(m, k_b, k_c, 0.95, runs, seed=m * 10 + k_b)
    d = cand / k_c - base / k_b
    lower, upper = paired_bounds_batch(d, confidence=0.95)
    missed = upper < -1e-9 if side == "upper" else lower > 1e-9
    assert float(np.mean(missed)) <= now_at_most
    mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(m)
    q = stats.t.ppf(0.95, m - 1)
    usable = np.ptp(d, axis=1) > 0
    plain = (mean + q * se < 0) if side == "upper" else (mean - q * se > 0)
    assert float(np.mean(plain & usable)) >= plain_at_least  # the old failure, same runs


def test_the_gate_on_unequal_trials_no_longer_fails_unchanged_candidates() -> None:
    """The verdict path (PairedRule, as the gate decides) on 30 stimuli, 3 against 10
    trials at 95%: 6.6% of unchanged candidates fail (plain t: 9.4%)."""
    runs, m = 4000, 30
    base, cand = _unchanged_runs(m, 3, 10, 0.95, runs, seed=303)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.05)
    outcome = rule.evaluate_counts(
        np.full((runs, m), 3), base, np.full((runs, m), 10), cand
    ).outcome
    assert float(np.mean(outcome == FAIL)) <= 0.07


@pytest.mark.parametrize("profile", ["beta", "half"])
def test_the_price_on_symmetric_suites_is_small(profile: str) -> None:
    """Rates ~ Beta(2, 1) or all 0.5, 50 stimuli × 5 trials (the README's operating point):
    the bounds widen by under 3% on average."""
    rng = np.random.default_rng(11)
    rates = rng.beta(2, 1, (2000, 50)) if profile == "beta" else np.full((2000, 50), 0.5)
    d = (rng.binomial(5, rates) - rng.binomial(5, rates)) / 5
    lower, upper = paired_bounds_batch(d, confidence=0.95)
    se = d.std(axis=1, ddof=1) / math.sqrt(50)
    plain_width = 2 * stats.t.ppf(0.95, 49) * se
    assert 1.0 <= float(np.mean(upper - lower) / np.mean(plain_width)) < 1.03


@pytest.mark.parametrize(("k_b", "k_c"), [(3, 10), (5, 5)])
def test_batch_rule_agrees_with_the_verdict(k_b: int, k_c: int) -> None:
    """Run by run, the vectorised bounds (advice, planning) are the verdict's."""
    base, cand = _unchanged_runs(34, k_b, k_c, 0.9, 30, seed=k_b + k_c)
    lower, upper = paired_bounds_batch(cand / k_c - base / k_b, confidence=0.95)
    ids = [f"s{i:02d}" for i in range(34)]
    for row in range(base.shape[0]):
        result = compare(
            {s: RunCounts(k_b, int(c)) for s, c in zip(ids, base[row], strict=True)},
            {s: RunCounts(k_c, int(c)) for s, c in zip(ids, cand[row], strict=True)},
        )
        if result.test.method != "paired t":
            continue
        assert result.test.lower == pytest.approx(lower[row], abs=1e-12), row
        assert result.test.upper == pytest.approx(upper[row], abs=1e-12), row


def test_the_stimuli_advice_simulates_the_same_bounds() -> None:
    """``more_stimuli`` draws M' ≥ 30 stimuli as multinomial counts of the observed
    differences and bounds each run from its moments; those bounds are the batch rule's
    (t and Hall's correction) on the same runs written out in full."""
    rng = np.random.default_rng(21)
    d = rng.binomial(10, 0.95, 12) / 10 - rng.binomial(3, 0.95, 12) / 3
    drawn = rng.multinomial(40, np.full(12, 1 / 12), size=200).astype(np.float64)
    lower, upper, zero = _drawn_t_bounds(d, drawn, 0.95)
    full = np.stack([np.repeat(d, row.astype(np.int64)) for row in drawn])
    want_lower, want_upper = paired_bounds_batch(full, confidence=0.95)
    assert not zero.any()
    assert lower == pytest.approx(want_lower, abs=1e-9)
    assert upper == pytest.approx(want_upper, abs=1e-9)
