"""The gate configuration: ``.eval-gate.yml`` plus CLI/action overrides → :class:`GateConfig`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from gate import limits
from gate.errors import ConfigError, InputError, Provenance, shorten
from gate.rates import MAX_FLAKINESS, parse_rate
from gate.reading import read_whole
from gate.schemas import validate

DEFAULT_CONFIG_FILE = ".eval-gate.yml"
Bound = Literal["estimate", "lower", "upper"]
Scope = Literal["suite", "stimuli"]
OnInconclusive = Literal["inconclusive", "fail", "pass"]
ON_INCONCLUSIVE: tuple[OnInconclusive, ...] = ("inconclusive", "fail", "pass")
#: a regression gate's detectable margin D, beyond its own margin, when not configured:
#: at 50 stimuli × 5 trials SE(Δ) ≈ 0.037, so D = δ + 0.05 passes an unchanged agent about
#: 85% of the time and a 15-point drop under 1% (docs/regression.md, tests/compare).
DETECTABLE_SLACK = 0.05
#: per stimulus a drop is measured on one stimulus's trials only: with 10 trials per side a
#: stimulus that always passes rules out a 22-point drop, while 5 points would need 52.
DETECTABLE_STIMULUS = 0.25
#: the gate a run gets when none is configured: reference 001's "is this reliable for CI?"
#: threshold on the suite pass rate, decided on its interval like any honest gate.
DEFAULT_GATE_TARGET = 0.7

#: gate kind → (metric it reads, "min" or "max" target, default scope)
GATE_KINDS: dict[str, tuple[str, str, Scope]] = {
    "threshold": ("score", "min", "suite"),
    "pass_rate": ("pass_rate", "min", "suite"),
    "pass_at_k": ("pass_at_k", "min", "suite"),
    "pass_hat_k": ("pass_hat_k", "min", "suite"),
    "max_flakiness": ("flakiness", "max", "stimuli"),
    "max_ci_half_width": ("pass_rate", "max", "suite"),
    "max_regression": ("pass_rate", "max", "suite"),
    "min_improvement": ("pass_rate", "min", "suite"),
    # any metric of gate.metrics.METRICS, by name (gate/metric_gates.py); min or max
    "metric": ("metric", "min", "suite"),
}
#: gates that compare the results with a baseline run.
REGRESSION_KINDS = ("max_regression", "min_improvement")
#: metrics that carry an interval, so a gate may decide on its bound.
INTERVAL_METRICS = ("pass_rate", "pass_at_k", "pass_hat_k")
#: the gate options a user can set on the command line or as action inputs.
OVERRIDE_NAMES = (
    "threshold",
    "k",
    "min_pass_rate",
    "min_pass_at_k",
    "min_pass_hat_k",
    "max_flakiness",
    "max_ci_half_width",
    "bound",
    "confidence",
    "interval",
    "errors",
    "max_regression",
    "min_improvement",
    "detectable",
    "on_inconclusive",
    "sequential",
)


@dataclass(frozen=True)
class GateSpec:
    """One configured gate, normalised."""

    kind: str
    target: float
    metric: str
    k: int | None = None
    scope: Scope = "suite"
    tag: str | None = None
    #: only the stimuli of this suite (results holding several); ``None``: every suite.
    suite: str | None = None
    bound: Bound = "estimate"
    estimator: Literal["unbiased", "plugin"] = "unbiased"
    #: level of the interval or bound this gate decides on; ``None``: the configuration's.
    confidence: float | None = None
    #: regression gates: the margin D that decides the other outcome (see docs/regression.md).
    detectable: float | None = None
    #: the gate was not configured: the run got it because no gate was.
    default: bool = False
    #: a ``metric`` gate's direction (its entry gives ``min`` or ``max``).
    goal: Literal["min", "max"] | None = None
    #: a ``metric`` gate's metric with its parameters (gate.metrics.registry.BoundMetric).
    resolved: Any = None
    #: the name the configuration gives the gate (``name:``), shown in reports.
    label: str | None = None

    @property
    def direction(self) -> Literal["min", "max"]:
        """Whether the target is a minimum or a maximum."""
        if self.goal is not None:
            return self.goal
        return "min" if GATE_KINDS[self.kind][1] == "min" else "max"


@dataclass(frozen=True)
class GateConfig:
    """Everything that decides the verdict, whichever way it was given."""

    k: int | None = None
    confidence: float = 0.95
    interval: str = "mid-p"
    errors: Literal["fail", "exclude"] = "fail"
    bound: Bound = "estimate"
    gates: tuple[GateSpec, ...] = ()
    source: str | None = None
    #: what an inconclusive verdict exits with (the report still says inconclusive).
    on_inconclusive: OnInconclusive = "inconclusive"
    #: interval gates decide on confidence sequences (valid at every look).
    sequential: bool = False


def _check_values(value: Any, path: str, at: str = "") -> None:
    """Mapping keys are strings; integers fit in a float (every number becomes one)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(
                    f"{path} at {at or '/'}: the key {shorten(repr(key), 60)} is not a string"
                )
            _check_values(item, path, f"{at}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_values(item, path, f"{at}/{index}")
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)
        except OverflowError:
            raise ConfigError(
                f"{path} at {at or '/'}: the integer is beyond the range of a number"
            ) from None


