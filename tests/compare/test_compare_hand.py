"""Hand-computed cases for gate.compare: every number here was worked on paper first."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats

from gate.compare import Comparison, RunCounts, compare
from gate.metrics.decision import FAIL, INCONCLUSIVE, PASS, PairedRule, regression_outcome
from gate.metrics.paired import (
    benjamini_hochberg,
    fisher_worse,
    holm,
    holm_rejects,
    minimum_detectable_effect,
    paired_test,
    trials_needed,
    within_variance,
)
from gate.metrics.skew import skew_corrected, skew_corrected_p
from gate.report import wording


def regression(result: Comparison, delta: float, detectable: float | None = None) -> int:
    """The max_regression decision on this comparison's bounds (D default δ + 0.05)."""
    d = delta + 0.05 if detectable is None else detectable
    return int(regression_outcome(result.test.lower, result.test.upper, "max_regression", delta, d))


def counts(passes: dict[str, int], trials: int = 5) -> dict[str, RunCounts]:
    return {s: RunCounts(trials, c) for s, c in passes.items()}


# --------------------------------------------------------------------- sign-flip, 5 stimuli


def test_five_stimulus_sign_flip_worked_on_paper() -> None:
    """Five stimuli, five trials each side; pass rate per stimulus.

    ========  ========  =========  ======
    stimulus  baseline  candidate  d_i
    ========  ========  =========  ======
    a         5/5       3/5        -0.4
    b         4/5       3/5        -0.2
    c         5/5       2/5        -0.6
    d         2/5       3/5        +0.2
    e         3/5       1/5        -0.4
    ========  ========  =========  ======

    Σ d_i = -1.4, Δ = mean(d) = -0.28 (the candidate is 28 points worse on average).

    Only 5 shared stimuli (< 30): exact sign-flip permutation over 2^5 = 32 sign
    patterns. Each pattern's statistic is Σ s_i |d_i| with |d| = (0.4, 0.2, 0.6,
    0.2, 0.4), Σ|d| = 1.8. Writing P for the |d_i| kept positive and N for those
    made negative, P + N = 1.8 and the statistic is P - N = 2P - 1.8. A pattern is
    at least as low as the observed -1.4 when 2P - 1.8 ≤ -1.4, i.e. P ≤ 0.2:

        P = 0 (all negative), P = 0.2 (only b positive), P = 0.2 (only d positive)

    3 patterns of 32, so the one-sided p-value is 3/32 = 0.09375 > 0.05: the
    max_regression gate with δ = 0 passes (the data do not show a regression).

    Upper 95% bound by test inversion: with r = floor(0.05 · 32) = 1, U is the
    2nd largest subset mean counting the empty flip set as +∞, i.e. the largest
    single d_i = +0.2. For the other direction (H0: Δ ≤ 0), the patterns at least as
    high as -1.4 are all but the all-negative one: p_better = 31/32. Two-sided 95%:
    floor(0.025 · 32) = 0, no pattern can reject, so the interval is the whole
    range [-1, 1].
    """
    base = counts({"a": 5, "b": 4, "c": 5, "d": 2, "e": 3})
    cand = counts({"a": 3, "b": 3, "c": 2, "d": 3, "e": 1})
    result = compare(base, cand)
    reason = wording.paired_test_reason(result.test)
    assert result.test.method == "exact sign-flip permutation"
    assert reason.startswith("exact sign-flip permutation over 2^5 = 32 sign patterns")
    assert "only 5 shared stimuli" in reason
    assert [row.delta for row in result.rows] == pytest.approx([-0.4, -0.2, -0.6, 0.2, -0.4])
    assert result.delta == pytest.approx(-0.28)
    assert result.test.patterns == 32
    assert Fraction(result.test.p_worse) == Fraction(3, 32)
    assert Fraction(result.test.p_better) == Fraction(31, 32)
    assert result.test.upper == pytest.approx(0.2)
    assert result.test.lower == pytest.approx(-0.6)
    assert result.test.interval == (-1.0, 1.0)
    # δ = 0: U = +0.2 ≥ 0, no drop is shown; L = -0.6 < -0.05, no drop beyond 5 points
    # is ruled out either: the gate is inconclusive (it used to pass here).
    assert regression(result, 0.0) == INCONCLUSIVE
    # L = -0.6 exactly: a drop of 0.6 is still inside the confidence set, so a detectable
    # margin of 0.6 is not ruled out (inconclusive); a margin of 0.61 is (L > -0.61): pass.
    assert regression(result, 0.0, detectable=0.6) == INCONCLUSIVE
    assert regression(result, 0.0, detectable=0.61) == PASS


