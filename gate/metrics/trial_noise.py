"""Bounds of a paired Δ that cover the binomial noise of every stimulus's trials.

The paired test (:func:`gate.metrics.paired.paired_test`) reads only the per-stimulus
differences ``d_i``. With few stimuli, or pass rates near 0 or 1, their spread can be
far below the noise their own trials carry: five stimuli at 5/5 in both runs give
``d = (0, 0, 0, 0, 0)``, which the sign-flip test reads as "no drop at all", although a
candidate at 90% on every stimulus shows 5/5 five times in 7% of runs. Seeded
simulations found the old suite gate passing a true drop of D in 6.6–61% of runs
(5–16 stimuli) and failing an unchanged candidate in 9–11% with 3 baseline and 10
candidate trials.

This module adds a second test whose variance is never below what the trials' own
binomial noise implies, and the paired test reports the wider of the two bounds on each
side (and the larger of the two p-values): a pass or a failure then needs both to show
it.

**The test.** Each stimulus i has ``c_b`` passes in ``n_b`` baseline trials and
``c_c`` in ``n_c`` candidate trials, at true rates ``p_b,i`` and ``p_c,i``;
``Δ = mean_i(p_c,i − p_b,i)`` over the M stimuli, ``Δ̂ = mean_i(d_i)`` and ``s²`` the
sample variance of the ``d_i``. For a hypothesised ``Δ = θ`` the rates are estimated
under that hypothesis (the restricted maximum likelihood of the score tests of
Miettinen & Nurminen 1985 and Farrington & Manning 1990, here over M stimuli), and::

    B(θ)  = (1/M) Σ_i [p̃_b,i (1 − p̃_b,i)/n_b,i + p̃_c,i (1 − p̃_c,i)/n_c,i]   (pass rates)
    SE(θ) = sqrt(max(s², B(θ)) / M)
    t(θ)  = (Δ̂ − θ) / SE(θ)
    p_worse(θ)  = F_{M−1}(t(θ))        H0: Δ ≥ θ
    p_better(θ) = F_{M−1}(−t(θ))       H0: Δ ≤ θ

with ``F_{M−1}`` the t distribution of the paired t test. B(θ) is the variance one
difference has from its trials alone when the rates are the likeliest ones with
``Δ = θ``; s² also carries how much the stimuli differ. The one-sided upper bound U is
the largest θ with ``t(θ) ≥ −t_{1−α}``, the lower bound L the smallest with
``t(θ) ≤ t_{1−α}``; both lie in [−1, 1]. A normal score test (B alone, z quantiles)
was tried first: at 5–16 stimuli of 1 or 3 trials it still passed a true drop of D in
7–10% of runs (seeded, 1,000 per setting); this form passed 0.1–1.7% there, and 5.9%
at 16 stimuli × 3 trials near a rate of 1 (docs/regression.md, Known limits).

**Restricted rates.** Maximising ``Σ_i ℓ_b,i(p_b,i) + ℓ_c,i(p_c,i)`` subject to
``Σ_i (p_c,i − p_b,i) = Mθ`` gives, with a Lagrange multiplier λ,
``ℓ'_c(p_c) = λ`` and ``ℓ'_b(p_b) = −λ``, where ``ℓ'(p) = (c − np)/(p(1 − p))``. So each
rate is the root in [0, 1] of ``λp² − (n + λ)p + c = 0``; the mean difference they give
falls as λ rises, and λ is found by bisection. Working in λ rather than θ lets a bound
be found by one bisection: along λ, θ(λ) and V(θ(λ)) are both known.

**pass^k.** With ``k > 1`` each difference is of the unbiased estimates
``C(c, k)/C(n, k)``, θ is a mean difference of ``p^k``, and the variance of one estimate
under a rate p is the U-statistic form (Hoeffding 1948)
``Σ_{j=1..k} C(k, j) C(n − k, k − j)/C(n, k) · (p^(2k−j) − p^(2k))``. The rates follow the
same λ path, taken where their mean ``p^k`` difference is θ (falling in λ, as θ does for
pass rates): the restricted maximum likelihood of a pass^k difference has no
closed-form rates (its baseline side is not concave), and this path gives it exactly
when every stimulus passes every trial.

**Matched binary pairs.** When every estimate is 0 or 1 by design (one trial a side
for pass rates, n = k for pass^k), each bound is also the wider of this one and Tango's
score bound (:mod:`gate.metrics.matched_pairs`), each p-value the larger; and the
paired test applies this floor to its t test too, not only to its sign flip. From 30
to 50 such stimuli near a rate of 1 the t test passed a true drop of D in 6.4–7.3% of
seeded runs; with Tango's bound, 3.1–4.8% (docs/regression.md, Known limits). Up to 50
stimuli, each bound is also the wider of these and the exact unconditional form of
Tango's test (:mod:`gate.metrics.exact_matched_pairs`): Tango's asymptotic bound let the
rule pass a true drop of D with probability up to 6.5% at 16 stimuli, computed over every
outcome and pair distribution.

B assumes independent trials at each stimulus's rate; where trials share a cause, s²
still carries it, and the paired test of the differences still holds, which is why the
two are combined rather than one replacing the other.

References:
    O. Miettinen & M. Nurminen, "Comparative analysis of two rates", Statistics in
    Medicine 4:213–226 (1985). C. P. Farrington & G. Manning, "Test statistics and
    sample size formulae for comparative binomial trials with null hypothesis of
    non-zero risk difference or non-unity relative risk", Statistics in Medicine
    9:1447–1454 (1990). W. Hoeffding, "A class of statistics with asymptotically normal
    distribution", Annals of Mathematical Statistics 19:293–325 (1948).

Pure numbers: numpy and ``scipy.special`` (through ``_special``) only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._special import normal_quantile, stdtr, stdtrit
from gate.metrics.exact_matched_pairs import exact_bounds, exact_p_value
from gate.metrics.matched_pairs import tango_bounds, tango_p_value

__all__ = [
    "MAX_FLOOR_K",
    "TrialCounts",
    "TrialNoiseBounds",
    "floor_k",
    "pass_fail_sums",
    "score_difference_bounds",
    "trial_noise_bounds",
    "trial_noise_p_value",
]

FloatArray = npt.NDArray[np.float64]

#: pass^k's floor is computed up to this k: its variance has up to k terms per rate and
#: bisection step (k = 1,000 on 5 stimuli of 2,000 trials: 30 s of advice); above it a
#: pass^k comparison has no floor.
MAX_FLOOR_K = 256


def floor_k(metric: str, k: int | None) -> int | None:
    """The k of the trials' noise floor for a compared metric: 1 for pass rates and for
    scores that are pass/fail (:func:`pass_fail_sums`), k for pass^k up to
    :data:`MAX_FLOOR_K`; None (no floor) otherwise."""
    if metric in ("pass_rate", "score"):
        return 1
    if metric == "pass_hat_k" and k is not None and 1 <= k <= MAX_FLOOR_K:
        return k
    return None


def pass_fail_sums(
    n_b: npt.ArrayLike, score_b: npt.ArrayLike, n_c: npt.ArrayLike, score_c: npt.ArrayLike
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """Each stimulus's sum of trial scores in each run, when every mean score is in [0, 1]
    and every sum a whole number (n × the mean score: scores of 0 or 1, as a pass/fail
    grader gives): a score comparison is then a pass-rate comparison and takes its
    floor. None otherwise: the pass/fail variance μ(1 − μ)/n is the largest a mean of n
    scores in [0, 1] can have, far above that of graded scores, and as a floor it left a
    graded comparison of 16 stimuli × 3 trials passing an unchanged candidate in 6% of
    seeded runs, not 94%.

    >>> pass_fail_sums([3, 2], [2 / 3, 1.0], [3, 2], [1.0, 0.5])
    (array([2, 2]), array([3, 1]))
    >>> pass_fail_sums([2], [0.7], [2], [0.5]) is None
    True
    """
    sums = []
    for n, score in ((n_b, score_b), (n_c, score_c)):
        means = np.asarray(score, dtype=np.float64)
        if not np.all((means >= 0.0) & (means <= 1.0)):
            return None
        total = np.asarray(n, dtype=np.float64) * means
        whole = np.round(total)
        if not np.all(np.abs(total - whole) <= 1e-9 * np.maximum(1.0, whole)):
            return None
        sums.append(whole.astype(np.int64))
    return sums[0], sums[1]


# Bisection steps on the multiplier's transform t ∈ (−1, 1): 2^-60 is below every
# tolerance the bounds are compared at.
_STEPS = 60


class TrialCounts(NamedTuple):
    """Per-stimulus pass counts of two runs, each distinct stimulus once with its weight.

    ``n_b, c_b, n_c, c_c`` have shape (U,): U distinct (n_b, c_b, n_c, c_c) rows, or
    (R, U) when each run has rows of its own. ``weights`` has shape (R, U): how many
    stimuli of each row each of R runs has (one run for a verdict, many for a
    simulation). Every run needs a stimulus and every n ≥ 1.
    """

    n_b: FloatArray
    c_b: FloatArray
    n_c: FloatArray
    c_c: FloatArray
    weights: FloatArray
    #: the compared metric's k: 1 for pass rates, k for pass^k (every n ≥ k)
    k: int = 1

    @classmethod
    def of_runs(
        cls,
        n_b: npt.ArrayLike,
        c_b: npt.ArrayLike,
        n_c: npt.ArrayLike,
        c_c: npt.ArrayLike,
        k: int = 1,
    ) -> TrialCounts:
        """Counts of R runs of M stimuli each (arrays of shape (R, M), or (M,) for one run),
        reduced to the distinct rows they share."""
        columns = [np.atleast_2d(np.asarray(x, dtype=np.int64)) for x in (n_b, c_b, n_c, c_c)]
        runs, m = columns[0].shape
        counts, code = cls._distinct([x.ravel() for x in columns])
        distinct = counts.n_b.size
        if distinct > m:
            # Runs share few rows (added trials make most rows new): keep each run's own.
            n_b_, c_b_, n_c_, c_c_ = (x.astype(np.float64) for x in columns)
            return cls(n_b_, c_b_, n_c_, c_c_, np.ones((runs, m)), k)
        run = np.repeat(np.arange(runs), m)
        weights = np.bincount(run * distinct + code, minlength=runs * distinct)
        return counts._replace(weights=weights.reshape(runs, distinct).astype(np.float64), k=k)

    @classmethod
    def of_stimuli(
        cls,
        n_b: npt.ArrayLike,
        c_b: npt.ArrayLike,
        n_c: npt.ArrayLike,
        c_c: npt.ArrayLike,
        k: int = 1,
    ) -> tuple[TrialCounts, npt.NDArray[np.int64]]:
        """One run's counts, and each stimulus's row among the distinct ones (to resample)."""
        columns = [np.asarray(x, dtype=np.int64).ravel() for x in (n_b, c_b, n_c, c_c)]
        counts, code = cls._distinct(columns)
        weights = np.bincount(code, minlength=counts.n_b.size).astype(np.float64)
        return counts._replace(weights=weights[None, :], k=k), code

    @classmethod
    def _distinct(
        cls, columns: list[npt.NDArray[np.int64]]
    ) -> tuple[TrialCounts, npt.NDArray[np.int64]]:
        """The distinct (n_b, c_b, n_c, c_c) rows (weights left empty) and each row's index."""
        top = max(int(x.max(initial=0)) for x in columns) + 1
        if top < 40_000:  # four counts fit one int64 key: a 1-D unique is far faster
            key = ((columns[0] * top + columns[1]) * top + columns[2]) * top + columns[3]
            keys, code = np.unique(key, return_inverse=True)
            parts = []
            for _ in range(4):
                keys, part = np.divmod(keys, top)
                parts.append(part)
            n_b, c_b, n_c, c_c = (x.astype(np.float64) for x in reversed(parts))
        else:
            rows, code = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
            n_b, c_b, n_c, c_c = (rows[:, j].astype(np.float64) for j in range(4))
        return cls(n_b, c_b, n_c, c_c, np.zeros((1, n_b.size))), code.ravel().astype(np.int64)

    @classmethod
    def weighted(
        cls,
        n_b: npt.ArrayLike,
        c_b: npt.ArrayLike,
        n_c: npt.ArrayLike,
        c_c: npt.ArrayLike,
        weights: npt.ArrayLike,
        k: int = 1,
    ) -> TrialCounts:
        """M observed stimuli, each counted ``weights[r, i]`` times in run r (a bootstrap)."""
        n_b_, c_b_, n_c_, c_c_ = (
            np.asarray(x, dtype=np.float64).ravel() for x in (n_b, c_b, n_c, c_c)
        )
        weights_ = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        return cls(n_b_, c_b_, n_c_, c_c_, weights_, k)

    def select(self, runs: npt.NDArray[np.bool_]) -> TrialCounts:
        """Only the chosen runs (their own rows too, where each run has its own)."""
        n_b, c_b, n_c, c_c = (x[runs] if x.ndim == 2 else x for x in self[:4])
        return TrialCounts(n_b, c_b, n_c, c_c, self.weights[runs], self.k)

    @property
    def stimuli(self) -> FloatArray:
        """M of each run."""
        return np.asarray(self.weights.sum(axis=1), dtype=np.float64)

    @property
    def differences(self) -> FloatArray:
        """Each row's d: the unbiased estimates C(c, k)/C(n, k) (c/n for pass rates),
        candidate minus baseline."""
        return _estimate(self.n_c, self.c_c, self.k) - _estimate(self.n_b, self.c_b, self.k)

    @property
    def delta(self) -> FloatArray:
        """Δ̂ of each run."""
        d = self.differences
        return np.asarray((self.weights * d).sum(axis=1) / self.stimuli, dtype=np.float64)

    @property
    def matched_pairs(self) -> tuple[FloatArray, FloatArray, FloatArray] | None:
        """Per run, the pairs that pass in the candidate only and in the baseline only, and
        M, when every estimate is 0 or 1 by design (n = k on both sides); else None."""
        if not (np.all(self.n_b == self.k) and np.all(self.n_c == self.k)):
            return None
        baseline, candidate = self.c_b == self.k, self.c_c == self.k
        weights = self.weights
        return (
            np.asarray((weights * (candidate & ~baseline)).sum(axis=1), dtype=np.float64),
            np.asarray((weights * (baseline & ~candidate)).sum(axis=1), dtype=np.float64),
            self.stimuli,
        )


