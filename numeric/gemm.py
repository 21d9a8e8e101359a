"""Tiled GEMM executor: ``C = A @ B`` tile by tile through counted global memory.

The kernel of lecture 10 §8 / Triton's matmul tutorial, run on :class:`numeric.memory.GlobalMemory`:
program ``pid`` owns one ``BM x BN`` tile of ``C`` (the launch order maps pids to tiles, optionally
grouped by ``GROUP_M`` rows), loops over ``ceil(K / BK)`` K-steps loading an ``A`` tile and a ``B``
tile each step (edge tiles are masked: only valid elements move), accumulates, and stores its tile.

Programs run in *waves* of ``wave`` consecutive pids that advance through K together (``wave = 1`` is
one program after another; counts do not depend on it, the request order does).  Every tile request
is reported, in order, to ``on_request(kind, index, k, elements)`` (``kind`` ``"A"`` with index the
tile row, ``"B"`` with the tile column) - the input of :mod:`numeric.l2cache`.

Real mode multiplies with NumPy; shape-only mode (``GlobalMemory(real=False)``) runs the same code on
:class:`~numeric.memory.Phantom` tiles.  With ``stages=s`` (real mode), each program holds the on-chip
arrays :func:`block_buffers` allocates - a ring of ``s`` operand slots (an ``A`` tile ``BM x BK`` and a
``B`` tile ``BK x BN`` each; K-step ``k`` lands in slot ``k mod s``, as a software pipeline of
``num_stages = s`` does) and its ``BM x BN`` accumulator - stages every loaded tile through its slot,
multiplies from there and accumulates in place.  Without ``stages`` the tiles are multiplied straight
from the loads (the copy into a slot costs about 12 % of a 1024^3 real run, and counts do not depend
on it).  Besides the memory's tally (reads, writes, useful FLOPs) the run reports ``flops_padded``:
what the tensor cores do, a full ``BM x BN x BK`` product every K-step.

Tile products run on one BLAS thread (``threadpoolctl``): tiles are small, and a multi-threaded BLAS
spends more waking and synchronising threads than it saves on them (on a loaded 2-core machine a
tile-by-tile loop ran 2-3x slower with OpenBLAS' default threads); each tile is one SM's work anyway.

Bad input is :class:`~base.errors.BadInput` naming the parameter; so is a run beyond its budget
(:data:`MAX_STEPS` program x K-step iterations, :data:`MAX_ELEMENTS` real-mode elements,
:data:`MAX_TILES` tiles in a launch list), refused before it starts.  This module does not import
:mod:`symbolic` (it is the independent side of :mod:`verify.checks.gemm`).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from base import validate
from base.errors import BadInput
from base.validate import positive_int

from .memory import GlobalMemory

__all__ = ["operands", "pid_to_tile", "launch_tiles", "launch_order", "block_buffers", "GemmRun", "tiled_matmul", "run_gemm",
           "MAX_STEPS", "MAX_TILES", "MAX_ELEMENTS"]

#: at most this many program x K-step iterations per run (either mode; a shape-only step costs about
#: 11 us, so about 45 s).  Raise it with ``max_steps=``.
MAX_STEPS = 1 << 22
#: :func:`launch_tiles` builds a list of at most this many tiles (``max_tiles=``); :func:`launch_order`
#: yields them one by one without a list.
MAX_TILES = 1 << 22
#: real mode: at most this many elements of A, B and C together (8 bytes each: 512 MiB); ``max_elements=``.
MAX_ELEMENTS = 1 << 26

_blas = None


def _one_blas_thread():
    """A context in which BLAS runs on one thread (threadpoolctl's controller, made once: scanning the
    loaded libraries costs about 0.25 ms, a limit on the made controller about 0.01 ms)."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController
        _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")


def pid_to_tile(pid: int, tiles_m: int, tiles_n: int, group: int) -> tuple[int, int]:
    """Triton's grouped launch order: ``group`` tile rows at a time, column-major inside a group."""
    per_group = group * tiles_n
    g = pid // per_group
    first = g * group
    rows_here = min(group, tiles_m - first)
    local = pid - g * per_group
    return first + local % rows_here, local // rows_here


def launch_order(tiles_m: int, tiles_n: int, group: int = 1, start: int = 0, stop: Optional[int] = None):
    """The tiles of pids ``start .. stop - 1`` in launch order, one at a time (no list: any grid size)."""
    stop = tiles_m * tiles_n if stop is None else min(stop, tiles_m * tiles_n)
    return (pid_to_tile(p, tiles_m, tiles_n, group) for p in range(start, stop))


