"""Tiled GEMM cost formulas: ``C = A B`` with ``A`` ``M x K``, ``B`` ``K x N``, tiles ``BM x BN``, K-steps ``BK``.

Counting convention (as for attention, ``shared/REFERENCE.md`` §1 and §4): elements moved between
global memory and the block's on-chip memory; bytes = elements x 2 (FP16).  The loop structure, which
:func:`numeric.gemm.tiled_matmul` runs::

    for i in range(tm):                 # tm = ceil(M / BM) tile rows
      for j in range(tn):               # tn = ceil(N / BN) tile columns
        for k in range(tk):             # tk = ceil(K / BK) K-steps
          load A[i-block rows, k-block]     rows_i  x depth_k elements
          load B[k-block, j-block cols]     depth_k x cols_j  elements
          acc += A_tile @ B_tile            2 rows_i cols_j depth_k useful FLOPs
        store C[i-block, j-block]           rows_i  x cols_j  elements

with ``rows_i = min(BM, M - i BM)`` (the last block is partial: loads are masked, so the counts are of
the valid elements), ``depth_k = min(BK, K - k BK)``, ``cols_j = min(BN, N - j BN)``.  Every partition
sum collapses exactly (``sum_i rows_i = M``, :func:`partition_sum`), so

    reads  = tn M K + tm K N        (A re-read by each tile column, B by each tile row)
    writes = M N
    flops  = 2 M N K                (useful);   padded: 2 (tm BM)(tn BN)(tk BK) - the tensor cores' work

Resources of one block (lecture 10 §8): shared memory ``(BM + BN) BK`` elements a stage,
``stages (BM + BN) BK`` in all; registers by the course's estimate ``(BM/wy)(BN/wx)/32 + 40``
(the definitions live in :mod:`symbolic.schedule`; here they are applied to symbols).

Lower bound (Kwasniewski et al., *Red-blue pebbling revisited*, COSMA, SC'19, Theorem 1; REFERENCE §4):
any schedule with a fast memory of ``S`` elements moves ``Q >= 2 M N K / sqrt(S) + M N`` elements.  A
block's fast memory is its accumulator plus its pipeline, ``S_tile = BM BN + stages (BM + BN) BK``;
:func:`cosma_gap` is a config's traffic over the bound at ``S_tile`` (>= 1).
"""

from __future__ import annotations

import math

import sympy as sp

from .asymptotics import Regime
from .gemm_args import positive_int
from .model import Model
from .registry import register
from .schedule import DTYPE_BYTES, regs_estimate, smem_elements
from .symbols import sym

__all__ = ["Mg", "Ng", "Kg", "BM", "BN", "BK", "stages", "wy", "wx", "S_fast", "partition_sum", "gemm_counts",
           "gemm_resources", "cosma_bound", "tile_fast_memory", "cosma_gap", "gemm_traffic", "COSMA_SOURCE"]

# GEMM sizes get their own names (``M`` is the attention models' on-chip SRAM); LaTeX shows M, N, K.
Mg = sym("M_g", latex="M")          # rows of A and C
Ng = sym("N_g", latex="N")          # columns of B and C
Kg = sym("K_g", latex="K")          # the reduction dimension
BM = sym("B_M", latex="B_M")        # tile rows
BN = sym("B_N", latex="B_N")        # tile columns
BK = sym("B_K", latex="B_K")        # K-step
stages = sym("s_g", latex="s")      # pipeline stages in shared memory
wy = sym("w_y", latex="w_y")        # warps along M
wx = sym("w_x", latex="w_x")        # warps along N
S_fast = sym("S_f", latex="S")      # fast memory, elements (for the lower bound)

COSMA_SOURCE = "Kwasniewski et al. 2019, Red-blue pebbling revisited (COSMA), SC'19, Theorem 1"
_i = sp.Symbol("i", integer=True, nonnegative=True)


def partition_sum(size, block):
    """``sum_{i < ceil(size/block)} min(block, size - i block)``: every block but the last is full, the
    last holds the rest, so the sum collapses to ``size`` (SymPy cancels it).  SymPy does not collapse
    the explicit sum itself; the tests check this form against it."""
    full = sp.ceiling(sp.sympify(size) / block) - 1
    return full * block + (size - full * block)


