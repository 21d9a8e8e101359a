r"""Attention as the papers write it - standard attention, FlashAttention's forward loops and its backward
pass - line by line, each load and store annotated.

* ``attention.fa1.fwd`` (and ``.causal``, ``.paper``): Dao et al. 2022, *FlashAttention* (arXiv
  2205.14135), Algorithm 1 - outer loop over key blocks ``j``, inner over query blocks ``i``; lines
  numbered as in the paper (1-16).
* ``attention.fa2.fwd`` (and ``.causal``, ``.paper``): Dao 2023, *FlashAttention-2* (arXiv 2307.08691),
  Algorithm 1 - outer loop over query blocks, inner over key blocks; lines 1-17 as in the paper.
* ``attention.standard.fwd``: FlashAttention (arXiv 2205.14135), Algorithm 0 (standard attention
  implementation) - three kernels through HBM, lines 1-4 as in the paper.
* ``attention.standard.bwd``: FlashAttention (arXiv 2205.14135), Algorithm 3 (standard attention backward
  pass, Appendix B.4) - five kernels through HBM, lines 1-6 as in the paper.
* ``attention.flash.bwd`` (and ``.causal``, ``.paper``): FlashAttention-2 (arXiv 2307.08691), Algorithm 2
  (backward pass) - the algorithm the model counts: ``D = rowsum(dO o O)`` computed once up front (line 4),
  one log-sum-exp ``L`` (not FlashAttention's Algorithm 4, which reloads ``O_i`` and ``l_i, m_i`` in the
  inner loop and recomputes ``D_i`` there); lines 1-20 as in the paper.  Two deviations, both the model's
  and the executor's: line 9 loads ``Q_i, dO_i, dQ_i, L_i, D_i`` - the paper's line 9 also names ``O_i``,
  which nothing in the inner loop reads once ``D_i`` is in HBM; and line 15 ("Load ``dQ_i`` ..., update,
  write back") updates the ``dQ_i`` loaded at line 9, so ``dQ_i`` is loaded once per ``(j, i)``, not twice.
  The paper's block sizes (``.paper``) are FlashAttention's Algorithm 4 line 2 (= Algorithm 1 line 1).

The counting conventions are the models' (``docs/conventions.md`` §1): elements moved between HBM and
on-chip memory; a partial last block moves its valid rows only (``h_i``, ``w_j``); ``N_k`` key rows
(``N_k = N`` in the papers).  Under a causal mask a fully masked block is skipped: key block ``j`` is met
by the query blocks after ``I_j`` (query row ``r`` sits at position ``N_k - N + r``), query block ``i``
meets the key blocks up to ``J_i``.
"""

from __future__ import annotations

import sympy as sp

from ..models import attention as models
from ..models.attention import FA2_SOURCE, FA_SOURCE, B_c, B_r, N, N_k, d, d_v, paper_block_sizes
from . import Line, Listing, Loop, abbreviation, index

i, j = index("i"), index("j")
T_r, T_c = abbreviation("T_r"), abbreviation("T_c")
h_i, w_j = abbreviation("h_i"), abbreviation("w_j")
I_j, J_i = abbreviation("I_j"), abbreviation("J_i")

DEFS = (
    (T_r, sp.ceiling(N / B_r), "query blocks"),
    (T_c, sp.ceiling(N_k / B_c), "key blocks"),
    (h_i, sp.Min(B_r, N - (i - 1) * B_r), "rows of $Q_i$, $O_i$ (the last block may be partial)"),
    (w_j, sp.Min(B_c, N_k - (j - 1) * B_c), "rows of $K_j$, $V_j$"),
)
#: causal: the query blocks before I_j + 1 see none of key block j; query block i sees key blocks 1..J_i
CAUSAL_DEFS = (
    (I_j, sp.Max(0, sp.floor(((j - 1) * B_c - N_k + N) / B_r)), "query blocks that key block $j$ is hidden from"),
    (J_i, sp.Min(T_c, sp.ceiling((N_k - N + i * B_r) / B_c)), "key blocks query block $i$ sees"),
)

_PAPER_BLOCKS = dict(zip((B_r, B_c), paper_block_sizes()))
_PAPER_SUBS = {**_PAPER_BLOCKS, N_k: N}

REQUIRE = (r"Matrices $Q \in \mathbb{R}^{N \times d}$ and $K, V \in \mathbb{R}^{N_k \times d}$ in HBM, "
           r"on-chip SRAM of $M$ elements")
