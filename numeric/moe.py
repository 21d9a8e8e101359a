"""Mixture-of-experts executor: vLLM's fused MoE kernel and the top-k combine, through counted memory.

The living spec of :mod:`symbolic.models.moe` (which this module does not import).  Three steps, as vLLM
runs them (``vllm/model_executor/layers/fused_moe/``):

1. **Align** (:func:`align_block_size`, ``moe_align_block_size``): the ``T k`` (token, slot) pairs, flattened
   as ``p = t k + s``, are sorted by expert (stably: pair order inside an expert); each expert's segment is
   padded to a multiple of ``BM`` with the sentinel ``T k``, in a buffer of ``T k + E (BM - 1)`` entries;
   ``expert_ids`` names the expert of each block of ``BM`` entries; ``num_post_pad`` is the padded length.
   A host-side step: it is not counted (the counts below are the GEMM's and the combine's).
2. **Grouped GEMM** (``fused_moe_kernel``): a grid of ``ceil(EM / BM) x ceil(N / BN)`` programs (``EM`` the
   buffer length, cut to ``min(EM, T k BM)`` when ``T < BM``).  A program loads ``num_post_pad`` and stops
   if its block starts at or beyond it; otherwise it loads its ``BM`` sorted ids and its expert id, and per
   K-step gathers the activation rows of its valid pairs (token ``p // k``) and loads a ``BK x BN`` tile of
   its expert's weight (valid columns only), multiplies, then loads the routed weights of its valid pairs,
   scales its rows and stores them into the ``T k x N`` intermediate at their pairs' rows.
3. **Combine** (``moe_sum``): each token's ``k`` intermediate rows are read and summed into one output row.

Counts are of elements moved by :class:`~numeric.memory.GlobalMemory` loads and stores (per array:
``X`` activations, ``W`` weights, ``sorted_ids``, ``expert_ids``, ``num_post_pad``, ``topk_weights``, ``C``
intermediate, ``out``); bytes are elements times each tensor class's size in :mod:`base.dtypes`
(activations and weights BF16, indices int32, routed weights FP32), whatever type the real run computes in
(float64, so the result compares with a per-token loop to 1e-12).

Real mode routes real tokens (a ``(T, k)`` array of distinct experts per token, built from a count vector by
:func:`route` or given) and returns the layer's output.  Count-only mode knows the count vector only: the
padded layout comes from the counts, and a block's gathered rows (whose positions it does not know) are
counted as a load of that many rows - the same number of elements.  Sizes are Python ints, so ``N`` and
``K`` reach beyond int64.  Bad input is :class:`~base.errors.BadInput` naming the parameter: ``k > E``
(``k``); counts of the wrong length, negative, above ``T`` or not summing to ``T k`` (``counts``); a ``real``
that is not a bool (``real``).  Work is bounded up front, before any load, and refused naming the parameter
that drives it: more than :data:`MAX_EXPERTS` experts (``E``: the routing and the alignment walk each one),
:data:`MAX_PROGRAMS` launched programs, :data:`MAX_STEPS` program x K-step iterations of the GEMM or row block
x slot loads of the combine (``T``: ``ceil(T / combine_rows) k``), or :data:`MAX_ELEMENTS` real elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Optional

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput
from base.validate import positive_int

from .memory import GlobalMemory

__all__ = ["MoERun", "balanced", "route", "align_block_size", "run_moe", "moe_reference", "MAX_STEPS",
           "MAX_ELEMENTS", "MAX_PROGRAMS", "MAX_EXPERTS"]

#: at most this many live program x K-step iterations of the GEMM, and as many row block x slot loads of the
#: combine (either mode); ``max_steps=``
MAX_STEPS = 1 << 20
#: at most this many experts (the count vector, the routing and the alignment hold or walk each); ``max_experts=``
MAX_EXPERTS = 1 << 20
#: at most this many launched programs (idle ones included); ``max_programs=``
MAX_PROGRAMS = 1 << 22
#: real mode: at most this many elements of X, W, the intermediate and the output; ``max_elements=``
MAX_ELEMENTS = 1 << 25
#: the element type of each array (bytes from base.dtypes)
ARRAY_DTYPES = {"X": "bf16", "W": "bf16", "C": "bf16", "out": "bf16", "sorted_ids": "int32",
                "expert_ids": "int32", "num_post_pad": "int32", "topk_weights": "fp32"}


@dataclass
class MoERun:
    """Counts of one run (exact ints), the routing's ``counts`` and, in real mode, the output."""

    counts: dict
    routing: tuple
    out: Optional[np.ndarray]


