"""Course adapter (lecture 8): the hardware and the SM pipeline simulator the lecture scripts use.

``H100`` is lecture 1's spec (``clock_ghz``, ``hbm_tbs``, ``sms``, ``tc_flops_per_sm_clk()``,
``tc_peak()``); ``pipeline_sim`` runs :func:`numeric.pipeline.simulate` and returns its figures as a
dict.  Importing this module puts ``../lecture01`` on ``sys.path`` (the scripts add only their own
folder), so ``console`` and ``hw_specs`` import after it.  No logic of its own.
"""

from __future__ import annotations

import os
import sys

_LECTURE01 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lecture01")
if _LECTURE01 not in sys.path:
    sys.path.insert(1, _LECTURE01)

from hw_specs import H100  # noqa: E402

from numeric.pipeline import simulate  # noqa: E402

__all__ = ["H100", "pipeline_sim"]


def pipeline_sim(n, t_comp, t_x, latency, stages, jitter=0.0, seed=0, issue_ahead=True, tile_bytes=1.0) -> dict:
    """Simulate ``n`` tiles through one SM's load -> compute loop (see :mod:`numeric.pipeline`).
    Returns ``busy`` (tensor-core busy fraction), ``makespan`` (s), ``channel_busy``,
    ``mean_inflight_bytes`` and ``max_inflight_bytes``.  Bad input raises
    :class:`base.errors.BadInput` (a ``ValueError``) naming the parameter."""
    return simulate(n, t_comp, t_x, latency, stages, issue_ahead=issue_ahead, jitter=jitter, seed=seed,
                    tile_bytes=tile_bytes).as_dict()
