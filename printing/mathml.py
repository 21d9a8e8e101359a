r"""MathML for cost expressions and notes: what a browser renders with no script and no network.

:class:`TileboundMathMLPrinter` subclasses SymPy's ``MathMLPresentationPrinter`` (presentation MathML,
which Chromium and Firefox render natively, MathML Core) and overrides only what the project's notation
needs, as :class:`printing.latex.TileboundLatexPrinter` does for LaTeX: ``⌈ ⌉`` and ``⌊ ⌋`` as stretchy
operators, ``Θ(…)`` / ``Ω(…)``, a ``Piecewise`` as a brace over a table of cases, a parameter by its name
with one subscript (``B_r`` is :math:`B_r`), a quantity's name (:class:`printing.content.Quantity`) and a
note's :func:`~symbolic.notes.symbol` upright, :class:`~printing.notation.Grouped` with its digits grouped, and a
node that prints as what it stands for (:class:`symbolic.shown_as.ShownAs`: floor sums, the GEMM L2 counts) as
its ``_display()`` - the sum over blocks it counts.  Every glyph comes from the one glyph table
(:mod:`printing.glyphs`).

:func:`to_mathml` returns one ``<math>`` element (inline, or ``display="block"``); :func:`note_to_html` renders a
:class:`symbolic.notes.Note` piece by piece - text escaped, math as ``<math>``, code as ``<code>`` - so no
printer reads math out of English.
"""

from __future__ import annotations

import html as _html

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

from symbolic.notes import Code, Symbol, as_note
from symbolic.params import Param
from symbolic.shown_as import ShownAs

from .glyphs import GLYPHS, relation
from .notation import Grouped, Measured

__all__ = ["TileboundMathMLPrinter", "to_mathml", "note_to_html", "text_to_html", "relation_mathml"]

_CEIL, _FLOOR = ("⌈", "⌉"), ("⌊", "⌋")
assert all(c in GLYPHS for c in _CEIL + _FLOOR + ("Θ", "Ω", "·"))


class TileboundMathMLPrinter(MathMLPresentationPrinter):
    """SymPy's presentation-MathML printer with the project's notation (see the module docstring)."""

    printmethod = "_tilebound_mathml"
    _default_settings = dict(MathMLPresentationPrinter._default_settings)

    def __init__(self, settings=None):
        settings = dict(settings or {})
        settings.setdefault("mul_symbol", "dot")
        super().__init__(settings)

    # ---------------------------------------------------------------------- helpers
    def _el(self, tag, *children, text=None, **attrs):
        el = self.dom.createElement(tag)
        for k, v in attrs.items():
            el.setAttribute(k.rstrip("_"), v)
        if text is not None:
            el.appendChild(self.dom.createTextNode(text))
        for c in children:
            el.appendChild(c)
        return el

    def _fenced(self, left, inner, right):
        return self._el("mrow", self._el("mo", text=left, stretchy="true"), inner,
                        self._el("mo", text=right, stretchy="true"))

    def doprint(self, expr):
        while isinstance(expr, ShownAs):       # SymPy's doprint calls Printer._print, past the override below
            expr = expr._display()
        return super().doprint(expr)

    def _print(self, expr, **kwargs):
        if isinstance(expr, ShownAs):          # a closed form shown as the sum it stands for
            return super()._print(expr._display(), **kwargs)
        return super()._print(expr, **kwargs)

    # ---------------------------------------------------------------------- symbols
    def _print_Symbol(self, sym, style="plain"):
        if isinstance(sym, Grouped):
            return self._el("mn", text=sym._sympystr(None))
        if isinstance(sym, Measured):          # 3.35 TB/s: the number, then its unit upright
            number, unit = sym.name.split(" ", 1)
            return self._el("mrow", self._el("mn", text=number), self._el("mtext", text="\u2009" + unit))
        if isinstance(sym, Symbol) or type(sym).__name__ == "Quantity":
            return self._el("mi", text=sym.name, mathvariant="normal") if len(sym.name) > 1 else \
                self._el("mi", text=sym.name)
        if isinstance(sym, Param):
            head, sep, tail = sym.name.partition("_")
            if sep and tail:
                return self._el("msub", self._el("mi", text=head), self._el("mi", text=tail))
            return self._el("mi", text=sym.name)
        return super()._print_Symbol(sym, style=style)

    _print_Dummy = _print_Symbol

    # ---------------------------------------------------------------------- the project's notation
    def _print_ceiling(self, e):
        return self._fenced(_CEIL[0], self._print(e.args[0]), _CEIL[1])

    def _print_floor(self, e):
        return self._fenced(_FLOOR[0], self._print(e.args[0]), _FLOOR[1])

    def _class(self, letter, e):
        return self._el("mrow", self._el("mi", text=letter, mathvariant="normal"),
                        self._fenced("(", self._print(e.args[0]), ")"))

    def _print_Theta(self, e):
        return self._class("Θ", e)

    def _print_Omega(self, e):
        return self._class("Ω", e)

    def _print_Piecewise(self, e):
        table = self._el("mtable", columnalign="left left")
        for expr, cond in e.args:
            words = "otherwise" if cond is sp.true else "if "
            cell = self._el("mrow", self._el("mtext", text=words))
            if cond is not sp.true:
                cell.appendChild(self._print(cond))
            table.appendChild(self._el("mtr", self._el("mtd", self._print(expr)), self._el("mtd", cell)))
        return self._el("mrow", self._el("mo", text="{", stretchy="true"), table)

    def _print_SplitLaunch(self, e):       # decode's Iverson bracket [S > 1]
        inner = self._el("mrow", self._print(e.args[0]), self._el("mo", text=">"), self._el("mn", text="1"))
        return self._fenced("[", inner, "]")

    def _print_Mod(self, e):
        return self._el("mrow", self._print_parenthesized(e.args[0]), self._el("mo", text="mod"),
                        self._print_parenthesized(e.args[1]))

    def _print_gcd(self, e):
        return self._el("mrow", self._el("mi", text="gcd"), self._paren_comma_separated(*e.args))

    def _print_parenthesized(self, x):
        if x.is_Atom:
            return self._print(x)
        return self._fenced("(", self._print(x), ")")


def to_mathml(expr, display: bool = False, **settings) -> str:
    """``expr`` as one ``<math>`` element (``display="block"`` with ``display=True``)."""
    inner = TileboundMathMLPrinter(settings).doprint(sp.sympify(expr))
    attrs = ' display="block"' if display else ""
    return f"<math{attrs}>{inner}</math>"


def relation_mathml(rel: str) -> str:
    """A printed line's relation (``=``, ``~``, ``in``, ``<=``) as a MathML operator, from the glyph table."""
    return f"<mo>{_html.escape(relation(rel, 'unicode'))}</mo>"


def text_to_html(text: str) -> str:
    """A note's text piece as HTML text (escaped; Unicode glyphs as they are, the page is UTF-8)."""
    return _html.escape(str(text), quote=False)


def note_to_html(note) -> str:
    """A :class:`~symbolic.notes.Note` (or a ``str``: one text piece) as HTML, piece by piece: text escaped,
    math as inline ``<math>`` (:func:`to_mathml`), code as ``<code>``."""
    out = []
    for piece in as_note(note):
        if isinstance(piece, Code):
            out.append(f"<code>{_html.escape(str(piece))}</code>")
        elif isinstance(piece, str):
            out.append(text_to_html(piece))
        else:
            out.append(to_mathml(piece))
    return "".join(out)
