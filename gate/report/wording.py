"""Every sentence and number format the reports use, in one place.

The numeric core and the gates produce numbers and codes; this module turns
them into words, for the Markdown summary, the JSON report's sentences and the
annotations alike. Functions that embed text from the user's files (stimulus
names, tags) take an ``escape`` function: :func:`gate.report.escape.md_text`
for Markdown, the identity for JSON and annotations (whose sinks escape).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from gate.config import GateSpec
from gate.gates import COMPLETED_TRIALS, GateDecision
from gate.metrics.exact_matched_pairs import MOST_STIMULI
from gate.metrics.intervals import MID_P_COVERAGE_FLOOR, MID_P_FLOOR_WEIGHTS, method_label
from gate.metrics.paired import T_MIN_STIMULI, PairedTest, min_sign_flip_stimuli
from gate.rates import pct as pct  # the report writes levels with it too (wording.pct)
from gate.scoring import (
    HIGH,
    NOT_MEASURED,
    PASS_AT_K_ESTIMATOR,
    PASS_HAT_K_ESTIMATOR,
    readings,
)

if TYPE_CHECKING:
    from gate.compare import Comparison, StimulusRow
    from gate.metrics import Interval, MetricInterval
    from gate.metrics.usage import UsageChange, UsageComparison, UsageSummary
    from gate.pipeline import CheckOutcome
    from gate.scoring import StimulusScore, SuiteScore
    from gate.trials import TrialMessage

Escape = Callable[[str], str]


def _plain(text: str) -> str:
    return text


# --------------------------------------------------------------------------- numbers


def format_p(p: float) -> str:
    """'p = 0.031', 'p = 2.1e-05', or 'p < 1e-16' (2^-M underflows for equal differences).

    >>> format_p(0.03125), format_p(2.1e-05), format_p(0.0)
    ('p = 0.031', 'p = 2.1e-05', 'p < 1e-16')
    """
    if p < 1e-16:
        return "p < 1e-16"
    return f"p = {p:.2g}" if p < 0.001 else f"p = {p:.3f}"


def points(x: float, sign: bool = True) -> str:
    """0.071 → '+7.1' (points of a rate: 1 point = 0.01; Unicode minus).

    >>> points(0.071), points(-0.2), points(0.05, sign=False)
    ('+7.1', '−20.0', '5.0')
    """
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    text = f"{100.0 * x:+.1f}" if sign else f"{100.0 * x:.1f}"
    return text.replace("-", "−")


def margin_points(x: float) -> str:
    """A configured margin as written: 0.05 → '5'."""
    return f"{100.0 * x:.10g}"


def percent(value: float) -> str:
    """0.3333 → '33.3%'."""
    return f"{value * 100:.1f}%"


def suite_rate_rows(s: SuiteScore) -> list[tuple[str, float, Interval | MetricInterval | None]]:
    """The suite table's rates in order, with their intervals (None: shown without one): the
    rows every view of the suite shows, before the score row."""
    k = s.k
    bayes = s.bayes()
    return [
        ("pass rate", s.pass_rate, s.pass_rate_interval),
        (f"pass@{k}", s.pass_at_k, s.pass_at_k_interval),
        (f"pass^{k} (unbiased)", s.pass_hat_k, s.pass_hat_k_interval),
        (f"pass^{k} (plug-in p^k)", s.pass_hat_k_plugin, None),
        ("Bayes@N (posterior mean)", bayes.value or 0.0, bayes.interval),
    ]


def interval_text(interval: Interval | MetricInterval) -> str:
    """'[34.5%, 81.9%]'."""
    return f"[{percent(float(interval.lo))}, {percent(float(interval.hi))}]"


def plural(count: int, one: str, many: str | None = None) -> str:
    """'1 stimulus', '3 stimuli', '10,000,000 trials' (thousands grouped, for reading).

    >>> plural(1, "stimulus", "stimuli"), plural(3, "gate"), plural(10**7, "trial")
    ('1 stimulus', '3 gates', '10,000,000 trials')
    """
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def stimuli_count(count: int) -> str:
    return plural(count, "stimulus", "stimuli")


def some(ids: Sequence[str], escape: Escape = _plain, limit: int = 5) -> str:
    """The first ``limit`` of ``ids``, and how many more (thousands grouped).

    >>> some([f"q{i}" for i in range(50_000)])
    'q0, q1, q2, q3, q4 and 49,995 more'
    """
    return ", ".join(escape(x) for x in ids[:limit]) + and_more(len(ids), limit)


def and_more(total: int, shown: int) -> str:
    """What follows the first ``shown`` of ``total`` items named in a sentence.

    >>> and_more(50_000, 5), and_more(5, 5)
    (' and 49,995 more', '')
    """
    return f" and {total - shown:,} more" if total > shown else ""


def stimulus_interval_text(method: str, trials: Iterable[int]) -> str:
    """The per-stimulus interval method as reports name it; for mid-p, the raised weights
    at the stimuli's trial counts (``MID_P_FLOOR_WEIGHTS``), if any of them has one.

    >>> stimulus_interval_text("mid-p", [5, 10])
    'mid-p with a coverage floor'
    >>> stimulus_interval_text("mid-p", [12, 5, 6, 6])   # doctest: +NORMALIZE_WHITESPACE
    'mid-p with a coverage floor (its tails weigh P(X = c) by 0.549 at n = 6 and 0.573 at
    n = 12 instead of ½, which keeps the exact coverage of a 95% interval ≥ 92%)'
    """
    label = method_label(method)
    if method != "mid-p":
        return label
    raised = [
        f"{MID_P_FLOOR_WEIGHTS[n]:g} at n = {n}"
        for n in sorted(set(trials))
        if n in MID_P_FLOOR_WEIGHTS
    ]
    if not raised:
        return label
    listed = ", ".join(raised[:-1]) + " and " + raised[-1] if len(raised) > 1 else raised[0]
    return (
        f"{label} (its tails weigh P(X = c) by {listed} instead of ½, which keeps the exact "
        f"coverage of a 95% interval ≥ {pct(MID_P_COVERAGE_FLOOR)})"
    )


# --------------------------------------------------------------------------- gates


def metric_label(metric: str, k: int | None, estimator: str = "unbiased") -> str:
    """How a metric is named in reports: ``pass^3``, ``pass@3``, ``pass rate``…"""
    if metric == "pass_hat_k":
        return f"pass^{k}" + (" (plug-in)" if estimator == "plugin" else "")
    if metric == "pass_at_k":
        return f"pass@{k}"
    return {
        "pass_rate": "pass rate",
        "score": "suite score",
        "flakiness": "flakiness",
        "completed": "trials completed without error",
    }.get(metric, metric)


def target_text(decision: GateDecision, short: bool = False) -> str:
    """'≥ 0.8', '≤ 20%' (flakiness reads as a percent), 'Δ ≥ −5 pts (pass: Δ > −10 shown)'
    for a drop (``short``: without the margin a pass rules out, where the sentence says it)."""
    spec = decision.spec
    if spec.kind == "max_regression":
        target = f"Δ ≥ −{margin_points(spec.target)} pts" if spec.target else "Δ ≥ 0"
        return target if short else target + _decides_at(spec)
    if spec.kind == "min_improvement":
        return f"Δ > +{margin_points(spec.target)} pts" if spec.target else "Δ > 0"
    if spec.kind == COMPLETED_TRIALS:
        return "≥ 1"
    sign = "≥" if decision.direction == "min" else "≤"
    if spec.kind == "max_flakiness":
        return f"{sign} {pct(spec.target)}"
    return f"{sign} {spec.target:g}"


def _decides_at(spec: GateSpec) -> str:
    """A suite regression gate passes once a drop of its ``detectable`` margin is ruled out,
    not at its target: an estimate between the two passes, which 'Δ ≥ −5 pts' alone hid."""
    if spec.scope != "suite" or spec.detectable is None or spec.detectable == spec.target:
        return ""
    return f" (pass: Δ > −{margin_points(spec.detectable)} shown)"


SPARK = "▁▂▃▄▅▆▇█"

RELIABILITY_NOTE = (
    "Reliability in run order: the decay curve is the plug-in pass^k over the first k runs "
    "(▁ 0% … █ 100%); graceful degradation weighs each pass by its run's position (100 when "
    "every run passed, lower when failures come late); variance amplification is the spread "
    "of the runs, 0 when stable, 100 at half and half. Integer percents."
)


def sparkline(percents: Sequence[int], limit: int | None = None) -> str:
    """Integer percents (0-100) as a row of block characters; past ``limit`` values, at
    ``limit`` evenly spaced ones (the last always among them), and says so.

    >>> sparkline([100, 100, 100, 31])
    '███▃'
    >>> sparkline([100] * 50 + [50] * 40 + [0] * 10, limit=10)
    '█████▅▅▅▅▁ (10 of 100 runs, evenly spaced)'
    """
    top = len(SPARK) - 1
    count = len(percents)
    if limit is not None and count > limit:
        # The value at the end of each of ``limit`` equal stretches of the runs.
        shown = [percents[-(-(i + 1) * count // limit) - 1] for i in range(limit)]
        return sparkline(shown) + f" ({limit} of {count:,} runs, evenly spaced)"
    return "".join(SPARK[min(top, round(p / 100 * top))] for p in percents)


def metric_gate_label(spec: GateSpec, escape: Escape = _plain) -> str:
    """A metric gate's name in tables: the configured ``name``, else its metric's label."""
    return escape(spec.label) if spec.label else str(spec.resolved.label())


def gate_name(decision: GateDecision, escape: Escape = _plain) -> str:
    """What the gate checks, in a few words, with what it decides on."""
    return spec_label(
        decision.spec,
        decision.k,
        decision.confidence,
        on_interval=decision.basis == "interval",
        sequential=decision.sequential,
        escape=escape,
    )


def worst_subject(decision: GateDecision) -> str | None:
    """The stimulus a per-stimulus gate's value belongs to (unescaped); None when the gate
    has no such value (a suite gate, or nothing measured)."""
    if decision.scope != "stimuli" or not decision.subject or decision.value is None:
        return None
    return decision.subject


def spec_label(
    spec: GateSpec,
    k: int | None,
    confidence: float | None,
    *,
    on_interval: bool,
    sequential: bool = False,
    escape: Escape = _plain,
) -> str:
    """A gate's name from its configuration (the plan names gates before any data)."""
    if spec.kind == COMPLETED_TRIALS:
        return "at least one trial completed without error"
    suite = f"suite {escape(spec.suite)}" if spec.suite is not None else "suite"
    where = suite if spec.scope == "suite" else "every stimulus"
    if spec.tag:
        where += f" tagged {escape(spec.tag)}"
    if spec.suite is not None and spec.scope == "stimuli":
        where += f" of {suite}"
    level = pct(confidence) if confidence is not None else ""
    sign = "≥" if spec.direction == "min" else "≤"
    how = f"{level} interval" if on_interval else "point estimate"
    if spec.kind == "metric":  # decided once, never on a confidence sequence
        label = escape(spec.label) if spec.label else spec.resolved.label()
        return f"{label} {sign} {spec.target:g} ({where}, {how})"
    metric = metric_label(spec.metric, k, spec.estimator)
    if spec.kind in ("max_regression", "min_improvement"):
        among = f", stimuli tagged {escape(spec.tag)}" if spec.tag else ""
        if spec.suite is not None:
            among += f", {suite}"
        if spec.scope == "stimuli":
            tagged = f" tagged {escape(spec.tag)}" if spec.tag else ""
            if spec.suite is not None:
                tagged += f" of {suite}"
            return f"no stimulus{tagged} worse than baseline (Holm, family-wise {level})"
        if spec.kind == "max_regression":
            return (
                f"no drop in {metric} beyond {margin_points(spec.target)} points vs baseline "
                f"(one-sided {level} bounds of Δ{among})"
            )
        return (
            f"{metric} improves on baseline by more than {margin_points(spec.target)} points "
            f"(one-sided {level} bounds of Δ{among})"
        )
    if spec.kind == "max_ci_half_width":
        what = "confidence-sequence" if sequential else "interval"
        return f"{level} {what} half-width of {metric} ≤ {spec.target:g} ({where})"
    if spec.kind == "max_flakiness":
        return f"flakiness ≤ {pct(spec.target)} ({where}, point estimate)"
    if sequential:
        how = f"{level} confidence sequence"
    default = ", default gate" if spec.default else ""
    return f"{metric} {sign} {spec.target:g} ({where}, {how}{default})"


