"""The annotated algorithm listings as a third source: per-line sum = formula = executed count.

For every listing of :mod:`symbolic.listings` (standard attention, FlashAttention's Algorithm 1 in paper order,
FlashAttention-2's forward and backward loops, their causal and paper-block variants, the tiled GEMM's and GEMV's
loop nests, split-KV decoding packed and unpacked) a :class:`~verify.core.Property`
``<model>.listing`` holds at a point when

* the listing's lines (:meth:`symbolic.listings.Listing.count`) give the model's ``reads`` and ``writes``
  (``model.evaluate``), exactly, and
* both equal what the model's own executor counts (the :class:`~verify.core.Check` named like the model).

Where running the listing's loops takes at most :data:`symbolic.listings.WALK_BUDGET` loop iterations, the
lines are counted so - each load and store line's elements added up per run, no closed form used: a third
source beside formula and executor.  Beyond the budget (the paper-block attention listings at ``N = 4096``,
GEMV at ``2**40`` rows in ``2**30``-row tiles, decoding at ``10**9`` keys) each line's symbolic total,
derived once from the listing, is evaluated instead; a disagreement's message says which was done.

The points are that check's own: its pinned grid and its hypothesis strategy (fewer draws), so the listing
is checked over the model's sweep.  The listings and checks are both found by discovery (a lab's package
adds its listing through the ``tilebound.listings`` entry point and gets its ``<model>.listing`` here).
Finding the properties builds no model (:func:`symbolic.listings.discovered`); a listing is checked against
its model (:func:`symbolic.listings.listing_for`) when its property first runs, and a listing its model
refuses stops that run with the :class:`~base.errors.BadInput` naming it.
"""

from __future__ import annotations

from symbolic.listings import WALK_BUDGET, discovered, listing_for

from ..core import Check, Property
from ..registry import checks_of

QUANTITIES = ("reads", "writes")


def _primary(name: str) -> Check:
    found = [c for c in checks_of(name) if isinstance(c, Check) and c.name == name]
    if not found:
        raise LookupError(f"no check named {name}: a listing is checked against its model's executor")
    return found[0]


def _holds(name):
    def holds(point):
        listing = listing_for(name)          # checked against its model on first use (builds the model)
        check = _primary(name)
        pt = {k: v for k, v in point.items() if k not in check.extra}
        lines = listing.count(pt)            # validated once, by the model
        formula = listing.model.evaluate(tuple(QUANTITIES), **pt)
        got = check.execute(point)
        executed = {q: got[q] for q in QUANTITIES if q in got}
        bad = [f"{q}: lines ({lines.method}, {lines.iterations:,} loop iterations) {lines[q]}, "
               f"formula {formula[q]}, executed {executed.get(q)}" for q in QUANTITIES
               if not lines[q] == formula[q] == executed.get(q)]
        return "; ".join(bad) or None
    return holds


def _grid(name, full):
    listing_for(name)                        # a listing its model refuses fails the run here, naming it
    return _primary(name).grid(full)


def _property(listing) -> Property:
    """``<model>.listing`` of a discovered listing: its name, title and model object are read now, the listing
    is looked up (and checked against its model) when the property first runs, so that finding the properties
    (``python -m verify --list``, ``--model X``) builds no model."""
    name = listing.name
    return Property(
        name=f"{name}.listing", holds=_holds(name), model=listing.model,
        grid=lambda full: _grid(name, full), grid_points=lambda full: sum(1 for _ in _primary(name).grid(full)),
        strategy=lambda: _strategy(name), draws=8, draws_full=80,
        size=lambda p: _primary(name).size_of(p),
        description=(f"{listing.title}: the annotated lines' reads and writes = the formula = the executor's "
                     f"(the loops run up to {WALK_BUDGET:,} iterations, else each line's sum)"))


def _strategy(name):
    s = _primary(name).strategy
    return s() if callable(s) and not hasattr(s, "example") else s


LISTING_PROPERTIES = tuple(_property(lst) for lst in discovered().values())
