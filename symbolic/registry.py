"""Every model, found by discovery: no list to edit.

A model is defined in a *formula module* as a module-level :class:`ModelRef` (usually through the
:func:`defines` decorator on a zero-argument builder).  The registry finds the formula modules:

* every module of the package :mod:`symbolic.models` (``pkgutil.iter_modules``), and
* every module named by an entry point of the group ``tilebound.models`` in an installed
  distribution (a course's or a lab's own package; ``examples/user_model`` is one).

Each such module is imported and every :class:`ModelRef` bound at its top level (alone, or in a
top-level list or tuple) is a model.  A module that fails to import is an error that names it, never
a silent skip; two models of one name are an error naming both modules.  Building a model (SymPy work)
waits until it is first used, so ``tilebound list`` stays cheap.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil
from functools import lru_cache
from typing import Callable, Iterable

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


def scan_module(module, kind: type) -> list:
    """The objects of type ``kind`` bound at the top level of ``module`` (alone, or in a top-level
    list or tuple), in definition order, each once."""
    out, seen = [], set()
    for value in vars(module).values():
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, kind) and id(item) not in seen:
                seen.add(id(item))
                out.append(item)
    return out


def _import(modname: str, where: str):
    try:
        return importlib.import_module(modname)
    except Exception as exc:  # noqa: BLE001  any failure names the module
        raise BadInput("model", f"{where} module {modname!r} failed to import: {type(exc).__name__}: {exc}") from exc


def discover(package: str, group: str, kind: type, what: str) -> dict:
    """``{name: object}`` of every ``kind`` in the modules of ``package`` and of the entry points of
    ``group``.  Shared by the model and the check registries."""
    pkg = _import(package, what)
    modules = [f"{package}.{m.name}" for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name)
               if not m.name.startswith("_")]
    from importlib.metadata import entry_points
    plugins = [(ep.value.split(":")[0], ep.name) for ep in entry_points(group=group)]
    found: dict = {}
    where: dict = {}
    for modname, origin in [(m, m) for m in modules] + plugins:
        mod = _import(modname, what if origin == modname else f"{what} (entry point {origin!r} of {group})")
        for obj in scan_module(mod, kind):
            if obj.name in found and found[obj.name] is not obj:
                raise BadInput("model", f"two {what}s are named {obj.name!r}: in {where[obj.name]} and {modname}")
            found[obj.name], where[obj.name] = obj, modname
    return found


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
    return difflib.get_close_matches(name, names(), n=n, cutoff=0.3)


def _unknown(name: str) -> BadInput:
    near = nearest(name)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(names())}"
    return BadInput("model", f"unknown model {name!r}{hint}")


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
    """Names selected by a pattern or a list of patterns, in registry order; all for ``None`` or an
    empty list.  A pattern that is a model's exact name selects that model alone; a glob
    (``attention.*.causal``) selects what it matches; any other text selects the family it prefixes
    (``attention.fa1`` -> ``attention.fa1.*``).  A pattern that selects nothing is :class:`BadInput`."""
    if patterns is None:
        return names()
    if isinstance(patterns, str):
        patterns = [patterns]
    pats = list(patterns)
    if not pats:
        return names()
    known = names()
    chosen: set = set()
    for p in pats:
        if not isinstance(p, str):
            raise BadInput("model", f"a model pattern is a string, got {p!r}")
        if p in known:
            hits = [p]
        elif any(c in p for c in "*?["):
            hits = [n for n in known if fnmatch.fnmatchcase(n, p)]
        else:
            hits = [n for n in known if n.startswith(p.rstrip(".") + ".")]
        if not hits:
            raise _unknown(p)
        chosen.update(hits)
    return [n for n in known if n in chosen]
