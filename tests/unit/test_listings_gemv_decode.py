"""The annotated listings of ``gemv.tiled`` and of split-KV decoding (``decode.packed``, ``decode.unpacked``).

References are independent of the listings: totals counted by hand at small points, the executors'
counts (:func:`numeric.gemv.run_gemv`, :func:`numeric.decode.run_decode`, per tensor class too) and the
models' formulas per tensor class, compared by SymPy.  ``tests/unit/test_latex_listings.py`` adds the
checks every listing gets (the lines' sum equals the model's ``reads`` and ``writes`` symbolically, one
pinned point against the executor, the LaTeX); ``python -m verify`` runs the models' sweeps
(``gemv.tiled.listing``, ``decode.packed.listing``, ``decode.unpacked.listing``).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import pytest
import sympy as sp

from numeric.decode import run_decode
from numeric.gemv import run_gemv
from symbolic import registry
from symbolic.evaluate import compile_exact
from symbolic.listings import listing_for
from printing.listing import listing_to_latex

DECODE = ("decode.packed", "decode.unpacked")
SHAPE = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S")


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@lru_cache(maxsize=None)
def _compiled_lines(name: str) -> tuple:
    """``((line number, quantity, f), ...)``: each moving line's total, expanded and compiled once."""
    lst = listing_for(name)
    out = []
    for n, _, q, _, _, tot in lst.rows():
        e = lst.expand(tot)
        assert not e.has(sp.Sum), (name, n, e)
        out.append((n, q, compile_exact(e)))
    return tuple(out)


def _line_totals(name: str, point: dict) -> dict:
    """``{line number: (quantity, elements in all)}`` at ``point``: each moving line's total."""
    return {n: (q, f(**{k: point[k] for k in f.names})) for n, q, f in _compiled_lines(name)}


# ----------------------------------------------------------------------------------- gemv
def test_gemv_by_hand():
    """M = 5, K = 7, B_M = 2, B_K = 3: t_m = 3 tile rows; A is read once (5 * 7 = 35), x once per tile row
    (3 * 7 = 21), y stored once (5): reads 56, writes 5; the moving lines are 4 (A), 5 (x) and 8 (y)."""
    lst = listing_for("gemv.tiled")
    assert lst.count(dict(M=5, K=7, B_M=2, B_K=3)) == {"reads": 56, "writes": 5}
    assert {n: q for n, _, q, *_ in lst.rows()} == {4: "reads", 5: "reads", 8: "writes"}


def test_gemv_one_tile_row_is_the_compulsory_traffic_by_hand():
    """B_M >= M (one program): A once (3 * 5 = 15) and x once (5), y once (3)."""
    assert listing_for("gemv.tiled").count(dict(M=3, K=5, B_M=8, B_K=2)) == {"reads": 20, "writes": 3}


@pytest.mark.parametrize("M, K, B_M, B_K", [(1, 1, 1, 1), (5, 7, 2, 3), (17, 5, 4, 16), (64, 48, 16, 16),
                                            (65, 49, 16, 16), (7, 300, 7, 64)])
def test_gemv_lines_equal_the_executor_array_by_array(M, K, B_M, B_K):
    """Line 4 moves what the executor loads of A, line 5 what it loads of x, line 8 what it stores of y."""
    run = run_gemv(M, K, B_M, B_K, real=True)
    lines = _line_totals("gemv.tiled", dict(M=M, K=K, B_M=B_M, B_K=B_K))
    assert lines == {4: ("reads", run.reads_A), 5: ("reads", run.reads_x), 8: ("writes", run.writes)}


