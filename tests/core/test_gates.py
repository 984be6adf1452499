"""Gates: scopes, tags, bounds, and gates that cannot be evaluated."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special, stats

from gate.config import build_config
from gate.errors import ConfigError
from gate.gates import GateDecision, decide_gates, verdict_of
from gate.report import wording
from gate.scoring import score_table
from gate.trials import Trial, TrialTable


def mid_p(c: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The mid-p interval (the default) by its definition, solved by brentq on
    scipy.stats.binom (an independent implementation):
    ½[P(X ≥ c | L) + P(X ≥ c+1 | L)] = α/2 and ½[P(X ≤ c | U) + P(X ≤ c-1 | U)] = α/2."""
    half = (1 - confidence) / 2

    def lower(p: float) -> float:
        return float(0.5 * (stats.binom.sf(c - 1, n, p) + stats.binom.sf(c, n, p)) - half)

    def upper(p: float) -> float:
        return float(0.5 * (stats.binom.cdf(c, n, p) + stats.binom.cdf(c - 1, n, p)) - half)

    lo = 0.0 if c == 0 else optimize.brentq(lower, 0.0, 1.0, xtol=1e-15)
    hi = 1.0 if c == n else optimize.brentq(upper, 0.0, 1.0, xtol=1e-15)
    return lo, hi


def suite_of(patterns: dict[str, str], tags: dict[str, tuple[str, ...]] | None = None, **kw):
    table = TrialTable()
    for name, pattern in patterns.items():
        for index, letter in enumerate(pattern):
            table.add(
                Trial(
                    stimulus=name,
                    trial=index,
                    passed=letter == "P" if letter in "PF" else None,
                    status="ok" if letter in "PF" else ("error" if letter == "E" else "skipped"),
                    tags=(tags or {}).get(name, ()),
                )
            )
    return score_table(table.finish(), **kw)


def gates(config: dict, suite) -> list[GateDecision]:
    decisions, _ = decide_gates(build_config(config), suite)
    return decisions


def test_pass_hat_k_suite_gate_on_reference_002() -> None:
    suite = suite_of({"a": "PPP", "b": "PFP", "c": "FPF", "d": "FFF", "e": "PPP"})
    (result,) = gates({"gates": {"pass_hat_k": {"k": 3, "min": 0.8}}}, suite)
    assert result.outcome == "fail" and result.basis == "point estimate"
    assert result.value == pytest.approx(0.4)
    assert wording.gate_name(result) == "pass^3 ≥ 0.8 (suite, point estimate)"


def test_lower_bound_gate_is_stricter_than_the_estimate() -> None:
    suite = suite_of({f"s{i}": "PPPPP" for i in range(4)})  # 20/20 passes
    (estimate,) = gates({"gates": {"pass_rate": {"min": 0.9}}}, suite)
    (lower,) = gates({"gates": {"pass_rate": {"min": 0.9, "bound": "lower"}}}, suite)
    assert estimate.passed and estimate.value == 1.0
    # Mid-p lower 95% bound for 20/20 solves P(X = 20)/2 = L^20/2 = 0.025: L = 0.05^(1/20)
    # = 0.8609 < 0.9, upper bound 1: the data neither show the target met nor missed.
    assert lower.lower == pytest.approx(0.05 ** (1 / 20), rel=1e-9)
    assert lower.upper == 1.0 and lower.value == 1.0
    assert lower.outcome == "inconclusive"
    # The old advice took the estimate (1.0) for the truth: every future trial passes, N/N
    # passes have the lower bound 0.05^(1/N) ≥ 0.9 from N = 29 on, so m = 3 (n_eff = 32)
    # "decided it with probability 1". But 20/20 passes allow a suite below 0.9, where 3
    # more trials leave it undecided. The advice is predictive: m = 33, checked below by an
    # independent simulation of the same model.
    assert lower.advice.more_trials == 33
    draws = pooled_posterior_draws([5] * 4, [5] * 4, 20_000, seed=11)
    at_advice = decided_share(draws, [5] * 4, [5] * 4, 33, target=0.9)
    at_three_quarters = decided_share(draws, [5] * 4, [5] * 4, 25, target=0.9)
    at_old_advice = decided_share(draws, [5] * 4, [5] * 4, 3, target=0.9)
    assert at_advice >= 0.8 - 0.02  # ± 0.013: the gate's own estimate has 1,000 runs
    assert at_three_quarters < 0.8 and at_old_advice < 0.72


