"""``eval-gate`` on the examples: the installed command once as a user runs it (subprocess),
everything else through click's CliRunner (same command, same exit codes, no process start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.schemas import validator
from tests.conftest import EXAMPLES, ROOT, trials_of

EVAL_GATE = str(Path(sys.executable).with_name("eval-gate"))


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def run(*args: str, cwd: Path = ROOT) -> Run:
    """``eval-gate ARGS`` in ``cwd`` through CliRunner; an escaped exception fails the test."""
    here = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"eval-gate {' '.join(args)} raised") from result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def test_the_installed_command_runs_and_exits_with_the_verdict() -> None:
    """The console script itself: installed, on PATH beside the interpreter, exit code kept."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    for example, results, code, first in (
        ("passing", "results.json", 0, "## ✅ eval-gate: PASS — all 5 gates passed"),
        ("failing", "results.jsonl", 1, "## ❌ eval-gate: FAIL — 1 of 3 gates failed"),
    ):
        done = subprocess.run(
            [EVAL_GATE, "check", results],
            cwd=EXAMPLES / example,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        assert done.stdout.splitlines()[0] == first
        assert f"read {results} as native (detected)" in done.stderr


def test_passing_example_exits_0() -> None:
    result = run("check", "results.json", cwd=EXAMPLES / "passing")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first == "## ✅ eval-gate: PASS — all 5 gates passed"
    assert "read results.json as native (detected)" in result.stderr


def test_failing_example_exits_1_and_writes_a_valid_json_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    summary = tmp_path / "summary.md"
    result = run(
        "check",
        "results.jsonl",
        "--json",
        str(report),
        "--summary",
        str(summary),
        cwd=EXAMPLES / "failing",
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""  # the summary went to the file
    assert summary.read_text().startswith("## ❌ eval-gate: FAIL — 1 of 3 gates failed")
    data = json.loads(report.read_text())
    assert validator("report").is_valid(data)
    assert data["verdict"] == "fail"
    assert data["exit"] == {"code": 1, "outcome": "fail", "on_inconclusive": "inconclusive"}
    gates = {g["name"]: (g["decision"], g["passed"], g["value"]) for g in data["gates"]}
    assert gates["pass^3 ≥ 0.8 (suite, point estimate)"] == ("fail", False, 0.4)
    assert gates["pass@3 ≥ 0.6 (suite, point estimate)"] == ("pass", True, 0.8)
    assert data["suite"]["pass_at_k"] == 0.8 and data["suite"]["pass_hat_k"] == 0.4
    assert data["suite"]["errors"] == 1
    by_name = {s["name"]: s for s in data["stimuli"]}
    assert by_name["Refactor auth middleware"]["flaky"] is True
    assert by_name["Refactor auth middleware"]["flakiness_percent"] == pytest.approx(100 / 3)
    assert by_name["Fix off-by-one in paginator"]["outcomes"] == "FFE"


def test_options_override_the_config_and_change_the_verdict() -> None:
    result = run("check", "results.jsonl", "--min-pass-hat-k", "0.4", cwd=EXAMPLES / "failing")
    assert result.returncode == 0, result.stdout


def test_an_undecided_gate_exits_3_unless_the_policy_maps_it(tmp_path: Path) -> None:
    """--bound lower puts pass@3 ≥ 0.6 and pass^3 ≥ 0.3 on their intervals, which straddle
    the targets (pass^3: estimate 0.4, interval [0.118, 0.769])."""
    args = ("check", "results.jsonl", "--min-pass-hat-k", "0.3", "--bound", "lower")
    report = tmp_path / "report.json"
    result = run(*args, "--json", str(report), cwd=EXAMPLES / "failing")
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("## ❔ eval-gate: INCONCLUSIVE — 2 of 3 gates undecided")
    assert "exit code 3" in result.stderr
    data = json.loads(report.read_text())
    assert validator("report").is_valid(data)
    (gate,) = [g for g in data["gates"] if g["kind"] == "pass_hat_k"]
    assert gate["decision"] == "inconclusive" and gate["passed"] is False
    assert isinstance(gate["more_trials"], int) and gate["more_trials"] > 0
    assert data["verdict"] == "inconclusive" and data["exit"]["code"] == 3
    for policy, code in (("fail", 1), ("pass", 0)):
        mapped = run(*args, "--on-inconclusive", policy, cwd=EXAMPLES / "failing")
        assert mapped.returncode == code, mapped.stderr
        assert f"counted as a {policy} by the on_inconclusive: {policy} setting" in mapped.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("check", "missing.jsonl"), "missing.jsonl: no such file"),
        (("check", "examples/failing/results.jsonl", "--config", "nope.yml"), "nope.yml"),
        (("check", "examples/failing/results.jsonl", "--k", "4"), "k = 4 exceeds"),
        (("check", "examples/failing/results.jsonl", "--threshold", "abc"), "expected a number"),
        (("check",), "Missing argument"),
        (("check", "examples/failing/results.jsonl", "--format", "xml"), "Invalid value"),
        (("schema", "nope"), "not a schema"),
    ],
)
def test_bad_input_config_and_usage_exit_2_without_traceback(
    args: tuple[str, ...], fragment: str
) -> None:
    result = run(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_malformed_record_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"stimulus": "a", "trial": 0, "passed": true}\n{"stimulus": "a", "trial": 1, "score": 2}\n'
    )
    summary = tmp_path / "summary.md"
    result = run("check", str(bad), "--summary", str(summary))
    assert result.returncode == 2
    assert (
        f"{bad}:2 at /score: number out of range; expected a number ≤ 1; found 2" in result.stderr
    )
    assert not summary.exists()  # outputs are written whole or not at all


