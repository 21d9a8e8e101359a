"""Block-scaled GEMM checks: :mod:`symbolic.models.gemm_scaled` against :func:`numeric.gemm_scaled.run_scaled`.

* ``gemm.scaled.<format>`` (``fp8_block``, ``mxfp8``, ``mxfp4``, ``nvfp4``) - payload, scale, padding and
  output bytes and the element counts, exactly, count-only mode: ``K`` not a multiple of the scale group
  or of the packed word, rows not a multiple of the scale alignment (4, or 128 for NVFP4), tiles whose
  columns straddle a 128-column weight block (``B_N = 112, 144``), K-steps shorter and longer than a
  word, tiles larger than the matrix, sizes beyond int64.
* ``gemm.scaled.real`` (a Property) - real mode, every format: the tiled product from the loaded codes
  and scales equals ``dequantize(A) @ dequantize(B)`` to 1e-12 (float64), and the real run's counts equal
  the count-only run's.

Points use the models' parameters ``M, N, K, B_M, B_N, B_K``.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from numeric.gemm_scaled import run_scaled
from symbolic.models.gemm_scaled import MODELS

from ..core import Check, Property

__all__ = ["checks", "real_check", "QUANTITIES", "STEPS"]

QUANTITIES = ("reads", "writes", "flops", "flops_padded", "bytes_payload", "bytes_scales", "bytes_padding",
              "bytes_C", "bytes", "scale_fraction")

#: K-steps each format's kernel may take (the group divides B_K for MX/NVFP4; B_K and the word nest)
STEPS = {"fp8_block": (32, 128, 256), "mxfp8": (32, 64, 128, 256), "mxfp4": (32, 128, 256),
         "nvfp4": (16, 32, 64, 128)}
WORD = {"fp8_block": 128, "mxfp8": 128, "mxfp4": 128, "nvfp4": 64}

_EDGE = [  # M, N, K, B_M, B_N: why
    (1, 1, 1, 1, 1),             # everything 1: one element, a word mostly padding
    (5, 7, 33, 4, 4),            # rows not a multiple of 4, K past a group
    (9, 11, 70, 1, 1),           # one-row, one-column tiles (drawn points keep at most 24 tiles an axis)
    (130, 300, 1000, 64, 112),   # B_N = 112: tiles straddle 128-column blocks
    (13, 17, 200, 8, 16),
    (9, 130, 260, 16, 144),      # B_N = 144: straddles too
    (200, 129, 129, 128, 128),   # one past a multiple of 128 everywhere
    (6, 6, 300, 512, 512),       # tiles larger than the matrix
    (128, 256, 512, 128, 128),   # everything divides
]


def _grid(fmt):
    def grid(full):
        steps = STEPS[fmt] if full else STEPS[fmt][:2] + STEPS[fmt][-1:]
        for (m, n, kk, bm, bn), bk in product(_EDGE, steps):
            yield dict(M=m, N=n, K=kk, B_M=bm, B_N=bn, B_K=bk)
        big = 10**30
        yield dict(M=big, N=big, K=big, B_M=10**29, B_N=10**29, B_K=WORD[fmt] * 10**27)   # beyond int64
    return grid


#: at most this many tiles along M and along N in a drawn point: a one-row tile over 300 rows walks 300 x 300 x
#: 44 steps and tells the formula nothing a 24-tile edge does not (the grid keeps B = 1 at small sizes)
_TILES = 24


def _points(fmt):
    def strategy():
        from hypothesis import strategies as st

        @st.composite
        def point(draw):
            M, N, K = draw(st.integers(1, 300)), draw(st.integers(1, 300)), draw(st.integers(1, 700))
            return {"M": M, "N": N, "K": K, "B_M": draw(st.integers(-(-M // _TILES), 160)),
                    "B_N": draw(st.integers(-(-N // _TILES), 200)), "B_K": draw(st.sampled_from(STEPS[fmt]))}
        return point()
    return strategy


def _execute(fmt):
    def run(p):
        return run_scaled(fmt, p["M"], p["N"], p["K"], p["B_M"], p["B_N"], p["B_K"]).counts
    return run


def _size(p):
    return max(p["M"], p["N"], p["K"])


def _check(ref) -> Check:
    fmt = ref.name.rsplit(".", 1)[1]
    return Check(model=ref, execute=_execute(fmt), grid=_grid(fmt), quantities=QUANTITIES, strategy=_points(fmt),
                 draws=40, draws_full=300, size=_size,
                 description=f"{fmt}: payload, scale, padding and output bytes vs the block-scaled executor")


checks = [_check(ref) for ref in MODELS]


# ------------------------------------------------------------------------------------- real mode
_REAL = [(5, 7, 33, 4, 4), (13, 17, 200, 8, 16), (9, 130, 260, 16, 144), (40, 24, 300, 32, 8)]


def _real_grid(full):
    for fmt in STEPS:
        for (m, n, kk, bm, bn), bk in product(_REAL, STEPS[fmt][:2]):
            yield dict(format=fmt, M=m, N=n, K=kk, B_M=bm, B_N=bn, B_K=bk)


def _real_holds(p):
    args = (p["format"], p["M"], p["N"], p["K"], p["B_M"], p["B_N"], p["B_K"])
    r = run_scaled(*args, real=True, seed=7)
    err = float(np.max(np.abs(r.C - r.reference)) / max(1.0, float(np.max(np.abs(r.reference)))))
    if err > 1e-12:
        return f"tiled block-scaled product differs from the dequantized reference by {err:.2e}"
    shape_only = run_scaled(*args).counts
    return None if shape_only == r.counts else f"real counts {r.counts} != count-only {shape_only}"


real_check = Property(
    name="gemm.scaled.real", model=MODELS[0], holds=_real_holds, grid=_real_grid, size=_size,
    description="every format: product from loaded codes and scales == dequantize(A) @ dequantize(B), 1e-12")
