"""Local attention (sliding windows, chunks): the executor against brute force written here, its outputs against a
plain NumPy masked softmax, the formulas against closed forms derived by hand and against the causal model.

The oracles are checked first: the masked softmax below against a per-row Python loop, the elementwise rule
against the definitions in the issue, the brute-force block count against a loop over every element.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric import attention_local as ex
from symbolic import registry
from symbolic.models import attention as causal_models
from symbolic.models import attention_local as models


# ----------------------------------------------------------------------------- the oracles, checked
def _sees(kind, arg, p, j):
    """The issue's definitions, literally: a window (W_l, W_r) or a chunk C."""
    if kind == "window":
        W_l, W_r = arg
        return p - W_l <= j <= p + W_r
    return j // arg == p // arg and j <= p       # Python's // floors, as the definition's floor does


def _mask(kind, arg):
    return ex.Window(*arg) if kind == "window" else ex.Chunk(arg)


def _plain_masked(Q, K, V, kind, arg):
    """softmax(Q K^T / sqrt(d)) V with the mask, in plain NumPy; a row that sees nothing gives 0."""
    N, Nk, d = len(Q), len(K), Q.shape[1]
    vis = np.array([[_sees(kind, arg, Nk - N + r, j) for j in range(Nk)] for r in range(N)], dtype=bool)
    S = np.where(vis, Q @ K.T / math.sqrt(d), -np.inf)
    out = np.zeros((N, V.shape[1]))
    for r in range(N):
        if vis[r].any():
            w = np.exp(S[r] - S[r].max())
            out[r] = (w / w.sum()) @ V
    return out, vis


def _loop_attention(Q, K, V, kind, arg):
    N, Nk, d = len(Q), len(K), len(Q[0])
    out = []
    for r in range(N):
        keys = [c for c in range(Nk) if _sees(kind, arg, Nk - N + r, c)]
        if not keys:
            out.append([0.0] * d)
            continue
        s = [sum(Q[r][t] * K[c][t] for t in range(d)) / math.sqrt(d) for c in keys]
        mx = max(s)
        w = [math.exp(x - mx) for x in s]
        out.append([sum(w[a] * V[c][t] for a, c in enumerate(keys)) / sum(w) for t in range(d)])
    return np.array(out)


@pytest.mark.parametrize("N,Nk,kind,arg", [(3, 5, "window", (1, 0)), (6, 2, "window", (0, 0)),
                                           (5, 5, "chunk", 2), (7, 3, "chunk", 2), (4, 9, "window", (20, 3))])
def test_the_plain_masked_softmax_matches_a_loop(N, Nk, kind, arg):
    rng = np.random.default_rng(N * 10 + Nk)
    Q, K, V = rng.standard_normal((N, 3)), rng.standard_normal((Nk, 3)), rng.standard_normal((Nk, 3))
    loop = _loop_attention(Q.tolist(), K.tolist(), V.tolist(), kind, arg)
    np.testing.assert_allclose(_plain_masked(Q, K, V, kind, arg)[0], loop, atol=1e-13)
    np.testing.assert_allclose(ex.reference_local_attention(Q, K, V, _mask(kind, arg))[0], loop, atol=1e-13)


@pytest.mark.parametrize("kind,arg", [("window", (0, 0)), ("window", (3, 1)), ("window", (0, 7)), ("chunk", 1),
                                      ("chunk", 3), ("chunk", 8)])
def test_the_rule_and_its_intervals_are_the_definition(kind, arg):
    mask = _mask(kind, arg)
    for p in range(-12, 20):
        for j in range(0, 20):
            assert bool(ex.visible(mask, p, j)) == _sees(kind, arg, p, j)
    for N, Nk in ((5, 9), (9, 5), (7, 7)):
        D = Nk - N
        for p in range(D, Nk):
            keys = [j for j in range(Nk) if _sees(kind, arg, p, j)]
            assert ex.keys_of_position(mask, p, Nk) == ((keys[0], keys[-1]) if keys else None)
        for j in range(Nk):
            ps = [p for p in range(D, Nk) if _sees(kind, arg, p, j)]
            assert ex.positions_of_key(mask, j, D, Nk) == ((ps[0], ps[-1]) if ps else None)