def test_five_stimulus_all_worse_fails_and_margin_by_hand() -> None:
    """All five differences negative: d = (-0.4, -0.2, -0.6, -0.2, -0.4).

    δ = 0: only the observed all-negative pattern is as low as Σ d = -1.8, so
    p = 1/32 = 0.03125 ≤ 0.05: fail. U = largest d_i = -0.2 < 0.

    δ = 0.25 (H0: Δ ≥ -0.25): a flip set F is as extreme when mean_F(d) ≥ -0.25:
    the empty set, {b}, {d} and {b, d} (means -0.2) qualify, {a, b} (-0.3) does not:
    p = 4/32 = 1/8: pass, and indeed U = -0.2 ≥ -0.25.

    δ = 0.15: only the empty set has mean ≥ -0.15: p = 1/32: fail (U = -0.2 < -0.15).

    δ = 0.2 sits exactly on U: {b}, {d}, {b, d} tie at mean -0.2 and ties count as
    extreme, p = 4/32: pass. The gate fails only when U < -δ strictly.
    """
    base = counts({"a": 5, "b": 4, "c": 5, "d": 4, "e": 5})
    cand = counts({"a": 3, "b": 3, "c": 2, "d": 3, "e": 3})
    expected = {0.0: (Fraction(1, 32), True), 0.25: (Fraction(4, 32), False)}
    expected |= {0.15: (Fraction(1, 32), True), 0.2: (Fraction(4, 32), False)}
    result = compare(base, cand)
    flip = paired_test(result.differences)  # the sign flip alone, without the trials' noise
    assert Fraction(flip.p_worse) == Fraction(1, 32)  # the report's test is at 0
    assert flip.upper == pytest.approx(-0.2)
    assert flip.lower == pytest.approx(-0.6)  # r = 1: the 2nd smallest subset mean
    for delta, (p, fails) in expected.items():
        at = paired_test(result.differences, margin=delta)
        assert Fraction(at.p_worse) == p, delta
        assert at.rejects_worse is fails, delta
        assert at.upper == flip.upper  # the bounds do not depend on the margin
    # Five trials a side: the differences (sd 0.17) spread less than their trials' noise
    # (about 0.28 each), which widens U to −0.129 (tests/compare/test_trial_noise.py):
    # δ = 0 is still shown, δ = 0.15 no longer is.
    assert result.test.noise_floor == ("upper",)
    assert result.test.upper == pytest.approx(-0.12884, abs=1e-5)
    assert result.test.lower == pytest.approx(-0.6)
    assert regression(result, 0.0) == FAIL and result.test_at(margin=0.0).rejects_worse
    assert not result.test_at(margin=0.15).rejects_worse
    assert regression(result, 0.15) == INCONCLUSIVE
    # δ = 0.25 is not shown, and a drop beyond D = 0.30 is not ruled out (L = -0.6).
    assert regression(result, 0.25) == INCONCLUSIVE


def test_four_stimuli_can_never_fail_and_say_so() -> None:
    """2^4 = 16 patterns: the smallest p-value is 1/16 = 0.0625 > 0.05."""
    base = counts({"a": 5, "b": 5, "c": 5, "d": 5})
    cand = counts({"a": 0, "b": 0, "c": 0, "d": 0})
    result = compare(base, cand)
    assert result.test.p_worse == 1 / 16
    assert result.test.upper == 1.0 and result.test.lower == -1.0  # no bound: the whole range
    # A 100-point drop on every stimulus, and still neither shown nor ruled out: never a pass.
    assert regression(result, 0.0) == INCONCLUSIVE
    notes = wording.comparison_notes(result)
    assert any("smallest attainable p-value is 1/16" in note for note in notes)


# --------------------------------------------------------------------- paired t by hand


def t4_cdf(t: float) -> float:
    """Student t CDF with 4 degrees of freedom in closed form.

    F(t) = 1/2 + (3/4) x - (1/4) x³ with x = t / sqrt(t² + 4).
    """
    x = t / math.sqrt(t * t + 4.0)
    return 0.5 + 0.75 * x - 0.25 * x**3


def test_paired_t_worked_on_paper() -> None:
    """Mean scores of five stimuli, the t test forced (the automatic rule wants 30).

    baseline  = (0.9, 0.6, 0.7, 0.5, 0.8)
    candidate = (0.6, 0.5, 0.5, 0.5, 0.4)
    d         = (-0.3, -0.1, -0.2, 0.0, -0.4)

    Δ = -1.0 / 5 = -0.2; deviations d - Δ = (-0.1, 0.1, 0, 0.2, -0.2),
    Σ (d - Δ)² = 0.01 + 0.01 + 0 + 0.04 + 0.04 = 0.10, s² = 0.10 / 4 = 0.025,
    SE = sqrt(0.025 / 5) = sqrt(0.005) = 0.0707107.

    t = -0.2 / sqrt(0.005) = -2 sqrt(2) = -2.828427 with 4 degrees of freedom.
    With the closed-form t_4 CDF, x = t / sqrt(t² + 4) = -sqrt(8/12) = -sqrt(2/3):

        p = 1/2 - (3/4) sqrt(2/3) + (1/4)(2/3) sqrt(2/3) = 1/2 - (7/12) sqrt(2/3)
          = 0.0237103                                        ≤ 0.05: fail at δ = 0

    Upper 95% bound: Δ + t_{0.95, 4} SE = -0.2 + 2.131847 · 0.0707107 = -0.049255.

    Margin δ = 0.05: t = (-0.2 + 0.05) / sqrt(0.005) = -1.5 sqrt(2), x² = 4.5 / 8.5
    = 9/17, p = 1/2 - sqrt(9/17)(3/4 - 9/68) = 1/2 - 63 / (34 sqrt(17)) = 0.0505958
    > 0.05: pass, consistent with U = -0.049255 ≥ -0.05.
    """
    base_scores = [0.9, 0.6, 0.7, 0.5, 0.8]
    cand_scores = [0.6, 0.5, 0.5, 0.5, 0.4]
    d = [c - b for b, c in zip(base_scores, cand_scores, strict=True)]
    test = paired_test(d, method="t", limits=(-math.inf, math.inf))
    assert test.method == "paired t" and test.df == 4
    assert "(requested)" in wording.paired_test_reason(test)
    assert test.delta == pytest.approx(-0.2, abs=1e-15)
    assert test.se == pytest.approx(math.sqrt(0.005), rel=1e-12)
    assert test.statistic == pytest.approx(-2.0 * math.sqrt(2.0), rel=1e-12)
    by_hand = 0.5 - 7.0 / 12.0 * math.sqrt(2.0 / 3.0)
    assert t4_cdf(-2.0 * math.sqrt(2.0)) == pytest.approx(by_hand, rel=1e-14)
    assert test.p_worse == pytest.approx(by_hand, rel=1e-12)
    assert test.upper == pytest.approx(-0.2 + 2.1318467863266495 * math.sqrt(0.005), rel=1e-10)
    assert test.rejects_worse

    # An independent implementation: scipy.stats on the raw paired values.
    reference = stats.ttest_rel(cand_scores, base_scores, alternative="less")
    assert test.p_worse == pytest.approx(reference.pvalue, rel=1e-10)
    assert test.statistic == pytest.approx(reference.statistic, rel=1e-10)
    ci = stats.ttest_rel(cand_scores, base_scores).confidence_interval(0.95)
    assert test.interval == pytest.approx((ci.low, ci.high), rel=1e-10)
    one_sided = reference.confidence_interval(0.95)
    assert test.upper == pytest.approx(one_sided.high, rel=1e-10)

    margin = paired_test(d, method="t", margin=0.05, limits=(-math.inf, math.inf))
    p_margin = margin.p_worse
    assert p_margin == pytest.approx(0.5 - 63.0 / (34.0 * math.sqrt(17.0)), rel=1e-12)
    shifted = [c + 0.05 for c in cand_scores]
    assert p_margin == pytest.approx(
        stats.ttest_rel(shifted, base_scores, alternative="less").pvalue, rel=1e-10
    )
    assert not margin.rejects_worse
    assert margin.upper >= -0.05

    # Through compare() on mean scores the pairing gives the same differences.
    base = {f"s{i}": RunCounts(1, 1, score_mean=v) for i, v in enumerate(base_scores)}
    cand = {f"s{i}": RunCounts(1, 1, score_mean=v) for i, v in enumerate(cand_scores)}
    scored = compare(base, cand, metric="score")
    assert scored.differences.tolist() == pytest.approx(d)
    assert scored.test.method == "exact sign-flip permutation"  # 5 stimuli: not t


