r"""Local attention as FlashAttention-2 writes its loops (Dao 2023, arXiv 2307.08691, Algorithms 1 and 2), with the
key-block range a sliding window or a chunk leaves, each load and store annotated.

* ``attention.fa2.fwd.window``, ``attention.fa2.fwd.chunked`` (and ``attention.fa3.fwd.window`` at FA3's tiles):
  Algorithm 1, outer loop over query blocks ``i``; the inner loop runs over the key blocks ``lo_i .. hi_i`` the
  block's rows see (the visible keys of its first row that sees any, to those of its last row); a block that
  sees no key loads nothing and writes zeros (FlashAttention-3, ``hopper/flash_fwd_kernel_sm90.h`` lines 446-449).
* ``attention.flash.bwd.window``, ``attention.flash.bwd.chunked``: Algorithm 2, outer loop over key blocks ``j``,
  inner over the query blocks ``lo_j .. hi_j`` that see the block's keys; ``K_j, V_j`` are loaded only by a key
  block some row sees, ``dK_j, dV_j`` written by every one (``hopper/flash_bwd_kernel_sm90.h`` lines 262-272).
* ``attention.fa3.fwd``, ``attention.fa3.fwd.causal``: FlashAttention-2's forward listing
  (:func:`symbolic.listings.attention.fa2`) at the tiles of ``tile_size_fwd_sm90``.

The counting conventions are the models' (:mod:`symbolic.models.attention_local`): query row ``r`` sits at
position ``N_k - N + r``; a partial last block moves its valid rows only (``h_i``, ``w_j``).  Indices are
1-based as in the papers.  The lines' sums are finite sums over the blocks (the models' closed forms are their
floor sums), so ``verify`` checks them by running the loops: ``<model>.listing`` over the model's sweep.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..models.attention import FA2_SOURCE, B_c, B_r, N, N_k, d, d_v
from ..models import attention_local as local
from ..models.attention_local import FA3_SOURCE, C, W_l, W_r, fa3_tile_nodes
from . import Line, Listing, Loop, abbreviation, index
from .attention import DEFS, fa2, value_width

i, j = index("i"), index("j")
T_r, T_c = abbreviation("T_r"), abbreviation("T_c")
h_i, w_j = abbreviation("h_i"), abbreviation("w_j")
lo_i, hi_i, v_i = abbreviation("lo_i"), abbreviation("hi_i"), abbreviation("v_i")
lo_j, hi_j, v_j = abbreviation("lo_j"), abbreviation("hi_j"), abbreviation("v_j")

_D = N_k - N
_P0 = _D + (i - 1) * B_r                     # position of query block i's first row
_P1 = _D + sp.Min(i * B_r, N) - 1            # ... and of its last
_K0 = (j - 1) * B_c                          # key block j's first key
_K1 = sp.Min(j * B_c, N_k) - 1               # ... and its last

#: forward: the key blocks query block i sees (1-based), and whether it sees any
FWD_RANGE = {
    "window": ((lo_i, sp.Max(1, sp.floor((_P0 - W_l) / B_c) + 1), "first key block query block $i$ sees"),
               (hi_i, sp.Min(T_c, sp.floor((_P1 + W_r) / B_c) + 1), "its last ($< 1$: it sees none)")),
    "chunk": ((lo_i, sp.floor(C * sp.floor(sp.Max(0, _P0) / C) / B_c) + 1,
               "first key block query block $i$ sees (its first row's chunk)"),
              (hi_i, sp.floor(_P1 / B_c) + 1, "its last ($< 1$: it sees none)")),
}
#: backward: the query blocks that see key block j (1-based)
BWD_RANGE = {
    "window": ((lo_j, sp.Max(1, sp.floor((_K0 - W_r - _D) / B_r) + 1), "first query block seeing key block $j$"),
               (hi_j, sp.Min(T_r, sp.floor((_K1 + W_l - _D) / B_r) + 1), "its last ($< 1$: none)")),
    "chunk": ((lo_j, sp.floor(sp.Max(0, _K0 - _D) / B_r) + 1, "first query block seeing key block $j$"),
              (hi_j, sp.Min(T_r, sp.floor((C * sp.floor(_K1 / C) + C - 1 - _D) / B_r) + 1), "its last ($< 1$: none)")),
}

_MASK_TEXT = {"window": r"key $k$ visible from position $p$ iff $p - W_l \le k \le p + W_r$",
              "chunk": r"key $k$ visible from position $p$ iff $\lfloor k / C \rfloor = \lfloor p / C \rfloor$ "
                       r"and $k \le p$"}


def window_fwd(model, mask: str = "window", subs=None, source: str = FA2_SOURCE + ", Algorithm 1",
               dv=None) -> Listing:
    """Algorithm 1 of FlashAttention-2 with a local mask: query blocks outside, the key blocks they see inside."""
    (lo, lo_v, lo_m), (hi, hi_v, hi_m) = FWD_RANGE[mask]
    dv = value_width(model, dv)              # V and O are d_v wide where the model says so
    body = (
        Line(r"Divide $Q$ into $T_r$ blocks $Q_1, \ldots, Q_{T_r}$ of $B_r$ rows, and $K$, $V$ into $T_c$ "
             r"blocks $K_1, \ldots, K_{T_c}$ and $V_1, \ldots, V_{T_c}$ of $B_c$ rows."),
        Line(r"Divide the output $O$ into $T_r$ blocks $O_i$ of $B_r$ rows, and the logsumexp $L$ into "
             r"$T_r$ blocks $L_i$ of $B_r$ entries."),
        Loop(i, 1, T_r, (
            Line(r"Load $Q_i$ from HBM to on-chip SRAM, if the block sees any key ($v_i = 1$).", reads=d * h_i * v_i),
            Line(r"On chip, initialize $O_i^{(0)} = (0)$, $\ell_i^{(0)} = (0)$, $m_i^{(0)} = (-\infty)$."),
            Loop(j, lo_i, hi_i, (
                Line(r"Load $K_j$, $V_j$ from HBM to on-chip SRAM.", reads=(d + dv) * w_j),
                Line(r"On chip, compute $S_i^{(j)} = Q_i K_j^T$ (masked)."),
                Line(r"On chip, compute $m_i^{(j)} = \max(m_i^{(j-1)}, \operatorname{rowmax}(S_i^{(j)}))$, "
                     r"$\tilde P_i^{(j)} = \exp(S_i^{(j)} - m_i^{(j)})$, "
                     r"$\ell_i^{(j)} = e^{m_i^{(j-1)} - m_i^{(j)}} \ell_i^{(j-1)} "
                     r"+ \operatorname{rowsum}(\tilde P_i^{(j)})$."),
                Line(r"On chip, compute $O_i^{(j)} = {\operatorname{diag}(e^{m_i^{(j-1)} - m_i^{(j)}})}^{-1} "
                     r"O_i^{(j-1)} + \tilde P_i^{(j)} V_j$."),
            ), text=r"$lo_i \le j \le hi_i$ (the key blocks the mask leaves)"),
            Line(r"On chip, compute $O_i = {\operatorname{diag}(\ell_i)}^{-1} O_i$ and "
                 r"$L_i = m_i + \log(\ell_i)$ (a block that saw no key: $O_i = 0$, $L_i = -\infty$)."),
            Line(r"Write $O_i$ to HBM as the $i$-th block of $O$.", writes=dv * h_i),
            Line(r"Write $L_i$ to HBM as the $i$-th block of $L$.", writes=h_i),
        )),
        Line(r"the output $O$ and the logsumexp $L$", command="Return"),
    )
    shapes = (r"Matrices $Q \in \mathbb{R}^{N \times d}$, $K \in \mathbb{R}^{N_k \times d}$ and $V \in "
              r"\mathbb{R}^{N_k \times d_v}$ in HBM, " if dv is not d else
              r"Matrices $Q \in \mathbb{R}^{N \times d}$ and $K, V \in \mathbb{R}^{N_k \times d}$ in HBM, ")
    require = (shapes + _MASK_TEXT[mask] + r" (query row $r$ at position $N_k - N + r$); block sizes $B_r$, $B_c$")
    defs = DEFS + ((lo, lo_v, lo_m), (hi, hi_v, hi_m),
                   (v_i, sp.Min(1, sp.Max(0, hi_i - lo_i + 1)), "1 if query block $i$ sees any key, else 0"))
    what = "FlashAttention-2 forward, Algorithm 1, " + ("sliding window" if mask == "window" else "chunked")
    return Listing(model, what, source, require, body, defs=defs, subs=dict(subs or {}))


def window_bwd(model, mask: str = "window") -> Listing:
    """Algorithm 2 of FlashAttention-2 with a local mask: key blocks outside, the query blocks that see them inside."""
    (lo, lo_v, lo_m), (hi, hi_v, hi_m) = BWD_RANGE[mask]
    body = (
        Line(r"Divide $Q$, $O$, $dO$, $L$ into $T_r$ blocks of $B_r$ rows, and $K$, $V$ into $T_c$ blocks of "
             r"$B_c$ rows."),
        Line(r"Initialize $dQ = {(0)}_{N \times d}$ in HBM and divide it into $T_r$ blocks $dQ_i$ of $B_r$ rows; "
             r"divide $dK$, $dV$ into $T_c$ blocks $dK_j$, $dV_j$ of $B_c$ rows.", writes=N * d),
        Line(r"Compute $D = \operatorname{rowsum}(dO \circ O) \in \mathbb{R}^N$, write $D$ to HBM and divide it "
             r"into $T_r$ blocks $D_i$ of $B_r$ entries.", reads=2 * N * d, writes=N),
        Loop(j, 1, T_c, (
            Line(r"Load $K_j$, $V_j$ from HBM to on-chip SRAM if some query row sees the block ($v_j = 1$); "
                 r"initialize $dK_j = (0)$, $dV_j = (0)$ on SRAM.", reads=2 * d * w_j * v_j),
            Loop(i, lo_j, hi_j, (
                Line(r"Load $Q_i$, $dO_i$, $dQ_i$, $L_i$, $D_i$ from HBM to on-chip SRAM.", reads=(3 * d + 2) * h_i),
                Line(r"On chip, compute $S_i^{(j)} = Q_i K_j^T$ (masked), $P_i^{(j)} = \exp(S_i^{(j)} - L_i)$."),
                Line(r"On chip, compute $dV_j \gets dV_j + {(P_i^{(j)})}^T dO_i$, $dP_i^{(j)} = dO_i V_j^T$, "
                     r"$dS_i^{(j)} = P_i^{(j)} \circ (dP_i^{(j)} - D_i)$."),
                Line(r"On chip, update $dQ_i \gets dQ_i + dS_i^{(j)} K_j$, and write it back to HBM.", writes=d * h_i),
                Line(r"On chip, compute $dK_j \gets dK_j + {(dS_i^{(j)})}^T Q_i$."),
            ), text=r"$lo_j \le i \le hi_j$ (the query blocks the mask leaves)"),
            Line(r"Write $dK_j$, $dV_j$ to HBM (zeros for a block no row sees).", writes=2 * d * w_j),
        )),
        Line(r"$dQ$, $dK$, $dV$", command="Return"),
    )
    require = (r"$Q, O, dO \in \mathbb{R}^{N \times d}$, $K, V \in \mathbb{R}^{N_k \times d}$, $L \in \mathbb{R}^N$ "
               r"in HBM; " + _MASK_TEXT[mask])
    defs = DEFS + ((lo, lo_v, lo_m), (hi, hi_v, hi_m),
                   (v_j, sp.Min(1, sp.Max(0, hi_j - lo_j + 1)), "1 if any does, else 0"))
    what = "FlashAttention-2 backward, Algorithm 2, " + ("sliding window" if mask == "window" else "chunked")
    return Listing(model, what, FA2_SOURCE + ", Algorithm 2", require, body, defs=defs)


_FA3 = FA3_SOURCE + ", hopper/tile_size.h:10-54; FlashAttention-2's Algorithm 1 at those tiles"

LISTINGS = (
    window_fwd(local.fa2_fwd_window, dv=d_v),
    window_fwd(local.fa2_fwd_chunked, mask="chunk", dv=d),
    window_bwd(local.flash_bwd_window),
    window_bwd(local.flash_bwd_chunked, mask="chunk"),
    window_fwd(local.fa3_fwd_window, subs=fa3_tile_nodes("window"), source=_FA3, dv=d_v),
    replace(fa2(local.fa3_fwd, dv=d_v), subs=fa3_tile_nodes("full"), source=_FA3,
            title="FlashAttention-3 forward at tile_size_fwd_sm90's tiles"),
    replace(fa2(local.fa3_fwd_causal, causal=True, dv=d_v), subs=fa3_tile_nodes("causal"), source=_FA3,
            title="FlashAttention-3 forward at tile_size_fwd_sm90's tiles, causal"),
)
