"""The schedule space, its launch rules and the analytic time model (tuning.schedule).

References are independent of the code under test: the launch rules are re-derived here by brute
force from the lecture's text; the time model is checked against hand-derived closed forms at
points where one regime is known to bind, and against bounds no schedule can beat.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from symbolic.hardware import H100
from tuning import schedule as S

#: the knobs in the models' names (symbolic.models.gemm: B_M, B_N, B_K, s; gemm_l2: G_M; warps = w_y x w_x)
VALUES = {"B_M": [16, 32, 64, 128, 256], "B_N": [16, 32, 64, 128, 256], "B_K": [16, 32, 64, 128],
          "warps": [1, 2, 4, 8], "s": [1, 2, 3, 4, 5], "G_M": [1, 4, 8]}
GRID = {1: (1, 1), 2: (1, 2), 4: (2, 2), 8: (4, 2)}


def brute_reasons(bm, bn, bk, w, s, g):
    """The lecture's three rules, written out again (227 KiB = 232,448 bytes)."""
    wy, wx = GRID[w]
    out = []
    if s * (bm + bn) * bk * 2 > 227 * 1024:
        out.append("smem")
    if bm / wy < 16 or bn / wx < 8:
        out.append("mma")
    if (bm / wy) * (bn / wx) / 32 + 40 > 255:
        out.append("regs")
    return out


# ------------------------------------------------------------------------------------- the space
def test_space_order_and_size():
    assert list(S.SPACE) == ["B_M", "B_N", "B_K", "warps", "s", "G_M"]
    assert {k: list(v) for k, v in S.SPACE.items()} == VALUES
    cfgs = S.all_configs()
    assert len(cfgs) == 6000 == len(set(cfgs))
    assert [f for f in S.GemmConfig.__dataclass_fields__] == list(VALUES)
    assert cfgs[0].as_tuple() == (16, 16, 16, 1, 1, 1) and cfgs[-1].as_tuple() == (256, 256, 128, 8, 5, 8)


def test_launch_reasons_match_brute_force():
    counts = {"smem": 0, "mma": 0, "regs": 0}
    launchable = 0
    for t in itertools.product(*VALUES.values()):
        want = brute_reasons(*t)
        assert S.launch_failures(t) == want, t
        assert S.static_valid(S.GemmConfig(*t)) == (not want)
        launchable += not want
        for r in want:
            counts[r] += 1
    assert launchable == 3744
    assert counts == {"smem": 384, "mma": 900, "regs": 1200}


@pytest.mark.parametrize("cfg,reasons", [
    ((256, 128, 32, 8, 4, 1), []),
    ((256, 128, 128, 8, 4, 1), ["smem"]),          # 4 * 384 * 128 * 2 = 393,216 B > 232,448 B
    ((256, 128, 128, 8, 3, 1), ["smem"]),          # 294,912 B
    ((256, 128, 128, 8, 2, 1), []),                # 196,608 B
    ((256, 128, 32, 8, 4, 1), []),
    ((256, 128, 32, 4, 4, 1), ["regs"]),           # 128 x 64 warp tile: 256 + 40 registers
    ((256, 256, 32, 8, 4, 1), ["regs"]),           # 64 x 128: 296
    ((16, 128, 32, 8, 4, 1), ["mma"]),             # 16 / 4 rows per warp
    ((32, 128, 32, 8, 4, 1), ["mma"]),
    ((64, 16, 32, 8, 4, 1), []),                   # 16 x 8: exactly one mma
    ((256, 256, 128, 1, 5, 1), ["smem", "regs"]),
])
def test_pinned_reasons(cfg, reasons):
    assert S.launch_failures(cfg) == reasons


# ------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,param", [
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 1), 0, 8, 8), "M"),
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 1), 8, -1, 8), "N"),
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 1), 8, 8, 2.5), "K"),
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 2), 8, 8, 8), "G_M"),
    (lambda: S.GemmConfig(512, 128, 32, 8, 4, 1), "B_M"),
    (lambda: S.GemmConfig(256, 128, 32, 8, 0, 1), "s"),
    (lambda: S.GemmConfig(256, 128, 32, 3, 4, 1), "warps"),
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 1), 8, 8, 8, hw="Z80"), "hw"),
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 1), 8, 8, 8, hw="B200"), "hw"),
    (lambda: S.launch_failures((256, 128, 32, 8, 4, 1), "B200"), "hw"),     # no shared-memory figures
    (lambda: S.gemm_time((256, 128, 32, 8, 4), 8, 8, 8), "config"),
    (lambda: S.gemm_time({"B_M": 256, "B_N": 128}, 8, 8, 8), "config"),
    (lambda: S.gemm_time({"bm": 256, "bn": 128, "bk": 32, "warps": 8, "stages": 4, "group": 1}, 8, 8, 8),
     "config"),                                                              # the old dialect's keys
    (lambda: S.static_valid(42), "config"),
    (lambda: S.gemm_time((256, 128, 32, 8, 4, 1), True, 8, 8), "M"),
])
def test_bad_input_names_parameter(call, param):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(param + ":")
    assert isinstance(e.value, BadInput) and e.value.param == param


