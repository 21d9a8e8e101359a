"""The exact evaluator evaluates a repeated subexpression once per call (symbolic.evaluate's memo), with the
values of the unmemoised evaluation: inside a ``Sum`` a repeated node that depends on the index is evaluated
afresh at each index; the listings' derivation rules out a partition only where the difference is nonzero at
a point (symbolic.listings._identically_zero), otherwise SymPy's ``simplify`` decides, as before."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic.evaluate import compile_env, compile_exact
from symbolic.listings import _identically_zero

N, B, d = (sp.Symbol(s, integer=True, positive=True) for s in ("N", "B", "d"))
i = sp.Symbol("i", integer=True, positive=True)

CALLS: list = []


class Costly(sp.Function):
    """A node that evaluates itself (as FlashAttention-3's tile node does) and counts its evaluations."""

    nargs = 2
    is_integer = True

    @staticmethod
    def exact_value(a, b) -> int:
        CALLS.append((a, b))
        return a * b + 1


def _by_hand(n, b, dd):
    c = n * b + 1
    return (c + n) * (c + dd) + -(-n // c) * c + max(c, dd)


def test_a_repeated_node_is_evaluated_once_a_call():
    c = Costly(N, B)
    expr = (c + N) * (c + d) + sp.ceiling(N / c) * c + sp.Max(c, d)
    f = compile_exact(expr)
    CALLS.clear()
    assert f(N=10, B=3, d=4) == _by_hand(10, 3, 4)
    assert CALLS == [(10, 3)]
    assert f(N=7, B=2, d=100) == _by_hand(7, 2, 100)     # a new call: the memo does not carry over
    assert CALLS == [(10, 3), (7, 2)]


def test_compile_env_is_memoised_per_call_and_leaves_the_callers_env_alone():
    c = Costly(N, B)
    f = compile_env(c * c + c)
    env = {N: 5, B: 2}
    CALLS.clear()
    assert f(env) == 11 * 11 + 11 and f(env) == 132
    assert CALLS == [(5, 2), (5, 2)] and env == {N: 5, B: 2}
    env[N] = 6                                          # the walk changes an index in place: no stale memo
    assert f(env) == 13 * 13 + 13


def test_inside_a_sum_an_index_dependent_node_is_evaluated_at_each_index():
    c = Costly(i, B)                                     # depends on the index
    k = Costly(N, B)                                     # does not
    expr = sp.Sum(c * c + k, (i, 1, N)) + k * c.subs(i, 1)
    f = compile_exact(expr)
    CALLS.clear()
    n, b = 6, 5
    want = sum((j * b + 1) ** 2 + (n * b + 1) for j in range(1, n + 1)) + (n * b + 1) * (b + 1)
    assert f(N=n, B=b) == want
    assert sorted(set(CALLS)) == sorted({(j, b) for j in range(1, n + 1)} | {(n, b)})
    assert CALLS.count((3, b)) == 1                      # once an index value, not once a term


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**30), st.integers(1, 10**6), st.integers(1, 300))
def test_memoised_and_plain_evaluation_agree(n, b, dd):
    """A Piecewise, Min and floors sharing subtrees, against the same sum written with Python ints."""
    t = sp.ceiling(N / B)
    expr = sp.Piecewise((t * d + sp.Min(t, d), N > B * d), (sp.Min(t, d) * t, True)) + sp.floor(t * N / (t + d))
    tt = -(-n // b)
    ref = (tt * dd + min(tt, dd)) if n > b * dd else min(tt, dd) * tt
    ref += (tt * n) // (tt + dd)
    assert compile_exact(expr)(N=n, B=b, d=dd) == ref


def test_a_fraction_in_a_repeated_node():
    h = N / 3
    assert compile_exact(h * h + h)(N=2) == Fraction(4, 9) + Fraction(2, 3)


@pytest.mark.parametrize("diff,zero", [
    ((N + B)**2 - N**2 - 2 * N * B - B**2, True),
    (N * (N + 1) - N**2 - N, True),
    (sp.Max(sp.ceiling(N / B), 1) - sp.ceiling(N / B), True),
    # equal at every point, but SymPy's simplify does not prove it: not identically zero for the derivation
    # before (a partition is missed, never invented), nor now
    (sp.ceiling(N / B) - sp.floor((N + B - 1) / B), False),
    (sp.Min(sp.floor((N - 1) / B) + 1, sp.ceiling(N / B)) - sp.ceiling(N / B), False),
    (sp.Min(d + 40, N) - N, False),                      # zero at every small point, not at N = 1000, d = 3
    (sp.Min(sp.floor((N - d - 1) / B) + 1, sp.ceiling(N / B)) - sp.ceiling(N / B), False),
    (N - B, False),
])
def test_identically_zero_is_simplify_s_answer(diff, zero):
    assert (sp.simplify(diff) == 0) is zero              # the reference: what the derivation asked before
    assert _identically_zero(diff) is zero


def test_a_difference_nonzero_at_a_probe_is_refused_without_simplify(monkeypatch):
    monkeypatch.setattr(sp, "simplify", lambda e: pytest.fail(f"simplify asked about {e}"))
    assert _identically_zero(sp.Min(d + 40, N) - N) is False
    assert _identically_zero(sp.Min(sp.floor((N - d - 1) / B) + 1, sp.ceiling(N / B)) - sp.ceiling(N / B)) is False
