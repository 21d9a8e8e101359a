"""Start-up of the command line: ``python -m symbolic list`` against ``python -c "import sympy"``.

Both run as fresh processes, interleaved (A, B, A, B, ...) so that machine noise hits both alike; the
figure is the ratio of medians and the difference ("our own time beyond importing SymPy").  The issue
asks for well under a second of our own time.

    python bench/bench_startup.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "import sympy": [sys.executable, "-c", "import sympy"],
    "python -m symbolic list": [sys.executable, "-m", "symbolic", "list"],
    "python -m symbolic --help": [sys.executable, "-m", "symbolic", "--help"],
}


def _once(cmd, env) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    times = {k: [] for k in COMMANDS}
    for cmd in COMMANDS.values():          # warm the file cache once, untimed
        _once(cmd, env)
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            times[name].append(_once(cmd, env))
    base = statistics.median(times["import sympy"])
    print(f"{'command':<28}{'median':>10}{'ratio':>8}{'own time':>11}   ({args.repeat} runs each, interleaved)")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<28}{med * 1e3:>8.0f}ms{med / base:>8.2f}{(med - base) * 1e3:>9.0f}ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
