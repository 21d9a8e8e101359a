"""Attention checks: every formula in :mod:`symbolic.models.attention` against the executor in
:mod:`numeric.attention` (count-only mode), reads, writes and FLOPs, exactly.

Each :class:`~verify.core.Check` names its model object and its executor function; a point's keys
are the model's parameter names (``N, N_k, d, B_r, B_c``; ``N, d, M`` for the paper's blocks; the
FlashAttention-2 forwards add ``d_v``, the width of ``V`` and ``O``: their grids hold points without it,
where it takes ``d``'s value, and points with ``d_v != d``, DeepSeek-V3's ``d = 192``, ``d_v = 128`` among
them, and hypothesis draws it half the time).

Pinned points cover size 1, a block larger than the size, the causal diagonal (blocks that the
diagonal crosses and blocks it skips), ``N_k != N`` (decode against a cache) and sizes the blocks
don't divide; hypothesis draws the rest.  Block sizes are drawn so a point runs at most ~2,500
tiles (count-only runs are fast, but not free).
"""

from __future__ import annotations

from functools import partial

from numeric import attention as ex
from symbolic.models import attention as models
from symbolic.models.attention import paper_blocks_at

from ..core import Check

__all__ = ["CHECKS", "standard_forward", "standard_backward", "fa1_forward", "fa2_forward", "flash_backward",
           "fa1_forward_causal", "fa2_forward_causal", "flash_backward_causal",
           "fa1_forward_paper", "fa2_forward_paper", "flash_backward_paper"]


# ------------------------------------------------------------------------------------------ executors
def _counts(t):
    return {"reads": t.reads, "writes": t.writes, "flops": t.flops}


def standard_forward(p):
    """The three standard forward kernels, count-only."""
    return _counts(ex.count_standard_forward(p["N"], p["N_k"], p["d"]))


def standard_backward(p):
    """The five standard backward kernels, count-only."""
    return _counts(ex.count_standard_backward(p["N"], p["N_k"], p["d"]))


def fa1_forward(p, causal=False):
    """FlashAttention forward in Algorithm 1's order (outer loop over key blocks), count-only."""
    return _counts(ex.count_flash_forward(p["N"], p["N_k"], p["d"], p["B_r"], p["B_c"], causal, order="fa1"))


def fa2_forward(p, causal=False):
    """FlashAttention forward in FlashAttention-2's order (outer loop over query blocks), count-only; ``V``
    ``d_v`` wide when the point says so (else ``d``, the model's default)."""
    return _counts(ex.count_flash_forward(p["N"], p["N_k"], p["d"], p["B_r"], p["B_c"], causal, order="fa2",
                                          d_v=p.get("d_v")))


def flash_backward(p, causal=False):
    """FlashAttention backward (FlashAttention-2 Algorithm 2), count-only."""
    return _counts(ex.count_flash_backward(p["N"], p["N_k"], p["d"], p["B_r"], p["B_c"], causal))


def fa1_forward_causal(p):
    return fa1_forward(p, causal=True)


def fa2_forward_causal(p):
    return fa2_forward(p, causal=True)


def flash_backward_causal(p):
    return flash_backward(p, causal=True)


def _paper_point(p):
    """A ``(N, d, M)`` point as the blocked executors take it: self-attention (``N_k = N``) with the
    paper's blocks (FlashAttention Algorithm 1 line 1)."""
    B_r, B_c = paper_blocks_at(p["M"], p["d"])
    return dict(N=p["N"], N_k=p["N"], d=p["d"], B_r=B_r, B_c=B_c)


def fa1_forward_paper(p):
    return fa1_forward(_paper_point(p))


def fa2_forward_paper(p):
    return fa2_forward(_paper_point(p))


def flash_backward_paper(p):
    return flash_backward(_paper_point(p))


# ------------------------------------------------------------------------------------------ points
_EDGE_BLOCKED = [  # (N, N_k, d, B_r, B_c): why
    (1, 1, 1, 1, 1),            # everything size 1
    (1, 1000, 64, 64, 128),     # decode: one query row against a 1000-key cache
    (7, 7, 3, 16, 32),          # blocks larger than the sizes
    (300, 300, 64, 64, 100),    # blocks that don't divide
    (256, 256, 64, 64, 64),     # blocks that divide
    (77, 513, 32, 16, 50),      # N_k != N, nothing divides
    (128, 128, 16, 32, 16),     # causal diagonal crossing blocks of unequal sizes
    (100, 131, 8, 1, 7),        # B_r = 1
    (64, 64, 1, 64, 1),         # d = 1, B_c = 1
    (4096, 4096, 64, 128, 128), # the course's size
    (4096, 4096, 64, 64, 200),  # the paper's blocks at M = 100 KB
    (2048, 4096, 128, 128, 64), # prefill against a cache
    (4095, 4097, 64, 128, 96),  # large and non-divisible
]
_GRID_FULL = [(n, n, d, br, bc) for n in (512, 1024, 2048, 4096, 8192) for d in (64, 128)
              for br, bc in ((64, 64), (128, 64), (128, 128), (96, 200))]


def _blocked_grid(full):
    pts = _EDGE_BLOCKED + (_GRID_FULL if full else [])
    return [dict(N=n, N_k=nk, d=d, B_r=br, B_c=bc) for n, nk, d, br, bc in pts]


