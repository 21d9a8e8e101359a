"""MLA decode executor: FlashMLA's dense split-KV kernel, run row group by row group and split by split,
counting every element it loads and stores.

The algorithm (FlashMLA, ``deepseek-ai/FlashMLA`` @ ``9241ae3``: ``csrc/api/dense_decode.h``,
``csrc/sm90/decode/dense/splitkv_mla.cuh``, ``csrc/smxx/decode/combine/combine.cu``; the absorbed form of
DeepSeek-V2, arXiv 2405.04434, §2.1.2-2.1.3):

* **Rows.**  A sequence's ``R = H L_q`` query rows, row ``s H + h`` for head ``h`` at query position ``s``
  (``dense_decode.h:73-77``), each ``W = d_c + d_r`` wide, are cut into row groups of ``B_h`` (the kernel's
  ``BLOCK_SIZE_M = 64``); the last group may be partial.  Every row group walks the same splits
  (``splitkv_mla.cuh:1020``: the schedule does not depend on ``m_block_idx``).
* **Cache.**  One latent of ``W`` values a token, shared by all heads, in pages of ``P`` tokens, found
  through a block table of page ids per sequence (any permutation).  Key block ``j`` holds tokens
  ``[j B_n, min(n, (j+1) B_n))``; it moves its valid tokens and reads the table entry of each page it
  touches once.  The value is the latent's first ``d_c`` columns of the same tile (no second load).
* **Splits.**  A sequence's ``nb = ceil(n / B_n)`` blocks are cut into contiguous non-empty splits:
  ``splits`` gives them (one list of ``(j0, j1)`` block ranges per sequence, e.g. FlashMLA's scheduler's,
  :func:`tuning.mla_splits.flashmla_splits`); by default ``m = min(S, nb)`` even ones, split ``s`` taking
  blocks ``[floor(s nb / m), floor((s+1) nb / m))``.  Per (row group, split) the CTA loads its ``Q`` rows,
  then its blocks; with one split it writes ``O`` and ``LSE``, else FP32 partials ``O_s``, ``LSE_s``.
* **Combine** (a sequence of more than one split; ``combine.cu:39-41`` returns for one): each row reads its
  ``m`` partial ``LSE`` and ``O`` rows, ``LSE = mx + log sum_s exp(LSE_s - mx)``, ``O = sum_s exp(LSE_s - LSE)
  O_s``, and writes ``O`` and ``LSE``.
* **FP8** (``fp8=True``; FlashMLA's 656-byte token, ``README.md`` "FP8 KV Cache", ``tests/quant.py:35-53``):
  the NoPE part is stored as ``float8_e4m3`` codes with one FP32 scale per 128 codes, the RoPE part as it
  is.  The scale of a group is ``2^ceil(log2(max(amax / 448, 1e-4)))`` (``tests/quant.py:17-18, 44-45``: a
  power of two), the code ``e4m3(x / scale)`` (:func:`e4m3`: round to nearest, ties to even, 3 mantissa
  bits, subnormals below ``2^-6``), and a load dequantizes ``code x scale`` - exact in float64, so real
  mode equals plain attention over :func:`dequantize_fp8` of the same cache.

Two modes, one loop:

* real mode (``real=True``): float64 data (random from ``seed`` unless given); ``O`` equals
  ``softmax(Q C^T scale) C[:, :d_c]`` per head (``C`` the latents, dequantized for FP8; ``scale =
  1/sqrt(W)`` by default, ``flash_mla_interface.py:112-113``) for ragged batches and any block table.  Each
  split gathers its tokens once from their pages; each row group then loads that tile (counted once a row
  group, as each CTA loads it) and computes its scores in one product.  The table entries it counts are
  the pages of its blocks, enumerated.
* count-only mode (``real=False``, the default): the same loop over (sequence, row group, split) on
  sizes; a split's table entries by telescoping its blocks' page spans (:func:`split_pages`), so nothing
  is enumerated per block and ``N_k = 10**30`` costs what ``N_k = 10**3`` does.  Python ints only.

Counts are exact Python ints in elements per tensor class; bytes use each class's element size from
:mod:`base.dtypes`.  Work is refused up front with :class:`~base.errors.BadInput` naming a parameter: the
(row group, split) segments (``max_segments``; ``B`` when the batch's ``B x ceil(H L_q / B_h)`` segments,
one split a sequence at least, exceed it: checked before the batch's lengths are listed) and, in real mode,
the elements held (``max_elements``).

This module imports only :mod:`base`, :mod:`numeric` and NumPy: it is the independent side of
``verify/checks/mla.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from .decode import _compact, _lengths, _pages

__all__ = ["MLARun", "run_mla", "even_splits", "split_pages", "e4m3", "quantize_fp8", "dequantize_fp8",
           "CLASSES", "SCALE_GROUP", "E4M3_MAX", "MAX_ELEMENTS", "MAX_SEGMENTS"]

#: real mode: at most this many elements held (the latents of the batch plus one split's scores)
MAX_ELEMENTS = 1 << 27
#: either mode: at most this many (sequence, row group, split) segments
MAX_SEGMENTS = 1 << 22
#: one FP32 scale per 128 FP8 codes (FlashMLA README, "FP8 KV Cache")
SCALE_GROUP = 128
#: the largest finite float8_e4m3fn value (OCP FP8 spec; the 448.0 of tests/quant.py:44)
E4M3_MAX = 448.0

#: the counted tensor classes and their element types; "nope" is BF16, or FP8 codes in an FP8 cache
CLASSES = {"reads_Q": "bf16", "reads_KV_nope": "bf16", "reads_KV_scale": "fp32", "reads_KV_rope": "bf16",
           "reads_table": "int32", "reads_O_s": "fp32", "reads_LSE_s": "fp32", "writes_O_s": "fp32",
           "writes_LSE_s": "fp32", "writes_O": "bf16", "writes_LSE": "fp32"}


@dataclass
class MLARun:
    """One run: elements per tensor class, FLOPs (useful and as whole tiles), the tile tokens, the
    segments, and in real mode ``O`` ``(B, L_q, H, d_c)`` and ``LSE`` ``(B, H, L_q)``."""

    elements: dict
    flops: int
    flops_tiles: int
    tokens_tiles: int
    segments: int
    fp8: bool
    O: Optional[np.ndarray] = None
    LSE: Optional[np.ndarray] = None
    splits: tuple = field(default_factory=tuple)

    def bytes_of(self, quantity: str) -> int:
        kind = "fp8" if (self.fp8 and quantity == "reads_KV_nope") else CLASSES[quantity]
        return element_bytes(kind) * self.elements[quantity]

    def counts(self) -> dict:
        """Every quantity of the ``decode.mla*`` models, measured."""
        el = self.elements
        reads = sum(v for k, v in el.items() if k.startswith("reads_"))
        writes = sum(v for k, v in el.items() if k.startswith("writes_"))
        b_read = sum(self.bytes_of(k) for k in el if k.startswith("reads_"))
        b_written = sum(self.bytes_of(k) for k in el if k.startswith("writes_"))
        return {"reads": reads, "writes": writes, "flops": self.flops, **el,
                "bytes_KV": sum(self.bytes_of(k) for k in el if k.startswith("reads_KV_")),
                "bytes_Q": self.bytes_of("reads_Q"), "bytes_read": b_read, "bytes_written": b_written,
                "bytes": b_read + b_written, "flops_tiles": self.flops_tiles, "tokens_tiles": self.tokens_tiles,
                "segments": self.segments}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


# ------------------------------------------------------------------------------------------ splits
def even_splits(nb: int, S: int) -> list:
    """``min(S, nb)`` contiguous non-empty splits of ``nb`` blocks, as even as can be: split ``s`` of ``m``
    takes blocks ``[floor(s nb / m), floor((s+1) nb / m))`` (no split is empty since ``m <= nb``)."""
    m = min(S, nb)
    return [(s * nb // m, (s + 1) * nb // m) for s in range(m)]


def _splits(splits, lens: list, B_n: int, S: int) -> list:
    if splits is None:
        return [even_splits(_ceil(n, B_n), S) for n in lens]
    if isinstance(splits, (str, bytes)) or not hasattr(splits, "__len__") or len(splits) != len(lens):
        raise BadInput("splits", f"one list of (j0, j1) block ranges per sequence ({len(lens)}), got {splits!r:.80}")
    out = []
    for b, (lst, n) in enumerate(zip(splits, lens)):
        nb = _ceil(n, B_n)
        try:
            ranges = [(validate.integer("splits", j0, least=0), validate.integer("splits", j1, least=0))
                      for j0, j1 in lst]
        except (TypeError, ValueError):
            raise BadInput("splits", f"sequence {b}: a list of (j0, j1) block ranges, got {lst!r:.80}") from None
        at = 0
        for j0, j1 in ranges:
            if j0 != at or j1 <= j0:
                raise BadInput("splits", f"sequence {b}: the splits must cut its {nb} key blocks into contiguous "
                                         f"non-empty ranges from 0, got {ranges!r:.120}")
            at = j1
        if at != nb:
            raise BadInput("splits", f"sequence {b}: the splits cover {at} of its {nb} key blocks "
                                     f"(ceil({n}/{B_n})); they must cover all")
        out.append(ranges)
    return out


def split_pages(n: int, B_n: int, P: int, j0: int, j1: int) -> int:
    """Table entries blocks ``j0 .. j1-1`` of a sequence of ``n`` tokens read: each block the pages it
    touches, summed by telescoping.  Block ``j`` spans pages ``floor(j B_n / P) .. floor((e_j - 1) / P)``,
    ``e_j = min(n, (j+1) B_n)``; consecutive blocks meet at ``b = j B_n``, and the page before ``b`` and the
    one after it are the same page unless ``P`` divides ``b``, so the sum is the blocks, plus the pages
    from the first start to the last end, less the inner boundaries ``j B_n`` (``j0 < j < j1``) that ``P``
    divides - those ``j`` that ``P / gcd(P, B_n)`` divides."""
    period = P // math.gcd(P, B_n)
    inner = (j1 - 1) // period - j0 // period
    return (j1 - j0) + (min(n, j1 * B_n) - 1) // P - (j0 * B_n) // P - inner


# ------------------------------------------------------------------------------------------ FP8
def e4m3(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to the nearest ``float8_e4m3fn`` value, ties to even (the OCP FP8 E4M3 format: 3
    mantissa bits, exponent bias 7, subnormals in steps of ``2^-9`` below ``2^-6``), as float64.
    ``|x| <= 448`` (the format's largest value) is required: the scales make it so."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    if a.size and a.max() > E4M3_MAX:
        raise ValueError(f"e4m3: |x| = {a.max()} beyond {E4M3_MAX}: the caller's scale is too small")
    _, e = np.frexp(a)                                   # a = m 2^e, 0.5 <= m < 1: the leading bit is 2^(e-1)
    step = np.ldexp(1.0, np.maximum(e - 1, -6) - 3)      # 3 mantissa bits below the leading one (or 2^-9)
    return np.copysign(np.rint(a / step) * step, x)      # rint: round half to even


def quantize_fp8(latent: np.ndarray, d_c: int):
    """``(codes, scales, rope)`` of FlashMLA's FP8 cache for latents ``(..., d_c + d_r)``: per token and group
    of 128 NoPE values, ``scale = 2^ceil(log2(max(amax / 448, 1e-4)))`` and ``codes = e4m3(x / scale)``
    (``tests/quant.py:17-18, 43-50``); the RoPE columns unchanged (``:41``)."""
    lat = np.asarray(latent, dtype=np.float64)
    groups = d_c // SCALE_GROUP
    nope = lat[..., :d_c].reshape(lat.shape[:-1] + (groups, SCALE_GROUP))
    inv = np.maximum(np.abs(nope).max(axis=-1) / E4M3_MAX, 1e-4)
    scales = np.exp2(np.ceil(np.log2(inv)))
    codes = e4m3(nope / scales[..., None]).reshape(lat.shape[:-1] + (d_c,))
    return codes, scales, lat[..., d_c:].copy()


def dequantize_fp8(codes: np.ndarray, scales: np.ndarray, rope: np.ndarray) -> np.ndarray:
    """The latents a load of the FP8 cache gives: ``codes x scale`` (each scale over its 128 codes), then
    the RoPE columns."""
    d_c = codes.shape[-1]
    nope = codes.reshape(codes.shape[:-1] + (d_c // SCALE_GROUP, SCALE_GROUP)) * scales[..., None]
    return np.concatenate([nope.reshape(codes.shape), rope], axis=-1)


# ------------------------------------------------------------------------------------------ the run
def run_mla(B: int, H: int, L_q: int, N_k, d_c: int, d_r: int, B_h: int, B_n: int, S: int, P: int, *,
            fp8: bool = False, lengths=None, pages=None, splits=None, real: bool = False, q=None, kv=None,
            scale=None, seed: int = 0, max_elements: int = MAX_ELEMENTS,
            max_segments: int = MAX_SEGMENTS) -> MLARun:
    """Run MLA decode (module docstring) and count its traffic.

    ``lengths`` (one token count per sequence) makes a ragged batch (``N_k`` its longest, or ``None``);
    ``pages`` is the block table, one list of page ids per sequence (default: a random permutation);
    ``splits`` one list of ``(j0, j1)`` block ranges per sequence (default: ``min(S, nb)`` even splits).
    Real mode takes ``q`` ``(B, L_q, H, d_c + d_r)`` (FlashMLA's layout) and ``kv``, a page pool
    ``(num_pages, P, d_c + d_r)`` of latents (quantized here for ``fp8``); missing ones are random normal
    from ``seed``."""
    B, H, L_q = (validate.positive_int(n, x) for n, x in (("B", B), ("H", H), ("L_q", L_q)))
    d_c, d_r, B_h = (validate.positive_int(n, x) for n, x in (("d_c", d_c), ("d_r", d_r), ("B_h", B_h)))
    B_n, S, P = (validate.positive_int(n, x) for n, x in (("B_n", B_n), ("S", S), ("P", P)))
    fp8, real = validate.flag("fp8", fp8), validate.flag("real", real)
    if fp8 and d_c % SCALE_GROUP:
        raise BadInput("d_c", f"the FP8 cache quantizes the NoPE part in groups of {SCALE_GROUP} (one FP32 scale "
                              f"each), so d_c must be a multiple of {SCALE_GROUP}, got {d_c}")
    max_elements = validate.positive_int("max_elements", max_elements)
    max_segments = validate.positive_int("max_segments", max_segments)
    seed = validate.seed("seed", seed)
    R, W = H * L_q, d_c + d_r
    G = _ceil(R, B_h)
    # every sequence is one split at least: refuse a batch over the budget before its lengths are listed
    validate.budget("B", B * G, max_segments, f"(sequence, row group) segments at least (B x {G:,} row groups)",
                    "max_segments", "take a smaller batch")
    lens = _lengths(B, N_k, lengths)

    # ---- budgets, before any work (the number of splits first: no list of 10**30 splits is built)
    segments = G * sum(min(S, _ceil(n, B_n)) if splits is None else
                       (len(lst) if hasattr(lst, "__len__") else 1)
                       for n, lst in zip(lens, splits if splits is not None else [None] * B))
    validate.budget("S", segments, max_segments, "(sequence, row group, split) segments", "max_segments",
                    "take fewer splits")
    if real:
        held = sum(lens) * W + max(lens) * R
        validate.budget("N_k", held, max_elements, "elements held in real mode (the latents and one split's "
                        "scores)", "max_elements", "use real=False (count-only)")
    cuts = _splits(splits, lens, B_n, S)
    # the page ids do not change a count: count-only mode builds no table unless one is given to check
    table = _pages(pages, lens, P, seed) if (real or pages is not None) else None

    if real:
        if kv is None:
            table = _compact(table)       # a random pool holds the listed pages only
        q, pool = _arrays(B, L_q, H, W, P, table, q, kv, seed)
        if fp8:
            pool = dequantize_fp8(*quantize_fp8(pool, d_c))
        scale = 1.0 / math.sqrt(W) if scale is None else float(validate.real("scale", scale))
        O = np.empty((B, R, d_c))
        LSE = np.empty((B, R))

    el = {k: 0 for k in CLASSES}
    if not fp8:
        del el["reads_KV_scale"]
    flops = flops_tiles = tokens_tiles = 0
    for b, n in enumerate(lens):
        ranges = cuts[b]
        m = len(ranges)
        part_o, part_l = ([], []) if real and m > 1 else (None, None)
        for j0, j1 in ranges:
            t0, t1 = j0 * B_n, min(n, j1 * B_n)
            if real:
                lat = _gather(pool, table[b], P, t0, t1)          # the split's valid tokens, from their pages
                starts = np.arange(j0, j1, dtype=np.int64) * B_n
                spans = (np.minimum(starts + B_n, n) - 1) // P - starts // P + 1
                entries = int(spans.sum())
                o_s, l_s = np.empty((R, d_c)), np.empty(R)
            else:
                entries = split_pages(n, B_n, P, j0, j1)
            tokens = t1 - t0
            for g in range(G):
                r0, r1 = g * B_h, min(R, (g + 1) * B_h)
                rows = r1 - r0
                if real:
                    qg = q[b, r0:r1]
                    el["reads_Q"] += qg.size
                    el["reads_KV_nope"] += lat[:, :d_c].size
                    el["reads_KV_rope"] += lat[:, d_c:].size
                    if fp8:
                        el["reads_KV_scale"] += lat.shape[0] * (d_c // SCALE_GROUP)
                    sc = (qg @ lat.T) * scale
                    mx = sc.max(axis=1)
                    p = np.exp(sc - mx[:, None])
                    l_ = p.sum(axis=1)
                    o_s[r0:r1] = (p @ lat[:, :d_c]) / l_[:, None]
                    l_s[r0:r1] = mx + np.log(l_)
                    flops += 2 * qg.shape[0] * lat.shape[0] * W + 2 * p.shape[0] * lat.shape[0] * d_c
                else:
                    el["reads_Q"] += rows * W
                    el["reads_KV_nope"] += tokens * d_c
                    el["reads_KV_rope"] += tokens * d_r
                    if fp8:
                        el["reads_KV_scale"] += tokens * (d_c // SCALE_GROUP)
                    flops += 2 * rows * tokens * (W + d_c)
                el["reads_table"] += entries
                tokens_tiles += (j1 - j0) * B_n
                flops_tiles += 2 * B_h * (j1 - j0) * B_n * (W + d_c)
                if m == 1:
                    el["writes_O"] += rows * d_c
                    el["writes_LSE"] += rows
                else:
                    el["writes_O_s"] += rows * d_c
                    el["writes_LSE_s"] += rows
            if real:
                if m == 1:
                    O[b], LSE[b] = o_s, l_s
                else:
                    part_o.append(o_s)
                    part_l.append(l_s)
        if m > 1:                                   # the combine: every row reads its m partials
            el["reads_O_s"] += R * m * d_c
            el["reads_LSE_s"] += R * m
            if real:
                ls = np.stack(part_l)
                mx = ls.max(axis=0)
                w = np.exp(ls - mx)
                tot = w.sum(axis=0)
                LSE[b] = mx + np.log(tot)
                O[b] = np.einsum("sr,srv->rv", w / tot, np.stack(part_o))
            el["writes_O"] += R * d_c
            el["writes_LSE"] += R
    out_o = out_l = None
    if real:
        out_o = O.reshape(B, L_q, H, d_c)
        out_l = LSE.reshape(B, L_q, H).transpose(0, 2, 1).copy()
    return MLARun(el, flops, flops_tiles, tokens_tiles, segments, fp8, out_o, out_l, tuple(map(tuple, cuts)))


def _arrays(B, L_q, H, W, P, table, q, kv, seed):
    """``q`` as the kernel's rows ``(B, R, W)`` and the page pool ``(num_pages, P, W)``, random if not given."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, L_q, H, W)) if q is None else np.asarray(validate.real_array("q", q))
    if q.shape != (B, L_q, H, W):
        raise BadInput("q", f"shape {q.shape}, expected (B, L_q, H, d_c + d_r) = {(B, L_q, H, W)}")
    pool = 1 + max((p for lst in table for p in lst), default=0)
    kv = rng.standard_normal((pool, P, W)) if kv is None else np.asarray(validate.real_array("kv", kv))
    if kv.ndim != 3 or kv.shape[0] < pool or kv.shape[1:] != (P, W):
        raise BadInput("kv", f"page pool of shape {kv.shape}, expected (num_pages >= {pool}, P, d_c + d_r) = "
                             f"(>= {pool}, {P}, {W})")
    return q.reshape(B, L_q * H, W), kv


def _gather(pool, ids, P, t0, t1):
    """Tokens ``t0 .. t1-1`` of a sequence whose pages are ``ids``: a view of the pool when those pages are
    consecutive in it (the same values; NumPy's fancy indexing would copy them), else a gather."""
    p0, p1 = t0 // P, (t1 - 1) // P + 1
    run = ids[p0:p1]
    if run[-1] - run[0] == p1 - p0 - 1 and all(b - a == 1 for a, b in zip(run, run[1:])):
        pages = pool[run[0]:run[-1] + 1]
    else:
        pages = pool[run]
    return pages.reshape(-1, pool.shape[2])[t0 - p0 * P:t1 - p0 * P]
