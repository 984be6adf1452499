"""The Markdown summary: verdict first, then gates, the suite reading and the stimuli.

Every string that came from the user's files passes through :func:`md_text` (or, inside
a Mermaid chart, :func:`mermaid_label`). The sentences come from :mod:`wording`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from gate.compare import Comparison, StimulusRow
from gate.gates import GateDecision
from gate.report import wording
from gate.report.escape import md_text, mermaid_labels
from gate.scoring import (
    StimulusScore,
    SuiteScore,
    in_trial_order,
    names_of,
    reliability_of,
    score_arrays,
)

if TYPE_CHECKING:
    from gate.pipeline import CheckOutcome

#: tables longer than this are folded in <details> so the verdict stays on screen.
FOLD_ROWS = 10
#: the stimuli table shows at most this many (worst first); the JSON report has them all.
MAX_STIMULUS_ROWS = 200
#: a chart shows at most this many stimuli: the worst, or those that changed most.
CHART_STIMULI = 10
#: a decay curve shows at most this many runs, evenly spaced (a character per run made a
#: stimulus of 300,000 runs a 900 KB line, and the summary has 200 rows).
DECAY_POINTS = 40
#: at most this many suites get a section of their own (1,000 suites of 3 stimuli made a
#: 1.8 MB summary, past GitHub's 1 MiB): those with the lowest pass rate.
MAX_SUITE_SECTIONS = 20
#: the UTF-8 bytes the whole summary may take with its suite sections: GitHub drops a step
#: summary over 1 MiB, so the action trims it from the end, where the comparison with the
#: baseline and the methods are (20 suites of 400 stimuli made a 4.9 MB summary); the rest
#: of the MiB is left to the action's notices and the job's other steps.
SUMMARY_BYTES = 900 * 1024
#: The folded tables by their titles, in the order they give way when a summary must shrink
#: (the PR comment's 65,536 characters, GitHub's 1 MiB for a job summary): first what a
#: reviewer acts on least. Folding by size alone emptied why trials failed, the larger
#: table, and kept the decay curves. A title none of these match gives way last.
_FOLD_ORDER = (
    re.compile(r"^Reliability of "),  # decay curves: how the failures fall in run order
    re.compile("^" + re.escape(wording.MESSAGES_SUMMARY.split("{", 1)[0])),  # why trials failed
    re.compile(r"^[\d,]+ errored trials?$"),  # each errored stimulus's first message
    re.compile(r"^The worst [\d,]+ of [\d,]+ stimuli$|^All .+, worst first$"),  # the stimuli
    re.compile(r", regressions first$"),  # the stimuli that changed against the baseline
)


percent = wording.percent
interval_text = wording.interval_text


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()) -> str:
    """A GFM table; cells must already be escaped."""
    marks = [
        "---:" if (align[i] if i < len(align) else "l") == "r" else "---"
        for i in range(len(header))
    ]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def fold_order(title: str) -> int:
    """Where the folded table titled ``title`` comes in :data:`_FOLD_ORDER` (the order in
    which :func:`gate.github.trim.fold_details` empties them when a summary must shrink).

    >>> fold_order("Reliability of 12 stimuli that did not always pass")
    0
    >>> fold_order("The worst 200 of 4,000 stimuli"), fold_order(wording.METHODS_TITLE)
    (3, 5)
    """
    return next((i for i, p in enumerate(_FOLD_ORDER) if p.search(title)), len(_FOLD_ORDER))


def folded(summary: str, body: str, rows: int) -> str:
    if rows <= FOLD_ROWS:
        return body
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _outcomes(letters: str, limit: int = 20) -> str:
    marks = letters.replace("P", "✔").replace("F", "✘").replace("E", "⚠")
    return marks if len(marks) <= limit else marks[:limit] + f" +{len(marks) - limit}"


def shown_suites(suites: Sequence[SuiteScore]) -> Sequence[SuiteScore]:
    """The suites that get a section: none when there is one (the summary is its section),
    all of them (in their order) up to :data:`MAX_SUITE_SECTIONS`, else that many with the
    lowest pass rate, lowest first."""
    if len(suites) == 1:
        return ()
    if len(suites) <= MAX_SUITE_SECTIONS:
        return suites
    return sorted(suites, key=lambda one: one.pass_rate)[:MAX_SUITE_SECTIONS]


def worst_first(stimuli: Sequence[StimulusScore]) -> list[StimulusScore]:
    """By pass rate, then pass^k, then flakiness (most flaky first), then name."""
    if not stimuli:
        return []
    arrays = score_arrays(stimuli, ("pass_rate", "pass_hat_k", "flakiness_percent"))
    names = names_of(stimuli)
    name_rank = np.empty(len(names), dtype=np.int64)  # not a numpy string array: 4 bytes a char
    name_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    order = np.lexsort(
        (name_rank, -arrays["flakiness_percent"], arrays["pass_hat_k"], arrays["pass_rate"])
    )
    return [stimuli[i] for i in order.tolist()]


def _failing(s: SuiteScore, ordered: Sequence[StimulusScore]) -> Sequence[StimulusScore]:
    """The stimuli of ``s`` that did not always pass, worst first: the head of ``ordered``
    (``worst_first(s.stimuli)``, whose first key is the pass rate), counted in one pass."""
    arrays = s.count_arrays()
    return ordered[: int(np.count_nonzero(arrays["passes"] < arrays["trials"]))]


def failing_with_messages(
    s: SuiteScore, ordered: Sequence[StimulusScore], limit: int
) -> tuple[list[StimulusScore], int]:
    """The first ``limit`` stimuli of ``s`` that did not always pass and kept messages, worst
    first (``ordered``: ``worst_first(s.stimuli)``), and how many failing stimuli come after
    the last of them: counted, not asked for their messages (made lazily, one by one)."""
    failing = _failing(s, ordered)
    found = list(itertools.islice(((i, x) for i, x in enumerate(failing) if x.messages), limit))
    unread = len(failing) - found[-1][0] - 1 if len(found) == limit else 0
    return [x for _, x in found], unread


def _escape(text: str) -> str:
    return md_text(text, 80)


def _bold(text: str) -> str:
    return f"**{text}**"


def render_gates(outcome: CheckOutcome) -> str:
    """The gates table, then one sentence per gate (and what would decide the undecided)."""
    rows = []
    sentences = []
    for gate in outcome.gates:
        worst = wording.worst_subject(gate)
        subject = f" — worst: {md_text(worst, 80)}" if worst is not None else ""
        rows.append(
            [
                wording.gate_name(gate, _escape) + subject,
                wording.value_text(gate),
                wording.bounds_text(gate),
                wording.target_text(gate),
                wording.OUTCOME_MARK[gate.outcome],
            ]
        )
        sentence = wording.gate_sentence(gate, _escape)
        advice = wording.advice_sentence(gate)
        sentences.append(f"- {sentence}" + (f" **{advice}**" if advice else ""))
    body = table(["Gate", "Value", "Bounds", "Target", "Result"], rows, "lrrrl")
    notes = []
    if any(g.spec.default for g in outcome.gates if g.kind != "completed_trials"):
        notes.append(f"_{wording.DEFAULT_GATE_NOTE}_")
    if any(g.sequential for g in outcome.gates):
        notes.append(f"_{wording.SEQUENTIAL_NOTE}_")
    return "\n\n".join([body, "\n".join(sentences), *notes])


def render_suite(
    s: SuiteScore, title: str = "Suite metric", gates: Sequence[GateDecision] = ()
) -> str:
    """The suite metric table of ``s`` (all stimuli, or one suite's), with Bayes@N and the
    values of the suite-level ``metric`` gates in ``gates``."""
    level = wording.pct(s.confidence)
    rows = [
        [name, percent(value), interval_text(interval) if interval is not None else "–"]
        for name, value, interval in wording.suite_rate_rows(s)
    ]
    rows.append(["suite score (mean aggregate)", f"{s.score:.3f}", "–"])
    for gate in gates:
        if gate.kind == "metric" and gate.scope == "suite" and gate.value is not None:
            label = wording.metric_gate_label(gate.spec, _escape)
            rows.append([label, wording.value_text(gate), wording.bounds_text(gate)])
    return table([title, "Estimate", f"{level} interval"], rows, "lrr")


def render_reliability(s: SuiteScore, ordered: Sequence[StimulusScore]) -> str:
    """Reference 004's reliability view of the flaky and failing stimuli (with trial order);
    ``ordered``: ``worst_first(s.stimuli)``."""
    if not s.per_trial:  # a counts file: asking each of 100,000 stimuli took a second
        return ""
    rows = []
    # The summary is computed only for the rows shown (it costs per trial); the others are
    # counted: a stimulus has one exactly when its trial order is known.
    failing = _failing(s, ordered)
    eligible = list(itertools.compress(failing, in_trial_order(failing)))
    shown_stimuli = eligible[:MAX_STIMULUS_ROWS]
    for stimulus, summary in zip(shown_stimuli, reliability_of(shown_stimuli), strict=True):
        if summary is None:
            continue
        rows.append(
            [
                md_text(stimulus.name, 80),
                wording.sparkline(summary.decay_curve, DECAY_POINTS),
                f"{summary.decay_curve[-1]}",
                f"{summary.graceful_degradation}",
                f"{summary.variance_amplification}",
            ]
        )
    if not rows:
        return ""
    header = [
        "Stimulus",
        "Decay curve (pass^k over the first k runs)",
        "Last",
        "Graceful degradation",
        "Variance amplification",
    ]
    body = table(header, rows, "llrrr")
    omitted = len(eligible) - len(shown_stimuli)
    which = wording.stimuli_count(len(eligible))
    if omitted:
        body += f"\n\n_{wording.more_stimuli_note(omitted)}_"
        which = f"the worst {len(shown_stimuli)} of {len(eligible):,} stimuli"
    note = f"_{wording.RELIABILITY_NOTE}_"
    return folded(
        f"Reliability of {which} that did not always pass", f"{note}\n\n{body}", len(rows)
    )


def render_reading(outcome: CheckOutcome) -> str:
    return wording.reading_sentence(outcome.suite, _bold)


def _mermaid_numbers(values: Sequence[float]) -> str:
    return "[" + ", ".join(f"{100.0 * v:.1f}" for v in values) + "]"


def mermaid_chart(
    labels: Sequence[str], axis: str, bars: Sequence[float], *lines: Sequence[float]
) -> str:
    """A horizontal Mermaid XY chart (``xychart-beta``: Mermaid 10.5 and later, which GitHub
    renders in job summaries and comments): one bar and some lines per label, values 0-1
    drawn as percents. Labels are numbered, so that two equal names stay two bars."""
    categories = ", ".join(mermaid_labels(labels))
    body = [
        "```mermaid",
        "xychart-beta horizontal",
        f"    x-axis [{categories}]",
        f'    y-axis "{axis} (%)" 0 --> 100',
        f"    bar {_mermaid_numbers(bars)}",
        *(f"    line {_mermaid_numbers(line)}" for line in lines),
        "```",
    ]
    return "\n".join(body)


def render_stimulus_chart(s: SuiteScore, ordered: Sequence[StimulusScore]) -> str:
    """The worst stimuli's pass rates and intervals, as a chart; nothing for one stimulus
    (``ordered``: ``worst_first(s.stimuli)``)."""
    if len(s.stimuli) < 2:
        return ""
    worst = ordered[:CHART_STIMULI]
    caption = wording.stimulus_chart_caption(len(worst), len(s.stimuli), s.confidence)
    chart = mermaid_chart(
        [x.name for x in worst],
        "pass rate",
        [x.pass_rate for x in worst],
        [float(x.pass_rate_interval.lo) for x in worst],
        [float(x.pass_rate_interval.hi) for x in worst],
    )
    return f"_{caption}_\n\n{chart}"


def render_stimuli(outcome: CheckOutcome, s: SuiteScore, ordered: Sequence[StimulusScore]) -> str:
    """The stimuli table of ``s``, worst first (``ordered``: ``worst_first(s.stimuli)``)."""
    k = s.k
    level = wording.pct(s.confidence)
    show_suite = len(s.suite_names) > 1
    compared = delta_comparison(outcome)
    deltas = delta_marks(compared) if compared is not None else None
    rows = []
    for stimulus in ordered[:MAX_STIMULUS_ROWS]:
        label = f"{stimulus.suite}/{stimulus.name}" if show_suite else stimulus.name
        flaky = (
            f"⚠ {stimulus.flakiness_percent:.1f}% ({stimulus.flakiness_band})"
            if stimulus.flaky
            else ""
        )
        trials = wording.counted_trials(
            stimulus.trials, stimulus.errors, s.errors_policy, short=True
        )
        row = [
            md_text(label),
            trials,
            _outcomes(stimulus.outcomes),
            percent(stimulus.pass_rate),
            interval_text(stimulus.pass_rate_interval),
            f"{stimulus.pass_at_k:.3f}",
            f"{stimulus.pass_hat_k:.3f}",
            flaky,
            stimulus.reading,
        ]
        if deltas is not None:
            qualified = f"{stimulus.suite}/{stimulus.name}"
            row.insert(4, deltas.get(qualified, deltas.get(stimulus.name, "–")))
        rows.append(row)
    header = ["Stimulus", "Trials", "Outcomes", "Pass rate", f"{level} interval"]
    header += [f"pass@{k}", f"pass^{k}", "Flaky", "Reading"]
    align = "lrlrrrrll"
    if compared is not None:
        header.insert(4, f"Δ vs baseline ({wording.comparison_metric(compared)}, points)")
        align = "lrlrrrrrll"
    body = table(header, rows, align)
    omitted = len(ordered) - len(rows)
    chart = render_stimulus_chart(s, ordered)
    if omitted:
        body += f"\n\n_{wording.more_stimuli_note(omitted)}_"
        body = folded(f"The worst {len(rows)} of {len(ordered):,} stimuli", body, len(rows))
    else:
        body = folded(
            f"All {wording.stimuli_count(len(rows))}, worst first", body, len(rows)
        )
    return "\n\n".join(part for part in (chart, body) if part)


def render_messages(suite: SuiteScore, ordered: Sequence[StimulusScore]) -> str:
    """Why trials of the suite's failing and flaky stimuli failed, collapsed: each
    stimulus's first messages (``ordered``: ``worst_first(suite.stimuli)``; at most
    :data:`MAX_STIMULUS_ROWS`)."""
    if not suite.per_trial:  # totals carry no messages
        return ""
    chosen, unread = failing_with_messages(suite, ordered, MAX_STIMULUS_ROWS)
    if not chosen:
        return ""
    show_suite = len(suite.suite_names) > 1
    items = []
    for stimulus in chosen:
        name = f"{stimulus.suite}/{stimulus.name}" if show_suite else stimulus.name
        label = wording.stimulus_messages_label(name, stimulus.passes, stimulus.trials, md_text)
        lines = [f"- **{label}**"]
        lines += [
            f"  - {wording.message_sentence(m, lambda text: md_text(text, 300))}"
            for m in stimulus.messages
        ]
        items.append("\n".join(lines))
    summary = wording.MESSAGES_SUMMARY.format(count=wording.stimuli_count(len(chosen)))
    if unread:
        items.append(f"\n_{wording.more_failing_messages_note(unread)}_")
    return f"<details><summary>{summary}</summary>\n\n" + "\n".join(items) + "\n\n</details>"


def render_methods(outcome: CheckOutcome) -> str:
    """How the numbers are computed, collapsed at the end of the summary."""
    usage = wording.usage_methods_note(outcome.usage, outcome.usage_change)
    found = [*wording.methods_notes(outcome.suite), *([usage] if usage else [])]
    notes = "\n".join(f"- {note}" for note in found)
    return f"<details><summary>{wording.METHODS_TITLE}</summary>\n\n{notes}\n\n</details>"


def render_notes(outcome: CheckOutcome) -> str:
    s = outcome.suite
    parts = []
    errors = s.count_arrays()["errors"]
    errored = np.flatnonzero(errors)
    if errored.size:
        # At most as many rows as the stimuli table: 100,000 stimuli must not make a summary
        # of megabytes (the JSON report lists every stimulus's messages).
        most = errored[np.argsort(-errors[errored], kind="stable")[:MAX_STIMULUS_ROWS]]
        rows = [
            [md_text(x.name), str(x.errors), md_text(wording.first_error_message(x), 160)]
            for x in (s.stimuli[i] for i in most.tolist())
        ]
        more = errored.size - len(rows)
        parts.append(
            folded(
                wording.plural(s.errors, "errored trial"),
                f"**Errored trials** ({s.errors:,}):\n\n"
                + table(["Stimulus", "Errors", "First message"], rows, "lrl")
                + (f"\n\n_{wording.more_stimuli_note(more)}_" if more else ""),
                len(rows),
            )
        )
    return "\n\n".join(parts)


def render_warnings(outcome: CheckOutcome) -> str:
    """The check's warnings, under the gates (a trimmed comment keeps them), at most 10."""
    found = wording.warnings(outcome, lambda x: md_text(x, 300), _escape)
    if not found:
        return ""
    return "**Warnings:**\n\n" + "\n".join(f"- {w}" for w in wording.shown_warnings(found))