def test_auto_uses_t_from_30_stimuli_and_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    a = rng.binomial(5, 0.7, 40)
    b = rng.binomial(5, 0.6, 40)
    base = {f"s{i}": RunCounts(5, int(x)) for i, x in enumerate(a)}
    cand = {f"s{i}": RunCounts(5, int(x)) for i, x in enumerate(b)}
    result = compare(base, cand)
    assert result.test.method == "paired t"
    assert wording.paired_test_reason(result.test).startswith(
        "paired t with 39 degrees of freedom: 40 shared stimuli (≥ 30), "
        "enough for the t approximation"
    )
    # compare() sorts ids (s0, s1, s10, …); align the raw arrays the same way.
    order = [int(s[1:]) for s in sorted(base)]
    d = b[order] / 5 - a[order] / 5
    # Each p-value is the larger of plain t's (scipy) and Hall's skewness-corrected t's,
    # each bound the wider (tests/compare/test_skew.py checks Hall's against scipy too).
    worse = stats.ttest_rel(b[order] / 5 + 0.02, a[order] / 5, alternative="less")
    better = stats.ttest_rel(b[order] / 5, a[order] / 5, alternative="greater")
    assert result.test_at(margin=0.02).p_worse == pytest.approx(
        max(worse.pvalue, skew_corrected_p(d, -0.02, "worse")), rel=1e-9
    )
    assert result.test.p_better == pytest.approx(
        max(better.pvalue, skew_corrected_p(d, 0.0, "better")), rel=1e-9
    )
    plain = stats.ttest_rel(b[order] / 5, a[order] / 5, alternative="less")
    assert result.test.p_worse == pytest.approx(
        max(plain.pvalue, skew_corrected_p(d, 0.0, "worse")), rel=1e-9
    )
    hall = skew_corrected(d[None, :], 0.95)
    assert result.test.lower == pytest.approx(
        min(better.confidence_interval(0.95).low, float(hall.lower[0])), rel=1e-9
    )
    assert result.test.upper == pytest.approx(
        max(plain.confidence_interval(0.95).high, float(hall.upper[0])), rel=1e-9
    )


# --------------------------------------------------------------------- Fisher, Holm, BH


def test_fisher_by_hand_and_against_scipy() -> None:
    """5/5 baseline vs 2/5 candidate: T = 7 passes in N = 10 trials.

    P(X ≥ 5) = C(7,5) C(3,0) / C(10,5) = 21 / 252 = 1/12.
    3/3 vs 0/3: C(3,3) C(3,0) / C(6,3) = 1/20, the smallest value at 3 + 3 trials.
    """
    assert fisher_worse(5, 5, 5, 2) == 1 / 12
    assert fisher_worse(3, 3, 3, 0) == 1 / 20
    assert fisher_worse(3, 0, 3, 3) == 1.0
    rng = np.random.default_rng(3)
    for _ in range(200):
        n_a, n_b = (int(x) for x in rng.integers(1, 12, 2))
        c_a, c_b = int(rng.integers(0, n_a + 1)), int(rng.integers(0, n_b + 1))
        table = [[c_a, n_a - c_a], [c_b, n_b - c_b]]
        reference = stats.fisher_exact(table, alternative="greater").pvalue
        mine = fisher_worse(n_a, c_a, n_b, c_b)
        assert mine == pytest.approx(reference, rel=1e-9, abs=1e-15)
    # Above 2,000 trials the sum runs in logs.
    big = fisher_worse(1500, 1200, 1500, 1150)
    table = [[1200, 300], [1150, 350]]
    assert big == pytest.approx(stats.fisher_exact(table, alternative="greater").pvalue, rel=1e-8)


def holm_by_hand(p: list[float], alpha: float) -> list[bool]:
    """Holm's rule as written in statistics.md §5, a plain loop (no statsmodels)."""
    order = sorted(range(len(p)), key=p.__getitem__)
    reject = [False] * len(p)
    for i, index in enumerate(order):  # i = 0 for the smallest p
        if p[index] > alpha / (len(p) - i):
            break
        reject[index] = True
    return reject


def test_holm_worked_example() -> None:
    """p = (0.01, 0.04, 0.03, 0.005), m = 4.

    Sorted: 0.005 · 4 = 0.02; 0.01 · 3 = 0.03; 0.03 · 2 = 0.06; 0.04 · 1 = 0.04, carried
    up to the running maximum 0.06. Adjusted (in input order): (0.03, 0.06, 0.06, 0.02).
    At α = 0.05: the step-down thresholds are 0.05/4, 0.05/3, 0.05/2, 0.05/1;
    0.005 ≤ 0.0125 and 0.01 ≤ 0.0167 reject, 0.03 > 0.025 stops.
    """
    p = [0.01, 0.04, 0.03, 0.005]
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert (holm(p) <= 0.05).tolist() == [True, False, False, True]
    assert holm_by_hand(p, 0.05) == [True, False, False, True]
    assert holm([]).size == 0


