"""The gate kind ``metric``: a gate on any metric of the registry (issue 14).

Configuration (``gates: metric:``, one entry or a list)::

    - metric: g_pass_at_k_tau     # a name of gate.metrics.METRICS
      k: 3
      tau: 0.67                   # the metric's own parameters, by their names
      min: 0.5
      bound: lower                # where the metric has an interval
    - metric: reliability.graceful_degradation
      scope: stimuli
      min: 80
    - metric: cost_usd.mean_per_trial
      max: 0.05

:func:`parse_metric_gates` checks each entry with the registry
(:func:`gate.metrics.registry.parse_metric_gate`: unknown names and parameters
are refused with the valid ones and a did-you-mean) and turns it into
:class:`~gate.config.GateSpec` records (an entry with both ``min`` and ``max`` is
two gates). :func:`decide_metric_gate` evaluates the metric on the results
(:func:`gate.metrics.evaluate.evaluate`) and decides it like every other gate: on
the interval (pass, fail or inconclusive) or on the point estimate (pass or
fail, no error control); ``scope: stimuli`` judges each stimulus's value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from gate.config import GateSpec
from gate.errors import ConfigError
from gate.metrics.decision import FAIL, INCONCLUSIVE, PASS, _runs, _smallest, three_way

if TYPE_CHECKING:
    from gate.gates import GateDecision
    from gate.metrics import Interval
    from gate.metrics.evaluate import MetricInterval, MetricValue, SuiteOutcomes
    from gate.metrics.registry import BoundMetric
    from gate.metrics.usage import TrialUsage
    from gate.scoring import SuiteScore

KIND = "metric"

#: metrics in whole percents (reference 004): a target strictly between 0 and 1 is a
#: fraction written for them ("rates are fractions, everywhere" misread), never a real one.
PERCENT_SCALE = frozenset(
    {"reliability.graceful_degradation", "reliability.variance_amplification"}
)

#: Metrics whose per-stimulus estimator is an unbiased U-statistic of degree k with a kernel
#: in [0, 1], averaged over the stimuli. A gate on one decides on the suite interval at
#: n_eff = M·min(nᵢ)/k (:func:`gate.metrics.suite_interval`), as the built-in pass@k and
#: pass^k gates do, not on the registry's interval: reference 003's posterior summary
#: shrinks toward ½ and narrows as stimuli are added, so it misses the value it is about
#: (simulated coverage at 50 stimuli × 3 trials: 0–31%; docs/metrics.md), and a verdict on
#: it could say "the data show" what they do not.
U_STATISTIC_METRICS = frozenset(
    {
        "pass_at_k",
        "pass_hat_k",
        "unanimous_at_k",
        "g_pass_at_k",
        "g_pass_at_k_tau",
        "mg_pass_at_k",
        "maj_at_k",
        "auc_at_k",
        "max_at_k",  # pass@k: a gate's outcomes are pass/fail
    }
)

#: Metrics whose registry interval no gate decides on, and which have no honest one here:
#: blends of suite values by the delta method on posterior summaries, a product of
#: per-stimulus estimates, a weighted sum with free weights. Simulated at 50 stimuli × 3
#: trials of an agent at 80%, the blends' intervals held the value's expectation in 0–12%
#: of the runs (docs/metrics.md; the weighted sum was not simulated: its weights are the
#: user's), so they are gated on the point estimate only.
NO_GATE_INTERVAL = frozenset(
    {
        "geom_at_k",
        "geom_ds_at_k",
        "threshold_spectrum_at_k",
        "geo_spectrum_at_k",
        "geo_spectrum_star_at_k",
    }
)

#: Per-trial usage of one suite (``None``: of every suite), or ``None`` when no trial ran:
#: given by the pipeline (the trial table), read only by usage metrics.
UsageOf = Callable[[str | None], "TrialUsage | None"]


def parse_metric_gates(
    value: Any, where: str, *, k: int | None, bound: str = "estimate"
) -> list[GateSpec]:
    """``gates: metric:`` entries as gate specs; :class:`ConfigError` names what is wrong.

    ``k``: the configuration's top-level k, given to metrics whose entry names none.
    ``bound``: the configuration's default bound; it applies only to a metric with an
    interval and decides on the bound that must clear the target (``interval``).
    """
    from gate.metrics.registry import METRICS, MetricSpecError, parse_metric_gate

    entries = value if isinstance(value, list) else [value]
    specs: list[GateSpec] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{where}: gate metric: an entry is a mapping with a 'metric' key, found {entry!r}"
            )
        given = dict(entry)
        # `suite` selects stimuli as `tag` does; it is the gate's, not the metric's.
        suite_name = given.pop("suite", None)
        if suite_name is not None and (not isinstance(suite_name, str) or not suite_name):
            raise ConfigError(f"{where}: gate metric: suite must be a suite's name")
        info = METRICS.get(str(given.get("metric")))
        takes_k = info is not None and any(p.name == "k" for p in info.parameters)
        if takes_k and "k" not in given and k is not None:
            given["k"] = k
        # `interval` names the bound that must clear each target (lower for min, upper for
        # max); the registry checks the metric has one as it checks `lower`.
        wants_interval = given.get("bound") == "interval"
        if info is not None and info.name in NO_GATE_INTERVAL and given.get("bound") in (
            "interval",
            "lower",
            "upper",
        ):
            raise ConfigError(
                f"{where}: gate metric {info.name!r}: its interval (a posterior summary) has "
                "no verified coverage of the metric's value (docs/metrics.md), so no gate "
                "decides on it; use bound: estimate, or gate a metric with an honest interval "
                f"({', '.join(sorted(U_STATISTIC_METRICS))}, bayes, avg)"
            )
        if wants_interval:
            given["bound"] = "lower"
        try:
            gate = parse_metric_gate(given)
        except MetricSpecError as error:
            message = str(error)
            if takes_k and "k" not in given and "'k'" in message:
                message += "; give k on the gate or a top-level k"
            raise ConfigError(f"{where}: gate metric: {message}") from None
        metric = gate.metric
        has_interval = (
            metric.info.has_interval
            and gate.scope == "suite"
            and metric.info.name not in NO_GATE_INTERVAL
        )
        for direction, target in (("min", gate.minimum), ("max", gate.maximum)):
            if target is None:
                continue
            if metric.info.name in PERCENT_SCALE and 0 < target < 1:
                raise ConfigError(
                    f"{where}: gate metric {metric.info.name!r} is in whole percents (0 to "
                    f"100); {direction}: {target:g} reads as a fraction: write "
                    f"{direction}: {100 * target:g}"
                )
            chosen: str = "interval" if wants_interval else (gate.bound or bound)
            if chosen in ("interval", "lower", "upper") and not has_interval:
                chosen = "estimate" if gate.bound is None else chosen
            if chosen != "estimate":
                wanted = "lower" if direction == "min" else "upper"
                if chosen not in ("interval", wanted):
                    raise ConfigError(
                        f"{where}: gate metric {metric.info.name!r} {direction} takes bound: "
                        f"{wanted} (or interval), not {chosen}: a {direction} gate passes when "
                        f"its {wanted} bound clears the target; to let undecided runs pass, "
                        "set on_inconclusive: pass"
                    )
                chosen = wanted
            specs.append(
                GateSpec(
                    kind=KIND,
                    target=float(target),
                    metric=metric.info.name,
                    k=metric.params.get("k"),
                    scope=gate.scope,
                    tag=gate.tag,
                    suite=suite_name,
                    bound=chosen,  # type: ignore[arg-type]
                    confidence=gate.confidence,
                    goal=direction,  # type: ignore[arg-type]
                    resolved=metric,
                    label=gate.name,
                )
            )
    return specs


def _suite_outcomes(
    suite: SuiteScore, tag: str | None, suite_name: str | None = None
) -> tuple[SuiteOutcomes, list[str]]:
    from gate.metrics.evaluate import SuiteOutcomes

    chosen = suite.chosen(tag, suite_name)
    if not chosen:
        where = f" in suite {suite_name!r}" if suite_name is not None else ""
        raise ConfigError(f"no stimulus carries the tag {tag!r}{where}")
    names = [s.name for s in chosen]
    if all(len(s.outcomes) == s.trials for s in chosen):
        rows = [[letter == "P" for letter in s.outcomes] for s in chosen]
        return SuiteOutcomes.from_ordered(rows, names), names
    n = np.array([s.trials for s in chosen])
    c = np.array([s.passes for s in chosen])
    return SuiteOutcomes.from_counts(n, c, names), names


def _evaluate(
    metric: BoundMetric,
    suite: SuiteScore,
    tag: str | None,
    level: float,
    usage: UsageOf | None,
    suite_name: str | None = None,
) -> tuple[MetricValue, Interval | MetricInterval | None, list[str]]:
    """The metric's value on the chosen stimuli, the interval a gate on it decides on
    (:func:`gate_interval`), and the stimuli's names."""
    from gate.metrics.evaluate import MetricDataError, evaluate
    from gate.metrics.usage import MissingUsageError

    try:
        if metric.info.usage:
            if tag is not None:
                raise ConfigError(
                    f"gate metric {metric.info.name!r}: usage is gated per suite, not per tag; "
                    "remove tag:"
                )
            trials = usage(suite_name) if usage is not None else None
            if trials is None:
                raise MissingUsageError(
                    f"metric {metric.info.name!r} needs per-trial cost, duration or tokens, "
                    "and these results carry none"
                )
            value = evaluate(metric, trials, confidence=level)
            return value, value.interval, []
        data, names = _suite_outcomes(suite, tag, suite_name)
        value = evaluate(metric, data, confidence=level)
        return value, gate_interval(metric, value, data.n, level, suite.interval_method), names
    except (MetricDataError, MissingUsageError) as error:
        raise ConfigError(f"gate metric: {error}") from None


