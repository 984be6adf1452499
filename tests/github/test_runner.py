"""File commands, workflow-command escaping and size limits (actions/runner, actions/toolkit)."""

from __future__ import annotations

import itertools
import re
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
from gate.github.trim import fold_details, trim_markdown, utf8_bytes
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


def _block(title: str, rows: int) -> str:
    body = "".join(f"| row {i} | {title} |\n" for i in range(rows))
    return f"<details><summary>{title}</summary>\n\n| a | b |\n| --- | --- |\n{body}\n</details>\n"


def test_folding_empties_the_largest_details_blocks_first_and_keeps_what_follows() -> None:
    """Sizes 30, 60 and 10 rows: the 60 is cut to its first rows for one limit, emptied and
    the 30 cut for a smaller one; titles, the text between and after the blocks stay."""
    text = (
        "## verdict\n\n" + _block("stimuli", 30) + "\n" + _block("messages", 60)
        + "\n### Compared with the baseline\n\n" + _block("changed", 10) + "\nmethods\n"
    )  # fmt: skip
    folded_line = "_left out_"
    row = len("| row 10 | messages |\n")
    assert fold_details(text, len(text), folded_line) == text
    one = fold_details(text, len(text) - 100, folded_line)
    assert "| row 0 | messages |" in one and "| row 59 | messages |" not in one
    assert "| row 29 | stimuli |" in one and one.count(folded_line) == 1
    assert len(text) - 100 - 2 * row <= utf8_bytes(one) <= len(text) - 100  # as many as fit
    small = len(text) - len(_block("messages", 60)) - 200
    two = fold_details(text, small, folded_line)
    assert "<details><summary>messages</summary>\n\n_left out_\n\n</details>\n" in two
    assert "| row 0 | stimuli |" in two and "| row 29 | stimuli |" not in two
    assert two.count(folded_line) == 2 and "| row 9 | changed |" in two
    assert small - 2 * row <= utf8_bytes(two) <= small
    for cut, tables in ((one, 3), (two, 2)):
        assert cut.count("<details><summary>") == 3 == cut.count("</details>")
        assert cut.startswith("## verdict\n") and cut.endswith("\nmethods\n")
        assert "### Compared with the baseline" in cut
        tokens = MarkdownIt("commonmark").enable("table").parse(cut)
        assert sum(t.type == "table_open" for t in tokens) == tables  # a cut table is one
    # More than folding can give: everything folded, then cut from the end with the notice.
    cut = trim_markdown(text, 200, lambda n: f"> {n} lines cut", utf8_bytes, folded_line)
    assert utf8_bytes(cut) <= 200 and cut.rstrip().endswith("lines cut")
    # A block that ends the text is cut, not folded: a cut keeps its first rows.
    last = "## verdict\n\n" + _block("stimuli", 60)
    assert fold_details(last, 300, folded_line) == last


def test_folding_goes_in_the_given_order_then_largest_first() -> None:
    """The report ranks its tables: the first in its order gives way first even when it is
    smaller; when it is too small to make room it is emptied and the next one is cut."""
    text = (
        "## verdict\n\n" + _block("stimuli", 30) + "\n" + _block("messages", 60)
        + "\n" + _block("curves", 12) + "\n" + _block("changed", 20) + "\nmethods\n"
    )  # fmt: skip
    ranks = {"curves": 0, "changed": 1, "stimuli": 1, "messages": 2}
    row = len("| row 10 | changed |\n")
    one = fold_details(text, len(text) - 100, "_left out_", utf8_bytes, ranks.__getitem__)
    assert "| row 0 | curves |" in one and "| row 11 | curves |" not in one
    assert "| row 59 | messages |" in one and "| row 29 | stimuli |" in one
    assert "| row 19 | changed |" in one
    assert len(text) - 100 - 2 * row <= utf8_bytes(one) <= len(text) - 100
    # More than the curves hold: they are emptied, then the larger of the next rank is cut
    # (stimuli, 30 rows, before changed, 20) and messages, last in order, stay whole.
    limit = len(text) - len(_block("curves", 12)) - 100
    two = fold_details(text, limit, "_left out_", utf8_bytes, ranks.__getitem__)
    assert "<details><summary>curves</summary>\n\n_left out_\n\n</details>\n" in two
    assert "| row 0 | stimuli |" in two and "| row 29 | stimuli |" not in two
    assert "| row 19 | changed |" in two and "| row 59 | messages |" in two
    assert limit - 2 * row <= utf8_bytes(two) <= limit
    # Without an order, by size: the 60 rows of messages are cut first.
    three = fold_details(text, len(text) - 100, "_left out_")
    assert "| row 59 | messages |" not in three and "| row 11 | curves |" in three


