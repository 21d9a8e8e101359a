r"""Split-KV decoding ("flash-decoding"), the split kernel and the combine kernel, each load and store annotated.

* ``decode.packed``: FlashAttention-2's decode path - one CTA per (sequence, KV head, split) holding the
  ``g L_q`` query rows of the ``g = H / H_kv`` heads that share the KV head (``flash_api.cpp:429-437``).
* ``decode.unpacked``: vLLM's grid ``(num_heads, num_seqs, max_num_partitions)`` - one CTA per (sequence,
  query head, split), ``L_q`` rows, reading KV head ``ceil(h / g)`` (``csrc/attention/attention_kernels.cu``,
  ``paged_attention_kernel``), split as FlashAttention-2 splits.

The algorithm is Dao, Haziza, Massa, Sizov 2023, *Flash-Decoding for long-context inference*, as
FlashAttention-2's split kernel and combine kernel run it, with the line references the models cite
(:mod:`symbolic.models.decode`): the keys are cut into ``n_b = ceil(N_k / B_n)`` key blocks and the blocks
into ``S`` splits of ``n_bps = ceil(n_b / S)`` blocks, split ``s`` taking blocks ``(s - 1) n_bps + 1 ..
min(n_b, s n_bps)`` (``flash_fwd_kernel.h:535-539``).  The first ``S_ne = ceil(n_b / n_bps)`` splits hold
blocks: each loads its ``Q`` rows (``:795``), then the valid ``K`` and ``V`` rows of its blocks (the main
loop ``:944-987``; a masked load moves the valid rows only, ``docs/conventions.md`` §1.7).  A split
without blocks exits before loading anything but writes its partials, ``O_s = 0`` and ``LSE_s = -inf``
(``:543-585``).  With ``S > 1`` every split writes ``O_s`` and ``LSE_s`` in FP32 (``flash_api.cpp:
337-339``) and the combine kernel (``flash_fwd_kernel.h:1117-1299``) reads, for every query row, the ``S``
values ``LSE_s``, writes the final ``LSE``, then loads one ``O_s`` row per split (``:1252-1270``) and writes
``O``; with ``S = 1`` there is one split (``S_ne = 1``), no partial and no combine: its CTA writes ``O``
and ``LSE`` itself.  The lines carry the Iverson bracket ``[S > 1]`` (the models' ``SplitLaunch``); the
``S = 1`` store stands after the split loop, which then ran once, so that it sums to ``(1 - [S > 1]) B H
L_q (d_v + 1)`` as the models write it, not to ``S_ne`` times that (equal, but only because ``S = 1``
forces ``S_ne = 1``, which SymPy does not know).  The CTAs run in parallel; the listing writes them as
loops (one over the (sequence, head group) pairs, one over the splits), which is what the counts sum over.

Split ``s`` holds ``kappa_s = min(n_bps B_n, N_k - (s - 1) n_bps B_n)`` keys in ``c_s = ceil(kappa_s / B_n)``
blocks; the splits partition the ``N_k`` keys, so the lines collapse to the models' closed forms.  For that
the listing's ``subs`` carries one identity, ``ceil(N_k / (B_n n_bps)) = ceil(ceil(N_k / B_n) / n_bps)``
(for positive integers ``ceil(ceil(x) / n) = ceil(x / n)``): the split loop's bound is written as the
models write ``S_ne``, and the partition of the keys into splits of ``n_bps B_n`` keys ends at the same
split.  Both sides are the same integer at every point, so the loop-running count is unchanged
(``tests/unit/test_listings_gemv_decode.py`` checks the identity by enumeration).

**One line for a split's key blocks.**  A CTA loads its ``c_s`` key blocks one after another (FA2's main
loop); the listing writes that loop as one line of the split, moving the valid ``K`` and ``V`` rows of all
its blocks, ``kappa_s (d + d_v)`` elements (a partial last block moves its valid keys only).  A loop over
the blocks would have to be run block by block by the ``<model>.listing`` property
(:meth:`symbolic.listings.Listing.count` runs every loop), and the decode checks' sweep includes
``N_k = 10**9`` with ``B_n = 1024``: 976,563 key blocks for each of 8 (packed) or 32 (unpacked) head
groups, about 0.1 ms a block in the listing's counter - minutes to an hour for one point.  Where one
step writes a tensor and its ``LSE``, one line stores both: the algorithm float, with its table of per-line
totals, must fit one landscape page of the notes.

Not listed: the paged models (``decode.packed.paged``, ``decode.unpacked.paged``).  Their block-table
line - key block ``j`` reads the entries of the ``floor((min(N_k, j B_n) - 1) / P) - floor((j - 1) B_n /
P) + 1`` pages it touches, a split the sum of these over its blocks - is a line the listings could run,
but its sum over the blocks and splits reaches the models' ``ceil(N_k / P) + (n_b - 1) - floor((n_b - 1)
gcd(P, B_n) / P)`` only by telescoping and counting the multiples of ``P / gcd(P, B_n)``, a floor-sum
argument the listing machinery does not make (it collapses partitions): the lines would sum to an
unevaluated ``Sum``, not to the models' formula, which every listing without a causal mask must equal
(``tests/unit/test_latex_listings.py``).
"""

from __future__ import annotations

import sympy as sp

from ..models.decode import B, B_n, H, H_kv, L_q, N_k, S, SplitLaunch, d, d_v, decode_packed, decode_unpacked
from . import Line, Listing, Loop, abbreviation, index

