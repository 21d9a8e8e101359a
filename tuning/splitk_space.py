"""A split-K schedule space over the time model: each data-parallel config of :mod:`tuning.schedule` with ``S_k``
K slices, so the model can choose split-K where a decode GEMM (``M <= 64``) leaves SMs idle.

The space is :data:`tuning.schedule.SPACE`'s six knobs (``B_M, B_N, B_K, warps, s, G_M``) times
:data:`SPLITK_VALUES` for ``S_k``; ``S_k = 1`` is the data-parallel kernel itself, priced exactly as
:func:`tuning.schedule.times_for_shape` prices it.  The data-parallel space itself is not changed (its 6000
configs, 3744 launchable, stay what the lecture-13 script depends on).

**The split-K kernel priced** is the parallel split-K of model ``gemm.splitk`` (CUTLASS's ``GemmSplitKParallel``
+ ``ReduceSplitK``, :mod:`symbolic.models.gemm_splitk`): ``S_k`` slices of ``q = floor(floor(K/B_K)/S_k)``
K-steps, the last slice the rest, each storing FP32 partials, then a reduction kernel.  A float model, not a
count; its pieces are the time model's:

1. *The GEMM kernel* is priced as the data-parallel kernel of the shape ``(M, N', K')`` with
   ``N' = (S_k - 1) t_n B_N + N`` (``t_n = ceil(N/B_N)``), which has exactly ``S_k`` times the tiles, and
   ``K' = K - (S_k - 1) q B_K``, the last (longest) slice's depth: the waves then run the slices' CTAs with
   the longest slice's K-loop (model ``gemm.splitk``'s ``wave_steps`` takes the same longest-CTA rule), the
   B operand ``K' x N'`` is about ``K x N``, and the launch-order L2 count is the time model's own.  An
   approximation: the shorter slices are priced at the last one's depth and the A slices are taken as one.
2. *The partials*: the data-parallel model writes ``M N'`` FP16 outputs; split-K writes ``S_k M N`` FP32
   partials instead; the difference in bytes is added at the HBM bandwidth.
3. *The reduction kernel*: one loaded latency plus its bytes (``S_k M N`` FP32 read, ``M N`` FP16 written)
   at the HBM bandwidth.

A kernel launch's host-side overhead is not modelled (it would favour ``S_k = 1`` by one launch).  Times are
seconds (floats).  :func:`splitk_times` prices the whole space for a shape, :func:`best_splitk` returns the
choice (the command line's ``tilebound tune --space splitk`` is meant to print it), :func:`splitk_table` a
list of choices for several shapes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from base.dtypes import element_bytes
from base.errors import BadInput
from base.validate import positive_int

from .schedule import SPACE, GemmConfig, TimeModelConstants, all_configs, time_model_constants, times_for_shape

__all__ = ["SPLITK_VALUES", "KNOBS", "SplitKConfig", "SplitKChoice", "splitk_configs", "splitk_times",
           "best_splitk", "splitk_table", "DECODE_SHAPES"]

#: the slice counts searched (1 = data-parallel)
SPLITK_VALUES = (1, 2, 3, 4, 6, 8, 16)
#: the knobs of a split-K config: the data-parallel space's, then ``S_k``
KNOBS = tuple(SPACE) + ("S_k",)
#: decode GEMMs of Llama-3-8B at batch 16 (``M = 16``): qkv (N = (32 + 2 x 8) x 128 = 6144, K = 4096),
#: k or v alone (N = 8 x 128 = 1024), o (4096 x 4096), gate_up (28672 x 4096), down (4096 x 14336); and the
#: k/v projection at batch 1 and 64 (the widths of :mod:`tuning.shapes`' Llama-3-8B)
DECODE_SHAPES = ((16, 6144, 4096), (16, 1024, 4096), (16, 4096, 4096), (16, 28672, 4096), (16, 4096, 14336),
                 (1, 1024, 4096), (64, 1024, 4096))

_FP16, _FP32 = element_bytes("fp16"), element_bytes("fp32")


@dataclass(frozen=True)
class SplitKConfig:
    """A data-parallel :class:`~tuning.schedule.GemmConfig` and its K slices ``S_k`` (one of :data:`SPLITK_VALUES`)."""

    config: GemmConfig
    S_k: int

    def __post_init__(self):
        if not isinstance(self.config, GemmConfig):
            raise BadInput("config", f"must be a GemmConfig, got {self.config!r}")
        if isinstance(self.S_k, bool) or not isinstance(self.S_k, (int, np.integer)) or int(self.S_k) not in SPLITK_VALUES:
            raise BadInput("S_k", f"must be one of {', '.join(map(str, SPLITK_VALUES))}, got {self.S_k!r}")
        object.__setattr__(self, "S_k", int(self.S_k))

    def as_tuple(self) -> tuple:
        return self.config.as_tuple() + (self.S_k,)

    def as_dict(self) -> dict:
        return dict(zip(KNOBS, self.as_tuple()))


@lru_cache(maxsize=1)
def splitk_configs() -> tuple:
    """Every config: the data-parallel configs in :func:`~tuning.schedule.all_configs` order, for each ``S_k``
    (``S_k`` the slowest)."""
    return tuple(SplitKConfig(c, s) for s, c in itertools.product(SPLITK_VALUES, all_configs()))


def _shape(M, N, K):
    return positive_int("M", M), positive_int("N", N), positive_int("K", K)


@lru_cache(maxsize=32)
def _times(M: int, N: int, K: int, k: TimeModelConstants) -> np.ndarray:
    cfgs = all_configs()
    tiles = np.array([c.as_tuple() for c in cfgs], dtype=np.int64)
    bn, bk = tiles[:, 1], tiles[:, 2]                  # SPACE order: B_M, B_N, B_K, warps, s, G_M
    bw = float(k.hw.hbm_bytes_per_s)
    out = np.empty(len(SPLITK_VALUES) * len(cfgs))
    out[:len(cfgs)] = times_for_shape(M, N, K, hw=k)
    for n, S in enumerate(SPLITK_VALUES[1:], 1):
        block = np.full(len(cfgs), np.inf)
        for BN, BK in {(int(a), int(b)) for a, b in zip(bn, bk)}:
            idx = np.flatnonzero((bn == BN) & (bk == BK))
            q = (K // BK) // S
            Kp = K - (S - 1) * q * BK                     # the last slice's depth
            Np = (S - 1) * -(-N // BN) * BN + N            # S_k times the tiles
            t = times_for_shape(M, Np, Kp, [cfgs[i] for i in idx], hw=k)
            partials = (_FP32 * S * M * N - _FP16 * M * Np) / bw
            reduction = k.latency_s + (_FP32 * S * M * N + _FP16 * M * N) / bw
            block[idx] = t + partials + reduction
        out[n * len(cfgs):(n + 1) * len(cfgs)] = block
    out.setflags(write=False)
    return out


def splitk_times(M: int, N: int, K: int, hw="H100") -> np.ndarray:
    """Model time (seconds) of every config of :func:`splitk_configs` on ``C[M,N] = A[M,K] B[K,N]`` (FP16);
    ``inf`` where the data-parallel config cannot launch.  The ``S_k = 1`` block is
    :func:`tuning.schedule.times_for_shape`'s.  Cached per shape."""
    M, N, K = _shape(M, N, K)
    return _times(M, N, K, time_model_constants(hw)).copy()


