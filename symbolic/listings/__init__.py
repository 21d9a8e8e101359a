r"""Annotated algorithm listings: a model's loop nest, each load and store line with its counts.

A :class:`Listing` is the algorithm a model counts, written line by line as its paper writes it
(standard attention, FlashAttention's Algorithm 1, FlashAttention-2's forward and backward loops, the tiled
GEMM's and GEMV's loop nests, split-KV decoding).  Each
:class:`Line` that moves data between HBM and on-chip memory carries, as SymPy expressions in the model's own
parameters (and the loop indices), the elements **one run** of the line reads and writes; how many times it
runs follows from the :class:`Loop` bounds around it.  From these the listing derives, per line, the
number of runs and the elements in all (:meth:`Listing.rows`), and at a point the exact totals by running
the loops (:meth:`Listing.count`): the verifier (``verify/checks/listings.py``) checks that the lines sum
to the model's formula and to the executor's counts, exactly, over the model's sweep.

Abbreviations (:attr:`Listing.defs`: ``T_r = ceil(N/B_r)``, ``h_i = min(B_r, N - (i-1) B_r)``) keep the
annotations short; they are printed with the listing and substituted before anything is summed.  The
loop indices are plain SymPy symbols of the listing (not parameters).

A listing names its model object (``Listing(model=GEMV_TILED, ...)``, the :class:`~symbolic.registry.ModelRef`
of ``symbolic.models.<family>``).  Listings are found as models and checks are (:func:`base.discovery.discover`):
every module-level :class:`Listing` of the modules of this package, and of the modules named by entry points of
the group ``tilebound.listings`` (a lab's own package ships its listing so).  Discovery builds no model
(:func:`discovered` answers from it alone); a listing is checked against its model when it is
first looked up (:func:`listing_for` checks the one it returns, :func:`listings` every one): a listing whose
model is not registered, or whose expressions use a symbol that is neither a parameter of its model nor one of
its loop indices (inside that loop) or abbreviations, is a :class:`~base.errors.BadInput` naming ``listing``,
the listing and the symbol.

:meth:`Listing.count` counts at a point by walking the loops while that takes at most :data:`WALK_BUDGET`
loop iterations, and by evaluating each line's symbolic total (derived once) beyond; its result says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Mapping, Optional

import sympy as sp

from base import discovery, validate
from base.errors import BadInput

from .. import registry
from ..evaluate import compile_env, to_python_number
from ..model import Model
from ..registry import ModelRef

__all__ = ["Line", "Loop", "Listing", "Count", "listing_for", "listings", "discovered", "index",
           "abbreviation", "Index",
           "WALK_BUDGET", "ENTRY_POINT_GROUP"]


class Index(sp.Symbol):
    """A loop index of a listing (``i``, ``j``, ``k``): a positive integer symbol, not a parameter."""


def index(name: str) -> sp.Symbol:
    """A loop index of a listing: a positive integer symbol (``i``, ``j``, ``k``)."""
    return Index(name, integer=True, positive=True)


def abbreviation(name: str, latex: str | None = None) -> sp.Symbol:
    """A symbol that abbreviates an expression in a listing's annotations (``T_r``, ``h_i``)."""
    return sp.Symbol(name, integer=True, positive=True)


@dataclass(frozen=True)
class Line:
    r"""One line of the algorithm: its text (LaTeX, math in ``$...$``) and the elements one run of it
    reads from and writes to HBM (``0`` for a line that moves nothing)."""

    text: str
    reads: object = 0
    writes: object = 0
    command: str = "State"       # algpseudocode: State, Return

    @property
    def moves(self) -> bool:
        return sp.sympify(self.reads) != 0 or sp.sympify(self.writes) != 0


@dataclass(frozen=True)
class Loop:
    """``for lo <= index <= hi``: the lines of ``body`` run once per value of ``index``."""

    index: sp.Symbol
    lo: object
    hi: object
    body: tuple
    text: str = ""               # the loop's head as the paper writes it (default: lo <= index <= hi)


