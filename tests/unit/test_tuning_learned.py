"""The learned cost model (tuning.learned): features against hand-derived values of the tiled loop nest and
the resource estimates; the model beats a constant predictor on shapes it has not seen."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from base.errors import BadInput
from tuning import learned, schedule
from tuning.shapes import COURSE_SHAPES, llm_shapes

NAMES = [n for n, _ in learned.FEATURES]
#: tests that fit the model need scikit-learn, the tune extra; the features are computed without it
needs_sklearn = pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                                   reason="fits the learned model: needs scikit-learn, the tune extra "
                                          "(pip install 'tilebound[tune]')")


def row(shape, config):
    X = learned.features(shape)
    assert X.shape == (6000, len(NAMES))
    return dict(zip(NAMES, X[schedule.all_configs().index(schedule.GemmConfig(*config))]))


def test_features_of_a_divisible_point_by_hand():
    f = row((4096, 4096, 4096), (128, 128, 32, 4, 3, 1))
    assert (f["t_m"], f["t_n"], f["t_k"], f["tiles"]) == (32, 32, 128, 1024)
    assert f["warp_rows"] == 64 and f["warp_cols"] == 64                 # 4 warps as 2 x 2
    assert f["smem_bytes"] == 3 * (128 + 128) * 32 * 2                   # 49,152 B
    assert f["regs"] == 64 * 64 // 32 + 40                               # 168
    assert f["padding"] == 1.0
    assert f["reads"] == 32 * 4096 * 4096 + 32 * 4096 * 4096             # t_n M K + t_m K N
    assert f["writes"] == 4096 * 4096
    assert f["intensity"] == pytest.approx(2 * 4096**3 / ((f["reads"] + f["writes"]) * 2))
    # blocks per SM: smem 228 KiB // (48 KiB + 1 KiB) = 4; registers 65536 // (168 x 128) = 3; warps 64 // 4 = 16
    assert f["blocks_per_sm"] == 3 and f["waves"] == np.ceil(1024 / (3 * 132)) == 3
    assert f["launches"] == 1.0
    assert f["log2_M"] == 12.0


def test_features_of_a_padded_point_by_hand():
    f = row((100, 4096, 1000), (64, 256, 128, 8, 2, 1))
    assert (f["t_m"], f["t_n"], f["t_k"]) == (2, 16, 8)                  # ceil(100/64), 4096/256, ceil(1000/128)
    assert f["padding"] == pytest.approx((2 * 64) * 4096 * (8 * 128) / (100 * 4096 * 1000))
    assert f["reads"] == 16 * 100 * 1000 + 2 * 1000 * 4096
    assert f["warp_rows"] == 16 and f["warp_cols"] == 128                 # 8 warps as 4 x 2
    assert f["launches"] == 1.0


def test_a_config_the_launch_rules_refuse_is_marked():
    f = row((4096, 4096, 4096), (256, 128, 128, 8, 4, 1))                # 4 x 384 x 128 x 2 B > 227 KiB
    assert f["launches"] == 0.0
    assert learned.launchable().sum() == 3744                             # lecture 13: 3744 of 6000 launch


def test_training_shapes_leave_out_the_scored_ones_and_follow_the_seed():
    a = learned.training_shapes(30, seed=4)
    assert a == learned.training_shapes(30, seed=4) and a != learned.training_shapes(30, seed=5)
    held = {s.mnk for s in COURSE_SHAPES} | {s.mnk for s in llm_shapes()}
    assert not held & {s.mnk for s in a}


@pytest.fixture(scope="module")
def small_model():
    return learned.train(learned.training_shapes(12, seed=2), per_shape=250, seed=0)


@needs_sklearn
def test_the_learned_model_beats_a_constant_predictor_on_unseen_shapes(small_model):
    rq = learned.rank_quality(small_model, COURSE_SHAPES)
    for r in rq:
        assert r.mse < r.mse_constant / 4, r
        assert r.spearman > 0.6, r
    assert np.mean([r.top1_ratio for r in rq]) < 1.5


@needs_sklearn
def test_predictions_are_times_and_inf_where_the_rules_refuse(small_model):
    p = small_model.predict((512, 14336, 4096))
    assert np.all(np.isinf(p[~learned.launchable()])) and np.all((p[learned.launchable()] > 0) & np.isfinite(
        p[learned.launchable()]))


@needs_sklearn
def test_rank_quality_refuses_a_training_shape(small_model):
    with pytest.raises(BadInput) as e:
        learned.rank_quality(small_model, [small_model.train_shapes[0]])
    assert e.value.param == "shapes"


def test_without_scikit_learn_training_says_which_extra(monkeypatch):
    for mod in list(sys.modules):
        if mod == "sklearn" or mod.startswith("sklearn."):
            monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(BadInput) as e:
        learned.train(learned.training_shapes(1))
    assert e.value.param == "strategy" and "scikit-learn" in str(e.value) and "tilebound[tune]" in str(e.value)


def test_unknown_gpu():
    with pytest.raises(BadInput) as e:
        learned.features((16, 16, 16), gpu="TPU")
    assert e.value.param == "gpu"


@pytest.mark.slow
@needs_sklearn
def test_default_model_rank_quality_on_the_llm_set():
    """The default model (40 training shapes) on the 40 LLM score shapes and the course's four."""
    from tuning.shapes import LLM_SCORE_SHAPES
    m = learned.train()
    rq = learned.rank_quality(m, COURSE_SHAPES + LLM_SCORE_SHAPES)
    assert np.median([r.spearman for r in rq]) > 0.9
    assert np.mean([r.top1_within_5pct for r in rq]) > 0.75
    assert all(r.mse < r.mse_constant for r in rq)
