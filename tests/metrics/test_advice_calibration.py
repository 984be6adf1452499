"""Follow the advice of an inconclusive gate, and about 80% of such gates are decided.

Seeded simulation against known truths: every run draws a suite's true per-stimulus
pass rates (a suite mean μ uniform over a range around the target, then each
stimulus from Beta(μκ, (1 − μ)κ)), then its trials; of the runs the gate leaves
inconclusive, each takes the advice (m more trials per stimulus), draws those m
trials from the TRUE rates ``FUTURES`` times and re-checks with the gate's own rule.
The share decided, averaged over the runs, is what the advice delivered; it should
be the promised 80%, averaged over truths (not at each truth: for a truth exactly
on the target nothing decides).

The old plug-in advice (every stimulus simulated at its observed c/n) is checked on
the same runs, so each test also shows it can fail. The gates use Wilson intervals
here only to keep each test within seconds (the advice machinery is the same); the
longer sweep with the default mid-p intervals, before/after numbers and more
scenarios is ``bench/advice_calibration.py``.

Tolerance: with ~150 runs the share decided has a standard error of about 0.025
(printed), so "about 80%" is asserted as ≥ 0.74 (the simulated probability behind
the advice is a floor of 0.8, and the posterior is a model of the truths, not the
truths' own distribution).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gate.config import build_config
from gate.metrics.decision import (
    INCONCLUSIVE,
    IntervalRule,
    PairedRule,
    more_trials,
    more_trials_paired,
    stimulus_more_trials,
)
from gate.planning import plan

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

POWER, AT_LEAST = 0.8, 0.74
FUTURES = 40


@dataclass(frozen=True)
class Followed:
    """What following one kind of advice delivered over the inconclusive runs."""

    decided: float  # mean share of futures decided, over the runs that had advice
    standard_error: float
    no_advice: float  # share of the runs (or undecided stimuli) without advice
    median: float  # median advice

    def line(self) -> str:
        return (
            f"decided {self.decided:.3f} ± {self.standard_error:.3f}, no advice "
            f"{self.no_advice:.3f}, median advice {self.median:g}"
        )


def followed(shares: list[float], advice: list[int], missing: int) -> Followed:
    values = np.array(shares)
    return Followed(
        decided=float(values.mean()),
        standard_error=float(values.std(ddof=1) / np.sqrt(values.size)),
        no_advice=missing / (missing + values.size),
        median=float(np.median(advice)),
    )


def suite_truths(
    mean: tuple[float, float], concentration: float, stimuli: int, rng: np.random.Generator
) -> FloatArray:
    mu = rng.uniform(*mean)
    return rng.beta(mu * concentration, (1.0 - mu) * concentration, size=stimuli)


def inconclusive_runs(
    is_inconclusive: Callable[[IntArray], bool],
    draw: Callable[[np.random.Generator], tuple[FloatArray, IntArray]],
    runs: int,
    seed: int,
) -> list[tuple[FloatArray, IntArray, list[int]]]:
    """``runs`` inconclusive runs (truth, passes) and the seed of each one's futures, so
    that two kinds of advice are checked on the same runs and the same futures."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < runs:
        truth, passes = draw(rng)
        if is_inconclusive(passes):
            found.append((truth, passes, [seed, len(found)]))
    return found


def follow_more_trials(
    rule: IntervalRule,
    mean: tuple[float, float],
    concentration: float,
    stimuli: int,
    trials: int,
    runs: int,
    seed: int,
) -> dict[bool, Followed]:
    """``more_trials`` of a suite gate, predictive (True) and plug-in (False)."""
    n = np.full(stimuli, trials)

    def draw(rng: np.random.Generator) -> tuple[FloatArray, IntArray]:
        truth = suite_truths(mean, concentration, stimuli, rng)
        return truth, rng.binomial(trials, truth)

    found = inconclusive_runs(
        lambda c: rule.evaluate(n, c).outcome[0] == INCONCLUSIVE, draw, runs, seed
    )
    result = {}
    for predictive in (True, False):
        shares, advice, missing = [], [], 0
        for truth, c, stream in found:
            m = more_trials(rule, n, c, predictive=predictive)
            if m is None:
                missing += 1
                continue
            future = np.random.default_rng(stream)
            extra = future.binomial(m, truth, size=(FUTURES, stimuli))
            shares.append(float(np.mean(rule.evaluate(n + m, c + extra).outcome != INCONCLUSIVE)))
            advice.append(m)
        result[predictive] = followed(shares, advice, missing)
    return result


