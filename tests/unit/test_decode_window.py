"""decode.*.window: the executor against an element-by-element visited-set count and a plain NumPy
masked softmax; the formulas against closed forms derived by hand here; W_l >= N_k against decode.packed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.decode_window import run_decode_window
from symbolic.models.decode import decode_packed, decode_unpacked
from symbolic.models.decode_window import (decode_packed_window, decode_packed_window_fa3, decode_unpacked_window)

MODELS = {(True, "fa2"): decode_packed_window, (False, "fa2"): decode_unpacked_window,
          (True, "fa3"): decode_packed_window_fa3}
SHAPE = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S", "W_l")


def ceil(a, b):
    return -(-a // b)


def brute_force(B, H, H_kv, L_q, N_k, d, d_v, B_n, S, W_l, packed=True, rule="fa2"):
    """Walk the keys one by one: the set any new query sees, the blocks holding them, each block's owner
    split (FA2: blocks [s nbps, (s+1) nbps) of the whole cache; FA3: the visited range cut in S), then
    every load and store of every CTA."""
    visible = set()
    for i in range(L_q):
        p = N_k - L_q + i
        for j in range(max(0, p - W_l), p + 1):          # element by element
            visible.add(j)
    blocks = sorted({j // B_n for j in visible})
    nb = ceil(N_k, B_n)
    if rule == "fa2":
        per = ceil(nb, S)
        owner = {b: b // per for b in blocks}
    else:
        lo, hi = blocks[0], blocks[-1] + 1
        per = ceil(hi - lo, S)
        owner = {b: (b - lo) // per for b in blocks}
    keys_of = {s: 0 for s in range(S)}
    for b in blocks:
        keys_of[owner[b]] += len(range(b * B_n, min(N_k, (b + 1) * B_n)))   # its valid rows
    groups, rows = (H_kv, H // H_kv * L_q) if packed else (H, L_q)
    c = dict.fromkeys(("reads_Q", "reads_K", "reads_V", "reads_O_s", "reads_LSE_s", "writes_O_s",
                       "writes_LSE_s", "writes_O", "writes_LSE", "flops"), 0)
    for _ in range(B * groups):
        for s in range(S):
            if keys_of[s]:
                c["reads_Q"] += rows * d
                c["reads_K"] += keys_of[s] * d
                c["reads_V"] += keys_of[s] * d_v
                c["flops"] += 2 * rows * keys_of[s] * (d + d_v)
            if S > 1:
                c["writes_O_s"] += rows * d_v
                c["writes_LSE_s"] += rows
            else:
                c["writes_O"] += rows * d_v
                c["writes_LSE"] += rows
    if S > 1:
        c["reads_O_s"] = c["writes_O_s"]
        c["reads_LSE_s"] = c["writes_LSE_s"]
        c["writes_O"], c["writes_LSE"] = B * H * L_q * d_v, B * H * L_q
    c["keys_visited"] = sum(keys_of.values())
    c["splits_loading"] = sum(1 for s in range(S) if keys_of[s])
    c["ctas"] = B * groups * S
    return c


POINTS = [
    (1, 8, 2, 1, 1, 4, 3, 16, 1, 0),
    (1, 8, 2, 1, 100, 4, 3, 16, 3, 0),
    (1, 8, 2, 1, 100, 4, 3, 16, 7, 5),
    (1, 8, 2, 1, 100, 4, 3, 16, 7, 20),
    (1, 8, 2, 1, 100, 4, 3, 16, 7, 98),
    (2, 8, 2, 1, 100, 4, 3, 16, 7, 99),
    (1, 8, 2, 5, 50, 4, 3, 8, 5, 2),
    (1, 4, 4, 5, 5, 2, 3, 2, 4, 1),
    (2, 6, 1, 3, 77, 5, 7, 4, 9, 13),
    (1, 4, 2, 2, 300, 3, 2, 7, 40, 100),
]


@pytest.mark.parametrize("packed,rule", list(MODELS))
@pytest.mark.parametrize("pt", POINTS)
@pytest.mark.parametrize("real", [False, True])
def test_executor_counts_are_the_brute_force_walk(pt, packed, rule, real):
    got = run_decode_window(*pt, packed=packed, split_rule=rule, real=real).counts()
    want = brute_force(*pt, packed=packed, rule=rule)
    assert {k: got[k] for k in want} == want


@pytest.mark.parametrize("N_k", [2 ** 63 - 1, 2 ** 63, 2 ** 63 + 1, 10 ** 30])
@pytest.mark.parametrize("packed,rule", list(MODELS))
def test_count_only_past_int64_is_the_brute_force_walk_and_the_formula(N_k, packed, rule):
    pt = (2, 32, 8, 3, N_k, 128, 96, 128, 29, 4095)
    got = run_decode_window(*pt, packed=packed, split_rule=rule).counts()
    want = brute_force(*pt, packed=packed, rule=rule)
    assert {k: got[k] for k in want} == want
    model = MODELS[packed, rule].evaluate(**dict(zip(SHAPE, pt)))
    assert {k: model[k] for k in want} == want
    assert all(type(v) is int for v in got.values())


def test_formula_by_hand_at_a_small_point():
    # N_k = 100, B_n = 16: nb = 7; L_q = 1, W_l = 20: the query at 99 sees 79..99, blocks 4..6 (keys 64..99: 36)
    # FA2, S = 3: nbps = 3, splits [0,3) [3,6) [6,7) -> split 0 empty, splits 1 (block 4..5) and 2 (block 6) load
    # packed, H = 8, H_kv = 2 (g = 4), d = 4, d_v = 3, B = 1: R = 8 rows
    v = decode_packed_window.evaluate(B=1, H=8, H_kv=2, L_q=1, N_k=100, d=4, d_v=3, B_n=16, S=3, W_l=20)
    assert v["keys_visited"] == 36 and v["splits_loading"] == 2
    assert v["reads_Q"] == 8 * 4 * 2
    assert v["reads_K"] == 2 * 36 * 4 and v["reads_V"] == 2 * 36 * 3
    assert v["writes_O_s"] == v["reads_O_s"] == 8 * 3 * 3 and v["writes_LSE_s"] == 8 * 3
    assert v["writes_O"] == 8 * 3 and v["writes_LSE"] == 8
    assert v["flops"] == 2 * 8 * 36 * (4 + 3)
    # FA3, S = 3: the 3 visited blocks, one a split: all three load
    assert decode_packed_window_fa3.evaluate(B=1, H=8, H_kv=2, L_q=1, N_k=100, d=4, d_v=3, B_n=16, S=3,
                                             W_l=20)["splits_loading"] == 3
    # unpacked: K and V read once per query head, g = 4 times the packed reads
    u = decode_unpacked_window.evaluate(B=1, H=8, H_kv=2, L_q=1, N_k=100, d=4, d_v=3, B_n=16, S=3, W_l=20)
    assert u["reads_K"] == 4 * v["reads_K"] and u["reads_Q"] == v["reads_Q"]


def test_formula_by_hand_at_10_to_the_30():
    # 128 divides 10**30 (= 2**30 5**30): nb = 10**30 / 128 blocks; the query at 10**30 - 1 with W_l = 4095
    # sees the last 4096 keys, exactly the last 32 blocks.  S = 29: nbps = ceil(nb / 29); the blocks
    # nb - 32 .. nb - 1 lie in splits (nb - 32) // nbps .. (nb - 1) // nbps.
    N = 10 ** 30
    nb = N // 128
    nbps = -(-nb // 29)
    splits = (nb - 1) // nbps - (nb - 32) // nbps + 1
    v = decode_packed_window.evaluate(B=1, H=32, H_kv=8, L_q=1, N_k=N, d=128, d_v=128, B_n=128, S=29, W_l=4095)
    R = 32
    assert v["keys_visited"] == 4096 and v["splits_loading"] == splits
    assert v["reads_K"] == 8 * 4096 * 128
    assert v["reads_Q"] == R * 128 * splits
    assert v["flops"] == 2 * R * 4096 * 256
    assert v["bytes"] == (2 * (R * 128 * splits + 2 * 8 * 4096 * 128) + 4 * 29 * R * 129 * 2 + 2 * R * 128 + 4 * R)


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({
    "B": st.integers(1, 3), "H_kv": st.integers(1, 4), "g": st.integers(1, 4), "N_k": st.integers(1, 10 ** 6),
    "d": st.integers(1, 256), "d_v": st.integers(1, 256), "B_n": st.integers(1, 512), "S": st.integers(1, 200),
    "extra": st.integers(0, 10 ** 9), "L_q": st.integers(1, 8)}))
@example({"B": 1, "H_kv": 2, "g": 4, "N_k": 100, "d": 4, "d_v": 3, "B_n": 16, "S": 13, "extra": 0, "L_q": 1})
@example({"B": 1, "H_kv": 1, "g": 1, "N_k": 1, "d": 1, "d_v": 1, "B_n": 1, "S": 1, "extra": 0, "L_q": 1})
def test_a_window_past_the_cache_is_decode_packed(pt):
    pt = dict(pt)
    pt["H"] = pt.pop("g") * pt["H_kv"]
    pt["L_q"] = min(pt["L_q"], pt["N_k"])
    W_l = pt["N_k"] + pt.pop("extra")                   # W_l >= N_k
    for (packed, rule), model in MODELS.items():
        plain = (decode_packed if packed else decode_unpacked).evaluate(**pt)
        win = model.evaluate(**pt, W_l=W_l)
        assert {k: win[k] for k in plain} == plain


def reference(q, k, v, N_k, W_l, g):
    """Plain windowed attention: each query row over exactly the keys it sees, one softmax."""
    B, H, L_q, d = q.shape
    out = np.zeros((B, H, L_q, v[0].shape[-1]))
    for b in range(B):
        for h in range(H):
            for t in range(L_q):
                p = N_k - L_q + t
                js = np.arange(max(0, p - W_l), p + 1)
                s = k[b][h // g, js] @ q[b, h, t] / np.sqrt(d)
                w = np.exp(s - s.max())
                out[b, h, t] = (w / w.sum()) @ v[b][h // g, js]
    return out


@pytest.mark.parametrize("packed,rule", list(MODELS))
@pytest.mark.parametrize("pt", POINTS)
def test_real_output_is_windowed_attention(pt, packed, rule):
    B, H, H_kv, L_q, N_k, d, d_v, B_n, S, W_l = pt
    rng = np.random.default_rng(7)
    q = rng.standard_normal((B, H, L_q, d))
    k = rng.standard_normal((B, H_kv, N_k, d))
    v = rng.standard_normal((B, H_kv, N_k, d_v))
    run = run_decode_window(*pt, packed=packed, split_rule=rule, real=True, q=q, k=k, v=v)
    np.testing.assert_allclose(run.O, reference(q, list(k), list(v), N_k, W_l, H // H_kv), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kw,param", [
    ({"L_q": 4, "N_k": 3}, "L_q"), ({"W_l": -1}, "W_l"), ({"H_kv": 3}, "H_kv"), ({"S": 0}, "S"),
])
def test_bad_input_names_the_parameter(kw, param):
    pt = {"B": 1, "H": 8, "H_kv": 2, "L_q": 1, "N_k": 100, "d": 4, "d_v": 3, "B_n": 16, "S": 3, "W_l": 20, **kw}
    with pytest.raises(BadInput) as e:
        run_decode_window(*(pt[k] for k in SHAPE))
    assert e.value.param == param
    with pytest.raises(BadInput) as e:
        decode_packed_window.evaluate(**pt)
    assert e.value.param == param


def test_bad_split_rule_and_budget():
    with pytest.raises(BadInput) as e:
        run_decode_window(1, 8, 2, 1, 100, 4, 3, 16, 3, 20, split_rule="fa4")
    assert e.value.param == "split_rule"
    with pytest.raises(BadInput) as e:
        run_decode_window(1, 8, 2, 1, 10 ** 12, 4, 3, 1, 3, 10 ** 11)
    assert e.value.param == "B_n"


def test_leading_term_is_the_window_kv_traffic():
    # bytes ~ 2 bytes x (K + V of W_l keys per KV head) when the window is long and within the cache
    import sympy as sp
    from symbolic.models.decode import B, H_kv, d, d_v
    from symbolic.models.decode_window import W_l
    assert sp.simplify(decode_packed_window.leading() - 2 * B * H_kv * W_l * (d + d_v)) == 0


@pytest.mark.parametrize("pt", POINTS[:6] + [(1, 4, 2, 2, 300, 3, 2, 7, 40, 100)])
@pytest.mark.parametrize("packed", [True, False])
def test_listing_walks_to_the_brute_force_counts(pt, packed):
    from symbolic.listings import listing_for
    name = "decode.packed.window" if packed else "decode.unpacked.window"
    got = listing_for(name).count(dict(zip(SHAPE, pt)), method="walk")
    c = brute_force(*pt, packed=packed)
    assert got["reads"] == sum(v for k, v in c.items() if k.startswith("reads_"))
    assert got["writes"] == sum(v for k, v in c.items() if k.startswith("writes_"))