def _estimate(n: FloatArray, c: FloatArray, k: int) -> FloatArray:
    """The unbiased estimate of p^k from c passes in n ≥ k trials: C(c, k)/C(n, k)."""
    if k == 1:
        return np.asarray(c / n, dtype=np.float64)
    out = np.ones(np.broadcast(n, c).shape)
    for j in range(k):
        out = out * np.maximum(c - j, 0.0) / np.maximum(n - j, 1.0)
    return out


def _estimate_variance(
    p: FloatArray, n: FloatArray, k: int, weights: _Weights | None = None
) -> FloatArray:
    """The variance of :func:`_estimate` when each of the n trials passes at rate p: the
    U-statistic variance of the product kernel (Hoeffding 1948),
    ``Σ_{j=1..k} C(k, j) C(n − k, k − j)/C(n, k) · (p^(2k−j) − p^(2k))``; p(1 − p)/n at
    k = 1. ``weights``: :func:`_variance_weights` of n, when already at hand."""
    if k == 1:
        return np.asarray(p * (1.0 - p) / n, dtype=np.float64)
    if weights is None:
        weights = _variance_weights(n, k)
    first, table = weights.first, weights.table
    last = first + table.shape[-1] - 2  # the table's columns: j = first..last, then the sum
    power = p ** (2 * k - last)  # p^(2k − j) for j = last, last − 1, …, first
    terms = np.zeros(np.broadcast(p, n).shape)
    for j in range(last, first - 1, -1):
        terms = terms + table[..., j - first] * power
        power = power * p
    total = terms - table[..., -1] * p ** (2 * k)
    return np.asarray(np.maximum(total, 0.0), dtype=np.float64)


