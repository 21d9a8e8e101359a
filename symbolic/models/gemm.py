"""Tiled GEMM cost formulas: ``C = A B`` with ``A`` ``M x K``, ``B`` ``K x N``, tiles ``B_M x B_N``, K-steps ``B_K``.

Counting convention (``docs/conventions.md`` §4.1, as for attention §1.0): elements moved between
global memory and one block's on-chip memory; bytes = elements x the FP16 element size
(:func:`base.dtypes.element_bytes`).  The loop nest, which :func:`numeric.gemm.tiled_matmul` runs::

    for i in range(t_m):                # t_m = ceil(M / B_M) tile rows
      for j in range(t_n):              # t_n = ceil(N / B_N) tile columns
        for k in range(t_k):            # t_k = ceil(K / B_K) K-steps
          load A[i-block rows, k-block]     rows_i  x depth_k elements
          load B[k-block, j-block cols]     depth_k x cols_j  elements
          acc += A_tile @ B_tile            2 rows_i cols_j depth_k useful FLOPs
        store C[i-block, j-block]           rows_i  x cols_j  elements

with ``rows_i = min(B_M, M - i B_M)`` (the last block is partial: loads are masked, so the counts are
of the valid elements), ``depth_k = min(B_K, K - k B_K)``, ``cols_j = min(B_N, N - j B_N)``.  Every
partition sum collapses exactly (``sum_i rows_i = M``, :func:`partition_sum`), so

    reads  = t_n M K + t_m K N      (A re-read by each tile column, B by each tile row)
    writes = M N
    flops  = 2 M N K                (useful);   padded: 2 (t_m B_M)(t_n B_N)(t_k B_K) - the tensor cores' work

Resources of one block (``docs/conventions.md`` §4.2): shared memory ``(B_M + B_N) B_K`` elements a
stage, ``s (B_M + B_N) B_K`` in all (:func:`smem_elements`, :func:`smem_bytes`); registers per thread
by the course's estimate ``(B_M/w_y)(B_N/w_x)/32 + 40`` (:func:`regs_estimate`).  These are the exact
definitions; the schedule space of :mod:`tuning.schedule` applies them to arrays of configs.

Lower bound (Kwasniewski et al., *Red-Blue Pebbling Revisited* (COSMA), SC'19, Theorem 1;
``docs/conventions.md`` §4.3): any schedule with a fast memory of ``S`` elements moves
``Q >= 2 M N K / sqrt(S) + M N`` elements.  A block's fast memory is its accumulator plus its
pipeline, ``S_tile = B_M B_N + s (B_M + B_N) B_K``; :func:`cosma_gap` is a config's traffic over the
bound at ``S_tile`` (>= 1).

Parameters (each a :class:`~symbolic.params.Param`, typed as shown: ``--at M=4096,B_M=128``):
``M, N, K`` the GEMM's sizes; ``B_M, B_N, B_K`` the tile and K-step; ``s`` the pipeline stages;
``w_y, w_x`` the warp grid; ``S`` the fast memory of the lower bound.  Derivation-only symbols (the
quotients ``t_m, t_n, t_k`` of the divisible form) are ``sympy.Dummy``.
"""

from __future__ import annotations

import math

import sympy as sp

from base import validate
from base.dtypes import element_bytes

from ..asymptotics import Regime
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..partition import partition_sum
from ..registry import defines

__all__ = ["M", "N", "K", "B_M", "B_N", "B_K", "s", "w_y", "w_x", "S", "COSMA_SOURCE",
           "partition_sum", "gemm_counts", "smem_elements", "smem_bytes", "regs_estimate", "gemm_resources",
           "cosma_bound", "tile_fast_memory", "cosma_gap", "gemm_traffic", "tiled", "resources", "cosma"]

# ------------------------------------------------------------------------------------- parameters
# the matrices of C = A B, and the lower bound's I/O and fast memory: names in the notes, not parameters
_A, _B, _C, _Q, _S = (symbol(n) for n in ("A", "B", "C", "Q", "S"))

M = param("M", note("rows of ", _A, " and ", _C), latex="M")
N = param("N", note("columns of ", _B, " and ", _C), latex="N")
K = param("K", note("the reduction dimension: columns of ", _A, ", rows of ", _B), latex="K")
B_M = param("B_M", note("tile rows: the rows of ", _C, " one block computes"), latex="B_M")
B_N = param("B_N", note("tile columns: the columns of ", _C, " one block computes"), latex="B_N")
B_K = param("B_K", note("K-step: the depth of the ", _A, " and ", _B, " chunks a block loads per step"), latex="B_K")
s = param("s", note("pipeline stages in shared memory (", code("num_stages"), ")"), latex="s")
w_y = param("w_y", note("warps along ", M, " (rows of the block's warp grid)"), latex="w_y")
w_x = param("w_x", note("warps along ", N, " (columns of the block's warp grid)"), latex="w_x")
S = param("S", "fast memory in elements (the lower bound's fast memory)", latex="S")

