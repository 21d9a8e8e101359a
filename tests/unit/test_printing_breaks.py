"""Long lines of the text printer break as the LaTeX printer's do, and a broken formula is the same formula.

``tilebound show gemm.l2`` once printed one formula line of 5,042 characters.  :func:`printing.text.break_text`
breaks a formula before a sum's operator, between a product's factors, before a divisor or after a
``min``/``max`` comma, outermost first; :func:`printing.text.model_to_text` sets each continuation under the
``=`` and wraps prose at spaces, so that every line is at most :data:`printing.text.LINE_WIDTH` characters.
The references: break points and layouts worked out by hand below, and the unbroken printer
(:func:`printing.text.to_text`), whose text the broken lines give back, whitespace aside.

A point in a caption or title (``decode.time: time at ... BW = 3350000000000``) groups an integer's digits
as the tables do (``3,350,000,000,000``; LaTeX ``3{,}350{,}000{,}000{,}000``) from five digits on.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st

from printing.content import point_note, value_expr
from printing.latex import note_to_latex, to_latex
from printing.notation import Grouped
from printing.text import LINE_WIDTH, _MarkingTextPrinter, _chunks, break_text, model_to_text, note_to_text, to_text
from symbolic import registry
from symbolic.params import param

N, d, M = param("N"), param("d"), param("M")
Nk = param("N_k", latex="N_k")

MODELS = registry.names()


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


# ----------------------------------------------------------------------------- break points, by hand
BREAKS = [
    # expression, width, Unicode lines, ASCII lines
    # a sum breaks before its operator; the next line starts with it
    (2 * N * d + 3 * Nk * d + M, 12, ["M + 2·N·d", "+ 3·N_k·d"], ["M + 2*N*d", "+ 3*N_k*d"]),
    # the outer sum's operator, not the inner one's (both would leave the first line long enough)
    (N * (d + M) + Nk, 11, ["N·(M + d)", "+ N_k"], ["N*(M + d)", "+ N_k"]),
    # a product between its factors; the next line starts with the multiplication sign
    (N * d * M * Nk, 5, ["M·N", "·N_k", "·d"], ["M*N", "*N_k", "*d"]),
    # a min after its arguments' commas
    (sp.Min(N * d, M + Nk, Nk * d), 12, ["min(N·d,", "N_k·d,", "M + N_k)"], ["min(N*d,", "N_k*d,", "M + N_k)"]),
    # it fits: one line
    (2 * N * d + 3 * Nk * d + M, 19, ["M + 2·N·d + 3·N_k·d"], ["M + 2*N*d + 3*N_k*d"]),
]


@pytest.mark.parametrize("expr,width,uni,asc", BREAKS, ids=[f"{c[0]}@{c[1]}" for c in BREAKS])
def test_break_points_by_hand(expr, width, uni, asc):
    assert break_text(expr, width) == uni
    assert break_text(expr, width, unicode=False) == asc


def test_an_atom_longer_than_the_width_stays_whole():
    """A name of 120 characters has no break point: its line is longer than the width, and says all of it."""
    long = sp.Symbol("a" * 120)
    assert break_text(long + N, LINE_WIDTH) == ["N", "+ " + "a" * 120]


@given(st.lists(st.tuples(st.integers(1, 99), st.sampled_from([N, d, M, Nk]), st.sampled_from([N, d, M, Nk])),
                min_size=1, max_size=12), st.integers(8, 40), st.booleans())
@example([(3, N, d)], 8, True)
@example([(99, N, M), (7, d, Nk), (12, Nk, Nk), (5, M, d)], 8, False)
def test_joined_lines_give_back_the_formula(terms, width, unicode):
    """Whitespace aside, the broken lines are the unbroken text; and each line fits, since the longest
    piece without a break point (``+ 99``, ``*N_k^2``) is shorter than 8 characters."""
    expr = sum(c * a * b for c, a, b in terms)
    lines = break_text(expr, width, unicode=unicode)
    assert _squeezed("".join(lines)) == _squeezed(to_text(expr, unicode=unicode))
    assert all(len(ln) <= width for ln in lines), lines
    assert len(lines) == 1 or len(to_text(expr, unicode=unicode)) > width


# ----------------------------------------------------------------------------- every registered model
@pytest.mark.parametrize("name", MODELS)
def test_marks_removed_give_the_plain_printer_text(name):
    """The breaking printer's text, its break points removed, is the plain printer's, character for character."""
    for unicode in (True, False):
        for q, e in registry.get(name).all_quantities.items():
            marked = _MarkingTextPrinter({"unicode": unicode}).doprint(e)
            assert "".join(t for _, _, t in _chunks(marked)) == to_text(e, unicode=unicode), (q, unicode)


@pytest.mark.parametrize("name", MODELS)
def test_every_line_fits(name):
    m = registry.get(name)
    for unicode in (True, False):
        for ln in model_to_text(m, unicode=unicode).splitlines():
            assert len(ln) <= LINE_WIDTH, (unicode, len(ln), ln)


@pytest.mark.parametrize("name", ["gemm.l2", "gemm.l2.lru", "latency.littles_law", "decode.time"])
def test_nothing_is_lost(name):
    """The broken printout is the unbroken one (a width nothing reaches), whitespace aside, in both styles."""
    m = registry.get(name)
    for unicode in (True, False):
        broken = model_to_text(m, unicode=unicode)
        whole = model_to_text(m, unicode=unicode, width=10**9)
        assert max(len(ln) for ln in whole.splitlines()) > LINE_WIDTH or name == "decode.time"
        assert _squeezed(broken) == _squeezed(whole)


@pytest.mark.parametrize("name", ["gemm.l2", "gemm.l2.lru"])
def test_gemm_l2_formula_is_broken_under_its_equals_sign(name):
    """The 5,042-character no-reuse sum: its first line ends before the width, and every continuation starts
    with an operator in the column of the ``=`` (or, after a comma, under the formula's first character)."""
    for unicode in (True, False):
        lines = model_to_text(registry.get(name), unicode=unicode).splitlines()
        k = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("hbm_reads_no_reuse "))
        col = lines[k].index(" = ") + 1
        more = []
        for ln in lines[k + 1:]:
            if len(ln) - len(ln.lstrip()) < col:
                break
            more.append(ln)
        assert len(more) > 20, len(more)            # thousands of characters: many lines
        ops = "+-·/" if unicode else "+-*/"
        for ln in more:
            assert (ln[col] in ops and not ln[:col].strip()) or (not ln[:col + 2].strip() and ln[col + 2] != " "), ln
        assert _squeezed(lines[k] + "".join(more)).startswith("hbm_reads_no_reuse=")


