"""The terminal view: what ``eval-gate check`` prints when its stdout is a terminal.

The same content and words as the Markdown summary (:mod:`gate.report.wording`), laid
out for a terminal: colour (ANSI SGR; none when ``NO_COLOR`` is set, https://no-color.org,
or ``TERM=dumb``), tables aligned by display width (a wide CJK character or emoji takes
two columns, a combining mark none), prose wrapped to the width, and Unicode bars for a
rate with its interval. No Markdown escapes: every string from the user's files passes
through :func:`~gate.report.escape.terminal_text` instead.

A small renderer of our own rather than rich: importing rich's console and table costs
35-45 ms (plus ~10 ms for the first render) against the 0.35 s cold-start goal, and rich
with Pygments adds ~6 MB to an image that never draws on a terminal; this module needs only
the standard library (measured in the commit that added it).
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from gate.report import wording
from gate.report.escape import terminal_text
from gate.report.markdown import (
    changed_rows,
    delta_comparison,
    delta_marks,
    failing_with_messages,
    shown_suites,
    worst_first,
)

if TYPE_CHECKING:
    from gate.compare import Comparison
    from gate.metrics import Interval, MetricInterval
    from gate.pipeline import CheckOutcome
    from gate.scoring import StimulusScore, SuiteScore

#: the terminal view lists at most this many stimuli per table (worst first).
MAX_ROWS = 20
#: tables use the terminal's width up to this; prose wraps at PROSE_WIDTH at most.
MAX_WIDTH = 160
PROSE_WIDTH = 100
MIN_WIDTH = 40
#: cells of a rate bar (0-100%).
BAR_CELLS = 10

RESET = "\x1b[0m"
#: a colour code as :meth:`Terminal.style` writes it (file content never holds ESC: it
#: went through terminal_text).
_SGR = re.compile("\x1b\\[[0-9;]*m")
BOLD = "1"
DIM = "2"
RED = "31"
GREEN = "32"
YELLOW = "33"
OUTCOME_COLOUR = {"pass": GREEN, "fail": RED, "inconclusive": YELLOW}


def char_width(char: str) -> int:
    """Columns a character takes: 2 for wide and full-width, 0 for combining and format."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (our own colour codes take none).

    >>> display_width("abc"), display_width("名前"), display_width("e\u0301"), display_width("❔")
    (3, 4, 1, 2)
    >>> display_width("\x1b[1mbold\x1b[0m")
    4
    """
    return sum(char_width(c) for c in _SGR.sub("", text))


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns, with "…" when cut.

    >>> fit("Refactor auth middleware", 10), fit("名前名前", 5), fit("ok", 5)
    ('Refactor …', '名前…', 'ok')
    """
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        w = char_width(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out) + "…"


def wrap(text: str, width: int, indent: str = "", first: str = "") -> list[str]:
    """Words of ``text`` in lines of at most ``width`` columns (a longer word is cut),
    the first line starting with ``first`` and the others with ``indent``."""
    lines: list[str] = []
    line, used, words = first, display_width(first), 0
    for word in text.split():
        w = display_width(word)
        if words and used + 1 + w > width:
            lines.append(line)
            line, used, words = indent, display_width(indent), 0
        if words:
            line += " "
            used += 1
        if used + w > width:
            word = fit(word, max(1, width - used))
            w = display_width(word)
        line += word
        used += w
        words += 1
    if words:
        lines.append(line)
    return lines


def rate_bar(value: float, lo: float, hi: float, cells: int = BAR_CELLS) -> str:
    """A rate and its interval in ``cells`` characters, darker where the data are surer:
    █ up to the interval's lower end, ▓ from there to the estimate, ▒ from the estimate to
    the upper end, ░ beyond (each cell drawn by its centre).

    >>> rate_bar(0.6, 0.345, 0.819)
    '███▓▓▓▒▒░░'
    >>> rate_bar(1.0, 0.368, 1.0), rate_bar(0.0, 0.0, 0.632)
    ('████▓▓▓▓▓▓', '▒▒▒▒▒▒░░░░')
    """
    out = []
    for i in range(cells):
        centre = (i + 0.5) / cells
        out.append(
            "█" if centre <= lo else "▓" if centre <= value else "▒" if centre <= hi else "░"
        )
    return "".join(out)


