"""The exact LRU misses of a tiled GEMM's launch order, counted without simulating (model ``gemm.l2.lru``).

Setting: the launch order of :mod:`symbolic.models.gemm_l2` (Triton's ``GROUP_M`` order, waves of ``P``
consecutive pids that advance through ``K`` in lockstep, each program requesting its A chunk, then its
B chunk, at every K-step) feeding an LRU cache of ``capacity`` elements whose lines are tile chunks of
their own size: ``("A", row m, step k)`` of ``rows_m x depth_k`` elements and ``("B", column n, step
k)`` of ``depth_k x cols_n`` (``rows_m``, ``cols_n``: the valid rows / columns of the panel;
``depth_k = B_K`` but the last step's ``d_L = K - (t_k - 1) B_K``).  This is the cache
:mod:`numeric.l2cache` simulates; :mod:`verify.checks.gemm` compares the two at every point it draws.

**Lemma 1 (what LRU holds).**  If every line fits (``size <= capacity``), the cache holds exactly the
longest prefix of the recency stack (all lines ever touched, most recent first) whose sizes sum to at
most ``capacity``.  By induction over requests: a hit moves a line inside the held prefix to the top,
so the held set and its sum are unchanged and the next line still does not fit; a miss puts the line
on top and evicts from the bottom until the sum fits, which leaves the longest prefix that fits (the
first line not held did not fit before, and does not now).  Hence a request for line ``X`` **hits iff
``X`` was touched before and ``D + size(X) <= capacity``**, where ``D`` is the total size of the
distinct lines other than ``X`` touched since ``X``'s last use (Mattson et al., "Evaluation techniques
for storage hierarchies", IBM Systems Journal 9(2), 1970: the stack property; here with sizes).

**Lemma 2 (reuse inside a wave).**  A chunk used again within the same wave is used at the same
K-step, and everything touched in between belongs to that step of that wave; with ``capacity >=``
:func:`symbolic.models.gemm_l2.step_footprint` (the largest valid size of one K-step of one wave) the request hits.  A smaller
capacity is refused (:class:`~base.errors.BadInput` naming ``capacity``).

**Lemma 3 (reuse across waves).**  Let chunk ``X`` of step ``k`` be used last in wave ``w`` by pid
``p_last`` and next in wave ``w' > w`` first by pid ``p_first``.  With ``f[a, b)`` the valid elements
per unit of depth of the rows and columns that the pids ``a .. b-1`` touch (:func:`symbolic.gemm_waves.wave_values`),
the distinct lines in between are, step by step: at every step ``j > k`` the chunks of the pids
``[s_w, s_w')`` (the rest of wave ``w`` and the waves between), at every step ``j < k`` those of
``[s_{w+1}, e_w')`` (the waves between and the start of ``w'``), and at step ``k`` those requested
after ``X`` in wave ``w`` through those before it in ``w'``: the chunks of ``[p_last, p_first)``
less ``X`` for an A chunk (``p_last``'s own B chunk included), of ``(p_last, p_first]`` less ``X`` for
a B chunk (``p_first``'s A chunk included).  So with ``a = f[s_w, s_w')``, ``b = f[s_{w+1}, e_w')``
and ``x = f[p_last, p_first)`` (A) or ``f(p_last, p_first]`` (B) - ``x`` counts ``X``'s own row or
column, so ``x`` per unit depth is ``D``'s step-``k`` part plus ``size(X)`` -::

    D_k + size(X) = a (sum of depth_j, j > k) + b (sum of depth_j, j < k) + x depth_k

which is linear in ``k`` for ``k < t_k - 1``: the steps that miss form an interval, counted in closed
form (:func:`_missing_steps`), and the last step is one test.  First uses miss: ``K (M + N)`` in all.

**Pieces (what makes it fast).**  Every cross-wave reuse of wave ``w'`` (starting at pid ``s`` in
group ``g``, ``gs`` rows in that group) is one of three kinds, each a run of chunks with a constant
``x``, size and previous wave once cut at a few points:

* *continuing rows* - the rows of group ``g`` used before ``s``: their first pids in ``w'`` are
  ``q in [max(s, start_g + gs), min(s + gs, e, end_g))`` with ``p_last = q - gs``; ``x`` is the group's
  rows plus the one or two columns of the window ``[q - gs, q)``;
* *the column at s* - when ``s`` is inside a column's block of ``gs`` pids: ``p_last = s - 1``,
  ``x`` = the row and column of ``s``;
* *columns re-entering* - columns whose block in group ``g`` (or ``g + 1``) starts inside ``w'`` while
  their block in the group before ended before ``s``: ``p_last`` = that block's last pid, and
  ``x = N + G_M B_M + (valid rows of group g's head)`` (``n = 0`` and ``n = t_n - 1`` apart).

So a wave has a bounded number of pieces (at most 6 + 1 + 2 x 3 x (previous waves they span)), and
the count costs O(waves) NumPy work, with no per-chunk loop; :func:`lru_reads_many` does many tilings
of one problem at once (the time model: all 6000 configs of a shape in one pass).

**Cost and budget.**  The work is proportional to the waves ``ceil(t_m t_n / P)``.  Up to
:data:`EXACT_WAVES_BUDGET` waves every wave is visited (and many tilings share one pass); beyond it
:func:`lru_reads_by_classes` counts the same misses from the waves' classes of equal neighbourhood
(:mod:`symbolic.wave_classes`): a few hundred representative waves at the course's ``G_M = 8, P = 132``
whatever ``M, N, K`` are (``10**30`` included), since the work grows with ``G_M`` and ``P`` only.  A plan of
more than :data:`EXACT_WAVES_BUDGET` representatives is refused up front (:class:`~base.errors.BadInput`
naming ``P`` or ``G_M``, with the work and how to raise the budget).  Values beyond int64 fall back to
Python ints (object arrays).
"""

