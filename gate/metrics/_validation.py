"""Input checks shared by every public function of :mod:`gate.metrics`.

Each public function checks its inputs exactly once, here, and the numeric
kernels behind it trust what they receive. Every error is a ``ValueError``
that says what is wrong and where (which row, which entry), so a user can find
the offending stimulus in a suite of thousands.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def _row_suffix(index: tuple[int, ...]) -> str:
    """Say where a bad value sits: nothing for a scalar, ``for row 2`` for a vector."""
    if not index:
        return ""
    if len(index) == 1:
        return f" for row {index[0]}"
    return " for entry [" + ", ".join(str(i) for i in index) + "]"


def _subscript(name: str, index: tuple[int, ...]) -> str:
    """``R[2, 3]`` for a matrix entry, ``n`` for a scalar."""
    if not index:
        return name
    return f"{name}[" + ", ".join(str(i) for i in index) + "]"


def _first_bad(mask: npt.NDArray[np.bool_]) -> tuple[int, ...]:
    flat = int(np.argmax(mask.ravel()))
    return tuple(int(i) for i in np.unravel_index(flat, mask.shape))


def _numeric_array(values: Any, name: str) -> npt.NDArray[Any]:
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a rectangular numeric array: {exc}") from exc
    if array.dtype == np.bool_:
        return array
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"{name} must hold numbers or booleans, not {array.dtype}")
    return array


def _check_finite(array: npt.NDArray[Any], name: str) -> None:
    if np.issubdtype(array.dtype, np.floating):
        bad = ~np.isfinite(array)
        if bad.any():
            idx = _first_bad(bad)
            raise ValueError(
                f"{_subscript(name, idx)} is {array[idx]}: NaN and infinity are not allowed"
            )


def _check_integral(array: npt.NDArray[Any], name: str) -> IntArray:
    _check_finite(array, name)
    if np.issubdtype(array.dtype, np.floating):
        bad = array != np.trunc(array)
        if bad.any():
            idx = _first_bad(bad)
            raise ValueError(f"{_subscript(name, idx)} = {array[idx]} is not a whole number")
    return array.astype(np.int64, copy=False)


def check_finite_values(values: Any, name: str) -> npt.NDArray[np.float64]:
    """Numbers as a float array; NaN and infinity are refused, naming the first one."""
    array = _numeric_array(values, name).astype(np.float64)
    _check_finite(array, name)
    return array


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int``; reject bools, fractions and NaN."""
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be an integer, got the boolean {value!r}")
    if isinstance(value, float | np.floating):
        as_float = float(value)
        if not math.isfinite(as_float) or as_float != math.trunc(as_float):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        result = int(as_float)
    else:
        try:
            result = operator.index(value)
        except TypeError:
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {name}={result}")
    return result


