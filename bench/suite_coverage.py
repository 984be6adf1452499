"""Simulated coverage of the suite interval on every profile of issue 11 (the full grid).

Run:  .venv/bin/python bench/suite_coverage.py [--replicates 20000] [--method mid-p ...]
      (``make bench-coverage`` runs it for mid-p and Wilson)

Profiles (stimulus pass rates): all p = 0.5; p ~ Beta(2,1); 70% p = 1 / 20% p = 0 /
10% U(0,1); all p = 0.95. M = 5, 10, 20, 50 stimuli, n = 3, 5, 10 trials; pass rate,
pass@k and pass^k for k = 2..n. Coverage is of the suite truth mean_i g(p_i) of the
drawn stimuli (trial noise only); the nominal level is 95% and the requirement 90%.
Each row is one (profile, M, n): the worst metric case, the mean over cases, and how
many cases fall below 0.90. One sampling standard error at 0.93 with the default
20,000 replicates is 0.0018.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.metrics.suite_simulation import PROFILES, Cell, grid


def label(cell: Cell) -> str:
    return "pass rate" if cell.metric == "pass_rate" else f"{cell.metric} k={cell.k}"


def report(cells: list[Cell], method: str) -> str:
    lines = [
        f"### {method}",
        "",
        "| profile | M | n | worst case | worst | mean | cases < 0.90 |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    groups: dict[tuple[str, int, int], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.profile, cell.stimuli, cell.trials), []).append(cell)
    for (profile, stimuli, trials), group in groups.items():
        worst = min(group, key=lambda c: c.coverage)
        mean = sum(c.coverage for c in group) / len(group)
        below = sum(c.coverage < 0.90 for c in group)
        lines.append(
            f"| {profile} | {stimuli} | {trials} | {label(worst)} | {worst.coverage:.4f} | "
            f"{mean:.4f} | {below} |"
        )
    lines += ["", "Worst cell per profile:", ""]
    for profile in PROFILES:
        worst = min((c for c in cells if c.profile == profile), key=lambda c: c.coverage)
        lines.append(
            f"- {profile}: {worst.coverage:.4f} (M = {worst.stimuli}, n = {worst.trials}, "
            f"{label(worst)})"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=20_000)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--method", action="append", help="repeatable; default mid-p")
    args = parser.parse_args()
    for method in args.method or ["mid-p"]:
        start = time.perf_counter()
        cells = grid(args.replicates, method, args.confidence)
        elapsed = time.perf_counter() - start
        print(report(cells, method))
        print(f"\n({len(cells)} cells × {args.replicates} replicates in {elapsed:.1f} s)\n")


if __name__ == "__main__":
    main()
