"""Golden tests for the one-line Unicode/ASCII printer (expected strings written by hand)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st

from symbolic.params import param
from printing.notation import Omega, Theta
from printing.text import TextPrinter, ascii_text, model_to_text, to_text

from toy_models import halo_model

# the printers' own parameters (attention's names, declared here: the printer tests need no model family)
N, Nk, d, M = param("N"), param("N_k", latex="N_k"), param("d"), param("M")
Br, Bc = param("B_r", latex="B_r"), param("B_c", latex="B_c")

CASES = [
    # expression, unicode, ascii
    (sp.ceiling(N / Bc), "⌈N/B_c⌉", "ceil(N/B_c)"),
    (sp.floor(N / 2), "⌊N/2⌋", "floor(N/2)"),
    (12 * N**2 * d**2 / M, "12·N²·d²/M", "12*N^2*d^2/M"),
    (N / (Br * Bc), "N/(B_c·B_r)", "N/(B_c*B_r)"),
    (Theta(N**2 * d**2 / M), "Θ(N²·d²/M)", "Theta(N^2*d^2/M)"),
    (Omega(N * d), "Ω(N·d)", "Omega(N*d)"),
    (sp.Min(Bc, d), "min(B_c, d)", "min(B_c, d)"),
    (sp.Max(Bc, d), "max(B_c, d)", "max(B_c, d)"),
    (sp.ceiling(M / (4 * d)), "⌈M/(4·d)⌉", "ceil(M/(4*d))"),
    (sp.ceiling(N / sp.ceiling(M / (4 * d))), "⌈N/⌈M/(4·d)⌉⌉", "ceil(N/ceil(M/(4*d)))"),
    ((N + 1) ** 2, "(N + 1)²", "(N + 1)^2"),
    (sp.sqrt(M), "√M", "sqrt(M)"),
    (1 / M, "1/M", "1/M"),
    (N**-2, "1/N²", "1/N^2"),
    (-2 * N, "-2·N", "-2*N"),
    (3 * N / 2, "3·N/2", "3*N/2"),
    (N * (d + 2), "N·(d + 2)", "N*(d + 2)"),
    (4 * N * Nk * d, "4·N·N_k·d", "4*N*N_k*d"),
    (2 * N * d * sp.ceiling(Nk / Bc) + 2 * Nk * d, "2·N·d·⌈N_k/B_c⌉ + 2·N_k·d", "2*N*d*ceil(N_k/B_c) + 2*N_k*d"),
    (sp.Piecewise((N, N <= M), (M, True)), "{N if M ≥ N; M otherwise}", "{N if M >= N; M otherwise}"),
    (sp.Rational(5, 2), "5/2", "5/2"),
]


@pytest.mark.parametrize("expr,unicode,ascii_", CASES, ids=[c[1] for c in CASES])
def test_golden(expr, unicode, ascii_):
    assert to_text(expr) == unicode
    assert to_text(expr, unicode=False) == ascii_


ASCII = [
    ("Θ(N²·d²/M) ≈ 4.56 µs", "Theta(N^2*d^2/M) ~ 4.56 us"),
    ("N⁻¹ ≤ 2×M ÷ 3", "N^-1 <= 2xM / 3"),
    ("⌈N/B⌉ ∈ conventions §5", "ceil(N/B) in conventions sec. 5"),
    ("t ≲ 2 µs ± 3 μs", "t <~ 2 us +- 3 us"),
    ("plain ascii", "plain ascii"),
]


@pytest.mark.parametrize("text,expected", ASCII)
def test_ascii_text(text, expected):
    assert ascii_text(text) == expected


def test_a_parameter_prints_as_the_name_a_user_types():
    """Text shows ``Param.name`` (what ``--at`` takes), never its LaTeX form or a dialect suffix."""
    bm = param("B_M", "row block", latex=r"B_{\mathrm{M}}")
    assert to_text(sp.ceiling(N / bm)) == "⌈N/B_M⌉"
    assert to_text(sp.ceiling(N / bm), unicode=False) == "ceil(N/B_M)"


def test_unknown_setting_raises():
    with pytest.raises(TypeError):
        to_text(N, colour="red")
    assert "unicode" in TextPrinter._default_settings


def test_sum_prints_its_limits():
    j = sp.Symbol("j", integer=True)
    s = sp.Sum(N - j, (j, 0, sp.ceiling(Nk / Bc) - 1))
    assert to_text(s) == "Σ[j=0..⌈N_k/B_c⌉ - 1] (N - j)"


@given(st.integers(1, 10**6), st.integers(1, 10**4))
@example(1, 1)
@example(10**6, 3)
def test_printed_ceiling_reads_back_to_the_same_value(n, b):
    """The ASCII form, read back by SymPy, is the same function: printing loses nothing."""
    e = N + 2 * sp.ceiling(N / Br) + 12 * N**2 * d**2 / M
    back = sp.sympify(to_text(e, unicode=False).replace("^", "**").replace("ceil(", "ceiling("),
                      locals={"N": N, "B_r": Br, "d": d, "M": M})
    point = {N: n, Br: b, d: 64, M: 51200}
    assert back.subs(point) == e.subs(point)


def test_model_to_text_sections():
    text = model_to_text(halo_model())
    expected = """toy.halo: 1-D stencil in tiles of B with a one-element halo each side
source: test toy

exact
  reads  = N + 2·⌈N/B⌉    [elements]
  writes = N              [elements]
  flops  = 3·N            [FLOP]
  total  = 2·N + 2·⌈N/B⌉  [elements]

when the blocks divide the sizes (N = t·B)
  reads  = N·(1 + 2/B)    [elements]
  writes = N              [elements]
  flops  = 3·N            [FLOP]
  total  = 2·N·(1 + 1/B)  [elements]

asymptotics of total (B ≤ N)
  total ~ 2·N   [elements]
  total ∈ Θ(N)

lower bounds
  compulsory = 2·N"""
    assert text == expected