def test_suite_pass_rate_advice_decides_about_80_percent() -> None:
    """pass rate ≥ 0.8 on the suite's interval, 10 stimuli × 5 trials, μ ~ U(0.65, 0.95),
    κ = 10. Measured (bench, mid-p, 275 runs): plug-in 0.67 decided and 7% with no advice,
    predictive 0.78 and never without."""
    rule = IntervalRule("pass_rate", 1, 0.8, method="wilson")
    result = follow_more_trials(rule, (0.65, 0.95), 10.0, 10, 5, runs=150, seed=11)
    print(f"predictive: {result[True].line()}\nplug-in: {result[False].line()}")
    assert result[True].decided >= AT_LEAST
    assert result[True].no_advice == 0.0
    # The plug-in advice fell short on these very runs, and left some without an answer.
    assert result[False].decided <= result[True].decided - 0.06
    assert result[False].no_advice > 0.0


def test_pass_hat_k_advice_decides_about_80_percent() -> None:
    """pass^3 ≥ 0.8 on the suite's interval, 10 stimuli × 5 trials, μ ~ U(0.8, 1.0), κ = 15
    (so the suite's pass^3 lands around 0.8). Measured (bench, mid-p, 287 runs): plug-in
    0.69 decided and 5% with no advice, predictive 0.80 and never without."""
    rule = IntervalRule("pass_hat_k", 3, 0.8, method="wilson")
    result = follow_more_trials(rule, (0.8, 1.0), 15.0, 10, 5, runs=150, seed=12)
    print(f"predictive: {result[True].line()}\nplug-in: {result[False].line()}")
    assert result[True].decided >= AT_LEAST
    assert result[True].no_advice == 0.0
    assert result[False].decided <= result[True].decided - 0.06


def test_each_undecided_stimulus_decided_by_its_own_advice() -> None:
    """pass rate ≥ 0.6 on every stimulus's interval (Holm), 5 stimuli × 10 trials, μ ~
    U(0.45, 0.9), κ = 4: each undecided stimulus re-run its own advised trials (the JSON's
    stimuli[].more_trials), the decided ones not at all; the unit is the stimulus. Measured
    (bench, mid-p, 1,286 stimuli): plug-in 0.69 decided and 13% with no advice, predictive
    0.80 and never without."""
    stimuli, trials = 5, 10
    rule = IntervalRule("pass_rate", 1, 0.6, method="wilson", scope="stimuli")
    n = np.full(stimuli, trials)

    def draw(rng: np.random.Generator) -> tuple[FloatArray, IntArray]:
        truth = suite_truths((0.45, 0.9), 4.0, stimuli, rng)
        return truth, rng.binomial(trials, truth)

    found = inconclusive_runs(
        lambda c: rule.evaluate(n, c).outcome[0] == INCONCLUSIVE, draw, 70, 13
    )
    result = {}
    for predictive in (True, False):
        shares, advice, missing = [], [], 0
        for truth, c, stream in found:
            now = rule.evaluate(n, c).stimuli
            assert now is not None
            each = stimulus_more_trials(rule, n, c, predictive=predictive)
            m = np.zeros(stimuli, dtype=np.int64)
            asked = []
            for i in np.flatnonzero(now[0] == INCONCLUSIVE):
                if each[i] is None:
                    missing += 1
                else:
                    m[i] = each[i]
                    asked.append(int(i))
            if not asked:
                continue
            future = np.random.default_rng(stream)
            codes = rule.evaluate(n + m, c + future.binomial(m, truth, size=(FUTURES, stimuli)))
            assert codes.stimuli is not None
            shares.extend(np.mean(codes.stimuli[:, asked] != INCONCLUSIVE, axis=0).tolist())
            advice.extend(int(m[i]) for i in asked)
        result[predictive] = followed(shares, advice, missing)
    print(f"predictive: {result[True].line()}\nplug-in: {result[False].line()}")
    assert result[True].decided >= AT_LEAST
    assert result[True].no_advice == 0.0
    assert result[False].decided <= result[True].decided - 0.06


def test_regression_advice_in_trials_now_answers_and_delivers() -> None:
    """max_regression 0.05 (detectable 0.10), 30 paired stimuli × 5 trials, baseline μ ~
    U(0.65, 0.95), κ = 10, the candidate lower by U(0, 0.15) on every stimulus.

    The plug-in advice kept every stimulus's observed difference, trial noise included,
    so more trials never shrank their spread: it never had an answer in trials. The
    predictive one draws each run's rates from its own posterior; it still ignores that
    a paired stimulus is as hard on both runs, so it answers only where the data show
    little spread (bench: 52% of 217 runs) and is then conservative (0.95 decided)."""
    stimuli, trials = 30, 5
    rule = PairedRule("max_regression", "pass_rate", 1, 0.05, 0.10)
    n = np.full(stimuli, trials)

    def draw(rng: np.random.Generator) -> tuple[FloatArray, IntArray]:
        baseline = suite_truths((0.65, 0.95), 10.0, stimuli, rng)
        candidate = np.clip(baseline - rng.uniform(0.0, 0.15), 0.0, 1.0)
        truth = np.stack([baseline, candidate])
        return truth, rng.binomial(trials, truth)

    def undecided(c: IntArray) -> bool:
        return rule.evaluate_counts(n, c[0], n, c[1]).outcome[0] == INCONCLUSIVE

    found = inconclusive_runs(undecided, draw, 40, 14)
    answered = {True: 0, False: 0}
    shares = []
    for truth, c, stream in found:
        for predictive in (True, False):
            m = more_trials_paired(rule, n, c[0], n, c[1], predictive=predictive)
            if m is None:
                continue
            answered[predictive] += 1
            if predictive:
                future = np.random.default_rng(stream)
                extra = future.binomial(m, truth[:, None, :], size=(2, FUTURES, stimuli))
                outcome = rule.evaluate_counts(n + m, c[0] + extra[0], n + m, c[1] + extra[1])
                shares.append(float(np.mean(outcome.outcome != INCONCLUSIVE)))
    print(f"answered of {len(found)}: {answered}; decided {np.mean(shares):.3f}")
    assert answered[False] == 0
    assert answered[True] >= 3
    assert float(np.mean(shares)) >= POWER


