"""One-line Unicode printing of cost expressions: ``2·N·⌈N/B_c⌉ + 12·N²·d²/M``, ``Θ(N²·d²/M)``.

:class:`TextPrinter` is a SymPy ``StrPrinter``: it dispatches on the expression's class
(``_print_ceiling``, ``_print_Pow``, ...), declares its options in ``_default_settings`` (an unknown
option raises ``TypeError``) and returns strings.  With ``unicode=False`` the same printer writes
plain ASCII (``ceil(N/B_c)``, ``N^2``) for terminals that cannot show ⌈ ⌉.

``to_text(expr)`` returns the string; ``print_text(expr)`` prints it.  ``note_to_text(note)`` renders a
:class:`symbolic.notes.Note` piece by piece (text as text, math by this printer, code as its name);
``model_to_text(model)`` renders the content tree of :func:`printing.content.model_printout`.
A formula longer than its line is broken as :func:`printing.latex.break_latex` breaks LaTeX
(:func:`break_text`): at the outermost sum's terms first, then a product's factors, then a ``min``/``max``
argument, each continuation line starting with its operator under the ``=``; every line of
:func:`model_to_text` is at most :data:`LINE_WIDTH` characters (prose wraps at spaces).
``ascii_text`` spells Unicode text (``≈``, ``µs``, ``÷``, ``N²``) in ASCII for a terminal that cannot show it.  Every character
in both styles comes from the one glyph table, :mod:`printing.glyphs`; a parameter prints as
its own name (``Param.name``, what a user types).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from types import MappingProxyType

import sympy as sp
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from symbolic.notes import Code, as_note

from .content import model_printout
from .glyphs import GLYPHS as GLYPH_TABLE
from .glyphs import SUPERSCRIPTS, relation, to_ascii

__all__ = ["TextPrinter", "to_text", "print_text", "model_to_text", "note_to_text", "ascii_text", "GLYPHS",
           "ASCII_SPELLINGS", "break_text", "LINE_WIDTH"]


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
#: the most characters a line of :func:`model_to_text` takes (a formula is broken, prose wrapped, to fit):
#: a terminal's common width with room to spare, the width a diff or a review shows unwrapped
LINE_WIDTH = 100
#: a broken line ends at the outermost break point that leaves it at least this share of its width
SHORTEST = 0.45
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

    # separators: the breaking printer (:class:`_MarkingTextPrinter`) leaves a break point in each
    def _factor_sep(self) -> str:
        return self.glyphs.mul

    def _over(self) -> str:
        return "/"

    def _comma(self) -> str:
        return ", "

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
        mul = self._factor_sep()
        num = mul.join(self.parenthesize(a, PRECEDENCE["Mul"], strict=False) for a in numer) or "1"
        if not denom:
            return num
        den = mul.join(self.parenthesize(a, PRECEDENCE["Mul"], strict=False) for a in denom)
        if len(denom) > 1:
            den = f"({den})"
        return f"{num}{self._over()}{den}"

    # ------------------------------------------------------------------ functions and structure
    def _print_Min(self, expr):
        return "min(" + self._comma().join(self._print(a) for a in expr.args) + ")"

    def _print_Max(self, expr):
        return "max(" + self._comma().join(self._print(a) for a in expr.args) + ")"

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


# ----------------------------------------------------------------------------- breaking long formulas
#: a break point in the marking printer's output: this character, the kind of break (``+`` before a sum's
#: operator, ``,`` after an argument's comma, ``·`` between factors, ``/`` before a divisor) and the
#: nesting depth of the sum, product or function it belongs to (as ``chr(_DEPTH0 + depth)``)
_MARK, _DEPTH0 = "\x1f", 0xE000
_MARKS = re.compile("\x1f(.)(.)", re.DOTALL)
#: preference among break points at one depth: before a sum's operator, after a comma, between factors
_PENALTY = {"+": 0, ",": 1, "·": 3, "/": 3}


class _MarkingTextPrinter(TextPrinter):
    """:class:`TextPrinter` leaving a break point before each sum operator, between factors and after each
    ``min``/``max`` argument's comma; with the marks removed its text is :func:`to_text`'s (tested)."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self._depth = 0

    def _mark(self, kind: str) -> str:
        return _MARK + kind + chr(_DEPTH0 + max(self._depth - 1, 0))   # the depth of the node being printed

    def _factor_sep(self) -> str:
        return self._mark("·") + self.glyphs.mul

    def _over(self) -> str:
        return self._mark("/") + "/"

    def _comma(self) -> str:
        return ", " + self._mark(",")

    def _nested(self, method, expr, *args):
        self._depth += 1
        try:
            return method(expr, *args)
        finally:
            self._depth -= 1

    def _print_Mul(self, expr):
        return self._nested(super()._print_Mul, expr)

    def _print_Min(self, expr):
        return self._nested(super()._print_Min, expr)

    def _print_Max(self, expr):
        return self._nested(super()._print_Max, expr)

    def _print_Piecewise(self, expr):             # TextPrinter's, with a break point after each case's "; "
        self._depth += 1
        try:
            parts = [f"{self._print(e)} otherwise" if c is sp.true else f"{self._print(e)} if {self._print(c)}"
                     for e, c in expr.args]
            return "{" + ("; " + self._mark(",")).join(parts) + "}"
        finally:
            self._depth -= 1

    def _print_Add(self, expr, order=None):       # StrPrinter's, with a mark before each operator
        self._depth += 1
        try:
            mark = self._mark("+")
            out = ""
            for k, term in enumerate(self._as_ordered_terms(expr, order=order)):
                t = self._print(term)
                sign = "+"
                if t.startswith("-") and not term.is_Add:
                    sign, t = "-", t[1:]
                if precedence(term) < precedence(expr) or term.is_Add:
                    t = f"({t})"
                out += ("-" if sign == "-" else "") + t if k == 0 else f" {mark}{sign} {t}"
            return out
        finally:
            self._depth -= 1


