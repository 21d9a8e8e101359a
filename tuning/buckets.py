"""Tune per bucket of ``M``, and what a bucket's config costs each shape in it.

Inference meets a new ``M`` (batch size, prompt length) all the time; tuning each one is too slow, so
systems tune a few ``M`` per weight shape ``(N, K)`` and look the config up:

* ``pow2``: the nearest power of two in log scale, ``2 ** int(log2(M) + 0.5)`` (GPTQ-triton's
  ``custom_autotune.py``, ``nearest_power_of_two``; ``docs/conventions.md`` §7);
* ``pow2up``: the next power of two, ``2 ** ceil(log2(M))`` (our variant: a bucket is never tuned for a
  smaller ``M`` than the shapes it serves);
* ``vllm``: the nearest ``M`` of the batch sizes vLLM's fused-MoE configs are tuned at
  (:data:`VLLM_BATCH_SIZES`, ``benchmarks/kernels/benchmark_moe.py``), looked up as
  ``configs[min(configs, key=lambda x: abs(x - M))]`` (``fused_moe.py``; a tie goes to the smaller).

A bucket's config is the optimum of the whole space at the bucket's own shape ``(bucket M, N, K)``
(exhaustive over the analytic model, through the cache when one is given).  :func:`bucket_study` applies
it to every shape of a set and reports the slowdown against each shape's own optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

import numpy as np

from base.errors import BadInput
from base.validate import positive_int

from . import schedule
from .cache import TuningCache, bucket_key
from .learned import gpu_constants
from .shapes import Shape, shape as make_shape

__all__ = ["pow2_bucket", "pow2up_bucket", "vllm_bucket", "VLLM_BATCH_SIZES", "SCHEMES", "get_scheme", "BucketRow",
           "bucket_study", "BucketSummary", "summarize_buckets"]

#: vLLM's benchmark_moe.py batch sizes (the M its fused-MoE config tables are tuned at)
VLLM_BATCH_SIZES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


def pow2_bucket(M: int) -> int:
    """The power of two nearest ``M`` in log scale: ``2 ** int(log2(M) + 0.5)`` (GPTQ-triton's autotuner)."""
    M = positive_int("M", M)
    return 2 ** int(math.log2(M) + 0.5)


def pow2up_bucket(M: int) -> int:
    """The least power of two at least ``M``."""
    M = positive_int("M", M)
    return 1 << (M - 1).bit_length()


def vllm_bucket(M: int) -> int:
    """The batch size of :data:`VLLM_BATCH_SIZES` nearest ``M`` (the smaller on a tie), as vLLM looks up a config."""
    M = positive_int("M", M)
    return min(VLLM_BATCH_SIZES, key=lambda x: abs(x - M))


SCHEMES: Mapping[str, Callable] = MappingProxyType({"pow2": pow2_bucket, "pow2up": pow2up_bucket, "vllm": vllm_bucket})


def get_scheme(name: str) -> Callable:
    try:
        return SCHEMES[name]
    except (KeyError, TypeError):
        raise BadInput("scheme", f"unknown bucket scheme {name!r}; known: {', '.join(SCHEMES)}") from None


@dataclass(frozen=True)
class BucketRow:
    """One shape under one scheme: its bucket's M, the bucket's config and the slowdown it costs."""

    shape: Shape
    scheme: str
    bucket_m: int
    config: schedule.GemmConfig
    time_s: float                 # the bucket's config on this shape
    optimum_s: float              # this shape's own optimum

    @property
    def slowdown(self) -> float:
        return self.time_s / self.optimum_s


def bucket_study(shapes: Sequence, scheme: str, gpu="H100", cache: TuningCache | None = None,
                 on_shape=None) -> list[BucketRow]:
    """Tune each bucket that ``shapes`` fall into (exhaustive at ``(bucket M, N, K)``, through ``cache`` if
    given) and apply its config to each shape; ``on_shape()``, when given, is called after each shape (a
    progress display)."""
    rule = get_scheme(scheme)
    k = gpu_constants(gpu)
    if cache is not None and cache.gpu != k.hw.name:
        raise BadInput("cache", f"the cache is for {cache.gpu}, the study for {k.hw.name}")

    def times(M, N, K, key):
        if cache is None:
            return schedule.times_for_shape(M, N, K, hw=k)
        return cache.times((M, N, K), key=key)[0]

    configs = schedule.all_configs()
    best: dict[tuple, int] = {}
    rows = []
    for s in shapes:
        sh = s if isinstance(s, Shape) else make_shape(*s)
        M, N, K = sh.mnk
        bm = rule(M)
        if (bm, N, K) not in best:
            best[(bm, N, K)] = int(np.argmin(times(bm, N, K, bucket_key(scheme, bm, N, K))))
        own = schedule.times_for_shape(M, N, K, hw=k)
        i = best[(bm, N, K)]
        rows.append(BucketRow(sh, scheme, bm, configs[i], float(own[i]), float(own[np.isfinite(own)].min())))
        if on_shape is not None:
            on_shape()
    return rows


@dataclass(frozen=True)
class BucketSummary:
    scheme: str
    phase: str                    # "decode" (M <= 256), "prefill" or "all"
    shapes: int
    tuned: int                    # distinct (bucket M, N, K) tuned
    mean: float
    median: float
    p90: float
    worst: float
    worst_shape: Shape
    within_5pct: float            # share of shapes whose bucket config is within 5 % of their optimum


def summarize_buckets(rows: Sequence[BucketRow]) -> list[BucketSummary]:
    """Per phase (decode: M <= 256; prefill) and overall: slowdown mean, median, 90th percentile and worst."""
    out = []
    for phase, keep in (("decode", lambda r: r.shape.M <= 256), ("prefill", lambda r: r.shape.M > 256),
                        ("all", lambda r: True)):
        sel = [r for r in rows if keep(r)]
        if not sel:
            continue
        sd = np.array([r.slowdown for r in sel])
        w = int(np.argmax(sd))
        out.append(BucketSummary(sel[0].scheme, phase, len(sel),
                                 len({(r.bucket_m, r.shape.N, r.shape.K) for r in sel}),
                                 float(np.mean(sd)), float(np.median(sd)), float(np.percentile(sd, 90)), float(sd[w]), sel[w].shape,
                                 float(np.mean(sd <= 1.05))))
    return out
