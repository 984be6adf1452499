"""Binomial tail probabilities for real-valued counts, and the mid-p bounds that invert them.

The tails give the observed count a weight w on its point mass,
``P(X > c) + w·P(X = c) = P(X >= c) - (1-w)·P(X = c)``: w = 1/2 is mid-p, w = 1 the
exact (Clopper-Pearson) tail, and the default method raises w above 1/2 at a few n
to keep a coverage floor (``gate.metrics.intervals.MID_P_FLOOR_WEIGHTS``).

Inputs are trusted (checked upstream). ``c`` and ``n`` may be real (0 <= c <= n,
n > 0): the suite interval evaluates the one-rate method at c = estimate·n_eff
with a fractional n_eff. The tails are written with the regularized incomplete
beta function, ``P(X >= c) = I_p(c, n-c+1)`` and ``P(X = c) = C(n, c)·p^c·(1-p)^(n-c)``
with ``C(n, c) = Gamma(n+1)/(Gamma(c+1)·Gamma(n-c+1))``, which are the binomial
ones at whole c and continue them smoothly in between.
"""

from __future__ import annotations

import numpy as np

from gate.metrics._special import betainc_parts, log_beta_front, normal_quantile
from gate.metrics._validation import FloatArray

#: Newton steps before giving up on an entry (it then keeps its best bracketed value);
#: a bound converges in 4-8 steps from the Wilson starting point.
_MAX_STEPS = 100
_SMALLEST = float(np.finfo(np.float64).tiny)


def point_probability(c: FloatArray, n: FloatArray, p: FloatArray) -> FloatArray:
    """``P(X = c) = C(n, c)·p^c·(1-p)^(n-c)`` for real 0 <= c <= n and 0 <= p <= 1."""
    interior = (p > 0.0) & (p < 1.0)
    x = np.where(interior, p, 0.5)
    # x^c (1-x)^(n-c) / ((n+1)·B(c+1, n-c+1)), from the Beta front of I_x(c+1, n-c+1).
    log_value = log_beta_front(c + 1.0, n - c + 1.0, x) - np.log(x) - np.log1p(-x) - np.log1p(n)
    at_ends = np.where(p <= 0.0, c == 0.0, c == n).astype(np.float64)
    result: FloatArray = np.where(interior, np.exp(log_value), at_ends)
    return result


def upper_tail(
    c: FloatArray, n: FloatArray, p: FloatArray, *, weight: float | FloatArray
) -> FloatArray:
    """``P(X > c) + weight·P(X = c)`` for X ~ Bin(n, p); arrays (and ``weight``) broadcast.

    ``weight`` = 1 gives ``P(X >= c)``, 1/2 the mid-p tail. ``P(X >= 0) = 1``; for
    c > 0 it is ``I_p(c, n-c+1)``, computed directly (not as one minus the other tail),
    so a small tail keeps its relative precision.
    """
    return tail_and_point(c, n, p, weight=weight)[0]


def tail_and_point(
    c: FloatArray, n: FloatArray, p: FloatArray, *, weight: float | FloatArray
) -> tuple[FloatArray, FloatArray]:
    """:func:`upper_tail` and ``P(X = c)`` from one incomplete beta evaluation.

    With a = c, b = n-c+1 the Beta prefactor ``p^a (1-p)^b / B(a, b)`` is
    ``c·(1-p)·P(X = c)``; at c = 0, ``P(X = 0) = (1-p)^n``.
    """
    c, n, p = np.broadcast_arrays(c, n, p)
    positive = c > 0.0
    a = np.where(positive, c, 1.0)
    tail, _, log_front = betainc_parts(a, n - a + 1.0, p)
    interior = (p > 0.0) & (p < 1.0)
    x = np.where(interior, p, 0.5)
    log_point = np.where(positive, log_front - np.log(a) - np.log1p(-x), n * np.log1p(-x))
    at_ends = np.where(p <= 0.0, c == 0.0, c == n).astype(np.float64)
    point = np.where(interior, np.exp(log_point), at_ends)
    tail = np.where(positive, tail, 1.0) - (1.0 - np.asarray(weight)) * point
    return np.asarray(tail, dtype=np.float64), np.asarray(point, dtype=np.float64)


def weighted_lower_bound(
    c: FloatArray, n: FloatArray, tail: float, weight: FloatArray
) -> FloatArray:
    """The p at which ``P(X > c) + weight·P(X = c) = tail`` (0 at c = 0), for 1-D c, n, weight.

    With 1/2 <= weight <= 1 the tail T(p) rises from 0 at p = 0 to at least 1/2 at
    p = 1, so the root is unique for tail < 1/2. Newton's method on
    ``log T = log tail`` in ``log p``, started at the Wilson bound: near 0, T grows like
    p^c, so log T is nearly linear in log p, and a fractional c (the suite interval's
    c = estimate·n_eff) converges as fast as a whole one (4-6 steps). A step that leaves
    the bracket known so far is replaced by bisection.
    ``T'(p) = P(X = c)·[w·c/p + (1-w)·(n-c)/(1-p)]``.
    """
    bound = np.zeros(c.shape, dtype=np.float64)
    todo = np.flatnonzero(c > 0.0)
    if todo.size == 0:
        return bound
    # A count far below 1 puts the root below the smallest double (T(p) ~ p^c): it is 0.
    smallest = np.full(todo.size, _SMALLEST)
    underflow = upper_tail(c[todo], n[todo], smallest, weight=weight[todo]) >= tail
    todo = todo[~underflow]
    if todo.size == 0:
        return bound
    cc, nn, ww = c[todo], n[todo], weight[todo]
    z = -normal_quantile(tail)
    phat = cc / nn
    z2 = z * z
    centre = (phat + z2 / (2.0 * nn)) / (1.0 + z2 / nn)
    half = z * np.sqrt(phat * (1.0 - phat) / nn + z2 / (4.0 * nn * nn)) / (1.0 + z2 / nn)
    x = np.clip(centre - half, 1e-12, 1.0 - 1e-12)
    low = np.full_like(x, _SMALLEST)
    high = np.ones_like(x)
    log_tail = np.log(tail)
    active = np.arange(x.size)
    for _ in range(_MAX_STEPS):
        xa, ca, na, wa = x[active], cc[active], nn[active], ww[active]
        value, point = tail_and_point(ca, na, xa, weight=wa)
        with np.errstate(divide="ignore", invalid="ignore"):  # at p = 1: NaN, then bisection
            slope = point * (wa * ca / xa + (1.0 - wa) * (na - ca) / (1.0 - xa))
        above = value > tail
        high[active] = np.where(above, xa, high[active])
        low[active] = np.where(above, low[active], xa)
        la, ha = low[active], high[active]
        with np.errstate(divide="ignore", invalid="ignore"):
            step = (np.log(value) - log_tail) * value / (slope * xa)
            proposal = xa * np.exp(-step)
        outside = ~((proposal >= la) & (proposal <= ha))  # NaN included
        proposal = np.where(outside, np.where(la > 0.0, np.sqrt(la * ha), 0.5 * ha), proposal)
        x[active] = proposal
        # Quadratic convergence: after a step of 1e-13·p the error is far below rounding.
        done = (np.abs(proposal - xa) <= 1e-13 * xa) | (ha - la <= 4e-16 * ha)
        active = active[~done]
        if active.size == 0:
            break
    bound[todo] = x
    return bound
