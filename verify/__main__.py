"""``python -m verify``: run every registered check, print a table per model, close with ``N passed, M failed``.

``--jobs N`` runs the checks in ``N`` processes (the same points and totals; only the seconds differ); the
default, ``auto``, is one per CPU this process may use (:func:`base.pool.usable_cpus`), and ``--jobs 1``
runs them here.
``--l2-draws N`` / ``--l2-shapes`` run the GEMM's L2 report instead (:mod:`verify.gemm`).  While a run
takes more than two seconds and stderr is a terminal, a progress bar on stderr shows the checks done of
the total, the points so far, the time spent and an estimate of what is left (:func:`base.console.progress`,
a tqdm bar); nothing is shown when stderr is not a terminal.

Exit status (:func:`base.console.run`): 0 when all points agree; 1 when any disagree (the smallest
failing point is printed with both values) or the output cannot be written (one line on stderr); 2 for
bad usage (one line on stderr); 130 on Ctrl-C (one line); 141 when the reader closes the pipe (quietly).
"""

from __future__ import annotations

from base import console

PROG = "verify"
if __name__ == "__main__":                          # run as a program: a Ctrl-C from here on is one line, 130
    console.guard_start(PROG)

import argparse  # noqa: E402  (after the guard: what start-up imports is covered by it)
import sys  # noqa: E402

from base.errors import BadInput  # noqa: E402
from base.pool import MAX_JOBS, jobs_from, process_pool, stop_workers, usable_cpus  # noqa: E402

from . import registry  # noqa: E402
from .core import hypothesis_available  # noqa: E402
from .runner import run_checks, task_groups  # noqa: E402


def _count(flag: str, least: int, most: int):
    """An argparse type: an integer from ``least`` to ``most`` (refused in one line naming ``flag``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise argparse.ArgumentTypeError(f"an integer from {least:,} to {most:,}, got {shown!r}") from None
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(f"an integer from {least:,} to {most:,}, got {value:,}")
        return value
    parse.__name__ = flag
    return parse


def _jobs(text: str) -> int:
    """``--jobs``: :func:`base.pool.jobs_from`, its refusal as argparse's one line."""
    try:
        return jobs_from(text)
    except BadInput as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


_jobs.__name__ = "--jobs"


# The heavy modules (SymPy, the executors) are imported inside the functions, under console.run: a
# Ctrl-C or a closed pipe during start-up is handled too, and --help is fast.

def build_parser() -> argparse.ArgumentParser:
    from .gemm import MAX_DRAWS

    p = console.ArgumentParser(
        prog="python -m verify", error_name="usage", description="Check every formula against its executor.",
        epilog="Exit status: 0 all agree, 1 a point disagrees or the output cannot be written, 2 bad usage, "
               "130 Ctrl-C, 141 closed pipe.  Progress shows on stderr when it is a terminal and a run passes 2 s.")
    p.add_argument("--full", action="store_true", help="the long sweep (bigger grids, more hypothesis draws)")
    p.add_argument("--model", metavar="PATTERN", action="append",
                   help="only checks whose name matches (a name, a glob, or a family prefix); repeat to add more")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed, and the L2 report's (printed; default 0)")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.add_argument("--jobs", metavar="N", type=_jobs, default=None,
                   help=f"run the checks in N processes (1 to {MAX_JOBS}, or auto: one per usable CPU, the "
                        "default; 1 runs them in this process): the same points and totals, only the seconds "
                        "differ")
    l2 = p.add_argument_group(
        "the GEMM's L2 report", "instead of the checks: the exact LRU count (gemm.l2.lru) against the LRU "
        "simulation at the pinned points, N adversarial points from --seed and the time model's L2 figures")
    l2.add_argument("--l2-draws", metavar="N", type=_count("--l2-draws", 0, MAX_DRAWS), default=None,
                    help=f"run the report with N adversarial points (0 to {MAX_DRAWS:,}; about 2 ms each)")
    l2.add_argument("--l2-shapes", action="store_true",
                    help="run the report with the course's real shapes at 50 MB too (a few seconds; "
                         "500 adversarial points unless --l2-draws says)")
    return p


def _l2(args) -> int:
    from .gemm import l2_report

    clash = [flag for flag, on in (("--model", args.model), ("--full", args.full), ("--list", args.list),
                                   ("--jobs", args.jobs is not None)) if on]
    if clash:
        given = "l2-draws" if args.l2_draws is not None else "l2-shapes"      # the flag the user gave
        raise BadInput(given, f"the L2 report runs alone; drop {clash[0]} (or run the checks without --l2-*)")
    draws = 500 if args.l2_draws is None else args.l2_draws
    status = l2_report(draws, args.seed, args.l2_shapes, out=print)
    sys.stdout.flush()
    return status


def _main(argv) -> int:
    args = build_parser().parse_args(argv)
    if args.l2_draws is not None or args.l2_shapes:
        return _l2(args)
    checks = registry.select(args.model)            # BadInput naming model (an empty pattern too)
    if args.list:
        for c in checks:
            print(f"{c.name:40s} {c.description}")
        return 0

    from tabulate import tabulate

    # no more workers than tasks (the checks of one model are one task): one model's checks run here
    jobs = min(usable_cpus() if args.jobs is None else args.jobs, len(task_groups(checks)))
    drawn = (f"hypothesis seed {args.seed}" if hypothesis_available()
             else "grids only: hypothesis is not installed (pip install 'tilebound[verify]' adds drawn points)")
    print(f"verify: {len(checks)} checks, {'full' if args.full else 'default'} sweep, {drawn}"
          + (f", {jobs} jobs" if jobs > 1 else ""))
    sys.stdout.flush()                              # a full disk is told at once, not after the sweep
    reports = _run(checks, args, jobs)
    rows = [[r.name, r.points, r.agreed, r.failed, f"{r.largest:,}", f"{r.seconds:.2f}"] for r in reports]
    print(tabulate(rows, headers=["model", "points", "agreed", "failed", "largest size", "seconds"], tablefmt="github"))
    passed = sum(r.agreed for r in reports)
    failed = sum(r.failed for r in reports)
    for r in reports:
        bad = r.smallest_failure()
        if bad is not None:
            print(f"\nFAIL {r.name} at {bad.point}\n  formula:  {bad.formula}\n  executed: {bad.executed}\n  {bad.message}")
    print(f"\n{passed} passed, {failed} failed")
    return 1 if failed else 0


def _run(checks, args, jobs) -> list:
    """The reports, with progress on a terminal's stderr: checks done / total, points, elapsed, estimate."""
    finished = [0]                                  # points of the checks done

    with console.progress(len(checks), "verify", unit="check") as shown:
        def on_point(r):
            shown.note(f"{finished[0] + r.points:,} points, {r.name}")

        def on_report(r):
            finished[0] += r.points
            shown.advance(note=f"{finished[0]:,} points")

        if jobs <= 1:
            return run_checks(checks, full=args.full, seed=args.seed, on_report=on_report, on_point=on_point)
        pool = process_pool(jobs)
        try:
            return run_checks(checks, full=args.full, seed=args.seed, executor=pool, on_report=on_report,
                              on_wait=shown.tick)
        except BaseException:                       # Ctrl-C, a closed pipe: stop the workers now
            stop_workers()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def main(argv=None) -> int:
    """The command line; returns the exit status (see the module docstring)."""
    return console.run(_main, PROG, argv)


if __name__ == "__main__":
    sys.exit(main())
