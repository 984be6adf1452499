"""Annotation records (unescaped): failing gates as errors, flaky stimuli as warnings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from gate.pipeline import CheckOutcome


@dataclass(frozen=True)
class Annotation:
    level: Literal["error", "warning", "notice"]
    title: str
    message: str


def build_annotations(outcome: CheckOutcome) -> list[Annotation]:
    """Most important first: failed gates, then the flakiest stimuli, then warnings
    (about the input or the comparison)."""
    notes = [
        Annotation("error", f"eval-gate: gate failed: {g.name}", g.explanation)
        for g in outcome.failed_gates
    ]
    flaky = sorted(
        (s for s in outcome.suite.stimuli if s.flaky),
        key=lambda s: (-s.flakiness_percent, s.pass_rate, s.name),
    )
    notes += [
        Annotation(
            "warning",
            f"eval-gate: flaky stimulus {s.name}",
            f"{s.name}: {s.passes}/{s.trials} trials passed; {s.flakiness_percent:.1f}% minority "
            f"outcomes ({s.flakiness_band})",
        )
        for s in flaky
    ]
    notes += [Annotation("warning", "eval-gate: warning", w) for w in outcome.warnings]
    return notes
