"""Mutation fuzzing of ``eval-gate check``, ``plan`` and ``validate``, in process.

Run:  .venv/bin/python -m tests.hostile.mutate [--seed 1] [--runs 2000] [--differential]
      .venv/bin/python -m tests.hostile.mutate --action [--seed 1] [--runs 2000]
      .venv/bin/python -m tests.hostile.mutate --publish [--seed 1] [--runs 2000]

Each run takes a valid input (every fixture in tests/ingest/fixtures, the examples), changes
one to four places of it the way its format is built (a JSON value replaced by a hostile or
a same-typed one, removed, repeated or wrapped; a CSV cell; a JUnit attribute; a few raw
bytes), sometimes with a mutated configuration or a baseline of another format, and runs a
command on it. A run is a finding when an exception escapes, the output says "internal
error" or shows a traceback, the exit code is not 0-3, or it takes over 10 s; with
``--differential``, also when the same input read through the readers' small blocks (the
paths big files take) gives another exit code, output, report or summary. ``--action`` runs
the action's dry run instead, with random inputs, a mutated event payload and a token in
``INPUT_GITHUB_TOKEN``, and the token in any output or written file is a finding.
``--publish`` runs the action for real against a fake GitHub (tests/hostile/mutate_publish.py
says what it checks). Each finding's input is kept in ``mutations/`` and printed with its
command. ``make mutate`` runs every mode; ``make test`` only a few seeded runs of each
(tests/hostile/test_mutate.py): the tests hold what it found (an XML declaration naming an
unknown encoding, whole floats in counts, an error that depended on the piece size, a
second sticky comment where the list of comments could not be read whole).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import random
import re
import shutil
import signal
import tempfile
import time
import traceback
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from click.testing import CliRunner

from gate.cli import main as cli
from tests.conftest import EXAMPLES, ROOT

FIXTURES = ROOT / "tests" / "ingest" / "fixtures"
KINDS = {".json": "json", ".jsonl": "jsonl", ".csv": "csv", ".xml": "xml", ".eval": "eval"}

#: a secret as the action gets it; no output, summary, comment or file may show it, even
#: where the data holds it (it is among the hostile values: the redactor must hide it)
TOKEN = "ghs_" + "S3cretT0kenValue" * 2
#: a word the data writes where it would forge a workflow command or a mention
INJECTED = "INJECTED"
#: text that would be markup, a link, a mention, a workflow command or our marker if shown raw
FORGERIES = [
    f"x\n::notice title={INJECTED}::y", f"x\r\n::set-output name={INJECTED}::y",
    f"cc @{INJECTED.lower()}", f"<!-- eval-gate:sticky id=default digest={'0' * 16} -->",
    f"[{INJECTED}](https://evil.example)", "a | b\n| --- |", "<img src=x>", "GH-45 #12",
    f"\x1b]8;;https://evil.example\x1b\\{INJECTED}\x1b]8;;\x1b\\", "\x1b]0;title\x07",
    "\x9b31mred",
]  # fmt: skip
#: what starts a terminal sequence (ESC, C1's CSI and OSC); no output line may hold one raw
TERMINAL_SEQUENCE = re.compile("[\x1b\x9b\x9d]")
HOSTILE: list[Any] = [
    None, True, False, 0, -1, 0.5, -0.0, 1e308, 10**30, 10**400, 2**63, 3.0,
    "", " ", "\ud800", "x\u202ey", "@octocat", "::error::x", "a\nb", "\u0085", "NaN", "C",
    [], [1], {}, {"a": 1}, [[[]]], "x" * 5000, *FORGERIES, TOKEN, f"x{TOKEN}y",
]  # fmt: skip
CELLS = ['""', '"a""b"', "-1", "1e400", "nan", "yes", "", "\u0085", "x" * 3000, "9" * 25,
         '"open', "1.5", "TRUE"]  # fmt: skip
ATTRIBUTES = ["", "-1", "1e400", "nan", "x" * 3000, "&amp;", "::error::x", "0", "abc", "9" * 20]
CONFIG: dict[str, Any] = {
    "version": 1, "k": 3, "confidence": 0.95, "interval": "mid-p", "errors": "fail",
    "bound": "interval", "on_inconclusive": "inconclusive", "sequential": False,
    "gates": {
        "threshold": 0.5,
        "pass_rate": {"min": 0.6, "scope": "stimuli"},
        "pass_at_k": [{"min": 0.6, "k": 3}, {"min": "60%", "tag": "critical"}],
        "pass_hat_k": {"k": 3, "min": 0.8},
        "max_flakiness": {"max": 0.34, "scope": "stimuli"},
        "max_ci_half_width": {"max": 0.1, "metric": "pass_rate"},
        "max_regression": [{"max": 0.05, "detectable": 0.1}, {"max": 0.0, "scope": "stimuli"}],
        "min_improvement": [{"min": 0.02, "metric": "pass_hat_k", "k": 3}],
        "metric": [{"name": "bayes_at_n", "min": 0.3}],
    },
}  # fmt: skip
OPTIONS = [[], ["--threshold", "0.5"], ["--min-pass-hat-k", "0.3", "--max-flakiness", "0.4"],
           ["--errors", "exclude"], ["--k", "3"], ["--interval", "jeffreys"]]  # fmt: skip
#: the options that read a fixture (by name) that is not read as its format detects it
READ_WITH = {
    "runs.csv": ("--format", "csv", "--map",
                 "stimulus=case_id,trial=run,passed=ok,score=quality,status=state"),
    "runs.jsonl": ("--format", "jsonl", "--map",
                   "stimulus=case.id,trial=attempt,passed=grade.ok,score=grade.score"),
    "counts.jsonl": ("--format", "counts"),
}  # fmt: skip
COUNTS = [
    {"type": "suite", "schema_version": "1.0", "suite": "qa",
     "categories": {"wrong": 0.0, "right": 1.0}},
    {"suite": "qa", "stimulus": "a", "n": 4, "c": 1, "errors": 1, "skipped": 2,
     "score_sum": 1.5, "categories": {"wrong": 2, "right": 1}, "tags": ["t"],
     "messages": ["boom", {"text": "x", "trial": 2, "file": "run.log", "line": 3}]},
    {"suite": "qa", "stimulus": "b", "n": 3, "c": 3},
]  # fmt: skip


def sources(work: Path) -> list[tuple[Path, tuple[str, ...]]]:
    """Every valid input there is (a counts file written to ``work``), with the options that
    read it."""
    counts = work / "counts.jsonl"
    counts.write_text("".join(json.dumps(row) + "\n" for row in COUNTS))
    paths = [p for p in sorted(FIXTURES.rglob("*")) if p.suffix in KINDS and p.is_file()]
    paths += [*sorted(EXAMPLES.rglob("*.json*")), counts]
    return [(path, READ_WITH.get(path.name, ())) for path in paths]


def mutate_value(value: Any, rng: random.Random) -> Any:
    """``value`` (parsed JSON) with one to four places changed."""
    places: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        places.append(path)
        if len(path) < 12 and isinstance(node, dict):
            for key, item in node.items():
                walk(item, (*path, key))
        elif len(path) < 12 and isinstance(node, list):
            for index, item in enumerate(node[:50]):
                walk(item, (*path, index))

    walk(value, ())
    for _ in range(rng.choice((1, 1, 1, 2, 4))):
        path = rng.choice(places[1:] or places)
        parent = value
        try:
            for step in path[:-1]:
                parent = parent[step]
            key = path[-1]
            roll = rng.random()
            if roll < 0.3:
                parent[key] = copy.deepcopy(rng.choice(HOSTILE))
            elif roll < 0.6:
                parent[key] = _same_type(parent[key], rng)
            elif roll < 0.8:
                del parent[key]
            elif roll < 0.9 and isinstance(parent, list):
                parent.append(copy.deepcopy(parent[key]))
            else:
                parent[key] = [parent[key]] if rng.random() < 0.5 else {"value": parent[key]}
        except (KeyError, IndexError, TypeError, AttributeError, OverflowError):
            pass  # the place is gone after an earlier change
    return value


def _same_type(old: Any, rng: random.Random) -> Any:
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return rng.choice([0, 1, -1, old + 1, old * 1000, 2**40, float(old)])
    if isinstance(old, float):
        return rng.choice([0.0, 1.0, -0.5, 1.5, old * 1e6, 1e-300, 0.9999999999])
    if isinstance(old, str):
        return rng.choice(["", old + "\u0301", old.upper(), old * 3, "[x](y)", "<!-- a -->",
                           "|", "`", "error", "pass", "1"])  # fmt: skip
    return copy.deepcopy(rng.choice(HOSTILE))


def _text(value: Any, rng: random.Random) -> bytes:
    ascii_only = rng.random() < 0.5
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def mutant(path: Path, rng: random.Random) -> bytes:
    """``path``'s content, changed."""
    raw = path.read_bytes()
    kind = KINDS[path.suffix]
    if rng.random() < 0.15:
        return _bytes_changed(raw, rng)
    if kind == "json":
        return _text(mutate_value(json.loads(raw), rng), rng)
    if kind == "jsonl":
        lines: list[Any] = [[json.loads(x)] if x.strip() else x for x in raw.decode().splitlines()]
        records = [i for i, line in enumerate(lines) if isinstance(line, list)]
        for _ in range(rng.randint(1, 3)):
            i = rng.choice(records)
            lines[i] = [mutate_value({"r": lines[i][0]}, rng).get("r", {})]
        parts = [_text(x[0], rng) if isinstance(x, list) else x.encode() for x in lines]
        return b"\n".join(parts) + b"\n"
    if kind == "csv":
        rows = raw.decode().splitlines()
        for _ in range(rng.randint(1, 4)):
            r = rng.randrange(len(rows))
            cells = rows[r].split(",")
            cells[rng.randrange(len(cells))] = rng.choice(CELLS)
            rows[r] = ",".join(cells)
        return ("\n".join(rows) + "\n").encode("utf-8", "surrogatepass")
    if kind == "xml":
        text = raw.decode()
        for _ in range(rng.randint(1, 3)):
            attributes = list(re.finditer(r'(\w+)="([^"]*)"', text))
            if attributes:
                found = rng.choice(attributes)
                value = rng.choice(ATTRIBUTES)
                text = text[: found.start(2)] + value + text[found.end(2) :]
        return text.encode()
    out = io.BytesIO()  # an .eval archive: one JSON member changed
    with zipfile.ZipFile(path) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        names = archive.namelist()
        target = rng.choice([n for n in names if n.endswith(".json")])
        for name in names:
            try:
                data = archive.read(name)
            except NotImplementedError:  # a zstd member: the standard library cannot
                return raw
            if name == target:
                data = _text(mutate_value(json.loads(data), rng), rng)
            new.writestr(name, data)
    return out.getvalue()


