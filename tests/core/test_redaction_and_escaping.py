"""The redactor knows the token in every form it can be written in; each sink's escape holds.

Expected strings are written out by hand (base64 and percent-encoding computed by the standard
library in the test only where the point is that the redactor covers that encoding).
"""

from __future__ import annotations

import base64
import os
import urllib.parse
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from gate.errors import EvalGateError, OutputError, describe_unexpected
from gate.fileio import atomic_write, refuse_overwriting
from gate.github.trim import trim_markdown, utf8_bytes
from gate.redact import MASK, Redactor, redact, redacting
from gate.report.escape import log_text, md_text, workflow_data, workflow_property

TOKEN = "ghs_redactMe0123456789abcdefABCDEF"


@pytest.mark.parametrize(
    "form",
    [
        TOKEN,
        base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode(),
        base64.b64encode(TOKEN.encode()).decode(),
        base64.b64encode(TOKEN.encode()).decode().rstrip("="),
        urllib.parse.quote(TOKEN + "/+=", safe=""),
    ],
)
def test_every_form_of_the_token_is_masked(form: str) -> None:
    secret = TOKEN + "/+=" if "%2F" in form else TOKEN
    redactor = Redactor([secret])
    assert redactor(f"Authorization: Basic {form} tail") == f"Authorization: Basic {MASK} tail"


def test_a_token_with_a_line_break_is_masked_whole_by_line_and_as_quoted() -> None:
    secret = "ghs_firstHalf0123\r\nsecondHalf4567"
    redactor = Redactor([secret])
    quoted = "Invalid header value b'Bearer ghs_firstHalf0123\\r\\nsecondHalf4567'"
    assert redactor(quoted) == f"Invalid header value b'Bearer {MASK}'"
    assert redactor("log: ghs_firstHalf0123 and then secondHalf4567") == (
        f"log: {MASK} and then {MASK}"
    )
    # As a workflow command writes it (percent-encoded line break).
    assert redactor("::error::ghs_firstHalf0123%0D%0AsecondHalf4567") == f"::error::{MASK}"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        # A name cut to fit (md_text's 200 characters, a chart label's 32) keeps the
        # token's beginning; a chart's shared beginning cut off keeps its end.
        (f"name x{TOKEN[:9]}…", f"name x{MASK}…"),
        (f"…{TOKEN[-12:]} end", f"…{MASK} end"),
        (f"…{TOKEN[8:23]}…", f"…{MASK}…"),  # 15 in a row from its middle
        (md_text(f"a{TOKEN}", 12), f"a{MASK}…"),  # cut, then escaped (ghs\_redac…)
        (f"{TOKEN[:8]}{TOKEN[:8]}+{TOKEN[-8:]}", f"{MASK}+{MASK}"),
        # A shorter beginning leaves the token unguessable, and is left as it is.
        (f"x{TOKEN[:7]}…", f"x{TOKEN[:7]}…"),
    ],
)
def test_what_is_left_of_a_cut_token_is_masked(text: str, masked: str) -> None:
    """Found by tests/hostile/mutate.py --publish: a stimulus named with the token, cut in
    a chart label, showed 27 of its 34 characters in the job summary and the comment."""
    assert Redactor([TOKEN])(text) == masked


def test_the_redactor_in_force_comes_from_the_environment_given() -> None:
    with redacting({"INPUT_GITHUB_TOKEN": TOKEN, "GITHUB_TOKEN": "ghp_other0123456789"}):
        assert redact(f"a {TOKEN} b ghp_other0123456789") == f"a {MASK} b {MASK}"
    short = Redactor(["abc"])  # too short to be a secret worth masking everywhere
    assert not short and short("abc") == "abc"


def test_report_files_are_redacted_and_lone_surrogates_written_as_escapes(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    with redacting({"GITHUB_TOKEN": TOKEN}):
        atomic_write(str(target), f'{{"name": "\ud800", "leak": "{TOKEN}"}}')
    assert target.read_text(encoding="utf-8") == '{"name": "\\ud800", "leak": "***"}'


def test_an_output_that_cannot_be_written_is_an_output_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="cannot write"):
        atomic_write(str(blocker / "report.json"), "{}")