def gate_interval(
    metric: BoundMetric, value: MetricValue, n: np.ndarray, level: float, method: str
) -> Interval | MetricInterval | None:
    """The interval a gate on ``metric`` decides on (``n``: the trials of each stimulus):
    the honest suite interval for a :data:`U_STATISTIC_METRICS` metric, else its own."""
    if metric.info.name not in U_STATISTIC_METRICS or value.value is None:
        return value.interval
    from gate.metrics import suite_interval

    k = int(value.params.get("k", 1))
    estimate = min(max(float(value.value), 0.0), 1.0)
    return suite_interval(estimate, n, k, level, method)  # type: ignore[arg-type]


def _more_trials(spec: GateSpec, suite: SuiteScore, level: float) -> int | None:
    """More trials per stimulus deciding an inconclusive interval gate (≥ 80%), simulated
    with the interval the gate decides on (order-free metrics). Predictive, as the count
    gates' advice (:func:`gate.metrics.decision.more_trials`): each simulated run draws the
    stimuli's rates from what the data allow, so the 80% is an average over those truths."""
    from gate.metrics.evaluate import SuiteOutcomes, evaluate
    from gate.metrics.posterior import posterior_rates

    metric = spec.resolved
    if metric is None or metric.info.order_dependent or metric.info.usage:
        return None
    chosen = suite.chosen(spec.tag, spec.suite)
    n = np.array([s.trials for s in chosen])
    c = np.array([s.passes for s in chosen])
    # Each run evaluates the metric once: 100 runs at most, fewer past 20,000 stimuli.
    runs = min(100, _runs(n.size))
    rates = posterior_rates(n, c, runs, np.random.default_rng([20_261_125, 1]))

    def probability(m: int) -> float:
        rng = np.random.default_rng(20_261_125)
        decided = 0
        for run in range(runs):
            more = c + rng.binomial(m, rates[run])
            value = evaluate(metric, SuiteOutcomes.from_counts(n + m, more), confidence=level)
            interval = gate_interval(metric, value, n + m, level, suite.interval_method)
            if interval is not None:
                code = three_way(interval.lo, interval.hi, spec.target, spec.direction)
                decided += int(code) != INCONCLUSIVE
        return decided / runs

    return _smallest(probability, 0.8, 2_000)