def value_text(decision: GateDecision) -> str:
    if decision.value is None:
        return "–"
    if decision.kind == "max_flakiness":
        return percent(decision.value)
    if decision.kind == COMPLETED_TRIALS:
        return plural(round(decision.value), "trial")
    if decision.kind == "metric":
        return f"{decision.value:.4g}"
    if decision.kind in ("max_regression", "min_improvement"):
        return f"{points(decision.value)} pts"
    return f"{decision.value:.3f}"


def _bound_number(decision: GateDecision, value: float) -> str:
    """A bound as its gate's values are written: a metric gate's in 4 significant digits
    (a cost of $0.0119 is not 0.012), the pass-rate family's in 3 decimals."""
    return f"{value:.4g}" if decision.kind == "metric" else f"{value:.3f}"


def bounds_text(decision: GateDecision) -> str:
    if decision.lower is None or decision.upper is None:
        return "–"
    if decision.kind in ("max_regression", "min_improvement"):
        return f"[{points(decision.lower)}, {points(decision.upper)}] pts"
    return f"[{_bound_number(decision, decision.lower)}, {_bound_number(decision, decision.upper)}]"


OUTCOME_WORD = {"pass": "✔ pass", "fail": "✘ fail", "inconclusive": "❔ inconclusive"}
#: the Markdown tables' result cells: a failure in bold.
OUTCOME_MARK = {**OUTCOME_WORD, "fail": "✘ **fail**"}


def _bounds_word(decision: GateDecision) -> str:
    return "confidence sequence" if decision.sequential else "interval"


def _claim(decision: GateDecision, escape: Escape) -> str:
    """The claim a gate tests, as a phrase: 'the suite's pass^3 is at least 0.8'."""
    spec = decision.spec
    metric = metric_label(spec.metric, decision.k, spec.estimator)
    if spec.kind == "metric":
        metric = metric_gate_label(spec, escape)
    relation = "at least" if decision.direction == "min" else "at most"
    target = pct(spec.target) if spec.kind == "max_flakiness" else f"{spec.target:g}"
    if spec.scope == "suite":
        suite = "the suite" if spec.suite is None else f"suite {escape(spec.suite)}"
        among = f" (stimuli tagged {escape(spec.tag)})" if spec.tag else ""
        return f"{suite}'s{among} {metric} is {relation} {target}"
    return f"the {metric} of {_every_stimulus(spec, escape)} is {relation} {target}"