def render_summary(outcome: CheckOutcome) -> str:
    """The whole Markdown job summary; its first line is the verdict."""
    s = outcome.suite
    first = "## " + wording.verdict_line(outcome)
    policy = wording.policy_sentence(outcome)
    if policy:
        first += "\n\n" + policy
    suites = outcome.suites
    sections = [
        first,
        wording.facts_line(s, _escape, suites=len(suites), bold=_bold),
        render_gates(outcome),
        render_warnings(outcome),
        render_reading(outcome),
        render_suite(s, "Suite metric" if len(suites) == 1 else "All suites", outcome.gates),
        wording.usage_line(outcome.usage, _bold) if outcome.usage is not None else "",
    ]
    if len(suites) == 1:
        ordered = worst_first(s.stimuli)  # once: 0.1 s for 100,000 stimuli
        sections += [
            "### Stimuli, worst first",
            render_stimuli(outcome, s, ordered),
            render_reliability(s, ordered),
            render_messages(s, ordered),
        ]
    closing = [
        *(render_comparison(c) for c in outcome.comparisons),
        wording.usage_change_line(outcome.usage_change, _bold)
        if outcome.usage_change is not None
        else "",
        render_notes(outcome),
        render_methods(outcome),
    ]
    room = SUMMARY_BYTES - _size(sections) - _size(closing)
    parts = [*sections, *_suite_sections(outcome, room), *closing]
    return "\n\n".join(part for part in parts if part) + "\n"


