"""``python -m symbolic`` / ``tilebound``: print bounds, sweep tables, LaTeX notes and plots for any model.

The command line is glue between the models (which derive and evaluate) and the printers (which only
format): it parses the arguments, asks a model for exact values at points, builds
:class:`~symbolic.printing.tables.Table` records of those values and hands them to a printer.

Subcommands::

    list                                   every model with its one-line summary
    show MODEL [--at N=4096 d=64 ...]      formulas; with --at exact values, bytes and the roofline time
    table MODEL --vary N=512,1024 [...]    sweep table with --ratio OTHER and --per EXPR columns
    latex [MODEL ...] [--standalone]       align environments / a complete document
    plot MODEL --vary N=512..8192 -o F     formula curve and executed counts (needs the plot extra)

Bad input (unknown model or hardware, a malformed ``--at``) exits 2 with one line naming the problem.
Heavy modules are imported inside the commands so that ``list`` starts fast.
"""

from __future__ import annotations

import argparse
import re
import sys
from fractions import Fraction
from typing import Mapping, Sequence

__all__ = ["main", "parse_assignments", "parse_vary", "build_parser", "sweep_table", "values_table"]

_PROG = "tilebound"
#: the project's bad-input errors start with the parameter's name: "stages: must be >= 1, got 0"
_BAD_INPUT = re.compile(r"^[A-Za-z_][\w.]*: ")


class UsageError(Exception):
    """Bad command-line input; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print the usage block; we print one line
        raise UsageError(f"{self.prog.split()[-1] if ' ' in self.prog else 'usage'}: {message}")


# ----------------------------------------------------------------------------------- argument values
def parse_number(name: str, text: str):
    """``4096``, ``4_096``, ``2**12``, ``2^12``, ``7/10``, ``0.5``, ``1e-9`` -> int or exact Fraction."""
    t = text.strip().replace("_", "")
    for op in ("**", "^"):
        if op in t:
            base, _, exp = t.partition(op)
            try:
                b, e = int(base), int(exp)
            except ValueError:
                break
            if e < 0 or e > 4096:
                raise UsageError(f"{name}: exponent out of range in {text!r}")
            return b ** e
    try:
        return int(t)
    except ValueError:
        pass
    mantissa, e, exponent = t.lower().partition("e")
    if e and exponent.lstrip("+-").isdigit() and int(exponent.lstrip("+-")) > 4096:
        raise UsageError(f"{name}: exponent out of range in {text!r}")
    try:
        v = Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"{name}: expected a number, got {text!r}") from None
    return v.numerator if v.denominator == 1 else v


def parse_assignments(items: Sequence[str] | None, option: str = "at") -> dict:
    """``["N=4096", "d=64"]`` -> ``{"N": 4096, "d": 64}`` (exact numbers)."""
    out: dict = {}
    for item in items or ():
        for part in item.split(","):
            name, eq, value = part.partition("=")
            name = name.strip()
            if not eq or not name or not value.strip():
                raise UsageError(f"{option}: expected NAME=VALUE, got {part!r}")
            out[name] = parse_number(name, value)
    return out


def parse_vary(items: Sequence[str] | None) -> dict:
    """``["N=512,1024", "M=8192..65536"]`` -> ``{"N": [512, 1024], "M": [8192, 16384, 32768, 65536]}``.
    ``A..B`` doubles from A up to B (inclusive).  ``N,N_k=...`` ties parameters: they take the same
    values together (key ``"N,N_k"``)."""
    out: dict = {}
    for item in items or ():
        name, eq, values = item.partition("=")
        name = ",".join(n.strip() for n in name.split(","))
        if not eq or not all(name.split(",")) or not values.strip():
            raise UsageError(f"vary: expected NAME=V1,V2,... or NAME=A..B, got {item!r}")
        vals = []
        for part in values.split(","):
            if ".." in part:
                lo_s, _, hi_s = part.partition("..")
                lo, hi = parse_number(name, lo_s), parse_number(name, hi_s)
                if not lo > 0 or hi < lo:
                    raise UsageError(f"{name}: range {part!r} must satisfy 0 < A <= B")
                v = lo
                while v <= hi:
                    vals.append(v)
                    v *= 2
            else:
                vals.append(parse_number(name, part))
        out[name] = vals
    return out


# ----------------------------------------------------------------------------------- lookups
def _model(name: str):
    from . import registry
    return registry.get(name)          # ValueError "model: unknown model ...; did you mean ..."


def _models(patterns: Sequence[str]) -> list:
    from . import registry
    if not patterns:
        return [registry.get(n) for n in registry.names()]
    out = []
    for p in patterns:
        hits = registry.select([p])
        if not hits:
            registry.get(p)            # raises with the nearest names
        out += [registry.get(n) for n in hits if n not in [m.name for m in out]]
    return out


def _hardware(name: str):
    from .hardware import get_hardware
    return get_hardware(name)          # ValueError "hw: unknown hardware ..."


def _dtype_bytes(name: str) -> int:
    from .roofline import dtype_bytes       # the one table of element sizes
    return dtype_bytes(name)                # ValueError "dtype: unknown dtype ..."


def _is_bytes_unit(unit: str) -> bool:
    return unit in ("B", "bytes", "byte")


def _is_elements_unit(unit: str) -> bool:
    return unit in ("elements", "element")


# ----------------------------------------------------------------------------------- computations (glue)
def _point(model, at: Mapping) -> dict:
    """The model's full point: ``at`` restricted to its parameters plus its defaults (validated)."""
    names = [p.name for p in model.params]
    missing = [n for n in names if n not in at and n not in model.defaults]
    if missing:        # name every one at once: the model itself stops at the first
        raise UsageError(f"{missing[0]}: value missing for {model.name}, which has no default for "
                         f"{', '.join(missing)}; give them with --at (e.g. --at {' '.join(f'{n}=...' for n in missing)})")
    return model.check_point({k: v for k, v in at.items() if k in names})


