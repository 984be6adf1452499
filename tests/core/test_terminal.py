"""The terminal view (issue 15 point 2): what ``check`` prints when stdout is a terminal.

CliRunner's stdout is never a TTY, so these tests force the one switch the command reads
(``gate.cli._stdout_is_terminal``); tests/scale/test_cold_start.py runs the real command
under a pseudo-terminal.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gate import cli
from gate.cli import main
from gate.pipeline import request_from_options, run_check
from gate.report.escape import terminal_text
from gate.report.terminal import Terminal, display_width, fit, rate_bar, render_terminal, wrap
from tests.conftest import EXAMPLES, trials_of

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "failing"
    shutil.copytree(EXAMPLES / "failing", folder)
    monkeypatch.chdir(folder)
    return folder


def on_terminal(
    monkeypatch: pytest.MonkeyPatch, *args: str, env: dict[str, str] | None = None
) -> Result:
    monkeypatch.setattr(cli, "_stdout_is_terminal", lambda: True)
    environment = {"COLUMNS": "100", "NO_COLOR": "", "TERM": "xterm-256color", **(env or {})}
    return CliRunner().invoke(main, ["check", "results.jsonl", *args], env=environment)


def test_a_terminal_gets_the_rendered_view_in_colour(
    failing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = on_terminal(monkeypatch, env={"COLUMNS": "160"})
    assert result.exit_code == 1, result.output
    out = result.stdout
    first = out.splitlines()[0]
    assert first == "\x1b[1;31m❌ eval-gate: FAIL — 1 of 3 gates failed\x1b[0m"
    plain = ANSI.sub("", out)
    # No Markdown: no table pipes, no backslash escapes, no headings, no <details>.
    assert "|" not in plain and "\\" not in plain and "##" not in plain
    assert "<details>" not in plain and "**" not in plain and "```" not in plain
    assert "code-agent · 5 stimuli · 15 trials (1 errored) · 0 skipped" in plain
    # Results coloured by outcome; the table aligned: every row of a table as wide.
    assert "\x1b[31m✘ fail\x1b[0m" in out and "\x1b[32m✔ pass\x1b[0m" in out
    # Wide enough for every column (a narrower terminal drops the least needed first).
    table = plain.split("Stimuli, worst first\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0].split() == [
        "Stimulus", "Trials", "Outcomes", "Pass", "rate", "95%", "interval",
        "pass@3", "pass^3", "Flaky", "Reading",
    ]  # fmt: skip
    assert table[2].startswith("Fix off-by-one in paginator   3 (1 errored)  ✘✘⚠ ")
    # Each rate with its interval as a bar: 0 of 3, interval [0, 63.2%]
    assert re.search(r" 0\.0%  ▒▒▒▒▒▒░░░░ +\[0\.0%, 63\.2%\]", table[2])
    ends = {display_width(row.split("  capab")[0]) for row in table[2:]}
    assert len(ends) == 1  # the Reading column starts at the same column on every row
    assert "eval-gate: FAIL (1 failed, 0 inconclusive, of 3 gates); exit code 1" in result.stderr
    # The suite table has the Markdown's rows: Bayes@N too (it was missing here), the mean
    # of (c + 1)/(n + 2) over 0/3, 1/3, 2/3, 3/3, 3/3 = (1 + 2 + 3 + 4 + 4)/25 = 56%.
    assert re.search(r"\nBayes@N \(posterior mean\) +56\.0%  \S+  \[40\.3%, 71\.7%\]\n", plain)


def test_no_color_turns_colour_off_and_changes_nothing_else(
    failing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    coloured = on_terminal(monkeypatch).stdout
    plain = on_terminal(monkeypatch, env={"NO_COLOR": "1"}).stdout
    assert "\x1b" not in plain
    assert plain == ANSI.sub("", coloured)
    assert "\x1b" not in on_terminal(monkeypatch, env={"TERM": "dumb"}).stdout


@pytest.mark.parametrize("columns", [60, 80, 132])
def test_the_view_fits_the_width(
    failing: Path, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    out = on_terminal(
        monkeypatch, "--baseline", "baseline.jsonl", "--max-regression", "0.05",
        env={"COLUMNS": str(columns), "NO_COLOR": "1"},
    ).stdout  # fmt: skip
    widths = [display_width(line) for line in out.splitlines()]
    assert max(widths) <= columns
    assert max(widths) >= min(columns, 100) - 10  # and uses it
    assert "Compared with the baseline (pass rate)" in out


def test_a_very_wide_terminal_is_capped_and_a_narrow_one_floored() -> None:
    assert Terminal.detect(environ={"COLUMNS": "400"}).width == 160
    assert Terminal.detect(environ={"COLUMNS": "10"}).width == 40
    assert Terminal.detect(environ={"COLUMNS": "90", "NO_COLOR": "x"}) == Terminal(90, False)
    # "²" is a digit to str.isdigit but not to int() (an internal error); 5,000 digits are
    # past int()'s limit; leading zeros are a number still.
    fallback = Terminal.detect(environ={"COLUMNS": "²"}).width
    assert fallback == Terminal.detect(environ={"COLUMNS": "abc"}).width
    assert Terminal.detect(environ={"COLUMNS": "9" * 5000}).width == 160
    assert Terminal.detect(environ={"COLUMNS": "0" * 5000 + "90"}).width == 90


def test_pipes_and_files_keep_the_markdown(failing: Path) -> None:
    """Not a terminal (CliRunner, as a pipe): the Markdown, exactly as before."""
    result = CliRunner().invoke(main, ["check", "results.jsonl"])
    assert result.stdout.startswith("## ❌ eval-gate: FAIL — 1 of 3 gates failed\n")
    assert "\x1b" not in result.stdout


def test_summary_dash_and_json_dash_win_over_the_terminal_view(
    failing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert on_terminal(monkeypatch, "--summary", "-").stdout.startswith("## ❌ eval-gate")
    assert on_terminal(monkeypatch, "--json", "-").stdout.startswith("{")
    # A summary file is written as Markdown; the terminal still gets its view.
    both = on_terminal(monkeypatch, "--summary", "summary.md")
    assert (failing / "summary.md").read_text(encoding="utf-8").startswith("## ❌")
    assert both.stdout.startswith("\x1b[1;31m❌ eval-gate: FAIL")


def test_quiet_prints_only_the_verdict_line(failing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for result in (
        CliRunner().invoke(main, ["check", "results.jsonl", "--quiet"]),
        on_terminal(monkeypatch, "-q"),
    ):
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr == (
            "eval-gate: FAIL (1 failed, 0 inconclusive, of 3 gates); exit code 1\n"
        )
    # --json - is asked for by name: it still prints.
    asked = CliRunner().invoke(main, ["check", "results.jsonl", "-q", "--json", "-"])
    assert asked.stdout.startswith("{") and asked.stderr.count("\n") == 1
    # Errors still print.
    bad = CliRunner().invoke(main, ["check", "missing.jsonl", "-q"])
    assert bad.exit_code == 2 and "missing.jsonl" in bad.stderr


HOSTILE = [
    "\x1b[31mred\x1b[0m",
    "\x1b]0;pwned\x07title",
    "bell\x07 back\x08space",
    "\x9b2Jcsi",
    "bidi \u202eevil\u202c text",
    "line\nbreak\r\ttab",
]


def test_file_content_cannot_drive_the_terminal(
    write_jsonl: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    records = []
    for name in HOSTILE:
        records += trials_of(name, "PPF", suite="s\x1b[2J")
    records[2] = {**records[2], "passed": None, "status": "error", "message": "\x1b]8;;x\x07m"}
    records[2].pop("passed")
    path = write_jsonl(records)
    outcome = run_check(request_from_options([str(path)], config=None))
    view = render_terminal(outcome, Terminal(120, color=False))
    assert "\x1b" not in view and "\x9b" not in view and "\x07" not in view
    assert "\x08" not in view and "\u202e" not in view and "\r" not in view
    assert "\ufffd[31mred\ufffd[0m" in view  # shown, harmless
    coloured = render_terminal(outcome, Terminal(120, color=True))
    assert set(re.findall(r"\x1b[^m]*m", coloured)) <= {
        "\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m",
        "\x1b[1;31m", "\x1b[1;32m", "\x1b[1;33m", "\x1b[1;2m",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("\x1b[31mred", "\ufffd[31mred"),
        ("a\nb\tc\r\nd", "a b c d"),
        ("\x00\x7f\x85\x9b", "\ufffd\ufffd \ufffd"),
        ("\u2066iso\u2069 \u200fmark", "\ufffdiso\ufffd \ufffdmark"),
        ("名前 é", "名前 é"),
    ],
)
def test_terminal_text_escapes_every_control(value: str, shown: str) -> None:
    assert terminal_text(value) == shown


def test_widths_bars_and_wrapping() -> None:
    assert display_width("✔✘⚠") == 3 and display_width("❌ x") == 4
    assert fit("名前名前", 4) == "名…" and display_width(fit("名前名前", 4)) == 3
    assert wrap("one two three", 8, "  ", "• ") == ["• one", "  two", "  three"]
    assert rate_bar(0.5, 0.25, 0.75, cells=8) == "██▓▓▒▒░░"
    assert rate_bar(1.0, 1.0, 1.0, cells=4) == "████"


def test_a_lone_surrogate_cannot_break_the_output() -> None:
    assert terminal_text("a\ud800b") == "a\ufffdb"
    assert terminal_text("a\ud800b").encode("utf-8") == b"a\xef\xbf\xbdb"


def test_errored_trials_show_the_error_message_not_an_object(write_jsonl) -> None:
    """The terminal printed the repr of the stimulus's first kept message (a failure's)."""
    records = trials_of("a", "FEP")
    records[0]["message"] = "expected 42, got 17"
    records[1]["message"] = "sandbox timed out"
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    view = render_terminal(outcome, Terminal(100, color=False))
    (row,) = [line for line in view.splitlines() if line.startswith("a ") and "sandbox" in line]
    assert row.split() == ["a", "1", "sandbox", "timed", "out"]
    assert "TrialMessage" not in view


def test_the_terminal_says_why_trials_failed(
    failing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Markdown summary had "Why trials failed"; the terminal view, what a developer
    runs locally, showed no failure message at all (only the errored trials' table)."""
    plain = ANSI.sub("", on_terminal(monkeypatch).stdout)
    block = plain.split("Why trials failed (the first messages of 3 stimuli)\n", 1)[1]
    assert block.split("\n\n", 1)[0].splitlines() == [
        "• Fix off-by-one in paginator (0/3 passed)",
        "  • trial 0 failed (results.jsonl:5): test_last_page: expected 10 items, got 9",
        "  • trial 2 errored (results.jsonl:15): sandbox timed out after 600 s",
        "• Generate OpenAPI schema stub (1/3 passed)",
        "  • trial 0 failed (results.jsonl:4): schema has no 'paths' section",
        "• Refactor auth middleware (2/3 passed)",
        "  • trial 1 failed (results.jsonl:8): test_expired_token: AssertionError: 200 != 401",
    ]