def test_every_table_the_summary_folds_has_its_place_in_the_fold_order(tmp_path: Path) -> None:
    """fold_order knows each folded table by its title: a title reworded in the report and
    not in the order would silently give way last."""
    import json

    from gate.pipeline import request_from_options, run_check
    from gate.report.markdown import fold_order, render_summary

    def write(name: str, passes: int) -> str:
        records = [
            {"stimulus": f"case {i:02d}", "trial": t, "passed": t < passes + i % 3,
             "message": "wrong answer"}
            if t < 5 else {"stimulus": f"case {i:02d}", "trial": t, "status": "error"}
            for i in range(30) for t in range(6)
        ]  # fmt: skip
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
        return str(tmp_path / name)

    request = request_from_options(
        [write("r.jsonl", 1)], config=None, baseline=[write("b.jsonl", 3)]
    )
    summary = render_summary(run_check(request))
    titles = re.findall(r"^<details><summary>(.*)</summary>$", summary, re.M)
    assert [fold_order(title) for title in titles] == [3, 0, 1, 4, 2, 5], titles
    assert titles[-1] == "How these numbers are computed"  # never folded: it ends the text


def test_folding_leaves_code_and_nested_blocks_alone() -> None:
    fenced = "```\n" + _block("in code", 40) + "```\n"
    nested = "<details><summary>outer</summary>\n\n" + _block("inner", 40) + "\n</details>\n"
    for text in (fenced, nested):
        assert fold_details(text, 100, "_left out_") == text


@given(
    st.lists(
        st.sampled_from(
            ["| r | x |", "text", "", "```", "~~~~", "<details><summary>t</summary>",
             "</details>", "<details>", "x </details>"]
        )
    ),
    st.integers(10, 400),
)  # fmt: skip
def test_folding_never_unbalances_details_or_fences(lines: list[str], limit: int) -> None:
    """A fold removes a body whole: the <details> tags outside code and whether the text
    ends inside a fence stay as they were (tags and fences inside a folded body's code go
    with it: ``<details>`` then a fence holding ``</details>``, then ``</details>``)."""
    from gate.github.trim import _CODE, _TEXT, _kinds
    from gate.github.trim import _lines as split

    def structure(markdown: str) -> tuple[int, int, bool]:
        parts = [*split(markdown), "x\n"]  # a last line: code if a fence is left open
        kinds = _kinds(parts)
        given = zip(parts[:-1], kinds[:-1], strict=True)
        outside = [line for line, kind in given if kind == _TEXT]
        opens = sum(line.count("<details") for line in outside)
        closes = sum(line.count("</details>") for line in outside)
        return opens, closes, kinds[-1] == _CODE

    text = "\n".join(lines) + "\n"
    for order in (None, lambda title: -len(title)):
        folded = fold_details(text, limit, "_left out_", utf8_bytes, order)
        assert structure(folded) == structure(text)
        assert utf8_bytes(folded) <= max(utf8_bytes(text), 0)


def test_a_comment_on_a_big_suite_keeps_the_comparison_with_the_baseline(tmp_path: Path) -> None:
    """400 stimuli with messages and a baseline: the summary (about 200 KB) used to be cut
    in the comment after the reliability table, so the comparison, the reason a regression
    gate failed, never reached the pull request."""
    import json
    import random

    from gate.github.comment import COMMENT_LIMIT, build_comment_body
    from gate.github.trim import utf16_units
    from gate.pipeline import request_from_options, run_check
    from gate.report.markdown import render_summary

    rng = random.Random(8)

    def write(name: str, shift: float) -> str:
        lines = []
        for i in range(400):
            p = rng.random() * 0.8 + shift
            for t in range(6):
                ok = rng.random() < p
                stimulus = f"tests/agents/support/case_{i:04d}"
                record = {"stimulus": stimulus, "trial": t, "passed": ok}
                if not ok:
                    record["message"] = f"expected an escalation after the third refusal ({i})"
                lines.append(json.dumps(record))
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(tmp_path / name)

    request = request_from_options(
        [write("r.jsonl", 0.0)], config=None, baseline=[write("b.jsonl", 0.2)]
    )
    summary = render_summary(run_check(request))
    assert len(summary) > 2 * COMMENT_LIMIT
    body = build_comment_body(summary, "default", "https://github.com/o/r/actions/runs/1").text
    assert utf16_units(body) <= COMMENT_LIMIT
    assert "### Compared with the baseline" in body
    assert "<details><summary>How these numbers are computed</summary>" in body
    assert "_Left out of this comment for GitHub's 65,536-character limit" in body
    assert body.count("<details>") == body.count("</details>")
    # What gives way first is what a reviewer acts on least (fold_order): the decay curves
    # are emptied, the worst 200 stimuli stay whole and why trials failed keeps its first.
    left_out = "\n\n_Left out of this comment"
    assert re.search(r"<summary>Reliability of [^<]*</summary>" + left_out, body)
    worst = re.search(r"<summary>The worst 200 of 400 stimuli</summary>(.*?)</details>", body, re.S)
    assert worst is not None and worst.group(1).count("\n| tests\\/agents\\/") == 200
    why = re.search(r"<summary>Why trials failed [^<]*</summary>(.*?)</details>", body, re.S)
    assert why is not None and why.group(1).count("\n- **") >= 20


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
