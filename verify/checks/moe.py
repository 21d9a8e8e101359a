"""MoE grouped-GEMM checks: the formulas of :mod:`symbolic.models.moe` against the executor
:func:`numeric.moe.run_moe` (count-only mode), exactly, and the uniform-routing expectation against an
enumeration of every routing.

Points are named by the models' parameters (``T, E, k, N, K, B_M, B_N, B_K``); the count vector is the
executor key ``counts`` (the way the L2 checks carry ``capacity``), which :class:`RoutedCheck` also hands
to the formula side: :func:`symbolic.models.moe.grouped_for` builds the model for that routing, so the
check never restates a formula.

* ``moe.grouped`` - balanced routing (the registered model) against the executor's default routing.
* ``moe.grouped.counts`` - any routing: experts with no pairs, ``n_e`` below and above ``B_M``, ``k = E``,
  ``T < B_M`` (vLLM's small-batch grid), ``B_M = 1``, sizes beyond int64; drawn routings of random
  ``k``-subsets per token.
* ``moe.grouped.skewed`` - the most skewed routing (``k`` experts with every token, written out here)
  against the closed form.
* ``moe.grouped.real`` (a Property) - real mode: the layer's output equals a per-token loop over experts
  (:func:`numeric.moe.moe_reference`) to 1e-12, and the real run's counts equal the count-only run's.
* ``moe.grouped.uniform.exact`` (a Property) - :func:`symbolic.models.moe.uniform_expectation` equals the
  average of the executor's counts over every routing (each token's ``k``-subset enumerated), at small
  ``T, E``.
* ``moe.grouped.uniform.bounds`` (a Property) - the closed-form bounds of ``moe.grouped.uniform`` hold
  around the exact expectation over a sweep up to ``T k = 4096``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations, product

import numpy as np

from numeric.moe import moe_reference, route, run_moe
from symbolic.models.moe import ROUTED, grouped, grouped_for, skewed, uniform, uniform_expectation

from ..core import Check, Property

__all__ = ["RoutedCheck", "balanced_check", "counts_check", "skewed_check", "real_check", "uniform_exact",
           "uniform_bounds_check", "QUANTITIES"]

QUANTITIES = ("reads", "writes", "flops", "flops_padded", "padded_rows", "m_blocks", "programs", "reads_A",
              "reads_W", "reads_sorted_ids", "reads_expert_ids", "reads_num_padded", "reads_topk_weights",
              "reads_combine", "writes_gemm", "writes_combine", "bytes")
KEYS = ("T", "E", "k", "N", "K", "B_M", "B_N", "B_K")


def _run(p, counts=None):
    return run_moe(p["T"], p["E"], p["k"], p["N"], p["K"], p["B_M"], p["B_N"], p["B_K"], counts)


def _size(p):
    return max(p["T"] * p["k"], p["N"], p["K"])


# ------------------------------------------------------------------------------------- balanced
_EDGE = [  # T, E, k, N, K, B_M, B_N, B_K
    (1, 1, 1, 1, 1, 1, 1, 1),
    (1, 8, 2, 16, 32, 16, 16, 16),            # decode: one token, T < B_M
    (5, 4, 4, 3, 9, 8, 2, 4),                 # k = E
    (37, 8, 2, 33, 65, 16, 16, 32),           # nothing divides
    (64, 8, 2, 64, 64, 16, 32, 32),           # everything divides
    (3, 8, 3, 5, 5, 2, 4, 4),                 # T k < E: experts with no pairs
    (100, 6, 1, 7, 130, 64, 8, 64),           # n_e below B_M
    (4, 2, 1, 10**30, 10**30, 4, 10**29, 10**29),   # count-only beyond int64
]


def _grid(full):
    pts = list(_EDGE)
    if full:
        pts += [(t, e, kk, 48, 80, bm, 16, 32) for t in (1, 7, 64, 200) for e, kk in ((8, 2), (16, 4), (4, 4))
                for bm in (1, 16, 64)]
    return [dict(zip(KEYS, t)) for t in pts]


def _points():
    from hypothesis import strategies as st

    @st.composite
    def draw(draw):
        E = draw(st.integers(1, 12))
        return dict(T=draw(st.integers(1, 60)), E=E, k=draw(st.integers(1, E)), N=draw(st.integers(1, 70)),
                    K=draw(st.integers(1, 90)), B_M=draw(st.integers(1, 40)), B_N=draw(st.integers(4, 64)),
                    B_K=draw(st.integers(8, 64)))
    return draw()


balanced_check = Check(
    model=grouped, execute=lambda p: _run(p).counts, grid=_grid, quantities=QUANTITIES, strategy=_points,
    draws=40, draws_full=300, size=_size,
    description="balanced routing: padded rows, weight re-reads, gathered rows, int32 ids, combine, bytes")


# ------------------------------------------------------------------------------------- any routing
@dataclass(frozen=True)
class RoutedCheck(Check):
    """A check whose point carries a routing (``counts``, an executor key): the formula side is the model
    for that routing, :func:`symbolic.models.moe.grouped_for`, evaluated at the point's parameters."""

    def formula(self, point) -> dict:
        pt = {kk: v for kk, v in point.items() if kk not in self.extra}
        model = grouped_for(point["counts"])
        return model.evaluate(tuple(self.quantities), **pt)


