"""The regression gate through the whole pipeline: pairing, gates, exit code, report."""

from __future__ import annotations

import pytest

from gate.errors import ConfigError
from gate.pipeline import request_from_options, run_check
from gate.report import wording
from gate.report.json_report import build_report
from gate.report.markdown import render_summary
from tests.conftest import trials_of


def test_clear_drop_fails_the_gate_and_lists_regressions_first(write_jsonl) -> None:
    # 40 stimuli × 5 trials. Baseline: all pass. Candidate: 10 stimuli drop to 1/5.
    baseline = [r for i in range(40) for r in trials_of(f"s{i:02d}", "PPPPP")]
    candidate = [
        r for i in range(40) for r in trials_of(f"s{i:02d}", "PFFFF" if i < 10 else "PPPPP")
    ]
    candidate += trials_of("brand-new", "PPP")
    request = request_from_options(
        [str(write_jsonl(candidate, "candidate.jsonl"))],
        config=None,
        baseline=[str(write_jsonl(baseline, "baseline.jsonl"))],
        overrides={"max_regression": "0.05"},
    )
    outcome = run_check(request)
    assert outcome.exit_code == 1
    (gate,) = [g for g in outcome.gates if g.kind == "max_regression"]
    assert gate.outcome == "fail"
    assert wording.gate_name(gate) == (
        "no drop in pass rate beyond 5 points vs baseline (one-sided 95% bounds of Δ)"
    )
    (comparison,) = outcome.comparisons
    # Δ = mean(d_i) = 10 × (1/5 − 1) / 40 = −0.2 exactly; 40 shared stimuli → paired t.
    assert comparison.delta == -0.2
    assert comparison.test.method == "paired t"
    assert comparison.added == ("brand-new",)
    assert set(comparison.newly_failing) == set()  # 1/5 is still flaky, not failing
    assert len(comparison.with_status("newly flaky")) == 10
    report = build_report(outcome)
    assert report["comparisons"][0]["delta"] == -0.2
    assert report["verdict"] == "fail"


def test_no_change_passes(write_jsonl) -> None:
    # 40 stimuli × 10 trials, all passing: the trials' noise leaves L = −0.7 points.
    runs = [r for i in range(40) for r in trials_of(f"s{i}", "P" * 10)]
    request = request_from_options(
        [str(write_jsonl(runs, "candidate.jsonl"))],
        config=None,
        baseline=[str(write_jsonl(runs, "baseline.jsonl"))],
        overrides={"max_regression": "0"},
    )
    outcome = run_check(request)
    assert outcome.verdict == "pass"
    assert outcome.comparisons[0].delta == 0.0


def run_pair(write_jsonl, candidate, baseline, config_text=None, tmp_path=None, **overrides):
    config = None
    if config_text is not None:
        config = str(tmp_path / "gate.yml")
        (tmp_path / "gate.yml").write_text(config_text, encoding="utf-8")
    request = request_from_options(
        [str(write_jsonl(candidate, "candidate.jsonl"))],
        config=config,
        baseline=[str(write_jsonl(baseline, "baseline.jsonl"))],
        overrides=overrides,
    )
    return run_check(request)


def five(counts: dict[str, int], tags: dict[str, list[str]] | None = None) -> list[dict]:
    """Five trials per stimulus, the first c passing."""
    records = []
    for name, c in counts.items():
        for record in trials_of(name, "P" * c + "F" * (5 - c)):
            if tags and name in tags:
                record["tags"] = tags[name]
            records.append(record)
    return records


# d = (-0.4, -0.2, -0.6, -0.2, -0.4): tests/compare/test_compare_hand.py works the
# sign-flip p-values out by hand: 1/32 at δ = 0.15, 4/32 at δ = 0.25, U = -0.2. Five
# trials a side widen U to -0.129 (the trials' binomial noise): δ = 0.1 is shown, 0.15 not.
BASE = {"a": 5, "b": 4, "c": 5, "d": 4, "e": 5}
CAND = {"a": 3, "b": 3, "c": 2, "d": 3, "e": 3}


