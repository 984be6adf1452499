"""The per-stimulus pass held to the exact unconditional test
(gate/metrics/exact_difference.py): a stimulus whose rate truly drops by D passes with
probability at most α, computed here independently (scipy's binomial, a fine grid of
rates on the null's boundary and inside it) through the rule the verdict uses."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gate.metrics import exact_difference
from gate.metrics.decision import FAIL, PASS, PairedRule
from gate.metrics.exact_difference import MOST_TRIALS, exact_shifts
from gate.metrics.paired import difference_bounds


def _rule(detectable: float, confidence: float) -> PairedRule:
    return PairedRule("max_regression", "pass_rate", 1, 0.0, detectable, confidence, "stimuli")


def _passing(nb: int, nc: int, detectable: float, confidence: float) -> np.ndarray:
    """Which tables (c_b, c_c) of a design the rule passes: shape (nb + 1, nc + 1)."""
    cb, cc = np.meshgrid(np.arange(nb + 1), np.arange(nc + 1), indexing="ij")
    codes = (
        _rule(detectable, confidence)
        .evaluate_stimuli(
            np.full((cb.size, 1), nb),
            cb.reshape(-1, 1),
            np.full((cc.size, 1), nc),
            cc.reshape(-1, 1),
        )
        .stimuli
    )
    assert codes is not None
    return (codes[:, 0] == PASS).reshape(cb.shape)


def _largest_pass_probability(
    passing: np.ndarray, nb: int, nc: int, detectable: float, inside: bool = False
) -> float:
    """The largest probability of the passing tables over the null p_c ≤ p_b − D: on its
    boundary (5,001 rates), and, with ``inside``, at a grid of points within it."""
    rates = np.linspace(detectable, 1.0, 5_001)
    drops = [detectable] + (
        [detectable + 0.02, detectable + 0.1, detectable + 0.3] if inside else []
    )
    worst = 0.0
    for drop in drops:
        usable = rates[rates >= drop]
        baseline = stats.binom.pmf(np.arange(nb + 1)[None, :], nb, usable[:, None])
        candidate = stats.binom.pmf(np.arange(nc + 1)[None, :], nc, (usable - drop)[:, None])
        size = np.einsum("rb,rc,bc->r", baseline, candidate, passing.astype(float))
        worst = max(worst, float(size.max(initial=0.0)))
    return worst


@pytest.mark.parametrize(
    ("nb", "nc", "detectable", "confidence"),
    [(5, 5, 0.25, 0.95), (10, 10, 0.25, 0.95), (11, 11, 0.25, 0.95), (20, 20, 0.25, 0.95),
     (30, 30, 0.25, 0.95), (10, 10, 0.1, 0.95), (3, 12, 0.25, 0.95), (12, 3, 0.4, 0.95),
     (8, 15, 0.15, 0.9), (50, 50, 0.25, 0.95), (1, 40, 0.25, 0.99), (40, 1, 0.3, 0.95),
     (25, 25, 0.05, 0.8)],
)  # fmt: skip
def test_a_true_drop_of_d_passes_at_most_alpha(
    nb: int, nc: int, detectable: float, confidence: float
) -> None:
    passing = _passing(nb, nc, detectable, confidence)
    alpha = 1.0 - confidence
    assert _largest_pass_probability(passing, nb, nc, detectable, inside=True) <= alpha + 1e-9


@pytest.mark.parametrize(("n", "before"), [(10, 0.0563), (20, 0.0537), (30, 0.0563), (50, 0.0527)])
def test_the_bounds_alone_passed_more_and_the_fewest_tables_go(n: int, before: float) -> None:
    """The asymptotic bounds alone passed a true 25-point drop more often than α (the values
    the module's docstring quotes); the rule drops the fewest tables that bring it within α:
    with the next group of tables back, it is above α again."""
    cb, cc, lower = exact_difference.passing_tables(n, n, 0.25, 0.95)
    alone = np.zeros((n + 1, n + 1), dtype=bool)
    alone[cb, cc] = True
    assert _largest_pass_probability(alone, n, n, 0.25) == pytest.approx(before, abs=3e-4)
    shift = float(exact_shifts([n], [n], 0.25, 0.95)[0])
    kept_b, kept_c, _ = exact_difference.passing_tables(n, n, 0.25, 0.95, shift)
    kept = np.zeros_like(alone)
    kept[kept_b, kept_c] = True
    assert 0 < kept.sum() < alone.sum() and not (kept & ~alone).any()
    # The rule passes these, less any table Fisher's test shows worse (failed first).
    passing = _passing(n, n, 0.25, 0.95)
    assert not (passing & ~kept).any()
    # The dropped tables are those with the lowest bounds: every kept one is above them.
    assert (lower[kept_b.size :] < lower[: kept_b.size].min()).all()
    # One more group of tables (equal bounds) back: above α.
    back = kept.copy()
    next_bound = lower[kept_b.size]
    for b, c, bound in zip(cb, cc, lower, strict=True):
        if abs(bound - next_bound) <= 1e-9:
            back[b, c] = True
    assert _largest_pass_probability(back, n, n, 0.25) > 0.05


def test_ten_trials_cannot_rule_out_a_25_point_drop_eleven_can() -> None:
    """10/10 → 10/10: a candidate at 0.75 shows 10/10 in 0.75¹⁰ = 5.6% of runs, so no
    level-5% test may pass it; 0.75¹¹ = 4.2%."""
    rule = _rule(0.25, 0.95)
    ten = rule.evaluate_stimuli([[10]], [[10]], [[10]], [[10]])
    eleven = rule.evaluate_stimuli([[11]], [[11]], [[11]], [[11]])
    assert ten.stimuli is not None and eleven.stimuli is not None
    assert ten.stimuli[0, 0] != PASS and eleven.stimuli[0, 0] == PASS
    assert 0.75**10 > 0.05 > 0.75**11
    # The bound shown agrees with the verdict: lowered below −D for 10/10, above it at 11.
    assert float(ten.lower[0]) <= -0.25 < float(eleven.lower[0])
    unshifted = float(difference_bounds(10, 10, 10, 10, 0.95)[0])
    assert unshifted == pytest.approx(-0.2217, abs=1e-4) and float(ten.lower[0]) < unshifted


def test_seeded_true_drops_pass_at_most_alpha() -> None:
    """Simulated, at the rates where the bounds alone were worst (n = 10: p_b = 1 and
    0.25; n = 30: p_b = 0.625): 200,000 stimuli each, within three standard errors of α
    or below."""
    rng = np.random.default_rng(20261128)
    rule = _rule(0.25, 0.95)
    for n, rate in ((10, 1.0), (10, 0.25), (30, 0.625)):
        runs = 200_000
        cb = rng.binomial(n, rate, size=(runs, 1))
        cc = rng.binomial(n, rate - 0.25, size=(runs, 1))
        codes = rule.evaluate_stimuli(np.full_like(cb, n), cb, np.full_like(cc, n), cc).stimuli
        assert codes is not None
        passed = float(np.mean(codes == PASS))
        assert passed <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs), (n, rate, passed)


def test_the_passing_set_grows_with_candidate_passes_and_shrinks_with_baseline_ones() -> None:
    """What puts the null's largest probability on its boundary p_c = p_b − D: the lower
    bound is nondecreasing in c_c and nonincreasing in c_b, over every table of 1–60 trials
    a side (equal), and of uneven designs."""
    designs = [(n, n) for n in range(1, 61)] + [(3, 20), (20, 3), (7, 40), (40, 7), (1, 60)]
    for nb, nc in designs:
        cb, cc = np.meshgrid(np.arange(nb + 1), np.arange(nc + 1), indexing="ij")
        lower = difference_bounds(np.full(cb.shape, nb), cb, np.full(cc.shape, nc), cc, 0.95)[0]
        assert (np.diff(lower, axis=1) >= -1e-12).all(), (nb, nc)
        assert (np.diff(lower, axis=0) <= 1e-12).all(), (nb, nc)


def test_shifts_per_design_and_the_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """One shift per design, whatever else is asked with it; designs past MOST_TRIALS trials
    a side (and empty sides) keep the asymptotic bound; a full memo starts over."""
    nb = np.array([[10, 20, 10], [MOST_TRIALS + 1, 0, 11]])
    nc = np.array([[10, 20, 10], [10, 5, 11]])
    shifts = exact_shifts(nb, nc, 0.25, 0.95)
    assert shifts.shape == nb.shape
    assert shifts[0, 0] == shifts[0, 2] > 0
    assert shifts[1, 0] == shifts[1, 1] == 0.0
    exact_difference._SHIFTS.clear()
    alone = [
        float(exact_shifts([b], [c], 0.25, 0.95)[0])
        for b, c in zip(nb.ravel(), nc.ravel(), strict=True)
    ]
    assert shifts.ravel().tolist() == alone
    monkeypatch.setattr(exact_difference, "_SHIFTS_MAX", 2)
    exact_difference._SHIFTS.clear()
    again = exact_shifts(nb, nc, 0.25, 0.95)
    # (it starts over with the designs of the call that filled it)
    assert again.tolist() == shifts.tolist() and len(exact_difference._SHIFTS) == 3


def test_an_unchanged_stable_stimulus_still_passes_and_a_clear_drop_still_fails() -> None:
    rule = _rule(0.25, 0.95)
    result = rule.evaluate_stimuli([[20, 11, 20]], [[20, 11, 20]], [[20, 11, 20]], [[20, 11, 2]])
    assert result.stimuli is not None
    assert result.stimuli[0].tolist()[:2] == [PASS, PASS] and result.stimuli[0, 2] == FAIL


def test_screening_clear_tables_gives_the_same_shifts() -> None:
    """Tables whose bound is surely well above -D skip the score bound's bisection: every
    shift is the one computed with every bound exact (designs of 1–60 trials a side, four
    margins and levels), and a cut that reaches the screened tables is recomputed whole."""
    designs = [(b, c) for b in range(1, 61, 7) for c in range(1, 61, 11)] + [(8, 8), (30, 30)]
    fallbacks = 0
    for detectable, confidence in ((0.25, 0.95), (0.1, 0.95), (0.05, 0.8), (0.4, 0.99)):
        for b, c in designs:
            design = (b, c, detectable, confidence)
            whole = exact_difference._shift(*design, exact_difference._tables_of([design])[0])
            screened = exact_difference._tables_of([design], screened=True)[0]
            fast = exact_difference._shift(*design, screened)
            fallbacks += fast is None
            assert fast is None or fast == whole, design
    assert fallbacks > 0  # the fallback is exercised (one trial a side: the cut goes deep)


def test_the_default_gates_table_is_what_the_computation_gives() -> None:
    """gate/metrics/_exact_shift_table.py (the default gate's shifts, computed in advance):
    its parameters are the module's, it has every design, and a sample of 60 designs
    (the corners among them) recomputes to the same shifts."""
    from gate.metrics import _exact_shift_table as table
    from tests.compare.exact_shift_table import designs

    assert (table.DETECTABLE, table.CONFIDENCE) == (
        exact_difference._TABLE_DETECTABLE, exact_difference._TABLE_CONFIDENCE,
    )  # fmt: skip
    assert table.MOST_TRIALS == MOST_TRIALS and len(table.SHIFTS) == MOST_TRIALS**2
    every = designs()
    rng = np.random.default_rng(60)
    sample = [every[i] for i in rng.choice(len(every), size=56, replace=False)]
    sample += [every[0], every[MOST_TRIALS - 1], every[-MOST_TRIALS], every[-1]]
    recomputed = exact_difference.computed_shifts(sample)
    looked_up = exact_difference._looked_up(sample)
    assert looked_up is not None
    assert looked_up == pytest.approx(recomputed, abs=1e-12)
    # and exact_shifts takes the table for the default gate only
    exact_difference._SHIFTS.clear()
    assert exact_shifts([10], [10], 0.25, 0.95)[0] == table.SHIFTS[9 * MOST_TRIALS + 9]
    assert exact_difference._looked_up([(10, 10, 0.2, 0.95)]) is None
