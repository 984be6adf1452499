"""Annotation records (unescaped): failed gates as errors, undecided gates, failing and flaky
stimuli as warnings (a failing stimulus a failed gate names, as an error). An annotation of a
stimulus names the result file and line of its first kept message, or of its first failed
trial when no message has one, where the format gives one, so the runner can show it there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gate.report import wording

if TYPE_CHECKING:
    from gate.pipeline import CheckOutcome
    from gate.scoring import StimulusScore


@dataclass(frozen=True)
class Annotation:
    level: Literal["error", "warning", "notice"]
    title: str
    message: str
    #: the result file and line the annotation points at (the runner shows it there)
    file: str | None = None
    line: int | None = None


def _placed(stimulus: StimulusScore) -> tuple[str | None, int | None]:
    """The file and line of the first kept message that has a file, else of the first failed
    or errored trial (a format may give no message; the line may be unknown)."""
    for message in stimulus.messages:
        if message.where is not None and message.where.file:
            return message.where.file, message.where.line
    where = stimulus.first_failure_where  # read from the table only when no message has one
    if where is not None and where.file:
        return where.file, where.line
    return None, None


def _stimulus_annotation(
    level: Literal["error", "warning"], title: str, text: str, stimulus: StimulusScore
) -> Annotation:
    file, line = _placed(stimulus)
    return Annotation(level, title, text, file, line)


def build_annotations(outcome: CheckOutcome) -> list[Annotation]:
    """Most important first: failed gates, inconclusive gates (with what would decide them),
    warnings (about the input or the comparison), failing stimuli (those a failed gate names
    first), then the flakiest stimuli."""
    notes = [
        Annotation(
            "error",
            f"eval-gate: gate failed: {wording.gate_name(g)}",
            wording.gate_sentence(g),
        )
        for g in outcome.failed_gates
    ]
    # An inconclusive gate that on_inconclusive: fail turns into exit code 1 fails the step:
    # an error like a failed gate's, not a warning beside a red step with no error at all.
    undecided: Literal["error", "warning"] = (
        "error" if outcome.config.on_inconclusive == "fail" else "warning"
    )
    notes += [
        Annotation(
            undecided,
            f"eval-gate: gate inconclusive: {wording.gate_name(g)}",
            " ".join(x for x in (wording.gate_sentence(g), wording.advice_sentence(g)) if x),
        )
        for g in outcome.inconclusive_gates
    ]
    # Before any stimulus: a warning that the input may be misread (or the comparison is
    # partial) bears on every verdict, and the runner shows only the first 10 warnings.
    warnings = [
        *outcome.warnings,
        *wording.level_warnings(outcome),
        *wording.comparison_warnings(outcome),
    ]
    notes += [Annotation("warning", "eval-gate: warning", w) for w in warnings]
    # A gate names failing stimuli of its own suite: the same name in another suite is
    # another stimulus, which that gate did not judge.
    named = {(g.spec.suite, name) for g in outcome.failed_gates for name in g.failing}

    def is_named(s: StimulusScore) -> bool:
        return (None, s.name) in named or (s.suite, s.name) in named

    several = len(outcome.suite.suite_names) > 1

    def label(s: StimulusScore) -> str:
        return f"{s.suite}/{s.name}" if several else s.name

    failing = sorted(
        (s for s in outcome.suite.stimuli if is_named(s) or (s.trials and not s.passes)),
        key=lambda s: (not is_named(s), s.pass_rate, label(s)),
    )
    notes += [
        _stimulus_annotation(
            "error" if is_named(s) else "warning",
            wording.failing_stimulus_title(label(s)),
            wording.failing_stimulus_message(
                label(s), s.passes, s.trials, s.messages[0] if s.messages else None
            ),
            s,
        )
        for s in failing
    ]
    flaky = sorted(
        (s for s in outcome.suite.stimuli if s.flaky and not is_named(s)),
        key=lambda s: (-s.flakiness_percent, s.pass_rate, label(s)),
    )
    notes += [
        _stimulus_annotation(
            "warning",
            f"eval-gate: flaky stimulus {label(s)}",
            wording.flaky_sentence(s, label=label(s)),
            s,
        )
        for s in flaky
    ]
    return notes
