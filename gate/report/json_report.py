"""The machine-readable report (schemas/report.schema.json).

:func:`write_report` streams it to a file: the stimuli (100,000 of them make a report of
about 120 MB) are turned into JSON a thousand at a time, so the whole report is never in
memory at once; the text is the same as :func:`dumps` of :func:`build_report`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Generator, Iterator, Mapping, Sequence
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
    """The report as plain JSON data; stimuli in input order."""
    report = _report_without_stimuli(outcome)
    report["stimuli"] = list(_stimuli(outcome))
    return report


def _stimuli(outcome: CheckOutcome) -> Iterator[dict[str, Any]]:
    more = more_trials_by_stimulus(outcome.gates, outcome.suite)
    stimuli = outcome.suite.stimuli
    for start in range(0, len(stimuli), STIMULI_PER_PART):
        chunk = stimuli[start : start + STIMULI_PER_PART]
        outcomes = outcomes_of(chunk)
        yield from _stimulus_entries(chunk, more, reliability_of(chunk, outcomes), outcomes)


def _stimulus_entries(
    chunk: Sequence[StimulusScore],
    more: Mapping[tuple[str, str], int],
    reliabilities: Sequence[ReliabilityRow | None],
    outcomes: Sequence[str],
) -> Iterator[dict[str, Any]]:
    """The entries of ``chunk``, built a column at a time: numbers read and rounded as
    :func:`_number` would one by one (10 decimals), the rest from the table's records."""
    arrays = score_arrays(chunk)
    values = {
        name: (np.round(a, 10) if a.dtype.kind == "f" else a).tolist()
        for name, a in arrays.items()
    }
    methods = _interval_methods(chunk)
    intervals = [
        _interval_column(values[metric + "_lo"], values[metric + "_hi"], metric, *methods[metric])
        for metric in ("pass_rate", "pass_at_k", "pass_hat_k")
    ] if chunk else [[], [], []]  # fmt: skip
    records = stimulus_records(chunk)
    bands = [s.flakiness_band for s in chunk]
    rows = zip(
        records, values["trials"], values["passes"], values["errors"], values["skipped"],
        outcomes, values["pass_rate"], intervals[0], values["pass_at_k"], intervals[1],
        values["pass_hat_k"], values["pass_hat_k_plugin"], intervals[2],
        values["aggregate_score"], values["flakiness"], values["flakiness_percent"], bands,
        readings(chunk, arrays), reliabilities, scored_of(chunk), message_records_of(chunk),
        strict=True,
    )  # fmt: skip
    for (
        record, trials, passes, errors, skipped, outcome, rate, rate_interval, at_k,
        at_k_interval, hat_k, plugin, hat_k_interval, score, flakiness, percent, band,
        label, reliability, scored, messages,
    ) in rows:  # fmt: skip
        yield {
            "suite": record.suite,
            "name": record.stimulus,
            "tags": sorted(record.tags),
            "trials": trials,
            "passes": passes,
            "errors": errors,
            "skipped": skipped,
            "outcomes": outcome,
            "pass_rate": rate,
            "pass_rate_interval": rate_interval,
            "pass_at_k": at_k,
            "pass_at_k_interval": at_k_interval,
            "pass_hat_k": hat_k,
            "pass_hat_k_plugin": plugin,
            "pass_hat_k_interval": hat_k_interval,
            "score": score,
            "unscored": not scored,
            "flaky": 0 < passes < trials,
            "flakiness": flakiness,
            "flakiness_percent": percent,
            "flakiness_band": band,
            "reading": label,
            "more_trials": more.get((record.suite, record.stimulus)),
            "reliability": None if reliability is None else _reliability(*reliability),
            "messages": messages,
        }


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


def _interval_column(
    lo: list[float], hi: list[float], metric: str, method: str, confidence: float
) -> list[dict[str, Any]]:
    """The stimuli's ``metric`` intervals as report entries (the same method and level)."""
    estimand = ESTIMANDS[("stimulus", metric)]
    return [
        {"lo": a, "hi": b, "method": method, "confidence": confidence, "estimand": estimand}
        for a, b in zip(lo, hi, strict=True)
    ]


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


def _orjson_ready(value: Any) -> Any:
    """``value`` with what orjson refuses as ``orjson.Fragment`` text: a string holding a lone
    surrogate (escaped, ``"\\ud800"``, as the report file spells it) and an integer outside
    64 bits."""
    import orjson

    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value
        text = json.dumps(value, ensure_ascii=False)
        return orjson.Fragment(_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
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
    pending = yield from _list_parts(head, '\n  "stimuli": [', _stimuli(outcome), 2, "],\n")
    for piece, comparison in zip(pieces, streamed, strict=False):
        rows = comparison.rows
        entries = (
            entry
            for start in range(0, len(rows), STIMULI_PER_PART)
            for entry in _comparison_rows(rows[start : start + STIMULI_PER_PART])
        )
        opening = '\n      "stimuli": ['
        pending = yield from _list_parts(pending + piece, opening, entries, 4, "]\n")
    yield pending + pieces[-1]


def _list_parts(
    before: str, opening: str, entries: Iterator[dict[str, Any]], depth: int, after: str
) -> Generator[str, None, str]:
    """``before``, then the list ``opening`` starts, its ``entries`` written as the indented
    report writes a list nested ``depth`` lists deep, a part of :data:`STIMULI_PER_PART` at
    a time; returns what is left to write: the list's end, at its indent, and ``after``."""
    batch = [entry for _, entry in zip(range(STIMULI_PER_PART), entries, strict=False)]
    if not batch:
        return before + opening + after
    yield before + opening + "\n"
    open_, close = _nesting(depth)
    while batch:
        items = _indented(_nested(batch, depth))[len(open_) : -len(close)]
        batch = [entry for _, entry in zip(range(STIMULI_PER_PART), entries, strict=False)]
        yield items + (",\n" if batch else "\n")
    return "  " * (depth - 1) + after


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
