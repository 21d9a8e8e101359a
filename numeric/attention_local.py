"""Local attention executors: sliding windows and chunked attention, run block by block on a counted global memory.

**The masks** (query row ``r`` sits at position ``p = Nk - N + r``, as in the causal models,
``docs/conventions.md`` §1.0; ``Nk < N`` is legal and puts the first rows at ``p < 0``):

* :class:`Window` ``(W_l, W_r)`` - key ``j`` is visible from position ``p`` iff ``p - W_l <= j <= p + W_r``
  (FlashAttention's ``window_size = (W_l, W_r)``: ``W = W_l + W_r + 1`` keys; ``W_r = 0`` is the causal
  sliding window of Mistral and Gemma).  Both are ``>= 0``.
* :class:`Chunk` ``(C)`` - key ``j`` is visible from ``p`` iff ``floor(j/C) = floor(p/C)`` and ``j <= p``
  (Llama 4's chunked attention; FlashAttention-3's ``attention_chunk`` with a causal mask).  ``C >= 1``.

:func:`visible` is the rule itself, element by element; everything else here follows from it.

**What is counted** (``docs/conventions.md`` §1, as ``attention.fa2.fwd.causal`` and ``attention.flash.bwd.causal``
count today): elements moved between HBM and on-chip memory, matrix-multiply FLOPs ``2 m n k`` per product.
A block pair ``(query block i, key block c)`` is *visited* iff one of its elements is visible; a fully masked
pair costs nothing (no loads, no FLOPs); a visited pair is loaded and computed whole (``flops``, over visited
blocks), while ``flops_visible`` counts the same products over the visible elements only (``2 d`` per visible
element per product: two products forward, five backward).  Partial last blocks move only the rows they hold.

* **Forward**, FlashAttention-2 order (Dao 2023, arXiv 2307.08691, Algorithm 1): ``Q_i`` is loaded once by a
  query block that visits at least one key block; ``K_c, V_c`` once per visited pair; ``O_i`` and ``L_i``
  are written for every query block.  ``V`` and ``O`` may be ``d_v`` wide (``2 (d + d_v)`` FLOPs a score).  A query block that visits nothing loads nothing and writes ``O_i = 0``,
  ``L_i = -inf``, as FlashAttention-3 does (``hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp`` lines 981-984:
  "It's possible to have n_block_max <= n_block_min. We don't want to load Q"; ``hopper/flash_fwd_kernel_sm90.h``
  lines 446-449: "Write 0 to gO and -inf to gLSE"; Dao-AILab/flash-attention @ ``0251105``).
* **Backward**, FlashAttention-2 Algorithm 2: ``D = rowsum(dO * O)`` (reads ``2 N d``, writes ``N``), ``dQ``
  initialised in HBM (``N d``); a key block that meets at least one query row loads ``K_c, V_c`` and, per
  visited pair, ``Q_i, dO_i, dQ_i, L_i, D_i`` (``3 d + 2`` per row) and writes ``dQ_i`` back; every key block
  writes ``dK_c, dV_c`` (zeros for one no row sees: ``hopper/flash_bwd_kernel_sm90.h`` lines 262-272,
  ``store_zero``).

**Execution.**  The outer loop runs over key blocks; the query blocks that visit key block ``c`` form one
contiguous range (a row's visible keys are an interval whose ends never decrease with the row), so they run
together as one slab of rows, each block still charged its own loads (``copies``), as
:mod:`numeric.attention` runs its query blocks.  Real mode (:func:`local_forward`, :func:`local_backward`)
computes on NumPy arrays, applies :func:`visible` to every element of every visited tile and counts the visible
ones; count-only mode (:func:`count_local_forward`, :func:`count_local_backward`) runs the same loop on
shape-only :class:`~numeric.memory.Phantom` tiles with Python ints (any size) and counts a tile's visible
elements by arithmetic (:func:`visible_in_tile`).

Cost is stated and bounded up front: one step per key block, at most :data:`MAX_STEPS` (``max_steps=``); a
real-mode run at most :data:`MAX_TILE_ELEMENTS` scores in its visited tiles (``max_elements=``).  Beyond them
the call is refused with :class:`~base.errors.BadInput` naming ``Bc`` (or ``N``).  A negative window is refused
naming ``W_l`` or ``W_r``, a chunk ``C < 1`` naming ``C``.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional, Union

import numpy as np

from base import validate
from base.errors import BadInput

from .attention import (MAX_STEPS, Backward, Forward, _arrays, _backward_step, _full, _nonzero, _online_softmax,
                        _shapes, _steps_budget)
from .memory import GlobalMemory, Tally

__all__ = ["Window", "Chunk", "window", "chunk", "visible", "keys_of_position", "positions_of_key",
           "rows_keys", "query_block_keys", "key_block_positions", "visible_in_tile", "LocalRun",
           "local_forward", "local_backward", "count_local_forward", "count_local_backward",
           "reference_local_attention", "MAX_STEPS", "MAX_TILE_ELEMENTS"]

#: real mode: at most this many scores in the visited tiles of one run (``sum`` of slab rows x key-block
#: width over the key blocks, about 8 bytes each, a few passes of NumPy work apiece).  Raise it with
#: ``max_elements=``, or count with the ``count_*`` functions, which hold no data.
MAX_TILE_ELEMENTS = 1 << 28


# ------------------------------------------------------------------------------------------- masks
class Window(NamedTuple):
    """Sliding window: key ``j`` visible from position ``p`` iff ``p - W_l <= j <= p + W_r``."""

    W_l: int
    W_r: int


class Chunk(NamedTuple):
    """Chunked attention: key ``j`` visible from ``p`` iff ``floor(j/C) = floor(p/C)`` and ``j <= p``."""

    C: int


Mask = Union[Window, Chunk]


def window(W_l, W_r) -> Window:
    """A validated :class:`Window` (both ``>= 0``; :class:`BadInput` naming ``W_l`` or ``W_r``)."""
    return Window(validate.integer("W_l", W_l, 0), validate.integer("W_r", W_r, 0))


def chunk(C) -> Chunk:
    """A validated :class:`Chunk` (``C >= 1``; :class:`BadInput` naming ``C``)."""
    return Chunk(validate.integer("C", C, 1))


def _checked(mask) -> Mask:
    if isinstance(mask, Window):
        return window(*mask)
    if isinstance(mask, Chunk):
        return chunk(*mask)
    raise BadInput("mask", f"must be numeric.attention_local.Window(W_l, W_r) or Chunk(C), got {mask!r}")


def visible(mask: Mask, p, j):
    """The mask, element by element: is key ``j`` visible from position ``p``?  Ints or NumPy arrays
    (broadcast).  Keys outside ``0 .. Nk - 1`` do not exist; the caller indexes only real ones."""
    if isinstance(mask, Window):
        return (j >= p - mask.W_l) & (j <= p + mask.W_r)
    return (j <= p) & (np.floor_divide(j, mask.C) == np.floor_divide(p, mask.C))


def keys_of_position(mask: Mask, p: int, Nk: int) -> Optional[tuple]:
    """``(first, last)`` key visible from position ``p`` (an interval, read off :func:`visible`), or ``None``.

    Window: ``[p - W_l, p + W_r]`` clipped to ``[0, Nk - 1]``; chunk: ``[C floor(p/C), p]``, empty for ``p < 0``."""
    if isinstance(mask, Window):
        lo, hi = max(0, p - mask.W_l), min(Nk - 1, p + mask.W_r)
    else:
        lo, hi = (mask.C * (p // mask.C), min(p, Nk - 1)) if p >= 0 else (0, -1)
    return (lo, hi) if lo <= hi else None


def positions_of_key(mask: Mask, j: int, D: int, Nk: int) -> Optional[tuple]:
    """``(first, last)`` position that sees key ``j`` among the query positions ``D .. Nk - 1`` (``D = Nk - N``),
    or ``None``.  Window: ``[j - W_r, j + W_l]``; chunk: ``[j, C floor(j/C) + C - 1]``; clipped to the positions."""
    if isinstance(mask, Window):
        lo, hi = j - mask.W_r, j + mask.W_l
    else:
        lo, hi = j, mask.C * (j // mask.C) + mask.C - 1
    lo, hi = max(lo, D), min(hi, Nk - 1)
    return (lo, hi) if lo <= hi else None


def rows_keys(mask: Mask, r0: int, r1: int, N: int, Nk: int) -> Optional[tuple]:
    """``(first, last)`` key that any of the query rows ``r0 .. r1`` sees, or ``None``.

    The visible keys of consecutive positions are intervals that overlap or touch, with ends that never
    decrease, so their union is one interval, from the first key of the first row that sees any to the last
    key of the last row."""
    D = Nk - N
    last = keys_of_position(mask, D + r1, Nk)
    if last is None:
        return None
    first = keys_of_position(mask, max(D + r0, _first_seeing_position(mask, D)), Nk)
    return first[0], last[1]


def query_block_keys(mask: Mask, i: int, N: int, Nk: int, Br: int, Bc: int) -> Optional[tuple]:
    """``(first, last)`` key block that query block ``i`` visits, or ``None`` (it visits none):
    :func:`rows_keys` of its rows, in key blocks."""
    keys = rows_keys(mask, i * Br, min((i + 1) * Br, N) - 1, N, Nk)
    return None if keys is None else (keys[0] // Bc, keys[1] // Bc)


def key_block_positions(mask: Mask, c: int, N: int, Nk: int, Bc: int) -> Optional[tuple]:
    """``(first, last)`` query position that sees any key of key block ``c``, or ``None`` (as
    :func:`query_block_keys`, with keys and positions swapped)."""
    D = Nk - N
    c0, c1 = c * Bc, min((c + 1) * Bc, Nk) - 1
    hi = positions_of_key(mask, c1, D, Nk)
    if hi is None:
        return None
    lo = positions_of_key(mask, c0, D, Nk)
    if lo is None:                          # the block's first keys are seen by no row: its first key that is
        lo = positions_of_key(mask, _first_seen_key(mask, D), D, Nk)
    return lo[0], hi[1]


def _first_seeing_position(mask: Mask, D: int) -> int:
    """The least position ``>= D`` whose visible keys are not all below key 0 (window: ``p + W_r >= 0``;
    chunk: ``p >= 0``)."""
    return max(D, -mask.W_r) if isinstance(mask, Window) else max(D, 0)


def _first_seen_key(mask: Mask, D: int) -> int:
    """The least key ``>= 0`` some position ``>= D`` sees (window: ``j + W_l >= D``; chunk: the chunk of
    ``j`` ends at or after ``D``)."""
    if isinstance(mask, Window):
        return max(0, D - mask.W_l)
    return max(0, mask.C * (D // mask.C)) if D >= 0 else 0


# ------------------------------------------------------------------------------------------- visible elements
def _clamp_prefix(x: int, w: int) -> int:
    """``sum_{y <= x} clamp(y, 0, w)`` (the ``y <= 0`` terms are 0)."""
    if x <= 0:
        return 0
    if x <= w:
        return x * (x + 1) // 2
    return w * (w + 1) // 2 + (x - w) * w


def _below(a: int, b: int, c0: int, c1: int, k: int) -> int:
    """``#{(p, j) : a <= p <= b, c0 <= j <= c1, j <= p + k}``: row ``p`` contributes
    ``clamp(p + k - c0 + 1, 0, w)`` with ``w = c1 - c0 + 1``, summed by its prefix sums."""
    if a > b or c0 > c1:
        return 0
    w = c1 - c0 + 1
    return _clamp_prefix(b + k - c0 + 1, w) - _clamp_prefix(a + k - c0, w)


def visible_in_tile(mask: Mask, a: int, b: int, c0: int, c1: int) -> int:
    """Visible elements of the tile of positions ``a .. b`` and keys ``c0 .. c1`` (inclusive), by arithmetic
    (Python ints, O(1)): what ``count_nonzero(visible(...))`` gives on the tile.

    Window: the pairs with ``j <= p + W_r`` less those with ``j <= p - W_l - 1``.  Chunk: per chunk met by
    both the rows and the keys, the pairs with ``j <= p``; the chunks strictly between the first and the last
    such are covered by both ranges and hold ``C (C + 1) / 2`` each."""
    if isinstance(mask, Window):
        return _below(a, b, c0, c1, mask.W_r) - _below(a, b, c0, c1, -mask.W_l - 1)
    C = mask.C
    a = max(a, 0)
    k_lo, k_hi = max(a // C, c0 // C), min(b // C, c1 // C)
    if a > b or k_lo > k_hi:
        return 0

    def one(k):
        lo, hi = k * C, k * C + C - 1
        return _below(max(a, lo), min(b, hi), max(c0, lo), min(c1, hi), 0)
    if k_lo == k_hi:
        return one(k_lo)
    return one(k_lo) + one(k_hi) + (k_hi - k_lo - 1) * (C * (C + 1) // 2)


def _visible_tile(mask: Mask, a: int, rows: int, c0: int, cols: int):
    """The boolean tile ``visible(p, j)`` for positions ``a .. a + rows - 1`` and keys ``c0 .. c0 + cols - 1``."""
    return visible(mask, (a + np.arange(rows))[:, None], (c0 + np.arange(cols))[None, :])


# ------------------------------------------------------------------------------------------- runs
class LocalRun(NamedTuple):
    """One run: the outputs (``None`` in count-only mode), the :class:`~numeric.memory.Tally` (reads, writes,
    ``flops`` over visited blocks), ``flops_visible`` (the same products over visible elements), ``visible``
    (visible elements), ``blocks`` (visited block pairs)."""

    out: object
    tally: Tally
    flops_visible: int
    visible: int
    blocks: int

    def counts(self) -> dict:
        t = self.tally
        return {"reads": t.reads, "writes": t.writes, "flops": t.flops, "flops_visible": self.flops_visible,
                "blocks": self.blocks}


def _slab(mask, c, N, Nk, Br, Bc):
    """``(first row, end row, query blocks)`` of the query blocks that visit key block ``c``, or ``None``."""
    pos = key_block_positions(mask, c, N, Nk, Bc)
    if pos is None:
        return None
    D = Nk - N
    ilo, ihi = (pos[0] - D) // Br, (pos[1] - D) // Br
    return ilo * Br, min((ihi + 1) * Br, N), ihi - ilo + 1


def _tile_budget(mask, N, Nk, Br, Bc, max_elements):
    """Refuse a real-mode run whose visited tiles hold more than ``max_elements`` scores, before it allocates."""
    work = 0
    for c in range(-(-Nk // Bc)):
        s = _slab(mask, c, N, Nk, Br, Bc)
        if s is not None:
            work += (s[1] - s[0]) * (min((c + 1) * Bc, Nk) - c * Bc)
    validate.budget("N", work, max_elements, f"scores in the visited tiles (N={N:,}, Nk={Nk:,})",
                    "max_elements", "count with count_local_* (no data)")


def _score_tile(mem, mask, S, a, c0, width):
    """Mask a score tile (real mode: ``-inf`` where :func:`visible` is false) and count its visible elements."""
    if mem.real:
        vis = _visible_tile(mask, a, S.shape[0], c0, width)
        return np.where(vis, S, -np.inf), int(np.count_nonzero(vis))
    return S, visible_in_tile(mask, a, a + S.shape[0] - 1, c0, c0 + width - 1)


def _forward(mem, Qa, Ka, Va, N, Nk, d, Br, Bc, mask) -> LocalRun:
    scale = 1.0 / math.sqrt(d)
    D, Tc, dv = Nk - N, -(-Nk // Bc), Va.shape[1]                       # V and O are d_v wide
    Oa, La = mem.empty("O", (N, dv)), mem.empty("L", (N,))
    q0 = min(N, (_first_seeing_position(mask, D) - D) // Br * Br)       # first row of the first block that sees
    Qs = mem.load(Qa, slice(q0, N)) * scale                              # line 4: Q_i once, blocks that visit
    acc, m, l = _full(mem, (N, dv), 0.0), _full(mem, (N,), -np.inf), _full(mem, (N,), 0.0)
    vis_total = blocks = 0
    for c in range(Tc):                                                  # every query block's inner loop, in step
        slab = _slab(mask, c, N, Nk, Br, Bc)
        if slab is None:
            continue                                                     # no row sees key block c: nothing
        r0, r1, nb = slab
        c0, c1 = c * Bc, min((c + 1) * Bc, Nk)
        blocks += nb
        Kc, Vc = mem.load(Ka, slice(c0, c1), copies=nb), mem.load(Va, slice(c0, c1), copies=nb)   # line 7
        S = mem.matmul(Qs[r0 - q0:r1 - q0], Kc.T)                                                 # line 8
        S, seen = _score_tile(mem, mask, S, D + r0, c0, c1 - c0)
        vis_total += seen
        m_new, alpha, l_new, PV = _online_softmax(mem, S, Vc, m[r0:r1], l[r0:r1])
        if mem.real:                                                                               # line 9
            acc[r0:r1] = alpha[:, None] * acc[r0:r1] + PV
            m[r0:r1], l[r0:r1] = m_new, l_new
    # lines 12-15: every query block writes O_i and L_i (a block that saw nothing: O_i = 0, L_i = -inf)
    mem.store(Oa, slice(None), acc / _nonzero(l)[:, None] if mem.real else acc)
    if mem.real:
        with np.errstate(divide="ignore"):
            mem.store(La, slice(None), m + np.log(l))
    else:
        mem.store(La, slice(None), l)
    out = (mem.result(Oa), mem.result(La)) if mem.real else None
    return LocalRun(out, mem.tally, 2 * (d + dv) * vis_total, vis_total, blocks)    # S = Q K^T and P V


def _backward(mem, Qa, Ka, Va, Oa, dOa, La, N, Nk, d, Br, Bc, mask) -> LocalRun:
    scale = 1.0 / math.sqrt(d)
    D, Tc = Nk - N, -(-Nk // Bc)
    Da = mem.empty("D", (N,))
    dQa, dKa, dVa = mem.empty("dQ", (N, d)), mem.empty("dK", (Nk, d)), mem.empty("dV", (Nk, d))
    mem.store(Da, slice(None), (mem.load(dOa) * mem.load(Oa)).sum(axis=1))      # D = rowsum(dO * O)
    mem.store(dQa, slice(None), _full(mem, (N, d), 0.0))                        # dQ initialised in HBM
    vis_total = blocks = 0
    for c in range(Tc):                                                         # line 5
        cols = slice(c * Bc, min((c + 1) * Bc, Nk))
        width = cols.stop - cols.start
        slab = _slab(mask, c, N, Nk, Br, Bc)
        if slab is None:                                                        # FA3's store_zero: no row sees it
            mem.store(dKa, cols, _full(mem, (width, d), 0.0))
            mem.store(dVa, cols, _full(mem, (width, d), 0.0))
            continue
        r0, r1, nb = slab
        rows = slice(r0, r1)
        blocks += nb
        Kc, Vc = mem.load(Ka, cols), mem.load(Va, cols)                         # line 6
        Qi, dOi, dQi = mem.load(Qa, rows), mem.load(dOa, rows), mem.load(dQa, rows)   # line 9
        Li, Di = mem.load(La, rows), mem.load(Da, rows)
        if mem.real:    # a row that sees no key has L = -inf: take 0, so P = exp(-inf - 0) = 0 on its masked
            Li = np.where(np.isneginf(Li), 0.0, Li)   # scores (FA3: hopper/flash_bwd_preprocess_kernel.h:228)
        S = mem.matmul(Qi, Kc.T) * scale                                        # line 10
        S, seen = _score_tile(mem, mask, S, D + r0, cols.start, width)
        vis_total += seen
        dQi, dKc, dVc = _backward_step(mem, S, Qi, Kc, Vc, dOi, dQi, Li, Di, scale)
        mem.store(dQa, rows, dQi)                                               # line 15
        mem.store(dKa, cols, dKc)                                               # line 18
        mem.store(dVa, cols, dVc)
    out = (mem.result(dQa), mem.result(dKa), mem.result(dVa)) if mem.real else None
    return LocalRun(out, mem.tally, 5 * (2 * d) * vis_total, vis_total, blocks)    # S, dV, dP, dQ, dK


# ------------------------------------------------------------------------------------------- entry points
def _blocks(Br, Bc):
    return validate.integer("Br", Br), validate.integer("Bc", Bc)


def local_forward(Q, K, V, Br, Bc, mask: Mask, *, max_steps=MAX_STEPS, max_elements=MAX_TILE_ELEMENTS) -> LocalRun:
    """The forward pass on real arrays; ``run.out`` is ``(O, L)`` with ``L = m + log l`` (``-inf`` for a row
    that sees no key, whose ``O`` row is 0); ``V`` may be ``d_v`` wide.  More than ``max_steps`` key blocks or
    ``max_elements`` scores in the visited tiles are refused up front."""
    mask = _checked(mask)
    Q, K, V = _arrays(Q=Q, K=K, V=V)
    N, Nk, d = _shapes(Q, K, V, False, v_width=True)
    Br, Bc = _blocks(Br, Bc)
    _steps_budget(Nk, Bc, max_steps)
    _tile_budget(mask, N, Nk, Br, Bc, max_elements)
    mem = GlobalMemory(real=True)
    return _forward(mem, mem.put("Q", np.asarray(Q, float)), mem.put("K", np.asarray(K, float)),
                    mem.put("V", np.asarray(V, float)), N, Nk, d, Br, Bc, mask)


def local_backward(Q, K, V, O, dO, L, Br, Bc, mask: Mask, *, max_steps=MAX_STEPS,
                   max_elements=MAX_TILE_ELEMENTS) -> LocalRun:
    """The backward pass on real arrays (``O``, ``L`` from :func:`local_forward`); ``run.out`` is
    ``(dQ, dK, dV)``.  Budgets as :func:`local_forward`."""
    mask = _checked(mask)
    Q, K, V, O, dO, L = _arrays(Q=Q, K=K, V=V, O=O, dO=dO, L=L)
    N, Nk, d = _shapes(Q, K, V, False)
    Br, Bc = _blocks(Br, Bc)
    for name, x, shape in (("O", O, (N, d)), ("dO", dO, (N, d)), ("L", L, (N,))):
        if np.shape(x) != shape:
            raise BadInput(name, f"shape {np.shape(x)} does not match {shape}")
    _steps_budget(Nk, Bc, max_steps)
    _tile_budget(mask, N, Nk, Br, Bc, max_elements)
    mem = GlobalMemory(real=True)
    return _backward(mem, *(mem.put(n, np.asarray(x, float)) for n, x in
                            (("Q", Q), ("K", K), ("V", V), ("O", O), ("dO", dO), ("L", L))),
                     N, Nk, d, Br, Bc, mask)


def _count_inputs(N, Nk, d, Br, Bc, mask, max_steps):
    mask = _checked(mask)
    N, Nk, d = (validate.integer(n, v) for n, v in (("N", N), ("Nk", Nk), ("d", d)))
    Br, Bc = _blocks(Br, Bc)
    _steps_budget(Nk, Bc, max_steps)
    return mask, N, Nk, d, Br, Bc, GlobalMemory(real=False)


def count_local_forward(N, Nk, d, Br, Bc, mask: Mask, *, d_v=None, max_steps=MAX_STEPS) -> LocalRun:
    """The counts of :func:`local_forward` from sizes alone (no data, any size), ``V`` and ``O`` ``d_v`` wide
    (default ``d``): one step per key block, so more than ``max_steps`` key blocks (:data:`MAX_STEPS`) are
    refused up front."""
    mask, N, Nk, d, Br, Bc, mem = _count_inputs(N, Nk, d, Br, Bc, mask, max_steps)
    d_v = d if d_v is None else validate.integer("d_v", d_v)
    return _forward(mem, mem.put("Q", (N, d)), mem.put("K", (Nk, d)), mem.put("V", (Nk, d_v)), N, Nk, d, Br, Bc,
                    mask)


def count_local_backward(N, Nk, d, Br, Bc, mask: Mask, *, max_steps=MAX_STEPS) -> LocalRun:
    """The counts of :func:`local_backward` from sizes alone; more than ``max_steps`` key blocks are refused."""
    mask, N, Nk, d, Br, Bc, mem = _count_inputs(N, Nk, d, Br, Bc, mask, max_steps)
    return _backward(mem, *(mem.put(n, s) for n, s in (("Q", (N, d)), ("K", (Nk, d)), ("V", (Nk, d)),
                                                       ("O", (N, d)), ("dO", (N, d)), ("L", (N,)))),
                     N, Nk, d, Br, Bc, mask)


# ------------------------------------------------------------------------------------------- reference
def reference_local_attention(Q, K, V, mask: Mask):
    """Plain masked ``softmax(Q K^T / sqrt(d)) V`` in one shot (no tiling, no counting): the oracle.
    Returns ``(O, P)``; a row that sees no key has ``O = 0`` and ``P = 0`` (FlashAttention's convention).
    ``V`` may be ``d_v`` wide."""
    mask = _checked(mask)
    Q, K, V = _arrays(Q=Q, K=K, V=V)
    N, Nk, d = _shapes(Q, K, V, False, v_width=True)
    vis = _visible_tile(mask, Nk - N, N, 0, Nk)
    S = np.where(vis, (Q @ K.T) / math.sqrt(d), -np.inf)
    mx = S.max(axis=1, keepdims=True)
    P = np.exp(S - np.where(np.isfinite(mx), mx, 0.0))
    z = P.sum(axis=1, keepdims=True)
    P /= np.where(z == 0, 1.0, z)
    return P @ V, P
