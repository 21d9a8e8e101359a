"""Run tile products on one BLAS thread.

Tiles are small (at most a few hundred rows), and a multi-threaded BLAS spends more on waking
and synchronising threads than it saves on such products; on a loaded 2-core machine a tile-by-tile
loop ran 2-3x slower with OpenBLAS' default threads.  Each tile is one SM's work anyway, so an
executor that multiplies tile by tile (the GEMM executor) pins BLAS to one thread while it runs and
restores the previous count afterwards.  (The attention executors multiply whole slabs of query
blocks at once, where BLAS threads pay off, so they do not pin.)

NumPy's bundled OpenBLAS is found in the process' memory map (the approach of threadpoolctl, done
in a few lines to avoid a dependency); where it is absent (other BLAS, other OS) this is a no-op.
"""

from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager

__all__ = ["single_threaded_blas"]

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
            "openblas_set_num_threads")
_lock = threading.Lock()
_api = None


def _find():
    global _api
    if _api is not None:
        return _api
    _api = False
    try:
        import numpy  # noqa: F401  (make sure its BLAS is loaded)
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line}
    except OSError:
        return _api
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(lib, name, None)
            getter = getattr(lib, name.replace("set_", "get_"), None)
            if setter is not None and getter is not None:
                getter.restype = ctypes.c_int
                _api = (setter, getter)
                return _api
    return _api


@contextmanager
def single_threaded_blas():
    api = _find()
    if not api:
        yield
        return
    setter, getter = api
    with _lock:
        before = getter()
        setter(1)
    try:
        yield
    finally:
        with _lock:
            setter(before)
