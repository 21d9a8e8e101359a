"""The waves of a tiled GEMM's ``GROUP_M`` launch order: which panels a run of pids touches, and the
no-reuse count of HBM reads in closed form.

The setting and the launch order are those of :mod:`symbolic.models.gemm_l2` (Triton's matmul tutorial,
section "L2 Cache Optimizations"; ``docs/conventions.md`` §4.4): program ``pid`` computes tile
``(pid_m, pid_n)`` (:func:`tile_of`), programs run in waves of ``P`` consecutive pids, and a run of pids
touches the A row panels and B column panels that :func:`wave_values` derives (one derivation, two back ends:
integer arrays and SymPy).  :func:`wave_reads` is the count when no panel survives from one wave to the next,
in closed form by floor sums (:mod:`symbolic.floor_moments`).

This module is shared by the model file (:mod:`symbolic.models.gemm_l2`, which defines the ``gemm.l2``
models and re-exports these names) and the exact LRU count (:mod:`symbolic.gemm_lru`); it imports neither,
so the two do not import each other.  NumPy is imported only when an array is computed (``tilebound list``
stays light).
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from base import validate

from .floor_moments import floor_prefix, floor_prefix_sums, floor_sums

__all__ = ["ceil_div", "tile_of", "launch_order", "NumpyOps", "SympyOps", "wave_values", "valid_elements",
           "sum_over_waves", "panel_sums", "wave_panels", "check_sizes", "wave_reads_periodic", "wave_reads"]

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


def _np():
    import numpy
    return numpy


class NumpyOps:
    """Integer arrays: exact (int64, or object arrays of Python ints) and vectorised.  NumPy is imported
    on first use, not with the module."""
    minimum = staticmethod(lambda a, b: _np().minimum(a, b))
    where = staticmethod(lambda c, a, b: _np().where(c, a, b))
    eq = staticmethod(lambda a, b: a == b)
    ge = staticmethod(lambda a, b: a >= b)
    lt = staticmethod(lambda a, b: a < b)
    and_ = staticmethod(lambda a, b: _np().logical_and(a, b))
    or_ = staticmethod(lambda a, b: _np().logical_or(a, b))
    not_ = staticmethod(lambda a: _np().logical_not(a))
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
    if getattr(rows, "dtype", None) == object:       # NumPy's flags are bool: make them Python ints too
        last_row, last_col = (_np().asarray(v).astype(object) for v in (last_row, last_col))
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

    np = _np()

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
        return wave_values(s, _np().minimum(s + wave, T), tm, tn, group)
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
    np = _np()
    s = np.arange(0, T, P, dtype=np.int64)
    e = np.minimum(s + P, T)
    r, c, lr, lc = wave_values(s, e, t_m, t_n, G_M)
    return [(int(a), int(b), bool(x), bool(y)) for a, b, x, y in zip(r, c, lr, lc)]


def check_sizes(M, N, K, B_M, B_N, G_M, P) -> tuple[int, ...]:
    """The launch's sizes as positive Python ints, each refused by name otherwise."""
    return (_pos("M", M), _pos("N", N), _pos("K", K), _pos("B_M", B_M), _pos("B_N", B_N),
            _pos("G_M", G_M), _pos("P", P))


def wave_reads_periodic(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int) -> int:
    """:func:`wave_reads` wave by wave: ``K x`` the sum over waves of the valid rows of each wave's distinct
    A panels plus the valid columns of its distinct B panels (:func:`wave_values`), summed over the period
    of the waves inside full groups (:func:`sum_over_waves`): O(``G_M t_n``) time.  A second derivation,
    kept to check the closed form."""
    M, N, K, B_M, B_N, G_M, P = check_sizes(M, N, K, B_M, B_N, G_M, P)
    tm, tn = ceil_div(M, B_M), ceil_div(N, B_N)
    nr, nc, lr, lc = panel_sums(tm, tn, G_M, P)
    return K * valid_elements(nr, nc, lr, lc, M, N, B_M, B_N, tm, tn)


def _fs(n: int, a: int, b: int, c: int) -> int:
    return floor_sums(n, a, b, c)[0] if n > 0 else 0


