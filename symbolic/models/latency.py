"""Latency and throughput: Little's law, the software pipeline of one SM, ping-pong overlap.

Four models, each a module-level :class:`~symbolic.registry.ModelRef` found by discovery:

* ``latency.littles_law`` - bytes in flight = bandwidth x latency, per SM, and the outstanding
  requests (and warps) that a given access width implies (Little 1961; ``docs/conventions.md`` §5).
* ``latency.pipeline`` / ``latency.pipeline_sync`` - one SM's load -> compute loop with ``S`` buffers:
  the exact makespan of ``n`` tiles derived from the schedule's recurrence (:func:`pipeline_makespan`),
  the busy fraction, the steady state ``max(t_c, t_x, (L + t_x + t_c)/S)`` and the stage counts.
* ``latency.pingpong`` - two (or ``G``) consumer warpgroups alternating a matmul phase on the tensor
  cores and an exp phase on the special-function unit (FlashAttention-3, arXiv 2407.08608, §3.1).

The parameters are declared here, each with the name a user types, its LaTeX form and its meaning.
Times and rates are positive reals (seconds, bytes/s, FLOP/s); an exact evaluation takes ``Fraction``
values.  Nothing here simulates: :mod:`numeric.pipeline`, :mod:`numeric.littles` and
:mod:`numeric.pingpong` run the schedules independently and :mod:`verify.checks.latency` checks that
the two agree.
"""

from __future__ import annotations

from types import MappingProxyType

import sympy as sp

from ..asymptotics import Regime
from ..hardware import H100
from ..model import Model
from ..notes import code, note, symbol
from ..params import param, real_param
from ..registry import defines

__all__ = ["pipeline_makespan", "pipeline_longest_path", "littles_law", "pipeline", "pipeline_sync", "pingpong",
           "n", "S", "L", "t_x", "t_c", "BW", "n_SM", "w", "W_max", "F_tc", "R_exp", "k", "G", "d",
           "WARP_SIZE", "MMA_FLOPS_PER_SCORE", "ACCESS_WIDTHS"]


# ------------------------------------------------------------------------------------------ parameters
n = param("n", "tiles processed, in order", latex="n")
S = param("S", "shared-memory buffers (pipeline stages)", latex="S")
L = real_param("L", "latency of one load, issue to first byte (s)", latex="L")
t_x = real_param("t_x", "transfer time of one tile on the SM's bandwidth share (s)", latex="t_x")
t_c = real_param("t_c", "compute time of one tile (s)", latex="t_c")
BW = real_param("BW", "memory bandwidth shared by the SMs (bytes/s)", latex="B")
n_SM = param("n_SM", "SMs sharing the bandwidth evenly", latex="n_{SM}")
w = param("w", "bytes one request moves (access width)", latex="w")
W_max = param("W_max", "resident warps per SM", latex="W_{max}")
F_tc = real_param("F_tc", "tensor-core throughput (FLOP/s)", latex="F_{tc}")
R_exp = real_param("R_exp", "exp throughput of the special-function units (exp/s)", latex="R_{exp}")
k = param("k", "attention scores per tile", latex="k")
G = param("G", "consumer warpgroups taking tiles in turn", latex="G")
d = param("d", "head dimension", latex="d")

#: latency segments on a path through the schedule's dependency graph (derivation only)
_m = sp.Dummy("m", integer=True, positive=True)

WARP_SIZE = 32                                 # threads per warp (CUDA C++ Programming Guide, SIMT architecture)
#: FLOP per attention score: ``Q K^T`` (2 d) + ``P V`` (2 d)  (FlashAttention-3 §3.1 counting;
#: ``docs/conventions.md`` §1)
MMA_FLOPS_PER_SCORE = 4

#: Bytes one request moves, by access kind (``w`` in ``latency.littles_law``); who issues it.
#: Sources: PTX ISA (ld.global widths, cp.async 4/8/16 B), Hopper tuning guide (TMA bulk tensor copies);
#: the 32 KiB TMA tile is the lecture-8 example (A 128x64 + B 64x128 in BF16).
ACCESS_WIDTHS = MappingProxyType({
    "ld.global.f32 (4 B per thread)": (4, "thread"),
    "ld.global.v4 (16 B per thread)": (16, "thread"),
    "cp.async (16 B per thread, bypasses registers)": (16, "thread"),
    "TMA bulk copy (32 KiB per instruction)": (32 * 1024, "one thread per tile"),
})

# the title's L = lambda W: its own symbols (the mean number in the system, the arrival rate, the mean time in it);
# lambda is named "Lambda" so that SymPy's ordering of the product (by name) keeps the title's "lambda W"
_LITTLE = note("Little, J. D. C. (1961), “A proof for the queuing formula: ",
               sp.Eq(symbol("L"), symbol("Lambda", r"\lambda", "λ") * symbol("W")), "”, Operations Research 9(3), "
               "383-387")
