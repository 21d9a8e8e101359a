"""``tilebound latex --standalone`` for every model: the notes' time, and its parts.

Each run is a fresh process (start-up, the models, their derived forms, tables, listings and figures: what
a user waits for), written to a scratch file.  The figure printed is the median wall time and the CPU time
of the child, beside the load average (a busy machine stretches the wall time, not the CPU time), and the
same in one process (``--jobs 1``) and with ``--no-figures`` (one process) so the workers' gain and the figures'
share show.  The goal (issue 18) is at most :data:`GOAL` seconds for today's models on a quiet machine, and at
most :data:`GOAL_PER_MODEL` seconds for each model added: judged on the default run's wall time (``--jobs
auto``: one worker per usable CPU) and, per model, on the CPU time of one process.

    python bench/bench_notes.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: issue 18's goals: the whole notes, and each model added
GOAL = 5.0
GOAL_PER_MODEL = 0.2


def _cpu() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _once(args, out) -> tuple[float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "tilebound", "latex", "--standalone", *args, "-o", out, "--force"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, _cpu() - c0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from symbolic import registry
    models = len(registry.names())
    load = os.getloadavg()[0]
    print(f"tilebound latex --standalone, {models} models, {a.repeat} runs each, interleaved; "
          f"{os.cpu_count()} CPUs, load average {load:.2f} at the start")
    kinds = (("default", []), ("--jobs 1", ["--jobs", "1"]), ("--no-figures", ["--no-figures", "--jobs", "1"]))
    runs: dict = {label: [] for label, _ in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "notes.tex")
        for _ in range(a.repeat):
            for label, args in kinds:
                runs[label].append(_once(args, out))
    med = {label: tuple(statistics.median(x[k] for x in got) for k in (0, 1)) for label, got in runs.items()}
    for label, (wall, cpu) in med.items():
        print(f"  {label:13s} median {wall:6.2f} s wall, {cpu:6.2f} s CPU ({cpu / models:.2f} s CPU a model)")
    wall, one = med["default"][0], med["--jobs 1"]
    print(f"workers: {one[0] / wall:.2f}x faster than one process; figures: {one[1] - med['--no-figures'][1]:.2f} s "
          f"CPU of {one[1]:.2f} s")
    meets = {True: "meets", False: "misses"}
    per_wall, per_cpu = wall / models, one[1] / models
    print(f"goal <= {GOAL} s for today's models: the default run's {wall:.2f} s {meets[wall <= GOAL]} it; "
          f"<= {GOAL_PER_MODEL} s a model added: {per_wall:.2f} s of the default's wall time a model "
          f"({meets[per_wall <= GOAL_PER_MODEL]} it), {per_cpu:.2f} s CPU a model in one process "
          f"({meets[per_cpu <= GOAL_PER_MODEL]} it); load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
