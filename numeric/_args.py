"""Argument checks shared by the executors and simulators: a ``ValueError`` whose message starts with the parameter."""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["positive", "nonnegative", "count"]


def positive(name: str, value) -> float:
    """A finite number > 0 (a duration, a rate, a size in bytes), returned as float."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name}: must be a number > 0, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    return v


def nonnegative(name: str, value) -> float:
    """A finite number >= 0, returned as float."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name}: must be a number >= 0, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
    return v


def count(name: str, value, least: int = 1) -> int:
    """An integer >= ``least`` (an integral float such as ``256.0`` is accepted)."""
    if isinstance(value, bool):
        raise ValueError(f"{name}: must be an integer >= {least}, got {value!r}")
    if isinstance(value, Integral):
        v = int(value)
    elif isinstance(value, Real) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{name}: must be an integer >= {least}, got {value!r}")
    if v < least:
        raise ValueError(f"{name}: must be >= {least}, got {v}")
    return v