def test_every_max_regression_in_a_list_is_decided(write_jsonl, tmp_path) -> None:
    outcome = run_pair(
        write_jsonl,
        five(CAND),
        five(BASE),
        "gates:\n  max_regression: [{max: 0.25}, {max: 0.1}]\n"
        "  min_improvement: [{min: 0}, {min: 0.1}]\n",
        tmp_path,
    )
    gates = [(g.kind, g.target, g.outcome) for g in outcome.gates]
    # U = -0.129, L = -0.6 (95%, one-sided)
    assert gates == [
        ("max_regression", 0.25, "inconclusive"),  # U ≥ -0.25, and L < -0.30: not ruled out
        ("max_regression", 0.1, "fail"),  # U < -0.1
        ("min_improvement", 0.0, "fail"),  # U = -0.2 < 0.05: a 5-point gain is ruled out
        ("min_improvement", 0.1, "fail"),  # U < 0.15
    ]
    assert all(g.upper == pytest.approx(-0.12884, abs=1e-5) for g in outcome.gates)
    assert all(g.lower == pytest.approx(-0.6) for g in outcome.gates)
    # Each p-value is the larger of the sign flip's (4/32 at 0.25, 1/32 at 0.1) and the
    # trials' test's.
    assert outcome.gates[0].p_value > 4 / 32 and 1 / 32 < outcome.gates[1].p_value <= 0.05
    assert f"one-sided p = {outcome.gates[1].p_value:.3f}" in wording.gate_sentence(
        outcome.gates[1]
    )
    (comparison,) = outcome.comparisons  # one comparison behind all four decisions
    assert all(g.comparison is comparison for g in outcome.gates)
    assert outcome.gates[0].advice.more_stimuli is not None
    assert outcome.exit_code == 1


def test_per_gate_confidence_of_a_regression_gate(write_jsonl, tmp_path) -> None:
    # U = -0.129 at 95%: a drop beyond 10 points shown; at 99% (α = 0.01; 1/32 > 0.01) not
    outcome = run_pair(
        write_jsonl,
        five(CAND),
        five(BASE),
        "gates:\n  max_regression: [{max: 0.1}, {max: 0.1, confidence: 0.99}]\n",
        tmp_path,
    )
    at95, at99 = outcome.gates
    assert (at95.outcome, at99.outcome) == ("fail", "inconclusive")
    assert wording.gate_name(at99) == (
        "no drop in pass rate beyond 10 points vs baseline (one-sided 99% bounds of Δ)"
    )
    assert (at95.confidence, at99.confidence) == (0.95, 0.99)
    assert [c.confidence for c in outcome.comparisons] == [0.95, 0.99]
    # 99%, M = 5: U is the 1st largest subset mean after floor(0.01 · 32) = 0 → +∞ → +1
    assert (at99.lower, at99.upper) == (-1.0, 1.0)


def test_tag_restricts_the_paired_comparison(write_jsonl, tmp_path) -> None:
    # The tagged stimuli a-e drop (as above); ten untagged ones improve 0/5 → 5/5.
    tags = {name: ["critical"] for name in BASE}
    others = {f"x{i}": 0 for i in range(10)}
    candidate = five(CAND | {x: 5 for x in others}, tags)
    baseline = five(BASE | others, tags)
    tagged = run_pair(
        write_jsonl,
        candidate,
        baseline,
        "gates:\n  max_regression: {max: 0.1, tag: critical}\n",
        tmp_path,
    )
    (gate,) = tagged.gates
    (comparison,) = tagged.comparisons
    assert comparison.shared == tuple("abcde")
    assert comparison.delta == pytest.approx(-0.36)  # mean of d over a-e only
    assert gate.outcome == "fail" and gate.tag == "critical"
    assert wording.gate_name(gate) == (
        "no drop in pass rate beyond 10 points vs baseline "
        "(one-sided 95% bounds of Δ, stimuli tagged critical)"
    )
    untagged = run_pair(write_jsonl, candidate, baseline, tmp_path=tmp_path, max_regression="0.15")
    assert untagged.verdict == "pass"  # Δ over all 15 is +(10 - 1.8)/15 = +0.547
    assert untagged.comparisons[0].delta == pytest.approx(8.2 / 15)
    with pytest.raises(ConfigError, match="no stimulus carries the tag 'nope'"):
        run_pair(
            write_jsonl,
            candidate,
            baseline,
            "gates:\n  max_regression: {max: 0, tag: nope}\n",
            tmp_path,
        )