def test_validate_reports_each_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"stimulus": "a", "trial": 0, "passed": true, "passed": false}\n')
    good = EXAMPLES / "failing" / "results.jsonl"
    result = run("validate", str(good), str(bad))
    assert result.returncode == 2
    assert f"ok: {good} (native, 5 stimuli, 15 trials (1 errored, 0 skipped))" in result.stdout
    assert "duplicate key 'passed'" in result.stderr
    assert run("validate", str(good)).returncode == 0


def test_schema_command_prints_the_shipped_schemas() -> None:
    listing = run("schema")
    assert listing.stdout.split() == [
        "results",
        "trial-record",
        "counts",
        "config",
        "report",
        "common",
    ]
    printed = run("schema", "config")
    assert json.loads(printed.stdout) == json.loads(
        (ROOT / "schemas" / "config.schema.json").read_text()
    )


@pytest.mark.parametrize(
    "text",
    ["confidence: .nan\n", "gates:\n  pass_rate: {min: 0.5, bound: lower, confidence: .nan}\n"],
)
def test_nan_in_the_configuration_exits_2_without_traceback(tmp_path: Path, text: str) -> None:
    config = tmp_path / "gate.yml"
    config.write_text(text)
    result = run("check", "examples/failing/results.jsonl", "--config", str(config))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "confidence must be a finite number, found nan" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_baseline_with_no_stimulus_in_common_exits_2() -> None:
    result = run(
        "check",
        "examples/passing/results.json",
        "--baseline",
        "examples/failing/baseline.jsonl",
        "--max-regression",
        "0.05",
    )
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "the results and the baseline have no stimulus in common" in result.stderr
    assert "Check that both runs are of the same suite(s)" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_an_option_that_breaks_the_configuration_is_named_not_the_file(tmp_path: Path) -> None:
    bad_option = run("check", "results.jsonl", "--threshold", "2", cwd=EXAMPLES / "failing")
    assert bad_option.returncode == 2
    assert bad_option.stderr.strip().splitlines()[-1] == (
        "Error: option threshold: gate threshold min 2 can be read two ways: rates are "
        'fractions, so 2 would be 200%; if you mean 2%, write 0.02 or "2%"'
    )
    # The same value written in a file names the file.
    config = tmp_path / "gates.yml"
    config.write_text("version: 1\ngates:\n  threshold: 2\n")
    bad_file = run("check", "results.jsonl", "--config", str(config), cwd=EXAMPLES / "failing")
    assert bad_file.returncode == 2
    assert bad_file.stderr.strip().splitlines()[-1].startswith(f"Error: {config}")


