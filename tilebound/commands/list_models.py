"""``tilebound list``: every model with its one-line summary (``--format markdown|latex`` as a table).

The module is not named ``list``: importing it would bind ``tilebound.commands.list`` over the builtin in
the package's namespace."""

from __future__ import annotations

from . import FORMATS, Command


def add_arguments(s) -> None:
    s.add_argument("--format", choices=FORMATS, default="text")


def run(args, out) -> int:
    from symbolic import registry

    rows = registry.summaries()
    if args.format == "text":
        width = max((len(n) for n, _ in rows), default=0)
        for name, summary in rows:
            out.write(f"{name:<{width}}  {summary}\n")
        return 0
    from printing.tables import Table, render
    out.write(render(Table(("model", "summary"), tuple(rows)), args.format) + "\n")
    return 0


COMMAND = Command("list", "every model with a one-line description", add_arguments, run)
