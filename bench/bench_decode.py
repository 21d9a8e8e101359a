"""Speed of the decode executor (numeric/decode.py), measured side by side in one run.

    python bench/bench_decode.py [--keys N] [--splits S] [--repeat R]

At ``N_k = 10**6`` keys and ``S = 128`` splits (one sequence, 4 query heads on one KV head, head dim 32,
key blocks of 128) it prints

* count-only mode against real mode at the same shape - the target is count-only at least 20x faster;
* real mode against a plain NumPy decode, ``softmax(Q K^T / sqrt(d)) V`` per KV head on the same arrays
  - the target is at most 1.5x slower (real mode also runs the 128 splits, the combine and its counts);
* the paged real mode (pages of 16 tokens, a permuted block table) against the same plain decode, for
  information.

Both decodes run with BLAS on one thread (threadpoolctl), so that a loaded machine's thread contention
does not decide the ratio.  Times are the best of ``--repeat`` runs; the ratios are what to compare
across machines.  Exit status 1
when a target is missed (a benchmark, not a test: no test asserts a time).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from tabulate import tabulate
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)

B, H, H_KV, L_Q, D, B_N = 1, 4, 1, 1, 32, 128


def plain_decode(q, k, v):
    """softmax(Q K^T / sqrt(d)) V for each sequence and KV head, its g query heads together."""
    g = q.shape[1] // k.shape[1]
    out = np.empty(q.shape[:3] + (v.shape[-1],))
    for b in range(q.shape[0]):
        for h in range(k.shape[1]):
            qs = q[b, h * g:(h + 1) * g].reshape(-1, q.shape[-1])
            s = (qs @ k[b, h].T) / np.sqrt(q.shape[-1])
            p = np.exp(s - s.max(axis=1, keepdims=True))
            out[b, h * g:(h + 1) * g] = ((p @ v[b, h]) / p.sum(axis=1, keepdims=True)).reshape(g, q.shape[2], -1)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_decode")
    ap.add_argument("--keys", type=int, default=10**6)
    ap.add_argument("--splits", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.keys < 1 or args.splits < 1 or args.repeat < 1:
        sys.stderr.write("bench_decode: --keys, --splits and --repeat must be >= 1\n")
        return 2

    from threadpoolctl import threadpool_limits

    from numeric.decode import default_pages, run_decode

    with threadpool_limits(limits=1, user_api="blas"):
        return _run(args, default_pages, run_decode)


def _run(args, default_pages, run_decode) -> int:

    n, S = args.keys, args.splits
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, H, L_Q, D))
    k = rng.standard_normal((B, H_KV, n, D))
    v = rng.standard_normal((B, H_KV, n, D))
    shape = (B, H, H_KV, L_Q, n, D, D, B_N, S)
    budget = {"max_elements": 2 * n * H_KV * D}

    def real():
        return run_decode(*shape, real=True, q=q, k=k, v=v, **budget)

    check = np.max(np.abs(real().O - plain_decode(q, k, v)))
    t_plain = best(lambda: plain_decode(q, k, v), args.repeat)
    t_real = best(real, args.repeat)
    t_count = best(lambda: run_decode(*shape), args.repeat)

    P = 16
    pages = default_pages([n], P, seed=1)
    pool_k = np.empty((len(pages[0]), P, H_KV, D))
    pool_v = np.empty_like(pool_k)
    idx = np.asarray(pages[0])
    pad = len(idx) * P - n
    pool_k[idx] = np.pad(k[0], ((0, 0), (0, pad), (0, 0))).reshape(H_KV, len(idx), P, D).transpose(1, 2, 0, 3)
    pool_v[idx] = np.pad(v[0], ((0, 0), (0, pad), (0, 0))).reshape(H_KV, len(idx), P, D).transpose(1, 2, 0, 3)
    paged = lambda: run_decode(*shape, P=P, pages=pages, real=True, q=q, k=pool_k, v=pool_v, **budget)  # noqa: E731
    check_paged = np.max(np.abs(paged().O - plain_decode(q, k, v)))
    t_paged = best(paged, args.repeat)

    rows = [["plain NumPy decode (baseline)", f"{t_plain:.4f}", "1.00", ""],
            ["real mode, contiguous", f"{t_real:.4f}", f"{t_real / t_plain:.2f}", "<= 1.5 x plain"],
            ["real mode, paged (P = 16, permuted)", f"{t_paged:.4f}", f"{t_paged / t_plain:.2f}", ""],
            ["count-only mode", f"{t_count:.6f}", f"{t_count / t_plain:.4f}",
             f"real / count-only = {t_real / t_count:,.0f} (>= 20)"]]
    print(f"decode at B={B}, H={H}, H_kv={H_KV}, L_q={L_Q}, N_k={n:,}, d=d_v={D}, B_n={B_N}, S={S}; "
          f"best of {args.repeat}; max |O - plain| = {check:.1e} (contiguous), {check_paged:.1e} (paged)")
    print(tabulate(rows, headers=["run", "seconds", "x plain", "target"], tablefmt="simple"))
    ok = t_real <= 1.5 * t_plain and t_real >= 20 * t_count and check <= 1e-12 and check_paged <= 1e-12
    if not ok:
        print("bench_decode: a target was missed", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
