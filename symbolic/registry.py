"""Every model by name.  Families register factories (built on first use, so ``list`` is cheap)."""

from __future__ import annotations

import difflib
import fnmatch
from typing import Callable, Iterable

__all__ = ["register", "get", "names", "summaries", "select", "nearest"]

_FACTORIES: dict[str, tuple[str, Callable]] = {}
_BUILT: dict[str, object] = {}
_FAMILIES = ("symbolic.attention", "symbolic.latency", "symbolic.gemm")


def register(name: str, summary: str):
    """Decorator: ``@register("attention.fa1.fwd", "...")`` on a zero-argument factory."""
    def deco(factory: Callable):
        _FACTORIES[name] = (summary, factory)
        return factory
    return deco


def _load_families() -> None:
    import importlib
    for mod in _FAMILIES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # a family not written yet
            if exc.name != mod:
                raise


def names() -> list[str]:
    _load_families()
    return list(_FACTORIES)


def summaries() -> list[tuple[str, str]]:
    _load_families()
    return [(k, v[0]) for k, v in _FACTORIES.items()]


def nearest(name: str, n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, names(), n=n, cutoff=0.3)


def get(name: str):
    """The model called ``name``; ``ValueError`` naming ``model`` (and the nearest names) otherwise."""
    _load_families()
    if name not in _FACTORIES:
        near = nearest(name)
        hint = f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(_FACTORIES)}"
        raise ValueError(f"model: unknown model {name!r}{hint}")
    if name not in _BUILT:
        _BUILT[name] = _FACTORIES[name][1]()
    return _BUILT[name]


def select(patterns: Iterable[str] | None = None) -> list[str]:
    """Names matching any glob pattern (or substring); all when ``patterns`` is empty."""
    all_names = names()
    pats = list(patterns or [])
    if not pats:
        return all_names
    out = [n for n in all_names if any(fnmatch.fnmatch(n, p) or p in n for p in pats)]
    return out
