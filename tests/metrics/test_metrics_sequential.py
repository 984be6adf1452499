"""Confidence sequences: closed forms by hand, the integral by quadrature, validity at
every look by seeded simulation, and the issue-13 targets of a sequential gate."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import integrate, optimize

from gate.metrics.decision import (
    IntervalRule,
    SequentialRule,
    _decided,
    _smallest,
    more_trials_sequential,
)
from gate.metrics.sequential import (
    block_outcomes,
    confidence_sequence,
    mixture_log_capital,
    round_sums,
)


def capital_by_quadrature(s: int, n: int, theta: float, side: str = "lower") -> float:
    """∫ likelihood ratio over x on the alternative side, uniform prior, by numerical quadrature."""

    def ratio(x: float) -> float:
        return math.exp(
            s * math.log(x / theta) + (n - s) * math.log((1 - x) / (1 - theta))
        )

    if side == "lower":
        value, _ = integrate.quad(ratio, theta, 1.0, limit=200)
        return value / (1.0 - theta)
    value, _ = integrate.quad(ratio, 0.0, theta, limit=200)
    return value / theta


@pytest.mark.parametrize(
    ("s", "n", "theta"), [(37, 40, 0.8), (12, 20, 0.5), (55, 60, 0.9), (3, 10, 0.2), (0, 5, 0.3)]
)
def test_mixture_capital_matches_quadrature(s: int, n: int, theta: float) -> None:
    for side in ("lower", "upper"):
        expected = capital_by_quadrature(s, n, theta, side)
        got = float(mixture_log_capital(s, n, theta, side))  # type: ignore[arg-type]
        assert got == pytest.approx(math.log(expected), rel=1e-9, abs=1e-9)


def test_all_pass_lower_bounds_solve_the_closed_form() -> None:
    """S = N: K(θ) = (1 - θ^(N+1)) / ((N+1) θ^N (1-θ)); the bound is where K = 2/α = 40."""
    cs = confidence_sequence([20, 20, 20, 20], 20, 0.95)
    for rounds, lower in zip(range(1, 5), cs.lower.tolist(), strict=True):
        n = 20 * rounds

        def excess(t: float, n: int = n) -> float:
            return (1 - t ** (n + 1)) / ((n + 1) * t**n * (1 - t)) - 40.0

        assert lower == pytest.approx(optimize.brentq(excess, 0.3, 0.9999), abs=1e-9)
    assert cs.upper.tolist() == [1.0] * 4  # nothing argues the value is below 1


def test_bounds_never_widen_and_blocks_follow_trial_order() -> None:
    cs = confidence_sequence([20, 5, 20, 20, 3], 20)
    assert np.all(np.diff(cs.lower) >= 0) and np.all(np.diff(cs.upper) <= 0)
    assert block_outcomes([1, 1, 1, 0, 1, 1], 3, "all").tolist() == [1, 0]
    assert block_outcomes([0, 0, 1, 0, 0, 0], 3, "any").tolist() == [1, 0]
    # ragged: only complete rounds count (the 7th trial of the first stimulus waits)
    rounds = round_sums([[1, 1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 1, 1]], "pass_hat_k", 3)
    assert rounds.sums.tolist() == [1, 2] and rounds.stimuli == 2


@pytest.mark.parametrize(("metric", "k"), [("pass_rate", 1), ("pass_hat_k", 3), ("pass_at_k", 2)])
def test_the_sequence_covers_the_truth_at_every_look(metric: str, k: int) -> None:
    """Heterogeneous stimuli (rates ~ Beta(2, 1)), 40 rounds, looked at after every one:
    the truth mean_i g(p_i) must leave the 95% sequence in at most 5% of runs, at any look."""
    rng = np.random.default_rng(13)
    runs, m, rounds = 2000, 12, 40
    p = rng.beta(2.0, 1.0, (runs, 1, m))
    g = {"pass_rate": p, "pass_hat_k": p**k, "pass_at_k": 1 - (1 - p) ** k}[metric]
    blocks = rng.random((runs, rounds, m)) < g  # block r of stimulus i passes w.p. g(p_i)
    cs = confidence_sequence(blocks.sum(axis=2), m, 0.95)
    truth = g.mean(axis=2)  # (runs, 1)
    missed = np.any((cs.lower > truth) | (cs.upper < truth), axis=1)
    print(f"{metric} (k = {k}): the truth left the sequence in {missed.mean():.4f} of runs")
    assert missed.mean() <= 0.05


# --------------------------------------------------------------------------- issue 13


M, K, TARGET = 20, 3, 0.8
LOOKS = range(3, 61, 2)


def fixed_design_trials(p: float) -> int:
    """What plan gives for the fixed design: trials per stimulus deciding the one-look
    gate with 80% probability (the same search plan runs)."""
    rule = IntervalRule("pass_hat_k", K, TARGET, "min", 0.95, "wilson", "suite")
    rates = np.full(M, p)

    def probability(n: int) -> float:
        rng = np.random.default_rng(0)
        c = rng.binomial(n, rates, size=(2000, M))
        return _decided(rule.evaluate(np.full(M, n), c).outcome)

    found = _smallest(probability, 0.8, 1000, start=K)
    assert found is not None
    return found


def first_pass(p: float, runs: int, seed: int) -> np.ndarray:
    """The look (trials per stimulus) at which each run first passes; inf if never by 60."""
    rng = np.random.default_rng(seed)
    rule = SequentialRule("pass_hat_k", K, TARGET)
    blocks = rng.random((runs, max(LOOKS) // K, M)) < p**K  # one block of 3 trials passes
    sums = blocks.sum(axis=2)
    cs = confidence_sequence(sums, M, rule.confidence)
    first = np.full(runs, np.inf)
    for look in LOOKS:
        rounds = look // K
        passed = cs.lower[:, rounds - 1] >= TARGET
        first = np.where(np.isinf(first) & passed, look, first)
    return first


def test_a_sequential_gate_meets_the_issue_targets() -> None:
    n_fixed = fixed_design_trials(0.96)
    bad = first_pass(0.75 ** (1 / 3), 2000, seed=1)  # true pass^3 = 0.75 < 0.8
    planned = first_pass(0.96, 2000, seed=2)
    better = first_pass(0.99, 2000, seed=3)
    mean_better = float(np.mean(better[np.isfinite(better)]))
    print(
        f"fixed design N = {n_fixed}; pass rate at truth 0.75: {np.mean(np.isfinite(bad)):.4f}; "
        f"at p = 0.96 by 60 trials: {np.mean(np.isfinite(planned)):.3f}; at p = 0.99: passes "
        f"after {mean_better:.1f} trials on average ({np.mean(np.isfinite(better)):.3f} pass)"
    )
    assert 20 <= n_fixed <= 30
    assert np.mean(np.isfinite(bad)) <= 0.05
    assert np.mean(np.isfinite(planned)) >= 0.80
    assert np.all(np.isfinite(better)) and mean_better <= 0.5 * n_fixed


def test_the_rule_on_outcomes_agrees_with_the_vectorised_sequence() -> None:
    rng = np.random.default_rng(5)
    outcomes = [rng.random(12) < 0.95 for _ in range(M)]
    rule = SequentialRule("pass_hat_k", K, TARGET)
    result = rule.evaluate_outcomes(list(outcomes))
    sums = round_sums(outcomes, "pass_hat_k", K).sums
    cs = confidence_sequence(sums, M)
    assert (result.lower[0], result.upper[0]) == (cs.lower[-1], cs.upper[-1])
    more = more_trials_sequential(rule, list(outcomes))
    assert result.outcome[0] != 0 or (more is not None and more > 0)


def test_per_stimulus_sequences_in_one_call_match_each_stimulus_alone() -> None:
    """scope="stimuli": the stimuli with as many rounds as each other are solved in one
    call (one at a time took 7 ms each); every stimulus's bounds are its own sequence's,
    with stimuli of different lengths (ragged) and one without a complete round. And the
    per-stimulus advice, searched once per distinct tally, is each stimulus's own."""
    from gate.metrics.decision import FAIL, INCONCLUSIVE, PASS, stimulus_more_trials_sequential

    rng = np.random.default_rng(3)
    outcomes = [rng.random(size) < 0.8 for size in [6, 9, 9, 12, 1, 6, 9, 12, 12]]
    rule = SequentialRule("pass_hat_k", 2, 0.6, scope="stimuli")
    codes = rule.evaluate_outcomes(outcomes).stimuli
    assert codes is not None
    alpha = 1.0 - rule.confidence
    for i, x in enumerate(outcomes):
        sums = round_sums([x], "pass_hat_k", 2).sums
        if sums.size == 0:
            assert codes[0, i] == INCONCLUSIVE
            continue
        low = confidence_sequence(sums, 1, rule.confidence).lower[-1]
        high = confidence_sequence(sums, 1, 1.0 - alpha / len(outcomes)).upper[-1]
        expected = PASS if low >= 0.6 else FAIL if high < 0.6 else INCONCLUSIVE
        assert codes[0, i] == expected
    alone = SequentialRule("pass_hat_k", 2, 0.6)
    some = outcomes[:4]
    assert stimulus_more_trials_sequential(alone, some, cap=200) == [
        more_trials_sequential(alone, [x], cap=200) for x in some
    ]


