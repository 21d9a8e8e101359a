"""The split rules of tuning/splits.py against the sources' own comments and examples, and hand derivations.

Goldens:
* FlashAttention-2 ``flash_api.cpp:275-278`` (and FA3 ``heuristics.h:19-22``): "if we have batch * n_heads
  = 48 and we have 108 SMs, having 2 splits (efficiency = 0.89) is better than having 3 splits
  (efficiency = 0.67)".
* FlashAttention-2 ``flash_api.cpp:289-292``: "if we have 64 blocks and choose 11 splits, we'll have
  6 * 10 + 4 blocks. If we choose 12 splits, we'll have 6 * 11 + (-2) blocks (i.e. it's 11 splits anyway)".
* FlashAttention-3 ``heuristics.h:39``: "we never split for hdim = 128 and seqlen_k = 512"; its L2
  clause (lines 27-34): a KV head over 50 MB is split into ``ceil(size / 50 MiB)`` when there are
  ``2 x SMs`` row blocks and no causal mask.
* FlashInfer ``scheduler.cuh:60-73`` (the doc comment: the least pages per batch so that the new batch
  times ``gdy`` fits ``max_grid_size``), worked by hand below.
* vLLM ``paged_attn.py:10, 111-121``: 512-token partitions; V1 up to 8192 tokens with one partition or
  more than 512 sequence-heads.
"""

from __future__ import annotations

import pytest

from base.errors import BadInput
from symbolic.hardware import A100, H100
from tuning.splits import (FA3_L2_BYTES, RULES, choose_all, fa2_block_n, fa2_efficiencies, fa2_num_splits,
                           fa2_num_splits_heuristic, fa2_split_eligible, fa3_num_splits, fa3_num_splits_heuristic,
                           fa3_tile_size, flashinfer_min_pages_per_chunk, flashinfer_num_splits, vllm_num_splits)


def test_fa2_source_example_48_ctas_on_108_sms():
    eff = fa2_efficiencies(48, 108, 1000, 128)
    assert round(eff[1], 2) == 0.89 and round(eff[2], 2) == 0.67       # 2 splits: 96/108; 3: 144/216
    assert fa2_num_splits_heuristic(48, 108, 1000, 128) == 2
    assert fa3_num_splits_heuristic(48, 108, 1000, 1, 10**6, False, 128) == 2


def test_fa2_eligibility_example_64_blocks():
    assert fa2_split_eligible(64, 11) and not fa2_split_eligible(64, 12)
    assert fa2_efficiencies(64, 1000, 64, 128)[11] == 0.0              # 12 splits: not considered


def test_fa2_almost_full_is_one_split():
    assert fa2_num_splits_heuristic(87, 108, 1000, 128) == 1            # 87 >= 0.8 x 108 = 86.4
    assert fa2_num_splits_heuristic(86, 108, 1000, 128) > 1


def test_fa2_call_site_on_h100_by_hand():
    # B=1, H=32, H_kv=8, one token: the GQA swap gives 8 heads of 4 rows, one row block of 64: 8 CTAs;
    # 264 slots (132 SMs x 2); block_n 128 for d = 128: 256 blocks.  Efficiency 8 S / 264 below one wave
    # (all S <= 33); 85 % of the best (1.0 at S = 33) needs 8 S >= 224.4: S = 29 (eligible: ceil(256/29) = 9,
    # ceil(256/28) = 10)
    assert fa2_block_n(128) == 128 and fa2_block_n(64) == 256 and fa2_block_n(256) == 64
    assert fa2_num_splits(1, 32, 8, 1, 32768, 128, 132) == 29
    # without the swap (L_q = 2): 32 heads x 1 row block = 32 CTAs.  32 S / 264 is whole only at S = 33, 66,
    # 99, all ineligible (ceil(256/33) = ceil(256/32) = 8, ...), so the best eligible efficiency is 32/33 (S = 8,
    # 16, 24, 32, 64, 128: 0.9697); 85 % of it is 0.824, first reached at S = 7 (224/264 = 0.848; eligible:
    # ceil(256/7) = 37 < ceil(256/6) = 43)
    assert fa2_num_splits(1, 32, 8, 2, 32768, 128, 132) == 7
    # a big batch fills the GPU: 32 x 8 = 256 CTAs >= 0.8 x 264
    assert fa2_num_splits(32, 32, 8, 1, 32768, 128, 132) == 1


