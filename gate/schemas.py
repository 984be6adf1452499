"""Load the JSON Schemas shipped in ``schemas/`` and validate with precise error locations.

Two validators read the same schema files. jsonschema-rs (compiled; about 100
times faster than ``jsonschema`` on our records) answers "valid?"; only when it
says no does ``jsonschema`` validate again to find and word the error, so a
million valid records never pay for ``jsonschema`` and an invalid one gets the
same precise message as ever. ``jsonschema`` is imported on that first error
(it costs ~60 ms of start-up). tests/scale checks that both agree.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gate.errors import InputError, Provenance

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError, _Error
    from referencing import Registry

SCHEMA_NAMES = ("results", "trial-record", "counts", "config", "report", "common")
_PREFIX = "https://eval-gate.dev/schemas/"


def schema_text(name: str) -> str:
    """The text of ``schemas/<name>.schema.json`` as shipped in the package."""
    if name not in SCHEMA_NAMES:
        raise KeyError(name)
    filename = f"{name}.schema.json"
    try:
        return (resources.files("gate._schemas") / filename).read_text("utf-8")
    except ModuleNotFoundError:
        # Running from a checkout (editable install, or tests on the tree): the
        # wheel's gate/_schemas is the top-level schemas/ folder itself.
        return (Path(__file__).resolve().parent.parent / "schemas" / filename).read_text("utf-8")


@cache
def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_text(name))
    return loaded


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource

    pairs = [(f"{_PREFIX}{n}.schema.json", Resource.from_contents(schema(n))) for n in SCHEMA_NAMES]
    return Registry().with_resources(pairs)


@cache
def validator(name: str) -> Draft202012Validator:
    """The precise (and slow) validator of schema ``name``."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema(name), registry=_registry())


@cache
def _fast(name: str, many: bool) -> Any | None:
    """jsonschema-rs validator of ``name`` (of an array of them when ``many``); None without it."""
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - jsonschema alone is correct, only slower
        return None
    registry = jsonschema_rs.Registry(
        [(f"{_PREFIX}{n}.schema.json", schema(n)) for n in SCHEMA_NAMES]
    )
    target: dict[str, Any] = schema(name)
    if many:
        # One call for a whole chunk of records: the per-call cost is most of the work.
        target = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": f"{_PREFIX}{name}.schema.json"},
        }
    return jsonschema_rs.validator_for(target, registry=registry)


def is_valid(instance: Any, name: str) -> bool:
    """Whether ``instance`` is valid against schema ``name`` (fast; no error message)."""
    fast = _fast(name, False)
    if fast is not None:
        try:
            return bool(fast.is_valid(instance))
        except (ValueError, TypeError):
            pass  # a value JSON has no word for (a YAML date, an int key): jsonschema judges
    return bool(validator(name).is_valid(instance))


def first_invalid(instances: Sequence[Any], name: str, start: int = 0) -> int | None:
    """Index of the first of ``instances[start:]`` that is invalid against ``name``, or None."""
    many = _fast(name, True)
    if many is not None:
        try:
            if many.is_valid(instances[start:] if start else instances):
                return None
        except (ValueError, TypeError):
            pass
    return next((i for i in range(start, len(instances)) if not is_valid(instances[i], name)), None)


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path) or "/"


def _found(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)  # YAML has dates, for one
    return text if len(text) <= 80 else text[:77] + "..."