def balanced(T: int, E: int, k: int) -> tuple:
    """The balanced routing: ``T k`` pairs over ``E`` experts, the first ``T k mod E`` one more."""
    base, extra = divmod(T * k, E)
    return tuple(base + (e < extra) for e in range(E))


def _check(T, E, k, counts):
    if k > E:
        raise BadInput("k", f"top-k picks k distinct experts: k = {k} exceeds E = {E}")
    if counts is None:
        return balanced(T, E, k)
    if isinstance(counts, (str, bytes)) or not hasattr(counts, "__iter__"):
        raise BadInput("counts", f"one pair count per expert, got {counts!r:.80}")
    if hasattr(counts, "__len__") and len(counts) != E:
        raise BadInput("counts", f"{len(counts):,} counts for E = {E} experts")
    counts = tuple(validate.integer("counts", n, 0) for n in islice(counts, E + 1))   # never past E + 1
    if len(counts) != E:
        raise BadInput("counts", f"{len(counts)} counts for E = {E} experts")
    if sum(counts) != T * k:
        raise BadInput("counts", f"the counts sum to {sum(counts):,}, not T k = {T * k:,}")
    if max(counts) > T:
        raise BadInput("counts", f"an expert gets {max(counts):,} pairs, more than the T = {T:,} tokens")
    return counts


def route(T: int, E: int, k: int, counts) -> np.ndarray:
    """A ``(T, k)`` routing with ``counts[e]`` pairs to expert ``e`` and distinct experts per token: expert
    ``e``'s pairs fill the ``T x k`` table column by column (slot-major), a run of at most ``T`` cells, so
    it never meets a token twice."""
    counts = _check(T, E, k, counts)
    flat = np.repeat(np.arange(E), counts)                   # slot-major order: cell c is (c % T, c // T)
    return flat.reshape(k, T).T.copy()


