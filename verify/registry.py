"""Every check, found by discovery: no list to edit.

A *check module* binds :class:`~verify.core.Check` and :class:`~verify.core.Property` objects at
its top level (alone, or in a top-level list or tuple).  The registry imports every module of the
package :mod:`verify.checks` and every module named by an entry point of the group
``tilebound.checks``; a module that fails to import is an error that names it.  The models come from
:mod:`symbolic.registry` the same way, so a course's package adds both with no edit here.
"""

from __future__ import annotations

from functools import lru_cache

from base import discovery

from .core import Check, Property

__all__ = ["all_checks", "select", "checks_of", "check_for", "lookup_order", "covers", "ENTRY_POINT_GROUP", "PACKAGE"]

ENTRY_POINT_GROUP = "tilebound.checks"
PACKAGE = "verify.checks"



@lru_cache(maxsize=None)
def _found() -> dict:
    return discovery.discover(PACKAGE, ENTRY_POINT_GROUP, (Check, Property), "check")


def all_checks() -> list:
    return list(_found().values())


def checks_of(model_name: str) -> list:
    """The checks and properties bound to the model called ``model_name``."""
    return [c for c in all_checks() if c.model is not None and c.model.name == model_name]


def covers(check, quantity: str) -> bool:
    """Does ``check`` check ``quantity`` (``total`` is covered by ``reads`` and ``writes``, the model's own
    definition of it)?"""
    qs = set(getattr(check, "quantities", ()))          # a Property checks no quantity by name
    return quantity in qs or (quantity == "total" and {"reads", "writes"} <= qs)


def _rank(check, model_name: str, quantity) -> tuple:
    """How well ``check`` serves :func:`check_for`: one that checks ``quantity`` first, then the one
    named like the model (``(False, False)`` is the best, and only the check of that name has it)."""
    return (quantity is not None and not covers(check, quantity), check.name != model_name)


def check_for(model, quantity: str | None = None, kind=Check):
    """The :class:`~verify.core.Check` of ``model`` - one that checks ``quantity`` first, then the one
    named like the model, then the first in registry order - or ``None`` (what a plot's executed points
    and the grader run).  ``kind=(Check, Property)`` takes a property too (the start of a model's HTML
    page is its first grid point).

    Once every check is discovered this is a look-up in them; before, the check modules are imported one
    at a time (:func:`lookup_order`) and the search stops at the check named like the model when it checks
    ``quantity`` - no other can rank before it - so ``tilebound grade`` does not import and build every
    check (the listings' properties build every model that has a listing).  Only when no such check exists
    are all the modules imported; the answer is the same either way (``tests/unit/test_check_lookup.py``)."""
    info = getattr(_found, "cache_info", None)      # None: a test put its own registry in (tests/toy_models.py)
    if info is None or info().currsize:
        checks = [c for c in checks_of(model.name) if isinstance(c, kind)]
        checks.sort(key=lambda c: _rank(c, model.name, quantity))
        return checks[0] if checks else None
    return _check_for_lazily(model.name, quantity, kind)


def _check_for_lazily(model_name: str, quantity: str | None = None, kind=Check):
    found = []                     # (rank, registry position, check)
    for position, source in lookup_order(model_name):
        for obj in discovery.objects_of(source, kind, "check"):
            if obj.model is not None and obj.model.name == model_name:
                found.append((_rank(obj, model_name, quantity), position, obj))
        if any(rank == (False, False) for rank, _, _ in found):
            break
    found.sort(key=lambda f: f[:2])
    return found[0][2] if found else None


def _words(name: str) -> set:
    return set(name.replace("_", ".").split("."))


def lookup_order(model_name: str) -> list:
    """``(registry position, source)`` of every check module (:func:`base.discovery.sources`), in the order
    :func:`check_for` imports them: first the modules of :mod:`verify.checks` named after a word of the
    model's name or after its formula module (``decode.mla`` -> ``decode``, ``mla``; ``softmax.naive``,
    defined in ``symbolic.models.rows`` -> ``rows``), then the entry points' (a course's own checks), then
    the rest in registry order."""
    from symbolic import registry as models
    ref = next((r for r in models.refs() if r.name == model_name), None)
    words = _words(model_name) | ({(ref.module or "").rsplit(".", 1)[-1]} if ref is not None else set())
    indexed = list(enumerate(discovery.sources(PACKAGE, ENTRY_POINT_GROUP, "check")))

    def place(item):
        position, (modname, _, _) = item
        if not modname.startswith(PACKAGE + "."):
            return (1, position)
        stem = modname[len(PACKAGE) + 1:]
        return (0 if stem in words or _words(stem) & words else 2, position)
    return sorted(indexed, key=place)


def select(pattern):
    """Checks whose name equals ``pattern``, matches it as a glob, or starts with it as a family
    (``attention.fa1`` -> ``attention.fa1.*``); all for ``None``; a list of patterns selects the checks
    any of them selects, in registry order (:func:`base.discovery.select`).  :class:`BadInput` naming
    ``model`` when a pattern selects none, or is empty (an unset shell variable)."""
    checks = all_checks()
    chosen = set(discovery.select([c.name for c in checks], pattern, "model"))
    return [c for c in checks if c.name in chosen]
