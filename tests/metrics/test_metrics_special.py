"""The SciPy-free special functions of gate.metrics._special against scipy.special."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from gate.metrics._special import betainc_pair, log_gamma, normal_cdf


@pytest.mark.parametrize("scale", [1.0, 10.0, 100.0, 1e3, 1e4, 1e5])
def test_betainc_pair_matches_scipy(scale: float) -> None:
    rng = np.random.default_rng(int(scale))
    a = rng.uniform(0.05, 1.0, 4000) * scale + 0.01
    b = rng.uniform(0.05, 1.0, 4000) * scale + 0.01
    mean = a / (a + b)
    spread = np.sqrt(mean * (1 - mean) / (a + b + 1))
    # Most points where the distribution has its mass, some anywhere in [0, 1].
    x = np.clip(mean + rng.uniform(-6, 6, a.size) * spread, 0.0, 1.0)
    x[::4] = rng.uniform(0, 1, x[::4].size)
    lower, upper = betainc_pair(a, b, x)
    assert np.max(np.abs(lower - special.betainc(a, b, x))) <= 1e-12
    complement = special.betaincc(a, b, x)
    assert np.max(np.abs(upper - complement)) <= 1e-12
    # Each side keeps its relative precision when it is small (a tail of 1e-30 is not 0).
    small = (complement > 1e-250) & (complement < 1e-3)
    assert small.any()
    assert np.max(np.abs(upper[small] / complement[small] - 1)) <= 1e-11


def test_betainc_pair_binomial_tail_and_edges() -> None:
    # I_x(c, n-c+1) = P(X >= c), X ~ Bin(n, x): 3 of 5 at x = 0.3.
    expected = sum(math.comb(5, j) * 0.3**j * 0.7 ** (5 - j) for j in range(3, 6))
    lower, upper = betainc_pair(3, 3, 0.3)
    assert float(lower) == pytest.approx(expected, rel=1e-14)
    assert float(upper) == pytest.approx(1 - expected, rel=1e-14)
    lower, upper = betainc_pair([2.0, 2.0], [3.0, 3.0], [0.0, 1.0])
    assert lower.tolist() == [0.0, 1.0] and upper.tolist() == [1.0, 0.0]
    shaped, _ = betainc_pair(np.full((2, 3), 2.0), 3.0, np.linspace(0.1, 0.9, 3))
    assert shaped.shape == (2, 3)


def test_betainc_pair_past_the_continued_fraction_falls_back_to_scipy() -> None:
    a = np.array([3e8, 5.0])
    b = np.array([7e8, 5.0])
    x = np.array([0.30001, 0.5])
    lower, _ = betainc_pair(a, b, x)
    assert lower == pytest.approx(special.betainc(a, b, x), rel=1e-9)


def test_log_gamma_and_normal_cdf() -> None:
    x = np.array([0.01, 0.5, 1.0, 7.5, 1e6])
    assert log_gamma(x) == pytest.approx(special.gammaln(x), rel=1e-14)
    z = np.array([-40.0, -5.0, -1.959963984540054, 0.0, 0.3, 8.0])
    assert normal_cdf(z) == pytest.approx(special.ndtr(z), rel=1e-14, abs=0)


def test_few_entries_take_the_float_loop_with_the_same_values() -> None:
    # Up to _FLOAT_LOOP_SIZE entries the continued fraction runs in floats; the values
    # must not depend on the path.
    rng = np.random.default_rng(3)
    a = rng.uniform(0.1, 60.0, 40)
    b = rng.uniform(0.1, 60.0, 40)
    x = rng.uniform(0.0, 1.0, 40)
    vector, _ = betainc_pair(a, b, x)
    few = np.concatenate(
        [betainc_pair(a[i : i + 4], b[i : i + 4], x[i : i + 4])[0] for i in range(0, 40, 4)]
    )
    assert np.max(np.abs(few - vector)) <= 1e-15
    assert np.max(np.abs(few - special.betainc(a, b, x))) <= 1e-13
