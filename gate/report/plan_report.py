"""``eval-gate plan`` output: a Markdown table for people, JSON for machines."""

from __future__ import annotations

from typing import Any

from gate.config import INTERVAL_METRICS, REGRESSION_KINDS
from gate.planning import GatePlan, Plan
from gate.report import wording
from gate.report.escape import md_text
from gate.report.markdown import table


def _label(plan: Plan, gate: GatePlan) -> str:
    spec = gate.spec
    level = spec.confidence if spec.confidence is not None else plan.confidence
    on_interval = spec.bound != "estimate" and spec.metric in INTERVAL_METRICS
    with_level = on_interval or spec.kind in (*REGRESSION_KINDS, "max_ci_half_width")
    return wording.spec_label(
        spec, gate.k, level if with_level else None, on_interval=on_interval, escape=_escape
    )


def _escape(text: str) -> str:
    # A tag or a suite name is the user's text, as in check's summary.
    return md_text(text, 80)


def _why(gate: GatePlan, power: float, pilot: bool = False) -> str:
    """The plan of one gate in a plain sentence (``pilot``: planned from a pilot's data)."""
    chance = wording.pct(power)
    if gate.reason == "score":
        return "Not planned: a score gate has no trial model (its scores are not pass/fail)."
    if gate.reason == "metric":
        return (
            "Not planned: plan models the pass-rate gates; check reports what would decide "
            "a metric gate once trials are in (its more_trials)."
        )
    if gate.reason == "on target":
        return "No number of trials decides it: the expected value sits exactly on the target."
    if gate.spec.kind in REGRESSION_KINDS:
        if gate.trials is not None:
            return (
                f"For an unchanged agent, {_per_stimulus(gate.trials)} on each run "
                f"{_decide(gate.trials)} it with at least {chance} probability."
            )
        if gate.stimuli is not None:
            return (
                f"More trials alone do not decide it at these stimuli: {gate.stimuli} stimuli "
                f"× {gate.trials_for_stimuli} trials would, with at least {chance} probability."
            )
        return "Neither more trials nor more stimuli (within the search limits) decide it."
    if gate.trials is None:
        return f"Not decided with at least {chance} probability within the search limit of trials."
    if gate.goal == "agree":
        if pilot:
            return (
                f"A point estimate always decides; with {_per_stimulus(gate.trials)} it gives "
                f"the verdict the true rates imply with at least {chance} probability, "
                "averaged over the rates the pilot allows (the pilot's own rates imply "
                f"{gate.expected_outcome}; no error control)."
            )
        return (
            f"A point estimate always decides; with {_per_stimulus(gate.trials)} it gives "
            f"the verdict the expected rates imply ({gate.expected_outcome}) with at least "
            f"{chance} probability (no error control)."
        )
    return (
        f"{_per_stimulus(gate.trials)} {_decide(gate.trials)} it (pass or fail) with at least "
        f"{chance} probability."
    )


def _coverage(plan: Plan, gate: GatePlan) -> str:
    """Which stimuli a gate with ``tag:`` or ``suite:`` was planned on."""
    if gate.spec.tag is None and gate.spec.suite is None:
        return ""
    if gate.covers is None:
        return " (With --expect every stimulus is taken to be the gate's; a pilot tells them.)"
    return f" Planned on the {gate.covers:,} of {wording.stimuli_count(plan.stimuli)} it covers."


