"""LaTeX tables for reading (written by hand): siunitx S columns aligned on the decimal point with digit
groups, units in a header row, caption and notes with their math as math, wide tables split."""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from symbolic.notes import note
from symbolic.params import param
from printing.tables import Exact, Measure, Table, render, render_latex

N, d, M = param("N"), param("d"), param("M")
Nk = param("N_k", latex="N_k")

TABLE = Table(("N", "total", "name"), ((512, 12345678, "a_b"), (1024, 3, "x|y")))


def _squash(tex: str) -> str:
    return " ".join(tex.split())


def test_latex_booktabs_with_s_columns():
    """Ported from test_tables.test_latex_booktabs: numbers in S columns whose format fits the widest cell
    (4 and 8 integer digits), digit groups from siunitx, text left-aligned; the header ``N`` is the
    parameter (``params``), ``a_b`` a name as the formula labels set names, other text escaped as text."""
    assert _squash(render(TABLE, "latex", params=(N,))) == _squash(r"""
        \begin{table} \centering
        \sisetup{group-separator={,}, group-minimum-digits=4}
        \begin{tabular}{S[table-format=4.0]S[table-format=8.0]l} \toprule
        {$N$} & {total} & name \\ \midrule
        512 & 12345678 & $\text{a}\_\text{b}$ \\
        1024 & 3 & x\textbar{}y \\
        \bottomrule \end{tabular} \end{table}""")
    assert "{N} & {total}" in render(TABLE, "latex")           # without params, N is the text it is


def test_numbers_s_measures_right_text_left():
    """Ported from test_tables.test_numbers_right_text_left: a count column is S; measures (``1 B``) and a
    column mixing a blank with a Fraction are right-aligned or S; text is left-aligned."""
    tex = render(Table(("a", "b", "c"), ((1, "x", Measure(1, "B")), (None, "y", Fraction(1, 2)))), "latex")
    assert r"\begin{tabular}{S[table-format=1.0]lr}" in tex
    assert "1 & x & 1 B" in tex and "{} & y & 0.5" in tex


def test_decimals_and_exponents_set_the_format():
    t = Table(("ratio",), ((Fraction(1, 3),), (Fraction(25, 2),), (Fraction(7, 10**7),)))
    tex = render_latex(t)
    assert "S[table-format=2.3e-2]" in tex                 # 12.5, 0.333, 7.00e-07
    assert "\n0.333 \\\\" in tex and "\n12.5 \\\\" in tex and "\n7.00e-07 \\\\" in tex


def test_exact_fraction_is_not_a_decimal():
    """An exact p/q (``show``'s exact column) is not rounded into an S column: it stays text, exactly."""
    tex = render_latex(Table(("exact",), ((Exact(Fraction(253, 2500000)),), (Exact(7),))))
    assert r"\begin{tabular}{r}" in tex and "253/2500000" in tex


def test_caption_and_notes_are_notes_with_math():
    """Ported from test_tables.test_caption_and_notes (LaTeX part): a caption and a note are notes, their
    math in the parameters' own LaTeX forms; a plain string is text, escaped, nothing in it read as math."""
    t = Table(("N",), ((1,),), caption=note("IO vs ", N, " at ", sp.Eq(Nk, 4096), ", ", sp.Eq(d, 64)),
              notes=(note("counts in elements, ", sp.Ge(N, 1, evaluate=False)),))
    tex = render_latex(t, params=(N, Nk, d))
    assert r"\caption{IO vs $N$ at $N_k = 4096$, $d = 64$}" in tex
    assert r"{\footnotesize counts in elements, $N \geq 1$}" in tex
    plain = render_latex(Table(("N",), ((1,),), caption="at N_k = 4096"), params=(N, Nk))
    assert r"\caption{at N\_k = 4096}" in plain
    assert render(t, "text").splitlines()[0] == "IO vs N at N_k = 4096, d = 64"
    assert render(t, "ascii").splitlines()[-1] == "counts in elements, N >= 1"
    assert render(t, "markdown").splitlines()[0] == "**IO vs $N$ at $N_k = 4096$, $d = 64$**"


def test_units_sit_in_the_header():
    """A sweep table's ``units: q in U`` note becomes a header row of units; the note goes."""
    t = Table(("N", "reads", "flops"), ((512, 10, 20),), notes=("units: reads in elements, flops in FLOP",))
    tex = render_latex(t, params=(N,))
    assert "{$N$} & {reads} & {flops} \\\\\n{} & {(elements)} & {(FLOP)} \\\\" in tex
    assert "units:" not in tex
    t2 = Table(("N", "reads"), ((512, 10),), units=("", "elements"))
    assert "{} & {(elements)} \\\\" in render_latex(t2)
    assert render(t2, "text").splitlines()[0].split() == ["N", "reads", "(elements)"]


def test_expression_headers_and_cells_are_math():
    t = Table(("N", ("total ÷ ", N**2 * d)), ((4, Fraction(1, 4)),))
    tex = render_latex(t, params=(N, d))
    assert r"{total $\div$ $N^{2} d$}" in tex


def test_a_wide_table_is_split_repeating_its_first_column():
    """Twenty 9-digit columns do not fit one tabular: several, one above the other, each led by N."""
    heads = ("N",) + tuple(f"q{k}" for k in range(20))
    rows = tuple((n,) + tuple(123456789 * (k + 1) for k in range(20)) for n in (1, 2))
    tex = render_latex(Table(heads, rows), params=(N,))
    parts = tex.split(r"\begin{tabular}")[1:]
    assert len(parts) >= 3
    assert all(p.split(r"\toprule")[1].lstrip().startswith("{$N$}") for p in parts)
    seen = [h for p in parts for h in heads[1:] if "{$" + h[0] + "_{" + h[1:] + "}$}" in p or "{" + h + "}" in p]
    assert sorted(set(seen)) == sorted(heads[1:])


def test_huge_integers_stay_exact_or_scientific():
    """Up to 24 characters an S column; beyond, the terminal's own form: every digit with separators, or -
    past 4,000 digits - the scientific form with the digit count (nothing rounded without saying so)."""
    tex = render_latex(Table(("v",), ((10**20 + 1,),)))
    assert str(10**20 + 1) in tex and "S[table-format=21.0]" in tex
    tex = render_latex(Table(("v",), ((10**40 + 1,),)))
    assert f"{10**40 + 1:,}" in tex and r"\begin{tabular}{r}" in tex
    tex = render_latex(Table(("v",), ((sp.Integer(256) * 10**4400,),)))
    assert "2.56e+4402 (4,403 digits)" in tex
