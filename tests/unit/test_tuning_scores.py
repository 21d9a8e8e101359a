"""Scores (tuning.scores): the calculated random baseline against brute-force enumeration of draws without
replacement, Kernel Tuner's P_t and the evaluations-to-5 % count on runs built by hand."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from tuning import schedule
from tuning.scores import Runs, random_baseline, run_many, summarize
from tuning.shapes import Shape
from tuning.strategies import SearchResult


@pytest.mark.parametrize("n", [5, 7, 8])
def test_expected_rank_of_the_best_of_t_draws_is_n_plus_1_over_t_plus_1(n):
    """Enumerate every t-subset of n ranked configs: the mean rank of its best is (n + 1)/(t + 1) exactly."""
    for t in range(1, n + 1):
        subsets = list(itertools.combinations(range(1, n + 1), t))
        assert Fraction(sum(min(s) for s in subsets), len(subsets)) == Fraction(n + 1, t + 1)


def test_random_baseline_takes_the_time_at_that_rank_with_failures_last():
    times = np.array([5.0, np.inf, 1.0, 3.0, np.inf, 2.0, 4.0])     # n = 7; sorted: 1 2 3 4 5 inf inf
    got = random_baseline(times, 7)
    # rank round(8 / (t + 1)): t=1 -> 4, t=2 -> 3 (8/3 = 2.67), t=3 -> 2, t=4 -> 2 (1.6), t=5..7 -> 1
    assert got.tolist() == [4.0, 3.0, 2.0, 2.0, 1.0, 1.0, 1.0]
    assert random_baseline(np.array([np.inf, np.inf, 1.0]), 1).tolist() == [np.inf]   # rank 2 of 3: a failure


def _runs(traces, times_of_space, budget):
    """Runs of a fake strategy whose seeds measured ``traces`` (indices into ``times_of_space``)."""
    ts = np.asarray(times_of_space, dtype=float)
    results = tuple(SearchResult("fake", Shape(1, 1, 1), "H100", s, budget, tuple(tr), tuple(ts[i] for i in tr), 0.0)
                    for s, tr in enumerate(traces))
    finite = ts[np.isfinite(ts)]
    return Runs("fake", Shape(1, 1, 1), budget, results, float(finite.min()), float(finite.max()),
                random_baseline(ts, budget))


def test_methodology_score_by_hand():
    space = [1.0, 2.0, 4.0, 8.0, np.inf]          # n = 5: S_random(t) at rank round(6 / (t + 1)): 3, 2, 2 -> 4, 2, 2
    r = _runs([[4, 3, 0], [2, 1, 3]], space, 3)
    assert r.baseline.tolist() == [4.0, 2.0, 2.0]
    p = r.methodology()
    # seed 0: F = inf (-> the slowest launchable, 8), 8, 1  ->  (4-8)/(4-1), (2-8)/(2-1), (2-1)/(2-1)
    assert p[0].tolist() == pytest.approx([-4 / 3, -6.0, 1.0])
    # seed 1: F = 4, 2, 2  ->  0, 0, 0 (random search's expected best exactly)
    assert p[1].tolist() == pytest.approx([0.0, 0.0, 0.0])
    assert r.evals_to().tolist() == [3.0, math.inf]
    assert r.ratio()[1].tolist() == [4.0, 2.0, 2.0]


def test_methodology_score_is_undefined_where_random_already_holds_the_optimum():
    r = _runs([[1, 0]], [1.0, 1.0, 1.0, 2.0], 2)   # rank round(5/2) = 2 (t=1) is a tie with the optimum
    assert np.isnan(r.methodology()[0]).all()


def test_methodology_score_stops_where_random_search_has_closed_95_percent_of_the_gap():
    space = [1.0] + [1.04] * 8 + [2.0] * 10 + [9.0] + [np.inf] * 5   # n = 25; the median (rank 13) is 2
    r = _runs([list(range(25))[::-1][:6]], space, 6)
    # rank round(26 / (t + 1)): t=1: 13 (2.0); t=2: 9 (1.04); ...  gap at t=2: 0.04 <= 0.05 x (2 - 1) = 0.05
    assert r.baseline.tolist()[:2] == [2.0, 1.04]
    assert r.scored().tolist() == [True] + [False] * 5
    p = r.methodology()
    assert np.isnan(p[0, 1:]).all() and p[0, 0] == pytest.approx((2.0 - 9.0) / (2.0 - 1.0))


def test_summarize_pools_shapes_and_seeds():
    a = _runs([[0], [1], [2]], [1.0, 2.0, 4.0, 8.0], 1)
    s = summarize([a, a])
    assert s.runs == 6 and s.ratio[1] == 2.0 and s.reached == pytest.approx(1 / 3)
    assert s.evals_to[0] == 1.0 and math.isinf(s.evals_to[2])


def test_random_search_scores_about_zero_against_the_calculated_baseline():
    """Over 60 seeds, random search's best after t draws sits at the baseline's rank on average, so its
    median methodology score is near 0 and exhaustive search's (space order) is far below."""
    shape = (2048, 2048, 512)
    (runs,) = run_many("random", [shape], 50, 60)
    ts = np.sort(schedule.times_for_shape(*shape))
    ranks = np.searchsorted(ts, runs.best()[:, [9, 49]])               # 0-based rank of the best after 10, 50
    assert np.mean(ranks[:, 0]) + 1 == pytest.approx(6001 / 11, rel=0.35)
    assert np.mean(ranks[:, 1]) + 1 == pytest.approx(6001 / 51, rel=0.35)
    assert abs(summarize([runs]).score_mean[1]) < 0.35
    (ex,) = run_many("exhaustive", [shape], 50, 1)
    assert summarize([ex]).score[1] < -1


