"""Evaluating registry metrics: reference 003/004 worked examples, scorio 0.2.3 on real fixtures."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gate.ingest import load
from gate.metrics import (
    METRICS,
    MetricDataError,
    SuiteOutcomes,
    TrialUsage,
    evaluate,
    judge_stimuli,
    resolve,
    z_value,
)

scorio_eval = pytest.importorskip("scorio.eval")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "ingest" / "fixtures"
#: Rectangular real suites (every stimulus has the same trials; errors count as failures).
RECTANGULAR = [
    ROOT / "examples" / "passing" / "results.json",
    FIXTURES / "inspect" / "mock_reliability.json",
    FIXTURES / "tau-bench" / "gpt-4o-airline.trials.json",
    FIXTURES / "promptfoo" / "results.json",
    FIXTURES / "tau2" / "retail.results.json",
]
#: Ragged real suites (stimuli with different numbers of trials).
RAGGED = [
    FIXTURES / "vally" / "results.jsonl",
    FIXTURES / "tabular" / "plain.csv",
    FIXTURES / "junit" / "pytest-rerun.xml",
    FIXTURES / "junit" / "surefire-rerun.xml",
]
TOLERANCE = 1e-12
R_003 = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
R_003_CATEGORICAL = [[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]]
W_003 = [0.0, 0.5, 1.0]


def fixture_rows(path: Path) -> tuple[list[str], list[list[int]]]:
    """Each stimulus's counted outcomes in trial order (1 passed, 0 failed or errored)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, _ = load([str(path)])
    names, rows = [], []
    for record in table.summary().records:
        letters = record.outcomes()
        if letters:
            names.append(record.stimulus)
            rows.append([int(letter == "P") for letter in letters])
    return names, rows