@dataclass(frozen=True, eq=False)
class Listing:
    """A model's algorithm, annotated.  ``model`` is the model object it counts (its
    :class:`~symbolic.registry.ModelRef`, as ``symbolic.models.<family>`` binds it; not a name).  ``defs`` are
    the abbreviations ``(symbol, expression, meaning)`` in the order they may refer to each other; ``subs``
    replaces parameters the listing names but the model fixes (the paper's block sizes, ``N_k = N``)."""

    model: object
    title: str
    source: str
    require: str
    body: tuple
    defs: tuple = ()
    subs: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.model, (ModelRef, Model)):
            raise TypeError(f"a Listing names its model object (the ModelRef of symbolic.models.<family>), "
                            f"got {self.model!r}")

    # ------------------------------------------------------------------ structure
    def walk(self):
        """``(line, enclosing loops, line number)`` for every line, numbered as algpseudocode numbers
        them (a ``for`` and its ``end for`` count)."""
        out, number = [], [0]

        def visit(items, loops):
            for it in items:
                number[0] += 1
                if isinstance(it, Loop):
                    out.append((it, loops, number[0]))
                    visit(it.body, loops + (it,))
                    number[0] += 1               # end for
                else:
                    out.append((it, loops, number[0]))
        visit(self.body, ())
        return out

    def expand(self, expr) -> sp.Expr:
        """``expr`` with the abbreviations and ``subs`` substituted: in the model's parameters and the indices.
        Each expression is expanded once per listing (the derivations ask for the same abbreviations' values
        many times, and each substitution rebuilds SymPy's ``Min``/``Max``, which compare their arguments)."""
        e = sp.sympify(expr)
        done = self._expanded.get(e)
        if done is None:
            done = e
            for sym, value, _ in reversed(self.defs):
                done = done.xreplace({sym: value})
            done = self._expanded[e] = done.xreplace(dict(self.subs)) if self.subs else done
        return done

    @cached_property
    def _expanded(self) -> dict:
        """:meth:`expand`'s results so far, by expression."""
        return {}

    @cached_property
    def _defs_by_index(self) -> tuple:
        """``(abbreviations that depend on a loop index, those that do not)``, each ``((symbol, value), ...)``."""
        on = tuple((sym, value) for sym, value, _ in self.defs
                   if any(isinstance(s, Index) for s in self.expand(value).free_symbols))
        return on, tuple((sym, value) for sym, value, _ in self.defs if (sym, value) not in on)

    # ------------------------------------------------------------------ symbolic totals
    def times(self, loops) -> sp.Expr:
        """How many times a line inside ``loops`` runs (a product of trip counts, or a sum when a bound
        depends on an outer index), in the listing's abbreviations."""
        return _sum_over(sp.Integer(1), loops, self)

    def total(self, expr, loops) -> sp.Expr:
        """Elements a line moves in all: ``expr`` summed over its loops (partitions collapse:
        ``sum_i min(B, S - (i-1) B) = S`` over ``ceil(S/B)`` blocks)."""
        return _sum_over(sp.sympify(expr), loops, self)

    def rows(self):
        """``(line number, line, quantity, per run, runs, in all)`` for every moving line and quantity."""
        out = []
        for item, loops, n in self.walk():
            if isinstance(item, Line):
                for q in ("reads", "writes"):
                    e = sp.sympify(getattr(item, q))
                    if e != 0:
                        out.append((n, item, q, e, self.times(loops), self.total(e, loops)))
        return out

    def sums(self) -> dict:
        """``{quantity: the lines' sum}`` in the model's parameters (abbreviations substituted)."""
        out = {"reads": sp.Integer(0), "writes": sp.Integer(0)}
        for _, _, q, _, _, tot in self.rows():
            out[q] += self.expand(tot)
        return out

    # ------------------------------------------------------------------ counting at a point
    def count(self, point: Mapping[str, object], method: Optional[str] = None,
              budget: int | None = None) -> "Count":
        """``{"reads": int, "writes": int}`` at ``point`` (the model's parameter names, missing ones taking the
        model's defaults), as a :class:`Count` that says how it was counted (``.method``).

        The point is validated once, by the model (:meth:`symbolic.model.Model.check_point`: a
        :class:`~base.errors.BadInput` names the parameter); every expression is then evaluated on the
        validated values without further checks.  Two ways to count:

        * ``"walk"``: the loops run, each line's per-run elements evaluated exactly at every value of its
          indices and added up - no closed form used, which is what makes the listing a source of its own;
        * ``"sums"``: each moving line's symbolic total (:meth:`rows`' *in all*: its per-run elements summed
          over its loops, derived once per listing and cached), evaluated exactly at the point.

        By default (``method=None``) the walk runs while it takes at most ``budget`` loop iterations
        (:data:`WALK_BUDGET`: a loop's trip count is charged before it runs, so a walk past the budget stops
        at the loop that crosses it, and costs at most ``budget`` iterations), and the sums count beyond;
        ``.iterations`` is the walk's loop iterations either way (beyond the budget, the loops' trip counts
        evaluated exactly from :meth:`times`).  ``method="walk"`` walks whatever it costs.  The symbolic
        totals are derived on the first count that needs them."""
        if method not in (None, "walk", "sums"):
            raise BadInput("method", f"a listing counts by 'walk' or 'sums', got {method!r}")
        budget = WALK_BUDGET if budget is None else validate.integer("budget", budget, 0)
        pt = self._model().check_point(point)
        if method != "sums":
            walk = self._walk_plan
            env = {sym: pt[sym.name] for sym in walk.params}
            budgeted = method is None           # "walk" walks whatever it costs: left counts down from 0
            left, totals = [budget if budgeted else 0], [0, 0]
            walk.group.bind(env)
            try:
                _walk(walk.body, env, totals, left, budgeted)
            except _OverBudget:         # more loop iterations than the budget: count by the sums
                pass
            else:
                walked = budget - left[0] if budgeted else -left[0]
                return Count(to_python_number(totals[0]), to_python_number(totals[1]), "walk", walked)
        plan = self._sums_plan
        env = {sym: pt[sym.name] for sym in plan.params}
        iterations = max(0, to_python_number(plan.iterations.at(env)[0]))
        sums = plan.sums.at(env)
        reads = sum(v for v, q in zip(sums, plan.quantities) if q == "reads")
        writes = sum(v for v, q in zip(sums, plan.quantities) if q == "writes")
        return Count(to_python_number(reads), to_python_number(writes), "sums", iterations)

    def _model(self):
        """The :class:`~symbolic.model.Model` the listing counts (``model`` may be its ``ModelRef``)."""
        m = self.model
        return m.model if isinstance(m, ModelRef) else m

    @cached_property
    def _walk_plan(self) -> "_WalkPlan":
        """The loop nest :meth:`count` walks, compiled once: each loop's bounds and each moving line's per-run
        elements, in the model's parameters and the loop indices, the abbreviations written out as the
        listing states them (:meth:`literal`: nothing simplified, so the walk evaluates what the lines say)."""
        group = _Group()

        def plan(items):
            out = []
            for it in items:
                if isinstance(it, Loop):
                    out.append((it.index, _integral(group.add(self.literal(it.lo))),
                                _integral(group.add(self.literal(it.hi))), plan(it.body)))
                else:
                    per = [group.add(self.literal(e)) if e != 0 else None
                           for e in (sp.sympify(it.reads), sp.sympify(it.writes))]
                    if per != [None, None]:
                        out.append((None, per[0], per[1], None))
            return tuple(out)
        body = plan(self.body)
        return _WalkPlan(body=body, group=group, params=tuple(group.free))

    @cached_property
    def _sums_plan(self) -> "_SumsPlan":
        """What :meth:`count` evaluates beyond the walk's budget, derived once, on first need: each moving
        line's symbolic total (:meth:`rows`) and the walk's loop iterations (:meth:`times`), in the model's
        parameters (:meth:`expand`)."""
        loops = [(it, around) for it, around, _ in self.walk() if isinstance(it, Loop)]
        iterations = _Group()
        iterations.add(self.expand(sum((self.times(around + (it,)) for it, around in loops), sp.Integer(0))))
        sums, quantities = _Group(), []
        for it, around, _ in self.walk():          # each moving line's total, as rows() has it (not its runs)
            if isinstance(it, Line):
                for q in ("reads", "writes"):
                    e = sp.sympify(getattr(it, q))
                    if e != 0:
                        sums.add(self.expand(self.total(e, around)))
                        quantities.append(q)
        return _SumsPlan(iterations=iterations, sums=sums, quantities=tuple(quantities),
                         params=tuple(iterations.free | sums.free))

    def literal(self, expr) -> sp.Expr:
        """``expr`` with the abbreviations and ``subs`` written out and nothing evaluated: the tree as the
        listing states it (SymPy's ``Min``/``Max`` compare their arguments when built, seconds a listing; an
        exact evaluation gives the same value either way)."""
        e = sp.sympify(expr)
        with sp.evaluate(False):
            for sym, value, _ in reversed(self.defs):
                e = e.xreplace({sym: sp.sympify(value)})
            return e.xreplace(dict(self.subs)) if self.subs else e

    @property
    def name(self) -> str:
        """The listing's name: its model's."""
        return self.model.name


