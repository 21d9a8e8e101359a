"""tilebound.numbers: numbers a user types, read exactly, with Python's sign rule and bounded sizes.

Expected values are Python's own arithmetic on the same text (``-2**12 == -4096``: the sign binds after the
power) written out by hand, and exact fractions; a refusal is BadInput naming the parameter.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from base.errors import BadInput
from tilebound.numbers import (MAX_MAGNITUDE, MAX_POINTS, expand, parse_assignments, parse_number, parse_vary,
                               sweep_points)

READ = [
    ("4096", 4096), ("4_096", 4096), ("+4096", 4096), ("-0", 0), (" 64 ", 64),
    ("2**12", 4096), ("2^12", 4096), ("2 ** 12", 4096),
    ("-2**12", -4096), ("-2^2", -4), ("- 5", -5), ("+2**3", 8),       # the sign after the power, as Python
    ("2**-3", Fraction(1, 8)), ("10**-3", Fraction(1, 1000)), ("-2**-1", Fraction(-1, 2)),
    ("7/10", Fraction(7, 10)), ("-7/10", Fraction(-7, 10)), ("0.5", Fraction(1, 2)), (".5", Fraction(1, 2)),
    ("1e-9", Fraction(1, 10**9)), ("-1e-9", Fraction(-1, 10**9)), ("1e3", 1000), ("1E3", 1000),
    ("1e4096", 10**4096), ("2**4096", 2**4096), ("1e-4096", Fraction(1, 10**4096)), ("10**4096", 10**4096),
]


@pytest.mark.parametrize("text,value", READ, ids=[t for t, _ in READ])
def test_reads_exactly(text, value):
    got = parse_number("N", text)
    assert got == value and type(got) is type(value)


REFUSED = [
    ("--2", "expected a number"), ("-+2", "expected a number"), ("-inf", "expected a number"),
    ("inf", "expected a number"), ("nan", "expected a number"), ("0x10", "expected a number"),
    ("", "expected a number"), ("-", "expected a number"), ("(2)", "expected a number"), ("2**", "expected a number"),
    ("(-2)**2", "expected a number"), ("2**-+3", "expected a number"), ("2**3**2", "expected a number"),
    ("1/0", "expected a number"), ("0**-1", "division by zero"),
    ("2**5000", "exponent out of range"), ("2**-5000", "exponent out of range"), ("1e5000", "exponent out of range"),
    ("2**" + "9" * 5000, "exponent out of range"), ("1" * 5000, "more than 4096 digits"),
    ("4096**4096", "beyond the largest number"), ("9e4096", "beyond the largest number"),
    ("-9e4096", "beyond the largest number"), ("11**-4096", "beyond the largest number"),
    ("10**4096" + "1", "exponent out of range"),
]


@pytest.mark.parametrize("text,words", REFUSED, ids=[t[:20] for t, _ in REFUSED])
def test_refused_naming_the_parameter(text, words):
    with pytest.raises(BadInput) as exc:
        parse_number("N", text)
    assert exc.value.param == "N" and words in exc.value.problem
    assert len(str(exc.value)) < 200                       # a long text is cut in the message


@given(st.integers(0, 64), st.integers(-40, 40), st.sampled_from(["**", "^"]), st.sampled_from(["", "-", "+"]))
@example(2, 12, "**", "-")
@example(2, 2, "^", "-")
@example(0, 0, "**", "-")
@example(2, -1, "**", "-")
def test_power_binds_as_in_python(base, exp, op, sign):
    """``sign base op exp`` reads as Python reads ``sign base ** exp``: the unary sign applies to the power."""
    text = f"{sign}{base}{op}{exp}"
    if base == 0 and exp < 0:
        with pytest.raises(BadInput):
            parse_number("N", text)
        return
    power = Fraction(base) ** exp
    assert parse_number("N", text) == (-power if sign == "-" else power)


def test_magnitude_bound_is_ten_to_the_4096():
    assert parse_number("N", "1e4096") == parse_number("N", "-1e4096") * -1 == MAX_MAGNITUDE
    for text in ("1.0000000001e4096", "10000000001e4086"):          # both 1.0000000001 x 10**4096
        with pytest.raises(BadInput):
            parse_number("N", text)


def test_assignments_and_sweeps():
    assert parse_assignments(["N=-2**12,d=64"]) == {"N": -4096, "d": 64}
    assert parse_vary(["N=2**10..2**12"]) == {"N": [1024, 2048, 4096]}
    assert parse_vary(["N, N_k=1,-2**2"]) == {"N,N_k": [1, -4]}
    assert [expand(p) for p in sweep_points({"N,N_k": [1, 2], "d": [64]})] == [
        {"N": 1, "N_k": 1, "d": 64}, {"N": 2, "N_k": 2, "d": 64}]
    with pytest.raises(BadInput) as exc:
        parse_vary(["N=-2**3..8"])                               # a doubling range starts above 0
    assert exc.value.param == "N"
    with pytest.raises(BadInput) as exc:
        sweep_points({"N": list(range(101)), "d": list(range(100))})
    assert exc.value.param == "vary" and f"{MAX_POINTS:,}" in exc.value.problem
