"""A generated corpus of hostile inputs, each run through a real entry point under limits.

Nothing here is stored: every probe builds its files in a temporary folder (bombs are written
streaming and compressed, so a 200 MiB payload costs 200 KB of disk), then runs ``eval-gate``
(``gate.cli``) or the action's entrypoint (``python -m gate.github``) in a subprocess under
``RLIMIT_AS`` = 2 GiB and a 30 s timeout, and reports exit code, output, time and peak memory.

``python tests/hostile/corpus.py`` runs every probe and prints a table (time, peak RSS).
"""

from __future__ import annotations

import bz2
import io
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 2 * 1024**3
TIME_LIMIT = 30.0
#: looks like an installation token; no output of any probe may contain it in any form.
TOKEN = "ghs_hostileCorpusToken0123456789abcdefXY"
MIB = 1024**2

# The child sets its own address-space limit (no preexec_fn: the tests run threads), then
# runs the CLI or the action's entrypoint as their console scripts do.
BOOT = """
import resource, runpy, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
entry, sys.argv = sys.argv[2], ["eval-gate", *sys.argv[3:]]
if entry == "cli":
    from gate.cli import main
    main()
else:
    runpy.run_module("gate.github", run_name="__main__")
"""


@dataclass
class Invocation:
    """How to run a probe: the entry point, its arguments, folder and environment."""

    entry: str  # "cli" or "action"
    args: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    #: files the run writes whose content must hold no token (summary, outputs, report).
    sinks: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class Probe:
    name: str
    build: Callable[[Path], Invocation]
    exit_code: int
    #: a fragment the run must print on stderr (or, for the action, in the job summary).
    says: str


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    peak_bytes: int
    sinks: dict[str, str]


def run(invocation: Invocation, timeout: float = TIME_LIMIT) -> Result:
    """Run in a subprocess with RLIMIT_AS and a timeout; measure time and peak RSS."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(ROOT),
        # One BLAS thread: each thread reserves address space the limit would count.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "GITHUB_TOKEN": TOKEN,
        **invocation.env,
    }
    command = [sys.executable, "-s", "-P", "-c", BOOT, str(MEMORY_LIMIT), invocation.entry]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(
            [*command, *invocation.args],
            cwd=invocation.cwd,
            env=env,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        seconds = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "backslashreplace")
        stderr = err.read().decode("utf-8", "backslashreplace")
    sinks = {
        str(path): path.read_text("utf-8", "backslashreplace")
        for path in invocation.sinks
        if path.is_file()
    }
    return Result(process.returncode, stdout, stderr, seconds, usage.ru_maxrss * 1024, sinks)


# -- building blocks ---------------------------------------------------------------------------


def trial_records(stimuli: int = 3, trials: int = 3) -> list[dict[str, object]]:
    return [
        {"suite": "s", "stimulus": f"s{s}", "trial": t, "passed": True}
        for s in range(stimuli)
        for t in range(trials)
    ]


def write_jsonl(path: Path, records: list[dict[str, object]] | None = None) -> Path:
    records = trial_records() if records is None else records
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def cli(folder: Path, *args: str, env: dict[str, str] | None = None) -> Invocation:
    # A gate every readable input passes: the probes are about reading, so a file that is
    # read correctly exits 0 (without it, the default gate could call a small file
    # inconclusive, exit 3).
    return Invocation("cli", ["check", "--min-pass-rate", "0", *args], folder, env or {})


INSPECT_HEADER = {
    "version": 2,
    "status": "success",
    "eval": {"task": "t", "model": "m", "scorers": [{"name": "match"}]},
    "results": {"scores": [{"name": "match"}]},
}


def _spaces(size: int) -> Iterator[bytes]:
    block = b" " * MIB
    for _ in range(size // MIB):
        yield block


def _zeros_array(size: int) -> Iterator[bytes]:
    yield b"["
    block = b"0," * (MIB // 2)
    for _ in range(size // MIB):
        yield block
    yield b"0]"


def _zeros_in_one_sample(size: int) -> Iterator[bytes]:
    """Summaries whose one sample holds an array of ``size`` bytes of zeros."""
    yield b'[{"id": "a", "epoch": 1, "zeros": '
    yield from _zeros_array(size)
    yield b"}]"


def eval_archive(
    path: Path, summaries: Iterator[bytes], method: int = zipfile.ZIP_DEFLATED
) -> Path:
    """An Inspect .eval whose summaries.json is streamed in with the given method."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(INSPECT_HEADER))
        info = zipfile.ZipInfo("summaries.json")
        info.compress_type = method
        with archive.open(info, "w", force_zip64=True) as member:
            for block in summaries:
                member.write(block)
    return path


