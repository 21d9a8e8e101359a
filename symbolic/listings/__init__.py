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

Listings are found by model name (:func:`listing_for`) in the modules of this package; a module lists
its listings in a module-level ``LISTINGS`` tuple.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Optional

import sympy as sp

__all__ = ["Line", "Loop", "Listing", "listing_for", "listings", "index", "abbreviation", "Index"]


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


@dataclass(frozen=True)
class Listing:
    """A model's algorithm, annotated.  ``defs`` are the abbreviations ``(symbol, expression, meaning)``
    in the order they may refer to each other; ``subs`` replaces parameters the listing names but the model
    fixes (the paper's block sizes, ``N_k = N``)."""

    model: str
    title: str
    source: str
    require: str
    body: tuple
    defs: tuple = ()
    subs: Mapping = field(default_factory=dict)

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
        """``expr`` with the abbreviations and ``subs`` substituted: in the model's parameters and the indices."""
        e = sp.sympify(expr)
        for sym, value, _ in reversed(self.defs):
            e = e.xreplace({sym: value})
        return e.xreplace(dict(self.subs)) if self.subs else e

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

    # ------------------------------------------------------------------ counting by running the loops
    def count(self, point: Mapping[str, int]) -> dict:
        """``{"reads": int, "writes": int}`` at ``point`` (the model's parameter names): the loops run, each
        line's per-run elements evaluated exactly and added up - no closed form used."""
        compiled = _compiled(self)
        totals = {"reads": 0, "writes": 0}

        def run(items, env):
            for it in items:
                if isinstance(it, Loop):
                    lo, hi = compiled[id(it)]
                    a, b = lo(**_args(lo, env)), hi(**_args(hi, env))
                    for v in range(a, b + 1):
                        run(it.body, {**env, it.index.name: v})
                else:
                    for q in ("reads", "writes"):
                        f = compiled.get((id(it), q))
                        if f is not None:
                            totals[q] += f(**_args(f, env))
        run(self.body, dict(point))
        return totals


def _args(f, env):
    return {n: env[n] for n in f.names}


_COMPILED: dict = {}


def _compiled(listing: Listing) -> dict:
    key = id(listing)
    if key not in _COMPILED:
        from ..evaluate import compile_exact
        table = {}

        def visit(items):
            for it in items:
                if isinstance(it, Loop):
                    table[id(it)] = (compile_exact(listing.expand(it.lo)), compile_exact(listing.expand(it.hi)))
                    visit(it.body)
                else:
                    for q in ("reads", "writes"):
                        e = sp.sympify(getattr(it, q))
                        if e != 0:
                            table[(id(it), q)] = compile_exact(listing.expand(e))
        visit(listing.body)
        _COMPILED[key] = (listing, table)
    return _COMPILED[key][1]


def _indexed(expr, listing: Listing):
    """``expr`` with the abbreviations that depend on a loop index (``h_i``, ``r_i``) written out."""
    e = sp.sympify(expr)
    for sym, value, _ in reversed(listing.defs):
        if any(isinstance(s, Index) for s in listing.expand(value).free_symbols):
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
        if not S.has(idx) and sp.simplify(full_hi - listing.expand(sp.ceiling(S / B))) == 0:
            # blocks lo..ceil(S/B) hold S - (lo - 1) B elements (lo - 1 < ceil(S/B): the causal masks'
            # skipped blocks never reach the last block, which every later query row sees)
            return coeff, _shorten(S, listing) - skipped * B
    return None


def _shorten(expr, listing: Listing):
    """``expr`` in the listing's index-free abbreviations where one matches exactly."""
    for sym, value, _ in listing.defs:
        if not any(isinstance(s, Index) for s in listing.expand(value).free_symbols):
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
@lru_cache(maxsize=1)
def _table() -> dict:
    out = {}
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{mod.name}")
        for listing in getattr(module, "LISTINGS", ()):
            if listing.model in out:
                raise TypeError(f"two listings for {listing.model}: {module.__name__} and another module")
            out[listing.model] = listing
    return out


def listings() -> dict:
    """``{model name: Listing}`` of every listing."""
    return dict(_table())


def listing_for(name: str) -> Optional[Listing]:
    """The listing of the model called ``name``, or ``None``."""
    return _table().get(name)
