"""Every metric a gate can name, with its parameters, interval and the data it needs.

Issue 14's gate kind ``metric`` names a metric and gives its parameters::

    - metric: g_pass_at_k_tau   # a name of this registry
      k: 3
      tau: 0.67                 # its own parameters, by their names
      min: 0.5                  # the gate's own keys (GATE_KEYS)
      bound: lower

This module knows which names exist and what they take; :mod:`gate.metrics.evaluate`
computes them. A gate specification is split and checked by
:func:`parse_metric_gate`; a metric name and its parameters by :func:`resolve`.
Both raise :class:`MetricSpecError` (a ``ValueError``) with the valid choices
and a did-you-mean suggestion.

Families (``MetricInfo.family``):

- ``pass``, ``spectrum``: reference 003's binary-outcome metrics (scorio 0.2.3
  names). Each is a function of every stimulus's (n, c) alone: the unbiased
  estimators average over all C(n, k) subsets of a stimulus's trials, so no
  trial order enters, and a ragged suite goes through the ``*_counts`` forms.
- ``categorical``: Bayes@N, avg@N, Max@k, on per-stimulus category counts
  (binary suites: [n - c, c] with rewards w = [0, 1]); order-free likewise.
- ``reliability``: reference 004's per-test summary as dot paths.
  ``decay_curve`` (entry k uses the first k runs) and ``graceful_degradation``
  (each pass weighted by its run position) depend on the trial order;
  ``variance_amplification`` (sd of the 0/1 outcomes) does not.
- ``usage``: cost, duration, tokens from per-trial usage values
  (:mod:`gate.metrics.usage`); no pass/fail counts needed.

Parameters are read from the metric's own signature, less those that are data
or belong to the gate (``EXCLUDED_PARAMETERS``); types and ranges are checked by
the metric's own validation (a probe evaluation at :func:`resolve` time).
"""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from gate.metrics import categorical, counts, pass_family, reliability, spectrum
from gate.metrics._validation import check_int

__all__ = [
    "EXCLUDED_PARAMETERS",
    "GATE_KEYS",
    "METRICS",
    "BoundMetric",
    "MetricGateSpec",
    "MetricInfo",
    "MetricSpecError",
    "Parameter",
    "metric_names",
    "parse_metric_gate",
    "resolve",
    "split_metric_spec",
]

Family = Literal["pass", "spectrum", "categorical", "reliability", "usage"]
Bound = Literal["estimate", "lower", "upper"]
Scope = Literal["suite", "stimuli"]

#: Keys of a ``metric`` gate entry that belong to the gate, not to the metric.
GATE_KEYS: tuple[str, ...] = ("min", "max", "bound", "scope", "tag", "confidence", "name")
BOUNDS: tuple[Bound, ...] = ("estimate", "lower", "upper")
SCOPES: tuple[Scope, ...] = ("suite", "stimuli")

#: Signature parameters a gate cannot set, and why.
EXCLUDED_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "w": "the reward of each outcome category comes with the results, not the gate",
        "R0": "prior outcomes are per-stimulus data, not configuration",
        "prior_counts": "prior outcomes are per-stimulus data, not configuration",
        "lambda_": "an alias of lam; give lam",
        "confidence": "the gate's own key (the interval's level)",
        "bounds": "intervals are clipped to the metric's range",
    }
)

#: The largest k a gate may ask for. The posterior intervals build (k+1)² score
#: tables (k = 2,000: 200 MB, and 15 s for auc_at_k_ci), so a hostile k would
#: exhaust memory before the data could refuse it; k = 1,000 costs under 100 MB.
MAX_K = 1_000


class MetricSpecError(ValueError):
    """A metric gate specification is wrong: unknown name or key, missing or bad value."""


@dataclass(frozen=True)
class Parameter:
    """One parameter of a metric, from its signature.

    ``interval_only``: read only by the metric's interval (``alpha0``, ``beta0``:
    the Beta prior of the ``*_ci`` posterior).
    """

    name: str
    required: bool
    default: Any = None
    interval_only: bool = False

    def describe(self) -> str:
        """``k (required)`` or ``tau (default 1.0)``."""
        return (
            f"{self.name} (required)"
            if self.required
            else f"{self.name} (default {self.default!r})"
        )


