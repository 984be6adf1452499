"""Plan a run: the trials per stimulus (or stimuli) each configured gate needs.

``eval-gate plan`` answers "how many runs do I need?" with the gate's own rule:
for N trials per stimulus, draw every stimulus's passes from Binomial(N, p_i)
at the expected rates p_i, apply the gate's decision rule
(:mod:`gate.metrics.decision`), and find the smallest N at which the gate is
decided with probability ≥ ``power``. No normal formula: the interval, the
multiplicity adjustment and the discreteness of small counts are all in the
simulation.

- ``--expect P``: a stated truth, every p_i = P in every simulated run.
- ``--pilot``: the pilot's rates are estimates, not the truth. Each simulated run
  draws the p_i from what the pilot allows (:func:`gate.metrics.posterior.posterior_rates`),
  so the probability is *predictive*: an average over the truths the pilot leaves
  open (calibrated on average over them, not for each one). Simulating at the
  pilot's c/n instead took a stimulus that went 3/3 for one that never fails; from
  a 3-trial pilot those plans decided the gate far less often than they promised.

- A gate on an interval (or a half-width gate) is *decided* when it passes or
  fails.
- A gate on the point estimate always decides; its plan is the N at which its
  verdict agrees with the one the true rates imply (no error control): the
  expected rates, or with a pilot each simulated run's drawn ones.
- A regression gate is planned for an unchanged agent (both runs at the
  expected rates): trials per stimulus on each run, and, where more trials
  cannot do it, the stimuli needed.
- Score gates (``threshold``) have no trial model, and gates of kind ``metric`` are
  not modelled yet: not planned (the report says so).

With a pilot that reports cost or duration, :attr:`Plan.spend` is the planned run's
expected cost and trial time at the pilot's usage per trial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from gate.config import INTERVAL_METRICS, REGRESSION_KINDS, GateConfig, GateSpec
from gate.errors import ConfigError
from gate.metrics.decision import (
    INCONCLUSIVE,
    PASS,
    IntervalRule,
    PairedRule,
    PointRule,
    PrecisionRule,
    _runs_within,
    _smallest,
)
from gate.metrics.posterior import posterior_rates
from gate.rates import pct

if TYPE_CHECKING:
    from gate.metrics.usage import UsageSummary

#: searches stop here: a plan beyond it is not a plan anyone can run.
MAX_TRIALS = 5_000
MAX_STIMULI = 20_000
#: simulated runs per probability (the estimate's standard error at 0.8 is about 0.009),
#: fewer for large suites so that runs × stimuli stays within a budget (time and memory):
#: 200 at 20,000 stimuli, down to _FEWEST_RUNS (± 0.06) at 100,000.
RUNS = 2_000
_FEWEST_RUNS, _ELEMENTS = 40, 4_000_000


def _runs(stimuli: int) -> int:
    return _runs_within(stimuli, _ELEMENTS, RUNS, _FEWEST_RUNS)


_SEED = 20_261_124

Goal = Literal["decide", "agree", "not planned"]


@dataclass(frozen=True)
class GatePlan:
    """One gate's plan.

    Attributes:
        spec: The gate.
        k: The k it was planned at (``None`` where k does not apply).
        goal: ``"decide"`` (pass or fail, for gates with error control), ``"agree"``
            (point-estimate gates: the verdict the expected rates imply) or
            ``"not planned"``.
        trials: Trials per stimulus that reach ``power`` (``None``: not within
            :data:`MAX_TRIALS`, or not planned).
        stimuli: For regression gates, the stimuli needed at ``trials_for_stimuli``
            trials per stimulus, when more trials alone do not reach ``power``.
        trials_for_stimuli: The trials per stimulus that ``stimuli`` assumes.
        probability: The simulated probability at ``trials`` (≥ power).
        probability_smaller: The same at 0.6 × ``trials`` (rounded down): how much a smaller
            run loses; None when that is fewer trials than the gate can be decided on.
        expected_outcome: For ``agree``: the verdict the expected (or the pilot's) rates imply.
        reason: Why a gate is not planned or cannot reach ``power`` (a code the
            report words: ``"score"``, ``"metric"``, ``"on target"``, ``"unreachable"``).
        covers: The planned stimuli a gate with ``tag:`` or ``suite:`` is about, when a
            pilot says which carry them (``None``: every planned stimulus).
    """

    spec: GateSpec
    goal: Goal
    trials: int | None
    k: int | None = None
    stimuli: int | None = None
    trials_for_stimuli: int | None = None
    probability: float | None = None
    probability_smaller: float | None = None
    expected_outcome: str | None = None
    reason: str | None = None
    covers: int | None = None


#: a pilot stimulus's suite and tags, which a gate's ``suite:`` and ``tag:`` choose by
StimulusGroup = tuple[str, "frozenset[str] | set[str]"]


class ExpectedSpend(NamedTuple):
    """What the planned run costs, at the pilot's usage per trial.

    ``trials`` = trials per stimulus × stimuli. ``cost_usd`` = trials × the pilot's
    mean cost per trial (ratio estimator, :func:`gate.metrics.usage.cost_summary`);
    ``cost_usd_interval`` = trials × that mean's interval (its method and level as
    ``cost_method``; ``None`` with fewer than 5 pilot stimuli reporting a cost).
    ``trial_seconds`` = trials × the pilot's mean duration: the summed time of the
    trials, which is wall-clock time only when they run one after another.
    """

    trials: int
    cost_usd: float | None
    cost_usd_interval: tuple[float, float] | None
    cost_method: str | None
    trial_seconds: float | None
    pilot_trials: int


@dataclass(frozen=True)
class Plan:
    """The plan of every configured gate, at ``stimuli`` stimuli and the expected rates."""

    stimuli: int
    rates: npt.NDArray[np.float64]
    source: str
    power: float
    confidence: float
    interval: str
    gates: tuple[GatePlan, ...]
    #: the pilot's cost and duration per trial, when its trials report them
    pilot_usage: UsageSummary | None = None
    #: whether every simulated run drew its rates from what a pilot's data allow
    predictive: bool = False

    @property
    def trials_per_stimulus(self) -> int | None:
        """The largest over gates: the run that decides every gate that can be decided."""
        found = [g.trials for g in self.gates if g.trials is not None]
        return max(found) if found else None

    @property
    def spend(self) -> ExpectedSpend | None:
        """The expected cost and trial time of the planned run (``None`` without a pilot
        that reports cost or duration, or without a plan in trials per stimulus)."""
        return expected_spend(self.pilot_usage, self.trials_per_stimulus, self.stimuli)


def expected_spend(
    usage: UsageSummary | None, trials_per_stimulus: int | None, stimuli: int
) -> ExpectedSpend | None:
    """Trials × the pilot's mean cost and duration per trial (see :class:`ExpectedSpend`).

    >>> from gate.metrics.usage import TrialUsage, usage_summary
    >>> pilot = usage_summary(TrialUsage.from_trials(list("ab"), [1, 0], cost_usd=[0.02, 0.04],
    ...                                              duration_s=[30, 50]))
    >>> spend = expected_spend(pilot, 10, 20)
    >>> spend.trials, round(spend.cost_usd, 6), spend.trial_seconds, spend.cost_usd_interval
    (200, 6.0, 8000.0, None)
    """
    if usage is None or trials_per_stimulus is None:
        return None
    cost, duration, _ = usage
    if cost is None and duration is None:
        return None
    trials = trials_per_stimulus * stimuli
    interval = cost.mean_per_trial_interval if cost is not None else None
    return ExpectedSpend(
        trials=trials,
        cost_usd=None if cost is None else trials * cost.mean_per_trial,
        cost_usd_interval=None
        if interval is None
        else (trials * interval.lo, trials * interval.hi),
        cost_method=None
        if interval is None
        else f"{pct(interval.confidence)} {interval.method}, of the pilot's mean per trial",
        trial_seconds=None if duration is None else trials * duration.mean,
        pilot_trials=max(
            (block.trials for block in (cost, duration) if block is not None), default=0
        ),
    )


CountMetric = Literal["pass_rate", "pass_at_k", "pass_hat_k"]
Evaluate = Callable[[npt.NDArray[np.int64], npt.NDArray[np.int64]], npt.NDArray[np.int8]]


class _Truths:
    """The true rates the simulated runs are drawn at: the expected rates in every run, or
    (with a pilot) each run's own draw from what the pilot allows.

    ``rates`` are the planned stimuli's expected rates; ``pilot`` the pilot's trials and
    passes per stimulus, which the planned stimuli repeat in order (``--stimuli``).
    """

    def __init__(
        self,
        rates: npt.NDArray[np.float64],
        pilot: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None,
    ) -> None:
        self.rates = rates
        self.pilot = pilot
        self._drawn: dict[int, npt.NDArray[np.float64]] = {}

    def draw(self, stimuli: int | None = None) -> npt.NDArray[np.float64]:
        """Rates (runs, ``stimuli``) for :func:`_runs` runs (default: the planned stimuli;
        more repeat them in order)."""
        count = self.rates.size if stimuli is None else stimuli
        runs = _runs(count)
        if self.pilot is None:
            return np.broadcast_to(np.resize(self.rates, count), (runs, count))
        if runs not in self._drawn:  # one draw per run count: every N sees the same truths
            trials, passes = self.pilot
            rng = np.random.default_rng([_SEED, 1])
            self._drawn[runs] = posterior_rates(trials, passes, runs, rng)
        # A stimulus repeated from the pilot keeps its source's draw: repeating a pilot
        # stimulus does not make its rate any better known.
        drawn = self._drawn[runs]
        return drawn[:, np.arange(count) % drawn.shape[1]]


Verdicts = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.int8]]


def _probability(evaluate: Evaluate, truths: _Truths, n: int, verdicts: Verdicts | None) -> float:
    """P(the rule decides) (``verdicts=None``) or P(the run's outcome is the verdict its
    true rates imply) (``verdicts``: true rates (runs, M) → verdicts), over simulated runs."""
    rates = truths.draw()
    rng = np.random.default_rng(_SEED)
    c = rng.binomial(n, rates)
    outcome = evaluate(np.full(rates.shape[1], n), c)
    if verdicts is None:
        return float(np.mean(outcome != INCONCLUSIVE))
    return float(np.mean(outcome == verdicts(rates)))


@dataclass(frozen=True)
class _Found:
    trials: int | None
    probability: float | None
    probability_smaller: float | None


def _search(probability: Callable[[int], float], power: float, start: int) -> _Found:
    """The smallest N ≥ ``start`` reaching ``power``, its probability and that at 0.6 N
    (None when 0.6 N is below ``start``: no smaller run to compare with)."""
    found = _smallest(probability, power, MAX_TRIALS, start=start)
    if found is None:
        return _Found(None, None, None)
    smaller = int(0.6 * found)
    return _Found(found, probability(found), probability(smaller) if smaller >= start else None)


def _k(spec: GateSpec, config: GateConfig) -> int:
    k = spec.k if spec.k is not None else config.k
    if k is None:
        if spec.metric in ("pass_at_k", "pass_hat_k"):
            raise ConfigError(
                f"plan: gate {spec.kind} on {spec.metric} needs k (set k in the configuration, "
                "on the gate, or --k): check takes it from the fewest trials, and the trials "
                "per stimulus are what the plan decides"
            )
        return 1
    return k


def _truth(metric: CountMetric, rates: np.ndarray, k: int) -> np.ndarray:
    if metric == "pass_hat_k":
        return np.asarray(rates**k)
    if metric == "pass_at_k":
        return np.asarray(1.0 - (1.0 - rates) ** k)
    return rates


def _plan_gate(spec: GateSpec, config: GateConfig, truths: _Truths, power: float) -> GatePlan:
    if spec.kind == "threshold" or spec.metric == "score":
        return GatePlan(spec, "not planned", None, reason="score")
    if spec.kind == "metric":
        return GatePlan(spec, "not planned", None, reason="metric")
    k = _k(spec, config)
    level = spec.confidence if spec.confidence is not None else config.confidence
    degree = 1 if spec.metric == "pass_rate" else k
    if spec.kind in REGRESSION_KINDS:
        return _plan_regression(spec, config, truths, power, k, level)
    metric = cast(CountMetric, spec.metric)
    rates = truths.rates
    # A value exactly on the target is a planning statement only for a stated truth: a
    # pilot's estimate on the target leaves the truth on either side of it.
    stated = truths.pilot is None
    if spec.kind == "max_ci_half_width":
        rule: IntervalRule | PrecisionRule | PointRule = PrecisionRule(
            metric, k, spec.target, level, config.interval, spec.scope
        )
    elif spec.bound != "estimate" and spec.metric in INTERVAL_METRICS:
        rule = IntervalRule(
            metric, k, spec.target, spec.direction, level, config.interval, spec.scope
        )
    else:
        point_metric = "flakiness" if spec.kind == "max_flakiness" else spec.metric
        target = spec.target
        point = PointRule(point_metric, k, target, spec.direction, spec.scope)

        def true_values(p: np.ndarray) -> np.ndarray:
            return np.minimum(p, 1.0 - p) if point_metric == "flakiness" else _truth(metric, p, k)

        def verdicts(p: npt.NDArray[np.float64]) -> npt.NDArray[np.int8]:
            return point.decide_values(true_values(p)).outcome

        truth = true_values(rates)
        if stated and spec.scope == "suite" and abs(float(np.mean(truth)) - target) < 1e-12:
            return GatePlan(spec, "agree", None, reason="on target")
        return _searched(spec, point, truths, power, degree, verdicts)
    suite_value = float(np.mean(_truth(metric, rates, k)))
    on_target = abs(suite_value - spec.target) < 1e-12
    if stated and spec.scope == "suite" and rule_is_interval(rule) and on_target:
        return GatePlan(spec, "decide", None, reason="on target")
    return _searched(spec, rule, truths, power, degree, None)


def _searched(
    spec: GateSpec,
    rule: IntervalRule | PointRule | PrecisionRule,
    truths: _Truths,
    power: float,
    degree: int,
    verdicts: Verdicts | None,
) -> GatePlan:
    """The plan of ``rule``: the trials at which it is decided (``verdicts`` None) or gives
    the verdict the true rates imply (a point-estimate gate) with probability ≥ ``power``.
    The verdict reported as expected is the one the expected (or the pilot's) rates imply."""

    def evaluate(n: np.ndarray, c: np.ndarray) -> np.ndarray:
        return rule.evaluate(n, c).outcome

    numbers = _search(lambda n: _probability(evaluate, truths, n, verdicts), power, degree)
    expected = None if verdicts is None else int(verdicts(truths.rates[None, :])[0])
    return GatePlan(
        spec,
        "decide" if verdicts is None else "agree",
        numbers.trials,
        probability=numbers.probability,
        probability_smaller=numbers.probability_smaller,
        expected_outcome=None if expected is None else "pass" if expected == PASS else "fail",
        reason=None if numbers.trials is not None else "unreachable",
    )


def _covered(
    truths: _Truths, groups: Sequence[StimulusGroup], spec: GateSpec
) -> tuple[_Truths, int]:
    """The planned stimuli ``spec`` is about (its tag, its suite), and how many they are.

    Planned stimulus i repeats pilot stimulus i mod P; those whose source is chosen keep
    their order, so the j-th of them repeats the j-th chosen source (mod their number), as
    :meth:`_Truths.draw` repeats a pilot.
    """
    assert truths.pilot is not None
    sources = [
        i
        for i, (suite, tags) in enumerate(groups)
        if (spec.tag is None or spec.tag in tags) and (spec.suite is None or suite == spec.suite)
    ]
    if not sources:
        which = f"carries the tag {spec.tag!r}" if spec.tag is not None else "is"
        where = f" in suite {spec.suite!r}" if spec.suite is not None else ""
        raise ConfigError(f"plan: gate {spec.kind}: no pilot stimulus {which}{where}")
    chosen = np.isin(np.arange(truths.rates.size) % len(groups), sources)
    trials, passes = truths.pilot
    return _Truths(truths.rates[chosen], (trials[sources], passes[sources])), int(chosen.sum())


def rule_is_interval(rule: object) -> bool:
    return isinstance(rule, IntervalRule)


def _plan_regression(
    spec: GateSpec,
    config: GateConfig,
    truths: _Truths,
    power: float,
    k: int,
    level: float,
) -> GatePlan:
    """An unchanged agent: both runs at the same true rates (with a pilot, each simulated
    run's own draw from what the pilot allows)."""
    assert spec.detectable is not None
    rule = PairedRule(
        cast(Literal["max_regression", "min_improvement"], spec.kind),
        cast(Literal["pass_rate", "pass_hat_k", "score"], spec.metric),
        k,
        spec.target,
        spec.detectable,
        level,
        spec.scope,
    )
    degree = 1 if spec.metric == "pass_rate" else k
    planned = truths.rates.size

    def decided(stimuli: int, n: int) -> float:
        rates = truths.draw(stimuli)
        rng = np.random.default_rng(_SEED)
        cb = rng.binomial(n, rates)
        cc = rng.binomial(n, rates)
        counts = np.full(stimuli, n)
        outcome = rule.evaluate_counts(counts, cb, counts, cc).outcome
        return float(np.mean(outcome != INCONCLUSIVE))

    numbers = _search(lambda n: decided(planned, n), power, degree)
    if numbers.trials is not None:
        return GatePlan(
            spec,
            "decide",
            numbers.trials,
            probability=numbers.probability,
            probability_smaller=numbers.probability_smaller,
        )
    # More trials cannot do it (a few stimuli cannot rule a drop out): count stimuli.
    trials = max(5, degree)
    stimuli = _smallest(lambda m: decided(m, trials), power, MAX_STIMULI, start=planned)
    return GatePlan(
        spec,
        "decide",
        None,
        stimuli=stimuli,
        trials_for_stimuli=trials,
        probability=None if stimuli is None else decided(stimuli, trials),
        reason="unreachable" if stimuli is None else None,
    )


def plan(
    config: GateConfig,
    rates: npt.ArrayLike,
    *,
    power: float = 0.8,
    source: str,
    pilot_usage: UsageSummary | None = None,
    pilot: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    groups: Sequence[StimulusGroup] | None = None,
) -> Plan:
    """Plan every configured gate at the expected per-stimulus pass rates ``rates``
    (``pilot_usage``: the pilot's cost and duration, for :attr:`Plan.spend`).

    ``pilot``: the pilot's trials and passes per stimulus, whose rates ``rates`` repeats
    in order. The plan is then predictive: every simulated run draws the true rates from
    what the pilot allows, not the pilot's c/n (see the module docstring). ``groups``: each
    pilot stimulus's suite and tags; a gate with ``tag:`` or ``suite:`` is then planned on
    the stimuli it is about, as check decides it (a tag no pilot stimulus carries is a
    ConfigError, as in check). Without them every planned stimulus counts for every gate.

    >>> from gate.config import build_config
    >>> config = build_config({"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "lower"}}})
    >>> result = plan(config, [0.96] * 20, source="expect")
    >>> result.trials_per_stimulus  # 20 stimuli at p = 0.96, mid-p intervals
    23
    """
    values = np.asarray(rates, dtype=np.float64).ravel()
    if values.size == 0:
        raise ConfigError("plan: no stimuli to plan for")
    if not np.all((values >= 0.0) & (values <= 1.0)):
        raise ConfigError("plan: expected pass rates must lie in [0, 1]")
    if not 0.0 < power < 1.0:
        raise ConfigError(f"plan: power {power} must lie strictly between 0 and 1")
    truths = _Truths(values)
    if pilot is not None:
        trials = np.asarray(pilot[0], dtype=np.int64).ravel()
        passes = np.asarray(pilot[1], dtype=np.int64).ravel()
        if trials.size == 0 or trials.size != passes.size or np.any(trials <= 0):
            raise ConfigError("plan: the pilot needs trials and passes for every stimulus")
        if not np.allclose(values, (passes / trials)[np.arange(values.size) % trials.size]):
            raise ConfigError("plan: the rates are not the pilot's, repeated in order")
        truths = _Truths(values, (trials, passes))
    if groups is not None and (truths.pilot is None or len(groups) != truths.pilot[0].size):
        raise ConfigError("plan: groups name the suite and tags of every pilot stimulus")
    planned = []
    for spec in config.gates:
        covered, covers = truths, None
        if groups is not None and (spec.tag is not None or spec.suite is not None):
            covered, covers = _covered(truths, groups, spec)
        gate = _plan_gate(spec, config, covered, power)
        k = _k(spec, config) if spec.metric in ("pass_at_k", "pass_hat_k") else None
        planned.append(replace(gate, k=k, covers=covers))
    gates = tuple(planned)
    return Plan(
        stimuli=values.size,
        rates=values,
        source=source,
        power=power,
        confidence=config.confidence,
        interval=config.interval,
        gates=gates,
        pilot_usage=pilot_usage,
        predictive=truths.pilot is not None,
    )
