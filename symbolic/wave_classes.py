"""The waves of a GEMM launch in classes of equal neighbourhood: a sum over ``10**50`` waves from a few thousand.

Setting: the ``GROUP_M`` launch order of :mod:`symbolic.models.gemm_l2` (``t_m x t_n`` tiles, groups of
``G`` tile rows, ``A = G t_n`` pids a group, the last group ``L = t_m - (n_g - 1) G`` rows) cut into
waves of ``P`` pids, wave ``w`` being the pids ``[w P, min(w P + P, T))``.  ``G`` is ``min(G_M, t_m)``:
a ``G_M`` beyond ``t_m`` gives the same order (one group).

A per-wave quantity ``phi(w)`` *of the neighbourhood* is one fixed by the launch order on the pids from
``A + 3P + 2G`` before the wave's start to ``A`` after its end, read relative to the wave's start, and by
the wave boundaries (multiples of ``P``) among them.  The LRU count's per-wave hits are one
(:mod:`symbolic.gemm_lru`: every reuse a wave sees reaches back to a pid of its own group, at most
``G + P`` before it, or of the group before, at most ``A + P`` before it; the ranges whose panels it
counts run from that pid's wave to the wave's end), and so is a wave's own footprint.  Three facts make
the sum over all waves short:

1. **A group later** (translation by ``A``): the order on full groups is the same in every group (group
   ``g``'s rows are group 0's plus ``g G``; the last column, the only partial one, sits at the same place).
   Two waves whose neighbourhoods lie in full groups and whose starts differ by a multiple of ``A`` that is
   also a multiple of ``P`` see the same thing.  Wave starts modulo ``A`` repeat with period
   ``A / gcd(A, P)`` waves.
2. **Inside a group** (a group's *middle*, starts ``o`` (group-local) with ``o >= 2G + 3P`` and
   ``o + P + 2G + 2P <= (t_n - 1) gs``, ``gs`` the group's rows): the neighbourhood meets neither the
   group's first or last column nor (for the reuse that reaches into the group before) that group's, so
   moving the start by ``gs P`` (``P`` columns further, a multiple of ``P``) changes nothing: ``phi(w) =
   phi(w + gs)``.  In the middle of a full group with a full group before it (or none), the start modulo
   ``G`` alone fixes the neighbourhood (the columns and the wave boundaries sit at the same offsets), in
   every such group alike.
3. **Group alignment**: a group ``g`` with full groups on both sides sees its own boundaries at offset
   ``g A mod P`` from the wave boundaries; groups with one ``g A mod P`` (a period of ``P / gcd(A, P)``
   groups) have the same zones (the waves that are not in the middle).

:func:`plan` returns *runs* ``(w0, n, m)``: the waves ``w0 .. w0 + n - 1`` each stand for ``m`` waves, and
every wave of the launch is stood for exactly once: ``sum_w phi(w) = sum over runs of m (phi(w0) + ..
+ phi(w0 + n - 1))``.  Two regimes: a small group (``A`` below :func:`big_group`) by fact 1 over the
whole launch (the first and last waves one by one); a big one group by group, facts 2 and 3 (the first,
the next-to-last and the last group one by one, their middles by period).  The work (the waves to
evaluate, ``sum n``) is at most about ``A / gcd(A, P) + 6 A / P`` in the first regime and ``P (4 G / P
+ 9) + 4 G`` in the second: it depends on ``G`` and ``P``, not on ``t_m``, ``t_n``, so a count at
``M = N = 10**30`` costs what one at ``M = N = 10**6`` does.  :mod:`tests.unit.test_wave_classes` sums a
neighbourhood quantity over every wave and over the plan, in both regimes, and compares.
"""

from __future__ import annotations

from math import gcd

from base import validate

__all__ = ["plan", "work", "big_group", "margins"]

_pos = validate.positive_int


def margins(G: int, P: int) -> tuple[int, int]:
    """``(start, end)``: a wave is in its group's middle when its group-local start ``o`` has ``o >= start``
    and ``o + P + end <= (t_n - 1) gs`` (fact 2)."""
    return 2 * G + 3 * P, 2 * G + 2 * P


def big_group(G: int, P: int) -> int:
    """The group size (pids) from which the launch is planned group by group (facts 2 and 3): every
    group then has a middle several waves long and a wave's neighbourhood meets at most three groups."""
    zs, ze = margins(G, P)
    return 4 * (zs + ze + 2 * P)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _periodic(w0: int, n: int, period: int, mult: int = 1) -> list[tuple[int, int, int]]:
    """Runs for the ``n`` waves from ``w0`` when ``phi`` repeats every ``period`` waves there."""
    if n <= 0:
        return []
    if n <= period:
        return [(w0, n, mult)]
    q, r = divmod(n, period)
    return [run for run in ((w0, r, mult * (q + 1)), (w0 + r, period - r, mult * q)) if run[1] > 0]


class TooMuchWork(Exception):
    """A plan would hold more representative waves than its budget (``cost``: at least that many)."""

    def __init__(self, cost: int):
        super().__init__(cost)
        self.cost = cost


