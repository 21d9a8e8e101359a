"""Course adapter (lecture 10): the tiled-GEMM kernel's resource accounting and counted execution.

Re-exports from the toolkit: the warp layout and per-block resources of :mod:`symbolic.schedule`
(shared memory of a ``stages``-deep pipeline, the register estimate), the H100 figures, the tiled
GEMM formulas of :mod:`symbolic.gemm` and the counting executor of :mod:`numeric.gemm`.  No logic of
its own.  Importing it puts ``../lecture01`` on ``sys.path`` (for ``console``).
"""

from __future__ import annotations

import os
import sys

_LECTURE01 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lecture01")
if _LECTURE01 not in sys.path:
    sys.path.insert(1, _LECTURE01)

from numeric.gemm import run_gemm, tiled_matmul  # noqa: E402,F401
from symbolic.gemm import cosma_gap, gemm_traffic  # noqa: E402,F401
from symbolic.hardware import H100  # noqa: E402,F401
from symbolic.schedule import (DTYPE_BYTES, MMA_TILE, WARP_GRID, blocks_per_sm,  # noqa: E402,F401
                               regs_estimate, regs_per_thread, smem_bytes, smem_elements)

__all__ = ["H100", "DTYPE_BYTES", "MMA_TILE", "WARP_GRID", "blocks_per_sm", "regs_estimate", "regs_per_thread",
           "smem_bytes", "smem_elements", "gemm_traffic", "cosma_gap", "run_gemm", "tiled_matmul"]
