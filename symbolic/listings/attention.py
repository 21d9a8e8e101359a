r"""FlashAttention's forward loops, line by line as the papers write them, each load and store annotated.

* ``attention.fa1.fwd`` (and ``.causal``, ``.paper``): Dao et al. 2022, *FlashAttention* (arXiv
  2205.14135), Algorithm 1 - outer loop over key blocks ``j``, inner over query blocks ``i``; lines
  numbered as in the paper (1-16).
* ``attention.fa2.fwd`` (and ``.causal``, ``.paper``): Dao 2023, *FlashAttention-2* (arXiv 2307.08691),
  Algorithm 1 - outer loop over query blocks, inner over key blocks; lines 1-17 as in the paper.

The counting conventions are the models' (``docs/conventions.md`` §1): elements moved between HBM and
on-chip memory; a partial last block moves its valid rows only (``h_i``, ``w_j``); ``N_k`` key rows
(``N_k = N`` in the papers).  Under a causal mask a fully masked block is skipped: key block ``j`` is met
by the query blocks after ``I_j`` (query row ``r`` sits at position ``N_k - N + r``), query block ``i``
meets the key blocks up to ``J_i``.
"""

from __future__ import annotations

import sympy as sp

from ..models.attention import FA2_SOURCE, FA_SOURCE, B_c, B_r, N, N_k, d, paper_block_sizes
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


# ----------------------------------------------------------------------------------- FlashAttention
def fa1(model: str, causal: bool = False, paper: bool = False) -> Listing:
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
    return Listing(model, what, FA_SOURCE + ", Algorithm 1", REQUIRE, body,
                   defs=DEFS + (CAUSAL_DEFS[:1] if causal else ()), subs=_PAPER_SUBS if paper else {})


def fa2(model: str, causal: bool = False, paper: bool = False) -> Listing:
    """Algorithm 1 of FlashAttention-2 (query blocks outside)."""
    inner_hi = J_i if causal else T_c
    body = (
        Line(r"Divide $Q$ into $T_r$ blocks $Q_1, \ldots, Q_{T_r}$ of $B_r$ rows, and $K$, $V$ into $T_c$ "
             r"blocks $K_1, \ldots, K_{T_c}$ and $V_1, \ldots, V_{T_c}$ of $B_c$ rows."),
        Line(r"Divide the output $O$ into $T_r$ blocks $O_i$ of $B_r$ rows, and the logsumexp $L$ into "
             r"$T_r$ blocks $L_i$ of $B_r$ entries."),
        Loop(i, 1, T_r, (
            Line(r"Load $Q_i$ from HBM to on-chip SRAM.", reads=d * h_i),
            Line(r"On chip, initialize $O_i^{(0)} = (0)$, $\ell_i^{(0)} = (0)$, $m_i^{(0)} = (-\infty)$."),
            Loop(j, 1, inner_hi, (
                Line(r"Load $K_j$, $V_j$ from HBM to on-chip SRAM.", reads=2 * d * w_j),
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
            Line(r"Write $O_i$ to HBM as the $i$-th block of $O$.", writes=d * h_i),
            Line(r"Write $L_i$ to HBM as the $i$-th block of $L$.", writes=h_i),
        )),
        Line(r"the output $O$ and the logsumexp $L$", command="Return"),
    )
    require = REQUIRE + (r"; block sizes $B_c = \lceil M / 4d \rceil$, $B_r = \min(\lceil M / 4d \rceil, d)$ "
                         r"(FlashAttention, Algorithm 1 line 1)" if paper else r"; block sizes $B_r$, $B_c$")
    what = "FlashAttention-2 forward, Algorithm 1" + (" with a causal mask" if causal else "") + \
        (", the paper's block sizes" if paper else "")
    return Listing(model, what, FA2_SOURCE + ", Algorithm 1", require, body,
                   defs=DEFS + (CAUSAL_DEFS[1:] if causal else ()), subs=_PAPER_SUBS if paper else {})


LISTINGS = (
    fa1("attention.fa1.fwd"),
    fa1("attention.fa1.fwd.causal", causal=True),
    fa1("attention.fa1.fwd.paper", paper=True),
    fa2("attention.fa2.fwd"),
    fa2("attention.fa2.fwd.causal", causal=True),
    fa2("attention.fa2.fwd.paper", paper=True),
)