def plan(t_m: int, t_n: int, G_M: int, P: int, budget: int | None = None) -> list[tuple[int, int, int]]:
    """Runs ``(w0, n, m)`` that stand for every wave of the launch once (module docstring).  With a
    ``budget``, a plan of more representative waves (``sum n``) raises :class:`TooMuchWork` before it is
    built (the work is known from a few divisions; nothing loops over more than the budget)."""
    tm, tn, G, P = _pos("t_m", t_m), _pos("t_n", t_n), _pos("G_M", G_M), _pos("P", P)
    G = min(G, tm)
    T = tm * tn
    P = min(P, T)
    W = _cdiv(T, P)
    A = G * tn
    ng = _cdiv(tm, G)
    budget = W if budget is None else budget
    if A < big_group(G, P):
        runs = _plan_small(A, ng, G, P, W)
    else:
        runs = _plan_big(tm, tn, A, ng, G, P, W, budget)
    runs = [run for run in runs if run[1] > 0]
    cost = sum(n for _, n, _ in runs)
    if cost > budget:
        raise TooMuchWork(cost)
    return runs


def work(t_m: int, t_n: int, G_M: int, P: int) -> int:
    """The waves :func:`plan`'s runs hold (what a count over them evaluates)."""
    return sum(n for _, n, _ in plan(t_m, t_n, G_M, P))


def _plan_small(A: int, ng: int, G: int, P: int, W: int) -> list[tuple[int, int, int]]:
    """Fact 1 over the launch: a wave whose neighbourhood lies in ``[0, (n_g - 1) A)`` (the full groups)
    has the wave ``A / gcd(A, P)`` later as its translate; the others are taken one by one."""
    back, ahead = A + 3 * P + 2 * G, A
    w_lo = _cdiv(back, P)                              # s - back >= 0
    w_hi = ((ng - 1) * A - P - ahead) // P + 1         # s + P + ahead <= (n_g - 1) A
    if w_hi - w_lo <= 0:
        return [(0, W, 1)]
    return [(0, w_lo, 1)] + _periodic(w_lo, w_hi - w_lo, A // gcd(A, P)) + [(w_hi, W - w_hi, 1)]


def _group_waves(g: int, A: int, size: int, P: int, W: int) -> tuple[int, int]:
    """The waves starting in group ``g`` (``size`` pids from ``g A``)."""
    return _cdiv(g * A, P), min(W, _cdiv(g * A + size, P))


def _middle(g: int, A: int, gs: int, tn: int, G: int, P: int, w0: int, w1: int) -> tuple[int, int]:
    """The middle waves ``[w_a, w_b)`` of group ``g`` (fact 2), inside its waves ``[w0, w1)``."""
    zs, ze = margins(G, P)
    w_a = min(w1, max(w0, _cdiv(g * A + zs, P)))
    w_b = max(w_a, min(w1, (g * A + (tn - 1) * gs - P - ze) // P + 1))
    return w_a, w_b


def _plan_big(tm: int, tn: int, A: int, ng: int, G: int, P: int, W: int, budget: int) -> list[tuple[int, int, int]]:
    """Group by group: the first, next-to-last and last groups each with their zones one by one and their
    middle by period ``gs`` (fact 2); the groups between by their alignment ``g A mod P`` (fact 3), their
    middles by the start modulo ``G`` (a wave's ``w mod G / gcd(G, P)``)."""
    L = tm - (ng - 1) * G
    runs: list[tuple[int, int, int]] = []
    for g in sorted({g for g in (0, ng - 2, ng - 1) if g >= 0}):
        gs = L if g == ng - 1 else G
        w0, w1 = _group_waves(g, A, gs * tn, P, W)
        w_a, w_b = _middle(g, A, gs, tn, G, P, w0, w1)
        runs += [(w0, w_a - w0, 1)] + _periodic(w_a, w_b - w_a, gs) + [(w_b, w1 - w_b, 1)]
    if ng < 4:
        return runs
    period = P // gcd(A, P)                            # of g A mod P, in groups
    classes = min(period, ng - 3)                      # groups 1 .. n_g - 3: full on both sides
    phases = G // gcd(G, P)                            # of w P mod G, in waves
    if classes > budget or phases > budget:            # every class has zone waves; the middles need each phase
        raise TooMuchWork(max(classes, phases))
    weight = [0] * (phases + 1)                        # middle waves per phase (a difference array)
    rep: list[int] = [0] * phases                      # a middle wave of each phase
    filled = False
    for c in range(classes):
        g = 1 + c
        count = (ng - 4 - c) // period + 1             # groups g, g + period, .. up to n_g - 3
        w0, w1 = _group_waves(g, A, A, P, W)
        w_a, w_b = _middle(g, A, G, tn, G, P, w0, w1)
        runs += [(w0, w_a - w0, count), (w_b, w1 - w_b, count)]
        n = w_b - w_a
        if n < phases:
            runs.append((w_a, n, count))
            continue
        q, r = divmod(n, phases)
        first = w_a % phases
        weight[0] += count * q
        weight[phases] -= count * q
        for lo, hi in ((first, min(phases, first + r)), (0, max(0, first + r - phases))):
            weight[lo] += count
            weight[hi] -= count
        if not filled:                                 # any class with a long middle has every phase
            for i in range(phases):
                rep[(first + i) % phases] = w_a + i
            filled = True
    total = 0
    for j in range(phases):
        total += weight[j]
        if total:
            runs.append((rep[j], 1, total))
    return runs
