"""Exact unconditional bounds of matched pass/fail pairs (gate/metrics/exact_matched_pairs.py):
their coverage computed independently over every outcome, inside the null as on its
boundary, and the suite rule's worst case, which Tango's asymptotic bound left above α
below 30 stimuli."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gate.metrics import exact_matched_pairs
from gate.metrics.decision import FAIL, PASS, PairedRule
from gate.metrics.exact_matched_pairs import (
    GRID_Q,
    GRID_THETA,
    MOST_STIMULI,
    exact_bounds,
    exact_p_value,
    lower_steps,
)
from gate.metrics.matched_pairs import tango_bounds


def _outcomes(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(b, c, log multinomial coefficient) of every outcome of m pairs."""
    b, c = zip(*[(b, c) for b in range(m + 1) for c in range(m + 1 - b)], strict=True)
    b_, c_ = np.array(b), np.array(c)
    log_choose = np.array(
        [math.log(math.comb(m, x) * math.comb(m - x, y)) for x, y in zip(b_, c_, strict=True)]
    )
    return b_, c_, log_choose


def _probability(m: int, log_choose: np.ndarray, b: np.ndarray, c: np.ndarray,
                 p01: float, p10: float) -> np.ndarray:  # fmt: skip
    rest = 1.0 - p01 - p10
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = (log_choose + np.where(b > 0, b * np.log(p01), 0.0)
                 + np.where(c > 0, c * np.log(p10), 0.0)
                 + np.where(m - b - c > 0, (m - b - c) * np.log(rest), 0.0))  # fmt: skip
    return np.exp(log_p)


@pytest.mark.parametrize("m", [5, 12, 20])
def test_the_bounds_cover_at_every_point_of_the_null(m: int) -> None:
    """P(L > Δ) ≤ α and P(U < Δ) ≤ α at every (p01, p10) of a 41 × 41 grid (p01 + p10 ≤ 1),
    the probabilities summed over every outcome."""
    b, c, log_choose = _outcomes(m)
    bounds = exact_bounds(b, c, np.full(b.size, m), 0.95)
    worst_low = worst_high = 0.0
    for p01 in np.linspace(0.0, 1.0, 41):
        for p10 in np.linspace(0.0, 1.0 - p01, max(round(40 * (1.0 - p01)) + 1, 1)):
            delta = p01 - p10
            probability = _probability(m, log_choose, b, c, p01, p10)
            worst_low = max(worst_low, float(probability[bounds.lower > delta + 1e-12].sum()))
            worst_high = max(worst_high, float(probability[bounds.upper < delta - 1e-12].sum()))
    assert worst_low <= 0.05 + 1e-9 and worst_high <= 0.05 + 1e-9, (worst_low, worst_high)


def test_tangos_bound_alone_does_not_cover_and_this_one_is_wider_there() -> None:
    """All 30 pairs concordant: Tango's lower bound −0.083 has (1 − 0.083)³⁰ = 7.4% when
    the candidate loses 8.3 points on some stimuli and gains on none."""
    tango = float(tango_bounds(0, 0, 30, 0.95).lower[0])
    exact = float(exact_bounds(0, 0, 30, 0.95).lower[0])
    assert (1.0 + tango) ** 30 > 0.07
    assert exact < tango and (1.0 + exact) ** 30 <= 0.05
    assert exact > -0.1 - 1e-12  # within a step (0.005) of where (1 + θ)^30 = 5%: −0.0950


def test_the_p_value_is_the_inverted_test() -> None:
    """H0: Δ ≤ θ is rejected (p ≤ α) on the grid from −1 up to the lower bound, and not at
    the next step; the upper side mirrors it."""
    thetas = np.linspace(-1.0, 1.0, GRID_THETA)
    for b, c, m in [(3, 1, 12), (0, 0, 8), (7, 2, 20), (1, 4, 16)]:
        lower = float(exact_bounds(b, c, m, 0.95).lower[0])
        upper = float(exact_bounds(b, c, m, 0.95).upper[0])
        below = thetas[thetas <= lower + 1e-12]
        assert all(exact_p_value(b, c, m, t, "better")[0] <= 0.05 for t in below)
        assert exact_p_value(b, c, m, lower + 0.005, "better")[0] > 0.05
        above = thetas[thetas >= upper - 1e-12]
        assert all(exact_p_value(b, c, m, t, "worse")[0] <= 0.05 for t in above)
        assert exact_p_value(b, c, m, upper - 0.005, "worse")[0] > 0.05


