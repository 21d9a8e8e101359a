"""The ``--per`` grammar: an expression in a model's parameters that a table column divides by.

An expression has numbers, the model's parameter names, ``+ - * / ** ^ ( )``, implicit products (``2 N``,
``N(d + 1)``) and the functions ``ceil``, ``floor``, ``min``, ``max``.  It is read by the recursive descent
of :mod:`symbolic.grammar` (shared with ``tilebound grade --formula``) into a SymPy expression of the
model's own :class:`~symbolic.params.Param` symbols - never by ``eval`` or SymPy's ``parse_expr`` (which
runs Python).  A sign binds as in Python: ``-2**2`` is ``-4``, ``2**-1`` is ``1/2``.  ``theta`` and
``leading`` name the Θ class and the leading term of the quantity the column divides
(:mod:`tilebound.asymptotics`).

The work is bounded before it is done, so no expression hangs or exhausts the stack:

* at most :data:`MAX_LENGTH` characters, nested (parentheses, calls, exponents, signs) at most
  :data:`MAX_DEPTH` deep;
* an exponent is an integer in ``-64 .. 64``;
* every intermediate value is bounded *before* it is built: its degree in the parameters is at most
  :data:`MAX_DEGREE` and its constants at most ``10**4096`` (the bound of a typed number), so the tower
  ``(((2**64)**64)**64)**64`` and ``((N + 1)**64 + 1)**64`` are refused up front, as ``10**10**10`` is.

At a point, a column whose expression is zero or undefined there (``d - 64``, ``1/(d - 64)`` at ``d = 64``) is
refused naming ``per`` and the point (:func:`compile_per`).  Every bad input is
:class:`~base.errors.BadInput` naming ``per``; an unknown name comes with the nearest parameter names.
"""

from __future__ import annotations

from typing import Mapping

from base.errors import BadInput
from symbolic.grammar import FUNCTIONS as PER_FUNCTIONS
from symbolic.grammar import MAX_DEGREE, MAX_DEPTH, MAX_LENGTH, MAX_POWER, parse_expression
from symbolic.grammar import quoted as _quoted

from .numbers import shown as shown_value

__all__ = ["parse_per", "per_expression", "compile_per", "PER_FUNCTIONS", "MAX_LENGTH", "MAX_DEPTH",
           "MAX_DEGREE", "MAX_POWER"]


def parse_per(model, text: str):
    """A ``--per`` expression in ``model``'s parameters, read by :mod:`symbolic.grammar` (no ``eval``)."""
    return parse_expression(text, model.params, model.name, "per")


def per_expression(model, text: str, quantity: str | None = None):
    """``--per`` argument -> a SymPy expression in the model's parameters.  ``theta`` / ``leading``
    name the Θ class / leading term of ``quantity`` (the quantity the column divides)."""
    import sympy as sp

    from .asymptotics import foreign_symbols, leading_of, theta_of

    names = ", ".join(p.name for p in model.params)
    key = str(text).strip().lower()
    if key in ("theta", "leading"):
        q = quantity or model.main_quantity
        try:
            e = theta_of(model, q) if key == "theta" else leading_of(model, q)
        except BadInput:
            raise
        except ValueError as exc:       # the asymptotics cannot classify a term (a Piecewise, a Max of sums)
            why = str(exc).split(":")[0]
            raise BadInput("per", f"{model.name} has no {key} for {q} ({why if len(why) <= 60 else 'its terms have no one Θ class'}"
                                  f" over the model's regime); give --per as an expression in {names}") from None
        foreign = foreign_symbols(model, e)
        if foreign:      # e.g. the causal models' asymptotics, taken of their divisible form
            from printing.text import to_text
            raise BadInput("per", f"the {key} of {model.name}'s {q}, {to_text(e)}, is in {', '.join(foreign)}, not "
                                  f"its parameters; give --per as an expression in {names}")
        return e
    e = sp.sympify(parse_per(model, text))
    if e.is_zero:
        raise BadInput("per", f"{_quoted(str(text))} is 0; divide by a nonzero expression")
    return e


def compile_per(expr, text: str):
    """``fn(point) -> value`` of a ``--per`` expression at a model's point (a mapping of its parameters),
    exact; :class:`BadInput` naming ``per`` and the point where the expression is zero or undefined
    (a division by zero inside it), since a column cannot divide by it there."""
    from symbolic.evaluate import compile_exact

    fn = compile_exact(expr)
    shown = _quoted(str(text))

    def value(point: Mapping):
        args = {n: point[n] for n in fn.names}
        where = ", ".join(f"{n} = {shown_value(v)}" for n, v in args.items()) or "every point"
        try:
            v = fn(**args)
        except ZeroDivisionError:
            raise BadInput("per", f"{shown} is undefined at {where} (it divides by zero there)") from None
        if v == 0:
            raise BadInput("per", f"{shown} is 0 at {where}; a column cannot divide by it")
        return v
    return value
