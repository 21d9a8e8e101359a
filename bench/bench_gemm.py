"""GEMM performance, measured side by side in one run (ratios, not absolute limits).

1. The time model over the whole space (6000 configs, one vectorised pass, uncached) vs one config at
   a time through the same model.                                  Target: vectorised >= 50x faster.
   And its price with the exact LRU count vs with the estimate it replaced (the lookback of issue 10,
   frozen in ``bench/baseline_l2_lookback.py``), all 6000 configs of each lecture shape, interleaved
   runs, best of each: at the exact shape (every cache the count keeps cleared before each run) and at
   ``M + 1 + run`` (fresh shapes, whose extra tile row changes the launch's waves: both are shown, since
   they differ, e.g. at 8192 x 8192 x 4096).                       Target: ratio <= 2 (issue 10).
2. The tiled executor in real mode vs plain ``A @ B`` (1024^3, 128 x 128 x 32 tiles) and shape-only
   mode vs real mode on the same problem.
3. The exact traffic formula (compiled) vs the shape-only executor on the same point.
4. The exact LRU count (``symbolic.gemm_lru.lru_reads``) vs the LRU simulator on the same point.
5. The lecture-13 script through the course adapters (wall seconds; the course says about 3 s).

Run: ``python bench/bench_gemm.py [--repeat 3] [--no-script]``.  Each figure is the best of ``repeat`` runs.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from numeric.gemm import run_gemm  # noqa: E402
from numeric.l2cache import simulate_l2  # noqa: E402
import baseline_l2_lookback  # noqa: E402  (bench/ is on sys.path when a script runs)
from symbolic import gemm_lru  # noqa: E402
from symbolic.models import gemm_l2  # noqa: E402
from symbolic.models.gemm import gemm_traffic  # noqa: E402
from tuning import schedule  # noqa: E402
from timing import best  # noqa: E402

#: the lecture-13 shapes and the bigger square the course also names
L2_SHAPES = [(4096, 4096, 4096), (512, 14336, 4096), (2048, 2048, 512), (16, 4096, 4096), (8192, 8192, 4096)]


def _baseline_reads(M, N, K, bm, bn, bk, group, wave, cap):
    """The time model's L2 call answered by the old lookback estimate (per (B_M, B_N, GROUP_M, P), as it was)."""
    tilings, which = np.unique(np.stack([bm, bn, group, wave]), axis=1, return_inverse=True)
    v = baseline_l2_lookback.hbm_reads_many(M, N, K, *tilings, cap)
    return [v[i] for i in which.ravel()]