_ROUTED = [  # T, E, k, N, K, B_M, B_N, B_K, counts: why
    (10, 3, 2, 5, 7, 4, 2, 3, (7, 3, 10)),                 # above, below and a multiple-plus-two of B_M
    (6, 4, 2, 9, 10, 4, 4, 4, (6, 0, 6, 0)),               # experts with no pairs
    (5, 3, 3, 4, 6, 2, 4, 4, (5, 5, 5)),                   # k = E
    (3, 8, 2, 16, 32, 16, 8, 16, (3, 0, 0, 1, 0, 2, 0, 0)),  # T < B_M: the small-batch grid
    (8, 2, 2, 8, 8, 4, 4, 4, (8, 8)),                      # everything divides
    (7, 1, 1, 3, 3, 2, 2, 2, (7,)),                        # one expert
    (5, 3, 2, 4, 4, 1, 2, 2, (5, 4, 1)),                   # B_M = 1: no padding
    (40, 5, 2, 12, 20, 16, 8, 8, (33, 17, 0, 16, 14)),     # one block exactly full, one just over
    (4, 2, 1, 10**30, 10**30, 4, 10**29, 10**29, (3, 1)),  # count-only beyond int64
    (300, 16, 1, 8, 8, 64, 8, 8, (300,) + (0,) * 15),     # every token to one expert
]


def _routed_grid(full):
    pts = [dict(zip(KEYS + ("counts",), t)) for t in _ROUTED]
    if full:
        rng = np.random.default_rng(0)
        for _ in range(200):
            p = _random_point(rng)
            pts.append(p)
    return pts


def _counts_of(T, E, k, subsets):
    c = [0] * E
    for s in subsets:
        for e in s:
            c[e] += 1
    return tuple(c)


def _random_point(rng):
    E = int(rng.integers(1, 12))
    T, k = int(rng.integers(1, 80)), int(rng.integers(1, E + 1))
    subsets = [rng.choice(E, size=k, replace=False) for _ in range(T)]
    return dict(T=T, E=E, k=k, N=int(rng.integers(1, 50)), K=int(rng.integers(1, 70)), B_M=int(rng.integers(1, 40)),
                B_N=int(rng.integers(4, 40)), B_K=int(rng.integers(8, 64)), counts=_counts_of(T, E, k, subsets))


def _routed_points():
    from hypothesis import strategies as st

    @st.composite
    def draw(draw):
        E = draw(st.integers(1, 10))
        T, k = draw(st.integers(1, 50)), draw(st.integers(1, E))
        subsets = [p[:k] for p in draw(st.lists(st.permutations(range(E)), min_size=T, max_size=T))]
        skew = draw(st.booleans())          # half the draws pile the pairs onto few experts
        if skew:
            subsets = [tuple(range(k)) if i % 2 else s for i, s in enumerate(subsets)]
        return dict(T=T, E=E, k=k, N=draw(st.integers(1, 50)), K=draw(st.integers(1, 70)), B_M=draw(st.integers(1, 40)),
                    B_N=draw(st.integers(4, 40)), B_K=draw(st.integers(8, 64)), counts=_counts_of(T, E, k, subsets))
    return draw()


counts_check = RoutedCheck(
    model=grouped, name="moe.grouped.counts", execute=lambda p: _run(p, p["counts"]).counts, grid=_routed_grid,
    quantities=QUANTITIES, strategy=_routed_points, draws=60, draws_full=400, extra=("counts",), size=_size,
    description="any routing (counts=): zero-pair experts, n_e below/above B_M, k = E, T < B_M, beyond int64")


# ------------------------------------------------------------------------------------- skewed
def _skewed_counts(p):
    """The most skewed routing, written out: the first k experts take every token."""
    return tuple(p["T"] if e < p["k"] else 0 for e in range(p["E"]))


