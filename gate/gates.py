"""Gates: configured targets checked against the suite's scores, one verdict each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, cast

import numpy as np

from gate.compare import Comparison, GateDecision, StimulusCounts, compare
from gate.compare import Metric as CompareMetric
from gate.config import GATE_KINDS, REGRESSION_KINDS, GateConfig, GateSpec
from gate.errors import ConfigError
from gate.metrics import Interval
from gate.scoring import Metric, MetricValues, SuiteScore, metric_values

Direction = Literal[">=", "<="]


@dataclass(frozen=True)
class GateResult:
    """The verdict of one gate; ``subject`` is the suite, or the worst stimulus (scope stimuli)."""

    name: str
    kind: str
    passed: bool
    value: float | None
    target: float
    comparison: Direction
    scope: str
    tag: str | None
    bound: str
    subject: str
    failing: tuple[str, ...]
    explanation: str
    #: level of the interval or bound the gate decided on (``None``: the point estimate).
    confidence: float | None = None


def metric_label(metric: str, k: int, estimator: str = "unbiased") -> str:
    """How a metric is named in reports: ``pass^3``, ``pass@3``, ``pass rate``…"""
    if metric == "pass_hat_k":
        return f"pass^{k}" + (" (plug-in)" if estimator == "plugin" else "")
    if metric == "pass_at_k":
        return f"pass@{k}"
    return {"pass_rate": "pass rate", "score": "suite score", "flakiness": "flakiness %"}[metric]


def _describe(spec: GateSpec, k: int, confidence: float) -> str:
    metric = metric_label(spec.metric, k, spec.estimator)
    where = "suite" if spec.scope == "suite" else "every stimulus"
    if spec.tag:
        where += f" tagged {spec.tag}"
    if spec.kind == "max_ci_half_width":
        return f"{confidence:.0%} interval half-width of {metric} ≤ {spec.target:g} ({where})"
    if spec.kind == "max_flakiness":
        return f"flakiness ≤ {spec.target:g}% ({where})"
    comparison = "≥" if GATE_KINDS[spec.kind][1] == "min" else "≤"
    bound = "" if spec.bound == "estimate" else f", {spec.bound} {confidence:.0%} bound"
    return f"{metric} {comparison} {spec.target:g} ({where}{bound})"


def _decide_value(value: float, interval: Interval | None, bound: str, what: str) -> float:
    """The number a gate compares with its target: the estimate, or a bound of its interval.

    A per-stimulus pass@k / pass^k interval is the pass-rate interval mapped through
    1-(1-p)^k or p^k: an interval for the latent value, which need not contain the
    unbiased estimate (C(c,k)/C(n,k) is 0 whenever c < k, while L^k > 0). A lower-bound
    gate therefore decides on min(lower bound, estimate), so it passes only when both
    reach the target and is never more lenient than the estimate alone; min(L, ·) ≤ L is
    still a valid lower confidence bound. An upper-bound gate mirrors this with max.
    """
    if bound == "estimate":
        return value
    if interval is None:
        raise ConfigError(f"{what} has no interval to take a {bound} bound from")
    if float(interval.hi) - float(interval.lo) <= 0.0:
        raise ConfigError(f"the interval of {what} has zero width; no gate decides on it")
    if bound == "lower":
        return min(float(interval.lo), value)
    return max(float(interval.hi), value)


def _outside(value: float, interval: Interval | None) -> bool:
    return interval is not None and not float(interval.lo) <= value <= float(interval.hi)


def _half_width(interval: Interval | None, what: str) -> float:
    if interval is None:
        raise ConfigError(f"{what} has no interval")
    return (float(interval.hi) - float(interval.lo)) / 2.0


def evaluate_gate(spec: GateSpec, suite: SuiteScore) -> GateResult:
    """Check one gate; :class:`ConfigError` when it cannot be evaluated on these results."""
    k = spec.k if spec.k is not None else suite.k
    metric = cast(Metric, "flakiness" if spec.kind == "max_flakiness" else spec.metric)
    level = spec.confidence if spec.confidence is not None else suite.confidence
    # metric_values computes its intervals at the suite's level; a gate with its own
    # confidence gets them at that level instead (the counts are the same).
    scored = suite if level == suite.confidence else replace(suite, confidence=level)
    values: MetricValues = metric_values(
        scored, metric, k=k, estimator=spec.estimator, tag=spec.tag
    )
    name = _describe(spec, k, level)
    decided_level = level if spec.kind == "max_ci_half_width" or spec.bound != "estimate" else None
    comparison: Direction = ">=" if GATE_KINDS[spec.kind][1] == "min" else "<="

    def ok(value: float) -> bool:
        # A tiny tolerance so that 0.7 computed as 0.7000000000000001 - ε still meets 0.7.
        return value >= spec.target - 1e-12 if comparison == ">=" else value <= spec.target + 1e-12

    if spec.scope == "suite":
        if spec.kind == "max_ci_half_width":
            value = _half_width(values.suite_interval, name)
        else:
            value = _decide_value(values.suite_value, values.suite_interval, spec.bound, name)
        passed = ok(value)
        explanation = f"{value:.4g} {comparison} {spec.target:g}: {'met' if passed else 'not met'}"
        return GateResult(
            name,
            spec.kind,
            passed,
            value,
            spec.target,
            comparison,
            spec.scope,
            spec.tag,
            spec.bound,
            suite.name,
            (),
            explanation,
            decided_level,
        )

    per_stimulus: list[float] = []
    outside = 0
    for i, stimulus in enumerate(values.stimuli):
        interval = values.intervals[i] if values.intervals else None
        what = f"{name} for {stimulus.name!r}"
        if spec.kind == "max_ci_half_width":
            per_stimulus.append(_half_width(interval, what))
        else:
            estimate = float(values.values[i])
            per_stimulus.append(_decide_value(estimate, interval, spec.bound, what))
            outside += spec.bound != "estimate" and _outside(estimate, interval)
    array = np.array(per_stimulus)
    worst = int(np.argmin(array) if comparison == ">=" else np.argmax(array))
    failing = tuple(s.name for s, v in zip(values.stimuli, per_stimulus, strict=True) if not ok(v))
    passed = not failing
    value = float(array[worst])
    explanation = (
        f"all {len(per_stimulus)} stimuli meet it"
        if passed
        else f"{len(failing)} of {len(per_stimulus)} stimuli miss it; worst "
        f"{values.stimuli[worst].name!r} at {value:.4g}"
    )
    if outside:
        explanation += (
            f" ({outside} stimuli have an unbiased estimate outside the interval of the latent "
            f"value; there the gate decided on the estimate)"
        )
    return GateResult(
        name,
        spec.kind,
        passed,
        value,
        spec.target,
        comparison,
        spec.scope,
        spec.tag,
        spec.bound,
        values.stimuli[worst].name,
        failing,
        explanation,
        decided_level,
    )


def evaluate_gates(config: GateConfig, suite: SuiteScore) -> list[GateResult]:
    """Every configured gate in configuration order (regression gates are handled elsewhere)."""
    return [evaluate_gate(g, suite) for g in config.gates if g.kind not in REGRESSION_KINDS]


def failed(results: Sequence[GateResult]) -> list[GateResult]:
    return [r for r in results if not r.passed]


def counts_by_stimulus(
    suite: SuiteScore, qualified: bool, keep: set[str] | None = None
) -> dict[str, StimulusCounts]:
    """Per-stimulus counts keyed by id (``suite/name`` when several suites are in play).

    ``keep``: only these ids (a tag's stimuli); ``None`` keeps every stimulus.
    """
    counts = {}
    for s in suite.stimuli:
        key = f"{s.suite}/{s.name}" if qualified else s.name
        if keep is not None and key not in keep:
            continue
        counts[key] = StimulusCounts(
            s.trials,
            s.passes,
            tuple(letter == "P" for letter in s.outcomes) if s.outcomes else None,
            s.aggregate_score,
        )
    return counts


def _tagged(suites: Sequence[SuiteScore], tag: str, qualified: bool) -> set[str]:
    """Ids carrying ``tag`` in either run: such a stimulus is compared on both sides."""
    return {
        f"{s.suite}/{s.name}" if qualified else s.name
        for suite in suites
        for s in suite.stimuli
        if tag in s.tags
    }


def _some(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(repr(x) for x in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _require_pairs(comparison: Comparison, what: str) -> None:
    """A comparison with no paired stimulus cannot decide anything: a config error (exit 2)."""
    if comparison.rows:
        return
    if not comparison.shared:
        raise ConfigError(
            f"{what}: the results and the baseline have no stimulus in common, so nothing "
            f"can be compared (results: {_some(comparison.added) or 'none'}; baseline: "
            f"{_some(comparison.removed) or 'none'}). Check that both runs are of the same "
            "suite(s) and use the same stimulus ids."
        )
    first = comparison.excluded[0]
    raise ConfigError(
        f"{what} cannot be evaluated: all {len(comparison.excluded)} shared stimuli are left "
        f"out of the paired test (e.g. {first.id!r}: {first.reason})"
    )


GroupKey = tuple[str, int | None, str | None, float]


def compare_with_baseline(
    config: GateConfig, candidate: SuiteScore, baseline: SuiteScore
) -> tuple[list[GateResult], list[Comparison]]:
    """Run the paired comparison and turn its decisions into gates, one per configured gate.

    Gates comparing the same metric (and k) on the same stimuli (tag) at the same
    confidence share one comparison, which holds every one's decision. Without
    regression gates the comparison still runs on the pass rate, for the report.

    Raises :class:`ConfigError` when a comparison has no paired stimulus: no stimulus
    in common, no stimulus with the gate's tag, or k above every stimulus's trials.
    """
    suites = {s.suite for s in candidate.stimuli} | {s.suite for s in baseline.stimuli}
    qualified = len(suites) > 1
    specs = [g for g in config.gates if g.kind in REGRESSION_KINDS]
    groups: dict[GroupKey, list[GateSpec]] = {}
    for spec in specs:
        level = spec.confidence if spec.confidence is not None else config.confidence
        groups.setdefault((spec.metric, spec.k, spec.tag, level), []).append(spec)
    if not groups:
        groups[("pass_rate", None, None, config.confidence)] = []
    results: list[tuple[int, GateResult]] = []
    comparisons: list[Comparison] = []
    for (metric, k, tag, level), group in groups.items():
        keep = None if tag is None else _tagged((candidate, baseline), tag, qualified)
        what = f"gate {group[0].kind}" if group else "the baseline comparison"
        if keep is not None and not keep:
            raise ConfigError(
                f"{what}: no stimulus carries the tag {tag!r} in the results or the baseline"
            )
        suite_gates = [g for g in group if g.scope == "suite"]
        comparison = compare(
            counts_by_stimulus(baseline, qualified, keep),
            counts_by_stimulus(candidate, qualified, keep),
            metric=cast(CompareMetric, metric),
            k=k,
            confidence=level,
            max_regression=[g.target for g in suite_gates if g.kind == "max_regression"],
            min_improvement=[g.target for g in suite_gates if g.kind == "min_improvement"],
            per_stimulus=any(g.scope == "stimuli" for g in group),
        )
        _require_pairs(comparison, what)
        if tag is not None:
            comparison = replace(comparison, tag=tag)
        comparisons.append(comparison)
        decisions = {
            name: [d for d in comparison.gates if d.name == name]
            for name in ("max_regression", "min_improvement", "stimulus_regression")
        }
        used = {name: 0 for name in decisions}
        for spec in group:
            name = "stimulus_regression" if spec.scope == "stimuli" else spec.kind
            decision = decisions[name][used[name]]
            if name != "stimulus_regression":
                used[name] += 1
            result = _regression_result(comparison, decision, metric, tag, candidate.name)
            results.append((specs.index(spec), result))
    # in configuration order, whichever comparison decided them
    return [r for _, r in sorted(results, key=lambda x: x[0])], comparisons


def _regression_result(
    comparison: Comparison, decision: GateDecision, metric: str, tag: str | None, subject: str
) -> GateResult:
    label = metric_label(metric, comparison.k or 1) if metric != "score" else "score"
    level = f"{comparison.confidence:.0%}"
    among = f"stimuli tagged {tag}, " if tag else ""
    if decision.name == "max_regression":
        name = (
            f"no drop in {label} beyond {decision.threshold:g} vs baseline "
            f"({among}upper {level} bound of Δ)"
        )
        return GateResult(
            name,
            "max_regression",
            decision.passed,
            decision.bound,
            0.0 - decision.threshold,  # δ = 0 gives 0.0, not -0.0 ("≥ -0" in the report)
            ">=",
            "suite",
            tag,
            "upper",
            subject,
            (),
            decision.sentence,
            comparison.confidence,
        )
    if decision.name == "min_improvement":
        name = (
            f"{label} improves on baseline by more than {decision.threshold:g} "
            f"({among}lower {level} bound of Δ)"
        )
        return GateResult(
            name,
            "min_improvement",
            decision.passed,
            decision.bound,
            decision.threshold,
            ">=",
            "suite",
            tag,
            "lower",
            subject,
            (),
            decision.sentence,
            comparison.confidence,
        )
    where = f" tagged {tag}" if tag else ""
    name = f"no stimulus{where} worse than baseline (Holm, family-wise {level})"
    worst = min(comparison.rows, key=lambda r: r.p_holm, default=None)
    return GateResult(
        name,
        "max_regression",
        decision.passed,
        decision.p_value,
        decision.threshold,
        ">=",
        "stimuli",
        tag,
        "estimate",
        worst.id if worst else subject,
        comparison.regressed,
        decision.sentence,
        comparison.confidence,
    )
