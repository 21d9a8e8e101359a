"""Exact evaluation of cost expressions.

``sympy.lambdify`` prints ``ceiling(N/B_r)`` as ``math.ceil(N/B_r)`` - a float division, wrong
beyond 2**53.  Here an expression is compiled once into a closure over Python ints and
:class:`fractions.Fraction`, so ``N = 3*10**9`` (or ``10**30``) evaluates exactly, far faster than
``expr.subs(...)``.  Supported: integers, rationals, symbols, ``+ * **``, ``ceiling``, ``floor``,
``Min``, ``Max``, ``Piecewise``, relations, ``Abs``, ``Mod``, :class:`~symbolic.floorsum.gcd`,
:class:`~symbolic.floorsum.FloorSum` (the value of its closed form, by :func:`~symbolic.floorsum.floor_sum`), a ``sympy.Function`` whose class defines
``exact_value(*ints) -> int`` (by that), and finite
``Sum``: a sum of ``floor(affine in the index)`` in O(log) steps (:func:`symbolic.floorsum.floor_sum`), any
other sum by a loop over the index.  Anything else raises ``TypeError`` at compile time, never a silent float.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from functools import reduce
from numbers import Integral
from typing import Callable, Mapping

import sympy as sp

from .floorsum import FloorSum, floor_sum, gcd

__all__ = ["compile_exact", "compile_env", "exact", "to_python_number", "affine_floor_sum"]

Env = Mapping[sp.Symbol, object]


def to_python_number(v):
    """Fraction/int -> int when integral, else Fraction; bools pass through."""
    if isinstance(v, bool):
        return v
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else v
    if isinstance(v, Integral):
        return int(v)
    raise TypeError(f"not an exact number: {v!r}")


#: the key under which an evaluation's ``env`` holds its memo of repeated subexpressions' values
_MEMO = object()
_MISS = object()


def _repeats(e: sp.Basic) -> set:
    """The non-atomic subexpressions that occur more than once in ``e``'s tree, each counted below its first
    occurrence only: a node inside a
    repeated node is evaluated once through that node's memo, so it repeats only if it occurs elsewhere."""
    seen: set = set()
    again: set = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if node.is_Atom:
            continue
        if node in seen:
            again.add(node)
            continue
        seen.add(node)
        stack.extend(_compiled_args(node))
    return again


def _own_closed_form(e) -> bool:
    """Whether ``e`` is a FloorSum subclass with a closed form of its own (a ShownSum: it evaluates by its
    ``closed_form`` and prints as something else), rather than the lattice-point sum of its four arguments."""
    return isinstance(e, FloorSum) and type(e).closed_form is not FloorSum.closed_form


def _compiled_args(node) -> tuple:
    """The children of ``node`` that its compiled form evaluates."""
    return (node.closed_form(),) if _own_closed_form(node) else node.args


def _compile(e: sp.Basic) -> Callable[[dict], object]:
    """``e`` compiled into ``f(env)`` over ``{Symbol: int or Fraction}``.  A subexpression that occurs more than
    once in the tree (FlashAttention-3's tile node in every term of the window model's sums, a block count in
    each line of a listing) is evaluated once per call: its value is kept in a memo for that call."""
    repeated = _repeats(e)
    f = _build(e, {}, repeated)
    if not repeated:
        return f

    def run(env):
        env = dict(env)
        env[_MEMO] = {}
        return f(env)
    run.memoised = len(repeated)
    return run


def _build(e: sp.Basic, done: dict, repeated: set) -> Callable[[dict], object]:
    """:func:`_compile`'s work: one closure per distinct subexpression (``done``), those in ``repeated``
    memoised under the call's ``env[_MEMO]``."""
    if e in done:
        return done[e]
    f = _node(e, lambda a: _build(a, done, repeated))
    if e in repeated:
        f = _memoised(f, len(done))
    done[e] = f
    return f


def _memoised(f, key):
    def memo(env):
        m = env[_MEMO]
        v = m.get(key, _MISS)
        if v is _MISS:
            v = m[key] = f(env)
        return v
    return memo