def brute_force(N, Nk, d, Br, Bc, kind, arg):
    """Forward and backward counts by visiting every element: the visited pairs are the block pairs holding a
    visible element; the rest follows the FlashAttention-2 loops as docs/conventions.md §1 counts them."""
    pairs, vis = set(), 0
    for r in range(N):
        for j in range(Nk):
            if _sees(kind, arg, Nk - N + r, j):
                pairs.add((r // Br, j // Bc))
                vis += 1

    def h(i):
        return min(Br, N - i * Br)

    def w(c):
        return min(Bc, Nk - c * Bc)
    qb, kb = {i for i, _ in pairs}, {c for _, c in pairs}
    work = sum(h(i) * w(c) for i, c in pairs)
    rows = sum(h(i) for i, _ in pairs)
    fwd = {"reads": d * sum(h(i) for i in qb) + 2 * d * sum(w(c) for _, c in pairs), "writes": N * d + N,
           "flops": 4 * d * work, "flops_visible": 4 * d * vis, "blocks": len(pairs)}
    bwd = {"reads": 2 * N * d + 2 * d * sum(w(c) for c in kb) + (3 * d + 2) * rows,
           "writes": N + N * d + d * rows + 2 * d * Nk, "flops": 10 * d * work, "flops_visible": 10 * d * vis,
           "blocks": len(pairs)}
    return fwd, bwd


def test_brute_force_by_hand():
    """N = N_k = 4, d = 1, B_r = B_c = 2, window (1, 0): rows 0..3 see {0}, {0,1}, {1,2}, {2,3}: 7 elements in
    the pairs (0,0), (1,0), (1,1): Q 4, K and V 2*2*3 = 12; flops 4 * 4 * 3 = 48; backward K, V 2*4, rows 2*3."""
    fwd, bwd = brute_force(4, 4, 1, 2, 2, "window", (1, 0))
    assert fwd == {"reads": 4 + 12, "writes": 8, "flops": 48, "flops_visible": 28, "blocks": 3}
    assert bwd == {"reads": 8 + 8 + 5 * 6, "writes": 4 + 4 + 6 + 8, "flops": 120, "flops_visible": 70, "blocks": 3}


# ----------------------------------------------------------------------------- the executor's counts
_SIZES = st.tuples(st.integers(1, 24), st.integers(1, 24), st.integers(1, 3), st.integers(1, 9), st.integers(1, 9))


@settings(max_examples=60, deadline=None)
@given(_SIZES, st.integers(0, 30), st.integers(0, 30))
@example((5, 5, 1, 2, 2), 0, 0)          # W = 1: the diagonal only
@example((4, 9, 2, 3, 2), 30, 0)         # a window wider than N_k: the causal mask
@example((9, 4, 2, 2, 3), 1, 0)          # N_k < N: the first rows see nothing
@example((9, 4, 2, 2, 3), 0, 30)         # ... unless the window reaches right
@example((7, 11, 1, 3, 5), 4, 2)         # nothing divides
def test_window_counts_are_the_brute_force(sizes, W_l, W_r):
    N, Nk, d, Br, Bc = sizes
    fwd, bwd = brute_force(N, Nk, d, Br, Bc, "window", (W_l, W_r))
    assert ex.count_local_forward(N, Nk, d, Br, Bc, ex.Window(W_l, W_r)).counts() == fwd
    assert ex.count_local_backward(N, Nk, d, Br, Bc, ex.Window(W_l, W_r)).counts() == bwd


@settings(max_examples=60, deadline=None)
@given(_SIZES, st.integers(1, 30))
@example((5, 5, 1, 2, 2), 1)             # C = 1: the diagonal only
@example((7, 10, 1, 3, 4), 3)            # C divides neither N_k nor the blocks
@example((9, 4, 2, 2, 3), 2)             # N_k < N
@example((6, 6, 1, 2, 2), 30)            # a chunk longer than the sequence: the causal mask
def test_chunk_counts_are_the_brute_force(sizes, C):
    N, Nk, d, Br, Bc = sizes
    fwd, bwd = brute_force(N, Nk, d, Br, Bc, "chunk", C)
    assert ex.count_local_forward(N, Nk, d, Br, Bc, ex.Chunk(C)).counts() == fwd
    assert ex.count_local_backward(N, Nk, d, Br, Bc, ex.Chunk(C)).counts() == bwd


@settings(max_examples=80, deadline=None)
@given(st.integers(-20, 40), st.integers(0, 25), st.integers(0, 40), st.integers(0, 25),
       st.sampled_from([("window", (0, 0)), ("window", (2, 1)), ("window", (7, 0)), ("window", (0, 9)),
                        ("chunk", 1), ("chunk", 4), ("chunk", 7)]))
def test_visible_in_a_tile_by_arithmetic_is_the_count(a, rows, c0, cols, mask):
    mask = _mask(*mask)
    b, c1 = a + rows - 1, c0 + cols - 1
    want = sum(1 for p in range(a, b + 1) for j in range(c0, c1 + 1) if ex.visible(mask, p, j))
    assert ex.visible_in_tile(mask, a, b, c0, c1) == want


# ----------------------------------------------------------------------------- real mode
@pytest.mark.parametrize("N,Nk,Br,Bc,kind,arg", [
    (37, 50, 8, 6, "window", (5, 3)), (50, 37, 8, 6, "window", (7, 0)), (40, 41, 16, 16, "window", (0, 0)),
    (64, 64, 8, 8, "window", (1000, 0)), (50, 37, 8, 6, "chunk", 8), (64, 64, 16, 8, "chunk", 10),
    (30, 70, 7, 9, "chunk", 13)])
def test_real_mode_is_the_plain_masked_softmax(N, Nk, Br, Bc, kind, arg):
    """Within 1e-12 in float64; a row that sees nothing gives O = 0 and L = -inf; the counts are count-only's."""
    rng = np.random.default_rng(N + 100 * Nk)
    d = 8
    Q, K, V = rng.standard_normal((N, d)), rng.standard_normal((Nk, d)), rng.standard_normal((Nk, d))
    mask = _mask(kind, arg)
    run = ex.local_forward(Q, K, V, Br, Bc, mask)
    O, L = run.out
    want, vis = _plain_masked(Q, K, V, kind, arg)
    assert np.max(np.abs(O - want)) < 1e-12
    assert np.all(np.isneginf(L[~vis.any(axis=1)])) and np.all(np.isfinite(L[vis.any(axis=1)]))
    assert run.visible == int(vis.sum())
    assert run.counts() == ex.count_local_forward(N, Nk, d, Br, Bc, mask).counts()


@pytest.mark.parametrize("N,Nk,kind,arg", [(37, 50, "window", (5, 3)), (50, 37, "window", (7, 0)),
                                           (50, 37, "chunk", 8), (33, 33, "chunk", 5)])
def test_real_backward_is_the_textbook_gradient(N, Nk, kind, arg):
    """Against dS = P (dP - rowsum(P dP)) on the plain masked P, written here; counts equal count-only's."""
    rng = np.random.default_rng(7 * N + Nk)
    d = 6
    Q, K, V, dO = (rng.standard_normal(s) for s in ((N, d), (Nk, d), (Nk, d), (N, d)))
    mask = _mask(kind, arg)
    O, L = ex.local_forward(Q, K, V, 8, 6, mask).out
    run = ex.local_backward(Q, K, V, O, dO, L, 8, 6, mask)
    _, vis = _plain_masked(Q, K, V, kind, arg)
    S = np.where(vis, Q @ K.T / math.sqrt(d), -np.inf)
    mx = np.where(vis.any(axis=1, keepdims=True), S.max(axis=1, keepdims=True), 0.0)
    P = np.exp(S - mx)
    P /= np.where(P.sum(axis=1, keepdims=True) == 0, 1.0, P.sum(axis=1, keepdims=True))
    dP = dO @ V.T
    dS = P * (dP - (P * dP).sum(axis=1, keepdims=True))
    for got, want in zip(run.out, (dS @ K / math.sqrt(d), dS.T @ Q / math.sqrt(d), P.T @ dO)):
        assert np.max(np.abs(got - want)) < 1e-12
    assert run.counts() == ex.count_local_backward(N, Nk, d, 8, 6, mask).counts()


def test_count_only_reaches_a_billion():
    """N = N_k = 10**9 in blocks of 10**6 (1,000 key blocks), a 4096-key causal window: by hand every query block
    but the first sees its own and the previous key block (4095 < 10**6): 1,999 pairs; K, V 2 d B (1999)."""
    n, b, d = 10**9, 10**6, 64
    run = ex.count_local_forward(n, n, d, b, b, ex.Window(4095, 0))
    assert run.blocks == 2 * 1000 - 1
    assert run.tally.reads == n * d + 2 * d * b * 1999
    assert run.visible == n * 4096 - 4095 * 4096 // 2


# ----------------------------------------------------------------------------- the formulas
_WINDOW_MODELS = (models.fa2_fwd_window, models.flash_bwd_window)
_CHUNK_MODELS = (models.fa2_fwd_chunked, models.flash_bwd_chunked)


def _strip(values):
    return {k: v for k, v in values.items() if k != "total"}


@settings(max_examples=40, deadline=None)
@given(_SIZES, st.integers(0, 40), st.integers(0, 40))
@example((1, 1, 1, 1, 1), 0, 0)
@example((9, 4, 2, 2, 3), 1, 0)
@example((4, 9, 2, 3, 2), 30, 0)
def test_window_formulas_are_the_brute_force(sizes, W_l, W_r):
    N, Nk, d, Br, Bc = sizes
    fwd, bwd = brute_force(N, Nk, d, Br, Bc, "window", (W_l, W_r))
    pt = dict(N=N, N_k=Nk, d=d, B_r=Br, B_c=Bc, W_l=W_l, W_r=W_r)
    assert _strip(models.fa2_fwd_window.evaluate(**pt)) == fwd
    assert _strip(models.flash_bwd_window.evaluate(**pt)) == bwd


@settings(max_examples=40, deadline=None)
@given(_SIZES, st.integers(1, 40))
@example((1, 1, 1, 1, 1), 1)
@example((9, 4, 2, 2, 3), 2)
@example((7, 10, 1, 3, 4), 3)
def test_chunk_formulas_are_the_brute_force(sizes, C):
    N, Nk, d, Br, Bc = sizes
    fwd, bwd = brute_force(N, Nk, d, Br, Bc, "chunk", C)
    pt = dict(N=N, N_k=Nk, d=d, B_r=Br, B_c=Bc, C=C)
    assert _strip(models.fa2_fwd_chunked.evaluate(**pt)) == fwd
    assert _strip(models.flash_bwd_chunked.evaluate(**pt)) == bwd


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 60), st.integers(0, 40), st.integers(1, 24), st.integers(1, 24), st.integers(0, 9))
@example(1, 0, 1, 1, 0)
@example(7, 0, 3, 5, 0)
@example(16, 16, 4, 4, 3)
def test_a_window_wider_than_the_keys_is_the_causal_model(N, extra, Br, Bc, beyond):
    """W_l >= N_k with W_r = 0: exactly attention.fa2.fwd.causal and attention.flash.bwd.causal (N_k >= N)."""
    pt = dict(N=N, N_k=N + extra, d=3, B_r=Br, B_c=Bc)
    for local, causal in ((models.fa2_fwd_window, causal_models.fa2_fwd_causal),
                          (models.flash_bwd_window, causal_models.flash_bwd_causal)):
        want = causal.evaluate(**pt)
        got = local.evaluate(**pt, W_l=N + extra + beyond, W_r=0)
        assert {k: got[k] for k in want} == want


