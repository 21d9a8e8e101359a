"""Hardware table: the GPUs the models price, as data.

Every figure is an exact integer in SI base units (Hz, FLOP/s, bytes, bytes/s) so that roofline
times stay exact rationals.  Each record keeps a ``sources`` mapping from field name to where the
number comes from: NVIDIA's datasheets, architecture whitepapers and Ampere/Hopper tuning guides,
the CUDA C++ Programming Guide, the FlashAttention-3 paper, NVIDIA's Blackwell Ultra blog
(``docs/conventions.md`` §3 lists each figure with its source).  Where two sources disagree (H100
``exp`` throughput) both values are kept and named; a figure says which one it uses.

``None`` marks a figure no source we cite gives (e.g. the B200 clock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction as _Fraction
from types import MappingProxyType
from typing import Mapping, Optional

from base.errors import BadInput

__all__ = ["GPU", "HARDWARE", "A100", "A100_80GB", "H100", "H200", "B200", "get_hardware", "KB", "KiB", "MB", "GB", "TB",
           "Assumption", "ASSUMPTIONS", "LOADED_HBM_LATENCY", "L2_BYTES_PER_CLK_PER_SM",
           "UNLOADED_GLOBAL_LATENCY_CLK", "UNLOADED_L2_LATENCY_CLK"]

KB, MB, GB, TB = 10**3, 10**6, 10**9, 10**12
KiB = 1024

_AMPERE = ("NVIDIA A100 datasheet (throughput, HBM); A100 architecture whitepaper (SMs, clock, L2); "
           "NVIDIA Ampere Tuning Guide (shared memory, L1); CUDA C++ Programming Guide, compute capability 8.0 "
           "(registers, warps, blocks); docs/conventions.md §3")
_HOPPER = ("NVIDIA H100 datasheet, SXM (throughput, HBM); H100 architecture whitepaper (SMs, L2); "
           "NVIDIA Hopper Tuning Guide (shared memory, L1); CUDA C++ Programming Guide, compute capability 9.0 "
           "(registers, warps, blocks); docs/conventions.md §3")
_H200 = ("NVIDIA H200 datasheet, SXM (throughput, HBM); SMs, clock, shared memory and L2 taken as H100 SXM's "
         "(same GH100 chip, an assumption); docs/conventions.md §3")
_B200 = ("NVIDIA HGX/DGX B200 datasheets, eight-GPU sparse totals per GPU and dense (approximate); "
         "SM count from third-party device queries; docs/conventions.md §3")
_FA3 = "FlashAttention-3, Shah et al. 2024, arXiv 2407.08608, §1 (16 ops/SM/clk x 132 SMs x 1.83 GHz)"
_BWU = ("NVIDIA Technical Blog, 'Inside NVIDIA Blackwell Ultra: The Chip Powering the AI Factory Era' (2025), "
        "exponentials per second")

# NVLink: the datasheets give each GPU's total over both directions (an all-reduce prices one direction: half)
_NVLINK_A100 = "NVIDIA A100 datasheet, SXM: NVLink 600 GB/s (third-generation NVLink, both directions)"
_NVLINK_H100 = "NVIDIA H100 datasheet, SXM: NVLink 900 GB/s (fourth-generation NVLink, both directions)"
_NVLINK_H200 = "NVIDIA H200 datasheet, SXM: NVLink 900 GB/s (both directions)"
_NVLINK_B200 = "NVIDIA DGX/HGX B200 datasheets: fifth-generation NVLink, 1.8 TB/s per GPU (both directions)"


@dataclass(frozen=True)
class GPU:
    """One accelerator.  Throughputs are dense (no sparsity); memory sizes in bytes."""

    name: str
    sms: Optional[int]
    clock_hz: Optional[int]
    bf16_flops: int                      # dense BF16/FP16 tensor-core FLOP/s
    fp8_flops: Optional[int]
    hbm_bytes_per_s: int
    smem_per_sm: Optional[int]           # shared memory configurable per SM
    smem_per_block: Optional[int]        # largest opt-in shared memory per thread block
    l1_smem_per_sm: Optional[int]
    l2_bytes: Optional[int]
    regs_per_sm: Optional[int] = 65536   # 32-bit registers
    max_regs_per_thread: Optional[int] = 255
    max_warps_per_sm: Optional[int] = 64
    max_blocks_per_sm: Optional[int] = 32
    tensor_subpartitions: Optional[int] = 4
    exp_per_s: Optional[int] = None      # special-function exp throughput, the primary source
    exp_per_s_alt: Optional[int] = None  # a second source's figure, where one disagrees
    hbm_bytes: Optional[int] = None
    tc_flops_per_sm_clk: Optional[int] = None  # dense BF16 tensor FLOP per SM per clock
    #: NVLink bandwidth per GPU, both directions together, as the datasheets state it (one direction: half)
    nvlink_bytes_per_s: Optional[int] = None
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def tc_peak_flops(self) -> Optional[int]:
        """sms x clock x tensor FLOP/SM/clk (H100: 132 x 1.83 GHz x 4096 = 989.4 TFLOPS)."""
        if None in (self.sms, self.clock_hz, self.tc_flops_per_sm_clk):
            return None
        return self.sms * self.clock_hz * self.tc_flops_per_sm_clk

    def source(self, field_name: str) -> str:
        return self.sources.get(field_name, self.sources.get("*", "unsourced"))


def _src(**kw: str) -> Mapping[str, str]:
    return MappingProxyType(dict(kw))


A100 = GPU(
    name="A100", sms=108, clock_hz=1_410_000_000, bf16_flops=312 * TB, fp8_flops=None,
    hbm_bytes_per_s=1_555 * 10**9,               # 40 GB part; the 80 GB part is 2.039 TB/s
    smem_per_sm=164 * KiB, smem_per_block=163 * KiB, l1_smem_per_sm=192 * KiB, l2_bytes=40 * MB,
    hbm_bytes=40 * GB, tc_flops_per_sm_clk=2048, nvlink_bytes_per_s=600 * GB,
    sources=_src(**{"*": _AMPERE, "nvlink_bytes_per_s": _NVLINK_A100,
                    "hbm_bytes_per_s": "NVIDIA A100 datasheet: 1.555 TB/s for 40 GB (80 GB SXM: 2.039 TB/s); "
                                       "FlashAttention Fig. 2 uses the 40 GB part"}),
)
A100_80GB = GPU(
    name="A100-80GB", sms=108, clock_hz=1_410_000_000, bf16_flops=312 * TB, fp8_flops=None,
    hbm_bytes_per_s=2_039 * 10**9, smem_per_sm=164 * KiB, smem_per_block=163 * KiB,
    l1_smem_per_sm=192 * KiB, l2_bytes=40 * MB, hbm_bytes=80 * GB, tc_flops_per_sm_clk=2048,
    nvlink_bytes_per_s=600 * GB, sources=_src(**{"*": _AMPERE, "nvlink_bytes_per_s": _NVLINK_A100}),
)
H100 = GPU(
    name="H100", sms=132, clock_hz=1_830_000_000, bf16_flops=989 * TB, fp8_flops=1979 * TB,
    hbm_bytes_per_s=3_350 * 10**9, smem_per_sm=228 * KiB, smem_per_block=227 * KiB,
    l1_smem_per_sm=256 * KiB, l2_bytes=50 * MB, hbm_bytes=80 * GB,
    exp_per_s=4_500 * 10**9, exp_per_s_alt=3_900 * 10**9, tc_flops_per_sm_clk=4096, nvlink_bytes_per_s=900 * GB,
    sources=_src(**{"*": _HOPPER, "exp_per_s": _BWU, "exp_per_s_alt": _FA3, "nvlink_bytes_per_s": _NVLINK_H100,
                    "clock_hz": "derived: the clock at which 132 SMs x 4096 FLOP/clk give the H100 datasheet's "
                                "989 TFLOPS (as FlashAttention-3 §1 uses); docs/conventions.md §3"}),
)
H200 = GPU(
    name="H200", sms=132, clock_hz=1_830_000_000, bf16_flops=989 * TB, fp8_flops=1979 * TB,
    hbm_bytes_per_s=4_800 * 10**9, smem_per_sm=228 * KiB, smem_per_block=227 * KiB,
    l1_smem_per_sm=256 * KiB, l2_bytes=50 * MB, hbm_bytes=141 * GB, tc_flops_per_sm_clk=4096,
    nvlink_bytes_per_s=900 * GB, sources=_src(**{"*": _H200, "nvlink_bytes_per_s": _NVLINK_H200}),
)
B200 = GPU(
    name="B200", sms=148, clock_hz=None, bf16_flops=2_250 * TB, fp8_flops=4_500 * TB,
    hbm_bytes_per_s=8 * TB, smem_per_sm=None, smem_per_block=None, l1_smem_per_sm=None,
    l2_bytes=None, exp_per_s=5 * TB, nvlink_bytes_per_s=1_800 * GB,
    sources=_src(**{"*": _B200, "exp_per_s": _BWU + " (B300: 10.7 T/s)", "nvlink_bytes_per_s": _NVLINK_B200}),
)

HARDWARE: Mapping[str, GPU] = MappingProxyType(
    {g.name: g for g in (A100, A100_80GB, H100, H200, B200)})


def get_hardware(name: str) -> GPU:
    """Look up a GPU by name (case-insensitive).  An unknown name raises :class:`BadInput` naming ``hw``."""
    if isinstance(name, GPU):
        return name
    for key, gpu in HARDWARE.items():
        if key.lower() == str(name).lower():
            return gpu
    raise BadInput("hw", f"unknown hardware {name!r}; known: {', '.join(HARDWARE)}")


# --------------------------------------------------------------------------------------- assumptions
@dataclass(frozen=True)
class Assumption:
    """A modelling figure that is an order of magnitude, not a datasheet value: its value (exact, SI
    base unit), the unit, and where it comes from.  Latency models print which ones they use."""

    name: str
    value: object            # int or fractions.Fraction
    unit: str
    source: str


#: Loaded HBM latency (an assumption; unloaded pointer-chase latency is ~466-479 cycles, below)
LOADED_HBM_LATENCY = Assumption(
    "loaded HBM latency", _Fraction(700, 10**9), "s",
    "assumption of the course's lecture-8 model (2.35 MB in flight at 3.35 TB/s, Little 1961); "
    "docs/conventions.md §5")
#: Bytes per clock one SM reads from L2 (an assumption; H100 L2 is ~12 TB/s for 132 SMs at 1.83 GHz ~ 50 B/clk)
L2_BYTES_PER_CLK_PER_SM = Assumption(
    "L2 bytes per clock per SM", 64, "bytes/clk",
    "assumption of the course's lecture-8 model; cf. H100 L2 ~12 TB/s (FlashAttention-3, arXiv 2407.08608, "
    "Table 1); docs/conventions.md §5")
#: Unloaded latencies measured by pointer chasing (Luo et al., arXiv 2402.13499; docs/conventions.md §5)
UNLOADED_GLOBAL_LATENCY_CLK = Assumption(
    "unloaded global-memory latency", 479, "clk", "Luo et al., arXiv 2402.13499: ~466-479 cycles (A100/H800)")
UNLOADED_L2_LATENCY_CLK = Assumption(
    "unloaded L2 latency", 262, "clk", "Luo et al., arXiv 2402.13499: ~262 cycles (A100/H800)")

ASSUMPTIONS: Mapping[str, Assumption] = MappingProxyType({a.name: a for a in (
    LOADED_HBM_LATENCY, L2_BYTES_PER_CLK_PER_SM, UNLOADED_GLOBAL_LATENCY_CLK, UNLOADED_L2_LATENCY_CLK)})
