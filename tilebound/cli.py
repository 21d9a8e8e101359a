"""``tilebound`` / ``python -m tilebound``: print bounds, sweep tables, LaTeX notes and plots for any model.

The command line builds its parser from the subcommands :func:`tilebound.commands.commands` finds - one
module of :mod:`tilebound.commands` each, plus any a plugin names in the entry-point group
``tilebound.commands`` - parses the arguments and runs the chosen :class:`~tilebound.commands.Command`::

    list                                   every model with its one-line summary
    show MODEL [--at N=4096 d=64 ...]      formulas; with --at exact values, bytes and the roofline time
    table MODEL --vary N=512,1024 [...]    sweep table with --ratio OTHER and --per EXPR columns
    latex [MODEL ...] [--standalone]       align environments / a complete document
    plot MODEL --vary N=512..8192 -o F     formula curve and executed counts (needs the plot extra)
    splits --at B=1 H=32 ...               each kernel's split rule for a decode shape
    tune --shape M,N,K ...                 score search strategies on the GEMM schedule space (the tune extra)
    grade --against MODEL -q Q --formula E a student's formula against the executed count (exit 0, 1, or 2)

Errors: bad input anywhere is :class:`~base.errors.BadInput`, printed as one line
``tilebound: <param>: <problem>`` with exit status 2 (argparse's own errors too); any other exception
is a bug and shows its traceback.  An empty or blank value of any option or argument (``--shapes ''``: an unset
shell variable) is refused naming it, never read as the option left out (:func:`tilebound.commands.refuse_empty`).
A plugin (a model, check, listing or command module) that fails to
import is a :class:`~base.discovery.PluginError`: one line naming it, and under ``--debug`` (before or
after the subcommand) the plugin's own traceback first.  Ctrl-C exits with 130 and ``tilebound:
interrupted``, a closed pipe quietly with 141, and an output stream that cannot be written (a full disk,
``--help > /dev/full`` too) with one line and 1: :func:`base.console.run`, shared with ``python -m verify``.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import Sequence

from base import console
from base.errors import BadInput

from . import commands

__all__ = ["main", "build_parser", "PROG"]

PROG = "tilebound"


class _Parser(console.ArgumentParser):
    """One-line usage errors (:class:`base.console.ArgumentParser`); ``--help`` text whose write fails is not
    swallowed, as argparse would (``> /dev/full`` exited 0); an empty value refused
    (:func:`tilebound.commands.refuse_empty`)."""

    def parse_known_args(self, args=None, namespace=None):
        ns, rest = super().parse_known_args(args, namespace)
        for action in self._actions:
            value = getattr(ns, action.dest, None)
            if value is not action.default:
                commands.refuse_empty(action, value)
        return ns, rest

    def _print_message(self, message, file=None):
        if message:
            stream = file or sys.stderr
            stream.write(message)
            stream.flush()


# ----------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand found (:func:`tilebound.commands.commands`)."""
    p = _Parser(prog=PROG, description="Exact cost formulas of tiled GPU algorithms: print, tabulate, typeset, plot.")
    p.add_argument("--debug", action="store_true",
                   help="show the traceback of a plugin that fails to import (as well as the one line)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.required = True
    for cmd in commands.commands().values():
        s = sub.add_parser(cmd.name, help=cmd.help, description=cmd.description)
        cmd.add_arguments(s)
        s.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        s.set_defaults(command_object=cmd)
    return p


def _debug_asked(argv: Sequence[str]) -> bool:
    """``--debug`` among the arguments (before a ``--``): known before the parser exists, since building it
    imports the plugins whose failure ``--debug`` explains."""
    argv = list(argv)
    return "--debug" in (argv[:argv.index("--")] if "--" in argv else argv)


def _main(argv: Sequence[str]) -> int:
    debug = _debug_asked(argv)
    try:
        args = build_parser().parse_args(argv)
        return args.command_object.run(args, sys.stdout)
    except BadInput as exc:
        if debug and exc.__cause__ is not None:      # a plugin's own traceback, then the one line
            traceback.print_exception(exc, file=sys.stderr)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input, 130 Ctrl-C, 141 closed pipe,
    1 output not writable), through :func:`base.console.run`, the care ``python -m verify`` shares.  Any
    other exception is a bug and propagates with its traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    stream = sys.stdout
    if not commands.unicode_ok(stream) and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="replace")   # belt and braces: the ascii target writes no Unicode
    return console.run(_main, PROG, argv)