class _Weights(NamedTuple):
    """The variance's weights C(k, j) C(n − k, k − j)/C(n, k) of every n for j = first, …
    (those below :data:`_NEGLIGIBLE` in every row left out: each term is at most its
    weight), then their sum as the last column."""

    first: int
    table: FloatArray


#: a weight (a hypergeometric probability) below which its term is left out of the variance
_NEGLIGIBLE = 1e-17


def _variance_weights(n: FloatArray, k: int) -> _Weights:
    """:class:`_Weights` for every n (table shape n.shape + (columns,))."""
    values, inverse = np.unique(n, return_inverse=True)
    table = np.array([_u_weights(int(v), k) for v in values.tolist()])
    kept = np.flatnonzero(table.max(axis=0) >= _NEGLIGIBLE)
    first, last = (int(kept[0]), int(kept[-1])) if kept.size else (0, 0)
    table = table[:, first : last + 1]
    table = np.concatenate([table, table.sum(axis=1, keepdims=True)], axis=1)
    return _Weights(first + 1, np.asarray(table[inverse.reshape(np.shape(n))], dtype=np.float64))


@functools.lru_cache(maxsize=4096)
def _u_weights(n: int, k: int) -> tuple[float, ...]:
    """C(k, j) C(n − k, k − j)/C(n, k) for j = 1..k, exactly (Python integers), n ≥ k."""
    whole = math.comb(n, k)
    return tuple(math.comb(k, j) * math.comb(n - k, k - j) / whole for j in range(1, k + 1))


