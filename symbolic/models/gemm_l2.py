"""HBM reads of a tiled GEMM under its launch order: the exact counts and the ``gemm.l2`` model.

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

Parameters of the model (typed as shown, ``--at G_M=8,P=132``): the GEMM's ``M, N, K, B_M, B_N``
(:mod:`symbolic.models.gemm`'s), ``G_M`` - Triton's ``GROUP_M``, the tile rows launched together -
and ``P`` - the programs of one wave, i.e. SMs x co-resident blocks per SM.

Assumptions of the formulas (``NOTE:`` the simulator :mod:`numeric.l2cache` checks them):

1. **Waves.**  Programs run in waves of ``P`` consecutive pids; the programs of a wave advance
   through ``K`` in lockstep, each requesting its A chunk then its B chunk at every step.
2. **Within a wave** a chunk requested by several programs is fetched from HBM once: true for an LRU
   cache that holds one K-step's chunks of a wave (:func:`step_footprint` elements).
3. **Across waves**, either nothing survives (:func:`wave_reads`: every wave fetches each panel it
   uses, exact when the cache is smaller than :func:`reuse_floor`), or everything does
   (:func:`compulsory_reads` ``= M K + K N``: exact when the whole of A and B fits).

Hence for an LRU cache of at least ``step_footprint`` elements::

    compulsory_reads  <=  HBM reads  <=  wave_reads

with equality on the right below ``reuse_floor`` and on the left once ``M K + K N`` fits.  Between
the two, the time model's float *estimate* lives in :mod:`tuning.l2_estimate` (not here: it is not a
count).  :mod:`verify.checks.gemm` checks both exact regimes and the bounds against the LRU simulator.
Counts are elements; multiply by the element size.  Writes of ``C`` (``M N`` elements) are not
included: each tile is stored once whatever the order.  :func:`wave_reads_formula` is ``wave_reads``
as a SymPy sum over waves (its summation index a ``sympy.Dummy``), and :func:`wave_values` is the one
derivation both back ends share.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from base import validate

from ..model import Model
from ..params import param
from ..registry import defines
from .gemm import B_M, B_N, K, M, N

__all__ = ["G_M", "P", "ceil_div", "tile_of", "launch_order", "wave_values", "sum_over_waves", "panel_sums",
           "wave_panels", "valid_elements", "wave_reads", "compulsory_reads", "step_footprint", "reuse_floor",
           "wave_reads_formula", "NumpyOps", "SympyOps", "l2"]

# ------------------------------------------------------------------------------------- parameters
G_M = param("G_M", "GROUP_M: tile rows launched together (Triton's matmul tutorial); 1 = row-major", latex="G_M")
P = param("P", "programs per wave: SMs x co-resident blocks per SM", latex="P")

_pos = validate.positive_int


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def tile_of(pid: int, t_m: int, t_n: int, G_M: int) -> tuple[int, int]:
    """The tile ``(pid_m, pid_n)`` program ``pid`` computes under the GROUP_M order (module docstring)."""
    width = G_M * t_n
    g, r = divmod(pid, width)
    first_m = g * G_M
    gs = min(t_m - first_m, G_M)
    return first_m + r % gs, r // gs


def launch_order(t_m: int, t_n: int, G_M: int) -> list[tuple[int, int]]:
    """All tiles in launch order."""
    t_m, t_n, G_M = _pos("t_m", t_m), _pos("t_n", t_n), _pos("G_M", G_M)
    return [tile_of(p, t_m, t_n, G_M) for p in range(t_m * t_n)]


class NumpyOps:
    """Integer arrays: exact (int64) and vectorised."""
    minimum = staticmethod(np.minimum)
    where = staticmethod(np.where)
    eq = staticmethod(lambda a, b: a == b)
    ge = staticmethod(lambda a, b: a >= b)
    lt = staticmethod(lambda a, b: a < b)
    and_ = staticmethod(np.logical_and)
    or_ = staticmethod(np.logical_or)
    not_ = staticmethod(np.logical_not)
    mod = staticmethod(lambda a, b: a % b)


def _ge01(a, b):
    return sp.Min(1, sp.Max(0, a - b + 1))          # [a >= b] for integers, as 0/1


class SympyOps:
    """SymPy expressions: the same derivation as a formula.  Conditions are 0/1 integer expressions
    (``[a >= b] = min(1, max(0, a - b + 1))``, and = product, or = ``min(1, x + y)``), so the sum over
    waves stays a plain arithmetic expression of ``floor``, ``Min`` and ``Max``."""
    minimum = staticmethod(sp.Min)
    where = staticmethod(lambda c, a, b: c * a + (1 - c) * b)
    eq = staticmethod(lambda a, b: _ge01(a, b) * _ge01(b, a))
    ge = staticmethod(_ge01)
    lt = staticmethod(lambda a, b: 1 - _ge01(a, b))
    and_ = staticmethod(lambda a, b: a * b)
    or_ = staticmethod(lambda a, b: sp.Min(1, a + b))
    not_ = staticmethod(lambda a: 1 - a)
    mod = staticmethod(lambda a, b: a - b * sp.floor(a / b))


def wave_values(s, e, tm, tn, group, ops=NumpyOps):
    """Per run of pids ``[s, e)`` (a wave, or several): distinct A panels, distinct B panels, whether
    the last row panel / the last column panel is among them.  One definition, two back ends: integer
    arrays (``ops=NumpyOps``, what the counts use) and SymPy (``SympyOps``, :func:`wave_reads_formula`).

    Derivation (from :func:`tile_of`, ``group`` = ``G_M``): groups are runs of ``width = G_M tn`` pids
    owning the rows ``g G_M ..`` (``gs`` of them); inside a group the pids run down the ``gs`` rows,
    then across.  A run of ``n`` pids inside one group touches ``min(n, gs)`` rows (``(oa + i) mod gs``)
    and the columns ``oa // gs .. (ob - 1) // gs``.  A run over groups ``g0 < g1`` touches the first
    group's tail (``min(width - oa, G_M)`` rows, columns ``oa // G_M .. tn - 1``), every row of the
    groups between (and with them all ``tn`` columns), and the head of ``g1`` (``min(ob, gs1)`` rows,
    columns ``0 .. (ob - 1) // gs1``); two column intervals ``[lo, tn-1]`` and ``[0, hi]`` cover
    ``min(tn, tn - lo + hi + 1)`` columns.
    """
    width = group * tn
    ng = -(-tm // group)
    gs_last = tm - (ng - 1) * group
    g0, g1 = s // width, (e - 1) // width
    gs0 = ops.minimum(tm - g0 * group, group)
    gs1 = ops.minimum(tm - g1 * group, group)
    oa, ob = s - g0 * width, e - g1 * width
    same = ops.eq(g0, g1)
    rows = ops.where(same, ops.minimum(e - s, gs0),
                     ops.minimum(width - oa, group) + (g1 - g0 - 1) * group + ops.minimum(ob, gs1))
    hi = (ob - 1) // gs1
    cols = ops.where(same, hi - oa // gs0 + 1,
                     ops.where(ops.ge(g1 - g0, 2), tn, ops.minimum(tn, tn - oa // group + hi + 1)))
    a_last = ops.where(same, oa, 0)                  # run inside the last group: [a_last, ob)
    n_last = ob - a_last
    last_row = ops.and_(ops.eq(g1, ng - 1),
                        ops.or_(ops.ge(n_last, gs_last), ops.lt(ops.mod(gs_last - 1 - a_last, gs_last), n_last)))
    last_col = ops.or_(ops.not_(same), ops.eq(hi, tn - 1))
    return rows, cols, last_row, last_col


def valid_elements(rows, cols, last_row, last_col, M, N, B_M, B_N, tm, tn):
    """Valid panel elements per unit of K of a run of pids (from :func:`wave_values`): the valid rows of
    its A panels plus the valid columns of its B panels (a partial last panel counts its valid part)."""
    return rows * B_M - last_row * (tm * B_M - M) + cols * B_N - last_col * (tn * B_N - N)


_CHUNK = 1 << 18


def sum_over_waves(tm: int, tn: int, group: int, wave: int, fn, width_out: int, w_start: int = 0) -> list[int]:
    """``sum(fn(w))`` over waves ``w_start <= w < W`` (``fn`` maps an int64 array of wave indices to a
    list of ``width_out`` int arrays), in O(period) time: a wave's values depend only on its start
    modulo ``width = G_M tn`` while it (and the wave before it) lie inside full groups, so those
    waves repeat with period ``width / gcd(wave, width)``; one period is summed and multiplied, and the
    waves reaching the last group are summed one by one."""
    T = tm * tn
    W = -(-T // wave)
    width = group * tn
    ng = -(-tm // group)
    w_reg = min(W, ((ng - 1) * width) // wave)       # waves ending before the last group starts

    def direct(a, b):
        tot = [0] * width_out
        for c in range(a, b, _CHUNK):
            for i, v in enumerate(fn(np.arange(c, min(b, c + _CHUNK), dtype=np.int64))):
                tot[i] += int(v.sum())
        return tot

    tot = [0] * width_out
    if w_reg > w_start:
        p = width // math.gcd(wave, width)
        q, r = divmod(w_reg - w_start, p)
        if q >= 2:
            per, rest = direct(w_start, w_start + p), direct(w_start, w_start + r)
            tot = [q * x + y for x, y in zip(per, rest)]
        else:
            tot = direct(w_start, w_reg)
    tail = direct(max(w_reg, w_start), W)
    return [x + y for x, y in zip(tot, tail)]


def _values_of_waves(tm, tn, group, wave):
    T = tm * tn

    def fn(w):
        s = w * wave
        return wave_values(s, np.minimum(s + wave, T), tm, tn, group)
    return fn


@lru_cache(maxsize=65536)
def panel_sums(t_m: int, t_n: int, G_M: int, P: int) -> tuple[int, int, int, int]:
    """Sums over all waves of :func:`wave_panels`' four columns (see :func:`sum_over_waves`)."""
    t_m, t_n, G_M, P = _pos("t_m", t_m), _pos("t_n", t_n), _pos("G_M", G_M), _pos("P", P)
    return tuple(sum_over_waves(t_m, t_n, G_M, P, _values_of_waves(t_m, t_n, G_M, P), 4))


def wave_panels(t_m: int, t_n: int, G_M: int, P: int) -> list[tuple[int, int, bool, bool]]:
    """For each wave: ``(distinct A panels, distinct B panels, uses the last row panel, uses the last
    column panel)`` (see :func:`wave_values` for the derivation)."""
    t_m, t_n, G_M, P = _pos("t_m", t_m), _pos("t_n", t_n), _pos("G_M", G_M), _pos("P", P)
    T = t_m * t_n
    s = np.arange(0, T, P, dtype=np.int64)
    e = np.minimum(s + P, T)
    r, c, lr, lc = wave_values(s, e, t_m, t_n, G_M)
    return [(int(a), int(b), bool(x), bool(y)) for a, b, x, y in zip(r, c, lr, lc)]


def _check(M, N, K, B_M, B_N, G_M, P):
    return (_pos("M", M), _pos("N", N), _pos("K", K), _pos("B_M", B_M), _pos("B_N", B_N),
            _pos("G_M", G_M), _pos("P", P))


def wave_reads(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int) -> int:
    """Elements read from HBM when no panel survives in L2 from one wave to the next (assumption 3, first
    case): ``sum over waves of (valid rows of its distinct A panels + valid columns of its distinct B
    panels) x K``.  A partial last panel counts its valid rows (``M - (t_m - 1) B_M``) / columns.
    The vectorised back end of :func:`wave_reads_formula` (model ``gemm.l2``, ``hbm_reads_no_reuse``)."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
    tm, tn = ceil_div(M, B_M), ceil_div(N, B_N)
    nr, nc, lr, lc = panel_sums(tm, tn, G_M, P)
    return K * valid_elements(nr, nc, lr, lc, M, N, B_M, B_N, tm, tn)


def compulsory_reads(M: int, N: int, K: int) -> int:
    """``M K + K N``: every element of A and B fetched once (the cache holds both)."""
    return _pos("M", M) * _pos("K", K) + K * _pos("N", N)


def step_footprint(M: int, N: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int) -> int:
    """Largest number of elements one K-step of one wave touches (distinct A and B chunks, full
    chunks): the least cache for which assumption 2 holds."""
    tm, tn = ceil_div(_pos("M", M), _pos("B_M", B_M)), ceil_div(_pos("N", N), _pos("B_N", B_N))
    B_K = _pos("B_K", B_K)
    return max(nr * B_M * B_K + nc * B_N * B_K for nr, nc, _, _ in wave_panels(tm, tn, _pos("G_M", G_M), _pos("P", P)))


def reuse_floor(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int) -> int:
    """A floor on the LRU stack distance of any chunk reused across waves: a chunk of K-step ``k``
    used by a wave and again by a later one has, in between, the full K-steps ``k+1 ..`` of the first
    wave or ``.. k-1`` of the second - at least ``t_k - 2`` full steps of some wave, each touching that
    wave's valid panel rows and columns x ``B_K``.  A cache smaller than this keeps nothing across waves,
    so HBM reads equal :func:`wave_reads` exactly (given ``capacity >= step_footprint``)."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
    B_K = _pos("B_K", B_K)
    tm, tn, tk = ceil_div(M, B_M), ceil_div(N, B_N), ceil_div(K, B_K)
    if tk < 3:
        return 0
    least = min(valid_elements(nr, nc, lr, lc, M, N, B_M, B_N, tm, tn) for nr, nc, lr, lc in wave_panels(tm, tn, G_M, P))
    return (tk - 2) * B_K * least


# ------------------------------------------------------------------------------------- the formula
def wave_reads_formula() -> sp.Expr:
    """:func:`wave_reads` as a SymPy expression: a finite sum over the ``ceil(t_m t_n / P)`` waves of the
    per-wave panel counts of :func:`wave_values` (SymPy back end), in the parameters ``M, N, K, B_M,
    B_N, G_M, P``.  Evaluates exactly with :func:`symbolic.evaluate.compile_exact` (one loop step per
    wave)."""
    w = sp.Dummy("w", integer=True, nonnegative=True)      # the wave index
    tm, tn = sp.ceiling(M / B_M), sp.ceiling(N / B_N)
    T = tm * tn
    start = w * P
    end = sp.Min((w + 1) * P, T)
    rows, cols, lr, lc = wave_values(start, end, tm, tn, G_M, ops=SympyOps)
    term = K * valid_elements(rows, cols, lr, lc, M, N, B_M, B_N, tm, tn)
    return sp.Sum(term, (w, 0, sp.ceiling(T / P) - 1))


@defines("gemm.l2", "HBM reads of A and B under the GROUP_M launch order, waves of P programs: no reuse across "
                    "waves, or all of A and B in L2")
def l2():
    return Model("gemm.l2", "HBM reads of the tiled GEMM through an L2, by launch order (GROUP_M = G_M, waves of P)",
                 {"hbm_reads_no_reuse": wave_reads_formula(), "hbm_reads_fits": M * K + K * N},
                 params=(M, N, K, B_M, B_N, G_M, P),
                 units={"hbm_reads_no_reuse": "elements", "hbm_reads_fits": "elements"},
                 asymptotic_quantity="hbm_reads_fits",
                 defaults={"M": 4096, "N": 4096, "K": 4096, "B_M": 128, "B_N": 128, "G_M": 8, "P": 132},
                 source="the GROUP_M launch order of Triton's matmul tutorial, section \"L2 Cache Optimizations\" "
                        "(docs/conventions.md §4.4)",
                 notes=("hbm_reads_no_reuse: exact for an LRU L2 with step_footprint <= capacity < reuse_floor "
                        "(nothing survives from one wave to the next); an upper bound for any larger L2",
                        "hbm_reads_fits: exact (and a lower bound) once M K + K N elements fit in the L2",
                        "between the two, the time model uses an estimate (tuning.l2_estimate.hbm_reads), "
                        "not a count"))