def test_config_is_frozen_and_hashable():
    c = S.GemmConfig(256, 128, 32, 8, 4, 1)
    assert hash(c) == hash(S.GemmConfig(*c.as_tuple())) and {c: 1}[S.GemmConfig(256, 128, 32, 8, 4, 1)] == 1
    with pytest.raises(Exception):
        c.B_M = 128


# ------------------------------------------------------------------------------------- time model
CLK = 1.83e9
L = 700e-9                       # loaded latency (docs/conventions.md §5.2)
SM_FLOPS = 4096 * CLK            # one SM's tensor-core FLOP/s
L2_SHARE = 12e12 / 132           # each of 132 busy SMs' share of the L2 bandwidth (< 64 B/clk port)


def test_big_gemm_optimum_by_hand():
    """4096^3, 256x128, BK 32, 8 warps, 4 stages: one block per SM (168 registers x 256 threads),
    512 tiles -> 4 per SM; each K-step is compute-bound (2*256*128*32 FLOP); per tile a fill L and
    an epilogue of the 64 KiB C tile through the SM's L2 share."""
    step = 2 * 256 * 128 * 32 / SM_FLOPS
    tile = L + 128 * step + 256 * 128 * 2 / L2_SHARE
    t = S.gemm_time((256, 128, 32, 8, 4, 1), 4096, 4096, 4096)
    assert t == pytest.approx(4 * tile, rel=1e-12)
    tflops = 2 * 4096**3 / t / 1e12
    assert 880 < tflops < 950                    # the lecture: "about 900 TFLOPS, ~90% of 989"


def test_single_stage_by_hand():
    """One stage: nothing overlaps, each K-step costs L + t_c."""
    step = 2 * 256 * 128 * 32 / SM_FLOPS
    tile = L + 128 * (L + step) + 256 * 128 * 2 / L2_SHARE
    assert S.gemm_time((256, 128, 32, 8, 1, 1), 4096, 4096, 4096) == pytest.approx(4 * tile, rel=1e-12)


def test_latency_hidden_pairs_follow_littles_law():
    """(stages - 1) * t_c >= L  <=>  (stages - 1) * BK >= L * SM_FLOPS / (2 * 256 * 128) = 80.06:
    exactly the (BK, stages) pairs that fit in shared memory and satisfy it tie at the optimum."""
    need = L * SM_FLOPS / (2 * 256 * 128)
    t = {(bk, s): S.gemm_time((256, 128, bk, 8, s, 1), 4096, 4096, 4096) for bk in (16, 32, 64, 128) for s in range(1, 6)}
    best = min(t.values())
    tied = {p for p, v in t.items() if v == pytest.approx(best, rel=1e-12)}
    fits = {(bk, s) for bk in (16, 32, 64, 128) for s in range(1, 6) if s * 384 * bk * 2 <= 227 * 1024}
    assert tied == {(bk, s) for bk, s in fits if (s - 1) * bk >= need}
    assert tied == {(32, 4), (32, 5), (64, 3), (64, 4), (128, 2)}


def test_decode_is_hbm_bound_and_best_with_bm16():
    """16x4096x4096: the best time is the HBM floor: L + (A + B + C) x 2 bytes / 3.35 TB/s (A, B fit in L2)."""
    land = S.landscape(16, 4096, 4096)
    c, t = land.best(1)[0]
    floor = L + (16 * 4096 + 4096 * 4096 + 16 * 4096) * 2 / 3.35e12
    assert t == pytest.approx(floor, rel=1e-12)
    assert c.B_M == 16
    tiles = math.ceil(4096 / c.B_N)
    assert tiles >= 132                                  # every SM reads weights


def test_group_m_changes_hbm_traffic_but_not_compute_bound_times():
    # 4096^3 at the optimum is compute-bound: GROUP_M is irrelevant
    ts = {g: S.gemm_time((256, 128, 32, 8, 4, g), 4096, 4096, 4096) for g in (1, 4, 8)}
    assert ts[1] == ts[4] == ts[8]
    # a memory-bound config on a shape whose operands overflow L2: grouping cuts the HBM floor
    t1 = S.gemm_time((64, 64, 64, 4, 3, 1), 256, 65536, 4096)
    t8 = S.gemm_time((64, 64, 64, 4, 3, 8), 256, 65536, 4096)
    assert t8 < t1


