"""Text with math as data: a note, a lower bound's name or a caption is a sequence of pieces.

A :class:`Note` is a tuple of pieces, each one of

* ``str`` - plain text, printed as text (never scanned for math),
* a SymPy expression - math, printed by each printer as it prints formulas (``B_r``, ``\\lceil N/B_c \\rceil``),
* :class:`Code` - an identifier a user types (a quantity or model name, ``hbm_reads_lru``), printed as code.

Written so in the model file (SymPy units keep ``latex_repr`` beside a name; latexify keeps its rules as
data), so that no printer has to guess which English words are math::

    note("masked loads: a partial edge tile moves only its ", B_M * B_N, " valid elements")
    note(code("hbm_reads_lru"), ": exact, the misses of the LRU simulation")

``note`` validates its pieces; a plain ``str`` where a note is expected is a note of one text piece.

A note's math is in the model's own parameters.  A name that is not a parameter - a tensor (``Q``, ``dO``),
a loop index, an abbreviation (``n_b``) - is a :func:`symbol`: a ``sympy.Dummy`` that prints as written and
that no formula can pick up by accident (:class:`symbolic.model.Model` refuses any other stray symbol)::

    Q, K = symbol("Q"), symbol("K")
    note(K, " and ", Q, " are read once per CTA")
"""

from __future__ import annotations

from typing import Iterator

import sympy as sp
from sympy.printing.str import StrPrinter

__all__ = ["Note", "Code", "Symbol", "Theta", "Omega", "note", "code", "symbol", "as_note"]


class Code(str):
    """An identifier shown as code (``\\texttt`` in LaTeX, backticks in Markdown)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"code({str.__repr__(self)})"


class Note(tuple):
    """A sequence of text (``str``), math (SymPy) and :class:`Code` pieces.  Hashable; equal when the
    pieces are.  ``str(note)`` is a plain rendering for logs (math by SymPy's ``str``)."""

    __slots__ = ()

    def __new__(cls, pieces=()):
        # an empty text piece is no piece: ``as_note("")`` is the empty note, which is false
        return super().__new__(cls, tuple(q for q in (_piece(p) for p in pieces) if not (isinstance(q, str) and q == "")))

    def text_pieces(self) -> Iterator[str]:
        return (p for p in self if isinstance(p, str))

    def math_pieces(self) -> Iterator[sp.Basic]:
        return (p for p in self if isinstance(p, sp.Basic))

    @property
    def free_symbols(self) -> set:
        return set().union(*(p.free_symbols for p in self.math_pieces()))

    def __str__(self) -> str:
        return "".join(p if isinstance(p, str) else _PLAIN.doprint(p) for p in self)

    def __repr__(self) -> str:
        return "note(" + ", ".join(repr(p) for p in self) + ")"

    def __add__(self, other):
        return Note(tuple(self) + tuple(as_note(other)))

    def __radd__(self, other):
        return Note(tuple(as_note(other)) + tuple(self))


class Symbol(sp.Dummy):
    """A name in a note's math that is not a parameter (see :func:`symbol`).  ``latex`` is its LaTeX form
    (``\\mathrm{LSE}``); ``None`` prints the name as SymPy prints a symbol of that name (``n_{b}``)."""

    def __new__(cls, name: str, latex=None, text=None):
        obj = super().__new__(cls, name)
        obj.latex, obj.text = latex, text
        return obj

    def _tilebound_text(self, printer) -> str:
        return self.text if self.text is not None else self.name

    def _tilebound_latex(self, printer, *args) -> str:
        return self.latex if self.latex is not None else sp.latex(sp.Symbol(self.name))

    _sympystr = _tilebound_text
    _latex = _tilebound_latex


class Theta(sp.Function):
    """``Θ(expr)``: the asymptotic class of a cost, constants dropped (notation: printers render it through
    their ``_print_Theta``; SymPy's ``Order`` means a limit, which is not what a Θ class over a regime is)."""

    nargs = 1


class Omega(sp.Function):
    """``Ω(expr)``: a lower-bound class whose constant is not stated (notation, as :class:`Theta`)."""

    nargs = 1


def symbol(name: str, latex=None, text=None) -> Symbol:
    """A non-parameter name for a note's math: a tensor (``symbol("Q")``), an index, an abbreviation
    (``symbol("n_b")``), with an optional LaTeX form (``symbol("LSE", r"\\mathrm{LSE}")``) and text form
    (printed instead of the name; SymPy orders a product's factors by name)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"symbol(...) takes a name, got {name!r}")
    return Symbol(name, latex, text)


class _PlainPrinter(StrPrinter):
    """SymPy's ``str`` with every relation infix (``C = A*B``, not ``Eq(C, A*B)``): ``str(note)`` for logs."""

    def _print_Relational(self, expr):
        op = {"==": "="}.get(expr.rel_op, expr.rel_op)
        return f"{self._print(expr.lhs)} {op} {self._print(expr.rhs)}"


_PLAIN = _PlainPrinter()


def _piece(p):
    if isinstance(p, sp.logic.boolalg.BooleanAtom):      # Ge(N, 1) with N >= 1: SymPy decided the relation
        raise TypeError(f"a note's math piece is {p}: a relation SymPy decided from the symbols' assumptions; "
                        "build it unevaluated (sp.Ge(N, 1, evaluate=False))")
    if isinstance(p, (Code, sp.Basic)):
        return p
    if isinstance(p, str):
        return str(p)
    if isinstance(p, (int,)) and not isinstance(p, bool):
        return sp.Integer(p)
    raise TypeError(f"a note's piece is text (str), math (a SymPy expression) or code(...), got {p!r}")


def note(*pieces) -> Note:
    """``note("text ", expr, " more text", code("name"))``."""
    return Note(pieces)


def code(name: str) -> Code:
    """An identifier piece of a note."""
    if not isinstance(name, str):
        raise TypeError(f"code(...) takes a str, got {name!r}")
    return Code(name)


def as_note(value) -> Note:
    """``value`` as a :class:`Note`: a note as it is, a ``str`` as one text piece, an expression as one math piece."""
    if isinstance(value, Note):
        return value
    if isinstance(value, (str, sp.Basic)):
        return Note((value,))
    if isinstance(value, (tuple, list)):
        return Note(value)
    raise TypeError(f"not a note: {value!r}")
