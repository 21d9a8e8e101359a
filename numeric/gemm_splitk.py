"""Split-K and stream-K GEMM executors: ``C = A @ B`` with the K loop cut across CTAs, through counted memory.

Three kernels, each run CTA by CTA on :class:`numeric.memory.GlobalMemory` (every element a load or store
moves is counted; a partial edge tile of ``A``, ``B``, ``C`` moves its valid elements only, a workspace tile of
accumulators moves whole), written from the kernels' source and not from any formula (this module does not
import :mod:`symbolic`):

* :func:`run_splitk_parallel` - CUTLASS 2.x ``GemmSplitKParallel`` + ``ReduceSplitK``
  (NVIDIA/cutlass ``include/cutlass/gemm/kernel/gemm_splitk_parallel.h``: ``gemm_k_size`` at ``:112-115``, the
  last slice's extent ``:161-167``, the workspace slice ``:235``; ``reduction/kernel/reduce_split_k.h:194-240``).
  Slice ``z`` of the ``t_m x t_n x S_k`` grid stores its accumulators to ``W[z]`` (FP32, ``S_k x M x N``);
  the reduction kernel loads the ``S_k`` partials of each tile, adds them to a zero accumulator and stores ``C``.
* :func:`run_splitk_serial` - CUTLASS 2.x ``Gemm`` with ``SplitKSerial`` (``include/cutlass/gemm/kernel/gemm.h``:
  ``gemm_k_size`` ``:129-132``, the empty slice ``:273``, the semaphore and ``iterator_C = iterator_D``
  ``:339-346``): slice 0 stores ``C`` from its accumulators, every later slice loads the ``C`` tile, adds and
  stores it again, slices in order.
* :func:`run_streamk` - CUTLASS 3.x's SM90 stream-K scheduler with ``DecompositionMode::StreamK``, 1x1
  clusters, one group (``include/cutlass/gemm/kernel/tile_scheduler_params.h``: ``get_num_sk_tiles``
  ``:1065-1110``, ``get_num_sk_units`` ``:1116-1138``; ``sm90_tile_scheduler_stream_k.hpp``: a unit's first
  K-iteration ``:814-834``, its start and end moved off a tile's first and last 8 iterations ``:838-890``,
  ``fixup_helper`` ``:425-552``).  Units are assigned to the persistent CTAs as the scheduler does (CTA ``x``
  takes work units ``x, x + P_s, ...``: the stream-K units first, then one unit per data-parallel tile).  A tile
  several units share is fixed up in K order: the first peer stores its whole ``B_M x B_N`` FP32 accumulator
  to the tile's workspace slot, a middle peer loads it, adds and stores, the final peer loads, adds and stores
  ``C``.

**Modes.**  Real mode (``real=True``) multiplies float64 data K-step by K-step and returns ``C`` (equal to
``A @ B`` within rounding).  Count-only mode runs the same schedule on :class:`~numeric.memory.Phantom`
tiles and loads a CTA's whole K range of a tile in one request: the valid elements of the ``B_K``-deep
steps partition the range, so the counts are the same (the tests compare the two modes), and the cost is per
tile segment, not per K-step - sizes beyond int64 count exactly.

**Counted.**  ``reads``/``writes`` (elements), per array (``reads_A``, ``reads_B``, ``writes_C``, ``reads_C``,
``writes_ws``, ``reads_ws``), ``bytes`` at each array's element type (:func:`base.dtypes.element_bytes`:
``A, B, C`` FP16, the workspace FP32), ``flops`` (the memory's matmul count), ``flops_padded`` (a full
``B_M x B_N x B_K`` product per K-step), elementwise ``ops`` of the reductions (one per add), the partial
tiles stored, and the waves: CTAs in launch order, ``P`` at a time, each wave as long as its longest CTA.

Bad input is :class:`~base.errors.BadInput` naming the parameter, and so is a run over its budget
(:data:`MAX_STEPS` K-steps in real mode, :data:`MAX_SEGMENTS` tile segments, :data:`MAX_ELEMENTS` real
elements), refused before it starts.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from .gemm import operands
from .memory import GlobalMemory, Phantom

__all__ = ["SplitKRun", "run_splitk_parallel", "run_splitk_serial", "run_streamk", "streamk_units",
           "MAX_STEPS", "MAX_SEGMENTS", "MAX_ELEMENTS", "MIN_ITERS", "DTYPES"]

#: real mode: at most this many CTA x K-step products
MAX_STEPS = 1 << 20
#: either mode: at most this many (CTA, tile) segments
MAX_SEGMENTS = 1 << 20
#: real mode: at most this many elements of A, B, C and the workspace together
MAX_ELEMENTS = 1 << 26
#: CUTLASS's ``min_iters_per_sk_unit_`` (``tile_scheduler_params.h:467``)
MIN_ITERS = 8
#: element type of each array, for bytes (the kernel's types; real mode computes in float64)
DTYPES = {"A": "fp16", "B": "fp16", "C": "fp16", "W": "fp32"}


@dataclass
class SplitKRun:
    """Counts of one run (exact ints and Fractions), the schedule's figures, and ``C`` in real mode."""

    counts: dict
    C: Optional[np.ndarray] = None
    cta_steps: list = field(default_factory=list)

    def __getitem__(self, key):
        return self.counts[key]


