"""Jupyter display: a model shows its formulas; ``model.at(...)`` shows formula, substituted values, result.

Values are derived by hand: FlashAttention with the paper's blocks at N = 4096, d = 64, M = 51,200
(100 KB of FP16): B_c = ceil(51200 / 256) = 200, B_r = min(200, 64) = 64, T_c = ceil(4096 / 200) = 21;
reads = 2 N d + (2d + 2) N T_c = 524,288 + 130 * 4096 * 21 = 11,706,368.
"""

from __future__ import annotations

import pytest

from base.errors import BadInput
from symbolic import registry
from printing.notebook import (evaluation_html, evaluation_latex, evaluation_text, init_printing, model_html,
                               model_latex, substituted_latex)
from symbolic.model import Evaluation


@pytest.fixture
def paper():
    return registry.get("attention.fa1.fwd.paper")


def test_model_shows_its_formulas(paper):
    tex = model_latex(paper)
    assert tex.startswith("$$\\begin{aligned}") and tex.endswith("\\end{aligned}$$")
    html = model_html(paper)
    assert "<table>" in html and r"\(N\)" in html and "query rows" in html and "$$\\begin{aligned}" in html


def test_at_is_a_record_not_a_display(paper):
    """The model layer holds data only: no ``_repr_*`` on a model or an evaluation; the printing layer renders."""
    ev = paper.at(N=4096, d=64, M=51200)
    assert isinstance(ev, Evaluation) and not isinstance(ev, str)
    for obj in (paper, ev):
        assert not hasattr(obj, "_repr_latex_") and not hasattr(obj, "_repr_html_")
    assert ev["reads"] == 11_706_368 and ev.values["reads"] == 11_706_368
    assert evaluation_html(ev).startswith("<div>$$")


class _Formatter:
    def __init__(self):
        self.types = {}

    def for_type(self, typ, func):
        self.types[typ] = func


class _Shell:
    """IPython's shell as ``init_printing`` sees it: ``display_formatter.formatters[mime].for_type``."""

    def __init__(self):
        self.display_formatter = type("DF", (), {})()
        self.display_formatter.formatters = {m: _Formatter() for m in ("text/latex", "text/html", "text/plain")}


def test_init_printing_registers_the_displays(paper):
    from symbolic.model import Model
    shell = _Shell()
    assert init_printing(shell) is True
    f = shell.display_formatter.formatters
    assert f["text/latex"].types[Model](paper) == model_latex(paper)
    ev = paper.at()
    assert f["text/latex"].types[Evaluation](ev) == evaluation_latex(ev)
    assert Evaluation in f["text/plain"].types and Model in f["text/html"].types


def test_init_printing_outside_ipython_registers_nothing():
    import sys
    if "IPython" in sys.modules:
        from IPython import get_ipython
        if get_ipython() is not None:
            pytest.skip("running inside IPython")
    assert init_printing() is False


def test_formula_then_substituted_then_result(paper):
    """As handcalcs sets a calculation: the reads row, then the same with the numbers in, then the value."""
    rows = evaluation_latex(paper.at(N=4096, d=64, M=51200)).splitlines()
    k = next(i for i, r in enumerate(rows) if r.startswith(r"\text{reads} &= "))
    assert rows[k].startswith(r"\text{reads} &= 2 N d + N \left(2 d + 2\right)")
    assert rows[k + 1].startswith(r"&= 2 \cdot 4096 \cdot 64 + 4096 \left(2 \cdot 64 + 2\right)")
    assert r"\frac{51200}{4 \cdot 64}" in rows[k + 1]
    assert rows[k + 2] == r"&= 11{,}706{,}368\ \text{elements} \\"


def test_the_point_is_in_the_heading_in_math(paper):
    head = evaluation_latex(paper.at(N=4096, d=64, M=51200)).splitlines()[1]
    assert head == r"&\text{attention.fa1.fwd.paper at } N = 4096, d = 64, M = 51200\text{:} \\"


def test_missing_parameters_take_defaults_and_bad_ones_are_refused(paper):
    assert paper.at(N=4096).point == {"N": 4096, "d": 64, "M": 51200}
    with pytest.raises(BadInput, match="^d: "):
        paper.at(N=4096, d=0)
    with pytest.raises(BadInput, match="^Q: "):
        paper.at(Q=1)


def test_plain_repr_for_a_terminal(paper):
    text = evaluation_text(paper.at())
    assert text.splitlines()[0] == "attention.fa1.fwd.paper at N=4096, d=64, M=51200:"
    assert "reads = " in text and "= 11,706,368 elements" in text


def test_a_modelref_forwards_the_display():
    ref = next(r for r in registry.refs() if r.name == "gemm.tiled")
    ev = ref.at(M=256, N=256, K=256, B_M=128, B_N=128, B_K=32)
    # reads = K M ceil(N/B_N) + K N ceil(M/B_M) = 2 * 256^3 / 128 * ... = 256*256*2 + 256*256*2 = 262,144
    assert ev["reads"] == 262_144


def test_substituted_prints_values_for_parameters_only():
    from symbolic.models.attention import B_c, N, N_k, d
    import sympy as sp
    assert substituted_latex(2 * d * N_k + sp.ceiling(N / B_c), {"N": 10, "N_k": 12, "d": 3, "B_c": 4}) == \
        r"2 \cdot 12 \cdot 3 + \left\lceil \frac{10}{4} \right\rceil"