def _every_stimulus(spec: GateSpec, escape: Escape) -> str:
    """'every stimulus tagged critical of suite a': the stimuli a per-stimulus gate covers."""
    tagged = f" tagged {escape(spec.tag)}" if spec.tag else ""
    of = "" if spec.suite is None else f" of suite {escape(spec.suite)}"
    return f"every stimulus{tagged}{of}"


def gate_sentence(decision: GateDecision, escape: Escape = _plain) -> str:
    """One plain sentence: what was decided and why."""
    spec = decision.spec
    outcome = decision.outcome
    if spec.kind == COMPLETED_TRIALS:
        return (
            "Fail: every counted trial errored, so nothing about the agent was measured; "
            "a run like this never passes. Fix the harness (see the errored trials)."
        )
    if spec.kind in ("max_regression", "min_improvement"):
        return _regression_sentence(decision, escape)
    if decision.basis == "precision":
        width = f"half-width {decision.value:.3f}" if decision.value is not None else ""
        if outcome == "pass":
            return (
                f"Pass: the {pct(decision.confidence or 0)} {_bounds_word(decision)} is narrow "
                f"enough ({width} ≤ {spec.target:g})."
            )
        where = f" (widest: {escape(decision.subject)})" if spec.scope == "stimuli" else ""
        return (
            f"Inconclusive: the {pct(decision.confidence or 0)} {_bounds_word(decision)} is "
            f"still too wide ({width} > {spec.target:g}{where}); more trials narrow it."
        )
    claim = _claim(decision, escape)
    if decision.basis == "point estimate":
        return _point_sentence(decision, escape)
    level = pct(decision.confidence or 0)
    lo = _bound_number(decision, decision.lower) if decision.lower is not None else "?"
    hi = _bound_number(decision, decision.upper) if decision.upper is not None else "?"
    if spec.scope == "stimuli":
        if outcome == "fail":
            return (
                f"Fail: the data show that {some(decision.failing, escape)} "
                f"miss{'es' if len(decision.failing) == 1 else ''} the target, at family-wise "
                f"{level} confidence (Holm)."
            )
        if outcome == "pass":
            return f"Pass: the data show, at {level} confidence, that {claim}."
        return _stimuli_undecided(decision, escape, level, lo, hi)
    if outcome == "pass":
        return (
            f"Pass: the data show, at {level} confidence, that {claim} "
            f"({_bounds_word(decision)} [{lo}, {hi}])."
        )
    if outcome == "fail":
        return (
            f"Fail: the data rule out, at {level} confidence, that {claim} "
            f"({_bounds_word(decision)} [{lo}, {hi}])."
        )
    return (
        f"Inconclusive: the {level} {_bounds_word(decision)} [{lo}, {hi}] contains the target "
        f"{spec.target:g}, so the data cannot tell yet whether {claim}."
    )


def _stimuli_undecided(decision: GateDecision, escape: Escape, level: str, lo: str, hi: str) -> str:
    """Why a per-stimulus interval gate is undecided. A stimulus fails only when Holm's
    step-down over all of them rejects it, so its own interval can miss the target while
    the gate still cannot call it a miss: say so, or the Bounds column contradicts it."""
    count = len(decision.undecided)
    interval = _bounds_word(decision)
    sentence = (
        f"Inconclusive: {stimuli_count(count)} cannot be decided yet "
        f"({some(decision.undecided, escape)}): "
    )
    target = decision.spec.target
    bound = decision.upper if decision.direction == "min" else decision.lower
    missed = bound is not None and (
        bound < target if decision.direction == "min" else bound > target
    )
    if not missed:
        whose = (
            f"its {level} {interval} straddles"
            if count == 1
            else f"their {level} {interval}s straddle"
        )
        return sentence + f"{whose} the target."
    side = "below" if decision.direction == "min" else "above"
    return sentence + (
        f"{escape(decision.subject)}'s own {level} {interval} [{lo}, {hi}] lies {side} the "
        f"target {target:g}, but a miss must be shown at family-wise {level} confidence "
        "(Holm, every stimulus tested at once), and it is not yet; "
        + ("the others' intervals straddle the target." if count > 1 else "more trials decide it.")
    )


POINT_CAVEAT = "A point estimate has no error control: a rerun can flip it."


def _point_sentence(decision: GateDecision, escape: Escape) -> str:
    """'Fail: the suite's pass^3 is 0.400, below the target 0.8. A point estimate ...'"""
    if decision.outcome == "inconclusive":  # flakiness on single trials: nothing to measure
        return (
            f"Inconclusive: flakiness needs at least 2 trials of a stimulus, and "
            f"{'the only stimulus' if len(decision.unmeasured) == 1 else 'every stimulus'} "
            "it covers has 1."
        )
    return _point_verdict(decision, escape) + _unmeasured_note(decision)


def _unmeasured_note(decision: GateDecision) -> str:
    count = len(decision.unmeasured)
    if not count:
        return ""
    return (
        f" ({stimuli_count(count)} with a single trial {'is' if count == 1 else 'are'} left "
        "out: one trial cannot show flakiness.)"
    )


def _point_verdict(decision: GateDecision, escape: Escape) -> str:
    spec = decision.spec
    metric = metric_label(spec.metric, decision.k, spec.estimator)
    value = value_text(decision)
    target = target_text(decision).split(" ", 1)[1]
    side = "below" if decision.direction == "min" else "above"
    if spec.scope == "suite":
        whose = "the suite's" if spec.suite is None else f"suite {escape(spec.suite)}'s"
        if spec.tag:
            whose += f" (stimuli tagged {escape(spec.tag)})"
        metric = metric.removeprefix("suite ")  # "the suite's score", not "suite's suite score"
        if decision.outcome == "pass":
            reached = "at least" if decision.direction == "min" else "at most"
            return (
                f"Pass: {whose} {metric} is {value}, {reached} the target {target}. "
                f"{POINT_CAVEAT}"
            )
        return f"Fail: {whose} {metric} is {value}, {side} the target {target}. {POINT_CAVEAT}"
    worst = escape(decision.subject)
    if decision.outcome == "pass":
        return (
            f"Pass: the {metric} of {_every_stimulus(spec, escape)} is within the target "
            f"({target_text(decision)}); the worst, {worst}, is at {value}. {POINT_CAVEAT}"
        )
    count = len(decision.failing)
    verb = "is" if count == 1 else "are"
    # One stimulus is its own worst: "a (worst a, at 0)" said its name twice.
    worst_part = f"at {value}" if count == 1 else f"worst {worst}, at {value}"
    return (
        f"Fail: {stimuli_count(count)} {verb} outside the target ({target_text(decision)}) "
        f"on {metric}: {some(decision.failing, escape)} ({worst_part}). {POINT_CAVEAT}"
    )


