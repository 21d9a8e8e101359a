"""Split-K and stream-K GEMM: ``C = A B`` with the K loop cut across CTAs, and the partials put back together.

Counting convention (``docs/conventions.md`` §4.1): elements moved between global memory and one CTA's
on-chip memory; a partial edge tile of ``A``, ``B`` or ``C`` moves only its valid elements (masked loads
and stores), a workspace tile of accumulators moves whole (the accumulator fragment is stored as it is).
Bytes use each tensor's own element size (:func:`base.dtypes.element_bytes`): ``A``, ``B``, ``C`` FP16,
the partials FP32 (CUTLASS's ``ElementAccumulator``).  ``t_m = ceil(M/B_M)``, ``t_n = ceil(N/B_N)``,
``t_k = ceil(K/B_K)`` K-steps, ``T = t_m t_n`` output tiles.  Every K-step of every tile is computed by
exactly one CTA, so in all three models the operand traffic is the data-parallel kernel's
(:func:`symbolic.models.gemm.gemm_counts`): ``reads_A = t_n M K``, ``reads_B = t_m K N``, useful FLOPs
``2 M N K``, padded FLOPs ``2 (t_m B_M)(t_n B_N)(t_k B_K)``; ``C`` is written once, ``writes_C = M N``.
What differs is the partials and the waves.

**gemm.splitk - parallel split-K** (CUTLASS 2.x ``GemmSplitKParallel`` + ``ReduceSplitK``; NVIDIA/cutlass
``include/cutlass/gemm/kernel/gemm_splitk_parallel.h``, ``gemm/device/gemm_splitk_parallel.h``,
``reduction/kernel/reduce_split_k.h``).  The grid is ``t_m x t_n x S_k``.  Each of the first ``S_k - 1``
slices takes ``q = floor(floor(K/B_K)/S_k)`` K-steps (``gemm_k_size``, kernel ``:112-115``); the last
slice takes the rest, ``t_k - (S_k - 1) q`` steps (``:161-167``); a slice with no K still runs its
epilogue.  Every CTA stores its ``rows x cols`` valid accumulators to slice ``z`` of an FP32 workspace
of ``S_k M N`` elements (``:235``; device ``:267`` sizes it ``sizeof(ElementAccumulator) m n k``), then
``ReduceSplitK`` reads the ``S_k`` partials of each element, adds them to a zero accumulator
(``reduce_split_k.h:194-209``) and stores ``C`` (``:237-240``; ``C`` is read only when ``beta != 0``,
``:223``: here ``C = A B``)::

    writes_ws = reads_ws = S_k M N  (FP32),    partial_tiles = S_k T,    ops_reduce = S_k M N (adds)

**gemm.splitk.serial - serial split-K** (CUTLASS 2.x ``Gemm<..., SplitKSerial = true>``,
``include/cutlass/gemm/kernel/gemm.h``).  ``c = ceil(t_k / S_k)`` K-steps a slice (``gemm_k_size``,
``:129-132``; slice ``z`` takes ``[z c B_K, min(K, (z + 1) c B_K))``, an empty slice skips its main loop,
``:273``, but not its epilogue).  The slices of a tile take a semaphore in order (``:339-346``); slice 0
writes ``D`` from its accumulators, every later slice reads the ``D`` tile its predecessor wrote as the
epilogue's source (``iterator_C = iterator_D``, ``beta = 1`` from ``set_k_partition``,
``epilogue/thread/linear_combination.h:211-215``) and writes it back, in ``D``'s own type (FP16)::

    writes_C = S_k M N,    reads_C = (S_k - 1) M N,    fixups = (S_k - 1) T,    ops_reduce = (S_k - 1) M N

(the semaphore, one int32 per tile polled by a thread, is not counted).

**gemm.streamk - stream-K** (Osama, Merrill, Cecka, Garland, Owens, *Stream-K: Work-centric Parallel
Decomposition for Dense Matrix-Matrix Multiplication on the GPU*, PPoPP 2023, arXiv 2301.03598: the
aggregate K-iterations ``T t_k`` are cut into even shares, one per persistent CTA, and a tile split between
CTAs is fixed up through partials in global memory; the hybrid schedules of its §4 keep whole tiles
data-parallel and stream only the tail).  Counted as CUTLASS 3.x's SM90 scheduler runs it with
``DecompositionMode::StreamK``, 1x1 clusters, one group of stream-K units
(``include/cutlass/gemm/kernel/tile_scheduler_params.h`` - PersistentTileSchedulerSm90StreamKParams - and
``sm90_tile_scheduler_stream_k.hpp``), on ``P_s`` persistent CTAs:

* ``get_num_sk_tiles`` (``tile_scheduler_params.h:1065-1110``): with ``w = floor(T/P_s)`` full waves, no
  tile is streamed when ``P_s`` divides ``T`` or ``t_k <= 8`` (``min_iters_per_sk_unit_ = 8``, ``:467``);
  otherwise the last partial wave and one full wave are: ``sk_tiles = T - max(w - 1, 0) P_s`` (``:1086``);
  the other ``dp_tiles = T - sk_tiles`` are data-parallel, one unit per tile.
* ``get_num_sk_units`` (``:1116-1138``): ``u = min(P_s, floor(sk_tiles t_k / 8))`` stream-K units share the
  ``I = sk_tiles t_k`` K-iterations; unit ``g`` starts at ``b_g = g q + min(g, r)``, ``q = floor(I/u)``,
  ``r = I mod u`` (the ``r`` "big units", one iteration more, come first: ``set_params_stream_k``, ``:1566``,
  and ``sm90_tile_scheduler_stream_k.hpp:814-834``).
* A unit does not start or end within 8 iterations of a tile's edge: a boundary ``b`` at offset
  ``o = b mod t_k`` moves to the tile's start when ``o < 8`` and to the next tile's start when
  ``o > t_k - 8`` (``sm90_tile_scheduler_stream_k.hpp:838-852`` for a start, ``:878-890`` for an end).  So a
  tile is split exactly at the boundaries with ``8 <= b_g mod t_k <= t_k - 8`` (``1 <= g < u``).
* Fixup (``fixup_helper``, ``:425-552``): of a split tile's ``c`` peers, the first (``K_idx == 0``) stores
  its whole ``B_M x B_N`` FP32 accumulators to the workspace (``:515``), each middle peer reads them, adds
  and stores (``:532``), the final peer reads and adds (``:550``) and runs the epilogue: ``c - 1`` tiles
  written and ``c - 1`` read.  Summed over tiles, ``fixups`` = the number of split points::

    fixups = sum_{g=1}^{u-1} [8 <= b_g mod t_k <= t_k - 8]
    writes_ws = reads_ws = fixups B_M B_N  (FP32; as many adds, one per partial element read)

  evaluated by floor sums (:func:`streamk_fixups`, O(log) steps at any size; ``[lo <= x mod t <= hi]
  = floor((x - lo)/t) - floor((x - hi - 1)/t)``).  The workspace holds ``sk_tiles`` tiles
  (``get_reduction_workspace_size``, ``:1151-1156``): ``workspace = sk_tiles B_M B_N``.

**Waves** (the convention of :mod:`symbolic.models.gemm_l2`: CTAs start in launch order, ``P`` at a time, in
lockstep waves; ``P`` is ``gemm.l2``'s programs per wave).  A split-K grid of ``T S_k`` CTAs (slice ``z``'s
CTAs are pids ``z T .. (z + 1) T - 1``, blockIdx.z the slowest) runs ``waves = ceil(T S_k / P)`` waves; a
wave lasts as long as its longest CTA, so ``wave_steps`` is the sum over waves of the most K-steps a CTA of
the wave computes, and ``wave_efficiency = T t_k / (P wave_steps)`` the share of the ``P`` slots' steps that
do work (``S_k = 1``: ``T / (P ceil(T/P))``, the data-parallel wave quantization).

* parallel: the last slice is the longest, so ``wave_steps = w0 q + (waves - w0)(t_k - (S_k - 1) q)`` with
  ``w0 = floor((S_k - 1) T / P)`` waves before the last slice's first CTA;
* serial: a wave's longest CTA is its first slice's, ``c`` steps for the ``s_f = floor(t_k / c)`` full
  slices and ``t_k - s_f c`` for the next one, so ``wave_steps = c n(s_f T) + (t_k - s_f c)(n((s_f + 1) T)
  - n(s_f T))`` with ``n(x) = min(waves, ceil(x / P))`` waves starting before pid ``x``.

Stream-K reports the quantization it removes: the data-parallel launch of the same tiles on the ``P_s``
CTAs takes ``waves_dp = ceil(T / P_s)`` waves at ``wave_efficiency_dp = T / (P_s waves_dp)``.

Parameters: the GEMM's ``M, N, K, B_M, B_N, B_K`` (:mod:`symbolic.models.gemm`), ``S_k`` the K slices,
``P`` the programs per wave (:mod:`symbolic.models.gemm_l2`), ``P_s`` the persistent CTAs of stream-K.
"""

