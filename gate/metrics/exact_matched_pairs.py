"""Exact unconditional bounds for a difference of matched binary outcomes: Tango's
ordering, its size computed over every outcome instead of read off the normal.

Matched 0/1 designs (one trial a side for pass rates, n = k for pass^k) have ``b`` pairs
that pass in the candidate only and ``c`` in the baseline only, of M
(:mod:`gate.metrics.matched_pairs`). Tango's score bound is asymptotic, and below 30
stimuli the suite rule built on it missed α: computed over every outcome, at the worst
pair distribution, it passed a true drop of D = 0.05 with probability up to 6.5% at 16
stimuli of one trial a side and 5.5% at 20 (δ = 0, α = 0.05), and seeded runs of pass^k
with k = n = 3 found 6.7% at 12 stimuli.

**The test.** The M pairs are taken as draws from one population: each is candidate-only
with probability ``p01``, baseline-only with ``p10`` and concordant otherwise, so
(b, c) is trinomial and ``Δ = p01 − p10``. For H0: Δ ≤ θ the outcomes are ordered by
Tango's Z(θ) (larger: more evidence that Δ > θ), and the p-value of (b, c) is the largest
probability, over the null, of an outcome at least as extreme (Z ≥ Z(b, c), ties
included). On the boundary Δ = θ the nuisance is the discordance q = p01 + p10, in
[|θ|, 1]; the largest probability is taken over :data:`GRID_Q` values of it (the tests
check the bounds' coverage inside the null too). H0: Δ ≥ θ mirrors it.

**The bounds** invert the test on a grid of :data:`GRID_THETA` values of θ (steps of
0.005): the lower bound of (b, c) is the last θ of the run rejected from θ = −1 up, the
upper bound the first of the run rejected from θ = 1 down, so a bound only ever errs
wide, by less than a step. A table per (M, level) holds every outcome's bounds, up to
:data:`MOST_STIMULI` stimuli (2 s a table at 50; the work grows with M²). An advice
meets a table per number of stimuli it tries, so the default level's tables ship
computed in advance (:mod:`gate.metrics._exact_matched_table`); other levels are
computed when met. Past 50 stimuli the floor is Tango's asymptotic bound.

:mod:`gate.metrics.trial_noise` takes these bounds, and these p-values, as one more floor
of matched designs: the bound the verdict uses is the widest of its own, Tango's and this
one, so a pass (or a failure) needs this one to show it too.

References:
    G. A. Barnard, "Significance tests for 2 × 2 tables", Biometrika 34:123–138 (1947):
    the unconditional p-value, maximised over the nuisance parameter.
    T. Tango, "Equivalence test and confidence interval for the difference in proportions
    for the paired-sample design", Statistics in Medicine 17:891–908 (1998).
    M. W. Fagerland, S. Lydersen & P. Laake, "Recommended tests and confidence intervals
    for paired binomial proportions", Statistics in Medicine 33:2850–2875 (2014): exact
    unconditional tests of paired proportions.

Pure numbers: numpy and the standard library only.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

from gate.metrics.matched_pairs import MatchedPairBounds, tango_statistic

__all__ = [
    "GRID_Q",
    "GRID_THETA",
    "MOST_STIMULI",
    "exact_bounds",
    "exact_p_value",
    "lower_steps",
]

FloatArray = npt.NDArray[np.float64]

#: θ values the test is inverted at, over [−1, 1] (a step of 0.005)
GRID_THETA = 401
#: discordances q = p01 + p10 at which a p-value's largest null probability is taken
GRID_Q = 128
#: the most stimuli with exact bounds (a table has (M + 1)(M + 2)/2 outcomes)
MOST_STIMULI = 50
#: Z values closer than this are one value (ties: at least as extreme)
_SAME = 1e-9

#: the level whose tables are computed in advance (:func:`_stored`)
_STORED_CONFIDENCE = 0.95
#: (lower, upper) of every outcome, indexed [b, c], per (M, level)
_TABLES: dict[tuple[int, float], tuple[FloatArray, FloatArray]] = {}


def exact_bounds(
    b: npt.ArrayLike, c: npt.ArrayLike, m: npt.ArrayLike, confidence: float
) -> MatchedPairBounds:
    """One-sided ``confidence`` bounds of Δ from the exact unconditional test (module
    docstring), for ``b`` candidate-only and ``c`` baseline-only pairs of ``m``; broadcast.
    Where there is none (more than :data:`MOST_STIMULI` pairs, counts that are not whole
    numbers) the lower bound is 1 and the upper −1, which leave any other bound as it is.

    Five pairs, all concordant: with no candidate-only pair and baseline-only ones at a
    rate of −θ, that outcome has probability (1 + θ)⁵, which is 5% at θ = −0.451; the
    lower bound is the grid's step below it (Tango's bound, −0.351, has 11.5% there):

    >>> bounds = exact_bounds([0, 5], [0, 0], [5, 5], 0.95)
    >>> bounds.lower.round(3).tolist(), bounds.upper.round(3).tolist()
    ([-0.455, 0.095], [0.455, 1.0])
    """
    b_, c_, m_, usable = _usable(b, c, m)
    lower, upper = np.ones(b_.shape), -np.ones(b_.shape)
    for size in np.unique(m_[usable]).astype(int).tolist():
        at = usable & (m_ == size)
        table_lower, table_upper = _table(size, float(confidence))
        rows, columns = b_[at].astype(int), c_[at].astype(int)
        lower[at], upper[at] = table_lower[rows, columns], table_upper[rows, columns]
    return MatchedPairBounds(lower, upper)


def exact_p_value(
    b: npt.ArrayLike, c: npt.ArrayLike, m: npt.ArrayLike, theta: float, side: str
) -> FloatArray:
    """One-sided p-value of the exact unconditional test: ``side="better"`` tests
    H0: Δ ≤ θ, ``"worse"`` H0: Δ ≥ θ; 0 where there is none (as :func:`exact_bounds`),
    which leaves any other p-value as it is.

    >>> round(float(exact_p_value(0, 0, 5, -0.5, "better")[0]), 4)  # (1 − 0.5)^5
    0.0312
    """
    b_, c_, m_, usable = _usable(b, c, m)
    p = np.zeros(b_.shape)
    theta = min(max(float(theta), -1.0), 1.0)
    for size in np.unique(m_[usable]).astype(int).tolist():
        at = usable & (m_ == size)
        outcomes = _outcomes(size)
        if side == "better":
            values = outcomes.p_values(theta)
            p[at] = values[outcomes.index[b_[at].astype(int), c_[at].astype(int)]]
        else:  # Δ ≥ θ of (b, c) is Δ ≤ −θ of the mirrored pairs (c, b)
            values = outcomes.p_values(-theta)
            p[at] = values[outcomes.index[c_[at].astype(int), b_[at].astype(int)]]
    return p


def _usable(
    b: npt.ArrayLike, c: npt.ArrayLike, m: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """``b``, ``c`` and ``m`` broadcast as floats, and where an exact table applies: whole
    counts of at most :data:`MOST_STIMULI` pairs."""
    b_, c_, m_ = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (b, c, m))
    )
    whole = (b_ == np.round(b_)) & (c_ == np.round(c_)) & (m_ == np.round(m_))
    usable = whole & (m_ >= 1) & (m_ <= MOST_STIMULI) & (b_ >= 0) & (c_ >= 0) & (b_ + c_ <= m_)
    return b_, c_, m_, usable


@functools.cache
def _outcomes(m: int) -> _Outcomes:
    """The outcomes of ``m`` pairs, made once per process (a table and each p-value)."""
    return _Outcomes(m)


class _Outcomes:
    """Every outcome (b, c) of M pairs and its multinomial coefficient."""

    def __init__(self, m: int) -> None:
        b, c = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
        possible = b + c <= m
        self.m = m
        self.b, self.c = b[possible].astype(np.float64), c[possible].astype(np.float64)
        self.index = np.full((m + 1, m + 1), -1, dtype=np.int64)
        self.index[b[possible], c[possible]] = np.arange(self.b.size)
        lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
        self.log_choose = (
            math.lgamma(m + 1) - lgamma(self.b + 1) - lgamma(self.c + 1)
            - lgamma(m - self.b - self.c + 1)
        )  # fmt: skip

    def p_values(self, theta: float) -> FloatArray:
        """Each outcome's p-value of H0: Δ ≤ θ, the largest over the discordance."""
        z = tango_statistic(self.b, self.c, self.m, theta)
        order = np.argsort(-z, kind="stable")
        ordered = z[order]
        # An outcome's tail runs to the last outcome of its value of Z (ties count).
        with np.errstate(invalid="ignore"):  # inf − inf: two infinite Z, a tie
            steps = ordered[:-1] - ordered[1:] > _SAME
        ends = np.append(np.flatnonzero(steps), ordered.size - 1)
        group_end = ends[np.searchsorted(ends, np.arange(ordered.size))]
        tail = np.cumsum(self._probabilities(theta)[:, order], axis=1)[:, group_end]
        p = np.empty(ordered.size)
        p[order] = tail.max(axis=0)
        return np.minimum(p, 1.0)

    def _probabilities(self, theta: float) -> FloatArray:
        """Each outcome's probability at each discordance on the boundary Δ = θ:
        shape (discordances, outcomes)."""
        q = np.linspace(abs(theta), 1.0, GRID_Q)[:, None]
        candidate_only, baseline_only, concordant = (q + theta) / 2.0, (q - theta) / 2.0, 1.0 - q
        concordant_count = self.m - self.b - self.c
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p = (
                self.log_choose
                + np.where(self.b > 0, self.b * np.log(candidate_only), 0.0)
                + np.where(self.c > 0, self.c * np.log(baseline_only), 0.0)
                + np.where(concordant_count > 0, concordant_count * np.log(concordant), 0.0)
            )
        probabilities: FloatArray = np.exp(log_p)
        return probabilities


