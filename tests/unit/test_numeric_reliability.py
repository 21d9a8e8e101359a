"""Executors under hostile input (issue 18): counts beyond int64, integer arrays, truthy flags, seeds,
float overflow in the simulators, page ids beyond the pool.

Every expected count is worked by hand from the loop structure at one block per axis (so the sum has
one term): flash forward with B_r = N, B_c = N_k reads Q, K, V once (3 N d); the standard forward reads
Q, K (S = Q K^T), S (softmax), P and V, i.e. 3 N d + 2 N^2 at N_k = N; one GEMV tile reads A and x
(M K + K); one GEMM tile reads A and B (M K + K N); decode with one head, one query row, one split reads
every key once (N_k d).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import numeric.decode as ndecode
import numeric.decode_window as nwindow
import numeric.gemm_scaled as nscaled
import numeric.gemm_splitk as nsplitk
import numeric.memory as nmemory
import numeric.mla as nmla
import numeric.moe as nmoe
import numeric.rows as nrows
from base.errors import BadInput
from numeric import fa3_blocks
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


# ------------------------------------------------------------------------------------------------------
# Issue 18, second audit.  Every count below is worked by hand from the loop at one block per axis:
#
# * MoE, T = n tokens, one expert, k = 1, BM = n, N = K = BN = BK = 64, combine_rows = n: two M-blocks are
#   launched (the buffer holds 2n - 1 entries), each loads num_post_pad (2); the live one loads its n sorted
#   ids, its expert id (1), n gathered rows of X (64 n), one 64 x 64 tile of W (4096) and n routed weights,
#   and stores n x 64 of C; the combine reads C (64 n) and writes out (64 n): reads 130 n + 4099, writes 128 n.
# * softmax (fused, M = n rows of N = 1, one block): reads x once (n), writes y once (n); the naive five
#   kernels read 5 M N + 2 M and write 3 M N + 2 M, so the unfused ratio is (8 n + 4 n) / 2 n = 6.
# * fused add + RMSNorm (N = 1): reads w (1), x, residual and residual again (3 n), writes residual and x
#   (2 n); the unfused pair reads 4 M N + N and writes 2 M N: ratio (6 n + 1) / (5 n + 1).
# * SwiGLU (N = 1): reads gate and up (2 n), writes n; unfused reads 3 n and writes 2 n: ratio 5 / 3.
# * block-scaled GEMM (mxfp8), one tile and one K-step (BK = K rounded up to the scale word's 128): reads the
#   A and B payloads once (2 n^2 elements), writes C (n^2); split-K serial with one slice and stream-K with
#   one tile likewise.
# * decode, one sequence of n keys in one block of n on pages of P = 1 token: every key once (d n = 4 n), and
#   a table entry per page (n).  MLA, one block of n tokens on one page of n: d_c n NoPE values, one entry.
# * windowed decode, L_q = N_k = n, one block: the window W_l = 0 still meets every block (the queries sit at
#   every position), so each key once (4 n) and every query row once (4 n).
# ------------------------------------------------------------------------------------------------------
BEYOND = (2 ** 63 - 1, 2 ** 63 + 1, 10 ** 30)


def _moe(n, **kw):
    return nmoe.run_moe(n, 1, 1, 64, 64, n, 64, 64, **kw)


def _bk(n):
    return 128 * -(-n // 128)


def _trips(r: range) -> int:
    return max(0, -(-(r.stop - r.start) // r.step)) if r.step > 0 else max(0, -(-(r.start - r.stop) // -r.step))


def _bounded_range(*args):
    """``range`` for an executor under test: a loop of more than 10**6 trips is work the run must not do."""
    r = range(*args)
    if _trips(r) > 10 ** 6:
        raise AssertionError(f"a loop of {_trips(r):,} trips: the work grows with a size")
    return r


def _forbid(monkeypatch, *targets):
    """Make each ``(owner, attribute)`` raise if called: the work a refusal up front never reaches."""
    def boom(*_a, **_k):
        raise AssertionError("reached work that an up-front refusal must prevent")
    for owner, attr in targets:
        monkeypatch.setattr(owner, attr, boom)


# ---- count-only executors beyond int64: exact, in a bounded number of loop trips ----------------------
EXACT = [
    ("moe", nmoe, lambda n: _moe(n, combine_rows=n).counts,
     lambda n: {"reads": 130 * n + 4099, "writes": 128 * n, "programs": 2}),
    ("softmax_fused", nrows, lambda n: nrows.softmax_fused(n, 1, n).counts,
     lambda n: {"reads": n, "writes": n, "ratio_unfused": 6}),
    ("fused_add_rms_norm", nrows, lambda n: nrows.fused_add_rms_norm(n, 1, n).counts,
     lambda n: {"reads": 3 * n + 1, "writes": 2 * n, "ratio_unfused": Fraction(6 * n + 1, 5 * n + 1)}),
    ("silu_and_mul", nrows, lambda n: nrows.silu_and_mul(n, 1, n).counts,
     lambda n: {"reads": 2 * n, "writes": n, "ratio_unfused": Fraction(5, 3)}),
    ("scaled", nscaled, lambda n: nscaled.run_scaled("mxfp8", n, n, n, n, n, _bk(n)).counts,
     lambda n: {"reads": 2 * n * n, "writes": n * n}),
    ("splitk_serial", nsplitk, lambda n: nsplitk.run_splitk_serial(n, n, n, n, n, n, 1).counts,
     lambda n: {"reads": 2 * n * n, "writes": n * n}),
    ("streamk", nsplitk, lambda n: nsplitk.run_streamk(n, n, n, n, n, n, 1).counts,
     lambda n: {"reads": 2 * n * n, "writes": n * n}),
    ("decode_paged", ndecode, lambda n: ndecode.run_decode(1, 1, 1, 1, n, 4, 4, n, 1, P=1).counts(),
     lambda n: {"reads_K": 4 * n, "reads_table": n}),
    ("mla", nmla, lambda n: nmla.run_mla(1, 1, 1, n, 64, 64, 64, n, 1, n).counts(),
     lambda n: {"reads_KV_nope": 64 * n, "reads_KV_rope": 64 * n, "reads_table": 1}),
    ("decode_window", nwindow, lambda n: nwindow.run_decode_window(1, 1, 1, n, n, 4, 4, n, 1, 0).counts(),
     lambda n: {"reads_K": 4 * n, "reads_Q": 4 * n}),
]


@pytest.mark.parametrize("n", BEYOND)
@pytest.mark.parametrize("name,module,run,want", EXACT, ids=[e[0] for e in EXACT])
def test_count_only_counts_beyond_int64_are_exact_and_bounded(monkeypatch, name, module, run, want, n):
    monkeypatch.setattr(module, "range", _bounded_range, raising=False)
    got = run(n)
    assert {q: got[q] for q in want(n)} == want(n)


# ---- runaway sizes: refused up front, naming the parameter, before any load or size-long structure ----
LOAD = (nmemory.GlobalMemory, "load")
REFUSED = [
    ("moe_T", lambda n: _moe(n), "T", [LOAD, (nmoe, "balanced")]),                    # the combine's row blocks
    ("moe_E", lambda n: nmoe.run_moe(8, n, 1, 64, 64, 64, 64, 64), "E", [LOAD, (nmoe, "balanced")]),
    ("softmax_fused", lambda n: nrows.softmax_fused(n, 1, 1), "B_R", [LOAD]),
    ("scaled", lambda n: nscaled.run_scaled("mxfp8", n, n, 64, 32, 32, 32), "BK", [LOAD]),
    ("splitk_parallel", lambda n: nsplitk.run_splitk_parallel(n, n, n, 1, 1, 1, 1), "B_M", [LOAD]),
    ("streamk", lambda n: nsplitk.run_streamk(n, n, n, 1, 1, n, 2 ** 20), "B_M", [LOAD, (nsplitk, "streamk_units")]),
    ("decode_B", lambda n: ndecode.run_decode(n, 1, 1, 1, 8, 4, 4, 4, 1), "B", [(ndecode, "_lengths")]),
    ("mla_B", lambda n: nmla.run_mla(n, 1, 1, 8, 64, 64, 64, 64, 1, 64), "B", [(nmla, "_lengths")]),
    ("decode_window_B", lambda n: nwindow.run_decode_window(n, 1, 1, 1, 8, 4, 4, 4, 1, 4), "B", []),
]


@pytest.mark.parametrize("n", BEYOND)
@pytest.mark.parametrize("name,run,param,forbidden", REFUSED, ids=[r[0] for r in REFUSED])
def test_runaway_sizes_are_refused_up_front(monkeypatch, name, run, param, forbidden, n):
    _forbid(monkeypatch, *forbidden)
    with pytest.raises(BadInput) as e:
        run(n)
    assert e.value.param == param, e.value


def _three_counts_then_boom():
    """A count generator for E = 2 that goes on: reading its fourth count is reading past E + 1."""
    yield from (2, 2, 0)
    raise AssertionError("read the counts past E + 1")


@pytest.mark.parametrize("call,param", [
    (lambda: nrows.softmax_fused(2 ** 20, 1, 1), "B_R"),          # fused: 2**20 programs; the naive five: 5 x
    (lambda: nrows.fused_add_rms_norm(2 ** 20, 1, 1), "B_R"),     # the unfused pair: 2 x 2**20
    (lambda: nrows.silu_and_mul(2 ** 20, 1, 1), "B_R"),
    (lambda: _moe(2 * 10 ** 6, combine_rows=1), "T"),             # 2 x 10**6 row blocks of the combine
    (lambda: nmoe.run_moe(4, 2, 1, 8, 8, 4, 8, 8, counts=_three_counts_then_boom()), "counts"),
])
def test_budgets_of_a_later_phase_are_checked_before_the_first_load(monkeypatch, call, param):
    """The unfused comparison and the combine are budgeted with the rest, not after the fused run or the GEMM
    has loaded its tiles; a count generator is read no further than E + 1 counts."""
    _forbid(monkeypatch, LOAD)
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param, e.value


def test_the_combine_budget_is_its_row_blocks_times_k():
    """The combine's budget is ceil(T / combine_rows) k loads (max_steps): T = 4096 in rows of 256 with k = 2
    is 32 of them; the verify sweep's largest point (T k = 4096) is far inside the default."""
    run = lambda **kw: nmoe.run_moe(4096, 4, 2, 8, 8, 4096, 8, 8, **kw)      # noqa: E731
    assert run(max_steps=32).counts["reads_combine"] == 4096 * 2 * 8
    with pytest.raises(BadInput, match="^T: 32 combine loads"):
        run(max_steps=31)
    assert _moe(4096).counts["writes_combine"] == 4096 * 64


