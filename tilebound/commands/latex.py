r"""``tilebound latex``: LaTeX of models for lecture notes.

::

    tilebound latex [MODEL ...]                  align environments on standard output
    tilebound latex MODEL ... --standalone -o F  a complete document: prose, formulas, sweep tables,
                                                 algorithm listings and figures
    tilebound latex MODEL ... --split DIR        one fragment per model, table, listing and figure:
                                                 DIR/<model>.tex, <model>.sweep.tex, <model>.algorithm.tex,
                                                 <model>.figure.tex, each \input-able after the preamble
    tilebound latex --preamble                   the packages a fragment needs

``--standalone`` and ``--split`` draw each model in a worker process (:func:`base.pool.process_pool`), one per
usable CPU unless ``--jobs N`` says (``--jobs 1``: this process); a model's text depends on that model alone,
so the document is the same either way.  While they run past two seconds and stderr is a terminal, a progress
bar on stderr shows the models done of the total, the time spent and an estimate (:func:`base.console.progress`).

Figures are pgfplots code (vector, typeset by TeX in the document's fonts) of the series of
:func:`tilebound.plots.plot_series` (the formula, its leading term dashed, the model's executor's counts as
points), written by :func:`printing.pgfplot.series_to_pgfplots`: they need no plotting library and no TeX run
to write, only the pgfplots package to compile (``tilebound latex --preamble``).  Files go through
:mod:`tilebound.output` (atomic, marked as tilebound's, never over a file tilebound did not write unless
``--force``).

Bad input (one line, exit 2): ``--split`` into a path that exists and is not a folder; an unknown model; a
fragment name that would leave the folder (a plugin model named ``../x``); ``--split`` with ``-o`` or
``--standalone``; ``--preamble`` with anything else; a ``--jobs`` that is not ``auto`` or 1 to 256, or without
``--standalone`` or ``--split``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from base.errors import BadInput
from base.pool import MAX_JOBS, usable_cpus

from . import AT_HELP, Command, IntOption


def add_arguments(s) -> None:
    s.add_argument("models", nargs="*", metavar="MODEL",
                   help="names (an exact name selects that model alone) or glob patterns (default: all)")
    s.add_argument("--standalone", action="store_true", help="a complete document that compiles as it is")
    s.add_argument("--split", metavar="DIR",
                   help="write one fragment per model, sweep table, listing and figure into DIR (made if absent)")
    s.add_argument("--preamble", action="store_true", help="print the packages a fragment needs, and nothing else")
    s.add_argument("--vary", nargs="+", action="extend", metavar="NAME=V1,V2|A..B", help="add a sweep table")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=AT_HELP)
    s.add_argument("--no-tables", action="store_true", help="no default sweep tables in --standalone/--split")
    s.add_argument("--no-figures", action="store_true", help="no figures in --standalone/--split")
    s.add_argument("--no-listings", action="store_true", help="no algorithm listings in --standalone/--split")
    s.add_argument("--title", default="tilebound: cost formulas of tiled GPU algorithms")
    s.add_argument("--jobs", action=IntOption, jobs=True, default=None, metavar="N",
                   help=f"--standalone/--split: draw the models in N processes (1 to {MAX_JOBS}, or auto: one per "
                        "usable CPU, the default); the same text either way")
    s.add_argument("-o", "--output", help="write to this file instead of standard output")
    s.add_argument("--force", action="store_true",
                   help="overwrite files (-o FILE, --split fragments) even if tilebound did not write them")


def run(args, out) -> int:
    from printing.document import PREAMBLE

    from .. import output

    if args.preamble:
        others = [o for o, v in (("MODEL", args.models), ("--standalone", args.standalone), ("--split", args.split),
                                 ("--vary", args.vary), ("--at", args.at), ("-o", args.output)) if v]
        if others:
            raise BadInput("preamble", f"--preamble prints the packages alone; drop {', '.join(others)}")
        out.write(PREAMBLE)
        return 0
    if args.split is not None:
        if args.output is not None:
            raise BadInput("split", "--split writes its own files into DIR; drop -o")
        if args.standalone:
            raise BadInput("split", "--split writes fragments, --standalone one document; give one of them")
        folder = _split_folder(args.split)
    path = output.check_path(args.output, args.force)            # refused before any work
    rich = args.standalone or args.split is not None
    if args.jobs is not None and not rich:
        raise BadInput("jobs", "--jobs draws the models of --standalone or --split in processes; add one of them")
    jobs = usable_cpus() if args.jobs is None else args.jobs           # read by IntOption
    names, plan = _plan(args, rich)
    if rich:
        rendered = _rendered(names, plan, jobs)
    if args.split is not None:
        return _write_split(folder, rendered, args.force, out)
    if args.standalone:
        from printing.document import document_of, section_of
        text = document_of([section_of(n, frags) for n, frags in rendered], title=args.title)
    else:
        from printing.latex import model_to_latex
        from printing.tables import render_latex
        chunks = []
        for e in (_entry(n, plan) for n in names):
            chunks.append(f"% {e.model.name}\n{model_to_latex(e.model, 'align')}")
            chunks += [render_latex(t, e.model.params) for t in e.tables]
        text = "\n\n".join(chunks)
    if path:
        output.write_text(path, text + "\n", force=args.force)
    else:
        out.write(text + "\n")
    return 0


# ----------------------------------------------------------------------------------- the entries
@dataclass(frozen=True)
class _Plan:
    """What every model's entry is made from: the sweep and point options, parsed and checked once."""

    vary: dict
    at: dict
    tables: bool
    figures: bool
    listings: bool


