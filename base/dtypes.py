"""The one table of element sizes, in bytes (IEEE 754 and the OCP 8-bit float formats; int32 for
page tables).  Every byte count in the project multiplies by :func:`element_bytes`."""

from __future__ import annotations

from types import MappingProxyType

from .errors import BadInput

__all__ = ["ELEMENT_BYTES", "element_bytes"]

#: bytes per element by type name (IEEE 754-2008 binary16/32/64; bfloat16; OCP FP8 E4M3/E5M2)
ELEMENT_BYTES = MappingProxyType({
    "fp8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "fp64": 8,
    "int8": 1, "int32": 4, "int64": 8,
})


def element_bytes(dtype: str) -> int:
    """Bytes of one element of ``dtype``; :class:`BadInput` naming ``dtype`` for an unknown type."""
    try:
        return ELEMENT_BYTES[str(dtype).lower()]
    except KeyError:
        raise BadInput("dtype", f"unknown element type {dtype!r}; known: {', '.join(ELEMENT_BYTES)}") from None
