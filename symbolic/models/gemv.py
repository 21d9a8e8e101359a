"""Tiled matrix-vector product ``y = A x``: ``A`` is ``M x K``, row tiles of ``B_M`` rows, K-steps of ``B_K``.

The operation is BLAS level 2 ``gemv`` (``y = alpha A x + beta y``; here ``alpha = 1, beta = 0``), as in
NVIDIA's cuBLAS Library documentation, section "cublas<t>gemv()".  Counting convention: elements moved
between global memory and one program's on-chip memory (registers / shared memory); a masked load of a
partial edge tile moves only its valid elements.  The loop nest, which :func:`numeric.gemv.run_gemv` runs::

    for i in range(t_m):                    # t_m = ceil(M / B_M) tile rows, one program each
      acc = 0                               # B_M partial sums, on chip
      for k in range(t_k):                  # t_k = ceil(K / B_K) K-steps
        load A[i-block rows, k-block]       rows_i x depth_k elements
        load x[k-block]                     depth_k elements
        acc += A_tile @ x_chunk             2 rows_i depth_k FLOPs (a multiply and an add each)
      store y[i-block rows]                 rows_i elements

with ``rows_i = min(B_M, M - i B_M)`` and ``depth_k = min(B_K, K - k B_K)``.

Derivation (by hand).  The blocks partition the sizes: every block but the last is full, the last holds
the rest, so ``sum_i rows_i = (t_m - 1) B_M + (M - (t_m - 1) B_M) = M`` and likewise
``sum_k depth_k = K``.  Hence

    reads  = sum_i sum_k (rows_i depth_k + depth_k)
           = (sum_i rows_i)(sum_k depth_k) + t_m (sum_k depth_k)
           = M K + ceil(M / B_M) K              (A once; x once per tile row)
    writes = sum_i rows_i = M                   (each y row stored once)
    flops  = 2 sum_i sum_k rows_i depth_k = 2 M K

``B_K`` moves no element: it only sets how the same traffic is cut into steps.  When ``B_M`` divides
``M`` (``M = B_M t``), ``reads = M K (1 + 1/B_M)``.  Any schedule must read every element of ``A`` and
``x`` once and write ``y`` once, so ``M K + K + M`` is the compulsory traffic; the tiled schedule attains
it for ``B_M >= M`` (one tile row).  Arithmetic intensity (FLOPs per byte of traffic, Williams, Waterman
and Patterson, "Roofline: an insightful visual performance model for multicore architectures",
CACM 52(4), 2009, section 2) is below ``1`` FLOP/byte in FP16 for every block size: gemv is memory-bound.
"""

from __future__ import annotations

import sympy as sp

from base.dtypes import element_bytes

from ..asymptotics import Regime
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..partition import partition_sum
from ..registry import defines

__all__ = ["M", "K", "B_M", "B_K", "gemv_tiled"]

# the matrix and vectors of y = A x: names in the notes, not parameters
_A, _x, _y = symbol("A"), symbol("x"), symbol("y")

M = param("M", note("rows of ", _A, " and of ", _y))
K = param("K", note("columns of ", _A, " and length of ", _x, " (the reduction dimension)"))
B_M = param("B_M", note("rows of ", _A, " in one tile: the ", _y, " rows one program owns"))
B_K = param("B_K", note("columns of ", _A, " per K-step: the ", _x, " chunk loaded with each ", _A, " block"))

SOURCE = note("NVIDIA cuBLAS Library, ", code("cublas<t>gemv()"), " (the operation); Williams, Waterman, Patterson, "
              "Roofline, CACM 52(4) 2009, section 2 (operational intensity)")


def _counts() -> dict:
    rows, depth = partition_sum(M, B_M), partition_sum(K, B_K)       # sum_i rows_i, sum_k depth_k
    t_m = sp.ceiling(M / B_M)
    reads = rows * depth + t_m * depth                                 # A blocks + x chunks
    writes = rows                                                      # y rows, once
    flops = 2 * rows * depth
    return {"reads": reads, "writes": writes, "flops": flops,
            "intensity": flops / ((reads + writes) * element_bytes("fp16"))}


@defines("gemv.tiled", "tiled y = A x (row tiles of B_M, K-steps of B_K): global reads/writes, FLOPs, intensity")
def gemv_tiled():
    t = sp.Dummy("t_m", integer=True, positive=True)
    u = sp.Dummy("t_k", integer=True, positive=True)
    return Model(
        "gemv.tiled", note("tiled matrix-vector product ", sp.Eq(_y, _A * _x), " through global memory"), _counts(),
        params=(M, K, B_M, B_K),
        units={"intensity": "FLOP/byte"},
        divisible_subs={M: B_M * t, K: B_K * u},
        regime=Regime(note(sp.Le(B_M, M), ", ", sp.Le(B_K, K)), le=((B_M, M), (B_K, K))),
        asymptotic_quantity="total",
        lower_bounds={note("compulsory: ", _A, " and ", _x, " read once, ", _y, " written once"): M * K + K + M},
        defaults={"M": 4096, "K": 4096, "B_M": 64, "B_K": 128},
        source=SOURCE,
        notes=("masked loads: a partial edge tile moves only its valid elements",
               note(_x, " is re-read once per tile row: ", sp.ceiling(M / B_M) * K, " elements"),
               note(B_K, " does not change the counts, only the number of steps")),
    )
