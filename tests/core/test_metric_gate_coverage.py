"""A ``metric:`` gate decides only on an interval that covers what it claims (seeded).

Reference 003's posterior summaries (``*_ci``) shrink each stimulus toward ½ and narrow as
stimuli are added: for 50 stimuli of an agent at 80%, pass@2's covers the suite's latent
pass@2 in none of the runs, and a gate on it said "the data show" a value they rule in.
The metrics whose per-stimulus estimator is an unbiased U-statistic of degree k are gated
on the suite interval at n_eff = M·min(nᵢ)/k instead (as the built-in pass^k gate is).
The truth here is the mean of the unbiased estimates over the runs (their expectation).
"""

from __future__ import annotations

import numpy as np
import pytest

from gate import metrics
from gate.metric_gates import U_STATISTIC_METRICS, gate_interval

PARAMETERS = {
    "pass_at_k": {"k": 2},
    "pass_hat_k": {"k": 2},
    "unanimous_at_k": {"k": 2},
    "g_pass_at_k": {"k": 2},
    "g_pass_at_k_tau": {"k": 3, "tau": 0.67},
    "mg_pass_at_k": {"k": 3},
    "maj_at_k": {"k": 3},
    "auc_at_k": {"k": 3},
    "max_at_k": {"k": 2},
}
RUNS = 120


def coverage(name: str, trials: int, stimuli: int, rate: float) -> tuple[float, float]:
    """(the gate interval's coverage, the registry interval's) over seeded runs."""
    metric = metrics.resolve(name, PARAMETERS[name])
    rng = np.random.default_rng(20_261_124)
    n = np.full(stimuli, trials)
    values, gated, registry = [], [], []
    for _ in range(RUNS):
        data = metrics.SuiteOutcomes.from_counts(n, rng.binomial(trials, rate, stimuli))
        value = metrics.evaluate(metric, data, confidence=0.95)
        values.append(value.value)
        gated.append(gate_interval(metric, value, n, 0.95, "mid-p"))
        registry.append(value.interval)
    truth = float(np.mean(values))

    def share(intervals: list) -> float:
        return float(np.mean([iv.lo <= truth <= iv.hi for iv in intervals]))

    return share(gated), share(registry)


def test_every_u_statistic_metric_has_parameters_here() -> None:
    assert set(PARAMETERS) == U_STATISTIC_METRICS


@pytest.mark.parametrize("name", sorted(U_STATISTIC_METRICS))
def test_u_statistic_metric_gates_are_honest(name: str) -> None:
    for trials in (3, 10):
        for stimuli in (5, 50):
            for rate in (0.5, 0.8, 0.95):
                gated, _ = coverage(name, trials, stimuli, rate)
                assert gated >= 0.9, (name, trials, stimuli, rate, gated)


def test_the_registry_interval_is_no_ground_for_a_verdict() -> None:
    gated, registry = coverage("pass_at_k", 3, 50, 0.8)
    assert gated >= 0.95 and registry < 0.05


def test_a_blend_has_no_interval_to_gate_on(tmp_path) -> None:
    """geom_ds_at_k's interval (the delta method on posterior summaries) covered its value
    in 0% of the runs at 50 stimuli × 3 trials of an agent at 80%: a gate on it is refused,
    and a configuration-wide bound: interval leaves it on its point estimate."""
    from gate.config import build_config
    from gate.errors import ConfigError
    from gate.pipeline import CheckRequest, run_check
    from tests.conftest import EXAMPLES

    for bound in ("interval", "lower"):
        gate = {"metric": "geom_ds_at_k", "k": 2, "min": 0.5, "bound": bound}
        with pytest.raises(ConfigError, match=r"'geom_ds_at_k': its interval .* bound: estimate"):
            build_config({"gates": {"metric": gate}})
    config = build_config(
        {"bound": "interval", "gates": {"metric": {"metric": "geom_ds_at_k", "k": 2, "min": 0.5}}}
    )
    results = str(EXAMPLES / "passing" / "results.json")
    (decision,) = run_check(CheckRequest((results,), config)).gates
    assert decision.basis == "point estimate" and decision.lower is None
    metric = metrics.resolve("geom_ds_at_k", {"k": 2})
    rng = np.random.default_rng(20_261_124)
    n = np.full(50, 3)
    runs = [
        metrics.evaluate(metric, metrics.SuiteOutcomes.from_counts(n, rng.binomial(3, 0.8, 50)))
        for _ in range(RUNS)
    ]
    truth = float(np.mean([v.value for v in runs]))
    assert np.mean([v.interval.lo <= truth <= v.interval.hi for v in runs]) < 0.3
