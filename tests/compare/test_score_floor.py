"""Score comparisons of pass/fail scores take the pass rates' floor of the trials'
noise (gate/metrics/trial_noise.py: pass_fail_sums); graded scores keep the paired test
alone."""

from __future__ import annotations

import math

import numpy as np

from gate.compare import RunCounts, compare
from gate.gates import _floor_counts
from gate.metrics.decision import PASS, PairedRule


def _runs(scores_b: np.ndarray, scores_c: np.ndarray) -> list[tuple[dict, dict]]:
    """One (baseline, candidate) pair of RunCounts maps per run: (runs, stimuli, trials)."""
    runs = []
    for b, c in zip(scores_b, scores_c, strict=True):
        n = b.shape[1]
        base = {
            f"s{i}": RunCounts(n, int((b[i] == 1).sum()), float(b[i].mean())) for i in range(len(b))
        }
        cand = {
            f"s{i}": RunCounts(n, int((c[i] == 1).sum()), float(c[i].mean())) for i in range(len(c))
        }
        runs.append((base, cand))
    return runs


def test_pass_fail_scores_of_five_stimuli_no_longer_pass_a_true_drop() -> None:
    """Five stimuli × one trial, scores 0 or 1 at 0.95, the candidate 5 points lower: the
    sign flip alone passed 61% of such runs (every difference 0 most of the time); with
    the pass rates' floor, within α = 5% (+ 3 s.e.), over 1,000 seeded runs."""
    rng = np.random.default_rng(1128)
    runs = 1000
    base = rng.binomial(1, 0.95, (runs, 5, 1)).astype(float)
    cand = rng.binomial(1, 0.90, (runs, 5, 1)).astype(float)
    rule = PairedRule("max_regression", "score", 1, 0.0, 0.05)
    passed = 0
    for b, c in _runs(base, cand):
        result = compare(b, c, metric="score")
        assert result.trial_counts is not None
        passed += int(rule.decide_bounds([result.test.lower], [result.test.upper])[0] == PASS)
    assert passed / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs), passed / runs
    alone = rule.evaluate_differences((cand - base).mean(axis=2)).outcome
    assert float(np.mean(alone == PASS)) > 0.5  # the hole it closes, same runs


def test_graded_scores_keep_the_paired_test_alone() -> None:
    """Scores between 0 and 1 (Beta-distributed): no floor, whose pass/fail variance would
    be far above theirs, so an unchanged candidate still passes as before."""
    rng = np.random.default_rng(7)
    base = rng.beta(6.4, 1.6, (1, 16, 3))
    cand = rng.beta(6.4, 1.6, (1, 16, 3))
    ((b, c),) = _runs(base, cand)
    result = compare(b, c, metric="score")
    assert result.trial_counts is None and result.test.noise_floor == ()


def test_the_advice_takes_the_same_floor_counts() -> None:
    """The advice's resampled stimuli carry the sums of pass/fail scores, and none for
    graded scores, as the comparison's own test does."""
    binary = {"a": RunCounts(3, 2, 2 / 3), "b": RunCounts(3, 3, 1.0)}
    worse = {"a": RunCounts(3, 1, 1 / 3), "b": RunCounts(3, 3, 1.0)}
    trials, passes = np.array([3, 3]), np.array([0, 0])  # the sums come from the scores
    counts = _floor_counts(compare(binary, worse, metric="score"), trials, passes, trials, passes)
    assert counts is not None
    assert [x.tolist() for x in counts] == [[3, 3], [2, 3], [3, 3], [1, 3]]
    graded = {"a": RunCounts(3, 2, 0.7), "b": RunCounts(3, 3, 0.95)}
    compared = compare(graded, graded, metric="score")
    assert _floor_counts(compared, trials, passes, trials, passes) is None
    # pass rates: the counts given, as they are
    rates = compare(binary, worse)
    given = (trials, np.array([2, 3]), trials, np.array([1, 3]))
    assert _floor_counts(rates, *given) == given


def test_the_per_stimulus_p_values_keep_the_pass_counts() -> None:
    """The floor reads the score sums; Fisher's per-stimulus test still reads the pass
    counts (a score of 0 on passed trials, 1 on failed ones)."""
    from gate.metrics.paired import fisher_worse

    base = {f"s{i}": RunCounts(3, 3, 0.0) for i in range(3)}
    cand = {f"s{i}": RunCounts(3, 0, 1.0) for i in range(3)}
    result = compare(base, cand, metric="score")
    assert result.trial_counts is not None  # sums 0 and 3: pass/fail scores
    assert [float(x) for x in result.trial_counts.c_b] == [0.0]  # one distinct row
    assert result.rows[0].p_worse == fisher_worse(3, 3, 3, 0)
