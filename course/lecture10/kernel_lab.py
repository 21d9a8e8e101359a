"""Course adapter (lecture 10): the tiled-GEMM kernel's resource accounting and counted execution.

Re-exports from the toolkit: the per-block resources of :mod:`symbolic.models.gemm` (shared memory
of a ``stages``-deep pipeline, the register estimate - model ``gemm.resources``), the warp layout and
occupancy of the schedule space :mod:`tuning.schedule`, the H100 figures, the tiled GEMM formulas of
:mod:`symbolic.models.gemm` and the counting executor of :mod:`numeric.gemm`.  No logic of its own.
Element sizes come from the one table, :func:`base.dtypes.element_bytes` (``element_bytes("fp16")``
is 2; re-exported here as ``element_bytes``).
Importing it puts ``../lecture01`` on ``sys.path`` (for ``console``).
"""

from __future__ import annotations

import os
import sys

_LECTURE01 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lecture01")
if _LECTURE01 not in sys.path:
    sys.path.insert(1, _LECTURE01)

from base.dtypes import element_bytes  # noqa: E402,F401
from numeric.gemm import run_gemm, tiled_matmul  # noqa: E402,F401
from symbolic.hardware import H100  # noqa: E402,F401
from symbolic.models.gemm import (cosma_gap, gemm_traffic, regs_estimate, smem_bytes,  # noqa: E402,F401
                                  smem_elements)
from tuning.schedule import MMA_TILE, WARP_GRID, blocks_per_sm, regs_per_thread  # noqa: E402,F401

__all__ = ["H100", "element_bytes", "MMA_TILE", "WARP_GRID", "blocks_per_sm", "regs_estimate", "regs_per_thread",
           "smem_bytes", "smem_elements", "gemm_traffic", "cosma_gap", "run_gemm", "tiled_matmul"]
