"""Split-KV decode executor: runs flash-decoding CTA by CTA and counts every element it loads and stores.

The algorithm (Dao, Haziza, Massa, Sizov 2023, "Flash-Decoding for long-context inference"; the CTA
structure of FlashAttention-2, ``csrc/flash_attn/src/flash_fwd_kernel.h:506-1113`` and its combine kernel
``:1117-1299``; its loop over the splits ``:1252-1270``):

* **Grid.**  One CTA per (sequence, head group, split).  *Packed* (FA2's decode path, ``flash_api.cpp:
  429-437``): a head group is one KV head and the ``g = H / H_kv`` query heads that share it, so the
  CTA holds ``g L_q`` query rows.  *Unpacked* (vLLM's ``paged_attention_kernel``, grid ``(num_heads,
  num_seqs, partitions)``): a head group is one query head, ``L_q`` rows, reading KV head ``h // g``.
* **Splits.**  A sequence of ``n`` keys has ``nb = ceil(n / B_n)`` key blocks; split ``s`` of ``S`` takes
  blocks ``[s nbps, min(nb, (s + 1) nbps))``, ``nbps = ceil(nb / S)`` (``flash_fwd_kernel.h:535-539``),
  each sequence by its own length.  A split with no block exits early and writes only its partials,
  ``O_s = 0`` and ``LSE_s = -inf`` (``:543-585``).  A split with blocks loads its ``Q`` rows, then for
  each of its key blocks the valid ``K`` and ``V`` rows (a partial last block moves only its valid
  rows), and - paged - the block-table entries of the pages the block touches (FA2 looks the page up
  per key block, ``:949-957``, ``:977-981``).
* **Outputs.**  ``S = 1``: the CTA writes ``O`` and ``LSE``.  ``S > 1``: it writes ``O_s`` (``d_v`` per
  row) and ``LSE_s`` (one per row), FP32; the combine reads all ``S`` partials of each row, computes
  ``LSE = m + log sum_s exp(LSE_s - m)`` with ``m = max_s LSE_s`` and ``O = sum_s exp(LSE_s - LSE) O_s``,
  and writes ``O`` and ``LSE``.
* **Paged KV.**  A pool of pages of ``P`` tokens, laid out ``(num_pages, P, H_kv, d)`` as FA2's paged
  cache (``flash_api.cpp:647``), and a block table: one list of physical page ids per sequence (any
  permutation; a list may be longer than the sequence needs, as vLLM pads its tables).

Two modes, one loop:

* real mode (``real=True``): float64 data (random from ``seed`` unless given); the output equals
  ``softmax(Q K^T / sqrt(d)) V`` per head, for every ``S`` (``S > nb`` included).  Each split computes its
  scores for all its keys at once (one matrix product per CTA: the same values the kernel's per-block
  online softmax reaches); the counts are the sizes of the arrays it loads and stores.
* count-only mode (``real=False``, the default): the same loop on shapes; the key blocks of each
  sequence are enumerated once with NumPy (their valid rows and page spans) and each CTA sums its own
  blocks.  Nothing is allocated per element, so ``N_k = 10**9`` is fine.

Counts are exact Python ints, in elements per tensor class; bytes use each class's element size from
:mod:`base.dtypes` (``Q, K, V, O`` in the input type, FP16 by default; partials and ``LSE`` FP32; the
table int32).  Work is refused up front with :class:`~base.errors.BadInput` naming a parameter: CTAs
(``max_ctas``; ``B`` when the batch alone exceeds it, checked before the batch's lengths are listed),
enumerated key blocks (``max_blocks``), and in real mode the ``K, V`` elements held (``max_elements``).
Count-only mode draws no block table (the page ids change no count): a given one is checked.

This module imports only :mod:`base`, :mod:`numeric.memory` and NumPy: it is the independent side of
``verify/checks/decode.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from .memory import Phantom

__all__ = ["DecodeRun", "run_decode", "decode_arrays", "default_pages", "CLASSES", "PARTIAL_DTYPE", "TABLE_DTYPE",
           "MAX_ELEMENTS", "MAX_CTAS", "MAX_BLOCKS"]

#: real mode: at most this many K and V elements held (float64: 1 GiB)
MAX_ELEMENTS = 1 << 27
#: either mode: at most this many CTAs (sequences x head groups x splits)
MAX_CTAS = 1 << 22
#: either mode: at most this many key blocks enumerated (over the sequences)
MAX_BLOCKS = 1 << 24

#: the counted tensor classes: (quantity, element type); "input" is the run's dtype (Q, K, V, O)
CLASSES = (("reads_Q", "input"), ("reads_K", "input"), ("reads_V", "input"), ("reads_table", "table"),
           ("reads_O_s", "partial"), ("reads_LSE_s", "partial"), ("writes_O_s", "partial"),
           ("writes_LSE_s", "partial"), ("writes_O", "input"), ("writes_LSE", "partial"))
#: FlashAttention-2 allocates the split partials and LSE in FP32 (flash_api.cpp:338-339)
PARTIAL_DTYPE = "fp32"
#: the block table is int32 (flash_api.cpp:591: "block_table must have dtype torch.int32")
TABLE_DTYPE = "int32"


@dataclass
class DecodeRun:
    """One run: elements per tensor class, FLOPs, CTAs launched and, in real mode, ``O`` and ``LSE``."""

    elements: dict
    flops: int
    ctas: int
    dtype: str = "fp16"
    O: Optional[np.ndarray] = None          # (B, H, L_q, d_v)
    LSE: Optional[np.ndarray] = None        # (B, H, L_q)
    lengths: tuple = field(default_factory=tuple)

    def bytes_of(self, quantity: str) -> int:
        kind = dict(CLASSES)[quantity]
        size = element_bytes(self.dtype if kind == "input" else TABLE_DTYPE if kind == "table" else PARTIAL_DTYPE)
        return size * self.elements[quantity]

    def counts(self) -> dict:
        """Every quantity of the ``decode.*`` models, measured: totals, per class, bytes, FLOPs, CTAs."""
        reads = sum(v for k, v in self.elements.items() if k.startswith("reads_"))
        writes = sum(v for k, v in self.elements.items() if k.startswith("writes_"))
        b_read = sum(self.bytes_of(k) for k in self.elements if k.startswith("reads_"))
        b_written = sum(self.bytes_of(k) for k in self.elements if k.startswith("writes_"))
        return {"reads": reads, "writes": writes, "flops": self.flops, **self.elements,
                "bytes_read": b_read, "bytes_written": b_written, "bytes": b_read + b_written, "ctas": self.ctas}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _lengths(B: int, N_k, lengths) -> list:
    if lengths is None:
        return [validate.positive_int("N_k", N_k)] * B
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__"):
        raise BadInput("lengths", f"one key count per sequence, got {lengths!r}")
    if len(lengths) != B:
        raise BadInput("lengths", f"{len(lengths)} lengths for a batch of B={B} sequences; give one per sequence")
    out = [validate.positive_int("lengths", n) for n in lengths]
    if N_k is not None and validate.positive_int("N_k", N_k) != max(out):
        raise BadInput("N_k", f"is the batch's longest sequence, {max(out)} here, got {N_k}")
    return out


def default_pages(lengths: Sequence[int], P: int, seed: int = 0, *, max_pages: int = MAX_ELEMENTS) -> list:
    """A block table: each sequence's ``ceil(n / P)`` pages, drawn as one random permutation of the pool
    ``0 .. sum - 1`` (so consecutive tokens live on scattered pages).  More than ``max_pages`` pages are
    refused up front, naming ``lengths`` (NumPy would draw an empty permutation of ``2**63 - 1`` silently)."""
    P = validate.positive_int("P", P)
    need = [_ceil(validate.positive_int("lengths", n), P) for n in lengths]
    validate.budget("lengths", sum(need), max_pages, f"pages to draw (ceil(n / P) over the sequences, P={P:,})",
                    "max_pages", "take larger pages")
    perm = np.random.default_rng(validate.seed("seed", seed)).permutation(sum(need))
    out, at = [], 0
    for k in need:
        out.append([int(x) for x in perm[at:at + k]])
        at += k
    return out


def _pages(pages, lengths: list, P: int, seed: int) -> list:
    if pages is None:
        return default_pages(lengths, P, seed)
    if isinstance(pages, (str, bytes)) or not hasattr(pages, "__len__") or len(pages) != len(lengths):
        raise BadInput("pages", f"one page list per sequence ({len(lengths)}), got {pages!r:.80}")
    out, seen = [], {}
    for b, (lst, n) in enumerate(zip(pages, lengths)):
        if isinstance(lst, (str, bytes)) or not hasattr(lst, "__len__"):
            raise BadInput("pages", f"sequence {b}: a list of page ids, got {lst!r:.80}")
        ids = [validate.integer("pages", p, least=0) for p in lst]
        need = _ceil(n, P)
        if len(ids) < need:
            raise BadInput("pages", f"sequence {b} lists {len(ids)} pages for {n} tokens; pages of P={P} tokens "
                                    f"need ceil({n}/{P}) = {need}")
        for i, p in enumerate(ids):
            if p in seen:
                raise BadInput("pages", f"page {p} appears twice (sequence {seen[p][0]} entry {seen[p][1]} and "
                                        f"sequence {b} entry {i}); a page holds one sequence's tokens")
            seen[p] = (b, i)
        out.append(ids)
    return out


def _compact(table: list) -> list:
    """The block table renumbered onto ``0 .. m-1`` (``m`` distinct pages, in id order): the pool that
    real mode draws at random is sparse in the ids a user gave, so it holds only the pages listed."""
    order = {p: i for i, p in enumerate(sorted({p for lst in table for p in lst}))}
    return [[order[p] for p in lst] for lst in table]


def _geometry(n: int, B_n: int, P: Optional[int]):
    """The key blocks of one sequence of ``n`` keys: prefix sums of their valid rows and (paged) of the
    pages each touches, so that blocks ``[j0, j1)`` hold ``rows[j1] - rows[j0]`` keys."""
    # int64 holds every position only while n + B_n + P stays below 2**62; beyond, Python ints (object
    # arrays: the block count is bounded by max_blocks either way), so nothing wraps around near 2**63
    if n + B_n + (P or 0) < 2 ** 62:
        starts = np.arange(0, n, B_n, dtype=np.int64)
    else:
        starts = np.array(range(0, n, B_n), dtype=object)
    ends = np.minimum(starts + B_n, n)
    rows = np.concatenate(([0], np.cumsum(ends - starts)))
    if P is None:
        return rows, None
    spans = (ends - 1) // P - starts // P + 1          # pages a block touches
    return rows, np.concatenate(([0], np.cumsum(spans)))


def run_decode(B: int, H: int, H_kv: int, L_q: int, N_k, d: int, d_v: int, B_n: int, S: int, *,
               packed: bool = True, P: Optional[int] = None, lengths=None, pages=None, real: bool = False,
               q=None, k=None, v=None, seed: int = 0, dtype: str = "fp16", max_elements: int = MAX_ELEMENTS,
               max_ctas: int = MAX_CTAS, max_blocks: int = MAX_BLOCKS) -> DecodeRun:
    """Run split-KV decoding (module docstring) and count its traffic.

    ``lengths`` (one key count per sequence) makes a ragged batch; ``N_k`` is then its longest (or
    ``None``).  ``P`` (tokens per page) makes the cache paged; ``pages`` is its block table, one list of
    physical page ids per sequence (default: a random permutation, :func:`default_pages`).  Real mode
    takes ``q`` ``(B, H, L_q, d)``, and ``k``/``v``: contiguous, ``(B, H_kv, N_k, d)`` arrays or one
    ``(H_kv, n_b, d)`` array per sequence; paged, page pools ``(num_pages, P, H_kv, d)``.  Missing arrays
    are random normal from ``seed``."""
    B, H, H_kv, L_q = (validate.positive_int(n, x) for n, x in (("B", B), ("H", H), ("H_kv", H_kv), ("L_q", L_q)))
    d, d_v, B_n, S = (validate.positive_int(n, x) for n, x in (("d", d), ("d_v", d_v), ("B_n", B_n), ("S", S)))
    if H % H_kv:
        raise BadInput("H_kv", f"must divide H (g = H/H_kv query heads share a KV head), got H={H}, H_kv={H_kv}")
    packed, real = validate.flag("packed", packed), validate.flag("real", real)
    element_bytes(dtype)
    max_elements, max_ctas, max_blocks = (validate.positive_int(n, x) for n, x in
                                          (("max_elements", max_elements), ("max_ctas", max_ctas),
                                           ("max_blocks", max_blocks)))
    seed = validate.seed("seed", seed)
    if P is not None:
        P = validate.positive_int("P", P)
    elif pages is not None:
        raise BadInput("pages", "a block table needs a page size P")
    g = H // H_kv
    G = H_kv if packed else H

    # ---- budgets, before any work (the CTAs first: no list of B lengths is built for a batch over budget)
    ctas = B * G * S
    if ctas > max_ctas:
        name, remedy = ("B", "take a smaller batch") if B > max_ctas else ("S", "take fewer splits")
        raise BadInput(name, f"B x {'H_kv' if packed else 'H'} x S = {ctas:,} CTAs exceed the budget of {max_ctas:,} "
                             f"(max_ctas); {remedy} or raise max_ctas")
    lens = _lengths(B, N_k, lengths)
    blocks = sum(_ceil(n, B_n) for n in lens)
    if blocks > max_blocks:
        raise BadInput("B_n", f"{blocks:,} key blocks exceed the budget of {max_blocks:,} (max_blocks); take a "
                              f"larger B_n or raise max_blocks")
    if real and sum(lens) * H_kv * (d + d_v) > max_elements:
        raise BadInput("N_k", f"real mode would hold {sum(lens) * H_kv * (d + d_v):,} K and V elements, over the "
                              f"budget of {max_elements:,} (max_elements); use real=False (count-only) or raise it")
    # the page ids do not change a count: count-only mode builds no table unless one is given to check
    table = _pages(pages, lens, P, seed) if P is not None and (real or pages is not None) else None

    if real:
        if table is not None and (k is None or v is None):
            table = _compact(table)       # a random pool holds the listed pages only: page 10**9 costs nothing
        q, k, v = decode_arrays(B, H, H_kv, L_q, d, d_v, P, lens, table, q, k, v, seed)
        O = np.empty((B, H, L_q, d_v))
        LSE = np.empty((B, H, L_q))
        O_s = np.empty((S, B, H, L_q, d_v)) if S > 1 else None
        LSE_s = np.empty((S, B, H, L_q)) if S > 1 else None
        scale = 1.0 / np.sqrt(d)
    else:
        O_s = LSE_s = None
        O, LSE = Phantom((B, H, L_q, d_v)), Phantom((B, H, L_q))

    el = {name: 0 for name, _ in CLASSES}
    flops = 0
    for b, n in enumerate(lens):
        nb = _ceil(n, B_n)
        nbps = _ceil(nb, S)
        rows_cum, span_cum = _geometry(n, B_n, P)
        for grp in range(G):
            heads = slice(grp * g, (grp + 1) * g) if packed else slice(grp, grp + 1)
            kv = grp if packed else grp // g
            nh = heads.stop - heads.start
            R = nh * L_q
            for s in range(S):
                j0, j1 = s * nbps, min(nb, (s + 1) * nbps)
                if j0 >= j1:                      # empty split: exits early, writes 0 and -inf
                    el["writes_O_s"] += R * d_v
                    el["writes_LSE_s"] += R
                    if real:
                        O_s[s, b, heads] = 0.0
                        LSE_s[s, b, heads] = -np.inf
                    continue
                t0, t1 = j0 * B_n, min(n, j1 * B_n)
                if real:
                    qr = q[b, heads].reshape(R, d)
                    ks, vs = _load(k, v, b, kv, t0, t1, P, table)
                    el["reads_Q"] += qr.size
                    el["reads_K"] += ks.size
                    el["reads_V"] += vs.size
                    sc = (qr @ ks.T) * scale
                    m = sc.max(axis=1)
                    p = np.exp(sc - m[:, None])
                    l_ = p.sum(axis=1)
                    o = (p @ vs) / l_[:, None]
                    lse = m + np.log(l_)
                    flops += 2 * R * ks.shape[0] * d + 2 * R * vs.shape[0] * d_v
                else:
                    keys = int(rows_cum[j1] - rows_cum[j0])     # the valid rows of the split's blocks
                    el["reads_Q"] += R * d
                    el["reads_K"] += keys * d
                    el["reads_V"] += keys * d_v
                    flops += 2 * R * keys * (d + d_v)
                if P is not None:
                    el["reads_table"] += int(span_cum[j1] - span_cum[j0])
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
    if S > 1:                                     # the combine kernel: every row reads its S partials
        src_o, src_l = (O_s, LSE_s) if real else (Phantom((S, B, H, L_q, d_v)), Phantom((S, B, H, L_q)))
        el["reads_O_s"] += src_o.size
        el["reads_LSE_s"] += src_l.size
        if real:
            m = LSE_s.max(axis=0)                 # split 0 always holds a block: m is finite
            w = np.exp(LSE_s - m)
            tot = w.sum(axis=0)
            LSE[...] = m + np.log(tot)
            O[...] = np.einsum("sbhl,sbhlv->bhlv", w / tot, O_s)
        el["writes_O"] += O.size
        el["writes_LSE"] += LSE.size
    return DecodeRun(el, flops, ctas, dtype, O if real else None, LSE if real else None, tuple(lens))


def _float(name, a):
    """``a`` as a float64 array, without a copy when it is one already."""
    return np.asarray(validate.real_array(name, a), dtype=np.float64)


def decode_arrays(B, H, H_kv, L_q, d, d_v, P, lens, table, q, k, v, seed):
    """Real mode's ``q`` ``(B, H, L_q, d)`` and ``k``, ``v``: the arrays given, validated (:class:`BadInput`
    naming the array), or random normal from ``seed``.  Contiguous (``P`` is ``None``): one ``(H_kv, n, width)``
    array per sequence of ``lens``; paged: the page pools ``(num_pages, P, H_kv, width)`` for ``table``."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, H, L_q, d)) if q is None else _float("q", q)
    if q.shape != (B, H, L_q, d):
        raise BadInput("q", f"shape {q.shape}, expected (B, H, L_q, d) = {(B, H, L_q, d)}")
    if P is None:
        def make(width):
            return [rng.standard_normal((H_kv, n, width)) for n in lens]

        def take(name, arr, width):
            if isinstance(arr, np.ndarray) or not isinstance(arr, (list, tuple)):
                a = _float(name, arr)
                if a.ndim != 4 or a.shape[0] != B or a.shape[1] != H_kv or a.shape[2] < max(lens) or a.shape[3] != width:
                    raise BadInput(name, f"shape {a.shape}, expected (B, H_kv, N_k, {width}) = "
                                         f"{(B, H_kv, max(lens), width)}")
                return [a[i] for i in range(B)]
            if len(arr) != B:
                raise BadInput(name, f"{len(arr)} arrays for B={B} sequences")
            out = []
            for i, (a, n) in enumerate(zip(arr, lens)):
                a = _float(name, a)
                if a.ndim != 3 or a.shape[0] != H_kv or a.shape[1] < n or a.shape[2] != width:
                    raise BadInput(name, f"sequence {i}: shape {a.shape}, expected (H_kv, n, {width}) = "
                                         f"{(H_kv, n, width)}")
                out.append(a)
            return out
        k = make(d) if k is None else take("k", k, d)
        v = make(d_v) if v is None else take("v", v, d_v)
        return q, k, v
    pool = 1 + max((p for lst in table for p in lst), default=0)
    k = rng.standard_normal((pool, P, H_kv, d)) if k is None else _float("k", k)
    v = rng.standard_normal((pool, P, H_kv, d_v)) if v is None else _float("v", v)
    for name, a, width in (("k", k, d), ("v", v, d_v)):
        if a.ndim != 4 or a.shape[0] < pool or a.shape[1:] != (P, H_kv, width):
            raise BadInput(name, f"page pool of shape {a.shape}, expected (num_pages >= {pool}, P, H_kv, {width})")
    return q, k, v


def _load(k, v, b, kv, t0, t1, P, table):
    """The valid K and V rows ``t0 .. t1-1`` of sequence ``b``, KV head ``kv``: a slice of the contiguous
    cache, or the rows of the split's pages, looked up in the block table."""
    if P is None:
        return k[b][kv, t0:t1], v[b][kv, t0:t1]
    p0, p1 = t0 // P, (t1 - 1) // P + 1
    ids = table[b][p0:p1]
    lo, hi = t0 - p0 * P, t1 - p0 * P
    ks = k[ids, :, kv, :].reshape(-1, k.shape[3])[lo:hi]
    vs = v[ids, :, kv, :].reshape(-1, v.shape[3])[lo:hi]
    return ks, vs
