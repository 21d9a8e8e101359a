"""The roofline prices a model by its own bytes where it states them (issue 18).

The reference is worked per tensor class: split-KV decode moves Q, K, V and O at the input type (fp16,
2 B), the split partials O_s and LSE_s and the final LSE in FP32 (4 B, FlashAttention-2's flash_api.cpp
allocates them so), and the block table in int32 (4 B).  The test multiplies the model's per-class element
counts by those sizes itself; the old roofline priced every element at 2 B (13.7 FLOP/B at the point below
instead of 10.05).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from symbolic import registry
from symbolic.roofline import own_bytes, roofline
from tilebound.report import values_table

POINT = dict(B=2, H=40, H_kv=10, L_q=7, N_k=1222, d=128, d_v=128, B_n=48, S=32)
SIZE = {"reads_Q": 2, "reads_K": 2, "reads_V": 2, "writes_O": 2, "reads_O_s": 4, "reads_LSE_s": 4,
        "writes_O_s": 4, "writes_LSE_s": 4, "writes_LSE": 4, "reads_table": 4}


@pytest.mark.parametrize("name,point", [("decode.packed", POINT), ("decode.unpacked", POINT),
                                        ("decode.packed.paged", {**POINT, "P": 16})])
def test_decode_is_priced_by_each_tensors_own_size(name, point):
    m = registry.get(name)
    v = m.evaluate(**point)
    by_hand = sum(v[q] * size for q, size in SIZE.items() if q in v)
    rl = roofline(m, point, "A100", "fp16")
    assert rl.bytes == by_hand and rl.bytes_from == "the model's bytes"
    assert rl.bytes != v["total"] * 2                       # the old pricing: every element at fp16
    assert rl.intensity == Fraction(v["flops"], by_hand)


def test_the_issues_point_is_about_ten_flop_per_byte():
    rl = roofline(registry.get("decode.packed"), POINT, "A100", "fp16")
    assert rl.bytes == 34_879_680 and round(float(rl.intensity), 2) == 10.05


def test_a_model_of_elements_only_is_priced_at_the_dtype():
    m = registry.get("attention.fa2.fwd")
    pt = dict(N=4096, N_k=4096, d=64, B_r=128, B_c=128)
    assert not own_bytes(m)
    v = m.evaluate(**pt)
    rl = roofline(m, pt, "H100", "fp8")
    assert rl.bytes == v["total"] and rl.bytes_from == "total x 1 B (fp8)"


def test_the_values_table_does_not_re_price_a_model_with_its_own_bytes():
    decode = values_table(registry.get("decode.packed"), POINT, "fp16")
    assert not any("bytes (" in str(h) for h in decode.headers)
    assert decode.notes and "own" in str(decode.notes[0])
    flash = values_table(registry.get("attention.fa2.fwd"), dict(N=4096, N_k=4096, d=64, B_r=128, B_c=128), "fp16")
    assert "bytes (all at fp16)" in flash.headers
