"""All checks by name.  Each family module defines ``checks() -> list[Check]``."""

from __future__ import annotations

import fnmatch
import importlib

__all__ = ["all_checks", "select", "FAMILIES"]

FAMILIES = ("verify.attention", "verify.latency", "verify.gemm")


def all_checks():
    out = []
    for mod in FAMILIES:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:
                continue  # family not written yet
            raise
        out.extend(m.checks())
    return out


def select(pattern: str | None):
    checks = all_checks()
    if not pattern:
        return checks
    return [c for c in checks if fnmatch.fnmatch(c.name, pattern) or pattern in c.name]
