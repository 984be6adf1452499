"""The one pipeline behind ``eval-gate check`` and the GitHub Action.

ingest (files → trial table) → scoring → gates → outcome; rendering and
publishing take the outcome from here.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from gate.compare import Comparison
from gate.config import GateConfig, load_config
from gate.errors import ConfigError
from gate.gates import GateDecision, Outcome, decide_gates, verdict_of
from gate.ingest import IngestOptions, LoadedInput, load
from gate.metrics.usage import TrialUsage, UsageComparison, UsageSummary
from gate.scoring import SuiteScore, score_table
from gate.table import TrialTable

#: exit code of each verdict (0 pass, 1 fail, 3 inconclusive; 2 is bad input or config).
EXIT_CODES: dict[str, int] = {"pass": 0, "fail": 1, "inconclusive": 3}


@dataclass(frozen=True)
class CheckRequest:
    """Everything one check needs; build it with :func:`request_from_options` or directly."""

    results: tuple[str, ...]
    config: GateConfig = field(default_factory=GateConfig)
    ingest: IngestOptions = field(default_factory=IngestOptions)
    baseline: tuple[str, ...] = ()
    #: how to read the baseline when it differs from the results (its own format and --map)
    baseline_ingest: IngestOptions | None = None


@dataclass(frozen=True)
class CheckOutcome:
    """The result of a check: scores, gate verdicts and what was read."""

    suite: SuiteScore
    gates: tuple[GateDecision, ...]
    inputs: tuple[LoadedInput, ...]
    config: GateConfig
    warnings: tuple[str, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    #: cost, duration and tokens of the results' trials; None when no trial reports any
    usage: UsageSummary | None = None
    #: paired change in cost per trial and p95 duration against the baseline (both report)
    usage_change: UsageComparison | None = None

    @cached_property
    def suites(self) -> tuple[SuiteScore, ...]:
        """One score per suite in the results (sorted by name); one suite: ``(suite,)``."""
        return self.suite.by_suite()

    @property
    def failed_gates(self) -> tuple[GateDecision, ...]:
        return tuple(g for g in self.gates if g.outcome == "fail")

    @property
    def inconclusive_gates(self) -> tuple[GateDecision, ...]:
        return tuple(g for g in self.gates if g.outcome == "inconclusive")

    @property
    def verdict(self) -> Outcome:
        """``fail`` if any gate fails, else ``inconclusive`` if any is, else ``pass``."""
        return verdict_of(self.gates)

    @property
    def exit_outcome(self) -> Outcome:
        """The verdict after the ``on_inconclusive`` policy: what the exit code says."""
        if self.verdict == "inconclusive":
            return self.config.on_inconclusive
        return self.verdict

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 inconclusive (after ``on_inconclusive``)."""
        return EXIT_CODES[self.exit_outcome]

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
            "inconclusive_gates": len(self.inconclusive_gates),
            "metrics": json.dumps(self.metric_values(), sort_keys=True),
        }

    def metric_values(self) -> dict[str, float | None]:
        """Each configured ``metric`` gate's value, by the gate's name or its metric's label
        (``g_pass_at_k_tau(k=3, tau=0.67)``): the suite value, or the worst stimulus's."""
        values: dict[str, float | None] = {}
        for gate in self.gates:
            if gate.kind == "metric":
                spec = gate.spec
                label = spec.label or spec.resolved.label()
                values[label] = None if gate.value is None else round(gate.value, 6)
        return values


def request_from_options(
    results: Sequence[str],
    *,
    config: str | None,
    format: str = "auto",
    overrides: Mapping[str, str | None] | None = None,
    baseline: Sequence[str] = (),
    ingest: IngestOptions | None = None,
    origin: str = "option",
    baseline_ingest: IngestOptions | None = None,
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
        baseline_ingest=baseline_ingest,
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
    baseline: SuiteScore | None = None
    base_table: TrialTable | None = None
    if request.baseline:
        with warnings.catch_warnings(record=True) as caught_baseline:
            warnings.simplefilter("always")
            base_table, _ = load(request.baseline, request.baseline_ingest or request.ingest)
        caught.extend(caught_baseline)
        baseline = score_table(
            base_table,
            confidence=config.confidence,
            interval=config.interval,
            errors=config.errors,
        )
    gates, comparisons = decide_gates(config, suite, baseline, usage=table.usage)
    summary, change = _usage(table, base_table, config.confidence)
    notes = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return CheckOutcome(
        suite,
        tuple(gates),
        tuple(inputs),
        config,
        tuple(notes),
        tuple(comparisons),
        usage=summary,
        usage_change=change,
    )


def table_usage(
    table: TrialTable, confidence: float = 0.95
) -> tuple[TrialUsage, UsageSummary] | None:
    """The per-trial usage of ``table`` and its summary; None when no trial reports a usage
    value (or every value given was left out as no usage value)."""
    from gate.metrics.usage import usage_summary

    trials = table.usage() if table.has_usage() else None
    if trials is None:
        return None
    summary = usage_summary(trials, confidence)
    return None if summary == (None, None, None) else (trials, summary)


def _usage(
    table: TrialTable, baseline: TrialTable | None, confidence: float
) -> tuple[UsageSummary | None, UsageComparison | None]:
    """The results' usage block and, with a baseline that reports usage too, the changes."""
    from gate.metrics.usage import usage_change

    found = table_usage(table, confidence)
    if found is None:
        return None, None
    trials, summary = found
    if baseline is None or not baseline.has_usage():
        return summary, None
    before = baseline.usage()
    change = usage_change(trials, before, confidence) if before is not None else None
    if change is not None and change.cost_per_trial is None and change.duration_p95 is None:
        change = None
    return summary, change