#: The most loop iterations :meth:`Listing.count` walks at one point before it evaluates the lines' sums
#: instead.  A walk costs 3-8 microseconds an iteration (the lines' per-run elements evaluated at each index,
#: the loop invariants once a point), so at most about 0.15 s a point.  Of the pinned points of ``python -m
#: verify --full``'s ``*.listing`` properties all but five are walked; the five are the paper-block attention
#: listings at ``N = 8192`` (65,792 iterations) and the GEMV points of 2**40 rows in 2**30-row tiles and of
#: 10**22 rows (66,625 iterations and more).
WALK_BUDGET = 20_000


class Count(dict):
    """``{"reads": ..., "writes": ...}`` with how it was counted: ``method`` (``"walk"``: the loops run;
    ``"sums"``: each line's symbolic total evaluated) and ``iterations`` (the loop iterations a walk takes at
    the point).  Equal to a plain dict of the same counts."""

    def __init__(self, reads, writes, method: str, iterations: int):
        super().__init__(reads=reads, writes=writes)
        self.method, self.iterations = method, iterations

    def __repr__(self) -> str:
        return f"Count({dict.__repr__(self)}, method={self.method!r}, iterations={self.iterations})"


class _Group:
    """Expressions compiled for evaluation at one point, their loop-invariant parts computed once.

    Each maximal subexpression free of the loop indices (``ceil(N / B_r)``, the paper's ``B_r = min(d,
    ceil(M / 4d))``) becomes a symbol whose value :meth:`bind` computes once per point; what is evaluated per
    loop iteration is then integer arithmetic on the indices.  The values are those of the expressions as
    written (a subexpression is evaluated, not rewritten)."""

    def __init__(self):
        self._hoisted: dict = {}         # subexpression -> its symbol
        self._consts: list = []          # (symbol, f(env)) in the order found
        self.free: set = set()           # the parameters used
        self.compiled: list = []         # f(env) of each expression added

    def add(self, expr):
        """``f(env)`` of ``expr``; ``env`` must hold the parameters and, once :meth:`bind` ran, the invariants."""
        expr = sp.sympify(expr)
        self.free |= {s for s in expr.free_symbols if not isinstance(s, Index)}
        with sp.evaluate(False):        # rebuilt as written: a Min of hoisted symbols is not compared again
            hoisted = self._hoist(expr)
        f = compile_env(hoisted)
        self.compiled.append(f)
        return f

    def _hoist(self, e):
        if not any(isinstance(s, Index) for s in e.free_symbols):
            if e.is_Atom:
                return e
            if e not in self._hoisted:
                sym = sp.Dummy("c")
                self._hoisted[e] = sym
                self._consts.append((sym, compile_env(e)))
            return self._hoisted[e]
        if e.is_Atom or isinstance(e, sp.Sum):       # a sum over an index: its limits bind it, kept whole
            return e
        return e.func(*(self._hoist(a) for a in e.args))

    def bind(self, env) -> None:
        """Put the values of the loop invariants at ``env``'s point into ``env``."""
        for sym, f in self._consts:
            env[sym] = f(env)

    def at(self, env) -> list:
        """The values of the group's expressions, which are all free of the loop indices, at ``env``'s point."""
        self.bind(env)
        return [f(env) for f in self.compiled]


