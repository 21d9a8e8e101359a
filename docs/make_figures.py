"""Regenerate the figures the docs track (``docs/*.png``), each with the command its page shows.

The pages' own commands write to a scratch path (``/tmp/...``), so running a page's example leaves the checkout
as it was; this script is the one way to rewrite the tracked figures.  Each figure is drawn by ``tilebound``
itself (the same marked, atomic writer as any ``--plot`` / ``-o``), from the repository root.

Run: ``python docs/make_figures.py [--list] [NAME ...]`` (default: every figure).  The LLM tuning figure runs
every strategy on 40 shapes x 20 seeds: minutes on two cores; the others take seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: tracked figure (relative to the repository root) -> the ``tilebound`` arguments that draw it (its page's
#: command, with the figure's tracked path instead of the page's scratch one)
FIGURES = {
    "docs/tuning-course.png": ["tune", "--shapes", "course", "--strategy", "all", "--budget", "100", "--seeds", "20",
                               "--per-shape", "--format", "markdown", "--plot", "docs/tuning-course.png"],
    "docs/tuning-llm.png": ["tune", "--shapes", "llm", "--strategy", "all", "--budget", "100", "--seeds", "20",
                            "--format", "markdown", "--plot", "docs/tuning-llm.png"],
    "docs/decoding_time.png": ["plot", "decode.time", "--vary", "S=1..128", "-q", "time", "--at", "B=1", "H=32",
                               "H_kv=8", "d=128", "N_k=32768", "--no-executed", "-o", "docs/decoding_time.png"],
}
#: the page that shows each figure and its command
PAGES = {"docs/tuning-course.png": "docs/tuning.md", "docs/tuning-llm.png": "docs/tuning.md",
         "docs/decoding_time.png": "docs/decoding.md"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="figures to draw (a path or its file name); default all")
    ap.add_argument("--list", action="store_true", help="list the figures and their commands, draw nothing")
    args = ap.parse_args(argv)
    by_name = {Path(p).name: p for p in FIGURES}
    chosen = []
    for n in args.names or list(FIGURES):
        path = n if n in FIGURES else by_name.get(n)
        if path is None:
            ap.error(f"unknown figure {n!r}; known: {', '.join(FIGURES)}")
        chosen.append(path)
    for path in chosen:
        line = "tilebound " + " ".join(FIGURES[path])
        if args.list:
            print(f"{path} ({PAGES[path]}):\n    {line}")
            continue
        print(f"{path}: {line}", flush=True)
        t0 = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, "-m", "tilebound", *FIGURES[path]], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL)
        if proc.returncode:
            print(f"{path}: tilebound exited {proc.returncode}", file=sys.stderr)
            return proc.returncode
        print(f"    wrote {path} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
