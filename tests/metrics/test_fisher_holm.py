"""Holm on Fisher's exact test without a Python call per table (fisher_holm_rejects) gives the
answer of the exact test itself: element-wise on every small table and on large random ones,
at Holm levels placed exactly on attained p-values, and through the per-stimulus rule.

The references are computed independently of the fast path: ``fisher_worse`` (exact integer
sums up to 2,000 trials) table by table, ``holm`` (the sorted, accumulated adjusted p-values,
not ``holm_rejects``), and Newcombe's bounds on float counts.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from gate.metrics import paired
from gate.metrics.decision import FAIL, INCONCLUSIVE, PASS, PairedRule, _combine
from gate.metrics.exact_difference import exact_shifts
from gate.metrics.paired import (
    alpha_of,
    difference_bounds,
    fisher_holm_rejects,
    fisher_worse,
    fisher_worse_float,
    fisher_worse_lower,
    holm,
)

IntArray = np.ndarray


def exact(*counts: IntArray) -> np.ndarray:
    return np.asarray(np.vectorize(fisher_worse, otypes=[np.float64])(*counts))


@functools.lru_cache(maxsize=1)
def small_tables() -> tuple[np.ndarray, np.ndarray]:
    """Every table with 1-30 trials a side (245,025), and its exact p-value."""
    sides = np.arange(1, 31)
    na, nb = (x.ravel() for x in np.meshgrid(sides, sides, indexing="ij"))
    tables = np.array(
        [
            (a, ca, b, cb)
            for a, b in zip(na.tolist(), nb.tolist(), strict=True)
            for ca in range(a + 1)
            for cb in range(b + 1)
        ]
    ).T
    return tables, exact(*tables)


@functools.lru_cache(maxsize=1)
def large_tables() -> tuple[np.ndarray, np.ndarray]:
    """4,000 random tables of 1-3,000 trials a side (rates drawn apart, and 1,000 pairs
    at nearly equal rates, where the p-values sit anywhere in (0, 1)), and p-values."""
    rng = np.random.default_rng(11)
    n = rng.integers(1, 3_001, size=(2, 4_000))
    rate = rng.uniform(0, 1, size=(2, 4_000))
    rate[1, :1_000] = np.clip(rate[0, :1_000] - rng.uniform(0, 0.05, 1_000), 0, 1)
    c = rng.binomial(n, rate)
    tables = np.array([n[0], c[0], n[1], c[1]])
    return tables, exact(*tables)


def test_float_p_value_is_within_1e_10_of_the_exact_one() -> None:
    """fisher_worse_float against the exact integer sums, where those are exact (N ≤ 2,000):
    relative error far inside the 10⁻⁸ fisher_holm_rejects allows around it."""
    for tables, p in (small_tables(), large_tables()):
        within = tables[0] + tables[2] <= 2_000
        mine = fisher_worse_float(*tables[:, within])
        finite = np.isfinite(mine)
        assert finite.mean() > 0.99
        # NaN only where the sum overflowed, i.e. c_a far below the mode: p near 1.
        assert np.all(p[within][~finite] > 0.5)
        error = np.abs(mine[finite] - p[within][finite]) / np.maximum(p[within][finite], 1e-300)
        assert error.max() < 1e-10
    assert small_tables()[0].shape[1] == 245_025


def test_float_p_value_past_2000_trials_is_the_exact_tests() -> None:
    """Past 2,000 trials fisher_worse_float gives fisher_worse's value (its log sum over the
    terms near the mode), up to tables of 10⁹ trials a side, where the float recurrence
    stepped through millions of terms (17 s and a relative error of 4e-8 at 10⁷)."""
    n = np.array([1_001, 5_000, 10**7, 10**9, 10**9, 10**9])
    c_a = np.array([500, 2_500, 5 * 10**6, 5 * 10**8, 5 * 10**8, 10**8])
    c_b = np.array([470, 2_400, 5 * 10**6, 5 * 10**8 - 30_000, 5 * 10**8 + 30_000, 9 * 10**8])
    mine = fisher_worse_float(n, c_a, n, c_b)
    assert mine.tolist() == [fisher_worse(*t) for t in zip(n, c_a, n, c_b, strict=True)]
    assert 0.08 < mine[3] < 0.1 and 0.9 < mine[4] < 0.92 and mine[5] == 1.0


def test_lower_bound_is_below_the_exact_p_value_and_close_where_it_matters() -> None:
    """fisher_worse_lower ≤ fisher_worse on every table (past 2,000 trials the exact test's
    own log sums); it is within a factor 10 of p for most tables with p < 0.01 (the point
    probability dominates the tail there), so the screen keeps few of them."""
    for tables, p in (small_tables(), large_tables()):
        bound = fisher_worse_lower(*tables)
        assert np.all(bound <= p)
        small = p < 0.01
        assert np.mean(bound[small] > p[small] / 10) > 0.9


def families(tables: np.ndarray, p: np.ndarray, m: int, seed: int) -> tuple[np.ndarray, ...]:
    """The tables shuffled into families of m (rows), with their exact p-values."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(p.size)[: p.size - p.size % m]
    return (*(x[order].reshape(-1, m) for x in tables), p[order].reshape(-1, m))