@dataclass(frozen=True)
class _WalkPlan:
    body: tuple             # (index, lo, hi, body) for a loop; (None, reads, writes, None) for a moving line
    group: _Group           # the loop nest's expressions
    params: tuple           # the model's parameters they use


@dataclass(frozen=True)
class _SumsPlan:
    iterations: _Group      # one expression: the loop iterations of a walk
    sums: _Group            # each moving line's total
    quantities: tuple       # "reads" or "writes", for each of ``sums``
    params: tuple           # the model's parameters they use


def _walk(items, env, totals, left, budgeted) -> None:
    """Run the loops of a compiled plan, adding each moving line's elements per run into ``totals``;
    ``left[0]`` is the loop iterations still allowed (:class:`_OverBudget` past them)."""
    for index, a, b, body in items:
        if index is None:
            if a is not None:
                totals[0] += a(env)
            if b is not None:
                totals[1] += b(env)
            continue
        lo, hi = a(env), b(env)
        if hi >= lo:
            left[0] -= hi - lo + 1
            if left[0] < 0 and budgeted:
                raise _OverBudget
        outer = env.get(index, _UNSET)
        for v in range(lo, hi + 1):
            env[index] = v
            _walk(body, env, totals, left, budgeted)
        if outer is _UNSET:
            env.pop(index, None)
        else:
            env[index] = outer


