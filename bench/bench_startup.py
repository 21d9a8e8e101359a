"""Start-up of the command line: ``tilebound list`` against ``python -c "import sympy"``.

Each runs as a fresh process, interleaved (A, B, A, B, ...) so that machine noise hits all alike; the
figure is the ratio of medians and the difference ("our own time beyond importing SymPy").
``tilebound list`` discovers every model module (each declares its parameters, so SymPy is imported)
but builds no model; it must stay within :data:`LIMIT` (1.5x) of importing SymPy alone.  The exit
status is 1 when it does not.

    python bench/bench_startup.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from timing import interleaved

ROOT = Path(__file__).resolve().parents[1]

#: the most ``tilebound list`` may take, as a multiple of ``import sympy`` (issue 8, "Must not regress")
LIMIT = 1.5

#: ``tilebound list`` is the console script's own code path (``tilebound.cli:main``), run as a fresh process
COMMANDS = {
    "import sympy": [sys.executable, "-c", "import sympy"],
    "tilebound list": [sys.executable, "-c", "import sys; from tilebound.cli import main; sys.exit(main(['list']))"],
    "python -m tilebound list": [sys.executable, "-m", "tilebound", "list"],
    "tilebound --help": [sys.executable, "-c", "import sys; from tilebound.cli import main; sys.exit(main(['--help']))"],
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)
    times = {k: [w for w, _ in v] for k, v in interleaved(COMMANDS, args.repeat, ROOT).items()}
    base = statistics.median(times["import sympy"])
    print(f"{'command':<28}{'median':>10}{'ratio':>8}{'own time':>11}   ({args.repeat} runs each, interleaved)")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<28}{med * 1e3:>8.0f}ms{med / base:>8.2f}{(med - base) * 1e3:>9.0f}ms")
    ratio = statistics.median(times["tilebound list"]) / base
    verdict = "within" if ratio <= LIMIT else "BEYOND"
    print(f"tilebound list: {ratio:.2f}x import sympy, {verdict} the limit of {LIMIT}x")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
