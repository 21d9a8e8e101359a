"""Numbers a user types, and the ``--at`` and ``--vary`` lists made of them.

A number is exact: ``4096``, ``4_096``, ``2**12``, ``2^12``, ``2**-3``, ``7/10``, ``0.5``, ``1e-9`` read as a
Python int or a :class:`~fractions.Fraction`, never a float.  A sign binds as in Python: it applies to the
whole number, after the power (``-2**12`` is ``-(2**12) = -4096``, ``-2^2`` is ``-4``), so a size typed with
a minus sign is negative and refused by its parameter.  The size of a number is bounded before it is
built: an exponent is at most :data:`MAX_EXPONENT` in magnitude, a literal has at most that many digits, and
any value (numerator and denominator) is at most :data:`MAX_MAGNITUDE` = ``10**4096`` - ``4096**4096`` is
refused up front, not computed.

``--at N=4096 d=64`` (or ``N=4096,d=64``) gives ``{"N": 4096, "d": 64}``; ``--vary N=512,1024`` a list of
values and ``--vary N=512..4096`` the doublings from 512 to 4096; ``--vary N,N_k=...`` ties parameters.  A
sweep of more than :data:`MAX_POINTS` points is refused before any point is built.  Every bad input is
:class:`~base.errors.BadInput` naming the parameter.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Mapping, Sequence

from base.errors import BadInput

__all__ = ["parse_number", "parse_assignments", "parse_vary", "tied", "varied", "expand", "sweep_points",
           "refuse_overlap", "shown", "MAX_POINTS", "MAX_EXPONENT", "MAX_MAGNITUDE"]

#: a sweep (table or plot) of more points than this is refused up front
MAX_POINTS = 10_000
#: the largest exponent (and the most digits) a typed number may have (``2**4096``, ``1e4096``)
MAX_EXPONENT = 4096
#: the largest magnitude of a typed number's numerator or denominator
MAX_MAGNITUDE = 10 ** MAX_EXPONENT
_MAX_BITS = MAX_MAGNITUDE.bit_length()

_UINT = re.compile(r"\d+")
_INT = re.compile(r"[+-]?\d+")


def _q(text) -> str:
    """``text`` quoted for a message, cut to its first 20 characters when long."""
    text = str(text)
    return repr(text) if len(text) <= 40 else repr(text[:20]) + "..."


def _too_big(name: str, text: str) -> BadInput:
    return BadInput(name, f"{_q(text)} is beyond the largest number a value may be, 10**{MAX_EXPONENT}")


def _power(name: str, text: str, base: str, exp: str):
    """``base ** exp`` for an unsigned integer base and a signed integer exponent, bounded before it is built."""
    if not (_UINT.fullmatch(base) and _INT.fullmatch(exp)):
        raise BadInput(name, f"expected a number, got {_q(text)}")
    if len(base) > MAX_EXPONENT:
        raise BadInput(name, f"more than {MAX_EXPONENT} digits in {_q(text)}")
    e = int(exp) if len(exp) <= len(str(MAX_EXPONENT)) + 1 else None
    if e is None or not -MAX_EXPONENT <= e <= MAX_EXPONENT:
        raise BadInput(name, f"exponent out of range (-{MAX_EXPONENT} to {MAX_EXPONENT}) in {_q(text)}")
    b = int(base)
    if b >= 2 and (b.bit_length() - 1) * abs(e) > _MAX_BITS:      # even the smallest estimate is too big
        raise _too_big(name, text)
    if e < 0:
        if b == 0:
            raise BadInput(name, f"division by zero in {_q(text)}")
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
        raise BadInput(name, f"expected a number, got {_q(text)}")
    for op in ("**", "^"):
        if op in t:
            base, _, exp = t.partition(op)
            v = _power(name, text, base.strip(), exp.strip())
            break
    else:
        mantissa, e, exponent = t.lower().partition("e")
        if e and _INT.fullmatch(exponent) and abs(int(exponent)) > MAX_EXPONENT:
            raise BadInput(name, f"exponent out of range (-{MAX_EXPONENT} to {MAX_EXPONENT}) in {_q(text)}")
        if len(t) > MAX_EXPONENT:
            raise BadInput(name, f"more than {MAX_EXPONENT} digits in {_q(text)}")
        try:
            v = Fraction(t)
        except (ValueError, ZeroDivisionError):
            raise BadInput(name, f"expected a number, got {_q(text)}") from None
    v = Fraction(v)
    if v.numerator.bit_length() > _MAX_BITS or v.denominator.bit_length() > _MAX_BITS or \
            abs(v.numerator) > MAX_MAGNITUDE or v.denominator > MAX_MAGNITUDE:
        raise _too_big(name, text)
    v *= sign
    return v.numerator if v.denominator == 1 else v


def shown(v) -> str:
    """A value as a message shows it: exact, or its digit count beyond 30 digits."""
    return str(v) if not isinstance(v, int) or abs(v) < 10 ** 30 else f"a {len(str(abs(v)))}-digit number"


def parse_assignments(items: Sequence[str] | None, option: str = "at") -> dict:
    """``["N=4096", "d=64"]`` or ``["N=4096,d=64"]`` -> ``{"N": 4096, "d": 64}`` (exact numbers).
    A name given twice is refused."""
    out: dict = {}
    for item in items or ():
        for part in str(item).split(","):
            name, eq, value = part.partition("=")
            name = name.strip()
            if not eq or not name or not value.strip():
                raise BadInput(option, f"expected NAME=VALUE, got {part!r}")
            v = parse_number(name, value)
            if name in out:
                raise BadInput(name, f"given twice in --{option} ({shown(out[name])} and {shown(v)})")
            out[name] = v
    return out


def _doublings(name: str, lo, hi, part: str) -> list:
    if not lo > 0 or hi < lo:
        raise BadInput(name, f"range {part!r} must satisfy 0 < A <= B")
    count = 1
    while lo * 2 ** count <= hi:     # counted before the values are built
        count += 1
        if count > MAX_POINTS:
            raise BadInput(name, f"range {part!r} has more than {MAX_POINTS:,} values")
    return [lo * 2 ** k for k in range(count)]


def parse_vary(items: Sequence[str] | None) -> dict:
    """``["N=512,1024", "M=8192..65536"]`` -> ``{"N": [512, 1024], "M": [8192, 16384, 32768, 65536]}``.
    ``A..B`` doubles from A up to B (inclusive).  ``N,N_k=...`` ties parameters: they take the same
    values together (key ``"N,N_k"``).  A parameter varied twice is refused."""
    out: dict = {}
    seen: dict = {}
    for item in items or ():
        name, eq, values = str(item).partition("=")
        names = [n.strip() for n in name.split(",")]
        key = ",".join(names)
        if not eq or not all(names) or not values.strip():
            raise BadInput("vary", f"expected NAME=V1,V2,... or NAME=A..B, got {item!r}")
        for n in names:
            if n in seen:
                raise BadInput(n, f"varied twice (--vary {seen[n]} and --vary {item})")
            seen[n] = item
        vals: list = []
        for part in values.split(","):
            if ".." in part:
                lo_s, _, hi_s = part.partition("..")
                vals += _doublings(key, parse_number(key, lo_s), parse_number(key, hi_s), part.strip())
            else:
                vals.append(parse_number(key, part))
            if len(vals) > MAX_POINTS:
                raise BadInput(key, f"more than {MAX_POINTS:,} values")
        out[key] = vals
    return out


def tied(key: str) -> list[str]:
    """The parameter names one ``--vary`` sets together (``"N,N_k"`` -> ``["N", "N_k"]``)."""
    return key.split(",")


def varied(vary: Mapping[str, list]) -> list[str]:
    """Every parameter name the ``--vary`` groups set."""
    return [n for key in vary for n in tied(key)]


def sweep_points(vary: Mapping[str, list]) -> list[dict]:
    """The product of the ``--vary`` groups, as ``{key: value}`` per point; :class:`BadInput` when it
    would exceed :data:`MAX_POINTS` (counted before any point is built)."""
    count = 1
    for values in vary.values():
        count *= len(values)
    if count > MAX_POINTS:
        sizes = " x ".join(str(len(v)) for v in vary.values())
        raise BadInput("vary", f"{sizes} = {count:,} points; the most a sweep takes is {MAX_POINTS:,}")
    points: list[dict] = [{}]
    for key, values in vary.items():
        points = [{**p, key: v} for p in points for v in values]
    return points


def expand(vp: Mapping) -> dict:
    """``{"N,N_k": 512}`` -> ``{"N": 512, "N_k": 512}``."""
    return {n: v for key, v in vp.items() for n in tied(key)}


def refuse_overlap(at: Mapping, vary: Mapping) -> None:
    """A parameter both fixed by ``--at`` and swept by ``--vary`` is refused (one of them would be ignored)."""
    for n in varied(vary):
        if n in at:
            raise BadInput(n, "given by both --at and --vary; give it once")
