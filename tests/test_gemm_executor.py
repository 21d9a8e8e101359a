"""The counting GEMM executor (numeric.gemm) and the LRU L2 simulator (numeric.l2cache).

Oracles: NumPy's own product, counts derived by hand, a hand-traced LRU sequence.  The formulas are
compared with these executors in verify.gemm (tests/test_verify_sweeps.py runs its sweeps); the tests at
the end show that those checks fail on a wrong formula (unmasked edge tiles, a dropped launch rule,
GROUP_M ignored).
"""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from numeric.gemm import launch_tiles, pid_to_tile, run_gemm
from numeric.l2cache import LRUCache, simulate_l2


@pytest.mark.parametrize("M,N,K,bm,bn,bk,group,wave", [
    (1, 1, 1, 1, 1, 1, 1, 1), (100, 70, 33, 32, 16, 8, 1, 1), (100, 70, 33, 32, 16, 8, 4, 5),
    (7, 9, 300, 16, 16, 64, 8, 3), (64, 64, 64, 64, 64, 64, 1, 1), (5, 200, 17, 2, 32, 4, 2, 7),
])
def test_real_mode_multiplies(M, N, K, bm, bn, bk, group, wave):
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    run = run_gemm(M, N, K, bm, bn, bk, group=group, wave=wave, real=True, A=A, B=B)
    np.testing.assert_allclose(run.C, A @ B, rtol=1e-10, atol=1e-10)


def test_counts_by_hand():
    # tm = 4, tn = 5, tk = 5 (see tests/test_gemm_formulas.py for the derivation)
    run = run_gemm(100, 70, 33, 32, 16, 8)
    assert (run.reads_A, run.reads_B, run.writes, run.flops, run.flops_padded) == (16500, 9240, 7000, 462000, 819200)
    assert run.requests == 2 * 4 * 5 * 5            # an A and a B request per tile per K-step


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.integers(1, 60), st.integers(1, 20), st.integers(1, 20),
       st.integers(1, 20), st.sampled_from([1, 2, 4, 8]), st.integers(1, 9))
@example(1, 1, 1, 20, 20, 20, 1, 1)
def test_modes_and_orders_agree(M, N, K, bm, bn, bk, group, wave):
    """Shape-only and real mode count the same; the launch order and the waves change no count."""
    base = run_gemm(M, N, K, bm, bn, bk).counts()
    assert run_gemm(M, N, K, bm, bn, bk, group=group, wave=wave).counts() == base
    assert run_gemm(M, N, K, bm, bn, bk, group=group, wave=wave, real=True).counts() == base
    assert base["writes"] == M * N and base["flops"] == 2 * M * N * K


def test_launch_order_is_triton_grouping():
    assert launch_tiles(3, 2, 2) == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    assert launch_tiles(2, 3, 1) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    for tm, tn, g in ((7, 5, 4), (8, 8, 8), (1, 9, 8)):
        assert sorted(launch_tiles(tm, tn, g)) == [(i, j) for i in range(tm) for j in range(tn)]
    assert pid_to_tile(9, 7, 5, 4) == (1, 2)        # group 0 = rows 0-3: pid 9 -> row 9 % 4, column 9 // 4


def test_lru_by_hand():
    c = LRUCache(10)
    seq = [("a", 4), ("b", 4), ("a", 4), ("c", 4), ("b", 4), ("a", 4)]
    # a miss, b miss, a hit (order b a), c miss evicts b (order a c), b miss evicts a, a miss
    assert [c.access(k, s) for k, s in seq] == [False, False, True, False, False, False]
    assert (c.misses, c.miss_elements, c.hits) == (5, 20, 1)
    big = LRUCache(3)
    assert big.access("x", 5) is False and big.used == 0   # larger than the cache: fetched, not kept


def test_l2_fits_is_compulsory():
    r = simulate_l2(100, 70, 90, 16, 8, 8, 4, 6, capacity=10**6)
    assert r.hbm_reads == 100 * 90 + 90 * 70


def test_l2_one_tile_per_wave_no_reuse():
    # 32 x 32 x 32 in 16^3 tiles, one program per wave, a cache of one K-step's two chunks (512):
    # tile (0,0) then (0,1): A chunk (0, k) was last used two K-steps ago (4 chunks in between) -> evicted.
    # Every tile fetches its A panel (16 x 32) and B panel (32 x 16): 4 x 1024.
    r = simulate_l2(32, 32, 32, 16, 16, 16, 1, 1, capacity=512)
    assert r.hbm_reads == 4 * (16 * 32 + 32 * 16)
    # the whole problem fits: A and B once
    assert simulate_l2(32, 32, 32, 16, 16, 16, 1, 1, capacity=2048).hbm_reads == 2 * 32 * 32


