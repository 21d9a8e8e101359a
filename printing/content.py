"""What a model's printout contains, independent of how it is rendered.

:func:`model_sections` reads a :class:`symbolic.model.Model` through its public accessors
(``all_quantities``, ``divisible()``, ``leading()``, ``theta()``, ``lower_bounds``, ``regime``) and
returns plain :class:`Section` records of expressions; the text, LaTeX and Markdown printers each
render the same records.  Nothing here derives a cost: the model derives, this module only arranges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from .notation import Theta

__all__ = ["Line", "Section", "model_sections", "LABEL_WIDTH"]

#: a label longer than this (a lower bound's citation) goes on a line of its own, in every format
LABEL_WIDTH = 24


@dataclass(frozen=True)
class Line:
    """``label relation expr`` with an optional unit; ``relation`` is one of ``= ~ in <= >=``."""

    label: str
    expr: sp.Expr
    relation: str = "="
    unit: str = ""


@dataclass(frozen=True)
class Section:
    """A titled group of lines, with the assumptions ``(lhs, relation, rhs)`` it holds under."""

    title: str
    lines: tuple
    assumptions: tuple = ()
    notes: tuple = field(default_factory=tuple)


def model_sections(model) -> list[Section]:
    """Exact counts; the form when blocks divide the sizes; leading term and Θ class; lower bounds."""
    quantities = model.all_quantities
    out = [Section("exact", tuple(Line(k, v, "=", model.unit(k)) for k, v in quantities.items()))]

    forms_note = getattr(model, "divisible_note", "")          # a family's own divisible forms
    if model.divisible_subs or getattr(model, "divisible_forms", None):
        def divisible() -> Section:
            div = model.divisible()
            return Section("when the blocks divide the sizes",
                           tuple(Line(k, div[k], "=", model.unit(k)) for k in quantities if k in div),
                           assumptions=tuple((s, "=", rep) for s, rep in model.divisible_subs.items()),
                           notes=(forms_note,) if forms_note else ())
        out.append(_derived("when the blocks divide the sizes", divisible))

    main = model.main_quantity
    notes = (model.regime.description,) if model.regime.description and not model.regime.le else ()

    def asymptotics() -> Section:
        return Section(f"asymptotics of {main}",
                       (Line(main, model.leading(), "~", model.unit(main)),
                        Line(main, Theta(model.theta()), "in")),
                       assumptions=tuple((a, "<=", b) for a, b in model.regime.le),
                       notes=notes)
    out.append(_derived(f"asymptotics of {main}", asymptotics))

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
