r"""The tiled matrix-vector product's loop nest (``gemv.tiled``), annotated.

``y = A x`` with ``A`` ``M x K``: the BLAS level-2 ``gemv`` of NVIDIA's cuBLAS Library (``cublas<t>gemv()``,
``alpha = 1, beta = 0``), tiled as :mod:`symbolic.models.gemv` writes its loop nest and
:func:`numeric.gemv.run_gemv` runs it.  Program ``i`` owns the ``B_M`` rows of tile row ``i``; it steps
through ``K`` in chunks of ``B_K``, loading its block of ``A`` and the matching chunk of ``x`` each step,
and stores its rows of ``y`` once.  The loads are masked: a partial edge block moves its valid elements
only (``r_i`` rows, ``s_k`` columns).  The programs run in parallel; the listing writes them as the outer
loop, which is what the counts sum over - so ``x`` is read once per tile row, ``t_m K`` elements in all.
"""

from __future__ import annotations

import sympy as sp

from ..models.gemv import B_K, B_M, K, M
from ..models.gemv import gemv_tiled as GEMV_TILED
from . import Line, Listing, Loop, abbreviation, index

i, k = index("i"), index("k")
t_m, t_k = abbreviation("t_m"), abbreviation("t_k")
r_i, s_k = abbreviation("r_i"), abbreviation("s_k")

DEFS = (
    (t_m, sp.ceiling(M / B_M), "tile rows"),
    (t_k, sp.ceiling(K / B_K), "K-steps"),
    (r_i, sp.Min(B_M, M - (i - 1) * B_M), "valid rows of tile row $i$"),
    (s_k, sp.Min(B_K, K - (k - 1) * B_K), "valid columns of K-step $k$"),
)

TILED = Listing(
    model=GEMV_TILED, title="tiled matrix-vector product $y = A x$",
    source="the loop nest of symbolic/models/gemv.py, run by numeric/gemv.py; the operation: NVIDIA cuBLAS Library, "
    "cublas<t>gemv()",
    require=r"$A \in \mathbb{R}^{M \times K}$, $x \in \mathbb{R}^{K}$ in global memory; tiles of $B_M$ rows, "
    r"K-steps of $B_K$ columns",
    body=(
        Loop(i, 1, t_m, (
            Line(r"$\mathit{acc} \gets 0$, $B_M$ partial sums on chip."),
            Loop(k, 1, t_k, (
                Line(r"Load $A_{ik}$, $r_i \times s_k$ valid elements, from global memory.", reads=r_i * s_k),
                Line(r"Load $x_k$, $s_k$ valid elements, from global memory.", reads=s_k),
                Line(r"$\mathit{acc} \gets \mathit{acc} + A_{ik} x_k$ on chip ($2 r_i s_k$ FLOPs)."),
            ), text=r"each K-step $1 \le k \le t_k$"),
            Line(r"Store $y_i \gets \mathit{acc}$, $r_i$ valid elements, to global memory.", writes=r_i),
        ), text=r"each tile row $1 \le i \le t_m$ (one program each, in parallel)"),
        Line("$y$", command="Return"),
    ),
    defs=DEFS,
)
