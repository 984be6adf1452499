"""Miettinen & Nurminen's score bounds of one stimulus's difference, which the
per-stimulus regression rule takes beside Newcombe's (gate/metrics/trial_noise.py,
gate/metrics/paired.py: difference_bounds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from gate.metrics import paired
from gate.metrics.paired import difference_bounds
from gate.metrics.trial_noise import score_difference_bounds


def _restricted_baseline_rate(nb: int, cb: int, nc: int, cc: int, theta: float) -> float:
    """The likeliest baseline rate with p_c − p_b = θ, by a numerical maximum."""
    low, high = max(0.0, -theta) + 1e-13, min(1.0, 1.0 - theta) - 1e-13
    if low >= high:
        return (low + high) / 2.0

    def negative_log_likelihood(pb: float) -> float:
        value = 0.0
        for c, n, p in ((cb, nb, pb), (cc, nc, pb + theta)):
            value -= (c * math.log(p) if c else 0.0) + ((n - c) * math.log(1 - p) if n - c else 0.0)
        return value

    found = optimize.minimize_scalar(
        negative_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    )
    return float(found.x)


def _reference_lower(nb: int, cb: int, nc: int, cc: int, confidence: float) -> float:
    """The score lower bound written out: bisection on θ of
    (d̂ − θ)/sqrt(V(θ)·N/(N − 1)) = z at the numerically restricted rates."""
    z = stats.norm.ppf(confidence)
    d = cc / nc - cb / nb
    low, high = -1.0, d
    for _ in range(50):
        theta = (low + high) / 2.0
        pb = _restricted_baseline_rate(nb, cb, nc, cc, theta)
        pc = pb + theta
        variance = (pb * (1 - pb) / nb + pc * (1 - pc) / nc) * (nb + nc) / (nb + nc - 1)
        if (d - theta) > z * math.sqrt(max(variance, 0.0)):
            low = theta
        else:
            high = theta
    return low


@pytest.mark.parametrize(
    ("nb", "cb", "nc", "cc"), [(10, 10, 10, 10), (5, 3, 5, 1), (10, 6, 10, 4), (3, 2, 3, 1),
                               (7, 0, 12, 5), (40, 31, 25, 12)]
)  # fmt: skip
def test_the_score_bound_matches_one_written_out(nb: int, cb: int, nc: int, cc: int) -> None:
    for confidence in (0.9, 0.95):
        found = float(score_difference_bounds([nb], [cb], [nc], [cc], confidence).lower[0])
        assert found == pytest.approx(_reference_lower(nb, cb, nc, cc, confidence), abs=1e-7)
        # the upper bound of the mirrored table is minus this lower bound
        mirrored = score_difference_bounds([nc], [cc], [nb], [cb], confidence).upper[0]
        assert float(mirrored) == pytest.approx(-found, abs=1e-9)


@pytest.mark.parametrize(
    ("n", "newcombe_alone", "now"), [(5, 0.0922, 0.0514), (10, 0.0847, 0.0563)]
)
def test_a_true_drop_of_d_passes_one_stimulus_about_alpha(
    n: int, newcombe_alone: float, now: float
) -> None:
    """Exactly, over every table of n trials a side: the largest probability, over the
    baseline's rate, that one stimulus whose rate truly drops by D = 0.25 passes
    (lower bound > −D). Newcombe's bound alone reached 9.2% and 8.5%."""
    cells = np.arange(n + 1)
    nb, cb, nc, cc = (np.broadcast_to(x, (n + 1, n + 1)) for x in (
        n, cells[:, None], n, cells[None, :]))  # fmt: skip
    lower, _ = difference_bounds(nb, cb, nc, cc, 0.95)
    worst = 0.0
    for rate in np.linspace(0.25, 1.0, 151):
        weight = np.outer(stats.binom.pmf(cells, n, rate), stats.binom.pmf(cells, n, rate - 0.25))
        worst = max(worst, float((weight * (lower > -0.25)).sum()))
    assert worst == pytest.approx(now, abs=5e-4)
    assert worst < newcombe_alone


def test_the_memo_gives_what_a_fresh_computation_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-process memo of score bounds: the same numbers as computed afresh, whichever
    tables came first; counts too large to pack are computed directly."""
    rng = np.random.default_rng(4)
    n = rng.integers(1, 60, size=(2, 3_000))
    c = rng.binomial(n, 0.6)
    fresh = score_difference_bounds(n[0], c[0], n[1], c[1], 0.95)
    paired._SCORE_MEMO.clear()
    first = paired._score_bounds(n[0, :1_000], c[0, :1_000], n[1, :1_000], c[1, :1_000], 0.95)
    both = paired._score_bounds(n[0], c[0], n[1], c[1], 0.95)
    assert np.array_equal(first[0], fresh.lower[:1_000])
    assert np.array_equal(both[0], fresh.lower) and np.array_equal(both[1], fresh.upper)
    # Full: it starts over with the tables asked for, those it knew among them included.
    paired._SCORE_MEMO.clear()
    monkeypatch.setattr(paired, "_SCORE_MEMO_MAX", 1_500)
    paired._score_bounds(n[0, :1_000], c[0, :1_000], n[1, :1_000], c[1, :1_000], 0.95)
    again = paired._score_bounds(n[0, 500:2_000], c[0, 500:2_000], n[1, 500:2_000],
                                 c[1, 500:2_000], 0.95)  # fmt: skip
    assert np.array_equal(again[0], fresh.lower[500:2_000])
    assert np.array_equal(again[1], fresh.upper[500:2_000])
    huge = paired._score_bounds([1 << 20], [1 << 19], [1 << 20], [1 << 19], 0.95)
    direct = score_difference_bounds([1 << 20], [1 << 19], [1 << 20], [1 << 19], 0.95)
    assert float(huge[0][0]) == float(direct.lower[0])
