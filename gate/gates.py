"""Gates: the configuration's targets decided on the suite's numbers, one decision each.

Every gate kind returns the same :class:`GateDecision`: an outcome (``pass``,
``fail`` or ``inconclusive``), the value, the bounds it was decided on, the
target, and advice (how much more data would decide an inconclusive gate). The
rules themselves are the pure, vectorised ones of :mod:`gate.metrics.decision`,
so the verdict and the simulations behind the advice apply the same rule.

- A gate on an interval (``bound: lower``/``upper``/``interval``) passes when the
  interval clears the target, fails when it misses it, and is otherwise
  inconclusive (statistics.md §8).
- A gate on the point estimate (``bound: estimate``) passes or fails; it has no
  error control, and the report says so.
- ``max_ci_half_width`` passes when the interval is narrow enough, else it is
  inconclusive: the data are not yet precise enough.
- Regression gates compare with a baseline (:mod:`gate.compare`): fail when a
  drop beyond δ is shown, pass when a drop beyond the detectable margin D is
  ruled out, otherwise inconclusive (``min_improvement`` mirrors it).
- A run in which every counted trial errored cannot pass, whatever is configured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, cast

import numpy as np

from gate.compare import Comparison, RunCounts, compare
from gate.config import GATE_KINDS, INTERVAL_METRICS, REGRESSION_KINDS, GateConfig, GateSpec
from gate.errors import ConfigError
from gate.metrics.decision import (
    FAIL,
    INCONCLUSIVE,
    OUTCOMES,
    IntervalRule,
    PairedRule,
    PointRule,
    PrecisionRule,
    SequentialRule,
    more_stimuli,
    more_trials,
    more_trials_paired,
    more_trials_sequential,
    stimulus_bounds,
    stimulus_estimates,
    stimulus_more_trials,
    stimulus_more_trials_sequential,
)
from gate.metrics.intervals import method_label, suite_interval_label
from gate.metrics.trial_noise import pass_fail_sums
from gate.scoring import Metric, SuiteScore, metric_values, names_of, score_arrays

if TYPE_CHECKING:
    from gate.metric_gates import UsageOf

Outcome = Literal["pass", "fail", "inconclusive"]
Basis = Literal["interval", "point estimate", "precision", "paired test", "every trial errored"]
#: the pseudo-kind of the check that a run in which every trial errored cannot pass.
COMPLETED_TRIALS = "completed_trials"


@dataclass(frozen=True)
class Advice:
    """What would decide an inconclusive gate with ≥ 80% predictive probability.

    The probability is simulated with the gate's own rule, each run drawing the truth
    from what the data allow (:mod:`gate.metrics.decision`): an average over the truths
    the data leave open, so the advice decides about 80% of the gates left in this state,
    not 80% at every truth (at a truth exactly on the target nothing decides).

    Attributes:
        more_trials: Additional trials per stimulus (on both runs for a comparison).
        more_stimuli: Paired stimuli needed in all, for a comparison (where trials
            alone may not help).
        stimuli: Per undecided stimulus of a per-stimulus gate, its additional trials
            (``None``: more trials would not decide it within the search limit).
        power: The probability the figures are stated at.
    """

    more_trials: int | None = None
    more_stimuli: int | None = None
    stimuli: tuple[tuple[str, int | None], ...] = ()
    power: float = 0.8


@dataclass(frozen=True)
class GateDecision:
    """One gate's decision.

    Attributes:
        spec: The gate as configured (kind, metric, target, scope, tag, bound…).
        outcome: ``"pass"``, ``"fail"`` or ``"inconclusive"``.
        basis: What decided it: ``"interval"``, ``"point estimate"`` (no error
            control), ``"precision"`` (interval half-width), ``"paired test"``
            (regression gates) or ``"every trial errored"``.
        value: The estimate the gate is about: the suite value, or the worst
            stimulus's for ``scope: stimuli`` (the half-width for precision gates,
            Δ for a comparison).
        lower, upper: The bounds it was decided on (``None`` for point estimates).
        confidence: Level of those bounds.
        k: The k of pass@k / pass^k (``None`` where it does not apply).
        method: The interval method or the test that produced the bounds.
        subject: The suite, or the stimulus that ``value`` belongs to.
        failing: Stimuli that fail a per-stimulus gate.
        undecided: Stimuli that leave a per-stimulus gate inconclusive.
        advice: For an inconclusive gate, what would decide it.
        comparison: The baseline comparison behind a regression gate.
        p_value: A regression gate's one-sided p-value at its own margin (the
            smallest Holm-adjusted one per stimulus).
        outside: Stimuli whose unbiased estimate lies outside the interval of the
            latent value (the gate then decided on the estimate for them).
    """

    spec: GateSpec
    outcome: Outcome
    basis: Basis
    value: float | None
    lower: float | None
    upper: float | None
    confidence: float | None
    k: int | None
    method: str | None
    subject: str
    failing: tuple[str, ...] = ()
    undecided: tuple[str, ...] = ()
    advice: Advice = field(default_factory=Advice)
    comparison: Comparison | None = None
    p_value: float | None = None
    outside: int = 0
    #: decided on a confidence sequence (valid at every look), not a fixed-n interval.
    sequential: bool = False
    #: stimuli left out of a flakiness gate: a single counted trial cannot show flakiness.
    unmeasured: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def target(self) -> float:
        return self.spec.target

    @property
    def direction(self) -> Literal["min", "max"]:
        return self.spec.direction

    @property
    def scope(self) -> str:
        return self.spec.scope

    @property
    def tag(self) -> str | None:
        return self.spec.tag

    @property
    def suite(self) -> str | None:
        return self.spec.suite


def verdict_of(decisions: Sequence[GateDecision]) -> Outcome:
    """The run's verdict: fail if any gate fails, else inconclusive if any is, else pass."""
    outcomes = {d.outcome for d in decisions}
    if "fail" in outcomes:
        return "fail"
    return "inconclusive" if "inconclusive" in outcomes else "pass"


