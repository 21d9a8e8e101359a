"""``python -m verify.gemm [--draws N] [--seed S]``: the worst ratio of the time model's L2 estimate
(:func:`tuning.l2_estimate.hbm_reads`) to the LRU simulation (:mod:`numeric.l2cache`).

The checks themselves live in :mod:`verify.checks.gemm` (``python -m verify --model gemm`` runs them);
this module reports how close the estimate comes, over the pinned L2 points in all three regimes at a
spread of capacities (worst ratio about 1.2), and over ``N`` random points between the exact regimes
(200 points from seed 0: about 2.1).
"""

from __future__ import annotations

import itertools

from tuning.l2_estimate import ESTIMATE_FACTOR

from .checks.gemm import L2_KEYS, L2_POINTS, l2_capacity, l2_ratio

__all__ = ["ESTIMATE_FACTOR", "l2_worst_ratio", "random_l2_points", "main"]


def l2_worst_ratio(points=None) -> tuple[float, dict]:
    """Worst ``max(estimate/simulated, simulated/estimate)`` of the estimate over ``points`` (default:
    the pinned points in all three regimes and a spread of capacities), and the point where it occurs."""
    if points is None:
        points = []
        for t in L2_POINTS:
            p = dict(zip(L2_KEYS, t))
            for regime, u in itertools.product(("fits", "no_reuse", "between"), (0.0, 0.3, 0.7, 1.0)):
                cap = l2_capacity(p, regime, u)
                if cap is not None:
                    points.append(dict(p, capacity=cap))
    worst, at = 1.0, {}
    for p in points:
        r = l2_ratio(p)[2]
        if r > worst:
            worst, at = r, p
    return worst, at


def random_l2_points(n: int, seed: int) -> list[dict]:
    """``n`` points between the exact regimes (as the ``gemm.l2.estimate`` property draws them), from ``seed``."""
    import random
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        M, N, K = rng.randint(1, 160), rng.randint(1, 160), rng.randint(1, 200)
        p = dict(M=M, N=N, K=K, B_M=rng.choice([4, 8, 16, 32]), B_N=rng.choice([4, 8, 16, 32]),
                 B_K=rng.choice([8, 16, 32]), G_M=rng.choice([1, 2, 4, 8]), P=rng.randint(1, 24))
        out.append(dict(p, capacity=l2_capacity(p, "between", rng.random())))
    return out


def main(argv=None) -> int:
    """``python -m verify.gemm [--draws N] [--seed S]``: the worst ratio of the time model's L2 estimate to
    the LRU simulation, over the pinned points and ``N`` random points between the exact regimes."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m verify.gemm", description=main.__doc__)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.draws < 0:
        ap.error(f"--draws: must be >= 0, got {args.draws}")
    worst, at = l2_worst_ratio()
    print(f"L2 estimate vs LRU, pinned points: worst ratio {worst:.3f} at {at}")
    worst, at = l2_worst_ratio(random_l2_points(args.draws, args.seed))
    print(f"L2 estimate vs LRU, {args.draws} random points (seed {args.seed}): worst ratio {worst:.3f} at {at}")
    print(f"stated bound (checked by gemm.l2.estimate): {ESTIMATE_FACTOR}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
