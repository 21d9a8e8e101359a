"""The one table of element sizes, in bytes (IEEE 754 and the OCP 8-bit float formats; int32 for
page tables; the block-scaled low-precision payloads and their scale factors).  Every byte count in
the project multiplies by :func:`element_bytes`.

Sizes are exact: Python ints, and :class:`fractions.Fraction` for the sub-byte formats (an FP4 element
is half a byte; a count of them moves whole bytes, two elements to a byte, which the models that use
them round up per packed row).  :data:`SOURCES` says where each size comes from.
"""

from __future__ import annotations

from fractions import Fraction
from types import MappingProxyType

from .errors import BadInput

__all__ = ["ELEMENT_BYTES", "SOURCES", "element_bytes"]

_IEEE = "IEEE 754-2008, binary16/32/64 interchange formats (2, 4, 8 bytes)"
_OCP_FP8 = ("OCP 8-bit Floating Point Specification (OFP8) rev. 1.0, 2023: E4M3 and E5M2, one byte each "
            "(the FP8 element types of the OCP Microscaling Formats (MX) Specification v1.0 too)")
_OCP_MX = "OCP Microscaling Formats (MX) Specification v1.0, 2023"

#: bytes per element by type name.  ``fp8`` is either OCP FP8 type (one byte); ``fp8_e4m3`` also serves as
#: NVFP4's E4M3 scale; the MX and NVFP4 names are their *payload* elements (the scales are separate types).
ELEMENT_BYTES = MappingProxyType({
    "fp8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "fp64": 8,
    "int8": 1, "int32": 4, "int64": 8,
    # block-scaled low precision: payload elements
    "fp8_e4m3": 1, "fp8_e5m2": 1, "fp4_e2m1": Fraction(1, 2),
    "mxfp8": 1, "mxfp4": Fraction(1, 2), "nvfp4": Fraction(1, 2),
    # ... and scale factors (FP32 scales are "fp32"; NVFP4's E4M3 scales are "fp8_e4m3")
    "e8m0": 1,
})

#: where each size in :data:`ELEMENT_BYTES` comes from
SOURCES = MappingProxyType({
    "fp8": _OCP_FP8, "fp16": _IEEE, "bf16": "bfloat16: the upper 16 bits of IEEE binary32 (2 bytes)",
    "fp32": _IEEE, "tf32": "TensorFloat-32: stored as IEEE binary32, 4 bytes (NVIDIA A100 whitepaper, 2020)",
    "fp64": _IEEE, "int8": "two's-complement integer, 8 bits", "int32": "two's-complement integer, 32 bits",
    "int64": "two's-complement integer, 64 bits",
    "fp8_e4m3": _OCP_FP8, "fp8_e5m2": _OCP_FP8,
    "fp4_e2m1": _OCP_MX + ": the FP4 element type E2M1, 4 bits (half a byte; two elements packed per byte)",
    "mxfp8": _OCP_MX + ", its table of MX-compliant formats: MXFP8 elements are FP8 E4M3 or E5M2, 8 bits",
    "mxfp4": _OCP_MX + ", its table of MX-compliant formats: MXFP4 elements are FP4 E2M1, 4 bits",
    "nvfp4": ("NVIDIA, NVFP4 (Blackwell): FP4 E2M1 elements, 4 bits, in 16-element blocks with an E4M3 scale "
              "and one FP32 scale per tensor (cuBLAS documentation, 1D block scaling, CUBLASLT_MATMUL_MATRIX_"
              "SCALE_VEC16_UE4M3)"),
    "e8m0": _OCP_MX + ", its table of MX-compliant formats: the shared scale is E8M0, an 8-bit exponent "
                      "(one byte) per block of 32 elements",
})


def element_bytes(dtype: str) -> int | Fraction:
    """Bytes of one element of ``dtype``: an int, or an exact :class:`~fractions.Fraction` for a sub-byte
    type (``element_bytes("mxfp4") == Fraction(1, 2)``); :class:`BadInput` naming ``dtype`` for an unknown type."""
    try:
        return ELEMENT_BYTES[str(dtype).lower()]
    except KeyError:
        raise BadInput("dtype", f"unknown element type {dtype!r}; known: {', '.join(ELEMENT_BYTES)}") from None
