"""gemm.scaled.*: the element-size table's new formats, the value tables against the specifications, the
executor against a slot-by-slot walk of every scale word each tile loads, the formulas against hand closed
forms, real products against the dequantized reference, bad input naming its parameter."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.dtypes import ELEMENT_BYTES, SOURCES, element_bytes
from base.errors import BadInput
from numeric.gemm_scaled import (FORMATS, dequantize, e2m1_values, e4m3_values, e5m2_values, quantize,
                                 run_scaled)
from symbolic import registry
from symbolic.models import gemm_scaled
from symbolic.models.gemm_scaled import blocks_met, scaled_format

NAMES = ("fp8_block", "mxfp8", "mxfp4", "nvfp4")


def model(fmt):
    return registry.get(f"gemm.scaled.{fmt}")


# ------------------------------------------------------------------ the element-size table
def test_table_learns_the_formats_and_keeps_the_old_ones():
    old = {"fp8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "fp64": 8, "int8": 1, "int32": 4, "int64": 8}
    assert {n: ELEMENT_BYTES[n] for n in old} == old
    assert element_bytes("fp8_e4m3") == element_bytes("fp8_e5m2") == element_bytes("mxfp8") == 1
    assert element_bytes("mxfp4") == element_bytes("nvfp4") == element_bytes("fp4_e2m1") == Fraction(1, 2)
    assert element_bytes("e8m0") == 1 and element_bytes("MXFP4") == Fraction(1, 2)
    assert set(SOURCES) == set(ELEMENT_BYTES) and all(len(s.split()) >= 3 for s in SOURCES.values())
    assert all(type(v) is int or isinstance(v, Fraction) for v in ELEMENT_BYTES.values())
    with pytest.raises(BadInput) as e:
        element_bytes("fp6")
    assert e.value.param == "dtype"


# ------------------------------------------------------------------ value tables vs the specifications
def test_value_tables_match_the_specifications():
    e4 = e4m3_values()
    finite = e4[~np.isnan(e4)]
    assert np.nanmax(e4) == 448 and len(finite) == 254                    # OFP8: E4M3 max 448, NaN at S.1111.111
    assert np.min(finite[finite > 0]) == 2.0 ** -9                        # smallest subnormal 2^-9
    e5 = e5m2_values()
    assert np.nanmax(e5) == 57344 and np.min(e5[e5 > 0]) == 2.0 ** -16   # E5M2 max 57344, subnormal 2^-16
    # DeepGEMM deep_gemm/utils/math.py:75 lists the E2M1 magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6}
    assert e2m1_values()[:8].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def test_mx_scale_is_the_shared_exponent():
    """OCP MX: X = floor(log2(amax)) - emax (E4M3: 8, E2M1: 2); E8M0 stores X + 127."""
    x = np.zeros((1, 32))
    x[0, 3] = 5.0                                         # floor(log2 5) = 2
    assert int(quantize("mxfp8", x).scale_codes[0, 0]) == 2 - 8 + 127
    assert int(quantize("mxfp4", x).scale_codes[0, 0]) == 2 - 2 + 127


@pytest.mark.parametrize("fmt,tol", [("fp8_block", 0.07), ("mxfp8", 0.07), ("mxfp4", 0.3), ("nvfp4", 0.3)])
def test_quantization_is_real(fmt, tol):
    """Round trip within the element type's precision (E4M3: 3 mantissa bits; E2M1: 1), and not exact."""
    x = np.random.default_rng(4).standard_normal((40, 300))
    y = dequantize(fmt, quantize(fmt, x))
    err = np.linalg.norm(x - y) / np.linalg.norm(x)
    assert 0 < err < tol