def _chunks(marked: str) -> list[tuple[str, int, str]]:
    """``[(kind, depth, text), ...]``: the text between break points, each with the break point before it
    (``('', 0, text)`` for the first)."""
    parts = _MARKS.split(marked)
    out = [("", 0, parts[0])]
    for k in range(1, len(parts), 3):
        out.append((parts[k], ord(parts[k + 1]) - _DEPTH0, parts[k + 2]))
    return out


def _break_lines(expr, first: int, rest: int, unicode: bool) -> list[tuple[str, str]]:
    """``expr`` as lines ``[(kind, text), ...]`` (``kind`` of the break point each line starts after, ``''``
    for the first): the first at most ``first`` characters, the others ``rest``, where the formula can be
    broken.  Among the break points that leave a line at least :data:`SHORTEST` of its width, the
    outermost (a sum before a comma before a product), then the last.  One line when it fits."""
    spell = (lambda x: x) if unicode else ascii_text       # a symbol's own name (λ) in ASCII too
    plain = spell(to_text(expr, unicode=unicode))
    if len(plain) <= first:
        return [("", plain)]
    marked = _MarkingTextPrinter({"unicode": unicode}).doprint(sp.sympify(expr))
    chunks = [(kind, depth, spell(text)) for kind, depth, text in _chunks(marked)]
    if "".join(t for _, _, t in chunks) != plain:       # a printing path without marks: never lose text
        return [("", plain)]
    widths = [len(t) if k == 0 else len(t.lstrip()) for k, (_, _, t) in enumerate(chunks)]
    full = [len(t) for _, _, t in chunks]
    ends, start = [], 0
    while start < len(chunks):
        width = first if start == 0 else rest
        used, k = widths[start], start + 1
        while k < len(chunks) and used + full[k] <= width:
            used += full[k]
            k += 1
        if k >= len(chunks):
            break
        cands, acc = [], widths[start]
        for b in range(start + 1, k + 1):           # a break before chunk b
            if acc >= SHORTEST * width or b == k:
                kind, depth, _ = chunks[b]
                cands.append((depth, _PENALTY[kind], -b))
            if b < k:
                acc += full[b]
        start = -min(cands)[2]
        ends.append(start)
    bounds = [0, *ends, len(chunks)]
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        text = "".join(t for _, _, t in chunks[lo:hi])
        out.append((chunks[lo][0], (text.lstrip() if lo else text).rstrip()))
    return out


