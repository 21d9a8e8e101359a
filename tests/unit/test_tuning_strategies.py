"""Search strategies (tuning.strategies): each checked against the schedule space's own single-config
path (``gemm_time``, ``landscape``, ``static_valid``) or a landscape built by hand in the test.

References: the optimum is :func:`tuning.schedule.landscape`'s (a separate path from the evaluator); a
config's time is :func:`tuning.schedule.gemm_time` of that config; a config that cannot launch is one
:func:`tuning.schedule.static_valid` refuses; Triton's perf model and pruning are recomputed by hand from
``triton/ops/matmul_perf_model.py``'s formulas with the H100's datasheet figures.
"""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest

from base.errors import BadInput
from symbolic.hardware import H100
from tuning import learned, schedule
from tuning import strategies as S
from tuning.shapes import COURSE_SHAPES, Shape

SQUARE = (4096, 4096, 4096)
DECODE = (16, 4096, 4096)
#: the package each extra a strategy needs is imported as
_MODULES = {"optuna": "optuna", "sklearn": "sklearn", "cmaes": "cmaes"}


def _with_its_extra(name: str):
    """``name`` as a test parameter, skipped (with the reason) when a package of the tune extra it needs is absent."""
    missing = [m for m in S.STRATEGIES[name].needs.split("+") if m and importlib.util.find_spec(_MODULES[m]) is None]
    reason = f"the {name} strategy needs {', '.join(missing)}: the tune extra (pip install 'tilebound[tune]')"
    return pytest.param(name, marks=pytest.mark.skipif(bool(missing), reason=reason))


AVAILABLE = [_with_its_extra(n) for n in S.STRATEGIES]


@pytest.fixture
def small_learned(request, monkeypatch):
    """The ``learned`` strategy with a small model (4 training shapes), so unit tests need not train the default one
    (trained only for the ``learned`` strategy's test: the others run without scikit-learn)."""
    if request.node.callspec.params.get("name") != "learned":
        yield None
        return
    model = learned.train(learned.training_shapes(4, seed=1), per_shape=150, seed=0)
    monkeypatch.setattr(learned, "default_model", lambda gpu="H100": model)
    S._learned_order.cache_clear()
    yield model
    S._learned_order.cache_clear()


# ------------------------------------------------------------------------------------------ the space's indexing
def test_index_and_digits_follow_all_configs():
    cfgs = schedule.all_configs()
    values = list(schedule.SPACE.values())
    for i in (0, 1, 2, 3, 59, 1234, 5999):
        d = S.digits_of(i)
        assert S.index_of(d) == i
        assert cfgs[i].as_tuple() == tuple(v[k] for v, k in zip(values, d))
    assert S.N_CONFIGS == len(cfgs) == 6000


def test_neighbours_change_one_knob_by_one_step():
    c = schedule.GemmConfig(64, 128, 32, 4, 3, 4)
    i = schedule.all_configs().index(c)
    got = {schedule.all_configs()[j].as_tuple() for j in S.neighbours(i, 0)}
    assert got == {(32, 128, 32, 4, 3, 4), (128, 128, 32, 4, 3, 4)}
    got = {schedule.all_configs()[j].as_tuple() for j in S.neighbours(i, 5)}
    assert got == {(64, 128, 32, 4, 3, 1), (64, 128, 32, 4, 3, 8)}
    edge = schedule.all_configs().index(schedule.GemmConfig(16, 16, 16, 1, 1, 1))
    assert [schedule.all_configs()[j].s for j in S.neighbours(edge, 4)] == [2]


# ------------------------------------------------------------------------------------------ the evaluator
def test_evaluator_counts_unique_evaluations_only():
    ev = S.Evaluator(np.array([3.0, np.inf, 1.0, 2.0]), budget=2)
    assert ev(0) == 3.0 and ev(0) == 3.0 and ev.used == 1
    assert ev(1) == math.inf and ev.used == 2             # a failed config counts
    assert ev(0) == 3.0                                   # measured before: free, even with the budget spent
    with pytest.raises(S._Spent):
        ev(2)
    assert ev.trace == [0, 1] and ev.done


