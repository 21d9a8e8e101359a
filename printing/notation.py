"""Display-only notation: ``Theta(x)`` and ``Omega(x)`` as unevaluated SymPy functions.

They carry no semantics (SymPy's ``Order`` means a limit, which is not what a Θ class over a
regime is); they exist so that a Θ class is an expression like any other and each printer renders it
through its own ``_print_Theta`` / ``_print_Omega``.  Defined in :mod:`symbolic.notes`, where a model's
notes use them as math (``note("Proposition 3: ", Omega(N**2 * d**2 / M))``); the same classes here.
"""

from __future__ import annotations

from symbolic.notes import Omega, Theta

__all__ = ["Theta", "Omega"]
