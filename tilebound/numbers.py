"""Numbers a user types, and the ``--at`` and ``--vary`` lists made of them.

A number is exact: ``4096``, ``2**12``, ``7/10``, ``1e-9`` read as a Python int or a
:class:`~fractions.Fraction`, never a float, by :func:`base.typed.parse_number` (the one reader, which a
grader's formula in :mod:`verify` shares; its module docstring states the sign rule and the bounds).

``--at N=4096 d=64`` (or ``N=4096,d=64``) gives ``{"N": 4096, "d": 64}``; ``--vary N=512,1024`` a list of
values and ``--vary N=512..4096`` the doublings from 512 to 4096; ``--vary N,N_k=...`` ties parameters.  A
sweep of more than :data:`MAX_POINTS` points is refused before any point is built.  An integer option
(``tune --budget 10**3``, ``llm --context 2**15``, ``--jobs 4``) is read by the same reader, then range-checked by
:func:`base.validate.integer`: :func:`parse_integer`.  Every bad input is :class:`~base.errors.BadInput` naming
the parameter.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from base import validate
from base.errors import BadInput
from base.typed import MAX_EXPONENT, MAX_MAGNITUDE, parse_number, shown  # noqa: F401  (re-exported)

__all__ = ["parse_number", "parse_integer", "parse_assignments", "parse_vary", "tied", "varied", "expand",
           "sweep_points", "refuse_overlap", "shown", "MAX_POINTS", "MAX_EXPONENT", "MAX_MAGNITUDE"]

#: a sweep (table or plot) of more points than this is refused up front
MAX_POINTS = 10_000


def parse_integer(name: str, text, least: int | None = None, most: int | None = None) -> int:
    """An integer option's value: ``text`` read as ``--at`` reads a number (``100``, ``4_096``, ``2**20``,
    ``10**9``, ``1e3``), then an int in ``[least, most]`` (either end may be ``None``); :class:`BadInput` naming
    ``name`` otherwise (``7/2`` is not an integer, ``-1`` is below a least of 0)."""
    try:
        v = parse_number(name, text)
    except BadInput as exc:
        if not exc.problem.startswith("expected a number"):
            raise                                   # an exponent or a size out of range: its own message
        shown_text = str(text) if len(str(text)) <= 40 else str(text)[:40] + "..."
        raise BadInput(name, f"must be an integer (e.g. 100, 4_096, 2**20, 10**9), got {shown_text!r}") from None
    return validate.integer(name, v, least=least, most=most)


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
