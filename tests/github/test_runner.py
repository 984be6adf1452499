"""File commands, workflow-command escaping and size limits (actions/runner, actions/toolkit)."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from gate.github.runner import (
    SUMMARY_LIMIT_BYTES,
    annotation_command,
    annotation_commands,
    append_summary,
    output_block,
    ranked_with,
    write_outputs,
)
from gate.github.trim import trim_markdown, utf8_bytes
from gate.report.annotations import Annotation
from tests.github.contract import parse_outputs


def test_outputs_use_a_random_delimiter_and_survive_newlines(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=step\n")
    values = {"verdict": "fail", "names": "line one\nline two\n", "empty": ""}
    write_outputs(str(path), values)
    text = path.read_text()
    assert text.startswith("earlier=step\n")
    delimiters = [line.split("<<", 1)[1] for line in text.splitlines() if "<<" in line]
    assert len(set(delimiters)) == 3 and all(d.startswith("ghadelimiter_") for d in delimiters)
    assert parse_outputs(text) == {"earlier": "step", **values}


def test_a_delimiter_found_in_the_value_is_replaced() -> None:
    candidates = itertools.cycle(["EOF", "EOF", "OTHER"])
    block = output_block("x", "a\nEOF\nb", lambda: next(candidates))
    assert block == "x<<OTHER\na\nEOF\nb\nOTHER\n"


@given(st.text())
def test_any_value_round_trips(value: str) -> None:
    # What the runner reads back is exactly what was written, whatever the value holds.
    text = output_block("v", value.replace("\r", ""))
    assert parse_outputs(text) == {"v": value.replace("\r", "")}


def test_annotation_escaping_follows_the_toolkit() -> None:
    command = annotation_command(
        Annotation("error", "gate: a, b", "50% failed\r\nnext line ::warning::x")
    )
    assert command == "::error title=gate%3A a%2C b::50%25 failed%0D%0Anext line ::warning::x"
    assert "\n" not in command


def test_annotations_are_capped_per_level_and_the_rest_counted_once() -> None:
    notes = [Annotation("error", f"gate {i}", "m") for i in range(13)]
    notes += [Annotation("warning", f"flaky {i}", "m") for i in range(25)]
    commands = annotation_commands(notes)
    assert sum(c.startswith("::error ") for c in commands) == 10
    assert sum(c.startswith("::warning ") for c in commands) == 10
    assert commands[0].startswith("::error title=gate 0::")  # most important kept first
    assert commands[-1].startswith("::notice ")
    assert "3 more error(s), 15 more warning(s)" in commands[-1]
    assert len(commands) == 21


def test_an_action_warning_ranks_after_errors_and_before_other_warnings() -> None:
    error = Annotation("error", "gate failed", "e")
    flaky = [Annotation("warning", f"flaky {i}", "w") for i in range(3)]
    extra = Annotation("warning", "no PR comment", "c")
    assert ranked_with([error, *flaky], extra) == [error, extra, *flaky]
    assert ranked_with(flaky, extra) == [extra, *flaky]
    assert ranked_with([error], extra) == [error, extra]
    notice = Annotation("notice", "n", "n")
    assert ranked_with([error, notice], extra) == [error, extra, notice]


def test_with_notices_puts_them_under_the_verdict_line() -> None:
    from gate.github.entrypoint import with_notices

    summary = "## ❌ eval-gate: FAIL\n\nbody\n\n| a |\n| --- |\n"
    assert with_notices(summary, ["> [!NOTE]\n> one\n", "> two"]) == (
        "## ❌ eval-gate: FAIL\n\n> [!NOTE]\n> one\n\n> two\n\nbody\n\n| a |\n| --- |\n"
    )
    assert with_notices(summary, []) == summary
    assert with_notices("## PASS", ["> n"]) == "## PASS\n\n> n\n"


def test_few_annotations_print_no_counting_line() -> None:
    commands = annotation_commands([Annotation("warning", "w", "m")])
    assert commands == ["::warning title=w::m"]


def _big_summary(rows: int) -> str:
    table = "| Stimulus | Note |\n| --- | --- |\n" + "".join(
        f"| s{i} | {'é' * 100} |\n" for i in range(rows)
    )
    fence = "```\n" + "code line\n" * 50 + "```\n"
    return (
        "## ❌ eval-gate: FAIL\n\n"
        + fence
        + "\n<details><summary>All stimuli</summary>\n\n"
        + table
        + "\n</details>\n"
    )


def test_a_summary_over_1_mib_is_trimmed_at_whole_rows_with_a_notice(tmp_path: Path) -> None:
    summary = _big_summary(6000)
    assert utf8_bytes(summary) > SUMMARY_LIMIT_BYTES
    path = tmp_path / "step_summary"
    append_summary(str(path), summary, "The full results are in the JSON report.")
    written = path.read_text(encoding="utf-8")
    assert utf8_bytes(written) < SUMMARY_LIMIT_BYTES
    assert "This summary was trimmed to fit GitHub's 1 MiB limit" in written
    assert "The full results are in the JSON report." in written
    rows = [line for line in written.splitlines() if line.startswith("| s")]
    assert rows and all(line.endswith(" |") for line in rows)
    assert written.count("<details>") == written.count("</details>") == 1
    tokens = MarkdownIt("commonmark").enable("table").parse(written)
    assert any(t.type == "table_open" for t in tokens)


def test_a_small_summary_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "step_summary"
    append_summary(str(path), "## ✅ PASS\n", "")
    assert path.read_text() == "## ✅ PASS\n"


def test_trimming_never_cuts_inside_a_code_fence() -> None:
    text = "intro\n\n```\n" + "".join(f"line {i}\n" for i in range(200)) + "```\n\nafter\n"
    trimmed = trim_markdown(text, 600, lambda n: f"> {n} lines cut", utf8_bytes)
    assert trimmed.startswith("intro\n")
    assert "```" not in trimmed  # the whole fence went, not half of it
    assert trimmed.rstrip().endswith("lines cut")


def test_trimming_never_separates_a_table_header_from_its_delimiter_row() -> None:
    text = "x" * 50 + "\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"
    for limit in range(60, len(text)):
        trimmed = trim_markdown(text, limit, lambda n: "> cut", utf8_bytes)
        assert utf8_bytes(trimmed) <= limit
        assert ("| a | b |" in trimmed) == ("| --- | --- |" in trimmed)


@given(st.lists(st.sampled_from(["| r | x |", "text", "", "```", "<details>", "</details>"])))
def test_trimmed_text_always_fits_when_the_notice_does(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    for limit in (20, 40, 80):
        assert utf8_bytes(trim_markdown(text, limit, lambda n: "> cut", utf8_bytes)) <= limit


def test_trimming_a_real_summary_keeps_every_chart_and_details_block_whole(
    tmp_path: Path,
) -> None:
    """A summary of two suites (a Mermaid chart each, folded tables, the collapsed methods),
    cut at every size from the notice up: each cut keeps whole charts only, and closes every
    <details> it leaves open."""
    import json
    import re

    from gate.pipeline import request_from_options, run_check
    from gate.report.markdown import render_summary
    from tests.conftest import trials_of

    records = [
        r
        for suite in ("alpha", "beta")
        for i in range(14)
        for r in trials_of(f"{suite}-{i:02d}", "PPF" if i % 3 else "PPP", suite)
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    summary = render_summary(run_check(request_from_options([str(path)], config=None)))
    assert summary.count("```mermaid") == 2 and summary.count("<details>") == 3
    chart = re.compile(r"```mermaid\n(?:    .*\n|xychart-beta horizontal\n)+```\n")
    for limit in range(200, len(summary.encode()), 97):
        cut = trim_markdown(summary, limit, lambda n: f"> {n} lines cut", utf8_bytes)
        assert utf8_bytes(cut) <= limit
        assert cut.count("```") % 2 == 0, limit
        assert len(chart.findall(cut)) == cut.count("```mermaid"), limit
        assert cut.count("<details>") == cut.count("</details>"), limit


def test_an_annotation_at_a_result_file_names_it_relative_and_escaped(tmp_path: Path) -> None:
    results = tmp_path / "out, 1:2" / "r.xml"
    note = Annotation("warning", "eval-gate: failing stimulus a", "a: 0/3", str(results), 12)
    assert annotation_command(note, str(tmp_path)) == (
        "::warning file=out%2C 1%3A2/r.xml,line=12,title=eval-gate%3A failing stimulus a::a: 0/3"
    )
    relative = Annotation("error", "t", "m", "results/r.jsonl", None)
    assert annotation_command(relative, str(tmp_path)) == "::error file=results/r.jsonl,title=t::m"
    # Outside the workspace there is no file GitHub could show: the annotation has none.
    outside = Annotation("error", "t", "m", "/etc/passwd", 3)
    assert annotation_command(outside, str(tmp_path)) == "::error title=t::m"
    assert annotation_command(Annotation("error", "t", "m", "../up.xml", 3), str(tmp_path)) == (
        "::error title=t::m"
    )


def test_the_count_of_annotations_left_out_is_grouped_by_thousands() -> None:
    notes = [Annotation("warning", f"flaky {i}", "m") for i in range(1010)]
    assert "::1,000 more warning(s) not shown" in annotation_commands(notes)[-1]