def more_trials_by_stimulus(
    decisions: Sequence[GateDecision], suite: SuiteScore
) -> dict[tuple[str, str], int]:
    """Per stimulus (suite, name): the additional trials its inconclusive gates ask for.

    A per-stimulus gate names what each undecided stimulus needs; a suite gate needs its
    ``more_trials`` on every stimulus it covers. A stimulus under several gates gets the
    largest, so re-running just these stimuli that many times decides every gate that
    more trials can decide, with the advice's (predictive) probability. Regression gates
    ask for trials on both runs and are left out: re-running the candidate alone does not
    decide them.
    """
    needed: dict[tuple[str, str], int] = {}

    def ask(key: tuple[str, str], trials: int | None) -> None:
        if trials:
            needed[key] = max(needed.get(key, 0), trials)

    for decision in decisions:
        if decision.outcome != "inconclusive" or decision.comparison is not None:
            continue
        covered = suite.chosen(decision.spec.tag, decision.spec.suite)
        if decision.advice.stimuli:
            per = dict(decision.advice.stimuli)
            for s in covered:
                ask((s.suite, s.name), per.get(s.name))
        else:
            for s in covered:
                ask((s.suite, s.name), decision.advice.more_trials)
    return needed


def outcome_name(code: int) -> Outcome:
    """``"pass"``, ``"inconclusive"`` or ``"fail"`` for a rule's outcome code."""
    return cast(Outcome, OUTCOMES[int(code)])


def _none_chosen(spec: GateSpec) -> ConfigError:
    where = f" in suite {spec.suite!r}" if spec.suite is not None else ""
    return ConfigError(f"no stimulus carries the tag {spec.tag!r}{where}")


def _chosen(suite: SuiteScore, spec: GateSpec) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The counts and names of the stimuli a gate is about (its tag, its suite)."""
    n, c, chosen = suite.counts(spec.tag, spec.suite)
    if not chosen:
        raise _none_chosen(spec)
    return n, c, [s.name for s in chosen]


def _subject(suite: SuiteScore, spec: GateSpec) -> str:
    return spec.suite if spec.suite is not None else suite.name


def _check_k(suite: SuiteScore, spec: GateSpec, k: int) -> None:
    if spec.metric not in ("pass_at_k", "pass_hat_k"):
        return
    chosen = suite.chosen(spec.tag, spec.suite)
    too_few = np.flatnonzero(score_arrays(chosen, ("trials",))["trials"] < k)
    if too_few.size:
        first = chosen[int(too_few[0])]
        raise ConfigError(
            f"a gate needs k = {k} but stimulus {first.name!r} has only "
            f"{first.trials} counted {'trial' if first.trials == 1 else 'trials'}; "
            "it cannot be evaluated"
        )


_MAPPED = {
    "pass_rate": "",
    "pass_at_k": ", mapped through 1-(1-p)^k",
    "pass_hat_k": ", mapped through p^k",
}


def _interval_label(method: str, spec: GateSpec, n: np.ndarray, k: int) -> str:
    """How the bounds were computed, as the suite's own interval labels say it."""
    if spec.scope == "suite":
        divisor = 1 if spec.metric == "pass_rate" else k
        return suite_interval_label(method, n.size * int(np.min(n)) / divisor, divisor)
    return f"{method_label(method)}{_MAPPED[spec.metric]}"


