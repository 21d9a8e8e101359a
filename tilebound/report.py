"""The glue between the models and the printers: command-line values, sweep tables, value and
roofline tables, and the series a plot draws.

A model derives and evaluates (:mod:`symbolic`); a printer formats (:mod:`printing`); this
module asks models for exact values at points and arranges them as
:class:`~printing.tables.Table` records or plot series.  It also reads what a user types:
numbers (``4096``, ``2**12``, ``7/10``, ``1e-9``, all exact), ``--at`` assignments, ``--vary`` sweeps
and ``--per`` expressions.  A ``--per`` expression is read by a small grammar of its own - numbers,
the model's parameter names, ``+ - * / ** ^ ( )``, implicit products and the functions ``ceil``,
``floor``, ``min``, ``max`` - and never by ``eval`` or SymPy's ``parse_expr`` (which runs Python).

Every bad input is :class:`~base.errors.BadInput` naming what was wrong; unknown names come with the
nearest known ones.
"""

from __future__ import annotations

import difflib
import re
from fractions import Fraction
from typing import Iterable, Mapping, Sequence

from base.errors import BadInput

__all__ = ["parse_number", "parse_assignments", "parse_vary", "parse_per", "tied", "sweep_points", "point",
           "check_names", "per_expression", "theta_of", "sweep_table", "sweep", "values_table", "roofline_of",
           "roofline_table", "default_sweep", "plot_series", "MAX_POINTS", "MAX_EXPONENT", "PER_FUNCTIONS"]

#: a sweep (table or plot) of more points than this is refused up front
MAX_POINTS = 10_000
#: the largest exponent a typed number may have (``2**4096``, ``1e4096``)
MAX_EXPONENT = 4096


# ----------------------------------------------------------------------------------- names
def nearest(name: str, known: Iterable[str], cutoff: float = 0.5) -> str:
    """``"; did you mean A, B?"`` with the names of ``known`` nearest to ``name``, or the list of all."""
    known = list(dict.fromkeys(known))
    near = difflib.get_close_matches(name, known, n=3, cutoff=cutoff)
    if near:
        return f"; did you mean {', '.join(near)}?"
    return f" (known: {', '.join(known)})" if known else ""


def _param_names(model) -> list[str]:
    return [p.name for p in model.params]


def check_names(names: Iterable[str], models: Sequence, option: str = "at") -> None:
    """Each of ``names`` must be a parameter of at least one of ``models``; :class:`BadInput` naming
    it with the nearest parameter names otherwise."""
    known = [n for m in models for n in _param_names(m)]
    for name in names:
        if name not in known:
            which = ", ".join(m.name for m in models) if len(models) <= 3 else f"any of the {len(models)} models"
            raise BadInput(name, f"not a parameter of {which}{nearest(name, known)}")


def quantity_of(model, q: str) -> str:
    """``q`` when ``model`` has that quantity; :class:`BadInput` naming ``quantity`` otherwise."""
    if q not in model.all_quantities:
        raise BadInput("quantity", f"{model.name} has no quantity {q!r}{nearest(q, model.all_quantities, 0.4)}")
    return q


# ----------------------------------------------------------------------------------- numbers
_INT = re.compile(r"[+-]?\d+")


def parse_number(name: str, text: str):
    """``4096``, ``4_096``, ``2**12``, ``2^12``, ``7/10``, ``0.5``, ``1e-9`` -> an int or an exact
    Fraction (never a float).  :class:`BadInput` naming ``name`` otherwise."""
    t = str(text).strip().replace("_", "")
    for op in ("**", "^"):
        if op in t:
            base, _, exp = t.partition(op)
            if not (_INT.fullmatch(base.strip()) and _INT.fullmatch(exp.strip())):
                raise BadInput(name, f"expected a number, got {text!r}")
            b, e = int(base), int(exp)
            if not 0 <= e <= MAX_EXPONENT:
                raise BadInput(name, f"exponent out of range (0 to {MAX_EXPONENT}) in {text!r}")
            return b ** e
    if _INT.fullmatch(t):
        if len(t) > MAX_EXPONENT:
            raise BadInput(name, f"more than {MAX_EXPONENT} digits in {text[:20]!r}...")
        return int(t)
    mantissa, e, exponent = t.lower().partition("e")
    if e and _INT.fullmatch(exponent) and abs(int(exponent)) > MAX_EXPONENT:
        raise BadInput(name, f"exponent out of range (-{MAX_EXPONENT} to {MAX_EXPONENT}) in {text!r}")
    if len(t) > MAX_EXPONENT:
        raise BadInput(name, f"more than {MAX_EXPONENT} digits in {text[:20]!r}...")
    try:
        v = Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise BadInput(name, f"expected a number, got {text!r}") from None
    return v.numerator if v.denominator == 1 else v


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
                raise BadInput(name, f"given twice in --{option} ({_plain(out[name])} and {_plain(v)})")
            out[name] = v
    return out


