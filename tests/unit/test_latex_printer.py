"""Golden tests for the LaTeX printer, text escaping and model environments (written by hand)."""

from __future__ import annotations

import pytest
import sympy as sp

from symbolic.params import param
from printing.glyphs import GLYPHS, SUPERSCRIPTS
from printing.notebook import model_latex
from printing.latex import TileboundLatexPrinter, escape, math_text, model_to_latex, to_latex
from printing.notation import Omega, Theta
from printing.text import ascii_text

from toy_models import halo_model

# the printers' own parameters (attention's names, declared here: the printer tests need no model family)
N, Nk, d, M = param("N"), param("N_k", latex="N_k"), param("d"), param("M")
Br, Bc = param("B_r", latex="B_r"), param("B_c", latex="B_c")

CASES = [
    (sp.ceiling(N / Bc), r"\left\lceil \frac{N}{B_c} \right\rceil"),
    (sp.floor(N / 2), r"\left\lfloor \frac{N}{2} \right\rfloor"),
    (12 * N**2 * d**2 / M, r"\frac{12 N^{2} d^{2}}{M}"),
    (Theta(N**2 * d**2 / M), r"\Theta\left(\frac{N^{2} d^{2}}{M}\right)"),
    (Omega(N * d), r"\Omega\left(N d\right)"),
    (Nk * d, r"N_k d"),
    (Br * Bc, r"B_c B_r"),
    (sp.Min(Bc, d), r"\min\left(B_c, d\right)"),
    (2 * N * d * sp.ceiling(Nk / Bc), r"2 N d \left\lceil \frac{N_k}{B_c} \right\rceil"),
    (sp.ceiling(M / (4 * d)), r"\left\lceil \frac{M}{4 d} \right\rceil"),
    (sp.ceiling(N / Br) ** 2, r"\left\lceil \frac{N}{B_r} \right\rceil^{2}"),
]


@pytest.mark.parametrize("expr,latex", CASES, ids=[c[1] for c in CASES])
def test_golden(expr, latex):
    assert to_latex(expr) == latex


ESCAPES = [
    ("a_b & 50%", r"a\_b \& 50\%"),
    ("N×N", r"N$\times$N"),
    ("4.56 µs", r"4.56 $\mu$s"),
    ("{x}", r"\{x\}"),
    ("a->b", r"a-\textgreater{}b"),
    ("Θ(N²)", r"$\Theta$(N\textsuperscript{2})"),
    ("漢", "[U+6F22]"),
    ("conventions §5", r"conventions \S{}5"),
    ("t ≲ 2 µs", r"t $\lesssim$ 2 $\mu$s"),
    ("N⁻¹", r"N\textsuperscript{-1}"),
]


@pytest.mark.parametrize("text,tex", ESCAPES)
def test_escape(text, tex):
    assert escape(text) == tex
    assert escape(text).isascii()


def test_unknown_setting_raises():
    with pytest.raises(TypeError):
        to_latex(N, colour="red")
    assert "mul_symbol" in TileboundLatexPrinter._default_settings


def test_unknown_environment_names_the_parameter():
    with pytest.raises(ValueError, match="^environment: "):
        model_to_latex(halo_model(), environment="equation")


def test_model_align():
    expected = r"""\begin{align}
\intertext{exact:}
\text{reads} &= N + 2 \left\lceil \frac{N}{B} \right\rceil && \text{elements} \\
\text{writes} &= N && \text{elements} \\
\text{flops} &= 3 N && \text{FLOP} \\
\text{total} &= 2 N + 2 \left\lceil \frac{N}{B} \right\rceil && \text{elements} \\
\intertext{when the blocks divide the sizes, when $N = t B$:}
\text{reads} &= N \left(1 + \frac{2}{B}\right) && \text{elements} \\
\text{writes} &= N && \text{elements} \\
\text{flops} &= 3 N && \text{FLOP} \\
\text{total} &= 2 N \left(1 + \frac{1}{B}\right) && \text{elements} \\
\intertext{asymptotics of $\text{total}$, when $B \le N$:}
\text{total} &\sim 2 N && \text{elements} \\
\text{total} &\in \Theta\left(N\right) \\
\intertext{lower bounds:}
\text{compulsory} &= 2 N
\end{align}"""
    assert model_to_latex(halo_model(), "align") == expected