def _probability(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def render_plan(plan: Plan) -> str:
    """The plan as Markdown."""
    rows = []
    for gate in plan.gates:
        rows.append(
            [
                _label(plan, gate),
                "–" if gate.trials is None else str(gate.trials),
                "–" if gate.stimuli is None else str(gate.stimuli),
                _probability(gate.probability),
                _probability(gate.probability_smaller),
            ]
        )
    header = [
        "Gate",
        "Trials per stimulus",
        "Stimuli",
        "P(decided) there",
        "at 0.6 × the trials",
    ]
    if plan.source == "expect":
        source = f"an expected pass rate of {plan.rates[0]:g} for every stimulus"
    elif plan.predictive:
        source = (
            "the pass rates the pilot run allows (drawn anew in every simulated run; the "
            "trials planned are a new run's, the pilot's own not counted)"
        )
    else:
        source = "the pass rates of the pilot run"
    lines = [
        f"## eval-gate plan: {_headline(plan)}",
        f"{wording.stimuli_count(plan.stimuli)} at {source}; each gate decided with at "
        f"least {wording.pct(plan.power)} probability by its own rule ({plan.interval} "
        f"intervals at {wording.pct(plan.confidence)}), simulated.",
        table(header, rows, "lrrrr"),
        "\n".join(
            f"- {_label(plan, gate)}: {_why(gate, plan.power, plan.predictive)}"
            f"{_coverage(plan, gate)}"
            if len(plan.gates) > 1
            else f"- {_why(gate, plan.power, plan.predictive)}{_coverage(plan, gate)}"
            for gate in plan.gates
        ),
        _spend_line(plan),
        "_Re-checking a fixed-size run after every batch inflates its error rate; to stop "
        "early safely, run `eval-gate check --sequential` (see docs/plan.md)._",
    ]
    return "\n\n".join(line for line in lines if line) + "\n"


def _spend_line(plan: Plan) -> str:
    """'**Expected spend** of 460 trials at the pilot's usage: $5.52 (95% interval ...)'."""
    spend = plan.spend
    if spend is None:
        return ""
    parts = []
    if spend.cost_usd is not None:
        text = f"cost {wording.money(spend.cost_usd)}"
        if spend.cost_usd_interval is not None:
            lo, hi = spend.cost_usd_interval
            text += f" ({wording.money(lo)} to {wording.money(hi)}: {spend.cost_method})"
        parts.append(text)
    if spend.trial_seconds is not None:
        hours = spend.trial_seconds / 3600
        parts.append(
            f"{hours:,.1f} h of trial time ({wording.seconds(spend.trial_seconds)}; wall-clock "
            "when run one at a time, divide by your parallelism)"
        )
    return (
        f"**Expected spend** of {wording.plural(spend.trials, 'trial')} "
        f"({plan.trials_per_stimulus} × {wording.stimuli_count(plan.stimuli)}) at the pilot's "
        f"usage per trial ({wording.plural(spend.pilot_trials, 'trial')}): " + "; ".join(parts)
    )


def _headline(plan: Plan) -> str:
    trials = plan.trials_per_stimulus
    if trials is None:
        return "no gate can be planned in trials per stimulus"
    return _per_stimulus(trials)


def _per_stimulus(trials: int) -> str:
    """'1 trial per stimulus', '3 trials per stimulus'."""
    return f"{wording.plural(trials, 'trial')} per stimulus"


def _decide(trials: int) -> str:
    return "decides" if trials == 1 else "decide"


def build_plan_report(plan: Plan) -> dict[str, Any]:
    """The plan as plain JSON data."""
    return {
        "stimuli": plan.stimuli,
        "source": plan.source,
        "mean_expected_pass_rate": round(float(plan.rates.mean()), 10),
        "power": plan.power,
        "confidence": plan.confidence,
        "interval": plan.interval,
        "trials_per_stimulus": plan.trials_per_stimulus,
        "expected": _spend(plan),
        "gates": [
            {
                "name": _label(plan, gate),
                "kind": gate.spec.kind,
                "goal": gate.goal,
                "trials_per_stimulus": gate.trials,
                "stimuli": gate.stimuli,
                "trials_for_stimuli": gate.trials_for_stimuli,
                "probability": gate.probability,
                "probability_at_60_percent": gate.probability_smaller,
                "expected_outcome": gate.expected_outcome,
                "reason": gate.reason,
                "covers": gate.covers,
                "sentence": _why(gate, plan.power, plan.predictive),
            }
            for gate in plan.gates
        ],
    }


def _spend(plan: Plan) -> dict[str, Any] | None:
    spend = plan.spend
    if spend is None:
        return None
    return {
        "trials": spend.trials,
        "cost_usd": spend.cost_usd,
        "cost_usd_interval": None
        if spend.cost_usd_interval is None
        else list(spend.cost_usd_interval),
        "cost_method": spend.cost_method,
        "trial_seconds": spend.trial_seconds,
        "pilot_trials": spend.pilot_trials,
    }
