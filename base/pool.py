"""Worker processes for the commands that run independent pieces side by side (``python -m verify``'s
checks, ``tilebound latex``'s models): how many a command starts by default, and the pool itself.

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

__all__ = ["MAX_JOBS", "usable_cpus", "process_pool", "stop_workers"]

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


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def process_pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` worker processes, forked where the platform can, each ignoring SIGINT."""
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_ignore_sigint)


def stop_workers() -> None:
    """Terminate this process's worker processes now (after a Ctrl-C or a closed pipe: the tasks they run
    are not waited for)."""
    for child in multiprocessing.active_children():
        child.terminate()