#: the same with V (and O) of their own width d_v (the models with a d_v parameter)
REQUIRE_DV = (r"Matrices $Q \in \mathbb{R}^{N \times d}$, $K \in \mathbb{R}^{N_k \times d}$ and "
              r"$V \in \mathbb{R}^{N_k \times d_v}$ in HBM, on-chip SRAM of $M$ elements")


def value_width(model, dv=None):
    """The width of ``V`` and ``O``: ``dv`` when the caller says (``d_v`` or ``d``; the module-level listings
    say, so that importing them builds no model), else ``d_v`` when ``model`` has that parameter (building it),
    else ``d``.  ``tests/unit/test_listing_lazy.py`` checks that each listing uses ``d_v`` exactly when its
    model has it."""
    if dv is not None:
        if dv is not d and dv is not d_v:
            raise ValueError(f"a listing's value width is d or d_v, got {dv!r}")
        return dv
    return d_v if any(p.name == "d_v" for p in model.params) else d


# ----------------------------------------------------------------------------------- FlashAttention
def fa1(model, causal: bool = False, paper: bool = False) -> Listing:
    """Algorithm 1 of FlashAttention (paper order: key blocks outside)."""
    first = (r"Set block sizes $B_c = \lceil M / 4d \rceil$, $B_r = \min(\lceil M / 4d \rceil, d)$."
             if paper else r"Take block sizes $B_r$, $B_c$ (the model's parameters).")
    inner_lo = I_j + 1 if causal else 1
    body = (
        Line(first),
        Line(r"Initialize $O = {(0)}_{N \times d}$, $\ell = {(0)}_N$, $m = {(-\infty)}_N$ in HBM.",
             writes=N * d + 2 * N),
        Line(r"Divide $Q$ into $T_r$ blocks $Q_1, \ldots, Q_{T_r}$ of $B_r$ rows, and $K$, $V$ into $T_c$ "
             r"blocks $K_1, \ldots, K_{T_c}$ and $V_1, \ldots, V_{T_c}$ of $B_c$ rows."),
        Line(r"Divide $O$ into $T_r$ blocks $O_i$ of $B_r$ rows, and $\ell$, $m$ into $T_r$ blocks "
             r"$\ell_i$, $m_i$ of $B_r$ entries."),
        Loop(j, 1, T_c, (
            Line(r"Load $K_j$, $V_j$ from HBM to on-chip SRAM.", reads=2 * d * w_j),
            Loop(i, inner_lo, T_r, (
                Line(r"Load $Q_i$, $O_i$, $\ell_i$, $m_i$ from HBM to on-chip SRAM.", reads=(2 * d + 2) * h_i),
                Line(r"On chip, compute $S_{ij} = Q_i K_j^T$" + (" (masked)." if causal else ".")),
                Line(r"On chip, compute $\tilde m_{ij} = \operatorname{rowmax}(S_{ij})$, "
                     r"$\tilde P_{ij} = \exp(S_{ij} - \tilde m_{ij})$, "
                     r"$\tilde\ell_{ij} = \operatorname{rowsum}(\tilde P_{ij})$."),
                Line(r"On chip, compute $m_i^{\mathrm{new}} = \max(m_i, \tilde m_{ij})$, "
                     r"$\ell_i^{\mathrm{new}} = e^{m_i - m_i^{\mathrm{new}}} \ell_i "
                     r"+ e^{\tilde m_{ij} - m_i^{\mathrm{new}}} \tilde\ell_{ij}$."),
                Line(r"Write $O_i \gets {\operatorname{diag}(\ell_i^{\mathrm{new}})}^{-1} "
                     r"(\operatorname{diag}(\ell_i) e^{m_i - m_i^{\mathrm{new}}} O_i "
                     r"+ e^{\tilde m_{ij} - m_i^{\mathrm{new}}} \tilde P_{ij} V_j)$ to HBM.", writes=d * h_i),
                Line(r"Write $\ell_i \gets \ell_i^{\mathrm{new}}$, $m_i \gets m_i^{\mathrm{new}}$ to HBM.",
                     writes=2 * h_i),
            ), text=(r"$I_j + 1 \le i \le T_r$ (the blocks the mask leaves)" if causal else "")),
        )),
        Line("$O$", command="Return"),
    )
    what = "FlashAttention forward, Algorithm 1" + (" with a causal mask" if causal else "") + \
        (", the paper's block sizes" if paper else "")
    return Listing(model=model, title=what, source=FA_SOURCE + ", Algorithm 1", require=REQUIRE, body=body,
                   defs=DEFS + (CAUSAL_DEFS[:1] if causal else ()), subs=_PAPER_SUBS if paper else {})


