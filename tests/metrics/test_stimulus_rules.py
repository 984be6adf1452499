"""Per-stimulus interval rules on batches of simulated runs, and the advice built on them."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from gate.metrics.decision import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    CountMetric,
    Direction,
    IntervalRule,
    latent_target,
    stimulus_bounds,
    stimulus_estimates,
    three_way,
)
from gate.metrics.intervals import rate_p_value
from gate.metrics.paired import alpha_of, holm


def element_wise(rule: IntervalRule, n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The per-stimulus codes computed on every stimulus-run, as the rule was first written."""
    estimates = stimulus_estimates(rule.metric, n, c, rule.k)
    lo, hi = stimulus_bounds(rule.metric, n, c, rule.k, rule.confidence, rule.method)
    if rule.direction == "min":
        codes = three_way(np.minimum(lo, estimates), hi, rule.target, "min")
        missed = estimates < rule.target
    else:
        codes = three_way(lo, np.maximum(hi, estimates), rule.target, "max")
        missed = estimates > rule.target
    p0 = latent_target(rule.metric, rule.target, rule.k)
    alternative = "less" if rule.direction == "min" else "greater"
    p = np.asarray(rate_p_value(c, n, p0, rule.method, alternative), dtype=np.float64)  # type: ignore[arg-type]
    bad = (holm(p) <= alpha_of(rule.confidence) / 2.0 + 1e-12) & missed
    return np.where(codes == PASS, PASS, np.where(bad, FAIL, INCONCLUSIVE))


@pytest.mark.parametrize(
    ("metric", "k", "target", "direction", "method"),
    [
        ("pass_rate", 1, 0.6, "min", "mid-p"),
        ("pass_rate", 1, 0.3, "max", "wilson"),
        ("pass_hat_k", 3, 0.5, "min", "jeffreys"),
        ("pass_at_k", 2, 0.9, "min", "clopper-pearson"),
    ],
)
def test_per_stimulus_codes_by_distinct_counts_equal_the_element_wise_rule(
    metric: str, k: int, target: float, direction: str, method: str
) -> None:
    """The rule decides each distinct (n, c) once and gathers: the same codes, worst
    stimulus and bounds as deciding all 40 runs × 60 stimuli one by one (ragged n, so
    stimuli of one run differ in n; rates around the target, so all three codes occur)."""
    rng = np.random.default_rng(5)
    n = rng.integers(5, 40, size=(40, 60))
    c = rng.binomial(n, rng.uniform(0.2, 0.95, size=60))
    rule = IntervalRule(
        cast(CountMetric, metric), k, target, cast(Direction, direction), 0.95, method, "stimuli"
    )
    result = rule.evaluate(n, c)
    assert result.stimuli is not None
    expected = element_wise(rule, n, c)
    assert np.array_equal(result.stimuli, expected)
    assert {PASS, INCONCLUSIVE, FAIL} <= set(np.unique(expected).tolist())
    estimates = stimulus_estimates(rule.metric, n, c, k)
    worst = np.argmin(estimates, axis=1) if direction == "min" else np.argmax(estimates, axis=1)
    rows = np.arange(40)
    assert np.array_equal(result.value, estimates[rows, worst])
    lo, hi = stimulus_bounds(rule.metric, n, c, k, 0.95, method)
    if direction == "min":
        assert np.array_equal(result.lower, np.minimum(lo, estimates)[rows, worst])
        assert np.array_equal(result.upper, hi[rows, worst])
    else:
        assert np.array_equal(result.lower, lo[rows, worst])
        assert np.array_equal(result.upper, np.maximum(hi, estimates)[rows, worst])
