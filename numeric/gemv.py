"""Tiled matrix-vector executor: ``y = A x`` tile row by tile row, counting every element moved.

One program per tile row of ``B_M`` rows of ``A``: it loops over the ``ceil(K / B_K)`` K-steps, loading
its ``A`` block and the matching chunk of ``x`` each step (a partial edge block is a masked load: only its
valid elements move), accumulates ``acc += A_block @ x_chunk`` on chip, and stores its rows of ``y`` once.
That is the ``gemv`` of NVIDIA's cuBLAS Library (``cublas<t>gemv()``, ``alpha = 1, beta = 0``).

Two modes, one loop, on the counted :class:`~numeric.memory.GlobalMemory` (its loads and stores tally
the elements moved, its ``matmul`` the FLOPs, ``2`` per element of an ``A`` block):

* real mode (``real=True``) loads NumPy slices, computes ``y`` (equal to ``A @ x``; exactly so for small
  integer-valued data) and returns it;
* count-only mode (``real=False``, the default) runs the same loop on
  :class:`~numeric.memory.Phantom` tiles: it allocates nothing, so any size is fine (beyond int64
  too) whose loop fits the step budget.

Work is refused up front, with :class:`~base.errors.BadInput` naming a parameter, when it exceeds a
budget: ``max_elements`` elements of ``A`` in real mode, ``max_steps`` loop steps (tile rows x K-steps)
in either mode.  Counts are exact Python ints.

This module imports only :mod:`base`, :mod:`numeric.memory` and NumPy: it is the independent side of
``verify/checks/gemv.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from base import validate
from base.errors import BadInput

from .memory import GlobalMemory, Phantom

__all__ = ["GemvRun", "run_gemv", "MAX_ELEMENTS", "MAX_STEPS"]

#: real mode: at most this many elements of A (float64: 256 MiB)
MAX_ELEMENTS = 1 << 25
#: either mode: at most this many loop steps (tile rows x K-steps)
MAX_STEPS = 1 << 22


@dataclass
class GemvRun:
    """Counts of one run (exact ints) and, in real mode, ``y``."""

    reads: int
    writes: int
    flops: int
    reads_A: int
    reads_x: int
    steps: int
    y: Optional[np.ndarray]

    def counts(self) -> dict:
        return {"reads": self.reads, "writes": self.writes, "flops": self.flops,
                "reads_A": self.reads_A, "reads_x": self.reads_x}


def _budget(M: int, K: int, B_M: int, B_K: int, real: bool, max_elements: int, max_steps: int) -> int:
    tiles, ksteps = -(-M // B_M), -(-K // B_K)
    steps = tiles * ksteps
    if steps > max_steps:
        name = "B_M" if tiles >= ksteps else "B_K"
        raise BadInput(name, f"{tiles:,} tile rows x {ksteps:,} K-steps = {steps:,} loop steps exceed the budget "
                             f"of {max_steps:,} (max_steps); take a larger {name} or raise max_steps")
    if real and M * K > max_elements:
        name = "M" if M >= K else "K"
        raise BadInput(name, f"real mode would hold M K = {M * K:,} elements of A, over the budget of "
                             f"{max_elements:,} (max_elements); use real=False (count-only) or raise max_elements")
    return steps


def run_gemv(M: int, K: int, B_M: int, B_K: int, *, real: bool = False, A=None, x=None, seed: int = 0,
             max_elements: int = MAX_ELEMENTS, max_steps: int = MAX_STEPS) -> GemvRun:
    """Run the tiled ``y = A x`` (module docstring) with ``A`` ``M x K`` in ``B_M``-row tiles and
    ``B_K``-column K-steps.  Real mode takes ``A`` and ``x`` when given (else random normal data from
    ``seed``) and returns ``y``; count-only mode takes no arrays."""
    M, K = validate.positive_int("M", M), validate.positive_int("K", K)
    B_M, B_K = validate.positive_int("B_M", B_M), validate.positive_int("B_K", B_K)
    max_elements = validate.positive_int("max_elements", max_elements)
    max_steps = validate.positive_int("max_steps", max_steps)
    real = validate.flag("real", real)
    if not real and (A is not None or x is not None):
        raise BadInput("A" if A is not None else "x", "given arrays need real=True (count-only mode has no data)")
    steps = _budget(M, K, B_M, B_K, real, max_elements, max_steps)

    mem = GlobalMemory(real)
    if real:
        rng = np.random.default_rng(validate.integer("seed", seed, least=0))
        A = rng.standard_normal((M, K)) if A is None else validate.real_array("A", A).astype(float)
        x = rng.standard_normal(K) if x is None else validate.real_array("x", x).astype(float)
        for name, arr, want in (("A", A, (M, K)), ("x", x, (K,))):
            if arr.shape != want:
                raise BadInput(name, f"shape {arr.shape}, expected {want} for M={M}, K={K}")
    A, x = mem.put("A", A if real else (M, K)), mem.put("x", x if real else (K,))
    y = mem.empty("y", (M,))

    for i0 in range(0, M, B_M):
        rows = slice(i0, min(i0 + B_M, M))
        n = rows.stop - rows.start
        acc = np.zeros(n) if real else Phantom((n,))          # on chip
        for k0 in range(0, K, B_K):
            ks = slice(k0, min(k0 + B_K, K))
            acc = acc + mem.matmul(mem.load(A, (rows, ks)), mem.load(x, ks))
        mem.store(y, rows, acc)
    t = mem.tally
    return GemvRun(t.reads, t.writes, t.flops, t.by_array["A"][0], t.by_array["x"][0], steps, mem.result(y))
