"""Annotated algorithm listings: the lines sum to the model's formula, and the listing prints.

References are independent of the code under test: the lines' symbolic sum is compared with the model's
formula by SymPy (non-causal listings: identical for every size), the loop-running count with small cases
counted by hand below, and the causal ones with the executors (``verify`` runs the full comparison over
each model's sweep: ``<model>.listing``).
"""

from __future__ import annotations

import pytest
import sympy as sp

from symbolic import registry
from symbolic.listings import listing_for, listings
from printing.listing import listing_to_latex

REQUIRED = ("attention.fa1.fwd", "attention.fa2.fwd", "gemm.tiled",
            "attention.standard.fwd", "attention.standard.bwd",
            "attention.flash.bwd", "attention.flash.bwd.causal", "attention.flash.bwd.paper")


def test_the_required_listings_exist():
    """FlashAttention's Algorithm 1 (paper order), FlashAttention-2's loop and the tiled GEMM; standard
    attention (FlashAttention's Algorithms 0 and 3) and the backward pass (FlashAttention-2's Algorithm 2)."""
    assert set(REQUIRED) <= set(listings())
    fa1 = listing_for("attention.fa1.fwd")
    assert "Algorithm 1" in fa1.source and "2205.14135" in fa1.source
    assert "2307.08691" in listing_for("attention.fa2.fwd").source
    for name, paper, algorithm in (("attention.standard.fwd", "2205.14135", "Algorithm 0"),
                                   ("attention.standard.bwd", "2205.14135", "Algorithm 3"),
                                   ("attention.flash.bwd", "2307.08691", "Algorithm 2"),
                                   ("attention.flash.bwd.causal", "2307.08691", "Algorithm 2"),
                                   ("attention.flash.bwd.paper", "2307.08691", "Algorithm 2")):
        src = listing_for(name).source
        assert paper in src and src.endswith(algorithm), name
    assert listing_for("no.such.model") is None


def test_every_attention_model_has_a_listing():
    """Each attention model is printed as its paper writes it."""
    assert {n for n in registry.names() if n.startswith("attention.")} <= set(listings())


# a masked listing (causal, a window, a chunk, FA3's window) sums to its closed form only through floor sums
# the symbolic simplifier cannot reach; its lines = formula = executor is the verify property <model>.listing
@pytest.mark.parametrize("name", sorted(n for n in listings() if "causal" not in n
                                        and not n.endswith((".window", ".chunked"))))
def test_lines_sum_to_the_formula_symbolically(name):
    """Non-causal loops collapse exactly (a partition of N into blocks sums to N): the lines' sum minus the
    model's formula simplifies to 0, for every size."""
    lst, m = listing_for(name), registry.get(name)
    sums = lst.sums()
    for q in ("reads", "writes"):
        assert sp.simplify(sp.expand(sums[q] - m[q])) == 0, (name, q)


def test_fa1_line_by_line_by_hand():
    """FlashAttention Algorithm 1 at N = N_k = 5, d = 3, B_r = B_c = 2 (T_r = T_c = 3; blocks of 2, 2, 1 rows):
    line 2 stores N d + 2N = 25; line 6 loads 2 d w_j over j = 2*3*(2 + 2 + 1) = 30; line 8 loads
    (2d + 2) h_i for each (j, i) = 8 * 5 * 3 = 120; lines 12, 13 store (d + 2) h_i per (j, i) = 5 * 5 * 3 = 75.
    reads = 150, writes = 100."""
    lst = listing_for("attention.fa1.fwd")
    assert lst.count(dict(N=5, N_k=5, d=3, B_r=2, B_c=2)) == {"reads": 150, "writes": 100}
    numbers = {n: q for n, _, q, *_ in lst.rows()}
    assert numbers == {2: "writes", 6: "reads", 8: "reads", 12: "writes", 13: "writes"}   # the paper's lines


def test_fa2_by_hand():
    """FlashAttention-2 Algorithm 1 at N = N_k = 5, d = 3, B_r = B_c = 2: Q_i once (N d = 15), K_j, V_j
    for every (i, j): 2 d N_k T_r = 2*3*5*3 = 90; O_i and L_i once: N d + N = 20."""
    assert listing_for("attention.fa2.fwd").count(dict(N=5, N_k=5, d=3, B_r=2, B_c=2)) == {"reads": 105, "writes": 20}


