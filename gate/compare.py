"""Candidate against baseline: the statistics of the regression gate (issue 5).

The question every PR asks is "did this change make the agent worse?". A raw
difference of pass rates over three trials is mostly noise, so this module
answers it the way Miller (2024, "Adding Error Bars to Evals",
arXiv:2411.00640) recommends: pair the two runs by stimulus id and analyse the
per-stimulus differences.

Notation (``s`` is the per-stimulus value of the chosen metric)::

    d_i = s_candidate,i - s_baseline,i          (i over the M shared stimuli)
    Δ   = mean(d)                               (negative: the candidate is worse)
    SE  = sd(d) / sqrt(M)                       (sd with M - 1 in the denominator)

Analysing per-stimulus means already clusters the K trials of a stimulus, so
no trial-level independence across stimuli is assumed.

Suite-level test (:func:`paired_test`), chosen by :data:`T_MIN_STIMULI`:

- ``M ≥ 30``: paired t, ``t = (Δ + δ)/SE`` with ``M - 1`` degrees of freedom.
- ``M < 30``: sign-flip permutation test. Under the null hypothesis the
  baseline and candidate labels of a stimulus are exchangeable, so each d_i is
  symmetric around zero and every one of the ``2^M`` sign patterns is equally
  likely. All patterns are enumerated when ``M ≤ 20`` (exact p-value, a
  fraction with denominator 2^M); otherwise 65,536 random patterns with a
  fixed seed are used (Monte-Carlo, ``p = (1 + count) / (B + 1)``, valid by
  Phipson & Smyth 2010).
- Zero spread (every d_i equal, so SE = 0 and t is undefined), at any M: the
  exact sign-flip test in closed form (p = 1 or 2^-M), which is well defined.
  A zero-width t interval never decides a gate.

Gates (non-inferiority with margin δ = ``max_regression``)::

    fail  ⇔  U < -δ    where U is the one-sided upper (1-α) confidence bound of Δ
          ⇔  p-value of H0: Δ ≥ -δ against H1: Δ < -δ is ≤ α

and ``min_improvement`` ε asks the opposite question: pass only when the lower
one-sided bound L > ε. With δ = 0 the first gate is a plain one-sided
regression test. α = 1 - ``confidence`` throughout.

Per stimulus: a one-sided Fisher exact test on the 2×2 pass/fail counts, with
Holm's step-down adjustment across stimuli (Holm 1979, "A simple sequentially
rejective multiple test procedure", Scand. J. Statist. 6:65-70) for a gate
that controls the family-wise error, and Benjamini-Hochberg (1995) q-values
for triage lists.

Power (statistics.md §4, after Miller 2024)::

    M = (z_{1-α} + z_{power})² · (ω² + σ_A²/K_A + σ_B²/K_B) / δ²

solved for δ gives the minimum detectable effect of this comparison, and for
K the trials per stimulus that would detect a target drop.

Only numpy and ``scipy.special`` are imported; there is no I/O. See
``docs/regression.md`` for the same in words.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._special import gammaln, normal_quantile, stdtr, stdtrit

__all__ = [
    "DEFAULT_POWER",
    "ENUMERATE_MAX_STIMULI",
    "MONTE_CARLO_PATTERNS",
    "T_MIN_STIMULI",
    "Comparison",
    "Excluded",
    "GateDecision",
    "PairedTest",
    "Power",
    "StimulusCounts",
    "StimulusRow",
    "benjamini_hochberg",
    "compare",
    "fisher_worse",
    "format_p",
    "holm",
    "minimum_detectable_effect",
    "paired_test",
    "trials_needed",
]

FloatArray = npt.NDArray[np.float64]
Metric = Literal["pass_rate", "pass_hat_k", "score"]
Method = Literal["auto", "t", "permutation"]
TestName = Literal[
    "paired t", "exact sign-flip permutation", "Monte-Carlo sign-flip permutation", "none"
]
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

#: From this many shared stimuli on, ``method="auto"`` uses the paired t test.
T_MIN_STIMULI = 30
#: Up to this many shared stimuli the 2^M sign patterns are all enumerated (2^20 ≈ 10^6).
ENUMERATE_MAX_STIMULI = 20
#: Random sign patterns drawn when there are too many to enumerate.
MONTE_CARLO_PATTERNS = 65_536
#: Power at which the minimum detectable effect is stated.
DEFAULT_POWER = 0.8

# Subset sums of rational differences (c/n - c'/n') that are 0 in exact arithmetic come out
# as ±1e-16 in floating point. A tie counts as "at least as extreme" (the conservative
# convention), so comparisons allow this much slack.
_TIE = 1e-9
# Fisher's exact test is summed in exact integers below this many trials, in logs above.
_EXACT_FISHER_MAX = 2_000


class StimulusCounts(NamedTuple):
    """One stimulus in one run: ``c`` passes out of ``n`` counted trials.

    ``outcomes`` (trial order, optional) must agree with ``n`` and ``c`` when
    given; ``score_mean`` is the mean trial score, needed for ``metric="score"``.
    """

    n: int
    c: int
    outcomes: tuple[bool, ...] | None = None
    score_mean: float | None = None

    @classmethod
    def from_outcomes(
        cls, outcomes: Iterable[bool], score_mean: float | None = None
    ) -> StimulusCounts:
        """Counts from pass/fail outcomes in trial order.

        >>> StimulusCounts.from_outcomes([True, False, True])
        StimulusCounts(n=3, c=2, outcomes=(True, False, True), score_mean=None)
        """
        kept = tuple(bool(o) for o in outcomes)
        return cls(len(kept), sum(kept), kept, score_mean)


@dataclass(frozen=True)
class Excluded:
    """A stimulus present in both runs but left out of the paired test, and why."""

    id: str
    reason: str


@dataclass(frozen=True)
class StimulusRow:
    """One shared stimulus of the paired comparison.

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
        p_holm: Holm-adjusted ``p_worse`` across the shared stimuli.
        q_bh: Benjamini-Hochberg adjusted ``p_worse`` (for triage lists only).
        regressed: ``p_holm ≤ α``: worse at family-wise confidence ``1 - α``.
    """

    id: str
    baseline: float
    candidate: float
    delta: float
    baseline_counts: StimulusCounts
    candidate_counts: StimulusCounts
    baseline_state: State
    candidate_state: State
    status: Status
    p_worse: float
    p_holm: float
    q_bh: float
    regressed: bool


@dataclass(frozen=True)
class PairedTest:
    """The suite-level paired test of ``d_i = candidate_i - baseline_i``.

    Attributes:
        method: ``"paired t"``, ``"exact sign-flip permutation"``,
            ``"Monte-Carlo sign-flip permutation"``, or ``"none"`` (no shared stimuli).
        reason: Why this method was used, in words.
        stimuli: M, the number of paired differences.
        delta: Δ = mean(d); ``None`` when M = 0.
        se: sd(d)/sqrt(M); ``None`` when M < 2.
        statistic: For the t test, ``t = Δ / SE``; ``None`` otherwise.
        df: Degrees of freedom of the t test (M - 1), else ``None``.
        patterns: Sign patterns used by the permutation test (2^M, or the Monte-Carlo
            count plus the observed one), else ``None``.
        margin: δ of H0: Δ ≥ -δ (``p_worse``, ``upper``).
        gain: ε of H0: Δ ≤ ε (``p_better``, ``lower``).
        p_worse: One-sided p-value of H0: Δ ≥ -margin against Δ < -margin.
        p_better: One-sided p-value of H0: Δ ≤ gain against Δ > gain.
        rejects_worse: ``p_worse ≤ α``, equivalently ``upper < -margin``.
        rejects_better: ``p_better ≤ α``, equivalently ``lower > gain``.
        interval: Two-sided ``confidence`` interval of Δ.
        upper: One-sided upper ``confidence`` bound of Δ (the max_regression gate's bound).
        lower: One-sided lower ``confidence`` bound of Δ (the min_improvement gate's bound).
        confidence: The confidence level; α = 1 - confidence.

    Bounds are clipped to the range Δ can take (``[-1, 1]`` for values in
    [0, 1]); a bound equal to that limit means the data cannot bound Δ on that
    side (e.g. the permutation test with M ≤ 4 at 95%).
    """

    method: TestName
    reason: str
    stimuli: int
    delta: float | None
    se: float | None
    statistic: float | None
    df: int | None
    patterns: int | None
    margin: float
    gain: float
    p_worse: float
    p_better: float
    rejects_worse: bool
    rejects_better: bool
    interval: tuple[float, float]
    upper: float
    lower: float
    confidence: float


@dataclass(frozen=True)
class Power:
    """What this comparison could detect, by the formula of statistics.md §4.

    ``M = (z_{1-α} + z_{power})² · (ω² + σ_A²/K_A + σ_B²/K_B) / δ²`` (normal
    approximation, Miller 2024). ``variance`` is Var(d_i) at the current trial
    counts: the larger of sd(d)² and the within-stimulus term alone.

    Attributes:
        power: The power the figures are stated at (0.8 unless asked otherwise).
        alpha: One-sided α = 1 - confidence.
        stimuli: M.
        trials_baseline, trials_candidate: Mean counted trials per stimulus.
        variance: Var(d_i) used; ``None`` when it cannot be estimated.
        between: ω², the between-stimulus variance of the true differences
            (estimated as max(0, sd(d)² - within)); ``None`` when unknown.
        within_baseline, within_candidate: σ², the mean per-trial pass/fail
            variance ``c(n-c)/(n(n-1))`` over stimuli with n ≥ 2 (pass_rate only).
        mde: The minimum detectable effect: a one-sided level-α test catches a
            true drop (beyond the margin) of this size with probability ``power``.
        gate_trigger: ``margin + mde``: the true drop at which the max_regression
            gate fails with probability ``power``.
        target: The drop the trial count is planned for (``target_effect``, or
            ``max_regression`` when > 0).
        trials_needed: Trials per stimulus on each side so that ``mde ≤ target``
            at this M; ``None`` when not reachable or not computable.
        stimuli_needed: Shared stimuli so that ``mde ≤ target`` at the current trials.
        sentence: The figures in words.
    """

    power: float
    alpha: float
    stimuli: int
    trials_baseline: float
    trials_candidate: float
    variance: float | None
    between: float | None
    within_baseline: float | None
    within_candidate: float | None
    mde: float | None
    gate_trigger: float | None
    target: float | None
    trials_needed: int | None
    stimuli_needed: int | None
    sentence: str


@dataclass(frozen=True)
class GateDecision:
    """One gate's verdict.

    Attributes:
        name: ``"max_regression"``, ``"min_improvement"`` or ``"stimulus_regression"``.
        threshold: δ, ε, or the family-wise α.
        passed: The verdict.
        decided: False when there was nothing to decide on (no shared stimuli). A
            max_regression gate then passes (the data do not show a regression) and a
            min_improvement gate fails (nor an improvement); callers may warn.
        bound: The one-sided bound compared with the threshold (suite gates).
        p_value: The p-value behind the verdict: of H0: Δ ≥ -δ (max_regression) or
            H0: Δ ≤ ε (min_improvement) at this gate's threshold; the smallest
            Holm-adjusted p for the stimulus gate.
        sentence: The verdict in plain words.
    """

    name: Literal["max_regression", "min_improvement", "stimulus_regression"]
    threshold: float
    passed: bool
    decided: bool
    bound: float | None
    p_value: float | None
    sentence: str


@dataclass(frozen=True)
class Comparison:
    """Everything :func:`compare` found, in the style of a ``scipy.stats`` result.

    Attributes:
        metric, k: The per-stimulus metric compared (``k`` for pass^k).
        confidence: Confidence level; ``alpha = 1 - confidence`` is the one-sided
            level of the suite gates and the family-wise level of the stimulus gate.
        shared: Ids in both runs, sorted (including any ``excluded``).
        added: Ids only in the candidate (not tested).
        removed: Ids only in the baseline (not tested).
        excluded: Shared ids left out of the paired test, with the reason.
        rows: One :class:`StimulusRow` per paired stimulus, in id order.
        test: The suite-level :class:`PairedTest` of Δ against 0 in both directions
            (margin and gain 0): Δ, its interval and bounds, and the one-sided
            p-values of "worse" and "better" whatever gates are configured. Each gate
            decision carries the p-value at its own threshold.
        power: The :class:`Power` statement.
        decisions: One :class:`GateDecision` per requested threshold, in the order
            given (every max_regression δ, then every min_improvement ε, then the
            stimulus gate).
        notes: Caveats in words (gates that cannot fail, approximations used).
        tag: Set by callers that compared only the stimuli carrying a tag (``None``:
            every stimulus given); :func:`compare` itself never filters.
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
    decisions: tuple[GateDecision, ...]
    notes: tuple[str, ...]
    tag: str | None = None

    def _first(self, name: str) -> GateDecision | None:
        return next((g for g in self.decisions if g.name == name), None)

    @property
    def max_regression(self) -> GateDecision | None:
        """The (first) max_regression decision; every one is in :attr:`gates`."""
        return self._first("max_regression")

    @property
    def min_improvement(self) -> GateDecision | None:
        """The (first) min_improvement decision; every one is in :attr:`gates`."""
        return self._first("min_improvement")

    @property
    def stimulus_regression(self) -> GateDecision | None:
        return self._first("stimulus_regression")

    @property
    def delta(self) -> float | None:
        """Δ = mean over paired stimuli of candidate - baseline."""
        return self.test.delta

    @property
    def interval(self) -> tuple[float, float]:
        """Two-sided confidence interval of Δ."""
        return self.test.interval

    @property
    def method(self) -> TestName:
        return self.test.method

    @property
    def reason(self) -> str:
        return self.test.reason

    @property
    def gates(self) -> tuple[GateDecision, ...]:
        """The configured gates' decisions, one per requested threshold."""
        return self.decisions

    @property
    def passed(self) -> bool:
        """True when every configured gate passed (and when none is configured)."""
        return all(g.passed for g in self.gates)

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
    def no_longer_flaky(self) -> tuple[str, ...]:
        return self.with_status("no longer flaky")

    @property
    def regressed(self) -> tuple[str, ...]:
        """Ids shown worse per stimulus at family-wise confidence (Holm)."""
        return tuple(row.id for row in self.rows if row.regressed)


# --------------------------------------------------------------------------- helpers


def _check_confidence(confidence: float) -> float:
    value = float(confidence)
    if not (math.isfinite(value) and 0.0 < value < 1.0):
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return value


def _alpha(confidence: float) -> float:
    """α = 1 - confidence, rounded so that 1 - 0.95 is 0.05 and not 0.050000000000000044."""
    return round(1.0 - _check_confidence(confidence), 12)


def _thresholds(name: str, value: float | Sequence[float] | None) -> tuple[float, ...]:
    """δ or ε as given: none, one, or several (one gate decision each)."""
    if value is None:
        return ()
    if isinstance(value, Sequence | np.ndarray):
        values = [float(v) for v in value]
    else:
        values = [float(value)]
    checked = (_check_nonnegative(name, v) for v in values)
    return tuple(v for v in checked if v is not None)


def _check_nonnegative(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    number = float(value)
    if not (math.isfinite(number) and number >= 0.0):
        raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
    return number


def _points(x: float, sign: bool = True) -> str:
    """0.071 → '+7.1' (signed points, 1 point = 0.01, Unicode minus)."""
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    text = f"{100.0 * x:+.1f}" if sign else f"{100.0 * x:.1f}"
    return text.replace("-", "−")


def _threshold_points(x: float) -> str:
    """0.05 → '5' (the configured threshold, as written)."""
    return f"{100.0 * x:.10g}"


def _pct(confidence: float) -> str:
    return f"{100.0 * confidence:.10g}%"


def _count(n: int) -> str:
    return f"{n} stimulus" if n == 1 else f"{n} stimuli"


def format_p(p: float) -> str:
    """'p = 0.031', 'p = 2.1e-05', or 'p < 1e-16' (2^-M underflows for equal differences).

    >>> format_p(0.03125), format_p(2.1e-05), format_p(0.0)
    ('p = 0.031', 'p = 2.1e-05', 'p < 1e-16')
    """
    if p < 1e-16:
        return "p < 1e-16"
    return f"p = {p:.2g}" if p < 0.001 else f"p = {p:.3f}"


def holm(p_values: npt.ArrayLike) -> FloatArray:
    """Holm's step-down adjusted p-values (Holm 1979).

    Sort ``p_(1) ≤ … ≤ p_(m)``; ``p̃_(i) = max_{j ≤ i} min(1, (m - j + 1) p_(j))``.
    Rejecting every hypothesis with ``p̃ ≤ α`` is exactly Holm's rule "reject while
    ``p_(i) ≤ α/(m - i + 1)``" and controls the family-wise error rate at α under
    any dependence between the tests.

    >>> holm([0.01, 0.04, 0.03, 0.005]).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return np.empty(0)
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted


def benjamini_hochberg(p_values: npt.ArrayLike) -> FloatArray:
    """Benjamini-Hochberg adjusted p-values (q-values), for triage lists.

    ``q_(i) = min_{j ≥ i} min(1, m p_(j) / j)``; listing every stimulus with
    ``q ≤ α`` controls the false discovery rate at α (independent or positively
    dependent tests). Equal to ``scipy.stats.false_discovery_control(p)``. Not a
    build gate: use :func:`holm` to fail builds.

    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.005]).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return np.empty(0)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q_sorted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    q = np.empty(m)
    q[order] = q_sorted
    return q


def fisher_worse(baseline: StimulusCounts, candidate: StimulusCounts) -> float:
    """One-sided Fisher exact p-value that the candidate passes this stimulus less often.

    Given both runs' trial counts and the total passes ``T = c_A + c_B`` (the
    margins of the 2×2 table), the baseline's passes ``X`` follow
    ``Hypergeometric(N = n_A + n_B, T, n_A)`` when the pass probability is the
    same in both runs::

        p = P(X ≥ c_A) = Σ_{x ≥ c_A} C(T, x) C(N - T, n_A - x) / C(N, n_A)

    Summed in exact integers (one correctly rounded division) up to 2,000 trials.
    The smallest attainable value is ``1 / C(n_A + n_B, n_A)`` (1/20 at 3 + 3 trials).

    >>> fisher_worse(StimulusCounts(5, 5), StimulusCounts(5, 2))  # 21/252
    0.08333333333333333
    """
    return _fisher_counts(baseline.n, baseline.c, candidate.n, candidate.c)


# Suites repeat the same few (n, c) pairs (K = 5 gives 36 tables), so results are cached.
@functools.lru_cache(maxsize=4096)
def _fisher_counts(n_a: int, c_a: int, n_b: int, c_b: int) -> float:
    total, passes = n_a + n_b, c_a + c_b
    if n_a == 0 or n_b == 0:
        return 1.0
    top = min(passes, n_a)
    if total <= _EXACT_FISHER_MAX:
        numerator = sum(
            math.comb(passes, x) * math.comb(total - passes, n_a - x) for x in range(c_a, top + 1)
        )
        return min(1.0, numerator / math.comb(total, n_a))
    x = np.arange(c_a, top + 1, dtype=np.float64)

    def log_comb(a: float, b: FloatArray | float) -> FloatArray:
        return np.asarray(gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0))

    terms = log_comb(passes, x) + log_comb(total - passes, n_a - x) - log_comb(total, n_a)
    peak = float(np.max(terms))
    return min(1.0, math.exp(peak) * float(np.sum(np.exp(terms - peak))))


