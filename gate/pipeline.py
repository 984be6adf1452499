"""The one pipeline behind ``eval-gate check`` and the GitHub Action.

ingest (files → trial table) → scoring → gates → outcome; rendering and
publishing take the outcome from here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gate.compare import Comparison
from gate.config import REGRESSION_KINDS, GateConfig, load_config
from gate.errors import ConfigError
from gate.gates import GateResult, compare_with_baseline, evaluate_gates
from gate.ingest import IngestOptions, LoadedInput, load
from gate.scoring import SuiteScore, score_table


@dataclass(frozen=True)
class CheckRequest:
    """Everything one check needs; build it with :func:`request_from_options` or directly."""

    results: tuple[str, ...]
    config: GateConfig = field(default_factory=GateConfig)
    ingest: IngestOptions = field(default_factory=IngestOptions)
    baseline: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckOutcome:
    """The result of a check: scores, gate verdicts and what was read."""

    suite: SuiteScore
    gates: tuple[GateResult, ...]
    inputs: tuple[LoadedInput, ...]
    config: GateConfig
    warnings: tuple[str, ...] = ()
    comparisons: tuple[Comparison, ...] = ()

    @property
    def failed_gates(self) -> tuple[GateResult, ...]:
        return tuple(g for g in self.gates if not g.passed)

    @property
    def verdict(self) -> Literal["pass", "fail"]:
        return "fail" if self.failed_gates else "pass"

    @property
    def exit_code(self) -> int:
        return 1 if self.failed_gates else 0

    def headline(self) -> dict[str, str | int | float]:
        """The numbers worth an output variable or a badge."""
        s = self.suite
        return {
            "verdict": self.verdict,
            "pass_rate": round(s.pass_rate, 6),
            "pass_at_k": round(s.pass_at_k, 6),
            "pass_hat_k": round(s.pass_hat_k, 6),
            "k": s.k,
            "stimuli": len(s.stimuli),
            "trials": s.trials,
            "flaky_stimuli": s.flaky_stimuli,
            "failed_gates": len(self.failed_gates),
        }


def request_from_options(
    results: Sequence[str],
    *,
    config: str | None,
    format: str = "auto",
    overrides: Mapping[str, str | None] | None = None,
    baseline: Sequence[str] = (),
    ingest: IngestOptions | None = None,
    origin: str = "option",
) -> CheckRequest:
    """Build a request from CLI options or action inputs (same names, same meaning)."""
    if not results:
        raise ConfigError("no results given; name at least one file or glob")
    options = ingest or IngestOptions(format=format)
    return CheckRequest(
        results=tuple(results),
        config=load_config(config, overrides or {}, origin=origin),
        ingest=options,
        baseline=tuple(baseline),
    )


def run_check(request: CheckRequest) -> CheckOutcome:
    """Read, score and gate; raises :class:`~gate.errors.EvalGateError` on bad input or config."""
    config = request.config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table, inputs = load(request.results, request.ingest)
    suite = score_table(
        table,
        k=config.k,
        confidence=config.confidence,
        interval=config.interval,
        errors=config.errors,
    )
    regression = [g for g in config.gates if g.kind in REGRESSION_KINDS]
    if regression and not request.baseline:
        raise ConfigError(f"gate {regression[0].kind} needs a baseline (--baseline FILES)")
    gates = evaluate_gates(config, suite)
    comparisons: list[Comparison] = []
    if request.baseline:
        with warnings.catch_warnings(record=True) as caught_baseline:
            warnings.simplefilter("always")
            base_table, _ = load(request.baseline, request.ingest)
        caught.extend(caught_baseline)
        baseline = score_table(
            base_table,
            confidence=config.confidence,
            interval=config.interval,
            errors=config.errors,
        )
        regression_gates, comparisons = compare_with_baseline(config, suite, baseline)
        gates.extend(regression_gates)
    notes = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    for comparison in comparisons:
        notes.extend(comparison.notes)
    if suite.not_scored:
        notes.append(
            f"{len(suite.not_scored)} stimulus(es) have no counted trial and are not scored: "
            + ", ".join(suite.not_scored[:5])
        )
    return CheckOutcome(
        suite, tuple(gates), tuple(inputs), config, tuple(notes), tuple(comparisons)
    )
