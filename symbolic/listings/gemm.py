r"""The tiled GEMM's loop nest (Triton's matmul tutorial; ``docs/conventions.md`` §4.1), annotated.

``C = A B`` with ``A`` ``M x K``, ``B`` ``K x N``: program ``(i, j)`` computes the ``B_M x B_N`` tile
``C_ij``, stepping through ``K`` in chunks of ``B_K``; the loads are masked, so a partial edge tile moves
its valid elements only (``r_i``, ``c_j``, ``s_k``).  The programs run in parallel; the listing writes them
as the two outer loops, which is what the counts sum over.
"""

from __future__ import annotations

import sympy as sp

from ..models.gemm import B_K, B_M, B_N, K, M, N
from ..models.gemm import tiled as GEMM_TILED
from . import Line, Listing, Loop, abbreviation, index

i, j, k = index("i"), index("j"), index("k")
t_m, t_n, t_k = abbreviation("t_m"), abbreviation("t_n"), abbreviation("t_k")
r_i, c_j, s_k = abbreviation("r_i"), abbreviation("c_j"), abbreviation("s_k")

DEFS = (
    (t_m, sp.ceiling(M / B_M), "tile rows"),
    (t_n, sp.ceiling(N / B_N), "tile columns"),
    (t_k, sp.ceiling(K / B_K), "K-steps"),
    (r_i, sp.Min(B_M, M - (i - 1) * B_M), "valid rows of tile row $i$"),
    (c_j, sp.Min(B_N, N - (j - 1) * B_N), "valid columns of tile column $j$"),
    (s_k, sp.Min(B_K, K - (k - 1) * B_K), "valid depth of K-step $k$"),
)

TILED = Listing(
    model=GEMM_TILED, title="tiled matrix multiply $C = A B$",
    source="the loop nest of Triton's matmul tutorial (docs/conventions.md §4.1)",
    require=r"$A \in \mathbb{R}^{M \times K}$, $B \in \mathbb{R}^{K \times N}$ in global memory; tiles of "
    r"$B_M \times B_N$, K-steps of $B_K$",
    body=(
        Loop(i, 1, t_m, (
            Loop(j, 1, t_n, (
                Line(r"$\mathit{acc} \gets 0$, a $B_M \times B_N$ accumulator on chip."),
                Loop(k, 1, t_k, (
                    Line(r"Load $A_{ik}$, $r_i \times s_k$ valid elements, from global memory.", reads=r_i * s_k),
                    Line(r"Load $B_{kj}$, $s_k \times c_j$ valid elements, from global memory.", reads=s_k * c_j),
                    Line(r"$\mathit{acc} \gets \mathit{acc} + A_{ik} B_{kj}$ on chip."),
                )),
                Line(r"Store $C_{ij} \gets \mathit{acc}$, $r_i \times c_j$ valid elements, to global memory.",
                     writes=r_i * c_j),
            ), text=r"each tile column $1 \le j \le t_n$ (in parallel)"),
        ), text=r"each tile row $1 \le i \le t_m$ (in parallel)"),
    ),
    defs=DEFS,
)