def align_block_size(topk_ids: np.ndarray, E: int, BM: int):
    """vLLM's ``moe_align_block_size`` on a ``(T, k)`` routing: ``(sorted_ids, expert_ids, num_post_pad)``,
    the pairs sorted by expert (stable) and each segment padded to a multiple of ``BM`` with the sentinel
    ``T k``, in a buffer of ``T k + E (BM - 1)`` entries (int32)."""
    flat = topk_ids.reshape(-1)
    P = flat.size
    size = P + E * (BM - 1)
    sorted_ids = np.full(size, P, dtype=np.int64)
    expert_ids = np.zeros(-(-size // BM), dtype=np.int64)
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=E)
    pos = src = 0
    for e in range(E):
        n = int(counts[e])
        sorted_ids[pos:pos + n] = order[src:src + n]
        padded = -(-n // BM) * BM
        expert_ids[pos // BM:(pos + padded) // BM] = e
        pos, src = pos + padded, src + n
    return sorted_ids, expert_ids, pos


def moe_reference(X, W, topk_ids, topk_weights) -> np.ndarray:
    """The layer's output by a plain loop over tokens and their experts: ``out[t] = sum_s w[t, s] X[t] W[e(t, s)]``."""
    out = np.zeros((X.shape[0], W.shape[2]))
    for t in range(X.shape[0]):
        for s in range(topk_ids.shape[1]):
            out[t] += topk_weights[t, s] * (X[t] @ W[topk_ids[t, s]])
    return out


def _runs(rows):
    """Maximal runs of consecutive integers in an increasing array, as ``(start, stop)``."""
    if len(rows) == 0:
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate(([0], breaks))
    stops = np.concatenate((breaks, [len(rows)]))
    return [(int(rows[a]), int(rows[b - 1]) + 1) for a, b in zip(starts, stops)]


def _gather(mem, a, rows, cols):
    """Load ``a[rows, cols]``: real mode one slice load per run of consecutive rows; count-only mode, where
    ``rows`` is a count, a load of that many rows (the same elements; the positions are not known)."""
    if not mem.real:
        return mem.load(a, (slice(0, rows), cols))
    parts = [mem.load(a, (slice(r0, r1), cols)) for r0, r1 in _runs(rows)]
    return np.concatenate(parts, axis=0) if parts else np.zeros((0,) + a.data[0:0, cols].shape[1:])


def _scatter(mem, a, rows, cols, tile):
    if not mem.real:
        mem.store(a, (slice(0, rows), cols), tile)
        return
    at = 0
    for r0, r1 in _runs(rows):
        mem.store(a, (slice(r0, r1), cols), tile[at:at + r1 - r0])
        at += r1 - r0


def _layout(counts, BM):
    """Count-only: the ``(expert, valid rows)`` of each live block, from the counts alone."""
    blocks = []
    for e, n in enumerate(counts):
        for b in range(-(-n // BM)):
            blocks.append((e, min(BM, n - b * BM)))
    return blocks


def run_moe(T: int, E: int, k: int, N: int, K: int, BM: int, BN: int, BK: int, counts=None, *, real: bool = False,
            seed: int = 0, X=None, W=None, topk_ids=None, topk_weights=None, combine_rows: int = 256,
            max_steps: int = MAX_STEPS, max_programs: int = MAX_PROGRAMS,
            max_elements: int = MAX_ELEMENTS, max_experts: int = MAX_EXPERTS) -> MoERun:
    """Run the grouped GEMM and the combine; ``counts`` (one per expert; balanced when omitted) or, in real
    mode, ``topk_ids`` give the routing.  Returns :class:`MoERun` with the counts of the module docstring.
    The budgets (module docstring) are checked before the routing is built and before any load."""
    T, E, k, N, K = (positive_int(n, v) for n, v in (("T", T), ("E", E), ("k", k), ("N", N), ("K", K)))
    BM, BN, BK = positive_int("BM", BM), positive_int("BN", BN), positive_int("BK", BK)
    combine_rows = positive_int("combine_rows", combine_rows)
    real = validate.flag("real", real)
    # ---- the budgets that need no routing, before one is built (balanced() holds E counts)
    validate.budget("E", E, max_experts, "experts (the routing and the alignment walk each one)", "max_experts")
    row_blocks = -(-T // combine_rows)
    validate.budget("T" if row_blocks >= k else "k", row_blocks * k, max_steps,
                    f"combine loads ({row_blocks:,} row blocks of combine_rows={combine_rows:,} x k={k:,} slots)",
                    "max_steps", "take a larger combine_rows")
    if topk_ids is not None:
        if not real:
            raise BadInput("topk_ids", "a given routing needs real=True (count-only mode takes counts=)")
        topk_ids = np.asarray(topk_ids)
        if topk_ids.shape != (T, k) or topk_ids.dtype.kind not in "iu":
            raise BadInput("topk_ids", f"an integer array of shape ({T}, {k}), got {topk_ids.dtype} {topk_ids.shape}")
        if topk_ids.size and (topk_ids.min() < 0 or topk_ids.max() >= E):
            raise BadInput("topk_ids", f"expert ids in [0, {E})")
        if any(len(set(row)) != k for row in topk_ids.tolist()):
            raise BadInput("topk_ids", "each token's k experts must be distinct")
        counts = tuple(int(c) for c in np.bincount(topk_ids.reshape(-1), minlength=E))
    counts = _check(T, E, k, counts)
    P = T * k
    tn, tk = -(-N // BN), -(-K // BK)
    size = P + E * (BM - 1)
    em = min(size, P * BM) if T < BM else size               # fused_moe.py: the small-batch grid
    grid_m = -(-em // BM)
    live = sum(-(-n // BM) for n in counts)
    validate.budget("BM", grid_m * tn, max_programs, f"launched programs ({grid_m:,} x {tn:,})", "max_programs",
                    "take a larger BM or BN")
    biggest = max((("BM", live), ("BN", tn), ("BK", tk)), key=lambda x: x[1])[0]
    validate.budget(biggest, live * tn * tk, max_steps,
                    f"program x K-step iterations ({live:,} blocks x {tn:,} x {tk:,})", "max_steps",
                    "take larger blocks")
    if real:
        validate.budget("K" if K >= N else "N", T * K + E * K * N + P * N + T * N, max_elements,
                        "elements of X, W, the intermediate and the output", "max_elements", "use real=False")

    mem = GlobalMemory(real=real)
    if real:
        rng = np.random.default_rng(seed)
        ids = route(T, E, k, counts) if topk_ids is None else topk_ids
        X = rng.standard_normal((T, K)) if X is None else validate.real_array("X", X).astype(float)
        W = rng.standard_normal((E, K, N)) if W is None else validate.real_array("W", W).astype(float)
        w = rng.random((T, k)) + 0.5 if topk_weights is None else validate.real_array("topk_weights", topk_weights)
        for name, arr, want in (("X", X, (T, K)), ("W", W, (E, K, N)), ("topk_weights", w, (T, k))):
            if arr.shape != want:
                raise BadInput(name, f"shape {arr.shape}, expected {want}")
        sorted_ids, expert_ids, post_pad = align_block_size(ids, E, BM)
        x, wt = mem.put("X", X), mem.put("W", W)
        sid, eid = mem.put("sorted_ids", sorted_ids), mem.put("expert_ids", expert_ids)
        npp, tw = mem.put("num_post_pad", np.array([post_pad])), mem.put("topk_weights", np.asarray(w, float).reshape(-1))
        blocks = None
    else:
        x, wt = mem.put("X", (T, K)), mem.put("W", (E, K, N))
        sid, eid = mem.put("sorted_ids", (size,)), mem.put("expert_ids", (-(-size // BM),))
        npp, tw = mem.put("num_post_pad", (1,)), mem.put("topk_weights", (P,))
        blocks = _layout(counts, BM)
        post_pad = len(blocks) * BM
    c = mem.empty("C", (P, N))
    out = mem.empty("out", (T, N))

    padded_flops = programs = live_programs = 0
    for pid_m in range(grid_m):
        for pid_n in range(tn):
            programs += 1
            head = mem.load(npp, slice(0, 1))
            limit = int(head[0]) if real else post_pad
            if pid_m * BM >= limit:
                continue
            live_programs += 1
            block_ids = mem.load(sid, slice(pid_m * BM, (pid_m + 1) * BM))
            expert = mem.load(eid, slice(pid_m, pid_m + 1))
            if real:
                pairs = np.asarray(block_ids)[np.asarray(block_ids) < P]
                rows, e = pairs // k, int(expert[0])
            else:
                e, rows = blocks[pid_m]
                pairs = rows
            cols = slice(pid_n * BN, min((pid_n + 1) * BN, N))
            acc = None
            for k0 in range(0, K, BK):
                ks = slice(k0, min(k0 + BK, K))
                a = _gather(mem, x, rows, ks)
                b = mem.load(wt, (e, ks, cols))
                prod = mem.matmul(a, b)
                acc = prod if acc is None else acc + prod
                padded_flops += 2 * BM * BN * BK
            weights = _gather_flat(mem, tw, pairs)
            if real:
                acc = acc * weights[:, None]
            _scatter(mem, c, pairs, cols, acc)

    # the combine: out[t] = sum_s C[t k + s]  (pairs are flattened token-major)
    for t0 in range(0, T, combine_rows):
        t1 = min(t0 + combine_rows, T)
        total = None
        for s in range(k):
            part = mem.load(c, (slice(t0 * k + s, t1 * k, k), slice(None)))
            total = part if total is None else total + part
        mem.store(out, (slice(t0, t1), slice(None)), total)

    by = {name: tuple(v) for name, v in mem.tally.by_array.items()}
    nbytes = sum((r + w_) * element_bytes(ARRAY_DTYPES[name]) for name, (r, w_) in by.items())
    m_blocks = live_programs // tn
    got = {
        "reads": mem.tally.reads, "writes": mem.tally.writes, "flops": mem.tally.flops,
        "flops_padded": padded_flops, "padded_rows": post_pad, "m_blocks": m_blocks, "programs": programs,
        "reads_A": by["X"][0], "reads_W": by["W"][0], "reads_sorted_ids": by["sorted_ids"][0],
        "reads_expert_ids": by["expert_ids"][0], "reads_num_padded": by["num_post_pad"][0],
        "reads_topk_weights": by["topk_weights"][0], "reads_combine": by["C"][0],
        "writes_gemm": by["C"][1], "writes_combine": by["out"][1], "bytes": nbytes,
    }
    return MoERun(got, counts, mem.result(out))


def _gather_flat(mem, a, pairs):
    """The routed weights of ``pairs`` from the flat ``(T k,)`` array, one load per run (count-only: a count)."""
    if not mem.real:
        return mem.load(a, slice(0, pairs))
    parts = [mem.load(a, slice(p0, p1)) for p0, p1 in _runs(pairs)]
    return np.concatenate(parts) if parts else np.zeros(0)
