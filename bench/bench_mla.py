"""Speed of the MLA decode executor (numeric/mla.py), measured side by side in one run.

    python bench/bench_mla.py [--keys N] [--splits S] [--repeat R]

At ``N_k = 10**6`` cached tokens and ``S = 64`` splits (one sequence, 16 heads in one row group of 64,
``d_c = 32``, ``d_r = 8``, pages and key blocks of 64 tokens, as FlashMLA's) it prints

* count-only mode against real mode at the same shape - the target is count-only at least 20x faster;
* real mode over a cache whose pages lie in order against a plain NumPy MLA decode,
  ``softmax(Q C^T / sqrt(d_c + d_r)) C[:, :d_c]`` on the same latents - the target is at most 1.5x slower
  (real mode also runs the 64 splits, the LSE combine, the table lookups and its counts);
* real mode over a randomly permuted block table against the same plain decode, and the FP8 cache
  (``d_c = 128``, a tenth of the tokens; quantized, dequantized and attended inside the run) against a
  plain decode of the unquantized latents of that shape, for information.

BLAS runs on one thread (threadpoolctl), so that a loaded machine's thread contention does not decide the
ratio.  Times are the best of ``--repeat`` runs; the ratios are what to compare across machines.  Exit
status 1 when a target is missed (a benchmark, not a test: no test asserts a time).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from tabulate import tabulate
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)

B, H, L_Q, D_C, D_R, B_H, B_N, P = 1, 16, 1, 32, 8, 64, 64, 64


def plain_mla(q, latent, d_c):
    """softmax(Q C^T / sqrt(W)) C[:, :d_c] for every head of one sequence: the absorbed MLA decode."""
    qs = q.reshape(-1, q.shape[-1])
    s = (qs @ latent.T) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return ((p @ latent[:, :d_c]) / p.sum(axis=1, keepdims=True)).reshape(q.shape[:-1] + (d_c,))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_mla")
    ap.add_argument("--keys", type=int, default=10**6)
    ap.add_argument("--splits", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.keys < 1 or args.splits < 1 or args.repeat < 1:
        sys.stderr.write("bench_mla: --keys, --splits and --repeat must be >= 1\n")
        return 2

    from threadpoolctl import threadpool_limits

    from numeric.mla import run_mla

    with threadpool_limits(limits=1, user_api="blas"):
        return _run(args, run_mla)


def _run(args, run_mla) -> int:
    n, S = args.keys, args.splits
    W = D_C + D_R
    rng = np.random.default_rng(0)
    pages_n = -(-n // P)
    q = rng.standard_normal((B, L_Q, H, W))
    pool = rng.standard_normal((pages_n, P, W))
    latent = pool.reshape(-1, W)[:n]                          # the pages in order: the plain cache
    shape = (B, H, L_Q, n, D_C, D_R, B_H, B_N, S, P)
    budget = {"max_elements": 2 * n * (W + H * L_Q)}
    in_order = [list(range(pages_n))]
    perm = [int(x) for x in rng.permutation(pages_n)]
    pool_perm = np.empty_like(pool)
    pool_perm[perm] = pool                                    # page i of the sequence lives at perm[i]

    def real():
        return run_mla(*shape, pages=in_order, real=True, q=q, kv=pool, **budget)

    def permuted():
        return run_mla(*shape, pages=[perm], real=True, q=q, kv=pool_perm, **budget)

    ref = plain_mla(q[0], latent, D_C)
    check = np.max(np.abs(real().O[0] - ref))
    check_perm = np.max(np.abs(permuted().O[0] - ref))
    t_plain = best(lambda: plain_mla(q[0], latent, D_C), args.repeat)
    t_real = best(real, args.repeat)
    t_perm = best(permuted, args.repeat)
    t_count = best(lambda: run_mla(*shape), args.repeat)

    d_c8, n8 = 128, max(n // 10, 1)              # FP8 needs whole groups of 128 codes: a tenth of the tokens
    q8 = rng.standard_normal((B, L_Q, H, d_c8 + D_R))
    pool8 = rng.standard_normal((-(-n8 // P), P, d_c8 + D_R))
    shape8 = (B, H, L_Q, n8, d_c8, D_R, B_H, B_N, S, P)
    budget8 = {"max_elements": 2 * n8 * (d_c8 + D_R + H * L_Q)}
    t_fp8 = best(lambda: run_mla(*shape8, fp8=True, pages=[list(range(len(pool8)))], real=True, q=q8, kv=pool8,
                                 **budget8), args.repeat)
    t_plain8 = best(lambda: plain_mla(q8[0], pool8.reshape(-1, d_c8 + D_R)[:n8], d_c8), args.repeat)

    rows = [["plain NumPy MLA decode (baseline)", f"{t_plain:.4f}", "1.00", ""],
            ["real mode, pages in order", f"{t_real:.4f}", f"{t_real / t_plain:.2f}", "<= 1.5 x plain"],
            ["real mode, permuted block table", f"{t_perm:.4f}", f"{t_perm / t_plain:.2f}", ""],
            [f"real mode, FP8 cache (N_k = {n8:,}, d_c = {d_c8}; plain {t_plain8:.4f} s)", f"{t_fp8:.4f}",
             f"{t_fp8 / t_plain8:.2f}", ""],
            ["count-only mode", f"{t_count:.6f}", f"{t_count / t_plain:.5f}",
             f"real / count-only = {t_real / t_count:,.0f} (>= 20)"]]
    print(f"MLA decode at B={B}, H={H}, L_q={L_Q}, N_k={n:,}, d_c={D_C}, d_r={D_R}, B_h={B_H}, B_n=P={B_N}, S={S}; "
          f"best of {args.repeat}; max |O - plain| = {check:.1e} (in order), {check_perm:.1e} (permuted)")
    print(tabulate(rows, headers=["run", "seconds", "x plain", "target"], tablefmt="simple"))
    ok = t_real <= 1.5 * t_plain and t_real >= 20 * t_count and check <= 1e-12 and check_perm <= 1e-12
    if not ok:
        print("bench_mla: a target was missed", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
