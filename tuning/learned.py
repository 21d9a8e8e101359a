"""A learned cost model over the schedule space: features from the exact formulas, trees from scikit-learn.

**Features** (:func:`features`, named by :data:`FEATURES`): for one shape, a row per config of
:func:`tuning.schedule.all_configs`, each a quantity of the config or the shape, not a guess:

* the knobs themselves (``B_M, B_N, B_K, warps, s, G_M``, the models' names) and the warp tile
  ``(B_M/w_y) x (B_N/w_x)`` (the warp grid of :data:`tuning.schedule.WARP_GRID`);
* resources, from :mod:`symbolic.models.gemm`'s exact definitions (model ``gemm.resources``):
  shared memory ``s (B_M + B_N) B_K x 2`` bytes (:func:`~symbolic.models.gemm.smem_bytes`) and the
  register estimate (:func:`~symbolic.models.gemm.regs_estimate`); co-resident blocks per SM
  (:func:`tuning.schedule.blocks_per_sm`); whether the launch rules pass (:data:`tuning.schedule.LAUNCH_RULES`,
  what a compiler tells before anything runs);
* tiles and waves: ``t_m = ceil(M/B_M)``, ``t_n``, ``t_k`` and ``t_m t_n`` tiles; waves
  ``ceil(tiles / (blocks per SM x SMs))`` and the last wave's share of the slots;
* padding and traffic, from model ``gemm.tiled`` evaluated exactly (``Model.evaluate_grid``):
  padded over useful FLOPs, reads and writes in elements, and the intensity (FLOP per byte);
* the shape: ``M``, ``N``, ``K`` (log2) and a roofline floor ``max(padded FLOPs / peak, bytes / HBM
  bandwidth)`` with the GPU's figures (:mod:`symbolic.hardware`).

The exact values are Python ints and Fractions; they become floats only here, as regression inputs.
The interface to the formulas is therefore
``gemm.tiled.evaluate_grid(quantity, M=, N=, K=, B_M=, B_N=, B_K=)`` (exact, over the 100 distinct tiles
of a shape; :func:`tile_counts`) and the resource functions applied to the config columns; the model
names and their parameters are :mod:`symbolic.models.gemm`'s own.

**The model** (:class:`LearnedCostModel`, :func:`train`): scikit-learn's histogram gradient-boosted trees
regress ``log(time)`` of the analytic model (:func:`tuning.schedule.times_for_shape`) on a sample of
launchable configs of each training shape.  It predicts a time for every config of an unseen shape in one
call; configs the launch rules refuse are ``inf``, as the compiler would say.  :func:`rank_quality` scores
it on shapes it was not trained on: Spearman's rho between predicted and model times over the launchable
configs, whether its top-1 runs within 5 % of the optimum, top-10 recall (the share of its 10 best-predicted
configs that are among the 10 fastest, a tie with the 10th counting as among them), and the mean
squared error of ``log(time)`` beside a constant predictor's (the training mean).

scikit-learn is the ``tune`` extra (``pip install 'tilebound[tune]'``); without it :func:`train` raises
:class:`~base.errors.BadInput` naming the extra.  The training target is a model, not a GPU: what is
learned is the analytic model's structure (TenSet / AutoTVM learn from measurements).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

from base.dtypes import element_bytes
from base.errors import BadInput
from base.validate import integer
from symbolic.models import gemm

from . import schedule
from .shapes import COURSE_SHAPES, Shape, as_mnk, llm_shapes

__all__ = ["FEATURES", "features", "tile_counts", "launchable", "gpu_constants", "require", "one_thread",
           "LearnedCostModel", "train", "training_shapes", "RankQuality", "rank_quality", "default_model"]

#: (name, meaning) of each column of :func:`features`
FEATURES: tuple = (
    ("B_M", "B_M, tile rows"), ("B_N", "B_N, tile columns"), ("B_K", "B_K, the K-step"),
    ("warps", "warps per block (w_y x w_x)"), ("s", "s, pipeline stages"), ("G_M", "G_M, launch-order grouping"),
    ("warp_rows", "B_M / w_y, a warp's tile rows"), ("warp_cols", "B_N / w_x, a warp's tile columns"),
    ("smem_bytes", "shared memory of the pipeline, s (B_M + B_N) B_K x 2 bytes (gemm.resources)"),
    ("regs", "registers per thread, the course's estimate (gemm.resources)"),
    ("blocks_per_sm", "co-resident blocks per SM (smem, registers, warps, blocks)"),
    ("launches", "1 when every launch rule passes"),
    ("t_m", "ceil(M / B_M)"), ("t_n", "ceil(N / B_N)"), ("t_k", "ceil(K / B_K), K-steps"),
    ("tiles", "t_m t_n blocks"), ("waves", "ceil(tiles / (blocks per SM x SMs))"),
    ("last_wave", "tiles / (waves x slots): how full the waves are"),
    ("padding", "padded / useful FLOPs (gemm.tiled flops_padded / flops)"),
    ("reads", "elements read from global memory (gemm.tiled reads)"),
    ("writes", "elements written (gemm.tiled writes)"),
    ("intensity", "FLOP per byte of traffic (gemm.tiled intensity)"),
    ("log2_M", "log2 M"), ("log2_N", "log2 N"), ("log2_K", "log2 K"),
    ("roofline_s", "max(padded FLOPs / peak, (reads + writes) x 2 B / HBM bandwidth), seconds"),
)
_NAMES = tuple(n for n, _ in FEATURES)
#: bytes of an FP16 operand or output element, from the one element-size table (as the time model uses)
_ELEMENT = element_bytes("fp16")


def require(module: str, what: str):
    """Import ``module`` of the ``tune`` extra, or :class:`~base.errors.BadInput` naming ``strategy`` that
    says which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        pkg = {"sklearn": "scikit-learn", "optuna": "Optuna"}.get(top, top)
        raise BadInput("strategy", f"{what} needs {pkg}, which is not installed; install the tune extra: "
                                   "pip install 'tilebound[tune]'") from None


