"""``base.pool``: the usable CPUs and :func:`~base.pool.run_each` (results in the tasks' order, in one process
or on workers; an error in a task reaches the caller as itself)."""

from __future__ import annotations

import os

import pytest

from base.errors import BadInput
from base.pool import MAX_JOBS, run_each, usable_cpus


def _power(x: int, k: int) -> tuple:
    if x < 0:
        raise BadInput("x", f"must be >= 0, got {x}")
    return x ** k, os.getpid()


def test_usable_cpus_are_the_affinity_mask():
    want = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    assert usable_cpus() == max(1, min(want, MAX_JOBS))


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_come_back_in_the_tasks_order(jobs):
    tasks = [(x, 3) for x in (7, 0, 2**70, 5, 1, 12)]
    got = run_each(_power, tasks, jobs, "test", "task")
    assert [v for v, _ in got] == [343, 0, 2**210, 125, 1, 1728]          # exact: ints past int64
    pids = {pid for _, pid in got}
    assert (pids == {os.getpid()}) if jobs == 1 else (os.getpid() not in pids)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_error_in_a_task_is_the_callers(jobs):
    with pytest.raises(BadInput) as e:
        run_each(_power, [(1, 2), (-3, 2), (4, 2)], jobs, "test", "task")
    assert e.value.param == "x" and "-3" in e.value.problem


def test_one_task_runs_here():
    (value, pid), = run_each(_power, [(2, 10)], 8, "test", "task")
    assert value == 1024 and pid == os.getpid()


@pytest.mark.parametrize("text, want", [("1", 1), ("256", 256), (" 3 ", 3), ("auto", None)])
def test_jobs_from_takes_auto_and_1_to_256(text, want):
    from base.pool import jobs_from
    assert jobs_from(text) == (usable_cpus() if want is None else want)


@pytest.mark.parametrize("text", ["0", "257", "-1", "", "two", "2.5", "Auto", "9" * 5000, str(10**30)])
def test_jobs_from_refuses_the_rest_naming_jobs(text):
    from base.pool import jobs_from
    with pytest.raises(BadInput) as e:
        jobs_from(text)
    assert e.value.param == "jobs" and "1 to 256 or auto" in e.value.problem and len(str(e.value)) < 200


_STARTING_WORKERS = """
import multiprocessing, os, signal, sys
from base import pool

def on_sigint(signum, frame):                   # base.console.run's handler: the parent's, inherited by a fork
    raise KeyboardInterrupt

signal.signal(signal.SIGINT, on_sigint)
for _ in range(5):
    p = pool.process_pool(2)
    futures = [p.submit(abs, -k) for k in range(4)]
    for child in multiprocessing.active_children():   # a Ctrl-C reaching the workers as they start
        os.kill(child.pid, signal.SIGINT)
    print(sorted(f.result() for f in futures))
    p.shutdown()
"""


def test_a_ctrl_c_as_the_workers_start_is_ignored_by_them():
    """A worker is started with SIGINT blocked until its initializer ignores it: a Ctrl-C that reaches it in
    that moment (CI saw one, inside multiprocessing's start-up) neither prints a traceback nor breaks the pool."""
    import subprocess
    import sys
    from pathlib import Path
    p = subprocess.run([sys.executable, "-c", _STARTING_WORKERS], capture_output=True, text=True, timeout=600,
                       cwd=Path(__file__).resolve().parents[2])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.splitlines() == ["[0, 1, 2, 3]"] * 5