_FA3 = "FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608) \u00a73.1"
_HOPPER = "NVIDIA Hopper tuning guide (asynchronous copies, TMA)"


# ------------------------------------------------------------------------------------------ Little's law
@defines("latency.littles_law", "bytes in flight = bandwidth x latency; requests and warps per SM (Little 1961)")
def littles_law() -> Model:
    """Little's law for a memory system: the bytes that must be in flight to keep ``BW`` bytes/s
    busy through a latency ``L`` are ``BW L`` (Little 1961: mean number in a system = arrival rate x
    mean time in it; ``docs/conventions.md`` §5: 3.35 TB/s x 700 ns = 2.35 MB, 17.8 KB per SM on 132 SMs,
    H100 figures from NVIDIA's Hopper tuning guide and H100 product page).

    Convention: the bandwidth is shared evenly by ``n_SM`` SMs; a request moves ``w`` bytes and stays
    outstanding for ``L``.  ``warps_per_sm`` counts one request per thread (32 per warp), the
    figure to hold against the ``W_max`` = 64 resident-warp limit; ``loads_per_thread`` is the
    number of independent loads each thread must keep outstanding when ``W_max`` warps are resident
    (instruction-level parallelism), a ceiling because a thread issues whole loads.
    """
    inflight = BW * L
    per_sm = inflight / n_SM
    requests = per_sm / w
    warps = requests / WARP_SIZE
    return Model(
        name="latency.littles_law",
        summary=note("bytes in flight: bandwidth times latency, ", BW * L),
        quantities={
            "inflight_bytes": inflight,
            "inflight_per_sm": per_sm,
            "requests_per_sm": requests,
            "warps_per_sm": warps,
            "loads_per_thread": sp.ceiling(requests / (WARP_SIZE * W_max)),
        },
        params=(BW, L, n_SM, w, W_max),
        units={"inflight_bytes": "bytes", "inflight_per_sm": "bytes", "requests_per_sm": "1",
               "warps_per_sm": "1", "loads_per_thread": "1"},
        defaults={"W_max": H100.max_warps_per_sm},
        asymptotic_quantity="inflight_bytes",
        source=_LITTLE + note("; ", code("docs/conventions.md"), f" §5 (bandwidth and latency figures; {_HOPPER})"),
        notes=(note("700 ns is a loaded-latency assumption (", code("symbolic.hardware.LOADED_HBM_LATENCY"),
                    "), not a measurement."),),
    )


# ------------------------------------------------------------------------------------------ pipeline
def pipeline_longest_path(segments, n_, S_, L_, t_x_, t_c_) -> sp.Expr:
    """Length of the longest path through the schedule's dependency graph that crosses ``segments``
    load latencies (see :func:`pipeline_makespan` for the graph)."""
    T = L_ + t_x_ + t_c_
    p = sp.Max(t_x_, t_c_)
    return segments * T + (n_ - 1 - (segments - 1) * S_) * p


def pipeline_makespan(n_=n, S_=S, L_=L, t_x_=t_x, t_c_=t_c) -> sp.Expr:
    """Exact makespan of ``n`` tiles through one SM's load -> compute loop, deterministic latency.

    The schedule (tiles ``i = 0 .. n-1``, all times from 0; ``a`` = load issued, ``r`` = tile fully
    in shared memory, ``f`` = compute finished)::

        a_i = 0                          for i < S       (S buffers, all free at the start)
        a_i = f_{i-S}                    for i >= S      (issue-ahead: the load of tile i may issue
                                                           as soon as buffer i mod S is released)
        r_i = max(a_i + L, r_{i-1}) + t_x                (transfers serialised on the SM's bandwidth
                                                           share, in issue order, after the latency)
        f_i = max(r_i, f_{i-1}) + t_c                    (compute one tile at a time, in order)

    The synchronous loop (issue the next load only after computing the current tile) is ``S = 1``.
    Serialising at issue instead (``r_i = max(a_i, r_{i-1} - L) + t_x + L``) gives the same ``r_i``.

    Derivation.  The recurrence is max-plus linear, so ``f_{n-1}`` is the longest path in its
    dependency graph from a start node ``a_j = 0`` (``j < S``).  A path alternates *segments*: a
    latency ``L`` at some issue node, a run of transfers (``t_x`` each), a run of computes
    (``t_c`` each), then the edge ``f_i -> a_{i+S}`` into the next segment.  A path with ``m``
    segments pays ``m (L + t_x + t_c)`` plus one ``t_x`` or ``t_c`` for each of the remaining
    ``n - 1 - (m-1) S - j`` index steps, so its best length is (``j = 0``, every step at
    ``p = max(t_x, t_c)``)::

        P(m) = m T + (n - 1 - (m-1) S) p,     T = L + t_x + t_c,   1 <= m <= ceil(n / S).

    ``P`` is linear in ``m`` (checked below), so the maximum sits at an end:

        makespan = T + (n - 1) p                                      if T <= S p
                 = ceil(n/S) T + (n - 1 - S (ceil(n/S) - 1)) p          otherwise.

    ``T <= S p`` is the throughput-bound regime (enough buffers: the bottleneck is the larger of
    compute and transfer); otherwise latency-bound (every ``S``-th tile waits a full round trip).
    ``n < S`` falls in the first piece (``ceil(n/S) = 1``).  The steady state is the one of
    ``docs/conventions.md`` §5; the exact form is derived here.
    """
    path = pipeline_longest_path(_m, n_, S_, L_, t_x_, t_c_)
    if sp.diff(path, _m, 2) != 0:                       # the endpoint argument needs linearity in m
        raise AssertionError("longest path is not linear in the segment count")
    T = L_ + t_x_ + t_c_
    p = sp.Max(t_x_, t_c_)
    return sp.Piecewise((path.subs(_m, 1), T <= S_ * p),
                        (path.subs(_m, sp.ceiling(n_ / S_)), True))