def time_model_ratio(shape, repeat: int, fresh: bool = False) -> tuple[float, float]:
    """Best seconds to price all 6000 configs of ``shape`` with the exact L2 count and with the baseline
    estimate, runs interleaved, the caches of both cleared before each run; ``fresh``: at ``M + 1 + run``
    instead of the shape itself."""
    exact_fn, cfgs = schedule.hbm_reads_many, schedule.all_configs()
    M, N, K = shape
    times = {"exact": float("inf"), "baseline": float("inf")}
    try:
        for r in range(repeat):
            for name, fn in (("baseline", _baseline_reads), ("exact", exact_fn)):
                schedule.hbm_reads_many = fn
                gemm_l2.panel_sums.cache_clear()
                baseline_l2_lookback.adjacent_reuse.cache_clear()
                t0 = time.perf_counter()
                schedule.times_for_shape(M + 1 + r if fresh else M, N, K, configs=cfgs)
                times[name] = min(times[name], time.perf_counter() - t0)
    finally:
        schedule.hbm_reads_many = exact_fn
    return times["exact"], times["baseline"]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-script", action="store_true", help="skip the lecture-13 script timing")
    args = ap.parse_args(argv)
    r = args.repeat

    # 1. vectorised model vs one config at a time
    cfgs = schedule.all_configs()
    shapes = itertools.count(3000)               # fresh shapes: no cache answers
    t_vec = best(lambda: schedule.times_for_shape(next(shapes), 4096, 4096, configs=cfgs), r)
    sample = cfgs[::60]                              # 100 configs, one call each
    t_one = best(lambda: [schedule.times_for_shape(next(shapes), 4096, 4096, configs=[c]) for c in sample], r)
    per_cfg_one = t_one / len(sample)
    per_cfg_vec = t_vec / len(cfgs)
    print(f"1. time model: all {len(cfgs)} configs in {t_vec * 1e3:.1f} ms vectorised; "
          f"{per_cfg_one * 1e6:.0f} us per config one at a time -> vectorised {per_cfg_one / per_cfg_vec:.0f}x faster")
    worst = 0.0
    for shape in L2_SHAPES:
        name = "x".join(map(str, shape))
        for fresh, label in ((False, name), (True, f"{name} at M+1")):
            t_exact, t_base = time_model_ratio(shape, max(r, 5), fresh)
            worst = max(worst, t_exact / t_base)
            print(f"   {label}: all 6000 configs with the exact LRU count {t_exact * 1e3:.1f} ms, "
                  f"with the old estimate {t_base * 1e3:.1f} ms: ratio {t_exact / t_base:.2f}")
    print(f"   worst ratio {worst:.2f} over the exact and the M+1 shapes (target <= 2)")

    # 2. executor: real vs NumPy, shape-only vs real
    n, b, k = 1024, 128, 32
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    t_np = best(lambda: A @ B, r)
    t_real = best(lambda: run_gemm(n, n, n, b, b, k, real=True, A=A, B=B), r)
    t_shape = best(lambda: run_gemm(n, n, n, b, b, k, real=False), r)
    print(f"2. executor {n}^3, {b}x{b}x{k} tiles: real {t_real * 1e3:.0f} ms = {t_real / t_np:.1f}x plain A @ B "
          f"({t_np * 1e3:.1f} ms); shape-only {t_shape * 1e3:.0f} ms = {t_real / t_shape:.1f}x faster than real")

    # 3. formula vs shape-only executor
    t_formula = best(lambda: gemm_traffic(n, n, n, b, b, k), r)
    print(f"3. exact traffic formula {t_formula * 1e6:.0f} us vs shape-only executor: "
          f"{t_shape / t_formula:.0f}x faster")

    # 4. exact LRU count vs LRU simulation
    pt = (512, 512, 256, 32, 32, 32, 4, 24)
    cap = gemm_l2.step_footprint(512, 512, 32, 32, 32, 4, 24) * 4
    t_l2f = best(lambda: gemm_lru.lru_reads(*pt, cap), r)
    t_l2s = best(lambda: simulate_l2(*pt, cap), r)
    print(f"4. exact LRU count {t_l2f * 1e6:.0f} us vs LRU simulation {t_l2s * 1e3:.0f} ms: {t_l2s / t_l2f:.0f}x faster "
          f"(equal: {gemm_lru.lru_reads(*pt, cap) == simulate_l2(*pt, cap).hbm_reads})")

    # 5. the lecture-13 script
    seed = ROOT.parent / "shared" / "seeds" / "004_b1a68824c288e7cd.txt"
    if args.no_script or not seed.exists():
        print("5. lecture-13 script: skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "course"
        shutil.copytree(ROOT / "course", tree, ignore=shutil.ignore_patterns("__pycache__"))
        dst = tree / "lecture13" / "03_gpu_schedule_space.py"
        shutil.copyfile(seed, dst)
        env = {"PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"}

        def run():
            subprocess.run([sys.executable, dst.name], cwd=dst.parent, env=env, check=True, capture_output=True)
        t_script = best(run, r)
    print(f"5. lecture-13 script: {t_script:.2f} s wall (the course: about 3 s)")


if __name__ == "__main__":
    main()
