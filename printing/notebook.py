r"""Rich display in Jupyter: a model shows its formulas, ``model.at(...)`` shows a worked evaluation.

``model`` in a notebook cell shows the model's name, summary, parameters with their meanings and its
formulas (:func:`model_latex`, :func:`model_html`; the formulas in an ``aligned`` block that MathJax and
KaTeX read): the content tree of :func:`printing.content.model_printout`, every note rendered piece by
piece in math mode (:func:`printing.latex.note_to_math`).  ``model.at(N=4096, d=64, M=51200)`` returns a :class:`symbolic.model.Evaluation`: for each quantity the
formula, then the formula with the values substituted, then the exact result - as ``handcalcs`` sets a
calculation::

    reads = 2 N d + N (2 d + 2) ⌈N / ⌈M / 4d⌉⌉
          = 2 · 4096 · 64 + 4096 (2 · 64 + 2) ⌈4096 / ⌈51200 / (4 · 64)⌉⌉
          = 3,194,880 elements

:class:`symbolic.model.Evaluation` is data (``ev["reads"]``, ``ev.values``); this module renders it, and
:func:`init_printing` registers the renderers with IPython, the way ``sympy.init_printing`` does.  Nothing is computed here that the model does not compute:
the values are ``model.evaluate``'s; the middle line is the formula printed with each parameter as its value.
"""

from __future__ import annotations

import html
from fractions import Fraction

import sympy as sp

from symbolic.model import Evaluation, Model

from .content import model_printout
from .human import fmt_exact, is_huge
from .latex import BREAK_AT, break_latex, math_text, note_to_math, sections_to_latex, to_latex
from .text import to_text

__all__ = ["model_latex", "model_html", "evaluation_latex", "evaluation_html", "evaluation_text",
           "substituted_latex", "init_printing"]


def model_latex(model) -> str:
    """``$$\\begin{aligned} … \\end{aligned}$$``: the formulas (what ``_repr_latex_`` returns)."""
    return "$$" + sections_to_latex(model_printout(model).sections, environment="aligned") + "$$"


def _header_html(doc) -> str:
    rows = "".join(f"<tr><td>\\({_symbol_latex(p.symbol)}\\)</td><td>\\({note_to_math(p.meaning)}\\)</td>"
                   f"<td>{html.escape(str('' if p.default is None else p.default))}</td></tr>" for p in doc.params)
    return (f"<div><b>{html.escape(doc.name)}</b>: \\({note_to_math(doc.summary)}\\)</div>"
            + (f"<table><tr><th>parameter</th><th>meaning</th><th>default</th></tr>{rows}</table>" if rows else ""))


def _symbol_latex(sym) -> str:
    return getattr(sym, "latex", None) or to_latex(sym)


def model_html(model) -> str:
    """The model's name, summary and parameters (a table with their meanings and defaults), then its
    formulas: the content tree of :func:`printing.content.model_printout`, rendered once."""
    doc = model_printout(model)
    return _header_html(doc) + f"<div>$${sections_to_latex(doc.sections, environment='aligned')}$$</div>"


def substituted_latex(expr, point) -> str:
    """``expr`` printed with each parameter replaced by its value in ``point`` (nothing evaluated), one line."""
    return break_latex(expr, float("inf"), values=point)[0]


def _value_latex(v) -> str:
    """The exact value in math: every digit with ``{,}`` groups up to :data:`printing.human.MAX_DIGITS`
    digits, beyond that the terminal's scientific form with its digit count (Python refuses ``str`` of an int
    beyond 4,300 digits)."""
    if isinstance(v, Fraction) and v.denominator != 1:
        if is_huge(v.numerator) or is_huge(v.denominator):
            return r"\text{" + fmt_exact(v) + "}"
        return rf"\frac{{{v.numerator}}}{{{v.denominator}}} \approx {float(v):.4g}"
    n = int(v)
    if is_huge(n):
        mantissa, _, rest = fmt_exact(n).partition(" ")
        m, _, e = mantissa.partition("e")
        return rf"{m} \times 10^{{{int(e)}}}\ \text{{{rest}}}"
    s = f"{abs(n):,}".replace(",", "{,}")
    return ("-" if n < 0 else "") + s


def _rows(ev) -> list[str]:
    rows = []
    for q, expr in ev.model.all_quantities.items():
        unit = ev.model.unit(q)
        unit_tex = rf"\ {math_text(unit)}" if unit and unit != "1" else ""
        label = math_text(q)
        steps = [break_latex(expr, BREAK_AT)]
        # the middle row writes every value's digits: not for a point beyond the terminal's digit limit
        sub = steps[0] if any(isinstance(v, int) and is_huge(v) for v in ev.point.values()) else \
            break_latex(expr, BREAK_AT, values=ev.point)
        if sub != steps[0] and sum(map(len, sub)) < 20000:    # a parameter-free quantity shows no middle line
            steps.append(sub)
        steps.append([_value_latex(ev.values[q]) + unit_tex])
        first = True
        for pieces in steps:
            for k, piece in enumerate(pieces):
                lead = (rf"{label} &= " if first else "&= ") if k == 0 else r"&\quad "
                rows.append(lead + piece)
                first = False
    return rows


def _point_latex(ev) -> str:
    by_name = {p.name: p for p in ev.model.params}
    return ", ".join(f"{by_name[k].latex} = "
                     + (_value_latex(v) if isinstance(v, int) and is_huge(v) else to_latex(sp.nsimplify(v)))
                     for k, v in ev.point.items())


def evaluation_latex(ev) -> str:
    """A :class:`symbolic.model.Evaluation` as a worked calculation: per quantity the formula, the formula
    with the values substituted, and the exact result, in one ``aligned`` block."""
    head = rf"&\text{{{ev.model.name} at }} {_point_latex(ev)}\text{{:}} \\"
    return "$$\\begin{aligned}\n" + head + "\n" + " \\\\\n".join(_rows(ev)) + "\n\\end{aligned}$$"


def evaluation_html(ev) -> str:
    return f"<div>{evaluation_latex(ev)}</div>"


def evaluation_text(ev) -> str:
    """The worked evaluation as plain text, one line per quantity: ``q = formula = value unit``."""
    where = ", ".join(f"{k}={fmt_exact(v) if is_huge(int(v)) else v}" for k, v in ev.point.items())
    lines = [f"{ev.model.name} at {where}:"]
    for q, expr in ev.model.all_quantities.items():
        v = ev.values[q]
        shown = fmt_exact(v) if not (isinstance(v, Fraction) and v.denominator != 1) or is_huge(v.numerator) \
            or is_huge(v.denominator) else f"{v} ≈ {float(v):.4g}"
        lines.append(f"  {q} = {to_text(expr)} = {shown} {ev.model.unit(q)}".rstrip())
    return "\n".join(lines)


def init_printing(ip=None) -> bool:
    """Register the displays of :class:`~symbolic.model.Model` and :class:`~symbolic.model.Evaluation`
    with IPython's formatters (as ``sympy.init_printing`` does for expressions).  ``ip`` defaults to the
    running shell; returns False (and registers nothing) outside IPython."""
    if ip is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        ip = get_ipython()
    if ip is None:
        return False
    formatters = ip.display_formatter.formatters
    formatters["text/latex"].for_type(Model, model_latex)
    formatters["text/html"].for_type(Model, model_html)
    formatters["text/latex"].for_type(Evaluation, evaluation_latex)
    formatters["text/html"].for_type(Evaluation, evaluation_html)
    formatters["text/plain"].for_type(Evaluation, lambda ev, p, cycle: p.text(evaluation_text(ev)))
    return True
