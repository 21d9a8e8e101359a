"""Executors and simulators state their cost: work beyond a budget is refused up front (BadInput naming
the parameter, the work and the keyword that raises the budget), and what is cheap still runs at any size."""

from __future__ import annotations

import numpy as np
import pytest

from base import validate
from base.errors import BadInput
from numeric import attention as ex
from numeric import gemm, littles, pingpong, pipeline
from numeric.memory import GlobalMemory, Phantom, _index_shape


# ------------------------------------------------------------------------------------ the one helper
def test_budget_message_names_the_work_the_budget_and_the_keyword():
    assert validate.budget("Bc", 10, 10, "steps", "max_steps") == 10
    with pytest.raises(BadInput) as exc:
        validate.budget("Bc", 11, 10, "key blocks", "max_steps", "take a larger Bc")
    assert exc.value.param == "Bc"
    assert str(exc.value) == "Bc: 11 key blocks exceed the budget of 10; take a larger Bc, or raise it with max_steps="
    with pytest.raises(BadInput, match="^max_steps:"):
        validate.budget("Bc", 1, 0, "key blocks", "max_steps")


# ------------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize("call,param,words", [
    (lambda: ex.count_flash_forward(10**9, 10**9, 64, 1, 1), "Bc", ["1,000,000,000 key blocks", "max_steps="]),
    (lambda: ex.count_flash_backward(10**9, 10**9, 64, 1, 1), "Bc", ["max_steps="]),
    (lambda: ex.count_flash_forward(10**7, 2**21, 64, 64, 1, order="fa1"), "Bc", ["2,097,152 key blocks"]),
    (lambda: ex.flash_forward(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), 2, 2, max_elements=15), "Nk",
     ["16 scores", "max_elements="]),
    (lambda: ex.standard_forward(np.ones((4, 2)), np.ones((5, 2)), np.ones((5, 2)), max_elements=19), "Nk",
     ["20 scores", "max_elements="]),
    (lambda: gemm.run_gemm(10**9, 10**9, 10**9, 1, 1, 1), "BM", ["program x K-step iterations", "max_steps="]),
    (lambda: gemm.run_gemm(64, 64, 10**7, 64, 64, 1), "BK", ["10,000,000 program x K-step", "take a larger BK"]),
    (lambda: gemm.run_gemm(10**5, 10**5, 10**5, 4096, 4096, 4096, real=True), "M", ["max_elements="]),
    (lambda: gemm.launch_tiles(10**6, 10**6), "tiles_n", ["1,000,000,000,000 tiles", "launch_order", "max_tiles="]),
    (lambda: pipeline.simulate(10**9, 3e-7, 2e-7, 1e-6, 4), "n", ["1,000,000,000 tiles", "max_tiles="]),
    (lambda: littles.simulate_requests(10**12, 16, 1e12, 1e-6), "n", ["requests", "max_requests="]),
    (lambda: pingpong.simulate_pingpong(10**8, 1.0, 1.0), "n_tiles", ["tiles", "max_tiles="]),
])
def test_runaway_work_is_refused_up_front(call, param, words):
    with pytest.raises(BadInput) as exc:
        call()
    assert exc.value.param == param
    assert all(w in str(exc.value) for w in words), str(exc.value)


def test_a_raised_budget_lets_the_run_through():
    t = ex.count_flash_forward(64, 64, 4, 1, 1, max_steps=64)
    assert t.flops == 4 * 64 * 64 * 4                       # 4 N Nk d, every block visited
    with pytest.raises(BadInput):
        ex.count_flash_forward(64, 64, 4, 1, 1, max_steps=63)
    assert pipeline.simulate(8, 1.0, 1.0, 1.0, 2, max_tiles=8).n == 8
    assert len(gemm.launch_tiles(4, 4, max_tiles=16)) == 16


# ------------------------------------------------------------------------------------ cheap at any size
def test_count_only_attention_beyond_int64():
    """Ten key blocks of 10**29 rows: no NumPy dimension error; by hand (non-causal fa2, T_r = T_c = 10):
    reads = N d (Q once) + T_r 2 N_k d (K, V per query block), writes = N d + N, flops = 4 N N_k d."""
    n, d = 10**30, 64
    t = ex.count_flash_forward(n, n, d, 10**29, 10**29)
    assert (t.reads, t.writes, t.flops) == (n * d + 10 * 2 * n * d, n * d + n, 4 * n * n * d)
    # causal, B_r = B_c = B, N = N_k: key block j meets T - j query blocks: flops 4 d B^2 sum (T - j) = 2 d B^2 T (T + 1)
    t = ex.count_flash_forward(n, n, d, 10**29, 10**29, causal=True)
    assert t.flops == 2 * d * 10**58 * 10 * 11
    s = ex.count_standard_forward(n, n, d)
    assert s.reads == 2 * n * d + 2 * n * n + n * d           # Q, K; S; P, V (docs/conventions.md §1.1)