def _check_names(model, assignments: Mapping, others=()) -> None:
    known = {p.name for m in (model, *others) for p in m.params}
    for k in assignments:
        if k not in known:
            raise ValueError(f"{k}: not a parameter of {model.name} (parameters: {', '.join(p.name for p in model.params)})")


def _roofline(model, point, hw, dtype: str, copies: int = 1):
    """The roofline record, or the reason there is none (a model without flops and element counts,
    or a dtype without a tensor-core peak in the hardware table)."""
    q = model.all_quantities
    if not ({"flops", "total"} <= set(q) and _is_elements_unit(model.unit("total"))):
        return None
    from .roofline import roofline
    try:
        return roofline(model, point, hw, dtype, copies)
    except ValueError as exc:
        return f"no roofline: {exc}"


def _per_expression(model, text: str):
    """``--per`` argument -> a SymPy expression in the model's parameters.  ``theta`` / ``leading``
    name the model's own Θ class / leading term."""
    import sympy as sp
    from sympy.parsing.sympy_parser import (convert_xor, implicit_multiplication, parse_expr,
                                            standard_transformations)

    local = {p.name: p for p in model.params}
    key = text.strip().lower()
    if key in ("theta", "leading"):
        e = model.theta() if key == "theta" else model.leading()
        foreign = _foreign_symbols(model, e)
        if foreign:      # e.g. the causal models' asymptotics, taken of their divisible form in B
            from .printing.text import to_text
            raise UsageError(f"per: the {key} of {model.name}, {to_text(e)}, is in {', '.join(foreign)}, not its "
                             f"parameters; give --per as an expression in {', '.join(local)}")
        return e
    try:
        e = parse_expr(text, local_dict=local,
                       transformations=standard_transformations + (implicit_multiplication, convert_xor))
    except Exception:  # noqa: BLE001  any parse failure is a usage error naming the text
        raise UsageError(f"per: cannot read {text!r} as an expression") from None
    e = sp.sympify(e)
    if e.is_zero or e.has(sp.zoo, sp.oo, sp.S.NegativeInfinity, sp.nan):
        raise UsageError(f"per: {text!r} is {e}; divide by a nonzero finite expression")
    unknown = _foreign_symbols(model, e)
    if unknown:
        raise UsageError(f"per: {unknown[0]} is not a parameter of {model.name} "
                         f"(parameters: {', '.join(local)})")
    return e


