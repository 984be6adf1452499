"""The gate kind ``metric`` through the pipeline, checked against scorio 0.2.3 and the
worked examples of references 003 and 004."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scorio import eval as scorio

from gate.cli import main
from gate.config import build_config
from gate.errors import ConfigError
from gate.metrics import suite_interval
from gate.pipeline import CheckRequest, run_check
from gate.report import wording
from gate.report.json_report import build_report
from gate.schemas import validator
from tests.conftest import EXAMPLES, trials_of

PASSING = EXAMPLES / "passing" / "results.json"

CONFIG = {
    "k": 3,
    "gates": {
        "metric": [
            {"metric": "g_pass_at_k_tau", "k": 3, "tau": 0.67, "min": 0.5, "bound": "lower"},
            {"metric": "bayes", "min": 0.7, "bound": "lower"},
            {"metric": "mg_pass_at_k", "min": 0.5},
            {"metric": "reliability.graceful_degradation", "scope": "stimuli", "min": 80},
            {"metric": "reliability.variance_amplification", "max": 50},
        ]
    },
}


def matrix_of_passing() -> tuple[np.ndarray, list[str]]:
    """examples/passing as scorio's stimuli × trials matrix (every stimulus has 5 trials)."""
    outcome = run_check(CheckRequest((str(PASSING),), build_config({"gates": {"pass_rate": 0}})))
    rows = [[letter == "P" for letter in s.outcomes] for s in outcome.suite.stimuli]
    return np.array(rows, dtype=int), [s.name for s in outcome.suite.stimuli]


def test_every_family_gates_a_real_fixture_with_scorio_values() -> None:
    outcome = run_check(CheckRequest((str(PASSING),), build_config(CONFIG)))
    tau, bayes, mg, graceful, variance = outcome.gates
    R, _ = matrix_of_passing()
    assert tau.value == pytest.approx(scorio.g_pass_at_k_tau(R, 3, 0.67), abs=1e-12)
    # G-Pass@k's unbiased estimator is a U-statistic of degree k: the gate decides on the
    # suite interval at n_eff = M·min(nᵢ)/k, as the pass^k gate does, not on scorio's
    # posterior summary (which undercovers: test_u_statistic_metric_gates_are_honest).
    honest = suite_interval(tau.value, [R.shape[1]] * R.shape[0], k=3)
    assert (tau.lower, tau.upper) == pytest.approx((honest.lo, honest.hi), abs=1e-12)
    n_eff = R.shape[0] * 5 / 3  # M stimuli × 5 trials / k
    assert tau.method == f"mid-p at the suite estimate, n_eff = M·min(nᵢ)/k = {n_eff:.4g}"
    _, _, lo, hi = scorio.g_pass_at_k_tau_ci(R, 3, 0.67, confidence=0.95, bounds=(0.0, 1.0))
    assert (tau.lower, tau.upper) != pytest.approx((lo, hi), abs=1e-6)
    assert tau.basis == "interval"
    mu, _, lo, hi = scorio.bayes_ci(R, confidence=0.95, bounds=(0.0, 1.0))
    assert bayes.value == pytest.approx(mu, abs=1e-12)
    assert (bayes.lower, bayes.upper) == pytest.approx((lo, hi), abs=1e-12)
    assert bayes.outcome == "pass"  # lower bound 0.729 ≥ 0.7
    assert mg.value == pytest.approx(scorio.mg_pass_at_k(R, 3), abs=1e-12)
    assert mg.basis == "point estimate" and mg.outcome == "pass"
    # Reference 004 by hand: edge-case-handling runs P P F P P, so graceful degradation
    # is round(100 · (1 + 2 + 4 + 5) / 15) = 80 (the worst stimulus, at the target).
    assert graceful.scope == "stimuli" and graceful.value == 80.0
    assert graceful.subject == "edge-case-handling" and graceful.outcome == "pass"
    # variance amplification: 5 stimuli at 0, one at round(200 · sqrt(4 · 1) / 5) = 80;
    # the suite value is the mean over stimuli: 80 / 6.
    assert variance.value == pytest.approx(80 / 6)
    assert variance.outcome == "pass"
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    records = {g["metric"]: g for g in report["gates"]}
    assert records["g_pass_at_k_tau"]["metric_params"] == {"k": 3, "tau": 0.67}
    assert records["reliability.graceful_degradation"]["failing"] == []


def test_a_stimulus_gate_names_the_failing_stimuli() -> None:
    config = {"gates": {"metric": {"metric": "reliability.graceful_degradation", "scope": "stimuli",
                                   "min": 90}}}  # fmt: skip
    outcome = run_check(CheckRequest((str(PASSING),), build_config(config)))
    (gate,) = outcome.gates
    assert gate.outcome == "fail" and gate.failing == ("edge-case-handling",)
    assert gate.value == 80.0
    # One failing stimulus is its own worst: its name was said twice.
    assert wording.gate_sentence(gate).startswith(
        "Fail: 1 stimulus is outside the target (≥ 90) on reliability.graceful_degradation: "
        "edge-case-handling (at 80). "
    )