def _regression_sentence(decision: GateDecision, escape: Escape) -> str:
    spec = decision.spec
    comparison = decision.comparison
    assert comparison is not None and spec.detectable is not None
    level = pct(comparison.confidence)
    if spec.scope == "stimuli":
        how = "one-sided Fisher exact test per stimulus, Holm-adjusted"
        if decision.outcome == "fail":
            return (
                f"Fail: {plural(len(decision.failing), 'stimulus', 'stimuli')} worse in the "
                f"candidate at family-wise {level} confidence ({how}): "
                f"{some(decision.failing, escape, 10)}."
            )
        if decision.outcome == "pass":
            return (
                f"Pass: no stimulus is shown worse, and for every stimulus a drop of "
                f"{margin_points(spec.detectable)} points or more is ruled out at {level} "
                "confidence (the wider of Newcombe's and the Miettinen-Nurminen score bounds, "
                "held to an exact unconditional test)."
            )
        return (
            f"Inconclusive: no stimulus is shown worse ({how}), but for "
            f"{stimuli_count(len(decision.undecided))} a drop of more than "
            f"{margin_points(spec.detectable)} points (its detectable margin) cannot be ruled "
            "out yet."
        )
    test = comparison.test
    delta = points(test.delta) if test.delta is not None else "?"
    # Each bound is one-sided at the level (together a two-sided interval at 2·level − 1),
    # narrower than the comparison's two-sided interval beside it.
    bounds = (
        f"Δ = {delta} points, one-sided {level} bounds "
        f"[{points(test.lower)}, {points(test.upper)}]"
    )
    p = f"one-sided {format_p(decision.p_value)}" if decision.p_value is not None else ""
    d = margin_points(spec.target)
    detect = margin_points(spec.detectable)
    if spec.kind == "max_regression":
        if decision.outcome == "fail":
            return (
                f"Fail: the data show, at {level} confidence, that the candidate is worse than "
                f"the baseline by more than {d} points ({bounds}; {test.method}, {p})."
            )
        if decision.outcome == "pass":
            past = ""
            if test.delta is not None and test.delta < -spec.target:
                past = f", though the estimated drop ({-100 * test.delta:.1f} points) is beyond it"
            return (
                f"Pass: a drop of {detect} points or more is ruled out at {level} "
                f"confidence ({bounds}); the data do not show a drop beyond {d} "
                f"points{past}."
            )
        return (
            f"Inconclusive: the data neither show a drop beyond {d} points nor rule out one "
            f"beyond {detect} points ({bounds})."
        )
    if decision.outcome == "pass":
        return (
            f"Pass: the data show, at {level} confidence, that the candidate is better than "
            f"the baseline by more than {d} points ({bounds}; {test.method}, {p})."
        )
    if decision.outcome == "fail":
        return (
            f"Fail: an improvement of {detect} points or more is ruled out at {level} "
            f"confidence ({bounds}), and one beyond {d} points is not shown."
        )
    return (
        f"Inconclusive: the data neither show an improvement beyond {d} points nor rule out "
        f"one of {detect} points ({bounds})."
    )


def advice_sentence(decision: GateDecision) -> str | None:
    """What would decide an inconclusive gate, in one sentence; ``None`` when decided."""
    if decision.outcome != "inconclusive":
        return None
    if decision.value is None and decision.unmeasured:
        return "At least 2 trials of each stimulus are needed before flakiness can be measured."
    advice = decision.advice
    power = pct(advice.power)
    parts = []
    if advice.more_trials is not None:
        both = " on both runs" if decision.comparison is not None else ""
        parts.append(f"{plural(advice.more_trials, 'more trial')} per stimulus{both}")
    if advice.more_stimuli is not None and decision.comparison is not None:
        parts.append(f"{advice.more_stimuli} paired stimuli in all")
    # The advice is predictive (gate.metrics.decision): each simulated run draws the truth
    # from what the data allow, so its probability is an average over those truths, not a
    # promise at the point estimate.
    if not parts:
        if decision.comparison is not None:
            return (
                "Neither more trials nor more stimuli (within the search limits) would decide "
                f"it in {power} of runs simulated from what the data allow: Δ may sit on a "
                "margin; consider whether the margin is the one you mean."
            )
        return (
            f"More trials (within the search limit) would not decide it in {power} of runs "
            "simulated from what the data allow: the truth may lie too close to the target "
            "to tell."
        )
    return (
        f"{' or '.join(parts)} would decide it in about {power} of runs simulated from what "
        "the data allow (this gate's own rule)."
    )


# --------------------------------------------------------------------------- comparison


def paired_test_reason(test: PairedTest) -> str:
    """Which paired test was used, and why."""
    m = test.stimuli
    requested = " (requested)" if test.requested != "auto" else ""
    if test.method == "none":
        return "no shared stimuli: nothing to compare"
    if test.method == "paired t":
        why = (
            f"{m} shared stimuli (≥ {T_MIN_STIMULI}), enough for the t approximation"
            if m >= T_MIN_STIMULI
            else f"{m} shared stimuli, fewer than the {T_MIN_STIMULI} the automatic rule wants"
        )
        return (
            f"paired t with {test.df} degrees of freedom{requested}: {why}{skew_clause(test)}"
            f"{noise_floor_clause(test)}"
        )
    total = test.patterns or 0
    if test.method == "exact sign-flip permutation":
        count = f" = {total:,}" if m <= 40 else ""
        how = f"exact sign-flip permutation over 2^{m}{count} sign patterns{requested}"
    else:
        how = (
            f"Monte-Carlo sign-flip permutation over {total - 1:,} random sign patterns "
            f"(seed {test.seed}) plus the observed one{requested}"
        )
    if test.requested == "permutation":
        why = stimuli_count(m) + " shared"
    elif test.zero_spread and m >= 2 and (test.requested == "t" or m >= T_MIN_STIMULI):
        why = (
            f"all {m} differences are equal ({points(test.delta or 0.0)} points), so the "
            "standard error is 0 and the t statistic is undefined; the permutation test is "
            "well defined"
        )
    elif test.requested == "t" and m < 2:
        why = "a single shared stimulus has no standard error, so t is undefined"
    else:
        shared = plural(m, "shared stimulus", "shared stimuli")
        why = f"only {shared} (< {T_MIN_STIMULI}), too few to trust the t approximation"
        if test.method.startswith("Monte-Carlo"):
            why += f", and 2^{m} sign patterns are too many to enumerate"
    return f"{how}: {why}{noise_floor_clause(test)}"


def noise_floor_clause(test: PairedTest) -> str:
    """Which bounds the trials' binomial noise widened (:mod:`gate.metrics.trial_noise`);
    for the t test, only where every difference is −1, 0 or +1 (matched 0/1 outcomes)."""
    if not test.noise_floor:
        return ""
    which = "both bounds" if len(test.noise_floor) == 2 else f"the {test.noise_floor[0]} bound"
    if test.method == "paired t":
        return (
            f"; {which} widened to cover the trials' binomial noise (with Tango's score test "
            "for matched pass/fail outcomes, and its exact unconditional form up to "
            f"{MOST_STIMULI} stimuli), since differences of −1, 0 or +1 are too coarse for t"
        )
    return (
        f"; {which} widened to cover the binomial noise of each stimulus's trials, which "
        f"{plural(test.stimuli, 'difference', 'differences')} alone understate"
    )


def skew_clause(test: PairedTest) -> str:
    """Which bounds Hall's skewness correction widened (:mod:`gate.metrics.skew`)."""
    if not test.skew_widened:
        return ""
    which = (
        "both bounds" if len(test.skew_widened) == 2 else f"the {test.skew_widened[0]} bound"
    )
    return (
        f"; {which} widened by Hall's correction for the differences' skew, which plain t "
        "bounds understate"
    )


def _trials_text(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.1f} (mean)"


