"""Cost, duration and tokens: hand-checked blocks, bootstraps against naive loops, coverage."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gate.ingest import load
from gate.metrics import (
    MetricDataError,
    TrialUsage,
    cost_summary,
    evaluate,
    mean_per_trial_interval,
    resolve,
    tokens_summary,
    usage_change,
    usage_summary,
)
from gate.metrics import usage as usage_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "passing" / "results.json"
PROMPTFOO = ROOT / "tests" / "ingest" / "fixtures" / "promptfoo" / "results.json"


def type7(values: list[float], q: float) -> float:
    """Hyndman & Fan definition 7, by hand: h = (n-1)q between order statistics."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * q
    low = math.floor(h)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (h - low) * (ordered[high] - ordered[low])


def passed_flags(path: Path) -> dict[tuple[str, int], bool]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, _ = load([str(path)])
    flags = {}
    for (_, stimulus), record in table.stimuli.items():
        for index, passed in zip(record.indices, record.passed, strict=True):
            flags[(stimulus, index)] = passed
    return flags


def test_example_results_usage_block_by_hand() -> None:
    document = json.loads(EXAMPLE.read_text())
    flags = passed_flags(EXAMPLE)
    keys, passed, cost, duration = [], [], [], []
    for stimulus in document["stimuli"]:
        for trial in stimulus["trials"]:
            keys.append(stimulus["id"])
            passed.append(flags[(stimulus["id"], trial["trial"])])
            cost.append(trial["metadata"].get("cost_usd"))
            duration.append(trial["metadata"].get("duration_s"))
    usage = TrialUsage.from_trials(keys, passed, cost_usd=cost, duration_s=duration)
    summary = usage_summary(usage)
    assert summary.tokens is None
    costs = [c for c in cost if c is not None]
    block = summary.cost_usd
    assert block is not None
    assert block.total == pytest.approx(math.fsum(costs), rel=1e-15)
    assert block.mean_per_trial == pytest.approx(math.fsum(costs) / len(costs), rel=1e-15)
    passes = sum(p for p, c in zip(passed, cost, strict=True) if c is not None)
    assert block.passes == passes and block.trials == len(costs) == 30
    assert block.per_pass == pytest.approx(math.fsum(costs) / passes, rel=1e-15)
    # Six stimuli: a (wide) bootstrap-t interval around the mean.
    interval = block.mean_per_trial_interval
    assert interval is not None and interval.lo <= block.mean_per_trial <= interval.hi
    assert interval.method == "studentized cluster bootstrap over stimuli (2000 resamples, seed 0)"
    durations = [d for d in duration if d is not None]
    times = summary.duration_s
    assert times is not None
    assert times.mean == pytest.approx(math.fsum(durations) / len(durations), rel=1e-15)
    assert times.p50 == pytest.approx(type7(durations, 0.5), rel=1e-15)
    assert times.p95 == pytest.approx(type7(durations, 0.95), rel=1e-15)
    assert times.quantile_method.startswith("linear")
    # The same numbers through the registry's dot paths.
    for path, expected in [
        ("cost_usd.total", block.total),
        ("cost_usd.mean_per_trial", block.mean_per_trial),
        ("cost_usd.per_pass", block.per_pass),
        ("duration_s.mean", times.mean),
        ("duration_s.p50", times.p50),
        ("duration_s.p95", times.p95),
    ]:
        value = evaluate(resolve(path), usage)
        assert value.value == expected and value.per_stimulus is None
    with pytest.raises(MetricDataError, match="no trial reports tokens"):
        evaluate(resolve("tokens.mean_per_trial"), usage)


def test_promptfoo_tokens_and_cost() -> None:
    document = json.loads(PROMPTFOO.read_text())
    results = document["results"]["results"]
    tokens = [r.get("response", {}).get("tokenUsage", {}).get("total") for r in results]
    cost = [r.get("cost") for r in results]
    usage = TrialUsage.from_trials(
        [r["testIdx"] for r in results], [bool(r["success"]) for r in results],
        cost_usd=cost, tokens=tokens,
    )  # fmt: skip
    reported = [t for t in tokens if t is not None]
    block = tokens_summary(usage)
    assert (block.total, block.trials, block.missing) == (
        float(sum(reported)),
        len(reported),
        len(tokens) - len(reported),
    )
    assert block.mean_per_trial == pytest.approx(sum(reported) / len(reported), rel=1e-15)
    value = evaluate(resolve("tokens.mean_per_trial"), usage)
    assert value.value == block.mean_per_trial


