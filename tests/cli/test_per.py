"""tilebound.per: the ``--per`` grammar on the toy model ``toy.halo`` (parameters ``N``, ``B``).

Each expression's value at a point is worked out by hand in the table (Python arithmetic on the same
numbers, exact); refusals are BadInput naming ``per``.  The bounds (length, depth, degree, constant size) are
checked to refuse before the work, so the hostile rows below finish at once.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from base.errors import BadInput
from tilebound.per import MAX_DEGREE, MAX_DEPTH, MAX_LENGTH, compile_per, parse_per, per_expression

from toy_models import halo_model

HALO = halo_model()

# at N = 100, B = 32, by hand
VALUES = [
    ("2 N", 200), ("2N", 200), ("N(B + 1)", 3300), ("N^2 / B", Fraction(10000, 32)), ("N**2*B**-1", Fraction(10000, 32)),
    ("-2**2 N", -400),                       # -(2**2) N, as Python reads -2**2
    ("(-2)**2 N", 400), ("2**-1 N", 50), ("N - -B", 132), ("--N", 100), ("-(-(N))", 100),
    ("ceil(N/B)", 4), ("floor(N/B)", 3), ("min(N, B, 7)", 7), ("max(N, 2B)", 100),
    ("1e2", 100), ("7/10 N", 70), ("N*1.5", 150), ("2^3^2", 512),      # ** is right-associative: 2**9
    ("(((2**8)**8)**8)", 2**512), ("N**32 / N**31", 100),
    ("(" * (MAX_DEPTH - 1) + "N" + ")" * (MAX_DEPTH - 1), 100),
    ("ceil(" * (MAX_DEPTH - 1) + "N/B" + ")" * (MAX_DEPTH - 1), 4),
]


@pytest.mark.parametrize("text,value", VALUES, ids=[t[:30] for t, _ in VALUES])
def test_value_at_a_point(text, value):
    assert compile_per(parse_per(HALO, text), text)({"N": 100, "B": 32}) == value


REFUSED = [
    ("sqrt(N)", "unknown function sqrt"), ("x**2", "x is not a parameter of toy.halo"),
    ("Bb", "did you mean B"), ("N+(", "it ends too early"), ("", "it is empty"), ("N**0.5", "an integer"),
    ("N**N", "an integer"), ("N**65", "exponent 65 out of range"), ("N/0", "division by zero"), ("0**-1", "division by zero"),
    ("10**10**10", "out of range"),
    ("(((2**64)**64)**64)**64", "beyond 10**4096"),             # the tower: refused at its third power
    ("((2**64)**64)**64", "beyond 10**4096"),
    ("(2**64)**60 * (2**64)**60 * (2**64)**60 * (2**64)**60", "beyond 10**4096"),
    ("((N + 1)**64 + 1)**64", "degree in the parameters reaches 4096"),
    ("N**64 * N", "degree in the parameters reaches 65"),
    ("(N**8)**9", "reaches 72"),
    ("(" * (MAX_DEPTH + 1) + "N" + ")" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} deep"),
    ("(" * 200 + "N" + ")" * 200, "nested more than"),             # was RecursionError
    ("ceil(" * 150 + "N" + ")" * 150, "nested more than"),         # was RecursionError
    ("2**" * 200 + "2", "nested more than"),
    ("-" * 300 + "N", "signs in a row"),
    ("N+" * 600 + "N", f"at most {MAX_LENGTH:,}"),
    ("__import__('os')", "unexpected"), ("1e5000", "exponent out of range"),
]


@pytest.mark.parametrize("text,words", REFUSED, ids=[t[:30] for t, _ in REFUSED])
def test_refused_naming_per(text, words):
    with pytest.raises(BadInput) as exc:
        parse_per(HALO, text)
    assert exc.value.param == "per" and words in exc.value.problem, exc.value.problem
    assert len(str(exc.value)) < 400 and "\n" not in str(exc.value)


@pytest.mark.parametrize("text,point,words", [
    ("1/(N - 64)", {"N": 64, "B": 32}, "'1/(N - 64)' is undefined at N = 64"),
    ("N - 64", {"N": 64, "B": 32}, "'N - 64' is 0 at N = 64"),
    ("ceil(N/B) - 1", {"N": 32, "B": 32}, "is 0 at B = 32, N = 32"),
    ("N - 64", {"N": 10**40 * 0 + 64, "B": 1}, "is 0 at N = 64"),
])
def test_zero_or_undefined_at_a_point_names_per_and_the_point(text, point, words):
    fn = compile_per(per_expression(HALO, text), text)
    with pytest.raises(BadInput) as exc:
        fn(point)
    assert exc.value.param == "per" and words in str(exc.value), str(exc.value)
    assert fn({"N": 100, "B": 32}) != 0                          # elsewhere the column has a value


def test_zero_expression_refused_up_front():
    with pytest.raises(BadInput, match="'N-N' is 0"):
        per_expression(HALO, "N-N")


def test_theta_and_leading_of_the_quantity():
    """toy.halo: total = 2N + 2 ceil(N/B) (Θ(N), leading 2N); writes = N (by hand)."""
    assert str(per_expression(HALO, "theta", "total")) == "N"
    assert str(per_expression(HALO, "leading", "total")) == "2*N"
    assert str(per_expression(HALO, "theta", "writes")) == "N"


@given(st.integers(1, 10**6), st.integers(1, 64), st.integers(-8, 8))
@example(4096, 2, -1)
@example(1, 1, 0)
def test_signed_powers_agree_with_python(n, k, c):
    """``c - N**k`` and ``-N**k + c`` as Python computes them (exact)."""
    fn = compile_per(parse_per(HALO, f"{c} - N**{k}"), "e")
    if c - n ** k == 0:
        with pytest.raises(BadInput):
            fn({"N": n, "B": 1})
    else:
        assert fn({"N": n, "B": 1}) == c - n ** k
        assert compile_per(parse_per(HALO, f"-N**{k} + {c}"), "e")({"N": n, "B": 1}) == c - n ** k


def test_degree_bound_is_the_documented_one():
    assert MAX_DEGREE == 64
    parse_per(HALO, "N**32 * B**32")
    with pytest.raises(BadInput, match="reaches 65"):
        parse_per(HALO, "N**32 * B**32 * N")
