"""Cold start: a command imports only what it needs (issue: scale, "Cold start").

Timing lives in bench/scale.py; these tests pin the cause of a slow start, which
is a heavy import on a path that does not use it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES

#: Modules a check of the small example must not load: scipy (its array-API layer
#: imports most of numpy's submodules), the Markdown renderer, the GitHub client,
#: jsonschema (only an invalid record needs its worded errors), rich (never used: the
#: terminal view is our own) and the terminal view itself when stdout is not a terminal.
HEAVY = (
    "scipy",
    "markdown_it",
    "gate.github",
    "jsonschema.",
    "referencing",
    "rich",
    "gate.report.terminal",
)

PROBE = """
import runpy, sys
sys.argv = ["eval-gate", *sys.argv[1:]]
try:
    runpy.run_module("gate.cli", run_name="__main__")
except SystemExit as stop:
    code = stop.code
heavy = sorted(m for m in sys.modules if m.startswith({heavy!r}) or m in {roots!r})
print("LOADED:" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _loaded(*args: str, cwd: str | None = None) -> tuple[int, list[str]]:
    return _loaded_of(HEAVY, *args, cwd=cwd)


def _loaded_of(
    modules: tuple[str, ...], *args: str, cwd: str | None = None
) -> tuple[int, list[str]]:
    """``eval-gate ARGS``'s exit code and which of ``modules`` (a trailing dot: the
    package's submodules only) it loaded."""
    roots = tuple(name.rstrip(".") for name in modules)
    code = PROBE.format(heavy=modules, roots=roots)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED:"))
    return done.returncode, [m for m in line.removeprefix("LOADED:").split(",") if m]


def test_check_of_the_small_example_loads_nothing_heavy(tmp_path: Path) -> None:
    code, loaded = _loaded(
        "check", "results.jsonl", "--json", str(tmp_path / "r.json"), cwd=str(EXAMPLES / "failing")
    )
    assert code == 1  # the failing example fails its gates
    assert loaded == []


def test_yaml_is_loaded_only_for_a_configuration_file(tmp_path: Path) -> None:
    # Without a .eval-gate.yml (options only, as in CI scripts and the bench) PyYAML is not
    # imported; with one it is, and the configuration still decides the gates.
    (tmp_path / "results.jsonl").write_bytes((EXAMPLES / "failing" / "results.jsonl").read_bytes())
    report = str(tmp_path / "r.json")
    args = ("check", "results.jsonl", "--json", report, "--threshold", "0.99")
    code, loaded = _loaded_of(("yaml",), *args, cwd=str(tmp_path))
    assert (code, loaded) == (1, [])
    code, loaded = _loaded_of(("yaml",), "check", "results.jsonl", cwd=str(EXAMPLES / "failing"))
    assert code == 1 and "yaml" in loaded


def test_help_loads_neither_numpy_nor_validators() -> None:
    code, loaded = _loaded("--help")
    assert code == 0
    # Listing the commands imports the action's module for its one-line help; nothing else.
    assert [m for m in loaded if not m.startswith("gate.github")] == []
    numpy_probe = subprocess.run(
        [sys.executable, "-c", "import sys, gate.cli; print('numpy' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert numpy_probe.stdout.strip() == "False"


def test_beta_quantile_methods_still_load_scipy_when_asked(tmp_path: Path) -> None:
    # The lazy path must still work: Jeffreys needs scipy.special.betaincinv.
    code, loaded = _loaded(
        "check",
        "results.jsonl",
        "--json",
        str(tmp_path / "r.json"),
        "--interval",
        "jeffreys",
        cwd=str(EXAMPLES / "failing"),
    )
    assert code == 1
    assert "scipy.special" in loaded


def _on_a_terminal(*args: str, env: dict[str, str]) -> tuple[int, str, list[str]]:
    """``eval-gate ARGS`` with stdout on a pseudo-terminal: exit code, what the terminal
    showed, and the modules of HEAVY it loaded."""
    import os
    import pty

    roots = tuple(name.rstrip(".") for name in HEAVY)
    code = PROBE.format(heavy=HEAVY, roots=roots)
    master, slave = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=str(EXAMPLES / "failing"),
        stdout=slave,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    _, stderr = child.communicate(timeout=60)
    line = next(x for x in stderr.decode().splitlines() if x.startswith("LOADED:"))
    loaded = [m for m in line.removeprefix("LOADED:").split(",") if m]
    return child.returncode, shown.decode("utf-8"), loaded


def test_a_check_on_a_real_terminal_renders_its_own_view() -> None:
    """The isatty path for real: the rendered view, in colour unless NO_COLOR is set, and
    nothing loaded for it but our renderer (no rich, no Markdown parser)."""
    code, shown, loaded = _on_a_terminal("check", "results.jsonl", env={"COLUMNS": "90"})
    assert code == 1
    assert shown.startswith("\x1b[1;31m❌ eval-gate: FAIL — 1 of 3 gates failed\x1b[0m\r\n")
    assert "## " not in shown and "code\\-agent" not in shown
    assert loaded == ["gate.report.terminal"]
    code, plain, _ = _on_a_terminal(
        "check", "results.jsonl", env={"COLUMNS": "90", "NO_COLOR": "1"}
    )
    assert code == 1 and "\x1b" not in plain
    assert plain.startswith("❌ eval-gate: FAIL — 1 of 3 gates failed\r\n")