@settings(max_examples=60, deadline=None)
@given(st.tuples(*[st.sampled_from(v) for v in VALUES.values()]),
       st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 5000))
@example((256, 128, 32, 8, 4, 1), 1, 1, 1)
@example((16, 16, 16, 1, 1, 1), 4097, 1, 129)
def test_time_respects_bounds(cfg, M, N, K):
    t = S.gemm_time(cfg, M, N, K)
    if brute_reasons(*cfg):
        assert t == math.inf
        return
    assert math.isfinite(t)
    assert t >= 2 * M * N * K / H100.tc_peak_flops                       # compute roofline
    assert t >= L + (M * K + K * N + M * N) * 2 / H100.hbm_bytes_per_s   # compulsory HBM traffic


def test_vectorised_equals_scalar():
    cfgs = S.all_configs()[::97]
    v = S.times_for_shape(1000, 3000, 700, configs=cfgs)
    for c, t in zip(cfgs, v):
        assert S.gemm_time(c, 1000, 3000, 700) == t


# ------------------------------------------------------------------------------------- landscape
def test_landscape_tools():
    shapes = [(4096, 4096, 4096), (16, 4096, 4096)]
    P = S.penalty_matrix(shapes)
    assert np.allclose(np.diag(P), 1.0) and (P >= 1).all()
    land = S.landscape(4096, 4096, 4096)
    assert len(land.configs) == 3744
    # at least the 5 latency-hiding (BK, stages) pairs x 3 GROUP_M tie at the optimum (Little's-law test above)
    assert land.within(1.0) >= 15 and land.within(2.0) > land.within(1.05) >= land.within(1.0)
    q = land.percentiles()
    assert 1 <= q[10] <= q[25] <= q[50] <= q[75] <= q[90]
    sens = S.sensitivity(4096, 4096, 4096)
    best = land.best(1)[0][0]
    for key, row in sens.items():
        assert dict(row)[getattr(best, key)] == 1.0
    assert dict(sens["warps"]) == {1: math.inf, 2: math.inf, 4: math.inf, 8: 1.0}


def test_hardware_enters_rules_and_model():
    # 3 x (256 + 256) x 64 x 2 = 196,608 B: fits the H100's 227 KiB, not the A100's 163 KiB
    cfg = (256, 256, 64, 8, 3, 1)
    assert "smem" not in S.launch_failures(cfg, "H100")
    assert "smem" in S.launch_failures(cfg, "A100")
    # H200: the H100's SMs with 4.8 TB/s of HBM -> the decode floor moves with the bandwidth
    t = S.landscape(16, 4096, 4096, hw="H200").best_time
    assert t == pytest.approx(L + (16 * 4096 + 4096 * 4096 + 16 * 4096) * 2 / 4.8e12, rel=1e-12)


def test_every_time_model_constant_has_a_source():
    from dataclasses import fields
    names = {f.name for f in fields(S.TimeModelConstants)} - {"hw", "sources"}
    for k in S.TIME_MODELS.values():
        assert set(k.sources) == names and all(k.sources.values())


def test_the_knobs_are_the_models_parameters():
    """One dialect: every knob but ``warps`` is a parameter symbol of the GEMM models, and ``warps`` is split into
    the models' warp grid ``w_y x w_x`` (the resources model's two parameters)."""
    from symbolic.models import gemm, gemm_l2
    assert [str(p) for p in (gemm.B_M, gemm.B_N, gemm.B_K)] + ["warps", str(gemm.s), str(gemm_l2.G_M)] == list(S.SPACE)
    c = S.GemmConfig(256, 128, 32, 8, 4, 1)
    assert c.warp_grid == (4, 2) and (str(gemm.w_y), str(gemm.w_x)) == ("w_y", "w_x")
    assert c.as_dict() == {"B_M": 256, "B_N": 128, "B_K": 32, "warps": 8, "s": 4, "G_M": 1}
    assert str(c) == "B_M=256 B_N=128 B_K=32 warps=8 s=4 G_M=1"
    assert S.GemmConfig(**c.as_dict()) == c
    assert list(S.sensitivity(4096, 4096, 4096)) == list(S.SPACE)
    cols = S.config_table()
    assert S.launchable(cols).sum() == 3744 and S.launchable(cols, "A100").sum() < 3744
