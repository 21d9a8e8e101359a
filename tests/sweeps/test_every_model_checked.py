"""Every registered model is checked: a Check or Property names it, or it sits in the one exemption
table (verify/exemptions.py) with a reason.  Discovery runs for real (no skip guards), so a family
module that fails to import fails here, naming it."""

from __future__ import annotations

from symbolic import registry
from verify import registry as checks
from verify.exemptions import EXEMPT


def test_every_model_has_a_check_or_a_stated_exemption():
    covered = {c.model.name for c in checks.all_checks() if c.model is not None}
    missing = [n for n in registry.names() if n not in covered and n not in EXEMPT]
    assert not missing, f"models with no check and no exemption: {missing}"


def test_exemptions_name_real_unchecked_models_with_a_reason():
    covered = {c.model.name for c in checks.all_checks() if c.model is not None}
    for name, reason in EXEMPT.items():
        assert name in registry.names(), f"exemption for unknown model {name}"
        assert name not in covered, f"{name} is exempt but has a check: drop the exemption"
        assert len(reason.split()) >= 4, f"{name}: say why it has no check"


def test_every_check_point_uses_its_models_parameter_names():
    for c in checks.all_checks():
        if c.model is None or not hasattr(c, "extra"):
            continue
        params = {p.name for p in c.model.params}
        for point in list(c.grid(False))[:20]:
            stray = set(point) - params - set(c.extra)
            assert not stray, f"{c.name}: point keys {sorted(stray)} are not parameters of {c.model.name}"
