"""What Bayes@N's interval covers, by seeded simulation (its estimand says so).

It is a posterior summary under a uniform prior: it covers the score's own expectation at
these trial counts, mean((N·p_i + 1)/(N + 2)), which is below a good agent's pass rate until
N is large; it is no interval for the pass rate (at 50 stimuli × 10 trials of an agent at
80%, it holds 0.80 in about one run in ten).
"""

from __future__ import annotations

import numpy as np

from gate import metrics

RUNS = 150


def _runs(trials: int, stimuli: int, rate: float) -> list[metrics.MetricValue]:
    metric = metrics.resolve("bayes", {})
    rng = np.random.default_rng(20_261_124)
    n = np.full(stimuli, trials)
    return [
        metrics.evaluate(
            metric, metrics.SuiteOutcomes.from_counts(n, rng.binomial(trials, rate, stimuli))
        )
        for _ in range(RUNS)
    ]


def _share(values: list[metrics.MetricValue], truth: float) -> float:
    return float(np.mean([v.interval.lo <= truth <= v.interval.hi for v in values]))


def test_bayes_interval_covers_the_expected_score_at_these_trial_counts() -> None:
    for trials in (3, 10):
        for stimuli in (5, 50):
            for rate in (0.5, 0.8, 0.95):
                expected = (trials * rate + 1) / (trials + 2)
                covered = _share(_runs(trials, stimuli, rate), expected)
                assert covered >= 0.93, (trials, stimuli, rate, covered)


def test_bayes_interval_is_no_interval_for_the_pass_rate() -> None:
    assert _share(_runs(10, 50, 0.8), 0.8) < 0.25
    assert "below the mean expected reward" in metrics.resolve("bayes", {}).info.estimand