def gemm_counts(M=Mg, N=Ng, K=Kg, bm=BM, bn=BN, bk=BK) -> dict:
    """Reads, writes, useful and padded FLOPs of the tiled loop nest (module docstring), as expressions."""
    tm, tn, tk = sp.ceiling(M / bm), sp.ceiling(N / bn), sp.ceiling(K / bk)
    # sum_i sum_j sum_k rows_i depth_k  (A)  and  depth_k cols_j  (B): each inner partition sum collapses
    reads_a = tn * partition_sum(M, bm) * partition_sum(K, bk)
    reads_b = tm * partition_sum(K, bk) * partition_sum(N, bn)
    writes = partition_sum(M, bm) * partition_sum(N, bn)
    flops = 2 * partition_sum(M, bm) * partition_sum(N, bn) * partition_sum(K, bk)
    padded = 2 * (tm * bm) * (tn * bn) * (tk * bk)
    return {"reads": reads_a + reads_b, "writes": writes, "flops": flops, "flops_padded": padded,
            "reads_A": reads_a, "reads_B": reads_b}


def gemm_resources(bm=BM, bn=BN, bk=BK, s=stages, y=wy, x=wx) -> dict:
    """Shared memory (elements, per stage and in all; bytes) and registers per thread of one block."""
    return {"smem_stage": smem_elements(bm, bn, bk, 1), "smem_total": smem_elements(bm, bn, bk, s),
            "smem_bytes": smem_elements(bm, bn, bk, s) * DTYPE_BYTES, "regs_per_thread": regs_estimate(bm, bn, y, x)}


def cosma_bound(M=Mg, N=Ng, K=Kg, S=S_fast) -> sp.Expr:
    """``2 M N K / sqrt(S) + M N`` elements (COSMA Theorem 1)."""
    return 2 * M * N * K / sp.sqrt(S) + M * N


def tile_fast_memory(bm=BM, bn=BN, bk=BK, s=stages):
    """On-chip elements one block holds: its ``BM x BN`` accumulator and its ``stages``-deep pipeline."""
    return bm * bn + smem_elements(bm, bn, bk, s)


def cosma_gap(M: int, N: int, K: int, bm: int, bn: int, bk: int, s: int = 1, S: int | None = None) -> float:
    """The tiled schedule's traffic (reads + writes) over the COSMA bound at ``S`` (default: the tile's
    fast memory :func:`tile_fast_memory`).  A float: the bound is irrational."""
    pt = _check_point(M=M, N=N, K=K, bm=bm, bn=bn, bk=bk, s=s)
    c = gemm_traffic(pt["M"], pt["N"], pt["K"], pt["bm"], pt["bn"], pt["bk"])
    S = tile_fast_memory(pt["bm"], pt["bn"], pt["bk"], pt["s"]) if S is None else _check_point(S=S)["S"]
    M, N, K = pt["M"], pt["N"], pt["K"]
    return (c["reads"] + c["writes"]) / (2 * M * N * K / math.sqrt(S) + M * N)


def _check_point(**kw) -> dict:
    return {k: positive_int(k, v) for k, v in kw.items()}


def gemm_traffic(M: int, N: int, K: int, bm: int, bn: int, bk: int) -> dict:
    """Exact counts at a point (ints): ``reads``, ``writes``, ``flops``, ``flops_padded``, ``reads_A``, ``reads_B``.
    ``ValueError`` names a non-positive or non-integer parameter."""
    p = _check_point(M=M, N=N, K=K, bm=bm, bn=bn, bk=bk)
    return _model("gemm.tiled").evaluate(M_g=p["M"], N_g=p["N"], K_g=p["K"], B_M=p["bm"], B_N=p["bn"], B_K=p["bk"])


def _model(name):
    from .registry import get
    return get(name)


# ------------------------------------------------------------------------------------- registry
_tm, _tn, _tk = (sym("t_m", latex="t_m"), sym("t_n", latex="t_n"), sym("t_k", latex="t_k"))
_DIVISIBLE = {Mg: BM * _tm, Ng: BN * _tn, Kg: BK * _tk}
_REGIME = Regime("B_M <= M, B_N <= N, B_K <= K", le=((BM, Mg), (BN, Ng), (BK, Kg)))


