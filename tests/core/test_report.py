"""Report rendering details: folding, bounded tables, JSON completeness."""

from __future__ import annotations

import json
import math

import pytest

from gate.ingest import IngestOptions
from gate.pipeline import request_from_options, run_check
from gate.report import wording
from gate.report.escape import md_text
from gate.report.json_report import build_report
from gate.report.markdown import FOLD_ROWS, MAX_STIMULUS_ROWS, render_summary
from gate.schemas import validator
from gate.scoring import StimulusScore
from tests.conftest import EXAMPLES, trials_of


def test_long_stimulus_tables_are_folded_and_bounded(write_jsonl) -> None:
    count = MAX_STIMULUS_ROWS + 7
    records = [r for i in range(count) for r in trials_of(f"s{i:03d}", "PPF" if i % 2 else "PPP")]
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    summary = render_summary(outcome)
    assert (
        f"<details><summary>The worst {MAX_STIMULUS_ROWS} of {count} stimuli</summary>" in summary
    )
    assert "_… and 7 more stimuli, not shown here: the JSON report lists all._" in summary
    table_rows = [
        line
        for line in summary.splitlines()
        # the stimuli table's rows (the reliability table below it lists the flaky ones too)
        if line.startswith(("| s0", "| s1", "| s2")) and "✔" in line
    ]
    assert len(table_rows) == MAX_STIMULUS_ROWS
    assert all("✔✔✘" in row and "66.7%" in row for row in table_rows[:5])  # worst first
    assert len(build_report(outcome)["stimuli"]) == count


def test_a_long_stimulus_decay_curve_is_drawn_at_evenly_spaced_runs(write_jsonl) -> None:
    # One character per run made a stimulus of 300,000 runs a 900 KB line of the summary
    # (and the reliability table has up to 200 rows): it is drawn at 40 runs now.
    import math
    import random

    from gate.metrics import reliability_decay_curve
    from gate.report.markdown import DECAY_POINTS
    from gate.report.wording import SPARK

    rng = random.Random(0)
    long = "".join("P" if rng.random() < 0.998 else "F" for _ in range(997))
    records = trials_of("long", long) + trials_of("short", "PFPFP")
    summary = render_summary(run_check(request_from_options([str(write_jsonl(records))],
                                                            config=None)))  # fmt: skip
    curve = reliability_decay_curve([x == "P" for x in long])
    at = [math.ceil((i + 1) * len(long) / DECAY_POINTS) - 1 for i in range(DECAY_POINTS)]
    assert at[-1] == len(long) - 1
    drawn = "".join(SPARK[min(7, round(curve[k] / 100 * 7))] for k in at)
    row = next(line for line in summary.splitlines() if line.startswith("| long | ")
               and line[9] in SPARK)  # fmt: skip
    assert len(set(drawn)) == 3  # a curve that falls in steps, not a flat line
    assert f"| {drawn} ({DECAY_POINTS} of 997 runs, evenly spaced) | {curve[-1]} |" in row
    short = reliability_decay_curve([True, False, True, False, True])
    marks = "".join(SPARK[min(7, round(p / 100 * 7))] for p in short)
    assert f"| short | {marks} | {short[-1]} |" in summary  # five runs: a character each
    assert max(map(len, summary.splitlines())) < 1_000


def test_short_tables_are_not_folded(write_jsonl) -> None:
    records = [r for i in range(FOLD_ROWS) for r in trials_of(f"s{i}", "PP")]
    summary = render_summary(
        run_check(request_from_options([str(write_jsonl(records))], config=None))
    )
    # Only the methods are collapsed, at the end.
    assert summary.count("<details>") == 1
    assert summary.rstrip().endswith("</details>")
    assert "<details><summary>How these numbers are computed</summary>" in summary
    # no gate configured: the default one (pass rate ≥ 0.7 on its interval) decides, and
    # 20 of 20 passes do not show it yet (lower bound 20/(20 + 1.96²) = 0.839 ≥ 0.7: shown)
    assert summary.startswith("## ✅ eval-gate: PASS — the gate passed\n")
    assert "No gate is configured, so the default gate applies" in summary


def compared(write_jsonl, tmp_path, candidate, baseline, config_text=None, **overrides):
    config = None
    if config_text is not None:
        (tmp_path / "gate.yml").write_text(config_text, encoding="utf-8")
        config = str(tmp_path / "gate.yml")
    return run_check(
        request_from_options(
            [str(write_jsonl(candidate, "candidate.jsonl"))],
            config=config,
            baseline=[str(write_jsonl(baseline, "baseline.jsonl"))],
            overrides=overrides,
        )
    )


