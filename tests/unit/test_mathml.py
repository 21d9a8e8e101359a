"""The MathML printer (:mod:`printing.mathml`): well-formed presentation MathML, with the project's
notation as elements (``⌈ ⌉`` and ``⌊ ⌋`` as operators around the argument, a Piecewise as a table of
cases, a floor sum as the Σ it stands for, Θ, a parameter's subscript) and notes rendered piece by piece."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import sympy as sp

from printing.content import Quantity
from printing.mathml import note_to_html, to_mathml
from printing.notation import Grouped, Theta
from symbolic.floorsum import FloorSum
from symbolic.notes import code, note, symbol
from symbolic.params import param

N, B_r, d = param("N"), param("B_r"), param("d")


def tree(expr) -> ET.Element:
    root = ET.fromstring(to_mathml(expr))            # raises on markup that is not well-formed
    assert root.tag == "math"
    return root


def operators(root) -> list[str]:
    return [el.text for el in root.iter("mo")]


def test_ceiling_and_floor_bracket_their_argument():
    root = tree(sp.ceiling(N / B_r) + sp.floor(N / 3))
    ops = operators(root)
    assert ops.count("⌈") == ops.count("⌉") == 1 and ops.count("⌊") == ops.count("⌋") == 1
    assert len(list(root.iter("mfrac"))) == 2        # N/B_r and N/3 as fractions, not "N/B_r" text
    assert "ceiling" not in to_mathml(sp.ceiling(N / B_r))


def test_a_parameter_has_its_subscript():
    sub = tree(B_r).find("msub")
    assert [el.text for el in sub] == ["B", "r"]


def test_piecewise_is_a_table_of_cases():
    root = tree(sp.Piecewise((N, N < B_r), (B_r, sp.Eq(N, B_r)), (2 * N, True)))
    rows = list(root.iter("mtr"))
    assert len(rows) == 3
    assert "otherwise" in "".join(t.text or "" for t in rows[-1].iter("mtext"))
    assert operators(root)[0] == "{"


def test_a_floor_sum_is_shown_as_its_sum():
    root = tree(FloorSum(N, B_r, 3, 7))
    assert "∑" in operators(root)                      # the Σ over blocks it stands for, not a function name
    assert "⌊" in operators(root)
    assert "FloorSum" not in to_mathml(FloorSum(N, B_r, 3, 7))


def test_theta_min_and_grouped_numbers():
    root = tree(Theta(N ** 2 * d ** 2 / sp.Symbol("M")))
    assert [el.text for el in root.iter("mi")][0] == "Θ"
    assert "min" in operators(tree(sp.Min(N, B_r)))
    assert [el.text for el in tree(Grouped(3350000000000)).iter("mn")] == ["3,350,000,000,000"]


def test_a_quantity_name_is_one_upright_identifier():
    (mi,) = tree(Quantity("hbm_reads")).iter("mi")
    assert mi.text == "hbm_reads" and mi.get("mathvariant") == "normal"


@pytest.mark.parametrize("expr", [sp.Mod(N, B_r), sp.sqrt(N), sp.Rational(7, 10) * N, N ** -2])
def test_other_forms_are_well_formed(expr):
    tree(expr)


def test_a_note_is_rendered_piece_by_piece():
    Q = symbol("Q")
    out = note_to_html(note("reads <all> of ", Q, " once; see ", code("hbm_reads"), " & ", N / B_r))
    assert out.startswith("reads &lt;all&gt; of <math>")        # text escaped, never read as markup
    assert "<code>hbm_reads</code>" in out and " &amp; " in out
    assert out.count("<math>") == 2
    for chunk in out.split("<math>")[1:]:
        ET.fromstring("<math>" + chunk.split("</math>")[0] + "</math>")
