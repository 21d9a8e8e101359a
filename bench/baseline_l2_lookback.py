"""A frozen copy of the time model's L2 *estimate* as it was before the exact LRU count (the lookback of
issue 10, tuning/l2_estimate.py at commit c0b5a9c), kept only so that ``bench/bench_gemm.py`` can time
"today's" time model against the exact one in the same run.  Not used by the toolkit; its figures are
not claimed to be anything (issue 10: up to 9.35x off the LRU).  The O(period) wave sum it calls is
:func:`symbolic.models.gemm_l2.wave_reads_periodic` (then named ``wave_reads``)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from base import validate
from base.errors import BadInput
from symbolic.models.gemm_l2 import ceil_div, compulsory_reads, sum_over_waves, valid_elements, wave_values
from symbolic.models.gemm_l2 import wave_reads_periodic as wave_reads
from tuning.l2_estimate import _int_column  # one validator of integer columns

__all__ = ["ESTIMATE_FACTOR", "LOOKBACK_MAX_WAVES", "adjacent_reuse", "lookback_reads", "lookback_reads_many",
           "hbm_reads", "hbm_reads_many"]

#: the stated bound on :func:`hbm_reads`' ratio to the LRU simulation between the exact regimes
#: (checked by ``verify``'s ``gemm.l2.estimate`` property at the points it draws)
ESTIMATE_FACTOR = 3

#: waves beyond which :func:`hbm_reads` uses the O(period) adjacent-wave rule instead of the lookback
LOOKBACK_MAX_WAVES = 1 << 14

_pos = validate.positive_int


def _check(M, N, K, B_M, B_N, G_M, P):
    return (_pos("M", M), _pos("N", N), _pos("K", K), _pos("B_M", B_M), _pos("B_N", B_N),
            _pos("G_M", G_M), _pos("P", P))


def _valid(r, c, lr, lc, M, N, B_M, B_N, tm, tn):
    return valid_elements(r, c, lr, lc, M, N, B_M, B_N, tm, tn)


@lru_cache(maxsize=65536)
def adjacent_reuse(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int, capacity: int) -> int:
    """Elements a wave finds in L2 because the wave before it used them, when both waves' panels fit:
    ``sum over w >= 1 of [K max(f_{w-1}, f_w) <= capacity] K (f_{w-1} + f_w - f_{w-1 u w})`` with ``f``
    a wave's valid panel elements per unit of K and ``f_{w-1 u w}`` that of the two waves' pid range
    together (the panels both use are counted once there)."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
    capacity = _pos("capacity", capacity)
    tm, tn = ceil_div(M, B_M), ceil_div(N, B_N)
    T = tm * tn

    def fn(w):
        s0, s1 = (w - 1) * P, w * P
        e0, e1 = s1, np.minimum(s1 + P, T)
        f0 = _valid(*wave_values(s0, e0, tm, tn, G_M), M, N, B_M, B_N, tm, tn)
        f1 = _valid(*wave_values(s1, e1, tm, tn, G_M), M, N, B_M, B_N, tm, tn)
        fu = _valid(*wave_values(s0, e1, tm, tn, G_M), M, N, B_M, B_N, tm, tn)
        fits = np.maximum(f0, f1) * K <= capacity
        return [np.where(fits, f0 + f1 - fu, 0)]
    return K * sum_over_waves(tm, tn, G_M, P, fn, 1, w_start=1)[0]


