"""Per-stimulus interval rules on batches of simulated runs, and the advice built on them."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from scipy import stats

from gate.metrics import decision
from gate.metrics.decision import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    CountMetric,
    Direction,
    IntervalRule,
    PrecisionRule,
    latent_target,
    more_trials,
    stimulus_bounds,
    stimulus_estimates,
    stimulus_more_trials,
    three_way,
)
from gate.metrics.intervals import rate_p_value
from gate.metrics.paired import alpha_of, holm


def element_wise(rule: IntervalRule, n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The per-stimulus codes computed on every stimulus-run, as the rule was first written."""
    estimates = stimulus_estimates(rule.metric, n, c, rule.k)
    lo, hi = stimulus_bounds(rule.metric, n, c, rule.k, rule.confidence, rule.method)
    if rule.direction == "min":
        codes = three_way(np.minimum(lo, estimates), hi, rule.target, "min")
        missed = estimates < rule.target
    else:
        codes = three_way(lo, np.maximum(hi, estimates), rule.target, "max")
        missed = estimates > rule.target
    p0 = latent_target(rule.metric, rule.target, rule.k)
    alternative = "less" if rule.direction == "min" else "greater"
    p = np.asarray(rate_p_value(c, n, p0, rule.method, alternative), dtype=np.float64)  # type: ignore[arg-type]
    bad = (holm(p) <= alpha_of(rule.confidence) / 2.0 + 1e-12) & missed
    return np.where(codes == PASS, PASS, np.where(bad, FAIL, INCONCLUSIVE))


@pytest.mark.parametrize(
    ("metric", "k", "target", "direction", "method"),
    [
        ("pass_rate", 1, 0.6, "min", "mid-p"),
        ("pass_rate", 1, 0.3, "max", "wilson"),
        ("pass_hat_k", 3, 0.5, "min", "jeffreys"),
        ("pass_at_k", 2, 0.9, "min", "clopper-pearson"),
    ],
)
def test_per_stimulus_codes_by_distinct_counts_equal_the_element_wise_rule(
    metric: str, k: int, target: float, direction: str, method: str
) -> None:
    """The rule decides each distinct (n, c) once and gathers: the same codes, worst
    stimulus and bounds as deciding all 40 runs × 60 stimuli one by one (ragged n, so
    stimuli of one run differ in n; rates around the target, so all three codes occur)."""
    rng = np.random.default_rng(5)
    n = rng.integers(5, 40, size=(40, 60))
    c = rng.binomial(n, rng.uniform(0.2, 0.95, size=60))
    rule = IntervalRule(
        cast(CountMetric, metric), k, target, cast(Direction, direction), 0.95, method, "stimuli"
    )
    result = rule.evaluate(n, c)
    assert result.stimuli is not None
    expected = element_wise(rule, n, c)
    assert np.array_equal(result.stimuli, expected)
    assert {PASS, INCONCLUSIVE, FAIL} <= set(np.unique(expected).tolist())
    estimates = stimulus_estimates(rule.metric, n, c, k)
    worst = np.argmin(estimates, axis=1) if direction == "min" else np.argmax(estimates, axis=1)
    rows = np.arange(40)
    assert np.array_equal(result.value, estimates[rows, worst])
    lo, hi = stimulus_bounds(rule.metric, n, c, k, 0.95, method)
    if direction == "min":
        assert np.array_equal(result.lower, np.minimum(lo, estimates)[rows, worst])
        assert np.array_equal(result.upper, hi[rows, worst])
    else:
        assert np.array_equal(result.lower, lo[rows, worst])
        assert np.array_equal(result.upper, np.maximum(hi, estimates)[rows, worst])


METHODS = ("mid-p", "wilson", "jeffreys", "clopper-pearson", "beta")


