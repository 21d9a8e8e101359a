"""Search strategies over the schedule space, under one budget of unique evaluations.

The space is :func:`tuning.schedule.all_configs` (6000 configs); a config is named by its index there.
A strategy sees the space only through an :class:`Evaluator`: calling it "measures" a config (its time
from the analytic model :func:`tuning.schedule.times_for_shape`, replayed as Kernel Tuner's simulation mode
replays recorded timings, Willemsen et al.; ``docs/conventions.md`` §7).  The rules, as on a GPU:

* the **budget counts unique evaluations**: a config measured before is answered from memory, free;
* a config that **cannot launch counts** as a failed evaluation (its time is ``inf``);
* every strategy is **seeded** (``numpy.random.default_rng(seed)``; Optuna's and scikit-learn's seeds are
  drawn from it), so a seed reproduces its trace.

The strategies (:data:`STRATEGIES`):

``exhaustive``  every config in space order (with a budget of 6000 it returns the optimum).
``random``      a seeded permutation of the space: draws without replacement.
``coordinate``  PyTorch Inductor's ``CoordescTuner`` (``torch/_inductor/runtime/coordinate_descent_tuner.py``):
                for each knob in turn, try its neighbour values (the adjacent values of :data:`~tuning.schedule.SPACE`:
                x2 / /2 for the power-of-two knobs, +-1 stage) and move when the time improves by more than
                0.1 % (``has_improvement``); repeat until no knob improves.  Inductor starts from the kernel's
                heuristic config and stops there; with budget left we restart from a random config.
``annealing``   simulated annealing: a random neighbour (one knob one step), accepted with probability
                ``exp(-(t' - t) / t / T)`` (relative worsening, as Kernel Tuner's), ``T`` falling geometrically
                from 1 to 0.001 over the budget; a restart when every neighbour has been measured.
``genetic``     a (mu + lambda) genetic search: population 16, binary tournaments, uniform crossover,
                each knob mutated to an adjacent value with probability 1/6, the 16 best kept.
``tpe``         Optuna's ``TPESampler`` (Bergstra et al. 2011) over the six knobs as categorical parameters;
                configs that cannot launch are infeasible trials (``Trial.set_constraint``).
``cmaes``       Optuna's ``CmaEsSampler`` over the knobs' value indices as integers (needs the ``cmaes``
                package besides the tune extra); a failed config is told a penalty (twice the slowest seen).
``triton``      Triton's prune-then-measure (``triton.autotune(prune_configs_by={"perf_model", "top_k",
                "early_config_prune"})``; ``triton/ops/matmul_perf_model.py``): drop configs over the shared
                memory limit, keep for each (B_M, B_N, B_K, warps) the two stage counts ``s`` nearest the latency
                estimate (``early_config_prune``), rank the rest by ``estimate_matmul_time`` (compute at
                ``min(ctas x min(warps, 4), 4 SMs)`` sub-cores, loads from DRAM and L2 with 80 % of re-reads hits,
                stores) and measure the top ``budget``.  Deterministic: the seed changes nothing.
``model``       AutoTVM's ``XGBTuner`` (Chen et al., *Learning to Optimize Tensor Programs*, 2018): measure
                a random batch, fit gradient-boosted trees (scikit-learn) on :func:`tuning.learned.features`
                -> log time every ``plan_size`` = 10 measurements, measure the model's best 10 unmeasured
                (5 % of them random, AutoTVM's epsilon-greedy).  The space is small, so the model is
                maximised by ranking every config instead of AutoTVM's simulated annealing.
``learned``     the learned cost model of :mod:`tuning.learned`, trained once on other shapes, ranks the
                configs the launch rules accept; measure them in that order (prune-then-measure with a
                learned perf model; TenSet-style transfer).  Deterministic once trained (the model's seed is
                fixed), so the seed changes nothing.

Optuna and scikit-learn are the ``tune`` extra; a strategy that needs one and does not find it raises
:class:`~base.errors.BadInput` naming ``strategy`` and the extra to install.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from base.errors import BadInput
from base.validate import integer

from . import schedule
from .cache import _shown
from .learned import features, gpu_constants, launchable, one_thread, require
from .shapes import Shape, shape as make_shape

__all__ = ["Evaluator", "Task", "Strategy", "STRATEGIES", "DEFAULT_STRATEGIES", "get_strategy", "SearchResult",
           "run_search", "check_budget", "check_times", "N_CONFIGS", "KNOBS", "LEVELS", "digits_of", "index_of", "neighbours", "triton_ranking",
           "triton_estimate"]

KNOBS = tuple(schedule.SPACE)
LEVELS = tuple(len(v) for v in schedule.SPACE.values())
_STRIDES = tuple(int(np.prod(LEVELS[i + 1:], dtype=np.int64)) for i in range(len(LEVELS)))
N_CONFIGS = int(np.prod(LEVELS))


def index_of(digits) -> int:
    """The index in :func:`~tuning.schedule.all_configs` of the config whose knob ``i`` takes its
    ``digits[i]``-th value (the last knob varies fastest, as ``itertools.product``)."""
    return int(sum(int(d) * s for d, s in zip(digits, _STRIDES)))


def digits_of(index: int) -> tuple:
    """The value index of each knob of config ``index`` (inverse of :func:`index_of`)."""
    out = []
    for s, n in zip(_STRIDES, LEVELS):
        out.append((index // s) % n)
    return tuple(out)


def neighbours(index: int, knob: int) -> list[int]:
    """Configs that differ from ``index`` in one knob by one step of its value list (down, then up)."""
    d = list(digits_of(index))
    out = []
    for step in (-1, 1):
        v = d[knob] + step
        if 0 <= v < LEVELS[knob]:
            e = d.copy()
            e[knob] = v
            out.append(index_of(e))
    return out


class _Spent(Exception):
    """The budget is used up (raised by the evaluator, caught by :func:`run_search`)."""


class Evaluator:
    """The black box a strategy searches: ``ev(i)`` is config ``i``'s time (``inf``: it cannot launch).

    Only a config not measured before counts against the budget; once the budget is spent, a new config
    raises (the run ends there).  ``trace`` is the configs in the order they were first measured."""

    def __init__(self, times: np.ndarray, budget: int):
        self._times = np.asarray(times, dtype=float)
        self.n = len(self._times)
        self.budget = budget
        self.trace: list[int] = []
        self._seen: dict[int, float] = {}
        self.best = math.inf

    def __call__(self, i) -> float:
        i = int(i)
        t = self._seen.get(i)
        if t is not None:
            return t
        if not 0 <= i < self.n:
            raise IndexError(f"config index {i} outside 0..{self.n - 1}")
        if len(self.trace) >= self.budget:
            raise _Spent
        t = float(self._times[i])
        self._seen[i] = t
        self.trace.append(i)
        self.best = min(self.best, t)
        return t

    def seen(self, i) -> bool:
        return int(i) in self._seen

    def value(self, i) -> float | None:
        """The time of an already measured config (``None`` if not measured)."""
        return self._seen.get(int(i))

    @property
    def used(self) -> int:
        return len(self.trace)

    @property
    def done(self) -> bool:
        return self.used >= min(self.budget, self.n)

    def unseen(self) -> np.ndarray:
        mask = np.ones(self.n, dtype=bool)
        mask[self.trace] = False
        return np.flatnonzero(mask)

    def random_unseen(self, rng: np.random.Generator) -> int:
        """A uniformly drawn config not measured yet."""
        if len(self._seen) < self.n // 2:               # rejection is cheap while most are unseen
            while True:
                i = int(rng.integers(self.n))
                if i not in self._seen:
                    return i
        free = self.unseen()
        if not len(free):
            raise _Spent
        return int(free[rng.integers(len(free))])


@dataclass(frozen=True)
class Task:
    """What a strategy may know besides the evaluator: the shape and the GPU (for a perf model or features)."""

    shape: Shape
    gpu: str


# ------------------------------------------------------------------------------------------ strategies
def _exhaustive(ev: Evaluator, task: Task, rng) -> None:
    for i in range(ev.n):
        ev(i)


def _random(ev: Evaluator, task: Task, rng) -> None:
    for i in rng.permutation(ev.n):
        ev(i)


def _start(ev: Evaluator, rng) -> tuple[int, float]:
    """A random unmeasured config that launches (each failed try counts, as on a GPU)."""
    while True:
        i = ev.random_unseen(rng)
        t = ev(i)
        if math.isfinite(t):
            return i, t


#: CoordescTuner's has_improvement threshold (relative)
COORDINATE_THRESHOLD = 1e-3


def _coordinate(ev: Evaluator, task: Task, rng) -> None:
    while not ev.done:
        cur, t_cur = _start(ev, rng)
        improved = True
        while improved:
            improved = False
            for knob in range(len(KNOBS)):
                for nb in neighbours(cur, knob):
                    t = ev(nb)
                    if t < t_cur * (1 - COORDINATE_THRESHOLD):
                        cur, t_cur, improved = nb, t, True


#: steps in a row that meet only measured configs before simulated annealing restarts at a random config
ANNEALING_PATIENCE = 50


def _annealing(ev: Evaluator, task: Task, rng, t0: float = 1.0, t_min: float = 1e-3) -> None:
    cur, t_cur = _start(ev, rng)
    stale = 0
    while not ev.done:
        temp = t0 * (t_min / t0) ** (ev.used / ev.budget)
        knob = int(rng.integers(len(KNOBS)))
        options = neighbours(cur, knob)
        nb = options[int(rng.integers(len(options)))]
        fresh = not ev.seen(nb)
        t = ev(nb)
        stale = 0 if fresh else stale + 1
        if math.isfinite(t) and (t <= t_cur or rng.random() < math.exp(-(t - t_cur) / t_cur / temp)):
            cur, t_cur = nb, t
        if stale > ANNEALING_PATIENCE:                  # its neighbourhood is measured: restart elsewhere
            cur, t_cur = _start(ev, rng)
            stale = 0


def _genetic(ev: Evaluator, task: Task, rng, pop_size: int = 16, mutation: float = 1 / 6) -> None:
    pop = []
    for _ in range(min(pop_size, ev.budget)):
        i = ev.random_unseen(rng)
        pop.append((ev(i), i))
    while not ev.done:
        children = []
        tries = 0
        while len(children) < pop_size and not ev.done:
            a = min(pop[int(rng.integers(len(pop)))], pop[int(rng.integers(len(pop)))])
            b = min(pop[int(rng.integers(len(pop)))], pop[int(rng.integers(len(pop)))])
            da, db = digits_of(a[1]), digits_of(b[1])
            child = [x if rng.random() < 0.5 else y for x, y in zip(da, db)]
            for k in range(len(child)):
                if rng.random() < mutation:
                    child[k] = int(np.clip(child[k] + (1 if rng.random() < 0.5 else -1), 0, LEVELS[k] - 1))
            i = index_of(child)
            tries += 1
            if ev.seen(i):
                if tries < 20 * pop_size:
                    continue
                i = ev.random_unseen(rng)             # the population has converged: a fresh immigrant
            children.append((ev(i), i))
        pop = heapq.nsmallest(pop_size, pop + children)


#: consecutive proposals of measured configs after which an Optuna search counts as converged and stops
OPTUNA_MAX_REPEATS = 100


def _optuna_loop(ev: Evaluator, study, suggest: Callable, tell_value: Callable, constrained: bool) -> None:
    repeats = 0
    while not ev.done:
        trial = study.ask()
        i = suggest(trial)
        fresh = not ev.seen(i)
        t = ev(i)
        if constrained and hasattr(trial, "set_constraint"):      # Optuna >= 5: infeasible when > 0
            trial.set_constraint("launch", 0.0 if math.isfinite(t) else 1.0)
        elif constrained:
            trial.set_user_attr("violation", 0.0 if math.isfinite(t) else 1.0)
        study.tell(trial, tell_value(t))
        repeats = 0 if fresh else repeats + 1
        if repeats > OPTUNA_MAX_REPEATS:
            return


def _quiet(optuna) -> None:
    import warnings

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def _tpe(ev: Evaluator, task: Task, rng) -> None:
    optuna = require("optuna", "the tpe strategy (Optuna's TPE sampler)")
    _quiet(optuna)
    seed = int(rng.integers(2**31))
    if hasattr(optuna.trial.Trial, "set_constraint"):   # Optuna >= 5 reads the trial's constraints itself
        sampler = optuna.samplers.TPESampler(seed=seed)
    else:
        sampler = optuna.samplers.TPESampler(seed=seed, constraints_func=lambda tr: (tr.user_attrs["violation"],))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    values = list(schedule.SPACE.values())

    def suggest(trial):
        return index_of([vals.index(trial.suggest_categorical(k, list(vals))) for k, vals in zip(KNOBS, values)])

    worst = [0.0]

    def told(t):
        if math.isfinite(t):
            worst[0] = max(worst[0], math.log(t) + 1.0) if worst[0] else math.log(t) + 1.0
            return math.log(t)
        return worst[0]                                 # infeasible anyway (constraints_func)

    _optuna_loop(ev, study, suggest, told, constrained=True)


def _cmaes(ev: Evaluator, task: Task, rng) -> None:
    optuna = require("optuna", "the cmaes strategy (Optuna's CMA-ES sampler)")
    try:
        import cmaes  # noqa: F401  (Optuna's CmaEsSampler needs it)
    except ImportError:
        raise BadInput("strategy", "the cmaes strategy needs the cmaes package (Optuna's CMA-ES sampler uses it), "
                                   "which the tune extra installs: pip install 'tilebound[tune]'") from None
    _quiet(optuna)
    sampler = optuna.samplers.CmaEsSampler(seed=int(rng.integers(2**31)), with_margin=True)
    study = optuna.create_study(direction="minimize", sampler=sampler)

    def suggest(trial):
        return index_of([trial.suggest_int(k, 0, n - 1) for k, n in zip(KNOBS, LEVELS)])

    slowest = [None]

    def told(t):
        if math.isfinite(t):
            slowest[0] = t if slowest[0] is None else max(slowest[0], t)
            return math.log(t)
        return math.log(2 * slowest[0]) if slowest[0] else 0.0

    _optuna_loop(ev, study, suggest, told, constrained=False)


# ------------------------------------------------------------------------------- Triton's perf model
def triton_estimate(M: int, N: int, K: int, gpu="H100") -> np.ndarray:
    """``estimate_matmul_time`` of Triton's ``matmul_perf_model.py`` (SPLIT_K = 1, FP16) for every config,
    in seconds, with the GPU's peak, SM count and HBM bandwidth from :mod:`symbolic.hardware`:
    ``max(compute, loads) + store``, compute at ``min(ctas x min(warps, 4), 4 x SMs) / (4 x SMs)`` of peak,
    DRAM bandwidth saturating at 32 active CTAs, L2 at 4 x DRAM, 80 % of re-reads from L2, the store at
    60 % of DRAM bandwidth.  It ignores ``s`` and ``G_M`` (Triton's pruning picks the stages)."""
    hw = gpu_constants(gpu).hw
    cols = schedule.config_table()
    bm, bn = cols["B_M"].astype(float), cols["B_N"].astype(float)
    ctas = np.ceil(M / bm) * np.ceil(N / bn)
    tm, tn = np.ceil(M / bm), np.ceil(N / bn)
    Mp, Np = np.maximum(M, bm), np.maximum(N, bn)
    subcores = 4 * hw.sms
    tput = np.minimum(subcores, ctas * np.minimum(cols["warps"], 4)) / subcores * float(hw.tc_peak_flops)
    compute = 2 * Mp * Np * K / tput
    bw1 = np.minimum(1, ctas / 32)
    bw2 = np.clip((ctas - 32) / (hw.sms - 32), 0, 1)
    dram = float(hw.hbm_bytes_per_s) * (bw1 * 0.95 + bw2 * 0.05)
    l2 = 4 * dram
    dt = 2
    load_dram = Mp * K * dt * (1 + 0.2 * (tn - 1)) + Np * K * dt * (1 + 0.2 * (tm - 1))
    load_l2 = Mp * K * dt * 0.8 * (tn - 1) + Np * K * dt * 0.8 * (tm - 1)
    loads = load_dram / dram + load_l2 / l2
    store = Mp * Np * dt / (0.6 * dram)
    return np.maximum(compute, loads) + store


def triton_ranking(M: int, N: int, K: int, gpu="H100") -> np.ndarray:
    """Config indices in the order Triton's prune-then-measure would measure them: ``early_config_prune``
    (shared memory within the per-block limit; per (B_M, B_N, B_K, warps) the two stage counts ``s`` nearest
    ``300 / mma_cycles``, preferring more stages), then ascending :func:`triton_estimate` (stable)."""
    hw = gpu_constants(gpu).hw
    cols = schedule.config_table()
    from symbolic.models.gemm import smem_bytes

    fits = smem_bytes(cols["B_M"], cols["B_N"], cols["B_K"], cols["s"]) <= hw.smem_per_block
    groups: dict[tuple, list] = {}
    for i in np.flatnonzero(fits):
        key = (int(cols["B_M"][i]), int(cols["B_N"][i]), int(cols["B_K"][i]), int(cols["warps"][i]))
        groups.setdefault(key, []).append(int(i))
    keep = np.zeros(len(fits), dtype=bool)
    for (bm, bn, bk, warps), members in groups.items():
        mma_cycles = bm * bn * bk / (16 * 8 * 16) / min(4, warps) * 8
        optimal = 300 / mma_cycles                         # ldgsts latency / mma cycles a stage
        stages = sorted({int(cols["s"][i]) for i in members})
        nearest = heapq.nsmallest(2, stages, key=lambda s: 10 + abs(s - optimal) if s < optimal else s - optimal)
        for i in members:
            if int(cols["s"][i]) in nearest:
                keep[i] = True
    est = triton_estimate(M, N, K, gpu)
    kept = np.flatnonzero(keep)
    return kept[np.argsort(est[kept], kind="stable")]


@lru_cache(maxsize=256)
def _triton_order(mnk: tuple, gpu: str) -> tuple:
    return tuple(int(i) for i in triton_ranking(*mnk, gpu=gpu))


def _triton(ev: Evaluator, task: Task, rng) -> None:
    for i in _triton_order(task.shape.mnk, task.gpu):
        ev(i)


# ----------------------------------------------------------------------------- model-based (AutoTVM)
#: AutoTVM's plan_size (refit every this many measurements) and epsilon-greedy share
PLAN_SIZE = 10
EPSILON = 0.05


def _model(ev: Evaluator, task: Task, rng, plan_size: int = PLAN_SIZE) -> None:
    ens = require("sklearn.ensemble", "the model strategy (scikit-learn's gradient-boosted trees)")
    import sklearn
    X = features(task.shape, task.gpu)
    for _ in range(plan_size):
        ev(ev.random_unseen(rng))
    while not ev.done:
        idx = np.array(ev.trace)
        t = np.array([ev.value(i) for i in idx])
        ok = np.isfinite(t)
        y = np.empty(len(t))
        if ok.any():
            y[ok] = np.log(t[ok])
            y[~ok] = np.log(t[ok].max()) + math.log(2)       # a failed config: worse than any seen
        else:
            y[:] = 0.0
        est = ens.GradientBoostingRegressor(n_estimators=40, max_depth=3, learning_rate=0.2,
                                            random_state=int(rng.integers(2**31)))
        with sklearn.config_context(skip_parameter_validation=True, assume_finite=True), one_thread():
            est.fit(X[idx], y)
            pred = est.predict(X)
        pred[idx] = np.inf
        order = np.argsort(pred, kind="stable")
        batch, pos = [], 0
        for _ in range(plan_size):
            if rng.random() < EPSILON:
                batch.append(None)                           # filled with a random config below
            else:
                while pos < len(order) and ev.seen(order[pos]):
                    pos += 1
                if pos < len(order):
                    batch.append(int(order[pos]))
                    pos += 1
        for i in batch:
            ev(ev.random_unseen(rng) if i is None else i)


@lru_cache(maxsize=256)
def _learned_order(mnk: tuple, gpu: str) -> tuple:
    from .learned import default_model

    pred = default_model(gpu).predict(mnk)
    cand = np.flatnonzero(launchable(gpu))
    return tuple(int(i) for i in cand[np.argsort(pred[cand], kind="stable")])


def _learned(ev: Evaluator, task: Task, rng) -> None:
    require("sklearn.ensemble", "the learned strategy (scikit-learn's gradient-boosted trees)")
    for i in _learned_order(task.shape.mnk, task.gpu):
        ev(i)


# ------------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class Strategy:
    name: str
    run: Callable
    summary: str
    needs: str = ""          # "", "optuna", "sklearn", "optuna+cmaes"
    seeded: bool = True      # False: the seed changes nothing (a deterministic order)


STRATEGIES: Mapping[str, Strategy] = MappingProxyType({s.name: s for s in (
    Strategy("exhaustive", _exhaustive, "every config in space order", seeded=False),
    Strategy("random", _random, "draws without replacement"),
    Strategy("coordinate", _coordinate, "one knob at a time (Inductor's CoordescTuner), random restarts"),
    Strategy("annealing", _annealing, "simulated annealing over one-knob steps"),
    Strategy("genetic", _genetic, "(mu + lambda) genetic search, population 16"),
    Strategy("tpe", _tpe, "Optuna's TPE sampler", "optuna"),
    Strategy("cmaes", _cmaes, "Optuna's CMA-ES sampler over value indices", "optuna+cmaes"),
    Strategy("triton", _triton, "Triton's early_config_prune + perf_model, measure the top k", seeded=False),
    Strategy("model", _model, "AutoTVM-style: gradient-boosted trees refit every 10 measurements", "sklearn"),
    Strategy("learned", _learned, "a cost model learned on other shapes ranks, measure in its order", "sklearn",
             seeded=False),
)})

#: what ``--strategy all`` runs: every strategy (the tune extra installs optuna, cmaes and scikit-learn)
DEFAULT_STRATEGIES = tuple(STRATEGIES)


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name``; :class:`~base.errors.BadInput` naming ``strategy`` otherwise."""
    s = STRATEGIES.get(str(name).lower()) if isinstance(name, str) else None
    if s is None:
        raise BadInput("strategy", f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}")
    return s


# ------------------------------------------------------------------------------------------ one run
@dataclass(frozen=True)
class SearchResult:
    """One run: the configs in the order first measured, their times, and the strategy's own wall time."""

    strategy: str
    shape: Shape
    gpu: str
    seed: int
    budget: int
    trace: tuple                       # config indices
    times: tuple                       # their model times (inf: failed)
    overhead_s: float = field(compare=False)

    @property
    def best_index(self) -> int | None:
        finite = [(t, i) for t, i in zip(self.times, self.trace) if math.isfinite(t)]
        return min(finite)[1] if finite else None

    @property
    def best_config(self) -> schedule.GemmConfig | None:
        i = self.best_index
        return None if i is None else schedule.all_configs()[i]

    @property
    def best_time(self) -> float:
        return min(self.times, default=math.inf)

    def best_so_far(self) -> np.ndarray:
        """Best time after each evaluation (``inf`` until a config launches), padded to the budget with the
        last value when the strategy stopped early."""
        out = np.full(self.budget, np.inf)
        if self.times:
            acc = np.minimum.accumulate(np.array(self.times, dtype=float))
            out[:len(acc)] = acc
            out[len(acc):] = acc[-1]
        return out


def check_budget(budget) -> int:
    """A budget of unique evaluations: an int in ``1..N_CONFIGS`` (a search never measures more configs than the
    space holds, so a larger budget is refused before anything is allocated for it)."""
    budget = integer("budget", budget, least=1)
    if budget > N_CONFIGS:
        raise BadInput("budget", f"at most {N_CONFIGS}, the configs in the space (a budget counts unique "
                                 f"evaluations), got {budget if budget < 10**30 else 'more than 10**30'}")
    return budget


def _real_times(times, name: str) -> np.ndarray:
    """``times`` as a float64 array when it holds real numbers: a float or integer array (not ``bool``,
    complex, string or object), or a sequence of Python/NumPy reals (not bools, strings); an integer beyond
    2**53 or a number beyond a float's range is refused.  The length is checked by the caller."""
    from numbers import Real

    from base.validate import real_array

    a = times if isinstance(times, np.ndarray) else None
    if a is None:
        if isinstance(times, (str, bytes, dict)) or not hasattr(times, "__len__"):
            raise BadInput(name, f"need one time (seconds) per config ({N_CONFIGS}), got {type(times).__name__}")
        if len(times) != N_CONFIGS:                 # before any element is looked at
            raise BadInput(name, f"need one time per config ({N_CONFIGS}), got {len(times)}")
        for i, t in enumerate(times):
            if isinstance(t, (bool, np.bool_)) or not isinstance(t, Real):
                raise BadInput(name, f"config {i} has time {_shown(t)}: a time is a real number of seconds "
                                     f"(not a bool, string or complex)")
        try:
            a = np.array([float(t) for t in times], dtype=np.float64)
        except OverflowError:
            raise BadInput(name, "holds a number beyond a float's range (about 1.8e308); give seconds") from None
    elif a.dtype == object:
        if a.shape != (N_CONFIGS,):
            raise BadInput(name, f"need one time per config ({N_CONFIGS}), got shape {a.shape}")
        return _real_times(list(a), name)
    if a.dtype.kind not in "fiu":                   # bool, complex, strings, dates: not times
        raise BadInput(name, f"must be a real (float or integer) array of seconds, got dtype {a.dtype}")
    return real_array(name, a)


def check_times(times, name: str = "times") -> np.ndarray:
    """One time per config of the space (seconds, ``inf`` for a config that cannot launch) as a float array;
    :class:`~base.errors.BadInput` naming ``name`` for what is not a real float or integer array (a ``bool``,
    complex, string or object array; a sequence holding a bool or a string), the wrong length, an integer
    beyond 2**53 or a number beyond a float's range, a time that is NaN, zero or negative (naming its config),
    or a space where nothing launches."""
    times = _real_times(times, name)
    if times.shape != (N_CONFIGS,):
        raise BadInput(name, f"need one time per config ({N_CONFIGS}), got shape {times.shape}")
    bad = np.flatnonzero(np.isnan(times) | (times <= 0))
    if len(bad):
        i = int(bad[0])
        raise BadInput(name, f"config {i} ({schedule.all_configs()[i]}) has time {float(times[i])!r}: a time is "
                             f"positive seconds, or inf for a config that cannot launch ({len(bad)} such)")
    if not np.isfinite(times).any():
        raise BadInput(name, "no config has a finite time: nothing launches, there is nothing to search")
    return times


def run_search(strategy: str, shape, budget: int, seed: int = 0, gpu="H100", times=None) -> SearchResult:
    """Run ``strategy`` on ``shape`` (a :class:`~tuning.shapes.Shape` or ``(M, N, K)``) with ``budget`` unique
    evaluations and ``seed``.  ``times`` (all configs' times, e.g. replayed from a cache) defaults to the
    analytic model's (:func:`check_times`: NaN, zero or negative times are refused).  Bad input is
    :class:`~base.errors.BadInput` naming ``strategy``, ``budget`` (1..6000), ``seed``, ``gpu``, ``times``, the
    size, or ``shape`` beyond the time model's range."""
    s = get_strategy(strategy)
    budget = check_budget(budget)
    seed = integer("seed", seed, least=0)
    k = gpu_constants(gpu)
    sh = shape if isinstance(shape, Shape) else make_shape(*_three(shape))
    schedule.model_shape(*sh.mnk)                     # within the time model's range (features use it too)
    times = schedule.times_for_shape(*sh.mnk, hw=k) if times is None else check_times(times)
    ev = Evaluator(times, budget)
    rng = np.random.default_rng(seed)
    task = Task(sh, k.hw.name)
    t0 = time.perf_counter()
    try:
        s.run(ev, task, rng)
    except _Spent:
        pass
    wall = time.perf_counter() - t0
    return SearchResult(s.name, sh, k.hw.name, seed, budget, tuple(ev.trace),
                        tuple(float(times[i]) for i in ev.trace), wall)


def _three(shape) -> tuple:
    try:
        M, N, K = shape
    except (TypeError, ValueError):
        raise BadInput("shape", f"must be (M, N, K), got {shape!r}") from None
    return M, N, K

