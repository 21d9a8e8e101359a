"""The one timing helper the bench scripts share (run them as ``python bench/<script>.py``)."""

import time


def best(fn, repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls, in seconds (the least disturbed run on a noisy machine)."""
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def fresh(cmd, root) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one fresh process run in ``root`` with the repository first on its
    path (CPU: user + system of the child, less hit by a shared machine than the wall)."""
    import os
    import resource
    import subprocess
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def interleaved(commands: dict, repeat: int, root) -> dict:
    """``{name: [(wall, cpu), ...]}``: each command of ``commands`` (``{name: argv}``) run once untimed to warm
    the file cache, then ``repeat`` rounds of every command in turn, so a load that comes and goes hits all
    of them alike."""
    for cmd in commands.values():
        fresh(cmd, root)
    times = {name: [] for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            times[name].append(fresh(cmd, root))
    return times