@pytest.mark.parametrize("method", METHODS)
def test_both_sides_of_a_stimulus_are_monotone_in_its_passes(method: str) -> None:
    """What the bisection rests on: for a given n, the estimate, both bounds and both
    one-sided p-values move one way as c grows, for every method and metric, at every n
    from 1 to 60 and at a few large ones (up to 5,000)."""
    trials = [*range(1, 61), 97, 100, 101, 250, 999, 1_000, 5_000]
    for n_value in trials:
        c = np.arange(n_value + 1)
        n = np.full(c.size, n_value)
        for metric, k in (("pass_rate", 1), ("pass_at_k", 3), ("pass_hat_k", 3)):
            lo, hi = stimulus_bounds(cast(CountMetric, metric), n, c, k, 0.95, method)
            each = stimulus_estimates(cast(CountMetric, metric), n, c, k)
            for values in (lo, hi, each):
                assert np.all(np.diff(values) >= -1e-13), (metric, n_value)
        less = np.asarray(rate_p_value(c, n, 0.7, method, "less"))  # type: ignore[arg-type]
        greater = np.asarray(rate_p_value(c, n, 0.7, method, "greater"))  # type: ignore[arg-type]
        assert np.all(np.diff(less) >= -1e-13) and np.all(np.diff(greater) <= 1e-13)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("metric", "k", "target", "direction"),
    [
        ("pass_rate", 1, 0.6, "min"),
        ("pass_rate", 1, 0.3, "max"),
        ("pass_hat_k", 3, 0.5, "min"),
        ("pass_at_k", 2, 0.9, "min"),
    ],
)
def test_codes_by_bisection_equal_the_element_wise_rule(
    method: str, metric: str, k: int, target: float, direction: str
) -> None:
    """Every stimulus its own number of trials (an advice step: 300 runs of the same 40
    stimuli, n from 8 to 2,000, so 12,000 stimulus-runs over 40 distinct n, decided from
    thresholds in c): the same codes, worst stimulus and bounds as one by one, and as the
    pair-by-pair path of a single run, and the same codes from stimulus_codes (the
    advice's); again with n up to 10⁶ (found by sorting, not a histogram)."""
    rule = IntervalRule(
        cast(CountMetric, metric), k, target, cast(Direction, direction), 0.95, method, "stimuli"
    )
    rng = np.random.default_rng(11)
    for largest in (2_000, 1_000_000):
        trials = rng.integers(8, largest, size=40)
        rates = rng.uniform(0.2, 0.98, size=40)
        rates[:10] = latent_target(rule.metric, target, k)  # on the target: undecided ones
        c = rng.binomial(trials, rates, size=(300, 40))
        n = np.broadcast_to(trials, c.shape)
        result = rule.evaluate(n, c)
        assert result.stimuli is not None
        expected = element_wise(rule, n, c)
        assert np.array_equal(result.stimuli, expected)
        assert INCONCLUSIVE in expected and PASS in expected and FAIL in expected
        # The advice's codes alone (estimates only where Holm could reject): the same.
        assert np.array_equal(rule.stimulus_codes(n, c), expected)
        alone = rule.evaluate(n[:1], c[:1])  # 40 stimulus-runs, 40 n: pair by pair
        assert alone.stimuli is not None and np.array_equal(alone.stimuli[0], expected[0])
        assert (alone.value[0], alone.lower[0], alone.upper[0]) == (
            result.value[0], result.lower[0], result.upper[0],
        )  # fmt: skip


