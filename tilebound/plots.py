"""The series a plot draws: each model's formula as a curve (its Θ class in the legend), its leading term
dashed, and its executor's counts as points (:mod:`tilebound.executed`), with the axis labels, title and
notes for stderr.  :func:`printing.plot.plot_series` draws them.

A plot places values as floats: a varied value, or a value of the plotted quantity, beyond a float's range
(about ``1.8e308``) is refused up front as :class:`~base.errors.BadInput` naming the varied parameter
(``tilebound table`` prints such values exactly).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping, Sequence

from base.errors import BadInput

from .asymptotics import asymptotics, foreign_symbols
from .numbers import expand, refuse_overlap, tied
from .report import check_names, point, quantity_of

__all__ = ["dense", "plot_series", "FLOAT_MAX"]

#: the largest magnitude a plot can place (a float's)
FLOAT_MAX = 1.7976931348623157e308


def _drawable(v) -> bool:
    """Is ``v`` (an int or Fraction) within a float's range, and not a nonzero value that rounds to 0?"""
    try:
        f = float(v)
    except OverflowError:
        return False
    return abs(f) <= FLOAT_MAX and (f != 0 or v == 0)


def _refuse_undrawable(name: str, what: str, values, at_points=None) -> None:
    from printing.human import fmt_real, fmt_sci

    def shown(v):
        return fmt_sci(v) if abs(v) >= 10 ** 15 else fmt_real(v)
    for i, v in enumerate(values):
        if not _drawable(v):
            where = f" at {name} = {shown(at_points[i])}" if at_points is not None else ""
            raise BadInput(name, f"{what} {shown(v)}{where} is beyond a float's range (about 1.8e308), which a "
                                 "plot draws; plot smaller values, or print them exactly with tilebound table")


def dense(xs: Sequence) -> list:
    """The vary values plus geometric in-between points, for a smooth formula curve (integers; the values
    must lie within a float's range, as :func:`plot_series` checks first)."""
    lo, hi = min(xs), max(xs)
    if isinstance(lo, Fraction) or isinstance(hi, Fraction) or lo <= 0:
        return sorted(set(xs))
    pts = set(xs)
    if hi > lo:
        n = 48
        ratio = (hi / lo) ** (1 / n)
        pts |= {int(round(x)) for x in (lo * ratio ** k for k in range(n + 1)) if math.isfinite(x)}
    return sorted(p for p in pts if lo <= p <= hi)


def plot_series(models: Sequence, xkey: str, xs: Sequence, at: Mapping, quantity: str | None = None,
                leading: bool = True, executed: bool = True, executed_up_to=None):
    """The series of a plot, its axis labels and title, and notes for stderr:
    ``(series, xlabel, ylabel, title, notes)``.  Each model gives its formula as a curve (its Θ class in
    the legend), its leading term dashed, and its executor's counts as points (:mod:`tilebound.executed`;
    ``executed_up_to``: an x beyond which the executor is not run)."""
    from symbolic.evaluate import compile_exact
    from printing.human import fmt_real
    from printing.notation import Theta
    from printing.plot import Series
    from printing.text import to_text

    refuse_overlap(at, {xkey: xs})
    _refuse_undrawable(xkey, "the value", xs)
    for m in models:
        check_names([*tied(xkey), *at], [m, *[o for o in models if o is not m]])
    series, notes, fixed = [], [], {}
    grid = dense(xs)
    for m in models:
        q = quantity_of(m, quantity or m.main_quantity)
        pts = [point(m, {**at, **expand({xkey: x})}) for x in grid]
        theta, lead = asymptotics(m, q)
        ys = [m.evaluate(q, **p) for p in pts]
        _refuse_undrawable(xkey, f"{m.name}'s {q}", ys, grid)
        series.append(Series(f"{m.name}: formula" + (f" ∈ {to_text(Theta(theta))}" if theta is not None else ""),
                             grid, ys, "line"))
        if leading and lead is not None:
            foreign = foreign_symbols(m, lead)
            if foreign:
                notes.append(f"the leading term of {m.name} is in {', '.join(foreign)}, not its parameters; "
                             "no dashed guide")
            elif lead != m[q]:
                fn = compile_exact(lead)
                guide = [fn(**{n: p[n] for n in fn.names}) for p in pts]
                _refuse_undrawable(xkey, f"{m.name}'s leading term", guide, grid)
                series.append(Series(f"{m.name}: leading term ~ {to_text(lead)}", grid, guide, "dashed"))
        if executed:
            from .executed import executed_points
            run = [x for x in xs if executed_up_to is None or x <= executed_up_to]
            ex_x, ex_y, ex_notes = executed_points(m, q, [(x, point(m, {**at, **expand({xkey: x})})) for x in run])
            if len(run) < len(xs):
                ex_notes.append(f"{m.name}: executor not run beyond {xkey} = {executed_up_to} (as asked); "
                                "formula only there")
            notes += ex_notes
            if ex_x:
                series.append(Series(f"{m.name}: executed", ex_x, ex_y, "points"))
        fixed.update({k: v for k, v in pts[0].items() if k not in tied(xkey)})
    q0 = quantity or models[0].main_quantity
    unit = models[0].unit(q0)
    title = ", ".join(m.name for m in models)
    if fixed:
        title += "\n" + ", ".join(f"{k} = {v if isinstance(v, int) else fmt_real(v)}" for k, v in fixed.items())
    ylabel = q0 + (f" ({unit})" if unit and unit != "1" else "")
    return series, " = ".join(tied(xkey)), ylabel, title, notes
