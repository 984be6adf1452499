"""The ``eval-gate`` command line: a thin shell over :mod:`gate.pipeline`.

Exit codes: 0 every gate passed, 1 a gate failed, 2 bad input, configuration or usage,
3 inconclusive (the data cannot decide yet; ``--on-inconclusive`` maps it to 0 or 1). An
exception nobody expected is a bug: one line on stderr and exit code 2, never a traceback and
never 1. Every line this command prints passes :func:`gate.redact.redact`; lines on stderr,
which quote file names, also :func:`gate.report.escape.log_text`.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import click

from gate import __version__
from gate.errors import UNUSABLE_NAME, EvalGateError, OutputError, describe_unexpected
from gate.ingest import FORMAT_MODULES, IngestOptions
from gate.redact import redact
from gate.report.escape import log_text, safe_text

if TYPE_CHECKING:
    from gate.config import GateConfig
    from gate.metrics.usage import UsageSummary
    from gate.planning import StimulusGroup

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
    _echo(log_text(redact(text)), err=True)


def show(text: str, color: bool | None = None) -> None:
    """Text (the Markdown summary, listings) on stdout: redacted, writable whatever it holds.
    ``color``: keep our colour codes even where click would strip them (None: click decides)."""
    _echo(safe_text(redact(text)), nl=False, color=color)


def _echo(text: str, *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """``click.echo`` that a closed pipe or a full disk cannot turn into another exit code.

    Left to click, a failed write to stderr (``2>/dev/full``, ``2>&1 | head -1``) ended a
    passing check with exit code 1, "a gate failed". A stream that fails is sent to the null
    device from then on (so that the exit's own flush cannot fail again) and the command
    goes on to its verdict; stdout's failure is a warning unless the reader left (EPIPE).
    """
    stream = sys.stderr if err else sys.stdout
    try:
        click.echo(text, err=err, nl=nl, color=color)
    except OSError as error:
        _to_null_device(stream)
        if not err and error.errno != errno.EPIPE:
            say(f"eval-gate: warning: stdout: cannot write: {error.strerror}")


def _to_null_device(stream: Any) -> None:
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):  # not a file (a test runner's buffer): nothing to redirect
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


def _tolerant_output() -> None:
    """Where stdout or stderr is not UTF-8 (``LC_ALL=en_US.ISO-8859-1``, a Windows code
    page), a character it cannot hold is written as ``?``: every command printed ✔ or ❔ and
    died of UnicodeEncodeError there."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        reconfigure = getattr(stream, "reconfigure", None)
        try:
            utf8 = codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if not utf8 and reconfigure is not None:
            reconfigure(errors="replace")


if TYPE_CHECKING:
    _FloatParam = click.ParamType[float]  # generic since click 8.2
else:
    _FloatParam = click.ParamType


class Rate(_FloatParam):
    """An option that is a rate: a fraction (0.7) or a percent (70%), as everywhere."""

    name = "rate"

    def __init__(self, **bounds: Any) -> None:
        self.bounds = bounds

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        from gate.rates import parse_rate

        try:
            return parse_rate(value, "value", **self.bounds)
        except EvalGateError as error:
            self.fail(str(error), param, ctx)


def _parse_map(text: str | None, option: str = "--map") -> dict[str, str]:
    if not text:
        return {}
    from gate.ingest.tabular import parse_column_map

    try:
        return parse_column_map(text)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint=option) from None


def ingest_options(func: F) -> F:
    """Options that say how to read results (shared by check, validate, plan and init); the
    command receives them as one ``ingest: IngestOptions``."""
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
            type=Rate(),
            help="Score-only formats (Inspect, tau-bench): pass when the score reaches this "
            "(0-1, or a percent).",
        ),
        click.option(
            "--scorer",
            help="Inspect AI: the scorer that decides a trial (NAME, or NAME.KEY for one key "
            "of a scorer whose value is a dict).",
        ),
        click.option(
            "--junit-flakefinder",
            is_flag=True,
            help="JUnit: names like test_x[0] are pytest-flakefinder repeats, not parameters.",
        ),
        click.option("--suite", help="Suite name for files that carry none."),
        click.option(
            "--duplicates",
            type=click.Choice(["error", "pool", "newest"]),
            default="error",
            show_default=True,
            help="The same trial in several files (re-run logs): an error, pool every file's "
            "trials, or keep the newest file's (by its own start time).",
        ),
    ]

    @functools.wraps(func)
    def with_ingest(*args: Any, **kwargs: Any) -> Any:
        kwargs["ingest"] = _ingest(
            kwargs.pop("format_name"),
            kwargs.pop("column_map"),
            kwargs.pop("pass_threshold"),
            kwargs.pop("scorer"),
            kwargs.pop("junit_flakefinder"),
            kwargs.pop("suite"),
            kwargs.pop("duplicates"),
        )
        return func(*args, **kwargs)

    command = cast(F, with_ingest)
    for option in reversed(options):
        command = option(command)
    return command


