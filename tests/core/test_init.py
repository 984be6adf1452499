"""``eval-gate init`` and ``eval-gate validate --config`` (click's CliRunner and library calls).

The written file is read back by the one configuration loader (gate.config.load_config) and
used by ``check``: what init writes must be valid and, when suggested from results, must pass
on them. Expected targets are computed here apart, from the Wilson score formula.
"""

from __future__ import annotations

import doctest
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from scipy.special import comb

import gate.config_template as config_template
from gate import limits
from gate.cli import main
from gate.config import GATE_KINDS, GateSpec, default_gate, load_config
from gate.ingest import load
from gate.pipeline import CheckRequest, run_check
from gate.scoring import score_table
from tests.conftest import EXAMPLES, ROOT, trials_of


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def midp_lower(p: float, n: int, confidence: float = 0.95) -> float:
    """Lower end of the mid-p Clopper-Pearson interval (the default), solved with scipy:
    P(X > c) + P(X = c)/2 = α/2 at p = L, X ~ Binomial(n, L), c = p·n."""
    c = round(p * n)
    tail = (1 - confidence) / 2

    def excess(x: float) -> float:
        return float(stats.binom.sf(c, n, x) + 0.5 * stats.binom.pmf(c, n, x) - tail)

    return float(optimize.brentq(excess, 1e-12, c / n))


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_module_doctests_hold() -> None:
    result = doctest.testmod(config_template)
    assert result.attempted >= 2 and result.failed == 0


# -- the template (no results) -----------------------------------------------------------------


def test_init_writes_the_template_with_one_active_gate(workdir: Path) -> None:
    result = invoke("init")
    assert result.exit_code == 0, result.output
    written = workdir / ".eval-gate.yml"
    text = written.read_text(encoding="utf-8")
    assert text == config_template.template()
    config = load_config(str(written))
    # bound: interval is the lower bound for a min gate: the default gate's shape.
    assert config.gates == (replace(default_gate(), default=False),)
    # The product's default interval (the template said wilson, whose coverage the README
    # shows falling to 83% at 3 trials), and every method the schema accepts beside it.
    assert (config.k, config.confidence, config.interval, config.errors) == (
        None,
        0.95,
        "mid-p",
        "fail",
    )
    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text(encoding="utf-8"))
    methods = " | ".join(schema["properties"]["interval"]["enum"])
    assert f"\ninterval: mid-p   # {methods}\n" in text
    # Reference 001's guidance, quoted where it applies and named so a reader can find it.
    assert "# \"Vally's guide\" below is Vally's scoring documentation" in text
    assert "run 3 trials per stimulus for a CI gate" in text
    assert "pass rate 0.7 for CI;\n# pass^k 0.9 for production" in text
    assert "Reference 00" not in text and "reference 00" not in text


def test_the_template_shows_every_gate_kind_commented_out() -> None:
    text = config_template.template()
    assert set(config_template.template_gates()) == set(GATE_KINDS)
    for kind, gate in list(config_template.template_gates().items())[1:]:
        block = "\n".join(f"  # {line}" for line in gate.yaml)
        assert block in text, kind


def test_every_template_gate_is_valid_once_uncommented(tmp_path: Path) -> None:
    lines = ["version: 1", "gates:"]
    for gate in config_template.template_gates().values():
        lines += [f"  {line}" for line in gate.yaml]
    path = tmp_path / "all.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = load_config(str(path))
    assert {g.kind for g in config.gates} == set(GATE_KINDS)
    by_kind = {g.kind: g for g in config.gates}
    assert (by_kind["pass_hat_k"].k, by_kind["pass_hat_k"].target) == (3, 0.9)
    assert by_kind["pass_hat_k"].bound == "lower"  # bound: interval, for a min gate
    assert by_kind["max_flakiness"].target == 0.2  # a fraction, as every rate
    assert by_kind["max_flakiness"].scope == "stimuli"


def test_check_runs_on_the_template(workdir: Path) -> None:
    assert invoke("init").exit_code == 0
    failing = invoke(
        "check", str(EXAMPLES / "failing" / "results.jsonl"), "--config", ".eval-gate.yml"
    )
    # pass rate 0.6, 95% mid-p interval at n = 15 trials 0.35-0.82: it straddles 0.7.
    assert midp_lower(0.6, 15) < 0.7 < 1 - midp_lower(0.4, 15)
    assert failing.exit_code == 3, failing.output
    assert "eval-gate: INCONCLUSIVE (0 failed, 1 inconclusive" in failing.stderr
    passing = invoke(
        "check", str(EXAMPLES / "passing" / "results.json"), "--config", ".eval-gate.yml"
    )
    # pass rate 29/30 = 0.967 over 30 trials: the interval's lower end clears 0.7.
    assert midp_lower(29 / 30, 30) > 0.7
    assert passing.exit_code == 0, passing.output


