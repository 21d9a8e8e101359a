r"""Plots as pgfplots code: the LaTeX notes' figures, typeset by TeX itself.

A figure in the notes is a ``tikzpicture`` holding a pgfplots ``axis``, its series given as coordinates
(:class:`printing.plot.Series`: the formula as a solid line, its leading term dashed, the executed counts
as circles).  pgfplots (CTAN, in Debian's texlive-pictures beside pgf) lays out the axes, the logarithmic
ticks, the labels and the legend when the document is compiled, in the document's own fonts; no plotting
library and no TeX run is needed to write the figure, so a figure costs as little as the numbers in it.

Like every printer this module computes nothing: values (exact ints or Fractions) become floats only to be
placed on the page, and a value beyond a float's range is refused (:class:`~base.errors.BadInput`) as
:func:`printing.plot.plot_series` refuses it.  On a logarithmic axis a point whose value is zero or negative
has no place and is left out, as matplotlib leaves it out.

Reference: C. Feuersänger, *Manual for Package pgfplots* (version 1.18, CTAN ``pgfplots``): the keys used here
are ``\addplot coordinates``, ``only marks``, ``xmode``/``ymode=log``, ``log basis x``, ``ytick`` and
``yticklabels``.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from base.errors import BadInput

from .plot import _floats

__all__ = ["PGFPLOTS_OPTIONS", "PALETTE", "series_to_pgfplots"]

#: series kind -> pgfplots options (the same kinds as :data:`printing.plot.STYLES`)
PGFPLOTS_OPTIONS = MappingProxyType({
    "line": "solid, line width=1.1pt",
    "dashed": "dashed, line width=0.7pt, opacity=0.8",
    "points": "only marks, mark=o, mark size=2.2pt",
})

#: colours in order of first use, one per series group (matplotlib's default cycle, so the notes' figures
#: look like ``tilebound plot``'s): xcolor's ``rgb,255`` form, which needs no \definecolor
PALETTE = tuple("{rgb,255:red,%d;green,%d;blue,%d}" % rgb for rgb in (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)))


def _number(v: float) -> str:
    """A coordinate as pgfplots reads it: six significant digits, an exponent without ``+``."""
    return ("%.6g" % v).replace("e+", "e")


def _narrow_log_ticks(values) -> list[str]:
    """pgfplots options for a logarithmic axis over ``values`` (positive floats) spanning less than two
    decades: ticks at 1, 2, 5 (or, when that gives fewer than three, every digit) times a power of ten,
    labelled ``2 \\cdot 10^{7}``; pgfplots' own labels there are fractional powers (``10^{7.2}``).
    ``[]`` for a wider span, which pgfplots labels in whole decades."""
    lo, hi = min(values), max(values)
    if hi >= 100 * lo:
        return []
    low, high = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for digits in ((1, 2, 5), range(1, 10)):
        ticks = [(m, k) for k in range(low, high + 1) for m in digits if lo <= m * 10.0 ** k <= hi]
        if len(ticks) >= 3:
            break
    if len(ticks) < 2:
        return []
    places = ",".join(_number(m * 10.0 ** k) for m, k in ticks)
    labels = ",".join(f"${m} \\cdot 10^{{{k}}}$" if m != 1 else f"$10^{{{k}}}$" for m, k in ticks)
    return [f"ytick={{{places}}}", f"yticklabels={{{labels}}}"]


def series_to_pgfplots(series, xlabel: str, ylabel: str, loglog: bool = True,
                       width: str = "15cm", height: str = "9.5cm") -> str:
    """A ``tikzpicture`` drawing ``series`` (:class:`printing.plot.Series`, in LaTeX labels) on one axis.

    Series that share the text of their label before the first ``:`` share a colour (a model's formula,
    leading term and executed points in a plot of several models).  With ``loglog`` both axes are
    logarithmic, the x axis in powers of two when every x is an integer (sizes), else in decades."""
    placed = []
    for s in series:
        if s.kind not in PGFPLOTS_OPTIONS:
            raise BadInput("kind", f"must be one of {', '.join(PGFPLOTS_OPTIONS)}, got {s.kind!r}")
        if len(s.xs) != len(s.ys):
            raise BadInput("series", f"{s.label}: {len(s.xs)} x values and {len(s.ys)} y values")
        pts = list(zip(_floats(s.xs, s.label), _floats(s.ys, s.label)))
        if loglog:
            pts = [(x, y) for x, y in pts if x > 0 and y > 0]
        placed.append((s, pts))
    options = [f"width={width}", f"height={height}", "grid=both", "minor grid style={gray!15}",
               "major grid style={gray!30}", r"legend style={font=\footnotesize, cells={anchor=west}}",
               "legend pos=north west", f"xlabel={{{xlabel}}}", f"ylabel={{{ylabel}}}"]
    if loglog:
        integral = all(float(x).is_integer() for s in series for x in s.xs)
        options += ["xmode=log", "ymode=log"] + (["log basis x=2"] if integral else [])
        ys = [y for _, pts in placed for _, y in pts]
        options += _narrow_log_ticks(ys) if ys else []
    colours: dict[str, str] = {}
    lines = [r"\begin{tikzpicture}", r"\begin{axis}[" + ",\n  ".join(options) + "]"]
    for s, pts in placed:
        if not pts:
            continue
        colour = colours.setdefault(s.label.split(":")[0], PALETTE[len(colours) % len(PALETTE)])
        coords = " ".join(f"({_number(x)},{_number(y)})" for x, y in pts)
        lines.append(rf"\addplot[color={colour}, {PGFPLOTS_OPTIONS[s.kind]}] coordinates {{{coords}}};")
        lines.append(rf"\addlegendentry{{{s.label}}}")
    lines += [r"\end{axis}", r"\end{tikzpicture}"]
    return "\n".join(lines)
