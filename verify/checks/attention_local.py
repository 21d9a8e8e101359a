"""Local attention checks: every formula of :mod:`symbolic.models.attention_local` against the executors of
:mod:`numeric.attention_local` (count-only mode) - reads, writes, FLOPs over visited blocks and over visible
elements, visited block pairs - exactly; FlashAttention-3's models at the tiles ``numeric.fa3_blocks`` restates
from ``hopper/tile_size.h`` (a second transcription of the table the formulas carry); and FA3's own block ranges
(``get_n_block_min_max``, with and without PackGQA, and ``get_m_block_min_max``) against the executor's visited set.

The pinned points cover what the issue names: windows wider than ``N_k`` (and ``W_l >= N_k, W_r = 0``, the causal
model), ``W_l = 0`` and ``W_r = 0``, windows and chunks that are no multiple of the blocks, ``C`` not dividing
``N_k``, ``N_k != N`` both ways (``N_k < N``: rows before key 0), size 1, blocks larger than the sizes, and one
large point with large blocks (count-only runs take one step per key block).  Hypothesis draws the rest, with
blocks drawn so a point runs at most ~60 key blocks.
"""

from __future__ import annotations

from functools import partial

from numeric import attention as flash
from numeric import attention_local as ex
from numeric import fa3_blocks
from symbolic.models import attention_local as models

from ..core import Check, Property

__all__ = ["CHECKS", "window_forward", "window_backward", "chunked_forward", "chunked_backward",
           "fa3_forward", "fa3_ranges"]

_LOCAL = ("reads", "writes", "flops", "flops_visible", "blocks")


# ------------------------------------------------------------------------------------------ executors
def _run(kind, p, mask):
    if kind == "fwd":
        return ex.count_local_forward(p["N"], p["N_k"], p["d"], p["B_r"], p["B_c"], mask, d_v=p.get("d_v")).counts()
    return ex.count_local_backward(p["N"], p["N_k"], p["d"], p["B_r"], p["B_c"], mask).counts()


def window_forward(p):
    return _run("fwd", p, ex.Window(p["W_l"], p["W_r"]))


def window_backward(p):
    return _run("bwd", p, ex.Window(p["W_l"], p["W_r"]))


def chunked_forward(p):
    return _run("fwd", p, ex.Chunk(p["C"]))


def chunked_backward(p):
    return _run("bwd", p, ex.Chunk(p["C"]))


def fa3_forward(p, variant):
    """FA3's forward, count-only: the kernel's flags as ``mha_fwd`` sets them, its tiles from
    ``tile_size_fwd_sm90`` at the head dimensions ``mha_fwd`` rounds (``numeric.fa3_blocks``), then
    FlashAttention-2's loop at those tiles (``V``, ``O`` of width ``d_v``, ``d`` when the point has none)."""
    N, Nk, d = p["N"], p["N_k"], p["d"]
    d_v = p.get("d_v", d)
    if variant == "window":
        kw = fa3_blocks.kernel_window(N, Nk, p["W_l"], p["W_r"])
    else:
        kw = fa3_blocks.kernel_window(N, Nk, is_causal=variant == "causal")
    tile = fa3_blocks.tile_size_fwd_sm90(*fa3_blocks.headdims_rounded(d, d_v), kw.is_causal, kw.is_local, p["e"])
    if variant == "window":
        out = ex.count_local_forward(N, Nk, d, tile.kBlockM, tile.kBlockN, ex.Window(p["W_l"], p["W_r"]),
                                     d_v=d_v).counts()
    else:
        t = flash.count_flash_forward(N, Nk, d, tile.kBlockM, tile.kBlockN, causal=variant == "causal", d_v=d_v)
        out = {"reads": t.reads, "writes": t.writes, "flops": t.flops}
    return {**out, "B_r": tile.kBlockM, "B_c": tile.kBlockN, "tile_line": tile.line}


# ------------------------------------------------------------------------------------------ points
_EDGE = [  # (N, N_k, d, B_r, B_c): why
    (1, 1, 1, 1, 1),            # everything size 1
    (1, 1000, 64, 64, 128),     # decode: one query row against a cache
    (7, 7, 3, 16, 32),          # blocks larger than the sizes
    (300, 300, 16, 64, 100),    # blocks that don't divide
    (77, 513, 8, 16, 50),       # N_k > N, nothing divides
    (513, 77, 8, 50, 16),       # N_k < N: the first rows sit before key 0
    (256, 256, 4, 64, 64),      # blocks that divide
    (100, 131, 2, 1, 7),        # B_r = 1
    (2048, 4096, 16, 128, 96),  # prefill against a cache
]
_WINDOWS = [(0, 0), (0, 5), (37, 0), (100, 13), (5000, 0), (5000, 5000), (64, 64), (127, 1)]
_CHUNKS = [1, 3, 64, 100, 129, 512, 5000]


