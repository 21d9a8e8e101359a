r"""The lab's annotated listing of ``lab.softmax.rowwise``: the two passes of the tiled row-wise softmax, each
load and store with the elements one run of it moves.

Found by tilebound through the ``tilebound.listings`` entry point (``pyproject.toml``): ``tilebound latex
--standalone`` prints it as an algorithm with its per-line totals, and ``python -m verify --model
lab.softmax.rowwise.listing`` checks that its lines add up to the model's reads and writes and to the
executor's counts.  The algorithm is Milakov and Gimelshein, "Online normalizer calculation for softmax",
arXiv:1805.02867, 2018, Algorithm 3, taken a tile of ``B_C`` columns at a time as
:mod:`tilebound_softmax_lab.formulas` describes it; tile ``j`` of a row holds ``w_j = min(B_C, C - (j - 1)
B_C)`` valid columns (a masked load of the last, partial tile moves its valid elements only).
"""

from __future__ import annotations

import sympy as sp

from symbolic.listings import Line, Listing, Loop, abbreviation, index

from .formulas import B_C, C, R, softmax_rowwise

r, j = index("r"), index("j")
t, w_j = abbreviation("t"), abbreviation("w_j")

ROWWISE = Listing(
    model=softmax_rowwise,
    title=r"tiled row-wise softmax $Y = \operatorname{softmax}(X)$, online normalizer (two passes)",
    source="Milakov and Gimelshein 2018, arXiv:1805.02867, Algorithm 3, a tile at a time",
    require=r"$X \in \mathbb{R}^{R \times C}$ in global memory; tiles of $B_C$ columns",
    body=(
        Loop(r, 1, R, (
            Line(r"$m \gets -\infty$, $\ell \gets 0$ on chip."),
            Loop(j, 1, t, (
                Line(r"Load $X_{rj}$, $w_j$ valid elements, from global memory.", reads=w_j),
                Line(r"On chip, $m' \gets \max(m, \max X_{rj})$, "
                     r"$\ell \gets \ell e^{m - m'} + \sum e^{X_{rj} - m'}$, $m \gets m'$."),
            ), text=r"pass 1: each tile $1 \le j \le t$"),
            Loop(j, 1, t, (
                Line(r"Load $X_{rj}$, $w_j$ valid elements, from global memory.", reads=w_j),
                Line(r"Store $Y_{rj} \gets e^{X_{rj} - m} / \ell$, $w_j$ valid elements, to global memory.",
                     writes=w_j),
            ), text=r"pass 2: each tile $1 \le j \le t$"),
        ), text=r"each row $1 \le r \le R$ (one program each, in parallel)"),
        Line("$Y$", command="Return"),
    ),
    defs=(
        (t, sp.ceiling(C / B_C), "column tiles of a row"),
        (w_j, sp.Min(B_C, C - (j - 1) * B_C), "valid columns of tile $j$"),
    ),
)