def _rate_falling(lam: FloatArray, n: FloatArray, c: FloatArray) -> FloatArray:
    """The root in [0, c/n] of ``λp² − (n + λ)p + c = 0`` for λ ≥ 0, in the form that loses
    no digits (both terms of the denominator are ≥ 0)."""
    s = n + lam
    root = np.sqrt(np.maximum(s * s - 4.0 * lam * c, 0.0))
    return np.asarray(2.0 * c / (s + root), dtype=np.float64)


def _rate(lam: FloatArray, n: FloatArray, c: FloatArray) -> FloatArray:
    """The rate that maximises ``c log p + (n − c) log(1 − p) − λp``; λ < 0 is the mirror
    image (failures at −λ)."""
    rising = lam < 0
    p = _rate_falling(np.abs(lam), n, np.where(rising, n - c, c))
    return np.where(rising, 1.0 - p, p)


class _Restricted(NamedTuple):
    theta: FloatArray  # mean difference of the restricted rates, per run
    variance: FloatArray  # V(θ), per run


class _Path:
    """The restricted rates along the multiplier λ = n̄ t/(1 − |t|) (t ∈ (−1, 1)), with what
    does not change along it (the pass^k variance weights) computed once."""

    def __init__(self, counts: TrialCounts, per_run: bool = False):
        self.counts = counts
        k = counts.k
        self.weights_b = None if k == 1 else _variance_weights(counts.n_b, k)
        self.weights_c = None if k == 1 else _variance_weights(counts.n_c, k)
        largest = np.maximum(counts.n_b, counts.n_c)
        # per_run (one row a run): each run's own scale, so that its bounds do not depend
        # on the other runs computed beside it.
        self.scale: float | FloatArray = (
            np.asarray(largest.max(axis=-1), dtype=np.float64)
            if per_run
            else float(np.mean(largest))
        )

    def at(self, t: FloatArray) -> _Restricted:
        """θ and V(θ) of the restricted rates at ``t``, per run."""
        counts, k = self.counts, self.counts.k
        # 1 − |t| stops at 1e-12 (bisection reaches ±1 in floats): λ up to 10^12 n̄ puts θ
        # within about 10^-12 of ±1, closer than any bound is read.
        lam = (self.scale * t / np.maximum(1.0 - np.abs(t), 1e-12))[:, None]
        p_c = _rate(lam, counts.n_c, counts.c_c)
        p_b = _rate(-lam, counts.n_b, counts.c_b)
        m = counts.stimuli
        theta = (counts.weights * (p_c**k - p_b**k)).sum(axis=1) / m
        noise = _estimate_variance(p_b, counts.n_b, k, self.weights_b) + _estimate_variance(
            p_c, counts.n_c, k, self.weights_c
        )
        return _Restricted(theta, (counts.weights * noise).sum(axis=1) / (m * m))


