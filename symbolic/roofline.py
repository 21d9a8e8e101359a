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

__all__ = ["Roofline", "roofline", "peak_flops"]


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


def roofline(model, point: Mapping[str, int], hw="A100", dtype="fp16", copies: int = 1) -> Roofline:
    """Roofline of ``copies`` independent instances (e.g. batch x heads) of an IO model at a point."""
    gpu = get_hardware(hw)
    copies = positive_int("copies", copies)
    v = model.evaluate(**point)
    if "flops" not in v or "total" not in v:
        raise BadInput("model", f"{model.name} has no flops/total to put on a roofline")
    return Roofline(v["flops"] * copies, v["total"] * element_bytes(dtype) * copies, peak_flops(gpu, dtype),
                    gpu.hbm_bytes_per_s)
