"""The time model's HBM reads of A and B through the L2: the exact LRU count, or a stated bound.

The counts live in :mod:`symbolic.models.gemm_l2` and :mod:`symbolic.gemm_lru` (model ``gemm.l2.lru``):
for the launch order's lockstep waves feeding an LRU L2 of ``capacity`` elements, the misses are
counted exactly, without simulating, in O(waves) NumPy work.  :func:`hbm_reads_many` prices many
tilings of one problem at once (the time model: every config of a shape in one pass) and says what
each figure is:

* ``"exact"`` - the LRU's misses, exactly (what :mod:`numeric.l2cache` simulates): whenever ``M K + K N``
  fits (then ``M K + K N``), or the launch has at most :data:`TIME_MODEL_WAVES` waves and the L2
  holds one K-step of a wave (:func:`symbolic.models.gemm_l2.step_footprint`);
* ``"upper bound"`` - otherwise: beyond :data:`TIME_MODEL_WAVES` waves,
  :func:`~symbolic.models.gemm_l2.wave_reads` (no reuse across waves, an exact upper bound of the LRU
  when one step fits); an L2 smaller than one step, the requested elements themselves
  (:func:`symbolic.models.gemm.gemm_traffic`'s reads: every request a miss).

On the H100/H200 a step never overflows the 50 MB L2: a wave's step is at most ``P (B_M + B_N) B_K`` elements,
``P`` = SMs x co-resident blocks, and the blocks' shared memory holds ``(B_M + B_N) B_K`` elements per stage
each, so a step is at most 132 x 228 KiB / 2 bytes = 15.4 M elements < 25 M.  ``verify``'s
``gemm.l2.time_model`` property checks each figure against its claim; ``python -m verify --l2-draws N`` prints
the sweep.

Parameters are the models': ``M, N, K, B_M, B_N, B_K``, ``G_M`` (Triton's GROUP_M), ``P`` (programs per wave),
and ``capacity`` (elements).  Counts are elements.
"""

from __future__ import annotations

import numpy as np

from base import validate
from base.errors import BadInput
from symbolic.gemm_lru import lru_reads_many
from symbolic.models.gemm import gemm_traffic
from symbolic.models.gemm_l2 import compulsory_reads, wave_reads

__all__ = ["TIME_MODEL_WAVES", "EXACT", "UPPER_BOUND", "hbm_reads", "hbm_reads_many"]

#: the most waves of one tiling the time model counts exactly (beyond: the no-reuse upper bound)
TIME_MODEL_WAVES = 1 << 14

#: what a figure of :func:`hbm_reads_many` is
EXACT, UPPER_BOUND = "exact", "upper bound"

_pos = validate.positive_int


def hbm_reads(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int, capacity: int) -> int:
    """HBM reads (elements) of one tiling through an LRU L2 of ``capacity`` elements (see :func:`hbm_reads_many`)."""
    return hbm_reads_many(M, N, K, [B_M], [B_N], [B_K], [G_M], [P], capacity)[0]


def _int_column(name, values) -> np.ndarray:
    a = np.asarray(values)
    if a.size == 0:
        return a.astype(np.int64).reshape(0)
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise BadInput(name, f"must be a sequence of positive integers, got {values!r}")
    if (a < 1).any():
        raise BadInput(name, f"must be >= 1, got {int(a.min())}")
    return a.astype(np.int64)


def hbm_reads_many(M: int, N: int, K: int, B_M, B_N, B_K, G_M, P, capacity: int, kinds: bool = False):
    """HBM reads for many tilings of one problem (equal-length integer sequences ``B_M, B_N, B_K, G_M, P``):
    the exact LRU count (:func:`symbolic.gemm_lru.lru_reads_many`, all tilings in one pass) where the module's
    rules allow, else the stated upper bound.  With ``kinds=True`` returns ``(values, kinds)``, each kind
    :data:`EXACT` or :data:`UPPER_BOUND`."""
    M, N, K, capacity = _pos("M", M), _pos("N", N), _pos("K", K), _pos("capacity", capacity)
    cols = [_int_column(n, v) for n, v in (("B_M", B_M), ("B_N", B_N), ("B_K", B_K), ("G_M", G_M), ("P", P))]
    if len({len(c) for c in cols}) != 1:
        raise BadInput("B_M", "B_M, B_N, B_K, G_M and P must have one value per tiling")
    bm, bn, bk, gm, p = cols
    n = len(bm)
    comp = compulsory_reads(M, N, K)
    if comp <= capacity:
        values, what = [comp] * n, [EXACT] * n
    else:
        values = lru_reads_many(M, N, K, bm, bn, bk, gm, p, capacity, budget=TIME_MODEL_WAVES, refuse=False)
        what = [EXACT] * n
        for i in [i for i, v in enumerate(values) if v is None]:
            args = (int(bm[i]), int(bn[i]), int(gm[i]), int(p[i]))
            tiles = -(-M // args[0]) * -(-N // args[1])
            if -(-tiles // min(args[3], tiles)) > TIME_MODEL_WAVES:      # beyond the budget: no reuse across waves
                values[i] = wave_reads(M, N, K, *args)
            else:                                                        # the L2 holds less than one step
                values[i] = gemm_traffic(M, N, K, args[0], args[1], int(bk[i]))["reads"]
            what[i] = UPPER_BOUND
    return (values, what) if kinds else values