def test_validate_counts_in_words(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text('{"stimulus": "a", "trial": 0, "passed": true}\n', encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{\n", encoding="utf-8")
    result = run("validate", str(one), str(bad))
    assert f"ok: {one} (native, 1 stimulus, 1 trial (0 errored, 0 skipped))" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == "Error: 1 of 2 files is invalid"


def test_excluded_errors_are_not_taken_for_a_run_in_which_nothing_completed(
    write_jsonl: Any,
) -> None:
    """With --errors exclude, errored trials are not counted: 3 excluded errors beside 3
    counted passes made the built-in gate say every counted trial errored (a false FAIL)."""
    results = write_jsonl(trials_of("a", "PPP") + trials_of("b", "EEE"))
    result = run("check", str(results), "--errors", "exclude", "--min-pass-rate", "0.01")
    assert "completed without error" not in result.stdout
    assert "| pass rate ≥ 0.01 (suite, point estimate) | 1.000 | – | ≥ 0.01 | ✔ pass |" in (
        result.stdout
    )
    # a's 3 passes alone: mid-p, c = n = 3, lower bound p with p³/2 = 0.025, 0.05^(1/3)
    assert "| pass rate | 100.0% | [36.8%, 100.0%] |" in result.stdout
    assert result.returncode == 0, result.stdout
    failed = run("check", str(results), "--min-pass-rate", "0.01")  # errors counted: a fail
    assert "completed without error" not in failed.stdout


def test_a_run_whose_trials_all_errored_fails_with_a_valid_json_report(
    tmp_path: Path, write_jsonl: Any
) -> None:
    """The built-in completed_trials gate was an internal error in the JSON report."""
    results = write_jsonl(trials_of("a", "EEE") + trials_of("b", "EE"))
    report = tmp_path / "report.json"
    result = run("check", str(results), "--json", str(report), "--min-pass-rate", "0")
    assert result.returncode == 1, result.stderr
    data = json.loads(report.read_text())
    assert validator("report").is_valid(data)
    (gate,) = [g for g in data["gates"] if g["kind"] == "completed_trials"]
    assert (gate["decision"], gate["value"], gate["comparison"], gate["target"]) == (
        "fail",
        0.0,
        ">=",
        1.0,
    )
    assert "at least one trial completed without error | 0 trials | – | ≥ 1 | ✘" in result.stdout


def test_a_per_stimulus_regression_gate_names_the_stimulus_its_numbers_belong_to(
    tmp_path: Path,
) -> None:
    """Its row named the stimulus of smallest Holm p (the first of five tied at 1: one that
    did not change) beside another stimulus's Δ, and wrote that Δ as a fraction. Each
    stimulus's one-sided 95% bounds are the wider of Newcombe's and Miettinen & Nurminen's
    score bounds. Generate OpenAPI schema stub went 2/3 → 1/3 (Δ −33.3 points): Newcombe's
    bounds [−0.694, +0.251]; the score bounds [−0.787, +0.354] (the root of
    (Δ̂ − θ)/√(V(θ)·6/5) = ±1.645 at the restricted rates, found independently by a
    numerical maximum of the likelihood); the lowest lower bound of the five (Refactor auth
    middleware, 3/3 → 2/3: Newcombe −0.746, score −0.771)."""
    config = tmp_path / "gates.yml"
    config.write_text("gates:\n  max_regression: {max: 0, scope: stimuli}\n", encoding="utf-8")
    failing = EXAMPLES / "failing"
    result = run(
        "check", str(failing / "results.jsonl"), "--baseline", str(failing / "baseline.jsonl"),
        "--config", str(config),
    )  # fmt: skip
    assert (
        "| no stimulus worse than baseline (Holm, family-wise 95%) — worst: Generate OpenAPI "
        "schema stub | −33.3 pts | [−78.7, +35.4] pts | Δ ≥ 0 | ❔ inconclusive |"
    ) in result.stdout, result.stdout
