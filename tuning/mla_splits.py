"""FlashMLA's split of each sequence's KV blocks (its tile scheduler, ``get_mla_metadata``), as pure functions.

Transcribed from FlashMLA (``deepseek-ai/FlashMLA`` @ ``9241ae3ef9bac614dd25e45e507e089f888280e0``; the line
numbers are that commit's):

* :func:`flashmla_num_sm_parts` is ``num_sm_parts`` of ``csrc/api/dense_decode.h:78``:
  ``max(num_sms / num_heads_k / ceil_div(seqlen_q * num_heads_q / num_heads_k, 64), 1)`` in C++ ``int``
  division - the partitions of the SMs that the ``ceil(H L_q / 64)`` row groups share, so that the grid
  ``(row groups, h_k, num_sm_parts)`` (``splitkv_mla.cuh:1344``) fills the GPU once.
* :func:`flashmla_schedule` is ``get_mla_metadata_kernel`` (``csrc/smxx/decode/get_decoding_sched_meta/
  get_decoding_sched_meta.cu:11-107``) for dense attention (``topk == -1``), called with ``block_size_n =
  64`` and ``fixed_overhead_num_blocks = 5`` (``dense_decode.h:101-113``).  Each sequence costs its key
  blocks plus 5 (lines 28-55); each partition gets ``payload = ceil(total / num_sm_parts) + 5`` (line 62)
  and takes, in order, whole sequences while they fit (with their overhead) and then a piece of the next of
  ``remain - 5`` blocks, if that is positive (lines 66-91).  A sequence cut across partitions has one split
  per piece (``num_splits``, lines 77-78); every split holds at least one block.
* :func:`flashmla_splits` is the two together: the splits of each sequence, from the SM count and the
  sequence lengths.  :func:`flashmla_splits_uniform` is the same for ``B`` sequences of one length without
  listing them: how many sequences the scheduler cuts into each split count, walked one partition at a time
  (whole sequences taken in one step), so its cost is the partitions', not the batch's.  (In this FlashMLA
  version the Python ``get_mla_metadata`` returns an empty ``FlashMLASchedMeta`` -
  ``flash_mla/flash_mla_interface.py:37-50`` - and the first decode call runs this kernel,
  ``dense_decode.h:95-113``.)

The counts of ``decode.mla`` depend on a sequence's splits only through their number (the model's ``S``,
:mod:`symbolic.models.mla`), so :func:`counts_at_schedule` prices FlashMLA's own schedule as the sum of the
model at ``B = 1`` over the sequences, each at its own split count.

The C++ holds lengths, block counts and their total in ``int``: a batch beyond ``INT32_MAX`` is refused, as
is one whose scheduler state (``sizeof(int) * (5 b + 1)`` bytes of shared memory, lines 110-111) exceeds the
227 KiB a Hopper block may opt into (``docs/conventions.md`` §3.1), where ``cudaFuncSetAttribute`` fails:
more than :data:`MAX_BATCH` = 11,622 sequences.  That count is checked first, before a length is read, so a
batch of 10**9 is refused at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from base import validate
from base.errors import BadInput

from .splits import INT32_MAX

__all__ = ["SchedMeta", "MLASchedule", "flashmla_num_sm_parts", "flashmla_schedule", "flashmla_splits",
           "flashmla_splits_uniform", "counts_at_schedule", "BLOCK_SIZE_N", "FIXED_OVERHEAD_NUM_BLOCKS",
           "BLOCK_SIZE_M", "MAX_SPLITS", "SMEM_PER_BLOCK", "MAX_BATCH"]

#: dense_decode.h:103: the scheduler's block size (= the page size, dense_decode.h:67)
BLOCK_SIZE_N = 64
#: dense_decode.h:104: the cost of a split, in blocks
FIXED_OVERHEAD_NUM_BLOCKS = 5
#: dense_decode.h:78 (the 64) and sm90/decode/dense/config.h:5: query rows per CTA
BLOCK_SIZE_M = 64
#: combine.cu:165-185: the combine kernel takes at most 160 partitions (FLASH_ASSERT beyond)
MAX_SPLITS = 160
#: the largest shared memory a Hopper thread block may opt into, 227 KiB (docs/conventions.md §3.1 [k])
SMEM_PER_BLOCK = 227 * 1024
#: the most sequences the scheduler can hold: ``sizeof(int) * (5 b + 1)`` bytes of shared memory
#: (get_decoding_sched_meta.cu:110-111) within :data:`SMEM_PER_BLOCK`
MAX_BATCH = (SMEM_PER_BLOCK // 4 - 1) // 5


@dataclass(frozen=True)
class SchedMeta:
    """One partition's work, as ``DecodingSchedMeta`` holds it (``csrc/params.h:10-16``): sequences
    ``begin_req_idx .. end_req_idx`` (both inclusive), blocks from ``begin_block_idx`` of the first to
    ``end_block_idx`` (exclusive) of the last; ``begin_split_idx`` the first piece's split number."""

    begin_req_idx: int
    end_req_idx: int
    begin_block_idx: int
    end_block_idx: int
    begin_split_idx: int
    is_first_req_splitted: bool
    is_last_req_splitted: bool