def launch_tiles(tiles_m: int, tiles_n: int, group: int = 1, *, max_tiles: int = MAX_TILES) -> list[tuple[int, int]]:
    """Every tile in launch order (``group = 1``: row-major), as a list of at most ``max_tiles``
    (:data:`MAX_TILES`) tiles; a larger grid is refused up front (iterate :func:`launch_order` instead)."""
    tiles_m, tiles_n = positive_int("tiles_m", tiles_m), positive_int("tiles_n", tiles_n)
    group = positive_int("group", group)
    validate.budget("tiles_n" if tiles_n >= tiles_m else "tiles_m", tiles_m * tiles_n, max_tiles,
                    f"tiles (tiles_m x tiles_n = {tiles_m:,} x {tiles_n:,})", "max_tiles",
                    "iterate launch_order() instead of building the list")
    return list(launch_order(tiles_m, tiles_n, group))


def _steps_budget(M, N, K, BM, BN, BK, max_steps) -> int:
    """Refuse a run of more than ``max_steps`` program x K-step iterations before it starts; name the
    block whose dimension has the most tiles."""
    tm, tn, tk = -(-M // BM), -(-N // BN), -(-K // BK)
    name = max((("BM", tm), ("BN", tn), ("BK", tk)), key=lambda x: x[1])[0]
    return validate.budget(name, tm * tn * tk, max_steps,
                           f"program x K-step iterations ({tm:,} x {tn:,} tiles x {tk:,} K-steps)",
                           "max_steps", f"take a larger {name}")


def block_buffers(BM: int, BN: int, BK: int, stages: int = 1, operand=np.float16, accumulator=np.float32) -> dict:
    """The on-chip arrays one program (thread block) holds: ``"A"``, a ring of ``stages`` ``BM x BK``
    tiles, and ``"B"``, of ``stages`` ``BK x BN`` tiles (shared memory: the pipeline's operand
    stages), and ``"acc"``, the ``BM x BN`` accumulator (registers).  Full tiles: an edge tile fills
    part of its slot.  The defaults are an FP16 kernel's types; :func:`tiled_matmul` allocates them
    in the data's own type."""
    BM, BN, BK = positive_int("BM", BM), positive_int("BN", BN), positive_int("BK", BK)
    stages = positive_int("stages", stages)
    return {"A": np.zeros((stages, BM, BK), operand), "B": np.zeros((stages, BK, BN), operand),
            "acc": np.zeros((BM, BN), accumulator)}


@dataclass
class GemmRun:
    """Counts of one run (exact ints) and, in real mode, the product."""

    reads: int
    writes: int
    flops: int
    flops_padded: int
    reads_A: int
    reads_B: int
    requests: int
    C: Optional[np.ndarray]

    def counts(self) -> dict:
        return {"reads": self.reads, "writes": self.writes, "flops": self.flops, "flops_padded": self.flops_padded,
                "reads_A": self.reads_A, "reads_B": self.reads_B}


def tiled_matmul(mem: GlobalMemory, A, B, C, BM: int, BN: int, BK: int, group: int = 1, wave: int = 1,
                 on_request: Optional[Callable] = None, stages: Optional[int] = None, *,
                 max_steps: int = MAX_STEPS) -> int:
    """Run the tiled kernel on arrays already in ``mem``; returns the padded FLOPs (the tally holds the
    rest).  With ``stages`` (real mode) each program stages its tiles through the ``stages``-slot ring
    of :func:`block_buffers` and accumulates in its accumulator.  More than ``max_steps`` program x
    K-step iterations (:data:`MAX_STEPS`) are refused up front."""
    M, K = A.shape
    K2, N = B.shape
    if K2 != K:
        raise BadInput("B", f"shape {B.shape} does not match A {A.shape}")
    if C.shape != (M, N):
        raise BadInput("C", f"shape {C.shape}, expected {(M, N)}")
    BM, BN, BK = positive_int("BM", BM), positive_int("BN", BN), positive_int("BK", BK)
    group, wave = positive_int("group", group), positive_int("wave", wave)
    staged = stages is not None and mem.real
    stages = 1 if stages is None else positive_int("stages", stages)
    _steps_budget(M, N, K, BM, BN, BK, max_steps)
    tiles_m, tiles_n = -(-M // BM), -(-N // BN)
    dtype = np.result_type(A.dtype, B.dtype)
    padded = 0
    for start in range(0, tiles_m * tiles_n, wave):
        programs = list(launch_order(tiles_m, tiles_n, group, start, start + wave))
        acc = [None] * len(programs)
        bufs = [block_buffers(BM, BN, BK, stages, dtype, dtype) for _ in programs] if staged else None
        for step, k0 in enumerate(range(0, K, BK)):
            ks = slice(k0, min(k0 + BK, K))
            slot = step % stages
            for p, (i, j) in enumerate(programs):
                rows, cols = slice(i * BM, min((i + 1) * BM, M)), slice(j * BN, min((j + 1) * BN, N))
                a = mem.load(A, (rows, ks))
                if on_request is not None:
                    on_request("A", i, step, a.size)
                b = mem.load(B, (ks, cols))
                if on_request is not None:
                    on_request("B", j, step, b.size)
                padded += 2 * BM * BN * BK
                if staged:                   # stage through the ring, accumulate in place
                    (r, d), c = a.shape, b.shape[1]
                    sa, sb = bufs[p]["A"][slot, :r, :d], bufs[p]["B"][slot, :d, :c]
                    sa[...] = a
                    sb[...] = b
                    bufs[p]["acc"][:r, :c] += mem.matmul(sa, sb)
                else:
                    prod = mem.matmul(a, b)
                    acc[p] = prod if acc[p] is None else acc[p] + prod
        for p, (i, j) in enumerate(programs):
            rows, cols = slice(i * BM, min((i + 1) * BM, M)), slice(j * BN, min((j + 1) * BN, N))
            tile = bufs[p]["acc"][:rows.stop - rows.start, :cols.stop - cols.start] if staged else acc[p]
            mem.store(C, (rows, cols), tile)
    return padded


def operands(M: int, N: int, K: int, A=None, B=None, seed: int = 0):
    """Real mode's ``A`` (``M x K``) and ``B`` (``K x N``): the given arrays as float64 (:func:`base.validate.real_array`),
    or random normal ones from ``seed``; :class:`~base.errors.BadInput` naming the array of a wrong shape."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K)) if A is None else validate.real_array("A", A).astype(float, copy=False)
    B = rng.standard_normal((K, N)) if B is None else validate.real_array("B", B).astype(float, copy=False)
    for name, arr, want in (("A", A, (M, K)), ("B", B, (K, N))):
        if arr.shape != want:
            raise BadInput(name, f"shape {arr.shape}, expected {want} for M={M}, N={N}, K={K}")
    return A, B


def run_gemm(M: int, N: int, K: int, BM: int, BN: int, BK: int, group: int = 1, wave: int = 1, real: bool = False,
             seed: int = 0, on_request: Optional[Callable] = None, A=None, B=None,
             stages: Optional[int] = None, *, max_steps: int = MAX_STEPS,
             max_elements: int = MAX_ELEMENTS) -> GemmRun:
    """Set up ``A`` (``M x K``), ``B`` (``K x N``) and an empty ``C`` in a fresh counted memory and run
    :func:`tiled_matmul`.  Real mode uses random data (or the given ``A``, ``B``) and returns ``C``;
    ``stages`` stages its tiles through the on-chip ring of :func:`block_buffers`.

    The cost is checked before anything is allocated: more than ``max_steps`` program x K-step
    iterations (:data:`MAX_STEPS`), or in real mode more than ``max_elements`` elements of A, B and C
    (:data:`MAX_ELEMENTS`), are refused with :class:`~base.errors.BadInput` naming the parameter."""
    M, N, K = positive_int("M", M), positive_int("N", N), positive_int("K", K)
    BM, BN, BK = positive_int("BM", BM), positive_int("BN", BN), positive_int("BK", BK)
    real = validate.flag("real", real)
    seed = validate.seed("seed", seed)
    if not real and (A is not None or B is not None):
        raise BadInput("A" if A is not None else "B", "given arrays need real=True (shape-only mode has no data)")
    _steps_budget(M, N, K, BM, BN, BK, max_steps)
    if real:
        sizes = (("M", M), ("N", N), ("K", K))
        validate.budget(max(sizes, key=lambda x: x[1])[0], M * K + K * N + M * N, max_elements,
                        f"elements of A, B and C (M K + K N + M N, M={M:,}, N={N:,}, K={K:,})", "max_elements",
                        "use real=False (shape-only)")
    mem = GlobalMemory(real=real)
    if real:
        A, B = operands(M, N, K, A, B, seed)
        a, b = mem.put("A", A), mem.put("B", B)
    else:
        a, b = mem.put("A", (M, K)), mem.put("B", (K, N))
    c = mem.empty("C", (M, N))
    n_requests = [0]

    def hook(kind, index, k, elements):
        n_requests[0] += 1
        if on_request is not None:
            on_request(kind, index, k, elements)

    with _one_blas_thread() if real else nullcontext():     # shape-only mode multiplies nothing
        padded = tiled_matmul(mem, a, b, c, BM, BN, BK, group=group, wave=wave, on_request=hook, stages=stages,
                              max_steps=max_steps)
    t = mem.tally
    return GemmRun(t.reads, t.writes, t.flops, padded, t.by_array["A"][0], t.by_array["B"][0],
                   n_requests[0], mem.result(c))
