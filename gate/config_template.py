"""The commented ``.eval-gate.yml`` that ``eval-gate init`` writes.

Without results: a template of every gate kind with reference 001's guidance (3 trials per
stimulus for a CI gate; pass rate 0.7 for CI; pass^k 0.9 for production). With results: gates
suggested from them, each passing on those results and each commented with the numbers
behind it. The text is checked by the one configuration loader (:mod:`gate.config`), never
by a second one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gate.config import DEFAULT_CONFIG_FILE, DEFAULT_GATE_TARGET
from gate.metrics import Interval
from gate.metrics.intervals import DEFAULT_METHOD, INTERVAL_METHODS
from gate.metrics.usage import UsageSummary
from gate.rates import pct
from gate.scoring import SuiteScore

#: reference 001, "Choosing runs and thresholds".
#: the interval methods a configuration accepts (the schema's; the Wald interval is for tests)
INTERVAL_CHOICES = " | ".join(m for m in INTERVAL_METHODS if m != "wald")
DEFAULT_INTERVAL = DEFAULT_METHOD
CI_PASS_RATE = 0.7
PRODUCTION_PASS_HAT_K = 0.9
CAPABILITY_PASS_AT_K = 0.1
CI_TRIALS = 3
#: reference 001's flakiness bands: under 20% "mostly stable", 20-40% "unreliable".
STABLE_FLAKINESS = 0.20
#: at most this many result files are named in a suggested file's header.
NAMED_FILES = 5


def flakiness_setting(fraction: float) -> str:
    """The ``max_flakiness`` line that admits ``fraction``: a fraction, as every rate.

    Rounded up to a whole percent, so that a gate never fails the flakiness it was set
    from (1 in 3 trials, 33.3%, gives 0.34), and commented with its percent.

    >>> flakiness_setting(0.2), flakiness_setting(1 / 3), flakiness_setting(0.0)
    ('max: 0.2   # 20%', 'max: 0.34   # 34%', 'max: 0   # 0%')
    """
    whole_percent = math.ceil(round(fraction * 100, 9))
    return f"max: {whole_percent / 100:g}   # {whole_percent}%"


def _floor2(value: float) -> float:
    """``value`` rounded down to two decimals: a target never above what it came from."""
    return math.floor(round(value * 100, 9)) / 100


def comment_text(value: object) -> str:
    """Text safe inside a YAML comment: nothing in it can end the comment's line.

    YAML breaks lines at LF, CR, NEL (U+0085), LS and PS (U+2028, U+2029); those and every
    other non-printable character (controls, lone surrogates, bidi overrides) are written
    as ``\\uXXXX``, so a file name cannot add a key to the configuration.

    >>> comment_text("a\\ngates: {}")
    'a\\\\u000agates: {}'
    """
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in str(value))


@dataclass(frozen=True)
class TemplateGate:
    """One gate of the file: the comment lines above it and its YAML lines."""

    why: tuple[str, ...]
    yaml: tuple[str, ...]


def _render_gates(active: Sequence[TemplateGate], inactive: Sequence[TemplateGate]) -> list[str]:
    lines = ["gates:" if active else "gates: {}"]
    for gate in active:
        lines += [f"  # {line}" for line in gate.why]
        lines += [f"  {line}" for line in gate.yaml]
        lines.append("")
    if inactive:
        lines.append("  # Not active: uncomment to use.")
        for gate in inactive:
            lines += [f"  # {line}" for line in gate.why]
            lines += [f"  # {line}" for line in gate.yaml]
            lines.append("")
    while lines[-1] == "":
        lines.pop()
    return lines


def template_gates() -> dict[str, TemplateGate]:
    """Every gate kind as the template shows it; the first one is active."""
    return {
        "pass_rate": TemplateGate(
            (
                f'"Is this reliable for CI?" Suite pass rate (mean over stimuli) ≥ {CI_PASS_RATE},',
                "decided on its interval: pass when the interval clears the target, fail when it",
                "misses it, otherwise inconclusive (exit code 3; the report says how many more",
                "trials would decide). `check` applies this gate when none is configured.",
            ),
            ("pass_rate:", f"  min: {CI_PASS_RATE}", "  bound: interval"),
        ),
        "pass_hat_k": TemplateGate(
            (
                f'"Is this production-ready?" pass^k ≥ {PRODUCTION_PASS_HAT_K}: the chance that',
                "all k runs of a stimulus pass, decided on its interval like the gate above.",
            ),
            (
                "pass_hat_k:",
                f"  k: {CI_TRIALS}",
                f"  min: {PRODUCTION_PASS_HAT_K}",
                "  bound: interval",
            ),
        ),
        "pass_at_k": TemplateGate(
            (
                f'"Does this work at all?" pass@k ≥ {CAPABILITY_PASS_AT_K}: at least one of k runs',
                "passes (capability).",
            ),
            ("pass_at_k:", f"  k: {CI_TRIALS}", f"  min: {CAPABILITY_PASS_AT_K}"),
        ),
        "threshold": TemplateGate(
            (
                f"Suite score (mean weighted grader aggregate) ≥ {CI_PASS_RATE}, for results that",
                "carry grader scores.",
            ),
            (f"threshold: {CI_PASS_RATE}",),
        ),
        "max_flakiness": TemplateGate(
            (
                f"No stimulus flakier than {STABLE_FLAKINESS:.0%} (minority outcomes / trials).",
                f"Vally's guide: under {STABLE_FLAKINESS:.0%} is mostly stable, 20–40% unreliable",
                f"(needs work before CI gating). With {CI_TRIALS} trials any flaky stimulus is 33%",
                "flaky, so this allows none.",
            ),
            (
                "max_flakiness:",
                f"  {flakiness_setting(STABLE_FLAKINESS)}",
                "  scope: stimuli",
            ),
        ),
        "max_ci_half_width": TemplateGate(
            ("Enough trials: the suite pass rate's interval reaches at most ±0.15 around it.",),
            ("max_ci_half_width: 0.15",),
        ),
        "max_regression": TemplateGate(
            (
                "With check --baseline FILES (the base branch's results): fail only when the data",
                "show that the pass rate dropped by more than 0.05 (paired test over stimuli).",
            ),
            ("max_regression: 0.05",),
        ),
        "min_improvement": TemplateGate(
            ("With check --baseline FILES: the pass rate must have risen by at least 0.02.",),
            ("min_improvement: 0.02",),
        ),
        "metric": TemplateGate(
            (
                "Any metric of gate.metrics by name, with its own parameters (docs/metrics.md,",
                '"Gating on any metric"): here G-Pass@3 at tau 0.67 on its interval, and',
                "mcptest's graceful degradation (reliability reporting) of every stimulus.",
            ),
            (
                "metric:",
                f"  - {{metric: g_pass_at_k_tau, k: {CI_TRIALS}, tau: 0.67, min: 0.5,",
                "     bound: interval}",
                "  - {metric: reliability.graceful_degradation, scope: stimuli, min: 80}",
            ),
        ),
    }


def _header(config_name: str) -> list[str]:
    return [
        f"# Check it with: eval-gate validate --config {comment_text(config_name)} [RESULTS...]",
        "# Every key is optional (`eval-gate schema config` prints the JSON Schema).",
        '# Rates are fractions (0.7 means 70%) or percents ("70%"); a plain 70 is refused.',
    ]


def template(config_name: str = DEFAULT_CONFIG_FILE) -> str:
    """The commented template: every gate kind, with reference 001's guidance.

    Active: the suite pass rate ≥ 0.7 decided on its interval (reference 001's CI threshold,
    and the gate `check` applies when none is configured); every other kind is shown commented
    out with the question it answers.
    """
    (first, *others) = template_gates().values()
    lines = [
        "# eval-gate configuration: the gates that `eval-gate check` and the GitHub Action",
        "# apply to your eval results. Written by `eval-gate init`; `eval-gate init RESULTS...`",
        "# suggests gates from results you already have.",
        *_header(config_name),
        "# \"Vally's guide\" below is Vally's scoring documentation (Choosing runs and",
        "# thresholds): run 3 trials per stimulus for a CI gate (enough to see flakiness",
        "# without slowing pull requests) and 5–10 for nightly runs; pass rate 0.7 for CI;",
        "# pass^k 0.9 for production.",
        "version: 1",
        "",
        "# k of pass@k and pass^k; default: the fewest trials any stimulus has.",
        f"# k: {CI_TRIALS}",
        "confidence: 0.95   # level of every interval",
        f"interval: {DEFAULT_INTERVAL}   # {INTERVAL_CHOICES}",
        "errors: fail       # errored trials count as failures (fail) or are left out (exclude)",
        "",
        *_render_gates([first], others),
    ]
    return "\n".join(lines) + "\n"


def _sizes(suite: SuiteScore) -> str:
    """``40 stimuli × 5 trials`` (or ``× 3–5 trials`` when they differ)."""
    counts = [s.trials for s in suite.stimuli]
    low, high = min(counts), max(counts)
    per = f"{low}" if low == high else f"{low}–{high}"
    stimuli = "1 stimulus" if len(counts) == 1 else f"{len(counts)} stimuli"
    return f"{stimuli} × {per} {'trial' if high == 1 else 'trials'}"


def _lower_end_gate(
    suite: SuiteScore,
    kind: str,
    label: str,
    meaning: str,
    value: float,
    interval: Interval,
    guidance: str,
) -> tuple[TemplateGate, bool]:
    """A min gate at the lower end of today's interval, rounded down; inactive when that is 0."""
    lo, hi = float(interval.lo), float(interval.hi)
    observed = (
        f"Observed {label} = {value:.2f} on {_sizes(suite)} ({meaning});",
        f"{pct(suite.confidence)} interval {lo:.2f}–{hi:.2f} ({suite.interval_method}).",
    )
    head = [f"{kind}:"] + ([f"  k: {suite.k}"] if kind in ("pass_at_k", "pass_hat_k") else [])
    target = _floor2(lo)
    if target > 0:
        reason = (
            "min is the interval's lower end, not the estimate: a gate at the estimate would",
            "fail a third to half of the re-runs of an unchanged agent, this one about 1 in 20.",
        )
        return TemplateGate((*observed, *reason, guidance), (*head, f"  min: {target:g}")), True
    no_gate = ("Its lower end rounds to 0: these results support no such gate.",)
    why = (*observed, *no_gate, guidance)
    return TemplateGate(why, (*head, f"  min: {_floor2(value):g}")), False


