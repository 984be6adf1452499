"""Annotation records (unescaped): failed gates as errors, undecided gates and flaky stimuli
as warnings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gate.report import wording

if TYPE_CHECKING:
    from gate.pipeline import CheckOutcome


@dataclass(frozen=True)
class Annotation:
    level: Literal["error", "warning", "notice"]
    title: str
    message: str


def build_annotations(outcome: CheckOutcome) -> list[Annotation]:
    """Most important first: failed gates, inconclusive gates (with what would decide them),
    then the flakiest stimuli, then warnings (about the input or the comparison)."""
    notes = [
        Annotation(
            "error",
            f"eval-gate: gate failed: {wording.gate_name(g)}",
            wording.gate_sentence(g),
        )
        for g in outcome.failed_gates
    ]
    notes += [
        Annotation(
            "warning",
            f"eval-gate: gate inconclusive: {wording.gate_name(g)}",
            " ".join(x for x in (wording.gate_sentence(g), wording.advice_sentence(g)) if x),
        )
        for g in outcome.inconclusive_gates
    ]
    flaky = sorted(
        (s for s in outcome.suite.stimuli if s.flaky),
        key=lambda s: (-s.flakiness_percent, s.pass_rate, s.name),
    )
    notes += [
        Annotation(
            "warning",
            f"eval-gate: flaky stimulus {s.name}",
            wording.flaky_sentence(s),
        )
        for s in flaky
    ]
    warnings = list(outcome.warnings)
    for comparison in outcome.comparisons:
        warnings.extend(wording.comparison_notes(comparison))
    notes += [Annotation("warning", "eval-gate: warning", w) for w in warnings]
    return notes
