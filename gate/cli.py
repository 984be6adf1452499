"""The ``eval-gate`` command line: a thin shell over :mod:`gate.pipeline`.

Exit codes: 0 every gate passed, 1 a gate failed, 2 bad input, configuration or usage. An
exception nobody expected is a bug: one line on stderr and exit code 2, never a traceback and
never 1. Every line this command prints passes :func:`gate.redact.redact`; lines on stderr,
which quote file names, also :func:`gate.report.escape.log_text`.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import click

from gate import __version__
from gate.errors import EvalGateError, OutputError, describe_unexpected
from gate.ingest import FORMAT_MODULES, IngestOptions
from gate.redact import redact
from gate.report.escape import log_text, safe_text

F = TypeVar("F", bound=Callable[..., Any])


class BadInput(click.ClickException):
    """Bad input, configuration or usage: exit code 2, one clear line, no traceback."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(log_text(redact(message)))


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    say(f"eval-gate: warning: {message}")


def say(text: str) -> None:
    """One line on stderr: redacted, and escaped so that no file name can start a new line
    (``x\n::error::`` would be a workflow command in a CI log)."""
    click.echo(log_text(redact(text)), err=True)


def show(text: str) -> None:
    """Text (the Markdown summary, listings) on stdout: redacted, writable whatever it holds."""
    click.echo(safe_text(redact(text)), nl=False)


