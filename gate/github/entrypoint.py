"""The action's entrypoint: the ``eval-gate check`` pipeline, published the GitHub way.

Order matters: the verdict is computed first and decides the exit code alone, and the JSON
report is written; then the comment is attempted (any failure there becomes a notice); then
the annotations are printed, so that a "no PR comment" warning is ranked with the others
before the per-level cap rather than after it; then the outputs, and the job summary last so
that it can carry the notice, right under the verdict line where trimming cannot reach it.

Exit codes are those of ``eval-gate check`` (0 pass, 1 a gate failed, 2 bad input or
configuration), softened by the ``fail_on`` input: ``errors`` turns a failed gate into 0,
``never`` turns everything into 0.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from gate.errors import EvalGateError, OutputError, describe_unexpected
from gate.fileio import refuse_overwriting
from gate.github.api import ApiError, GitHubApi
from gate.github.comment import (
    CommentBody,
    CommentResult,
    build_comment_body,
    failure_result,
    publish_comment,
)
from gate.github.event import RunContext, context_from_env, find_pull_request
from gate.github.inputs import ActionInputs, read_inputs
from gate.github.runner import (
    annotation_command,
    annotation_commands,
    append_summary,
    log_line,
    ranked_with,
    write_outputs,
)
from gate.reading import confined_to
from gate.redact import redact, redacting
from gate.report import wording
from gate.report.annotations import Annotation, build_annotations
from gate.report.escape import md_text, safe_text

if TYPE_CHECKING:
    from gate.ingest import IngestOptions
    from gate.pipeline import CheckOutcome, CheckRequest

#: every output the action sets (action.yml ``outputs``); the headline numbers come from
#: :meth:`CheckOutcome.headline`.
OUTPUT_NAMES = (
    "verdict",
    "report",
    "pass_rate",
    "pass_at_k",
    "pass_hat_k",
    "k",
    "stimuli",
    "trials",
    "flaky_stimuli",
    "failed_gates",
    "inconclusive_gates",
    "metrics",
    "comment_url",
)


@dataclass
class Evaluation:
    """What the action computed, before anything is published."""

    inputs: ActionInputs | None
    context: RunContext
    verdict: str  # pass | fail | inconclusive | error
    exit_code: int
    summary: str
    annotations: list[Annotation]
    outputs: dict[str, str]
    outcome: CheckOutcome | None = None
    comment: CommentBody | None = None
    notices: list[str] = field(default_factory=list)


def _exit_code(code: int, inputs: ActionInputs | None) -> int:
    """The check's exit code (0 pass, 1 fail, 2 error, 3 inconclusive) after ``fail_on``."""
    fail_on = inputs.fail_on if inputs else "gates"
    if fail_on == "never" or (fail_on == "errors" and code in (1, 3)):
        return 0
    return code


def _with_exit_note(summary: str, verdict_code: int, inputs: ActionInputs | None) -> str:
    """``summary`` with a line under its heading when ``fail_on`` changed the exit code."""
    step_code = _exit_code(verdict_code, inputs)
    if inputs is None or step_code == verdict_code:
        return summary
    heading, _, rest = summary.partition("\n\n")
    note = wording.fail_on_sentence(verdict_code, step_code, inputs.fail_on)
    return f"{heading}\n\n{note}\n\n{rest}"


def error_summary(message: str) -> str:
    return (
        "## ⚠️ eval-gate: ERROR — bad input or configuration\n\n"
        f"{md_text(message, 2000)}\n\n"
        "No gate was evaluated (exit code 2). The same check runs locally with `eval-gate check`.\n"
    )


def ingest_options(inputs: ActionInputs) -> IngestOptions:
    """How to read the results: the reader inputs, as ``eval-gate check``'s reader options."""
    from gate.ingest import IngestOptions

    return IngestOptions(
        format=inputs.format,
        column_map=dict(inputs.map),
        pass_threshold=inputs.pass_threshold,
        scorer=inputs.scorer,
        junit_flakefinder=inputs.junit_flakefinder,
        suite=inputs.suite,
        duplicates=inputs.duplicates,
    )


def baseline_ingest_options(inputs: ActionInputs) -> IngestOptions | None:
    """How to read the baseline when ``baseline_format``/``baseline_map`` say (else None:
    as the results)."""
    if inputs.baseline_format is None and inputs.baseline_map is None:
        return None
    from dataclasses import replace

    results = ingest_options(inputs)
    return replace(
        results,
        format=inputs.baseline_format or results.format,
        column_map=(
            dict(inputs.baseline_map) if inputs.baseline_map is not None else results.column_map
        ),
    )