def _plain(v) -> str:
    return str(v) if not isinstance(v, int) or abs(v) < 10 ** 30 else f"a {len(str(abs(v)))}-digit number"


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


# ----------------------------------------------------------------------------------- --per expressions
#: the functions a ``--per`` expression may call (each evaluates exactly)
PER_FUNCTIONS = ("ceil", "floor", "min", "max")

_TOKEN = re.compile(r"\s*(?:(?P<num>\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
                    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>\*\*|[-+*/^(),]))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos, text = [], 0, str(text)
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            bad = text[pos:].lstrip()[:1]
            raise BadInput("per", f"cannot read {text!r}: unexpected {bad!r}; an expression has numbers, "
                                  f"parameter names, + - * / ** ^ ( ) and {', '.join(PER_FUNCTIONS)}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Reader:
    """Recursive descent over the tokens; builds a SymPy expression from the model's own Params."""

    def __init__(self, text: str, symbols: Mapping, model_name: str):
        import sympy as sp
        self.sp, self.text, self.symbols, self.model_name = sp, text, symbols, model_name
        self.toks, self.i = _tokens(text), 0

    def fail(self, why: str):
        raise BadInput("per", f"cannot read {self.text!r}: {why}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, op=None):
        kind, val = self.peek()
        if kind is None:
            self.fail("it ends too early")
        if op is not None and val != op:
            self.fail(f"expected {op!r}, got {val!r}")
        self.i += 1
        return kind, val

    def read(self):
        if not self.toks:
            self.fail("it is empty")
        e = self.sum()
        if self.i != len(self.toks):
            self.fail(f"unexpected {self.peek()[1]!r}")
        return e

    def sum(self):
        e = self.product()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            r = self.product()
            e = e + r if op == "+" else e - r
        return e

    def product(self):
        e = self.unary()
        while True:
            kind, val = self.peek()
            if val in ("*", "/"):
                self.take()
                r = self.unary()
                if val == "/" and r == 0:
                    self.fail("division by zero")
                e = e * r if val == "*" else e / r
            elif kind in ("num", "name") or val == "(":    # implicit product: 2 N, N(d + 1)
                e = e * self.power()
            else:
                return e

    def unary(self):
        if self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            e = self.unary()
            return -e if op == "-" else e
        return self.power()

    def power(self):
        base = self.atom()
        if self.peek()[1] in ("**", "^"):
            self.take()
            exp = self.unary()
            if not exp.is_Integer:
                self.fail(f"an exponent must be an integer, got {exp}")
            if abs(int(exp)) > 64:
                self.fail(f"exponent {exp} out of range (-64 to 64)")
            if exp < 0 and base == 0:
                self.fail("division by zero")
            return base ** exp
        return base

    def atom(self):
        sp = self.sp
        kind, val = self.take()
        if kind == "num":
            v = parse_number("per", val)
            return sp.Integer(v) if isinstance(v, int) else sp.Rational(v.numerator, v.denominator)
        if kind == "name":
            if self.peek()[1] == "(":
                return self.call(val)
            if val not in self.symbols:
                raise BadInput("per", f"{val} is not a parameter of {self.model_name}"
                                      f"{nearest(val, self.symbols)}")
            return self.symbols[val]
        if val == "(":
            e = self.sum()
            self.take(")")
            return e
        self.fail(f"unexpected {val!r}")

    def call(self, fname: str):
        sp = self.sp
        if fname not in PER_FUNCTIONS:
            self.fail(f"unknown function {fname}; the functions are {', '.join(PER_FUNCTIONS)}")
        self.take("(")
        args = [self.sum()]
        while self.peek()[1] == ",":
            self.take()
            args.append(self.sum())
        self.take(")")
        if fname in ("ceil", "floor"):
            if len(args) != 1:
                self.fail(f"{fname} takes one argument")
            return (sp.ceiling if fname == "ceil" else sp.floor)(args[0])
        if len(args) < 2:
            self.fail(f"{fname} takes two or more arguments")
        return (sp.Min if fname == "min" else sp.Max)(*args)


def parse_per(model, text: str):
    """A ``--per`` expression in ``model``'s parameters, read by the grammar above (no ``eval``)."""
    return _Reader(text, {p.name: p for p in model.params}, model.name).read()


def theta_of(model, quantity: str | None = None):
    """The Θ class of ``quantity`` (default: the main one) over the model's regime."""
    from symbolic.asymptotics import theta
    q = quantity or model.main_quantity
    if q == model.main_quantity:
        return model.theta()
    expr = model.divisible()[q] if model.asymptotics_from_divisible else model[q]
    return theta(expr, model.regime)


def _leading_of(model, quantity: str):
    from symbolic.asymptotics import leading_term
    if quantity == model.main_quantity:
        return model.leading()
    expr = model.divisible()[quantity] if model.asymptotics_from_divisible else model[quantity]
    return leading_term(expr, model.regime)


def foreign_symbols(model, expr) -> list[str]:
    """Names of the symbols of ``expr`` that are not parameters of ``model`` (sorted)."""
    params = set(model.params)
    return sorted(s.name for s in expr.free_symbols if s not in params)


def per_expression(model, text: str, quantity: str | None = None):
    """``--per`` argument -> a SymPy expression in the model's parameters.  ``theta`` / ``leading``
    name the Θ class / leading term of ``quantity`` (the quantity the column divides)."""
    import sympy as sp

    key = text.strip().lower()
    if key in ("theta", "leading"):
        q = quantity or model.main_quantity
        try:
            e = theta_of(model, q) if key == "theta" else _leading_of(model, q)
        except ValueError as exc:       # the asymptotics cannot classify a term (a Piecewise, a Max of sums)
            why = str(exc).split(":")[0]
            raise BadInput("per", f"{model.name} has no {key} for {q} ({why if len(why) <= 60 else 'its terms have no one Θ class'}"
                                  f" over the model's regime); give --per as an expression in "
                                  f"{', '.join(_param_names(model))}") from None
        foreign = foreign_symbols(model, e)
        if foreign:      # e.g. the causal models' asymptotics, taken of their divisible form
            from printing.text import to_text
            raise BadInput("per", f"the {key} of {model.name}'s {q}, {to_text(e)}, is in {', '.join(foreign)}, not "
                                  f"its parameters; give --per as an expression in {', '.join(_param_names(model))}")
        return e
    e = sp.sympify(parse_per(model, text))
    if e.is_zero:
        raise BadInput("per", f"{text!r} is 0; divide by a nonzero expression")
    return e


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
    from symbolic.evaluate import compile_exact
    from printing.content import joined, point_note, quantity, tied_note
    from printing.tables import Measure, Table
    from symbolic.notes import note

    if not vary:
        raise BadInput("vary", "give at least one --vary NAME=V1,V2,...")
    refuse_overlap(at, vary)
    check_names([*varied(vary), *at], [model, *ratios])
    qs = [quantity_of(model, q) for q in quantities] or list(model.all_quantities)
    main = qs[0] if quantities else model.main_quantity
    per_exprs = [per_expression(model, p, main) for p in pers]
    per_fns = [compile_exact(e) for e in per_exprs]
    nbytes = element_bytes(dtype) if dtype else None
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
            row.append(_ratio(vals[main], fn(**{n: pt[n] for n in fn.names})))
        rows.append(tuple(row))
    first = expand({k: vs[0] for k, vs in vary.items()})
    fixed = {k: v for k, v in point(model, {**at, **first}).items() if k not in first}
    caption = note(f"{model.name}: ") + joined([quantity(q) for q in qs], ", ")     # a note: math as math
    if fixed:
        caption += note(" at ") + point_note(model, fixed)
    units = [f"{q} in {model.unit(q)}" for q in qs if model.unit(q) not in ("", "1")]
    notes = (f"units: {', '.join(units)}",) if units else ()
    return Table(tuple(headers), tuple(rows), caption=caption, notes=notes)


def sweep(model, vary: Mapping[str, list], at: Mapping | None = None, **options):
    """:func:`sweep_table` with ``at`` optional: ``sweep(model, {"N": [512, 1024]}) -> Table``."""
    return sweep_table(model, vary, at or {}, **options)


def values_table(model, pt: Mapping, dtype: str = "fp16"):
    """Exact values of every quantity at ``pt``, in human units, and element counts in bytes."""
    from base.dtypes import element_bytes
    from printing.tables import Exact, Measure, Table

    nbytes = element_bytes(dtype)
    vals = model.evaluate(**pt)
    any_elements = any(_is_elements(model.unit(q)) for q in vals)
    rows = []
    for q, v in vals.items():
        unit = model.unit(q)
        row = [q, Exact(v), "" if unit == "1" else unit]
        if any_elements:
            row.append(v * nbytes if _is_elements(unit) else None)
        if _is_elements(unit):
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
    headers = ("quantity", "exact", "unit") + ((f"bytes ({dtype})",) if any_elements else ()) + ("≈",)
    return Table(headers, tuple(rows))


def roofline_of(model, pt: Mapping, hw, dtype: str, copies: int = 1):
    """The roofline record; ``None`` for a model without flops and element counts; a one-line
    reason (a string) where the hardware table has no peak for ``dtype``."""
    from symbolic.roofline import roofline
    if not ({"flops", "total"} <= set(model.all_quantities) and _is_elements(model.unit("total"))):
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
                   f"HBM {fmt_si(rl.bandwidth, 'B/s', 4)}, intensity {fmt_si(rl.intensity, 'FLOP/B')}")


def default_sweep(model, at: Mapping | None = None):
    """The sweep a document shows for a model: its first integer parameter not fixed by ``at`` at
    1/4x..4x its default (the points the model accepts), the rest at ``at`` or their defaults; ``None``
    when some parameter has neither a value nor a default, or fewer than two of the points are accepted."""
    at = {k: v for k, v in (at or {}).items() if k in _param_names(model)}
    names = _param_names(model)
    if not names or any(n not in model.defaults and n not in at for n in names):
        return None
    first = next((p for p in model.params if p.counts and p.name not in at and p.name in model.defaults), None)
    if first is None:
        return None
    v0 = int(model.defaults[first.name])
    values = []
    for v in sorted({max(1, v0 * 2 ** k // 4) for k in range(5)}):
        try:
            model.check_point({**at, first.name: v})
        except BadInput:
            continue
        values.append(v)
    return {first.name: values} if len(values) >= 2 else None


# ----------------------------------------------------------------------------------- plots
def dense(xs: Sequence) -> list:
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


def _asymptotics(model, quantity: str):
    """``(Θ class, leading term)`` of ``quantity``, or ``(None, None)`` when the model cannot derive
    them (the plot then goes without the class in its legend and without the dashed guide)."""
    try:
        return theta_of(model, quantity), _leading_of(model, quantity)
    except ValueError:              # asymptotics: a term that is not a monomial over the regime
        return None, None


def plot_series(models: Sequence, xkey: str, xs: Sequence, at: Mapping, quantity: str | None = None,
                leading: bool = True, executed: bool = True):
    """The series of a plot, its axis labels and title, and notes for stderr:
    ``(series, xlabel, ylabel, title, notes)``.  Each model gives its formula as a curve (its Θ class in
    the legend), its leading term dashed, and its executor's counts as points (:mod:`tilebound.executed`)."""
    from symbolic.evaluate import compile_exact
    from printing.notation import Theta
    from printing.plot import Series
    from printing.text import to_text

    refuse_overlap(at, {xkey: xs})
    for m in models:
        check_names([*tied(xkey), *at], [m, *[o for o in models if o is not m]])
    series, notes, fixed = [], [], {}
    grid = dense(xs)
    for m in models:
        q = quantity_of(m, quantity or m.main_quantity)
        pts = [point(m, {**at, **expand({xkey: x})}) for x in grid]
        theta, lead = _asymptotics(m, q)
        series.append(Series(f"{m.name}: formula" + (f" ∈ {to_text(Theta(theta))}" if theta is not None else ""),
                             grid, [m.evaluate(q, **p) for p in pts], "line"))
        if leading and lead is not None:
            foreign = foreign_symbols(m, lead)
            if foreign:
                notes.append(f"the leading term of {m.name} is in {', '.join(foreign)}, not its parameters; "
                             "no dashed guide")
            elif lead != m[q]:
                fn = compile_exact(lead)
                series.append(Series(f"{m.name}: leading term ~ {to_text(lead)}", grid,
                                     [fn(**{n: p[n] for n in fn.names}) for p in pts], "dashed"))
        if executed:
            from .executed import executed_points
            ex_x, ex_y, ex_notes = executed_points(m, q, [(x, point(m, {**at, **expand({xkey: x})})) for x in xs])
            notes += ex_notes
            if ex_x:
                series.append(Series(f"{m.name}: executed", ex_x, ex_y, "points"))
        fixed.update({k: v for k, v in pts[0].items() if k not in tied(xkey)})
    q0 = quantity or models[0].main_quantity
    unit = models[0].unit(q0)
    title = ", ".join(m.name for m in models)
    if fixed:
        title += "\n" + ", ".join(f"{k} = {v if isinstance(v, int) else f'{float(v):g}'}" for k, v in fixed.items())
    ylabel = q0 + (f" ({unit})" if unit and unit != "1" else "")
    return series, " = ".join(tied(xkey)), ylabel, title, notes
