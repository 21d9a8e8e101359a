"""GEMM performance, measured side by side in one run (ratios, not absolute limits).

1. The time model over the whole space (6000 configs, one vectorised pass, uncached) vs one config at
   a time through the same model.                                  Target: vectorised >= 50x faster.
2. The tiled executor in real mode vs plain ``A @ B`` (1024^3, 128 x 128 x 32 tiles) and shape-only
   mode vs real mode on the same problem.
3. The exact traffic formula (compiled) vs the shape-only executor on the same point.
4. The time model's L2 estimate (``tuning.l2_estimate.hbm_reads``) vs the LRU simulator on the same point.
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
from symbolic.models import gemm_l2  # noqa: E402
from symbolic.models.gemm import gemm_traffic  # noqa: E402
from tuning import l2_estimate, schedule  # noqa: E402
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)


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

    # 4. L2 estimate vs LRU simulation
    pt = (512, 512, 256, 32, 32, 32, 4, 24)
    cap = gemm_l2.step_footprint(512, 512, 32, 32, 32, 4, 24) * 4
    gemm_l2.panel_sums.cache_clear()
    t_l2f = best(lambda: (gemm_l2.panel_sums.cache_clear(), l2_estimate.hbm_reads(*pt[:5], pt[6], pt[7], cap)), r)
    t_l2s = best(lambda: simulate_l2(*pt, cap), r)
    print(f"4. L2 estimate {t_l2f * 1e6:.0f} us vs LRU simulation {t_l2s * 1e3:.0f} ms: {t_l2s / t_l2f:.0f}x faster")

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