def test_remembered_thresholds_are_the_ones_a_bisection_finds() -> None:
    """The memo answers from what it found before, merges what it finds, and starts again
    past its limit: every answer equal to a fresh bisection."""

    def at_half(nn: np.ndarray, cc: np.ndarray) -> np.ndarray:
        return np.asarray(2 * cc >= nn)

    memo = decision._ThresholdMemo(limit=6)
    for counts in ([4, 10], [3, 4, 9, 10], [1, 2, 3, 5, 7, 11], [10, 11]):
        values = np.array(counts, dtype=np.int64)
        got = memo.first_true("rule", "pass", values, at_half)
        assert got.tolist() == [(x + 1) // 2 for x in counts]
    assert memo.first_true("other", "pass", np.array([6]), at_half).tolist() == [3]


def test_future_passes_of_a_small_simulation_are_the_binomial_draws_themselves() -> None:
    """Below _NORMAL_ELEMENTS stimulus-runs nothing is approximated: the same draws as
    numpy's seeded binomial, so small suites' advice is what it was."""
    p = np.random.default_rng(1).uniform(0.05, 0.95, size=(1_000, 150))
    assert p.size < decision._NORMAL_ELEMENTS
    for m in (1, 40, 5_000):
        expected = np.random.default_rng(77).binomial(m, p)
        assert np.array_equal(decision._future_passes(m, p, 77), expected)


def test_future_passes_of_a_large_simulation_follow_the_binomial() -> None:
    """200,000 stimulus-runs at p = 0.3, m = 1,000 (variance 210 ≥ 25: the normal
    approximation): mean 300 (± 0.03 by chance), variance 210, P(X ≤ 290) = 0.2569 by the
    binomial's distribution function; rates with m·p(1 − p) < 25 keep exact draws (p = 0.001:
    Binomial(1000, 0.001), P(X = 0) = 0.999^1000 = 0.3677); every draw within [0, m]."""
    m, size = 1_000, decision._NORMAL_ELEMENTS
    p = np.full((20, size // 20), 0.3)
    x = decision._future_passes(m, p, 5)
    assert x.dtype == np.int64 and x.min() >= 0 and x.max() <= m
    assert abs(x.mean() - 300.0) < 0.15
    assert x.var() == pytest.approx(210.0, rel=0.02)
    assert np.mean(x <= 290) == pytest.approx(stats.binom.cdf(290, m, 0.3), abs=0.005)
    rare = p.copy()
    rare[:, ::2] = 0.001
    y = decision._future_passes(m, rare, 5)
    assert np.mean(y[:, ::2] == 0) == pytest.approx(0.999**1000, abs=0.005)
    assert y[:, 1::2].mean() == pytest.approx(300.0, abs=0.15)


def _passes_drawn_whole(m: int, p: np.ndarray, seed: int) -> np.ndarray:
    """The future passes as one draw over the whole array (the way they were drawn before
    chunks): the binomial, or where m·p(1 − p) ≥ 25 in a simulation of 200,000 or more
    stimulus-runs, the rounded normal from a stream of each m's own."""
    rng = np.random.default_rng(seed)
    variance = m * p * (1.0 - p)
    normal = variance >= decision._NORMAL_VARIANCE
    if p.size < decision._NORMAL_ELEMENTS or not normal.any():
        return rng.binomial(m, p)
    z = np.random.default_rng([seed, m]).standard_normal(p.shape)
    drawn = np.clip(np.floor(m * p + z * np.sqrt(variance) + 0.5), 0, m).astype(np.int64)
    drawn[~normal] = rng.binomial(m, p[~normal])
    return drawn


@pytest.mark.parametrize("m", [3, 40, 1_000])
def test_future_passes_in_chunks_are_the_whole_arrays_draws(m: int) -> None:
    """An advice draws its runs a chunk at a time (800,000 stimuli: 0.7 GB less): the same
    numbers as one draw over every run, in each branch, including chunks whose rates all
    stay below the normal's variance while others' do not (their normal draws are still
    taken, so the next chunk's stay in step)."""
    p = np.random.default_rng(3).uniform(0.05, 0.95, size=(20, decision._NORMAL_ELEMENTS // 20))
    p[5:9] = 0.001  # whole runs where the binomial is drawn at every m
    expected = _passes_drawn_whole(m, p, 11)
    assert np.array_equal(decision._future_passes(m, p, 11), expected)
    for elements in (1, 25_000, 30_000):  # a run a chunk; whole runs; runs split unevenly
        chunks = list(decision._future_pass_chunks(m, p, 11, elements))
        assert len(chunks) > 1
        assert np.array_equal(np.concatenate(chunks), expected)
    for empty in (np.zeros((0, 5)), np.zeros((4, 0)), np.zeros(0)):
        assert decision._future_passes(m, empty, 11).shape == empty.shape
    small = p[:2, :100]
    assert np.array_equal(
        np.concatenate(list(decision._future_pass_chunks(m, small, 11, 100))),
        np.random.default_rng(11).binomial(m, small),
    )


def test_future_passes_at_two_m_are_drawn_apart() -> None:
    """Each m its own normal stream: the standardized draws at m = 1,000 and 1,001 are
    uncorrelated (one stream for all m made them equal, and the per-stimulus search then
    left 96 of 10,870 stimuli without an answer where the binomial left 38)."""
    p = np.full((20, decision._NORMAL_ELEMENTS // 20), 0.5)
    a = (decision._future_passes(1_000, p, 5) - 500.0) / np.sqrt(250.0)
    b = (decision._future_passes(1_001, p, 5) - 500.5) / np.sqrt(250.25)
    assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.01


def test_the_family_share_found_by_the_per_stimulus_search_serves_more_trials() -> None:
    """A per-stimulus gate's advice simulates the family at the grid's m (1, 2, 3, 4, 5,
    7, ...) and its own search at 1, 2, 4, 8, ...: the shares recorded at the grid's m are
    the ones more_trials would simulate, and its answer is the same with or without them."""
    n = np.array([20, 20, 20, 20])
    c = np.array([20, 9, 11, 19])
    rule = IntervalRule("pass_rate", 1, 0.5, "min", 0.95, "mid-p", "stimuli")
    family: dict[int, float] = {}
    each = stimulus_more_trials(rule, n, c, family=family)
    assert each[0] == 0 and each[1] is not None and each[2] is not None
    assert list(family)[:8] == [1, 2, 3, 4, 5, 7, 9, 12]
    p = decision._future_rates(n, c, decision._runs(4), decision._SEED, True)
    for m in (1, 4, 12):
        extra = decision._future_passes(m, p, decision._SEED)
        assert family[m] == decision._decided(rule.evaluate(n + m, c + extra).outcome)
    alone = more_trials(rule, n, c)
    assert alone is not None and more_trials(rule, n, c, known=family) == alone


def test_fisher_screen_never_drops_a_table_the_exact_test_could_reject() -> None:
    """fisher_worse_above says "surely above α" only where the exact one-sided Fisher
    p-value is above α: every table with 1-30 trials a side (exhaustive, 245,025 tables at
    α = 0.05 and 0.1), and 4,000 random ones with up to 3,000 a side (the exact test's log
    path past 2,000 trials in all). It also screens most tables out (the point of it)."""
    from gate.metrics.paired import fisher_worse, fisher_worse_above

    exact = np.vectorize(fisher_worse, otypes=[np.float64])
    sides = np.arange(1, 31)
    na, nb = (x.ravel() for x in np.meshgrid(sides, sides, indexing="ij"))
    tables = [
        (a, ca, b, cb)
        for a, b in zip(na.tolist(), nb.tolist(), strict=True)
        for ca in range(a + 1)
        for cb in range(b + 1)
    ]
    small = np.array(tables).T
    rng = np.random.default_rng(3)
    big_n = rng.integers(1, 3_001, size=(2, 4_000))
    big_c = rng.binomial(big_n, rng.uniform(0, 1, size=(2, 4_000)))
    large = np.array([big_n[0], big_c[0], big_n[1], big_c[1]])
    for counts, screened in ((small, 0.5), (large, 0.4)):  # large: rates unlike each other
        p = exact(*counts)
        for alpha in (0.05, 0.1):
            above = fisher_worse_above(*counts, alpha)
            assert np.all(p[above] > alpha)
            assert above.mean() > screened
    assert small.shape[1] == 245_025


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_per_stimulus_regression_codes_equal_the_exact_test_on_every_table(
    confidence: float,
) -> None:
    """The per-stimulus regression rule with the screen gives the codes, worst stimulus and
    bounds of Fisher's exact test on every stimulus-run (300 runs of 40 paired stimuli, each
    with its own 5-60 trials a side, the candidate a little worse on some)."""
    from gate.metrics.decision import PairedRule, _combine
    from gate.metrics.exact_difference import exact_shifts
    from gate.metrics.paired import difference_bounds, fisher_worse

    rule = PairedRule("max_regression", "pass_rate", 1, 0.0, 0.1, confidence, "stimuli")
    rng = np.random.default_rng(8)
    n_b, n_c = rng.integers(5, 61, size=40), rng.integers(5, 61, size=40)
    rate = rng.uniform(0.3, 0.95, size=40)
    drop = np.where(np.arange(40) < 8, 0.3, 0.0)
    c_b = rng.binomial(n_b, rate, size=(300, 40))
    c_c = rng.binomial(n_c, np.clip(rate - drop, 0, 1), size=(300, 40))
    nb, nc = np.broadcast_to(n_b, c_b.shape), np.broadcast_to(n_c, c_c.shape)
    result = rule.evaluate_counts(nb, c_b, nc, c_c)
    p = np.vectorize(fisher_worse, otypes=[np.float64])(nb, c_b, nc, c_c)
    worse = holm(p) <= alpha_of(confidence) + 1e-12
    lower, _ = difference_bounds(nb, c_b, nc, c_c, confidence)
    # held to the exact unconditional test (tests/compare/test_exact_difference.py)
    lower = lower - exact_shifts(nb, nc, 0.1, confidence)
    codes = np.where(worse, FAIL, np.where(lower > -0.1 + 1e-12, PASS, INCONCLUSIVE))
    assert result.stimuli is not None and np.array_equal(result.stimuli, codes)
    assert np.array_equal(result.outcome, _combine(codes.astype(np.int8)))
    assert {PASS, INCONCLUSIVE, FAIL} <= set(np.unique(codes).tolist())


# --------------------------------------------------------------------------- half-width rule

HALF_WIDTH_METHODS = (*METHODS, "wald")
#: k of pass^k and pass@k checked here: every k up to 100, then a sample up to the largest
#: proven one (bench/half_width_shape.py checks every k up to it, in about two minutes)
HALF_WIDTH_KS = [
    *range(1, 101),
    *(128, 150, 199, 200, 256, 299, 300, 333, 400, 499, 500, 512, 640, 700, 777, 800, 900),
    *(999, decision._HALF_WIDTH_SHAPE_PROVEN_K),
]
#: every (metric, k) checked: the pass rate, and pass^k and pass@k at HALF_WIDTH_KS
HALF_WIDTH_SHAPES = [("pass_rate", 1)] + [
    (metric, k) for metric in ("pass_hat_k", "pass_at_k") for k in HALF_WIDTH_KS
]


def _half_widths(
    method: str,
    n: np.ndarray,
    c: np.ndarray,
    confidence: float,
    metric: str = "pass_rate",
    k: int = 1,
) -> np.ndarray:
    lo, hi = stimulus_bounds(cast(CountMetric, metric), n, c, k, confidence, method)
    return np.asarray((hi - lo) / 2.0)


def _assert_single_peaked(method: str, n: np.ndarray, c: np.ndarray, confidence: float) -> None:
    """Along consecutive entries of one n (sorted c), every (metric, k) of
    HALF_WIDTH_SHAPES: once the half-width, raised to decision._HALF_WIDTH_FLOOR where
    below it, falls it never rises again (exactly, no tolerance). The rate bounds are
    solved once and mapped per metric as stimulus_bounds maps them (checked equal for two
    of them)."""
    lo, hi = stimulus_bounds("pass_rate", n, c, 1, confidence, method)
    for metric, k in (("pass_hat_k", 3), ("pass_at_k", 7)):
        mapped = decision._map(cast(CountMetric, metric), hi, k)
        mapped -= decision._map(cast(CountMetric, metric), lo, k)
        assert np.array_equal(mapped / 2.0, _half_widths(method, n, c, confidence, metric, k))
    same = n[1:] == n[:-1]
    group = np.cumsum(~same)  # each step's n
    index = np.arange(same.size)
    assert same.any()
    for metric, k in HALF_WIDTH_SHAPES:
        h = decision._map(cast(CountMetric, metric), hi, k)
        h = (h - decision._map(cast(CountMetric, metric), lo, k)) / 2.0
        h = np.maximum(h, decision._HALF_WIDTH_FLOOR)
        step = np.diff(h)
        falls, rises = same & (step < 0.0), same & (step > 0.0)
        first_fall = np.full(group[-1] + 1, index.size)
        np.minimum.at(first_fall, group[falls], index[falls])
        last_rise = np.full(group[-1] + 1, -1)
        np.maximum.at(last_rise, group[rises], index[rises])
        bad = np.flatnonzero(last_rise > first_fall)
        assert bad.size == 0, (method, confidence, metric, k, n[1:][first_fall[bad[:3]]])


@pytest.mark.parametrize("method", HALF_WIDTH_METHODS)
def test_the_half_width_is_single_peaked_at_every_count(method: str) -> None:
    """What the half-width rule's bisection rests on (decision._widest), as
    computed (floating point): at a given n the half-width (U − L)/2 of the pass rate, and
    of pass^k and pass@k at each k of HALF_WIDTH_KS (raised to
    decision._HALF_WIDTH_FLOOR: pass@k wobbles at ~1e-15 near c = n), never rises again
    once it falls as c goes from 0 to n, for every method, every c and every n from
    1 to 300 at 95%, and to 100 at 80% and 99%."""
    for top, confidence in ((300, 0.95), (100, 0.8), (100, 0.99)):
        trials = np.arange(1, top + 1)
        n = np.repeat(trials, trials + 1)
        c = np.concatenate([np.arange(t + 1) for t in trials])
        _assert_single_peaked(method, n, c, confidence)


@pytest.mark.parametrize("method", HALF_WIDTH_METHODS)
def test_the_half_width_is_single_peaked_at_large_n(method: str) -> None:
    """The same at large n, up to the largest the bisection is used at
    (decision._HALF_WIDTH_SHAPE_PROVEN): every c within 150 of each metric's peak (where
    neighbours differ least; p = 1/2, 1 − 1/(2k), 1/(2k)) and within 60 of either end
    (where the bounds pin to 0 or 1, and the mapped ones round alike), and 400 random c in
    between, in order."""
    rng = np.random.default_rng(3)
    largest = decision._HALF_WIDTH_SHAPE_PROVEN
    trials = [301, 1_000, 10_001, largest - 1, largest, *rng.integers(300, largest, size=4)]
    shares = {
        PrecisionRule(cast(CountMetric, m), k, 0.1)._widest_share() for m, k in HALF_WIDTH_SHAPES
    }
    ns, cs = [], []
    for t in trials:
        peaks = [round(t * share) for share in shares]
        chosen = np.unique(
            np.concatenate(
                [
                    np.arange(61),
                    *[np.arange(peak - 150, peak + 151) for peak in peaks],
                    np.arange(t - 60, t + 1),
                    rng.integers(0, t + 1, size=400),
                ]
            )
        )
        chosen = chosen[(chosen >= 0) & (chosen <= t)]
        ns.append(np.full(chosen.size, t))
        cs.append(chosen)
    _assert_single_peaked(method, np.concatenate(ns), np.concatenate(cs), 0.95)


def _pair_codes(rule: PrecisionRule, n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The half-width codes computed on every stimulus-run, as the rule was first written."""
    h = _half_widths(rule.method, n, c, rule.confidence)
    return np.where(h <= rule.target + 1e-12, PASS, INCONCLUSIVE)


def _count_bisections(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Patch PrecisionRule._codes_by_bisection to count its calls (in the returned dict)."""
    calls = {"bisection": 0}
    bisect = PrecisionRule._codes_by_bisection

    def counted(self: PrecisionRule, *args: np.ndarray) -> np.ndarray:
        calls["bisection"] += 1
        return bisect(self, *args)

    monkeypatch.setattr(PrecisionRule, "_codes_by_bisection", counted)
    return calls


@pytest.mark.parametrize("method", HALF_WIDTH_METHODS)
@pytest.mark.parametrize(
    ("metric", "k"),
    [
        ("pass_rate", 1), ("pass_hat_k", 3), ("pass_at_k", 3), ("pass_at_k", 20),
        ("pass_hat_k", 60), ("pass_hat_k", 400), ("pass_at_k", 1_000),
    ],
)  # fmt: skip
def test_half_width_codes_by_bisection_equal_the_pair_path(
    method: str, metric: str, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stimulus its own number of trials (300 runs of 40 stimuli, n from 1 to 400, and
    from 300 to 20,000): the codes from a peak and two thresholds per distinct n equal the
    half-width of every stimulus-run held against the target, for a target that leaves
    both codes, targets equal to a half-width some pair has (the bisection lands on it) or
    just under the widest half-widths of a few n (either side of the peak), all-pass and
    none-pass targets; equal to evaluate's per-stimulus codes."""
    rng = np.random.default_rng(17)
    calls = _count_bisections(monkeypatch)
    share = PrecisionRule(cast(CountMetric, metric), k, 0.1)._widest_share()
    for low, high in ((1, 400), (300, 20_000)):
        trials = rng.integers(low, high + 1, size=40)
        trials[:2] = low
        rates = rng.uniform(0.0, 1.0, size=40)
        rates[2:8] = share
        rates[8], rates[9] = 0.0, 1.0
        c = rng.binomial(trials, rates, size=(300, 40))
        n = np.broadcast_to(trials, c.shape)
        every = _half_widths(method, n, c, 0.95, metric, k)
        present = every[:3].ravel()
        # The widest half-widths of a few n and their neighbours: where a target makes one
        # side undecided and not the other, if their rounding differs.
        widest = []
        for t in trials[:4]:
            near = np.clip(round(t * share) + np.arange(-8, 9), 0, t)  # the peak is near
            widest.append(_half_widths(method, np.full(near.size, t), near, 0.95, metric, k).max())
        targets = [0.05, float(np.median(present)), float(present.max()), 1e-9, 0.6]
        targets += [float(x) - 1e-12 for x in widest] + [float(x) for x in widest]
        for target in [t for t in targets if t >= decision._HALF_WIDTH_FLOOR]:
            rule = PrecisionRule(cast(CountMetric, metric), k, target, 0.95, method, "stimuli")
            before = calls["bisection"]
            codes = rule.stimulus_codes(n, c)
            assert calls["bisection"] == before + 1
            expected = np.where(every <= target + 1e-12, PASS, INCONCLUSIVE)
            assert np.array_equal(codes, expected), (low, target)
            if target == float(np.median(present)):
                assert INCONCLUSIVE in expected and PASS in expected
            result = rule.evaluate(n[:5], c[:5])
            assert result.stimuli is not None and np.array_equal(result.stimuli, expected[:5])


@pytest.mark.parametrize("method", ["mid-p", "wald"])
def test_half_width_rules_outside_the_proven_shape_keep_the_pair_path(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """n past decision._HALF_WIDTH_SHAPE_PROVEN, k past decision._HALF_WIDTH_SHAPE_PROVEN_K
    and a target under decision._HALF_WIDTH_FLOOR are decided pair by pair; an n whose peak
    could not be shown is decided pair by pair within the bisection (every peak marked
    unshown, then every other): the same codes each way."""
    rng = np.random.default_rng(29)
    trials = rng.integers(5, 400, size=40)
    c = rng.binomial(trials, rng.uniform(0.0, 1.0, size=40), size=(300, 40))
    n = np.broadcast_to(trials, c.shape)
    calls = _count_bisections(monkeypatch)
    beyond = (n + decision._HALF_WIDTH_SHAPE_PROVEN)[:, :4]
    past_k = decision._HALF_WIDTH_SHAPE_PROVEN_K + 1
    assert beyond.size > 2 * 4 * int(beyond.max()).bit_length()  # dense enough to bisect
    outside = [
        (PrecisionRule("pass_rate", 1, 0.002, 0.95, method, "stimuli"), beyond, c[:, :4]),
        (PrecisionRule("pass_hat_k", past_k, 0.05, 0.95, method, "stimuli"), n, c),
        (PrecisionRule("pass_at_k", 3, 1e-10, 0.95, method, "stimuli"), n, c),
    ]
    for rule, nn, cc in outside:
        every = _half_widths(method, nn, cc, 0.95, rule.metric, rule.k)
        expected = np.where(every <= rule.target + 1e-12, PASS, INCONCLUSIVE)
        assert np.array_equal(rule.stimulus_codes(nn, cc), expected)
    assert calls["bisection"] == 0
    widest = decision._widest
    for keep in (lambda found: np.full_like(found, -1), lambda f: np.where(f % 2, -1, f)):
        monkeypatch.setattr(decision, "_widest", lambda *a, keep=keep: keep(widest(*a)))
        rule = PrecisionRule("pass_hat_k", 3, 0.08, 0.95, method, "stimuli")
        decision._THRESHOLDS._known.clear()
        every = _half_widths(method, n, c, 0.95, "pass_hat_k", 3)
        expected = np.where(every <= 0.08 + 1e-12, PASS, INCONCLUSIVE)
        assert INCONCLUSIVE in expected and PASS in expected
        assert np.array_equal(rule.stimulus_codes(n, c), expected)
    assert calls["bisection"] == 2
    decision._THRESHOLDS._known.clear()


def test_half_width_advice_reads_the_same_codes_as_evaluate() -> None:
    """The per-stimulus and whole-gate advice of a half-width rule on 20 stimuli of their own
    5-100 trials: the same answers and family shares as when every step calls evaluate
    (the pair path, with the widest stimulus's values)."""
    rng = np.random.default_rng(23)
    n = rng.integers(5, 101, size=20)
    c = rng.binomial(n, rng.uniform(0.05, 0.95, size=20))
    rule = PrecisionRule("pass_rate", 1, 0.12, 0.9, "mid-p", "stimuli")
    family: dict[int, float] = {}
    each = stimulus_more_trials(rule, n, c, family=family)
    whole = more_trials(rule, n, c, known=family)

    def evaluated(
        r: IntervalRule | PrecisionRule, nn: np.ndarray, cc: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        result = r.evaluate(nn, cc)
        return result.outcome, result.stimuli

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decision, "_codes", evaluated)
        reference_family: dict[int, float] = {}
        assert stimulus_more_trials(rule, n, c, family=reference_family) == each
        assert reference_family == family
        assert more_trials(rule, n, c) == whole
    assert any(a not in (0, None) for a in each) and whole is not None


def test_a_guess_narrows_the_bisection_and_never_changes_its_answer() -> None:
    """_first_true from any guess (right, near, far, out of range) finds what the plain
    bisection finds, for thresholds anywhere in [0, n + 1], through the memo too."""
    rng = np.random.default_rng(29)
    counts = np.unique(rng.integers(0, 3_000, size=400))
    answer = rng.integers(0, counts + 2)  # n + 1: true nowhere

    def predicate(nn: np.ndarray, cc: np.ndarray) -> np.ndarray:
        return np.asarray(cc >= answer[np.searchsorted(counts, nn)])

    plain = decision._first_true(counts, predicate)
    assert np.array_equal(plain, answer)
    for noise in (0, 1, 3, 4, 50, 10_000):
        guess = answer + rng.integers(-noise, noise + 1, size=counts.size)
        assert np.array_equal(decision._first_true(counts, predicate, guess), answer)
    memo = decision._ThresholdMemo(limit=10_000)
    for part in (counts[::2], counts):
        got = memo.first_true("rule", "side", part, predicate, lambda nn: nn // 3)
        assert np.array_equal(got, answer[np.searchsorted(counts, part)])


def test_advice_is_the_same_whatever_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite, per-stimulus and paired advice simulate a few runs at a time: with a run a
    chunk they give the same shares at every m and the same answers as with every run in
    one chunk."""
    from gate.metrics.decision import PairedRule, more_trials, more_trials_paired

    rng = np.random.default_rng(8)
    n = np.full(40, 4)
    c = rng.integers(0, 5, size=40)
    n_c = np.full(40, 4)
    c_c = np.clip(c + rng.integers(-1, 2, size=40), 0, 4)
    suite = IntervalRule("pass_rate", 1, 0.55, "min", 0.95, "mid-p", "suite")
    each = IntervalRule("pass_rate", 1, 0.3, "min", 0.95, "mid-p", "stimuli")
    paired = PairedRule("max_regression", "pass_rate", 1, 0.05, 0.15)

    def answers() -> tuple[object, ...]:
        family: dict[int, float] = {}
        per_stimulus = stimulus_more_trials(each, n, c, family=family)
        return (
            more_trials(suite, n, c),
            per_stimulus,
            family,
            more_trials_paired(paired, n, c, n_c, c_c),
        )

    def paired_draws() -> dict[int, np.ndarray]:
        """The paired simulation's counts at each m it tried, every run's, in order."""
        seen: dict[int, list[np.ndarray]] = {}
        real = PairedRule.evaluate_counts

        def spy(self: PairedRule, nb: Any, cb: Any, nc: Any, cc: Any) -> Any:
            seen.setdefault(int(np.asarray(nb).ravel()[0]), []).append(np.hstack([cb, cc]))
            return real(self, nb, cb, nc, cc)

        with monkeypatch.context() as patch:
            patch.setattr(PairedRule, "evaluate_counts", spy)
            more_trials_paired(paired, n, c, n_c, c_c)
        return {m: np.vstack(parts) for m, parts in seen.items()}

    whole, drawn = answers(), paired_draws()
    monkeypatch.setattr(decision, "_CHUNK_ELEMENTS", 1)
    assert answers() == whole
    chunked = paired_draws()
    assert chunked.keys() == drawn.keys()
    assert all(np.array_equal(chunked[m], drawn[m]) for m in drawn)
    assert whole[0] is not None and whole[3] is not None
