"""The split-K schedule space: its size and order, S_k = 1 is the data-parallel time model, the split-K price
restated by hand from the module's three pieces, the choice on decode shapes, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from base.errors import BadInput
from tuning.schedule import SPACE, TIME_MODELS, GemmConfig, all_configs, times_for_shape
from tuning.splitk_space import (KNOBS, SPLITK_VALUES, SplitKConfig, best_splitk, splitk_configs, splitk_table,
                                 splitk_times)


def test_space_is_the_data_parallel_space_times_the_slices():
    cfgs = splitk_configs()
    assert len(cfgs) == len(all_configs()) * len(SPLITK_VALUES) == 6000 * 7
    assert KNOBS == tuple(SPACE) + ("S_k",)
    assert [c.S_k for c in cfgs[::6000]] == list(SPLITK_VALUES)
    assert cfgs[6000 + 17].config == all_configs()[17]
    assert len(SPACE) == 6 and len(all_configs()) == 6000          # the data-parallel space is untouched


def test_one_slice_is_the_data_parallel_time_model():
    for shape in [(16, 4096, 4096), (100, 300, 777)]:
        t = splitk_times(*shape)
        assert np.array_equal(t[:6000], times_for_shape(*shape))


def test_split_price_by_hand():
    # S_k = 4 on (M, N, K) = (16, 1000, 4096), B_N = 64, B_K = 64: t_n = 16, q = floor(64 / 4) = 16 K-steps,
    # the last slice 4096 - 3 * 16 * 64 = 1024 deep; N' = 3 * 16 * 64 + 1000 = 4072
    M, N, K, S = 16, 1000, 4096, 4
    cfg = GemmConfig(16, 64, 64, 1, 3, 1)
    k = TIME_MODELS["H100"]
    bw = k.hw.hbm_bytes_per_s
    gemm = times_for_shape(M, 4072, 1024, [cfg])[0]
    partials = (4 * S * M * N - 2 * M * 4072) / bw
    reduction = k.latency_s + (4 * S * M * N + 2 * M * N) / bw
    i = splitk_configs().index(SplitKConfig(cfg, S))
    assert splitk_times(M, N, K)[i] == pytest.approx(gemm + partials + reduction, rel=1e-12)


def test_split_k_is_chosen_where_decode_leaves_sms_idle():
    # a k/v projection of Llama-3-8B (N = 8 x 128 = 1024): at most 64 tiles of 16 x 16 on 132 SMs
    c = best_splitk(16, 1024, 4096)
    assert c.chooses_split and c.speedup > 1
    assert c.time == min(t for _, t in c.by_slices)
    assert dict(c.by_slices)[1] == pytest.approx(c.dp_time)
    # a large square fills the GPU: no split
    big = best_splitk(4096, 4096, 4096)
    assert not big.chooses_split and big.best.config == big.dp_best and big.speedup == 1
    rows = splitk_table([(16, 1024, 4096), (4096, 4096, 4096)])
    assert [r.S_k > 1 for r in rows] == [True, False]


def test_unlaunchable_configs_stay_infinite():
    t = splitk_times(16, 1024, 4096)
    dp = np.isinf(t[:6000])
    for n in range(1, len(SPLITK_VALUES)):
        assert np.array_equal(np.isinf(t[n * 6000:(n + 1) * 6000]), dp)


@pytest.mark.parametrize("call,param", [
    (lambda: SplitKConfig(all_configs()[0], 5), "S_k"),
    (lambda: SplitKConfig((16, 16, 16, 1, 1, 1), 2), "config"),
    (lambda: splitk_times(0, 16, 16), "M"),
    (lambda: best_splitk(16, 16, 16, hw="A100"), "hw"),
    (lambda: splitk_table([(16, 16)]), "shape"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param
