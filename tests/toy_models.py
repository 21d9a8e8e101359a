"""Small models for the printer and CLI tests, independent of the attention/latency/GEMM families.

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
from symbolic.symbols import N

# plain SymPy symbols (not interned by symbolic.symbols.sym, where another family may own the names)
B = sp.Symbol("B", integer=True, positive=True)
t = sp.Symbol("t", integer=True, positive=True)
R, C, P = (sp.Symbol(n, integer=True, positive=True) for n in ("R", "C", "P"))


def halo_model() -> Model:
    return Model(name="toy.halo", summary="1-D stencil in tiles of B with a one-element halo each side",
                 quantities={"reads": N + 2 * sp.ceiling(N / B), "writes": N, "flops": 3 * N},
                 params=(N, B), divisible_subs={N: B * t}, regime=Regime("B <= N", le=((B, N),)),
                 lower_bounds={"compulsory": 2 * N}, defaults={"B": 32}, source="test toy")


def copy_model() -> Model:
    return Model(name="toy.copy", summary="copy N elements", quantities={"reads": N, "writes": N, "flops": sp.Integer(0)},
                 params=(N,), source="test toy")


def pair_model() -> Model:
    return Model(name="toy.pair", summary="all pairs in R x C tiles",
                 quantities={"reads": N * sp.ceiling(N / C) + N * sp.ceiling(N / R), "writes": N,
                             "flops": N**2},
                 params=(N, R, C), divisible_forms={"reads": 2 * N**2 / P, "writes": N, "flops": N**2},
                 divisible_note="R = C = P divides N", asymptotics_from_divisible=True,
                 regime=Regime("P <= N (divisible form: R = C = P)", le=((P, N),)), defaults={"R": 8, "C": 8},
                 source="test toy")


def halo_brute_force(point) -> dict:
    """Walk the tiles and count each element loaded and stored (the executor the plot test uses)."""
    n, b = point["N"], point["B"]
    reads = writes = 0
    for start in range(0, n, b):
        stop = min(start + b, n)
        reads += (stop - start) + 2          # the tile and its two halo elements
        writes += stop - start
    return {"reads": reads, "writes": writes, "total": reads + writes, "flops": 3 * n}


def register_toys(monkeypatch) -> None:
    """Put the toys into the model registry for one test (monkeypatch removes them afterwards)."""
    from symbolic import registry
    registry._load_families()
    monkeypatch.setattr(registry, "_FACTORIES", {**registry._FACTORIES,
                                                 "toy.halo": ("toy: 1-D stencil with a halo", halo_model),
                                                 "toy.copy": ("toy: copy", copy_model),
                                                 "toy.pair": ("toy: all pairs, asymptotics in P", pair_model)})
    monkeypatch.setattr(registry, "_BUILT", {k: v for k, v in registry._BUILT.items() if not k.startswith("toy.")})