def _count_metric(spec: GateSpec) -> Literal["pass_rate", "pass_at_k", "pass_hat_k"]:
    return cast(Literal["pass_rate", "pass_at_k", "pass_hat_k"], spec.metric)


def _worst_name(names: Sequence[str], values: np.ndarray, direction: str) -> str:
    return names[int(np.argmin(values) if direction == "min" else np.argmax(values))]


def _count_gate(
    spec: GateSpec, suite: SuiteScore, k: int, level: float, advise: bool
) -> GateDecision:
    """A gate on a count metric's interval (three outcomes) or on its half-width
    (``max_ci_half_width``: pass or inconclusive), suite-wide or stimulus by stimulus."""
    n, c, names = _chosen(suite, spec)
    metric = _count_metric(spec)
    precision = spec.kind == "max_ci_half_width"
    rule: IntervalRule | PrecisionRule
    if precision:
        rule = PrecisionRule(metric, k, spec.target, level, suite.interval_method, spec.scope)
    else:
        rule = IntervalRule(
            metric, k, spec.target, spec.direction, level, suite.interval_method, spec.scope
        )
    result = rule.evaluate(n, c)
    outcome = outcome_name(result.outcome[0])
    failing: tuple[str, ...] = ()
    undecided: tuple[str, ...] = ()
    subject = _subject(suite, spec)
    outside = 0
    if result.stimuli is not None:
        codes = result.stimuli[0]
        failing = tuple(x for x, code in zip(names, codes, strict=True) if code == FAIL)
        undecided = tuple(x for x, code in zip(names, codes, strict=True) if code == INCONCLUSIVE)
        lo, hi = stimulus_bounds(metric, n, c, k, level, suite.interval_method)
        if precision:
            subject = _worst_name(names, hi - lo, "max")
        else:
            estimates = stimulus_estimates(metric, n, c, k)
            subject = _worst_name(names, estimates, spec.direction)
            outside = int(np.count_nonzero((estimates < lo) | (estimates > hi)))
    advice = Advice()
    if outcome == "inconclusive" and advise:
        per: tuple[tuple[str, int | None], ...] = ()
        family: dict[int, float] = {}
        if result.stimuli is not None:
            each = stimulus_more_trials(rule, n, c, family=family)
            per = tuple(
                (x, m)
                for x, m, code in zip(names, each, codes, strict=True)
                if code == INCONCLUSIVE
            )
        advice = Advice(more_trials=more_trials(rule, n, c, known=family), stimuli=per)
    return GateDecision(
        spec=spec,
        outcome=outcome,
        basis="precision" if precision else "interval",
        value=float(result.value[0]),
        lower=float(result.lower[0]),
        upper=float(result.upper[0]),
        confidence=level,
        k=k if metric != "pass_rate" else None,
        method=_interval_label(suite.interval_method, spec, n, k),
        subject=subject,
        failing=failing,
        undecided=undecided,
        advice=advice,
        outside=outside,
    )


