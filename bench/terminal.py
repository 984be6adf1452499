"""What the terminal view adds to ``eval-gate check``: our renderer against rich.

Run:  .venv/bin/python bench/terminal.py [--rounds 10]

Each round starts a fresh interpreter (as a check does) in examples/failing, runs the
check, renders the Markdown summary (the pipe path), then times what a terminal costs on
top: importing the renderer and drawing the view. The reference, measured in the same run,
is rich (``rich.console`` + ``rich.table``, the ecosystem's terminal library) drawing the
three tables of the view; it is skipped when rich is not installed (it is not a
dependency). Best of ``--rounds``. Goal: ours <= 25 ms, a small part of the 0.35 s cold
start of bench/scale.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 25.0

SETUP = """
import io, time
from gate.pipeline import request_from_options, run_check
outcome = run_check(request_from_options(["results.jsonl"], config=None))
from gate.report.markdown import render_summary
render_summary(outcome)
t0 = time.perf_counter()
"""
OURS = (
    SETUP
    + """
from gate.report.terminal import Terminal, render_terminal
t1 = time.perf_counter()
render_terminal(outcome, Terminal(120, True))
print(t1 - t0, time.perf_counter() - t1)
"""
)
RICH = (
    SETUP
    + """
from rich.console import Console
from rich.table import Table
t1 = time.perf_counter()
console = Console(file=io.StringIO(), force_terminal=True, width=120)
for title in ("Gates", "Suite", "Stimuli"):
    table = Table(title=title)
    for name in ("Stimulus", "Trials", "Outcomes", "Pass rate", "Interval", "pass@3", "pass^3",
                 "Flaky", "Reading"):
        table.add_column(name)
    for s in outcome.suite.stimuli:
        table.add_row(s.name, str(s.trials), s.outcomes, f"{s.pass_rate:.1%}", "[0.1, 0.9]",
                      f"{s.pass_at_k:.3f}", f"{s.pass_hat_k:.3f}", "", s.reading)
    console.print(table)
print(t1 - t0, time.perf_counter() - t1)
"""
)


def measure(code: str, rounds: int) -> tuple[float, float]:
    """Best import and best first-render time, in seconds, over fresh interpreters."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = []
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT / "examples" / "failing",
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        first, second = (float(x) for x in done.stdout.split())
        runs.append((first, second))
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    ours = measure(OURS, args.rounds)
    print(f"ours : import {1e3 * ours[0]:5.1f} ms + render {1e3 * ours[1]:5.1f} ms")
    total = sum(ours)
    if importlib.util.find_spec("rich") is not None:
        rich = measure(RICH, args.rounds)
        print(f"rich : import {1e3 * rich[0]:5.1f} ms + render {1e3 * rich[1]:5.1f} ms")
        print(f"ours / rich = {total / sum(rich):.2f}")
    else:
        print("rich : not installed, no reference")
    met = 1e3 * total <= GOAL_MS
    print(f"goal: ours <= {GOAL_MS:.0f} ms: {'met' if met else 'MISSED'} ({1e3 * total:.1f} ms)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
