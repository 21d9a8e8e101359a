"""Argument checks of the GEMM family: one ``ValueError`` whose message starts with the parameter."""

from __future__ import annotations

from numbers import Integral, Real

__all__ = ["positive_int"]


def positive_int(name: str, value) -> int:
    """``value`` as a Python int >= 1.  Integers of any kind (``int``, NumPy, SymPy) and integral floats
    such as ``256.0`` are accepted; ``bool``, fractions and non-numbers are not."""
    if isinstance(value, bool):
        raise ValueError(f"{name}: must be a positive integer, got {value!r}")
    if isinstance(value, Integral):
        v = int(value)
    elif isinstance(value, Real) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{name}: must be a positive integer, got {value!r}")
    if v < 1:
        raise ValueError(f"{name}: must be >= 1, got {v}")
    return v
