"""Scale benchmark: a million trials of every format through ``eval-gate check``.

Run:  .venv/bin/python bench/scale.py [--rounds 3] [--format NAME ...] [--trials-scale 0.1]

Each format is one entry of :data:`FORMATS`: a generator that writes a file of that format
(10,000 stimuli x 100 trials unless the entry says otherwise), the reference — the standard
library's plain parse of the same file, nothing kept — and the ``eval-gate check`` options
that read it. Files are generated once and cached in ``bench/.data/`` (git-ignored).

For every format, each in its own subprocess so that time and peak RSS (``os.wait4``) are
the child's alone, interleaved over ``--rounds`` rounds (the machine is shared; the best
time counts, the largest RSS):

- the reference parse;
- ``eval-gate check`` end to end: reading, validation, scoring, three gates, the Markdown
  summary and the JSON report written to files.

Each child also times its reading alone (the ``parse`` and ``ingest`` columns): the
reference its parse, ``check`` its ``gate.ingest.load`` (reading and validation into the
trial table), start-up, imports, scoring, gates and reports apart. That ratio is the format's
own cost; the end-to-end one adds the costs every format shares (start-up about 0.15 s, the
reports about 25 microseconds a stimulus).

Then ``eval-gate check`` on the bundled small example (examples/failing, as ``make run``
runs it): cold start. Children run with bytecode caches, as an installed package does.

Two entries are not a format's plain reading, and have no ratio goal: ``jsonl-rows`` (the
row-by-row reader that the columnar path falls back to) and ``vs-baseline`` (a
check of the native JSONL file against itself as ``--baseline``: two tables and the usage
changes, for its memory).

Goals (on ``check``, end to end): check <= 1.5x its reference, ingest <= 1.5x its
reference parse (both timed in the child), peak RSS <= 300 MB, small
example <= 0.35 s; with ``--linearity``, time linear in trials: ``check`` of the same
stimuli with a quarter of the trials is timed too, and four times the trials may take at
most :data:`GOAL_LINEAR` times as long (linear is at most 4, less with fixed costs; a
quadratic step would be near 16). Exit status 1 when a goal is missed. Memory per
stimulus: the ``counts`` entry has 100,000 stimuli, so its peak RSS over the small
example's, divided by 100,000, is printed too.

Adding a format: write ``write_<name>(path, spec)`` from :func:`trial_rows`, and add one
:class:`Format` to :data:`FORMATS`.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / ".data"
#: bump when the generated records change, so a stale cache is never measured
VERSION = 2

GOAL_RATIO = 1.5
GOAL_RSS_MB = 300.0
GOAL_SMALL_S = 0.35
#: four times the trials may take at most this many times as long (see the docstring)
GOAL_LINEAR = 4.5
#: --linearity's smaller file: this share of the trials, the same stimuli
QUARTER = 0.25

#: The gates every check runs (besides the default completed-trials gate).
GATES = ("--min-pass-hat-k", "0.3", "--max-flakiness", "0.45", "--threshold", "0.4")


class Row(NamedTuple):
    """One generated trial: what every format writes, each in its own way."""

    stimulus: str
    trial: int
    status: str  # "ok" or "error"
    passed: bool
    score: float
    duration_s: float
    tokens: int
    message: str | None


@dataclass(frozen=True)
class Spec:
    stimuli: int
    trials: int


def trial_rows(spec: Spec, seed: int = 20240607) -> Iterator[list[Row]]:
    """Round-major trials (trial 0 of every stimulus, then trial 1, ...), one list per round,
    as a harness running the whole suite once per round writes them; ~1% errored trials,
    failures carry a message."""
    rng = random.Random(seed)
    rates = [rng.betavariate(0.7, 0.7) for _ in range(spec.stimuli)]
    for t in range(spec.trials):
        rows = []
        for s in range(spec.stimuli):
            name = f"problem-{s:05d}"
            if rng.random() < 0.01:
                rows.append(Row(name, t, "error", False, 0.0, 0.0, 0, "sandbox timed out"))
                continue
            passed = rng.random() < rates[s]
            score = round(rng.random() * 0.3 + (0.7 if passed else 0.0), 3)
            duration = round(rng.random() * 60, 2)
            message = None if passed else f"expected 42, got {rng.randint(0, 41)}"
            tokens = rng.randint(200, 9000)
            rows.append(Row(name, t, "ok", passed, score, duration, tokens, message))
        yield rows


# -- generators, one per format -------------------------------------------------------


def _native_record(row: Row) -> str:
    head = f'"stimulus": "{row.stimulus}", "trial": {row.trial}, '
    if row.status == "error":
        return f'{{"suite": "bench", {head}"status": "error", "message": "{row.message}"}}'
    verdict = "true" if row.passed else "false"
    message = f', "message": "{row.message}"' if row.message else ""
    return (
        f'{{"suite": "bench", {head}"passed": {verdict}, "score": {row.score}{message}, '
        f'"metadata": {{"duration_s": {row.duration_s}, "tokens": {row.tokens}}}}}'
    )


def write_native_jsonl(path: Path, spec: Spec) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"type": "suite", "schema_version": "1.0", "suite": "bench"}\n')
        for rows in trial_rows(spec):
            out.writelines(_native_record(row) + "\n" for row in rows)


def write_skewed_jsonl(path: Path, spec: Spec) -> None:
    """Native JSONL in which one stimulus has nine tenths of the trials, after the other
    stimuli's rounds (a tenth of ``spec.trials`` each): most trials far past the width the
    others need (once a Python tuple each in the store's overflow: 5.8 s, 353 MB)."""
    others = Spec(spec.stimuli, max(1, spec.trials // 10))
    rng = random.Random(11)
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"type": "suite", "schema_version": "1.0", "suite": "bench"}\n')
        for rows in trial_rows(others):
            out.writelines(_native_record(row) + "\n" for row in rows)
        for t in range(spec.stimuli * spec.trials - others.stimuli * others.trials):
            passed = rng.random() < 0.7
            message = None if passed else "expected 42, got 41"
            row = Row("the-long-one", t, "ok", passed, round(rng.random(), 3),
                      round(rng.random() * 60, 2), rng.randint(200, 9000), message)  # fmt: skip
            out.write(_native_record(row) + "\n")


def write_native_json(path: Path, spec: Spec) -> None:
    """One nested document: stimuli in order, each with all its trials (trial-major)."""
    by_stimulus: list[list[str]] = [[] for _ in range(spec.stimuli)]
    for rows in trial_rows(spec):
        for s, row in enumerate(rows):
            record = json.loads(_native_record(row))
            for key in ("suite", "stimulus"):
                del record[key]
            by_stimulus[s].append(json.dumps(record))
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"schema_version": "1.0", "suite": "bench", "stimuli": [\n')
        for s, trials in enumerate(by_stimulus):
            out.write(("," if s else "") + f'{{"id": "problem-{s:05d}", "trials": [\n  ')
            out.write(",\n  ".join(trials) + "]}\n")
        out.write("]}\n")


def write_generic_jsonl(path: Path, spec: Spec) -> None:
    """JSONL in another tool's own names, read with --map."""
    with open(path, "w", encoding="utf-8") as out:
        for rows in trial_rows(spec):
            for row in rows:
                record: dict[str, object] = {"case": row.stimulus, "run": row.trial}
                if row.status == "error":
                    record.update(state="error", reason=row.message)
                else:
                    record.update(ok=row.passed, quality=row.score, state="done")
                    record.update(elapsed=row.duration_s, usage={"tokens": row.tokens})
                    if row.message:
                        record["reason"] = row.message
                out.write(json.dumps(record) + "\n")


def write_generic_jsonl_rows(path: Path, spec: Spec) -> None:
    """Generic JSONL that the columnar path leaves to the row reader: stimulus ids that are
    integers past 64 bits (orjson reads those as floats, so only the strict parser reads
    them exactly), and no trial index (trials numbered in order of appearance)."""
    with open(path, "w", encoding="utf-8") as out:
        for rows in trial_rows(spec):
            for row in rows:
                record: dict[str, object] = {"case": 10**20 + int(row.stimulus[-5:])}
                if row.status == "error":
                    record.update(state="error", reason=row.message)
                else:
                    record.update(ok=row.passed, quality=row.score, state="done")
                out.write(json.dumps(record) + "\n")


def write_csv(path: Path, spec: Spec) -> None:
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["case_id", "run", "ok", "quality", "state", "elapsed", "tokens", "why"])
        for rows in trial_rows(spec):
            for row in rows:
                if row.status == "error":
                    writer.writerow([row.stimulus, row.trial, "", "", "error", "", "", row.message])
                else:
                    ok = "yes" if row.passed else "no"
                    writer.writerow([row.stimulus, row.trial, ok, row.score, "done",
                                     row.duration_s, row.tokens, row.message or ""])  # fmt: skip


def write_counts(path: Path, spec: Spec) -> None:
    """One row of totals per stimulus (what a GROUP BY gives)."""
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"type": "suite", "schema_version": "1.0", "suite": "bench"}\n')
        for s in range(spec.stimuli):
            n = spec.trials
            errors = rng.randint(0, 2)
            c = rng.randint(0, n - errors)
            score = round(c * 0.85 + rng.random(), 3)
            out.write(
                f'{{"suite": "bench", "stimulus": "problem-{s:06d}", "n": {n}, "c": {c}, '
                f'"errors": {errors}, "skipped": 0, "score_sum": {min(score, n - errors)}}}\n'
            )


# -- references: the standard library's plain parse, nothing kept ---------------------

JSON_LOADS_PER_LINE = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    for line in handle:
        json.loads(line)
"""
JSON_LOAD = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    json.load(handle)
"""
CSV_READER = """
import csv, sys
with open(sys.argv[1], encoding="utf-8", newline="") as handle:
    for row in csv.reader(handle):
        pass
"""


@dataclass(frozen=True)
class Format:
    """One format in the benchmark: how to write it, parse it plainly, and check it."""

    name: str
    suffix: str
    write: Callable[[Path, Spec], None]
    reference_name: str
    reference: str
    options: tuple[str, ...] = ()
    spec: Spec = field(default_factory=lambda: Spec(10_000, 100))
    #: False for an entry that is not a format's plain reading (a reader's fallback, a
    #: comparison): its ratio is shown but is no goal; memory and linearity are
    ratio_goal: bool = True
    #: check the file against itself as the baseline (--baseline): a comparison's memory
    baseline: bool = False
    #: the generator's version, in the cached file's name
    version: int = VERSION

    def path(self, scale: float) -> Path:
        spec = self.scaled(scale)
        return DATA / f"{self.name}-{spec.stimuli}x{spec.trials}-v{self.version}{self.suffix}"

    def scaled(self, scale: float) -> Spec:
        return Spec(self.spec.stimuli, max(1, round(self.spec.trials * scale)))


GENERIC_MAP = "stimulus=case,trial=run,passed=ok,score=quality,status=state,message=reason"
FORMATS: list[Format] = [
    Format("native-jsonl", ".jsonl", write_native_jsonl, "json.loads per line",
           JSON_LOADS_PER_LINE),
    Format("native-json", ".json", write_native_json, "json.load", JSON_LOAD),
    # Native JSONL of another shape: one stimulus with nine tenths of the million trials.
    Format("skewed", ".jsonl", write_skewed_jsonl, "json.loads per line", JSON_LOADS_PER_LINE),
    # A check against a baseline (the same million trials): two tables, the usage changes.
    Format("vs-baseline", ".jsonl", write_native_jsonl, "json.loads per line",
           JSON_LOADS_PER_LINE, ratio_goal=False, baseline=True),
    Format("jsonl-map", ".jsonl", write_generic_jsonl, "json.loads per line",
           JSON_LOADS_PER_LINE,
           ("--format", "jsonl", "--map", GENERIC_MAP + ",duration_s=elapsed,tokens=usage.tokens")),
    # Not a format: the row-by-row reader, to which the columnar path leaves what it is not
    # sure of (here every chunk: it holds integers past 64 bits). Linear and bounded, not fast.
    Format("jsonl-rows", ".jsonl", write_generic_jsonl_rows, "json.loads per line",
           JSON_LOADS_PER_LINE,
           ("--format", "jsonl", "--map", "stimulus=case,passed=ok,score=quality,status=state,"
            "message=reason"), ratio_goal=False),
    Format("csv-map", ".csv", write_csv, "csv.reader", CSV_READER,
           ("--format", "csv", "--map", "stimulus=case_id,trial=run,passed=ok,score=quality,"
            "status=state,duration_s=elapsed,message=why")),
    # 100,000 stimuli of 100 trials each, as totals: the per-stimulus memory and the
    # 100,000-stimulus JSON report (written streaming).
    Format("counts", ".jsonl", write_counts, "json.loads per line", JSON_LOADS_PER_LINE,
           ("--format", "counts"), Spec(100_000, 100)),
]  # fmt: skip


# -- measuring --------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    seconds: float
    rss_mb: float
    code: int
    #: the child's own timing of its reading (:data:`TIMED_REFERENCE`, :data:`TIMED_CHECK`):
    #: the parse alone, or ``gate.ingest.load`` alone; no start-up, imports or reports
    inner: float | None = None


#: The marker of that timing on a child's stderr.
INNER = "bench-inner-seconds "
#: A reference parse (``{code}``: the format's snippet) that times itself, imports apart.
TIMED_REFERENCE = """
import csv, io, json, sys, time, zipfile, xml.etree.ElementTree
_started = time.perf_counter()
{code}
print("bench-inner-seconds", time.perf_counter() - _started, file=sys.stderr)
"""
#: ``eval-gate check`` (argv after the snippet) that times its reading: ``gate.ingest.load``
#: as the pipeline calls it (every results file; the baseline's reading too).
TIMED_CHECK = """
import sys, time
import gate.pipeline
from gate.cli import main

_load, _spent = gate.pipeline.load, []
def _timed(*args, **kwargs):
    started = time.perf_counter()
    try:
        return _load(*args, **kwargs)
    finally:
        _spent.append(time.perf_counter() - started)
gate.pipeline.load = _timed
try:
    main(sys.argv[1:], prog_name="eval-gate")
finally:
    print("bench-inner-seconds", sum(_spent), file=sys.stderr)
"""


#: Children run as an installed eval-gate does: with bytecode caches (pip writes them at
#: install time), so a PYTHONDONTWRITEBYTECODE in this shell must not make every run compile.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], cwd: Path) -> Run:
    """Wall time and peak RSS of one child process (os.wait4 gives that child's own rusage)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=cwd, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert child.stderr is not None
    errors = child.stderr.read().decode("utf-8", "replace")  # before waiting: never blocks
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(argv)} failed ({child.returncode}):\n{errors}")
    inner = [line for line in errors.splitlines() if line.startswith(INNER)]
    # ru_maxrss is in kilobytes on Linux.
    return Run(
        seconds,
        usage.ru_maxrss / 1024.0,
        child.returncode,
        float(inner[-1][len(INNER) :]) if inner else None,
    )


@dataclass
class Result:
    fmt: Format
    path: Path
    references: list[Run] = field(default_factory=list)
    checks: list[Run] = field(default_factory=list)
    report: dict[str, object] = field(default_factory=dict)
    report_mb: float = 0.0
    #: --linearity: the same stimuli with a quarter of the trials, and its checks
    quarter: Path | None = None
    quarter_checks: list[Run] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return best(self.checks).seconds / best(self.references).seconds

    @property
    def ingest(self) -> float:
        """The best reading time of ``check`` (``gate.ingest.load``, in the child)."""
        return min(r.inner for r in self.checks if r.inner is not None)

    @property
    def parse(self) -> float:
        """The best reference parse, timed in its child (interpreter start-up apart)."""
        return min(r.inner for r in self.references if r.inner is not None)

    @property
    def ingest_ratio(self) -> float:
        return self.ingest / self.parse

    @property
    def peak(self) -> float:
        return max(r.rss_mb for r in self.checks)

    @property
    def growth(self) -> float:
        """How many times as long ``check`` takes with four times the trials."""
        return best(self.checks).seconds / best(self.quarter_checks).seconds


SUITE_BLOCK = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    print(json.dumps({"suite": json.load(handle)["suite"]}))
"""


def suite_block(report: Path) -> dict[str, object]:
    """The report's suite block, read in a child (a 100 MB report would grow this process)."""
    done = subprocess.run(
        [sys.executable, "-c", SUITE_BLOCK, str(report)], capture_output=True, check=True
    )
    block: dict[str, object] = json.loads(done.stdout)
    return block


def best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.seconds)