def test_a_per_stimulus_half_width_rule_reports_the_widest_stimulus() -> None:
    """The per-stimulus half-width rule's value is the widest stimulus's half-width, with
    that stimulus's bounds (each its own sequence): not its pass rate (it reported the
    estimate of the stimulus with the highest pass rate, 1.0, as "half-width 1.000")."""
    outcomes = [np.ones(15, dtype=bool), np.array([1, 0, 1, 1, 0, 1, 0, 1], dtype=bool)]
    outcomes.append(np.array([1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1], dtype=bool))
    rule = SequentialRule("pass_rate", 1, 0.05, scope="stimuli", precision=True)
    result = rule.evaluate_outcomes(outcomes)
    alone = [confidence_sequence(x.astype(int), 1, 0.95) for x in outcomes]
    halves = [(cs.upper[-1] - cs.lower[-1]) / 2.0 for cs in alone]
    widest = int(np.argmax(halves))
    assert widest == 1 and halves[1] > 0.3 > halves[0]  # 5 of 8 is the widest, not 15 of 15
    assert result.value[0] == pytest.approx(halves[1], abs=1e-15)
    assert (result.lower[0], result.upper[0]) == (alone[1].lower[-1], alone[1].upper[-1])
    assert result.stimuli is not None and result.stimuli.tolist() == [[0, 0, 0]]