def gate_options(func: F) -> F:
    """Options that set or override gates (shared by check and plan); each is the action
    input of the same name in snake_case."""
    options = [
        click.option(
            "--k", type=click.IntRange(1), help="k of pass@k and pass^k (default: fewest trials)."
        ),
        click.option("--threshold", metavar="SCORE", help="Gate: suite score ≥ this."),
        click.option("--min-pass-rate", metavar="RATE", help="Gate: suite pass rate ≥ this."),
        click.option(
            "--min-pass-at-k", metavar="RATE", help="Gate: suite pass@k ≥ this (k from --k)."
        ),
        click.option(
            "--min-pass-hat-k", metavar="RATE", help="Gate: suite pass^k ≥ this (k from --k)."
        ),
        click.option(
            "--max-flakiness",
            metavar="RATE",
            help="Gate: every stimulus's flakiness (minority outcomes / trials) ≤ this, e.g. 0.2 "
            "or 20%.",
        ),
        click.option(
            "--max-ci-half-width",
            metavar="WIDTH",
            help="Gate: half-width of the suite pass-rate interval ≤ this.",
        ),
        click.option(
            "--max-regression",
            metavar="MARGIN",
            help="Gate: the candidate is not worse than the baseline by more than this.",
        ),
        click.option(
            "--min-improvement",
            metavar="MARGIN",
            help="Gate: the candidate is better than the baseline by at least this.",
        ),
        click.option(
            "--detectable",
            metavar="MARGIN",
            help="Regression gates: the margin that decides the other way (default: the gate's "
            "own margin + 0.05): --max-regression passes once a drop beyond it is ruled out.",
        ),
        click.option(
            "--sequential/--no-sequential",
            default=None,
            help="Decide interval gates on confidence sequences, valid however often the check is "
            "re-run as trials arrive (stop at the first pass or fail).",
        ),
        click.option(
            "--on-inconclusive",
            type=click.Choice(["inconclusive", "fail", "pass"]),
            help="Exit code of an inconclusive verdict: inconclusive (3, default), fail (1) or "
            "pass (0).",
        ),
        click.option(
            "--bound",
            type=click.Choice(["estimate", "interval", "lower", "upper"]),
            help="Decide gates on the point estimate (pass/fail, no error control) or their "
            "interval (pass, fail or inconclusive; lower/upper name the bound that must clear "
            "the target). Flakiness has no interval: its gate is always on the estimate.",
        ),
        click.option(
            "--confidence", metavar="LEVEL", help="Level of every interval (default 0.95)."
        ),
        click.option(
            "--interval",
            type=click.Choice(["mid-p", "wilson", "jeffreys", "clopper-pearson", "beta"]),
            help="Interval method for one stimulus's pass rate (default mid-p).",
        ),
        click.option(
            "--errors",
            type=click.Choice(["fail", "exclude"]),
            help="Errored trials count as failures (fail, default) or are left out (exclude).",
        ),
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
    duplicates: str,
) -> IngestOptions:
    return IngestOptions(
        format=format_name,
        column_map=_parse_map(column_map),
        pass_threshold=pass_threshold,
        scorer=scorer,
        junit_flakefinder=junit_flakefinder,
        suite=suite,
        duplicates=duplicates,
    )


def baseline_options(
    results: IngestOptions, baseline_format: str | None, baseline_map: str | None
) -> IngestOptions | None:
    """How to read the baseline: as the results, but for its own format and map if given."""
    if baseline_format is None and baseline_map is None:
        return None
    from dataclasses import replace

    return replace(
        results,
        format=baseline_format or results.format,
        column_map=(
            _parse_map(baseline_map, "--baseline-map")
            if baseline_map is not None
            else results.column_map
        ),
    )


