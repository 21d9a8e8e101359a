"""Display-only notation: ``Theta(x)`` and ``Omega(x)`` as unevaluated SymPy functions, and
:class:`Grouped`, an integer shown with its digits grouped.

They carry no semantics (SymPy's ``Order`` means a limit, which is not what a Θ class over a
regime is); they exist so that a Θ class is an expression like any other and each printer renders it
through its own ``_print_Theta`` / ``_print_Omega``.  Defined in :mod:`symbolic.notes`, where a model's
notes use them as math (``note("Proposition 3: ", Omega(N**2 * d**2 / M))``); the same classes here.
"""

from __future__ import annotations

import re

import sympy as sp

from symbolic.notes import Omega, Theta

from .human import fmt_int

__all__ = ["Theta", "Omega", "Grouped", "Measured", "GROUP_FROM"]

#: integers of at least this many digits show in groups of three (``32,768``); shorter ones as they are
#: (``4096``, as a user types a block size)
GROUP_FROM = 5
#: :func:`printing.human.fmt_int`'s form beyond ``MAX_DIGITS`` digits: ``1.00e+4400 (4,401 digits)``
_SCIENTIFIC = re.compile(r"^(-?[\d.]+)e([+-]\d+) \(([\d,]+) digits\)$")


class Grouped(sp.Symbol):
    """An integer as a caption or a point shows it: ``3,350,000,000,000`` in text (the tables' grouping,
    :func:`printing.human.fmt_int`), ``3{,}350{,}000{,}000{,}000`` in LaTeX (the tables' siunitx-free form,
    which MathJax in a notebook or on GitHub sets too), ``4096`` below :data:`GROUP_FROM` digits.  Beyond
    :data:`printing.human.MAX_DIGITS` digits, the scientific form with the digit count.  Only for display:
    it is a symbol to SymPy (named by the value in hexadecimal, which has no digit limit; equal values give
    equal atoms), never computed with."""

    def __new__(cls, value):
        if isinstance(value, bool) or not isinstance(value, (int, sp.Integer)):
            raise TypeError(f"not an integer: {value!r}")
        return super().__new__(cls, hex(int(value)))

    def __getnewargs_ex__(self):
        return (self.value,), {}

    @property
    def value(self) -> int:
        return int(self.name, 16)

    def _grouped(self) -> bool:
        return abs(self.value) >= 10 ** (GROUP_FROM - 1)

    def _sympystr(self, printer) -> str:
        return fmt_int(self.value) if self._grouped() else str(self.value)

    _tilebound_text = _sympystr

    def _tilebound_latex(self, printer) -> str:
        text = self._sympystr(printer)
        sci = _SCIENTIFIC.match(text)
        if sci:                                                 # fmt_int's scientific form, set as math
            mantissa, exp, digits = sci.groups()
            return rf"{mantissa} \cdot 10^{{{int(exp)}}}\ \text{{({digits.replace(',', '{,}')} digits)}}"
        return text.replace(",", "{,}")

    _latex = _tilebound_latex


class Measured(sp.Symbol):
    """A value with its unit as a caption or a point shows it, formatted as the tables' cells are
    (:mod:`printing.human`: ``3.35 TB/s``, ``700 ns``): the text as it is, in LaTeX the number and the
    unit upright in math (``3.35\\ \\mathrm{TB/s}``, ``2.5\\ \\mathrm{\\mu s}``).  Only for display: a symbol
    named by its text, never computed with."""

    def __new__(cls, text: str):
        if not isinstance(text, str) or " " not in text:
            raise TypeError(f"a number and its unit, got {text!r}")
        return super().__new__(cls, text)

    def __getnewargs_ex__(self):
        return (self.name,), {}

    def _sympystr(self, printer) -> str:
        return self.name

    _tilebound_text = _sympystr

    def _tilebound_latex(self, printer) -> str:
        number, unit = self.name.split(" ", 1)
        unit = unit.replace("µ", r"\mu ").replace("μ", r"\mu ")
        return rf"{number}\ \mathrm{{{unit.strip()}}}"

    _latex = _tilebound_latex
