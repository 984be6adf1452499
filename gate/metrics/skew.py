"""The paired t test with Hall's (1992) correction for skewness (statistics.md §4).

The t test assumes the mean of the M paired differences is nearly normal. Pass rates near
0 or 1, and runs with unequal trial counts, give skewed differences (most near 0, a few
far out on one side), and at 30–50 stimuli the t bounds then miss on one side in 7–10%
of runs instead of 5%. Hall's transformation of the studentized mean removes the
skewness term of its distribution::

    T(μ) = (Δ̂ − μ) / SE                          the t statistic at a hypothesised Δ = μ
    γ̂   = mean((d − Δ̂)³) / mean((d − Δ̂)²)^(3/2)   the sample skewness
    b    = γ̂ / sqrt(M)
    g(T) = T + b/6 + b T²/3 + b² T³/27 = ((1 + bT/3)³ − 1)/b + b/6

g is increasing, and g(T(μ)) is compared with the t quantiles of M − 1 degrees of freedom
(γ̂ = 0 gives the plain t test). The bounds invert it in closed form::

    g⁻¹(x) = (3/b) (cbrt(1 + b (x − b/6)) − 1)
    lower  = Δ̂ − g⁻¹(t_{1−α}) SE,    upper = Δ̂ − g⁻¹(−t_{1−α}) SE

The sample skewness is itself noisy, so on symmetric but heavy-tailed differences these
bounds alone miss more often than t's; :func:`gate.metrics.paired.paired_test` takes, on
each side, the wider of the two, which misses no more often than the better of them.

References:
    Hall, P. (1992). On the removal of skewness by transformation. JRSS B 54(1), 221–228.
    Zhou, X.-H. and Dinh, P. (2005). Nonparametric confidence intervals for the one- and
    two-sample problems. Biostatistics 6(2), 187–200.

Only numpy and ``_special`` are imported.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._special import stdtr, stdtrit

__all__ = [
    "SkewCorrected",
    "WidenedT",
    "hall_inverse",
    "hall_transform",
    "skew_corrected",
    "skew_corrected_moments",
    "skew_corrected_p",
    "widened_t",
    "widened_t_moments",
    "widened_t_p",
]

FloatArray = npt.NDArray[np.float64]

# Below this |b| the closed form loses digits to cancellation; its first-order series is
# exact to about 1e-16 there.
_SMALL_B = 1e-8


def hall_transform(t: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """Hall's g(T) = T + b/6 + b T²/3 + b² T³/27.

    >>> round(float(hall_transform(1.0, 0.3)), 12)
    1.153333333333
    """
    t_ = np.asarray(t, dtype=np.float64)
    b_ = np.asarray(b, dtype=np.float64)
    return np.asarray(t_ + b_ / 6.0 + b_ * t_**2 / 3.0 + b_**2 * t_**3 / 27.0)


def hall_inverse(x: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """g⁻¹(x) = (3/b)(cbrt(1 + b(x − b/6)) − 1), the T at which g(T) = x.

    >>> round(float(hall_inverse(hall_transform(1.0, 0.3), 0.3)), 12)
    1.0
    """
    x_ = np.asarray(x, dtype=np.float64)
    b_ = np.asarray(b, dtype=np.float64)
    small = np.abs(b_) < _SMALL_B
    safe = np.where(small, 1.0, b_)
    closed = (3.0 / safe) * (np.cbrt(1.0 + safe * (x_ - safe / 6.0)) - 1.0)
    return np.asarray(np.where(small, x_ - b_ * (1.0 / 6.0 + x_**2 / 3.0), closed))


class SkewCorrected(NamedTuple):
    """One-sided bounds and two-sided interval of Δ from Hall's transformed t, per run.

    Attributes:
        lower: One-sided lower ``confidence`` bound.
        upper: One-sided upper ``confidence`` bound.
        interval_lower: Lower end of the two-sided ``confidence`` interval.
        interval_upper: Upper end of the two-sided ``confidence`` interval.
        b: γ̂/sqrt(M), the correction's size (0 for symmetric differences).
    """

    lower: FloatArray
    upper: FloatArray
    interval_lower: FloatArray
    interval_upper: FloatArray
    b: FloatArray


def _moments(d: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each row's mean and central second and third moments (divided by M). They are taken
    of the deviations scaled to at most 1, so that no power of a large or tiny difference
    overflows or underflows, and scaled back where that is safe."""
    mean = d.mean(axis=1)
    centred = d - mean[:, None]
    scale = np.abs(centred).max(axis=1)
    unit = centred / np.where(scale > 0, scale, 1.0)[:, None]
    second = (unit * unit).mean(axis=1)
    third = (unit**3).mean(axis=1)
    return mean, second * scale**2, third * scale**3


