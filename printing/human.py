"""Human-readable quantities: bytes in decimal units (1 GB = 10^9 B, as vendors and the
FlashAttention paper quote them) and durations in s/ms/µs/ns.  Strings only; no cost is computed here.

Counts are exact at any size: an integer prints with all its digits up to :data:`MAX_DIGITS`, beyond
that (and for any value outside a float's range) in scientific form computed exactly, with the digit
count: ``1.00e+4400 (4,401 digits)``.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Real

__all__ = ["fmt_bytes", "fmt_time", "fmt_int", "fmt_si", "fmt_real", "fmt_exact", "fmt_sci", "is_huge", "MAX_DIGITS"]

#: integers with more digits than this print in scientific form (Python refuses str() beyond 4300)
MAX_DIGITS = 4000
_MAX_BITS = int(MAX_DIGITS * 3.3219280948873626)       # bits of a MAX_DIGITS-digit number


def _exponent(a: Fraction) -> int:
    """``e`` with ``10**e <= a < 10**(e + 1)``, for ``a > 0``, exactly."""
    e = int((a.numerator.bit_length() - a.denominator.bit_length()) * 0.30102999566398120)
    while a >= _pow10(e + 1):
        e += 1
    while a < _pow10(e):
        e -= 1
    return e


def _pow10(e: int) -> Fraction:
    return Fraction(10 ** e) if e >= 0 else Fraction(1, 10 ** -e)


def fmt_sci(x, digits: int = 3) -> str:
    """Scientific form of any int or Fraction, computed exactly: ``'1.23e+4399'``, ``'-5.00e-400'``."""
    a = Fraction(x)
    if a == 0:
        return "0"
    sign, a = ("-" if a < 0 else ""), abs(a)
    e = _exponent(a)
    m = round(a / _pow10(e - digits + 1))
    if m >= 10 ** digits:          # rounding carried into a new digit
        e, m = e + 1, round(a / _pow10(e + 2 - digits))
    ms = str(m)
    return f"{sign}{ms[0]}.{ms[1:]}e{'+' if e >= 0 else '-'}{abs(e)}" if digits > 1 else f"{sign}{ms}e{e:+d}"


def is_huge(n: int) -> bool:
    return abs(int(n)).bit_length() > _MAX_BITS


def _float(x):
    """``float(x)``, or ``None`` where ``x`` is outside a float's range (or a nonzero value it rounds to 0)."""
    try:
        v = float(x)
    except OverflowError:
        return None
    if v == 0 and x != 0:
        return None
    return v

_BYTE_UNITS = ((10**15, "PB"), (10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "KB"))
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps"))


#: a float at or beyond this prints in scientific form: its digits past the 16th are the binary
#: value's, not the exact number's (``9.99e44`` would print as ``999,999,999,999,999,929,757,...``)
_FLOAT_DIGITS_LIMIT = 1e15


def _sig(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    if abs(x) >= _FLOAT_DIGITS_LIMIT:
        return f"{x:.{digits - 1}e}"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def fmt_bytes(n: Real, digits: int = 3) -> str:
    """``25_231_933_440`` -> ``'25.2 GB'``; below 1 KB the exact count with ``B``."""
    x = _float(n)
    if x is None:
        return f"{fmt_sci(n, digits)} B"
    for scale, unit in _BYTE_UNITS:
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)} {unit}"
    return f"{_sig(x, digits)} B"


def fmt_time(seconds: Real, digits: int = 3) -> str:
    """``0.01623`` -> ``'16.2 ms'``; infinite times print as ``'inf'``."""
    x = _float(seconds)
    if x is None:
        return f"{fmt_sci(seconds, digits)} s"
    if x != x or x in (float("inf"), float("-inf")):
        return "inf"
    for scale, unit in _TIME_UNITS:
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)} {unit}"
    return f"{_sig(x / 1e-12, digits)} ps"


def fmt_int(n: int) -> str:
    """An exact integer with thousands separators: ``12,320,768``; beyond :data:`MAX_DIGITS` digits
    its scientific form and digit count."""
    n = int(n)
    if is_huge(n):
        return f"{fmt_sci(n)} ({_exponent(Fraction(abs(n))) + 1:,} digits)"
    return f"{n:,}"


def fmt_exact(v) -> str:
    """An int or Fraction exactly (``12,320,768``, ``253/2500000``); beyond :data:`MAX_DIGITS` digits in
    numerator or denominator, its scientific form and the digit counts."""
    f = Fraction(v)
    if f.denominator == 1:
        return fmt_int(f.numerator)
    if is_huge(f.numerator) or is_huge(f.denominator):
        nd = _exponent(Fraction(abs(f.numerator))) + 1
        dd = _exponent(Fraction(f.denominator)) + 1
        return f"{fmt_sci(f)} (exactly a {nd:,}-digit numerator over a {dd:,}-digit denominator)"
    return str(f)


def fmt_si(x: Real, unit: str = "", digits: int = 3) -> str:
    """``989.4e12, 'FLOP/s'`` -> ``'989 TFLOP/s'``."""
    v = _float(x)
    if v is None:
        return f"{fmt_sci(x, digits)} {unit}".rstrip()
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{_sig(v / scale, digits)} {prefix}{unit}"
    return f"{_sig(v, digits)} {unit}".rstrip()


def fmt_real(x: Real, digits: int = 3) -> str:
    """A ratio or other real for display: ``3 significant digits`` (``3.52``, ``12.3``, ``1,234``);
    an integral value prints exactly with separators."""
    if isinstance(x, int) or (hasattr(x, "denominator") and x.denominator == 1):
        return fmt_int(x)
    v = _float(x)
    if v is None:
        return fmt_sci(x, digits)
    if v != v or v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
    if v != 0 and abs(v) < 10 ** -(digits + 1):
        return f"{v:.{digits - 1}e}"
    return _sig(v, digits)