def _flakiness_gate(suite: SuiteScore) -> TemplateGate:
    """No stimulus flakier than the worst one today (rounded up to a whole percent)."""
    worst = max(suite.stimuli, key=lambda s: s.flakiness_percent)
    flaky = sum(s.flaky for s in suite.stimuli)
    if flaky:
        seen = (
            f"Worst stimulus flakiness {worst.flakiness_percent:.1f}% ({worst.flakiness_band}); "
            f"{flaky} of {len(suite.stimuli)} stimuli flaky."
        )
    else:
        seen = "No stimulus is flaky in these results, so the first flaky one fails this gate."
    return TemplateGate(
        (seen, f"Vally's guide: under {STABLE_FLAKINESS:.0%} is mostly stable, 20–40% unreliable."),
        (
            "max_flakiness:",
            f"  {flakiness_setting(worst.flakiness)}",
            "  scope: stimuli",
        ),
    )


def _score_gate(suite: SuiteScore) -> TemplateGate:
    if all(s.unscored for s in suite.stimuli):
        return template_gates()["threshold"]
    scores = [s.aggregate_score for s in suite.stimuli if not s.unscored and s.trials]
    if len(scores) < 2:
        return TemplateGate(
            (f"Observed suite score = {suite.score:.2f} (mean weighted grader aggregate).",),
            (f"threshold: {_floor2(suite.score):g}",),
        )
    # The gate is on the point estimate: a target at the estimate itself fails about half
    # the re-runs of an agent just as good. Two standard errors over stimuli below it do not.
    error = statistics.stdev(scores) / math.sqrt(len(scores))
    return TemplateGate(
        (
            f"Observed suite score = {suite.score:.2f} (mean weighted grader aggregate;",
            f"standard error {error:.2g} over {len(scores)} stimuli). The target is two standard",
            "errors below it, so a re-run as good passes; a score gate is on the point",
            "estimate (no error control).",
        ),
        (f"threshold: {_floor2(max(0.0, suite.score - 2 * error)):g}",),
    )


