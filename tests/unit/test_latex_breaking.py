"""Long formulas break across lines as math, never as ASCII, and a broken formula is the same formula.

The break points come from a printer that marks SymPy's own output (before a sum's operator, between a
product's factors, after a min/max argument): the marks removed, its text is the plain printer's,
character for character, for every formula of every registered model.  A broken line closes what it
opened (``\\right.``) and the next reopens it (``\\left.``), so each line is balanced on its own.
"""

from __future__ import annotations

import re

import pytest
import sympy as sp

from symbolic import registry
from symbolic.params import param
from printing.latex import (BREAK_AT, _MarkingPrinter, break_latex, latex_width, model_to_latex,
                                     to_latex, unmarked)

N, d = param("N"), param("d")


def _all_expressions():
    for name in registry.names():
        m = registry.get(name)
        for q, e in m.all_quantities.items():
            yield f"{name}:{q}", e


EXPRESSIONS = list(_all_expressions())


@pytest.mark.parametrize("where,expr", EXPRESSIONS, ids=[w for w, _ in EXPRESSIONS])
def test_marks_removed_give_the_plain_printer_text(where, expr):
    assert unmarked(_MarkingPrinter().doprint(expr)) == to_latex(expr)
    settings = {"long_numerator": 30}
    assert unmarked(_MarkingPrinter(settings).doprint(expr)) == _MarkingPrinter(settings, marks=False).doprint(expr)


def _glue_removed(lines):
    """The broken lines joined back: the \\right. / \\left. glue and the product's leading \\cdot dropped."""
    out = []
    for k, ln in enumerate(lines):
        if k:
            ln = re.sub(r"^(\\left\. )+", "", ln)
            ln = ln[len(r"\cdot "):] if ln.startswith(r"\cdot ") else ln
        if k < len(lines) - 1:
            ln = re.sub(r"( \\right\.)+$", "", ln)
        out.append(ln)
    return " ".join(out)


def _balanced(tex: str) -> bool:
    lefts = len(re.findall(r"\\left(?![a-z])", tex))
    rights = len(re.findall(r"\\right(?![a-z])", tex))
    depth = 0
    for c in re.sub(r"\\[{}]", "", tex):
        depth += c == "{"
        depth -= c == "}"
        if depth < 0:
            return False
    return lefts == rights and depth == 0


@pytest.mark.parametrize("where,expr", EXPRESSIONS, ids=[w for w, _ in EXPRESSIONS])
def test_broken_lines_are_balanced_and_rejoin_to_the_formula(where, expr):
    lines = break_latex(expr, 40)
    assert all(_balanced(ln) for ln in lines), where
    joined = _glue_removed(lines)
    long = _MarkingPrinter({"long_numerator": 40 * 0.6}, marks=False).doprint(expr)
    assert " ".join(joined.split()) == " ".join(long.split()) or len(lines) == 1


def test_gemm_l2_long_sum_is_math_on_many_lines():
    """The issue's case: gemm.l2's sum over waves (about 3,800 characters as text) was set as wrapped ASCII;
    now it breaks into rows of math, each within the width (the one unbreakable fraction aside)."""
    m = registry.get("gemm.l2")
    tex = model_to_latex(m, "align*")
    assert "ttfamily" not in tex and r"\allowbreak" not in tex
    rows = [r for r in tex.splitlines() if r.startswith((r"\text{hbm}\_\text{reads}\_\text{no}\_\text{reuse} &=", r"&\quad"))]
    assert len(rows) >= 20
    assert rows[0].startswith(r"\text{hbm}\_\text{reads}\_\text{no}\_\text{reuse} &= \sum_{w=0}")
    assert all(_balanced(r.split("&", 1)[1].replace("&& \\text{elements}", "").rstrip(" \\")) for r in rows)


def test_short_formula_is_one_line_and_untouched():
    e = 2 * N * d + sp.ceiling(N / d)
    assert break_latex(e) == [to_latex(e)]


def test_a_wide_sum_breaks_before_its_operators_at_the_top_first():
    """Breaks are taken at the shallowest depth: a sum of products breaks before its + signs, not inside
    the products' parentheses."""
    e = sum((N + i) * (d + i) for i in range(1, 13))
    lines = break_latex(e, 30)
    assert len(lines) >= 3
    assert all(ln.startswith("+ ") for ln in lines[1:])
    assert not any(r"\right." in ln for ln in lines)


def test_width_measure_tracks_the_printed_width():
    """latex_width is a proxy for the printed width: longer text, wider; a fraction as wide as its wider part;
    sub- and superscripts narrower than the base line."""
    assert latex_width("N + d") < latex_width("N + d + N")
    assert latex_width(r"\frac{N}{d}") < latex_width("N d") + 1
    assert latex_width("N_{k}") < latex_width("N k")
    assert BREAK_AT > 30