def one_thread():
    """A context in which OpenMP and BLAS run one thread: scikit-learn's histogram trees otherwise spin
    threads that, on a busy machine, make a one-second fit take a minute (measured on 2 shared cores)."""
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1)


def gpu_constants(gpu) -> schedule.TimeModelConstants:
    """The time model's constants for ``gpu`` (a name of :data:`tuning.schedule.TIME_MODELS`, any case);
    :class:`~base.errors.BadInput` naming ``gpu`` otherwise."""
    if isinstance(gpu, schedule.TimeModelConstants):
        return gpu
    name = getattr(gpu, "name", gpu)
    for key, k in schedule.TIME_MODELS.items():
        if key.lower() == str(name).lower():
            return k
    raise BadInput("gpu", f"unknown GPU {name!r}; the time model knows {', '.join(schedule.TIME_MODELS)}")


@lru_cache(maxsize=8)
def _config_columns(k: schedule.TimeModelConstants) -> dict:
    """Shape-independent columns over all configs (read-only arrays)."""
    cols = schedule.config_table()
    w_y, w_x = schedule.warp_grid(cols["warps"])
    out = {key: v.astype(float) for key, v in cols.items()}
    out["warp_rows"] = (cols["B_M"] // w_y).astype(float)
    out["warp_cols"] = (cols["B_N"] // w_x).astype(float)
    out["smem_bytes"] = gemm.smem_bytes(cols["B_M"], cols["B_N"], cols["B_K"], cols["s"]).astype(float)
    out["regs"] = gemm.regs_estimate(cols["B_M"], cols["B_N"], w_y, w_x).astype(float)
    out["blocks_per_sm"] = schedule.blocks_per_sm(cols, k).astype(float)
    out["launches"] = launchable(k).astype(float)
    for v in out.values():
        v.setflags(write=False)
    return out


@lru_cache(maxsize=8)
def _launchable(k: schedule.TimeModelConstants) -> np.ndarray:
    ok = schedule.launchable(schedule.config_table(), k.hw)
    ok.setflags(write=False)
    return ok


def launchable(gpu="H100") -> np.ndarray:
    """Boolean mask over :func:`~tuning.schedule.all_configs`: every rule of
    :data:`~tuning.schedule.LAUNCH_RULES` passes (what a compiler reports before a run)."""
    return _launchable(gpu_constants(gpu))


_TILES = tuple((bm, bn, bk) for bm in schedule.SPACE["B_M"] for bn in schedule.SPACE["B_N"]
               for bk in schedule.SPACE["B_K"])
_TILE_QUANTITIES = ("reads", "writes", "flops", "flops_padded", "intensity")


@lru_cache(maxsize=1)
def _tile_of_config() -> np.ndarray:
    """For each config, the index of its (B_M, B_N, B_K) in ``_TILES``."""
    where = {t: i for i, t in enumerate(_TILES)}
    cols = schedule.config_table()
    return np.array([where[t] for t in zip(cols["B_M"].tolist(), cols["B_N"].tolist(), cols["B_K"].tolist())])


@lru_cache(maxsize=1024)
def tile_counts(M: int, N: int, K: int) -> dict:
    """Model ``gemm.tiled`` evaluated exactly at every (B_M, B_N, B_K) of the space (``_TILES`` order):
    ``{quantity: [exact value, ...]}`` for reads, writes, flops, flops_padded (ints) and intensity (Fraction)."""
    bm, bn, bk = (np.array(v, dtype=object) for v in zip(*_TILES))
    return {q: tuple(gemm.tiled.evaluate_grid(q, M=M, N=N, K=K, B_M=bm, B_N=bn, B_K=bk).tolist())
            for q in _TILE_QUANTITIES}


def features(shape, gpu="H100") -> np.ndarray:
    """The feature matrix of ``shape`` (a :class:`~tuning.shapes.Shape` or ``(M, N, K)``): one row per config
    of :func:`~tuning.schedule.all_configs`, one column per entry of :data:`FEATURES`; a shape beyond the time
    model's range is :class:`~base.errors.BadInput` naming ``shape`` (:func:`tuning.schedule.model_shape`)."""
    M, N, K = schedule.model_shape(*as_mnk(shape))
    k = gpu_constants(gpu)
    hw = k.hw
    c = _config_columns(k)
    cols = schedule.config_table()
    exact = tile_counts(M, N, K)
    which = _tile_of_config()
    q = {name: np.array([float(v) for v in exact[name]])[which] for name in _TILE_QUANTITIES}
    t_m = -(-M // cols["B_M"])
    t_n = -(-N // cols["B_N"])
    t_k = -(-K // cols["B_K"])
    tiles = t_m * t_n
    slots = np.maximum(c["blocks_per_sm"], 1.0) * hw.sms
    waves = np.ceil(tiles / slots)
    roof = np.maximum(q["flops_padded"] / float(hw.tc_peak_flops),
                      (q["reads"] + q["writes"]) * _ELEMENT / float(hw.hbm_bytes_per_s))
    n = len(cols["B_M"])
    cols_out = {
        **{name: c[name] for name in (*schedule.SPACE, "warp_rows", "warp_cols",
                                      "smem_bytes", "regs", "blocks_per_sm", "launches")},
        "t_m": t_m.astype(float), "t_n": t_n.astype(float), "t_k": t_k.astype(float), "tiles": tiles.astype(float),
        "waves": waves, "last_wave": tiles / (waves * slots), "padding": q["flops_padded"] / q["flops"],
        "reads": q["reads"], "writes": q["writes"], "intensity": q["intensity"],
        "log2_M": np.full(n, math.log2(M)), "log2_N": np.full(n, math.log2(N)), "log2_K": np.full(n, math.log2(K)),
        "roofline_s": roof,
    }
    return np.column_stack([cols_out[name] for name in _NAMES])




# ------------------------------------------------------------------------------------------- the model
@dataclass
class LearnedCostModel:
    """A regressor of ``log(seconds)`` on :func:`features`; :meth:`predict` gives seconds for every config."""

    estimator: object
    gpu: str
    train_shapes: tuple
    rows: int
    constant: float                      # the training mean of log(time): the constant predictor
    seed: int = 0
    fit_seconds: float = field(default=0.0, compare=False)

    def predict_log(self, shape) -> np.ndarray:
        """Predicted ``log(seconds)`` of every config (also those that cannot launch)."""
        X = features(shape, self.gpu)
        with one_thread():
            return np.asarray(self.estimator.predict(X), dtype=float)

    def predict(self, shape) -> np.ndarray:
        """Predicted seconds of every config of :func:`~tuning.schedule.all_configs`; ``inf`` where the launch
        rules refuse it."""
        out = np.exp(self.predict_log(shape))
        out[~launchable(self.gpu)] = np.inf
        return out


def training_shapes(n: int = 40, seed: int = 0, exclude: Sequence = ()) -> tuple:
    """``n`` GEMM shapes drawn (seeded) log-uniformly: ``M`` in 1..8192, ``N`` and ``K`` multiples of 128 in
    512..57344.  Shapes in ``exclude`` and every shape of :data:`~tuning.shapes.COURSE_SHAPES` and
    :func:`~tuning.shapes.llm_shapes` are left out, so the scores on those are on unseen shapes."""
    n = integer("n", n, least=1)
    rng = np.random.default_rng(integer("seed", seed, least=0))
    held = {s.mnk for s in COURSE_SHAPES} | {s.mnk for s in llm_shapes()} | {as_mnk(s) for s in exclude}
    out: list[Shape] = []
    seen = set(held)
    while len(out) < n:
        M = int(round(2 ** rng.uniform(0, 13)))
        N = 128 * int(round(2 ** rng.uniform(2, math.log2(448))))
        K = 128 * int(round(2 ** rng.uniform(2, math.log2(448))))
        if (M, N, K) not in seen:
            seen.add((M, N, K))
            out.append(Shape(M, N, K, "training"))
    return tuple(out)


def train(shapes: Sequence | None = None, gpu="H100", per_shape: int = 400, seed: int = 0,
          times_of=None) -> LearnedCostModel:
    """Fit the cost model on ``per_shape`` launchable configs (drawn, seeded) of each training shape
    (default: :func:`training_shapes`).  ``times_of(shape) -> times of all configs`` defaults to the
    analytic model.  Needs scikit-learn (the ``tune`` extra)."""
    import time as _time

    ens = require("sklearn.ensemble", "the learned cost model")
    shapes = training_shapes() if shapes is None else tuple(shapes)
    if not shapes:
        raise BadInput("shapes", "the learned cost model needs at least one training shape")
    per_shape = integer("per_shape", per_shape, least=1)
    seed = integer("seed", seed, least=0)
    k = gpu_constants(gpu)
    name = k.hw.name
    rng = np.random.default_rng(seed)
    ok = launchable(name)
    X, y = [], []
    for s in shapes:
        M, N, K = as_mnk(s)
        ts = (schedule.times_for_shape(M, N, K, hw=k) if times_of is None else np.asarray(times_of(s), float))
        idx = np.flatnonzero(ok & np.isfinite(ts))
        pick = rng.choice(idx, size=min(per_shape, len(idx)), replace=False)
        X.append(features((M, N, K), name)[pick])
        y.append(np.log(ts[pick]))
    X, y = np.vstack(X), np.concatenate(y)
    est = ens.HistGradientBoostingRegressor(max_iter=150, learning_rate=0.15, max_leaf_nodes=31,
                                            early_stopping=False, random_state=seed)
    t0 = _time.perf_counter()
    with one_thread():
        est.fit(X, y)
    return LearnedCostModel(est, name, tuple(as_mnk(s) for s in shapes), len(y), float(y.mean()), seed,
                            _time.perf_counter() - t0)


@lru_cache(maxsize=4)
def default_model(gpu: str = "H100") -> LearnedCostModel:
    """The model :func:`train` fits with its defaults (kept for the session: strategies reuse it)."""
    return train(gpu=gpu_constants(gpu).hw.name)


# ------------------------------------------------------------------------------------------- rank quality
@dataclass(frozen=True)
class RankQuality:
    """How well a model orders one shape's launchable configs."""

    shape: tuple
    spearman: float          # rank correlation of predicted and model times
    top1_ratio: float        # model time of the predicted best / the optimum
    top10_recall: float      # share of its 10 best-predicted among the 10 fastest (ties with the 10th included)
    mse: float               # mean squared error of log(time)
    mse_constant: float      # the same for the constant predictor (training mean)

    @property
    def top1_within_5pct(self) -> bool:
        return self.top1_ratio <= 1.05


def rank_quality(model: LearnedCostModel, shapes: Sequence, times_of=None, on_shape=None) -> list[RankQuality]:
    """:class:`RankQuality` of ``model`` on each of ``shapes`` (which should not be among its training shapes:
    a shape it was trained on is :class:`~base.errors.BadInput` naming ``shapes``); ``on_shape()``, when given,
    is called after each shape (a progress display)."""
    from scipy.stats import spearmanr

    out = []
    k = gpu_constants(model.gpu)
    for s in shapes:
        M, N, K = as_mnk(s)
        if (M, N, K) in model.train_shapes:
            raise BadInput("shapes", f"{M}x{N}x{K} is one of the model's training shapes; rank quality is "
                                     "measured on shapes it has not seen")
        ts = schedule.times_for_shape(M, N, K, hw=k) if times_of is None else np.asarray(times_of(s), float)
        ok = np.isfinite(ts) & launchable(model.gpu)
        true, pred = np.log(ts[ok]), model.predict_log((M, N, K))[ok]
        rho = float(spearmanr(pred, true).statistic)
        order_p = np.argsort(pred, kind="stable")
        top1 = float(np.exp(true[order_p[0]] - true.min()))
        tenth = np.sort(true)[min(9, len(true) - 1)]        # a config tied with the 10th fastest counts as top 10
        recall = float(np.mean(true[order_p[:10]] <= tenth))
        out.append(RankQuality((M, N, K), rho, top1, recall, float(np.mean((pred - true) ** 2)),
                               float(np.mean((model.constant - true) ** 2))))
        if on_shape is not None:
            on_shape()
    return out
