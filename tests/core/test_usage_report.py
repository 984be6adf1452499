"""Cost, duration and tokens through the pipeline (issue 14.3): the JSON usage block, the
report's usage lines, usage metric gates and the paired change against a baseline, each
checked against numbers computed here from the raw files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.config import build_config
from gate.errors import ConfigError
from gate.pipeline import CheckRequest, run_check
from gate.report.json_report import build_report
from gate.report.markdown import render_summary
from gate.report.terminal import Terminal, render_terminal
from gate.schemas import validator
from tests.conftest import EXAMPLES, trials_of
from tests.metrics.test_usage import type7

PROMPTFOO = Path(__file__).parents[1] / "ingest" / "fixtures" / "promptfoo" / "results.json"
FAILING = EXAMPLES / "failing"


def native_usage(path: Path) -> dict[str, dict[str, list[float]]]:
    """Per stimulus, the costs and durations of a native JSONL file, read with json only."""
    found: dict[str, dict[str, list[float]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "suite":
            continue
        entry = found.setdefault(record["stimulus"], {"cost_usd": [], "duration_s": []})
        for key in entry:
            entry[key].append(record["metadata"][key])
    return found


def test_promptfoo_usage_is_reported_and_gated_through_the_cli(tmp_path: Path) -> None:
    raw = json.loads(PROMPTFOO.read_text(encoding="utf-8"))["results"]["results"]
    costs = [r["cost"] for r in raw]
    seconds = [r["latencyMs"] / 1000 for r in raw]
    tokens = [
        r["response"]["tokenUsage"]["total"] for r in raw if r.get("response", {}).get("tokenUsage")
    ]
    config = tmp_path / "gates.yml"
    config.write_text(
        "gates:\n  metric:\n"
        "    - {metric: cost_usd.mean_per_trial, max: 0.01, bound: upper}\n"
        "    - {metric: cost_usd.per_pass, max: 1}\n"
        "    - {metric: duration_s.p95, max: 60}\n"
        "    - {metric: tokens.mean_per_trial, max: 1000}\n",
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main, ["check", str(PROMPTFOO), "--config", str(config), "--json", str(out)]
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert validator("report").is_valid(report)
    usage = report["usage"]
    passes = report["suite"]["passes"]
    assert usage["cost_usd"]["total"] == pytest.approx(sum(costs), abs=1e-12)
    assert usage["cost_usd"]["mean_per_trial"] == pytest.approx(sum(costs) / len(raw))
    assert usage["cost_usd"]["per_pass"] == pytest.approx(sum(costs) / passes)
    assert usage["cost_usd"]["trials"] == 24 and usage["cost_usd"]["missing"] == 0
    assert usage["duration_s"]["p95"] == pytest.approx(type7(seconds, 0.95))
    assert usage["duration_s"]["p50"] == pytest.approx(type7(seconds, 0.5))
    assert usage["tokens"]["mean_per_trial"] == pytest.approx(sum(tokens) / len(tokens))
    assert usage["tokens"]["missing"] == 24 - len(tokens)
    gates = {g["metric"]: g for g in report["gates"] if g["kind"] == "metric"}
    assert gates["cost_usd.mean_per_trial"]["value"] == pytest.approx(sum(costs) / len(raw))
    assert gates["duration_s.p95"]["value"] == pytest.approx(type7(seconds, 0.95))
    assert gates["tokens.mean_per_trial"]["value"] == pytest.approx(sum(tokens) / len(tokens))
    assert all(g["decision"] == "pass" for g in gates.values())
    # 8 stimuli report a cost: the mean has its interval, and the gate decided on it.
    interval = usage["cost_usd"]["mean_per_trial_interval"]
    assert interval["lo"] <= usage["cost_usd"]["mean_per_trial"] <= interval["hi"]
    assert gates["cost_usd.mean_per_trial"]["upper"] == pytest.approx(interval["hi"])
    assert result.exit_code == 0, result.output


def test_a_usage_gate_decides_on_its_interval() -> None:
    def decide(target: float) -> tuple[str, float, float]:
        spec = {"metric": "cost_usd.mean_per_trial", "max": target, "bound": "upper"}
        outcome = run_check(
            CheckRequest((str(PROMPTFOO),), build_config({"gates": {"metric": spec}}))
        )
        (gate,) = outcome.gates
        assert gate.lower is not None and gate.upper is not None
        return gate.outcome, gate.lower, gate.upper

    outcome, lower, upper = decide(1e-6)
    assert outcome == "fail" and lower > 1e-6  # the whole interval is above the target
    assert decide(upper * 1.01)[0] == "pass"
    assert decide((lower + upper) / 2)[0] == "inconclusive"


def test_the_change_against_the_baseline_is_paired_by_stimulus() -> None:
    now, before = native_usage(FAILING / "results.jsonl"), native_usage(FAILING / "baseline.jsonl")
    config = build_config({"gates": {"max_regression": 0.05}})
    outcome = run_check(
        CheckRequest(
            (str(FAILING / "results.jsonl"),),
            config,
            baseline=(str(FAILING / "baseline.jsonl"),),
        )
    )
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    cost = report["usage_change"]["cost_per_trial"]
    mean_now = sum(sum(v["cost_usd"]) for v in now.values()) / 15
    mean_before = sum(sum(v["cost_usd"]) for v in before.values()) / 15
    assert (cost["current"], cost["baseline"]) == pytest.approx((mean_now, mean_before))
    assert cost["estimate"] == pytest.approx(mean_now - mean_before)
    assert cost["stimuli"] == 5
    lo, hi = cost["interval"]
    assert lo <= cost["estimate"] <= hi
    p95 = report["usage_change"]["duration_p95"]
    durations_now = [d for v in now.values() for d in v["duration_s"]]
    durations_before = [d for v in before.values() for d in v["duration_s"]]
    assert p95["estimate"] == pytest.approx(
        type7(durations_now, 0.95) - type7(durations_before, 0.95)
    )
    assert p95["interval"] == [None, None]  # 5 shared stimuli: a p95 needs 20
    summary = render_summary(outcome)
    assert "**Usage against the baseline** (paired by stimulus): cost per trial +$" in summary
    assert "p95 duration +" in summary and "too few shared stimuli for an interval" in summary
    assert summary.index("**Usage**: cost $") < summary.index("**Usage against the baseline**")
    terminal = render_terminal(outcome, Terminal(width=100, color=False))
    assert "Usage against the baseline (paired by stimulus)" in terminal


def test_results_without_usage_have_no_block_and_a_usage_gate_says_why(write_jsonl) -> None:
    path = write_jsonl(trials_of("a", "PPF") + trials_of("b", "PPP"))
    outcome = run_check(CheckRequest((str(path),), build_config({})))
    report = build_report(outcome)
    assert report["usage"] is None and report["usage_change"] is None
    assert "**Usage**" not in render_summary(outcome)
    config = build_config({"gates": {"metric": {"metric": "duration_s.p95", "max": 10}}})
    with pytest.raises(ConfigError, match=r"'duration_s\.p95': no trial reports duration_s"):
        run_check(CheckRequest((str(path),), config))


def test_usage_gates_take_a_suite_and_refuse_a_tag(write_jsonl) -> None:
    records = []
    for suite, seconds in (("fast", 1.0), ("slow", 100.0)):
        for record in trials_of("a", "PPP", suite) + trials_of("b", "PFP", suite):
            record["metadata"] = {"duration_s": seconds}
            records.append(record)
    path = write_jsonl(records)
    config = build_config(
        {
            "gates": {
                "metric": [
                    {"metric": "duration_s.p95", "max": 10, "suite": s} for s in ("fast", "slow")
                ]
            }
        }
    )
    fast, slow = run_check(CheckRequest((str(path),), config)).gates
    assert (fast.value, fast.outcome) == (1.0, "pass")
    assert (slow.value, slow.outcome) == (100.0, "fail")
    tagged = build_config(
        {"gates": {"metric": {"metric": "duration_s.p95", "max": 10, "tag": "x"}}}
    )
    with pytest.raises(ConfigError, match="per suite, not per tag"):
        run_check(CheckRequest((str(path),), tagged))


def test_absurd_usage_values_are_left_out_with_a_warning_never_a_crash(write_jsonl) -> None:
    """1e308 dollars twice would overflow the total: values past 1e12 are not reported."""
    records = trials_of("a", "PP") + trials_of("b", "PF")
    for record, cost in zip(records, (1e308, 1e308, 0.5, 5e12), strict=True):
        record["metadata"] = {"cost_usd": cost, "duration_s": 2.0}
    result = CliRunner().invoke(
        main, ["check", str(write_jsonl(records)), "--min-pass-rate", "0", "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["usage"]["cost_usd"]["total"] == 0.5
    assert report["usage"]["cost_usd"]["missing"] == 3
    assert any("3 usage value(s)" in w and "1e12" in w for w in report["warnings"])


def test_the_table_and_the_numeric_core_name_the_same_usage_values() -> None:
    """Two homes on purpose (the table is imported without numpy, gate.metrics.usage is not
    imported by the table): this keeps them one list."""
    from gate.metrics.usage import USAGE_FIELDS as CORE
    from gate.table.model import USAGE_FIELDS as TABLE

    assert TABLE == CORE == ("cost_usd", "duration_s", "tokens")
