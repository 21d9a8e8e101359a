"""The decode checks can fail: plausible wrong formulas are each caught by the decode.* sweeps.

Each wrong model changes one thing the issue warns about: K/V traffic counted with query heads in the
packed grid (LLM-Viewer issue #12's bug), every split reloading Q even when it is empty (FA2's empty splits
exit first), partials counted for S = 1 too, and the block table read once per page for the whole
sequence instead of per key block.  The check's own grid (no hypothesis) must find each.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import sympy as sp

from symbolic.model import Model
from symbolic.models.decode import B, H, H_kv, L_q, N_k, P, S, counts, d, d_v, decode_packed, decode_packed_paged
from symbolic.registry import ModelRef
from verify import run_check
from verify.checks.decode import checks

CHECKS = {c.name: c for c in checks}


def _variant(name, base, packed, paged, change):
    q = counts(packed, paged)
    q.update(change(q))
    params = base.params
    return ModelRef(name, "a wrong decode model", lambda: Model(name, "wrong", q, params=params,
                                                                defaults=dict(base.defaults)))


WRONG = {
    "query heads for K and V (LLM-Viewer #12)": (decode_packed, True, False,
                                                  lambda q: {"reads_K": B * H * N_k * d, "reads_V": B * H * N_k * d_v}),
    "empty splits reload Q": (decode_packed, True, False, lambda q: {"reads_Q": B * H * L_q * d * S}),
    "partials at S = 1 too": (decode_packed, True, False, lambda q: {"writes_O_s": B * H * L_q * S * d_v}),
    "one table entry per page, not per block": (decode_packed_paged, True, True,
                                                lambda q: {"reads_table": B * H_kv * sp.ceiling(N_k / P)}),
}


@pytest.mark.parametrize("what", sorted(WRONG))
def test_a_wrong_decode_formula_is_caught(what):
    base, packed, paged, change = WRONG[what]
    wrong = _variant(f"wrong.{base.name}", base, packed, paged, change)
    check = replace(CHECKS[base.name], model=wrong, name=f"wrong.{base.name}", strategy=None)
    rep = run_check(check)
    assert rep.failed > 0, what
    assert rep.agreed > 0          # the wrong forms still agree where their change does not show