def pooled_posterior_draws(n: list[int], c: list[int], size: int, seed: int) -> np.ndarray:
    """Rates (size, M) from the advice's model (gate.metrics.posterior) by another method:
    importance sampling of the population (μ uniform, log κ uniform on [0, log 10⁴]) from
    its prior, weighted by the beta-binomial likelihood (scipy's betaln), not a grid."""
    rng = np.random.default_rng(seed)
    trials, passes = np.array(n), np.array(c)
    mu = rng.uniform(0.0, 1.0, 400_000)
    kappa = np.exp(rng.uniform(0.0, np.log(1e4), 400_000))
    a, b = kappa * mu, kappa * (1.0 - mu)
    log_likelihood = sum(
        special.betaln(ci + a, ni - ci + b) - special.betaln(a, b)
        for ni, ci in zip(trials, passes, strict=True)
    )
    weight = np.exp(log_likelihood - log_likelihood.max())
    pick = rng.choice(weight.size, size=size, p=weight / weight.sum())
    return rng.beta(passes + a[pick, None], trials - passes + b[pick, None])


def decided_share(rates: np.ndarray, n: list[int], c: list[int], more: int, target: float) -> float:
    """P(a suite pass-rate gate on the mid-p interval is decided after ``more`` trials per
    stimulus), at each row of true rates: the suite's passes are all that count (n_eff is
    M·n), each distinct count's bounds from :func:`mid_p` (brentq on scipy.stats.binom)."""
    rng = np.random.default_rng(12)
    total = len(n) * (n[0] + more)
    passes = sum(c) + rng.binomial(more, rates).sum(axis=1)
    bounds = {s: mid_p(int(s), total) for s in np.unique(passes)}
    decided = [bounds[s][0] >= target or bounds[s][1] < target for s in passes]
    return float(np.mean(decided))


def test_stimuli_scope_reports_worst_and_every_failure() -> None:
    suite = suite_of({"good": "PPPP", "flaky": "PFPF", "meh": "PPPF"})
    (result,) = gates({"gates": {"max_flakiness": {"max": 0.3, "scope": "stimuli"}}}, suite)
    assert result.outcome == "fail"
    assert result.subject == "flaky" and result.value == 0.5  # 2 of 4 in the minority
    assert result.failing == ("flaky",)


def test_tag_restricts_the_gate() -> None:
    suite = suite_of(
        {"critical-1": "PPP", "critical-2": "PPP", "other": "FFF"},
        tags={"critical-1": ("critical",), "critical-2": ("critical",)},
    )
    (tagged,) = gates({"gates": {"pass_rate": {"min": 1.0, "tag": "critical"}}}, suite)
    (untagged,) = gates({"gates": {"pass_rate": {"min": 1.0}}}, suite)
    assert tagged.passed and not untagged.passed
    with pytest.raises(ConfigError, match="no stimulus carries the tag 'nope'"):
        gates({"gates": {"pass_rate": {"min": 1.0, "tag": "nope"}}}, suite)


def test_k_larger_than_trials_is_a_config_error() -> None:
    suite = suite_of({"a": "PPP", "b": "PP"})
    assert suite.k == 2  # default k: the fewest trials any stimulus has
    with pytest.raises(ConfigError, match="needs k = 3 but stimulus 'b' has only 2"):
        gates({"gates": {"pass_hat_k": {"k": 3, "min": 0.5}}}, suite)
    with pytest.raises(ConfigError, match="k = 3 exceeds the 2 counted trial"):
        suite_of({"a": "PPP", "b": "PP"}, k=3)


def test_errors_count_as_failures_or_are_excluded() -> None:
    as_failures = suite_of({"a": "PPE"})
    excluded = suite_of({"a": "PPE"}, errors="exclude")
    assert (as_failures.stimuli[0].trials, as_failures.stimuli[0].passes) == (3, 2)
    assert (excluded.stimuli[0].trials, excluded.stimuli[0].passes) == (2, 2)
    assert as_failures.errors == excluded.errors == 1  # always reported


def test_skipped_trials_never_count() -> None:
    suite = suite_of({"a": "PSP", "b": "SSS"})
    assert suite.stimuli[0].trials == 2
    assert suite.not_scored == ("b",)


def test_ci_half_width_gate() -> None:
    suite = suite_of({"a": "PPF", "b": "PFF"})  # 3 of 6 passes
    (result,) = gates({"gates": {"max_ci_half_width": 0.1}}, suite)
    lo, hi = mid_p(3, 6)  # [0.1466, 0.8534]
    assert result.value == pytest.approx((hi - lo) / 2, rel=1e-9)
    # too wide is "not enough data yet", never a pass and not a verdict on the agent
    assert result.outcome == "inconclusive" and result.basis == "precision"
    assert result.advice.more_trials is not None and result.advice.more_trials > 20


