"""Reliability reporting (reference 004): run planning and a per-test decay summary.

Pure arithmetic, deterministic, no I/O. The headline metrics stay pass@k and
pass^k; these explain them. Integer percents are computed in exact integer
arithmetic so a boundary (e.g. exactly 50%) never flips with float rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._validation import (
    IntArray,
    check_confidence,
    check_counts,
    check_float,
    check_int,
    check_outcomes,
    check_runs,
)
from gate.metrics.intervals import z_value

Outcomes = Sequence[bool] | Sequence[int]
"""Ordered pass/fail outcomes of the runs of one test (bools or 0/1)."""

__all__ = [
    "RELIABILITY_TARGETS",
    "ReliabilitySummary",
    "UnknownTargetError",
    "confidence_band",
    "graceful_degradation",
    "recommend_runs",
    "reliability_decay_curve",
    "summarize",
    "variance_amplification",
    "variance_amplification_counts",
]


def recommend_runs(half_width: float, confidence: float = 0.95) -> int:
    """Runs N so the worst-case (p = 0.5) Wald half-width is at most ``half_width``.

    ``N = ceil((z / half_width)² · 0.25)``, z the two-sided normal quantile.
    Planning only: the Wald interval is not used to decide a gate.

    >>> recommend_runs(0.05), recommend_runs(0.1), recommend_runs(0.2)
    (385, 97, 25)
    """
    h = check_float(half_width, "half_width", low=0.0, high=1.0, low_open=True)
    z = z_value(check_confidence(confidence))
    return math.ceil((z / h) ** 2 * 0.25)


def confidence_band(n: int, confidence: float = 0.95) -> float:
    """Worst-case Wald half-width that ``n`` runs buy: ``z · sqrt(0.25 / n)``.

    >>> round(confidence_band(100), 3)
    0.098
    """
    runs = check_int(n, "n", minimum=1)
    return z_value(check_confidence(confidence)) * math.sqrt(0.25 / runs)


def _as_bits(outcomes: Any) -> list[int]:
    return [int(x) for x in check_outcomes(outcomes)]


def reliability_decay_curve(outcomes: Outcomes) -> list[int]:
    """Cumulative plug-in pass^k over the first k runs, k = 1..N, as floored integer percents.

    ``entry_k = floor((c_k / k)^k · 100)``, c_k = passes among the first k runs.
    The reference's example floors (0.316 → 31).

    >>> reliability_decay_curve([True, True, True, False])
    [100, 100, 100, 31]
    """
    bits = _as_bits(outcomes)
    curve: list[int] = []
    passes = 0
    for k, bit in enumerate(bits, start=1):
        passes += bit
        curve.append(_decay_entry(passes, k))
    return curve


def _decay_entry(passes: int, k: int) -> int:
    """``floor(100 · passes^k / k^k)``, exactly, without big integers where floats decide it.

    The float ``100 · (passes/k)^k`` is within a relative 1e-12 of the truth; only when it
    lies that close to an integer (where flooring could go either way) are exact integers
    needed. A suite of 10,000 stimuli × 100 trials thus costs milliseconds, not seconds.
    """
    if passes == k:
        return 100
    if passes == 0:
        return 0
    estimate = 100.0 * math.exp(k * math.log(passes / k))
    nearest = round(estimate)
    if abs(estimate - nearest) > 1e-9 * max(1.0, estimate):
        return math.floor(estimate)
    exact: int = 100 * passes**k // k**k
    return exact


def _round_half_up(numerator: int, denominator: int) -> int:
    """``round(numerator/denominator)`` with halves rounded up, in integers."""
    return (2 * numerator + denominator) // (2 * denominator)


def variance_amplification(outcomes: Outcomes) -> int:
    """Population sd of the 0/1 run outcomes over its maximum 0.5, as an integer percent.

    ``round(sd / 0.5 · 100) = round(200 · sqrt(c(n-c)) / n)``: 0 when stable, 100 at half/half.

    >>> variance_amplification([True, False, True, False]), variance_amplification([True] * 4)
    (100, 0)
    """
    bits = _as_bits(outcomes)
    return _variance_amplification(len(bits), sum(bits))


def _variance_amplification(n: int, c: int) -> int:
    """``round(200 · sqrt(c(n-c)) / n)`` (halves up) in exact integers."""
    # round-half-up(s/n) = floor((2s + n)/(2n)) = (floor(2s) + n) // (2n) for s = sqrt(X),
    # and floor(2s) = isqrt(4X): exact integers, no float rounding at the boundary.
    radicand = 40000 * c * (n - c)
    return (math.isqrt(4 * radicand) + n) // (2 * n)


def variance_amplification_counts(n: Any, c: Any) -> IntArray:
    """:func:`variance_amplification` per stimulus from counts: it needs no trial order.

    The population sd of n outcomes with c passes is ``sqrt(c(n-c))/n`` whatever
    their order, so a counts file (n, c per stimulus, ragged n allowed) has it too.
    Exact integers, as :func:`variance_amplification` of any ordering of those outcomes.

    >>> variance_amplification_counts([4, 4, 5], [2, 4, 4])
    array([100,   0,  80])
    """
    n_arr, c_arr = check_counts(n, c)
    pairs = {(int(a), int(b)) for a, b in zip(n_arr.ravel(), c_arr.ravel(), strict=True)}
    value = {pair: _variance_amplification(*pair) for pair in pairs}
    flat = [value[(int(a), int(b))] for a, b in zip(n_arr.ravel(), c_arr.ravel(), strict=True)]
    return np.array(flat, dtype=np.int64).reshape(n_arr.shape)


def graceful_degradation(outcomes: Outcomes) -> int:
    """Position-weighted pass share: ``round(100 · sum(i · pass_i) / sum(i))``, i = 1..N.

    A late failure costs more than an early one; all-pass scores 100, all-fail 0.

    >>> graceful_degradation([False, True, True, True])
    90
    >>> graceful_degradation([True, True, True, False])
    60
    """
    bits = _as_bits(outcomes)
    weighted = sum(position * bit for position, bit in enumerate(bits, start=1))
    total = len(bits) * (len(bits) + 1) // 2
    return _round_half_up(100 * weighted, total)


class ReliabilityRow(NamedTuple):
    """One stimulus's reference-004 summary, as :func:`reliability_rows` computes it."""

    decay_curve: list[int]
    variance_amplification: int
    graceful_degradation: int