def _point_gate(spec: GateSpec, suite: SuiteScore, k: int) -> GateDecision:
    metric = cast(Metric, "flakiness" if spec.kind == "max_flakiness" else spec.metric)
    values = metric_values(
        suite, metric, k=k, estimator=spec.estimator, tag=spec.tag, suite_name=spec.suite
    )
    names = names_of(values.stimuli)
    numbers = values.values
    unmeasured: tuple[str, ...] = ()
    if metric == "flakiness":
        # A stimulus with one counted trial has flakiness 0 whatever the agent does: it would
        # pass a flakiness gate (or dilute the suite's mean) on no evidence at all.
        measured = score_arrays(values.stimuli, ("trials",))["trials"] >= 2
        unmeasured = tuple(x for x, m in zip(names, measured.tolist(), strict=True) if not m)
        if not measured.any():
            return _unmeasured_flakiness(spec, suite, unmeasured)
        names = [x for x, m in zip(names, measured.tolist(), strict=True) if m]
        numbers = numbers[measured]
    rule = PointRule(metric, k, spec.target, spec.direction, spec.scope)
    result = rule.decide_values(numbers)
    failing: tuple[str, ...] = ()
    subject = _subject(suite, spec)
    if result.stimuli is not None:
        codes = result.stimuli[0]
        failing = tuple(x for x, code in zip(names, codes, strict=True) if code == FAIL)
        subject = _worst_name(names, numbers, spec.direction)
    return GateDecision(
        spec=spec,
        outcome=outcome_name(result.outcome[0]),
        basis="point estimate",
        value=float(result.value[0]),
        lower=None,
        upper=None,
        confidence=None,
        k=k if spec.metric in ("pass_at_k", "pass_hat_k") else None,
        method=None,
        subject=subject,
        failing=failing,
        unmeasured=unmeasured,
    )


def _unmeasured_flakiness(
    spec: GateSpec, suite: SuiteScore, stimuli: tuple[str, ...]
) -> GateDecision:
    """A flakiness gate on stimuli that all have a single counted trial: undecided, since
    one trial cannot show flakiness (the advice, "at least two", is in its sentence)."""
    return GateDecision(
        spec=spec,
        outcome="inconclusive",
        basis="point estimate",
        value=None,
        lower=None,
        upper=None,
        confidence=None,
        k=None,
        method=None,
        subject=_subject(suite, spec),
        undecided=stimuli if spec.scope == "stimuli" else (),
        unmeasured=stimuli,
    )


def _outcomes(suite: SuiteScore, spec: GateSpec) -> tuple[list[np.ndarray], list[str]]:
    """Every chosen stimulus's counted outcomes in trial order, for a confidence sequence."""
    chosen = suite.chosen(spec.tag, spec.suite)
    if not chosen:
        raise _none_chosen(spec)
    missing = [s.name for s in chosen if len(s.outcomes) != s.trials]
    if missing:
        raise ConfigError(
            f"sequential: stimulus {missing[0]!r} has no trial order (a counts file gives "
            "totals only); confidence sequences need every trial in order"
        )
    return [np.frombuffer(s.outcomes.encode(), dtype=np.uint8) == ord("P") for s in chosen], [
        s.name for s in chosen
    ]


def _sequential_gate(
    spec: GateSpec, suite: SuiteScore, k: int, level: float, advise: bool
) -> GateDecision:
    outcomes, names = _outcomes(suite, spec)
    precision = spec.kind == "max_ci_half_width"
    rule = SequentialRule(
        _count_metric(spec), k, spec.target, spec.direction, level, spec.scope, precision
    )
    result = rule.evaluate_outcomes(list(outcomes))
    outcome = outcome_name(result.outcome[0])
    failing: tuple[str, ...] = ()
    undecided: tuple[str, ...] = ()
    subject = _subject(suite, spec)
    if result.stimuli is not None:
        codes = result.stimuli[0]
        failing = tuple(x for x, code in zip(names, codes, strict=True) if code == FAIL)
        undecided = tuple(x for x, code in zip(names, codes, strict=True) if code == INCONCLUSIVE)
        rates = np.array([x.mean() if x.size else np.nan for x in outcomes])
        subject = _worst_name(names, np.nan_to_num(rates, nan=0.0), spec.direction)
    advice = Advice()
    if outcome == "inconclusive" and advise:
        if spec.scope == "suite":
            advice = Advice(more_trials=more_trials_sequential(rule, list(outcomes)))
        else:
            # Each undecided stimulus on its own sequence (its pass side; the fail side's
            # Bonferroni level is stricter, so this may understate what a failure needs).
            alone = replace(rule, scope="suite")
            open_ = set(undecided)
            chosen = [(name, x) for name, x in zip(names, outcomes, strict=True) if name in open_]
            each = stimulus_more_trials_sequential(alone, [x for _, x in chosen])
            per = tuple((name, m) for (name, _), m in zip(chosen, each, strict=True))
            found = [m for _, m in per if m is not None]
            advice = Advice(more_trials=max(found) if found else None, stimuli=per)
    degree = 1 if spec.metric == "pass_rate" else k
    return GateDecision(
        spec=spec,
        outcome=outcome,
        basis="precision" if precision else "interval",
        value=float(result.value[0]),
        lower=float(result.lower[0]),
        upper=float(result.upper[0]),
        confidence=level,
        k=k if spec.metric != "pass_rate" else None,
        method=(
            f"confidence sequence (anytime-valid; beta-mixture over complete rounds of "
            f"{degree}-trial blocks)"
        ),
        subject=subject,
        failing=failing,
        undecided=undecided,
        advice=advice,
        sequential=True,
    )