# ----------------------------------------------------------------------------------- decode
#: the moving lines of the decode listings (both share them) by the tensor classes they move: a line may move
#: two classes (K and V; a tensor and its LSE), and a class may be moved by several lines
GROUPS = (
    (("reads_Q",), (3,)),                           # Q, once per split that holds blocks
    (("reads_K", "reads_V"), (4,)),                 # K_j, V_j of the split's blocks
    (("writes_O_s", "writes_LSE_s"), (5, 9)),       # the partials: of the splits with blocks, of the empty ones
    (("writes_O", "writes_LSE"), (7, 14, 18)),      # O and LSE: by the one split (S = 1), by the combine
    (("reads_LSE_s",), (13,)),                      # the combine reads every split's LSE_s ...
    (("reads_O_s",), (16,)),                        # ... and every split's O_s
)
#: what each line's text names: the tensors it moves
NAMES = {3: ("$Q_{bh}$",), 4: ("$K_j$", "$V_j$"), 5: ("$O_s$", r"$\mathrm{LSE}_s$"),
         7: ("$O$", r"$\mathrm{LSE}$"), 9: ("$O_s", r"$\mathrm{LSE}_s"), 13: (r"$\mathrm{LSE}_s$",),
         14: (r"$\mathrm{LSE}$",), 16: ("$O_s$",), 18: ("$O_r$",)}


@pytest.mark.parametrize("name", DECODE)
def test_decode_lines_name_the_tensors_they_move(name):
    rows = listing_for(name).rows()
    want = {n: "reads" if classes[0].startswith("reads") else "writes" for classes, lines in GROUPS for n in lines}
    assert {n: q for n, _, q, *_ in rows} == want
    for n, line, *_ in rows:
        assert all(word in line.text for word in NAMES[n]), (n, line.text)


@pytest.mark.parametrize("name", DECODE)
def test_decode_lines_sum_to_the_tensor_classes_symbolically(name):
    """The lines of each group of tensor classes sum to the model's formulas for those classes, for every
    size (the model's reads and writes are the sums of its classes)."""
    lst, m = listing_for(name), registry.get(name)
    total = {n: lst.expand(tot) for n, _, _, _, _, tot in lst.rows()}
    assert {c for classes, _ in GROUPS for c in classes} == {q for q in m.quantities
                                                            if q.startswith(("reads_", "writes_"))}
    for classes, lines in GROUPS:
        diff = sp.Add(*[total[n] for n in lines]) - sp.Add(*[m[c] for c in classes])
        assert sp.simplify(sp.expand(diff)) == 0, (name, classes)


@pytest.mark.parametrize("name, point, want", [
    # N_k = 10 keys in 3 blocks of 4, 4 splits of 1 block: 3 hold blocks, one is empty.  Packed: 2 KV heads,
    # 2 rows a CTA.  Q: 3 splits * 2 CTAs * 2 rows * d 3 = 36; K: 2 heads * 10 keys * 3 = 60; V: 2 * 10 * 2 = 40;
    # combine: 4 rows * (S + S d_v = 4 + 8) = 48.  Writes: every split's partials 4 * 2 * 2 * (d_v + 1) = 48,
    # the combine's O and LSE 4 * 3 = 12.
    ("decode.packed", dict(B=1, H=4, H_kv=2, L_q=1, N_k=10, d=3, d_v=2, B_n=4, S=4), (184, 60)),
    # unpacked: 4 CTAs of 1 row a split; K and V once per query head: 4 * 10 * (3 + 2) = 200.
    ("decode.unpacked", dict(B=1, H=4, H_kv=2, L_q=1, N_k=10, d=3, d_v=2, B_n=4, S=4), (284, 60)),
    # S = 1: no partials, no combine.  R = 2 * 4 * 3 = 24 rows: Q 24 * 3 = 72, K 2 * 2 * 10 * 3 = 120,
    # V 2 * 2 * 10 * 2 = 80; O and LSE 24 * (2 + 1) = 72.
    ("decode.packed", dict(B=2, H=4, H_kv=2, L_q=3, N_k=10, d=3, d_v=2, B_n=4, S=1), (272, 72)),
    ("decode.unpacked", dict(B=2, H=4, H_kv=2, L_q=3, N_k=10, d=3, d_v=2, B_n=4, S=1), (472, 72)),
    # N_k = 23 in 6 blocks (the last of 3 keys), 4 splits of 2 blocks: splits of 8, 8, 7 keys and one empty.
    # Packed, 1 KV head, 2 rows: Q 3 * 2 = 6, K 23, V 23, combine 2 rows * (4 + 4) = 16; partials
    # 4 * 2 * 2 = 16, combine 2 * 2 = 4.
    ("decode.packed", dict(B=1, H=2, H_kv=1, L_q=1, N_k=23, d=1, d_v=1, B_n=4, S=4), (68, 20)),
])
def test_decode_by_hand(name, point, want):
    assert listing_for(name).count(point) == {"reads": want[0], "writes": want[1]}


