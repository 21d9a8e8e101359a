"""Course adapter (lecture 11): the names ``02_flash_forward.py`` imports, over the toolkit.

Executors come from :mod:`numeric.attention`, formulas from :mod:`symbolic.models.attention` (the
model objects themselves).  No logic of its own: each function forwards and repackages counts as ``IO``.
"""

import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lecture01"))

from base.errors import BadInput as _BadInput  # noqa: E402
from numeric import attention as _ex  # noqa: E402
from symbolic.models import attention as _models  # noqa: E402
from symbolic.models.attention import paper_blocks_at as _paper_blocks_at  # noqa: E402

__all__ = ["IO", "block_sizes", "fa_io_formula", "flash_fwd", "flash_bwd", "standard_attention",
           "standard_attention_bwd"]


@dataclass(frozen=True)
class IO:
    """Elements read and written, and matmul FLOPs, of one run (exact ints)."""

    read: int
    write: int
    flops: int

    @property
    def total(self) -> int:
        return self.read + self.write


def _io(t) -> IO:
    return IO(read=t.reads, write=t.writes, flops=t.flops)


def block_sizes(M, d):
    """The paper's ``(B_r, B_c) = (min(ceil(M/4d), d), ceil(M/4d))`` as ints."""
    return _paper_blocks_at(M, d)


def fa_io_formula(N, d, M, order="fa1"):
    """Total HBM elements of the FlashAttention forward with the paper's blocks (exact formula)."""
    paper = {"fa1": _models.fa1_fwd_paper, "fa2": _models.fa2_fwd_paper}
    if order not in paper:
        raise _BadInput("order", f"must be one of {', '.join(paper)}, got {order!r}")
    return paper[order].evaluate("total", N=N, d=d, M=M)


def flash_fwd(Q, K, V, Br, Bc, causal=False, order="fa2"):
    O, L, t = _ex.flash_forward(Q, K, V, Br, Bc, causal=causal, order=order)
    return O, L, _io(t)


def flash_bwd(Q, K, V, O, dO, L, Br, Bc, causal=False):
    dQ, dK, dV, t = _ex.flash_backward(Q, K, V, O, dO, L, Br, Bc, causal=causal)
    return dQ, dK, dV, _io(t)


def standard_attention(Q, K, V, causal=False):
    O, P, t = _ex.standard_forward(Q, K, V, causal=causal)
    return O, P, _io(t)


def standard_attention_bwd(Q, K, V, P, dO):
    dQ, dK, dV, t = _ex.standard_backward(Q, K, V, P, dO)
    return dQ, dK, dV, _io(t)