# ---- flags: bool (and NumPy's bool_) only, never a truthy string or an int --------------------------
FLAGS = [
    ("softmax_fused.unfused", lambda v: nrows.softmax_fused(4, 4, unfused=v), "unfused"),
    ("fused_add_rms_norm.unfused", lambda v: nrows.fused_add_rms_norm(4, 4, unfused=v), "unfused"),
    ("silu_and_mul.unfused", lambda v: nrows.silu_and_mul(4, 4, unfused=v), "unfused"),
    ("softmax_naive.real", lambda v: nrows.softmax_naive(4, 4, real=v), "real"),
    ("rotary.real", lambda v: nrows.rotary_embedding(4, 2, 1, 4, real=v), "real"),
    ("scaled.real", lambda v: nscaled.run_scaled("mxfp8", 64, 64, 64, 32, 32, 32, real=v), "real"),
    ("quantize.weight", lambda v: nscaled.quantize("fp8_block", np.ones((4, 4)), weight=v), "weight"),
    ("moe.real", lambda v: nmoe.run_moe(4, 2, 1, 8, 8, 4, 8, 8, real=v), "real"),
    ("splitk.real", lambda v: nsplitk.run_splitk_serial(8, 8, 8, 4, 4, 4, 2, real=v), "real"),
    ("streamk.real", lambda v: nsplitk.run_streamk(8, 8, 8, 4, 4, 4, 2, real=v), "real"),
    ("mla.fp8", lambda v: nmla.run_mla(1, 1, 1, 8, 128, 64, 64, 4, 1, 4, fp8=v), "fp8"),
    ("decode_window.packed", lambda v: nwindow.run_decode_window(1, 2, 1, 1, 8, 4, 4, 4, 1, 4, packed=v), "packed"),
    ("memory.real", lambda v: nmemory.GlobalMemory(real=v), "real"),
    ("fa3.n_block.is_causal", lambda v: fa3_blocks.n_block_min_max(8, 8, 0, 4, 4, is_causal=v), "is_causal"),
    ("fa3.n_block.pack_gqa", lambda v: fa3_blocks.n_block_min_max(8, 8, 0, 4, 4, pack_gqa=v), "pack_gqa"),
    ("fa3.m_block.is_local", lambda v: fa3_blocks.m_block_min_max(8, 8, 0, 4, 4, is_local=v), "is_local"),
    ("fa3.kernel_window", lambda v: fa3_blocks.kernel_window(8, 8, is_causal=v), "is_causal"),
    ("fa3.tile_size.softcap", lambda v: fa3_blocks.tile_size_fwd_sm90(128, 128, False, False, 1, softcap=v),
     "softcap"),
]