def test_per_gate_confidence_sets_the_bound_it_decides_on() -> None:
    suite = suite_of({f"s{i}": "PPPPP" for i in range(4)})  # 20/20 passes, suite level 95%
    config = {
        "gates": {
            "pass_rate": [
                {"min": 0.8, "bound": "lower"},
                {"min": 0.8, "bound": "lower", "confidence": 0.99},
            ]
        }
    }
    at95, at99 = gates(config, suite)
    # Mid-p lower bound for 20/20 solves L^20/2 = (1 - confidence)/2: L = (1 - confidence)^(1/20)
    assert at95.lower == pytest.approx(0.05 ** (1 / 20), rel=1e-9)  # 0.8609
    assert at99.lower == pytest.approx(0.01 ** (1 / 20), rel=1e-9)  # 0.7943
    assert at95.outcome == "pass" and at99.outcome == "inconclusive"
    assert wording.gate_name(at99) == "pass rate ≥ 0.8 (suite, 99% interval)"
    assert (at95.confidence, at99.confidence) == (0.95, 0.99)


def test_per_gate_confidence_sets_the_half_width() -> None:
    suite = suite_of({"a": "PPF", "b": "PFF"})  # 3 of 6 passes
    (result,) = gates({"gates": {"max_ci_half_width": {"max": 0.5, "confidence": 0.8}}}, suite)
    lo, hi = mid_p(3, 6, 0.8)  # [0.2466, 0.7534]
    assert result.value == pytest.approx((hi - lo) / 2, rel=1e-9)
    assert result.outcome == "pass"
    assert wording.gate_name(result).startswith("80% interval half-width of pass rate")


def test_lower_bound_gate_is_never_more_lenient_than_the_estimate() -> None:
    """2 of 3 passes, k = 3: unbiased pass^3 = C(2,3)/C(3,3) = 0, but the interval of the
    latent p^3 is [L³, U³] = [0.1320³, 0.9833³] = [0.0023, 0.9508], which excludes 0.

    A 'lower bound ≥ 0.001' gate would pass on L³ = 0.0023 while the estimate, 0, fails
    the same target. It decides on min(L³, estimate) = 0, so it cannot pass; nor can it
    fail: 2/3 passes do not show p^3 < 0.001 (p < 0.1; the mid-p tail
    P(X ≤ 2) - P(X = 2)/2 at p = 0.1 is 0.999 - 0.0135 = 0.9855). Inconclusive.
    """
    suite = suite_of({"a": "PPF", "b": "PPP"})
    lo, hi = mid_p(2, 3)
    stimulus = suite.stimuli[0]
    assert stimulus.pass_hat_k == 0.0
    assert float(stimulus.pass_hat_k_interval.lo) == pytest.approx(lo**3, rel=1e-9)  # 0.0023
    assert float(stimulus.pass_hat_k_interval.hi) == pytest.approx(hi**3, rel=1e-9)  # 0.9508
    assert lo**3 > 0.001
    config = {"gates": {"pass_hat_k": {"k": 3, "min": 0.001, "bound": "lower", "scope": "stimuli"}}}
    (result,) = gates(config, suite)
    assert result.outcome == "inconclusive"
    assert result.undecided == ("a",) and result.failing == ()
    assert result.value == 0.0 and result.subject == "a"
    assert result.outside == 1


def test_an_upper_bound_on_a_min_gate_is_refused() -> None:
    """'upper bound ≥ t' passed whatever the data could not decide: a silent pass."""
    config = {"gates": {"pass_at_k": {"k": 3, "min": 0.9, "bound": "upper"}}}
    with pytest.raises(ConfigError, match=r"takes bound: lower \(or interval\), not upper"):
        build_config(config)
    (interval,) = build_config({"gates": {"pass_rate": {"min": 0.9, "bound": "interval"}}}).gates
    assert interval.bound == "lower"


def test_a_bound_inside_the_estimate_is_unchanged() -> None:
    suite = suite_of({"a": "PPPPF"})  # pass^2 = C(4,2)/C(5,2) = 0.6, inside [L², U²]
    lo, _ = mid_p(4, 5)
    config = {"gates": {"pass_hat_k": {"k": 2, "min": 0.1, "bound": "lower", "scope": "stimuli"}}}
    (result,) = gates(config, suite)
    assert result.lower == pytest.approx(lo**2, rel=1e-9)  # 0.3344² = 0.112 ≥ 0.1: shown
    assert result.outcome == "pass" and result.outside == 0