COSMA_SOURCE = "Kwasniewski et al. 2019, Red-Blue Pebbling Revisited (COSMA), SC'19, Theorem 1"


# ------------------------------------------------------------------------------------- counts
def gemm_counts(M=M, N=N, K=K, B_M=B_M, B_N=B_N, B_K=B_K) -> dict:
    """Reads, writes, useful and padded FLOPs of the tiled loop nest (module docstring), as expressions."""
    t_m, t_n, t_k = sp.ceiling(M / B_M), sp.ceiling(N / B_N), sp.ceiling(K / B_K)
    # sum_i sum_j sum_k rows_i depth_k  (A)  and  depth_k cols_j  (B): each inner partition sum collapses
    reads_a = t_n * partition_sum(M, B_M) * partition_sum(K, B_K)
    reads_b = t_m * partition_sum(K, B_K) * partition_sum(N, B_N)
    writes = partition_sum(M, B_M) * partition_sum(N, B_N)
    flops = 2 * partition_sum(M, B_M) * partition_sum(N, B_N) * partition_sum(K, B_K)
    padded = 2 * (t_m * B_M) * (t_n * B_N) * (t_k * B_K)
    return {"reads": reads_a + reads_b, "writes": writes, "flops": flops, "flops_padded": padded,
            "reads_A": reads_a, "reads_B": reads_b}


# ------------------------------------------------------------------------------------- resources
def smem_elements(B_M, B_N, B_K, s=1):
    """Shared memory of an ``s``-deep pipeline in elements: ``s (B_M + B_N) B_K`` (a K-step stages a
    ``B_M x B_K`` chunk of A and a ``B_K x B_N`` chunk of B; ``docs/conventions.md`` §4.2).  Ints,
    NumPy arrays or SymPy symbols."""
    return s * (B_M + B_N) * B_K


def smem_bytes(B_M, B_N, B_K, s):
    """:func:`smem_elements` x the FP16 element size (FP16/BF16 operands)."""
    return smem_elements(B_M, B_N, B_K, s) * element_bytes("fp16")


