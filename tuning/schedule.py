"""The schedule space of a Triton-style GEMM kernel: what can launch, and an analytic time model.

A *config* is ``(B_M, B_N, B_K, warps, s, G_M)``, in the models' own parameter names
(:mod:`symbolic.models.gemm`, :mod:`symbolic.models.gemm_l2`): the block's tile of ``C`` (``B_M x B_N``), the
K-step ``B_K``, the warps per block, the shared-memory pipeline depth ``s`` (Triton's ``num_stages``) and the
launch-order grouping ``G_M`` (Triton's ``GROUP_M``; lecture 13, demo 1; lecture 10 §6-§10).  ``warps`` is the
total warp count; :data:`WARP_GRID` splits it into the models' warp grid ``w_y x w_x``
(:attr:`GemmConfig.warp_grid`).  :data:`SPACE` has 5 x 5 x 4 x 4 x 5 x 3 = 6000 configs.

**Launchability** (:data:`LAUNCH_RULES`, data, each with its reason): shared memory
``s (B_M + B_N) B_K x 2 bytes <= 227 KiB`` (the per-block opt-in limit, ``docs/conventions.md``
§3.1); a warp's sub-tile ``(B_M/w_y) x (B_N/w_x)`` at least one ``mma`` (16 x 8) for the warp grid
``WARP_GRID``; the course's register estimate ``(B_M/w_y)(B_N/w_x)/32 + 40 <= 255`` (accumulators in
FP32, 32 threads a warp, 40 for addresses and loop state; §3.2 for the limit).  3744 of the 6000
launch.  The resource formulas themselves are the exact ones of :mod:`symbolic.models.gemm`
(model ``gemm.resources``), applied here to arrays of configs.

**Time model** (:func:`gemm_time`, vectorised by :func:`times_for_shape`), an analytic model and not
a measurement; every constant is a field of :class:`TimeModelConstants` with its source:

1. *Tiles, occupancy, waves.*  ``tm tn`` tiles; blocks per SM limited by shared memory (228 KiB a
   SM, 1 KiB reserved a block), registers (65,536 a SM), warps (64) and blocks (32); the busiest SM
   runs ``ceil(tiles / SMs)`` tiles in rounds of that many co-resident blocks.
2. *Padding.*  A block computes its whole ``B_M x B_N`` tile for ``ceil(K/B_K)`` full K-steps, however
   little of it is inside ``C`` (masked loads fetch only the valid part).
3. *Per K-step of a round* (``j`` co-resident blocks): the largest of the tensor-core time (the SM's
   ``4096 FLOP/clk`` times ``min(1, warps on the SM / 4)``: one warp drives one of the 4 tensor-core
   sub-partitions), the shared-memory reads of the warps' operand strips at the SM's shared-memory
   bandwidth, the block's bytes from L2 at the SM's rate (its 64 B/clk port, or its share of the
   ~12 TB/s L2 when many SMs are busy), and the latency bound of the pipeline ``(L + t_c) / s``
   (``docs/conventions.md`` §5.3 with ``L`` the loaded latency, transfer included): with ``s - 1`` stages in
   flight the block hides ``L`` once ``(s - 1) t_c >= L`` (Little's law).  NOTE: one stage
   serialises each step, ``L + t_c``.
4. *Fill and epilogue.*  Each round waits ``L`` for its first stage and ends by storing the ``C``
   tiles into L2 (write-back) at the SM's L2 rate; their way to HBM is counted in 5.
5. *HBM.*  The kernel takes at least ``L + (A and B reads from HBM + C writes) / HBM bandwidth``; the
   reads follow the launch order through the GPU's L2 (50 MB) as the exact LRU count of the config's
   lockstep waves (``P`` = SMs x co-resident blocks, ``G_M``, ``B_K``-deep steps;
   :func:`tuning.l2_estimate.hbm_reads_many`, model ``gemm.l2.lru``), or, beyond
   :data:`tuning.l2_estimate.TIME_MODEL_WAVES` waves, its no-reuse upper bound.

Configs that cannot launch take ``inf``.  Times are seconds (floats: a model, not a count).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, fields
from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from base.dtypes import element_bytes
from base.errors import BadInput
from base.validate import positive_int
from symbolic.hardware import GPU, H100, H200, L2_BYTES_PER_CLK_PER_SM, LOADED_HBM_LATENCY, get_hardware
from symbolic.models.gemm import regs_estimate, smem_bytes

from .l2_estimate import hbm_reads_many

__all__ = ["SPACE", "time_model_constants", "WARP_GRID", "MMA_TILE", "GemmConfig", "LaunchRule", "LAUNCH_RULES", "all_configs",
           "launch_failures", "static_valid", "launchable", "warp_grid", "MODEL_LIMIT", "model_shape",
           "regs_per_thread", "blocks_per_sm",
           "TimeModelConstants", "H100_TC", "TIME_MODELS", "gemm_time", "times_for_shape", "config_table",
           "Landscape", "landscape", "penalty_matrix", "sensitivity"]

#: The knobs and their values, in the order of :class:`GemmConfig`'s fields (lecture 13, demo 1).
SPACE: Mapping[str, tuple] = MappingProxyType({
    "B_M": (16, 32, 64, 128, 256),
    "B_N": (16, 32, 64, 128, 256),
    "B_K": (16, 32, 64, 128),
    "warps": (1, 2, 4, 8),
    "s": (1, 2, 3, 4, 5),
    "G_M": (1, 4, 8),
})
#: warps per block -> the warp grid ``(w_y, w_x)``: warps along M, warps along N (lecture 13 / Triton's default warp layout)
WARP_GRID: Mapping[int, tuple] = MappingProxyType({1: (1, 1), 2: (1, 2), 4: (2, 2), 8: (4, 2)})
#: the smallest warp tile: one ``mma.m16n8`` (PTX ISA, warp-level matrix multiply shapes)
MMA_TILE = (16, 8)
#: bytes of an FP16/BF16 operand or output element (the one element-size table's entry)
_ELEMENT = element_bytes("fp16")


@dataclass(frozen=True)
class GemmConfig:
    """One schedule.  Fields in :data:`SPACE` order; values outside the space raise
    :class:`~base.errors.BadInput` naming the field."""

    B_M: int
    B_N: int
    B_K: int
    warps: int
    s: int
    G_M: int

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) not in SPACE[f.name]:
                raise BadInput(f.name, f"must be one of {', '.join(map(str, SPACE[f.name]))}, got {v!r}")
            object.__setattr__(self, f.name, int(v))

    def as_tuple(self) -> tuple:
        return (self.B_M, self.B_N, self.B_K, self.warps, self.s, self.G_M)

    def as_dict(self) -> dict:
        """``{knob: value}`` in :data:`SPACE` order (the models' parameter names)."""
        return dict(zip(SPACE, self.as_tuple()))

    @property
    def warp_grid(self) -> tuple:
        """``(w_y, w_x)``: the warp grid the block's ``warps`` form (:data:`WARP_GRID`)."""
        return WARP_GRID[self.warps]

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.as_dict().items())


