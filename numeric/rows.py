"""Row-kernel executors: softmax (naive and fused), RMSNorm (alone and with the residual add), SwiGLU, RoPE,
program by program through counted global memory.

Each kernel is written from its source (this module does not import :mod:`symbolic`): Triton tutorial 02's
``naive_softmax`` (five PyTorch kernels) and ``softmax_kernel`` (triton-lang/triton
``python/tutorials/02-fused-softmax.py:41-58, 83-108``); vLLM's ``rms_norm_kernel`` and
``fused_add_rms_norm_kernel`` (``csrc/layernorm_kernels.cu:19-48, 54-106``), ``silu_and_mul``
(``csrc/activation_kernels.cu:21-48``) and ``rotary_embedding_kernel`` with ``is_neox``
(``csrc/pos_encoding_kernels.cu:8-92``).  A program handles a block of ``B_R`` rows (the last block may be
partial); only :meth:`~numeric.memory.GlobalMemory.load` and ``store`` move data, so every element is counted,
and bytes are each array's elements times its element type (:data:`DTYPES`, :mod:`base.dtypes`).

Arithmetic is counted as the kernel does it, by an :class:`Alu` that performs each NumPy operation and adds
the size of its result (``ops``: one per elementwise add, subtract, multiply, divide, exp, rsqrt; a row
reduction of ``n`` values ``n - 1``); ``exps`` and ``rsqrts`` are the special-function ones among them.

Real mode (``real=True``) computes in float64 and returns the outputs (the tests compare them with plain
NumPy); count-only mode runs the same programs on :class:`~numeric.memory.Phantom` tiles, so sizes beyond
int64 count exactly.  Bad input is :class:`~base.errors.BadInput` naming the parameter, and so is a run of more
than :data:`MAX_PROGRAMS` programs or (real mode) :data:`MAX_ELEMENTS` elements, refused before it starts
(with ``unfused``, the unfused pair's programs too); ``real`` and ``unfused`` take ``True`` or ``False`` only
(``'False'`` is a truthy string: refused, naming the flag).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from .memory import GlobalMemory

__all__ = ["RowRun", "Alu", "softmax_naive", "softmax_fused", "rms_norm", "add_then_rms_norm", "fused_add_rms_norm",
           "silu_and_mul", "silu_then_mul", "rotary_embedding", "rope_cache", "DTYPES", "MAX_PROGRAMS",
           "MAX_ELEMENTS", "EPS"]

#: at most this many programs (row blocks, or kernel launches x row blocks) in a run
MAX_PROGRAMS = 1 << 20
#: real mode: at most this many elements of all arrays together
MAX_ELEMENTS = 1 << 26
#: RMSNorm's epsilon (Llama: 1e-5 / 1e-6; any value, the counts do not depend on it)
EPS = 1e-6
#: element type of each array, by kernel family (the tutorial's softmax is FP32; LLM activations BF16)
DTYPES = {"softmax": "fp32", "norm": "bf16", "act": "bf16", "rope": "bf16", "positions": "int64"}


@dataclass
class RowRun:
    """Counts of one run (exact ints; ``ratio_unfused`` a Fraction) and, in real mode, the outputs."""

    counts: dict
    out: Optional[tuple] = None

    def __getitem__(self, key):
        return self.counts[key]


class Alu:
    """Elementwise arithmetic that counts itself: each method performs the operation (on arrays or Phantoms)
    and adds the number of results to ``ops``."""

    def __init__(self):
        self.ops = self.exps = self.rsqrts = 0

    def _n(self, out):
        self.ops += out.size
        return out

    def add(self, a, b):
        return self._n(a + b)

    def sub(self, a, b):
        return self._n(a - b)

    def mul(self, a, b):
        return self._n(a * b)

    def div(self, a, b):
        return self._n(a / b)

    def exp(self, a):
        out = np.exp(a)
        self.exps += out.size
        return self._n(out)

    def rsqrt(self, a):
        out = 1.0 / np.sqrt(a)
        self.rsqrts += out.size
        return self._n(out)

    def row_max(self, x):
        self.ops += x.shape[0] * (x.shape[1] - 1)
        return x.max(axis=1)

    def row_sum(self, x):
        self.ops += x.shape[0] * (x.shape[1] - 1)
        return x.sum(axis=1)


class _Kernel:
    def __init__(self, real: bool, dtypes: dict):
        self.real = validate.flag("real", real)
        self.mem, self.alu, self.dtypes, self.launches = GlobalMemory(real=self.real), Alu(), dtypes, 0

    def put(self, name, shape, data):
        if self.real:
            arr = np.asarray(validate.real_array(name, data), dtype=float)
            if arr.shape != shape:
                raise BadInput(name, f"shape {arr.shape}, expected {shape}")
            return self.mem.put(name, arr)
        if data is not None:
            raise BadInput(name, "given arrays need real=True")
        return self.mem.put(name, shape)

    def empty(self, name, shape):
        return self.mem.empty(name, shape)

    def launch(self):
        self.launches += 1

    def counts(self) -> dict:
        t = self.mem.tally
        b = sum((r + w) * element_bytes(self.dtypes[name]) for name, (r, w) in t.by_array.items())
        return {"reads": t.reads, "writes": t.writes, "ops": self.alu.ops, "exps": self.alu.exps,
                "rsqrts": self.alu.rsqrts, "bytes": b, "launches": self.launches,
                **{f"reads_{k}": r for k, (r, _) in t.by_array.items()}}

    def result(self, *arrays):
        return tuple(self.mem.result(a) for a in arrays) if self.real else None


def _sizes(M, N, B_R, real, programs, elements):
    """``M, N, B_R`` validated, ``real`` a bool, and the run's programs (and real elements) within budget."""
    real = validate.flag("real", real)
    M, N, B_R = validate.positive_int("M", M), validate.positive_int("N", N), validate.positive_int("B_R", B_R)
    blocks = -(-M // B_R)
    validate.budget("B_R", blocks * programs, MAX_PROGRAMS, "programs (row blocks x kernels)", "MAX_PROGRAMS",
                    "take a larger B_R")
    if real:
        validate.budget("M", elements(M, N), MAX_ELEMENTS, "real elements", "MAX_ELEMENTS", "use real=False")
    return M, N, B_R


def _unfused(unfused, M, N, B_R, kernels) -> bool:
    """``unfused`` as a bool (``'False'`` is truthy: refused), and, when set, the unfused pair's budget
    (``kernels`` launches over the same row blocks) checked now, before the fused run starts."""
    unfused = validate.flag("unfused", unfused)
    if unfused:
        _sizes(M, N, B_R, False, kernels, None)
    return unfused


def _blocks(M, B_R):
    return (slice(i, min(i + B_R, M)) for i in range(0, M, B_R))


def _rng_x(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------------------------------------------- softmax
def softmax_naive(M, N, B_R=1, *, real=False, x=None, seed=0) -> RowRun:
    """Triton tutorial 02's ``naive_softmax``: five kernels (max, subtract, exp, sum, divide), each reading its
    operands from and writing its result to global memory, row block by row block."""
    M, N, B_R = _sizes(M, N, B_R, real, 5, lambda m, n: 4 * m * n + 2 * m)
    k = _Kernel(real, {n: DTYPES["softmax"] for n in ("x", "x_max", "z", "num", "den", "y")})
    if real and x is None:
        x = _rng_x((M, N), seed)
    X = k.put("x", (M, N), x)
    XM, Z, E, S, Y = (k.empty(n, s) for n, s in (("x_max", (M,)), ("z", (M, N)), ("num", (M, N)), ("den", (M,)),
                                                  ("y", (M, N))))
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):                       # x_max = x.max(dim=1)[0]
        mem.store(XM, r, alu.row_max(mem.load(X, (r, slice(None)))))
    k.launch()
    for r in _blocks(M, B_R):                       # z = x - x_max[:, None]
        mem.store(Z, (r, slice(None)), alu.sub(mem.load(X, (r, slice(None))), mem.load(XM, r)[:, None]))
    k.launch()
    for r in _blocks(M, B_R):                       # numerator = torch.exp(z)
        mem.store(E, (r, slice(None)), alu.exp(mem.load(Z, (r, slice(None)))))
    k.launch()
    for r in _blocks(M, B_R):                       # denominator = numerator.sum(dim=1)
        mem.store(S, r, alu.row_sum(mem.load(E, (r, slice(None)))))
    k.launch()
    for r in _blocks(M, B_R):                       # ret = numerator / denominator[:, None]
        mem.store(Y, (r, slice(None)), alu.div(mem.load(E, (r, slice(None))), mem.load(S, r)[:, None]))
    return RowRun(k.counts(), k.result(Y))


def softmax_fused(M, N, B_R=1, *, real=False, x=None, seed=0, unfused=True) -> RowRun:
    """Triton tutorial 02's ``softmax_kernel``: a program loads its rows once (the mask keeps the ``N`` valid
    elements of the power-of-two block), computes max, subtract, exp, sum, divide on chip, and stores them once.
    With ``unfused``, ``ratio_unfused`` is :func:`softmax_naive`'s traffic over this one's."""
    M, N, B_R = _sizes(M, N, B_R, real, 1, lambda m, n: 2 * m * n)
    unfused = _unfused(unfused, M, N, B_R, 5)
    k = _Kernel(real, {"x": DTYPES["softmax"], "y": DTYPES["softmax"]})
    if real and x is None:
        x = _rng_x((M, N), seed)
    X, Y = k.put("x", (M, N), x), k.empty("y", (M, N))
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):
        row = mem.load(X, (r, slice(None)))
        z = alu.sub(row, alu.row_max(row)[:, None])
        num = alu.exp(z)
        mem.store(Y, (r, slice(None)), alu.div(num, alu.row_sum(num)[:, None]))
    c = k.counts()
    if unfused:
        n = softmax_naive(M, N, B_R).counts
        c["ratio_unfused"] = Fraction(n["reads"] + n["writes"], c["reads"] + c["writes"])
    return RowRun(c, k.result(Y))


