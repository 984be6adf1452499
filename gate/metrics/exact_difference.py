"""An exact floor under the per-stimulus pass: a stimulus whose rate truly drops by D
passes with probability at most α.

The per-stimulus rule (``scope: stimuli``) passes a stimulus when the one-sided lower
bound L of ``p_c − p_b`` (candidate minus baseline; the wider of Newcombe's and
Miettinen & Nurminen's, :func:`gate.metrics.paired.difference_bounds`) rules out a drop
of D. Both bounds are asymptotic. Computed over every table at the worst baseline rate,
a stimulus whose rate truly drops by D = 0.25 passed at α = 0.05 with probability up
to 5.6% (10 trials a side: 10/10 → 10/10 rules out the drop, and a candidate at 0.75
shows 10/10 in 0.75¹⁰ = 5.6% of runs), 5.4% at 20, 5.6% at 30 and 5.3% at 50 and 100.

**The exact unconditional test** (Barnard 1947; with a margin, Chan 1998) calls a table
x significant at level α when its p-value, the largest probability under the null
hypothesis ``p_c − p_b ≤ −D`` of a table at least as extreme, is at most α. Here the
tables are ordered by L itself, so the test keeps the rule's own notion of evidence and
only removes from its passing set what the exact calculation cannot defend: for each
design (n_b, n_c, D, α), the passing tables with the smallest L are dropped, the fewest
that bring the set's largest probability under the null to at most α. The passing set
grows with c_c and shrinks with c_b (L does: checked in the tests over every table of
1–60 trials a side and of a few uneven designs), so that largest probability is reached
on the boundary ``p_c = p_b − D`` (Röhmel & Mansmann 1999), a function of the baseline
rate alone: it is taken over a grid of :data:`GRID` rates, then over finer grids around
the grid's highest local maxima.

The design's lower bounds are then all lowered by one shift s, so that "L − s rules out
a drop of D" passes exactly the tables kept: the bound the report shows and the verdict
agree, and it only widens. Where no table had to go, s = 0. At D = 0.25 and α = 0.05,
s is 0.074 at 5 trials a side, 0.041 at 10, 0.021 at 11, 0.006–0.010 at 20–50 and
0.0015 at 100: 10/10 → 10/10 no longer rules out a drop of 25 points, 11/11 → 11/11
does.

Designs with more than :data:`MOST_TRIALS` trials on a side keep the asymptotic bound:
the exact calculation grows with the product of the trials (0.015 s a design at 60 a
side, 0.05 s at 100), and a verdict or an advice meets a design per pair of trial counts:
1,000 stimuli of 90–100 uneven trials make 121 designs, 6 s at 100. There a true drop of
D passes up to 5.3% (100 a side, D = 0.25) and 5.5–5.8% (100–200 a side, D = 0.1–0.25).
The default gate's shifts (D = 0.25 at 95%, every design up to the cap) are computed in
advance (:mod:`gate.metrics._exact_shift_table`): 20,000 stimuli of 1–60 uneven trials
met all 3,600 designs, 24 s computed.

References:
    G. A. Barnard, "Significance tests for 2 × 2 tables", Biometrika 34:123–138 (1947).
    I. S. F. Chan, "Exact tests of equivalence and efficacy with a non-zero lower bound
    for comparative studies", Statistics in Medicine 17:1403–1413 (1998).
    J. Röhmel & U. Mansmann, "Unconditional non-asymptotic one-sided tests for
    independent binomial proportions when the interest lies in showing non-inferiority
    and/or superiority", Biometrical Journal 41:149–170 (1999).

Pure numbers: numpy and the standard library only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from gate.metrics._special import normal_quantile
from gate.metrics._validation import check_confidence
from gate.metrics.paired import difference_bounds, newcombe_bounds

__all__ = [
    "GRID",
    "MOST_TRIALS",
    "computed_shifts",
    "exact_shifts",
    "pass_probability",
    "passing_tables",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: baseline rates on the boundary at which the passing set's probability is computed first
GRID = 257
#: finer grids around each of the grid's highest local maxima: 21 points across the two
#: steps around it, so that each grid's step is a tenth of the one before (five take the
#: step of 257 rates below 10⁻⁷; the probability is flat to 10⁻¹⁰ around a maximum there)
_ZOOMS, _ZOOM_POINTS = 5, 21
#: local maxima refined
_REFINED = 4
#: the most trials a side with an exact shift (a design has (n_b + 1)(n_c + 1) tables)
MOST_TRIALS = 60
#: lower bounds closer than this are one value (the bounds are found by bisection)
_SAME = 1e-9
#: how far above -D a table's bound must surely be to be screened out of the exact bounds
#: (:func:`_tables_of`): a shift moves the cut that far only below about 8 trials a side,
#: where every bound is exact anyway after the check in :func:`_shift`
_CLEAR = 0.1
#: the rule's own tolerance (``gate.metrics.decision``): a bound passes when above -D by more
_TOLERANCE = 1e-12
#: probabilities (rates × tables) computed at a time: 32 MB
_BLOCK = 1 << 22

#: the default per-stimulus gate, whose shifts are computed in advance (:func:`_looked_up`)
_TABLE_DETECTABLE, _TABLE_CONFIDENCE = 0.25, 0.95
#: shifts already computed, per (n_b, n_c, D, confidence)
_SHIFTS: dict[tuple[int, int, float, float], float] = {}
#: designs kept before the memo starts over
_SHIFTS_MAX = 1 << 16


def exact_shifts(
    n_b: npt.ArrayLike, n_c: npt.ArrayLike, detectable: float, confidence: float = 0.95
) -> FloatArray:
    """The shift (≥ 0) by which the lower bounds of each design (``n_b`` baseline and
    ``n_c`` candidate trials) are lowered, so that ruling out a drop of ``detectable`` on
    the lowered bound passes a stimulus whose rate truly drops by ``detectable`` with
    probability at most ``1 − confidence``, exactly (see the module's docstring).

    At 10 trials a side, 10/10 → 10/10 has L = −0.2217 (it rules out a drop of 25
    points), but a candidate at 0.75 shows 10/10 in 5.6% of runs: that table, and the
    rest up to it, must go.

    >>> from gate.metrics.paired import difference_bounds
    >>> shift = exact_shifts([10, 11], [10, 11], 0.25)
    >>> lower = difference_bounds([10, 11], [10, 11], [10, 11], [10, 11])[0] - shift
    >>> (lower > -0.25).tolist()
    [False, True]
    """
    level = check_confidence(confidence)
    nb = np.asarray(n_b, dtype=np.int64)
    nc = np.asarray(n_c, dtype=np.int64)
    nb, nc = np.broadcast_arrays(nb, nc)
    if nb.size == 0:
        return np.zeros(nb.shape)
    # A design is a small integer (n_b, n_c ≤ MOST_TRIALS): found through a table of them,
    # not a sort of every stimulus-run of an advice (600,000 at a time).
    width = MOST_TRIALS + 1
    flat_b, flat_c = nb.ravel(), nc.ravel()
    exact = (flat_b > 0) & (flat_b <= MOST_TRIALS) & (flat_c > 0) & (flat_c <= MOST_TRIALS)
    keys = np.where(exact, flat_b * width + flat_c, 0)
    present = np.zeros(width * width, dtype=bool)
    present[keys[exact]] = True
    designs = [
        (key // width, key % width, float(detectable), level)
        for key in np.flatnonzero(present).tolist()
    ]
    missing = [design for design in designs if design not in _SHIFTS]
    if len(_SHIFTS) + len(missing) > _SHIFTS_MAX:
        _SHIFTS.clear()
        missing = designs
    _SHIFTS.update(zip(missing, _looked_up(missing) or computed_shifts(missing), strict=True))
    table = np.zeros(width * width)
    table[np.flatnonzero(present)] = [_SHIFTS[design] for design in designs]
    return table[keys].reshape(nb.shape)


def computed_shifts(designs: list[tuple[int, int, float, float]]) -> list[float]:
    """:func:`exact_shifts` of each design (n_b, n_c, D, level; one D and level),
    computed: the tables screened first (:func:`_tables_of`), every bound exact where the
    cut reaches the screened ones."""
    shifts = []
    for design, tables in zip(designs, _tables_of(designs, screened=True), strict=True):
        shift = _shift(*design, tables)
        if shift is None:  # the cut reached the tables screened as clear: all exactly
            shift = _shift(*design, _tables_of([design])[0])
        assert shift is not None, "with every bound exact, a shift is found"
        shifts.append(shift)
    return shifts


def _looked_up(designs: list[tuple[int, int, float, float]]) -> list[float] | None:
    """The designs' shifts from the table computed in advance for the default
    per-stimulus gate (D = 0.25 at 95%: :mod:`gate.metrics._exact_shift_table`, every
    design up to MOST_TRIALS a side, 24 s to compute); None for any other gate. Stimuli of
    uneven trials make a design per pair of counts: 20,000 stimuli of 1–60 trials a side
    met all 3,600 designs, 38 s of a check that took 13 s without the floor."""
    if not designs or designs[0][2:] != (_TABLE_DETECTABLE, _TABLE_CONFIDENCE):
        return None
    from gate.metrics import _exact_shift_table as table

    if (table.DETECTABLE, table.CONFIDENCE, table.MOST_TRIALS) != (
        _TABLE_DETECTABLE, _TABLE_CONFIDENCE, MOST_TRIALS,
    ):  # fmt: skip
        return None
    return [table.SHIFTS[(b - 1) * MOST_TRIALS + (c - 1)] for b, c, _, _ in designs]


def _tables_of(
    designs: list[tuple[int, int, float, float]], screened: bool = False
) -> list[tuple[IntArray, IntArray, FloatArray]]:
    """(c_b, c_c, lower bound) of the tables of each design (one level) that may rule out
    a drop of D, the bounds of all of them found in one call. A lower bound is at most the
    observed difference (both Newcombe's and the score bound are), so a table whose
    difference is -D or below never does.

    ``screened``: a table whose bound is surely above -D + :data:`_CLEAR` gets +inf
    instead of its bound (the score bound, a bisection per table, is most of the cost).
    Newcombe's bound is in closed form, and the score bound is at least
    d̂ − z·sqrt((1/(4n_b) + 1/(4n_c))·N/(N − 1)), p(1 − p) being at most 1/4."""
    if not designs:
        return []
    parts = []
    for nb, nc, detectable, _ in designs:
        c_b, c_c = (
            a.ravel() for a in np.meshgrid(np.arange(nb + 1), np.arange(nc + 1), indexing="ij")
        )
        may = c_c / nc - c_b / nb > -detectable
        parts.append((c_b[may], c_c[may]))
    sizes = [part[0].size for part in parts]
    c_b = np.concatenate([part[0] for part in parts])
    c_c = np.concatenate([part[1] for part in parts])
    n_b = np.repeat([d[0] for d in designs], sizes)
    n_c = np.repeat([d[1] for d in designs], sizes)
    level = designs[0][3]
    lower = np.full(c_b.size, np.inf)
    exact = np.ones(c_b.size, dtype=bool)
    if screened:
        z = normal_quantile(level)
        newcombe, _ = newcombe_bounds(n_b, c_b, n_c, c_c, z)
        total = n_b + n_c
        widest = z * np.sqrt((0.25 / n_b + 0.25 / n_c) * total / (total - 1.0))
        surely = np.minimum(newcombe, c_c / n_c - c_b / n_b - widest)
        margins = np.repeat([d[2] for d in designs], sizes)
        exact = surely <= -margins + _CLEAR
    lower[exact] = difference_bounds(n_b[exact], c_b[exact], n_c[exact], c_c[exact], level)[0]
    ends = np.cumsum(sizes)
    return [
        (c_b[end - size : end], c_c[end - size : end], lower[end - size : end])
        for size, end in zip(sizes, ends.tolist(), strict=True)
    ]


def passing_tables(
    n_b: int, n_c: int, detectable: float, confidence: float = 0.95, shift: float = 0.0
) -> tuple[IntArray, IntArray, FloatArray]:
    """(c_b, c_c, L) of the tables of a design that the rule passes with its lower
    bounds lowered by ``shift``, strongest evidence (highest L) first."""
    ((c_b, c_c, lower),) = _tables_of([(n_b, n_c, detectable, check_confidence(confidence))])
    return _passing(c_b, c_c, lower, detectable, shift)


def _passing(
    c_b: IntArray, c_c: IntArray, lower: FloatArray, detectable: float, shift: float
) -> tuple[IntArray, IntArray, FloatArray]:
    kept = lower - shift > -detectable + _TOLERANCE
    order = np.argsort(-lower[kept], kind="stable")
    return c_b[kept][order], c_c[kept][order], lower[kept][order]


def pass_probability(
    n_b: int, n_c: int, c_b: IntArray, c_c: IntArray, rate_b: npt.ArrayLike, drop: float
) -> FloatArray:
    """The probability of the tables (``c_b``, ``c_c``) when the baseline's rate is each of
    ``rate_b`` and the candidate's is ``drop`` below it (at least 0)."""
    rates = np.atleast_1d(np.asarray(rate_b, dtype=np.float64))
    total: FloatArray = _each_table(n_b, n_c, c_b, c_c, rates, drop).sum(axis=1)
    return total


def _each_table(
    n_b: int, n_c: int, c_b: IntArray, c_c: IntArray, rates: FloatArray, drop: float
) -> FloatArray:
    """Each table's probability at each baseline rate: shape (rates, tables)."""
    return _pmf(n_b, rates)[:, c_b] * _pmf(n_c, np.maximum(rates - drop, 0.0))[:, c_c]


def _shift(
    n_b: int,
    n_c: int,
    detectable: float,
    confidence: float,
    tables: tuple[IntArray, IntArray, FloatArray],
) -> float | None:
    """:func:`exact_shifts` of one design, given its tables and their bounds; None when
    the cut would fall among tables screened as clear (+inf), whose order is unknown."""
    alpha = 1.0 - confidence
    c_b, c_c, lower = _passing(*tables, detectable, 0.0)
    if lower.size == 0:
        return 0.0
    # Tables of one value of L stay or go together: each group's end, in order.
    with np.errstate(invalid="ignore"):  # inf − inf: two screened tables, one group
        steps = -np.diff(lower) > _SAME
    ends = np.append(np.flatnonzero(steps) + 1, lower.size)
    low = min(max(detectable, 0.0), 1.0)
    rates = np.linspace(low, 1.0, GRID)
    most = np.zeros(lower.size)  # the largest probability over the grid of each prefix
    per_block = max(1, _BLOCK // lower.size)
    for start in range(0, GRID, per_block):
        block = rates[start : start + per_block]
        each = _each_table(n_b, n_c, c_b, c_c, block, detectable)
        np.maximum(most, np.cumsum(each, axis=1).max(axis=0), out=most)
    # The largest group end whose prefix stays within α on the grid, then refined: a
    # refined maximum above α drops one more group.
    fits = ends[most[ends - 1] <= alpha + _TOLERANCE]
    kept = int(fits[-1]) if fits.size else 0
    while kept:
        prefix = functools.partial(
            pass_probability, n_b, n_c, c_b[:kept], c_c[:kept], drop=detectable
        )
        size = _largest(prefix, rates)
        if size <= alpha + _TOLERANCE:
            break
        kept = int(ends[ends < kept][-1]) if (ends < kept).any() else 0
    if kept == lower.size:
        return 0.0
    # The tables kept are those with a bound at least the last one's only when every
    # screened table is above it, as they are above -D + _CLEAR.
    unclear = not kept or not lower[kept - 1] <= -detectable + _CLEAR  # inf is not clear
    if unclear and np.isinf(lower).any():
        return None
    # Lowered by the shift, the last table kept stays above -D and the first dropped
    # falls below it, each half the gap between them away.
    first_dropped = float(lower[kept])
    last_kept = float(lower[kept - 1]) if kept else first_dropped + 2.0
    return (first_dropped + last_kept) / 2.0 + detectable


def _largest(probability: Callable[[FloatArray], FloatArray], rates: FloatArray) -> float:
    """The largest value of ``probability`` over ``rates``' range: on the grid, then on
    finer grids between the neighbours of its highest local maxima, :data:`_ZOOMS` times
    (each a tenth as wide as the one before it)."""
    values = probability(rates)
    padded = np.concatenate(([-1.0], values, [-1.0]))
    peaks = np.flatnonzero((values >= padded[:-2]) & (values >= padded[2:]))
    peaks = peaks[np.argsort(-values[peaks], kind="stable")][:_REFINED]
    best = float(values.max())
    step = float(rates[1] - rates[0]) if rates.size > 1 else 0.0
    centres = rates[peaks]
    for _ in range(_ZOOMS):
        if step == 0.0:
            break
        offsets = np.linspace(-step, step, _ZOOM_POINTS)
        finer = np.clip(centres[:, None] + offsets[None, :], rates[0], rates[-1])
        found = probability(finer.ravel()).reshape(finer.shape)
        best = max(best, float(found.max()))
        centres = finer[np.arange(finer.shape[0]), found.argmax(axis=1)]
        step *= 2.0 / (_ZOOM_POINTS - 1)
    return best


def _pmf(n: int, rates: FloatArray) -> FloatArray:
    """Binomial probabilities of 0..n passes at each rate: shape (rates, n + 1)."""
    passes = np.arange(n + 1, dtype=np.float64)
    log_choose = _log_choose(n)
    p = np.asarray(rates, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(passes == 0, 0.0, passes * np.log(p))
        log_q = np.where(passes == n, 0.0, (n - passes) * np.log1p(-p))
    return np.exp(log_choose + log_p + log_q)


@functools.cache
def _log_choose(n: int) -> FloatArray:
    """log C(n, c) for c = 0..n."""
    return np.array(
        [math.lgamma(n + 1) - math.lgamma(c + 1) - math.lgamma(n - c + 1) for c in range(n + 1)]
    )
