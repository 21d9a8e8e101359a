"""Block-scaled low-precision GEMM: ``C = A B`` with FP8 or FP4 payloads and scale factors beside them.

Four formats, each a model ``gemm.scaled.<format>`` over ``gemm.tiled``'s parameters and loop nest
(``M, N, K``; tiles ``B_M x B_N``, K-steps ``B_K``; ``docs/conventions.md`` §4.1).  ``A`` (``M x K``,
activations) and ``B`` (``K x N``, weights, stored ``N x K``: both operands are packed and scaled along
``K``) are quantized in *groups* of consecutive ``K`` elements, each group with one scale:

* ``fp8_block`` - DeepSeek-V3 / DeepGEMM: FP8 E4M3 payloads, FP32 scales, ``1 x 128`` groups for ``A``
  (DeepGEMM ``deep_gemm/utils/math.py:26-38``, ``per_token_cast_to_fp8``) and ``128 x 128`` blocks for
  ``B`` (``:51-61``, ``per_block_cast_to_fp8``).  The SM90 kernel (``deep_gemm/include/deep_gemm/impls/
  sm90_fp8_gemm_1d2d.cuh`` at commit ``54e2261``) takes ``BLOCK_K = 128`` (``:58``), loads ``A``'s scales
  with TMA, a ``BLOCK_M x 1`` box per K-block (``:197-199``), and ``B``'s once per tile: ``ceil(K/128)``
  scales of each 128-column block the tile's columns overlap, one or two (``:232-249``);
* ``mxfp8``, ``mxfp4`` - OCP Microscaling v1.0: 32-element blocks along ``K`` with an E8M0 scale;
  FP8 (E4M3) or FP4 (E2M1) payloads.  DeepGEMM's SM100 kernel packs the UE8M0 scales four to an int32
  along ``K`` (``deep_gemm/utils/math.py:19-23``; ``sm100_fp8_fp4_gemm_1d1d.cuh:126-127``: ``ceil(K /
  (4 gran_k))`` words a row) and loads a ``BLOCK_M x 1`` (``BLOCK_N x 1``) box of words when a K-step
  enters a new word (``:262-273``);
* ``nvfp4`` - NVIDIA NVFP4: FP4 E2M1 payloads, 16-element blocks with an E4M3 scale, and one FP32 scale
  per tensor.  Its scales sit in the cuBLAS block-scaled layout, tiles of 128 rows x 4 scales, the scale
  matrix padded to a multiple of 128 rows and of 4 scales a row (Transformer Engine
  ``nvte_swizzle_scaling_factors``: "scale_inv size is padded to 128x4 for row-scale").

**Scale loads.**  A kernel loads an operand's scales in *words* of ``pack`` consecutive scales of one row
(FP32 scales: one; E8M0 and E4M3: four, 4 bytes), covering ``W = pack x group`` elements of ``K``, once
per pass over ``K`` for each tile (the tile's rows, or columns, times the words its K-range meets); a
K-step and a word nest (one divides the other), so a pass reads ``ceil(K / W)`` words a row.  A scale
tensor's rows are padded to a multiple of ``align`` (DeepGEMM: 16 bytes of one word each,
``csrc/utils/math.hpp:23-27``, over which the scale TMA descriptor is made,
``csrc/jit_kernels/impls/runtime_utils.hpp:260``; NVFP4: 128 rows), and a tile's box reads the padded
rows it covers: the last tile row reads ``min(t_m B_M, align ceil(M/align)) - M`` padding rows.  Scales
in a word that cover no element (the ``K`` tail of a packed word) and padding rows are
``bytes_padding``; scales covering elements are ``bytes_scales``.  With ``t_m = ceil(M/B_M)``,
``t_n = ceil(N/B_N)``, ``s`` the scale's bytes::

    bytes_payload = (t_n M + t_m N) ceil(e K)          e the payload's bytes (1, or 1/2: two FP4 a byte)
    scales_A      = t_n M ceil(K / group)              covering elements (bytes_scales: x s)
    words_A       = t_n ceil(K / W) min(t_m B_M, align ceil(M / align))
    padding_A     = s (pack words_A - scales_A)
    B             the same with N, B_N, t_m    (MX, NVFP4)
    fp8_block B   t_m ceil(K/128) (t_n + ceil(N/128) - 1 - floor((t_n - 1) gcd(B_N, 128) / 128)) FP32, no padding
    nvfp4         + 2 FP32 tensor scales per tile (A's and B's): 8 t_m t_n bytes in bytes_scales
    bytes_C       = 2 M N  (BF16 output: sm90_fp8_gemm_1d2d.cuh:64)
    bytes         = bytes_payload + bytes_scales + bytes_padding + bytes_C

The 128-column blocks a tile meets: tile ``j`` covers ``[j B_N, min((j+1) B_N, N))``, one block plus one
for each multiple of 128 strictly inside; summed over the tiles, the ``ceil(N/128) - 1`` inner multiples
of 128, less those that are tile boundaries ``j B_N`` (``1 <= j < t_n``; ``128 | j B_N`` iff
``128/gcd(B_N, 128)`` divides ``j``), plus ``t_n``.  Payload counts in elements (``reads``, ``writes``,
``flops``, ``flops_padded``) are ``gemm.tiled``'s.

Bad input is :class:`~base.errors.BadInput` naming ``B_K``: for the MX and NVFP4 formats the group must
divide ``B_K`` (a block-scaled MMA consumes whole groups), and for every format ``B_K`` and the word's
``W`` elements must nest; an unknown format names ``format`` (:func:`scaled_format`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from base.dtypes import element_bytes
from base.errors import BadInput

from ..asymptotics import Regime
from ..floorsum import gcd
from ..model import Model
from ..notes import Note, code, note, symbol
from ..params import param
from ..registry import ModelRef
from .gemm import gemm_counts

__all__ = ["M", "N", "K", "B_M", "B_N", "B_K", "ScaledFormat", "FORMATS", "scaled_format", "scaled_counts",
           "blocks_met", "MODELS", "OUTPUT_DTYPE"]

_A, _B, _C = (symbol(n) for n in ("A", "B", "C"))
M = param("M", note("rows of ", _A, " and ", _C, " (tokens)"), latex="M")
N = param("N", note("columns of ", _B, " and ", _C, " (output features)"), latex="N")
K = param("K", "the reduction dimension: the axis the scale groups run along", latex="K")
B_M = param("B_M", "tile rows", latex="B_M")
B_N = param("B_N", "tile columns", latex="B_N")
B_K = param("B_K", note("K-step: the depth of the ", _A, " and ", _B, " chunks a tile loads per step"), latex="B_K")

#: the output's element type (DeepGEMM: "C/D type: only BF16", sm90_fp8_gemm_1d2d.cuh:64)
OUTPUT_DTYPE = "bf16"

_DG = "DeepGEMM at commit 54e2261: "
_DG_MATH = code("deep_gemm/utils/math.py")


def _tt(name: str):
    """A kernel's constant in a relation (``BLOCK_K = 128``): math, printed in typewriter."""
    return symbol(name, r"\mathtt{" + name.replace("_", r"\_") + "}")


