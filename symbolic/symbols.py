"""The vocabulary: named SymPy symbols with their domains.

Every size and block is a positive integer symbol, so SymPy may use ``N > 0`` and ``N`` integral in
simplification.  LaTeX names follow the papers (``B_r``, ``B_c``, ``N_k``).  Each symbol carries
the smallest value it may take (``vmin``, tinygrad-style); models validate points against it.
"""

from __future__ import annotations

from types import MappingProxyType

import sympy as sp

__all__ = ["sym", "N", "Nk", "d", "Br", "Bc", "M", "DOMAINS", "LATEX_NAMES", "all_symbols"]

_REGISTRY: dict[str, sp.Symbol] = {}
_LATEX: dict[sp.Symbol, str] = {}


def sym(name: str, latex: str | None = None, **assumptions) -> sp.Symbol:
    """A positive-integer symbol (override with assumptions, e.g. ``real=True``), interned by name."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    kw = {"integer": True, "positive": True}
    kw.update(assumptions)
    s = sp.Symbol(name, **kw)
    _REGISTRY[name] = s
    if latex:
        _LATEX[s] = latex
    return s


N = sym("N")                      # query rows (sequence length)
Nk = sym("N_k", latex="N_k")      # key rows (N_k = N for self-attention; > N when decoding against a cache)
d = sym("d")                      # head dimension
Br = sym("B_r", latex="B_r")      # query (row) block size
Bc = sym("B_c", latex="B_c")      # key (column) block size
M = sym("M")                      # on-chip SRAM, in elements

#: lower bound of every registered symbol (all are >= 1 unless declared otherwise)
DOMAINS = MappingProxyType({})
LATEX_NAMES = MappingProxyType(_LATEX)


def all_symbols() -> dict[str, sp.Symbol]:
    return dict(_REGISTRY)