def _parse_map(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    mapping = {}
    for part in text.split(","):
        field, sep, column = part.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise click.BadParameter(
                f"{part!r} is not FIELD=COLUMN (e.g. stimulus=case_id,passed=ok)",
                param_hint="--map",
            )
        mapping[field.strip()] = column.strip()
    return mapping


def ingest_options(func: F) -> F:
    """Options that say how to read results (shared by check and validate)."""
    options = [
        click.option(
            "--format",
            "format_name",
            type=click.Choice(["auto", *FORMAT_MODULES]),
            default="auto",
            show_default=True,
            help="Format of the result files; auto detects it from each file's content.",
        ),
        click.option(
            "--map",
            "column_map",
            metavar="FIELD=COLUMN,...",
            help="Column mapping for generic CSV/JSONL, e.g. stimulus=case_id,passed=ok.",
        ),
        click.option(
            "--pass-threshold",
            type=click.FloatRange(0, 1),
            help="Score-only formats (Inspect, tau-bench): pass when the score reaches this.",
        ),
        click.option("--scorer", help="Inspect AI: the scorer that decides a trial."),
        click.option(
            "--junit-flakefinder",
            is_flag=True,
            help="JUnit: names like test_x[0] are pytest-flakefinder repeats, not parameters.",
        ),
        click.option("--suite", help="Suite name for files that carry none."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _ingest(
    format_name: str,
    column_map: str | None,
    pass_threshold: float | None,
    scorer: str | None,
    junit_flakefinder: bool,
    suite: str | None,
) -> IngestOptions:
    return IngestOptions(
        format=format_name,
        column_map=_parse_map(column_map),
        pass_threshold=pass_threshold,
        scorer=scorer,
        junit_flakefinder=junit_flakefinder,
        suite=suite,
    )


class _Commands(click.Group):
    """Commands defined elsewhere are imported only when they run or help lists them.

    ``action`` lives in :mod:`gate.github` (only that package knows GitHub exists) and
    imports the Markdown renderer and the REST client: a plain ``check`` must not pay for it.
    """

    lazy: ClassVar[dict[str, tuple[str, str]]] = {"action": ("gate.github.cli", "action_command")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy])

    def invoke(self, ctx: click.Context) -> Any:
        with warnings.catch_warnings():
            # A warning no command collects (validate reads files outside the pipeline) is
            # printed like every other line: redacted and escaped, not as Python shows it.
            warnings.showwarning = _show_warning
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvalGateError as error:
            raise BadInput(str(error)) from None
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as error:  # a bug: one line and exit 2; 1 means "a gate failed"
            raise BadInput(describe_unexpected(error)) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            import importlib

            module, attribute = self.lazy[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="eval-gate")
def main() -> None:
    """eval-gate: multi-trial eval results in, an honest CI verdict out."""


@main.command()
@click.argument("results", nargs=-1, required=True)
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help="Gate configuration (default: .eval-gate.yml when present).",
)
@click.option("--summary", type=click.Path(dir_okay=False), help="Write the Markdown summary here.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the JSON report.")
@click.option("--baseline", multiple=True, help="Results of the base branch (repeatable; globs).")
@click.option(
    "--k", type=click.IntRange(1), help="k of pass@k and pass^k (default: fewest trials)."
)
@click.option("--threshold", help="Gate: suite score ≥ this.")
@click.option("--min-pass-rate", help="Gate: suite pass rate ≥ this.")
@click.option("--min-pass-at-k", help="Gate: suite pass@k ≥ this (k from --k).")
@click.option("--min-pass-hat-k", help="Gate: suite pass^k ≥ this (k from --k).")
@click.option("--max-flakiness", help="Gate: every stimulus's flakiness ≤ this percent.")
@click.option(
    "--max-ci-half-width", help="Gate: half-width of the suite pass-rate interval ≤ this."
)
@click.option(
    "--max-regression", help="Gate: the candidate is not worse than the baseline by more."
)
@click.option(
    "--min-improvement",
    help="Gate: the candidate is better than the baseline by at least this.",
)
@click.option(
    "--bound",
    type=click.Choice(["estimate", "lower", "upper"]),
    help="Decide min gates on the point estimate or an interval bound.",
)
@click.option("--confidence", help="Level of every interval (default 0.95).")
@click.option(
    "--interval",
    type=click.Choice(["wilson", "jeffreys", "clopper-pearson", "beta"]),
    help="Interval method for one stimulus's pass rate (default wilson).",
)
@click.option(
    "--errors",
    type=click.Choice(["fail", "exclude"]),
    help="Errored trials count as failures (fail, default) or are left out (exclude).",
)
@ingest_options
def check(
    results: tuple[str, ...],
    config: str | None,
    summary: str | None,
    json_path: str | None,
    baseline: tuple[str, ...],
    format_name: str,
    column_map: str | None,
    pass_threshold: float | None,
    scorer: str | None,
    junit_flakefinder: bool,
    suite: str | None,
    **overrides: Any,
) -> None:
    """Score RESULTS (files or globs), check the gates and report.

    Prints the Markdown summary to stdout unless --summary names a file.
    Exit 0 when every gate passes, 1 when one fails, 2 on bad input or config.
    """
    from gate.config import DEFAULT_CONFIG_FILE
    from gate.fileio import atomic_write, refuse_overwriting
    from gate.ingest import input_files
    from gate.pipeline import request_from_options, run_check
    from gate.report.json_report import build_report, write_json
    from gate.report.markdown import render_summary

    try:
        if json_path or summary:
            # Before anything is read: the report must never replace what it reports on.
            default = DEFAULT_CONFIG_FILE if os.path.exists(DEFAULT_CONFIG_FILE) else None
            refuse_overwriting(
                {"--json": json_path, "--summary": summary},
                input_files(results, baseline, config=config or default),
            )
        request = request_from_options(
            results,
            config=config,
            overrides={k: None if v is None else str(v) for k, v in overrides.items()},
            baseline=baseline,
            ingest=_ingest(
                format_name, column_map, pass_threshold, scorer, junit_flakefinder, suite
            ),
        )
        outcome = run_check(request)
        for loaded in outcome.inputs:
            how = "detected" if loaded.detected else "given"
            say(f"eval-gate: read {loaded.path} as {loaded.format} ({how})")
        markdown = render_summary(outcome)
    except EvalGateError as error:
        raise BadInput(str(error)) from None
    # The verdict stands; an output that cannot be written is a warning, not exit code 2.
    try:
        if json_path:
            write_json(json_path, build_report(outcome))
    except OutputError as error:
        say(f"eval-gate: warning: the JSON report was not written: {error}")
    if summary:
        try:
            atomic_write(summary, markdown)
        except OutputError as error:
            say(f"eval-gate: warning: the summary was not written: {error}")
    else:
        show(markdown)
    say(
        f"eval-gate: {outcome.verdict.upper()} ({len(outcome.failed_gates)} of "
        f"{len(outcome.gates)} gates failed)"
    )
    sys.exit(outcome.exit_code)


@main.command()
@click.argument("files", nargs=-1, required=True)
@ingest_options
def validate(
    files: tuple[str, ...],
    format_name: str,
    column_map: str | None,
    pass_threshold: float | None,
    scorer: str | None,
    junit_flakefinder: bool,
    suite: str | None,
) -> None:
    """Check that FILES (files or globs) are valid results; report every bad file."""
    from gate.ingest import expand, load

    options = _ingest(format_name, column_map, pass_threshold, scorer, junit_flakefinder, suite)
    try:
        paths = expand(files)
    except EvalGateError as error:
        raise BadInput(str(error)) from None
    bad = 0
    for path in paths:
        try:
            table, loaded = load([path], options)
        except EvalGateError as error:
            bad += 1
            say(f"invalid: {error}")
            continue
        show(
            log_text(
                f"ok: {path} ({loaded[0].format}, {len(table.stimuli)} stimuli, "
                f"{len(table)} trials)"
            )
            + "\n"
        )
    if bad:
        raise BadInput(f"{bad} of {len(paths)} file(s) are invalid")
    if len(paths) > 1:
        # Each file is valid alone; `check` merges them, which can still fail (a trial
        # given in two files, a suite declared two ways).
        try:
            load(paths, options)
        except EvalGateError as error:
            raise BadInput(f"the files are valid one by one but not together: {error}") from None


@main.command()
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print the JSON Schema NAME (results, trial-record, counts, config, ...), or list them."""
    from gate.schemas import SCHEMA_NAMES, schema_text

    if name is None:
        for known in SCHEMA_NAMES:
            click.echo(known)
        return
    if name not in SCHEMA_NAMES:
        raise click.BadParameter(
            f"{name!r} is not a schema; choose one of {', '.join(SCHEMA_NAMES)}",
            param_hint="NAME",
        )
    click.echo(schema_text(name), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