def test_holm_matches_the_step_down_rule_on_random_inputs() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        m = int(rng.integers(1, 30))
        p = rng.choice([0.001, 0.002, 0.01, 0.02, 0.05], m) * rng.uniform(0.2, 3.0, m)
        p = np.minimum(p, 1.0)
        for alpha in (0.01, 0.05, 0.1):
            assert (holm(p) <= alpha).tolist() == holm_by_hand(p.tolist(), alpha)


def test_holm_rejects_is_holm_at_alpha_on_batches_with_ties() -> None:
    """The candidates-only step-down against holm() ≤ α: batches of families (R, M), ties
    (p-values from a few values, as discrete tests give), NaN, and α at 0, between, and 1."""
    rng = np.random.default_rng(23)
    values = np.array([0.0, 0.001, 0.004, 0.01, 0.0125, 0.02, 0.025, 0.05, 0.3, 1.0, np.nan])
    for _ in range(400):
        shape = (int(rng.integers(1, 5)), int(rng.integers(1, 12)))
        p = rng.choice(values, shape) if rng.random() < 0.5 else rng.random(shape) ** 4
        for alpha in (0.0, 0.01, 0.025 + 1e-12, 0.05, 0.5, 1.0):
            assert (holm_rejects(p, alpha) == (holm(p) <= alpha)).all()
    # 0.005·4 = 0.02 and 0.01·3 = 0.03 ≤ 0.05, then 0.03·2 = 0.06 stops the step-down
    assert holm_rejects([0.01, 0.04, 0.03, 0.005], 0.05).tolist() == [True, False, False, True]
    # in the second family 0.005·4 = 0.02 > 0.0125: nothing rejected there
    batch = holm_rejects([[0.001, 0.9, 0.9, 0.9], [0.005, 0.005, 0.9, 0.9]], 0.0125)
    assert batch.tolist() == [[True, False, False, False], [False, False, False, False]]
    assert holm_rejects(np.zeros((3, 0)), 0.05).shape == (3, 0)


def test_benjamini_hochberg_against_scipy() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        p = rng.uniform(0.0, 0.2, int(rng.integers(1, 40)))
        assert benjamini_hochberg(p) == pytest.approx(stats.false_discovery_control(p))
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx(
        [0.02, 0.04, 0.04, 0.02]
    )


def test_per_stimulus_gate_flags_a_clear_regression_with_holm() -> None:
    """Ten trials a side; stimulus 'broken' goes 10/10 → 0/10.

    Fisher: 1 / C(20, 10) = 1/184756 = 5.4e-6; Holm over 12 stimuli multiplies the
    smallest p by 12: 6.5e-5 ≤ 0.05, flagged. 'wobbly' (10/10 → 8/10) has
    p = C(18,10) C(2,0) / C(20,10) = 43758 / 184756 = 0.237: not flagged.
    """
    base = counts({f"ok{i}": 10 for i in range(10)} | {"broken": 10, "wobbly": 10}, 10)
    cand = counts({f"ok{i}": 10 for i in range(10)} | {"broken": 0, "wobbly": 8}, 10)
    result = compare(base, cand)
    row = {r.id: r for r in result.rows}
    assert row["broken"].p_worse == 1 / 184756
    assert row["broken"].p_holm == pytest.approx(12 / 184756)
    assert row["wobbly"].p_worse == pytest.approx(43758 / 184756)
    assert result.regressed == ("broken",)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.25, 0.95, "stimuli")
    ids = [r.id for r in result.rows]
    counts_ = [
        [getattr(getattr(r, side), attr) for r in result.rows]
        for side in ("baseline_counts", "candidate_counts")
        for attr in ("n", "c")
    ]
    decided = rule.evaluate_stimuli(*counts_)
    assert decided.outcome.tolist() == [FAIL]
    assert decided.stimuli is not None
    assert [x for x, code in zip(ids, decided.stimuli[0], strict=True) if code == FAIL] == [
        "broken"
    ]


def test_large_stimuli_are_flagged_as_holm_on_the_exact_p_values_flags_them() -> None:
    """Stimuli of 300 to 1,000 trials a side (the p-values shown come from the float form
    there): which are flagged worse is Holm on the exact Fisher p-values, the shown p-values
    are within 1e-10 of the exact ones, and a stimulus of 999 + 999 trials (C(1998, 999)
    is past the float range) gets its floor without an error."""
    rng = np.random.default_rng(8)
    trials = rng.integers(300, 1_001, size=40)
    trials[0] = 999
    base_c = rng.binomial(trials, 0.8)
    cand_c = rng.binomial(trials, np.where(np.arange(40) < 6, 0.72, 0.8))
    names = [f"s{i:02d}" for i in range(40)]
    rows = list(zip(names, trials.tolist(), base_c.tolist(), cand_c.tolist(), strict=True))
    base = {s: RunCounts(n, b) for s, n, b, _ in rows}
    cand = {s: RunCounts(n, c) for s, n, _, c in rows}
    result = compare(base, cand)
    exact = np.array([fisher_worse(n, b, n, c) for _, n, b, c in rows])
    worse = holm_rejects(exact, 0.05).tolist()
    flagged = tuple(s for s, bad in zip(names, worse, strict=True) if bad)
    assert flagged and result.regressed == flagged
    shown = np.array([row.p_worse for row in result.rows])
    assert np.allclose(shown, exact, rtol=1e-10, atol=0.0)
    assert result.fisher_floor == 0.0