def lying_archive(path: Path, method: int, size: int) -> Path:
    """An .eval whose summaries.json unpacks to ``size`` zero bytes but declares 100."""
    if method == 93:
        import zstandard

        compressor = zstandard.ZstdCompressor(level=3).compressobj()
        raw = b"".join(compressor.compress(bytes(MIB)) for _ in range(size // MIB))
        raw += compressor.flush()
    elif method == zipfile.ZIP_BZIP2:
        packer = bz2.BZ2Compressor(1)
        raw = b"".join(packer.compress(bytes(MIB)) for _ in range(size // MIB)) + packer.flush()
    else:
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        raw = b"".join(packer.compress(bytes(MIB)) for _ in range(size // MIB)) + packer.flush()
    header = json.dumps(INSPECT_HEADER).encode()
    entries = [
        ("header.json", 0, header, len(header), zlib.crc32(header)),
        ("summaries.json", method, raw, 100, 0),
    ]
    body = io.BytesIO()
    central = io.BytesIO()
    for name, kind, data, declared, crc in entries:
        offset = body.tell()
        encoded = name.encode()
        body.write(
            struct.pack(
                "<4s5H3I2H",
                b"PK\x03\x04",
                20,
                0,
                kind,
                0,
                0,
                crc,
                len(data),
                declared,
                len(encoded),
                0,
            )
        )
        body.write(encoded + data)
        central.write(
            struct.pack(
                "<4s6H3I5H2I",
                b"PK\x01\x02",
                20,
                20,
                0,
                kind,
                0,
                0,
                crc,
                len(data),
                declared,
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + encoded
        )
    start = body.tell()
    directory = central.getvalue()
    end = struct.pack(
        "<4s4H2IH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(directory), start, 0
    )
    path.write_bytes(body.getvalue() + directory + end)
    return path


# -- the action --------------------------------------------------------------------------------


def action(
    folder: Path,
    results: str,
    *,
    inputs: dict[str, str] | None = None,
    event: bytes | None = b'{"repository": {"full_name": "octo/x"}}',
    event_path: Path | None = None,
    output: Path | None = None,
    summary: Path | None = None,
    env: dict[str, str] | None = None,
    token: str = TOKEN,
) -> Invocation:
    """The action's entrypoint as the runner starts it, on workspace ``folder/ws``."""
    workspace = folder / "ws"
    workspace.mkdir(exist_ok=True)
    commands = folder / "fc"
    commands.mkdir(exist_ok=True)
    output = output or commands / "output"
    summary = summary or commands / "summary"
    for path in (output, summary):
        if not path.exists():
            path.touch()
    if event_path is None:
        event_path = folder / "event.json"
        event_path.write_bytes(event or b"{}")
    given = {"results": results, "comment": "off", "github_token": token, **(inputs or {})}
    variables = {f"INPUT_{name.upper()}": value for name, value in given.items()}
    variables.update(
        {
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_REPOSITORY": "octo/x",
            "GITHUB_API_URL": "http://127.0.0.1:9",
            **(env or {}),
        }
    )
    report = workspace / given.get("report", "eval-gate-report.json")
    return Invocation("action", [], workspace, variables, [output, summary, report])


def environ_copy(token: str = TOKEN) -> bytes:
    """What /proc/self/environ holds in a runner: NUL-separated NAME=VALUE, the token too."""
    variables = {"PATH": "/usr/bin", "INPUT_GITHUB_TOKEN": token, "GITHUB_TOKEN": token}
    return b"\0".join(f"{k}={v}".encode() for k, v in variables.items()) + b"\0"


# -- the probes --------------------------------------------------------------------------------


def _fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def _link(folder: Path, name: str, target: str | Path) -> Path:
    path = folder / name
    os.symlink(target, path)
    return path


def _config(folder: Path, text: str | bytes, *args: str) -> Invocation:
    config = folder / "gates.yml"
    config.write_bytes(text.encode() if isinstance(text, str) else text)
    return cli(folder, str(write_jsonl(folder / "r.jsonl")), "--config", str(config), *args)


def _billion_laughs_yaml() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n, name in enumerate("bcdefghi"):
        previous = "abcdefghi"[n]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _nested_folder(folder: Path) -> Invocation:
    data = folder / "d"
    (data / "sub").mkdir(parents=True)
    write_jsonl(data / "sub" / "results.jsonl")
    _link(data, "loop", ".")  # d/loop -> d
    _link(data / "sub", "up", "..")  # d/sub/up -> d
    _link(data, "usr", "/usr")
    _link(data, "environ.jsonl", "/proc/self/environ")  # a link out of the folder: skipped
    return cli(folder, "d")


def _glob_through_loops(folder: Path) -> Invocation:
    _nested_folder(folder)
    (folder / "d" / "environ.jsonl").unlink()
    return cli(folder, "d/**/*.jsonl")


def _glob_matching_environ(folder: Path) -> Invocation:
    _nested_folder(folder)
    return cli(folder, "d/*.jsonl")  # names the link to /proc/self/environ: refused, not skipped


def _named_like_a_command(folder: Path) -> Invocation:
    path = write_jsonl(folder / "x\n::error title=pwn::owned\r.jsonl")
    return cli(folder, str(path))


def _validate_with_a_link_named_like_a_command(folder: Path) -> Invocation:
    (folder / "d").mkdir()
    write_jsonl(folder / "d" / "r.jsonl")
    _link(folder / "d", "x\n::error title=pwn::y.jsonl", "/etc/hostname")  # skipped: a warning
    return Invocation("cli", ["validate", "d"], folder)


def _csv_field(folder: Path) -> Invocation:
    path = folder / "field.csv"
    path.write_text('stimulus,passed\n"' + "x" * 200_000 + '",true\n')
    return cli(folder, str(path))


def _csv_columns(folder: Path) -> Invocation:
    path = folder / "wide.csv"
    path.write_text("stimulus,passed," + ",".join(f"c{i}" for i in range(100_000)) + "\n")
    return cli(folder, str(path))


def _csv_long_trial(folder: Path) -> Invocation:
    path = folder / "trial.csv"
    path.write_text("stimulus,trial,passed\ns," + "9" * 5000 + ",yes\n")
    return cli(folder, str(path))


def _repeated_csv(
    folder: Path, name: str, start: bytes, chunk: bytes, times: int, end: bytes
) -> Invocation:
    """A CSV file of ``start``, ``chunk`` written ``times`` times and ``end``: tens of
    megabytes of one shape, written a chunk at a time."""
    path = folder / name
    with path.open("wb") as handle:
        handle.write(start)
        for _ in range(times):
            handle.write(chunk)
        handle.write(end)
    return cli(folder, str(path), "--format", "csv")


def _csv_long_line(folder: Path) -> Invocation:
    return _repeated_csv(folder, "long.csv", b"stimulus,passed\ns,", b"x" * MIB, 70, b"\n")


def _csv_blank_lines(folder: Path) -> Invocation:
    # 30 MiB of blank lines: the csv module took a second a megabyte to leave them out.
    return _repeated_csv(folder, "blank.csv", b"stimulus,passed\n", b"\n" * MIB, 30, b"s,yes\n")


def _csv_quote_open_for_lines(folder: Path) -> Invocation:
    # A quoted cell open over 8 million short lines: holding them for 16 MiB took 1.3 GB.
    return _repeated_csv(
        folder, "open.csv", b'stimulus,passed\ns,"', b"x\n" * (MIB // 2), 16, b'"\n'
    )


def _csv_past_the_trials_limit(folder: Path) -> Invocation:
    # 4-byte rows: 256 MiB of them are 64 million trials kept one by one, 4-6 GB.
    path = folder / "tiny.csv"
    path.write_text("stimulus,passed\n" + "s,1\n" * 1_000_001)
    limit = {"EVAL_GATE_MAX_TRIALS": "1000000"}
    return cli(folder, str(path), "--format", "csv", env=limit)


def _jsonl_long_line(folder: Path) -> Invocation:
    path = folder / "long.jsonl"
    with path.open("w") as handle:
        handle.write('{"stimulus": "s", "trial": 0, "passed": true, "message": "')
        for _ in range(70):
            handle.write("x" * MIB)
        handle.write('"}\n')
    return cli(folder, str(path))


def _junit(folder: Path, body: Callable[[io.TextIOBase], None], name: str = "j.xml") -> Path:
    path = folder / name
    with path.open("w") as handle:
        handle.write('<?xml version="1.0"?>\n<testsuites><testsuite name="s">')
        body(handle)
        handle.write("</testsuite></testsuites>\n")
    return path


def _junit_attribute(folder: Path) -> Invocation:
    def body(handle: io.TextIOBase) -> None:
        handle.write('<testcase classname="c" name="t"><failure message="')
        for _ in range(50):
            handle.write("m" * MIB)
        handle.write('"/></testcase>')

    return cli(folder, str(_junit(folder, body)))


def _junit_text(folder: Path) -> Invocation:
    def body(handle: io.TextIOBase) -> None:
        handle.write('<testcase classname="c" name="t"><failure>first line\n')
        for _ in range(50):
            handle.write("traceback line\n" * (MIB // 15))
        handle.write("</failure></testcase>")

    return cli(folder, str(_junit(folder, body)))


def _junit_deep(folder: Path) -> Invocation:
    def body(handle: io.TextIOBase) -> None:
        handle.write('<testcase name="t">' * 100_000 + "</testcase>" * 100_000)

    return cli(folder, str(_junit(folder, body)))


def _xml_laughs(folder: Path) -> Invocation:
    entities = ['<!ENTITY a "lollollollollollollollollollol">']
    for n in range(1, 10):
        entities.append(f'<!ENTITY {chr(97 + n)} "' + f"&{chr(96 + n)};" * 10 + '">')
    path = folder / "laughs.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE testsuites [' + "".join(entities) + "]>\n"
        '<testsuites><testsuite name="s"><testcase name="t"><failure message="&j;"/>'
        "</testcase></testsuite></testsuites>\n"
    )
    return cli(folder, str(path))


def _xml_encoding(name: str) -> Callable[[Path], Invocation]:
    """A JUnit report whose XML declaration names ``name`` (pyexpat asks Python's codecs
    for an encoding it does not know: a LookupError or a ValueError, not an ExpatError)."""

    def build(folder: Path) -> Invocation:
        path = folder / "encoded.xml"
        path.write_bytes(
            f'<?xml version="1.0" encoding="{name}"?>\n'.encode()
            + b'<testsuite name="s"><testcase name="t"/></testsuite>\n'
        )
        return cli(folder, str(path))

    return build


def _deep_document(folder: Path) -> Invocation:
    path = folder / "deep.json"
    path.write_text('{"schema_version": "1.0", "stimuli": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return cli(folder, str(path), "--format", "native")


def _deep_line(folder: Path) -> Invocation:
    path = folder / "deep.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text('{"stimulus": "s", "trial": 0, "passed": true, "metadata": ' + deep + "}\n")
    return cli(folder, str(path))


def _deep_metadata(folder: Path) -> Invocation:
    # Between orjson's read limit (1024) and the depth its writer allows (254).
    value = '{"a": ' * 300 + "1" + "}" * 300
    lines = [json.dumps({"stimulus": f"s{i}", "trial": 0, "passed": True}) for i in range(5)] + [
        '{"stimulus": "deep", "trial": 0, "passed": true, "metadata": ' + value + "}"
    ]
    path = folder / "deep-metadata.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return cli(folder, str(path))


def _long_integer(folder: Path) -> Invocation:
    path = folder / "digits.jsonl"
    path.write_text(
        '{"stimulus": "s", "trial": 0, "passed": true, "metadata": {"n": ' + "7" * 5000 + "}}\n"
    )
    return cli(folder, str(path))


def _surrogates(folder: Path) -> Invocation:
    records = trial_records(2, 3)
    records[0].update(stimulus="bad \ud800 name", passed=False, message="lone \udfff here")
    path = folder / "surrogates.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    invocation = cli(
        folder,
        str(path),
        "--summary",
        "summary.md",
        "--json",
        "report.json",
        "--min-pass-rate",
        "0.99",
    )
    invocation.sinks = [folder / "summary.md", folder / "report.json"]
    return invocation


def _tau_bench_orjson_refuses(folder: Path) -> Invocation:
    """200,000 tau-bench results: the first half with a key written with an escaped colon
    (it put the duplicate-key count in doubt), the second with a lone surrogate (orjson
    refuses it). Element by element, either took over 5 minutes."""
    path = folder / "tau.json"
    with path.open("w", encoding="ascii") as handle:
        handle.write("[")
        for i in range(200_000):
            info = '{"at\\u003a": 1}' if i < 100_000 else '{"note": "cut \\ud83d"}'
            comma = ", " if i else ""
            handle.write(f'{comma}{{"task_id": {i % 1000}, "reward": 1.0, "info": {info}}}')
        handle.write("]")
    return cli(folder, str(path), "--format", "tau-bench")


def _advice_on_30k_stimuli(folder: Path) -> Invocation:
    """30,000 stimuli as counts, each with its own 1,000 to 10⁶ trials, the suite's pass rate
    on the target: an inconclusive gate whose advice simulated 200 runs of every stimulus
    on a posterior summed over 90,000 distinct counts (over a minute); now seconds."""
    path = folder / "counts.jsonl"
    with path.open("w", encoding="ascii") as handle:
        for i in range(30_000):
            n = 1_000 + (i * 7_919) % 999_000
            handle.write(f'{{"stimulus": "s{i}", "n": {n}, "c": {round(n * 0.8)}}}\n')
    args = ["--format", "counts", "--min-pass-rate", "0.8", "--bound", "interval", "--k", "1"]
    return Invocation("cli", ["check", str(path), *args], folder)


def _every_stimulus_its_own_suite(folder: Path, suites: int) -> Path:
    """A counts file of ``suites`` rows, each in a suite of its own."""
    path = folder / "counts.jsonl"
    with path.open("w", encoding="ascii") as handle:
        for i in range(suites):
            handle.write(f'{{"suite": "u{i}", "stimulus": "s", "n": 3, "c": 1}}\n')
    return path


def _counts_gated(folder: Path, rows: Iterable[tuple[int, int]], gate: str) -> Invocation:
    """A check of a counts file of stimuli s0, s1, ... with these (n, c), under one gate
    given as YAML (``gates:`` entry)."""
    path = folder / "counts.jsonl"
    with path.open("w", encoding="ascii") as handle:
        for i, (n, c) in enumerate(rows):
            handle.write(f'{{"stimulus": "s{i}", "n": {n}, "c": {c}}}\n')
    config = folder / "gates.yml"
    config.write_text(f"gates:\n  {gate}\n")
    args = ["--format", "counts", "--config", str(config)]
    return Invocation("cli", ["check", str(path), *args], folder)


def _advice_on_100k_stimuli_each_gated(folder: Path) -> Invocation:
    """100,000 stimuli as counts, 100 trials each and 55 to 100 passes, gated one by one
    (pass rate ≥ 0.5, scope: stimuli): 10,870 of them undecided, so the gate is inconclusive
    and its advice simulates the whole family at each of 41 steps of m for the per-stimulus
    answers, and 20 more for the gate's own (34 s; the binomial draws were most of it)."""
    rows = ((100, 55 + (i * 7_919) % 46) for i in range(100_000))
    return _counts_gated(folder, rows, "pass_rate: {min: 0.5, bound: lower, scope: stimuli}")


def _uneven_rows(stimuli: int, lowest: float, span: float) -> Iterator[tuple[int, int]]:
    """(n, c) of stimuli each with its own 100 to 999 trials, pass rates spread over
    [lowest, lowest + span)."""
    return (
        (n, min(n, round(n * (lowest + span * ((i * 104_729) % 1_000) / 1_000))))
        for i, n in ((i, 100 + (i * 7_919) % 900) for i in range(stimuli))
    )


def _advice_on_1k_stimuli_each_gated_each_its_own_n(folder: Path) -> Invocation:
    """1,000 stimuli as counts, each with its own 100 to 999 trials, gated one by one (pass
    rate ≥ 0.5, scope: stimuli), a few undecided: each step of the advice had as many
    distinct (n, c) as stimulus-runs (a million), each a root search for its bounds (65 s,
    583 MB; 372 s and 1.6 GB at 10,000 stimuli); now thresholds in c per distinct n."""
    rows = _uneven_rows(1_000, 0.55, 0.45)
    return _counts_gated(folder, rows, "pass_rate: {min: 0.5, bound: lower, scope: stimuli}")


def _half_width_advice_on_stimuli_each_its_own_n(folder: Path) -> Invocation:
    """3,000 stimuli as counts, each with its own 100 to 999 trials, each stimulus's interval
    half-width gated (≤ 0.05, scope: stimuli), most undecided: each step of the advice
    sorted its two million stimulus-runs into distinct (n, c) and solved the bounds of each
    (6,000 at m = 1, 140,000 at m = 283): 64 s, 330 MB (130 s at 10,000 stimuli); now two
    thresholds in c per distinct n, 11 s."""
    gate = "max_ci_half_width: {max: 0.05, metric: pass_rate, scope: stimuli}"
    return _counts_gated(folder, _uneven_rows(3_000, 0.3, 0.65), gate)


def _pass_hat_k_half_width_advice_on_stimuli_each_its_own_n(folder: Path) -> Invocation:
    """10,000 stimuli of 100 to 999 trials each gated on the half-width of pass^3 (≤ 0.1),
    some undecided: each step of the advice decided its distinct (n, c) pair by pair, as
    for every metric but the pass rate until their shape was tested (70 s, 359 MB); now a
    peak and two thresholds in c per distinct n, 11 s."""
    gate = "max_ci_half_width: {max: 0.1, metric: pass_hat_k, k: 3, scope: stimuli}"
    return _counts_gated(folder, _uneven_rows(10_000, 0.55, 0.45), gate)


def _pass_at_k_advice_on_stimuli_each_its_own_n(folder: Path, stimuli: int = 2_000) -> Invocation:
    """2,000 stimuli of 100 to 999 trials each, gated one by one on pass@3 ≥ 0.9 (on the
    interval), some undecided: each step of the advice computed the unbiased pass@3
    estimate of every stimulus-run (two million), though only the few that Holm could
    reject need one: 43 s, 278 MB (the same at 5,000 stimuli); now 20 s, 213 MB."""
    gate = "pass_at_k: {min: 0.9, k: 3, bound: lower, scope: stimuli}"
    return _counts_gated(folder, _uneven_rows(stimuli, 0.55, 0.45), gate)


def _sequential_advice_on_1k_stimuli_each_its_own_n(
    folder: Path,
    gate: str = "pass_rate: {min: 0.5, bound: lower, scope: stimuli}",
    seed: int | None = None,
) -> Invocation:
    """1,000 stimuli of 5 to 44 trials each (native JSONL, in trial order), gated one by one
    on their confidence sequences (pass rate ≥ 0.5, scope: stimuli, --sequential), most
    undecided: the advice searched each of ~900 distinct tallies alone, a root search of the
    sequence's bounds per (passes, blocks) pair at every m it tried (71 s; 157 s at 10,000
    stimuli); now the searches run in step on thresholds in the passes per number of blocks.
    With the half-width gate (≤ 0.05) and passes drawn at random (``seed``; the spread of
    tallies makes the advice search far), the per-pair root searches stayed until its peak
    in the passes was tested: 59 s; now a peak and two thresholds per number of blocks,
    9 s."""
    draw = None if seed is None else random.Random(seed)
    path = folder / "results.jsonl"
    with path.open("w", encoding="ascii") as handle:
        handle.write('{"type": "suite", "schema_version": "1.0", "suite": "s"}\n')
        for i in range(1_000):
            rate = 60 + (i * 104_729) % 1_000 * 35 // 1_000  # percent, 60 to 94
            for t in range(5 + (i * 7_919) % 40):
                if draw is None:
                    passed = "true" if (i * 37 + t * 61) % 100 < rate else "false"
                else:
                    passed = "true" if draw.random() * 100 < rate else "false"
                handle.write(f'{{"stimulus": "s{i}", "trial": {t}, "passed": {passed}}}\n')
    config = folder / "gates.yml"
    config.write_text(f"gates:\n  {gate}\n")
    return Invocation("cli", ["check", str(path), "--config", str(config), "--sequential"], folder)


def _advice_on_paired_stimuli_each_its_own_n(
    folder: Path, stimuli: int = 500, spread: int = 100
) -> Invocation:
    """500 paired stimuli as counts, each with its own 5 to 104 trials, the candidate 4
    points worse on each, gated one by one against the baseline (max_regression 0, scope:
    stimuli: Holm on Fisher's exact test): nothing shown worse, 78 undecided, so the advice
    simulates half a million stimulus-runs at each of a dozen m. Fisher's exact test was a
    Python call per table in doubt: 49 s here (43 s at 3,000 stimuli of 5 to 44 trials); now
    Holm decides on vectorised float p-values, the exact test only at a Holm level (5 s)."""
    base, candidate = folder / "base.jsonl", folder / "candidate.jsonl"
    with base.open("w", encoding="ascii") as b, candidate.open("w", encoding="ascii") as c:
        for i in range(stimuli):
            n = 5 + (i * 7_919) % spread
            rate = 0.6 + 0.35 * ((i * 104_729) % 1_000) / 1_000
            b.write(f'{{"stimulus": "s{i}", "n": {n}, "c": {round(n * rate)}}}\n')
            c.write(f'{{"stimulus": "s{i}", "n": {n}, "c": {round(n * (rate - 0.04))}}}\n')
    config = folder / "gates.yml"
    config.write_text("gates:\n  max_regression: {max: 0, scope: stimuli}\n")
    args = ["--baseline", str(base), "--format", "counts", "--config", str(config)]
    return Invocation("cli", ["check", str(candidate), *args], folder)


def _comparison_of_a_billion_trials(folder: Path) -> Invocation:
    """Two stimuli of 10^9 trials a side as counts, one 10 points worse, gated one by one
    against the baseline: Fisher's test past 2,000 trials summed every term in logs (4·10^8
    of them: over 120 s and 19 GB), and Holm's float recurrence stepped through them; now
    the terms within reach of the mode, and the recurrence only for small tables (1 s)."""
    base, candidate = folder / "base.jsonl", folder / "candidate.jsonl"
    base.write_text(
        '{"stimulus": "a", "n": 1000000000, "c": 500000000}\n'
        '{"stimulus": "b", "n": 1000000000, "c": 900000000}\n'
    )
    candidate.write_text(
        '{"stimulus": "a", "n": 1000000000, "c": 400000000}\n'
        '{"stimulus": "b", "n": 1000000000, "c": 900000000}\n'
    )
    config = folder / "gates.yml"
    config.write_text("gates:\n  max_regression: {max: 0, scope: stimuli}\n")
    args = ["--baseline", str(base), "--format", "counts", "--config", str(config)]
    return Invocation("cli", ["check", str(candidate), *args], folder)


def _document(folder: Path, name: str, document: object, *args: str) -> Invocation:
    path = folder / name
    path.write_text(json.dumps(document))
    return cli(folder, str(path), *args)


HUGE = 10**400  # json.dumps writes all its digits: beyond the float range


def _inspect_log(score: object = "C", **header: object) -> dict[str, object]:
    return {
        **INSPECT_HEADER,
        **header,
        "samples": [{"id": "a", "epoch": 1, "scores": {"match": {"value": score}}}],
    }


def _promptfoo(result: dict[str, object]) -> dict[str, object]:
    base = {"testCase": {"vars": {"q": "x"}}, "success": True, "score": 1, "testIdx": 0}
    return {"evalId": "e", "results": {"version": 3, "results": [{**base, **result}]}}


def _promptfoo_line(result: dict[str, object]) -> list[dict[str, object]]:
    """One line of promptfoo eval -o results.jsonl (an EvaluateResult)."""
    base = {
        "prompt": {"raw": "Answer: x"},
        "testIdx": 0,
        "promptIdx": 0,
        "testCase": {"vars": {"q": "x"}},
        "success": True,
        "score": 1,
    }
    return [{**base, **result}]


def _vally(record: dict[str, object]) -> list[dict[str, object]]:
    base = {
        "type": "trial-result",
        "stimulus": "s",
        "trialIndex": 0,
        "status": "success",
        "gradeResult": {"passed": True},
    }
    return [{**base, **record}]


def _lines(folder: Path, name: str, records: list[dict[str, object]], *args: str) -> Invocation:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return cli(folder, str(path), *args)


def _tau2(reason: object) -> dict[str, object]:
    simulation = {
        "task_id": "1",
        "trial": 0,
        "termination_reason": reason,
        "reward_info": {"reward": 1.0},
    }
    return {"info": {"num_trials": 1}, "tasks": [], "simulations": [simulation]}


def _action_environ_link(folder: Path) -> Invocation:
    invocation = action(folder, "results.jsonl")
    _link(folder / "ws", "results.jsonl", "/proc/self/environ")
    return invocation


def _action_environ_copy(folder: Path) -> Invocation:
    invocation = action(folder, "environ.csv", inputs={"format": "csv"})
    (folder / "ws" / "environ.csv").write_bytes(environ_copy().replace(b"\0", b","))
    return invocation


def _action_environ_copy_jsonl(folder: Path) -> Invocation:
    invocation = action(folder, "environ.jsonl")
    (folder / "ws" / "environ.jsonl").write_bytes(environ_copy())
    return invocation


def _dry_run_environ_copy(folder: Path) -> Invocation:
    invocation = _action_environ_copy(folder)
    invocation.entry = "cli"
    invocation.args = ["action", "--dry-run"]
    return invocation


def _action_outside(folder: Path) -> Invocation:
    write_jsonl(folder / "outside.jsonl")
    return action(folder, "../outside.jsonl")


def _action_passing(folder: Path, **kwargs: Any) -> Invocation:
    invocation = action(folder, "results.jsonl", **kwargs)
    write_jsonl(folder / "ws" / "results.jsonl")
    return invocation


def _event_fifo(folder: Path) -> Invocation:
    return _action_passing(folder, event_path=_fifo(folder, "event.json"))


def _event_deep(folder: Path) -> Invocation:
    return _action_passing(folder, event=b'{"a": ' * 100_000 + b"1" + b"}" * 100_000)


def _output_folder(folder: Path) -> Invocation:
    (folder / "out-dir").mkdir()
    return _action_passing(folder, output=folder / "out-dir")


def _summary_folder(folder: Path) -> Invocation:
    (folder / "summary-dir").mkdir()
    return _action_passing(folder, summary=folder / "summary-dir")


def _summary_fifo(folder: Path) -> Invocation:
    # Opening a FIFO to write waits for a reader: the step hung until the job's timeout.
    os.mkfifo(folder / "summary-fifo")
    return _action_passing(folder, summary=folder / "summary-fifo")


def _output_fifo(folder: Path) -> Invocation:
    os.mkfifo(folder / "output-fifo")
    return _action_passing(folder, output=folder / "output-fifo")


def _output_device(folder: Path) -> Invocation:
    return _action_passing(folder, output=Path("/dev/full"))


def _report_fifo(folder: Path) -> Invocation:
    # A FIFO no process reads: opening it to write the report waited for a reader forever.
    invocation = _action_passing(folder, inputs={"report": "report.fifo"})
    os.mkfifo(folder / "ws" / "report.fifo")
    invocation.sinks = invocation.sinks[:2]
    return invocation


def _report_over_results(folder: Path) -> Invocation:
    invocation = _action_passing(folder, inputs={"report": "results.jsonl"})
    invocation.sinks = invocation.sinks[:2]
    return invocation


def _token_with_line_break(folder: Path) -> Invocation:
    return _action_passing(
        folder,
        inputs={"comment": "always"},
        token="ghs_firstHalfOfAToken01\r\nsecondHalfOfAToken23",
        env={"GITHUB_EVENT_NAME": "pull_request"},
        event=b'{"pull_request": {"number": 7}}',
    )


def _token_not_ascii(token: str) -> Callable[[Path], Invocation]:
    """A token of bytes that are not UTF-8 (Python's environment holds them as lone
    surrogates; building the redactor raised UnicodeEncodeError outside the action's own
    handler: a traceback and exit 1), or of characters a header cannot hold (raised as the
    first request was made: an unexpected error in the comment step)."""

    def build(folder: Path) -> Invocation:
        return _action_passing(
            folder,
            inputs={"comment": "always"},
            token=token,
            env={"GITHUB_EVENT_NAME": "pull_request"},
            event=b'{"pull_request": {"number": 7}}',
        )

    return build


def _report_unwritable(folder: Path) -> Invocation:
    blocker = folder / "blocker"
    blocker.write_text("a file, not a folder")
    return cli(folder, str(write_jsonl(folder / "r.jsonl")), "--json", "blocker/report.json")


def probes() -> list[Probe]:
    """Every probe: name, how to build and run it, the exit code and a fragment it must say."""
    z = zipfile
    return [
        # -- files that are not results --------------------------------------------------------
        Probe("proc-environ", lambda f: cli(f, "/proc/self/environ"), 2, "/proc"),
        Probe(
            "proc-environ-link",
            lambda f: cli(f, str(_link(f, "r.jsonl", "/proc/self/environ"))),
            2,
            "/proc",
        ),
        Probe("proc-glob", lambda f: cli(f, "/proc/self/env*"), 2, "/proc"),
        Probe("fifo-results", lambda f: cli(f, str(_fifo(f, "r.jsonl"))), 2, "named pipe"),
        Probe(
            "fifo-config",
            lambda f: cli(f, str(write_jsonl(f / "r.jsonl")), "--config", str(_fifo(f, "c.yml"))),
            2,
            "named pipe",
        ),
        Probe("dev-zero", lambda f: cli(f, "/dev/zero"), 2, "character device"),
        Probe(
            "dev-urandom",
            lambda f: cli(f, "/dev/urandom", "--format", "native"),
            2,
            "character device",
        ),
        Probe("socket-results", lambda f: cli(f, str(_socket(f))), 2, "r.sock"),
        Probe("folder-with-loops-and-links", _nested_folder, 0, "read d/sub/results.jsonl"),
        Probe("glob-through-loops", _glob_through_loops, 0, "read d/sub/results.jsonl"),
        Probe("glob-matching-a-link-to-environ", _glob_matching_environ, 2, "/proc"),
        Probe(
            "validate-link-named-like-a-command",
            _validate_with_a_link_named_like_a_command,
            0,
            "x\\n::error title=pwn::y.jsonl: skipped",
        ),
        Probe(
            "file-named-like-a-command",
            _named_like_a_command,
            0,
            "x\\n::error title=pwn::owned\\r.jsonl",
        ),
        # -- bombs -------------------------------------------------------------------------------
        Probe(
            "eval-200MiB-whitespace",
            lambda f: cli(f, str(eval_archive(f / "ws.eval", _spaces(200 * MIB)))),
            2,
            "not valid JSON",
        ),
        # Summaries are streamed: the first zero is a sample that is not an object.
        Probe(
            "eval-100MiB-zeros",
            lambda f: cli(f, str(eval_archive(f / "zeros.eval", _zeros_array(100 * MIB)))),
            2,
            "summaries.json#/0: sample is not an object",
        ),
        # ... and one sample of 52 million values is refused before it is parsed.
        Probe(
            "eval-100MiB-zeros-in-one-sample",
            lambda f: cli(f, str(eval_archive(f / "sample.eval", _zeros_in_one_sample(100 * MIB)))),
            2,
            "JSON values limit",
        ),
        Probe(
            "eval-bzip2-liar-520MiB",
            lambda f: cli(f, str(lying_archive(f / "b.eval", z.ZIP_BZIP2, 520 * MIB))),
            2,
            "unpacks to more",
        ),
        Probe(
            "eval-zstd-liar-520MiB",
            lambda f: cli(f, str(lying_archive(f / "z.eval", 93, 520 * MIB))),
            2,
            "unpacks to more",
        ),
        Probe(
            "eval-deflate-liar-520MiB",
            lambda f: cli(f, str(lying_archive(f / "d.eval", z.ZIP_DEFLATED, 520 * MIB))),
            2,
            "unpacks to more",
        ),
        Probe(
            "yaml-2MiB",
            lambda f: _config(f, "# " + "x" * (2 * MIB) + "\nversion: 1\n"),
            2,
            "configuration size",
        ),
        Probe(
            "yaml-billion-laughs",
            lambda f: _config(f, _billion_laughs_yaml()),
            2,
            "aliases are expanded",
        ),
        Probe(
            "yaml-5000-deep",
            lambda f: _config(f, "a: " + "[" * 5000 + "]" * 5000 + "\n"),
            2,
            "nest more than 32",
        ),
        Probe(
            "yaml-unhashable-key",
            lambda f: _config(f, "? [a, b]\n: 1\n"),
            2,
            "list as a mapping key",
        ),
        Probe("yaml-not-utf8", lambda f: _config(f, b"version: 1\nk: \xff\xfe\n"), 2, "not UTF-8"),
        Probe(
            "yaml-5000-digit-integer",
            lambda f: _config(f, "version: 1\nk: " + "9" * 5000 + "\n"),
            2,
            "gates.yml",
        ),
        Probe(
            "yaml-integer-beyond-float",
            lambda f: _config(f, "version: 1\nconfidence: 1" + "0" * 400 + "\n"),
            2,
            "beyond the range",
        ),
        Probe("csv-100k-columns", _csv_columns, 2, "CSV columns"),
        Probe("csv-200KB-field", _csv_field, 2, "field larger than field limit"),
        Probe("csv-5000-digit-trial", _csv_long_trial, 2, "too long: 5000 digits"),
        Probe("csv-70MiB-line", _csv_long_line, 2, "line length"),
        Probe("csv-30MiB-of-blank-lines", _csv_blank_lines, 0, "PASS"),
        Probe(
            "csv-quoted-cell-open-over-8M-lines",
            _csv_quote_open_for_lines,
            2,
            "open.csv:65538: not valid CSV: field larger than field limit (131072)",
        ),
        Probe(
            "csv-past-the-trials-limit",
            _csv_past_the_trials_limit,
            2,
            "tiny.csv:1000002: one trial more than the trials limit allows in one run; "
            "expected at most 1,000,000 trials (set EVAL_GATE_MAX_TRIALS to allow more)",
        ),
        Probe("jsonl-70MiB-line", _jsonl_long_line, 2, "line length"),
        Probe("junit-50MB-attribute", _junit_attribute, 2, "XML attribute"),
        Probe("junit-50MB-text", _junit_text, 0, "j.xml as junit"),
        Probe("junit-100k-deep", _junit_deep, 2, "XML nesting"),
        Probe("xml-billion-laughs", _xml_laughs, 2, "laughs.xml"),
        *(
            Probe(
                f"xml-encoding-{name}",
                _xml_encoding(name),
                2,
                f"encoded.xml:1: the XML declaration names an encoding that cannot be read "
                f"({said})",
            )
            for name, said in (
                ("abc", "unknown encoding: abc"),
                ("shift_jis", "multi-byte encodings are not supported"),
                ("rot13", "'rot13' is not a text encoding"),
            )
        ),
        Probe("json-100k-deep-document", _deep_document, 2, "nest more than 254"),
        Probe("jsonl-100k-deep-line", _deep_line, 2, "nest more than 254"),
        Probe("jsonl-metadata-300-deep", _deep_metadata, 2, "nest more than 254"),
        Probe("json-5000-digit-integer", _long_integer, 2, "5000 digits"),
        # -- values past the float range, wrong JSON types ----------------------------------------
        Probe("lone-surrogates", _surrogates, 1, "FAIL"),
        Probe("tau-bench-200k-elements-orjson-refuses", _tau_bench_orjson_refuses, 0, "PASS"),
        Probe("advice-on-30k-stimuli-each-its-own-n", _advice_on_30k_stimuli, 3, "INCONCLUSIVE"),
        Probe(
            "advice-on-100k-stimuli-each-gated",
            _advice_on_100k_stimuli_each_gated,
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "advice-on-1k-stimuli-each-gated-each-its-own-n",
            _advice_on_1k_stimuli_each_gated_each_its_own_n,
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "half-width-advice-on-3k-stimuli-each-its-own-n",
            _half_width_advice_on_stimuli_each_its_own_n,
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "pass-hat-k-half-width-advice-on-10k-stimuli-each-its-own-n",
            _pass_hat_k_half_width_advice_on_stimuli_each_its_own_n,
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "sequential-advice-on-1k-stimuli-each-gated-each-its-own-n",
            _sequential_advice_on_1k_stimuli_each_its_own_n,
            3,
            "INCONCLUSIVE",
        ),
        Probe("comparison-of-a-billion-trials", _comparison_of_a_billion_trials, 1, "FAIL"),
        # 200,000 suites, each scored and reported alone: 7 ms a suite (about 25 minutes);
        # now refused past 1,000 (EVAL_GATE_MAX_SUITES), which take a second or two.
        Probe(
            "200k-suites",
            lambda f: cli(f, str(_every_stimulus_its_own_suite(f, 200_000)), "--format", "counts"),
            2,
            "over the suites limit (200,000 suites); expected at most 1,000 suites",
        ),
        Probe(
            "1000-suites",
            lambda f: cli(f, str(_every_stimulus_its_own_suite(f, 1_000)), "--format", "counts"),
            0,
            "PASS",
        ),
        Probe(
            "pass-at-k-advice-on-2k-stimuli-each-its-own-n",
            _pass_at_k_advice_on_stimuli_each_its_own_n,
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "sequential-half-width-advice-on-1k-stimuli-each-its-own-n",
            lambda folder: _sequential_advice_on_1k_stimuli_each_its_own_n(
                folder, "max_ci_half_width: {max: 0.05, metric: pass_rate, scope: stimuli}", 7
            ),
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "advice-on-500-paired-stimuli-each-gated-each-its-own-n",
            _advice_on_paired_stimuli_each_its_own_n,
            3,
            "INCONCLUSIVE",
        ),
        Probe(
            "inspect-score-beyond-float",
            lambda f: _document(f, "i.json", _inspect_log(HUGE)),
            2,
            "non-finite",
        ),
        Probe(
            "inspect-scorers-not-a-list",
            lambda f: _document(f, "i.json", _inspect_log(eval={"task": "t", "scorers": 5})),
            2,
            "not an array of scorers",
        ),
        Probe(
            "inspect-scores-without-names",
            lambda f: _document(f, "i.json", _inspect_log(results={"scores": [{}, {"name": []}]})),
            0,
            "i.json as inspect",
        ),
        Probe(
            "native-grader-weight-beyond-float",
            lambda f: _lines(
                f,
                "w.jsonl",
                [{"type": "suite", "suite": "s", "grader_weights": {"g": HUGE}}, *trial_records()],
            ),
            2,
            "grader_weights",
        ),
        Probe(
            "native-trial-index-10e30",
            lambda f: _lines(f, "t.jsonl", [{"stimulus": "s", "trial": 10**30, "passed": True}]),
            0,
            "t.jsonl as native",
        ),
        Probe(
            "native-trial-index-10e9",
            lambda f: _lines(f, "t.jsonl", [{"stimulus": "s", "trial": 10**9, "passed": True}]),
            0,
            "t.jsonl as native",
        ),
        Probe(
            "counts-n-beyond-float",
            lambda f: _lines(f, "c.jsonl", [{"stimulus": "s", "n": HUGE, "c": 1}]),
            2,
            "c.jsonl",
        ),
        Probe(
            "promptfoo-latency-beyond-float",
            lambda f: _document(f, "p.json", _promptfoo({"latencyMs": HUGE})),
            2,
            "latencyMs",
        ),
        Probe(
            "promptfoo-component-results-not-a-list",
            lambda f: _document(
                f, "p.json", _promptfoo({"gradingResult": {"componentResults": 5}})
            ),
            2,
            "componentResults",
        ),
        Probe(
            "promptfoo-jsonl-latency-beyond-float",
            lambda f: _lines(f, "p.jsonl", _promptfoo_line({"latencyMs": HUGE})),
            2,
            "p.jsonl:1: latencyMs",
        ),
        Probe(
            "promptfoo-jsonl-success-a-string",
            lambda f: _lines(f, "p.jsonl", _promptfoo_line({"success": "true"})),
            2,
            "p.jsonl:1: success is not a boolean",
        ),
        Probe(
            "vally-duration-beyond-float",
            lambda f: _lines(f, "v.jsonl", _vally({"durationMs": HUGE})),
            2,
            "durationMs",
        ),
        Probe(
            "vally-status-a-list",
            lambda f: _lines(f, "v.jsonl", _vally({"status": ["success"]})),
            2,
            "status",
        ),
        Probe(
            "tau2-termination-reason-a-list",
            lambda f: _document(f, "t.json", _tau2(["x"])),
            2,
            "termination_reason",
        ),
        # -- the action and its outputs ----------------------------------------------------------
        Probe("action-results-link-to-environ", _action_environ_link, 2, "/proc or /sys"),
        Probe("action-environ-copy-csv", _action_environ_copy, 2, "environ.csv"),
        Probe("action-environ-copy-jsonl", _action_environ_copy_jsonl, 2, "environ.jsonl"),
        Probe("dry-run-environ-copy", _dry_run_environ_copy, 2, "environ.csv"),
        Probe("action-results-outside-workspace", _action_outside, 2, "outside the workspace"),
        Probe("action-event-fifo", _event_fifo, 0, "named pipe"),
        Probe("action-event-100k-deep", _event_deep, 0, "nested too deep"),
        Probe("action-output-is-a-folder", _output_folder, 0, "cannot write GITHUB_OUTPUT"),
        Probe("action-summary-is-a-folder", _summary_folder, 0, "cannot write GITHUB_STEP_SUMMARY"),
        Probe("action-summary-is-a-fifo", _summary_fifo, 0, "GITHUB_STEP_SUMMARY: not a regular"),
        Probe("action-output-is-a-fifo", _output_fifo, 0, "GITHUB_OUTPUT: not a regular file"),
        Probe("action-output-is-a-device", _output_device, 0, "GITHUB_OUTPUT: not a regular"),
        Probe("action-report-over-results", _report_over_results, 2, "refusing to overwrite"),
        Probe("action-report-is-a-fifo", _report_fifo, 0, "a named pipe that no process reads"),
        Probe("action-token-with-line-break", _token_with_line_break, 0, "line break"),
        Probe(
            "action-token-not-utf8",
            _token_not_ascii("ghs_notUtf8\udcff0123456789abcd"),
            0,
            "comment: the token holds a character that is not ASCII",
        ),
        Probe(
            "action-token-not-latin1",
            _token_not_ascii("ghs_euro€0123456789abcdefgh"),
            0,
            "comment: the token holds a character that is not ASCII",
        ),
        Probe(
            "cli-json-over-results",
            lambda f: cli(f, str(write_jsonl(f / "r.jsonl")), "--json", str(f / "r.jsonl")),
            2,
            "refusing to overwrite",
        ),
        Probe(
            "plan-json-over-pilot",
            lambda f: Invocation(
                "cli",
                ["plan", "--pilot", str(write_jsonl(f / "r.jsonl")), "--json", str(f / "r.jsonl")],
                f,
                {},
            ),
            2,
            "refusing to overwrite",
        ),
        Probe(
            "cli-report-unwritable",
            _report_unwritable,
            0,
            "warning: the JSON report was not written",
        ),
        *(
            Probe(
                f"cli-{option[2:]}-is-a-fifo",
                lambda f, option=option: cli(
                    f, str(write_jsonl(f / "r.jsonl")), option, str(_fifo(f, "out.fifo"))
                ),
                0,
                "a named pipe that no process reads",
            )
            for option in ("--json", "--summary")
        ),
    ]


def _socket(folder: Path) -> Path:
    path = folder / "r.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    return path


def main() -> None:
    """Run every probe and print its outcome, time and peak memory."""
    print(f"{'probe':44} {'exit':>4} {'seconds':>8} {'peak MiB':>9}")
    for probe in probes():
        with tempfile.TemporaryDirectory() as folder:
            invocation = probe.build(Path(folder))
            result = run(invocation)
        mark = "" if result.exit_code == probe.exit_code else f"  (expected {probe.exit_code})"
        print(
            f"{probe.name:44} {result.exit_code:>4} {result.seconds:8.2f} "
            f"{result.peak_bytes / MIB:9.0f}{mark}"
        )
        if mark or "Traceback" in result.stderr:
            print("   ", result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else "")


if __name__ == "__main__":
    main()