def decide_gate(
    spec: GateSpec,
    suite: SuiteScore,
    sequential: bool = False,
    *,
    advise: bool = True,
    usage: UsageOf | None = None,
) -> GateDecision:
    """Decide one gate on the results alone; :class:`ConfigError` when it cannot be evaluated.

    ``sequential``: gates on an interval (and half-width gates) decide on confidence
    sequences, valid however often the check is re-run as trials arrive. ``advise``:
    simulate what would decide an inconclusive gate (off for simulations of the rule).
    ``usage``: per-trial cost, duration and tokens by suite, for gates on usage metrics.
    """
    if spec.kind in REGRESSION_KINDS:
        raise ValueError("regression gates are decided by decide_gates, with the baseline")
    if spec.kind == "metric":
        from gate.metric_gates import decide_metric_gate

        return decide_metric_gate(spec, suite, usage, advise=advise)
    k = spec.k if spec.k is not None else suite.k
    level = spec.confidence if spec.confidence is not None else suite.confidence
    _check_suite(spec, suite.suite_names)
    _check_k(suite, spec, k)
    on_interval = spec.bound != "estimate" and spec.metric in INTERVAL_METRICS
    if sequential and (on_interval or spec.kind == "max_ci_half_width"):
        return _sequential_gate(spec, suite, k, level, advise)
    if on_interval or spec.kind == "max_ci_half_width":
        return _count_gate(spec, suite, k, level, advise)
    if spec.tag is not None or spec.suite is not None:
        _chosen(suite, spec)
    return _point_gate(spec, suite, k)


def _check_suite(spec: GateSpec, names: Sequence[str]) -> None:
    """A gate naming a suite the results do not hold is a configuration error (exit 2)."""
    if spec.suite is None or spec.suite in names:
        return
    held = ", ".join(repr(x) for x in names)
    raise ConfigError(
        f"gate {spec.kind} names suite {spec.suite!r}, which the results do not hold; "
        f"they hold {'suite' if len(names) == 1 else 'suites'} {held}"
    )


# --------------------------------------------------------------------------- baseline


def counts_by_stimulus(
    suite: SuiteScore, qualified: bool, keep: set[str] | None = None
) -> dict[str, RunCounts]:
    """Per-stimulus counts keyed by id (``suite/name`` when several suites are in play).

    ``keep``: only these ids (a tag's stimuli); ``None`` keeps every stimulus.
    """
    counts = {}
    for s in suite.stimuli:
        key = f"{s.suite}/{s.name}" if qualified else s.name
        if keep is None or key in keep:
            counts[key] = RunCounts(s.trials, s.passes, s.aggregate_score)
    return counts


def _tagged(
    suites: Sequence[SuiteScore], tag: str | None, suite_name: str | None, qualified: bool
) -> set[str]:
    """Ids carrying ``tag`` in the suite ``suite_name`` in either run: such a stimulus is
    compared on both sides."""
    return {
        f"{s.suite}/{s.name}" if qualified else s.name
        for suite in suites
        for s in suite.chosen(tag, suite_name)
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
        f"out of the paired test (e.g. {first.id!r}: {first.describe(comparison.k)})"
    )


#: (metric, k, tag, suite, level): gates that agree on these share one comparison.
ComparisonKey = tuple[str, int | None, str | None, str | None, float]


