"""What a model's printout contains, independent of how it is rendered: one format-free content tree.

:func:`model_printout` reads a :class:`symbolic.model.Model` through its public accessors (``summary``,
``source``, ``params``, ``all_quantities``, ``divisible()``, ``leading()``, ``theta()``, ``lower_bounds``,
``regime``, ``notes``) and returns a :class:`Printout`: the model's header (name, summary, source, the
parameters with their meanings), its :class:`Section` records of labelled expressions, and its notes.
Every piece of prose in it is a :class:`symbolic.notes.Note` (text, SymPy math and code pieces), so that a
printer renders it piece by piece and never guesses which words are math.  The text printer
(:func:`printing.text.model_to_text`), the LaTeX printers (:func:`printing.latex.model_to_latex`,
:func:`printing.document.model_fragment`) and the notebook display (:mod:`printing.notebook`) all render
this tree.  Nothing here derives a cost: the model derives, this module only arranges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from symbolic.notes import Note, as_note, note, symbol

from .human import fmt_si, fmt_time
from .notation import GROUP_FROM, Grouped, Measured, Theta

__all__ = ["Line", "Section", "Parameter", "Printout", "Quantity", "quantity", "model_printout", "model_sections", "LABEL_WIDTH",
           "joined", "point_note", "value_expr", "tied_note"]

#: a label longer than this (a lower bound's citation) goes on a line of its own, in every format
LABEL_WIDTH = 24


class Quantity(sp.Dummy):
    """A quantity's name (``reads``, ``hbm_reads_lru``) as a piece of a label or a title: math, so that each
    printer sets it as it sets its formula labels (the LaTeX printer: upright text, ``\\text{hbm}\\_\\text{reads}``;
    the text printer: the name)."""

    def _sympystr(self, printer) -> str:
        return self.name

    _tilebound_text = _sympystr


def quantity(name: str) -> Note:
    """A quantity's name as a note of one math piece (:class:`Quantity`)."""
    return Note((Quantity(name),))


@dataclass(frozen=True)
class Line:
    """``label relation expr`` with an optional unit; ``relation`` is one of ``= ~ in <= >=``.  The label
    is a :class:`~symbolic.notes.Note`: a quantity's name (:func:`quantity`) or a lower bound's name."""

    label: Note
    expr: sp.Expr
    relation: str = "="
    unit: str = ""

    def __post_init__(self):
        object.__setattr__(self, "label", as_note(self.label))

    @property
    def own_line(self) -> bool:
        """A long label (a bound's citation) goes on a line of its own, the formula below it."""
        return len(str(self.label)) > LABEL_WIDTH


@dataclass(frozen=True)
class Section:
    """A titled group of lines, with the assumptions ``(lhs, relation, rhs)`` it holds under and the
    notes (:class:`~symbolic.notes.Note`) that qualify it."""

    title: Note
    lines: tuple
    assumptions: tuple = ()
    notes: tuple = field(default_factory=tuple)

    def __post_init__(self):
        object.__setattr__(self, "title", as_note(self.title))
        object.__setattr__(self, "notes", tuple(as_note(n) for n in self.notes))

    @property
    def heading(self) -> Note:
        """The title with its notes in brackets: ``asymptotics of total (all sizes at least 1)``."""
        if not self.notes:
            return self.title
        return self.title + " (" + joined(self.notes, "; ") + ")"


@dataclass(frozen=True)
class Parameter:
    """A parameter as the printout shows it: the symbol (its name and LaTeX form), its meaning, its default."""

    symbol: sp.Symbol
    meaning: Note
    default: object = None


@dataclass(frozen=True)
class Printout:
    """A model's whole printout: header, sections, notes."""

    name: str
    summary: Note
    source: Note
    params: tuple
    sections: tuple
    notes: tuple


def joined(notes, sep: str) -> Note:
    """``notes`` joined by the text ``sep`` into one note."""
    out = Note()
    for k, n in enumerate(notes):
        out = out + (sep if k else "") + as_note(n)
    return out


def value_expr(value) -> sp.Expr:
    """A parameter's value as math: an integer exactly, with its digits grouped from
    :data:`~printing.notation.GROUP_FROM` digits on as the tables group them (:class:`~printing.notation.Grouped`:
    ``3,350,000,000,000``, LaTeX ``3{,}350{,}000{,}000{,}000``; ``4096`` as it is), any other number to four
    significant digits (``7.0e-7``)."""
    if isinstance(value, bool):
        raise TypeError(f"not a parameter value: {value!r}")
    if isinstance(value, Fraction) and value.denominator == 1:
        value = value.numerator
    if isinstance(value, int) or (isinstance(value, sp.Basic) and value.is_Integer):
        n = int(value)
        return Grouped(n) if abs(n) >= 10 ** (GROUP_FROM - 1) else sp.Integer(n)
    return sp.Float(f"{float(value):.4g}")


