"""The model object: one algorithm's costs as exact SymPy expressions, plus what is derived from them.

A :class:`Model` holds *quantities* (name -> expression, e.g. ``reads``, ``writes``, ``flops`` for an
IO model; ``makespan``, ``busy`` for a latency model), its parameters (:class:`~symbolic.params.Param`),
and the assumptions for its derived forms.  Everything else is computed from the quantities, lazily:

* ``divisible()`` - the form when blocks divide the sizes (SymPy substitutes ``N = B_r t`` etc. and
  cancels, :mod:`symbolic.canonical`; nothing typed in),
* ``leading()`` / ``theta()`` - by :mod:`symbolic.asymptotics` over the model's regime,
* ``evaluate(**point)`` - exact Python ints/Fractions (:mod:`symbolic.evaluate`),
* ``evaluate_grid(**arrays)`` - elementwise exact over NumPy arrays (object dtype).

A model is plain data: it imports no printer.  The printing layer (:mod:`printing`, above this package)
renders it, and registers its notebook display with IPython (:func:`printing.notebook.init_printing`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Callable, Mapping, Optional

import sympy as sp

from base.discovery import did_you_mean
from base.errors import BadInput

from .asymptotics import UNRESTRICTED, Regime, leading_term, theta
from .canonical import cancel_atoms, rebuild_atoms
from .evaluate import compile_exact
from .notes import Note, as_note
from .params import Param

__all__ = ["Model", "Evaluation"]


@lru_cache(maxsize=1024)
def _canonical(e: sp.Expr) -> sp.Expr:
    """A divisible form as the notes print it: ``factor_terms(expand(cancel_atoms(e)))``.  The outer
    ``factor_terms(expand(...))`` makes the shape; :func:`~symbolic.canonical.cancel_atoms` before it (``cancel``
    over the opaque ceilings, floors, ``Max``, ..., each atom's arguments in that form first) lets equal terms
    cancel, as ``simplify`` did at a tenth of its cost.  A polynomial is only expanded: that gives its one
    canonical sum of monomials.  Cached: a family's models share many quantities (a third of the calls)."""
    if e.is_polynomial():
        return sp.factor_terms(sp.expand(e))
    return sp.factor_terms(sp.expand(cancel_atoms(e)))


@dataclass(frozen=True, eq=False)
class Model:
    """A cost model.

    ``quantities`` is ordered; an IO model has ``reads``/``writes`` (elements) and ``flops``, and
    gains a derived ``total = reads + writes``.  ``params`` lists the model's own :class:`~symbolic.params.Param`
    objects in display order (each carries its name, least value, LaTeX form and meaning).
    ``divisible_subs`` states the divisibility assumption as substitutions ``{N: B_r*t_r, ...}`` with
    fresh positive-integer ``sympy.Dummy`` symbols; ``regime`` the asymptotic assumptions; ``lower_bounds`` named expressions (exact
    counts, or Ω classes whose constant is unknown - say which in the name).  A family may instead
    give ``divisible_forms`` it derived from the loop structure under the assumption stated in
    ``divisible_note`` (for causal sums, where substitution alone cannot drop the ``Min``).

    ``summary``, ``source``, each of ``notes``, ``divisible_note`` and the names of ``lower_bounds`` are
    :class:`~symbolic.notes.Note` records (text, SymPy math and code pieces; a plain ``str`` is taken as one
    text piece): construction coerces them, and refuses a note whose math names a symbol that is not one
    of the model's parameters (a :func:`~symbolic.notes.symbol` - a ``Dummy`` - is allowed).
    """

    name: str
    summary: Note
    quantities: Mapping[str, sp.Expr]
    params: tuple
    units: Mapping[str, str] = field(default_factory=dict)
    divisible_subs: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)
    divisible_forms: Mapping[str, sp.Expr] = field(default_factory=dict)
    divisible_note: Note = Note()
    regime: Regime = UNRESTRICTED
    asymptotic_quantity: Optional[str] = None
    asymptotics_from_divisible: bool = False
    lower_bounds: Mapping[Note, sp.Expr] = field(default_factory=dict)
    defaults: Mapping[str, int] = field(default_factory=dict)
    #: parameters whose default is another parameter's value at the point: ``{"d_v": "d"}`` makes ``d_v``
    #: take ``d``'s value when a point gives ``d`` and not ``d_v`` (``defaults`` still holds a number for
    #: each, equal at the default point, so every reader of ``defaults`` sees plain numbers)
    default_from: Mapping[str, str] = field(default_factory=dict)
    source: Note = Note()
    notes: tuple = ()
    validate: Optional[Callable[[Mapping[str, int]], None]] = None
    #: inputs that are not scalar parameters, by the name a command line gives them (``counts`` for an MoE
    #: routing): text -> the model for that input (``moe.grouped``'s ``--counts 7,0,13``)
    inputs: Mapping[str, Callable[[str], "Model"]] = field(default_factory=dict)

    # ----------------------------------------------------------------- quantities
    @cached_property
    def all_quantities(self) -> dict[str, sp.Expr]:
        q = dict(self.quantities)
        if "reads" in q and "writes" in q and "total" not in q:
            q["total"] = q["reads"] + q["writes"]
        return q

    def __getitem__(self, key: str) -> sp.Expr:
        try:
            return self.all_quantities[key]
        except (KeyError, TypeError):
            raise BadInput("quantity", f"{self.name} has no quantity {key!r}; it has "
                                       f"{', '.join(self.all_quantities)}") from None

    @property
    def main_quantity(self) -> str:
        if self.asymptotic_quantity:
            return self.asymptotic_quantity
        return "total" if "total" in self.all_quantities else next(iter(self.quantities))

    def unit(self, key: str) -> str:
        if key in self.units:
            return self.units[key]
        return {"reads": "elements", "writes": "elements", "total": "elements", "flops": "FLOP"}.get(key, "")

    # ----------------------------------------------------------------- derived forms
    def divisible(self) -> dict[str, sp.Expr]:
        """Each quantity when the blocks divide the sizes (``self.divisible_subs``)."""
        return dict(self._divisible)

    @cached_property
    def _divisible(self) -> dict[str, sp.Expr]:
        if self.divisible_forms:   # derived by the family from its loop structure under the assumption
            forms = dict(self.divisible_forms)
            if "reads" in forms and "writes" in forms and "total" not in forms:
                forms["total"] = forms["reads"] + forms["writes"]
            return {k: _canonical(sp.sympify(v).doit()) for k, v in forms.items()}
        if not self.divisible_subs:     # no blocks to divide: the quantities as they are
            return dict(self.all_quantities)
        fwd = dict(self.divisible_subs)
        back = {}
        for s, rep in fwd.items():
            fresh = [f for f in sp.sympify(rep).free_symbols if f not in self.params]
            if len(fresh) == 1:  # rep = block * t  ->  t = s / block
                t = fresh[0]
                block = rep / t
                back[t] = s / block if not block.has(t) else sp.solve(sp.Eq(s, rep), t)[0]
        out = {}
        for k, v in self.all_quantities.items():
            e = sp.sympify(v).subs(fwd)
            done = e.doit()
            plain = done.subs(back)
            if plain.is_polynomial():           # expand is canonical: what the cancelling below gives
                out[k] = _canonical(plain)
                continue
            # the atoms in the quotients first: their integrality takes whole parts out of a ceiling's argument
            e = rebuild_atoms(done if e.has(sp.Sum) else e)
            out[k] = _canonical(e.subs(back))
        return out

    def _asymptotic_expr(self) -> sp.Expr:
        # NOTE: where the exact form is a finite sum of Min/Max/floor terms (causal masks), the
        # asymptotics are taken of the divisible form: the two differ by partial-block terms of
        # lower order, and the regime is then stated in the divisible form's symbols.
        if self.asymptotics_from_divisible:
            return self._divisible[self.main_quantity]
        return self[self.main_quantity]

    @cached_property
    def _leading(self) -> sp.Expr:
        return leading_term(self._asymptotic_expr(), self.regime)

    def leading(self) -> sp.Expr:
        """Leading term (with its constant) of the main quantity over ``self.regime``."""
        return self._leading

    @cached_property
    def _theta(self) -> sp.Expr:
        return theta(self._asymptotic_expr(), self.regime)

    def theta(self) -> sp.Expr:
        """Θ class of the main quantity (an expression without constants)."""
        return self._theta

    # ----------------------------------------------------------------- evaluation
    @cached_property
    def _compiled_so_far(self) -> dict:
        """:meth:`_exact`'s compiled quantities so far."""
        return {}

    def _exact(self, quantity: str):
        """``quantity`` compiled for exact evaluation, on first use (a sweep asks for a few of a model's
        quantities); :class:`BadInput` naming the quantities for one the model does not have."""
        f = self._compiled_so_far.get(quantity) if isinstance(quantity, str) else None
        if f is None:
            f = self._compiled_so_far[quantity] = compile_exact(self[quantity], self.params)
        return f

    def __post_init__(self):
        bad = [p for p in self.params if not isinstance(p, Param)]
        if bad:
            raise TypeError(f"{self.name}: parameters must be symbolic.params.Param objects, got {bad[0]!r}")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise TypeError(f"{self.name}: two parameters share a name in {names}")
        for k, v in self.default_from.items():
            if k not in names or v not in names or k == v:
                raise TypeError(f"{self.name}: default_from {k!r} -> {v!r} must name two of its parameters {names}")
            if self.defaults.get(k) != self.defaults.get(v):
                raise TypeError(f"{self.name}: {k} takes {v}'s value by default, so their defaults must agree, got "
                                f"{self.defaults.get(k)!r} and {self.defaults.get(v)!r}")
        free = set().union(*(sp.sympify(v).free_symbols for v in self.quantities.values()))
        stray = sorted(str(s) for s in free - set(self.params) if not isinstance(s, sp.Dummy))
        if stray:
            raise TypeError(f"{self.name}: quantities use symbols that are not its parameters: {', '.join(stray)}")
        self._coerce_notes()

    def _coerce_notes(self) -> None:
        """Every note a :class:`~symbolic.notes.Note` in the model's own parameters (the class docstring)."""
        def coerce(value, where: str) -> Note:
            try:
                n = as_note(value)
            except TypeError as exc:
                raise TypeError(f"{self.name}: {where} is not a note: {exc}") from None
            stray = sorted(str(s) for s in n.free_symbols - set(self.params) if not isinstance(s, sp.Dummy))
            if stray:
                raise TypeError(f"{self.name}: {where} {str(n)!r} uses symbols that are not its parameters: "
                                f"{', '.join(stray)}")
            return n

        object.__setattr__(self, "summary", coerce(self.summary, "the summary"))
        object.__setattr__(self, "source", coerce(self.source, "the source"))
        object.__setattr__(self, "divisible_note", coerce(self.divisible_note, "the divisible note"))
        notes = (self.notes,) if isinstance(self.notes, (str, Note)) else tuple(self.notes)
        object.__setattr__(self, "notes", tuple(coerce(n, f"note {k + 1}") for k, n in enumerate(notes)))
        bounds = {}
        for name, expr in self.lower_bounds.items():
            key = coerce(name, "a lower bound's name")
            if key in bounds:
                raise TypeError(f"{self.name}: two lower bounds are named {str(key)!r}")
            bounds[key] = expr
        object.__setattr__(self, "lower_bounds", bounds)

    @cached_property
    def _param_names(self) -> frozenset:
        return frozenset(p.name for p in self.params)

    def param(self, name: str) -> Param:
        """The parameter called ``name``; :class:`BadInput` naming it (with the nearest names) otherwise."""
        for p in self.params:
            if p.name == name:
                return p
        raise BadInput(name, f"not a parameter of {self.name}{_nearest(name, [p.name for p in self.params])}")

    def check_point(self, point: Mapping[str, object]) -> dict:
        """Validate a point: every parameter present (or defaulted), each value checked by its
        :class:`~symbolic.params.Param` (an int ``>= least``; a real > 0 as an exact Fraction).
        Raises :class:`~base.errors.BadInput` naming the parameter."""
        known = self._param_names
        for k in point:
            if k not in known:
                self.param(k)                           # raises, naming it and the nearest names
        out = {}
        for p in self.params:
            if p.name in point:
                out[p.name] = p.check(point[p.name])
            elif p.name in self.default_from:
                continue                                # filled below, from the parameter it follows
            elif p.name in self.defaults:
                out[p.name] = p.check(self.defaults[p.name])
            else:
                raise BadInput(p.name, f"value missing for {self.name}")
        for name, source in self.default_from.items():
            if name not in point:
                out[name] = self.param(name).check(out[source])
        out = {p.name: out[p.name] for p in self.params}
        if self.validate is not None:
            self.validate(out)
        return out

    def evaluate(self, quantity=None, **point):
        """Exact value(s) at a point: an int (or Fraction) for one quantity (a name), a dict of those named
        for a list or tuple of names, else a dict of all.  The point is validated once whatever the number
        of quantities (a sweep asks for several at each point)."""
        if isinstance(quantity, (list, tuple)):
            fs = {q: self._exact(q) for q in quantity}
            pt = self.check_point(point)
            return {q: f(**pt) for q, f in fs.items()}
        pt = self.check_point(point)
        if quantity is not None:
            return self._exact(quantity)(**pt)
        return {k: self._exact(k)(**pt) for k in self.all_quantities}

    def evaluate_grid(self, quantity: str, **arrays):
        """Vectorised exact evaluation over broadcast arrays (missing parameters take their defaults);
        returns an object array of Python ints/Fractions.  Every point is validated first."""
        names = [p.name for p in self.params]
        for k in arrays:
            self.param(k)
        import numpy as np
        arrays = {**{k: arrays.get(v, self.defaults.get(v)) for k, v in self.default_from.items() if k not in arrays},
                  **arrays}
        cols = np.broadcast_arrays(*[np.asarray(arrays.get(n, self.defaults.get(n)), dtype=object) for n in names])
        for idx in np.ndindex(cols[0].shape):
            self.check_point({n: c[idx] for n, c in zip(names, cols)})
        if quantity not in self._grid:
            self[quantity]
        return self._grid[quantity](**dict(zip(names, cols)))

    @cached_property
    def _grid(self):
        from .grid import compile_grid
        return {k: compile_grid(v, self.params) for k, v in self.all_quantities.items()}

    # ----------------------------------------------------------------- a worked point
    def at(self, **point) -> "Evaluation":
        """The model at ``point`` (missing parameters take their defaults), validated and evaluated:
        an :class:`Evaluation` record.  In a notebook the printing layer shows it as formula, substitution
        and result once :func:`printing.notebook.init_printing` has registered its formatters."""
        return Evaluation(self, point)

    def __repr__(self) -> str:
        return f"Model({self.name!r})"


def _nearest(name: str, known) -> str:
    """``"; did you mean B?"`` or ``"; parameters: N, B"``: the one nearest-name hint (:mod:`base.discovery`)."""
    return did_you_mean(str(name), list(known), "parameters")


class Evaluation:
    """A model at one point: ``model``, the validated ``point`` (defaults filled in) and the exact
    ``values`` of every quantity (``ev["reads"]``).  Data only; :mod:`printing.notebook` displays it."""

    __slots__ = ("model", "point", "values")

    def __init__(self, model: Model, point: Mapping[str, object]):
        self.model = model
        self.point = model.check_point(point)          # BadInput naming a bad parameter
        self.values = model.evaluate(**self.point)

    def __getitem__(self, quantity: str):
        if quantity not in self.values:
            self.model[quantity]                       # BadInput naming the quantities
        return self.values[quantity]

    def __repr__(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in self.point.items())
        return f"Evaluation({self.model.name!r} at {where})"
