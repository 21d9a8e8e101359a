"""The exact evaluator and the Θ machinery on expressions whose answers are known by hand."""

from fractions import Fraction

import pytest
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
