"""The registry of gateable metrics: names, parameters, and checking a gate entry."""

from __future__ import annotations

import inspect
import math
from typing import Any

import pytest
import yaml

import gate.metrics as metrics
from gate.metrics import (
    GATE_KEYS,
    METRICS,
    MetricSpecError,
    metric_names,
    parse_metric_gate,
    resolve,
    split_metric_spec,
)

#: Reference 003's binary-outcome metrics (scorio 0.2.3 names) and Bayes@N/avg@N/Max@k.
REFERENCE_003 = (
    "pass_at_k", "pass_hat_k", "unanimous_at_k", "g_pass_at_k", "g_pass_at_k_tau",
    "mg_pass_at_k", "maj_at_k", "auc_at_k", "geom_at_k", "geom_ds_at_k",
    "threshold_spectrum_at_k", "geo_spectrum_at_k", "geo_spectrum_star_at_k",
    "bayes", "avg", "max_at_k",
)  # fmt: skip
RELIABILITY = (
    "reliability.decay_curve",
    "reliability.variance_amplification",
    "reliability.graceful_degradation",
)
USAGE = (
    "cost_usd.total", "cost_usd.mean_per_trial", "cost_usd.per_pass", "duration_s.mean",
    "duration_s.p50", "duration_s.p95", "tokens.total", "tokens.mean_per_trial",
)  # fmt: skip

ISSUE_EXAMPLE = """
gates:
  metric:
    - metric: g_pass_at_k_tau
      k: 3
      tau: 0.67
      min: 0.5
      bound: lower
    - metric: reliability.graceful_degradation
      scope: stimuli
      min: 80
    - metric: cost_usd.mean_per_trial
      max: 0.05
    - metric: duration_s.p95
      max: 120
"""


def test_every_metric_of_the_references_is_registered() -> None:
    assert set(METRICS) == set(REFERENCE_003) | set(RELIABILITY) | set(USAGE)
    # Each 003 metric is a public function of gate.metrics, with its _ci and counts forms.
    for name in REFERENCE_003:
        assert callable(getattr(metrics, name))
        assert callable(getattr(metrics, f"{name}_ci"))
        assert METRICS[name].counts_form and METRICS[name].has_interval


def test_parameters_come_from_the_signatures() -> None:
    tau = METRICS["g_pass_at_k_tau"]
    assert [(p.name, p.required, p.default, p.interval_only) for p in tau.parameters] == [
        ("k", True, None, False),
        ("tau", True, None, False),
        ("alpha0", False, 1.0, True),
        ("beta0", False, 1.0, True),
    ]
    geo = METRICS["geo_spectrum_at_k"]
    assert [p.name for p in geo.parameters] == ["k", "lam", "weights", "alpha0", "beta0"]
    assert geo.parameter("lam").default == 0.5  # type: ignore[union-attr]
    # Data arguments and gate keys never become parameters.
    for info in METRICS.values():
        names = {p.name for p in info.parameters}
        assert not names & {"R", "w", "R0", "lambda_", "confidence", "bounds", *GATE_KEYS}
        if info.point is not None:
            signature = inspect.signature(info.point).parameters
            for parameter in info.parameters:
                if not parameter.interval_only:
                    assert parameter.name in signature
    assert METRICS["bayes"].parameters == ()
    assert [p.name for p in METRICS["max_at_k"].parameters] == ["k"]


def test_order_dependence_follows_the_definitions() -> None:
    dependent = {name for name, info in METRICS.items() if info.order_dependent}
    # 004: entry k of the decay curve uses the first k runs; graceful degradation
    # weighs run i by i. Everything else is a function of the counts.
    assert dependent == {"reliability.decay_curve", "reliability.graceful_degradation"}
    assert METRICS["reliability.variance_amplification"].counts_form
    assert not any(METRICS[name].counts_form for name in USAGE)
    assert all(METRICS[name].usage and not METRICS[name].per_stimulus for name in USAGE)
    assert [n for n in USAGE if METRICS[n].has_interval] == ["cost_usd.mean_per_trial"]
    assert metric_names("usage") == USAGE


def test_unknown_metric_lists_names_and_suggests() -> None:
    with pytest.raises(MetricSpecError) as caught:
        resolve("g_pass_at_k_tua", {"k": 3, "tau": 0.67})
    message = str(caught.value)
    assert message.startswith("unknown metric 'g_pass_at_k_tua'; did you mean 'g_pass_at_k_tau'?")
    assert "valid: pass_at_k, pass_hat_k" in message and "duration_s.p95" in message
    with pytest.raises(MetricSpecError, match=r"did you mean 'reliability.graceful_degradation'"):
        resolve("reliability.graceful_degredation")
    with pytest.raises(MetricSpecError, match=r"^unknown metric 'zzz'; valid: "):
        resolve("zzz")
    with pytest.raises(MetricSpecError, match="must be a name"):
        resolve(3)
    assert issubclass(MetricSpecError, ValueError)