def read_config_file(path: str) -> dict[str, Any]:
    """The YAML configuration at ``path``: read through :mod:`gate.reading` (a regular file,
    at most 1 MiB), UTF-8, bounded in depth and size before it is built, then schema-checked."""
    try:
        raw = read_whole(path, limits.CONFIG_BYTES)
    except InputError as error:
        raise ConfigError(f"cannot read the configuration: {error}") from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: the configuration is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    # PyYAML is imported here, not at the top: a run without a configuration file (most CLI
    # runs, every run of the bench) does not pay its 12 ms.
    from gate.config_yaml import parse_config_yaml

    data = parse_config_yaml(text, path)
    if data is None:
        return {}
    _check_values(data, path)
    try:
        validate(data, "config", Provenance(path))
    except InputError as error:
        raise ConfigError(str(error)) from None
    result: dict[str, Any] = data
    return result


def _rate(value: Any, what: str, where: str, **bounds: Any) -> float:
    """A configured rate as a fraction (:func:`gate.rates.parse_rate`), its error placed."""
    try:
        return parse_rate(value, what, **bounds)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None


def _level(value: Any, what: str, where: str) -> float:
    """A confidence level: a rate strictly between 0.5 and 1."""
    return _rate(value, what, where, low=0.5, open_low=True, open_high=True)


def _integer(value: Any, what: str, where: str) -> int | None:
    """k as an int: JSON Schema's ``integer`` also admits 3.0, which is read as 3."""
    if value is None:
        return None
    if isinstance(value, bool) or not float(value).is_integer():
        raise ConfigError(f"{where}: {what} must be an integer, found {value!r}")
    return int(value)


