"""Worker processes for the commands that run independent pieces side by side (``python -m verify``'s
checks, ``tilebound latex``'s and ``html``'s models): how many a command starts by default, the pool itself,
and :func:`run_each`, a function over tasks in order with a progress bar.

``--jobs auto`` is :func:`usable_cpus`: the CPUs this process may run on.  :func:`process_pool` forks its
workers where the platform can (they inherit what the parent has imported and discovered; elsewhere they
start fresh and import it again), and each worker ignores SIGINT: a Ctrl-C is the parent's to handle
(:func:`base.console.run`), which stops the workers (:func:`stop_workers`) and exits 130.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from typing import Sequence

__all__ = ["MAX_JOBS", "usable_cpus", "jobs_from", "process_pool", "stop_workers", "run_each"]

#: the most worker processes a ``--jobs`` starts
MAX_JOBS = 256


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one, as a container's
    CPU limit shows there; else ``os.cpu_count()``), from 1 to :data:`MAX_JOBS`: what ``--jobs auto`` starts."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_JOBS))


def jobs_from(text: str) -> int:
    """A ``--jobs`` value: ``auto`` (:func:`usable_cpus`) or an integer from 1 to :data:`MAX_JOBS`;
    :class:`~base.errors.BadInput` naming ``jobs`` otherwise."""
    from .errors import BadInput
    if text == "auto":
        return usable_cpus()
    want = f"an integer from 1 to {MAX_JOBS} or auto"
    try:
        n = int(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise BadInput("jobs", f"{want}, got {shown!r}") from None
    if not 1 <= n <= MAX_JOBS:
        raise BadInput("jobs", f"{want}, got {n:,}")
    return n


#: where the platform can block a signal for a while (POSIX): workers are started with SIGINT blocked
_CAN_BLOCK = hasattr(signal, "pthread_sigmask")


def _ignore_sigint() -> None:
    """A worker's first act: ignore SIGINT, then take it off the mask it was started with (a Ctrl-C sent to the
    process group while it started is dropped, not raised inside multiprocessing's start-up)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _CAN_BLOCK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class _Pool(ProcessPoolExecutor):
    """A pool whose workers are started (inside :meth:`submit`: all at the first one where it forks) with
    SIGINT blocked, so that none can see a Ctrl-C before its initializer ignores it; the parent's own Ctrl-C
    is held for that moment and raised as the submit returns."""

    def submit(self, fn, /, *args, **kwargs):
        if not _CAN_BLOCK:
            return super().submit(fn, *args, **kwargs)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return super().submit(fn, *args, **kwargs)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def process_pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` worker processes, forked where the platform can, each ignoring SIGINT from its start."""
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return _Pool(max_workers=jobs, mp_context=ctx, initializer=_ignore_sigint)


def stop_workers() -> None:
    """Terminate this process's worker processes now (after a Ctrl-C or a closed pipe: the tasks they run
    are not waited for)."""
    for child in multiprocessing.active_children():
        child.terminate()


def run_each(fn, tasks: Sequence[tuple], jobs: int, what: str, unit: str, labels: Sequence[str] = ()) -> list:
    """``[fn(*task) for task in tasks]``, in that order: in this process with ``jobs <= 1`` (or one task), else
    one task each on :func:`process_pool` (``fn`` a module-level function and the tasks' arguments picklable;
    what comes back, too).  A progress bar on a terminal's stderr (:func:`base.console.progress`) counts the
    ``unit``\\ s done under ``what``, each one's label beside it in this process.  An error in a task stops
    the run as the task's result is read; a Ctrl-C, a closed pipe or an error stops the workers at once."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from . import console

    tasks = list(tasks)
    jobs = min(jobs, len(tasks))
    with console.progress(len(tasks), what, unit=unit) as shown:
        if jobs <= 1:
            done = []
            for k, task in enumerate(tasks):
                if k < len(labels):
                    shown.note(labels[k])
                done.append(fn(*task))
                shown.advance()
            return done
        pool = process_pool(jobs)
        try:
            futures = [pool.submit(fn, *task) for task in tasks]
            pending = set(futures)
            while pending:                      # the bar: tasks done, its clock redrawn twice a second
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for f in finished:
                    f.result()                  # an error in a task stops the run here
                if finished:
                    shown.advance(len(finished))
                else:
                    shown.tick()
            return [f.result() for f in futures]
        except BaseException:                   # Ctrl-C, a closed pipe, an error in one task: stop at once
            stop_workers()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
