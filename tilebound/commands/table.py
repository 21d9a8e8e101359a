"""``tilebound table MODEL --vary N=512,1024 [...]``: a sweep table of exact values, with ``--ratio OTHER``
and ``--per EXPR`` columns (the ``--per`` grammar: :mod:`tilebound.per`)."""

from __future__ import annotations

from . import AT_HELP, COUNTS_HELP, FORMATS, Command


def add_arguments(s) -> None:
    s.add_argument("model")
    s.add_argument("--vary", nargs="+", action="extend", required=True, metavar="NAME=V1,V2|A..B",
                   help="values to sweep (A..B doubles from A to B; N,N_k=... ties parameters); "
                        "several --vary sweep their product")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=AT_HELP)
    s.add_argument("--counts", default=None, metavar="N1,N2,...", help=COUNTS_HELP)
    s.add_argument("--quantity", "-q", action="append", help="quantities to show (default: all)")
    s.add_argument("--ratio", action="append", metavar="OTHER", help="add OTHER's value and MODEL ÷ OTHER")
    s.add_argument("--inverse", action="store_true", help="ratio columns as OTHER ÷ MODEL")
    s.add_argument("--per", action="append", metavar="EXPR",
                   help="add Q ÷ EXPR, Q the first -q quantity or the model's main one (e.g. 'N^2 d^2/M'; "
                        "'theta' = Q's Θ class)")
    s.add_argument("--dtype", default=None, help="add Q (as for --per) in bytes of this element type")
    s.add_argument("--format", choices=FORMATS, default="text")


def run(args, out) -> int:
    from printing.tables import render

    from .. import report
    from ..numbers import parse_assignments, parse_vary
    from . import dtype, model, target, with_inputs

    vary = parse_vary(args.vary)
    at = parse_assignments(args.at)
    m = with_inputs(model(args.model), args)
    others = [model(n) for n in args.ratio or ()]
    table = report.sweep_table(m, vary, at, args.quantity or (), others, args.per or (),
                               dtype(args.dtype) if args.dtype else None, args.inverse)
    out.write(render(table, target(args.format, out)) + "\n")
    return 0


COMMAND = Command("table", "sweep table with ratio columns", add_arguments, run)
