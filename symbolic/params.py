"""Parameters: SymPy symbols that carry their own name, least value, LaTeX form and meaning.

A model declares its parameters itself (tinygrad's ``Variable(name, min, max)``, SymPy units'
``Quantity(name, latex_repr=...)``): there is no global table of symbols, so GEMM's ``M`` and
attention's ``M`` (on-chip memory) are two parameters of two models, each with its own meaning, and
a user types the same name that ``show`` prints.

A :class:`Param` *is* a ``sympy.Symbol`` (formulas are written with it directly) whose assumptions
follow its kind and its least value (tinygrad's ``vmin`` reaching the simplifier): an integer
parameter with ``least >= 1`` is a positive integer symbol, so SymPy may simplify with ``N > 0``; with
``least = 0`` it is a nonnegative integer symbol (``Max(R, 1)`` stays ``Max(R, 1)``); with a negative
``least`` an integer symbol and nothing more.  A real parameter is a positive real symbol.  Validation of a value comes from the parameter
(:meth:`Param.check`, through the one validator :mod:`base.validate`).  Symbols that only a
derivation uses (a summation index, the quotient ``t = N / B_r``) are ``sympy.Dummy``.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from base import validate

__all__ = ["Param", "param", "real_param"]


class Param(sp.Symbol):
    """``Param("B_r", "query (row) block size", latex="B_r", least=1)``.

    ``name`` is what a user types (``--at B_r=128``); ``latex`` its LaTeX form (default: the name
    with one subscript, ``N_k`` -> ``N_{k}``); ``least`` its least value; ``integer`` whether it is a
    count (else a positive real: a time or a rate); ``meaning`` one line for ``show`` and the notes.
    """

    def __new__(cls, name: str, meaning: str = "", *, latex: str | None = None, least=1, integer: bool = True):
        assumptions = _assumptions(int(least), integer) if integer else {"real": True, "positive": True,
                                                                           "integer": False}
        obj = sp.Symbol.__xnew__(cls, name, **assumptions)
        obj.meaning = meaning
        obj.latex = latex if latex is not None else _default_latex(name)
        obj.least = int(least) if integer else Fraction(least)
        obj.counts = bool(integer)
        return obj

    def __getnewargs_ex__(self):
        return ((self.name, self.meaning), {"latex": self.latex, "least": self.least, "integer": self.counts})

    def _hashable_content(self):
        return super()._hashable_content() + (self.meaning, self.latex, self.least, self.counts)

    def __getstate__(self):
        return {"meaning": self.meaning, "latex": self.latex, "least": self.least, "counts": self.counts}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)

    def check(self, value):
        """``value`` validated for this parameter: an int ``>= least`` (a count), or an exact
        ``Fraction`` ``> 0`` and ``>= least`` (a real).  :class:`~base.errors.BadInput` names it."""
        if self.counts:
            return validate.integer(self.name, value, self.least)
        return validate.real(self.name, value, least=self.least if self.least > 0 else 0,
                             strict=self.least <= 0)

    def _latex(self, printer) -> str:   # SymPy's LaTeX printer asks the symbol itself
        return self.latex


def _assumptions(least: int, integer: bool) -> dict:
    """SymPy's assumptions for an integer parameter ``>= least``: the strongest sign that ``least`` proves."""
    if least >= 1:
        return {"integer": True, "positive": True}
    if least == 0:
        return {"integer": True, "nonnegative": True}
    return {"integer": True}


def _default_latex(name: str) -> str:
    head, sep, tail = name.partition("_")
    return f"{head}_{{{tail}}}" if sep and tail else name


def param(name: str, meaning: str = "", latex: str | None = None, least: int = 1) -> Param:
    """An integer parameter (a size, a block, a count) ``>= least``."""
    return Param(name, meaning, latex=latex, least=least)


def real_param(name: str, meaning: str = "", latex: str | None = None) -> Param:
    """A positive real parameter (a time in seconds, a rate)."""
    return Param(name, meaning, latex=latex, least=0, integer=False)
