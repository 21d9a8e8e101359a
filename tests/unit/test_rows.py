"""Row kernels: outputs against plain NumPy, counts against the sources' own figures and brute-force loops,
formulas against hand-derived forms, bad input naming its parameter."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric import rows as ex
from symbolic.models import rows as fm
from symbolic.models.rows import B_R, M, N


def cdiv(a, b):
    return -(-a // b)


# ------------------------------------------------------------------------------------- the sources' figures
def test_naive_softmax_is_the_tutorials_line_by_line_count():
    # 02-fused-softmax.py:47-57: (reads, writes) of the five lines, summed by hand
    lines = [(M * N, M), (M * N + M, M * N), (M * N, M * N), (M * N, M), (M * N + M, M * N)]
    assert sp.expand(sum(r for r, _ in lines)) == 5 * M * N + 2 * M
    assert sp.expand(fm.softmax_naive["reads"] - (5 * M * N + 2 * M)) == 0
    assert sp.expand(fm.softmax_naive["writes"] - (3 * M * N + 2 * M)) == 0
    r = ex.softmax_naive(1823, 781, 64)          # the tutorial's test shape
    assert (r["reads"], r["writes"]) == (5 * 1823 * 781 + 2 * 1823, 3 * 1823 * 781 + 2 * 1823)


def test_fused_ratio_is_the_tutorials():
    # 02-fused-softmax.py:67: "(8MN + 4M) / 2MN", about 4x
    assert sp.simplify(fm.softmax_fused["ratio_unfused"] - (8 * M * N + 4 * M) / (2 * M * N)) == 0
    assert ex.softmax_fused(4096, 4096, 256)["ratio_unfused"] == Fraction(8 * 4096 + 4, 2 * 4096)


def test_pair_ratios_by_hand():
    # fused add + RMSNorm at B_R = 1: (2MN + MN) + (2MN + MN + MN) = 7MN unfused vs 3MN + MN + 2MN = 6MN fused
    assert fm.norm_rms_residual.evaluate("ratio_unfused", M=64, N=4096, B_R=1) == Fraction(7, 6)
    assert ex.fused_add_rms_norm(64, 4096, 1)["ratio_unfused"] == Fraction(7, 6)
    # SwiGLU: silu (MN in, MN out) + multiply (2MN in, MN out) = 5MN vs 3MN
    assert fm.act_swiglu.evaluate("ratio_unfused", M=3, N=5) == Fraction(5, 3)
    assert ex.silu_and_mul(3, 5, 2)["ratio_unfused"] == Fraction(5, 3)


# ------------------------------------------------------------------------------------- brute force
def brute_norm(Mv, Nv, Bv, residual):
    """Program by program: the weight once, then per row the passes of vLLM's kernel."""
    reads = writes = 0
    for i0 in range(0, Mv, Bv):
        rows = min(Bv, Mv - i0)
        reads += Nv                                  # weight
        for _ in range(rows):
            reads += (2 if residual else 1) * Nv     # pass 1: x (and residual)
            writes += Nv if residual else 0          # pass 1: residual stored
            reads += Nv                              # pass 2
            writes += Nv
    return reads, writes


@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 12))
@example(7, 5, 3)
@example(1, 1, 1)
@example(12, 3, 12)
@settings(max_examples=80, deadline=None)
def test_norm_executors_are_the_brute_force(Mv, Nv, Bv):
    r = ex.rms_norm(Mv, Nv, Bv)
    assert (r["reads"], r["writes"]) == brute_norm(Mv, Nv, Bv, False)
    assert r["ops"] == Mv * (4 * Nv + 2) and r["rsqrts"] == Mv
    f = ex.fused_add_rms_norm(Mv, Nv, Bv)
    assert (f["reads"], f["writes"]) == brute_norm(Mv, Nv, Bv, True)
    assert f["ops"] == Mv * (5 * Nv + 2)


def test_norm_formula_by_hand():
    w = sp.ceiling(M / B_R) * N
    assert sp.expand(fm.norm_rms["reads"] - (2 * M * N + w)) == 0
    t = sp.Symbol("t", integer=True, positive=True)
    div = fm.norm_rms.divisible()["reads"]
    assert sp.simplify(div.subs(M, B_R * t) - (2 * B_R * t * N + t * N)) == 0


def test_ops_by_hand():
    # softmax per row: N - 1 comparisons, N subtracts, N exps, N - 1 adds, N divides
    assert ex.softmax_naive(3, 10, 2)["ops"] == 3 * (5 * 10 - 2) == ex.softmax_fused(3, 10, 1)["ops"]
    assert ex.softmax_naive(3, 10, 2)["exps"] == 30
    # SwiGLU per element: exp, add, divide (silu), multiply
    assert ex.silu_and_mul(4, 6, 3)["ops"] == 4 * 4 * 6
    # RoPE per pair: 4 multiplies, 2 adds; per token the cache row once per head
    r = ex.rotary_embedding(3, 4, 2, 8, 2)
    assert r["ops"] == 3 * (4 + 2) * 4 * 6 and r["reads_cache"] == 3 * (4 + 2) * 8 and r["reads_pos"] == 3