@pytest.mark.parametrize("m", [1, 7, 60, 3_000])
def test_holm_on_fisher_equals_holm_of_exact_p_values_on_every_small_table(m: int) -> None:
    tables, p = small_tables()
    na, ca, nb, cb, pp = families(tables, p, m, seed=m)
    for alpha in (0.01, 0.05, 0.5):
        expected = holm(pp) <= alpha
        assert np.array_equal(fisher_holm_rejects(na, ca, nb, cb, alpha), expected)
        assert expected.any() and not expected.all()


@pytest.mark.parametrize("m", [1, 40, 500])
def test_holm_on_fisher_equals_holm_of_exact_p_values_on_large_tables(m: int) -> None:
    tables, p = large_tables()
    na, ca, nb, cb, pp = families(tables, p, m, seed=m)
    for alpha in (0.05, 0.2):
        expected = holm(pp) <= alpha
        assert np.array_equal(fisher_holm_rejects(na, ca, nb, cb, alpha), expected)
        assert expected.any()


def test_a_holm_level_on_an_attained_p_value_is_decided_on_the_exact_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """α set to p itself (one table, p ≤ α holds with equality) or to (m − r) p_(r) of a
    family: the float p-value may fall on either side, so the exact one decides, and the
    answer is the exact test's."""
    calls: list[int] = []
    each = paired._fisher_each

    def counting(*counts: np.ndarray) -> np.ndarray:
        calls.append(counts[0].size)
        return each(*counts)

    monkeypatch.setattr(paired, "_fisher_each", counting)
    tables, p = small_tables()
    na, ca, nb, cb, pp = families(tables, p, 60, seed=5)
    rng = np.random.default_rng(6)
    for row in rng.choice(pp.shape[0], 8, replace=False).tolist():
        ordered = np.sort(pp[row])
        for rank in (0, 1, 2):
            alpha = float((60 - rank) * ordered[rank])
            if not 0 < alpha < 1:
                continue
            calls.clear()
            got = fisher_holm_rejects(na, ca, nb, cb, alpha)
            assert np.array_equal(got, holm(pp) <= alpha)
            assert calls, "the exact test decided where the float one was in doubt"
    some = rng.choice(p.size, 20_000, replace=False)
    tables, p = tables[:, some], p[some]
    for index in np.flatnonzero((p > 1e-6) & (p < 0.2))[:20].tolist():
        alpha = float(p[index])
        calls.clear()
        na, ca, nb, cb = tables[:, :, None]
        got = fisher_holm_rejects(na, ca, nb, cb, alpha)[:, 0]
        assert np.array_equal(got, p <= alpha)
        assert got[index] and calls


def test_difference_bounds_on_integer_counts_equal_those_on_floats() -> None:
    """The per-(n, c) grid that integer counts use gives the very same floats."""
    rng = np.random.default_rng(2)
    n_a, n_b = rng.integers(1, 80, size=(2, 50_000))
    c_a, c_b = rng.binomial(n_a, 0.7), rng.binomial(n_b, 0.6)
    for confidence in (0.9, 0.95):
        grid = difference_bounds(n_a, c_a, n_b, c_b, confidence)
        floats = difference_bounds(
            n_a.astype(float), c_a.astype(float), n_b.astype(float), c_b.astype(float), confidence
        )
        assert all(np.array_equal(g, f) for g, f in zip(grid, floats, strict=True))


