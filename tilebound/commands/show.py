"""``tilebound show MODEL [--at N=4096 d=64 ...]``: a model's formulas; with ``--at`` its exact values, bytes
and the roofline time on a GPU of the hardware table."""

from __future__ import annotations

from . import AT_HELP, COUNTS_HELP, FORMATS, Command, IntOption


def add_arguments(s) -> None:
    s.add_argument("model")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE", help=AT_HELP)
    s.add_argument("--counts", default=None, metavar="N1,N2,...", help=COUNTS_HELP)
    s.add_argument("--dtype", default="fp16",
                   help="element type for bytes and the tensor peak (fp16, bf16, fp8, fp32; default fp16)")
    s.add_argument("--hw", default="A100", help="hardware for the roofline (default A100)")
    s.add_argument("--copies", action=IntOption, least=1, default=1, metavar="K",
                   help="roofline of K independent instances, e.g. batch x heads (default 1)")
    s.add_argument("--format", choices=FORMATS, default="text")


def run(args, out) -> int:
    from symbolic.hardware import get_hardware
    from printing.content import point_note
    from printing.latex import escape, model_to_latex, note_to_latex
    from printing.tables import note_to_markdown, render
    from printing.text import model_to_text
    from symbolic.notes import note

    from .. import report
    from ..numbers import parse_assignments
    from . import dtype, model, target, with_inputs

    at = parse_assignments(args.at)
    hw = get_hardware(args.hw)
    element = dtype(args.dtype)
    m = with_inputs(model(args.model), args)
    report.check_names(at, [m])
    pt = report.point(m, at) if args.at else None
    fmt = target(args.format, out)
    parts = []
    if fmt in ("text", "ascii"):
        parts.append(model_to_text(m, unicode=fmt == "text"))
    elif fmt == "markdown":
        parts.append(f"## `{m.name}`\n\n{note_to_markdown(m.summary)}\n\n$$\n{model_to_latex(m, 'aligned')}\n$$")
    else:
        parts.append(f"% {m.name}: {escape(str(m.summary))}\n{model_to_latex(m, 'align*')}")
    if pt is not None:
        vt = report.values_table(m, pt, element)
        vt = type(vt)(vt.headers, vt.rows, caption=note("at ") + point_note(m, pt))
        parts.append(render(vt, fmt))
        rl = report.roofline_of(m, pt, hw, element, args.copies)
        if isinstance(rl, str):
            parts.append(escape(rl) if fmt == "latex" else rl)
        elif rl is not None:
            parts.append(render(report.roofline_table(rl, hw, element, args.copies), fmt))
    out.write("\n\n".join(parts) + "\n")
    return 0


COMMAND = Command("show", "formulas; with --at exact values and the roofline time", add_arguments, run)