def test_an_output_over_an_input_is_refused_by_real_path(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text("{}\n")
    os.symlink(results, tmp_path / "alias.jsonl")
    with pytest.raises(EvalGateError, match=r"--json .*alias\.jsonl is also an input"):
        refuse_overwriting({"--json": str(tmp_path / "alias.jsonl")}, [str(results)])
    refuse_overwriting({"--json": str(tmp_path / "report.json")}, [str(results)])


def test_unexpected_errors_are_one_line() -> None:
    assert describe_unexpected(KeyError("name")) == (
        "internal error (KeyError: 'name'); this is a bug in eval-gate, please report it"
    )
    assert describe_unexpected(MemoryError()).startswith("out of memory: ")


# -- escaping ---------------------------------------------------------------------------------


def test_log_lines_cannot_start_a_workflow_command() -> None:
    name = "x\n::error title=pwn::owned\r\x1b[31m\u202e\ud800.jsonl"
    line = log_text(f"eval-gate: read {name} as native")
    assert line == (
        "eval-gate: read x\\n::error title=pwn::owned\\r\\x1b[31m\\u202e\\ud800.jsonl as native"
    )
    assert "\n" not in line and line.encode("utf-8")


def _render(text: str) -> str:
    return MarkdownIt("commonmark").render(text)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("see GH-45", "see GH\u2060\\-45"),  # GitHub links GH-45 to issue 45
        ("é@octocat", "é\\@\u2060octocat"),  # a mention after a non-ASCII letter
        ("pass@3", "pass\\@3"),  # after an ASCII letter: no mention, left readable
        ("a\u0085b\u2028c", "a b c"),  # NEL and LINE SEPARATOR end a line for splitlines()
        ("abc\u202edcba\u2066x\u200e", "abc\ufffddcba\ufffdx\ufffd"),  # bidi controls
        ("lone \ud800", "lone \ufffd"),
    ],
)
def test_md_text_breaks_what_github_would_link_split_or_reorder(name: str, shown: str) -> None:
    assert md_text(name) == shown


def test_a_table_row_with_a_next_line_character_survives_trimming() -> None:
    row = f"| {md_text('a' + chr(0x85) + 'b')} | 1 |\n"
    table = "| name | n |\n|---|---|\n" + row * 50
    trimmed = trim_markdown(table, 400, lambda n: f"> cut {n}", utf8_bytes)
    body = trimmed.split("> cut")[0]
    assert all(line.count("|") == 3 for line in body.splitlines() if line)
    # A raw U+0085 in the text (not from md_text) is no line end for the trimmer either.
    raw = "| x\u0085y | 1 |\n" * 3
    assert trim_markdown(raw, 1000, lambda n: "", utf8_bytes) == raw


def test_workflow_data_replaces_what_cannot_be_written() -> None:
    assert workflow_data("50%\n\ud800") == "50%25%0A\ufffd"


def test_workflow_commands_carry_no_terminal_sequence() -> None:
    """A stimulus named with an OSC title, an OSC 8 hyperlink, a DCS string or C1's one-byte
    CSI reached the job's log raw inside an annotation (the log viewer obeys them)."""
    names = {
        "\x1b]0;pwned\x07 title": "\ufffd]0;pwned\ufffd title",
        "\x1b]8;;http://x.example\x1b\\link": "\ufffd]8;;http://x.example\ufffd\\link",
        "\x9b31m red": "\ufffd31m red",
        "bell\x07 del\x7f nel\x85 ls\u2028 tab\t": "bell\ufffd del\ufffd nel\ufffd ls\ufffd tab\t",
    }
    for name, shown in names.items():
        assert workflow_data(name) == shown
        assert workflow_property(name) == shown.replace(":", "%3A").replace(",", "%2C")


def test_a_token_of_bytes_that_are_not_utf8_is_masked_in_every_form() -> None:
    # The environment's bytes that are not UTF-8 reach Python as lone surrogates; building
    # the redactor raised UnicodeEncodeError (a traceback, exit 1, before any output).
    secret = "ghs_notUtf8\udcff0123456789abcd"
    redactor = Redactor([secret])
    assert redactor(f"a {secret} b") == f"a {MASK} b"
    assert redactor("url ghs_notUtf8%FF0123456789abcd") == f"url {MASK}"
    lone = Redactor(["ghs_lone\ud800surrogate0123"])  # not from bytes: surrogatepass
    assert lone("ghs_lone%ED%A0%80surrogate0123") == MASK