# ------------------------------------------------------------------------------------- real outputs
def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rms(x, w):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + ex.EPS) * w


@pytest.mark.parametrize("Mv,Nv,Bv", [(1, 1, 1), (7, 5, 3), (37, 128, 16), (64, 33, 100)])
def test_real_outputs_are_numpys(Mv, Nv, Bv):
    rng = np.random.default_rng(Mv + Nv)
    x, r, w = rng.standard_normal((Mv, Nv)), rng.standard_normal((Mv, Nv)), rng.standard_normal(Nv)
    for run in (ex.softmax_naive, ex.softmax_fused):
        got = run(Mv, Nv, Bv, real=True, x=x)
        np.testing.assert_allclose(got.out[0], _softmax(x), rtol=1e-12, atol=1e-15)
        assert got.counts == run(Mv, Nv, Bv).counts
    np.testing.assert_allclose(ex.rms_norm(Mv, Nv, Bv, real=True, x=x, w=w).out[0], _rms(x, w), rtol=1e-12)
    out, res = ex.fused_add_rms_norm(Mv, Nv, Bv, real=True, x=x, residual=r, w=w).out
    np.testing.assert_allclose(res, x + r, rtol=1e-15)
    np.testing.assert_allclose(out, _rms(x + r, w), rtol=1e-12)
    y2, res2 = ex.add_then_rms_norm(Mv, Nv, Bv, real=True, x=x, residual=r, w=w).out
    np.testing.assert_allclose(y2, out, rtol=1e-12)
    g = rng.standard_normal((Mv, 2 * Nv))
    silu = g[:, :Nv] / (1 + np.exp(-g[:, :Nv]))
    np.testing.assert_allclose(ex.silu_and_mul(Mv, Nv, Bv, real=True, x=g).out[0], silu * g[:, Nv:], rtol=1e-12)
    np.testing.assert_allclose(ex.silu_then_mul(Mv, Nv, Bv, real=True, x=g).out[0], silu * g[:, Nv:], rtol=1e-12)


def _hf_rope(x, pos, d, base=10000.0):
    """Hugging Face's form: cos, sin of cat(freqs, freqs), x * cos + rotate_half(x) * sin."""
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = np.outer(pos, inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]
    half = d // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rot * sin


@pytest.mark.parametrize("Tv,Hv,Hk,dv,Bv", [(1, 1, 1, 2, 1), (7, 4, 2, 16, 3), (20, 8, 8, 64, 8)])
def test_rope_is_hugging_faces_rotate_half(Tv, Hv, Hk, dv, Bv):
    rng = np.random.default_rng(Tv)
    q, k = rng.standard_normal((Tv, Hv, dv)), rng.standard_normal((Tv, Hk, dv))
    pos = rng.integers(0, 1000, Tv)
    run = ex.rotary_embedding(Tv, Hv, Hk, dv, Bv, real=True, q=q, k=k, positions=pos)
    np.testing.assert_allclose(run.out[0], _hf_rope(q, pos, dv), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run.out[1], _hf_rope(k, pos, dv), rtol=1e-12, atol=1e-12)
    assert run.counts == ex.rotary_embedding(Tv, Hv, Hk, dv, Bv).counts


def test_beyond_int64():
    n = 10**30
    v = fm.softmax_fused.evaluate(M=n, N=n)
    assert v["reads"] == n * n == ex.softmax_fused(n, n, 10**29, unfused=False)["reads"]
    assert fm.norm_rms.evaluate("reads", M=n, N=n, B_R=10**29) == 2 * n * n + 10 * n


# ------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,param", [
    (lambda: fm.rope_rotate_half.evaluate(d=127), "d"),
    (lambda: ex.rotary_embedding(4, 2, 2, 7), "d"),
    (lambda: fm.norm_rms.evaluate(B_R=0), "B_R"),
    (lambda: ex.rms_norm(4, 4, 0), "B_R"),
    (lambda: ex.softmax_naive(0, 4), "M"),
    (lambda: fm.softmax_naive.evaluate(N=0), "N"),
    (lambda: ex.softmax_fused(4, 4, real=True, x=np.zeros((4, 5))), "x"),
    (lambda: ex.silu_and_mul(4, 4, x=np.zeros((4, 8))), "x"),
    (lambda: ex.rms_norm(4, 4, real="no"), "real"),
    (lambda: ex.rotary_embedding(3, 1, 1, 4, real=True, positions=[0, -1, 2]), "positions"),
    (lambda: ex.softmax_naive(10**7, 10**7, 1), "B_R"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param