def test_fa3_never_splits_hdim128_seqlen512():
    assert fa3_tile_size(128, 128, 90) == (128, 176)
    for H, H_kv in ((32, 8), (8, 8), (64, 1)):
        assert fa3_num_splits(1, H, H_kv, 1, 512, 128, 128, 132) == 1


def test_fa3_l2_clause():
    big = 3 * FA3_L2_BYTES - 1                                     # a KV head of just under 150 MiB
    assert fa3_num_splits_heuristic(264, 132, 10**4, 264, big, False, 128) == 3
    assert fa3_num_splits_heuristic(264, 132, 10**4, 264, big, True, 128) == 1     # causal: no split
    assert fa3_num_splits_heuristic(264, 132, 10**4, 263, big, False, 128) == 1    # fewer than 2 x SMs row blocks
    assert fa3_num_splits_heuristic(264, 132, 10**4, 264, FA3_L2_BYTES, False, 128) == 1   # fits L2


def test_fa3_on_h100_by_hand():
    # PackGQA: 4 rows, one row block of 128; 176-key blocks: ceil(32768/176) = 187; 8 CTAs on 132 slots;
    # best efficiency 1.0 (S = 33); 8 S / 132 >= 0.85 at S = 15 (no eligibility test in FA3)
    assert fa3_num_splits(1, 32, 8, 1, 32768, 128, 128, 132) == 15
    # A100 tiles (sm8x, hdim 128: 128 x 64): 512 blocks; 8 S / 108 >= 0.85 -> S = 12
    assert fa3_tile_size(128, 128, 80) == (128, 64)
    assert fa3_num_splits(1, 32, 8, 1, 32768, 128, 128, 108, arch=80) == 12


def test_flashinfer_binary_search_by_hand():
    # 2048 pages, 8 KV heads, one wave of 264 CTAs: the least c with ceil(2048/c) x 8 <= 264 is 63 (33 chunks)
    assert flashinfer_min_pages_per_chunk(264, 8, [2048]) == (63, 33)
    # ragged: pages [10, 100], gdy 2, grid 20 -> chunks sum <= 10: c = 12 gives 1 + 9 = 10
    assert flashinfer_min_pages_per_chunk(20, 2, [10, 100]) == (12, 10)
    assert flashinfer_num_splits([32768], 16, 8, 132, 2) == [33]
    # at least 128 tokens a chunk: pages of 16 -> 8 pages; a short sequence is not split
    assert flashinfer_num_splits([100], 16, 1, 132, 2) == [1]
    # the batch fills the grid: no split
    assert flashinfer_num_splits([32768] * 40, 16, 8, 132, 2) == [1] * 40


def test_vllm_partitions():
    assert vllm_num_splits(32768, 1, 32) == 64                    # > 8192 tokens: V2, 512-token partitions
    assert vllm_num_splits(8192, 1, 32) == 16                     # 16 partitions, 32 sequence-heads <= 512
    assert vllm_num_splits(8192, 32, 32) == 1                     # 1024 sequence-heads > 512: V1
    assert vllm_num_splits(512, 1, 1) == 1 and vllm_num_splits(513, 1, 1) == 2


def test_all_rules_at_the_llama_shape():
    pt = {"B": 1, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 32768, "d": 128, "d_v": 128, "P": 16, "ctas_per_sm": 2}
    assert {r.name: s for r, s in choose_all(pt, H100)} == {"FlashAttention-2": 29, "FlashAttention-3": 15,
                                                            "FlashInfer": 33, "vLLM": 64}
    assert [r.name for r in RULES] == ["FlashAttention-2", "FlashAttention-3", "FlashInfer", "vLLM"]
    assert {r.name: s for r, s in choose_all(pt, A100)}["FlashAttention-2"] == 24   # 8 S / 216 >= 0.85


