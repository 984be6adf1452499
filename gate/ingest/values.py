"""Value parsing shared by every adapter: "is this a pass?", "is this a score in [0, 1]?".

Two families. Text cells (CSV) carry no type, so :func:`parse_bool`, :func:`finite_number`,
:func:`unit_score` and :func:`trial_index` accept spellings (``yes``/``no``, ``"0.75"``). JSON
values carry their type, so the ``json_*`` readers require it (a JSON boolean for a verdict, a
JSON number for a score, a JSON integer for a trial index) and refuse ``"passed": "yes"`` with
an error naming file, line or pointer, field, what was expected and what was found.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterable
from typing import Any

from gate import limits
from gate.errors import InputError, Provenance

_TRUE = frozenset({"true", "1", "yes", "y", "t", "pass", "passed", "ok", "success"})
_FALSE = frozenset({"false", "0", "no", "n", "f", "fail", "failed", "failure"})


def warn(path: str, message: str) -> None:
    """Report something suspicious about an input that is still readable.

    Adapters have no channel of their own for this; the pipeline collects
    ``UserWarning``s raised while loading and shows them in the report.
    """
    warnings.warn(f"{path}: {message}", UserWarning, stacklevel=3)


def parse_bool(value: Any, where: Provenance, column: str) -> bool | None:
    """A pass/fail cell: booleans, 1/0, yes/no, true/false, pass/fail; empty is unknown."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(
        f"column {column!r} is not a boolean",
        where,
        expected="true/false, 1/0, yes/no or pass/fail",
        found=repr(value),
    )


#: a number written with a decimal comma, as spreadsheets in many locales export it
_DECIMAL_COMMA = re.compile(r"[-+]?[0-9]+,[0-9]+")


def finite_number(value: Any, where: Provenance, field: str) -> float:
    """A finite number (a JSON number, or a numeric string from a CSV cell)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(f"{field} is not a number", where, expected="a number", found=repr(value))
    try:
        number = float(value)
    except ValueError:
        comma = isinstance(value, str) and _DECIMAL_COMMA.fullmatch(value.strip()) is not None
        expected = "a number with a decimal point (0.91, not 0,91)" if comma else "a number"
        raise InputError(
            f"{field} is not a number", where, expected=expected, found=repr(value)
        ) from None
    except OverflowError:  # an integer past the float range: as infinite as 1e400
        number = math.inf
    return _finite(number, where, field, found=repr(value))


def _finite(number: float, where: Provenance, field: str, found: str) -> float:
    if not math.isfinite(number):
        raise InputError(f"{field} is not finite", where, expected="a finite number", found=found)
    return number


def unit_score(value: Any, where: Provenance, field: str) -> float:
    """A score that must already lie in [0, 1]."""
    return _in_unit_range(finite_number(value, where, field), value, where, field)


def _in_unit_range(number: float, value: Any, where: Provenance, field: str) -> float:
    if not 0.0 <= number <= 1.0:
        raise InputError(
            f"{field} is out of range", where, expected="a number in [0, 1]", found=repr(value)
        )
    return number


# -- JSON values: the type is part of the data --------------------------------------------------


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def json_found(value: Any) -> str:
    """``found`` of an error: the JSON type and the value as written (shortened)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"{json_type(value)} {text if len(text) <= 60 else text[:59] + '…'}"


def json_boolean(value: Any, where: Provenance, field: str) -> bool | None:
    """A JSON boolean; ``null`` (or an absent key) is unknown. A string or a number is refused:
    ``"false"`` would otherwise read as a pass in any language's truthiness."""
    if value is None or isinstance(value, bool):
        return value
    raise InputError(
        f"{field} is not a boolean",
        where,
        expected="a JSON boolean (true or false)",
        found=json_found(value),
    )


