"""The divisible forms are the exact counts where the blocks divide the sizes, and :mod:`symbolic.canonical`.

A divisible form is *defined* as the quantity under the model's ``divisible_subs`` (``N = B_r t``, ...), so at
every point where the blocks divide the sizes it must equal the model's exact count.  The check draws the
block sizes and the quotients (the ``Dummy`` symbols, positive integers), builds the sizes from them through
``divisible_subs``, and compares the exact evaluation (:meth:`Model.evaluate`) with the divisible form
evaluated by SymPy on ``Integer`` values: nothing of the canonicalisation under test is used to check it.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy as sp

from base.errors import BadInput
from symbolic import registry
from symbolic.canonical import cancel_atoms, rebuild_atoms

#: the models that state their divisibility as substitutions (the others give their forms, derived by hand)
SUBSTITUTED = [n for n in registry.names() if registry.get(n).divisible_subs]


def _points(model, count: int, seed: int):
    """``count`` points (names -> values) where the blocks divide the sizes, valid for ``model``."""
    rng = random.Random(seed)
    quotients = sorted({d for rep in model.divisible_subs.values() for d in sp.sympify(rep).free_symbols
                        if isinstance(d, sp.Dummy)}, key=str)
    sizes = set(model.divisible_subs)
    out, tries = [], 0
    while len(out) < count and tries < 200 * count:
        tries += 1
        values = {}
        for p in model.params:
            if p in sizes:
                continue
            if p.counts and rng.random() < 0.5:     # a power of two: block sizes that nest with the formats'
                values[p] = max(p.least, 2 ** rng.randint(0, 8))
            elif p.counts:
                values[p] = rng.randint(max(p.least, 1), max(p.least, 1) + rng.choice((3, 8, 20)))
            else:
                values[p] = Fraction(rng.randint(1, 40), rng.randint(1, 8))
        values.update({d: rng.randint(1, 6) for d in quotients})
        for s, rep in model.divisible_subs.items():
            values[s] = int(sp.sympify(rep).xreplace({k: sp.Integer(v) if isinstance(v, int) else sp.Rational(
                v.numerator, v.denominator) for k, v in values.items()}))
        point = {p.name: values[p] for p in model.params}
        try:
            model.check_point(point)
        except BadInput:
            continue
        out.append(point)
    assert len(out) == count, f"{model.name}: only {len(out)} valid divisible points in {tries} draws"
    return out


def _value(form: sp.Expr, model, point) -> Fraction:
    """``form`` at ``point`` by SymPy on exact numbers (the sizes built from the blocks)."""
    env = {p: sp.Integer(v) if isinstance(v, int) else sp.Rational(v.numerator, v.denominator)
           for p, v in ((p, point[p.name]) for p in model.params)}
    v = sp.sympify(form).xreplace(env).doit()
    assert v.is_Rational, f"{model.name}: {form} at {point} is not a number: {v}"
    return Fraction(int(v.p), int(v.q))


def _check(name: str, count: int, seed: int) -> None:
    m = registry.get(name)
    forms = m.divisible()
    for point in _points(m, count, seed):
        exact = m.evaluate(list(forms), **point)
        for q, form in forms.items():
            assert _value(form, m, point) == exact[q], f"{name} {q} at {point}: {form}"


@pytest.mark.parametrize("name", SUBSTITUTED)
def test_divisible_form_is_the_exact_count_where_blocks_divide(name):
    _check(name, count=6, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", SUBSTITUTED)
def test_divisible_form_is_the_exact_count_where_blocks_divide_sweep(name):
    _check(name, count=50, seed=2)


def test_every_substituted_family_is_checked():
    # the families whose divisible forms come from substitution: GEMM, GEMV, MoE, the row kernels, the lab
    assert {"gemm.tiled", "gemm.splitk", "gemm.scaled.mxfp4", "gemv.tiled", "moe.grouped.uniform",
            "norm.rms"} <= set(SUBSTITUTED)


def test_equal_atoms_cancel_once_their_arguments_agree():
    t, s = sp.symbols("t s", positive=True, integer=True)
    x, y = sp.symbols("x y", positive=True)
    e = t * sp.floor(x * (1 + 1 / y)) + (t * s - t * (s - 1)) * (sp.ceiling(y) - sp.floor((x * y + x) / y))
    assert sp.expand(cancel_atoms(e)) == t * sp.ceiling(y)


def test_atoms_reevaluate_on_their_canonical_arguments():
    t, e, k, b = sp.symbols("t E k B", positive=True, integer=True)
    r = rebuild_atoms(sp.ceiling((t * b * e * k + e * (b - 1)) / b))
    assert r == t * e * k + e + sp.ceiling(-e / b)
    assert cancel_atoms((sp.Max(t, k) * (t + 1) - sp.Max(t, k)) / t) == sp.Max(t, k)
    assert cancel_atoms(sp.Integer(3)) == 3
