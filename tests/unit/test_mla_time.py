"""decode.mla.time and decode.mla.fp8.time against their stated assumptions worked by hand, and the figures
of FlashMLA's deep-dives: 34 MMA cycles a token for 64 heads, 50 dequantization cycles a token, the
compute-bound turn "once h_q s_q >= 128" on an H800 (docs/20250422-new-kernel-deep-dive.md:11-13;
docs/20250929-hopper-fp8-sparse-deep-dive.md:17-25)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from symbolic.models.mla import H800, decode_mla_fp8_time, decode_mla_time

SMS, CLK, FLOP_CLK, BW = 132, 1_600_000_000, 4096, 3_350 * 10**9


def by_hand(B=128, H=128, L_q=1, N_k=32768, S=1, fp8=False):
    """DeepSeek-V3 (d_c 512, d_r 64, 64-row CTAs, 64-token pages = blocks) on the H800, from the stated
    assumptions: the cache and table once a sequence over HBM, whole 64 x 64 tiles on the tensor cores,
    50 cycles a token a CTA to dequantize, the work spread over min(132, segments) SMs."""
    R, G, nb = H * L_q, -(-H * L_q // 64), -(-N_k // 64)
    m = min(S, nb)
    busy = min(SMS, B * G * m)
    per_token = 656 if fp8 else 1152
    hbm = N_k * per_token + 4 * nb + 2 * R * 576 * m + 2 * R * 512 + 4 * R
    if m > 1:
        hbm += 2 * 4 * R * m * 513                                 # partials written and read back
    t_hbm = F(B * hbm, BW)
    cycles_mma = B * G * nb * 2 * 64 * 64 * (576 + 512) // FLOP_CLK    # 34 x 64 a block a CTA
    t_mma = F(cycles_mma, busy * CLK)
    t_dq = F(B * G * nb * 64 * 50, busy * CLK)
    return t_hbm, t_mma, t_dq


def test_h800_figures_are_the_deep_dives():
    assert SMS * CLK * FLOP_CLK == 865_075_200_000_000                # "~865 TFlops"
    assert (H800.sms, H800.clock_hz, H800.tc_flops_per_sm_clk, H800.hbm_bytes_per_s) == (SMS, CLK, FLOP_CLK, BW)
    assert H800.dequant_cycles * 512 == 50                            # (1/64 + 1/64 + 1/16 + 1/256) x 512
    assert F(64 * (576 + 512) * 2, 4096) == 34                        # MMA cycles a token for 64 heads


@pytest.mark.parametrize("pt", [{}, {"H": 16}, {"H": 64}, {"H": 192}, {"H": 256, "S": 8}, {"L_q": 2},
                                {"N_k": 100, "S": 2}, {"B": 1, "N_k": 4096, "S": 64}, {"B": 1},
                                {"B": 3, "H": 16, "S": 5}])
def test_roofs_by_hand(pt):
    t_hbm, t_mma, t_dq = by_hand(**pt)
    v = decode_mla_time.evaluate(**pt)
    assert (v["t_hbm"], v["t_mma"], v["time"]) == (t_hbm, t_mma, max(t_hbm, t_mma))
    f = decode_mla_fp8_time.evaluate(**pt)
    t_hbm8, _, _ = by_hand(**pt, fp8=True)
    assert (f["t_hbm"], f["t_mma"], f["t_dequant"]) == (t_hbm8, t_mma, t_dq)
    assert f["time"] == max(t_hbm8, t_mma, t_dq)


def test_the_turn_from_memory_to_compute_bound_near_128_rows():
    """A batch of 128 sequences (every SM busy), whole row groups of 64: memory-bound up to 128 rows (at 128 the roofs are within 8 %), compute-bound
    from 192.  The continuous turn, n_SM f F 2 (d_c + d_r) / (2 BW (2 d_c + d_r)) = 136.7 rows, is the
    deep-dive's 1/2 x 865/3.35 = 129 with (d_k + d_v)/d_k = 1088/576 for its 2."""
    ratio = {R: decode_mla_time.evaluate("mma_over_hbm", H=R) for R in (16, 32, 64, 128, 192, 256)}
    assert decode_mla_time.evaluate("busy_SMs", H=128) == 132
    assert all(ratio[R] < 1 for R in (16, 32, 64, 128)) and all(ratio[R] > 1 for R in (192, 256))
    assert F(92, 100) < ratio[128] < 1
    turn = F(SMS * CLK * FLOP_CLK * 2 * 576, 2 * BW * 1088)
    assert 136 < turn < 137
    assert 128 < F(SMS * CLK * FLOP_CLK, 2 * BW) < 130                # the deep-dive's 1/2 x 865 / 3.35
    # without the L2 sharing of the row groups' reads the kernel would never turn compute-bound
    for R in (128, 256, 1024):
        v = decode_mla_time.evaluate(H=R)
        assert v["t_hbm_unshared"] > v["t_mma"]


def test_fp8_is_dequantization_bound():
    """50 cycles against 34 (fp8 deep-dive): at 64 rows a CTA the dequantization roof is 50/34 = 25/17 of the
    MMA roof, whatever the batch, and above the HBM roof of 656 bytes a token."""
    for pt in ({}, {"H": 64}, {"B": 8, "N_k": 4096}, {"H": 256}, {"B": 1}):
        v = decode_mla_fp8_time.evaluate(**pt)
        assert v["dequant_over_mma"] == F(25, 17)
        assert v["time"] == v["t_dequant"] > v["t_hbm"]


def test_bad_input():
    from base.errors import BadInput
    with pytest.raises(BadInput) as e:
        decode_mla_fp8_time.evaluate(d_c=64)
    assert e.value.param == "d_c"
    with pytest.raises(BadInput) as e:
        decode_mla_time.evaluate(BW=0)
    assert e.value.param == "BW"