from __future__ import annotations

import numpy as np

from base import validate
from base.errors import BadInput

from .gemm_waves import valid_elements, wave_reads, wave_values

__all__ = ["CLASSES_FROM", "EXACT_WAVES_BUDGET", "lru_reads", "lru_reads_many", "lru_reads_by_classes",
           "max_wave_elements", "min_wave_elements", "waves"]

#: the most waves one exact count visits one by one (about 5 us a wave, so 5 s per million, on one core), and
#: the most representative waves a count by classes evaluates; raise it with
#: ``symbolic.gemm_lru.EXACT_WAVES_BUDGET = ...`` or the ``budget`` argument
EXACT_WAVES_BUDGET = 1 << 20

#: from this many waves on, :func:`lru_reads` counts by classes of waves (:func:`lru_reads_by_classes`): a plan
#: by classes evaluates at most about this many representatives, usually a few hundred
CLASSES_FROM = 1 << 14

#: waves processed per NumPy pass (bounds memory: about 20 arrays of ~10 pieces a wave)
_CHUNK_WAVES = 1 << 15

_INT64_SAFE = 1 << 62

_pos = validate.positive_int


def waves(M: int, N: int, B_M: int, B_N: int, P: int) -> int:
    """``ceil(t_m t_n / P)``: the waves of the launch (the count's work)."""
    T = -(-_pos("M", M) // _pos("B_M", B_M)) * -(-_pos("N", N) // _pos("B_N", B_N))
    return -(-T // _pos("P", P))


def _column(name, values) -> np.ndarray:
    """A sequence of positive integers as an int64 array (Python ints beyond int64 as an object array);
    :class:`~base.errors.BadInput` naming ``name`` otherwise."""
    a = np.asarray(values)
    if a.ndim != 1:
        a = a.reshape(-1)
    if a.dtype.kind in "iu" and a.size and int(a.max()) < _INT64_SAFE:
        if (a < 1).any():
            raise BadInput(name, f"must be >= 1, got {int(a.min())}")
        return a.astype(np.int64)
    checked = [_pos(name, v) for v in a.tolist()]
    return np.array(checked, dtype=np.int64 if all(v < _INT64_SAFE for v in checked) else object)


def lru_reads(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int, capacity: int,
              budget: int | None = None, method: str = "auto") -> int:
    """HBM reads (elements) of the LRU L2 of ``capacity`` elements under the launch order: exactly what
    :func:`numeric.l2cache.simulate_l2` counts, by Lemmas 1-3 above, wave by wave up to ``budget`` (default
    :data:`EXACT_WAVES_BUDGET`) waves and by classes of waves beyond (:func:`lru_reads_by_classes`).
    ``capacity`` below one K-step's footprint (:func:`max_wave_elements` x ``min(B_K, K)``) is refused with
    :class:`~base.errors.BadInput`, and so is a plan by classes beyond the budget.

    ``method``: ``"waves"`` (every wave; beyond the budget refused, naming ``M`` or ``N``), ``"classes"``
    (:func:`lru_reads_by_classes`) or ``"auto"`` (classes from :data:`CLASSES_FROM` waves on, where they
    are the cheaper; the two are the same number, which ``tests/unit/test_wave_classes.py`` checks)."""
    if method not in ("auto", "waves", "classes"):
        raise BadInput("method", f"must be 'auto', 'waves' or 'classes', got {method!r}")
    W = waves(M, N, B_M, B_N, P)
    if method == "classes" or (method == "auto" and W > CLASSES_FROM):
        return lru_reads_by_classes(M, N, K, B_M, B_N, B_K, G_M, P, capacity, budget=budget)
    limit = EXACT_WAVES_BUDGET if budget is None else _pos("budget", budget)
    if method == "waves" and W > limit:
        tm, tn = -(-M // B_M), -(-N // B_N)
        raise BadInput("M" if tm >= tn else "N",
                       f"the wave-by-wave count visits every wave: {W:,} waves here (t_m = {tm:,}, t_n = {tn:,}), "
                       f"over the budget of {limit:,}; raise symbolic.gemm_lru.EXACT_WAVES_BUDGET (about 5 s per "
                       f"million waves), or count by classes (method='classes')")
    return lru_reads_many(M, N, K, [B_M], [B_N], [B_K], [G_M], [P], capacity, budget=budget)[0]


def lru_reads_many(M: int, N: int, K: int, B_M, B_N, B_K, G_M, P, capacity: int, budget: int | None = None,
                   refuse: bool = True) -> list:
    """:func:`lru_reads` for many tilings of one problem (equal-length sequences ``B_M``, ``B_N``, ``B_K``,
    ``G_M``, ``P``), computed together: the pieces depend on ``(B_M, B_N, G_M, P)`` only, so tilings that
    differ only in ``B_K`` share them.  A tiling of more than ``budget`` waves is counted by classes
    (:func:`lru_reads_by_classes`) when ``refuse`` is true; with ``refuse=False`` a tiling the wave-by-wave
    count cannot take (over the budget, or ``capacity`` below its step footprint) gives ``None`` instead
    (the time model's fast path)."""
    M, N, K, capacity = _pos("M", M), _pos("N", N), _pos("K", K), _pos("capacity", capacity)
    cols = [_column(n, v) for n, v in (("B_M", B_M), ("B_N", B_N), ("B_K", B_K), ("G_M", G_M), ("P", P))]
    if len({len(c) for c in cols}) != 1:
        raise BadInput("B_M", "B_M, B_N, B_K, G_M and P must have one value per tiling")
    budget = EXACT_WAVES_BUDGET if budget is None else _pos("budget", budget)
    n = len(cols[0])
    if n == 0:
        return []
    small = max(M, N, K, capacity) < _INT64_SAFE and all(c.dtype == np.int64 for c in cols)
    bm, bn, bk, gm, p = (c if small else c.astype(object) for c in cols)     # Python ints beyond int64
    tm, tn = -(-M // bm), -(-N // bn)
    T = tm * tn
    p = np.minimum(p, T)                              # a wave larger than the launch is the whole launch
    W = -(-T // p)
    if M * K + K * N <= capacity:                     # everything fits: each chunk fetched once
        return [M * K + K * N] * n
    out: list = [None] * n
    if refuse:                                        # beyond the budget of waves: by classes of waves
        for i in np.flatnonzero(W > budget).tolist():
            out[i] = lru_reads_by_classes(M, N, K, int(bm[i]), int(bn[i]), int(bk[i]), int(gm[i]), int(p[i]),
                                          capacity, budget)
    ok = np.flatnonzero(W <= budget)
    if not len(ok):
        return out
    # the pieces depend on (B_M, B_N, G_M, P): one base tiling per distinct quadruple
    quad = np.stack([bm[ok], bn[ok], gm[ok], p[ok]], axis=1)
    if small:
        bases, base_of = np.unique(quad, axis=0, return_inverse=True)
        base_of = base_of.reshape(-1)
    else:                                             # np.unique takes no axis on object arrays
        keys = sorted({tuple(r) for r in quad.tolist()})
        index = {k: j for j, k in enumerate(keys)}
        bases = np.array(keys, dtype=object).reshape(-1, 4)
        base_of = np.array([index[tuple(r)] for r in quad.tolist()], dtype=np.int64)
    order = np.argsort(base_of, kind="stable")                     # tilings grouped by base, B_K variants together
    nvar = np.bincount(base_of, minlength=len(bases))
    Wb = (-(-(-(-M // bases[:, 0]) * -(-N // bases[:, 1])) // bases[:, 3])).astype(np.int64)
    first, vfirst = 0, 0
    while first < len(bases):                                       # chunks of about _CHUNK_WAVES waves
        last = first + max(1, int(np.searchsorted(np.cumsum(Wb[first:]), _CHUNK_WAVES, side="right")))
        nv = int(nvar[first:last].sum())
        members = ok[order[vfirst:vfirst + nv]]
        res = _count_bases(M, N, K, capacity, bases[first:last], nvar[first:last], bk[members])
        for i, r in zip(members.tolist(), res):
            out[i] = r
        first, vfirst = last, vfirst + nv
    for i in range(n):
        if isinstance(out[i], BadInput):
            if refuse:
                raise out[i]
            out[i] = None
    return out


def _wave_elements(M, N, B_M, B_N, G_M, P, reduce):
    """``reduce`` (max or min) over the waves of their valid elements per unit depth; O(waves), refused
    beyond :data:`EXACT_WAVES_BUDGET` waves."""
    tm, tn = -(-M // B_M), -(-N // B_N)
    T = tm * tn
    P = min(P, T)
    W = -(-T // P)
    if W > EXACT_WAVES_BUDGET:                        # a wave's f is fixed by its neighbourhood: by classes
        G = min(G_M, tm)
        runs = _plan(tm, tn, G, P, EXACT_WAVES_BUDGET)
        v, _ = _representatives(M, N, B_M, B_N, G, P, runs, _dtype(M, N, 1, T, P, 1, B_M + B_N))
        return int(reduce(np.array(v.f.tolist(), dtype=object)))
    dt = _dtype(M, N, 1, T, P, 1, B_M + B_N)
    if dt is object:                                  # 0-d object arrays: no product falls back to int64
        M, N, B_M, B_N, G_M, P, tm, tn, T = (np.array(v, dtype=object) for v in (M, N, B_M, B_N, G_M, P, tm, tn, T))
    out = None
    for c in range(0, W, _CHUNK_WAVES):
        s = np.arange(c, min(W, c + _CHUNK_WAVES), dtype=np.int64).astype(dt) * P
        f = valid_elements(*wave_values(s, np.minimum(s + P, T), tm, tn, G_M), M, N, B_M, B_N, tm, tn)
        v = int(reduce(f))
        out = v if out is None else int(reduce(np.array([out, v], dtype=object)))
    return out


def max_wave_elements(M: int, N: int, B_M: int, B_N: int, G_M: int, P: int) -> int:
    """The largest valid elements per unit depth of one wave (distinct rows x their valid rows plus distinct
    columns x their valid columns): times the step depth, one K-step's footprint."""
    return _wave_elements(M, N, B_M, B_N, G_M, P, np.max)


def min_wave_elements(M: int, N: int, B_M: int, B_N: int, G_M: int, P: int) -> int:
    """The least valid elements per unit depth of one wave."""
    return _wave_elements(M, N, B_M, B_N, G_M, P, np.min)


# ----------------------------------------------------------------------------------------- internals
def _dtype(M, N, K, T, P, capacity, tile=1):
    """int64 when every intermediate stays below 2**62: pids (``T + 2P``), reuse distances against the
    capacity (``(M + N) K``, valid elements per unit depth times depths), and a tiling's misses (at most its
    requests, ``T (B_M + B_N) K`` with ``tile = B_M + B_N``); else Python ints in object arrays."""
    big = max(T + 2 * P, 4 * ((M + N) * K + capacity), (T + 1) * tile * K + capacity, (M + N) * (T + 1))
    return np.int64 if big < _INT64_SAFE else object


class _Waves:
    """Per-wave columns (one entry per wave of every base tiling) and the launch order's small rules.
    ``take(idx)`` is a lazy selection: a column is indexed when first read."""

    def __init__(self, **columns):
        self.__dict__.update(columns)

    def take(self, idx) -> "_Waves":
        return _Taken(self, idx)

    def group_size(self, grp):                        # rows of group grp (the last may be short)
        return np.minimum(self.g, self.tm - grp * self.g)

    def rows_valid(self, m):                          # valid rows of tile row m
        return self.bm - (m == self.tm - 1) * self.short_M

    def cols_valid(self, c):                          # valid columns of tile column c
        return self.bn - (c == self.tn - 1) * self.short_N

    def head_rows(self, grp, j, gsz):                 # valid rows among the first j rows of group grp
        return j * self.bm - ((grp == self.ng - 1) & (j == gsz)) * self.short_M


class _Taken(_Waves):
    def __init__(self, src: _Waves, idx):
        self.__dict__.update(_src=src, _idx=idx)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._src, name)[self._idx]
        self.__dict__[name] = value
        return value

    def take(self, idx) -> "_Waves":
        return _Taken(self._src, self._idx[idx])


def _flat_waves(M, N, bases, dt) -> _Waves:
    """One entry per wave of each base tiling (rows of ``bases``), with the launch order's quantities at
    the wave's first pid ``s``."""
    BM, BN, G, P = (bases[:, i].astype(dt) for i in range(4))
    tm, tn = -(-M // BM), -(-N // BN)
    T = tm * tn
    W = (-(-T // P)).astype(np.int64)
    start = np.concatenate(([0], np.cumsum(W)[:-1])).astype(np.int64)
    which = np.repeat(np.arange(len(bases)), W)                        # base tiling of each flat wave
    wq = (np.arange(len(which), dtype=np.int64) - start[which]).astype(dt)
    bm, bn, g, p, tm_, tn_, T_ = (v[which] for v in (BM, BN, G, P, tm, tn, T))
    s = wq * p
    v = _Waves(bm=bm, bn=bn, g=g, p=p, tm=tm_, tn=tn_, A=g * tn_, ng=-(-tm_ // g), s=s, e=np.minimum(s + p, T_),
               short_M=tm_ * bm - M, short_N=tn_ * bn - N, flat=np.arange(len(s), dtype=np.int64), wq=wq,
               which=which, start=start, W=W)
    v.f = valid_elements(*wave_values(s, v.e, tm_, tn_, g), M, N, bm, bn, tm_, tn_)   # f[s_w, e_w) per wave
    v.f_prev = np.concatenate((v.f[:1], v.f[:-1]))    # the wave before's (unused for a first wave)
    return v


def _below_footprint(capacity, foot, B_M, B_N, B_K, G_M, P) -> BadInput:
    """The refusal of a capacity below one K-step's footprint (Lemma 2's domain)."""
    return BadInput("capacity", f"{capacity:,} elements is below one K-step's footprint {foot:,} (B_M = {B_M}, "
                                f"B_N = {B_N}, B_K = {B_K}, G_M = {G_M}, P = {P}): the LRU would evict inside a "
                                f"step, which the exact count does not cover")


def _count_bases(M, N, K, capacity, bases, nvar, bk) -> list:
    """Exact reads for tilings grouped by base ``(B_M, B_N, G_M, P)`` (rows of ``bases``; ``nvar[j]``
    consecutive entries of ``bk`` are base ``j``'s ``B_K`` values): a value per entry of ``bk``, or a
    :class:`~base.errors.BadInput` where ``capacity`` is below that tiling's step footprint."""
    Tmax = int((-(-M // bases[:, 0]) * -(-N // bases[:, 1])).max())
    dt = _dtype(M, N, K, Tmax, int(bases[:, 3].max()), capacity, int((bases[:, 0] + bases[:, 1]).max()))
    nb = len(bases)
    v = _flat_waves(M, N, bases, dt)
    fsum, fmin, fmax = (r.reduceat(v.f, v.start) for r in (np.add, np.minimum, np.maximum))
    base_of = np.repeat(np.arange(nb), nvar)                           # the base of each B_K variant
    flat_bk = np.asarray(bk).astype(dt)
    foot = fmax[base_of] * np.minimum(flat_bk, K)                      # Lemma 2 needs capacity >= foot
    # every reuse across waves sees at least f_min (K - B_K) between its two uses: beyond the capacity,
    # nothing survives from one wave to the next and the reads are K x (sum of the waves' f)
    no_reuse = fmin[base_of] * (K - flat_bk) > capacity
    counted = (foot <= capacity) & ~no_reuse
    totals = [0] * len(flat_bk)
    need = np.zeros(nb, dtype=bool)
    need[base_of[counted]] = True
    if need.any():
        sub = np.flatnonzero(need)
        u = _flat_waves(M, N, bases[sub], dt) if len(sub) < nb else v
        mine = np.flatnonzero(counted)
        by_variant = _pieces_misses(M, N, K, capacity, u, dt, flat_bk[mine], np.searchsorted(sub, base_of[mine]))
        for t, m in zip(mine.tolist(), by_variant):
            totals[t] = m
    out = []
    for t in range(len(flat_bk)):
        j = base_of[t]
        if foot[t] > capacity:
            out.append(_below_footprint(capacity, int(foot[t]), *bases[j][:2], int(flat_bk[t]), *bases[j][2:]))
        elif no_reuse[t]:
            out.append(K * int(fsum[j]))
        else:
            out.append(K * (M + N) + totals[t])
    return out


def _pieces_misses(M, N, K, capacity, v: _Waves, dt, bks, base_idx) -> list[int]:
    """The misses of every reuse across waves, for the tilings ``(base base_idx[t], B_K = bks[t])`` of
    the waves ``v``: the pieces of all waves, then Lemma 3's count once per distinct ``B_K``."""

    pieces = _pieces(M, N, v)
    out = [0] * len(bks)
    if not pieces:
        return out
    I, x, size, a, b, cnt = (np.concatenate([pc[i] for pc in pieces]) for i in range(6))
    weight = cnt * size
    tile = v.which[I]
    nb = len(v.W)
    # a tiling's misses never exceed its requests, t_m t_n (B_M + B_N) K elements
    exact_float = dt is np.int64 and int((v.tm * v.tn * (v.bm + v.bn)).max()) * K < 1 << 53
    for bkv in np.unique(bks).tolist():
        mine = np.flatnonzero(bks == bkv)
        want = np.zeros(nb, dtype=bool)
        want[base_idx[mine]] = True
        sel = np.flatnonzero(want[tile])
        miss = weight[sel] * _missing_steps(a[sel], b[sel], x[sel], K, bkv, capacity)
        if exact_float:                               # every partial sum is an integer below 2**53
            per_base = np.bincount(tile[sel], weights=miss, minlength=nb).astype(np.int64)
        elif dt is np.int64:
            per_base = np.zeros(nb, dtype=np.int64)
            np.add.at(per_base, tile[sel], miss)
        else:
            per_base = np.zeros(nb, dtype=object)
            for t, m in zip(tile[sel].tolist(), miss.tolist()):
                per_base[t] += m
        for t in mine.tolist():
            out[t] = int(per_base[base_idx[t]])
    return out


def _pieces(M: int, N: int, v: _Waves) -> list:
    """Every reuse across waves that the waves ``v`` see, as pieces ``(wave, x, size, a, b, count)``
    (Lemma 3's quantities; ``wave`` indexes ``v``).  Needs ``v.f`` (each wave's ``f``) and ``v.f_prev``
    (the wave before's)."""

    def ab(idx, w):                                   # a = f[s_w, s_w'), b = f[s_{w+1}, e_w') for pieces (idx, w)
        adj = w == v.wq[idx] - 1                      # w' = w + 1: the two waves' own f
        a = np.where(adj, v.f_prev[idx], 0)
        b = np.where(adj, v.f[idx], 0)
        far = np.flatnonzero(~adj)
        if len(far):
            u, wf = v.take(idx[far]), w[far]
            a[far] = valid_elements(*wave_values(wf * u.p, u.wq * u.p, u.tm, u.tn, u.g), M, N, u.bm, u.bn, u.tm, u.tn)
            b[far] = valid_elements(*wave_values((wf + 1) * u.p, u.e, u.tm, u.tn, u.g), M, N, u.bm, u.bn, u.tm, u.tn)
        return a, b

    v.g0 = v.s // v.A                                 # the group of s
    v.o = v.s - v.g0 * v.A                            # s's place in it
    v.gs0 = v.group_size(v.g0)
    v.c0 = v.o // v.gs0                               # s's column
    v.j0 = v.o - v.c0 * v.gs0                         # s's place in its column's block
    return _continuing_rows(v, ab) + _column_at_start(v, ab) + _columns_reentering(v, N, ab)


def _continuing_rows(v: _Waves, ab) -> list:
    """Rows of the group of ``s`` used before ``s``: first pids ``q in [lo, hi)`` of the wave,
    ``p_last = q - gs``; cut where the window ``[q - gs, q)`` turns one column, at the group's last
    row (a short size) and where ``q - gs`` enters the next wave."""
    gA = v.g0 * v.A
    lo = np.maximum(v.s, gA + v.gs0)
    hi = np.maximum(lo, np.minimum(np.minimum(v.s + v.gs0, v.e), gA + v.A))
    aligned = gA + (-(-v.o // v.gs0)) * v.gs0
    last_row = gA + v.o + (v.gs0 - 1 - v.j0) % v.gs0
    wave_cut = v.gs0 + v.p * (-(-(lo - v.gs0) // v.p))
    cuts = np.stack([lo, aligned, aligned + 1, last_row, last_row + 1, wave_cut, hi], axis=1)
    cuts = np.minimum(np.maximum(cuts, lo[:, None]), hi[:, None])
    cuts.sort(axis=1)
    out = []
    for i in range(cuts.shape[1] - 1):
        cnt = cuts[:, i + 1] - cuts[:, i]
        keep = np.flatnonzero(cnt > 0)
        if not len(keep):
            continue
        u, q = v.take(keep), cuts[keep, i]
        gA = u.g0 * u.A
        win = q - u.gs0 - gA                                           # the window's first local pid
        c1 = win // u.gs0
        one = win % u.gs0 == 0
        x = u.head_rows(u.g0, u.gs0, u.gs0) + u.cols_valid(c1) + np.where(one, 0, u.cols_valid(np.minimum(c1 + 1, u.tn - 1)))
        size = u.rows_valid(u.g0 * u.g + (q - gA) % u.gs0)
        out.append((keep, x, size) + ab(keep, (q - u.gs0) // u.p) + (cnt[keep],))
    return out


def _column_at_start(v: _Waves, ab) -> list:
    """The column whose block holds ``s`` and ``s - 1``: ``p_last = s - 1``, ``x`` = ``s``'s row and column."""
    keep = np.flatnonzero(v.j0 != 0)
    if not len(keep):
        return []
    u = v.take(keep)
    size = u.cols_valid(u.c0)
    x = u.rows_valid(u.g0 * u.g + u.j0) + size
    return [(keep, x, size) + ab(keep, (u.s - 1) // u.p) + (np.ones(len(keep), dtype=x.dtype),)]


def _columns_reentering(v: _Waves, N: int, ab) -> list:
    """Columns whose block in group ``g0`` (``n >= ceil(o / gs0)``) or ``g0 + 1`` (``n <= c0 - 1``)
    starts inside the wave while their block in the group before ended before ``s``; ``p_last`` = that
    block's last pid ``(grp - 1) A + n G_M + G_M - 1``.  Cut by the wave of ``p_last`` and at ``n = 1`` and
    ``n = t_n - 1`` (where ``x`` and the size change)."""
    out = []
    for part in (0, 1):
        grp = v.g0 + part
        exists = (grp >= 1) & (grp <= v.ng - 1)
        gsg = np.where(exists, v.group_size(np.minimum(grp, v.ng - 1)), 1)
        if part == 0:
            n_lo = -(-v.o // v.gs0)
            n_hi = np.minimum(v.tn - 1, (v.e - 1 - grp * v.A) // gsg)
        else:
            n_lo = np.zeros_like(v.s)
            n_hi = np.minimum(np.minimum(v.c0 - 1, v.tn - 1), (v.e - 1 - grp * v.A) // gsg)
        n_hi = np.where(exists, n_hi, n_lo - 1)
        base = (grp - 1) * v.A + v.g - 1                              # p_last of column n: base + n G_M
        w_lo = (base + n_lo * v.g) // v.p
        w_hi = (base + n_hi * v.g) // v.p
        nw = np.where(n_hi >= n_lo, w_hi - w_lo + 1, 0).astype(np.int64)
        if not nw.any():
            continue
        rep = np.repeat(v.flat, nw)
        k = np.arange(int(nw.sum()), dtype=np.int64) - np.repeat(np.cumsum(nw) - nw, nw)
        u = v.take(rep)
        w = w_lo[rep] + k.astype(w_lo.dtype)
        a_w, b_w = ab(rep, w)                         # one per previous wave, shared by its three cuts
        lo = np.maximum(n_lo[rep], -(-(w * u.p - base[rep]) // u.g))
        hi = np.minimum(n_hi[rep], ((w + 1) * u.p - 1 - base[rep]) // u.g)
        for lo_n, hi_n in ((lo, np.minimum(hi, 0)), (np.maximum(lo, 1), np.minimum(hi, u.tn - 2)),
                           (np.maximum(lo, np.maximum(u.tn - 1, 1)), hi)):
            cnt = hi_n - lo_n + 1
            keep = np.flatnonzero(cnt > 0)
            if not len(keep):
                continue
            uk, n0, gk, gsk = u.take(keep), lo_n[keep], grp[rep][keep], gsg[rep][keep]
            x = N + (n0 <= uk.tn - 2) * uk.g * uk.bm + uk.head_rows(gk, np.minimum(n0 * gsk + 1, gsk), gsk)
            out.append((rep[keep], x, uk.cols_valid(n0), a_w[keep], b_w[keep], cnt[keep]))
    return out


def _missing_steps(a, b, x, K, bk, capacity):
    """Elements per unit of size that miss: ``sum of depth_k`` over the steps ``k`` with
    ``a (depths after k) + b (depths before k) + x depth_k > capacity`` (Lemma 3).  For ``k < t_k - 1``
    that is ``alpha + k beta > capacity`` with ``alpha = a (K - B_K) + x B_K`` (``k = 0``) and
    ``beta = B_K (b - a)``: the steps from ``floor((capacity - alpha) / beta) + 1`` on when ``beta > 0``,
    those below ``ceil((alpha - capacity) / -beta)`` when ``beta < 0``, all or none when ``beta = 0``;
    the last step (``d_L`` deep) misses iff ``b (K - d_L) + x d_L > capacity``."""
    tk = -(-K // bk)
    dL = K - (tk - 1) * bk
    n1 = tk - 1                                        # the B_K-deep steps
    room = capacity - (a * (K - bk) + x * bk)          # capacity - alpha
    beta = bk * (b - a)
    q = room // np.where(beta == 0, 1, np.abs(beta))
    body = np.where(beta > 0, n1 - np.minimum(np.maximum(q + 1, 0), n1),
                    np.where(beta < 0, np.minimum(np.maximum(-q, 0), n1), np.where(room < 0, n1, 0)))
    last = np.asarray(b * (K - dL) + x * dL > capacity)
    return bk * body + dL * last.astype(object if body.dtype == object else np.int64)


# ------------------------------------------------------------------- beyond the budget: waves in classes
def _waves_at(M, N, bm, bn, G, P, wq: list, dt) -> _Waves:
    """The waves ``wq`` (indices, any order) of one tiling, with each one's ``f`` and its predecessor's."""
    tm, tn = -(-M // bm), -(-N // bn)
    T = tm * tn
    n = len(wq)

    def col(value):
        return np.full(n, value, dtype=np.int64) if dt is np.int64 else np.array([value] * n, dtype=object)

    w = np.array(wq, dtype=dt)
    BM, BN, Gc, Pc, TM, TN = col(bm), col(bn), col(G), col(P), col(tm), col(tn)
    s = w * Pc
    e = np.minimum(s + Pc, T)
    v = _Waves(bm=BM, bn=BN, g=Gc, p=Pc, tm=TM, tn=TN, A=Gc * TN, ng=col(-(-tm // G)), s=s, e=e,
               short_M=col(tm * bm - M), short_N=col(tn * bn - N), flat=np.arange(n, dtype=np.int64), wq=w)
    v.f = valid_elements(*wave_values(s, e, TM, TN, Gc), M, N, BM, BN, TM, TN)
    first = w == 0
    sp, ep = np.where(first, s, s - Pc), np.where(first, e, s)          # a first wave has none before it
    v.f_prev = valid_elements(*wave_values(sp, ep, TM, TN, Gc), M, N, BM, BN, TM, TN)
    return v


def _plan(tm: int, tn: int, G: int, P: int, budget: int) -> list:
    """:func:`symbolic.wave_classes.plan`, a plan beyond ``budget`` representatives refused naming the launch
    parameter that drives it."""
    from . import wave_classes
    try:
        return wave_classes.plan(tm, tn, G, P, budget=budget)
    except wave_classes.TooMuchWork as e:
        raise BadInput("P" if P >= G else "G_M",
                       f"counting by classes of waves takes at least {e.cost:,} representative waves here (G_M = "
                       f"{G:,}, P = {P:,}, each at most the launch's t_m and t_m t_n: the work grows with these, "
                       f"not with M, N, K), over the budget of "
                       f"{budget:,}; raise symbolic.gemm_lru.EXACT_WAVES_BUDGET, or use the exact bounds "
                       f"hbm_reads_fits <= LRU <= hbm_reads_no_reuse (model gemm.l2)") from None


def _representatives(M, N, bm, bn, G, P, runs, dt) -> tuple[_Waves, list[int]]:
    """The waves of a plan's runs (:func:`_waves_at`) and the multiplicity of each."""
    wq = [w0 + i for w0, n, _ in runs for i in range(n)]
    return _waves_at(M, N, bm, bn, G, P, wq, dt), [m for _, n, m in runs for _ in range(n)]


def lru_reads_by_classes(M: int, N: int, K: int, B_M: int, B_N: int, B_K: int, G_M: int, P: int, capacity: int,
                         budget: int | None = None) -> int:
    """:func:`lru_reads` for one tiling by :mod:`symbolic.wave_classes`: the reads of the no-reuse rule
    (:func:`~symbolic.gemm_waves.wave_reads`, closed form) less the K-steps at which a reuse across
    waves hits, summed over the classes' representative waves times their multiplicities.  Every chunk a
    wave requests for the first time in that wave is a first use or a reuse across waves; the no-reuse rule
    misses all of them at every step, the LRU misses the first uses and the reuses at the steps Lemma 3
    says (:func:`_missing_steps`), so the difference is the hits."""

    M, N, K, bm, bn, bk = (_pos(k, v) for k, v in (("M", M), ("N", N), ("K", K), ("B_M", B_M), ("B_N", B_N),
                                                   ("B_K", B_K)))
    G_M, P, capacity = _pos("G_M", G_M), _pos("P", P), _pos("capacity", capacity)
    budget = EXACT_WAVES_BUDGET if budget is None else _pos("budget", budget)
    if M * K + K * N <= capacity:                     # everything fits: each chunk fetched once
        return M * K + K * N
    tm, tn = -(-M // bm), -(-N // bn)
    T = tm * tn
    G, P = min(G_M, tm), min(P, T)
    runs = _plan(tm, tn, G, P, budget)
    v, mult = _representatives(M, N, bm, bn, G, P, runs, _dtype(M, N, K, T, P, capacity, bm + bn))
    f = v.f.tolist()
    foot = max(f) * min(bk, K)
    if foot > capacity:
        raise _below_footprint(capacity, foot, bm, bn, bk, G_M, P)
    no_reuse = wave_reads(M, N, K, bm, bn, G, P)
    if min(f) * (K - bk) > capacity:                   # nothing survives from one wave to the next
        return no_reuse
    pieces = _pieces(M, N, v)
    if not pieces:
        return no_reuse
    I, x, size, a, b, cnt = (np.concatenate([pc[i] for pc in pieces]) for i in range(6))
    hit = cnt * size * (K - _missing_steps(a, b, x, K, bk, capacity))
    hits = sum(h * mult[i] for h, i in zip(hit.tolist(), I.tolist()) if h)
    return no_reuse - hits
