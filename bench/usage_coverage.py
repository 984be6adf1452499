"""Seeded coverage of the usage intervals (gate.metrics.usage) on lognormal truths.

Run:  .venv/bin/python bench/usage_coverage.py [--replications 1000] [--quick]

Model: stimulus i has a log-scale effect mu_i ~ N(0, sd_between); its trials
cost exp(-3 + mu_i + e), e ~ N(0, sd_within), so the true mean cost per trial
(over stimuli like these, each run equally often) is
exp(-3 + sd_between²/2 + sd_within²/2). For the paired changes the current run
adds a shift of 0.2 on the log scale to every trial; the true p95 of per-trial
durations is exp(1.645·sqrt(sd_between² + sd_within²) [+ 0.2]).

Printed: the share of nominal-95% intervals that contain the truth, for the
studentized cluster bootstrap eval-gate uses, beside a percentile cluster
bootstrap and a t interval on the same data (same resamples), and for the
paired changes. Each cell is one seeded run of ``--replications`` samples
(binomial noise about ±0.014 at 1000).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gate.metrics import TrialUsage, mean_per_trial_interval, usage, usage_change
from gate.metrics._special import stdtrit

Z95 = 1.6448536269514722
CONFIGS = [(0.5, 0.5), (1.0, 0.5), (1.5, 1.0)]


def alternatives(costs: np.ndarray, stimuli: int, trials: int, seed: int) -> tuple[bool, ...]:
    """(percentile bootstrap, t interval) bounds on the same data, for comparison."""
    sums = costs.reshape(stimuli, trials).sum(axis=1)
    estimate = sums.sum() / costs.size
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, stimuli, size=(2000, stimuli), dtype=np.int32)
    replicates = sums[draws].sum(axis=1) / (stimuli * trials)
    percentile = tuple(np.quantile(replicates, [0.025, 0.975]))
    se = math.sqrt(stimuli / (stimuli - 1) * np.sum((sums - estimate * trials) ** 2)) / costs.size
    half = float(stdtrit(stimuli - 1, 0.975)) * se
    return percentile, (estimate - half, estimate + half)  # type: ignore[return-value]


def mean_table(replications: int) -> None:
    print("mean cost per trial, nominal 95%: coverage (truth above the upper bound)")
    print("stimuli  trials  sd_between  sd_within  bootstrap-t      percentile       t interval")
    for stimuli in (5, 10, 20, 50):
        for trials in (1, 3):
            for between, within in CONFIGS:
                rng = np.random.default_rng(1000 * stimuli + 10 * trials + int(10 * between))
                truth = math.exp(-3 + between**2 / 2 + within**2 / 2)
                codes = np.repeat(np.arange(stimuli), trials)
                hits = np.zeros(3)
                above = np.zeros(3)
                for replication in range(replications):
                    effect = np.repeat(rng.normal(0, between, stimuli), trials)
                    costs = np.exp(-3 + effect + rng.normal(0, within, stimuli * trials))
                    # Below 10 stimuli eval-gate gives no interval; measure the method anyway.
                    kept, usage.MIN_STIMULI = usage.MIN_STIMULI, 2
                    try:
                        iv = mean_per_trial_interval(costs, codes, seed=replication)
                    finally:
                        usage.MIN_STIMULI = kept
                    assert iv is not None
                    bounds = [(iv.lo, iv.hi), *alternatives(costs, stimuli, trials, replication)]
                    for column, (lo, hi) in enumerate(bounds):
                        hits[column] += lo <= truth <= hi
                        above[column] += truth > hi
                cells = "  ".join(
                    f"{h / replications:.3f} ({a / replications:.3f})"
                    for h, a in zip(hits, above, strict=True)
                )
                print(f"{stimuli:7d}  {trials:6d}  {between:10.1f}  {within:9.1f}  {cells}")


def change_table(replications: int) -> None:
    print()
    print("paired changes (shift 0.2 on the log scale), nominal 95%: coverage")
    print("stimuli  trials  sd_between  sd_within  cost per trial  p95 duration")
    for stimuli in (10, 20, 50, 200):
        for trials in (1, 3):
            for between, within in CONFIGS[:2]:
                rng = np.random.default_rng(7000 + 1000 * stimuli + 10 * trials)
                spread = math.hypot(between, within)
                p95_truth = math.exp(Z95 * spread + 0.2) - math.exp(Z95 * spread)
                cost_truth = math.exp(-2.8 + spread**2 / 2) - math.exp(-3 + spread**2 / 2)
                keys = np.repeat(np.arange(stimuli), trials).tolist()
                flags = [True] * len(keys)
                cost_hits = p95_hits = 0
                p95_counted = 0
                for replication in range(replications):
                    effect = np.repeat(rng.normal(0, between, stimuli), trials)
                    now_cost, now_time, before_cost, before_time = (
                        np.exp(effect + offset + rng.normal(0, within, len(keys)))
                        for offset in (-2.8, 0.2, -3.0, 0.0)
                    )
                    now = TrialUsage.from_trials(
                        keys, flags, cost_usd=now_cost, duration_s=now_time
                    )
                    before = TrialUsage.from_trials(
                        keys, flags, cost_usd=before_cost, duration_s=before_time
                    )
                    comparison = usage_change(now, before, seed=replication)
                    cost, p95 = comparison.cost_per_trial, comparison.duration_p95
                    assert cost is not None and p95 is not None
                    cost_hits += cost.lo <= cost_truth <= cost.hi  # type: ignore[operator]
                    if p95.lo is not None:
                        p95_counted += 1
                        p95_hits += p95.lo <= p95_truth <= p95.hi  # type: ignore[operator]
                p95_cell = f"{p95_hits / p95_counted:.3f}" if p95_counted else "none (<20)"
                print(
                    f"{stimuli:7d}  {trials:6d}  {between:10.1f}  {within:9.1f}  "
                    f"{cost_hits / replications:14.3f}  {p95_cell:>12}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 replications")
    args = parser.parse_args()
    replications = 200 if args.quick else args.replications
    mean_table(replications)
    change_table(replications)


if __name__ == "__main__":
    main()