def test_per_stimulus_interval_gate_fails_only_what_the_data_show() -> None:
    """Target pass rate 0.5 on every stimulus, 20 trials each.

    'bad' passes 2 of 20: the mid-p test of H0: p ≥ 0.5 has one-sided p
    P(X ≤ 2) - P(X = 2)/2 = (211 - 95)/2^20 = 1.1e-4; Holm over 3 stimuli: 3.3e-4 ≤ 0.025
    (the upper side of a two-sided 95% interval): shown to miss it. 'close' passes 9
    of 20 (p = 0.412 - 0.160/2 = 0.33): not shown either way. 'good' passes 20 of 20:
    its lower bound 0.05^(1/20) = 0.861 clears 0.5.
    """
    suite = suite_of({"good": "P" * 20, "close": "P" * 9 + "F" * 11, "bad": "PP" + "F" * 18})
    config = {"gates": {"pass_rate": {"min": 0.5, "bound": "lower", "scope": "stimuli"}}}
    (result,) = gates(config, suite)
    assert result.outcome == "fail"
    assert result.failing == ("bad",) and result.undecided == ("close",)
    # without the clear failure the gate is inconclusive, and says which stimulus to re-run
    suite = suite_of({"good": "P" * 20, "close": "P" * 9 + "F" * 11})
    (result,) = gates(config, suite)
    assert result.outcome == "inconclusive" and result.undecided == ("close",)
    ((name, more),) = result.advice.stimuli
    assert name == "close" and more is not None and more > 50


def test_a_stimulus_whose_own_interval_misses_is_not_yet_a_family_wise_miss() -> None:
    """t00 passes 1 of 6 against a target of 0.6: its own 95% interval lies below 0.6 (mid-p
    one-sided p = P(X ≤ 1) - P(X = 1)/2 at p = 0.6: 0.4^6 + 3·0.6·0.4^5 = 0.0225 < 0.025),
    but Holm over 20 stimuli asks 0.025/20 = 0.00125 of the first step: not shown. The
    sentence said its interval "straddles" the target beside a Bounds column that showed
    it did not."""
    patterns = {"t00": "P" + "F" * 5} | {f"t{i:02d}": "P" * 6 for i in range(1, 20)}
    config = {"gates": {"pass_rate": {"min": 0.6, "bound": "lower", "scope": "stimuli"}}}
    (result,) = gates(config, suite_of(patterns))
    assert result.outcome == "inconclusive" and result.subject == "t00"
    assert result.upper is not None and result.upper < 0.6 and len(result.undecided) == 20
    upper = f"{result.upper:.3f}"
    assert wording.gate_sentence(result) == (
        "Inconclusive: 20 stimuli cannot be decided yet (t00, t01, t02, t03, t04 and 15 more): "
        f"t00's own 95% interval [{result.lower:.3f}, {upper}] lies below the target 0.6, but a "
        "miss must be shown at family-wise 95% confidence (Holm, every stimulus tested at "
        "once), and it is not yet; the others' intervals straddle the target."
    )
    alone = gates(config, suite_of({"t00": "P" + "F" * 5}))[0]
    assert alone.outcome == "fail"  # one stimulus: Holm asks 0.025, and 0.0225 meets it


def test_no_configured_gate_gets_the_default_gate() -> None:
    config = build_config({})
    (spec,) = config.gates
    assert (spec.kind, spec.target, spec.bound, spec.default) == ("pass_rate", 0.7, "lower", True)
    good = suite_of({f"s{i}": "PPPPP" for i in range(10)})  # 50/50: lower bound 0.05^(1/50)
    (gate,) = gates({}, good)
    assert gate.outcome == "pass" and gate.lower == pytest.approx(0.05 ** (1 / 50))  # 0.9418
    poor = suite_of({f"s{i}": "FFFFP" for i in range(10)})  # 10/50: upper bound 0.33
    assert gates({}, poor)[0].outcome == "fail"


def test_a_run_whose_trials_all_errored_never_passes() -> None:
    suite = suite_of({"a": "EEE", "b": "EE"})
    config = {"gates": {"max_flakiness": {"max": 0.2, "scope": "stimuli"}}}
    flakiness, completed = gates(config, suite)
    assert flakiness.outcome == "pass"  # all failures: perfectly consistent
    assert completed.kind == "completed_trials" and completed.outcome == "fail"
    assert verdict_of([flakiness, completed]) == "fail"
    assert "every counted trial errored" in wording.gate_sentence(completed)


