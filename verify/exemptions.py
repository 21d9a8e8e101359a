"""The one table of models that have no check, each with the reason.

Every registered model ends with a :class:`~verify.core.Check` or :class:`~verify.core.Property`
whose ``model`` is it, or sits here: ``EXEMPT = {"model.name": "why no independent side exists"}``.
Prefer a real check: a model lands here only when nothing independent of its formula can produce
its numbers (no executor, no simulator, no published figure).

The GEMM family needs no entry: ``gemm.tiled`` runs the counting executor, ``gemm.resources`` and
``gemm.cosma`` are checked against the on-chip buffers the executor stages through
(:func:`numeric.gemm.block_buffers`), and ``gemm.l2`` against the LRU simulator.
"""

from __future__ import annotations

__all__ = ["EXEMPT"]

#: model name -> the reason it has no check
EXEMPT: dict[str, str] = {}
