"""Every input of action.yml, set to each hostile value, through ``eval-gate action
--dry-run``: a verdict or a worded error (exit 0-3), never an internal error, and the
token never printed. A config path holding a NUL crashed the action before this test."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import EXAMPLES, ROOT

pytest.importorskip("gate.pipeline")
from gate.github.cli import action_command

TOKEN = "ghs_" + "s3cr3t" * 6
HOSTILE = [
    "",
    " ",
    "nan",
    "1e400",
    "9" * 5000,
    "-1",
    "2",
    "200%",
    "always",
    "a\nb",
    "::error::injected",
    "\u202e",
    "**",
    "/proc/self/environ",
    "../../../etc/passwd",
    "x" * 20_000,
    "stimulus=a,trial=",
    "$(id)",
    "a\x00b",
    "\ud800",
    TOKEN,
]


def test_every_action_input_takes_every_hostile_value(tmp_path: Path) -> None:
    inputs = list(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    results = str(EXAMPLES / "failing" / "results.jsonl")
    environment = {
        "GITHUB_STEP_SUMMARY": None,
        "GITHUB_OUTPUT": None,
        "GITHUB_WORKSPACE": str(ROOT),
        "INPUT_GITHUB_TOKEN": TOKEN,
    }
    runner = CliRunner()
    bugs = []
    for name in inputs:
        for value in HOSTILE:
            given = ["-i", f"results={results}"] if name != "results" else []
            result = runner.invoke(
                action_command, ["--dry-run", *given, "-i", f"{name}={value}"], env=environment
            )
            said = result.stdout + result.stderr
            escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
            if escaped or result.exit_code not in (0, 1, 2, 3) or "internal error" in said:
                bugs.append(f"{name}={value[:12]!r}: exit {result.exit_code}")
            if "s3cr3t" in said:
                bugs.append(f"{name}={value[:12]!r}: the token was printed")
    assert len(inputs) > 30
    assert not bugs, "\n".join(bugs[:20])