# ------------------------------------------------------------------------------------- RMSNorm
def _rms_scale(k, rows_sq_source, N):
    """The per-row scale rsqrt(sum(x^2)/N + eps) from a loaded block (counted)."""
    alu = k.alu
    ss = alu.row_sum(alu.mul(rows_sq_source, rows_sq_source))
    return alu.rsqrt(alu.add(alu.div(ss, N), EPS))


def rms_norm(M, N, B_R=1, *, real=False, x=None, w=None, seed=0) -> RowRun:
    """vLLM's ``rms_norm_kernel``: a program loads the weight, then for its rows reads ``x`` for the sum of
    squares (pass 1), reads it again to scale and multiply by the weight (pass 2), and stores ``y``."""
    M, N, B_R = _sizes(M, N, B_R, real, 1, lambda m, n: 2 * m * n + n)
    k = _Kernel(real, {"x": DTYPES["norm"], "w": DTYPES["norm"], "y": DTYPES["norm"]})
    if real:
        x = _rng_x((M, N), seed) if x is None else x
        w = _rng_x((N,), seed + 1) if w is None else w
    X, W, Y = k.put("x", (M, N), x), k.put("w", (N,), w), k.empty("y", (M, N))
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):
        wt = mem.load(W, slice(None))
        s = _rms_scale(k, mem.load(X, (r, slice(None))), N)            # pass 1
        xb = mem.load(X, (r, slice(None)))                              # pass 2
        mem.store(Y, (r, slice(None)), alu.mul(alu.mul(xb, s[:, None]), wt[None, :]))
    c = k.counts()
    return RowRun(c, k.result(Y))


