"""Tango's score bounds for matched 0/1 outcomes (gate/metrics/matched_pairs.py), and the
regression gate that takes them where every estimate is 0 or 1 (one trial a side)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from gate.compare import RunCounts, compare
from gate.metrics.decision import FAIL, PASS, PairedRule, _drawn_bounds
from gate.metrics.exact_matched_pairs import exact_bounds
from gate.metrics.matched_pairs import tango_bounds, tango_p_value, tango_statistic
from gate.metrics.paired import paired_bounds_batch
from gate.metrics.trial_noise import TrialCounts


@pytest.mark.parametrize(
    ("b", "c", "m", "lower", "upper"),
    [
        # Fagerland, Lydersen & Laake (2017) ch. 8, Cavo et al. (2012): estimate −0.0621,
        # 95% CI (−0.1240, −0.0054), as the R package contingencytables prints it.
        (6, 16, 161, -0.1240, -0.0054),
        # contingencytables' own test of a table with three pairs, all discordant one way.
        (3, 0, 3, -0.1230, 1.0),
        (0, 3, 3, -1.0, 0.1230),
    ],
)
def test_the_published_intervals(b: int, c: int, m: int, lower: float, upper: float) -> None:
    """A two-sided 95% interval is the two one-sided 97.5% bounds."""
    bounds = tango_bounds(b, c, m, 0.975)
    assert round(float(bounds.lower[0]), 4) == lower
    assert round(float(bounds.upper[0]), 4) == upper


def test_at_zero_it_is_mcnemar() -> None:
    for b, c in [(9, 4), (0, 5), (12, 12), (1, 30)]:
        assert float(tango_statistic(b, c, 50, 0.0)) == pytest.approx((b - c) / math.sqrt(b + c))


@pytest.mark.parametrize(
    ("b", "c", "m", "theta"),
    [(6, 16, 161, -0.1), (2, 7, 30, -0.05), (0, 0, 30, -0.08), (5, 1, 20, 0.3)],
)
def test_the_restricted_rate_is_the_constrained_maximum_likelihood(
    b: int, c: int, m: int, theta: float
) -> None:
    """Z's variance uses the likeliest 2×2 table with p₁₂ − p₂₁ = θ; found here by
    maximising the multinomial likelihood numerically over p₂₁ (p₁₂ = p₂₁ + θ, the
    concordant cells sharing the rest at their observed ratio, which is their maximum)."""
    concordant = m - b - c

    def negative_log_likelihood(p21: float) -> float:
        p12 = p21 + theta
        rest = 1.0 - p12 - p21
        terms = [(b, p12), (c, p21), (concordant, rest)]
        return -sum(k * math.log(p) for k, p in terms if k > 0)

    low = max(0.0, -theta) + 1e-12
    high = (1.0 - theta) / 2.0 - 1e-12
    found = optimize.minimize_scalar(
        negative_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    ).x
    p12 = found + theta
    z = (b - c - m * theta) / math.sqrt(m * (p12 + found - theta * theta))
    assert float(tango_statistic(b, c, m, theta)) == pytest.approx(z, rel=1e-6)


def test_each_bound_is_where_its_p_value_is_alpha() -> None:
    for b, c, m in [(3, 9, 40), (0, 2, 30), (7, 0, 12)]:
        bounds = tango_bounds(b, c, m, 0.95)
        lower, upper = float(bounds.lower[0]), float(bounds.upper[0])
        assert float(tango_p_value(b, c, m, lower, "better")[0]) == pytest.approx(0.05, abs=1e-9)
        assert float(tango_p_value(b, c, m, upper, "worse")[0]) == pytest.approx(0.05, abs=1e-9)
        assert lower < (b - c) / m < upper


def test_only_designs_of_0_or_1_estimates_are_matched_pairs() -> None:
    ones = [1] * 4
    assert TrialCounts.of_runs(ones, [1, 1, 0, 1], ones, [1, 0, 0, 1]).matched_pairs is not None
    assert TrialCounts.of_runs([1, 1, 1, 2], ones, ones, ones).matched_pairs is None
    three = [3] * 4
    pairs = TrialCounts.of_runs(three, [3, 3, 2, 0], three, [3, 1, 3, 0], k=3).matched_pairs
    assert pairs is not None
    # the third stimulus passes only in the candidate, the second only in the baseline
    assert [float(x[0]) for x in pairs] == [1.0, 1.0, 4.0]
    assert TrialCounts.of_runs(three, [3, 3, 2, 0], three, [3, 1, 3, 0], k=2).matched_pairs is None


def _one_trial_runs(m: int, rate: float, drop: float, runs: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return rng.binomial(1, rate, (runs, m)), rng.binomial(1, rate - drop, (runs, m))


@pytest.mark.parametrize(
    ("m", "delta", "before"),
    [(30, 0.0, 0.073), (30, 0.05, 0.073), (50, 0.0, 0.069)],
)
def test_one_trial_a_side_near_one_passes_a_true_drop_of_d_at_most_alpha(
    m: int, delta: float, before: float
) -> None:
    """Rates 0.95 in the baseline and 0.95 − D in the candidate, one trial a side: the t
    test alone passed 6.9–7.3% of 4,000 seeded runs (``before``); with Tango's bound as
    the floor, within α = 5% (+ 3 s.e.)."""
    detectable = delta + 0.05
    runs = 4000
    base, cand = _one_trial_runs(m, 0.95, detectable, runs, seed=m + int(100 * delta))
    ones = np.ones_like(base)
    rule = PairedRule("max_regression", "pass_rate", 1, delta, detectable)
    passed = float(np.mean(rule.evaluate_counts(ones, base, ones, cand).outcome == PASS))
    assert passed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs), passed
    t_alone = paired_bounds_batch((cand - base).astype(np.float64), confidence=0.95)
    assert float(np.mean(rule.decide_bounds(*t_alone) == PASS)) > 0.06  # what it fixes
    # An unchanged candidate still fails a δ = 0 gate about α of the time, no more.
    same, _ = _one_trial_runs(m, 0.95, 0.0, runs, seed=m + 7)
    failed = float(np.mean(rule.evaluate_counts(ones, base, ones, same).outcome == FAIL))
    assert failed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs), failed


@pytest.mark.parametrize("m", [30, 45])
def test_the_verdict_and_the_batch_rule_take_the_same_bounds(m: int) -> None:
    """Run by run, compare()'s test (t, then the floor) and the vectorised rule agree, and
    the floor is named where it widened a bound."""
    base, cand = _one_trial_runs(m, 0.9, 0.05, 30, seed=m)
    ones = np.ones_like(base)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.05)
    batch = rule.evaluate_counts(ones, base, ones, cand)
    ids = [f"s{i:02d}" for i in range(m)]
    widened = 0
    for row in range(base.shape[0]):
        result = compare(
            {s: RunCounts(1, int(x)) for s, x in zip(ids, base[row], strict=True)},
            {s: RunCounts(1, int(x)) for s, x in zip(ids, cand[row], strict=True)},
        )
        assert result.test.lower == pytest.approx(batch.lower[row], abs=1e-9), row
        assert result.test.upper == pytest.approx(batch.upper[row], abs=1e-9), row
        widened += bool(result.test.noise_floor)
        if result.test.method == "paired t":  # never narrower than Tango's bounds
            b = int(np.sum((cand[row] == 1) & (base[row] == 0)))
            c = int(np.sum((cand[row] == 0) & (base[row] == 1)))
            tango = tango_bounds(b, c, m, 0.95)
            assert result.test.lower <= float(tango.lower[0]) + 1e-12
            assert result.test.upper >= float(tango.upper[0]) - 1e-12
    assert widened > 0


def test_the_stimuli_advice_floors_matched_pairs_as_the_batch_rule() -> None:
    """``more_stimuli``'s runs of M' ≥ 30 drawn stimuli, bounded from their moments and
    floored per row, have the batch rule's bounds on the same runs written out."""
    rng = np.random.default_rng(5)
    cb, cc = rng.binomial(1, 0.9, 12), rng.binomial(1, 0.85, 12)
    ones = np.ones(12, dtype=np.int64)
    trials, row = TrialCounts.of_stimuli(ones, cb, ones, cc)
    d = (cc - cb).astype(np.float64)
    drawn = rng.multinomial(40, np.full(12, 1 / 12), size=100).astype(np.float64)
    lower, upper = _drawn_bounds(d, drawn, 0.95, (trials, row))
    take = [np.repeat(np.arange(12), r.astype(np.int64)) for r in drawn]
    full_b, full_c = np.stack([cb[t] for t in take]), np.stack([cc[t] for t in take])
    full_ones = np.ones_like(full_b)
    want_lower, want_upper = paired_bounds_batch(
        (full_c - full_b).astype(np.float64),
        confidence=0.95,
        counts=TrialCounts.of_runs(full_ones, full_b, full_ones, full_c),
    )
    assert lower == pytest.approx(want_lower, abs=1e-9)
    assert upper == pytest.approx(want_upper, abs=1e-9)
    plain, _ = _drawn_bounds(d, drawn, 0.95, None)
    assert np.any(lower < plain - 1e-9)  # the floor widened some


