"""The ``tilebound`` program (the console script and ``python -m tilebound``): :func:`base.console.guard_start`
first, so that a Ctrl-C while the command line loads is one line and 130, then :func:`tilebound.cli.main`."""

from __future__ import annotations

from base import console

__all__ = ["main"]


def main() -> int:
    console.guard_start("tilebound")
    from .cli import main as cli_main
    return cli_main()