def delta_cells(summary: str) -> dict[str, str]:
    """Stimulus → its Δ column cell, from the stimuli table."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Stimulus | Trials"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    column = next(i for i, name in enumerate(header) if name.startswith("Δ vs baseline"))
    cells = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        row = [c.strip() for c in line.strip("|").split("|")]
        cells[row[0]] = row[column]
    return cells


def test_delta_line_has_interval_and_one_sided_p_without_any_gate(write_jsonl, tmp_path) -> None:
    # d = (-1/3, -1/3, 0, 0, 0): Σd = -2/3, Δ = -2/15. The three zeros flip to themselves, so 8 of
    # the 32 sign patterns keep both -1/3 negative: p(worse) = 8/32 = 0.25; every
    # pattern is ≥ -2/3: p(better) = 1.
    base = [r for s in "abcde" for r in trials_of(s, "PPP")]
    cand = [r for s in "abcde" for r in trials_of(s, "PPF" if s in "ab" else "PPP")]
    outcome = compared(write_jsonl, tmp_path, cand, base)
    assert [g.kind for g in outcome.gates] == ["pass_rate"]  # the default gate only
    summary = render_summary(outcome)
    assert (
        "**Δ pass rate = −13.3 points** (candidate − baseline, mean over 5 shared stimuli), "
        "two-sided 95% interval [−100.0, +100.0] (the whole range: with 5 stimuli no "
        "difference can be excluded two-sided at 95%; one-sided bounds are narrower); test: "
        "exact sign"
    ) in summary  # the smallest two-sided p of 32 sign patterns, 2/32, is above 0.05
    # the p-value worded so that it cannot be read as "a 25% chance that it is worse"
    assert (
        "- Evidence of a drop: one-sided p = 0.250: if the candidate were truly no worse than "
        "the baseline, data at least this far in that direction would turn up 25% of the "
        "time; it is not the probability that the candidate is worse."
    ) in summary
    report = build_report(outcome)["comparisons"][0]
    assert (report["p_worse"], report["p_better"]) == (0.25, 1.0)
    assert all(g["baseline_comparison"] is None for g in build_report(outcome)["gates"])


def test_delta_column_names_its_metric_and_why_a_stimulus_has_no_delta(
    write_jsonl, tmp_path
) -> None:
    # pass^3: 'short' has 2 trials in the baseline (left out), 'fresh' is new.
    base = [r for s in "abc" for r in trials_of(s, "PPP")] + trials_of("short", "PP")
    cand = [r for s in "abc" for r in trials_of(s, "PPPP" if s != "a" else "PPFP")]
    cand += trials_of("short", "PPP") + trials_of("fresh", "PPP")
    outcome = compared(
        write_jsonl,
        tmp_path,
        cand,
        base,
        "gates:\n  max_regression: {max: 0.1, metric: pass_hat_k, k: 3}\n",
    )
    summary = render_summary(outcome)
    assert "| Δ vs baseline (pass^3, points) |" in summary
    # a: pass^3 = C(3,3)/C(4,3) = 1/4 against 1 → ▼ 75.0
    assert delta_cells(summary) == {
        "a": "▼ 75.0",
        "b": "=",
        "c": "=",
        "short": "left out",
        "fresh": "new",
    }
    report = build_report(outcome)
    (comparison,) = report["comparisons"]
    assert comparison["excluded"] == [
        {"name": "short", "reason": "2 trials in the baseline, fewer than k = 3"}
    ]
    (gate,) = report["gates"]
    assert gate["kind"] == "max_regression" and gate["target"] == 0.1
    assert gate["detectable"] == 0.15 and gate["baseline_comparison"] == 0
    assert validator("report").is_valid(report)


def test_tagged_comparison_is_labelled_and_the_rest_is_not_compared(write_jsonl, tmp_path) -> None:
    base = [r for s in "abcdef" for r in trials_of(s, "PPP")]
    cand = [r for s in "abcdef" for r in trials_of(s, "FFF" if s == "a" else "PPP")]
    for record in base + cand:
        if record["stimulus"] in "abcde":
            record["tags"] = ["critical"]
    outcome = compared(
        write_jsonl, tmp_path, cand, base, "gates:\n  max_regression: {max: 0, tag: critical}\n"
    )
    summary = render_summary(outcome)
    assert "### Compared with the baseline (pass rate, stimuli tagged critical)" in summary
    cells = delta_cells(summary)
    assert cells["a"] == "▼ 100.0" and cells["f"] == "–"
    report = build_report(outcome)
    assert report["comparisons"][0]["tag"] == "critical"
    assert report["gates"][0]["tag"] == "critical"
    assert validator("report").is_valid(report)


def test_json_says_what_each_interval_is_for(write_jsonl) -> None:
    outcome = run_check(
        request_from_options([str(write_jsonl(trials_of("a", "PPF")))], config=None)
    )
    report = build_report(outcome)
    (stimulus,) = report["stimuli"]
    # 2 of 3, k = 3: the unbiased pass^3 is 0, outside the interval of the latent p^3
    assert stimulus["pass_hat_k"] == 0.0 and stimulus["pass_hat_k_interval"]["lo"] > 0.0
    assert stimulus["pass_hat_k_interval"]["estimand"].startswith("latent p^k; need not contain")
    assert stimulus["pass_at_k_interval"]["estimand"].startswith("latent 1-(1-p)^k")
    assert report["suite"]["pass_hat_k_interval"]["estimand"] == "mean over stimuli of p_i^k"
    assert validator("report").is_valid(report)
    assert "need not contain the unbiased estimates" in render_summary(outcome)


def test_json_text_is_the_same_document_whichever_encoder_writes_it() -> None:
    import json

    from gate.report.json_report import dumps

    data = {"verdict": "fail", "x": [0.1, 1e-07, 2.5e300, None], "name": "é<&>", "n": 10**30}
    text = dumps(data)
    assert text.endswith("}\n")
    assert json.loads(text) == data  # orjson refuses the 100-bit int; json writes it
    small = {k: v for k, v in data.items() if k != "n"}
    assert json.loads(dumps(small)) == small
    assert '"name": "é<&>"' in dumps(small)  # UTF-8, nothing escaped


def test_only_undecided_stimuli_carry_more_trials(write_jsonl, tmp_path) -> None:
    """A per-stimulus gate: 'good' (20/20) is decided, 'close' (9/20) is not."""
    records = trials_of("good", "P" * 20) + trials_of("close", "P" * 9 + "F" * 11)
    config = tmp_path / "gate.yml"
    config.write_text(
        "gates:\n  pass_rate: {min: 0.5, bound: interval, scope: stimuli}\n", encoding="utf-8"
    )
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=str(config)))
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    more = {s["name"]: s["more_trials"] for s in report["stimuli"]}
    assert more["good"] is None
    assert isinstance(more["close"], int) and more["close"] > 50
    (gate,) = report["gates"]
    assert gate["undecided"] == ["close"] and gate["decision"] == "inconclusive"


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("Fix off-by-one in paginator", '"Fix off-by-one in paginator"'),
        ('say "hi"]\n```\n%%{init: {"theme": "dark"}}%%', '"say hi init: theme : dark"'),
        ("a; #quot; <b>x</b> `y` & z", '"a quot b x /b y z"'),
        ("   ", '"?"'),
        ("x" * 40, '"' + "x" * 31 + '…"'),
        ("Ünïcode naïve 名前", '"Ünïcode naïve 名前"'),
    ],
)
def test_a_mermaid_label_cannot_end_its_string_or_start_a_directive(name: str, label: str) -> None:
    from gate.report.escape import mermaid_label

    assert mermaid_label(name) == label


@pytest.mark.parametrize(
    ("names", "labels"),
    [
        # A shared path or test-id beginning would leave ten bars of one cut label.
        (
            [f"tests/integration/agents/customer_support/scenario_{i:04d}_refund" for i in (7, 12)],
            ['"1. …scenario_0007_refund"', '"2. …scenario_0012_refund"'],
        ),
        (
            [f"tests.agents.test_refund.TestRefund::test_case[{i}]" for i in (17, 2)],
            ['"1. …test_case 17"', '"2. …test_case 2"'],
        ),
        # Labels that fit, or a shared beginning too short to be worth a "…", stay whole.
        (["tests/a/one", "tests/a/two"], ['"1. tests/a/one"', '"2. tests/a/two"']),
        (
            ["abc/" + "x" * 40, "abc/" + "y" * 40],
            ['"1. abc/' + "x" * 24 + '…"', '"2. abc/' + "y" * 24 + '…"'],
        ),
        # One label, or names alike only inside a word: nothing is cut but the end.
        (["tests/integration/agents/customer_support/x"], ['"1. tests/integration/agents/cus…"']),
        (
            ["scenario_refund_and_escalation_path_01", "scenario_refund_and_escalation_path_02"],
            ['"1. scenario_refund_and_escalati…"', '"2. scenario_refund_and_escalati…"'],
        ),
        # Whatever a name holds is made safe first; the "…" is the only thing added.
        (
            ['tests/"]```/%%{init}%%/case_1', 'tests/"]```/%%{init}%%/case_2' + "z" * 30],
            ['"1. …case_1"', '"2. …case_2' + "z" * 21 + '…"'],
        ),
    ],
)
def test_chart_labels_show_what_tells_the_names_apart(names: list[str], labels: list[str]) -> None:
    from gate.report.escape import mermaid_label, mermaid_labels

    assert mermaid_labels(names) == labels
    if not any("…" in label[:5] for label in labels):  # nothing shared cut: as one by one
        assert labels == [mermaid_label(f"{i}. {n}") for i, n in enumerate(names, 1)]


def test_the_chart_shows_the_worst_stimuli_with_their_intervals(write_jsonl) -> None:
    """12 stimuli: the chart shows the 10 worst (pass rate, then pass^k), bars the
    estimates in percent, lines the mid-p interval ends."""
    outcomes = ["FFFF", "PFFF", "PPFF", "PPPF"] + ["PPPP"] * 8
    records = [r for i, o in enumerate(outcomes) for r in trials_of(f"s{i:02d}", o)]
    summary = render_summary(
        run_check(request_from_options([str(write_jsonl(records))], config=None))
    )
    chart = summary.split("```mermaid\n", 1)[1].split("```", 1)[0]
    lines = chart.splitlines()
    assert lines[0] == "xychart-beta horizontal"
    assert lines[1].startswith('    x-axis ["1. s00", "2. s01", "3. s02", "4. s03", "5. s04"')
    assert lines[1].count('"') == 20  # ten labels
    assert lines[3] == "    bar [0.0, 25.0, 50.0, 75.0" + ", 100.0" * 6 + "]"
    # mid-p 95% for 0 of 4: upper end 1 - 0.05^(1/4) = 52.7%; for 4 of 4 the lower end 47.3%.
    assert lines[4].startswith("    line [0.0, ") and lines[4].endswith(", 47.3]")
    assert lines[5].startswith("    line [52.7, ") and lines[5].endswith(", 100.0]")
    assert "_Pass rate of the 10 worst of 12 stimuli, worst first" in summary


def test_counts_are_in_words_that_agree(write_jsonl) -> None:
    records = trials_of("a", "PPE") + trials_of("b", "PPP")
    request = request_from_options(
        [str(write_jsonl(records))], config=None, overrides={"threshold": "0.9"}
    )
    outcome = run_check(request)
    summary = render_summary(outcome)
    assert "· 2 stimuli · 6 trials (1 errored) · 0 skipped · k = 3 · 1 flaky stimulus" in summary
    assert summary.startswith("## ❌ eval-gate: FAIL — the gate failed\n")
    assert "| a | 3 (1 errored) |" in summary
    from gate.report import wording

    assert wording.exit_line(outcome) == (
        "eval-gate: FAIL (1 failed, 0 inconclusive, of 1 gate); exit code 1"
    )
    assert wording.more_stimuli_note(1) == (
        "… and 1 more stimulus, not shown here: the JSON report lists all."
    )


def test_reports_name_the_raised_mid_p_weight_where_it_is_used(write_jsonl) -> None:
    """A stimulus with 6 trials gets mid-p with the weight 0.549 on P(X = c) (the
    coverage floor); the reports say so, and its bounds solve the weighted tails."""
    from scipy import optimize, stats

    records = trials_of("six", "PPPFFF") + trials_of("five", "PPPPF")
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    note = "0.549 at n = 6 instead of ½, which keeps the exact coverage of a 95% interval ≥ 92%"
    assert f"interval: mid-p with a coverage floor (its tails weigh P(X = c) by {note});" in (
        render_summary(outcome)
    )
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    assert report["methods"]["stimulus_interval"].endswith(f"{note})")
    interval = next(s for s in report["stimuli"] if s["name"] == "six")["pass_rate_interval"]
    assert interval["method"] == "mid-p with a coverage floor"

    def lower(p: float) -> float:  # P(X > 3) + 0.549·P(X = 3) = 0.025, X ~ Bin(6, p)
        return stats.binom.sf(3, 6, p) + 0.549 * stats.binom.pmf(3, 6, p) - 0.025

    expected_lo = optimize.brentq(lower, 1e-9, 1 - 1e-9, xtol=1e-15)
    assert abs(interval["lo"] - expected_lo) < 1e-9
    assert abs(interval["hi"] - (1 - expected_lo)) < 1e-9  # 3 of 6: symmetric
    # Five trials keep plain mid-p, and a report without n = 6, 12, 13 or 14 says nothing more.
    only_five = run_check(
        request_from_options([str(write_jsonl(trials_of("five", "PPPPF")))], config=None)
    )
    assert build_report(only_five)["methods"]["stimulus_interval"] == "mid-p with a coverage floor"


def _with_messages(write_jsonl):
    records = [
        {"suite": "s", "stimulus": "never", "trial": t, "passed": False, "message": f"wrong {t}"}
        for t in range(4)
    ]
    records += [
        {"suite": "s", "stimulus": "flaky", "trial": 0, "passed": True, "message": "fine"},
        {"suite": "s", "stimulus": "flaky", "trial": 1, "status": "error",
         "message": "sandbox `rm -rf` <b>@octocat</b> #12\nsecond line"},
        {"suite": "s", "stimulus": "steady", "trial": 0, "passed": True},
        {"suite": "s", "stimulus": "steady", "trial": 1, "passed": True},
    ]  # fmt: skip
    path = write_jsonl(records)
    return path, run_check(request_from_options([str(path)], config=None))


def test_json_stimuli_say_why_trials_failed(write_jsonl) -> None:
    path, outcome = _with_messages(write_jsonl)
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    by_name = {s["name"]: s["messages"] for s in report["stimuli"]}
    assert by_name["never"] == [
        {"trial": t, "outcome": "failed", "text": f"wrong {t}", "file": str(path),
         "line": t + 1, "pointer": None}
        for t in range(3)  # the first 3 of 4
    ]  # fmt: skip
    assert by_name["flaky"] == [
        {"trial": 1, "outcome": "errored", "file": str(path), "line": 6, "pointer": None,
         "text": "sandbox `rm -rf` <b>@octocat</b> #12\nsecond line"}
    ]  # fmt: skip
    assert by_name["steady"] == []


def test_markdown_shows_the_messages_of_failing_and_flaky_stimuli_collapsed(write_jsonl) -> None:
    path, outcome = _with_messages(write_jsonl)
    summary = render_summary(outcome)
    section = summary.split("<details><summary>Why trials failed (the first messages of 2 stimuli)")
    assert len(section) == 2
    body = section[1].split("</details>")[0]
    where = md_text(str(path))
    assert body.splitlines()[2:7] == [
        "- **never (0/4 passed)**",
        f"  - trial 0 failed ({where}\\:1): wrong 0",
        f"  - trial 1 failed ({where}\\:2): wrong 1",
        f"  - trial 2 failed ({where}\\:3): wrong 2",
        "- **flaky (1/2 passed)**",
    ]
    # Escaped as text: no code span, no HTML, no mention or issue link, one line.
    assert body.splitlines()[7] == (
        f"  - trial 1 errored ({where}\\:6): sandbox \\`rm \\-rf\\` "
        "\\<b\\>\\@\u2060octocat\\<\\/b\\> \\#\u206012 second line"
    )
    assert "steady" not in body


def test_the_streamed_json_report_is_the_whole_one(write_jsonl, tmp_path, monkeypatch) -> None:
    import json

    from gate.report import json_report

    records = [r for i in range(25) for r in trials_of(f"s{i:02d}", "PFE"[: 1 + i % 3] + "P")]
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    whole = json_report.dumps(build_report(outcome))
    for per_part in (1, 7, 25, 1000):
        monkeypatch.setattr(json_report, "STIMULI_PER_PART", per_part)
        parts = list(json_report.report_parts(outcome))
        assert "".join(parts) == whole
        assert len(parts) == 2 + -(-25 // per_part)  # head, the stimuli in parts, tail
    json_report.write_report(str(tmp_path / "r.json"), outcome)
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8")) == json.loads(whole)


def test_the_streamed_json_report_is_the_whole_one_with_comparisons(
    write_jsonl, tmp_path, monkeypatch
) -> None:
    """Each comparison's per-stimulus rows are streamed too (150,000 compared stimuli held
    170 MB of rows and text at once): the same text for every part size, for three
    comparisons (all suites, one suite, pass^2)."""
    import json

    from gate.report import json_report

    def records(shift: int) -> list[dict[str, object]]:
        rows = []
        for i in range(23):
            for suite in ("a", "b"):
                rows += trials_of(f"s{i:02d}", "PFPPF"[(i + shift) % 3 :] + "P", suite)
        rows += trials_of("only-here", "PP")
        return rows

    base = str(write_jsonl(records(0), name="base.jsonl"))
    cand = str(write_jsonl(records(1), name="cand.jsonl"))
    config = tmp_path / "gates.yml"
    config.write_text(
        "gates:\n  max_regression: [{max: 0.05}, {max: 0.05, suite: a},"
        " {max: 0.05, metric: pass_hat_k, k: 2}]\n",
        encoding="utf-8",
    )
    outcome = run_check(request_from_options([cand], config=str(config), baseline=[base]))
    assert [len(c.rows) for c in outcome.comparisons] == [47, 23, 47]
    whole = json_report.dumps(build_report(outcome))
    for per_part in (1, 5, 23, 1000):
        monkeypatch.setattr(json_report, "STIMULI_PER_PART", per_part)
        assert "".join(json_report.report_parts(outcome)) == whole
    json_report.write_report(str(tmp_path / "r.json"), outcome)
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report == json.loads(whole)
    assert sum(len(c["stimuli"]) for c in report["comparisons"]) == sum(
        len(c.rows) for c in outcome.comparisons
    )


def test_a_lone_surrogate_does_not_change_how_the_reports_numbers_are_written(
    write_jsonl, monkeypatch
) -> None:
    """orjson refuses a lone surrogate, so the part holding one was written by json, whose
    numbers read 4.6309e-06 where orjson's read 4.6309e-6: the report's text depended on
    which part the message fell in (a differential fuzzer finding, seed 39). The text is now
    the same for every part size, and the surrogate spelt as the escape it was."""
    from gate.report import json_report

    records = [r for i in range(6) for r in trials_of(f"s{i}", "P" + "F" * (i + 20))]
    records[1]["message"] = "lone \ud800 here"
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    texts = set()
    for per_part in (1, 2, 1000):
        monkeypatch.setattr(json_report, "STIMULI_PER_PART", per_part)
        texts.add("".join(json_report.report_parts(outcome)))
    (text,) = texts
    assert '"text": "lone \\ud800 here"' in text
    assert "e-0" not in text  # orjson's style throughout: 1.2e-5, never json's 1.2e-05
    assert json.loads(text)["stimuli"][0]["name"] == "s0"


def test_annotations_of_failing_stimuli_name_the_file_and_line(write_jsonl) -> None:
    from gate.report.annotations import build_annotations

    path, outcome = _with_messages(write_jsonl)
    notes = [n for n in build_annotations(outcome) if "stimulus" in n.title]
    assert [(n.level, n.title, n.file, n.line) for n in notes] == [
        ("warning", "eval-gate: failing stimulus never", str(path), 1),
        ("warning", "eval-gate: flaky stimulus flaky", str(path), 6),
    ]
    assert notes[0].message == (
        f"never: 0/4 trials passed; first: trial 0 failed ({path}:1): wrong 0"
    )


def test_annotations_without_messages_point_at_the_first_failed_trial(write_jsonl) -> None:
    """No trial has a message (JUnit's bare <failure/>, a bare native record): the annotation
    still names the file and the line of the stimulus's first failed or errored trial."""
    from gate.report.annotations import build_annotations

    records = trials_of("steady", "PPP") + trials_of("broken", "EFF") + trials_of("wobbly", "PPFP")
    path = write_jsonl(records)  # one record per line, from line 1
    outcome = run_check(request_from_options([str(path)], config=None))
    notes = [n for n in build_annotations(outcome) if "stimulus" in n.title]
    assert [(n.title, n.file, n.line) for n in notes] == [
        ("eval-gate: failing stimulus broken", str(path), 4),  # its trial 0, the error
        ("eval-gate: flaky stimulus wobbly", str(path), 9),
    ]


def test_an_inconclusive_gate_counted_as_a_fail_is_an_error_annotation(write_jsonl) -> None:
    """on_inconclusive: fail makes an inconclusive verdict exit 1 (a red step), but its only
    annotation was a warning: the step failed with no error to say why."""
    from gate.report.annotations import build_annotations

    path = write_jsonl([r for s in "abc" for r in trials_of(s, "PPF")])  # 6/9: straddles 0.7
    for policy, level in (("fail", "error"), ("inconclusive", "warning"), ("pass", "warning")):
        request = request_from_options(
            [str(path)], config=None, overrides={"on_inconclusive": policy}
        )
        outcome = run_check(request)
        assert outcome.verdict == "inconclusive"
        (note,) = [n for n in build_annotations(outcome) if "gate inconclusive" in n.title]
        assert note.level == level, policy


def test_annotations_judge_a_stimulus_of_the_gates_own_suite_only(write_jsonl, tmp_path) -> None:
    """Suites a and b both hold a t1; a gate on suite a fails a's t1 (1/3). b's t1 (2/3) was
    also annotated as a stimulus that gate failed, both under the same bare name."""
    from gate.report.annotations import build_annotations

    records = trials_of("t1", "PFF", "a") + trials_of("t2", "PPP", "a")
    records += trials_of("t1", "PPF", "b") + trials_of("t2", "PPP", "b")
    config = tmp_path / "gates.yml"
    config.write_text("gates:\n  pass_rate: {min: 0.5, suite: a, scope: stimuli}\n")
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=str(config)))
    kinds = ("eval-gate: failing stimulus", "eval-gate: flaky stimulus")
    notes = [n for n in build_annotations(outcome) if n.title.startswith(kinds)]
    assert [(n.level, n.title, n.message) for n in notes] == [
        ("error", "eval-gate: failing stimulus a/t1", "a/t1: 1/3 trials passed"),
        (
            "warning",
            "eval-gate: flaky stimulus b/t1",
            "b/t1: 2/3 trials passed; 33.3% minority outcomes (unreliable)",
        ),
    ]