def arguments(formats: list[Format], description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--format", action="append", choices=[f.name for f in formats], help="only these"
    )
    parser.add_argument(
        "--trials-scale", type=float, default=1.0, help="trials per stimulus x this (quick runs)"
    )
    parser.add_argument(
        "--linearity",
        action="store_true",
        help="also time check with a quarter of the trials (time linear in trials)",
    )
    parser.add_argument("--generate", help=argparse.SUPPRESS)
    return parser.parse_args()


def generate(formats: list[Format], args: argparse.Namespace) -> int:
    """The child's work: write one format's file (whole or not at all)."""
    fmt = next(f for f in formats if f.name == args.generate)
    path = fmt.path(args.trials_scale)
    tmp = path.with_name(path.name + ".tmp")
    fmt.write(tmp, fmt.scaled(args.trials_scale))
    tmp.replace(path)
    return 0


def prepare(formats: list[Format], args: argparse.Namespace, script: str) -> list[Result]:
    """The chosen formats' files, generated where missing by ``script --generate`` in a child:
    the parent stays small, since a child's peak RSS counts the memory of the process it was
    started from (Linux charges the pre-exec image to it)."""
    DATA.mkdir(parents=True, exist_ok=True)
    results = []
    for fmt in formats:
        if args.format and fmt.name not in args.format:
            continue
        result = Result(fmt, _generated(fmt, args.trials_scale, script))
        if args.linearity:
            result.quarter = _generated(fmt, args.trials_scale * QUARTER, script)
        results.append(result)
    return results