def test_per_pass_is_none_without_a_pass() -> None:
    usage = TrialUsage.from_trials(["a", "b"], [False, False], cost_usd=[0.5, 0.25])
    assert cost_summary(usage).per_pass is None
    assert evaluate(resolve("cost_usd.per_pass"), usage).value is None
    # Passes are counted among the trials that report a cost.
    usage = TrialUsage.from_trials(["a", "b", "c"], [True, True, False], cost_usd=[0.5, None, 1])
    assert cost_summary(usage).per_pass == 1.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cost_usd": [0.1, -0.2]}, r"cost_usd\[1\] = -0.2: usage values must be finite and >= 0"),
        ({"duration_s": [math.inf, 1]}, r"duration_s\[0\] = inf"),
        ({"tokens": [1, "many"]}, r"tokens\[1\] = 'many' is not a number"),
        ({"tokens": [1, True]}, r"tokens\[1\] = True is not a number"),
        ({"cost_usd": [0.1]}, r"cost_usd has shape \(1,\); expected one value per trial \(2\)"),
    ],
)
def test_bad_usage_values_name_the_field_and_trial(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrialUsage.from_trials(["a", "b"], [True, False], **kwargs)


def test_bad_trial_keys_and_flags() -> None:
    with pytest.raises(ValueError, match="at least one trial"):
        TrialUsage.from_trials([], [])
    with pytest.raises(ValueError, match="one flag per trial"):
        TrialUsage.from_trials(["a", "b"], [True])
    with pytest.raises(ValueError, match="booleans"):
        TrialUsage.from_trials(["a", "b"], [1, 2])
    with pytest.raises(ValueError, match="hashable"):
        TrialUsage.from_trials([["a"], ["b"]], [1, 0])
    with pytest.raises(ValueError, match="overflows"):
        cost_summary(TrialUsage.from_trials(["a", "b"], [1, 1], cost_usd=[1e308, 1e308]))


# --- the bootstraps against naive loops on the same random draws ------------------------------


def naive_bootstrap_t(
    sums: np.ndarray, counts: np.ndarray, draws: np.ndarray, confidence: float
) -> tuple[float, float]:
    groups = sums.size
    estimate = sums.sum() / counts.sum()

    def se(s: np.ndarray, m: np.ndarray) -> float:
        ratio = s.sum() / m.sum()
        return math.sqrt(groups / (groups - 1) * sum(((s - ratio * m) / m.sum()) ** 2))

    pivots = []
    for row in draws:
        s, m = sums[row], counts[row]
        spread = se(s, m)
        change = s.sum() / m.sum() - estimate
        pivots.append(change / spread if spread > 0 else math.copysign(math.inf, change))
    tail = (1 - confidence) / 2
    upper, lower = np.quantile(pivots, [1 - tail, tail], method="inverted_cdf")
    own = se(sums, counts)
    return max(0.0, estimate - upper * own), estimate - lower * own


def test_mean_interval_is_the_studentized_cluster_bootstrap() -> None:
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 5, size=12)
    stimulus = np.repeat(np.arange(12), sizes)
    values = rng.lognormal(-3, 1, size=stimulus.size)
    iv = mean_per_trial_interval(values, stimulus, 0.9, resamples=500, seed=4)
    assert iv is not None
    sums = np.bincount(stimulus, weights=values)
    counts = np.bincount(stimulus).astype(float)
    draws = np.random.default_rng(4).integers(0, 12, size=(500, 12), dtype=np.int32)
    lo, hi = naive_bootstrap_t(sums, counts, draws, 0.9)
    assert iv.lo == pytest.approx(lo, rel=1e-12) and iv.hi == pytest.approx(hi, rel=1e-12)
    assert (iv.confidence, iv.resamples, iv.seed) == (0.9, 500, 4)
    assert iv.method == "studentized cluster bootstrap over stimuli (500 resamples, seed 4)"
    assert "over stimuli like these" in iv.estimand
    # NaN values are left out, not counted as zero.
    with_missing = np.append(values, np.nan)
    again = mean_per_trial_interval(
        with_missing, np.append(stimulus, 0), 0.9, resamples=500, seed=4
    )
    assert again == iv
    # Fewer than five stimuli: no interval.
    assert mean_per_trial_interval(values[:9], np.arange(9) % 4) is None
    assert mean_per_trial_interval(values[:9], np.arange(9) % 5) is not None
    # No spread at all: a zero-width interval at the estimate.
    flat = mean_per_trial_interval(np.full(20, 0.25), np.arange(20))
    assert flat is not None and (flat.lo, flat.hi) == (0.25, 0.25)


