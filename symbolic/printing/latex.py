r"""LaTeX for cost expressions and models: ``\left\lceil \frac{N}{B_c} \right\rceil``, ``\Theta\left(…\right)``.

:class:`TileboundLatexPrinter` subclasses SymPy's ``LatexPrinter`` and overrides only what the
project's notation needs (``_print_ceiling``, ``_print_floor``, ``_print_Theta``, ``_print_Omega``,
a parameter's own LaTeX form, :attr:`symbolic.params.Param.latex`); every option is declared in
``_default_settings`` and an unknown one raises ``TypeError``.  ``to_latex`` returns a string,
``print_latex`` prints it, ``model_to_latex`` renders a model's sections as an ``align`` (or
``align*`` / ``aligned``) environment, and :func:`escape` makes any text safe for pdfLaTeX.
"""

from __future__ import annotations

from types import MappingProxyType

import sympy as sp
from sympy.printing.latex import LatexPrinter

from base.errors import BadInput

from ..params import Param
from .glyphs import GLYPHS as GLYPH_TABLE
from .glyphs import RELATIONS as GLYPH_RELATIONS
from .glyphs import Superscript, pieces, relation, tex_math, tex_text

__all__ = ["TileboundLatexPrinter", "to_latex", "print_latex", "model_to_latex", "escape", "math_text", "ENVIRONMENTS"]

#: environment -> whether it is a display of its own (``align``) or sits inside ``$$…$$`` (``aligned``)
ENVIRONMENTS = MappingProxyType({"align": True, "align*": True, "aligned": False})

#: relation -> LaTeX (from the one glyph table)
RELATIONS = MappingProxyType({r: relation(r, "latex") for r in GLYPH_RELATIONS})


def escape(text: str) -> str:
    """Plain text -> pdfLaTeX-safe text: special characters escaped, every character of the glyph
    table in its text-mode form (superscript runs as ``\\textsuperscript``), and any other non-ASCII
    character written as its code point so the document still compiles."""
    out = []
    for ch in pieces(text):
        if isinstance(ch, Superscript):
            out.append(rf"\textsuperscript{{{ch}}}")
            continue
        tex = tex_text(ch)
        out.append(tex if tex is not None else ch if ord(ch) <= 127 else f"[U+{ord(ch):04X}]")
    return "".join(out)


class TileboundLatexPrinter(LatexPrinter):
    r"""SymPy's LaTeX printer with the project's notation (``\lceil``, ``\Theta``, ``B_r``)."""

    printmethod = "_tilebound_latex"
    _default_settings = dict(LatexPrinter._default_settings)

    def _print_Symbol(self, expr, style="plain"):
        if isinstance(expr, Param):
            return expr.latex
        return super()._print_Symbol(expr, style=style)

    def _print_ceiling(self, expr, exp=None):
        tex = rf"\left\lceil {self._print(expr.args[0])} \right\rceil"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _print_floor(self, expr, exp=None):
        tex = rf"\left\lfloor {self._print(expr.args[0])} \right\rfloor"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _print_Theta(self, expr, exp=None):
        return rf"\Theta\left({self._print(expr.args[0])}\right)"

    def _print_Omega(self, expr, exp=None):
        return rf"\Omega\left({self._print(expr.args[0])}\right)"


def to_latex(expr, **settings) -> str:
    """LaTeX of ``expr`` (math mode, no delimiters); settings as SymPy's ``latex()``."""
    return TileboundLatexPrinter(settings).doprint(sp.sympify(expr))


def print_latex(expr, **settings) -> None:
    print(to_latex(expr, **settings))


#: a sum wider than BREAK_AT characters (measured on its one-line text form, a fair proxy for its
#: printed width) is broken between terms; a single term wider than UNBREAKABLE (four lines: the
#: widest in the toolkit but one is 202, gemm.l2's L2 sum is 4,299) is set as wrapped ASCII text
BREAK_AT = 90
UNBREAKABLE = 4 * BREAK_AT


def _unbreakable(expr) -> bool:
    """Is some term of ``expr`` (``expr`` itself when not a sum) too wide for the page as math?"""
    from .text import to_text

    expr = sp.sympify(expr)
    terms = TileboundLatexPrinter()._as_ordered_terms(expr) if expr.is_Add else [expr]
    return any(len(to_text(t)) > UNBREAKABLE for t in terms)