def point_note(model, point) -> Note:
    """A point of ``model`` (``{name: value}``) as a note of math: ``N = 4096, d = 64`` with each
    parameter in its own form (``N_k = 4096`` is :math:`N_k = 4096`).  A real parameter whose meaning ends
    in its unit, seconds or a rate (``"HBM bandwidth (bytes/s)"``, ``"... latency (s)"``), shows its value
    in that unit as the tables show times and rates: ``BW = 3.35 TB/s``, ``L = 700 ns``."""
    def one(k, v):
        p = model.param(k)
        shown = _with_unit(p, v)
        return Note((sp.Eq(p, value_expr(v) if shown is None else Measured(shown), evaluate=False),))
    return joined([one(k, v) for k, v in point.items()], ", ")


def _with_unit(p, value):
    """``value`` in ``p``'s unit (the parenthesis that ends its meaning) when ``p`` is a real parameter in
    seconds or a rate, formatted as the tables' cells (:mod:`printing.human`); else ``None``."""
    meaning = getattr(p, "meaning", "") or ""
    if getattr(p, "counts", True) or not meaning.rstrip().endswith(")") or "(" not in meaning:
        return None
    unit = meaning.rstrip()[meaning.rstrip().rindex("(") + 1:-1].strip()
    if unit == "s":
        return fmt_time(value)
    if unit.endswith("/s") and " " not in unit:
        return fmt_si(value, "B/s" if unit == "bytes/s" else unit)
    return None


def tied_note(model, names) -> Note:
    """Parameters of ``model`` swept together (``--vary N,N_k=...``) as a note of math: one parameter, or
    ``N = N_k`` for two, or the parameters listed with ``(tied)`` for more."""
    own = {p.name: p for p in model.params}
    tied = [own[n] if n in own else symbol(n) for n in names]       # a tie may name another model's parameter
    if len(tied) == 1:
        return Note((tied[0],))
    if len(tied) == 2:
        return Note((sp.Eq(*tied, evaluate=False),))
    return joined([Note((t,)) for t in tied], ", ") + " (tied)"


def model_printout(model) -> Printout:
    """The model's printout (see the module docstring)."""
    params = tuple(Parameter(p, as_note(getattr(p, "meaning", "") or ""), model.defaults.get(p.name))
                   for p in getattr(model, "params", ()))
    return Printout(model.name, as_note(model.summary), as_note(getattr(model, "source", "") or ""), params,
                    tuple(model_sections(model)),
                    tuple(as_note(n) for n in getattr(model, "notes", ()) or ()))


def model_sections(model) -> list[Section]:
    """Exact counts; the form when blocks divide the sizes; leading term and Θ class; lower bounds."""
    quantities = model.all_quantities
    out = [Section("exact", tuple(Line(quantity(k), v, "=", model.unit(k)) for k, v in quantities.items()))]

    forms_note = as_note(getattr(model, "divisible_note", "") or "")   # a family's own divisible forms
    if model.divisible_subs or getattr(model, "divisible_forms", None):
        def divisible() -> Section:
            div = model.divisible()
            return Section("when the blocks divide the sizes",
                           tuple(Line(quantity(k), div[k], "=", model.unit(k)) for k in quantities if k in div),
                           assumptions=tuple((s, "=", rep) for s, rep in model.divisible_subs.items()),
                           notes=(forms_note,) if forms_note else ())
        out.append(_derived("when the blocks divide the sizes", divisible))

    main = model.main_quantity
    description = as_note(model.regime.description or "")
    notes = (description,) if description and not model.regime.le else ()

    def asymptotics() -> Section:
        return Section(note("asymptotics of ") + quantity(main),
                       (Line(quantity(main), model.leading(), "~", model.unit(main)),
                        Line(quantity(main), Theta(model.theta()), "in")),
                       assumptions=tuple((a, "<=", b) for a, b in model.regime.le),
                       notes=notes)
    out.append(_derived(note("asymptotics of ") + quantity(main), asymptotics))

    if model.lower_bounds:
        out.append(Section("lower bounds",
                           # no unit: a bound may be a count or a ratio (its name says which)
                           tuple(Line(name, expr, "=") for name, expr in model.lower_bounds.items())))
    return out


def _derived(title: str, build) -> Section:
    """A derived section, or - when the model cannot derive it - the section with the model's reason,
    so that one model's gap does not stop a document of all models."""
    try:
        return build()
    except Exception as exc:  # noqa: BLE001  the reason is printed, not hidden
        return Section(title, (), notes=(f"not derived: {type(exc).__name__}: {exc}",))