def fused_add_rms_norm(M, N, B_R=1, *, real=False, x=None, residual=None, w=None, seed=0, unfused=True) -> RowRun:
    """vLLM's ``fused_add_rms_norm_kernel``: pass 1 reads ``input`` and ``residual``, stores their sum into
    ``residual``; pass 2 reads ``residual`` again, scales it, multiplies by the weight and stores it into
    ``input``.  Outputs ``(input, residual)``.  With ``unfused``, ``ratio_unfused`` is
    :func:`add_then_rms_norm`'s traffic over this one's."""
    M, N, B_R = _sizes(M, N, B_R, real, 1, lambda m, n: 2 * m * n + n)
    unfused = _unfused(unfused, M, N, B_R, 2)
    k = _Kernel(real, {"x": DTYPES["norm"], "r": DTYPES["norm"], "w": DTYPES["norm"]})
    if real:
        x = _rng_x((M, N), seed) if x is None else x
        residual = _rng_x((M, N), seed + 2) if residual is None else residual
        w = _rng_x((N,), seed + 1) if w is None else w
        x, residual = np.array(x, dtype=float), np.array(residual, dtype=float)   # updated in place: copies
    X, R, W = k.put("x", (M, N), x), k.put("r", (M, N), residual), k.put("w", (N,), w)
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):
        wt = mem.load(W, slice(None))
        z = alu.add(mem.load(X, (r, slice(None))), mem.load(R, (r, slice(None))))   # pass 1
        mem.store(R, (r, slice(None)), z)
        s = _rms_scale(k, z, N)
        zb = mem.load(R, (r, slice(None)))                                            # pass 2
        mem.store(X, (r, slice(None)), alu.mul(alu.mul(zb, s[:, None]), wt[None, :]))
    c = k.counts()
    if unfused:
        u = add_then_rms_norm(M, N, B_R).counts
        c["ratio_unfused"] = Fraction(u["reads"] + u["writes"], c["reads"] + c["writes"])
    return RowRun(c, k.result(X, R))


