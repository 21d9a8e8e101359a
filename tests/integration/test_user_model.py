"""Integration: a third-party package (examples/user_model) adds a model and its check through the
``tilebound.models`` / ``tilebound.checks`` entry points, with no edit to tilebound; and an entry point
whose module fails to import is an error naming that module, never a silent skip.

Needs the package installed (``pip install -e examples/user_model``): skipped without it, except under
``CI=true``, where CI installs it and its absence is a failure."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys

import pytest

import symbolic.registry
import verify.registry
from base.errors import BadInput
from verify.core import run_check

LAB_MODEL = "lab.softmax.rowwise"


def _clear_caches():
    symbolic.registry._refs.cache_clear()
    verify.registry._found.cache_clear()


@pytest.fixture
def fresh_registries():
    _clear_caches()
    yield
    _clear_caches()


@pytest.fixture
def lab_installed():
    try:
        importlib.metadata.distribution("tilebound-softmax-lab")
    except importlib.metadata.PackageNotFoundError:
        msg = "examples/user_model is not installed (pip install -e examples/user_model)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg + "; CI installs it")
        pytest.skip(msg)


def test_entry_points_are_declared(lab_installed):
    dist = importlib.metadata.distribution("tilebound-softmax-lab")
    eps = {(ep.group, ep.value) for ep in dist.entry_points}
    assert ("tilebound.models", "tilebound_softmax_lab.formulas") in eps
    assert ("tilebound.checks", "tilebound_softmax_lab.checks") in eps


def test_registries_find_the_lab_model_and_its_check(lab_installed, fresh_registries):
    assert LAB_MODEL in symbolic.registry.names()
    model = symbolic.registry.get(LAB_MODEL)
    assert [p.name for p in model.params] == ["R", "C", "B_C"]
    assert symbolic.registry.select("lab") == [LAB_MODEL]
    (check,) = verify.registry.checks_of(LAB_MODEL)
    assert check.model.name == LAB_MODEL
    assert [c.name for c in verify.registry.select("lab")] == [LAB_MODEL]


def test_lab_check_agrees(lab_installed, fresh_registries):
    (check,) = verify.registry.checks_of(LAB_MODEL)
    report = run_check(check, use_hypothesis=False)
    assert report.points > 0
    assert report.failed == 0, report.smallest_failure()
    # by hand (the lab's README): at R=2, C=10, B_C=4 a row has 3 tiles: exps = 2 (2*10 + 3 - 1) = 44
    assert symbolic.registry.get(LAB_MODEL).evaluate("exps", R=2, C=10, B_C=4) == 44


@pytest.fixture
def broken_lab(tmp_path, monkeypatch):
    """A package whose entry-point modules fail to import, announced in both groups."""
    pkg = tmp_path / "tilebound_broken_lab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "formulas.py").write_text("import sympy\nR = sympy.Symbol('R')\nbroken = undefined_name_in_lab\n")
    (pkg / "checks.py").write_text("raise RuntimeError('the lab check module is broken')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real_entry_points = importlib.metadata.entry_points
    extra = {group: importlib.metadata.EntryPoint("broken", f"tilebound_broken_lab.{module}", group)
             for group, module in (("tilebound.models", "formulas"), ("tilebound.checks", "checks"))}

    def entry_points(**params):
        found = real_entry_points(**params)
        group = params.get("group")
        return list(found) + [extra[group]] if group in extra else found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    _clear_caches()
    yield
    _clear_caches()
    for name in [m for m in sys.modules if m.startswith("tilebound_broken_lab")]:
        del sys.modules[name]


def test_a_broken_model_entry_point_is_an_error_naming_its_module(broken_lab):
    with pytest.raises(BadInput) as e:
        symbolic.registry.names()
    msg = str(e.value)
    assert "tilebound_broken_lab.formulas" in msg and "'broken'" in msg and "tilebound.models" in msg
    assert "NameError" in msg


def test_a_broken_check_entry_point_is_an_error_naming_its_module(broken_lab):
    with pytest.raises(BadInput) as e:
        verify.registry.all_checks()
    msg = str(e.value)
    assert "tilebound_broken_lab.checks" in msg and "tilebound.checks" in msg
    assert "the lab check module is broken" in msg


def test_the_broken_fixture_leaves_discovery_clean(fresh_registries):
    # after the broken package is gone, discovery works again (nothing cached from the failure)
    assert importlib.util.find_spec("tilebound_broken_lab") is None
    symbolic.registry.names()