# ------------------------------------------------------------------------------------------ checks that can fail
@pytest.mark.parametrize("shape", [s.mnk for s in COURSE_SHAPES])
def test_exhaustive_returns_the_landscape_optimum(shape):
    r = S.run_search("exhaustive", shape, 6000)
    land = schedule.landscape(*shape)
    assert r.best_time == land.best_time
    assert land.time_of(r.best_config) == land.best_time
    assert len(r.trace) == 6000 and sorted(r.trace) == list(range(6000))


@pytest.mark.parametrize("name", AVAILABLE)
def test_best_found_is_a_real_config_with_its_model_time(name, small_learned):
    r = S.run_search(name, DECODE, 40, seed=3)
    assert 1 <= len(r.trace) <= 40 and len(set(r.trace)) == len(r.trace)     # unique evaluations, within budget
    c = r.best_config
    assert c in schedule.all_configs()
    assert r.best_time == schedule.gemm_time(c, *DECODE)                      # the single-config path agrees
    for i, t in list(zip(r.trace, r.times))[:10]:
        assert t == schedule.gemm_time(schedule.all_configs()[i], *DECODE)


@pytest.mark.parametrize("name", AVAILABLE)
def test_a_fixed_seed_reproduces_the_trace(name, small_learned):
    a = S.run_search(name, SQUARE, 30, seed=7)
    b = S.run_search(name, SQUARE, 30, seed=7)
    assert a.trace == b.trace and a.times == b.times
    if S.STRATEGIES[name].seeded:                       # another seed searches differently
        assert any(S.run_search(name, SQUARE, 30, seed=s).trace != a.trace for s in (8, 9))


def test_failed_configs_count_against_the_budget():
    r = S.run_search("random", SQUARE, 200, seed=0)
    failed = [i for i in r.trace if not schedule.static_valid(schedule.all_configs()[i])]
    assert failed, "a random sample of 200 meets some of the 2256 configs that cannot launch"
    assert [t for t in r.times if math.isinf(t)] == [math.inf] * len(failed)
    assert len(r.trace) == 200


def test_random_draws_without_replacement_cover_the_space():
    r = S.run_search("random", DECODE, 6000, seed=1)
    assert sorted(r.trace) == list(range(6000))
    assert r.best_time == schedule.landscape(*DECODE).best_time


def _separable(weights=(3, 1, 2, 1, 2, 1), target=(2, 3, 1, 2, 4, 0)) -> np.ndarray:
    """A landscape whose log time is a sum over knobs of weight x |level - target level|: one optimum, no
    interaction between knobs, so descent along each knob reaches it."""
    t = np.empty(S.N_CONFIGS)
    for i in range(S.N_CONFIGS):
        d = S.digits_of(i)
        t[i] = math.exp(sum(w * abs(x - y) for w, x, y in zip(weights, d, target)) / 10)
    return t


def test_coordinate_descent_finds_the_optimum_of_a_separable_landscape():
    times = _separable()
    best = int(np.argmin(times))
    assert S.digits_of(best) == (2, 3, 1, 2, 4, 0)
    for seed in range(5):
        # one step per knob per sweep, at most 4 steps a knob: <= 5 sweeps of <= 12 neighbours, plus the start
        r = S.run_search("coordinate", SQUARE, 61, seed=seed, times=times)
        assert best in r.trace


def test_annealing_and_genetic_beat_exhaustive_order_on_the_separable_landscape():
    times = _separable()
    opt = times.min()
    for name in ("annealing", "genetic"):
        ratios = [S.run_search(name, SQUARE, 150, seed=s, times=times).best_time / opt for s in range(5)]
        assert np.median(ratios) <= 1.2, (name, ratios)
    assert S.run_search("exhaustive", SQUARE, 150, times=times).best_time / opt > 1.5