def check_float(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` inside the given (half-)open range."""
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be a number, got the boolean {value!r}")
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (result < low or (low_open and result == low)):
        bracket = "(" if low_open else "["
        raise ValueError(f"{name}={result} is outside {bracket}{low}, {high})")
    if high is not None and (result > high or (high_open and result == high)):
        bracket = ")" if high_open else "]"
        raise ValueError(f"{name}={result} is outside [{low}, {high}{bracket}")
    return result


def check_confidence(confidence: Any) -> float:
    """A confidence level strictly between 0 and 1."""
    return check_float(confidence, "confidence", low=0.0, high=1.0, low_open=True, high_open=True)


def check_prior(alpha0: Any, beta0: Any) -> tuple[float, float]:
    """Beta prior parameters: finite and strictly positive."""
    return (
        check_float(alpha0, "alpha0", low=0.0, low_open=True),
        check_float(beta0, "beta0", low=0.0, low_open=True),
    )


def check_bounds(bounds: Any) -> tuple[float, float] | None:
    """Optional ``(lo, hi)`` clipping bounds with ``lo <= hi``."""
    if bounds is None:
        return None
    try:
        lo_raw, hi_raw = bounds
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a (lo, hi) pair, got {bounds!r}") from None
    lo = check_float(lo_raw, "bounds[0]")
    hi = check_float(hi_raw, "bounds[1]")
    if lo > hi:
        raise ValueError(f"bounds must satisfy lo <= hi, got {bounds!r}")
    return lo, hi


def check_counts(n: Any, c: Any) -> tuple[IntArray, IntArray]:
    """Per-stimulus trial counts ``n`` and pass counts ``c``, broadcast together.

    Both must be whole numbers with ``n >= 1`` and ``0 <= c <= n``. Scalars are
    accepted and returned as 0-d arrays.
    """
    n_arr = _check_integral(_numeric_array(n, "n"), "n")
    c_arr = _check_integral(_numeric_array(c, "c"), "c")
    try:
        n_arr, c_arr = np.broadcast_arrays(n_arr, c_arr)
    except ValueError:
        raise ValueError(
            f"n and c must have the same shape, got {np.shape(n)} and {np.shape(c)}"
        ) from None
    if n_arr.size == 0:
        raise ValueError("n and c are empty: there are no stimuli to score")
    bad = n_arr < 1
    if bad.any():
        idx = _first_bad(bad)
        raise ValueError(
            f"n={n_arr[idx]}{_row_suffix(idx)}: every stimulus needs at least one trial"
        )
    bad = (c_arr < 0) | (c_arr > n_arr)
    if bad.any():
        idx = _first_bad(bad)
        raise ValueError(f"c={c_arr[idx]}{_row_suffix(idx)} is outside [0, n] with n={n_arr[idx]}")
    return n_arr, c_arr


def check_k_against(k: Any, n: IntArray) -> int:
    """``k`` must be a whole number with ``1 <= k <= n`` for every row."""
    k_int = check_int(k, "k", minimum=1)
    bad = n < k_int
    if bad.any():
        idx = _first_bad(bad)
        raise ValueError(f"k={k_int} exceeds the number of trials n={n[idx]}{_row_suffix(idx)}")
    return k_int


def check_rates(p: Any, name: str = "p") -> FloatArray:
    """Probabilities in ``[0, 1]``, any shape."""
    array = _numeric_array(p, name)
    _check_finite(array, name)
    rates = array.astype(np.float64, copy=False)
    bad = (rates < 0.0) | (rates > 1.0)
    if bad.any():
        idx = _first_bad(bad)
        raise ValueError(f"{name}={rates[idx]}{_row_suffix(idx)} is not a probability in [0, 1]")
    return rates


def check_rates_like(p: Any, shape: tuple[int, ...], name: str) -> FloatArray:
    """Probabilities in ``[0, 1]`` that broadcast against arrays of ``shape`` (the counts)."""
    rates = check_rates(p, name)
    try:
        np.broadcast_shapes(rates.shape, shape)
    except ValueError:
        raise ValueError(
            f"{name} must broadcast against c and n, got shapes {rates.shape} and {shape}"
        ) from None
    return rates


def check_rate_grid(p: Any, name: str) -> FloatArray:
    """A non-empty set of probabilities in ``[0, 1]``, flattened."""
    rates = check_rates(p, name).ravel()
    if rates.size == 0:
        raise ValueError(f"{name} is empty: give at least one rate to evaluate")
    return rates


def check_matrix(R: Any, name: str = "R") -> npt.NDArray[Any]:
    """A non-empty M×N integer-valued outcome matrix (1-D means one stimulus)."""
    array = _numeric_array(R, name)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2:
        raise ValueError(f"{name} must be an M×N matrix, got {array.ndim} dimensions")
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: it needs at least one row (stimulus)")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has no columns: every row needs at least one trial")
    if np.issubdtype(array.dtype, np.floating):
        return _check_integral(array, name)
    return array


def _report_bad_entry(
    array: npt.NDArray[Any], bad: npt.NDArray[np.bool_], name: str, allowed: str
) -> None:
    idx = _first_bad(bad)
    raise ValueError(f"{_subscript(name, idx)} = {array[idx]} is not {allowed}")


def _largest_as_unsigned(array: npt.NDArray[Any]) -> int:
    """Max of the entries read as unsigned integers: negatives become huge.

    So ``0 <= x <= top`` for every entry is one reduction, ``<= top``, instead
    of a min and a max (this check runs on every M×N matrix).
    """
    if np.issubdtype(array.dtype, np.signedinteger):
        unsigned = np.dtype(f"u{array.dtype.itemsize}")
        return int(array.view(unsigned).max())
    return int(array.max())


def check_binary_matrix(R: Any, name: str = "R") -> npt.NDArray[Any]:
    """An M×N matrix of 0/1 (or bool) outcomes."""
    array = check_matrix(R, name)
    if array.dtype == np.bool_:
        return array
    if _largest_as_unsigned(array) > 1:
        _report_bad_entry(array, (array < 0) | (array > 1), name, "binary (0 or 1)")
    return array


def check_categorical(R: Any, w: Any, name: str = "R") -> tuple[npt.NDArray[Any], FloatArray]:
    """An M×N matrix of categories ``0..C`` and its length-(C+1) weight vector.

    When ``w`` is ``None`` the matrix must be binary and ``w = [0, 1]``.
    """
    if w is None:
        return check_binary_matrix(R, name), np.array([0.0, 1.0])
    weights = check_weights(w, "w")
    array = check_matrix(R, name)
    top = weights.size - 1
    if array.dtype != np.bool_ and _largest_as_unsigned(array) > top:
        _report_bad_entry(
            array,
            (array < 0) | (array > top),
            name,
            f"a category in 0..{top} (w has {weights.size} weights)",
        )
    return array, weights


def check_weights(w: Any, name: str, length: int | None = None) -> FloatArray:
    """A finite 1-D weight vector, optionally of a required length."""
    array = _numeric_array(w, name)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D vector, got shape {array.shape}")
    _check_finite(array, name)
    if length is not None and array.size != length:
        raise ValueError(f"{name} has length {array.size}, expected {length}")
    return array.astype(np.float64, copy=False)


def check_category_counts(
    counts: Any, w: Any, name: str = "counts", *, allow_empty_rows: bool = False
) -> tuple[IntArray, FloatArray]:
    """An M×(C+1) matrix of per-stimulus category counts and its weight vector."""
    array = _numeric_array(counts, name)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty M×(C+1) matrix, got shape {array.shape}")
    ints = _check_integral(array, name)
    bad = ints < 0
    if bad.any():
        _report_bad_entry(ints, bad, name, "a non-negative count")
    bad_rows = ints.sum(axis=1) < 1
    if not allow_empty_rows and bad_rows.any():
        row = int(np.argmax(bad_rows))
        raise ValueError(f"{name} row {row} has no trials: every stimulus needs at least one")
    width = ints.shape[1]
    weights = np.arange(2, dtype=np.float64) if w is None else check_weights(w, "w", width)
    if w is None and width != 2:
        raise ValueError(f"{name} has {width} categories; pass a weight vector w of length {width}")
    return ints, weights


def check_outcomes(outcomes: Any, name: str = "outcomes") -> npt.NDArray[np.bool_]:
    """A non-empty sequence of pass/fail outcomes (bools or 0/1)."""
    array = _numeric_array(list(outcomes) if not hasattr(outcomes, "shape") else outcomes, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of pass/fail, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty: at least one run is needed")
    if array.dtype != np.bool_:
        _check_finite(array, name)
        bad = (array != 0) & (array != 1)
        if bad.any():
            idx = int(np.argmax(bad))
            raise ValueError(f"{name}[{idx}] = {array[idx]} is not a pass/fail value (0 or 1)")
    return array.astype(np.bool_)


def check_runs(passed: Any, sizes: Any) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Runs given end to end: their pass/fail outcomes one after another (bools or 0/1)
    and each run's length, at least 1, the lengths adding up to the outcomes."""
    lengths = _numeric_array(sizes, "sizes")
    if lengths.ndim != 1 or (lengths.size and not np.issubdtype(lengths.dtype, np.integer)):
        raise ValueError(f"sizes must be a flat sequence of integers, got {lengths.dtype}")
    if lengths.size and int(lengths.min()) < 1:
        index = int(np.argmin(lengths))
        raise ValueError(f"sizes[{index}] = {lengths[index]}: every run needs an outcome")
    outcomes = check_outcomes(passed, "passed") if lengths.size else np.zeros(0, dtype=bool)
    if int(lengths.sum()) != outcomes.size:
        raise ValueError(f"sizes add up to {int(lengths.sum())}, not the {outcomes.size} outcomes")
    return outcomes, lengths.astype(np.int64)


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of names (interval method, suite metric)."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")
    return str(value)


def check_tau(tau: Any) -> float:
    """G-Pass threshold fraction in [0, 1]."""
    return check_float(tau, "tau", low=0.0, high=1.0)


def check_lambda(lam: Any, lambda_: Any) -> float:
    """GeoSpectrum coupling ``lam`` or its alias ``lambda_`` (not both), in [0, 1]."""
    if lambda_ is not None:
        if lam != 0.5:
            raise TypeError("pass at most one of 'lam' and 'lambda_'")
        lam = lambda_
    return check_float(lam, "lam", low=0.0, high=1.0)


def check_powers(pass_power: Any, unanimous_power: Any) -> tuple[float, float]:
    """Exponents of a geometric blend: finite, not both zero."""
    a = check_float(pass_power, "pass_power")
    b = check_float(unanimous_power, "unanimous_power")
    if a == 0.0 and b == 0.0:
        raise ValueError("pass_power and unanimous_power cannot both be 0")
    return a, b


def check_spectrum_weights(weights: Any, k: int) -> FloatArray:
    """Threshold-spectrum weights w_1..w_k: finite, >= 0, summing to at most 1."""
    w = check_weights(weights, "weights")
    if w.size != k:
        raise ValueError(f"weights has length {w.size}; it needs one weight per r = 1..k={k}")
    if np.any(w < 0.0):
        r = int(np.argmax(w < 0.0))
        raise ValueError(f"weights[{r}] = {w[r]} is negative; spectrum weights must be >= 0")
    total = float(w.sum())
    # The tolerance admits weights like [1/3] * 3 whose float sum exceeds 1 by an ulp.
    if total > 1.0 + 1e-12:
        raise ValueError(f"weights sum to {total}; spectrum weights must sum to at most 1")
    return w


def check_scalar_counts(n: Any, c: Any) -> tuple[IntArray, IntArray]:
    """Counts of a single stimulus (0-d)."""
    n_arr, c_arr = check_counts(n, c)
    if n_arr.ndim != 0:
        raise ValueError(
            "expected scalar n and c for one stimulus; use the *_counts forms for arrays"
        )
    return n_arr, c_arr


def check_prior_outcomes(R0: Any, rows: int, categories: int) -> npt.NDArray[Any]:
    """scorio's ``R0``: an M×D matrix of prior outcomes in 0..C (1-D is reshaped to M rows)."""
    array = _numeric_array(R0, "R0")
    if array.ndim == 1:
        if array.size % rows:
            raise ValueError(f"R0 has {array.size} entries, not a multiple of the {rows} rows of R")
        array = array.reshape(rows, -1)
    if array.ndim != 2 or array.shape[0] != rows:
        raise ValueError(f"R0 must have the {rows} rows of R, got shape {array.shape}")
    if array.shape[1] == 0:
        return array
    matrix = check_matrix(array, "R0")
    top = categories - 1
    if matrix.dtype != np.bool_ and _largest_as_unsigned(matrix) > top:
        _report_bad_entry(matrix, (matrix < 0) | (matrix > top), "R0", f"a category in 0..{top}")
    return matrix


def check_prior_counts(prior_counts: Any, shape: tuple[int, ...], weights: FloatArray) -> IntArray:
    """Prior category counts with the shape of the counts matrix (rows may be all zero)."""
    array = _numeric_array(prior_counts, "prior_counts")
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.shape != shape:
        raise ValueError(f"prior_counts has shape {array.shape}, expected {shape}")
    counts, _ = check_category_counts(array, weights, "prior_counts", allow_empty_rows=True)
    return counts


# --- per-trial usage values (gate.metrics.usage) and gate limits (gate.metrics.evaluate) ---


def check_trial_keys(stimulus: Any) -> tuple[tuple[Hashable, ...], IntArray]:
    """Each trial's stimulus key: the distinct keys (first seen first) and each trial's index."""
    keys = list(stimulus)
    if not keys:
        raise ValueError("stimulus is empty: usage statistics need at least one trial")
    index: dict[Hashable, int] = {}
    try:
        codes = np.fromiter(
            (index.setdefault(key, len(index)) for key in keys), dtype=np.int64, count=len(keys)
        )
    except TypeError as error:
        raise ValueError(f"stimulus keys must be hashable: {error}") from None
    return tuple(index), codes


def check_trial_codes(codes: Any, stimuli: int) -> IntArray:
    """Each trial's stimulus as an index into ``stimuli`` distinct keys (at least one trial)."""
    indices = np.asarray(codes)
    if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
        raise ValueError("codes must be one integer index per trial")
    if indices.size == 0:
        raise ValueError("stimulus is empty: usage statistics need at least one trial")
    if int(indices.min()) < 0 or int(indices.max()) >= stimuli:
        raise ValueError(f"codes must index the {stimuli} stimuli")
    return indices.astype(np.int64, copy=False)


def check_flags(passed: Any, size: int) -> npt.NDArray[np.bool_]:
    """One pass/fail flag per trial (bools or 0/1)."""
    flags = np.asarray(passed)
    if flags.shape != (size,):
        raise ValueError(f"passed has shape {flags.shape}; expected one flag per trial ({size})")
    if flags.dtype == np.bool_:
        return flags
    if not np.issubdtype(flags.dtype, np.number) or np.any((flags != 0) & (flags != 1)):
        raise ValueError("passed must hold booleans (or 0/1), one per trial")
    return flags.astype(np.bool_)


def check_usage_values(raw: Any, name: str, size: int) -> FloatArray:
    """Per-trial usage values: finite and >= 0, ``None``/NaN where a trial reports none."""
    if raw is None:
        return np.full(size, np.nan)
    if isinstance(raw, np.ndarray) and np.issubdtype(raw.dtype, np.floating):
        array = raw.astype(np.float64)
    else:
        items = list(raw)
        for position, item in enumerate(items):
            if item is not None and (
                isinstance(item, bool | np.bool_) or not isinstance(item, int | float | np.number)
            ):
                raise ValueError(f"{name}[{position}] = {item!r} is not a number")
        array = np.array([np.nan if item is None else float(item) for item in items])
    if array.shape != (size,):
        raise ValueError(f"{name} has shape {array.shape}; expected one value per trial ({size})")
    bad = np.isinf(array) | (array < 0.0)
    if bad.any():
        position = int(np.argmax(bad))
        raise ValueError(
            f"{name}[{position}] = {float(array[position])!r}: usage values must be finite and >= 0"
        )
    return array


def check_finite_total(values: FloatArray, name: str) -> float:
    """The sum of checked usage values, refused when it overflows a float."""
    with np.errstate(over="ignore"):
        total = float(np.sum(values))
    if not math.isfinite(total):
        raise ValueError(f"the total of {name} overflows a float")
    return total


def check_limits(minimum: Any, maximum: Any) -> tuple[float | None, float | None]:
    """A gate's ``min``/``max``: at least one, each finite."""
    if minimum is None and maximum is None:
        raise ValueError("give minimum, maximum or both")
    low = None if minimum is None else check_float(minimum, "minimum")
    high = None if maximum is None else check_float(maximum, "maximum")
    return low, high
