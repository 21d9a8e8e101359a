"""Tiled GEMM formulas (symbolic.models.gemm), the L2 launch-order counts (symbolic.models.gemm_l2)
and the time model's L2 figures (tuning.l2_estimate: the exact LRU count, or a stated upper bound).
The exact counts' own derivation tests are in test_gemm_l2_exact.py.

Oracles: a brute-force loop over tiles written here (itself checked against hand-derived numbers),
closed forms derived by hand, the COSMA bound's definition, and set-based enumeration of the launch
order for the wave panels.
"""

import math

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from symbolic import registry
from symbolic.models import gemm, gemm_l2
from symbolic.models.gemm import B_K, B_M, B_N, K, M, N
from numeric.l2cache import simulate_l2
from tuning import l2_estimate


def brute_counts(M, N, K, bm, bn, bk):
    """Walk the loop nest and add up what each tile moves (the oracle)."""
    reads_a = reads_b = writes = flops = padded = 0
    for i in range(0, M, bm):
        for j in range(0, N, bn):
            rows, cols = min(bm, M - i), min(bn, N - j)
            for k in range(0, K, bk):
                depth = min(bk, K - k)
                reads_a += rows * depth
                reads_b += depth * cols
                flops += 2 * rows * cols * depth
                padded += 2 * bm * bn * bk
            writes += rows * cols
    return {"reads": reads_a + reads_b, "writes": writes, "flops": flops, "flops_padded": padded,
            "reads_A": reads_a, "reads_B": reads_b}


def test_oracle_against_hand_numbers():
    # M=100, N=70, K=33, tiles 32x16, K-step 8: tm=4, tn=5, tk=5
    # A is read once per tile column: 5 * 100 * 33; B once per tile row: 4 * 33 * 70
    # padded FLOPs: 2 * (4*32) * (5*16) * (5*8)
    assert brute_counts(100, 70, 33, 32, 16, 8) == {
        "reads": 16500 + 9240, "writes": 7000, "flops": 462000, "flops_padded": 819200,
        "reads_A": 16500, "reads_B": 9240}


@pytest.mark.parametrize("M,N,K,bm,bn,bk", [
    (1, 1, 1, 1, 1, 1), (1, 1, 1, 256, 128, 64), (100, 70, 33, 32, 16, 8), (128, 128, 128, 32, 32, 32),
    (257, 129, 65, 128, 64, 32), (16, 4096, 512, 16, 16, 64), (3, 5, 7, 2, 2, 2),
])
def test_formula_equals_brute_force(M, N, K, bm, bn, bk):
    got = gemm.gemm_traffic(M, N, K, bm, bn, bk)
    want = brute_counts(M, N, K, bm, bn, bk)
    assert {k: got[k] for k in want} == want
    assert got["total"] == want["reads"] + want["writes"]


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 120), st.integers(1, 120), st.integers(1, 120), st.integers(1, 40), st.integers(1, 40),
       st.integers(1, 40))
