r"""One table renderer for the terminal, Markdown and LaTeX (booktabs), through tabulate.

A :class:`Table` holds *values*, not strings: exact ints, Fractions (ratios), SymPy expressions,
:class:`Measure` (a number with a unit, shown in human units: ``24.6 MB``, ``4.56 ms``), plain text, or
a tuple of those to be concatenated (``("count ÷ ", N**2*d**2/M)``).  :func:`render` turns each cell
into the target's markup - Unicode one-liners at a terminal and in Markdown, ASCII ones (``N^2*d^2/M``,
``4.56 us``) for a terminal that cannot show Unicode - and hands the strings to tabulate; numbers are
right-aligned.  Nothing is computed here beyond formatting.

LaTeX is set for reading (:func:`render_latex`): a column of numbers is a siunitx ``S`` column, aligned on
the decimal point with digit groups (``12,320,768``) and its format measured from its cells; a table's
``units`` sit in a header row of their own.  A caption, a note, a header or a text cell is a ``str`` (plain
text, escaped) or a :class:`symbolic.notes.Note` (text, SymPy math and code pieces, rendered piece by piece:
the caption ``note("at ", sp.Eq(N_k, 4096))`` reads ``at $N_k = 4096$``); a header or cell that is a
parameter's name (one of ``params``) is that parameter, in its own LaTeX form, and one that is a single
identifier with an underscore (a quantity's name, ``reads_Q``) is set as the formula labels set names.  Expressions are ``$…$``
math; nothing in a text is read as math.  The packages: booktabs and siunitx (:data:`printing.document.PREAMBLE`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from types import MappingProxyType

import sympy as sp
from tabulate import tabulate

from base.errors import BadInput

from symbolic.notes import Code, Note, as_note

from .human import fmt_bytes, fmt_exact, fmt_int, fmt_real, fmt_sci, fmt_si, fmt_time
from .latex import code_to_latex, escape, latex_width, math_text, note_to_latex, text_to_latex, to_latex
from .text import ascii_text, note_to_text, to_text

__all__ = ["Table", "Measure", "Exact", "render", "render_latex", "print_table", "FORMATS", "format_cell",
           "SI_OPTIONS", "note_to_markdown"]


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
    """Headers, rows of values, a caption and notes; ``units`` (one string per column, ``""`` for none)
    are shown under the headers in LaTeX and after them elsewhere."""

    headers: tuple
    rows: tuple
    caption: object = ""          # a str (text) or a symbolic.notes.Note
    notes: tuple = ()
    units: tuple = ()


#: target -> tabulate format
FORMATS = MappingProxyType({"text": "simple", "ascii": "simple", "markdown": "github", "latex": None})

#: siunitx options of every number column: digit groups of three from four digits on, separated by commas
#: (as the terminal tables print them)
SI_OPTIONS = "group-separator={,}, group-minimum-digits=4"
#: a column with an integer of more digits than this is set as the terminal sets it (every digit with
#: separators, or ``2.56e+4402 (4,403 digits)``) instead of in an S column
S_DIGITS = 24


def _huge_int(v) -> bool:
    if isinstance(v, Exact):
        v = v.value
    if isinstance(v, sp.Basic) and v.is_Integer:
        v = int(v)
    return isinstance(v, Integral) and not isinstance(v, bool) and abs(int(v)) >= 10 ** S_DIGITS


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


def note_to_markdown(note) -> str:
    """A :class:`~symbolic.notes.Note` (or a ``str``) for Markdown, piece by piece: text as it is, math as
    ``$…$`` LaTeX (GitHub renders it), code in backticks."""
    out = []
    for piece in as_note(note):
        if isinstance(piece, Code):
            out.append(f"`{piece}`")
        elif isinstance(piece, str):
            out.append(piece)
        else:
            out.append(f"${to_latex(piece)}$")
    return "".join(out)


def _column_aligns(table: Table) -> list[str]:
    aligns = []
    for j in range(len(table.headers)):
        col = [row[j] for row in table.rows if j < len(row) and row[j] is not None]
        aligns.append("right" if col and all(_is_number(v) for v in col) else "left")
    return aligns


def _with_units(table: Table, target: str) -> list:
    heads = list(table.headers)
    for j, u in enumerate(table.units):
        if u and j < len(heads):
            heads[j] = (heads[j], f" ({u})") if not isinstance(heads[j], tuple) else (*heads[j], f" ({u})")
    return heads


def render(table: Table, target: str = "text", params=()) -> str:
    """The table as ``text`` (tabulate's simple; ``ascii`` the same spelled in ASCII), ``markdown``
    (GitHub pipes) or ``latex`` (:func:`render_latex`; ``params`` name the parameters whose LaTeX forms the
    caption and headers use)."""
    if target not in FORMATS:
        raise BadInput("format", f"must be one of {', '.join(FORMATS)}, got {target!r}")
    if target == "latex":
        return render_latex(table, params)
    headers = [format_cell(h, target) for h in _with_units(table, target)]
    rows = [[format_cell(v, target) for v in row] for row in table.rows]
    body = tabulate(rows, headers=headers, tablefmt=FORMATS[target], disable_numparse=True,
                    colalign=_column_aligns(table))
    if target == "markdown":
        caption, notes = note_to_markdown(table.caption), [note_to_markdown(n) for n in table.notes]
    else:
        caption = note_to_text(table.caption, unicode=target != "ascii")
        notes = [note_to_text(n, unicode=target != "ascii") for n in table.notes]
    out = []
    if caption:
        out.append(f"**{caption}**\n" if target == "markdown" else caption)
    out.append(body)
    if notes:
        out.append("")
        out += notes
    return "\n".join(out)


# ----------------------------------------------------------------------------------- LaTeX
def _si_number(v) -> str | None:
    """A number as siunitx reads it in an ``S`` column (``12320768``, ``3.52``, ``1.23e+4399``), or
    ``None`` for a value that is not a finite number (``inf``) or carries a unit (a :class:`Measure`)."""
    if isinstance(v, Measure):
        return None
    if isinstance(v, Exact):
        v = v.value
        if isinstance(v, Fraction) and v.denominator != 1:
            return None                 # shown exactly as p/q: not a decimal
    if isinstance(v, sp.Basic):
        v = int(v) if v.is_Integer else Fraction(int(v.p), int(v.q)) if v.is_Rational else float(v)
    if isinstance(v, bool):
        return None
    if isinstance(v, Integral) or (isinstance(v, Fraction) and v.denominator == 1):
        return str(int(v)) if abs(int(v)).bit_length() <= 13000 else fmt_sci(int(v))   # str() refuses 4300+ digits
    text = fmt_real(v).replace(",", "")
    return text if re.fullmatch(r"-?\d+(\.\d+)?(e[+-]?\d+)?", text) else None


def _si_format(cells: list[str]) -> str:
    """siunitx ``table-format`` wide enough for every cell: sign, integer digits, decimals, exponent digits."""
    sign = any(c.startswith("-") for c in cells)
    ints = decs = exps = 0
    for c in cells:
        mant, _, exp = c.lstrip("-").partition("e")
        i, _, f = mant.partition(".")
        ints, decs = max(ints, len(i)), max(decs, len(f))
        if exp:
            exps = max(exps, len(exp.lstrip("+-")))
    fmt = ("-" if sign else "") + f"{max(ints, 1)}.{decs}"
    return fmt + (f"e-{exps}" if exps else "")


#: a header or text cell that is one identifier with an underscore (``reads_Q``) is a name (a quantity's)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")


def _text_cell(value, params) -> str:
    """A header or text cell as LaTeX: a note piece by piece, a parameter's name as the parameter, one
    identifier with an underscore (a quantity's name) as the formula labels set names, other text
    escaped, a value as :func:`format_cell` sets it."""
    if value is None:
        return ""
    if isinstance(value, Note):
        return note_to_latex(value)
    if isinstance(value, (tuple, list)):
        return "".join(_text_cell(v, params) for v in value)
    if isinstance(value, Code):
        return code_to_latex(value)
    if isinstance(value, str):
        named = {p.name: p for p in params}
        if value in named:
            return f"${to_latex(named[value])}$"
        if _NAME.fullmatch(value):
            return f"${math_text(value)}$"
        return text_to_latex(value)
    return format_cell(value, "latex")


def _units_in_header(table: Table) -> Table:
    """A sweep table's ``units: reads in elements, ...`` note (:func:`tilebound.report.sweep_table`'s) as
    units under the headers it names; the note goes when every unit it gives found its column."""
    if table.units:
        return table
    for k, note in enumerate(table.notes):
        if not isinstance(note, str) or not note.startswith("units: "):
            continue
        pairs = [p.partition(" in ") for p in note.removeprefix("units: ").split(", ")]
        if not all(sep for _, sep, _ in pairs):
            continue
        units = {q: u for q, _, u in pairs}
        if not set(units) <= {h for h in table.headers if isinstance(h, str)}:
            continue
        cols = tuple(units.get(h, "") if isinstance(h, str) else "" for h in table.headers)
        return Table(table.headers, table.rows, table.caption, table.notes[:k] + table.notes[k + 1:], cols)
    return table


def render_latex(table: Table, params=()) -> str:
    r"""The table as a ``table`` float with booktabs rules: number columns are siunitx ``S`` columns (aligned
    on the decimal point, digit groups, the format measured from the cells), other columns right-aligned
    (measures such as ``24.6 MB``) or left-aligned (text, expressions); units in a header row of their own;
    caption and notes as notes (:func:`~printing.latex.note_to_latex`).  No placement option: the document decides."""
    table = _units_in_header(table)
    ncol = len(table.headers)
    specs, columns = [], []
    for j in range(ncol):
        col = [row[j] if j < len(row) else None for row in table.rows]
        present = [v for v in col if v is not None]
        numbers = [_si_number(v) if _is_number(v) else None for v in present]
        if present and all(n is not None for n in numbers) and not any(_huge_int(v) for v in present):
            cells = [_si_number(v) if v is not None else "{}" for v in col]
            specs.append(f"S[table-format={_si_format([c for c in cells if c != '{}'])}]")
            columns.append(cells)
        else:
            align = "r" if present and all(_is_number(v) for v in present) else "l"
            specs.append(align)
            columns.append([_text_cell(v, params) for v in col])
    numeric = [s.startswith("S") for s in specs]
    units = (list(table.units) + [""] * ncol)[:ncol]

    def head(cell, j):
        tex = _text_cell(cell, params)
        return f"{{{tex}}}" if numeric[j] else tex

    heads = [head(h, j) for j, h in enumerate(table.headers)]
    unit_row = [head(f"({u})", j) if u else ("{}" if numeric[j] else "") for j, u in enumerate(units)]
    widths = [max([_cell_width(heads[j]), _cell_width(unit_row[j])] + [_cell_width(c) for c in columns[j]])
              for j in range(ncol)]
    lines = ["\\begin{table}", "\\centering"]
    if table.caption:
        lines.append(f"\\caption{{{note_to_latex(table.caption, moving=True)}}}")
    lines.append(f"\\sisetup{{{SI_OPTIONS}}}")
    for k, part in enumerate(_parts(widths)):
        if k:
            lines.append("\\par\\medskip")
        lines.append(f"\\begin{{tabular}}{{{''.join(specs[j] for j in part)}}}")
        lines.append("\\toprule")
        lines.append(" & ".join(heads[j] for j in part) + r" \\")
        if any(units[j] for j in part):
            lines.append(" & ".join(unit_row[j] for j in part) + r" \\")
        lines.append("\\midrule")
        for i in range(len(table.rows)):
            lines.append(" & ".join(columns[j][i] for j in part) + r" \\")
        lines.append("\\bottomrule")
        lines.append("\\end{tabular}")
    lines += [f"\\par\\smallskip{{\\footnotesize {note_to_latex(n)}}}" for n in table.notes]
    lines.append("\\end{table}")
    return "\n".join(lines)


#: the width (in characters of 10pt text, a column's padding included) one tabular may take: a table wider
#: than this is set as several tabulars one above the other, each repeating the first column; it fits a
#: portrait A4 page with 2.5 cm margins
TABLE_WIDTH = 80
_PAD = 2.5


def _cell_width(tex: str) -> float:
    """Rough printed width of a cell: math and text by :func:`~printing.latex.latex_width`, an S cell's
    digits with their group separators."""
    t = tex.strip()
    if re.fullmatch(r"-?\d+(\.\d+)?(e[+-]?\d+)?", t):
        digits = len(t.split(".")[0].lstrip("-"))
        return len(t) + (digits - 1) // 3 * 0.5 if digits >= 4 else len(t)
    t = re.sub(r"\$", "", t.strip("{}"))
    return latex_width(t)


def _parts(widths: list) -> list[list[int]]:
    """Column indices of each tabular: the first column, then as many more as fit :data:`TABLE_WIDTH`."""
    if sum(w + _PAD for w in widths) <= TABLE_WIDTH or len(widths) <= 2:
        return [list(range(len(widths)))]
    parts, cur, used = [], [0], widths[0] + _PAD
    for j in range(1, len(widths)):
        if used + widths[j] + _PAD > TABLE_WIDTH and len(cur) > 1:
            parts.append(cur)
            cur, used = [0], widths[0] + _PAD
        cur.append(j)
        used += widths[j] + _PAD
    parts.append(cur)
    return parts


def print_table(table: Table, target: str = "text") -> None:
    print(render(table, target))