def test_unknown_parameter_names_the_valid_ones() -> None:
    with pytest.raises(MetricSpecError) as caught:
        resolve("g_pass_at_k_tau", {"k": 3, "tua": 0.6})
    assert str(caught.value) == (
        "metric 'g_pass_at_k_tau' has no parameter 'tua'; did you mean 'tau'? its parameters: "
        "k (required), tau (required), alpha0 (default 1.0), beta0 (default 1.0)"
    )
    # A gate key misspelt among the metric's parameters is suggested too.
    with pytest.raises(MetricSpecError, match="did you mean 'scope'"):
        parse_metric_gate({"metric": "pass_at_k", "k": 2, "min": 0.5, "scop": "stimuli"})
    with pytest.raises(MetricSpecError, match="its parameters: none"):
        resolve("bayes", {"k": 2})
    with pytest.raises(MetricSpecError, match="prior outcomes are per-stimulus data"):
        resolve("bayes", {"R0": [[1]]})
    with pytest.raises(MetricSpecError, match="an alias of lam"):
        resolve("geo_spectrum_at_k", {"k": 3, "lambda_": 0.2})
    with pytest.raises(MetricSpecError, match="clipped to the metric's range"):
        resolve("pass_at_k", {"k": 2, "bounds": [0, 1]})