def test_model_aligned_for_notebooks():
    tex = model_latex(halo_model())
    assert tex.startswith("$$\\begin{aligned}\n") and tex.endswith("\\end{aligned}$$")
    assert r"\intertext" not in tex                      # not allowed inside aligned
    assert r"&\text{asymptotics of } \text{total} \text{, when } B \le N\text{:} \\" in tex
    assert r"\text{total} &\in \Theta\left(N\right) \\" in tex


def test_underscored_quantity_names_are_escaped():
    from symbolic.model import Model
    m = Model(name="toy.q", summary="s", quantities={"t_compute": N}, params=(N,))
    assert r"\text{t}\_\text{compute} &= N" in model_to_latex(m)


MATH_TEXT = [
    ("reads", r"\text{reads}"),
    ("t_compute", r"\text{t}\_\text{compute}"),
    ("in 100% of {it}", r"\text{in 100}\%\text{ of }\{\text{it}\}"),
    ("a ≤ b", r"\text{a }\le \text{ b}"),
    ("N×N", r"\text{N}\times \text{N}"),
    ("x^2", r"\text{x}\hat{}\text{2}"),
    ("§5", r"\S \text{5}"),
    ("a ≲ b", r"\text{a }\lesssim \text{ b}"),         # the notebook labels printed [U+2272] here
    ("N⁻¹ d²", r"\text{N}^{-1}\text{ d}^{2}"),
    ("it’s “x”", "\\text{it's \"x\"}"),
]


@pytest.mark.parametrize("text,tex", MATH_TEXT)
def test_math_text_for_notebooks(text, tex):
    """Labels inside math: no escapes inside \\text{} (MathJax may not read them), specials in math mode."""
    assert math_text(text) == tex


def test_notebook_text_has_no_text_mode_escapes():
    """Inside ``aligned`` every ``\\text{...}`` holds plain characters only (MathJax-safe)."""
    import re

    from symbolic.model import Model
    m = Model(name="toy.q", summary="s", quantities={"t_compute": N, "max_bytes_%": 2 * N}, params=(N,),
              lower_bounds={"Omega(N^2) from {a paper}, 100% sure": N})
    tex = model_latex(m)
    texts = re.findall(r"\\text\{([^{}]*)\}", tex)
    assert texts and all("\\" not in t and "_" not in t and "%" not in t for t in texts)


def test_wide_sums_break_between_terms():
    """A sum wider than BREAK_AT text characters continues on ``&\\quad + ...`` lines, each one term or more,
    and the label and unit appear once."""
    from symbolic.model import Model
    from printing.latex import BREAK_AT

    wide = sum(N**i * d**(20 - i) for i in range(21))          # 21 terms of ~8 characters each
    m = Model(name="toy.wide", summary="s", quantities={"reads": wide, "writes": N}, params=(N, d))
    rows = model_to_latex(m, "align").splitlines()
    first = next(i for i, r in enumerate(rows) if r.startswith(r"\text{reads}"))
    cont = []
    for r in rows[first + 1:]:                               # the contiguous continuation lines
        if not r.startswith(r"&\quad "):
            break
        cont.append(r)
    assert 2 <= len(cont) <= 5
    assert all(r.startswith(r"&\quad + ") for r in cont)
    block = " ".join(rows[first:first + 1 + len(cont)])
    assert block.count(r"&& \text{elements}") == 1
    assert all(f"N^{{{i}}}" in block for i in range(2, 20)) and all(f"d^{{{i}}}" in block for i in range(2, 20))
    assert 21 * 8 > BREAK_AT


