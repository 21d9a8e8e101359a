"""One-line Unicode printing of cost expressions: ``2·N·⌈N/B_c⌉ + 12·N²·d²/M``, ``Θ(N²·d²/M)``.

:class:`TextPrinter` is a SymPy ``StrPrinter``: it dispatches on the expression's class
(``_print_ceiling``, ``_print_Pow``, ...), declares its options in ``_default_settings`` (an unknown
option raises ``TypeError``) and returns strings.  With ``unicode=False`` the same printer writes
plain ASCII (``ceil(N/B_c)``, ``N^2``) for terminals that cannot show ⌈ ⌉.

``to_text(expr)`` returns the string; ``print_text(expr)`` prints it.  ``note_to_text(note)`` renders a
:class:`symbolic.notes.Note` piece by piece (text as text, math by this printer, code as its name);
``model_to_text(model)`` renders the content tree of :func:`printing.content.model_printout`.
``ascii_text`` spells Unicode text (``≈``, ``µs``, ``÷``, ``N²``) in ASCII for a terminal that cannot show it.  Every character
in both styles comes from the one glyph table, :mod:`printing.glyphs`; a parameter prints as
its own name (``Param.name``, what a user types).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

from symbolic.notes import Code, as_note

from .content import model_printout
from .glyphs import GLYPHS as GLYPH_TABLE
from .glyphs import SUPERSCRIPTS, relation, to_ascii

__all__ = ["TextPrinter", "to_text", "print_text", "model_to_text", "note_to_text", "ascii_text", "GLYPHS",
           "ASCII_SPELLINGS"]


@dataclass(frozen=True)
class Glyphs:
    """The characters one output style uses (both styles read :mod:`.glyphs`)."""

    ceil: tuple
    floor: tuple
    mul: str
    theta: str
    omega: str
    sum: str
    sqrt: str
    superscripts: bool
    unicode: bool

    def relation(self, rel: str) -> str:
        return relation(rel, "unicode" if self.unicode else "ascii")


def _style(unicode: bool) -> Glyphs:
    form = (lambda c: c) if unicode else (lambda c: GLYPH_TABLE[c].ascii)
    return Glyphs(ceil=(form("⌈"), form("⌉")), floor=(form("⌊"), form("⌋")), mul=form("·"), theta=form("Θ"),
                  omega=form("Ω"), sum=form("Σ"), sqrt=form("√"), superscripts=unicode, unicode=unicode)


#: output styles: ``GLYPHS[unicode]``, both derived from the one glyph table
GLYPHS = MappingProxyType({True: _style(True), False: _style(False)})

_EXPR_WIDTH = 60    # units align after expressions up to this long
_SUPERSCRIPT = str.maketrans({p: s for s, p in SUPERSCRIPTS.items()})

#: the non-ASCII characters of the project's prose and units, spelled in ASCII (from the glyph table)
ASCII_SPELLINGS = MappingProxyType({c: g.ascii for c, g in GLYPH_TABLE.items()})


class TextPrinter(StrPrinter):
    """Unicode (or ASCII) one-line printer for cost expressions."""

    printmethod = "_tilebound_text"
    _default_settings = dict(StrPrinter._default_settings, unicode=True)

    @property
    def glyphs(self) -> Glyphs:
        return GLYPHS[bool(self._settings["unicode"])]

    # ------------------------------------------------------------------ atoms
    def _print_Symbol(self, expr):
        return expr.name

    _print_Dummy = _print_Symbol

    def _print_Infinity(self, expr):
        return "∞" if self.glyphs.unicode else GLYPH_TABLE["∞"].ascii

    def _print_NegativeInfinity(self, expr):
        return "-" + self._print_Infinity(expr)

    # ------------------------------------------------------------------ rounding
    def _print_ceiling(self, expr):
        left, right = self.glyphs.ceil
        return f"{left}{self._print(expr.args[0])}{right}"

    def _print_floor(self, expr):
        left, right = self.glyphs.floor
        return f"{left}{self._print(expr.args[0])}{right}"

    # ------------------------------------------------------------------ products and powers
    def _print_Pow(self, expr, rational=False):
        base, exp = expr.base, expr.exp
        if exp == sp.Rational(1, 2):
            if base.is_Atom and self.glyphs.superscripts:
                return f"{self.glyphs.sqrt}{self._print(base)}"
            return f"{self.glyphs.sqrt}({self._print(base)})"
        if exp.is_Rational and exp.is_negative:
            return f"1/{self._print(sp.Pow(base, -exp, evaluate=False))}" if exp != -1 else \
                f"1/{self.parenthesize(base, PRECEDENCE['Mul'], strict=False)}"
        b = self.parenthesize(base, PRECEDENCE["Pow"], strict=False)
        if base.is_Pow or (base.is_Rational and not base.is_Integer) or (base.is_Integer and base < 0):
            b = f"({self._print(base)})"
        if exp.is_Integer and self.glyphs.superscripts:
            return b + str(int(exp)).translate(_SUPERSCRIPT)
        e = self._print(exp) if exp.is_Atom else f"({self._print(exp)})"
        return f"{b}^{e}"

    def _print_Mul(self, expr):
        if expr.could_extract_minus_sign():
            inner = -expr
            return "-" + (self.parenthesize(inner, PRECEDENCE["Mul"], strict=True) if inner.is_Add else self._print(inner))
        numer, denom = [], []
        for f in expr.as_ordered_factors():
            if f.is_Rational and not f.is_Integer:
                if f.p != 1:
                    numer.append(sp.Integer(f.p))
                denom.append(sp.Integer(f.q))
            elif f.is_Pow and f.exp.is_Rational and f.exp.is_negative:
                denom.append(f.base if f.exp == -1 else sp.Pow(f.base, -f.exp, evaluate=False))
            else:
                numer.append(f)
        mul = self.glyphs.mul
        num = mul.join(self.parenthesize(a, PRECEDENCE["Mul"], strict=False) for a in numer) or "1"
        if not denom:
            return num
        den = mul.join(self.parenthesize(a, PRECEDENCE["Mul"], strict=False) for a in denom)
        if len(denom) > 1:
            den = f"({den})"
        return f"{num}/{den}"

    # ------------------------------------------------------------------ functions and structure
    def _print_Min(self, expr):
        return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Max(self, expr):
        return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Theta(self, expr):
        return f"{self.glyphs.theta}({self._print(expr.args[0])})"

    def _print_Omega(self, expr):
        return f"{self.glyphs.omega}({self._print(expr.args[0])})"

    def _print_Relational(self, expr):
        op = self.glyphs.relation(expr.rel_op)
        return f"{self._print(expr.lhs)} {op} {self._print(expr.rhs)}"

    def _print_Sum(self, expr):
        body = self.parenthesize(expr.function, PRECEDENCE["Mul"], strict=False)
        limits = ", ".join(f"{self._print(v)}={self._print(lo)}..{self._print(hi)}" for v, lo, hi in expr.limits)
        return f"{self.glyphs.sum}[{limits}] {body}"

    def _print_Piecewise(self, expr):
        parts = []
        for e, c in expr.args:
            if c is sp.true:
                parts.append(f"{self._print(e)} otherwise")
            else:
                parts.append(f"{self._print(e)} if {self._print(c)}")
        return "{" + "; ".join(parts) + "}"

    def _print_And(self, expr):
        return " and ".join(self.parenthesize(a, PRECEDENCE["And"], strict=False) for a in expr.args)

    def _print_Or(self, expr):
        return " or ".join(self.parenthesize(a, PRECEDENCE["Or"], strict=False) for a in expr.args)


def to_text(expr, **settings) -> str:
    """The one-line string of ``expr`` (settings: ``unicode=True``, ``order=None``)."""
    return TextPrinter(settings).doprint(sp.sympify(expr))


def print_text(expr, **settings) -> None:
    print(to_text(expr, **settings))


def ascii_text(text: str) -> str:
    """``text`` with every character of the glyph table spelled in ASCII, superscript runs as ``^``
    and digits (``'Θ(N²) ≈ 4.56 µs'`` -> ``'Theta(N^2) ~ 4.56 us'``); any other character is left as it is."""
    return to_ascii(text)


def relation_text(rel: str, unicode: bool = True) -> str:
    return relation(rel, "unicode" if unicode else "ascii")


def note_to_text(note, unicode: bool = True) -> str:
    """A :class:`~symbolic.notes.Note` (or a ``str``, one text piece) as one line: text as it is (spelled
    in ASCII when ``unicode=False``), math by :func:`to_text`, code as its name."""
    out = []
    for piece in as_note(note):
        if isinstance(piece, Code):
            out.append(str(piece))
        elif isinstance(piece, str):
            out.append(piece if unicode else ascii_text(piece))
        else:
            out.append(to_text(piece, unicode=unicode))
    return "".join(out)


def model_to_text(model, unicode: bool = True) -> str:
    """A model's printout (:func:`printing.content.model_printout`) as aligned Unicode lines, section by section."""
    doc = model_printout(model)

    def t(note) -> str:
        return note_to_text(note, unicode)

    lines = [f"{doc.name}: {t(doc.summary)}"]
    if doc.source:
        lines.append(f"source: {t(doc.source)}")
    for sec in doc.sections:
        lines.append("")
        head = t(sec.title)
        if sec.assumptions:
            conds = ", ".join(f"{to_text(a, unicode=unicode)} {relation_text(r, unicode)} {to_text(b, unicode=unicode)}"
                              for a, r, b in sec.assumptions)
            head += f" ({conds})"
        lines.append(head)
        labels = [t(ln.label) for ln in sec.lines]
        width = max((len(lb) for ln, lb in zip(sec.lines, labels) if not ln.own_line), default=0)
        exprs = [to_text(ln.expr, unicode=unicode) for ln in sec.lines]
        ewidth = max((len(e) for e in exprs if len(e) <= _EXPR_WIDTH), default=0)
        for ln, label, e in zip(sec.lines, labels, exprs):
            unit = f"  [{ln.unit}]" if ln.unit and ln.unit != "1" else ""
            rel = relation_text(ln.relation, unicode)
            if ln.own_line:       # a long name (a lower bound's citation) on its own line
                lines.append(f"  {label}")
                lines.append(f"  {'':<{max(width, 2)}} {rel} {e:<{ewidth}}{unit}".rstrip())
            else:
                lines.append(f"  {label:<{width}} {rel} {e:<{ewidth}}{unit}".rstrip())
        for note in sec.notes:
            lines.append(f"  {t(note)}")
    for note in doc.notes:
        lines.append(f"NOTE: {t(note)}")
    text = "\n".join(lines)
    return text if unicode else ascii_text(text)     # units and names too, in ASCII