class _Commands(click.Group):
    """Commands defined elsewhere are imported only when they run or help lists them.

    ``action`` lives in :mod:`gate.github` (only that package knows GitHub exists) and
    imports the Markdown renderer and the REST client: a plain ``check`` must not pay for it.
    """

    lazy: ClassVar[dict[str, tuple[str, str]]] = {"action": ("gate.github.cli", "action_command")}

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _tolerant_output()
        return super().main(*args, **kwargs)

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
        except KeyboardInterrupt:  # click's "Aborted!" exits 1, the code of "a gate failed"
            say("eval-gate: interrupted")
            raise click.exceptions.Exit(INTERRUPTED) from None
        except Exception as error:  # a bug: one line and exit 2; 1 means "a gate failed"
            raise BadInput(describe_unexpected(error)) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            import importlib

            module, attribute = self.lazy[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)


#: the exit code of a check stopped by Ctrl-C (128 + SIGINT, as shells report it)
INTERRUPTED = 130


class FilePath(click.Path):
    """click.Path whose check of a name no file can have (a NUL, a lone surrogate: only a
    caller in the same process can pass one) is a usage error, not click's ValueError."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except ValueError:
            self.fail(f"{value!r}: {UNUSABLE_NAME}", param, ctx)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="eval-gate")
def main() -> None:
    """eval-gate: multi-trial eval results in, an honest CI verdict out."""


@main.command()
@click.argument("results", nargs=-1, required=True)
@click.option(
    "--config",
    type=FilePath(dir_okay=False),
    help="Gate configuration (default: .eval-gate.yml when present).",
)
@click.option(
    "--summary",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="Write the Markdown summary here (- for stdout, the default off a terminal).",
)
@click.option(
    "--json",
    "json_path",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="Write the JSON report here; - prints it to stdout instead of the Markdown.",
)
@click.option(
    "--baseline",
    multiple=True,
    metavar="FILES",
    help="Results of the base branch (repeatable; globs).",
)
@click.option(
    "--baseline-format",
    type=click.Choice(["auto", *FORMAT_MODULES]),
    help="Format of the baseline files, when not --format's (default: the same).",
)
@click.option(
    "--baseline-map",
    metavar="FIELD=COLUMN,...",
    help="Column mapping of the baseline files, when not --map's (default: the same).",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Print only the verdict line (and errors); --json - and --summary - still print.",
)
@gate_options
@ingest_options
def check(
    results: tuple[str, ...],
    config: str | None,
    summary: str | None,
    json_path: str | None,
    baseline: tuple[str, ...],
    baseline_format: str | None,
    baseline_map: str | None,
    quiet: bool,
    ingest: IngestOptions,
    **overrides: Any,
) -> None:
    """Score RESULTS (files or globs), check the gates and report.

    On a terminal, prints a rendered view (colour unless NO_COLOR is set); otherwise the
    Markdown summary, unless --summary names a file. --json - prints the JSON report
    instead, --summary - the Markdown. Exit 0 when every gate passes, 1 when one fails,
    2 on bad input or config, 3 when the data cannot decide a gate yet (inconclusive).
    """
    from gate.fileio import atomic_write
    from gate.gcpause import no_cycle_collection
    from gate.pipeline import request_from_options, run_check
    from gate.report import wording
    from gate.report.json_report import report_parts, write_report
    from gate.report.markdown import render_summary

    json_to_stdout = json_path == "-"
    if json_to_stdout and summary == "-":
        raise click.UsageError(
            "--json - and --summary - would both write to stdout; send one of them to a file"
        )
    if (
        json_path
        and summary
        and "-" not in (json_path, summary)
        and os.path.realpath(json_path) == os.path.realpath(summary)
        and not _is_device(summary)  # /dev/null for both: discard both, as asked
    ):
        raise click.UsageError(
            f"--json and --summary both name {summary}: the summary would replace the "
            "report; give them different files"
        )
    try:
        if json_path or summary:
            # Before anything is read: the report must never replace what it reports on.
            _refuse_overwriting_inputs(
                {
                    "--json": None if json_to_stdout else json_path,
                    "--summary": None if summary == "-" else summary,
                },
                results,
                baseline,
                config=config,
            )
        request = request_from_options(
            results,
            config=config,
            overrides={k: None if v is None else str(v) for k, v in overrides.items()},
            baseline=baseline,
            ingest=ingest,
            baseline_ingest=baseline_options(ingest, baseline_format, baseline_map),
        )
        outcome = run_check(request)
        if not quiet:
            for loaded in outcome.inputs:
                how = "detected" if loaded.detected else "given"
                say(f"eval-gate: read {loaded.path} as {loaded.format} ({how})")
            if json_to_stdout or (summary and summary != "-"):
                _say_warnings(outcome.warnings)  # else stdout shows them with the summary
    except EvalGateError as error:
        raise BadInput(str(error)) from None
    # The verdict stands; an output that cannot be written is a warning, not exit code 2.
    if json_path and not json_to_stdout:
        try:
            write_report(json_path, outcome)
        except OutputError as error:
            say(f"eval-gate: warning: the JSON report was not written: {error}")
    if summary and summary != "-":
        try:
            atomic_write(summary, render_summary(outcome))
        except OutputError as error:
            say(f"eval-gate: warning: the summary was not written: {error}")
    # stdout carries one document, so that it can be piped: the JSON report or the Markdown;
    # a person at a terminal gets the rendered view instead of the Markdown.
    if json_to_stdout:
        with no_cycle_collection():  # streamed, as to a file: 400,000 stimuli made 3 GB
            for part in report_parts(outcome):
                show(part)
    elif summary == "-":
        show(render_summary(outcome))
    elif quiet:
        pass
    elif _stdout_is_terminal():
        from gate.report.terminal import Terminal, render_terminal

        terminal = Terminal.detect(sys.stdout)
        show(render_terminal(outcome, terminal), color=terminal.color)
    elif not summary:
        show(render_summary(outcome))
    say(wording.exit_line(outcome))
    sys.exit(outcome.exit_code)


def _stdout_is_terminal() -> bool:
    """Whether a person is reading stdout (a TTY), not a pipe, a file or a test runner."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


