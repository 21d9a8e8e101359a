"""Display-only notation: ``Theta(x)`` and ``Omega(x)`` as unevaluated SymPy functions.

They carry no semantics (SymPy's ``Order`` means a limit, which is not what a Θ class over a
regime is); they exist so that a Θ class is an expression like any other and each printer renders it
through its own ``_print_Theta`` / ``_print_Omega``.
"""

from __future__ import annotations

import sympy as sp

__all__ = ["Theta", "Omega"]


class Theta(sp.Function):
    """``Θ(expr)``: the asymptotic class of a cost, constants dropped (printing only)."""

    nargs = 1


class Omega(sp.Function):
    """``Ω(expr)``: a lower-bound class whose constant is not stated (printing only)."""

    nargs = 1
