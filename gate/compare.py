"""Candidate against baseline: pair the stimuli of two runs, test, and name each change.

The question every PR asks is "did this change make the agent worse?". A raw
difference of pass rates over three trials is mostly noise, so the runs are
paired by stimulus id and the per-stimulus differences analysed (Miller 2024,
"Adding Error Bars to Evals", arXiv:2411.00640). This module does the pairing
(added, removed, excluded stimuli), the per-stimulus transitions ("newly
failing", "fixed", …) and assembles the numbers; the statistics themselves are
in :mod:`gate.metrics.paired`, the decisions in :mod:`gate.gates`, the words in
:mod:`gate.report.wording`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from gate.metrics.paired import (
    DEFAULT_POWER,
    PairedTest,
    alpha_of,
    benjamini_hochberg,
    fisher_holm_rejects,
    fisher_min,
    fisher_worse_each,
    holm,
    minimum_detectable_effect,
    paired_test,
    within_variance,
)
from gate.metrics.trial_noise import TrialCounts, floor_k, pass_fail_sums

__all__ = [
    "Comparison",
    "Excluded",
    "Power",
    "RunCounts",
    "StimulusRow",
    "compare",
]

Metric = Literal["pass_rate", "pass_hat_k", "score"]
State = Literal["pass", "flaky", "fail"]
Status = Literal[
    "newly failing",
    "fixed",
    "newly flaky",
    "no longer flaky",
    "partly fixed",
    "still flaky",
    "unchanged",
]


class RunCounts(NamedTuple):
    """One stimulus in one run: ``c`` passes out of ``n`` counted trials.

    ``score_mean`` is the mean trial score, needed for ``metric="score"``. (Not
    :class:`gate.trials.StimulusCounts`, a counts file's record, which this was named too.)
    """

    n: int
    c: int
    score_mean: float | None = None


@dataclass(frozen=True)
class Excluded:
    """A stimulus present in both runs but left out of the paired test, and why.

    ``reason`` is one of ``"no trials"``, ``"fewer than k"`` or ``"no score"``;
    ``run`` names the run that lacks it (``"baseline"`` or ``"candidate"``) and
    ``trials`` its counted trials.
    """

    id: str
    reason: Literal["no trials", "fewer than k", "no score"]
    run: Literal["baseline", "candidate"]
    trials: int

    def describe(self, k: int | None) -> str:
        """The reason in words: '2 trials in the baseline, fewer than k = 3'."""
        if self.reason == "no trials":
            return f"no counted trials in the {self.run}"
        if self.reason == "fewer than k":
            trials = "1 trial" if self.trials == 1 else f"{self.trials} trials"
            return f"{trials} in the {self.run}, fewer than k = {k}"
        return f"no score in the {self.run}"


@dataclass(frozen=True)
class StimulusRow:
    """One paired stimulus.

    Attributes:
        id: The stimulus id (the pairing key).
        baseline, candidate: The metric's per-stimulus value in each run.
        delta: ``candidate - baseline``; negative means worse.
        baseline_counts, candidate_counts: The inputs.
        baseline_state, candidate_state: ``"pass"`` (every trial passed), ``"fail"``
            (none did) or ``"flaky"`` (some did).
        status: The transition: ``"newly failing"`` (pass or flaky → fail),
            ``"fixed"`` (fail → pass), ``"newly flaky"`` (pass → flaky),
            ``"no longer flaky"`` (flaky → pass), ``"partly fixed"`` (fail → flaky),
            ``"still flaky"`` (flaky in both, at a different pass rate),
            ``"unchanged"`` (same state; for flaky, the same pass rate).
        p_worse: One-sided Fisher exact p-value that the candidate's pass
            probability on this stimulus is lower than the baseline's.
        p_holm: Holm-adjusted ``p_worse`` across the paired stimuli.
        q_bh: Benjamini-Hochberg adjusted ``p_worse`` (for triage lists only).
        regressed: ``p_holm ≤ α``: worse at family-wise confidence ``1 - α``.
    """

    id: str
    baseline: float
    candidate: float
    delta: float
    baseline_counts: RunCounts
    candidate_counts: RunCounts
    baseline_state: State
    candidate_state: State
    status: Status
    p_worse: float
    p_holm: float
    q_bh: float
    regressed: bool


@dataclass(frozen=True)
class Power:
    """What this comparison could detect (statistics.md §4, normal approximation).

    ``M = (z_{1-α} + z_{power})² · (ω² + σ_A²/K_A + σ_B²/K_B) / δ²`` solved for δ.

    Attributes:
        power: The power the figures are stated at.
        stimuli: M.
        trials_baseline, trials_candidate: Mean counted trials per stimulus.
        variance: Var(d_i) used: the larger of sd(d)² and the within-stimulus term
            alone; ``None`` when it cannot be estimated.
        between: ω² = max(0, sd(d)² - within); ``None`` when unknown.
        mde: The minimum detectable effect: a one-sided level-α test catches a
            true drop (beyond the margin) of this size with probability ``power``;
            ``None`` when the test cannot reject at all (``blind``) or no variance
            is known.
        blind: The sign-flip test has fewer than 1/α patterns: no drop is detectable.
        approximate: The test used is the sign-flip test below 30 stimuli, for which
            the normal-approximation MDE is optimistic.
    """

    power: float
    stimuli: int
    trials_baseline: float
    trials_candidate: float
    variance: float | None
    between: float | None
    mde: float | None
    blind: bool
    approximate: bool


@dataclass(frozen=True)
class Comparison:
    """Everything :func:`compare` found, in the style of a ``scipy.stats`` result.

    Attributes:
        metric, k: The per-stimulus metric compared (``k`` for pass^k).
        confidence: Confidence level; ``alpha = 1 - confidence`` is the one-sided
            level of the suite bounds and the family-wise level per stimulus.
        shared: Ids in both runs, sorted (including any ``excluded``).
        added: Ids only in the candidate (not tested).
        removed: Ids only in the baseline (not tested).
        excluded: Shared ids left out of the paired test, with the reason.
        rows: One :class:`StimulusRow` per paired stimulus, in id order.
        test: The suite-level :class:`~gate.metrics.paired.PairedTest` of Δ against 0
            in both directions: Δ, its interval and one-sided bounds.
        power: The :class:`Power` figures.
        ragged: Some paired stimulus has different trial counts in the two runs (the
            sign-flip test is then approximate).
        fisher_floor: The smallest Fisher p-value any paired stimulus could reach:
            when above α/M no single stimulus can be shown worse.
        tag: The tag the stimuli were filtered on (``None``: every stimulus).
        suite: The suite the stimuli were filtered on (``None``: every suite).
        trial_counts: The paired stimuli's pass counts, for pass rates and pass^k: the
            test's bounds also cover their binomial noise (:mod:`gate.metrics.trial_noise`).
    """

    metric: Metric
    k: int | None
    confidence: float
    alpha: float
    shared: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    excluded: tuple[Excluded, ...]
    rows: tuple[StimulusRow, ...]
    test: PairedTest
    power: Power
    ragged: bool
    fisher_floor: float | None
    limits: tuple[float, float] = (-1.0, 1.0)
    seed: int = 0
    tag: str | None = None
    suite: str | None = None
    trial_counts: TrialCounts | None = None

    def test_at(self, margin: float = 0.0, gain: float = 0.0) -> PairedTest:
        """The same paired test with H0: Δ ≥ -margin (``p_worse``) and Δ ≤ gain (``p_better``).

        The bounds do not depend on the margins; the p-values do.
        """
        if margin == self.test.margin and gain == self.test.gain:
            return self.test
        return paired_test(
            self.differences,
            confidence=self.confidence,
            margin=margin,
            gain=gain,
            seed=self.seed,
            limits=self.limits,
            counts=self.trial_counts,
        )

    @property
    def delta(self) -> float | None:
        """Δ = mean over paired stimuli of candidate - baseline."""
        return self.test.delta

    @property
    def differences(self) -> np.ndarray:
        return np.array([row.delta for row in self.rows], dtype=np.float64)

    def with_status(self, status: Status) -> tuple[str, ...]:
        """Ids of the paired stimuli with this status."""
        return tuple(row.id for row in self.rows if row.status == status)

    @property
    def newly_failing(self) -> tuple[str, ...]:
        return self.with_status("newly failing")

    @property
    def fixed(self) -> tuple[str, ...]:
        return self.with_status("fixed")

    @property
    def newly_flaky(self) -> tuple[str, ...]:
        return self.with_status("newly flaky")

    @property
    def regressed(self) -> tuple[str, ...]:
        """Ids shown worse per stimulus at family-wise confidence (Holm)."""
        return tuple(row.id for row in self.rows if row.regressed)


def _validate(name: str, run: str, counts: RunCounts) -> RunCounts:
    n, c = counts.n, counts.c
    if isinstance(n, bool) or isinstance(c, bool) or int(n) != n or int(c) != c:
        raise ValueError(f"stimulus {name!r} in the {run}: n and c must be integers")
    if not 0 <= c <= n:
        raise ValueError(f"stimulus {name!r} in the {run}: need 0 ≤ c ≤ n, got n={n}, c={c}")
    if counts.score_mean is not None and not math.isfinite(counts.score_mean):
        raise ValueError(f"stimulus {name!r} in the {run}: score_mean must be finite")
    return RunCounts(int(n), int(c), counts.score_mean)


def state(x: RunCounts) -> State:
    """``"pass"`` when every trial passed, ``"fail"`` when none did, else ``"flaky"``."""
    if x.c == x.n:
        return "pass"
    return "fail" if x.c == 0 else "flaky"


_TRANSITIONS: dict[tuple[State, State], Status] = {
    ("pass", "fail"): "newly failing",
    ("flaky", "fail"): "newly failing",
    ("fail", "pass"): "fixed",
    ("pass", "flaky"): "newly flaky",
    ("flaky", "pass"): "no longer flaky",
    ("fail", "flaky"): "partly fixed",
}


def transition(base: RunCounts, cand: RunCounts) -> Status:
    """The change of state; flaky in both at a different pass rate is "still flaky".

    >>> transition(RunCounts(3, 3), RunCounts(3, 1))
    'newly flaky'
    """
    before, after = state(base), state(cand)
    if before == after == "flaky" and base.c * cand.n != cand.c * base.n:
        return "still flaky"
    return _TRANSITIONS.get((before, after), "unchanged")


def _value(x: RunCounts, metric: Metric, k: int | None) -> float:
    if metric == "pass_rate":
        return x.c / x.n
    if metric == "pass_hat_k":
        assert k is not None
        return math.comb(x.c, k) / math.comb(x.n, k)  # unbiased pass^k (Yao et al. 2024)
    assert x.score_mean is not None
    return float(x.score_mean)


def _exclusion(
    base: RunCounts, cand: RunCounts, metric: Metric, k: int | None
) -> (
    tuple[Literal["no trials", "fewer than k", "no score"], Literal["baseline", "candidate"], int]
    | None
):
    runs: tuple[tuple[Literal["baseline", "candidate"], RunCounts], ...] = (
        ("baseline", base),
        ("candidate", cand),
    )
    for run, x in runs:
        if x.n == 0:
            return "no trials", run, 0
        if metric == "pass_hat_k" and k is not None and x.n < k:
            return "fewer than k", run, x.n
        if metric == "score" and x.score_mean is None:
            return "no score", run, x.n
    return None


def _power(
    d: np.ndarray,
    base: list[RunCounts],
    cand: list[RunCounts],
    metric: Metric,
    confidence: float,
    power: float,
    test: PairedTest,
) -> Power:
    m = int(d.size)
    k_a = float(np.mean([x.n for x in base])) if base else 0.0
    k_b = float(np.mean([x.n for x in cand])) if cand else 0.0
    within_now = None
    if metric == "pass_rate" and base:
        _, now_a = within_variance([x.n for x in base], [x.c for x in base])
        _, now_b = within_variance([x.n for x in cand], [x.c for x in cand])
        if now_a is not None and now_b is not None:
            within_now = now_a + now_b
    sample = float(np.var(d, ddof=1)) if m >= 2 else None
    known = [x for x in (sample, within_now) if x is not None]
    variance = max(known) if known else None
    between = None
    if sample is not None and within_now is not None:
        between = max(0.0, sample - within_now)
    sign_flip = test.patterns is not None
    blind = m > 0 and not test.can_reject
    mde = None
    if variance is not None and not blind and m > 0:
        mde = minimum_detectable_effect(variance, m, confidence=confidence, power=power)
    return Power(
        power=power,
        stimuli=m,
        trials_baseline=k_a,
        trials_candidate=k_b,
        variance=variance,
        between=between,
        mde=mde,
        blind=blind,
        approximate=sign_flip and m < 30,
    )


def compare(
    baseline: Mapping[str, RunCounts],
    candidate: Mapping[str, RunCounts],
    *,
    metric: Metric = "pass_rate",
    k: int | None = None,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
    seed: int = 0,
    tag: str | None = None,
) -> Comparison:
    """Pair a candidate run with a baseline run by stimulus id and test the differences.

    Args:
        baseline, candidate: Per-stimulus counts by stimulus id. Ids in only one run
            are listed (``added``/``removed``) and left out.
        metric: Per-stimulus value compared: ``"pass_rate"`` (c/n), ``"pass_hat_k"``
            (unbiased C(c,k)/C(n,k)) or ``"score"`` (``score_mean``).
        k: For pass^k; default the smallest trial count among the paired stimuli.
        confidence: 1 - α: the level of the one-sided bounds of Δ and the
            family-wise level of the per-stimulus tests.
        power: Power of the minimum-detectable-effect figure.
        seed: Seed of the Monte-Carlo sign-flip test (21-29 paired stimuli).
        tag: Recorded on the result (the caller filtered the stimuli).

    Per-stimulus p-values always use the pass/fail counts, whatever the metric.

    >>> base = {s: RunCounts(5, c) for s, c in zip("abcde", (5, 4, 5, 2, 3))}
    >>> cand = {s: RunCounts(5, c) for s, c in zip("abcde", (3, 3, 2, 3, 1))}
    >>> result = compare(base, cand)
    >>> round(result.delta, 2), result.test.p_worse, round(result.test.upper, 2)
    (-0.28, 0.09375, 0.2)
    """
    alpha = alpha_of(confidence)
    if metric not in ("pass_rate", "pass_hat_k", "score"):
        raise ValueError(f"unknown metric {metric!r}")
    base = {str(s): _validate(str(s), "baseline", x) for s, x in baseline.items()}
    cand = {str(s): _validate(str(s), "candidate", x) for s, x in candidate.items()}
    shared = tuple(sorted(base.keys() & cand.keys()))
    added = tuple(sorted(cand.keys() - base.keys()))
    removed = tuple(sorted(base.keys() - cand.keys()))
    if metric == "pass_hat_k":
        if k is None:
            counted = [x.n for s in shared for x in (base[s], cand[s]) if x.n > 0]
            k = min(counted) if counted else 1
        if isinstance(k, bool) or int(k) != k or k < 1:
            raise ValueError(f"k must be an integer ≥ 1, got {k!r}")
        k = int(k)
    else:
        k = None

    excluded: list[Excluded] = []
    paired: list[str] = []
    for s in shared:
        why = _exclusion(base[s], cand[s], metric, k)
        if why is None:
            paired.append(s)
        else:
            excluded.append(Excluded(s, *why))

    b_values = np.array([_value(base[s], metric, k) for s in paired], dtype=np.float64)
    c_values = np.array([_value(cand[s], metric, k) for s in paired], dtype=np.float64)
    d = c_values - b_values
    in_unit = bool(np.all((b_values >= 0) & (b_values <= 1) & (c_values >= 0) & (c_values <= 1)))
    limits = (-1.0, 1.0) if in_unit else (-math.inf, math.inf)
    base_n, base_c, cand_n, cand_c = (
        np.array([getattr(run[s], field) for s in paired], dtype=np.int64)
        for run, field in ((base, "n"), (base, "c"), (cand, "n"), (cand, "c"))
    )
    # A pass rate's or pass^k's difference carries its trials' binomial noise, which the
    # bounds cover; so does a score's when the scores are pass/fail (0 or 1 each).
    noise_k = floor_k(metric, k)
    floor_b, floor_c = base_c, cand_c
    if metric == "score":
        sums = pass_fail_sums(base_n, b_values, cand_n, c_values)
        noise_k = None if sums is None else noise_k
        floor_b, floor_c = sums if sums is not None else (base_c, cand_c)
    trial_counts = (
        TrialCounts.of_runs(base_n, floor_b, cand_n, floor_c, noise_k)
        if noise_k is not None and paired
        else None
    )
    test = paired_test(d, confidence=confidence, seed=seed, limits=limits, counts=trial_counts)

    # Fisher's one-sided test per stimulus: "worse" decided exactly (Holm on the exact
    # p-values), the p-values shown exact, or within 1e-10 of it for large tables.
    p_worse = fisher_worse_each(base_n, base_c, cand_n, cand_c)
    regressed = fisher_holm_rejects(base_n, base_c, cand_n, cand_c, alpha)
    p_holm = holm(p_worse)
    q_bh = benjamini_hochberg(p_worse)
    rows = tuple(
        StimulusRow(
            id=s,
            baseline=float(b_values[i]),
            candidate=float(c_values[i]),
            delta=float(d[i]),
            baseline_counts=base[s],
            candidate_counts=cand[s],
            baseline_state=state(base[s]),
            candidate_state=state(cand[s]),
            status=transition(base[s], cand[s]),
            p_worse=float(p_worse[i]),
            p_holm=float(p_holm[i]),
            q_bh=float(q_bh[i]),
            regressed=bool(regressed[i]),
        )
        for i, s in enumerate(paired)
    )
    base_rows = [base[s] for s in paired]
    cand_rows = [cand[s] for s in paired]
    return Comparison(
        metric=metric,
        k=k,
        confidence=1.0 - alpha,
        alpha=alpha,
        shared=shared,
        added=added,
        removed=removed,
        excluded=tuple(excluded),
        rows=rows,
        test=test,
        power=_power(d, base_rows, cand_rows, metric, confidence, power, test),
        ragged=any(base[s].n != cand[s].n for s in paired),
        fisher_floor=min((fisher_min(base[s].n, cand[s].n) for s in paired), default=None),
        limits=limits,
        seed=seed,
        tag=tag,
        trial_counts=trial_counts,
    )
