"""gemv.tiled, the recipe's proof (docs/adding-a-model.md): the executor against an element-by-element
brute-force count, the formula against the closed form derived by hand, real output against NumPy,
bad input refused naming the parameter."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.gemv import run_gemv
from symbolic.models.gemv import B_K, B_M, K, M, gemv_tiled
from verify.checks.gemv import gemv as gemv_check
from verify.core import run_check


def brute_force(M_, K_, BM, BK):
    """Walk every padded position of every tile and K-step; a position counts when the mask lets it
    through (inside A, inside x, inside y)."""
    reads = writes = flops = 0
    for i in range(-(-M_ // BM)):
        for k in range(-(-K_ // BK)):
            for r, c in product(range(BM), range(BK)):
                if i * BM + r < M_ and k * BK + c < K_:
                    reads += 1          # A[i BM + r, k BK + c]
                    flops += 2
            for c in range(BK):
                if k * BK + c < K_:
                    reads += 1          # x[k BK + c]
        for r in range(BM):
            if i * BM + r < M_:
                writes += 1             # y[i BM + r]
    return {"reads": reads, "writes": writes, "flops": flops}


# ------------------------------------------------------------------ executor vs brute force
@pytest.mark.parametrize("real", [False, True])
@pytest.mark.parametrize("M_,K_,BM,BK", [(1, 1, 1, 1), (3, 5, 8, 8), (5, 7, 2, 3), (16, 16, 4, 4),
                                         (17, 9, 4, 4), (7, 30, 7, 8), (1, 40, 3, 1), (40, 1, 1, 3)])
def test_executor_counts_equal_brute_force(M_, K_, BM, BK, real):
    run = run_gemv(M_, K_, BM, BK, real=real)
    assert {q: getattr(run, q) for q in ("reads", "writes", "flops")} == brute_force(M_, K_, BM, BK)
    assert run.reads_A == M_ * K_                       # every A element exactly once


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(1, 24), st.integers(1, 24), st.integers(1, 10), st.integers(1, 10))
@example(1, 1, 1, 1)
@example(24, 24, 10, 10)
def test_executor_counts_equal_brute_force_drawn(M_, K_, BM, BK):
    got = run_gemv(M_, K_, BM, BK).counts()
    want = brute_force(M_, K_, BM, BK)
    assert {q: got[q] for q in want} == want


def test_count_only_runs_sizes_no_array_holds():
    # 2**40 + 1 rows: 1025 tile rows of 2**30 (the last one row); hand count: M K + 1025 K
    M_, K_ = 2**40 + 1, 2**33 - 1
    run = run_gemv(M_, K_, 2**30, 2**27)
    assert run.y is None
    assert (run.reads, run.writes, run.flops) == (M_ * K_ + 1025 * K_, M_, 2 * M_ * K_)
    # beyond int64: 10 tile rows of 10**29, 10 K-steps; hand count: M K + 10 K
    n = 10**30
    run = run_gemv(n, n, 10**29, 10**29)
    assert (run.reads, run.writes, run.flops, run.reads_x) == (n * n + 10 * n, n, 2 * n * n, 10 * n)


# ------------------------------------------------------------------ formula vs hand closed form
def test_formula_equals_hand_closed_form():
    hand = {"reads": M * K + sp.ceiling(M / B_M) * K, "writes": M, "flops": 2 * M * K}
    for q, e in hand.items():
        assert sp.simplify(gemv_tiled[q] - e) == 0, q
    assert sp.simplify(gemv_tiled["total"] - (M * K + sp.ceiling(M / B_M) * K + M)) == 0
    # FP16 intensity: 2 M K FLOPs over 2 bytes per element moved
    assert sp.simplify(gemv_tiled["intensity"] - 2 * M * K / (2 * (M * K + sp.ceiling(M / B_M) * K + M))) == 0


def test_divisible_form_leading_term_and_lower_bound():
    div = gemv_tiled.divisible()
    assert sp.simplify(div["reads"] - (M * K + M * K / B_M)) == 0       # M = B_M t: x read t = M/B_M times
    assert sp.simplify(div["writes"] - M) == 0
    assert sp.simplify(gemv_tiled.leading() - M * K) == 0                # B_M <= M, B_K <= K
    (bound,) = gemv_tiled.lower_bounds.values()
    assert sp.simplify(bound - (M * K + K + M)) == 0


@pytest.mark.parametrize("point,want", [
    # by hand: reads = M K + ceil(M/B_M) K, writes = M, flops = 2 M K
    ({"M": 5, "K": 7, "B_M": 2, "B_K": 3}, {"reads": 35 + 3 * 7, "writes": 5, "flops": 70}),
    ({"M": 4096, "K": 4096, "B_M": 64, "B_K": 128}, {"reads": 4096 * 4096 + 64 * 4096, "writes": 4096,
                                                     "flops": 2 * 4096 * 4096}),
    ({"M": 3, "K": 5, "B_M": 8, "B_K": 8}, {"reads": 15 + 5, "writes": 3, "flops": 30}),   # = compulsory
])
def test_formula_at_hand_points(point, want):
    assert {q: gemv_tiled.evaluate(q, **point) for q in want} == want


def test_one_tile_row_attains_the_compulsory_traffic():
    for M_, K_ in ((1, 1), (3, 5), (64, 9)):
        pt = {"M": M_, "K": K_, "B_M": M_, "B_K": 4}
        assert gemv_tiled.evaluate("total", **pt) == M_ * K_ + K_ + M_


def test_intensity_below_one_flop_per_byte():
    from fractions import Fraction
    for pt in ({"M": 1, "K": 1, "B_M": 1, "B_K": 1}, {"M": 10**6, "K": 10**6, "B_M": 10**6, "B_K": 1}):
        assert gemv_tiled.evaluate("intensity", **pt) < Fraction(1)


# ------------------------------------------------------------------ real output
@pytest.mark.parametrize("M_,K_,BM,BK", [(1, 1, 1, 1), (5, 7, 2, 3), (33, 65, 8, 16), (64, 64, 64, 64)])
def test_real_output_equals_numpy(M_, K_, BM, BK):
    rng = np.random.default_rng(M_ * 1000 + K_)
    A = rng.integers(-8, 9, size=(M_, K_)).astype(float)      # small integers: every sum is exact
    x = rng.integers(-8, 9, size=K_).astype(float)
    run = run_gemv(M_, K_, BM, BK, real=True, A=A, x=x)
    assert np.array_equal(run.y, A @ x)
    normal = run_gemv(M_, K_, BM, BK, real=True, seed=3)      # the executor's own data: A, then x
    rng3 = np.random.default_rng(3)
    A3 = rng3.standard_normal((M_, K_))
    x3 = rng3.standard_normal(K_)
    np.testing.assert_allclose(normal.y, A3 @ x3, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ the check
def test_check_agrees_on_its_grid():
    rep = run_check(gemv_check, use_hypothesis=False)
    assert rep.points > 0 and rep.failed == 0, rep.smallest_failure()
    assert gemv_check.model is gemv_tiled


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs,param", [
    ({"M": 0, "K": 4, "B_M": 1, "B_K": 1}, "M"),
    ({"M": 4, "K": 2.5, "B_M": 1, "B_K": 1}, "K"),
    ({"M": 4, "K": 4, "B_M": True, "B_K": 1}, "B_M"),
    ({"M": 4, "K": 4, "B_M": 1, "B_K": -3}, "B_K"),
    ({"M": 4, "K": 4, "B_M": 1, "B_K": 1, "real": True, "A": np.ones((4, 5))}, "A"),
    ({"M": 4, "K": 4, "B_M": 1, "B_K": 1, "real": True, "x": np.ones(4, dtype=complex)}, "x"),
    ({"M": 4, "K": 4, "B_M": 1, "B_K": 1, "A": np.ones((4, 4))}, "A"),          # arrays need real mode
    ({"M": 4, "K": 4, "B_M": 1, "B_K": 1, "real": "yes"}, "real"),
])
def test_executor_bad_input_names_the_parameter(kwargs, param):
    with pytest.raises(BadInput) as e:
        run_gemv(**kwargs)
    assert e.value.param == param


def test_over_budget_work_is_refused_up_front():
    with pytest.raises(BadInput) as e:                       # 10**6 x 10**6 steps: refused before any loop
        run_gemv(10**12, 10**12, 10**6, 10**6 // 2)
    assert e.value.param == "B_K" and "max_steps" in str(e.value)
    with pytest.raises(BadInput) as e:                       # 2**13 x 2**13 doubles would be allocated
        run_gemv(2**14, 2**13, 2**14, 2**13, real=True)
    assert e.value.param == "M" and "max_elements" in str(e.value)
    assert run_gemv(2**14, 2**13, 2**14, 2**13).reads == 2**27 + 2**13       # count-only: fine


def test_formula_bad_input_names_the_parameter():
    with pytest.raises(BadInput) as e:
        gemv_tiled.evaluate("reads", M=0, K=4, B_M=1, B_K=1)
    assert e.value.param == "M"
    with pytest.raises(BadInput) as e:
        gemv_tiled.evaluate("reads", M=4, K=4, BM=1, B_K=1)
    assert e.value.param == "BM" and "B_M" in str(e.value)