@pytest.mark.parametrize("name,call,param", FLAGS, ids=[f[0] for f in FLAGS])
def test_every_flag_takes_a_bool_and_refuses_the_rest(name, call, param):
    """bool and NumPy's bool_ run; 'False' (truthy: it used to run the other branch), 'True', 0, 1 and None
    are refused naming the flag."""
    for ok in (False, np.bool_(False), np.True_):
        call(ok)
    for bad in ("False", "True", 0, 1, None):
        with pytest.raises(BadInput) as e:
            call(bad)
        assert e.value.param == param and "must be True or False" in str(e.value), (bad, e.value)


# ---- the simulators: the overflowing parameter named, a value beyond the float range shown short -----
@pytest.mark.parametrize("call,name", [
    (lambda: simulate_requests(10, 1.0, 1.0, 1.0, jitter=1e308), "jitter"),
    (lambda: simulate_requests(10, 1.0, 1.0, 1e10, jitter=1e300), "jitter"),      # jitter x latency overflows
    (lambda: simulate(10, 1.0, 1.0, 1.0, 2, jitter=1e308), "jitter"),
    (lambda: simulate(10, 1.0, 1.0, 1e308, 2, jitter=1e308), "latency"),          # latency alone overflows
    (lambda: simulate_requests(10, 1.0, 1.0, 1e308, jitter=1e308), "latency"),
    (lambda: simulate(10, 1e308, 1.0, 1.0, 2, jitter=1e306), "t_comp"),           # the jitter's share is small
])
def test_overflow_names_the_parameter_whose_share_overflows(call, name):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == name and "overflow" in str(e.value), e.value