# -- suggested from results --------------------------------------------------------------------


def test_init_suggests_gates_from_the_failing_example(workdir: Path) -> None:
    shutil.copy(EXAMPLES / "failing" / "results.jsonl", workdir / "results.jsonl")
    result = invoke("init", "results.jsonl")
    assert result.exit_code == 0, result.output
    text = (workdir / ".eval-gate.yml").read_text(encoding="utf-8")
    config = load_config(".eval-gate.yml")
    # 5 stimuli x 3 trials, passes 3, 2, 1, 0, 3: pass rate 9/15 = 0.6 over n = 15 trials;
    # pass^3 = mean of C(c,3)/C(3,3) = 2/5 = 0.4 at n_eff = M·min(n)/k = 5 (the suite
    # interval's effective size); worst flakiness 1 of 3 = 33.3% -> 0.34 (a whole percent up).
    assert midp_lower(0.6, 15) == pytest.approx(0.345385, abs=1e-6)
    assert midp_lower(0.4, 5) == pytest.approx(0.073457, abs=1e-6)
    assert config.k == 3
    assert config.gates == (
        GateSpec(kind="pass_rate", target=0.34, metric="pass_rate"),
        GateSpec(kind="pass_hat_k", target=0.07, metric="pass_hat_k", k=3),
        GateSpec(kind="max_flakiness", target=0.34, metric="flakiness", scope="stimuli"),
    )
    # Each line says why.
    assert "# Observed pass rate = 0.60 on 5 stimuli × 3 trials (mean over stimuli);" in text
    assert "# Observed pass^3 = 0.40 on 5 stimuli × 3 trials (all 3 runs pass);" in text
    assert "# 95% interval 0.07–0.82 (mid-p)." in text
    assert "# Worst stimulus flakiness 33.3% (unreliable); 2 of 5 stimuli flaky." in text
    assert "errors: fail   # errored trials count as failures (1 here)" in text
    # The file is valid and check passes on the results it was suggested from.
    validated = invoke("validate", "--config", ".eval-gate.yml", "results.jsonl")
    assert validated.exit_code == 0, validated.output
    assert validated.stdout.splitlines() == [
        "ok: .eval-gate.yml (configuration, 3 gates)",
        "ok: results.jsonl (native, 5 stimuli, 15 trials (1 errored, 0 skipped))",
        "ok: .eval-gate.yml can be evaluated on these results",
    ]
    checked = invoke("check", "results.jsonl", "--config", ".eval-gate.yml", "--json", "-")
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["verdict"] == "pass"
    assert [g["passed"] for g in report["gates"]] == [True, True, True]


def test_one_trial_per_stimulus_suggests_no_pass_hat_k_or_flakiness(
    workdir: Path, write_jsonl: Callable[..., Path]
) -> None:
    records = [r for i in range(30) for r in trials_of(f"case-{i}", "P" if i < 24 else "F")]
    results = write_jsonl(records)
    assert invoke("init", str(results)).exit_code == 0
    text = (workdir / ".eval-gate.yml").read_text(encoding="utf-8")
    config = load_config(".eval-gate.yml")
    # 24 of 30 pass, one trial each: mid-p lower end at p = 0.8, n = 30.
    assert midp_lower(0.8, 30) == pytest.approx(0.629656, abs=1e-6)
    assert config.k == 1
    assert config.gates == (GateSpec(kind="pass_rate", target=0.62, metric="pass_rate"),)
    assert "# Vally's guide recommends 3 trials per stimulus for a CI gate." in text
    assert "pass^k and flakiness need 2 or more trials per stimulus" in text
    assert invoke("check", str(results), "--config", ".eval-gate.yml").exit_code == 0


def test_results_that_support_no_gate_give_a_valid_file_with_none(
    workdir: Path, write_jsonl: Callable[..., Path]
) -> None:
    results = write_jsonl([r for i in range(4) for r in trials_of(f"case-{i}", "F")])
    assert invoke("init", str(results)).exit_code == 0
    text = (workdir / ".eval-gate.yml").read_text(encoding="utf-8")
    assert "\ngates: {}\n" in text
    assert "Its lower end rounds to 0: these results support no such gate." in text
    assert "# These results support no gate. With none configured, check applies its" in text
    # ... and so it does: the default gate, which these results fail.
    assert load_config(".eval-gate.yml").gates == (default_gate(),)
    assert invoke("validate", "--config", ".eval-gate.yml", str(results)).exit_code == 0
    assert invoke("check", str(results), "--config", ".eval-gate.yml").exit_code == 1