def _bytes_changed(data: bytes, rng: random.Random) -> bytes:
    changed = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        i = rng.randrange(len(changed) or 1)
        roll = rng.random()
        if roll < 0.4 and changed:
            changed[i] = rng.choice(b'",:{}[]<>&;\n\r\t0x\\\x00\xff')
        elif roll < 0.7:
            del changed[i : i + rng.randint(1, 20)]
        else:
            j = rng.randrange(len(changed) or 1)
            changed[i:i] = changed[j : j + rng.randint(1, 200)]
    return bytes(changed)


def command(
    rng: random.Random, target: Path, work: Path, original: Path, all_sources: list[Any]
) -> list[str]:
    """A check of ``target`` (sometimes plan or validate), with options, maybe a baseline of
    any format, maybe a mutated configuration."""
    options = rng.choice(OPTIONS)
    args = ["check", str(target), "--json", str(work / "r.json"), "--summary", str(work / "s.md")]
    args += options
    if rng.random() < 0.2:
        args += ["--baseline", str(original)]
    elif rng.random() < 0.15:
        args += ["--baseline", str(rng.choice(all_sources)[0])]
    if rng.random() < 0.3:
        config = copy.deepcopy(CONFIG)
        if rng.random() < 0.9:
            config = mutate_value(config, rng)
        (work / "c.yml").write_bytes(json.dumps(config).encode("utf-8", "surrogatepass"))
        args += ["--config", str(work / "c.yml")]
    roll = rng.random()
    if roll < 0.12:
        plan_options = [o for o in options if o not in ("--errors", "exclude", "--interval")]
        return ["plan", "--pilot", str(target), *[o for o in plan_options if o != "jeffreys"]]
    if roll < 0.2:
        return ["validate", str(target)]
    return args


