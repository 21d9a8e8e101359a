"""The exact evaluator and the Θ machinery on expressions whose answers are known by hand."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
import sympy as sp

from symbolic.asymptotics import Regime, dominated, leading_term, monomials, theta
from symbolic.evaluate import compile_exact, exact
from symbolic.models.attention import B_c, B_r, M, N, d

i = sp.Symbol("i", integer=True)


@pytest.mark.parametrize("expr,point,value", [
    (sp.ceiling(N / B_r), dict(N=10, B_r=3), 4),
    (sp.floor(N / B_r), dict(N=10, B_r=3), 3),
    (sp.ceiling(N / B_r) * N, dict(N=3 * 10**9 + 1, B_r=7), (-(-(3 * 10**9 + 1) // 7)) * (3 * 10**9 + 1)),
    (sp.Min(N, d) + sp.Max(N, d), dict(N=4, d=9), 13),
    (N / 3, dict(N=4), Fraction(4, 3)),
    (sp.Sum(i * N, (i, 0, sp.ceiling(N / B_r) - 1)), dict(N=10, B_r=3), 10 * (0 + 1 + 2 + 3)),
    (sp.Piecewise((N, N > d), (d, True)), dict(N=2, d=5), 5),
    (sp.ceiling((10**20 + 1) * N / B_r), dict(N=1, B_r=10**20), 2),   # floats would give 1
])
def test_exact_values(expr, point, value):
    got = exact(expr, **point)
    assert got == value and type(got) is type(value)


def test_floats_are_refused():
    f = compile_exact(N * d)
    with pytest.raises(TypeError, match="^N:"):
        f(N=1.5, d=2)


def test_unsupported_functions_refused_at_compile_time():
    with pytest.raises(TypeError):
        compile_exact(sp.log(N))


def test_monomials():
    assert monomials(3 * N**2 * d / M + 2 * N) == {((M, -1), (N, 2), (d, 1)): 3, ((N, 1),): 2}


@pytest.mark.parametrize("expr,regime,lead,th", [
    (4 * N**2 + 4 * N * d, Regime(), 4 * N**2 + 4 * N * d, N**2 + N * d),                        # neither dominates
    (12 * N**2 * d**2 / M + 16 * N**2 * d / M + 3 * N * d, Regime(le=((d, M), (M, N * d))),
     12 * N**2 * d**2 / M, N**2 * d**2 / M),
    (N * d + N, Regime(), N * d, N * d),
    (sp.ceiling(N / B_r) * N * d + N * d, Regime(le=((B_r, N),)), N**2 * d / B_r, N**2 * d / B_r),
    (sp.ceiling(N / B_r) * N * d + N * d, Regime(), N**2 * d / B_r + N * d, N**2 * d / B_r + N * d),  # B_r may exceed N
])
def test_leading_and_theta(expr, regime, lead, th):
    assert sp.simplify(leading_term(expr, regime) - lead) == 0
    assert sp.simplify(theta(expr, regime) - th) == 0


def test_dominance_needs_the_regime():
    syms = [M, N, d]
    t, u = monomials(N * d), monomials(N**2 * d**2 / M)
    (kt,), (ku,) = t, u
    assert not dominated(kt, ku, syms, Regime())
    assert dominated(kt, ku, syms, Regime(le=((M, N * d),)))
    assert not dominated(ku, kt, syms, Regime(le=((d, M), (M, N * d))))


def test_min_must_be_resolved():
    with pytest.raises(ValueError, match="regime"):
        theta(sp.Min(N, B_c) * d)


@pytest.mark.parametrize("expr", [
    sp.ceiling(N / B_r) * N * d + sp.Min(B_c, d) - sp.Max(N, B_r),
    sp.floor(N / 3) + N / B_r,
    sp.Sum(i * sp.Min(N, B_r), (i, 0, sp.ceiling(N / B_r) - 1)) + d,
])
def test_grid_evaluation_equals_pointwise(expr):
    import numpy as np
    from symbolic.grid import compile_grid
    rng = np.random.default_rng(0)
    pts = {s.name: rng.integers(1, 50, size=(3, 4)).astype(object) for s in expr.free_symbols}
    pts["N"] = pts["N"] * 10**15 if "N" in pts and not expr.has(sp.Sum) else pts.get("N")
    grid = compile_grid(expr)(**pts)
    one = compile_exact(expr)
    for idx in np.ndindex(3, 4):
        assert grid[idx] == one(**{k: int(v[idx]) for k, v in pts.items()})


def _in_cone_by_subsets(rows, target):
    """The brute-force oracle: ``target`` is a non-negative combination of ``rows`` iff it is one of some
    linearly independent subset (Caratheodory), each solved by exact Gaussian elimination."""
    from itertools import combinations
    n = len(target)
    if all(t == 0 for t in target):
        return True
    for r in range(1, min(n, len(rows)) + 1):
        for subset in combinations(range(len(rows)), r):
            aug = [[Fraction(rows[i][k]) for i in subset] + [Fraction(target[k])] for k in range(n)]
            piv_row, ok = 0, True
            for col in range(r):
                p = next((i for i in range(piv_row, n) if aug[i][col] != 0), None)
                if p is None:
                    ok = False
                    break
                aug[piv_row], aug[p] = aug[p], aug[piv_row]
                aug[piv_row] = [x / aug[piv_row][col] for x in aug[piv_row]]
                for i in range(n):
                    if i != piv_row and aug[i][col] != 0:
                        f = aug[i][col]
                        aug[i] = [x - f * y for x, y in zip(aug[i], aug[piv_row])]
                piv_row += 1
            if ok and all(aug[i][r] == 0 for i in range(piv_row, n)) and all(aug[i][r] >= 0 for i in range(r)):
                return True
    return False


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(-3, 3), min_size=n, max_size=n), min_size=1, max_size=6),
    st.lists(st.integers(-4, 4), min_size=n, max_size=n))))
@example(([[-2, -2], [0, 1], [2, -2]], [-1, 0]))      # feasible only through a combination of two rows
@example(([[1, 0], [0, 1]], [-1, 0]))                  # outside the cone
def test_cone_membership_by_simplex_equals_brute_force(case):
    """Θ's dominance test asks whether an exponent vector is a non-negative combination of the regime's
    generators; the simplex (phase I, Bland's rule) must answer as trying every subset does."""
    from symbolic.asymptotics import _solve_nonneg
    rows, target = case
    assert _solve_nonneg([[Fraction(x) for x in r] for r in rows], [Fraction(t) for t in target]) == \
        _in_cone_by_subsets(rows, target)