def _b(second: FloatArray, third: FloatArray, m: int) -> FloatArray:
    """b = γ̂/sqrt(M), γ̂ = m₃/m₂^(3/2); 0 where there is no spread."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        gamma = np.where(second > 0, third / np.maximum(second, 1e-300) ** 1.5, 0.0)
    return np.asarray(np.nan_to_num(gamma, nan=0.0) / math.sqrt(m), dtype=np.float64)


def skew_corrected_moments(
    mean: npt.ArrayLike,
    second: npt.ArrayLike,
    third: npt.ArrayLike,
    stimuli: int,
    confidence: float,
) -> SkewCorrected:
    """Hall's bounds from each run's mean and central moments m₂, m₃ (sums divided by M)
    of ``stimuli`` = M ≥ 2 differences: for simulations that draw the moments directly.

    >>> r = skew_corrected_moments([-0.2], [0.16], [-0.096], 5, 0.95)
    >>> round(float(r.lower[0]), 4), round(float(r.upper[0]), 4)
    (-1.8067, 0.0956)
    """
    return _hall(_TScale.of(mean, second, stimuli, confidence), second, third, stimuli)


class _TScale(NamedTuple):
    """What plain t and Hall's bounds share: each run's mean and standard error, and the
    one- and two-sided t quantiles (M − 1 degrees of freedom)."""

    mean: FloatArray
    se: FloatArray
    one: float
    two: float

    @classmethod
    def of(
        cls, mean: npt.ArrayLike, second: npt.ArrayLike, stimuli: int, confidence: float
    ) -> _TScale:
        second_ = np.maximum(np.asarray(second, dtype=np.float64), 0.0)
        alpha = 1.0 - confidence
        return cls(
            np.asarray(mean, dtype=np.float64),
            np.sqrt(second_ / (stimuli - 1)),
            float(stdtrit(stimuli - 1, 1.0 - alpha)),
            float(stdtrit(stimuli - 1, 1.0 - alpha / 2.0)),
        )


def _hall(
    scale: _TScale, second: npt.ArrayLike, third: npt.ArrayLike, stimuli: int
) -> SkewCorrected:
    """Hall's bounds on ``scale``: the t quantiles mapped through the inverse transform."""
    second_ = np.maximum(np.asarray(second, dtype=np.float64), 0.0)
    b = _b(second_, np.asarray(third, dtype=np.float64), stimuli)
    mean, se = scale.mean, scale.se
    return SkewCorrected(
        lower=mean - hall_inverse(scale.one, b) * se,
        upper=mean - hall_inverse(-scale.one, b) * se,
        interval_lower=mean - hall_inverse(scale.two, b) * se,
        interval_upper=mean - hall_inverse(-scale.two, b) * se,
        b=b,
    )


def skew_corrected(d: npt.ArrayLike, confidence: float) -> SkewCorrected:
    """Hall's skewness-corrected t bounds of each row's mean (``d`` shape (R, M), M ≥ 2).

    >>> r = skew_corrected([[0.0, 0.0, 0.0, 0.0, -1.0]], 0.95)
    >>> round(float(r.lower[0]), 4), round(float(r.upper[0]), 4)
    (-1.8067, 0.0956)
    """
    rows = np.atleast_2d(np.asarray(d, dtype=np.float64))
    mean, second, third = _moments(rows)
    return skew_corrected_moments(mean, second, third, rows.shape[1], confidence)


