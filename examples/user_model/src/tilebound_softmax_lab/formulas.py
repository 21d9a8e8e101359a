"""The model ``lab.softmax.rowwise``: softmax of every row of ``X`` (``R x C``), in column tiles of ``B_C``.

Variant: **two passes over X** with the online normalizer of Milakov and Gimelshein, "Online normalizer
calculation for softmax", arXiv:1805.02867, 2018, Algorithm 3, taken a tile at a time (as FlashAttention
does for its rows).  Pass 1 keeps a running maximum ``m`` and normalizer ``l`` per row; pass 2 re-reads
the row and writes the outputs.  (The "safe" softmax, their Algorithm 2, needs three passes; the one-pass
variant that keeps a whole row on chip needs ``B_C >= C``.)  One program per row::

    for r in range(R):
      for j in range(t):                          # t = ceil(C / B_C) column tiles; pass 1
        load X[r, j-tile]                         w_j elements
        m' = max(m, max(tile))                    (the first tile: m' = max(tile))
        l  = l exp(m - m') + sum(exp(tile - m'))  w_j exps, plus 1 rescale but on the first tile
        m  = m'
      for j in range(t):                          # pass 2
        load X[r, j-tile]                         w_j elements
        store Y[r, j-tile] = exp(tile - m) / l    w_j exps, w_j elements stored

with ``w_j = min(B_C, C - j B_C)`` (a masked load of the last, partial tile moves its valid elements).

Derivation by hand: the tiles partition a row, ``sum_j w_j = (t - 1) B_C + (C - (t - 1) B_C) = C``, so per
row pass 1 reads ``C`` and evaluates ``C + t - 1`` exps, pass 2 reads ``C``, writes ``C`` and evaluates
``C`` exps:

    reads = 2 R C,   writes = R C,   exps = R (2 C + ceil(C / B_C) - 1).

Any schedule reads ``X`` and writes ``Y`` once (``2 R C``) and evaluates one exp per output (``R C``).
"""

from __future__ import annotations

import sympy as sp

from symbolic.asymptotics import Regime
from symbolic.model import Model
from symbolic.notes import note, symbol
from symbolic.params import param
from symbolic.registry import defines

__all__ = ["R", "C", "B_C", "softmax_rowwise"]

# the input and output matrices: names in the notes, not parameters
X, Y = symbol("X"), symbol("Y")

R = param("R", note("rows of ", X, ": independent softmaxes"))
C = param("C", note("columns of ", X, ": the length of each softmax"))
B_C = param("B_C", "columns in one tile (one load of a row's chunk)")

SOURCE = "Milakov & Gimelshein 2018, Online normalizer calculation for softmax, arXiv:1805.02867, Algorithm 3"


def _row_sum(size, block):
    """``sum_{j < ceil(size/block)} min(block, size - j block)``: the full tiles and the last one."""
    full = sp.ceiling(size / block) - 1
    return full * block + (size - full * block)


@defines("lab.softmax.rowwise", "tiled row-wise softmax, online normalizer (two passes): reads, writes, exps")
def softmax_rowwise():
    w = _row_sum(C, B_C)                      # sum_j w_j over one row
    t = sp.ceiling(C / B_C)
    u = sp.Dummy("t", integer=True, positive=True)
    return Model(
        "lab.softmax.rowwise", note("row-wise softmax of an ", R, " × ", C, " matrix in column tiles of ", B_C,
                                    " (online normalizer)"),
        {"reads": R * (w + w), "writes": R * w, "exps": R * ((w + t - 1) + w)},
        params=(R, C, B_C),
        units={"exps": "exp evaluations"},
        divisible_subs={C: B_C * u},
        regime=Regime(note(sp.Le(B_C, C)), le=((B_C, C),)),
        asymptotic_quantity="total",
        lower_bounds={note("compulsory traffic: ", X, " read once, ", Y, " written once"): 2 * R * C,
                      "exps: one per output": R * C},
        defaults={"R": 4096, "C": 4096, "B_C": 1024},
        source=SOURCE,
        notes=(note("two passes over ", X, ": pass 1 the online normalizer, pass 2 the outputs"),
               note("the running maximum is rescaled once per tile after the first: ", sp.ceiling(C / B_C) - 1,
                    " exps a row")),
    )
