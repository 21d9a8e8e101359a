"""decode.mla and decode.mla.fp8 against counts made by hand: a brute-force walk of FlashMLA's loops written
here (token by token, page by page), the 1,152 and 656 bytes a token of the issue and FlashMLA's README, the
deep-dive's FLOP formula, closed forms at 10**30 and 2**63 +- 1, the asymptotics, the split overhead, bad
input, and wrong formulas the check must catch.

References: FlashMLA @ 9241ae3 (``csrc/sm90/decode/dense/splitkv_mla.cuh``: grid ``(ceil(R/64), 1, parts)``,
a row group per CTA, ``Q`` per split, a table entry per page a block touches, partials only for a split
sequence; ``combine.cu:39-41``), its README ("656 Bytes": 512 + 16 + 128), and
``docs/20250422-new-kernel-deep-dive.md:11`` (FLOPs ``2 h_q s_q s_k (d_k + d_v)``).
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from symbolic.model import Model
from symbolic.models.mla import B, B_h, H, L_q, N_k, S, counts, d_c, d_r, decode_mla, decode_mla_fp8, decode_mla_time
from symbolic.registry import ModelRef
from verify import run_check
from verify.checks.mla import checks

DEEPSEEK = {"H": 128, "L_q": 1, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "P": 64}


def brute(B, H, L_q, N_k, d_c, d_r, B_h, B_n, S, P, fp8=False):
    """FlashMLA's loops, token by token: row groups of B_h rows, min(S, nb) splits (any cut: here each split
    one block but the last, which takes the rest - the counts must not care), each (row group, split)
    loading Q, each block its valid tokens and the set of pages they lie on, partials only when split."""
    R, W = H * L_q, d_c + d_r
    groups = [min(B_h, R - g) for g in range(0, R, B_h)]
    nb = -(-N_k // B_n)
    m = min(S, nb)
    cuts = [(s, s + 1) for s in range(m - 1)] + [(m - 1, nb)]
    c = dict.fromkeys(("Q", "nope", "scale", "rope", "table", "O_s_w", "L_s_w", "O_s_r", "L_s_r", "O", "L"), 0)
    flops = 0
    for _ in range(B):
        for rows in groups:
            for j0, j1 in cuts:
                c["Q"] += rows * W
                for j in range(j0, j1):
                    toks = [t for t in range(j * B_n, (j + 1) * B_n) if t < N_k]
                    c["table"] += len({t // P for t in toks})
                    for _t in toks:
                        c["nope"] += d_c
                        c["scale"] += d_c // 128 if fp8 else 0
                        c["rope"] += d_r
                        flops += 2 * rows * (W + d_c)
                if m == 1:
                    c["O"] += rows * d_c
                    c["L"] += rows
                else:
                    c["O_s_w"] += rows * d_c
                    c["L_s_w"] += rows
        if m > 1:
            for _r in range(R):
                c["O_s_r"] += m * d_c
                c["L_s_r"] += m
                c["O"] += d_c
                c["L"] += 1
    e_nope = 1 if fp8 else 2
    byts = (2 * c["Q"] + e_nope * c["nope"] + 4 * c["scale"] + 2 * c["rope"] + 4 * c["table"]
            + 4 * (c["O_s_w"] + c["L_s_w"] + c["O_s_r"] + c["L_s_r"]) + 2 * c["O"] + 4 * c["L"])
    return {"reads_Q": c["Q"], "reads_KV_nope": c["nope"], "reads_KV_rope": c["rope"], "reads_table": c["table"],
            "writes_O_s": c["O_s_w"], "writes_LSE_s": c["L_s_w"], "reads_O_s": c["O_s_r"],
            "reads_LSE_s": c["L_s_r"], "writes_O": c["O"], "writes_LSE": c["L"], "flops": flops, "bytes": byts,
            **({"reads_KV_scale": c["scale"]} if fp8 else {})}


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2), st.integers(1, 9), st.integers(1, 3), st.integers(1, 150), st.integers(1, 7),
       st.integers(1, 5), st.integers(1, 12), st.integers(1, 40), st.integers(1, 12), st.integers(1, 50))
@example(1, 5, 1, 1, 6, 3, 4, 16, 4, 16)          # N_k < B_n, S > nb
@example(1, 5, 3, 100, 6, 3, 4, 16, 13, 7)        # H L_q = 15 not a multiple of 4; S > nb; P divides nothing
@example(2, 3, 1, 64, 6, 3, 3, 16, 4, 16)         # everything divides
def test_bf16_model_is_the_brute_force_walk(b, h, lq, nk, dc, dr, bh, bn, s, p):
    want = brute(b, h, lq, nk, dc, dr, bh, bn, s, p)
    got = decode_mla.evaluate(B=b, H=h, L_q=lq, N_k=nk, d_c=dc, d_r=dr, B_h=bh, B_n=bn, S=s, P=p)
    assert {k: got[k] for k in want} == want


@pytest.mark.parametrize("pt", [dict(B=1, H=5, L_q=1, N_k=1, B_h=4, B_n=16, S=4, P=16),
                                dict(B=2, H=7, L_q=2, N_k=130, B_h=4, B_n=16, S=5, P=6),
                                dict(B=1, H=3, L_q=1, N_k=64, B_h=64, B_n=8, S=8, P=64)])
@pytest.mark.parametrize("dc", [128, 256])
def test_fp8_model_is_the_brute_force_walk(pt, dc):
    want = brute(**pt, d_c=dc, d_r=3, fp8=True)
    got = decode_mla_fp8.evaluate(**pt, d_c=dc, d_r=3)
    assert {k: got[k] for k in want} == want


@pytest.mark.parametrize("h,groups", [(128, 2), (64, 1), (129, 3), (16, 1), (192, 3)])
def test_bytes_per_token_are_1152_and_656_times_the_row_groups(h, groups):
    """README: "each token's KV cache is 656 Bytes" (512 fp8 + 4 x 4 + 64 x 2); BF16: 576 x 2 = 1,152."""
    pt = {**DEEPSEEK, "H": h, "B": 1, "S": 1}
    for n in (1, 64, 1000, 32768):
        assert decode_mla.evaluate("bytes_KV", **pt, N_k=n) == 1152 * n * groups
        assert decode_mla_fp8.evaluate("bytes_KV", **pt, N_k=n) == 656 * n * groups
        assert decode_mla_time.evaluate("row_groups", **pt, N_k=n) == groups


def test_flops_are_the_deep_dive_formula():
    """2 h_q s_q s_k (d_k + d_v), d_k = 576, d_v = 512, per sequence (deep-dive :11)."""
    for hq, sq, sk, b in ((128, 1, 32768, 1), (128, 2, 4096, 3), (16, 1, 100, 2)):
        v = decode_mla.evaluate(B=b, H=hq, L_q=sq, N_k=sk, d_c=512, d_r=64, B_h=64, B_n=64, S=1, P=64)
        assert v["flops"] == b * 2 * hq * sq * sk * (576 + 512)


def test_no_v_read_and_q_per_split():
    v = decode_mla.evaluate(B=1, N_k=4096, S=64, **DEEPSEEK)
    assert "reads_V" not in v and "reads_K" not in v
    assert v["reads_Q"] == 128 * 576 * 64                      # every split reloads the 128 rows
    assert v["reads_table"] == 2 * 64                          # P = B_n: one entry a block, two row groups
    assert v["writes_O_s"] == v["reads_O_s"] == 64 * 128 * 512
    assert decode_mla.evaluate("writes_O_s", B=1, N_k=4096, S=1, **DEEPSEEK) == 0


def test_exact_and_fast_at_1e30_and_around_int64():
    for model in (decode_mla, decode_mla_fp8):
        for n in (10**30 + 7, 2**63 - 1, 2**63, 2**63 + 1):
            pt = {**DEEPSEEK, "H": 129, "B": 3, "N_k": n, "S": 10**6, "P": 10**6 + 1}
            t0 = time.perf_counter()
            v = model.evaluate(**pt)
            assert time.perf_counter() - t0 < 0.05              # closed forms: no loop over blocks or splits
            nb = -(-n // 64)
            assert v["reads_KV_rope"] == 3 * 3 * n * 64
            # P = 10**6 + 1 is coprime to 64: every one of the nb - 1 inner block boundaries inside a page
            # but those that P divides, which none of j 64 (j < nb) is unless 10**6 + 1 | j
            inner_div = (nb - 1) // (10**6 + 1)
            assert v["reads_table"] == 3 * 3 * (-(-n // (10**6 + 1)) + (nb - 1) - inner_div)
            assert all(isinstance(x, int) for k, x in v.items() if k != "intensity")


def test_leading_terms_and_theta():
    R = B * H * L_q
    assert sp.simplify(decode_mla.leading() - 2 * R * N_k * (d_c + d_r) / B_h) == 0
    assert sp.simplify(decode_mla_fp8.leading() - R * N_k * (sp.Rational(33, 32) * d_c + 2 * d_r) / B_h) == 0
    assert sp.simplify(decode_mla.theta() - R * N_k * (d_c + d_r) / B_h) == 0


def test_split_overhead_is_total_at_S_less_total_at_one_and_free_of_N_k():
    for pt in ({**DEEPSEEK, "B": 2, "N_k": 4096, "S": 8}, {**DEEPSEEK, "H": 100, "N_k": 100, "S": 5, "B": 1},
               {**DEEPSEEK, "N_k": 10, "S": 3, "B": 1}):
        for model in (decode_mla, decode_mla_fp8):
            v, one = model.evaluate(**pt), model.evaluate(**{**pt, "S": 1})
            assert v["split_overhead"] == v["total"] - one["total"]
            assert v["split_overhead_bytes"] == v["bytes"] - one["bytes"]
    # B_n S | N_k: the overhead does not change with N_k: B R (W (S - 1) + 2 S (d_c + 1)) by hand
    for n in (512, 4096, 10**9 * 512):
        assert decode_mla.evaluate("split_overhead", B=1, N_k=n, S=8, **DEEPSEEK) == 128 * (576 * 7 + 16 * 513)
    div = decode_mla.divisible()["split_overhead"]
    assert N_k not in div.free_symbols


@pytest.mark.parametrize("model,param,value", [
    (decode_mla, "d_r", 0), (decode_mla, "d_c", 0), (decode_mla, "B_h", 0), (decode_mla, "P", 0),
    (decode_mla, "d_c", -512), (decode_mla_fp8, "d_c", 100), (decode_mla_fp8, "d_c", 576),
    (decode_mla_fp8, "d_r", 0)])
def test_bad_input_names_the_parameter(model, param, value):
    with pytest.raises(BadInput) as e:
        model.evaluate(**{param: value})
    assert e.value.param == param


def _wrong(name, fp8, change):
    q = counts(fp8)
    q.update(change(q))
    base = decode_mla_fp8 if fp8 else decode_mla
    return ModelRef(name, "a wrong MLA model", lambda: Model(name, "wrong", q, params=base.params,
                                                             defaults=dict(base.defaults)))


@pytest.mark.parametrize("what,change", [
    ("the cache read once, not once a row group", lambda q: {"reads_KV_nope": B * N_k * d_c}),
    ("empty splits run (S, not min(S, nb))", lambda q: {"reads_Q": B * H * L_q * (d_c + d_r) * S}),
    ("row groups as H L_q / B_h", lambda q: {"reads_KV_rope": B * H * L_q * N_k * d_r / B_h}),
])
def test_a_wrong_formula_is_caught(what, change):
    check = {c.name: c for c in checks}["decode.mla"]
    wrong = _wrong("wrong.decode.mla", False, change)
    rep = run_check(replace(check, model=wrong, name="wrong.decode.mla", strategy=None))
    assert rep.failed > 0, what
    assert rep.agreed > 0