def skew_corrected_p(d: npt.ArrayLike, mu: float, side: str) -> float:
    """One-sided p-value of H0: Δ ≥ μ (``side="worse"``) or Δ ≤ μ (``"better"``), for
    differences ``d`` (M ≥ 2, not all equal).

    ``upper < μ`` exactly when the "worse" p-value is ≤ α (and ``lower > μ`` for
    "better"): the bounds are this test inverted.

    >>> round(skew_corrected_p([0.0, 0.0, 0.0, 0.0, -1.0], 0.09557365140156143, "worse"), 6)
    0.05
    """
    rows = np.atleast_2d(np.asarray(d, dtype=np.float64))
    m = rows.shape[1]
    mean, second, third = _moments(rows)
    se = np.sqrt(second / (m - 1))
    with np.errstate(divide="ignore", invalid="ignore"):  # zero spread: T is ±inf
        g = hall_transform((mean - mu) / se, _b(second, third, m))
    df = m - 1
    return float(stdtr(df, g[0] if side == "worse" else -g[0]))


class WidenedT(NamedTuple):
    """The paired t test's bounds per run: each the wider of plain t's and Hall's.

    Attributes:
        lower, upper: One-sided ``confidence`` bounds.
        interval_lower, interval_upper: The two-sided ``confidence`` interval.
        plain_lower, plain_upper: Plain t's one-sided bounds (to tell which side Hall's
            correction widened).
    """

    lower: FloatArray
    upper: FloatArray
    interval_lower: FloatArray
    interval_upper: FloatArray
    plain_lower: FloatArray
    plain_upper: FloatArray


def widened_t_moments(
    mean: npt.ArrayLike,
    second: npt.ArrayLike,
    third: npt.ArrayLike,
    stimuli: int,
    confidence: float,
) -> WidenedT:
    """:class:`WidenedT` from each run's mean and central moments m₂, m₃ (sums divided by
    M) of ``stimuli`` = M ≥ 2 differences: the verdict's t test, and the simulations that
    draw the moments directly, decide by this one rule."""
    scale = _TScale.of(mean, second, stimuli, confidence)
    hall = _hall(scale, second, third, stimuli)
    centre, se = scale.mean, scale.se
    plain_lower, plain_upper = centre - scale.one * se, centre + scale.one * se
    return WidenedT(
        lower=np.minimum(plain_lower, hall.lower),
        upper=np.maximum(plain_upper, hall.upper),
        interval_lower=np.minimum(centre - scale.two * se, hall.interval_lower),
        interval_upper=np.maximum(centre + scale.two * se, hall.interval_upper),
        plain_lower=plain_lower,
        plain_upper=plain_upper,
    )


def widened_t(d: npt.ArrayLike, confidence: float) -> WidenedT:
    """:class:`WidenedT` of each row of ``d`` (shape (R, M), M ≥ 2, spread > 0).

    >>> r = widened_t([[0.0, 0.0, 0.0, 0.0, -1.0]], 0.95)
    >>> round(float(r.lower[0]), 4), round(float(r.upper[0]), 4)
    (-1.8067, 0.2264)
    """
    rows = np.atleast_2d(np.asarray(d, dtype=np.float64))
    return widened_t_moments(*_moments(rows), rows.shape[1], confidence)


def widened_t_p(d: npt.ArrayLike, mu: float, side: str) -> float:
    """The larger of plain t's and Hall's one-sided p-values of H0: Δ ≥ μ (``"worse"``)
    or Δ ≤ μ (``"better"``): ≤ α exactly when :func:`widened_t`'s bound on that side
    excludes μ."""
    rows = np.atleast_2d(np.asarray(d, dtype=np.float64))
    m = rows.shape[1]
    mean, second, _ = _moments(rows)
    t = float((mean[0] - mu) / np.sqrt(second[0] / (m - 1)))
    plain = float(stdtr(m - 1, t if side == "worse" else -t))
    return max(plain, skew_corrected_p(rows, mu, side))