def test_a_term_too_wide_for_the_page_breaks_as_math():
    """A product of 50 factors (no sum to break at the top) breaks between its factors as math: each
    continuation row starts ``&\\quad \\cdot``, no row is set as text (the old wrapped ASCII), the regime
    reads ``all sizes at least 1`` (the default regime, in words), and a notebook's ``aligned`` breaks the same way."""
    from symbolic.model import Model

    wide = sp.Mul(*[N + i for i in range(1, 51)])
    m = Model(name="toy.long", summary="s", quantities={"reads": wide}, params=(N,))
    rows = model_to_latex(m, "align").splitlines()
    first = next(i for i, r in enumerate(rows) if r.startswith(r"\text{reads} &= \left(N + 1\right)"))
    cont = [r for r in rows[first + 1:] if r.startswith(r"&\quad ")]
    assert len(cont) >= 3 and all(r.startswith(r"&\quad \cdot \left(N + ") for r in cont)
    assert not any("ttfamily" in r or "sloppy" in r for r in rows)
    body = " ".join(rows)
    assert all(rf"\left(N + {i}\right)" in body for i in range(1, 51))     # every factor, once
    assert sum(body.count(rf"\left(N + {i}\right)") for i in range(1, 51)) == 50
    assert r"\intertext{asymptotics of $\text{reads}$ (all sizes at least 1):}" in rows
    assert r"\text{reads} &\sim N^{50}" in body
    aligned = model_latex(m)
    assert r"&\quad \cdot \left(N + " in aligned and r"\intertext" not in aligned


def test_a_parameter_prints_its_own_latex_form():
    """LaTeX shows ``Param.latex``; a parameter without one gets its name with one subscript."""
    bm, sf = param("B_M", "row block", latex=r"B_{\mathrm{M}}"), param("S_f", "fast memory")
    assert to_latex(sp.ceiling(N / bm)) == r"\left\lceil \frac{N}{B_{\mathrm{M}}} \right\rceil"
    assert to_latex(sf) == "S_{f}"


# ------------------------------------------------------------------------------ the one glyph table
# Each glyph in each output, written by hand: (character, ASCII, LaTeX text mode, LaTeX math mode)
GLYPH_FORMS = [
    ("≤", "<=", r"$\le$", r"\le"),
    ("≥", ">=", r"$\ge$", r"\ge"),
    ("≲", "<~", r"$\lesssim$", r"\lesssim"),
    ("≈", "~", r"$\approx$", r"\approx"),
    ("÷", "/", r"$\div$", r"\div"),
    ("×", "x", r"$\times$", r"\times"),
    ("·", "*", r"$\cdot$", r"\cdot"),
    ("µ", "u", r"$\mu$", r"\mu"),
    ("Θ", "Theta", r"$\Theta$", r"\Theta"),
    ("Ω", "Omega", r"$\Omega$", r"\Omega"),
    ("⌈", "ceil(", r"$\lceil$", r"\lceil"),
    ("⌉", ")", r"$\rceil$", r"\rceil"),
    ("⌊", "floor(", r"$\lfloor$", r"\lfloor"),
    ("⌋", ")", r"$\rfloor$", r"\rfloor"),
    ("²", "^2", r"\textsuperscript{2}", "^{2}"),
    ("³", "^3", r"\textsuperscript{3}", "^{3}"),
    ("…", "...", r"\ldots{}", r"\ldots"),
]


@pytest.mark.parametrize("char,ascii_,text,math", GLYPH_FORMS, ids=[g[0] for g in GLYPH_FORMS])
def test_each_printer_spells_a_glyph_as_the_table_says(char, ascii_, text, math):
    assert ascii_text(char) == ascii_
    assert escape(char) == text
    got = math_text(char)
    assert got.rstrip() == math.rstrip()


@pytest.mark.parametrize("char", sorted(GLYPHS))
def test_every_glyph_has_a_form_in_every_output(char):
    """No character of the table falls through to a code point in any printer."""
    for out in (ascii_text(char), escape(char), math_text(char)):
        assert out.isascii() and "[U+" not in out, (char, out)


def test_superscript_runs_are_one_exponent():
    assert set(SUPERSCRIPTS) <= set(GLYPHS)
    assert ascii_text("N⁻¹²") == "N^-12" and escape("N⁻¹²") == r"N\textsuperscript{-12}"
    assert math_text("N⁻¹²") == r"\text{N}^{-12}"


def test_every_registered_model_prints_without_code_points(toys):
    """What every model prints (formulas, summary, source, notes, regime) is in the glyph table: the
    notes (escape), a notebook (math_text inside aligned) and an ASCII terminal agree."""
    from symbolic import registry
    from printing.text import model_to_text

    for name in registry.names():
        m = registry.get(name)
        text = model_to_text(m)
        for out in (escape(text), model_latex(m), model_to_text(m, unicode=False)):
            assert "[U+" not in out, (name, [ln for ln in out.splitlines() if "[U+" in ln][:3])