@dataclass(frozen=True)
class Recipe:
    """How :mod:`gate.metrics.evaluate` computes a metric (the registry's private half).

    ``data``: what the metric reads: ``"counts"`` (n, c per stimulus),
    ``"categories"`` (category counts and rewards), ``"ordered"`` (each
    stimulus's outcomes in trial order) or ``"usage"`` (per-trial usage values).
    ``values``: counts form or per-stimulus function; ``per_stimulus``: whether it
    returns per-stimulus values (else a suite value, and each stimulus's value is
    the metric on that stimulus alone: ``alone`` gives them all at once, else the metric
    is evaluated once per distinct row); ``interval``: the ``*_ci_counts`` form.
    """

    data: Literal["counts", "categories", "ordered", "usage"]
    values: Callable[..., Any] | None = None
    per_stimulus: bool = True
    interval: Callable[..., Any] | None = None
    usage_path: tuple[str, str] | None = None
    alone: Callable[..., Any] | None = None


@dataclass(frozen=True)
class MetricInfo:
    """What the registry knows about one gateable metric.

    ``point``/``interval_function``: the public ``gate.metrics`` functions
    (scorio's matrix forms) whose signatures give ``parameters``;
    ``counts_form``: computable from per-stimulus (n, c) alone, so ragged suites
    and counts files work; ``order_dependent``: needs each stimulus's trials in
    order (``order_note`` says why or why not); ``per_stimulus``: has a value per
    stimulus (``scope: stimuli``); ``suite_value``: how the suite value is formed;
    ``value_range``: the values it can take; ``estimand``: what its interval is
    an interval of (``None``: no interval).
    """

    name: str
    family: Family
    summary: str
    parameters: tuple[Parameter, ...]
    counts_form: bool
    order_dependent: bool
    order_note: str
    per_stimulus: bool
    suite_value: str
    value_range: tuple[float, float]
    estimator: str
    point: Callable[..., Any] | None = None
    interval_function: Callable[..., Any] | None = None
    estimand: str | None = None
    interval_method: str | None = None
    alias_of: str | None = None
    recipe: Recipe = field(default=Recipe("counts"), repr=False)

    @property
    def has_interval(self) -> bool:
        """True when the metric has an interval a gate can take a bound from."""
        return self.estimand is not None

    @property
    def usage(self) -> bool:
        """True for cost/duration/tokens: needs per-trial usage values, not pass/fail counts."""
        return self.family == "usage"

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called ``name``, or ``None``."""
        return next((p for p in self.parameters if p.name == name), None)


class BoundMetric(NamedTuple):
    """A metric and checked parameters, ready for :func:`gate.metrics.evaluate.evaluate`.

    ``params`` holds every parameter given (the metric's defaults are not filled
    in); ``k`` is an ``int``.
    """

    info: MetricInfo
    params: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.info.name

    def point_params(self) -> dict[str, Any]:
        """Parameters of the point metric (those not only for the interval)."""
        return {
            key: value
            for key, value in self.params.items()
            if not _is_interval_only(self.info, key)
        }

    def interval_params(self) -> dict[str, Any]:
        """Parameters of the interval: all of them (``alpha0``, ``beta0`` included)."""
        return dict(self.params)

    def label(self) -> str:
        """``g_pass_at_k_tau(k=3, tau=0.67)``: the metric as a report names it."""
        inner = ", ".join(f"{key}={value!r}" for key, value in self.params.items())
        return f"{self.name}({inner})" if inner else self.name


def _is_interval_only(info: MetricInfo, name: str) -> bool:
    parameter = info.parameter(name)
    return parameter is not None and parameter.interval_only


# --- the catalogue ---------------------------------------------------------------

_ORDER_FREE = (
    "order-free: a function of each stimulus's (n, c) only (the unbiased estimate "
    "averages over all C(n, k) subsets of its trials)"
)
_CATEGORICAL_ORDER_FREE = "order-free: a function of each stimulus's category counts only"
_MEAN = "mean over stimuli of the per-stimulus values (scorio: mean over the rows of R)"
_BLEND = (
    "blend of suite means (scorio's dataset-level form); a stimulus's own value is "
    "the metric on that stimulus alone"
)
_UNBIASED = "unbiased finite-sample estimate (hypergeometric over size-k subsets)"
_BETA = "beta posterior ({prior}), normal approx."
_BETA_DELTA = "beta posterior ({prior}), delta method, normal approx."
_LATENT = "these stimuli re-run, not a new sample of stimuli"


def _signature_parameters(
    point: Callable[..., Any], interval: Callable[..., Any] | None
) -> tuple[Parameter, ...]:
    """Parameters after the data argument, less EXCLUDED_PARAMETERS (interval-only flagged)."""
    found: list[Parameter] = []
    for function, interval_only in ((point, False), (interval, True)):
        if function is None:
            continue
        for parameter in list(inspect.signature(function).parameters.values())[1:]:
            if parameter.name in EXCLUDED_PARAMETERS or any(
                p.name == parameter.name for p in found
            ):
                continue
            required = parameter.default is inspect.Parameter.empty
            found.append(
                Parameter(
                    parameter.name, required, None if required else parameter.default, interval_only
                )
            )
    return tuple(found)


def _binary(
    name: str,
    family: Family,
    summary: str,
    values: Callable[..., Any],
    interval: Callable[..., Any],
    latent: str,
    *,
    per_stimulus: bool = True,
    delta: bool = False,
    alias_of: str | None = None,
) -> MetricInfo:
    point = getattr(pass_family, name, None) or getattr(spectrum, name)
    interval_function = getattr(pass_family, f"{name}_ci", None) or getattr(spectrum, f"{name}_ci")
    return MetricInfo(
        name=name,
        family=family,
        summary=summary,
        parameters=_signature_parameters(point, interval_function),
        counts_form=True,
        order_dependent=False,
        order_note=_ORDER_FREE,
        per_stimulus=True,
        suite_value=_MEAN if per_stimulus else _BLEND,
        value_range=(0.0, 1.0),
        estimator=_UNBIASED + (", mean over stimuli" if per_stimulus else ", blended at the suite"),
        point=point,
        interval_function=interval_function,
        estimand=(
            f"{latent} (p_i: stimulus i's pass probability), over {_LATENT}; a posterior "
            "summary, calibrated on average over its prior, not for a given agent (a gate "
            "decides on the n_eff suite interval or the estimate: docs/metrics.md)"
        ),
        interval_method=_BETA_DELTA if delta else _BETA,
        alias_of=alias_of,
        recipe=Recipe("counts", values, per_stimulus, interval),
    )


def _categorical(
    name: str,
    summary: str,
    values: Callable[..., Any],
    interval: Callable[..., Any],
    *,
    per_stimulus: bool,
    estimator: str,
    estimand: str,
    method: str,
    alone: Callable[..., Any] | None = None,
) -> MetricInfo:
    point = getattr(categorical, name)
    interval_function = getattr(categorical, f"{name}_ci")
    return MetricInfo(
        name=name,
        family="categorical",
        summary=summary,
        parameters=_signature_parameters(point, interval_function),
        counts_form=True,
        order_dependent=False,
        order_note=_CATEGORICAL_ORDER_FREE,
        per_stimulus=True,
        suite_value=_MEAN,
        value_range=(0.0, 1.0),
        estimator=estimator,
        point=point,
        interval_function=interval_function,
        estimand=estimand,
        interval_method=method,
        recipe=Recipe("categories", values, per_stimulus, interval, alone=alone),
    )


def _decay_point(outcomes: Any) -> int:
    """The decay curve's last point, k = N: the plug-in pass^N over all runs, in percent."""
    return reliability.reliability_decay_curve(outcomes)[-1]