def _plan(args, rich: bool) -> tuple[list[str], _Plan]:
    """The selected models' names and the parsed options; every refusal of an option comes here, before any
    model is drawn.  Models are built only where ``--at`` or ``--vary`` names parameters to check."""
    from symbolic import registry

    from .. import numbers, report
    from . import models as _models

    vary = numbers.parse_vary(args.vary)
    at = numbers.parse_assignments(args.at)
    numbers.refuse_overlap(at, vary)
    names = registry.select(list(args.models) or None)
    chosen = _models(args.models) if vary or at else []
    if vary or at:
        report.check_names([*numbers.varied(vary), *at], chosen)
    tables_wanted = bool(vary) or (rich and not args.no_tables)
    if at and not tables_wanted:
        raise BadInput("at", "latex uses --at only for its sweep tables; add --vary, or --standalone without "
                             "--no-tables")
    for m in chosen:              # --at's values, as show refuses them: not a table silently left out
        mine = {k: v for k, v in at.items() if k in {p.name for p in m.params}}
        report.check_values(mine, [m])
        if mine and not vary:
            report.refuse_lost_sweep(m, mine, {})
    return names, _Plan(vary, at, tables_wanted, rich and not args.no_figures, rich and not args.no_listings)


def _entry(name: str, plan: _Plan):
    """One model's entry: the model with its tables, listing and figure."""
    from printing.document import ModelEntry
    from symbolic import registry

    from .. import numbers, report

    m = registry.get(name)
    own = set(p.name for p in m.params)
    mine = {k: v for k, v in plan.at.items() if k in own}
    sweep = ({k: v for k, v in plan.vary.items() if set(numbers.tied(k)) <= own} if plan.vary
             else report.default_sweep(m, mine) if plan.tables or plan.figures else None)
    tables = (report.sweep_table(m, sweep, mine),) if sweep and plan.tables else ()
    picture, caption = _figure(m, sweep, mine) if plan.figures and sweep and len(sweep) == 1 else ("", "")
    listing = None
    if plan.listings:
        from symbolic.listings import listing_for
        listing = listing_for(m.name)
    return ModelEntry(m, tables, picture, caption, listing)


def _fragments_of(name: str, plan: _Plan) -> list[tuple[str, str]]:
    """``[(suffix, latex), ...]`` of one model's entry (:func:`printing.document.fragments`): what a worker
    sends back (text pickles; a model does not need to)."""
    from printing.document import fragments
    return fragments(_entry(name, plan))


def _rendered(names: list[str], plan: _Plan, jobs: int) -> list[tuple[str, list]]:
    """``[(model name, fragments), ...]`` in the order of ``names``: the models one after another with
    ``jobs <= 1``, else one task per model on worker processes (:func:`base.pool.run_each`; the same text
    either way: each model's fragments depend on that model alone), with a progress bar of the models done.
    In the registry's order: the costliest first would need each model's work before it is done, and the
    costliest (gemm.l2's notes, about 2.5 s of the 57 models' 20 s) sits mid-way, not at the end."""
    from base.pool import run_each
    frags = run_each(_fragments_of, [(n, plan) for n in names], jobs, "latex", "model", labels=names)
    return list(zip(names, frags))


# ----------------------------------------------------------------------------------- figures
#: the legend's words for each kind of series
_KINDS = {"line": "formula", "dashed": "leading term", "points": "executed"}