def _foreign_symbols(model, expr) -> list[str]:
    """Names of the symbols of ``expr`` that are not parameters of ``model`` (sorted)."""
    return sorted(s.name for s in expr.free_symbols if s not in set(model.params))


def _ratio(a, b):
    if b == 0:
        return None
    r = Fraction(a) / Fraction(b)
    return r.numerator if r.denominator == 1 else r


def _tied(key: str) -> list[str]:
    """The parameter names one ``--vary`` sets together (``"N,N_k"`` -> ``["N", "N_k"]``)."""
    return key.split(",")


def _varied(vary: Mapping[str, list]) -> set:
    return {n for key in vary for n in _tied(key)}


def _product(vary: Mapping[str, list]) -> list[dict]:
    """Points of the product of the groups; returns ``{key: value}`` per point (expand with _expand)."""
    points: list[dict] = [{}]
    for key, values in vary.items():
        points = [{**p, key: v} for p in points for v in values]
    return points


def _expand(vp: Mapping) -> dict:
    return {n: v for key, v in vp.items() for n in _tied(key)}


def sweep_table(model, vary: Mapping[str, list], at: Mapping, quantities: Sequence[str] = (),
                ratios: Sequence = (), pers: Sequence[str] = (), dtype: str | None = None, inverse: bool = False):
    """Evaluate ``model`` (and each model in ``ratios``) over the product of ``vary`` at ``at``; return a
    :class:`Table` of exact values with ratio columns ``MODEL ÷ OTHER`` (``OTHER ÷ MODEL`` when
    ``inverse``) and ``q ÷ EXPR``."""
    from .evaluate import compile_exact
    from .printing.tables import Measure, Table

    _check_names(model, {**{n: 0 for n in _varied(vary)}, **at}, ratios)
    qs = list(quantities) or list(model.all_quantities)
    for q in qs:
        _quantity(model, q)
    main = qs[0] if quantities else model.main_quantity
    per_exprs = [_per_expression(model, p) for p in pers]
    per_fns = [compile_exact(e) for e in per_exprs]
    nbytes = _dtype_bytes(dtype) if dtype else None

    headers: list = [" = ".join(_tied(k)) for k in vary] + qs
    if nbytes and _is_elements_unit(model.unit(main)):
        headers.append(f"{main} bytes ({dtype})")
    for other in ratios:
        a, b = (other.name, model.name) if inverse else (model.name, other.name)
        headers += [f"{other.name} {_other_quantity(other, main)}", f"{a} ÷ {b}"]
    headers += [(f"{main} ÷ ", e) for e in per_exprs]

    rows = []
    for vp in _product(vary):
        full = {**at, **_expand(vp)}
        pt = _point(model, full)
        vals = model.evaluate(**pt)
        row: list = list(vp.values()) + [_cell(vals[q], model.unit(q)) for q in qs]
        if nbytes and _is_elements_unit(model.unit(main)):
            row.append(Measure(vals[main] * nbytes, "B"))
        for other in ratios:
            ov = other.evaluate(_other_quantity(other, main), **_point(other, full))
            row += [ov, _ratio(ov, vals[main]) if inverse else _ratio(vals[main], ov)]
        for fn in per_fns:
            row.append(_ratio(vals[main], fn(**{n: pt[n] for n in fn.names})))
        rows.append(tuple(row))
    first = _expand({k: vs[0] for k, vs in vary.items()})
    fixed = {k: v for k, v in _point(model, {**at, **first}).items() if k not in first}
    caption = f"{model.name}: {', '.join(qs)}"
    if fixed:
        caption += " at " + ", ".join(f"{k} = {v}" for k, v in fixed.items())
    units = [f"{q} in {model.unit(q)}" for q in qs if model.unit(q) not in ("", "1")]
    notes = (f"units: {', '.join(units)}",) if units else ()
    return Table(tuple(headers), tuple(rows), caption=caption, notes=notes)


def _cell(value, unit: str):
    """Counts stay exact integers; times show in human units (``101 µs``)."""
    from .printing.tables import Measure
    return Measure(value, "s") if unit == "s" else value


def _quantity(model, q: str) -> str:
    if q not in model.all_quantities:
        raise ValueError(f"quantity: {model.name} has no quantity {q!r}; it has {', '.join(model.all_quantities)}")
    return q


