"""Discrete-event simulation of one SM's load -> compute loop (software pipelining, cp.async / TMA).

The machine: ``stages`` shared-memory buffers; one *channel* (the SM's share of L2 or HBM
bandwidth) that moves one tile at a time in ``t_x`` seconds; one tensor-core unit that computes one
tile at a time in ``t_comp`` seconds.  Tiles ``0 .. n-1`` go through it in order:

1. **issue** - the load of tile ``i`` is issued when its buffer (``i mod stages``) is free: at
   time 0 for the first ``stages`` tiles, otherwise when tile ``i - stages`` has been computed
   (``issue_ahead=True``).  Synchronous (``issue_ahead=False``): when tile ``i - 1`` has been
   computed, whatever the buffer count - "load, wait, compute".
2. **latency** - the request spends ``latency`` (plus, with ``jitter > 0``, an exponential extra with
   mean ``jitter x latency``, drawn from ``numpy.random.default_rng(seed)``) before its data
   starts to arrive;
3. **transfer** - the data then crosses the channel for ``t_x``; the channel carries one tile at a
   time, in issue order (a later tile waits for the earlier one's transfer to end);
4. **compute** - when the tile has arrived and the tensor core is free, it computes for ``t_comp``;
   at the end its buffer is released.

The run reports the makespan (the last compute's end, from time 0), the busy fraction
``n t_comp / makespan``, every tile's event times, and the bytes in flight over time (a tile counts
from issue until it has fully arrived).  Plain floats in, plain floats out; no formula is used here.
The machine is the one of ``docs/conventions.md`` §5 (software pipelining with ``S`` buffers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import numpy as np

from base import validate
from base.errors import BadInput

__all__ = ["PipelineRun", "simulate", "draw_latencies", "finite_span", "latency_shares", "MAX_TILES"]

#: at most this many tiles per run (about 0.5 us and 100 bytes each: 2 s and 400 MB); ``max_tiles=``
MAX_TILES = 1 << 22


def draw_latencies(n: int, latency: float, jitter: float, seed) -> np.ndarray:
    """Per-load latencies: ``latency`` plus an exponential extra of mean ``jitter * latency`` (``inf`` where that
    overflows float64: the simulators then refuse the run, naming ``jitter``)."""
    seed = validate.seed("seed", seed)
    if jitter == 0:
        return np.full(n, latency)
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):
        return latency + rng.exponential(jitter * latency, size=n)


def finite_span(bound: float, *, shares: Optional[dict] = None, **times) -> None:
    """Refuse a run whose event times could overflow float64: ``bound`` is an upper bound of its last
    event (every step done one after another).  A finite input whose sum is ``inf`` would give an infinite
    makespan silently; :class:`~base.errors.BadInput` names the parameter of ``times`` (name=value) with the
    largest share of ``bound`` instead: ``shares[name]`` (e.g. ``n t_comp``; ``jitter``'s share is what
    the drawn extras add to ``n latency``), or the value itself when ``shares`` is not given.  Among equal
    (infinite) shares the first named wins, so list a parameter before those its share depends on
    (``latency`` before ``jitter``)."""
    if np.isfinite(bound):
        return
    shares = times if shares is None else shares
    name = max(times, key=lambda k: _order(shares[k]))
    remedy = "give a smaller jitter" if name == "jitter" else "give smaller times, in other units"
    raise BadInput(name, f"{times[name]!r} makes the simulated times overflow float64 (their sum exceeds "
                         f"{np.finfo(float).max:.3g}); {remedy}")


def _order(share: float) -> float:
    """A share for ``max``: ``nan`` (``inf - inf``: no share of its own) ranks below every number."""
    return -math.inf if math.isnan(share) else share


def latency_shares(n: int, latency: float, lat: np.ndarray) -> tuple:
    """``(sum of the drawn latencies, latency's share, jitter's share)`` of a run's time bound: ``n latency``
    and the extras the jitter drew on top of it (overflow ignored: an infinite share is what is named)."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(lat))
        base = n * latency
        return total, base, total - base