# ------------------------------------------------------------------ the walk
def walk(fmt, M, N, K, BM, BN, BK):
    """Every scale slot of every word each tile loads, enumerated: a slot is useful when it belongs to a real
    row (or 128-column block) and a group that covers an element of K; payload bytes per loaded row chunk."""
    lay = FORMATS[fmt]
    g, W = lay.group, lay.pack * lay.group
    e = Fraction(1, 2) if lay.element == "e2m1" else 1
    s = 4 if lay.scale == "fp32" else 1
    groups = -(-K // g)
    out = dict(payload=0, scales=0, padding=0)
    pad_rows = {R: lay.align * (-(-R // lay.align)) for R in (M, N)}
    for i, j in product(range(-(-M // BM)), range(-(-N // BN))):
        rows = [r for r in range(i * BM, (i + 1) * BM) if r < pad_rows[M]]
        cols = [c for c in range(j * BN, (j + 1) * BN) if c < (N if lay.group_n > 1 else pad_rows[N])]
        if lay.tensor_scale:
            out["scales"] += 8
        if lay.group_n > 1:                           # fp8_block B: each 128-block the valid columns meet
            blocks = {c // 128 for c in cols if c < N}
            out["scales"] += 4 * len(blocks) * groups
        seen = set()
        for k0 in range(0, K, BK):
            ks = range(k0, min(k0 + BK, K))
            for rr in (range(i * BM, min((i + 1) * BM, M)), range(j * BN, min((j + 1) * BN, N))):
                out["payload"] += len(rr) * int(np.ceil(e * len(ks)))
            for w in sorted({kk // W for kk in ks} - seen):
                seen.add(w)
                for slot in range(lay.pack):
                    group = w * lay.pack + slot
                    for r in rows:
                        out["scales" if (r < M and group < groups) else "padding"] += s
                    if lay.group_n == 1:
                        for c in cols:
                            out["scales" if (c < N and group < groups) else "padding"] += s
    return out


CASES = [(1, 1, 1, 1, 1), (5, 7, 33, 4, 4), (13, 17, 200, 8, 16), (9, 130, 260, 16, 144), (6, 6, 300, 512, 512),
         (130, 40, 70, 64, 112)]
STEPS = {"fp8_block": (32, 128, 256), "mxfp8": (32, 64, 128, 256), "mxfp4": (32, 256), "nvfp4": (16, 64, 128)}


@pytest.mark.parametrize("fmt", NAMES)
@pytest.mark.parametrize("case", CASES)
def test_executor_and_formula_equal_the_walk(fmt, case):
    for BK in STEPS[fmt]:
        want = walk(fmt, *case, BK)
        got = run_scaled(fmt, *case, BK).counts
        f = model(fmt).evaluate(**dict(zip(("M", "N", "K", "B_M", "B_N", "B_K"), case + (BK,))))
        for q, w in (("bytes_payload", want["payload"]), ("bytes_scales", want["scales"]),
                     ("bytes_padding", want["padding"])):
            assert got[q] == f[q] == w, (fmt, case, BK, q, got[q], f[q], w)
        assert f["bytes_C"] == got["bytes_C"] == 2 * case[0] * case[1]


# ------------------------------------------------------------------ hand closed forms
@pytest.mark.parametrize("fmt", NAMES)
def test_divisible_sizes_by_hand(fmt):
    """M, N multiples of the tiles and of 128, K of the tile and the word: no padding; payload
    (t_n M + t_m N) K e, scales (t_n M + t_m N) K / group scale bytes (fp8_block's B: t_m (K/128)(N/128) FP32;
    nvfp4 adds 8 bytes a tile)."""
    M, N, K, BM, BN, BK = 512, 768, 1024, 128, 256, 128
    lay = scaled_format(fmt)
    e = element_bytes(lay.payload)
    s = element_bytes(lay.scale)
    tm, tn = M // BM, N // BN
    v = model(fmt).evaluate(M=M, N=N, K=K, B_M=BM, B_N=BN, B_K=BK)
    assert v["bytes_payload"] == (tn * M + tm * N) * K * e
    a_scales = tn * M * K // lay.group * s
    b_scales = tm * (K // 128) * (N // 128) * 4 if fmt == "fp8_block" else tm * N * K // lay.group * s
    assert v["bytes_scales"] == a_scales + b_scales + (8 * tm * tn if lay.tensor_scale else 0)
    assert v["bytes_padding"] == 0
    assert v["scale_fraction"] == Fraction(v["bytes_scales"], v["bytes_payload"])


def test_scale_fraction_per_format_by_hand():
    """Per byte of payload, without re-reads across tiles: fp8 1x128 FP32 scales, 4/128; MX, 1/32 (FP8) and
    1/16 (FP4: half the payload); NVFP4 one byte per 16 half-bytes, 1/8."""
    pt = dict(M=128, N=128, K=4096, B_M=128, B_N=128, B_K=128)
    assert model("mxfp8").evaluate("scale_fraction", **pt) == Fraction(1, 32)
    assert model("mxfp4").evaluate("scale_fraction", **pt) == Fraction(1, 16)
    # nvfp4: 2 x 128 rows x 256 E4M3 scales + two FP32 tensor scales, over 2 x 128 rows x 2048 payload bytes
    assert model("nvfp4").evaluate("scale_fraction", **pt) == Fraction(2 * 128 * 256 + 8, 2 * 128 * 2048)
    fp8 = model("fp8_block").evaluate("scale_fraction", **pt)
    assert fp8 == Fraction(4 * 128 * 32 + 4 * 32, 2 * 128 * 4096)        # A: 128 rows x 32 groups; B: 32 blocks


def test_blocks_met_by_hand():
    """Tiles of 112 over 224 columns: [0, 112) meets one 128-block, [112, 224) two; B_N = 128 meets one each; 144 over 300: 2 + 2 + 1."""
    for n, bn, want in [(224, 112, 3), (256, 128, 2), (300, 144, 5), (1, 1, 1), (129, 1, 129)]:
        got = blocks_met(sp.Integer(n), sp.Integer(bn))
        brute = sum(len({c // 128 for c in range(j * bn, min((j + 1) * bn, n))}) for j in range(-(-n // bn)))
        assert got == brute == want


# ------------------------------------------------------------------ real mode
@pytest.mark.parametrize("fmt", NAMES)
@pytest.mark.parametrize("case", [(5, 7, 33, 4, 4), (13, 17, 200, 8, 16), (9, 130, 260, 16, 144)])
def test_real_product_equals_the_dequantized_reference(fmt, case):
    BK = STEPS[fmt][0]
    r = run_scaled(fmt, *case, BK, real=True, seed=11)
    assert np.max(np.abs(r.C - r.reference)) <= 1e-12 * max(1.0, np.max(np.abs(r.reference)))
    assert r.counts == run_scaled(fmt, *case, BK).counts
    rng = np.random.default_rng(11)
    A, B = rng.standard_normal(case[0:3:2]), rng.standard_normal((case[2], case[1]))
    exact = A @ B                                   # quantized, the product is near the exact one, not equal
    assert 0 < np.linalg.norm(r.C - exact) / np.linalg.norm(exact) < 0.5


def test_fp4_rows_are_whole_bytes():
    """K = 33 FP4 elements a row: 17 bytes (two a byte, the last half empty)."""
    v = model("mxfp4").evaluate(M=1, N=1, K=33, B_M=1, B_N=1, B_K=32)
    assert v["bytes_payload"] == 2 * 17


def test_count_only_beyond_int64():
    n = 10**30
    c = run_scaled("mxfp8", n, n, n, 10**29, 10**29, 128 * 10**27).counts
    assert c["bytes_payload"] == 2 * 10 * n * n          # (t_n M + t_m N) K, t = 10
    f = model("mxfp8").evaluate(M=n, N=n, K=n, B_M=10**29, B_N=10**29, B_K=128 * 10**27)
    assert c == {q: f[q] for q in c} and f["total"] == c["reads"] + c["writes"]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call,param", [
    (lambda: scaled_format("mxfp6"), "format"),
    (lambda: run_scaled("int4", 8, 8, 8, 8, 8, 8), "format"),
    (lambda: model("mxfp8").evaluate(B_K=48), "B_K"),            # 32 does not divide 48
    (lambda: model("nvfp4").evaluate(B_K=8), "B_K"),             # 16 does not divide 8
    (lambda: model("mxfp4").evaluate(B_K=96), "B_K"),            # 96 and the 128-element word do not nest
    (lambda: model("fp8_block").evaluate(B_K=96), "B_K"),
    (lambda: run_scaled("mxfp8", 8, 8, 8, 8, 8, 48), "BK"),
    (lambda: run_scaled("fp8_block", 8, 8, 8, 8, 8, 96), "BK"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param


@settings(max_examples=40, deadline=None, database=None)
@given(st.sampled_from(NAMES), st.integers(1, 200), st.integers(1, 200), st.integers(1, 400), st.integers(1, 130),
       st.integers(1, 130))
@example("nvfp4", 129, 1, 17, 128, 1)
@example("fp8_block", 1, 257, 1, 1, 112)
def test_formula_equals_executor_drawn(fmt, M, N, K, BM, BN):
    BK = STEPS[fmt][M % len(STEPS[fmt])]
    got = run_scaled(fmt, M, N, K, BM, BN, BK).counts
    f = model(fmt).evaluate(M=M, N=N, K=K, B_M=BM, B_N=BN, B_K=BK)
    assert {q: f[q] for q in got} == got


def test_models_are_registered():
    assert {f"gemm.scaled.{f}" for f in NAMES} <= set(registry.names())
    assert [m.name for m in gemm_scaled.MODELS] == [f"gemm.scaled.{f}" for f in NAMES]