def _integral(f):
    """A loop bound's ``f(env)`` as an int: an unevaluated tree can give an integral Fraction (``2 * (N/2)``)."""
    def bound(env):
        return to_python_number(f(env))
    return bound


class _OverBudget(Exception):
    """A walk went past its budget of loop iterations."""


_UNSET = object()


def _indexed(expr, listing: Listing):
    """``expr`` with the abbreviations that depend on a loop index (``h_i``, ``r_i``) written out."""
    e = sp.sympify(expr)
    for sym, value in reversed(listing._defs_by_index[0]):
        e = e.xreplace({sym: value})
    return e


def _partition(term, idx, lo, hi, listing: Listing):
    """``c * min(B, S - (idx - 1) B)`` summed over ``lo <= idx <= ceil(S/B)`` is ``c (S - (lo - 1) B)``,
    returned as ``(c, S - (lo - 1) B)``; ``None`` if ``term`` is not of that form."""
    skipped = sp.sympify(lo) - 1           # a tail lo..hi of the partition: S minus the skipped blocks
    if skipped.has(idx):
        return None
    full_hi = listing.expand(hi)
    coeff, rest = term.as_independent(idx, as_Add=False)
    if not isinstance(rest, sp.Min) or len(rest.args) != 2:
        return None
    for B, other in (rest.args, rest.args[::-1]):
        S = sp.expand(other + (idx - 1) * B)
        if not S.has(idx) and _identically_zero(full_hi - listing.expand(sp.ceiling(S / B))):
            # blocks lo..ceil(S/B) hold S - (lo - 1) B elements (lo - 1 < ceil(S/B): the causal masks'
            # skipped blocks never reach the last block, which every later query row sees)
            return coeff, _shorten(S, listing) - skipped * B
    return None


#: the points :func:`_identically_zero` tries before it asks SymPy to simplify: each symbol (in name order) at
#: the value of its column, small and large values mixed (a Min's other side wins at some of them)
_PROBES = ((7, 3, 11, 2, 5, 13, 17, 19, 23, 29, 31, 37), (4, 9, 2, 31, 6, 1, 8, 12, 3, 27, 14, 10),
           (1, 1000, 3, 1, 999, 2, 64, 1, 500, 7, 1, 33), (1000, 1, 999, 2, 1, 700, 1, 64, 3, 1, 250, 9),
           (2, 50, 1, 120, 5, 1, 300, 4, 1, 90, 2, 6), (333, 17, 1, 1, 45, 1, 9, 800, 1, 1, 71, 1),
           (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048), (2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1))


