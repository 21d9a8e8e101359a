"""The value width ``d_v`` of the FlashAttention-2 forwards and FlashAttention-3's models: counts derived by hand
here (a small point walked block by block, and N = 10**30), the executors' outputs against a one-shot softmax, FA3's
tile row for DeepSeek-V3's 192/128 as hopper/tile_size.h:37 writes it, and ``d_v = d`` when a point leaves it out."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from base.errors import BadInput
from numeric import attention as ex
from numeric import attention_local as lex
from symbolic.model import Model
from symbolic.models import attention_local as local
from symbolic.models.attention import N, d, d_v, fa2_fwd, fa2_fwd_causal, fa2_fwd_paper
from symbolic.params import param


# ----------------------------------------------------------------------------- by hand, small
def test_fa2_forward_by_hand_at_a_small_point():
    # N = 5 query rows, N_k = 7 keys, d = 3, d_v = 2, B_r = 2 (blocks of 2, 2, 1 rows), B_c = 4 (4 and 3 keys)
    pt = dict(N=5, N_k=7, d=3, d_v=2, B_r=2, B_c=4)
    # full: Q once (15), K and V for each of 3 query blocks (5 x 7 x 3), O (5 x 2) and L (5)
    assert fa2_fwd.evaluate(**pt) == {"reads": 15 + 5 * 7 * 3, "writes": 10 + 5, "flops": 2 * 5 * 5 * 7,
                                      "total": 120 + 15}
    # causal: rows at positions 2..6; block 0 (rows at 2, 3) sees key block 0 only, blocks 1 and 2 see both:
    # key rows loaded 4 + 7 + 7 = 18, scores computed 2*4 + 2*7 + 1*7 = 29
    assert fa2_fwd_causal.evaluate(**pt) == {"reads": 15 + 5 * 18, "writes": 15, "flops": 2 * 5 * 29,
                                             "total": 105 + 15}
    # the executor walks the same blocks
    t = ex.count_flash_forward(5, 7, 3, 2, 4, causal=True, d_v=2)
    assert (t.reads, t.writes, t.flops) == (105, 15, 290)


def test_fa2_forward_by_hand_at_ten_to_the_thirty():
    # N = N_k = 10**30, B_r = B_c = B = 128 divides it: T = N/B blocks each way, d = 192, d_v = 128
    n, B, dq, dv = 10 ** 30, 128, 192, 128
    T = n // B
    got = fa2_fwd.evaluate(N=n, N_k=n, d=dq, d_v=dv, B_r=B, B_c=B)
    assert got["reads"] == n * dq + (dq + dv) * n * T and got["writes"] == n * dv + n
    assert got["flops"] == 2 * (dq + dv) * n * n
    # causal: key block j meets T - j query blocks: sum_j (T - j) = T (T + 1)/2 blocks of B x B
    got = fa2_fwd_causal.evaluate(N=n, N_k=n, d=dq, d_v=dv, B_r=B, B_c=B)
    assert got["reads"] == n * dq + (dq + dv) * B * T * (T + 1) // 2
    assert got["flops"] == 2 * (dq + dv) * B * B * T * (T + 1) // 2
    assert got["writes"] == n * dv + n
    t = ex.count_flash_forward(n, n, dq, 10 ** 28, 10 ** 28, causal=True, d_v=dv)     # 100 key blocks
    assert (t.reads, t.writes, t.flops) == tuple(fa2_fwd_causal.evaluate(q, N=n, N_k=n, d=dq, d_v=dv, B_r=10 ** 28,
                                                                         B_c=10 ** 28) for q in ("reads", "writes",
                                                                                                 "flops"))


def test_window_forward_by_hand():
    # B_c = B_r = B divides N = N_k, W_l, W_r: V = T (a + b + 1) - a (a + 1)/2 - b (b + 1)/2 pairs of B x B
    n, B, wl, dq, dv = 4096, 128, 1024, 192, 128
    T, a = n // B, wl // B
    V = T * (a + 1) - a * (a + 1) // 2
    got = local.fa2_fwd_window.evaluate(N=n, N_k=n, d=dq, d_v=dv, B_r=B, B_c=B, W_l=wl, W_r=0)
    assert got["blocks"] == V
    assert got["reads"] == n * dq + (dq + dv) * B * V and got["writes"] == n * dv + n
    assert got["flops"] == 2 * (dq + dv) * B * B * V


# ----------------------------------------------------------------------------- the default d_v = d
@pytest.mark.parametrize("ref,pt", [
    (fa2_fwd, dict(N=300, N_k=513, d=96, B_r=64, B_c=100)),
    (fa2_fwd_causal, dict(N=300, N_k=513, d=96, B_r=64, B_c=100)),
    (local.fa2_fwd_window, dict(N=300, N_k=513, d=96, B_r=64, B_c=100, W_l=70, W_r=3)),
    (local.fa3_fwd, dict(N=300, N_k=513, d=96, e=2)),
    (local.fa3_fwd_causal, dict(N=300, N_k=513, d=200, e=1)),
    (local.fa3_fwd_window, dict(N=300, N_k=513, d=64, e=2, W_l=70, W_r=0)),
])
def test_without_d_v_the_point_is_d_v_equal_d(ref, pt):
    assert ref.evaluate(**pt) == ref.evaluate(**pt, d_v=pt["d"])
    assert ref.check_point(pt)["d_v"] == pt["d"]
    assert ref.defaults["d_v"] == ref.defaults["d"]


def test_the_d_only_forms_are_the_d_v_forms_at_d():
    # 4 N N_k d FLOPs of full attention forward (FlashAttention-2 §3.1), N d + N written
    assert sp.simplify(fa2_fwd["flops"].subs(d_v, d) - 4 * N * fa2_fwd.param("N_k") * d) == 0
    assert sp.simplify(fa2_fwd["writes"].subs(d_v, d) - (N * d + N)) == 0
    assert "d_v" not in {p.name for p in fa2_fwd_paper.params}       # the paper's blocks: no value width


def test_default_from_fills_grids_and_refuses_nonsense():
    a, b = param("a", "one"), param("b", "two")
    m = Model("toy.defaults", "toy", {"reads": a + 10 * b}, params=(a, b), defaults={"a": 3, "b": 3},
              default_from={"b": "a"})
    assert m.evaluate("reads", a=2) == 22 and m.evaluate("reads", a=2, b=5) == 52 and m.evaluate("reads") == 33
    assert list(m.evaluate_grid("reads", a=np.array([1, 2, 4]))) == [11, 22, 44]
    with pytest.raises(TypeError):
        Model("toy.bad", "toy", {"reads": a}, params=(a, b), defaults={"a": 3, "b": 4}, default_from={"b": "a"})
    with pytest.raises(TypeError):
        Model("toy.bad", "toy", {"reads": a}, params=(a, b), defaults={"a": 3, "b": 3}, default_from={"b": "c"})


def test_command_line_at_without_d_v(capsys):
    from tilebound.cli import main
    assert main(["show", "attention.fa2.fwd", "--at", "N=4096", "d=128"]) == 0
    plain = capsys.readouterr().out
    assert main(["show", "attention.fa2.fwd", "--at", "N=4096", "d=128", "d_v=128"]) == 0
    assert capsys.readouterr().out == plain
    assert "d_v = 128" in plain


# ----------------------------------------------------------------------------- FA3's tile row for 192 / 128
def test_fa3_tile_row_for_deepseek_v3_prefill():
    # hopper/tile_size.h:37 (Dao-AILab/flash-attention @ 0251105a): headdim <= 192 ->
    #   {128, paged_kv_non_TMA || is_local ? 96 : (headdim_v <= 128 ? 128 : 112), true, true}
    pt = dict(N=4096, N_k=4096, d=192, d_v=128)
    for ref, extra, want in ((local.fa3_fwd, {}, (128, 128, 37)), (local.fa3_fwd_causal, {}, (128, 128, 37)),
                             (local.fa3_fwd_window, dict(W_l=1023, W_r=0), (128, 96, 37)),
                             (local.fa3_fwd_window, dict(W_l=4095, W_r=0), (128, 128, 37))):   # the causal kernel
        v = ref.evaluate(**pt, **extra, e=2)
        assert (v["B_r"], v["B_c"], v["tile_line"]) == want
    assert local.fa3_fwd.evaluate("B_c", **{**pt, "d_v": 192}, e=2) == 112          # headdim_v = 192 > 128
    assert local.fa3_fwd.evaluate("B_c", **pt, e=1) == 160                          # FP8: line 49
    # the counts are FlashAttention-2's at 128 x 128 with V 128 wide
    assert {k: v for k, v in local.fa3_fwd.evaluate(**pt, e=2).items() if k in ("reads", "writes", "flops")} == \
        {k: v for k, v in fa2_fwd.evaluate(**pt, B_r=128, B_c=128).items() if k in ("reads", "writes", "flops")}


@pytest.mark.parametrize("d_,dv_,want", [(64, 512, (64, 64, 19)), (64, 257, (64, 64, 19)), (64, 256, (128, 96, 21)),
                                         (64, 193, (128, 96, 21)), (64, 192, (192, 192, 25)), (48, 64, (192, 192, 25))])
def test_fa3_small_heads_wide_values(d_, dv_, want):
    # hopper/tile_size.h:18-25 on headdim_v rounded up (flash_api.cpp:511-518): 512 -> 64 x 64, 256 -> 128 x 96
    v = local.fa3_fwd.evaluate(N=1000, N_k=1000, d=d_, d_v=dv_, e=2)
    assert (v["B_r"], v["B_c"], v["tile_line"]) == want


@pytest.mark.parametrize("d_,dv_,e_", [(128, 64, 2), (192, 96, 2), (192, 129, 2), (96, 128, 2), (64, 513, 2),
                                       (64, 300, 1)])
def test_fa3_refuses_value_widths_it_does_not_take(d_, dv_, e_):
    with pytest.raises(BadInput) as err:
        local.fa3_fwd.evaluate(N=100, N_k=100, d=d_, d_v=dv_, e=e_)
    assert err.value.param == "d_v"


# ----------------------------------------------------------------------------- real outputs
@pytest.mark.parametrize("order", ["fa1", "fa2"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_forward_with_a_narrow_v_is_attention(order, causal):
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((37, 12)), rng.standard_normal((53, 12)), rng.standard_normal((53, 5))
    out = ex.flash_forward(Q, K, V, 8, 16, causal=causal, order=order)
    S = Q @ K.T / np.sqrt(12)
    if causal:
        S = np.where(np.arange(53)[None, :] <= 16 + np.arange(37)[:, None], S, -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.O, (P / P.sum(axis=1, keepdims=True)) @ V, rtol=0, atol=1e-12)
    assert out.O.shape == (37, 5)
    if order == "fa2":
        t = ex.count_flash_forward(37, 53, 12, 8, 16, causal=causal, d_v=5)
        assert (t.reads, t.writes, t.flops) == (out.tally.reads, out.tally.writes, out.tally.flops)
        assert out.tally.writes == 37 * 5 + 37


def test_local_forward_with_a_wide_v_is_windowed_attention():
    rng = np.random.default_rng(4)
    Q, K, V = rng.standard_normal((40, 6)), rng.standard_normal((40, 6)), rng.standard_normal((40, 11))
    run = lex.local_forward(Q, K, V, 8, 8, lex.Window(9, 0))
    pos = np.arange(40)
    S = np.where((pos[None, :] <= pos[:, None]) & (pos[None, :] >= pos[:, None] - 9), Q @ K.T / np.sqrt(6), -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    np.testing.assert_allclose(run.out[0], (P / P.sum(axis=1, keepdims=True)) @ V, rtol=0, atol=1e-12)
    assert run.counts() == lex.count_local_forward(40, 40, 6, 8, 8, lex.Window(9, 0), d_v=11).counts()
    want = local.fa2_fwd_window.evaluate(N=40, N_k=40, d=6, d_v=11, B_r=8, B_c=8, W_l=9, W_r=0)
    assert {k: want[k] for k in run.counts()} == run.counts()


def test_v_rows_must_match_k():
    with pytest.raises(BadInput) as err:
        ex.flash_forward(np.ones((4, 3)), np.ones((5, 3)), np.ones((6, 3)), 2, 2)
    assert err.value.param == "V"
    with pytest.raises(BadInput) as err:
        ex.count_flash_forward(4, 5, 3, 2, 2, d_v=0)
    assert err.value.param == "d_v"