def _generated(fmt: Format, scale: float, script: str) -> Path:
    path = fmt.path(scale)
    if not path.exists():
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, script, "--generate", fmt.name, "--trials-scale", str(scale)],
            check=True,
        )
        print(f"generated {path.relative_to(ROOT)} in {time.perf_counter() - started:.1f} s")
    return path


def measure_round(results: list[Result], work: Path, first: bool) -> None:
    """One round: each format's reference parse and its ``check``."""
    python = sys.executable
    for result in results:
        reference = TIMED_REFERENCE.format(code=result.fmt.reference)
        result.references.append(measure([python, "-c", reference, str(result.path)], work))
        outputs = ("--summary", str(work / "summary.md"), "--json", str(work / "report.json"))
        check = [python, "-c", TIMED_CHECK, "check", *result.fmt.options, *outputs, *GATES]
        if result.quarter is not None:  # before the full check, whose report is read below
            quarter = ["--baseline", str(result.quarter)] if result.fmt.baseline else []
            result.quarter_checks.append(measure([*check, *quarter, str(result.quarter)], work))
        against = ["--baseline", str(result.path)] if result.fmt.baseline else []
        result.checks.append(measure([*check, *against, str(result.path)], work))
        if first:
            report_file = work / "report.json"
            result.report_mb = report_file.stat().st_size / 1e6
            result.report = suite_block(report_file)


