"""Every model, found by discovery: no list to edit.

A model is defined in a *formula module* as a module-level :class:`ModelRef` (usually through the
:func:`defines` decorator on a zero-argument builder).  The registry finds the formula modules:

* every module of the package :mod:`symbolic.models` (``pkgutil.iter_modules``), and
* every module named by an entry point of the group ``tilebound.models`` in an installed
  distribution (a course's or a lab's own package; ``examples/user_model`` is one).

Each such module is imported and every :class:`ModelRef` bound at its top level (alone, or in a
top-level list or tuple) is a model (:func:`base.discovery.discover`, the one discovery that checks,
listings and subcommands use too).  A module that fails to import is an error that names it, never
a silent skip; two models of one name are an error naming both modules.  Building a model (SymPy work)
waits until it is first used, so ``tilebound list`` stays cheap.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

from base import discovery
from base.discovery import discover, scan_module
from base.errors import BadInput

__all__ = ["ModelRef", "defines", "get", "names", "summaries", "select", "nearest", "refs", "discover",
           "scan_module", "ENTRY_POINT_GROUP", "PACKAGE"]

ENTRY_POINT_GROUP = "tilebound.models"
PACKAGE = "symbolic.models"


class ModelRef:
    """A named model that is built on first use: ``ref.model`` is the :class:`~symbolic.model.Model`,
    and any other attribute is the model's (``ref.evaluate(...)``, ``ref.params``)."""

    def __init__(self, name: str, summary: str, build: Callable[[], object]):
        self.name, self.summary, self._build, self._model = name, summary, build, None
        self.module = getattr(build, "__module__", None)

    @property
    def model(self):
        if self._model is None:
            m = self._build()
            if getattr(m, "name", None) != self.name:
                raise TypeError(f"model {self.name!r} ({self.module}) built a model named {getattr(m, 'name', m)!r}")
            self._model = m
        return self._model

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.model, attr)

    def __getitem__(self, key):
        return self.model[key]

    def __repr__(self) -> str:
        return f"ModelRef({self.name!r})"


def defines(name: str, summary: str):
    """Decorator on a zero-argument builder: ``@defines("attention.fa1.fwd", "...")`` makes the
    module-level name a :class:`ModelRef` that discovery finds."""
    def deco(build: Callable[[], object]) -> ModelRef:
        return ModelRef(name, summary, build)
    return deco


@lru_cache(maxsize=None)
def _refs() -> dict:
    return discover(PACKAGE, ENTRY_POINT_GROUP, ModelRef, "model")


def refs() -> list[ModelRef]:
    return list(_refs().values())


def names() -> list[str]:
    return list(_refs())


def summaries() -> list[tuple[str, str]]:
    return [(r.name, r.summary) for r in _refs().values()]


def nearest(name: str, n: int = 3) -> list[str]:
    return discovery.nearest(name, names(), n=n)


def _unknown(name: str) -> BadInput:
    return BadInput("model", f"unknown model {name!r}{discovery.did_you_mean(name, names())}")


def get(name: str):
    """The :class:`~symbolic.model.Model` called ``name``; :class:`BadInput` naming ``model`` (with
    the nearest names) otherwise."""
    if not isinstance(name, str):
        raise BadInput("model", f"a model name is a string, got {name!r}")
    ref = _refs().get(name)
    if ref is None:
        raise _unknown(name)
    return ref.model


def select(patterns: str | Iterable[str] | None = None) -> list[str]:
    """Model names selected by a pattern or a list of patterns, in registry order (:func:`base.discovery.select`:
    a name, a glob, or a family prefix; all for ``None``; a pattern selecting nothing is :class:`BadInput`)."""
    return discovery.select(names(), patterns, "model")