@example(1, 1, 1, 1, 1, 1)
@example(64, 64, 64, 64, 64, 64)
@example(65, 63, 1, 64, 64, 64)
def test_formula_equals_brute_force_sweep(M, N, K, bm, bn, bk):
    got = gemm.gemm_traffic(M, N, K, bm, bn, bk)
    want = brute_counts(M, N, K, bm, bn, bk)
    assert {k: got[k] for k in want} == want


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 5000))
def test_partition_sum_identity(size, block):
    assert sum(min(block, size - i * block) for i in range(-(-size // block))) == gemm.partition_sum(size, block)


def test_exact_at_huge_sizes():
    big = 3 * 10**9 + 7
    v = gemm.gemm_traffic(big, big, big, 128, 128, 64)
    t = -(-big // 128)
    assert v["reads"] == 2 * t * big * big and isinstance(v["reads"], int)


def test_divisible_form_and_asymptotics():
    m = registry.get("gemm.tiled")
    div = m.divisible()
    assert sp.simplify(div["reads"] - M * N * K * (1 / B_M + 1 / B_N)) == 0
    assert sp.simplify(div["flops_padded"] - 2 * M * N * K) == 0
    assert sp.simplify(div["intensity"] - 2 * M * N * K / (2 * (M * N * K * (1 / B_M + 1 / B_N) + M * N))) == 0
    assert sp.simplify(m.theta() - (M * N * K / B_M + M * N * K / B_N + M * N)) == 0


def test_parameters_are_typed_as_shown():
    """The user's names: M, N, K (no suffix dialect), printed in LaTeX as typed."""
    assert [p.name for p in registry.get("gemm.tiled").params] == ["M", "N", "K", "B_M", "B_N", "B_K"]
    assert [p.name for p in registry.get("gemm.resources").params] == ["B_M", "B_N", "B_K", "s", "w_y", "w_x"]
    assert [p.name for p in registry.get("gemm.l2").params] == ["M", "N", "K", "B_M", "B_N", "G_M", "P"]
    assert [p.name for p in registry.get("gemm.l2.lru").params] == ["M", "N", "K", "B_M", "B_N", "B_K", "G_M", "P",
                                                                   "capacity"]
    assert sp.latex(M * N * K / B_M) == r"\frac{K M N}{B_M}"


def test_intensity_by_hand():
    # 4096^3 with 128 x 128 tiles: reads 2 * 32 * 4096^2, writes 4096^2 -> 65 * 4096^2 elements,
    # 2 * 4096^3 FLOP over 130 * 4096^2 bytes = 4096 / 65 FLOP/byte
    from fractions import Fraction
    assert gemm.gemm_traffic(4096, 4096, 4096, 128, 128, 32)["intensity"] == Fraction(4096, 65)


@pytest.mark.parametrize("bm,bn,bk,s,wy,wx,stage,total,regs", [
    (256, 128, 32, 4, 4, 2, 12288, 49152, 168),   # the lecture's optimum: 64 x 64 warp tile -> 128 + 40
    (128, 128, 32, 3, 2, 2, 8192, 24576, 168),
    (256, 128, 128, 2, 4, 2, 49152, 98304, 168),
    (16, 16, 64, 5, 1, 1, 2048, 10240, 48),       # 16 x 16 accumulators / 32 = 8
    (128, 64, 32, 1, 1, 1, 6144, 6144, 296),
])
def test_resources_by_hand(bm, bn, bk, s, wy, wx, stage, total, regs):
    v = registry.get("gemm.resources").evaluate(B_M=bm, B_N=bn, B_K=bk, s=s, w_y=wy, w_x=wx)
    assert (v["smem_stage"], v["smem_total"], v["smem_bytes"], v["regs_per_thread"]) == (stage, total, 2 * total, regs)


def test_cosma_bound_definition_and_gap():
    S = gemm.S
    assert sp.simplify(gemm.cosma_bound() - (2 * M * N * K / sp.sqrt(S) + M * N)) == 0
    # 4096^3, 256 x 128 x 32, 4 stages: S_tile = 32768 + 4 * 384 * 32 = 81920
    traffic = 4096 * 4096 * 32 + 4096 * 4096 * 16 + 4096 * 4096
    bound = 2 * 4096**3 / math.sqrt(81920) + 4096 * 4096
    assert gemm.cosma_gap(4096, 4096, 4096, 256, 128, 32, 4) == pytest.approx(traffic / bound, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 5000), st.sampled_from([16, 32, 64, 128, 256]),
       st.sampled_from([16, 32, 64, 128, 256]), st.sampled_from([16, 32, 64, 128]), st.integers(1, 5))
def test_tiled_schedule_never_beats_cosma(M, N, K, bm, bn, bk, s):
    """The bound holds for any schedule with the fast memory the tile uses."""
    assert gemm.cosma_gap(M, N, K, bm, bn, bk, s) >= 1 - 1e-12


@pytest.mark.parametrize("call,param", [
    (lambda: gemm.gemm_traffic(0, 1, 1, 1, 1, 1), "M"),
    (lambda: gemm.gemm_traffic(1, 1, 1, 1, 1, -2), "B_K"),
    (lambda: gemm.gemm_traffic(1, 1.5, 1, 1, 1, 1), "N"),
    (lambda: gemm.cosma_gap(8, 8, 8, 8, 8, 8, 0), "s"),
    (lambda: gemm_l2.wave_reads(8, 8, 8, 8, 8, 0, 4), "G_M"),
    (lambda: l2_estimate.hbm_reads(8, 8, 8, 8, 8, 8, 1, 4, 0), "capacity"),
    (lambda: l2_estimate.hbm_reads(8, 8, 8, 8, 8, 8, 1, 0, 100), "P"),
    (lambda: gemm_l2.launch_order(3, 2, 0), "G_M"),
    (lambda: gemm_l2.step_footprint(8, 8, 8, 8, 8, 1, -1), "P"),
    (lambda: registry.get("gemm.l2").evaluate(P=0), "P"),
    (lambda: registry.get("gemm.tiled").evaluate(M=0), "M"),
    (lambda: registry.get("gemm.resources").evaluate(s=2.5), "s"),
])
def test_bad_input(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert str(e.value).startswith(param + ":") and e.value.param == param


def test_registered():
    assert {"gemm.tiled", "gemm.resources", "gemm.cosma", "gemm.l2", "gemm.l2.lru"} <= set(registry.names())


def test_registered_l2_model_by_hand():
    """``show gemm.l2`` evaluates the wave sum (by its closed form): the prefill numbers of test_wave_reads_by_hand."""
    K = 4096
    v = registry.get("gemm.l2").evaluate(M=512, N=14336, K=K, B_M=256, B_N=128, G_M=1, P=132)
    assert v == {"hbm_reads_no_reuse": (2 * 256 + 112 * 128) * K + (1 * 256 + 92 * 128) * K,
                 "hbm_reads_fits": 512 * K + K * 14336}
    v = registry.get("gemm.l2").evaluate(M=512, N=14336, K=K, B_M=256, B_N=128, G_M=4, P=132)
    assert v["hbm_reads_no_reuse"] == (2 * 256 + 66 * 128) * K + (2 * 256 + 46 * 128) * K


# ------------------------------------------------------------------------------------- L2 counts (exact)
def brute_order(tm, tn, group):
    """Triton's grouped order written out: walk the groups, in each go down its rows column by column."""
    out = []
    for first in range(0, tm, group):
        rows = range(first, min(first + group, tm))
        for n in range(tn):
            out.extend((m, n) for m in rows)
    return out


def test_launch_order_by_hand():
    assert gemm_l2.launch_order(3, 2, 2) == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    assert gemm_l2.launch_order(2, 3, 1) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 25), st.integers(1, 25), st.sampled_from([1, 2, 3, 4, 8]), st.integers(1, 70))
@example(1, 1, 1, 1)
@example(8, 8, 8, 64)
@example(9, 5, 4, 7)
def test_wave_panels_by_enumeration(tm, tn, group, wave):
    order = brute_order(tm, tn, group)
    assert gemm_l2.launch_order(tm, tn, group) == order
    want = []
    for s in range(0, tm * tn, wave):
        rows = {m for m, _ in order[s:s + wave]}
        cols = {n for _, n in order[s:s + wave]}
        want.append((len(rows), len(cols), tm - 1 in rows, tn - 1 in cols))
    assert gemm_l2.wave_panels(tm, tn, group, wave) == want
    assert gemm_l2.panel_sums(tm, tn, group, wave) == tuple(sum(w[i] for w in want) for i in range(4))


@pytest.mark.parametrize("tm,tn,group,wave", [(200, 7, 4, 9), (64, 33, 8, 5), (150, 40, 1, 13), (97, 3, 8, 2)])
def test_panel_sums_periodic_path(tm, tn, group, wave):
    """Many waves inside full groups: the periodic shortcut agrees with enumeration."""
    order = brute_order(tm, tn, group)
    tot = [0, 0, 0, 0]
    for s in range(0, tm * tn, wave):
        rows = {m for m, _ in order[s:s + wave]}
        cols = {n for _, n in order[s:s + wave]}
        for i, v in enumerate((len(rows), len(cols), tm - 1 in rows, tn - 1 in cols)):
            tot[i] += v
    assert gemm_l2.panel_sums(tm, tn, group, wave) == tuple(tot)


def test_wave_reads_by_hand():
    # 512 x 14336 x 4096 with 256 x 128 tiles (tm = 2, tn = 112), waves of 132:
    # row-major: wave 1 = row 0 (112 tiles) + 20 tiles of row 1 -> 2 A panels, 112 B panels;
    #            wave 2 = 92 tiles of row 1 -> 1 A panel, 92 B panels
    K = 4096
    rm = (2 * 256 + 112 * 128) * K + (1 * 256 + 92 * 128) * K
    assert gemm_l2.wave_reads(512, 14336, K, 256, 128, 1, 132) == rm
    # GROUP_M = 4 (a group is both rows): wave 1 = 66 columns x 2 rows, wave 2 = 46 columns x 2 rows
    gm = (2 * 256 + 66 * 128) * K + (2 * 256 + 46 * 128) * K
    assert gemm_l2.wave_reads(512, 14336, K, 256, 128, 4, 132) == gm
    assert gemm_l2.compulsory_reads(512, 14336, K) == 512 * K + K * 14336
    # a partial last panel counts only its valid rows: M = 300 -> panels of 256 and 44 rows
    assert gemm_l2.wave_reads(300, 128, 10, 256, 128, 1, 1) == (256 + 128) * 10 + (44 + 128) * 10


@pytest.fixture(scope="module")
def wave_formula():
    from symbolic.evaluate import compile_exact
    return compile_exact(gemm_l2.wave_reads_formula())


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 120), st.integers(1, 120), st.integers(1, 50), st.sampled_from([4, 8, 16, 32]),
       st.sampled_from([4, 8, 16, 32]), st.sampled_from([1, 2, 3, 4, 8]), st.integers(1, 30))