def _bisect(path: _Path, above: Callable[[_Restricted], npt.NDArray[np.bool_]]) -> FloatArray:
    """Per run, the multiplier transform t ∈ (−1, 1) where ``above(restricted)`` turns from
    True (at t = −1) to False (at t = 1); ``above`` must be monotone in t."""
    runs = path.counts.weights.shape[0]
    lo = np.full(runs, -1.0)
    hi = np.full(runs, 1.0)
    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        up = above(path.at(mid))
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    middle: FloatArray = (lo + hi) / 2.0
    return middle


def _scale(counts: TrialCounts, level: float) -> tuple[FloatArray, FloatArray]:
    """Per run: s²/M (the variance of Δ̂ that the differences' spread gives) and the
    ``level`` quantile of t with M − 1 degrees of freedom."""
    d = counts.differences
    m = counts.stimuli
    df = np.maximum(m - 1.0, 1.0)
    mean = (counts.weights * d).sum(axis=1) / m
    spread = np.maximum((counts.weights * d * d).sum(axis=1) - m * mean * mean, 0.0) / df
    return spread / m, np.asarray(stdtrit(df, level), dtype=np.float64)


def trial_noise_p_value(counts: TrialCounts, theta: float, side: str) -> FloatArray:
    """One-sided p-value per run: ``side="worse"`` tests H0: Δ ≥ θ, ``"better"``
    H0: Δ ≤ θ (see the module docstring).

    >>> counts = TrialCounts.of_runs([5] * 5, [5] * 5, [5] * 5, [5] * 5)
    >>> round(float(trial_noise_p_value(counts, -0.1, "better")[0]), 4)
    0.0855
    """
    theta = min(max(float(theta), -1.0 + 1e-12), 1.0 - 1e-12)
    path = _Path(counts)
    at = path.at(_bisect(path, lambda r: r.theta > theta))
    spread, _ = _scale(counts, 0.5)
    gap = counts.delta - theta
    se = np.sqrt(np.maximum(at.variance, spread))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0.0, gap / se, np.where(gap == 0.0, 0.0, np.sign(gap) * np.inf))
    df = np.maximum(counts.stimuli - 1.0, 1.0)
    p = np.asarray(stdtr(df, t if side == "worse" else -t), dtype=np.float64)
    pairs = counts.matched_pairs
    if pairs is None:
        return p
    tango, exact = tango_p_value(*pairs, theta, side), exact_p_value(*pairs, theta, side)
    return np.maximum(np.maximum(p, tango), exact)


