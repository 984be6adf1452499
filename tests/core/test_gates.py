"""Gates: scopes, tags, bounds, and gates that cannot be evaluated."""

from __future__ import annotations

import pytest

from gate.config import build_config
from gate.errors import ConfigError
from gate.gates import evaluate_gates
from gate.scoring import score_table
from gate.trials import Trial, TrialTable


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


def gates(config: dict, suite) -> list:
    return evaluate_gates(build_config(config), suite)


def test_pass_hat_k_suite_gate_on_reference_002() -> None:
    suite = suite_of({"a": "PPP", "b": "PFP", "c": "FPF", "d": "FFF", "e": "PPP"})
    (result,) = gates({"gates": {"pass_hat_k": {"k": 3, "min": 0.8}}}, suite)
    assert not result.passed
    assert result.value == pytest.approx(0.4)
    assert result.name == "pass^3 ≥ 0.8 (suite)"


def test_lower_bound_gate_is_stricter_than_the_estimate() -> None:
    suite = suite_of({f"s{i}": "PPPPP" for i in range(4)})  # 20/20 passes
    (estimate,) = gates({"gates": {"pass_rate": {"min": 0.9}}}, suite)
    (lower,) = gates({"gates": {"pass_rate": {"min": 0.9, "bound": "lower"}}}, suite)
    assert estimate.passed and estimate.value == 1.0
    # Wilson lower 95% bound for 20/20: 20 / (20 + 1.96²) = 0.8389
    assert lower.value == pytest.approx(20 / (20 + 1.959963984540054**2), rel=1e-9)
    assert not lower.passed


def test_stimuli_scope_reports_worst_and_every_failure() -> None:
    suite = suite_of({"good": "PPPP", "flaky": "PFPF", "meh": "PPPF"})
    (result,) = gates({"gates": {"max_flakiness": {"max": 30, "scope": "stimuli"}}}, suite)
    assert not result.passed
    assert result.subject == "flaky" and result.value == 50.0
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
    # Wilson 95% for 3/6 has half-width z·sqrt(p(1-p)/n + z²/4n²)/(1+z²/n)
    z = 1.959963984540054
    expected = z * (0.25 / 6 + z * z / 144) ** 0.5 / (1 + z * z / 6)
    assert result.value == pytest.approx(expected, rel=1e-9)
    assert not result.passed


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
    # Wilson lower bound for 20/20 is n / (n + z²): z = 1.959964 (95%), 2.575829 (99%)
    assert at95.value == pytest.approx(20 / (20 + 1.959963984540054**2), rel=1e-9)  # 0.8389
    assert at99.value == pytest.approx(20 / (20 + 2.5758293035489004**2), rel=1e-9)  # 0.7509
    assert at95.passed and not at99.passed
    assert at99.name == "pass rate ≥ 0.8 (suite, lower 99% bound)"
    assert (at95.confidence, at99.confidence) == (0.95, 0.99)


def test_per_gate_confidence_sets_the_half_width() -> None:
    suite = suite_of({"a": "PPF", "b": "PFF"})  # 3 of 6 passes
    (result,) = gates({"gates": {"max_ci_half_width": {"max": 0.5, "confidence": 0.8}}}, suite)
    z = 1.2815515655446004  # the 90% normal quantile, for a two-sided 80% interval
    expected = z * (0.25 / 6 + z * z / 144) ** 0.5 / (1 + z * z / 6)
    assert result.value == pytest.approx(expected, rel=1e-9)
    assert result.name.startswith("80% interval half-width of pass rate")


def wilson(c: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval, written out (an independent implementation)."""
    p = c / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return centre - half, centre + half


def test_lower_bound_gate_is_never_more_lenient_than_the_estimate() -> None:
    """2 of 3 passes, k = 3: unbiased pass^3 = C(2,3)/C(3,3) = 0, but the interval of the
    latent p^3 is [L³, U³] = [0.2077³, 0.9385³] = [0.0090, 0.8266], which excludes 0.

    A 'lower bound ≥ 0.005' gate used to pass on L³ = 0.009 while the estimate, 0, fails
    the same target. It now decides on min(L³, estimate) = 0 and fails.
    """
    suite = suite_of({"a": "PPF", "b": "PPP"})
    lo, hi = wilson(2, 3)
    stimulus = suite.stimuli[0]
    assert stimulus.pass_hat_k == 0.0
    assert float(stimulus.pass_hat_k_interval.lo) == pytest.approx(lo**3, rel=1e-9)  # 0.0090
    assert float(stimulus.pass_hat_k_interval.hi) == pytest.approx(hi**3, rel=1e-9)  # 0.8266
    assert lo**3 > 0.005
    config = {"gates": {"pass_hat_k": {"k": 3, "min": 0.005, "bound": "lower", "scope": "stimuli"}}}
    (result,) = gates(config, suite)
    assert not result.passed
    assert result.failing == ("a",) and result.value == 0.0
    assert "1 stimuli have an unbiased estimate outside the interval" in result.explanation


def test_upper_bound_gate_is_never_stricter_than_the_estimate() -> None:
    """2 of 3 passes, k = 3: unbiased pass@3 = 1 - C(1,3)/C(3,3) = 1, above the interval
    of the latent 1-(1-p)³, whose upper end is 1 - (1 - 0.9385)³ = 0.99977.

    'upper bound ≥ 0.9999' is the lenient gate; it now passes as the estimate does.
    """
    suite = suite_of({"a": "PPF"})
    _, hi = wilson(2, 3)
    assert float(suite.stimuli[0].pass_at_k_interval.hi) == pytest.approx(1 - (1 - hi) ** 3)
    assert 1 - (1 - hi) ** 3 < 0.9999
    config = {"gates": {"pass_at_k": {"k": 3, "min": 0.9999, "bound": "upper", "scope": "stimuli"}}}
    (result,) = gates(config, suite)
    assert result.passed and result.value == 1.0


def test_a_bound_inside_the_estimate_is_unchanged() -> None:
    suite = suite_of({"a": "PPPPF"})  # pass^2 = C(4,2)/C(5,2) = 0.6, inside [L², U²]
    lo, _ = wilson(4, 5)
    config = {"gates": {"pass_hat_k": {"k": 2, "min": 0.1, "bound": "lower", "scope": "stimuli"}}}
    (result,) = gates(config, suite)
    assert result.value == pytest.approx(lo**2, rel=1e-9)
    assert "outside the interval" not in result.explanation
