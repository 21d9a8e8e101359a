"""The decode time model (decode.time) against its stated assumptions worked by hand.

References: a wave-by-wave schedule written here from the model's stated assumptions (CTAs in waves of
``c_SM x SMs``, each CTA two loaded latencies per key block, a wave no faster than its bytes over the
HBM bandwidth, the combine's ``S + 1`` dependent L2 loads), Little's law for one CTA, and the figures of
the Llama-3-8B-like decode on an H100 computed by hand.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from symbolic.hardware import H100, LOADED_HBM_LATENCY
from symbolic.models.decode import decode_packed, decode_time

L = LOADED_HBM_LATENCY.value                      # 700 ns
L2 = F(262, 1_830_000_000)
BW = H100.hbm_bytes_per_s


def cdiv(a, b):
    return -(-a // b)


def by_hand(B=1, H=32, H_kv=8, L_q=1, N_k=32768, d=128, d_v=128, B_n=128, S=1, n_SM=132, c_SM=2):
    """The model's assumptions, one wave at a time, for a point where every CTA holds the same blocks."""
    nb = cdiv(N_k, B_n)
    per = cdiv(nb, S)
    assert N_k % (B_n * S) == 0, "by_hand takes equal splits"
    ctas, slots = B * H_kv * S, c_SM * n_SM
    R = B * H * L_q
    cta_bytes = 2 * per * B_n * (d + d_v)
    t_cta = 2 * L * per                                        # K then V, one latency each, per key block
    t, left = 0, ctas
    while left:
        a = min(left, slots)
        t += max(t_cta, F(a * cta_bytes, BW))
        left -= a
    main_bytes = 2 * (R * d * S + B * H_kv * N_k * (d + d_v)) + (4 * R * S * (d_v + 1) if S > 1 else
                                                                 2 * R * d_v + 4 * R)
    t_main = max(t, F(main_bytes, BW))
    combine_bytes = 4 * R * S * (d_v + 1) + 2 * R * d_v + 4 * R if S > 1 else 0
    waves_c = cdiv(cdiv(R, 4), 16 * n_SM)
    t_comb = max((S + 1) * L2 * waves_c, F(combine_bytes, BW)) if S > 1 else 0
    return t_main, t_comb, main_bytes + combine_bytes


@pytest.mark.parametrize("pt", [{}, {"S": 2}, {"S": 8}, {"S": 16}, {"S": 32}, {"S": 64}, {"S": 128},
                                {"B": 64, "N_k": 4096, "S": 1}, {"B": 4, "N_k": 8192, "S": 8, "L_q": 2},
                                {"H": 8, "H_kv": 1, "N_k": 1024, "B_n": 64, "S": 16, "d": 64, "d_v": 64}])
def test_the_time_is_the_wave_schedule_by_hand(pt):
    t_main, t_comb, nbytes = by_hand(**pt)
    v = decode_time.evaluate(**pt)
    assert v["t_main"] == t_main and v["t_combine"] == t_comb and v["time"] == t_main + t_comb
    assert v["bytes"] == nbytes == decode_packed.evaluate(**pt)["bytes"]
    assert v["hbm_fraction"] == F(nbytes, BW) / (t_main + t_comb)


def test_one_cta_bandwidth_is_littles_law():
    # one K or V tile in flight: 128 keys x 128 dims x 2 bytes = 32 KiB over 700 ns = 46.8 GB/s
    v = decode_time.evaluate()
    assert v["cta_bandwidth"] == F(128 * 128 * 2, 1) / L
    assert round(float(v["cta_bandwidth"]) / 1e9, 1) == 46.8


def test_the_one_sm_problem_and_its_cure():
    # S = 1: 8 CTAs, each walks 256 key blocks at two latencies a block: 358.4 us, 11 % of HBM bandwidth
    one = decode_time.evaluate(S=1)
    assert one["time"] == 2 * L * 256 and one["waves"] == 1 and one["t_combine"] == 0
    assert 0.11 < one["hbm_fraction"] < 0.12
    times = {S: decode_time.evaluate(S=S) for S in range(1, 129)}
    best = min(times, key=lambda s: times[s]["time"])
    assert times[best]["hbm_fraction"] > F(9, 10)
    assert times[best]["time"] < one["time"] / 8
    assert times[128]["time"] > times[best]["time"]          # the combine's S + 1 latencies grow with S
    assert all(t["time"] >= t["t_roofline"] for t in times.values())


def test_wave_efficiency_is_fa2s():
    # 8 S CTAs on 264 slots: FA2's n_waves / ceil(n_waves)
    for S in (1, 29, 33, 34, 128):
        w = F(8 * S, 264)
        assert decode_time.evaluate("wave_efficiency", S=S) == w / cdiv(8 * S, 264)
