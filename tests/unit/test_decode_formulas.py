"""The decode formulas (symbolic/models/decode.py) against closed forms derived by hand.

References, none of them the code under test: the counts of the module docstring re-derived here in
plain Python integers (``nb``, ``nbps`` and the non-empty splits from the loop bounds), the divisible
forms (``N_k = B_n S t``: every split holds ``t`` blocks) written out by hand and compared with
``sympy.simplify``, the leading term by hand, and the claim that FA2's eligible split counts leave no
split empty checked by enumeration.
"""

from __future__ import annotations

import math
import time

import pytest
import sympy as sp

from base.errors import BadInput
from symbolic.models.decode import (B, B_n, COUNT_MODELS, H, H_kv, L_q, N_k, P, S, d, d_v, decode_packed,
                                    decode_packed_paged, decode_time, decode_unpacked, decode_unpacked_paged)


def cdiv(a, b):
    return -(-a // b)


def hand(B_, H_, H_kv_, L_q_, N_k_, d_, d_v_, B_n_, S_, packed, P_=None):
    """The module docstring's closed forms, derived from the loop bounds (elements; bytes FP16 / FP32 / int32)."""
    nb = cdiv(N_k_, B_n_)
    nbps = cdiv(nb, S_)
    s_ne = len([s for s in range(S_) if s * nbps < nb])          # splits whose first block exists
    G = H_kv_ if packed else H_
    R = B_ * H_ * L_q_
    part = 1 if S_ > 1 else 0
    el = {"reads_Q": R * d_ * s_ne, "reads_K": B_ * G * N_k_ * d_, "reads_V": B_ * G * N_k_ * d_v_,
          "reads_O_s": part * R * S_ * d_v_, "reads_LSE_s": part * R * S_, "writes_O_s": part * R * S_ * d_v_,
          "writes_LSE_s": part * R * S_, "writes_O": R * d_v_, "writes_LSE": R}
    if P_ is not None:   # the pages each key block touches, counted block by block
        el["reads_table"] = B_ * G * sum((min(N_k_, (j + 1) * B_n_) - 1) // P_ - (j * B_n_) // P_ + 1
                                         for j in range(nb))
    size = {"reads_Q": 2, "reads_K": 2, "reads_V": 2, "reads_table": 4, "reads_O_s": 4, "reads_LSE_s": 4,
            "writes_O_s": 4, "writes_LSE_s": 4, "writes_O": 2, "writes_LSE": 4}
    out = dict(el)
    out["reads"] = sum(v for k, v in el.items() if k.startswith("reads"))
    out["writes"] = sum(v for k, v in el.items() if k.startswith("writes"))
    out["bytes"] = sum(size[k] * v for k, v in el.items())
    out["flops"] = 2 * R * N_k_ * (d_ + d_v_)
    out["ctas"] = B_ * G * S_
    return out


POINTS = [
    (1, 8, 2, 1, 1, 4, 3, 16, 1), (1, 8, 2, 1, 1, 4, 3, 16, 4),        # N_k < B_n; S > nblocks
    (2, 8, 2, 1, 100, 4, 3, 16, 3), (2, 8, 2, 1, 100, 4, 3, 16, 6),    # B_n does not divide; S_ne = 4 < 6
    (1, 4, 4, 3, 64, 5, 7, 16, 4), (3, 6, 1, 2, 77, 8, 8, 4, 13),      # MHA, L_q > 1; MQA
    (1, 32, 8, 1, 32768, 128, 128, 128, 29), (1, 32, 8, 1, 10**9, 128, 128, 128, 128),
]


@pytest.mark.parametrize("pt", POINTS)
@pytest.mark.parametrize("ref,packed,paged", [(decode_packed, True, False), (decode_unpacked, False, False),
                                              (decode_packed_paged, True, True),
                                              (decode_unpacked_paged, False, True)])
def test_exact_values_are_the_hand_closed_forms(pt, ref, packed, paged):
    names = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S")
    for P_ in ((3, 16, 256) if paged else (None,)):
        point = dict(zip(names, pt), **({"P": P_} if paged else {}))
        want = hand(*pt, packed, P_) if pt[4] < 10**6 or not paged else None
        got = ref.evaluate(**point)
        if want is None:                      # the block-by-block table sum is too long by hand at 10**9
            want = hand(*pt, packed)
            assert got["reads_table"] == pt[0] * (pt[2] if packed else pt[1]) * (
                cdiv(pt[4], P_) + cdiv(pt[4], pt[7]) - 1 - (cdiv(pt[4], pt[7]) - 1) * math.gcd(P_, pt[7]) // P_)
            want["reads_table"] = got["reads_table"]
            want["reads"] += got["reads_table"]
            want["bytes"] += 4 * got["reads_table"]
        for q, v in want.items():
            assert got[q] == v, (q, point)
            assert type(got[q]) is int


def _by_hand_divisible(packed: bool, paged: bool) -> dict:
    """N_k = B_n S t: nb = S t, nbps = t, every split holds t blocks (S_ne = S)."""
    G = H_kv if packed else H
    R = B * H * L_q
    part = sp.Piecewise((1, S > 1), (0, True))
    forms = {"reads_Q": R * d * S, "reads_K": B * G * N_k * d, "reads_V": B * G * N_k * d_v,
             "writes_O": R * d_v, "writes_LSE": R, "reads_O_s": part * R * S * d_v, "writes_O_s": part * R * S * d_v,
             "split_overhead": R * ((S - 1) * d + part * 2 * S * (d_v + 1)),
             "split_overhead_bytes": R * (2 * (S - 1) * d + part * 8 * S * (d_v + 1))}
    return forms


@pytest.mark.parametrize("ref,packed,paged", [(decode_packed, True, False), (decode_unpacked, False, False),
                                              (decode_packed_paged, True, True)])
def test_divisible_forms_by_hand(ref, packed, paged):
    div = ref.divisible()
    for q, form in _by_hand_divisible(packed, paged).items():
        for s in (1, 2, 3, 8):                 # both pieces of [S > 1]
            assert sp.simplify((div[q] - form).subs(S, s)) == 0, (q, s)


@pytest.mark.parametrize("ref", COUNT_MODELS)
def test_split_overhead_is_free_of_N_k_when_B_n_S_divides_it(ref):
    div = ref.divisible()
    for q in ("split_overhead", "split_overhead_bytes"):
        assert N_k not in div[q].free_symbols, (q, div[q])


@pytest.mark.parametrize("ref", COUNT_MODELS)
@pytest.mark.parametrize("N_k_,B_n_,S_", [(100, 16, 3), (100, 16, 6), (1, 16, 5), (64, 16, 4), (10**9, 128, 128)])
def test_split_overhead_is_the_difference_with_one_split(ref, N_k_, B_n_, S_):
    pt = {"N_k": N_k_, "B_n": B_n_, "L_q": 2}
    one, many = ref.evaluate(**pt, S=1), ref.evaluate(**pt, S=S_)
    assert many["total"] - one["total"] == many["split_overhead"]
    assert many["bytes"] - one["bytes"] == many["split_overhead_bytes"]
    assert many["reads_K"] == one["reads_K"] and many["reads_V"] == one["reads_V"]


def test_leading_terms_by_hand():
    # the K and V bytes dominate: 2 bytes x (d + d_v) per key per KV head (packed) or query head (unpacked)
    assert sp.simplify(decode_packed.leading() - 2 * B * H_kv * N_k * (d + d_v)) == 0
    assert sp.simplify(decode_unpacked.leading() - 2 * B * H * N_k * (d + d_v)) == 0
    assert sp.simplify(decode_packed_paged.leading() - 2 * B * H_kv * N_k * (d + d_v)) == 0
    assert sp.simplify(decode_unpacked_paged.leading() - 2 * B * H * N_k * (d + d_v)) == 0


def test_gqa_ratio_of_the_formulas_is_g():
    for ratio in (sp.simplify(decode_unpacked["reads_K"] / decode_packed["reads_K"]),
                  sp.simplify(decode_unpacked["reads_V"] / decode_packed["reads_V"]),
                  sp.simplify(decode_unpacked_paged["reads_table"] / decode_packed_paged["reads_table"])):
        assert sp.simplify(ratio - H / H_kv) == 0
    assert sp.simplify(decode_unpacked["reads_Q"] - decode_packed["reads_Q"]) == 0


def test_fa2_eligible_counts_leave_no_split_empty():
    # the docstring's claim: S <= nb is eligible (ceil(nb/S) < ceil(nb/(S-1))) iff ceil(nb/ceil(nb/S)) = S
    for nb in range(1, 300):
        for s in range(1, nb + 1):
            eligible = s == 1 or cdiv(nb, s) != cdiv(nb, s - 1)
            assert eligible == (cdiv(nb, cdiv(nb, s)) == s), (nb, s)


def test_exact_and_fast_at_any_size():
    for ref in COUNT_MODELS + (decode_time,):
        ref.evaluate(N_k=7)                                   # compile once
        t0 = time.perf_counter()
        v = ref.evaluate(N_k=10**30 + 7, S=10**6, B_n=1000)
        assert time.perf_counter() - t0 < 0.05                # closed forms: no loop over blocks or splits
        assert all(type(x) is int for k, x in v.items() if k not in ("intensity", "time", "t_main", "t_combine",
                                                                       "hbm_fraction", "t_roofline", "t_cta",
                                                                       "wave_efficiency", "cta_bandwidth"))


@pytest.mark.parametrize("ref", COUNT_MODELS + (decode_time,))
def test_bad_input_names_the_parameter(ref):
    with pytest.raises(BadInput) as e:
        ref.evaluate(H=32, H_kv=5)
    assert e.value.param == "H_kv"
    with pytest.raises(BadInput) as e:
        ref.evaluate(S=0)
    assert e.value.param == "S"
    with pytest.raises(BadInput) as e:
        ref.evaluate(N_k=0)
    assert e.value.param == "N_k"


def test_parameters_are_named_as_the_issue_asks():
    for ref in COUNT_MODELS:
        names = [p.name for p in ref.params]
        assert names[:9] == ["B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S"]
        assert names[9:] == (["P"] if ref.name.endswith(".paged") else [])
    assert P.name == "P"


def test_one_model_serves_both_16_bit_inputs():
    from base.dtypes import element_bytes
    assert element_bytes("fp16") == element_bytes("bf16") == 2
    assert element_bytes("fp32") == element_bytes("int32") == 4