@lru_cache(maxsize=1)
def all_configs() -> tuple:
    """All 6000 configs, in :data:`SPACE` order (the last key varies fastest)."""
    return tuple(GemmConfig(*v) for v in itertools.product(*SPACE.values()))


# --------------------------------------------------------------------------------------- resources
# smem_elements, smem_bytes, regs_estimate: the exact definitions of symbolic.models.gemm (gemm.resources)


def regs_per_thread(B_M, B_N, warps):
    """:func:`symbolic.models.gemm.regs_estimate` with the warp grid of :data:`WARP_GRID`."""
    w_y, w_x = warp_grid(warps)
    return regs_estimate(B_M, B_N, w_y, w_x)


def warp_grid(warps):
    """``(w_y, w_x)`` of a warp count (:data:`WARP_GRID`), elementwise for an array of them."""
    if isinstance(warps, np.ndarray):
        wy = np.vectorize(lambda w: WARP_GRID[int(w)][0])(warps)
        wx = np.vectorize(lambda w: WARP_GRID[int(w)][1])(warps)
        return wy, wx
    return WARP_GRID[int(warps)]


@dataclass(frozen=True)
class LaunchRule:
    """One reason a config cannot launch: ``fails(columns, hw)`` is true (elementwise) when it can't."""

    key: str
    reason: str
    source: str
    fails: Callable