def test_missing_required_parameter_is_named() -> None:
    with pytest.raises(MetricSpecError) as caught:
        resolve("g_pass_at_k_tau", {"k": 3})
    assert "needs parameter 'tau'" in str(caught.value)
    with pytest.raises(MetricSpecError, match="needs parameter 'k'"):
        resolve("pass_at_k")
    with pytest.raises(MetricSpecError, match="needs parameter 'weights'"):
        resolve("threshold_spectrum_at_k", {"k": 2})


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("pass_at_k", {"k": 0}, "k must be at least 1"),
        ("pass_at_k", {"k": 2.5}, "k must be an integer, got 2.5"),
        ("pass_at_k", {"k": True}, "k must be an integer, got the boolean True"),
        ("pass_at_k", {"k": "3"}, "must be a number or a list of numbers, found '3'"),
        ("pass_at_k", {"k": None}, "needs a value, found null"),
        ("pass_at_k", {"k": 1001}, "above the largest k a gate takes, 1,000"),
        ("pass_at_k", {"k": 10**30}, "above the largest k"),
        ("g_pass_at_k_tau", {"k": 3, "tau": 1.5}, r"tau=1.5 is outside \[0.0, 1.0\]"),
        ("g_pass_at_k_tau", {"k": 3, "tau": math.nan}, "tau must be finite"),
        ("g_pass_at_k_tau", {"k": 3, "tau": {"a": 1}}, "must be a number or a list"),
        ("threshold_spectrum_at_k", {"k": 3, "weights": [0.5, 0.5]}, "one weight per r"),
        ("threshold_spectrum_at_k", {"k": 2, "weights": [0.9, 0.9]}, "sum to at most 1"),
        ("threshold_spectrum_at_k", {"k": 2, "weights": [0.5, "x"]}, "list of numbers"),
        ("geo_spectrum_at_k", {"k": 3, "lam": 2}, r"lam=2.0 is outside \[0.0, 1.0\]"),
        ("geom_at_k", {"k": 2, "pass_power": 0, "unanimous_power": 0}, "cannot both be 0"),
        ("pass_hat_k", {"k": 2, "alpha0": 0}, "alpha0=0.0 is outside"),
        ("maj_at_k", {"k": 2, "beta0": -1}, "beta0=-1.0 is outside"),
    ],
)
def test_bad_values_reuse_the_metrics_own_checks(
    name: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(MetricSpecError, match=message) as caught:
        resolve(name, params)
    assert str(caught.value).startswith(f"metric {name!r}")


def test_resolve_binds_checked_parameters() -> None:
    bound = resolve("g_pass_at_k_tau", {"k": 3.0, "tau": 0.67, "alpha0": 2})
    assert bound.name == "g_pass_at_k_tau" and bound.params["k"] == 3
    assert isinstance(bound.params["k"], int)
    assert bound.point_params() == {"k": 3, "tau": 0.67}
    assert bound.interval_params() == {"k": 3, "tau": 0.67, "alpha0": 2}
    assert bound.label() == "g_pass_at_k_tau(k=3, tau=0.67, alpha0=2)"
    assert resolve("threshold_spectrum_at_k", {"k": 2, "weights": [0.5, 0.5]}).params[
        "weights"
    ] == (0.5, 0.5)
    assert resolve("cost_usd.mean_per_trial", {}).label() == "cost_usd.mean_per_trial"
    assert resolve("geo_spectrum_at_k", {"k": 3, "weights": None}).params["weights"] is None


def test_the_issues_example_configuration_parses() -> None:
    entries = yaml.safe_load(ISSUE_EXAMPLE)["gates"]["metric"]
    tau, graceful, cost, p95 = (parse_metric_gate(entry) for entry in entries)
    assert tau.metric.label() == "g_pass_at_k_tau(k=3, tau=0.67)"
    assert (tau.minimum, tau.maximum, tau.bound, tau.scope) == (0.5, None, "lower", "suite")
    assert graceful.metric.name == "reliability.graceful_degradation"
    assert (graceful.minimum, graceful.scope, graceful.bound) == (80.0, "stimuli", None)
    assert cost.maximum == 0.05 and cost.metric.info.usage
    assert p95.maximum == 120.0 and p95.minimum is None
    assert split_metric_spec(entries[0]) == (
        "g_pass_at_k_tau",
        {"k": 3, "tau": 0.67},
        {"min": 0.5, "bound": "lower"},
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"metric": "pass_at_k", "k": 2}, "needs 'min' or 'max'"),
        ({"k": 2, "min": 0.5}, "needs a 'metric' key naming the metric; valid: pass_at_k"),
        (["pass_at_k"], "must be a mapping"),
        ({"metric": "pass_at_k", "k": 2, "min": 0.9, "max": 0.5}, "min 0.9 is above max 0.5"),
        ({"metric": "pass_at_k", "k": 2, "min": 50}, r"outside the metric's range \[0, 1\]"),
        ({"metric": "reliability.decay_curve", "min": 101}, r"range \[0, 100\]"),
        ({"metric": "cost_usd.total", "max": -1}, "range >= 0"),
        ({"metric": "pass_at_k", "k": 2, "min": True}, "min must be a number"),
        ({"metric": "pass_at_k", "k": 2, "min": "0.5"}, "min must be a number"),
        ({"metric": "pass_at_k", "k": 2, "min": math.inf}, "must be a finite number"),
        ({"metric": "pass_at_k", "k": 2, "min": 0.5, "scope": "stimulus"}, "scope 'stimulus'"),
        ({"metric": "cost_usd.total", "max": 1, "scope": "stimuli"}, "no per-stimulus value"),
        ({"metric": "pass_at_k", "k": 2, "min": 0.5, "bound": "low"}, "did you mean 'lower'"),
        ({"metric": "duration_s.p95", "max": 9, "bound": "upper"}, "no interval to take an"),
        ({"metric": "reliability.graceful_degradation", "min": 9, "bound": "lower"}, "interval"),
        (
            {"metric": "pass_at_k", "k": 2, "min": 0.5, "bound": "lower", "scope": "stimuli"},
            "scope: stimuli gates each stimulus's value",
        ),
        ({"metric": "pass_at_k", "k": 2, "min": 0.5, "confidence": 1.2}, r"outside \(0.5, 1\)"),
        (
            {"metric": "pass_at_k", "k": 2, "min": 0.5, "bound": "estimate", "confidence": 0.9},
            "confidence has no effect",
        ),
        ({"metric": "duration_s.mean", "max": 9, "confidence": 0.9}, "confidence has no effect"),
        ({"metric": "pass_at_k", "k": 2, "min": 0.5, "tag": 3}, "tag must be a non-empty string"),
        ({"metric": "pass_at_k", "k": 2, "min": 0.5, "name": ""}, "name must be a non-empty"),
        ({"metric": "pass_at_k", "min": 0.5}, "needs parameter 'k'"),
    ],
)
def test_bad_gate_entries_are_refused_clearly(entry: Any, message: str) -> None:
    with pytest.raises(MetricSpecError, match=message):
        parse_metric_gate(entry)


def test_gate_keys_are_kept() -> None:
    gate = parse_metric_gate(
        {
            "metric": "bayes",
            "min": 0.6,
            "max": 0.99,
            "bound": "lower",
            "confidence": 0.9,
            "tag": "core",
            "name": "bayes floor",
        }
    )
    assert gate[1:] == (0.6, 0.99, "lower", "suite", "core", 0.9, "bayes floor")
    usage = parse_metric_gate({"metric": "cost_usd.mean_per_trial", "max": 0.05, "bound": "upper"})
    assert usage.bound == "upper"
