"""Course adapter (lecture 1): GPU specs as the lecture scripts read them (floats in course units).

A thin view of :mod:`symbolic.hardware` (which keeps every figure exact, with its source): clock in
GHz, HBM in TB/s, peaks in FLOP/s.  ``exp_per_s`` is the primary source's figure (for H100 NVIDIA's
Blackwell Ultra table, 4.5 T/s); ``exp_per_s_fa3`` the FlashAttention-3 paper's (3.9 T/s).
No logic of its own beyond unit conversion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from symbolic.hardware import HARDWARE, GPU

__all__ = ["Spec", "spec", "SPECS", "A100", "H100", "H200", "B200"]


def _f(x, scale=1) -> Optional[float]:
    return None if x is None else x / scale


@dataclass(frozen=True)
class Spec:
    name: str
    sms: Optional[int]
    clock_ghz: Optional[float]
    hbm_tbs: float
    bf16_tflops: float
    fp8_tflops: Optional[float]
    smem_per_sm_bytes: Optional[int]
    l2_bytes: Optional[int]
    max_warps_per_sm: Optional[int]
    exp_per_s: Optional[float]
    exp_per_s_fa3: Optional[float]
    gpu: GPU

    def tc_flops_per_sm_clk(self) -> Optional[int]:
        """Dense BF16 tensor FLOP per SM per clock (H100: 4096)."""
        return self.gpu.tc_flops_per_sm_clk

    def tc_peak(self) -> Optional[float]:
        """SMs x clock x FLOP/SM/clk in FLOP/s (H100: 989.4 T)."""
        p = self.gpu.tc_peak_flops
        return None if p is None else float(p)

    def source(self, field_name: str) -> str:
        return self.gpu.source(field_name)


def spec(gpu: GPU) -> Spec:
    return Spec(name=gpu.name, sms=gpu.sms, clock_ghz=_f(gpu.clock_hz, 10**9), hbm_tbs=gpu.hbm_bytes_per_s / 10**12,
                bf16_tflops=gpu.bf16_flops / 10**12, fp8_tflops=_f(gpu.fp8_flops, 10**12),
                smem_per_sm_bytes=gpu.smem_per_sm, l2_bytes=gpu.l2_bytes, max_warps_per_sm=gpu.max_warps_per_sm,
                exp_per_s=_f(gpu.exp_per_s), exp_per_s_fa3=_f(gpu.exp_per_s_alt), gpu=gpu)


SPECS = {name: spec(g) for name, g in HARDWARE.items()}
A100, H100, H200, B200 = (SPECS[k] for k in ("A100", "H100", "H200", "B200"))