def _decode_points():
    for N_k, B_n, S in product((1, 7, 16, 23, 100), (1, 4, 16), (1, 2, 3, 6, 40)):
        for H, H_kv, L_q in ((4, 4, 1), (8, 2, 2), (6, 1, 1)):
            yield dict(B=2, H=H, H_kv=H_kv, L_q=L_q, N_k=N_k, d=3, d_v=2, B_n=B_n, S=S)


@pytest.mark.parametrize("name", DECODE)
def test_decode_lines_equal_the_executor_class_by_class(name):
    """Over a grid with S = 1, empty splits (S > n_b, and ceil(n_b / n_bps) < S), N_k < B_n, partial last
    blocks, MHA, GQA and MQA: the lines of each group of classes move what the executor moves of them."""
    packed = name == "decode.packed"
    for pt in _decode_points():
        run = run_decode(*(pt[k] for k in SHAPE), packed=packed).counts()
        lines = _line_totals(name, pt)
        for classes, numbers in GROUPS:
            assert sum(lines[n][1] for n in numbers) == sum(run[c] for c in classes), (pt, classes)
        assert listing_for(name).count(pt) == {"reads": run["reads"], "writes": run["writes"]}, pt


def test_the_split_bound_identity_by_enumeration():
    """The one identity the decode listings' ``subs`` carries, ceil(N_k / (B_n n_bps)) = ceil(n_b / n_bps)
    with n_b = ceil(N_k / B_n), n_bps = ceil(n_b / S), holds at every point of a grid: by integer arithmetic,
    and as the listing's SymPy expressions."""
    from symbolic.listings import decode
    (lhs, rhs), = decode.SUBS.items()
    names = ("N_k", "B_n", "S")
    syms = {n: next(s for s in lhs.free_symbols | rhs.free_symbols if s.name == n) for n in names}
    for N_k, B_n, S in product(range(1, 70), range(1, 12), range(1, 12)):
        n_b = _ceil(N_k, B_n)
        n_bps = _ceil(n_b, S)
        assert _ceil(N_k, B_n * n_bps) == _ceil(n_b, n_bps)
        if (N_k + B_n + S) % 7 == 0:                     # the SymPy forms, at a seventh of the points
            at = {syms["N_k"]: N_k, syms["B_n"]: B_n, syms["S"]: S}
            assert lhs.xreplace(at) == rhs.xreplace(at) == _ceil(n_b, n_bps)


@pytest.mark.parametrize("name", DECODE)
def test_decode_listing_cites_the_kernels(name):
    lst = listing_for(name)
    assert "Flash-Decoding" in lst.source and "flash_fwd_kernel.h:535-585" in lst.source
    assert "1117-1299" in lst.source
    assert ("429-437" in lst.source) == (name == "decode.packed")
    assert ("vLLM" in lst.source) == (name == "decode.unpacked")
    tex = listing_to_latex(lst)
    assert r"\left[S > 1\right]" in tex                  # the Iverson bracket of a split launch


def test_the_largest_sweep_point_agrees_with_the_executor():
    """The decode checks' largest point, N_k = 10**9 in blocks of 1024 (about 10**6 key blocks), which the
    listing counts from one line per split (module docstring of symbolic/listings/decode.py)."""
    pt = dict(B=1, H=32, H_kv=8, L_q=1, N_k=10**9, d=128, d_v=128, B_n=1024, S=128)
    for name in DECODE:
        run = run_decode(*(pt[k] for k in SHAPE), packed=name == "decode.packed").counts()
        assert listing_for(name).count(pt) == {"reads": run["reads"], "writes": run["writes"]}