@dataclass(frozen=True)
class ScaledFormat:
    """One block-scaled format as a kernel lays it out: payload and scale types (:mod:`base.dtypes`), the
    ``group`` of ``K`` elements one scale covers, ``group_n`` (the weight's scale blocks along ``N``: 128 for
    2D blocks, 1 for a scale per row), ``pack`` scales a loaded word, ``align`` rows the scale tensor pads to,
    whether one FP32 scale per tensor rides along, and where each figure comes from."""

    name: str
    payload: str
    scale: str
    group: int
    group_n: int
    pack: int
    align: int
    tensor_scale: bool
    divides: bool
    source: Note

    @property
    def word(self) -> int:
        """Elements of ``K`` one loaded word of scales covers."""
        return self.pack * self.group


FORMATS = {
    "fp8_block": ScaledFormat(
        "fp8_block", "fp8_e4m3", "fp32", 128, 128, 1, 4, False, False,
        note(_DG, _DG_MATH, " lines 26-38 (1-by-128 activation groups) and 51-61 (128-by-128 weight blocks); ",
             code("deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh"), " lines 58 (",
             sp.Eq(_tt("BLOCK_K"), 128), "), 197-199 (", _A, " scales: one TMA box of ", code("BLOCK_M"),
             " rows a K-block) and 232-249 (", _B, " scales: ", sp.ceiling(K / 128),
             " of each 128-column block a tile meets); ", code("csrc/utils/math.hpp"),
             " lines 23-27 (scale rows aligned to 16 bytes)")),
    "mxfp8": ScaledFormat(
        "mxfp8", "mxfp8", "e8m0", 32, 1, 4, 4, False, True,
        note("OCP Microscaling Formats (MX) v1.0 (MXFP8: 32-element blocks, E8M0 scale); ", _DG, _DG_MATH,
             " lines 19-23 (UE8M0 packed four to an ", code("int32"), "); ",
             code("deep_gemm/include/deep_gemm/impls/sm100_fp8_fp4_gemm_1d1d.cuh"), " lines 126-127 and 262-273 "
             "(a box of ", code("BLOCK_M"), " words when a K-step enters a new word)")),
    "mxfp4": ScaledFormat(
        "mxfp4", "mxfp4", "e8m0", 32, 1, 4, 4, False, True,
        note("OCP Microscaling Formats (MX) v1.0 (MXFP4: FP4 E2M1, 32-element blocks, E8M0 scale); ", _DG, _DG_MATH,
             " lines 85-111 (two FP4 a byte, packed along ", K, "), the MXFP8 layout for the scales")),
    "nvfp4": ScaledFormat(
        "nvfp4", "nvfp4", "fp8_e4m3", 16, 1, 4, 128, True, True,
        note("NVIDIA NVFP4 (FP4 E2M1, 16-element blocks, E4M3 scale, one FP32 scale per tensor); the cuBLAS "
             "block-scaled layout, tiles of 128 rows by 4 scales (Transformer Engine's ",
             code("nvte_swizzle_scaling_factors"), " pads the scales to 128-by-4 tiles)")),
}