def test_verdict_is_fail_then_inconclusive_then_pass() -> None:
    suite = suite_of({"a": "PPPPP", "b": "PPPPF"})
    passing, undecided = gates(
        {"gates": {"pass_rate": [{"min": 0.5}, {"min": 0.9, "bound": "lower"}]}}, suite
    )
    failing = gates({"gates": {"pass_rate": {"min": 0.95}}}, suite)[0]
    assert (passing.outcome, undecided.outcome, failing.outcome) == (
        "pass",
        "inconclusive",
        "fail",
    )
    assert verdict_of([passing]) == "pass"
    assert verdict_of([passing, undecided]) == "inconclusive"
    assert verdict_of([undecided, failing, passing]) == "fail"


def test_flakiness_on_single_trials_is_undecided_not_a_silent_pass() -> None:
    """One counted trial gives flakiness 0 whatever the agent does: a max_flakiness gate on
    such stimuli passed on no evidence."""
    suite = suite_of({"a": "P", "b": "F"})
    for scope in ("suite", "stimuli"):
        config = {"gates": {"max_flakiness": {"max": 0.2, "scope": scope}}}
        (result,) = gates(config, suite)
        decided = (result.outcome, result.value, result.unmeasured)
        assert decided == ("inconclusive", None, ("a", "b"))
        assert wording.gate_sentence(result) == (
            "Inconclusive: flakiness needs at least 2 trials of a stimulus, and every stimulus "
            "it covers has 1."
        )
        assert wording.advice_sentence(result) == (
            "At least 2 trials of each stimulus are needed before flakiness can be measured."
        )
        assert wording.worst_subject(result) is None
    assert verdict_of([result]) == "inconclusive"


def test_flakiness_leaves_out_single_trial_stimuli_and_says_so() -> None:
    """a and b (one trial each) have no flakiness to measure; c (PF) has 50%. The suite's
    flakiness is c's 0.5, not the 0.167 that counting a and b as steady gave."""
    suite = suite_of({"a": "P", "b": "P", "c": "PF"})
    (suite_gate,) = gates({"gates": {"max_flakiness": {"max": 0.2, "scope": "suite"}}}, suite)
    assert (suite_gate.outcome, suite_gate.value) == ("fail", pytest.approx(0.5))
    assert suite_gate.unmeasured == ("a", "b")
    (each,) = gates({"gates": {"max_flakiness": {"max": 0.5, "scope": "stimuli"}}}, suite)
    assert (each.outcome, each.value, each.subject) == ("pass", pytest.approx(0.5), "c")
    assert wording.gate_sentence(each).endswith(
        "(2 stimuli with a single trial are left out: one trial cannot show flakiness.)"
    )


def test_gate_sentences_read_as_english() -> None:
    """Three sentences that were garbled or left out part of the claim."""
    suite = suite_of(
        {"a": "PPPPPPPPPP", "b": "PPPPPFFFFF", "c": "FFFFFFFFFF"},
        tags={"a": ("critical",), "b": ("critical",)},
    )
    # The suite rate 15/30 = 0.5 on 3 × 10 trials: mid-p over n_eff = 30 rules out 0.95.
    (failed,) = gates({"gates": {"pass_rate": {"min": 0.95, "bound": "interval"}}}, suite)
    lo, hi = mid_p(15, 30)
    assert wording.gate_sentence(failed) == (
        "Fail: the data rule out, at 95% confidence, that the suite's pass rate is at least "
        f"0.95 (interval [{lo:.3f}, {hi:.3f}])."
    )
    # b alone is undecided at 0.4 (5/10, its interval holds 0.4); a passes; c is untagged.
    assert mid_p(5, 10)[0] < 0.4 < mid_p(5, 10)[1] and mid_p(10, 10)[0] > 0.4
    each = {"min": 0.4, "scope": "stimuli", "tag": "critical", "bound": "interval"}
    (undecided,) = gates({"gates": {"pass_rate": each}}, suite)
    assert undecided.outcome == "inconclusive" and undecided.undecided == ("b",)
    assert wording.gate_sentence(undecided) == (
        "Inconclusive: 1 stimulus cannot be decided yet (b): its 95% interval straddles the "
        "target."
    )
    point = {"gates": {"pass_rate": {"min": 0.5, "scope": "stimuli", "tag": "critical"}}}
    (passed,) = gates(point, suite)
    assert wording.gate_sentence(passed).startswith(
        "Pass: the pass rate of every stimulus tagged critical is within the target (≥ 0.5); "
        "the worst, b, is at 0.500."
    )