@pytest.mark.parametrize("confidence", [0.95, 0.999])
def test_sequence_bounds_grow_with_the_passes_at_each_number_of_blocks(confidence: float) -> None:
    """What the per-stimulus advice's thresholds rest on (decision._sequence_cuts): at a
    fixed number of blocks both bounds are non-decreasing in the passes, as computed (the
    root search included), and the half-width (raised to decision._HALF_WIDTH_FLOOR, as
    decision._widest reads it) never rises again once it falls, for every count up to 150
    blocks and at six random counts up to 10,050 (decision._SEQUENCE_ORDER_PROVEN)."""
    from gate.metrics import decision
    from gate.metrics.sequential import look_bounds

    rng = np.random.default_rng(11)
    largest = decision._SEQUENCE_ORDER_PROVEN
    for counts in (np.arange(151), [*rng.integers(151, largest + 1, size=5), largest]):
        blocks = np.concatenate([np.full(b + 1, b) for b in counts])
        passes = np.concatenate([np.arange(b + 1) for b in counts])
        lo, hi = look_bounds(passes, blocks, confidence)  # one call: every pair at once
        same = np.diff(blocks) == 0
        assert np.all(np.diff(lo)[same] >= 0.0) and np.all(np.diff(hi)[same] >= 0.0)
        step = np.diff(np.maximum((hi - lo) / 2.0, decision._HALF_WIDTH_FLOOR))
        fallen = np.zeros(step.size, dtype=bool)
        for b in counts:  # within one count: no rise after the first fall
            mine = np.flatnonzero(same & (blocks[1:] == b))
            if mine.size:
                fallen[mine] = np.cumsum(step[mine] < 0.0) > 0
        assert not np.any(step[1:][fallen[:-1] & same[1:]] > 0.0)


def _search_alone(
    probability: Callable[[int], float], power: float, cap: int, start: int
) -> int | None:
    """The advice's search written out for one m at a time: doubling, then bisection."""
    low, high = start - 1, start
    while probability(high) < power:
        if high >= cap:
            return None
        low, high = high, min(cap, high * 2)
    while high - low > 1:
        middle = (low + high) // 2
        if probability(middle) >= power:
            high = middle
        else:
            low = middle
    return high


def test_searches_in_step_visit_what_each_visits_alone() -> None:
    """decision._smallest_each (and _smallest, one search of it) against the search written
    out one m at a time, on random tables of probabilities (monotone or not in m), with a
    cap inside and beyond the tables; on the monotone ones, also the first m that reaches
    the power (a linear scan)."""
    from gate.metrics.decision import _smallest_each

    rng = np.random.default_rng(5)
    for cap, start in [(40, 1), (64, 1), (300, 1), (50, 7)]:
        tables = rng.random((25, cap + 1))
        tables[::2] = np.sort(tables[::2], axis=1)  # half of them monotone
        alone = [_search_alone(lambda m, t=t: float(t[m]), 0.8, cap, start) for t in tables]

        def probabilities(which: np.ndarray, m: np.ndarray, t: np.ndarray = tables) -> np.ndarray:
            return t[which, m]

        assert _smallest_each(probabilities, len(tables), 0.8, cap, start) == alone
        assert [_smallest(lambda m, t=t: float(t[m]), 0.8, cap, start) for t in tables] == alone
        for table, found in zip(tables[::2], alone[::2], strict=True):
            reached = [m for m in range(start, cap + 1) if table[m] >= 0.8]
            assert found == (reached[0] if reached else None)
    assert any(a is None for a in alone) and any(a is not None for a in alone)