def decide_metric_gate(
    spec: GateSpec, suite: SuiteScore, usage: UsageOf | None = None, *, advise: bool = True
) -> GateDecision:
    """Evaluate the metric on the results and decide the gate (``usage``: the per-trial
    cost, duration and tokens of a suite, for usage metrics)."""
    from gate.gates import Advice, GateDecision, outcome_name

    metric = spec.resolved
    assert metric is not None, "a metric gate is parsed by parse_metric_gates"
    level = spec.confidence if spec.confidence is not None else suite.confidence
    value, interval, names = _evaluate(metric, suite, spec.tag, level, usage, spec.suite)
    if spec.scope == "stimuli":
        from gate.metrics.evaluate import judge_stimuli

        assert value.per_stimulus is not None
        bounds = {"minimum": spec.target} if spec.direction == "min" else {"maximum": spec.target}
        verdict = judge_stimuli(value.per_stimulus, **bounds)
        return GateDecision(
            spec=spec,
            outcome="fail" if verdict.failing else "pass",
            basis="point estimate",
            value=verdict.worst_value,
            lower=None,
            upper=None,
            confidence=None,
            k=spec.k,
            method=value.estimator,
            subject=names[verdict.worst],
            failing=tuple(names[i] for i in verdict.failing),
        )
    if value.value is None:
        raise ConfigError(
            f"gate metric {metric.label()}: the value is undefined on these results "
            f"({value.estimator})"
        )
    if spec.bound == "estimate" or interval is None:
        code = PASS if _meets(value.value, spec) else FAIL
        return GateDecision(
            spec=replace(spec, bound="estimate"),
            outcome=outcome_name(code),
            basis="point estimate",
            value=value.value,
            lower=None,
            upper=None,
            confidence=None,
            k=spec.k,
            method=value.estimator,
            subject=suite.name,
        )
    code = int(three_way(interval.lo, interval.hi, spec.target, spec.direction))
    advice = Advice()
    if code == INCONCLUSIVE and advise:
        advice = Advice(more_trials=_more_trials(spec, suite, level))
    return GateDecision(
        spec=spec,
        outcome=outcome_name(code),
        basis="interval",
        value=value.value,
        lower=float(interval.lo),
        upper=float(interval.hi),
        confidence=interval.confidence,
        k=spec.k,
        method=interval.method,
        subject=suite.name,
        advice=advice,
    )


def _meets(value: float, spec: GateSpec) -> bool:
    tolerance = 1e-12
    if spec.direction == "min":
        return value >= spec.target - tolerance
    return value <= spec.target + tolerance


Goal = Literal["min", "max"]
