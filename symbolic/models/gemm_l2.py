"""HBM traffic of a tiled GEMM under its launch order, for an L2 of a given size.

Setting (the lecture-10 §10.2 "GROUP_M" swizzle, as Triton's matmul tutorial writes it).  The
output ``C`` (``M x N``) is cut into ``tm x tn`` tiles (``tm = ceil(M/BM)``, ``tn = ceil(N/BN)``).
Program ``pid`` computes tile ``(pid_m, pid_n)``::

    width   = GROUP_M * tn                  # programs per group of GROUP_M tile rows
    group   = pid // width
    first_m = group * GROUP_M
    gs      = min(tm - first_m, GROUP_M)    # the last group may be short
    pid_m   = first_m + (pid % width) % gs  # column-major inside the group
    pid_n   = (pid % width) // gs

``GROUP_M = 1`` is plain row-major order.  Tile ``(m, n)`` reads the *A row panel* ``m``
(``rows_m x K`` elements, ``rows_m = min(BM, M - m BM)``) and the *B column panel* ``n``
(``K x cols_n``), one ``BK``-deep chunk per K-step.

Assumptions of the formulas (``NOTE:`` the simulator :mod:`numeric.l2cache` checks them):

1. **Waves.**  Programs run in waves of ``P`` consecutive pids (``P`` = SMs x blocks per SM); the
   programs of a wave advance through ``K`` in lockstep, each requesting its A chunk then its B chunk
   at every step.
2. **Within a wave** a chunk requested by several programs is fetched from HBM once: true for an LRU
   cache that holds one K-step's chunks of a wave (``step_footprint`` elements).
3. **Across waves**, either nothing survives (``wave_reads``: every wave fetches each panel it uses,
   exact when the cache is smaller than the bytes a wave streams between two uses of a chunk), or
   everything does (``compulsory_reads = M K + K N``: exact when the whole of A and B fits).

Hence for an LRU cache of at least ``step_footprint`` elements::

    compulsory_reads  <=  HBM reads  <=  wave_reads

with equality on the right when the cache is smaller than :func:`reuse_floor` (nothing survives from
one wave to the next) and on the left when ``M K + K N`` fits.  In between, :func:`hbm_reads` (the
time model's estimate) uses :func:`lookback_reads`: each wave re-uses the panels of as many previous
waves as fit in the cache.  ``verify.gemm`` checks the two exact regimes and the bounds against the
LRU simulator of :mod:`numeric.l2cache` and reports the estimate's worst ratio.  Counts are elements;
multiply by the dtype size.  Writes of ``C`` (``M N`` elements) are not included: each tile is stored
once whatever the order.  :func:`wave_reads_formula` is ``wave_reads`` as a SymPy sum over waves.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from .gemm_args import positive_int as _pos
from .symbols import sym

__all__ = ["tile_of", "launch_order", "wave_panels", "wave_reads", "compulsory_reads",
           "step_footprint", "hbm_reads", "ceil_div", "panel_sums", "reuse_floor", "adjacent_reuse", "lookback_reads", "lookback_reads_many", "hbm_reads_many", "LOOKBACK_MAX_WAVES", "wave_reads_formula", "G_M", "P_w"]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def tile_of(pid: int, tm: int, tn: int, group: int) -> tuple[int, int]:
    """The tile ``(pid_m, pid_n)`` program ``pid`` computes under GROUP_M order (module docstring)."""
    width = group * tn
    g, r = divmod(pid, width)
    first_m = g * group
    gs = min(tm - first_m, group)
    return first_m + r % gs, r // gs


def launch_order(tm: int, tn: int, group: int) -> list[tuple[int, int]]:
    """All tiles in launch order."""
    tm, tn, group = _pos("tm", tm), _pos("tn", tn), _pos("group", group)
    return [tile_of(p, tm, tn, group) for p in range(tm * tn)]


class _NumpyOps:
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


class _SympyOps:
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


def _wave_values(s, e, tm, tn, group, ops=_NumpyOps):
    """Per wave ``[s, e)`` (pid bounds): distinct A panels, distinct B panels, whether the
    last row panel / the last column panel is among them.  One definition, two back ends: integer
    arrays (``ops=_NumpyOps``, what the counts use) and SymPy (``_SympyOps``, :func:`wave_reads_formula`).

    Derivation (from :func:`tile_of`): groups are runs of ``width = GROUP_M tn`` pids owning the rows
    ``g GROUP_M ..`` (``gs`` of them); inside a group the pids run down the ``gs`` rows, then across.  A
    run of ``n`` pids inside one group touches ``min(n, gs)`` rows (``(oa + i) mod gs``) and the columns
    ``oa // gs .. (ob - 1) // gs``.  A run over groups ``g0 < g1`` touches the first group's tail
    (``min(width - oa, GROUP_M)`` rows, columns ``oa // GROUP_M .. tn - 1``), every row of the groups
    between (and with them all ``tn`` columns), and the head of ``g1`` (``min(ob, gs1)`` rows, columns
    ``0 .. (ob - 1) // gs1``); two column intervals ``[lo, tn-1]`` and ``[0, hi]`` cover
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


_CHUNK = 1 << 18


def _sum_over_waves(tm: int, tn: int, group: int, wave: int, fn, width_out: int, w_start: int = 0) -> list[int]:
    """``sum(fn(w))`` over waves ``w_start <= w < W`` (``fn`` maps an int64 array of wave indices to a
    list of ``width_out`` int arrays), in O(period) time: a wave's values depend only on its start
    modulo ``width = GROUP_M tn`` while it (and the wave before it) lie inside full groups, so those
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
        return _wave_values(s, np.minimum(s + wave, T), tm, tn, group)
    return fn


@lru_cache(maxsize=65536)
def panel_sums(tm: int, tn: int, group: int, wave: int) -> tuple[int, int, int, int]:
    """Sums over all waves of :func:`wave_panels`' four columns (see :func:`_sum_over_waves`)."""
    tm, tn, group, wave = (_pos("tm", tm), _pos("tn", tn), _pos("group", group), _pos("wave", wave))
    return tuple(_sum_over_waves(tm, tn, group, wave, _values_of_waves(tm, tn, group, wave), 4))


def wave_panels(tm: int, tn: int, group: int, wave: int) -> list[tuple[int, int, bool, bool]]:
    """For each wave: ``(distinct A panels, distinct B panels, uses the last row panel, uses the last
    column panel)`` (see :func:`_wave_values` for the derivation)."""
    tm, tn, group, wave = (_pos("tm", tm), _pos("tn", tn), _pos("group", group), _pos("wave", wave))
    T = tm * tn
    s = np.arange(0, T, wave, dtype=np.int64)
    e = np.minimum(s + wave, T)
    r, c, lr, lc = _wave_values(s, e, tm, tn, group)
    return [(int(a), int(b), bool(x), bool(y)) for a, b, x, y in zip(r, c, lr, lc)]


def _check(M, N, K, BM, BN, group, wave):
    return (_pos("M", M), _pos("N", N), _pos("K", K), _pos("BM", BM), _pos("BN", BN),
            _pos("group", group), _pos("wave", wave))


def wave_reads(M: int, N: int, K: int, BM: int, BN: int, group: int, wave: int) -> int:
    """Elements read from HBM when no panel survives in L2 from one wave to the next (assumption 3, first
    case): ``sum over waves of (valid rows of its distinct A panels + valid columns of its distinct B
    panels) x K``.  A partial last panel counts its valid rows (``M - (tm - 1) BM``) / columns."""
    M, N, K, BM, BN, group, wave = _check(M, N, K, BM, BN, group, wave)
    tm, tn = ceil_div(M, BM), ceil_div(N, BN)
    nr, nc, lr, lc = panel_sums(tm, tn, group, wave)
    return K * (nr * BM - lr * (tm * BM - M) + nc * BN - lc * (tn * BN - N))


def compulsory_reads(M: int, N: int, K: int) -> int:
    """``M K + K N``: every element of A and B fetched once (the cache holds both)."""
    return _pos("M", M) * _pos("K", K) + K * _pos("N", N)


def step_footprint(M: int, N: int, BM: int, BN: int, BK: int, group: int, wave: int) -> int:
    """Largest number of elements one K-step of one wave touches (distinct A and B chunks, full
    chunks): the least cache for which assumption 2 holds."""
    tm, tn = ceil_div(_pos("M", M), _pos("BM", BM)), ceil_div(_pos("N", N), _pos("BN", BN))
    return max(nr * BM * BK + nc * BN * BK for nr, nc, _, _ in wave_panels(tm, tn, _pos("group", group), _pos("wave", wave)))


def _valid(r, c, lr, lc, M, N, BM, BN, tm, tn):
    """Valid panel elements per unit of K: rows of the A panels plus columns of the B panels."""
    return r * BM - lr * (tm * BM - M) + c * BN - lc * (tn * BN - N)


@lru_cache(maxsize=65536)
def adjacent_reuse(M: int, N: int, K: int, BM: int, BN: int, group: int, wave: int, capacity: int) -> int:
    """Elements a wave finds in L2 because the wave before it used them, when both waves' panels fit:
    ``sum over w >= 1 of [K max(f_{w-1}, f_w) <= capacity] K (f_{w-1} + f_w - f_{w-1 u w})`` with ``f``
    a wave's valid panel elements per unit of K and ``f_{w-1 u w}`` that of the two waves' pid range
    together (the panels both use are counted once there)."""
    M, N, K, BM, BN, group, wave = _check(M, N, K, BM, BN, group, wave)
    capacity = _pos("capacity", capacity)
    tm, tn = ceil_div(M, BM), ceil_div(N, BN)
    T = tm * tn

    def fn(w):
        s0, s1 = (w - 1) * wave, w * wave
        e0, e1 = s1, np.minimum(s1 + wave, T)
        f0 = _valid(*_wave_values(s0, e0, tm, tn, group), M, N, BM, BN, tm, tn)
        f1 = _valid(*_wave_values(s1, e1, tm, tn, group), M, N, BM, BN, tm, tn)
        fu = _valid(*_wave_values(s0, e1, tm, tn, group), M, N, BM, BN, tm, tn)
        fits = np.maximum(f0, f1) * K <= capacity
        return [np.where(fits, f0 + f1 - fu, 0)]
    return K * _sum_over_waves(tm, tn, group, wave, fn, 1, w_start=1)[0]


#: waves beyond which :func:`hbm_reads` uses the O(period) adjacent-wave rule instead of the lookback
LOOKBACK_MAX_WAVES = 1 << 14


def lookback_reads(M: int, N: int, K: int, BM: int, BN: int, group: int, wave: int, capacity: int) -> int:
    """Estimated HBM reads (elements) of an LRU L2 of ``capacity`` elements, panel by panel.

    With ``f[a, b)`` the valid panel elements per unit of K that the pids ``a .. b-1`` touch (a run of
    consecutive pids, :func:`_wave_values`): wave ``w`` looks back ``J_w`` waves, the most whose panels
    fit, ``K f[s_{w-J}, s_w) <= capacity`` (and ``K f_w <= capacity``, else ``J_w = 0``), and fetches
    only what those waves did not touch, ``f[s_{w-J}, e_w) - f[s_{w-J}, s_w)``.  ``J_w = 0`` gives
    :func:`wave_reads`; ``J_w = w`` for every wave telescopes to :func:`compulsory_reads`.  ``J_w`` is
    found by bisection (``f`` grows with the range).  O(W log W) for W waves."""
    M, N, K, BM, BN, group, wave = _check(M, N, K, BM, BN, group, wave)
    return lookback_reads_many(M, N, K, [BM], [BN], [group], [wave], capacity)[0]


def _int_column(name, values) -> np.ndarray:
    a = np.asarray(values)
    if a.size == 0:
        return a.astype(np.int64).reshape(0)
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name}: must be a sequence of positive integers, got {values!r}")
    if (a < 1).any():
        raise ValueError(f"{name}: must be >= 1, got {int(a.min())}")
    return a.astype(np.int64)


#: tilings of at most this many waves are bisected together (one pass per ``_FLAT_WAVES`` waves); longer
#: ones one at a time, where NumPy divides by scalars (about 3x faster per wave than by arrays)
_BATCH_MAX_WAVES = 256
_FLAT_WAVES = 1 << 16


def lookback_reads_many(M: int, N: int, K: int, BM, BN, group, wave, capacity: int) -> list[int]:
    """:func:`lookback_reads` for many tilings of one problem at once (``BM``, ``BN``, ``group``, ``wave``
    equal-length integer sequences): the waves of all of them are laid end to end and bisected
    together, so the time model pays one NumPy pass per ``_FLAT_WAVES`` waves, not one per config."""
    M, N, K, capacity = _pos("M", M), _pos("N", N), _pos("K", K), _pos("capacity", capacity)
    BM, BN, group, wave = (_int_column("BM", BM), _int_column("BN", BN), _int_column("group", group),
                           _int_column("wave", wave))
    if not len(BM) == len(BN) == len(group) == len(wave):
        raise ValueError("BM: BM, BN, group and wave must have one value per tiling")
    tm, tn = -(-M // BM), -(-N // BN)
    W = -(-(tm * tn) // wave)
    out = [0] * len(BM)
    for i in np.flatnonzero(W > _BATCH_MAX_WAVES):
        out[i] = _lookback_chunk(M, N, K, int(BM[i]), int(BN[i]), int(group[i]), int(wave[i]), W[i:i + 1],
                                 capacity)[0]
    short = np.flatnonzero(W <= _BATCH_MAX_WAVES)
    first = 0
    while first < len(short):                       # chunks of short tilings, about _FLAT_WAVES waves each
        last = first + max(1, int(np.searchsorted(np.cumsum(W[short[first:]]), _FLAT_WAVES, side="right")))
        idx = short[first:last]
        for i, v in zip(idx, _lookback_chunk(M, N, K, BM[idx], BN[idx], group[idx], wave[idx], W[idx], capacity)):
            out[i] = v
        first = last
    return out


def _lookback_chunk(M, N, K, BM, BN, group, wave, W, capacity) -> list[int]:
    """The lookback of the tilings ``BM, BN, group, wave`` (arrays, or ints for a single tiling) with
    ``W`` waves each, their waves laid end to end."""
    starts = np.concatenate(([0], np.cumsum(W)[:-1]))
    which = np.repeat(np.arange(len(W)), W)         # the tiling of each flat wave
    w = np.arange(int(W.sum()), dtype=np.int64) - starts[which]
    if isinstance(BM, np.ndarray):
        bm, bn, g, p = BM[which], BN[which], group[which], wave[which]
    else:
        bm, bn, g, p = BM, BN, group, wave
    tm, tn = -(-M // bm), -(-N // bn)

    def f(a, b):
        v = _valid(*_wave_values(a, np.maximum(b, a + 1), tm, tn, g), M, N, bm, bn, tm, tn)
        return np.where(b > a, v, 0)

    s = w * p
    e = np.minimum(s + p, tm * tn)
    lo, hi = np.zeros_like(w), w.copy()
    while (lo < hi).any():
        mid = (lo + hi + 1) // 2
        good = f(s - mid * p, s) * K <= capacity
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid - 1)
    J = np.where(f(s, e) * K <= capacity, lo, 0)
    a = s - J * p
    fetched = np.add.reduceat(f(a, e) - f(a, s), starts)
    return [K * int(x) for x in fetched]


def hbm_reads(M: int, N: int, K: int, BM: int, BN: int, group: int, wave: int, capacity: int) -> int:
    """The time model's estimate of HBM reads (elements) for an L2 of ``capacity`` elements:
    ``compulsory_reads`` when ``M K + K N <= capacity``; otherwise :func:`lookback_reads` (or, beyond
    ``LOOKBACK_MAX_WAVES`` waves, :func:`wave_reads` less :func:`adjacent_reuse`, computable in O(period)).
    Exact in the two regimes ``verify.gemm`` checks; between them an estimate whose worst ratio to the
    LRU simulation ``verify.gemm.l2_worst_ratio`` reports."""
    M, N, K, BM, BN, group, wave = _check(M, N, K, BM, BN, group, wave)
    return hbm_reads_many(M, N, K, [BM], [BN], [group], [wave], capacity)[0]


def hbm_reads_many(M: int, N: int, K: int, BM, BN, group, wave, capacity: int) -> list[int]:
    """:func:`hbm_reads` for many tilings of one problem (equal-length integer sequences ``BM``, ``BN``,
    ``group``, ``wave``), the lookbacks computed together by :func:`lookback_reads_many`."""
    comp = compulsory_reads(M, N, K)
    capacity = _pos("capacity", capacity)
    BM, BN, group, wave = (_int_column("BM", BM), _int_column("BN", BN), _int_column("group", group),
                           _int_column("wave", wave))
    if comp <= capacity:
        return [comp] * len(BM)
    W = -(-(-(-M // BM) * -(-N // BN)) // wave)
    few = W <= LOOKBACK_MAX_WAVES
    est = np.zeros(len(BM), dtype=object)
    est[few] = lookback_reads_many(M, N, K, BM[few], BN[few], group[few], wave[few], capacity)
    for i in np.flatnonzero(~few):
        args = (M, N, K, int(BM[i]), int(BN[i]), int(group[i]), int(wave[i]))
        est[i] = wave_reads(*args) - adjacent_reuse(*args, capacity)
    return [max(comp, int(x)) for x in est]


def reuse_floor(M: int, N: int, K: int, BM: int, BN: int, BK: int, group: int, wave: int) -> int:
    """A floor on the LRU stack distance of any chunk reused across waves: a chunk of K-step ``k``
    used by a wave and again by a later one has, in between, the full K-steps ``k+1 ..`` of the first
    wave or ``.. k-1`` of the second - at least ``tk - 2`` full steps of some wave, each touching that
    wave's valid panel rows and columns x ``BK``.  A cache smaller than this keeps nothing across waves,
    so HBM reads equal :func:`wave_reads` exactly (given ``capacity >= step_footprint``)."""
    M, N, K, BM, BN, group, wave = _check(M, N, K, BM, BN, group, wave)
    BK = _pos("BK", BK)
    tm, tn, tk = ceil_div(M, BM), ceil_div(N, BN), ceil_div(K, BK)
    if tk < 3:
        return 0
    least = min((nr * BM - (tm * BM - M) * lr) + (nc * BN - (tn * BN - N) * lc)
                for nr, nc, lr, lc in wave_panels(tm, tn, group, wave))
    return (tk - 2) * BK * least


# ------------------------------------------------------------------------------------- the formula
#: GROUP_M and the wave (programs running at once) as symbols; the sizes are :mod:`symbolic.gemm`'s
G_M = sym("G_M", latex="G_M")
P_w = sym("P_w", latex="P")
_w = sp.Symbol("w", integer=True, nonnegative=True)


def wave_reads_formula() -> sp.Expr:
    """:func:`wave_reads` as a SymPy expression: a finite sum over the ``ceil(tm tn / P)`` waves of the
    per-wave panel counts of :func:`_wave_values` (SymPy back end), in the GEMM symbols ``M_g, N_g, K_g,
    B_M, B_N`` and ``G_M`` (GROUP_M), ``P_w`` (the wave).  Evaluates exactly with
    :func:`symbolic.evaluate.compile_exact` (one loop step per wave)."""
    M, N, K, BM, BN = sym("M_g", latex="M"), sym("N_g", latex="N"), sym("K_g", latex="K"), \
        sym("B_M", latex="B_M"), sym("B_N", latex="B_N")
    tm, tn = sp.ceiling(M / BM), sp.ceiling(N / BN)
    T = tm * tn
    s = _w * P_w
    e = sp.Min((_w + 1) * P_w, T)
    rows, cols, lr, lc = _wave_values(s, e, tm, tn, G_M, ops=_SympyOps)
    term = K * (rows * BM - lr * (tm * BM - M) + cols * BN - lc * (tn * BN - N))
    return sp.Sum(term, (_w, 0, sp.ceiling(T / P_w) - 1))
