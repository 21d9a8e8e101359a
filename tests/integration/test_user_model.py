"""Integration: a third-party package (examples/user_model) adds a model, its check and its annotated
listing through the ``tilebound.models`` / ``tilebound.checks`` / ``tilebound.listings`` entry points, with
no edit to tilebound (``tilebound latex`` prints the listing, ``python -m verify`` checks it as
``lab.softmax.rowwise.listing``); and an entry point whose module fails to import is an error naming that
module, never a silent skip.

Needs the package installed (``pip install -e examples/user_model``): skipped without it, except under
``CI=true``, where CI installs it and its absence is a failure."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys

import pytest

import symbolic.listings
import symbolic.registry
import verify.registry
from base.errors import BadInput
from verify.core import Check, Property, run_check

LAB_MODEL = "lab.softmax.rowwise"


def _clear_caches():
    symbolic.registry._refs.cache_clear()
    symbolic.listings._table.cache_clear()
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
    assert ("tilebound.listings", "tilebound_softmax_lab.listing") in eps


def test_registries_find_the_lab_model_and_its_check(lab_installed, fresh_registries):
    assert LAB_MODEL in symbolic.registry.names()
    model = symbolic.registry.get(LAB_MODEL)
    assert [p.name for p in model.params] == ["R", "C", "B_C"]
    assert symbolic.registry.select("lab") == [LAB_MODEL]
    (check,) = [c for c in verify.registry.checks_of(LAB_MODEL) if isinstance(c, Check)]
    assert check.model.name == LAB_MODEL
    # the lab's check, and the property its listing adds (verify/checks/listings.py, found by discovery)
    assert sorted(c.name for c in verify.registry.select("lab")) == [LAB_MODEL, LAB_MODEL + ".listing"]


def test_lab_check_agrees(lab_installed, fresh_registries):
    (check,) = [c for c in verify.registry.checks_of(LAB_MODEL) if isinstance(c, Check)]
    report = run_check(check, use_hypothesis=False)
    assert report.points > 0
    assert report.failed == 0, report.smallest_failure()
    # by hand (the lab's README): at R=2, C=10, B_C=4 a row has 3 tiles: exps = 2 (2*10 + 3 - 1) = 44
    assert symbolic.registry.get(LAB_MODEL).evaluate("exps", R=2, C=10, B_C=4) == 44


def test_the_lab_listing_is_found_and_names_its_model_object(lab_installed, fresh_registries):
    listing = symbolic.listings.listing_for(LAB_MODEL)
    assert listing is not None and LAB_MODEL in symbolic.listings.listings()
    (ref,) = [r for r in symbolic.registry.refs() if r.name == LAB_MODEL]
    assert listing.model is ref                     # the ModelRef object, not a name
    # by hand (the lab's README): both passes read each of the R C elements once, pass 2 writes each once;
    # at R=2, C=10, B_C=4 a row is 3 tiles (4, 4, 2 columns): the walk takes 2 + 2 * 2 * 3 = 14 iterations
    got = listing.count(dict(R=2, C=10, B_C=4))
    assert got == {"reads": 40, "writes": 20} and got.method == "walk" and got.iterations == 14


def test_verify_checks_the_lab_listing(lab_installed, fresh_registries):
    (prop,) = verify.registry.select(LAB_MODEL + ".listing")
    assert isinstance(prop, Property) and prop.model.name == LAB_MODEL
    report = run_check(prop, use_hypothesis=False)
    assert report.points > 0
    assert report.failed == 0, report.smallest_failure()


def test_tilebound_latex_prints_the_lab_listing(lab_installed, fresh_registries, capsys):
    from tilebound.cli import main
    rc = main(["latex", LAB_MODEL, "--standalone", "--no-figures", "--no-tables"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out.count(r"\begin{algorithm}") == 1
    assert "online normalizer (two passes)" in out and "arXiv:1805.02867, Algorithm 3" in out
    rc = main(["latex", LAB_MODEL, "--standalone", "--no-figures", "--no-tables", "--no-listings"])
    out, _ = capsys.readouterr()
    assert rc == 0 and r"\begin{algorithm}" not in out


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
