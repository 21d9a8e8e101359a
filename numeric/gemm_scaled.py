"""Block-scaled GEMM executor: ``C = A B`` from FP8/FP4 payloads and their scales, tile by tile through
counted memory.

The living spec of :mod:`symbolic.models.gemm_scaled` (which this module does not import).  The formats,
as the sources define them (restated here on purpose: the executor reads the specifications itself):

* ``fp8_block`` - E4M3 payloads; FP32 scales, one per ``1 x 128`` group of ``A`` (``amax / 448``, DeepGEMM
  ``per_token_cast_to_fp8``) and one per ``128 x 128`` block of ``B`` (``per_block_cast_to_fp8``);
* ``mxfp8`` / ``mxfp4`` - OCP MX v1.0: E4M3 / E2M1 elements in blocks of 32 along ``K``, an E8M0 scale
  ``2^(floor(log2 amax) - emax)`` per block (``emax`` 8 for E4M3, 2 for E2M1);
* ``nvfp4`` - E2M1 elements in blocks of 16, an E4M3 block scale and one FP32 scale per tensor.

**Memory.**  Payloads are byte arrays, both operands ``rows x K`` (``B`` as ``N x K``, K-major): one
byte an FP8 element, two FP4 elements a byte (low nibble first, DeepGEMM's packing), ``ceil(K/2)``
bytes a row.  Scales are arrays of 4-byte *words*: FP32 scales one a word; E8M0 and E4M3 scales four a
word along ``K`` (DeepGEMM's UE8M0 packing; the cuBLAS 128 x 4 layout for NVFP4).  A scale array has
``ceil(K / (pack group))`` words a row and its rows padded to a multiple of 4 (MX, and FP8's ``A``) or
128 (NVFP4); padding holds neutral scales.  FP8's ``B`` scales are a plain ``ceil(N/128) x ceil(K/128)``
FP32 array.

**The loop** (``gemm.tiled``'s): for each tile ``(i, j)`` of ``C`` and each K-step, load the ``A`` and
``B`` payload chunks (valid rows and bytes only); when the step enters a new word of scales, load the
tile's box of words for ``A`` (rows ``[i BM, (i+1) BM)`` clipped at the padded rows) and for ``B``
(``fp8_block``: at the tile's start, every K-block's scale for each 128-column block its columns
meet); ``nvfp4`` loads the two FP32 tensor scales once per tile.  Real mode decodes the loaded codes and
scales and multiplies in float64; the product equals ``dequantize(A) @ dequantize(B)`` to 1e-12.
Count-only mode runs the same loop on shapes.  Each scale slot a word load moves is *useful* (it covers
an element: its row is below the operand's rows and its group below ``ceil(K/group)``) or *padding*.

Counts: ``reads``/``writes``/``flops``/``flops_padded`` in elements (an FP4 element is one element);
``bytes_payload``, ``bytes_scales``, ``bytes_padding``, ``bytes_C`` (BF16 output: 2 bytes an element,
from :mod:`base.dtypes`), ``bytes`` their sum.  Bad input is :class:`~base.errors.BadInput` naming the
parameter: an unknown ``format``; ``BK`` not a multiple of the group (MX, NVFP4) or not nesting with the
``pack x group`` elements of a word; a ``real`` (or ``quantize``'s ``weight``) that is not a bool; work beyond
:data:`MAX_STEPS` tile x K-step iterations, refused before the first load.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput
from base.validate import positive_int

from .memory import GlobalMemory, Phantom

__all__ = ["FORMATS", "Layout", "quantize", "dequantize", "run_scaled", "ScaledRun", "e4m3_values", "e5m2_values",
           "e2m1_values", "MAX_STEPS", "MAX_ELEMENTS"]

MAX_STEPS = 1 << 20
MAX_ELEMENTS = 1 << 24


@dataclass(frozen=True)
class Layout:
    """A format as the executor stores it: element type, scale type, group along K, the weight's scale
    block along N (1: a scale per row), scales per 4-byte word, row alignment of the scale arrays."""

    element: str        # "e4m3" or "e2m1"
    scale: str          # "fp32", "e8m0" or "e4m3"
    group: int
    group_n: int
    pack: int
    align: int
    tensor_scale: bool
    whole_groups: bool  # the MMA consumes whole groups: the group divides BK


FORMATS = {
    "fp8_block": Layout("e4m3", "fp32", 128, 128, 1, 4, False, False),
    "mxfp8": Layout("e4m3", "e8m0", 32, 1, 4, 4, False, True),
    "mxfp4": Layout("e2m1", "e8m0", 32, 1, 4, 4, False, True),
    "nvfp4": Layout("e2m1", "e4m3", 16, 1, 4, 128, True, True),
}
_EMAX = {"e4m3": 8, "e2m1": 2}          # OCP MX: the element type's largest exponent
_MAXV = {"e4m3": 448.0, "e2m1": 6.0}


# ------------------------------------------------------------------------------------- value tables
def e4m3_values() -> np.ndarray:
    """The value of each E4M3 (OCP "E4M3FN") code 0..255: bias 7, no infinities; 0x7F/0xFF are NaN."""
    out = np.empty(256)
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 0xF, c & 7
        v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        out[c] = np.nan if (e == 15 and m == 7) else (-v if s else v)
    return out


def e5m2_values() -> np.ndarray:
    """The value of each E5M2 code (IEEE-like: bias 15; exponent 31 is infinity/NaN, given as NaN here)."""
    out = np.empty(256)
    for c in range(256):
        s, e, m = c >> 7, (c >> 2) & 0x1F, c & 3
        v = (m / 4) * 2.0 ** -14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15)
        out[c] = np.nan if e == 31 else (-v if s else v)
    return out


def e2m1_values() -> np.ndarray:
    """The value of each E2M1 code 0..15: ``0, 0.5, 1, 1.5, 2, 3, 4, 6`` and their negatives."""
    mag = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    return np.array(mag + [-v for v in mag])


_TABLES = {"e4m3": e4m3_values(), "e2m1": e2m1_values()}


def _nearest_code(x: np.ndarray, kind: str) -> np.ndarray:
    """The code of the representable value nearest ``x`` (clamped to the largest finite magnitude)."""
    table = _TABLES[kind]
    half = len(table) // 2
    mags = table[:half]
    ok = ~np.isnan(mags)
    codes, vals = np.arange(half)[ok], mags[ok]
    order = np.argsort(vals)
    codes, vals = codes[order], vals[order]
    a = np.minimum(np.abs(x), vals[-1])
    hi = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)
    lo = hi - 1
    pick = np.where(a - vals[lo] <= vals[hi] - a, lo, hi)
    c = codes[pick]
    return np.where((x < 0) & (c != 0), c + half, c).astype(np.uint8)


def _e8m0(amax: np.ndarray, kind: str) -> np.ndarray:
    """OCP MX shared exponent as an E8M0 code: ``floor(log2 amax) - emax + 127`` (0 for a zero block)."""
    with np.errstate(divide="ignore"):
        x = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - _EMAX[kind], -127)
    return (np.clip(x, -127, 127) + 127).astype(np.uint8)


# ------------------------------------------------------------------------------------- quantize
@dataclass
class Quantized:
    """One operand (``rows x K``) quantized: element codes (``rows x K`` uint8, one code each), the scale of
    each group (``rows x ceil(K/group)`` values, or for 2D blocks ``ceil(rows/group_n) x ceil(K/group)``), the
    scales' codes where they are coded (E8M0/E4M3), and the FP32 tensor scale (1.0 when the format has none)."""

    codes: np.ndarray
    scales: np.ndarray
    scale_codes: Optional[np.ndarray]
    tensor: float