def _broken(expr) -> list[str]:
    """``expr`` as one line, or - when wide and a sum - several lines, terms packed greedily."""
    from .text import to_text

    expr = sp.sympify(expr)
    if not expr.is_Add or len(to_text(expr)) <= BREAK_AT:
        return [to_latex(expr)]
    lines: list[tuple[str, int]] = []          # (latex, text width)
    for k, term in enumerate(TileboundLatexPrinter()._as_ordered_terms(expr)):
        neg = term.could_extract_minus_sign()
        t = -term if neg else term
        body = rf"\left({to_latex(t)}\right)" if isinstance(t, sp.Add) else to_latex(t)
        piece = ("- " if neg else ("" if k == 0 else "+ ")) + body
        width = len(to_text(t)) + 3
        if lines and lines[-1][1] + width <= BREAK_AT:
            lines[-1] = (lines[-1][0] + " " + piece, lines[-1][1] + width)
        else:
            lines.append((piece, width))
    return [tex for tex, _ in lines]


def math_text(text: str) -> str:
    r"""Text for math mode that pdfLaTeX and a notebook's MathJax both read: plain runs in ``\text{}``,
    every special character and glyph as math markup between them (``t_compute`` ->
    ``\text{t}\_\text{compute}``, ``≲`` -> ``\lesssim``, ``N⁻¹`` -> ``\text{N}^{-1}``)."""
    out, run = [], []

    def flush():
        if run:
            out.append(rf"\text{{{''.join(run)}}}")
            run.clear()

    def markup(tex: str):
        flush()
        out.append(tex + (" " if tex[-1:].isalpha() else ""))

    for ch in pieces(text):
        if isinstance(ch, Superscript):
            markup(f"^{{{ch}}}")
            continue
        tex = tex_math(ch)
        if tex is not None:
            markup(tex)
        elif ch in GLYPH_TABLE:            # punctuation whose ASCII spelling reads the same in \text{}
            run.append(GLYPH_TABLE[ch].ascii)
        elif ord(ch) > 127:
            run.append(f"[U+{ord(ch):04X}]")
        else:
            run.append(ch)
    flush()
    return "".join(out).rstrip()


def _assumptions_tex(assumptions) -> str:
    return ", ".join(f"{to_latex(a)} {RELATIONS.get(r, r)} {to_latex(b)}" for a, r, b in assumptions)


def _breakable(tex: str) -> str:
    r"""Escaped ASCII text with line-break points after each ``*`` and ``,`` as well as at its spaces."""
    return tex.replace("*", r"*\allowbreak{}").replace(",", r",\allowbreak{}")


def model_to_latex(model, environment: str = "align") -> str:
    r"""A model's sections as one ``align`` / ``align*`` / ``aligned`` environment.

    ``align`` and ``align*`` put each section title in an ``\intertext``; ``aligned`` (for
    ``$$…$$``, as ``Model._repr_latex_`` uses it) puts it on a row of its own.
    """
    from .content import LABEL_WIDTH, model_sections

    if environment not in ENVIRONMENTS:
        raise BadInput("environment", f"must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}")
    standalone = ENVIRONMENTS[environment]
    rows: list[str] = []
    for sec in model_sections(model):
        title = sec.title + (" (" + "; ".join(sec.notes) + ")" if sec.notes else "")
        cond = _assumptions_tex(sec.assumptions) if sec.assumptions else ""
        if standalone:
            rows.append(rf"\intertext{{{escape(title)}" + (rf", when ${cond}$" if cond else "") + ":}")
        else:  # no \intertext in aligned, and no $…$ inside \text (a notebook's MathJax may not read it)
            rows.append("&" + math_text(title + (", when " if cond else "")) + (f" {cond}" if cond else "")
                        + r"\text{:}")
        for ln in sec.lines:
            unit = rf" && {math_text(ln.unit)}" if ln.unit and ln.unit != "1" else ""
            label = math_text(ln.label)
            if len(ln.label) > LABEL_WIDTH:      # a long name (a bound's citation) on a line of its own
                rows.append(rf"\intertext{{{escape(ln.label)}:}}" if standalone else "&" + math_text(ln.label + ":"))
                label = ""
            if standalone and _unbreakable(ln.expr):   # wrapped text in the page's width, not math off its edge
                from .text import relation_text, to_text
                rows.append(rf"\intertext{{\sloppy {escape(ln.label)} {escape(relation_text(ln.relation, unicode=False))} "
                            rf"{{\small\ttfamily {_breakable(escape(to_text(ln.expr, unicode=False)))}}}"
                            + (f" [{escape(ln.unit)}]" if ln.unit and ln.unit != "1" else "") + "}")
                continue
            rel = RELATIONS.get(ln.relation, ln.relation)
            pieces = _broken(ln.expr)
            for k, piece in enumerate(pieces):
                last = k == len(pieces) - 1
                head = rf"{label} &{rel} " if k == 0 else r"&\quad "
                rows.append(head + piece + (unit if last else ""))
    body = []
    for i, row in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        # \intertext starts its own line: the row before it needs no \\ of its own beyond the usual one
        body.append(row + (r" \\" if nxt is not None and not row.startswith(r"\intertext") else ""))
    return f"\\begin{{{environment}}}\n" + "\n".join(body) + f"\n\\end{{{environment}}}"
