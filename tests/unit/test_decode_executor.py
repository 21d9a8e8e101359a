"""The decode executor (numeric/decode.py) against a brute-force element count and plain softmax attention.

References: :func:`brute_force` walks every CTA, split, key block and key row of the algorithm as the
issue states it (masks element by element, the pages a block touches as a set) - a different loop from
the executor's prefix sums; :func:`plain_decode` is ``softmax(Q K^T / sqrt(d)) V`` head by head in
NumPy.  The reference count is itself checked first against two figures worked out by hand.
"""

from __future__ import annotations

from collections import Counter
from itertools import product

import numpy as np
import pytest

from base.errors import BadInput
from numeric.decode import default_pages, run_decode

KEYS = ("reads_Q", "reads_K", "reads_V", "reads_table", "reads_O_s", "reads_LSE_s", "writes_O_s", "writes_LSE_s",
        "writes_O", "writes_LSE")


def brute_force(H, H_kv, L_q, lengths, d, d_v, B_n, S, packed=True, P=None):
    g = H // H_kv
    groups = H_kv if packed else H
    rows = g * L_q if packed else L_q
    c = Counter({k: 0 for k in KEYS})
    flops = 0
    for n in lengths:
        nb = -(-n // B_n)
        per = -(-nb // S)
        for _grp, s in product(range(groups), range(S)):
            mine = [j for j in range(nb) if s * per <= j < (s + 1) * per]
            if not mine:                                   # empty: 0 and -inf, nothing loaded
                c["writes_O_s"] += rows * d_v
                c["writes_LSE_s"] += rows
                continue
            c["reads_Q"] += rows * d
            for j in mine:
                keys = [t for t in range(j * B_n, (j + 1) * B_n) if t < n]     # the masked load
                c["reads_K"] += len(keys) * d
                c["reads_V"] += len(keys) * d_v
                if P is not None:
                    c["reads_table"] += len({t // P for t in keys})
                flops += 2 * rows * len(keys) * (d + d_v)
            out = ("writes_O", "writes_LSE") if S == 1 else ("writes_O_s", "writes_LSE_s")
            c[out[0]] += rows * d_v
            c[out[1]] += rows
    if S > 1:
        for _row in range(len(lengths) * H * L_q):            # the combine, row by row
            c["reads_O_s"] += S * d_v
            c["reads_LSE_s"] += S
            c["writes_O"] += d_v
            c["writes_LSE"] += 1
    return dict(c), flops


def plain_decode(q, ks, vs, lengths, g):
    """softmax(Q K^T / sqrt(d)) V per (sequence, query head), keys of KV head h // g."""
    B, H, L_q, d = q.shape
    out = np.empty((B, H, L_q, vs[0].shape[-1]))
    for b, h in product(range(B), range(H)):
        K, V = ks[b][h // g, :lengths[b]], vs[b][h // g, :lengths[b]]
        s = q[b, h] @ K.T / np.sqrt(d)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[b, h] = (p / p.sum(axis=1, keepdims=True)) @ V
    return out


def test_the_reference_count_by_hand():
    # one sequence of 5 keys, B_n = 2: blocks of 2, 2, 1; S = 2: nbps = 2, splits [0, 2) and [2, 3);
    # H = H_kv = 1, L_q = 1, d = d_v = 1: Q twice, K and V 5 each; partials 2 + 2, combine 2 + 2 in, 1 + 1 out
    c, f = brute_force(1, 1, 1, [5], 1, 1, 2, 2)
    assert c == {"reads_Q": 2, "reads_K": 5, "reads_V": 5, "reads_table": 0, "reads_O_s": 2, "reads_LSE_s": 2,
                 "writes_O_s": 2, "writes_LSE_s": 2, "writes_O": 1, "writes_LSE": 1}
    assert f == 2 * 5 * 2
    # S = 5 > 3 blocks: nbps = 1, splits 3 and 4 are empty: Q read 3 times, partials written 5 times
    c, _ = brute_force(1, 1, 1, [5], 1, 1, 2, 5)
    assert (c["reads_Q"], c["writes_O_s"], c["reads_O_s"]) == (3, 5, 5)
    # pages of 3 tokens, B_n = 2: blocks {0,1} {2,3} {4} touch pages {0}, {0,1}, {1}: 4 lookups
    assert brute_force(1, 1, 1, [5], 1, 1, 2, 1, P=3)[0]["reads_table"] == 4


SHAPES = [(4, 4, 1), (8, 2, 1), (6, 1, 2), (8, 8, 3), (12, 3, 2)]


@pytest.mark.parametrize("H,H_kv,L_q", SHAPES)
@pytest.mark.parametrize("lengths", [[1], [5], [16], [100], [3, 100, 17], [64, 65]])
@pytest.mark.parametrize("S", [1, 2, 3, 6, 13])
@pytest.mark.parametrize("packed", [True, False])
def test_counts_equal_the_brute_force(H, H_kv, L_q, lengths, S, packed):
    for P in (None, 1, 3, 16, 48):
        want, flops = brute_force(H, H_kv, L_q, lengths, 3, 2, 16, S, packed, P)
        for real in (False, True):
            run = run_decode(len(lengths), H, H_kv, L_q, max(lengths), 3, 2, 16, S, packed=packed, P=P,
                             lengths=lengths, real=real)
            assert run.elements == want, (P, real)
            assert run.flops == flops
            assert run.ctas == len(lengths) * (H_kv if packed else H) * S


def test_bytes_use_each_tensors_own_element_size():
    run = run_decode(1, 8, 2, 1, 100, 4, 4, 16, 3, P=16)
    c = run.counts()
    e = run.elements
    fp16 = 2 * (e["reads_Q"] + e["reads_K"] + e["reads_V"])
    fp32 = 4 * (e["reads_O_s"] + e["reads_LSE_s"])
    assert c["bytes_read"] == fp16 + fp32 + 4 * e["reads_table"]
    assert c["bytes_written"] == 2 * e["writes_O"] + 4 * (e["writes_LSE"] + e["writes_O_s"] + e["writes_LSE_s"])
    assert run_decode(1, 8, 2, 1, 100, 4, 4, 16, 3, dtype="fp8").counts()["bytes_read"] < c["bytes_read"]


@pytest.mark.parametrize("H,H_kv", [(8, 8), (8, 2), (8, 1)])            # g = 1, 4, H
@pytest.mark.parametrize("S", [1, 2, 3, 7, 40])                          # 40 > every sequence's block count
@pytest.mark.parametrize("packed", [True, False])
def test_real_output_is_plain_softmax_attention(H, H_kv, S, packed):
    rng = np.random.default_rng(S + H_kv)
    lengths = [1, 37, 100]
    L_q, d, d_v = 2, 16, 8
    q = rng.standard_normal((3, H, L_q, d))
    ks = [rng.standard_normal((H_kv, n, d)) for n in lengths]
    vs = [rng.standard_normal((H_kv, n, d_v)) for n in lengths]
    want = plain_decode(q, ks, vs, lengths, H // H_kv)
    run = run_decode(3, H, H_kv, L_q, 100, d, d_v, 8, S, packed=packed, lengths=lengths, real=True, q=q, k=ks, v=vs)
    assert np.max(np.abs(run.O - want)) <= 1e-12
    # the LSE: log of the softmax denominator
    for b, h in product(range(3), range(H)):
        s = q[b, h] @ ks[b][h // (H // H_kv)].T / np.sqrt(d)
        assert np.max(np.abs(run.LSE[b, h] - np.log(np.exp(s).sum(axis=1)))) <= 1e-12


@pytest.mark.parametrize("S", [1, 4, 30])
@pytest.mark.parametrize("P", [1, 5, 16, 64])
def test_paged_output_with_a_permuted_block_table(S, P):
    rng = np.random.default_rng(P)
    lengths, H, H_kv, d = [45, 3, 90], 8, 2, 8
    q = rng.standard_normal((3, H, 1, d))
    ks = [rng.standard_normal((H_kv, n, d)) for n in lengths]
    vs = [rng.standard_normal((H_kv, n, d)) for n in lengths]
    need = [-(-n // P) for n in lengths]
    perm = rng.permutation(sum(need) + 7)                     # a pool with spare pages
    pages, at = [], 0
    for k in need:
        pages.append([int(x) for x in perm[at:at + k]] + [int(perm[-1 - len(pages)])])   # padded tables
        at += k
    pool_k = rng.standard_normal((len(perm), P, H_kv, d))
    pool_v = rng.standard_normal((len(perm), P, H_kv, d))
    for b, n in enumerate(lengths):
        for t in range(n):
            pool_k[pages[b][t // P], t % P] = ks[b][:, t]
            pool_v[pages[b][t // P], t % P] = vs[b][:, t]
    run = run_decode(3, H, H_kv, 1, 90, d, d, 16, S, P=P, lengths=lengths, pages=pages, real=True, q=q,
                     k=pool_k, v=pool_v)
    assert np.max(np.abs(run.O - plain_decode(q, ks, vs, lengths, H // H_kv))) <= 1e-12
    assert run.elements == brute_force(H, H_kv, 1, lengths, d, d, 16, S, True, P)[0]


def test_default_block_table_is_a_permutation():
    pages = default_pages([45, 3, 90], 16, seed=3)
    flat = [p for lst in pages for p in lst]
    assert [len(p) for p in pages] == [3, 1, 6]
    assert sorted(flat) == list(range(10)) and flat != sorted(flat)


def test_gqa_ratio_is_exactly_g():
    for H, H_kv in ((8, 8), (8, 2), (32, 8), (8, 1)):
        g = H // H_kv
        for P in (None, 16):
            u = run_decode(2, H, H_kv, 1, 1000, 8, 8, 64, 5, packed=False, P=P).elements
            p = run_decode(2, H, H_kv, 1, 1000, 8, 8, 64, 5, packed=True, P=P).elements
            assert u["reads_K"] == g * p["reads_K"] and u["reads_V"] == g * p["reads_V"]
            assert u["reads_table"] == g * p["reads_table"]
            assert u["reads_Q"] == p["reads_Q"] and u["writes_O"] == p["writes_O"]


def test_count_only_runs_at_a_billion_keys():
    run = run_decode(1, 32, 8, 1, 10**9, 128, 128, 1024, 128, P=4096)
    assert run.elements["reads_K"] == 8 * 10**9 * 128
    assert run.elements["reads_table"] == 8 * -(-10**9 // 1024)      # B_n | P: one lookup per key block


def test_bad_input_names_the_parameter():
    cases = [
        (dict(H=8, H_kv=3), "H_kv"),
        (dict(S=0), "S"),
        (dict(lengths=[5, 6]), "lengths"),                       # two lengths for B = 3
        (dict(lengths=[5, 6, 0]), "lengths"),
        (dict(lengths=[5, 6, 7], N_k=8), "N_k"),
        (dict(P=4, pages=[[0, 1], [2], [3, 4]]), "pages"),       # sequence 1 needs 2 pages of 4 for 6 tokens
        (dict(P=4, pages=[[0, 1], [2, 1], [3, 4]]), "pages"),    # page 1 twice
        (dict(pages=[[0], [1], [2]]), "pages"),                  # a table without a page size
        (dict(P=0), "P"),
        (dict(max_ctas=10), "S"),
        (dict(max_blocks=2), "B_n"),
        (dict(real=True, max_elements=10), "N_k"),
    ]
    for kw, param in cases:
        args = dict(B=3, H=8, H_kv=2, L_q=1, N_k=None if "lengths" in kw else 7, d=4, d_v=4, B_n=4, S=2)
        args.update(kw)
        if "pages" in kw and "lengths" not in kw:
            args["lengths"], args["N_k"] = [7, 6, 5], None
        with pytest.raises(BadInput) as e:
            run_decode(**args)
        assert e.value.param == param, (kw, e.value)
