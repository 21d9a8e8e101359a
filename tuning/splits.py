"""How real kernels choose the split count ``S`` of split-KV decoding: four rules, as pure functions.

Each rule is transcribed from its source and cites the file and line read (the commits are named in
``docs/decoding.md``; the line numbers below are theirs):

* **FlashAttention-2** ``csrc/flash_attn/flash_api.cpp`` @ ``0251105`` - :func:`fa2_num_splits_heuristic`
  is ``num_splits_heuristic`` (lines 275-315); :func:`fa2_num_splits` is its call site
  ``set_params_splitkv`` (lines 317-347: ``batch * heads * ceil(seqlen_q / 64)`` CTAs, ``num_sm * 2``
  slots "to hard-code the fact that we're using 128 threads per block", at most 128 splits) after the
  GQA swap of ``mha_fwd`` (lines 429-437: one query token and ``H > H_kv`` -> ``H_kv`` heads of ``g``
  rows) and the key block of line 323.
* **FlashAttention-3** ``hopper/heuristics.h`` @ ``0251105`` - :func:`fa3_num_splits_heuristic` is its
  ``num_splits_heuristic`` (lines 19-59, with the L2 clause of lines 26-38); :func:`fa3_num_splits` is
  ``get_num_splits`` of ``hopper/flash_api.cpp`` (lines 442-471: PackGQA always, ``b * h_k * m_blocks``
  CTAs, the SM count itself as slots, tiles from ``hopper/tile_size.h``).
* **FlashInfer** ``include/flashinfer/attention/scheduler.cuh`` @ ``fb28d72`` -
  :func:`flashinfer_min_pages_per_chunk` is ``PartitionPagedKVCacheBinarySearchMinNumPagePerBatch``
  (lines 74-99: the fewest pages per chunk whose chunks x KV heads fit one wave of ``max_grid_size``
  CTAs); :func:`flashinfer_num_splits` is ``BatchDecodeWithPagedKVCacheWorkEstimationDispatched``
  (lines 148-210: no split when the batch already fills the grid or when the search leaves every
  sequence whole; at least ``128 / page_size`` pages a chunk).
* **vLLM** ``vllm/attention/ops/paged_attn.py`` @ ``5da3a32`` - :func:`vllm_num_splits`: fixed partitions
  of ``_PARTITION_SIZE = 512`` tokens (line 10; ``PARTITION_SIZE = 512`` in ``paged_attention_v2_launcher``
  of ``csrc/attention/attention_kernels.cu``), and the choice of the unsplit V1 kernel (lines 111-121:
  ``max_seq_len <= 8192`` and one partition or ``num_seqs * num_heads > 512``).

The C++ rules compute their efficiencies in 32-bit floats; :func:`fa2_num_splits_heuristic` and
:func:`fa3_num_splits_heuristic` do the same (NumPy ``float32``), so a tie breaks as it does on the GPU.
Where the C++ computes in ``int`` (FA3's ``size_one_kv_head``) these use Python ints: no overflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from base import validate
from base.errors import BadInput

__all__ = ["fa2_num_splits_heuristic", "fa2_efficiencies", "fa2_split_eligible", "fa2_block_n", "fa2_num_splits",
           "fa3_num_splits_heuristic", "fa3_tile_size", "fa3_num_splits", "flashinfer_min_pages_per_chunk",
           "flashinfer_num_splits", "flashinfer_num_splits_uniform", "vllm_num_splits", "VLLM_PARTITION_SIZE", "FA3_L2_BYTES", "Rule", "RULES",
           "choose_all"]

_F32 = np.float32
#: the kernels hold these counts in a C++ ``int`` (FA2's ``Flash_fwd_params``: ``int b, h, seqlen_k``;
#: ``num_splits_heuristic(int batch_nheads_mblocks, int num_SMs, int num_n_blocks, int max_splits)``,
#: flash_api.cpp:281): a shape beyond it is not one the kernel can run, so it is refused, not extrapolated
INT32_MAX = 2 ** 31 - 1


def _int32(name: str, value: int, what: str) -> int:
    if value > INT32_MAX:
        raise BadInput(name, f"{what} = {value:,} exceeds the kernel's 32-bit int ({INT32_MAX:,}); "
                             f"the rule has no answer there")
    return value


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


# ------------------------------------------------------------------------------------------ FlashAttention-2
def fa2_split_eligible(num_n_blocks: int, num_splits: int) -> bool:
    """``is_split_eligible`` (flash_api.cpp:293-295): a count is skipped when it gives the same blocks per
    split as the count below it ("64 blocks ... 12 splits ... it's 11 splits anyway", lines 289-292)."""
    return num_splits == 1 or _ceildiv(num_n_blocks, num_splits) != _ceildiv(num_n_blocks, num_splits - 1)


def fa2_efficiencies(batch_nheads_mblocks: int, num_SMs: int, num_n_blocks: int, max_splits: int) -> list:
    """The efficiency of each split count ``1 .. min(max_splits, num_SMs, num_n_blocks)``
    (flash_api.cpp:284-306): ``n_waves / ceil(n_waves)`` with ``n_waves = ctas * S / num_SMs`` in float32,
    ``0`` for an ineligible count."""
    c, sms, nb, mx = (validate.positive_int(n, x) for n, x in (("batch_nheads_mblocks", batch_nheads_mblocks),
                      ("num_SMs", num_SMs), ("num_n_blocks", num_n_blocks), ("max_splits", max_splits)))
    out = []
    for s in range(1, min(mx, sms, nb) + 1):
        if not fa2_split_eligible(nb, s):
            out.append(0.0)
            continue
        n_waves = _F32(c * s) / _F32(sms)                        # float(batch_nheads_mblocks * num_splits) / num_SMs
        out.append(float(_F32(float(n_waves) / math.ceil(float(n_waves)))))
    return out


def fa2_num_splits_heuristic(batch_nheads_mblocks: int, num_SMs: int, num_n_blocks: int, max_splits: int) -> int:
    """FlashAttention-2's ``num_splits_heuristic`` (flash_api.cpp:281-315): 1 when the CTAs almost fill the
    slots (``>= 0.8f * num_SMs``); else the smallest eligible count whose wave efficiency is at least 85 %
    of the best.  The source's example (lines 275-277): 48 CTAs on 108 SMs -> 2 splits (0.89; 3 splits:
    0.67)."""
    c = validate.positive_int("batch_nheads_mblocks", batch_nheads_mblocks)
    sms = validate.positive_int("num_SMs", num_SMs)
    if _F32(c) >= _F32(0.8) * _F32(sms):
        return 1
    eff = fa2_efficiencies(c, sms, num_n_blocks, max_splits)
    best = max(eff, default=0.0)
    for s, e in enumerate(eff, start=1):
        if fa2_split_eligible(num_n_blocks, s) and e >= 0.85 * best:
            return s
    return 1


def fa2_block_n(head_dim: int) -> int:
    """FA2's split-kernel key block (flash_api.cpp:323, "needs to match run_mha_fwd_splitkv_dispatch")."""
    d = validate.positive_int("d", head_dim)
    return 256 if d <= 64 else (128 if d <= 128 else 64)