@example(512, 14336 // 16, 4, 256, 128, 1, 132)
@example(300, 128, 10, 256, 128, 1, 1)
def test_sympy_wave_formula_equals_counts(wave_formula, M, N, K, bm, bn, group, wave):
    """The SymPy sum over waves and the vectorised count are one derivation on two back ends."""
    got = wave_formula(M=M, N=N, K=K, B_M=bm, B_N=bn, G_M=group, P=wave)
    assert got == gemm_l2.wave_reads(M, N, K, bm, bn, group, wave)


# ------------------------------------------------------------------------------------- L2 in the time model (tuning)
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 150), st.integers(1, 150), st.integers(1, 100), st.sampled_from([4, 8, 16, 32]),
       st.sampled_from([4, 8, 16, 32]), st.sampled_from([8, 16, 32]), st.sampled_from([1, 2, 4, 8]), st.integers(1, 30),
       st.integers(1, 40000))
@example(64, 64, 64, 16, 16, 16, 1, 4, 1)
@example(1936, 784, 128, 32, 128, 64, 1, 15, 111_296)       # issue 10: the old estimate was 9.35x too high
def test_time_model_reads_are_what_they_say(M, N, K, bm, bn, bk, group, wave, capacity):
    """Against the LRU simulation: "exact" figures equal it, "upper bound" figures are at least it; and the
    simulation sits between the two exact regimes' counts whenever one step fits."""
    (v,), (kind,) = l2_estimate.hbm_reads_many(M, N, K, [bm], [bn], [bk], [group], [wave], capacity, kinds=True)
    sim = simulate_l2(M, N, K, bm, bn, bk, group, wave, capacity).hbm_reads
    assert (kind == l2_estimate.EXACT and v == sim) or (kind == l2_estimate.UPPER_BOUND and v >= sim)
    steps_fit = gemm_l2.step_footprint(M, N, bm, bn, bk, group, wave) * min(bk, K) // bk <= capacity
    assert kind == (l2_estimate.EXACT if steps_fit or M * K + K * N <= capacity else l2_estimate.UPPER_BOUND)
    if steps_fit:
        assert gemm_l2.compulsory_reads(M, N, K) <= sim <= gemm_l2.wave_reads(M, N, K, bm, bn, group, wave)