def test_three_trials_cannot_flag_a_single_stimulus_and_say_so() -> None:
    base = counts({f"s{i}": 3 for i in range(10)}, 3)
    cand = counts({f"s{i}": 0 for i in range(10)}, 3)
    result = compare(base, cand)
    assert all(r.p_worse == 1 / 20 for r in result.rows)
    assert result.regressed == ()
    notes = wording.comparison_notes(result)
    assert any("No single stimulus can be shown worse" in note for note in notes)


# --------------------------------------------------------------------- power


def test_minimum_detectable_effect_and_trials_by_hand() -> None:
    """40 stimuli × 5 trials a side, nothing changed: 20 stimuli 5/5, 20 stimuli 3/5.

    Within-stimulus variance per trial c(K-c)/(K(K-1)): 0 for 5/5 and
    3·2/(5·4) = 0.3 for 3/5, so σ_A² = σ_B² = 0.15 and σ²/K = 0.03 per side.
    All d_i = 0, so sd(d)² = 0 and ω² = max(0, 0 - 0.06) = 0; Var(d) = 0.06.

    z_{0.95} + z_{0.80} = 1.644854 + 0.841621 = 2.486475, squared 6.182557.

        MDE = 2.486475 · sqrt(0.06 / 40) = 2.486475 · 0.0387298 = 0.0963  (9.6 points)

    Trials for δ = 0.05 at M = 40: K = ceil((0.15 + 0.15) / (40 · 0.05² / 6.182557 - 0))
    = ceil(0.3 / 0.0161745) = ceil(18.548) = 19.
    """
    base = counts({f"s{i:02d}": 5 if i < 20 else 3 for i in range(40)})
    result = compare(base, base)
    power = result.power
    assert within_variance([5] * 20 + [5] * 20, [5] * 20 + [3] * 20) == pytest.approx((0.15, 0.03))
    assert power.between == 0.0
    assert power.variance == pytest.approx(0.06)
    z = 1.6448536269514722 + 0.8416212335729143
    assert power.mde == pytest.approx(z * math.sqrt(0.06 / 40), rel=1e-12)
    assert power.mde == pytest.approx(0.0963, abs=5e-5)
    assert minimum_detectable_effect(0.06, 40) == power.mde
    assert trials_needed(0.05, 40, 0.0, 0.15, 0.15) == 19
    # every d_i equal (all 0): t is undefined, the permutation test takes over, exactly
    reason = wording.paired_test_reason(result.test)
    assert result.test.method == "exact sign-flip permutation"
    assert reason.startswith("exact sign-flip permutation over 2^40 = 1,099,511,627,776")
    assert "standard error is 0" in reason
    assert result.test.p_worse == 1.0
    assert wording.power_sentence(result) == (
        "With 40 shared stimuli × 5 trials, a true drop of 9.6 points would be shown with 80% "
        "probability at 95% one-sided confidence (minimum detectable effect, normal "
        "approximation)."
    )


def test_trials_not_reachable_when_between_stimulus_variance_dominates() -> None:
    """Baseline all 5/5; the candidate breaks half the stimuli completely (d = -1 or 0).

    No within-stimulus variance, sd(d)² = 0.25 · 40/39 = 0.25641 = ω². For δ = 0.05 the
    budget M δ² / z² = 40 · 0.0025 / 6.182557 = 0.0162 < ω²: more trials cannot help.
    """
    base = counts({f"s{i:02d}": 5 for i in range(40)})
    cand = counts({f"s{i:02d}": 0 if i % 2 else 5 for i in range(40)})
    power = compare(base, cand).power
    assert power.between == pytest.approx(0.25 * 40 / 39)
    assert trials_needed(0.05, 40, 0.25 * 40 / 39, 0.0, 0.0) is None


def test_no_drop_is_detectable_when_the_sign_flip_test_cannot_reject() -> None:
    """M = 4 at 95%: 2^4 = 16 sign patterns, smallest p = 1/16 = 0.0625 > 0.05.

    The normal approximation would still print an MDE (here 2.486 · sqrt(Var(d)/4));
    no drop of any size can fail the gate, so the report must say so instead.
    2^5 = 32 ≥ 1/0.05 = 20, so 5 stimuli are the fewest that can. At 99%:
    2^7 = 128 ≥ 100 > 2^6, so 7.
    """
    base = counts({"a": 5, "b": 4, "c": 5, "d": 3})
    cand = counts({"a": 1, "b": 2, "c": 0, "d": 3})
    result = compare(base, cand)
    assert result.power.blind and result.power.mde is None
    assert wording.power_sentence(result) == (
        "With 4 shared stimuli × 5 trials, no drop is detectable at 95% one-sided confidence: "
        "the exact sign-flip permutation test has only 2^4 = 16 sign patterns, so its "
        "smallest p-value is 1/16 = 0.0625 > α = 0.05; at least 5 shared stimuli are needed."
    )
    one = compare(counts({"a": 3}), counts({"a": 1}))
    assert wording.power_sentence(one).startswith(
        "With 1 shared stimulus × 5 trials, no drop is detectable at 95% one-sided confidence: "
        "the exact sign-flip permutation test has only 2^1 = 2 sign patterns"
    )
    single = compare(counts({"a": 1, "b": 0}, trials=1), counts({"a": 0, "b": 0}, trials=1))
    assert wording.power_sentence(single).startswith("With 2 shared stimuli × 1 trial, ")
    uneven = compare(counts({"a": 1}, trials=1), counts({"a": 0}, trials=3))
    assert wording.power_sentence(uneven).startswith(
        "With 1 shared stimulus × 1 baseline / 3 candidate trials, "
    )
    six = {f"s{i}": 5 for i in range(6)}
    at99 = compare(counts(six), counts({s: 2 for s in six}), confidence=0.99)
    assert at99.power.blind
    assert "at least 7 shared stimuli are needed" in wording.power_sentence(at99)
    # Forcing the t test (which can reject at M = 4) keeps a bound.
    forced = paired_test(result.differences, method="t")
    assert forced.upper < 1.0