def test_a_file_name_cannot_add_keys_to_the_configuration(
    workdir: Path, write_jsonl: Callable[..., Path]
) -> None:
    name = "x\ngates: {}\r\u2028\x85threshold: 1\n.jsonl"
    outcomes = ["PPP", "PPP", "PPP", "PPF", "PPP"]
    write_jsonl([r for i, o in enumerate(outcomes) for r in trials_of(f"case-{i}", o)], name=name)
    assert invoke("init", name).exit_code == 0
    text = (workdir / ".eval-gate.yml").read_text(encoding="utf-8")
    assert "#   x\\u000agates: {}\\u000d\\u2028\\u0085threshold: 1\\u000a.jsonl" in text
    kinds = [g.kind for g in load_config(".eval-gate.yml").gates]
    assert kinds == ["pass_rate", "pass_hat_k", "max_flakiness"]


def test_max_flakiness_is_written_as_a_fraction() -> None:
    """Like every rate; 1 in 3 trials (33.3%) is rounded up to a whole percent, 0.34."""
    table, _ = load([str(EXAMPLES / "failing" / "results.jsonl")])
    suite = score_table(table)
    assert "    max: 0.34   # 34%\n" in config_template.suggest(suite, ["r"])
    assert "  #   max: 0.2   # 20%\n" in config_template.template()
    assert 'Rates are fractions (0.7 means 70%) or percents ("70%")' in config_template.template()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.tuples(st.integers(1, 8), st.integers(0, 8)).map(lambda t: (t[0], min(t[1], t[0]))),
        min_size=1,
        max_size=25,
    )
)
def test_suggested_gates_pass_on_the_results_they_come_from(
    tmp_path: Path, counts: list[tuple[int, int]]
) -> None:
    lines = []
    for i, (n, c) in enumerate(counts):
        lines += [
            json.dumps({"suite": "s", "stimulus": f"s{i}", "trial": t, "passed": t < c})
            for t in range(n)
        ]
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table, _ = load([str(results)])
    config_file = tmp_path / "suggested.yml"
    config_file.write_text(config_template.suggest(score_table(table), [str(results)]))
    config = load_config(str(config_file))
    if all(g.default for g in config.gates):
        return  # no gate suggested: check's default gate applies, which the file says
    outcome = run_check(CheckRequest(results=(str(results),), config=config))
    assert outcome.verdict == "pass", outcome.gates


# -- where it writes -------------------------------------------------------------------------


def test_init_refuses_to_overwrite_without_force(workdir: Path) -> None:
    existing = workdir / ".eval-gate.yml"
    existing.write_text("version: 1\n", encoding="utf-8")
    refused = invoke("init")
    assert refused.exit_code == 2
    assert "Error: .eval-gate.yml exists; add --force to replace it, or choose --output" in (
        refused.stderr
    )
    assert existing.read_text(encoding="utf-8") == "version: 1\n"
    forced = invoke("init", "--force")
    assert forced.exit_code == 0, forced.output
    assert existing.read_text(encoding="utf-8") == config_template.template()


def test_init_never_replaces_the_results_it_reads_even_with_force(workdir: Path) -> None:
    results = workdir / "results.jsonl"
    results.write_bytes((EXAMPLES / "failing" / "results.jsonl").read_bytes())
    before = results.read_bytes()
    refused = invoke("init", "results.jsonl", "--output", "./results.jsonl", "--force")
    assert refused.exit_code == 2
    assert "--output ./results.jsonl is also an input (results.jsonl)" in refused.stderr
    assert results.read_bytes() == before
    assert invoke("init", "results.jsonl", "--output", "gates.yml").exit_code == 0


def test_init_output_path_and_stdout(workdir: Path) -> None:
    written = invoke("init", "--output", "gates/ci.yml")
    assert written.exit_code == 0, written.output
    text = (workdir / "gates" / "ci.yml").read_text(encoding="utf-8")
    assert "# Check it with: eval-gate validate --config gates/ci.yml [RESULTS...]" in text
    printed = invoke("init", "-o", "-")
    assert printed.exit_code == 0
    assert printed.stdout == config_template.template()
    assert sorted(p.name for p in workdir.iterdir()) == ["gates"]


