r"""One table renderer for the terminal, Markdown and LaTeX (booktabs), through tabulate.

A :class:`Table` holds *values*, not strings: exact ints, Fractions (ratios), SymPy expressions,
:class:`Measure` (a number with a unit, shown in human units: ``24.6 MB``, ``4.56 ms``), plain text, or
a tuple of those to be concatenated (``("count ÷ ", N**2*d**2/M)``).  :func:`render` turns each cell
into the target's markup - Unicode one-liners at a terminal and in Markdown, ASCII ones (``N^2*d^2/M``,
``4.56 us``) for a terminal that cannot show Unicode, ``$…$`` math and escaped text in LaTeX - and hands
the strings to tabulate.  Numbers are right-aligned.  Nothing is computed
here beyond formatting.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from types import MappingProxyType

import sympy as sp
from tabulate import Line, TableFormat, tabulate

from base.errors import BadInput

from .human import fmt_bytes, fmt_exact, fmt_int, fmt_real, fmt_si, fmt_time
from .latex import escape, to_latex
from .text import ascii_text, to_text

__all__ = ["Table", "Measure", "Exact", "render", "print_table", "FORMATS", "format_cell"]


@dataclass(frozen=True)
class Measure:
    """A value with its unit: ``B`` (bytes) -> ``24.6 MB``, ``s`` -> ``4.56 ms``, ``FLOP/s`` -> ``312 TFLOP/s``;
    any other unit -> the number (exact when integral) followed by the unit."""

    value: Real
    unit: str = ""


@dataclass(frozen=True)
class Exact:
    """A number shown exactly: ``12,320,768``, ``101/1000000`` (a Fraction is never rounded)."""

    value: Real


@dataclass(frozen=True)
class Table:
    headers: tuple
    rows: tuple
    caption: str = ""
    notes: tuple = ()


def _latex_begin(colwidths, colaligns):
    spec = "".join({"right": "r", "center": "c", "decimal": "r"}.get(a, "l") for a in colaligns)
    return f"\\begin{{tabular}}{{{spec}}}\n\\toprule"


def _raw_row(cells, colwidths, colaligns):
    return " & ".join(cells) + r" \\"


#: booktabs with cells passed through untouched (render() has already escaped them)
_BOOKTABS_RAW = TableFormat(
    lineabove=_latex_begin, linebelowheader=Line("\\midrule", "", "", ""), linebetweenrows=None,
    linebelow=Line("\\bottomrule\n\\end{tabular}", "", "", ""), headerrow=_raw_row, datarow=_raw_row,
    padding=1, with_header_hide=None)

#: target -> tabulate format
FORMATS = MappingProxyType({"text": "simple", "ascii": "simple", "markdown": "github", "latex": _BOOKTABS_RAW})


def _is_number(v) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (Real, Measure, Exact)):
        return True
    return isinstance(v, sp.Basic) and v.is_Number


def _number_text(v) -> str:
    if isinstance(v, sp.Basic):
        v = int(v) if v.is_Integer else Fraction(int(v.p), int(v.q)) if v.is_Rational else float(v)
    if isinstance(v, Integral):
        return fmt_int(v)
    return fmt_real(v)


def _measure_text(m: Measure) -> str:
    if m.unit == "B":
        return fmt_bytes(m.value)
    if m.unit == "s":
        return fmt_time(m.value)
    if m.unit.endswith("/s") or m.unit == "FLOP":
        return fmt_si(m.value, m.unit)
    return f"{_number_text(m.value)} {m.unit}".rstrip()


def format_cell(value, target: str = "text") -> str:
    """One cell's markup for ``target`` (``text``, ``ascii``, ``markdown`` or ``latex``)."""
    if value is None:
        return ""
    if isinstance(value, (tuple, list)):
        return "".join(format_cell(v, target) for v in value)
    if isinstance(value, Measure):
        s = _measure_text(value)
    elif isinstance(value, Exact):
        v = value.value
        s = fmt_exact(v) if isinstance(v, (Integral, Fraction)) else str(v)
    elif _is_number(value):
        s = _number_text(value)
    elif isinstance(value, sp.Basic):
        if target == "latex":
            return f"${to_latex(value)}$"
        s = to_text(value, unicode=target != "ascii")
    else:
        s = str(value)
    if target == "latex":
        return escape(s)
    if target == "ascii":
        return ascii_text(s)
    if target == "markdown":
        return s.replace("|", "\\|")
    return s


def _column_aligns(table: Table) -> list[str]:
    aligns = []
    for j in range(len(table.headers)):
        col = [row[j] for row in table.rows if j < len(row) and row[j] is not None]
        aligns.append("right" if col and all(_is_number(v) for v in col) else "left")
    return aligns


def render(table: Table, target: str = "text") -> str:
    """The table as ``text`` (tabulate's simple; ``ascii`` the same spelled in ASCII), ``markdown``
    (GitHub pipes) or ``latex`` (booktabs, in a ``table`` float with its caption when it has one, and no
    placement option: the document's ``\\floatplacement`` decides; the standalone notes set float's ``H``)."""
    if target not in FORMATS:
        raise BadInput("format", f"must be one of {', '.join(FORMATS)}, got {target!r}")
    headers = [format_cell(h, target) for h in table.headers]
    rows = [[format_cell(v, target) for v in row] for row in table.rows]
    body = tabulate(rows, headers=headers, tablefmt=FORMATS[target], disable_numparse=True,
                    colalign=_column_aligns(table))
    caption, notes = table.caption, list(table.notes)
    if target == "latex":
        lines = ["\\begin{table}", "\\centering"]
        if caption:
            lines.append(f"\\caption{{{escape(caption)}}}")
        lines.append(body)
        lines += [f"\\par\\smallskip{{\\footnotesize {escape(n)}}}" for n in notes]
        lines.append("\\end{table}")
        return "\n".join(lines)
    if target == "ascii":
        caption, notes = ascii_text(caption), [ascii_text(n) for n in notes]
    out = []
    if caption:
        out.append(f"**{caption}**\n" if target == "markdown" else caption)
    out.append(body)
    if notes:
        out.append("")
        out += notes
    return "\n".join(out)


def print_table(table: Table, target: str = "text") -> None:
    print(render(table, target))