def test_small_sign_flip_mde_is_labelled_optimistic_and_is() -> None:
    """10 stimuli: the sign-flip test decides, so the normal MDE is labelled optimistic.

    The label is true: with d_i ~ Normal(-MDE, 0.2²) and M = 6 stimuli, the exact
    sign-flip test rejects in about 65% of 2,000 seeded runs, not the 80% the normal
    approximation promises.
    """
    base = counts({f"s{i}": 5 for i in range(10)})
    cand = counts({f"s{i}": 5 - i % 3 for i in range(10)})
    result = compare(base, cand)
    power = result.power
    assert power.mde is not None and power.approximate
    sentence = wording.power_sentence(result)
    assert f"a true drop of {100 * power.mde:.1f} points would be shown" in sentence
    assert (
        "(minimum detectable effect, normal approximation; optimistic for the exact "
        "sign-flip permutation test used with only 10 stimuli)." in sentence
    )
    many = counts({f"s{i:02d}": 5 if i < 20 else 3 for i in range(40)})
    assert not compare(many, many).power.approximate  # 40 stimuli: t when the spread is > 0

    rng = np.random.default_rng(0)
    m, sd = 6, 0.2
    mde = minimum_detectable_effect(sd**2, m)
    rejected = sum(paired_test(rng.normal(-mde, sd, m)).rejects_worse for _ in range(2000))
    assert rejected / 2000 < 0.72


def test_power_for_other_metrics_uses_the_observed_spread_only() -> None:
    base = counts({f"s{i}": 5 - i % 3 for i in range(12)})
    cand = counts({f"s{i}": 4 - i % 2 for i in range(12)})
    result = compare(base, cand, metric="pass_hat_k", k=2)
    d = np.array([row.delta for row in result.rows])
    assert result.power.variance == pytest.approx(np.var(d, ddof=1))


# --------------------------------------------------------------------- categories, lists


def test_categories_added_and_removed() -> None:
    base = {
        "a": RunCounts(3, 3),
        "b": RunCounts(3, 0),
        "c": RunCounts(3, 3),
        "d": RunCounts(3, 1),
        "e": RunCounts(3, 0),
        "f": RunCounts(3, 2),
        "g": RunCounts(3, 3),
        "h": RunCounts(3, 1),
        "i": RunCounts(3, 0),
        "j": RunCounts(5, 4),
        "k": RunCounts(3, 2),
        "gone": RunCounts(3, 3),
    }
    cand = {
        "a": RunCounts(3, 0),
        "b": RunCounts(3, 3),
        "c": RunCounts(3, 2),
        "d": RunCounts(3, 3),
        "e": RunCounts(3, 1),
        "f": RunCounts(3, 0),
        "g": RunCounts(3, 3),
        "h": RunCounts(3, 2),
        "i": RunCounts(3, 0),
        "j": RunCounts(5, 1),
        "k": RunCounts(6, 4),
        "new": RunCounts(3, 1),
    }
    result = compare(base, cand)
    assert result.newly_failing == ("a", "f")
    assert result.fixed == ("b",)
    assert result.newly_flaky == ("c",)
    assert result.with_status("no longer flaky") == ("d",)
    assert result.with_status("partly fixed") == ("e",)
    # flaky in both runs: 1/3 → 2/3 and 4/5 → 1/5 are not "unchanged"; 2/3 → 4/6 is
    assert result.with_status("still flaky") == ("h", "j")
    assert result.with_status("unchanged") == ("g", "i", "k")
    assert result.added == ("new",)
    assert result.removed == ("gone",)
    assert result.shared == tuple("abcdefghijk")
    assert result.test.stimuli == 11
    notes = wording.comparison_notes(result)
    assert any("1 stimulus only in the candidate (added)" in n for n in notes)
    row = {r.id: r for r in result.rows}
    assert (row["c"].baseline_state, row["c"].candidate_state) == ("pass", "flaky")


def test_exclusions_are_listed_with_reasons() -> None:
    base = {"a": RunCounts(5, 5), "b": RunCounts(2, 2), "c": RunCounts(0, 0)}
    cand = {"a": RunCounts(5, 4), "b": RunCounts(5, 5), "c": RunCounts(5, 5)}
    result = compare(base, cand, metric="pass_hat_k", k=3)
    assert [(x.id, x.reason, x.run, x.trials) for x in result.excluded] == [
        ("b", "fewer than k", "baseline", 2),
        ("c", "no trials", "baseline", 0),
    ]
    assert [x.describe(3) for x in result.excluded] == [
        "2 trials in the baseline, fewer than k = 3",
        "no counted trials in the baseline",
    ]
    one = compare(
        {"a": RunCounts(1, 1)}, {"a": RunCounts(5, 5)}, metric="pass_hat_k", k=3
    )
    assert one.excluded[0].describe(3) == "1 trial in the baseline, fewer than k = 3"
    assert [row.id for row in result.rows] == ["a"]
    # pass^3 unbiased: C(4,3)/C(5,3) = 4/10
    assert result.rows[0].candidate == pytest.approx(0.4)
    default_k = compare(base, cand, metric="pass_hat_k")
    assert default_k.k == 2  # the fewest counted trials among paired stimuli
    scores = compare(
        {"a": RunCounts(1, 1, score_mean=0.5), "b": RunCounts(1, 1)},
        {"a": RunCounts(1, 0, score_mean=0.25), "b": RunCounts(1, 1, score_mean=1.0)},
        metric="score",
    )
    assert [(x.id, x.reason, x.run) for x in scores.excluded] == [("b", "no score", "baseline")]


# --------------------------------------------------------------------- edge cases


def all_floats(result: Comparison) -> list[float]:
    values = [result.test.upper, result.test.lower, *result.test.interval]
    values += [result.test.p_worse, result.test.p_better]
    for optional in (result.test.delta, result.test.se, result.power.mde, result.power.variance):
        if optional is not None:
            values.append(optional)
    for row in result.rows:
        values += [row.baseline, row.candidate, row.delta, row.p_worse, row.p_holm, row.q_bh]
    return values