def _window_grid(full, dv=False):
    for n, nk, d, br, bc in _EDGE:
        for wl, wr in (_WINDOWS if full else _WINDOWS[:5]):
            yield dict(N=n, N_k=nk, d=d, B_r=br, B_c=bc, W_l=wl, W_r=wr)
            if dv:                                       # V, O of another width than Q, K (forward only)
                yield dict(N=n, N_k=nk, d=d, d_v=2 * d + 1, B_r=br, B_c=bc, W_l=wl, W_r=wr)
    yield dict(N=10**9, N_k=10**9 + 7, d=128, B_r=10**7, B_c=10**7 + 1, W_l=4 * 10**7 + 3, W_r=0)  # 101 key blocks
    if dv:
        yield dict(N=4096, N_k=4096, d=192, d_v=128, B_r=128, B_c=96, W_l=1023, W_r=0)     # DeepSeek-V3 widths
        yield dict(N=10**30, N_k=10**30, d=192, d_v=128, B_r=10**28, B_c=10**28 + 1, W_l=3 * 10**28, W_r=0)


def _chunk_grid(full):
    for n, nk, d, br, bc in _EDGE:
        for c in (_CHUNKS if full else _CHUNKS[:5]):
            yield dict(N=n, N_k=nk, d=d, B_r=br, B_c=bc, C=c)
    yield dict(N=10**9, N_k=10**9 + 7, d=128, B_r=10**7, B_c=10**7 + 1, C=3 * 10**7 + 5)


def _fa3_grid(variant, full):
    shapes = [(1, 1), (1, 1000), (300, 300), (77, 513), (513, 77), (4096, 4096), (1000, 5000)]
    heads = (64, 96, 128, 192, 256, 40, 100, 150, 200) if full else (64, 96, 128, 192, 256)
    if variant == "window" and not full:
        heads = (64, 128, 256)
    windows = [(0, 0), (127, 0), (5000, 0), (5000, 5000), (64, 3), (0, 300)] if full else [(0, 0), (127, 0), (5000, 0),
                                                                                             (0, 300)]
    if not full:
        shapes = shapes[:5] + shapes[6:]
    for n, nk in shapes:
        if variant == "causal" and nk < n:
            continue
        for d in heads:
            for e in (2, 1):
                if variant == "window":
                    for wl, wr in windows:
                        yield dict(N=n, N_k=nk, d=d, e=e, W_l=wl, W_r=wr)
                else:
                    yield dict(N=n, N_k=nk, d=d, e=e)
        # value widths FA3 admits besides d (hopper/flash_api.cpp:782-786): DeepSeek-V3's 192/128, the (128, 192]
        # x (96, 128] band's corners, and d <= 64 with d_v up to 512 (tile rows 19, 21, 25)
        for d, d_v, e in ((192, 128, 2), (192, 128, 1), (129, 97, 2), (150, 128, 2), (64, 512, 2), (64, 257, 2),
                          (64, 256, 2), (64, 200, 2), (64, 192, 2), (32, 100, 2), (64, 256, 1), (48, 64, 2)):
            if variant == "window":
                for wl, wr in windows[:3]:
                    yield dict(N=n, N_k=nk, d=d, d_v=d_v, e=e, W_l=wl, W_r=wr)
            else:
                yield dict(N=n, N_k=nk, d=d, d_v=d_v, e=e)


