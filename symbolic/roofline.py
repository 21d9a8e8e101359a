"""Roofline time: ``max(flops / peak, bytes / bandwidth)``, exact.

A lower bound on run time for a kernel whose FLOPs run at no more than the tensor peak and whose
HBM traffic moves at no more than the memory bandwidth (Williams, Waterman, Patterson 2009).  Times
are :class:`fractions.Fraction` seconds; peaks and bandwidths come from :mod:`symbolic.hardware`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from base.dtypes import element_bytes
from base.errors import BadInput
from base.validate import positive_int

from .hardware import GPU, get_hardware

__all__ = ["Roofline", "roofline", "peak_flops", "own_bytes"]


def peak_flops(hw: GPU, dtype: str) -> int:
    """Dense tensor-core peak for the dtype: fp16/bf16 -> the BF16 figure, fp8 -> the FP8 figure."""
    dt = str(dtype).lower()
    element_bytes(dt)                 # an unknown type is refused by the one element-size table
    if dt in ("fp16", "bf16"):
        return hw.bf16_flops
    if dt == "fp8":
        if hw.fp8_flops is None:
            raise BadInput("dtype", f"{hw.name} has no FP8 tensor peak in the hardware table")
        return hw.fp8_flops
    raise BadInput("dtype", f"no {dt} tensor-core peak in the hardware table (use fp16, bf16 or fp8)")


@dataclass(frozen=True)
class Roofline:
    flops: int
    bytes: int
    peak: int
    bandwidth: int
    #: where ``bytes`` came from: ``"the model's bytes"`` (each tensor at its own type), or
    #: ``"total x 2 B (fp16)"`` for a model that counts elements only
    bytes_from: str = ""

    @property
    def t_compute(self) -> Fraction:
        return Fraction(self.flops, self.peak)

    @property
    def t_memory(self) -> Fraction:
        return Fraction(self.bytes, self.bandwidth)

    @property
    def time(self) -> Fraction:
        return max(self.t_compute, self.t_memory)

    @property
    def bound(self) -> str:
        """Which side bounds the time: ``"memory"`` or ``"compute"``."""
        return "memory" if self.t_memory >= self.t_compute else "compute"

    @property
    def intensity(self) -> Fraction:
        """FLOP per byte moved."""
        return Fraction(self.flops, self.bytes) if self.bytes else Fraction(0)


def own_bytes(model) -> bool:
    """Does ``model`` state its own HBM bytes (a ``bytes`` quantity in bytes: partials in FP32, page tables
    in int32, scales beside payloads)?  Then that is its traffic, not its elements times one type's size."""
    return "bytes" in model.all_quantities and model.unit("bytes") in ("bytes", "B")


def roofline(model, point: Mapping[str, int], hw="A100", dtype="fp16", copies: int = 1) -> Roofline:
    """Roofline of ``copies`` independent instances (e.g. batch x heads) of an IO model at a point.

    The bytes are the model's own ``bytes`` where it states them (:func:`own_bytes`: split-KV decode's FP32
    partials and int32 tables, a block-scaled GEMM's scales); otherwise its ``total`` elements times the
    size of ``dtype``.  ``dtype`` always picks the tensor peak."""
    gpu = get_hardware(hw)
    copies = positive_int("copies", copies)
    v = model.evaluate(**point)
    if "flops" not in v or ("total" not in v and "bytes" not in v):
        raise BadInput("model", f"{model.name} has no flops and bytes to put on a roofline")
    if own_bytes(model):
        moved, source = v["bytes"], "the model's bytes"
    else:
        size = element_bytes(dtype)
        moved, source = v["total"] * size, f"total x {size} B ({dtype})"
    return Roofline(v["flops"] * copies, moved * copies, peak_flops(gpu, dtype), gpu.hbm_bytes_per_s, source)
