"""Sequential against fixed designs: error rates and trials spent, for a few truths.

The design of issue 13: 20 stimuli, gate "pass^3 ≥ 0.8" on the 95% interval, a CI
job that looks every 2 trials from 3 up to 60 and stops at the first pass or fail.

Compared, with the same simulated trials:

- **fixed N**: the trials ``eval-gate plan --expect 0.96`` gives (the one-look
  interval, mid-p), checked once at N;
- **naive peeking**: the same one-look interval re-checked at every look, stopping
  at the first pass or fail — what a team does without ``--sequential`` (its error
  rate inflates with the looks);
- **sequential**: ``check --sequential`` (confidence sequences), at every look.

Run: ``.venv/bin/python bench/sequential.py [--runs 4000]``. Prints, per truth, the
share of runs that pass and that fail, and the mean trials per stimulus at the
decision (undecided runs count their last look).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gate.config import build_config
from gate.metrics.decision import FAIL, PASS, IntervalRule
from gate.metrics.sequential import confidence_sequence
from gate.planning import plan

M, K, TARGET, CONFIDENCE = 20, 3, 0.8, 0.95
LOOKS = list(range(3, 61, 2))


def fixed_trials(expect: float) -> int:
    config = build_config({"k": K, "gates": {"pass_hat_k": {"min": TARGET, "bound": "interval"}}})
    found = plan(config, [expect] * M, source="expect").trials_per_stimulus
    assert found is not None
    return found


def simulate(p: float, runs: int, n_fixed: int, seed: int) -> dict[str, tuple[float, float, float]]:
    rng = np.random.default_rng(seed)
    horizon = max(max(LOOKS), n_fixed)
    trials = rng.random((runs, M, horizon)) < p
    rule = IntervalRule("pass_hat_k", K, TARGET, "min", CONFIDENCE, "mid-p", "suite")

    def decide_fixed(n: int) -> np.ndarray:
        c = trials[:, :, :n].sum(axis=2)
        return rule.evaluate(np.full(M, n), c).outcome

    results: dict[str, tuple[float, float, float]] = {}
    once = decide_fixed(n_fixed)
    results["fixed N"] = (float(np.mean(once == PASS)), float(np.mean(once == FAIL)), n_fixed)

    def first_decision(outcomes_at: dict[int, np.ndarray]) -> tuple[float, float, float]:
        decided = np.zeros(runs, dtype=np.int8)
        spent = np.full(runs, float(LOOKS[-1]))
        for look in LOOKS:
            open_ = decided == 0
            now = outcomes_at[look]
            newly = open_ & (now != 0)
            decided = np.where(newly, now, decided)
            spent = np.where(newly, look, spent)
        return float(np.mean(decided == PASS)), float(np.mean(decided == FAIL)), float(spent.mean())

    results["naive peeking"] = first_decision({look: decide_fixed(look) for look in LOOKS})
    blocks = trials[:, :, : (max(LOOKS) // K) * K].reshape(runs, M, -1, K).all(axis=3)
    cs = confidence_sequence(blocks.sum(axis=1), M, CONFIDENCE)
    sequential = {}
    for look in LOOKS:
        rounds = look // K
        lower, upper = cs.lower[:, rounds - 1], cs.upper[:, rounds - 1]
        sequential[look] = np.where(
            lower >= TARGET, PASS, np.where(upper < TARGET, FAIL, 0)
        ).astype(np.int8)
    results["sequential"] = first_decision(sequential)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    args = parser.parse_args()
    start = time.perf_counter()
    n_fixed = fixed_trials(0.96)
    print(
        f"{M} stimuli, gate pass^{K} ≥ {TARGET} on the {CONFIDENCE:.0%} interval, looks every 2 "
        f"trials from 3 to 60; fixed design N = {n_fixed} (eval-gate plan --expect 0.96); "
        f"{args.runs} runs per truth"
    )
    header = (
        f"{'truth p':>8} {'pass^3':>7}  {'design':<14} {'pass':>6} {'fail':>6} "
        f"{'mean trials':>12}"
    )
    print(header)
    print("-" * len(header))
    truths = [0.75 ** (1 / 3), 0.9, 0.9283, 0.96, 0.99]
    for i, p in enumerate(truths):
        for design, (passed, failed, spent) in simulate(p, args.runs, n_fixed, seed=i).items():
            print(
                f"{p:8.4f} {p**K:7.3f}  {design:<14} {passed:6.3f} {failed:6.3f} {spent:12.1f}"
            )
        print()
    sequential = simulate(0.99, args.runs, n_fixed, seed=99)["sequential"]
    print(
        f"at p = 0.99 the sequential gate decides after {sequential[2]:.1f} trials on average, "
        f"{sequential[2] / n_fixed:.2f} × the fixed design's {n_fixed} (goal ≤ 0.5)"
    )
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
