"""Numbers a user types, read exactly: the one reader every layer shares (the command line's ``--at`` and
``--vary``, the ``--per`` grammar of :mod:`symbolic.typed_expr`, a grader's formula).

A number is exact: ``4096``, ``4_096``, ``2**12``, ``2^12``, ``2**-3``, ``7/10``, ``0.5``, ``1e-9`` read as a
Python int or a :class:`~fractions.Fraction`, never a float.  A sign binds as in Python: it applies to the
whole number, after the power (``-2**12`` is ``-(2**12) = -4096``, ``-2^2`` is ``-4``), so a size typed with
a minus sign is negative and refused by its parameter.  The size of a number is bounded before it is
built: an exponent is at most :data:`MAX_EXPONENT` in magnitude, a literal has at most that many digits, and
any value (numerator and denominator) is at most :data:`MAX_MAGNITUDE` = ``10**4096`` - ``4096**4096`` is
refused up front, not computed.  Every bad input is :class:`~base.errors.BadInput` naming the parameter.
"""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import BadInput

__all__ = ["parse_number", "shown", "quoted", "MAX_EXPONENT", "MAX_MAGNITUDE"]

#: the largest exponent (and the most digits) a typed number may have (``2**4096``, ``1e4096``)
MAX_EXPONENT = 4096
#: the largest magnitude of a typed number's numerator or denominator
MAX_MAGNITUDE = 10 ** MAX_EXPONENT
_MAX_BITS = MAX_MAGNITUDE.bit_length()

_UINT = re.compile(r"\d+")
_INT = re.compile(r"[+-]?\d+")


def quoted(text) -> str:
    """``text`` quoted for a message, cut to its first 20 characters when longer than 40 (what a refusal shows
    of what it was given)."""
    text = str(text)
    return repr(text) if len(text) <= 40 else repr(text[:20]) + "..."


def _too_big(name: str, text: str) -> BadInput:
    return BadInput(name, f"{quoted(text)} is beyond the largest number a value may be, 10**{MAX_EXPONENT}")


def _power(name: str, text: str, base: str, exp: str):
    """``base ** exp`` for an unsigned integer base and a signed integer exponent, bounded before it is built."""
    if not (_UINT.fullmatch(base) and _INT.fullmatch(exp)):
        raise BadInput(name, f"expected a number, got {quoted(text)}")
    if len(base) > MAX_EXPONENT:
        raise BadInput(name, f"more than {MAX_EXPONENT} digits in {quoted(text)}")
    e = int(exp) if len(exp) <= len(str(MAX_EXPONENT)) + 1 else None
    if e is None or not -MAX_EXPONENT <= e <= MAX_EXPONENT:
        raise BadInput(name, f"exponent out of range (-{MAX_EXPONENT} to {MAX_EXPONENT}) in {quoted(text)}")
    b = int(base)
    if b >= 2 and (b.bit_length() - 1) * abs(e) > _MAX_BITS:      # even the smallest estimate is too big
        raise _too_big(name, text)
    if e < 0:
        if b == 0:
            raise BadInput(name, f"division by zero in {quoted(text)}")
        return Fraction(1, b ** -e)
    return b ** e


def parse_number(name: str, text: str):
    """``4096``, ``4_096``, ``2**12``, ``2^12``, ``-2**12``, ``2**-3``, ``7/10``, ``0.5``, ``1e-9`` -> an int
    or an exact Fraction (never a float); the sign applies after the power, as in Python.
    :class:`BadInput` naming ``name`` otherwise (see the module docstring for the bounds)."""
    t = str(text).strip().replace("_", "")
    sign = 1
    if t[:1] in ("+", "-"):
        sign, t = (-1 if t[0] == "-" else 1), t[1:].lstrip()
    if not t or not (t[0].isdigit() or t[0] == "."):     # one sign only, then a digit: '--2', '-inf' refused
        raise BadInput(name, f"expected a number, got {quoted(text)}")
    for op in ("**", "^"):
        if op in t:
            base, _, exp = t.partition(op)
            v = _power(name, text, base.strip(), exp.strip())
            break
    else:
        mantissa, e, exponent = t.lower().partition("e")
        if e and _INT.fullmatch(exponent) and abs(int(exponent)) > MAX_EXPONENT:
            raise BadInput(name, f"exponent out of range (-{MAX_EXPONENT} to {MAX_EXPONENT}) in {quoted(text)}")
        if len(t) > MAX_EXPONENT:
            raise BadInput(name, f"more than {MAX_EXPONENT} digits in {quoted(text)}")
        try:
            v = Fraction(t)
        except (ValueError, ZeroDivisionError):
            raise BadInput(name, f"expected a number, got {quoted(text)}") from None
    v = Fraction(v)
    if v.numerator.bit_length() > _MAX_BITS or v.denominator.bit_length() > _MAX_BITS or \
            abs(v.numerator) > MAX_MAGNITUDE or v.denominator > MAX_MAGNITUDE:
        raise _too_big(name, text)
    v *= sign
    return v.numerator if v.denominator == 1 else v


def shown(v) -> str:
    """A value as a message shows it: exact, or its digit count beyond 30 digits."""
    return str(v) if not isinstance(v, int) or abs(v) < 10 ** 30 else f"a {len(str(abs(v)))}-digit number"
