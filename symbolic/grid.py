"""Vectorised exact evaluation over NumPy object arrays (the grid twin of :mod:`symbolic.evaluate`).

Kept apart so that importing a model (``tilebound list``) does not import NumPy."""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from functools import reduce

import numpy as np
import sympy as sp

from .evaluate import _compile, to_python_number

__all__ = ["compile_grid"]

_ceil = np.frompyfunc(math.ceil, 1, 1)
_floor = np.frompyfunc(math.floor, 1, 1)
_frac = np.frompyfunc(Fraction, 1, 1)
_number = np.frompyfunc(to_python_number, 1, 1)


def _compile_grid(e: sp.Basic):
    """Like :func:`_compile`, over NumPy object arrays of Fractions (elementwise Python arithmetic,
    so exact).  Finite sums have per-element bounds, so they fall back to a loop over the elements."""
    if isinstance(e, (sp.Integer, sp.Rational, sp.Symbol)) or e in (sp.true, sp.false):
        return _compile(e)
    if isinstance(e, sp.Add):
        fs = [_compile_grid(a) for a in e.args]
        return lambda env: reduce(operator.add, (f(env) for f in fs))
    if isinstance(e, sp.Mul):
        fs = [_compile_grid(a) for a in e.args]
        return lambda env: reduce(operator.mul, (f(env) for f in fs))
    if isinstance(e, sp.Pow) and e.exp.is_Integer:
        base, k = _compile_grid(e.base), int(e.exp)
        return (lambda env: base(env) ** k) if k >= 0 else (lambda env: Fraction(1) / base(env) ** (-k))
    if isinstance(e, (sp.ceiling, sp.floor)):
        f, op = _compile_grid(e.args[0]), (_ceil if isinstance(e, sp.ceiling) else _floor)
        return lambda env: op(f(env))
    if isinstance(e, (sp.Min, sp.Max)):
        fs, op = [_compile_grid(a) for a in e.args], (np.minimum if isinstance(e, sp.Min) else np.maximum)
        return lambda env: reduce(op, (f(env) for f in fs))
    if isinstance(e, sp.core.relational.Relational):
        return _compile(e)     # operator.lt etc. broadcast over object arrays
    scalar = _compile(e)       # Sum, Piecewise, ...: per element

    def per_element(env):
        arrays = {k: v for k, v in env.items() if isinstance(v, np.ndarray)}
        if not arrays:
            return scalar(env)
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        out = np.empty(shape, dtype=object)
        bcast = {k: np.broadcast_to(v, shape) for k, v in arrays.items()}
        for idx in np.ndindex(shape):
            out[idx] = scalar({**env, **{k: v[idx] for k, v in bcast.items()}})
        return out
    return per_element


def compile_grid(expr: sp.Expr, symbols=None):
    """Vectorised exact evaluation: keyword arrays (broadcast together) in, an object array of Python
    ints/Fractions out.  Integer inputs only, as for :func:`compile_exact`."""
    expr = sp.sympify(expr)
    f = _compile_grid(expr)
    free = sorted(expr.free_symbols, key=lambda s: s.name) if symbols is None else list(symbols)

    def run(**arrays):
        env = {}
        for s in free:
            if s.name not in arrays:
                raise ValueError(f"{s.name}: value missing")
            a = np.asarray(arrays[s.name], dtype=object)
            if any(isinstance(x, (bool, float)) for x in a.flat):
                raise TypeError(f"{s.name}: exact values required")
            env[s] = _frac(a) if a.ndim else Fraction(a.item())
        out = f(env)
        return _number(np.asarray(out, dtype=object)) if np.ndim(out) else np.asarray(to_python_number(Fraction(out)), dtype=object)
    return run