def print_table(results: list[Result]) -> list[tuple[str, bool]]:
    """The table of every format, and its goals (text, met)."""
    print()
    header = (
        f"{'format':<13} {'trials':>10} {'stimuli':>8} {'file MB':>8} {'reference':<20} "
        f"{'ref s':>6} {'check s':>8} {'ratio':>6} {'parse s':>7} {'ingest s':>8} {'ratio':>6} "
        f"{'peak MB':>8} {'report MB':>9}"
    )
    print(header)
    print("-" * len(header))
    goals: list[tuple[str, bool]] = []
    for result in results:
        suite = result.report.get("suite", {})
        assert isinstance(suite, dict)
        ref, full = best(result.references), best(result.checks)
        trials = int(suite.get("trials", 0)) + int(suite.get("skipped", 0))
        print(
            f"{result.fmt.name:<13} {trials:>10,} {int(suite.get('stimuli', 0)):>8,} "
            f"{result.path.stat().st_size / 1e6:>8.0f} {result.fmt.reference_name:<20} "
            f"{ref.seconds:>6.2f} {full.seconds:>8.2f} {result.ratio:>6.2f} "
            f"{result.parse:>7.2f} {result.ingest:>8.2f} {result.ingest_ratio:>6.2f} "
            f"{result.peak:>8.0f} {result.report_mb:>9.1f}"
        )
        if result.fmt.ratio_goal:
            goals.append(
                (f"{result.fmt.name}: check / {result.fmt.reference_name} = {result.ratio:.2f} "
                 f"(goal <= {GOAL_RATIO})", result.ratio <= GOAL_RATIO)
            )  # fmt: skip
            goals.append(
                (f"{result.fmt.name}: ingest / {result.fmt.reference_name} = "
                 f"{result.ingest_ratio:.2f} (goal <= {GOAL_RATIO})",
                 result.ingest_ratio <= GOAL_RATIO)
            )  # fmt: skip
        goals.append(
            (f"{result.fmt.name}: peak RSS {result.peak:.0f} MB (goal <= {GOAL_RSS_MB:.0f} MB)",
             result.peak <= GOAL_RSS_MB)
        )  # fmt: skip
    linear = [r for r in results if r.quarter_checks]
    if linear:
        print(f"\ntime linear in trials (check of the same stimuli, {QUARTER:g} of the trials):")
        for result in linear:
            quarter = best(result.quarter_checks).seconds
            print(
                f"  {result.fmt.name:<13} {quarter:>6.2f} s -> {best(result.checks).seconds:.2f} s"
                f" for 4x the trials: x{result.growth:.2f}"
            )
            goals.append(
                (f"{result.fmt.name}: 4x the trials take x{result.growth:.2f} as long "
                 f"(goal <= {GOAL_LINEAR}: linear)", result.growth <= GOAL_LINEAR)
            )  # fmt: skip
    return goals


