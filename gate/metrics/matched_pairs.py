"""Tango's score bounds for a difference of matched binary outcomes.

When every stimulus has one outcome a side that is 0 or 1 by design (one trial a side for
pass rates; n = k trials a side for pass^k, whose estimate C(c, k)/C(n, k) is then
"every trial passed"), the M stimuli are M matched pairs: ``b`` of them pass in the
candidate only, ``c`` in the baseline only, and ``Δ̂ = (b − c)/M``. Each d_i is −1, 0 or
+1, mostly 0 near a rate of 1, and the paired t test on them missed on one side: from
30 to 50 stimuli at a rate of 0.95 it passed a true drop of D in 6.4–7.3% of seeded runs
(nominal 5%). Tango's score test (1998) is the standard test of such a difference:
under H0: Δ = θ the probability of a "baseline only" pair is its restricted maximum
likelihood::

    A = 2M,  B = −b − c + (2M − b + c)·θ,  C = −c·θ·(1 − θ)
    q̃ = (sqrt(B² − 4AC) − B) / (2A)
    Z(θ) = (b − c − Mθ) / sqrt(M·(2q̃ + θ(1 − θ)))

``Z`` falls as θ rises. The one-sided lower bound L is the θ with ``Z(θ) = z_{1−α}``
and the upper bound U the one with ``Z(θ) = −z_{1−α}``; the p-value of H0: Δ ≥ θ is
Φ(Z(θ)) and of H0: Δ ≤ θ is Φ(−Z(θ)). At θ = 0 it is McNemar's ``(b − c)/sqrt(b + c)``.

The test takes the pairs as draws from one population; stimuli that differ from each
other make b − c vary less than that, so it errs on the safe side there.
:mod:`gate.metrics.trial_noise` takes it as the floor of such designs, and up to 50
stimuli also its exact unconditional form (:mod:`gate.metrics.exact_matched_pairs`).

References:
    T. Tango, "Equivalence test and confidence interval for the difference in proportions
    for the paired-sample design", Statistics in Medicine 17:891–908 (1998).
    M. W. Fagerland, S. Lydersen & P. Laake, *Statistical Analysis of Contingency Tables*
    (2017), ch. 8: the worked example (Cavo et al. 2012) the tests check.

Pure numbers: numpy, and the normal distribution of ``_special``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._special import normal_cdf, normal_quantile

__all__ = ["MatchedPairBounds", "tango_bounds", "tango_p_value", "tango_statistic"]

FloatArray = npt.NDArray[np.float64]

# Bisection steps on θ ∈ [−1, 1]: 2^-60 of the range, below every tolerance bounds meet.
_STEPS = 60


def tango_statistic(
    b: npt.ArrayLike, c: npt.ArrayLike, m: npt.ArrayLike, theta: npt.ArrayLike
) -> FloatArray:
    """Tango's Z(θ) (module docstring) for ``b`` candidate-only and ``c`` baseline-only pairs
    of ``m``; broadcast. Where its variance is 0 (no discordant pair at θ = 0, or θ = ±1),
    0 when ``b − c = Mθ`` and ±inf otherwise.

    >>> float(tango_statistic(9, 4, 40, 0.0)) == 5 / 13**0.5   # McNemar's
    True
    """
    b_, c_, m_, t = (np.asarray(x, dtype=np.float64) for x in (b, c, m, theta))
    a = 2.0 * m_
    bb = -b_ - c_ + (2.0 * m_ - b_ + c_) * t
    cc = -c_ * t * (1.0 - t)
    restricted = (np.sqrt(np.maximum(bb * bb - 4.0 * a * cc, 0.0)) - bb) / (2.0 * a)
    variance = m_ * (2.0 * restricted + t * (1.0 - t))
    gap = b_ - c_ - m_ * t
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(
            variance > 0.0,
            gap / np.sqrt(np.where(variance > 0.0, variance, 1.0)),
            np.where(gap == 0.0, 0.0, np.sign(gap) * np.inf),
        )
    return np.asarray(z, dtype=np.float64)


class MatchedPairBounds(NamedTuple):
    """One-sided lower and upper bounds of Δ, at one confidence level."""

    lower: FloatArray
    upper: FloatArray


def tango_bounds(
    b: npt.ArrayLike, c: npt.ArrayLike, m: npt.ArrayLike, confidence: float
) -> MatchedPairBounds:
    """One-sided ``confidence`` bounds of Δ from Tango's score test, by bisection.

    Fagerland, Lydersen & Laake's example (Cavo et al. 2012: 6 and 16 discordant pairs
    of 161), whose two-sided 95% interval is (−0.1240, −0.0054), so its one-sided 97.5%
    bounds:

    >>> bounds = tango_bounds(6, 16, 161, 0.975)
    >>> round(float(bounds.lower[0]), 4), round(float(bounds.upper[0]), 4)
    (-0.124, -0.0054)
    """
    b_, c_, m_ = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (b, c, m))
    b_, c_, m_ = np.broadcast_arrays(b_, c_, m_)
    z = normal_quantile(confidence)
    estimate = (b_ - c_) / m_
    # L: the θ below Δ̂ where Z falls to z; U: the θ above it where Z falls to −z.
    low, high = np.full(b_.shape, -1.0), estimate.copy()
    for _ in range(_STEPS):
        middle = (low + high) / 2.0
        rejected = tango_statistic(b_, c_, m_, middle) > z
        low, high = np.where(rejected, middle, low), np.where(rejected, high, middle)
    lower = np.where(estimate <= -1.0, -1.0, low)
    low, high = estimate.copy(), np.full(b_.shape, 1.0)
    for _ in range(_STEPS):
        middle = (low + high) / 2.0
        rejected = tango_statistic(b_, c_, m_, middle) < -z
        low, high = np.where(rejected, low, middle), np.where(rejected, middle, high)
    upper = np.where(estimate >= 1.0, 1.0, high)
    return MatchedPairBounds(np.asarray(lower), np.asarray(upper))


def tango_p_value(
    b: npt.ArrayLike, c: npt.ArrayLike, m: npt.ArrayLike, theta: float, side: str
) -> FloatArray:
    """One-sided p-value of Tango's score test: ``side="worse"`` tests H0: Δ ≥ θ,
    ``"better"`` H0: Δ ≤ θ.

    >>> round(float(tango_p_value(4, 9, 40, 0.0, "worse")[0]), 4)   # Φ(−5/√13)
    0.0828
    """
    z = tango_statistic(np.atleast_1d(b), np.atleast_1d(c), np.atleast_1d(m), float(theta))
    return normal_cdf(z if side == "worse" else -z)
