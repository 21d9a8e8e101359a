"""Split-K and stream-K checks: the formulas of :mod:`symbolic.models.gemm_splitk` against the executors of
:mod:`numeric.gemm_splitk` (count-only mode), every quantity, exactly.

* ``gemm.splitk`` - parallel split-K: tile traffic, the FP32 workspace written and read back, bytes, the
  reduction's adds, the partial tiles, CTAs, waves and the wave efficiency.
* ``gemm.splitk.serial`` - serial split-K: the output read back and rewritten by each later slice.
* ``gemm.streamk`` - stream-K: stream-K and data-parallel tiles, units, split points (fixups), the FP32
  partials, the workspace, and the data-parallel waves it replaces.

The grids pin: ``K`` not a multiple of ``S_k`` (nor of ``B_K``), more slices than K-steps (empty slices),
``S_k = 1``; stream-K with more CTAs than tiles, ``P_s`` dividing the tiles (no stream-K), ``t_k <= 8`` and
``t_k < 16`` (never split), a tile split across three CTAs, and sizes of ``10**30`` (count-only Phantoms).
"""

from __future__ import annotations

from numeric.gemm_splitk import run_splitk_parallel, run_splitk_serial, run_streamk
from symbolic.models.gemm_splitk import splitk, splitk_serial, streamk

from ..core import Check

__all__ = ["SPLITK_EDGE", "STREAMK_EDGE", "splitk_check", "splitk_serial_check", "streamk_check"]

_KEYS = ("M", "N", "K", "B_M", "B_N", "B_K")

#: (M, N, K, B_M, B_N, B_K, S_k, P): why
SPLITK_EDGE = [
    (1, 1, 1, 1, 1, 1, 1, 1),                   # everything 1
    (16, 4096, 4096, 16, 128, 64, 4, 132),      # a decode GEMM: 32 tiles x 4 slices on 132
    (16, 300, 1000, 16, 64, 64, 3, 132),        # K not a multiple of S_k or of B_K
    (7, 9, 30, 4, 4, 8, 7, 5),                  # more slices than K-steps: empty slices
    (100, 70, 333, 32, 16, 16, 5, 7),           # nothing divides; waves straddle slices
    (64, 64, 64, 64, 64, 64, 1, 1),             # S_k = 1: the data-parallel kernel
    (33, 65, 129, 32, 64, 128, 2, 3),           # K one past a K-step, tiles one past a multiple
    (10**30, 10**30, 10**30, 10**29, 10**29, 10**28, 3, 132),    # beyond int64 (count-only)
]
_SPLITK_FULL = [(m, n, k, bm, bn, bk, s, p) for m, n, k in ((64, 1024, 4096), (48, 200, 999))
                for bm, bn, bk in ((16, 64, 64), (32, 32, 32)) for s in (2, 3, 8) for p in (66, 132)]

#: (M, N, K, B_M, B_N, B_K, P_s): why
STREAMK_EDGE = [
    (1, 1, 1, 1, 1, 1, 1),                      # everything 1
    (128, 128, 1536, 128, 128, 64, 3),          # one tile of 24 K-steps over 3 CTAs: split across three
    (256, 128, 1024, 128, 128, 64, 7),          # more CTAs than tiles (2 tiles, 7 CTAs)
    (3072, 3072, 4096, 128, 128, 64, 132),      # 576 tiles on 132: 3 data-parallel waves + stream-K
    (512, 512, 512, 128, 128, 64, 16),          # P_s divides the 16 tiles: data-parallel only
    (300, 200, 64, 64, 64, 8, 7),               # t_k = 8: nothing streamed
    (300, 200, 120, 64, 64, 8, 7),              # t_k = 15 < 16: streamed, never split
    (100, 100, 1000, 32, 32, 16, 5),            # edge tiles, K not a multiple of B_K
    (10**30, 10**30, 10**30, 10**29, 10**29, 10**27, 7),   # beyond int64 (count-only)
]
_STREAMK_FULL = [(m, n, k, bm, bn, bk, p) for m, n in ((1000, 700), (2048, 1536)) for k in (512, 2000)
                 for bm, bn, bk in ((128, 128, 32), (64, 128, 64)) for p in (13, 66, 132)]

_SPLITK_Q = ("reads", "writes", "reads_A", "reads_B", "flops", "flops_padded", "writes_ws", "reads_ws", "writes_C",
             "bytes", "bytes_workspace", "partial_tiles", "ops_reduce", "ctas", "waves", "wave_steps",
             "wave_efficiency")
_SERIAL_Q = ("reads", "writes", "reads_A", "reads_B", "flops", "flops_padded", "writes_C", "reads_C", "bytes",
             "fixups", "ops_reduce", "ctas", "waves", "wave_steps", "wave_efficiency")
_STREAMK_Q = ("reads", "writes", "reads_A", "reads_B", "flops", "flops_padded", "writes_C", "writes_ws", "reads_ws",
              "tile_traffic", "bytes", "tiles", "sk_tiles", "sk_units", "fixups", "workspace", "waves_dp",
              "wave_efficiency_dp")


def _split_grid(full):
    for t in SPLITK_EDGE + (_SPLITK_FULL if full else []):
        yield dict(zip(_KEYS + ("S_k", "P"), t))


def _stream_grid(full):
    for t in STREAMK_EDGE + (_STREAMK_FULL if full else []):
        yield dict(zip(_KEYS + ("P_s",), t))


def _args(p):
    return [p[k] for k in _KEYS]


def _gemm_point(draw, st):
    M, N, K = draw(st.integers(1, 400)), draw(st.integers(1, 400)), draw(st.integers(1, 3000))
    B_M = draw(st.sampled_from([1, 8, 16, 32, 64, 128]))
    B_N = draw(st.sampled_from([1, 8, 16, 32, 64, 128]))
    B_K = draw(st.sampled_from([1, 8, 16, 32, 64]))
    return dict(M=M, N=N, K=K, B_M=max(B_M, M // 16 + 1), B_N=max(B_N, N // 16 + 1), B_K=max(B_K, K // 200 + 1))


def _split_points():
    from hypothesis import strategies as st

    @st.composite
    def draw(draw):
        p = _gemm_point(draw, st)
        return dict(p, S_k=draw(st.integers(1, 20)), P=draw(st.integers(1, 300)))
    return draw()


def _stream_points():
    from hypothesis import strategies as st

    @st.composite
    def draw(draw):
        p = _gemm_point(draw, st)
        return dict(p, P_s=draw(st.integers(1, 300)))
    return draw()


def _size(p):
    return max(p["M"], p["N"], p["K"])


splitk_check = Check(
    model=splitk, quantities=_SPLITK_Q, grid=_split_grid, strategy=_split_points, draws=40, draws_full=300,
    execute=lambda p: run_splitk_parallel(*_args(p), p["S_k"], p["P"]).counts, size=_size,
    description="parallel split-K: tile traffic, FP32 workspace written and read back, reduction adds, waves")

splitk_serial_check = Check(
    model=splitk_serial, quantities=_SERIAL_Q, grid=_split_grid, strategy=_split_points, draws=40, draws_full=300,
    execute=lambda p: run_splitk_serial(*_args(p), p["S_k"], p["P"]).counts, size=_size,
    description="serial split-K: the output read back and rewritten by each later slice, waves")

streamk_check = Check(
    model=streamk, quantities=_STREAMK_Q, grid=_stream_grid, strategy=_stream_points, draws=40, draws_full=300,
    execute=lambda p: run_streamk(*_args(p), p["P_s"]).counts, size=_size,
    description="stream-K: stream-K and data-parallel tiles, units, split points, FP32 fixup partials")
