r"""Sums of floors of an affine function — lattice points under a line — in closed form and in O(log) time.

A blocked loop over a triangle (a causal mask: key block ``j`` is skipped by the first
``⌊(j B_c - D)/B_r⌋`` query blocks) counts lattice points under a line,

    S(n; a, c, b) = Σ_{t=0}^{n-1} ⌊(a t + c)/b⌋        (integers a, c >= 0, b >= 1, n >= 0).

The summand is a quasi-polynomial: with ``g = gcd(a, b)`` it repeats, shifted up by ``a/g``, every
``p = b/g`` steps.  Write ``n = Q p + R`` (``Q`` full periods, ``0 <= R < p``); one full period sums to
``⌊c/g⌋ + (a/g - 1)(p - 1)/2`` (Graham, Knuth, Patashnik, *Concrete Mathematics*, 2nd ed., eq. (3.32),
applied to ``a/g`` and ``p``, which are coprime, and ``⌊c/g⌋``), so

    S = Q (⌊c/g⌋ + (a/g - 1)(p - 1)/2) + (a/g) p Q (Q - 1)/2 + (a/g) Q R + Σ_{t=0}^{R-1} ⌊(a t + c)/b⌋,

full periods in closed form plus a remainder of fewer than ``p <= b`` terms: :func:`floor_sum_expr`
builds this as a SymPy expression.  :func:`floor_sum` is the same number by the Euclid-like reduction
(the AtCoder Library's ``floor_sum``; Knuth, *TAOCP* vol. 2, §3.3.3 on sums of floors), O(log max(a, b))
steps for any sizes; :mod:`symbolic.evaluate` uses it for every ``Sum`` of ``⌊affine⌋``, so the remainder
costs O(log b) even when the blocks are huge.

:class:`FloorSum` is ``S(n; a, c, b)`` as one SymPy function: it prints as the sum it stands for
(``Σ[t=0..n-1] ⌊(a·t + c)/b⌋``, readable in ``show`` and in LaTeX notes) and is evaluated by its closed
form (:meth:`FloorSum.closed_form`), so a formula that uses it evaluates at any size in bounded time.

:class:`gcd` is the greatest common divisor as an unevaluated SymPy function (``sympy.gcd`` of two
symbols is the polynomial gcd, ``1``).
"""

from __future__ import annotations

import math

import sympy as sp

from .shown_as import ShownAs

__all__ = ["gcd", "FloorSum", "floor_sum", "floor_sum_expr", "floor_sum_loop"]


class gcd(sp.Function):
    """``gcd(a, b)`` of positive integers, unevaluated until both are numbers."""

    nargs = 2
    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer:
            return sp.Integer(math.gcd(int(a), int(b)))
        if a == b and a.is_positive:
            return a
        return None

    def _eval_is_positive(self):
        if all(x.is_positive for x in self.args):
            return True
        return None

    def _tilebound_latex(self, printer, exp=None):
        tex = rf"\gcd\left({printer._print(self.args[0])}, {printer._print(self.args[1])}\right)"
        return f"{tex}^{{{exp}}}" if exp else tex

    _latex = _tilebound_latex


def floor_sum(n: int, m: int, a: int, b: int) -> int:
    """``Σ_{i=0}^{n-1} ⌊(a i + b)/m⌋`` for integers ``n >= 0``, ``m >= 1`` and any ``a``, ``b``: exact, in
    O(log max(a, m)) steps (each step swaps the roles of rise and run, as Euclid's algorithm does)."""
    if n <= 0:
        return 0
    if m < 1:
        raise ValueError(f"floor_sum: m must be >= 1, got {m}")
    total = 0
    if a < 0 or a >= m:                 # ⌊(a i + b)/m⌋ = (a // m) i + ⌊((a % m) i + b)/m⌋
        total += n * (n - 1) // 2 * (a // m)
        a %= m
    if b < 0 or b >= m:
        total += n * (b // m)
        b %= m
    while True:                         # now 0 <= a, b < m
        y_max = a * n + b
        if y_max < m:
            return total
        n, b = divmod(y_max, m)         # count the lattice points column by column instead of row by row
        m, a = a, m
        if a >= m:
            total += n * (n - 1) // 2 * (a // m)
            a %= m
        if b >= m:
            total += n * (b // m)
            b %= m


def floor_sum_loop(n: int, m: int, a: int, b: int) -> int:
    """The same sum term by term (a reference for tests; O(n))."""
    return sum((a * i + b) // m for i in range(max(n, 0)))


def floor_sum_expr(n, a, c, b, index=None) -> sp.Expr:
    """``Σ_{t=0}^{n-1} ⌊(a t + c)/b⌋`` as full periods in closed form plus a remainder ``Sum`` of fewer than
    ``b/gcd(a, b)`` terms (see the module text); ``n``, ``a``, ``c``, ``b`` are SymPy expressions with
    integer values, ``n >= 0``, ``a, c >= 0``, ``b >= 1``."""
    t = index if index is not None else sp.Dummy("t", integer=True, nonnegative=True)
    g = gcd(a, b)
    p = b / g                                   # the period of the summand
    a1 = a / g                                  # its rise over one period
    Q = sp.floor(n / p)                         # full periods
    R = n - p * Q                               # the remainder, 0 <= R < p
    period = sp.floor(c / g) + (a1 - 1) * (p - 1) / 2
    rest = sp.Sum(sp.floor((a * t + c) / b), (t, 0, R - 1))
    return Q * period + a1 * p * Q * (Q - 1) / 2 + a1 * Q * R + rest


class FloorSum(ShownAs, sp.Function):
    r"""``FloorSum(n, a, c, b)`` = ``Σ_{t=0}^{n-1} ⌊(a t + c)/b⌋`` (integers ``n >= 0``, ``a, c >= 0``, ``b >= 1``).

    Printed as that sum; :meth:`closed_form` is the quasi-polynomial in ``n`` (full periods plus the
    remainder, :func:`floor_sum_expr`), which :mod:`symbolic.evaluate` compiles; :meth:`as_sum` the plain
    ``Sum`` (``O(n)`` terms), for references."""

    nargs = 4
    is_integer = True

    @classmethod
    def eval(cls, n, a, c, b):
        if all(x.is_Integer for x in (n, a, c, b)) and int(b) >= 1:
            return sp.Integer(floor_sum(int(n), int(b), int(a), int(c)))
        if n.is_Integer and int(n) <= 0:
            return sp.Integer(0)
        return None

    def _eval_is_nonnegative(self):
        if all(x.is_nonnegative for x in self.args[1:3]):
            return True
        return None

    def as_sum(self, index=None) -> sp.Sum:
        n, a, c, b = self.args
        t = index if index is not None else sp.Dummy("t", integer=True, nonnegative=True)
        return sp.Sum(sp.floor((a * t + c) / b), (t, 0, n - 1))

    def closed_form(self) -> sp.Expr:
        return floor_sum_expr(*self.args)

    def _eval_rewrite_as_Sum(self, *args, **kwargs):
        return self.as_sum()

    def _display(self) -> sp.Sum:
        return self.as_sum(sp.Symbol("t", integer=True, nonnegative=True))