def power_sentence(comparison: Comparison) -> str:
    """What this comparison could detect (normal-approximation minimum detectable effect)."""
    power = comparison.power
    m = power.stimuli
    if m == 0:
        return "No shared stimuli: no power statement."
    fewest = min(power.trials_baseline, power.trials_candidate)
    shared = f"{m} shared {'stimulus' if m == 1 else 'stimuli'}"
    size = f"{shared} × {_trials_text(fewest)} {'trial' if fewest == 1 else 'trials'}"
    if power.trials_baseline != power.trials_candidate:
        size = (
            f"{shared} × {_trials_text(power.trials_baseline)} baseline / "
            f"{_trials_text(power.trials_candidate)} candidate trials"
        )
    level = pct(comparison.confidence)
    if power.blind:
        patterns = comparison.test.patterns or 1
        return (
            f"With {size}, no drop is detectable at {level} one-sided confidence: the "
            f"{comparison.test.method} test has only 2^{m} = {patterns} sign patterns, so its "
            f"smallest p-value is 1/{patterns} = {1.0 / patterns:.4g} > "
            f"α = {comparison.alpha:.4g}; "
            f"at least {min_sign_flip_stimuli(comparison.confidence)} shared stimuli are needed."
        )
    if power.mde is None:
        return f"With {size}, there is no variance to go on: no power statement."
    if power.variance is not None and power.variance <= 0.0:
        return (
            f"With {size}, no variation was observed between the runs, so the minimum "
            "detectable effect computes as 0; it is not informative."
        )
    how = "normal approximation"
    if power.approximate:
        how += (
            f"; optimistic for the {comparison.test.method} test used with only "
            f"{stimuli_count(m)}"
        )
    return (
        f"With {size}, a true drop of {points(power.mde, False)} points would be shown with "
        f"{pct(power.power)} probability at {level} one-sided confidence (minimum detectable "
        f"effect, {how})."
    )


def comparison_notes(
    comparison: Comparison, escape: Escape = _plain, *, stimulus_gated: bool = True
) -> list[str]:
    """Caveats of a comparison, in words. ``stimulus_gated``: a per-stimulus regression gate
    decides on it, so that Fisher's floor (no stimulus can be shown worse) matters to a
    verdict; without one it would be a warning about a gate nobody configured."""
    notes = []
    if comparison.added:
        added = stimuli_count(len(comparison.added))
        notes.append(f"{added} only in the candidate (added): not compared.")
    if comparison.removed:
        removed = stimuli_count(len(comparison.removed))
        notes.append(f"{removed} only in the baseline (removed): not compared.")
    if comparison.excluded:
        shown = "; ".join(
            f"{escape(x.id)} ({x.describe(comparison.k)})" for x in comparison.excluded[:5]
        )
        more = and_more(len(comparison.excluded), 5)
        notes.append(
            f"{stimuli_count(len(comparison.excluded))} in both runs left out of the paired test: "
            f"{shown}{more}."
        )
    if comparison.power.blind:
        patterns = comparison.test.patterns or 1
        notes.append(
            f"With {plural(comparison.test.stimuli, 'shared stimulus', 'shared stimuli')} the "
            "smallest attainable p-value is "
            f"1/{patterns} = {1.0 / patterns:.4g} > α = {comparison.alpha:.4g}: no suite "
            "gate can show a difference; add stimuli."
        )
    if comparison.rows and comparison.ragged:
        # Measured (seeded, docs/regression.md "Known limits"): 3 trials against 10 per
        # stimulus at rates near 0.95 gave 6.4% false alarms at 30 stimuli, 5.1% at 50
        # (nominal 5%), with Hall's skewness correction; plain t gave 8.7% and 7.3%.
        notes.append(
            "Trial counts differ between the runs for some stimuli: the differences are then "
            "skewed, and the test's error rates can exceed their level (6.4% where 5% is "
            "stated, measured at 30 stimuli with 3 trials against 10 near a pass rate of "
            "95%). Run both sides with the same trials per stimulus."
        )
    floor = comparison.fisher_floor
    if (
        stimulus_gated
        and comparison.rows
        and floor is not None
        and floor > comparison.alpha / len(comparison.rows)
    ):
        notes.append(
            f"No single stimulus can be shown worse at family-wise {pct(comparison.confidence)} "
            f"confidence: the smallest attainable Fisher p-value ({floor:.3g}) exceeds α/M = "
            f"{comparison.alpha / len(comparison.rows):.3g} (Holm's first step). Run more "
            "trials per stimulus."
        )
    return notes


def comparison_metric(comparison: Comparison) -> str:
    """'pass rate', 'pass^3' or 'score': what a comparison compares."""
    names = {"pass_rate": "pass rate", "pass_hat_k": f"pass^{comparison.k}", "score": "score"}
    return names[comparison.metric]


def delta_mark(delta: float) -> str:
    """A change in points: '▼ 33.3', '▲ 5.0', '=' (under 0.05 points).

    >>> delta_mark(-1 / 3), delta_mark(0.05), delta_mark(0.0001)
    ('▼ 33.3', '▲ 5.0', '=')
    """
    value = delta * 100
    if abs(value) < 0.05:
        return "="
    return f"{'▲' if value > 0 else '▼'} {abs(value):.1f}"


CHANGED_HEADER = ["Stimulus", "Baseline", "Candidate", "Δ points", "Change", "p (Holm)"]


def change_text(row: StimulusRow) -> str:
    return row.status + (" (regressed)" if row.regressed else "")


def comparison_heading(comparison: Comparison, escape: Escape = _plain) -> str:
    among = f", stimuli tagged {escape(comparison.tag)}" if comparison.tag else ""
    if comparison.suite is not None:
        among += f", suite {escape(comparison.suite)}"
    return f"Compared with the baseline ({comparison_metric(comparison)}{among})"


def delta_sentence(comparison: Comparison, bold: Callable[[str], str] = _plain) -> str:
    """Δ with its two-sided interval and the test behind it."""
    test = comparison.test
    if test.delta is None:
        return "No stimulus is in both runs: nothing to compare."
    lo, hi = test.interval
    metric = comparison_metric(comparison)
    level = pct(comparison.confidence)
    whole = ""
    if test.patterns is not None and (lo, hi) == tuple(comparison.limits):
        # Beside a regression gate's one-sided bounds (each side at the level) the whole
        # range read as a contradiction; it is what an exact test of so few stimuli allows.
        whole = (
            f" (the whole range: with {plural(test.stimuli, 'stimulus', 'stimuli')} no "
            f"difference can be excluded two-sided at {level}; one-sided bounds are narrower)"
        )
    return (
        f"{bold(f'Δ {metric} = {points(test.delta)} points')} (candidate − baseline, mean "
        f"over {plural(test.stimuli, 'shared stimulus', 'shared stimuli')}), two-sided "
        f"{level} interval [{points(lo)}, {points(hi)}]{whole}; test: "
        f"{paired_test_reason(test)}."
    )


def comparison_bullets(comparison: Comparison, escape: Escape = _plain) -> list[str]:
    """The evidence of a drop, the power, and what was not compared."""
    test = comparison.test
    bullets = [
        f"Evidence of a drop: one-sided {p_value_meaning(test.p_worse)}.",
        f"Power: {power_sentence(comparison)}",
    ]
    not_compared = [
        (len(comparison.added), "new", comparison.added),
        (len(comparison.removed), "removed", comparison.removed),
        (len(comparison.excluded), "left out", tuple(x.id for x in comparison.excluded)),
    ]
    total = sum(count for count, _, _ in not_compared)
    if total:
        counts = ", ".join(f"{count} {what}" for count, what, _ in not_compared if count)
        text = f"Not compared: {counts} ({stimuli_count(total)})"
        for count, what, ids in not_compared[:2]:
            if count:
                text += f"; {what}: " + ", ".join(escape(x[:60]) for x in ids[:5])
        bullets.append(text + ".")
    return bullets


