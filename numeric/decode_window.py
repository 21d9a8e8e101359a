"""Split-KV decode over a sliding window: runs it CTA by CTA and counts every element it loads and stores.

The kernel of :mod:`numeric.decode` (one CTA per (sequence, head group, split), FP32 partials, the combine
kernel), with a left window ``W_l`` as FlashAttention runs it (``csrc/flash_attn/src/flash_fwd_kernel.h:
535-585`` and ``mask.h:172-173`` of FA2, ``hopper/block.h:35-55`` of FA3, commit ``0251105a``):

* **Positions and the mask.**  The ``L_q`` new queries of a sequence of ``N_k`` keys sit at positions
  ``N_k - L_q + i`` (so ``L_q <= N_k``); the query at ``p`` sees the keys ``j`` with ``p - W_l <= j <= p``
  (FA2's ``window_size = (W_l, 0)``).
* **The blocks a CTA visits.**  The CTA takes the earliest key any of its rows sees and the latest,
  ``lo`` and ``hi``, and visits the key blocks ``lo // B_n .. ceil((hi + 1) / B_n) - 1`` (FA2's
  ``n_block_min``/``n_block_max`` at ``flash_fwd_kernel.h:536-542``), each loaded whole: its valid rows.
* **Splits** (``split_rule``).  ``"fa2"``: split ``s`` of ``S`` owns blocks ``[s nbps, (s + 1) nbps)`` of
  the whole cache, ``nbps = ceil(ceil(N_k / B_n) / S)`` (``:535``), clipped to the visited blocks.
  ``"fa3"``: the visited blocks themselves are cut into ``S`` splits of ``ceil(visited / S)``
  (``block.h:52-54``).  A split left with no block exits early and writes its partials ``0`` and
  ``-inf`` (``flash_fwd_kernel.h:544-585``); one with blocks loads its ``Q`` rows, then the ``K`` and
  ``V`` rows of its blocks.
* **Grid.**  ``packed``: the ``g = H / H_kv`` query heads of a KV head are one CTA's rows (``g L_q``);
  unpacked: one query head a CTA, ``L_q`` rows (FA2's own grid under a window, ``flash_api.cpp:1319``).

Two modes, one loop:

* real mode (``real=True``): float64 data (random from ``seed`` unless given, through
  :func:`numeric.decode.decode_arrays`); each split scores its rows against its keys (one matrix product
  per CTA), masks the keys outside each row's window (a row that sees none of the split's keys gets
  ``O_s = 0``, ``LSE_s = -inf``, as FA2's ``Check_inf`` softmax leaves it), and the combine weighs the
  splits by their ``LSE``: ``O`` is the windowed attention.
* count-only mode (the default): the same loop on shapes.  The visited blocks (only those) are
  enumerated once, their valid rows prefix-summed; positions and tallies are Python ints, so ``N_k =
  10**30`` counts exactly.

Counts are exact Python ints per tensor class (:data:`numeric.decode.CLASSES` less the block table);
work is refused up front with :class:`~base.errors.BadInput` naming a parameter: CTAs (``max_ctas``),
visited blocks (``max_blocks``) and real mode's ``K``, ``V`` elements (``max_elements``).

This module imports only :mod:`base`, :mod:`numeric` and NumPy: it is the independent side of
``verify/checks/decode_window.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from .decode import MAX_BLOCKS, MAX_CTAS, MAX_ELEMENTS, DecodeRun, decode_arrays
from .memory import Phantom

__all__ = ["WindowRun", "run_decode_window", "visited_blocks", "split_ranges", "SPLIT_RULES"]

SPLIT_RULES = ("fa2", "fa3")


@dataclass
class WindowRun(DecodeRun):
    """A :class:`~numeric.decode.DecodeRun` plus what the window decided for one head group of one
    sequence (every group of this batch visits the same keys): ``keys_visited`` keys read over its
    splits and ``splits_loading`` splits that held blocks."""

    keys_visited: int = 0
    splits_loading: int = 0

    def counts(self) -> dict:
        return {**super().counts(), "keys_visited": self.keys_visited, "splits_loading": self.splits_loading}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def visited_blocks(positions, W_l: int, B_n: int) -> tuple:
    """``(j_lo, j_hi)``: the key blocks ``j_lo .. j_hi - 1`` a CTA whose rows sit at ``positions`` visits,
    from the earliest key any row sees to the latest (module docstring)."""
    lo = max(0, min(positions) - W_l)
    hi = max(positions)
    return lo // B_n, _ceil(hi + 1, B_n)


def split_ranges(j_lo: int, j_hi: int, nb: int, S: int, rule: str) -> list:
    """Each split's key blocks ``[j0, j1)`` (empty when ``j0 >= j1``) under ``rule`` (module docstring)."""
    if rule == "fa2":
        per = _ceil(nb, S)
        return [(max(s * per, j_lo), min(nb, (s + 1) * per, j_hi)) for s in range(S)]
    per = _ceil(j_hi - j_lo, S)
    return [(j_lo + s * per, min(j_lo + (s + 1) * per, j_hi)) for s in range(S)]


