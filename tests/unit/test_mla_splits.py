"""tuning.mla_splits against FlashMLA's scheduler worked by hand (get_decoding_sched_meta.cu:28-101 with
block_size_n = 64, fixed_overhead_num_blocks = 5, dense_decode.h:101-113), its num_sm_parts (dense_decode.h:78),
the invariants its kernel relies on (the FLASH_DEVICE_ASSERT of line 100; every split non-empty), and the
refusals where the C++ would fail."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.mla import run_mla
from symbolic.models.mla import decode_mla
from tuning.mla_splits import (MAX_BATCH, counts_at_schedule, flashmla_num_sm_parts, flashmla_schedule,
                               flashmla_splits, flashmla_splits_uniform)


@pytest.mark.parametrize("sms,H,L_q,H_kv,want", [
    (132, 128, 1, 1, 66),      # two row groups of 64 heads share 132 SMs
    (132, 16, 1, 1, 132),      # one row group
    (132, 128, 2, 1, 33),      # MTP: 256 rows, four row groups
    (132, 129, 1, 1, 44),      # 129 rows: three row groups
    (132, 1024, 1, 1, 8),
    (132, 8192, 1, 1, 1),      # 128 row groups: at least one part (max(..., 1))
    (132, 128, 1, 2, 66),      # h_k = 2: 132 / 2 / ceil(64 / 64)
])
def test_num_sm_parts(sms, H, L_q, H_kv, want):
    assert flashmla_num_sm_parts(sms, H, L_q, H_kv) == want


def test_one_long_sequence_by_hand():
    """512 blocks + 5 = 517 over 66 parts: payload ceil(517/66) + 5 = 13, so each part takes 13 - 5 = 8
    blocks while the rest does not fit: 63 parts of 8 and a last of 8 that fits with its overhead."""
    s = flashmla_schedule([32768], 66)
    assert s.splits_per_sequence() == [64]
    assert s.splits[0] == tuple((8 * i, 8 * i + 8) for i in range(64))
    assert flashmla_splits([32768], 132, 128, 1) == [64]
    assert all(m.begin_req_idx >= 1 for m in s.partitions[64:])           # two idle parts return at once


def test_two_and_three_parts_by_hand():
    # [640, 64] tokens = [10, 1] blocks; total 10 + 5 + 1 + 5 = 21; payload ceil(21/2) + 5 = 16.
    # part 0: 16 >= 10 + 5 takes sequence 0 whole, 1 left < 1 + 5 and 1 - 5 <= 0: stops; part 1: sequence 1
    s = flashmla_schedule([640, 64], 2)
    assert s.splits_per_sequence() == [1, 1] and s.num_splits == (0, 1, 2)
    assert (s.partitions[0].end_req_idx, s.partitions[0].end_block_idx, s.partitions[0].is_last_req_splitted) == \
        (0, 10, False)
    # [1280] = 20 blocks; total 25, payload ceil(25/3) + 5 = 14: 9 blocks, 9 blocks, then 2 + 5 <= 14
    s = flashmla_schedule([1280], 3)
    assert s.splits == (((0, 9), (9, 18), (18, 20)),)
    p = s.partitions
    assert (p[1].begin_block_idx, p[1].begin_split_idx, p[1].is_first_req_splitted) == (9, 1, True)
    assert s.num_splits == (0, 3)


def test_a_ragged_batch_by_hand():
    # [100, 5000, 1] tokens = [2, 79, 1] blocks; total 7 + 84 + 6 = 97; 8 parts: payload 13 + 5 = 18.
    # part 0: seq 0 (7), 11 left -> 6 blocks of seq 1; parts 1-4: 13 blocks each (6..58, 58..71? no:)
    # seq 1 after part 0 holds 73 blocks: parts 1..5 take 13 each (65), part 6 has 8 + 5 <= 18 left: whole,
    # then 18 - 13 = 5 < 1 + 5 and 5 - 5 = 0: stop; part 7 takes seq 2.
    s = flashmla_schedule([100, 5000, 1], 8)
    assert s.splits[0] == ((0, 2),)
    assert s.splits[1] == ((0, 6), (6, 19), (19, 32), (32, 45), (45, 58), (58, 71), (71, 79))
    assert s.splits[2] == ((0, 1),)
    assert s.splits_per_sequence() == [1, 7, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=30), st.integers(1, 160))
@example([0], 1)
@example([0, 0, 64], 132)
@example([1] * 30, 160)
def test_every_sequence_is_cut_into_contiguous_non_empty_splits(lengths, parts):
    s = flashmla_schedule(lengths, parts)
    assert s.splits_per_sequence() == [len(r) for r in s.splits]
    for n, r in zip(lengths, s.splits):
        nb = -(-n // 64)
        if n == 0:
            assert r == ((0, 0),)                    # one block of cost, no block run (splitkv_mla.cuh:1032)
            continue
        assert r[0][0] == 0 and r[-1][1] == nb
        assert all(a < b for a, b in r) and all(x[1] == y[0] for x, y in zip(r, r[1:]))
    total = sum(-(-max(n, 1) // 64) + 5 for n in lengths)
    payload = -(-total // parts) + 5
    for m in s.partitions:                           # no part holds more than its payload
        if m.begin_req_idx >= len(lengths):
            continue
        work = 0
        for req in range(m.begin_req_idx, m.end_req_idx + 1):
            j0 = m.begin_block_idx if req == m.begin_req_idx else 0
            j1 = m.end_block_idx if req == m.end_req_idx else -(-lengths[req] // 64)
            work += max(j1 - j0, 1 if lengths[req] == 0 else 0) + 5       # a piece costs its blocks + 5
        assert work <= payload


def test_counts_at_schedule_is_the_executor_on_flashmla_s_splits():
    lens = [4096, 100, 70000, 64]
    point = {"H": 128, "L_q": 1, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "P": 64}
    sched = flashmla_schedule(lens, flashmla_num_sm_parts(132, 128, 1))
    got = counts_at_schedule(decode_mla, point, lens, sched.splits_per_sequence())
    ran = run_mla(len(lens), 128, 1, None, 512, 64, 64, 64, 1, 64, lengths=lens,
                  splits=[list(r) for r in sched.splits]).counts()
    common = ran.keys() & got.keys()                         # every count but the executor's segments
    assert len(common) == len(ran) - 1 and {k: got[k] for k in common} == {k: ran[k] for k in common}


@pytest.mark.parametrize("call,param", [
    (lambda: flashmla_schedule([], 4), "lengths"),
    (lambda: flashmla_schedule([-1], 4), "lengths"),
    (lambda: flashmla_schedule([2**31], 4), "lengths"),                # seqlens_k is int32
    (lambda: flashmla_schedule([2**31 - 1] * 64, 4), "lengths"),       # total_num_blocks beyond an int
    (lambda: flashmla_schedule([1] * 12000, 4), "lengths"),            # 5 b + 1 ints of shared memory > 227 KiB
    (lambda: flashmla_schedule([10], 0), "num_sm_parts"),
    (lambda: flashmla_num_sm_parts(132, 6, 1, 4), "H_kv"),
    (lambda: flashmla_splits([10], 400, 16, 1), "num_sms"),            # 400 parts > the combine's 160
])
def test_refusals_name_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param


def test_two_long_sequences_fit_int32():
    """2 x (2**31 - 1) tokens: 2 x 33,554,432 blocks + 10 fits an int; no refusal, and each is split."""
    s = flashmla_schedule([2**31 - 1] * 2, 4)
    assert sum(s.splits_per_sequence()) >= 2


# ------------------------------------------------------------------------------------- a uniform batch, not listed
@pytest.mark.parametrize("sms,H,L_q", [(132, 128, 1), (132, 16, 1), (78, 128, 2), (132, 128, 4), (8, 128, 1),
                                       (114, 64, 1), (160, 16, 1)])
def test_the_uniform_count_is_the_listed_scheduler_for_batches_1_to_50(sms, H, L_q):
    """``flashmla_splits_uniform(B, n, ...)`` counts what ``flashmla_splits([n] * B, ...)`` lists, for every
    B = 1..50 and lengths around the block edges, a long context and an empty one."""
    from collections import Counter
    for B in range(1, 51):
        for n in (0, 1, 63, 64, 65, 640, 1000, 4096, 5000, 32768, 100_000, 2**20):
            want = dict(sorted(Counter(flashmla_splits([n] * B, sms, H, L_q)).items()))
            assert flashmla_splits_uniform(B, n, sms, H, L_q) == want, (B, n)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3000), st.integers(0, 300_000), st.integers(1, 160), st.sampled_from([16, 64, 128]),
       st.integers(1, 4))
def test_the_uniform_count_is_the_listed_scheduler_at_larger_batches(B, n, sms, H, L_q):
    from collections import Counter
    assert flashmla_splits_uniform(B, n, sms, H, L_q) == dict(sorted(Counter(flashmla_splits([n] * B, sms, H,
                                                                                              L_q)).items()))


def test_the_largest_batch_the_scheduler_holds():
    """5 b + 1 ints of shared memory within 227 KiB: 11,622 sequences, and the listed scheduler agrees there."""
    from collections import Counter
    assert MAX_BATCH == 11_622 and 4 * (5 * MAX_BATCH + 1) <= 227 * 1024 < 4 * (5 * (MAX_BATCH + 1) + 1)
    got = flashmla_splits_uniform(MAX_BATCH, 4096, 132, 128, 1)
    assert sum(got.values()) == MAX_BATCH
    assert got == dict(sorted(Counter(flashmla_splits([4096] * MAX_BATCH, 132, 128, 1)).items()))


class _Huge:
    """A batch whose length is 10**9 but whose lengths must never be read."""

    def __len__(self):
        return 10**9

    def __iter__(self):
        raise AssertionError("a length was read before the batch size was refused")


@pytest.mark.parametrize("call,param", [
    (lambda: flashmla_splits_uniform(MAX_BATCH + 1, 4096, 132, 128, 1), "B"),
    (lambda: flashmla_splits_uniform(10**9, 4096, 132, 128, 1), "B"),
    (lambda: flashmla_splits_uniform(10**40, 4096, 132, 128, 1), "B"),
    (lambda: flashmla_splits_uniform(0, 4096, 132, 128, 1), "B"),
    (lambda: flashmla_splits_uniform(True, 4096, 132, 128, 1), "B"),
    (lambda: flashmla_splits_uniform(4, -1, 132, 128, 1), "N_k"),
    (lambda: flashmla_splits_uniform(4, 2**31, 132, 128, 1), "N_k"),
    (lambda: flashmla_splits_uniform(64, 2**31 - 1, 132, 128, 1), "B"),       # total_num_blocks beyond an int
    (lambda: flashmla_splits_uniform(4, 100, 400, 16, 1), "num_sms"),
    (lambda: flashmla_schedule(_Huge(), 4), "lengths"),                       # the count before any length
])
def test_uniform_refusals_name_the_parameter_before_any_work(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param and len(str(e.value)) < 300
