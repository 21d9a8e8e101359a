"""``tilebound llm``: the table against ``import sympy`` and ``tilebound show``, and ``--verify``'s wall time.

Each command runs as a fresh process, interleaved (A, B, C, A, B, C, ...) so that machine noise hits all alike;
the figures are medians and the table's ratio to ``show gemm.tiled --at M=1`` (a command that builds one model).
Then ``--verify`` of DeepSeek-V3's decode at 32K context (issue 21's goal: at most 30 s), once, with the
executors in ``--jobs`` processes, and the seconds of its longest executor run (the wall time's floor with
enough CPUs).

    python bench/bench_llm.py [--repeat 5] [--jobs N] [--no-verify]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from timing import fresh, interleaved

ROOT = Path(__file__).resolve().parents[1]
_TB = [sys.executable, "-m", "tilebound"]
COMMANDS = {
    "import sympy": [sys.executable, "-c", "import sympy"],
    "tilebound show gemm.tiled --at M=1": _TB + ["show", "gemm.tiled", "--at", "M=1"],
    "tilebound llm llama-3.1-8b --context 32768": _TB + ["llm", "llama-3.1-8b", "--context", "32768"],
    "tilebound llm deepseek-v3 --context 32768": _TB + ["llm", "deepseek-v3", "--context", "32768"],
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-verify", action="store_true")
    a = ap.parse_args(argv)
    times = {k: [w for w, _ in v] for k, v in interleaved(COMMANDS, a.repeat, ROOT).items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    show = med["tilebound show gemm.tiled --at M=1"]
    for k, t in med.items():
        print(f"{k:48s} {t:6.2f} s   {t / show:5.2f} x show")
    if a.no_verify:
        return 0
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "step.json")
        t, _ = fresh(_TB + ["llm", "deepseek-v3", "--phase", "decode", "--context", "32768", "--verify", "--jobs",
                            str(a.jobs), "--format", "json", "-o", out], ROOT)
        rows = json.load(open(out))["verify"]
    agree = sum(r["status"] == "agrees" for r in rows)
    longest = max(rows, key=lambda r: r["seconds"])
    print(f"deepseek-v3 decode 32K --verify --jobs {a.jobs}: {t:.1f} s wall, {agree} of {len(rows)} rows agree; "
          f"executors {sum(r['seconds'] for r in rows):.1f} s in all, the longest {longest['seconds']:.1f} s "
          f"({longest['name']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