def test_gemm_by_hand():
    """M = 3, N = 5, K = 4, tiles 2 x 2, K-steps 3: t_m = 2, t_n = 3; A is re-read per tile column
    (3 * 3 * 4 = 36), B per tile row (2 * 4 * 5 = 40); C stored once (15)."""
    assert listing_for("gemm.tiled").count(dict(M=3, N=5, K=4, B_M=2, B_N=2, B_K=3)) == {"reads": 76, "writes": 15}


def test_causal_fa1_by_hand():
    """Causal, N = N_k = 4, d = 1, B_r = B_c = 2: key block 1 is seen by query blocks 1, 2; key block 2 by
    query block 2 only.  Loads: K, V 2*1*4 = 8; Q_i, O_i, l_i, m_i (2d + 2) h_i over the three (j, i)
    pairs = 4*2*3 = 24; reads 32.  Stores: init N d + 2N = 12, then (d + 2) h_i over three pairs = 18."""
    assert listing_for("attention.fa1.fwd.causal").count(dict(N=4, N_k=4, d=1, B_r=2, B_c=2)) == {
        "reads": 32, "writes": 30}


def _moving_lines(name):
    """``{(paper line number, "reads" or "writes")}`` of a listing's moving lines."""
    return {(n, q) for n, _, q, *_ in listing_for(name).rows()}


def test_standard_forward_by_hand():
    """Algorithm 0 at N = 3, N_k = 5, d = 2: line 1 loads Q, K (3*2 + 5*2 = 16) and stores S (3*5 = 15);
    line 2 loads S (15) and stores P (15); line 3 loads P, V (15 + 10 = 25) and stores O (6).
    reads = 16 + 15 + 25 = 56, writes = 15 + 15 + 6 = 36."""
    lst = listing_for("attention.standard.fwd")
    assert lst.count(dict(N=3, N_k=5, d=2)) == {"reads": 16 + 15 + 25, "writes": 15 + 15 + 6}
    assert _moving_lines("attention.standard.fwd") == {(n, q) for n in (1, 2, 3) for q in ("reads", "writes")}
    assert [n for it, _, n in lst.walk() if getattr(it, "command", "") == "Return"] == [4]   # "4: Return O."


def test_standard_backward_by_hand():
    """Algorithm 3 at N = 3, N_k = 5, d = 2 (N x N_k = 15, N x d = 6, N_k x d = 10): line 1 loads P, dO
    (15 + 6) and stores dV (10); line 2 loads dO, V (6 + 10) and stores dP (15); line 3 loads P, dP (30)
    and stores dS (15); line 4 loads dS, K (15 + 10) and stores dQ (6); line 5 loads dS, Q (15 + 6) and
    stores dK (10).  reads = 21 + 16 + 30 + 25 + 21 = 113, writes = 10 + 15 + 15 + 6 + 10 = 56."""
    lst = listing_for("attention.standard.bwd")
    assert lst.count(dict(N=3, N_k=5, d=2)) == {"reads": 21 + 16 + 30 + 25 + 21, "writes": 10 + 15 + 15 + 6 + 10}
    assert _moving_lines("attention.standard.bwd") == {(n, q) for n in range(1, 6) for q in ("reads", "writes")}


def test_flash_backward_line_by_line_by_hand():
    """FlashAttention-2 Algorithm 2 at N = N_k = 5, d = 3, B_r = B_c = 2 (T_r = T_c = 3; blocks of 2, 2, 1
    rows): line 3 initialises dQ (N d = 15); line 4 reads dO, O (2 N d = 30) and writes D (N = 5); line 6
    loads K_j, V_j (2 d N_k = 30); line 9 loads Q_i, dO_i, dQ_i, L_i, D_i, (3d + 2) h_i for each (j, i):
    11 * 5 * 3 = 165; line 15 writes dQ_i back, d h_i for each (j, i): 3 * 5 * 3 = 45; line 18 writes
    dK_j, dV_j (2 d N_k = 30).  reads = 30 + 30 + 165 = 225, writes = 15 + 5 + 45 + 30 = 95."""
    lst = listing_for("attention.flash.bwd")
    assert lst.count(dict(N=5, N_k=5, d=3, B_r=2, B_c=2)) == {"reads": 30 + 30 + 165, "writes": 15 + 5 + 45 + 30}
    assert _moving_lines("attention.flash.bwd") == {(3, "writes"), (4, "reads"), (4, "writes"), (6, "reads"),
                                                    (9, "reads"), (15, "writes"), (18, "writes")}
    text = {n: it.text for it, _, n in lst.walk()}
    assert text[6].startswith("Load $K_j$, $V_j$") and text[9].startswith("Load $Q_i$")       # the paper's lines
    assert "write it back to HBM" in text[15] and text[18].startswith("Write $dK_j$, $dV_j$")
    assert max(text) == 20                                                                   # "20: Return dQ, dK, dV."


