"""The one validator: every parameter of every layer is checked here, and refused with
:class:`~base.errors.BadInput` naming it.

Integer parameters (sizes, blocks, counts) take Python ints, NumPy integers, SymPy Integers, and
``Fraction``\\ s with denominator 1.  A float is taken only when it is integral *and* exact, i.e. its
magnitude is below 2**53, where every integer is a float: ``256.0`` is 256, but ``1e30`` is refused,
because the float's binary value (1000000000000000019884624838656) is not what was meant.  ``bool`` is
never a number here.

Real parameters (times, rates) take the same, plus any finite float (as its exact binary value)
and exact rationals; ``inf``, ``nan``, strings and complex numbers are refused.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from numbers import Integral, Rational, Real
from typing import Optional

from .errors import BadInput

__all__ = ["integer", "real", "positive_int", "time", "real_array", "flag", "seed", "budget", "FLOAT_EXACT_LIMIT",
           "FLOAT_MAX"]

#: beyond this magnitude a float no longer holds every integer exactly
FLOAT_EXACT_LIMIT = 2 ** 53
#: the largest finite float (about 1.8e308): :func:`time` refuses a larger value, naming the parameter
FLOAT_MAX = sys.float_info.max


def _shown(value) -> str:
    """``value`` as a message shows it: a fraction as ``7/10`` (not ``Fraction(7, 10)``), else its repr."""
    return str(value) if isinstance(value, Fraction) else repr(value)


def _is_sympy_number(value) -> bool:
    return type(value).__module__.startswith("sympy") and getattr(value, "is_Number", False)


def integer(name: str, value, least: Optional[int] = 1, most: Optional[int] = None) -> int:
    """``value`` as a Python int in ``[least, most]`` (either end may be ``None``)."""
    if type(value) is int:                   # the usual value, without the ABC checks below (not a bool)
        v = value
    elif isinstance(value, bool):
        raise BadInput(name, f"must be an integer, got {_shown(value)}")
    elif isinstance(value, Integral):
        v = int(value)
    elif _is_sympy_number(value) and value.is_Integer:
        v = int(value)
    elif _is_sympy_number(value):            # a SymPy Float: exactly an integer below 2**53, as a float is
        if not (value.is_Float and value.is_finite and (value % 1).is_zero):
            raise BadInput(name, f"must be an integer, got {value}")
        if abs(value) >= FLOAT_EXACT_LIMIT:
            raise BadInput(name, f"the float {value} is not exact beyond 2**53; give an int (e.g. 10**30, not 1e30)")
        v = int(value)
    elif isinstance(value, Fraction) and value.denominator == 1:
        v = int(value)
    elif isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise BadInput(name, f"must be an integer, got {_shown(value)}")
        if abs(value) >= FLOAT_EXACT_LIMIT:
            raise BadInput(name, f"the float {value!r} is not exact beyond 2**53; give an int "
                                 f"(e.g. 10**30, not 1e30)")
        v = int(value)
    elif isinstance(value, Real) and not isinstance(value, Rational) and hasattr(value, "is_integer") \
            and value.is_integer() and math.isfinite(float(value)) and abs(float(value)) < FLOAT_EXACT_LIMIT:
        v = int(value)                       # NumPy floats
    else:
        raise BadInput(name, f"must be an integer, got {_shown(value)}")
    if least is not None and v < least:
        raise BadInput(name, f"must be >= {least}, got {v}")
    if most is not None and v > most:
        raise BadInput(name, f"must be <= {most}, got {v}")
    return v


def positive_int(name: str, value) -> int:
    """An integer >= 1 (:func:`integer` with ``least=1``)."""
    return integer(name, value, 1)


def real(name: str, value, least=0, strict: bool = True) -> Fraction:
    """``value`` as an exact ``Fraction``, finite, ``> least`` (``>= least`` when not ``strict``)."""
    if isinstance(value, bool) or isinstance(value, (str, bytes, complex)):
        raise BadInput(name, f"must be a real number, got {value!r}")
    if _is_sympy_number(value):
        if not (value.is_Rational):
            if value.is_finite and value.is_real:
                raise BadInput(name, f"must be an exact rational or a float, got {value}")
            raise BadInput(name, f"must be finite, got {value}")
        v = Fraction(int(value.p), int(value.q))
    elif isinstance(value, (Integral, Fraction)):
        v = Fraction(value)
    elif isinstance(value, Real):
        f = float(value)
        if not math.isfinite(f):
            raise BadInput(name, f"must be finite, got {value!r}")
        v = Fraction(f)
    else:
        raise BadInput(name, f"must be a real number, got {value!r}")
    if least is not None:
        if strict and not v > least:
            raise BadInput(name, f"must be > {least}, got {_show(v)}")
        if not strict and v < least:
            raise BadInput(name, f"must be >= {least}, got {_show(v)}")
    return v


def _show(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{float(v):g}"


def time(name: str, value, least: float = 0.0, strict: bool = True) -> float:
    """A finite float ``> least`` (``>= least`` when not ``strict``): the simulators' durations,
    rates and byte sizes, which are measured quantities rather than counts.  ``inf`` and ``nan`` are refused
    as not finite; an exact number beyond the float range (``10**400``) as beyond it, shown short
    (``1.00e+400``), since every simulator computes in float64."""
    if isinstance(value, bool) or isinstance(value, (str, bytes, complex)) or not isinstance(value, Real):
        raise BadInput(name, f"must be a real number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:                    # an exact number (int, Fraction) beyond the float range
        v = math.inf
    if not math.isfinite(v):
        if _finite(value):                   # 10**400 is finite, but no float holds it
            raise BadInput(name, f"{_scientific(value)} is beyond a float's range (about {FLOAT_MAX:.2g}); "
                                 f"give it in other units")
        raise BadInput(name, f"must be finite, got {value!r}")
    if (strict and not v > least) or (not strict and v < least):
        raise BadInput(name, f"must be {'>' if strict else '>='} {least:g}, got {value!r}")
    return v


def _finite(value) -> bool:
    """Whether ``value`` is finite in its own type (an exact rational always is; ``inf`` and ``nan`` are not)."""
    if isinstance(value, Rational) or (_is_sympy_number(value) and value.is_Rational):
        return True
    if _is_sympy_number(value):
        return bool(value.is_finite)
    try:
        import numpy as np
        return bool(np.isfinite(value))
    except (TypeError, ValueError):
        return False


def _scientific(value) -> str:
    """A number too large for a float, shown short: ``1.00e+400`` for ``10**400`` (never its 401 digits)."""
    from decimal import Decimal, localcontext
    if _is_sympy_number(value) and value.is_Rational:
        q = Fraction(int(value.p), int(value.q))
    elif isinstance(value, Rational):
        q = Fraction(int(value.numerator), int(value.denominator))
    else:                                    # a wider float (NumPy longdouble, SymPy Float): its decimal text
        try:
            return format(Decimal(str(value)), ".2e")
        except ArithmeticError:
            text = repr(value)
            return text if len(text) <= 40 else f"{text[:37]}..."
    with localcontext() as ctx:
        ctx.prec = 30
        return format(Decimal(q.numerator) / Decimal(q.denominator), ".2e")


def real_array(name: str, array):
    """``array`` as a NumPy float64 array: float arrays as they are (float32, float16 widened), integer
    arrays (int8, uint8, ...) converted, so that products never wrap around in the array's own type;
    an integer array with a value beyond 2**53 (not exact as a float), and complex, object, string and
    boolean arrays are refused (a complex input would lose its imaginary part with only a warning)."""
    import numpy as np
    a = np.asarray(array)
    if a.dtype.kind not in "fiu":
        raise BadInput(name, f"must be a real (float or integer) array, got dtype {a.dtype}")
    if a.dtype.kind in "iu" and a.size and max(int(a.max()), -int(a.min())) >= FLOAT_EXACT_LIMIT:
        raise BadInput(name, f"holds integers beyond 2**53, which float64 arithmetic cannot hold exactly")
    return a.astype(np.float64, copy=False)


def flag(name: str, value) -> bool:
    """``value`` when it is a ``bool`` (NumPy's ``bool_`` too); anything else - ``'False'``, ``0``, ``None`` - is
    refused, because a truthy string would silently switch the flag on."""
    import numpy as np
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise BadInput(name, f"must be True or False, got {value!r}")


def seed(name: str, value) -> int:
    """A random seed: an int ``>= 0`` (what ``numpy.random.default_rng`` takes), named when it is not."""
    return integer(name, value, least=0)


def budget(name: str, work: int, limit, what: str, keyword: str, remedy: str = "") -> int:
    """``work`` when it is at most ``limit``, else :class:`~base.errors.BadInput` naming ``name``, the work the
    run would take (``what``: its unit, e.g. ``"key blocks (ceil(Nk/Bc))"``), the budget, and how to raise it
    (the ``keyword`` the caller takes; ``remedy``: another way out, e.g. ``"take a larger Bc"``).

    Executors and simulators call it before they allocate or loop, so a runaway size is refused at once
    instead of running for hours or exhausting memory.  ``limit`` is validated as a positive integer
    (naming ``keyword``)."""
    limit = integer(keyword, limit)
    if work > limit:
        raise BadInput(name, f"{work:,} {what} exceed the budget of {limit:,}; "
                             f"{remedy + ', or ' if remedy else ''}raise it with {keyword}=")
    return work
