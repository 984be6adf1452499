"""``check --json -`` and ``--summary -``: which document stdout carries (click's CliRunner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gate.cli import main
from tests.conftest import EXAMPLES


@pytest.fixture
def failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/failing as the working directory (its .eval-gate.yml applies)."""
    folder = tmp_path / "failing"
    shutil.copytree(EXAMPLES / "failing", folder)
    monkeypatch.chdir(folder)
    return folder


def check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "results.jsonl", *args])


def test_json_dash_prints_the_report_to_stdout_and_no_markdown(failing: Path) -> None:
    result = check("--json", "-")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)  # stdout is the JSON document and nothing else
    assert report["verdict"] == "fail"
    assert report["suite"]["pass_hat_k"] == 0.4
    assert not (failing / "-").exists()
    assert "eval-gate: FAIL (1 failed" in result.stderr


def test_summary_dash_prints_the_markdown_to_stdout(failing: Path) -> None:
    result = check("--summary", "-")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("## ❌ eval-gate: FAIL — 1 of 3 gates failed")
    assert result.stdout == check().stdout  # the same as without --summary
    assert not (failing / "-").exists()


def test_json_to_stdout_with_the_summary_in_a_file(failing: Path) -> None:
    result = check("--json", "-", "--summary", "summary.md")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["verdict"] == "fail"
    assert (failing / "summary.md").read_text(encoding="utf-8").startswith("## ❌ eval-gate: FAIL")


def test_json_file_with_the_summary_on_stdout(failing: Path) -> None:
    result = check("--json", "report.json", "--summary", "-")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("## ❌ eval-gate: FAIL")
    assert json.loads((failing / "report.json").read_text(encoding="utf-8"))["verdict"] == "fail"


def test_both_to_stdout_is_a_usage_error(failing: Path) -> None:
    result = check("--json", "-", "--summary", "-")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--json - and --summary - would both write to stdout" in result.stderr
    assert "Traceback" not in result.output
    assert sorted(p.name for p in failing.iterdir()) == [
        ".eval-gate.yml",
        "baseline.jsonl",
        "results.jsonl",
    ]


def test_report_and_summary_in_one_file_is_a_usage_error(failing: Path) -> None:
    """The summary was written over the JSON report: one file, half of what was asked."""
    result = check("--json", "out.md", "--summary", "./out.md")
    assert result.exit_code == 2
    assert "--json and --summary both name ./out.md" in result.stderr
    assert not (failing / "out.md").exists()
    # Both to /dev/null discards both, as asked (examples/workflows/adaptive.yml does one).
    discarded = check("--json", "/dev/null", "--summary", "/dev/null")
    assert discarded.exit_code == 1 and discarded.stdout == ""


def test_warnings_reach_stderr_when_the_summary_goes_to_a_file(tmp_path: Path) -> None:
    """A warning that the file may be misread (flakefinder repeats read as parameters) was
    only inside the summary file: a user sending it to a file never saw it."""
    xml = Path(__file__).parents[1] / "ingest" / "fixtures" / "junit" / "pytest-flake.xml"
    warning = "look like pytest-flakefinder runs but are read as parameters"
    to_file = CliRunner().invoke(main, ["check", str(xml), "--summary", str(tmp_path / "s.md")])
    assert to_file.exit_code == 1
    assert to_file.stderr.count(warning) == 1 and "eval-gate: warning: " in to_file.stderr
    escaped = "flakefinder runs but are read as parameters"  # Markdown escapes the rest
    assert escaped in (tmp_path / "s.md").read_text(encoding="utf-8")
    for stdout_has_it in (["--summary", "-"], []):  # shown once, with the summary
        shown = CliRunner().invoke(main, ["check", str(xml), *stdout_has_it])
        assert escaped in shown.stdout and escaped not in shown.stderr
    as_json = CliRunner().invoke(main, ["check", str(xml), "--json", "-"])
    assert warning in as_json.stderr and json.loads(as_json.stdout)["warnings"]
    quiet = CliRunner().invoke(main, ["check", str(xml), "--json", "-", "-q"])
    assert warning not in quiet.stderr


def test_json_dash_is_the_report_file_streamed_a_part_at_a_time(
    failing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--json - printed one string of the whole report (400,000 stimuli: 3 GB where the file
    took 350 MB); it now writes the file's parts as they are made, the same text."""
    from gate import cli
    from gate.report import json_report

    monkeypatch.setattr(json_report, "STIMULI_PER_PART", 1)
    printed: list[str] = []
    show = cli.show
    monkeypatch.setattr(cli, "show", lambda text, **kw: (printed.append(text), show(text, **kw)))
    result = check("--json", "-")
    assert len(printed) == 2 + len(json.loads(result.stdout)["stimuli"])  # head, 5, tail
    assert check("--json", "report.json").exit_code == result.exit_code == 1
    assert result.stdout == (failing / "report.json").read_text(encoding="utf-8")


def test_ctrl_c_exits_130_not_the_code_of_a_failed_gate(
    failing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted, click printed "Aborted!" and exited 1, which a CI step reads as "a gate
    failed"; it is 130 (128 + SIGINT) now, and says so."""
    import gate.pipeline

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(gate.pipeline, "run_check", interrupted)
    result = check()
    assert result.exit_code == 130
    assert "eval-gate: interrupted" in result.stderr