def score_difference_bounds(
    n_b: npt.ArrayLike,
    c_b: npt.ArrayLike,
    n_c: npt.ArrayLike,
    c_c: npt.ArrayLike,
    confidence: float,
) -> TrialNoiseBounds:
    """Miettinen & Nurminen's (1985) one-sided ``confidence`` score bounds of one
    stimulus's ``p_c − p_b`` (candidate minus baseline), for each of T tables (1-D
    arrays): the restricted rates of this module's path with M = 1, and::

        Z(θ) = (d̂ − θ) / sqrt(V(θ) · N/(N − 1)),   N = n_b + n_c,   against z_{confidence}

    where V(θ) = p̃_b(1 − p̃_b)/n_b + p̃_c(1 − p̃_c)/n_c.

    >>> bounds = score_difference_bounds([10], [10], [10], [10], 0.95)
    >>> round(float(bounds.lower[0]), 4), round(float(bounds.upper[0]), 4)
    (-0.2217, 0.2217)
    """
    nb, cb, nc, cc = (
        np.asarray(x, dtype=np.float64).ravel()[:, None] for x in (n_b, c_b, n_c, c_c)
    )
    counts = TrialCounts(nb, cb, nc, cc, np.ones((nb.shape[0], 1)))
    z = normal_quantile(confidence)
    total = (nb + nc).ravel()
    factor = total / (total - 1.0)
    delta = counts.delta

    # A rate at 1 can come out an ulp above it: V(θ) −2e-16, which counts as 0.
    def beyond_upper(r: _Restricted) -> npt.NDArray[np.bool_]:
        return np.asarray(r.theta - delta > z * np.sqrt(np.maximum(r.variance, 0.0) * factor))

    def not_below_lower(r: _Restricted) -> npt.NDArray[np.bool_]:
        return np.asarray(delta - r.theta <= z * np.sqrt(np.maximum(r.variance, 0.0) * factor))

    path = _Path(counts, per_run=True)
    upper = path.at(_bisect(path, beyond_upper)).theta
    lower = path.at(_bisect(path, not_below_lower)).theta
    return TrialNoiseBounds(np.clip(lower, -1.0, 1.0), np.clip(upper, -1.0, 1.0))