_RELIABILITY_SUITE = (
    "mean over stimuli of the per-stimulus integers (scope: stimuli gates each one, "
    "reporting the worst)"
)


def _reliability(
    name: str, summary: str, values: Callable[..., Any], *, ordered: bool, note: str, estimator: str
) -> MetricInfo:
    return MetricInfo(
        name=f"reliability.{name}",
        family="reliability",
        summary=summary,
        parameters=(),
        counts_form=not ordered,
        order_dependent=ordered,
        order_note=note,
        per_stimulus=True,
        suite_value=_RELIABILITY_SUITE,
        value_range=(0.0, 100.0),
        estimator=estimator,
        recipe=Recipe("ordered" if ordered else "counts", values, True),
    )


def _usage(name: str, summary: str, estimator: str, *, interval: bool = False) -> MetricInfo:
    field_name, statistic = name.split(".")
    return MetricInfo(
        name=name,
        family="usage",
        summary=summary,
        parameters=(),
        counts_form=False,
        order_dependent=False,
        order_note="order-free: a statistic of the per-trial values",
        per_stimulus=False,
        suite_value="over the trials that report the value (trial-weighted)",
        value_range=(0.0, math.inf),
        estimator=estimator,
        estimand=(
            f"mean {field_name} per trial over stimuli like these (each run as often as here); "
            "conservative for these stimuli re-run"
            if interval
            else None
        ),
        interval_method="studentized cluster bootstrap over stimuli" if interval else None,
        recipe=Recipe("usage", usage_path=(field_name, statistic)),
    )