def _specs(kind: str, value: Any, defaults: GateConfig, where: str) -> list[GateSpec]:
    metric, direction, scope = GATE_KINDS[kind]
    items = value if isinstance(value, list) else [value]
    specs = []
    for item in items:
        shorthand = isinstance(item, int | float | str)
        entry: dict[str, Any] = {direction: item} if shorthand else dict(item)
        other = "max" if direction == "min" else "min"
        if other in entry:
            raise ConfigError(f"{where}: gate {kind} takes {direction!r}, not {other!r}")
        if direction not in entry:
            raise ConfigError(f"{where}: gate {kind} needs {direction!r}")
        most = MAX_FLAKINESS if kind == "max_flakiness" else None
        target = _rate(entry[direction], f"gate {kind} {direction}", where, most=most)
        confidence = entry.get("confidence")
        if confidence is not None:
            confidence = _level(confidence, f"gate {kind} confidence", where)
        chosen_metric = entry.get("metric", metric)
        default_bound = defaults.bound if chosen_metric in INTERVAL_METRICS else "estimate"
        if kind in REGRESSION_KINDS:
            # These gates always decide on the one-sided bounds of the paired difference.
            if entry.get("bound", "interval") not in ("interval", "lower", "upper"):
                raise ConfigError(
                    f"{where}: gate {kind} always decides on the one-sided bounds of the "
                    f"paired difference Δ; remove bound: {entry['bound']}"
                )
            entry["bound"] = default_bound = "upper" if kind == "max_regression" else "lower"
        elif "detectable" in entry:
            raise ConfigError(
                f"{where}: gate {kind} takes no detectable margin (only max_regression and "
                "min_improvement do)"
            )
        spec = GateSpec(
            kind=kind,
            target=target,
            metric=chosen_metric,
            k=_integer(entry.get("k"), f"gate {kind} k", where),
            scope=entry.get("scope", scope),
            tag=entry.get("tag"),
            suite=entry.get("suite"),
            bound=_interval_bound(
                kind,
                direction,
                entry.get("bound", default_bound if direction == "min" else "estimate"),
                where,
            ),
            estimator=entry.get("estimator", "unbiased"),
            confidence=confidence,
        )
        if kind in REGRESSION_KINDS:
            spec = replace(spec, detectable=_detectable(spec, entry.get("detectable"), where))
        _check_spec(spec, where)
        specs.append(spec)
    return specs


def _interval_bound(kind: str, direction: str, bound: str, where: str) -> Bound:
    """``interval`` as the bound that must clear the target: ``lower`` for a min, ``upper`` for
    a max. The opposite bound used to pass whatever the data could not decide; gates now say
    "inconclusive" there, and ``on_inconclusive: pass`` is how a team asks for that."""
    if kind in REGRESSION_KINDS:
        return "upper" if kind == "max_regression" else "lower"
    if bound == "estimate" or kind in ("max_flakiness", "max_ci_half_width"):
        return bound  # type: ignore[return-value]  # _check_spec refuses a bound there
    wanted: Bound = "lower" if direction == "min" else "upper"
    if bound not in ("interval", wanted):
        raise ConfigError(
            f"{where}: gate {kind} takes bound: {wanted} (or interval), not {bound}: a {direction} "
            f"gate passes when its {wanted} bound clears the target and fails when the other "
            "bound misses it, otherwise it is inconclusive; to let undecided runs pass, set "
            "on_inconclusive: pass"
        )
    return wanted


def _detectable(spec: GateSpec, given: Any, where: str) -> float:
    """The regression gate's margin D that decides the outcome opposite to its claim."""
    if given is None:
        slack = DETECTABLE_STIMULUS if spec.scope == "stimuli" else DETECTABLE_SLACK
        # rounded: 0.1 + 0.05 is 0.15 here, not 0.15000000000000002
        return min(1.0, round(spec.target + slack, 12))
    value = _rate(given, f"gate {spec.kind} detectable", where)
    if not spec.target <= value <= 1.0:
        what = "harm margin max" if spec.kind == "max_regression" else "claimed gain min"
        raise ConfigError(
            f"{where}: gate {spec.kind} detectable {value:g} must lie between its {what} "
            f"({spec.target:g}) and 1"
        )
    return value


