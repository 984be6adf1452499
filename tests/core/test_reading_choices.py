"""Issue 15 point 8: validate counts as check does; JSONL without trial indices; a baseline
read with its own format and map (CLI options and action inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.errors import InputError
from gate.github.entrypoint import check_request
from gate.github.inputs import ActionInputError, read_inputs
from gate.ingest import IngestOptions, load
from gate.pipeline import run_check
from tests.conftest import ROOT
from tests.github.contract import input_env

JUNIT = ROOT / "tests" / "ingest" / "fixtures" / "junit"


@pytest.mark.parametrize("name", ["pytest-flake.xml", "pytest-repeat.xml", "surefire-rerun.xml"])
def test_validate_counts_what_check_counts(name: str, tmp_path: Path) -> None:
    """validate counted every trial read and every stimulus (skipped ones too); check counts
    trials that count and stimuli with a counted trial. Now both say check's numbers."""
    path = str(JUNIT / name)
    runner = CliRunner()
    validated = runner.invoke(main, ["validate", path])
    assert validated.exit_code == 0, validated.output
    report = tmp_path / "r.json"
    checked = runner.invoke(main, ["check", path, "--json", str(report), "--summary", "-"])
    assert checked.exit_code in (0, 1, 3), checked.output
    suite = json.loads(report.read_text(encoding="utf-8"))["suite"]
    stimuli = f"{suite['stimuli']} stimul{'us' if suite['stimuli'] == 1 else 'i'}"
    trials = f"{suite['trials']} trial{'s' * (suite['trials'] != 1)}"
    said = f"{stimuli}, {trials} ({suite['errors']} errored, {suite['skipped']} skipped)"
    assert f"ok: {path} (junit, {said}" in validated.output


def test_pytest_flake_has_stimuli_with_no_counted_trial_and_validate_says_so() -> None:
    result = CliRunner().invoke(main, ["validate", str(JUNIT / "pytest-flake.xml")])
    # 21 testcases read, 3 of them only skipped: check scores 18.
    assert "(junit, 18 stimuli, 18 trials (3 errored, 3 skipped); 3 stimuli with no counted " in (
        result.output
    )


def test_native_jsonl_without_trial_indices_points_to_generic_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    records = [{"stimulus": "a", "passed": True}, {"stimulus": "a", "passed": False},
               {"stimulus": "b", "passed": True}]  # fmt: skip
    path.write_text("\n".join(map(json.dumps, records)) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load([str(path)])
    assert str(caught.value) == (
        f"{path}:1: missing field 'trial'; expected a trial index (0, 1, ...) in every trial "
        "record; to number each stimulus's trials in order of appearance instead, read the "
        "file with --format jsonl"
    )
    with pytest.warns(UserWarning, match="3 record\\(s\\) have no trial index"):
        table, _ = load([str(path)], IngestOptions(format="jsonl"))
    assert table.stimuli[("default", "a")].indices == [0, 1]
    assert table.stimuli[("default", "a")].passed == [True, False]


def _baseline_files(tmp_path: Path) -> tuple[Path, Path]:
    results = tmp_path / "results.csv"
    results.write_text(
        "case,ok\n" + "".join(f"s{s},{'yes' if s % 2 else 'no'}\n" for s in range(4) for _ in "xy"),
        encoding="utf-8",
    )
    baseline = tmp_path / "baseline.csv"
    baseline.write_text(
        "id,verdict\n" + "".join(f"s{s},pass\n" for s in range(4) for _ in "xy"),
        encoding="utf-8",
    )
    return results, baseline


def test_a_baseline_in_another_layout_has_its_own_map(tmp_path: Path) -> None:
    results, baseline = _baseline_files(tmp_path)
    common = ["check", str(results), "--baseline", str(baseline), "--format", "csv",
              "--map", "stimulus=case,passed=ok", "--json", str(tmp_path / "r.json")]  # fmt: skip
    runner = CliRunner()
    one_map = runner.invoke(main, common)
    assert one_map.exit_code == 2
    assert "--map names column(s) not in the header: stimulus=case, passed=ok" in one_map.output
    own = runner.invoke(main, [*common, "--baseline-map", "stimulus=id,passed=verdict"])
    assert own.exit_code in (0, 1, 3), own.output
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    (comparison,) = report["comparisons"]
    assert comparison["shared"] == 4 and comparison["delta"] == pytest.approx(-0.5)


def test_the_cli_refuses_a_field_mapped_twice_or_unknown_as_the_action_does(
    tmp_path: Path,
) -> None:
    """``--map stimulus=case,passed=ok,stimulus=ok`` silently read the stimulus from ``ok``
    (the last pair won); the action's map refused it. One parser now serves both."""
    results, baseline = _baseline_files(tmp_path)
    runner = CliRunner()
    for option, value, said in (
        ("--map", "stimulus=case,passed=ok,stimulus=ok", "field 'stimulus' is mapped twice"),
        ("--map", "stimuls=case", "unknown field 'stimuls'; expected fields among stimulus,"),
        ("--baseline-map", "stimulus=id,case", "'case' is not FIELD=COLUMN"),
    ):
        args = ["check", str(results), "--baseline", str(baseline), "--format", "csv"]
        if option == "--baseline-map":
            args += ["--map", "stimulus=case,passed=ok"]
        result = runner.invoke(main, [*args, option, value])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for {option}: {said}" in result.output


def test_the_action_takes_a_baseline_format_and_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _baseline_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    env = input_env({"results": "results.csv", "baseline": "baseline.csv", "format": "csv",
                     "map": "stimulus=case,passed=ok", "baseline_format": "csv",
                     "baseline_map": "stimulus=id\npassed=verdict",
                     "max_regression": "0.6"})  # fmt: skip
    inputs = read_inputs(env)
    assert inputs.baseline_map == {"stimulus": "id", "passed": "verdict"}
    outcome = run_check(check_request(inputs))
    assert outcome.comparisons[0].test.delta == pytest.approx(-0.5)
    with pytest.raises(ActionInputError, match="input baseline_map: unknown field 'case'"):
        read_inputs(input_env({"results": "r.csv", "baseline_map": "case=id"}))
    defaults = read_inputs(input_env({"results": "r.csv", "map": "stimulus=case"}))
    assert (defaults.baseline_format, defaults.baseline_map) == (None, None)
    assert check_request(defaults).baseline_ingest is None  # the baseline is read as the results