bh, s, r = index("bh"), index("s"), index("r")
n_b, n_bps, S_ne = abbreviation("n_b"), abbreviation("n_bps"), abbreviation("S_ne")
g = abbreviation("g")
kappa_s, c_s = abbreviation("kappa_s"), abbreviation("c_s")

split = SplitLaunch(S)      # [S > 1]: partials and a combine kernel

_NB = sp.ceiling(N_k / B_n)
_NBPS = sp.ceiling(_NB / S)

DEFS = (
    (n_b, _NB, "key blocks"),
    (n_bps, sp.ceiling(n_b / S), "key blocks a split"),
    (S_ne, sp.ceiling(n_b / n_bps), "splits that hold key blocks"),
    (g, H / H_kv, "query heads a KV head"),
    (kappa_s, sp.Min(n_bps * B_n, N_k - (s - 1) * n_bps * B_n), "keys of split $s$"),
    (c_s, sp.ceiling(kappa_s / B_n), "key blocks of split $s$"),
)

#: ceil(N_k / (B_n n_bps)) = ceil(n_b / n_bps): for positive integers ceil(ceil(x) / n) = ceil(x / n)
#: (module docstring); both sides with the abbreviations written out
SUBS = {sp.ceiling(N_k / (B_n * _NBPS)): sp.ceiling(_NB / _NBPS)}

SOURCE = ("Dao, Haziza, Massa, Sizov 2023, Flash-Decoding; FlashAttention-2 src/flash_fwd_kernel.h:535-585 "
          "(splits), 795 (Q), 944-987 (key blocks), 1117-1299 (combine), csrc/flash_attn/flash_api.cpp:337-339")


def grid(packed: bool, g) -> tuple:
    """The split kernel's grid in the listing's terms (``g`` the listing's heads-a-KV-head symbol):
    ``(rows, groups, batch_rows, group_text, q_text, kv_head)``: the query rows of one CTA, the (sequence,
    head group) pairs, ``B H L_q``, and the texts of the group loop, the Q load and the KV head a CTA reads.
    Shared by the contiguous and the windowed listings."""
    rows = g * L_q if packed else L_q
    groups = B * H_kv if packed else B * H
    batch_rows = B * H_kv * g * L_q if packed else B * H * L_q
    if packed:
        return (rows, groups, batch_rows, r"each sequence $b$ and KV head $h$, $B H_{kv}$ pairs (in parallel)",
                r"Load $Q_{bh}$, the $g L_q$ query rows of the $g$ heads of KV head $h$, from HBM.", "")
    return (rows, groups, batch_rows, r"each sequence $b$ and query head $h$, $B H$ pairs (in parallel)",
            r"Load $Q_{bh}$, the $L_q$ query rows of head $h$, from HBM.", r" of KV head $\lceil h / g \rceil$")


def split_kv(model, packed: bool) -> Listing:
    """The listing of ``model`` (its ModelRef): the split kernel over (sequence, head group, split) and the
    combine kernel over the query rows."""
    rows, groups, batch_rows, group_text, q_text, kv_head = grid(packed, g)
    split_body = (
        Line(q_text, reads=rows * d),
        Line(r"Load $K_j$, $V_j$" + kv_head + r", the valid rows of its $c_s$ key blocks $j$ in turn; on chip, "
             r"the online softmax.", reads=(d + d_v) * kappa_s),
        Line(r"On chip, $O \gets {\operatorname{diag}(\ell)}^{-1} O$, $\mathrm{LSE} \gets m + \log \ell$; if "
             r"$S > 1$, write the partials $O_s$, $\mathrm{LSE}_s$ (FP32) to HBM.", writes=split * rows * (d_v + 1)),
    )
    splits = (
        Loop(s, 1, S_ne, split_body,
             text=r"each split $1 \le s \le S_{ne}$ that holds key blocks (a CTA each, in parallel)"),
        # S = 1: the one split's CTA (s = 1 above) writes O and LSE itself (module docstring)
        Line(r"If $S = 1$, the CTA of the one split writes $O$ and $\mathrm{LSE}$ to HBM: no partials, no combine.",
             writes=(1 - split) * rows * (d_v + 1)),
        Loop(s, S_ne + 1, S, (
            Line(r"Write $O_s \gets (0)$, $\mathrm{LSE}_s \gets (-\infty)$ (FP32) to HBM.",
                 writes=split * rows * (d_v + 1)),
        ), text=r"each empty split $S_{ne} < s \le S$ (its CTA exits before loading; only when $S > 1$)"),
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
    if packed:
        title = "split-KV decoding, GQA packed: one CTA per KV head and split"
        source = SOURCE + ", 429-437"
    else:
        title = "split-KV decoding, unpacked: one CTA per query head and split"
        source = SOURCE + "; vLLM csrc/attention/attention_kernels.cu (the grid)"
    require = (r"$Q$, $K$, $V$ in HBM: $B$ sequences, $H$ query heads, $H_{kv}$ KV heads, $L_q$ query rows "
               r"and $N_k$ keys a sequence; key blocks of $B_n$ keys, $S$ splits")
    return Listing(model=model, title=title, source=source, require=require, body=body, defs=DEFS, subs=SUBS)


PACKED = split_kv(decode_packed, packed=True)
UNPACKED = split_kv(decode_unpacked, packed=False)
