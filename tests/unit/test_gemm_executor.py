"""The counting GEMM executor (numeric.gemm) and the LRU L2 simulator (numeric.l2cache).

Oracles: NumPy's own product, counts derived by hand, a hand-traced LRU sequence, the byte sizes of
hand-sized FP16 buffers.  The formulas are compared with these executors in verify.checks.gemm
(tests/test_verify_sweeps.py runs its sweeps); the tests at the end show that those checks fail on a
wrong formula (unmasked edge tiles, a dropped launch rule, GROUP_M ignored).
"""

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.gemm import block_buffers, launch_tiles, pid_to_tile, run_gemm
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
    for stages in (1, 2, 3):    # staged through the on-chip ring: neither the product nor a count changes
        deep = run_gemm(M, N, K, bm, bn, bk, group=group, wave=wave, real=True, A=A, B=B, stages=stages)
        np.testing.assert_array_equal(deep.C, run.C)
        assert deep.counts() == run.counts()


def test_block_buffers_by_hand():
    # 128 x 64 tiles, K-step 32, 3 stages, FP16 operands: a stage is (128 + 64) x 32 = 6144 elements,
    # 12,288 bytes; the ring 18,432 elements, 36,864 bytes; the FP32 accumulator 128 x 64 x 4 bytes
    b = block_buffers(128, 64, 32, 3)
    assert (b["A"].shape, b["B"].shape, b["acc"].shape) == ((3, 128, 32), (3, 32, 64), (128, 64))
    assert b["A"][0].size + b["B"][0].size == 6144 and b["A"][0].nbytes + b["B"][0].nbytes == 12288
    assert b["A"].nbytes + b["B"].nbytes == 36864 and b["acc"].nbytes == 32768

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
    (lambda: run_gemm(1, 1, 1, 1, 1, 1, stages=0), "stages"),
    (lambda: block_buffers(8, 8, 8, 1.5), "stages"),
    (lambda: run_gemm(4, 3, 2, 2, 2, 2, real=True, A=np.ones((2, 4))), "A"),     # transposed A
    (lambda: run_gemm(4, 3, 2, 2, 2, 2, real=True, B=np.ones((2, 4))), "B"),
    (lambda: run_gemm(4, 3, 2, 2, 2, 2, A=np.ones((4, 2))), "A"),                 # data in shape-only mode
])
def test_bad_input(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert str(e.value).startswith(param + ":") and e.value.param == param


def test_l2_result_has_no_hit_rate():
    """Dead code removed (issue 8): the simulator reports element counts, not a rate."""
    assert not hasattr(simulate_l2(8, 8, 8, 4, 4, 4, 1, 1, 10**4), "hit_rate")


def test_verify_gemm_pinned_points_agree():
    """verify.gemm's pinned points (issue 10's failures, each pinned tiling at its regimes' edges): the
    exact LRU count equals the simulation; the checks' default sweeps run in tests/sweeps/."""
    from verify.checks.gemm import lru_grid
    from verify.gemm import compare
    pts = lru_grid(False)
    assert len(pts) >= 30
    for p in pts:
        exact, sim = compare(p)
        assert exact == sim, p


def test_verify_gemm_reports_what_it_measured(capsys):
    from verify.gemm import l2_report
    assert l2_report(draws=5, seed=3) == 0
    out = capsys.readouterr().out
    counts = re.findall(r"== simulation at ([\d,]+) of ([\d,]+) points", out)
    assert len(counts) == 2 and all(a == b for a, b in counts) and counts[1] == ("5", "5")
    assert "exact" in out and out.rstrip().endswith("no disagreement")


def _gemm_check(name):
    from verify.registry import all_checks
    return next(c for c in all_checks() if c.name == name)


class _WrongModel:
    """A stand-in model whose ``evaluate`` changes one quantity of the real one (a deliberately wrong formula)."""

    def __init__(self, model, quantity, wrong):
        self.model, self.quantity, self.wrong, self.name = model, quantity, wrong, model.name

    def evaluate(self, quantity=None, **point):
        if quantity == self.quantity:
            return self.wrong(point)
        return self.model.evaluate(quantity, **point)


def test_gemm_checks_are_bound_to_the_models():
    """Every GEMM model has a Check whose points are named by the model's own parameters (plus the
    executor-only keys it declares), so ``plot`` can draw its executed points."""
    from symbolic import registry
    from verify.core import Check
    for name in ("gemm.tiled", "gemm.resources", "gemm.cosma", "gemm.l2"):
        checks = [c for c in _checks_of(name) if isinstance(c, Check)]
        assert checks, name
        params = {p.name for p in registry.get(name).params}
        for c in checks:
            for point in c.grid(False):
                assert set(point) - set(c.extra) <= params, (c.name, point)
                assert params - set(point) <= set(registry.get(name).defaults), (c.name, point)


def _checks_of(name):
    from verify.registry import checks_of
    return checks_of(name)


def test_tiled_check_catches_a_formula_without_masked_edges():
    """A formula that counts full edge tiles (no masking) must fail the executor check."""
    from verify.core import run_check

    def padded_reads(p):
        tm, tn, tk = -(-p["M"] // p["B_M"]), -(-p["N"] // p["B_N"]), -(-p["K"] // p["B_K"])
        return tn * tm * p["B_M"] * tk * p["B_K"]
    check = _gemm_check("gemm.tiled")
    rep = run_check(dataclasses.replace(check, model=_WrongModel(check.model, "reads_A", padded_reads)), seed=0)
    bad = rep.smallest_failure().point
    assert rep.failed > 0 and (bad["M"] % bad["B_M"] or bad["K"] % bad["B_K"])    # a partial edge tile


def test_resources_check_catches_a_stage_too_few():
    """Shared memory counted for s - 1 stages (the ring's slot for the next load forgotten) must fail."""
    from verify.core import run_check
    check = _gemm_check("gemm.resources")
    short = lambda p: (p["s"] - 1) * (p["B_M"] + p["B_N"]) * p["B_K"]     # noqa: E731
    rep = run_check(dataclasses.replace(check, model=_WrongModel(check.model, "smem_total", short)), seed=0)
    assert rep.failed == rep.points > 0


def test_launch_check_catches_a_missing_rule(monkeypatch):
    from tuning.schedule import launch_failures
    from verify.checks import gemm as gemm_checks
    from verify.core import run_check
    monkeypatch.setattr(gemm_checks, "launch_failures",
                        lambda c: [r for r in launch_failures(c) if r != "regs"])
    assert run_check(_gemm_check("gemm.launch"), seed=0).failed == 1200


def test_no_reuse_check_catches_row_major_for_grouped():
    """Ignoring GROUP_M in the wave formula must fail against the LRU simulation."""
    c = _gemm_check("gemm.l2.no_reuse")
    points = list(c.grid(False))
    assert all(c.formula(p) == c.execute(p) for p in points)
    wrong = [p for p in points if c.formula(dict(p, G_M=1)) != c.execute(p)]
    assert wrong and all(p["G_M"] > 1 for p in wrong)


def test_executor_and_simulator_load_no_symbolic_module():
    """The layering rule: numeric.gemm and numeric.l2cache are the independent side (checked in a fresh interpreter)."""
    import subprocess
    import sys
    code = ("import sys, numeric.gemm, numeric.l2cache; "
            "print(sorted(m for m in sys.modules if m == 'symbolic' or m.startswith('symbolic.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_l2_regime_checks_place_the_capacity_in_their_regime():
    """The exact-regime checks take ``capacity_frac`` and put the capacity inside the regime's range:
    at 0 the fits check runs at exactly M K + K N elements; the no-reuse range is empty with fewer
    than 3 K-steps, and its executor refuses such a point naming the key."""
    fits, no_reuse = _gemm_check("gemm.l2.fits"), _gemm_check("gemm.l2.no_reuse")
    p = dict(M=64, N=64, K=64, B_M=16, B_N=16, B_K=16, G_M=1, P=4)
    assert fits.execute(dict(p, capacity_frac=0)) == {"hbm_reads_fits": 64 * 64 + 64 * 64}
    with pytest.raises(BadInput) as e:
        no_reuse.execute(dict(p, K=32, capacity_frac=0))      # 2 K-steps of 16
    assert e.value.param == "capacity_frac"
