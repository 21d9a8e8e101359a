"""Human-readable quantities: bytes in decimal units (1 GB = 10^9 B, as vendors and the
FlashAttention paper quote them) and durations in s/ms/µs/ns.  Strings only; no cost is computed here."""

from __future__ import annotations

from numbers import Real

__all__ = ["fmt_bytes", "fmt_time", "fmt_int", "fmt_si", "fmt_real"]

_BYTE_UNITS = ((10**15, "PB"), (10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "KB"))
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps"))


def _sig(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def fmt_bytes(n: Real, digits: int = 3) -> str:
    """``25_231_933_440`` -> ``'25.2 GB'``; below 1 KB the exact count with ``B``."""
    x = float(n)
    for scale, unit in _BYTE_UNITS:
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)} {unit}"
    return f"{_sig(x, digits)} B"


def fmt_time(seconds: Real, digits: int = 3) -> str:
    """``0.01623`` -> ``'16.2 ms'``; infinite times print as ``'inf'``."""
    x = float(seconds)
    if x != x or x in (float("inf"), float("-inf")):
        return "inf"
    for scale, unit in _TIME_UNITS:
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)} {unit}"
    return f"{_sig(x / 1e-12, digits)} ps"


def fmt_int(n: int) -> str:
    """An exact integer with thousands separators: ``12,320,768``."""
    return f"{int(n):,}"


def fmt_si(x: Real, unit: str = "", digits: int = 3) -> str:
    """``989.4e12, 'FLOP/s'`` -> ``'989 TFLOP/s'``."""
    v = float(x)
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{_sig(v / scale, digits)} {prefix}{unit}"
    return f"{_sig(v, digits)} {unit}".rstrip()


def fmt_real(x: Real, digits: int = 3) -> str:
    """A ratio or other real for display: ``3 significant digits`` (``3.52``, ``12.3``, ``1,234``);
    an integral value prints exactly with separators."""
    if isinstance(x, int) or (hasattr(x, "denominator") and x.denominator == 1):
        return fmt_int(x)
    v = float(x)
    if v != v or v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
    if v != 0 and abs(v) < 10 ** -(digits + 1):
        return f"{v:.{digits - 1}e}"
    return _sig(v, digits)
