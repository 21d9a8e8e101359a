"""``python -m verify``: run every registered check, print a table per model, close with ``N passed, M failed``.

Exit status: 0 when all points agree, 1 when any disagree (the smallest failing point is printed with
both values), 2 for bad usage (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys

from tabulate import tabulate


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"verify: {message}\n")
        sys.exit(2)


def main(argv=None) -> int:
    p = _Parser(prog="python -m verify", description="Check every formula against its executor.")
    p.add_argument("--full", action="store_true", help="the long sweep (bigger grids, more hypothesis draws)")
    p.add_argument("--model", metavar="PATTERN", action="append",
                   help="only checks whose name matches (a name, a glob, or a family prefix); repeat to add more")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (printed; default 0)")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    args = p.parse_args(argv)

    from base.errors import BadInput

    from .core import run_check
    from .registry import select

    try:
        checks = select(args.model)
    except BadInput as exc:
        sys.stderr.write(f"verify: {exc}\n")
        return 2
    if args.list:
        for c in checks:
            print(f"{c.name:40s} {c.description}")
        return 0

    from .core import hypothesis_available
    drawn = (f"hypothesis seed {args.seed}" if hypothesis_available()
             else "grids only: hypothesis is not installed (pip install 'tilebound[verify]' adds drawn points)")
    print(f"verify: {len(checks)} checks, {'full' if args.full else 'default'} sweep, {drawn}")
    rows, reports = [], []
    for c in checks:
        r = run_check(c, full=args.full, seed=args.seed)
        reports.append(r)
        rows.append([c.name, r.points, r.agreed, r.failed, f"{r.largest:,}", f"{r.seconds:.2f}"])
        sys.stdout.flush()
    print(tabulate(rows, headers=["model", "points", "agreed", "failed", "largest size", "seconds"], tablefmt="github"))
    passed = sum(r.agreed for r in reports)
    failed = sum(r.failed for r in reports)
    for r in reports:
        bad = r.smallest_failure()
        if bad is not None:
            print(f"\nFAIL {r.name} at {bad.point}\n  formula:  {bad.formula}\n  executed: {bad.executed}\n  {bad.message}")
    print(f"\n{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
