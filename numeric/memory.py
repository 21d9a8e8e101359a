"""Counted global memory (HBM) and the two execution modes.

Counting convention (``docs/conventions.md`` §1): a *read* is one element moved from global memory
to on-chip memory by a tile load, a *write* one element moved back by a tile store; bytes are
elements x the array's dtype size.  Only :meth:`GlobalMemory.load` and :meth:`GlobalMemory.store`
move data, so nothing reaches an executor's registers uncounted.  ``flops`` counts matrix-multiply
FLOPs (``2 m n k`` per ``(m x k) @ (k x n)``) through :meth:`GlobalMemory.matmul`; elementwise work
(exp, max, scaling) is not counted, as in the FlashAttention papers.

Two modes run the *same* algorithm code:

* ``GlobalMemory(real=True)``: arrays hold NumPy data; loads return copies of tiles; outputs are real.
* ``GlobalMemory(real=False)``: arrays are shapes only; loads return :class:`Phantom` tiles that
  propagate shapes through NumPy syntax (ufuncs, ``@``, reductions, ``np.where``) without arithmetic.

All tallies are Python ints (unbounded), never NumPy int64, and count-only shapes are Python ints too:
a Phantom of ``10**30`` rows slices and broadcasts in pure Python, so sizes beyond int64 count exactly.

Bad input (a complex or object array placed in memory) is :class:`~base.errors.BadInput` naming the
array.  A shape mismatch inside a load, store or product is an executor's bug, not the caller's
input, and raises NumPy's own ``ValueError`` (as ``@`` and broadcasting do on real arrays).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from base import validate

__all__ = ["GlobalMemory", "HBMArray", "Phantom", "Tally", "is_phantom"]


# --------------------------------------------------------------------------------------- tallies
@dataclass
class Tally:
    """Exact counts of one run.  ``by_array`` maps array name -> [elements read, elements written]."""

    reads: int = 0
    writes: int = 0
    flops: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    by_array: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.reads + self.writes

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    def __add__(self, other: "Tally") -> "Tally":
        by = {k: list(v) for k, v in self.by_array.items()}
        for k, (r, w) in other.by_array.items():
            cur = by.setdefault(k, [0, 0])
            cur[0] += r
            cur[1] += w
        return Tally(self.reads + other.reads, self.writes + other.writes, self.flops + other.flops,
                     self.bytes_read + other.bytes_read, self.bytes_written + other.bytes_written, by)


# --------------------------------------------------------------------------------------- phantoms
def _shape_of(x):
    if isinstance(x, Phantom):
        return x.shape
    if isinstance(x, (int, float)):
        return ()
    return np.shape(x)


_BROADCAST_CACHE: dict = {}


def _broadcast(*shapes):
    """``np.broadcast_shapes`` in pure Python, memoised (the hot path of count-only runs)."""
    hit = _BROADCAST_CACHE.get(shapes)
    if hit is not None:
        return hit
    if len(_BROADCAST_CACHE) > 4096:
        _BROADCAST_CACHE.clear()
    _BROADCAST_CACHE[shapes] = out = _broadcast_uncached(shapes)
    return out


def _broadcast_uncached(shapes):
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        off = n - len(s)
        for k, v in enumerate(s):
            o = out[off + k]
            if o == 1:
                out[off + k] = v
            elif v != 1 and v != o:
                raise ValueError(f"shapes {shapes} do not broadcast")
    return tuple(out)


class Phantom:
    """A tile with a shape and no data: every NumPy operation returns a Phantom of the result shape."""

    __slots__ = ("shape",)
    __array_priority__ = 1000

    def __init__(self, shape):
        self.shape = shape if type(shape) is tuple else tuple(int(s) for s in shape)

    # --- basic attributes
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def T(self):
        return Phantom(self.shape[::-1])

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"Phantom{self.shape}"

    def __getitem__(self, idx):
        """The shape of ``x[idx]`` for slices, ints, ``None`` and ``...``, in pure Python (any size: no
        NumPy array, whose dimensions stop at 2**63)."""
        return Phantom(_index_shape(self.shape, idx))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        return Phantom(np.broadcast_to(np.empty((), np.int8), (self.size,)).reshape(shape).shape)

    def astype(self, *_a, **_k):
        return self

    def copy(self):
        return self

    # --- reductions
    def _reduce(self, axis=None, keepdims=False, **_):
        if axis is None:
            return Phantom(tuple(1 for _ in self.shape) if keepdims else ())
        axes = {a % self.ndim for a in (axis if isinstance(axis, tuple) else (axis,))}
        if keepdims:
            return Phantom(tuple(1 if i in axes else s for i, s in enumerate(self.shape)))
        return Phantom(tuple(s for i, s in enumerate(self.shape) if i not in axes))

    max = min = sum = mean = _reduce

    # --- arithmetic: broadcast shapes
    def _bin(self, other):
        o = _shape_of(other)
        if o == self.shape or o == ():
            return Phantom(self.shape)
        return Phantom(_broadcast(self.shape, o))

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _bin
    __truediv__ = __rtruediv__ = __pow__ = __lt__ = __le__ = __gt__ = __ge__ = _bin
    __and__ = __or__ = _bin

    def __neg__(self):
        return self

    def __matmul__(self, other):
        return Phantom(self.shape[:-1] + _shape_of(other)[1:])

    def __rmatmul__(self, other):
        return Phantom(_shape_of(other)[:-1] + self.shape[1:])

    # --- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__":
            shape = _broadcast(*(_shape_of(x) for x in inputs))
            out = Phantom(shape)
            return (out,) * ufunc.nout if ufunc.nout > 1 else out
        if method == "reduce":
            return Phantom(_shape_of(inputs[0]))._reduce(kwargs.get("axis", 0), kwargs.get("keepdims", False))
        raise TypeError(f"Phantom does not support {ufunc.__name__}.{method}")

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name == "where":
            return Phantom(_broadcast(*(_shape_of(a) for a in args)))
        if name in ("sum", "max", "amax", "min", "amin", "mean"):
            return Phantom(_shape_of(args[0]))._reduce(kwargs.get("axis", args[1] if len(args) > 1 else None),
                                                        kwargs.get("keepdims", False))
        if name in ("zeros_like", "ones_like", "empty_like", "full_like", "copy", "exp", "abs"):
            return Phantom(_shape_of(args[0]))
        if name in ("concatenate",):
            parts = args[0]
            axis = kwargs.get("axis", 0)
            shp = list(_shape_of(parts[0]))
            shp[axis] = sum(_shape_of(p)[axis] for p in parts)
            return Phantom(shp)
        raise TypeError(f"Phantom does not support numpy.{name}")


def _slice_len(s: slice, n: int) -> int:
    """``len(range(n)[s])`` by arithmetic (``len`` of a range stops at ``sys.maxsize``)."""
    start, stop, step = s.indices(n)
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def _index_shape(shape: tuple, idx) -> tuple:
    """The shape of ``array[idx]`` for an array of ``shape``: basic indexing (slices, ints, ``None``, one
    ``...``), computed from the index alone."""
    idx = idx if type(idx) is tuple else (idx,)
    if any(ix is Ellipsis for ix in idx):
        k = idx.index(Ellipsis)
        used = sum(1 for ix in idx if ix is not None and ix is not Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - used) + idx[k + 1:]
    out, dim = [], 0
    for ix in idx:
        if ix is None:
            out.append(1)
            continue
        if dim >= len(shape):
            raise IndexError(f"too many indices for a shape {shape}")
        if isinstance(ix, slice):
            out.append(_slice_len(ix, shape[dim]))
        elif isinstance(ix, (int, np.integer)) and not isinstance(ix, bool):
            if not -shape[dim] <= ix < shape[dim]:
                raise IndexError(f"index {ix} out of range for axis {dim} of size {shape[dim]}")
        else:
            raise TypeError("tile indices are slices, ints or None")
        dim += 1
    return tuple(out) + tuple(shape[dim:])


def is_phantom(x) -> bool:
    return isinstance(x, Phantom)


# --------------------------------------------------------------------------------------- memory
class HBMArray:
    """An array resident in global memory: a name, a shape, a dtype and (in real mode) its data.
    Executors must not touch ``data`` directly; they go through :meth:`GlobalMemory.load`/``store``."""

    __slots__ = ("name", "shape", "dtype", "data", "itemsize", "moved")

    def __init__(self, name, shape, dtype, data, moved=None):
        self.name, self.shape, self.dtype, self.data = name, tuple(shape), np.dtype(dtype), data
        self.itemsize = self.dtype.itemsize
        self.moved = [0, 0] if moved is None else moved   # [read, written]: its memory's by_array entry

    def __repr__(self):
        return f"HBMArray({self.name!r}, {self.shape}, {self.dtype})"


def _count(shape, idx) -> tuple:
    """Shape of ``array[idx]`` for slices/ints, computed from the index alone (no data)."""
    if type(idx) is tuple and len(idx) == 2 and len(shape) == 2:     # a 2-D tile: the most common load
        a, b = idx
        if type(a) is slice and type(b) is slice and a.step is None and b.step is None:
            s0, e0, s1, e1 = a.start or 0, a.stop, b.start or 0, b.stop
            if s0 >= 0 and s1 >= 0 and (e0 is None or e0 >= 0) and (e1 is None or e1 >= 0):
                n0, n1 = shape
                e0 = n0 if e0 is None or e0 > n0 else e0
                e1 = n1 if e1 is None or e1 > n1 else e1
                return (e0 - s0 if e0 > s0 else 0, e1 - s1 if e1 > s1 else 0)
    axes = (idx,) if type(idx) is slice else idx
    if type(axes) is tuple and len(axes) <= len(shape):
        out = ()                            # any rank: row blocks and tiles, a block slice
        for ix, n in zip(axes, shape):      # (step None, bounds None or >= 0) per axis
            if type(ix) is not slice or ix.step is not None:
                break
            start = 0 if ix.start is None else ix.start
            stop = n if ix.stop is None or ix.stop > n else ix.stop
            if start < 0 or stop < 0:
                break
            out += (stop - start if stop > start else 0,)
        else:
            return out + shape[len(axes):]
    if any(ix is None or ix is Ellipsis for ix in (idx if isinstance(idx, tuple) else (idx,))):
        raise TypeError("tile indices are slices or ints")
    return _index_shape(shape, idx)


class GlobalMemory:
    """The counted global memory of one run.  ``real=False`` runs shape-only (counts, no data); ``real`` is
    ``True`` or ``False`` (a truthy ``'False'`` is refused, naming it)."""

    def __init__(self, real: bool = True):
        self.real = validate.flag("real", real)
        self.tally = Tally()
        self.arrays: dict[str, HBMArray] = {}

    # ---- allocation (not counted: it is where data already lives before the kernel runs)
    def put(self, name: str, data) -> HBMArray:
        """Place an input array in global memory (a Phantom or shape tuple in count-only mode)."""
        if self.real:
            arr = validate.real_array(name, data)
            a = HBMArray(name, arr.shape, arr.dtype, arr, self.tally.by_array.setdefault(name, [0, 0]))
        else:
            shape = data if isinstance(data, tuple) else _shape_of(data)
            dtype = getattr(data, "dtype", np.float64) if not isinstance(data, (tuple, Phantom)) else np.float64
            a = HBMArray(name, shape, dtype, None, self.tally.by_array.setdefault(name, [0, 0]))
        self.arrays[name] = a
        return a

    def empty(self, name: str, shape, dtype=np.float64) -> HBMArray:
        """Allocate an uninitialised output array (allocation moves no data)."""
        a = HBMArray(name, shape, dtype, np.empty(shape, dtype) if self.real else None,
                     self.tally.by_array.setdefault(name, [0, 0]))
        self.arrays[name] = a
        return a

    # ---- the only two ways data moves
    def load(self, a: HBMArray, idx=slice(None), copies: int = 1):
        """Move ``a[idx]`` on chip.  ``copies``: how many thread blocks each load this same tile (each
        is charged; the data returned is the one tile)."""
        shape = _count(a.shape, idx)
        if len(shape) == 2:                   # a tile: the common load
            n = copies * shape[0] * shape[1]
        else:
            n = copies
            for s in shape:
                n *= s
        t = self.tally
        t.reads += n
        t.bytes_read += n * a.itemsize
        a.moved[0] += n
        if self.real:
            # A read-only view: executors never modify a tile in place (stores replace whole tiles),
            # so the view behaves as the on-chip copy would, without the cost of copying.
            view = a.data[idx]
            view.flags.writeable = False if view.base is not None else view.flags.writeable
            return view
        return Phantom(shape)

    def store(self, a: HBMArray, idx, tile) -> None:
        shape = _count(a.shape, idx)
        tshape = tile.shape if hasattr(tile, "shape") else _shape_of(tile)
        if tshape != shape and np.broadcast_shapes(tshape, shape) != shape:
            raise ValueError(f"store into {a.name}{list(shape)} of a tile of shape {tshape}")
        n = 1
        for s in shape:
            n *= s
        t = self.tally
        t.writes += n
        t.bytes_written += n * a.itemsize
        a.moved[1] += n
        if self.real:
            a.data[idx] = tile

    def result(self, a: HBMArray):
        """Read back an output after the run (the host's copy; not counted). ``None`` in count-only mode."""
        return a.data if self.real else None

    # ---- compute
    def matmul(self, x, y, out=None):
        """``x @ y`` counting ``2 m n k`` FLOPs; ``out``: an on-chip buffer of the result's shape to write it
        into (real mode; a buffer reused across steps, as a kernel reuses its registers)."""
        xs, ys = x.shape, y.shape
        if xs[-1] != ys[0]:
            raise ValueError(f"matmul shapes {xs} @ {ys}")
        m = xs[0] if len(xs) > 1 else 1
        n = ys[1] if len(ys) > 1 else 1
        self.tally.flops += 2 * m * n * xs[-1]
        if self.real:
            return np.matmul(x, y, out=out) if out is not None else x @ y
        return Phantom(xs[:-1] + ys[1:])
