"""Listings are found as models and checks are, each checked against its model at discovery; and
:meth:`Listing.count` validates a point once, walks the loops within its budget and says how it counted.

A plug-in package (written into a temporary folder, announced through a patched ``tilebound.listings``
entry point) lists ``toy.halo`` (``toy_models.py``); its counts are compared with the toy's brute-force
walk of the tiles (``halo_brute_force``), and the symbolic sums of the shipped listings with plain loops
written here.  The bad listings are each refused at discovery, naming the listing and what is wrong.
"""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import symbolic.listings
from base.discovery import PluginError
from base.errors import BadInput
from symbolic.evaluate import exact
from symbolic.listings import WALK_BUDGET, Count, listing_for
from toy_models import halo, halo_brute_force

#: the toy listing: ``toy.halo``'s tiles, each loading its valid elements and two halo elements
HALO = """
    import sympy as sp
    from symbolic.listings import Line, Listing, Loop, abbreviation, index
    from toy_models import B, N, halo

    j = index("j")
    t, w_j = abbreviation("t"), abbreviation("w_j")
    DEFS = ((t, sp.ceiling(N / B), "tiles"), (w_j, sp.Min(B, N - (j - 1) * B), "valid elements of tile $j$"))

    def listing(model=halo, reads=w_j + 2, outside=0, defs=DEFS):
        return Listing(model=model, title="toy stencil", source="test toy", require="$x$ in memory",
                       body=(Loop(j, 1, t, (Line("load", reads=reads), Line("store", writes=w_j))),
                             Line("nothing", reads=outside)),
                       defs=defs)
"""

BAD = {
    "good": "HALO = listing()",
    "unknown_model": "from symbolic.registry import ModelRef\n"
                     "ELSEWHERE = ModelRef('toy.nowhere', 'a model no formula module defines', lambda: None)\n"
                     "BAD = listing(model=ELSEWHERE)",
    "copy_of_model": "from symbolic.registry import ModelRef\n"
                     "TWIN = ModelRef('toy.halo', 'a second object of the same name', halo._build)\n"
                     "BAD = listing(model=TWIN)",
    "string_model": "BAD = listing(model='toy.halo')",
    "stray_symbol": "BAD = listing(reads=w_j + sp.Symbol('Q', integer=True, positive=True))",
    "undefined_abbreviation": "BAD = listing(reads=abbreviation('h_i'))",
    "index_outside_its_loop": "BAD = listing(outside=j)",
    "plain_symbol_as_index": "BAD = listing(reads=sp.Symbol('j', integer=True, positive=True) + w_j)",
    "abbreviation_uses_a_stray": "BAD = listing(defs=DEFS + ((abbreviation('z'), sp.Symbol('Z'), 'z'),))",
    "two_of_one_model": "A = listing()\nB2 = listing()",
}


@pytest.fixture
def plugin(tmp_path, monkeypatch, toys):
    """``plugin(module)``: discovery with the package module ``tilebound_toy_listings.<module>`` announced
    in ``tilebound.listings`` (``toy.halo`` registered by the ``toys`` fixture)."""
    pkg = tmp_path / "tilebound_toy_listings"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(textwrap.dedent(HALO))
    for name, body in BAD.items():
        (pkg / f"{name}.py").write_text("from .base import *  # noqa: F403\n" + body + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = importlib.metadata.entry_points

    def use(module, checked=True):
        ep = importlib.metadata.EntryPoint("toy", f"tilebound_toy_listings.{module}", "tilebound.listings")

        def entry_points(**params):
            found = real(**params)
            return list(found) + [ep] if params.get("group") == "tilebound.listings" else found
        monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
        symbolic.listings._table.cache_clear()
        return symbolic.listings.listings() if checked else symbolic.listings.discovered()
    yield use
    symbolic.listings._table.cache_clear()
    for name in [m for m in sys.modules if m.startswith("tilebound_toy_listings")]:
        del sys.modules[name]


def test_a_plugin_listing_is_found_by_its_models_name(plugin):
    found = plugin("good")
    lst = found["toy.halo"]
    assert lst.model is halo and listing_for("toy.halo") is lst
    assert {"attention.fa1.fwd", "gemm.tiled", "decode.packed"} <= set(found)    # the package's own too


@pytest.mark.parametrize("module, words", [
    ("unknown_model", ["'toy stencil'", "toy.nowhere", "no formula module defines"]),
    ("copy_of_model", ["toy.halo", "not the registered one"]),
    ("stray_symbol", ["toy.halo", "line 2's reads uses Q", "neither a parameter"]),
    ("undefined_abbreviation", ["uses h_i", "neither a parameter of the model nor an index or abbreviation"]),
    ("index_outside_its_loop", ["line 5's reads uses j", "the index of no loop around it"]),
    ("plain_symbol_as_index", ["uses j", "a plain symbol named like a loop index"]),
    ("abbreviation_uses_a_stray", ["the abbreviation z uses Z"]),
])
def test_a_bad_listing_is_refused_at_discovery_naming_it(plugin, module, words):
    with pytest.raises(BadInput) as e:
        plugin(module)
    assert e.value.param == "listing"
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("module", ["stray_symbol", "undefined_abbreviation", "index_outside_its_loop"])
def test_a_bad_listing_is_found_unchecked_and_refused_when_looked_up(plugin, module):
    """Discovery alone builds no model and checks nothing (what ``python -m verify --list`` reads); the
    bad listing is refused when it is looked up - by its own name - and by :func:`listings`."""
    found = plugin(module, checked=False)
    assert "toy.halo" in found and found["toy.halo"].model is halo
    with pytest.raises(BadInput) as e:
        listing_for("toy.halo")
    assert e.value.param == "listing" and "toy.halo" in str(e.value)
    assert listing_for("gemm.tiled").model.name == "gemm.tiled"        # the others are looked up as before
    with pytest.raises(BadInput):
        symbolic.listings.listings()


def test_a_listing_naming_its_model_by_a_string_fails_its_module(plugin):
    with pytest.raises(PluginError) as e:
        plugin("string_model")
    assert "tilebound_toy_listings.string_model" in str(e.value) and "tilebound.listings" in str(e.value)
    assert isinstance(e.value.__cause__, TypeError) and "names its model object" in str(e.value.__cause__)


def test_two_listings_of_one_model_are_refused(plugin):
    with pytest.raises(PluginError, match="two listings are named 'toy.halo'"):
        plugin("two_of_one_model")


# ----------------------------------------------------------------------------------- counting
_NS: dict = {}
exec(textwrap.dedent(HALO), _NS)     # the same toy listing as a plain object (no discovery)
HALO_LISTING = _NS["listing"]()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40))
@example(1, 1).via("one element")
@example(32, 32).via("one full tile")
@example(33, 32).via("a partial last tile")
@example(5, 40).via("block > size")
def test_walk_and_sums_equal_the_brute_force(n, b):
    want = halo_brute_force({"N": n, "B": b})
    for method in ("walk", "sums"):
        got = HALO_LISTING.count({"N": n, "B": b}, method=method)
        assert got == {"reads": want["reads"], "writes": want["writes"]} and got.method == method


