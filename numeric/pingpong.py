"""Ping-pong simulator: consumer warpgroups alternating a matmul phase and an exp phase
(FlashAttention-3's schedule, arXiv 2407.08608 §3.1).

The machine: one tensor-core unit and one exp (special-function) unit, each serving one warpgroup
at a time.  ``n_tiles`` tiles are dealt round-robin to ``warpgroups`` warpgroups (tile ``j`` to
warpgroup ``j mod warpgroups``).  A warpgroup processes its tiles in order; for each it runs the
matmul phase (``t_mma`` on the tensor cores) and then the exp phase (``t_exp`` on the exp unit).
The tensor cores take tiles strictly in tile order (FA3 orders the warpgroups' GEMMs with named
barriers); the exp unit serves requests first come, first served (ties: lower tile first).

An event-driven simulation: a heap of (time, event) pairs, each unit with a queue.  Reports the
makespan, each unit's busy fraction and every phase's start time.  Plain floats in and out.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from base import validate

from .pipeline import finite_span

__all__ = ["PingPongRun", "simulate_pingpong", "MAX_TILES"]

#: at most this many tiles per run (three heap events each, about 5 us: 5 s); ``max_tiles=``
MAX_TILES = 1 << 20


@dataclass(frozen=True, eq=False)
class PingPongRun:
    n_tiles: int
    warpgroups: int
    t_mma: float
    t_exp: float
    mma_start: np.ndarray
    exp_start: np.ndarray
    makespan: float

    @property
    def tc_busy(self) -> float:
        return self.n_tiles * self.t_mma / self.makespan

    @property
    def exp_busy(self) -> float:
        return self.n_tiles * self.t_exp / self.makespan

    @property
    def per_tile(self) -> float:
        return self.makespan / self.n_tiles


def simulate_pingpong(n_tiles: int, t_mma: float, t_exp: float, warpgroups: int = 2, *,
                      max_tiles: int = MAX_TILES) -> PingPongRun:
    """Simulate ``n_tiles`` tiles; :class:`~base.errors.BadInput` (a ``ValueError``) naming the parameter
    for a count < 1, a time <= 0, or more than ``max_tiles`` tiles (:data:`MAX_TILES`, refused before
    anything is allocated)."""
    n_tiles = validate.integer("n_tiles", n_tiles)
    validate.budget("n_tiles", n_tiles, max_tiles, "tiles to simulate", "max_tiles")
    warpgroups = validate.integer("warpgroups", warpgroups)
    t_mma = validate.time("t_mma", t_mma)
    t_exp = validate.time("t_exp", t_exp)
    finite_span(n_tiles * (t_mma + t_exp), t_mma=t_mma, t_exp=t_exp)

    mma_start = np.full(n_tiles, np.nan)
    exp_start = np.full(n_tiles, np.nan)
    events: list = []            # (time, order, kind, tile)
    seq = 0

    def push(time, kind, tile):
        nonlocal seq
        heapq.heappush(events, (time, seq, kind, tile))
        seq += 1

    tc_next = 0                  # the tile the tensor cores serve next (strict order)
    tc_idle = True
    tc_waiting: set = set()      # tiles whose warpgroup is ready for the matmul
    exp_queue: list = []         # (request time, tile) first come, first served
    exp_idle = True
    end = 0.0

    for w in range(min(warpgroups, n_tiles)):
        push(0.0, "ready", w)    # each warpgroup's first tile
    while events:
        now, _, kind, tile = heapq.heappop(events)
        if kind == "ready":                      # warpgroup wants the tensor cores for `tile`
            tc_waiting.add(tile)
        elif kind == "mma_done":
            tc_idle = True
            heapq.heappush(exp_queue, (now, tile))
        elif kind == "exp_done":
            exp_idle = True
            end = max(end, now)
            nxt = tile + warpgroups              # the same warpgroup's next tile
            if nxt < n_tiles:
                push(now, "ready", nxt)
        # dispatch whatever can start now
        if tc_idle and tc_next in tc_waiting:
            tc_waiting.discard(tc_next)
            mma_start[tc_next] = now
            push(now + t_mma, "mma_done", tc_next)
            tc_next += 1
            tc_idle = False
        if exp_idle and exp_queue:
            _, j = heapq.heappop(exp_queue)
            exp_start[j] = now
            push(now + t_exp, "exp_done", j)
            exp_idle = False
    return PingPongRun(n_tiles=n_tiles, warpgroups=warpgroups, t_mma=t_mma, t_exp=t_exp,
                       mma_start=mma_start, exp_start=exp_start, makespan=end)