from __future__ import annotations

import sympy as sp

from base import validate
from base.dtypes import element_bytes

from ..asymptotics import Regime
from ..floorsum import floor_sum
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..registry import defines
from ..shown_as import ShownAs
from .gemm import B_K, B_M, B_N, K, M, N, gemm_counts
from .gemm_l2 import P

__all__ = ["S_k", "P_s", "MIN_ITERS_PER_SK_UNIT", "OPERAND_DTYPE", "PARTIAL_DTYPE", "splitk_slices_parallel",
           "splitk_slices_serial", "streamk_schedule", "streamk_fixups", "StreamKFixups", "splitk", "splitk_serial",
           "streamk"]

S_k = param("S_k", note("split-K slices: the partitions the ", K, " loop is cut into (CUTLASS ",
                        code("split_k_slices"), ")"), latex="S_k")
P_s = param("P_s", "persistent CTAs of the stream-K grid (CUTLASS: the SMs times the CTAs per SM)", latex="P_s")

#: names the notes use that are not parameters: the operands and output, the serial slices' index and length,
#: the epilogue's beta, a wave-count quantity
_A, _B, _C, _D = (symbol(n) for n in ("A", "B", "C", "D"))
_z, _c, _beta = symbol("z"), symbol("c"), symbol("beta")
_WAVE_STEPS = symbol("wave_steps", r"\text{wave}\_\text{steps}")