def _groups(x: np.ndarray, g: int) -> np.ndarray:
    """``|x|`` max over each group of ``g`` along the last axis (a short last group where ``g`` does not divide)."""
    rows, cols = x.shape
    n = -(-cols // g)
    pad = np.zeros((rows, n * g))
    pad[:, :cols] = np.abs(x)
    return pad.reshape(rows, n, g).max(axis=2)


def quantize(fmt: str, x: np.ndarray, weight: bool = False) -> Quantized:
    """Quantize a ``rows x K`` operand in format ``fmt`` (``weight``: ``B`` stored ``N x K``, which takes
    ``fp8_block``'s 128 x 128 blocks)."""
    lay = _layout(fmt)
    weight = validate.flag("weight", weight)
    x = np.asarray(x, float)
    rows, cols = x.shape
    g = lay.group
    ng = -(-cols // g)
    tensor = 1.0
    scale_codes = None
    if lay.scale == "fp32":
        if weight and lay.group_n > 1:
            amax = np.zeros((-(-rows // lay.group_n), ng))
            for r in range(amax.shape[0]):
                amax[r] = _groups(x[r * lay.group_n:(r + 1) * lay.group_n], g).max(axis=0)
            scales = np.maximum(amax, 1e-4) / _MAXV[lay.element]          # DeepGEMM: clamp(1e-4) / 448
            per = np.repeat(scales, lay.group_n, axis=0)[:rows]
        else:
            scales = np.maximum(_groups(x, g), 1e-4) / _MAXV[lay.element]
            per = scales
        scales = scales.astype(np.float32).astype(float)
        per = per.astype(np.float32).astype(float)
    elif lay.scale == "e8m0":
        scale_codes = _e8m0(_groups(x, g), lay.element)
        per = scales = 2.0 ** (scale_codes.astype(float) - 127)
    else:                                                                 # nvfp4: E4M3 block scale, FP32 tensor
        amax_t = float(np.max(np.abs(x))) if x.size else 0.0
        tensor = float(np.float32(amax_t / (448.0 * 6.0))) if amax_t > 0 else 1.0
        scale_codes = _nearest_code(_groups(x, g) / 6.0 / tensor, "e4m3")
        per = scales = _TABLES["e4m3"][scale_codes]
    expand = np.repeat(per, g, axis=1)[:, :cols] * tensor
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(expand > 0, x / np.where(expand > 0, expand, 1.0), 0.0)
    return Quantized(_nearest_code(y, lay.element), scales, scale_codes, tensor)


def dequantize(fmt: str, q: Quantized, weight: bool = False) -> np.ndarray:
    """The values a quantized operand stands for: ``value(code) x scale of its group x tensor scale``."""
    lay = _layout(fmt)
    weight = validate.flag("weight", weight)
    rows, cols = q.codes.shape
    per = q.scales
    if weight and lay.group_n > 1:
        per = np.repeat(per, lay.group_n, axis=0)[:rows]
    return _TABLES[lay.element][q.codes] * np.repeat(per, lay.group, axis=1)[:, :cols] * q.tensor


# ------------------------------------------------------------------------------------- memory images
def _pack_payload(codes: np.ndarray, element: str) -> np.ndarray:
    """Payload bytes: one code a byte (FP8), or two a byte along K, low nibble first (FP4)."""
    if element != "e2m1":
        return codes.astype(np.uint8)
    rows, cols = codes.shape
    pad = np.zeros((rows, 2 * (-(-cols // 2))), np.uint8)
    pad[:, :cols] = codes
    return (pad[:, 0::2] | (pad[:, 1::2] << 4)).astype(np.uint8)


def _word_image(lay: Layout, q: Quantized, rows: int, K: int) -> np.ndarray:
    """Scales as the kernel's array of words: padded rows (neutral scales), ``ceil(K / (pack group))`` words a row."""
    ng = -(-K // lay.group)
    nw = -(-K // (lay.pack * lay.group))
    rp = lay.align * (-(-rows // lay.align))
    if lay.pack == 1:
        img = np.ones((rp, nw), np.float32)
        img[:rows, :ng] = q.scales
        return img
    neutral = 127 if lay.scale == "e8m0" else int(_nearest_code(np.array([1.0]), "e4m3")[0])
    codes = np.full((rp, nw * lay.pack), neutral, np.uint32)
    codes[:rows, :ng] = q.scale_codes
    words = np.zeros((rp, nw), np.uint32)
    for s in range(lay.pack):
        words |= codes[:, s::lay.pack] << np.uint32(8 * s)
    return words


def _decode_words(lay: Layout, words: np.ndarray) -> np.ndarray:
    """The scale values of a loaded box of words, ``pack`` per word, in K order."""
    if lay.pack == 1:
        return np.asarray(words, float)
    w = np.asarray(words, np.uint32)
    codes = np.stack([(w >> np.uint32(8 * s)) & np.uint32(0xFF) for s in range(lay.pack)], axis=-1)
    codes = codes.reshape(w.shape[0], -1)
    return 2.0 ** (codes.astype(float) - 127) if lay.scale == "e8m0" else _TABLES["e4m3"][codes.astype(np.uint8)]


def _unpack(lay: Layout, chunk: np.ndarray, depth: int) -> np.ndarray:
    """Element values of a loaded payload chunk (``rows x bytes``) of ``depth`` elements a row."""
    c = np.asarray(chunk, np.uint8)
    if lay.element == "e2m1":
        codes = np.empty((c.shape[0], 2 * c.shape[1]), np.uint8)
        codes[:, 0::2], codes[:, 1::2] = c & 0x0F, c >> 4
        c = codes[:, :depth]
    return _TABLES[lay.element][c]


# ------------------------------------------------------------------------------------- the run
@dataclass
class ScaledRun:
    counts: dict
    C: Optional[np.ndarray]
    reference: Optional[np.ndarray]


def _layout(fmt) -> Layout:
    try:
        return FORMATS[str(fmt).lower()]
    except KeyError:
        raise BadInput("format", f"unknown block-scaled format {fmt!r}; known: {', '.join(FORMATS)}") from None


def _check_bk(name: str, lay: Layout, BK: int):
    word = lay.pack * lay.group
    if lay.whole_groups and BK % lay.group:
        raise BadInput("BK", f"{name} needs whole scale groups per K-step: BK = {BK} is not a multiple of {lay.group}")
    if BK % word and word % BK:
        raise BadInput("BK", f"BK = {BK} and a {name} scale word's {word} elements must nest (one divides the other)")


def run_scaled(fmt: str, M: int, N: int, K: int, BM: int, BN: int, BK: int, *, real: bool = False, seed: int = 0,
               A=None, B=None, max_steps: int = MAX_STEPS, max_elements: int = MAX_ELEMENTS) -> ScaledRun:
    """Run the block-scaled tiled GEMM in format ``fmt``: ``A`` is ``M x K``, ``B`` is ``K x N`` (random in
    real mode unless given; quantized by :func:`quantize`).  Returns the counts of the module docstring and,
    in real mode, the product and the dequantized reference ``dequantize(A) @ dequantize(B)``."""
    lay = _layout(fmt)
    M, N, K = positive_int("M", M), positive_int("N", N), positive_int("K", K)
    BM, BN, BK = positive_int("BM", BM), positive_int("BN", BN), positive_int("BK", BK)
    real = validate.flag("real", real)
    _check_bk(fmt, lay, BK)
    tm, tn, tk = -(-M // BM), -(-N // BN), -(-K // BK)
    validate.budget("BK", tm * tn * tk, max_steps, f"tile x K-step iterations ({tm:,} x {tn:,} x {tk:,})",
                    "max_steps", "take larger tiles")
    if real:
        validate.budget("K", M * K + K * N + M * N, max_elements, "elements of A, B and C", "max_elements",
                        "use real=False")
    g, word = lay.group, lay.pack * lay.group
    ng, nw = -(-K // g), -(-K // word)
    fp4 = lay.element == "e2m1"
    row_bytes = -(-K // 2) if fp4 else K
    pad_m, pad_n = lay.align * (-(-M // lay.align)), lay.align * (-(-N // lay.align))
    two_d = lay.group_n > 1

    mem = GlobalMemory(real=real)
    ref = None
    if real:
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((M, K)) if A is None else validate.real_array("A", A).astype(float)
        B = rng.standard_normal((K, N)) if B is None else validate.real_array("B", B).astype(float)
        for name, arr, want in (("A", A, (M, K)), ("B", B, (K, N))):
            if arr.shape != want:
                raise BadInput(name, f"shape {arr.shape}, expected {want}")
        qa, qb = quantize(fmt, A), quantize(fmt, B.T, weight=True)
        ref = dequantize(fmt, qa) @ dequantize(fmt, qb, weight=True).T
        pa, pb = mem.put("A", _pack_payload(qa.codes, lay.element)), mem.put("B", _pack_payload(qb.codes, lay.element))
        sa = mem.put("SA", _word_image(lay, qa, M, K))
        sb = mem.put("SB", qb.scales.astype(np.float32) if two_d else _word_image(lay, qb, N, K))
        if lay.tensor_scale:
            ta, tb = mem.put("TA", np.array([qa.tensor], np.float32)), mem.put("TB", np.array([qb.tensor], np.float32))
    else:
        pa, pb = mem.put("A", (M, row_bytes)), mem.put("B", (N, row_bytes))
        sa = mem.put("SA", (pad_m, nw))
        sb = mem.put("SB", (-(-N // lay.group_n), ng) if two_d else (pad_n, nw))
        if lay.tensor_scale:
            ta, tb = mem.put("TA", (1,)), mem.put("TB", (1,))
    c = mem.empty("C", (M, N))

    elements = padded = 0
    useful = {"SA": 0, "SB": 0}

    def word_box(arr, name, r0, r1, rows, w0, w1):
        """Load words ``[w0, w1)`` of scale rows ``[r0, r1)``; tally the slots that cover elements."""
        box = mem.load(arr, (slice(r0, r1), slice(w0, w1)))
        live_rows = max(0, min(r1, rows) - r0)
        live_groups = max(0, min(w1 * lay.pack, ng) - w0 * lay.pack)
        useful[name] += live_rows * live_groups
        return box

    for i in range(tm):
        r0, r1 = i * BM, min((i + 1) * BM, M)
        for j in range(tn):
            c0, c1 = j * BN, min((j + 1) * BN, N)
            if lay.tensor_scale:                          # nvfp4: the two FP32 tensor scales, once a tile
                t_a, t_b = mem.load(ta, slice(0, 1)), mem.load(tb, slice(0, 1))
            if two_d:                                     # fp8_block: the tile's B scales, every K-block, at once
                b0, b1 = c0 // lay.group_n, (c1 - 1) // lay.group_n + 1
                sbox = mem.load(sb, (slice(b0, b1), slice(0, ng)))
                useful["SB"] += (b1 - b0) * ng
            acc = None
            words_a = words_b = None
            have = -1                                     # the last word column loaded
            for step in range(tk):
                k0, k1 = step * BK, min((step + 1) * BK, K)
                w0, w1 = k0 // word, -(-k1 // word)
                if w1 - 1 > have:                         # the step enters a new word: load the tile's box
                    lo = max(w0, have + 1)
                    words_a = word_box(sa, "SA", r0, min(r0 + BM, pad_m), M, lo, w1)
                    if not two_d:
                        words_b = word_box(sb, "SB", c0, min(c0 + BN, pad_n), N, lo, w1)
                    have, first = w1 - 1, lo
                if fp4:
                    bytes_k = slice(k0 // 2, -(-k1 // 2))
                else:
                    bytes_k = slice(k0, k1)
                a = mem.load(pa, (slice(r0, r1), bytes_k))
                b = mem.load(pb, (slice(c0, c1), bytes_k))
                depth = k1 - k0
                elements += (r1 - r0) * depth + (c1 - c0) * depth
                padded += 2 * BM * BN * BK
                if real:
                    va = _unpack(lay, a, depth) * _scales_for(lay, words_a, first, k0, k1, r1 - r0)
                    if two_d:
                        vb = _unpack(lay, b, depth) * _block_scales(lay, sbox, c0, c1, k0, k1)
                    else:
                        vb = _unpack(lay, b, depth) * _scales_for(lay, words_b, first, k0, k1, c1 - c0)
                    if lay.tensor_scale:
                        va, vb = va * float(t_a[0]), vb * float(t_b[0])
                    prod = mem.matmul(va, vb.T)
                else:
                    prod = mem.matmul(Phantom((r1 - r0, depth)), Phantom((depth, c1 - c0)))
                acc = prod if acc is None else acc + prod
            mem.store(c, (slice(r0, r1), slice(c0, c1)), acc)

    by = mem.tally.by_array
    item = {"SA": 4, "SB": 4, "TA": 4, "TB": 4}
    s_bytes = 4 if lay.scale == "fp32" else 1
    scale_bytes = (useful["SA"] + useful["SB"]) * s_bytes + sum(by[t][0] * item[t] for t in ("TA", "TB") if t in by)
    loaded = (by["SA"][0] + by["SB"][0]) * 4
    got = {"reads": elements, "writes": by["C"][1], "flops": mem.tally.flops, "flops_padded": padded,
           "bytes_payload": by["A"][0] + by["B"][0], "bytes_scales": scale_bytes,
           "bytes_padding": loaded - (useful["SA"] + useful["SB"]) * s_bytes,
           "bytes_C": by["C"][1] * element_bytes("bf16")}
    got["bytes"] = got["bytes_payload"] + got["bytes_scales"] + got["bytes_padding"] + got["bytes_C"]
    got["scale_fraction"] = Fraction(got["bytes_scales"], got["bytes_payload"])
    if got["scale_fraction"].denominator == 1:
        got["scale_fraction"] = got["scale_fraction"].numerator
    return ScaledRun(got, mem.result(c), ref)


def _scales_for(lay: Layout, words, first_word: int, k0: int, k1: int, rows: int) -> np.ndarray:
    """Per-element scales of K range ``[k0, k1)`` for ``rows`` rows from the loaded word box (whose first word
    column is ``first_word``)."""
    vals = _decode_words(lay, words)[:rows]                    # rows x (words loaded x pack)
    ks = np.arange(k0, k1)
    col = ks // lay.group - first_word * lay.pack
    return vals[:, col]


def _block_scales(lay: Layout, box, c0: int, c1: int, k0: int, k1: int) -> np.ndarray:
    """fp8_block's B: the scale of each (column, k) of the chunk from the tile's box of 128 x 128 block scales."""
    cols = np.arange(c0, c1) // lay.group_n - c0 // lay.group_n
    ks = np.arange(k0, k1) // lay.group
    return np.asarray(box, float)[cols][:, ks]