def add_then_rms_norm(M, N, B_R=1, *, real=False, x=None, residual=None, w=None, seed=0) -> RowRun:
    """The unfused pair: an add kernel (``residual = x + residual``: reads both, writes one), then
    :func:`rms_norm` on the sum.  Outputs ``(y, residual)``."""
    M, N, B_R = _sizes(M, N, B_R, real, 2, lambda m, n: 4 * m * n + n)
    k = _Kernel(real, {"x": DTYPES["norm"], "r": DTYPES["norm"], "w": DTYPES["norm"], "y": DTYPES["norm"]})
    if real:
        x = _rng_x((M, N), seed) if x is None else x
        residual = _rng_x((M, N), seed + 2) if residual is None else residual
        w = _rng_x((N,), seed + 1) if w is None else w
        residual = np.array(residual, dtype=float)
    X, R, W, Y = k.put("x", (M, N), x), k.put("r", (M, N), residual), k.put("w", (N,), w), k.empty("y", (M, N))
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):
        mem.store(R, (r, slice(None)), alu.add(mem.load(X, (r, slice(None))), mem.load(R, (r, slice(None)))))
    k.launch()
    for r in _blocks(M, B_R):
        wt = mem.load(W, slice(None))
        s = _rms_scale(k, mem.load(R, (r, slice(None))), N)
        zb = mem.load(R, (r, slice(None)))
        mem.store(Y, (r, slice(None)), alu.mul(alu.mul(zb, s[:, None]), wt[None, :]))
    return RowRun(k.counts(), k.result(Y, R))


# ------------------------------------------------------------------------------------- SwiGLU
def _silu(alu, g):
    return alu.div(g, alu.add(1.0, alu.exp(-g)))        # x / (1 + expf(-x)): the negation folds into exp


def silu_and_mul(M, N, B_R=1, *, real=False, x=None, seed=0, unfused=True) -> RowRun:
    """vLLM's ``silu_and_mul``: for each row of the ``[M, 2N]`` input, loads ``gate = x[:, :N]`` and
    ``up = x[:, N:]`` once and stores ``silu(gate) * up``.  With ``unfused``, ``ratio_unfused`` is
    :func:`silu_then_mul`'s traffic over this one's."""
    M, N, B_R = _sizes(M, N, B_R, real, 1, lambda m, n: 3 * m * n)
    unfused = _unfused(unfused, M, N, B_R, 2)
    k = _Kernel(real, {"x": DTYPES["act"], "out": DTYPES["act"]})
    if real and x is None:
        x = _rng_x((M, 2 * N), seed)
    X, O = k.put("x", (M, 2 * N), x), k.empty("out", (M, N))
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):
        g, u = mem.load(X, (r, slice(0, N))), mem.load(X, (r, slice(N, 2 * N)))
        mem.store(O, (r, slice(None)), alu.mul(_silu(alu, g), u))
    c = k.counts()
    if unfused:
        v = silu_then_mul(M, N, B_R).counts
        c["ratio_unfused"] = Fraction(v["reads"] + v["writes"], c["reads"] + c["writes"])
    return RowRun(c, k.result(O))


def silu_then_mul(M, N, B_R=1, *, real=False, x=None, seed=0) -> RowRun:
    """The unfused pair: ``s = F.silu(gate)`` (reads ``gate``, writes ``s``), then ``s * up``."""
    M, N, B_R = _sizes(M, N, B_R, real, 2, lambda m, n: 4 * m * n)
    k = _Kernel(real, {"x": DTYPES["act"], "s": DTYPES["act"], "out": DTYPES["act"]})
    if real and x is None:
        x = _rng_x((M, 2 * N), seed)
    X, S, O = k.put("x", (M, 2 * N), x), k.empty("s", (M, N)), k.empty("out", (M, N))
    mem, alu = k.mem, k.alu
    k.launch()
    for r in _blocks(M, B_R):
        mem.store(S, (r, slice(None)), _silu(alu, mem.load(X, (r, slice(0, N)))))
    k.launch()
    for r in _blocks(M, B_R):
        mem.store(O, (r, slice(None)), alu.mul(mem.load(S, (r, slice(None))), mem.load(X, (r, slice(N, 2 * N)))))
    return RowRun(k.counts(), k.result(O))


