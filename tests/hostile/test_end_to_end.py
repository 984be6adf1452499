"""Hostile values through the whole check, not only the reader: scoring, gates, the JSON
report and the Markdown summary too.

Every CSV cell and every JUnit attribute and text is replaced by each hostile text; every
value of the JSON formats' documents by each hostile JSON value (test_json_types.py's
documents and values). ``eval-gate check --json --summary`` must end with an exit code
of 0-3 and no internal error: two bugs this found lived after the reader (a CSV trial
index of 5,000 digits in the columnar path; a run whose every trial errored crashed the
JSON report).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from click.testing import CliRunner

from gate.cli import main
from tests.hostile import test_json_types as json_types

#: cell text: numbers past every range, spellings float() or a bool reader might take,
#: markup and workflow commands, control and bidi characters, a 100,000-character cell.
HOSTILE_TEXT = [
    "",
    " ",
    "9" * 5000,
    "-" + "9" * 5000,
    "1" + "0" * 400,
    "1e400",
    "-1e400",
    "nan",
    "-inf",
    "-0",
    "-1",
    "1.5",
    "1_000",
    "0x10",
    "١٢",
    "2.5e-324",
    "  7  ",
    "\x00",
    "\u202e evil",
    "\u0085",
    "a\nb",
    '"',
    "=cmd()",
    "[x](http://e) @user <!-- x --> | \\ *",
    "::error::x",
    "yes",
    "fail",
    "error",
    "skipped",
    "x" * 100_000,
]

CSV_COLUMNS = ["stimulus", "trial", "suite", "passed", "score", "status", "outcome", "message",
               "tags", "duration_s", "cost_usd", "tokens", "model", "commit", "extra"]  # fmt: skip
CSV_ROW = ["a", "0", "s", "yes", "0.5", "done", "", "m", "t1;t2", "1.5", "0.01", "10", "m1", "c",
           "x"]  # fmt: skip

JUNIT = (
    '<testsuites><testsuite name={suite} tests="2" time={suite_time}>'
    "<testcase classname={classname} name={name} time={time}>{body}</testcase>"
    '<testcase classname="c" name="b" time="1"/></testsuite></testsuites>'
)
JUNIT_FIELDS = {"suite": "s", "suite_time": "1", "classname": "c", "name": "a", "time": "0.5"}
JUNIT_BODIES = [
    "<failure message={attribute}>{text}</failure>",
    "<error message={attribute}>{text}</error>",
    "<skipped message={attribute}/>",
    "<system-out>{text}</system-out>",
    "<properties><property name={attribute} value={attribute}/></properties>",
]


def _csv(column: int, text: str, rows: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for index in range(rows):
        row = [*CSV_ROW]
        row[1] = str(index)
        if index == rows - 1:  # the last row: the columnar path has read the others
            row[column] = text
        writer.writerow(row)
    return out.getvalue()


def _csv_cases() -> Iterator[tuple[str, str, str]]:
    for column, name in enumerate(CSV_COLUMNS):
        for text in HOSTILE_TEXT:
            for rows in (1, 3):
                yield f"{name}={text[:12]!r} of {rows}", "t.csv", _csv(column, text, rows)


def _junit_cases() -> Iterator[tuple[str, str, str]]:
    xml_text = [t for t in HOSTILE_TEXT if t != "\x00"]  # not a character XML allows
    plain = {key: quoteattr(value) for key, value in JUNIT_FIELDS.items()}
    for key in JUNIT_FIELDS:
        for text in xml_text:
            document = JUNIT.format(body="", **{**plain, key: quoteattr(text)})
            yield f"{key}={text[:12]!r}", "j.xml", document
    for body in JUNIT_BODIES:
        for text in xml_text:
            filled = body.format(attribute=quoteattr(text), text=escape(text))
            yield f"{body[:12]} {text[:12]!r}", "j.xml", JUNIT.format(body=filled, **plain)


def _json_cases(name: str) -> Callable[[], Iterator[tuple[str, str, str]]]:
    _, file_name, document, lines, _ = json_types.FORMATS[name]

    def cases() -> Iterator[tuple[str, str, str]]:
        for place in json_types._places(document):
            for value in [*json_types.HOSTILE, json_types.REMOVED]:
                mutated = json_types._mutated(document, place, value)
                shown = value[:12] if isinstance(value, str) else "removed"
                label = f"{'/'.join(map(str, place))}={shown}"
                yield label, file_name, json_types._text(mutated, lines, value)

    return cases


def _arguments(name: str) -> list[str]:
    if name == "csv":
        return ["--format", "csv"]
    if name == "junit":
        return ["--format", "junit"]
    format_name, _, _, _, options = json_types.FORMATS[name]
    column_map = options.get("column_map", {})
    mapped = ["--map", ",".join(f"{f}={c}" for f, c in column_map.items())] if column_map else []
    return ["--format", format_name, *mapped]


CASES: dict[str, Callable[[], Iterator[tuple[str, str, str]]]] = {
    "csv": _csv_cases,
    "junit": _junit_cases,
    **{name: _json_cases(name) for name in json_types.FORMATS},
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_values_end_in_a_verdict_or_an_input_error(tmp_path: Path, name: str) -> None:
    runner = CliRunner()
    report, summary = tmp_path / "report.json", tmp_path / "summary.md"
    bugs = []
    runs = 0
    for label, file_name, text in CASES[name]():
        path = tmp_path / file_name
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        arguments = [str(path), *_arguments(name), "--min-pass-rate", "0"]
        result = runner.invoke(
            main, ["check", *arguments, "--json", str(report), "--summary", str(summary)]
        )
        runs += 1
        escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
        if escaped or result.exit_code not in (0, 1, 2, 3) or "internal error" in result.output:
            last = result.output.strip().splitlines()[-1:] or [repr(result.exception)]
            bugs.append(f"{label}: exit {result.exit_code}: {last[0][:200]}")
    assert runs > 50  # every place of the document, each value
    assert not bugs, f"{name}: " + "\n".join(bugs[:20])