@register("gemm.tiled", "tiled C = A B (BM x BN tiles, K-steps BK): global reads/writes, FLOPs useful and padded")
def _tiled():
    q = gemm_counts()
    q["intensity"] = q["flops"] / ((q["reads"] + q["writes"]) * DTYPE_BYTES)
    return Model("gemm.tiled", "tiled matrix multiply C = A B through global memory", q,
                 params=(Mg, Ng, Kg, BM, BN, BK),
                 units={"flops_padded": "FLOP", "reads_A": "elements", "reads_B": "elements",
                        "intensity": "FLOP/byte"},
                 divisible_subs=_DIVISIBLE, regime=_REGIME, asymptotic_quantity="total",
                 lower_bounds={"COSMA (Thm 1), S = fast-memory elements": cosma_bound()},
                 defaults={"M_g": 4096, "N_g": 4096, "K_g": 4096, "B_M": 128, "B_N": 128, "B_K": 32},
                 source=COSMA_SOURCE + " (bound); loop nest of lecture 10 §8 / Triton's matmul tutorial",
                 notes=("masked loads: a partial edge tile moves only its valid elements",
                        "padded FLOPs: every tile computes BM x BN x BK per K-step"))


@register("gemm.resources", "one block's shared memory per stage and in all, and registers per thread")
def _resources():
    return Model("gemm.resources", "per-block resources of the tiled GEMM kernel", gemm_resources(),
                 params=(BM, BN, BK, stages, wy, wx),
                 units={"smem_stage": "elements", "smem_total": "elements", "smem_bytes": "bytes",
                        "regs_per_thread": "registers"},
                 defaults={"B_M": 128, "B_N": 128, "B_K": 32, "s_g": 3, "w_y": 2, "w_x": 2},
                 source="REFERENCE §4 (shared memory); the course's register estimate (lecture 13)")


@register("gemm.cosma", "COSMA I/O lower bound 2 M N K / sqrt(S) + M N and the tiled schedule's gap to it")
def _cosma():
    c = gemm_counts()
    S_tile = tile_fast_memory()
    return Model("gemm.cosma", "I/O lower bound for C = A B with S elements of fast memory",
                 {"fast_memory_tile": S_tile},
                 params=(BM, BN, BK, stages), units={"fast_memory_tile": "elements"},
                 lower_bounds={"COSMA Q >= 2 M N K / sqrt(S) + M N": cosma_bound(),
                               "gap (a ratio, not elements): tiled traffic / bound at S_tile": (c["reads"] + c["writes"]) / cosma_bound(S=S_tile)},
                 defaults={"B_M": 128, "B_N": 128, "B_K": 32, "s_g": 3}, source=COSMA_SOURCE)


@register("gemm.l2", "HBM reads of A and B under the GROUP_M launch order, waves of P programs: no reuse across "
                     "waves, or all of A and B in L2")
def _l2():
    from .gemm_l2 import G_M, P_w, wave_reads_formula
    return Model("gemm.l2", "HBM reads of the tiled GEMM through an L2, by launch order (symbolic.gemm_l2)",
                 {"hbm_reads_no_reuse": wave_reads_formula(), "hbm_reads_fits": Mg * Kg + Kg * Ng},
                 params=(Mg, Ng, Kg, BM, BN, G_M, P_w),
                 units={"hbm_reads_no_reuse": "elements", "hbm_reads_fits": "elements"},
                 asymptotic_quantity="hbm_reads_fits",
                 defaults={"M_g": 4096, "N_g": 4096, "K_g": 4096, "B_M": 128, "B_N": 128, "G_M": 8, "P_w": 132},
                 source="symbolic.gemm_l2: the GROUP_M order of Triton's matmul tutorial (lecture 10 §10.2)",
                 notes=("hbm_reads_no_reuse: exact for an LRU L2 with step_footprint <= capacity < reuse_floor "
                        "(nothing survives from one wave to the next); an upper bound for any larger L2",
                        "hbm_reads_fits: exact (and a lower bound) once M K + K N elements fit in the L2",
                        "between the two, the time model's estimate is symbolic.gemm_l2.hbm_reads"))