def test_no_shared_stimuli() -> None:
    result = compare(counts({"a": 1}), counts({"b": 1}))
    assert result.test.method == "none" and result.delta is None
    assert result.added == ("b",) and result.removed == ("a",)
    assert result.rows == () and result.fisher_floor is None
    # nothing to decide on: the bounds are the whole range, never a pass
    assert regression(result, 0.05) == INCONCLUSIVE
    assert result.power.mde is None
    assert wording.power_sentence(result).startswith("No shared stimuli")
    assert all(math.isfinite(v) for v in all_floats(result))


def test_one_shared_stimulus() -> None:
    result = compare(counts({"a": 5}), counts({"a": 0}))
    forced = paired_test(result.differences, method="t")
    assert forced.method == "exact sign-flip permutation"
    assert "single shared stimulus has no standard error" in wording.paired_test_reason(forced)
    assert forced.p_worse == 0.5 and forced.se is None
    assert regression(result, 0.0) == INCONCLUSIVE
    assert all(math.isfinite(v) for v in all_floats(result))


def test_equal_differences_fall_back_to_permutation() -> None:
    """Five stimuli 5/5 → 4/5: d_i = -0.2 each, sd = 0. The exact sign-flip test:
    only the all-negative pattern reaches Σ = -1.0, p = 1/32, and U = -0.2."""
    base = counts({c: 5 for c in "abcde"})
    cand = counts({c: 4 for c in "abcde"})
    forced = paired_test(compare(base, cand).differences, method="t", margin=0.1)
    assert forced.method == "exact sign-flip permutation" and forced.zero_spread
    assert forced.p_worse == 1 / 32
    assert forced.upper == pytest.approx(-0.2)
    assert forced.rejects_worse


def test_equal_differences_at_any_size_are_exact_and_cheap() -> None:
    """3,000 stimuli all 5/5 → 4/5: p = 2^-3000 (0.0 in floats), U = L = -0.2, no memory blow-up."""
    base = counts({f"s{i}": 5 for i in range(3000)})
    cand = counts({f"s{i}": 4 for i in range(3000)})
    result = compare(base, cand)
    assert result.test.method == "exact sign-flip permutation"
    reason = wording.paired_test_reason(result.test)
    assert reason.startswith("exact sign-flip permutation over 2^3000 sign patterns")
    assert "all 3000 differences are equal (−20.0 points)" in reason
    assert result.test.patterns == 2**3000
    assert result.test.p_worse == 0.0 and result.test.p_better == 1.0
    # The sign flip alone: U = L = -0.2; the trials' noise widens both by about a point.
    assert paired_test(result.differences).upper == pytest.approx(-0.2)
    assert result.test.upper == pytest.approx(-0.19468, abs=1e-5)
    assert result.test.lower == pytest.approx(-0.20543, abs=1e-5)
    assert regression(result, 0.1) == FAIL


def test_identical_runs_never_fail() -> None:
    base = counts({f"s{i}": i % 6 for i in range(35)})
    result = compare(base, base)
    assert result.test.p_worse == 1.0
    # every d_i = 0: the permutation test's bounds are all 0, but 5 trials a side leave
    # ±6.7 points of binomial noise over 35 stimuli: a drop of 5 points is not ruled out.
    assert (result.test.lower, result.test.upper) == pytest.approx((-0.06686, 0.06686), abs=1e-5)
    assert regression(result, 0.0) == INCONCLUSIVE
    assert regression(result, 0.0, 0.10) == PASS


def test_ragged_trial_counts() -> None:
    base = {"a": RunCounts(5, 5), "b": RunCounts(3, 2), "c": RunCounts(4, 4)}
    cand = {"a": RunCounts(4, 2), "b": RunCounts(5, 2), "c": RunCounts(1, 1)}
    result = compare(base, cand)
    assert [row.delta for row in result.rows] == pytest.approx([-0.5, 0.4 - 2 / 3, 0.0])
    assert any("error rates can exceed their level" in n for n in wording.comparison_notes(result))
    assert result.power.trials_baseline == 4.0
    assert "4 baseline / 3.3 (mean) candidate trials" in wording.power_sentence(result)
    assert all(math.isfinite(v) for v in all_floats(result))


def test_monte_carlo_path_is_seeded_and_described() -> None:
    rng = np.random.default_rng(2)
    base = {f"s{i}": RunCounts(3, int(x)) for i, x in enumerate(rng.binomial(3, 0.7, 25))}
    cand = {f"s{i}": RunCounts(3, int(x)) for i, x in enumerate(rng.binomial(3, 0.5, 25))}
    one = compare(base, cand)
    two = compare(base, cand)
    reason = wording.paired_test_reason(one.test)
    assert one.test.method == "Monte-Carlo sign-flip permutation"
    assert "65,536 random sign patterns (seed 0)" in reason
    assert "2^25 sign patterns are too many to enumerate" in reason
    assert one.test == two.test
    assert compare(base, cand, seed=1).test.p_worse != one.test.p_worse


def test_invalid_inputs_raise() -> None:
    good = counts({"a": 1})
    with pytest.raises(ValueError, match="0 ≤ c ≤ n"):
        compare({"a": RunCounts(3, 4)}, good)
    with pytest.raises(ValueError, match="score_mean must be finite"):
        compare({"a": RunCounts(2, 1, float("nan"))}, good)
    with pytest.raises(ValueError, match="confidence"):
        compare(good, good, confidence=1.0)
    with pytest.raises(ValueError, match="unknown metric"):
        compare(good, good, metric="pass_at_k")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"differences\[1\] is nan"):
        paired_test([0.1, float("nan")])