def _catalogue() -> dict[str, MetricInfo]:
    entries = [
        _binary("pass_at_k", "pass", "P(at least one of k trials passes): capability",
                counts.pass_at_k_counts, pass_family.pass_at_k_ci_counts,
                "mean of latent pass@k = 1-(1-p_i)^k"),
        _binary("pass_hat_k", "pass", "P(all k trials pass): consistency",
                counts.pass_hat_k_counts, pass_family.pass_hat_k_ci_counts,
                "mean of latent pass^k = p_i^k"),
        _binary("unanimous_at_k", "pass", "alias of pass_hat_k",
                counts.pass_hat_k_counts, pass_family.pass_hat_k_ci_counts,
                "mean of latent pass^k = p_i^k", alias_of="pass_hat_k"),
        _binary("g_pass_at_k", "pass", "G-Pass@k at tau = 1 (= pass^k)",
                pass_family.g_pass_at_k_counts, pass_family.g_pass_at_k_ci_counts,
                "mean of latent p_i^k"),
        _binary("g_pass_at_k_tau", "pass", "P(at least ceil(tau*k) of k trials pass)",
                pass_family.g_pass_at_k_tau_counts, pass_family.g_pass_at_k_tau_ci_counts,
                "mean of latent P(Binomial(k, p_i) >= max(1, ceil(tau*k)))"),
        _binary("mg_pass_at_k", "pass", "mG-Pass@k: G-Pass@k_tau averaged over tau in [0.5, 1]",
                pass_family.mg_pass_at_k_counts, pass_family.mg_pass_at_k_ci_counts,
                "mean of latent 2*integral_{0.5}^{1} P(Binomial(k, p_i) >= ceil(tau*k)) dtau"),
        _binary("maj_at_k", "pass", "P(a strict majority of k trials pass)",
                pass_family.maj_at_k_counts, pass_family.maj_at_k_ci_counts,
                "mean of latent P(Binomial(k, p_i) >= floor(k/2) + 1)"),
        _binary("auc_at_k", "pass", "area under pass@1..pass@k (trapezoid)",
                pass_family.auc_at_k_counts, pass_family.auc_at_k_ci_counts,
                "mean of the trapezoid over latent 1-(1-p_i)^j, j = 1..k"),
        _binary("geom_at_k", "spectrum", "per-stimulus pass@k^a * pass^k^b, averaged",
                spectrum.geom_at_k_counts, spectrum.geom_at_k_ci_counts,
                "mean of latent (1-(1-p_i)^k)^a (p_i^k)^b (delta method)", delta=True),
        _binary("geom_ds_at_k", "spectrum", "suite pass@k^a * suite pass^k^b",
                spectrum.geom_ds_at_k_counts, spectrum.geom_ds_at_k_ci_counts,
                "P^a U^b of the means P, U of latent 1-(1-p_i)^k and p_i^k (delta method)",
                per_stimulus=False, delta=True),
        _binary("threshold_spectrum_at_k", "spectrum", "sum_r w_r G-Pass with threshold r",
                spectrum.threshold_spectrum_at_k_counts, spectrum.threshold_spectrum_at_k_ci_counts,
                "mean of latent sum_r w_r P(Binomial(k, p_i) >= r)"),
        _binary("geo_spectrum_at_k", "spectrum", "suite pass@k^lam * suite spectrum^(1-lam)",
                spectrum.geo_spectrum_at_k_counts, spectrum.geo_spectrum_at_k_ci_counts,
                "P^lam S^(1-lam) of the means of latent pass@k and spectrum (delta method)",
                per_stimulus=False, delta=True),
        _binary("geo_spectrum_star_at_k", "spectrum", "sqrt(suite pass@k * suite mG-Pass@k)",
                spectrum.geo_spectrum_star_at_k_counts, spectrum.geo_spectrum_star_at_k_ci_counts,
                "sqrt(P M) of the means of latent pass@k and mG-Pass@k (delta method)",
                per_stimulus=False, delta=True),
        _categorical(
            "bayes", "Bayes@N: posterior mean reward (uniform Dirichlet prior)",
            categorical.bayes_counts, categorical.bayes_ci_counts, per_stimulus=False,
            alone=categorical.bayes_each_counts,
            estimator="Bayes@N posterior mean (uniform Dirichlet prior), mean over stimuli",
            # What the interval covers, simulated (tests/metrics/test_bayes_coverage.py): the
            # score's own expectation, which shrinks toward the prior; not the mean reward.
            estimand=(
                "expected Bayes@N at these trial counts: the mean of Σ_j w_j·(N·pi_ij + 1)/"
                "(N + C + 1) ((N·p_i + 1)/(N + 2) for pass/fail), below the mean expected "
                f"reward of a good agent until N is large; over {_LATENT}"
            ),
            method="dirichlet posterior (Bayes@N, uniform prior), normal approx.",
        ),
        _categorical(
            "avg", "avg@N: mean reward per stimulus, averaged (the pass rate for pass/fail)",
            categorical.avg_counts, categorical.avg_ci_counts, per_stimulus=False,
            alone=categorical.avg_each_counts,
            estimator="mean over stimuli of each stimulus's mean reward",
            estimand=f"mean expected reward w·pi_i, over {_LATENT}",
            method="avg@N ± z·(T/N)·sigma_Bayes (Bayes@N, uniform prior), normal approx.",
        ),
        _categorical(
            "max_at_k", "Max@k: expected best reward among k trials (pass@k for pass/fail)",
            categorical.max_at_k_counts, categorical.max_at_k_ci_counts, per_stimulus=True,
            estimator="unbiased finite-sample estimate over size-k subsets, mean over stimuli",
            estimand=f"mean expected best reward among k fresh trials, over {_LATENT}",
            method="dirichlet posterior (Bayes@N, uniform prior), normal approx.",
        ),
        _reliability(
            "decay_curve", "mcptest's decay curve at k = N: floor(100 (c/N)^N)", _decay_point,
            ordered=True,
            note=(
                "order-dependent: entry k of the curve uses the first k runs (the gated last "
                "point uses all N; the curve the report draws needs the order)"
            ),
            estimator="last point of mcptest's decay curve (plug-in pass^N, floored percent)",
        ),
        _reliability(
            "variance_amplification", "mcptest: sd of the 0/1 runs over 0.5, in percent",
            reliability.variance_amplification_counts, ordered=False,
            note="order-free: sqrt(c(n-c))/n, from (n, c) alone",
            estimator="mcptest's variance amplification (rounded percent)",
        ),
        _reliability(
            "graceful_degradation", "mcptest: position-weighted pass share, in percent",
            reliability.graceful_degradation, ordered=True,
            note="order-dependent: run i's pass weighs i (late failures cost more)",
            estimator="mcptest's graceful degradation (rounded percent)",
        ),
        _usage("cost_usd.total", "total cost in USD of the trials that report one",
               "sum over the trials that report a cost"),
        _usage("cost_usd.mean_per_trial", "mean cost in USD per trial",
               "total / trials reporting a cost (trial-weighted ratio)", interval=True),
        _usage("cost_usd.per_pass", "cost in USD per passing trial",
               "total / passes among the trials reporting a cost (None without a pass)"),
        _usage("duration_s.mean", "mean trial duration in seconds",
               "mean over the trials that report a duration"),
        _usage("duration_s.p50", "median trial duration in seconds",
               "numpy 'linear' quantile (Hyndman & Fan type 7)"),
        _usage("duration_s.p95", "95th percentile of trial durations in seconds",
               "numpy 'linear' quantile (Hyndman & Fan type 7)"),
        _usage("tokens.total", "total tokens of the trials that report them",
               "sum over the trials that report tokens"),
        _usage("tokens.mean_per_trial", "mean tokens per trial",
               "total / trials reporting tokens"),
    ]  # fmt: skip
    return {entry.name: entry for entry in entries}