@dataclass(frozen=True)
class Cell:
    """A table cell: its text (escaped already) and its SGR codes."""

    text: str
    codes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Terminal:
    """How to draw: the width in columns and whether to colour."""

    width: int = 100
    color: bool = True

    @classmethod
    def detect(
        cls, stream: TextIO | None = None, environ: Mapping[str, str] | None = None
    ) -> Terminal:
        """The terminal behind ``stream``: its width (``COLUMNS`` first, as
        :func:`shutil.get_terminal_size` reads it), colour unless ``NO_COLOR`` is set to
        anything non-empty or ``TERM`` is ``dumb``."""
        env = os.environ if environ is None else environ
        columns = 0
        given = env.get("COLUMNS", "")
        # ASCII digits only ("²" is a digit int() refuses), and few: 5,000 of them is an int()
        # past Python's limit; any width past MAX_WIDTH is MAX_WIDTH anyway.
        if given.isascii() and given.isdigit():
            columns = int(given[-6:]) if len(given.lstrip("0")) <= 6 else MAX_WIDTH
        elif stream is not None:
            try:
                columns = os.get_terminal_size(stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                columns = 0
        if columns <= 0:
            columns = shutil.get_terminal_size((100, 24)).columns
        color = not env.get("NO_COLOR") and env.get("TERM") != "dumb"
        return cls(max(MIN_WIDTH, min(columns, MAX_WIDTH)), color)

    @property
    def prose(self) -> int:
        return min(self.width, PROSE_WIDTH)

    def style(self, text: str, *codes: str) -> str:
        if not self.color or not codes or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{RESET}"

    def heading(self, text: str) -> str:
        return self.style(text, BOLD)

    def paragraph(self, text: str, *codes: str) -> list[str]:
        return [self.style(line, *codes) for line in wrap(text, self.prose)]

    def bullets(self, items: Sequence[str], *codes: str) -> list[str]:
        lines = []
        for item in items:
            lines += [self.style(x, *codes) for x in wrap(item, self.prose, "  ", "• ")]
        return lines

    def table(
        self,
        header: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        align: str,
        shrink: int = 0,
        optional: Sequence[int] = (),
        wrap_shrunk: bool = False,
    ) -> list[str]:
        """Columns padded to their widest cell and two spaces apart. When too wide, the
        ``optional`` columns are dropped (first listed first), then column ``shrink`` is
        narrowed: its cells cut with "…", or wrapped onto more lines with ``wrap_shrunk``."""
        keep = list(range(len(header)))

        def widths() -> list[int]:
            return [
                max([display_width(header[i]), *(display_width(r[i].text) for r in rows)])
                for i in keep
            ]

        def total(ws: list[int]) -> int:
            return sum(ws) + 2 * (len(ws) - 1)

        for column in optional:
            if total(widths()) <= self.width:
                break
            keep.remove(column)
        ws = widths()
        if total(ws) > self.width and shrink in keep:
            at = keep.index(shrink)
            ws[at] = max(display_width(header[shrink]), 12, ws[at] - (total(ws) - self.width))

        def lines(cells: Sequence[Cell], codes: tuple[str, ...] = ()) -> list[str]:
            texts = []
            for w, i in zip(ws, keep, strict=True):
                text = cells[i].text
                if i == shrink and wrap_shrunk and display_width(text) > w:
                    texts.append(wrap(text, w, "  ") or [""])
                else:
                    texts.append([fit(text, w)])
            out = []
            for n in range(max(len(t) for t in texts)):
                parts = []
                for t, w, i in zip(texts, ws, keep, strict=True):
                    text = t[n] if n < len(t) else ""
                    pad = " " * (w - display_width(text))
                    styled = self.style(text, *(codes or cells[i].codes))
                    parts.append(pad + styled if align[i] == "r" else styled + pad)
                out.append("  ".join(parts).rstrip())
            return out

        rule = self.style("  ".join("─" * w for w in ws), DIM)
        body = [line for row in rows for line in lines(row)]
        return [*lines([Cell(h) for h in header], (BOLD,)), rule, *body]


def _plain(text: str) -> str:
    return terminal_text(text, 80)


def _gates(outcome: CheckOutcome, term: Terminal) -> list[str]:
    rows = []
    for gate in outcome.gates:
        name = wording.gate_name(gate, _plain)
        worst = wording.worst_subject(gate)
        if worst is not None:
            name += f" — worst: {_plain(worst)}"
        rows.append(
            [
                Cell(name),
                Cell(wording.value_text(gate)),
                Cell(wording.bounds_text(gate)),
                Cell(wording.target_text(gate, short=True)),  # the sentence has the rest
                Cell(wording.OUTCOME_WORD[gate.outcome], (OUTCOME_COLOUR[gate.outcome],)),
            ]
        )
    header = ["Gate", "Value", "Bounds", "Target", "Result"]
    lines = term.table(header, rows, "lrrrl", shrink=0, optional=[2], wrap_shrunk=True)
    for gate in outcome.gates:
        sentence = wording.gate_sentence(gate, _plain)
        advice = wording.advice_sentence(gate)
        lines += wrap(sentence + (f" {advice}" if advice else ""), term.prose, "  ", "• ")
    notes = []
    if any(g.spec.default for g in outcome.gates if g.kind != "completed_trials"):
        notes.append(wording.DEFAULT_GATE_NOTE)
    if any(g.sequential for g in outcome.gates):
        notes.append(wording.SEQUENTIAL_NOTE)
    for note in notes:
        lines += ["", *term.paragraph(note, DIM)]
    return lines


def _suite_table(s: SuiteScore, term: Terminal, title: str = "Suite metric") -> list[str]:
    level = wording.pct(s.confidence)

    def row(name: str, value: float, interval: Interval | MetricInterval | None) -> list[Cell]:
        if interval is None:
            return [Cell(name), Cell(wording.percent(value)), Cell(""), Cell("–")]
        lo, hi = float(interval.lo), float(interval.hi)
        return [
            Cell(name),
            Cell(wording.percent(value)),
            Cell(rate_bar(value, lo, hi)),
            Cell(wording.interval_text(interval)),
        ]

    rows = [row(*rate) for rate in wording.suite_rate_rows(s)]
    rows.append(
        [Cell("suite score (mean aggregate)"), Cell(f"{s.score:.3f}"), Cell(""), Cell("–")]
    )
    return term.table([title, "Estimate", "", f"{level} interval"], rows, "lrlr")


def _outcomes(letters: str, limit: int = 12) -> str:
    marks = letters.replace("P", "✔").replace("F", "✘").replace("E", "⚠")
    return marks if len(marks) <= limit else marks[:limit] + f" +{len(marks) - limit}"


def _stimuli(
    outcome: CheckOutcome,
    s: SuiteScore,
    term: Terminal,
    ordered: Sequence[StimulusScore] | None = None,
) -> list[str]:
    """The stimuli table of ``s`` (``ordered``: ``worst_first(s.stimuli)``, if made already)."""
    k = s.k
    compared = delta_comparison(outcome)
    deltas = delta_marks(compared) if compared is not None else None
    show_suite = len(s.suite_names) > 1
    ordered = worst_first(s.stimuli) if ordered is None else ordered
    rows = []
    for x in ordered[:MAX_ROWS]:
        trials = wording.counted_trials(x.trials, x.errors, s.errors_policy, short=True)
        flaky = f"⚠ {wording.percent(x.flakiness)}" if x.flaky else ""
        lo, hi = float(x.pass_rate_interval.lo), float(x.pass_rate_interval.hi)
        row = [
            Cell(_plain(f"{x.suite}/{x.name}" if show_suite else x.name)),
            Cell(trials),
            Cell(_outcomes(x.outcomes)),
            Cell(wording.percent(x.pass_rate)),
            Cell(rate_bar(x.pass_rate, lo, hi)),
            Cell(wording.interval_text(x.pass_rate_interval)),
            Cell(f"{x.pass_at_k:.3f}"),
            Cell(f"{x.pass_hat_k:.3f}"),
            Cell(flaky, (YELLOW,)),
            Cell(x.reading),
        ]
        if deltas is not None:
            mark = deltas.get(f"{x.suite}/{x.name}", deltas.get(x.name, "–"))
            row.insert(4, Cell(mark, (RED,) if mark.startswith("▼") else ()))
        rows.append(row)
    level = wording.pct(s.confidence)
    header = ["Stimulus", "Trials", "Outcomes", "Pass rate", "", f"{level} interval"]
    header += [f"pass@{k}", f"pass^{k}", "Flaky", "Reading"]
    align = "lrlrlrrrll"
    # dropped in this order when too wide: reading, pass@k, outcomes, bar, pass^k, flaky,
    # interval (each also in the JSON report, the Markdown summary or the sentences)
    optional = [9, 6, 2, 4, 7, 8, 5]
    if deltas is not None:
        header.insert(4, "Δ points")
        align = "lrlrrlrrrll"
        optional = [10, 7, 2, 5, 8, 9, 6]
    lines = term.table(header, rows, align, shrink=0, optional=optional)
    omitted = len(ordered) - len(rows)
    if omitted:
        more = wording.plural(omitted, "more stimulus", "more stimuli")
        lines.append(term.style(f"… and {more}: the JSON report (--json) lists all.", DIM))
    return lines


def _comparison(comparison: Comparison, term: Terminal) -> list[str]:
    lines = [term.heading(wording.comparison_heading(comparison, _plain)), ""]
    lines += term.paragraph(wording.delta_sentence(comparison))
    lines += term.bullets(wording.comparison_bullets(comparison, _plain))
    changed = changed_rows(comparison)
    if changed:
        rows = [
            [
                Cell(_plain(r.id)),
                Cell(f"{r.baseline_counts.c}/{r.baseline_counts.n}"),
                Cell(f"{r.candidate_counts.c}/{r.candidate_counts.n}"),
                Cell(wording.delta_mark(r.delta), (RED,) if r.delta < 0 else ()),
                Cell(wording.change_text(r), (RED,) if r.regressed else ()),
                Cell(f"{r.p_holm:.3g}"),
            ]
            for r in changed[:MAX_ROWS]
        ]
        table = term.table(wording.CHANGED_HEADER, rows, "lrrrlr", shrink=0, optional=[5])
        lines += ["", *table]
        if len(changed) > MAX_ROWS:
            more = wording.plural(len(changed) - MAX_ROWS, "more changed stimulus", "more")
            lines.append(term.style(f"… and {more}.", DIM))
    return lines


def _notes(outcome: CheckOutcome, term: Terminal) -> list[str]:
    s = outcome.suite
    lines: list[str] = []
    errored = sorted((x for x in s.stimuli if x.errors), key=lambda x: -x.errors)
    if errored:
        rows = [
            [
                Cell(_plain(x.name)),
                Cell(str(x.errors)),
                Cell(terminal_text(wording.first_error_message(x), 160)),
            ]
            for x in errored[:MAX_ROWS]
        ]
        header = ["Stimulus", "Errors", "First message"]
        lines += [
            term.heading(f"Errored trials ({s.errors:,})"),
            *term.table(header, rows, "lrl", shrink=2),
        ]
    return lines


def _warnings(outcome: CheckOutcome, term: Terminal) -> list[str]:
    found = wording.warnings(outcome, lambda w: terminal_text(w, 300), _plain)
    if not found:
        return []
    return [term.heading("Warnings"), *term.bullets(wording.shown_warnings(found), YELLOW)]


def _methods(outcome: CheckOutcome, s: SuiteScore) -> list[str]:
    usage = wording.usage_methods_note(outcome.usage, outcome.usage_change)
    return [*wording.methods_notes(s), *([usage] if usage else [])]


def render_terminal(outcome: CheckOutcome, term: Terminal | None = None) -> str:
    """The terminal view of ``outcome``: verdict first, then gates, suites and stimuli."""
    term = term or Terminal()
    s = outcome.suite
    suites = outcome.suites
    verdict = outcome.verdict
    blocks: list[list[str]] = [
        [term.style(wording.verdict_line(outcome), BOLD, OUTCOME_COLOUR[verdict])]
    ]
    policy = wording.policy_sentence(outcome)
    if policy:
        blocks[0] += term.paragraph(policy)
    facts = wording.facts_line(s, _plain, suites=len(suites), bold=term.heading)
    blocks.append(term.paragraph(facts))
    blocks.append(_gates(outcome, term))
    blocks.append(_warnings(outcome, term))
    blocks.append(term.paragraph(wording.reading_sentence(s, term.heading)))
    blocks.append(_suite_table(s, term, "Suite metric" if len(suites) == 1 else "All suites"))
    if outcome.usage is not None:
        blocks.append(term.paragraph(wording.usage_line(outcome.usage, term.heading)))
    ordered = worst_first(s.stimuli)
    if len(suites) == 1:
        stimuli = _stimuli(outcome, s, term, ordered)
        blocks.append([term.heading("Stimuli, worst first"), "", *stimuli])
    blocks.append(_messages(s, ordered, term))
    shown = shown_suites(suites)
    if 0 < len(shown) < len(suites):
        blocks.append(term.paragraph(wording.suites_shown_note(len(shown), len(suites))))
    for one in shown:
        blocks.append(
            [
                term.heading(f"Suite {_plain(one.name)}"),
                "",
                *term.paragraph(wording.facts_line(one, _plain, bold=term.heading)),
                "",
                *_suite_table(one, term),
                "",
                *_stimuli(outcome, one, term),
            ]
        )
    blocks += [_comparison(c, term) for c in outcome.comparisons]
    if outcome.usage_change is not None:
        blocks.append(term.paragraph(wording.usage_change_line(outcome.usage_change, term.heading)))
    blocks.append(_notes(outcome, term))
    blocks.append(
        [
            term.style(wording.METHODS_TITLE, BOLD, DIM),
            *term.bullets(_methods(outcome, s), DIM),
        ]
    )
    text = "\n\n".join("\n".join(block) for block in blocks if block) + "\n"
    # Under `script` (a terminal in CI, for colour) each line is also a line of the job's
    # log: one that starts with "::" (a stimulus named "::error::x" heads a table row) is a
    # workflow command there.
    return _WORKFLOW_COMMAND_START.sub(" ::", text)


def _message_text(text: str) -> str:
    return terminal_text(text, 300)


_WORKFLOW_COMMAND_START = re.compile(r"^::", re.MULTILINE)
#: stimuli whose failure messages the terminal shows (the summary shows 200, the JSON all)
MESSAGE_STIMULI = 10


def _messages(s: SuiteScore, ordered: Sequence[StimulusScore], term: Terminal) -> list[str]:
    """Why trials failed: the first messages of the worst failing stimuli (the Markdown
    summary's section, shorter; ``ordered``: ``worst_first(s.stimuli)``)."""
    if not s.per_trial:
        return []
    chosen, unread = failing_with_messages(s, ordered, MESSAGE_STIMULI)
    if not chosen:
        return []
    title = wording.MESSAGES_SUMMARY.format(count=wording.stimuli_count(len(chosen)))
    lines = [term.heading(title)]
    for x in chosen:
        name = f"{x.suite}/{x.name}" if len(s.suite_names) > 1 else x.name
        lines += term.bullets([wording.stimulus_messages_label(name, x.passes, x.trials, _plain)])
        for message in x.messages:
            sentence = wording.message_sentence(message, _message_text)
            lines += [term.style(line, DIM) for line in wrap(sentence, term.prose, "    ", "  • ")]
    if unread:
        lines += term.paragraph(wording.more_failing_messages_note(unread), DIM)
    return lines
