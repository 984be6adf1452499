"""eval-gate plan: right (simulating at its N reaches the power) and not bloated (at 0.6 N
the power is clearly lower), checked with fresh seeds against the gate's own rule as
``check`` applies it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.config import build_config
from gate.gates import decide_gates
from gate.planning import plan
from gate.scoring import score_table
from gate.trials import StimulusCounts, TrialTable
from tests.conftest import EXAMPLES

# The runs below go through counts rows, which warn that trial order is unknown.
pytestmark = pytest.mark.filterwarnings("ignore:.*given as counts:UserWarning")


def decided_by_check(config_data: dict, rates: np.ndarray, n: int, runs: int, seed: int) -> float:
    """P(decided) of the configured gate through the real check path (score_table + gates),
    each run's stimuli given as counts (a counts file's rows: n trials, c passes)."""
    config = build_config(config_data)
    rng = np.random.default_rng(seed)
    decided = 0
    for passes in rng.binomial(n, rates, size=(runs, rates.size)):
        table = TrialTable()
        for i, c in enumerate(passes.tolist()):
            table.add(StimulusCounts(stimulus=f"s{i:02d}", n=n, c=c))
        suite = score_table(table.finish(), k=config.k, interval=config.interval)
        (gate,), _ = decide_gates(config, suite, advise=False)
        decided += gate.outcome != "inconclusive"
    return decided / runs


@pytest.mark.parametrize(
    ("config_data", "expect"),
    [
        ({"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "interval"}}}, 0.96),
        ({"gates": {"pass_rate": {"min": 0.6, "bound": "interval", "scope": "stimuli"}}}, 0.85),
        ({"gates": {"max_ci_half_width": 0.05}}, 0.7),
    ],
)
def test_the_plan_is_right_and_not_bloated(config_data: dict, expect: float) -> None:
    rates = np.full(20, expect)
    result = plan(build_config(config_data), rates, source="expect")
    (gate,) = result.gates
    assert gate.trials is not None and gate.trials == result.trials_per_stimulus
    at_n = decided_by_check(config_data, rates, gate.trials, 300, seed=7)
    smaller = decided_by_check(config_data, rates, int(0.6 * gate.trials), 300, seed=8)
    print(f"{config_data['gates']}: N = {gate.trials}, P = {at_n:.3f}, at 0.6 N {smaller:.3f}")
    assert at_n >= 0.8 - 0.05
    assert smaller <= at_n - 0.10


def test_the_issue_anchor_about_25_trials() -> None:
    config = build_config({"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "lower"}}})
    result = plan(config, [0.96] * 20, source="expect")
    assert 22 <= (result.trials_per_stimulus or 0) <= 28
    (gate,) = result.gates
    assert gate.probability is not None and gate.probability >= 0.8
    assert gate.probability_smaller is not None and gate.probability_smaller < 0.7


def test_regression_gate_with_few_stimuli_asks_for_stimuli() -> None:
    """4 stimuli: the sign-flip test cannot reject at 95% (2^4 < 20), whatever the trials."""
    config = build_config({"gates": {"max_regression": 0.05}})
    (gate,) = plan(config, [0.9, 0.8, 0.95, 0.7], source="expect").gates
    assert gate.trials is None
    assert gate.stimuli is not None and gate.stimuli > 4


def test_score_gates_are_not_planned_and_k_is_required() -> None:
    (gate,) = plan(build_config({"gates": {"threshold": 0.7}}), [0.9] * 5, source="x").gates
    assert gate.goal == "not planned" and gate.reason == "score"
    metric = build_config({"gates": {"metric": {"metric": "bayes", "min": 0.5}}})
    (gate,) = plan(metric, [0.9] * 5, source="x").gates
    assert gate.goal == "not planned" and gate.reason == "metric"
    from gate.errors import ConfigError

    with pytest.raises(ConfigError, match=r"needs k .*the trials per stimulus are what the plan"):
        plan(build_config({"gates": {"pass_hat_k": 0.5}}), [0.9] * 5, source="x")


def test_the_cli_prints_markdown_and_json() -> None:
    runner = CliRunner()
    args = ["plan", "--expect", "0.96", "--stimuli", "20", "--k", "3", "--min-pass-hat-k", "0.8"]
    args += ["--bound", "interval", "--config", str(EXAMPLES / "passing" / "missing.yml")]
    missing = runner.invoke(main, args)
    assert missing.exit_code == 2  # a named configuration that is not there
    args = args[:-2]
    shown = runner.invoke(main, args)
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("## eval-gate plan: 2")
    assert "| pass^3 ≥ 0.8 (suite, 95% interval) |" in shown.output
    as_json = runner.invoke(main, [*args, "--json", "-"])
    data = json.loads(as_json.output)
    assert isinstance(data["trials_per_stimulus"], int)
    assert data["gates"][0]["trials_per_stimulus"] == data["trials_per_stimulus"]
    both = runner.invoke(main, ["plan", "--expect", "0.9", "--pilot", "x.jsonl"])
    assert both.exit_code == 2 and "either --expect" in both.output


def test_a_pilot_gives_each_stimulus_its_rate(tmp_path) -> None:
    runner = CliRunner()
    pilot = str(EXAMPLES / "failing" / "results.jsonl")
    result = runner.invoke(
        main,
        ["plan", "--pilot", pilot, "--min-pass-rate", "0.5", "--bound", "interval", "--json", "-"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["stimuli"] == 5 and data["source"] == "pilot"
    assert data["mean_expected_pass_rate"] == pytest.approx(0.6)  # 9 of 15 trials passed


def test_a_gate_with_a_tag_or_suite_is_planned_on_the_pilot_stimuli_it_covers(tmp_path) -> None:
    """A pilot of A 0/5 and D 1/5 (tagged critical) and B, C 5/5: a pass-rate gate on the
    critical stimuli is about A and D alone (check fails it: 1 of 10 passed). The plan drew
    all four, so it planned for a gate the pilot's own rates pass; a misspelt tag was
    planned too (check refuses it: exit 2)."""
    from gate.errors import ConfigError
    from gate.planning import plan as make_plan

    rates, trials, passes = [0.0, 1.0, 1.0, 0.2], [5] * 4, [0, 5, 5, 1]
    groups = [("s1", {"critical"}), ("s1", set()), ("s1", set()), ("s1", {"critical"})]
    tagged = build_config({"gates": {"pass_rate": {"min": 0.5, "tag": "critical"}}})
    untagged = build_config({"gates": {"pass_rate": {"min": 0.5}}})
    (gate,) = make_plan(tagged, rates, source="pilot", pilot=(trials, passes), groups=groups).gates
    (alone,) = make_plan(untagged, [0.0, 0.2], source="pilot", pilot=([5, 5], [0, 1])).gates
    assert (gate.trials, gate.probability, gate.covers) == (alone.trials, alone.probability, 2)
    assert gate.expected_outcome == "fail"
    (everyone,) = make_plan(tagged, rates, source="pilot", pilot=(trials, passes)).gates
    assert everyone.expected_outcome == "pass" and everyone.covers is None  # the old plan
    # --stimuli 10 repeats the pilot in order: A B C D A B C D A B, of which 5 are critical.
    repeated = [rates[i % 4] for i in range(10)]
    (wider,) = make_plan(
        tagged, repeated, source="pilot", pilot=(trials, passes), groups=groups
    ).gates
    assert wider.covers == 5
    for spec, said in (
        ({"tag": "critcal"}, "no pilot stimulus carries the tag 'critcal'"),
        ({"suite": "s2"}, "no pilot stimulus is in suite 's2'"),
    ):
        with pytest.raises(ConfigError, match=said):
            config = build_config({"gates": {"pass_rate": {"min": 0.5, **spec}}})
            make_plan(config, rates, source="pilot", pilot=(trials, passes), groups=groups)
    records = [
        {"suite": "s1", "stimulus": name, "trial": t, "passed": t < c, "tags": sorted(tags)}
        for (_, tags), name, c in zip(groups, "ABCD", passes, strict=True)
        for t in range(5)
    ]
    pilot = tmp_path / "pilot.jsonl"
    pilot.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    config = tmp_path / "gates.yml"
    config.write_text("gates:\n  pass_rate: {min: 0.5, tag: critcal}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["plan", "--pilot", str(pilot), "--config", str(config)])
    assert result.exit_code == 2 and "no pilot stimulus carries the tag 'critcal'" in result.output


def test_the_plan_quoted_in_docs_plan_md_is_the_real_one() -> None:
    from pathlib import Path

    from gate.report.plan_report import render_plan

    config = build_config({"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "interval"}}})
    rendered = render_plan(plan(config, [0.96] * 20, source="expect"))
    doc = (Path(__file__).parents[2] / "docs" / "plan.md").read_text(encoding="utf-8")
    table = [line for line in rendered.splitlines() if line.startswith("| pass^3")]
    assert table and all(line in doc for line in table)
    assert rendered.splitlines()[0] in doc


def test_a_pilot_with_cost_and_duration_gives_the_expected_spend() -> None:
    pilot = EXAMPLES / "failing" / "results.jsonl"
    records = [json.loads(line) for line in pilot.read_text(encoding="utf-8").splitlines()]
    usage = [r["metadata"] for r in records if "metadata" in r]
    mean_cost = sum(u["cost_usd"] for u in usage) / len(usage)
    mean_seconds = sum(u["duration_s"] for u in usage) / len(usage)
    args = ["plan", "--pilot", str(pilot), "--min-pass-rate", "0.5", "--bound", "interval"]
    data = json.loads(CliRunner().invoke(main, [*args, "--json", "-"]).output)
    trials = data["trials_per_stimulus"] * 5
    expected = data["expected"]
    assert expected["trials"] == trials and expected["pilot_trials"] == 15
    assert expected["cost_usd"] == pytest.approx(trials * mean_cost)
    assert expected["trial_seconds"] == pytest.approx(trials * mean_seconds)
    lo, hi = expected["cost_usd_interval"]  # 5 pilot stimuli: just enough for an interval
    assert lo <= expected["cost_usd"] <= hi
    shown = CliRunner().invoke(main, args).output
    assert f"**Expected spend** of {trials} trials (" in shown
    assert "h of trial time" in shown
    no_pilot = ["plan", "--expect", "0.9", "--stimuli", "5", "--min-pass-rate", "0.5"]
    assert (
        json.loads(CliRunner().invoke(main, [*no_pilot, "--json", "-"]).output)["expected"] is None
    )


def test_no_smaller_run_is_shown_when_the_plan_is_already_the_fewest_trials() -> None:
    """pass^3 needs 3 trials: a plan of 3 has no run of 0.6 × 3 = 1.8 trials to compare with
    (it showed P at 3 again, under 'at 0.6 × the trials'); the power is a floor, not the P."""
    from gate.report.plan_report import render_plan

    config = build_config({"k": 3, "gates": {"pass_hat_k": {"min": 0.2, "bound": "estimate"}}})
    result = plan(config, [0.95] * 10, source="expect")
    (gate,) = result.gates
    assert gate.trials == 3 and gate.probability is not None and gate.probability > 0.95
    assert gate.probability_smaller is None
    rendered = render_plan(result)
    assert f"| 3 | – | {gate.probability:.2f} | – |" in rendered
    assert "with at least 80% probability" in rendered and "\n\n\n" not in rendered
    # One step above the floor: 0.6 × 5 = 3 trials is a run the gate can use, so it is shown.
    tighter = build_config({"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "interval"}}})
    (wide,) = plan(tighter, [0.96] * 20, source="expect").gates
    assert wide.trials is not None and wide.probability_smaller is not None


def test_the_json_plan_never_replaces_its_pilot_or_configuration(tmp_path) -> None:
    pilot = tmp_path / "pilot.jsonl"
    pilot.write_bytes((EXAMPLES / "failing" / "results.jsonl").read_bytes())
    config = tmp_path / "gates.yml"
    config.write_text("gates:\n  pass_rate: 0.5\n", encoding="utf-8")
    before = pilot.read_bytes(), config.read_bytes()
    for target in (pilot, config):
        args = ["plan", "--pilot", str(pilot), "--config", str(config), "--json", str(target)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2
        assert f"--json {target} is also an input" in result.output
    assert (pilot.read_bytes(), config.read_bytes()) == before
    written = tmp_path / "plan.json"
    args = ["plan", "--pilot", str(pilot), "--config", str(config), "--json", str(written)]
    assert CliRunner().invoke(main, args).exit_code == 0
    assert json.loads(written.read_text(encoding="utf-8"))["stimuli"] == 5


def test_a_plan_of_one_trial_is_worded_in_the_singular() -> None:
    """Rates far below the 0.7 default: one trial of 50 stimuli rules 0.7 out, and the plan
    says '1 trial per stimulus decides it', not '1 trials ... decide it'."""
    from gate.report.plan_report import render_plan

    config = build_config({"gates": {"pass_rate": {"min": 0.7, "bound": "interval"}}})
    result = plan(config, [0.2] * 50, source="expect")
    (gate,) = result.gates
    assert gate.trials == 1
    rendered = render_plan(result)
    assert rendered.startswith("## eval-gate plan: 1 trial per stimulus\n")
    assert "- 1 trial per stimulus decides it (pass or fail) with at least 80%" in rendered
    assert "1 trials" not in rendered


def test_the_plan_escapes_names_from_the_configuration_and_names_each_gates_bullet() -> None:
    """A tag went raw into the plan's Markdown (a link, a mention, HTML), which check's
    summary escapes; with two gates, the bullets below the table did not say whose they
    were (two "Not planned: ..." bullets read as a repetition)."""
    from gate.report.plan_report import render_plan

    tag = "[x](http://evil.example) @octocat <img src=x>"
    config = build_config(
        {"k": 3, "gates": {"pass_rate": {"min": 0.5, "tag": tag}, "pass_hat_k": 0.8}}
    )
    rendered = render_plan(plan(config, [0.9] * 3, source="expect"))
    joiner = "\u2060"  # breaks the link and the mention; the text reads the same
    escaped = rf"\[x\]\(http\:{joiner}\/\/evil\.example\) \@{joiner}octocat \<img src\=x\>"
    assert f"| pass rate ≥ 0.5 (suite tagged {escaped}, point estimate) | 1 |" in rendered
    assert tag not in rendered and " <img" not in rendered
    bullets = [line for line in rendered.splitlines() if line.startswith("- ")]
    assert [b.split(": A point estimate")[0] for b in bullets] == [
        f"- pass rate ≥ 0.5 (suite tagged {escaped}, point estimate)",
        "- pass^3 ≥ 0.8 (suite, point estimate)",
    ]


def test_a_pilot_plan_draws_the_rates_the_pilot_allows() -> None:
    """20 stimuli that all went 3/3 in a pilot, gate pass^3 ≥ 0.8 on the interval.

    Taken as the truth (p = 1), every trial passes: the suite's pass^3 is 1, whose mid-p
    lower bound over n_eff = 20·N/3 is 0.05^(1/n_eff) ≥ 0.8 from n_eff = 13.4 on, so the
    fewest trials the gate can use, N = k = 3, decide it with probability 1. But 60
    passes of 60 do not make an agent that never fails: the plan from the pilot's data
    draws the rates from what they allow in every simulated run, and asks for more.
    (That such plans decide about 80%: tests/metrics/test_advice_calibration.py.)"""
    from gate.errors import ConfigError
    from gate.report.plan_report import render_plan

    config = build_config({"k": 3, "gates": {"pass_hat_k": {"min": 0.8, "bound": "interval"}}})
    (stated,) = plan(config, [1.0] * 20, source="expect").gates
    assert stated.trials == 3 and stated.probability == 1.0
    drawn = plan(config, [1.0] * 20, source="pilot", pilot=([3] * 20, [3] * 20))
    (gate,) = drawn.gates
    assert drawn.predictive and gate.trials is not None and gate.trials > 3
    assert gate.probability is not None and 0.8 <= gate.probability < 1.0
    assert (
        "the pass rates the pilot run allows (drawn anew in every simulated run; the trials "
        "planned are a new run's, the pilot's own not counted)" in render_plan(drawn)
    )
    with pytest.raises(ConfigError, match="not the pilot's"):
        plan(config, [0.5] * 20, source="pilot", pilot=([3] * 20, [3] * 20))
