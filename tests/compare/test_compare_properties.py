"""Properties of gate.compare that must hold for every input (hypothesis)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gate.metrics.paired as paired_module
from gate.compare import RunCounts, compare
from gate.metrics.decision import FAIL, PASS, regression_outcome
from gate.metrics.paired import paired_test
from gate.report import wording

# Differences of pass rates: multiples of 1/5 (K = 5 both sides), the common case with ties.
fifths = st.integers(-5, 5).map(lambda x: x / 5)


@st.composite
def runs(
    draw: st.DrawFn, max_stimuli: int = 12
) -> tuple[dict[str, RunCounts], dict[str, RunCounts]]:
    """Two runs over overlapping ids with ragged trial counts (including n = 0)."""
    ids = draw(st.lists(st.sampled_from([f"s{i}" for i in range(40)]), max_size=max_stimuli))
    out: list[dict[str, RunCounts]] = [{}, {}]
    for run in out:
        for s in ids:
            if draw(st.booleans()) or draw(st.booleans()):
                n = draw(st.integers(0, 6))
                run[s] = RunCounts(n, draw(st.integers(0, n)))
    return out[0], out[1]


def finite(*values: float | None) -> bool:
    return all(v is None or math.isfinite(v) for v in values)


@settings(max_examples=150, deadline=None)
@given(runs(), st.sampled_from([0.0, 0.05, 0.2]))
def test_no_nan_anywhere_and_decisions_match_bounds(
    pair: tuple[dict[str, RunCounts], dict[str, RunCounts]], delta: float
) -> None:
    base, cand = pair
    result = compare(base, cand)
    test = result.test
    assert finite(test.delta, test.se, test.upper, test.lower, *test.interval)
    assert finite(test.p_worse, test.p_better, result.power.mde, result.power.variance)
    assert 0.0 <= test.p_worse <= 1.0 and 0.0 <= test.p_better <= 1.0
    assert -1.0 <= test.lower <= 1.0 and -1.0 <= test.upper <= 1.0
    assert test.interval[0] <= test.interval[1]
    if test.delta is not None:
        # the point estimate lies inside its own two-sided interval and below U, above L
        assert test.interval[0] - 1e-12 <= test.delta <= test.interval[1] + 1e-12
        assert test.lower - 1e-12 <= test.delta <= test.upper + 1e-12
    assert set(result.shared) | set(result.added) == set(cand)
    assert set(result.shared) | set(result.removed) == set(base)
    for row in result.rows:
        assert finite(row.baseline, row.candidate, row.delta, row.p_worse, row.p_holm)
        assert row.p_worse <= row.p_holm <= 1.0 and row.q_bh <= row.p_holm + 1e-15
    worse = int(regression_outcome(test.lower, test.upper, "max_regression", delta, delta + 0.05))
    better = int(regression_outcome(test.lower, test.upper, "min_improvement", delta, delta + 0.05))
    # the report's test is of Δ against 0, whatever the margins
    assert test.margin == 0.0 and test.gain == 0.0
    if result.test.method != "none":
        at = result.test_at(margin=delta, gain=delta)
        # the bounds do not depend on the margins, the p-values do
        assert (at.upper, at.lower) == (test.upper, test.lower)
        # fail ⇔ p ≤ α ⇔ U < -δ (away from exact ties at the boundary)
        if abs(test.upper + delta) > 1e-9:
            assert (worse == FAIL) == at.rejects_worse == (test.upper < -delta)
        if abs(test.lower - delta) > 1e-9:
            assert (better == PASS) == at.rejects_better == (test.lower > delta)
        if abs(test.lower + delta + 0.05) > 1e-9 and worse != FAIL:
            assert (worse == PASS) == (test.lower >= -delta - 0.05)
    else:
        assert worse != PASS and better != PASS  # nothing compared: never a pass
    sentence = wording.power_sentence(result)
    assert sentence and "nan" not in sentence


def p_at(d: list[float], theta: float) -> float:
    """p-value of H0: Δ ≥ θ, by the public API (margin = -θ)."""
    return paired_test(d, margin=-theta, method="permutation").p_worse


@settings(max_examples=120, deadline=None)
@given(st.lists(fifths, min_size=1, max_size=9))
def test_permutation_bound_is_the_inverted_test(d: list[float]) -> None:
    """U is not rejected, anything above it is; the p-value is monotone in θ."""
    result = paired_test(d, method="permutation")
    upper = result.upper
    if upper < 1.0:
        assert p_at(d, upper) > 0.05
        assert p_at(d, upper + 1e-6) <= 0.05
    else:
        assert p_at(d, 1.0 - 1e-9) > 0.05
    grid = np.linspace(-1.0, 1.0, 41)
    p = [p_at(d, theta) for theta in grid]
    assert all(a >= b for a, b in itertools.pairwise(p))


@settings(max_examples=120, deadline=None)
@given(st.lists(fifths, min_size=1, max_size=9), st.sampled_from(["t", "permutation"]))
def test_swapping_the_runs_mirrors_everything(d: list[float], method: str) -> None:
    forward = paired_test(d, method=method)  # type: ignore[arg-type]
    backward = paired_test([-x for x in d], method=method)  # type: ignore[arg-type]
    assert forward.p_worse == pytest.approx(backward.p_better, abs=1e-12)
    assert forward.upper == pytest.approx(-backward.lower, abs=1e-12)
    assert forward.interval[0] == pytest.approx(-backward.interval[1], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(fifths, min_size=30, max_size=60), st.sampled_from([0.0, 0.05, 0.1]))
def test_t_path_rejects_exactly_when_the_bound_is_below_the_margin(
    d: list[float], delta: float
) -> None:
    result = paired_test(d, margin=delta)
    if result.method == "paired t" and abs(result.upper + delta) > 1e-9:
        assert result.rejects_worse == (result.upper < -delta)
        assert result.rejects_worse == (result.p_worse <= 0.05)


def test_exact_enumeration_matches_brute_force_sign_patterns() -> None:
    """Independent count over the 2^M sign vectors s: #{s: Σ s_i|d_i| ≤ Σ d_i} / 2^M."""
    rng = np.random.default_rng(4)
    for _ in range(30):
        m = int(rng.integers(1, 11))
        d = rng.integers(-5, 6, m) / 5
        signs = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
        stats_ = signs @ np.abs(d)
        expected = np.count_nonzero(stats_ <= d.sum() + 1e-9) / 2**m
        assert paired_test(d, method="permutation").p_worse == expected


def test_monte_carlo_agrees_with_exact_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    d = (rng.binomial(3, 0.6, 14) - rng.binomial(3, 0.7, 14)) / 3
    exact = paired_test(d, margin=0.05)
    monkeypatch.setattr(paired_module, "ENUMERATE_MAX_STIMULI", 5)
    sampled = paired_test(d, margin=0.05)
    assert exact.method == "exact sign-flip permutation"
    assert sampled.method == "Monte-Carlo sign-flip permutation"
    # 65,536 patterns: standard error of p at most 0.002
    assert sampled.p_worse == pytest.approx(exact.p_worse, abs=0.008)
    assert sampled.upper == pytest.approx(exact.upper, abs=0.02)
    assert sampled.interval == pytest.approx(exact.interval, abs=0.03)


def test_twenty_stimuli_enumerate_quickly() -> None:
    """2^20 = 1,048,576 patterns, still exact; the test returns in well under a second."""
    rng = np.random.default_rng(1)
    d = (rng.binomial(5, 0.6, 20) - rng.binomial(5, 0.7, 20)) / 5
    result = paired_test(d)
    assert result.patterns == 2**20 and result.method == "exact sign-flip permutation"
