"""``tilebound`` / ``python -m tilebound``: print bounds, sweep tables, LaTeX notes and plots for any model.

The command line parses the arguments, asks :mod:`tilebound.report` for tables and series, and hands
them to a printer of :mod:`printing`.  Subcommands::

    list                                   every model with its one-line summary
    show MODEL [--at N=4096 d=64 ...]      formulas; with --at exact values, bytes and the roofline time
    table MODEL --vary N=512,1024 [...]    sweep table with --ratio OTHER and --per EXPR columns
    latex [MODEL ...] [--standalone]       align environments / a complete document
    plot MODEL --vary N=512..8192 -o F     formula curve and executed counts (needs the plot extra)

Errors: bad input anywhere is :class:`~base.errors.BadInput`, printed as one line
``tilebound: <param>: <problem>`` with exit status 2 (argparse's own errors too); any other exception
is a bug and shows its traceback.  Ctrl-C exits quietly with 130, a closed pipe with 141, and an
output stream that cannot be written (a full disk) with one line and 1.

Heavy modules are imported inside the commands so that ``list`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from base.errors import BadInput

from . import output

__all__ = ["main", "build_parser"]

PROG = "tilebound"
FORMATS = ("text", "markdown", "latex")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print its usage block and exit; we raise one line
        where = self.prog.split()[-1] if " " in self.prog else "usage"
        raise BadInput(where, message)


class _OutputError(Exception):
    """Writing to the output stream failed (not bad input: a full disk, a closed descriptor)."""


class _Output:
    """The output stream, with a failing write (other than a closed pipe) raised as :class:`_OutputError`."""

    def __init__(self, stream):
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None)

    def write(self, text: str) -> None:
        try:
            self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputError(exc) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputError(exc) from None


# ----------------------------------------------------------------------------------- lookups
def _registry():
    from symbolic import registry
    return registry


def _model(name: str):
    return _registry().get(name)             # BadInput "model: unknown model ...; did you mean ..."


def _models(patterns: Sequence[str]) -> list:
    reg = _registry()
    return [reg.get(n) for n in reg.select(list(patterns) or None)]


def _dtype(name: str) -> str:
    from base.dtypes import element_bytes
    element_bytes(name)                      # BadInput "dtype: unknown element type ..."
    return name


def _unicode_ok(stream) -> bool:
    enc = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
    return enc.startswith("utf")


def _target(fmt: str, stream) -> str:
    """The renderer's target for ``--format``: ``text`` becomes ``ascii`` on a stream that cannot
    encode Unicode (formulas as ``ceil(N/B_c)``, times as ``us``)."""
    return "ascii" if fmt == "text" and not _unicode_ok(stream) else fmt


def _output_path(path: str | None, force: bool = False) -> str | None:
    """``path`` when tilebound may write it, else BadInput naming ``output`` (see
    :func:`tilebound.output.check_path`: ``''`` and a file tilebound did not write are refused)."""
    output.check_path(path, force)
    return path


def _write_file(path: str, text: str, force: bool = False) -> None:
    """Write ``text`` to ``path`` atomically, marked as tilebound's (:func:`tilebound.output.write_text`)."""
    output.write_text(path, text, force=force)


# ----------------------------------------------------------------------------------- commands
def cmd_list(args, out) -> int:
    rows = _registry().summaries()
    if args.format == "text":
        width = max((len(n) for n, _ in rows), default=0)
        for name, summary in rows:
            out.write(f"{name:<{width}}  {summary}\n")
        return 0
    from printing.tables import Table, render
    out.write(render(Table(("model", "summary"), tuple(rows)), args.format) + "\n")
    return 0


def cmd_show(args, out) -> int:
    from symbolic.hardware import get_hardware
    from printing.content import point_note
    from printing.latex import escape, model_to_latex
    from printing.tables import render
    from printing.text import model_to_text
    from symbolic.notes import note

    from . import report

    at = report.parse_assignments(args.at)
    hw = get_hardware(args.hw)
    dtype = _dtype(args.dtype)
    if args.copies < 1:
        raise BadInput("copies", f"must be >= 1, got {args.copies}")
    model = _model(args.model)
    report.check_names(at, [model])
    pt = report.point(model, at) if args.at else None
    fmt = _target(args.format, out)
    parts = []
    if fmt in ("text", "ascii"):
        parts.append(model_to_text(model, unicode=fmt == "text"))
    elif fmt == "markdown":
        parts.append(f"## `{model.name}`\n\n{model.summary}\n\n$$\n{model_to_latex(model, 'aligned')}\n$$")
    else:
        parts.append(f"% {model.name}: {escape(model.summary)}\n{model_to_latex(model, 'align*')}")
    if pt is not None:
        vt = report.values_table(model, pt, dtype)
        vt = type(vt)(vt.headers, vt.rows, caption=note("at ") + point_note(model, pt))
        parts.append(render(vt, fmt))
        rl = report.roofline_of(model, pt, hw, dtype, args.copies)
        if isinstance(rl, str):
            parts.append(escape(rl) if fmt == "latex" else rl)
        elif rl is not None:
            parts.append(render(report.roofline_table(rl, hw, dtype, args.copies), fmt))
    out.write("\n\n".join(parts) + "\n")
    return 0