def _fisher_min(baseline: StimulusCounts, candidate: StimulusCounts) -> float:
    """The smallest p-value :func:`fisher_worse` can reach at these trial counts."""
    total = baseline.n + candidate.n
    if total <= _EXACT_FISHER_MAX:
        return 1.0 / math.comb(total, baseline.n)
    return math.exp(-(gammaln(total + 1) - gammaln(baseline.n + 1) - gammaln(candidate.n + 1)))


# --------------------------------------------------------------------------- paired test


def _subset_sums(d: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Sum and size of every subset of ``d`` (2^M entries, the empty set first).

    A sign pattern is identified with the set F of stimuli whose sign is flipped;
    its statistic differs from the observed one by ``-2 Σ_F d_i``. Doubling the
    arrays once per stimulus costs O(2^M) time and memory (16 MB at M = 20).
    """
    total = 1 << d.size
    sums = np.zeros(total)
    sizes = np.zeros(total, dtype=np.int64)
    filled = 1
    for value in d:
        # Subsets containing this stimulus = the ones built so far, plus it.
        np.add(sums[:filled], value, out=sums[filled : 2 * filled])
        np.add(sizes[:filled], 1, out=sizes[filled : 2 * filled])
        filled *= 2
    return sums, sizes


def _random_subsets(
    d: FloatArray, patterns: int, seed: int
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """The observed pattern (empty flip set) plus ``patterns`` random ones, fixed seed."""
    rng = np.random.default_rng(seed)
    sums = np.zeros(patterns + 1)
    sizes = np.zeros(patterns + 1, dtype=np.int64)
    # Draw in blocks of about 4 million signs so memory stays bounded whatever M is.
    block = max(1, (1 << 22) // max(d.size, 1))
    for start in range(1, patterns + 1, block):
        stop = min(start + block, patterns + 1)
        flips = rng.random((stop - start, d.size)) < 0.5
        sums[start:stop] = flips.astype(np.float64) @ d
        sizes[start:stop] = flips.sum(axis=1)
    return sums, sizes


def _equal_differences(
    value: float, m: int, *, alpha: float, margin: float, gain: float, limits: tuple[float, float]
) -> _SignFlip:
    """The exact sign-flip test when every d_i equals ``value``, for any M.

    A flip set of size j moves the statistic by ``-2 j value``, so with θ = -margin
    every pattern is at least as extreme when ``value ≥ θ`` (p = 1) and only the
    observed one otherwise (p = 2^-M); every non-empty subset mean is ``value``, so
    U = L = ``value`` whenever a single pattern can reject (``α · 2^M ≥ 1``).
    """

    def can_reject(level: float) -> bool:
        return m >= -math.log2(level) - 1e-9

    worse = value + margin < -_TIE
    better = value - gain > _TIE
    return _SignFlip(
        p_worse=2.0**-m if worse else 1.0,
        p_better=2.0**-m if better else 1.0,
        rejects_worse=worse and can_reject(alpha),
        rejects_better=better and can_reject(alpha),
        interval=(
            value if can_reject(alpha / 2.0) else limits[0],
            value if can_reject(alpha / 2.0) else limits[1],
        ),
        upper=value if can_reject(alpha) else limits[1],
        lower=value if can_reject(alpha) else limits[0],
        patterns=2**m,
        exact=True,
    )


def _rank_cut(level: float, total: int) -> int:
    """Largest count of patterns at least as extreme that still rejects at ``level``."""
    # p = count / total ≤ level ⇔ count ≤ floor(level · total); the epsilon keeps a product
    # that is an integer in exact arithmetic but 0.9999999999999999 in floats at 1.
    return math.floor(level * total + 1e-9)


class _SignFlip(NamedTuple):
    p_worse: float
    p_better: float
    rejects_worse: bool
    rejects_better: bool
    interval: tuple[float, float]
    upper: float
    lower: float
    patterns: int
    exact: bool


def _permutation(
    d: FloatArray,
    *,
    alpha: float,
    margin: float,
    gain: float,
    limits: tuple[float, float],
    patterns: int,
    seed: int,
) -> _SignFlip:
    """Sign-flip test of Δ against -margin and +gain, and its bounds by test inversion.

    For a hypothesised Δ = θ, the flip set F is at least as extreme (as low) as
    the observed pattern when ``Σ_F (d_i - θ) ≥ 0``, i.e. ``mean_F(d) ≥ θ``; the empty
    set (the observed pattern) always is. So::

        p_worse(θ) = #{F : Σ_F (d_i - θ) ≥ 0} / #patterns

    is non-increasing in θ, and the one-sided upper bound ``U`` (the largest θ not
    rejected at α) is the (r+1)-th largest subset mean, ``r = floor(α · #patterns)``,
    with the empty set's mean taken as +∞. Rejecting H0: Δ ≥ -δ (p_worse(-δ) ≤ α) is
    then the same as ``U < -δ``. The lower bound mirrors this. Under H0 shifted by θ
    the test assumes d_i - θ symmetric around 0: exact for θ = 0 with equal trial
    counts (exchangeability), a location-shift assumption otherwise.
    """
    if float(np.ptp(d)) <= _TIE:
        return _equal_differences(
            float(np.mean(d)), d.size, alpha=alpha, margin=margin, gain=gain, limits=limits
        )
    exact = d.size <= ENUMERATE_MAX_STIMULI
    if exact:
        sums, sizes = _subset_sums(d)
    else:
        sums, sizes = _random_subsets(d, patterns, seed)
    total = int(sums.size)
    slack = _TIE * max(1.0, float(np.max(np.abs(d))) * d.size)
    as_low = int(np.count_nonzero(sums + sizes * margin >= -slack))
    as_high = int(np.count_nonzero(sums - sizes * gain <= slack))
    cut = _rank_cut(alpha, total)
    means = sums / np.maximum(sizes, 1)
    empty = sizes == 0
    cuts = sorted({_rank_cut(alpha, total), _rank_cut(alpha / 2.0, total)})
    # U is the (cut+1)-th largest subset mean (the empty set counting as +∞), L the
    # (cut+1)-th smallest (empty as -∞); a partial sort finds both in O(2^M).
    high = np.partition(np.where(empty, np.inf, means), [total - 1 - c for c in cuts])
    low = np.partition(np.where(empty, -np.inf, means), cuts)

    def upper_at(level: float) -> float:
        return min(float(high[total - 1 - _rank_cut(level, total)]), limits[1])

    def lower_at(level: float) -> float:
        return max(float(low[_rank_cut(level, total)]), limits[0])

    interval = (lower_at(alpha / 2.0), upper_at(alpha / 2.0))
    return _SignFlip(
        p_worse=as_low / total,
        p_better=as_high / total,
        rejects_worse=as_low <= cut,
        rejects_better=as_high <= cut,
        interval=interval,
        upper=upper_at(alpha),
        lower=lower_at(alpha),
        patterns=total,
        exact=exact,
    )


def paired_test(
    differences: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    margin: float = 0.0,
    gain: float = 0.0,
    method: Method = "auto",
    seed: int = 0,
    patterns: int = MONTE_CARLO_PATTERNS,
    limits: tuple[float, float] = (-1.0, 1.0),
) -> PairedTest:
    """Test the mean of paired differences ``d_i = candidate_i - baseline_i``.

    ``method="auto"``: paired t when ``M ≥ 30`` and sd(d) > 0; otherwise the
    sign-flip permutation test, enumerating all 2^M sign patterns when ``M ≤ 20``
    and drawing ``patterns`` random ones (``seed``) above. ``"t"`` and
    ``"permutation"`` force a method (t still falls back to the permutation test
    when SE = 0 or M < 2, where t is undefined).

    Paired t (M - 1 degrees of freedom, ``t_q`` its quantile)::

        p_worse  = F_t((Δ + margin) / SE)        H0: Δ ≥ -margin
        p_better = F_t(-(Δ - gain) / SE)         H0: Δ ≤ gain
        upper    = Δ + t_{1-α} SE,   lower = Δ - t_{1-α} SE
        interval = Δ ± t_{1-α/2} SE

    ``limits`` is the range Δ can take; bounds are clipped to it.

    >>> r = paired_test([-0.4, -0.2, -0.6, -0.2, -0.4])
    >>> r.method, r.p_worse, r.upper
    ('exact sign-flip permutation', 0.03125, -0.2)
    """
    alpha = _alpha(confidence)
    d = np.asarray(differences, dtype=np.float64).ravel()
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite")
    margin = float(margin)
    gain = float(gain)
    m = int(d.size)
    lo_limit, hi_limit = limits
    if m == 0:
        return PairedTest(
            method="none",
            reason="no shared stimuli: nothing to compare",
            stimuli=0,
            delta=None,
            se=None,
            statistic=None,
            df=None,
            patterns=None,
            margin=margin,
            gain=gain,
            p_worse=1.0,
            p_better=1.0,
            rejects_worse=False,
            rejects_better=False,
            interval=(lo_limit, hi_limit),
            upper=hi_limit,
            lower=lo_limit,
            confidence=1.0 - alpha,
        )
    delta = float(np.mean(d))
    sd = float(np.std(d, ddof=1)) if m >= 2 else 0.0
    se: float | None = sd / math.sqrt(m) if m >= 2 else None
    # Equal rationals can differ by rounding (1e-16); t of such a spread is noise, not data.
    zero_spread = float(np.ptp(d)) <= _TIE
    requested = " (requested)" if method != "auto" else ""
    use_t = (method == "t" or (method == "auto" and m >= T_MIN_STIMULI)) and not zero_spread
    if use_t:
        assert se is not None
        df = m - 1
        why = (
            f"{m} shared stimuli (≥ {T_MIN_STIMULI}), enough for the t approximation"
            if m >= T_MIN_STIMULI
            else f"{m} shared stimuli, fewer than the {T_MIN_STIMULI} the automatic rule wants"
        )
        p_worse_t = float(stdtr(df, (delta + margin) / se))
        p_better_t = float(stdtr(df, -(delta - gain) / se))
        q1 = float(stdtrit(df, 1.0 - alpha))
        q2 = float(stdtrit(df, 1.0 - alpha / 2.0))

        def clip(x: float) -> float:
            return min(max(x, lo_limit), hi_limit)

        return PairedTest(
            method="paired t",
            reason=f"paired t with {df} degrees of freedom{requested}: {why}",
            stimuli=m,
            delta=delta,
            se=se,
            statistic=delta / se,
            df=df,
            patterns=None,
            margin=margin,
            gain=gain,
            p_worse=p_worse_t,
            p_better=p_better_t,
            rejects_worse=p_worse_t <= alpha,
            rejects_better=p_better_t <= alpha,
            interval=(clip(delta - q2 * se), clip(delta + q2 * se)),
            upper=clip(delta + q1 * se),
            lower=clip(delta - q1 * se),
            confidence=1.0 - alpha,
        )

    flip = _permutation(
        d,
        alpha=alpha,
        margin=margin,
        gain=gain,
        limits=limits,
        patterns=patterns,
        seed=seed,
    )
    total = flip.patterns
    if flip.exact:
        name: TestName = "exact sign-flip permutation"
        count = f" = {total:,}" if m <= 40 else ""
        how = f"exact sign-flip permutation over 2^{m}{count} sign patterns{requested}"
    else:
        name = "Monte-Carlo sign-flip permutation"
        how = (
            f"Monte-Carlo sign-flip permutation over {total - 1:,} random sign patterns "
            f"(seed {seed}) plus the observed one{requested}"
        )
    if method == "permutation":
        why = f"{m} shared stimuli"
    elif zero_spread and m >= 2 and (method == "t" or m >= T_MIN_STIMULI):
        why = (
            f"all {m} differences are equal ({_points(delta)} points), so the standard error "
            "is 0 and the t statistic is undefined; the permutation test is well defined"
        )
    elif method == "t" and m < 2:
        why = "a single shared stimulus has no standard error, so t is undefined"
    else:
        why = f"only {m} shared stimuli (< {T_MIN_STIMULI}), too few to trust the t approximation"
        if not flip.exact:
            why += f", and 2^{m} sign patterns are too many to enumerate"
    return PairedTest(
        method=name,
        reason=f"{how}: {why}",
        stimuli=m,
        delta=delta,
        se=se,
        statistic=None,
        df=None,
        patterns=total,
        margin=margin,
        gain=gain,
        p_worse=flip.p_worse,
        p_better=flip.p_better,
        rejects_worse=flip.rejects_worse,
        rejects_better=flip.rejects_better,
        interval=flip.interval,
        upper=flip.upper,
        lower=flip.lower,
        confidence=1.0 - alpha,
    )


# --------------------------------------------------------------------------- power


def minimum_detectable_effect(
    variance: float, stimuli: int, *, confidence: float = 0.95, power: float = DEFAULT_POWER
) -> float:
    """Smallest true difference a one-sided level-α paired test detects with this power.

    Solving statistics.md §4's ``M = (z_{1-α} + z_{power})² Var(d) / δ²`` for δ::

        MDE = (z_{1-α} + z_{power}) · sqrt(Var(d) / M)

    with ``Var(d) = ω² + σ_A²/K_A + σ_B²/K_B`` (normal approximation).

    >>> round(minimum_detectable_effect(0.05, 40), 4)  # (1.6449 + 0.8416)·sqrt(0.05/40)
    0.0879
    """
    alpha = _alpha(confidence)
    if stimuli <= 0:
        raise ValueError("stimuli must be ≥ 1")
    z = normal_quantile(1.0 - alpha) + normal_quantile(_check_confidence(power))
    return z * math.sqrt(max(variance, 0.0) / stimuli)


def trials_needed(
    effect: float,
    stimuli: int,
    between: float,
    within_baseline: float,
    within_candidate: float,
    *,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> int | None:
    """Trials per stimulus (the same K on both sides) for ``MDE ≤ effect`` at M stimuli.

    From ``M δ² / (z_{1-α} + z_{power})² ≥ ω² + (σ_A² + σ_B²) / K``::

        K = ceil((σ_A² + σ_B²) / (M δ² / (z_{1-α} + z_{power})² - ω²))

    ``None`` when the between-stimulus term ω² alone exceeds the budget: more trials
    cannot help, only more stimuli can.
    """
    alpha = _alpha(confidence)
    if effect <= 0.0 or stimuli <= 0:
        return None
    z = normal_quantile(1.0 - alpha) + normal_quantile(_check_confidence(power))
    room = stimuli * effect**2 / z**2 - max(between, 0.0)
    if room <= 0.0:
        return None
    within = max(within_baseline, 0.0) + max(within_candidate, 0.0)
    # The 1e-9 keeps an exact integer answer (computed as 23.000000000000004) at 23.
    return max(1, math.ceil(within / room - 1e-9))


def _within(counts: Sequence[StimulusCounts]) -> tuple[float | None, float | None]:
    """(σ², mean over stimuli of σ_i²/n_i) from the unbiased c(n-c)/(n(n-1)) per stimulus.

    σ² uses stimuli with n ≥ 2 only; ``None`` when there are none.
    """
    usable = [(x.n, x.c) for x in counts if x.n >= 2]
    if not usable:
        return None, None
    per_trial = [c * (n - c) / (n * (n - 1)) for n, c in usable]
    of_mean = [v / n for v, (n, _) in zip(per_trial, usable, strict=True)]
    return float(np.mean(per_trial)), float(np.mean(of_mean))


def _trials_text(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.1f} (mean)"


def _min_sign_flip_stimuli(alpha: float) -> int:
    """Fewest stimuli whose 2^M sign patterns can reach p ≤ α (5 at α = 0.05)."""
    return max(1, math.ceil(-math.log2(alpha) - 1e-9))


def _power(
    d: FloatArray,
    base: Sequence[StimulusCounts],
    cand: Sequence[StimulusCounts],
    *,
    metric: Metric,
    confidence: float,
    power: float,
    margins: Sequence[float],
    target: float | None,
    test: PairedTest,
) -> Power:
    alpha = _alpha(confidence)
    m = int(d.size)
    k_a = float(np.mean([x.n for x in base])) if base else 0.0
    k_b = float(np.mean([x.n for x in cand])) if cand else 0.0
    sigma_a = sigma_b = within_now = None
    if metric == "pass_rate":
        sigma_a, now_a = _within(base)
        sigma_b, now_b = _within(cand)
        if now_a is not None and now_b is not None:
            within_now = now_a + now_b
    sample = float(np.var(d, ddof=1)) if m >= 2 else None

    def nothing(sentence: str) -> Power:
        return Power(
            power=power,
            alpha=alpha,
            stimuli=m,
            trials_baseline=k_a,
            trials_candidate=k_b,
            variance=None,
            between=None,
            within_baseline=sigma_a,
            within_candidate=sigma_b,
            mde=None,
            gate_trigger=None,
            target=target,
            trials_needed=None,
            stimuli_needed=None,
            sentence=sentence,
        )

    if m == 0:
        return nothing("No shared stimuli: no power statement.")
    if sample is None and within_now is None:
        return nothing(
            "One shared stimulus and no within-stimulus variance to go on: no power statement."
        )
    variance = max(x for x in (sample, within_now) if x is not None)
    between: float | None = None
    if sample is not None and within_now is not None:
        between = max(0.0, sample - within_now)
    size = f"{m} shared stimuli × {_trials_text(min(k_a, k_b))} trials"
    if k_a != k_b:
        size = (
            f"{m} shared stimuli × {_trials_text(k_a)} baseline / "
            f"{_trials_text(k_b)} candidate trials"
        )
    # The sign-flip test decides below T_MIN_STIMULI: the normal-approximation figures
    # below are then optimistic, and with 2^M < 1/α patterns no drop can be detected at all
    # (patterns is an exact integer: compare it without converting it to a float).
    sign_flip = test.patterns is not None
    blind = sign_flip and test.patterns is not None and test.patterns < 1.0 / alpha
    fewest = _min_sign_flip_stimuli(alpha)
    mde: float | None = None
    trigger: float | None = None
    if blind:
        sentence = (
            f"With {size}, no drop is detectable at {_pct(confidence)} one-sided confidence: "
            f"the {test.method} test has only 2^{m} = {test.patterns} sign patterns, so its "
            f"smallest p-value is 1/{test.patterns} = {1.0 / (test.patterns or 1):.4g} > "
            f"α = {alpha:.4g}; at least {fewest} shared stimuli are needed."
        )
    else:
        mde = minimum_detectable_effect(variance, m, confidence=confidence, power=power)
        trigger = (margins[0] if margins else 0.0) + mde
        level = f"{_pct(power)} power at {_pct(confidence)} one-sided confidence"
        how = "normal approximation"
        if sign_flip and m < T_MIN_STIMULI:
            how += (
                f"; approximate and optimistic for the {test.method} test used with only "
                f"{m} stimuli"
            )
        if variance <= 0.0:
            sentence = (
                f"With {size}, no variation was observed between the runs, so the minimum "
                "detectable effect computes as 0; it is not informative."
            )
        else:
            sentence = (
                f"With {size}, this comparison can detect a drop of {_points(mde, False)} "
                f"points ({level}; minimum detectable effect, {how})."
            )
            positive = [x for x in margins if x > 0.0]
            if len(positive) == 1:
                sentence += (
                    f" The max_regression gate (δ = {_threshold_points(positive[0])} points) "
                    f"fails with {_pct(power)} probability once the true drop reaches "
                    f"{_points(positive[0] + mde, False)} points."
                )
            elif positive:
                sentence += (
                    f" The max_regression gates fail with {_pct(power)} probability once the "
                    "true drop reaches "
                    + ", ".join(
                        f"{_points(x + mde, False)} points (δ = {_threshold_points(x)})"
                        for x in positive
                    )
                    + "."
                )
    needed_k: int | None = None
    needed_m: int | None = None
    if target is not None and target > 0.0:
        z2 = (normal_quantile(1.0 - alpha) + normal_quantile(power)) ** 2
        needed_m = max(1, math.ceil(z2 * variance / target**2 - 1e-9))
        goal = f"a drop of {_threshold_points(target)} points"
        if blind:
            needed_m = max(needed_m, fewest)
            sentence += (
                f" To detect {goal}, use {needed_m} shared stimuli; more trials cannot help "
                f"with {m}."
            )
        elif between is not None and sigma_a is not None and sigma_b is not None:
            needed_k = trials_needed(
                target, m, between, sigma_a, sigma_b, confidence=confidence, power=power
            )
            if needed_k is None:
                floor_m = max(1, math.ceil(z2 * between / target**2 - 1e-9))
                sentence += (
                    f" To detect {goal}: not reachable by more trials alone: the "
                    f"between-stimulus variance ω² = {between:.4g} alone needs at least "
                    f"{floor_m} shared stimuli; add stimuli ({needed_m} at the current trials)."
                )
            else:
                sentence += (
                    f" To detect {goal} with {m} stimuli, run {needed_k} trials per stimulus "
                    f"on each side (or use {needed_m} shared stimuli at the current trials)."
                )
        else:
            sentence += (
                f" To detect {goal}, use {needed_m} shared stimuli at the current trials "
                "(trials needed per stimulus are computed for the pass rate only)."
            )
    return Power(
        power=power,
        alpha=alpha,
        stimuli=m,
        trials_baseline=k_a,
        trials_candidate=k_b,
        variance=variance,
        between=between,
        within_baseline=sigma_a,
        within_candidate=sigma_b,
        mde=mde,
        gate_trigger=trigger,
        target=target,
        trials_needed=needed_k,
        stimuli_needed=needed_m,
        sentence=sentence,
    )


# --------------------------------------------------------------------------- compare


def _validate(name: str, run: str, counts: StimulusCounts) -> StimulusCounts:
    n, c = counts.n, counts.c
    if isinstance(n, bool) or isinstance(c, bool) or int(n) != n or int(c) != c:
        raise ValueError(f"stimulus {name!r} in the {run}: n and c must be integers")
    if not 0 <= c <= n:
        raise ValueError(f"stimulus {name!r} in the {run}: need 0 ≤ c ≤ n, got n={n}, c={c}")
    if counts.outcomes is not None and (
        len(counts.outcomes) != n or sum(map(bool, counts.outcomes)) != c
    ):
        raise ValueError(f"stimulus {name!r} in the {run}: outcomes disagree with n={n}, c={c}")
    if counts.score_mean is not None and not math.isfinite(counts.score_mean):
        raise ValueError(f"stimulus {name!r} in the {run}: score_mean must be finite")
    return StimulusCounts(int(n), int(c), counts.outcomes, counts.score_mean)


def _state(x: StimulusCounts) -> State:
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


def _status(base: StimulusCounts, cand: StimulusCounts) -> Status:
    """The transition by state; flaky in both at a different pass rate is "still flaky"."""
    before, after = _state(base), _state(cand)
    if before == after == "flaky" and base.c * cand.n != cand.c * base.n:
        return "still flaky"
    return _TRANSITIONS.get((before, after), "unchanged")


def _pass_hat_k(x: StimulusCounts, k: int) -> float:
    """Unbiased pass^k = C(c, k) / C(n, k) (Yao et al. 2024), exact integers."""
    return math.comb(x.c, k) / math.comb(x.n, k)


def _value(x: StimulusCounts, metric: Metric, k: int | None) -> float:
    if metric == "pass_rate":
        return x.c / x.n
    if metric == "pass_hat_k":
        assert k is not None
        return _pass_hat_k(x, k)
    assert x.score_mean is not None
    return float(x.score_mean)


def _exclusion(
    base: StimulusCounts, cand: StimulusCounts, metric: Metric, k: int | None
) -> str | None:
    for run, x in (("baseline", base), ("candidate", cand)):
        if x.n == 0:
            return f"no counted trials in the {run}"
        if metric == "pass_hat_k" and k is not None and x.n < k:
            return f"{x.n} trials in the {run}, fewer than k = {k}"
        if metric == "score" and x.score_mean is None:
            return f"no score in the {run}"
    return None


def _suite_sentence(
    gate: Literal["max_regression", "min_improvement"],
    threshold: float,
    test: PairedTest,
    confidence: float,
    passed: bool,
) -> str:
    conf = _pct(confidence)
    if test.method == "none":
        what = "worse" if gate == "max_regression" else "better"
        verdict = "Pass" if passed else "Fail"
        return (
            f"{verdict} (undecided): there are no shared stimuli, so the data cannot show that "
            f"the candidate is {what} than the baseline."
        )
    t = _threshold_points(threshold)
    if gate == "max_regression":
        claim = (
            "worse than the baseline"
            if threshold == 0.0
            else f"worse than the baseline by more than {t} points"
        )
        bound = f"upper bound of Δ = {_points(test.upper)} points"
        limit = "0" if threshold == 0.0 else f"−{t}"
        compare_text = f"{bound} < {limit}" if not passed else f"{bound} ≥ {limit}"
        p = test.p_worse
        head = "Fail: the data show" if not passed else "Pass: the data do not show"
    else:
        claim = (
            "better than the baseline"
            if threshold == 0.0
            else f"better than the baseline by more than {t} points"
        )
        bound = f"lower bound of Δ = {_points(test.lower)} points"
        limit = "0" if threshold == 0.0 else f"+{t}"
        compare_text = f"{bound} > {limit}" if passed else f"{bound} ≤ {limit}"
        p = test.p_better
        head = "Pass: the data show" if passed else "Fail: the data do not show"
    return (
        f"{head}, at {conf} confidence, that the candidate is {claim} "
        f"({compare_text}; {test.method}, one-sided {format_p(p)})."
    )


def compare(
    baseline: Mapping[str, StimulusCounts],
    candidate: Mapping[str, StimulusCounts],
    *,
    metric: Metric = "pass_rate",
    k: int | None = None,
    confidence: float = 0.95,
    max_regression: float | Sequence[float] | None = None,
    min_improvement: float | Sequence[float] | None = None,
    per_stimulus: bool = False,
    method: Method = "auto",
    power: float = DEFAULT_POWER,
    target_effect: float | None = None,
    seed: int = 0,
) -> Comparison:
    """Compare a candidate run with a baseline run, stimulus by stimulus.

    Args:
        baseline, candidate: Per-stimulus counts by stimulus id. Stimuli are paired
            by id; ids in only one run are listed (``added``/``removed``) and left out.
        metric: Per-stimulus value compared: ``"pass_rate"`` (c/n), ``"pass_hat_k"``
            (unbiased C(c,k)/C(n,k)) or ``"score"`` (``score_mean``).
        k: For pass^k; default the smallest trial count among the paired stimuli.
        confidence: 1 - α. The suite gates are one-sided level-α tests, the two-sided
            interval has this coverage, the stimulus gate has family-wise level α.
        max_regression: δ ≥ 0, or several. Fail when the data show, at ``confidence``,
            that the candidate is worse than the baseline by more than δ: upper bound
            of Δ < -δ (non-inferiority). δ = 0 is a plain one-sided regression test.
            Each δ gets its own decision.
        min_improvement: ε ≥ 0, or several. Pass only when the data show that the
            candidate is better by more than ε: lower bound of Δ > ε.
        per_stimulus: Also gate per stimulus: fail when any stimulus is worse at
            family-wise confidence (one-sided Fisher exact tests, Holm).
        method: ``"auto"``, ``"t"`` or ``"permutation"`` (see :func:`paired_test`).
        power: Power of the minimum-detectable-effect statement.
        target_effect: Drop to plan trials for; default the smallest ``max_regression``
            above 0.
        seed: Seed of the Monte-Carlo permutation test (used only with 21-29 shared
            stimuli, or a forced permutation test above 20).

    Per-stimulus p-values always use the pass/fail counts, whatever the metric.

    >>> base = {s: StimulusCounts(5, c) for s, c in zip("abcde", (5, 4, 5, 2, 3))}
    >>> cand = {s: StimulusCounts(5, c) for s, c in zip("abcde", (3, 3, 2, 3, 1))}
    >>> result = compare(base, cand, max_regression=0.0)
    >>> round(result.delta, 2), result.test.p_worse, result.passed
    (-0.28, 0.09375, True)
    """
    conf = _check_confidence(confidence)
    alpha = _alpha(conf)
    margins = _thresholds("max_regression", max_regression)
    gains = _thresholds("min_improvement", min_improvement)
    target = _check_nonnegative("target_effect", target_effect)
    if target is None and any(m > 0.0 for m in margins):
        target = min(m for m in margins if m > 0.0)
    if metric not in ("pass_rate", "pass_hat_k", "score"):
        raise ValueError(f"unknown metric {metric!r}")
    if method not in ("auto", "t", "permutation"):
        raise ValueError(f"unknown method {method!r}")
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
            excluded.append(Excluded(s, why))

    b_values = np.array([_value(base[s], metric, k) for s in paired], dtype=np.float64)
    c_values = np.array([_value(cand[s], metric, k) for s in paired], dtype=np.float64)
    d = c_values - b_values
    in_unit = bool(np.all((b_values >= 0) & (b_values <= 1) & (c_values >= 0) & (c_values <= 1)))
    limits = (-1.0, 1.0) if in_unit else (-math.inf, math.inf)

    def tested(margin: float = 0.0, gain: float = 0.0) -> PairedTest:
        return paired_test(
            d, confidence=conf, margin=margin, gain=gain, method=method, seed=seed, limits=limits
        )

    # The test of Δ against 0 both ways, for the report; each gate is tested at its own
    # threshold below (the bounds do not depend on the threshold, the p-values do).
    test = tested()

    p_worse = np.array([fisher_worse(base[s], cand[s]) for s in paired], dtype=np.float64)
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
            baseline_state=_state(base[s]),
            candidate_state=_state(cand[s]),
            status=_status(base[s], cand[s]),
            p_worse=float(p_worse[i]),
            p_holm=float(p_holm[i]),
            q_bh=float(q_bh[i]),
            regressed=bool(p_holm[i] <= alpha),
        )
        for i, s in enumerate(paired)
    )

    notes: list[str] = []
    if added:
        notes.append(f"{_count(len(added))} only in the candidate (added): not compared.")
    if removed:
        notes.append(f"{_count(len(removed))} only in the baseline (removed): not compared.")
    if excluded:
        notes.append(
            f"{_count(len(excluded))} in both runs left out of the paired test: "
            + "; ".join(f"{x.id} ({x.reason})" for x in excluded[:5])
            + (f" and {len(excluded) - 5} more" if len(excluded) > 5 else "")
            + "."
        )
    # patterns is an exact integer (2^M can exceed any float): compare without converting it
    if test.patterns is not None and test.patterns < 1.0 / alpha:
        notes.append(
            f"With {test.stimuli} shared stimuli the smallest attainable p-value is "
            f"1/{test.patterns} = {1.0 / test.patterns:.4g} > α = {alpha:.4g}: no suite gate "
            "can find a difference; add stimuli."
        )
    if paired:
        ragged = any(base[s].n != cand[s].n for s in paired)
        if ragged and test.method != "paired t":
            notes.append(
                "Trial counts differ between the runs for some stimuli, so the sign-flip test "
                "is approximate there (exact only when both runs have the same counts)."
            )
        best = min(_fisher_min(base[s], cand[s]) for s in paired)
        if best > alpha / len(paired):
            notes.append(
                f"No single stimulus can be shown worse at family-wise {_pct(conf)} confidence: "
                f"the smallest attainable Fisher p-value ({best:.3g}) exceeds α/M = "
                f"{alpha / len(paired):.3g} (Holm's first step). Run more trials per stimulus."
            )

    decided = test.method != "none"
    decisions: list[GateDecision] = []
    for margin in margins:
        at = test if margin == 0.0 else tested(margin=margin)
        fail = at.rejects_worse
        decisions.append(
            GateDecision(
                "max_regression",
                margin,
                not fail,
                decided,
                at.upper if decided else None,
                at.p_worse if decided else None,
                _suite_sentence("max_regression", margin, at, conf, not fail),
            )
        )
    for gain in gains:
        at = test if gain == 0.0 else tested(gain=gain)
        ok = at.rejects_better
        decisions.append(
            GateDecision(
                "min_improvement",
                gain,
                ok,
                decided,
                at.lower if decided else None,
                at.p_better if decided else None,
                _suite_sentence("min_improvement", gain, at, conf, ok),
            )
        )
    if per_stimulus:
        worse = [row.id for row in rows if row.regressed]
        smallest = float(np.min(p_holm)) if rows else None
        how = "one-sided Fisher exact test per stimulus, Holm-adjusted"
        if not rows:
            sentence = "Pass (undecided): there are no shared stimuli to test one by one."
        elif worse:
            shown = ", ".join(worse[:10]) + (
                f" and {len(worse) - 10} more" if len(worse) > 10 else ""
            )
            sentence = (
                f"Fail: {len(worse)} of {len(rows)} stimuli are worse in the candidate at "
                f"family-wise {_pct(conf)} confidence ({how}): {shown}."
            )
        else:
            sentence = (
                f"Pass: no stimulus is shown worse at family-wise {_pct(conf)} confidence "
                f"({how}; smallest adjusted {format_p(smallest or 1.0)})."
            )
        decisions.append(
            GateDecision(
                "stimulus_regression", alpha, not worse, bool(rows), None, smallest, sentence
            )
        )

    power_statement = _power(
        d,
        [base[s] for s in paired],
        [cand[s] for s in paired],
        metric=metric,
        confidence=conf,
        power=power,
        margins=margins,
        target=target,
        test=test,
    )
    return Comparison(
        metric=metric,
        k=k,
        confidence=conf,
        alpha=alpha,
        shared=shared,
        added=added,
        removed=removed,
        excluded=tuple(excluded),
        rows=rows,
        test=test,
        power=power_statement,
        decisions=tuple(decisions),
        notes=tuple(notes),
    )