def _comparisons(
    config: GateConfig, candidate: SuiteScore, baseline: SuiteScore
) -> dict[ComparisonKey, Comparison]:
    """One comparison per (metric, k, tag, level) the regression gates ask for; without
    regression gates, the pass-rate comparison over every stimulus, for the report."""
    suites = {s.suite for s in candidate.stimuli} | {s.suite for s in baseline.stimuli}
    qualified = len(suites) > 1
    keys: list[tuple[ComparisonKey, str]] = []
    for spec in config.gates:
        if spec.kind in REGRESSION_KINDS:
            level = spec.confidence if spec.confidence is not None else config.confidence
            keys.append(((spec.metric, spec.k, spec.tag, spec.suite, level), f"gate {spec.kind}"))
    if not keys:
        keys.append(
            (("pass_rate", None, None, None, config.confidence), "the baseline comparison")
        )
    found: dict[ComparisonKey, Comparison] = {}
    for key, what in keys:
        if key in found:
            continue
        metric, k, tag, suite_name, level = key
        keep = None
        if tag is not None or suite_name is not None:
            keep = _tagged((candidate, baseline), tag, suite_name, qualified)
        if keep is not None and not keep:
            where = f" in suite {suite_name!r}" if suite_name is not None else ""
            raise ConfigError(
                f"{what}: no stimulus carries the tag {tag!r}{where} in the results or the "
                "baseline"
            )
        comparison = compare(
            counts_by_stimulus(baseline, qualified, keep),
            counts_by_stimulus(candidate, qualified, keep),
            metric=cast(Literal["pass_rate", "pass_hat_k", "score"], metric),
            k=k,
            confidence=level,
            tag=tag,
        )
        _require_pairs(comparison, what)
        found[key] = replace(comparison, suite=suite_name)
    return found


def _regression_gate(spec: GateSpec, comparison: Comparison, advise: bool = True) -> GateDecision:
    kind = cast(Literal["max_regression", "min_improvement"], spec.kind)
    assert spec.detectable is not None
    rule = PairedRule(
        kind,
        comparison.metric,
        comparison.k or 1,
        spec.target,
        spec.detectable,
        comparison.confidence,
        spec.scope,
    )
    rows = comparison.rows
    nb = np.array([r.baseline_counts.n for r in rows])
    cb = np.array([r.baseline_counts.c for r in rows])
    nc = np.array([r.candidate_counts.n for r in rows])
    cc = np.array([r.candidate_counts.c for r in rows])
    test = comparison.test
    if spec.scope == "stimuli":
        result = rule.evaluate_stimuli(nb, cb, nc, cc)
        codes = result.stimuli[0] if result.stimuli is not None else np.zeros(0)
        ids = [r.id for r in rows]
        outcome = outcome_name(result.outcome[0])
        assert result.worst is not None
        worst = rows[int(result.worst[0])]  # the stimulus whose Δ and bounds are reported
        advice = Advice()
        if outcome == "inconclusive" and advise:
            advice = Advice(more_trials=more_trials_paired(rule, nb, cb, nc, cc))
        return GateDecision(
            spec=spec,
            outcome=outcome,
            basis="paired test",
            value=float(result.value[0]),
            lower=float(result.lower[0]),
            upper=float(result.upper[0]),
            confidence=comparison.confidence,
            k=comparison.k,
            method=(
                "one-sided Fisher exact test per stimulus (Holm); "
                "Newcombe and Miettinen-Nurminen score bounds, held to an exact "
                "unconditional test"
            ),
            subject=worst.id,
            failing=tuple(x for x, code in zip(ids, codes, strict=True) if code == FAIL),
            undecided=tuple(x for x, code in zip(ids, codes, strict=True) if code == INCONCLUSIVE),
            advice=advice,
            comparison=comparison,
            p_value=worst.p_holm,
        )
    outcome = outcome_name(rule.decide_bounds([test.lower], [test.upper])[0])
    advice = Advice()
    if outcome == "inconclusive" and advise:
        trials = None if comparison.metric == "score" else more_trials_paired(rule, nb, cb, nc, cc)
        # more_stimuli decides whether the metric's trials carry a noise floor (floor_k).
        more = more_stimuli(
            rule, comparison.differences, counts=_floor_counts(comparison, nb, cb, nc, cc)
        )
        advice = Advice(more_trials=trials, more_stimuli=more)
    at_margin = comparison.test_at(
        margin=spec.target if kind == "max_regression" else 0.0,
        gain=spec.target if kind == "min_improvement" else 0.0,
    )
    return GateDecision(
        spec=spec,
        outcome=outcome,
        basis="paired test",
        value=test.delta,
        lower=test.lower,
        upper=test.upper,
        confidence=comparison.confidence,
        k=comparison.k,
        method=test.method,
        subject="",
        advice=advice,
        comparison=comparison,
        p_value=at_margin.p_worse if kind == "max_regression" else at_margin.p_better,
    )