@main.command()
@click.option(
    "--config",
    type=FilePath(dir_okay=False),
    help="Gate configuration (default: .eval-gate.yml when present).",
)
@click.option(
    "--stimuli",
    type=click.IntRange(1, 100_000),
    help="Stimuli in the run (default: the pilot's).",
)
@click.option(
    "--expect",
    type=Rate(),
    help="Expected pass rate of every stimulus (0-1, or a percent); or give --pilot.",
)
@click.option(
    "--pilot",
    multiple=True,
    metavar="FILES",
    help="Results of a pilot run (repeatable; globs): each stimulus's pass rate is its "
    "expectation.",
)
@click.option(
    "--power",
    type=Rate(open_low=True, open_high=True),
    default=0.8,
    show_default=True,
    help="Probability with which each gate must be decided.",
)
@click.option(
    "--json",
    "json_path",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="Write the plan as JSON here ('-': stdout).",
)
@gate_options
@ingest_options
def plan(
    config: str | None,
    stimuli: int | None,
    expect: float | None,
    pilot: tuple[str, ...],
    power: float,
    json_path: str | None,
    ingest: IngestOptions,
    **overrides: Any,
) -> None:
    """How many trials per stimulus each gate needs, before the run (by simulation).

    Give the expected pass rate (--expect P with --stimuli M) or a pilot run (--pilot
    FILES); the gates come from the configuration and the same options as check.
    """
    from gate.config import load_config
    from gate.planning import plan as make_plan
    from gate.report.plan_report import build_plan_report, render_plan

    if (expect is None) == (not pilot):
        raise click.UsageError("give either --expect P (with --stimuli M) or --pilot FILES")
    try:
        if json_path and json_path != "-":
            # Before anything is read: the plan must never replace the pilot it is made from.
            _refuse_overwriting_inputs({"--json": json_path}, pilot, config=config)
        gate_config = load_config(
            config, {k: None if v is None else str(v) for k, v in overrides.items()}
        )
        if expect is not None:
            if stimuli is None:
                raise click.UsageError("--expect needs --stimuli M (how many stimuli)")
            rates = [expect] * stimuli
            source = "expect"
            pilot_usage = None
            counts = groups = None
        else:
            rates, counts, groups, pilot_usage = _pilot(pilot, ingest, gate_config.errors, stimuli)
            source = "pilot"
        result = make_plan(
            gate_config,
            rates,
            power=power,
            source=source,
            pilot_usage=pilot_usage,
            pilot=counts,
            groups=groups,
        )
    except EvalGateError as error:
        raise BadInput(str(error)) from None
    if json_path == "-":
        from gate.report.json_report import dumps

        show(dumps(build_plan_report(result)))
        return
    if json_path:
        from gate.fileio import atomic_write
        from gate.report.json_report import dumps

        atomic_write(json_path, dumps(build_plan_report(result)))
    show(render_plan(result))