@dataclass(frozen=True)
class MLASchedule:
    """The scheduler's output: the partitions, ``num_splits`` (cumulative, ``batch + 1`` entries, as the
    kernel writes it, line 105) and, derived from the partitions as the kernel walks them
    (``splitkv_mla.cuh:1027-1033``), each sequence's splits as ``(j0, j1)`` block ranges."""

    num_sm_parts: int
    partitions: tuple
    num_splits: tuple
    splits: tuple

    def splits_per_sequence(self) -> list:
        """``num_splits[b + 1] - num_splits[b]``: the splits of each sequence (what the combine reads,
        ``combine.cu:36-38``)."""
        return [b - a for a, b in zip(self.num_splits, self.num_splits[1:])]


def _int32(name: str, value: int, what: str) -> int:
    if value > INT32_MAX:
        raise BadInput(name, f"{what} = {value:,} exceeds FlashMLA's 32-bit int ({INT32_MAX:,})")
    return value


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


def _batch(name: str, b: int) -> int:
    """``b`` sequences when the scheduler can hold them: at least one (dense_decode.h:68) and at most
    :data:`MAX_BATCH` (its ``5 b + 1`` ints of shared memory), else :class:`~base.errors.BadInput` naming
    ``name``."""
    if b == 0:
        raise BadInput(name, "batch size must be positive (dense_decode.h:68)")
    if b > MAX_BATCH:
        count, smem = (f"{b:,}", f"{4 * (5 * b + 1):,}") if b < 10 ** 30 else ("more than 10**30", "more than 10**30")
        raise BadInput(name, f"{count} sequences: the scheduler's {smem} bytes of shared memory "
                             f"(get_decoding_sched_meta.cu:110) exceed the {SMEM_PER_BLOCK:,} a block may use "
                             f"(at most {MAX_BATCH:,} sequences)")
    return b


