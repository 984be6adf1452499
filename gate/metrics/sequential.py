"""Confidence sequences: intervals that stay valid however often a CI job looks.

A fixed-n interval re-checked after every batch of trials inflates its error
rate with each look (two-sided 5% tests repeated: 14% false decisions after 5
looks, 25% after 20; Armitage, McPherson & Rowe 1969). A confidence sequence
(Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
nonasymptotic confidence sequences", Ann. Statist. 49(2)) covers the truth at
every look at once: P(∃ t: θ ∉ CS_t) ≤ α. So a gate may re-run ``eval-gate
check --sequential`` after each batch and stop at the first pass or fail.

**Construction.** Split each stimulus's trials, in trial order, into
consecutive blocks of d trials (d = 1 for the pass rate, k for pass@k and
pass^k); block r of stimulus i passes (Y_{i,r} = 1) when any (pass@k) or all
(pass^k, pass rate) of its trials pass, so E[Y_{i,r}] = g(p_i), the latent
metric. A *round* r holds block r of every stimulus. For a candidate suite
value θ = mean_i g(p_i), the one-sided mixture of likelihood ratios::

    K_b(θ) = ∫_θ^1 Π_{r ≤ b} Π_i x^{Y_ir} (1-x)^{1-Y_ir} / (θ^{Y_ir} (1-θ)^{1-Y_ir}) π(x|x ≥ θ) dx

is a nonnegative supermartingale over rounds whenever mean_i g(p_i) ≤ θ,
*however the g(p_i) differ*: each round's factor has expectation
Π_i (1 + λ(g(p_i) - θ)) ≤ exp(λ Σ_i (g(p_i) - θ)) ≤ 1 with λ = (x - θ)/(θ(1-θ)) ≥ 0.
By Ville's inequality, P(∃ b: K_b(θ) ≥ 2/α) ≤ α/2, and the lower bound of the
sequence is the smallest θ that no round so far has rejected; the upper bound
mirrors it (x ≤ θ). With a Beta(a, b) prior on x the integral has a closed form
in the regularized incomplete beta function (``S`` passes in ``N`` blocks)::

    log K(θ) = log B(S+a, N-S+b) + log(1 - I_θ(S+a, N-S+b))
               - S log θ - (N-S) log(1-θ) - log B(a, b) - log(1 - I_θ(a, b))

Only complete rounds count (every stimulus's block r): a round missing some
stimuli would test the mean of a subset. Trials beyond the last complete round
wait for the next one.

For one stimulus (``scope: stimuli``) the same sequence over its own blocks
(one stimulus per round).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._special import betainc, betaln
from gate.metrics._validation import check_choice, check_confidence, check_int

__all__ = [
    "RoundSums",
    "block_outcomes",
    "confidence_sequence",
    "look_bounds",
    "mixture_log_capital",
    "round_sums",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Side = Literal["lower", "upper"]

#: the mixture prior on the alternative: uniform.
PRIOR = (1.0, 1.0)
_BISECTIONS = 48


class RoundSums(NamedTuple):
    """Complete rounds of blocks: ``sums[r]`` of the ``stimuli`` blocks of round r passed."""

    sums: IntArray
    stimuli: int
    degree: int


def block_outcomes(outcomes: npt.ArrayLike, degree: int, reduce: Literal["all", "any"]) -> IntArray:
    """One stimulus's trials (in order) as pass/fail blocks of ``degree`` consecutive trials.

    ``all``: a block passes when every trial in it passed (pass rate, pass^k);
    ``any``: when one did (pass@k). Trailing trials that do not fill a block wait.

    >>> block_outcomes([1, 1, 0, 1, 1, 1, 1], 3, "all").tolist()
    [0, 1]
    """
    d = check_int(degree, "degree", minimum=1)
    trials = np.asarray(outcomes, dtype=bool).ravel()
    blocks = trials[: (trials.size // d) * d].reshape(-1, d)
    passed = blocks.all(axis=1) if reduce == "all" else blocks.any(axis=1)
    return np.asarray(passed, dtype=np.int64)


def round_sums(
    outcomes: Sequence[npt.ArrayLike],
    metric: Literal["pass_rate", "pass_at_k", "pass_hat_k"],
    k: int = 1,
) -> RoundSums:
    """Passes per complete round, from every stimulus's outcomes in trial order.

    >>> round_sums([[1, 1, 1, 0], [1, 0, 1, 1, 1, 1]], "pass_hat_k", 2).sums.tolist()
    [1, 1]
    """
    check_choice(metric, "metric", ("pass_rate", "pass_at_k", "pass_hat_k"))
    degree = 1 if metric == "pass_rate" else check_int(k, "k", minimum=1)
    reduce: Literal["all", "any"] = "any" if metric == "pass_at_k" else "all"
    blocks = [block_outcomes(x, degree, reduce) for x in outcomes]
    rounds = min((b.size for b in blocks), default=0)
    if rounds == 0:
        return RoundSums(np.zeros(0, dtype=np.int64), len(blocks), degree)
    matrix = np.stack([b[:rounds] for b in blocks])
    return RoundSums(matrix.sum(axis=0).astype(np.int64), len(blocks), degree)


def mixture_log_capital(
    passes: npt.ArrayLike,
    blocks: npt.ArrayLike,
    theta: npt.ArrayLike,
    side: Side = "lower",
    prior: tuple[float, float] = PRIOR,
) -> FloatArray:
    """log K(θ): the evidence, after ``passes`` of ``blocks``, against the suite value θ.

    ``side="lower"`` weighs the evidence that the value is above θ (it rejects the θ
    below the data: the lower bound); ``"upper"`` that it is below. Vectorised.

    40 passes of 40, uniform prior: K(θ) = ∫_θ^1 (x/θ)^40 dx / (1-θ)
    = (1 - θ^41) / (41 θ^40 (1-θ)) = 917.5 at θ = 0.8:

    >>> round(float(mixture_log_capital(40, 40, 0.8)), 3)
    6.822
    """
    s = np.asarray(passes, dtype=np.float64)
    n = np.asarray(blocks, dtype=np.float64)
    t = np.asarray(theta, dtype=np.float64)
    a, b = prior
    if side == "upper":  # the mirror image: failures above 1 - θ
        s, t = n - s, 1.0 - t
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tail = np.log(betainc(n - s + b, s + a, 1.0 - t))  # log(1 - I_θ(s + a, n - s + b))
        prior_tail = np.log(betainc(b, a, 1.0 - t))
        value = (
            betaln(s + a, n - s + b)
            + tail
            - s * np.log(t)
            - (n - s) * np.log1p(-t)
            - betaln(a, b)
            - prior_tail
        )
    return np.asarray(np.where(np.isnan(value), -np.inf, value), dtype=np.float64)


def _bound(passes: FloatArray, blocks: FloatArray, threshold: float, side: Side) -> FloatArray:
    """The θ where log K(θ) crosses ``threshold`` (bisection; log K is monotone in θ)."""
    low = np.zeros(passes.shape)
    high = np.ones(passes.shape)
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2.0
        rejected = mixture_log_capital(passes, blocks, middle, side) >= threshold
        if side == "lower":  # rejected θ lie below the bound
            low = np.where(rejected, middle, low)
            high = np.where(rejected, high, middle)
        else:  # rejected θ lie above it
            high = np.where(rejected, middle, high)
            low = np.where(rejected, low, middle)
    return high if side == "lower" else low


class SequenceBounds(NamedTuple):
    """Running bounds after each complete round (the intersection of every look so far)."""

    lower: FloatArray
    upper: FloatArray
    confidence: float


def confidence_sequence(
    sums: npt.ArrayLike, stimuli: int, confidence: float = 0.95
) -> SequenceBounds:
    """Anytime-valid two-sided bounds of the suite value after each complete round.

    ``sums`` has shape (..., B): the passes of B rounds of ``stimuli`` blocks each
    (leading axes are independent runs, for simulation). Each side holds α/2 over
    every round at once; the bounds are running intersections, so they never widen.

    Every block of 20 stimuli passes, round after round: the lower bound after b
    rounds solves (1 - θ^(20b+1)) / ((20b+1) θ^(20b) (1-θ)) = 40:

    >>> cs = confidence_sequence([20, 20, 20], 20)
    >>> [round(x, 3) for x in cs.lower.tolist()]
    [0.768, 0.875, 0.915]
    """
    level = check_confidence(confidence)
    m = check_int(stimuli, "stimuli", minimum=1)
    s = np.asarray(sums, dtype=np.float64)
    passes = np.cumsum(s, axis=-1)
    blocks = m * np.arange(1, s.shape[-1] + 1, dtype=np.float64)
    lower, upper = look_bounds(passes, np.broadcast_to(blocks, passes.shape), level)
    return SequenceBounds(
        np.maximum.accumulate(lower, axis=-1), np.minimum.accumulate(upper, axis=-1), level
    )


def look_bounds(
    passes: npt.ArrayLike, blocks: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """The sequence's bounds at one look: ``passes`` of ``blocks`` (complete rounds), any
    shape. Without the intersection over earlier looks (which can only narrow them).

    >>> [round(float(x), 3) for x in look_bounds(60, 60)]
    [0.915, 1.0]
    """
    level = check_confidence(confidence)
    s_all = np.asarray(passes, dtype=np.float64)
    n_all = np.broadcast_to(np.asarray(blocks, dtype=np.float64), s_all.shape)
    threshold = math.log(2.0 / (1.0 - level))
    # The bounds depend on (passes, blocks) only, and simulated runs repeat the same few
    # pairs: solve each distinct pair once.
    pairs, inverse = np.unique(
        np.stack([s_all.ravel(), n_all.ravel()]), axis=1, return_inverse=True
    )
    s_u, n_u = pairs[0], pairs[1]
    # No failure (no pass) so far: nothing argues the value is below 1 (above 0).
    low_u = np.where(s_u == 0, 0.0, _bound(s_u, n_u, threshold, "lower"))
    high_u = np.where(s_u == n_u, 1.0, _bound(s_u, n_u, threshold, "upper"))
    lower = low_u[inverse.ravel()].reshape(s_all.shape)
    upper = high_u[inverse.ravel()].reshape(s_all.shape)
    return lower, upper