def test_no_line_of_the_terminal_view_starts_a_workflow_command(write_jsonl) -> None:
    """Under `script` in CI (a terminal, for colour) the view is the job's log: a stimulus
    named ``::error::x`` headed a table row, and so a line, with a workflow command."""
    records = trials_of("::error::injected", "PFF") + trials_of("b", "PPP")
    records[1]["message"] = "::warning::also injected"
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    view = render_terminal(outcome, Terminal(100, color=False))
    assert " ::error::injected" in view and "::warning::also injected" in view
    assert not any(line.startswith("::") for line in view.splitlines())


def test_the_terminal_says_when_it_shows_only_some_failing_stimuli(write_jsonl) -> None:
    """12 failing stimuli with messages: the view shows 10 and says 2 more are in the JSON
    report (the summary's section says the same past 200)."""
    records = []
    for i in range(12):
        trials = trials_of(f"s{i:02d}", "PF")
        trials[1]["message"] = f"s{i:02d} missed"
        records += trials
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    view = render_terminal(outcome, Terminal(100, color=False))
    block = view.split("Why trials failed (the first messages of 10 stimuli)\n", 1)[1]
    lines = block.split("\n\n", 1)[0].splitlines()
    assert sum(line.endswith(" missed") for line in lines) == 10
    assert lines[-1] == (
        "… and 2 more stimuli that did not always pass, not shown here: the JSON report has "
        "every message."
    )
