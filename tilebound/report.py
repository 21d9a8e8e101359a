"""Tables of a model's exact values: sweep tables, the values and roofline tables of ``show``, and the
default sweep a document shows.

A model derives and evaluates (:mod:`symbolic`); a printer formats (:mod:`printing`); this module asks
models for exact values at points and arranges them as :class:`~printing.tables.Table` records.  What a
user types is read elsewhere: numbers, ``--at`` and ``--vary`` by :mod:`tilebound.numbers`, ``--per``
expressions by :mod:`tilebound.per`; plot series are built by :mod:`tilebound.plots`.

Every bad input is :class:`~base.errors.BadInput` naming what was wrong; unknown names come with the
nearest known ones (:func:`base.discovery.did_you_mean`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping, Sequence

from base.discovery import did_you_mean
from base.errors import BadInput

from .numbers import expand, refuse_overlap, sweep_points, tied, varied

__all__ = ["check_names", "check_values", "quantity_of", "point", "sweep_table", "sweep", "values_table",
           "roofline_of", "roofline_table", "default_sweep", "refuse_lost_sweep"]


# ----------------------------------------------------------------------------------- names
def _param_names(model) -> list[str]:
    return [p.name for p in model.params]


def check_names(names: Iterable[str], models: Sequence, option: str = "at") -> None:
    """Each of ``names`` must be a parameter of at least one of ``models``; :class:`BadInput` naming
    it with the nearest parameter names otherwise."""
    known = list(dict.fromkeys(n for m in models for n in _param_names(m)))
    for name in names:
        if name not in known:
            which = ", ".join(m.name for m in models) if len(models) <= 3 else f"any of the {len(models)} models"
            raise BadInput(name, f"not a parameter of {which}{did_you_mean(name, known)}")


def check_values(values: Mapping, models: Sequence) -> None:
    """Each of ``values`` (``--at``'s) checked by the parameter of that name of every one of ``models`` that has
    it (:meth:`symbolic.params.Param.check`, as :func:`point` checks ``show``'s): ``M=-2**12`` is refused
    naming ``M`` (``must be >= 1, got -4096``) by a command that draws several models (``html``, ``latex``), where
    a model's points are drawn later, or not at all."""
    for m in models:
        names = set(_param_names(m))
        for name, v in values.items():
            if name in names:
                m.param(name).check(v)


def quantity_of(model, q: str) -> str:
    """``q`` when ``model`` has that quantity; :class:`BadInput` naming ``quantity`` otherwise."""
    if q not in model.all_quantities:
        raise BadInput("quantity", f"{model.name} has no quantity {q!r}"
                                   f"{did_you_mean(q, list(model.all_quantities), 'it has')}")
    return q


# ----------------------------------------------------------------------------------- points
def point(model, at: Mapping) -> dict:
    """The model's full point: ``at`` restricted to its parameters plus its defaults, validated by
    each parameter.  Every parameter without a value or default is named at once."""
    names = _param_names(model)
    missing = [n for n in names if n not in at and n not in model.defaults]
    if missing:
        raise BadInput(missing[0], f"value missing for {model.name}, which has no default for "
                                   f"{', '.join(missing)}; give them with --at "
                                   f"(e.g. --at {' '.join(f'{n}=...' for n in missing)})")
    return model.check_point({k: v for k, v in at.items() if k in names})


# ----------------------------------------------------------------------------------- tables
def _ratio(a, b):
    if b == 0:
        return None
    r = Fraction(a) / Fraction(b)
    return r.numerator if r.denominator == 1 else r


def _is_elements(unit: str) -> bool:
    return unit in ("elements", "element")


def _is_bytes(unit: str) -> bool:
    return unit in ("B", "bytes", "byte")


def _cell(value, unit: str):
    """Counts stay exact integers; times show in human units (``101 µs``)."""
    from printing.tables import Measure
    return Measure(value, "s") if unit == "s" else value


def _other_quantity(other, main: str) -> str:
    return main if main in other.all_quantities else other.main_quantity


def sweep_table(model, vary: Mapping[str, list], at: Mapping, quantities: Sequence[str] = (),
                ratios: Sequence = (), pers: Sequence[str] = (), dtype: str | None = None, inverse: bool = False):
    """Evaluate ``model`` (and each model in ``ratios``) over the product of ``vary`` at ``at``; return a
    :class:`~printing.tables.Table` of exact values with ratio columns ``MODEL ÷ OTHER``
    (``OTHER ÷ MODEL`` when ``inverse``) and ``q ÷ EXPR``."""
    from base.dtypes import element_bytes
    from printing.content import joined, point_note, quantity, tied_note
    from printing.tables import Measure, Table
    from symbolic.notes import code, note

    from .per import compile_per, per_expression

    if not vary:
        raise BadInput("vary", "give at least one --vary NAME=V1,V2,...")
    refuse_overlap(at, vary)
    check_names([*varied(vary), *at], [model, *ratios])
    qs = [quantity_of(model, q) for q in quantities] or list(model.all_quantities)
    main = qs[0] if quantities else model.main_quantity
    per_exprs = [per_expression(model, p, main) for p in pers]
    per_fns = [compile_per(e, p) for e, p in zip(per_exprs, pers)]
    from symbolic.roofline import own_bytes
    # a model that states its own bytes is not re-priced at one type (ask for -q bytes instead)
    nbytes = element_bytes(dtype) if dtype and not own_bytes(model) else None
    points = sweep_points(vary)

    headers: list = [tied(k)[0] if len(tied(k)) == 1 else tied_note(model, tied(k)) for k in vary] + qs
    if nbytes and _is_elements(model.unit(main)):
        headers.append(f"{main} bytes ({dtype})")
    for other in ratios:
        a, b = (other.name, model.name) if inverse else (model.name, other.name)
        headers += [f"{other.name} {_other_quantity(other, main)}", f"{a} ÷ {b}"]
    headers += [(f"{main} ÷ ", e) for e in per_exprs]

    rows = []
    for vp in points:
        full = {**at, **expand(vp)}
        pt = point(model, full)
        vals = model.evaluate(**pt)
        row: list = list(vp.values()) + [_cell(vals[q], model.unit(q)) for q in qs]
        if nbytes and _is_elements(model.unit(main)):
            row.append(Measure(vals[main] * nbytes, "B"))
        for other in ratios:
            ov = other.evaluate(_other_quantity(other, main), **point(other, full))
            row += [ov, _ratio(ov, vals[main]) if inverse else _ratio(vals[main], ov)]
        for fn in per_fns:
            row.append(_ratio(vals[main], fn(pt)))
        rows.append(tuple(row))
    first = expand({k: vs[0] for k, vs in vary.items()})
    fixed = {k: v for k, v in point(model, {**at, **first}).items() if k not in first}
    caption = note(code(model.name), ": ") + joined([quantity(q) for q in qs], ", ")     # math as math, the name as code
    if fixed:
        caption += note(" at ") + point_note(model, fixed)
    units = [f"{q} in {model.unit(q)}" for q in qs if model.unit(q) not in ("", "1")]
    notes = [f"units: {', '.join(units)}"] if units else []
    if dtype and own_bytes(model):          # as show says it: --dtype is never dropped without a word
        notes.append(f"bytes: the model's own, each tensor at its own element type; elements are not re-priced "
                     f"at --dtype {dtype} (its bytes: -q bytes)")
    elif dtype and not _is_elements(model.unit(main)):
        notes.append(f"--dtype {dtype}: {main} is in {model.unit(main) or 'no unit'}, not elements, so no bytes "
                     "column (the first -q quantity is the one priced)")
    return Table(tuple(headers), tuple(rows), caption=caption, notes=tuple(notes))


def sweep(model, vary: Mapping[str, list], at: Mapping | None = None, **options):
    """:func:`sweep_table` with ``at`` optional: ``sweep(model, {"N": [512, 1024]}) -> Table``."""
    return sweep_table(model, vary, at or {}, **options)


def values_table(model, pt: Mapping, dtype: str = "fp16"):
    """Exact values of every quantity at ``pt``, in human units.  For a model that counts elements only,
    element counts are also shown in bytes at ``dtype`` (the column says which); a model that states its own
    ``bytes`` (each tensor at its own type) is not re-priced: its byte quantities are the bytes."""
    from base.dtypes import element_bytes
    from printing.tables import Exact, Measure, Table
    from symbolic.roofline import own_bytes

    nbytes = element_bytes(dtype)
    vals = model.evaluate(**pt)
    priced = not own_bytes(model) and any(_is_elements(model.unit(q)) for q in vals)
    rows = []
    for q, v in vals.items():
        unit = model.unit(q)
        row = [q, Exact(v), "" if unit == "1" else unit]
        if priced:
            row.append(v * nbytes if _is_elements(unit) else None)
        if _is_elements(unit) and priced:
            row.append(Measure(v * nbytes, "B"))
        elif _is_bytes(unit):
            row.append(Measure(v, "B"))
        elif unit in ("s", "FLOP") or unit.endswith("/s"):
            row.append(Measure(v, unit))
        elif isinstance(v, Fraction):
            row.append(v)
        else:
            row.append(None)
        rows.append(tuple(row))
    headers = ("quantity", "exact", "unit") + ((f"bytes (all at {dtype})",) if priced else ()) + ("≈",)
    notes = (("bytes: the model's own, each tensor at its own element type; elements are not re-priced",)
             if own_bytes(model) else ())
    return Table(headers, tuple(rows), notes=notes)


def roofline_of(model, pt: Mapping, hw, dtype: str, copies: int = 1):
    """The roofline record; ``None`` for a model without flops and bytes (its own, or element counts); a
    one-line reason (a string) where the hardware table has no peak for ``dtype``."""
    from symbolic.roofline import own_bytes, roofline
    q = set(model.all_quantities)
    if "flops" not in q or not (own_bytes(model) or ("total" in q and _is_elements(model.unit("total")))):
        return None
    try:
        return roofline(model, pt, hw, dtype, copies)
    except BadInput as exc:
        if exc.param != "dtype":
            raise
        return f"no roofline: {exc}"


def roofline_table(rl, hw, dtype: str, copies: int = 1):
    """One row: FLOPs, bytes, both times, the roofline time and which side bounds it."""
    from printing.human import fmt_si
    from printing.tables import Measure, Table
    return Table(("hardware", "FLOPs", "bytes", "compute time", "memory time", "roofline time", "bound by"),
                 ((hw.name, rl.flops, Measure(rl.bytes, "B"), Measure(rl.t_compute, "s"), Measure(rl.t_memory, "s"),
                   Measure(rl.time, "s"), rl.bound),),
                 caption=(f"{copies:,} independent copies (batch x heads), " if copies != 1 else "")
                 + f"roofline on {hw.name}, {dtype}: peak {fmt_si(rl.peak, 'FLOP/s')}, "
                   f"HBM {fmt_si(rl.bandwidth, 'B/s', 4)}, intensity {fmt_si(rl.intensity, 'FLOP/B')}; "
                   f"bytes: {rl.bytes_from}")


def default_sweep(model, at: Mapping | None = None):
    """The sweep a document shows for a model: its first integer parameter not fixed by ``at`` at
    1/4x..4x its default (the points the model accepts), the rest at ``at`` or their defaults; ``None``
    when some parameter has neither a value nor a default, or fewer than two of the points are accepted."""
    return _default_sweep(model, at)[0]


def _default_sweep(model, at: Mapping | None) -> tuple:
    """``(default_sweep(model, at), the refusal of its first point the model refused, or None)``."""
    at = {k: v for k, v in (at or {}).items() if k in _param_names(model)}
    names = _param_names(model)
    if not names or any(n not in model.defaults and n not in at for n in names):
        return None, None
    first = next((p for p in model.params if p.counts and p.name not in at and p.name in model.defaults), None)
    if first is None:
        return None, None
    v0 = int(model.defaults[first.name])
    values, refusal = [], None
    for v in sorted({max(1, v0 * 2 ** k // 4) for k in range(5)}):
        try:
            model.check_point({**at, first.name: v})
        except BadInput as exc:
            refusal = refusal or exc
            continue
        values.append(v)
    return ({first.name: values}, None) if len(values) >= 2 else (None, refusal)


def refuse_lost_sweep(model, at: Mapping, without: Mapping | None = None) -> None:
    """Refuse ``--at`` values that would leave ``model``'s document (an ``html`` page, ``latex`` notes) without
    the default sweep it has without them - its table, figure and points silently gone - with the model's own
    refusal (:class:`BadInput` naming the parameter: ``H: ...`` for heads that the KV heads do not divide).

    ``at``: the values the sweep is drawn at (``--at``'s, with a page's start point); ``without``: those it is
    drawn at without ``--at``'s.  Each value is first checked by its own parameter (:func:`check_values`)."""
    check_values(at, [model])
    sweep, refusal = _default_sweep(model, at)
    if sweep is not None or refusal is None or default_sweep(model, without) is None:
        return
    if all(n in model.defaults or n in at for n in _param_names(model)):
        point(model, at)             # the point itself refused: its own message, naming the parameter
    raise refusal
