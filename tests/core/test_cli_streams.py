"""stdout and stderr as a real process has them: another encoding, a full disk, a reader that
left. None of them may change the verdict's exit code or end in an internal error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES

EVAL_GATE = str(Path(sys.executable).with_name("eval-gate"))

RESULTS = str(EXAMPLES / "failing" / "results.jsonl")
PASSING = ["check", RESULTS, "--min-pass-rate", "0.1"]  # its pass rate is 0.6: exit 0


def _env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHONIO"))}
    return {**env, **more}


def test_an_encoding_without_the_reports_characters_writes_them_as_question_marks(
    tmp_path: Path,
) -> None:
    """Under a Latin-1 locale every command died of UnicodeEncodeError on ✔ or ❔ (exit 2,
    "internal error"); --help too."""
    for args, code in ((["check", RESULTS], 3), (PASSING, 0), (["check", "--help"], 0)):
        done = subprocess.run(
            [EVAL_GATE, *args],
            capture_output=True,
            env=_env(PYTHONIOENCODING="latin-1"),
            cwd=tmp_path,
            timeout=120,
        )
        stderr = done.stderr.decode("latin-1")
        assert done.returncode == code, stderr
        assert "internal error" not in stderr
        if args == PASSING:
            first = done.stdout.decode("latin-1").splitlines()[0]
            assert first == "## ? eval-gate: PASS ? the gate passed"  # ✅ and — unwritable
            assert "\xb7 15 trials" in done.stdout.decode("latin-1")  # "·" is Latin-1


def test_a_full_stderr_or_stdout_keeps_the_verdicts_exit_code(tmp_path: Path) -> None:
    """2>/dev/full ended a passing check with click's exit code 1 ("a gate failed");
    >/dev/full with an internal error (exit 2)."""
    with open("/dev/full", "w") as full:
        quiet_log = subprocess.run(
            [EVAL_GATE, *PASSING], stdout=subprocess.PIPE, stderr=full, env=_env(), timeout=120
        )
        assert quiet_log.returncode == 0
        assert quiet_log.stdout.startswith("## ✅ eval-gate: PASS".encode())
        no_stdout = subprocess.run(
            [EVAL_GATE, *PASSING], stdout=full, stderr=subprocess.PIPE, env=_env(), timeout=120
        )
    assert no_stdout.returncode == 0
    said = no_stdout.stderr.decode()
    assert "eval-gate: warning: stdout: cannot write: No space left on device" in said
    assert said.rstrip().endswith("exit code 0") and "internal error" not in said


def test_a_reader_that_left_keeps_the_verdicts_exit_code() -> None:
    """``eval-gate check ... 2>&1 | head -1``: stderr's pipe closed while the check still
    wrote to it (EPIPE), and click made that exit code 1."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line
    try:
        done = subprocess.run(
            [EVAL_GATE, *PASSING], stdout=write, stderr=write, env=_env(), timeout=120
        )
    finally:
        os.close(write)
    assert done.returncode == 0