def _blas_one_thread():
    """BLAS on one thread for the many small tile products (a multi-threaded BLAS spends more waking threads
    than it saves on a tile)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:            # pragma: no cover - threadpoolctl is a dependency
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _check(M, N, K, BM, BN, BK, real):
    M, N, K = (validate.positive_int(n, v) for n, v in (("M", M), ("N", N), ("K", K)))
    BM, BN, BK = (validate.positive_int(n, v) for n, v in (("B_M", BM), ("B_N", BN), ("B_K", BK)))
    return M, N, K, BM, BN, BK, validate.flag("real", real)


def _budgets(real, segments, steps, elements, max_segments, max_steps, max_elements, block="B_K"):
    validate.budget("B_M", segments, max_segments, "tile segments (CTA x tile)", "max_segments", "take larger tiles")
    if real:
        validate.budget(block, steps, max_steps, "K-step products", "max_steps", f"take a larger {block}")
        validate.budget("M", elements, max_elements, "real elements of A, B, C and the workspace", "max_elements",
                        "use real=False (count-only)")


class _Kernel:
    """One run's memory, operands and tallies of the things :class:`GlobalMemory` does not count."""

    def __init__(self, M, N, K, BM, BN, BK, real, A, B, seed):
        self.M, self.N, self.K, self.BM, self.BN, self.BK, self.real = M, N, K, BM, BN, BK, real
        self.tm, self.tn, self.tk = -(-M // BM), -(-N // BN), -(-K // BK)
        self.mem = GlobalMemory(real=real)
        if real:
            A, B = operands(M, N, K, A, B, seed)
            self.A, self.B = self.mem.put("A", A), self.mem.put("B", B)
        else:
            if A is not None or B is not None:
                raise BadInput("A" if A is not None else "B", "given arrays need real=True")
            self.A, self.B = self.mem.put("A", (M, K)), self.mem.put("B", (K, N))
        self.C = self.mem.empty("C", (M, N))
        self.padded = 0
        self.ops = 0
        self.stored_partials = 0

    def rows(self, i):
        return slice(i * self.BM, min((i + 1) * self.BM, self.M))

    def cols(self, j):
        return slice(j * self.BN, min((j + 1) * self.BN, self.N))

    def zeros(self, shape):
        return np.zeros(shape) if self.real else Phantom(shape)

    def product(self, i, j, s0, s1):
        """The tile's accumulator over K-steps ``[s0, s1)`` (``rows x cols``; zeros for an empty range)."""
        r, c = self.rows(i), self.cols(j)
        acc = self.zeros((r.stop - r.start, c.stop - c.start))
        if s1 <= s0:
            return acc
        mem, BK, K = self.mem, self.BK, self.K
        step = 1 if self.real else s1 - s0          # count-only: the whole range in one request
        for s in range(s0, s1, step):
            ks = slice(s * BK, min(min(s + step, s1) * BK, K))
            a = mem.load(self.A, (r, ks))
            b = mem.load(self.B, (ks, c))
            acc = acc + mem.matmul(a, b)
        self.padded += 2 * self.BM * self.BN * BK * (s1 - s0)
        return acc

    def add(self, x, y):
        out = x + y
        self.ops += out.size
        return out

    def bytes(self):
        by = self.mem.tally.by_array
        return sum((r + w) * element_bytes(DTYPES[name]) for name, (r, w) in by.items())

    def base_counts(self):
        t, by = self.mem.tally, self.mem.tally.by_array
        return {"reads": t.reads, "writes": t.writes, "reads_A": by["A"][0], "reads_B": by["B"][0],
                "flops": t.flops, "flops_padded": self.padded, "writes_C": by["C"][1], "bytes": self.bytes()}

    def result(self):
        return self.mem.result(self.C)


def _waves(steps: list, P: int) -> dict:
    """Lockstep waves of ``P`` CTAs in launch order: each lasts as long as its longest CTA."""
    waves = [steps[w:w + P] for w in range(0, len(steps), P)]
    wave_steps = sum(max(w) for w in waves)
    return {"ctas": len(steps), "waves": len(waves), "wave_steps": wave_steps,
            "wave_efficiency": Fraction(sum(steps), P * wave_steps)}


def run_splitk_parallel(M, N, K, B_M, B_N, B_K, S_k, P=132, *, real=False, A=None, B=None, seed=0,
                        max_steps=MAX_STEPS, max_segments=MAX_SEGMENTS, max_elements=MAX_ELEMENTS) -> SplitKRun:
    """CUTLASS's parallel split-K (module docstring): counts, and ``C`` in real mode."""
    M, N, K, BM, BN, BK, real = _check(M, N, K, B_M, B_N, B_K, real)
    S, P = validate.positive_int("S_k", S_k), validate.positive_int("P", P)
    tm, tn, tk = -(-M // BM), -(-N // BN), -(-K // BK)
    _budgets(real, tm * tn * S, tm * tn * tk, M * K + K * N + M * N * (S + 1), max_segments, max_steps, max_elements)
    g = (K // BK) // S                                  # gemm_k_size in K-steps, every slice but the last
    run = _Kernel(M, N, K, BM, BN, BK, real, A, B, seed)
    W = run.mem.empty("W", (S, M, N))
    steps = []
    with _blas_one_thread() if real else nullcontext():
        for z in range(S):                                   # blockIdx.z: the slowest grid index
            s0, s1 = z * g, (tk if z == S - 1 else (z + 1) * g)
            for i in range(tm):
                for j in range(tn):
                    acc = run.product(i, j, s0, s1)
                    run.mem.store(W, (z, run.rows(i), run.cols(j)), acc)
                    run.stored_partials += 1
                    steps.append(s1 - s0)
        for i in range(tm):                                  # ReduceSplitK: a zero accumulator, S_k adds
            for j in range(tn):
                r, c = run.rows(i), run.cols(j)
                acc = run.zeros((r.stop - r.start, c.stop - c.start))
                for z in range(S):
                    acc = run.add(acc, run.mem.load(W, (z, r, c)))
                run.mem.store(run.C, (r, c), acc)
    by = run.mem.tally.by_array
    counts = run.base_counts()
    counts.update(writes_ws=by["W"][1], reads_ws=by["W"][0],
                  bytes_workspace=(by["W"][0] + by["W"][1]) * element_bytes(DTYPES["W"]),
                  partial_tiles=run.stored_partials, ops_reduce=run.ops, **_waves(steps, P))
    return SplitKRun(counts, run.result(), steps)


def run_splitk_serial(M, N, K, B_M, B_N, B_K, S_k, P=132, *, real=False, A=None, B=None, seed=0,
                      max_steps=MAX_STEPS, max_segments=MAX_SEGMENTS, max_elements=MAX_ELEMENTS) -> SplitKRun:
    """CUTLASS's serial split-K (module docstring): counts, and ``C`` in real mode."""
    M, N, K, BM, BN, BK, real = _check(M, N, K, B_M, B_N, B_K, real)
    S, P = validate.positive_int("S_k", S_k), validate.positive_int("P", P)
    tm, tn, tk = -(-M // BM), -(-N // BN), -(-K // BK)
    _budgets(real, tm * tn * S, tm * tn * tk, M * K + K * N + M * N, max_segments, max_steps, max_elements)
    c = -(-tk // S)                                      # gemm_k_size in K-steps
    run = _Kernel(M, N, K, BM, BN, BK, real, A, B, seed)
    steps, fixups = [], 0
    with _blas_one_thread() if real else nullcontext():
        for z in range(S):                               # the semaphore orders a tile's slices
            s0, s1 = z * c, min(tk, (z + 1) * c)
            for i in range(tm):
                for j in range(tn):
                    r, cl = run.rows(i), run.cols(j)
                    acc = run.product(i, j, s0, s1)
                    if z > 0:                            # the source is D, as the previous slice left it
                        acc = run.add(acc, run.mem.load(run.C, (r, cl)))
                        fixups += 1
                    run.mem.store(run.C, (r, cl), acc)
                    steps.append(max(0, s1 - s0))
    counts = run.base_counts()
    counts.update(reads_C=run.mem.tally.by_array["C"][0], fixups=fixups, ops_reduce=run.ops, **_waves(steps, P))
    return SplitKRun(counts, run.result(), steps)


def streamk_units(T: int, tk: int, P_s: int) -> tuple[int, list[tuple[int, int]]]:
    """CUTLASS's stream-K split of ``T`` tiles of ``tk`` K-iterations over ``P_s`` persistent CTAs:
    ``(sk_tiles, [(first iteration, iterations) per stream-K unit])``, written as the scheduler computes it
    (``get_num_sk_tiles``, ``get_num_sk_units``, then each unit's start and count with the big units first
    and the adjustments off a tile's first and last 8 iterations, start first, end second)."""
    full, total = T // P_s, -(-T // P_s)
    if full == total or tk <= MIN_ITERS:
        return 0, []
    dp_waves = full - 1 if full > 1 else 0
    sk_tiles = T - dp_waves * P_s
    units = min(P_s, sk_tiles * tk // MIN_ITERS)
    if units == 0:                                       # DataParallel fallback
        return 0, []
    total_iters = sk_tiles * tk
    per, big = divmod(total_iters, units)
    out = []
    for g in range(units):
        start = per * g + min(g, big)
        count = per + (1 if g < big else 0)
        off = start % tk                                 # start within a tile's first or last 8 iterations
        if off < MIN_ITERS:
            start -= off
            count += off
        elif off > tk - MIN_ITERS:
            adj = tk - off
            start += adj
            count -= adj
        end_off = (start + count) % tk                   # end likewise
        if end_off < MIN_ITERS:
            count -= end_off
        elif end_off > tk - MIN_ITERS:
            count += tk - end_off
        out.append((start, count))
    return sk_tiles, out


def run_streamk(M, N, K, B_M, B_N, B_K, P_s, *, real=False, A=None, B=None, seed=0,
                max_steps=MAX_STEPS, max_segments=MAX_SEGMENTS, max_elements=MAX_ELEMENTS) -> SplitKRun:
    """CUTLASS's SM90 stream-K (module docstring): counts, the busiest CTA's K-iterations (``iters_max``),
    and ``C`` in real mode."""
    M, N, K, BM, BN, BK, real = _check(M, N, K, B_M, B_N, B_K, real)
    P_s = validate.positive_int("P_s", P_s)
    tm, tn, tk = -(-M // BM), -(-N // BN), -(-K // BK)
    T = tm * tn
    validate.budget("P_s", P_s, max_segments, "persistent CTAs", "max_segments")
    # every tile is at least one segment: refuse a grid over the budget before the units are laid out
    validate.budget("B_M" if tm >= tn else "B_N", T, max_segments,
                    f"output tiles ({tm:,} x {tn:,}; a tile segment each, at least)", "max_segments", "take larger tiles")
    sk_tiles, units = streamk_units(T, tk, P_s)
    # segments: (tile, first K-step, end K-step) of each unit, in the unit's order
    segments = []
    for start, count in units:
        seg, it = [], start
        while it < start + count:
            tile = it // tk
            end = min((tile + 1) * tk, start + count)
            seg.append((tile, it - tile * tk, end - tile * tk))
            it = end
        segments.append(seg)
    n_seg = sum(len(s) for s in segments) + (T - sk_tiles)
    _budgets(real, n_seg, T * tk, M * K + K * N + M * N + sk_tiles * BM * BN, max_segments, max_steps, max_elements)
    run = _Kernel(M, N, K, BM, BN, BK, real, A, B, seed)
    WS = run.mem.empty("W", (max(sk_tiles, 1) if real else sk_tiles, BM, BN))
    peers: dict = {}
    for u, seg in enumerate(segments):
        for tile, k0, k1 in seg:
            peers.setdefault(tile, []).append((k0, k1))
    with _blas_one_thread() if real else nullcontext():
        for tile in sorted(peers):                       # the fixup, peers in K order (Deterministic mode)
            i, j = divmod(tile, tn)
            r, c = run.rows(i), run.cols(j)
            parts = sorted(peers[tile])
            if len(parts) == 1:                          # the whole K loop in one unit: no fixup
                run.mem.store(run.C, (r, c), run.product(i, j, *parts[0]))
                continue
            for n, (k0, k1) in enumerate(parts):
                acc = run.zeros((BM, BN))                # the whole accumulator fragment
                prod = run.product(i, j, k0, k1)
                if real:
                    acc[:r.stop - r.start, :c.stop - c.start] = prod
                if n > 0:
                    acc = run.add(acc, run.mem.load(WS, (tile, slice(None), slice(None))))
                if n < len(parts) - 1:
                    run.mem.store(WS, (tile, slice(None), slice(None)), acc)
                    run.stored_partials += 1
                else:
                    run.mem.store(run.C, (r, c), acc[:r.stop - r.start, :c.stop - c.start])
        for tile in range(sk_tiles, T):                  # data-parallel units: whole tiles
            i, j = divmod(tile, tn)
            run.mem.store(run.C, (run.rows(i), run.cols(j)), run.product(i, j, 0, tk))
    # K-iterations per persistent CTA: CTA x takes work units x, x + P_s, ... (stream-K units first)
    work = [max(0, cnt) for _, cnt in units] + [tk] * (T - sk_tiles)
    iters = [sum(work[x::P_s]) for x in range(P_s)]
    by = run.mem.tally.by_array
    counts = run.base_counts()
    waves_dp = len(range(0, T, P_s))
    counts.update(writes_ws=by["W"][1], reads_ws=by["W"][0],
                  tile_traffic=by["A"][0] + by["B"][0] + by["C"][1],
                  bytes_workspace=(by["W"][0] + by["W"][1]) * element_bytes(DTYPES["W"]),
                  tiles=T, sk_tiles=sk_tiles, dp_tiles=T - sk_tiles, sk_units=len(units),
                  sk_iters=sum(max(0, cnt) for _, cnt in units), fixups=run.stored_partials, ops_fixup=run.ops,
                  workspace=sk_tiles * BM * BN, waves_dp=waves_dp, wave_efficiency_dp=Fraction(T, P_s * waves_dp),
                  iters_max=max(iters))
    return SplitKRun(counts, run.result(), iters)