def cmd_table(args, out) -> int:
    from printing.tables import render

    from . import report

    vary = report.parse_vary(args.vary)
    at = report.parse_assignments(args.at)
    model = _model(args.model)
    others = [_model(n) for n in args.ratio or ()]
    table = report.sweep_table(model, vary, at, args.quantity or (), others, args.per or (),
                               _dtype(args.dtype) if args.dtype else None, args.inverse)
    out.write(render(table, _target(args.format, out)) + "\n")
    return 0


def cmd_plot(args, out) -> int:
    from printing import plot as plotting

    from . import report

    path = args.output
    output.check_path(path, args.force)                    # refused before any work
    vary = report.parse_vary(args.vary)
    if len(vary) != 1:
        raise BadInput("vary", "plot takes exactly one --vary NAME=... (tie parameters with N,N_k=...)")
    (xkey, xs), = vary.items()
    at = report.parse_assignments(args.at)
    models = [_model(n) for n in args.models]
    plotting.check_image_path(path)
    series, xlabel, ylabel, title, notes = report.plot_series(
        models, xkey, xs, at, args.quantity, leading=not args.no_leading, executed=not args.no_executed)
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    output.write_with(path, lambda tmp: plotting.plot_series(
        series, xlabel=xlabel, ylabel=ylabel, title=title, path=tmp, loglog=not args.linear,
        metadata=output.image_metadata(path)), force=args.force)
    out.write(f"wrote {path}\n")
    return 0


# ----------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Exact cost formulas of tiled GPU algorithms: print, tabulate, typeset, plot.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("list", help="every model with a one-line description")
    s.add_argument("--format", choices=FORMATS, default="text")
    s.set_defaults(run=cmd_list)

    at_help = "parameter values NAME=VALUE (space- or comma-separated; 2**12, 7/10 and 1e-9 are exact)"
    s = sub.add_parser("show", help="formulas; with --at exact values and the roofline time")
    s.add_argument("model")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--dtype", default="fp16",
                   help="element type for bytes and the tensor peak (fp16, bf16, fp8, fp32; default fp16)")
    s.add_argument("--hw", default="A100", help="hardware for the roofline (default A100)")
    s.add_argument("--copies", type=int, default=1, metavar="K",
                   help="roofline of K independent instances, e.g. batch x heads (default 1)")
    s.add_argument("--format", choices=FORMATS, default="text")
    s.set_defaults(run=cmd_show)

    s = sub.add_parser("table", help="sweep table with ratio columns")
    s.add_argument("model")
    s.add_argument("--vary", nargs="+", action="extend", required=True, metavar="NAME=V1,V2|A..B",
                   help="values to sweep (A..B doubles from A to B; N,N_k=... ties parameters); "
                        "several --vary sweep their product")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--quantity", "-q", action="append", help="quantities to show (default: all)")
    s.add_argument("--ratio", action="append", metavar="OTHER", help="add OTHER's value and MODEL ÷ OTHER")
    s.add_argument("--inverse", action="store_true", help="ratio columns as OTHER ÷ MODEL")
    s.add_argument("--per", action="append", metavar="EXPR",
                   help="add Q ÷ EXPR, Q the first -q quantity or the model's main one (e.g. 'N^2 d^2/M'; "
                        "'theta' = Q's Θ class)")
    s.add_argument("--dtype", default=None, help="add Q (as for --per) in bytes of this element type")
    s.add_argument("--format", choices=FORMATS, default="text")
    s.set_defaults(run=cmd_table)

    s = sub.add_parser("plot", help="formula curve and executed counts, log-log (needs the plot extra)")
    s.add_argument("models", nargs="+", metavar="MODEL")
    s.add_argument("--vary", nargs="+", action="extend", required=True, metavar="NAME=V1,V2|A..B")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=at_help)
    s.add_argument("--quantity", "-q", default=None, help="quantity to plot (default: each model's main one)")
    s.add_argument("--no-executed", action="store_true", help="formula only; do not run the executors")
    s.add_argument("--no-leading", action="store_true", help="omit the dashed leading-term curve")
    s.add_argument("--linear", action="store_true", help="linear axes instead of log-log")
    s.add_argument("-o", "--output", required=True, help="image file (.png, .pdf, .svg)")
    s.add_argument("--force", action="store_true", help="overwrite -o FILE even if tilebound did not write it")
    s.set_defaults(run=cmd_plot)

    import importlib
    import pkgutil

    from . import commands
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{mod.name}").add_parser(sub)
    return p


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
    stream = sys.stdout
    if not _unicode_ok(stream) and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="replace")   # belt and braces: the ascii target writes no Unicode
    out = _Output(stream)
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:               # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        status = args.run(args, out)
        out.flush()
        return status
    except BadInput as exc:
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