# ------------------------------------------------------------------------------ Triton's pruning and perf model
def test_triton_estimate_by_hand():
    """``estimate_matmul_time`` at 4096^3 with 128 x 128 tiles, 4 warps (SPLIT_K = 1, FP16), H100 figures."""
    M = N = K = 4096
    ctas = 32 * 32                                          # 1024 >= 32: DRAM bandwidth saturated
    peak = 132 * 1_830_000_000 * 4096                       # sms x clock x tensor FLOP/SM/clk (H100)
    hbm = H100.hbm_bytes_per_s
    compute = 2 * M * N * K / (min(4 * 132, ctas * 4) / (4 * 132) * peak)
    dram = hbm * (1 * 0.95 + 1 * 0.05)
    load_dram = 2 * (M * K * 2 * (1 + 0.2 * 31))
    load_l2 = 2 * (M * K * 2 * 0.8 * 31)
    expect = max(compute, load_dram / dram + load_l2 / (4 * dram)) + M * N * 2 / (0.6 * dram)
    i = schedule.all_configs().index(schedule.GemmConfig(128, 128, 32, 4, 3, 1))
    assert S.triton_estimate(M, N, K)[i] == pytest.approx(expect, rel=1e-12)


def test_triton_prune_keeps_the_two_stage_counts_nearest_the_latency_estimate():
    order = S.triton_ranking(*SQUARE)
    cfgs = [schedule.all_configs()[i] for i in order]
    # 128x128x32, 4 warps: 256 mmas / 4 warps x 8 = 512 cycles a stage; 300/512 < 1, so the two smallest: 1, 2
    assert {c.s for c in cfgs if (c.B_M, c.B_N, c.B_K, c.warps) == (128, 128, 32, 4)} == {1, 2}
    # 16x16x16, 1 warp: 2 mmas x 8 = 16 cycles; 300/16 = 18.75 > 5, so the two largest: 4, 5
    assert {c.s for c in cfgs if (c.B_M, c.B_N, c.B_K, c.warps) == (16, 16, 16, 1)} == {4, 5}
    # early_config_prune drops configs over the shared memory a block may use
    assert all(c.s * (c.B_M + c.B_N) * c.B_K * 2 <= 227 * 1024 for c in cfgs)
    est = S.triton_estimate(*SQUARE)[order]
    assert np.all(np.diff(est) >= 0)


# ------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call,param", [
    (lambda: S.run_search("bogus", SQUARE, 10), "strategy"),
    (lambda: S.run_search("random", SQUARE, 0), "budget"),
    (lambda: S.run_search("random", SQUARE, -3), "budget"),
    (lambda: S.run_search("random", (0, 4096, 4096), 10), "M"),
    (lambda: S.run_search("random", (16, -1, 4096), 10), "N"),
    (lambda: S.run_search("random", (16, 4096, 0), 10), "K"),
    (lambda: S.run_search("random", SQUARE, 10, gpu="TPU"), "gpu"),
    (lambda: S.run_search("random", SQUARE, 10, seed=-1), "seed"),
    (lambda: S.run_search("random", Shape(4096, 4096, 4096), 10, times=np.ones(5)), "times"),
    (lambda: S.run_search("random", SQUARE, 6001), "budget"),                # more than the space holds
    (lambda: S.run_search("random", SQUARE, 10**9), "budget"),
    (lambda: S.run_search("random", (10**30, 4096, 4096), 10), "shape"),     # beyond the time model's int64 counts
    (lambda: S.run_search("random", (2**40, 2**40, 4096), 10), "shape"),
    (lambda: S.run_search("model", (2**62, 16, 16), 10, times=np.ones(6000)), "shape"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param


def _times_with(i, value):
    t = np.full(6000, 1e-3)
    t[i] = value
    return t


@pytest.mark.parametrize("times", [_times_with(7, np.nan), _times_with(7, -1e-3), _times_with(7, 0.0),
                                   _times_with(7, -np.inf), [1e-3] * 7 + ["slow"] + [1e-3] * 5992],
                         ids=["nan", "negative", "zero", "-inf", "text"])
def test_replayed_times_that_are_not_times_are_refused_naming_the_config(times):
    with pytest.raises(BadInput) as e:
        S.run_search("random", SQUARE, 10, times=times)
    assert e.value.param == "times"
    if not isinstance(times, list):
        assert f"config 7 ({schedule.all_configs()[7]})" in str(e.value)


def test_a_space_where_nothing_launches_is_refused_and_inf_alone_is_a_failed_config():
    with pytest.raises(BadInput) as e:
        S.run_search("random", SQUARE, 10, times=np.full(6000, np.inf))
    assert e.value.param == "times" and "nothing launches" in str(e.value)
    r = S.run_search("exhaustive", SQUARE, 10, times=_times_with(3, np.inf))
    assert r.times == (1e-3, 1e-3, 1e-3, math.inf, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3)


def test_the_time_model_range_edge():
    """Below 2**62 tiles of the smallest (16 x 16) tile the model prices the shape, and its times respect the two
    floors no schedule beats (compulsory HBM traffic, peak FLOPs); at 2**62 tiles it refuses, naming shape."""
    M, N, K = 2**35, 2**35 - 16, 16                       # 2**31 x (2**31 - 1) tiles
    schedule.model_shape(M, N, K)
    t = schedule.times_for_shape(M, N, K)
    best = t[np.isfinite(t)].min()
    assert best >= (M * K + K * N + M * N) * 2 / H100.hbm_bytes_per_s
    assert best >= 2 * M * N * K / H100.tc_peak_flops
    with pytest.raises(BadInput) as e:
        schedule.model_shape(2**35, 2**35, 16)           # 2**62 tiles
    assert e.value.param == "shape"
    assert schedule.model_shape(2**62 - 1, 16, 16) == (2**62 - 1, 16, 16)
    with pytest.raises(BadInput):
        schedule.model_shape(2**62, 1, 1)


@pytest.mark.parametrize("name,module", [("tpe", "optuna"), ("model", "sklearn"), ("learned", "sklearn")])
def test_without_the_tune_extra_the_strategy_says_what_to_install(monkeypatch, name, module):
    for mod in list(sys.modules):
        if mod == module or mod.startswith(module + "."):
            monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, module, None)           # import fails as if not installed
    with pytest.raises(BadInput) as e:
        S.run_search(name, SQUARE, 20)
    assert e.value.param == "strategy"
    assert "tune extra" in str(e.value) and "pip install 'tilebound[tune]'" in str(e.value)