def test_per_stimulus_rule_equals_the_exact_reference_on_a_ragged_batch() -> None:
    """evaluate_stimuli on 200 runs of 500 paired stimuli, each with its own 5-200 trials a
    side, some stimuli a little and some much worse (Holm rejects at many ranks): codes,
    outcome, worst stimulus and its bounds equal those of the exact test table by table."""
    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.2, 0.95, "stimuli")
    rng = np.random.default_rng(21)
    stimuli, runs = 500, 200
    n_b, n_c = rng.integers(5, 201, size=(2, stimuli))
    rate = rng.uniform(0.4, 0.95, size=stimuli)
    drop = rng.choice([0.0, 0.0, 0.05, 0.15, 0.35], size=stimuli)
    c_b = rng.binomial(n_b, rate, size=(runs, stimuli))
    c_c = rng.binomial(n_c, np.clip(rate - drop, 0, 1), size=(runs, stimuli))
    nb, nc = np.broadcast_to(n_b, c_b.shape), np.broadcast_to(n_c, c_c.shape)
    result = rule.evaluate_stimuli(nb, c_b, nc, c_c)
    p = exact(nb, c_b, nc, c_c)
    worse = holm(p) <= alpha_of(0.95) + 1e-12
    lower, upper = difference_bounds(
        nb.astype(float), c_b.astype(float), nc.astype(float), c_c.astype(float), 0.95
    )
    # held to the exact unconditional test (tests/compare/test_exact_difference.py)
    lower = np.maximum(lower - exact_shifts(nb, nc, 0.2, 0.95), -1.0)
    codes = np.where(worse, FAIL, np.where(lower > -0.2 + 1e-12, PASS, INCONCLUSIVE))
    assert result.stimuli is not None and np.array_equal(result.stimuli, codes)
    assert np.array_equal(result.outcome, _combine(codes.astype(np.int8)))
    worst = np.argmin(lower, axis=1)
    assert result.worst is not None and np.array_equal(result.worst, worst)
    assert np.array_equal(result.lower, lower[np.arange(runs), worst])
    assert np.array_equal(result.upper, upper[np.arange(runs), worst])
    rejected = worse.sum(axis=1)
    assert rejected.min() >= 1 and rejected.max() > 20 and (~worse & (p <= 0.05)).any()


def test_the_smallest_fisher_p_value_of_large_tables_is_the_exact_one() -> None:
    """fisher_min is 1 / C(n_a + n_b, n_a), rounded once, down to a subnormal and to 0.0:
    999 + 999 trials (C ≈ 10^600, past the float range) raised OverflowError and ended a
    per-stimulus regression check of 10,000 stimuli with an internal error. The all-or-
    nothing table reaches it (fisher_worse); past the exact range, the log form."""
    from fractions import Fraction
    from math import comb, exp, lgamma

    for n_a, n_b in ((3, 3), (40, 7), (520, 520), (530, 531), (999, 999), (1_000, 1_000)):
        expected = float(Fraction(1, comb(n_a + n_b, n_a)))
        assert paired.fisher_min(n_a, n_b) == expected, (n_a, n_b)
    assert paired.fisher_min(999, 999) == 0.0 and 0.0 < paired.fisher_min(520, 520) < 1e-300
    assert paired.fisher_min(40, 7) == fisher_worse(40, 40, 7, 0)
    beyond = exp(-(lgamma(3_002) - lgamma(1_501) - lgamma(1_502)))
    assert paired.fisher_min(1_500, 1_501) == beyond


def test_a_reports_p_values_are_exact_or_within_1e10_of_it() -> None:
    """fisher_worse_each, what a comparison shows: exactly fisher_worse up to 200 trials in
    all and past 2,000 (both its own sums), within 10⁻¹⁰ relative in between (the float
    form; a check of 10,000 stimuli of ~1,000 trials a side took a minute in integer sums)."""
    rng = np.random.default_rng(41)
    seen = np.zeros(3, dtype=int)
    for low, high in ((1, 100), (101, 1_000), (1_001, 1_500)):
        n_a, n_b = rng.integers(low, high + 1, size=(2, 300))
        c_a, c_b = rng.binomial(n_a, 0.7), rng.binomial(n_b, rng.uniform(0.5, 0.8, size=300))
        got = paired.fisher_worse_each(n_a, c_a, n_b, c_b)
        expected = exact(n_a, c_a, n_b, c_b)
        small = n_a + n_b <= 200
        large = n_a + n_b > 2_000
        assert np.array_equal(got[small | large], expected[small | large])
        middle = ~(small | large)
        assert np.allclose(got[middle], expected[middle], rtol=1e-10, atol=0.0)
        seen += [small.sum(), middle.sum(), large.sum()]
    assert np.all(seen > 100)