def _size(parts: Sequence[str]) -> int:
    """The UTF-8 bytes ``parts`` take in the summary, with what joins them."""
    return sum(len(part.encode("utf-8", "surrogatepass")) + 2 for part in parts if part)


def _suite_sections(outcome: CheckOutcome, room: int) -> list[str]:
    """A section per suite (:func:`shown_suites`) within ``room`` bytes: when they take more,
    those of the lowest pass rate that fit, lowest first; a line says which are shown."""
    suites = outcome.suites
    shown = shown_suites(suites)
    sections = [_suite_section(outcome, one) for one in shown]
    sizes = [_size([section]) for section in sections]
    full = sum(sizes) > room
    if full:
        note = _size([f"_{wording.suites_shown_note(len(shown), len(suites), full)}_"])
        fitting: list[int] = []
        used = note
        for i in sorted(range(len(shown)), key=lambda i: shown[i].pass_rate):
            used += sizes[i]
            if used > room:
                break
            fitting.append(i)
        sections = [sections[i] for i in fitting]
    if not full and len(shown) in (0, len(suites)):  # one suite: the summary is its section
        return sections
    return [f"_{wording.suites_shown_note(len(sections), len(suites), full)}_", *sections]


def _suite_section(outcome: CheckOutcome, one: SuiteScore) -> str:
    ordered = worst_first(one.stimuli)
    parts = [
        f"### Suite {md_text(one.name, 80)}",
        wording.facts_line(one, _escape, bold=_bold),
        render_suite(one),
        render_stimuli(outcome, one, ordered),
        render_reliability(one, ordered),
        render_messages(one, ordered),
    ]
    return "\n\n".join(part for part in parts if part)