def _causal_grid(full):
    return [p for p in _blocked_grid(full) if p["N_k"] >= p["N"]]


#: (N, N_k, d, d_v, B_r, B_c): value widths other than d
_DV_POINTS = [
    (4096, 4096, 192, 128, 128, 128),   # DeepSeek-V3 prefill (FA3's tile for 192/128)
    (4096, 8192, 192, 128, 128, 112),   # against a cache, the d_v = d tile
    (300, 300, 64, 512, 64, 100),       # d_v > d (FA3 admits it for d <= 64), blocks that don't divide
    (77, 513, 32, 1, 16, 50),           # d_v = 1
    (1, 1000, 576, 512, 64, 128),       # MLA-like decode widths
    (10**30, 10**30, 192, 128, 10**28, 10**27),   # count-only at 10**30
]


def _dv_grid(grid):
    def dv(full):
        pts = list(grid(full))
        causal = all(p["N_k"] >= p["N"] for p in pts)
        extra = [dict(N=n, N_k=nk, d=d_, d_v=dv_, B_r=br, B_c=bc) for n, nk, d_, dv_, br, bc in _DV_POINTS
                 if not causal or nk >= n]
        extra += [{**p, "d_v": p["d"]} for p in pts[:4]] + [{**p, "d_v": 2 * p["d"] + 1} for p in pts]
        return pts + extra
    return dv


def _standard_grid(full):
    sizes = [(1, 1, 1), (1, 1000, 64), (7, 3, 5), (300, 300, 64), (77, 513, 32), (4096, 4096, 64),
             (1024, 1024, 64), (4096, 8192, 128)]
    if full:
        sizes += [(n, n, d) for n in (512, 2048, 8192, 16384) for d in (32, 64, 128)]
    return [dict(N=n, N_k=nk, d=d) for n, nk, d in sizes]


def _paper_grid(full):
    pts = [(1, 1, 1), (64, 64, 64), (1024, 64, 51200), (4096, 64, 51200), (4096, 64, 8192),
           (4096, 64, 131072), (300, 16, 1000), (512, 128, 51200), (2048, 32, 4096)]
    if full:
        pts += [(n, 64, kb * 512) for n in (512, 1024, 2048, 4096, 8192) for kb in (16, 32, 64, 100, 192, 256)]
    return [dict(N=n, d=d, M=m) for n, d, m in pts]


def _blocked_points(causal=False, dv=False):
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        N = draw(st.integers(1, 400))
        N_k = draw(st.integers(N, N + 300)) if causal else draw(st.integers(1, 700))
        d = draw(st.integers(1, 80))
        B_r = draw(st.integers(max(1, N // 40), N + 24))
        B_c = draw(st.integers(max(1, N_k // 40), N_k + 24))
        p = dict(N=N, N_k=N_k, d=d, B_r=B_r, B_c=B_c)
        if dv and draw(st.booleans()):
            p["d_v"] = draw(st.integers(1, 200))
        return p
    return points()


def _standard_points():
    from hypothesis import strategies as st
    return st.fixed_dictionaries(dict(N=st.integers(1, 600), N_k=st.integers(1, 600), d=st.integers(1, 256)))


def _paper_points():
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        N = draw(st.integers(1, 2000))
        d = draw(st.integers(1, 128))
        M = draw(st.integers(max(1, 4 * d * (N // 60 + 1) - 4 * d + 1), 4 * d * (N + 8)))  # keeps T_c <= ~60
        return dict(N=N, d=d, M=M)
    return points()


def _size(p):
    return max(p.get("N", 0), p.get("N_k", 0))


# ------------------------------------------------------------------------------------------ checks
def _standard(model, execute):
    return Check(model, execute, _standard_grid, strategy=_standard_points, draws=15, draws_full=200,
                 size=_size, description="reads, writes, flops of the standard kernels")


def _flash(model, execute, causal, dv=False):
    grid = _causal_grid if causal else _blocked_grid
    return Check(model, execute, _dv_grid(grid) if dv else grid,
                 strategy=partial(_blocked_points, causal, dv), draws=25, draws_full=300, size=_size,
                 description="reads, writes, flops vs the tiled executor" + (", V of width d_v" if dv else ""))


def _paper(model, execute):
    return Check(model, execute, _paper_grid, strategy=_paper_points, draws=15, draws_full=200, size=_size,
                 description="the paper's blocks B_c = ceil(M/4d), B_r = min(B_c, d)")


CHECKS = [
    _standard(models.standard_fwd, standard_forward),
    _standard(models.standard_bwd, standard_backward),
    _flash(models.fa1_fwd, fa1_forward, causal=False),
    _flash(models.fa2_fwd, fa2_forward, causal=False, dv=True),
    _flash(models.flash_bwd, flash_backward, causal=False),
    _flash(models.fa1_fwd_causal, fa1_forward_causal, causal=True),
    _flash(models.fa2_fwd_causal, fa2_forward_causal, causal=True, dv=True),
    _flash(models.flash_bwd_causal, flash_backward_causal, causal=True),
    _paper(models.fa1_fwd_paper, fa1_forward_paper),
    _paper(models.fa2_fwd_paper, fa2_forward_paper),
    _paper(models.flash_bwd_paper, flash_backward_paper),
]
