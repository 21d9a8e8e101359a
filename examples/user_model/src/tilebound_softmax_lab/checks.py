"""The lab's check: ``lab.softmax.rowwise`` against :func:`~tilebound_softmax_lab.executor.run_softmax`,
reads, writes and exps equal at every point.  Found by tilebound through the ``tilebound.checks``
entry point; ``python -m verify --model lab`` runs it."""

from __future__ import annotations

from itertools import product

from verify.core import Check

from .executor import run_softmax
from .formulas import softmax_rowwise

_REAL_UP_TO = 4096          # elements of X: smaller points run real NumPy data


def _execute(p) -> dict:
    R, C, B_C = p["R"], p["C"], p["B_C"]
    return run_softmax(R, C, B_C, real=R * C <= _REAL_UP_TO).counts()


def _grid(full: bool):
    yield {"R": 1, "C": 1, "B_C": 1}                    # one element
    yield {"R": 3, "C": 5, "B_C": 8}                    # the row fits in one tile: no rescale
    yield {"R": 4, "C": 64, "B_C": 16}                  # tiles divide the row
    yield {"R": 4, "C": 65, "B_C": 16}                  # a partial last tile
    yield {"R": 2, "C": 10**12, "B_C": 10**10}          # count-only: a row no array could hold
    sizes = (1, 2, 7, 16, 33) if full else (1, 7, 33)
    blocks = (1, 2, 8, 32, 64) if full else (1, 8, 32)
    for R, C, B_C in product((1, 3), sizes, blocks):
        yield {"R": R, "C": C, "B_C": B_C}


def _points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"R": st.integers(1, 8), "C": st.integers(1, 300), "B_C": st.integers(1, 64)})


softmax = Check(model=softmax_rowwise, execute=_execute, grid=_grid, strategy=_points,
                quantities=("reads", "writes", "exps"), size=lambda p: p["R"] * p["C"],
                description="a lab's tiled row-wise softmax (online normalizer): reads, writes, exps")
