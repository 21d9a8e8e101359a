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
"""

from __future__ import annotations

from typing import Iterator

import sympy as sp

__all__ = ["Note", "Code", "note", "code", "as_note"]


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
        return super().__new__(cls, tuple(_piece(p) for p in pieces))

    def text_pieces(self) -> Iterator[str]:
        return (p for p in self if isinstance(p, str))

    def math_pieces(self) -> Iterator[sp.Basic]:
        return (p for p in self if isinstance(p, sp.Basic))

    @property
    def free_symbols(self) -> set:
        return set().union(*(p.free_symbols for p in self.math_pieces()))

    def __str__(self) -> str:
        return "".join(str(p) for p in self)

    def __repr__(self) -> str:
        return "note(" + ", ".join(repr(p) for p in self) + ")"

    def __add__(self, other):
        return Note(tuple(self) + tuple(as_note(other)))

    def __radd__(self, other):
        return Note(tuple(as_note(other)) + tuple(self))


def _piece(p):
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