# ------------------------------------------------------------------------------------- bad input
def _nan_at(i):
    t = schedule.times_for_shape(16, 4096, 4096)
    t[i] = np.nan
    return t


@pytest.mark.parametrize("call,param", [
    (lambda: run_many("random", [(16, 4096, 4096)], 10**9, 1), "budget"),   # refused, not allocated (8 GB)
    (lambda: run_many("random", [(16, 4096, 4096)], 6001, 1), "budget"),
    (lambda: run_many("random", [(16, 4096, 4096)], 10, 1, times_of=lambda s: _nan_at(5)), "times_of"),
    (lambda: run_many("random", [(16, 4096, 4096)], 10, 1, times_of=lambda s: -np.ones(6000)), "times_of"),
    (lambda: run_many("random", [(16, 4096, 4096), (10**30, 4096, 4096)], 10, 1), "shape"),
    (lambda: run_many("random", [(16, 4096)], 10, 1), "shape"),
    (lambda: run_many("random", [(16, 4096, 4096)], 10, 3.5), "seeds"),
])
def test_bad_input_names_the_parameter(call, param):
    from base.errors import BadInput
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param


# ------------------------------------------------------------------------------------- work bounded up front
def _many(n, item):
    """A generator of ``n`` copies of ``item`` (no length: it has to be counted as it is read)."""
    return (item for _ in range(n))


@pytest.mark.parametrize("call,param", [
    (lambda: run_many("random", [(4096, 4096, 4096)], 10, 10**9), "seeds"),             # was run without bound
    (lambda: run_many("random", [(4096, 4096, 4096)], 10, 10**40), "seeds"),
    (lambda: run_many("random", [(4096, 4096, 4096)], 10, 20_001), "seeds"),            # the CLI's --max-runs default
    (lambda: run_many("random", [(4096, 4096, 4096)], 10, list(range(20_001))), "seeds"),
    (lambda: run_many("random", [(4096, 4096, 4096)], 10, _many(20_001, 0)), "seeds"),
    (lambda: run_many("random", [(64, 64, 64)] * 20_001, 10, 1), "shapes"),
    (lambda: run_many("random", _many(20_001, (64, 64, 64)), 10, 1), "shapes"),
    (lambda: run_many("random", [(64, 64, 64)] * 200, 10, 101), "seeds"),               # 20,200 runs
    (lambda: run_many("random", [(64, 64, 64)] * 3, 10, 4, max_runs=10), "seeds"),      # 12 runs
    (lambda: run_many("random", [(64, 64, 64)], 10, 2, max_runs=0), "max_runs"),
    (lambda: run_many("random", [], 10, 1), "shapes"),                                  # nothing to score
    (lambda: run_many("random", [(64, 64, 64)], 10, []), "seeds"),
], ids=["seeds-1e9", "seeds-1e40", "seeds-20001", "seed-list", "seed-generator", "shapes-20001",
        "shape-generator", "shapes-x-seeds", "max-runs-given", "max-runs-0", "no-shapes", "no-seeds"])
def test_too_much_work_is_refused_before_any_search_or_time_model_runs(monkeypatch, call, param):
    """The refusal comes first: the search and the time model are replaced by functions that fail, so a
    refusal that came after any run would not be BadInput."""
    from base.errors import BadInput

    def ran(*args, **kwargs):
        raise AssertionError("a search or the time model ran before the refusal")

    monkeypatch.setattr("tuning.scores.run_search", ran)
    monkeypatch.setattr("tuning.scores.schedule.times_for_shape", ran)
    monkeypatch.setattr("tuning.scores.schedule.model_shape", ran)
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param
    assert len(str(e.value)) < 300


def test_work_within_max_runs_runs():
    (r,) = run_many("random", [(64, 64, 64)], 5, 3, max_runs=3)
    assert len(r.results) == 3
    assert [len(x.results) for x in run_many("random", _many(2, (64, 64, 64)), 5, _many(2, 7))] == [2, 2]
