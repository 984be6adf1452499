"""Results holding several suites (issue 15 point 5): a section each in the Markdown,
``suites[]`` in the JSON report, and gates that name a suite."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import optimize, stats

from gate.cli import main
from gate.config import build_config
from gate.errors import ConfigError
from gate.pipeline import CheckOutcome, CheckRequest, run_check
from gate.report import wording
from gate.report.json_report import build_report
from gate.report.markdown import render_summary
from gate.schemas import validator
from tests.conftest import trials_of

#: alpha: a1 3/3, a2 2/3; beta: b1 0/3, b2 1/3, b3 3/3.
OUTCOMES = {
    ("alpha", "a1"): "PPP",
    ("alpha", "a2"): "PPF",
    ("beta", "b1"): "FFF",
    ("beta", "b2"): "PFF",
    ("beta", "b3"): "PPP",
}


def midp(c: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Mid-p Clopper-Pearson interval for c of n, solved with scipy (an independent
    implementation): P(X > c) + P(X = c)/2 = α/2 at the lower end, mirrored above."""
    tail = (1 - confidence) / 2

    def upper_tail(p: float) -> float:
        return float(stats.binom.sf(c, n, p) + 0.5 * stats.binom.pmf(c, n, p) - tail)

    def lower_tail(p: float) -> float:
        return float(stats.binom.cdf(c - 1, n, p) + 0.5 * stats.binom.pmf(c, n, p) - tail)

    lo = 0.0 if c == 0 else float(optimize.brentq(upper_tail, 1e-12, c / n))
    hi = 1.0 if c == n else float(optimize.brentq(lower_tail, c / n, 1 - 1e-12))
    return lo, hi


@pytest.fixture
def results(write_jsonl: Callable[..., Path]) -> Path:
    records = [r for (suite, name), o in OUTCOMES.items() for r in trials_of(name, o, suite)]
    return write_jsonl(records)


def check(results: Path, config: dict[str, object], **kwargs: object) -> CheckOutcome:
    return run_check(CheckRequest((str(results),), build_config(config), **kwargs))  # type: ignore[arg-type]


def test_each_suite_is_scored_on_its_own_stimuli(results: Path) -> None:
    outcome = check(results, {"k": 3})
    alpha, beta = outcome.suites
    assert (alpha.name, len(alpha.stimuli), alpha.trials, alpha.passes) == ("alpha", 2, 6, 5)
    assert (beta.name, len(beta.stimuli), beta.trials, beta.passes) == ("beta", 3, 9, 4)
    # Means over each suite's stimuli: alpha (1 + 2/3)/2, beta (0 + 1/3 + 1)/3; all 9/15.
    assert alpha.pass_rate == pytest.approx(5 / 6) and beta.pass_rate == pytest.approx(4 / 9)
    assert outcome.suite.pass_rate == pytest.approx(0.6)
    # pass^3: only a stimulus with 3/3 has C(c,3)/C(3,3) = 1.
    assert alpha.pass_hat_k == pytest.approx(0.5) and beta.pass_hat_k == pytest.approx(1 / 3)
    # The suite interval at n_eff = M·min(n)/k: alpha 5 of 6 trials, beta 4 of 9.
    assert (alpha.pass_rate_interval.lo, alpha.pass_rate_interval.hi) == pytest.approx(
        midp(5, 6), abs=1e-7
    )
    assert (beta.pass_rate_interval.lo, beta.pass_rate_interval.hi) == pytest.approx(
        midp(4, 9), abs=1e-7
    )
    assert (alpha.flaky_stimuli, beta.flaky_stimuli) == (1, 1)


def test_the_json_report_has_suites_and_keeps_the_aggregate(results: Path) -> None:
    report = build_report(check(results, {"k": 3}))
    assert validator("report").is_valid(report)
    assert report["suite"]["name"] == "alpha, beta" and report["suite"]["stimuli"] == 5
    assert report["suite"]["pass_rate"] == 0.6
    assert [(x["name"], x["stimuli"], x["trials"], x["passes"]) for x in report["suites"]] == [
        ("alpha", 2, 6, 5),
        ("beta", 3, 9, 4),
    ]
    assert [x["pass_rate"] for x in report["suites"]] == [
        round(5 / 6, 10),
        round(4 / 9, 10),
    ]
    lo, hi = midp(4, 9)
    interval = report["suites"][1]["pass_rate_interval"]
    assert interval["lo"] == pytest.approx(lo, abs=1e-7) and interval["hi"] == pytest.approx(hi)


def test_one_suite_gives_one_entry_equal_to_the_aggregate(
    write_jsonl: Callable[..., Path],
) -> None:
    path = write_jsonl(trials_of("x", "PPF", "only") + trials_of("y", "PPP", "only"))
    report = build_report(check(path, {}))
    assert report["suites"] == [report["suite"]]