def _check_spec(spec: GateSpec, where: str) -> None:
    if not 0.0 <= spec.target <= 1.0:
        raise ConfigError(
            f"{where}: gate {spec.kind} target {spec.target} out of range; expected a value in "
            "[0, 1]"
        )
    if spec.confidence is not None and not 0.5 < spec.confidence < 1.0:
        raise ConfigError(
            f"{where}: gate {spec.kind} confidence {spec.confidence} out of range; "
            "expected a level in (0.5, 1)"
        )
    if spec.kind in REGRESSION_KINDS:
        if spec.metric not in ("pass_rate", "pass_hat_k", "score"):
            raise ConfigError(
                f"{where}: gate {spec.kind} compares pass_rate, pass_hat_k or score, "
                f"not {spec.metric}"
            )
        if spec.estimator != "unbiased":
            raise ConfigError(
                f"{where}: gate {spec.kind} compares the unbiased per-stimulus values; "
                "remove estimator: plugin"
            )
        if spec.scope == "stimuli" and spec.kind == "min_improvement":
            raise ConfigError(
                f"{where}: gate min_improvement decides on the suite only; remove scope: stimuli"
            )
        if spec.scope == "stimuli" and spec.target != 0.0:
            raise ConfigError(
                f"{where}: gate max_regression with scope: stimuli tests each stimulus for any "
                "drop (one-sided Fisher exact test, Holm-adjusted) and has no margin; "
                f"use max: 0, not {spec.target:g}"
            )
        return
    if spec.bound != "estimate" and spec.metric not in INTERVAL_METRICS:
        raise ConfigError(
            f"{where}: gate {spec.kind} on {spec.metric} has no interval to take a bound from; "
            "use bound: estimate, or metric: pass_rate"
        )
    if spec.kind in ("max_flakiness", "max_ci_half_width") and spec.bound != "estimate":
        raise ConfigError(f"{where}: gate {spec.kind} does not take a bound")
    if (
        spec.confidence is not None
        and spec.kind != "max_ci_half_width"
        and spec.bound == "estimate"
    ):
        raise ConfigError(
            f"{where}: gate {spec.kind} decides on the point estimate, so confidence has no "
            "effect; give bound: interval, or remove confidence"
        )


def build_config(data: Mapping[str, Any], source: str | None = None) -> GateConfig:
    """Normalise a (schema-valid) configuration mapping."""
    where = source or "configuration"
    confidence = _level(data.get("confidence", 0.95), "confidence", where)
    base = GateConfig(
        k=_integer(data.get("k"), "k", where),
        confidence=confidence,
        interval=data.get("interval", "mid-p"),
        errors=data.get("errors", "fail"),
        bound=data.get("bound", "estimate"),
        source=source,
        on_inconclusive=data.get("on_inconclusive", "inconclusive"),
        sequential=bool(data.get("sequential", False)),
    )
    specs: list[GateSpec] = []
    for kind, value in (data.get("gates") or {}).items():
        if kind == "metric":
            from gate.metric_gates import parse_metric_gates

            specs.extend(parse_metric_gates(value, where, k=base.k, bound=base.bound))
        else:
            specs.extend(_specs(kind, value, base, where))
    if not specs:
        # Nothing passes by default: a run with no configured gate gets one.
        specs.insert(0, default_gate())
    return replace(base, gates=tuple(specs))


def default_gate() -> GateSpec:
    """The gate of a run that configures none: suite pass rate ≥ 0.7, decided on its interval."""
    return GateSpec("pass_rate", DEFAULT_GATE_TARGET, "pass_rate", bound="lower", default=True)


def _boolean(name: str, text: str) -> bool:
    """An option or input that is a switch: true/false (YAML 1.2 core spellings), or 1/0."""
    if text in ("true", "True", "TRUE", "1"):
        return True
    if text in ("false", "False", "FALSE", "0"):
        return False
    raise ConfigError(f"option {name}: expected true or false, found {text!r}")


def _rate_option(name: str, text: str) -> float | str:
    """A rate given as an option or input: "20%" as written (the configuration reads it as
    a file's value), anything else as a number."""
    return text.strip() if text.strip().endswith("%") else _number(name, text)