#: module attributes that decide where a reader takes its fast path or cuts its blocks, set
#: so that these small inputs go through the paths big files take (values the tests use)
SMALL_PIECES: list[tuple[str, str, int]] = [
    ("gate.ingest.csv_arrow", "MIN_BYTES", 0),
    ("gate.ingest.csv_arrow", "_BLOCK", 1 << 10),
    ("gate.ingest.csv_arrow", "_GUARD_SLICE", 97),
    ("gate.ingest.jsonstream", "PIECE_BYTES", 300),
    ("gate.ingest.jsonstream", "BLOCK_BYTES", 512),
    ("gate.ingest.jsonstream", "_SCAN_BYTES", 256),
    ("gate.ingest.native", "PIECE_BYTES", 1000),
    ("gate.ingest.native", "CHUNK_BYTES", 3000),
    ("gate.ingest.tau", "BLOCK_TRIALS", 40),
    ("gate.ingest.tau", "_WAITING_TRIALS", 60),
    ("gate.ingest.junit", "_EMIT_BLOCK", 7),
    ("gate.table.store", "DENSE_FLOOR", 64),
    ("gate.table.store", "WIDE_FLOOR", 8),
    ("gate.table.store", "WIDE_SLOTS", 4),
    ("gate.report.json_report", "STIMULI_PER_PART", 3),
]