def level_warnings(outcome: CheckOutcome) -> list[str]:
    """Mid-p's coverage floor (MID_P_FLOOR_WEIGHTS) is tuned at 95%; at other levels its
    exact coverage falls well below the level at some rates (seeded and exact checks: 83%
    at 90%, 64% at 80%), which an interval labelled "90%" must not hide."""
    if outcome.config.interval != "mid-p":
        return []
    levels = {outcome.config.confidence}
    levels |= {g.confidence for g in outcome.gates if g.basis == "interval" and g.confidence}
    others = sorted(level for level in levels if abs(level - 0.95) > 1e-12)
    if not others:
        return []
    shown = ", ".join(pct(level) for level in others)
    return [
        f"Mid-p intervals are calibrated at 95% (a coverage floor per trial count); at {shown} "
        "their exact coverage falls below the level at some pass rates, by several points. "
        "For a guaranteed level there, use interval: clopper-pearson."
    ]


def comparison_warnings(outcome: CheckOutcome, escape: Escape = _plain) -> list[str]:
    """The caveats of every comparison of a check that bear on its verdict."""
    gated = {
        id(g.comparison)
        for g in outcome.gates
        if g.kind in ("max_regression", "min_improvement") and g.spec.scope == "stimuli"
    }
    found = []
    for comparison in outcome.comparisons:
        found += comparison_notes(comparison, escape, stimulus_gated=id(comparison) in gated)
    few = min(
        (
            g.comparison.test.stimuli
            for g in outcome.gates
            if g.kind == "max_regression"
            and g.spec.scope == "suite"
            and g.outcome == "pass"
            and g.comparison is not None
            and g.comparison.test.stimuli < FEW_STIMULI_FOR_A_PASS
        ),
        default=None,
    )
    if few is not None:
        # Measured (docs/regression.md "Known limits"): with a true drop of exactly D and
        # rates near 1, 16-30 stimuli still passed 5.2-7.2% of the time at a nominal 5%
        # (6.5-61% before the trials' noise widened the sign flip's bounds, up to 8.6% before
        # Hall's correction of the t test); the 7.2% is one trial a side.
        found.append(
            f"A regression gate passed on {plural(few, 'shared stimulus', 'shared stimuli')}: "
            f"below {FEW_STIMULI_FOR_A_PASS}, and with pass rates near 100%, such a pass is "
            "somewhat weaker than its level (measured up to 7% where 5% is stated: outcomes "
            "near 100% are far from normal). Add stimuli before trusting it."
        )
    return found


#: below this many shared stimuli a regression gate's pass is flagged (see comparison_warnings)
FEW_STIMULI_FOR_A_PASS = 50


def warnings(
    outcome: CheckOutcome, escape_warning: Escape = _plain, escape: Escape = _plain
) -> list[str]:
    """Every warning of a check: about the input, the comparisons and unscored stimuli."""
    found = [escape_warning(w) for w in outcome.warnings]
    found += level_warnings(outcome) + comparison_warnings(outcome, escape)
    suite = outcome.suite
    if suite.not_scored:
        found.append(
            f"{stimuli_count(len(suite.not_scored))} with no counted trial, not scored: "
            + some(_left_out(suite, escape))
        )
    return found


#: warnings each view shows (under the gates: a likely misreading bears on every verdict);
#: the JSON report lists them all
SHOWN_WARNINGS = 10


def shown_warnings(found: Sequence[str]) -> list[str]:
    """The first :data:`SHOWN_WARNINGS` of ``found``, then one line counting the rest."""
    shown = list(found[:SHOWN_WARNINGS])
    if len(found) > SHOWN_WARNINGS:
        more = len(found) - SHOWN_WARNINGS
        shown.append(f"… and {plural(more, 'more warning')} (the JSON report lists every one)")
    return shown


def _left_out(suite: SuiteScore, escape: Escape) -> list[str]:
    """Each unscored stimulus (escaped) with what became of its trials: ``a (3 skipped)``."""
    shown = []
    for index, name in enumerate(suite.not_scored):
        skipped, errors = suite.left_out[index][2:] if index < len(suite.left_out) else (0, 0)
        parts = [f"{skipped} skipped"] if skipped else []
        parts += [f"{errors} errored, excluded"] if errors else []
        shown.append(escape(name) + (f" ({', '.join(parts)})" if parts else ""))
    return shown


def p_value_meaning(p: float, what: str = "worse") -> str:
    """A one-sided p-value in words that cannot be read as 'the chance it is worse'."""
    return (
        f"{format_p(p)}: if the candidate were truly no {what} than the baseline, data at "
        f"least this far in that direction would turn up {share_of_runs(p)} of the time; it "
        f"is not the probability that the candidate is {what}"
    )


def share_of_runs(p: float) -> str:
    """A probability as a share of runs, never rounded to an impossible 0% or 100%.

    >>> share_of_runs(0.25), share_of_runs(1.3e-11), share_of_runs(0.996), share_of_runs(1.0)
    ('25%', 'less than 1%', 'more than 99%', '100%')
    """
    if p < 0.01:
        return "less than 1%"
    if 0.99 < p < 1.0:
        return "more than 99%"
    return f"{p:.0%}"


# --------------------------------------------------------------------------- the run


READING_ADVICE = {
    "capable and consistent": "safe to automate for this task class",
    "capable but flaky": "can solve it but not reliably: human review, not automation",
    "capability gap": "cannot reliably solve it: a capability gap, not a consistency one",
    NOT_MEASURED: "every trial errored: the harness broke, so nothing about the agent was "
    "measured",
}

DEFAULT_GATE_NOTE = (
    "No gate is configured, so the default gate applies (Vally's scoring guide for a CI gate: "
    "pass rate ≥ 0.7, decided on its interval). Configure gates in .eval-gate.yml."
)


def reading_sentence(suite: SuiteScore, bold: Callable[[str], str] = _plain) -> str:
    """Reference 002's capability/consistency reading of the suite, and its stimuli's."""
    k = suite.k
    counts = Counter(readings(suite.stimuli))  # a column at a time: 100,000 stimuli in 0.1 s
    parts = ", ".join(f"{n:,} {label}" for label, n in sorted(counts.items(), key=lambda x: -x[1]))
    return (
        f"{bold('Capability vs consistency:')} pass@{k} = {percent(suite.pass_at_k)} "
        f"(capability), pass^{k} = {percent(suite.pass_hat_k)} (consistency) → "
        f"{bold(suite.reading)}: {READING_ADVICE[suite.reading]}. Per stimulus: {parts}. "
        f"(Capable: pass@{k} ≥ {HIGH:.0%}; consistent: pass^{k} ≥ {HIGH:.0%}; point estimates, "
        "a reading, not a verdict: the gates decide on the data.)"
    )


METHODS_TITLE = "How these numbers are computed"


def methods_notes(suite: SuiteScore) -> list[str]:
    """What the intervals, estimators and counts are, one paragraph each (no user data)."""
    method = suite.interval_method
    stimulus_method = stimulus_interval_text(method, suite.count_arrays()["trials"].tolist())
    level = pct(suite.confidence)
    rate_n = suite.pass_rate_interval.method.rsplit("= ", 1)[-1]
    k_n = suite.pass_hat_k_interval.method.rsplit("= ", 1)[-1]
    errors = (
        "Errored trials count as failures"
        if suite.errors_policy == "fail"
        else "Errored trials are left out of n"
    )
    return [
        f"All intervals are {level} intervals. Each stimulus's pass-rate interval: "
        f"{stimulus_method}; its ends are mapped through 1-(1-p)^k for pass@k and p^k for "
        "pass^k. These are intervals for "
        "the underlying rates, so they need not contain the unbiased estimates beside them "
        "(pass^k is 0 whenever c < k), and a gate on a stimulus's lower bound also needs the "
        "estimate to reach the target.",
        f"Suite intervals are {method} at the suite estimate over n_eff = M·min(nᵢ)/k trials "
        f"(pass rate: {rate_n}; pass@k and pass^k: {k_n}): a mean of M unbiased estimates in "
        "[0, 1] varies no more than one rate over n_eff trials. They say how these stimuli "
        "would score if re-run (trial noise), not how a new sample of stimuli would.",
        f"Estimators: pass@k {PASS_AT_K_ESTIMATOR}; pass^k {PASS_HAT_K_ESTIMATOR}. Suite "
        "values are means of per-stimulus values.",
        _bayes_note(suite),
        f"{errors}; skipped trials never count.",
    ]