LAUNCH_RULES: tuple = (
    LaunchRule("smem", "shared memory over the 227 KiB a block may use",
               "s (B_M + B_N) B_K x 2 bytes > smem_per_block (H100: 227 KiB, docs/conventions.md §3.1)",
               lambda c, hw: smem_bytes(c["B_M"], c["B_N"], c["B_K"], c["s"]) > hw.smem_per_block),
    LaunchRule("mma", "a warp's tile is smaller than one mma (16x8)",
               "B_M/w_y < 16 or B_N/w_x < 8 with the warp grid (w_y, w_x) of warps {1:(1,1), 2:(1,2), 4:(2,2), 8:(4,2)}",
               lambda c, hw: (c["B_M"] // warp_grid(c["warps"])[0] < MMA_TILE[0])
               | (c["B_N"] // warp_grid(c["warps"])[1] < MMA_TILE[1])),
    LaunchRule("regs", "more than 255 registers per thread",
               "(B_M/w_y)(B_N/w_x)/32 + 40 > max_regs_per_thread (255, docs/conventions.md §3.2)",
               lambda c, hw: regs_per_thread(c["B_M"], c["B_N"], c["warps"]) > hw.max_regs_per_thread),
)


def _config(c) -> GemmConfig:
    """A :class:`GemmConfig` from itself, a mapping of the :data:`SPACE` keys or a 6-tuple in that order."""
    if isinstance(c, GemmConfig):
        return c
    if isinstance(c, Mapping):
        if set(c) != set(SPACE):
            raise BadInput("config", f"needs the keys {', '.join(SPACE)}, got {', '.join(map(str, c))}")
        return GemmConfig(**c)
    try:
        values = tuple(c)
    except TypeError:
        values = None
    if values is None or len(values) != len(SPACE):
        raise BadInput("config", f"must be a GemmConfig or {len(SPACE)} values ({', '.join(SPACE)}), got {c!r}")
    return GemmConfig(*values)


#: the :class:`~symbolic.hardware.GPU` fields the launch rules and the occupancy read
_RULE_FIELDS = ("smem_per_block", "smem_per_sm", "max_regs_per_thread", "regs_per_sm", "max_warps_per_sm",
                "max_blocks_per_sm")


def _gpu(hw) -> GPU:
    gpu = hw.hw if isinstance(hw, TimeModelConstants) else get_hardware(hw)
    missing = [f for f in _RULE_FIELDS if getattr(gpu, f) is None]
    if missing:
        raise BadInput("hw", f"{gpu.name} lacks {', '.join(missing)} (needed by the launch rules)")
    return gpu


def launch_failures(c, hw: GPU | str = H100) -> list[str]:
    """Every rule the config breaks, by key (``[]`` when it launches); see :data:`LAUNCH_RULES` for reasons."""
    c, hw = _config(c), _gpu(hw)
    cols = dict(zip(SPACE, c.as_tuple()))
    return [r.key for r in LAUNCH_RULES if bool(r.fails(cols, hw))]


def static_valid(c, hw: GPU | str = H100) -> bool:
    """True when the config can launch (no rule of :data:`LAUNCH_RULES` fails)."""
    return not launch_failures(c, hw)


# --------------------------------------------------------------------------------------- constants
@dataclass(frozen=True)
class TimeModelConstants:
    """The time model's figures.  Device figures come from :mod:`symbolic.hardware`; the others are
    modelling assumptions, each with its rationale in ``sources``."""

    hw: GPU = H100
    latency_s: float = float(LOADED_HBM_LATENCY.value)
    l2_port_bytes_per_clk: int = L2_BYTES_PER_CLK_PER_SM.value
    smem_bytes_per_s: float = 31e12
    smem_reserved_per_block: int = 1024
    warps_per_tensor_core: int = 1
    l2_bytes_per_s: float = 12e12
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({
        "latency_s": "loaded HBM latency, " + LOADED_HBM_LATENCY.source,
        "l2_port_bytes_per_clk": L2_BYTES_PER_CLK_PER_SM.source,
        "smem_bytes_per_s": "H100 shared memory ~31 TB/s per GPU (FlashAttention-3, arXiv 2407.08608, Table 1; "
                            "docs/conventions.md §3.3), "
                            "an equal share per SM (~128 B/clk)",
        "smem_reserved_per_block": "CUDA reserves 1 KiB of shared memory per block on sm_80/sm_90 "
                                   "(228 KiB per SM = 227 KiB per block + 1 KiB)",
        "warps_per_tensor_core": "4 tensor-core sub-partitions per SM (H100 architecture whitepaper; "
                                 "docs/conventions.md §3.2); a warp issues to one, "
                                 "so a block of w warps drives min(w, 4) of them",
        "l2_bytes_per_s": "H100 L2 ~12 TB/s in all (FlashAttention-3, arXiv 2407.08608, Table 1; "
                          "docs/conventions.md §3.3), shared by the busy SMs",
    }), compare=False, hash=False)

    @property
    def smem_limit(self) -> int:
        return self.hw.smem_per_block

    @property
    def sm_flops(self) -> float:
        return float(self.hw.tc_flops_per_sm_clk * self.hw.clock_hz)

    @property
    def peak_flops(self) -> float:
        return float(self.hw.tc_peak_flops)

    @property
    def l2_port_bytes_per_s(self) -> float:
        return float(self.l2_port_bytes_per_clk * self.hw.clock_hz)

    @property
    def l2_bytes(self) -> int:
        """The L2 the launch order's reuse goes through: the GPU's (H100 and H200: 50 MB, docs/conventions.md §3.1)."""
        return self.hw.l2_bytes

    @property
    def smem_sm_bytes_per_s(self) -> float:
        return self.smem_bytes_per_s / self.hw.sms


#: The H100 tensor-core model the course uses (``H100_TC.smem_limit`` = 227 KiB).
H100_TC = TimeModelConstants()
#: GPUs with time-model constants.  H200 has the H100's SMs, L2 and shared memory (docs/conventions.md §3.1 [f]) and
#: its own HBM (4.8 TB/s); other GPUs lack sourced L2 / shared-memory bandwidths here.
TIME_MODELS: Mapping[str, TimeModelConstants] = MappingProxyType({
    "H100": H100_TC, "H200": TimeModelConstants(hw=H200)})


def time_model_constants(hw) -> TimeModelConstants:
    """The GEMM time model's constants for ``hw`` (a GPU name, a :class:`~symbolic.hardware.GPU`, or the
    constants themselves); :class:`~base.errors.BadInput` naming ``hw`` for a GPU the model has none for."""
    if isinstance(hw, TimeModelConstants):
        return hw
    gpu = get_hardware(hw)
    if gpu.name not in TIME_MODELS:
        raise BadInput("hw", f"no GEMM time-model constants for {gpu.name}; known: {', '.join(TIME_MODELS)}")
    return TIME_MODELS[gpu.name]


#: the time model counts tiles, K-steps and waves in int64 NumPy arrays: every size, and the tiles of the space's
#: smallest tile, stay below this (its times are floats, finite far beyond it)
MODEL_LIMIT = 2**62


def _shown(v: int) -> str:
    return str(v) if v.bit_length() <= 128 else f"a {v.bit_length()}-bit number"


def model_shape(M, N, K) -> tuple:
    """``(M, N, K)`` as positive ints (:class:`~base.errors.BadInput` naming ``M``, ``N`` or ``K`` otherwise)
    within the time model's range: each size, and the ``ceil(M/16) ceil(N/16)`` tiles of the space's
    smallest tile, below :data:`MODEL_LIMIT` (``2**62``); beyond it :class:`~base.errors.BadInput` naming
    ``shape``, before any array is built (the model's int64 counts would wrap there)."""
    M, N, K = positive_int("M", M), positive_int("N", N), positive_int("K", K)
    tiles = -(-M // min(SPACE["B_M"])) * -(-N // min(SPACE["B_N"]))
    if max(M, N, K, tiles) >= MODEL_LIMIT:
        raise BadInput("shape", f"{_shown(M)} x {_shown(N)} x {_shown(K)} is beyond the GEMM time model's range: it "
                                "counts tiles in int64, so M, N, K and the ceil(M/16) ceil(N/16) tiles of the "
                                "smallest tile must stay below 2**62")
    return M, N, K


# --------------------------------------------------------------------------------------- the model
def config_table(configs: Sequence[GemmConfig] | None = None) -> dict[str, np.ndarray]:
    """Columns (int64 arrays) of the configs, one per :data:`SPACE` key."""
    configs = all_configs() if configs is None else [_config(c) for c in configs]
    arr = np.array([c.as_tuple() for c in configs], dtype=np.int64).reshape(-1, len(SPACE))
    return {k: arr[:, i] for i, k in enumerate(SPACE)}


def blocks_per_sm(cols: Mapping[str, np.ndarray], k: TimeModelConstants = H100_TC) -> np.ndarray:
    """Co-resident blocks per SM: the least of the shared-memory, register, warp and block limits."""
    hw = k.hw
    sm = smem_bytes(cols["B_M"], cols["B_N"], cols["B_K"], cols["s"]) + k.smem_reserved_per_block
    regs = regs_per_thread(cols["B_M"], cols["B_N"], cols["warps"]) * 32 * cols["warps"]
    return np.minimum.reduce([hw.smem_per_sm // sm, hw.regs_per_sm // regs,
                              np.full_like(sm, hw.max_warps_per_sm) // cols["warps"],
                              np.full_like(sm, hw.max_blocks_per_sm)])


def launchable(cols: Mapping[str, np.ndarray], hw: GPU | str = H100) -> np.ndarray:
    """Boolean mask over config columns (:func:`config_table`): no rule of :data:`LAUNCH_RULES` fails on ``hw``."""
    hw = _gpu(hw)
    bad = np.zeros(len(cols["B_M"]), dtype=bool)
    for r in LAUNCH_RULES:
        bad |= np.asarray(r.fails(cols, hw), dtype=bool)
    return ~bad


def _round_time(cols, j, M, N, K, k: TimeModelConstants, wy, wx, active):
    """Seconds for one round of ``j`` co-resident blocks on an SM (fill + K-loop + epilogue)."""
    bm, bn, bk = (cols[x].astype(float) for x in ("B_M", "B_N", "B_K"))
    w, st = cols["warps"].astype(float), cols["s"].astype(float)
    tm, tn = np.ceil(M / bm), np.ceil(N / bn)
    rows, cl = M / tm, N / tn                          # valid rows / columns of an average tile
    steps = np.ceil(K / bk)
    flops = 2.0 * bm * bn * bk                         # padded: the whole tile, the whole step
    tc_share = np.minimum(1.0, j * w / (k.hw.tensor_subpartitions * k.warps_per_tensor_core))
    t_c = j * flops / (k.sm_flops * tc_share)
    t_smem = j * w * (bm / wy + bn / wx) * bk * _ELEMENT / k.smem_sm_bytes_per_s
    l2_rate = np.minimum(k.l2_port_bytes_per_s, k.l2_bytes_per_s / active)
    t_port = j * (rows + cl) * bk * _ELEMENT / l2_rate
    t_lat = (k.latency_s + t_c / j) / st
    step = np.maximum.reduce([t_c, t_smem, t_port, t_lat])
    epilogue = j * rows * cl * _ELEMENT / l2_rate
    return k.latency_s + steps * step + epilogue


def times_for_shape(M: int, N: int, K: int, configs: Sequence[GemmConfig] | None = None,
                    hw: GPU | str | TimeModelConstants = H100) -> np.ndarray:
    """Model time (seconds) of every config (default: :func:`all_configs`) on one shape; ``inf`` where
    a config cannot launch.  Vectorised over configs; cached for the full space."""
    M, N, K = model_shape(M, N, K)
    k = time_model_constants(hw)
    if configs is None:
        return _times_all(M, N, K, k).copy()
    cols = config_table(configs)
    return _times(cols, M, N, K, k)


@lru_cache(maxsize=64)
def _times_all(M, N, K, k):
    out = _times(config_table(), M, N, K, k)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=8)
def _index() -> dict:
    return {c: i for i, c in enumerate(all_configs())}


def _times(cols, M, N, K, k: TimeModelConstants) -> np.ndarray:
    hw = k.hw
    ok = launchable(cols, hw)
    out = np.full(len(cols["B_M"]), np.inf)
    if not ok.any():
        return out
    cols = {key: v[ok] for key, v in cols.items()}
    wy, wx = warp_grid(cols["warps"])
    b = blocks_per_sm(cols, k)
    tm = -(-M // cols["B_M"])
    tn = -(-N // cols["B_N"])
    tiles = tm * tn
    per_sm = -(-tiles // hw.sms)                       # tiles on the busiest SM
    rounds = -(-per_sm // b)
    j_last = per_sm - (rounds - 1) * b
    active = np.minimum(tiles, hw.sms).astype(float)
    t_full = _round_time(cols, b.astype(float), M, N, K, k, wy, wx, active)
    t_last = _round_time(cols, j_last.astype(float), M, N, K, k, wy, wx, active)
    t_sm = (rounds - 1) * t_full + t_last
    # HBM: reads through the launch order and the L2, plus the C writes
    wave = np.minimum(b * hw.sms, tiles)
    cap = k.l2_bytes // _ELEMENT
    tilings, which = np.unique(np.stack([cols["B_M"], cols["B_N"], cols["B_K"], cols["G_M"], wave]), axis=1,
                               return_inverse=True)
    reads = np.array(hbm_reads_many(M, N, K, *tilings, cap), dtype=float)[which.ravel()]
    t_hbm = k.latency_s + (reads + M * N) * _ELEMENT / hw.hbm_bytes_per_s
    out[ok] = np.maximum(t_sm, t_hbm)
    return out


def gemm_time(config, M: int, N: int, K: int, hw: GPU | str | TimeModelConstants = H100) -> float:
    """Model time in seconds of one config on ``C[M,N] = A[M,K] B[K,N]`` (FP16); ``inf`` when it can't launch."""
    c = _config(config)
    M, N, K = model_shape(M, N, K)
    k = time_model_constants(hw)
    return float(_times_all(M, N, K, k)[_index()[c]])


# --------------------------------------------------------------------------------------- landscape
@dataclass(frozen=True)
class Landscape:
    """One shape's times over the launchable configs."""

    shape: tuple
    configs: tuple
    times: np.ndarray

    @property
    def best_time(self) -> float:
        return float(self.times.min())

    def best(self, n: int = 1) -> list[tuple[GemmConfig, float]]:
        order = np.argsort(self.times, kind="stable")[:n]
        return [(self.configs[i], float(self.times[i])) for i in order]

    def within(self, factor: float) -> int:
        """How many configs run within ``factor`` x the best time."""
        return int((self.times <= factor * self.best_time).sum())

    def percentiles(self, qs: Iterable[float] = (10, 25, 50, 75, 90)) -> dict:
        return dict(zip(qs, np.percentile(self.times / self.best_time, list(qs))))

    def time_of(self, c) -> float:
        c = _config(c)
        try:
            return float(self.times[self.configs.index(c)])
        except ValueError:
            return math.inf


def landscape(M: int, N: int, K: int, hw=H100) -> Landscape:
    """The launchable configs and their times on ``(M, N, K)``."""
    M, N, K = model_shape(M, N, K)
    k = time_model_constants(hw)
    ts = _times_all(M, N, K, k)
    ok = np.isfinite(ts)
    cfgs = tuple(c for c, good in zip(all_configs(), ok) if good)
    return Landscape((M, N, K), cfgs, ts[ok])


def penalty_matrix(shapes: Sequence[tuple], hw=H100) -> np.ndarray:
    """``P[a, b]`` = time on shape b of shape a's best config / shape b's best time."""
    lands = [landscape(*s, hw=hw) for s in shapes]
    bests = [l.best(1)[0][0] for l in lands]
    return np.array([[lb.time_of(ba) / lb.best_time for lb in lands] for ba in bests])


def sensitivity(M: int, N: int, K: int, base=None, hw=H100) -> dict[str, list[tuple[int, float]]]:
    """From ``base`` (default: the best config), change one knob at a time: ``{knob: [(value, time/base time)]}``
    (``inf`` where the changed config cannot launch)."""
    land = landscape(M, N, K, hw=hw)
    b = land.best(1)[0][0] if base is None else _config(base)
    t0 = gemm_time(b, M, N, K, hw=hw)
    out = {}
    for key, values in SPACE.items():
        row = []
        for v in values:
            d = dict(zip(SPACE, b.as_tuple()))
            d[key] = v
            row.append((v, gemm_time(GemmConfig(**d), M, N, K, hw=hw) / t0))
        out[key] = row
    return out