def test_no_exact_bound_where_it_does_not_apply() -> None:
    """Past MOST_STIMULI pairs, or counts that are not whole (weighted stimuli), the bounds
    leave every other bound as it is (lower 1, upper −1) and the p-value 0."""
    past = MOST_STIMULI + 1
    bounds = exact_bounds([1, 1.5], [2, 0], [past, 10], 0.95)
    assert bounds.lower.tolist() == [1.0, 1.0] and bounds.upper.tolist() == [-1.0, -1.0]
    assert exact_p_value([1, 1.5], [2, 0], [past, 10], 0.0, "better").tolist() == [0.0, 0.0]
    exact_matched_pairs._TABLES.clear()
    fresh = exact_bounds(2, 1, 10, 0.95)
    assert exact_bounds(2, 1, 10, 0.95) == fresh  # from the table kept


def _compositions(m: int) -> np.ndarray:
    return np.array([(a, b, c, m - a - b - c) for a in range(m + 1) for b in range(m + 1 - a)
                     for c in range(m + 1 - a - b)])  # fmt: skip


@pytest.mark.parametrize(("m", "k"), [(16, 1), (20, 1), (12, 3), (40, 1)])
def test_the_suite_rule_passes_a_true_drop_of_d_at_most_alpha(m: int, k: int) -> None:
    """Every outcome of m stimuli of k trials a side (pass^k with k = n: each estimate is 0
    or 1), each one's probability at a 40 × 40 grid of pair distributions with
    p01 − p10 = −D: the rule's largest pass probability (Tango's bound alone left 6.5% at
    16 stimuli and 5.5% at 20), and its largest failure probability with no change."""
    comp = _compositions(m)  # pairs passing in both, the baseline only, the candidate only, neither
    base = np.zeros((len(comp), m), dtype=int)
    cand = np.zeros((len(comp), m), dtype=int)
    for row, (both, base_only, cand_only, _) in enumerate(comp):
        base[row, : both + base_only] = k
        cand[row, :both] = k
        cand[row, both + base_only : both + base_only + cand_only] = k
    trials = np.full(base.shape, k)
    rule = PairedRule("max_regression", "pass_hat_k" if k > 1 else "pass_rate", k, 0.0, 0.05)
    codes = rule.evaluate_counts(trials, base, trials, cand).outcome
    log_choose = np.array(
        [math.lgamma(m + 1) - sum(math.lgamma(x + 1) for x in row) for row in comp]
    )
    worst_pass = worst_fail = 0.0
    for drop, outcome in ((0.05, PASS), (0.0, FAIL)):
        for p10 in np.linspace(drop, (1.0 + drop) / 2.0, 40):
            p01 = p10 - drop
            for share in np.linspace(0.0, 1.0, 40):
                both = (1.0 - p10 - p01) * share
                cells = np.array([both, p10, p01, 1.0 - p10 - p01 - both])
                with np.errstate(divide="ignore", invalid="ignore"):
                    terms = np.where(comp > 0, comp * np.log(np.maximum(cells, 1e-300)), 0.0)
                probability = float(np.exp(log_choose + terms.sum(axis=1))[codes == outcome].sum())
                if outcome == PASS:
                    worst_pass = max(worst_pass, probability)
                else:
                    worst_fail = max(worst_fail, probability)
    assert worst_pass <= 0.05 + 1e-9 and worst_fail <= 0.05 + 1e-9, (worst_pass, worst_fail)


def test_seeded_pass_hat_k_at_twelve_stimuli() -> None:
    """12 stimuli × 3 trials, k = 3, baseline at 0.95 and the candidate's pass^3 lower by
    exactly D = 0.05: 8,000 seeded runs pass within α + 3 s.e. (6.7% before)."""
    rng = np.random.default_rng(1128)
    runs, m, k = 8_000, 12, 3
    p_c = (0.95**k - 0.05) ** (1 / k)
    base, cand = rng.binomial(k, 0.95, (runs, m)), rng.binomial(k, p_c, (runs, m))
    trials = np.full((runs, m), k)
    rule = PairedRule("max_regression", "pass_hat_k", k, 0.0, 0.05)
    passed = float(np.mean(rule.evaluate_counts(trials, base, trials, cand).outcome == PASS))
    assert passed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs), passed


def test_the_default_levels_tables_are_what_the_computation_gives() -> None:
    """gate/metrics/_exact_matched_table.py (95%, every M up to MOST_STIMULI, computed in
    advance): its parameters are the module's, and three of its tables recompute to the
    same steps; another level is computed, not looked up."""
    from gate.metrics import _exact_matched_table as stored

    assert (stored.CONFIDENCE, stored.GRID_THETA, stored.GRID_Q) == (0.95, GRID_THETA, GRID_Q)
    assert stored.MOST_STIMULI == MOST_STIMULI == len(stored.LOWER_STEPS)
    for m in (3, 17, 33):
        assert list(stored.LOWER_STEPS[m - 1]) == lower_steps(m, 0.95)
    assert exact_matched_pairs._stored(17, 0.9) is None
    exact_matched_pairs._TABLES.clear()
    thetas = np.linspace(-1.0, 1.0, GRID_THETA)
    assert exact_bounds(0, 0, 30, 0.95).lower[0] == thetas[stored.LOWER_STEPS[29][0]]