def test_time_model_beyond_its_budget_uses_the_no_reuse_bound(monkeypatch):
    """Beyond TIME_MODEL_WAVES waves the figure is the wave sum, an upper bound of the LRU (one step fits)."""
    args = (100, 70, 90, 16, 8, 8, 4, 6)
    cap = 9000                                    # the LRU keeps much across waves: 21,600 of 65,520
    exact = l2_estimate.hbm_reads(*args, cap)
    assert exact == simulate_l2(*args, cap).hbm_reads
    monkeypatch.setattr(l2_estimate, "TIME_MODEL_WAVES", 2)
    (v,), (kind,) = l2_estimate.hbm_reads_many(100, 70, 90, [16], [8], [8], [4], [6], cap, kinds=True)
    assert kind == l2_estimate.UPPER_BOUND and v == gemm_l2.wave_reads(100, 70, 90, 16, 8, 4, 6) > exact


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.integers(1, 400), st.integers(1, 60),
       st.lists(st.tuples(st.sampled_from([4, 8, 16, 32]), st.sampled_from([4, 8, 16, 32]), st.sampled_from([8, 16, 64]),
                          st.sampled_from([1, 2, 4, 8]), st.integers(1, 40)), min_size=1, max_size=8),
       st.integers(1, 60000))
@example(400, 400, 60, [(4, 4, 8, 8, 1), (32, 32, 16, 1, 40), (4, 8, 8, 2, 3)], 30000)     # 10,000 waves
@example(1, 1, 1, [(4, 4, 8, 1, 1)], 1)
def test_many_tilings_at_once_equal_one_at_a_time(M, N, K, tilings, capacity):
    """Pricing several tilings in one pass (the time model's way) changes no tiling's figure or kind."""
    one = [l2_estimate.hbm_reads_many(M, N, K, [bm], [bn], [bk], [g], [w], capacity, kinds=True)
           for bm, bn, bk, g, w in tilings]
    values, kinds = l2_estimate.hbm_reads_many(M, N, K, *zip(*tilings), capacity, kinds=True)
    assert values == [v[0][0] for v in one] and kinds == [v[1][0] for v in one]


def test_many_bad_input():
    with pytest.raises(BadInput, match="^B_N:"):
        l2_estimate.hbm_reads_many(8, 8, 8, [8], [0], [8], [1], [1], 10)
    with pytest.raises(BadInput, match="^P:"):
        l2_estimate.hbm_reads_many(8, 8, 8, [8], [8], [8], [1], [1.5], 10)
    with pytest.raises(BadInput, match="^B_M:"):
        l2_estimate.hbm_reads_many(8, 8, 8, [8, 8], [8], [8], [1], [1], 10)