def test_tables_computed_once_per_distinct_table_give_the_same_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch at equal trial counts (a plan's, an advice's) repeats a few thousand tables
    among millions: the distinct tables and each table's index rebuild every table; the
    Newcombe bounds and Holm on Fisher give exactly what they give table by table; no
    reduction for few tables, keys past the lookup size, or tables that hardly repeat."""
    rng = np.random.default_rng(12)
    shape = (300, 100)
    n_a, n_b = np.full(shape, 40), np.full(shape, 383)
    c_a = rng.binomial(40, rng.uniform(0.5, 1.0, size=shape))
    c_b = rng.binomial(383, rng.uniform(0.5, 1.0, size=shape))
    found = paired._distinct_tables(n_a, c_a, n_b, c_b)
    assert found is not None
    (dn_a, dc_a, dn_b, dc_b), index = found
    assert dc_a.size < c_a.size // 4
    for distinct, every in ((dn_a, n_a), (dc_a, c_a), (dn_b, n_b), (dc_b, c_b)):
        assert np.array_equal(distinct[index].reshape(shape), every)
    reduced_bounds = difference_bounds(n_a, c_a, n_b, c_b, 0.95)
    reduced_holm = fisher_holm_rejects(n_a, c_a, n_b, c_b, 0.05)
    monkeypatch.setattr(paired, "_DISTINCT_FROM", 10**12)  # every table on its own
    each_bounds = difference_bounds(n_a, c_a, n_b, c_b, 0.95)
    for got, expected in zip(reduced_bounds, each_bounds, strict=True):
        assert np.array_equal(got, expected)
    assert np.array_equal(reduced_holm, fisher_holm_rejects(n_a, c_a, n_b, c_b, 0.05))
    assert reduced_holm.any() and not reduced_holm.all()
    monkeypatch.undo()
    assert paired._distinct_tables(n_a[:1, :10], c_a[:1, :10], n_b[:1, :10], c_b[:1, :10]) is None
    uneven = rng.integers(1, 3_000, size=shape)
    assert paired._distinct_tables(uneven, uneven // 2, uneven, uneven // 3) is None
    spread = np.arange(c_a.size).reshape(shape) % 20_000
    assert paired._distinct_tables(n_a * 0 + 20_000, spread, n_a, c_a * 0) is None


def _fisher_every_term(n_a: int, c_a: int, n_b: int, c_b: int) -> float:
    """Fisher's one-sided p past the exact range, summed in logs over every term."""
    from gate.metrics._kernels import log_comb

    total, passes = n_a + n_b, c_a + c_b
    x = np.arange(c_a, min(passes, n_a) + 1, dtype=np.float64)
    terms = log_comb(passes, x) + log_comb(total - passes, n_a - x) - log_comb(total, n_a)
    peak = float(np.max(terms))
    return min(1.0, float(np.exp(peak) * np.sum(np.exp(terms - peak))))


def test_huge_tables_sum_only_the_terms_that_matter() -> None:
    """Past 2,000 trials fisher_worse sums the terms within 40 standard deviations of the
    mode (or of c_a): within 1e-15 of the sum of every term on 500 random tables of 1,000 to
    200,000 trials a side, and a table of 10^9 trials a side (whose every-term sum took
    19 GB) gives 0 and 1 at once; Holm on such tables is Holm on these values (the float
    recurrence, which would step through 10^8 terms, is left to the small tables)."""
    rng = np.random.default_rng(3)
    for _ in range(500):
        n_a, n_b = (int(v) for v in rng.integers(1_001, 200_000, size=2))
        p = float(rng.uniform(0.01, 0.99))
        c_a = int(rng.binomial(n_a, p))
        c_b = int(rng.binomial(n_b, min(1.0, max(0.0, p + float(rng.normal(0, 0.01))))))
        expected = _fisher_every_term(n_a, c_a, n_b, c_b)
        assert fisher_worse(n_a, c_a, n_b, c_b) == pytest.approx(expected, rel=1e-15, abs=0)
    big = 10**9
    assert fisher_worse(big, big // 2, big, 4 * big // 10) == 0.0
    assert fisher_worse(big, 4 * big // 10, big, big // 2) == 1.0
    n = np.array([[big, 10**7, 10**7, 40]])
    c_a, c_b = n // 2, np.array([[4 * big // 10, 10**7 // 2 - 3_000, 10**7 // 2, 10]])
    expected = holm(exact(n, c_a, n, c_b)[0]) <= 0.05
    assert expected.any() and not expected.all()
    assert fisher_holm_rejects(n, c_a, n, c_b, 0.05)[0].tolist() == expected.tolist()
