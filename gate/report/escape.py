"""Every escape the product applies to user data lives here, one function per sink.

Stimulus names, tags, messages and file names come from files we do not control. Before
they reach Markdown (job summary, PR comment), an HTML comment, a GitHub workflow command or
a line of the log (stderr, stdout), they pass through exactly one of these functions.

Common to all: a lone surrogate (JSON may spell one, ``"\\ud800"``; a file name with bytes
that are not UTF-8 holds one) cannot be written as UTF-8 and bidirectional controls (U+202E
and kin) make text display in another order than it is stored; both become U+FFFD, visibly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# CommonMark lets any ASCII punctuation be backslash-escaped; escaping all of it
# turns off emphasis, links, images, code, HTML, headings, lists and tables at once.
_MD_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# C0 and C1 controls and the Unicode line and paragraph separators: str.splitlines() breaks
# a line at U+0085 and U+2028 as at "\n", and so may a renderer.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# Bidirectional formatting (Trojan Source) and lone surrogates.
_UNSAFE = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
REPLACEMENT = "\ufffd"
# GitHub links these after rendering (mentions, issue refs, bare URLs); a word
# joiner keeps the text readable while breaking the pattern.
_WORD_JOINER = "\u2060"
# Mentions need "@" after anything but an ASCII letter, digit or "_" (GitHub's pattern is
# ASCII: "é@octocat" mentions), e-mail autolinks a dotted domain after it; issue references
# ("#12", "org/repo#12", "GH-12") need a digit after "#" or "GH-"; URLs need "://" or "www.".
# Others ("pass@3") are left readable.
_AUTOLINK_TRIGGERS = re.compile(
    r"((?<![A-Za-z0-9_])@(?=\w)|@(?=[\w-]+\.\w)|#(?=\d)|\bGH-(?=\d)|://|www\.)", re.IGNORECASE
)
# Log lines: everything that could end the line or hide what it says, shown as an escape.
_LOG_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def safe_text(value: object) -> str:
    """``value`` as text with lone surrogates and bidirectional controls replaced by U+FFFD."""
    return _UNSAFE.sub(REPLACEMENT, str(value))


def md_text(value: object, max_length: int = 200) -> str:
    """Plain text safe inside Markdown prose or a GFM table cell.

    Newlines and control characters become spaces, every ASCII punctuation mark
    is backslash-escaped and GitHub's autolink triggers are broken.
    """
    text = _CONTROL.sub(" ", safe_text(value))
    if len(text) > max_length:
        text = text[: max_length - 1] + "…"
    text = _AUTOLINK_TRIGGERS.sub(lambda m: _break(m.group(1)), text)
    return _MD_PUNCTUATION.sub(r"\\\1", text)


def _break(trigger: str) -> str:
    if trigger == "://":
        return ":" + _WORD_JOINER + "//"
    if trigger.lower() == "www.":
        return trigger[:3] + _WORD_JOINER + "."
    if trigger.lower() == "gh-":
        return trigger[:2] + _WORD_JOINER + "-"
    return trigger + _WORD_JOINER


def html_comment_text(value: str) -> str:
    """Text that cannot end or nest an HTML comment (``-->``, ``--!>``, ``<!--``)."""
    cleaned = _CONTROL.sub(" ", value)
    return re.sub(r"[^A-Za-z0-9 _.:/=+-]", "_", cleaned).replace("--", "-_")


def workflow_data(value: str) -> str:
    """Message part of a ``::error ...::message`` workflow command (actions/toolkit rules).

    Line breaks are percent-encoded as the toolkit does (the annotation keeps them); every
    other control character becomes U+FFFD: the command is a line of the job's log, whose
    viewer obeys ESC sequences (an OSC 8 hyperlink, a title, colour) and C1's one-byte CSI.
    """
    text = _WORKFLOW_CONTROL.sub(REPLACEMENT, safe_text(value))
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


_WORKFLOW_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def workflow_property(value: str) -> str:
    """Property value of a workflow command (``title=``, ``file=``)."""
    return workflow_data(value).replace(":", "%3A").replace(",", "%2C")


def log_text(value: object, max_length: int = 4000) -> str:
    """One line of a log (stderr, a runner's log): no line break, control character, lone
    surrogate or bidirectional control survives; each is shown as its escape (``\\n``,
    ``\\x1b``, ``\\u202e``), so a file named ``x\\n::error::y`` cannot start a workflow
    command and what is printed is what the name holds."""
    text = _LOG_UNSAFE.sub(lambda m: _escape(m.group()), str(value))
    if len(text) > max_length:
        text = text[: max_length - 1] + "…"
    return text


def _escape(char: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if char in named:
        return named[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# Inside a Mermaid XY chart a label is a quoted string that ends at the next '"'; before
# parsing, Mermaid scans the whole block for directives (%%{...}%%), comments (%%) and
# entity codes (#...;). Letters, digits, spaces and a few marks cannot start any of them.
_MERMAID_UNSAFE = re.compile(r"[^\w .,:/()+'-]+")
_SPACES = re.compile(r"\s+")


def mermaid_label(value: object, max_length: int = 32) -> str:
    """A quoted category label for a Mermaid chart (``xychart-beta``).

    Every character but letters, digits, spaces and ``. , : / ( ) + ' -`` becomes a space
    (quotes, ``%``, ``#``, ``;``, backticks, brackets, ``<``/``>``, controls), so a name can
    neither end the string nor the code block, nor start a directive, comment or entity.
    """
    return _quoted(_mermaid_text(value), max_length)


#: where a beginning that every label of a chart shares is cut (:func:`mermaid_labels`):
#: between parts of a path or test id, not inside a word such as ``case_017``
_LABEL_BREAKS = "/.:"


def mermaid_labels(names: Sequence[object], max_length: int = 32) -> list[str]:
    """A chart's category labels, numbered (``"1. name"``: two equal names stay two bars),
    each as :func:`mermaid_label` makes it. When the names are cut to fit and all begin
    alike, the beginning they share (up to a separator) is shown as ``…``: test ids such
    as ``tests/agents/test_refund.py::test_case_017`` would otherwise be ten bars of one
    label.

    >>> mermaid_labels(["tests/agents/test_refund.py::case_017", "tests/agents/test_refund.py::case_2"])
    ['"1. …case_017"', '"2. …case_2"']
    """  # noqa: E501 (a doctest line)
    texts = [_mermaid_text(name) for name in names]
    numbers = [f"{i}. " for i in range(1, len(texts) + 1)]
    room = max_length - max(map(len, numbers), default=0)
    if len(texts) > 1 and any(len(text) > room for text in texts):
        first, last = min(texts), max(texts)  # what these two share, every text shares
        shared = 0
        while shared < min(len(first), len(last)) and first[shared] == last[shared]:
            shared += 1
        cut = max(first.rfind(mark, 0, shared) for mark in _LABEL_BREAKS) + 1
        if cut >= 8:  # a shorter beginning is worth keeping
            texts = ["…" + text[cut:] for text in texts]
    return [_quoted(n + text, max_length) for n, text in zip(numbers, texts, strict=True)]


def _mermaid_text(value: object) -> str:
    return _SPACES.sub(" ", _MERMAID_UNSAFE.sub(" ", _CONTROL.sub(" ", str(value)))).strip()


def _quoted(text: str, max_length: int) -> str:
    text = text.strip()
    if len(text) > max_length:
        text = text[: max_length - 1].rstrip() + "…"
    return f'"{text or "?"}"'


# A terminal obeys C0/C1 controls (ESC starts colour, cursor and title sequences; CSI is
# also one byte, U+009B) and shows bidi overrides by reordering what follows them.
_TERMINAL_BLANK = re.compile(r"[\t\n\v\f\r\x85\u2028\u2029]+")
_TERMINAL_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def terminal_text(value: object, max_length: int = 200) -> str:
    """Plain text safe to print on a terminal: line breaks and tabs become spaces, every
    other control character (ESC, CSI, bell, backspace, DEL, C1) and every bidi control
    becomes U+FFFD, so file content can neither colour, move the cursor, retitle the window
    nor reorder the line it is printed on; a lone surrogate (unwritable as UTF-8) too."""
    text = _TERMINAL_CONTROL.sub(REPLACEMENT, _TERMINAL_BLANK.sub(" ", str(value)))
    if len(text) > max_length:
        text = text[: max_length - 1] + "…"
    return text
