"""The elements a load charges are those NumPy's own basic slicing selects: every 2-D slice form (the executors'
fast path) and a few other shapes, at small sizes, against ``numpy.empty(shape)[idx].size`` - an independent
reference, in count-only and in real mode."""

import itertools

import numpy as np
import pytest

from numeric.memory import GlobalMemory

_ENDS = (None, 0, 1, 2, 3, 5, 7, -1, -3)


@pytest.mark.parametrize("shape", [(5, 3), (1, 7), (4, 4), (0, 3)])
def test_a_2d_load_charges_what_numpy_slices(shape):
    x = np.arange(int(np.prod(shape)), dtype=float).reshape(shape)
    for real in (False, True):
        mem = GlobalMemory(real=real)
        a = mem.put("X", x if real else shape)
        for s0, e0, s1, e1 in itertools.product(_ENDS, repeat=4):
            idx = (slice(s0, e0), slice(s1, e1))
            before = mem.tally.reads
            tile = mem.load(a, idx)
            assert mem.tally.reads - before == x[idx].size, (shape, idx)
            assert tile.shape == x[idx].shape, (shape, idx)


@pytest.mark.parametrize("idx", [(slice(0, 3, 2), slice(1, None)), (slice(None), 1), (2,), slice(1, 4),
                                 (slice(1, 3), slice(None, None, -1))])
def test_other_loads_charge_what_numpy_slices(idx):
    x = np.empty((5, 3))
    mem = GlobalMemory(real=False)
    a = mem.put("X", (5, 3))
    tile = mem.load(a, idx)
    assert mem.tally.reads == x[idx].size and tile.shape == x[idx].shape
