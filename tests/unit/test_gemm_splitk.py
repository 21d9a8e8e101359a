"""Split-K and stream-K: executors against brute-force counts and NumPy, formulas against hand-derived cases and
CUTLASS's own numbers, bad input naming its parameter."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.gemm import run_gemm
from numeric.gemm_splitk import run_splitk_parallel, run_splitk_serial, run_streamk, streamk_units
from symbolic.models.gemm import tiled
from symbolic.models.gemm_splitk import (splitk, splitk_serial, splitk_slices_parallel, splitk_slices_serial,
                                         streamk, streamk_fixups, streamk_schedule)
from verify.checks.gemm_splitk import SPLITK_EDGE, STREAMK_EDGE


def cdiv(a, b):
    return -(-a // b)


# ------------------------------------------------------------------------------------- brute force
def brute_parallel(M, N, K, BM, BN, BK, S):
    """Element by element: slice z of CUTLASS's parallel split-K covers K elements [z g BK, (z+1) g BK) (the last
    to K), g = floor(floor(K/BK)/S); every tile of every slice stores its valid elements; the reduction reads
    them all and writes C."""
    g = (K // BK) // S
    reads = writes = ws = 0
    for z in range(S):
        k_lo, k_hi = z * g * BK, (K if z == S - 1 else (z + 1) * g * BK)
        for i0 in range(0, M, BM):
            for j0 in range(0, N, BN):
                rows, cols = min(BM, M - i0), min(BN, N - j0)
                reads += (rows + cols) * (k_hi - k_lo)
                ws += rows * cols
    reads += ws
    writes = ws + M * N
    return {"reads": reads, "writes": writes, "writes_ws": ws, "reads_ws": ws}


def brute_streamk_fixups(T, tk, P):
    """Who owns each K-iteration of the stream-K range, from the scheduler's rules written out again here
    (nominal even shares, big units first, then a boundary near a tile edge moved to it); fixups = owners per
    tile minus one."""
    full, waves = T // P, cdiv(T, P)
    if full == waves or tk <= 8:
        return 0
    sk = T - max(full - 1, 0) * P
    u = min(P, sk * tk // 8)
    I = sk * tk
    bounds = [0]
    for g in range(u):
        bounds.append(bounds[-1] + I // u + (1 if g < I % u else 0))

    def moved(b):
        o = b % tk
        return b - o if o < 8 else (b + tk - o if o > tk - 8 else b)
    bounds = [moved(b) for b in bounds]
    owner = [None] * I
    for g in range(u):
        for it in range(bounds[g], bounds[g + 1]):
            owner[it] = g
    return sum(len(set(owner[t * tk:(t + 1) * tk])) - 1 for t in range(sk))


# ------------------------------------------------------------------------------------- executors
@pytest.mark.parametrize("p", SPLITK_EDGE[:-1])
def test_parallel_executor_is_the_brute_force_count(p):
    M, N, K, BM, BN, BK, S, P = p
    r = run_splitk_parallel(M, N, K, BM, BN, BK, S, P)
    assert {k: r[k] for k in ("reads", "writes", "writes_ws", "reads_ws")} == brute_parallel(M, N, K, BM, BN, BK, S)


def test_serial_executor_by_hand():
    # K = 100, B_K = 16: t_k = 7, S_k = 4 -> c = 2: slices 2, 2, 2, 1 K-steps; one 8 x 8 tile
    r = run_splitk_serial(8, 8, 100, 8, 8, 16, 4, 132)
    assert r.cta_steps == [2, 2, 2, 1]
    assert r["reads_C"] == 3 * 64 and r["writes_C"] == 4 * 64 and r["fixups"] == 3
    assert r["reads"] == 8 * 100 + 100 * 8 + 3 * 64


def test_parallel_slices_by_hand():
    # K = 100, B_K = 16: floor(100/16) = 6, S_k = 4 -> 1 K-step for slices 0..2, the last covers [48, 100): 4
    assert splitk_slices_parallel(100, 16, 4) == [1, 1, 1, 4]
    assert run_splitk_parallel(8, 8, 100, 8, 8, 16, 4, 132).cta_steps == [1, 1, 1, 4]
    # more slices than K-steps: the first slices are empty (they still store zero partials)
    assert splitk_slices_parallel(30, 8, 7) == [0, 0, 0, 0, 0, 0, 4]
    assert splitk_slices_serial(30, 8, 7) == [1, 1, 1, 1, 0, 0, 0]


def test_serial_with_one_slice_is_the_data_parallel_kernel():
    for M, N, K, BM, BN, BK in [(100, 70, 333, 32, 16, 16), (1, 1, 1, 1, 1, 1), (257, 129, 65, 128, 64, 32)]:
        dp = run_gemm(M, N, K, BM, BN, BK).counts()
        r = run_splitk_serial(M, N, K, BM, BN, BK, 1, 132)
        assert {k: r[k] for k in dp} == dp
        assert splitk_serial.evaluate("total", M=M, N=N, K=K, B_M=BM, B_N=BN, B_K=BK, S_k=1) == \
            tiled.evaluate("total", M=M, N=N, K=K, B_M=BM, B_N=BN, B_K=BK)


def test_streamk_tile_split_across_three_ctas():
    # one 128 x 128 tile, 1536 / 64 = 24 K-steps, 3 CTAs: 3 units of 8 iterations, boundaries at 8 and 16
    sk, units = streamk_units(1, 24, 3)
    assert (sk, units) == (1, [(0, 8), (8, 8), (16, 8)])
    r = run_streamk(128, 128, 1536, 128, 128, 64, 3)
    assert r["fixups"] == 2 and r["writes_ws"] == r["reads_ws"] == 2 * 128 * 128
    assert r["iters_max"] == 8
    assert streamk.evaluate("fixups", M=128, N=128, K=1536, B_M=128, B_N=128, B_K=64, P_s=3) == 2


def test_streamk_more_ctas_than_tiles():
    # 2 tiles of 16 K-steps on 7 CTAs: no full wave, both tiles streamed; u = min(7, 32 // 8) = 4 units of 8:
    # boundaries 8, 16, 24 -> 8 and 24 split a tile in half, 16 is the tile edge
    assert streamk_schedule(256, 128, 1024, 128, 128, 64, 7) == {
        "tiles": 2, "k_tiles": 16, "sk_tiles": 2, "dp_tiles": 0, "sk_units": 4, "sk_iters": 32}
    r = run_streamk(256, 128, 1024, 128, 128, 64, 7)
    assert r["fixups"] == 2 and r["sk_units"] == 4
    v = streamk.evaluate(M=256, N=128, K=1024, B_M=128, B_N=128, B_K=64, P_s=7)
    assert v["fixups"] == 2 and v["waves_dp"] == 1 and v["wave_efficiency_dp"] == Fraction(2, 7)


def test_streamk_hybrid_matches_cutlass_comment():
    # tile_scheduler_params.h (select_decomposition_mode): "sk_tiles = (waves <= 2) ? total_tiles :
    # (sm_count + (total_tiles % sm_count))"; 576 tiles on 132 SMs -> 132 + 48 = 180
    v = streamk.evaluate(M=3072, N=3072, K=4096, B_M=128, B_N=128, B_K=64, P_s=132)
    assert v["sk_tiles"] == 132 + 576 % 132 and v["tiles"] - v["sk_tiles"] == 576 - 180
    v = streamk.evaluate(M=1536, N=1024, K=4096, B_M=128, B_N=128, B_K=64, P_s=66)   # 96 tiles: < 2 waves
    assert v["sk_tiles"] == 96


@given(st.integers(1, 60), st.integers(1, 60), st.integers(1, 70))
@example(1, 24, 3)
@example(2, 16, 7)
@example(576, 64, 132)
@example(5, 15, 3)          # t_k < 16: never split
@example(7, 9, 7)           # P_s divides T
@settings(max_examples=300, deadline=None)
def test_streamk_fixups_are_the_brute_force(T, tk, P):
    s = streamk_schedule(T, 1, tk, 1, 1, 1, P)
    assert streamk_fixups(s["sk_iters"], s["sk_units"], s["k_tiles"]) == brute_streamk_fixups(T, tk, P)
    assert run_streamk(T, 1, tk, 1, 1, 1, P)["fixups"] == brute_streamk_fixups(T, tk, P)


def _real_inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((M, K)), rng.standard_normal((K, N))


@pytest.mark.parametrize("runner,extra", [(run_splitk_parallel, (3, 5)), (run_splitk_serial, (3, 5)),
                                          (run_streamk, (4,))])
@pytest.mark.parametrize("shape", [(37, 29, 300, 16, 8, 8), (5, 7, 1000, 4, 4, 8), (64, 64, 256, 16, 16, 8),
                                   (1, 1, 1, 1, 1, 1), (20, 30, 17, 32, 32, 4)])
def test_real_mode_is_a_times_b_and_counts_as_count_only(runner, extra, shape):
    A, B = _real_inputs(*shape[:3])
    real = runner(*shape, *extra, real=True, A=A, B=B)
    assert np.max(np.abs(real.C - A @ B)) <= 1e-12 * max(1.0, np.max(np.abs(A @ B)))
    assert real.counts == runner(*shape, *extra).counts


@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 200), st.sampled_from([4, 8, 16]),
       st.sampled_from([4, 8, 16]), st.sampled_from([2, 4, 8]), st.integers(1, 9), st.integers(1, 30))
@example(7, 9, 30, 4, 4, 8, 7, 5)
@example(16, 16, 99, 8, 8, 4, 2, 3)
@settings(max_examples=60, deadline=None)
def test_integer_inputs_give_exactly_a_times_b(M, N, K, BM, BN, BK, S, P):
    rng = np.random.default_rng(M * 1000 + N)
    A, B = rng.integers(-3, 4, (M, K)).astype(float), rng.integers(-3, 4, (K, N)).astype(float)
    for r in (run_splitk_parallel(M, N, K, BM, BN, BK, S, P, real=True, A=A, B=B),
              run_splitk_serial(M, N, K, BM, BN, BK, S, P, real=True, A=A, B=B),
              run_streamk(M, N, K, BM, BN, BK, P, real=True, A=A, B=B)):
        assert np.array_equal(r.C, A @ B)


# ------------------------------------------------------------------------------------- formulas
def test_parallel_formula_by_hand():
    # decode GEMM: M = 16, N = K = 4096, 16 x 128 x 64 tiles, S_k = 4, P = 132: 32 tiles x 4 slices = 128 CTAs,
    # one wave of 16 K-steps (64 / 4); workspace 4 M N FP32 written and read
    v = splitk.evaluate(M=16, N=4096, K=4096, B_M=16, B_N=128, B_K=64, S_k=4, P=132)
    MN = 16 * 4096
    assert v["writes_ws"] == v["reads_ws"] == 4 * MN and v["writes_C"] == MN
    assert v["reads_A"] == 32 * 16 * 4096 and v["reads_B"] == 4096 * 4096
    assert v["bytes"] == 2 * (32 * 16 * 4096 + 4096 * 4096 + MN) + 4 * 8 * MN
    assert (v["ctas"], v["waves"], v["wave_steps"]) == (128, 1, 16)
    assert v["wave_efficiency"] == Fraction(32 * 64, 132 * 16)
    # data-parallel on the same machine: 32 CTAs of 64 steps, efficiency 32/132
    dp = splitk_serial.evaluate(M=16, N=4096, K=4096, B_M=16, B_N=128, B_K=64, S_k=1, P=132)
    assert dp["wave_efficiency"] == Fraction(32, 132) and dp["wave_steps"] == 64


def test_parallel_waves_straddling_the_last_slice():
    # 10 tiles x 3 slices on P = 7: pids 0..29 in 5 waves; the last slice is pids 20..29 (waves 2, 3, 4);
    # q = floor(floor(50/5)/3) = 3 steps, the last slice 10 - 6 = 4: 3 + 3 + 4 + 4 + 4 = 18
    v = splitk.evaluate(M=10, N=1, K=50, B_M=1, B_N=1, B_K=5, S_k=3, P=7)
    assert (v["waves"], v["wave_steps"]) == (5, 18)


def test_serial_waves_by_hand():
    # 10 tiles x 3 slices of c = ceil(10/3) = 4 steps (4, 4, 2) on P = 7: waves start at pids 0, 7, 14, 21, 28,
    # their first slices 0, 0, 1, 2, 2: 4 + 4 + 4 + 2 + 2 = 16
    v = splitk_serial.evaluate(M=10, N=1, K=50, B_M=1, B_N=1, B_K=5, S_k=3, P=7)
    assert (v["waves"], v["wave_steps"]) == (5, 16)


def test_divisible_forms():
    import sympy as sp
    from symbolic.models.gemm import B_K, B_M, B_N, K, M, N
    from symbolic.models.gemm_splitk import S_k
    d = splitk.divisible()
    assert sp.simplify(d["writes"] - (S_k * M * N + M * N)) == 0
    assert sp.simplify(d["reads"] - (K * M * N / B_N + K * M * N / B_M + S_k * M * N)) == 0
    d = splitk_serial.divisible()
    assert sp.simplify(d["reads"] - (K * M * N / B_N + K * M * N / B_M + (S_k - 1) * M * N)) == 0
    del B_K


def test_exact_at_10_to_the_30():
    n = 10**30
    p = dict(M=n, N=n, K=n, B_M=10**29, B_N=10**29, B_K=10**27, P_s=7)
    assert streamk.evaluate("fixups", **p) == run_streamk(n, n, n, 10**29, 10**29, 10**27, 7)["fixups"]
    v = splitk.evaluate(M=n, N=n, K=n, B_M=128, B_N=128, B_K=64, S_k=8, P=132)
    assert v["writes_ws"] == 8 * n * n and v["reads_A"] == cdiv(n, 128) * n * n


# ------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("model,param", [(splitk, "S_k"), (splitk_serial, "S_k"), (splitk, "P"),
                                         (streamk, "P_s")])
def test_bad_parameters_name_themselves_in_the_formulas(model, param):
    with pytest.raises(BadInput) as e:
        model.evaluate(**{param: 0})
    assert e.value.param == param


@pytest.mark.parametrize("call,param", [
    (lambda: run_splitk_parallel(8, 8, 8, 8, 8, 8, 0), "S_k"),
    (lambda: run_splitk_serial(8, 8, 8, 8, 8, 8, -1), "S_k"),
    (lambda: run_splitk_parallel(8, 8, 8, 8, 8, 8, 2, 0), "P"),
    (lambda: run_streamk(8, 8, 8, 8, 8, 8, 0), "P_s"),
    (lambda: run_streamk(8, 8, 8, 8, 8, 0, 3), "B_K"),
    (lambda: run_streamk(8, 8, 8, 8, 8, 8, 3, real="yes"), "real"),
    (lambda: run_splitk_parallel(8, 8, 8, 8, 8, 8, 2, A=np.zeros((8, 8))), "A"),
    (lambda: run_splitk_parallel(8, 8, 8, 8, 8, 8, 2, real=True, A=np.zeros((8, 9))), "A"),
    (lambda: run_splitk_parallel(4096, 4096, 4096, 16, 16, 16, 64, real=True), "B_M"),
])
def test_bad_executor_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param