def test_divisible_forms_are_the_hand_derivation():
    """B_c = B_r = B divides N = N_k and the windows: query block i sees key blocks max(0, i - a) .. min(T - 1,
    i + b), so V = T (a + b + 1) - a(a + 1)/2 - b(b + 1)/2 (T = N/B, a = W_l/B, b = W_r/B); a chunk of C = c B is
    a causal triangle of c (c + 1)/2 pairs, N/C of them."""
    N, d, B = causal_models.N, causal_models.d, causal_models.B_r
    W_l, W_r, C = models.W_l, models.W_r, models.C
    T, a, b = N / B, W_l / B, W_r / B
    V = T * (a + b + 1) - a * (a + 1) / 2 - b * (b + 1) / 2
    assert sp.simplify(models.fa2_fwd_window.divisible()["blocks"] - V) == 0
    d_v = models.d_v                       # V as wide as K here (its default); d_v != d: test_attention_dv.py
    assert sp.simplify(models.fa2_fwd_window.divisible()["reads"].subs(d_v, d) - (N * d + 2 * d * B * V)) == 0
    Vc = (N / C) * (C / B) * (C / B + 1) / 2
    assert sp.simplify(models.fa2_fwd_chunked.divisible()["flops"] - 4 * d * B**2 * Vc) == 0
    # and the divisible forms are the exact counts at divisible points
    for ref, extra in ((models.fa2_fwd_window, dict(W_l=256, W_r=64)), (models.flash_bwd_window, dict(W_l=0, W_r=128)),
                       (models.fa2_fwd_chunked, dict(C=512)), (models.flash_bwd_chunked, dict(C=256))):
        pt = dict(N=2048, N_k=2048, d=8, B_r=64, B_c=64, **extra)
        exact = ref.evaluate(**pt)
        subs = {ref.param(k): v for k, v in pt.items() if k in {p.name for p in ref.params}}
        subs[models.d_v] = pt["d"]
        for q, form in ref.divisible().items():
            assert form.subs(subs) == exact[q], (ref.name, q)


