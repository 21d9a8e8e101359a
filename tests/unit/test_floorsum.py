"""Sums of floors of an affine function: Euclid's reduction and the period closed form against the sum
term by term (brute force), and the evaluator's use of both."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic.evaluate import compile_exact, exact
from symbolic.floorsum import FloorSum, floor_sum, floor_sum_expr, gcd

n_, a_, c_, b_ = sp.symbols("n a c b", integer=True, nonnegative=True)
CLOSED = compile_exact(floor_sum_expr(n_, a_, c_, b_), (n_, a_, c_, b_))


def brute(n, m, a, b):
    """Σ_{i<n} ⌊(a i + b)/m⌋ term by term (exact integer floor division)."""
    return sum((a * i + b) // m for i in range(n))


@given(st.integers(0, 120), st.integers(1, 60), st.integers(-80, 80), st.integers(-80, 80))
@settings(max_examples=400, deadline=None)
def test_euclid_reduction_equals_brute_force(n, m, a, b):
    assert floor_sum(n, m, a, b) == brute(n, m, a, b)


@given(st.integers(0, 150), st.integers(0, 50), st.integers(0, 50), st.integers(1, 50))
@settings(max_examples=400, deadline=None)
def test_period_closed_form_equals_brute_force(n, a, c, b):
    assert CLOSED(n=n, a=a, c=c, b=b) == brute(n, b, a, c)


def test_one_full_period_concrete_mathematics_3_32():
    # Σ_{0<=k<m} ⌊(n k + x)/m⌋ = d ⌊x/d⌋ + (m-1)(n-1)/2 + (d-1)/2, d = gcd(m, n) (Concrete Mathematics (3.32))
    for m in range(1, 25):
        for n in range(0, 25):
            for x in range(0, 30):
                d = sp.igcd(m, n)
                assert 2 * brute(m, m, n, x) == 2 * d * (x // d) + (m - 1) * (n - 1) + d - 1


def test_huge_arguments_are_exact_and_agree():
    # two algorithms (the period closed form and Euclid's reduction) at sizes no loop reaches
    for n, a, c, b in ((10**30, 128, 0, 128), (10**30, 96, 17, 128), (10**30 + 7, 10**15 + 1, 5, 10**14 + 3),
                       (3 * 10**29, 1, 0, 10**12 + 1), (10**30, 2**61 - 1, 2**40, 2**31 - 1)):
        v = CLOSED(n=n, a=a, c=c, b=b)
        assert type(v) is int and v == floor_sum(n, b, a, c)
    # blocks that divide: Σ_{t<n} t = n (n - 1)/2
    assert CLOSED(n=10**30, a=128, c=0, b=128) == 10**30 * (10**30 - 1) // 2


def test_floorsum_function_prints_as_its_sum_and_evaluates_by_its_closed_form():
    f = FloorSum(n_, a_, c_, b_)
    assert "Σ" in str(f) or "Sum" in str(f)
    assert FloorSum(10, 3, 1, 4) == brute(10, 4, 3, 1)             # numbers evaluate at once
    assert exact(f, n=10**20, a=3, c=1, b=4) == floor_sum(10**20, 4, 3, 1)
    assert f.as_sum().subs({n_: 7, a_: 5, c_: 2, b_: 3}).doit() == brute(7, 3, 5, 2)


FLOORSUM = compile_exact(FloorSum(n_, a_, c_, b_), (n_, a_, c_, b_))


@given(st.integers(-3, 150), st.integers(0, 50), st.integers(0, 50), st.integers(1, 50))
@settings(max_examples=300, deadline=None)
def test_compiled_floorsum_node_equals_brute_force(n, a, c, b):
    # the node is evaluated by the reduction, not by compiling its closed form: both must give the sum
    assert FLOORSUM(n=n, a=a, c=c, b=b) == brute(n, b, a, c)


def test_compiled_floorsum_node_refuses_a_divisor_below_one():
    with pytest.raises(ValueError, match="divisor"):
        FLOORSUM(n=5, a=1, c=0, b=0)


def test_a_node_with_a_closed_form_of_its_own_evaluates_by_it():
    from symbolic.models.attention_local import ShownSum
    t = sp.Symbol("t", integer=True, nonnegative=True)
    node = ShownSum(n_ * (n_ + 1) / 2, sp.Sum(t + 1, (t, 0, n_ - 1)))     # evaluates by the first argument
    assert exact(node + 1, n=10**30) == 10**30 * (10**30 + 1) // 2 + 1


def test_gcd_function():
    assert gcd(sp.Integer(12), sp.Integer(18)) == 6
    x = sp.Symbol("x", integer=True, positive=True)
    assert gcd(x, x) == x and gcd(x, sp.Integer(3)).is_positive
    assert exact(gcd(n_, b_), n=10**30, b=10**20) == 10**20


def test_sum_of_affine_floor_is_not_a_loop():
    # Σ_{t=0}^{10**30} ⌊(7 t + 3)/5⌋ would never finish term by term
    t = sp.Dummy("t", integer=True, nonnegative=True)
    s = sp.Sum(sp.floor((7 * t + 3) / 5), (t, 0, n_ - 1))
    assert exact(s, n=10**30) == floor_sum(10**30, 5, 7, 3)
    assert exact(s, n=50) == brute(50, 5, 7, 3)
    s2 = sp.Sum(sp.floor((7 * t + 3) / 5), (t, 4, n_))            # a lower limit other than 0
    assert exact(s2, n=40) == sum((7 * i + 3) // 5 for i in range(4, 41))


def test_affine_floor_sum_names_the_shape_it_evaluates_in_log_steps():
    from symbolic.evaluate import affine_floor_sum
    t = sp.Dummy("t", integer=True, nonnegative=True)
    # ⌊(7 t + 3)/5⌋ = ⌊(7/5) t + 3/5⌋: slope 7/5, offset 3/5, by hand
    assert affine_floor_sum(sp.Sum(sp.floor((7 * t + 3) / 5), (t, 0, n_ - 1))) == (sp.Rational(7, 5), sp.Rational(3, 5))
    assert affine_floor_sum(sp.Sum(sp.floor(t * b_ / n_ + b_ / 3), (t, 1, n_))) == (b_ / n_, b_ / 3)
    assert affine_floor_sum(sp.Sum(sp.floor(t ** 2 / 5), (t, 0, n_))) is None          # not affine in t
    assert affine_floor_sum(sp.Sum(t, (t, 0, n_))) is None                              # no floor
    assert affine_floor_sum(sp.Sum(sp.floor(t * sp.Min(n_, b_) / 3), (t, 0, n_))) is None   # a Min in the slope