def test_a_fraction_on_a_whole_percent_metric_is_refused() -> None:
    """graceful_degradation is 0-100: min: 0.8 was taken as 0.8 of a percent, a gate that
    only an all-failing stimulus misses, where 80 was meant."""
    for direction, target, written in (("min", 0.8, 80), ("max", 0.25, 25)):
        for metric in ("reliability.graceful_degradation", "reliability.variance_amplification"):
            entry = {"metric": metric, "scope": "stimuli", direction: target}
            with pytest.raises(ConfigError) as caught:
                build_config({"gates": {"metric": entry}})
            assert (
                f"gate metric {metric!r} is in whole percents (0 to 100); {direction}: "
                f"{target:g} reads as a fraction: write {direction}: {written}"
            ) in str(caught.value)
    for target in (0, 1, 80):  # whole percents, 0 and 1 included
        build_config({"gates": {"metric": {"metric": "reliability.graceful_degradation",
                                           "scope": "stimuli", "min": target}}})  # fmt: skip


def test_unknown_names_and_parameters_exit_2_with_a_suggestion(tmp_path: Path) -> None:
    config = tmp_path / "gate.yml"
    config.write_text("gates:\n  metric:\n    - {metric: g_pass_at_k_tua, k: 3, min: 0.5}\n")
    result = CliRunner().invoke(main, ["check", str(PASSING), "--config", str(config)])
    assert result.exit_code == 2
    assert "unknown metric 'g_pass_at_k_tua'; did you mean 'g_pass_at_k_tau'?" in result.stderr
    config.write_text(
        "gates:\n  metric:\n    - {metric: g_pass_at_k_tau, k: 3, tua: 0.5, min: 0.5}\n"
    )
    result = CliRunner().invoke(main, ["check", str(PASSING), "--config", str(config)])
    assert result.exit_code == 2 and "did you mean 'tau'" in result.stderr
    with pytest.raises(ConfigError, match=r"needs k|k \(required\)"):
        build_config({"gates": {"metric": {"metric": "pass_hat_k", "min": 0.5}}})
    with pytest.raises(ConfigError, match="takes bound: lower"):
        build_config(
            {"k": 2, "gates": {"metric": {"metric": "bayes", "min": 0.5, "bound": "upper"}}}
        )


def test_order_dependent_metrics_are_refused_on_counts(tmp_path: Path) -> None:
    counts = tmp_path / "counts.jsonl"
    counts.write_text('{"suite": "s", "stimulus": "a", "n": 5, "c": 4}\n', encoding="utf-8")
    config = {"gates": {"metric": {"metric": "reliability.graceful_degradation", "min": 50}}}
    from gate.ingest import IngestOptions

    pytest.importorskip("gate.ingest.counts")
    with pytest.raises(ConfigError, match="order"):
        run_check(CheckRequest((str(counts),), build_config(config), IngestOptions("counts")))


def test_reliability_of_every_stimulus_in_the_json_report(write_jsonl) -> None:
    """Reference 004's examples: pass, pass, pass, fail → curve [100, 100, 100, 31],
    graceful degradation 60; fail, pass, pass, pass → 90; variance amplification of
    pass, fail, pass, fail → 100."""
    records = trials_of("late", "PPPF") + trials_of("early", "FPPP") + trials_of("even", "PFPF")
    outcome = run_check(CheckRequest((str(write_jsonl(records)),), build_config({})))
    report = build_report(outcome)
    by_name = {s["name"]: s["reliability"] for s in report["stimuli"]}
    assert by_name["late"] == {
        "decay_curve": [100, 100, 100, 31],
        "variance_amplification": 87,
        "graceful_degradation": 60,
    }
    assert by_name["early"]["graceful_degradation"] == 90
    assert by_name["even"]["variance_amplification"] == 100
    json.dumps(report)  # every value is JSON


def test_the_action_outputs_each_metric_gates_value() -> None:
    outcome = run_check(CheckRequest((str(PASSING),), build_config(CONFIG)))
    values = json.loads(str(outcome.headline()["metrics"]))
    assert set(values) == {
        "g_pass_at_k_tau(k=3, tau=0.67)",
        "bayes",
        "mg_pass_at_k(k=3)",
        "reliability.graceful_degradation",
        "reliability.variance_amplification",
    }
    assert values["reliability.graceful_degradation"] == 80.0
    named = {"gates": {"metric": {"metric": "bayes", "min": 0.5, "name": "Bayes@N"}}}
    outcome = run_check(CheckRequest((str(PASSING),), build_config(named)))
    assert list(json.loads(str(outcome.headline()["metrics"]))) == ["Bayes@N"]


def test_the_example_in_docs_metrics_md_is_a_valid_configuration() -> None:
    import yaml

    doc = (Path(__file__).parents[2] / "docs" / "metrics.md").read_text(encoding="utf-8")
    section = doc.split("## Gating on any metric", 1)[1]
    example = section.split("```yaml", 1)[1].split("```", 1)[0]
    config = build_config(yaml.safe_load(example))
    assert [g.metric for g in config.gates] == [
        "g_pass_at_k_tau",
        "bayes",
        "geo_spectrum_star_at_k",
        "reliability.graceful_degradation",
        "cost_usd.mean_per_trial",
        "duration_s.p95",
    ]
    assert [g.bound for g in config.gates][:2] == ["lower", "lower"]