def fa2(model, causal: bool = False, paper: bool = False, dv=None) -> Listing:
    """Algorithm 1 of FlashAttention-2 (query blocks outside); ``V`` and ``O`` ``d_v`` wide where the model
    has that parameter (``dv``: :func:`value_width`)."""
    inner_hi = J_i if causal else T_c
    dv = value_width(model, dv)
    body = (
        Line(r"Divide $Q$ into $T_r$ blocks $Q_1, \ldots, Q_{T_r}$ of $B_r$ rows, and $K$, $V$ into $T_c$ "
             r"blocks $K_1, \ldots, K_{T_c}$ and $V_1, \ldots, V_{T_c}$ of $B_c$ rows."),
        Line(r"Divide the output $O$ into $T_r$ blocks $O_i$ of $B_r$ rows, and the logsumexp $L$ into "
             r"$T_r$ blocks $L_i$ of $B_r$ entries."),
        Loop(i, 1, T_r, (
            Line(r"Load $Q_i$ from HBM to on-chip SRAM.", reads=d * h_i),
            Line(r"On chip, initialize $O_i^{(0)} = (0)$, $\ell_i^{(0)} = (0)$, $m_i^{(0)} = (-\infty)$."),
            Loop(j, 1, inner_hi, (
                Line(r"Load $K_j$, $V_j$ from HBM to on-chip SRAM.", reads=(d + dv) * w_j),
                Line(r"On chip, compute $S_i^{(j)} = Q_i K_j^T$" + (" (masked)." if causal else ".")),
                Line(r"On chip, compute $m_i^{(j)} = \max(m_i^{(j-1)}, \operatorname{rowmax}(S_i^{(j)}))$, "
                     r"$\tilde P_i^{(j)} = \exp(S_i^{(j)} - m_i^{(j)})$, "
                     r"$\ell_i^{(j)} = e^{m_i^{(j-1)} - m_i^{(j)}} \ell_i^{(j-1)} "
                     r"+ \operatorname{rowsum}(\tilde P_i^{(j)})$."),
                Line(r"On chip, compute $O_i^{(j)} = {\operatorname{diag}(e^{m_i^{(j-1)} - m_i^{(j)}})}^{-1} "
                     r"O_i^{(j-1)} + \tilde P_i^{(j)} V_j$."),
            ), text=(r"$1 \le j \le J_i$ (the blocks the mask leaves)" if causal else "")),
            Line(r"On chip, compute $O_i = {\operatorname{diag}(\ell_i^{(T_c)})}^{-1} O_i^{(T_c)}$."),
            Line(r"On chip, compute $L_i = m_i^{(T_c)} + \log(\ell_i^{(T_c)})$."),
            Line(r"Write $O_i$ to HBM as the $i$-th block of $O$.", writes=dv * h_i),
            Line(r"Write $L_i$ to HBM as the $i$-th block of $L$.", writes=h_i),
        )),
        Line(r"the output $O$ and the logsumexp $L$", command="Return"),
    )
    require = (REQUIRE_DV if dv is d_v else REQUIRE) + (r"; block sizes $B_c = \lceil M / 4d \rceil$, $B_r = \min(\lceil M / 4d \rceil, d)$ "
                         r"(FlashAttention, Algorithm 1 line 1)" if paper else r"; block sizes $B_r$, $B_c$")
    what = "FlashAttention-2 forward, Algorithm 1" + (" with a causal mask" if causal else "") + \
        (", the paper's block sizes" if paper else "")
    return Listing(model=model, title=what, source=FA2_SOURCE + ", Algorithm 1", require=require, body=body,
                   defs=DEFS + (CAUSAL_DEFS[1:] if causal else ()), subs=_PAPER_SUBS if paper else {})


# ----------------------------------------------------------------------------------- standard attention
STANDARD_REQUIRE = (r"Matrices $Q \in \mathbb{R}^{N \times d}$ and $K, V \in \mathbb{R}^{N_k \times d}$ in HBM "
                    r"($N_k = N$ in the paper)")


