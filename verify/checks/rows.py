"""Row-kernel checks: the formulas of :mod:`symbolic.models.rows` against the executors of :mod:`numeric.rows`
(count-only mode), every quantity, exactly - ``softmax.naive`` is the Triton tutorial's ``5MN + 2M`` /
``3MN + 2M`` count, executed.

Points carry the models' parameters; the kernels whose counts do not depend on how many rows a program takes
(softmax, SwiGLU, RoPE) carry it as the executor-only key ``B_R``, so every sweep runs with row counts that are
not a multiple of the block.  The fused kernels' ``ratio_unfused`` runs the unfused pair too.
"""

from __future__ import annotations

from numeric import rows as ex
from symbolic.models import rows as fm

from ..core import Check

__all__ = ["ROW_EDGE", "ROPE_EDGE", "softmax_naive_check", "softmax_fused_check", "norm_rms_check",
           "norm_rms_residual_check", "act_swiglu_check", "rope_check"]

_BIG = 10**30
#: (M, N, B_R): why
ROW_EDGE = [
    (1, 1, 1),              # one element
    (7, 5, 3),              # rows not a multiple of the block
    (1, 4096, 8),           # one row, a block larger than the rows
    (257, 1, 1),            # a single column, one row a program (4096 rows of it in the full sweep)
    (100, 33, 100),         # one block holds every row
    (37, 128, 16),          # a partial last block
    (_BIG, _BIG, 10**29),   # beyond int64 (count-only)
]
_ROW_FULL = [(4096, 1, 1)] + [(m, n, b) for m in (1, 9, 64, 129) for n in (1, 17, 256) for b in (1, 4, 64)]
#: (T, H, H_kv, d, B_R): why
ROPE_EDGE = [
    (1, 1, 1, 2, 1),            # the smallest
    (7, 32, 8, 128, 3),         # Llama-3-8B heads, tokens not a multiple of the block
    (5, 4, 4, 64, 8),           # H_kv = H, a block larger than the tokens
    (33, 2, 1, 6, 16),          # d/2 odd
    (_BIG, 8, 2, 10**29, 10**29),
]
_ROPE_FULL = [(t, h, hk, dd, b) for t in (1, 10, 64) for h, hk in ((8, 8), (32, 8), (64, 1)) for dd in (2, 64, 128)
              for b in (1, 7)]


def _rows(full):
    for m, n, b in ROW_EDGE + (_ROW_FULL if full else []):
        yield {"M": m, "N": n, "B_R": b}


def _rope(full):
    for t, h, hk, dd, b in ROPE_EDGE + (_ROPE_FULL if full else []):
        yield {"T": t, "H": h, "H_kv": hk, "d": dd, "B_R": b}


def _row_points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"M": st.integers(1, 300), "N": st.integers(1, 300), "B_R": st.integers(1, 40)})


def _rope_points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries({"T": st.integers(1, 60), "H": st.integers(1, 16), "H_kv": st.integers(1, 16),
                                  "d": st.integers(1, 64).map(lambda x: 2 * x), "B_R": st.integers(1, 16)})


def _size(p):
    return max(v for k, v in p.items() if k != "B_R")


_SOFTMAX_Q = ("reads", "writes", "ops", "exps", "bytes", "launches")
_NORM_Q = ("reads", "writes", "reads_x", "reads_w", "ops", "rsqrts", "bytes")

softmax_naive_check = Check(
    model=fm.softmax_naive, quantities=_SOFTMAX_Q, grid=_rows, strategy=_row_points, extra=("B_R",), size=_size,
    execute=lambda p: ex.softmax_naive(p["M"], p["N"], p["B_R"]).counts,
    description="naive softmax: the tutorial's 5MN + 2M reads, 3MN + 2M writes, executed kernel by kernel")
softmax_fused_check = Check(
    model=fm.softmax_fused, quantities=_SOFTMAX_Q + ("ratio_unfused",), grid=_rows, strategy=_row_points,
    extra=("B_R",), size=_size, execute=lambda p: ex.softmax_fused(p["M"], p["N"], p["B_R"]).counts,
    description="fused softmax: MN in, MN out, and the naive/fused traffic ratio")
norm_rms_check = Check(
    model=fm.norm_rms, quantities=_NORM_Q, grid=_rows, strategy=_row_points, size=_size,
    execute=lambda p: ex.rms_norm(p["M"], p["N"], p["B_R"]).counts,
    description="RMSNorm (vLLM rms_norm_kernel): two passes over x, the weight once per program")
norm_rms_residual_check = Check(
    model=fm.norm_rms_residual, quantities=_NORM_Q + ("reads_r", "ratio_unfused"), grid=_rows, strategy=_row_points,
    size=_size, execute=lambda p: ex.fused_add_rms_norm(p["M"], p["N"], p["B_R"]).counts,
    description="fused residual add + RMSNorm (vLLM fused_add_rms_norm), and its ratio to add + norm")
act_swiglu_check = Check(
    model=fm.act_swiglu, quantities=("reads", "writes", "ops", "exps", "bytes", "ratio_unfused"), grid=_rows,
    strategy=_row_points, extra=("B_R",), size=_size,
    execute=lambda p: ex.silu_and_mul(p["M"], p["N"], p["B_R"]).counts,
    description="SwiGLU (vLLM silu_and_mul), and its ratio to silu + multiply")
rope_check = Check(
    model=fm.rope_rotate_half, quantities=("reads", "writes", "reads_x", "reads_cache", "reads_pos", "ops", "bytes"),
    grid=_rope, strategy=_rope_points, extra=("B_R",), size=_size,
    execute=lambda p: ex.rotary_embedding(p["T"], p["H"], p["H_kv"], p["d"], p["B_R"]).counts,
    description="RoPE rotate-half (vLLM rotary_embedding_kernel, is_neox): cos/sin per head and pair")