# ------------------------------------------------------------------------------------- RoPE
def rope_cache(max_pos: int, d: int, base: float = 10000.0) -> np.ndarray:
    """vLLM's ``cos_sin_cache`` (``[max_pos, d]``: ``cos`` then ``sin`` of ``pos * inv_freq``, ``inv_freq_i =
    base^(-2i/d)``)."""
    inv = base ** (-np.arange(0, d, 2) / d)
    f = np.outer(np.arange(max_pos), inv)
    return np.concatenate([np.cos(f), np.sin(f)], axis=1)


def rotary_embedding(T, H, H_kv, d, B_R=1, *, real=False, q=None, k=None, positions=None, cache=None,
                     seed=0) -> RowRun:
    """vLLM's ``rotary_embedding_kernel`` with ``is_neox`` (rotate-half): per token, its position, then for every
    query and key head and pair ``cos``, ``sin`` from the position's cache row and the pair ``(x_i, x_{i+d/2})``,
    rotated and stored in place.  ``B_R`` tokens a program; the cache row of each head is charged once per head
    (``copies``).  Count-only mode runs a prefill, positions ``0 .. T - 1``; real mode any positions (default
    random).  Outputs ``(q, k)``."""
    T, H, H_kv, d = (validate.positive_int(n, v) for n, v in (("T", T), ("H", H), ("H_kv", H_kv), ("d", d)))
    if d % 2:
        raise BadInput("d", f"rotate-half pairs x_i with x_(i + d/2): d must be even, got {d}")
    B_R = validate.positive_int("B_R", B_R)
    validate.budget("B_R", -(-T // B_R), MAX_PROGRAMS, "programs", "MAX_PROGRAMS", "take a larger B_R")
    kern = _Kernel(real, {"q": DTYPES["rope"], "k": DTYPES["rope"], "cache": DTYPES["rope"],
                          "positions": DTYPES["positions"]})
    half, heads = d // 2, H + H_kv
    if real:
        validate.budget("T", T * heads * d, MAX_ELEMENTS, "real elements", "MAX_ELEMENTS", "use real=False")
        rng = np.random.default_rng(seed)
        q = rng.standard_normal((T, H, d)) if q is None else np.array(q, dtype=float)
        k = rng.standard_normal((T, H_kv, d)) if k is None else np.array(k, dtype=float)
        positions = rng.integers(0, 4 * T, T) if positions is None else np.asarray(positions)
        if positions.shape != (T,) or positions.dtype.kind not in "iu" or (positions < 0).any():
            raise BadInput("positions", f"needs {T} nonnegative integer positions")
        cache = rope_cache(int(positions.max()) + 1, d) if cache is None else cache
        Pos = kern.put("positions", (T,), positions.astype(float))
        C = kern.put("cache", (np.shape(cache)[0], d), cache)
    else:
        Pos, C = kern.put("positions", (T,), None), kern.put("cache", (T, d), None)
    Q, K = kern.put("q", (T, H, d), q), kern.put("k", (T, H_kv, d), k)
    mem, alu = kern.mem, kern.alu
    kern.launch()
    lo, hi = slice(0, half), slice(half, d)
    for r in _blocks(T, B_R):
        pos = mem.load(Pos, r)
        if real:     # each token's cache row, once per head (cos and sin of every pair, :18-19)
            rows = [int(p) for p in pos]
            cos = np.stack([mem.load(C, (p, lo), copies=heads) for p in rows])
            sin = np.stack([mem.load(C, (p, hi), copies=heads) for p in rows])
        else:        # a prefill: the tokens' rows are the block's rows
            cos, sin = mem.load(C, (r, lo), copies=heads), mem.load(C, (r, hi), copies=heads)
        for X in (Q, K):
            x1, x2 = mem.load(X, (r, slice(None), lo)), mem.load(X, (r, slice(None), hi))
            c, s = cos[:, None, :], sin[:, None, :]
            o1 = alu.sub(alu.mul(x1, c), alu.mul(x2, s))         # both halves computed (in registers)
            o2 = alu.add(alu.mul(x2, c), alu.mul(x1, s))         # before either is stored (:29-32)
            mem.store(X, (r, slice(None), lo), o1)
            mem.store(X, (r, slice(None), hi), o2)
    c = kern.counts()
    c["reads_x"] = c.pop("reads_q") + c.pop("reads_k")
    c["reads_pos"] = c.pop("reads_positions")
    return RowRun(c, kern.result(Q, K))

