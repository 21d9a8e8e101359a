r"""Split-KV decoding over a sliding window, the split kernel and the combine kernel, each load and store annotated.

* ``decode.packed.window``: the packed grid of ``decode.packed`` (one CTA per sequence, KV head and split, the
  ``g L_q`` rows of the ``g`` heads sharing the KV head) with FlashAttention-2's split rule under a window;
* ``decode.unpacked.window``: one CTA per query head - FA2's own grid under a window (``flash_api.cpp:1319``).

The algorithm is :mod:`symbolic.listings.decode`'s, with the window of :mod:`symbolic.models.decode_window`
(FA2 ``flash_fwd_kernel.h:535-585`` at commit ``0251105a``): the new queries sit at positions ``N_k - L_q ..
N_k - 1`` and see ``W_l`` keys to their left, so a CTA visits the key blocks from ``j_min = floor(max(0, N_k -
L_q - W_l) / B_n)`` (0-based) to the last.  The splits are cut from all ``n_b`` blocks as ``decode.packed``
cuts them, ``n_bps = ceil(n_b / S)`` a split, and clipped to the window: the splits ``1 .. s_0`` (``s_0 =
floor(j_min / n_bps)``) lie wholly before it and exit early, writing their partials only; splits ``s_0 + 1 ..
S_ne`` load ``Q`` and the valid keys of their blocks in the window, ``kappa_s = min(s n_bps B_n, N_k) -
max((s - 1) n_bps B_n, j_min B_n)``; the splits after ``S_ne = ceil(n_b / n_bps)`` are empty too.  As in
:mod:`symbolic.listings.decode` a split's key blocks are one line (its ``kappa_s (d + d_v)`` elements), and the
``S = 1`` store stands after the split loop; the empty splits before and after the window are one line, their
``S - S_ne + s_0`` partial stores (so that the algorithm float fits one page of the notes).

The lines sum to the models' closed forms only through the clipped first split (a ``max`` inside the sum over
splits), which the listings' partition rule does not collapse: like the other masked listings (``.window``,
``.causal``), the lines, the formula and the executor are compared point by point by the
``<model>.listing`` property of ``python -m verify``.  Not listed: ``decode.packed.window.fa3`` (FA3's rule cuts
the window's blocks themselves; its lines would sum symbolically only through the identity ``ceil(ceil(x)/n)
= ceil(x/n)`` over a window-dependent count, a second ``subs`` this file does not carry).
"""

from __future__ import annotations

import sympy as sp

from ..models.decode import B, B_n, H, H_kv, L_q, N_k, S, SplitLaunch, d, d_v
from ..models.decode_window import W_l, decode_packed_window, decode_unpacked_window
from . import Line, Listing, Loop, abbreviation, index
from .decode import grid

bh, s, r = index("bh"), index("s"), index("r")
n_b, n_bps, S_ne = abbreviation("n_b"), abbreviation("n_bps"), abbreviation("S_ne")
g = abbreviation("g")
# these two may be 0 (a window reaching key 0): abbreviations, but not positive ones
j_min, s_0 = sp.Symbol("j_min", integer=True, nonnegative=True), sp.Symbol("s_0", integer=True, nonnegative=True)
kappa_s = abbreviation("kappa_s")

split = SplitLaunch(S)      # [S > 1]: partials and a combine kernel

DEFS = (
    (n_b, sp.ceiling(N_k / B_n), "key blocks"),
    (n_bps, sp.ceiling(n_b / S), "a split"),
    (S_ne, sp.ceiling(n_b / n_bps), "the last split with blocks"),
    (j_min, sp.floor(sp.Max(0, N_k - L_q - W_l) / B_n), "the window's first block (from 0)"),
    (s_0, sp.floor(j_min / n_bps), "splits before it"),
    (g, H / H_kv, "heads a KV head"),
    (kappa_s, sp.Min(s * n_bps * B_n, N_k) - sp.Max((s - 1) * n_bps * B_n, j_min * B_n),
     "keys of split $s$ in the window's blocks"),
)