def test_import_is_pure() -> None:
    """numpy and scipy.special only: scipy.stats, click and yaml stay unloaded."""
    code = (
        "import sys, gate.compare, gate.metrics.decision; "
        "print(sorted(m for m in ('scipy.stats', 'click', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_lower_bound_exactly_at_minus_d_does_not_rule_out_a_drop_of_d(
    write_jsonl: Any, tmp_path: Any
) -> None:
    """10 stimuli × 5 trials, baseline 3 5 5 2 2 4 3 2 1 4, candidate 5 4 5 2 2 3 3 4 1 3:
    d = (+2 −1 0 0 0 −1 0 +2 0 −1)/5, Δ = +0.02. The exact sign-flip bounds are discrete, and
    the lower one lands exactly on −D = −0.10, where the same test does not reject "Δ ≤ −0.10"
    (p > 0.05): a drop of 10 points is still in the confidence set. The gate passed there
    (L ≥ −D), which made it pass 6–7% of runs at a true drop of D (seeded simulation at
    8–15 stimuli); now inconclusive."""
    from gate.pipeline import request_from_options, run_check

    base, cand = [3, 5, 5, 2, 2, 4, 3, 2, 1, 4], [5, 4, 5, 2, 2, 3, 3, 4, 1, 3]
    d = (np.array(cand) - np.array(base)) / 5
    tested = paired_test(d)
    assert tested.method == "exact sign-flip permutation"
    assert tested.lower == pytest.approx(-0.10, abs=1e-12)
    assert paired_test(d, gain=-0.10).p_better > 0.05
    assert int(regression_outcome(tested.lower, tested.upper, "max_regression", 0.05, 0.10)) == (
        INCONCLUSIVE
    )

    def rows(counts: list[int]) -> list[dict[str, Any]]:
        return [
            {"stimulus": f"st{i:02d}", "trial": t, "passed": t < c}
            for i, c in enumerate(counts)
            for t in range(5)
        ]

    baseline = write_jsonl(rows(base), name="base.jsonl")
    candidate = write_jsonl(rows(cand), name="cand.jsonl")
    request = request_from_options(
        [str(candidate)], config=None, baseline=[str(baseline)],
        overrides={"max_regression": "0.05"},
    )  # fmt: skip
    (gate,) = run_check(request).gates
    # Through the pipeline the trials' noise widens L below -0.10: still inconclusive.
    assert gate.outcome == "inconclusive" and gate.lower == pytest.approx(-0.12980, abs=1e-5)


@pytest.mark.parametrize("direct_terms", [15_000, 10])  # the default; the tails always
def test_fisher_in_logs_is_the_exact_sum_on_both_sides_of_the_mode(
    direct_terms: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past 2,000 trials the p-value is summed in logs from the tail it is made of: P(X ≥ c_a)
    from c_a up when c_a is past the mode, 1 − P(X < c_a) from c_a − 1 down otherwise, each
    over the terms within 40 of its scales. Against the exact integer sum, tables of
    2,002-5,000 trials, far into both tails and at the mode."""
    from gate.metrics import paired

    monkeypatch.setattr(paired, "_DIRECT_TERMS_MOST", direct_terms)
    paired.fisher_worse.cache_clear()
    rng = np.random.default_rng(44)
    for _ in range(20):
        n_a, n_b = (int(x) for x in rng.integers(1001, 2501, 2))
        c_a = int(rng.integers(0, n_a + 1))
        rate = c_a / n_a + float(rng.choice([0.0, 0.02, -0.02, 0.2, -0.2]))
        c_b = int(np.clip(round(rate * n_b), 0, n_b))
        top = min(c_a + c_b, n_a)
        numerator = sum(
            math.comb(c_a + c_b, x) * math.comb(n_a + n_b - c_a - c_b, n_a - x)
            for x in range(c_a, top + 1)
        )
        exact = numerator / math.comb(n_a + n_b, n_a)
        assert paired.fisher_worse(n_a, c_a, n_b, c_b) == pytest.approx(
            exact, rel=1e-9, abs=1e-15
        )
    paired.fisher_worse.cache_clear()


def test_fisher_of_huge_tables_strides_through_its_terms(monkeypatch) -> None:
    """Past a million terms every step-th one is summed, with the trapezoid rule's
    Euler–Maclaurin ends: the same p-values as summing them all (to the 10^-6 the logs of
    such factorials allow), and a table of 2^31 trials a side (the most a counts row may
    give) in a moment: all its terms took 8 GB."""
    from gate.metrics import paired

    tables = [
        (10**8, 5 * 10**7, 10**8, 5 * 10**7 - 20_000),
        (10**8, 99_900_000, 2 * 10**8, 199_796_839),
        (4 * 10**8, 4_000_000, 133_333_333, 1_330_016),
        (4 * 10**8, 399_600_000, 8 * 10**8, 799_200_000),
    ]
    every = []
    for table in tables:
        paired.fisher_worse.cache_clear()
        every.append(paired.fisher_worse(*table))
    monkeypatch.setattr(paired, "_FISHER_TERMS_MOST", 1000)
    for table, reference in zip(tables, every, strict=True):
        paired.fisher_worse.cache_clear()
        assert paired.fisher_worse(*table) == pytest.approx(reference, rel=1e-5)
    assert min(every) > 1e-6 and max(every) < 1
    paired.fisher_worse.cache_clear()
    half = 2**30
    # P(X ≥ mode) = 1/2 + P(X = mode)/2, the normal density's 1/(2·sqrt(2π)·σ), σ² = 2^31/8
    assert paired.fisher_worse(2**31, half, 2**31, half) == pytest.approx(0.5000122, abs=2e-5)
    assert paired.fisher_worse(2**31, half, 2**31, half + 10**6) == pytest.approx(1.0)
    # a drop of two standard deviations of the difference: the normal tail, Φ(-2)
    shift = 2 * 32768
    assert paired.fisher_worse(2**31, half, 2**31, half - shift) == pytest.approx(
        0.02275, rel=1e-3
    )
