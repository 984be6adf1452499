"""The wheel carries schemas/ (the single source of truth) and the console script."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_wheel_ships_every_schema_and_the_console_script(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("eval_gate-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        assert "eval-gate = gate.cli:main" in archive.read(entry_points).decode()
        for schema in (ROOT / "schemas").glob("*.schema.json"):
            shipped = f"gate/_schemas/{schema.name}"
            assert shipped in names
            assert archive.read(shipped) == schema.read_bytes()


def test_readme_starts_with_the_two_command_quick_start() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = text.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick_start.strip().splitlines()]
    assert commands == ["make run", "make test"]


def test_readme_says_how_to_call_the_cli_after_make_run_and_elsewhere() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index("## Quick start") < text.index("## Install") < text.index("## Use it")
    install = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert ".venv/bin/eval-gate --help" in install
    assert "source .venv/bin/activate" in install
    # pipx installs from a VCS URL as pip does (pypa/pipx docs/examples.md).
    assert "pipx install git+https://github.com/org/eval-gate " in install
    assert "pipx install git+https://github.com/org/eval-gate@v" in install


def test_make_run_ends_with_how_to_call_the_cli() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    # -n prints the recipe with the variables expanded and runs nothing.
    printed = subprocess.run(
        [make, "-n", "-s", "run"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert printed.returncode == 0, printed.stderr
    echoed = [line for line in printed.stdout.splitlines() if line.startswith("echo")]
    assert "run .venv/bin/eval-gate --help," in echoed[-2]
    assert "or 'source .venv/bin/activate' first" in echoed[-1]