def _pilot(
    patterns: tuple[str, ...], options: IngestOptions, errors: str, stimuli: int | None
) -> tuple[list[float], tuple[list[int], list[int]], list[StimulusGroup], UsageSummary | None]:
    """Each pilot stimulus's pass rate c/n (with --stimuli, repeated in order to that many),
    the pilot's trials and passes per stimulus (the plan draws the rates from them), its
    suite and tags (a gate's tag: and suite: choose by them), and the pilot's cost and
    duration per trial when its trials report them."""
    from gate.ingest import load
    from gate.pipeline import table_usage

    table, _ = load(patterns, options)
    summary = table.summary(errors == "fail")
    counted = [
        (n, c, record)
        for n, c, record in zip(
            summary.n.tolist(), summary.c.tolist(), summary.records, strict=True
        )
        if n > 0
    ]
    if not counted:
        raise BadInput("the pilot has no counted trial")
    rates = [c / n for n, c, _ in counted]
    count = stimuli or len(rates)
    found = table_usage(table)
    trials = [n for n, _, _ in counted]
    passes = [c for _, c, _ in counted]
    groups: list[StimulusGroup] = [(record.suite, record.tags) for _, _, record in counted]
    repeated = [rates[i % len(rates)] for i in range(count)]
    return repeated, (trials, passes), groups, found[1] if found else None


@main.command()
@click.argument("files", nargs=-1)
@click.option(
    "--config",
    type=FilePath(dir_okay=False),
    help="A gate configuration to check too; with FILES, that its gates can be evaluated on them.",
)
@ingest_options
def validate(
    files: tuple[str, ...],
    config: str | None,
    ingest: IngestOptions,
) -> None:
    """Check that FILES (files or globs) are valid results and --config a valid configuration.

    Reports every bad file. Exit 0 when all are valid, 2 otherwise.
    """
    from gate.ingest import expand, load
    from gate.report.wording import plural

    if not files and config is None:
        raise click.UsageError("name result FILES, a --config file, or both")
    try:
        paths = expand(files)
    except EvalGateError as error:
        raise BadInput(str(error)) from None
    bad = 0
    gate_config = None
    if config is not None:
        from gate.config import load_config

        try:
            gate_config = load_config(config)
        except EvalGateError as error:
            bad += 1
            say(f"invalid: {error}")
        else:
            count = len(gate_config.gates)
            show(log_text(f"ok: {config} (configuration, {plural(count, 'gate')})") + "\n")
    for path in paths:
        try:
            table, loaded = load([path], ingest)
        except EvalGateError as error:
            bad += 1
            say(f"invalid: {error}")
            continue
        counted = _counted(table, gate_config.errors if gate_config else "fail")
        show(log_text(f"ok: {path} ({loaded[0].format}, {counted})") + "\n")
    if bad:
        checked = len(paths) + (config is not None)
        raise BadInput(f"{bad} of {plural(checked, 'file')} {'is' if bad == 1 else 'are'} invalid")
    if len(paths) > 1:
        # Each file is valid alone; `check` merges them, which can still fail (a trial
        # given in two files, a suite declared two ways).
        try:
            load(paths, ingest)
        except EvalGateError as error:
            raise BadInput(f"the files are valid one by one but not together: {error}") from None
    if gate_config is not None and paths:
        _evaluate_config(config or "", gate_config, paths, ingest)


def _counted(table: Any, errors: str) -> str:
    """What ``check`` would count in ``table``, in its words: the same scoring does it."""
    from gate.report.wording import plural, stimuli_count
    from gate.scoring import score_table

    try:
        suite = score_table(table, errors="exclude" if errors == "exclude" else "fail")
    except EvalGateError:  # no stimulus has a counted trial
        return f"{stimuli_count(len(table.stimuli))}, none with a counted trial"
    text = (
        f"{stimuli_count(len(suite.stimuli))}, {plural(suite.trials, 'trial')} "
        f"({suite.errors:,} errored, {suite.skipped:,} skipped)"
    )
    if suite.not_scored:
        text += f"; {stimuli_count(len(suite.not_scored))} with no counted trial, not scored"
    return text


