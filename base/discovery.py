"""One way to plug in: discovery by package scan plus entry points, one name selector, one nearest-name hint.

Models, checks, listings and subcommands are all found here the same way (SymPy-style registries, no list
to edit):

* every module of a package of ours (``pkgutil.iter_modules``; names starting ``_`` are private), and
* every module named by an entry point of a group (``tilebound.models``, ``tilebound.checks``,
  ``tilebound.listings``, ``tilebound.commands``) in an installed distribution.  An entry point's value
  may name a module (``lab.models``) or an attribute of one (``lab.models:SOFTMAX``); the attribute is
  then the only object taken from it.

Each module is imported and every object of the wanted type bound at its top level (alone, or in a
top-level list or tuple) is found.  A module that fails to import is a :class:`PluginError` naming it,
whose ``__cause__`` is the contributor's own exception with its traceback; two objects of one name are
an error naming both modules.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil
from typing import Iterable, Sequence

from .errors import BadInput

__all__ = ["PluginError", "discover", "sources", "objects_of", "scan_module", "select", "nearest", "did_you_mean"]


class PluginError(BadInput):
    """A module of ours or a plugin's failed to import.  Its ``__cause__`` is the original exception
    (the command line prints its traceback under ``--debug``)."""


def scan_module(module, kind) -> list:
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


def _import(modname: str, where: str, param: str):
    try:
        return importlib.import_module(modname)
    except Exception as exc:  # noqa: BLE001  any failure names the module; the cause keeps the traceback
        raise PluginError(param, f"{where} module {modname!r} failed to import: {type(exc).__name__}: {exc}"
                                 " (run with --debug for its traceback)") from exc


def _entry_points(group: str) -> list:
    from importlib.metadata import entry_points
    return sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))


def sources(package: str | None, group: str, what: str) -> list:
    """``(module name, attribute or None, description)`` of every source :func:`discover` reads, in its
    order: the modules of ``package`` (sorted by name), then the entry points of ``group``.  Only
    ``package`` itself is imported, so a lookup can import the sources one at a time
    (:func:`objects_of`) and stop when it has what it needs (``verify.registry.check_for``)."""
    out = []
    if package is not None:
        pkg = _import(package, what, what)
        for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            if not m.name.startswith("_"):
                out.append((f"{package}.{m.name}", None, what))
    for ep in _entry_points(group):
        modname, _, attr = ep.value.partition(":")
        out.append((modname.strip(), attr.strip() or None, f"{what} (entry point {ep.name!r} of {group})"))
    return out


def objects_of(source, kind, what: str) -> list:
    """The ``kind`` objects one source of :func:`sources` gives (importing its module): every one bound at
    the module's top level, or only the named attribute's."""
    modname, attr, desc = source
    mod = _import(modname, desc, what)
    if attr is None:
        return scan_module(mod, kind)
    try:
        value = getattr(mod, attr)
    except AttributeError:
        raise PluginError(what, f"{desc}: module {modname!r} has no attribute {attr!r}") from None
    objs = [o for o in (value if isinstance(value, (list, tuple)) else (value,)) if isinstance(o, kind)]
    if not objs:
        raise PluginError(what, f"{desc}: {modname}:{attr} is not a {what}")
    return objs


def discover(package: str | None, group: str, kind, what: str, *, name=lambda obj: obj.name) -> dict:
    """``{name(obj): obj}`` for every ``kind`` in the modules of ``package`` (None: none) and of the entry
    points of ``group``.  ``what`` names the kind in errors (``model``, ``check``, ``listing``, ``command``)
    and is the parameter a :class:`~base.errors.BadInput` names."""
    found: dict = {}
    where: dict = {}
    for source in sources(package, group, what):
        modname = source[0]
        for obj in objects_of(source, kind, what):
            key = name(obj)
            if key in found and found[key] is not obj:
                raise PluginError(what, f"two {what}s are named {key!r}: in {where[key]} and {modname}")
            found[key], where[key] = obj, modname
    return found


def nearest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The names in ``known`` closest to ``name`` (difflib's ratio, cutoff 0.5), best first."""
    return difflib.get_close_matches(str(name), list(known), n=n, cutoff=0.5)


def did_you_mean(name: str, known: Sequence[str], what: str = "known") -> str:
    """``"; did you mean a, b?"`` when some names are near ``name``, else ``"; known: a, b, c"``."""
    known = list(known)
    near = nearest(name, known)
    return f"; did you mean {', '.join(near)}?" if near else f"; {what}: {', '.join(known)}"


def select(known: Sequence[str], patterns, what: str = "model") -> list[str]:
    """The names of ``known`` that ``patterns`` select, in ``known``'s order; all of them for ``None`` or
    an empty list.  A pattern that is a name selects it alone; a glob (``attention.*.causal``) what it
    matches; any other text the family it prefixes (``attention.fa1`` -> ``attention.fa1.*``).  A pattern
    that is empty or blank, not a string, or selects nothing is :class:`~base.errors.BadInput` naming ``what``."""
    known = list(known)
    if patterns is None:
        return known
    if isinstance(patterns, str):
        patterns = [patterns]
    try:
        pats = list(patterns)
    except TypeError:
        raise BadInput(what, f"a {what} pattern is a string or a list of strings, got {patterns!r}") from None
    if not pats:
        return known
    chosen: set = set()
    for p in pats:
        if not isinstance(p, str):
            raise BadInput(what, f"a {what} pattern is a string, got {p!r}")
        if not p.strip():
            raise BadInput(what, f"an empty {what} pattern selects nothing (an unset shell variable?)")
        if p in known:
            hits = [p]
        elif any(c in p for c in "*?["):
            hits = [k for k in known if fnmatch.fnmatchcase(k, p)]
        else:
            hits = [k for k in known if k.startswith(p.rstrip(".") + ".")]
        if not hits:
            raise BadInput(what, f"unknown {what} {p!r}{did_you_mean(p, known)}")
        chosen.update(hits)
    return [k for k in known if k in chosen]