def json_number(value: Any, where: Provenance, field: str) -> float:
    """A finite JSON number (not a string that looks like one, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"{field} is not a number", where, expected="a JSON number", found=json_found(value)
        )
    try:
        number = float(value)
    except OverflowError:  # an integer literal past the float range: as infinite as 1e400
        number = math.inf
    if math.isfinite(number):
        return number  # the common case: no words needed
    return _finite(number, where, field, found=json_found(value))


def metadata_number(value: Any, where: Provenance, field: str) -> int | float | None:
    """An optional number kept as metadata: None when it is no JSON number (metadata is
    lenient), the value itself when it is one, an error when it is past the float range
    (an integer of 400 digits would break every later conversion)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    json_number(value, where, field)
    number: int | float = value
    return number


def json_unit_score(value: Any, where: Provenance, field: str) -> float:
    """A JSON number that must already lie in [0, 1]."""
    return _in_unit_range(json_number(value, where, field), value, where, field)


def json_index(value: Any, where: Provenance, field: str = "trial") -> int:
    """A 0-based trial index: a JSON integer ≥ 0 (``3.0`` is accepted, ``"3"`` is not)."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    # is_integer() is False for inf and nan; an int of any size is never turned into a float.
    whole = isinstance(number, int) or (isinstance(number, float) and number.is_integer())
    if number is None or not whole or number < 0:
        raise InputError(
            f"{field} is not a trial index",
            where,
            expected="a JSON integer ≥ 0",
            found=json_found(value),
        )
    return int(number)


def message_text(value: Any) -> str | None:
    """Why a trial failed or errored, as kept: the text (a non-string is shown as JSON) without
    surrounding blanks, at most :data:`gate.limits.TRIAL_MESSAGE_CHARS` characters (a longer
    one is cut, marked with an ellipsis); None when there is none."""
    if value is None or value == "" or value is False:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = text.strip()
    if not text:
        return None
    maximum = limits.TRIAL_MESSAGE_CHARS.value()
    return text if len(text) <= maximum else text[: maximum - 1] + "…"


def clip_unit(number: float) -> float:
    """Clip into [0, 1]; callers that clip keep the raw value and say so."""
    return min(1.0, max(0.0, number))


def trial_index(value: Any, where: Provenance, field: str = "trial") -> int:
    """A 0-based trial index: an integer ≥ 0 (``"3"`` and ``3.0`` are accepted)."""
    if isinstance(value, bool):
        raise InputError(f"{field} is not an integer", where, found=repr(value))
    if isinstance(value, int):
        number: float = value if value >= 0 else math.nan  # any size: never made a float
    elif (text := str(value).strip()).isascii() and text.isdigit():
        # Digits are read exactly: through a float, two indices past 2**53 could meet.
        if len(text) > limits.INTEGER_DIGITS.value():
            raise InputError(
                f"{field} is too long: {len(text)} digits",
                where,
                expected=f"a trial index ({limits.INTEGER_DIGITS.advice()})",
            )
        return int(text)
    else:
        try:
            number = float(text)
        except ValueError:
            number = math.nan
    if isinstance(number, float) and not (number.is_integer() and number >= 0):
        raise InputError(
            f"{field} is not a trial index", where, expected="an integer ≥ 0", found=repr(value)
        )
    return int(number)


class Appearance:
    """Trial indices in order of appearance, for sources that carry none."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], int] = {}  # a dict: a Counter is slower to look up

    def next(self, suite: str, stimulus: str) -> int:
        index = self._seen.get((suite, stimulus), 0)
        self._seen[(suite, stimulus)] = index + 1
        return index

    def numbers(self, suites: Iterable[str], stimuli: Iterable[str]) -> list[int]:
        """:meth:`next` of each (suite, stimulus) pair, in order."""
        seen = self._seen
        get = seen.get
        given = []
        for key in zip(suites, stimuli, strict=True):
            index = get(key, 0)
            seen[key] = index + 1
            given.append(index)
        return given

    @property
    def given(self) -> int:
        """How many indices were given in all (a sum over the stimuli: ask once, at the end;
        summed per record it made reading quadratic)."""
        return sum(self._seen.values())

    def copy(self) -> Appearance:
        """The numbering as it is now (for :meth:`restore`)."""
        copy = Appearance()
        copy._seen = self._seen.copy()
        return copy

    def restore(self, earlier: Appearance) -> None:
        """Number on as ``earlier`` (a :meth:`copy`, given up to this) would."""
        self._seen = earlier._seen