def _floor_counts(
    comparison: Comparison, nb: np.ndarray, cb: np.ndarray, nc: np.ndarray, cc: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Each paired stimulus's (n_b, c_b, n_c, c_c) for the advice's noise floor, given its
    trial and pass counts: the pass counts, or for pass/fail scores their sums; None for
    graded scores, which have no floor (as in the comparison's own test)."""
    if comparison.metric != "score":
        return nb, cb, nc, cc
    scores_b = np.array([r.baseline for r in comparison.rows], dtype=np.float64)
    scores_c = np.array([r.candidate for r in comparison.rows], dtype=np.float64)
    sums = pass_fail_sums(nb, scores_b, nc, scores_c)
    return None if sums is None else (nb, sums[0], nc, sums[1])


def _completed_trials(suite: SuiteScore) -> GateDecision | None:
    """A run in which every counted trial errored measured nothing about the agent."""
    # Errored trials are counted (as failures) only under errors: fail; excluded ones are
    # not among ``suite.trials`` at all, so they can never make up every counted trial.
    if suite.errors_policy != "fail" or suite.trials == 0 or suite.errors < suite.trials:
        return None
    # Counted in trials: none completed without error, at least one needed.
    spec = GateSpec(COMPLETED_TRIALS, 1.0, "completed", default=True, goal="min")
    return GateDecision(
        spec=spec,
        outcome="fail",
        basis="every trial errored",
        value=0.0,
        lower=None,
        upper=None,
        confidence=None,
        k=None,
        method=None,
        subject=suite.name,
    )


def decide_gates(
    config: GateConfig,
    suite: SuiteScore,
    baseline: SuiteScore | None = None,
    *,
    advise: bool = True,
    usage: UsageOf | None = None,
) -> tuple[list[GateDecision], list[Comparison]]:
    """Every configured gate, in configuration order, and the comparisons behind them.

    Regression gates need ``baseline``; gates comparing the same metric (and k) on
    the same stimuli (tag) at the same level share one comparison, which each
    decision references. With a baseline and no regression gate, the pass-rate
    comparison still runs, for the report.

    Raises :class:`ConfigError` when a gate cannot be evaluated on these results (k
    above a stimulus's trials, a tag no stimulus carries, a suite the results do not
    hold, no stimulus in common with the baseline, a regression gate without a baseline).
    """
    regression = [g for g in config.gates if g.kind in REGRESSION_KINDS]
    if regression and baseline is None:
        raise ConfigError(f"gate {regression[0].kind} needs a baseline (--baseline FILES)")
    if regression and config.sequential:
        raise ConfigError(
            f"sequential: gate {regression[0].kind} is not sequential (its paired test holds "
            "for one look); run regression gates without --sequential, once the trials are in"
        )
    for spec in config.gates:
        names = set(suite.suite_names)
        if spec.kind in REGRESSION_KINDS and baseline is not None:
            names |= set(baseline.suite_names)
        _check_suite(spec, sorted(names))
    comparisons = _comparisons(config, suite, baseline) if baseline is not None else {}
    decisions: list[GateDecision] = []
    for spec in config.gates:
        if spec.kind in REGRESSION_KINDS:
            level = spec.confidence if spec.confidence is not None else config.confidence
            comparison = comparisons[(spec.metric, spec.k, spec.tag, spec.suite, level)]
            decisions.append(_regression_gate(replace(spec, k=comparison.k), comparison, advise))
        else:
            decisions.append(
                decide_gate(spec, suite, config.sequential, advise=advise, usage=usage)
            )
    completed = _completed_trials(suite)
    if completed is not None:
        decisions.append(completed)
    assert all(d.kind in GATE_KINDS or d.kind == COMPLETED_TRIALS for d in decisions)
    return decisions, list(comparisons.values())