def _blocked(draw, st):
    N = draw(st.integers(1, 400))
    N_k = draw(st.integers(1, 600))
    d = draw(st.integers(1, 16))
    B_r = draw(st.integers(max(1, N // 40), N + 24))
    B_c = draw(st.integers(max(1, N_k // 40), N_k + 24))
    return dict(N=N, N_k=N_k, d=d, B_r=B_r, B_c=B_c)


def _window_points(dv=False):
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        p = _blocked(draw, st)
        wide = p["N_k"] + p["N"] + 8
        if dv and draw(st.booleans()):
            p["d_v"] = draw(st.integers(1, 40))
        return {**p, "W_l": draw(st.integers(0, wide)), "W_r": draw(st.integers(0, wide))}
    return points()


def _chunk_points():
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        p = _blocked(draw, st)
        return {**p, "C": draw(st.integers(1, p["N_k"] + p["N"] + 8))}
    return points()


def _fa3_points(variant):
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        N = draw(st.integers(1, 3000))
        N_k = draw(st.integers(N, N + 3000)) if variant == "causal" else draw(st.integers(1, 6000))
        p = dict(N=N, N_k=N_k, d=draw(st.integers(1, 256)), e=draw(st.sampled_from((1, 2))))
        if draw(st.booleans()):                     # a value width FA3 admits besides d (flash_api.cpp:782-786)
            if draw(st.booleans()):
                p.update(d=draw(st.integers(129, 192)), d_v=draw(st.integers(97, 128)))
            else:
                p.update(d=draw(st.integers(1, 64)), d_v=draw(st.integers(1, 512 if p["e"] == 2 else 256)))
        if variant == "window":
            p.update(W_l=draw(st.integers(0, N_k + 8)), W_r=draw(st.integers(0, N + 8)))
        return p
    return points()


def _size(p):
    return max(p["N"], p["N_k"])


# ------------------------------------------------------------------------------------------ FA3's block ranges
def fa3_ranges(p):
    """``None`` when FA3's ``get_n_block_min_max`` (PackGQA with ``g`` heads a position when ``g > 1``) gives, for
    every query block, exactly the key blocks the executor visits (empty when it visits none), and
    ``get_m_block_min_max`` (no PackGQA) exactly the query blocks of every key block; else the first mismatch."""
    N, Nk, bm, bn, g = p["N"], p["N_k"], p["B_r"], p["B_c"], p["g"]
    mask = ex.Window(p["W_l"], p["W_r"]) if "W_l" in p else ex.Chunk(p["C"])
    kw = (fa3_blocks.kernel_window(N, Nk, p["W_l"], p["W_r"]) if "W_l" in p else
          fa3_blocks.kernel_window(N, Nk, attention_chunk=p["C"], is_causal=True))
    flags = dict(is_causal=kw.is_causal, is_local=kw.is_local, window_size_left=kw.window_size_left,
                 window_size_right=kw.window_size_right)
    D = Nk - N
    for m in range(-(-N * g // bm)):
        # packed rows m bm .. (m + 1) bm - 1 hold the heads of the query rows first .. last (hopper/pack_gqa.h:69)
        first, last = m * bm // g, (min((m + 1) * bm, N * g) - 1) // g
        keys = ex.rows_keys(mask, first, last, N, Nk)
        want = None if keys is None else (keys[0] // bn, keys[1] // bn + 1)
        lo, hi = fa3_blocks.n_block_min_max(N, Nk, m, bm, bn, **flags, attention_chunk=kw.attention_chunk,
                                            pack_gqa=g > 1, qhead_per_khead=g)
        got = None if hi <= lo else (lo, hi)
        if got != want:
            return f"query block {m}: get_n_block_min_max gives {got}, the visited key blocks are {want}"
    if "W_l" not in p or g > 1:
        return None
    for n in range(-(-Nk // bn)):
        pos = ex.key_block_positions(mask, n, N, Nk, bn)
        want = None if pos is None else ((pos[0] - D) // bm, (pos[1] - D) // bm + 1)
        lo, hi = fa3_blocks.m_block_min_max(N, Nk, n, bm, bn, **flags)
        got = None if hi <= lo else (lo, hi)
        if got != want:
            return f"key block {n}: get_m_block_min_max gives {got}, the visited query blocks are {want}"
    return None


def _ranges_grid(full):
    for n, nk, _, br, bc in _EDGE[:8]:
        for g in ((1, 2, 3, 8) if full else (1, 3)):
            for wl, wr in _WINDOWS[:6]:
                yield dict(N=n, N_k=nk, B_r=br, B_c=bc, g=g, W_l=wl, W_r=wr)
            for c in _CHUNKS[:5]:
                yield dict(N=n, N_k=nk, B_r=br, B_c=bc, g=g, C=c)


def _ranges_points():
    from hypothesis import strategies as st

    @st.composite
    def points(draw):
        N, N_k = draw(st.integers(1, 200)), draw(st.integers(1, 200))
        p = dict(N=N, N_k=N_k, B_r=draw(st.integers(1, 64)), B_c=draw(st.integers(1, 64)),
                 g=draw(st.integers(1, 8)))
        if draw(st.booleans()):
            p.update(W_l=draw(st.integers(0, N_k + 4)), W_r=draw(st.integers(0, N + 4)))
        else:
            p.update(C=draw(st.integers(1, N_k + 4)))
        return p
    return points()


# ------------------------------------------------------------------------------------------ checks
def _local(model, execute, grid, strategy):
    return Check(model, execute, grid, quantities=_LOCAL, strategy=strategy, draws=25, draws_full=300,
                 size=_size, description="reads, writes, flops over visited blocks and visible elements, block pairs")


def _fa3(model, variant):
    qs = (_LOCAL if variant == "window" else ("reads", "writes", "flops")) + ("B_r", "B_c", "tile_line")
    return Check(model, partial(fa3_forward, variant=variant), partial(_fa3_grid, variant), quantities=qs,
                 strategy=partial(_fa3_points, variant), draws=20, draws_full=200, size=_size,
                 description="at tile_size_fwd_sm90's tiles (restated in numeric.fa3_blocks)")


CHECKS = [
    _local(models.fa2_fwd_window, window_forward, partial(_window_grid, dv=True), partial(_window_points, dv=True)),
    _local(models.flash_bwd_window, window_backward, _window_grid, _window_points),
    _local(models.fa2_fwd_chunked, chunked_forward, _chunk_grid, _chunk_points),
    _local(models.flash_bwd_chunked, chunked_backward, _chunk_grid, _chunk_points),
    _fa3(models.fa3_fwd, "full"),
    _fa3(models.fa3_fwd_causal, "causal"),
    _fa3(models.fa3_fwd_window, "window"),
    Property("attention.fa3.fwd.window.ranges", holds=fa3_ranges, grid=_ranges_grid, model=models.fa3_fwd_window,
             strategy=_ranges_points, draws=40, draws_full=400, size=_size,
             description="FA3's get_n_block_min_max (PackGQA too) and get_m_block_min_max = the visited blocks"),
]
