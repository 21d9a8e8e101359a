"""``tilebound latex``: align environments for the models, or a complete document (``--standalone``)."""

from __future__ import annotations

from base.errors import BadInput

AT_HELP = "parameter values NAME=VALUE (space- or comma-separated; 2**12, 7/10 and 1e-9 are exact)"


def add_parser(sub) -> None:
    s = sub.add_parser("latex", help="LaTeX align environments; --standalone for a complete document")
    s.add_argument("models", nargs="*", metavar="MODEL",
                   help="names (an exact name selects that model alone) or glob patterns (default: all)")
    s.add_argument("--standalone", action="store_true", help="a complete document that compiles as it is")
    s.add_argument("--vary", nargs="+", action="extend", metavar="NAME=V1,V2|A..B", help="add a sweep table")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=AT_HELP)
    s.add_argument("--no-tables", action="store_true", help="no default sweep tables in --standalone")
    s.add_argument("--title", default="tilebound: cost formulas of tiled GPU algorithms")
    s.add_argument("-o", "--output", help="write to this file instead of standard output")
    s.add_argument("--force", action="store_true", help="overwrite -o FILE even if tilebound did not write it")
    s.set_defaults(run=run)


def run(args, out) -> int:
    from symbolic.printing.document import ModelEntry, to_document
    from symbolic.printing.latex import model_to_latex
    from symbolic.printing.tables import render

    from .. import report
    from ..cli import _models, _output_path, _write_file

    path = _output_path(args.output, args.force)            # refused before any work
    vary = report.parse_vary(args.vary)
    at = report.parse_assignments(args.at)
    report.refuse_overlap(at, vary)
    models = _models(args.models)
    report.check_names([*report.varied(vary), *at], models)
    tables_wanted = bool(vary) or (args.standalone and not args.no_tables)
    if at and not tables_wanted:
        raise BadInput("at", "latex uses --at only for its sweep tables; add --vary, or --standalone without "
                             "--no-tables")
    entries = []
    for m in models:
        own = set(p.name for p in m.params)
        mine = {k: v for k, v in at.items() if k in own}
        tables = []
        sweep = ({k: v for k, v in vary.items() if set(report.tied(k)) <= own} if vary
                 else (report.default_sweep(m, mine) if tables_wanted else None))
        if sweep:
            tables.append(report.sweep_table(m, sweep, mine))
        entries.append(ModelEntry(m, tuple(tables)))
    if args.standalone:
        text = to_document(entries, title=args.title)
    else:
        chunks = []
        for e in entries:
            chunks.append(f"% {e.model.name}\n{model_to_latex(e.model, 'align')}")
            chunks += [render(t, "latex") for t in e.tables]
        text = "\n\n".join(chunks)
    if path:
        _write_file(path, text + "\n", force=args.force)
    else:
        out.write(text + "\n")
    return 0