def _other_quantity(other, main: str) -> str:
    return main if main in other.all_quantities else other.main_quantity


def values_table(model, point: Mapping, dtype: str):
    """Exact values of every quantity at ``point``, in human units, and element counts in bytes."""
    from .printing.tables import Exact, Measure, Table

    nbytes = _dtype_bytes(dtype)
    vals = model.evaluate(**point)
    any_elements = any(_is_elements_unit(model.unit(q)) for q in vals)
    rows = []
    for q, v in vals.items():
        unit = model.unit(q)
        row = [q, Exact(v), "" if unit == "1" else unit]
        if any_elements:
            row.append(v * nbytes if _is_elements_unit(unit) else None)
        if _is_elements_unit(unit):
            row.append(Measure(v * nbytes, "B"))
        elif _is_bytes_unit(unit):
            row.append(Measure(v, "B"))
        elif unit in ("s", "FLOP") or unit.endswith("/s"):
            row.append(Measure(v, unit))
        elif isinstance(v, Fraction):
            row.append(v)
        else:
            row.append(None)
        rows.append(tuple(row))
    headers = ("quantity", "exact", "unit") + ((f"bytes ({dtype})",) if any_elements else ()) + ("≈",)
    return Table(headers, tuple(rows))


def roofline_table(rl, hw, dtype: str, copies: int = 1):
    """One row: FLOPs, bytes, both times, the roofline time and which side bounds it."""
    from .printing.tables import Measure, Table
    return Table(("hardware", "FLOPs", "bytes", "compute time", "memory time", "roofline time", "bound by"),
                 ((hw.name, rl.flops, Measure(rl.bytes, "B"), Measure(rl.t_compute, "s"), Measure(rl.t_memory, "s"),
                   Measure(rl.time, "s"), rl.bound),),
                 caption=(f"{copies:,} independent copies (batch x heads), " if copies != 1 else "")
                 + f"roofline on {hw.name}, {dtype}: peak {_si(rl.peak, 'FLOP/s')}, "
                         f"HBM {_si(rl.bandwidth, 'B/s', 4)}, intensity {_si(rl.intensity, 'FLOP/B')}")


def _si(x, unit: str, digits: int = 3) -> str:
    from .printing.human import fmt_si
    return fmt_si(x, unit, digits)


