"""The L2 report of ``python -m verify --l2-draws N [--seed S] [--l2-shapes]``: the exact LRU count of the
GEMM's launch order (model ``gemm.l2.lru``, :mod:`symbolic.gemm_lru`) against the LRU simulation
(:mod:`numeric.l2cache`), beyond the checks' own sweep.

It prints what it measures:

1. the pinned points - where the old lookback estimate broke its stated 3x (issue 10) and the pinned
   tilings at the edges of their capacity regimes - agreeing / checked;
2. ``N`` adversarial points from seed ``S`` (:func:`verify.checks.gemm.adversarial_l2_point`: few K-steps,
   ``G_M`` in {1, 2, 4, 8}, ``P`` from 1 to 264, capacities within 5 % of the footprints where LRU's
   decisions flip): agreeing / checked, the first disagreements, and how far the LRU sits from both
   exact bounds (the share of points strictly between them, where neither bound is the answer);
3. with ``--l2-shapes``, the course's real shapes at 50 MB (25,000,000 FP16 elements) for a few configs
   each, with ``P`` = 132 SMs x the co-resident blocks the time model gives them (seconds);
4. the time model's L2 figures over the lecture-13 shapes: how many are exact and how many the stated
   upper bound (:func:`tuning.l2_estimate.hbm_reads_many`).

The checks themselves live in :mod:`verify.checks.gemm` (``python -m verify --model gemm`` runs them);
``tests/sweeps/test_gemm_l2_adversarial.py`` runs 20,000 adversarial points.  :func:`l2_report` returns 1
when any point disagrees.  (``python -m verify.gemm`` was this report's own program; it now says where
the report went.)
"""

from __future__ import annotations

import random
import sys
import time

from base.console import progress
from base.errors import BadInput
from numeric.l2cache import simulate_l2
from symbolic.models.gemm_l2 import compulsory_reads, l2_lru, wave_reads

from .checks.gemm import L2_KEYS, adversarial_l2_point, lru_grid

__all__ = ["REAL_SHAPES", "CAPACITY_50MB", "MAX_DRAWS", "compare", "real_shape_points", "l2_report"]

#: the course's shapes (lecture 13) and the configs the exact count is checked at there:
#: (M, N, K) -> [(B_M, B_N, B_K, G_M, P)]
REAL_SHAPES = {
    (4096, 4096, 4096): [(256, 128, 32, 1, 132), (128, 256, 128, 8, 132), (256, 128, 128, 4, 132),
                         (128, 128, 128, 8, 264), (64, 64, 64, 4, 528)],
    (16, 4096, 4096): [(16, 16, 64, 1, 1056), (16, 32, 32, 1, 1056)],
    (8192, 8192, 4096): [(256, 128, 32, 1, 132), (256, 128, 128, 8, 132), (128, 256, 128, 4, 132)],
}
CAPACITY_50MB = 25_000_000
#: the most adversarial points one report draws (about 2 ms each: a few minutes; the sweep test runs 20,000)
MAX_DRAWS = 100_000


def compare(p: dict) -> tuple[int, int]:
    """``(exact count, simulated)`` at a point (model keys and ``capacity``)."""
    exact = l2_lru.evaluate("hbm_reads_lru", **p)
    sim = simulate_l2(*(p[k] for k in L2_KEYS), p["capacity"]).hbm_reads
    return exact, sim


def real_shape_points() -> list[dict]:
    return [dict(zip(L2_KEYS, (M, N, K) + cfg), capacity=CAPACITY_50MB)
            for (M, N, K), cfgs in REAL_SHAPES.items() for cfg in cfgs]


def _run(points, label, out) -> int:
    bad, between, t0 = [], 0, time.perf_counter()
    with progress(len(points), label.split(" (")[0], unit="point") as shown:
        for p in points:
            exact, sim = compare(p)
            if exact != sim:
                bad.append((p, exact, sim))
            args = {k: p[k] for k in ("M", "N", "K", "B_M", "B_N", "G_M", "P")}
            if compulsory_reads(p["M"], p["N"], p["K"]) < sim < wave_reads(**args):
                between += 1
            shown.advance()
    dt = time.perf_counter() - t0
    out(f"{label}: exact LRU count == simulation at {len(points) - len(bad):,} of {len(points):,} points "
        f"({between:,} strictly between the two exact bounds; {dt:.1f} s)")
    for p, exact, sim in bad[:5]:
        out(f"  DISAGREES at {p}: exact {exact:,} vs simulated {sim:,}")
    return len(bad)


def _time_model_kinds(out) -> None:
    import numpy as np

    from tuning import schedule
    from tuning.l2_estimate import EXACT, hbm_reads_many

    cols = schedule.config_table()
    k = schedule.H100_TC
    ok = schedule.launchable(cols, k.hw)
    cols = {key: v[ok] for key, v in cols.items()}
    b = schedule.blocks_per_sm(cols, k)
    for M, N, K in ((4096, 4096, 4096), (512, 14336, 4096), (2048, 2048, 512), (16, 4096, 4096), (8192, 8192, 4096)):
        tiles = -(-M // cols["B_M"]) * -(-N // cols["B_N"])
        wave = np.minimum(b * k.hw.sms, tiles)
        t = np.unique(np.stack([cols["B_M"], cols["B_N"], cols["B_K"], cols["G_M"], wave]), axis=1)
        _, kinds = hbm_reads_many(M, N, K, *t, k.l2_bytes // 2, kinds=True)
        n_exact = sum(x == EXACT for x in kinds)
        out(f"  {M}x{N}x{K}: {t.shape[1]} distinct L2 tilings, {n_exact} exact, {len(kinds) - n_exact} upper bound")


def l2_report(draws: int = 500, seed: int = 0, shapes: bool = False, out=print) -> int:
    """The exact LRU count against the LRU simulation at the pinned points, ``draws`` adversarial points
    from ``seed`` and (``shapes``) the course's real shapes, then the time model's L2 figures; ``out``
    takes each line.  Returns 1 when any point disagrees, else 0.  ``BadInput`` naming ``draws`` beyond
    0 .. :data:`MAX_DRAWS`."""
    if isinstance(draws, bool) or not isinstance(draws, int) or not 0 <= draws <= MAX_DRAWS:
        raise BadInput("draws", f"adversarial points: an integer from 0 to {MAX_DRAWS:,}, got {draws!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BadInput("seed", f"must be an integer, got {seed!r}")
    bad = _run(lru_grid(False), "pinned points (issue 10's failures, regime edges)", out)
    rng = random.Random(seed)
    bad += _run([adversarial_l2_point(rng) for _ in range(draws)],
                f"{draws:,} adversarial points (seed {seed})", out)
    if shapes:
        bad += _run(real_shape_points(), "the course's shapes at 50 MB", out)
    out("time model's L2 figures (tuning.l2_estimate.hbm_reads_many), lecture-13 shapes at 50 MB:")
    _time_model_kinds(out)
    out("no disagreement" if not bad else f"{bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":      # the report's old program: say where it went (exit 2, as for bad usage)
    sys.stderr.write("verify.gemm: moved: run python -m verify --l2-draws N [--seed S] [--l2-shapes]\n")
    raise SystemExit(2)