def standard_fwd(model=models.standard_fwd) -> Listing:
    """Algorithm 0 of FlashAttention (Dao et al. 2022, arXiv 2205.14135, Section 2.2): standard attention,
    three kernels, each reading its operands from HBM once and writing its result once (lines 1-3)."""
    body = (
        Line(r"Load $Q$, $K$ by blocks from HBM, compute $S = Q K^T$, write $S$ to HBM.",
             reads=N * d + N_k * d, writes=N * N_k),
        Line(r"Read $S$ from HBM, compute $P = \operatorname{softmax}(S)$, write $P$ to HBM.",
             reads=N * N_k, writes=N * N_k),
        Line(r"Load $P$ and $V$ by blocks from HBM, compute $O = P V$, write $O$ to HBM.",
             reads=N * N_k + N_k * d, writes=N * d),
        Line("$O$", command="Return"),
    )
    return Listing(model=model, title="standard attention forward, Algorithm 0",
                   source=FA_SOURCE + ", Algorithm 0", require=STANDARD_REQUIRE, body=body)


def standard_bwd(model=models.standard_bwd) -> Listing:
    """Algorithm 3 of FlashAttention (Dao et al. 2022, arXiv 2205.14135, Appendix B.4): the standard backward
    pass from ``Q, K, V, dO, P``, five kernels, each reading its operands once and writing its result once
    (lines 1-5)."""
    body = (
        Line(r"Load $P$, $dO$ by blocks from HBM, compute $dV = P^T dO \in \mathbb{R}^{N_k \times d}$, "
             r"write $dV$ to HBM.", reads=N * N_k + N * d, writes=N_k * d),
        Line(r"Load $dO$, $V$ by blocks from HBM, compute $dP = dO\, V^T \in \mathbb{R}^{N \times N_k}$, "
             r"write $dP$ to HBM.", reads=N * d + N_k * d, writes=N * N_k),
        Line(r"Read $P$, $dP$ from HBM, compute $dS \in \mathbb{R}^{N \times N_k}$ where "
             r"$dS_{ij} = P_{ij} (dP_{ij} - \sum_l P_{il}\, dP_{il})$, write $dS$ to HBM.",
             reads=2 * N * N_k, writes=N * N_k),
        Line(r"Load $dS$ and $K$ by blocks from HBM, compute $dQ = dS\, K$, write $dQ$ to HBM.",
             reads=N * N_k + N_k * d, writes=N * d),
        Line(r"Load $dS$ and $Q$ by blocks from HBM, compute $dK = dS^T Q$, write $dK$ to HBM.",
             reads=N * N_k + N * d, writes=N_k * d),
        Line(r"$dQ$, $dK$, $dV$", command="Return"),
    )
    require = (r"Matrices $Q, dO \in \mathbb{R}^{N \times d}$, $K, V \in \mathbb{R}^{N_k \times d}$, "
               r"$P \in \mathbb{R}^{N \times N_k}$ in HBM ($N_k = N$ in the paper)")
    return Listing(model=model, title="standard attention backward, Algorithm 3",
                   source=FA_SOURCE + ", Algorithm 3", require=require, body=body)


# ----------------------------------------------------------------------------------- FlashAttention backward
#: the forward's abbreviations; a query block's rows are those of Q_i, dO_i, dQ_i, L_i, D_i here
BWD_DEFS = tuple((sym, value, r"rows of $Q_i$, $dO_i$, $dQ_i$ (the last block may be partial)" if sym == h_i else what)
                 for sym, value, what in DEFS)


