"""``eval-gate action --dry-run [--html FILE]``: what the action would publish, nothing sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from tests.github.fake_github import FakeGitHub

pytest.importorskip("gate.pipeline")
from gate.github.cli import action_command

FAILING = EXAMPLES / "failing"


def dry_run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    result = runner.invoke(
        action_command,
        ["--dry-run", *args],
        env={"GITHUB_STEP_SUMMARY": None, "GITHUB_OUTPUT": None, **(env or {})},
    )
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.skipif(not FAILING.is_dir(), reason="examples/failing is not there yet")
def test_dry_run_prints_summary_annotations_outputs_and_comment(
    tmp_path: Path, fake_github: FakeGitHub
) -> None:
    html = tmp_path / "preview.html"
    code, out, _ = dry_run(
        "--input",
        f"results={FAILING / 'results.jsonl'}",
        "--input",
        f"config={FAILING / '.eval-gate.yml'}",
        "--html",
        str(html),
        env={"GITHUB_API_URL": fake_github.url, "INPUT_GITHUB_TOKEN": "ghs_x" * 4},
    )
    assert code == 1
    assert "==> job summary\n\n## ❌ eval-gate: FAIL" in out
    assert "::error title=eval-gate%3A gate failed" in out
    assert "verdict=fail" in out
    assert "==> pull request comment: comment (always, id default)" in out
    assert "<!-- eval-gate:sticky id=default digest=" in out
    assert fake_github.requests == []  # a dry run calls no API
    page = html.read_text(encoding="utf-8")
    assert page.count("<section>") == 2 and "<table>" in page and "Pull request comment" in page
    assert not (Path.cwd() / "eval-gate-report.json").exists()


def test_dry_run_with_bad_input_exits_2() -> None:
    code, out, _ = dry_run("--input", "results=does/not/exist/*.jsonl")
    assert code == 2
    assert "eval-gate: ERROR" in out and "verdict=error" in out
    # the sticky comment says it too, or a pull request keeps an earlier commit's verdict
    assert "==> pull request comment: comment (always, id default)" in out
    assert "<!-- eval-gate:sticky id=default digest=" in out


def test_unknown_input_names_are_refused() -> None:
    code, _, err = dry_run("--input", "result=x.jsonl")
    assert code == 2 and "expected NAME=VALUE" in err


def test_html_needs_dry_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(action_command, ["--html", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and "--html needs --dry-run" in result.stderr


def test_the_command_is_registered_in_the_cli() -> None:
    import click

    from gate.cli import main

    # `action` is a lazy subcommand: listed by the group, imported when asked for.
    with click.Context(main) as context:
        assert "action" in main.list_commands(context)
        assert main.get_command(context, "action") is action_command
    result = CliRunner().invoke(main, ["action", "--help"])
    assert result.exit_code == 0 and "--dry-run" in result.output