def test_errored_and_reliability_tables_stay_bounded(write_jsonl) -> None:
    count = MAX_STIMULUS_ROWS + 10
    records = [r for i in range(count) for r in trials_of(f"s{i:03d}", "PFE")]
    for record in records[1::3]:  # each stimulus's failed trial says why
        record["message"] = f"{record['stimulus']} missed"
    summary = render_summary(
        run_check(request_from_options([str(write_jsonl(records))], config=None))
    )
    errored = summary.split("**Errored trials**")[1].split("</details>")[0]
    assert sum(line.startswith("| s") for line in errored.splitlines()) == MAX_STIMULUS_ROWS
    assert "… and 10 more stimuli, not shown here: the JSON report lists all." in errored
    # The reliability and message sections were cut at 200 stimuli without saying so.
    title = f"Reliability of the worst {MAX_STIMULUS_ROWS} of {count} stimuli that did not always"
    reliability = summary.split(title)[1].split("</details>")[0]
    assert sum(line.startswith("| s") for line in reliability.splitlines()) == MAX_STIMULUS_ROWS
    assert "_… and 10 more stimuli, not shown here: the JSON report lists all._" in reliability
    messages = summary.split(f"Why trials failed (the first messages of {MAX_STIMULUS_ROWS}")[1]
    messages = messages.split("</details>")[0]
    assert messages.count(" missed") == MAX_STIMULUS_ROWS
    assert (
        "_… and 10 more stimuli that did not always pass, not shown here: the JSON report has "
        "every message._" in messages
    )


