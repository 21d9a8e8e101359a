"""Parameters carry their domain to SymPy: ``least`` decides the sign assumptions SymPy simplifies with.

The reference values are worked by hand: ``N * Max(R, 1)`` at ``R = 0`` is ``N`` (one pass even with no
repeats); SymPy with a *positive* ``R`` rewrites ``Max(R, 1)`` to ``R`` and so evaluates it to 0, the bug
this guards against.
"""

from __future__ import annotations

import sympy as sp
import pytest

from base.errors import BadInput
from symbolic import registry
from symbolic.model import Model
from symbolic.params import param, real_param


def test_least_zero_is_a_nonnegative_integer_symbol():
    R = param("R", "repeats", least=0)
    assert R.is_integer and R.is_nonnegative and R.is_positive is None and R.is_zero is None
    assert sp.Max(R, 1) != R                                   # not simplified away
    assert sp.Max(param("R1", "repeats", least=1), 1) == param("R1", "repeats", least=1)


def test_a_max_model_evaluates_to_n_at_zero():
    N, R = param("N", "size"), param("R", "repeats", least=0)
    m = Model(name="toy.max", summary="one pass at least", quantities={"reads": N * sp.Max(R, 1)}, params=(N, R))
    assert m.evaluate("reads", N=7, R=0) == 7                  # by hand: 7 * max(0, 1)
    assert m.evaluate("reads", N=7, R=3) == 21
    with pytest.raises(BadInput, match="^R: "):
        m.evaluate("reads", N=7, R=-1)


def test_negative_least_keeps_only_integrality():
    D = param("D", "offset", least=-5)
    assert D.is_integer and D.is_nonnegative is None
    assert sp.Abs(D) != D


def test_real_params_stay_positive():
    t = real_param("t", "a time")
    assert t.is_positive and t.is_real and not t.is_integer


def test_signature_users_call_is_kept():
    """``param(name, meaning, latex=..., least=...)`` - users' packages call it positionally and by keyword."""
    p = param("W_l", "left window", "W_{l}", 0)
    q = param("W_l", meaning="left window", latex="W_{l}", least=0)
    assert p == q and p.least == 0 and p.latex == "W_{l}"


@pytest.mark.parametrize("name", registry.names())
def test_shipped_models_keep_their_assumptions(name):
    """Every shipped parameter with ``least >= 1`` carries exactly the assumptions of a plain positive integer
    symbol (and a real one those of a positive real), so SymPy simplifies every shipped formula as before;
    a model that declares ``least = 0`` gets a nonnegative symbol instead."""
    m = registry.get(name)
    for p in m.params:
        if not p.counts:
            want = sp.Symbol(p.name, real=True, positive=True, integer=False)
        elif p.least >= 1:
            want = sp.Symbol(p.name, integer=True, positive=True)
        elif p.least == 0:
            want = sp.Symbol(p.name, integer=True, nonnegative=True)
        else:
            want = sp.Symbol(p.name, integer=True)
        assert p.assumptions0 == want.assumptions0, (name, p.name)