def _pipeline_quantities(S_) -> dict:
    T = L + t_x + t_c
    makespan = pipeline_makespan(n, S_, L, t_x, t_c)
    period = sp.Max(t_c, t_x, T / S_)
    return {
        "makespan": makespan,
        "busy": n * t_c / makespan,
        "period": period,
        "steady_busy": t_c / period,
        "bandwidth_cap": sp.Min(1, t_c / t_x),
        "stages_to_hide": sp.ceiling(T / t_c),
        "stages_to_saturate": sp.ceiling(T / sp.Max(t_x, t_c)),
    }


_PIPE_UNITS = {"makespan": "s", "busy": "1", "period": "s", "steady_busy": "1", "bandwidth_cap": "1",
               "stages_to_hide": "1", "stages_to_saturate": "1"}


@defines("latency.pipeline", "one SM's load->compute loop, S buffers, loads issued ahead: exact makespan")
def pipeline() -> Model:
    """Software pipeline of one SM with ``S`` buffers and loads issued ahead.

    Quantities: ``makespan`` (exact, :func:`pipeline_makespan`), ``busy = n t_c / makespan`` (the
    tensor-core busy fraction), the steady-state ``period = max(t_c, t_x, (L + t_x + t_c)/S)`` per
    tile and ``steady_busy = t_c / period`` (the ``n -> oo`` limit of ``busy``), the bandwidth cap
    ``min(1, t_c/t_x)``, ``stages_to_hide = ceil((L + t_x + t_c)/t_c)`` (``docs/conventions.md`` §5:
    the stage count that hides the latency when the transfer is not the bottleneck) and
    ``stages_to_saturate = ceil((L + t_x + t_c)/max(t_x, t_c))``, the least ``S`` at which the
    makespan is throughput-bound (the first piece of the makespan).
    """
    q = _pipeline_quantities(S)
    latency_bound = Regime(
        description=note("latency-bound: ", sp.Le(t_x, L), ", ", sp.Le(t_c, L), " and ",
                         sp.Le(S * sp.Max(t_x, t_c), L + t_x + t_c)),
        le=((t_x, L), (t_c, L)),
        subs={q["period"]: (L + t_x + t_c) / S})
    return Model(
        name="latency.pipeline",
        summary=note("load→compute pipeline, ", S, " buffers, issue-ahead"),
        quantities=q,
        params=(n, S, L, t_x, t_c),
        units=_PIPE_UNITS,
        regime=latency_bound,
        asymptotic_quantity="period",
        source=note("steady state: ", code("docs/conventions.md"), " §5 (software pipelining with ", S, " buffers; ",
                    _HOPPER, "); exact makespan derived from the schedule's recurrence (",
                    code("symbolic/models/latency.py"), ", ", code("pipeline_makespan"), ")"),
        notes=("Loads are serialised on the SM's bandwidth share; compute runs one tile at a time.",),
    )


def _false_in_every_case(cond) -> bool:
    """True when SymPy proves ``cond`` false in each case of every ``Max`` in it (``Max(a, b)``
    replaced by ``a``, then by ``b``); the symbols' positivity does the rest."""
    maxes = sorted(cond.atoms(sp.Max), key=sp.default_sort_key)
    if not maxes:
        return cond is sp.false
    first = maxes[0]
    return all(_false_in_every_case(cond.subs(first, arg)) for arg in first.args)


