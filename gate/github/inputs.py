"""The action's inputs, read the way GitHub's runner hands them to a container.

The runner passes input ``name`` as the environment variable ``INPUT_<NAME>``: upper-cased,
spaces turned into ``_``, hyphens kept (which is why every input name is snake_case). Every
input declared in ``action.yml`` arrives, with its default when the workflow sets none.
``tests/github/test_action_contract.py`` checks that this module, ``action.yml`` and the
documentation tables name the same inputs with the same defaults.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from gate.config import OVERRIDE_NAMES
from gate.errors import ConfigError, EvalGateError
from gate.ingest.tabular import parse_column_map
from gate.rates import parse_rate

CommentMode = Literal["off", "always", "on-failure", "on-change", "recreate"]
FailOn = Literal["gates", "errors", "never"]
COMMENT_MODES: tuple[CommentMode, ...] = ("off", "always", "on-failure", "on-change", "recreate")
FAIL_ON: tuple[FailOn, ...] = ("gates", "errors", "never")
#: as --duplicates (gate.ingest.duplicates.POLICIES; that module is not imported here).
DUPLICATE_POLICIES = ("error", "pool", "newest")
#: the comment id goes into an HTML comment marker, so it is limited to harmless characters.
_COMMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

#: every input and its default, exactly as in action.yml ("" = not set).
INPUT_DEFAULTS: dict[str, str] = {
    "results": "",
    "config": "",
    "format": "auto",
    "map": "",
    "pass_threshold": "",
    "scorer": "",
    "junit_flakefinder": "false",
    "suite": "",
    "duplicates": "error",
    **dict.fromkeys(OVERRIDE_NAMES, ""),
    "baseline": "",
    "baseline_format": "",
    "baseline_map": "",
    "report": "eval-gate-report.json",
    "summary": "true",
    "comment": "always",
    "comment_id": "default",
    "fail_on": "gates",
    "github_token": "${{ github.token }}",
}
REQUIRED_INPUTS = ("results",)


class ActionInputError(EvalGateError):
    """An action input has a value the action cannot use (exit code 2)."""


class Secret:
    """A token that never shows itself in a repr, a log line or a traceback."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


@dataclass(frozen=True)
class ActionInputs:
    """The inputs, parsed; one field per input of action.yml (overrides grouped in one map)."""

    results: tuple[str, ...]
    config: str | None
    format: str
    #: reader options, as ``eval-gate check --map/--pass-threshold/--scorer/...``.
    map: dict[str, str]
    pass_threshold: float | None
    scorer: str | None
    junit_flakefinder: bool
    suite: str | None
    duplicates: str
    overrides: dict[str, str | None]
    baseline: tuple[str, ...]
    #: the baseline's own format and map; None: as the results'
    baseline_format: str | None
    baseline_map: dict[str, str] | None
    report: str
    summary: bool
    comment: CommentMode
    comment_id: str
    fail_on: FailOn
    github_token: Secret


def env_name(input_name: str) -> str:
    """The variable the runner sets for an input (actions/runner ContainerActionHandler)."""
    return "INPUT_" + input_name.replace(" ", "_").upper()


def raw_input(env: Mapping[str, str], name: str) -> str:
    """An input's value, trimmed as actions/toolkit ``getInput`` does; its default if absent."""
    return env.get(env_name(name), INPUT_DEFAULTS[name]).strip()


def _lines(value: str) -> tuple[str, ...]:
    """One path or glob per line, as actions/upload-artifact's ``path``; blank lines ignored."""
    return tuple(line.strip() for line in value.splitlines() if line.strip())


def _boolean(name: str, value: str) -> bool:
    # The YAML 1.2 core schema booleans, as actions/toolkit getBooleanInput accepts them.
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    raise ActionInputError(f"input {name}: {value!r} is not a boolean; use true or false")


def _choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ActionInputError(f"input {name}: {value!r} is not one of {', '.join(choices)}")
    return value


def _column_map(value: str, name: str = "map") -> dict[str, str]:
    """``FIELD=COLUMN`` pairs separated by commas or newlines, as ``--map`` takes them."""
    try:
        return parse_column_map(value)
    except ValueError as error:
        raise ActionInputError(f"input {name}: {error}") from None


def _unit_number(name: str, value: str) -> float | None:
    """A rate input: a fraction (0.7) or a percent ("70%"), as everywhere (gate.rates)."""
    if not value:
        return None
    try:
        return parse_rate(value, f"input {name}")
    except ConfigError as error:
        raise ActionInputError(str(error)) from None


def _token(value: str) -> Secret:
    # The default's unexpanded expression means no runner expanded it (docker run by hand).
    return Secret("" if value.startswith("${{") else value)


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """Parse every input; :class:`ActionInputError` names the first one that is unusable."""
    results = _lines(raw_input(env, "results"))
    if not results:
        raise ActionInputError("input results is required: one results file or glob per line")
    comment_id = raw_input(env, "comment_id")
    if not _COMMENT_ID.fullmatch(comment_id) or "--" in comment_id:
        raise ActionInputError(
            f"input comment_id: {comment_id!r} must be 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, without '--' (it goes into an HTML comment)"
        )
    report = raw_input(env, "report")
    if not report:
        raise ActionInputError("input report: give a path for the JSON report")
    return ActionInputs(
        results=results,
        config=raw_input(env, "config") or None,
        format=raw_input(env, "format") or "auto",
        map=_column_map(raw_input(env, "map")),
        pass_threshold=_unit_number("pass_threshold", raw_input(env, "pass_threshold")),
        scorer=raw_input(env, "scorer") or None,
        junit_flakefinder=_boolean("junit_flakefinder", raw_input(env, "junit_flakefinder")),
        suite=raw_input(env, "suite") or None,
        duplicates=_choice("duplicates", raw_input(env, "duplicates"), DUPLICATE_POLICIES),
        overrides={name: raw_input(env, name) or None for name in OVERRIDE_NAMES},
        baseline=_lines(raw_input(env, "baseline")),
        baseline_format=raw_input(env, "baseline_format") or None,
        baseline_map=(
            _column_map(raw_input(env, "baseline_map"), "baseline_map")
            if raw_input(env, "baseline_map")
            else None
        ),
        report=report,
        summary=_boolean("summary", raw_input(env, "summary")),
        comment=cast(CommentMode, _choice("comment", raw_input(env, "comment"), COMMENT_MODES)),
        comment_id=comment_id,
        fail_on=cast(FailOn, _choice("fail_on", raw_input(env, "fail_on"), FAIL_ON)),
        github_token=_token(raw_input(env, "github_token")),
    )
