"""``Model.evaluate`` with a tuple of quantities: the point validated once, the values those named.

The reference figures are by hand: the tiled GEMM at M=100, N=64, K=50 in 32x32x16 tiles reads A once per
column block (2 of them: 100*50*2 = 10,000) and B once per row block (4: 50*64*4 = 12,800), writes C once
(6,400) and does 2MNK = 640,000 FLOP."""

import pytest

from base.errors import BadInput
from symbolic import registry

POINT = dict(M=100, N=64, K=50, B_M=32, B_N=32, B_K=16)


def test_a_tuple_of_quantities_gives_those_quantities_by_hand():
    m = registry.get("gemm.tiled")
    assert m.evaluate(("reads", "writes", "flops"), **POINT) == {"reads": 22_800, "writes": 6_400, "flops": 640_000}
    assert m.evaluate(["flops"], **POINT) == {"flops": 640_000}


def test_a_tuple_validates_its_point_and_names_an_unknown_quantity():
    m = registry.get("gemm.tiled")
    with pytest.raises(BadInput) as e:
        m.evaluate(("reads",), **{**POINT, "M": 0})
    assert e.value.param == "M"
    with pytest.raises(BadInput) as e:
        m.evaluate(("reads", "raeds"), **POINT)
    assert e.value.param == "quantity"


def test_a_check_validates_its_point_once(monkeypatch):
    """A check's formula side asks the model once per point, however many quantities it checks."""
    from symbolic.model import Model
    from verify.registry import select
    check = select("gemm.tiled")[0]
    calls = []
    real = Model.check_point
    monkeypatch.setattr(Model, "check_point", lambda self, p: calls.append(1) or real(self, p))
    assert check.formula(POINT)["reads"] == 22_800
    assert len(calls) == 1 and len(check.quantities) >= 3