def _node(e: sp.Basic, _compile) -> Callable[[dict], object]:
    """The closure of one node, its arguments compiled by ``_compile``."""
    if e is sp.true or e is sp.S.true:
        return lambda env: True
    if e is sp.false or e is sp.S.false:
        return lambda env: False
    if isinstance(e, sp.Integer):
        v = int(e)
        return lambda env: v
    if isinstance(e, sp.Rational):
        v = Fraction(int(e.p), int(e.q))
        return lambda env: v
    if isinstance(e, sp.Symbol):
        return lambda env: env[e]
    if isinstance(e, sp.Add):
        fs = [_compile(a) for a in e.args]
        if len(fs) == 2:                              # the common case, without a generator's overhead
            fa, fb = fs
            return lambda env: fa(env) + fb(env)
        return lambda env: sum(f(env) for f in fs)
    if isinstance(e, sp.Mul):
        fs = [_compile(a) for a in e.args]
        if len(fs) == 2:
            fa, fb = fs
            return lambda env: fa(env) * fb(env)
        return lambda env: reduce(operator.mul, (f(env) for f in fs), 1)
    if isinstance(e, sp.Pow):
        base = _compile(e.base)
        if not (e.exp.is_Integer):
            raise TypeError(f"non-integer power in a count: {e}")
        k = int(e.exp)
        if k >= 0:
            return lambda env: base(env) ** k
        return lambda env: Fraction(1) / Fraction(base(env)) ** (-k)
    if isinstance(e, sp.ceiling):
        f = _compile(e.args[0])
        return lambda env: math.ceil(f(env))
    if isinstance(e, sp.floor):
        f = _compile(e.args[0])
        return lambda env: math.floor(f(env))
    if _own_closed_form(e):
        return _compile(e.closed_form())
    if isinstance(e, FloorSum):
        # a lattice-point sum S(n; a, c, b): the number its closed form (FloorSum.closed_form) gives, by the
        # Euclid-like reduction in O(log) steps, without building and compiling that closed form per model
        fn, fa, fc, fb = (_compile(x) for x in e.args)

        def lattice_points(env):
            n, a, c, b = (_int(f(env), e) for f in (fn, fa, fc, fb))
            if b < 1:
                raise ValueError(f"{e}: the divisor b of FloorSum(n, a, c, b) must be >= 1, got {b}")
            return floor_sum(n, b, a, c)
        return lattice_points
    if isinstance(e, sp.Function) and callable(getattr(type(e), "exact_value", None)):
        # a node that evaluates itself exactly from its arguments' values (e.g. gemm_l2's wave sum, by its
        # closed form; the LRU count of gemm.l2.lru): ints in, an int out
        fs, value = [_compile(a) for a in e.args], type(e).exact_value
        return lambda env: value(*(_int(f(env), e) for f in fs))
    if isinstance(e, gcd):
        fa, fb = (_compile(x) for x in e.args)
        return lambda env: math.gcd(_int(fa(env), e), _int(fb(env), e))
    if isinstance(e, sp.Mod):
        fa, fb = (_compile(x) for x in e.args)
        return lambda env: fa(env) % fb(env)        # Python's % and SymPy's Mod share the divisor's sign
    if isinstance(e, sp.Abs):
        f = _compile(e.args[0])
        return lambda env: abs(f(env))
    if isinstance(e, sp.Min):
        fs = [_compile(a) for a in e.args]
        return lambda env: min(f(env) for f in fs)
    if isinstance(e, sp.Max):
        fs = [_compile(a) for a in e.args]
        return lambda env: max(f(env) for f in fs)
    if isinstance(e, sp.Piecewise):
        pieces = [(_compile(ex), _compile(c)) for ex, c in e.args]

        def piecewise(env):
            for ex, c in pieces:
                if c(env):
                    return ex(env)
            raise ValueError(f"no piece of {e} applies at {_shown(env)}")
        return piecewise
    if isinstance(e, sp.core.relational.Relational):
        ops = {sp.StrictLessThan: operator.lt, sp.LessThan: operator.le, sp.StrictGreaterThan: operator.gt,
               sp.GreaterThan: operator.ge, sp.Equality: operator.eq, sp.Unequality: operator.ne}
        op = ops[type(e)]
        a, b = _compile(e.lhs), _compile(e.rhs)
        return lambda env: op(a(env), b(env))
    if isinstance(e, (sp.And, sp.Or)):
        fs = [_compile(a) for a in e.args]
        agg = all if isinstance(e, sp.And) else any
        return lambda env: agg(f(env) for f in fs)
    if isinstance(e, sp.Not):
        f = _compile(e.args[0])
        return lambda env: not f(env)
    if isinstance(e, sp.Sum) and affine_floor_sum(e) is not None:
        return _compile_floor_sum(e)
    if isinstance(e, sp.Sum):
        body = _compile(e.function)
        # Sum(f, (j, 1, J_i), (i, 1, T)): the last limit is the outermost, and an inner limit may use an outer
        # index, so the loops nest from the last limit in
        limits = [(var, _compile(lo), _compile(hi)) for var, lo, hi in reversed(e.limits)]

        def summation(env, k=0):
            if k == len(limits):
                return body(env)
            var, lo, hi = limits[k]
            total = 0
            inner = dict(env)
            for i in range(lo(env), hi(env) + 1):   # SymPy limits are inclusive
                inner[var] = i
                inner[_MEMO] = {}                   # what the memo holds may depend on the index
                total += summation(inner, k + 1)
            return total
        return summation
    raise TypeError(f"cannot evaluate {type(e).__name__} exactly: {e}")


