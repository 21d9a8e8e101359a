"""verify: where the formulas (:mod:`symbolic`) meet the executors (:mod:`numeric`).

Command line: ``python -m verify [--full] [--model PATTERN] [--jobs N]`` (``--help`` has the rest).
Python: :func:`assert_agree`, :func:`run_check`, :func:`run_checks` (serially, or on any
``concurrent.futures.Executor``), :func:`verify.registry.select`.

The names below are loaded when first used (PEP 562), so that ``python -m verify`` runs its own first lines
(the Ctrl-C guard of :func:`base.console.guard_start`) before anything heavy is imported: the checks and the
runner live in :mod:`verify.core` and :mod:`verify.runner`.
"""

from __future__ import annotations

import importlib

#: each exported name -> the module that defines it
_HOME = {**dict.fromkeys(("Check", "Property", "Report", "assert_agree", "exact_equal", "hypothesis_available",
                          "rel_close", "run_check"), "core"),
         **dict.fromkeys(("run_checks", "run_named", "run_named_many", "task_groups", "estimated_cost"), "runner")}

__all__ = ["Check", "Property", "Report", "assert_agree", "exact_equal", "rel_close", "run_check", "run_checks",
           "run_named", "run_named_many", "task_groups"]


#: the submodules ``import verify`` gave as attributes when it loaded them itself
_SUBMODULES = ("core", "registry", "runner")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'verify' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value                     # once loaded, an ordinary attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME) | set(_SUBMODULES))