def with_small_pieces(run: Callable[[], Any]) -> Any:
    """``run()`` with :data:`SMALL_PIECES` in force, then the defaults back."""
    import importlib

    saved = []
    for module_name, name, value in SMALL_PIECES:
        module = importlib.import_module(module_name)
        saved.append((module, name, getattr(module, name)))
        setattr(module, name, value)
    try:
        return run()
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def corrupt_archive(path: Path) -> bool:
    """True for an archive whose members do not unpack whole (raw bytes changed): a streamed
    reader meets the damage only as far as it has unpacked, so which error it gives first
    (the damaged JSON before, or the codec's) rightly depends on how far each read goes."""
    if path.suffix != ".eval":
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip() is not None
    except Exception:  # a damaged zip or stream; a zstd member, which zipfile cannot check
        return True


def outputs(result: Any, work: Path) -> tuple[Any, ...]:
    """What a run gave: exit code, output, and the report and summary it wrote."""
    written = tuple(
        (work / name).read_bytes() if (work / name).exists() else None
        for name in ("r.json", "s.md")
    )
    return (result.exit_code, result.output, *written)


#: action inputs: the first value of each is valid, the rest valid or hostile
ACTION_INPUTS: dict[str, list[str]] = {
    "config": ["", "c.yml", "missing.yml", "/proc/self/environ", "../x.yml"],
    "format": ["auto", "native", "junit", "csv", "counts", "bogus"],
    "threshold": ["", "0.5", "1.5", "abc", "1e400"],
    "k": ["", "3", "0", "1e9", "99999999999999999999999"],
    "min_pass_hat_k": ["", "0.3", "150%"],
    "max_flakiness": ["", "0.3", "0.6"],
    "max_ci_half_width": ["", "0.1", "-1"],
    "bound": ["", "interval", "estimate", "bogus"],
    "confidence": ["", "0.95", "0.995", "1", "0.5"],
    "errors": ["", "fail", "exclude", "bogus"],
    "max_regression": ["", "0.05", "-0.1"],
    "on_inconclusive": ["", "fail", "pass", "bogus"],
    "sequential": ["", "true", "x"],
    "baseline": ["", "original", "missing.jsonl"],
    "report": ["", "out.json", "m0.json", "/dev/null", "../escape.json"],
    "summary": ["", "false", "x"],
    "comment": ["", "always", "on-failure", "on-change", "recreate", "off", "never"],
    "comment_id": ["", "gate-2", "x y", "<!--", "a" * 300],
    "fail_on": ["", "errors", "never", "bogus"],
    "github_token": ["", TOKEN + "\r\nX: y", "a b", TOKEN + "\udcff", TOKEN + "€"],
    "suite": ["", "`code`", "@octocat", "x" * 500],
}
EVENT: dict[str, Any] = {
    "action": "synchronize",
    "number": 7,
    "pull_request": {
        "number": 7,
        "head": {"repo": {"full_name": "o/fork", "fork": True}, "sha": "a" * 40},
        "base": {"repo": {"full_name": "o/r"}, "ref": "main", "sha": "b" * 40},
    },
    "repository": {"full_name": "o/r", "default_branch": "main"},
}