SOURCE = "Flash-Decoding (Dao et al. 2023); FlashAttention-2 src/flash_fwd_kernel.h:535-585, 795, 944-987, 1117-1299"


def split_kv_window(model, packed: bool) -> Listing:
    """The listing of ``model``: the split kernel over (sequence, head group, split), the combine over the rows."""
    rows, groups, batch_rows, group_text, q_text, kv_head = grid(packed, g)
    split_body = (
        Line(q_text, reads=rows * d),
        Line(r"Load $K_j$, $V_j$" + kv_head + r", the valid rows of its blocks in the window; on chip, the "
             r"masked online softmax.", reads=(d + d_v) * kappa_s),
        Line(r"On chip, $O \gets {\operatorname{diag}(\ell)}^{-1} O$, $\mathrm{LSE} \gets m + \log \ell$; if "
             r"$S > 1$, write the partials $O_s$, $\mathrm{LSE}_s$ (FP32) to HBM.", writes=split * rows * (d_v + 1)),
    )
    splits = (
        Loop(s, s_0 + 1, S_ne, split_body,
             text=r"each split $s_0 < s \le S_{ne}$ with blocks in the window (a CTA each, in parallel)"),
        Line(r"If $S = 1$, the CTA of the one split writes $O$ and $\mathrm{LSE}$ to HBM: no partials, no combine.",
             writes=(1 - split) * rows * (d_v + 1)),
        # the splits before the window (1 .. s_0) and after the last block (S_ne + 1 .. S): one line for both
        Line(r"Each empty split ($s \le s_0$ or $s > S_{ne}$) writes $O_s \gets (0)$, $\mathrm{LSE}_s \gets "
             r"(-\infty)$ (FP32).",
             writes=split * rows * (d_v + 1) * (S - S_ne + s_0)),
    )
    combine = Loop(r, 1, split * batch_rows, (
        Line(r"Load $\mathrm{LSE}_s$ of row $r$, $1 \le s \le S$ (FP32), from HBM; on chip, "
             r"$\mathrm{LSE} = m + \log \sum_s e^{\mathrm{LSE}_s - m}$, $m = \max_s \mathrm{LSE}_s$.", reads=S),
        Line(r"Write $\mathrm{LSE}$ of row $r$ to HBM.", writes=1),
        Loop(s, 1, S, (
            Line(r"Load row $r$ of $O_s$ (FP32) from HBM; on chip, "
                 r"$O_r \gets O_r + e^{\mathrm{LSE}_s - \mathrm{LSE}} O_s$.", reads=d_v),
        ), text=r"each split $1 \le s \le S$"),
        Line(r"Write $O_r$ to HBM.", writes=d_v),
    ), text=r"the combine kernel, only when $S > 1$: each query row $1 \le r \le B H L_q$ "
            r"(CTAs of 4 rows, in parallel)")
    body = (
        Loop(bh, 1, groups, splits, text=group_text),
        combine,
        Line(r"$O$ and $\mathrm{LSE}$", command="Return"),
    )
    title = ("split-KV decoding over a sliding window, GQA packed: one CTA per KV head and split" if packed else
             "split-KV decoding over a sliding window, unpacked: one CTA per query head and split")
    require = (r"$Q$, $K$, $V$ in HBM: $B$ sequences, $H$ query heads, $H_{kv}$ KV heads; $L_q$ new queries at "
               r"$N_k - L_q \ldots N_k - 1$ seeing $W_l$ keys to their left; key blocks of $B_n$, $S$ splits")
    return Listing(model=model, title=title, source=SOURCE, require=require, body=body, defs=DEFS)


PACKED_WINDOW = split_kv_window(decode_packed_window, packed=True)
UNPACKED_WINDOW = split_kv_window(decode_unpacked_window, packed=False)
