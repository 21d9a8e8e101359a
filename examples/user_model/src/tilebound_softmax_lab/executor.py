"""The tiled row-wise softmax in NumPy, counting every element it loads and stores and every exp.

The loop nest of :mod:`tilebound_softmax_lab.formulas` (two passes, online normalizer), run in one of two
modes: real (``real=True``: NumPy data, returns ``Y``, equal to the softmax of each row) or count-only
(the default: shapes alone, nothing allocated).  Work over a budget is refused before it starts, with
:class:`base.errors.BadInput` naming a parameter.  Imports NumPy and tilebound's :mod:`base` only: the
executor is the independent side of the check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from base import validate
from base.errors import BadInput

__all__ = ["SoftmaxRun", "run_softmax", "MAX_ELEMENTS", "MAX_STEPS"]

MAX_ELEMENTS = 1 << 24      # real mode: elements of X
MAX_STEPS = 1 << 22         # either mode: tile steps (rows x tiles x 2 passes)


@dataclass
class SoftmaxRun:
    reads: int
    writes: int
    exps: int
    Y: Optional[np.ndarray]

    def counts(self) -> dict:
        return {"reads": self.reads, "writes": self.writes, "exps": self.exps}


class _Shape:
    """Count-only stand-in for a row, a tile or a scalar: a size, no data.  Arithmetic broadcasts sizes,
    so the loop below is the same code in both modes."""

    def __init__(self, size: int):
        self.size = size

    def __getitem__(self, s: slice):
        return _Shape(len(range(*s.indices(self.size))))

    def _op(self, other):
        return _Shape(max(self.size, getattr(other, "size", 1)))

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _op

    def max(self):
        return _Shape(1)

    sum = max


class _Chip:
    """Global memory and the exp unit, counted: loads and stores by element, exps by evaluation."""

    def __init__(self, real: bool):
        self.real, self.reads, self.writes, self.exps = real, 0, 0, 0

    def load(self, row, cols: slice):
        tile = row[cols]
        self.reads += int(tile.size)
        return tile

    def store(self, row, cols: slice, tile) -> None:
        if self.real:
            row[cols] = tile
        self.writes += int(tile.size)

    def exp(self, values):
        self.exps += int(values.size)
        return np.exp(values) if self.real else values

    def maximum(self, a, b):
        return np.maximum(a, b) if self.real else _Shape(1)


def run_softmax(R: int, C: int, B_C: int, *, real: bool = False, X=None, seed: int = 0,
                max_elements: int = MAX_ELEMENTS, max_steps: int = MAX_STEPS) -> SoftmaxRun:
    """Softmax of each row of ``X`` (``R x C``; random normal from ``seed`` when not given) in tiles of
    ``B_C`` columns.  Counts are exact ints; ``Y`` only in real mode."""
    R, C, B_C = validate.positive_int("R", R), validate.positive_int("C", C), validate.positive_int("B_C", B_C)
    max_elements = validate.positive_int("max_elements", max_elements)
    max_steps = validate.positive_int("max_steps", max_steps)
    if not isinstance(real, bool):
        raise BadInput("real", f"must be True or False, got {real!r}")
    if X is not None and not real:
        raise BadInput("X", "a given X needs real=True (count-only mode has no data)")
    tiles = -(-C // B_C)
    if 2 * R * tiles > max_steps:
        name = "R" if R >= tiles else "B_C"
        raise BadInput(name, f"{R:,} rows x {tiles:,} tiles x 2 passes = {2 * R * tiles:,} steps exceed the "
                             f"budget of {max_steps:,} (max_steps)")
    if real and R * C > max_elements:
        raise BadInput("R" if R >= C else "C", f"real mode would hold R C = {R * C:,} elements, over the "
                                               f"budget of {max_elements:,} (max_elements); use real=False")
    if real:
        X = (np.random.default_rng(validate.integer("seed", seed, least=0)).standard_normal((R, C)) if X is None
             else validate.real_array("X", X).astype(float))
        if X.shape != (R, C):
            raise BadInput("X", f"shape {X.shape}, expected {(R, C)}")
        Y = np.empty((R, C))
    chip = _Chip(real)
    for r in range(R):                                                # one program per row
        x, y = (X[r], Y[r]) if real else (_Shape(C), _Shape(C))
        m = l = None
        for c0 in range(0, C, B_C):                                   # pass 1: online normalizer
            tile = chip.load(x, slice(c0, c0 + B_C))
            if m is None:                                             # the first tile sets m and l
                m = tile.max()
                l = chip.exp(tile - m).sum()
            else:                                                     # later tiles rescale l once
                m_new = chip.maximum(m, tile.max())
                l = l * chip.exp(m - m_new) + chip.exp(tile - m_new).sum()
                m = m_new
        for c0 in range(0, C, B_C):                                   # pass 2: outputs
            cols = slice(c0, c0 + B_C)
            chip.store(y, cols, chip.exp(chip.load(x, cols) - m) / l)
    return SoftmaxRun(chip.reads, chip.writes, chip.exps, Y if real else None)