def flash_bwd(model, causal: bool = False, paper: bool = False) -> Listing:
    """Algorithm 2 of FlashAttention-2 (Dao 2023, arXiv 2307.08691): the backward pass, key blocks outside
    (lines 5-19), query blocks inside (lines 8-17); lines numbered as in the paper (1-20).  Line 9 loads
    what the model counts (``Q_i, dO_i, dQ_i, L_i, D_i``; the paper's line 9 also names ``O_i``, unused once
    line 4 has written ``D``), and line 15 writes back the ``dQ_i`` of line 9 (the paper's "load ``dQ_i``"
    there is that same load, counted once)."""
    inner_lo = I_j + 1 if causal else 1
    body = (
        Line(r"Divide $Q$ into $T_r$ blocks $Q_1, \ldots, Q_{T_r}$ of $B_r$ rows, and $K$, $V$ into $T_c$ "
             r"blocks $K_1, \ldots, K_{T_c}$ and $V_1, \ldots, V_{T_c}$ of $B_c$ rows."),
        Line(r"Divide $O$ and $dO$ into $T_r$ blocks $O_i$, $dO_i$ of $B_r$ rows, and $L$ into $T_r$ blocks "
             r"$L_i$ of $B_r$ entries."),
        Line(r"Initialize $dQ = {(0)}_{N \times d}$ in HBM and divide it into $T_r$ blocks $dQ_i$ of $B_r$ rows; "
             r"divide $dK$, $dV$ into $T_c$ blocks $dK_j$, $dV_j$ of $B_c$ rows.", writes=N * d),
        Line(r"Compute $D = \operatorname{rowsum}(dO \circ O) \in \mathbb{R}^N$, write $D$ to HBM and divide it "
             r"into $T_r$ blocks $D_i$ of $B_r$ entries.", reads=2 * N * d, writes=N),
        Loop(j, 1, T_c, (
            Line(r"Load $K_j$, $V_j$ from HBM to on-chip SRAM.", reads=2 * d * w_j),
            Line(r"Initialize $dK_j = (0)$, $dV_j = (0)$ on SRAM."),
            Loop(i, inner_lo, T_r, (
                Line(r"Load $Q_i$, $dO_i$, $dQ_i$, $L_i$, $D_i$ from HBM to on-chip SRAM "
                     r"(not $O_i$: $D_i$ replaces it).", reads=(3 * d + 2) * h_i),
                Line(r"On chip, compute $S_i^{(j)} = Q_i K_j^T$" + (" (masked)." if causal else ".")),
                Line(r"On chip, compute $P_i^{(j)} = \exp(S_i^{(j)} - L_i)$."),
                Line(r"On chip, compute $dV_j \gets dV_j + {(P_i^{(j)})}^T dO_i$."),
                Line(r"On chip, compute $dP_i^{(j)} = dO_i V_j^T$."),
                Line(r"On chip, compute $dS_i^{(j)} = P_i^{(j)} \circ (dP_i^{(j)} - D_i)$."),
                Line(r"On chip, update $dQ_i \gets dQ_i + dS_i^{(j)} K_j$ ($dQ_i$ as loaded at line 9), "
                     r"and write it back to HBM.", writes=d * h_i),
                Line(r"On chip, compute $dK_j \gets dK_j + {(dS_i^{(j)})}^T Q_i$."),
            ), text=(r"$I_j + 1 \le i \le T_r$ (the blocks the mask leaves)" if causal else "")),
            Line(r"Write $dK_j$, $dV_j$ to HBM.", writes=2 * d * w_j),
        )),
        Line(r"$dQ$, $dK$, $dV$", command="Return"),
    )
    require = (r"Matrices $Q, O, dO \in \mathbb{R}^{N \times d}$ and $K, V \in \mathbb{R}^{N_k \times d}$, "
               r"the logsumexp $L \in \mathbb{R}^N$ in HBM")
    require += (r"; block sizes $B_c = \lceil M / 4d \rceil$, $B_r = \min(\lceil M / 4d \rceil, d)$ "
                r"(FlashAttention, Algorithm 4 line 2)" if paper else r"; block sizes $B_r$, $B_c$")
    what = "FlashAttention-2 backward, Algorithm 2" + (" with a causal mask" if causal else "") + \
        (", the paper's block sizes" if paper else "")
    return Listing(model=model, title=what, source=FA2_SOURCE + ", Algorithm 2", require=require, body=body,
                   defs=BWD_DEFS + (CAUSAL_DEFS[:1] if causal else ()), subs=_PAPER_SUBS if paper else {})


FA1_FWD = fa1(models.fa1_fwd)
FA1_FWD_CAUSAL = fa1(models.fa1_fwd_causal, causal=True)
FA1_FWD_PAPER = fa1(models.fa1_fwd_paper, paper=True)
FA2_FWD = fa2(models.fa2_fwd, dv=d_v)
FA2_FWD_CAUSAL = fa2(models.fa2_fwd_causal, causal=True, dv=d_v)
FA2_FWD_PAPER = fa2(models.fa2_fwd_paper, paper=True, dv=d)
STANDARD_FWD = standard_fwd()
STANDARD_BWD = standard_bwd()
FLASH_BWD = flash_bwd(models.flash_bwd)
FLASH_BWD_CAUSAL = flash_bwd(models.flash_bwd_causal, causal=True)
FLASH_BWD_PAPER = flash_bwd(models.flash_bwd_paper, paper=True)
