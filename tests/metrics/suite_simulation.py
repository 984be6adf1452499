"""Seeded simulation of the suite interval's coverage (issue 11: "keep ≥ 0.90 on every profile").

Shared by tests/metrics/test_metrics_suite_interval.py (a fast subset) and
bench/suite_coverage.py (the full grid). For each replicate, every stimulus's rate is
drawn from a profile, its n trials from Binomial(n, p_i); the suite estimate is the
mean of the unbiased per-stimulus estimates, and the interval covers when it holds
the suite truth mean_i g(p_i) of *these* stimuli (trial noise only: the truth moves
with the drawn rates). The estimators are written here from their formulas
(math.comb), not taken from gate.metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics.intervals import suite_bounds

FloatArray = npt.NDArray[np.float64]
Profile = Callable[[np.random.Generator, int, int], FloatArray]


def _mixture(rng: np.random.Generator, replicates: int, stimuli: int) -> FloatArray:
    kind = rng.random((replicates, stimuli))
    uniform = rng.random((replicates, stimuli))
    rates: FloatArray = np.where(kind < 0.7, 1.0, np.where(kind < 0.9, 0.0, uniform))
    return rates


PROFILES: dict[str, Profile] = {
    "all p = 0.5": lambda rng, r, m: np.full((r, m), 0.5),
    "p ~ Beta(2,1)": lambda rng, r, m: rng.beta(2.0, 1.0, size=(r, m)),
    "70% p=1, 20% p=0, 10% U(0,1)": _mixture,
    "all p = 0.95": lambda rng, r, m: np.full((r, m), 0.95),
}
STIMULI = (5, 10, 20, 50)
TRIALS = (3, 5, 10)


class Cell(NamedTuple):
    profile: str
    stimuli: int
    trials: int
    metric: str
    k: int
    coverage: float
    replicates: int


def metric_cases(trials: int) -> list[tuple[str, int]]:
    """pass rate, and pass@k and pass^k for k = 2..n (at k = 1 both are the pass rate)."""
    cases = [("pass_rate", 1)]
    for k in range(2, trials + 1):
        cases += [("pass_at_k", k), ("pass_hat_k", k)]
    return cases


def _estimates(metric: str, trials: int, k: int) -> FloatArray:
    """The unbiased per-stimulus estimate for c = 0..n passes."""
    total = comb(trials, k)
    values = [
        c / trials
        if metric == "pass_rate"
        else (1 - comb(trials - c, k) / total if metric == "pass_at_k" else comb(c, k) / total)
        for c in range(trials + 1)
    ]
    return np.array(values, dtype=np.float64)


def _truth(metric: str, rates: FloatArray, k: int) -> FloatArray:
    if metric == "pass_rate":
        values = rates
    elif metric == "pass_at_k":
        values = 1.0 - (1.0 - rates) ** k
    else:
        values = rates**k
    result: FloatArray = values.mean(axis=1)
    return result


def simulate(
    profile: str,
    stimuli: int,
    trials: int,
    replicates: int,
    seed: int,
    method: str = "mid-p",
    confidence: float = 0.95,
) -> list[Cell]:
    """Coverage of every metric case for one (profile, M, n), from one seeded draw."""
    rng = np.random.default_rng(seed)
    rates = PROFILES[profile](rng, replicates, stimuli)
    passes = rng.binomial(trials, rates)
    cases = metric_cases(trials)
    # One (cases × replicates) array and one call: the mid-p solver works per distinct
    # (c, n) pair, whatever the shape.
    estimate = np.stack([_estimates(m, trials, k)[passes].mean(axis=1) for m, k in cases])
    truth = np.stack([_truth(m, rates, k) for m, k in cases])
    n_eff = np.array([stimuli * trials / k for _, k in cases])[:, None]
    lo, hi = suite_bounds(estimate, n_eff, confidence, method)
    # 1e-12: the truth and the estimate of a degenerate suite (all p = 1) are equal up
    # to rounding in the means.
    covered = ((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)).mean(axis=1)
    return [
        Cell(profile, stimuli, trials, metric, k, float(share), replicates)
        for (metric, k), share in zip(cases, covered, strict=True)
    ]


def grid(replicates: int, method: str = "mid-p", confidence: float = 0.95) -> list[Cell]:
    """Every profile × M × n × metric case, each (profile, M, n) with its own seed."""
    cells = []
    for p_index, profile in enumerate(PROFILES):
        for stimuli in STIMULI:
            for trials in TRIALS:
                seed = 20261123 + 10_000 * p_index + 100 * stimuli + trials
                cells += simulate(profile, stimuli, trials, replicates, seed, method, confidence)
    return cells
