"""A model's prose with its math set as math (written by hand): each line below is a note, source, regime or
caption of the toolkit, and what a reader of the notes should see."""

from __future__ import annotations

import pytest

from symbolic.params import param
from printing.prose import prose, prose_math, segments

N, Nk, d, M = param("N"), param("N_k", latex="N_k"), param("d"), param("M")
Br, Bc = param("B_r", latex="B_r"), param("B_c", latex="B_c")
nSM = param("n_SM", latex="n_{SM}")
S = param("S")
ATT = (N, Nk, d, Br, Bc, M)

CASES = [
    # the issue's own examples
    ("at N_k = 4096, d = 64, B_r = 128", r"at $N_k = 4096$, $d = 64$, $B_r = 128$", ATT),
    ("the standard kernels move whole N x N_k matrices", r"the standard kernels move whole $N \times N_k$ matrices", ATT),
    ("all sizes >= 1", r"all sizes $\ge 1$", ATT),
    # regimes and divisibility notes
    ("B_r <= N, B_c <= N_k", r"$B_r \le N$, $B_c \le N_k$", ATT),
    ("d <= M <= N d (Theorem 2)", r"$d \le M \le N d$ (Theorem 2)", ATT),
    ("4 d^2 <= M <= N d (so B_r = d)", r"$4 d^{2} \le M \le N d$ (so $B_r = d$)", ATT),
    ("B_r divides N and B_c divides N_k", r"$B_r$ divides $N$ and $B_c$ divides $N_k$", ATT),
    ("4d divides M", r"$4d$ divides $M$", ATT),
    # functions, Greek, brackets, relations inside
    ("Proposition 3: Omega(N^2 d^2 / M) for every exact algorithm, all M in [d, N d]",
     r"Proposition 3: $\Omega(N^{2} d^{2} / M)$ for every exact algorithm, all $M \in [d, N d]$", ATT),
    ("COSMA Q >= 2 M N K / sqrt(S) + M N", r"COSMA $Q \ge 2 M N K / \sqrt{S} + M N$", (S,)),
    ("x is re-read once per tile row: ceil(M / B_M) K elements",
     r"$x$ is re-read once per tile row: $\lceil M / B_{M} \rceil K$ elements", (M,)),
    ("query row r sits at position N_k - N + r", r"query row $r$ sits at position $N_k - N + r$", ATT),
    ("A proof for the queuing formula: L = lambda W", r"A proof for the queuing formula: $L = \lambda W$", ()),
    # a relation or a times sign between words is math on its own; x as a name stays a name
    ("bytes in flight = bandwidth x latency", r"bytes in flight $=$ bandwidth $\times$ latency", ()),
    ("compulsory: A and x read once", r"compulsory: $A$ and $x$ read once", ()),
    ("tiled y = A x through global memory", r"tiled $y = A x$ through global memory", ()),
    ("on-chip SRAM (100 KB of FP16 = 51,200)", r"on-chip SRAM (100 KB of FP16 $= 51{,}200$)", ATT),
    ("load->compute pipeline", r"load$\to$compute pipeline", ()),
    # a parameter's own LaTeX form; a parameter glued to a word stays a parameter
    ("n_SM SMs share it", r"$n_{SM}$ SMs share it", (nSM,)),
    ("the s-stage pipeline per K-step", r"the $s$-stage pipeline per $K$-step", (param("s"), param("K"))),
    # text stays text: numbers alone, initials, units, apostrophes, citations
    ("Dao et al. 2022, arXiv 2205.14135, Algorithm 1", "Dao et al. 2022, arXiv 2205.14135, Algorithm 1", ATT),
    ("Little, J. D. C. (1961), Operations Research 9(3), 383-387",
     "Little, J. D. C. (1961), Operations Research 9(3), 383--387", ()),
    ("exact - the misses of HBM.", r"exact---the misses of HBM\@.", ()),
    ("3.9 exp/s on H100", r"3.9 exp/\allowbreak{}s on H100", ()),
    ("the course's estimate", "the course's estimate", (param("s"),)),
    # code names: quantity names as the formula labels set them; paths and constants verbatim (url's \path)
    ("hbm_reads_fits: exact", r"$\text{hbm}\_\text{reads}\_\text{fits}$: exact", ()),
    ("(docs/conventions.md §4.1)", r"(\path|docs/conventions.md| \S{}4.1)", ()),
    ("see LOADED_HBM_LATENCY", r"see \path|LOADED_HBM_LATENCY|", ()),
    # the author's own inline math is kept; quotes become TeX quotes
    ("as $\\alpha$ says, \"L2 Cache Optimizations\"", r"as $\alpha$ says, ``L2 Cache Optimizations''", ()),
    # Unicode glyphs in prose
    ("Θ(N²) ≤ M", r"$\Theta(N^{2}) \le M$", ATT),
]


@pytest.mark.parametrize("text,tex,params", CASES, ids=[c[0][:40] for c in CASES])
def test_prose(text, tex, params):
    assert prose(text, params) == tex
    assert prose(text, params).isascii()


def test_caption_paths_survive_a_moving_argument():
    assert prose("the tutorial (docs/conventions.md)", moving=True) == r"the tutorial (\texttt{\detokenize{docs/conventions.md}})"


def test_segments_say_which_runs_are_math():
    assert segments("B_r <= N, done", (Br, N)) == [(True, r"B_r \le N"), (False, ", done")]


def test_math_mode_rendering_for_notebooks():
    """In ``aligned`` (MathJax) text runs sit in \\text{} and math runs as they are."""
    assert prose_math("all sizes >= 1") == r"\text{all sizes }\ge 1"
    assert prose_math("when B_r divides N", (Br, N)) == r"\text{when }B_r \text{ divides }N"


def test_special_characters_stay_escaped_text():
    assert prose("50% of {it} & more #1 ^ ok") == r"50\% of \{it\} \& more \#1 \textasciicircum{} ok"
    assert prose("the count ~ 12 N^2", (N,)) == r"the count $\sim 12 N^{2}$"
