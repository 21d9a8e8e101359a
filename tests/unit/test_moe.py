"""moe.grouped: the executor against a position-by-position walk of vLLM's kernel, its alignment against
the example in vLLM's own docstring, the real output against a per-token loop (itself checked against an
einsum), the closed forms against hand derivations, the uniform-routing expectation against an enumeration
and hand cases, the bounds around it, bad input naming its parameter."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations, product

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.moe import align_block_size, moe_reference, route, run_moe
from symbolic.models import moe
from symbolic.models.moe import B_M, E, T, grouped, grouped_for, k, skewed, uniform, uniform_expectation
from verify.checks.moe import QUANTITIES, RoutedCheck, counts_check
from verify.core import Check, run_check


def brute_force(T_, E_, k_, N_, K_, BM, BN, BK, counts):
    """Walk the grid of vLLM's fused_moe_kernel position by position: a padded block position counts when
    its row is a valid pair, a column is below N, a depth below K (the kernel's masks)."""
    blocks = [min(BM, n - b * BM) for n in counts for b in range(-(-n // BM))]     # valid rows of each block
    P = T_ * k_
    em = P + E_ * (BM - 1)
    if T_ < BM:
        em = min(em, P * BM)
    c = dict.fromkeys(QUANTITIES, 0)
    for pm, pn in product(range(-(-em // BM)), range(-(-N_ // BN))):
        c["programs"] += 1
        c["reads_num_padded"] += 1
        if pm >= len(blocks):
            continue
        valid = blocks[pm]
        c["reads_sorted_ids"] += BM
        c["reads_expert_ids"] += 1
        cols = [col for col in range(BN) if pn * BN + col < N_]
        for k0 in range(0, K_, BK):
            depth = [d for d in range(BK) if k0 + d < K_]
            c["reads_A"] += sum(1 for r in range(BM) for d in depth if r < valid)
            c["reads_W"] += len(depth) * len(cols)
            c["flops"] += 2 * sum(1 for r in range(BM) for _ in cols for _ in depth if r < valid)
            c["flops_padded"] += 2 * BM * BN * BK
        c["reads_topk_weights"] += valid
        c["writes_gemm"] += valid * len(cols)
    for t, s, col in product(range(T_), range(k_), range(N_)):
        c["reads_combine"] += 1
        if s == 0:
            c["writes_combine"] += 1
    c["padded_rows"], c["m_blocks"] = len(blocks) * BM, len(blocks)
    c["reads"] = sum(v for q, v in c.items() if q.startswith("reads_"))
    c["writes"] = c["writes_gemm"] + c["writes_combine"]
    c["bytes"] = (2 * (c["reads_A"] + c["reads_W"] + c["reads_combine"] + c["writes"])
                  + 4 * (c["reads_sorted_ids"] + c["reads_expert_ids"] + c["reads_num_padded"])
                  + 4 * c["reads_topk_weights"])
    return c


POINTS = [  # T, E, k, N, K, B_M, B_N, B_K, counts
    (10, 3, 2, 5, 7, 4, 2, 3, (7, 3, 10)),
    (6, 4, 2, 9, 10, 4, 4, 4, (6, 0, 6, 0)),
    (5, 3, 3, 4, 6, 2, 4, 4, (5, 5, 5)),
    (3, 8, 2, 16, 32, 16, 8, 16, (3, 0, 0, 1, 0, 2, 0, 0)),
    (1, 1, 1, 1, 1, 1, 1, 1, (1,)),
    (9, 5, 1, 7, 9, 3, 5, 4, (0, 9, 0, 0, 0)),
]


# ------------------------------------------------------------------ executor vs the walk
@pytest.mark.parametrize("real", [False, True])
@pytest.mark.parametrize("point", POINTS)
def test_executor_equals_the_position_walk(point, real):
    *dims, counts = point
    assert run_moe(*dims, counts, real=real).counts == brute_force(*dims, counts)


@settings(max_examples=40, deadline=None, database=None)
@given(st.integers(1, 12), st.integers(1, 5), st.data())
@example(1, 1, None)
def test_formula_equals_the_position_walk_drawn(T_, E_, data):
    k_ = data.draw(st.integers(1, E_)) if data is not None else 1
    subsets = [data.draw(st.permutations(range(E_)))[:k_] for _ in range(T_)] if data is not None else [[0]]
    counts = tuple(sum(1 for s in subsets if e in s) for e in range(E_))
    dims = (T_, E_, k_, 5, 9, 1 + T_ % 5, 3, 4)
    got = grouped_for(counts).evaluate(**dict(zip(("T", "E", "k", "N", "K", "B_M", "B_N", "B_K"), dims)))
    want = brute_force(*dims, counts)
    assert {q: got[q] for q in want} == want


def test_count_only_beyond_int64_by_hand():
    """Two experts (3 and 1 pairs), one block each; N = K = 10**30 in tiles of 10**29: t_n = t_k = 10."""
    n = 10**30
    c = run_moe(4, 2, 1, n, n, 4, 10**29, 10**29, (3, 1)).counts
    assert c["reads_A"] == 10 * 4 * n                 # t_n T k K
    assert c["reads_W"] == 2 * n * n                  # m_blocks N K
    assert c["flops"] == 2 * 4 * n * n
    assert c["padded_rows"] == 8 and c["reads_sorted_ids"] == 10 * 8


# ------------------------------------------------------------------ alignment: vLLM's own example
def test_alignment_reproduces_vllms_docstring_example():
    """moe_align_block_size.py@05be992, the docstring: topk_ids [[2,3,4],[1,2,4],[1,3,4],[1,2,3]], block
    size 4, give sorted ids [3, 6, 9, 12, 0, 4, 10, 12, 1, 7, 11, 12, 2, 5, 8, 12] (12: the padding)."""
    ids = np.array([[2, 3, 4], [1, 2, 4], [1, 3, 4], [1, 2, 3]])
    sorted_ids, expert_ids, post_pad = align_block_size(ids, 5, 4)
    assert sorted_ids[:16].tolist() == [3, 6, 9, 12, 0, 4, 10, 12, 1, 7, 11, 12, 2, 5, 8, 12]
    assert post_pad == 16 and expert_ids[:4].tolist() == [1, 2, 3, 4]
    assert len(sorted_ids) == 12 + 5 * 3             # numel + E (BLOCK_M - 1), :200


def test_route_gives_distinct_experts_and_the_counts():
    for T_, E_, k_, counts in [(10, 3, 2, (7, 3, 10)), (5, 3, 3, (5, 5, 5)), (6, 4, 2, (6, 0, 6, 0))]:
        ids = route(T_, E_, k_, counts)
        assert all(len(set(row)) == k_ for row in ids.tolist())
        assert tuple(np.bincount(ids.reshape(-1), minlength=E_)) == counts


# ------------------------------------------------------------------ real output
def test_reference_loop_equals_an_einsum():
    """The oracle first: the per-token loop against a one-line einsum over one-hot routing."""
    rng = np.random.default_rng(1)
    X, W = rng.standard_normal((7, 5)), rng.standard_normal((3, 5, 4))
    ids, w = route(7, 3, 2, (5, 4, 5)), rng.random((7, 2))
    onehot = np.eye(3)[ids]                                            # T x k x E
    want = np.einsum("tk,tke,tc,ecn->tn", w, onehot, X, W)
    assert np.allclose(moe_reference(X, W, ids, w), want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("point", POINTS)
def test_real_output_equals_the_per_token_loop(point):
    *dims, counts = point
    T_, E_, k_, N_, K_ = dims[:5]
    rng = np.random.default_rng(5)
    X, W = rng.standard_normal((T_, K_)), rng.standard_normal((E_, K_, N_))
    ids, w = route(T_, E_, k_, counts), rng.random((T_, k_))
    r = run_moe(*dims, real=True, X=X, W=W, topk_ids=ids, topk_weights=w)
    assert r.routing == counts
    assert np.max(np.abs(r.out - moe_reference(X, W, ids, w))) <= 1e-12 * max(1.0, np.max(np.abs(r.out)))


def test_real_mode_takes_any_routing():
    rng = np.random.default_rng(2)
    ids = np.array([rng.choice(6, 3, replace=False) for _ in range(11)])
    r = run_moe(11, 6, 3, 8, 12, 4, 4, 8, real=True, topk_ids=ids)
    assert sum(r.routing) == 33 and r.counts == run_moe(11, 6, 3, 8, 12, 4, 4, 8, r.routing).counts


# ------------------------------------------------------------------ closed forms
def test_balanced_blocks_is_the_hand_form_when_blocks_divide():
    """E B_M | T k: every expert gets T k / E pairs, a multiple of B_M, so m_blocks = T k / B_M."""
    t = sp.Symbol("t", integer=True, positive=True)
    e = moe.balanced_blocks().subs(T, E * B_M * t)
    assert sp.simplify(e - E * B_M * t * k / B_M) == 0
    assert sp.simplify(skewed["m_blocks"] - k * sp.ceiling(T / B_M)) == 0


@pytest.mark.parametrize("T_,E_,k_,BM", [(1, 8, 2, 16), (512, 8, 2, 64), (37, 5, 3, 4), (8192, 256, 8, 64),
                                         (100, 7, 7, 3), (3, 4, 1, 1)])
def test_registered_models_are_their_count_vectors(T_, E_, k_, BM):
    pt = dict(T=T_, E=E_, k=k_, N=96, K=200, B_M=BM, B_N=64, B_K=64)
    bal = moe.balanced_counts(T_, E_, k_)
    assert max(bal) - min(bal) <= 1 and sum(bal) == T_ * k_
    assert grouped.evaluate(**pt) == grouped_for(bal).evaluate(**pt)
    assert skewed.evaluate(**pt) == grouped_for(moe.skewed_counts(T_, E_, k_)).evaluate(**pt)
    # hand: balanced padded rows, by the definition sum_e ceil(n_e / B_M) B_M
    assert grouped.evaluate("padded_rows", **pt) == sum(-(-n // BM) * BM for n in bal)


def test_padding_never_exceeds_vllms_worst_case_and_reaches_it():
    """numel + E (BLOCK_M - 1) (moe_align_block_size.py:200) bounds padded_rows; n_e = 1 mod B_M reaches it."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        E_, BM = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        T_, k_ = int(rng.integers(1, 30)), int(rng.integers(1, E_ + 1))
        ids = np.array([rng.choice(E_, k_, replace=False) for _ in range(T_)])
        counts = tuple(np.bincount(ids.reshape(-1), minlength=E_))
        assert run_moe(T_, E_, k_, 3, 3, BM, 4, 4, counts).counts["padded_rows"] <= T_ * k_ + E_ * (BM - 1)
    worst = grouped_for((5, 5, 5)).evaluate("padded_rows", T=5, E=3, k=3, N=1, K=1, B_M=4, B_N=1, B_K=1)
    assert worst == 15 + 3 * 3


def test_order_of_counts_does_not_matter_and_models_are_cached():
    assert grouped_for((7, 3, 10)) is grouped_for([10, 7, 3])


def test_with_counts_is_the_cli_hook():
    m = moe.with_counts("moe.grouped", moe.parse_counts("7, 3,10"))
    assert m.evaluate("m_blocks", T=10, E=3, k=2, N=5, K=7, B_M=4, B_N=2, B_K=3) == 2 + 1 + 3
    with pytest.raises(BadInput) as e:
        moe.with_counts("gemm.tiled", (1, 2))
    assert e.value.param == "counts"


# ------------------------------------------------------------------ uniform routing
def _enumerated_blocks(T_, E_, k_, BM):
    subsets = list(combinations(range(E_), k_))
    total = Fraction(0)
    for choice in product(subsets, repeat=T_):
        counts = [sum(1 for s in choice if e in s) for e in range(E_)]
        total += sum(-(-n // BM) for n in counts)
    return total / len(subsets) ** T_


@pytest.mark.parametrize("T_,E_,k_,BM", [(1, 3, 1, 2), (3, 3, 2, 2), (4, 4, 2, 3), (2, 5, 2, 1), (5, 2, 2, 2),
                                         (3, 4, 1, 4)])
def test_exact_expectation_equals_enumeration(T_, E_, k_, BM):
    got = uniform_expectation(T=T_, E=E_, k=k_, N=3, K=3, B_M=BM, B_N=2, B_K=2)["m_blocks"]
    assert got == _enumerated_blocks(T_, E_, k_, BM)


def test_exact_expectation_hand_cases():
    pt = dict(N=8, K=8, B_N=8, B_K=8)
    assert uniform_expectation(T=1, E=16, k=4, B_M=8, **pt)["m_blocks"] == 4           # one pair to each of k
    assert uniform_expectation(T=50, E=6, k=6, B_M=8, **pt)["m_blocks"] == 6 * 7       # k = E: n_e = T
    assert uniform_expectation(T=30, E=9, k=2, B_M=1, **pt)["m_blocks"] == 60          # B_M = 1: T k blocks
    # B_M >= T: a block per nonempty expert, E (1 - (1 - k/E)^T)
    assert uniform_expectation(T=20, E=8, k=3, B_M=64, **pt)["m_blocks"] == 8 * (1 - Fraction(5, 8) ** 20)


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(1, 400), st.sampled_from([(1, 1), (2, 1), (8, 2), (16, 4), (64, 6), (256, 8), (5, 5)]),
       st.sampled_from([1, 2, 7, 16, 64, 128]))
@example(512, (256, 8), 64)
@example(4096, (8, 1), 128)
@example(1, (256, 8), 1)
def test_bounds_hold_around_the_exact_value(T_, ek, BM):
    E_, k_ = ek
    if T_ * k_ > 4096:
        return
    pt = dict(T=T_, E=E_, k=k_, N=16, K=16, B_M=BM, B_N=16, B_K=16)
    exact = uniform_expectation(**pt)
    for q, (lo, hi) in moe.uniform_bounds(**pt).items():
        assert lo <= exact[q] <= hi, (q, lo, exact[q], hi)


def test_bounds_at_any_size():
    v = uniform.evaluate(T=10**30, E=256, k=8, N=7168, K=2048, B_M=64, B_N=128, B_K=128)
    assert v["m_blocks_lower"] <= v["m_blocks_upper"] <= v["m_blocks_lower"] + 256
    v = uniform.evaluate(T=10**6, E=256, k=8, N=7168, K=2048, B_M=64, B_N=128, B_K=128)
    assert v["padded_rows_lower"] == 8 * 10**6      # mu / B_M dominates: E B_M mu / B_M = T k


def test_exact_expectation_is_refused_beyond_4096_pairs_naming_T():
    with pytest.raises(BadInput) as e:
        uniform_expectation(T=2049, E=8, k=2)
    assert e.value.param == "T" and "4,098 pairs" in str(e.value)
    assert uniform_expectation(T=2048, E=8, k=2)["m_blocks"] > 0


# ------------------------------------------------------------------ checks can fail
def test_a_wrong_formula_fails_the_check():
    """The routed check agrees with the right formula (m_blocks = 2 + 1 + 3 for counts 7, 3, 10 in blocks of
    4: reads_W = 6 N K) and catches one that reads each expert's weight once instead of once per M-block."""
    point = dict(T=10, E=3, k=2, N=5, K=7, B_M=4, B_N=2, B_K=3, counts=(7, 3, 10))
    right = RoutedCheck(model=grouped, name="moe.right", execute=counts_check.execute, grid=lambda full: [point],
                        quantities=("reads_W",), extra=("counts",))
    assert run_check(right).failed == 0
    assert grouped_for((7, 3, 10)).evaluate("reads_W", **{q: v for q, v in point.items() if q != "counts"}) == 6 * 35

    class OncePerExpert:                 # a wrong formula: 3 experts' weights read once each
        name = "moe.grouped"

        def evaluate(self, q, **p):
            return 3 * p["N"] * p["K"]

    wrong = Check(model=OncePerExpert(), execute=counts_check.execute, grid=lambda full: [point],
                  quantities=("reads_W",), extra=("counts",))
    assert run_check(wrong).failed == 1


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call,param", [
    (lambda: grouped_for((7, 3, 9)).evaluate(T=10, E=3, k=2), "counts"),            # sum 19 != 20
    (lambda: grouped_for((7, 3)).evaluate(T=5, E=3, k=2), "counts"),                 # wrong length
    (lambda: grouped_for((7, -3, 10)), "counts"),                                    # negative
    (lambda: grouped_for((1, 1, 18)).evaluate(T=10, E=3, k=2), "counts"),            # n_e > T
    (lambda: grouped.evaluate(T=10, E=3, k=4), "k"),                                 # k > E
    (lambda: run_moe(10, 3, 4, 5, 5, 4, 4, 4), "k"),
    (lambda: run_moe(10, 3, 2, 5, 5, 4, 4, 4, (7, 3, 9)), "counts"),
    (lambda: run_moe(10, 3, 2, 5, 5, 4, 4, 4, (7, -3, 16)), "counts"),
    (lambda: run_moe(10, 3, 2, 5, 5, 4, 4, 4, (7, 3)), "counts"),
    (lambda: moe.parse_counts("7,x,3"), "counts"),
    (lambda: moe.parse_counts(""), "counts"),
    (lambda: run_moe(10**6, 8, 2, 64, 64, 1, 64, 64), "BM"),                         # launched programs
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param


def test_sums_message_says_which_T_fits():
    with pytest.raises(BadInput, match="T = 10 fits"):
        grouped_for((7, 3, 10)).evaluate(T=12, E=3, k=2)