def test_init_with_bad_results_exits_2_and_writes_nothing(workdir: Path) -> None:
    (workdir / "bad.jsonl").write_text('{"stimulus": "a", "trial": 0, "passed": 3}\n')
    result = invoke("init", "bad.jsonl")
    assert result.exit_code == 2
    assert "bad.jsonl:1 at /passed" in result.stderr
    assert not (workdir / ".eval-gate.yml").exists()


# -- validate --config -------------------------------------------------------------------------


def test_validate_a_configuration_alone(workdir: Path) -> None:
    good = EXAMPLES / "failing" / ".eval-gate.yml"
    result = invoke("validate", "--config", str(good))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"ok: {good} (configuration, 3 gates)\n"
    bad = workdir / "bad.yml"
    bad.write_text("version: 1\ngates:\n  threshold: 2\n", encoding="utf-8")
    result = invoke("validate", "--config", str(bad))
    assert result.exit_code == 2
    assert f"invalid: {bad}: gate threshold min 2 can be read two ways" in result.stderr
    assert "1 of 1 file is invalid" in result.stderr


def test_validate_says_when_the_configuration_cannot_be_evaluated_on_the_results(
    workdir: Path,
) -> None:
    config = workdir / "k5.yml"
    config.write_text("version: 1\nk: 5\ngates:\n  pass_rate: 0.5\n", encoding="utf-8")
    results = str(EXAMPLES / "failing" / "results.jsonl")
    result = invoke("validate", "--config", str(config), results)
    assert result.exit_code == 2
    assert f"{config} cannot be evaluated on these results: k = 5 exceeds" in result.stderr


def test_validate_leaves_regression_gates_to_check_baseline(workdir: Path) -> None:
    config = workdir / "regression.yml"
    config.write_text("version: 1\ngates:\n  max_regression: 0.05\n", encoding="utf-8")
    result = invoke(
        "validate", "--config", str(config), str(EXAMPLES / "failing" / "results.jsonl")
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"ok: {config} can be evaluated on these results "
        "(1 regression gate needs check --baseline)"
    )


def test_validate_needs_files_or_a_configuration() -> None:
    result = invoke("validate")
    assert result.exit_code == 2
    assert "name result FILES, a --config file, or both" in result.stderr


@pytest.mark.parametrize(("stimuli", "trials"), [(40, 5), (5, 3)])
def test_suggested_targets_rarely_fail_a_rerun_of_the_same_agent(
    tmp_path: Path, stimuli: int, trials: int
) -> None:
    """Seeded simulation of what the file's comments claim: re-runs of an unchanged agent fail
    a gate at today's estimate a third to half of the time, the suggested gate about 1 in 20."""
    rng = np.random.default_rng(20240601)
    p = np.linspace(0.55, 1.0, stimuli)  # per-stimulus pass probabilities, fixed
    k = trials
    at_estimate: dict[str, list[float]] = {"pass_rate": [], "pass_hat_k": []}
    at_suggestion: dict[str, list[float]] = {"pass_rate": [], "pass_hat_k": []}
    results, config_file = tmp_path / "results.jsonl", tmp_path / "suggested.yml"
    for _ in range(60):
        passes = rng.binomial(trials, p)
        results.write_text(
            "".join(
                json.dumps({"stimulus": f"s{i}", "trial": t, "passed": bool(t < passes[i])}) + "\n"
                for i in range(stimuli)
                for t in range(trials)
            )
        )
        table, _ = load([str(results)])
        suite = score_table(table)
        config_file.write_text(config_template.suggest(suite, [str(results)]))
        targets = {g.kind: g.target for g in load_config(str(config_file)).gates}
        reruns = rng.binomial(trials, p, size=(400, stimuli))
        new = {
            "pass_rate": (reruns / trials).mean(axis=1),
            # unbiased pass^k = C(c,k)/C(n,k), written out apart from gate.metrics
            "pass_hat_k": (comb(reruns, k) / comb(trials, k)).mean(axis=1),
        }
        for kind, today in (("pass_rate", suite.pass_rate), ("pass_hat_k", suite.pass_hat_k)):
            at_estimate[kind].append(float(np.mean(new[kind] < today - 1e-12)))
            if kind in targets:
                at_suggestion[kind].append(float(np.mean(new[kind] < targets[kind] - 1e-12)))
    for kind in at_estimate:
        assert 0.3 <= np.mean(at_estimate[kind]) <= 0.55, (kind, np.mean(at_estimate[kind]))
        assert len(at_suggestion[kind]) >= 50, kind  # the gate was suggested in most runs
        assert np.mean(at_suggestion[kind]) <= 0.08, (kind, np.mean(at_suggestion[kind]))


