"""``gemv.tiled`` against :func:`numeric.gemv.run_gemv`: reads, writes and FLOPs equal at every point.

Points small enough (``M K <= 4096``) run the executor in real mode, so the counts of real NumPy slices
are checked too; larger ones run count-only, up to sizes no array could hold.
"""

from __future__ import annotations

from itertools import product

from numeric.gemv import run_gemv
from symbolic.models.gemv import gemv_tiled

from ..core import Check

_REAL_UP_TO = 4096      # elements of A


def _execute(p) -> dict:
    M, K, B_M, B_K = p["M"], p["K"], p["B_M"], p["B_K"]
    real = isinstance(M, int) and isinstance(K, int) and M * K <= _REAL_UP_TO
    return run_gemv(M, K, B_M, B_K, real=real).counts()


def _grid(full: bool):
    # edge cases first: one element; a block larger than the size; blocks that divide; a partial last
    # tile row and K-step; one tile row (the compulsory traffic); count-only sizes no array could hold
    yield {"M": 1, "K": 1, "B_M": 1, "B_K": 1}
    yield {"M": 3, "K": 5, "B_M": 8, "B_K": 8}
    yield {"M": 64, "K": 48, "B_M": 16, "B_K": 16}
    yield {"M": 65, "K": 49, "B_M": 16, "B_K": 16}
    yield {"M": 7, "K": 300, "B_M": 7, "B_K": 64}
    # beyond int64 (M K = 10**22) with few loop steps: 10 x 10, and 9 x 8 with a one-row last tile and a
    # partial last K-step; the full sweep walks the same sizes in 100,000 and 65,600 steps
    yield {"M": 10**12, "K": 10**10, "B_M": 10**11, "B_K": 10**9}
    yield {"M": 2**40 + 1, "K": 2**33 - 1, "B_M": 2**37, "B_K": 2**30}
    if full:
        yield {"M": 10**12, "K": 10**10, "B_M": 10**9, "B_K": 10**8}
        yield {"M": 2**40 + 1, "K": 2**33 - 1, "B_M": 2**30, "B_K": 2**27}
    sizes = (1, 2, 5, 16, 17, 100) if full else (1, 5, 17)
    blocks = (1, 2, 4, 16, 64) if full else (1, 4, 16)
    for M, K, B_M, B_K in product(sizes, sizes, blocks, blocks):
        yield {"M": M, "K": K, "B_M": B_M, "B_K": B_K}


def _points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"M": st.integers(1, 200), "K": st.integers(1, 200),
                                  "B_M": st.integers(1, 64), "B_K": st.integers(1, 64)})


gemv = Check(model=gemv_tiled, execute=_execute, grid=_grid, strategy=_points,
             size=lambda p: p["M"] * p["K"],
             description="tiled y = A x: global reads/writes and FLOPs, real mode up to 4096 elements of A")