def test_grouping_helps_when_a_wave_spans_a_row():
    # 4 x 16 tiles; waves of 16: row-major wave = 1 row x 16 columns, grouped (4) wave = 4 rows x 4 columns
    args = (64, 256, 256, 16, 16, 32)
    cap = 16 * 32 * 20                                # one K-step of a wave, not a whole wave
    rm = simulate_l2(*args, 1, 16, cap).hbm_reads
    gm = simulate_l2(*args, 4, 16, cap).hbm_reads
    assert gm < rm


@pytest.mark.parametrize("call,param", [
    (lambda: run_gemm(0, 1, 1, 1, 1, 1), "M"),
    (lambda: run_gemm(1, 1, 1, 1, 0, 1), "BN"),
    (lambda: run_gemm(1, 1, 1, 1, 1, 1, group=0), "group"),
    (lambda: run_gemm(1, 1, 1, 1, 1, 1, wave=-1), "wave"),
    (lambda: LRUCache(0), "capacity"),
    (lambda: launch_tiles(3, 2, 0), "group"),
    (lambda: run_gemm(4, 3, 2, 2, 2, 2, real=True, A=np.ones((2, 4))), "A"),     # transposed A
    (lambda: run_gemm(4, 3, 2, 2, 2, 2, real=True, B=np.ones((2, 4))), "B"),
    (lambda: run_gemm(4, 3, 2, 2, 2, 2, A=np.ones((4, 2))), "A"),                 # data in shape-only mode
])
def test_bad_input(call, param):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(param + ":")


def test_l2_worst_ratio_within_the_stated_bound():
    # the checks' default sweeps run in tests/test_verify_sweeps.py
    from verify.gemm import ESTIMATE_FACTOR, l2_worst_ratio
    worst, at = l2_worst_ratio()
    assert 1 <= worst <= ESTIMATE_FACTOR, at
    assert worst < 1.5, at          # verify.gemm's docstring: "about 1.2" over the pinned points


def test_verify_gemm_reports_the_worst_l2_ratio(capsys):
    from verify.gemm import main
    assert main(["--draws", "5", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    ratios = [float(x) for x in re.findall(r"worst ratio ([\d.]+)", out)]
    assert len(ratios) == 2 and all(1 <= r <= 3 for r in ratios)


def _gemm_check(name):
    from verify.gemm import checks
    return next(c for c in checks() if c.name == name)


def test_tiled_check_catches_a_formula_without_masked_edges():
    """A formula that counts full edge tiles (no masking) must fail the executor check."""
    import dataclasses

    from verify.core import run_check

    def padded_reads(p):
        tm, tn, tk = -(-p["M"] // p["BM"]), -(-p["N"] // p["BN"]), -(-p["K"] // p["BK"])
        good = _gemm_check("gemm.tiled").formula(p)
        return dict(good, reads_A=tn * tm * p["BM"] * tk * p["BK"])
    rep = run_check(dataclasses.replace(_gemm_check("gemm.tiled"), formula=padded_reads), seed=0)
    bad = rep.smallest_failure().point
    assert rep.failed > 0 and (bad["M"] % bad["BM"] or bad["K"] % bad["BK"])    # a partial edge tile


def test_launch_check_catches_a_missing_rule():
    import dataclasses

    from symbolic.schedule import launch_failures
    from verify.core import run_check
    no_regs = dataclasses.replace(_gemm_check("gemm.launch"),
                                  formula=lambda p: {"reasons": [r for r in launch_failures(tuple(p.values())) if r != "regs"]})
    assert run_check(no_regs, seed=0).failed == 1200


def test_no_reuse_check_catches_row_major_for_grouped():
    """Ignoring GROUP_M in the wave formula must fail against the LRU simulation."""
    c = _gemm_check("gemm.l2.no_reuse")
    points = list(c.grid(False))
    assert all(c.formula(p) == c.execute(p) for p in points)
    wrong = [p for p in points if c.formula(dict(p, group=1)) != c.execute(p)]
    assert wrong and all(p["group"] > 1 for p in wrong)


def test_executor_and_simulator_load_no_symbolic_module():
    """The layering rule: numeric.gemm and numeric.l2cache are the independent side (checked in a fresh interpreter)."""
    import subprocess
    import sys
    code = ("import sys, numeric.gemm, numeric.l2cache; "
            "print(sorted(m for m in sys.modules if m == 'symbolic' or m.startswith('symbolic.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