BEYOND_FLOAT = "is beyond a float's range (about 1.8e+308)"


@pytest.mark.parametrize("call,name,message", [
    (lambda: simulate(10, 10 ** 400, 1, 1, 2), "t_comp", f"1.00e+400 {BEYOND_FLOAT}"),
    (lambda: simulate(10, 1, 1, 1, 2, jitter=-10 ** 400), "jitter", f"-1.00e+400 {BEYOND_FLOAT}"),
    (lambda: simulate_requests(10, Fraction(10 ** 400, 3), 1.0, 1.0), "request_bytes", f"3.33e+399 {BEYOND_FLOAT}"),
    (lambda: simulate_pingpong(10, 1.0, 2 ** 1100), "t_exp", f"1.36e+331 {BEYOND_FLOAT}"),
    (lambda: simulate(10, float("inf"), 1, 1, 2), "t_comp", "must be finite, got inf"),      # not finite at all
    (lambda: simulate_pingpong(10, np.float64("nan"), 1.0), "t_mma", "must be finite, got"),
])
def test_a_time_beyond_the_float_range_is_named_and_shown_short(call, name, message):
    """10**400 is finite: every simulator (one validator) says it is beyond a float's range, in a short form,
    not 'must be finite' with its 401 digits; inf and nan are still not finite."""
    with pytest.raises(BadInput) as e:
        call()
    msg = str(e.value)
    assert e.value.param == name and message in msg, msg
    assert len(msg) < 120 and "0000000000" not in msg


def test_default_pages_refuses_a_pool_it_cannot_draw():
    """NumPy draws an empty permutation of 2**63 - 1 pages without a word: the table would be silently empty."""
    with pytest.raises(BadInput, match="^lengths: 9,223,372,036,854,775,807 pages to draw"):
        ndecode.default_pages([2 ** 63 - 1], 1)
    with pytest.raises(BadInput, match="^P: "):
        ndecode.default_pages([8], 0)
    assert sorted(p for lst in ndecode.default_pages([5, 9], 4) for p in lst) == [0, 1, 2, 3, 4]
