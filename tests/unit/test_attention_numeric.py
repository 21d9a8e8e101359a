"""The attention executors: outputs against an independent oracle, counts against a brute force.

The oracle (``reference_attention``) is itself checked against a third source first: a per-row,
per-element loop in plain Python (habit 8 of STYLE.md).
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric import attention as ex


# ----------------------------------------------------------------------------- the oracle, checked
def _loop_attention(Q, K, V, causal):
    N, Nk, d = len(Q), len(K), len(Q[0])
    out = []
    for r in range(N):
        keys = [c for c in range(Nk) if not causal or c <= Nk - N + r]
        s = [sum(Q[r][t] * K[c][t] for t in range(d)) / math.sqrt(d) for c in keys]
        mx = max(s)
        w = [math.exp(x - mx) for x in s]
        z = sum(w)
        out.append([sum(w[a] * V[c][t] for a, c in enumerate(keys)) / z for t in range(d)])
    return np.array(out)


@pytest.mark.parametrize("N,Nk,d,causal", [(1, 1, 1, False), (3, 5, 2, True), (4, 4, 3, True), (6, 2, 4, False)])
def test_oracle_matches_loop(N, Nk, d, causal):
    rng = np.random.default_rng(N * 100 + Nk)
    Q, K, V = rng.standard_normal((N, d)), rng.standard_normal((Nk, d)), rng.standard_normal((Nk, d))
    O, _ = ex.reference_attention(Q, K, V, causal)
    np.testing.assert_allclose(O, _loop_attention(Q.tolist(), K.tolist(), V.tolist(), causal), atol=1e-13)


def test_oracle_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    N, Nk, d = 4, 6, 3
    Q, K, V, dO = (rng.standard_normal(s) for s in ((N, d), (Nk, d), (Nk, d), (N, d)))
    grads = ex.reference_attention_grads(Q, K, V, dO, causal=True)
    h = 1e-6
    for which, X in enumerate((Q, K, V)):
        num = np.zeros_like(X)
        for idx in np.ndindex(X.shape):
            Xp, Xm = X.copy(), X.copy()
            Xp[idx] += h
            Xm[idx] -= h
            args_p = [Q, K, V]
            args_m = [Q, K, V]
            args_p[which], args_m[which] = Xp, Xm
            fp = (ex.reference_attention(*args_p, causal=True)[0] * dO).sum()
            fm = (ex.reference_attention(*args_m, causal=True)[0] * dO).sum()
            num[idx] = (fp - fm) / (2 * h)
        np.testing.assert_allclose(grads[which], num, atol=1e-7)


# ----------------------------------------------------------------------------- outputs
shapes = st.tuples(st.integers(1, 40), st.integers(0, 40), st.integers(1, 12),
                   st.integers(1, 48), st.integers(1, 48), st.booleans())


@settings(max_examples=60, deadline=None)
@given(shapes)
@example((1, 999, 64, 64, 128, True))     # decode against a cache (N_k = 1000)
@example((1, 0, 1, 1, 1, False))          # all sizes 1
@example((7, 0, 3, 16, 32, True))         # blocks larger than the sizes
@example((33, 0, 8, 16, 16, True))        # the causal diagonal crosses blocks
def test_flash_equals_plain_attention(s):
    N, extra, d, Br, Bc, causal = s
    Nk = N + extra
    rng = np.random.default_rng(N * 7919 + Nk)
    Q, K, V, dO = (rng.standard_normal(x) for x in ((N, d), (Nk, d), (Nk, d), (N, d)))
    O_ref, _ = ex.reference_attention(Q, K, V, causal)
    g_ref = ex.reference_attention_grads(Q, K, V, dO, causal)
    for order in ex.ORDERS:
        O, L, _ = ex.flash_forward(Q, K, V, Br, Bc, causal=causal, order=order)
        assert np.abs(O - O_ref).max() <= 1e-12
        grads = ex.flash_backward(Q, K, V, O, dO, L, Br, Bc, causal=causal)[:3]
        for g, r in zip(grads, g_ref):
            assert np.abs(g - r).max() <= 1e-12
    O_s, P, _ = ex.standard_forward(Q, K, V, causal)
    assert np.abs(O_s - O_ref).max() <= 1e-12
    if not causal:
        for g, r in zip(ex.standard_backward(Q, K, V, P, dO)[:3], g_ref):
            assert np.abs(g - r).max() <= 1e-12


# ----------------------------------------------------------------------------- counts by brute force
def _brute_force_counts(kind, N, Nk, d, Br, Bc, causal):
    """Counts by the conventions of docs/conventions.md §1 with block visibility decided element by element."""
    Tr, Tc = -(-N // Br), -(-Nk // Bc)
    rows = [min(Br, N - i * Br) for i in range(Tr)]
    cols = [min(Bc, Nk - j * Bc) for j in range(Tc)]

    def vis(i, j):
        if not causal:
            return True
        return any(c <= Nk - N + r for r in range(i * Br, i * Br + rows[i]) for c in range(j * Bc, j * Bc + cols[j]))
    pairs = [(i, j) for i in range(Tr) for j in range(Tc) if vis(i, j)]
    flops_per = 4 if kind != "bwd" else 10
    flops = sum(flops_per * rows[i] * cols[j] * d for i, j in pairs)
    if kind == "fa1":
        reads = 2 * d * Nk + sum((2 * d + 2) * rows[i] for i, j in pairs)
        writes = N * d + 2 * N + sum((d + 2) * rows[i] for i, j in pairs)
    elif kind == "fa2":
        reads = N * d + sum(2 * d * cols[j] for i, j in pairs)
        writes = N * d + N
    else:
        reads = 2 * N * d + 2 * d * Nk + sum((3 * d + 2) * rows[i] for i, j in pairs)
        writes = N + N * d + sum(d * rows[i] for i, j in pairs) + 2 * Nk * d
    return reads, writes, flops


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 30), st.integers(0, 30), st.integers(1, 6), st.integers(1, 35), st.integers(1, 35), st.booleans())
@example(1, 0, 1, 1, 1, True)
@example(10, 5, 2, 3, 4, True)
def test_counts_match_brute_force(N, extra, d, Br, Bc, causal):
    Nk = N + extra
    for kind in ("fa1", "fa2", "bwd"):
        if kind == "bwd":
            t = ex.count_flash_backward(N, Nk, d, Br, Bc, causal)
        else:
            t = ex.count_flash_forward(N, Nk, d, Br, Bc, causal, order=kind)
        assert (t.reads, t.writes, t.flops) == _brute_force_counts(kind, N, Nk, d, Br, Bc, causal), kind


def test_standard_counts_match_reference_text():
    # docs/conventions.md §1.1-1.2 (FlashAttention, arXiv 2205.14135, Algorithms 0 and 3), typed from the text
    N, Nk, d = 37, 53, 11
    f = ex.count_standard_forward(N, Nk, d)
    assert (f.reads, f.writes, f.flops) == (N * d + Nk * d + 2 * N * Nk + Nk * d, 2 * N * Nk + N * d, 4 * N * Nk * d)
    b = ex.count_standard_backward(N, Nk, d)
    assert (b.reads, b.writes, b.flops) == (5 * N * Nk + 3 * N * d + 2 * Nk * d, 2 * N * Nk + 2 * Nk * d + N * d,
                                            8 * N * Nk * d)


@pytest.mark.parametrize("N,Nk,d,Br,Bc,causal,order", [
    (50, 70, 8, 16, 9, True, "fa1"), (50, 70, 8, 16, 9, True, "fa2"), (64, 64, 4, 64, 64, False, "fa2"),
    (3, 100, 5, 8, 7, False, "fa1")])
def test_real_and_count_only_modes_agree(N, Nk, d, Br, Bc, causal, order):
    rng = np.random.default_rng(0)
    Q, K, V, dO = (rng.standard_normal(s) for s in ((N, d), (Nk, d), (Nk, d), (N, d)))
    O, L, t_real = ex.flash_forward(Q, K, V, Br, Bc, causal, order)
    t_count = ex.count_flash_forward(N, Nk, d, Br, Bc, causal, order)
    assert (t_real.reads, t_real.writes, t_real.flops, t_real.by_array) == \
        (t_count.reads, t_count.writes, t_count.flops, t_count.by_array)
    b_real = ex.flash_backward(Q, K, V, O, dO, L, Br, Bc, causal).tally
    b_count = ex.count_flash_backward(N, Nk, d, Br, Bc, causal)
    assert (b_real.reads, b_real.writes, b_real.flops) == (b_count.reads, b_count.writes, b_count.flops)


def test_bytes_follow_dtype():
    Q = np.ones((8, 4), dtype=np.float32)
    t = ex.flash_forward(Q, Q, Q, 4, 4).tally
    assert t.bytes == 8 * t.total       # executors compute in float64: 8 bytes an element


def test_counts_are_python_ints_at_scale():
    t = ex.count_standard_forward(3 * 10**5, 3 * 10**5, 128)
    assert type(t.reads) is int and t.reads == 3 * 10**5 * 128 * 3 + 2 * (3 * 10**5) ** 2


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,param", [
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 3)), 2, 2), "K"),
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((5, 2)), 2, 2), "V"),
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), 0, 2), "Br"),
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), 2, -1), "Bc"),
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), 2, 2, order="fa3"), "order"),
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((2, 2)), np.ones((2, 2)), 2, 2, causal=True), "Nk"),
    (lambda: ex.count_flash_forward(0, 4, 2, 2, 2), "N"),
    (lambda: ex.count_flash_backward(4, 4, 2, 2.5, 2), "Br"),
    (lambda: ex.standard_backward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((3, 4)), np.ones((4, 2))), "P"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput, match=rf"^{param}:") as err:
        call()
    assert err.value.param == param


_C = np.ones((4, 2)) + 1j          # a complex array would lose its imaginary part with only a warning
_OBJ = np.ones((4, 2), dtype=object)


@pytest.mark.parametrize("call,param", [
    (lambda: ex.flash_forward(_C, np.ones((4, 2)), np.ones((4, 2)), 2, 2), "Q"),
    (lambda: ex.flash_forward(np.ones((4, 2)), _OBJ, np.ones((4, 2)), 2, 2, order="fa1"), "K"),
    (lambda: ex.standard_forward(np.ones((4, 2)), np.ones((4, 2)), _C), "V"),
    (lambda: ex.standard_backward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 4)) + 1j,
                                  np.ones((4, 2))), "P"),
    (lambda: ex.flash_backward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), _OBJ,
                               np.ones(4), 2, 2), "dO"),
    (lambda: ex.reference_attention(np.ones((4, 2), dtype=bool), np.ones((4, 2)), np.ones((4, 2))), "Q"),
    (lambda: ex.count_flash_forward(4, 4, 2, 1e30, 2), "Br"),     # not exact as a float
    (lambda: ex.count_standard_forward(4, True, 2), "Nk"),
])
def test_complex_object_and_inexact_inputs_are_refused(call, param):
    with pytest.raises(BadInput, match=rf"^{param}:") as err:
        call()
    assert err.value.param == param


def test_integral_floats_are_the_integers():
    # the one positive-integer rule (base.validate.integer): 256.0 is 256, as in Model.evaluate
    a = ex.count_flash_forward(256.0, 256, 64.0, 64, np.float64(32.0), order="fa1")
    b = ex.count_flash_forward(256, 256, 64, 64, 32, order="fa1")
    assert (a.reads, a.writes, a.flops) == (b.reads, b.writes, b.flops)
