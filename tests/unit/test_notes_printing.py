"""Notes are records, rendered piece by piece (worked by hand): each row is a note and what each printer
writes for it - its text as text, its math through that printer's expression printer, its code as code.
Nothing is read as math that the note does not hold as a SymPy piece (the ``ceil(M / B_M)`` row).  Then
the model's side: every note is a :class:`symbolic.notes.Note` after construction, and a note whose math
names a symbol that is not one of the model's parameters is refused, naming it."""

from __future__ import annotations

import pytest
import sympy as sp

from printing.latex import note_to_latex, note_to_math
from printing.listing import caption_text, listing_text
from printing.tables import note_to_markdown
from printing.text import model_to_text, note_to_text
from symbolic.model import Model
from symbolic.notes import Note, Omega, code, note, symbol
from symbolic.params import param

N, Nk, d, M = param("N"), param("N_k", latex="N_k"), param("d"), param("M")
Br = param("B_r", latex="B_r")
LSE = symbol("LSE", r"\mathrm{LSE}")

#: (note, text, ASCII text, LaTeX text mode, LaTeX math mode, Markdown)
ROWS = [
    (note("at ", sp.Eq(Nk, 4096), ", ", sp.Eq(d, 64)),
     "at N_k = 4096, d = 64", "at N_k = 4096, d = 64",
     r"at $N_k = 4096$, $d = 64$", r"\text{at } N_k = 4096 \text{, } d = 64", r"at $N_k = 4096$, $d = 64$"),
    (note(sp.ceiling(N / Br), " query blocks"),
     "⌈N/B_r⌉ query blocks", "ceil(N/B_r) query blocks",
     r"$\left\lceil \frac{N}{B_r} \right\rceil$ query blocks",
     r"\left\lceil \frac{N}{B_r} \right\rceil \text{ query blocks}",
     r"$\left\lceil \frac{N}{B_r} \right\rceil$ query blocks"),
    (note(code("hbm_reads_lru"), ": exact - the misses"),
     "hbm_reads_lru: exact - the misses", "hbm_reads_lru: exact - the misses",
     r"\path|hbm_reads_lru|: exact---the misses", r"\mathtt{hbm\_reads\_lru}\text{: exact - the misses}",
     "`hbm_reads_lru`: exact - the misses"),
    (note("whole ", N, " × ", Nk, " matrices"),
     "whole N × N_k matrices", "whole N x N_k matrices",
     r"whole $N$ $\times$ $N_k$ matrices", r"\text{whole } N \text{ }\times \text{ } N_k \text{ matrices}",
     "whole $N$ × $N_k$ matrices"),
    (note("Proposition 3: ", Omega(N**2 * d**2 / M)),
     "Proposition 3: Ω(N²·d²/M)", "Proposition 3: Omega(N^2*d^2/M)",
     r"Proposition 3: $\Omega\left(\frac{N^{2} d^{2}}{M}\right)$",
     r"\text{Proposition 3: } \Omega\left(\frac{N^{2} d^{2}}{M}\right)",
     r"Proposition 3: $\Omega\left(\frac{N^{2} d^{2}}{M}\right)$"),
    (note(LSE, " in FP32"),
     "LSE in FP32", "LSE in FP32", r"$\mathrm{LSE}$ in FP32", r"\mathrm{LSE} \text{ in FP32}", r"$\mathrm{LSE}$ in FP32"),
    (note("(", 0, " and ", -sp.oo, ")"),
     "(0 and -∞)", "(0 and -inf)", r"($0$ and $-\infty$)", r"\text{(} 0 \text{ and } -\infty \text{)}",
     r"($0$ and $-\infty$)"),
    # a plain string is one text piece: escaped, with a page's typography, and never read as math
    ("50% of {it} & #1", "50% of {it} & #1", "50% of {it} & #1", r"50\% of \{it\} \& \#1",
     r"\text{50}\%\text{ of }\{\text{it}\}\text{ }\&\text{ }\#\text{1}", "50% of {it} & #1"),
    ("ceil(M / B_M) K", "ceil(M / B_M) K", "ceil(M / B_M) K", r"ceil(M /\allowbreak{} B\_M) K",
     r"\text{ceil(M / B}\_\text{M) K}", "ceil(M / B_M) K"),
    ("pages 383-387 of HBM.", "pages 383-387 of HBM.", "pages 383-387 of HBM.", r"pages 383--387 of HBM\@.",
     r"\text{pages 383-387 of HBM.}", "pages 383-387 of HBM."),
]
IDS = [str(r[0])[:30] for r in ROWS]