def test_paired_changes_match_naive_loops() -> None:
    rng = np.random.default_rng(5)
    keys = [f"s{i}" for i in range(25)]
    now_keys = [*np.repeat(keys, 3).tolist(), "only-now"]
    before_keys = [*np.repeat(keys, 2).tolist(), "only-before"]
    effect = np.exp(rng.normal(0, 0.7, 25))
    now_cost = np.append(np.repeat(effect, 3) * rng.lognormal(0, 0.3, 75) * 1.1, 99.0)
    before_cost = np.append(np.repeat(effect, 2) * rng.lognormal(0, 0.3, 50), 99.0)
    now_time = np.append(np.repeat(effect, 3) * rng.lognormal(3, 0.4, 75), 1e4)
    before_time = np.append(np.repeat(effect, 2) * rng.lognormal(3, 0.4, 50), 1e4)
    now = TrialUsage.from_trials(now_keys, [True] * 76, cost_usd=now_cost, duration_s=now_time)
    before = TrialUsage.from_trials(
        before_keys, [True] * 51, cost_usd=before_cost, duration_s=before_time
    )
    comparison = usage_change(now, before, 0.9, resamples=400, seed=9)
    cost, p95 = comparison.cost_per_trial, comparison.duration_p95
    assert cost is not None and p95 is not None
    assert cost.stimuli == p95.stimuli == 25  # the unshared stimuli take no part
    assert cost.current == pytest.approx(now_cost[:75].mean(), rel=1e-12)
    assert cost.baseline == pytest.approx(before_cost[:50].mean(), rel=1e-12)
    assert cost.estimate == pytest.approx(cost.current - cost.baseline, rel=1e-12)
    assert p95.current == pytest.approx(type7(now_time[:75].tolist(), 0.95), rel=1e-12)
    assert p95.baseline == pytest.approx(type7(before_time[:50].tolist(), 0.95), rel=1e-12)
    # The same resamples, by hand: stimuli drawn with replacement, once for both runs.
    draws = np.random.default_rng(9).integers(0, 25, size=(400, 25), dtype=np.int32)
    now_cluster, before_cluster = np.repeat(np.arange(25), 3), np.repeat(np.arange(25), 2)
    changes, pivots = [], []
    now_sum = np.bincount(now_cluster, weights=now_cost[:75])
    before_sum = np.bincount(before_cluster, weights=before_cost[:50])

    def ratio_and_terms(s: np.ndarray, m: np.ndarray) -> tuple[float, np.ndarray]:
        ratio = s.sum() / m.sum()
        return ratio, (s - ratio * m) / m.sum()

    def spread(row: np.ndarray) -> tuple[float, float]:
        r_now, d_now = ratio_and_terms(now_sum[row], np.full(25, 3.0))
        r_before, d_before = ratio_and_terms(before_sum[row], np.full(25, 2.0))
        return r_now - r_before, math.sqrt(25 / 24 * np.sum((d_now - d_before) ** 2))

    delta, own = spread(np.arange(25))
    for row in draws:
        weights = np.bincount(row, minlength=25)
        pooled_now = np.repeat(now_time[:75], weights[now_cluster])
        pooled_before = np.repeat(before_time[:50], weights[before_cluster])
        changes.append(np.quantile(pooled_now, 0.95) - np.quantile(pooled_before, 0.95))
        change, se = spread(row)
        pivots.append((change - delta) / se)
    assert (p95.lo, p95.hi) == pytest.approx(tuple(np.quantile(changes, [0.05, 0.95])), rel=1e-12)
    upper, lower = np.quantile(pivots, [0.95, 0.05], method="inverted_cdf")
    assert cost.lo == pytest.approx(delta - upper * own, rel=1e-12)
    assert cost.hi == pytest.approx(delta - lower * own, rel=1e-12)
    assert cost.method.startswith("studentized cluster bootstrap over stimuli, paired")
    assert p95.method.startswith("percentile cluster bootstrap over shared stimuli")


