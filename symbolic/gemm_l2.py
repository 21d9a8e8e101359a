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

and :func:`hbm_reads` (the time model's estimate) takes ``compulsory_reads`` when ``A`` and ``B``
fit in the cache and ``wave_reads`` otherwise.  Counts are elements; multiply by the dtype size.
Writes of ``C`` (``M N`` elements) are not included: each tile is stored once whatever the order.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from .symbols import sym

__all__ = ["tile_of", "launch_order", "wave_panels", "wave_reads", "compulsory_reads",
           "step_footprint", "hbm_reads", "ceil_div", "panel_sums", "reuse_floor", "wave_reads_formula", "G_M", "P_w"]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _pos(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            if isinstance(v, np.integer):
                v = int(v)
            else:
                raise TypeError
        except TypeError:
            raise ValueError(f"{name}: must be an integer, got {v!r}") from None
    if v < 1:
        raise ValueError(f"{name}: must be >= 1, got {v}")
    return v


def tile_of(pid: int, tm: int, tn: int, group: int) -> tuple[int, int]:
    """The tile ``(pid_m, pid_n)`` program ``pid`` computes under GROUP_M order (module docstring)."""
    width = group * tn
    g, r = divmod(pid, width)
    first_m = g * group
    gs = min(tm - first_m, group)
    return first_m + r % gs, r // gs


def launch_order(tm: int, tn: int, group: int) -> list[tuple[int, int]]:
    """All tiles in launch order."""
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
    indicator = staticmethod(lambda c: c)


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
    indicator = staticmethod(lambda c: c)


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
    return rows, cols, ops.indicator(last_row), ops.indicator(last_col)


_CHUNK = 1 << 18


def _wave_sums(tm: int, tn: int, group: int, wave: int, w_from: int, w_to: int):
    T = tm * tn
    tot = [0, 0, 0, 0]
    for a in range(w_from, w_to, _CHUNK):
        w = np.arange(a, min(w_to, a + _CHUNK), dtype=np.int64)
        s = w * wave
        e = np.minimum(s + wave, T)
        for i, v in enumerate(_wave_values(s, e, tm, tn, group)):
            tot[i] += int(v.sum())
    return tot


@lru_cache(maxsize=65536)
def panel_sums(tm: int, tn: int, group: int, wave: int) -> tuple[int, int, int, int]:
    """Sums over all waves of :func:`wave_panels`' four columns, in O(period) time: waves that lie
    inside full groups repeat with period ``width / gcd(wave, width)`` (their values depend only on
    ``s mod width``), so one period is summed and multiplied; the waves reaching the last group are
    summed one by one."""
    tm, tn, group, wave = (_pos("tm", tm), _pos("tn", tn), _pos("group", group), _pos("wave", wave))
    T = tm * tn
    W = -(-T // wave)
    width = group * tn
    ng = -(-tm // group)
    w_reg = min(W, ((ng - 1) * width) // wave)       # waves ending before the last group starts
    tot = [0, 0, 0, 0]
    if w_reg:
        p = width // math.gcd(wave, width)
        q, r = divmod(w_reg, p)
        if q >= 2:
            per = _wave_sums(tm, tn, group, wave, 0, p)
            rest = _wave_sums(tm, tn, group, wave, 0, r)
            tot = [q * x + y for x, y in zip(per, rest)]
        else:
            tot = _wave_sums(tm, tn, group, wave, 0, w_reg)
    tail = _wave_sums(tm, tn, group, wave, w_reg, W)
    return tuple(x + y for x, y in zip(tot, tail))


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


def hbm_reads(M: int, N: int, K: int, BM: int, BN: int, group: int, wave: int, capacity: int) -> int:
    """The time model's estimate of HBM reads (elements) for an L2 of ``capacity`` elements:
    ``compulsory_reads`` when ``M K + K N <= capacity``, else ``wave_reads``."""
    if compulsory_reads(M, N, K) <= _pos("capacity", capacity):
        return compulsory_reads(M, N, K)
    return wave_reads(M, N, K, BM, BN, group, wave)


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