def test_the_markdown_has_a_section_per_suite(results: Path) -> None:
    text = render_summary(check(results, {"k": 3}))
    assert "**2 suites** (alpha, beta) · 5 stimuli · 15 trials (0 errored) · 0 skipped" in text
    alpha = text.split("### Suite alpha\n\n", 1)[1].split("### Suite beta", 1)[0]
    beta = text.split("### Suite beta\n\n", 1)[1]
    assert alpha.startswith(
        "**alpha** · 2 stimuli · 6 trials (0 errored) · 0 skipped · k = 3 · 1 flaky stimulus\n"
    )
    assert beta.startswith(
        "**beta** · 3 stimuli · 9 trials (0 errored) · 0 skipped · k = 3 · 1 flaky stimulus\n"
    )
    assert "| pass rate | 83.3% |" in alpha and "| pass rate | 44.4% |" in beta
    # Each section's table lists its own stimuli, by name alone.
    assert "| a2 | 3 |" in alpha and "| b1 |" not in alpha and "alpha/a2" not in alpha
    assert "| b1 | 3 |" in beta and "| a1 |" not in beta
    assert "### Stimuli, worst first" not in text  # the per-suite tables replace it


def test_a_gate_can_name_a_suite(results: Path) -> None:
    gates = {
        "pass_rate": [{"min": 0.8, "suite": "alpha"}, {"min": 0.8, "suite": "beta"}],
        "max_flakiness": {"max": 0.2, "scope": "stimuli", "suite": "alpha"},
        "pass_hat_k": {"min": 0.3, "k": 3, "suite": "beta", "bound": "lower"},
    }
    outcome = check(results, {"k": 3, "gates": gates})
    alpha, beta, flaky, consistent = outcome.gates
    assert (alpha.outcome, alpha.value) == ("pass", pytest.approx(5 / 6))
    assert (beta.outcome, beta.value) == ("fail", pytest.approx(4 / 9))
    assert (alpha.subject, beta.subject) == ("alpha", "beta")
    assert flaky.outcome == "fail" and flaky.failing == ("a2",)  # 1 of 3 = 33% > 20%
    # beta's pass^3 1/3 at n_eff = 3·3/3 = 3: the interval of 1 in 3 straddles 0.3.
    lo, hi = midp(1, 3)
    assert (consistent.lower, consistent.upper) == pytest.approx((lo, hi), abs=1e-7)
    assert consistent.outcome == "inconclusive"
    report = build_report(outcome)
    assert [g["suite"] for g in report["gates"]] == ["alpha", "beta", "alpha", "beta"]
    assert report["gates"][0]["name"] == "pass rate ≥ 0.8 (suite alpha, point estimate)"
    assert report["gates"][2]["name"] == (
        "flakiness ≤ 20% (every stimulus of suite alpha, point estimate)"
    )
    assert "suite beta's pass^3 is at least 0.3" in report["gates"][3]["sentence"]