def _table(m: int, confidence: float) -> tuple[FloatArray, FloatArray]:
    """(lower, upper), indexed [b, c], of every outcome of ``m`` pairs (NaN where
    b + c > m): stored for the default level, else computed; kept per process."""
    key = (m, confidence)
    if key not in _TABLES:
        steps = _stored(m, confidence)
        if steps is None:
            steps = lower_steps(m, confidence)
        outcomes = _outcomes(m)
        lower = np.full((m + 1, m + 1), np.nan)
        thetas = np.linspace(-1.0, 1.0, GRID_THETA)
        lower[outcomes.b.astype(int), outcomes.c.astype(int)] = thetas[np.asarray(steps)]
        # The upper bound of (b, c) is minus the lower bound of the mirrored pairs (c, b).
        _TABLES[key] = (lower, -lower.T)
    return _TABLES[key]


def lower_steps(m: int, confidence: float) -> list[int]:
    """Each outcome's lower bound as its step on the θ grid (θ = −1 + 0.005·step), the
    outcomes in the order of b, then c: the last θ of the run of rejections from θ = −1
    up (−1 itself when none)."""
    alpha = 1.0 - confidence
    outcomes = _outcomes(m)
    thetas = np.linspace(-1.0, 1.0, GRID_THETA)
    # rejected[j, i]: H0: Δ ≤ θ_j rejected for outcome i
    rejected = np.stack([outcomes.p_values(float(theta)) <= alpha for theta in thetas])
    run = np.argmin(rejected, axis=0)  # the first θ not rejected
    run = np.where(rejected.all(axis=0), GRID_THETA, run)
    steps: list[int] = np.maximum(run - 1, 0).tolist()
    return steps


def _stored(m: int, confidence: float) -> list[int] | None:
    """The default level's steps, computed in advance for every M up to MOST_STIMULI
    (:mod:`gate.metrics._exact_matched_table`; 2 s a table at 50 stimuli, and an advice
    meets a table per number of stimuli it tries); None for other levels."""
    if confidence != _STORED_CONFIDENCE:
        return None
    from gate.metrics import _exact_matched_table as stored

    if (stored.CONFIDENCE, stored.GRID_THETA, stored.GRID_Q) != (
        _STORED_CONFIDENCE, GRID_THETA, GRID_Q,
    ) or m > stored.MOST_STIMULI:  # fmt: skip
        return None
    return list(stored.LOWER_STEPS[m - 1])
