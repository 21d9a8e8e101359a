"""Attention performance, measured side by side in one run (ratios, not absolute limits).

1. Tiled FlashAttention forward (real arrays, counting on; N = 4096, d = 64, 128 x 128 blocks)
   vs a plain NumPy ``softmax(Q K^T / sqrt(d)) V`` of the same shape.   Target: <= 1.5x.
2. Count-only mode vs real-array mode on the same shape.                Target: >= 20x faster.
3. Throughput of the default ``python -m verify`` attention sweep, in points per second.
4. The lecture-11 script through the course adapters (wall seconds; the course says about 3 s).

Run: ``python bench/bench_attention.py [--repeat 3]``.  Each figure is the best of ``repeat`` runs.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from numeric import attention as ex  # noqa: E402
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)


def plain(Q, K, V):
    S = Q @ K.T / math.sqrt(Q.shape[1])
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return P @ V


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-script", action="store_true", help="skip the lecture-11 script timing")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    N, d, B = 4096, 64, 128
    Q, K, V = (rng.standard_normal((N, d)) for _ in range(3))

    t_plain = best(lambda: plain(Q, K, V), args.repeat)
    t_tiled = best(lambda: ex.flash_forward(Q, K, V, B, B, order="fa2"), args.repeat)
    t_tiled1 = best(lambda: ex.flash_forward(Q, K, V, B, B, order="fa1"), args.repeat)
    t_count = best(lambda: ex.count_flash_forward(N, N, d, B, B, order="fa2"), args.repeat)
    print(f"shape N={N}, d={d}, blocks {B}x{B}; best of {args.repeat}")
    print(f"plain NumPy softmax(QK^T)V         {t_plain * 1e3:8.1f} ms")
    print(f"tiled FlashAttention fa2 (counted) {t_tiled * 1e3:8.1f} ms   ratio to plain {t_tiled / t_plain:5.2f}x  (target <= 1.5x)")
    print(f"tiled FlashAttention fa1 (counted) {t_tiled1 * 1e3:8.1f} ms   ratio to plain {t_tiled1 / t_plain:5.2f}x")
    print(f"count-only fa2                     {t_count * 1e3:8.1f} ms   speed-up over real {t_tiled / t_count:6.1f}x  (target >= 20x)")

    from verify.core import run_check
    from verify.registry import select
    t0 = time.perf_counter()
    pts = sum(run_check(c).points for c in select("attention"))
    dt = time.perf_counter() - t0
    print(f"verify attention default sweep     {pts} points in {dt:.2f} s = {pts / dt:.0f} points/s")

    seeds = ROOT.parent / "shared" / "seeds" / "000_079193a6ac0c0fca.txt"
    if not args.no_script and seeds.exists():
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "course"
            shutil.copytree(ROOT / "course", tree)
            shutil.copyfile(seeds, tree / "lecture11" / "02_flash_forward.py")
            env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
            t = best(lambda: subprocess.run([sys.executable, "02_flash_forward.py"], cwd=tree / "lecture11",
                                            env=env, capture_output=True, check=True), 1)
        print(f"lecture-11 script via adapters     {t:.2f} s  (course: about 3 s)")


if __name__ == "__main__":
    main()