def test_cmaes_without_the_cmaes_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cmaes", None)
    with pytest.raises(BadInput) as e:
        S.run_search("cmaes", SQUARE, 20)
    assert e.value.param == "strategy" and "cmaes" in str(e.value) and "tilebound[tune]" in str(e.value)


@pytest.mark.parametrize("times", [
    np.ones(6000, bool),                                           # was accepted as 1 s each
    [True] * 6000,
    [1e-3] * 5999 + [True],
    np.full(6000, 1e-3 + 0j),                                      # complex: the imaginary part would be dropped
    np.array(["1e-3"] * 6000),                                     # strings NumPy would read as numbers
    ["1e-3"] * 6000,
    np.array([1e-3] * 5999 + [True], dtype=object),
    [10**400] * 6000,                                              # beyond a float (was an OverflowError)
    np.full(6000, 2**60, dtype=np.int64),                          # not exact as a float
    np.full(6000, np.datetime64("2024-01-01")),
], ids=["bool-array", "bool-list", "one-bool", "complex", "str-array", "str-list", "object-with-bool",
        "int-10**400", "int-beyond-2**53", "datetime"])
def test_times_that_are_not_a_real_array_of_the_space_are_refused_naming_times(times):
    with pytest.raises(BadInput) as e:
        S.run_search("random", SQUARE, 10, times=times)
    assert e.value.param == "times" and len(str(e.value)) < 300
    with pytest.raises(BadInput) as e:
        S.check_times(times, "times_of")
    assert e.value.param == "times_of"


@pytest.mark.parametrize("times", [np.full(6000, 1e-3), np.full(6000, 1e-3, np.float32), np.full(6000, 3, np.int64),
                                   np.full(6000, 3, np.uint8), [1e-3] * 6000, [3] * 6000,
                                   np.array([1e-3] * 6000, dtype=object)],
                         ids=["float64", "float32", "int64", "uint8", "float-list", "int-list", "object-floats"])
def test_real_times_of_any_width_are_taken_as_float64(times):
    """The control of the refusals above: real arrays and sequences of any width are still taken."""
    got = S.check_times(times)
    assert got.dtype == np.float64 and got.shape == (6000,)
    assert S.run_search("exhaustive", SQUARE, 3, times=times).times == tuple(float(t) for t in got[:3])