def _figure(model, sweep, at) -> tuple[str, str]:
    """``(pgfplots picture, caption)`` of ``model`` over its one-parameter ``sweep``: the series of
    :func:`tilebound.plots.plot_series`, labelled in LaTeX, written by :func:`printing.pgfplot.series_to_pgfplots`."""
    from printing.content import point_note, quantity, tied_note
    from printing.latex import note_to_latex
    from printing.notation import Theta
    from printing.pgfplot import series_to_pgfplots
    from symbolic.notes import code, note

    from ..numbers import expand, tied
    from ..plots import plot_series
    from ..report import point

    (key, xs), = sweep.items()
    # the executor runs at the sweep's first two points (its smallest): its work grows as a power of the size, so the
    # points beyond were most of the notes' time (8.8 s of 57 figures up to the middle point, 3 of 5); the
    # figure shows it agreeing at two sizes, and python -m verify checks it at every point of its sweeps
    series, _, _, _, _ = plot_series([model], key, xs, at, executed_up_to=xs[min(1, len(xs) - 1)])
    # the labels as notes, from the model itself (the same accessors plot_series reads): math as math
    try:
        theta, lead = model.theta(), model.leading()
    except ValueError:
        theta = lead = None
    q = model.main_quantity
    unit = model.unit(q)
    ylabel = quantity(q) + (f" ({unit})" if unit and unit != "1" else "")
    xlabel = tied_note(model, tied(key))
    labels = {"line": note("formula") + (note(" ∈ ", Theta(theta)) if theta is not None else ""),
              "dashed": note("leading term ", lead) if lead is not None else note("leading term"),
              "points": note("executed")}
    relabelled = [type(s)(note_to_latex(labels[s.kind], moving=True), s.xs, s.ys, s.kind) for s in series]
    first = point(model, {**at, **expand({key: xs[0]})})
    fixed = {k: v for k, v in first.items() if k not in tied(key)}
    picture = series_to_pgfplots(relabelled, xlabel=note_to_latex(xlabel, moving=True),
                                 ylabel=note_to_latex(ylabel, moving=True))
    kinds = sorted({s.kind for s in series}, key=list(_KINDS).index)
    caption = note_to_latex(note(code(model.name), ": ") + ylabel + " against " + xlabel
                            + ((" at " + point_note(model, fixed)) if fixed else ""), moving=True)
    caption += "; " + ", ".join({"line": "the formula (solid)", "dashed": "its leading term (dashed)",
                                 "points": "the executor's counts (circles) at the sweep's first two points"}[k]
                                for k in kinds) + "."
    return picture, caption


# ----------------------------------------------------------------------------------- --split
def _split_folder(folder: str, param: str = "split", flag: str = "--split") -> str:
    """``folder`` when files may be written into it (:func:`tilebound.output.check_folder`), refusals naming
    ``param``: ``split`` for ``--split``, ``output`` for ``html -o``."""
    from .. import output
    return output.check_folder(folder, param, flag)


def _fragment_path(folder: str, name: str, param: str = "split") -> str:
    """``folder/name``, or :class:`BadInput` naming ``param`` when ``name`` would put the file anywhere else."""
    seps = [os.sep] + ([os.altsep] if os.altsep else [])
    inside = os.path.realpath(os.path.join(folder, name))
    if (any(s in name for s in seps) or name in (".", "..") or os.path.isabs(name)
            or os.path.dirname(inside) != os.path.realpath(folder)):
        raise BadInput(param, f"the fragment name {name!r} would leave {folder!r}; a model's name may not "
                              "hold a path separator")
    return os.path.join(folder, name)


def _write_split(folder: str, rendered, force: bool, out) -> int:
    from .. import output

    files = []
    for name, frags in rendered:
        for suffix, tex in frags:
            files.append((_fragment_path(folder, f"{name}{suffix}.tex"), name, tex))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:                       # a read-only parent, a full disk
        raise BadInput("split", f"cannot make {folder!r}: {exc.strerror or exc}") from None
    for path, _, _ in files:                     # every refusal before any file is written
        output.check_path(path, force, "split")
    for path, name, tex in files:
        header = (f"% {name}: \\input this after the packages of `tilebound latex --preamble`\n")
        output.write_text(path, header + tex + "\n", force=force, param="split")
        out.write(f"wrote {path}\n")
    return 0


COMMAND = Command("latex", "LaTeX for notes: align environments, --standalone document, --split fragments",
                  add_arguments, run)