def test_gemm_shape_only_beyond_int64_and_lazy_launch_order():
    r = gemm.run_gemm(10**30, 10**30, 10**30, 10**29, 10**29, 10**29)
    # 10 x 10 tiles, 10 K-steps; every tile of A is read once per tile column: M K T_n (and B: K N T_m)
    assert (r.reads_A, r.reads_B, r.writes) == (10**60 * 10, 10**60 * 10, 10**60)
    order = gemm.launch_order(10**6, 10**6, 8)                 # a generator: no list of 10**12 tiles
    assert [next(order) for _ in range(3)] == [gemm.pid_to_tile(p, 10**6, 10**6, 8) for p in range(3)]
    assert list(gemm.launch_order(5, 3, 2)) == gemm.launch_tiles(5, 3, 2)


@pytest.mark.parametrize("wave", [1, 3, 7])
def test_lazy_launch_order_keeps_the_counts(wave):
    requests = []
    r = gemm.run_gemm(100, 70, 33, 32, 16, 8, group=2, wave=wave, on_request=lambda *a: requests.append(a))
    # by hand: T_m = 4, T_n = 5, T_k = 5; A read once per tile column, B once per tile row
    assert (r.reads_A, r.reads_B, r.writes) == (100 * 33 * 5, 33 * 70 * 4, 100 * 70)
    assert len(requests) == r.requests == 2 * 4 * 5 * 5


def test_complex_gemm_input_is_refused():
    with pytest.raises(BadInput, match="^A:.*complex"):
        gemm.run_gemm(4, 4, 4, 2, 2, 2, real=True, A=np.ones((4, 4)) * 1j)


def test_pipeline_buffers_beyond_the_tile_count_change_nothing():
    """Tile i takes buffer i mod S: with S >= n every tile has its own, so S = 10**9 is S = n."""
    for n in (1, 2, 5):
        big = pipeline.simulate(n, 3e-7, 2e-7, 1e-6, 10**9)
        same = pipeline.simulate(n, 3e-7, 2e-7, 1e-6, n)
        assert big.makespan == same.makespan and list(big.finish) == list(same.finish)
        assert big.stages == 10**9                              # the run reports what was asked
    assert pipeline.simulate(1, 3e-7, 2e-7, 1e-6, 10**9).makespan == pytest.approx(1e-6 + 2e-7 + 3e-7)


# ------------------------------------------------------------------------------------ phantom indexing
@pytest.mark.parametrize("shape,idx", [
    ((5, 7), slice(2, None)), ((5, 7), (slice(None), None)), ((5, 7), (None, slice(1, 3))), ((5, 7), 3),
    ((5, 7), (slice(None, None, -2),)), ((5, 7), (Ellipsis, None)), ((5, 7), (slice(1, 4), 2)),
    ((5, 7), (slice(None), slice(2, 100))), ((6,), (slice(None), None)), ((6,), (None, slice(None))),
    ((6,), slice(3, None)), ((6,), Ellipsis), ((4, 3, 2), (Ellipsis, 1)), ((4, 3, 2), (slice(1, None, 2), Ellipsis)),
])
def test_phantom_indexing_matches_numpy(shape, idx):
    assert _index_shape(shape, idx) == np.empty(shape)[idx].shape
    assert Phantom(shape)[idx].shape == np.empty(shape)[idx].shape


def test_phantom_slices_beyond_int64():
    assert Phantom((10**30, 64))[10**29:].shape == (9 * 10**29, 64)
    assert Phantom((10**30,))[:, None].shape == (10**30, 1)


@pytest.mark.parametrize("shape,idx", [
    # block slices (the fast path), empty and clipped ones among them
    ((5, 7), slice(2, 4)), ((5, 7), slice(None)), ((5, 7), slice(3, 100)), ((5, 7), slice(6, 9)), ((5, 7), slice(4, 2)),
    ((5, 7), (slice(1, 3), slice(2, 9))), ((5, 7), (slice(None), slice(5, None))), ((5, 7), (slice(9, 12), slice(0, 1))),
    ((5, 7), (slice(1, 3),)), ((5, 7), ()), ((4, 3, 2), (slice(1, 3), slice(None, 2))),
    # the general path: negative bounds, steps, ints
    ((5, 7), slice(-3, None)), ((5, 7), (slice(0, -1), slice(1, 3))), ((5, 7), (slice(None, None, 2), slice(1, 3))),
    ((5, 7), (2, slice(1, 3))), ((5, 7), (slice(1, 3), 4)), ((5, 7), 4), ((5, 7), (slice(1, 3), slice(None, None, -1))),
])
def test_loads_and_stores_count_what_numpy_indexes(shape, idx):
    """Block slices take the fast path, anything else (negative bounds, steps, ints) the general one: the
    same counts as NumPy's indexing, in either mode."""
    want = np.empty(shape)[idx].size
    for real in (False, True):
        mem = GlobalMemory(real=real)
        a = mem.put("a", np.zeros(shape) if real else shape)
        tile = mem.load(a, idx)
        assert tile.shape == np.empty(shape)[idx].shape
        mem.store(a, idx, tile)
        assert (mem.tally.reads, mem.tally.writes) == (want, want)
