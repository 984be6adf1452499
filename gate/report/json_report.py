"""The machine-readable report (schemas/report.schema.json).

:func:`write_report` streams it to a file: the stimuli (100,000 of them make a report of
about 130 MB) are turned into JSON text a thousand at a time, a column at a time, so the
whole report is never in memory at once; its text is what :func:`dumps` writes of that
data (:func:`build_report` reads it back).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Generator, Iterator, Mapping, Sequence
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from gate import __version__
from gate.compare import Comparison, StimulusRow
from gate.fileio import atomic_write, atomic_write_parts
from gate.gates import GateDecision, more_trials_by_stimulus
from gate.gcpause import no_cycle_collection
from gate.metrics import Interval
from gate.metrics.reliability import ReliabilityRow
from gate.metrics.usage import UsageChange, UsageInterval, UsageSummary
from gate.report import wording
from gate.scoring import (
    PASS_AT_K_ESTIMATOR,
    PASS_HAT_K_ESTIMATOR,
    StimulusScore,
    SuiteScore,
    message_records_of,
    outcomes_of,
    readings,
    reliability_of,
    score_arrays,
    scored_of,
    stimulus_records,
)

if TYPE_CHECKING:
    from gate.metrics.evaluate import MetricInterval
    from gate.pipeline import CheckOutcome


def _number(value: float) -> float:
    return round(float(value), 10)


def _bound(value: float) -> float | None:
    """A bound the data cannot set (±inf for unbounded scores) is null in JSON."""
    return _number(value) if math.isfinite(value) else None


#: What each interval is for. A stimulus's pass@k / pass^k interval is its pass-rate
#: interval mapped through 1-(1-p)^k / p^k: an interval for the latent value, which need
#: not contain the unbiased estimate beside it (pass^k is 0 whenever c < k).
ESTIMANDS = {
    ("stimulus", "pass_rate"): "p (the stimulus's per-trial pass probability)",
    ("stimulus", "pass_at_k"): "latent 1-(1-p)^k; need not contain the unbiased pass_at_k",
    ("stimulus", "pass_hat_k"): "latent p^k; need not contain the unbiased pass_hat_k",
    ("suite", "pass_rate"): "mean over stimuli of p_i",
    ("suite", "pass_at_k"): "mean over stimuli of 1-(1-p_i)^k",
    ("suite", "pass_hat_k"): "mean over stimuli of p_i^k",
}


def _interval(interval: Interval, level: str, metric: str) -> dict[str, Any]:
    return {
        "lo": _number(float(interval.lo)),
        "hi": _number(float(interval.hi)),
        "method": interval.method,
        "confidence": interval.confidence,
        "estimand": ESTIMANDS[(level, metric)],
    }


def _optional(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else _number(value)


def _gate(gate: GateDecision, comparisons: list[Comparison]) -> dict[str, Any]:
    spec = gate.spec
    sentence = wording.gate_sentence(gate)
    return {
        "name": wording.gate_name(gate),
        "kind": gate.kind,
        "metric": spec.metric,
        "metric_params": dict(spec.resolved.params) if spec.resolved is not None else None,
        "k": gate.k,
        "decision": gate.outcome,
        "passed": gate.passed,
        "basis": gate.basis,
        "value": _optional(gate.value),
        "lower": _optional(gate.lower),
        "upper": _optional(gate.upper),
        "target": spec.target,
        "comparison": ">=" if gate.direction == "min" else "<=",
        "scope": gate.scope,
        "tag": gate.tag,
        "suite": gate.suite,
        "bound": spec.bound,
        "confidence": gate.confidence,
        "method": gate.method,
        "sequential": gate.sequential,
        "default": spec.default,
        "detectable": spec.detectable,
        "p_value": _optional(gate.p_value),
        "baseline_comparison": (
            comparisons.index(gate.comparison) if gate.comparison is not None else None
        ),
        "subject": gate.subject,
        "failing": list(gate.failing),
        "undecided": list(gate.undecided),
        "more_trials": gate.advice.more_trials,
        "more_stimuli": gate.advice.more_stimuli,
        "advice": wording.advice_sentence(gate),
        "sentence": sentence,
        "explanation": sentence,
    }


def build_report(outcome: CheckOutcome) -> dict[str, Any]:
    """The report as plain JSON data; stimuli in input order: what :func:`write_report`
    writes, read back."""
    return json.loads("".join(report_parts(outcome)))  # type: ignore[no-any-return]


def _stimuli_texts(outcome: CheckOutcome) -> Iterator[str]:
    """The stimuli's report entries as the report's text, :data:`STIMULI_PER_PART` at a
    time (each part: entries indented as in the ``stimuli`` list, separated by ``,\n``)."""
    more = more_trials_by_stimulus(outcome.gates, outcome.suite)
    stimuli = outcome.suite.stimuli
    for start in range(0, len(stimuli), STIMULI_PER_PART):
        chunk = stimuli[start : start + STIMULI_PER_PART]
        outcomes = outcomes_of(chunk)
        yield _stimuli_text(chunk, more, reliability_of(chunk, outcomes), outcomes)


#: each stimulus entry's keys, in the report's order; ``*_interval``: an interval object
_STIMULUS_KEYS = (
    "suite", "name", "tags", "trials", "passes", "errors", "skipped", "outcomes", "pass_rate",
    "pass_rate_interval", "pass_at_k", "pass_at_k_interval", "pass_hat_k", "pass_hat_k_plugin",
    "pass_hat_k_interval", "score", "unscored", "flaky", "flakiness", "flakiness_percent",
    "flakiness_band", "reading", "more_trials", "reliability", "messages",
)  # fmt: skip
#: where a stimulus's keys start (an entry of the stimuli list: 4 spaces, its keys 6)
_KEY = "\n      "
#: where the keys of an object under a stimulus's key start
_INNER = "\n        "


def _stimuli_text(
    chunk: Sequence[StimulusScore],
    more: Mapping[tuple[str, str], int],
    reliabilities: Sequence[ReliabilityRow | None],
    outcomes: Sequence[str],
) -> str:
    """The entries of ``chunk`` as :func:`_indented` writes them in the report, made a
    column at a time: each column's values turned into JSON text at once (numbers by one
    orjson call, read and rounded as :func:`_number` would, 10 decimals), then joined with
    the text between them. A dict per stimulus, dumped and freed, took 1.8 s of CPU for
    100,000 stimuli (a 133 MB report) where this takes 1.4 s."""
    if not chunk:
        return ""
    arrays = score_arrays(chunk)
    numbers = {
        name: _number_texts((np.round(a, 10) if a.dtype.kind == "f" else a).tolist())
        for name, a in arrays.items()
    }
    records = stimulus_records(chunk)
    passes, trials = arrays["passes"].tolist(), arrays["trials"].tolist()
    columns = {
        **numbers,
        "suite": _string_texts([r.suite for r in records]),
        "name": [_string_text(r.stimulus) for r in records],
        "tags": [_value_text(sorted(r.tags)) if r.tags else "[]" for r in records],
        "outcomes": _string_texts(outcomes),
        "score": numbers["aggregate_score"],
        "unscored": ["false" if x else "true" for x in scored_of(chunk)],
        "flaky": ["true" if 0 < c < n else "false" for c, n in zip(passes, trials, strict=True)],
        "flakiness_band": _string_texts([s.flakiness_band for s in chunk]),
        "reading": _string_texts(readings(chunk, arrays)),
        "more_trials": [_integer_text(more.get((r.suite, r.stimulus))) for r in records],
        "reliability": [
            "null" if r is None else _value_text(_reliability(*r)) for r in reliabilities
        ],
        "messages": [_value_text(m) if m else "[]" for m in message_records_of(chunk)],
    }
    methods = _interval_methods(chunk)
    pieces: list[str | list[str]] = []  # the text between values, and the values' columns
    between = "    {"
    for key in _STIMULUS_KEYS:
        if key.endswith("_interval"):
            metric = key.removesuffix("_interval")
            method, confidence = methods[metric]
            pieces += [between + _KEY + f'"{key}": {{' + _INNER + '"lo": ', columns[metric + "_lo"]]
            pieces += ["," + _INNER + '"hi": ', columns[metric + "_hi"]]
            between = (
                f',{_INNER}"method": {_string_text(method)},{_INNER}"confidence": '
                f'{_value_text(confidence)},{_INNER}"estimand": '
                f"{_string_text(ESTIMANDS[('stimulus', metric)])}{_KEY}}},"
            )
        else:
            pieces += [between + _KEY + f'"{key}": ', columns[key]]
            between = ","
    ends = [",\n"] * len(chunk)
    ends[-1] = ""
    texts = [repeat(p, len(chunk)) if isinstance(p, str) else p for p in pieces]
    return "".join(chain.from_iterable(zip(*texts, repeat("\n    }"), ends)))


def _number_texts(values: list[Any]) -> list[str]:
    """Each of ``values`` (numbers within 64 bits, None) as JSON text, written by one orjson
    call (none of them holds a comma)."""
    import orjson

    return orjson.dumps(values).decode("ascii")[1:-1].split(",") if values else []


def _string_texts(values: Sequence[str]) -> list[str]:
    """:func:`_string_text` of each of ``values``, each distinct one written once (suites,
    bands and readings repeat)."""
    texts = {value: _string_text(value) for value in set(values)}
    return list(map(texts.__getitem__, values))


def _integer_text(value: int | None) -> str:
    return "null" if value is None else str(value)


def _value_text(value: Any) -> str:
    """``value`` as the report writes it under a stimulus's key: its text from
    :func:`_indented`, each line after the first indented to that depth."""
    return _indented(value).replace("\n", _KEY)


def _reliability(
    decay_curve: list[int], variance_amplification: int, graceful_degradation: int
) -> dict[str, Any]:
    """A :class:`~gate.metrics.reliability.ReliabilityRow` as its report entry (its
    ``_asdict``, without a namedtuple's generic copy per stimulus)."""
    return {
        "decay_curve": decay_curve,
        "variance_amplification": variance_amplification,
        "graceful_degradation": graceful_degradation,
    }


def _interval_methods(chunk: Sequence[StimulusScore]) -> dict[str, tuple[str, float]]:
    """Each interval's method and level (one per score, the same for every stimulus)."""
    first = chunk[0] if chunk else None
    if first is None:
        return {}
    return {
        metric: (iv.method, iv.confidence)
        for metric, iv in (
            ("pass_rate", first.pass_rate_interval),
            ("pass_at_k", first.pass_at_k_interval),
            ("pass_hat_k", first.pass_hat_k_interval),
        )
    }


def _report_without_stimuli(outcome: CheckOutcome, comparison_rows: bool = True) -> dict[str, Any]:
    """Every part of the report, with an empty list where the stimuli go (and where each
    comparison's go, without ``comparison_rows``)."""
    s = outcome.suite
    comparisons = list(outcome.comparisons)
    return {
        "report_version": "1",
        "tool": {"name": "eval-gate", "version": __version__},
        "verdict": outcome.verdict,
        "exit": {
            "code": outcome.exit_code,
            "outcome": outcome.exit_outcome,
            "on_inconclusive": outcome.config.on_inconclusive,
        },
        "sequential": outcome.config.sequential,
        "gates": [_gate(g, comparisons) for g in outcome.gates],
        "methods": {
            "confidence": s.confidence,
            "stimulus_interval": wording.stimulus_interval_text(
                s.interval_method, s.count_arrays()["trials"].tolist()
            ),
            "suite_interval": s.pass_rate_interval.method,
            "pass_at_k_estimator": PASS_AT_K_ESTIMATOR,
            "pass_hat_k_estimator": PASS_HAT_K_ESTIMATOR,
            "errors": s.errors_policy,
        },
        "suite": _suite(s),
        "suites": [_suite(x) for x in outcome.suites],
        "stimuli": [],
        "not_scored": [
            {"suite": u.suite, "name": u.name, "skipped": u.skipped, "errors": u.errors}
            for u in s.left_out
        ],
        "inputs": [
            {"path": i.path, "format": i.format, "detected": i.detected} for i in outcome.inputs
        ],
        "comparisons": [_comparison(c, comparison_rows) for c in outcome.comparisons],
        "usage": None if outcome.usage is None else _usage(outcome.usage),
        "usage_change": None if outcome.usage_change is None else _usage_change(outcome),
        "warnings": list(outcome.warnings),
    }


def _described_interval(interval: UsageInterval | MetricInterval | None) -> dict[str, Any] | None:
    """An interval that says itself what it is about (its ``estimand``), as JSON."""
    if interval is None:
        return None
    return {
        "lo": _number(interval.lo),
        "hi": _number(interval.hi),
        "method": interval.method,
        "confidence": interval.confidence,
        "estimand": interval.estimand,
    }


def _usage(usage: UsageSummary) -> dict[str, Any]:
    """Cost, duration and tokens of every suite's trials (a block is null when no trial
    reports it; ``trials`` report it, ``missing`` do not)."""
    cost, duration, tokens = usage
    return {
        "cost_usd": None
        if cost is None
        else {
            "total": _number(cost.total),
            "mean_per_trial": _number(cost.mean_per_trial),
            "mean_per_trial_interval": _described_interval(cost.mean_per_trial_interval),
            "per_pass": _optional(cost.per_pass),
            "trials": cost.trials,
            "missing": cost.missing,
            "passes": cost.passes,
        },
        "duration_s": None
        if duration is None
        else {
            "mean": _number(duration.mean),
            "p50": _number(duration.p50),
            "p95": _number(duration.p95),
            "quantile_method": duration.quantile_method,
            "trials": duration.trials,
            "missing": duration.missing,
        },
        "tokens": None
        if tokens is None
        else {
            "total": _number(tokens.total),
            "mean_per_trial": _number(tokens.mean_per_trial),
            "trials": tokens.trials,
            "missing": tokens.missing,
        },
    }


def _usage_change(outcome: CheckOutcome) -> dict[str, Any]:
    """Paired changes (results minus baseline) on the stimuli both report."""
    assert outcome.usage_change is not None

    def change(value: UsageChange | None) -> dict[str, Any] | None:
        if value is None:
            return None
        return {
            "estimate": _number(value.estimate),
            "current": _number(value.current),
            "baseline": _number(value.baseline),
            "interval": [_optional(value.lo), _optional(value.hi)],
            "method": value.method,
            "confidence": value.confidence,
            "estimand": value.estimand,
            "stimuli": value.stimuli,
        }

    return {
        "cost_per_trial": change(outcome.usage_change.cost_per_trial),
        "duration_p95": change(outcome.usage_change.duration_p95),
    }


def _suite(s: SuiteScore) -> dict[str, Any]:
    """A suite's (or all suites') counts and aggregates with their intervals."""
    return {
        "name": s.name,
        "k": s.k,
        "stimuli": len(s.stimuli),
        "trials": s.trials,
        "passes": s.passes,
        "errors": s.errors,
        "skipped": s.skipped,
        "score": _number(s.score),
        "pass_rate": _number(s.pass_rate),
        "pass_rate_interval": _interval(s.pass_rate_interval, "suite", "pass_rate"),
        "pass_at_k": _number(s.pass_at_k),
        "pass_at_k_interval": _interval(s.pass_at_k_interval, "suite", "pass_at_k"),
        "pass_hat_k": _number(s.pass_hat_k),
        "pass_hat_k_plugin": _number(s.pass_hat_k_plugin),
        "pass_hat_k_interval": _interval(s.pass_hat_k_interval, "suite", "pass_hat_k"),
        **_bayes(s),
        "flaky_stimuli": s.flaky_stimuli,
        "reading": s.reading,
    }


def _bayes(s: SuiteScore) -> dict[str, Any]:
    """Bayes@N as the summary's suite table shows it: the value, its estimator, its interval."""
    bayes = s.bayes()
    return {
        "bayes": _optional(bayes.value),
        "bayes_estimator": bayes.estimator,
        "bayes_interval": _described_interval(bayes.interval),
    }


def _comparison(comparison: Comparison, rows: bool = True) -> dict[str, Any]:
    """A comparison's report entry; ``rows=False``: its ``stimuli`` left empty, for
    :func:`report_parts` to write a part at a time."""
    test = comparison.test
    return {
        "metric": comparison.metric,
        "k": comparison.k,
        "tag": comparison.tag,
        "suite": comparison.suite,
        "confidence": comparison.confidence,
        "delta": None if test.delta is None else _number(test.delta),
        "interval": [_bound(test.interval[0]), _bound(test.interval[1])],
        "upper": _bound(test.upper),
        "lower": _bound(test.lower),
        "p_worse": _number(test.p_worse),
        "p_better": _number(test.p_better),
        "test": test.method,
        "reason": wording.paired_test_reason(test),
        "noise_floor": list(test.noise_floor),
        "skew_widened": list(test.skew_widened),
        "shared": len(comparison.shared),
        "added": list(comparison.added),
        "removed": list(comparison.removed),
        "excluded": [
            {
                "name": x.id,
                "reason": x.describe(comparison.k),
            }
            for x in comparison.excluded
        ],
        "minimum_detectable_effect": (
            None if comparison.power.mde is None else _number(comparison.power.mde)
        ),
        "power": wording.power_sentence(comparison),
        "notes": wording.comparison_notes(comparison),
        "stimuli": _comparison_rows(comparison.rows) if rows else [],
    }


def _comparison_rows(rows: Sequence[StimulusRow]) -> list[dict[str, Any]]:
    return [
        {
            "name": r.id,
            "baseline": _number(r.baseline),
            "candidate": _number(r.candidate),
            "delta": _number(r.delta),
            "status": r.status,
            "p_worse": _number(r.p_worse),
            "p_holm": _number(r.p_holm),
            "regressed": r.regressed,
        }
        for r in rows
    ]


def dumps(data: Any) -> str:
    """The report as indented JSON text (UTF-8, no NaN or Infinity).

    orjson writes a 10,000-stimulus report in 0.03 s where ``json`` takes 0.33 s
    (a tenth of a million-trial check). It writes a non-finite float as null, which
    the report never holds (``_number`` maps them to null first); ``json`` remains
    for what orjson refuses (integers past 64 bits) and raises on NaN as before.
    """
    return _indented(data) + "\n"


def _indented(data: Any) -> str:
    try:
        import orjson
    except ImportError:
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    try:
        # orjson refuses a lone surrogate (a message may hold one) and an integer past 64
        # bits; written by json instead, the part's numbers came out in json's style
        # (4.6309e-06, not 4.6309e-6), so a report read differently by where they fell
        # among the parts. Those values become fragments of JSON text; orjson writes the rest.
        return orjson.dumps(_orjson_ready(data), option=orjson.OPT_INDENT_2).decode("utf-8")
    except (TypeError, RecursionError):  # a key with a surrogate, nesting past orjson's 255
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _string_text(value: str) -> str:
    """``value`` as a JSON string, as the report spells it: orjson's text, and a lone
    surrogate (which orjson refuses) as its escape, ``"\\ud800"``."""
    import orjson

    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate
        text = json.dumps(value, ensure_ascii=False)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _orjson_ready(value: Any) -> Any:
    """``value`` with what orjson refuses as ``orjson.Fragment`` text: a string holding a lone
    surrogate (escaped, ``"\\ud800"``, as the report file spells it) and an integer outside
    64 bits."""
    import orjson

    if isinstance(value, str):
        return orjson.Fragment(_string_text(value)) if _SURROGATE.search(value) else value
    if isinstance(value, bool) or not isinstance(value, int | dict | list | tuple):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {key: _orjson_ready(item) for key, item in value.items()}
    return [_orjson_ready(item) for item in value]


def write_json(path: str, data: dict[str, Any]) -> None:
    """Write report data atomically: a reader never sees half a file."""
    atomic_write(path, dumps(data))


#: stimuli (or a comparison's rows) turned into JSON text at a time by :func:`report_parts`
STIMULI_PER_PART = 1000
#: where the stimuli go in the indented text of the report without them
_STIMULI_SLOT = '\n  "stimuli": [],\n'
#: where a comparison's rows go (its last key, inside the comparisons list)
_COMPARISON_SLOT = '\n      "stimuli": []\n'


def report_parts(outcome: CheckOutcome) -> Iterator[str]:
    """The text of :func:`dumps` (:func:`build_report`), in parts of at most
    :data:`STIMULI_PER_PART` stimuli (or rows of a comparison) each: 150,000 compared
    stimuli made 170 MB of rows and text at once."""
    text = dumps(_report_without_stimuli(outcome, comparison_rows=False))
    head, tail = text.split(_STIMULI_SLOT, 1)
    pieces = tail.split(_COMPARISON_SLOT)
    streamed = outcome.comparisons
    if len(pieces) != len(streamed) + 1:  # not where expected: their rows written whole
        head, tail = dumps(_report_without_stimuli(outcome)).split(_STIMULI_SLOT, 1)
        pieces, streamed = [tail], ()
    stimuli = _stimuli_texts(outcome)
    pending = yield from _list_parts(head, '\n  "stimuli": [', stimuli, 2, "],\n")
    for piece, comparison in zip(pieces, streamed, strict=False):
        rows = comparison.rows
        parts = (
            _items_text(_comparison_rows(rows[start : start + STIMULI_PER_PART]), 4)
            for start in range(0, len(rows), STIMULI_PER_PART)
        )
        opening = '\n      "stimuli": ['
        pending = yield from _list_parts(pending + piece, opening, parts, 4, "]\n")
    yield pending + pieces[-1]


def _list_parts(
    before: str, opening: str, parts: Iterator[str], depth: int, after: str
) -> Generator[str, None, str]:
    """``before``, then the list ``opening`` starts, its items' text in ``parts`` (as the
    indented report writes a list nested ``depth`` lists deep; none empty); returns what is
    left to write: the list's end, at its indent, and ``after``."""
    part = next(parts, None)
    if part is None:
        return before + opening + after
    yield before + opening + "\n"
    while part is not None:
        following = next(parts, None)
        yield part + (",\n" if following is not None else "\n")
        part = following
    return "  " * (depth - 1) + after


def _items_text(items: list[dict[str, Any]], depth: int) -> str:
    """``items`` as the indented report writes them in a list nested ``depth`` lists deep
    (without the list's brackets)."""
    opening, closing = _nesting(depth)
    return _indented(_nested(items, depth))[len(opening) : -len(closing)]


def _nested(batch: list[dict[str, Any]], depth: int) -> Any:
    """``batch`` as the one element of a list, ``depth`` - 1 times: its items then come out
    of :func:`_indented` indented by 2 × ``depth``, as they stand in the report."""
    nested: Any = batch
    for _ in range(depth - 1):
        nested = [nested]
    return nested


def _nesting(depth: int) -> tuple[str, str]:
    """What :func:`_indented` writes around the items of :func:`_nested`."""
    opening = "".join("  " * level + "[\n" for level in range(depth))
    closing = "".join("\n" + "  " * level + "]" for level in reversed(range(depth)))
    return opening, closing


def write_report(path: str, outcome: CheckOutcome) -> None:
    """Write the JSON report to ``path`` atomically, streamed (:func:`report_parts`)."""
    with no_cycle_collection():  # a dict per stimulus, none in a cycle
        atomic_write_parts(path, report_parts(outcome))