def print_goals(goals: list[tuple[str, bool]]) -> int:
    print()
    for text, met in goals:
        print(f"{'met   ' if met else 'MISSED'} {text}")
    return 0 if all(met for _, met in goals) else 1


def main() -> int:
    args = arguments(FORMATS, __doc__ or "")
    if args.generate:
        return generate(FORMATS, args)
    results = prepare(FORMATS, args, __file__)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)  # no .eval-gate.yml here: the gates are the options below
        python = sys.executable
        # As `make run` does: in the example's folder (its .eval-gate.yml), JSON report too.
        example = ROOT / "examples" / "failing"
        small = [python, "-m", "gate.cli", "check", "results.jsonl", "--json", str(work / "f.json")]
        small_runs: list[Run] = []
        measure(small, example)  # warm-up: writes the bytecode caches, warms the disk cache
        for round_ in range(args.rounds):
            measure_round(results, work, round_ == 0)
            for _ in range(3):
                small_runs.append(measure(small, example))

    tiny = best(small_runs)
    goals = print_table(results)
    try:
        import pyarrow

        arrow = f"pyarrow {pyarrow.__version__} installed: CSV files over 4 MiB read by it"
    except ImportError:
        arrow = "pyarrow not installed (the arrow extra): every CSV file read by the csv module"
    print(f"\n{arrow}")
    print(f"\nsmall example (cold start): {tiny.seconds:.3f} s, peak RSS {tiny.rss_mb:.0f} MB")
    for result in results:
        stimuli = int(result.report.get("suite", {}).get("stimuli", 0))  # type: ignore[attr-defined]
        if result.fmt.name == "counts" and stimuli:
            per = (result.peak - tiny.rss_mb) * 1024 * 1024 / stimuli
            print(
                f"memory per stimulus (counts, {stimuli:,} stimuli, JSON report "
                f"{result.report_mb:.0f} MB written): {per:,.0f} bytes over the small example"
            )
    goals.append(
        (f"small example {tiny.seconds:.3f} s (goal <= {GOAL_SMALL_S} s)",
         tiny.seconds <= GOAL_SMALL_S)
    )  # fmt: skip
    return print_goals(goals)


if __name__ == "__main__":
    sys.exit(main())
