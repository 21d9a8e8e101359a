"""The pgfplots printer of the notes' figures (:mod:`printing.pgfplot`): what it writes, from series whose
coordinates are worked out by hand here.  Compiling the figures is tested in tests/integration."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from base.errors import BadInput
from printing.pgfplot import PALETTE, PGFPLOTS_OPTIONS, series_to_pgfplots
from printing.plot import STYLES, Series


def _plots(tex: str) -> list[tuple[str, str, str]]:
    """``(options, coordinates, legend)`` of each ``\\addplot``."""
    return re.findall(r"\\addplot\[(.*?)\] coordinates \{(.*?)\};\n\\addlegendentry\{(.*?)\}", tex)


def test_every_kind_the_plots_know_has_pgfplots_options():
    assert set(PGFPLOTS_OPTIONS) == set(STYLES)


def test_coordinates_legend_and_styles_by_kind():
    tex = series_to_pgfplots([Series("formula", (1024, 2048), (3 * 2 ** 20, 6 * 2 ** 20), "line"),
                              Series("leading term", (1024, 2048), (2 ** 21, 2 ** 22), "dashed"),
                              Series("executed", (1024,), (3 * 2 ** 20,), "points")], "$N$", "total")
    (o1, c1, l1), (o2, c2, l2), (o3, c3, l3) = _plots(tex)
    assert c1 == "(1024,3.14573e06) (2048,6.29146e06)"          # 3 * 2**20 = 3,145,728 to six digits
    assert c2 == "(1024,2.09715e06) (2048,4.1943e06)" and c3 == "(1024,3.14573e06)"
    assert (l1, l2, l3) == ("formula", "leading term", "executed")
    assert "solid" in o1 and "dashed" in o2 and "only marks" in o3 and "mark=o" in o3
    # three groups (no ':' in the labels): three colours, in the palette's order
    assert [o.split(", ")[0] for o in (o1, o2, o3)] == [f"color={c}" for c in PALETTE[:3]]
    assert tex.startswith("\\begin{tikzpicture}\n\\begin{axis}[") and tex.endswith("\\end{axis}\n\\end{tikzpicture}")
    assert "xlabel={$N$}" in tex and "ylabel={total}" in tex


def test_series_of_one_model_share_its_colour():
    tex = series_to_pgfplots([Series("a: formula", (1, 2), (1, 2)), Series("a: executed", (1,), (1,), "points"),
                              Series("b: formula", (1, 2), (3, 4))], "x", "y")
    colours = [o.split(", ")[0] for o, _, _ in _plots(tex)]
    assert colours == [f"color={PALETTE[0]}", f"color={PALETTE[0]}", f"color={PALETTE[1]}"]


def test_sizes_in_powers_of_two_times_in_decades():
    assert "log basis x=2" in series_to_pgfplots([Series("f", (16, 64), (1, 10 ** 6))], "x", "y")
    decades = series_to_pgfplots([Series("f", (Fraction(1, 2), 8), (1, 10 ** 6))], "x", "y")
    assert "xmode=log" in decades and "log basis x" not in decades
    linear = series_to_pgfplots([Series("f", (16, 64), (1, 10 ** 6))], "x", "y", loglog=False)
    assert "xmode" not in linear and "ymode" not in linear


def test_a_log_axis_leaves_out_what_it_cannot_place():
    tex = series_to_pgfplots([Series("f", (0, 1, 2, 4), (5, 0, 7, -1))], "x", "y")
    ((_, coords, _),) = _plots(tex)
    assert coords == "(2,7)"
    nothing = series_to_pgfplots([Series("f", (1, 2), (0, 0)), Series("g", (1, 2), (1, 100))], "x", "y")
    assert [legend for _, _, legend in _plots(nothing)] == ["g"]          # an empty series is not drawn at all
    linear = series_to_pgfplots([Series("f", (0, 1), (-3, 0))], "x", "y", loglog=False)
    assert _plots(linear)[0][1] == "(0,-3) (1,0)"


def test_a_narrow_range_is_labelled_in_whole_numbers_times_a_power_of_ten():
    # 1.6e7 .. 6.5e7: of 1, 2, 5 x 10^k only 2e7 and 5e7 lie inside, so every digit: 2e7 .. 6e7
    tex = series_to_pgfplots([Series("f", (1, 4), (16_000_000, 65_000_000))], "x", "y")
    assert "ytick={2e07,3e07,4e07,5e07,6e07}" in tex
    assert r"yticklabels={$2 \cdot 10^{7}$,$3 \cdot 10^{7}$,$4 \cdot 10^{7}$,$5 \cdot 10^{7}$,$6 \cdot 10^{7}$}" in tex
    # 3 .. 150: 5, 10, 20, 50, 100 (1, 2, 5 times a power of ten)
    tex = series_to_pgfplots([Series("f", (1, 4), (3, 150))], "x", "y")
    assert "ytick={5,10,20,50,100}" in tex and r"$10^{1}$" in tex and r"$5 \cdot 10^{0}$" in tex
    # two decades or more: pgfplots' own decades
    assert "ytick" not in series_to_pgfplots([Series("f", (1, 4), (1, 100))], "x", "y")


def test_refusals_name_what_is_wrong():
    with pytest.raises(BadInput, match="^plot: f: a value beyond a float's range"):
        series_to_pgfplots([Series("f", (1, 2), (1, 10 ** 400))], "x", "y")
    with pytest.raises(BadInput, match="^kind: must be one of line, dashed, points, got 'bars'"):
        series_to_pgfplots([Series("f", (1,), (1,), "bars")], "x", "y")
    with pytest.raises(BadInput, match="^series: f: 2 x values and 1 y values"):
        series_to_pgfplots([Series("f", (1, 2), (1,))], "x", "y")
