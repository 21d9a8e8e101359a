"""FlashAttention-3's block ranges and tiles (``numeric.fa3_blocks``, ``attention.fa3.fwd*``).

References: the visited blocks by brute force over every element (written here), FA3's table as its source prints it
(``hopper/tile_size.h`` @ 0251105, rows copied by hand below), and the issue's question - does the off-by-one the
``// TODO: check off-by-1 error`` comment (``hopper/block.h`` line 26) worries about exist?  It does not: the sweep
finds none, and each nearby way to write line 27 is found wrong at a small point (so the sweep can fail).
"""

from __future__ import annotations

import itertools

import pytest
import sympy as sp

from base.errors import BadInput
from numeric import attention_local as ex
from numeric import fa3_blocks as F
from symbolic.models import attention_local as models


def _sees(mask, p, j):
    if isinstance(mask, ex.Window):
        return p - mask.W_l <= j <= p + mask.W_r
    return j // mask.C == p // mask.C and j <= p


def _visited_keys(N, Nk, g, m, BM, BN, mask):
    """Key blocks a packed query block visits, element by element: packed row x is query row x // g
    (hopper/pack_gqa.h:69); ``(first, end)`` or ``None``."""
    D, blocks = Nk - N, set()
    for x in range(m * BM, min((m + 1) * BM, N * g)):
        for j in range(Nk):
            if _sees(mask, D + x // g, j):
                blocks.add(j // BN)
    return (min(blocks), max(blocks) + 1) if blocks else None


def _fa3_call(N, Nk, mask):
    if isinstance(mask, ex.Window):
        return F.kernel_window(N, Nk, mask.W_l, mask.W_r)
    return F.kernel_window(N, Nk, attention_chunk=mask.C, is_causal=True)


def _range(N, Nk, m, BM, BN, kw, g, **split):
    lo, hi = F.n_block_min_max(N, Nk, m, BM, BN, is_causal=kw.is_causal, is_local=kw.is_local,
                               window_size_left=kw.window_size_left, window_size_right=kw.window_size_right,
                               attention_chunk=kw.attention_chunk, pack_gqa=g > 1, qhead_per_khead=g, **split)
    return (lo, hi) if hi > lo else None


MASKS = [ex.Window(a, b) for a in (0, 1, 2, 5, 40) for b in (0, 1, 3, 40)] + [ex.Chunk(c) for c in (1, 2, 3, 5, 40)]


@pytest.mark.slow
def test_get_n_block_min_max_is_the_visited_set_over_a_long_sweep():
    for N, Nk, BM, BN, g in itertools.product(range(1, 12), range(1, 12), (1, 2, 3, 5), (1, 2, 3, 4), (1, 2, 3)):
        for mask in MASKS:
            kw = _fa3_call(N, Nk, mask)
            for m in range(-(-N * g // BM)):
                assert _range(N, Nk, m, BM, BN, kw, g) == _visited_keys(N, Nk, g, m, BM, BN, mask), \
                    (N, Nk, BM, BN, g, mask, m)


def test_get_n_block_min_max_is_the_visited_set():
    """Windows (W_l = 0, wider than N_k, not multiples of the blocks), chunks (not dividing N_k), N_k < N, PackGQA."""
    for N, Nk, BM, BN, g in itertools.product((1, 3, 7, 10), (1, 4, 9, 13), (1, 2, 3), (1, 2, 4), (1, 2, 3)):
        for mask in MASKS:
            kw = _fa3_call(N, Nk, mask)
            for m in range(-(-N * g // BM)):
                assert _range(N, Nk, m, BM, BN, kw, g) == _visited_keys(N, Nk, g, m, BM, BN, mask), \
                    (N, Nk, BM, BN, g, mask, m)


def test_splits_cover_the_range_once():
    """Split s of S takes ceil(n / S) blocks from n_block_min + s ceil(n / S) (hopper/block.h:47-56): together
    the splits are the unsplit range, each block once."""
    for N, Nk, BM, BN in itertools.product((5, 13), (7, 16), (2, 3), (1, 2, 3)):
        for mask in (ex.Window(3, 1), ex.Window(0, 0), ex.Chunk(4)):
            kw = _fa3_call(N, Nk, mask)
            for m in range(-(-N // BM)):
                whole = _range(N, Nk, m, BM, BN, kw, 1)
                for S in (2, 3, 5):
                    parts = [_range(N, Nk, m, BM, BN, kw, 1, split_idx=s, num_splits=S) for s in range(S)]
                    got = sorted(b for p in parts if p for b in range(*p))
                    assert got == (list(range(*whole)) if whole else [])


def test_get_m_block_min_max_is_the_visited_set():
    """The backward's query blocks of a key block (no chunk: "TODO: support attention_chunk", block.h:87)."""
    for N, Nk, BM, BN in itertools.product((1, 3, 7, 10), (1, 4, 9, 13), (1, 2, 3), (1, 2, 4)):
        for a, b in ((0, 0), (1, 0), (2, 3), (40, 0), (0, 40), (40, 40)):
            kw = F.kernel_window(N, Nk, a, b)
            for n in range(-(-Nk // BN)):
                rows = {r // BM for r in range(N) for j in range(n * BN, min((n + 1) * BN, Nk))
                        if Nk - N + r - a <= j <= Nk - N + r + b}
                want = (min(rows), max(rows) + 1) if rows else None
                lo, hi = F.m_block_min_max(N, Nk, n, BM, BN, is_causal=kw.is_causal, is_local=kw.is_local,
                                           window_size_left=kw.window_size_left,
                                           window_size_right=kw.window_size_right)
                assert ((lo, hi) if hi > lo else None) == want, (N, Nk, BM, BN, a, b, n)


# ----------------------------------------------------------------------------- the off-by-one, as asked
def _causal_pack_gqa_max(N, Nk, m, BM, BN, g, line27):
    """hopper/block.h lines 23-33 for a causal PackGQA block, with line 27 written as ``line27(m_idx_max)``."""
    n_idx = line27((m + 1) * BM) + Nk - N
    return min(F._ceil_div(Nk, BN), F._ceil_div(n_idx, BN))


VARIANTS = {
    "as shipped: divide(m_idx_max - 1) + 1": (lambda g: lambda M: (M - 1) // g + 1, None),
    "divide(m_idx_max)": (lambda g: lambda M: M // g, (1, 1, 2, 1, 1, 0)),
    "divide(m_idx_max) + 1": (lambda g: lambda M: M // g + 1, (2, 2, 2, 1, 1, 1)),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_line_27_has_no_off_by_one_and_its_neighbours_do(name):
    """Smallest point (by N + N_k, then g, B_r, B_c, block; g >= 2) where line 27's causal upper bound differs from
    the visited set.  As shipped: none (its bound is ceil(m_idx_max / g), one past the last position's row).
    Without the - 1 and + 1 the last position is lost; with + 1 alone a fully masked block is loaded."""
    make, smallest = VARIANTS[name]
    found = None
    for total in range(2, 24):
        for N in range(1, total):
            Nk = total - N
            if Nk < N:
                continue
            for g, BM, BN in itertools.product(range(2, 5), range(1, 6), range(1, 6)):
                for m in range(-(-N * g // BM)):
                    want = _visited_keys(N, Nk, g, m, BM, BN, ex.Window(10**6, 0))
                    hi = _causal_pack_gqa_max(N, Nk, m, BM, BN, g, make(g))
                    if (want[1] if want else 0) != max(hi, 0):
                        found = (N, Nk, g, BM, BN, m)
                        break
                if found:
                    break
            if found:
                break
        if found:
            break
    assert found == smallest


def test_kernel_window_by_hand():
    """hopper/flash_api.cpp:796-805, 146-160: a window at least the sequence becomes -1 (then the sequence
    length); (-1, 0) is causal, (-1, -1) neither; a chunk makes the call local and caps both windows."""
    assert F.kernel_window(8, 8, 100, 0) == F.KernelWindow(True, False, 7, 0, 0)
    assert F.kernel_window(8, 8, 100, 100) == F.KernelWindow(False, False, 7, 7, 0)
    assert F.kernel_window(8, 8, 3, 0) == F.KernelWindow(False, True, 3, 0, 0)
    assert F.kernel_window(8, 8, 6, 0) == F.KernelWindow(False, True, 6, 0, 0)       # 6 < seqlen_k - 1 = 7
    assert F.kernel_window(8, 8, is_causal=True, attention_chunk=4) == F.KernelWindow(False, True, 3, 0, 4)
    assert F.kernel_window(1, 9, is_causal=True) == F.KernelWindow(False, False, 8, 0, 0)   # one row: not causal


# ----------------------------------------------------------------------------- tiles
#: hopper/tile_size.h @ 0251105, read off the source: (d, e, causal, local) -> (kBlockM, kBlockN, line)
SOURCE_ROWS = {
    (64, 2, False, False): (192, 192, 25), (64, 2, True, False): (192, 128, 25), (64, 2, False, True): (192, 128, 25),
    (96, 2, False, False): (192, 144, 30), (96, 2, True, False): (192, 144, 30), (96, 2, False, True): (192, 128, 30),
    (128, 2, False, False): (128, 176, 33), (128, 2, True, False): (128, 128, 33), (128, 2, False, True): (128, 128, 33),
    (192, 2, False, False): (128, 112, 37), (192, 2, False, True): (128, 96, 37),
    (256, 2, False, False): (128, 80, 39), (256, 2, False, True): (128, 64, 39),
    (64, 1, False, False): (192, 160, 43), (96, 1, True, False): (192, 128, 45), (128, 1, False, False): (128, 224, 47),
    (192, 1, False, True): (128, 160, 49), (256, 1, False, False): (128, 128, 51), (256, 1, False, True): (128, 64, 51),
}


@pytest.mark.parametrize("key", list(SOURCE_ROWS))
def test_the_tile_table_rows(key):
    d, e, causal, local = key
    t = F.tile_size_fwd_sm90(d, d, causal, local, e)
    assert (t.kBlockM, t.kBlockN, t.line) == SOURCE_ROWS[key]


def test_the_two_transcriptions_of_the_table_agree():
    """numeric.fa3_blocks (branches, at the head dimensions mha_fwd rounds) and the models' Piecewise (symbolic),
    every head dimension 1..256 with d_v = d, and every value width FA3 admits besides (flash_api.cpp:782-786)."""
    pairs = [(d, d) for d in range(1, 257)] + [(d, dv) for d in range(129, 193) for dv in range(97, 129)] + \
        [(d, dv) for d in (1, 33, 64) for dv in range(1, 513)]
    for causal, local in ((False, False), (True, False), (False, True)):
        tables = [sp.lambdify((models.d, models.d_v, models.e), x, "math") for x in models.fa3_tiles(causal, local)]
        for e, (d, dv) in itertools.product((1, 2), pairs):
            t = F.tile_size_fwd_sm90(*F.headdims_rounded(d, dv), causal, local, e)
            assert tuple(int(f(d, dv, e)) for f in tables) == (t.kBlockM, t.kBlockN, t.line), (d, dv, e, causal, local)


def test_fa3_models_count_fa2_at_the_tiles_and_say_which_row():
    """attention.fa3.fwd.window at d = 64 (a local call: 192 x 128, line 25) is attention.fa2.fwd.window at those
    blocks; W_l >= N_k - 1 with W_r = 0 is the causal kernel's row; d = 128 full attention takes 128 x 176."""
    pt = dict(N=1000, N_k=3000, W_l=300, W_r=7)
    got = models.fa3_fwd_window.evaluate(**pt, d=64, e=2)
    want = models.fa2_fwd_window.evaluate(**pt, d=64, B_r=192, B_c=128)
    assert (got["B_r"], got["B_c"], got["tile_line"]) == (192, 128, 25)
    assert all(got[k] == want[k] for k in want)
    causal = models.fa3_fwd_window.evaluate(N=1000, N_k=3000, W_l=2999, W_r=0, d=96, e=2)
    assert (causal["B_r"], causal["B_c"]) == (192, 144)          # the causal row of line 30, not the local one
    assert (models.fa3_fwd.evaluate("B_c", N=10, N_k=10, d=128, e=2), models.fa3_fwd.evaluate(
        "tile_line", N=10, N_k=10, d=128, e=1)) == (176, 47)


def test_fa3_bad_input():
    with pytest.raises(BadInput) as exc:
        models.fa3_fwd.evaluate(N=8, N_k=8, d=128, e=4)
    assert exc.value.param == "e"
    with pytest.raises(BadInput) as exc:
        models.fa3_fwd_causal.evaluate(N=8, N_k=8, d=512, e=2)
    assert exc.value.param == "d"


def test_show_prints_the_row_it_took(capsys):
    from tilebound.cli import main
    assert main(["show", "attention.fa3.fwd", "--at", "N=4096", "N_k=4096", "d=128", "e=2"]) == 0
    rows = {ln.split()[0]: ln.split()[1] for ln in capsys.readouterr().out.splitlines() if ln.split()[:1] in
            (["B_r"], ["B_c"], ["tile_line"])}
    assert rows == {"B_r": "128", "B_c": "176", "tile_line": "33"}