def test_causal_flash_backward_by_hand():
    """Causal, N = N_k = 4, d = 1, B_r = B_c = 2: key block 1 is seen by query blocks 1, 2; key block 2 by
    query block 2 only (three (j, i) pairs of 2 rows).  Loads: D's pre-pass 2 N d = 8; K_j, V_j 2 d N_k = 8;
    Q_i, dO_i, dQ_i, L_i, D_i (3d + 2) h_i = 5 * 2 per pair, 30.  Stores: dQ init N d = 4, D N = 4,
    dQ_i d h_i = 2 per pair, 6, dK_j, dV_j 2 d N_k = 8."""
    assert listing_for("attention.flash.bwd.causal").count(dict(N=4, N_k=4, d=1, B_r=2, B_c=2)) == {
        "reads": 8 + 8 + 30, "writes": 4 + 4 + 6 + 8}


def test_paper_flash_backward_takes_the_papers_blocks():
    """``.paper``: at M = 96, d = 3 the paper's blocks are B_c = ceil(96/12) = 8, B_r = min(8, 3) = 3; the
    listing counts as the blocked model's formula does there (N_k = N)."""
    blocked = dict(N=20, N_k=20, d=3, B_r=3, B_c=8)
    m = registry.get("attention.flash.bwd")
    assert listing_for("attention.flash.bwd.paper").count(dict(N=20, d=3, M=96)) == {
        q: m.evaluate(q, **blocked) for q in ("reads", "writes")} == listing_for("attention.flash.bwd").count(blocked)


@pytest.mark.parametrize("name", sorted(listings()))
def test_count_agrees_with_the_executor_at_a_pinned_point(name):
    """One pinned point per listing (``verify`` runs the whole sweep)."""
    from verify.registry import checks_of
    check = next(c for c in checks_of(name) if c.name == name)
    m = registry.get(name)
    point = list(check.grid(False))[2]                    # the check's third pinned point (small, odd sizes)
    pt = m.check_point({k: v for k, v in point.items() if k not in check.extra})
    got = listing_for(name).count(pt)
    executed = check.execute(point)
    assert got == {q: executed[q] for q in ("reads", "writes")} == {q: m.evaluate(q, **pt) for q in ("reads", "writes")}


@pytest.mark.parametrize("name", sorted(listings()))
def test_listing_prints_as_algorithmicx(name):
    tex = listing_to_latex(listing_for(name))
    assert tex.startswith(r"\begin{algorithm}") and tex.rstrip().endswith(r"\end{algorithm}")
    assert r"\begin{algorithmic}[1]" in tex and tex.count(r"\For{") == tex.count(r"\EndFor")
    assert tex.isascii()
    moving = [ln for ln in tex.splitlines() if r"\Comment{" in ln]
    assert moving and all(("load $" in ln or "store $" in ln) for ln in moving)
    assert "the lines' sum" in tex


def test_fa1_annotations_read_as_the_issue_asks():
    """'line 6: load K_j, V_j: 2 B_c d elements ... T_c times': per run 2 d w_j (w_j = the rows of K_j), T_c runs."""
    tex = listing_to_latex(listing_for("attention.fa1.fwd"))
    line6 = next(ln for ln in tex.splitlines() if "Load $K_j$, $V_j$" in ln)
    assert r"\Comment{load $2 d w_{j}$ $\times\ T_{c}$}" in line6
    assert r"$w_{j} = \min\left(B_c, - B_c \left(j - 1\right) + N_k\right)$" in tex