def parameter_sets(name: str, k: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Parameters to try for one metric at budget k (taus, weights, powers, priors)."""
    info = METRICS[name]
    if info.parameter("k") is None:
        return [{}]
    base: dict[str, Any] = {"k": k}
    if name == "g_pass_at_k_tau":
        return [{**base, "tau": tau} for tau in (0.0, 0.34, 0.5, 2 / 3, 1.0)]
    if name == "threshold_spectrum_at_k":
        weights = rng.dirichlet(np.ones(k)) * 0.9
        return [{**base, "weights": [1 / k] * k}, {**base, "weights": weights.tolist()}]
    if name == "geo_spectrum_at_k":
        weights = (rng.dirichlet(np.ones(k)) * 0.8).tolist()
        return [base, {**base, "lam": 0.3, "weights": weights}, {**base, "lam": 1.0}]
    if name in ("geom_at_k", "geom_ds_at_k"):
        return [base, {**base, "pass_power": 1.0, "unanimous_power": 2.0}]
    sets = [base]
    if info.parameter("alpha0") is not None:
        sets.append({**base, "alpha0": 2.0, "beta0": 0.5})
    return sets


def scorio_point(name: str, R: Any, params: dict[str, Any]) -> float:
    function = getattr(scorio_eval, name)
    point = {key: value for key, value in params.items() if key not in ("alpha0", "beta0")}
    result = function(np.asarray(R), **point)
    return float(result[0]) if isinstance(result, tuple) else float(result)


def scorio_interval(name: str, R: Any, params: dict[str, Any], confidence: float) -> Any:
    return getattr(scorio_eval, f"{name}_ci")(
        np.asarray(R), **params, confidence=confidence, bounds=(0.0, 1.0)
    )


OUTCOME_METRICS = [name for name, info in METRICS.items() if info.family != "reliability"]
OUTCOME_METRICS = [name for name in OUTCOME_METRICS if not METRICS[name].usage]


@pytest.mark.parametrize("path", RECTANGULAR, ids=lambda p: p.name)
def test_matches_scorio_on_rectangular_fixtures(path: Path) -> None:
    names, rows = fixture_rows(path)
    R = np.array(rows)
    suite = SuiteOutcomes.from_ordered(rows, names)
    assert suite.rectangular
    rng = np.random.default_rng(len(rows))
    checked = 0
    for name in OUTCOME_METRICS:
        for k in range(1, R.shape[1] + 1):
            for params in parameter_sets(name, k, rng):
                value = evaluate(resolve(name, params), suite, confidence=0.9)
                assert value.value == pytest.approx(scorio_point(name, R, params), abs=TOLERANCE)
                alone = [scorio_point(name, R[i : i + 1], params) for i in range(len(rows))]
                np.testing.assert_allclose(value.per_stimulus, alone, atol=TOLERANCE, rtol=0)
                theirs = scorio_interval(name, R, params, 0.9)
                iv = value.interval
                assert iv is not None and iv.confidence == 0.9
                ours = (iv.center, iv.sigma, iv.lo, iv.hi)
                np.testing.assert_allclose(ours, tuple(theirs), atol=TOLERANCE, rtol=0)
                checked += 1
    assert checked > 50


def combine(per_row: list[Any], confidence: float) -> tuple[float, float, float, float]:
    """Suite posterior summary from independent per-stimulus (mu, sigma): mean, sqrt(Σ var)/M."""
    mus = np.array([float(r[0]) for r in per_row])
    sigmas = np.array([float(r[1]) for r in per_row])
    mu = float(mus.mean())
    sigma = float(np.sqrt(np.sum(sigmas**2)) / mus.size)
    z = z_value(confidence)
    return mu, sigma, min(max(mu - z * sigma, 0.0), 1.0), min(max(mu + z * sigma, 0.0), 1.0)


BLENDS: dict[str, Callable[[list[list[int]], dict[str, Any]], float]] = {
    # scorio's dataset-level forms, rebuilt from its per-row values (mean, then blend).
    "geom_ds_at_k": lambda rows, p: (
        np.mean([scorio_eval.pass_at_k(np.array([r]), p["k"]) for r in rows])
        ** p.get("pass_power", 0.5)
        * np.mean([scorio_eval.pass_hat_k(np.array([r]), p["k"]) for r in rows])
        ** p.get("unanimous_power", 0.5)
    ),
    "geo_spectrum_at_k": lambda rows, p: (
        np.mean([scorio_eval.pass_at_k(np.array([r]), p["k"]) for r in rows]) ** p.get("lam", 0.5)
        * np.mean(
            [
                scorio_eval.threshold_spectrum_at_k(np.array([r]), p["k"], p["weights"])
                if p.get("weights") is not None
                else scorio_eval.mg_pass_at_k(np.array([r]), p["k"])
                for r in rows
            ]
        )
        ** (1.0 - p.get("lam", 0.5))
    ),
    "geo_spectrum_star_at_k": lambda rows, p: math.sqrt(
        np.mean([scorio_eval.pass_at_k(np.array([r]), p["k"]) for r in rows])
        * np.mean([scorio_eval.mg_pass_at_k(np.array([r]), p["k"]) for r in rows])
    ),
}


@pytest.mark.parametrize("path", RAGGED, ids=lambda p: p.name)
def test_ragged_fixtures_use_each_stimulus_own_trials(path: Path) -> None:
    names, rows = fixture_rows(path)
    suite = SuiteOutcomes.from_ordered(rows, names)
    assert not suite.rectangular
    smallest = min(len(row) for row in rows)
    rng = np.random.default_rng(7)
    for name in OUTCOME_METRICS:
        for k in range(1, smallest + 1):
            for params in parameter_sets(name, k, rng):
                value = evaluate(resolve(name, params), suite, confidence=0.9)
                alone = [scorio_point(name, np.array([row]), params) for row in rows]
                np.testing.assert_allclose(value.per_stimulus, alone, atol=TOLERANCE, rtol=0)
                if METRICS[name].recipe.per_stimulus or name in ("bayes", "avg"):
                    assert value.value == pytest.approx(np.mean(alone), abs=TOLERANCE)
                    per_row = [scorio_interval(name, np.array([row]), params, 0.9) for row in rows]
                    assert value.interval is not None
                    iv = value.interval
                    np.testing.assert_allclose(
                        (iv.center, iv.sigma, iv.lo, iv.hi),
                        combine(per_row, 0.9),
                        atol=TOLERANCE,
                        rtol=0,
                    )
                else:
                    assert value.value == pytest.approx(BLENDS[name](rows, params), abs=TOLERANCE)


# Every worked example of reference 003, through the registry: (metric, params, R, w,
# expected suite value, expected scorio-style (mu, sigma, lo, hi) rounded as in 003).
EXAMPLES_003: list[tuple[str, dict[str, Any], Any, Any, float | None, tuple[float, ...] | None]] = [
    ("pass_at_k", {"k": 1}, R_003, None, 0.7, (0.642857, 0.118451, 0.4107, 0.875)),
    ("pass_at_k", {"k": 2}, R_003, None, 0.95, (0.839286, 0.097263, 0.6487, 1.0)),
    ("pass_hat_k", {"k": 1}, R_003, None, 0.7, (0.642857, 0.118451, 0.4107, 0.875)),
    ("pass_hat_k", {"k": 2}, R_003, None, 0.45, (0.446429, 0.146167, 0.1599, 0.7329)),
    ("unanimous_at_k", {"k": 2}, R_003, None, 0.45, (0.446429, 0.146167, 0.1599, 0.7329)),
    ("auc_at_k", {"k": 1}, R_003, None, 0.7, None),
    ("auc_at_k", {"k": 2}, R_003, None, 0.825, None),
    ("auc_at_k", {"k": 3}, R_003, None, 0.9, None),
    ("maj_at_k", {"k": 1}, R_003, None, 0.7, None),
    ("maj_at_k", {"k": 2}, R_003, None, 0.45, (0.446429, 0.146167, 0.1599, 0.7329)),
    ("maj_at_k", {"k": 3}, R_003, None, 0.85, (0.684524, 0.151958, 0.3867, 0.9824)),
    ("g_pass_at_k", {"k": 1}, R_003, None, 0.7, None),
    ("g_pass_at_k", {"k": 2}, R_003, None, 0.45, None),
    ("g_pass_at_k_tau", {"k": 2, "tau": 0.5}, R_003, None, 0.95, None),
    ("g_pass_at_k_tau", {"k": 2, "tau": 1.0}, R_003, None, 0.45, None),
    ("mg_pass_at_k", {"k": 2}, R_003, None, 0.45, None),
    ("mg_pass_at_k", {"k": 3}, R_003, None, 0.166667, None),
    ("geom_at_k", {"k": 2}, R_003, None, 0.647106, (0.610666, 0.133107, 0.3498, 0.8716)),
    ("geom_ds_at_k", {"k": 2}, R_003, None, 0.653835, (0.612112, 0.132755, 0.3519, 0.8723)),
    ("geo_spectrum_at_k", {"k": 3}, R_003, None, 0.408248, None),
    ("geo_spectrum_at_k", {"k": 3, "lam": 1.0}, R_003, None, 1.0, None),
    ("max_at_k", {"k": 2}, R_003, None, 0.95, (0.839286, 0.097263, 0.6487, 1.0)),
    ("bayes", {}, R_003, None, 0.642857, (0.642857, 0.118451, 0.4107, 0.875)),
    ("avg", {}, R_003, None, 0.7, (0.7, 0.165831, 0.375, 1.0)),
    ("bayes", {}, R_003_CATEGORICAL, W_003, 0.5625, (0.5625, 0.091998, None, None)),
    ("avg", {}, R_003_CATEGORICAL, W_003, 0.6, (0.6, 0.147196, 0.3115, 0.8885)),
    ("max_at_k", {"k": 2}, R_003_CATEGORICAL, W_003, 0.85, (0.75, 0.08812, 0.5773, 0.9227)),
]


@pytest.mark.parametrize(("name", "params", "R", "w", "value", "interval"), EXAMPLES_003)
def test_reference_003_worked_examples(
    name: str,
    params: dict[str, Any],
    R: Any,
    w: Any,
    value: float,
    interval: tuple[float | None, ...] | None,
) -> None:
    matrix = np.array(R)
    if w is None:
        suite = SuiteOutcomes.from_matrix(matrix)
    else:
        counts = np.stack([(matrix == j).sum(axis=1) for j in range(len(w))], axis=1)
        passes = (matrix == len(w) - 1).sum(axis=1)
        suite = SuiteOutcomes.from_counts(matrix.shape[1] * np.ones(2, int), passes)
        suite = suite.with_categories(counts, w)
    result = evaluate(resolve(name, params), suite)
    assert round(result.value, 6) == value  # type: ignore[arg-type]
    if interval is not None:
        assert result.interval is not None
        iv = result.interval
        ours = (round(iv.center, 6), round(iv.sigma, 6), round(iv.lo, 4), round(iv.hi, 4))  # type: ignore[arg-type]
        for got, expected in zip(ours, interval, strict=True):
            if expected is not None:
                assert got == expected


def test_interval_labels_say_method_level_and_estimand() -> None:
    tau = evaluate(resolve("g_pass_at_k_tau", {"k": 3, "tau": 0.5}), R_003, confidence=0.9)
    assert tau.interval is not None
    assert tau.interval.method == "beta posterior (uniform prior), normal approx."
    assert tau.interval.confidence == 0.9
    assert tau.interval.estimand.startswith("mean of latent P(Binomial(k, p_i) >= max(1, ceil")
    assert "not a new sample of stimuli" in tau.interval.estimand
    prior = evaluate(resolve("pass_at_k", {"k": 2, "alpha0": 2, "beta0": 0.5}), R_003)
    assert prior.interval.method == "beta posterior (Beta(2, 0.5) prior), normal approx."  # type: ignore[union-attr]
    geom = evaluate(resolve("geom_ds_at_k", {"k": 2}), R_003)
    assert "delta method" in geom.interval.method  # type: ignore[union-attr]
    bayes = evaluate(resolve("bayes"), R_003)
    assert bayes.interval.method.startswith("dirichlet posterior (Bayes@N")  # type: ignore[union-attr]
    assert bayes.estimator.startswith("Bayes@N posterior mean")


# --- reference 004 ------------------------------------------------------------------------

SUITE_004 = [
    [1, 1, 1, 0],  # 004: decay [100, 100, 100, 31]; graceful 60 (fail late); sd sqrt(3/16) -> 87
    [1, 0, 1, 0],  # 004: variance amplification 100 (half/half); decay (2/4)^4 -> 6; graceful 40
    [1, 1, 1, 1],  # 004: all pass: graceful 100, variance 0
    [0, 1, 1, 1],  # 004: fail early: graceful 90
    [0, 0, 0, 0],  # 004: all fail: graceful 0
]


def test_reference_004_worked_examples_per_stimulus_and_suite() -> None:
    suite = SuiteOutcomes.from_ordered(SUITE_004, names=list("abcde"))
    decay = evaluate(resolve("reliability.decay_curve"), suite)
    assert decay.per_stimulus.tolist() == [31, 6, 100, 31, 0]  # type: ignore[union-attr]
    assert decay.value == pytest.approx(168 / 5)
    variance = evaluate(resolve("reliability.variance_amplification"), suite)
    assert variance.per_stimulus.tolist() == [87, 100, 0, 87, 0]  # type: ignore[union-attr]
    assert variance.value == pytest.approx(274 / 5)
    graceful = evaluate(resolve("reliability.graceful_degradation"), suite)
    assert graceful.per_stimulus.tolist() == [60, 40, 100, 90, 0]  # type: ignore[union-attr]
    assert graceful.value == pytest.approx(58.0)
    for value in (decay, variance, graceful):
        assert value.per_stimulus.dtype == np.int64  # type: ignore[union-attr]
        assert value.interval is None
    # scope: stimuli with min: 80 -> a, b and e fail; the worst is e (0).
    assert judge_stimuli(graceful.per_stimulus, minimum=80) == ((0, 1, 4), 4, 0.0)  # type: ignore[arg-type]


def test_order_dependent_metrics_refuse_counts_only_suites() -> None:
    counts = SuiteOutcomes.from_counts([4, 4], [3, 2], names=["a", "b"])
    for name in ("reliability.decay_curve", "reliability.graceful_degradation"):
        with pytest.raises(MetricDataError, match="needs each stimulus's trials in order"):
            evaluate(resolve(name), counts)
    # Variance amplification needs no order: the same numbers as from the ordered runs.
    from_counts = evaluate(resolve("reliability.variance_amplification"), counts)
    ordered = SuiteOutcomes.from_ordered([[1, 1, 0, 1], [0, 1, 0, 1]])
    from_order = evaluate(resolve("reliability.variance_amplification"), ordered)
    assert from_counts.per_stimulus.tolist() == from_order.per_stimulus.tolist() == [87, 100]  # type: ignore[union-attr]


def test_reliability_on_real_fixtures_matches_summarize() -> None:
    from gate.metrics import summarize

    for path in RECTANGULAR + RAGGED:
        names, rows = fixture_rows(path)
        suite = SuiteOutcomes.from_ordered(rows, names)
        summaries = [summarize(row) for row in rows]
        for field in ("variance_amplification", "graceful_degradation"):
            value = evaluate(resolve(f"reliability.{field}"), suite)
            expected = [getattr(s, field) for s in summaries]
            assert value.per_stimulus.tolist() == expected  # type: ignore[union-attr]
            assert value.value == pytest.approx(np.mean(expected))
        decay = evaluate(resolve("reliability.decay_curve"), suite)
        assert decay.per_stimulus.tolist() == [s.decay_curve[-1] for s in summaries]  # type: ignore[union-attr]


# --- errors and helpers ------------------------------------------------------------------------


def test_k_above_a_stimulus_trials_names_it() -> None:
    suite = SuiteOutcomes.from_ordered([[1, 1, 0], [1, 0]], names=["long", "short one"])
    with pytest.raises(MetricDataError) as caught:
        evaluate(resolve("pass_at_k", {"k": 3}), suite)
    assert str(caught.value) == (
        "metric pass_at_k(k=3): k=3 exceeds the 2 trials of stimulus 'short one'; "
        "k can be at most 2 on this suite"
    )


def test_wrong_kind_of_data_is_refused() -> None:
    usage = TrialUsage.from_trials(["a"], [True], cost_usd=[0.1])
    with pytest.raises(MetricDataError, match="needs pass/fail outcomes"):
        evaluate(resolve("pass_at_k", {"k": 1}), usage)
    with pytest.raises(MetricDataError, match="needs per-trial usage values"):
        evaluate(resolve("cost_usd.total"), R_003)
    with pytest.raises(MetricDataError, match="no trial reports duration_s"):
        evaluate(resolve("duration_s.p95"), usage)


def test_bad_suite_data_is_refused_with_its_place() -> None:
    with pytest.raises(MetricDataError, match="stimulus 'b': outcomes is empty"):
        SuiteOutcomes.from_ordered([[1], []], names=["a", "b"])
    with pytest.raises(MetricDataError, match=r"stimulus 'b': outcomes\[1\] = 2"):
        SuiteOutcomes.from_ordered([[1], [0, 2]], names=["a", "b"])
    with pytest.raises(MetricDataError, match="every stimulus needs at least one trial"):
        SuiteOutcomes.from_counts([3, 0], [1, 0])
    with pytest.raises(MetricDataError, match="add up to 4 trials, not n = 5"):
        SuiteOutcomes.from_counts([5], [2]).with_categories([[1, 1, 2]], W_003)
    with pytest.raises(MetricDataError, match="names has 1 entries for 2 stimuli"):
        SuiteOutcomes.from_counts([5, 5], [2, 2], names=["a"])


def test_a_per_stimulus_failure_of_a_blend_names_the_stimulus() -> None:
    # pass^2 = 0 (and pass@2 = 1) on the second stimulus, raised to a negative power;
    # the suite's mean pass^2 (0.5) is fine.
    metric = resolve("geom_ds_at_k", {"k": 2, "pass_power": 1.0, "unanimous_power": -1.0})
    assert evaluate(metric, SuiteOutcomes.from_ordered([[1, 1], [1, 1]])).value == 1.0
    suite = SuiteOutcomes.from_ordered([[1, 1], [1, 0]], names=["ok", "broken"])
    with pytest.raises(MetricDataError, match="stimulus 'broken'"):
        evaluate(metric, suite)


def test_value_at_bound_and_judge_stimuli() -> None:
    value = evaluate(resolve("pass_hat_k", {"k": 2}), R_003)
    assert value.at("estimate") == value.value == pytest.approx(0.45)
    assert value.at("lower") == value.interval.lo  # type: ignore[union-attr]
    assert value.at("upper") == value.interval.hi  # type: ignore[union-attr]
    assert judge_stimuli([0.2, 0.9, 0.5], minimum=0.3, maximum=0.8) == ((0, 1), 0, 0.2)
    assert judge_stimuli([0.2, 0.95, 0.5], minimum=0.3, maximum=0.8) == ((0, 1), 1, 0.95)
    assert judge_stimuli([0.5, 0.4], minimum=0.3) == ((), 1, 0.4)
    assert judge_stimuli([0.3], minimum=0.3) == ((), 0, 0.3)  # on the bound passes
    with pytest.raises(ValueError, match="give minimum, maximum or both"):
        judge_stimuli([0.3])


def test_bayes_and_avg_of_each_stimulus_alone_match_the_metric_on_that_stimulus() -> None:
    """Each stimulus's Bayes@N and avg@N come from one vectorised form, not a loop over
    distinct rows (95,000 distinct rows took 20 s): the same values as the suite metric on
    each stimulus alone, and the hand formulas (c + 1)/(n + 2) and c/n for pass/fail."""
    from gate.metrics.categorical import (
        avg_counts,
        avg_each_counts,
        bayes_counts,
        bayes_each_counts,
    )

    rng = np.random.default_rng(5)
    counts = rng.integers(0, 7, size=(300, 4))
    counts[:, 0] += 1  # every row has trials
    weights = np.array([0.0, 0.25, 0.5, 1.0])
    prior = rng.integers(0, 3, size=(300, 4))
    rows = list(zip(counts, prior, strict=True))
    for each, alone in (
        (bayes_each_counts(counts, weights), [bayes_counts(r[None], weights).mu for r in counts]),
        (
            bayes_each_counts(counts, weights, prior),
            [bayes_counts(r[None], weights, p[None]).mu for r, p in rows],
        ),
        (avg_each_counts(counts, weights), [avg_counts(r[None], weights).mu for r in counts]),
    ):
        assert each == pytest.approx(alone, rel=1e-12, abs=1e-15)
    n = rng.integers(1_000, 1_000_000, size=2_000)
    c = rng.binomial(n, 0.8)
    suite = SuiteOutcomes.from_counts(n, c)
    bayes_value = evaluate(resolve("bayes"), suite)
    assert bayes_value.per_stimulus == pytest.approx((c + 1) / (n + 2), rel=1e-12)
    assert bayes_value.value == pytest.approx(np.mean((c + 1) / (n + 2)), rel=1e-12)
    assert evaluate(resolve("avg"), suite).per_stimulus == pytest.approx(c / n, rel=1e-12)
