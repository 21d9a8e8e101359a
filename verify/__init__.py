"""verify: where the formulas (:mod:`symbolic`) meet the executors (:mod:`numeric`).

Command line: ``python -m verify [--full] [--model PATTERN] [--jobs N]`` (``--help`` has the rest).
Python: :func:`assert_agree`, :func:`run_check`, :func:`run_checks` (serially, or on any
``concurrent.futures.Executor``), :func:`verify.registry.select`.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, wait
from typing import Callable, Optional, Sequence

from base.errors import BadInput

from . import registry
from .core import (Check, Property, Report, assert_agree, exact_equal, hypothesis_available,  # noqa: F401
                   rel_close, run_check)

__all__ = ["Check", "Property", "Report", "assert_agree", "exact_equal", "rel_close", "run_check", "run_checks",
           "run_named"]


def run_named(name: str, full: bool = False, seed: int = 0) -> Report:
    """:func:`run_check` of the registered check called ``name`` (what :func:`run_checks` sends to an
    executor's worker: a check holds lambdas and does not pickle, its name does).  ``BadInput`` naming
    ``check`` when this process's registry has no such check."""
    found = [c for c in registry.all_checks() if c.name == name]
    if not found:
        raise BadInput("check", f"no check named {name!r} in this process's registry (verify.registry.all_checks);"
                                " a worker must have the same packages and plugins installed")
    return run_check(found[0], full=full, seed=seed)


def estimated_cost(check, full: bool = False) -> int:
    """What :func:`run_checks` schedules by on an executor, costliest first: the points a run of ``check``
    evaluates (its pinned grid, plus its hypothesis draws where it draws), a listing's counted twice (each
    point counts the listing's lines and runs the model's executor too)."""
    points = sum(1 for _ in check.grid(full))
    if check.strategy is not None and hypothesis_available():
        points += check.draws_full if full else check.draws
    return points * (2 if check.name.endswith(".listing") else 1)


def run_checks(checks: Sequence, full: bool = False, seed: int = 0, executor=None,
               on_report: Optional[Callable[[Report], None]] = None,
               on_point: Optional[Callable[[Report], None]] = None,
               on_wait: Optional[Callable[[], None]] = None) -> list:
    """Run ``checks`` (:class:`Check` and :class:`Property` objects, e.g. ``registry.select("gemm")``) and
    return their :class:`Report`\\ s in the order of ``checks``.

    With ``executor=None`` they run one after another in this process.  Otherwise each check is one task
    on ``executor``, any :class:`concurrent.futures.Executor` whose workers can import this package: a
    ``ProcessPoolExecutor``, or a Dask ``Client(...).get_executor()`` for a cluster.  The task carries the
    check's name and the worker looks it up (:func:`run_named`), so only registered checks can go to an
    executor; they are submitted costliest first (:func:`estimated_cost`), and the reports come back in
    the order of ``checks``.  The reports are a serial run's: the same points, agreed, failures and largest size for each
    check (hypothesis draws from ``seed`` alone); only ``seconds`` differ.

    ``on_report(report)`` is called as each check finishes (in the order they finish); ``on_point(report)``
    after each point of a serial run (an executor's workers report per check only); ``on_wait()`` about
    twice a second while waiting on an executor (a progress display redraws its clock).  If waiting is
    interrupted (Ctrl-C), the tasks not yet started are cancelled and the exception propagates.
    """
    checks = list(checks)
    bad = [c for c in checks if not isinstance(c, (Check, Property))]
    if bad:
        raise BadInput("checks", f"each is a verify Check or Property, got {type(bad[0]).__name__}")
    if not isinstance(full, bool):
        raise BadInput("full", f"must be True or False, got {full!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BadInput("seed", f"must be an integer, got {seed!r}")
    done = on_report if on_report is not None else (lambda r: None)
    if executor is None:
        reports = []
        for c in checks:
            reports.append(run_check(c, full=full, seed=seed, on_point=on_point))
            done(reports[-1])
        return reports
    if not callable(getattr(executor, "submit", None)):
        raise BadInput("executor", f"must be a concurrent.futures.Executor (with submit), got {type(executor).__name__}")
    registered = {c.name: c for c in registry.all_checks()}
    alien = [c.name for c in checks if registered.get(c.name) is not c]
    if alien:
        raise BadInput("checks", f"{alien[0]!r} is not a registered check: an executor's worker finds a check by "
                                 "its name in verify.registry, so run unregistered checks with executor=None")
    # costliest first (an estimate: its points), so that no long check starts last while the other workers idle
    order = sorted(range(len(checks)), key=lambda i: -estimated_cost(checks[i], full))
    futures = {executor.submit(run_named, checks[i].name, full, seed): i for i in order}
    reports: list = [None] * len(checks)
    waiting = on_wait if on_wait is not None else (lambda: None)
    pending = set(futures)
    try:
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for f in sorted(finished, key=futures.get):
                reports[futures[f]] = f.result()
                done(reports[futures[f]])
            waiting()
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return reports
