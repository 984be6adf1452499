"""Worked examples of references 000, 001 and 002, reproduced through the pipeline's scoring."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate import metrics
from gate.config import build_config
from gate.gates import decide_gates
from gate.scoring import score_table
from gate.trials import GraderResult, SuiteSpec, Trial, TrialTable, grader_aggregate


def table_of(patterns: dict[str, str], spec: SuiteSpec | None = None) -> TrialTable:
    table = TrialTable()
    if spec is not None:
        table.declare_suite(spec)
    for name, pattern in patterns.items():
        for index, letter in enumerate(pattern):
            table.add(Trial(stimulus=name, trial=index, passed=letter == "P"))
    return table.finish()


# Reference 002: five code-generation tasks, three runs each.
TASKS_002 = {
    "Add null check to parser": "PPP",
    "Refactor auth middleware": "PFP",
    "Generate OpenAPI schema stub": "FPF",
    "Fix off-by-one in paginator": "FFF",
    "Add rate-limit header": "PPP",
}


def test_reference_002_suite_pass_at_3_and_pass_hat_3() -> None:
    suite = score_table(table_of(TASKS_002))
    assert suite.k == 3
    assert suite.pass_at_k == pytest.approx(0.8)
    assert suite.pass_hat_k == pytest.approx(0.4)
    per_task = {s.name: (s.pass_at_k, s.pass_hat_k) for s in suite.stimuli}
    assert per_task == {
        "Add null check to parser": (1.0, 1.0),
        "Refactor auth middleware": (1.0, 0.0),
        "Generate OpenAPI schema stub": (1.0, 0.0),
        "Fix off-by-one in paginator": (0.0, 0.0),
        "Add rate-limit header": (1.0, 1.0),
    }
    readings = {s.name: s.reading for s in suite.stimuli}
    assert readings["Add null check to parser"] == "capable and consistent"
    assert readings["Refactor auth middleware"] == "capable but flaky"
    assert readings["Fix off-by-one in paginator"] == "capability gap"
    # The suite reading: capable (0.8) but not consistent (0.4).
    assert suite.reading == "capable but flaky"


def test_reference_001_weighted_aggregate_below_threshold_fails() -> None:
    weights = {"file-exists": 1.0, "output-contains": 0.5}
    graders = (GraderResult("file-exists", 1.0, True), GraderResult("output-contains", 0.0, False))
    assert grader_aggregate(graders, weights) == pytest.approx(1.0 / 1.5)
    assert round(grader_aggregate(graders, weights), 2) == 0.67
    table = TrialTable()
    table.declare_suite(SuiteSpec("skill", grader_weights=weights, pass_threshold=0.7))
    table.add(Trial(stimulus="s", trial=0, suite="skill", graders=graders))
    suite = score_table(table.finish())
    (stimulus,) = suite.stimuli
    assert stimulus.passes == 0  # 0.67 < 0.7 → FAIL
    assert stimulus.aggregate_score == pytest.approx(2 / 3)
    assert not stimulus.unscored


def test_reference_001_flaky_stimulus_four_of_five() -> None:
    # Trial 1 ✔ Trial 2 ✔ Trial 3 ✘ Trial 4 ✔ Trial 5 ✔
    suite = score_table(table_of({"basic-test-generation": "PPFPP"}))
    (s,) = suite.stimuli
    assert (s.passes, s.trials, s.pass_rate) == (4, 5, 0.8)
    assert s.flaky and s.flakiness_percent == pytest.approx(20.0)
    assert round(s.pass_hat_k_plugin * 100, 1) == 32.8  # pass^5: 32.8%
    assert s.pass_at_k == 1.0  # unbiased pass@5 with n = k = 5 and c ≥ 1
    assert s.outcomes == "PPFPP"


def test_reference_001_three_of_five_is_sixty_percent() -> None:
    (s,) = score_table(table_of({"x": "PFPFP"})).stimuli
    assert s.pass_rate == pytest.approx(0.6)


def test_reference_000_multi_trial_example() -> None:
    # computeMultiTrialMetrics([true, true, false, true, true]) → rate 0.8, passToTheK 0.33, k 5.
    (s,) = score_table(table_of({"x": "PPFPP"})).stimuli
    assert s.pass_rate == 0.8
    assert round(s.pass_hat_k_plugin, 2) == 0.33
    assert s.trials == 5
    # 000 prints passAtK 0.99 and 001 prints 99.7%: neither is the unbiased estimator (1.0)
    # nor the naive 1-(1-p)^k; we report the unbiased one and name it.
    assert float(metrics.pass_at_k_naive(0.8, 5)) == pytest.approx(0.99968)


@pytest.mark.parametrize(
    ("rate", "at3", "at5"),
    [(0.9, 99.9, 100.0), (0.5, 87.5, 96.9), (0.3, 65.7, 83.2), (0.1, 27.1, 41.0)],
)
def test_reference_001_pass_at_k_table(rate: float, at3: float, at5: float) -> None:
    assert round(float(metrics.pass_at_k_naive(rate, 3)) * 100, 1) == at3
    assert round(float(metrics.pass_at_k_naive(rate, 5)) * 100, 1) == at5


@pytest.mark.parametrize(
    ("rate", "hat3", "hat5"),
    [(0.95, 85.7, 77.4), (0.9, 72.9, 59.0), (0.8, 51.2, 32.8), (0.7, 34.3, 16.8)],
)
def test_reference_001_pass_hat_k_table(rate: float, hat3: float, hat5: float) -> None:
    assert round(float(metrics.pass_to_the_k(rate, 3)) * 100, 1) == hat3
    assert round(float(metrics.pass_to_the_k(rate, 5)) * 100, 1) == hat5


def test_reference_000_pass_to_the_k_example() -> None:
    assert round(float(metrics.pass_to_the_k(0.8, 5)), 3) == 0.328
    assert float(metrics.pass_at_k_counts(5, 3, 5)) == 1.0


def test_reference_001_skill_score_is_mean_of_stimulus_scores() -> None:
    # SkillScore test-writer: basic-test-generation 0.95, edge-case-handling 0.75 → 0.85, passed.
    table = TrialTable()
    for t, score in enumerate([1.0, 0.9, 0.95]):
        table.add(Trial(stimulus="basic-test-generation", trial=t, score=score, passed=True))
    for t, score in enumerate([1.0, 0.25, 1.0]):
        table.add(Trial(stimulus="edge-case-handling", trial=t, score=score, passed=score == 1.0))
    suite = score_table(table.finish())
    scores = {s.name: s.aggregate_score for s in suite.stimuli}
    assert scores == pytest.approx({"basic-test-generation": 0.95, "edge-case-handling": 0.75})
    assert suite.score == pytest.approx(0.85)
    (gate,), _ = decide_gates(build_config({"gates": {"threshold": 0.7}}), suite)
    assert gate.passed and gate.value == pytest.approx(0.85)
    edge = next(s for s in suite.stimuli if s.name == "edge-case-handling")
    assert edge.flaky and round(edge.flakiness_percent, 1) == 33.3  # 1 in 3 trials fails
    assert round(float(metrics.pass_to_the_k(0.75, 3)) * 100, 1) == 42.2
    assert round(float(metrics.pass_to_the_k(0.95, 3)) * 100, 1) == 85.7


@pytest.mark.parametrize(
    ("percent", "band"),
    [
        (0.0, "stable"),
        (10.0, "mostly stable"),
        (20.0, "unreliable"),
        (33.3, "unreliable"),
        (45.0, "nearly random"),
    ],
)
def test_reference_001_flakiness_bands(percent: float, band: str) -> None:
    assert metrics.flakiness_band(percent) == band


def test_reference_002_numpy_snippet_matches(tmp_path: Path) -> None:
    # The reference's own numpy computation, as an independent implementation.
    import numpy as np

    results = np.array([[1 if c == "P" else 0 for c in p] for p in TASKS_002.values()])
    suite = score_table(table_of(TASKS_002))
    assert suite.pass_at_k == (results.sum(axis=1) >= 1).mean()
    assert suite.pass_hat_k == (results.sum(axis=1) == 3).mean()
