"""Counts forms: ragged suites, and matrix form == counts form."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from gate import metrics

rng = np.random.default_rng(7)
R = (rng.random((25, 6)) < rng.beta(0.8, 0.8, size=(25, 1))).astype(int)
N = R.shape[1]
C = R.sum(axis=1)


@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_point_metrics_matrix_equals_counts(k: int) -> None:
    per_stimulus = {
        "pass_at_k": metrics.pass_at_k_counts(N, C, k),
        "pass_hat_k": metrics.pass_hat_k_counts(N, C, k),
        "g_pass_at_k": metrics.g_pass_at_k_counts(N, C, k),
        "mg_pass_at_k": metrics.mg_pass_at_k_counts(N, C, k),
        "maj_at_k": metrics.maj_at_k_counts(N, C, k),
        "auc_at_k": metrics.auc_at_k_counts(N, C, k),
        "geom_at_k": metrics.geom_at_k_counts(N, C, k),
    }
    for name, values in per_stimulus.items():
        assert values.shape == C.shape
        assert getattr(metrics, name)(R, k) == pytest.approx(values.mean(), abs=1e-14), name
    assert metrics.g_pass_at_k_tau(R, k, 0.4) == pytest.approx(
        metrics.g_pass_at_k_tau_counts(N, C, k, 0.4).mean(), abs=1e-14
    )
    weights = np.full(k, 1.0 / k)
    assert metrics.threshold_spectrum_at_k(R, k, weights) == pytest.approx(
        metrics.threshold_spectrum_at_k_counts(N, C, k, weights).mean(), abs=1e-14
    )
    assert metrics.geom_ds_at_k(R, k) == pytest.approx(metrics.geom_ds_at_k_counts(N, C, k))
    assert metrics.geo_spectrum_at_k(R, k) == pytest.approx(
        metrics.geo_spectrum_at_k_counts(N, C, k)
    )
    assert metrics.geo_spectrum_star_at_k(R, k) == pytest.approx(
        metrics.geo_spectrum_star_at_k_counts(N, C, k), abs=1e-14
    )


@pytest.mark.parametrize("k", [1, 3, 6])
def test_interval_metrics_matrix_equals_counts(k: int) -> None:
    pairs = [
        (metrics.pass_at_k_ci(R, k), metrics.pass_at_k_ci_counts(N, C, k)),
        (metrics.pass_hat_k_ci(R, k), metrics.pass_hat_k_ci_counts(N, C, k)),
        (metrics.g_pass_at_k_ci(R, k), metrics.g_pass_at_k_ci_counts(N, C, k)),
        (metrics.g_pass_at_k_tau_ci(R, k, 0.7), metrics.g_pass_at_k_tau_ci_counts(N, C, k, 0.7)),
        (metrics.mg_pass_at_k_ci(R, k), metrics.mg_pass_at_k_ci_counts(N, C, k)),
        (metrics.maj_at_k_ci(R, k), metrics.maj_at_k_ci_counts(N, C, k)),
        (metrics.auc_at_k_ci(R, k), metrics.auc_at_k_ci_counts(N, C, k)),
        (metrics.geom_at_k_ci(R, k), metrics.geom_at_k_ci_counts(N, C, k)),
        (metrics.geom_ds_at_k_ci(R, k), metrics.geom_ds_at_k_ci_counts(N, C, k)),
        (metrics.geo_spectrum_at_k_ci(R, k), metrics.geo_spectrum_at_k_ci_counts(N, C, k)),
        (
            metrics.geo_spectrum_star_at_k_ci(R, k),
            metrics.geo_spectrum_star_at_k_ci_counts(N, C, k),
        ),
        (
            metrics.threshold_spectrum_at_k_ci(R, k, np.full(k, 0.5 / k)),
            metrics.threshold_spectrum_at_k_ci_counts(N, C, k, np.full(k, 0.5 / k)),
        ),
    ]
    for matrix_form, counts_form in pairs:
        assert tuple(matrix_form) == pytest.approx(tuple(counts_form), abs=1e-14)


def test_categorical_matrix_equals_counts() -> None:
    generator = np.random.default_rng(5)
    w = np.array([0.0, 0.25, 1.0, -0.5])
    Rc = generator.integers(0, 4, size=(15, 7))
    prior_outcomes = generator.integers(0, 4, size=(15, 2))
    counts = np.stack([(Rc == j).sum(axis=1) for j in range(4)], axis=1)
    prior = np.stack([(prior_outcomes == j).sum(axis=1) for j in range(4)], axis=1)
    assert tuple(metrics.bayes(Rc, w, prior_outcomes)) == pytest.approx(
        tuple(metrics.bayes_counts(counts, w, prior))
    )
    assert tuple(metrics.bayes_ci(Rc, w)) == pytest.approx(
        tuple(metrics.bayes_ci_counts(counts, w))
    )
    assert tuple(metrics.avg(Rc, w)) == pytest.approx(tuple(metrics.avg_counts(counts, w)))
    assert tuple(metrics.avg_ci(Rc, w)) == pytest.approx(tuple(metrics.avg_ci_counts(counts, w)))
    for k in range(1, 8):
        assert metrics.max_at_k(Rc, k, w) == pytest.approx(
            metrics.max_at_k_counts(counts, k, w).mean()
        )
        assert tuple(metrics.max_at_k_ci(Rc, k, w, prior_outcomes)) == pytest.approx(
            tuple(metrics.max_at_k_ci_counts(counts, k, w, prior))
        )


def test_ragged_pass_at_k_is_per_stimulus_exact() -> None:
    n = np.array([5, 3, 8, 2])
    c = np.array([2, 3, 0, 1])
    values = metrics.pass_at_k_counts(n, c, 2)
    expected = [1 - Fraction(comb(nn - cc, 2), comb(nn, 2)) for nn, cc in zip(n, c, strict=True)]
    assert values == pytest.approx([float(e) for e in expected], abs=1e-15)


def test_ragged_suite_equals_concatenated_blocks() -> None:
    # A ragged suite of two uniform blocks: the suite mean is the stimulus-weighted mean.
    block_a = (rng.random((6, 4)) < 0.5).astype(int)
    block_b = (rng.random((9, 7)) < 0.7).astype(int)
    n = np.concatenate([np.full(6, 4), np.full(9, 7)])
    c = np.concatenate([block_a.sum(1), block_b.sum(1)])
    for k in (1, 2, 4):
        expected = (6 * metrics.maj_at_k(block_a, k) + 9 * metrics.maj_at_k(block_b, k)) / 15
        assert metrics.maj_at_k_counts(n, c, k).mean() == pytest.approx(expected, abs=1e-14)


def test_ragged_bayes_uses_each_rows_total() -> None:
    counts = np.array([[1, 4], [2, 1]])
    mu, sigma = metrics.bayes_counts(counts)
    # Row posteriors Dirichlet(2, 5) and Dirichlet(3, 2): means 5/7 and 2/5.
    assert mu == pytest.approx((5 / 7 + 2 / 5) / 2)
    var = (5 / 7 * 2 / 7) / 8 + (2 / 5 * 3 / 5) / 6
    assert sigma == pytest.approx(np.sqrt(var) / 2)


def test_ragged_k_too_large_names_the_row() -> None:
    with pytest.raises(ValueError, match=r"k=5 exceeds the number of trials n=3 for row 2"):
        metrics.pass_at_k_counts([5, 6, 3], [1, 2, 3], 5)
    with pytest.raises(ValueError, match=r"k=4 exceeds the number of trials n=3 for row 1"):
        metrics.maj_at_k_ci_counts([5, 3], [1, 2], 4)
    with pytest.raises(ValueError, match=r"n=2 for row 1"):
        metrics.max_at_k_counts([[1, 4], [1, 1]], 3)


def test_plugin_and_unbiased_pass_hat_k_are_both_available() -> None:
    assert float(metrics.pass_hat_k_plugin_counts(5, 4, 5)) == pytest.approx(0.32768)
    assert float(metrics.pass_hat_k_counts(5, 4, 5)) == 0.0
    assert float(metrics.pass_hat_k_counts(10, 8, 2)) == pytest.approx(8 * 7 / (10 * 9))
    # The plug-in may use k > n; the unbiased estimator may not.
    assert float(metrics.pass_hat_k_plugin_counts(2, 1, 3)) == 0.125
