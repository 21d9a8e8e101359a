"""Local attention performance, measured side by side in one run (ratios, not absolute limits).

1. The sliding-window forward at N = N_k = 32K, W = 4096 (W_l = 4095, W_r = 0: Mistral's window), d = 64,
   128 x 128 blocks: count-only mode vs real-array mode.                          Target: >= 20x faster.
2. The real-mode window forward (counting every element) vs a plain NumPy masked softmax(Q K^T / sqrt(d)) V of
   the same shape, at N = 4096 (the plain one holds the whole N x N score matrix; 32K would be 8 GB of it),
   for W = 4096 (the whole causal triangle) and W = 1024.                          Target: <= 1.5x.
3. The chunked forward (C = 8192) at N = 32K: count-only vs real.

Run: ``python bench/bench_attention_local.py [--repeat 3]``.  Each figure is the best of ``repeat`` runs.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from numeric import attention_local as ex  # noqa: E402
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)


def plain_masked(Q, K, V, W_l, W_r):
    """softmax(Q K^T / sqrt(d)) V under the window, in one shot (N_k = N: every row sees itself)."""
    N = len(Q)
    pos = np.arange(N)
    keep = (pos[None, :] >= pos[:, None] - W_l) & (pos[None, :] <= pos[:, None] + W_r)
    S = np.where(keep, Q @ K.T / math.sqrt(Q.shape[1]), -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return P @ V


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    d, B = 64, 128

    N = 32768
    Q, K, V = (rng.standard_normal((N, d)) for _ in range(3))
    mask = ex.Window(4095, 0)
    t_real = best(lambda: ex.local_forward(Q, K, V, B, B, mask), args.repeat)
    t_count = best(lambda: ex.count_local_forward(N, N, d, B, B, mask), args.repeat)
    run = ex.count_local_forward(N, N, d, B, B, mask)
    print(f"window forward N = N_k = {N}, W = 4096 (W_l = 4095, W_r = 0), d = {d}, blocks {B}x{B}; best of {args.repeat}")
    print(f"  visited block pairs {run.blocks:,} of {(N // B) ** 2:,}; reads {run.tally.reads:,} elements")
    print(f"  real mode (counted)   {t_real * 1e3:9.1f} ms")
    print(f"  count-only            {t_count * 1e3:9.1f} ms   speed-up over real {t_real / t_count:7.1f}x  (target >= 20x)")

    cmask = ex.Chunk(8192)
    t_creal = best(lambda: ex.local_forward(Q, K, V, B, B, cmask), args.repeat)
    t_ccount = best(lambda: ex.count_local_forward(N, N, d, B, B, cmask), args.repeat)
    print(f"chunked forward N = {N}, C = 8192: real {t_creal * 1e3:.1f} ms, count-only {t_ccount * 1e3:.1f} ms, "
          f"speed-up {t_creal / t_ccount:.1f}x")

    N = 4096
    Q, K, V = (rng.standard_normal((N, d)) for _ in range(3))
    for W_l in (4095, 1023):
        m = ex.Window(W_l, 0)
        O = ex.local_forward(Q, K, V, B, B, m).out[0]
        err = float(np.max(np.abs(O - plain_masked(Q, K, V, W_l, 0))))
        t_plain = best(lambda: plain_masked(Q, K, V, W_l, 0), args.repeat)
        t_tiled = best(lambda: ex.local_forward(Q, K, V, B, B, m), args.repeat)
        print(f"N = {N}, W = {W_l + 1}: plain NumPy masked {t_plain * 1e3:7.1f} ms, tiled real (counted) "
              f"{t_tiled * 1e3:7.1f} ms, ratio {t_tiled / t_plain:5.2f}x (target <= 1.5x); max |diff| {err:.1e}")


if __name__ == "__main__":
    main()