def break_text(expr, width: int = LINE_WIDTH, unicode: bool = True) -> list[str]:
    """``expr`` (:func:`to_text`'s string) as lines of at most ``width`` characters where it can be broken:
    before a sum's ``+``/``-`` (the next line starts with it), between a product's factors (the next line
    starts with ``·``), before a divisor's ``/`` or after a ``min``/``max`` argument's comma; the outermost
    break points first.  Joined, the lines are :func:`to_text`'s string, whitespace aside."""
    return [t for _, t in _break_lines(expr, width, width, unicode)]


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


def _wrap(text: str, indent: str, width: int) -> list[str]:
    """Prose (a header, a title, a note) wrapped at spaces to ``width``, continuation lines at ``indent``; a
    word longer than the line stays whole."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [text]


def _formula_lines(lead: str, rel: str, expr, ewidth: int, unit: str, unicode: bool, width: int) -> list[str]:
    """``lead rel expr  [unit]`` as lines of at most ``width``: a long formula broken (:func:`_break_lines`),
    a continuation that starts with an operator set under ``rel``, one after a comma under the formula."""
    head = f"{lead} {rel} "
    room = width - len(unit)
    pieces = _break_lines(expr, room - len(head), room - len(head), unicode)
    if len(pieces) == 1:
        return [f"{head}{pieces[0][1]:<{ewidth}}{unit}".rstrip()]
    under_rel, under_expr = " " * (len(lead) + 1), " " * len(head)
    lines = [head + pieces[0][1]]
    lines += [(under_expr if kind == "," else under_rel) + text for kind, text in pieces[1:]]
    lines[-1] += unit
    return lines


def model_to_text(model, unicode: bool = True, width: int = LINE_WIDTH) -> str:
    """A model's printout (:func:`printing.content.model_printout`) as aligned Unicode lines, section by
    section, each at most ``width`` characters (a formula broken, prose wrapped) but for a word or a
    formula's piece without a break point that is longer."""
    doc = model_printout(model)

    def a(text: str) -> str:           # laid out as it will print: ASCII before measuring
        return text if unicode else ascii_text(text)

    def t(note) -> str:
        return a(note_to_text(note, unicode))

    lines = _wrap(f"{doc.name}: {t(doc.summary)}", "  ", width)
    if doc.source:
        lines += _wrap(f"source: {t(doc.source)}", "  ", width)
    for sec in doc.sections:
        lines.append("")
        head = t(sec.title)
        if sec.assumptions:
            conds = ", ".join(f"{to_text(x, unicode=unicode)} {relation_text(r, unicode)} {to_text(y, unicode=unicode)}"
                              for x, r, y in sec.assumptions)
            head += a(f" ({conds})")
        lines += _wrap(head, "  ", width)
        labels = [t(ln.label) for ln in sec.lines]
        lwidth = max((len(lb) for ln, lb in zip(sec.lines, labels) if not ln.own_line), default=0)
        exprs = [a(to_text(ln.expr, unicode=unicode)) for ln in sec.lines]
        ewidth = max((len(e) for e in exprs if len(e) <= _EXPR_WIDTH), default=0)
        for ln, label in zip(sec.lines, labels):
            unit = a(f"  [{ln.unit}]") if ln.unit and ln.unit != "1" else ""
            rel = relation_text(ln.relation, unicode)
            if ln.own_line:       # a long name (a lower bound's citation) on its own line
                lines += _wrap(f"  {label}", "    ", width)
                lead = f"  {'':<{max(lwidth, 2)}}"
            else:
                lead = f"  {label:<{lwidth}}"
            lines += _formula_lines(lead, rel, ln.expr, ewidth, unit, unicode, width)
        for note in sec.notes:
            lines += _wrap(f"  {t(note)}", "    ", width)
    for note in doc.notes:
        lines += _wrap(f"NOTE: {t(note)}", "      ", width)
    text = "\n".join(lines)
    return text if unicode else ascii_text(text)     # units and names too, in ASCII