def reliability_rows(outcomes: Sequence[npt.ArrayLike]) -> list[ReliabilityRow]:
    """:func:`reliability_decay_curve`, :func:`variance_amplification` and
    :func:`graceful_degradation` of many stimuli at once (the report's every stimulus),
    with numpy over all their runs together: the same exact integers, in a fraction of
    the time of one Python loop per run.

    >>> row = reliability_rows([[True, True, True, False]])[0]
    >>> row.decay_curve, row.variance_amplification, row.graceful_degradation
    ([100, 100, 100, 31], 87, 60)
    """
    bits = [np.asarray(x, dtype=bool).ravel() for x in outcomes]
    sizes = np.array([b.size for b in bits], dtype=np.int64)
    if sizes.size and np.any(sizes == 0):
        check_outcomes(bits[int(np.argmin(sizes))])  # raises: at least one run is needed
    return reliability_rows_flat(np.concatenate(bits) if bits else np.zeros(0, dtype=bool), sizes)


def reliability_rows_flat(passed: npt.ArrayLike, sizes: npt.ArrayLike) -> list[ReliabilityRow]:
    """:func:`reliability_rows` of runs given end to end: ``passed`` holds the outcomes of
    every run, the first ``sizes[0]`` of them the first run's, and so on (each size ≥ 1).

    >>> [row.graceful_degradation for row in reliability_rows_flat([1, 0, 0, 1], [1, 3])]
    [100, 50]
    """
    outcomes, sizes = check_runs(passed, sizes)
    if sizes.size == 0:
        return []
    flat = outcomes.astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # k = 1..n and c_k (passes among the first k runs) for every run of every stimulus
    k = np.arange(flat.size) - np.repeat(starts, sizes) + 1
    totals = np.cumsum(flat)
    c = totals - np.repeat(np.concatenate([[0], totals[starts[1:] - 1]]), sizes)
    with np.errstate(divide="ignore"):
        estimate = 100.0 * np.exp(k * np.log(c / k))
    curve = np.floor(estimate).astype(np.int64)
    curve[c == k] = 100
    curve[c == 0] = 0
    # Where the float lies within rounding of an integer, exact integers decide the floor.
    # Below 0.5 the floor is 0 (the true value is positive and far from 1): most long runs
    # with a failure land there, and exact powers of them would cost a big-integer each.
    near = (np.abs(estimate - np.round(estimate)) <= 1e-9 * np.maximum(1.0, estimate)) & (
        (c != k) & (c != 0) & (estimate >= 0.5)
    )
    for i in np.flatnonzero(near).tolist():
        curve[i] = 100 * int(c[i]) ** int(k[i]) // int(k[i]) ** int(k[i])
    passes = np.add.reduceat(flat, starts).tolist()
    weighted = np.add.reduceat(flat * k, starts).tolist()
    size_list = sizes.tolist()
    ends = np.cumsum(sizes).tolist()
    curve_list = curve.tolist()
    # Few distinct (runs, passes) pairs among many stimuli: each amplification computed once.
    amplification = {
        pair: _variance_amplification(*pair) for pair in set(zip(size_list, passes, strict=True))
    }
    return [
        ReliabilityRow(
            curve_list[end - size : end],
            amplification[size, passed_],
            _round_half_up(100 * weight, size * (size + 1) // 2),
        )
        for size, end, passed_, weight in zip(size_list, ends, passes, weighted, strict=True)
    ]


RELIABILITY_TARGETS: tuple[str, ...] = (
    "reliability.runs",
    "reliability.passes",
    "reliability.pass_rate",
    "reliability.decay_curve",
    "reliability.variance_amplification",
    "reliability.graceful_degradation",
    "reliability.confidence_band",
)


class UnknownTargetError(KeyError, ValueError):
    """A dot-path target that the summary does not expose (catchable as KeyError or ValueError)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class ReliabilitySummary:
    """Reliability-decay summary of one multi-run test (reference 004).

    Assertable targets (dot paths): ``reliability.runs``, ``reliability.passes``,
    ``reliability.pass_rate``, ``reliability.decay_curve``,
    ``reliability.variance_amplification``, ``reliability.graceful_degradation``,
    ``reliability.confidence_band`` (worst-case 95% half-width at this run count).
    """

    runs: int
    passes: int
    pass_rate: float
    decay_curve: tuple[int, ...]
    variance_amplification: int
    graceful_degradation: int
    confidence_band: float

    def metrics_object(self) -> dict[str, dict[str, Any]]:
        """``{"reliability": {...}}`` with JSON-ready values (lists, not tuples)."""
        fields = asdict(self)
        fields["decay_curve"] = list(self.decay_curve)
        return {"reliability": fields}

    def resolve_target(self, path: str) -> Any:
        """Value at a dot path such as ``"reliability.graceful_degradation"``.

        >>> summarize([True, True, True, False]).resolve_target("reliability.graceful_degradation")
        60
        """
        if path not in RELIABILITY_TARGETS:
            raise UnknownTargetError(
                f"unknown reliability target {path!r}; valid targets: "
                + ", ".join(RELIABILITY_TARGETS)
            )
        node: Any = self.metrics_object()
        for part in path.split("."):
            node = node[part]
        return node


def summarize(outcomes: Outcomes) -> ReliabilitySummary:
    """All reliability statistics of one test's ordered pass/fail run outcomes.

    >>> s = summarize([True, True, True, False])
    >>> s.decay_curve, s.variance_amplification, s.graceful_degradation
    ((100, 100, 100, 31), 87, 60)
    """
    bits = _as_bits(outcomes)
    runs = len(bits)
    passes = sum(bits)
    return ReliabilitySummary(
        runs=runs,
        passes=passes,
        pass_rate=passes / runs,
        decay_curve=tuple(reliability_decay_curve(bits)),
        variance_amplification=variance_amplification(bits),
        graceful_degradation=graceful_degradation(bits),
        confidence_band=confidence_band(runs),
    )