def _ceil_significant(value: float, digits: int = 2) -> float:
    """``value`` rounded up to ``digits`` significant digits (0.01234 → 0.013)."""
    if value <= 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return float(f"{math.ceil(value / step - 1e-9) * step:.{digits}g}")


#: a suggested usage gate's headroom over today's value (or today's upper bound)
USAGE_HEADROOM = 1.25


def _usage_gate(usage: UsageSummary | None) -> TemplateGate | None:
    """Cost per trial and p95 duration gates with 25% headroom over today (inactive: a
    budget is the team's to set)."""
    if usage is None:
        return None
    cost, duration, _ = usage
    why: list[str] = []
    yaml: list[str] = ["metric:"]
    if cost is not None:
        interval = cost.mean_per_trial_interval
        top = interval.hi if interval is not None else cost.mean_per_trial
        target = _ceil_significant(top * USAGE_HEADROOM)
        seen = f"Observed cost per trial ${cost.mean_per_trial:.3g}"
        if interval is not None:
            seen += f" ({pct(interval.confidence)} interval up to ${interval.hi:.3g})"
        why.append(f"{seen}; the max leaves 25% headroom.")
        yaml += ["  - metric: cost_usd.mean_per_trial", f"    max: {target:g}   # US dollars"]
        if interval is not None:
            yaml.append("    bound: upper   # decided on the interval's upper end")
    if duration is not None:
        target = _ceil_significant(duration.p95 * USAGE_HEADROOM)
        why.append(
            f"Observed p95 trial duration {duration.p95:.3g} s; the max leaves 25% headroom."
        )
        yaml += ["  - metric: duration_s.p95", f"    max: {target:g}   # seconds"]
    if len(yaml) == 1:
        return None
    return TemplateGate(tuple(why), tuple(yaml))


