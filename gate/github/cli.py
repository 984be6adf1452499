"""``eval-gate action``: run the action outside a runner, or preview it with ``--dry-run``.

Inputs are read exactly as in the container (``INPUT_<NAME>`` variables), and ``--input
NAME=VALUE`` sets one the way a workflow's ``with:`` does. ``--dry-run`` computes the
verdict and prints the job summary, annotations, outputs and the PR comment it would post,
without calling the API or writing any file; ``--html FILE`` renders summary and comment
with markdown-it-py for a look in a browser.
"""

from __future__ import annotations

import html
import os
import sys
from typing import TYPE_CHECKING

import click

from gate.cli import FilePath, say, show
from gate.fileio import atomic_write
from gate.github.entrypoint import Evaluation, evaluate, main
from gate.github.inputs import INPUT_DEFAULTS, env_name
from gate.github.runner import annotation_commands
from gate.redact import redacting
from gate.report.escape import log_text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>eval-gate: action preview</title>
<style>
body {{ font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       max-width: 1012px; margin: 2em auto; color: #1f2328; }}
section {{ border: 1px solid #d1d9e0; border-radius: 6px; padding: 0 1em 1em;
          margin-bottom: 2em; }}
h1.frame {{ font-size: 12px; color: #59636e; text-transform: uppercase; }}
table {{ border-collapse: collapse; }} th, td {{ border: 1px solid #d1d9e0; padding: 4px 10px; }}
code {{ background: #eff1f3; padding: 0 3px; border-radius: 4px; }}
blockquote {{ border-left: 4px solid #d1d9e0; margin: 0; padding-left: 1em; color: #59636e; }}
</style></head><body>
{sections}
</body></html>
"""


def markdown_renderer() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough, raw HTML kept (GitHub allows what we use)."""
    from markdown_it import MarkdownIt  # only --html renders: keep it off every other path

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def preview_html(evaluation: Evaluation) -> str:
    """A standalone page with the job summary and the comment as GitHub would show them."""
    renderer = markdown_renderer()
    parts = [("Job summary", evaluation.summary)]
    if evaluation.comment is not None:
        parts.append(("Pull request comment", evaluation.comment.text))
    sections = "\n".join(
        f'<section><h1 class="frame">{html.escape(title)}</h1>\n{renderer.render(text)}</section>'
        for title, text in parts
    )
    return _PAGE.format(sections=sections)


def _comment_plan(evaluation: Evaluation) -> str:
    inputs = evaluation.inputs
    if inputs is None or evaluation.comment is None:
        return "no comment: the action's inputs are invalid"
    if inputs.comment == "off":
        return "no comment: comment is off"
    if inputs.comment == "on-failure" and evaluation.verdict == "pass":  # fail, inconclusive, error
        return "comment (on-failure): only an existing comment would be updated"
    return f"comment ({inputs.comment}, id {inputs.comment_id}): created or updated in place"


@click.command("action")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the summary, annotations, outputs and PR comment; call no API, write no file.",
)
@click.option(
    "--html",
    "html_path",
    type=FilePath(dir_okay=False),
    help="With --dry-run: also render the summary and the comment to this HTML file.",
)
@click.option(
    "--input",
    "-i",
    "input_values",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set an action input, as a workflow's `with:` does (repeatable).",
)
@click.option(
    "--event",
    "event_path",
    type=FilePath(exists=True, dir_okay=False),
    help="An event payload JSON (sets GITHUB_EVENT_PATH).",
)
def action_command(
    dry_run: bool, html_path: str | None, input_values: tuple[str, ...], event_path: str | None
) -> None:
    """Run the GitHub Action here, with inputs from INPUT_* variables and --input.

    Exit codes as `eval-gate check` (0 pass, 1 a gate failed, 2 bad input, 3 inconclusive),
    softened by the fail_on input.
    """
    given: dict[str, list[str]] = {}
    for item in input_values:
        name, sep, value = item.partition("=")
        if not sep or name not in INPUT_DEFAULTS:
            raise click.BadParameter(
                f"{item!r}: expected NAME=VALUE with NAME one of {', '.join(INPUT_DEFAULTS)}",
                param_hint="--input",
            )
        given.setdefault(name, []).append(value)
    env = dict(os.environ)
    # An input given twice gets both values as lines (results and baseline take one glob each).
    env.update({env_name(name): "\n".join(values) for name, values in given.items()})
    if event_path:
        env["GITHUB_EVENT_PATH"] = event_path
    if html_path and not dry_run:
        raise click.UsageError("--html needs --dry-run")
    if not dry_run:
        sys.exit(main(env))
    with redacting(env):
        code = _dry_run(env, html_path)
    sys.exit(code)


def _dry_run(env: dict[str, str], html_path: str | None) -> int:
    """Print what the action would publish, redacted as the action redacts it."""

    def echo(text: str = "") -> None:
        show(text + "\n")

    if html_path:
        from gate.fileio import refuse_overwriting
        from gate.ingest import input_files

        given = [env.get(env_name(name), "").splitlines() for name in ("results", "baseline")]
        refuse_overwriting({"--html": html_path}, input_files(*given))
    evaluation = evaluate(env, write_report=False)
    echo("==> job summary\n")
    echo(evaluation.summary)
    echo("==> annotations\n")
    for command in annotation_commands(evaluation.annotations):
        echo(command)
    echo("\n==> outputs\n")
    for name, value in evaluation.outputs.items():
        echo(f"{name}={log_text(value)}")
    echo(f"\n==> pull request comment: {_comment_plan(evaluation)}\n")
    if evaluation.comment is not None:
        echo(evaluation.comment.text)
    if html_path:
        atomic_write(html_path, preview_html(evaluation))
        say(f"eval-gate: preview written to {html_path}")
    return evaluation.exit_code