_SIGNS = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _describe(error: ValidationError) -> tuple[str, str | None, str | None]:
    """(message, expected, found) in words a user can act on."""
    kind = error.validator
    value: Any = error.validator_value
    schema_: Any = error.schema
    if kind == "required":
        missing = [k for k in value if isinstance(error.instance, dict) and k not in error.instance]
        return f"missing field {missing[0]!r}" if missing else error.message, None, None
    if kind == "additionalProperties":
        allowed = sorted(schema_.get("properties", {}))
        keys = error.instance if isinstance(error.instance, dict) else {}
        extra = [k for k in keys if k not in allowed]
        name = extra[0] if extra else "?"
        expected = "one of " + ", ".join(allowed) if allowed else None
        close = difflib.get_close_matches(str(name), allowed, n=1)
        guess = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown field {name!r}{guess}", expected, None
    if kind == "anyOf" and all("required" in s for s in value):
        names = [s["required"][0] for s in value]
        if "outcome" in names:
            expected = "one of " + ", ".join(names) + " (or status error/skipped)"
            return "the trial has no outcome", expected, None
        return "missing field", "at least one of " + ", ".join(names), None
    if kind == "enum":
        choices = "one of " + ", ".join(map(json.dumps, value))
        return "value not allowed", choices, _found(error.instance)
    if kind == "const":
        return "value not allowed", json.dumps(value), _found(error.instance)
    if kind == "type":
        said = _said(error)
        return "wrong type", f"{value} ({said})" if said else str(value), _found(error.instance)
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sign = _SIGNS[kind]
        return "number out of range", f"a number {sign} {value}", _found(error.instance)
    if kind in ("minLength", "minItems", "minProperties"):
        return "too short", f"at least {value}", _found(error.instance)
    if kind in ("maxLength", "maxItems", "maxProperties"):
        unit = {"maxLength": "characters", "maxItems": "items", "maxProperties": "fields"}[kind]
        return "too long", f"at most {value} {unit}", _found(error.instance)
    if kind == "uniqueItems":
        return "an item is repeated", "each item once", _found(error.instance)
    if kind in ("oneOf", "anyOf") and (said := _said(error)):
        return "value not allowed", said, _found(error.instance)
    if kind == "pattern":  # a regular expression is no answer to a user: the field's words are
        expected = _said(error) or f"a string matching {value}"
        return "malformed value", expected, _found(error.instance)
    return error.message, None, None


def _unknown_field(errors: Sequence[ValidationError], path: Any) -> ValidationError | None:
    """An ``additionalProperties`` error at ``path``, among ``errors`` and the alternatives
    of their oneOf/anyOf (breadth first), or None."""
    pending = list(errors)
    while pending:
        error = pending.pop(0)
        if error.validator == "additionalProperties" and error.absolute_path == path:
            return error
        pending += error.context or ()
    return None


def _said(error: ValidationError) -> str | None:
    """The first sentence of the failing schema's description, or of the oneOf/anyOf of the
    same value that holds it (a rate is a number or a string: its words are on the choice)."""
    level: _Error | None = error
    while level is not None:
        described = level.schema.get("description") if isinstance(level.schema, dict) else None
        if isinstance(described, str) and described:
            sentence = described.split(". ")[0].rstrip(".")
            word = sentence.split(" ")[0]
            plain = word[:1].isupper() and (len(word) == 1 or word[1:].islower())  # not "JSON"
            return sentence[:1].lower() + sentence[1:] if plain else sentence
        if level.relative_path:  # the parent judged the object that holds this value
            return None
        level = level.parent
    return None


def validate(instance: Any, name: str, where: Provenance) -> None:
    """Raise :class:`InputError` naming ``where`` plus the JSON pointer of the first problem."""
    if is_valid(instance, name):
        return
    from jsonschema.exceptions import best_match

    errors = list(validator(name).iter_errors(instance))
    if not errors:
        # The two validators disagree; jsonschema is the reference (tests/scale keeps them equal).
        return
    # The deepest error is the most specific one ("/status" beats "the trial has no outcome").
    depth = max(len(e.absolute_path) for e in errors)
    error = best_match(e for e in errors if len(e.absolute_path) == depth)
    if isinstance(error.instance, dict):
        # A mapping where a number or a mapping may stand ({min: 0.5, scoep: stimuli}):
        # best_match takes the number's branch ("expected a rate ... found {...}"); the
        # mapping's own problem, an unknown field, is the one to name.
        error = _unknown_field(errors, error.absolute_path) or error
    message, expected, found = _describe(error)
    inner = (where.pointer or "") + _pointer(error.absolute_path) if error.absolute_path else None
    located = Provenance(where.file, where.line, inner or where.pointer)
    raise InputError(message, located, expected=expected, found=found)
