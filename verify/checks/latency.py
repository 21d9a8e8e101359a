"""Latency checks: the formulas of :mod:`symbolic.models.latency` against the simulators of
:mod:`numeric.pipeline`, :mod:`numeric.littles` and :mod:`numeric.pingpong`.

Checks (the formula is the model's own ``evaluate``; point keys are the model's parameter names):

* ``latency.pipeline`` / ``latency.pipeline_sync`` - deterministic latency: simulated makespan and
  busy fraction equal the exact formulas (relative 1e-9: the simulator adds floats) over pinned
  points in every regime (latency-bound, compute-bound, bandwidth-bound, ``n < S``, the boundary
  ``L + t_x + t_c = S max(t_x, t_c)``) and hypothesis draws.  The synchronous check runs the
  simulator with the point's buffer count ``S`` (an executor-only key): the buffers must not matter.
* ``latency.pingpong`` - the event simulation's makespan equals the formula (relative 1e-9).

Properties (claims that are not equalities; each names the model whose claim it tests):

* ``latency.littles_law`` - the time-average bytes in flight of a request stream equals
  bandwidth x mean latency within ``tol(n) = k (1 + j (1 + ln n)) / n + 6 j / ((1 + j) sqrt n)``
  (relative), ``k = B L / w`` requests in flight, ``j`` the jitter: the first term bounds the
  window's ramp-up and its tail (the expected largest of ``n`` exponential extras is ``j L H_n``),
  the second is six standard errors of the mean latency.  Deterministic (``j = 0``) the deviation
  is exactly ``(k - 1)/(n - 1 + k) < k/n``.  A point holds the model's ``BW, L, n_SM, w`` (``L`` the
  base latency; the formula is taken at the mean ``L (1 + j)``) and the simulator's ``requests``,
  ``jitter`` and ``seed``.
* ``latency.pipeline.jitter`` - with exponential jitter (mean ``j L``) the formula bounds the
  simulation.  Every seed, surely: ``makespan(L) <= simulated <= makespan(max drawn latency)``
  (the makespan is non-decreasing in each load's latency).  In expectation (Jensen: the makespan
  is a maximum of sums of latencies, hence convex): ``E[simulated] >= makespan(L (1 + j))``,
  checked as ``mean over seeds >= formula - 4 standard errors``.
* ``latency.pipeline.jitter_limit`` - the busy fraction approaches the formula at the mean latency
  as ``S`` grows (``S = 1, 2, 4, ..., n``, the same seeds at every ``S``): Jensen's bound holds at
  every ``S``; from ``stages_to_saturate`` on the formula stays put while each seed's makespan can
  only fall (its loads issue no later), so the gap never grows; and at ``S = n``,
  ``E[simulated] - makespan(L (1 + j)) <= j L (H_n - 1)`` (every load issues at 0, so the makespan is
  at most the formula at the largest drawn latency, whose mean is ``L + j L H_n``), within 4 s.e.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from numeric.littles import simulate_requests
from numeric.pingpong import simulate_pingpong
from numeric.pipeline import simulate
from symbolic.hardware import H100, L2_BYTES_PER_CLK_PER_SM, LOADED_HBM_LATENCY
from symbolic.models.latency import MMA_FLOPS_PER_SCORE, littles_law, pingpong, pipeline, pipeline_sync

from ..core import Check, Property, rel_close

__all__ = ["pipeline_check", "pipeline_sync_check", "pingpong_check", "littles_property", "jitter_property",
           "jitter_limit_property", "littles_tolerance"]

RTOL = 1e-9
Z = 4.0          # standard errors allowed to the statistical (across-seed) inequalities
SEEDS = 24       # seeds per jitter point

F = Fraction


def _pipe_point(n, S, L, t_x, t_c):
    return {"n": n, "S": S, "L": F(L), "t_x": F(t_x), "t_c": F(t_c)}


# The course's (lecture 8) tile, in ns, from the hardware table: a 128x128x64 BF16 GEMM step computed at
# H100's tensor FLOP/SM/clk and clock; its operands (A 128x64 + B 64x128, 2 B each = 32 KiB) moved at the
# assumed L2 bytes/clk per SM, or at an even 1/132 share of HBM bandwidth; the assumed loaded latency.
_TILE_FLOPS = 2 * 128 * 128 * 64
_TILE_BYTES = (128 + 128) * 64 * 2
_GHZ = F(H100.clock_hz, 10**9)
_T_C = F(_TILE_FLOPS, H100.tc_flops_per_sm_clk) / _GHZ
_T_L2 = F(_TILE_BYTES, L2_BYTES_PER_CLK_PER_SM.value) / _GHZ
_T_HBM = F(_TILE_BYTES * H100.sms * 10**9, H100.hbm_bytes_per_s)
_L_NS = LOADED_HBM_LATENCY.value * 10**9

PIPELINE_POINTS = [
    _pipe_point(1, 1, 700, 280, 280),            # a single tile
    _pipe_point(256, 1, 700, 280, 280),          # synchronous, latency-bound
    _pipe_point(256, 2, 700, 280, 280),          # double buffering, latency-bound
    _pipe_point(256, 4, 560, 280, 280),          # boundary: L + t_x + t_c == S max(t_x, t_c)
    _pipe_point(256, 8, 700, 100, 280),          # compute-bound
    _pipe_point(256, 8, 700, 1291, 280),         # bandwidth-bound
    _pipe_point(3, 8, 700, 280, 280),            # n < S
    _pipe_point(8, 8, 700, 280, 280),            # n == S
    _pipe_point(9, 8, 5000, 1, 1),               # n == S + 1, latency-bound
    _pipe_point(1000, 3, F(1, 3), F(2, 7), F(5, 11)),
    _pipe_point(256, 4, _L_NS, _T_L2, _T_C),     # the course's L2 case
    _pipe_point(256, 6, _L_NS, _T_HBM, _T_C),    # the course's HBM case
]
PIPELINE_POINTS_FULL = [
    _pipe_point(100_000, S, L, tx, tc)
    for S in (1, 2, 5, 16) for L, tx, tc in ((700, 280, 280), (10, 280, 100), (10_000, 3, 7))
]


def _pipe_strategy():
    from hypothesis import strategies as st
    t = st.integers(1, 20_000).map(lambda k: F(k, 10))
    return st.fixed_dictionaries({"n": st.integers(1, 3000), "S": st.integers(1, 16), "L": t, "t_x": t, "t_c": t})


def _pipeline_run(point, **kw):
    p = point
    return simulate(p["n"], float(p["t_c"]), float(p["t_x"]), float(p["L"]), p["S"], **kw)


def _two(values):
    return {k: values[k] for k in ("makespan", "busy")}


def _n(pt):
    return pt["n"]


pipeline_check = Check(
    model=pipeline,
    execute=lambda pt: _two(_pipeline_run(pt).as_dict()),
    grid=lambda full: PIPELINE_POINTS + (PIPELINE_POINTS_FULL if full else []),
    quantities=("makespan", "busy"),
    strategy=_pipe_strategy,
    compare=rel_close(RTOL),
    size=_n,
    description="issue-ahead pipeline: simulated makespan/busy == exact formula (rel 1e-9)",
)

pipeline_sync_check = Check(
    model=pipeline_sync,
    execute=lambda pt: _two(_pipeline_run(pt, issue_ahead=False).as_dict()),
    grid=lambda full: PIPELINE_POINTS + (PIPELINE_POINTS_FULL if full else []),
    quantities=("makespan", "busy"),
    strategy=_pipe_strategy,
    draws=20,
    compare=rel_close(RTOL),
    size=_n,
    extra=("S",),                  # the simulator's buffers; synchronous, they must not matter
    description="synchronous loop (any S): simulated makespan/busy == n (L + t_x + t_c) formula",
)


# ------------------------------------------------------------------------------------------ Little's law
def littles_tolerance(n: int, requests_in_flight: float, jitter: float) -> float:
    """The relative tolerance stated in the module docstring (shrinks like ``log n / n + 1/sqrt n``)."""
    k, j = requests_in_flight, jitter
    return k * (1 + j * (1 + math.log(n))) / n + 6 * j / ((1 + j) * math.sqrt(n))


_H100_BW = F(H100.hbm_bytes_per_s)                  # bytes/s, shared evenly by the SMs (docs/conventions.md §3, §5)
_LAT = LOADED_HBM_LATENCY.value                     # seconds


def _littles_points(full):
    sizes = (10**3, 10**4, 10**5) + ((10**6,) if full else ())
    return [{"BW": _H100_BW, "L": _LAT, "n_SM": H100.sms, "w": w, "requests": n, "jitter": F(j), "seed": s}
            for n in sizes for w in (16, 32 * 1024) for j in (0, 1) for s in ((0, 1) if j else (0,))]


def _littles_holds(pt):
    mean_lat = pt["L"] * (1 + pt["jitter"])
    f = float(littles_law.evaluate("inflight_per_sm", BW=pt["BW"], L=mean_lat, n_SM=pt["n_SM"], w=pt["w"]))
    r = simulate_requests(pt["requests"], pt["w"], float(F(pt["BW"]) / pt["n_SM"]), float(pt["L"]),
                          jitter=float(pt["jitter"]), seed=pt["seed"])
    e = r.mean_inflight_bytes
    tol = littles_tolerance(pt["requests"], f / pt["w"], float(pt["jitter"]))
    dev = abs(e - f) / f
    if dev <= tol:
        return None
    return f"inflight_bytes: formula {f:.6g} vs measured {e:.6g} (rel. {dev:.3g} > tol {tol:.3g})"


littles_property = Property(
    name="latency.littles_law",
    model=littles_law,
    holds=_littles_holds,
    grid=_littles_points,
    size=lambda pt: pt["requests"],
    description="time-average bytes in flight == bandwidth x mean latency within tol(n) (H100 per-SM share)",
)


# ------------------------------------------------------------------------------------------ ping-pong
# H100 BF16 and FP8 (twice) tensor peaks; exp rate from NVIDIA's table and from the FlashAttention-3 paper
PINGPONG_POINTS = [
    {"d": d, "F_tc": F(H100.tc_peak_flops * mul), "R_exp": F(rate), "n": n, "k": k, "G": g}
    for d in (64, 128) for mul in (1, 2) for rate in (H100.exp_per_s, H100.exp_per_s_alt)
    for n in (1, 2, 7, 64) for k in (1, 128 * 128) for g in (1, 2, 3)
]


def _pp_strategy():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"d": st.integers(1, 512), "F_tc": st.integers(1, 10**6).map(F),
                                  "R_exp": st.integers(1, 10**6).map(F), "n": st.integers(1, 200),
                                  "k": st.integers(1, 64), "G": st.integers(1, 6)})


def _pp_run(pt):
    t_mma = float(pt["k"] * MMA_FLOPS_PER_SCORE * pt["d"] / pt["F_tc"])   # the FA3 counting convention
    t_exp = float(pt["k"] / pt["R_exp"])
    return {"makespan": simulate_pingpong(pt["n"], t_mma, t_exp, pt["G"]).makespan}


pingpong_check = Check(
    model=pingpong,
    execute=_pp_run,
    grid=lambda full: PINGPONG_POINTS,
    quantities=("makespan",),
    strategy=_pp_strategy,
    draws=30,
    compare=rel_close(RTOL),
    size=_n,
    description="G warpgroups alternating matmul/exp: event simulation == makespan formula (rel 1e-9)",
)


# ------------------------------------------------------------------------------------------ jitter
JITTER_POINTS = [
    dict(_pipe_point(256, S, _L_NS, _T_L2, _T_C), jitter=F(j)) for S in (1, 2, 4, 8, 16) for j in (F(1, 2), 1)
] + [
    dict(_pipe_point(256, S, _L_NS, _T_HBM, _T_C), jitter=F(1)) for S in (1, 4, 8)
] + [
    dict(_pipe_point(500, S, 300, 50, 100), jitter=F(2)) for S in (1, 3, 12)
]


def _jitter_runs(pt):
    base = {k: v for k, v in pt.items() if k != "jitter"}
    runs = [_pipeline_run(base, jitter=float(pt["jitter"]), seed=s) for s in range(SEEDS)]
    ms = np.array([r.makespan for r in runs])
    return {"makespans": ms, "latency_max": np.array([r.latencies.max() for r in runs])}


def _pipe_makespan(pt, L):
    q = {k: v for k, v in pt.items() if k != "jitter"}
    q["L"] = L
    return pipeline.evaluate("makespan", **q)


def _jitter_holds(pt):
    executed = _jitter_runs(pt)
    ms = executed["makespans"]
    msgs = []
    lo = float(_pipe_makespan(pt, pt["L"]))                  # the formula at the base latency: a sure floor
    if np.any(ms < lo * (1 - RTOL)):
        msgs.append(f"a seed's makespan {ms.min():.6g} < makespan(L) {lo:.6g}")
    for s, (m_s, lmax) in enumerate(zip(ms, executed["latency_max"])):
        hi = float(_pipe_makespan(pt, F(float(lmax))))       # the formula at that seed's largest latency
        if m_s > hi * (1 + RTOL):
            msgs.append(f"seed {s}: makespan {m_s:.6g} > makespan(max drawn latency) {hi:.6g}")
            break
    mean, se = ms.mean(), ms.std(ddof=1) / math.sqrt(len(ms))
    jensen = float(_pipe_makespan(pt, pt["L"] * (1 + pt["jitter"])))
    if mean < jensen - Z * se:
        msgs.append(f"mean makespan {mean:.6g} < makespan(mean latency) {jensen:.6g} - {Z:g} s.e. ({se:.3g})")
    return "; ".join(msgs) or None


jitter_property = Property(
    name="latency.pipeline.jitter",
    model=pipeline,
    holds=_jitter_holds,
    grid=lambda full: JITTER_POINTS,
    size=_n,
    description=f"exponential jitter: makespan(L) <= each seed <= makespan(max latency); "
                f"mean over {SEEDS} seeds >= makespan(mean latency) - {Z:g} s.e.",
)


def _harmonic(n: int) -> float:
    return float(sum(F(1, i) for i in range(1, n + 1)))


def _ladder(n: int) -> tuple[int, ...]:
    """Buffer counts 1, 2, 4, ... below ``n``, then ``n`` (every load issued at time 0)."""
    return tuple(2**e for e in range(n.bit_length()) if 2**e < n) + (n,)


JITTER_LIMIT_POINTS = [dict(n=n, L=_L_NS, t_x=_T_L2, t_c=_T_C, jitter=F(j)) for n in (64, 256) for j in (F(1, 2), 1, 3)]


def _jitter_limit_holds(pt):
    mean_L = pt["L"] * (1 + pt["jitter"])
    base = {k: v for k, v in pt.items() if k != "jitter"}
    ladder = _ladder(pt["n"])
    at_mean_L = [pipeline.evaluate("makespan", **dict(base, S=S, L=mean_L)) for S in ladder]
    need = pipeline.evaluate("stages_to_saturate", **dict(base, S=1, L=mean_L))
    slack = float(pt["jitter"] * pt["L"]) * (_harmonic(pt["n"]) - 1)
    makespans = [_jitter_runs(dict(pt, S=S))["makespans"] for S in ladder]

    msgs, gaps = [], []
    for S, at_mean, ms in zip(ladder, at_mean_L, makespans):
        mean, se = ms.mean(), ms.std(ddof=1) / math.sqrt(len(ms))
        gap = mean - float(at_mean)
        if gap < -Z * se:                                    # Jensen, at every S
            msgs.append(f"S={S}: mean makespan {mean:.6g} < makespan(mean latency) {float(at_mean):.6g} "
                        f"- {Z:g} s.e. ({se:.3g})")
        if S >= need:
            gaps.append((S, gap, se))
    # past stages_to_saturate the formula no longer moves with S while every seed's makespan can only
    # fall (its loads issue no later): the gap is non-increasing, surely (same seeds at every S)
    for (S0, g0, _), (S1, g1, _) in zip(gaps, gaps[1:]):
        if g1 > g0 + RTOL * abs(float(at_mean_L[-1])):
            msgs.append(f"gap to makespan(mean latency) grew from S={S0} ({g0:.6g}) to S={S1} ({g1:.6g})")
    S, gap, se = gaps[-1]                                    # S = n: every load issued at time 0
    if S == ladder[-1] and gap > slack + Z * se:
        msgs.append(f"S={S}: gap {gap:.6g} > j L (H_n - 1) = {slack:.6g} + {Z:g} s.e. ({se:.3g})")
    return "; ".join(msgs) or None


jitter_limit_property = Property(
    name="latency.pipeline.jitter_limit",
    model=pipeline,
    holds=_jitter_limit_holds,
    grid=lambda full: JITTER_LIMIT_POINTS,
    size=_n,
    description="S = 1, 2, 4, ..., n: E[makespan] >= makespan(mean latency) at each S; from stages_to_saturate "
                "on the gap only shrinks, to <= j L (H_n - 1) at S = n (within 4 s.e.)",
)