def lookback_reads(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int, capacity: int) -> int:
    """Estimated HBM reads (elements) of an LRU L2 of ``capacity`` elements, panel by panel.

    With ``f[a, b)`` the valid panel elements per unit of K that the pids ``a .. b-1`` touch (a run of
    consecutive pids, :func:`symbolic.models.gemm_l2.wave_values`): wave ``w`` looks back ``J_w`` waves,
    the most whose panels fit, ``K f[s_{w-J}, s_w) <= capacity`` (and ``K f_w <= capacity``, else
    ``J_w = 0``), and fetches only what those waves did not touch, ``f[s_{w-J}, e_w) - f[s_{w-J}, s_w)``.
    ``J_w = 0`` gives ``wave_reads``; ``J_w = w`` for every wave telescopes to ``compulsory_reads``.
    ``J_w`` is found by bisection (``f`` grows with the range).  O(W log W) for W waves."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
    return lookback_reads_many(M, N, K, [B_M], [B_N], [G_M], [P], capacity)[0]


#: tilings of at most this many waves are bisected together (one pass per ``_FLAT_WAVES`` waves); longer
#: ones one at a time, where NumPy divides by scalars (about 3x faster per wave than by arrays)
_BATCH_MAX_WAVES = 256
_FLAT_WAVES = 1 << 16


def _columns(B_M, B_N, G_M, P):
    cols = (_int_column("B_M", B_M), _int_column("B_N", B_N), _int_column("G_M", G_M), _int_column("P", P))
    if len({len(c) for c in cols}) != 1:
        raise BadInput("B_M", "B_M, B_N, G_M and P must have one value per tiling")
    return cols


def lookback_reads_many(M: int, N: int, K: int, B_M, B_N, G_M, P, capacity: int) -> list[int]:
    """:func:`lookback_reads` for many tilings of one problem at once (``B_M``, ``B_N``, ``G_M``, ``P``
    equal-length integer sequences): the waves of all of them are laid end to end and bisected
    together, so the time model pays one NumPy pass per ``_FLAT_WAVES`` waves, not one per config."""
    M, N, K, capacity = _pos("M", M), _pos("N", N), _pos("K", K), _pos("capacity", capacity)
    B_M, B_N, G_M, P = _columns(B_M, B_N, G_M, P)
    tm, tn = -(-M // B_M), -(-N // B_N)
    W = -(-(tm * tn) // P)
    out = [0] * len(B_M)
    for i in np.flatnonzero(W > _BATCH_MAX_WAVES):
        out[i] = _lookback_chunk(M, N, K, int(B_M[i]), int(B_N[i]), int(G_M[i]), int(P[i]), W[i:i + 1],
                                 capacity)[0]
    short = np.flatnonzero(W <= _BATCH_MAX_WAVES)
    first = 0
    while first < len(short):                       # chunks of short tilings, about _FLAT_WAVES waves each
        last = first + max(1, int(np.searchsorted(np.cumsum(W[short[first:]]), _FLAT_WAVES, side="right")))
        idx = short[first:last]
        for i, v in zip(idx, _lookback_chunk(M, N, K, B_M[idx], B_N[idx], G_M[idx], P[idx], W[idx], capacity)):
            out[i] = v
        first = last
    return out


def _lookback_chunk(M, N, K, B_M, B_N, G_M, P, W, capacity) -> list[int]:
    """The lookback of the tilings ``B_M, B_N, G_M, P`` (arrays, or ints for a single tiling) with
    ``W`` waves each, their waves laid end to end."""
    starts = np.concatenate(([0], np.cumsum(W)[:-1]))
    which = np.repeat(np.arange(len(W)), W)         # the tiling of each flat wave
    w = np.arange(int(W.sum()), dtype=np.int64) - starts[which]
    if isinstance(B_M, np.ndarray):
        bm, bn, g, p = B_M[which], B_N[which], G_M[which], P[which]
    else:
        bm, bn, g, p = B_M, B_N, G_M, P
    tm, tn = -(-M // bm), -(-N // bn)

    def f(a, b):
        v = _valid(*wave_values(a, np.maximum(b, a + 1), tm, tn, g), M, N, bm, bn, tm, tn)
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


def hbm_reads(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int, capacity: int) -> int:
    """The time model's estimate of HBM reads (elements) for an L2 of ``capacity`` elements:
    ``compulsory_reads`` when ``M K + K N <= capacity``; otherwise :func:`lookback_reads` (or, beyond
    ``LOOKBACK_MAX_WAVES`` waves, ``wave_reads`` less :func:`adjacent_reuse`, computable in O(period)).
    Exact in the two regimes ``verify`` checks (``gemm.l2.fits``, ``gemm.l2.no_reuse``); between them an
    estimate stated within :data:`ESTIMATE_FACTOR` of the LRU simulation (``gemm.l2.estimate``)."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
    return hbm_reads_many(M, N, K, [B_M], [B_N], [G_M], [P], capacity)[0]


def hbm_reads_many(M: int, N: int, K: int, B_M, B_N, G_M, P, capacity: int) -> list[int]:
    """:func:`hbm_reads` for many tilings of one problem (equal-length integer sequences ``B_M``, ``B_N``,
    ``G_M``, ``P``), the lookbacks computed together by :func:`lookback_reads_many`."""
    M, N, K = _pos("M", M), _pos("N", N), _pos("K", K)
    comp = compulsory_reads(M, N, K)
    capacity = _pos("capacity", capacity)
    B_M, B_N, G_M, P = _columns(B_M, B_N, G_M, P)
    if comp <= capacity:
        return [comp] * len(B_M)
    W = -(-(-(-M // B_M) * -(-N // B_N)) // P)
    few = W <= LOOKBACK_MAX_WAVES
    est = np.zeros(len(B_M), dtype=object)
    est[few] = lookback_reads_many(M, N, K, B_M[few], B_N[few], G_M[few], P[few], capacity)
    for i in np.flatnonzero(~few):
        args = (M, N, K, int(B_M[i]), int(B_N[i]), int(G_M[i]), int(P[i]))
        est[i] = wave_reads(*args) - adjacent_reuse(*args, capacity)
    return [max(comp, int(x)) for x in est]