def test_paired_change_needs_shared_stimuli() -> None:
    now = TrialUsage.from_trials(["a", "b"], [1, 1], cost_usd=[2.0, 4.0])
    before = TrialUsage.from_trials(["c"], [1], cost_usd=[1.0], duration_s=[3.0])
    assert usage_change(now, before) == (None, None)
    before = TrialUsage.from_trials(["a", "b", "a"], [1, 1, 1], cost_usd=[1.0, 3.0, None])
    change = usage_change(now, before).cost_per_trial
    assert change is not None
    assert (change.estimate, change.stimuli, change.lo, change.hi) == (1.0, 2, None, None)


def test_resampled_quantile_is_exact_against_expansion() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        groups = int(rng.integers(1, 9))
        sizes = rng.integers(1, 30, groups)
        values = np.round(rng.lognormal(0, 1, sizes.sum()), 1)  # ties on purpose
        cluster = np.repeat(np.arange(groups), sizes)
        q = float(rng.choice([0.0, 0.5, 0.95, 0.99, 1.0]))
        trials = usage_module._SortedTrials.of(values, cluster, groups, q)
        weights = rng.integers(0, 4, size=(6, groups)).astype(float)
        weights[:, 0] += 1
        got = usage_module._resampled_quantile(trials, weights, q)
        for row in range(6):
            expanded = np.repeat(values, weights[row, cluster].astype(int))
            assert got[row] == pytest.approx(np.quantile(expanded, q), abs=1e-12)


# --- coverage by seeded simulation (lognormal truths) ----------------------------------------


def test_mean_interval_coverage_on_lognormal_costs() -> None:
    """Nominal 95%; the full table (bench/usage_coverage.py) is in docs/metric-gates-draft.md."""
    rng = np.random.default_rng(2026)
    stimuli, trials, between, within = 20, 3, 0.5, 0.5
    truth = math.exp(-3 + between**2 / 2 + within**2 / 2)
    codes = np.repeat(np.arange(stimuli), trials)
    hits = 0
    replications = 300
    for replication in range(replications):
        effect = rng.normal(-3, between, stimuli)
        cost = np.exp(np.repeat(effect, trials) + rng.normal(0, within, stimuli * trials))
        iv = mean_per_trial_interval(cost, codes, seed=replication)
        assert iv is not None
        hits += iv.lo <= truth <= iv.hi
    assert 0.89 <= hits / replications <= 0.99


def test_paired_change_coverage_on_lognormal_runs() -> None:
    rng = np.random.default_rng(7)
    stimuli, trials, between, within, shift = 30, 3, 0.5, 0.5, 0.2
    spread = math.hypot(between, within)
    z95 = 1.6448536269514722
    p95_truth = math.exp(z95 * spread + shift) - math.exp(z95 * spread)
    cost_truth = math.exp(-3 + shift + spread**2 / 2) - math.exp(-3 + spread**2 / 2)
    keys = np.repeat(np.arange(stimuli), trials).tolist()
    cost_hits = p95_hits = 0
    replications = 150
    for replication in range(replications):
        effect = np.repeat(rng.normal(0, between, stimuli), trials)

        def run(offset: float, effect: np.ndarray = effect) -> np.ndarray:
            return np.exp(effect + offset + rng.normal(0, within, stimuli * trials))

        now = TrialUsage.from_trials(
            keys, [True] * len(keys), cost_usd=run(shift - 3), duration_s=run(shift)
        )
        before = TrialUsage.from_trials(
            keys, [True] * len(keys), cost_usd=run(-3), duration_s=run(0)
        )
        comparison = usage_change(now, before, seed=replication)
        cost, p95 = comparison.cost_per_trial, comparison.duration_p95
        assert cost is not None and p95 is not None
        cost_hits += cost.lo <= cost_truth <= cost.hi  # type: ignore[operator]
        p95_hits += p95.lo <= p95_truth <= p95.hi  # type: ignore[operator]
    assert 0.88 <= cost_hits / replications <= 0.99
    assert 0.88 <= p95_hits / replications <= 1.0