def action_inputs(rng: random.Random, work: Path, original: Path) -> dict[str, str]:
    """Up to six of the action's inputs, each valid or hostile; a mutated configuration
    written to ``work/c.yml`` for the ``config`` input to name."""
    (work / "c.yml").write_bytes(json.dumps(mutate_value(copy.deepcopy(CONFIG), rng)).encode(
        "utf-8", "surrogatepass"))  # fmt: skip
    chosen = {}
    for name in rng.sample(sorted(ACTION_INPUTS), rng.randint(0, 6)):
        value = ACTION_INPUTS[name][0] if rng.random() < 0.5 else rng.choice(ACTION_INPUTS[name])
        chosen[name] = f"original{original.suffix}" if value == "original" else value
    return chosen


def action_run(
    runner: CliRunner, rng: random.Random, target: Path, work: Path, original: Path
) -> tuple[Any, str | None]:
    """``eval-gate action --dry-run`` on ``target`` in the workspace ``work``, with random
    inputs, a mutated event and a token in the environment; the result, and why the token
    shows if it does."""
    from gate.github.cli import action_command

    event = mutate_value(copy.deepcopy(EVENT), rng) if rng.random() < 0.7 else EVENT
    (work / "event.json").write_bytes(json.dumps(event).encode("utf-8", "surrogatepass"))
    shutil.copy(original, work / f"original{original.suffix}")
    args = ["--dry-run", "--input", f"results={target.name}"]
    for name, value in action_inputs(rng, work, original).items():
        args += ["--input", f"{name}={value}"]
    env = {
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_EVENT_PATH": str(work / "event.json"),
        "GITHUB_EVENT_NAME": rng.choice(["pull_request", "push", "pull_request_target", ""]),
        "GITHUB_REPOSITORY": rng.choice(["o/r", "", "o/r/x"]),
        "GITHUB_STEP_SUMMARY": None,
        "GITHUB_OUTPUT": None,
        "INPUT_GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # a dry run calls nothing
    }
    here = os.getcwd()
    before = files_of(work)
    os.chdir(work)
    try:
        result = runner.invoke(action_command, args, env=env, catch_exceptions=True)
    finally:
        os.chdir(here)
    secret = TOKEN[4:20]
    shown = ["the output"] if secret in result.output else []
    shown += [f.name for f in written(work, before) if secret in f.read_text("utf-8", "replace")]
    return result, f"the token shows in {', '.join(shown)}" if shown else None


def files_of(folder: Path) -> dict[Path, tuple[int, int]]:
    """Each file in ``folder`` and its modification time and size (for :func:`written`)."""
    return {f: (f.stat().st_mtime_ns, f.stat().st_size) for f in folder.iterdir() if f.is_file()}


def written(folder: Path, before: dict[Path, tuple[int, int]]) -> list[Path]:
    """The files of ``folder`` made or changed since ``before`` (:func:`files_of`): what a run
    wrote, not the inputs (which may hold the token: it is among the hostile values)."""
    return [f for f, stamp in files_of(folder).items() if before.get(f) != stamp]


#: a run still going after this long is stopped and reported as hung
HANG_SECONDS = 60


