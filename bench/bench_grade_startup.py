"""Start-up of ``tilebound grade``: the check look-up alone and the whole grade, lazy against eager.

``verify.registry.check_for`` imports the check modules one at a time and stops at the model's own check
(issue 22's follow-up); before, it discovered every check, which imports ``verify/checks/listings.py`` and
so builds every model that has a listing.  "eager" below is that old path, reproduced by calling
``verify.registry.all_checks()`` first.  Each command runs as a fresh process, interleaved (A, B, A, B, ...)
so that machine noise hits all alike; the figure is the median and the ratio eager / lazy.

    python bench/bench_grade_startup.py [--repeat 5]

Measured on the shared 2-core development machine (2026-12-02, ``--repeat 3``; wall / CPU medians):
the look-up 1.97 s / 0.90 s lazy against 8.38 s / 4.66 s eager (4.2x / 5.2x); the whole grade 2.52 s / 1.18 s
against 10.27 s / 4.97 s eager.  Before this change the grade also ran hypothesis's ``explain`` phase (about 100
more executor runs after shrinking, for a report the grade never prints): 17.57 s / 7.96 s then, so the worked
example's grade went from about 17.6 s to 2.5 s wall.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from timing import interleaved

ROOT = Path(__file__).resolve().parents[1]

MODEL = "attention.fa1.fwd.paper"
FORMULA = "2*N*d + 8*N**2*d**2/M + 8*N**2*d/M"      # issue 22's worked question (docs/teaching.md)
GRADE = ["grade", "--against", MODEL, "-q", "total", "--formula", FORMULA]

_LOOKUP = ("from symbolic import registry as r; from verify import registry as v; {eager}"
           f"assert v.check_for(r.get({MODEL!r}), 'total').name == {MODEL!r}")
_GRADE = ("import sys; from tilebound.cli import main; {eager}"
          f"rc = main({GRADE!r}); sys.exit(0 if rc == 1 else 3)")    # the formula is wrong: a grade of 1
_EAGER = "from verify import registry as _v; _v.all_checks(); "

COMMANDS = {
    "lookup, lazy": [sys.executable, "-c", _LOOKUP.format(eager="")],
    "lookup, eager (before)": [sys.executable, "-c", _LOOKUP.format(eager=_EAGER)],
    "grade, lazy": [sys.executable, "-c", _GRADE.format(eager="")],
    "grade, eager (before)": [sys.executable, "-c", _GRADE.format(eager=_EAGER)],
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    times = interleaved(COMMANDS, args.repeat, ROOT)
    med = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
    print(f"{'command':<26}{'wall':>9}{'CPU':>9}   (medians of {args.repeat} runs each, interleaved)")
    for name in COMMANDS:
        print(f"{name:<26}{med[name]:>8.2f}s{cpu[name]:>8.2f}s")
    for what in ("lookup", "grade"):
        before, after = f"{what}, eager (before)", f"{what}, lazy"
        print(f"{what}: eager / lazy = {med[before] / med[after]:.1f}x wall, {cpu[before] / cpu[after]:.1f}x CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
