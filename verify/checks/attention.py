"""Attention checks: every formula in :mod:`symbolic.attention` against the executor in
:mod:`numeric.attention` (count-only mode), reads, writes and FLOPs, exactly.

Pinned points cover size 1, a block larger than the size, the causal diagonal (blocks that the
diagonal crosses and blocks it skips), ``N_k != N`` (decode against a cache) and sizes the blocks
don't divide; hypothesis draws the rest.  Block sizes are drawn so a point runs at most ~2,500
tiles (count-only runs are fast, but not free).
"""

from __future__ import annotations

from numeric import attention as ex
from symbolic import registry
from symbolic.attention import paper_blocks_at

from .core import Check

__all__ = ["checks", "FLASH_MODELS", "execute"]


def _counts(t):
    return {"reads": t.reads, "writes": t.writes, "flops": t.flops}


def execute(name: str, point) -> dict:
    """Run the executor that model ``name`` describes, count-only, at ``point``."""
    p = dict(point)
    kind = name.split(".")
    causal = name.endswith(".causal")
    if kind[1] == "standard":
        run = ex.count_standard_forward if kind[2] == "fwd" else ex.count_standard_backward
        args = (p["N"], p["N_k"], p["d"]) if kind[2] == "bwd" else (p["N"], p["N_k"], p["d"], causal)
        return _counts(run(*args))
    if name.endswith(".paper"):
        Br, Bc = paper_blocks_at(p["M"], p["d"])
        p.update({"N_k": p["N"], "B_r": Br, "B_c": Bc})
    args = (p["N"], p["N_k"], p["d"], p["B_r"], p["B_c"], causal)
    if kind[1] == "flash":
        return _counts(ex.count_flash_backward(*args))
    return _counts(ex.count_flash_forward(*args, order=kind[1]))


def _formula(name):
    model = registry.get(name)

    def f(point):
        v = model.evaluate(**point)
        return {k: v[k] for k in ("reads", "writes", "flops")}
    return f


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


def _blocked_points(causal=False):
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        N = draw(st.integers(1, 400))
        Nk = draw(st.integers(N, N + 300)) if causal else draw(st.integers(1, 700))
        d = draw(st.integers(1, 80))
        Br = draw(st.integers(max(1, N // 40), N + 24))
        Bc = draw(st.integers(max(1, Nk // 40), Nk + 24))
        return dict(N=N, N_k=Nk, d=d, B_r=Br, B_c=Bc)
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


FLASH_MODELS = ["attention.fa1.fwd", "attention.fa2.fwd", "attention.flash.bwd",
                "attention.fa1.fwd.causal", "attention.fa2.fwd.causal", "attention.flash.bwd.causal"]


def _size(p):
    return max(p.get("N", 0), p.get("N_k", 0))


def _causal_grid(full):
    return [p for p in _blocked_grid(full) if p["N_k"] >= p["N"]]


def checks():
    out = []
    for name in ("attention.standard.fwd", "attention.standard.bwd"):
        out.append(Check(name, _formula(name), lambda p, n=name: execute(n, p), _standard_grid,
                         strategy=_standard_points, draws=15, draws_full=200, size=_size,
                         description="reads, writes, flops of the standard kernels"))
    for name in FLASH_MODELS:
        causal = name.endswith(".causal")
        out.append(Check(name, _formula(name), lambda p, n=name: execute(n, p),
                         _causal_grid if causal else _blocked_grid,
                         strategy=lambda c=causal: _blocked_points(c), draws=25, draws_full=300, size=_size,
                         description="reads, writes, flops vs the tiled executor"))
    for name in ("attention.fa1.fwd.paper", "attention.fa2.fwd.paper", "attention.flash.bwd.paper"):
        out.append(Check(name, _formula(name), lambda p, n=name: execute(n, p), _paper_grid,
                         strategy=_paper_points, draws=15, draws_full=200, size=_size,
                         description="the paper's blocks B_c = ceil(M/4d), B_r = min(B_c, d)"))
    return out