def _hung(_signal: int, _frame: Any) -> None:
    raise TimeoutError(f"hung: still running after {HANG_SECONDS} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument(
        "--differential",
        action="store_true",
        help="run each input again with the readers' blocks small (their big-file paths): "
        "a difference in exit code, output, report or summary is a finding",
    )
    parser.add_argument(
        "--action",
        action="store_true",
        help="run the action's dry run instead (random inputs, a mutated event payload, a "
        "token in INPUT_GITHUB_TOKEN): the token in any output or file is a finding",
    )
    parser.add_argument(
        "--publish",
        action="store_true",
        help="run the action for real against a fake GitHub on loopback (tests/hostile/"
        "mutate_publish.py: API faults, earlier comments, hostile names): the token anywhere "
        "but the Authorization header, an exit code not the verdict's, markup from the data "
        "in the summary or a comment, or a second sticky comment is a finding",
    )
    given = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _hung)
    fake = None
    if given.publish:
        from tests.hostile import mutate_publish

        fake = mutate_publish.start_fake()
    rng = random.Random(given.seed)
    runner = CliRunner()
    work = Path(tempfile.mkdtemp(prefix="eval-gate-mutate-"))
    kept = Path("mutations")
    all_sources = sources(work)
    codes: dict[int, int] = {}
    findings = 0
    started = time.monotonic()
    for run in range(given.runs):
        original, fixed = rng.choice(all_sources)
        target = work / f"m{run % 5}{original.suffix}"
        # The action's own inputs are mutated too: half its runs read a valid file.
        keep = (given.action or given.publish) and rng.random() < 0.5
        target.write_bytes(original.read_bytes() if keep else mutant(original, rng))
        if given.publish and rng.random() < 0.1:
            target = work / "many.jsonl"
            mutate_publish.write_many(target, rng)
        args = command(rng, target, work, original, all_sources) + list(fixed)
        for name in ("r.json", "s.md"):
            (work / name).unlink(missing_ok=True)
        began = time.monotonic()
        leak = None
        # A run that hangs (a FIFO opened to write waited for a reader) would stop the whole
        # fuzzing with no finding: the alarm raises in it instead, and it is reported.
        signal.alarm(HANG_SECONDS)
        if given.action:
            result, leak = action_run(runner, rng, target, work, original)
            args = ["action", "--dry-run", f"(results={target.name})"]
        elif fake is not None:
            inputs = action_inputs(rng, work, original)
            args = ["action", *(f"{name}={value!r}" for name, value in inputs.items())]
            try:
                code, log, leak = mutate_publish.publish_run(
                    fake, rng, target, work, original, inputs, inputs.get("github_token", TOKEN)
                )
                result = SimpleNamespace(exit_code=code, output=log, exception=None)
            except TimeoutError as error:  # the alarm, outside the action's own handler
                result = SimpleNamespace(exit_code=2, output="", exception=error)
        else:
            result = runner.invoke(cli, args, catch_exceptions=True)
        signal.alarm(0)
        took = time.monotonic() - began
        differs = None
        if (
            not (given.action or given.publish)
            and given.differential
            and isinstance(result.exception, SystemExit | None)
            and not corrupt_archive(target)
        ):
            # The same input through the fast paths' small blocks must give the same.
            first = outputs(result, work)
            for name in ("r.json", "s.md"):
                (work / name).unlink(missing_ok=True)
            again = with_small_pieces(
                lambda args=args: runner.invoke(cli, args, catch_exceptions=True)
            )
            second = outputs(again, work)
            if first != second:
                parts = ("exit code", "output", "JSON report", "summary")
                differs = [part for part, a, b in zip(parts, first, second, strict=True) if a != b]
        codes[result.exit_code] = codes.get(result.exit_code, 0) + 1
        finding = None
        if leak:
            finding = leak
        elif result.exception is not None and not isinstance(result.exception, SystemExit):
            finding = "".join(traceback.format_exception(result.exception))[-1500:]
        elif "internal error" in result.output or "Traceback" in result.output:
            finding = result.output[-1500:]
        elif result.exit_code not in (0, 1, 2, 3):
            finding = f"exit code {result.exit_code}"
        elif TERMINAL_SEQUENCE.search(result.output):
            line = next(x for x in result.output.splitlines() if TERMINAL_SEQUENCE.search(x))
            finding = f"a raw terminal sequence in the output: {line[:200]!r}"
        elif took > 10:
            finding = f"{took:.1f} s"
        elif differs:
            finding = f"read through small blocks, the {', '.join(differs)} differ"
        if finding:
            findings += 1
            kept.mkdir(exist_ok=True)
            keep = kept / f"{given.seed}-{run}{original.suffix}"
            keep.write_bytes(target.read_bytes())
            event = work / "wf" / "event.json"  # --publish: the payload, mutated or not
            if fake is not None and event.is_file():
                (kept / f"{given.seed}-{run}.event.json").write_bytes(event.read_bytes())
            print(f"--- {keep} (from {original.name}): eval-gate {' '.join(args)}\n{finding}\n")
    seconds = time.monotonic() - started
    print(f"seed {given.seed}: {given.runs} runs in {seconds:.0f} s, exit codes "
          f"{dict(sorted(codes.items()))}, {findings} findings")  # fmt: skip
    if fake is not None:
        fake.stop()
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
