"""Executors under hostile input (issue 18): counts beyond int64, integer arrays, truthy flags, seeds,
float overflow in the simulators, page ids beyond the pool.

Every expected count is worked by hand from the loop structure at one block per axis (so the sum has
one term): flash forward with B_r = N, B_c = N_k reads Q, K, V once (3 N d); the standard forward reads
Q, K (S = Q K^T), S (softmax), P and V, i.e. 3 N d + 2 N^2 at N_k = N; one GEMV tile reads A and x
(M K + K); one GEMM tile reads A and B (M K + K N); decode with one head, one query row, one split reads
every key once (N_k d).
"""

from __future__ import annotations

import numpy as np
import pytest

from base.errors import BadInput
from numeric.attention import (count_flash_forward, count_standard_forward, flash_forward, reference_attention,
                               standard_forward)
from numeric.decode import run_decode
from numeric.gemm import run_gemm
from numeric.gemv import run_gemv
from numeric.littles import simulate_requests
from numeric.pingpong import simulate_pingpong
from numeric.pipeline import simulate

SIZES = (2 ** 63 - 1, 2 ** 63, 2 ** 63 + 1, 10 ** 30)


@pytest.mark.parametrize("n", SIZES)
def test_count_only_executors_are_exact_beyond_int64(n):
    d = 64
    assert count_flash_forward(n, n, d, n, n).reads == 3 * n * d
    assert count_standard_forward(n, n, d).reads == 3 * n * d + 2 * n * n
    assert run_gemv(n, n, n, n).reads == n * n + n
    assert run_gemm(n, n, n, n, n, n).reads == 2 * n * n
    assert run_decode(1, 1, 1, 1, n, d, d, n, 1).elements["reads_K"] == n * d


@pytest.mark.parametrize("n", SIZES + (2 ** 62 + 3,))
def test_decode_blocks_near_int64_do_not_wrap(n):
    """Two key blocks of 2**62 keys (or 10**25 at 10**30): every key read once, never a negative count."""
    B_n = 2 ** 62 if n < 10 ** 20 else 10 ** 25
    run = run_decode(1, 1, 1, 1, n, 4, 4, B_n, 2)
    assert run.elements["reads_K"] == run.elements["reads_V"] == 4 * n
    assert run.elements["reads_Q"] == 4 * 2                   # one query row of d = 4, loaded by each split


def test_decode_paged_table_reads_at_1e30():
    """10**6 key blocks of 10**24 keys on pages of 10**23 tokens: each block touches 10 pages."""
    run = run_decode(1, 1, 1, 1, 10 ** 30, 4, 4, 10 ** 24, 3, P=10 ** 23)
    assert run.elements["reads_table"] == 10 ** 7


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32])
def test_integer_arrays_compute_in_float64(dtype):
    """int8 products wrap around (100 * 100 = 16 in int8); the executors compute in float64 instead."""
    rng = np.random.default_rng(1)
    Q, K, V = (rng.integers(0, 100, (8, 4)).astype(dtype) for _ in range(3))
    ref, _ = reference_attention(Q.astype(float), K.astype(float), V.astype(float))
    assert np.allclose(standard_forward(Q, K, V).O, ref, atol=1e-12)
    assert np.allclose(flash_forward(Q, K, V, 4, 4).O, ref, atol=1e-12)
    A, x = rng.integers(0, 100, (6, 5)).astype(dtype), rng.integers(0, 100, 5).astype(dtype)
    assert np.array_equal(run_gemv(6, 5, 4, 4, real=True, A=A, x=x).y, A.astype(float) @ x.astype(float))
    B = rng.integers(0, 100, (5, 3)).astype(dtype)
    assert np.array_equal(run_gemm(6, 3, 5, 4, 4, 4, real=True, A=A, B=B).C, A.astype(float) @ B.astype(float))


def test_integers_beyond_float_exactness_are_refused():
    A = np.full((2, 2), 2 ** 60, dtype=np.int64)
    with pytest.raises(BadInput, match="^A: .*2\\*\\*53"):
        run_gemm(2, 2, 2, 2, 2, 2, real=True, A=A, B=np.ones((2, 2)))


@pytest.mark.parametrize("call", [
    lambda: count_flash_forward(8, 8, 4, 4, 4, causal="False"),
    lambda: flash_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), 2, 2, causal=0),
    lambda: reference_attention(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), causal="yes"),
    lambda: run_gemm(4, 4, 4, 2, 2, 2, real="yes"),
    lambda: run_gemv(4, 4, 2, 2, real=1),
    lambda: run_decode(1, 1, 1, 1, 8, 4, 4, 4, 1, packed="True"),
    lambda: simulate(4, 1.0, 1.0, 1.0, 2, issue_ahead="no"),
], ids=["count_flash", "flash", "reference", "gemm", "gemv", "decode", "pipeline"])
def test_flags_that_are_not_bools_are_refused(call):
    with pytest.raises(BadInput, match="must be True or False"):
        call()


@pytest.mark.parametrize("seed", ["0", 1.5, None, -1, [1]])
def test_seeds_are_named(seed):
    for call in (lambda: simulate(4, 1.0, 1.0, 1.0, 2, jitter=0.5, seed=seed),
                 lambda: simulate_requests(4, 16.0, 1.0, 1.0, jitter=0.5, seed=seed),
                 lambda: run_gemm(4, 4, 4, 2, 2, 2, real=True, seed=seed),
                 lambda: run_decode(1, 1, 1, 1, 8, 4, 4, 4, 1, seed=seed)):
        with pytest.raises(BadInput, match="^seed: "):
            call()


@pytest.mark.parametrize("call,name", [
    (lambda: simulate(10, 1e308, 1e308, 1e308, 2), "t_comp"),
    (lambda: simulate(10, 1.0, 1.0, 1e308, 2), "latency"),
    (lambda: simulate_requests(10, 1e308, 1e-300, 1.0), "request_bytes"),
    (lambda: simulate_pingpong(10, 1e308, 1e308), "t_mma"),
])
def test_simulated_times_that_overflow_are_refused(call, name):
    with pytest.raises(BadInput, match=f"^{name}: .*overflow"):
        call()


def test_finite_simulations_still_run():
    """Times near the float limit whose sum still fits are simulated, not refused."""
    assert np.isfinite(simulate(10, 1e300, 1e300, 1e300, 2).makespan)


def test_a_random_pool_is_sparse_in_the_page_ids():
    """Page 10**9 in the block table costs one page, not a pool of 10**9 pages; the output is the plain
    softmax attention of the random keys all the same, so compare with a table naming page 0."""
    far = run_decode(1, 2, 1, 1, 10, 4, 4, 4, 1, P=16, pages=[[10 ** 9]], real=True, seed=3)
    near = run_decode(1, 2, 1, 1, 10, 4, 4, 4, 1, P=16, pages=[[0]], real=True, seed=3)
    assert np.array_equal(far.O, near.O) and far.elements == near.elements
    with pytest.raises(BadInput, match="^k: page pool"):
        run_decode(1, 1, 1, 1, 10, 4, 4, 4, 1, P=16, pages=[[10 ** 9]], real=True, k=np.ones((1, 16, 1, 4)),
                   v=np.ones((1, 16, 1, 4)))
    with pytest.raises(BadInput, match="^pages: sequence 0"):
        run_decode(1, 1, 1, 1, 10, 4, 4, 4, 1, P=16, pages=[5])
