"""The exact evaluator's generated source, against Python's own exact arithmetic written by hand: quotients
under floor and ceiling of any sign (floor division, no Fraction), a nesting deeper than one generated
expression holds, a repeated node reached only on some paths, loop sums whose limits share nodes with their
bodies, and the errors a point gets (no piece applies, a divisor of zero)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic.evaluate import compile_env, compile_exact

x, y = sp.symbols("x y", integer=True)
N, B = sp.symbols("N B", integer=True, positive=True)
i, j = sp.symbols("i j", integer=True)

nonzero = st.integers(-10**25, 10**25).filter(bool)


@settings(max_examples=300, deadline=None)
@given(st.integers(-10**25, 10**25), nonzero, st.integers(1, 9), st.integers(1, 9))
def test_quotients_under_floor_and_ceiling_of_any_sign(a, b, p, q):
    expr = sp.floor(p * x / (q * y)) + sp.ceiling(x / (3 * y)) + sp.floor(sp.Rational(p, q) * x)
    want = (math.floor(Fraction(p * a, q * b)) + math.ceil(Fraction(a, 3 * b))
            + math.floor(Fraction(p, q) * a))
    assert compile_exact(expr)(x=a, y=b) == want


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**6, 10**6), nonzero)
def test_a_quotient_is_an_int_where_it_divides_and_a_fraction_where_not(a, b):
    got = compile_exact(x / y + x * y)(x=a, y=b)
    want = Fraction(a, b) + a * b
    assert got == want and type(got) is (int if want.denominator == 1 else Fraction)


def test_a_nesting_deeper_than_one_expression_holds():
    expr, want = N, 10**30 + 7
    for k in range(70):                                # ceil(... ceil(ceil(N/2) + 1)/2 + 1) ...), unevaluated
        expr = sp.Add(sp.ceiling(sp.Mul(expr, sp.Rational(1, 2), evaluate=False), evaluate=False), 1,
                      evaluate=False)
        want = -(-want // 2) + 1
    assert compile_exact(expr)(N=10**30 + 7) == want


def test_a_node_reached_on_some_paths_only_is_not_evaluated_on_the_others():
    seen = []

    class Probe(sp.Function):
        nargs = 1
        is_integer = True

        @staticmethod
        def exact_value(v):
            seen.append(v)
            return v + 1

    p = Probe(N)
    expr = sp.Piecewise((p * p + p, N > 5), (N, True)) + sp.Piecewise((p, sp.And(N > 7, p > 3)), (0, True))
    f = compile_exact(expr)
    assert f(N=3) == 3 and seen == []                  # N <= 5: the probe is never asked
    assert f(N=6) == 7 * 7 + 7 and seen == [6]          # one branch: once
    seen.clear()
    assert f(N=9) == 10 * 10 + 10 + 10 and seen == [9]  # both branches, one evaluation


def test_a_loop_sum_with_an_inner_limit_on_the_outer_index_and_a_shared_node():
    c = sp.ceiling(N / B)
    expr = sp.Sum(i * j + c, (j, 1, i), (i, 1, c)) + c     # not a floor sum: a loop
    for n, b in ((1, 1), (10, 3), (37, 4), (100, 100)):
        cc = -(-n // b)
        want = sum(ii * jj + cc for ii in range(1, cc + 1) for jj in range(1, ii + 1)) + cc
        assert compile_exact(expr)(N=n, B=b) == want


def test_compile_env_reads_every_symbol_from_its_env():
    f = compile_env(sp.Piecewise((N, N > 2), (B, True)))
    assert f({N: 5, B: 1}) == 5 and f({N: 2, B: 7}) == 7
    with pytest.raises(KeyError):
        f({N: 5})


def test_no_piece_and_a_zero_divisor_are_errors_naming_the_point():
    with pytest.raises(ValueError, match="no piece"):
        compile_exact(sp.Piecewise((N, N > 5)))(N=2)
    with pytest.raises(ZeroDivisionError):
        compile_exact(sp.ceiling(x / y))(x=3, y=0)
    with pytest.raises(ZeroDivisionError):
        compile_exact(x / y)(x=3, y=0)