#: CUTLASS's least K-iterations a stream-K unit computes of one tile (``min_iters_per_sk_unit_``,
#: ``tile_scheduler_params.h:467``)
MIN_ITERS_PER_SK_UNIT = 8
#: the operands' and C's element type, and the partials' (CUTLASS's ElementAccumulator)
OPERAND_DTYPE, PARTIAL_DTYPE = "fp16", "fp32"

_E, _EP = element_bytes(OPERAND_DTYPE), element_bytes(PARTIAL_DTYPE)
_pos = validate.positive_int


# ------------------------------------------------------------------------------------- plain-int schedules
def splitk_slices_parallel(K: int, B_K: int, S_k: int) -> list[int]:
    """K-steps of each slice of CUTLASS's parallel split-K: ``q = floor(floor(K/B_K)/S_k)`` for the first
    ``S_k - 1`` slices, the rest to the last (``gemm_splitk_parallel.h:112-115, 161-167``)."""
    K, B_K, S_k = _pos("K", K), _pos("B_K", B_K), _pos("S_k", S_k)
    q = (K // B_K) // S_k
    return [q] * (S_k - 1) + [-(-K // B_K) - (S_k - 1) * q]


def splitk_slices_serial(K: int, B_K: int, S_k: int) -> list[int]:
    """K-steps of each slice of CUTLASS's serial split-K: ``c = ceil(t_k/S_k)`` a slice, clipped at ``t_k``
    (``gemm.h:129-132``)."""
    K, B_K, S_k = _pos("K", K), _pos("B_K", B_K), _pos("S_k", S_k)
    tk = -(-K // B_K)
    c = -(-tk // S_k)
    return [max(0, min(c, tk - z * c)) for z in range(S_k)]


def streamk_schedule(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, P_s: int) -> dict:
    """The stream-K scheduler's numbers (module docstring, CUTLASS's ``get_num_sk_tiles`` and
    ``get_num_sk_units``): ``tiles, k_tiles, sk_tiles, dp_tiles, sk_units, sk_iters``."""
    M, N, K, B_M, B_N, B_K, P_s = (_pos(n, v) for n, v in
                                   zip(("M", "N", "K", "B_M", "B_N", "B_K", "P_s"), (M, N, K, B_M, B_N, B_K, P_s)))
    T = -(-M // B_M) * -(-N // B_N)
    tk = -(-K // B_K)
    full = T // P_s
    sk = 0 if T % P_s == 0 or tk <= MIN_ITERS_PER_SK_UNIT else T - max(full - 1, 0) * P_s
    units = min(P_s, sk * tk // MIN_ITERS_PER_SK_UNIT)
    return {"tiles": T, "k_tiles": tk, "sk_tiles": sk, "dp_tiles": T - sk, "sk_units": units, "sk_iters": sk * tk}


def streamk_fixups(sk_iters: int, sk_units: int, k_tiles: int) -> int:
    """Split points of the stream-K tiles: ``#{1 <= g < u : 8 <= b_g mod t_k <= t_k - 8}`` with
    ``b_g = g q + min(g, r)``, ``q, r = divmod(I, u)`` (module docstring), by four floor sums:
    ``[8 <= x mod t <= t - 8] = floor((x - 8)/t) - floor((x + 7)/t) + 1`` for ``t >= 16`` (the window is empty
    below).  Exact, O(log) steps at any size."""
    I, u, t = int(sk_iters), int(sk_units), int(k_tiles)
    lo = MIN_ITERS_PER_SK_UNIT
    if u <= 1 or t < 2 * lo:
        return 0
    q, r = divmod(I, u)

    def window(n, a, b):            # sum_{i<n} [lo <= (a i + b) mod t <= t - lo]
        if n <= 0:
            return 0
        return floor_sum(n, t, a, b - lo) - floor_sum(n, t, a, b + lo - 1) + n
    # units 1..r start at g (q + 1); units r+1..u-1 at g q + r
    return window(r, q + 1, q + 1) + window(u - 1 - r, q, q * (r + 1) + r)


class StreamKFixups(ShownAs, sp.Function):
    """``StreamKFixups(M, N, K, B_M, B_N, B_K, P_s)``: the split points of the stream-K tiles,
    :func:`streamk_fixups` of :func:`streamk_schedule` (the sum over units ``1 <= g < u`` of
    ``[8 <= b_g mod t_k <= t_k - 8]``, module docstring).  Evaluates by its floor sums in O(log) steps; no
    SymPy closed form, so it prints as the function it is, ``split_points(...)``."""

    nargs = 7
    is_integer = True
    is_nonnegative = True

    @staticmethod
    def exact_value(M, N, K, B_M, B_N, B_K, P_s):
        s = streamk_schedule(M, N, K, B_M, B_N, B_K, P_s)
        return streamk_fixups(s["sk_iters"], s["sk_units"], s["k_tiles"])

    def _display(self):
        return sp.Function("split_points")(*self.args)

    def _tilebound_latex(self, printer, exp=None):
        tex = (r"\operatorname{splits}_{\mathrm{SK}}\left(" + ", ".join(printer._print(a) for a in self.args)
               + r"\right)")
        return rf"\left({tex}\right)^{{{exp}}}" if exp else tex

    _latex = _tilebound_latex


# ------------------------------------------------------------------------------------- expressions
def _tiles():
    t_m, t_n, t_k = sp.ceiling(M / B_M), sp.ceiling(N / B_N), sp.ceiling(K / B_K)
    return t_m, t_n, t_k, t_m * t_n


def _operands() -> dict:
    g = gemm_counts()
    return {"reads_A": g["reads_A"], "reads_B": g["reads_B"], "flops": g["flops"], "flops_padded": g["flops_padded"]}


def _waves(ctas):
    return sp.ceiling(ctas / P)


def parallel_counts() -> dict:
    """The quantities of ``gemm.splitk`` (module docstring)."""
    t_m, t_n, t_k, T = _tiles()
    o = _operands()
    q = sp.floor(sp.floor(K / B_K) / S_k)
    last = t_k - (S_k - 1) * q
    ws = S_k * M * N
    ctas = T * S_k
    waves = _waves(ctas)
    w0 = sp.floor((S_k - 1) * T / P)
    steps = w0 * q + (waves - w0) * last
    out = {"reads": o["reads_A"] + o["reads_B"] + ws, "writes": ws + M * N, **o,
           "writes_ws": ws, "reads_ws": ws, "writes_C": M * N,
           "bytes": _E * (o["reads_A"] + o["reads_B"] + M * N) + _EP * 2 * ws, "bytes_workspace": _EP * 2 * ws,
           "partial_tiles": S_k * T, "ops_reduce": ws, "ctas": ctas, "waves": waves, "wave_steps": steps,
           "wave_efficiency": T * t_k / (P * steps)}
    return out


def serial_counts() -> dict:
    """The quantities of ``gemm.splitk.serial`` (module docstring)."""
    t_m, t_n, t_k, T = _tiles()
    o = _operands()
    c = sp.ceiling(t_k / S_k)
    s_f = sp.floor(t_k / c)
    rem = t_k - s_f * c
    ctas = T * S_k
    waves = _waves(ctas)

    def n(x):
        return sp.Min(waves, sp.ceiling(x / P))
    steps = c * n(s_f * T) + rem * (n((s_f + 1) * T) - n(s_f * T))
    reads_c = (S_k - 1) * M * N
    return {"reads": o["reads_A"] + o["reads_B"] + reads_c, "writes": S_k * M * N, **o,
            "writes_C": S_k * M * N, "reads_C": reads_c,
            "bytes": _E * (o["reads_A"] + o["reads_B"] + reads_c + S_k * M * N),
            "fixups": (S_k - 1) * T, "ops_reduce": reads_c, "ctas": ctas, "waves": waves, "wave_steps": steps,
            "wave_efficiency": T * t_k / (P * steps)}


def streamk_counts() -> dict:
    """The quantities of ``gemm.streamk`` (module docstring)."""
    t_m, t_n, t_k, T = _tiles()
    o = _operands()
    full = sp.floor(T / P_s)
    lo = MIN_ITERS_PER_SK_UNIT
    # [P_s does not divide T] [t_k > 8] (T - max(w - 1, 0) P_s), the indicators as 0/1 integer expressions
    quantized = sp.Min(1, sp.Mod(T, P_s))
    splittable = sp.Min(1, sp.Max(0, t_k - lo))
    sk = quantized * splittable * (T - sp.Max(full - 1, 0) * P_s)
    u = sp.Min(P_s, sp.floor(sk * t_k / lo))
    fix = StreamKFixups(M, N, K, B_M, B_N, B_K, P_s)
    ws = fix * B_M * B_N
    waves_dp = sp.ceiling(T / P_s)
    return {"reads": o["reads_A"] + o["reads_B"] + ws, "writes": M * N + ws, **o,
            "writes_C": M * N, "writes_ws": ws, "reads_ws": ws,
            "tile_traffic": o["reads_A"] + o["reads_B"] + M * N,
            "bytes": _E * (o["reads_A"] + o["reads_B"] + M * N) + _EP * 2 * ws,
            "tiles": T, "sk_tiles": sk, "sk_units": u, "fixups": fix, "workspace": sk * B_M * B_N,
            "waves_dp": waves_dp, "wave_efficiency_dp": T / (P_s * waves_dp)}


_UNITS_COMMON = {"reads_A": "elements", "reads_B": "elements", "flops_padded": "FLOP", "writes_C": "elements",
                 "bytes": "bytes", "ctas": "1", "waves": "1", "wave_steps": "K-steps", "wave_efficiency": "1"}
_REGIME = Regime(note(sp.Le(B_M, M), ", ", sp.Le(B_N, N), ", ", sp.Le(B_K, K)), le=((B_M, M), (B_N, N), (B_K, K)))
_DECODE = {"M": 16, "N": 4096, "K": 4096, "B_M": 16, "B_N": 128, "B_K": 64, "S_k": 4, "P": 132}
_OPERANDS_NOTE = note(code("reads_A"), ", ", code("reads_B"), ", ", code("flops"), " and ", code("flops_padded"),
                      " are the data-parallel kernel's (", code("gemm.tiled"),
                      "): every K-step of every tile is computed once")
_WAVES_NOTE = note(code("wave_steps"), ": the sum over the ", sp.ceiling(M / B_M) * sp.ceiling(N / B_N) * S_k,
                   " CTAs' lockstep waves of ", P, " of the most K-steps a CTA of the wave computes; ",
                   code("wave_efficiency"), ": the useful CTA-steps over the slots' steps, ",
                   sp.ceiling(M / B_M) * sp.ceiling(N / B_N) * sp.ceiling(K / B_K) / (P * _WAVE_STEPS))


def _split_model(name, summary, counts, units, source, notes):
    """A split-K model: the GEMM's parameters with ``S_k`` and ``P``, the divisible form ``K = B_K S_k t``."""
    t_m, t_n, t_kk = (sp.Dummy(n, integer=True, positive=True) for n in ("t_m", "t_n", "t_kk"))
    return Model(name, summary, counts, params=(M, N, K, B_M, B_N, B_K, S_k, P), units=dict(_UNITS_COMMON, **units),
                 divisible_subs={M: B_M * t_m, N: B_N * t_n, K: B_K * S_k * t_kk},
                 regime=_REGIME, asymptotic_quantity="total", defaults=dict(_DECODE), source=source,
                 notes=notes + (_OPERANDS_NOTE, _WAVES_NOTE))


@defines("gemm.splitk", "parallel split-K (CUTLASS GemmSplitKParallel + ReduceSplitK): S_k slices of K write FP32 "
                        "partials to a workspace, a reduction kernel reads them back; tile traffic, workspace, waves")
def splitk():
    return _split_model(
        "gemm.splitk", "parallel split-K GEMM: FP32 partials through a workspace, then a reduction kernel",
        parallel_counts(), dict(writes_ws="elements", reads_ws="elements", bytes_workspace="bytes",
                                partial_tiles="tiles", ops_reduce="ops"),
        note("NVIDIA/cutlass ", code("include/cutlass/gemm/kernel/gemm_splitk_parallel.h"), ":112-115, 161-167, 235 "
             "(slices, workspace stores), ", code("include/cutlass/gemm/device/gemm_splitk_parallel.h"),
             ":267 (workspace size), ", code("include/cutlass/reduction/kernel/reduce_split_k.h"),
             ":194-240 (the reduction)"),
        (note("the first ", S_k - 1, " slices take ", sp.floor(sp.floor(K / B_K) / S_k),
              " K-steps, the last the rest; a slice with no K-steps still stores zero partials"),
         note("partials: ", S_k * M * N, " FP32 elements written and read back (", code("bytes_workspace"),
              "); ", _A, ", ", _B, " and ", _C, " are FP16")))


@defines("gemm.splitk.serial", "serial split-K (CUTLASS Gemm with SplitKSerial): the S_k slices of a tile add "
                               "into the output one after another under a semaphore")
def splitk_serial():
    return _split_model(
        "gemm.splitk.serial", "serial split-K GEMM: each slice reads and rewrites the output tile in turn",
        serial_counts(), dict(reads_C="elements", fixups="tiles", ops_reduce="ops"),
        note("NVIDIA/cutlass ", code("include/cutlass/gemm/kernel/gemm.h"), ":129-132 (slices), 273 (an empty slice "
             "skips its main loop), 339-346 (", _D, " is the source of every later slice); ",
             code("include/cutlass/epilogue/thread/linear_combination.h"), ":211-215 (", sp.Eq(_beta, 1),
             " after slice 0)"),
        (note("slice ", _z, " starts at K-step ", _z * _c, " and takes ",
              sp.Eq(_c, sp.ceiling(sp.ceiling(K / B_K) / S_k)), " of them (the last slices fewer, or none)"),
         note("the output is the accumulator: ", (S_k - 1) * M * N, " FP16 elements read back and ",
              S_k * M * N, " written (the partial sums round to FP16 between slices)"),
         "the semaphore (one int32 per tile, polled) is not counted"))


@defines("gemm.streamk", "stream-K on P_s persistent CTAs (CUTLASS SM90 scheduler, data-parallel + stream-K "
                         "hybrid): tile traffic, the FP32 fixup partials, and the wave quantization it removes")
def streamk():
    return Model(
        "gemm.streamk", note("stream-K GEMM: the tail tiles' K-iterations shared evenly by ", P_s,
                             " persistent CTAs, split tiles fixed up through an FP32 workspace"),
        streamk_counts(), params=(M, N, K, B_M, B_N, B_K, P_s),
        units=dict(_UNITS_COMMON, writes_ws="elements", reads_ws="elements", tile_traffic="elements",
                   tiles="tiles", sk_tiles="tiles", sk_units="CTAs", fixups="tiles", workspace="elements", waves_dp="1",
                   wave_efficiency_dp="1"),
        regime=_REGIME, asymptotic_quantity="tile_traffic",
        defaults={"M": 3072, "N": 3072, "K": 4096, "B_M": 128, "B_N": 128, "B_K": 64, "P_s": 132},
        source=note("Osama, Merrill, Cecka, Garland, Owens, Stream-K, PPoPP 2023 (arXiv 2301.03598); NVIDIA/cutlass ",
                    code("include/cutlass/gemm/kernel/tile_scheduler_params.h"), ":1065-1138 (stream-K tiles and "
                    "units), ", code("include/cutlass/gemm/kernel/sm90_tile_scheduler_stream_k.hpp"),
                    ":814-890 (unit boundaries), 425-552 (fixup)"),
        notes=(note(code("DecompositionMode::StreamK"), ", clusters of one CTA, one group of stream-K units (CUTLASS "
                    "may use up to 8 groups for L2 locality); the data-parallel tiles keep whole ", K, " loops"),
               note(code("fixups"), ": split points, one FP32 ", B_M * B_N, "-element tile written and one read each "
                    "(the first peer stores, middle peers read-add-store, the final peer reads)"),
               note("a unit's boundary within 8 K-iterations of a tile edge moves to the edge, so while ",
                    sp.Lt(sp.ceiling(K / B_K), 16), " (fewer than 16 K-steps a tile) no tile is split"),
               _OPERANDS_NOTE,
               note(code("waves_dp"), ", ", code("wave_efficiency_dp"), ": the data-parallel launch of the same ",
                    sp.ceiling(M / B_M) * sp.ceiling(N / B_N), " tiles on ", P_s, " CTAs")))
