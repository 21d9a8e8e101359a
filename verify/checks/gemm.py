"""GEMM checks: the tiled-traffic formulas, the per-block resources, the L2 launch-order formulas and
the launch rules, each against an independent side.

Points are named by the models' own parameters (``M, N, K, B_M, B_N, B_K``, ``s``, ``G_M``, ``P``);
keys only an executor reads are listed in a check's ``extra`` (the L2 checks' ``B_K`` and
``capacity_frac``, where the capacity sits inside the regime's range; the L2 properties take an
absolute ``capacity``).

* ``gemm.tiled`` - :mod:`symbolic.models.gemm` (reads, writes, useful and padded FLOPs) against the
  counting executor :func:`numeric.gemm.run_gemm` in shape-only mode, exactly, including sizes the
  tiles don't divide and tiles larger than the matrix (drawn points also vary the launch order
  ``G_M`` and the wave ``P``, which must change no count).
* ``gemm.resources`` - shared memory per stage, in all and in bytes against the operand ring the
  executor stages its tiles through (:func:`numeric.gemm.block_buffers`, FP16 as an FP16 kernel
  allocates it: sizes and ``nbytes`` of the NumPy arrays).  ``regs_per_thread`` is the course's
  estimate, with no executor counterpart; the ``gemm.launch`` property checks the rule built on it.
* ``gemm.cosma`` - ``fast_memory_tile`` against the elements of the block's buffers (the ring plus the
  accumulator).  The COSMA bound itself is a theorem (Kwasniewski et al., SC'19, Theorem 1); the
  tests check that no tiled schedule beats it.
* ``gemm.l2.fits`` - when A and B fit in the cache, the LRU simulator :mod:`numeric.l2cache` misses
  exactly ``hbm_reads_fits = M K + K N`` elements (model ``gemm.l2``).
* ``gemm.l2.no_reuse`` - for ``step_footprint <= capacity < reuse_floor`` it misses exactly
  ``hbm_reads_no_reuse``, the wave sum (evaluated in closed form; every wave fetches each panel it uses once).
* ``gemm.l2.bounds`` (a :class:`~verify.core.Property`) - for any ``capacity >= step_footprint``:
  ``hbm_reads_fits <= simulated <= hbm_reads_no_reuse``.
* ``gemm.l2.lru`` - the exact LRU count (model ``gemm.l2.lru``, :mod:`symbolic.gemm_lru`) equals the
  simulation, at the points where the old estimate broke its bound (:data:`L2_ESTIMATE_FAILURES`), the
  pinned points at the edges of their regimes, and adversarial draws (:func:`adversarial_l2_point`:
  capacities within 5 % of the footprints where LRU's decisions flip); ``python -m verify --l2-draws N
  --seed S`` runs N of them, ``tests/sweeps/test_gemm_l2_adversarial.py`` 20,000.
* ``gemm.l2.lru.classes`` (a Property) - the same count by classes of waves (:mod:`symbolic.wave_classes`,
  what answers beyond 16,384 waves) equals the simulation at points where the classes stand for more
  waves than they hold (:func:`classes_l2_point`: big groups, many small groups, ``G_M`` beyond ``t_m``).
* ``gemm.l2.time_model`` (a Property) - the time model's L2 figure
  (:func:`tuning.l2_estimate.hbm_reads_many`) is exact where it says so, an upper bound where it says so.
* ``gemm.launch`` (a Property) - :func:`tuning.schedule.launch_failures` against the rules computed
  here from first principles (bytes of shared memory, the warp tile against an ``m16n8`` mma,
  registers), over all 6000 configs.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from base.errors import BadInput
from numeric.gemm import block_buffers, run_gemm
from numeric.l2cache import simulate_l2
from symbolic.models import gemm_l2 as exact_l2
from symbolic.models.gemm import cosma, resources, tiled
from symbolic.models.gemm_l2 import l2, l2_lru
from tuning.l2_estimate import EXACT, UPPER_BOUND, hbm_reads_many
from tuning.schedule import SPACE, launch_failures

from ..core import Check, Property

__all__ = ["L2_POINTS", "L2_KEYS", "L2_ESTIMATE_FAILURES", "ADVERSARIAL_MAX_REQUESTS", "l2_capacity",
           "l2_simulated", "adversarial_l2_point", "independent_launch_reasons", "tiled_check", "resources_check",
           "cosma_check", "l2_fits", "l2_no_reuse", "l2_bounds", "l2_lru_check", "l2_lru_classes", "classes_l2_point",
           "l2_time_model", "launch"]


# ------------------------------------------------------------------------------------- tiled traffic
def _tiled_execute(p):
    return run_gemm(p["M"], p["N"], p["K"], p["B_M"], p["B_N"], p["B_K"], group=p.get("G_M", 1),
                    wave=p.get("P", 1), real=False).counts()


_TILED_EDGE = [  # (M, N, K, B_M, B_N, B_K): why
    (1, 1, 1, 1, 1, 1),           # everything 1
    (1, 1, 1, 256, 128, 64),      # tiles far larger than the matrix
    (16, 4096, 512, 16, 16, 64),  # decode-like: one tile row
    (100, 70, 33, 32, 16, 8),     # nothing divides
    (128, 128, 128, 32, 32, 32),  # everything divides
    (257, 129, 65, 128, 64, 32),  # one element past a multiple in each dimension
    (300, 1, 700, 16, 16, 128),   # a single column
    (1, 300, 700, 64, 16, 16),    # a single row
]
_TILED_FULL = [(m, n, k, bm, bn, bk) for m, n, k in ((512, 512, 512), (1000, 1000, 300), (2048, 256, 1024))
               for bm, bn, bk in ((128, 128, 32), (256, 128, 64), (64, 48, 16))]


def _tiled_grid(full):
    pts = _TILED_EDGE + (_TILED_FULL if full else [])
    return [dict(M=m, N=n, K=k, B_M=bm, B_N=bn, B_K=bk) for m, n, k, bm, bn, bk in pts]


def _tiled_points():
    """Hypothesis points for the traffic check (hypothesis is imported only when a sweep draws)."""
    from hypothesis import strategies as st

    @st.composite
    def draw_tiled(draw):
        M, N, K = draw(st.integers(1, 300)), draw(st.integers(1, 300)), draw(st.integers(1, 300))
        B_M = draw(st.integers(max(1, M // 12), M + 20))
        B_N = draw(st.integers(max(1, N // 12), N + 20))
        B_K = draw(st.integers(max(1, K // 12), K + 20))      # keeps a point under ~1,700 tile requests
        return dict(M=M, N=N, K=K, B_M=B_M, B_N=B_N, B_K=B_K, G_M=draw(st.sampled_from([1, 2, 4, 8])),
                    P=draw(st.integers(1, 20)))
    return draw_tiled()


tiled_check = Check(
    model=tiled, execute=_tiled_execute, grid=_tiled_grid,
    quantities=("reads", "writes", "flops", "flops_padded", "reads_A", "reads_B"),
    strategy=_tiled_points, draws=60, draws_full=300, extra=("G_M", "P"),
    size=lambda p: max(p["M"], p["N"], p["K"]),
    # the executor's budget unit (numeric.gemm.MAX_STEPS): one program x K-step iteration per tile row, column, step
    work=lambda p: -(-p["M"] // p["B_M"]) * -(-p["N"] // p["B_N"]) * -(-p["K"] // p["B_K"]),
    work_unit="program x K-step iterations",
    description="reads, writes, useful and padded FLOPs vs the tiled executor")


# ------------------------------------------------------------------------------------- resources
def _ring(p):
    return block_buffers(p["B_M"], p["B_N"], p["B_K"], p["s"])


def _resources_execute(p):
    b = _ring(p)
    return {"smem_stage": b["A"][0].size + b["B"][0].size, "smem_total": b["A"].size + b["B"].size,
            "smem_bytes": b["A"].nbytes + b["B"].nbytes}


def _cosma_execute(p):
    b = _ring(p)
    return {"fast_memory_tile": b["A"].size + b["B"].size + b["acc"].size}


_WARP_GRIDS = ((1, 1), (1, 2), (2, 2), (4, 2))


def _resources_grid(full):
    """Every (B_M, B_N, B_K, s) of the schedule space (the warp grid does not enter the shared memory),
    and a few sizes outside it (1, odd, larger)."""
    space = itertools.product(SPACE["B_M"], SPACE["B_N"], SPACE["B_K"], SPACE["s"])
    extra = [(1, 1, 1, 1), (3, 5, 7, 2), (512, 8, 256, 8)]
    for i, (bm, bn, bk, s) in enumerate(itertools.chain(extra, space)):
        w_y, w_x = _WARP_GRIDS[i % len(_WARP_GRIDS)]
        yield dict(B_M=bm, B_N=bn, B_K=bk, s=s, w_y=w_y, w_x=w_x)


def _cosma_grid(full):
    for p in _resources_grid(full):
        yield {k: p[k] for k in ("B_M", "B_N", "B_K", "s")}


def _resources_points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"B_M": st.integers(1, 512), "B_N": st.integers(1, 512), "B_K": st.integers(1, 256),
                                  "s": st.integers(1, 8), "w_y": st.sampled_from([1, 2, 4]),
                                  "w_x": st.sampled_from([1, 2, 4])})


def _cosma_points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"B_M": st.integers(1, 512), "B_N": st.integers(1, 512), "B_K": st.integers(1, 256),
                                  "s": st.integers(1, 8)})


def _ring_size(p):
    return p["s"] * (p["B_M"] + p["B_N"]) * p["B_K"]


resources_check = Check(
    model=resources, execute=_resources_execute, grid=_resources_grid,
    quantities=("smem_stage", "smem_total", "smem_bytes"), strategy=_resources_points, size=_ring_size,
    description="shared memory per stage / in all / bytes vs the FP16 operand ring the executor stages "
                "through (regs_per_thread: an estimate, no executor counterpart; see gemm.launch)")

cosma_check = Check(
    model=cosma, execute=_cosma_execute, grid=_cosma_grid, quantities=("fast_memory_tile",),
    strategy=_cosma_points, size=_ring_size,
    description="a block's fast memory vs the executor's operand ring plus accumulator")


# ------------------------------------------------------------------------------------- L2
def l2_simulated(p) -> int:
    """HBM reads of the LRU simulator at an L2 point (model keys plus ``B_K`` and ``capacity``)."""
    return simulate_l2(p["M"], p["N"], p["K"], p["B_M"], p["B_N"], p["B_K"], p["G_M"], p["P"], p["capacity"]).hbm_reads


def _l2_args(p):
    return {k: p[k] for k in ("M", "N", "K", "B_M", "B_N", "G_M", "P")}


#: pinned L2 points (capacity filled in per regime): (M, N, K, B_M, B_N, B_K, G_M, P)
L2_POINTS = [
    (64, 64, 64, 16, 16, 16, 1, 4),
    (100, 70, 90, 16, 8, 8, 4, 6),
    (128, 512, 256, 32, 16, 32, 1, 16),     # row-major: a wave spans one tile row
    (128, 512, 256, 32, 16, 32, 4, 16),     # grouped: the same wave covers 4 rows x 4 columns
    (200, 200, 160, 16, 16, 16, 8, 13),
    (37, 301, 99, 8, 32, 16, 2, 5),
    (256, 64, 300, 32, 8, 32, 8, 3),
]
L2_KEYS = ("M", "N", "K", "B_M", "B_N", "B_K", "G_M", "P")

#: points where the old lookback estimate broke its stated 3x (issue 10), with the LRU's reads:
#: (M, N, K, B_M, B_N, B_K, G_M, P, capacity) -> simulated HBM reads
L2_ESTIMATE_FAILURES = {
    (1936, 784, 128, 32, 128, 64, 1, 15, 111_296): 348_160,    # all of B stays: exactly M K + K N (9.35x)
    (109, 132, 26, 16, 32, 16, 1, 5, 3_851): 26_234,           # worst of `verify --l2-draws 4000 --seed 1` (4.19x)
    (144, 70, 126, 32, 4, 16, 4, 4, 16_650): 230_732,          # worst of `--seed 2` (6.45x)
}


def l2_capacity(p, regime, u):
    """A capacity inside ``regime`` (``"fits"``, ``"no_reuse"`` or ``"between"``) at fraction ``u`` of
    its range (``None`` if the range is empty)."""
    sf = exact_l2.step_footprint(p["M"], p["N"], p["B_M"], p["B_N"], p["B_K"], p["G_M"], p["P"])
    comp = exact_l2.compulsory_reads(p["M"], p["N"], p["K"])
    if regime == "fits":
        return comp + int(u * comp)
    if regime == "no_reuse":
        rf = exact_l2.reuse_floor(p["M"], p["N"], p["K"], p["B_M"], p["B_N"], p["B_K"], p["G_M"], p["P"])
        return sf + int(u * (rf - 1 - sf)) if rf > sf else None
    hi = max(sf, comp)
    return sf + int(u * (hi - sf))


def _l2_grid(regime):
    def grid(full):
        out = []
        for t in L2_POINTS:
            p = dict(zip(L2_KEYS, t))
            cap = l2_capacity(p, regime, 0.5)
            if cap is not None:
                out.append(dict(p, capacity=cap))
        return out
    return grid


def _l2_points(regime):
    """Hypothesis points for the L2 checks in ``regime`` (imported only when a sweep draws)."""
    from hypothesis import strategies as st

    from symbolic.gemm_lru import max_wave_elements, min_wave_elements

    @st.composite
    def draw_l2(draw):
        while True:
            p = dict(M=draw(st.integers(1, 160)), N=draw(st.integers(1, 160)),
                     B_M=draw(st.sampled_from([4, 8, 16, 32])), B_N=draw(st.sampled_from([4, 8, 16, 32])),
                     B_K=draw(st.sampled_from([8, 16, 32])), G_M=draw(st.sampled_from([1, 2, 4, 8])),
                     P=draw(st.integers(1, 24)))
            # K last, from where the regime is not empty: no reuse needs reuse_floor > step_footprint, that is
            # (t_k - 2) min_wave > max_wave (per unit depth), so t_k >= 3 + max_wave // min_wave.  Drawing K
            # blind and redrawing until that held cost hypothesis about 20 ms a point (20 redraws).
            least = 1
            if regime == "no_reuse":
                args = (p["M"], p["N"], p["B_M"], p["B_N"], p["G_M"], p["P"])
                least = (2 + max_wave_elements(*args) // min_wave_elements(*args)) * p["B_K"] + 1
                if least > 200:
                    continue
            p["K"] = draw(st.integers(least, 200))
            cap = l2_capacity(p, regime, draw(st.floats(0, 1)))
            if cap is not None:
                return dict(p, capacity=cap)
    return draw_l2()


def _l2_size(p):
    return p["capacity"]


# The two exact regimes are ranges of capacity that depend on the point (M K + K N and up; from
# step_footprint to below reuse_floor), so their checks place the capacity inside the range instead
# of fixing it: the executor-only key ``capacity_frac`` (0 = the range's low end, 1 = its high end)
# gives ``l2_capacity``.  A plot of gemm.l2 then runs the simulator inside the regime at every point
# it draws; where the no-reuse range is empty the executor refuses the point (BadInput).
def _in_regime(regime, quantity):
    def execute(p):
        cap = l2_capacity(p, regime, Fraction(p["capacity_frac"]))
        if cap is None:
            raise BadInput("capacity_frac", "no capacity lies in the no-reuse range here "
                                            "(reuse_floor <= step_footprint: fewer than 3 K-steps)")
        return {quantity: l2_simulated(dict(p, capacity=cap))}
    return execute


def _regime_grid(regime):
    def grid(full):
        return [{k: v for k, v in p.items() if k != "capacity"} | {"capacity_frac": Fraction(1, 2)}
                for p in _l2_grid(regime)(full)]
    return grid


#: drawn no-reuse points have at most this many waves (the simulator's work grows with them)
_MAX_DRAWN_WAVES = 300


def _waves(p):
    tiles = -(-p["M"] // p["B_M"]) * -(-p["N"] // p["B_N"])
    return -(-tiles // p["P"])


def _regime_points(regime):
    from hypothesis import strategies as st

    @st.composite
    def draw(draw):
        while True:
            p = draw(_l2_points(regime))
            if regime != "no_reuse" or _waves(p) <= _MAX_DRAWN_WAVES:
                break
        frac = Fraction(draw(st.integers(0, 1000)), 1000)
        return {k: v for k, v in p.items() if k != "capacity"} | {"capacity_frac": frac}
    return draw()


def _sizes(p):
    return p["M"] * p["K"] + p["K"] * p["N"]


def l2_requests(p) -> int:
    """The LRU simulation's work at ``p``: the tile requests it replays, one A and one B tile per program and
    K-step (``2 t_m t_n t_k``), the unit the simulator's own budget counts (``numeric.l2cache``)."""
    return 2 * -(-p["M"] // p["B_M"]) * -(-p["N"] // p["B_N"]) * -(-p["K"] // p["B_K"])


l2_fits = Check(
    model=l2, name="gemm.l2.fits", quantities=("hbm_reads_fits",),
    execute=_in_regime("fits", "hbm_reads_fits"), grid=_regime_grid("fits"),
    strategy=lambda: _regime_points("fits"), draws=30, draws_full=150, extra=("B_K", "capacity_frac"),
    size=_sizes, work=l2_requests, work_unit="tile requests",
    description="LRU misses == M K + K N when A and B fit (capacity M K + K N and up)")

l2_no_reuse = Check(
    model=l2, name="gemm.l2.no_reuse", quantities=("hbm_reads_no_reuse",),
    execute=_in_regime("no_reuse", "hbm_reads_no_reuse"), grid=_regime_grid("no_reuse"),
    strategy=lambda: _regime_points("no_reuse"), draws=30, draws_full=150, extra=("B_K", "capacity_frac"),
    size=_sizes, work=l2_requests, work_unit="tile requests",
    description="LRU misses == the wave sum (closed form) for step_footprint <= capacity < reuse_floor")


def _bounds_hold(p):
    lo = l2.evaluate("hbm_reads_fits", **_l2_args(p))
    hi = l2.evaluate("hbm_reads_no_reuse", **_l2_args(p))
    v = l2_simulated(p)
    if lo <= v <= hi:
        return None
    return f"simulated {v} outside [hbm_reads_fits {lo}, hbm_reads_no_reuse {hi}]"


l2_bounds = Property(
    name="gemm.l2.bounds", model=l2, holds=_bounds_hold, grid=_l2_grid("between"),
    strategy=lambda: _l2_points("between"), draws=30, draws_full=150, size=_l2_size,
    description="hbm_reads_fits <= LRU misses <= hbm_reads_no_reuse for capacity >= step_footprint")


# --- the exact LRU count (model gemm.l2.lru) against the simulator, near the capacity edge
def _lru_execute(p):
    return {"hbm_reads_lru": l2_simulated(p)}


def _f_range(p, a, b) -> int:
    """Valid elements per unit depth of the rows and columns the pids ``[a, b)`` touch (a capacity target)."""
    tm, tn = -(-p["M"] // p["B_M"]), -(-p["N"] // p["B_N"])
    T = tm * tn
    a, b = max(0, min(a, T - 1)), max(1, min(b, T))
    if b <= a:
        b = a + 1
    r, c, lr, lc = exact_l2.wave_values(a, b, tm, tn, p["G_M"], ops=_IntOps)
    return int(exact_l2.valid_elements(r, c, lr, lc, p["M"], p["N"], p["B_M"], p["B_N"], tm, tn))


class _IntOps:
    """:func:`symbolic.models.gemm_l2.wave_values` on plain Python ints."""
    minimum = staticmethod(min)
    where = staticmethod(lambda c, a, b: a if c else b)
    eq = staticmethod(lambda a, b: a == b)
    ge = staticmethod(lambda a, b: a >= b)
    lt = staticmethod(lambda a, b: a < b)
    and_ = staticmethod(lambda a, b: a and b)
    or_ = staticmethod(lambda a, b: a or b)
    not_ = staticmethod(lambda a: not a)
    mod = staticmethod(lambda a, b: a % b)


#: the largest simulation a drawn adversarial point may need (tile requests)
ADVERSARIAL_MAX_REQUESTS = 6000


def adversarial_l2_point(rng) -> dict:
    """One point of the adversarial sweep (``rng``: a ``random.Random``): few K-steps, ``G_M`` in
    {1, 2, 4, 8}, ``P`` from 1 to 264, tiles that divide nothing, and a capacity within +-5 % of a
    footprint where the LRU's decisions flip - one step (from above), one wave's or a few waves' panels
    over ``K``, a group's, ``M K + K N``, the reuse floor - never below one step's footprint (the exact
    count's domain).  Simulations stay under :data:`ADVERSARIAL_MAX_REQUESTS` requests."""
    while True:
        B_M, B_N = rng.choice([1, 2, 3, 4, 5, 8, 16, 32, 64]), rng.choice([1, 2, 3, 4, 7, 8, 16, 32, 64])
        B_K = rng.choice([1, 2, 4, 8, 16, 32, 64])
        M, N = rng.randint(1, 16 * B_M), rng.randint(1, 16 * B_N)
        K = rng.choice([rng.randint(1, 3 * B_K), rng.randint(1, 8 * B_K), rng.randint(1, 300)])   # few K-steps
        G_M = rng.choice([1, 2, 4, 8])
        P = rng.choice([rng.randint(1, 8), rng.randint(1, 40), rng.randint(1, 264)])
        tm, tn, tk = -(-M // B_M), -(-N // B_N), -(-K // B_K)
        if 2 * tm * tn * tk <= ADVERSARIAL_MAX_REQUESTS:
            break
    return _near_a_flip(rng, dict(M=M, N=N, K=K, B_M=B_M, B_N=B_N, B_K=B_K, G_M=G_M, P=P))


def _near_a_flip(rng, p) -> dict:
    """``p`` with a capacity within +-5 % of a footprint where the LRU's decisions flip (never below one
    step's footprint)."""
    M, N, K, B_M, B_N, B_K, G_M, P = (p[k] for k in L2_KEYS)
    tm, tn = -(-M // B_M), -(-N // B_N)
    T = tm * tn
    sf = exact_l2.step_footprint(M, N, B_M, B_N, B_K, G_M, P) * min(B_K, K) // B_K
    w = rng.randrange(-(-T // P))
    depth = rng.choice([K, K - min(B_K, K), max(1, K - 2 * B_K)])
    targets = [sf, M * K + K * N,
               depth * _f_range(p, w * P, (w + 1) * P),                     # one wave
               depth * _f_range(p, w * P, (w + rng.randint(2, 4)) * P),     # a few waves
               depth * _f_range(p, w * P, w * P + G_M * tn),                # a group
               exact_l2.reuse_floor(M, N, K, B_M, B_N, B_K, G_M, P)]
    cap = int(rng.choice(targets) * (1 + rng.uniform(-0.05, 0.05)))
    return dict(p, capacity=max(cap, sf))


def lru_grid(full):
    """The points of ``gemm.l2.lru``: issue 10's failures, each pinned tiling at its regimes' edges (``full``: 300 adversarial more)."""
    pts = [dict(zip(L2_KEYS + ("capacity",), t)) for t in L2_ESTIMATE_FAILURES]
    for t in L2_POINTS:                              # each pinned point at the edges of its regimes
        p = dict(zip(L2_KEYS, t))
        for regime, u in (("between", 0.0), ("between", 0.5), ("between", 1.0), ("fits", 0.0), ("no_reuse", 1.0)):
            cap = l2_capacity(p, regime, u)
            if cap is not None:
                pts.append(dict(p, capacity=cap))
    if full:
        import random
        rng = random.Random(0)
        pts += [adversarial_l2_point(rng) for _ in range(300)]
    return pts


def _seeded(point):
    """A hypothesis strategy of ``point(random.Random(seed))`` over drawn seeds (shrinks to small seeds)."""
    def strategy():
        import random

        from hypothesis import strategies as st
        return st.integers(0, 2 ** 32).map(lambda seed: point(random.Random(seed)))
    return strategy


l2_lru_check = Check(
    model=l2_lru, name="gemm.l2.lru", quantities=("hbm_reads_lru",), execute=_lru_execute, grid=lru_grid,
    strategy=_seeded(adversarial_l2_point), draws=60, draws_full=400, size=_l2_size,
    work=l2_requests, work_unit="tile requests",
    description="the exact LRU count == the LRU simulation, at capacities within 5% of the footprints where "
                "its decisions flip (tests/sweeps/test_gemm_l2_adversarial.py: 20,000 points)")


# --- the LRU count by classes of waves (what answers beyond 16,384 waves) against the simulator
def classes_l2_point(rng) -> dict:
    """A point whose plan by classes (:mod:`symbolic.wave_classes`) is shorter than its waves, so the
    classes really stand for waves: big groups (a group's middle several waves long: facts 2 and 3) or
    many small groups (fact 1), at least four groups, ``G_M`` beyond ``t_m`` now and then; tiles that
    divide nothing; a capacity near a flip as in :func:`adversarial_l2_point`.  The simulation stays under
    :data:`ADVERSARIAL_MAX_REQUESTS` requests."""
    from symbolic import wave_classes
    while True:
        G_M, P = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 5, 7])
        B_M, B_N, B_K = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 4])
        if rng.random() < 0.5:                       # big groups
            tn = -(-wave_classes.big_group(G_M, P) // G_M) + rng.randint(0, 40)
            tm = G_M * rng.randint(4, 7) - rng.randint(0, G_M - 1)
        else:                                        # small groups, many of them
            tn, tm = rng.randint(1, 8), rng.randint(30, 200)
            G_M = G_M if rng.random() < 0.9 else tm + rng.randint(0, 5)
        K = rng.randint(1, 3 * B_K)
        T, tk = tm * tn, -(-K // B_K)
        if 2 * T * tk <= ADVERSARIAL_MAX_REQUESTS and wave_classes.work(tm, tn, G_M, P) < -(-T // min(P, T)):
            break
    p = dict(M=tm * B_M - rng.randint(0, B_M - 1), N=tn * B_N - rng.randint(0, B_N - 1), K=K, B_M=B_M, B_N=B_N,
             B_K=B_K, G_M=G_M, P=P)
    return _near_a_flip(rng, p)


def _classes_holds(p):
    from symbolic import gemm_lru
    got = gemm_lru.lru_reads(*(p[k] for k in L2_KEYS), p["capacity"], method="classes")
    want = l2_simulated(p)
    return None if got == want else f"by classes {got} != simulated {want}"


def _classes_grid(full):
    import random
    rng = random.Random(2026)
    return [classes_l2_point(rng) for _ in range(40 if full else 12)]


l2_lru_classes = Property(
    name="gemm.l2.lru.classes", model=l2_lru, holds=_classes_holds, grid=_classes_grid,
    strategy=_seeded(classes_l2_point), draws=40, draws_full=300, size=_l2_size,
    description="the exact LRU count by classes of waves (what answers beyond 16,384 waves: symbolic.wave_classes) "
                "== the LRU simulation, at points where the classes stand for more waves than they hold")


def _time_model_holds(p):
    """The time model's L2 figure is what it says: exact (== the simulation) or an upper bound (>=)."""
    (v,), (kind,) = hbm_reads_many(p["M"], p["N"], p["K"], [p["B_M"]], [p["B_N"]], [p["B_K"]], [p["G_M"]], [p["P"]],
                                   p["capacity"], kinds=True)
    sim = l2_simulated(p)
    if kind == EXACT and v == sim or kind == UPPER_BOUND and v >= sim:
        return None
    return f"time model's reads {v} ({kind}) vs simulated {sim}"


l2_time_model = Property(
    name="gemm.l2.time_model", model=l2_lru, holds=_time_model_holds, grid=lru_grid,
    strategy=_seeded(adversarial_l2_point), draws=30, draws_full=150, size=_l2_size,
    description="tuning.l2_estimate.hbm_reads_many: each figure exact (== LRU) or the upper bound it says it is")


# ------------------------------------------------------------------------------------- launch rules
_WARP_LAYOUT = {1: (1, 1), 2: (1, 2), 4: (2, 2), 8: (4, 2)}   # (rows, columns) of warps


def independent_launch_reasons(B_M, B_N, B_K, warps, s, G_M) -> list[str]:
    """The rules from first principles: FP16 operand stages in 227 KiB; each warp's share at least one
    m16n8 mma; FP32 accumulators spread over a warp's 32 threads plus 40 registers, at most 255.
    ``warps`` is the block's total, laid out as ``w_y x w_x`` (rows x columns of warps)."""
    w_y, w_x = _WARP_LAYOUT[warps]
    out = []
    smem = 0
    for _ in range(s):
        smem += B_M * B_K * 2 + B_K * B_N * 2      # an A tile and a B tile per stage
    if smem > 227 * 1024:
        out.append("smem")
    if B_M < 16 * w_y or B_N < 8 * w_x:
        out.append("mma")
    accumulators = (B_M * B_N) // (w_y * w_x)
    if -(-accumulators // 32) + 40 > 255:
        out.append("regs")
    return out


def _launch_grid(full):
    """Every config of the schedule space, keyed by the models' parameter names (the schedule's own keys)."""
    return [dict(zip(SPACE, t)) for t in itertools.product(*SPACE.values())]


def _launch_holds(p):
    got, want = launch_failures(p), independent_launch_reasons(**p)     # by name: one dialect on both sides
    if got == want:
        return None
    return f"launch rules {got} != first principles {want}"


launch = Property(
    name="gemm.launch", holds=_launch_holds, grid=_launch_grid, size=lambda p: p["B_M"],
    description="tuning.schedule's launch rules vs first principles, all 6000 configs")