def test_large_counts_are_grouped_by_thousands(tmp_path) -> None:
    path = tmp_path / "counts.jsonl"
    rows = [{"stimulus": f"s{i}", "n": 10, "c": 5 + i % 2, "errors": 1} for i in range(1200)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    request = request_from_options(
        [str(path)], config=None, overrides={}, ingest=IngestOptions(format="counts")
    )
    summary = render_summary(run_check(request))
    assert "· 1,200 stimuli · 12,000 trials (1,200 errored) · 0 skipped · k = 10 · " in summary
    assert "1,200 flaky stimuli" in summary
    assert "Per stimulus: 1,200 capable but flaky." in summary
    assert "the 10 worst of 1,200 stimuli" in summary
    # Totals have no trial order and no messages: those views are left out, unasked.
    outcome = run_check(request)
    assert not outcome.suite.per_trial
    assert "Reliability of" not in summary and "Why trials failed" not in summary
    failing = str(EXAMPLES / "failing" / "results.jsonl")
    trials = run_check(request_from_options([failing], config=None))
    assert trials.suite.per_trial


def test_the_first_error_message_is_kept_after_three_failures(write_jsonl) -> None:
    """The first three messages are failures': the first error's is kept as well, so the
    errored-trials table says why the harness failed; a second error's is not."""
    records = trials_of("a", "FFFPEE")
    for index, record in enumerate(records):
        record["message"] = f"m{index}"
    records[4]["message"], records[5]["message"] = "sandbox timed out", "second error"
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    (stimulus,) = outcome.suite.stimuli
    assert [(m.text, m.outcome, m.trial) for m in stimulus.messages] == [
        ("m0", "failed", 0),
        ("m1", "failed", 1),
        ("m2", "failed", 2),
        ("sandbox timed out", "errored", 4),
    ]
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    assert len(report["stimuli"][0]["messages"]) == 4
    assert "| a | 2 | sandbox timed out |" in render_summary(outcome)
    records = trials_of("b", "FEFFE")
    for index, record in enumerate(records):
        record["message"] = f"m{index}"
    again = run_check(request_from_options([str(write_jsonl(records))], config=None))
    # An error among the first three: nothing more is kept.
    assert [m.outcome for m in again.suite.stimuli[0].messages] == ["failed", "errored", "failed"]


def test_a_reading_warning_is_annotated_before_the_failing_stimuli() -> None:
    """pytest-flake.xml has 10 failing stimuli: the warning that its repeats were read as
    parameters came last and fell past the runner's 10 warnings, into the 'more' notice."""
    from pathlib import Path

    from gate.github.runner import annotation_commands
    from gate.pipeline import request_from_options, run_check
    from gate.report.annotations import build_annotations

    xml = Path(__file__).parents[1] / "ingest" / "fixtures" / "junit" / "pytest-flake.xml"
    outcome = run_check(request_from_options([str(xml)], config=None))
    notes = build_annotations(outcome)
    assert sum(n.title.startswith("eval-gate: failing stimulus") for n in notes) == 10
    shown = annotation_commands(notes)
    warning = next(i for i, line in enumerate(shown) if "--junit-flakefinder" in line)
    assert shown[warning].startswith("::warning title=eval-gate%3A warning::")
    assert warning == 1  # after the failed gate, before every stimulus


def test_bayes_at_n_is_in_the_json_report_and_its_interval_is_named() -> None:
    """The summary showed Bayes@N and its interval, but the JSON report had neither and the
    methods notes called every suite interval mid-p. By hand for examples/failing: 0/3, 1/3,
    2/3, 3/3, 3/3 give posterior means (c + 1)/5 = .2, .4, .6, .8, .8, mean .56; posterior
    variances ab/(5²·6) = (4 + 6 + 6 + 4 + 4)/150 over 25 stimuli² → sd 0.08; 0.56 ± z·0.08."""
    from gate.pipeline import request_from_options, run_check
    from gate.report.json_report import build_report
    from gate.report.markdown import render_summary
    from gate.schemas import validator

    results = str(EXAMPLES / "failing" / "results.jsonl")
    outcome = run_check(request_from_options([results], config=None))
    report = build_report(outcome)
    assert validator("report").is_valid(report)
    suite = report["suite"]
    assert suite["bayes"] == pytest.approx(0.56)
    z = 1.959963984540054
    assert suite["bayes_interval"]["lo"] == pytest.approx(0.56 - z * 0.08, abs=1e-9)
    assert suite["bayes_interval"]["hi"] == pytest.approx(0.56 + z * 0.08, abs=1e-9)
    assert suite["bayes_interval"]["confidence"] == 0.95
    method = suite["bayes_interval"]["method"]
    assert "normal approx" in method
    summary = render_summary(outcome)
    assert "(c + 1)/(n + 2), averaged over the stimuli; it pulls every rate" in summary
    assert f"Its interval ({method}) is for that score's own expectation" in summary


def test_warnings_sit_under_the_gates_survive_a_trimmed_comment_and_are_capped(
    write_jsonl,
) -> None:
    """They were the last section: a PR comment trimmed to 65,536 characters lost them,
    and a file with many look-alike names listed every pair."""
    from dataclasses import replace

    from gate.github.comment import build_comment_body
    from gate.pipeline import request_from_options, run_check
    from gate.report.markdown import render_summary
    from gate.report.terminal import Terminal, render_terminal

    records = [
        {
            "stimulus": f"case {i:04d} " + "x" * 60,
            "trial": t,
            "passed": t != i % 3,
            "message": "assert failed: " + "y" * 300,
        }
        for i in range(3000)
        for t in range(3)
    ]
    records += [
        {"stimulus": "caf\u00e9", "trial": 0, "passed": True},
        {"stimulus": "cafe\u0301", "trial": 0, "passed": True},
    ]
    path = write_jsonl(records)
    outcome = run_check(request_from_options([str(path)], config=None))
    (look_alike,) = outcome.warnings
    # 11 more, as many files would give: the views show 10 and count the rest.
    outcome = replace(outcome, warnings=(look_alike,) * 12)
    summary = render_summary(outcome)
    assert summary.index("**Warnings:**") < summary.index("### Stimuli, worst first")
    assert summary.count("differ only in Unicode normalisation") == 10
    assert "- … and 2 more warnings (the JSON report lists every one)" in summary
    body = build_comment_body(summary, "default", None).text
    assert "Left out of this comment for GitHub's 65,536-character limit" in body  # folded
    assert body.count("differ only in Unicode normalisation") == 10
    view = render_terminal(outcome, Terminal(100, color=False))
    assert view.index("Warnings") < view.index("Stimuli, worst first")


def test_the_changed_stimuli_table_is_bounded_like_the_stimuli_table(write_jsonl) -> None:
    # It listed every changed stimulus: 8,000 of them made a 460 KB table of the summary.
    count = MAX_STIMULUS_ROWS + 30
    base = [r for i in range(count) for r in trials_of(f"s{i:03d}", "PPPP")]
    # s000..s014 drop to 1 of 4 (regressions), the rest to 3 of 4.
    head = [r for i in range(count) for r in trials_of(f"s{i:03d}", "PFFF" if i < 15 else "PPPF")]
    candidate = write_jsonl(head, name="c.jsonl")
    baseline = write_jsonl(base, name="b.jsonl")
    outcome = run_check(
        request_from_options([str(candidate)], config=None, baseline=[str(baseline)])
    )
    summary = render_summary(outcome)
    title = f"The first {MAX_STIMULUS_ROWS} of {count} changed stimuli, regressions first"
    assert f"<details><summary>{title}</summary>" in summary
    table = summary[summary.index(title) :]
    rows = [line for line in table.splitlines() if line.startswith("| s")]
    assert len(rows) == MAX_STIMULUS_ROWS
    assert all("| 4/4 | 1/4 |" in row for row in rows[:15])  # the biggest drops first
    assert "_… and 30 more stimuli, not shown here: the JSON report lists all._" in table
    (comparison,) = build_report(outcome)["comparisons"]
    assert len(comparison["stimuli"]) == count


def test_counts_of_one_are_singular_in_comparisons_and_errors(write_jsonl) -> None:
    """'With 1 shared stimuli', 'only 1 shared stimuli', 'the 1 counted trial(s)'."""
    from gate.errors import ConfigError
    from gate.report import wording

    candidate = write_jsonl(trials_of("a", "PPF"), name="c.jsonl")
    baseline = write_jsonl(trials_of("a", "PPP"), name="b.jsonl")
    outcome = run_check(
        request_from_options([str(candidate)], config=None, baseline=[str(baseline)])
    )
    (comparison,) = outcome.comparisons
    # One stimulus: 2 sign patterns, p ≥ 1/2 > α = 0.05, whatever the data.
    assert wording.paired_test_reason(comparison.test).endswith(
        "only 1 shared stimulus (< 30), too few to trust the t approximation"
    )
    assert any(
        note.startswith("With 1 shared stimulus the smallest attainable p-value is 1/2 = 0.5")
        for note in wording.comparison_notes(comparison)
    )
    single = write_jsonl(trials_of("a", "P"), name="one.jsonl")
    with pytest.raises(ConfigError, match=r"exceeds the 1 counted trial of stimulus 'a'"):
        run_check(request_from_options([str(single)], config=None, overrides={"k": "2"}))


def test_errored_trials_are_counted_where_the_errors_policy_puts_them(write_jsonl) -> None:
    """s1 PPPE, s2 PPF, s3 PPS. Errors as failures: 4 + 3 + 2 = 9 counted trials, the errored
    one among them; errors excluded: 8, and the errored one beside them (the header said '8
    trials (1 errored, …)', as if it were one of the 8, and s1's row '3 (1 errored)' beside
    ✔✔✔)."""
    records = trials_of("s1", "PPPE") + trials_of("s2", "PPF") + trials_of("s3", "PPS")
    path = str(write_jsonl(records))
    counted = render_summary(run_check(request_from_options([path], config=None)))
    assert "· 3 stimuli · 9 trials (1 errored) · 1 skipped · k = 2 ·" in counted
    assert "| s1 | 4 (1 errored) | ✔✔✔⚠ |" in counted
    excluded = render_summary(
        run_check(request_from_options([path], config=None, overrides={"errors": "exclude"}))
    )
    assert "· 3 stimuli · 8 trials · 1 errored, left out · 1 skipped · k = 2 ·" in excluded
    assert "| s1 | 3 (+1 errored, left out) | ✔✔✔ |" in excluded


def test_trials_that_all_errored_are_not_read_as_a_capability_gap(write_jsonl) -> None:
    """Errored trials count as failures, so pass@k = 0 read 'capability gap: cannot reliably
    solve it' beside the gate saying nothing about the agent was measured."""
    records = trials_of("a", "EEE") + trials_of("b", "PFE")
    outcome = run_check(request_from_options([str(write_jsonl(records))], config=None))
    readings = {s.name: s.reading for s in outcome.suite.stimuli}
    assert readings == {"a": "not measured", "b": "capable but flaky"}
    # The suite still counts a's errors as failures: pass@3 = (0 + 1)/2 = 0.5 < 0.8.
    assert outcome.suite.reading == "capability gap"
    summary = render_summary(outcome)
    assert "Per stimulus: 1 not measured, 1 capable but flaky." in summary  # ties: first seen
    assert "| a | 3 (3 errored) | ⚠⚠⚠ |" in summary and "| not measured |" in summary
    everything = write_jsonl(trials_of("a", "EEE"), name="broken.jsonl")
    broken = run_check(request_from_options([str(everything)], config=None))
    assert broken.suite.reading == "not measured"
    # excluded, the errors are not counted trials: b's P and F are read, a is not scored
    excluded = run_check(
        request_from_options(
            [str(write_jsonl(records))], config=None, overrides={"errors": "exclude"}
        )
    )
    assert [s.reading for s in excluded.suite.stimuli] == ["capable but flaky"]


def test_a_reliability_entry_is_its_rows_fields() -> None:
    from gate.metrics.reliability import reliability_rows
    from gate.report.json_report import _reliability

    row = reliability_rows([[True, True, True, False]])[0]
    entry = _reliability(*row)
    assert entry == row._asdict() and list(entry) == list(row._fields)
    assert entry == {"decay_curve": [100, 100, 100, 31], "variance_amplification": 87,
                     "graceful_degradation": 60}  # fmt: skip


def test_a_level_between_whole_percents_is_never_rounded_to_100(write_jsonl, tmp_path) -> None:
    # A 99.5% interval was headed "100% interval" (and so was a usage interval): a claim of
    # certainty no interval makes. Every level shows as configured; a p-value far below 1%
    # is "less than 1%" of runs, not "0%".
    records = [r for s in "abcdef" for r in trials_of(s, "PPF")]
    for record in records:
        record["metadata"] = {"cost_usd": 0.01 + 0.001 * record["trial"]}
    better = [r for s in "abcdef" for r in trials_of(s, "PPP")]
    outcome = compared(write_jsonl, tmp_path, records, better, "version: 1\nconfidence: 0.995\n")
    summary = render_summary(outcome)
    assert "100% interval" not in summary
    assert "| Suite metric | Estimate | 99.5% interval |" in summary
    assert "per trial (99.5% interval $" in summary  # the usage block's cost interval
    assert " Δ vs baseline (pass rate, points) | 99.5% interval |" in summary
    from gate.report.wording import p_value_meaning

    assert "would turn up less than 1% of the time" in p_value_meaning(1.3e-11)
    assert "would turn up more than 99% of the time" in p_value_meaning(0.996)


def test_a_mid_p_level_other_than_95_percent_is_warned_of_and_the_warning_is_true(
    write_jsonl,
) -> None:
    """Mid-p's coverage floor is tuned at 95%. Exact coverage at 90% and n = 45, at its
    lowest (just past an interval's end, where coverage drops; scipy's binomial pmf, an
    independent sum): about 0.83, not 0.90; Clopper-Pearson holds 0.90 there. A report
    labelled "90%" said nothing of it."""
    from scipy import stats

    from gate.metrics import rate_interval

    def lowest(method: str) -> float:
        bounds = [rate_interval(c, 45, 0.9, method) for c in range(46)]
        ends = [b.hi + 1e-9 for b in bounds if b.hi < 1] + [b.lo - 1e-9 for b in bounds if b.lo > 0]
        return min(
            sum(stats.binom.pmf(c, 45, p) for c, b in enumerate(bounds) if b.lo <= p <= b.hi)
            for p in ends
        )

    assert lowest("mid-p") < 0.85  # 0.8275 at p = 0.9495: "several points below"
    assert lowest("clopper-pearson") >= 0.9 - 1e-9  # the method the warning points to
    path = write_jsonl([r for s in "abc" for r in trials_of(s, "PPF")])
    for confidence, warned in (("0.9", True), ("0.95", False)):
        request = request_from_options(
            [str(path)], config=None, overrides={"confidence": confidence}
        )
        said = wording.warnings(run_check(request))
        assert any("calibrated at 95%" in w for w in said) is warned


def test_comparison_rows_are_written_whole_when_their_place_is_not_found(
    write_jsonl, monkeypatch
) -> None:
    """Should the empty rows' text not be found once per comparison, the report is still
    the whole one (its rows made at once, as before they were streamed)."""
    from gate.report import json_report

    base = write_jsonl([r for i in range(6) for r in trials_of(f"s{i}", "PPF")], name="b.jsonl")
    cand = write_jsonl([r for i in range(6) for r in trials_of(f"s{i}", "PFF")], name="c.jsonl")
    request = request_from_options(
        [str(cand)], config=None, overrides={"max_regression": "0.05"}, baseline=[str(base)]
    )
    outcome = run_check(request)
    assert outcome.comparisons
    whole = json_report.dumps(build_report(outcome))
    monkeypatch.setattr(json_report, "_COMPARISON_SLOT", "\n      no such text\n")
    assert "".join(json_report.report_parts(outcome)) == whole


def _stimulus_entry_one_by_one(stimulus: StimulusScore, more: dict[tuple[str, str], int]) -> dict:
    """A stimulus's report entry built from its own attributes, one at a time: what the
    report writes a column at a time (:func:`gate.report.json_report._stimuli_text`)."""
    from gate.report.json_report import ESTIMANDS

    def number(value: float) -> float | None:
        return None if math.isnan(value) or math.isinf(value) else round(value, 10)

    def interval(metric: str) -> dict[str, object]:
        found = getattr(stimulus, metric + "_interval")
        return {
            "lo": number(found.lo),
            "hi": number(found.hi),
            "method": found.method,
            "confidence": found.confidence,
            "estimand": ESTIMANDS[("stimulus", metric)],
        }

    reliability = stimulus.reliability()
    return {
        "suite": stimulus.suite,
        "name": stimulus.name,
        "tags": sorted(stimulus.tags),
        "trials": stimulus.trials,
        "passes": stimulus.passes,
        "errors": stimulus.errors,
        "skipped": stimulus.skipped,
        "outcomes": stimulus.outcomes,
        "pass_rate": number(stimulus.pass_rate),
        "pass_rate_interval": interval("pass_rate"),
        "pass_at_k": number(stimulus.pass_at_k),
        "pass_at_k_interval": interval("pass_at_k"),
        "pass_hat_k": number(stimulus.pass_hat_k),
        "pass_hat_k_plugin": number(stimulus.pass_hat_k_plugin),
        "pass_hat_k_interval": interval("pass_hat_k"),
        "score": number(stimulus.aggregate_score),
        "unscored": stimulus.unscored,
        "flaky": stimulus.flaky,
        "flakiness": number(stimulus.flakiness),
        "flakiness_percent": number(stimulus.flakiness_percent),
        "flakiness_band": stimulus.flakiness_band,
        "reading": stimulus.reading,
        "more_trials": more.get((stimulus.suite, stimulus.name)),
        "reliability": None if reliability is None else reliability._asdict(),
        "messages": [m.as_record() for m in stimulus.messages],
    }


def test_the_reports_stimuli_are_their_scores_one_by_one(write_jsonl, tmp_path, monkeypatch):
    """The report writes its stimuli as text a column at a time; read back, each entry is
    the one its stimulus's own attributes give: two suites, tags, graded and missing
    scores, errors and skips, a lone surrogate in a name and in a message, a trial index
    past 64 bits, stimuli read as counts (no trial order), and the trials an undecided gate
    asks for. Its text is orjson's indented text of that data (a dict per stimulus, as it
    was written before), for every part size."""
    from gate.gates import more_trials_by_stimulus
    from gate.report import json_report

    records = []
    for i in range(14):
        for t, letter in enumerate("PFPPEPSF"[: 2 + i % 7]):
            record = trials_of(f"s{i:02d}", letter, suite="alpha" if i % 3 else "beta")[0]
            record["trial"] = t
            if i % 4 == 0:
                record["tags"] = ["slow", "tools"] if i % 8 else ["a\ud800b"]
            if i % 5 == 1 and letter in "PF":
                record["score"] = round(0.1 * t + 0.03 * i, 3)
            if letter in "FE":
                record["message"] = f"why {i}/{t}" + (" \ud83d" if i == 3 else "")
            records.append(record)
    records += trials_of("lone \udc80 name", "PPF") + trials_of("always", "PPPP")
    huge = trials_of("huge", "FP")
    huge[0].update(trial=2**70, message="past 64 bits")
    records += huge
    results = write_jsonl(records)
    counts = tmp_path / "counts.jsonl"
    counts.write_text(
        '{"suite": "gamma", "stimulus": "total", "n": 40, "c": 31}\n'
        '{"suite": "gamma", "stimulus": "none", "n": 9, "c": 0}\n',
        encoding="utf-8",
    )
    outcome = run_check(request_from_options([str(results), str(counts)], config=None))
    more = more_trials_by_stimulus(outcome.gates, outcome.suite)
    assert more, [(g.outcome, g.value, g.lower, g.upper, g.advice) for g in outcome.gates]
    expected = [_stimulus_entry_one_by_one(s, more) for s in outcome.suite.stimuli]
    assert len(expected) == 19
    assert {(e["flaky"], e["passes"] == e["trials"]) for e in expected} == {
        (True, False),
        (False, True),
        (False, False),
    }
    assert {"huge", "lone \udc80 name", "total"} <= {e["name"] for e in expected}
    assert any(e["reliability"] is None for e in expected)
    assert any(e["score"] is not None and e["score"] != e["pass_rate"] for e in expected)
    assert any(m["trial"] == 2**70 for e in expected for m in e["messages"])
    for per_part in (1, 4, 1000):
        monkeypatch.setattr(json_report, "STIMULI_PER_PART", per_part)
        text = "".join(json_report.report_parts(outcome))
        assert json.loads(text)["stimuli"] == expected
        assert json_report.dumps(json.loads(text)) == text
