"""Course adapter (lecture 13): the schedule space and the analytic GEMM time model.

Everything comes from :mod:`tuning.schedule` (the space, the launch rules, the time model); the
per-block resources are lecture 10's (``../lecture10/kernel_lab``), which this module puts on
``sys.path`` itself.  No logic of its own.

**The course's names.**  The lecture's script names the knobs ``bm, bn, bk, warps, stages, group`` (its
``SPACE["bm"]``, ``getattr(config, "stages")``); the project names them as its models do,
``B_M, B_N, B_K, warps, s, G_M`` (:data:`tuning.schedule.SPACE`).  This adapter is the one place that maps
the first onto the second (:data:`COURSE_NAMES`): :data:`SPACE` and :class:`GemmConfig` here speak the
course's names, and every call hands :mod:`tuning.schedule` its own configs.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from types import MappingProxyType

_HERE = os.path.dirname(os.path.abspath(__file__))
for _d in ("lecture10", "lecture01"):
    _p = os.path.join(os.path.dirname(_HERE), _d)
    if _p not in sys.path:
        sys.path.insert(1, _p)

from kernel_lab import regs_per_thread, smem_bytes  # noqa: E402,F401

from base.errors import BadInput  # noqa: E402
from tuning import schedule  # noqa: E402
from tuning.schedule import H100_TC, LAUNCH_RULES  # noqa: E402,F401

__all__ = ["SPACE", "COURSE_NAMES", "GemmConfig", "H100_TC", "all_configs", "gemm_time", "static_valid",
           "launch_failures", "LAUNCH_RULES", "smem_bytes", "regs_per_thread", "times_for_shape", "landscape",
           "penalty_matrix", "sensitivity"]

#: the course's knob name -> the models' (tuning.schedule.SPACE's), in the space's order
COURSE_NAMES = MappingProxyType(dict(zip(("bm", "bn", "bk", "warps", "stages", "group"), schedule.SPACE)))
#: the space under the course's names (the same values, in the same order)
SPACE = MappingProxyType({course: schedule.SPACE[model] for course, model in COURSE_NAMES.items()})


class GemmConfig(schedule.GemmConfig):
    """A :class:`tuning.schedule.GemmConfig` that also answers to the course's names (``c.bm``, ``c.stages``);
    built positionally in :data:`SPACE` order, as the lecture does.  A value outside the space is
    :class:`~base.errors.BadInput` naming the course's knob."""

    def __init__(self, bm, bn, bk, warps, stages, group):
        try:
            super().__init__(bm, bn, bk, warps, stages, group)
        except BadInput as e:
            course = {m: c for c, m in COURSE_NAMES.items()}.get(e.param, e.param)
            raise BadInput(course, f"({e.param} in tuning.schedule) {e.problem}") from None

    bm = property(lambda self: self.B_M)
    bn = property(lambda self: self.B_N)
    bk = property(lambda self: self.B_K)
    stages = property(lambda self: self.s)
    group = property(lambda self: self.G_M)

    def model(self) -> schedule.GemmConfig:
        """The same config as :mod:`tuning.schedule` names it."""
        return schedule.GemmConfig(*self.as_tuple())


def _model(c):
    return c.model() if isinstance(c, GemmConfig) else c


@lru_cache(maxsize=1)
def all_configs() -> tuple:
    """All 6000 configs, in :data:`SPACE` order, as course configs."""
    return tuple(GemmConfig(*c.as_tuple()) for c in schedule.all_configs())


def gemm_time(config, M, N, K, hw=H100_TC):
    return schedule.gemm_time(_model(config), M, N, K, hw=hw)


def static_valid(config, hw=schedule.H100) -> bool:
    return schedule.static_valid(_model(config), hw=hw)


def launch_failures(config, hw=schedule.H100) -> list:
    return schedule.launch_failures(_model(config), hw=hw)


def times_for_shape(M, N, K, configs=None, hw=schedule.H100):
    return schedule.times_for_shape(M, N, K, None if configs is None else [_model(c) for c in configs], hw=hw)


landscape, penalty_matrix = schedule.landscape, schedule.penalty_matrix


def sensitivity(M, N, K, base=None, hw=schedule.H100) -> dict:
    """:func:`tuning.schedule.sensitivity` keyed by the course's knob names."""
    out = schedule.sensitivity(M, N, K, None if base is None else _model(base), hw=hw)
    return {course: out[model] for course, model in COURSE_NAMES.items()}
