"""Every check, found by discovery: no list to edit.

A *check module* binds :class:`~verify.core.Check` and :class:`~verify.core.Property` objects at
its top level (alone, or in a top-level list or tuple).  The registry imports every module of the
package :mod:`verify.checks` and every module named by an entry point of the group
``tilebound.checks``; a module that fails to import is an error that names it.  The models come from
:mod:`symbolic.registry` the same way, so a course's package adds both with no edit here.
"""

from __future__ import annotations

import fnmatch
from functools import lru_cache

from base.errors import BadInput
from symbolic.registry import discover

from .core import Check, Property

__all__ = ["all_checks", "select", "checks_of", "ENTRY_POINT_GROUP", "PACKAGE"]

ENTRY_POINT_GROUP = "tilebound.checks"
PACKAGE = "verify.checks"



@lru_cache(maxsize=None)
def _found() -> dict:
    return discover(PACKAGE, ENTRY_POINT_GROUP, (Check, Property), "check")


def all_checks() -> list:
    return list(_found().values())


def checks_of(model_name: str) -> list:
    """The checks and properties bound to the model called ``model_name``."""
    return [c for c in all_checks() if c.model is not None and c.model.name == model_name]


def select(pattern):
    """Checks whose name equals ``pattern``, matches it as a glob, or starts with it as a family
    (``attention.fa1`` -> ``attention.fa1.*``); all for ``None``; a list of patterns selects the checks
    any of them selects, in registry order.  :class:`BadInput` when a pattern selects none."""
    checks = all_checks()
    if not pattern:
        return checks
    if isinstance(pattern, (list, tuple)):
        chosen = {c.name for p in pattern for c in select(p)}
        return [c for c in checks if c.name in chosen]
    exact = [c for c in checks if c.name == pattern]
    if exact:
        return exact
    if any(ch in pattern for ch in "*?["):
        hits = [c for c in checks if fnmatch.fnmatchcase(c.name, pattern)]
    else:
        hits = [c for c in checks if c.name.startswith(pattern.rstrip(".") + ".")]
    if not hits:
        import difflib
        near = difflib.get_close_matches(pattern, [c.name for c in checks], n=3, cutoff=0.3)
        raise BadInput("model", f"no check matches {pattern!r}" + (f"; did you mean {', '.join(near)}?" if near else ""))
    return hits
