"""Scores of search strategies over many seeds: how close, how much better than random, how fast.

For a strategy on one shape, each seed's run gives ``F_t``, the best time after ``t`` unique evaluations
(:meth:`~tuning.strategies.SearchResult.best_so_far`).  With ``S_opt`` the shape's optimum (from the
whole landscape, :func:`tuning.schedule.times_for_shape`):

* **best-found / optimum** ``F_t / S_opt`` (1 is the optimum);
* **Kernel Tuner's methodology score** ``P_t = (S_random(t) - F_t) / (S_random(t) - S_opt)`` (Willemsen et
  al., arXiv 2509.26300; ``docs/conventions.md`` §7): the share of the gap between random search and the
  optimum that the strategy closes; 0 is random search, 1 the optimum, below 0 worse than random.
  ``S_random(t)`` is *calculated*, not sampled, as the methodology's ``RandomSearchCalculatedBaseline``
  does: the best of ``t`` draws without replacement from ``n`` configs has expected rank ``(n + 1)/(t + 1)``
  (1 = fastest), so ``S_random(t)`` is the time at that rank in the sorted space, every config that cannot
  launch sorted last (they count, as for the strategies).  Before a run has found any config that launches,
  ``F_t`` counts as the slowest launchable time.  As in the methodology, the score is taken only while
  random search still has a gap to close: up to the budget at which ``S_random(t)`` has come within 5 % of
  the way from the space's median ``S_random(1)`` to the optimum (the methodology's cutoff at the 95th
  percentile between median and optimum).  Beyond it the denominator shrinks to nothing and ``P_t`` is left
  out (NaN); on a shape where many configs tie with the optimum (decode) that happens within the budget;
* **evaluations to within 5 %**: the first ``t`` with ``F_t <= 1.05 S_opt`` (none within the budget: not reached).

:func:`summarize` reports, per strategy, the median and the quartiles over all (shape, seed) runs of
``F_B / S_opt`` and ``P_B`` at the budget ``B``, of the mean of ``P_t`` over the scored ``t <= B`` (the aggregate
score the methodology averages over time), and of the evaluations to within 5 % (a run that never got
there counts as more than ``B``; the median is shown as ``> B`` when over half did not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from base.errors import BadInput
from base.validate import integer

from . import schedule
from .cache import _shown
from .learned import gpu_constants
from .shapes import Shape, as_mnk, shape as make_shape
from .strategies import check_budget, check_times, get_strategy, run_search

__all__ = ["Runs", "random_baseline", "run_many", "MAX_RUNS", "StrategyScore", "summarize", "WITHIN", "CUTOFF"]

#: "near the optimum": within 5 %
WITHIN = 1.05
#: P_t is scored while random search is more than this share of the median-to-optimum gap from the optimum
CUTOFF = 0.05


def random_baseline(times: np.ndarray, budget: int) -> np.ndarray:
    """``S_random(t)`` for ``t = 1..budget``: the time at the expected rank ``(n + 1)/(t + 1)`` of the best
    of ``t`` draws without replacement (configs that cannot launch, ``inf``, sorted last)."""
    ts = np.sort(np.asarray(times, dtype=float))
    n = len(ts)
    t = np.arange(1, budget + 1)
    rank = np.clip(np.rint((n + 1) / (t + 1)).astype(int), 1, n)      # 1 = fastest
    return ts[rank - 1]


@dataclass(frozen=True)
class Runs:
    """All seeds of one strategy on one shape."""

    strategy: str
    shape: Shape
    budget: int
    results: tuple                      # SearchResult per seed
    optimum: float
    slowest: float                      # the slowest launchable time
    baseline: np.ndarray = field(repr=False)   # S_random(t), t = 1..budget

    def best(self) -> np.ndarray:
        """``[seeds, budget]`` best-so-far times."""
        return np.vstack([r.best_so_far() for r in self.results])

    def ratio(self) -> np.ndarray:
        """``F_t / S_opt`` (``inf`` until a config launches)."""
        return self.best() / self.optimum

    def methodology(self) -> np.ndarray:
        """``P_t`` per seed and ``t`` (see the module's definition; NaN past the cutoff)."""
        f = np.minimum(self.best(), self.slowest)
        gap = self.baseline - self.optimum
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (self.baseline - f) / gap
        p[:, ~self.scored()] = np.nan
        return p

    def scored(self) -> np.ndarray:
        """Per ``t``: is random search still more than 5 % of the median-to-optimum gap away (``P_t`` defined)?"""
        gap = self.baseline - self.optimum
        return gap > CUTOFF * (self.baseline[0] - self.optimum)

    def evals_to(self, within: float = WITHIN) -> np.ndarray:
        """Per seed, the first ``t`` (1-based) with ``F_t <= within x S_opt``; ``inf`` when not within the budget."""
        hit = self.best() <= within * self.optimum
        first = np.argmax(hit, axis=1) + 1.0
        first[~hit.any(axis=1)] = np.inf
        return first

    @property
    def overhead_s(self) -> np.ndarray:
        return np.array([r.overhead_s for r in self.results])


#: the most (shape, seed) runs one :func:`run_many` call takes unless ``max_runs`` says more: the command
#: line's ``--max-runs`` default (``tilebound tune``), each run up to 6000 evaluations
MAX_RUNS = 20_000


def _bounded(items, name: str, limit: int, what: str, expected: str) -> list:
    """``items`` as a list of at most ``limit``, refused naming ``name`` before more are read or built (an
    iterator is read only to ``limit + 1``)."""
    import itertools

    if isinstance(items, (str, bytes)):
        raise BadInput(name, f"{expected}, got {_shown(items)}")
    if hasattr(items, "__len__"):
        n = len(items)
        if n > limit:
            raise BadInput(name, f"{n:,} {what} exceed the {limit:,} runs of max_runs; give fewer, or raise "
                                 f"max_runs=")
        return list(items)
    try:
        out = list(itertools.islice(iter(items), limit + 1))
    except TypeError:
        raise BadInput(name, f"{expected}, got {_shown(items)}") from None
    if len(out) > limit:
        raise BadInput(name, f"more than {limit:,} {what} exceed the {limit:,} runs of max_runs; give fewer, or "
                             f"raise max_runs=")
    return out


def run_many(strategy: str, shapes: Sequence, budget: int, seeds: int | Sequence[int] = 20, gpu="H100",
             times_of=None, on_shape=None, max_runs: int = MAX_RUNS) -> list[Runs]:
    """Run ``strategy`` with each seed on each shape; one :class:`Runs` per shape.  ``seeds`` is a count
    (seeds ``0..seeds-1``) or the seeds themselves; ``times_of(shape)`` (default: the analytic model) gives a
    shape's times, e.g. replayed from a cache (checked as :func:`~tuning.strategies.check_times` checks, naming
    ``times_of``).  ``budget`` is at most the space's 6000 configs.  ``on_shape()``, when given, is called
    after each shape's seeds have run (a progress display).

    The work is bounded up front, before any search or time model runs: shapes x seeds runs at most
    ``max_runs`` (default :data:`MAX_RUNS`, the command line's ``--max-runs``), refused as
    :class:`~base.errors.BadInput` naming ``seeds`` (or ``shapes`` when the shapes alone are too many) with
    the count and the cap; an empty list of shapes or seeds is refused too (nothing to score)."""
    get_strategy(strategy)
    budget = check_budget(budget)
    max_runs = integer("max_runs", max_runs, least=1)
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        n_seeds = integer("seeds", seeds, least=1)
        if n_seeds > max_runs:                          # refused before a range or a shape is built
            raise BadInput("seeds", f"{_count(n_seeds)} seeds exceed the {max_runs:,} runs of max_runs; give "
                                    "fewer, or raise max_runs=")
        seeds = range(n_seeds)                          # a range: a count is not listed out
    else:
        seeds = [integer("seed", s, least=0) for s in _bounded(seeds, "seeds", max_runs, "seeds",
                                                                  "a count or a sequence of seeds")]
        if not seeds:
            raise BadInput("seeds", "no seeds: give a count >= 1 or at least one seed")
    shapes = _bounded(shapes, "shapes", max_runs, "shapes", "a sequence of (M, N, K) shapes")
    if not shapes:
        raise BadInput("shapes", "no shapes: give at least one (M, N, K)")
    runs = len(shapes) * len(seeds)
    if runs > max_runs:
        raise BadInput("seeds", f"{len(shapes):,} shapes x {len(seeds):,} seeds = {runs:,} runs of {budget} "
                                f"evaluations exceed the {max_runs:,} of max_runs; give fewer, or raise max_runs=")
    k = gpu_constants(gpu)
    shapes = [s if isinstance(s, Shape) else make_shape(*as_mnk(s)) for s in shapes]
    for sh in shapes:                                  # every shape within the time model's range, before any run
        schedule.model_shape(*sh.mnk)
    out = []
    for sh in shapes:
        times = (schedule.times_for_shape(*sh.mnk, hw=k) if times_of is None
                 else check_times(times_of(sh), "times_of"))
        finite = times[np.isfinite(times)]
        results = tuple(run_search(strategy, sh, budget, seed, gpu=k.hw.name, times=times) for seed in seeds)
        out.append(Runs(strategy, sh, budget, results, float(finite.min()), float(finite.max()),
                        random_baseline(times, budget)))
        if on_shape is not None:
            on_shape()
    return out


def _count(n: int) -> str:
    return f"{n:,}" if n < 10 ** 30 else f"a {len(str(n))}-digit number of"


def _quartiles(x: np.ndarray) -> tuple:
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    if not len(x):
        return (math.nan, math.nan, math.nan)
    return tuple(float(v) for v in np.percentile(x, [25, 50, 75], method="lower" if np.isinf(x).any() else "linear"))


@dataclass(frozen=True)
class StrategyScore:
    """Quartiles ``(q1, median, q3)`` over every (shape, seed) run of one strategy at one budget."""

    strategy: str
    budget: int
    runs: int
    ratio: tuple                   # F_B / S_opt
    score: tuple                   # P_B
    score_mean: tuple              # mean over t of P_t
    evals_to: tuple                # evaluations to within 5 % (inf: not reached)
    reached: float                 # share of runs that got within 5 %
    overhead_s: float              # mean wall seconds of the strategy's own work a run (one-time set-up included)
    ratio_at: dict                 # {t: median F_t / S_opt} at a few budgets t <= B


def summarize(runs: Sequence[Runs], at: Sequence[int] = (10, 25, 50, 100, 200, 500, 1000)) -> StrategyScore:
    """Pool the :class:`Runs` of one strategy (one shape or many) into a :class:`StrategyScore`."""
    if not runs:
        raise ValueError("nothing to summarize")
    budget = runs[0].budget
    ratio = np.vstack([r.ratio() for r in runs])
    p = np.vstack([r.methodology() for r in runs])
    ev = np.concatenate([r.evals_to() for r in runs])
    with np.errstate(invalid="ignore"):
        p_mean = np.array([np.nanmean(row) if np.isfinite(row).any() else np.nan for row in p])
    marks = sorted({t for t in at if t < budget} | {budget})
    return StrategyScore(
        runs[0].strategy, budget, len(ratio), _quartiles(ratio[:, -1]), _quartiles(p[:, -1]), _quartiles(p_mean),
        _quartiles(ev), float(np.isfinite(ev).mean()), float(np.mean(np.concatenate([r.overhead_s for r in runs]))),
        {t: float(np.median(ratio[:, t - 1])) for t in marks})
