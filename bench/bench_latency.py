"""Throughput of the latency simulators, measured side by side in one run.

    python bench/bench_latency.py [--tiles N]

Prints tiles/second of :func:`numeric.pipeline.simulate` across regimes and options, each as a ratio
to the plain deterministic issue-ahead run measured in the same process, plus the cost of one exact
formula evaluation (``latency.pipeline``) for comparison.  Numbers vary with the machine; the
ratios are what to compare.
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

from tabulate import tabulate
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_latency")
    ap.add_argument("--tiles", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.tiles < 1:
        sys.stderr.write(f"bench_latency: --tiles: must be >= 1, got {args.tiles}\n")
        return 2

    from numeric.littles import simulate_requests
    from numeric.pingpong import simulate_pingpong
    from numeric.pipeline import simulate
    from symbolic.models.latency import pipeline

    n = args.tiles
    cases = [
        ("issue-ahead, S=4, deterministic (baseline)", lambda: simulate(n, 280.0, 280.0, 700.0, 4)),
        ("synchronous", lambda: simulate(n, 280.0, 280.0, 700.0, 1, issue_ahead=False)),
        ("issue-ahead, S=64", lambda: simulate(n, 280.0, 280.0, 700.0, 64)),
        ("bandwidth-bound, S=8", lambda: simulate(n, 280.0, 1291.0, 700.0, 8)),
        ("exponential jitter, S=4", lambda: simulate(n, 280.0, 280.0, 700.0, 4, jitter=1.0, seed=0)),
        ("S=4 + bytes-in-flight profile", lambda: simulate(n, 280.0, 280.0, 700.0, 4).mean_inflight_bytes),
        ("Little's law request stream", lambda: simulate_requests(n, 16, 2.5e10, 7e-7, jitter=1.0)),
    ]
    pp_n = max(1, n // 10)
    rows = []
    base = None
    for label, fn in cases:
        t = best(fn, args.repeat)
        base = base or t
        rows.append([label, f"{n:,}", f"{t:.3f}", f"{n / t:,.0f}", f"{base / t:.2f}"])
    t = best(lambda: simulate_pingpong(pp_n, 2.0, 1.0, 2), args.repeat)
    rows.append(["ping-pong event heap (2 warpgroups)", f"{pp_n:,}", f"{t:.3f}", f"{pp_n / t:,.0f}",
                 f"{(base / n) / (t / pp_n):.2f}"])
    model = pipeline.model
    pt = dict(n=n, S=4, L=Fraction(700), t_x=Fraction(280), t_c=Fraction(280))
    model.evaluate("makespan", **pt)                                  # compile once
    t = best(lambda: [model.evaluate("makespan", **pt) for _ in range(1000)], args.repeat) / 1000
    rows.append(["exact formula, one evaluation (any n)", "-", f"{t:.6f}", "-", f"{base / t:,.0f}"])
    print(tabulate(rows, headers=["simulator", "tiles", "best s", "tiles/s", "speed vs baseline"],
                   tablefmt="github", disable_numparse=True))
    print(f"\n{n:,} tiles of the baseline in {base:.2f} s ({n / base / 1e6:.2f} M tiles/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
