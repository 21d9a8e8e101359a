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