@pytest.mark.parametrize(
    ("metric", "k", "target", "direction", "precision"),
    [
        ("pass_rate", 1, 0.7, "min", False),
        ("pass_hat_k", 2, 0.5, "min", False),
        ("pass_at_k", 3, 0.9, "min", False),
        ("pass_rate", 1, 0.4, "max", False),
        ("pass_rate", 1, 0.2, "min", True),
        ("pass_hat_k", 2, 0.15, "min", True),
    ],
)
def test_per_stimulus_sequential_advice_on_uneven_trials_is_each_stimulus_alone(
    metric: str, k: int, target: float, direction: str, precision: bool, monkeypatch: Any
) -> None:
    """The per-stimulus advice (searches in step, thresholds in the passes) gives what
    more_trials_sequential gives each stimulus alone with every (passes, blocks) pair's
    bounds solved (the threshold path switched off), for stimuli of 1 to 30 trials and
    rates 0.3 to 0.95: for every metric, both directions and the half-width rule (its peak
    and the thresholds either side of it). And a
    suite of them, as more_trials_sequential reads it, gets the same answer both ways."""
    from gate.metrics import decision
    from gate.metrics.decision import stimulus_more_trials_sequential

    rng = np.random.default_rng(17)
    outcomes = [
        rng.random(int(size)) < rate
        for size, rate in zip(
            rng.integers(1, 31, size=14), rng.uniform(0.3, 0.95, size=14), strict=True
        )
    ]
    alone = SequentialRule(metric, k, target, direction, precision=precision)  # type: ignore[arg-type]
    fast = stimulus_more_trials_sequential(alone, outcomes, cap=300)
    suite = more_trials_sequential(alone, outcomes, cap=300)
    monkeypatch.setattr(decision, "_SEQUENCE_ORDER_PROVEN", -1)  # every pair's bounds
    expected = [more_trials_sequential(alone, [x], cap=300) for x in outcomes]
    assert fast == expected
    assert suite == more_trials_sequential(alone, outcomes, cap=300)
    assert len(set(expected)) >= 3  # answers that differ, None or not


def test_sequential_half_width_outcomes_from_thresholds_are_each_pairs(monkeypatch: Any) -> None:
    """The half-width rule's outcome of each simulated run, read from the peak and the two
    thresholds per number of blocks (0 to 400 blocks, every number of passes), equals the
    outcome of its own (passes, blocks) pair's bounds; so it does with the peaks of every
    other number of blocks left unshown (decided pair by pair), and for a target under
    decision._HALF_WIDTH_FLOOR, which takes the pair path."""
    from gate.metrics import decision
    from gate.metrics.decision import _sequence_decided
    from gate.metrics.sequential import look_bounds

    rng = np.random.default_rng(31)
    blocks = np.concatenate([np.arange(401), rng.integers(0, 401, size=200)])
    passes = np.floor(rng.random((blocks.size, 30)) * (blocks[:, None] + 1))
    passes[:, 0], passes[:, 1] = 0, blocks  # each end
    lo, hi = look_bounds(passes, blocks[:, None], 0.95)
    half = (hi - lo) / 2.0
    widest = decision._widest
    middle = float(np.median(half))
    for target, unshown in ((0.1, False), (0.05, True), (middle, False), (0.0, False)):
        if unshown:
            monkeypatch.setattr(decision, "_widest", lambda *a: np.where(a[0] % 2, -1, widest(*a)))
        rule = SequentialRule("pass_rate", 1, target, precision=True)
        expected = half <= target + 1e-12
        assert target == 0.0 or (expected.any() and not expected.all())
        assert _sequence_decided(rule, passes, blocks).tolist() == expected.tolist()
    decision._THRESHOLDS._known.clear()


def test_sequential_advice_past_the_tested_blocks_solves_each_pair(monkeypatch: Any) -> None:
    """Past _SEQUENCE_ORDER_PROVEN blocks no threshold is used: the outcome of each run is
    its own (passes, blocks) pair's, and below it the thresholds give the same."""
    from gate.metrics import decision
    from gate.metrics.decision import _sequence_decided
    from gate.metrics.sequential import look_bounds

    rule = SequentialRule("pass_rate", 1, 0.8)
    passes = np.array([[8_200.0, 8_050.0, 7_900.0], [80.0, 70.0, 95.0]])
    blocks = np.array([decision._SEQUENCE_ORDER_PROVEN + 1, 100])
    lo, hi = look_bounds(passes, blocks[:, None], rule.confidence)
    expected = rule._decide(lo, hi) != 0
    assert _sequence_decided(rule, passes, blocks).tolist() == expected.tolist()

    def no_thresholds(*_: object) -> None:
        raise AssertionError("thresholds past the tested blocks")

    monkeypatch.setattr(decision, "_sequence_cuts", no_thresholds)
    assert _sequence_decided(rule, passes[:1], blocks[:1]).tolist() == expected[:1].tolist()