def _rows_cum(j_lo: int, j_hi: int, n: int, B_n: int):
    """Prefix sums of the valid rows of blocks ``j_lo .. j_hi - 1`` (index ``j - j_lo``)."""
    if n + B_n < 2 ** 62:
        starts = np.arange(j_lo, j_hi, dtype=np.int64) * B_n
        valid = np.minimum(starts + B_n, n) - starts
        return [0] + [int(x) for x in np.cumsum(valid)]
    return [0] + list(accumulate(min(B_n, n - j * B_n) for j in range(j_lo, j_hi)))


def run_decode_window(B: int, H: int, H_kv: int, L_q: int, N_k, d: int, d_v: int, B_n: int, S: int, W_l: int, *,
                      packed: bool = True, split_rule: str = "fa2", real: bool = False, q=None, k=None, v=None,
                      seed: int = 0, dtype: str = "fp16", max_elements: int = MAX_ELEMENTS,
                      max_ctas: int = MAX_CTAS, max_blocks: int = MAX_BLOCKS) -> WindowRun:
    """Run split-KV decoding over a left window of ``W_l`` keys (module docstring) and count its traffic.
    Real mode takes ``q`` ``(B, H, L_q, d)``, ``k`` ``(B, H_kv, N_k, d)``, ``v`` ``(B, H_kv, N_k, d_v)``
    (or one ``(H_kv, N_k, width)`` array per sequence); missing arrays are random normal from ``seed``."""
    B, H, H_kv, L_q = (validate.positive_int(n, x) for n, x in (("B", B), ("H", H), ("H_kv", H_kv), ("L_q", L_q)))
    N_k, d, d_v, B_n, S = (validate.positive_int(n, x) for n, x in
                           (("N_k", N_k), ("d", d), ("d_v", d_v), ("B_n", B_n), ("S", S)))
    W_l = validate.integer("W_l", W_l, least=0)
    if H % H_kv:
        raise BadInput("H_kv", f"must divide H (g = H/H_kv query heads share a KV head), got H={H}, H_kv={H_kv}")
    if L_q > N_k:
        raise BadInput("L_q", f"the {L_q} new tokens sit at positions N_k - L_q .. N_k - 1, so L_q <= N_k = {N_k}")
    if split_rule not in SPLIT_RULES:
        raise BadInput("split_rule", f"one of {', '.join(SPLIT_RULES)}, got {split_rule!r}")
    packed, real = validate.flag("packed", packed), validate.flag("real", real)
    element_bytes(dtype)
    max_elements, max_ctas, max_blocks = (validate.positive_int(n, x) for n, x in
                                          (("max_elements", max_elements), ("max_ctas", max_ctas),
                                           ("max_blocks", max_blocks)))
    seed = validate.seed("seed", seed)
    g = H // H_kv
    G = H_kv if packed else H
    nb = _ceil(N_k, B_n)
    # the new queries sit at positions N_k - L_q .. N_k - 1: the first and the last decide the visited blocks
    # (every CTA holds all L_q tokens of its heads), so no list of L_q positions is built before the budgets
    j_lo, j_hi = visited_blocks((N_k - L_q, N_k - 1), W_l, B_n)

    # ---- budgets, before any work
    ctas = B * G * S
    if ctas > max_ctas:
        name, remedy = ("B", "take a smaller batch") if B > max_ctas else ("S", "take fewer splits")
        raise BadInput(name, f"B x {'H_kv' if packed else 'H'} x S = {ctas:,} CTAs exceed the budget of {max_ctas:,} "
                             f"(max_ctas); {remedy} or raise max_ctas")
    if j_hi - j_lo > max_blocks:
        raise BadInput("B_n", f"{j_hi - j_lo:,} visited key blocks exceed the budget of {max_blocks:,} (max_blocks); "
                              f"take a larger B_n or raise max_blocks")
    if real and B * N_k * H_kv * (d + d_v) > max_elements:
        raise BadInput("N_k", f"real mode would hold {B * N_k * H_kv * (d + d_v):,} K and V elements, over the "
                              f"budget of {max_elements:,} (max_elements); use real=False (count-only) or raise it")

    ranges = split_ranges(j_lo, j_hi, nb, S, split_rule)
    rows_cum = _rows_cum(j_lo, j_hi, N_k, B_n)
    if real:                                           # within max_elements: L_q <= N_k
        tokens = [N_k - L_q + i for i in range(L_q)]  # the new queries' positions
        q, k, v = decode_arrays(B, H, H_kv, L_q, d, d_v, None, [N_k] * B, None, q, k, v, seed)
        O = np.empty((B, H, L_q, d_v))
        LSE = np.empty((B, H, L_q))
        O_s = np.empty((S, B, H, L_q, d_v)) if S > 1 else None
        LSE_s = np.empty((S, B, H, L_q)) if S > 1 else None
        scale = 1.0 / np.sqrt(d)
    else:
        O, LSE = Phantom((B, H, L_q, d_v)), Phantom((B, H, L_q))

    el = {name: 0 for name in ("reads_Q", "reads_K", "reads_V", "reads_O_s", "reads_LSE_s", "writes_O_s",
                               "writes_LSE_s", "writes_O", "writes_LSE")}
    flops = 0
    group_keys, group_splits = [], []
    for b in range(B):
        for grp in range(G):
            heads = slice(grp * g, (grp + 1) * g) if packed else slice(grp, grp + 1)
            kv = grp if packed else grp // g
            nh = heads.stop - heads.start
            R = nh * L_q
            if real:                                   # row r = (head, token): token r % L_q
                pos = np.tile(np.array(tokens, dtype=np.int64), nh)[:, None]
            keys_here = splits_here = 0
            for s, (j0, j1) in enumerate(ranges):
                if j0 >= j1:                           # empty split: exits early, writes 0 and -inf
                    el["writes_O_s"] += R * d_v
                    el["writes_LSE_s"] += R
                    if real:
                        O_s[s, b, heads] = 0.0
                        LSE_s[s, b, heads] = -np.inf
                    continue
                splits_here += 1
                if real:
                    t0, t1 = j0 * B_n, min(N_k, j1 * B_n)
                    qr = q[b, heads].reshape(R, d)
                    ks, vs = k[b][kv, t0:t1], v[b][kv, t0:t1]
                    el["reads_Q"] += qr.size
                    el["reads_K"] += ks.size
                    el["reads_V"] += vs.size
                    keys = ks.shape[0]
                    sc = (qr @ ks.T) * scale
                    j = np.arange(t0, t1)[None, :]
                    sc = np.where((j >= pos - W_l) & (j <= pos), sc, -np.inf)
                    m = sc.max(axis=1)
                    seen = np.isfinite(m)
                    p = np.exp(sc - np.where(seen, m, 0.0)[:, None])
                    l_ = p.sum(axis=1)
                    o = (p @ vs) / np.where(seen, l_, 1.0)[:, None]
                    lse = np.where(seen, m + np.log(np.where(seen, l_, 1.0)), -np.inf)
                    flops += 2 * R * keys * d + 2 * R * vs.shape[0] * d_v
                else:
                    keys = rows_cum[j1 - j_lo] - rows_cum[j0 - j_lo]     # the valid rows of its blocks
                    el["reads_Q"] += R * d
                    el["reads_K"] += keys * d
                    el["reads_V"] += keys * d_v
                    flops += 2 * R * keys * (d + d_v)
                keys_here += keys
                if S == 1:
                    el["writes_O"] += R * d_v
                    el["writes_LSE"] += R
                    if real:
                        O[b, heads] = o.reshape(nh, L_q, d_v)
                        LSE[b, heads] = lse.reshape(nh, L_q)
                else:
                    el["writes_O_s"] += R * d_v
                    el["writes_LSE_s"] += R
                    if real:
                        O_s[s, b, heads] = o.reshape(nh, L_q, d_v)
                        LSE_s[s, b, heads] = lse.reshape(nh, L_q)
            group_keys.append(keys_here)
            group_splits.append(splits_here)
    if S > 1:                                          # the combine kernel: every row reads its S partials
        src_o, src_l = (O_s, LSE_s) if real else (Phantom((S, B, H, L_q, d_v)), Phantom((S, B, H, L_q)))
        el["reads_O_s"] += src_o.size
        el["reads_LSE_s"] += src_l.size
        if real:
            m = LSE_s.max(axis=0)                      # finite: a row's own key lies in some split
            w = np.exp(LSE_s - m)
            tot = w.sum(axis=0)
            LSE[...] = m + np.log(tot)
            O[...] = np.einsum("sbhl,sbhlv->bhlv", w / tot, O_s)
        el["writes_O"] += O.size
        el["writes_LSE"] += LSE.size
    return WindowRun(el, flops, ctas, dtype, O if real else None, LSE if real else None, (N_k,) * B,
                     keys_visited=group_keys[0], splits_loading=group_splits[0])
