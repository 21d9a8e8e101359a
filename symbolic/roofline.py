"""Roofline time: ``max(flops / peak, bytes / bandwidth)``, exact.

A lower bound on run time for a kernel whose FLOPs run at no more than the tensor peak and whose
HBM traffic moves at no more than the memory bandwidth (Williams, Waterman, Patterson 2009).  Times
are :class:`fractions.Fraction` seconds; peaks and bandwidths come from :mod:`symbolic.hardware`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

import sympy as sp

from .hardware import GPU, get_hardware

__all__ = ["DTYPE_BYTES", "Roofline", "roofline", "roofline_expr", "dtype_bytes", "peak_flops"]

#: element sizes in bytes
DTYPE_BYTES: Mapping[str, int] = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


def dtype_bytes(dtype: str) -> int:
    try:
        return DTYPE_BYTES[str(dtype).lower()]
    except KeyError:
        raise ValueError(f"dtype: unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}") from None


def peak_flops(hw: GPU, dtype: str) -> int:
    """Dense tensor-core peak for the dtype: fp16/bf16 -> the BF16 figure, fp8 -> the FP8 figure."""
    dt = str(dtype).lower()
    dtype_bytes(dt)
    if dt in ("fp16", "bf16"):
        return hw.bf16_flops
    if dt == "fp8":
        if hw.fp8_flops is None:
            raise ValueError(f"dtype: {hw.name} has no FP8 tensor peak in the hardware table")
        return hw.fp8_flops
    raise ValueError(f"dtype: no {dt} tensor-core peak in the hardware table (use fp16, bf16 or fp8)")


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
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ValueError(f"copies: must be a positive integer, got {copies!r}")
    v = model.evaluate(**point)
    if "flops" not in v or "total" not in v:
        raise ValueError(f"model: {model.name} has no flops/total to put on a roofline")
    return Roofline(v["flops"] * copies, v["total"] * dtype_bytes(dtype) * copies, peak_flops(gpu, dtype),
                    gpu.hbm_bytes_per_s)


def roofline_expr(model, hw="A100", dtype="fp16") -> sp.Expr:
    """``Max(flops/peak, bytes/bandwidth)`` as a SymPy expression in the model's parameters (seconds)."""
    gpu = get_hardware(hw)
    return sp.Max(model["flops"] / sp.Integer(peak_flops(gpu, dtype)),
                  model["total"] * dtype_bytes(dtype) / sp.Integer(gpu.hbm_bytes_per_s))