@dataclass(frozen=True)
class SplitKChoice:
    """The time model's choice on one shape: the best split-K config and the best data-parallel one."""

    shape: tuple
    best: SplitKConfig
    time: float
    dp_best: GemmConfig
    dp_time: float
    by_slices: tuple          # (S_k, best time at that S_k) for every S_k

    @property
    def S_k(self) -> int:
        return self.best.S_k

    @property
    def speedup(self) -> float:
        """Data-parallel best time over the chosen time (>= 1)."""
        return self.dp_time / self.time

    @property
    def chooses_split(self) -> bool:
        return self.best.S_k > 1


def best_splitk(M: int, N: int, K: int, hw="H100") -> SplitKChoice:
    """The fastest config of the split-K space on a shape, with the data-parallel optimum beside it."""
    M, N, K = _shape(M, N, K)
    t = _times(M, N, K, time_model_constants(hw))
    cfgs, n = splitk_configs(), len(all_configs())
    if not np.isfinite(t).any():                       # pragma: no cover - some config always launches
        raise BadInput("hw", "no config of the space launches on this GPU")
    i = int(np.argmin(t))
    j = int(np.argmin(t[:n]))
    by = tuple((S, float(t[k * n:(k + 1) * n].min())) for k, S in enumerate(SPLITK_VALUES))
    return SplitKChoice((M, N, K), cfgs[i], float(t[i]), cfgs[j].config, float(t[j]), by)


def splitk_table(shapes: Iterable[Sequence[int]] = DECODE_SHAPES, hw="H100") -> list[SplitKChoice]:
    """:func:`best_splitk` for each shape ``(M, N, K)``."""
    out = []
    for s in shapes:
        try:
            M, N, K = s
        except (TypeError, ValueError):
            raise BadInput("shape", f"a shape is (M, N, K), got {s!r}") from None
        out.append(best_splitk(M, N, K, hw))
    return out
