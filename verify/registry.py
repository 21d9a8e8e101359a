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

__all__ = ["all_checks", "select", "checks_of", "check_for", "ENTRY_POINT_GROUP", "PACKAGE"]

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
    qs = set(check.quantities)
    return quantity in qs or (quantity == "total" and {"reads", "writes"} <= qs)


def check_for(model, quantity: str | None = None):
    """The :class:`~verify.core.Check` of ``model`` - one that checks ``quantity`` first, then the one
    named like the model - or ``None`` (what a plot's executed points and the grader run)."""
    checks = [c for c in checks_of(model.name) if isinstance(c, Check)]
    checks.sort(key=lambda c: (quantity is not None and not covers(c, quantity), c.name != model.name))
    return checks[0] if checks else None


def select(pattern):
    """Checks whose name equals ``pattern``, matches it as a glob, or starts with it as a family
    (``attention.fa1`` -> ``attention.fa1.*``); all for ``None``; a list of patterns selects the checks
    any of them selects, in registry order (:func:`base.discovery.select`).  :class:`BadInput` naming
    ``model`` when a pattern selects none, or is empty (an unset shell variable)."""
    checks = all_checks()
    chosen = set(discovery.select([c.name for c in checks], pattern, "model"))
    return [c for c in checks if c.name in chosen]
