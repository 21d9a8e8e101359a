"""Buckets (tuning.buckets): the lookup rules worked by hand from GPTQ-triton's and vLLM's code, and the
bucket's config checked against the landscape of the bucket's own shape."""

from __future__ import annotations

import pytest

from base.errors import BadInput
from tuning import schedule
from tuning.buckets import VLLM_BATCH_SIZES, bucket_study, pow2_bucket, pow2up_bucket, summarize_buckets, vllm_bucket


@pytest.mark.parametrize("M,expect", [
    # 2 ** int(log2(M) + 0.5): log2 3 = 1.58 -> 2 -> 4; log2 5 = 2.32 -> 2 -> 4; log2 6 = 2.58 -> 3 -> 8
    (1, 1), (2, 2), (3, 4), (5, 4), (6, 8), (90, 64), (91, 128), (100, 128), (8192, 8192), (6000, 8192),
])
def test_pow2_bucket(M, expect):
    assert pow2_bucket(M) == expect


@pytest.mark.parametrize("M,expect", [(1, 1), (3, 4), (4, 4), (5, 8), (100, 128), (129, 256), (8192, 8192)])
def test_pow2up_bucket(M, expect):
    assert pow2up_bucket(M) == expect


@pytest.mark.parametrize("M,expect", [
    (1, 1), (3, 2), (20, 16), (40, 32), (100, 96), (200, 256), (1000, 1024), (5000, 4096), (8192, 4096),
])
def test_vllm_bucket_is_the_nearest_tuned_batch_smaller_on_a_tie(M, expect):
    # 3: |3-2| = |3-4| = 1, tie -> 2; 20: 16 and 24 tie -> 16; 40: 32 and 48 tie -> 32
    assert vllm_bucket(M) == expect
    assert expect in VLLM_BATCH_SIZES


def test_a_buckets_config_is_the_optimum_of_the_buckets_shape():
    shapes = [(100, 4096, 4096), (128, 4096, 4096), (96, 4096, 4096)]
    rows = bucket_study(shapes, "pow2")
    assert [r.bucket_m for r in rows] == [128, 128, 128]
    land = schedule.landscape(128, 4096, 4096)
    for r in rows:
        assert land.time_of(r.config) == land.best_time                   # tuned at (128, N, K)
        assert r.time_s == schedule.gemm_time(r.config, *r.shape.mnk)
        assert r.optimum_s == schedule.landscape(*r.shape.mnk).best_time
        assert r.slowdown >= 1.0
    assert rows[1].slowdown == 1.0                                       # M = 128 is its own bucket
    (decode, everything) = summarize_buckets(rows)
    assert decode.phase == "decode" and decode.shapes == 3 and decode.tuned == 1
    assert everything.worst == max(r.slowdown for r in rows)


def test_vllm_rows_use_the_nearest_table_entry():
    rows = bucket_study([(100, 4096, 4096)], "vllm")
    assert rows[0].bucket_m == 96
    land = schedule.landscape(96, 4096, 4096)
    assert land.time_of(rows[0].config) == land.best_time


def test_unknown_scheme_and_bad_m():
    with pytest.raises(BadInput) as e:
        bucket_study([(1, 2, 3)], "nearest")
    assert e.value.param == "scheme"
    with pytest.raises(BadInput) as e:
        pow2_bucket(0)
    assert e.value.param == "M"