def test_validate_refuses_hostile_configuration_files_without_a_traceback(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yml"
    os.mkfifo(fifo)  # opening it would block until a writer came
    not_utf8 = tmp_path / "latin1.yml"
    not_utf8.write_bytes(b"version: 1\n# caf\xe9\n")  # 11 + 5 bytes before the é
    huge = tmp_path / "huge.yml"
    huge.write_bytes(b"version: 1\n" + b"#" * limits.CONFIG_BYTES.value())
    for path, message in (
        (fifo, f"{fifo}: a named pipe (FIFO): only regular files are read"),
        (Path("/dev/zero"), "/dev/zero: a character device: only regular files are read"),
        (
            not_utf8,
            f"{not_utf8}: the configuration is not UTF-8 text (invalid continuation byte "
            "at byte 16)",
        ),
        (huge, f"{huge}: the file is over the configuration size limit (1,048,587 bytes)"),
    ):
        result = invoke("validate", "--config", str(path))
        assert result.exit_code == 2, (path, result.output)
        assert message in result.stderr and "invalid: " in result.stderr
        assert "Traceback" not in result.output
    checked = invoke("check", str(EXAMPLES / "failing" / "results.jsonl"), "--config", str(fifo))
    assert checked.exit_code == 2
    assert f"Error: cannot read the configuration: {fifo}: a named pipe (FIFO)" in checked.stderr


def test_results_with_cost_and_duration_suggest_budget_gates_that_pass_on_them(
    workdir: Path,
) -> None:
    """examples/passing reports cost and duration: init suggests (inactive) cost per trial
    and p95 duration gates at 25% over today, which pass on these results once active."""
    results = EXAMPLES / "passing" / "results.json"
    written = invoke("init", str(results), "--output", "-")
    assert written.exit_code == 0, written.output
    text = written.stdout
    start = text.index("  # metric:")
    block = [line.replace("  # ", "  ", 1) for line in text[start:].splitlines()]
    assert block[:2] == ["  metric:", "    - metric: cost_usd.mean_per_trial"]
    config = workdir / "budget.yml"
    config.write_text("version: 1\ngates:\n" + "\n".join(block) + "\n", encoding="utf-8")
    checked = invoke("check", str(results), "--config", str(config), "--json", "-")
    report = json.loads(checked.stdout)
    cost, p95 = report["gates"][:2]
    # 25% over the upper bound (cost) and over today's p95, rounded up to 2 digits.
    assert cost["target"] == config_template._ceil_significant(cost["upper"] * 1.25)
    assert p95["target"] == config_template._ceil_significant(p95["value"] * 1.25)
    assert (cost["decision"], p95["decision"]) == ("pass", "pass")
    assert checked.exit_code == 0


def test_ceil_significant_rounds_up_to_two_digits() -> None:
    assert config_template._ceil_significant(0.01234) == 0.013
    assert config_template._ceil_significant(47.9) == 48
    assert config_template._ceil_significant(120.0) == 120
    assert config_template._ceil_significant(0.0) == 0.0


def test_init_words_a_run_of_one_stimulus_and_one_trial_in_the_singular(workdir: Path) -> None:
    (workdir / "results.jsonl").write_text('{"stimulus": "only", "trial": 0, "passed": true}\n')
    result = invoke("init", "results.jsonl")
    assert result.exit_code == 0, result.output
    text = (workdir / ".eval-gate.yml").read_text(encoding="utf-8")
    assert "on 1 stimulus × 1 trial (mean over stimuli);" in text
    assert "1 stimuli" not in text and "1 trials" not in text


def test_the_suggested_score_threshold_is_two_standard_errors_below_the_estimate() -> None:
    """examples/passing: stimulus scores 0.9267 (four of them), 0.9467 and 0.8133; mean
    0.9111, standard deviation 0.0486, standard error 0.0486/√6 = 0.0198; the target
    0.9111 − 2 · 0.0198 = 0.8715, floored to 0.87. It was 0.91, the estimate itself, which
    a re-run as good as this one misses about half the time (a score gate has no interval)."""
    table, _ = load([str(EXAMPLES / "passing" / "results.json")])
    text = config_template.suggest(score_table(table), ["results.json"])
    assert "  # threshold: 0.87\n" in text
    assert "# standard error 0.02 over 6 stimuli). The target is two standard" in text
