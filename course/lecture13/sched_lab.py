"""Course adapter (lecture 13): the schedule space and the analytic GEMM time model.

Everything comes from :mod:`tuning.schedule` (the space, the launch rules, the time model); the
per-block resources are lecture 10's (``../lecture10/kernel_lab``), which this module puts on
``sys.path`` itself.  No logic of its own.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _d in ("lecture10", "lecture01"):
    _p = os.path.join(os.path.dirname(_HERE), _d)
    if _p not in sys.path:
        sys.path.insert(1, _p)

from kernel_lab import regs_per_thread, smem_bytes  # noqa: E402,F401

from tuning.schedule import (H100_TC, LAUNCH_RULES, SPACE, GemmConfig, all_configs,  # noqa: E402,F401
                             gemm_time, launch_failures, landscape, penalty_matrix, sensitivity,
                             static_valid, times_for_shape)

__all__ = ["SPACE", "GemmConfig", "H100_TC", "all_configs", "gemm_time", "static_valid", "launch_failures",
           "LAUNCH_RULES", "smem_bytes", "regs_per_thread", "times_for_shape", "landscape", "penalty_matrix",
           "sensitivity"]