def test_the_report_says_which_bound_tangos_widened() -> None:
    """30 stimuli of one trial a side, near a rate of 1: the test line names the floor."""
    from gate.report import wording

    base = {f"s{i:02d}": RunCounts(1, 1) for i in range(30)}
    cand = {f"s{i:02d}": RunCounts(1, 0 if i < 2 else 1) for i in range(30)}
    base["s28"] = RunCounts(1, 0)
    result = compare(base, cand)
    assert result.test.method == "paired t" and result.test.noise_floor == ("lower", "upper")
    reason = wording.paired_test_reason(result.test)
    assert reason.startswith("paired t with 29 degrees of freedom: 30 shared stimuli")
    assert reason.endswith(
        "; both bounds widened to cover the trials' binomial noise (with Tango's score test for"
        " matched pass/fail outcomes, and its exact unconditional form up to 50 stimuli), since"
        " differences of −1, 0 or +1 are too coarse for t"
    )
    # b = 1, c = 2 of 30: the bound is the exact one, wider than Tango's and t's
    tango, exact = tango_bounds(1, 2, 30, 0.95), exact_bounds(1, 2, 30, 0.95)
    assert float(exact.lower[0]) < float(tango.lower[0])
    assert result.test.lower == pytest.approx(float(exact.lower[0]))
    assert result.test.upper == pytest.approx(float(exact.upper[0]))