@dataclass(frozen=True, eq=False)
class PipelineRun:
    """One simulated run.  Arrays are indexed by tile."""

    n: int
    stages: int
    issue_ahead: bool
    t_comp: float
    t_x: float
    tile_bytes: float
    latencies: np.ndarray   # drawn latency of each load
    issue: np.ndarray       # load issued
    arrive: np.ndarray      # tile fully in shared memory
    start: np.ndarray       # compute began
    finish: np.ndarray      # compute ended (buffer released)

    @property
    def makespan(self) -> float:
        return float(self.finish[-1])

    @property
    def busy(self) -> float:
        """Fraction of the makespan the tensor core computes."""
        return self.n * self.t_comp / self.makespan

    @property
    def channel_busy(self) -> float:
        """Fraction of the makespan the channel transfers."""
        return self.n * self.t_x / self.makespan

    @cached_property
    def _profile(self) -> tuple[np.ndarray, np.ndarray]:
        times = np.concatenate([self.issue, self.arrive])
        delta = np.concatenate([np.full(self.n, self.tile_bytes), np.full(self.n, -self.tile_bytes)])
        order = np.lexsort((delta, times))            # at equal times, departures before arrivals
        t = times[order]
        level = np.cumsum(delta[order])
        keep = np.append(t[1:] != t[:-1], True)       # the level after the last event at each time
        return t[keep], level[keep]

    def inflight(self) -> tuple[np.ndarray, np.ndarray]:
        """Bytes in flight as a right-continuous step function: ``(times, bytes)``, ``bytes[k]`` on
        ``[times[k], times[k+1])``; zero before ``times[0]`` and after the last arrival."""
        t, level = self._profile
        return t.copy(), level.copy()

    @property
    def mean_inflight_bytes(self) -> float:
        """Time-average of the bytes in flight over ``[0, makespan]`` (by integrating the profile)."""
        t, level = self._profile
        return float(np.sum(level[:-1] * np.diff(t)) / self.makespan)

    @property
    def max_inflight_bytes(self) -> float:
        return float(self._profile[1].max())

    def as_dict(self) -> dict:
        return {"n": self.n, "stages": self.stages, "issue_ahead": self.issue_ahead, "makespan": self.makespan,
                "busy": self.busy, "channel_busy": self.channel_busy,
                "mean_inflight_bytes": self.mean_inflight_bytes, "max_inflight_bytes": self.max_inflight_bytes}


def simulate(n: int, t_comp: float, t_x: float, latency: float, stages: int, *, issue_ahead: bool = True,
             jitter: float = 0.0, seed=0, tile_bytes: float = 1.0, max_tiles: int = MAX_TILES) -> PipelineRun:
    """Run the loop for ``n`` tiles (see the module docstring for the machine).

    :class:`~base.errors.BadInput` (a ``ValueError``) naming the parameter for ``n < 1``, ``stages < 1``,
    a time <= 0, ``jitter < 0``, an ``issue_ahead`` that is not a bool, or more than ``max_tiles`` tiles
    (:data:`MAX_TILES`, refused before anything is allocated).  Buffers beyond the tile count are never
    used (tile ``i`` takes buffer ``i mod stages``), so only ``min(stages, n)`` are kept: ``stages=10**9``
    costs what ``stages=n`` does.  About 0.5 us per tile (a tight loop over Python floats).
    """
    n = validate.integer("n", n)
    stages = validate.integer("stages", stages)
    validate.budget("n", n, max_tiles, "tiles to simulate", "max_tiles")
    t_comp = validate.time("t_comp", t_comp)
    t_x = validate.time("t_x", t_x)
    latency = validate.time("latency", latency)
    jitter = validate.time("jitter", jitter, strict=False)
    tile_bytes = validate.time("tile_bytes", tile_bytes)
    issue_ahead = validate.flag("issue_ahead", issue_ahead)

    lat = draw_latencies(n, latency, jitter, seed)
    total, base, extra = latency_shares(n, latency, lat)
    bound = total + n * (t_x + t_comp)
    finite_span(bound, t_comp=t_comp, t_x=t_x, latency=latency, jitter=jitter,
                shares={"t_comp": n * t_comp, "t_x": n * t_x, "latency": base, "jitter": extra})
    lat_list = lat.tolist()
    issue = [0.0] * n
    arrive = [0.0] * n
    start = [0.0] * n
    finish = [0.0] * n
    buffers = [0.0] * (min(stages, n) if issue_ahead else 1)   # when each buffer is next free
    nbuf = len(buffers)
    channel_free = 0.0                                  # the channel's last transfer ends
    tc_free = 0.0                                       # the tensor core's last tile ends
    b = 0
    for i in range(n):
        a = buffers[b]                                  # issue when the buffer is released
        ready = a + lat_list[i]                         # data starts to come back
        s = ready if ready > channel_free else channel_free
        channel_free = s + t_x
        c = channel_free if channel_free > tc_free else tc_free
        tc_free = c + t_comp
        buffers[b] = tc_free                            # computing the tile releases its buffer
        b += 1
        if b == nbuf:
            b = 0
        issue[i] = a
        arrive[i] = channel_free
        start[i] = c
        finish[i] = tc_free
    return PipelineRun(n=n, stages=stages, issue_ahead=bool(issue_ahead), t_comp=t_comp, t_x=t_x,
                       tile_bytes=tile_bytes, latencies=lat, issue=np.array(issue), arrive=np.array(arrive),
                       start=np.array(start), finish=np.array(finish))
