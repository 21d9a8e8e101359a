"""The sum of a blocked loop's block sizes, in the form every tiled model shares.

A loop over ``ceil(size / block)`` blocks whose last block is partial (masked loads: it moves only its
valid elements) visits ``min(block, size - i block)`` elements in block ``i``.  Every block but the last is
full and the last holds the rest, so

    sum_{i < ceil(size/block)} min(block, size - i block) = (t - 1) block + (size - (t - 1) block) = size,

``t = ceil(size / block)``.  :func:`partition_sum` writes the sum in that middle form, which SymPy cancels to
``size``; SymPy does not collapse the explicit ``Sum`` of ``Min`` itself.  ``tests/unit/test_gemm_formulas.py``
checks the form against the explicit sum by brute force.
"""

from __future__ import annotations

import sympy as sp

__all__ = ["partition_sum"]


def partition_sum(size, block):
    """``sum_{i < ceil(size/block)} min(block, size - i block)`` as full blocks plus the remainder (it
    equals ``size``); ``size`` and ``block`` are SymPy expressions or ints."""
    full = sp.ceiling(sp.sympify(size) / block) - 1
    return full * block + (size - full * block)