def scaled_format(name: str) -> ScaledFormat:
    """The format called ``name``; :class:`BadInput` naming ``format`` for an unknown one."""
    try:
        return FORMATS[str(name).lower()]
    except KeyError:
        raise BadInput("format", f"unknown block-scaled format {name!r}; known: {', '.join(FORMATS)}") from None


def _rows_read(rows, block, align):
    """Scale rows a pass reads: every tile row's box, clipped at the tensor's padded rows."""
    return sp.Min(sp.ceiling(rows / block) * block, align * sp.ceiling(rows / align))


def blocks_met(N=N, B_N=B_N, g=128):
    """``sum_j`` (``g``-column blocks tile ``j`` meets) over the ``ceil(N/B_N)`` tile columns (module text)."""
    t_n = sp.ceiling(N / B_N)
    return t_n + sp.ceiling(N / g) - 1 - sp.floor((t_n - 1) * gcd(B_N, g) / g)


def scaled_counts(fmt: ScaledFormat) -> dict:
    """Bytes apart (payload, scales, padding, output) and the element counts of ``gemm.tiled``."""
    base = gemm_counts(M, N, K, B_M, B_N, B_K)
    t_m, t_n = sp.ceiling(M / B_M), sp.ceiling(N / B_N)
    e, s = sp.nsimplify(element_bytes(fmt.payload)), element_bytes(fmt.scale)
    payload = (t_n * M + t_m * N) * sp.ceiling(e * K)
    groups = sp.ceiling(K / fmt.group)
    words_per_row = sp.ceiling(K / fmt.word)
    scales_a = t_n * M * groups
    pad_a = s * (fmt.pack * t_n * words_per_row * _rows_read(M, B_M, fmt.align) - scales_a)
    if fmt.group_n > 1:                      # 2D weight blocks: per tile, the blocks its columns meet
        scales_b = t_m * sp.ceiling(K / fmt.group) * blocks_met(N, B_N, fmt.group_n)
        pad_b = sp.Integer(0)
    else:
        scales_b = t_m * N * groups
        pad_b = s * (fmt.pack * t_m * words_per_row * _rows_read(N, B_N, fmt.align) - scales_b)
    scale_bytes = s * (scales_a + scales_b)
    if fmt.tensor_scale:
        scale_bytes += 2 * element_bytes("fp32") * t_m * t_n
    c_bytes = element_bytes(OUTPUT_DTYPE) * M * N
    padding = pad_a + pad_b
    return {"reads": base["reads"], "writes": base["writes"], "flops": base["flops"],
            "flops_padded": base["flops_padded"], "bytes_payload": payload, "bytes_scales": scale_bytes,
            "bytes_padding": padding, "bytes_C": c_bytes, "bytes": payload + scale_bytes + padding + c_bytes,
            "scale_fraction": scale_bytes / payload}