def fa2_num_splits(B: int, H: int, H_kv: int, L_q: int, N_k: int, d: int, num_sms: int, *,
                    window: bool = False) -> int:
    """The split count ``mha_fwd`` picks (``num_splits = 0``, no dropout, no ALiBi):
    the GQA swap (flash_api.cpp:429-437) makes a single query token of ``g`` heads ``g`` rows of one KV
    head, unless a window is set (``window_size_left < 0 && window_size_right < 0`` is one of the swap's
    conditions, so under a window each query head is its own CTA row: ``window=True``); then ``set_params_splitkv`` (lines 323-335): ``ceil(N_k / block_n)`` key blocks, ``ceil(rows/64)``
    row blocks, ``num_sm * 2`` slots, at most 128 splits."""
    B, H, H_kv, L_q, N_k, num_sms = (validate.positive_int(n, x) for n, x in
                                     (("B", B), ("H", H), ("H_kv", H_kv), ("L_q", L_q), ("N_k", N_k),
                                      ("num_sms", num_sms)))
    if H % H_kv:
        raise BadInput("H_kv", f"must divide H, got H={H}, H_kv={H_kv}")
    window = validate.flag("window", window)
    heads, seqlen_q = (H_kv, H // H_kv) if (L_q == 1 and H > H_kv and not window) else (H, L_q)
    _int32("N_k", N_k, "seqlen_k")
    num_n_blocks = _ceildiv(N_k, fa2_block_n(d))
    num_m_blocks = _ceildiv(seqlen_q, 64)
    ctas = _int32("B", B * heads * num_m_blocks, "batch x heads x row blocks")
    return fa2_num_splits_heuristic(ctas, num_sms * 2, num_n_blocks, 128)


# ------------------------------------------------------------------------------------------ FlashAttention-3
#: "we assume that L2 size is 50MB": const size_l2 = 50 * 1024 * 1024 (hopper/heuristics.h:30)
FA3_L2_BYTES = 50 * 1024 * 1024


def fa3_num_splits_heuristic(total_mblocks: int, num_SMs: int, num_n_blocks: int, num_m_blocks: int,
                             size_one_kv_head: int, is_causal_or_local: bool, max_splits: int) -> int:
    """FlashAttention-3's ``num_splits_heuristic`` (hopper/heuristics.h:25-59).  As FA2's, with three
    changes: the SM count itself is the slot count; no eligibility test; and the L2 clause (lines 26-38):
    when the CTAs almost fill the SMs, a KV head larger than L2 (50 MiB) is still split, into
    ``ceil(size_one_kv_head / 50 MiB)`` parts, if there are at least ``2 x SMs`` row blocks to go over it
    and the mask is neither causal nor local.  Also 1 split when ``num_n_blocks <= 4`` (line 40: "we never
    split for hdim = 128 and seqlen_k = 512")."""
    c = validate.positive_int("total_mblocks", total_mblocks)
    sms = validate.positive_int("num_SMs", num_SMs)
    nb = validate.positive_int("num_n_blocks", num_n_blocks)
    mb = validate.positive_int("num_m_blocks", num_m_blocks)
    size = validate.positive_int("size_one_kv_head", size_one_kv_head)
    mx = validate.positive_int("max_splits", max_splits)
    if _F32(c) >= _F32(0.8) * _F32(sms):
        if size > FA3_L2_BYTES and mb >= sms * 2 and not is_causal_or_local:
            return min(_ceildiv(size, FA3_L2_BYTES), mx)
        return 1
    if nb <= 4:
        return 1
    mx = min(mx, sms, nb)
    eff = []
    for s in range(1, mx + 1):
        n_waves = _F32(c * s) / _F32(sms)
        eff.append(float(_F32(float(n_waves) / math.ceil(float(n_waves)))))
    best = max(eff)
    for s, e in enumerate(eff, start=1):
        if e >= 0.85 * best:
            return s
    return 1


def fa3_tile_size(d: int, d_v: int, arch: int, element_size: int = 2) -> tuple:
    """``(kBlockM, kBlockN)`` of FA3's forward tiles for the non-causal, non-local, contiguous (TMA),
    no-softcap case: ``tile_size_fwd_sm90`` (hopper/tile_size.h:10-54) for ``arch >= 90``, else
    ``tile_size_fwd_sm8x`` (lines 57-79) for an A100 (``sm86_or_89`` false, no varlen split)."""
    d, d_v = validate.positive_int("d", d), validate.positive_int("d_v", d_v)
    if arch >= 90:
        if element_size == 2:
            if d <= 64:
                return (64, 64) if d_v == 512 else (128, 96) if d_v == 256 else (192, 192)
            if d <= 96:
                return (192, 144)
            if d <= 128:
                return (128, 176)
            if d <= 192:
                return (128, 128 if d_v <= 128 else 112)
            return (128, 80)
        if d <= 64:
            return (192, 160)
        if d <= 96:
            return (192, 128)
        if d <= 128:
            return (128, 224)
        return (128, 160) if d <= 192 else (128, 128)
    if element_size != 2:
        return (128, 64)
    if d <= 64:
        return (128, 112)
    if d <= 96:
        return (128, 64)
    if d <= 128:
        return (128, 64)
    return (128, 96) if d <= 192 else (128, 96)


def fa3_num_splits(B: int, H: int, H_kv: int, L_q: int, N_k: int, d: int, d_v: int, num_sms: int,
                   arch: int = 90, element_size: int = 2, causal: bool = False) -> int:
    """``get_num_splits`` (hopper/flash_api.cpp:442-471) for a fixed-length batch: PackGQA rows
    ``L_q g``, ``ceil(rows / kBlockM)`` row blocks, ``ceil(N_k / kBlockN)`` key blocks, ``B H_kv m_blocks``
    CTAs, ``size_one_kv_head = N_k (d + d_v) element_size``, at most 128 splits."""
    B, H, H_kv, L_q, N_k, num_sms = (validate.positive_int(n, x) for n, x in
                                     (("B", B), ("H", H), ("H_kv", H_kv), ("L_q", L_q), ("N_k", N_k),
                                      ("num_sms", num_sms)))
    if H % H_kv:
        raise BadInput("H_kv", f"must divide H, got H={H}, H_kv={H_kv}")
    bm, bn = fa3_tile_size(d, d_v, arch, element_size)
    _int32("N_k", N_k, "seqlen_k")
    num_n_blocks = _ceildiv(N_k, bn)
    num_m_blocks = _ceildiv(L_q * (H // H_kv), bm)
    size_one_kv_head = N_k * (d + d_v) * element_size
    ctas = _int32("B", B * H_kv * num_m_blocks, "batch x KV heads x row blocks")
    return fa3_num_splits_heuristic(ctas, num_sms, num_n_blocks, num_m_blocks, size_one_kv_head, causal, 128)


# ------------------------------------------------------------------------------------------ FlashInfer
def flashinfer_min_pages_per_chunk(max_grid_size: int, gdy: int, num_pages, min_num_pages_per_batch: int = 1) -> tuple:
    """``PartitionPagedKVCacheBinarySearchMinNumPagePerBatch`` (scheduler.cuh:74-99): the fewest pages per
    chunk ``low`` such that ``sum_b ceil(pages_b / low) * gdy <= max_grid_size`` (one wave of CTAs),
    by binary search over ``[min_num_pages_per_batch, max pages]``; returns ``(low, new_batch_size)``.
    ``num_pages`` is one count per sequence, or ``{pages: sequences}`` for a batch of equal lengths
    (``{p: B}``), so that a batch of 10**9 sequences costs what one does."""
    grid, gdy = validate.positive_int("max_grid_size", max_grid_size), validate.positive_int("gdy", gdy)
    if isinstance(num_pages, dict):
        groups = {validate.integer("num_pages", p, least=0): validate.integer("B", b) for p, b in num_pages.items()}
    else:
        groups = {}
        for p in num_pages:
            p = validate.integer("num_pages", p, least=0)
            groups[p] = groups.get(p, 0) + 1
    low, high = validate.positive_int("min_num_pages_per_batch", min_num_pages_per_batch), max(groups, default=0)
    while low < high:
        mid = (low + high) // 2
        if sum(b * _ceildiv(p, mid) for p, b in groups.items()) * gdy > grid:
            low = mid + 1
        else:
            high = mid
    return low, sum(b * _ceildiv(max(p, 1), low) for p, b in groups.items())


def flashinfer_num_splits_uniform(B: int, N_k: int, page_size: int, num_kv_heads: int, num_sms: int,
                                  ctas_per_sm: int, enable_cuda_graph: bool = False) -> int:
    """:func:`flashinfer_num_splits` for ``B`` sequences of ``N_k`` keys each, without listing them: the
    chunks of every sequence (all equal)."""
    B, n = validate.positive_int("B", B), validate.positive_int("N_k", N_k)
    P = validate.positive_int("page_size", page_size)
    gdy = validate.positive_int("num_kv_heads", num_kv_heads)
    grid = validate.positive_int("num_sms", num_sms) * validate.positive_int("ctas_per_sm", ctas_per_sm)
    if B * gdy >= grid:
        return 1
    p = _ceildiv(n, P)
    low, new_batch = flashinfer_min_pages_per_chunk(grid, gdy, {p: B}, max(128 // P, 1))
    if new_batch == B and not enable_cuda_graph:
        return 1
    return _ceildiv(max(p, 1), low)


def flashinfer_num_splits(lengths: Sequence[int], page_size: int, num_kv_heads: int, num_sms: int,
                          ctas_per_sm: int, enable_cuda_graph: bool = False) -> list:
    """The chunks per sequence of FlashInfer's batch decode plan (scheduler.cuh:148-210): one CTA per
    (chunk, KV head) (``gdy = num_kv_heads``, the group packed in the CTA); ``max_grid_size =
    ctas_per_sm x num_sms`` (the kernel's occupancy, which FlashInfer asks CUDA for and we take as an
    input); no split when ``batch x gdy >= max_grid_size``, nor when the search leaves every sequence
    whole (without CUDA graphs); else chunks of ``low`` pages, at least ``max(128 / page_size, 1)``."""
    P = validate.positive_int("page_size", page_size)
    lens = [validate.positive_int("lengths", n) for n in lengths]
    gdy = validate.positive_int("num_kv_heads", num_kv_heads)
    grid = validate.positive_int("num_sms", num_sms) * validate.positive_int("ctas_per_sm", ctas_per_sm)
    if len(lens) * gdy >= grid:
        return [1] * len(lens)
    pages = [_ceildiv(n, P) for n in lens]
    low, new_batch = flashinfer_min_pages_per_chunk(grid, gdy, pages, max(128 // P, 1))
    if new_batch == len(lens) and not enable_cuda_graph:
        return [1] * len(lens)
    return [_ceildiv(max(p, 1), low) for p in pages]


# ------------------------------------------------------------------------------------------ vLLM
#: vllm/attention/ops/paged_attn.py:10, "Should be the same as PARTITION_SIZE in paged_attention_v2_launcher"
VLLM_PARTITION_SIZE = 512


def vllm_num_splits(max_seq_len: int, num_seqs: int, num_heads: int) -> int:
    """vLLM's paged decode (paged_attn.py:111-121): ``max_num_partitions = ceil(max_seq_len / 512)``; the V1
    kernel (no split) when ``max_seq_len <= 8192`` and (one partition or ``num_seqs * num_heads > 512``),
    else the V2 kernel with that many fixed 512-token partitions."""
    n = validate.positive_int("max_seq_len", max_seq_len)
    parts = _ceildiv(n, VLLM_PARTITION_SIZE)
    use_v1 = n <= 8192 and (parts == 1 or validate.positive_int("num_seqs", num_seqs)
                            * validate.positive_int("num_heads", num_heads) > 512)
    return 1 if use_v1 else parts


# ------------------------------------------------------------------------------------------ all rules
@dataclass(frozen=True)
class Rule:
    """A split rule as data: its name, where it comes from, and ``choose(point, gpu) -> S``."""

    name: str
    source: str
    choose: Callable[[Mapping, object], int]


def _arch(gpu) -> int:
    return 90 if gpu.name in ("H100", "H200") else 100 if gpu.name == "B200" else 80


RULES = (
    Rule("FlashAttention-2", "csrc/flash_attn/flash_api.cpp:281-347, 429-437",
         lambda p, gpu: fa2_num_splits(p["B"], p["H"], p["H_kv"], p["L_q"], p["N_k"], p["d"], gpu.sms)),
    Rule("FlashAttention-3", "hopper/heuristics.h:25-59; hopper/flash_api.cpp:442-471",
         lambda p, gpu: fa3_num_splits(p["B"], p["H"], p["H_kv"], p["L_q"], p["N_k"], p["d"], p["d_v"], gpu.sms,
                                       arch=_arch(gpu))),
    Rule("FlashInfer", "include/flashinfer/attention/scheduler.cuh:74-99, 148-210",
         lambda p, gpu: flashinfer_num_splits_uniform(p["B"], p["N_k"], p["P"], p["H_kv"], gpu.sms,
                                                      p["ctas_per_sm"])),
    Rule("vLLM", "vllm/attention/ops/paged_attn.py:10, 111-121",
         lambda p, gpu: vllm_num_splits(p["N_k"], p["B"], p["H"])),
)


def choose_all(point: Mapping, gpu, rules: Sequence[Rule] = RULES) -> list:
    """``[(rule, S)]``: each rule's split count at ``point`` (``B, H, H_kv, L_q, N_k, d, d_v``, the page size
    ``P`` and FlashInfer's occupancy ``ctas_per_sm``) on ``gpu`` (a :class:`symbolic.hardware.GPU`)."""
    if getattr(gpu, "sms", None) is None:
        raise BadInput("gpu", f"{getattr(gpu, 'name', gpu)} has no SM count in the hardware table")
    return [(r, r.choose(point, gpu)) for r in rules]