def _bayes_note(suite: SuiteScore) -> str:
    """Bayes@N's estimator and interval, which the suite-interval note does not cover."""
    bayes = suite.bayes()
    text = (
        "Bayes@N (Hariri et al. 2026, as scorio computes it): each stimulus's posterior mean "
        "pass rate under a uniform prior, (c + 1)/(n + 2), averaged over the stimuli; it "
        "pulls every rate toward 50%, so it is below the pass rate of a good agent until "
        "trials are many"
    )
    if bayes.interval is None:
        return text + "."
    return (
        f"{text}. Its interval ({bayes.interval.method}) is for that score's own expectation "
        "at these trial counts, not for the pass rate."
    )


def first_error_message(stimulus: StimulusScore) -> str:
    """The first kept message of an errored trial (or of unknown outcome: a counts row), for
    the errored-trials tables; "" when none was kept."""
    first = next((m for m in stimulus.messages if m.outcome in ("errored", None)), None)
    return first.text if first else ""


def flaky_sentence(
    stimulus: StimulusScore, escape: Escape = _plain, label: str | None = None
) -> str:
    """'Refactor auth: 2/3 trials passed; 33.3% minority outcomes (unreliable)'; ``label``
    names the stimulus instead of its bare name (``suite/name`` among several suites)."""
    return (
        f"{escape(label or stimulus.name)}: {stimulus.passes}/{stimulus.trials} trials passed; "
        f"{percent(stimulus.flakiness)} minority outcomes ({stimulus.flakiness_band})"
    )


def suites_shown_note(shown: int, total: int, summary_full: bool = False) -> str:
    """Which suites have a section when not all do (see ``markdown.shown_suites``);
    ``summary_full``: more would take the job summary past GitHub's 1 MiB.

    >>> print(suites_shown_note(20, 1000))
    The 20 suites with the lowest pass rate of 1,000, lowest first; the JSON report has
    every suite.
    >>> print(suites_shown_note(3, 20, summary_full=True))
    The 3 suites with the lowest pass rate of 20, lowest first (another section would take
    this summary past GitHub's 1 MiB limit); the JSON report has every suite.
    """
    full = " (another section would take this summary past GitHub's 1 MiB limit)"
    reason = full if summary_full else ""
    if shown == 0:
        return f"No suite has a section{reason}; the JSON report has every suite."
    which = "The suite" if shown == 1 else f"The {shown} suites"
    order = "" if shown == 1 else ", lowest first"
    return (
        f"{which} with the lowest pass rate of {total:,}{order}{reason}; "
        "the JSON report has every suite."
    )


def more_stimuli_note(omitted: int) -> str:
    more = plural(omitted, "more stimulus", "more stimuli")
    return f"… and {more}, not shown here: the JSON report lists all."


def more_failing_messages_note(unread: int) -> str:
    more = plural(unread, "more stimulus", "more stimuli")
    return (
        f"… and {more} that did not always pass, not shown here: the JSON report has every "
        "message."
    )


def stimulus_chart_caption(shown: int, total: int, confidence: float) -> str:
    which = (
        f"all {total:,} stimuli" if shown == total else f"the {shown} worst of {total:,} stimuli"
    )
    return (
        f"Pass rate of {which}, worst first: the bars are the estimates, the two lines join "
        f"the ends of their {pct(confidence)} intervals."
    )


def comparison_chart_caption(shown: int, metric: str) -> str:
    return (
        f"Candidate (bars) against baseline (line): {metric} of the "
        f"{plural(shown, 'stimulus', 'stimuli')} that changed most."
    )


def facts_line(
    suite: SuiteScore,
    escape: Escape = _plain,
    *,
    suites: int = 1,
    bold: Callable[[str], str] = _plain,
) -> str:
    """'**code-agent** · 5 stimuli · 15 trials (1 errored) · 0 skipped · k = 3 · 2 flaky
    stimuli'; for all of several suites, '**2 suites** (a, b) · ...'."""
    name = bold(escape(suite.name))
    if suites > 1:
        name = f"{bold(plural(suites, 'suite'))} ({some(suite.suite_names, escape, limit=10)})"
    return (
        f"{name} · {stimuli_count(len(suite.stimuli))} · "
        f"{counted_trials(suite.trials, suite.errors, suite.errors_policy)} · "
        f"{suite.skipped:,} skipped · k = {suite.k} · "
        f"{plural(suite.flaky_stimuli, 'flaky stimulus', 'flaky stimuli')}"
    )


def counted_trials(trials: int, errors: int, policy: str, *, short: bool = False) -> str:
    """The counted trials and the errored ones, placed by the errors policy: '15 trials (1
    errored)' when errors count as failures (they are among the 15), '14 trials · 1 errored,
    left out' when they are excluded (they are not). ``short``: a table cell, '3 (1 errored)'
    and '2 (+1 errored, left out)'. Skipped trials never count and are told apart."""
    counted = f"{trials:,}" if short else plural(trials, "trial")
    if policy == "fail":
        return counted + (f" ({errors:,} errored)" if errors or not short else "")
    if not errors:
        return counted
    return f"{counted} (+{errors:,} errored, left out)" if short else (
        f"{counted} · {errors:,} errored, left out"
    )



def money(value: float) -> str:
    """US dollars with as many digits as a cost needs: $1,234, $12.35, $0.0123; never in
    scientific notation (a change of $5.33e-05 per trial read as code, not money).

    >>> money(1234.5), money(12.345), money(0.01234), money(0.0000533), money(0.0)
    ('$1,234', '$12.35', '$0.0123', '$0.0000533', '$0')
    """
    if value >= 100:
        return f"${value:,.0f}"
    if value >= 1:
        return f"${value:,.2f}"
    if value <= 0:
        return "$0"
    if value >= 0.001:
        return f"${value:#.3g}"
    decimals = min(12, 2 - math.floor(math.log10(value)))  # three significant digits
    return f"${value:.{decimals}f}"


def seconds(value: float) -> str:
    """A duration in seconds: 0.42 s, 57.0 s, 1,234 s."""
    if value >= 1000:
        return f"{value:,.0f} s"
    return f"{value:.3g} s" if value < 10 else f"{value:.1f} s"


def _not_reported(missing: int) -> str:
    return f" ({plural(missing, 'trial')} without)" if missing else ""