class TrialNoiseBounds(NamedTuple):
    """One-sided lower and upper bounds of Δ per run, at one confidence level."""

    lower: FloatArray
    upper: FloatArray


def trial_noise_bounds(counts: TrialCounts, confidence: float) -> TrialNoiseBounds:
    """One-sided ``confidence`` bounds of Δ per run (the inversion of
    :func:`trial_noise_p_value`).

    Five stimuli at 5/5 in both runs cannot rule out a candidate at 90%:

    >>> counts = TrialCounts.of_runs([5] * 5, [5] * 5, [5] * 5, [5] * 5)
    >>> bounds = trial_noise_bounds(counts, 0.95)
    >>> round(float(bounds.lower[0]), 3), round(float(bounds.upper[0]), 3)
    (-0.154, 0.154)
    """
    spread, q = _scale(counts, confidence)
    delta = counts.delta

    # Along λ (falling θ): a θ above U is rejected, then accepted down to L, then rejected.
    def beyond_upper(r: _Restricted) -> npt.NDArray[np.bool_]:
        return np.asarray(r.theta - delta > q * np.sqrt(np.maximum(r.variance, spread)))

    def not_below_lower(r: _Restricted) -> npt.NDArray[np.bool_]:
        return np.asarray(delta - r.theta <= q * np.sqrt(np.maximum(r.variance, spread)))

    path = _Path(counts)
    upper = path.at(_bisect(path, beyond_upper)).theta
    lower = path.at(_bisect(path, not_below_lower)).theta
    pairs = counts.matched_pairs
    if pairs is not None:
        tango = tango_bounds(*pairs, confidence)
        lower, upper = np.minimum(lower, tango.lower), np.maximum(upper, tango.upper)
        exact = exact_bounds(*pairs, confidence)
        lower, upper = np.minimum(lower, exact.lower), np.maximum(upper, exact.upper)
    return TrialNoiseBounds(np.clip(lower, -1.0, 1.0), np.clip(upper, -1.0, 1.0))