def suggest(
    suite: SuiteScore,
    sources: Sequence[str],
    config_name: str = DEFAULT_CONFIG_FILE,
    usage: UsageSummary | None = None,
) -> str:
    """Gates suggested from scored results, each of which passes on them.

    ``suite`` must be scored as the written file says: k the fewest trials, and the level,
    interval method and errors policy it names. Rules:

    - ``pass_rate``, and ``pass_hat_k`` when k ≥ 2: ``min`` is the lower end of the suite
      interval of today's value, rounded down to two decimals, not the estimate itself. In a
      seeded simulation (tests/core/test_init.py) a gate at the estimate fails a third to
      half of the re-runs of an unchanged agent, one at this target about 5%. A lower end
      that rounds to 0 supports no gate, which is then shown commented out. These gates
      decide on the point estimate (pass or fail): on the interval, a target at today's lower
      end would leave about half the re-runs inconclusive.
    - ``max_flakiness`` when k ≥ 2: the worst stimulus's flakiness rounded up to a whole
      percent; 0 when no stimulus is flaky.
    - every other kind is shown commented out, with today's value where there is one;
      with ``usage`` (the results report cost or duration), cost per trial and p95
      duration gates with 25% headroom over today's (upper bound of the) value.
    """
    k = suite.k
    named = [comment_text(path) for path in sources[:NAMED_FILES]]
    if len(sources) > NAMED_FILES:
        named.append(f"and {len(sources) - NAMED_FILES} more")
    lines = [
        "# eval-gate configuration suggested by `eval-gate init` from these results:",
        *(f"#   {name}" for name in named),
        f"# ({_sizes(suite)}). Each gate passes on them; raise the targets as the agent",
        "# improves.",
        *_header(config_name),
        "version: 1",
        "",
        f"# k of pass@k and pass^k: the fewest trials any stimulus has ({k}).",
    ]
    if k < CI_TRIALS:
        lines.append(f"# Vally's guide recommends {CI_TRIALS} trials per stimulus for a CI gate.")
    lines += [
        f"k: {k}",
        f"confidence: {suite.confidence:g}   # level of every interval below",
        f"interval: {suite.interval_method}   # {INTERVAL_CHOICES}",
        f"errors: {suite.errors_policy}   # errored trials count as failures ({suite.errors} here)",
        "",
    ]
    gates = [
        _lower_end_gate(
            suite,
            "pass_rate",
            "pass rate",
            "mean over stimuli",
            suite.pass_rate,
            suite.pass_rate_interval,
            f"Vally's guide: {CI_PASS_RATE} for a CI gate.",
        )
    ]
    if k >= 2:
        gates.append(
            _lower_end_gate(
                suite,
                "pass_hat_k",
                f"pass^{k}",
                f"all {k} runs pass",
                suite.pass_hat_k,
                suite.pass_hat_k_interval,
                f"Vally's guide: {PRODUCTION_PASS_HAT_K} for production.",
            )
        )
        gates.append((_flakiness_gate(suite), True))
    else:
        one_trial = (
            "pass^k and flakiness need 2 or more trials per stimulus; Vally's guide",
            f"recommends {CI_TRIALS} for a CI gate.",
        )
        gates.append((TemplateGate(one_trial, template_gates()["max_flakiness"].yaml), False))
    capability, _ = _lower_end_gate(
        suite,
        "pass_at_k",
        f"pass@{k}",
        f"at least one of {k} runs passes",
        suite.pass_at_k,
        suite.pass_at_k_interval,
        f"Vally's guide: {CAPABILITY_PASS_AT_K} asks whether it works at all.",
    )
    lo, hi = float(suite.pass_rate_interval.lo), float(suite.pass_rate_interval.hi)
    half_width = TemplateGate(
        (f"Observed half-width of the suite pass-rate interval: {(hi - lo) / 2:.2f}.",),
        template_gates()["max_ci_half_width"].yaml,
    )
    gates += [
        (capability, False),
        (_score_gate(suite), False),
        (half_width, False),
        (template_gates()["max_regression"], False),
        (template_gates()["min_improvement"], False),
    ]
    budget = _usage_gate(usage)
    if budget is not None:
        gates.append((budget, False))
    active = [g for g, on in gates if on]
    if not active:
        lines += [
            "# These results support no gate. With none configured, check applies its default",
            f"# gate: suite pass rate ≥ {DEFAULT_GATE_TARGET:g}, decided on its interval.",
        ]
    lines += _render_gates(active, [g for g, on in gates if not on])
    return "\n".join(lines) + "\n"