def test_a_suite_the_results_do_not_hold_is_a_configuration_error(
    results: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as caught:
        check(results, {"gates": {"pass_rate": {"min": 0.5, "suite": "gamma"}}})
    assert str(caught.value) == (
        "gate pass_rate names suite 'gamma', which the results do not hold; they hold suites "
        "'alpha', 'beta'"
    )
    config = tmp_path / "gates.yml"
    config.write_text("gates:\n  pass_rate: {min: 0.5, suite: gamma}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(results), "--config", str(config)])
    assert result.exit_code == 2
    assert "names suite 'gamma', which the results do not hold; they hold suites" in (
        result.stderr
    )


def test_a_regression_gate_compares_one_suite(
    results: Path, write_jsonl: Callable[..., Path]
) -> None:
    """The baseline's alpha passed everything; beta is identical. Only alpha is compared."""
    base = {**OUTCOMES, ("alpha", "a2"): "PPP"}
    baseline = write_jsonl(
        [r for (suite, name), o in base.items() for r in trials_of(name, o, suite)],
        name="baseline.jsonl",
    )
    outcome = run_check(
        CheckRequest(
            (str(results),),
            build_config({"gates": {"max_regression": {"max": 0.05, "suite": "alpha"}}}),
            baseline=(str(baseline),),
        )
    )
    (comparison,) = outcome.comparisons
    assert comparison.suite == "alpha"
    assert [r.id for r in comparison.rows] == ["alpha/a1", "alpha/a2"]
    # Δ = mean(0, 2/3 - 1) = -1/6 over the two alpha stimuli.
    assert comparison.test.delta == pytest.approx(-1 / 6)
    report = build_report(outcome)
    assert report["comparisons"][0]["suite"] == "alpha"
    text = render_summary(outcome)
    assert "### Compared with the baseline (pass rate, suite alpha)" in text
    assert json.loads(json.dumps(report))["gates"][0]["suite"] == "alpha"


def test_a_metric_gate_can_name_a_suite_too(results: Path) -> None:
    """gates: metric: entries take suite: as the other gates do. avg is the mean pass rate:
    alpha (1 + 2/3)/2 = 5/6, beta 4/9."""
    gates = {
        "metric": [
            {"metric": "avg", "min": 0.8, "suite": "alpha"},
            {"metric": "avg", "min": 0.8, "suite": "beta"},
        ]
    }
    alpha, beta = check(results, {"k": 3, "gates": gates}).gates
    assert (alpha.outcome, alpha.value) == ("pass", pytest.approx(5 / 6))
    assert (beta.outcome, beta.value) == ("fail", pytest.approx(4 / 9))
    assert "(suite beta, point estimate)" in wording.gate_name(beta)
    with pytest.raises(ConfigError, match="names suite 'gamma'"):
        check(results, {"gates": {"metric": {"metric": "avg", "min": 0.5, "suite": "gamma"}}})


def test_many_suites_get_sections_for_the_lowest_pass_rates_only(write_jsonl) -> None:
    # A section per suite for 1,000 suites of 3 stimuli made a 1.8 MB summary (GitHub trims
    # a job summary past 1 MiB) and a facts line of 13 KB of suite names.
    from gate.pipeline import request_from_options
    from gate.report.markdown import MAX_SUITE_SECTIONS
    from gate.report.terminal import Terminal, render_terminal

    count = MAX_SUITE_SECTIONS + 5
    # Suite i passes (i % 7) of 7 trials: the lowest rates are i % 7 == 0, then 1, ...
    records = [r for i in range(count) for r in
               trials_of("x", "P" * (i % 7) + "F" * (7 - i % 7), suite=f"s{i:02d}")]  # fmt: skip
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    lowest = sorted(range(count), key=lambda i: i % 7)[:MAX_SUITE_SECTIONS]  # stable: by i
    summary = render_summary(outcome)
    headings = [line for line in summary.splitlines() if line.startswith("### Suite ")]
    assert headings == [f"### Suite s{i:02d}" for i in lowest]
    note = wording.suites_shown_note(MAX_SUITE_SECTIONS, count)
    assert f"_{note}_" in summary
    names = ", ".join(f"s{i:02d}" for i in range(10))
    assert f"**{count} suites** ({names} and {count - 10} more) · " in summary
    view = render_terminal(outcome, Terminal(200, color=False))
    assert [line for line in view.splitlines() if line.startswith("Suite s")] == [
        f"Suite s{i:02d}" for i in lowest
    ]
    assert "The 20 suites with the lowest pass rate of 25" in view
    assert len(build_report(outcome)["suites"]) == count


def test_suite_sections_stop_where_the_summary_would_pass_githubs_limit(
    write_jsonl, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20 suites of 400 stimuli made a 4.9 MB summary: the action trims it from the end,
    # which lost the comparison with the baseline. The sections that fit are kept, those of
    # the lowest pass rates first; the comparison and the methods always are.
    from gate.pipeline import request_from_options
    from gate.report import markdown

    count = 6

    def records(shift: int) -> list[dict[str, object]]:
        # Suite i's stimuli pass (i + shift) % 7 of 7 trials, each failure with a message.
        found = []
        for i in range(count):
            passes = (i * 3 + shift) % 7
            for j in range(30):
                for record in trials_of(f"case-{j:03d}", "P" * passes + "F" * (7 - passes),
                                        suite=f"s{i}"):  # fmt: skip
                    if not record["passed"]:
                        record["message"] = f"expected refund path {j}, got escalation"
                    found.append(record)
        return found

    request = request_from_options(
        [str(write_jsonl(records(0)))],
        config=None,
        baseline=[str(write_jsonl(records(2), "baseline.jsonl"))],
    )
    outcome = run_check(request)
    by_rate = sorted(range(count), key=lambda i: (i * 3) % 7)  # stable: by i
    whole = render_summary(outcome)
    headings = [line for line in whole.splitlines() if line.startswith("### Suite ")]
    assert headings == [f"### Suite s{i}" for i in range(count)]  # all fit: input order
    assert "another section would take" not in whole

    sections = [markdown._suite_section(outcome, suite) for suite in outcome.suites]
    budget = len(whole.encode()) - sum(len(s.encode()) + 2 for s in sections[-3:])
    monkeypatch.setattr(markdown, "SUMMARY_BYTES", budget)
    summary = render_summary(outcome)
    assert len(summary.encode()) <= budget
    headings = [line for line in summary.splitlines() if line.startswith("### Suite ")]
    shown = len(headings)
    assert 0 < shown < count
    assert headings == [f"### Suite s{i}" for i in by_rate[:shown]]
    next_section = len(sections[by_rate[shown]].encode()) + 2
    assert len(summary.encode()) + next_section > budget  # as many as fit
    assert f"_{wording.suites_shown_note(shown, count, summary_full=True)}_" in summary
    assert "### Compared with the baseline" in summary
    assert summary.rstrip().endswith(whole.rstrip().rsplit("\n\n", 1)[-1])  # the methods

    monkeypatch.setattr(markdown, "SUMMARY_BYTES", 2000)  # not even one section
    summary = render_summary(outcome)
    assert "### Suite " not in summary
    assert f"_{wording.suites_shown_note(0, count, summary_full=True)}_" in summary
    assert "### Compared with the baseline" in summary
