"""Tuning performance: the time model as a replayed search space, and what each strategy's own work costs.

1. The time model prices all 6000 configs of one shape in one vectorised call (fresh shapes, uncached).
2. A 100-evaluation search over 20 seeds, for every strategy of ``--strategy all`` (each once; cmaes is one of
   them), on 4096^3: wall seconds each and in all (the issue's target: at most 30 s on this machine).
   The learned strategy's one-time training is timed apart and counted in the total.
3. Each strategy's own overhead (its wall time a run; evaluations are look-ups into the priced space) against
   the evaluation cost it saves by measuring 100 configs instead of all 6000, at two prices of an
   evaluation: the time model's (from 1) and a GPU measurement's, Triton's ``do_bench`` defaults (25 ms of
   warm-up and 100 ms of repetitions a config; ``triton/testing.py``), compile time left out.  A ratio
   below 1 means the search pays for itself.

Run: ``python bench/bench_tuning.py [--seeds 20] [--budget 100]``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tuning import learned, schedule  # noqa: E402
from tuning.scores import run_many, summarize  # noqa: E402
from tuning.strategies import DEFAULT_STRATEGIES, N_CONFIGS  # noqa: E402
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)

#: seconds a GPU measurement of one config takes with triton.testing.do_bench's defaults (warmup=25, rep=100 ms)
DO_BENCH_S = 0.125
TARGET_S = 30.0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    shape = (4096, 4096, 4096)

    # 1. one vectorised call over the whole space
    fresh = itertools.count(3001)
    t_vec = best(lambda: schedule.times_for_shape(next(fresh), 4096, 4096), args.repeat)
    per_eval = t_vec / N_CONFIGS
    print(f"1. time model: all {N_CONFIGS} configs of one shape in one vectorised call: {t_vec * 1e3:.1f} ms "
          f"({per_eval * 1e6:.1f} us a config)")

    # 2. every strategy, budget x seeds
    names = list(DEFAULT_STRATEGIES)                      # every strategy once (cmaes is one of them)
    assert len(names) == len(set(names)), names
    schedule.times_for_shape(*shape)                      # the landscape itself is priced once, as in 1
    t0 = time.perf_counter()
    model = learned.default_model("H100")
    t_train = time.perf_counter() - t0
    print(f"\n2. {args.budget} evaluations x {args.seeds} seeds on {'x'.join(map(str, shape))}, each strategy "
          f"(the learned model's training, once: {t_train:.1f} s for {model.rows} rows of "
          f"{len(model.train_shapes)} shapes)")
    walls, scores = {}, {}
    for name in names:
        t0 = time.perf_counter()
        (runs,) = run_many(name, [shape], args.budget, args.seeds)
        walls[name] = time.perf_counter() - t0
        scores[name] = summarize([runs])
        s = scores[name]
        print(f"   {name:<11} {walls[name]:6.2f} s   median best/opt {s.ratio[1]:.3f}, P {s.score[1]:+.2f}, "
              f"reached 5 % in {s.reached:.0%} of runs")
    total = sum(walls.values()) + t_train
    verdict = "within" if total <= TARGET_S else "OVER"
    print(f"   all strategies: {total:.1f} s including training ({verdict} the {TARGET_S:.0f} s target)")

    # 3. overhead against the evaluation cost saved
    saved = N_CONFIGS - args.budget
    print(f"\n3. own overhead a run / cost of the {saved} evaluations it saves (exhaustive measures all {N_CONFIGS})")
    print(f"   {'strategy':<11} {'overhead':>10} {'/ model evals':>14} {'/ GPU evals':>12}")
    for name in names:
        if name == "exhaustive":
            print(f"   {name:<11} {'—':>10} {'(saves none)':>14}")
            continue
        over = scores[name].overhead_s + (t_train / args.seeds if name == "learned" else 0.0)   # training: step 2
        print(f"   {name:<11} {over * 1e3:8.1f} ms {over / (saved * per_eval):14.3g} {over / (saved * DO_BENCH_S):12.2g}")
    print(f"   (model eval {per_eval * 1e6:.1f} us; GPU eval {DO_BENCH_S * 1e3:.0f} ms, do_bench's defaults; "
          "the learned strategy's training is spread over the seeds)")
    return 0 if total <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