def default_sweep(model):
    """The sweep a document shows for a model: its first integer parameter at 1/4x..4x its default
    (the points the model accepts), the rest at their defaults; ``None`` when the model lacks a default
    for some parameter or accepts fewer than two of the points."""
    names = [p.name for p in model.params]
    if not names or any(n not in model.defaults for n in names):
        return None
    first = next((p for p in model.params if p.is_integer), None)
    if first is None:
        return None
    v0 = int(model.defaults[first.name])
    values = []
    for v in sorted({max(1, v0 * 2 ** k // 4) for k in range(5)}):
        try:
            model.check_point({first.name: v})
        except ValueError:
            continue
        values.append(v)
    return {first.name: values} if len(values) >= 2 else None


# ----------------------------------------------------------------------------------- commands
def cmd_list(args, out) -> int:
    from . import registry
    rows = registry.summaries()
    if args.format == "text":
        width = max((len(n) for n, _ in rows), default=0)
        for name, summary in rows:
            out.write(f"{name:<{width}}  {summary}\n")
        return 0
    from .printing.tables import Table, render
    out.write(render(Table(("model", "summary"), tuple(rows)), args.format) + "\n")
    return 0


def cmd_show(args, out) -> int:
    from .printing.latex import escape, model_to_latex
    from .printing.tables import render
    from .printing.text import model_to_text

    at = parse_assignments(args.at)
    hw = _hardware(args.hw)
    _dtype_bytes(args.dtype)
    if args.copies < 1:
        raise UsageError(f"copies: must be >= 1, got {args.copies}")
    model = _model(args.model)
    _check_names(model, at)
    point = _point(model, at) if args.at else None
    fmt = _target(args.format, out)
    parts = []
    if fmt in ("text", "ascii"):
        parts.append(model_to_text(model, unicode=fmt == "text"))
    elif fmt == "markdown":
        parts.append(f"## `{model.name}`\n\n{model.summary}\n\n$$\n{model_to_latex(model, 'aligned')}\n$$")
    else:
        parts.append(f"% {model.name}: {escape(model.summary)}\n{model_to_latex(model, 'align*')}")
    if point is not None:
        where = ", ".join(f"{k} = {v}" for k, v in point.items())
        vt = values_table(model, point, args.dtype)
        vt = type(vt)(vt.headers, vt.rows, caption=f"at {where}")
        parts.append(render(vt, fmt))
        rl = _roofline(model, point, hw, args.dtype, args.copies)
        if isinstance(rl, str):
            parts.append(escape(rl) if fmt == "latex" else rl)
        elif rl is not None:
            parts.append(render(roofline_table(rl, hw, args.dtype, args.copies), fmt))
    out.write("\n\n".join(parts) + "\n")
    return 0


def cmd_table(args, out) -> int:
    from .printing.tables import render

    vary = parse_vary(args.vary)
    at = parse_assignments(args.at)
    model = _model(args.model)
    others = [_model(n) for n in args.ratio or ()]
    table = sweep_table(model, vary, at, args.quantity or (), others, args.per or (), args.dtype, args.inverse)
    out.write(render(table, _target(args.format, out)) + "\n")
    return 0


def cmd_latex(args, out) -> int:
    from .printing.document import ModelEntry, to_document
    from .printing.latex import model_to_latex
    from .printing.tables import render

    vary = parse_vary(args.vary)
    at = parse_assignments(args.at)
    models = _models(args.models)
    known = {p.name for m in models for p in m.params}
    for name in [*_varied(vary), *at]:
        if name not in known:
            which = ", ".join(m.name for m in models) if len(models) <= 3 else f"any of the {len(models)} models"
            raise UsageError(f"{name}: not a parameter of {which}")
    entries = []
    for m in models:
        tables = []
        sweep = ({k: v for k, v in vary.items() if set(_tied(k)) <= {p.name for p in m.params}} if vary
                 else (default_sweep(m) if args.standalone and not args.no_tables else None))
        if sweep:
            tables.append(sweep_table(m, sweep, {k: v for k, v in at.items() if k in {p.name for p in m.params}}))
        entries.append(ModelEntry(m, tuple(tables)))
    if args.standalone:
        text = to_document(entries, title=args.title)
    else:
        chunks = []
        for e in entries:
            chunks.append(f"% {e.model.name}\n{model_to_latex(e.model, 'align')}")
            chunks += [render(t, "latex") for t in e.tables]
        text = "\n\n".join(chunks)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as exc:
            raise _cannot_write(args.output, exc) from None
    else:
        out.write(text + "\n")
    return 0


def cmd_plot(args, out) -> int:
    from .evaluate import compile_exact
    from .printing import plot as plotting
    from .printing.notation import Theta
    from .printing.text import to_text

    vary = parse_vary(args.vary)
    if len(vary) != 1:
        raise UsageError("vary: plot takes exactly one --vary NAME=... (tie parameters with N,N_k=...)")
    (xkey, xs), = vary.items()
    at = parse_assignments(args.at)
    models = [_model(n) for n in args.models]
    for m in models:
        _check_names(m, {**{n: 0 for n in _tied(xkey)}, **at}, [o for o in models if o is not m])
    plotting.check_image_path(args.output)
    series, fixed = [], {}
    dense = _dense(xs)
    for m in models:
        q = _quantity(m, args.quantity or m.main_quantity)
        pts = [_point(m, {**at, **_expand({xkey: x})}) for x in dense]
        theta, lead = _asymptotics(m) if q == m.main_quantity else (None, None)
        series.append(plotting.Series(f"{m.name}: formula" + (f" ∈ {to_text(Theta(theta))}" if theta else ""),
                                      dense, [m.evaluate(q, **p) for p in pts], "line"))
        if lead is not None and not args.no_leading and _foreign_symbols(m, lead):
            sys.stderr.write(f"note: the leading term of {m.name} is in {', '.join(_foreign_symbols(m, lead))}, "
                             "not its parameters; no dashed guide\n")
        elif lead is not None and lead != m[q] and not args.no_leading:
            lead_fn = compile_exact(lead)
            series.append(plotting.Series(f"{m.name}: leading term ~ {to_text(lead)}", dense,
                                          [lead_fn(**{n: p[n] for n in lead_fn.names}) for p in pts], "dashed"))
        if not args.no_executed:
            ex = _executed(m, q, xkey, xs, at)
            if ex is not None:
                series.append(plotting.Series(f"{m.name}: executed", ex[0], ex[1], "points"))
        fixed.update({k: v for k, v in pts[0].items() if k not in _tied(xkey)})
    q0 = args.quantity or models[0].main_quantity
    unit = models[0].unit(q0)
    title = ", ".join(m.name for m in models)
    if fixed:
        title += "\n" + ", ".join(f"{k} = {v if isinstance(v, int) else f'{float(v):g}'}" for k, v in fixed.items())
    ylabel = q0 + (f" ({unit})" if unit and unit != "1" else "")
    try:
        plotting.plot_series(series, xlabel=" = ".join(_tied(xkey)), ylabel=ylabel, title=title, path=args.output,
                             loglog=not args.linear)
    except OSError as exc:
        raise _cannot_write(args.output, exc) from None
    out.write(f"wrote {args.output}\n")
    return 0


def _cannot_write(path: str, exc: OSError) -> UsageError:
    """A missing folder or no permission, as one line naming ``output``."""
    return UsageError(f"output: cannot write {path!r}: {exc.strerror or exc}")


def _dense(xs: Sequence) -> list:
    """The vary values plus geometric in-between points, for a smooth formula curve (integers)."""
    lo, hi = min(xs), max(xs)
    if isinstance(lo, Fraction) or isinstance(hi, Fraction) or lo <= 0:
        return sorted(set(xs))
    pts = set(xs)
    if hi > lo:
        n = 48
        ratio = (hi / lo) ** (1 / n)
        pts |= {int(round(lo * ratio ** k)) for k in range(n + 1)}
    return sorted(p for p in pts if lo <= p <= hi)


def _asymptotics(model):
    """``(Θ class, leading term)`` of the main quantity, or ``(None, None)`` when the model cannot derive
    them (the plot then goes without the class in its legend and without the dashed guide)."""
    try:
        return model.theta(), model.leading()
    except ValueError:              # asymptotics.py: a term that is not a monomial over the regime
        return None, None


def _executed(model, quantity, xkey, xs, at):
    """Executed counts from the verify layer's check of the same name, or ``None`` (with a note on
    stderr) when there is none or it fails at a point.  An executor reporting ``reads`` and ``writes``
    gives ``total`` as their sum (the Model's own definition of ``total``)."""
    try:
        from verify.registry import select
    except ImportError:
        return None
    checks = [c for c in select(model.name) if c.name == model.name]
    if not checks:
        sys.stderr.write(f"note: no executor check named {model.name}; plotting the formula only\n")
        return None
    got_x, got_y = [], []
    for x in xs:
        pt = _point(model, {**at, **_expand({xkey: x})})
        try:
            got = dict(checks[0].execute(pt))
        except KeyError as exc:   # the check names its points otherwise (gemm.tiled: M, N, K, BM, ...)
            sys.stderr.write(f"note: the {model.name} check's executor does not accept the model's point "
                             f"(KeyError: {exc}); plotting the formula only\n")
            return None
        except Exception as exc:  # noqa: BLE001
            sys.stderr.write(f"note: {model.name} executor failed at {pt}: {type(exc).__name__}: {exc}\n")
            continue
        if "total" not in got and "reads" in got and "writes" in got:
            got["total"] = got["reads"] + got["writes"]
        if quantity not in got:
            sys.stderr.write(f"note: the {model.name} executor reports no {quantity!r} "
                             f"(it reports {', '.join(got)}); plotting the formula only\n")
            return None
        got_x.append(x)
        got_y.append(got[quantity])
    return (got_x, got_y) if got_x else None


def _unicode_ok(stream) -> bool:
    enc = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
    return enc.startswith("utf")


def _target(fmt: str, stream) -> str:
    """The renderer's target for ``--format``: ``text`` becomes ``ascii`` on a stream that cannot
    encode Unicode (formulas as ``ceil(N/B_c)``, times as ``us``)."""
    return "ascii" if fmt == "text" and not _unicode_ok(stream) else fmt


# ----------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=_PROG, description="Exact cost formulas of tiled GPU algorithms: print, tabulate, typeset, plot.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("list", help="every model with a one-line description")
    s.add_argument("--format", choices=("text", "markdown", "latex"), default="text")
    s.set_defaults(run=cmd_list)

    at_help = "parameter values NAME=VALUE (space- or comma-separated; 2**12, 7/10 and 1e-9 are exact)"
    s = sub.add_parser("show", help="formulas; with --at exact values and the roofline time")
    s.add_argument("model")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--dtype", default="fp16", help="element type for bytes and the tensor peak (fp16, bf16, fp8, fp32; default fp16)")
    s.add_argument("--hw", default="A100", help="hardware for the roofline (default A100)")
    s.add_argument("--copies", type=int, default=1, metavar="K",
                   help="roofline of K independent instances, e.g. batch x heads (default 1)")
    s.add_argument("--format", choices=("text", "markdown", "latex"), default="text")
    s.set_defaults(run=cmd_show)

    s = sub.add_parser("table", help="sweep table with ratio columns")
    s.add_argument("model")
    s.add_argument("--vary", nargs="+", action="extend", required=True, metavar="NAME=V1,V2|A..B",
                   help="values to sweep (A..B doubles from A to B; N,N_k=... ties parameters); "
                        "several --vary sweep their product")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--quantity", "-q", action="append", help="quantities to show (default: all)")
    s.add_argument("--ratio", action="append", metavar="OTHER", help="add OTHER's value and MODEL ÷ OTHER")
    s.add_argument("--inverse", action="store_true", help="ratio columns as OTHER ÷ MODEL")
    s.add_argument("--per", action="append", metavar="EXPR",
                   help="add the main quantity ÷ EXPR (e.g. 'N^2 d^2/M'; 'theta' = the model's Θ class)")
    s.add_argument("--dtype", default=None, help="add the main quantity in bytes of this element type")
    s.add_argument("--format", choices=("text", "markdown", "latex"), default="text")
    s.set_defaults(run=cmd_table)

    s = sub.add_parser("latex", help="LaTeX align environments; --standalone for a complete document")
    s.add_argument("models", nargs="*", metavar="MODEL", help="names or glob patterns (default: all)")
    s.add_argument("--standalone", action="store_true", help="a complete document that compiles as it is")
    s.add_argument("--vary", nargs="+", action="extend", metavar="NAME=V1,V2|A..B", help="add a sweep table")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--no-tables", action="store_true", help="no default sweep tables in --standalone")
    s.add_argument("--title", default="tilebound: cost formulas of tiled GPU algorithms")
    s.add_argument("-o", "--output", help="write to this file instead of standard output")
    s.set_defaults(run=cmd_latex)

    s = sub.add_parser("plot", help="formula curve and executed counts, log-log (needs the plot extra)")
    s.add_argument("models", nargs="+", metavar="MODEL")
    s.add_argument("--vary", nargs="+", action="extend", required=True, metavar="NAME=V1,V2|A..B")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--quantity", "-q", default=None, help="quantity to plot (default: each model's main one)")
    s.add_argument("--no-executed", action="store_true", help="formula only; do not run the executors")
    s.add_argument("--no-leading", action="store_true", help="omit the dashed leading-term curve")
    s.add_argument("--linear", action="store_true", help="linear axes instead of log-log")
    s.add_argument("-o", "--output", required=True, help="image file (.png, .pdf, .svg)")
    s.set_defaults(run=cmd_plot)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    out = sys.stdout
    if not _unicode_ok(out) and hasattr(out, "reconfigure"):
        out.reconfigure(errors="replace")   # an ASCII terminal gets '?' for ⌈ ⌉, not a traceback
    try:
        args = build_parser().parse_args(argv)
        return args.run(args, out)
    except UsageError as exc:
        sys.stderr.write(f"{_PROG}: {exc}\n")
        return 2
    except ValueError as exc:
        if not _BAD_INPUT.match(str(exc)):  # not the library's "name: problem" convention: a bug, show it
            raise
        sys.stderr.write(f"{_PROG}: {exc}\n")
        return 2
    except SystemExit as exc:               # --help
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:                 # `tilebound list | head`: stop quietly
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
