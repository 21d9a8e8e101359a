"""The annotated algorithm listings as a third source: per-line sum = formula = executed count.

For every listing of :mod:`symbolic.listings` (standard attention, FlashAttention's Algorithm 1 in paper order,
FlashAttention-2's forward and backward loops, their causal and paper-block variants, the tiled GEMM's and GEMV's
loop nests, split-KV decoding packed and unpacked) a :class:`~verify.core.Property`
``<model>.listing`` holds at a point when

* running the listing's loops and adding up each load and store line's elements
  (:meth:`symbolic.listings.Listing.count`, no closed form) gives the model's ``reads`` and ``writes``
  (``model.evaluate``), exactly, and
* both equal what the model's own executor counts (the :class:`~verify.core.Check` named like the model).

The points are that check's own: its pinned grid and its hypothesis strategy (fewer draws), so the listing
is checked over the model's sweep.
"""

from __future__ import annotations

from symbolic import registry as models
from symbolic.listings import listings

from ..core import Check, Property

QUANTITIES = ("reads", "writes")


def _primary(name: str) -> Check:
    from ..registry import checks_of
    found = [c for c in checks_of(name) if isinstance(c, Check) and c.name == name]
    if not found:
        raise LookupError(f"no check named {name}: a listing is checked against its model's executor")
    return found[0]


def _holds(listing):
    def holds(point):
        check = _primary(listing.model)
        pt = {k: v for k, v in point.items() if k not in check.extra}
        model = models.get(listing.model)
        lines = listing.count(model.check_point(pt))
        formula = {q: model.evaluate(q, **pt) for q in QUANTITIES}
        got = check.execute(point)
        executed = {q: got[q] for q in QUANTITIES if q in got}
        bad = [f"{q}: lines {lines[q]}, formula {formula[q]}, executed {executed.get(q)}" for q in QUANTITIES
               if not lines[q] == formula[q] == executed.get(q)]
        return "; ".join(bad) or None
    return holds


def _property(listing) -> Property:
    ref = next(r for r in models.refs() if r.name == listing.model)
    return Property(
        name=f"{listing.model}.listing", holds=_holds(listing), model=ref,
        grid=lambda full, name=listing.model: _primary(name).grid(full),
        strategy=lambda name=listing.model: _strategy(name), draws=8, draws_full=80,
        size=lambda p, name=listing.model: _primary(name).size_of(p),
        description=f"{listing.title}: the annotated lines' reads and writes = the formula = the executor's")


def _strategy(name):
    s = _primary(name).strategy
    return s() if callable(s) and not hasattr(s, "example") else s


LISTING_PROPERTIES = tuple(_property(lst) for lst in listings().values())