def _shown(env) -> dict:
    """``env`` without its memo (for a message)."""
    return {k: v for k, v in env.items() if k is not _MEMO}


def _int(v, where) -> int:
    if isinstance(v, Fraction):
        if v.denominator != 1:
            raise ValueError(f"{where}: an integer argument expected, got {v}")
        return v.numerator
    return int(v)


def affine_floor_sum(e: sp.Sum):
    """``(slope, offset)`` when ``e`` is ``Sum(floor(slope*i + offset), (i, lo, hi))`` with ``slope`` and
    ``offset`` free of ``i`` (and of floors, ceilings, ``Min``, ``Max``, ``Piecewise`` and sums); else ``None``.

    The one test of a floor sum's shape: what this module evaluates in O(log) steps
    (:func:`symbolic.floorsum.floor_sum`) and :mod:`printing.javascript` prints as ``Q.affineFloorSum``; any
    other ``Sum`` is a loop here and not expressible there."""
    if len(e.limits) != 1 or not isinstance(e.function, sp.floor):
        return None
    var = e.limits[0][0]
    arg = sp.expand(e.function.args[0])
    slope = sp.diff(arg, var)
    if slope.has(var) or slope.has(sp.floor, sp.ceiling, sp.Min, sp.Max, sp.Piecewise, sp.Sum):
        return None
    offset = sp.expand(arg - slope * var)
    if offset.has(var):
        return None
    return slope, offset


def _compile_floor_sum(e: sp.Sum):
    """``Σ_{i=lo}^{hi} ⌊s i + o⌋`` by :func:`~symbolic.floorsum.floor_sum`: O(log) steps at any size."""
    slope, offset = affine_floor_sum(e)
    _, lo_e, hi_e = e.limits[0]
    fs, fo, flo, fhi = (_compile(x) for x in (slope, offset, lo_e, hi_e))

    def summation(env):
        lo, hi = flo(env), fhi(env)
        n = hi - lo + 1
        if n <= 0:
            return 0
        s = Fraction(fs(env))
        o = Fraction(fo(env)) + s * lo               # i = lo + k, k = 0 .. n-1
        m = s.denominator * o.denominator // math.gcd(s.denominator, o.denominator)
        return floor_sum(int(n), m, s.numerator * (m // s.denominator), o.numerator * (m // o.denominator))
    return summation


def compile_exact(expr: sp.Expr, symbols=None) -> Callable[..., object]:
    """Compile ``expr`` once; the result takes keyword values (by symbol name) and returns an int or
    Fraction.  Integer inputs only: a float argument raises ``TypeError`` rather than rounding."""
    expr = sp.sympify(expr)
    f = _compile(expr)
    free = sorted(expr.free_symbols, key=lambda s: s.name) if symbols is None else list(symbols)
    by_name = {s.name: s for s in free}

    def run(**values):
        env = {}
        for name, s in by_name.items():
            if name not in values:
                raise ValueError(f"{name}: value missing")
            v = values[name]
            if type(v) is int:                        # the usual value, checked without the ABCs below
                env[s] = v
                continue
            if isinstance(v, (bool, float)) or not isinstance(v, (Integral, Fraction, sp.Integer, sp.Rational)):
                raise TypeError(f"{name}: exact value required, got {v!r}")
            env[s] = int(v) if isinstance(v, (Integral, sp.Integer)) else (
                Fraction(int(v.p), int(v.q)) if isinstance(v, sp.Rational) else v)
        return to_python_number(f(env))
    run.expr = expr
    run.names = tuple(by_name)
    return run


def compile_env(expr: sp.Expr) -> Callable[[dict], object]:
    """``expr`` compiled once into ``f(env)`` over an ``env`` of ``{Symbol: int or Fraction}``, with no
    argument checks: for a caller that validates a point once and then evaluates many expressions at it,
    or one expression at many values of a loop index (:meth:`symbolic.listings.Listing.count`).  The
    result is an int or a Fraction (:func:`to_python_number` makes an integral one an int)."""
    return _compile(sp.sympify(expr))


def exact(expr: sp.Expr, **values):
    """One-shot exact evaluation (compiles every call; use :func:`compile_exact` in loops)."""
    return compile_exact(expr)(**values)
