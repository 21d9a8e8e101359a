"""A cheap canonical form for the divisible forms: a rational function of the parameters and of opaque atoms.

A divisible form is a rational function of the parameters, the divisibility ``Dummy`` quotients and a few
*atoms* - ``ceiling``, ``floor``, ``Max``, ``Min``, ``gcd``, an Iverson bracket, a ``Sum``, a ``Piecewise``.
:func:`cancel_atoms` brings one to ``p/q`` with ``p`` and ``q`` coprime polynomials: each atom's arguments
first (inner atoms before outer ones), the atom rebuilt from them so that its own ``eval`` runs on the new
arguments (``ceiling(t k + E - E/B)`` takes the integers ``t k + E`` out, ``ceiling(N/B)`` with
``N = B t`` becomes ``t``), then every atom replaced by a fresh symbol and the result ``sympy.cancel``-ed.

Equal atoms in two terms become the same symbol only once their arguments are in one form, which is why the
arguments go first: ``t floor(x) + (t S - t (S - 1))(ceiling(y) - floor(x))`` is ``t ceiling(y)``.  This is
what ``sympy.simplify`` bought the divisible forms, at a few milliseconds where ``simplify`` took tenths of
a second per quantity (it tries every rewrite it knows and keeps the shortest): the forms are printed after
``factor_terms(expand(...))``, which fixes their shape whatever the intermediate's was (for every registered
model the forms came out the very expressions ``simplify`` gave when this replaced it).  Where the
denominators are monomials the expanded sum is already the cancelled form, and ``cancel`` is skipped.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp
from sympy.concrete.expr_with_limits import ExprWithLimits

__all__ = ["cancel_atoms", "rebuild_atoms"]

#: atoms whose arguments are rebuilt from their canonical forms: an integer part of the argument of a floor
#: or ceiling is only taken out by its ``eval`` when the argument is a sum, so theirs are expanded
_ROUNDING = (sp.floor, sp.ceiling)


def _rebuilt(atom: sp.Expr) -> sp.Expr:
    """``atom`` with each of its expression arguments in canonical form (re-evaluated); others as they are.
    A ``Sum``, ``Product`` or ``Integral`` (they bind a variable), a ``Piecewise`` (its conditions) and
    anything whose arguments are not all expressions are kept as one opaque whole."""
    if isinstance(atom, (ExprWithLimits, sp.Piecewise)) or not all(isinstance(a, sp.Expr) for a in atom.args):
        return atom
    args = [cancel_atoms(a) for a in atom.args]
    if isinstance(atom, _ROUNDING):
        args = [sp.expand(a) for a in args]
    if args == list(atom.args):
        return atom
    return atom.func(*args)


def _opaque(e: sp.Expr, names: dict) -> sp.Expr:
    """``e`` with each atom rebuilt (:func:`_rebuilt`) and replaced by its symbol in ``names`` (added there)."""
    def walk(x: sp.Expr, depth: int = 0) -> sp.Expr:
        if x.is_Atom:
            return x
        if x.is_Add or x.is_Mul:
            return x.func(*[walk(a, depth) for a in x.args])
        if x.is_Pow and x.exp.is_Integer:
            return walk(x.base, depth) ** x.exp
        new = _rebuilt(x)
        if new.func is not x.func and depth < 8:   # its eval took something out (an integer part): again
            return walk(new, depth + 1)
        if new not in names:
            names[new] = sp.Dummy()
        return names[new]
    return walk(e)


def _is_laurent(e: sp.Expr) -> bool:
    """Whether expanded ``e`` is a sum of monomials over monomials (its own ``cancel``-ed form, expanded)."""
    return all(f.is_Atom or (f.is_Pow and f.base.is_Atom and f.exp.is_Integer)
               for t in sp.Add.make_args(e) for f in sp.Mul.make_args(t))


@lru_cache(maxsize=4096)
def cancel_atoms(e: sp.Expr) -> sp.Expr:
    """``e`` as ``p/q`` (``sympy.cancel``) over its atoms, each atom's arguments in this form first;
    mathematically ``e`` (each step is an identity), in a form that equal inputs share.  Where the
    denominators are monomials, the expanded sum is that form already, and ``cancel`` is skipped."""
    e = sp.sympify(e)
    if not isinstance(e, sp.Expr) or e.is_Atom:
        return e
    names: dict[sp.Expr, sp.Dummy] = {}
    r = sp.expand(_opaque(e, names))
    if not _is_laurent(r):
        r = sp.cancel(r)
    return r.xreplace({d: a for a, d in names.items()})


def rebuild_atoms(e: sp.Expr) -> sp.Expr:
    """``e`` with each atom's arguments in :func:`cancel_atoms` form and the atom re-evaluated on them (in
    the divisibility quotients, ``ceiling(t k + E - E/B)`` takes the integer ``t k + E`` out); the sum and
    products around the atoms as they are."""
    names: dict[sp.Expr, sp.Dummy] = {}
    return _opaque(sp.sympify(e), names).xreplace({d: a for a, d in names.items()})