def test_a_broken_formula_keeps_its_unit_on_its_last_line():
    lines = model_to_text(registry.get("gemm.l2"), unicode=True).splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("hbm_reads_no_reuse "))
    j = next(i for i in range(k + 1, len(lines)) if lines[i].lstrip().startswith("hbm_reads_fits"))
    assert lines[j - 1].endswith("  [elements]") and "[elements]" not in "".join(lines[k:j - 1])


def test_long_prose_wraps_at_spaces():
    """A note longer than the width wraps, continuation indented under the note's text, no word split."""
    m = registry.get("gemm.l2")
    note = "NOTE: " + note_to_text(m.notes[0])
    assert len(note) > LINE_WIDTH
    lines = model_to_text(m).splitlines()
    k = lines.index(note[:note.rindex(" ", 0, LINE_WIDTH + 1)])     # the last space the width allows
    more = [ln for ln in lines[k + 1:k + 4] if ln.startswith(" " * 6)]
    assert more and all(not ln.startswith(" " * 7) for ln in more)
    assert " ".join([lines[k]] + [ln.strip() for ln in more]) == note


# ----------------------------------------------------------------------------- a point's values, grouped
GROUPED = [
    # value, text, LaTeX (written by hand: groups of three from five digits on, as the tables' cells)
    (1, "1", "1"),
    (4096, "4096", "4096"),
    (9999, "9999", "9999"),
    (10000, "10,000", "10{,}000"),
    (32768, "32,768", "32{,}768"),
    (3350000000000, "3,350,000,000,000", "3{,}350{,}000{,}000{,}000"),
    (-123456, "-123,456", "-123{,}456"),
    (sp.Integer(51200), "51,200", "51{,}200"),
    (Fraction(14336, 1), "14,336", "14{,}336"),
    (7e-7, "7.0e-7", r"7.0 \cdot 10^{-7}"),          # a real: four significant digits, as before
    (1.4321e-7, "1.432e-7", r"1.432 \cdot 10^{-7}"),
    (Fraction(1, 3), "0.3333", "0.3333"),
]


@pytest.mark.parametrize("value,text,tex", GROUPED, ids=[c[1] for c in GROUPED])
def test_values_group_their_digits(value, text, tex):
    """As a point shows them: the right-hand side of ``N = value``."""
    shown = sp.Eq(N, value_expr(value), evaluate=False)
    assert to_text(shown) == to_text(shown, unicode=False) == f"N = {text}"
    assert to_latex(shown) == f"N = {tex}"


def test_a_value_beyond_the_digit_limit_shows_its_size():
    """10**4500 has more digits than Python prints (4,300): the scientific form and the digit count."""
    assert to_text(value_expr(10**4500)) == "1.00e+4500 (4,501 digits)"
    assert to_latex(value_expr(10**4500)) == r"1.00 \cdot 10^{4500}\ \text{(4{,}501 digits)}"


def test_grouped_is_an_integer_only_for_display():
    assert Grouped(32768) == Grouped(32768) and Grouped(32768) != Grouped(32769)
    assert Grouped(10**4500).value == 10**4500
    for bad in (True, 1.5, "7"):
        with pytest.raises(TypeError):
            Grouped(bad)


def test_the_decode_time_point_groups_sizes_and_gives_times_and_rates_their_units():
    """``decode.time``'s defaults (issue 18): N_k = 32,768 grouped; d = 128 as it is; the bandwidth and the
    latencies in the units the tables give times and rates (BW is 3.35e12 bytes/s: 3.35 TB/s; L = 7e-7 s =
    700 ns; L_2 = 1.432e-7 s = 143 ns to three digits, as a table cell; 2.5e-6 s = 2.5 µs)."""
    m = registry.get("decode.time")
    point = {"N_k": 32768, "d": 128, "BW": 3350000000000, "L": 7e-7, "L_2": 1.432e-7}
    pn = point_note(m, point)
    assert note_to_text(pn) == "N_k = 32,768, d = 128, BW = 3.35 TB/s, L = 700 ns, L_2 = 143 ns"
    assert note_to_latex(pn) == (r"$N_{k} = 32{,}768$, $d = 128$, $BW = 3.35\ \mathrm{TB/s}$, "
                                 r"$L = 700\ \mathrm{ns}$, $L_{2} = 143\ \mathrm{ns}$")
    assert note_to_text(point_note(m, {"L": 2.5e-6})) == "L = 2.5 µs"
    assert note_to_latex(point_note(m, {"L": 2.5e-6})) == r"$L = 2.5\ \mathrm{\mu s}$"
    from printing.mathml import note_to_html
    assert "<mn>3.35</mn><mtext>&#8201;TB/s</mtext>" in note_to_html(point_note(m, {"BW": 3350000000000}))
