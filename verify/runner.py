"""What :mod:`verify` exports for running checks: :func:`run_checks` (serially, or on any
``concurrent.futures.Executor``), :func:`run_named` and :func:`run_named_many` (what a worker runs),
:func:`task_groups` and :func:`estimated_cost`; the checks themselves are :mod:`verify.core`'s.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, wait
from typing import Callable, Optional, Sequence

from base.errors import BadInput

from . import registry
from .core import Check, Property, Report, hypothesis_available, run_check

__all__ = ["run_checks", "run_named", "run_named_many", "task_groups", "estimated_cost"]


def run_named(name: str, full: bool = False, seed: int = 0) -> Report:
    """:func:`run_check` of the registered check called ``name`` (what :func:`run_checks` sends to an
    executor's worker: a check holds lambdas and does not pickle, its name does).  ``BadInput`` naming
    ``check`` when this process's registry has no such check."""
    found = [c for c in registry.all_checks() if c.name == name]
    if not found:
        raise BadInput("check", f"no check named {name!r} in this process's registry (verify.registry.all_checks);"
                                " a worker must have the same packages and plugins installed")
    return run_check(found[0], full=full, seed=seed)


def run_named_many(names: Sequence[str], full: bool = False, seed: int = 0) -> list:
    """:func:`run_named` of each of ``names`` in turn, in one task: the checks of one model, which then
    builds (SymPy work) in one worker only."""
    return [run_named(n, full=full, seed=seed) for n in names]


def _model_of(check) -> str:
    """The name of the model ``check`` evaluates (a property without a model: its own name)."""
    return getattr(getattr(check, "model", None), "name", None) or check.name


def task_groups(checks: Sequence) -> list:
    """The indices of ``checks`` by the model they evaluate, in order of first appearance: one executor task
    each in :func:`run_checks` (so no more workers than these are of use)."""
    groups: dict = {}
    for i, c in enumerate(checks):
        groups.setdefault(_model_of(c), []).append(i)
    return list(groups.values())


def estimated_cost(check, full: bool = False) -> int:
    """What :func:`run_checks` schedules by on an executor, costliest first: the points a run of ``check``
    evaluates (its pinned grid, plus its hypothesis draws where it draws), a listing's counted twice (each
    point counts the listing's lines and runs the model's executor too).  A property that states its grid's
    size (``grid_points``) is not made to run its grid here: the estimate builds no model in the parent."""
    hint = getattr(check, "grid_points", None)
    points = hint(full) if hint is not None else sum(1 for _ in check.grid(full))
    if check.strategy is not None and hypothesis_available():
        points += check.draws_full if full else check.draws
    return points * (2 if check.name.endswith(".listing") else 1)


def run_checks(checks: Sequence, full: bool = False, seed: int = 0, executor=None,
               on_report: Optional[Callable[[Report], None]] = None,
               on_point: Optional[Callable[[Report], None]] = None,
               on_wait: Optional[Callable[[], None]] = None) -> list:
    """Run ``checks`` (:class:`Check` and :class:`Property` objects, e.g. ``registry.select("gemm")``) and
    return their :class:`Report`\\ s in the order of ``checks``.

    With ``executor=None`` they run one after another in this process.  Otherwise the checks of each model
    are one task on ``executor`` (the model is built in one worker), any :class:`concurrent.futures.Executor`
    whose workers can import this package: a ``ProcessPoolExecutor``, or a Dask ``Client(...).get_executor()``
    for a cluster.  The task carries the checks' names and the worker looks them up (:func:`run_named_many`),
    so only registered checks can go to an executor; the tasks are submitted costliest first (the sum of
    their checks' :func:`estimated_cost`), and the reports come back in the order of ``checks``.  The reports
    are a serial run's: the same points, agreed, failures and largest size for each check (hypothesis draws
    from ``seed`` alone); only ``seconds`` differ.

    ``on_report(report)`` is called as each check finishes (in the order they finish; on an executor, a
    task's checks together as it finishes); ``on_point(report)`` after each point of a serial run (an
    executor's workers report per task only); ``on_wait()`` about
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
    # the checks of one model are one task (its model is built once, in one worker: a window model's build
    # is half a second), and the costliest tasks go first (an estimate: their points), so that no long one
    # starts last while the other workers idle
    cost = [estimated_cost(c, full) for c in checks]
    order = sorted(task_groups(checks), key=lambda g: -sum(cost[i] for i in g))
    futures = {executor.submit(run_named_many, [checks[i].name for i in g], full, seed): g for g in order}
    reports: list = [None] * len(checks)
    waiting = on_wait if on_wait is not None else (lambda: None)
    pending = set(futures)
    try:
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for f in sorted(finished, key=lambda f: futures[f][0]):
                for i, r in zip(futures[f], f.result()):
                    reports[i] = r
                    done(r)
            waiting()
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return reports
