"""An LRU model of the L2 cache fed by the tiled GEMM's requests, counting HBM traffic.

:func:`simulate_l2` runs :func:`numeric.gemm.run_gemm` in shape-only mode with programs launched in
waves of ``wave`` consecutive pids (row-major, or grouped by ``GROUP_M`` tile rows) that advance
through K together, and passes every tile request, in that order, through :class:`LRUCache`.  A cache
line is one tile chunk - ``("A", tile row, k-step)`` or ``("B", tile column, k-step)`` - of the size
the request moved (edge chunks are smaller).  A miss fetches the chunk from HBM; room is made by
evicting least-recently-used chunks.  Capacity and counts are in elements.

This module does not import :mod:`symbolic`: it is the independent side of :mod:`verify.checks.gemm`,
which compares it with the exact counts of :mod:`symbolic.models.gemm_l2` - the bounds, and the LRU count
of model ``gemm.l2.lru`` (:mod:`symbolic.gemm_lru`), which must equal :func:`simulate_l2` wherever the
cache holds one K-step of a wave - and with the time model's figures (:mod:`tuning.l2_estimate`).  Bad
input is :class:`~base.errors.BadInput` naming the parameter.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from base.validate import positive_int

from .gemm import run_gemm

__all__ = ["LRUCache", "L2Result", "simulate_l2"]


class LRUCache:
    """Least-recently-used cache of variable-size lines (sizes in elements)."""

    def __init__(self, capacity: int):
        self.capacity = positive_int("capacity", capacity)
        self.lines: OrderedDict = OrderedDict()
        self.used = 0
        self.hits = 0
        self.misses = 0
        self.miss_elements = 0
        self.hit_elements = 0

    def access(self, key, size: int) -> bool:
        """Touch ``key`` (``size`` elements); True on a hit.  A line larger than the cache is fetched
        and not kept."""
        if key in self.lines:
            self.lines.move_to_end(key)
            self.hits += 1
            self.hit_elements += size
            return True
        self.misses += 1
        self.miss_elements += size
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            _, old = self.lines.popitem(last=False)
            self.used -= old
        self.lines[key] = size
        self.used += size
        return False


@dataclass(frozen=True)
class L2Result:
    hbm_reads: int          # elements of A and B fetched from HBM (misses)
    l2_reads: int           # elements served by the L2 (hits)
    requests: int           # tile requests
    misses: int             # requests that missed


def simulate_l2(M: int, N: int, K: int, BM: int, BN: int, BK: int, group: int, wave: int, capacity: int) -> L2Result:
    """HBM reads of A and B for the tiled GEMM under the given launch order, waves and LRU capacity."""
    cache = LRUCache(capacity)

    def request(kind, index, k, elements):
        cache.access((kind, index, k), elements)

    run = run_gemm(M, N, K, BM, BN, BK, group=group, wave=wave, real=False, on_request=request)
    return L2Result(cache.miss_elements, cache.hit_elements, run.requests, cache.misses)