def regs_estimate(B_M, B_N, w_y, w_x):
    """The course's register estimate per thread (``docs/conventions.md`` §4.2): the warp tile's
    ``(B_M/w_y)(B_N/w_x)`` FP32 accumulators over 32 threads, plus 40 for addresses and loop state.
    Works on ints, NumPy arrays and SymPy symbols (``//`` is ``floor``)."""
    return (B_M // w_y) * (B_N // w_x) // 32 + 40


def gemm_resources(B_M=B_M, B_N=B_N, B_K=B_K, s=s, w_y=w_y, w_x=w_x) -> dict:
    """Shared memory (elements, per stage and in all; bytes) and registers per thread of one block."""
    return {"smem_stage": smem_elements(B_M, B_N, B_K, 1), "smem_total": smem_elements(B_M, B_N, B_K, s),
            "smem_bytes": smem_bytes(B_M, B_N, B_K, s), "regs_per_thread": regs_estimate(B_M, B_N, w_y, w_x)}


# ------------------------------------------------------------------------------------- lower bound
def cosma_bound(M=M, N=N, K=K, S=S) -> sp.Expr:
    """``2 M N K / sqrt(S) + M N`` elements (COSMA Theorem 1)."""
    return 2 * M * N * K / sp.sqrt(S) + M * N


def tile_fast_memory(B_M=B_M, B_N=B_N, B_K=B_K, s=s):
    """On-chip elements one block holds: its ``B_M x B_N`` accumulator and its ``s``-deep pipeline."""
    return B_M * B_N + smem_elements(B_M, B_N, B_K, s)


def cosma_gap(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, s: int = 1, S: int | None = None) -> float:
    """The tiled schedule's traffic (reads + writes) over the COSMA bound at ``S`` (default: the tile's
    fast memory :func:`tile_fast_memory`).  A float: the bound is irrational.  :class:`~base.errors.BadInput`
    names a bad parameter."""
    s = validate.positive_int("s", s)
    c = gemm_traffic(M, N, K, B_M, B_N, B_K)
    M, N, K = int(M), int(N), int(K)                 # validated by gemm_traffic
    S = tile_fast_memory(int(B_M), int(B_N), int(B_K), s) if S is None else validate.positive_int("S", S)
    return (c["reads"] + c["writes"]) / (2 * M * N * K / math.sqrt(S) + M * N)


def gemm_traffic(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int) -> dict:
    """Exact counts at a point (ints; ``intensity`` a Fraction): ``reads``, ``writes``, ``total``, ``flops``,
    ``flops_padded``, ``reads_A``, ``reads_B``, ``intensity`` of model ``gemm.tiled``.
    :class:`~base.errors.BadInput` names a non-positive or non-integer parameter."""
    return tiled.evaluate(M=M, N=N, K=K, B_M=B_M, B_N=B_N, B_K=B_K)


# ------------------------------------------------------------------------------------- models
@defines("gemm.tiled", "tiled C = A B (B_M x B_N tiles, K-steps B_K): global reads/writes, FLOPs useful and padded")
def tiled():
    q = gemm_counts()
    q["intensity"] = q["flops"] / ((q["reads"] + q["writes"]) * element_bytes("fp16"))
    t_m, t_n, t_k = (sp.Dummy(n, integer=True, positive=True) for n in ("t_m", "t_n", "t_k"))
    return Model("gemm.tiled", note("tiled matrix multiply ", sp.Eq(_C, _A * _B), " through global memory"), q,
                 params=(M, N, K, B_M, B_N, B_K),
                 units={"flops_padded": "FLOP", "reads_A": "elements", "reads_B": "elements",
                        "intensity": "FLOP/byte"},
                 divisible_subs={M: B_M * t_m, N: B_N * t_n, K: B_K * t_k},
                 regime=Regime(note(sp.Le(B_M, M), ", ", sp.Le(B_N, N), ", ", sp.Le(B_K, K)),
                               le=((B_M, M), (B_N, N), (B_K, K))),
                 asymptotic_quantity="total",
                 lower_bounds={note("COSMA (Theorem 1), ", _S, " elements of fast memory"): cosma_bound()},
                 defaults={"M": 4096, "N": 4096, "K": 4096, "B_M": 128, "B_N": 128, "B_K": 32},
                 source=note(COSMA_SOURCE + " (bound); the loop nest of Triton's matmul tutorial (",
                             code("docs/conventions.md"), " §4.1)"),
                 notes=("masked loads: a partial edge tile moves only its valid elements",
                        note("padded FLOPs: every tile computes ", B_M, " × ", B_N, " × ", B_K, " per K-step"),
                        note(code("intensity"), ": FLOPs per byte of traffic, FP16 elements")))


@defines("gemm.resources", "one block's shared memory per stage and in all, and registers per thread")
def resources():
    return Model("gemm.resources", "per-block resources of the tiled GEMM kernel", gemm_resources(),
                 params=(B_M, B_N, B_K, s, w_y, w_x),
                 units={"smem_stage": "elements", "smem_total": "elements", "smem_bytes": "bytes",
                        "regs_per_thread": "registers"},
                 defaults={"B_M": 128, "B_N": 128, "B_K": 32, "s": 3, "w_y": 2, "w_x": 2},
                 source=note(code("docs/conventions.md"), " §4.2: a stage holds ", (B_M + B_N) * B_K,
                             " elements (FP16); the register estimate is the course's (lecture 13)"),
                 notes=(note(code("regs_per_thread"), " is an estimate (the FP32 accumulators over 32 threads, "
                             "plus 40), not a count; the compiler decides the real figure"),))


@defines("gemm.cosma", "COSMA I/O lower bound 2 M N K / sqrt(S) + M N and the tiled schedule's gap to it")
def cosma():
    c = gemm_counts()
    S_tile = tile_fast_memory()
    return Model("gemm.cosma", note("I/O lower bound for ", sp.Eq(_C, _A * _B), " with ", _S,
                                    " elements of fast memory"),
                 {"fast_memory_tile": S_tile},
                 params=(B_M, B_N, B_K, s), units={"fast_memory_tile": "elements"},
                 # the bound is in M, N, K and S, which gemm.cosma leaves free: its names are notes' symbols
                 lower_bounds={note("COSMA (Theorem 1), the least I/O ", _Q, " with ", _S, " elements of fast memory"):
                               cosma_bound(),
                               note("gap (a ratio, not elements): the tiled traffic over the bound with ",
                                    code("fast_memory_tile"), " elements of fast memory"):
                                   (c["reads"] + c["writes"]) / cosma_bound(S=S_tile)},
                 defaults={"B_M": 128, "B_N": 128, "B_K": 32, "s": 3}, source=COSMA_SOURCE,
                 notes=(note(code("fast_memory_tile"), ": the block's ", B_M, " × ", B_N, " accumulator plus its ", s,
                             "-stage pipeline"),))