def wave_reads(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int) -> int:
    """Elements read from HBM when no panel survives in L2 from one wave to the next: ``K x`` the sum over
    waves of the valid rows of each wave's distinct A panels plus the valid columns of its distinct B
    panels (model ``gemm.l2``, ``hbm_reads_no_reuse``; a partial last panel counts its valid part).

    In closed form, O(log) steps at any size.  Counted by panel instead of by wave: the waves that touch
    a panel.  Row ``m`` of a group of ``gs`` rows is used by the pids ``x, x + gs, .., x + (t_n - 1) gs``
    (``x`` its first), so it meets ``t_n`` waves if ``gs >= P`` and otherwise every wave from ``x // P``
    to ``(x + (t_n - 1) gs) // P``; summed over the rows of the full groups (``x = g W + r``, ``W = G_M
    t_n``) that is a double sum of floors whose inner sum over ``r`` is ``S(y + G_M) - S(y)`` with
    ``S(y) = sum_{t<y} floor(t/P)``, a quadratic in ``floor(y/P)``: :func:`symbolic.floor_moments.floor_prefix_sums`.
    Column ``n`` is used by a block of ``gs`` consecutive pids in every group, meeting
    ``(y + gs - 1) // P - y // P + 1`` waves (``y`` the block's first pid): plain floor sums over
    ``j = g t_n + n``.  A wave that holds the blocks of one column in two consecutive groups (a wave
    longer than about a group) counts that column once: those pairs are subtracted, again by floor sums.
    The last group (``t_m - (ceil(t_m/G_M) - 1) G_M`` rows), the last row and the last column (partial
    panels) are corrected term by term.  :func:`wave_reads_periodic` and the SymPy sum over waves
    (:func:`wave_reads_formula`) are the same number wave by wave; the tests compare all three."""
    M, N, K, B_M, B_N, G_M, P = check_sizes(M, N, K, B_M, B_N, G_M, P)
    tm, tn = ceil_div(M, B_M), ceil_div(N, B_N)
    G, W = G_M, G_M * tn                              # rows per full group, pids per group
    nf = ceil_div(tm, G) - 1                          # full groups (the last group apart)
    gl, bl = tm - nf * G, nf * W                      # rows of the last group, its first pid

    def row_waves(x, gs):                             # waves meeting the row whose first pid is x
        return tn if gs >= P else (x + (tn - 1) * gs) // P - x // P + 1

    # rows: full groups, then the last group
    if G >= P:
        r_full = nf * G * tn
    else:
        L = (tn - 1) * G
        r_full = (floor_prefix_sums(nf, W, L + G, P) - floor_prefix_sums(nf, W, L, P)
                  - floor_prefix_sums(nf, W, G, P) + floor_prefix_sums(nf, W, 0, P) + nf * G)
    if gl >= P:
        r_last = gl * tn
    else:
        L = (tn - 1) * gl
        r_last = (floor_prefix(bl + L + gl, P) - floor_prefix(bl + L, P) - floor_prefix(bl + gl, P)
                  + floor_prefix(bl, P) + gl)
    rows = B_M * (r_full + r_last) - (tm * B_M - M) * row_waves(bl + gl - 1, gl)
    # column blocks: full groups (j = g t_n + n, first pid j G), the last group, the last column's blocks
    c_full = _fs(nf * tn, G, G - 1, P) - _fs(nf * tn, G, 0, P) + nf * tn
    c_last = _fs(tn, gl, bl + gl - 1, P) - _fs(tn, gl, bl, P) + tn
    y = bl + (tn - 1) * gl
    last_col = _fs(nf, W, W - 1, P) - _fs(nf, W, W - G, P) + nf + (y + gl - 1) // P - y // P + 1
    # one column's blocks in consecutive groups inside one wave: its end u and the next block's start
    # u + d share a wave iff no multiple of P lies in (u, u + d]
    d = W - G + 1
    pairs = max(nf - 1, 0)                            # pairs of full groups
    if d < P:
        twice = pairs * tn - _fs(pairs * tn, G, G - 1 + d, P) + _fs(pairs * tn, G, G - 1, P)
        twice_last = pairs - _fs(pairs, W, W - 1 + d, P) + _fs(pairs, W, W - 1, P)
    else:
        twice = twice_last = 0
    if nf >= 1:                                       # the last full group and the last group: d shrinks with n
        first = (0 if d < P else tn) if G == gl else min(tn, max(0, (d - P) // (G - gl) + 1))
        u0, cnt = (nf - 1) * W + G - 1, tn - first
        twice += cnt - _fs(cnt, gl, bl + first * gl, P) + _fs(cnt, G, u0 + first * G, P)
        u, v = u0 + (tn - 1) * G, bl + (tn - 1) * gl
        twice_last += int(u // P == v // P)
    cols = B_N * (c_full + c_last - twice) - (tn * B_N - N) * (last_col - twice_last)
    return K * (rows + cols)
