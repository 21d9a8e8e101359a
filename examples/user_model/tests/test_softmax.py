"""The lab's own tests, as a course would write them: the executor against a brute-force count, the
formula against the closed form derived by hand, the output against NumPy, and tilebound's check."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from base.errors import BadInput
from tilebound_softmax_lab.checks import softmax as softmax_check
from tilebound_softmax_lab.executor import run_softmax
from tilebound_softmax_lab.formulas import B_C, C, R, softmax_rowwise
from tilebound_softmax_lab.listing import ROWWISE
from verify.core import run_check


def brute_force(R_, C_, BC):
    """Every padded position of every tile, masked: two loads and one store per valid element, one exp
    per valid element in each pass, one rescale exp per tile after a row's first."""
    reads = writes = exps = 0
    tiles = -(-C_ // BC)
    for _ in range(R_):
        for j in range(tiles):
            valid = sum(1 for c in range(BC) if j * BC + c < C_)
            reads += 2 * valid
            writes += valid
            exps += 2 * valid + (1 if j > 0 else 0)
    return {"reads": reads, "writes": writes, "exps": exps}


@pytest.mark.parametrize("real", [False, True])
@pytest.mark.parametrize("R_,C_,BC", [(1, 1, 1), (3, 5, 8), (2, 64, 16), (2, 65, 16), (4, 7, 1), (1, 100, 33)])
def test_executor_equals_brute_force(R_, C_, BC, real):
    assert run_softmax(R_, C_, BC, real=real).counts() == brute_force(R_, C_, BC)


def test_formula_equals_hand_closed_form():
    hand = {"reads": 2 * R * C, "writes": R * C, "exps": R * (2 * C + sp.ceiling(C / B_C) - 1)}
    for q, e in hand.items():
        assert sp.simplify(softmax_rowwise[q] - e) == 0, q
    assert sp.simplify(softmax_rowwise.divisible()["exps"] - R * (2 * C + C / B_C - 1)) == 0
    assert sp.simplify(softmax_rowwise.leading() - 3 * R * C) == 0
    assert softmax_rowwise.evaluate("exps", R=2, C=10, B_C=4) == 2 * (20 + 3 - 1)


@pytest.mark.parametrize("R_,C_,BC", [(1, 1, 1), (3, 5, 8), (4, 65, 16), (2, 300, 7)])
def test_output_is_the_softmax(R_, C_, BC):
    X = np.random.default_rng(R_ + C_).standard_normal((R_, C_)) * 30     # large values: the max matters
    Y = run_softmax(R_, C_, BC, real=True, X=X).Y
    E = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(Y, E / E.sum(axis=1, keepdims=True), rtol=1e-12, atol=1e-300)


def test_check_agrees():
    report = run_check(softmax_check, use_hypothesis=False)
    assert report.points > 0 and report.failed == 0, report.smallest_failure()


@pytest.mark.parametrize("kwargs,param", [
    ({"R": 0, "C": 4, "B_C": 1}, "R"),
    ({"R": 1, "C": 4, "B_C": 0.5}, "B_C"),
    ({"R": 2, "C": 2, "B_C": 1, "X": np.ones((2, 2))}, "X"),          # data needs real mode
    ({"R": 2, "C": 10**9, "B_C": 1}, "B_C"),                          # over the step budget: larger tiles
    ({"R": 10**9, "C": 4, "B_C": 4}, "R"),                            # over it by rows
    ({"R": 4096, "C": 8192, "B_C": 8192, "real": True}, "C"),         # real mode over the element budget
])
def test_bad_input_names_the_parameter(kwargs, param):
    with pytest.raises(BadInput) as e:
        run_softmax(**kwargs)
    assert e.value.param == param


@pytest.mark.parametrize("R_,C_,BC", [(1, 1, 1), (3, 5, 8), (2, 64, 16), (2, 65, 16), (4, 7, 1), (1, 100, 33)])
def test_listing_lines_equal_brute_force(R_, C_, BC):
    """The listing's lines, counted by running its loops and by each line's symbolic sum, against the
    brute-force count above."""
    want = brute_force(R_, C_, BC)
    for method in ("walk", "sums"):
        got = ROWWISE.count(dict(R=R_, C=C_, B_C=BC), method=method)
        assert got == {"reads": want["reads"], "writes": want["writes"]}, method


def test_listing_lines_sum_to_the_formula():
    sums = ROWWISE.sums()
    assert sp.simplify(sums["reads"] - softmax_rowwise["reads"]) == 0
    assert sp.simplify(sums["writes"] - softmax_rowwise["writes"]) == 0