def _number(name: str, text: str, *, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"option {name}: expected {kind}, found {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ConfigError(f"option {name}: expected a finite number, found {text!r}")
    return value


def default_config_path() -> str | None:
    """``.eval-gate.yml`` when the working folder holds one: a link that leads nowhere
    counts (reading it says so), where ``os.path.exists`` ignored it and the default gate
    applied without a word."""
    return DEFAULT_CONFIG_FILE if os.path.lexists(DEFAULT_CONFIG_FILE) else None


def load_config(
    path: str | None,
    overrides: Mapping[str, str | None] | None = None,
    *,
    origin: str = "option",
) -> GateConfig:
    """Read ``path`` (or ``.eval-gate.yml`` when present) and apply option overrides.

    An override replaces every configured gate of its kind with one suite-level gate.
    ``origin`` names where overrides come from (``option`` on the command line, ``input``
    in the action): an error that an override caused names it (``option threshold: ...``),
    not the file it was merged into.
    """
    try:
        return _load_config(path, overrides or {})
    except ConfigError as error:
        raise _blame(error, path, overrides or {}, origin) from None


def _blame(
    error: ConfigError, path: str | None, overrides: Mapping[str, str | None], origin: str
) -> ConfigError:
    """``error`` reworded to name the override that caused it, when one did.

    When the file alone is valid, each given override is tried alone on it: the first
    that fails is the culprit. An error of the file itself keeps naming the file.
    """
    given = {name: value for name, value in overrides.items() if value not in (None, "")}
    if not given or set(given) - set(OVERRIDE_NAMES):
        return error
    try:
        _load_config(path, {})
    except ConfigError:
        return error
    if path is None:
        path = default_config_path()
    for name, value in given.items():
        try:
            _load_config(path, {name: value})
        except ConfigError as alone:
            return ConfigError(f"{origin} {name}: {_without_place(str(alone), path)}")
    together = ", ".join(given)
    return ConfigError(f"{origin}s {together} together: {_without_place(str(error), path)}")


def _without_place(message: str, path: str | None) -> str:
    """The message without the place it names first: the file, ``option NAME`` or
    ``options``, with or without a JSON pointer (``.eval-gate.yml at /interval: ...``)."""
    file = rf"{re.escape(path)}|" if path else ""
    place = rf"(?:{file}options?(?: [a-z_]+)?|configuration)(?: at /\S*)?: "
    return re.sub(rf"\A{place}", "", message)


def _load_config(path: str | None, overrides: Mapping[str, str | None]) -> GateConfig:
    if path is None:
        path = default_config_path()
    data = dict(read_config_file(path)) if path else {}
    given = {k: v for k, v in overrides.items() if v not in (None, "")}
    unknown = sorted(set(given) - set(OVERRIDE_NAMES))
    if unknown:
        raise ConfigError(
            f"unknown option(s) {', '.join(unknown)}; expected some of {', '.join(OVERRIDE_NAMES)}"
        )
    if "confidence" in given:
        data["confidence"] = _rate_option("confidence", str(given["confidence"]))
    if "k" in given:
        data["k"] = int(_number("k", str(given["k"]), integer=True))
    if "sequential" in given:
        data["sequential"] = _boolean("sequential", str(given["sequential"]))
    for name in ("interval", "errors", "bound", "on_inconclusive"):
        if name in given:
            data[name] = given[name]
    gates = dict(data.get("gates") or {})
    for option, kind in (
        ("threshold", "threshold"),
        ("min_pass_rate", "pass_rate"),
        ("min_pass_at_k", "pass_at_k"),
        ("min_pass_hat_k", "pass_hat_k"),
        ("max_flakiness", "max_flakiness"),
        ("max_ci_half_width", "max_ci_half_width"),
        ("max_regression", "max_regression"),
        ("min_improvement", "min_improvement"),
    ):
        if option in given:
            gates[kind] = _rate_option(option, str(given[option]))
            if kind in REGRESSION_KINDS and "detectable" in given:
                gates[kind] = {
                    "max" if kind == "max_regression" else "min": gates[kind],
                    "detectable": _rate_option("detectable", str(given["detectable"])),
                }
    if "detectable" in given and not any(o in given for o in ("max_regression", "min_improvement")):
        raise ConfigError(
            "option detectable: applies to --max-regression or --min-improvement; give one "
            "(or set detectable on the gate in the configuration file)"
        )
    if gates:
        data["gates"] = gates
    try:
        validate(data, "config", Provenance(path or "options"))
    except InputError as error:
        raise ConfigError(str(error)) from None
    return build_config(data, path)
