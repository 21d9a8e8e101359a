"""Small models for the printer, CLI and verify tests, independent of the attention/latency/GEMM families.

Each toy declares its own parameters (:func:`symbolic.params.param`) and is a
:class:`~symbolic.registry.ModelRef`, as a model file does; the ``toys`` fixture (``conftest.py``)
injects them into the registry for one test.

``toy.halo``: a 1-D three-point stencil over ``N`` elements in tiles of ``B``: each tile loads its ``B``
elements (the last one fewer) plus one halo element on each side, so reads = N + 2⌈N/B⌉ (a halo
element past either end is loaded as padding - a toy convention), writes = N, flops = 3N.
``toy.copy``: reads = writes = N.  ``halo_brute_force`` counts the same loop element by element.
``toy.pair``: all pairs of N elements in tiles of R rows and C columns, each row tile re-reading the
columns and vice versa: reads = N⌈N/C⌉ + N⌈N/R⌉, writes = N.  Like the causal attention models, its
asymptotics are of its divisible form R = C = P (reads 2N²/P), so its Θ class N²/P is in P, not in its
parameters.
"""

from __future__ import annotations

import sympy as sp

from symbolic.asymptotics import Regime
from symbolic.model import Model
from symbolic.params import param
from symbolic.registry import defines

N = param("N", "number of elements")
B = param("B", "tile size (elements)")
R = param("R", "row tile (elements)")
C = param("C", "column tile (elements)")
t = sp.Dummy("t", integer=True, positive=True)          # derivation only: N = B t
P = sp.Dummy("P", integer=True, positive=True)          # the divisible form's common tile R = C = P


@defines("toy.halo", "toy: 1-D stencil with a halo")
def halo():
    return Model(name="toy.halo", summary="1-D stencil in tiles of B with a one-element halo each side",
                 quantities={"reads": N + 2 * sp.ceiling(N / B), "writes": N, "flops": 3 * N},
                 params=(N, B), divisible_subs={N: B * t}, regime=Regime("B <= N", le=((B, N),)),
                 lower_bounds={"compulsory": 2 * N}, defaults={"B": 32}, source="test toy")


@defines("toy.copy", "toy: copy")
def copy():
    return Model(name="toy.copy", summary="copy N elements", quantities={"reads": N, "writes": N, "flops": sp.Integer(0)},
                 params=(N,), source="test toy")


@defines("toy.pair", "toy: all pairs, asymptotics in P")
def pair():
    return Model(name="toy.pair", summary="all pairs in R x C tiles",
                 quantities={"reads": N * sp.ceiling(N / C) + N * sp.ceiling(N / R), "writes": N,
                             "flops": N**2},
                 params=(N, R, C), divisible_forms={"reads": 2 * N**2 / P, "writes": N, "flops": N**2},
                 divisible_note="R = C = P divides N", asymptotics_from_divisible=True,
                 regime=Regime("P <= N (divisible form: R = C = P)", le=((P, N),)), defaults={"R": 8, "C": 8},
                 source="test toy")


TOYS = (halo, copy, pair)


def halo_model() -> Model:
    """A fresh ``toy.halo`` Model (not the cached one of the ModelRef)."""
    return halo._build()


def copy_model() -> Model:
    return copy._build()


def pair_model() -> Model:
    return pair._build()


def halo_brute_force(point) -> dict:
    """Walk the tiles and count each element loaded and stored (the executor the plot and verify tests use)."""
    n, b = point["N"], point["B"]
    reads = writes = 0
    for start in range(0, n, b):
        stop = min(start + b, n)
        reads += (stop - start) + 2          # the tile and its two halo elements
        writes += stop - start
    return {"reads": reads, "writes": writes, "flops": 3 * n}


def _halo_grid(full):
    return [dict(N=n, B=b) for n in (1, 31, 32, 33, 100, 1024) for b in (1, 4, 32)]


def halo_check():
    """``toy.halo`` against its brute-force count, as a check module would bind it."""
    from verify.core import Check
    return Check(model=halo, execute=halo_brute_force, grid=_halo_grid, description="toy: halo vs brute force")


def register_toys(monkeypatch) -> None:
    """Put the toys into the model registry for one test (monkeypatch restores it afterwards): the
    registry's discovered ``{name: ModelRef}`` with the toys added."""
    from symbolic import registry
    found = {**registry._refs(), **{ref.name: ref for ref in TOYS}}
    monkeypatch.setattr(registry, "_refs", lambda: found)


def register_toy_checks(monkeypatch, *checks) -> None:
    """Put ``checks`` (default: :func:`halo_check`) into the check registry for one test."""
    from verify import registry
    checks = checks or (halo_check(),)
    found = {**registry._found(), **{c.name: c for c in checks}}
    monkeypatch.setattr(registry, "_found", lambda: found)
