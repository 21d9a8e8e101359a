"""HBM reads of a tiled GEMM under its launch order: the exact counts and the ``gemm.l2`` models.

Setting (the ``GROUP_M`` launch order of Triton's matmul tutorial, section "L2 Cache Optimizations";
``docs/conventions.md`` §4.4).  The output ``C`` (``M x N``) is cut into ``t_m x t_n`` tiles
(``t_m = ceil(M/B_M)``, ``t_n = ceil(N/B_N)``).  Program ``pid`` computes tile ``(pid_m, pid_n)``::

    width   = G_M * t_n                     # programs per group of G_M tile rows
    group   = pid // width
    first_m = group * G_M
    gs      = min(t_m - first_m, G_M)       # the last group may be short
    pid_m   = first_m + (pid % width) % gs  # column-major inside the group
    pid_n   = (pid % width) // gs

``G_M = 1`` is plain row-major order.  Tile ``(m, n)`` reads the *A row panel* ``m``
(``rows_m x K`` elements, ``rows_m = min(B_M, M - m B_M)``) and the *B column panel* ``n``
(``K x cols_n``), one ``B_K``-deep chunk per K-step.

Parameters of the models (typed as shown, ``--at G_M=8,P=132``): the GEMM's ``M, N, K, B_M, B_N, B_K``
(:mod:`symbolic.models.gemm`'s), ``G_M`` - Triton's ``GROUP_M``, the tile rows launched together -
``P`` - the programs of one wave, i.e. SMs x co-resident blocks per SM - and, for the LRU count,
``capacity`` - the L2 in elements.

The cache is the one :mod:`numeric.l2cache` simulates: programs run in **waves** of ``P`` consecutive
pids that advance through ``K`` in lockstep, each requesting its A chunk, then its B chunk, at every
step, through an LRU cache whose lines are those chunks.  Three exact counts (elements; multiply by
the element size; writes of ``C`` not included):

* :func:`wave_reads` (``hbm_reads_no_reuse``): every wave fetches each panel it uses, nothing survives
  from one wave to the next.  An **exact count** of that rule, in closed form (:func:`wave_reads`, by
  quadratic floor sums, :mod:`symbolic.floor_moments`), so it evaluates at any size up to ``10**30`` in
  well under a millisecond; the LRU's misses equal it when ``step_footprint <= capacity < reuse_floor``
  and never exceed it for ``capacity >= step_footprint`` (an **upper bound**).
* :func:`compulsory_reads` (``hbm_reads_fits``) ``= M K + K N``: a **lower bound** of any cache, equal
  to the LRU's misses once ``M K + K N <= capacity``.
* ``hbm_reads_lru`` (model ``gemm.l2.lru``): the LRU's misses **exactly**, at any capacity of at least
  one step's footprint, counted without simulating (:mod:`symbolic.gemm_lru`: stack distances in
  closed form, wave by wave for small launches and by classes of waves of equal neighbourhood beyond,
  :mod:`symbolic.wave_classes`, so at any size up to ``10**30`` in milliseconds; the work grows with
  ``G_M`` and ``P`` and is refused beyond its budget).

:mod:`verify.checks.gemm` checks all three against the simulator.  :func:`wave_values` is the one
derivation of a pid range's panels that every back end shares (integer arrays, SymPy); it, the launch
order and :func:`wave_reads` live in :mod:`symbolic.gemm_waves` (re-exported here), which both this file and
:mod:`symbolic.gemm_lru` import, so neither imports the other at load.  NumPy is imported only when an array
is computed, and :mod:`symbolic.gemm_lru` (which imports NumPy) only when a count is asked for, so
``tilebound list`` stays light.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from base import validate

from ..gemm_waves import (NumpyOps, SympyOps, ceil_div, check_sizes, launch_order, panel_sums, sum_over_waves,
                          tile_of, valid_elements, wave_panels, wave_reads, wave_reads_periodic, wave_values)
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..registry import defines
from ..shown_as import ShownAs
from .gemm import B_K, B_M, B_N, K, M, N

__all__ = ["G_M", "P", "capacity", "ceil_div", "tile_of", "launch_order", "wave_values", "sum_over_waves",
           "panel_sums", "wave_panels", "valid_elements", "wave_reads", "wave_reads_periodic", "compulsory_reads",
           "step_footprint", "reuse_floor", "wave_reads_formula", "WaveReads", "LRUReads", "NumpyOps", "SympyOps",
           "l2", "l2_lru"]

# ------------------------------------------------------------------------------------- parameters
G_M = param("G_M", note(code("GROUP_M"), ": tile rows launched together (Triton's matmul tutorial); 1 launches "
                                         "row-major"), latex="G_M")
P = param("P", "programs per wave: SMs times co-resident blocks per SM", latex="P")
capacity = param("capacity", "L2 capacity in elements (H100/H200: 50 MB, 25,000,000 FP16 elements)",
                 latex=r"C_{\mathrm{L2}}")

_pos = validate.positive_int


def compulsory_reads(M: int, N: int, K: int) -> int:
    """``M K + K N``: every element of A and B fetched once (the cache holds both)."""
    return _pos("M", M) * _pos("K", K) + K * _pos("N", N)


def step_footprint(M: int, N: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int) -> int:
    """The largest number of elements one ``B_K``-deep K-step of one wave touches: the valid rows of
    its distinct A panels plus the valid columns of its distinct B panels, times ``B_K``.  An LRU
    cache at least this large keeps every chunk a wave re-uses inside a step (assumption 2 of
    :mod:`symbolic.gemm_lru`); the exact count refuses smaller ones.  O(waves)."""
    M, N, B_M, B_N = _pos("M", M), _pos("N", N), _pos("B_M", B_M), _pos("B_N", B_N)
    B_K, G_M, P = _pos("B_K", B_K), _pos("G_M", G_M), _pos("P", P)
    from ..gemm_lru import max_wave_elements      # lazily: gemm_lru loads NumPy (tilebound list stays light)
    return max_wave_elements(M, N, B_M, B_N, G_M, P) * B_K


def reuse_floor(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int) -> int:
    """A floor on the LRU stack distance of any chunk reused across waves: a chunk of K-step ``k``
    used by a wave and again by a later one has, in between, the full K-steps ``k+1 ..`` of the first
    wave or ``.. k-1`` of the second - at least ``t_k - 2`` full steps of some wave, each touching that
    wave's valid panel rows and columns x ``B_K``.  A cache smaller than this keeps nothing across waves,
    so HBM reads equal :func:`wave_reads` exactly (given ``capacity >= step_footprint``)."""
    M, N, K, B_M, B_N, G_M, P = check_sizes(M, N, K, B_M, B_N, G_M, P)
    B_K = _pos("B_K", B_K)
    tk = ceil_div(K, B_K)
    if tk < 3:
        return 0
    from ..gemm_lru import min_wave_elements      # lazily, as in step_footprint
    return (tk - 2) * B_K * min_wave_elements(M, N, B_M, B_N, G_M, P)


# ------------------------------------------------------------------------------------- the models
@lru_cache(maxsize=1)
def wave_reads_formula() -> sp.Expr:
    """:func:`wave_reads` as it is defined: a SymPy sum over the ``ceil(t_m t_n / P)`` waves of the
    per-wave panel counts of :func:`wave_values` (SymPy back end), in the parameters ``M, N, K, B_M,
    B_N, G_M, P``.  Compiled as is it loops once per wave; the model's quantity is :class:`WaveReads`,
    which prints as this sum and evaluates by the closed form."""
    w = sp.Dummy("w", integer=True, nonnegative=True)      # the wave index
    tm, tn = sp.ceiling(M / B_M), sp.ceiling(N / B_N)
    T = tm * tn
    start = w * P
    end = sp.Min((w + 1) * P, T)
    rows, cols, lr, lc = wave_values(start, end, tm, tn, G_M, ops=SympyOps)
    term = K * valid_elements(rows, cols, lr, lc, M, N, B_M, B_N, tm, tn)
    return sp.Sum(term, (w, 0, sp.ceiling(T / P) - 1))


class _CountNode(ShownAs, sp.Function):
    """A count that evaluates itself (``exact_value``, Python ints in and out) and prints as what it stands
    for (``_display``)."""

    is_integer = True
    is_nonnegative = True


class WaveReads(_CountNode):
    """``WaveReads(M, N, K, B_M, B_N, G_M, P)``: :func:`wave_reads`.  Prints as the sum over waves it is
    (:meth:`as_sum`, :func:`wave_reads_formula` at these arguments) and evaluates by the closed form."""

    nargs = 7

    @staticmethod
    def exact_value(M, N, K, B_M, B_N, G_M, P):
        return wave_reads(M, N, K, B_M, B_N, G_M, P)

    def as_sum(self) -> sp.Sum:
        params = (M, N, K, B_M, B_N, G_M, P)
        if self.args == params:
            return wave_reads_formula()
        return wave_reads_formula().subs(dict(zip(params, self.args)), simultaneous=True)

    def _display(self):
        return self.as_sum()


class LRUReads(_CountNode):
    """``LRUReads(M, N, K, B_M, B_N, B_K, G_M, P, capacity)``: the misses (elements) of an LRU L2 of
    ``capacity`` elements under the launch order, exactly (:func:`symbolic.gemm_lru.lru_reads`).  No
    SymPy form: it prints as the function it is, ``lru_misses(...)``."""

    nargs = 9

    @staticmethod
    def exact_value(M, N, K, B_M, B_N, B_K, G_M, P, capacity):
        from ..gemm_lru import lru_reads          # lazily, as in step_footprint
        return lru_reads(M, N, K, B_M, B_N, B_K, G_M, P, capacity)

    def _display(self):
        return sp.Function("lru_misses")(*self.args)

    def _tilebound_latex(self, printer, exp=None):
        tex = r"\operatorname{misses}_{\mathrm{LRU}}\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"
        return rf"\left({tex}\right)^{{{exp}}}" if exp else tex

    _latex = _tilebound_latex


# the notes' names for step_footprint(...) and reuse_floor(...) of a plan, and for the L2 capacity where it is not
# a parameter (gemm.l2): math, not parameters
_FOOTPRINT = symbol("step_footprint", r"\text{step}\_\text{footprint}")
_REUSE_FLOOR = symbol("reuse_floor", r"\text{reuse}\_\text{floor}")


def _no_reuse_note(cap):
    return note(code("hbm_reads_no_reuse"), ": an exact count of the no-reuse rule (every wave fetches each panel it "
                "uses), evaluated in closed form at any size; it equals the LRU's misses for ",
                sp.Le(_FOOTPRINT, cap), " and ", sp.Lt(cap, _REUSE_FLOOR), " and bounds them from above for any ",
                sp.Ge(cap, _FOOTPRINT))


def _fits_note(cap):
    return note(code("hbm_reads_fits"), ": a lower bound of any cache; the LRU's misses exactly once ",
                sp.Le(M * K + K * N, cap))


_DEFAULTS = {"M": 4096, "N": 4096, "K": 4096, "B_M": 128, "B_N": 128, "G_M": 8, "P": 132}
_SOURCE = note("the ", code("GROUP_M"), " launch order of Triton's matmul tutorial, section “L2 Cache Optimizations” (",
               code("docs/conventions.md"), " §4.4)")


@defines("gemm.l2", "HBM reads of A and B under the GROUP_M launch order, waves of P programs: no reuse across "
                    "waves (exact rule, an upper bound of LRU), or all of A and B in L2 (a lower bound)")
def l2():
    cap = symbol("capacity", capacity.latex)           # gemm.l2 has no capacity parameter: its notes' name for it
    return Model("gemm.l2", note("HBM reads of the tiled GEMM through an L2, by launch order (", code("GROUP_M"), " is ",
                                 G_M, ", waves of ", P, ")"),
                 {"hbm_reads_no_reuse": WaveReads(M, N, K, B_M, B_N, G_M, P), "hbm_reads_fits": M * K + K * N},
                 params=(M, N, K, B_M, B_N, G_M, P),
                 units={"hbm_reads_no_reuse": "elements", "hbm_reads_fits": "elements"},
                 asymptotic_quantity="hbm_reads_fits", defaults=dict(_DEFAULTS), source=_SOURCE,
                 notes=(_no_reuse_note(cap), _fits_note(cap),
                        note("the LRU's misses at a given capacity, exactly: model ", code("gemm.l2.lru"), " (",
                             code("hbm_reads_lru"), ")")))


@defines("gemm.l2.lru", "HBM reads of A and B through an LRU L2 of `capacity` elements under the GROUP_M launch "
                        "order: the exact count, with its two bounds")
def l2_lru():
    return Model("gemm.l2.lru", note("Exact LRU misses of the tiled GEMM's lockstep waves (", code("GROUP_M"), " is ",
                                     G_M, ", waves of ", P, ", ", B_K, "-deep steps, an L2 of ", capacity, " elements)"),
                 {"hbm_reads_lru": LRUReads(M, N, K, B_M, B_N, B_K, G_M, P, capacity),
                  "hbm_reads_no_reuse": WaveReads(M, N, K, B_M, B_N, G_M, P), "hbm_reads_fits": M * K + K * N},
                 params=(M, N, K, B_M, B_N, B_K, G_M, P, capacity),
                 units={"hbm_reads_lru": "elements", "hbm_reads_no_reuse": "elements", "hbm_reads_fits": "elements"},
                 asymptotic_quantity="hbm_reads_fits",
                 defaults=dict(_DEFAULTS, B_K=64, capacity=25_000_000), source=_SOURCE,
                 notes=(note(code("hbm_reads_lru"), ": exact - the misses of ", code("numeric.l2cache"), "'s LRU "
                             "simulation, counted from reuse distances in closed form (", code("symbolic.gemm_lru"),
                             ": Mattson's stack property with chunk sizes); any size: beyond 16,384 waves it sums over "
                             "classes of waves of equal neighbourhood (", code("symbolic.wave_classes"), "), whose work "
                             "grows with ", G_M, " and ", P, " only; refused (one line) for ", capacity, " below one "
                             "K-step's footprint or a plan beyond ", code("symbolic.gemm_lru.EXACT_WAVES_BUDGET"),
                             " representative waves"),
                        note(code("hbm_reads_lru"), " lies between ", code("hbm_reads_fits"), " and ",
                             code("hbm_reads_no_reuse"), ": ") + _no_reuse_note(capacity) + "; " + _fits_note(capacity)))