@pytest.mark.parametrize("n,text,ascii_,tex,math,md", ROWS, ids=IDS)
def test_text(n, text, ascii_, tex, math, md):
    assert note_to_text(n) == text
    assert note_to_text(n, unicode=False) == ascii_


@pytest.mark.parametrize("n,text,ascii_,tex,math,md", ROWS, ids=IDS)
def test_latex_text_mode(n, text, ascii_, tex, math, md):
    assert note_to_latex(n) == tex
    assert note_to_latex(n).isascii()


@pytest.mark.parametrize("n,text,ascii_,tex,math,md", ROWS, ids=IDS)
def test_latex_math_mode(n, text, ascii_, tex, math, md):
    """In a notebook's ``aligned`` block (MathJax): text in ``\\text{}`` holding no escape, math as it is."""
    assert note_to_math(n) == math


@pytest.mark.parametrize("n,text,ascii_,tex,math,md", ROWS, ids=IDS)
def test_markdown(n, text, ascii_, tex, math, md):
    assert note_to_markdown(n) == md


def test_code_in_a_caption_survives_a_moving_argument():
    assert note_to_latex(note("see ", code("docs/conventions.md")), moving=True) == \
        r"see \texttt{\detokenize{docs/conventions.md}}"
    assert note_to_latex(note(code("pip install 'x[y]'"))) == r"\texttt{\detokenize{pip install 'x[y]'}}"


def test_listing_texts_take_a_str_of_latex_or_a_note():
    """A listing's line is LaTeX markup as written (its math in ``$``); a note is rendered piece by piece;
    a str citation in a caption is plain text whose file and code names go in typewriter."""
    assert listing_text(r"Load $K_j$, $V_j$ from HBM.") == r"Load $K_j$, $V_j$ from HBM\@."
    assert listing_text(note("Load ", Br, " rows")) == r"Load $B_r$ rows"
    assert caption_text("FlashAttention-2 csrc/flash_api.cpp:281-347 and $C = A B$") == \
        r"FlashAttention-2 \texttt{\detokenize{csrc/flash_api.cpp}}:281--347 and $C = A B$"
    assert caption_text("cuBLAS, cublas<t>gemv() (the operation)") == \
        r"cuBLAS, \texttt{\detokenize{cublas<t>gemv()}} (the operation)"
    assert caption_text(note("at ", code("a_b.py"))) == r"at \texttt{\detokenize{a_b.py}}"


# ------------------------------------------------------------------------------ the model's side
def _model(**kw):
    return Model(**{"name": "toy.notes", "summary": "s", "quantities": {"reads": N}, "params": (N,), **kw})


def test_every_note_is_a_record_after_construction():
    m = _model(notes=("plain text", note("a ", N, " rows")), divisible_note="B divides N",
               lower_bounds={"compulsory": N, note("at least ", N): N}, source="a paper")
    assert all(isinstance(n, Note) for n in (*m.notes, m.divisible_note, m.summary, m.source, *m.lower_bounds))
    assert m.notes[0] == Note(("plain text",)) and m.notes[1] == Note(("a ", N, " rows"))
    assert list(m.lower_bounds.values()) == [N, N]
    assert not _model().divisible_note and not _model(source="").source       # the empty note is false


@pytest.mark.parametrize("field", ["notes", "divisible_note", "lower_bounds", "summary", "source"])
def test_a_note_in_a_stranger_symbol_is_refused_naming_it(field):
    x = sp.Symbol("x_stray", positive=True)
    bad = note("uses ", x)
    value = {"notes": (bad,), "lower_bounds": {bad: N}}.get(field, bad)
    with pytest.raises(TypeError, match="x_stray"):
        _model(**{field: value})


def test_a_notes_own_names_are_allowed():
    q = symbol("Q")
    m = _model(notes=(note(q, " is read once"),))
    assert q in m.notes[0].free_symbols
    assert model_to_text(m).splitlines()[-1] == "NOTE: Q is read once"


def test_a_decided_relation_is_refused():
    with pytest.raises(TypeError, match="unevaluated"):
        note("all ", sp.Ge(N, 1))                  # SymPy decides N >= 1 from N's assumptions: True
    assert note_to_text(note(sp.Ge(N, 1, evaluate=False))) == "N ≥ 1"
