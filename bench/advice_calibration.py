"""Is the advice for an inconclusive gate calibrated? Take it, and see.

For a scenario (a gate, M stimuli × n trials, and a population the true
per-stimulus pass rates are drawn from, around the target), repeat:

1. draw the true rates pᵢ and the run's passes cᵢ ~ Binomial(n, pᵢ);
2. keep the run only if the gate is inconclusive on it;
3. ask for the advice (m more trials per stimulus; ``None``: "would not decide");
4. draw those m more trials from the TRUE rates, ``futures`` times, and re-check
   with the gate's own rule: the share decided is what the advice delivered.

Averaged over the kept runs, that share should be about the promised 80%. It is
measured for the predictive advice (rates drawn from each stimulus's Jeffreys
posterior in every simulated run, :func:`gate.metrics.decision.posterior_rates`)
and for the plug-in one it replaced (every stimulus simulated at its observed c/n,
``predictive=False``). ``plan --pilot`` is checked the same way: a pilot of n trials
per stimulus, the plan's N, then a fresh run of N trials from the true rates.

The guarantee is an average over truths, not one per truth: at a truth exactly
on the target no m decides, near it the advice falls short, far from it it
overshoots. So the share delivered depends on how the truths are spread: it is
about right when the suite's truth is spread around the target more widely than
one run can resolve (the ``*`` scenarios, μ uniform over a range), and short when
every run's truth sits near the target (the ``fixed-*`` scenarios), where no
advice that knows only the data can be calibrated.

``--posterior jeffreys`` replaces the pooled posterior of the advice (not of ``plan``)
by each stimulus's own Jeffreys posterior Beta(c + ½, n − c + ½), the first
candidate, to show why it was not used.

Run: ``.venv/bin/python bench/advice_calibration.py [--datasets 400] [--scenario NAME]``.
Prints per scenario and advice: the inconclusive runs used, the share of them
with no advice, the share decided after following it (± its standard error over
runs), the median advice, and the seconds taken.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gate.metrics.decision
from gate.config import build_config
from gate.metrics.decision import (
    INCONCLUSIVE,
    IntervalRule,
    PairedRule,
    SequentialRule,
    more_stimuli,
    more_trials,
    more_trials_paired,
    more_trials_sequential,
    stimulus_more_trials,
)
from gate.planning import plan

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Population:
    """Where a run's true per-stimulus pass rates come from.

    Each run draws its suite-level mean μ uniformly from ``mean`` (a range around
    the target: the truths of the gates a team runs are spread, and the
    inconclusive ones are those near the target), then every stimulus's rate from
    Beta(μκ, (1 − μ)κ): stimuli differ around μ, the more so the smaller κ. A
    one-point range is one fixed population (every run's truth near its mean).
    """

    mean: tuple[float, float]
    concentration: float

    def centre(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(*self.mean))

    def rates(self, rng: np.random.Generator, mu: float, size: int | tuple[int, ...]) -> FloatArray:
        k = self.concentration
        return np.asarray(rng.beta(mu * k, (1.0 - mu) * k, size=size), dtype=np.float64)

    def draw(self, rng: np.random.Generator, size: int) -> FloatArray:
        return self.rates(rng, self.centre(rng), size)

    def label(self) -> str:
        low, high = self.mean
        where = f"{low:g}" if low == high else f"U({low:g}, {high:g})"
        return f"rates ~ Beta(μκ, (1 − μ)κ), μ ~ {where}, κ = {self.concentration:g}"


@dataclass(frozen=True)
class Mixture(Population):
    """Most stimuli easy (rates as in :class:`Population`), a share ``hard`` of them with
    rates uniform on ``hard_rates``: a population no beta distribution describes."""

    hard: float = 0.2
    hard_rates: tuple[float, float] = (0.2, 0.9)

    def rates(self, rng: np.random.Generator, mu: float, size: int | tuple[int, ...]) -> FloatArray:
        easy = super().rates(rng, mu, size)
        hard = rng.uniform(*self.hard_rates, size=size)
        return np.where(rng.random(size) < self.hard, hard, easy)

    def label(self) -> str:
        low, high = self.hard_rates
        return f"{super().label()}, of which {self.hard:.0%} hard: rates ~ U({low:g}, {high:g})"


@dataclass(frozen=True)
class Calibration:
    """What one kind of advice delivered over the inconclusive runs of a scenario.

    Attributes:
        runs: Inconclusive runs (for per-stimulus advice: undecided stimuli) kept.
        no_advice: The share of them whose advice was ``None``.
        decided: The share decided after following the advice, averaged over the runs
            that had advice (each run's share over its futures).
        standard_error: Of ``decided``, from the spread over runs.
        median_advice: The median advised m (or M', or N), over runs with advice.
        seconds: Time taken.
    """

    runs: int
    no_advice: float
    decided: float
    standard_error: float
    median_advice: float
    seconds: float

    def line(self) -> str:
        return (
            f"runs {self.runs:4d}  no advice {self.no_advice:5.3f}  decided "
            f"{self.decided:5.3f} ± {self.standard_error:5.3f}  median advice "
            f"{self.median_advice:7.1f}  {self.seconds:6.1f} s"
        )


class _Tally:
    """Shares decided, advice given and advice missing, as runs are checked."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.shares: list[float] = []
        self.advice: list[int] = []
        self.none = 0

    def add(self, share: float, advice: int) -> None:
        self.shares.append(share)
        self.advice.append(advice)

    def result(self) -> Calibration:
        runs = len(self.shares) + self.none
        values = np.array(self.shares, dtype=np.float64)
        spread = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else np.nan
        return Calibration(
            runs=runs,
            no_advice=self.none / runs if runs else np.nan,
            decided=float(values.mean()) if values.size else np.nan,
            standard_error=spread,
            median_advice=float(np.median(self.advice)) if self.advice else np.nan,
            seconds=time.perf_counter() - self.start,
        )


def _streams(seed: int, datasets: int) -> tuple[np.random.Generator, list[np.random.Generator]]:
    """One stream for the runs, one per run for its futures: the plug-in and the predictive
    advice are checked on the same runs, whatever each draws for its futures."""
    runs, *futures = np.random.SeedSequence(seed).spawn(datasets + 1)
    return np.random.default_rng(runs), [np.random.default_rng(f) for f in futures]


# --------------------------------------------------------------------------- suite and per-stimulus


def suite_advice(
    rule: IntervalRule,
    population: Population,
    stimuli: int,
    trials: int,
    *,
    datasets: int,
    futures: int,
    seed: int,
    predictive: bool,
) -> Calibration:
    """``more_trials`` of a suite (or whole per-stimulus) gate: m more on every stimulus."""
    tally = _Tally()
    rng, future_rngs = _streams(seed, datasets)
    n = np.full(stimuli, trials)
    for future in future_rngs:
        truth = population.draw(rng, stimuli)
        c = rng.binomial(trials, truth)
        if rule.evaluate(n, c).outcome[0] != INCONCLUSIVE:
            continue
        m = more_trials(rule, n, c, predictive=predictive)
        if m is None:
            tally.none += 1
            continue
        extra = future.binomial(m, truth, size=(futures, stimuli))
        tally.add(float(np.mean(rule.evaluate(n + m, c + extra).outcome != INCONCLUSIVE)), m)
    return tally.result()


def per_stimulus_advice(
    rule: IntervalRule,
    population: Population,
    stimuli: int,
    trials: int,
    *,
    datasets: int,
    futures: int,
    seed: int,
    predictive: bool,
) -> Calibration:
    """``stimulus_more_trials``: each undecided stimulus re-run its own mᵢ more times (the
    decided ones not at all), then the share of each such stimulus's futures that decide it."""
    tally = _Tally()
    rng, future_rngs = _streams(seed, datasets)
    n = np.full(stimuli, trials)
    for future in future_rngs:
        truth = population.draw(rng, stimuli)
        c = rng.binomial(trials, truth)
        now = rule.evaluate(n, c)
        if now.outcome[0] != INCONCLUSIVE:
            continue
        assert now.stimuli is not None
        undecided = np.flatnonzero(now.stimuli[0] == INCONCLUSIVE)
        each = stimulus_more_trials(rule, n, c, predictive=predictive)
        m = np.zeros(stimuli, dtype=np.int64)
        asked = []
        for i in undecided:
            found = each[i]
            if found is None:
                tally.none += 1
            else:
                m[i] = found
                asked.append(int(i))
        if not asked:
            continue
        extra = future.binomial(m, truth, size=(futures, stimuli))
        codes = rule.evaluate(n + m, c + extra).stimuli
        assert codes is not None
        for i in asked:  # one share per stimulus: the unit the advice is stated for
            tally.add(float(np.mean(codes[:, i] != INCONCLUSIVE)), int(m[i]))
    return tally.result()


# --------------------------------------------------------------------------- paired


def paired_trials_advice(
    rule: PairedRule,
    population: Population,
    drop: tuple[float, float],
    stimuli: int,
    trials: int,
    spread: float = 0.0,
    *,
    datasets: int,
    futures: int,
    seed: int,
    predictive: bool,
) -> Calibration:
    """``more_trials_paired``: m more trials per stimulus on both runs. The candidate's rates
    are the baseline's lowered by a suite-wide drop drawn from U(``drop``), and with
    ``spread`` > 0 each stimulus's change also differs from that drop by N(0, ``spread``²):
    some stimuli regress further, some improve."""
    tally = _Tally()
    rng, future_rngs = _streams(seed, datasets)
    n = np.full(stimuli, trials)
    for future in future_rngs:
        pb = population.draw(rng, stimuli)
        change = -rng.uniform(*drop)
        if spread > 0.0:  # only then: the uniform-drop scenario keeps its runs
            change = change + rng.normal(0.0, spread, size=stimuli)
        pc = np.clip(pb + change, 0.0, 1.0)
        cb, cc = rng.binomial(trials, pb), rng.binomial(trials, pc)
        if rule.evaluate_counts(n, cb, n, cc).outcome[0] != INCONCLUSIVE:
            continue
        m = more_trials_paired(rule, n, cb, n, cc, predictive=predictive)
        if m is None:
            tally.none += 1
            continue
        eb = future.binomial(m, pb, size=(futures, stimuli))
        ec = future.binomial(m, pc, size=(futures, stimuli))
        outcome = rule.evaluate_counts(n + m, cb + eb, n + m, cc + ec).outcome
        tally.add(float(np.mean(outcome != INCONCLUSIVE)), m)
    return tally.result()


def paired_stimuli_advice(
    rule: PairedRule,
    population: Population,
    drop: tuple[float, float],
    stimuli: int,
    trials: int,
    *,
    datasets: int,
    futures: int,
    seed: int,
    predictive: bool = True,
) -> Calibration:
    """``more_stimuli`` (a bootstrap of the observed differences either way: ``predictive``
    is not used): M' − M new stimuli (from the same population, with the same drop),
    ``trials`` trials each on both runs, added to the M observed."""
    tally = _Tally()
    rng, future_rngs = _streams(seed, datasets)
    n = np.full(stimuli, trials)
    for future in future_rngs:
        mu = population.centre(rng)
        shift = rng.uniform(*drop)
        pb = population.rates(rng, mu, stimuli)
        pc = np.clip(pb - shift, 0.0, 1.0)
        d = rule.differences(n, rng.binomial(trials, pb), n, rng.binomial(trials, pc))
        if rule.evaluate_differences(d).outcome[0] != INCONCLUSIVE:
            continue
        total = more_stimuli(rule, d)
        if total is None:
            tally.none += 1
            continue
        new_b = population.rates(future, mu, (futures, total - stimuli))
        new_c = np.clip(new_b - shift, 0.0, 1.0)
        nn = np.full(new_b.shape, trials)
        d_new = rule.differences(
            nn, future.binomial(trials, new_b), nn, future.binomial(trials, new_c)
        )
        whole = np.concatenate([np.broadcast_to(d, (futures, stimuli)), d_new], axis=1)
        tally.add(float(np.mean(rule.evaluate_differences(whole).outcome != INCONCLUSIVE)), total)
    return tally.result()


# --------------------------------------------------------------------------- sequential


def sequential_advice(
    rule: SequentialRule,
    population: Population,
    stimuli: int,
    trials: int,
    *,
    datasets: int,
    futures: int,
    seed: int,
    predictive: bool,
) -> Calibration:
    """``more_trials_sequential`` of a pass-rate suite gate: m more trials in order on every
    stimulus, checked at that look."""
    assert rule.metric == "pass_rate" and rule.scope == "suite"
    tally = _Tally()
    rng, future_rngs = _streams(seed, datasets)
    for future in future_rngs:
        truth = population.draw(rng, stimuli)
        outcomes = rng.random((stimuli, trials)) < truth[:, None]
        if rule.evaluate_outcomes(list(outcomes)).outcome[0] != INCONCLUSIVE:
            continue
        m = more_trials_sequential(rule, list(outcomes), predictive=predictive)
        if m is None:
            tally.none += 1
            continue
        # A pass-rate suite rule decides on the passes per round (one trial of every
        # stimulus), as evaluate_outcomes does: all futures at once.
        past = outcomes.sum(axis=0)
        more = (future.random((futures, stimuli, m)) < truth[None, :, None]).sum(axis=1)
        sums = np.concatenate([np.broadcast_to(past, (futures, trials)), more], axis=1)
        decided = rule.evaluate_sums(sums, stimuli).outcome != INCONCLUSIVE
        tally.add(float(np.mean(decided)), m)
    return tally.result()


# --------------------------------------------------------------------------- plan --pilot


def pilot_plan(
    config_data: dict[str, object],
    rule: IntervalRule,
    population: Population,
    stimuli: int,
    pilot_trials: int,
    *,
    datasets: int,
    futures: int,
    seed: int,
    predictive: bool,
) -> Calibration:
    """``plan --pilot``: a pilot of ``pilot_trials`` per stimulus, the plan's N, then fresh
    runs of N trials at the true rates. Every pilot counts (a plan is made before any run)."""
    tally = _Tally()
    config = build_config(config_data)
    rng, future_rngs = _streams(seed, datasets)
    n = np.full(stimuli, pilot_trials)
    for future in future_rngs:
        truth = population.draw(rng, stimuli)
        c = rng.binomial(pilot_trials, truth)
        counts = (n, c) if predictive else None
        (gate,) = plan(config, c / n, source="pilot", pilot=counts).gates
        if gate.trials is None:
            tally.none += 1
            continue
        fresh = future.binomial(gate.trials, truth, size=(futures, stimuli))
        outcome = rule.evaluate(np.full(stimuli, gate.trials), fresh).outcome
        tally.add(float(np.mean(outcome != INCONCLUSIVE)), gate.trials)
    return tally.result()


# --------------------------------------------------------------------------- scenarios


Measure = Callable[..., Calibration]

#: The suite's mean rate spread around the target (0.8 for the pass rate; 0.8^(1/3) =
#: 0.928 for pass^3 ≥ 0.8) more widely than a run resolves.
AROUND_RATE = Population((0.65, 0.95), 10.0)
AROUND_HAT_K = Population((0.8, 1.0), 15.0)
AROUND_LOW = Population((0.45, 0.9), 4.0)
#: Every run's truth in one population centred on the target: Beta(8, 2) (mean 0.8) and
#: Beta(14, 1) (E[p³] = 14/17 = 0.82).
FIXED_RATE = Population((0.8, 0.8), 10.0)
FIXED_HAT_K = Population((14 / 15, 14 / 15), 15.0)
REGRESSION = PairedRule("max_regression", "pass_rate", 1, 0.05, 0.10)
PASS_HAT_3 = {"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "interval"}}}

SCENARIOS: dict[str, tuple[str, Measure, tuple[object, ...]]] = {
    "pass-rate": (
        "pass rate ≥ 0.8 on the suite's 95% interval, 10 stimuli × 5 trials",
        suite_advice,
        (IntervalRule("pass_rate", 1, 0.8), AROUND_RATE, 10, 5),
    ),
    "pass-hat-k": (
        "pass^3 ≥ 0.8 on the suite's 95% interval, 10 stimuli × 5 trials",
        suite_advice,
        (IntervalRule("pass_hat_k", 3, 0.8), AROUND_HAT_K, 10, 5),
    ),
    "per-stimulus": (
        "pass rate ≥ 0.6 on every stimulus's 95% interval, 5 stimuli × 10 trials; each "
        "undecided stimulus re-run its own advice (stimuli[].more_trials)",
        per_stimulus_advice,
        (IntervalRule("pass_rate", 1, 0.6, scope="stimuli"), AROUND_LOW, 5, 10),
    ),
    "per-stimulus-gate": (
        "the same per-stimulus gate as a whole: the gate's more_trials on every stimulus",
        suite_advice,
        (IntervalRule("pass_rate", 1, 0.6, scope="stimuli"), AROUND_LOW, 5, 10),
    ),
    "paired-trials": (
        "max_regression 0.05 (detectable 0.10), 30 paired stimuli × 5 trials, the candidate "
        "lower by U(0, 0.15): more trials on both runs",
        paired_trials_advice,
        (REGRESSION, AROUND_RATE, (0.0, 0.15), 30, 5),
    ),
    "paired-trials-spread": (
        "the same regression gate, 30 paired stimuli × 5 trials, each stimulus's change its "
        "own: the suite's drop U(0, 0.15) plus N(0, 0.1²) per stimulus (some regress "
        "further, some improve): more trials on both runs",
        paired_trials_advice,
        (REGRESSION, AROUND_RATE, (0.0, 0.15), 30, 5, 0.1),
    ),
    "paired-stimuli": (
        "the same regression gate: more paired stimuli (more_stimuli), 5 trials each",
        paired_stimuli_advice,
        (REGRESSION, AROUND_RATE, (0.0, 0.15), 30, 5),
    ),
    "sequential": (
        "pass rate ≥ 0.8 on the suite's confidence sequence, 10 stimuli × 10 trials",
        sequential_advice,
        (SequentialRule("pass_rate", 1, 0.8), AROUND_RATE, 10, 10),
    ),
    "pilot": (
        "plan --pilot, pass^3 ≥ 0.8 on the suite's 95% interval: 20 stimuli, a 3-trial pilot",
        pilot_plan,
        (PASS_HAT_3, IntervalRule("pass_hat_k", 3, 0.8), AROUND_HAT_K, 20, 3),
    ),
    "mixture": (
        "pass rate ≥ 0.85 on the suite's 95% interval, 20 stimuli × 5 trials",
        suite_advice,
        (IntervalRule("pass_rate", 1, 0.85), Mixture((0.85, 1.0), 30.0), 20, 5),
    ),
    "small": (
        "pass rate ≥ 0.9 on the suite's 95% interval, 4 stimuli × 5 trials (often all passing)",
        suite_advice,
        (IntervalRule("pass_rate", 1, 0.9), Population((0.8, 1.0), 15.0), 4, 5),
    ),
    "all-or-nothing": (
        "pass rate ≥ 0.7 on the suite's 95% interval, 20 stimuli × 5 trials, stimuli that "
        "mostly always pass or always fail",
        suite_advice,
        (IntervalRule("pass_rate", 1, 0.7), Population((0.5, 0.9), 0.5), 20, 5),
    ),
    "fixed-pass-rate": (
        "as pass-rate, every run's rates ~ Beta(8, 2)",
        suite_advice,
        (IntervalRule("pass_rate", 1, 0.8), FIXED_RATE, 10, 5),
    ),
    "fixed-pass-hat-k": (
        "as pass-hat-k, every run's rates ~ Beta(14, 1)",
        suite_advice,
        (IntervalRule("pass_hat_k", 3, 0.8), FIXED_HAT_K, 10, 5),
    ),
}


def jeffreys_rates(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    runs: int,
    seed: int,
    predictive: bool,
    stream: int = 1,
) -> FloatArray:
    """``decision._future_rates`` with every stimulus drawn from its own Jeffreys posterior."""
    n_arr = np.asarray(n, dtype=np.float64).ravel()
    c_arr = np.asarray(c, dtype=np.float64).ravel()
    if not predictive:
        return np.broadcast_to(c_arr / n_arr, (runs, n_arr.size))
    rng = np.random.default_rng([seed, stream])
    return np.asarray(rng.beta(c_arr + 0.5, n_arr - c_arr + 0.5, size=(runs, n_arr.size)))


#: Scenarios of advice that has one method: more_stimuli's bootstrap was kept.
ONE_METHOD = {"paired-stimuli"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=400, help="simulated runs per scenario")
    parser.add_argument("--futures", type=int, default=50, help="futures per inconclusive run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--predictive-only", action="store_true")
    parser.add_argument("--posterior", choices=("pooled", "jeffreys"), default="pooled")
    args = parser.parse_args()
    if args.posterior == "jeffreys":
        # The rejected posterior has no switch in the gate; swapping the one helper every
        # advice function draws its rates from is the smallest way to measure it.
        gate.metrics.decision._future_rates = jeffreys_rates
    for name in args.scenario or SCENARIOS:
        about, measure, given = SCENARIOS[name]
        population = next(x for x in given if isinstance(x, Population))
        print(f"{name}: {about}; {population.label()}")
        both = not args.predictive_only and name not in ONE_METHOD
        for predictive in (False, True) if both else (True,):
            found = measure(
                *given,
                datasets=args.datasets,
                futures=args.futures,
                seed=args.seed,
                predictive=predictive,
            )
            label = (
                "bootstrap " if name in ONE_METHOD else "predictive" if predictive else "plug-in   "
            )
            print(f"  {label}  {found.line()}", flush=True)


if __name__ == "__main__":
    main()
