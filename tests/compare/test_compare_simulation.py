"""Seeded simulations of the regression gate's three outcomes (issues 5 and 11).

Stimulus pass rates p_i ~ Beta(2, 1) (mean 2/3, skewed towards passing, as agent
suites are). Each replicate draws M rates, K baseline trials per stimulus from
Binomial(K, p_i) and K candidate trials from Binomial(K, max(p_i - drop, 0)), and
applies the gate's own rule (:class:`gate.metrics.decision.PairedRule`, the one
:mod:`gate.gates` uses) to all replicates at once. ``test_batch_rule_agrees_with_the_verdict``
checks, replicate by replicate, that the batch rule decides exactly as the verdict
path (``compare`` + the exact paired test) does.

Figures measured with these seeds (the assertions check the issue's thresholds):

    design                               outcome             rate     issue asks
    50 × 5, no change, δ = 0.05, D = 0.10  fail              0.0010   ≤ 0.05
                                           pass              0.8393   ≥ 0.80
    50 × 5, drop 0.15                      fail              0.8095   ≥ 0.70
                                           pass              0.0015   ≤ 0.05
    4 × 5, drop 0.30                       pass              0        never
                                           fail              0        (2^4 patterns)
    50 × 5, no change, δ = 0 (issue 5)     fail (alarm)      0.0560   ≤ 0.06
    10 × 3, no change, δ = 0               fail (alarm)      0.0210   ≤ 0.06

(With the t test's skewness correction, 2026-11-28; plain t gave 0.0013, 0.8475, 0.8163,
0.0015 and 0.0573.) The t test's nominal false-alarm rate is 0.05; 0.0560 is this seed's
luck (400,000 replicates of plain t gave 0.050).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from gate.compare import RunCounts, compare
from gate.config import DETECTABLE_SLACK
from gate.metrics.decision import FAIL, PASS, PairedRule

IntArray = npt.NDArray[np.int64]


def draw(m: int, k: int, drop: float, replicates: int, seed: int) -> tuple[IntArray, IntArray]:
    """Baseline and candidate pass counts, shape (replicates, m)."""
    rng = np.random.default_rng(seed)
    rates = rng.beta(2.0, 1.0, (replicates, m))
    baseline = rng.binomial(k, rates)
    candidate = rng.binomial(k, np.clip(rates - drop, 0.0, 1.0))
    return baseline, candidate


def rates(
    m: int, k: int, drop: float, delta: float, replicates: int, seed: int
) -> tuple[float, float]:
    """(fail rate, pass rate) of max_regression δ with the default detectable margin."""
    baseline, candidate = draw(m, k, drop, replicates, seed)
    rule = PairedRule("max_regression", "pass_rate", 1, delta, delta + DETECTABLE_SLACK)
    n = np.full(baseline.shape, k)
    outcome = rule.evaluate_counts(n, baseline, n, candidate).outcome
    return float(np.mean(outcome == FAIL)), float(np.mean(outcome == PASS))


def test_no_change_at_50_stimuli_5_trials_passes_and_never_fails() -> None:
    fail, passed = rates(50, 5, 0.0, 0.05, 4000, seed=20261101)
    print(f"no change, 50 × 5: fail {fail:.4f}, pass {passed:.4f}")
    assert fail <= 0.05
    assert passed >= 0.80


def test_a_15_point_drop_at_50_stimuli_5_trials_fails_and_never_passes() -> None:
    fail, passed = rates(50, 5, 0.15, 0.05, 4000, seed=20261102)
    print(f"drop 0.15, 50 × 5: fail {fail:.4f}, pass {passed:.4f}")
    assert fail >= 0.70
    assert passed <= 0.05


def test_four_stimuli_with_a_30_point_drop_never_pass() -> None:
    fail, passed = rates(4, 5, 0.30, 0.05, 4000, seed=20261103)
    print(f"drop 0.30, 4 × 5: fail {fail:.4f}, pass {passed:.4f}")
    assert passed == 0.0
    assert fail == 0.0  # 2^4 = 16 sign patterns cannot reach p ≤ 0.05 either: inconclusive


def test_false_alarms_of_a_plain_regression_test() -> None:
    """δ = 0 (issue 5): the fail side alone is a one-sided 5% test."""
    t_path, _ = rates(50, 5, 0.0, 0.0, 4000, seed=20241101)
    sign_flip, _ = rates(10, 3, 0.0, 0.0, 2000, seed=20241103)
    print(f"false alarms: 50 × 5 {t_path:.4f}, 10 × 3 {sign_flip:.4f}")
    assert t_path <= 0.06 and sign_flip <= 0.06


@pytest.mark.parametrize(("m", "k", "drop"), [(50, 5, 0.1), (12, 3, 0.2), (4, 5, 0.3)])
def test_batch_rule_agrees_with_the_verdict(m: int, k: int, drop: float) -> None:
    """Replicate by replicate, the vectorised rule decides as compare() + the exact test do."""
    baseline, candidate = draw(m, k, drop, 60, seed=9)
    rule = PairedRule("max_regression", "pass_rate", 1, 0.05, 0.10)
    n = np.full(baseline.shape, k)
    batch = rule.evaluate_counts(n, baseline, n, candidate).outcome
    ids = [f"s{i:03d}" for i in range(m)]
    for row in range(baseline.shape[0]):
        result = compare(
            {s: RunCounts(k, int(c)) for s, c in zip(ids, baseline[row], strict=True)},
            {s: RunCounts(k, int(c)) for s, c in zip(ids, candidate[row], strict=True)},
        )
        exact = rule.decide_bounds([result.test.lower], [result.test.upper])[0]
        assert exact == batch[row], row


def test_a_true_drop_of_d_passes_at_most_alpha_at_few_stimuli() -> None:
    """max_regression δ = 0.05, D = 0.10, 8 stimuli × 5 trials a side, baseline rates
    Beta(2, 1), every stimulus losing the same amount so that the mean drop is exactly D.
    Passing means "a drop of D is ruled out at 95%": it may happen in at most 5% of runs.
    With the discrete sign-flip lower bound allowed to equal −D it passed 7.4% (4,000 seeded
    runs); with L > −D required, 2.9% (4,000 runs; 1,500 here, bound 0.05 + 2 s.e.)."""
    from scipy.optimize import brentq

    from gate.metrics.decision import regression_outcome
    from gate.metrics.paired import paired_test

    rng = np.random.default_rng(2468)
    runs, passed = 1500, 0
    for _ in range(runs):
        pb = rng.beta(2, 1, 8)
        shift = brentq(
            lambda s, pb=pb: np.mean(pb - np.clip(pb - s, 0, 1)) - 0.10, 0, 1, xtol=1e-14
        )
        d = rng.binomial(5, np.clip(pb - shift, 0, 1)) / 5 - rng.binomial(5, pb) / 5
        t = paired_test(d)
        passed += int(regression_outcome(t.lower, t.upper, "max_regression", 0.05, 0.10)) == PASS
    assert passed / runs <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs), passed / runs