def _identically_zero(diff) -> bool:
    """``sp.simplify(diff) == 0``, asked only after ``diff`` is exactly zero at a few points in its symbols'
    domains (each symbol at a value its assumptions allow: positive integers): a difference nonzero at one
    point is not identically zero, and most candidates a partition is tried against fail there, far faster
    than ``simplify`` fails them."""
    diff = sp.sympify(diff)
    if diff == 0:
        return True
    free = sorted(diff.free_symbols, key=lambda x: x.name)
    try:
        at = compile_env(diff)
    except TypeError:                        # a node exact evaluation does not know: no shortcut
        at = None
    for values in _PROBES if at is not None else ():
        point = {}
        for k, sym in enumerate(free):
            v = values[k % len(values)] + k // len(values)
            if any(getattr(sp.Integer(v), f"is_{fact}") is not want for fact, want in sym.assumptions0.items()):
                point = None                 # a symbol this value is outside of: no shortcut
                break
            point[sym] = v
        if point is None:
            break
        try:
            value = at(point)
        except (ArithmeticError, ValueError):   # undefined there (a division by zero): try the next point
            continue
        if value != 0:
            return False                     # nonzero at a point of the domain
    return sp.simplify(diff) == 0


def _shorten(expr, listing: Listing):
    """``expr`` in the listing's index-free abbreviations where one matches exactly."""
    for sym, value in listing._defs_by_index[1]:
        expr = expr.xreplace({value: sym})
    return expr


def _sum_over(expr, loops, listing: Listing):
    """``expr`` summed over ``loops`` (innermost first): a term free of the index is multiplied by the trip
    count, a partition collapses (:func:`_partition`), anything else stays a ``Sum`` with the factors free
    of the index outside it."""
    e = sp.sympify(expr)
    for loop in reversed(loops):
        idx, lo, hi = loop.index, sp.sympify(loop.lo), sp.sympify(loop.hi)
        terms = []
        for t in sp.Add.make_args(e):
            te = sp.expand(_indexed(t, listing))
            if not te.has(idx):
                terms.append(t * (hi - lo + 1))
                continue
            parts = [_partition(u, idx, lo, hi, listing) for u in sp.Add.make_args(te)]
            if all(p is not None for p in parts):
                grouped: dict = {}
                for coeff, base in parts:                # (2 d + 2) (N - B_r I_j), not expanded
                    grouped[base] = grouped.get(base, 0) + coeff
                # unevaluated: SymPy would spread a number over the sum (2 (N - B_r I_j) -> 2 N - 2 B_r I_j)
                terms.append(sp.Add(*[sp.Mul(sp.factor_terms(c), b, evaluate=False) for b, c in grouped.items()]))
                continue
            free = [f for f in sp.Mul.make_args(t) if not _indexed(f, listing).has(idx)]
            bound = [f for f in sp.Mul.make_args(t) if _indexed(f, listing).has(idx)]
            terms.append(sp.Mul(*free) * sp.Sum(sp.Mul(*bound), (idx, lo, hi)))
        e = sp.Add(*terms)
    return sp.factor_terms(e) if not e.has(sp.Sum) else e


# ----------------------------------------------------------------------------------- discovery
PACKAGE = __name__
ENTRY_POINT_GROUP = "tilebound.listings"


@lru_cache(maxsize=1)
def _table() -> dict:
    """The listings discovered, by model name, each not yet checked (:func:`_checked` checks it on first use)."""
    return discovery.discover(PACKAGE, ENTRY_POINT_GROUP, Listing, "listing")


