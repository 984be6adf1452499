"""Every k the half-width rule's bisection is used at: the shape it rests on, checked.

Run:  .venv/bin/python bench/half_width_shape.py [--k-max 1000]   (or ``make bench-shape``)

A per-stimulus half-width gate's advice decides each stimulus from a peak and two
bisections per distinct n (``gate.metrics.decision._widest``), which is right only if the
half-width is single-peaked in c: once it falls it never rises again. The test suite checks
that at every k of pass^k and pass@k up to 100 and a sample of k past it (the check is a
few seconds per hundred k); this runs the same two checks (every c for n up to 300 at 80%,
95% and 99%; c near the ends and the peaks at large n) at every k from 1 to ``--k-max``,
for every interval method, and exits 1 on the first k where the shape fails.
``decision._HALF_WIDTH_SHAPE_PROVEN_K`` may be no larger than the k this passed up to.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' checks

import tests.metrics.test_stimulus_rules as shapes
from gate.metrics import decision


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k-max", type=int, default=decision._HALF_WIDTH_SHAPE_PROVEN_K)
    args = parser.parse_args()
    shapes.HALF_WIDTH_SHAPES = [("pass_rate", 1)] + [
        (metric, k) for metric in ("pass_hat_k", "pass_at_k") for k in range(1, args.k_max + 1)
    ]
    start = time.perf_counter()
    for method in shapes.HALF_WIDTH_METHODS:
        try:
            shapes.test_the_half_width_is_single_peaked_at_every_count(method)
            shapes.test_the_half_width_is_single_peaked_at_large_n(method)
        except AssertionError as failure:
            print(f"{method}: NOT single-peaked: {failure}")
            return 1
        print(f"{method:16} single-peaked at every k from 1 to {args.k_max:,} "
              f"({time.perf_counter() - start:.0f} s so far)", flush=True)  # fmt: skip
    proven = decision._HALF_WIDTH_SHAPE_PROVEN_K
    print(f"decision._HALF_WIDTH_SHAPE_PROVEN_K = {proven:,}: "
          f"{'covered' if proven <= args.k_max else 'NOT covered'}")  # fmt: skip
    return 0 if proven <= args.k_max else 1


if __name__ == "__main__":
    sys.exit(main())
