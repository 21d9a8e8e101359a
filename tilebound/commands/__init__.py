"""The subcommands of ``tilebound``, one module each, found the way models and checks are found.

A subcommand is a :class:`Command` bound at the top level of a module of this package (``list``, ``show``,
``table``, ``plot``, ``latex``, ``splits``, ``tune``), or of a module an installed distribution names in the
entry-point group ``tilebound.commands`` (``lab = "lab.cli"`` or ``lab = "lab.cli:COMMAND"``):
:func:`commands` finds them by :func:`base.discovery.discover`, so a plugin adds a subcommand with no edit
here.  A plugin module that fails to import is a :class:`base.discovery.PluginError` naming it, printed as
one line, and with its traceback under ``tilebound --debug``.

A command module imports only what its arguments need at the top: heavy imports go inside ``run``, so that
building the parser (which imports every command module) keeps ``tilebound list`` cheap.

The helpers below are what several commands share: model lookup by name or pattern, the element type, the
output target of ``--format``, and the one integer option type, :class:`IntOption` (``--budget 10**3``,
``--context 2**15``; with ``jobs=True`` also ``auto``): every integer option of every subcommand is read by
:func:`tilebound.numbers.parse_integer`, the reader of ``--at``, and refused naming the option.
"""

from __future__ import annotations

import argparse

from base.errors import BadInput

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

__all__ = ["Command", "commands", "GROUP", "FORMATS", "AT_HELP", "IntOption", "refuse_empty", "model", "models",
           "dtype", "unicode_ok", "target"]

#: the entry-point group of plugin subcommands
GROUP = "tilebound.commands"
#: the output formats of ``--format``
FORMATS = ("text", "markdown", "latex")
#: the help of every ``--at``
AT_HELP = "parameter values NAME=VALUE (space- or comma-separated; 2**12, 7/10 and 1e-9 are exact)"


@dataclass(frozen=True)
class Command:
    """One subcommand: ``tilebound NAME ...``.

    ``add_arguments(parser)`` adds its options to the subparser the command line made for it (an
    :class:`argparse.ArgumentParser`); ``run(args, out)`` runs it with the parsed arguments and the output
    stream (``out.write(text)``) and returns the exit status.  ``help`` is its line in ``tilebound --help``,
    ``description`` (optional) the text of ``tilebound NAME --help``."""

    name: str
    help: str
    add_arguments: Callable[..., None]
    run: Callable[..., int]
    description: Optional[str] = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name.startswith("-") or " " in self.name:
            raise TypeError(f"a command's name is one word, got {self.name!r}")
        if not (callable(self.add_arguments) and callable(self.run)):
            raise TypeError(f"command {self.name}: add_arguments and run must be callables")


def commands() -> dict[str, Command]:
    """``{name: Command}``: every command of this package, then every plugin's, each name once (two
    commands of one name are a :class:`~base.discovery.PluginError` naming both modules)."""
    from base.discovery import discover
    return discover(__name__, GROUP, Command, "command")


# ----------------------------------------------------------------------------------- option values
def refuse_empty(action: argparse.Action, value) -> None:
    """:class:`BadInput` naming the option (or argument) of ``action`` when ``value``, or an item of it, is a
    string that is empty or blank: what an unset shell variable gives (``--shapes "$SET"``), which would
    otherwise read as the option left out and run the default silently (``tune --shapes ''``), or as a
    name that cannot exist."""
    for v in value if isinstance(value, (list, tuple)) else (value,):
        if not isinstance(v, str) or v.strip():
            continue
        meta = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        if action.option_strings:
            opt = max(action.option_strings, key=len)
            name, give = opt.lstrip("-"), f"{opt} {meta}"
            if not action.required:
                give += f", or leave {opt} out"
        else:
            name = meta.lower() if meta.isidentifier() else action.dest
            give = meta
        raise BadInput(name, f"an empty value (an unset shell variable?); give {give}")


class IntOption(argparse.Action):
    """An integer option: ``s.add_argument("--budget", action=IntOption, least=1, default=100)``.

    The value is read as ``--at`` reads a number (``100``, ``4_096``, ``2**20``, ``10**9``, ``1e3``;
    :func:`tilebound.numbers.parse_integer`) and range-checked against ``least`` and ``most``; anything else is
    :class:`~base.errors.BadInput` naming the option (``budget``, ``max-runs``), raised while the arguments are
    parsed, so before any work.  ``jobs=True``: a ``--jobs`` value, ``auto`` (one process per usable CPU) or 1
    to :data:`base.pool.MAX_JOBS` (:func:`base.pool.jobs_from`'s range).  A default is used as it is (give
    an int)."""

    def __init__(self, option_strings, dest, least=None, most=None, jobs=False, **kwargs):
        self.least, self.most, self.jobs = least, most, jobs
        super().__init__(option_strings, dest, **kwargs)

    @property
    def param(self) -> str:
        """The name a refusal gives: the longest option string without its dashes (``max-runs``)."""
        return max(self.option_strings, key=len).lstrip("-") if self.option_strings else self.dest

    def __call__(self, parser, namespace, values, option_string=None):
        refuse_empty(self, values)
        setattr(namespace, self.dest, self.parse(values))

    def parse(self, text) -> int:
        from ..numbers import parse_integer
        if self.jobs:
            from base.pool import jobs_from
            if str(text).strip() == "auto":
                return jobs_from("auto")
            return jobs_from(str(parse_integer(self.param, text)))          # its range and its message
        return parse_integer(self.param, text, self.least, self.most)


# ----------------------------------------------------------------------------------- shared helpers
def model(name: str):
    """The registered model ``name`` (:class:`~base.errors.BadInput` naming ``model``, with the nearest names)."""
    from symbolic import registry
    return registry.get(name)


def with_inputs(m, args):
    """``m`` for the non-scalar inputs given on the command line (``--counts 7,0,13``: an MoE routing), through
    the model's own ``inputs`` hooks; :class:`~base.errors.BadInput` naming the option for a model without it."""
    for name in ("counts",):
        text = getattr(args, name, None)
        if text is None:
            continue
        hook = m.inputs.get(name)
        if hook is None:
            from symbolic import registry
            takers = [r.name for r in registry.refs() if name in r.model.inputs]
            raise BadInput(name, f"{m.name} takes no --{name}" + (f" (models that do: {', '.join(takers)})"
                                                                  if takers else ""))
        m = hook(text)
    return m


COUNTS_HELP = "an MoE routing: pairs per expert, comma-separated (e.g. 7,0,13; moe.grouped)"


def models(patterns: Sequence[str]) -> list:
    """The models ``patterns`` select (names, globs, family prefixes); all of them for none."""
    from symbolic import registry
    return [registry.get(n) for n in registry.select(list(patterns) or None)]


def dtype(name: str) -> str:
    """``name`` when it is an element type of :mod:`base.dtypes` (BadInput naming ``dtype`` otherwise)."""
    from base.dtypes import element_bytes
    element_bytes(name)
    return name


def unicode_ok(stream) -> bool:
    """Can ``stream`` encode Unicode (its encoding is a UTF)?"""
    enc = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
    return enc.startswith("utf")


def target(fmt: str, stream) -> str:
    """The renderer's target for ``--format``: ``text`` becomes ``ascii`` on a stream that cannot
    encode Unicode (formulas as ``ceil(N/B_c)``, times as ``us``)."""
    return "ascii" if fmt == "text" and not unicode_ok(stream) else fmt