def delta_comparison(outcome: CheckOutcome) -> Comparison | None:
    """The comparison the stimuli table's Δ column shows: the first over every stimulus."""
    if not outcome.comparisons:
        return None
    return next(
        (c for c in outcome.comparisons if c.tag is None and c.suite is None),
        outcome.comparisons[0],
    )


def delta_marks(comparison: Comparison) -> dict[str, str]:
    """Δ column cell by stimulus id: the change, or why there is none.

    "new": only in the results; "left out": in both runs but not in the paired test
    (see the comparison's notes); a stimulus in neither list nor compared (outside
    the comparison's tag) gets "–".
    """
    marks = {x: "new" for x in comparison.added}
    marks |= {x.id: "left out" for x in comparison.excluded}
    marks |= {row.id: wording.delta_mark(row.delta) for row in comparison.rows}
    return marks


_STATUS_ORDER = {
    "newly failing": 0,
    "newly flaky": 1,
    "still flaky": 2,
    "partly fixed": 3,
    "no longer flaky": 4,
    "fixed": 5,
    "unchanged": 6,
}


def changed_rows(comparison: Comparison) -> list[StimulusRow]:
    """The paired stimuli that changed, regressions first."""
    return sorted(
        (r for r in comparison.rows if r.status != "unchanged" or r.regressed or r.delta),
        key=lambda r: (0 if r.regressed else 1, _STATUS_ORDER[r.status], r.delta, r.id),
    )