def _drop_false_pieces(pw: sp.Piecewise) -> sp.Expr:
    kept = [(e, c) for e, c in pw.args if c is sp.true or not _false_in_every_case(c)]
    return kept[0][0] if len(kept) == 1 else sp.Piecewise(*kept)


@defines("latency.pipeline_sync", "one SM's load->compute loop, synchronous (load, wait, compute)")
def pipeline_sync() -> Model:
    """The synchronous loop: the load of tile ``i`` is issued when tile ``i-1`` has been computed,
    whatever the buffer count.  Its recurrence is the pipeline's with ``S = 1``, so every quantity
    is :func:`pipeline`'s at ``S = 1``; SymPy proves the throughput piece's condition
    ``L + t_x + t_c <= max(t_x, t_c)`` false (case by case on the ``Max``), leaving
    ``makespan = n (L + t_x + t_c)``."""
    q = {name: sp.simplify(v.replace(lambda e: isinstance(e, sp.Piecewise), _drop_false_pieces))
         for name, v in _pipeline_quantities(sp.Integer(1)).items()}
    return Model(
        name="latency.pipeline_sync",
        summary="load→compute loop, synchronous",
        quantities=q,
        params=(n, L, t_x, t_c),
        units=_PIPE_UNITS,
        asymptotic_quantity="makespan",
        # S is not a parameter here (the loop is the pipeline at one buffer): the note's own symbol
        source=note(code("docs/conventions.md"), " §5 with ", sp.Eq(symbol("S"), 1), "; exact makespan derived from "
                    "the schedule's recurrence (", code("symbolic/models/latency.py"), ", ", code("pipeline_makespan"),
                    ")"),
    )


# ------------------------------------------------------------------------------------------ ping-pong
@defines("latency.pingpong", "two consumer warpgroups alternating matmul and exp (FlashAttention-3 ping-pong)")
def pingpong() -> Model:
    """Ping-pong scheduling of ``G`` consumer warpgroups (FlashAttention-3, arXiv 2407.08608, §3.1).

    Per attention score: ``t_mma = 4 d / F_tc`` (``Q K^T`` and ``P V``, 2 d FLOP each, at ``F_tc``
    tensor FLOP/s) and ``t_exp = 1 / R_exp`` (one exp at ``R_exp`` exp/s).  One warpgroup runs the two in
    series (``serial``); with two or more they overlap on separate units and the steady state is
    ``max(t_mma, t_exp)`` (``overlapped``); ``gain = serial / overlapped``.  FP8 is the same model at
    twice the BF16 ``F_tc``.  H100's ``R_exp`` has two sources (:data:`symbolic.hardware.H100`):
    ``exp_per_s`` = 4.5 T/s from NVIDIA's table, the figure behind the course's 1.4x (BF16) and 1.9x
    (FP8) gains, and ``exp_per_s_alt`` = 3.9 T/s from the FlashAttention-3 paper (gains 1.50x, 1.99x).

    ``makespan`` is exact for ``n`` tiles of ``k`` scores: tile ``j`` belongs to warpgroup
    ``j mod G``; the tensor cores serve the tiles in order (FA3 enforces it with named barriers),
    the exp unit likewise, and a warpgroup starts its next matmul when its previous exp is done.
    That is the pipeline recurrence with ``S = G`` buffers, no latency, ``t_x = k t_mma`` and
    ``t_c = k t_exp``, so the makespan is :func:`pipeline_makespan` at those values.
    ``serial_makespan = n k (t_mma + t_exp)`` is one warpgroup doing everything.
    """
    t_mma = MMA_FLOPS_PER_SCORE * d / F_tc
    t_exp = 1 / R_exp
    serial = t_mma + t_exp
    overlapped = sp.Max(t_mma, t_exp)
    return Model(
        name="latency.pingpong",
        summary="matmul/exp overlap of two consumer warpgroups",
        quantities={
            "t_mma": t_mma,
            "t_exp": t_exp,
            "exp_over_mma": t_exp / t_mma,
            "serial": serial,
            "overlapped": overlapped,
            "gain": serial / overlapped,
            "makespan": pipeline_makespan(n, G, sp.Integer(0), k * t_mma, k * t_exp),
            "serial_makespan": n * k * serial,
        },
        params=(d, F_tc, R_exp, n, k, G),
        units={"t_mma": "s", "t_exp": "s", "exp_over_mma": "1", "serial": "s", "overlapped": "s", "gain": "1",
               "makespan": "s", "serial_makespan": "s"},
        defaults={"n": 1, "k": 1, "G": 2},
        asymptotic_quantity="serial",
        source=note(f"{_FA3} (ping-pong scheduling; 3.9 T exp/s on H100 SXM5); 4.5 T exp/s: NVIDIA's Blackwell Ultra "
                    "blog table (H100 column); counting: ", code("docs/conventions.md"), " §1"),
    )
