"""numeric.mla against independent references: plain softmax(Q C^T scale) C[:, :d_c] per head (float64, within
1e-12) for ragged batches, permuted block tables and every split count; FP8 against the dequantized cache,
with e4m3 rounding checked against the 256-code table built here from the bit layout; count-only against
real mode; the per-split table telescoping against a per-block enumeration; bad input; sizes beyond int64.

References: the OCP 8-bit floating point specification (E4M3: bias 7, 3 mantissa bits, no infinities,
S.1111.111 the only NaN, so 448 the largest value); FlashMLA ``tests/quant.py:17-18, 43-50`` (power-of-two
scales ``2^ceil(log2(max(amax/448, 1e-4)))``, one per 128 values; the RoPE part kept).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.mla import (dequantize_fp8, e4m3, even_splits, quantize_fp8, run_mla, split_pages)


def e4m3_table() -> np.ndarray:
    """Every finite non-negative float8_e4m3fn value from its bits: exponent field e, mantissa field m."""
    vals = []
    for e in range(16):
        for m in range(8):
            if e == 15 and m == 7:
                continue                                   # S.1111.111 is NaN
            vals.append(m / 8 * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return np.array(sorted(set(vals)))


def e4m3_brute(x: float) -> float:
    """Nearest table value; a tie goes to the one whose mantissa field is even (round half to even)."""
    t = e4m3_table()
    a = abs(x)
    i = np.argsort(np.abs(t - a), kind="stable")[:2]
    lo, hi = sorted(t[i])
    if abs(a - lo) != abs(a - hi):
        best = lo if abs(a - lo) < abs(a - hi) else hi
    else:
        even = [v for v in (lo, hi) if int(np.round(v / _ulp(v))) % 2 == 0]
        best = even[0]
    return float(np.copysign(best, x))


def _ulp(v: float) -> float:
    if v < 2.0**-6:
        return 2.0**-9
    return 2.0 ** (np.floor(np.log2(v)) - 3)


def test_table_has_the_format_s_extremes():
    t = e4m3_table()
    assert t.max() == 448.0 and t[1] == 2.0**-9 and len(t) == 127     # 0, 7 subnormals, 15 x 8 - 1 normals


@settings(max_examples=300, deadline=None)
@given(st.floats(-448, 448, allow_nan=False))
@example(0.0)
@example(2.0**-10)                    # half the smallest subnormal: a tie, to 0 (even)
@example(3 * 2.0**-10)                # a tie between 1 and 2 subnormal steps: to 2 (even)
@example(17.0)                        # between 16 and 18: tie to 16 (mantissa 000)
@example(19.0)                        # between 18 and 20: tie to 20 (mantissa 010)
@example(-447.9)
@example(2.0**-6 * (1 + 1 / 16))      # a normal tie
def test_e4m3_is_the_nearest_table_value(x):
    assert float(e4m3(np.array([x]))[0]) == e4m3_brute(x)


def test_quantize_as_flashmla_and_dequantize_exactly():
    rng = np.random.default_rng(3)
    lat = rng.standard_normal((5, 7, 256 + 9)) * np.array([1e-6, 1, 300, 5e4, 0.01])[:, None, None]
    codes, scales, rope = quantize_fp8(lat, 256)
    assert codes.shape == (5, 7, 256) and scales.shape == (5, 7, 2) and rope.shape == (5, 7, 9)
    assert np.array_equal(rope, lat[..., 256:])
    groups = lat[..., :256].reshape(5, 7, 2, 128)
    want = 2.0 ** np.ceil(np.log2(np.maximum(np.abs(groups).max(axis=-1) / 448, 1e-4)))
    assert np.array_equal(scales, want)
    assert np.all(np.log2(scales) == np.round(np.log2(scales)))            # powers of two
    assert np.abs(codes).max() <= 448
    assert set(np.abs(codes).ravel()) <= set(e4m3_table())
    deq = dequantize_fp8(codes, scales, rope)
    assert np.array_equal(deq[..., :256].reshape(5, 7, 2, 128), codes.reshape(5, 7, 2, 128) * scales[..., None])
    # a group's error is within half a step of its largest value's binade: 2^-4 relative to 448 scale
    err = np.abs(deq[..., :256] - lat[..., :256]).reshape(5, 7, 2, 128).max(axis=-1)
    assert np.all(err <= 16 * scales + 1e-300)


def _reference(q, pool, pages, lens, d_c, scale):
    """Plain attention per (sequence, query position, head): softmax(q C^T scale) C[:, :d_c]."""
    B, L_q, H, W = q.shape
    O, LSE = np.empty((B, L_q, H, d_c)), np.empty((B, H, L_q))
    for b, n in enumerate(lens):
        C = pool[pages[b]].reshape(-1, W)[:n]
        for s in range(L_q):
            for h in range(H):
                sc = (C @ q[b, s, h]) * scale
                p = np.exp(sc - sc.max())
                O[b, s, h] = (p @ C[:, :d_c]) / p.sum()
                LSE[b, h, s] = sc.max() + np.log(p.sum())
    return O, LSE


def _batch(rng, lens, P, W, spare=5):
    need = [-(-n // P) for n in lens]
    perm = rng.permutation(sum(need) + spare)
    pages, at = [], 0
    for k in need:
        pages.append([int(x) for x in perm[at:at + k]])
        at += k
    return pages, rng.standard_normal((sum(need) + spare, P, W)) * 2


@pytest.mark.parametrize("fp8", [False, True])
@pytest.mark.parametrize("S", [1, 2, 3, 50])
@pytest.mark.parametrize("lens,H,L_q,B_h", [((100, 1, 37), 5, 2, 4), ((64,), 16, 1, 64), ((300, 129), 3, 3, 2)])
def test_real_mode_is_plain_attention(fp8, S, lens, H, L_q, B_h):
    rng = np.random.default_rng(len(lens) * 7 + S)
    d_c, d_r, P, B_n = (128 if fp8 else 24), 8, 7, 16
    W = d_c + d_r
    pages, kv = _batch(rng, lens, P, W)
    q = rng.standard_normal((len(lens), L_q, H, W))
    run = run_mla(len(lens), H, L_q, None, d_c, d_r, B_h, B_n, S, P, fp8=fp8, lengths=lens, pages=pages, real=True,
                  q=q, kv=kv)
    pool = dequantize_fp8(*quantize_fp8(kv, d_c)) if fp8 else kv
    O, LSE = _reference(q, pool, pages, lens, d_c, 1 / np.sqrt(W))
    assert np.max(np.abs(run.O - O)) < 1e-12
    assert np.max(np.abs(run.LSE - LSE)) < 1e-12
    assert run.counts() == run_mla(len(lens), H, L_q, None, d_c, d_r, B_h, B_n, S, P, fp8=fp8, lengths=lens).counts()


def test_fp8_differs_from_bf16_and_matches_only_the_dequantized_reference():
    rng = np.random.default_rng(0)
    pages, kv = _batch(rng, (200,), 16, 128 + 4)
    q = rng.standard_normal((1, 1, 4, 132))
    run = run_mla(1, 4, 1, 200, 128, 4, 64, 16, 3, 16, fp8=True, pages=pages, real=True, q=q, kv=kv)
    O_raw, _ = _reference(q, kv, pages, (200,), 128, 1 / np.sqrt(132))
    O_deq, _ = _reference(q, dequantize_fp8(*quantize_fp8(kv, 128)), pages, (200,), 128, 1 / np.sqrt(132))
    assert np.max(np.abs(run.O - O_deq)) < 1e-12
    assert np.max(np.abs(run.O - O_raw)) > 1e-4                    # quantization is visible


def test_flashmla_s_own_splits_give_the_same_output():
    from tuning.mla_splits import flashmla_schedule
    rng = np.random.default_rng(1)
    lens = (640, 64, 1300)
    pages, kv = _batch(rng, lens, 64, 40)
    q = rng.standard_normal((3, 1, 6, 40))
    sched = flashmla_schedule(lens, 7)
    run = run_mla(3, 6, 1, None, 32, 8, 64, 64, 1, 64, lengths=lens, pages=pages, splits=sched.splits, real=True,
                  q=q, kv=kv)
    O, _ = _reference(q, kv, pages, lens, 32, 1 / np.sqrt(40))
    assert np.max(np.abs(run.O - O)) < 1e-12
    assert [len(r) for r in run.splits] == sched.splits_per_sequence()


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 100), st.integers(1, 100), st.data())
@example(64, 64, 64, None)
@example(100, 16, 7, None)
def test_split_pages_is_the_per_block_enumeration(n, B_n, P, data):
    nb = -(-n // B_n)
    if data is None:
        j0, j1 = 0, nb
    else:
        j0 = data.draw(st.integers(0, nb - 1))
        j1 = data.draw(st.integers(j0 + 1, nb))
    want = sum(len({t // P for t in range(j * B_n, min(n, (j + 1) * B_n))}) for j in range(j0, j1))
    assert split_pages(n, B_n, P, j0, j1) == want


def test_even_splits_cut_into_min_S_nb_non_empty_ranges():
    for nb in (1, 2, 7, 100):
        for S in (1, 3, 7, 200):
            cut = even_splits(nb, S)
            assert len(cut) == min(S, nb) and cut[0][0] == 0 and cut[-1][1] == nb
            assert all(a < b for a, b in cut) and all(x[1] == y[0] for x, y in zip(cut, cut[1:]))


def test_count_only_beyond_int64_by_hand():
    """B_n = P = 64: a row group reads one table entry a block; 129 heads = 3 row groups; 64 splits."""
    for n in (10**9, 2**63 - 1, 2**63, 2**63 + 1, 10**30):
        c = run_mla(1, 129, 1, n, 512, 64, 64, 64, 64, 64).counts()
        nb = -(-n // 64)
        assert c["reads_KV_nope"] == 3 * n * 512 and c["reads_table"] == 3 * nb
        assert c["reads_Q"] == 129 * 576 * 64 and c["writes_O_s"] == 129 * 64 * 512
        assert c["bytes_KV"] == 3 * 1152 * n
        assert c["flops"] == 2 * 129 * n * 1088 and c["tokens_tiles"] == 3 * nb * 64
        assert all(type(v) is int for v in c.values())
        f = run_mla(1, 129, 1, n, 512, 64, 64, 64, 64, 64, fp8=True).counts()
        assert f["bytes_KV"] == 3 * 656 * n


@pytest.mark.parametrize("kw,param", [
    ({"d_c": 0}, "d_c"), ({"d_r": 0}, "d_r"), ({"B_h": 0}, "B_h"), ({"P": 0}, "P"), ({"S": 0}, "S"),
    ({"fp8": True, "d_c": 100}, "d_c"), ({"pages": [[0]]}, "pages"), ({"pages": [[0, 0]]}, "pages"),
    ({"pages": "x"}, "pages"), ({"splits": [[(0, 1)]]}, "splits"), ({"splits": [[(0, 1), (2, 7)]]}, "splits"),
    ({"splits": [[(0, 0), (0, 7)]]}, "splits"), ({"lengths": [10, 20]}, "lengths"), ({"N_k": 0}, "N_k"),
    ({"real": True, "max_elements": 100}, "N_k"), ({"S": 10**9, "N_k": 10**12, "max_segments": 10}, "S"),
    ({"real": True, "q": np.ones((1, 1, 3, 8))}, "q"), ({"real": True, "kv": np.ones((1, 16, 9))}, "kv"),
    ({"fp8": "yes"}, "fp8")])
def test_bad_input_names_the_parameter(kw, param):
    args = {"B": 1, "H": 3, "L_q": 1, "N_k": 100, "d_c": 6, "d_r": 3, "B_h": 2, "B_n": 16, "S": 3, "P": 16}
    args.update({k: v for k, v in kw.items() if k in args})
    extra = {k: v for k, v in kw.items() if k not in args}
    with pytest.raises(BadInput) as e:
        run_mla(*args.values(), **extra)
    assert e.value.param == param