def test_bad_input():
    with pytest.raises(BadInput) as e:
        fa2_num_splits(1, 32, 5, 1, 100, 128, 132)
    assert e.value.param == "H_kv"
    with pytest.raises(BadInput) as e:
        fa2_num_splits_heuristic(0, 108, 10, 128)
    assert e.value.param == "batch_nheads_mblocks"
    with pytest.raises(BadInput) as e:
        vllm_num_splits(0, 1, 1)
    assert e.value.param == "max_seq_len"


# ---------------------------------------------------------------------- bounded work at any size (issue 18)
@pytest.mark.parametrize("B,N_k,P,H_kv", [(1, 32768, 16, 8), (3, 100, 16, 1), (40, 32768, 16, 8), (2, 7, 1, 3),
                                          (5, 4096, 64, 2), (1, 10 ** 6, 16, 1), (16, 999, 8, 4)])
def test_flashinfer_uniform_batch_equals_the_listed_batch(B, N_k, P, H_kv):
    """The uniform form counts each length once with its multiplicity; the listed form is the oracle."""
    from tuning.splits import flashinfer_num_splits_uniform
    for cta in (1, 2, 4):
        assert flashinfer_num_splits_uniform(B, N_k, P, H_kv, 132, cta) == \
            max(flashinfer_num_splits([N_k] * B, P, H_kv, 132, cta))


def test_flashinfer_uniform_batch_of_a_billion_sequences():
    """10**9 sequences fill the grid (B x H_kv >= ctas): no split, found without a 10**9-long list."""
    from tuning.splits import flashinfer_num_splits_uniform
    assert flashinfer_num_splits_uniform(10 ** 9, 32768, 16, 8, 132, 2) == 1


@pytest.mark.parametrize("rule,args,name", [
    (fa2_num_splits, (1, 32, 8, 1, 2 ** 31, 128, 132), "N_k"),
    (fa2_num_splits, (10 ** 9, 32, 8, 1, 32768, 128, 132), "B"),
    (fa3_num_splits, (1, 32, 8, 1, 10 ** 30, 128, 128, 132), "N_k"),
    (fa3_num_splits, (10 ** 30, 32, 8, 1, 32768, 128, 128, 132), "B"),
])
def test_sizes_beyond_the_kernels_int_are_refused(rule, args, name):
    """FA2 and FA3 hold seqlen_k and the CTA count in a 32-bit int: beyond 2**31 - 1 the rule is undefined."""
    with pytest.raises(BadInput, match=f"^{name}: .*32-bit int"):
        rule(*args)


def test_the_largest_int32_shape_still_answers():
    assert fa2_num_splits(1, 32, 8, 1, 2 ** 31 - 1, 128, 132) >= 1


def test_fa2_split_rule_under_a_window_is_the_unswapped_grid():
    """mha_fwd's GQA swap needs ``window_size_left < 0`` (flash_api.cpp:429-437): under a window a single
    token's g query heads stay g CTA rows of their own, which is the grid of plain multi-head attention
    (H_kv = H, where there is nothing to swap)."""
    from tuning.splits import fa2_num_splits
    for B, H, H_kv, N_k, d, sms in [(1, 32, 8, 9001, 128, 132), (4, 32, 8, 70000, 128, 108), (1, 16, 8, 8001, 256, 132),
                                    (2, 64, 8, 4097, 64, 132)]:
        assert fa2_num_splits(B, H, H_kv, 1, N_k, d, sms, window=True) == fa2_num_splits(B, H, H, 1, N_k, d, sms)
    # at least one of these differs from the packed count, so the flag is not a no-op
    assert any(fa2_num_splits(1, 32, 8, 1, n, 128, 132, window=True) != fa2_num_splits(1, 32, 8, 1, n, 128, 132)
               for n in (9001, 20000, 70000))


def test_fa2_split_rule_window_flag_must_be_a_bool():
    import pytest
    from base.errors import BadInput
    from tuning.splits import fa2_num_splits
    with pytest.raises(BadInput, match="window"):
        fa2_num_splits(1, 32, 8, 1, 9001, 128, 132, window="False")