def _evaluate_config(
    name: str, gate_config: GateConfig, paths: list[str], options: IngestOptions
) -> None:
    """Run the configuration's gates on the results: what `check` would refuse, validate does.

    Regression gates need a baseline, which only `check --baseline` takes: they are left out.
    """
    from dataclasses import replace

    from gate.config import REGRESSION_KINDS
    from gate.pipeline import CheckRequest, run_check
    from gate.report.wording import plural

    local = tuple(g for g in gate_config.gates if g.kind not in REGRESSION_KINDS)
    request = CheckRequest(
        results=tuple(paths), config=replace(gate_config, gates=local), ingest=options
    )
    try:
        run_check(request)
    except EvalGateError as error:
        raise BadInput(f"{name} cannot be evaluated on these results: {error}") from None
    left_out = len(gate_config.gates) - len(local)
    need = "needs" if left_out == 1 else "need"
    note = f" ({plural(left_out, 'regression gate')} {need} check --baseline)" if left_out else ""
    show(log_text(f"ok: {name} can be evaluated on these results{note}") + "\n")


@main.command()
@click.argument("results", nargs=-1)
@click.option(
    "--output",
    "-o",
    type=FilePath(dir_okay=False, allow_dash=True),
    help="Where to write the configuration (default .eval-gate.yml); - for stdout.",
)
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@ingest_options
def init(
    results: tuple[str, ...],
    output: str | None,
    force: bool,
    ingest: IngestOptions,
) -> None:
    """Write a commented gate configuration (.eval-gate.yml).

    Without RESULTS: a template of every gate kind with Vally's guidance. With
    RESULTS (files or globs): gates suggested from them, each passing on them, each
    commented with the numbers behind it.
    """
    import os

    from gate.config import DEFAULT_CONFIG_FILE
    from gate.config_template import suggest, template

    output = output or DEFAULT_CONFIG_FILE
    to_stdout = output == "-"
    if not to_stdout and os.path.lexists(output) and not force:
        raise BadInput(f"{output} exists; add --force to replace it, or choose --output")
    name = DEFAULT_CONFIG_FILE if to_stdout else output
    try:
        if not to_stdout:  # --force replaces an old configuration, never the results read
            _refuse_overwriting_inputs({"--output": output}, results, default_config=False)
        if results:
            from gate.ingest import load
            from gate.pipeline import table_usage
            from gate.scoring import score_table

            table, loaded = load(results, ingest)
            found = table_usage(table)
            usage = found[1] if found else None
            text = suggest(score_table(table), [item.path for item in loaded], name, usage)
        else:
            text = template(name)
        if to_stdout:
            show(text)
            return
        from gate.fileio import atomic_write

        atomic_write(output, text)
    except EvalGateError as error:
        raise BadInput(str(error)) from None
    say(f"eval-gate: wrote {output}; check it with: eval-gate validate --config {output}")


def _refuse_overwriting_inputs(
    outputs: Mapping[str, str | None],
    *patterns: Sequence[str],
    config: str | None = None,
    default_config: bool = True,
) -> None:
    """Exit code 2 when an output path is one of the files the patterns name, ``config``,
    or (``default_config``) the .eval-gate.yml that applies when no --config is given."""
    from gate.config import default_config_path
    from gate.fileio import refuse_overwriting
    from gate.ingest import input_files

    if config is None and default_config:
        config = default_config_path()
    refuse_overwriting(outputs, input_files(*patterns, config=config))


def _is_device(path: str) -> bool:
    """True for an existing path that is not a regular file or folder (/dev/null, a pipe)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _say_warnings(warnings: Sequence[str]) -> None:
    """The reading's warnings (a likely misreading, left-out values) on stderr, where a user
    whose summary goes to a file still sees them; as many as the summary shows."""
    from gate.report import wording

    for text in wording.shown_warnings(warnings):
        say(f"eval-gate: warning: {text}")


@main.command()
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print the JSON Schema NAME (results, trial-record, counts, config, ...), or list them."""
    from gate.schemas import SCHEMA_NAMES, schema_text

    if name is None:
        for known in SCHEMA_NAMES:
            show(known + "\n")
        return
    if name not in SCHEMA_NAMES:
        raise click.BadParameter(
            f"{name!r} is not a schema; choose one of {', '.join(SCHEMA_NAMES)}",
            param_hint="NAME",
        )
    show(schema_text(name))


if __name__ == "__main__":  # pragma: no cover
    main()
