"""``tilebound plot MODEL ... --vary N=512..8192 -o FILE``: each model's formula curve, its leading term
dashed and its executor's counts as points, log-log (the plot extra: matplotlib).  The series come from
:func:`tilebound.plots.plot_series`; the image goes through :mod:`tilebound.output` (atomic, marked as
tilebound's, never over a file tilebound did not write unless ``--force``)."""

from __future__ import annotations

import sys

from base.errors import BadInput

from . import AT_HELP, Command


def add_arguments(s) -> None:
    s.add_argument("models", nargs="+", metavar="MODEL")
    s.add_argument("--vary", nargs="+", action="extend", required=True, metavar="NAME=V1,V2|A..B")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=AT_HELP)
    s.add_argument("--quantity", "-q", default=None, help="quantity to plot (default: each model's main one)")
    s.add_argument("--no-executed", action="store_true", help="formula only; do not run the executors")
    s.add_argument("--no-leading", action="store_true", help="omit the dashed leading-term curve")
    s.add_argument("--linear", action="store_true", help="linear axes instead of log-log")
    s.add_argument("-o", "--output", required=True, help="image file (.png, .pdf, .svg)")
    s.add_argument("--force", action="store_true", help="overwrite -o FILE even if tilebound did not write it")


def run(args, out) -> int:
    from printing import plot as plotting

    from .. import output
    from ..numbers import parse_assignments, parse_vary
    from ..plots import plot_series
    from . import model

    path = args.output
    output.check_path(path, args.force)                    # refused before any work
    vary = parse_vary(args.vary)
    if len(vary) != 1:
        raise BadInput("vary", "plot takes exactly one --vary NAME=... (tie parameters with N,N_k=...)")
    (xkey, xs), = vary.items()
    at = parse_assignments(args.at)
    models = [model(n) for n in args.models]
    plotting.check_image_path(path)
    series, xlabel, ylabel, title, notes = plot_series(
        models, xkey, xs, at, args.quantity, leading=not args.no_leading, executed=not args.no_executed)
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    output.write_with(path, lambda tmp: plotting.plot_series(
        series, xlabel=xlabel, ylabel=ylabel, title=title, path=tmp, loglog=not args.linear,
        metadata=output.image_metadata(path)), force=args.force)
    out.write(f"wrote {path}\n")
    return 0


COMMAND = Command("plot", "formula curve and executed counts, log-log (needs the plot extra)", add_arguments, run)
