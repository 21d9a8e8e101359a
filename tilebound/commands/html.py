r"""``tilebound html [MODEL ...] -o DIR``: one self-contained HTML page per model, and ``DIR/index.html``.

Each page (:func:`printing.html.model_page`) shows the model's formulas as MathML, its leading term and Θ
class, lower bounds, notes, the annotated listing, the default sweep table and (with the plot extra) a
figure as inline SVG; and a calculator that evaluates every formula exactly in the browser (``BigInt``),
its inputs set by the URL fragment (``DIR/attention.fa1.fwd.paper.html#N=4096&d=64&M=51200``).  The pages
need no network and no server: copy the folder to any static host.  A parameter with no default (the latency
models' times and bandwidths) starts at a point of the model's verify check (:func:`start_point`), or at
``--at``'s value, so that every page opens showing results.

Files go through :mod:`tilebound.output` (atomic; each page marked as tilebound's in its first line, an HTML
comment).  The folder's rules are ``latex --split``'s (:func:`tilebound.commands.latex._split_folder`): made
if absent, refused when the path is a file; a page over a file tilebound did not write is refused without
``--force``; and an existing, non-empty folder that tilebound did not write (no ``index.html`` of its own)
is refused without ``--force``, so that ``-o ~`` cannot scatter pages among a user's files.

The pages are drawn in worker processes (:func:`base.pool.process_pool`), one per usable CPU unless ``--jobs N``
says (``--jobs 1``: this process); a page depends on its model alone, so the pages are the same either way.  A
progress bar on stderr shows the models done while a run passes two seconds and stderr is a terminal.

Bad input (one line, exit 2): an unknown model; ``-o`` missing, a file, or a folder tilebound did not write; a
``--jobs`` that is not ``auto`` or 1 to 256.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from base.errors import BadInput
from base.pool import MAX_JOBS, usable_cpus

from . import AT_HELP, Command, IntOption

#: why a page has no figure, when matplotlib (the plot extra) is not installed
NO_FIGURE = ("No figure: drawing needs matplotlib (the plot extra, pip install 'tilebound[plot]'); the table "
             "above has the same numbers.")


def add_arguments(s) -> None:
    s.add_argument("models", nargs="*", metavar="MODEL",
                   help="names (an exact name selects that model alone) or glob patterns (default: all)")
    s.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder of the pages (made if absent)")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=AT_HELP + "; for the tables")
    s.add_argument("--no-tables", action="store_true", help="no default sweep tables")
    s.add_argument("--no-figures", action="store_true", help="no figures")
    s.add_argument("--no-listings", action="store_true", help="no algorithm listings")
    s.add_argument("--title", default="tilebound: cost formulas of tiled GPU algorithms", help="the index's title")
    s.add_argument("--jobs", action=IntOption, jobs=True, default=None, metavar="N",
                   help=f"draw the pages in N processes (1 to {MAX_JOBS}, or auto: one per usable CPU, the default); "
                        "the same pages either way")
    s.add_argument("--force", action="store_true",
                   help="write into a folder (and over pages) that tilebound did not write")


def run(args, out) -> int:
    from printing.html import index_of_rows
    from symbolic import registry

    from .. import numbers, output
    from .. import report
    from . import models as _models
    from .latex import _fragment_path, _split_folder

    folder = _split_folder(args.output, "output", "-o")
    _refuse_foreign_folder(folder, args.force)
    at = numbers.parse_assignments(args.at)
    jobs = usable_cpus() if args.jobs is None else args.jobs           # read by IntOption
    names = registry.select(list(args.models) or None)
    if at:                                             # the names --at gives, and their values, before any work
        chosen = _models(args.models)
        report.check_names(at, chosen)
        for m in chosen:
            _check_at(m, at)
    paths = [_fragment_path(folder, f"{n}.html", "output") for n in names]      # printing.html.page_name's
    index = _fragment_path(folder, "index.html", "output")
    if os.path.isdir(folder):                          # every refusal before any work
        for path in paths + [index]:
            output.check_path(path, args.force)
    pages = _pages(names, at, _Options(args.no_tables, args.no_figures, args.no_listings), jobs)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise BadInput("output", f"cannot make {folder!r}: {exc.strerror or exc}") from None
    for path, (page, _) in zip(paths, pages):
        _write_html(path, page, args.force)
        out.write(f"wrote {path}\n")
    _write_html(index, index_of_rows([row for _, row in pages], title=args.title), args.force)
    out.write(f"wrote {index}\n")
    return 0


@dataclass(frozen=True)
class _Options:
    """What a page leaves out (the command's ``--no-*`` flags): what a worker is sent besides the model's name."""

    no_tables: bool
    no_figures: bool
    no_listings: bool


def _page_of(name: str, at: dict, options: _Options) -> tuple[str, str]:
    """``(page, index row)`` of one model: text, which a worker sends back (a model does not need to pickle)."""
    from printing.html import index_row, model_page
    from symbolic import registry

    m = registry.get(name)
    return model_page(_entry(m, at, options)), index_row(m)


def _pages(names: list[str], at: dict, options: _Options, jobs: int) -> list[tuple[str, str]]:
    """Each model's ``(page, index row)`` in the order of ``names``: one after another with ``jobs <= 1``, else
    one task per model on worker processes (:func:`base.pool.run_each`; a page depends on its model alone: the
    same text), with a progress bar of the models done."""
    from base.pool import run_each
    return run_each(_page_of, [(n, at, options) for n in names], jobs, "html", "model", labels=names)


def _check_at(model, at: dict) -> None:
    """``--at``'s values for ``model``'s page, refused as ``show`` refuses them (naming the parameter) where the
    page would otherwise lose them silently: a value its parameter refuses, or values that leave the page
    without the default sweep (table, figure, calculator points) it has without them
    (:func:`tilebound.report.refuse_lost_sweep`); the sweep starts where :func:`_entry` starts it."""
    from .. import report

    mine = {k: v for k, v in at.items() if k in {p.name for p in model.params}}
    if not mine:
        return
    report.check_values(mine, [model])
    start, _ = start_point(model, mine)
    report.refuse_lost_sweep(model, {**start, **mine}, start_point(model, {})[0])


def _refuse_foreign_folder(folder: str, force: bool) -> None:
    """An existing, non-empty folder without an ``index.html`` that tilebound wrote is not tilebound's."""
    from .. import output
    if force or not os.path.isdir(folder) or not os.listdir(folder):
        return
    if not output.is_ours(os.path.join(folder, "index.html")):
        raise BadInput("output", f"{folder!r} is a folder that tilebound did not write (it holds no index.html of "
                                 "tilebound's); give --force to write into it, or choose another folder")


def _write_html(path: str, text: str, force: bool) -> None:
    """``text`` to ``path`` with tilebound's marker as an HTML comment on the first line (:mod:`tilebound.output`)."""
    from .. import output

    def writer(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(output.marker_line(text, "<!--") + " -->\n" + text)
    output.write_with(path, writer, force=force)


def _entry(m, at, options):
    """The model's page entry: its default sweep table, figure and listing, and the points its
    algorithm-computed quantities are tabulated at."""
    from printing.html import PageEntry

    from .. import report

    mine = {k: v for k, v in at.items() if k in {p.name for p in m.params}}
    start, start_note = start_point(m, mine)
    mine = {**start, **mine}
    sweep = report.default_sweep(m, mine)
    tables = (report.sweep_table(m, sweep, mine),) if sweep and not options.no_tables else ()
    figure, caption, figure_note = "", "", ""
    if not options.no_figures and sweep:
        figure, caption, figure_note = _figure(m, sweep, mine)
    listing = None
    if not options.no_listings:
        from symbolic.listings import listing_for
        listing = listing_for(m.name)
    points = []
    if sweep:
        (key, xs), = sweep.items()
        points = [{**mine, key: x} for x in xs]
    elif all(p.name in m.defaults or p.name in mine for p in m.params):
        points = [dict(mine)]
    start = {**start, **bound_sizes_start(m)}
    return PageEntry(m, tables, figure, caption, listing, tuple(points), figure_note, start, start_note)


def bound_sizes_start(model) -> dict:
    """Where the inputs of the sizes a model's lower bounds are stated in start (:func:`printing.html.bound_sizes`:
    ``gemm.cosma``'s ``M, N, K``): the default of a model of the same formula module that has the size as a
    parameter (``gemm.tiled``'s 4096); a size no such model has (COSMA's fast memory ``S``) starts empty."""
    from printing.html import bound_sizes
    from symbolic import registry

    sizes = bound_sizes(model)
    if not sizes:
        return {}
    here = next((r.module for r in registry.refs() if r.name == model.name), None)
    out = {}
    for ref in registry.refs():
        if ref.module != here or ref.name == model.name:
            continue
        other = ref.model
        for p in sizes:
            if p.name not in out and any(q is p for q in other.params) and p.name in other.defaults:
                out[p.name] = other.defaults[p.name]
    return out


def start_point(model, at):
    """``(values, why)``: where the page's inputs start for the parameters that have neither a default nor a
    value in ``at`` (the latency models, whose times and bandwidths have no one right value), so that every page
    opens showing results.  The values are those of the first point of the grid of the model's own verify check
    (:func:`verify.registry.check_for`, a property too: ``python -m verify``'s pinned points) that the model
    accepts and at which every such integer parameter is above its least (a pipeline of one tile is a corner,
    not a start), else of its first accepted point; ``({}, "")`` when nothing is missing or no check has a grid."""
    missing = [p for p in model.params if p.name not in model.defaults and p.name not in at]
    if not missing:
        return {}, ""
    from verify.core import Check, Property
    from verify.registry import check_for

    check = check_for(model, kind=(Check, Property))
    if check is None:
        return {}, ""
    accepted = []
    for point in check.grid(False):
        if not all(p.name in point for p in missing):
            continue
        start = {p.name: point[p.name] for p in missing}
        try:
            model.check_point({**at, **start})
        except BadInput:
            continue
        if all(not p.counts or start[p.name] > p.least for p in missing):
            accepted.insert(0, start)
            break
        accepted.append(start)
    if not accepted:
        return {}, ""
    return accepted[0], (f"The inputs start at a point of the grid that python -m verify checks this model at "
                         f"(its check {check.name}); set them here or in the URL fragment.")


def _figure(model, sweep, at):
    """``(inline SVG, caption, "")`` of the main quantity over the one-parameter sweep (matplotlib's SVG, the
    formula and its leading term dashed), or ``("", "", why not)``."""
    import importlib.util
    import tempfile

    if importlib.util.find_spec("matplotlib") is None:
        return "", "", NO_FIGURE
    from printing import plot as plotting
    from symbolic.notes import code, note

    from ..plots import plot_series

    (key, xs), = sweep.items()
    try:
        series, xlabel, ylabel, title, _ = plot_series([model], key, xs, at, executed=False)
    except BadInput as exc:
        return "", "", f"No figure: {exc}"
    import matplotlib
    with tempfile.TemporaryDirectory() as tmp, matplotlib.rc_context({"svg.hashsalt": model.name}):
        # the same page from the same model: no drawing date, and ids hashed from a fixed salt, not random
        where = os.path.join(tmp, "figure.svg")
        plotting.plot_series(series, xlabel=xlabel, ylabel=ylabel, title=title, path=where, metadata={"Date": None})
        with open(where, encoding="utf-8") as f:
            svg = f.read()
    svg = svg[svg.index("<svg"):]                 # inline: no XML declaration or DOCTYPE inside HTML
    caption = note(code(model.name), f": {ylabel} against {xlabel}; the formula (solid) and its leading term "
                                     "(dashed), drawn from the exact values at the table's points.")
    return svg, caption, ""


COMMAND = Command("html", "a self-contained HTML page per model with an exact in-browser calculator (-o DIR)",
                  add_arguments, run)
