"""Scale benchmark: one million trials through ``eval-gate check``, against ``json.loads``.

Run:  .venv/bin/python bench/scale.py [--rounds 3] [--stimuli 10000] [--trials 100]

Generates 10,000 stimuli x 100 trials of native JSONL once (cached in
``bench/.data/``, git-ignored), then measures, each in its own subprocess so
that time and peak RSS (``os.wait4``) are the child's alone:

- reference: ``json.loads`` of every line (no validation, no table, nothing kept);
- ``eval-gate check`` end to end: validation, scoring, gates, Markdown and JSON reports;
- ``eval-gate check`` on the bundled small example (examples/failing, as ``make run``
  runs it): cold start.

Each figure is the best of ``--rounds`` interleaved runs (the machine is shared);
children run with bytecode caches, as an installed package does.
Goals: end to end <= 1.5x the reference time, peak RSS <= 300 MB, small
example <= 0.35 s wall. Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / ".data"
#: bump when the generated records change, so a stale cache is never measured
FORMAT = 1

GOAL_RATIO = 1.5
GOAL_RSS_MB = 300.0
GOAL_SMALL_S = 0.35

REFERENCE = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    for line in handle:
        json.loads(line)
"""


@dataclass(frozen=True)
class Run:
    seconds: float
    rss_mb: float
    code: int


def generate(path: Path, stimuli: int, trials: int) -> None:
    """Round-major records (trial 0 of every stimulus, then trial 1, ...), as a harness
    running the whole suite once per round writes them; ~1% errored trials."""
    rng = random.Random(20240607)
    rates = [rng.betavariate(0.7, 0.7) for _ in range(stimuli)]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        header = {"type": "suite", "schema_version": "1.0", "suite": "bench"}
        out.write(json.dumps(header) + "\n")
        for t in range(trials):
            lines = []
            for s in range(stimuli):
                head = f'{{"suite": "bench", "stimulus": "problem-{s:05d}", "trial": {t}, '
                if rng.random() < 0.01:
                    lines.append(head + '"status": "error", "message": "sandbox timed out"}\n')
                    continue
                passed = rng.random() < rates[s]
                score = round(rng.random() * 0.3 + (0.7 if passed else 0.0), 3)
                duration = round(rng.random() * 60, 2)
                tokens = rng.randint(200, 9000)
                lines.append(
                    head + f'"passed": {"true" if passed else "false"}, "score": {score}, '
                    f'"metadata": {{"duration_s": {duration}, "tokens": {tokens}}}}}\n'
                )
            out.writelines(lines)
    tmp.replace(path)


#: Children run as an installed eval-gate does: with bytecode caches (pip writes them at
#: install time), so a PYTHONDONTWRITEBYTECODE in this shell must not make every run compile.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], cwd: Path) -> Run:
    """Wall time and peak RSS of one child process (os.wait4 gives that child's own rusage)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=cwd, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    assert child.stderr is not None
    errors = child.stderr.read().decode("utf-8", "replace")
    child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed ({child.returncode}):\n{errors}")
    # ru_maxrss is in kilobytes on Linux.
    return Run(seconds, usage.ru_maxrss / 1024.0, child.returncode)


def best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stimuli", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=100)
    args = parser.parse_args()

    DATA.mkdir(parents=True, exist_ok=True)
    data = DATA / f"trials-{args.stimuli}x{args.trials}-v{FORMAT}.jsonl"
    if not data.exists():
        started = time.perf_counter()
        generate(data, args.stimuli, args.trials)
        print(f"generated {data} in {time.perf_counter() - started:.1f} s")
    records = args.stimuli * args.trials
    size_mb = data.stat().st_size / 1e6
    print(f"data: {records:,} trial records, {size_mb:.0f} MB ({data.relative_to(ROOT)})")

    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)  # no .eval-gate.yml here: the gates are the options below
        check = [
            python, "-m", "gate.cli", "check", str(data),
            "--summary", str(work / "summary.md"), "--json", str(work / "report.json"),
            "--min-pass-hat-k", "0.3", "--max-flakiness", "45", "--threshold", "0.4",
        ]  # fmt: skip
        reference = [python, "-c", REFERENCE, str(data)]
        # As `make run` does: in the example's folder (its .eval-gate.yml), JSON report too.
        example = ROOT / "examples" / "failing"
        small = [python, "-m", "gate.cli", "check", "results.jsonl", "--json", str(work / "f.json")]
        ref_runs: list[Run] = []
        check_runs: list[Run] = []
        small_runs: list[Run] = []
        measure(small, example)  # warm-up: writes the bytecode caches, warms the disk cache
        for _ in range(args.rounds):
            ref_runs.append(measure(reference, work))
            check_runs.append(measure(check, work))
            for _ in range(3):
                small_runs.append(measure(small, example))
        report = json.loads((work / "report.json").read_text(encoding="utf-8"))
        summary_kb = (work / "summary.md").stat().st_size / 1024
        report_kb = (work / "report.json").stat().st_size / 1024

    ref, full, tiny = best(ref_runs), best(check_runs), best(small_runs)
    peak = max(r.rss_mb for r in check_runs)
    ratio = full.seconds / ref.seconds
    print(f"reference json.loads per line : {ref.seconds:6.2f} s   peak RSS {ref.rss_mb:6.0f} MB")
    print(f"eval-gate check end to end    : {full.seconds:6.2f} s   peak RSS {peak:6.0f} MB")
    print(f"  ({records / full.seconds:,.0f} trials/s; verdict {report['verdict']}, ")
    print(
        f"   {report['suite']['stimuli']:,} stimuli, {report['suite']['trials']:,} trials, "
        f"summary {summary_kb:.0f} KB, JSON report {report_kb:.0f} KB)"
    )
    print(f"eval-gate check small example : {tiny.seconds:6.3f} s   peak RSS {tiny.rss_mb:6.0f} MB")
    goals = [
        (f"end to end / reference = {ratio:.2f} (goal <= {GOAL_RATIO})", ratio <= GOAL_RATIO),
        (f"peak RSS {peak:.0f} MB (goal <= {GOAL_RSS_MB:.0f} MB)", peak <= GOAL_RSS_MB),
        (
            f"small example {tiny.seconds:.3f} s (goal <= {GOAL_SMALL_S} s)",
            tiny.seconds <= GOAL_SMALL_S,
        ),
    ]
    for text, met in goals:
        print(f"{'met   ' if met else 'MISSED'} {text}")
    return 0 if all(met for _, met in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
