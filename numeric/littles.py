"""Memory-request simulator for Little's law: how many bytes are in flight when requests stream at a
bandwidth-limited rate and each one takes a latency to complete.

The machine: ``n`` requests of ``request_bytes`` each; request ``k`` is issued at
``k * request_bytes / bandwidth`` (the issue rate keeps the bandwidth exactly busy) and completes
``latency_k`` later, where ``latency_k = latency`` plus, with ``jitter > 0``, an exponential extra of
mean ``jitter x latency`` (:func:`numeric.pipeline.draw_latencies`, seeded).  A request's bytes are in flight from
its issue to its completion.

The run measures the time-average of the bytes in flight over ``[0, end]`` (``end`` = the last
completion, so the window starts and ends empty) by sorting the issue and completion events and
integrating the step function - not from any formula.  Little's law (Little 1961, "A proof for the
queuing formula L = lambda W", Operations Research 9(3); ``docs/conventions.md`` §5) predicts bandwidth x
mean latency; :mod:`verify.checks.latency` states how close a run of ``n`` must come.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from base import validate

from .pipeline import draw_latencies, finite_span, latency_shares

__all__ = ["LittleRun", "simulate_requests", "MAX_REQUESTS"]

#: at most this many requests per run (about 100 bytes of arrays each: 400 MB); ``max_requests=``
MAX_REQUESTS = 1 << 22


@dataclass(frozen=True, eq=False)
class LittleRun:
    n: int
    request_bytes: float
    issue: np.ndarray
    complete: np.ndarray
    mean_inflight_bytes: float   # time-average over [0, end]
    max_inflight_bytes: float
    end: float

    @property
    def mean_latency(self) -> float:
        return float(np.mean(self.complete - self.issue))

    @property
    def mean_inflight_requests(self) -> float:
        return self.mean_inflight_bytes / self.request_bytes

    @property
    def throughput(self) -> float:
        """Bytes delivered per second over the window."""
        return self.n * self.request_bytes / self.end


def simulate_requests(n: int, request_bytes: float, bandwidth: float, latency: float, *, jitter: float = 0.0,
                      seed=0, max_requests: int = MAX_REQUESTS) -> LittleRun:
    """Issue ``n`` requests at the bandwidth-limited rate and measure the bytes in flight.

    :class:`~base.errors.BadInput` (a ``ValueError``) naming the parameter for ``n < 1``, a size,
    bandwidth or latency <= 0, ``jitter < 0``, or more than ``max_requests`` requests
    (:data:`MAX_REQUESTS`, refused before anything is allocated); a run whose times overflow float64 names
    the parameter with the largest share of them (``jitter`` when its drawn extras overflow).
    """
    n = validate.integer("n", n)
    validate.budget("n", n, max_requests, "requests to simulate", "max_requests")
    request_bytes = validate.time("request_bytes", request_bytes)
    bandwidth = validate.time("bandwidth", bandwidth)
    latency = validate.time("latency", latency)
    jitter = validate.time("jitter", jitter, strict=False)

    lat = draw_latencies(n, latency, jitter, seed)
    # the issue times' share is named request_bytes, or bandwidth when it is the small divisor that overflows it
    rate = {"request_bytes": request_bytes} if request_bytes >= 1 else {"bandwidth": bandwidth}
    if not np.isfinite(n * request_bytes / bandwidth):       # issue times (and bytes in flight) overflow
        finite_span(float("inf"), **rate)
    issued = n * (request_bytes / bandwidth)
    total, base, extra = latency_shares(n, latency, lat)     # the latencies' sum: latency's and jitter's shares
    finite_span(issued + total, **rate, latency=latency, jitter=jitter,
                shares={**{k: issued for k in rate}, "latency": base, "jitter": extra})
    issue = np.arange(n, dtype=float) * (request_bytes / bandwidth)
    complete = issue + lat

    times = np.concatenate([issue, complete])
    delta = np.concatenate([np.full(n, request_bytes), np.full(n, -request_bytes)])
    order = np.lexsort((delta, times))          # completions before issues at equal times
    t = times[order]
    level = np.cumsum(delta[order])
    end = float(t[-1])
    area = float(np.sum(level[:-1] * np.diff(t)))
    return LittleRun(n=n, request_bytes=request_bytes, issue=issue, complete=complete,
                     mean_inflight_bytes=area / end, max_inflight_bytes=float(level.max()), end=end)
