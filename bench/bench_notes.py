"""``tilebound latex --standalone``: the notes' time, for every model and for the models issue 18 had.

Each run is a fresh process (start-up, the models, their derived forms, tables, listings and figures: what
a user waits for), written to a scratch file.  The figure printed is the median wall time and the CPU time
of the child, beside the load average (a busy machine stretches the wall time, not the CPU time), and the
same in one process (``--jobs 1``) and with ``--no-figures`` (one process) so the workers' gain and the figures'
share show.

Issue 18's goal has two parts: at most :data:`GOAL` seconds for the models of the day it was filed
(:data:`ISSUE_MODELS`, the 26 of the tree it was filed against, ``416d9e8``, and the example user package's
``lab.softmax.rowwise``), and at most :data:`GOAL_PER_MODEL` seconds for each model added since.  Both are
judged on the default run's wall time (``--jobs auto``: one worker per usable CPU), what a user waits for: the
first on the issue's models alone, the second as the difference between every model and those, over the
number added.  The same difference in one process's CPU time is printed beside it.

    python bench/bench_notes.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from timing import interleaved

ROOT = Path(__file__).resolve().parents[1]

#: issue 18's goals: the models of its day, and each model added
GOAL = 5.0
GOAL_PER_MODEL = 0.2
#: the models of the day issue 18 was filed: ``registry.select(None)`` at 416d9e8 (26), and the example user
#: package's model, which the notes include when it is installed
ISSUE_MODELS = (
    "attention.standard.fwd", "attention.standard.bwd", "attention.fa1.fwd", "attention.fa2.fwd",
    "attention.flash.bwd", "attention.fa1.fwd.causal", "attention.fa2.fwd.causal", "attention.flash.bwd.causal",
    "attention.fa1.fwd.paper", "attention.fa2.fwd.paper", "attention.flash.bwd.paper", "decode.packed",
    "decode.unpacked", "decode.packed.paged", "decode.unpacked.paged", "decode.time", "gemm.tiled",
    "gemm.resources", "gemm.cosma", "gemm.l2", "gemm.l2.lru", "gemv.tiled", "latency.littles_law",
    "latency.pipeline", "latency.pipeline_sync", "latency.pingpong", "lab.softmax.rowwise")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from symbolic import registry
    every = registry.names()
    then = [n for n in ISSUE_MODELS if n in every]
    added = len(every) - len(then)
    print(f"tilebound latex --standalone: {len(every)} models, of which {len(then)} issue 18's and {added} added; "
          f"{a.repeat} runs each, interleaved; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at "
          "the start")
    with tempfile.TemporaryDirectory() as tmp:
        latex = [sys.executable, "-m", "tilebound", "latex", "--standalone", "-o", os.path.join(tmp, "notes.tex"),
                 "--force"]
        kinds = {"all, default": latex, "all, --jobs 1": [*latex, "--jobs", "1"],
                 "all, no figures": [*latex, "--no-figures", "--jobs", "1"],
                 "issue's, default": [*latex, *then], "issue's, --jobs 1": [*latex, "--jobs", "1", *then]}
        runs = interleaved(kinds, a.repeat, ROOT)
    med = {label: tuple(statistics.median(x[k] for x in got) for k in (0, 1)) for label, got in runs.items()}
    for label, (wall, cpu) in med.items():
        print(f"  {label:17s} median {wall:6.2f} s wall, {cpu:6.2f} s CPU")
    one = med["all, --jobs 1"]
    print(f"workers: {one[0] / med['all, default'][0]:.2f}x faster than one process; figures: "
          f"{one[1] - med['all, no figures'][1]:.2f} s CPU of {one[1]:.2f} s")
    meets = {True: "meets", False: "misses"}
    today = med["issue's, default"][0]
    per_wall = (med["all, default"][0] - today) / max(added, 1)
    per_cpu = (one[1] - med["issue's, --jobs 1"][1]) / max(added, 1)
    print(f"goal <= {GOAL} s for issue 18's {len(then)} models: {today:.2f} s at the default, {meets[today <= GOAL]} "
          f"it; <= {GOAL_PER_MODEL} s a model added: {per_wall:.2f} s of the default's wall time a model over the "
          f"{added} added ({meets[per_wall <= GOAL_PER_MODEL]} it), {per_cpu:.2f} s of one process's CPU a model; "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