def _checked(listing: Listing) -> Listing:
    """``listing`` once :func:`_check` has passed it (checked once per listing object: the check builds its
    model, which is what makes checking every listing at discovery slow)."""
    if not listing.__dict__.get("_checked_against_model"):
        _check(listing)
        listing.__dict__["_checked_against_model"] = True      # a frozen dataclass: set as cached_property does
    return listing


def _check(listing: Listing) -> None:
    """A discovered listing names a registered model, and its expressions use that model's parameters, the
    listing's loop indices (inside their loops) and its abbreviations only: :class:`~base.errors.BadInput`
    naming ``listing`` otherwise, with the listing, its model and the symbol."""
    name = listing.model.name
    known = {r.name: r for r in registry.refs()}
    ref = known.get(name)
    if ref is None:
        raise BadInput("listing", f"the listing {listing.title!r} names the model {name!r}, which no formula "
                                  f"module defines{discovery.did_you_mean(name, known, 'models')}")
    if listing.model is not ref and listing.model is not ref.model:
        raise BadInput("listing", f"the listing {listing.title!r} names a model object called {name!r} that is "
                                  f"not the registered one: name the ModelRef that {ref.module} defines")
    params = {p.name for p in ref.model.params}
    indices = {it.index for it, _, _ in listing.walk() if isinstance(it, Loop)}
    where = f"the listing of {name} ({listing.title!r})"
    # the symbols each abbreviation (and each parameter the listing's subs replaces) stands for, written out
    # as expand() writes it out: set work, not SymPy substitution
    stands_for = {k: sp.sympify(v).free_symbols for k, v in listing.subs.items() if isinstance(k, sp.Symbol)}
    stands_for.update({sym: sp.sympify(value).free_symbols for sym, value, _ in listing.defs})
    leaves: dict = {}

    def leaf(s, seen=()):
        if s not in stands_for:
            return {s}
        if s not in leaves:
            if s in seen:
                raise BadInput("listing", f"{where}: the abbreviation {s.name} is defined through itself")
            leaves[s] = set().union(*(leaf(t, seen + (s,)) for t in stands_for[s]))
        return leaves[s]

    def uses(expr, bound, what):
        free = set().union(*(leaf(t) for t in sp.sympify(expr).free_symbols))
        for s in sorted(free, key=str):
            if s.name in params or s in bound:
                continue
            kind = ("the index of no loop around it" if s in indices else
                    "a plain symbol named like a loop index (make indices with symbolic.listings.index)"
                    if s.name in {i.name for i in indices} else
                    "neither a parameter of the model nor an index or abbreviation of the listing")
            raise BadInput("listing", f"{where}: {what} uses {s.name}, {kind} "
                                      f"(parameters: {', '.join(sorted(params))})")

    for sym, value, _ in listing.defs:
        uses(value, indices, f"the abbreviation {sym.name}")
    for it, loops, n in listing.walk():
        bound = {lp.index for lp in loops}
        if isinstance(it, Loop):
            uses(it.lo, bound, f"the bounds of the loop over {it.index.name} (line {n})")
            uses(it.hi, bound, f"the bounds of the loop over {it.index.name} (line {n})")
        else:
            for q in ("reads", "writes"):
                uses(getattr(it, q), bound, f"line {n}'s {q}")


def listings() -> dict:
    """``{model name: Listing}`` of every listing: the module-level :class:`Listing` objects of the modules of
    this package and of the entry points of the group ``tilebound.listings`` (:func:`base.discovery.discover`,
    as models and checks are found), each checked against its model (:func:`_check`)."""
    return {name: _checked(listing) for name, listing in _table().items()}


def discovered() -> dict:
    """``{model name: Listing}`` of every listing as discovered, none checked against its model yet and no
    model built (a listing names its model by its :class:`~symbolic.registry.ModelRef`): for a caller that
    needs the names, titles and model objects now and a listing later - it looks that one up with
    :func:`listing_for`, which checks it."""
    return dict(_table())


def listing_for(name: str) -> Optional[Listing]:
    """The listing of the model called ``name``, checked against its model (:func:`_check`), or ``None``."""
    found = _table().get(name)
    return None if found is None else _checked(found)