#: Every gateable metric by name (read-only).
METRICS: Mapping[str, MetricInfo] = MappingProxyType(_catalogue())


def metric_names(family: Family | None = None) -> tuple[str, ...]:
    """Registry names, optionally of one family.

    >>> metric_names("reliability")  # doctest: +NORMALIZE_WHITESPACE
    ('reliability.decay_curve', 'reliability.variance_amplification',
     'reliability.graceful_degradation')
    """
    return tuple(name for name, info in METRICS.items() if family in (None, info.family))


# --- resolving names and parameters ---------------------------------------------------


def _suggest(word: str, choices: tuple[str, ...]) -> str:
    """``"; did you mean 'x'?"`` for the closest choice (difflib), else ``";"``."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ";"


def _check_value(info: MetricInfo, parameter: Parameter, value: Any) -> Any:
    """Refuse what no metric parameter is (strings, mappings, None where None is no default)."""
    where = f"metric {info.name!r} parameter {parameter.name!r}"
    if value is None:
        if parameter.default is None and not parameter.required:
            return None
        raise MetricSpecError(f"{where} needs a value, found null")
    if isinstance(value, str | bytes | Mapping):
        raise MetricSpecError(f"{where} must be a number or a list of numbers, found {value!r}")
    if isinstance(value, list | tuple):
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int | float):
                raise MetricSpecError(f"{where} must be a list of numbers, found item {item!r}")
        return tuple(value)
    return value


def _probe(info: MetricInfo, params: Mapping[str, Any]) -> None:
    """Run the metric once on a tiny suite so its own validation checks the parameters.

    One stimulus with k trials, all passed: every parameter check of the point
    metric and of its interval runs, with no data-dependent failure (a 0 raised
    to a negative power needs a failing stimulus).
    """
    recipe = info.recipe
    if recipe.data in ("ordered", "usage") or recipe.values is None:
        return
    k = int(params.get("k", 1))
    point = {key: value for key, value in params.items() if not _is_interval_only(info, key)}
    if recipe.data == "counts":
        data: tuple[Any, ...] = ([k], [k])
    else:
        data = ([[0, k]],)
    try:
        recipe.values(*data, **point)
        if recipe.interval is not None:
            recipe.interval(*data, **params, confidence=0.95, bounds=(0.0, 1.0))
    except (ValueError, TypeError) as error:
        raise MetricSpecError(f"metric {info.name!r}: {error}") from None


def resolve(name: Any, params: Mapping[str, Any] | None = None) -> BoundMetric:
    """Check a metric name and its parameters; return them bound together.

    Unknown name or parameter, a missing required parameter, a wrong type or an
    out-of-range value raise :class:`MetricSpecError` naming the valid choices
    (with a did-you-mean suggestion); type and range errors are the metric's own
    (``k`` must be a whole number ``>= 1`` and at most ``MAX_K``; k against the
    trials is checked on the data).

    >>> resolve("g_pass_at_k_tau", {"k": 3, "tau": 0.67}).label()
    'g_pass_at_k_tau(k=3, tau=0.67)'
    >>> resolve("g_pass_at_k_tua", {"k": 3})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gate.metrics.registry.MetricSpecError: unknown metric 'g_pass_at_k_tua'; did you mean ...
    >>> resolve("g_pass_at_k_tau", {"k": 3, "tau": 1.5})
    Traceback (most recent call last):
    ...
    gate.metrics.registry.MetricSpecError: metric 'g_pass_at_k_tau': tau=1.5 is outside [0.0, 1.0]
    """
    if not isinstance(name, str):
        raise MetricSpecError(f"metric must be a name (a string), found {name!r}")
    info = METRICS.get(name)
    if info is None:
        raise MetricSpecError(
            f"unknown metric {name!r}{_suggest(name, tuple(METRICS))} valid: " + ", ".join(METRICS)
        )
    given = dict(params or {})
    known = tuple(p.name for p in info.parameters)
    for key in given:
        if not isinstance(key, str) or key not in known:
            reason = EXCLUDED_PARAMETERS.get(key) if isinstance(key, str) else None
            if reason is not None:
                raise MetricSpecError(f"metric {info.name!r} does not take {key!r} here: {reason}")
            accepted = ", ".join(p.describe() for p in info.parameters) or "none"
            raise MetricSpecError(
                f"metric {info.name!r} has no parameter {key!r}"
                f"{_suggest(str(key), known + GATE_KEYS)} its parameters: {accepted}"
            )
    for parameter in info.parameters:
        if parameter.required and parameter.name not in given:
            accepted = ", ".join(p.describe() for p in info.parameters)
            raise MetricSpecError(
                f"metric {info.name!r} needs parameter {parameter.name!r}; "
                f"its parameters: {accepted}"
            )
    checked = {key: _check_value(info, info.parameter(key), value) for key, value in given.items()}  # type: ignore[arg-type]
    if "k" in checked:
        try:
            checked["k"] = check_int(checked["k"], "k", minimum=1)
        except ValueError as error:
            raise MetricSpecError(f"metric {info.name!r}: {error}") from None
        if checked["k"] > MAX_K:
            raise MetricSpecError(
                f"metric {info.name!r}: k={checked['k']} is above the largest k a gate "
                f"takes, {MAX_K:,}"
            )
    _probe(info, checked)
    return BoundMetric(info, MappingProxyType(checked))


# --- gate specifications ----------------------------------------------------------


class MetricGateSpec(NamedTuple):
    """A checked ``metric`` gate entry: the bound metric and the gate's own keys.

    ``bound`` is ``None`` when the entry does not say (the configuration's default
    applies); ``confidence`` likewise. ``minimum``/``maximum``: at least one is set.
    """

    metric: BoundMetric
    minimum: float | None
    maximum: float | None
    bound: Bound | None
    scope: Scope
    tag: str | None
    confidence: float | None
    name: str | None


def split_metric_spec(spec: Mapping[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Split a gate entry into (metric name, metric parameters, gate keys); no checks.

    >>> split_metric_spec({"metric": "pass_at_k", "k": 3, "min": 0.8, "tag": "core"})
    ('pass_at_k', {'k': 3}, {'min': 0.8, 'tag': 'core'})
    """
    params = {key: value for key, value in spec.items() if key != "metric" and key not in GATE_KEYS}
    gate = {key: value for key, value in spec.items() if key in GATE_KEYS}
    return spec.get("metric"), params, gate


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MetricSpecError(f"{what} must be a number, found {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise MetricSpecError(f"{what} must be a finite number, found {value!r}")
    return number


def _text(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise MetricSpecError(f"{what} must be a non-empty string, found {value!r}")
    return value


def parse_metric_gate(spec: Mapping[str, Any]) -> MetricGateSpec:
    """Check a ``metric`` gate entry (a mapping as read from YAML) and split it.

    Metric keys go to :func:`resolve`; gate keys are checked here: ``min``/``max``
    finite numbers inside the metric's range (at least one, min <= max);
    ``bound`` one of estimate/lower/upper, lower/upper only for a metric with an
    interval and only at ``scope: suite``; ``scope`` suite or stimuli (stimuli
    needs per-stimulus values: not usage metrics); ``confidence`` in (0.5, 1),
    not with ``bound: estimate``; ``tag``, ``name`` non-empty strings.

    >>> gate = parse_metric_gate({"metric": "g_pass_at_k_tau", "k": 3, "tau": 0.67,
    ...                           "min": 0.5, "bound": "lower"})
    >>> gate.metric.label(), gate.minimum, gate.maximum, gate.bound, gate.scope
    ('g_pass_at_k_tau(k=3, tau=0.67)', 0.5, None, 'lower', 'suite')
    >>> parse_metric_gate({"metric": "duration_s.p95", "max": 120, "bound": "upper"})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gate.metrics.registry.MetricSpecError: metric 'duration_s.p95' has no interval to take ...
    """
    if not isinstance(spec, Mapping):
        raise MetricSpecError(
            f"a metric gate must be a mapping with a 'metric' key, found {spec!r}"
        )
    if "metric" not in spec:
        raise MetricSpecError(
            "a metric gate needs a 'metric' key naming the metric; valid: " + ", ".join(METRICS)
        )
    name, params, gate = split_metric_spec(spec)
    metric = resolve(name, params)
    info = metric.info
    where = f"metric {info.name!r}"
    low, high = info.value_range
    limits: dict[str, float | None] = {}
    for key in ("min", "max"):
        if gate.get(key) is None:
            limits[key] = None
            continue
        value = _number(gate[key], f"{where} {key}")
        if not low <= value <= high:
            span = f"[{low:g}, {high:g}]" if math.isfinite(high) else f">= {low:g}"
            raise MetricSpecError(f"{where} {key}: {value:g} is outside the metric's range {span}")
        limits[key] = value
    minimum, maximum = limits["min"], limits["max"]
    if minimum is None and maximum is None:
        raise MetricSpecError(f"{where} gate needs 'min' or 'max' (or both)")
    if minimum is not None and maximum is not None and minimum > maximum:
        raise MetricSpecError(f"{where}: min {minimum:g} is above max {maximum:g}")
    scope = gate.get("scope", "suite")
    if scope not in SCOPES:
        raise MetricSpecError(f"{where} scope {scope!r}; choose one of {', '.join(SCOPES)}")
    if scope == "stimuli" and not info.per_stimulus:
        raise MetricSpecError(
            f"{where} is a suite statistic with no per-stimulus value; remove scope: stimuli"
        )
    bound = gate.get("bound")
    if bound is not None and bound not in BOUNDS:
        raise MetricSpecError(
            f"{where} bound {bound!r}{_suggest(str(bound), BOUNDS)} "
            f"choose one of {', '.join(BOUNDS)}"
        )
    if bound in ("lower", "upper"):
        if not info.has_interval:
            with_interval = ", ".join(n for n, i in METRICS.items() if i.has_interval)
            raise MetricSpecError(
                f"{where} has no interval to take an {bound} bound from; use bound: estimate "
                f"(a metric with an interval: {with_interval})"
            )
        if scope == "stimuli":
            raise MetricSpecError(
                f"{where}: bound {bound} is the suite interval's; scope: stimuli gates each "
                "stimulus's value (bound: estimate)"
            )
    confidence = gate.get("confidence")
    if confidence is not None:
        confidence = _number(confidence, f"{where} confidence")
        if not 0.5 < confidence < 1.0:
            raise MetricSpecError(f"{where} confidence {confidence:g} is outside (0.5, 1)")
        if bound == "estimate" or not info.has_interval:
            raise MetricSpecError(
                f"{where}: the gate decides on the point estimate, so confidence has no effect; "
                "give bound: lower or upper (a metric with an interval), or remove confidence"
            )
    return MetricGateSpec(
        metric=metric,
        minimum=minimum,
        maximum=maximum,
        bound=bound,
        scope=scope,
        tag=_text(gate.get("tag"), f"{where} tag"),
        confidence=confidence,
        name=_text(gate.get("name"), f"{where} name"),
    )
