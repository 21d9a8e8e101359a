"""The one table renderer: golden output per target, and cell formatting (written by hand)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st

from symbolic.params import param
from printing.tables import Exact, Measure, Table, format_cell, render

N, d, M = param("N"), param("d"), param("M")

TABLE = Table(("N", "total", "name"), ((512, 12345678, "a_b"), (1024, 3, "x|y")))


def _lines(s: str) -> list[str]:
    return [ln.rstrip() for ln in s.splitlines()]


def test_text():
    assert _lines(render(TABLE, "text")) == [
        "    N       total  name",
        "-----  ----------  ------",
        "  512  12,345,678  a_b",
        "1,024           3  x|y",
    ]


def test_markdown():
    assert _lines(render(TABLE, "markdown")) == [
        "|     N |      total | name   |",
        "|-------|------------|--------|",
        "|   512 | 12,345,678 | a_b    |",
        "| 1,024 |          3 | x\\|y   |",
    ]


def test_caption_and_notes():
    t = Table(("N",), ((1,),), caption="IO vs N", notes=("counts in elements",))
    assert render(t, "text").splitlines()[0] == "IO vs N"
    assert render(t, "markdown").startswith("**IO vs N**\n")
    assert render(t, "text").endswith("counts in elements")
    # LaTeX: tests/unit/test_latex_tables.py


def test_ascii_target_spells_caption_and_notes_in_ascii():
    t = Table(("N", ("÷ ", N**2)), ((4, Fraction(1, 4)),), caption="IO ≈ Θ(N²)", notes=("time in µs",))
    assert _lines(render(t, "ascii")) == [
        "IO ~ Theta(N^2)",
        "  N    / N^2",
        "---  -------",
        "  4     0.25",
        "",
        "time in us",
    ]


def test_unknown_target_names_the_parameter():
    from base.errors import BadInput
    with pytest.raises(BadInput, match="^format: ") as exc:
        render(TABLE, "html")
    assert exc.value.param == "format"


CELLS = [
    (12320768, "text", "12,320,768"),
    (sp.Integer(4096), "text", "4,096"),
    (Fraction(25, 2), "text", "12.5"),
    (Fraction(1, 3), "text", "0.333"),
    (Fraction(7, 10**7), "text", "7.00e-07"),
    (Fraction(4, 2), "text", "2"),
    (Exact(Fraction(253, 2500000)), "text", "253/2500000"),
    (Exact(35307520), "text", "35,307,520"),
    (Measure(24641536, "B"), "text", "24.6 MB"),
    (Measure(Fraction(1, 1000), "s"), "text", "1 ms"),
    (Measure(Fraction(101, 10**6), "s"), "latex", r"101 $\mu$s"),
    (Measure(4294967296, "FLOP"), "text", "4.29 GFLOP"),
    (Measure(312 * 10**12, "FLOP/s"), "text", "312 TFLOP/s"),
    (Measure(7, "warps"), "text", "7 warps"),
    (N**2 * d**2 / M, "text", "N²·d²/M"),
    (N**2 * d**2 / M, "markdown", "N²·d²/M"),
    (N**2 * d**2 / M, "latex", r"$\frac{N^{2} d^{2}}{M}$"),
    (("÷ ", N), "text", "÷ N"),
    (("÷ ", N), "latex", r"$\div$ $N$"),
    ("a_b", "latex", r"a\_b"),
    ("x|y", "markdown", r"x\|y"),
    (N**2 * d**2 / M, "ascii", "N^2*d^2/M"),
    (Measure(Fraction(101, 10**6), "s"), "ascii", "101 us"),
    (("÷ ", N), "ascii", "/ N"),
    ("≈", "ascii", "~"),
    ("≲ 2 µs", "ascii", "<~ 2 us"),
    ("≲ 2 µs", "latex", r"$\lesssim$ 2 $\mu$s"),
    (None, "text", ""),
    # beyond MAX_DIGITS digits or a float's range: scientific form, computed exactly, with the digit count
    (10**4400, "text", "1.00e+4400 (4,401 digits)"),
    (-(123 * 10**4500), "text", "-1.23e+4502 (4,503 digits)"),
    (Fraction(10**400, 3), "text", "3.33e+399"),
    (Fraction(1, 10**400), "text", "1.00e-400"),
    (Exact(Fraction(1, 3 * 10**4400)), "text", "3.33e-4401 (exactly a 1-digit numerator over a 4,401-digit denominator)"),
    (Measure(10**401, "s"), "text", "1.00e+401 s"),
    (Measure(3 * 10**500, "B"), "text", "3.00e+500 B"),
    (Measure(10**400, "FLOP/s"), "text", "1.00e+400 FLOP/s"),
]


@pytest.mark.parametrize("value,target,expected", CELLS,
                         ids=[f"{i}-{target}-{exp[:30]}" for i, (_, target, exp) in enumerate(CELLS)])
def test_format_cell(value, target, expected):
    assert format_cell(value, target) == expected


@given(st.integers(-10**30, 10**30))
@example(0)
@example(999)
@example(1000)
@example(-1234567)
def test_integers_print_exactly(n):
    """No count is ever rounded: dropping the separators gives the integer back, at any size."""
    assert int(format_cell(n).replace(",", "")) == n
    assert int(format_cell(Exact(n)).replace(",", "")) == n


@given(st.fractions(min_value=Fraction(-10**12), max_value=Fraction(10**12), max_denominator=10**9))
@example(Fraction(253, 2500000))
@example(Fraction(1, 3))
def test_exact_fractions_print_exactly(f):
    s = format_cell(Exact(f))
    assert Fraction(s.replace(",", "")) == f


@pytest.mark.parametrize("digits", [1, 4000, 4001, 20000])
def test_huge_integers_keep_their_digit_count(digits):
    """Up to 4000 digits every digit prints; beyond, the leading digits and the exact digit count."""
    n = 271 * 10 ** (digits - 3) + 1 if digits >= 3 else 7
    s = format_cell(n)
    if digits <= 4000:
        assert int(s.replace(",", "")) == n
    else:
        assert s == f"2.71e+{digits - 1} ({digits:,} digits)"