def usage_line(usage: UsageSummary, bold: Callable[[str], str] = _plain) -> str:
    """'**Usage**: cost $1.23 total, $0.0123 per trial (95% interval $0.0101 to $0.015),
    $0.02 per pass · duration mean 30.0 s, p50 30.0 s, p95 57.0 s · tokens ...'."""
    parts = []
    cost, duration, tokens = usage
    if cost is not None:
        text = f"cost {money(cost.total)} total, {money(cost.mean_per_trial)} per trial"
        interval = cost.mean_per_trial_interval
        if interval is not None:
            text += (
                f" ({pct(interval.confidence)} interval {money(interval.lo)} to "
                f"{money(interval.hi)}, over stimuli like these)"
            )
        per_pass = "no pass" if cost.per_pass is None else money(cost.per_pass)
        parts.append(f"{text}, {per_pass} per pass{_not_reported(cost.missing)}")
    if duration is not None:
        parts.append(
            f"duration mean {seconds(duration.mean)}, p50 {seconds(duration.p50)}, "
            f"p95 {seconds(duration.p95)}{_not_reported(duration.missing)}"
        )
    if tokens is not None:
        parts.append(
            f"tokens {tokens.total:,.0f} total, {tokens.mean_per_trial:,.0f} per trial"
            f"{_not_reported(tokens.missing)}"
        )
    return f"{bold('Usage')}: " + " · ".join(parts)


def usage_methods_note(usage: UsageSummary | None, change: UsageComparison | None) -> str | None:
    """How the usage line's numbers are computed (the JSON names each method too)."""
    from gate.metrics.usage import MEAN_METHOD, P95_CHANGE_METHOD, QUANTILE_METHOD

    if usage is None:
        return None
    text = (
        f"Usage: cost per trial is the mean over trials, its interval a {MEAN_METHOD} (whole "
        "stimuli resampled: it speaks for stimuli like these); duration p50 and p95 are "
        f"quantiles over trials, {QUANTILE_METHOD}."
    )
    if change is not None:
        text += (
            " Against the baseline, paired by stimulus, the intervals are a "
            f"{MEAN_METHOD} (the change in cost per trial) and a {P95_CHANGE_METHOD} (the "
            "change in p95 duration)."
        )
    return text


def _signed(value: float, unit: Callable[[float], str]) -> str:
    return ("+" if value >= 0 else "−") + unit(abs(value))


def _change_text(name: str, change: UsageChange, unit: Callable[[float], str]) -> str:
    text = (
        f"{name} {_signed(change.estimate, unit)} ({unit(change.baseline)} → "
        f"{unit(change.current)}"
    )
    if change.lo is not None and change.hi is not None:
        text += (
            f"; {pct(change.confidence)} interval {_signed(change.lo, unit)} to "
            f"{_signed(change.hi, unit)}"
        )
    else:
        text += "; too few shared stimuli for an interval"
    return text + f", {stimuli_count(change.stimuli)})"


def usage_change_line(change: UsageComparison, bold: Callable[[str], str] = _plain) -> str:
    """'**Usage against the baseline** (paired by stimulus): cost per trial +$0.001 ($0.011 →
    $0.012; 95% interval ...) · p95 duration ...'."""
    parts = []
    if change.cost_per_trial is not None:
        parts.append(_change_text("cost per trial", change.cost_per_trial, money))
    if change.duration_p95 is not None:
        parts.append(_change_text("p95 duration", change.duration_p95, seconds))
    return f"{bold('Usage against the baseline')} (paired by stimulus): " + " · ".join(parts)


VERDICT_MARK = {"pass": "✅", "fail": "❌", "inconclusive": "❔"}


SEQUENTIAL_NOTE = (
    "Sequential: the gates' bounds are confidence sequences, valid however often this check "
    "is re-run as trials arrive, so a job may stop at the first pass or fail (the suite "
    "table's intervals hold for one look only)."
)


def verdict_line(outcome: CheckOutcome) -> str:
    """The summary's first line: the verdict and the gate count behind it."""
    verdict = outcome.verdict
    total = len(outcome.gates)
    head = f"{VERDICT_MARK[verdict]} eval-gate: {verdict.upper()}"
    if total == 0:
        return f"{head} — no gate was evaluated"
    if verdict == "pass":
        return f"{head} — {'the gate' if total == 1 else f'all {total} gates'} passed"
    if verdict == "fail":
        if total == 1:
            return f"{head} — the gate failed"
        return f"{head} — {len(outcome.failed_gates)} of {total} gates failed"
    undecided = len(outcome.inconclusive_gates)
    which = "the gate is" if total == 1 else f"{undecided} of {total} gates"
    return f"{head} — {which} undecided: the data cannot decide yet"


def gate_tally(outcome: CheckOutcome) -> str:
    """'FAIL (1 failed, 0 inconclusive, of 1 gate)': the verdict and its gate counts."""
    return (
        f"{outcome.verdict.upper()} ({len(outcome.failed_gates)} failed, "
        f"{len(outcome.inconclusive_gates)} inconclusive, of {plural(len(outcome.gates), 'gate')})"
    )


def exit_line(outcome: CheckOutcome) -> str:
    """The one line ``check`` writes to stderr last: verdict, counts and exit code."""
    return f"eval-gate: {gate_tally(outcome)}; exit code {outcome.exit_code}"


def policy_sentence(outcome: CheckOutcome) -> str | None:
    """What the exit code says when the ``on_inconclusive`` policy changed it."""
    if outcome.verdict != "inconclusive":
        return None
    policy = outcome.config.on_inconclusive
    if policy == "inconclusive":
        return (
            f"Exit code {outcome.exit_code} (inconclusive); the on_inconclusive setting can "
            "count it as a pass or a fail instead."
        )
    return (
        f"Exit code {outcome.exit_code}: inconclusive, counted as a {policy} by the "
        f"on_inconclusive: {policy} setting."
    )


def fail_on_sentence(verdict_code: int, step_code: int, fail_on: str) -> str:
    """Why the action's step ends with another code than the verdict's (its fail_on input):
    without it, a green step under a red summary reads as a bug."""
    meaning = {
        "never": "reports without failing the step",
        "errors": "fails the step only on bad input",
    }.get(fail_on, "")
    return (
        f"The step's exit code is {step_code}, not {verdict_code}: fail_on: {fail_on} "
        f"{meaning}."
    )


# --------------------------------------------------------------------------- trial messages

#: the heading of the collapsed section that says why trials failed
MESSAGES_SUMMARY = "Why trials failed (the first messages of {count})"


def message_place(message: TrialMessage) -> str | None:
    """Where the trial was read: ``results.xml:12``, ``log.json at /samples/3``; None unknown."""
    return str(message.where) if message.where else None


def message_sentence(message: TrialMessage, escape: Escape = _plain) -> str:
    """One kept message in words: 'trial 3 failed (results.xml:12): expected 42, got 7'.

    >>> from gate.errors import Provenance
    >>> from gate.trials import TrialMessage
    >>> message_sentence(TrialMessage("boom", "errored", 3, Provenance("r.xml", 12)))
    'trial 3 errored (r.xml:12): boom'
    >>> message_sentence(TrialMessage("timed out"))
    'a trial: timed out'
    """
    who = f"trial {message.trial}" if message.trial is not None else "a trial"
    what = f" {message.outcome}" if message.outcome else ""
    place = message_place(message)
    where = f" ({escape(place)})" if place else ""
    return f"{who}{what}{where}: {escape(message.text)}"


def stimulus_messages_label(name: str, passes: int, trials: int, escape: Escape = _plain) -> str:
    """'geo-1 (1/5 passed)'."""
    return f"{escape(name)} ({passes}/{trials} passed)"


def failing_stimulus_title(name: str) -> str:
    return f"eval-gate: failing stimulus {name}"


def failing_stimulus_message(
    name: str, passes: int, trials: int, first: TrialMessage | None
) -> str:
    """'geo-1: 0/5 trials passed; first: trial 0 failed (r.xml:12): expected 42'."""
    text = f"{name}: {passes}/{trials} trials passed"
    return text + (f"; first: {message_sentence(first)}" if first else "")