def test_a_plan_from_a_3_trial_pilot_decides_about_80_percent() -> None:
    """plan --pilot for pass^3 ≥ 0.8 on the suite's 95% interval, 20 stimuli, a 3-trial
    pilot, μ ~ U(0.8, 1.0), κ = 15: a fresh run of the planned N trials per stimulus at the
    true rates. Every pilot counts (a plan comes before any run). Measured (bench, 400
    pilots): plug-in 0.68 decided (3% with no plan), predictive 0.78 (none); with the
    Wilson intervals used here 0.66 and 0.78."""
    stimuli, pilot_trials = 20, 3
    config = build_config(
        {"interval": "wilson", "k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "interval"}}}
    )
    rule = IntervalRule("pass_hat_k", 3, 0.8, method="wilson")
    n = np.full(stimuli, pilot_trials)
    rng = np.random.default_rng(15)
    pilots = []
    for index in range(160):
        truth = suite_truths((0.8, 1.0), 15.0, stimuli, rng)
        pilots.append((truth, rng.binomial(pilot_trials, truth), [15, index]))
    result = {}
    for predictive in (True, False):
        shares, advice, missing = [], [], 0
        for truth, c, stream in pilots:
            (gate,) = plan(
                config, c / n, source="pilot", pilot=(n, c) if predictive else None
            ).gates
            if gate.trials is None:
                missing += 1
                continue
            fresh = np.random.default_rng(stream).binomial(
                gate.trials, truth, size=(FUTURES, stimuli)
            )
            outcome = rule.evaluate(np.full(stimuli, gate.trials), fresh).outcome
            shares.append(float(np.mean(outcome != INCONCLUSIVE)))
            advice.append(gate.trials)
        result[predictive] = followed(shares, advice, missing)
    print(f"predictive: {result[True].line()}\nplug-in: {result[False].line()}")
    assert result[True].decided >= AT_LEAST
    assert result[False].decided <= result[True].decided - 0.06


def test_large_suites_are_simulated_within_a_budget() -> None:
    """An advice at 100,000 stimuli took 74 s and 1.1 GB (200 runs of every stimulus, and
    the population grid over every distinct count): the runs shrink past 10,000 stimuli,
    and (μ, κ) are learned from a random subset when the counts take too many values."""
    from gate.metrics.decision import _runs
    from gate.metrics.posterior import _MAX_DISTINCT, _population_sample, posterior_rates

    assert [_runs(m) for m in (10, 2_000, 10_000, 20_000, 100_000, 1_000_000)] == [
        1_000, 1_000, 200, 100, 20, 20,
    ]  # fmt: skip
    from gate.planning import _runs as plan_runs  # a 100,000-stimulus pilot: 82 s, 1.07 GB

    assert [plan_runs(m) for m in (10, 2_000, 20_000, 100_000)] == [2_000, 2_000, 200, 40]
    rng = np.random.default_rng(9)
    few_values = (np.full(5_000, 100), rng.binomial(100, 0.8, size=5_000))
    assert _population_sample(*few_values, rng)[0].size == 5_000  # ≤ 101 + 101 + 1 values
    n = rng.integers(1_000, 1_000_000, size=5_000)
    c = rng.binomial(n, rng.uniform(0.5, 0.95, size=5_000))
    fit_n, fit_c = _population_sample(n, c, np.random.default_rng(0))
    assert fit_n.size == _MAX_DISTINCT // 3
    assert set(zip(fit_n, fit_c, strict=True)) <= set(zip(n, c, strict=True))
    # Each stimulus still draws its rate from its own trials: thousands of them pin it.
    draws = posterior_rates(n, c, 50, np.random.default_rng(0))
    assert np.abs(draws.mean(axis=0) - c / n).max() < 0.01