def _validate(fmt: ScaledFormat):
    def check(pt):
        bk = pt["B_K"]
        if fmt.divides and bk % fmt.group:
            raise BadInput("B_K", f"{fmt.name} scales groups of {fmt.group} elements along K and a block-scaled "
                                  f"MMA consumes whole groups: B_K = {bk} must be a multiple of {fmt.group}")
        if bk % fmt.word and fmt.word % bk:
            raise BadInput("B_K", f"B_K = {bk} and the {fmt.word} elements of K one {fmt.name} scale word covers "
                                  "must nest (one divides the other)")
    return check


_UNITS = {"bytes_payload": "bytes", "bytes_scales": "bytes", "bytes_padding": "bytes", "bytes_C": "bytes",
          "bytes": "bytes", "flops_padded": "FLOP", "scale_fraction": "1"}


def _build(fmt: ScaledFormat):
    t_m, t_n, t_k = (sp.Dummy(n, integer=True, positive=True) for n in ("t_m", "t_n", "t_k"))
    name = f"gemm.scaled.{fmt.name}"
    e = element_bytes(fmt.payload)
    weight_blocks = (" and per ", sp.Integer(fmt.group_n), " columns of the weight") if fmt.group_n > 1 else ()
    notes = [note(code(fmt.name), ": ", code(fmt.payload), " payload (", sp.nsimplify(e), " bytes an element), one ",
                  code(fmt.scale), " scale per ", sp.Integer(fmt.group), " elements of ", K, *weight_blocks),
             note("every tile load counts the scales it reads: ", sp.Integer(fmt.pack),
                  " scales a word, one word per ", sp.Integer(fmt.word), " elements of ", K,
                  ", scale rows padded to a multiple of ", sp.Integer(fmt.align)),
             note(code("bytes_padding"), ": scales that cover no element (a word's tail past ", K,
                  ", padded rows); ", code("bytes"), " is the sum the roofline takes")]
    if fmt.tensor_scale:
        notes.append(note(code(fmt.name), ": one FP32 scale per tensor, read once per output tile for ", _A,
                          " and for ", _B))
    if fmt.payload in ("mxfp4", "nvfp4"):
        notes.append(note("two FP4 elements a byte, packed along ", K, ": a row moves ", sp.ceiling(K / 2), " bytes"))
    regime_subs = {gcd(B_N, 128): B_N} if fmt.group_n > 1 else {}
    return Model(
        name, note("block-scaled GEMM, ", code(fmt.name), ": payload, scale, padding and output bytes"),
        scaled_counts(fmt),
        params=(M, N, K, B_M, B_N, B_K), units=_UNITS,
        divisible_subs={M: B_M * t_m, N: B_N * t_n, K: B_K * t_k},
        regime=Regime(note(sp.Le(B_M, M), ", ", sp.Le(B_N, N), ", ", sp.Le(B_K, K)),
                      le=((B_M, M), (B_N, N), (B_K, K)), subs=regime_subs),
        asymptotic_quantity="bytes",
        defaults={"M": 4096, "N": 7168, "K": 2048, "B_M": 128, "B_N": 128, "B_K": 128},
        source=fmt.source, notes=tuple(notes), validate=_validate(fmt))


def _ref(fmt: ScaledFormat) -> ModelRef:
    return ModelRef(f"gemm.scaled.{fmt.name}",
                    f"block-scaled GEMM ({fmt.name}): bytes of payload, scales, padding and output apart",
                    lambda: _build(fmt))


#: the four models, found by discovery (a module-level list of ModelRef)
MODELS = [_ref(f) for f in FORMATS.values()]