def check_request(inputs: ActionInputs) -> CheckRequest:
    """The pipeline's request; a configuration error an input caused names that input."""
    from gate.pipeline import request_from_options

    return request_from_options(
        inputs.results,
        config=inputs.config,
        format=inputs.format,
        overrides=inputs.overrides,
        baseline=inputs.baseline,
        ingest=ingest_options(inputs),
        origin="input",
        baseline_ingest=baseline_ingest_options(inputs),
    )


def evaluate(env: Mapping[str, str], *, write_report: bool = True) -> Evaluation:
    """Read inputs and results, run the pipeline and build everything that will be published."""
    from gate.ingest import input_files
    from gate.pipeline import run_check
    from gate.report.json_report import write_report as write_json_report
    from gate.report.markdown import render_summary

    context = context_from_env(env)
    inputs: ActionInputs | None = None
    report_problem = None
    try:
        inputs = read_inputs(env)
        # Only files inside the workspace are read (gate.reading), and the report is never
        # written over one of them.
        with confined_to(env.get("GITHUB_WORKSPACE") or os.getcwd()):
            refuse_overwriting(
                {"input report": inputs.report},
                input_files(inputs.results, inputs.baseline, config=_config_file(inputs)),
            )
            outcome = run_check(check_request(inputs))
        if write_report:
            try:
                write_json_report(inputs.report, outcome)
            except OutputError as error:  # the verdict stands; the report is missing
                report_problem = str(error)
    except Exception as error:  # a bug is an error (exit 2), never a crash
        message = str(error) if isinstance(error, EvalGateError) else describe_unexpected(error)
        summary = _with_exit_note(error_summary(message), 2, inputs)
        return Evaluation(
            inputs,
            context,
            "error",
            _exit_code(2, inputs),
            summary,
            [Annotation("error", "eval-gate: bad input or configuration", message)],
            {name: "error" if name == "verdict" else "" for name in OUTPUT_NAMES},
            # The sticky comment says so too: left alone, a pull request would still show the
            # verdict of an earlier commit as if it were this one's.
            comment=(
                build_comment_body(summary, inputs.comment_id, context.run_url)
                if inputs is not None
                else None
            ),
        )
    summary = _with_exit_note(render_summary(outcome), outcome.exit_code, inputs)
    outputs = {name: "" for name in OUTPUT_NAMES}
    outputs.update({name: str(value) for name, value in outcome.headline().items()})
    outputs["report"] = inputs.report if write_report and report_problem is None else ""
    annotations = build_annotations(outcome)
    if report_problem is not None:
        annotations = ranked_with(
            annotations, Annotation("warning", "eval-gate: no JSON report", report_problem)
        )
    return Evaluation(
        inputs,
        context,
        outcome.verdict,
        _exit_code(outcome.exit_code, inputs),
        summary,
        annotations,
        outputs,
        outcome,
        build_comment_body(summary, inputs.comment_id, context.run_url),
    )


def _config_file(inputs: ActionInputs) -> str | None:
    from gate.config import default_config_path

    return inputs.config or default_config_path()


def post_comment(
    evaluation: Evaluation, api: GitHubApi, log: Callable[[str], None]
) -> CommentResult:
    """Publish the sticky comment; whatever goes wrong becomes a result, never an exception."""
    inputs, context = evaluation.inputs, evaluation.context
    if inputs is None or evaluation.comment is None:
        return CommentResult("skipped", detail="comment: the action's inputs are invalid")
    if inputs.comment == "off":
        return CommentResult("skipped", detail="comment: off")
    if not inputs.github_token:
        return CommentResult("skipped", detail="comment: no github_token; not commenting")
    if not context.repository:
        return CommentResult("skipped", detail="comment: GITHUB_REPOSITORY not set")
    pull = None
    try:
        pull = find_pull_request(context, api)
        if pull is None:
            event = context.event_name or "run"
            return CommentResult("skipped", detail=f"comment: no open pull request for {event}")
        return publish_comment(
            api,
            context.repository,
            pull,
            evaluation.comment,
            mode=inputs.comment,
            comment_id=inputs.comment_id,
            failed=evaluation.verdict != "pass",
        )
    except ApiError as error:
        if pull is None:
            return CommentResult("failed", detail=f"comment: cannot find the pull request: {error}")
        return failure_result(error, pull)
    except Exception as error:  # a bug here must not turn a verdict into a crash
        log(f"comment: unexpected {type(error).__name__}: {error}")
        return CommentResult("failed", detail="comment: unexpected error (see above)")