def test_stimulus_scope_gives_one_holm_decision(write_jsonl, tmp_path) -> None:
    outcome = run_pair(
        write_jsonl,
        five(CAND),
        five(BASE),
        "gates:\n  max_regression: {max: 0, scope: stimuli}\n",
        tmp_path,
    )
    (gate,) = outcome.gates
    assert gate.scope == "stimuli"
    assert wording.gate_name(gate) == "no stimulus worse than baseline (Holm, family-wise 95%)"
    # c: 5/5 → 2/5 has the smallest Fisher p, 21/252 = 1/12; Holm × 5 = 5/12: none shown
    # worse; but 5 trials a side cannot rule out a 25-point drop on any of them either.
    assert gate.p_value == pytest.approx(5 / 12) and gate.subject == "c"
    assert gate.outcome == "inconclusive" and gate.failing == ()
    assert set(gate.undecided) == set("abcde")


def test_fishers_floor_is_a_warning_only_where_a_per_stimulus_gate_needs_it(
    write_jsonl, tmp_path
) -> None:
    """Three trials a side: the smallest one-sided Fisher p-value is 1/C(6, 3) = 0.05, above
    α/M = 0.05/5 = 0.01, so no stimulus can be shown worse. That is a warning for a
    per-stimulus regression gate; with a suite gate, or none, it was a warning (and a PR
    annotation) about a gate nobody configured. The comparison's JSON notes keep it."""
    three = [r for name in "abcde" for r in trials_of(name, "PPF")]
    floor = "the smallest attainable Fisher p-value (0.05) exceeds α/M = 0.01"
    for config_text, warned in (
        ("gates:\n  max_regression: {max: 0, scope: stimuli}\n", True),
        ("gates:\n  max_regression: 0.05\n", False),
        ("gates:\n  pass_rate: 0.5\n", False),
    ):
        outcome = run_pair(write_jsonl, three, three, config_text, tmp_path)
        assert any(floor in w for w in wording.warnings(outcome)) is warned, config_text
        (comparison,) = build_report(outcome)["comparisons"]
        assert any(floor in note for note in comparison["notes"])


def test_k_above_the_trials_is_a_config_error(write_jsonl, tmp_path) -> None:
    with pytest.raises(ConfigError) as caught:
        run_pair(
            write_jsonl,
            five(CAND),
            five(BASE),
            "gates:\n  max_regression: {max: 0.05, metric: pass_hat_k, k: 10}\n",
            tmp_path,
        )
    assert str(caught.value) == (
        "gate max_regression cannot be evaluated: all 5 shared stimuli are left out of the "
        "paired test (e.g. 'a': 5 trials in the baseline, fewer than k = 10)"
    )


def test_no_stimulus_in_common_is_a_config_error(write_jsonl) -> None:
    renamed = five({f"new-{name}": c for name, c in CAND.items()})
    with pytest.raises(ConfigError) as caught:
        run_pair(write_jsonl, renamed, five(BASE), max_regression="0.05")
    assert str(caught.value) == (
        "gate max_regression: the results and the baseline have no stimulus in common, so "
        "nothing can be compared (results: 'new-a', 'new-b', 'new-c' and 2 more; baseline: "
        "'a', 'b', 'c' and 2 more). Check that both runs are of the same suite(s) and use the "
        "same stimulus ids."
    )
    # also without a regression gate: a baseline that shares nothing is a mistake
    with pytest.raises(ConfigError, match=r"^the baseline comparison: the results and the"):
        run_pair(write_jsonl, renamed, five(BASE))


def test_gates_keep_configuration_order_across_comparisons(write_jsonl, tmp_path) -> None:
    outcome = run_pair(
        write_jsonl,
        five(CAND),
        five(BASE),
        "gates:\n  max_regression:\n    - {max: 0.25}\n    - {max: 0, confidence: 0.99}\n"
        "    - {max: 0, scope: stimuli}\n  min_improvement: 0\n",
        tmp_path,
    )
    assert [(g.kind, g.scope, g.confidence) for g in outcome.gates] == [
        ("max_regression", "suite", 0.95),
        ("max_regression", "suite", 0.99),
        ("max_regression", "stimuli", 0.95),
        ("min_improvement", "suite", 0.95),
    ]
    assert len(outcome.comparisons) == 2  # 95% and 99%
    lines = render_summary(outcome).splitlines()
    (row,) = [line for line in lines if "(one-sided 99% bounds" in line]
    # δ = 0 is "≥ 0", never "≥ -0"; the margin a pass must rule out (δ + 5 points) beside it
    assert "| Δ ≥ 0 (pass: Δ > −5 shown) |" in row


