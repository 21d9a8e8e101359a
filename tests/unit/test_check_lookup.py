"""``verify.registry.check_for`` before discovery (importing check modules one at a time, stopping early)
gives the same check as after every check is discovered, and the grader's look-up imports no listing.

The reference is the full registry (:func:`verify.registry.all_checks`, every module imported), ranked
as :func:`check_for` documents: a check of the quantity first, then the one named like the model, then
registry order - written out here, not taken from the code under test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from symbolic import registry as models
from verify import registry
from verify.core import Check

ROOT = Path(__file__).resolve().parents[2]


def _reference(name, quantity):
    checks = [c for c in registry.all_checks() if isinstance(c, Check) and c.model.name == name]
    def covers(c):
        qs = set(c.quantities)
        return quantity in qs or (quantity == "total" and {"reads", "writes"} <= qs)
    best = [c for c in checks if quantity is None or covers(c)] or checks
    named = [c for c in best if c.name == name]
    return (named or best or [None])[0]


def test_lazy_lookup_agrees_with_the_full_registry_for_every_model_and_quantity():
    seen = 0
    for ref in models.refs():
        qs = {q for c in registry.all_checks() if c.model is not None and c.model.name == ref.name
              for q in getattr(c, "quantities", ())}
        for q in sorted(qs | {"total", "no_such_quantity"}) + [None]:
            want = _reference(ref.name, q)
            got = registry._check_for_lazily(ref.name, q)
            assert got is want, (ref.name, q, got, want)
            assert registry.check_for(ref, q) is want, (ref.name, q)
            seen += want is not None
    assert seen > 100          # the comparison ran over the models that have checks


def test_the_graders_lookup_imports_only_the_modules_it_needs():
    code = ("import sys; from symbolic import registry as r; from verify import registry as v; "
            "c = v.check_for(r.get('attention.fa1.fwd.paper'), 'total'); "
            "print(c.name, 'verify.checks.listings' in sys.modules, 'verify.checks.mla' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["attention.fa1.fwd.paper", "False", "False"]


def test_the_order_puts_the_models_own_modules_first():
    order = [src[0] for _, src in registry.lookup_order("decode.mla.fp8")]
    first = order.index("verify.checks.mla")            # decode.mla's checks are in mla.py
    assert "verify.checks.decode" in order[:first]      # a module named after a word of the name: as likely
    assert order.index("verify.checks.listings") > first and order.index("verify.checks.attention") > first
    order = [src[0] for _, src in registry.lookup_order("softmax.naive")]     # defined in symbolic.models.rows
    assert order[0] == "verify.checks.rows"