def test_leading_terms_show_the_window():
    """FLOPs Theta(N W d), traffic Theta(N d (W + B)/B) over W_l, W_r <= N: total ~ 2 N d (W_l + W_r)/B_r + 4 N d."""
    N, d, B = causal_models.N, causal_models.d, causal_models.B_r
    W_l, W_r, C = models.W_l, models.W_r, models.C
    m = models.fa2_fwd_window.model
    d_v = models.d_v                       # the forward's V width: at its default, d
    assert sp.simplify(m.leading() - ((d + d_v) * N * (W_l + W_r) / B + 2 * N * (d + d_v))) == 0
    assert sp.simplify(m.leading().subs(d_v, d) - (2 * N * d * (W_l + W_r) / B + 4 * N * d)) == 0
    assert sp.simplify(m.theta() - (N * (d + d_v) + N * (d + d_v) * W_l / B + N * (d + d_v) * W_r / B)) == 0
    assert sp.simplify(models.fa2_fwd_chunked.model.leading() - C * N * d / B) == 0
    text = " ".join(str(n) for n in m.notes)
    assert "flops_visible ~ 2*N*W_l*d + 2*N*W_l*d_v + 2*N*W_r*d + 2*N*W_r*d_v" in text


def test_exact_at_ten_to_the_thirty():
    """N = N_k = 10**30 (B = 128 divides it, and divides the windows and the chunk): the hand forms above; and a
    point nothing divides against the executor's count (ten key blocks of about 10**29)."""
    n, B, d = 10**30, 128, 64
    T = n // B
    a, b = 4096 // B, 0
    V = T * (a + b + 1) - a * (a + 1) // 2
    got = models.fa2_fwd_window.evaluate(N=n, N_k=n, d=d, B_r=B, B_c=B, W_l=4096, W_r=0)
    assert got["blocks"] == V and got["reads"] == n * d + 2 * d * B * V
    C = 8192
    assert models.fa2_fwd_chunked.evaluate("blocks", N=n, N_k=n, d=d, B_r=B, B_c=B, C=C) == \
        (n // C) * (C // B) * (C // B + 1) // 2
    pt = dict(N=n + 3, N_k=n + 10**29 + 7, d=d, B_r=10**29 + 1, B_c=10**29 + 3)
    for ref, mask, extra in ((models.fa2_fwd_window, ex.Window(3 * 10**29 + 5, 17), dict(W_l=3 * 10**29 + 5, W_r=17)),
                             (models.flash_bwd_chunked, ex.Chunk(2 * 10**29 + 11), dict(C=2 * 10**29 + 11))):
        count = ex.count_local_forward if ".fwd." in ref.name else ex.count_local_backward
        run = count(pt["N"], pt["N_k"], d, pt["B_r"], pt["B_c"], mask)
        assert _strip(ref.evaluate(**pt, **extra)) == run.counts()


# ----------------------------------------------------------------------------- the floor of a floor
@settings(max_examples=300, deadline=None)
@given(st.integers(0, 40), st.integers(0, 30), st.integers(0, 50), st.integers(1, 30), st.integers(0, 60),
       st.integers(-80, 80), st.integers(1, 40))
@example(10, 3, 0, 8, 8, 0, 3)      # C floor(x/C)/B with C = 8, B = 3
@example(7, 5, 4, 6, 6, -20, 4)     # a negative offset
@example(9, 2, 1, 7, 5, 3, 7)       # slope above one half: the complement
def test_nested_floor_sum_is_the_loop(n, a, c, g, alpha, delta, b):
    want = sum((alpha * ((a * t + c) // g) + delta) // b for t in range(n))
    assert models.nested_floor_sum(n, a, c, g, alpha, delta, b) == want


def test_nested_floor_sum_beyond_its_budget_is_refused_naming_C():
    with pytest.raises(BadInput) as exc:
        models.nested_floor_sum(10, 3, 0, 10**9 + 7, 10**9 + 7, 0, 2 * 10**5 + 3)
    assert exc.value.param == "C"


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("ref,point,param", [
    (models.fa2_fwd_window, dict(W_l=-1), "W_l"), (models.flash_bwd_window, dict(W_r=-3), "W_r"),
    (models.fa2_fwd_chunked, dict(C=0), "C"), (models.flash_bwd_chunked, dict(C=-2), "C"),
])
def test_bad_windows_and_chunks_name_the_parameter(ref, point, param):
    with pytest.raises(BadInput) as exc:
        ref.evaluate(**point)
    assert exc.value.param == param


@pytest.mark.parametrize("call,param", [
    (lambda: ex.window(-1, 0), "W_l"), (lambda: ex.window(0, -1), "W_r"), (lambda: ex.chunk(0), "C"),
    (lambda: ex.count_local_forward(8, 8, 2, 2, 2, ex.Window(-1, 0)), "W_l"),
    (lambda: ex.count_local_backward(8, 8, 2, 2, 2, ex.Chunk(0)), "C"),
    (lambda: ex.count_local_forward(8, 8, 2, 2, 2, (1, 0)), "mask"),
    (lambda: ex.count_local_forward(10**9, 10**9, 2, 1, 1, ex.Window(1, 0)), "Bc"),
    (lambda: ex.local_forward(np.ones((64, 2)), np.ones((64, 2)), np.ones((64, 2)), 8, 8, ex.Window(64, 0),
                              max_elements=100), "N"),
])
def test_executor_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as exc:
        call()
    assert exc.value.param == param


def test_the_command_line_refuses_a_negative_window_in_one_line(capsys):
    from tilebound.cli import main
    rc = main(["show", "attention.fa2.fwd.window", "--at", "W_l=-1"])
    err = capsys.readouterr().err
    assert rc == 2 and "W_l" in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- the listing, by hand
def test_the_window_listing_by_hand():
    """N = N_k = 5, d = 1, B_r = B_c = 2, window (1, 0): query block 1 (rows 0, 1) sees key block 1; block 2
    (rows 2, 3: keys 1..3) key blocks 1, 2; block 3 (row 4: keys 3, 4) key blocks 2, 3.  Q 5; K, V 2 (2 + 2 + 2 +
    2 + 1) = 18; O, L 5 + 5."""
    from symbolic.listings import listing_for
    pt = dict(N=5, N_k=5, d=1, B_r=2, B_c=2, W_l=1, W_r=0)
    assert listing_for("attention.fa2.fwd.window").count(pt) == {"reads": 5 + 18, "writes": 10}
    assert registry.get("attention.fa2.fwd.window").evaluate("reads", **pt) == 23


# ----------------------------------------------------------------------------- what is printed is what is counted
@pytest.mark.parametrize("ref", [models.fa2_fwd_window, models.flash_bwd_window, models.fa2_fwd_chunked,
                                 models.flash_bwd_chunked, models.fa3_fwd_window])
def test_the_printed_sums_are_the_closed_forms(ref):
    """Each block count prints as the sum over the blocks it stands for (ShownSum's second argument) and evaluates
    by its floor sums (the first): adding the printed sum up term by term gives the same number (FA3's tile
    columns, printed as kBlockM, kBlockN, line, are the tile table's own test's)."""
    from symbolic.evaluate import compile_exact
    m = ref.model
    names = [p.name for p in m.params]
    points = [dict(N=13, N_k=29, d=2, B_r=4, B_c=3), dict(N=29, N_k=13, d=3, B_r=5, B_c=7),
              dict(N=40, N_k=40, d=1, B_r=6, B_c=6)]
    extra = ({"W_l": 5, "W_r": 2} if "W_l" in names else {"C": 7} if "C" in names else {})
    for pt in points:
        pt = {k: v for k, v in {**pt, **extra, "e": 2, "W_l": 5, "W_r": 2}.items() if k in names}
        if "e" in names:
            pt["d"] = 64
        for q, expr in m.all_quantities.items():
            shown = [x for x in sp.preorder_traversal(expr) if isinstance(x, models.ShownSum) and x.args[1].has(sp.Sum)]
            for node in shown:
                printed = compile_exact(node.args[1], m.params)(**m.check_point(pt))
                assert printed == compile_exact(node.args[0], m.params)(**m.check_point(pt)), (ref.name, q, pt)