def flashmla_num_sm_parts(num_sms: int, H: int, L_q: int, H_kv: int = 1) -> int:
    """``dense_decode.h:78``: ``max(num_sms / H_kv / ceil_div(L_q * H / H_kv, 64), 1)`` (C++ ``int``
    division, left to right).  DeepSeek-V3 on 132 SMs: 128 heads, one token -> 2 row groups -> 66 parts."""
    num_sms, H, L_q, H_kv = (validate.positive_int(n, x) for n, x in
                             (("num_sms", num_sms), ("H", H), ("L_q", L_q), ("H_kv", H_kv)))
    if H % H_kv:
        raise BadInput("H_kv", f"must divide H (dense_decode.h:69), got H={H}, H_kv={H_kv}")
    rows = _int32("L_q", L_q * H, "seqlen_q x num_heads_q") // H_kv
    return max(num_sms // H_kv // _ceildiv(rows, BLOCK_SIZE_M), 1)


def flashmla_schedule(lengths: Sequence[int], num_sm_parts: int, block_size_n: int = BLOCK_SIZE_N,
                      fixed_overhead_num_blocks: int = FIXED_OVERHEAD_NUM_BLOCKS) -> MLASchedule:
    """``get_mla_metadata_kernel`` (``get_decoding_sched_meta.cu:28-101``), dense: the partitions, the
    cumulative split counts and each sequence's block ranges.  ``lengths`` are ``seqlens_k`` (``>= 0``; a
    sequence of no token still costs one block, line 49, and runs none, ``splitkv_mla.cuh:1032``)."""
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__"):
        raise BadInput("lengths", f"one token count per sequence, got {lengths!r:.80}")
    b = _batch("lengths", len(lengths))               # the count first: no length is read for a batch too large
    lens = [_int32("lengths", validate.integer("lengths", n, least=0), "seqlens_k") for n in lengths]
    parts = validate.positive_int("num_sm_parts", num_sm_parts)
    bn = validate.positive_int("block_size_n", block_size_n)
    fixed = validate.integer("fixed_overhead_num_blocks", fixed_overhead_num_blocks, least=0)

    # lines 28-55: first and last block of each sequence, its blocks, the total with the overheads
    first = [0] * b                                    # first_token_idx = 0 (dense)
    last = [max(n - 1, 0) // bn for n in lens]
    num_blocks = [la - fi + 1 for fi, la in zip(first, last)]
    total = _int32("lengths", sum(nb + fixed for nb in num_blocks), "total_num_blocks")
    payload = _ceildiv(total, parts) + fixed           # line 62

    def first_of(i):                                   # first_block_idx_shared[i]; past the batch unused
        return first[i] if i < b else 0

    now_req = now_block = now_split = cum = 0          # line 64
    num_splits = [0] * (b + 1)
    metas = []
    for _ in range(parts):                             # lines 66-99
        begin_req, begin_block = now_req, now_block + first_of(now_req)
        begin_split, first_cut = now_split, now_block != 0
        remain = payload
        while now_req < b:
            rest = num_blocks[now_req] - now_block
            if remain >= rest + fixed:
                cum += now_split + 1
                num_splits[now_req + 1] = cum
                remain -= rest + fixed
                now_req += 1
                now_block = now_split = 0
            else:
                if remain - fixed > 0:
                    now_block += remain - fixed
                    now_split += 1
                    remain = 0
                break
        end_req = now_req if now_block > 0 else now_req - 1
        if now_block > 0:
            end_block = now_block + first_of(now_req)
        else:
            end_block = 0 if lens[now_req - 1] == 0 else last[now_req - 1] + 1
        last_cut = end_block != last[end_req] + 1 and lens[end_req] != 0
        if begin_req == end_req:
            first_cut = last_cut = first_cut or last_cut
        metas.append(SchedMeta(begin_req, end_req, begin_block, end_block, begin_split, first_cut, last_cut))
    if not (now_req == b and now_block == 0 and now_split == 0):       # FLASH_DEVICE_ASSERT, line 100
        raise AssertionError(f"FlashMLA's scheduler left work unassigned at {lens!r:.80}, {parts} parts")

    # the kernel's walk of each partition (splitkv_mla.cuh:1021, 1027-1032): the block ranges it runs
    ranges = [[] for _ in range(b)]
    for m in metas:
        if m.begin_req_idx >= b:
            continue
        for req in range(m.begin_req_idx, m.end_req_idx + 1):
            j0 = m.begin_block_idx if req == m.begin_req_idx else 0
            j1 = m.end_block_idx if req == m.end_req_idx else _ceildiv(lens[req], bn)
            ranges[req].append((j0, j1))
    return MLASchedule(parts, tuple(metas), tuple(num_splits), tuple(tuple(r) for r in ranges))


def flashmla_splits(lengths: Sequence[int], num_sms: int, H: int, L_q: int, H_kv: int = 1) -> list:
    """The splits FlashMLA makes of each sequence: :func:`flashmla_schedule` over
    :func:`flashmla_num_sm_parts` partitions.  ``flashmla_splits([32768], 132, 128, 1) == [64]``: one
    sequence of DeepSeek-V3 on an H800 (132 SMs, two row groups of 64 heads, 66 partitions) has 512 blocks,
    517 with its overhead; ``payload = ceil(517 / 66) + 5 = 13`` gives each partition 8 blocks: 64 splits."""
    parts = flashmla_num_sm_parts(num_sms, H, L_q, H_kv)
    if parts > MAX_SPLITS:
        raise BadInput("num_sms", f"{parts} partitions exceed the {MAX_SPLITS} the combine kernel takes "
                                  f"(combine.cu:165-185)")
    return flashmla_schedule(lengths, parts).splits_per_sequence()


def flashmla_splits_uniform(B: int, N_k: int, num_sms: int, H: int, L_q: int, H_kv: int = 1) -> dict:
    """:func:`flashmla_splits` for ``B`` sequences of ``N_k`` tokens each, without listing them:
    ``{S: sequences cut into S splits}`` (ascending ``S``; the counts add up to ``B``), equal to counting
    ``flashmla_splits([N_k] * B, ...)``.  The scheduler's walk (``get_decoding_sched_meta.cu:66-99``) one
    partition at a time: a sequence begun in the partition before is finished or cut further, then the
    whole sequences that fit are taken in one step (``remain // (blocks + 5)`` of them, one split each), then
    a piece of the next is cut off when ``remain - 5 > 0``; so the work is ``num_sm_parts`` steps whatever
    ``B``.  ``B`` is refused beyond :data:`MAX_BATCH`, as :func:`flashmla_schedule` refuses it."""
    B = _batch("B", validate.positive_int("B", B))
    n = _int32("N_k", validate.integer("N_k", N_k, least=0), "seqlens_k")
    parts = flashmla_num_sm_parts(num_sms, H, L_q, H_kv)
    if parts > MAX_SPLITS:
        raise BadInput("num_sms", f"{parts} partitions exceed the {MAX_SPLITS} the combine kernel takes "
                                  f"(combine.cu:165-185)")
    fixed, nb = FIXED_OVERHEAD_NUM_BLOCKS, max(n - 1, 0) // BLOCK_SIZE_N + 1        # lines 28-55, dense
    cost = nb + fixed
    total = _int32("B", B * cost, "total_num_blocks")
    payload = _ceildiv(total, parts) + fixed                                    # line 62
    counts: dict = {}
    now_req = now_block = now_split = 0
    for _ in range(parts):
        remain = payload
        if now_req < B and now_block > 0:             # the sequence the partition before cut: finish or cut on
            rest = nb - now_block
            if remain >= rest + fixed:
                counts[now_split + 1] = counts.get(now_split + 1, 0) + 1
                remain -= rest + fixed
                now_req, now_block, now_split = now_req + 1, 0, 0
            else:
                if remain - fixed > 0:
                    now_block += remain - fixed
                    now_split += 1
                continue
        if now_req < B:                               # whole sequences, one split each, in one step
            k = min(remain // cost, B - now_req)
            if k:
                counts[1] = counts.get(1, 0) + k
            now_req += k
            remain -= k * cost
            if now_req < B and remain - fixed > 0:    # remain < cost here: a piece of the next
                now_block, now_split = remain - fixed, 1
    if not (now_req == B and now_block == 0 and now_split == 0):       # FLASH_DEVICE_ASSERT, line 100
        raise AssertionError(f"FlashMLA's scheduler left work unassigned at {B} x {n} tokens, {parts} parts")
    return dict(sorted(counts.items()))


def counts_at_schedule(model, point: Mapping, lengths: Sequence[int], splits: Sequence[int]) -> dict:
    """``model`` (``decode.mla`` or ``decode.mla.fp8``, a model or its ModelRef) at a ragged batch with one
    split count per sequence: the sum over the sequences of the model at ``B = 1``, ``N_k = n``, ``S = s``
    (every quantity that adds up; ``intensity`` is recomputed from the sums), the model evaluated once per
    distinct ``(n, s)`` pair."""
    if len(lengths) != len(splits):
        raise BadInput("splits", f"{len(splits)} split counts for {len(lengths)} sequences")
    alike: dict = {}                                  # equal (length, splits) pairs: one evaluation, times their count
    for n, s in zip(lengths, splits):
        alike[(n, s)] = alike.get((n, s), 0) + 1
    out: dict = {}
    for (n, s), times in alike.items():
        v = model.evaluate(**{**point, "B": 1, "N_k": n, "S": s})
        for k, x in v.items():
            if k not in ("intensity", "row_groups", "splits_run"):
                out[k] = out.get(k, 0) + times * x
    out["intensity"] = out["flops"] / out["bytes"]
    return out