def test_count_walks_within_the_budget_and_sums_beyond_it():
    lst = HALO_LISTING
    # by hand: ceil(100 / 7) = 15 tiles, one loop iteration each
    small = lst.count({"N": 100, "B": 7})
    assert isinstance(small, Count) and small.method == "walk" and small.iterations == 15
    assert lst.count({"N": 100, "B": 7}, budget=14).method == "sums"
    assert lst.count({"N": 100, "B": 7}, budget=15).method == "walk"
    # 10**6 tiles, over the stated budget: the sums, with the walk's iterations said
    big = lst.count({"N": 10**6, "B": 1})
    assert WALK_BUDGET < 10**6
    assert big.method == "sums" and big.iterations == 10**6
    assert big == {"reads": 3 * 10**6, "writes": 10**6}     # N + 2 ceil(N / B), N
    # exact at any size: 10**30 elements in tiles of 3
    n = 10**30
    assert lst.count({"N": n, "B": 3}) == {"reads": n + 2 * -(-n // 3), "writes": n}


def test_count_validates_its_point_once_by_the_model():
    lst = HALO_LISTING
    with pytest.raises(BadInput) as e:
        lst.count({"N": 0, "B": 4})
    assert e.value.param == "N"
    with pytest.raises(BadInput) as e:
        lst.count({"N": 10, "B": 4, "Q": 1})
    assert e.value.param == "Q"
    with pytest.raises(BadInput) as e:
        lst.count({"N": 10, "B": 4}, method="guess")
    assert e.value.param == "method"
    assert lst.count({"N": 64}) == {"reads": 64 + 2 * 2, "writes": 64}     # B takes the model's default, 32


def test_a_walk_never_runs_past_its_budget():
    """An empty loop written with ``hi < lo - 1`` makes the trip-count estimate short (it counts ``hi - lo +
    1 < 0``); the walk itself stops at the budget and the count falls back to the sums."""
    from symbolic.listings import Line, Listing, Loop, index
    from toy_models import N
    j, k = index("j"), index("k")
    lst = Listing(model=halo, title="t", source="s", require="r",
                  body=(Loop(j, 1, N, (Line("one", reads=1), Loop(k, j + 3, 1, (Line("never"),)))),))
    assert lst.count({"N": 10}, budget=10**6) == {"reads": 10, "writes": 0}
    capped = lst.count({"N": 10}, budget=5)
    assert capped.method == "sums" and capped == {"reads": 10, "writes": 0}


def test_sum_with_an_inner_bound_on_the_outer_index():
    """``Sum(f, (j, 1, i), (i, 1, n))``: the last limit is the outer one (SymPy's order)."""
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    assert exact(sp.Sum(j, (j, 1, i), (i, 1, n)), n=10) == sum(jj for ii in range(1, 11) for jj in range(1, ii + 1))


@pytest.mark.parametrize("N_, N_k_, d_, B_r_, B_c_", [(5, 5, 3, 2, 2), (7, 11, 2, 3, 2), (64, 64, 1, 16, 8),
                                                     (100, 131, 8, 1, 7), (33, 33, 4, 32, 64)])
def test_causal_fa2_sums_equal_plain_loops(N_, N_k_, d_, B_r_, B_c_):
    """The causal FA2 listing's reads are a double sum whose inner bound (``J_i``) uses the outer index:
    by the sums and by the walk, against the loops written out here (query block i loads Q_i once and the
    key blocks 1..J_i, J_i = min(T_c, ceil((N_k - N + i B_r) / B_c)), each 2 d w_j elements)."""
    T_r, T_c = -(-N_ // B_r_), -(-N_k_ // B_c_)
    reads = writes = 0
    for i in range(1, T_r + 1):
        h = min(B_r_, N_ - (i - 1) * B_r_)
        reads += d_ * h
        for jj in range(1, min(T_c, -(-(N_k_ - N_ + i * B_r_) // B_c_)) + 1):
            reads += 2 * d_ * min(B_c_, N_k_ - (jj - 1) * B_c_)
        writes += (d_ + 1) * h
    pt = dict(N=N_, N_k=N_k_, d=d_, B_r=B_r_, B_c=B_c_)
    lst = listing_for("attention.fa2.fwd.causal")
    for method in ("walk", "sums"):
        assert lst.count(pt, method=method) == {"reads": reads, "writes": writes}, method
