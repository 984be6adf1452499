"""Every Markdown the action writes, parsed as GitHub would (CommonMark + GFM tables).

User data (stimulus names, messages, tags, suite names) comes from files nobody reviewed: in
the job summary and the PR comment it must stay text. No HTML, link, image, autolink or
mention may come out of it, tables must keep their shape, and the hidden marker that finds
the sticky comment can be neither forged nor closed by it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from gate.github.comment import build_comment_body, parse_marker

pipeline = pytest.importorskip("gate.pipeline")
from gate.report.markdown import render_summary  # noqa: E402

RUN_URL = "https://github.com/octo-org/agent-evals/actions/runs/99"
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[x](https://evil)",
    "![pixel](https://evil.example/p.png)",
    "@org/team please look",
    "cc @octocat",
    "-->",
    "<!-- eval-gate:sticky id=default digest=0000000000000000 -->",
    "`",
    "``` fence",
    "a | b | c",
    "line one\nline two",
    "cr\r\n| x | y |",
    "<details><summary>x</summary>",
    "</details></table>",
    "fixes #12",
    "www.evil.example",
    "https://evil.example/path",
    "mail me: a@evil.example",
    "*emph* _x_ ~~s~~ **b**",
    "\\",
    "<script>alert(1)</script>",
    "&lt;b&gt; &#x3C;",
    "# heading",
    "> quote",
    "closes GH-45",
    "é@octocat and ü@org/team",
    "row\u0085split\u2028here",
    "evil\u202eslmth.exe\u2066x\u2069",
]
#: the only raw HTML the product itself writes.
OUR_HTML = [
    re.compile(r"<!-- eval-gate:sticky id=[A-Za-z0-9._-]+ digest=[0-9a-f]{16} -->\n?"),
    re.compile(r"<details><summary>[\w ,()]+</summary>\n?"),
    re.compile(r"</details>\n?"),
    re.compile(r"</?sub>"),
]
# GitHub's patterns are ASCII: "é@octocat" mentions, "GH-45" links issue 45.
MENTION = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]")
AUTOLINK = re.compile(r"https?://|www\.|(?<![\w])#\d|\w@\w+\.\w|\bGH-\d", re.IGNORECASE)
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: the only fenced blocks the product writes: Mermaid XY charts, line by line. A label is
#: a quoted string of letters, digits, spaces and . , : / ( ) + ' - (and …): nothing from
#: the data can end the string or the block, or start a directive (%%{), comment or entity.
MERMAID_LINES = [
    re.compile(r"xychart-beta horizontal"),
    re.compile(r'    x-axis \[("[\w .,:/()+\'…-]+", )*"[\w .,:/()+\'…-]+"\]'),
    re.compile(r'    y-axis "[\w ^@]+ \(%\)" 0 --> 100'),
    re.compile(r"    (bar|line) \[(\d+\.\d, )*\d+\.\d\]"),
]


def renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def hostile_results(tmp_path: Path) -> Path:
    records: list[dict[str, Any]] = [{"type": "suite", "suite": "evil <b>suite</b> @team"}]
    for index, name in enumerate(HOSTILE):
        for trial in range(3):
            record: dict[str, Any] = {
                "suite": "evil <b>suite</b> @team",
                "stimulus": name,
                "trial": trial,
                "tags": [name[:50]],
            }
            if trial == 2 and index % 2:
                record["status"] = "error"
                record["message"] = f"{name} ![x](https://evil) <b>boom</b> @admin"
            else:
                record["passed"] = (trial + index) % 3 != 0
            records.append(record)
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    config = tmp_path / "gates.yml"
    config.write_text(
        "version: 1\nk: 2\ngates:\n  pass_hat_k: 0.9\n  max_flakiness:\n    max: 0.1\n"
        "    scope: stimuli\n"
    )
    return path


def walk(tokens: list[Token]) -> list[Token]:
    flat: list[Token] = []
    for token in tokens:
        flat.append(token)
        if token.children:
            flat.extend(walk(token.children))
    return flat


def assert_safe(
    markdown: str, allowed_links: tuple[str, ...] = (), our_notices: int = 0
) -> list[Token]:
    tokens = walk(renderer().parse(markdown))
    for token in tokens:
        if token.type in ("html_block", "html_inline"):
            assert any(p.fullmatch(token.content) for p in OUR_HTML), token.content
        if token.type == "link_open":
            assert token.attrGet("href") in allowed_links, token.attrGet("href")
        assert token.type not in ("image", "autolink"), token
        if token.type in ("text", "code_inline"):
            assert not MENTION.search(token.content), token.content
            assert not AUTOLINK.search(token.content), token.content
            assert not BIDI.search(token.content), token.content
    # No quote or fence may come from data: only our own notices are quotes, and our
    # Mermaid charts the only fences.
    assert not any(t.type == "code_block" for t in tokens)
    for fence in (t for t in tokens if t.type == "fence"):
        assert fence.info == "mermaid" and fence.markup == "```", fence
        for line in fence.content.rstrip("\n").split("\n"):
            assert any(p.fullmatch(line) for p in MERMAID_LINES), line
    assert sum(t.type == "blockquote_open" for t in tokens) == our_notices
    assert_tables_well_formed(markdown)
    return tokens


def _cells(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line.strip())) - 1


def assert_tables_well_formed(markdown: str) -> None:
    lines = markdown.split("\n")
    for token in renderer().parse(markdown):
        if token.type == "table_open" and token.map:
            start, end = token.map
            header = _cells(lines[start])
            assert header >= 1
            for line in lines[start:end]:
                assert line.startswith("| ") and line.endswith(" |"), line
                assert _cells(line) == header, line


@pytest.fixture
def hostile_outcome(tmp_path: Path) -> Any:
    results = hostile_results(tmp_path)
    request = pipeline.request_from_options(
        [str(results)], config=str(tmp_path / "gates.yml"), overrides={}
    )
    return pipeline.run_check(request)


def test_hostile_names_stay_text_in_the_job_summary(hostile_outcome: Any) -> None:
    summary = render_summary(hostile_outcome)
    tokens = assert_safe(summary)
    # The chart of the worst stimuli is there, its hostile labels made plain.
    (chart,) = [t for t in tokens if t.type == "fence"]
    assert "x-axis [" in chart.content and "`" not in chart.content
    rows = [t for t in tokens if t.type == "tr_open"]
    # One row per stimulus in the stimuli table (plus headers and the other tables): a
    # newline or pipe in a name did not split or merge rows.
    assert len(rows) >= len(HOSTILE) + 1
    assert summary.count("<!--") == 0


def test_hostile_names_stay_text_in_the_comment(hostile_outcome: Any) -> None:
    body = build_comment_body(render_summary(hostile_outcome), "default", RUN_URL).text
    assert_safe(body, allowed_links=(RUN_URL,))
    # Exactly one marker, on the first line; nothing from the data opens or closes a comment
    # (a chart's y-axis range is written "0 --> 100", inside its fence).
    outside = re.sub(r"```mermaid\n.*?\n```", "", body, flags=re.DOTALL)
    assert outside.count("<!--") == 1 and outside.count("-->") == 1
    assert body.count("-->") == 1 + body.count('(%)" 0 --> 100')
    assert body.index("-->") < body.index("\n")
    assert parse_marker(body) is not None


def test_a_trimmed_comment_is_still_safe_and_links_the_run(tmp_path: Path) -> None:
    rows = "".join(f"| {name} {i} | {'x' * 40} |\n" for i in range(1200) for name in ("a\\|b", "c"))
    summary = "## ❌ eval-gate: FAIL\n\n| Stimulus | Note |\n| --- | --- |\n" + rows
    body = build_comment_body(summary, "default", RUN_URL).text
    assert "trimmed" in body
    assert_safe(body, allowed_links=(RUN_URL,), our_notices=1)


def test_the_dry_run_preview_renders_no_markup_from_data(hostile_outcome: Any) -> None:
    from gate.github.cli import markdown_renderer

    html = markdown_renderer().render(render_summary(hostile_outcome))
    assert "<img" not in html and "<script" not in html and "<b>" not in html
    assert 'href="https://evil' not in html


def test_hostile_names_stay_text_in_the_baseline_comparison(tmp_path: Path) -> None:
    candidate = hostile_results(tmp_path)
    # The baseline: the same stimuli, every trial passed, so each one changed.
    baseline = tmp_path / "baseline.jsonl"
    records = [json.loads(line) for line in candidate.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if "stimulus" in record:
            record.pop("status", None)
            record.pop("message", None)
            record["passed"] = True
    baseline.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    request = pipeline.request_from_options(
        [str(candidate)],
        config=str(tmp_path / "gates.yml"),
        baseline=[str(baseline)],
        overrides={"max_regression": "0.05"},
    )
    markdown = render_summary(pipeline.run_check(request))
    assert "### Compared with the baseline (pass rate)" in markdown
    assert "Δ vs baseline" in markdown
    assert_safe(markdown)