skewed_check = Check(
    model=skewed, execute=lambda p: _run(p, _skewed_counts(p)).counts, grid=_grid, quantities=QUANTITIES,
    strategy=_points, draws=30, draws_full=200, size=_size,
    description="most skewed routing (k experts take all T tokens): the closed form vs the executor")


# ------------------------------------------------------------------------------------- real mode
_REAL = [(10, 3, 2, 5, 7, 4, 2, 3, (7, 3, 10)), (6, 4, 2, 9, 10, 4, 4, 4, (6, 0, 6, 0)),
         (5, 3, 3, 4, 6, 2, 4, 4, None), (3, 8, 2, 16, 32, 16, 8, 16, None), (40, 5, 2, 12, 20, 16, 8, 8, None)]


def _real_holds(p):
    counts = p.get("counts")
    r = run_moe(*(p[kk] for kk in KEYS), counts, real=True, seed=3)
    ids = route(p["T"], p["E"], p["k"], r.routing)
    rng = np.random.default_rng(3)             # the executor's own draws, in its order
    X, W = rng.standard_normal((p["T"], p["K"])), rng.standard_normal((p["E"], p["K"], p["N"]))
    w = rng.random((p["T"], p["k"])) + 0.5
    ref = moe_reference(X, W, ids, w)
    err = float(np.max(np.abs(r.out - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    if err > 1e-12:
        return f"output differs from the per-token loop by {err:.2e} (relative)"
    shape_only = _run(p, r.routing).counts
    if shape_only != r.counts:
        return f"real counts {r.counts} != count-only {shape_only}"
    return None


real_check = Property(
    name="moe.grouped.real", model=grouped, holds=_real_holds,
    grid=lambda full: [dict(zip(KEYS + ("counts",), t)) for t in _REAL], size=_size,
    description="real mode: output == per-token loop over experts (1e-12), counts == count-only mode")


# ------------------------------------------------------------------------------------- uniform routing
def enumerated_expectation(p) -> dict:
    """The executor's counts averaged over every routing: each token an equally likely ``k``-subset of the
    ``E`` experts (``C(E, k)^T`` routings, grouped by the count vector they give)."""
    subsets = list(combinations(range(p["E"]), p["k"]))
    weight: dict = {}
    for choice in product(subsets, repeat=p["T"]):
        c = _counts_of(p["T"], p["E"], p["k"], choice)
        weight[c] = weight.get(c, 0) + 1
    total = len(subsets) ** p["T"]
    out: dict = {}
    for c, w in weight.items():
        for q, v in _run(p, c).counts.items():
            out[q] = out.get(q, 0) + Fraction(w * v, total)
    return out


_TINY = [(1, 1, 1), (2, 3, 1), (3, 3, 2), (4, 4, 2), (3, 5, 2), (5, 2, 1), (2, 4, 4), (6, 3, 1)]


def _exact_grid(full):
    for (T, E, kk), bm in product(_TINY, (1, 2, 3)):
        yield dict(T=T, E=E, k=kk, N=5, K=7, B_M=bm, B_N=4, B_K=4)


def _exact_holds(p):
    got = uniform_expectation(**p)
    want = enumerated_expectation(p)
    bad = [q for q in want if got[q] != want[q]]
    return None if not bad else "; ".join(f"{q}: exact {got[q]} != enumerated {want[q]}" for q in bad)


uniform_exact = Property(
    name="moe.grouped.uniform.exact", model=uniform, holds=_exact_holds, grid=_exact_grid, size=_size,
    description="the exact expectation under uniform routing == the executor averaged over every routing")


def _bounds_grid(full):
    Ts = (1, 2, 3, 7, 16, 100, 512, 2048) if full else (1, 3, 16, 100, 512)
    for T, (E, kk), bm in product(Ts, ((1, 1), (8, 2), (8, 8), (64, 6), (256, 8), (3, 2)), (1, 4, 16, 64, 128)):
        if T * kk <= 4096:
            yield dict(T=T, E=E, k=kk, N=64, K=64, B_M=bm, B_N=64, B_K=64)


def _bounds_holds(p):
    exact = uniform_expectation(**p)
    v = uniform.evaluate(**p)
    bad = [q for q in ROUTED if not v[f"{q}_lower"] <= exact[q] <= v[f"{q}_upper"]]
    return None if not bad else "; ".join(
        f"{q}: {v[f'{q}_lower']} <= {exact[q]} <= {v[f'{q}_upper']} fails" for q in bad)


uniform_bounds_check = Property(
    name="moe.grouped.uniform.bounds", model=uniform, holds=_bounds_holds, grid=_bounds_grid, size=_size,
    description="closed-form bounds on the expectation (any T) hold around the exact value, T k <= 4096")

