"""``scipy.special`` functions, imported on first use; the normal quantile from the stdlib.

Importing ``scipy.special`` pulls in SciPy's array-API layer, which imports most
of numpy's submodules (f2py, testing, polynomial): about 0.15-0.3 s here, more
than the rest of a small ``eval-gate check``. The default path (Wilson
intervals, pass@k/pass^k from counts) needs none of it, so the import waits
until a Beta quantile, a log-gamma or a Student t is actually asked for.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy.typing as npt

_STANDARD_NORMAL = NormalDist()


def normal_quantile(p: float) -> float:
    """``Phi^{-1}(p)`` (Wichura's AS 241, full double precision, as ``scipy.special.ndtri``).

    >>> round(normal_quantile(0.975), 6)
    1.959964
    """
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _STANDARD_NORMAL.inv_cdf(p)


def betaincinv(a: npt.ArrayLike, b: npt.ArrayLike, y: npt.ArrayLike) -> Any:
    """``scipy.special.betaincinv``: the ``y`` quantile of Beta(a, b)."""
    from scipy.special import betaincinv as function

    return function(a, b, y)


def betaln(a: npt.ArrayLike, b: npt.ArrayLike) -> Any:
    """``scipy.special.betaln``: ``log B(a, b)``."""
    from scipy.special import betaln as function

    return function(a, b)


def gammaln(x: npt.ArrayLike) -> Any:
    """``scipy.special.gammaln``: ``log |Gamma(x)|``."""
    from scipy.special import gammaln as function

    return function(x)


def stdtr(df: npt.ArrayLike, t: npt.ArrayLike) -> Any:
    """``scipy.special.stdtr``: the Student t CDF."""
    from scipy.special import stdtr as function

    return function(df, t)


def stdtrit(df: npt.ArrayLike, p: npt.ArrayLike) -> Any:
    """``scipy.special.stdtrit``: the Student t quantile."""
    from scipy.special import stdtrit as function

    return function(df, p)


def betainc(a: npt.ArrayLike, b: npt.ArrayLike, x: npt.ArrayLike) -> Any:
    """``scipy.special.betainc``: the regularized incomplete beta ``I_x(a, b)``."""
    from scipy.special import betainc as function

    return function(a, b, x)


def ndtr(x: npt.ArrayLike) -> Any:
    """``scipy.special.ndtr``: the standard normal CDF."""
    from scipy.special import ndtr as function

    return function(x)
