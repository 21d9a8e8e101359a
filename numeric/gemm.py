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
:class:`~numeric.memory.Phantom` tiles.  Besides the memory's tally (reads, writes, useful FLOPs) the
run reports ``flops_padded``: what the tensor cores do, a full ``BM x BN x BK`` product every K-step.

This module does not import :mod:`symbolic` (it is the independent side of :mod:`verify.gemm`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ._args import count
from .blas import single_threaded_blas
from .memory import GlobalMemory

__all__ = ["pid_to_tile", "launch_tiles", "GemmRun", "tiled_matmul", "run_gemm"]


def pid_to_tile(pid: int, tiles_m: int, tiles_n: int, group: int) -> tuple[int, int]:
    """Triton's grouped launch order: ``group`` tile rows at a time, column-major inside a group."""
    per_group = group * tiles_n
    g = pid // per_group
    first = g * group
    rows_here = min(group, tiles_m - first)
    local = pid - g * per_group
    return first + local % rows_here, local // rows_here


def launch_tiles(tiles_m: int, tiles_n: int, group: int = 1) -> list[tuple[int, int]]:
    """Every tile in launch order (``group = 1``: row-major)."""
    tiles_m, tiles_n, group = count("tiles_m", tiles_m), count("tiles_n", tiles_n), count("group", group)
    return [pid_to_tile(p, tiles_m, tiles_n, group) for p in range(tiles_m * tiles_n)]


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
                 on_request: Optional[Callable] = None) -> int:
    """Run the tiled kernel on arrays already in ``mem``; returns the padded FLOPs (the tally holds the rest)."""
    M, K = A.shape
    K2, N = B.shape
    if K2 != K:
        raise ValueError(f"B: shape {B.shape} does not match A {A.shape}")
    if C.shape != (M, N):
        raise ValueError(f"C: shape {C.shape}, expected {(M, N)}")
    BM, BN, BK = count("BM", BM), count("BN", BN), count("BK", BK)
    group, wave = count("group", group), count("wave", wave)
    tiles_m, tiles_n = -(-M // BM), -(-N // BN)
    order = launch_tiles(tiles_m, tiles_n, group)
    padded = 0
    for start in range(0, len(order), wave):
        programs = order[start:start + wave]
        acc = [None] * len(programs)
        for k0 in range(0, K, BK):
            ks = slice(k0, min(k0 + BK, K))
            for p, (i, j) in enumerate(programs):
                rows, cols = slice(i * BM, min((i + 1) * BM, M)), slice(j * BN, min((j + 1) * BN, N))
                a = mem.load(A, (rows, ks))
                if on_request is not None:
                    on_request("A", i, k0 // BK, a.size)
                b = mem.load(B, (ks, cols))
                if on_request is not None:
                    on_request("B", j, k0 // BK, b.size)
                prod = mem.matmul(a, b)
                padded += 2 * BM * BN * BK
                acc[p] = prod if acc[p] is None else acc[p] + prod
        for p, (i, j) in enumerate(programs):
            mem.store(C, (slice(i * BM, min((i + 1) * BM, M)), slice(j * BN, min((j + 1) * BN, N))), acc[p])
    return padded


def run_gemm(M: int, N: int, K: int, BM: int, BN: int, BK: int, group: int = 1, wave: int = 1, real: bool = False,
             seed: int = 0, on_request: Optional[Callable] = None, A=None, B=None) -> GemmRun:
    """Set up ``A`` (``M x K``), ``B`` (``K x N``) and an empty ``C`` in a fresh counted memory and run
    :func:`tiled_matmul`.  Real mode uses random data (or the given ``A``, ``B``) and returns ``C``."""
    M, N, K = count("M", M), count("N", N), count("K", K)
    if not real and (A is not None or B is not None):
        raise ValueError(f"{'A' if A is not None else 'B'}: given arrays need real=True (shape-only mode has no data)")
    mem = GlobalMemory(real=real)
    if real:
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((M, K)) if A is None else np.asarray(A, dtype=float)
        B = rng.standard_normal((K, N)) if B is None else np.asarray(B, dtype=float)
        for name, arr, want in (("A", A, (M, K)), ("B", B, (K, N))):
            if arr.shape != want:
                raise ValueError(f"{name}: shape {arr.shape}, expected {want} for M={M}, N={N}, K={K}")
        a, b = mem.put("A", A), mem.put("B", B)
    else:
        a, b = mem.put("A", (M, K)), mem.put("B", (K, N))
    c = mem.empty("C", (M, N))
    n_requests = [0]

    def hook(kind, index, k, elements):
        n_requests[0] += 1
        if on_request is not None:
            on_request(kind, index, k, elements)

    with single_threaded_blas():
        padded = tiled_matmul(mem, a, b, c, BM, BN, BK, group=group, wave=wave, on_request=hook)
    t = mem.tally
    return GemmRun(t.reads, t.writes, t.flops, padded, t.by_array["A"][0], t.by_array["B"][0],
                   n_requests[0], mem.result(c))