def with_notices(summary: str, notices: list[str]) -> str:
    """The summary with the notices right under its first line (the verdict), where trimming,
    which cuts from the end, cannot reach them."""
    verdict, _, rest = summary.partition("\n")
    blocks = [verdict, *(n.strip("\n") for n in notices)]
    if rest.strip("\n"):
        blocks.append(rest.strip("\n"))
    return "\n\n".join(blocks) + "\n"


def main(
    env: Mapping[str, str] | None = None,
    *,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    api: GitHubApi | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Run the action as the runner starts it; returns the exit code.

    Every sink redacts the token of ``env`` (gate.redact); an exception nobody expected is
    one line on stderr and exit code 2, never a traceback and never 1 (a failed gate).
    """
    env = os.environ if env is None else env
    with redacting(env), warnings.catch_warnings():
        # A warning nothing collects is logged like every other line (redacted, escaped).
        warnings.showwarning = lambda message, *_args, **_kwargs: print(
            "eval-gate: warning: " + log_line(str(message)), file=stderr or sys.stderr
        )
        try:
            return _run(env, stdout=stdout, stderr=stderr, api=api, sleep=sleep)
        except Exception as error:  # see the docstring
            message = "eval-gate: " + log_line(describe_unexpected(error))
            print(message, file=stderr or sys.stderr, flush=True)
            return 2


def _run(
    env: Mapping[str, str],
    *,
    stdout: IO[str] | None,
    stderr: IO[str] | None,
    api: GitHubApi | None,
    sleep: Callable[[float], None],
) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr

    def log(message: str) -> None:
        print("eval-gate: " + log_line(message), file=err, flush=True)

    def warn(title: str, message: str) -> None:
        log(f"warning: {message}")
        print(annotation_command(Annotation("warning", title, message)), file=out, flush=True)

    evaluation = evaluate(env)
    inputs, context = evaluation.inputs, evaluation.context
    if context.event_problem:
        log(context.event_problem)
    if evaluation.outcome is not None:
        for loaded in evaluation.outcome.inputs:
            how = "detected" if loaded.detected else "given"
            log(f"read {loaded.path} as {loaded.format} ({how})")

    comment_result = CommentResult("skipped")
    if evaluation.comment is not None and inputs is not None and inputs.comment != "off":
        try:
            client = api or GitHubApi(context.api_url, inputs.github_token, sleep=sleep, log=log)
        except ValueError as error:
            comment_result = CommentResult("failed", detail=f"comment: {error}")
        else:
            comment_result = post_comment(evaluation, client, log)
    if comment_result.detail:
        log(comment_result.detail)
    if comment_result.url:
        log(f"comment {comment_result.action}: {comment_result.url}")
        evaluation.outputs["comment_url"] = comment_result.url
    annotations = evaluation.annotations
    if comment_result.notice:
        evaluation.notices.append(redact(comment_result.notice))
        warning = Annotation("warning", "eval-gate: no PR comment", comment_result.detail)
        annotations = ranked_with(annotations, warning)
    for command in annotation_commands(annotations):
        print(redact(command), file=out)
    out.flush()

    if context.output:
        try:
            write_outputs(context.output, evaluation.outputs)
        except OSError as error:  # the verdict's exit code stands
            warn("eval-gate: no step outputs", f"cannot write GITHUB_OUTPUT: {error.strerror}")
    summary = with_notices(evaluation.summary, evaluation.notices)
    if inputs is None or inputs.summary:
        if context.step_summary:
            where = (
                f"The full results are in the JSON report `{md_text(inputs.report, 200)}`."
                if inputs and evaluation.outcome is not None
                else ""
            )
            try:
                append_summary(context.step_summary, summary, where)
            except OSError as error:  # the verdict's exit code stands
                warn(
                    "eval-gate: no job summary",
                    f"cannot write GITHUB_STEP_SUMMARY: {error.strerror}",
                )
        else:
            out.write(safe_text(redact(summary)))  # `docker run` by hand: no runner
    if evaluation.outcome is not None:
        log(wording.gate_tally(evaluation.outcome))
    else:
        log(f"{evaluation.verdict.upper()}: {evaluation.annotations[0].message}")
    log(f"exit code {evaluation.exit_code} (fail_on: {inputs.fail_on if inputs else 'gates'})")
    return evaluation.exit_code
