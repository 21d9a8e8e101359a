"""The model object: one algorithm's costs as exact SymPy expressions, plus what is derived from them.

A :class:`Model` holds *quantities* (name -> expression, e.g. ``reads``, ``writes``, ``flops`` for an
IO model; ``makespan``, ``busy`` for a latency model), the symbols it depends on with their domains,
and the assumptions for its derived forms.  Everything else is computed from the quantities, lazily:

* ``divisible()`` - the form when blocks divide the sizes (SymPy substitutes ``N = B_r t`` etc. and
  simplifies; nothing typed in),
* ``leading()`` / ``theta()`` - by :mod:`symbolic.asymptotics` over the model's regime,
* ``evaluate(**point)`` - exact Python ints/Fractions (:mod:`symbolic.evaluate`),
* ``evaluate_grid(**arrays)`` - elementwise exact over NumPy arrays (object dtype).

Printing lives in :mod:`symbolic.printing`; ``_repr_latex_`` delegates there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Callable, Mapping, Optional

import numpy as np
import sympy as sp

from .asymptotics import UNRESTRICTED, Regime, leading_term, theta
from .evaluate import compile_exact, compile_grid

__all__ = ["Model", "IO_QUANTITIES"]

IO_QUANTITIES = ("reads", "writes", "flops")


@dataclass(frozen=True, eq=False)
class Model:
    """A cost model.

    ``quantities`` is ordered; an IO model has ``reads``/``writes`` (elements) and ``flops``, and
    gains a derived ``total = reads + writes``.  ``params`` lists the free symbols in display order
    with ``domains`` giving each one's least value (default 1).  ``divisible_subs`` states the
    divisibility assumption as substitutions ``{N: B_r*t_r, ...}`` with fresh positive-integer
    symbols; ``regime`` the asymptotic assumptions; ``lower_bounds`` named expressions (exact
    counts, or Ω classes whose constant is unknown - say which in the name).  A family may instead
    give ``divisible_forms`` it derived from the loop structure under the assumption stated in
    ``divisible_note`` (for causal sums, where substitution alone cannot drop the ``Min``).
    """

    name: str
    summary: str
    quantities: Mapping[str, sp.Expr]
    params: tuple
    units: Mapping[str, str] = field(default_factory=dict)
    domains: Mapping[sp.Symbol, int] = field(default_factory=dict)
    divisible_subs: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)
    divisible_forms: Mapping[str, sp.Expr] = field(default_factory=dict)
    divisible_note: str = ""
    regime: Regime = UNRESTRICTED
    asymptotic_quantity: Optional[str] = None
    asymptotics_from_divisible: bool = False
    lower_bounds: Mapping[str, sp.Expr] = field(default_factory=dict)
    defaults: Mapping[str, int] = field(default_factory=dict)
    source: str = ""
    notes: tuple = ()
    validate: Optional[Callable[[Mapping[str, int]], None]] = None

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
        except KeyError:
            raise KeyError(f"{self.name} has no quantity {key!r}; it has {', '.join(self.all_quantities)}") from None

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
            return {k: sp.factor_terms(sp.expand(sp.simplify(sp.sympify(v).doit()))) for k, v in forms.items()}
        if not self.divisible_subs:     # no blocks to divide: the quantities as they are
            return dict(self.all_quantities)
        fwd = dict(self.divisible_subs)
        back = {}
        for s, rep in fwd.items():
            fresh = [f for f in sp.sympify(rep).free_symbols if f not in self.params]
            if len(fresh) == 1:  # rep = block * t  ->  t = s / block
                t = fresh[0]
                back[t] = sp.solve(sp.Eq(s, rep), t)[0]
        out = {}
        for k, v in self.all_quantities.items():
            e = sp.sympify(v).subs(fwd)
            e = sp.simplify(e.doit()) if e.has(sp.Sum) else sp.simplify(e)
            out[k] = sp.factor_terms(sp.expand(sp.simplify(e.subs(back))))
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
    def _compiled(self):
        return {k: compile_exact(v, self.params) for k, v in self.all_quantities.items()}

    def check_point(self, point: Mapping[str, object]) -> dict[str, int]:
        """Validate a point: every parameter present, an integer >= its domain's least value.
        Raises ``ValueError`` naming the parameter."""
        names = {p.name: p for p in self.params}
        unknown = [k for k in point if k not in names]
        if unknown:
            raise ValueError(f"{unknown[0]}: not a parameter of {self.name} (parameters: {', '.join(names)})")
        out = {}
        for name, s in names.items():
            if name not in point:
                if name in self.defaults:
                    out[name] = self.defaults[name]
                    continue
                raise ValueError(f"{name}: value missing for {self.name}")
            v = point[name]
            if s.is_integer is False or (s.is_integer is None):   # a real parameter (times, rates)
                try:
                    v = Fraction(v) if not isinstance(v, sp.Rational) else Fraction(int(v.p), int(v.q))
                except (TypeError, ValueError):
                    raise ValueError(f"{name}: must be a number, got {v!r}") from None
                lo = self.domains.get(s, 0)
                if v < lo or (s.is_positive and v <= 0):
                    raise ValueError(f"{name}: must be {'> 0' if s.is_positive else f'>= {lo}'}, got {point[name]}")
                out[name] = v
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer, sp.Integer)):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                else:
                    raise ValueError(f"{name}: must be an integer, got {v}")
            v = int(v)
            lo = self.domains.get(s, 1)
            if v < lo:
                raise ValueError(f"{name}: must be >= {lo}, got {v}")
            out[name] = v
        if self.validate is not None:
            self.validate(out)
        return out

    def evaluate(self, quantity: Optional[str] = None, **point):
        """Exact value(s) at a point: an int (or Fraction) for one quantity, else a dict of all."""
        pt = self.check_point(point)
        if quantity is not None:
            if quantity not in self._compiled:
                self[quantity]  # raises a KeyError naming the quantities
            return self._compiled[quantity](**pt)
        return {k: f(**pt) for k, f in self._compiled.items()}

    def evaluate_grid(self, quantity: str, **arrays) -> np.ndarray:
        """Vectorised exact evaluation over broadcast arrays (missing parameters take their defaults);
        returns an object array of Python ints/Fractions.  Every point is validated first."""
        names = [p.name for p in self.params]
        unknown = [k for k in arrays if k not in names]
        if unknown:
            raise ValueError(f"{unknown[0]}: not a parameter of {self.name} (parameters: {', '.join(names)})")
        cols = np.broadcast_arrays(*[np.asarray(arrays.get(n, self.defaults.get(n)), dtype=object) for n in names])
        for idx in np.ndindex(cols[0].shape):
            self.check_point({n: c[idx] for n, c in zip(names, cols)})
        if quantity not in self._grid:
            self[quantity]
        return self._grid[quantity](**dict(zip(names, cols)))

    @cached_property
    def _grid(self):
        return {k: compile_grid(v, self.params) for k, v in self.all_quantities.items()}

    def lambdify(self, quantity: str):
        """Fast floating-point evaluation for plots (NumPy); never used for counts."""
        return sp.lambdify([p for p in self.params], self[quantity], modules="numpy")

    # ----------------------------------------------------------------- display
    def _repr_latex_(self) -> str:
        from .printing.latex import model_to_latex  # printers sit at the edge
        return "$$" + model_to_latex(self, environment="aligned") + "$$"

    def __repr__(self) -> str:
        return f"Model({self.name!r})"
