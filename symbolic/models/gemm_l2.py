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
derivation of a pid range's panels that every back end shares (integer arrays, SymPy).  NumPy is
imported only when an array is computed (``tilebound list`` stays light).
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from base import validate

from ..floor_moments import floor_prefix, floor_prefix_sums, floor_sums
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


def _check(M, N, K, B_M, B_N, G_M, P):
    return (_pos("M", M), _pos("N", N), _pos("K", K), _pos("B_M", B_M), _pos("B_N", B_N),
            _pos("G_M", G_M), _pos("P", P))


def wave_reads_periodic(M: int, N: int, K: int, B_M: int, B_N: int, G_M: int, P: int) -> int:
    """:func:`wave_reads` wave by wave: ``K x`` the sum over waves of the valid rows of each wave's distinct
    A panels plus the valid columns of its distinct B panels (:func:`wave_values`), summed over the period
    of the waves inside full groups (:func:`sum_over_waves`): O(``G_M t_n``) time.  A second derivation,
    kept to check the closed form."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
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
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
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
    from ..gemm_lru import max_wave_elements
    return max_wave_elements(M, N, B_M, B_N, G_M, P) * B_K


def reuse_floor(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int) -> int:
    """A floor on the LRU stack distance of any chunk reused across waves: a chunk of K-step ``k``
    used by a wave and again by a later one has, in between, the full K-steps ``k+1 ..`` of the first
    wave or ``.. k-1`` of the second - at least ``t_k - 2`` full steps of some wave, each touching that
    wave's valid panel rows and columns x ``B_K``.  A cache smaller than this keeps nothing across waves,
    so HBM reads equal :func:`wave_reads` exactly (given ``capacity >= step_footprint``)."""
    M, N, K, B_M, B_N, G_M, P = _check(M, N, K, B_M, B_N, G_M, P)
    B_K = _pos("B_K", B_K)
    tk = ceil_div(K, B_K)
    if tk < 3:
        return 0
    from ..gemm_lru import min_wave_elements
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
        from ..gemm_lru import lru_reads
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
