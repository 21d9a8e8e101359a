"""A disk cache of tuning measurements: one entry per config, keyed by (GPU, space version, shape or bucket).

Layout: ``<root>/<GPU>/<key>.json``, one file per shape (``M4096_N4096_K4096``) or bucket
(``pow2-M256_N4096_K4096``), holding::

    {"format": 1, "gpu": "H100", "space_version": "3f2a...", "key": "M4096_N4096_K4096",
     "knobs": ["B_M", "B_N", "B_K", "warps", "s", "G_M"],
     "entries": {"256,128,32,8,4,1": 0.000148..., "256,256,128,8,4,1": null, ...}}

with ``null`` for a config that failed (cannot launch).  **One entry per config measurement**: asking for
configs adds only those not in the file (:meth:`TuningCache.measure`), so a space that grows re-tunes only
its new configs.  Triton's autotuner cache keys a result on the whole config list, so adding one config
re-tunes everything (triton issue #9822; ``docs/conventions.md`` §7).

**Space version** (:func:`space_version`): what a measurement means, so that a stale one is never
reused: the knob names, the launch rules, the warp grid, the GPU's time-model constants and the source of
the time model (every function and class of :mod:`tuning.schedule` and :mod:`tuning.l2_estimate`), hashed.
It does not include the knobs' *values*: adding values to the space keeps the version, and the cache then
measures only the new configs.  (On a GPU the version would hash the kernel's source and the compiler, as
Triton's cache key does.)

**Refusals.**  A file that is not valid JSON (nested too deeply to parse included), is larger than
:data:`MAX_FILE_BYTES`, lacks a field, or holds a value of the wrong type is *corrupt*: ``format`` must be an
int (not ``true``, not ``1.0``); ``gpu``, ``space_version`` and ``key`` strings; ``knobs`` a list of strings;
each entry's key a config of the space written exactly as this module writes it (six decimal ints joined by
commas: a key with spaces, signs, leading zeros or ``_``, ``" 128,128,32,4,3,1"``, is refused, not
normalised, since two spellings of one config would collide); and each time a positive number within a
float's range or ``null`` (``10**400``, NaN, ``0``, ``true`` are not).  A file written for another space
version, GPU or key is *foreign*.  Both are refused with :class:`~base.errors.BadInput` naming ``cache``
and saying to delete the file; neither is ever silently reused or overwritten.  A value from the file that
a refusal shows is cut short (:func:`base.typed.quoted`; an int beyond 30 digits as its digit count), so a
hostile file cannot print a message of its own length.  A measurement that is not a time
(NaN, zero, negative, ``-inf``) is refused when it is measured (:class:`~base.errors.BadInput` naming
``measure`` and the config), before anything is stored; ``inf`` is a config that failed (cannot launch),
stored as ``null``.

**Atomic writes.**  A file is written to a temporary file in the same folder, flushed and fsynced, then
renamed over the old one (:func:`base.files.replace_atomically`), so a reader sees the old file or the new
one, never a mix.
**Concurrent writers.**  A write holds an exclusive lock on its file (``filelock``'s :class:`FileLock` on
``<root>/<GPU>/.<key>.json.lock``, an OS lock the system releases when a process dies), reads the current
file again, merges its entries with the new ones and replaces it, so two processes tuning into one cache
lose no entry (a test runs two writers into one file).  ``filelock`` comes with the ``tune`` extra.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from base.errors import BadInput
from base.files import replace_atomically
from base.typed import quoted, shown

from . import l2_estimate, schedule
from .learned import gpu_constants
from .shapes import as_mnk

__all__ = ["FORMAT", "LOCK_TIMEOUT_S", "MAX_FILE_BYTES", "space_version", "TuningCache", "shape_key", "bucket_key"]

FORMAT = 1
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.=+-]{0,120}$")
#: an entry's key as :func:`_config_text` writes it: six ASCII decimal ints, no sign, space or leading zero
_ENTRY = re.compile(r"(?:0|[1-9][0-9]{0,8})(?:,(?:0|[1-9][0-9]{0,8})){5}")
#: the largest cache file read: a file of the whole space (6000 configs) is about 0.3 MB; a larger one is
#: refused as corrupt before it is parsed, so a hostile file cannot exhaust memory
MAX_FILE_BYTES = 64 * 2 ** 20
_FIELDS = {"format", "gpu", "space_version", "key", "knobs", "entries"}
#: seconds a writer waits for another writer's lock on one cache file before it gives up
LOCK_TIMEOUT_S = 120.0


def _source(obj) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        code = getattr(obj, "__code__", None)
        return repr(code.co_code) if code is not None else repr(obj)


def _model_source() -> str:
    parts = []
    from symbolic import gemm_lru      # the exact L2 count the time model prices HBM reads with
    for mod in (schedule, l2_estimate, gemm_lru):
        for name, obj in sorted(vars(mod).items()):
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", "") == mod.__name__:
                parts.append(f"{mod.__name__}.{name}\n{_source(obj)}")
    return "\n".join(parts)


def space_version(gpu="H100") -> str:
    """16 hex digits identifying what a measurement on ``gpu`` means (see the module's docstring)."""
    k = gpu_constants(gpu)
    constants = {f: repr(getattr(k, f)) for f in k.__dataclass_fields__ if f != "sources"}
    described = {
        "knobs": list(schedule.SPACE),
        "rules": [(r.key, r.reason, r.source) for r in schedule.LAUNCH_RULES],
        "warp_grid": sorted(schedule.WARP_GRID.items()),
        "mma": list(schedule.MMA_TILE),
        "constants": constants,
        "model": hashlib.sha256(_model_source().encode()).hexdigest(),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()[:16]


def shape_key(shape) -> str:
    """The cache key of a shape: ``M4096_N4096_K4096``."""
    M, N, K = as_mnk(shape)
    return f"M{M}_N{N}_K{K}"


def bucket_key(scheme: str, bucket_m: int, N: int, K: int) -> str:
    """The cache key of a bucket: ``<scheme>-M<bucket M>_N<N>_K<K>``."""
    return f"{scheme}-{shape_key((bucket_m, N, K))}"




def _config_text(c: schedule.GemmConfig) -> str:
    return ",".join(str(v) for v in c.as_tuple())


def _shown(value) -> str:
    """``value`` as a refusal shows it, cut short when long: a string quoted (:func:`base.typed.quoted`), a list
    of strings as a list of at most 8 of them, an int beyond 30 digits as its digit count
    (:func:`base.typed.shown`), anything else by its repr, cut as ``quoted`` cuts.  :mod:`tuning.strategies` and
    :mod:`tuning.scores` show what they refuse through it too."""
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value[:8]):
        more = f", ... ({len(value)} in all)" if len(value) > 8 else ""
        return "[" + ", ".join(quoted(v) for v in value[:8]) + more + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return shown(value)                             # 10**400 as "a 401-digit number"
    text = repr(value)
    return text if len(text) <= 40 else text[:20] + "..."


def _entry_time(t) -> float | None:
    """A file's time as a float (``inf`` for ``null``), or ``None`` when it is not a positive float-sized number
    (a bool, a string, NaN, 0, negative, ``10**400`` beyond a float)."""
    if t is None:
        return math.inf
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return None
    try:
        v = float(t)
    except OverflowError:                               # an int beyond the float range: no time is that long
        return None
    return v if math.isfinite(v) and v > 0 else None


def _checked_times(times, configs: list) -> list[float]:
    """``times`` (one per config) as floats, each positive (``inf``: failed); BadInput naming ``measure``
    and the first config whose time is not."""
    try:
        values = ([x.item() if isinstance(x, np.generic) else x for x in np.asarray(times, dtype=object).reshape(-1)]
                  if np.ndim(times) else None)
    except (TypeError, ValueError):
        values = None
    if values is None or np.ndim(times) != 1 or len(values) != len(configs):
        n = "no" if values is None else len(values)
        raise BadInput("measure", f"must return one time (seconds) per config: {n} times for {len(configs)} configs")
    out = []
    for c, t in zip(configs, values):
        try:
            v = math.nan if isinstance(t, (bool, str, bytes)) else float(t)
        except (TypeError, ValueError, OverflowError):
            v = math.nan
        if math.isnan(v) or v <= 0:
            raise BadInput("measure", f"measured {_shown(t)} s for config {c}; a time is positive seconds, or inf "
                                      "for a config that failed; nothing of this measurement was stored")
        out.append(v)
    return out


class TuningCache:
    """Per-config measurements of one GPU under ``root`` (created on first write)."""

    def __init__(self, root, gpu="H100"):
        if root is None or not str(root).strip():
            raise BadInput("cache", "an empty folder name; give the folder that holds (or will hold) the cache")
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise BadInput("cache", f"{str(self.root)!r} is a file, not a folder")
        k = gpu_constants(gpu)
        self.constants = k
        self.gpu = k.hw.name
        self.version = space_version(k)

    # ----------------------------------------------------------------------------- files
    def path(self, key: str) -> Path:
        if not isinstance(key, str) or not _KEY.match(key):
            raise BadInput("key", f"a cache key is letters, digits and _.=+- (at most 121), got {_shown(key)}")
        return self.root / self.gpu / f"{key}.json"

    def lock_path(self, key: str) -> Path:
        """The lock file writers of ``key`` take turns on (beside the cache file, hidden)."""
        path = self.path(key)
        return path.with_name(f".{path.name}.lock")

    def load(self, key: str) -> dict:
        """``{GemmConfig: seconds or inf}`` of the entries under ``key`` (empty when there is no file);
        :class:`~base.errors.BadInput` naming ``cache`` for a corrupt or foreign file."""
        path = self.path(key)
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_FILE_BYTES + 1)          # bounded: a larger file is refused, not read whole
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise BadInput("cache", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise self._corrupt(path, f"larger than {MAX_FILE_BYTES:,} bytes, far more than a cache file of the "
                                      "whole space")
        return self._parse(path, key, raw)

    def _corrupt(self, path: Path, why: str) -> BadInput:
        return BadInput("cache", f"{str(path)!r} is corrupt ({why}); it is not used: delete it to re-tune")

    def _parse(self, path: Path, key: str, raw: bytes) -> dict:
        try:
            doc = json.loads(raw.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._corrupt(path, f"not JSON: {exc}") from None
        except RecursionError:
            raise self._corrupt(path, "nested too deeply to be a cache file") from None
        if not isinstance(doc, dict) or set(doc) != _FIELDS:
            raise self._corrupt(path, f"needs exactly the fields {', '.join(sorted(_FIELDS))}")
        fmt = doc["format"]
        if type(fmt) is not int:                          # not true (== 1 in Python), not 1.0
            raise self._corrupt(path, f"format {_shown(fmt)} is not an integer")
        if fmt != FORMAT:
            raise BadInput("cache", f"{str(path)!r} has format {_shown(fmt)}, this tilebound reads {FORMAT}; "
                                    "it is not used: delete it to re-tune")
        for field in ("gpu", "space_version", "key"):
            if not isinstance(doc[field], str):
                raise self._corrupt(path, f"{field} {_shown(doc[field])} is not a string")
        knobs = doc["knobs"]
        if not isinstance(knobs, list) or not all(isinstance(k, str) for k in knobs):
            raise self._corrupt(path, f"knobs {_shown(knobs)} is not a list of names")
        if doc["space_version"] != self.version or doc["gpu"] != self.gpu or knobs != list(schedule.SPACE):
            raise BadInput("cache", f"{str(path)!r} was written for another space (version "
                                    f"{_shown(doc['space_version'])}, GPU {_shown(doc['gpu'])}, "
                                    f"knobs {_shown(knobs)}); "
                                    f"this is version {self.version!r} on {self.gpu}: it is not reused; delete it, "
                                    "or give another cache folder")
        if doc["key"] != key:
            raise BadInput("cache", f"{str(path)!r} holds key {_shown(doc['key'])}, not {key!r}: it is not used; "
                                    "delete it")
        entries = doc["entries"]
        if not isinstance(entries, dict):
            raise self._corrupt(path, "entries is not an object")
        out = {}
        for text, t in entries.items():
            c = None
            if _ENTRY.fullmatch(text):                    # exactly as _config_text writes it, so 6 small ints
                try:
                    c = schedule.GemmConfig(*(int(v) for v in text.split(",")))
                except BadInput:                          # a value outside the space
                    c = None
            if c is None:
                raise self._corrupt(path, f"entry {_shown(text)} is not a config of the space (its six "
                                          f"values joined by commas, as {_config_text(schedule.all_configs()[0])!r})")
            v = _entry_time(t)
            if v is None:
                raise self._corrupt(path, f"entry {_shown(text)} has time {_shown(t)}, not a positive number "
                                          "(a float's size) or null")
            out[c] = v
        return out

    def _write(self, key: str, entries: dict) -> None:
        path = self.path(key)
        try:
            import filelock
        except ImportError:
            raise BadInput("cache", "writing a tuning cache needs filelock (it locks each file so that concurrent "
                                    "tuners' entries merge), which is not installed; install the tune extra: "
                                    "pip install 'tilebound[tune]'") from None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput("cache", f"cannot create {str(path.parent)!r}: {exc.strerror or exc}") from None
        lock = filelock.FileLock(str(self.lock_path(key)), timeout=LOCK_TIMEOUT_S)
        try:
            with lock:                                  # read, merge and replace as one step among writers
                merged = {**self.load(key), **entries}  # a concurrent writer's entries are kept
                doc = {"format": FORMAT, "gpu": self.gpu, "space_version": self.version, "key": key,
                       "knobs": list(schedule.SPACE),
                       "entries": {_config_text(c): (None if math.isinf(t) else t)
                                   for c, t in sorted(merged.items(), key=lambda kv: kv[0].as_tuple())}}
                replace_atomically(path, json.dumps(doc, indent=0))
        except filelock.Timeout:
            raise BadInput("cache", f"another process has held {str(self.lock_path(key))!r} for "
                                    f"{LOCK_TIMEOUT_S:g} s; try again when it is done") from None
        except OSError as exc:
            raise BadInput("cache", f"cannot write {str(path)!r}: {exc.strerror or exc}") from None

    # ----------------------------------------------------------------------------- measurements
    def measure(self, key: str, configs: Sequence, measure: Callable) -> tuple[np.ndarray, int]:
        """Times of ``configs`` under ``key``: cached ones from the file, the others from
        ``measure(list of GemmConfig) -> times`` (called once, on the missing configs only), then stored.
        A time is positive seconds, or ``inf`` for a config that failed; anything else (NaN, zero, negative,
        ``-inf``, not a number, the wrong count) is :class:`~base.errors.BadInput` naming ``measure`` and the
        first bad config, and nothing of that call is stored.
        Returns ``(times in the order of configs, how many were measured now)``."""
        configs = [c if isinstance(c, schedule.GemmConfig) else schedule.GemmConfig(*c) for c in configs]
        have = self.load(key)
        missing = list(dict.fromkeys(c for c in configs if c not in have))
        if missing:
            fresh = dict(zip(missing, _checked_times(measure(missing), missing)))
            self._write(key, fresh)
            have.update(fresh)
        return np.array([have[c] for c in configs]), len(missing)

    def times(self, shape, key: str | None = None, configs: Sequence | None = None) -> tuple[np.ndarray, int]:
        """Times of ``configs`` (default: every config of the space) on ``shape`` through the cache, measured by
        the analytic model when missing; ``key`` defaults to :func:`shape_key`."""
        M, N, K = as_mnk(shape)
        configs = schedule.all_configs() if configs is None else configs
        return self.measure(shape_key((M, N, K)) if key is None else key, configs,
                            lambda cs: schedule.times_for_shape(M, N, K, configs=cs, hw=self.constants))