def render_comparison(comparison: Comparison) -> str:
    """The baseline comparison: Δ with its interval and test, gates in words, power, changes."""
    lines = [f"### {wording.comparison_heading(comparison, _escape)}"]
    lines.append(wording.delta_sentence(comparison, _bold))
    bullets = [f"- {x}" for x in wording.comparison_bullets(comparison, _escape)]
    lines.append("\n".join(bullets))
    changed = changed_rows(comparison)
    if changed:
        # At most MAX_STIMULUS_ROWS, as the stimuli table: 8,000 changed stimuli made a
        # 460 KB table, and a job summary past 1 MiB is trimmed.
        rows = [
            [
                md_text(r.id),
                f"{r.baseline_counts.c}/{r.baseline_counts.n}",
                f"{r.candidate_counts.c}/{r.candidate_counts.n}",
                wording.delta_mark(r.delta),
                wording.change_text(r),
                f"{r.p_holm:.3g}",
            ]
            for r in changed[:MAX_STIMULUS_ROWS]
        ]
        body = table(wording.CHANGED_HEADER, rows, "lrrrlr")
        what = wording.plural(len(changed), "changed stimulus", "changed stimuli")
        omitted = len(changed) - len(rows)
        if omitted:
            body += f"\n\n_{wording.more_stimuli_note(omitted)}_"
            what = f"The first {len(rows)} of {what}"
        lines.append(folded(f"{what}, regressions first", body, len(rows)))
    chart = render_comparison_chart(comparison)
    if chart:
        lines.append(chart)
    return "\n\n".join(lines)


def render_comparison_chart(comparison: Comparison) -> str:
    """Candidate against baseline for the stimuli whose value changed most (drops first);
    nothing when fewer than two changed."""
    changed = sorted((r for r in comparison.rows if r.delta), key=lambda r: (r.delta, r.id))
    if len(changed) < 2:
        return ""
    shown = sorted(changed, key=lambda r: (-abs(r.delta), r.delta, r.id))[:CHART_STIMULI]
    shown.sort(key=lambda r: (r.delta, r.id))
    metric = wording.comparison_metric(comparison)
    chart = mermaid_chart(
        [r.id for r in shown],
        metric,
        [r.candidate for r in shown],
        [r.baseline for r in shown],
    )
    return f"_{wording.comparison_chart_caption(len(shown), metric)}_\n\n{chart}"
