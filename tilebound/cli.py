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

Errors: bad input anywhere is :class:`~base.errors.BadInput`, printed as one line
``tilebound: <param>: <problem>`` with exit status 2 (argparse's own errors too); any other exception
is a bug and shows its traceback.  A plugin (a model, check, listing or command module) that fails to
import is a :class:`~base.discovery.PluginError`: one line naming it, and under ``--debug`` (before or
after the subcommand) the plugin's own traceback first.  Ctrl-C exits quietly with 130, a closed pipe with
141, and an output stream that cannot be written (a full disk, ``--help > /dev/full`` too) with one line
and 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Sequence

from base.errors import BadInput

from . import commands

__all__ = ["main", "build_parser", "PROG"]

PROG = "tilebound"


class _OutputError(Exception):
    """Writing to the output stream failed (not bad input: a full disk, a closed descriptor)."""


def _writing(action):
    """Run ``action()``; a failing write other than a closed pipe becomes :class:`_OutputError`."""
    try:
        return action()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise _OutputError(exc) from None


class _Output:
    """The output stream, with a failing write (other than a closed pipe) raised as :class:`_OutputError`."""

    def __init__(self, stream):
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None)

    def write(self, text: str) -> None:
        _writing(lambda: self.stream.write(text))

    def flush(self) -> None:
        _writing(self.stream.flush)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print its usage block and exit; we raise one line
        where = self.prog.split()[-1] if " " in self.prog else "usage"
        raise BadInput(where, message)

    def _print_message(self, message, file=None):
        """``--help`` and ``--version`` text; argparse would swallow a failing write (``> /dev/full`` exited 0)."""
        if message:
            stream = file or sys.stderr
            _writing(lambda: (stream.write(message), stream.flush()))


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


def _silence_stdout() -> None:
    """Point the stdout descriptor at /dev/null so that the interpreter's final flush stays quiet."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input, 130 Ctrl-C, 141 closed pipe,
    1 output not writable).  Any other exception is a bug and propagates with its traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = _debug_asked(argv)
    stream = sys.stdout
    if not commands.unicode_ok(stream) and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="replace")   # belt and braces: the ascii target writes no Unicode
    out = _Output(stream)
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:               # --help, --version: their text written and flushed
            return exc.code if isinstance(exc.code, int) else 0
        status = args.command_object.run(args, out)
        out.flush()
        return status
    except BadInput as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc, file=sys.stderr)
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:                     # `tilebound list | head`: stop quietly
        _silence_stdout()
        return 141
    except _OutputError as exc:
        _silence_stdout()
        err = exc.args[0]
        sys.stderr.write(f"{PROG}: output: cannot write: {getattr(err, 'strerror', None) or err}\n")
        return 1