def test_a_pass_with_the_estimate_past_the_margin_says_so(write_jsonl, tmp_path) -> None:
    """400 stimuli × 5 trials, 110 of them 5/5 → 4/5: Δ = −110 · 0.2 / 400 = −5.5 points.
    A drop beyond 5 is not shown and one of 10 is ruled out, so the gate passes (by
    design: it fails only on a drop shown beyond its margin), but the row's target read
    "Δ ≥ −5 pts" beside a value of −5.5 and a pass, and the sentence did not say why."""
    base = [r for i in range(400) for r in trials_of(f"s{i}", "PPPPP")]
    cand = [r for i in range(400) for r in trials_of(f"s{i}", "PPPPF" if i < 110 else "PPPPP")]
    outcome = run_pair(write_jsonl, cand, base, "gates:\n  max_regression: 0.05\n", tmp_path)
    (gate,) = outcome.gates
    assert gate.outcome == "pass" and gate.value == pytest.approx(-0.055)
    assert wording.target_text(gate) == "Δ ≥ −5 pts (pass: Δ > −10 shown)"
    assert wording.target_text(gate, short=True) == "Δ ≥ −5 pts"
    assert wording.gate_sentence(gate).endswith(
        "the data do not show a drop beyond 5 points, though the estimated drop (5.5 points) "
        "is beyond it."
    )


def test_a_pass_on_few_stimuli_is_flagged_as_weaker_than_its_level(write_jsonl, tmp_path) -> None:
    """Every trial passing on both sides: the differences are all 0, and the trials' binomial
    noise leaves L = −1.5 points at 20 × 10 (8 × 1 would not pass at all: a candidate at
    0.9 everywhere passes 8 trials in 43% of runs). A pass below 50 stimuli still carries
    a warning: docs/regression.md, Known limits, has the residual error rates."""
    for stimuli, warned in ((20, True), (50, False)):
        run = [r for i in range(stimuli) for r in trials_of(f"s{i}", "P" * 10)]
        outcome = run_pair(write_jsonl, run, run, "gates:\n  max_regression: 0.05\n", tmp_path)
        assert outcome.gates[0].outcome == "pass"
        said = [w for w in wording.warnings(outcome) if "weaker than its level" in w]
        assert bool(said) is warned, stimuli
        if warned:
            assert said[0].startswith("A regression gate passed on 20 shared stimuli: below 50")


def test_the_sentences_quoted_in_docs_regression_md_are_the_real_ones() -> None:
    from pathlib import Path

    import numpy as np

    from gate.compare import RunCounts, compare
    from gate.config import build_config
    from gate.gates import _regression_gate

    doc = " ".join((Path(__file__).parents[2] / "docs" / "regression.md").read_text().split())
    spec = build_config({"gates": {"max_regression": 0.05}}).gates[0]
    base = {f"s{i:02d}": RunCounts(5, 5) for i in range(40)}
    cand = {f"s{i:02d}": RunCounts(5, 1 if i < 10 else 5) for i in range(40)}
    fail = _regression_gate(spec, compare(base, cand))
    rng = np.random.default_rng(5)
    rates = rng.beta(2, 1, 50)
    base = {f"s{i:02d}": RunCounts(5, int(x)) for i, x in enumerate(rng.binomial(5, rates))}
    cand = {f"s{i:02d}": RunCounts(5, int(x)) for i, x in enumerate(rng.binomial(5, rates))}
    passed = _regression_gate(spec, compare(base, cand))
    assert (fail.outcome, passed.outcome) == ("fail", "pass")
    for decision in (fail, passed):
        assert f"> {wording.gate_sentence(decision)}".replace("> ", "") in doc.replace("> ", "")
