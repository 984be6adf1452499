"""One convention for rates: a fraction from 0 to 1, or a string with a percent sign.

Every rate a user configures (gate targets and margins, confidence levels, the score
threshold of score-only formats, the plan's expected pass rate) is read here, whether
it comes from ``.eval-gate.yml``, a command-line option or an action input. ``0.2`` and
``"20%"`` are the same rate. A number that could be meant two ways is refused with
both readings, never silently taken as one of them:

- a number above 1 (``20``) reads as a percent written without its sign (20%, that is
  ``0.2``) or as a fraction (2000%, which no rate can be);
- ``max_flakiness`` above 0.5 (``1``): flakiness (minority outcomes / trials) is at most
  50%, so as a fraction the gate could never fail; as a percent it is 1%.

The report may still *display* percentages ("20.0%"): display is not configuration.
"""

from __future__ import annotations

import math
import re

from gate.errors import ConfigError

#: flakiness, min(c, n-c)/n, never exceeds one half.
MAX_FLAKINESS = 0.5
_PERCENT = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*%\s*")
#: what a rate may be written as, for error messages.
SPELLINGS = 'a fraction from 0 to 1 or a percent such as "20%"'


def _g(value: float) -> str:
    return f"{value:.10g}"


def pct(rate: float) -> str:
    """A rate written back as a percent, as given: never rounded to a whole percent (a
    99.5% interval is not a 100% one).

    >>> pct(0.95), pct(0.995), pct(0.8)
    ('95%', '99.5%', '80%')
    """
    return f"{_g(100.0 * rate)}%"


def parse_rate(
    value: object,
    what: str,
    *,
    low: float = 0.0,
    high: float = 1.0,
    open_low: bool = False,
    open_high: bool = False,
    most: float | None = None,
) -> float:
    """``value`` (a number, or a string "0.2" or "20%") as a fraction; :class:`ConfigError`
    naming ``what`` when it is not one, is out of range, or could be read two ways.

    ``low``/``high`` (each open or closed) bound the rate; ``most`` is the largest value the
    measured quantity can take (flakiness: 0.5): a plain number above it and at most 1 is
    refused as ambiguous, since as a fraction the gate could never fail.

    >>> parse_rate("20%", "max"), parse_rate(0.2, "max"), parse_rate("0.95", "confidence")
    (0.2, 0.2, 0.95)
    >>> parse_rate(20, "gate max_flakiness max")
    Traceback (most recent call last):
    ...
    gate.errors.ConfigError: gate max_flakiness max 20 can be read two ways: rates are fractions, \
so 20 would be 2000%; if you mean 20%, write 0.2 or "20%"
    """
    if isinstance(value, bool):
        raise ConfigError(f"{what}: expected {SPELLINGS}, found {value!r}")
    percent = False
    if isinstance(value, str):
        match = _PERCENT.fullmatch(value)
        text = match.group(1) if match else value.strip()
        percent = match is not None
        try:
            number = float(text)
        except ValueError:
            raise ConfigError(f"{what}: expected {SPELLINGS}, found {value!r}") from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise ConfigError(f"{what}: expected {SPELLINGS}, found {value!r}")
    if not math.isfinite(number):
        raise ConfigError(f"{what} must be a finite number, found {value!r}")
    written = f'"{_g(number)}%"' if percent else _g(number)
    fraction = number / 100.0 if percent else number
    if not percent and 1.0 < number <= 100.0:
        raise ConfigError(
            f"{what} {written} can be read two ways: rates are fractions, so {written} would be "
            f'{_g(number * 100)}%; if you mean {written}%, write {_g(number / 100)} or "{written}%"'
        )
    if not percent and most is not None and most < number <= 1.0:
        raise ConfigError(
            f"{what} {written} can be read two ways: as a fraction it is {_g(number * 100)}%, "
            f"above the {_g(most * 100)}% this can ever reach, so it could never fail; if you "
            f'mean {written}%, write {_g(number / 100)} or "{written}%"'
        )
    below = fraction <= low if open_low else fraction < low
    above = fraction >= high if open_high else fraction > high
    if below or above:
        left, right = "(" if open_low else "[", ")" if open_high else "]"
        raise ConfigError(
            f"{what} {written} out of range; expected a value in {left}{_g(low)}, {_g(high)}"
            f"{right} ({_g(low * 100)}%–{_g(high * 100)}%), as a fraction or a percent "
            'such as "20%"'
        )
    return fraction
