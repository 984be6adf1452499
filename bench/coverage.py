"""Exact coverage of every one-rate interval method: the table published in docs/metrics.md.

Run:  .venv/bin/python bench/coverage.py [--confidence 0.95] [--step 0.0005]
      (or ``make bench-coverage``)

For n = 3, 5, 10, 20, 50 and every method, the coverage probability
``sum_c P(X = c | p) · 1[L(c) <= p <= U(c)]`` (X ~ Bin(n, p); no simulation) on a grid
of p from 0.05 to 0.95, printed as ``min / mean``. The reference line is the nominal
level: a method's minimum below it is how far the discreteness of c pulls it down.
``--all-n`` also scans every n from 3 to 100 for the default method and lists the
n whose minimum falls below 0.92. ``--speed`` times ``rate_interval`` on 10,000
stimuli for every method, against Wilson (a closed form) measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gate.metrics import interval_coverage, rate_interval
from gate.metrics.intervals import DEFAULT_METHOD, INTERVAL_METHODS

TRIALS = (3, 5, 10, 20, 50)


def grid(step: float) -> np.ndarray:
    """p from 0.05 to 0.95 inclusive in steps of ``step`` (rounded: no 0.9500000001)."""
    count = round(0.9 / step) + 1
    return np.round(np.linspace(0.05, 0.95, count), 12)


def table(confidence: float, step: float) -> str:
    rates = grid(step)
    header = "| method | " + " | ".join(f"n = {n}" for n in TRIALS) + " |"
    lines = [header, "|---|" + "---|" * len(TRIALS)]
    for method in (DEFAULT_METHOD, *(m for m in INTERVAL_METHODS if m != DEFAULT_METHOD)):
        cells = []
        for n in TRIALS:
            result = interval_coverage(method, n, rates, confidence)  # type: ignore[arg-type]
            cells.append(f"{result.minimum:.3f} / {result.mean:.3f}")
        name = f"{method} (default)" if method == DEFAULT_METHOD else method
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scan(confidence: float, step: float, floor: float) -> str:
    rates = grid(step)
    low = []
    for n in range(3, 101):
        result = interval_coverage(DEFAULT_METHOD, n, rates, confidence)
        if result.minimum < floor:
            low.append(f"n={n}: {result.minimum:.4f}")
    return f"{DEFAULT_METHOD}, n = 3..100, minimum below {floor}: " + (", ".join(low) or "none")


def best_time(call: object, repeat: int = 7) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def speed() -> str:
    """10,000 stimuli: a typical suite (n = 5, a few ragged) and a worst case of
    thousands of distinct (c, n) pairs (n uniform on 1..500)."""
    rng = np.random.default_rng(11)
    typical_n = np.where(rng.random(10_000) < 0.05, 4, 5)
    typical_c = rng.binomial(typical_n, 0.8)
    spread_n = rng.integers(1, 501, 10_000)
    spread_c = rng.binomial(spread_n, rng.random(10_000))
    rate_interval(1, 2, method="jeffreys")  # pay SciPy's import before timing
    lines = ["| method | typical suite | ratio to wilson | 10,000 distinct pairs | ratio |"]
    lines.append("|---|---|---|---|---|")
    reference = None
    for method in ("wilson", *(m for m in INTERVAL_METHODS if m != "wilson")):
        typical = best_time(lambda m=method: rate_interval(typical_c, typical_n, method=m))
        spread = best_time(lambda m=method: rate_interval(spread_c, spread_n, method=m), 3)
        reference = reference or (typical, spread)
        lines.append(
            f"| {method} | {typical * 1e3:.2f} ms | {typical / reference[0]:.1f} | "
            f"{spread * 1e3:.1f} ms | {spread / reference[1]:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--step", type=float, default=0.0005)
    parser.add_argument("--all-n", action="store_true", help="scan n = 3..100 (default method)")
    parser.add_argument("--speed", action="store_true", help="time 10,000 stimuli per method")
    args = parser.parse_args()
    rates = grid(args.step)
    print(
        f"Exact coverage, min / mean over p = 0.05..0.95 ({rates.size} points, step "
        f"{args.step:g}), nominal {args.confidence:.0%}:\n"
    )
    print(table(args.confidence, args.step))
    if args.all_n:
        print()
        print(scan(args.confidence, args.step, 0.92))
    if args.speed:
        print()
        print("rate_interval on 10,000 stimuli (best of several runs):\n")
        print(speed())


if __name__ == "__main__":
    main()
