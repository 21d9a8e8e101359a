"""The exact L2 counts of the GEMM launch order: the wave sum in closed form (symbolic.models.gemm_l2,
symbolic.floor_moments) and the exact LRU count (symbolic.gemm_lru, model gemm.l2.lru).

Oracles, each independent of the code under test:

* brute force over the launch order written out here (sets of rows and columns per wave);
* the stack property checked on the raw request stream: for every request of ``run_gemm``'s stream, the
  distinct size touched since the line's last use, computed by scanning (no LRU, no formula);
* a term-by-term count of Lemma 3 (one term per (chunk, wave), written out here without the pieces);
* hand-traced LRU runs;
* floor sums by brute force.

The sweep against the LRU simulator (20,000 adversarial points) is tests/sweeps/test_gemm_l2_adversarial.py.
"""

import subprocess
import sys

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import symbolic.gemm_lru as gemm_lru
from base.errors import BadInput
from numeric.gemm import run_gemm
from numeric.l2cache import simulate_l2
from symbolic import registry
from symbolic.evaluate import compile_exact
from symbolic.floor_moments import floor_prefix, floor_prefix_sums, floor_sums
from symbolic.models import gemm_l2


# ------------------------------------------------------------------------------------------ floor sums
@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60), st.integers(-50, 300), st.integers(-300, 300), st.integers(1, 80))
@example(0, 1, 1, 1)
@example(10, 0, 5, 3)
def test_floor_moments_by_brute_force(n, a, b, c):
    q = [(a * i + b) // c for i in range(n)]
    assert floor_sums(n, a, b, c) == (sum(q), sum(i * x for i, x in enumerate(q)), sum(x * x for x in q))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 30), st.integers(0, 80), st.integers(0, 80), st.integers(1, 40))
def test_floor_prefix_sums_by_brute_force(n, A, B, P):
    S = [sum(t // P for t in range(y)) for y in range(A * n + B + 1)]
    assert floor_prefix_sums(n, A, B, P) == sum(S[A * i + B] for i in range(n))
    assert all(floor_prefix(y, P) == S[y] for y in range(len(S)))


def test_floor_moments_at_huge_sizes():
    """Euclid's steps: 10**30 terms, exact; the second moment of a line through the origin by hand:
    a = c -> q_i = i, so h = sum i**2 = (n-1) n (2n-1) / 6."""
    n = 10 ** 30
    assert floor_sums(n, 7, 0, 7) == (n * (n - 1) // 2, (n - 1) * n * (2 * n - 1) // 6, (n - 1) * n * (2 * n - 1) // 6)


# ------------------------------------------------------------------------------------------ the wave sum
def written_out_order(tm, tn, group):
    """The GROUP_M launch order by its definition: groups of ``group`` tile rows, down each column of the
    group, then across (the oracle's own, not symbolic.models.gemm_l2.tile_of)."""
    order = []
    for first in range(0, tm, group):
        rows = range(first, min(first + group, tm))
        for n in range(tn):
            order.extend((m, n) for m in rows)
    return order


def brute_wave_reads(M, N, K, bm, bn, group, wave):
    """The launch order written out; each wave reads each distinct panel's valid part once, K deep."""
    tm, tn = -(-M // bm), -(-N // bn)
    order = written_out_order(tm, tn, group)
    total = 0
    for s in range(0, len(order), wave):
        rows = {m for m, _ in order[s:s + wave]}
        cols = {n for _, n in order[s:s + wave]}
        total += K * (sum(min(bm, M - m * bm) for m in rows) + sum(min(bn, N - n * bn) for n in cols))
    return total


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 200), st.integers(1, 200), st.integers(1, 9), st.sampled_from([1, 2, 3, 4, 7, 16, 64, 300]),
       st.sampled_from([1, 2, 3, 5, 8, 16, 300]), st.sampled_from([1, 2, 3, 4, 8, 100]),
       st.one_of(st.integers(1, 40), st.integers(1, 5000)))
@example(300, 128, 10, 256, 128, 1, 1)
@example(512, 14336, 4, 256, 128, 4, 132)
@example(8, 8, 1, 1, 1, 1, 100)               # one wave larger than the launch
@example(40, 3, 1, 1, 1, 3, 7)                # one column: waves longer than a group hold its blocks twice
def test_wave_reads_closed_form_by_brute_force(M, N, K, bm, bn, group, wave):
    want = brute_wave_reads(M, N, K, bm, bn, group, wave)
    assert gemm_l2.wave_reads(M, N, K, bm, bn, group, wave) == want
    assert gemm_l2.wave_reads_periodic(M, N, K, bm, bn, group, wave) == want


@pytest.mark.parametrize("M,N,B_M,B_N,G_M,P", [
    (10 ** 12 + 7, 384, 128, 128, 8, 12),       # t_n = 3, 24 pids a group: period 2 waves
    (10 ** 12, 100, 7, 100, 1, 5),              # one column, row-major
    (3 * 10 ** 11 + 1, 1000, 16, 8, 4, 125),    # waves of a whole group's width
    (10 ** 12 + 5, 257, 64, 128, 3, 7),         # a short last column and a short last group
])
def test_wave_reads_closed_form_against_the_periodic_sum_at_large_sizes(M, N, B_M, B_N, G_M, P):
    """Sizes where the wave-by-wave sum over one period is still cheap (int64): both derivations agree."""
    assert gemm_l2.wave_reads(M, N, 4096, B_M, B_N, G_M, P) == gemm_l2.wave_reads_periodic(M, N, 4096, B_M, B_N, G_M, P)


def test_model_quantity_is_the_sum_over_waves():
    """``hbm_reads_no_reuse`` prints as the SymPy sum over waves it stands for; that sum, compiled as a
    plain loop over the waves, equals the closed form the model evaluates by."""
    q = registry.get("gemm.l2")["hbm_reads_no_reuse"]
    assert isinstance(q, gemm_l2.WaveReads)
    loop = compile_exact(sp.Sum(*q.as_sum().args))
    for pt in [dict(M=300, N=128, K=10, B_M=256, B_N=128, G_M=1, P=1), dict(M=97, N=61, K=5, B_M=8, B_N=4, G_M=3, P=11)]:
        assert loop(**pt) == registry.get("gemm.l2").evaluate("hbm_reads_no_reuse", **pt) == brute_wave_reads(
            *(pt[k] for k in ("M", "N", "K", "B_M", "B_N", "G_M", "P")))
    from printing.text import to_text
    assert to_text(q).startswith("Σ[w=0..") and str(q).startswith("Sum(")


def test_wave_sum_at_any_size():
    """Exact at 10**9 (the issue's hang) and 10**30, against a count by hand: with G_M = 8 and P = 132
    (= 4 mod 8) a wave's 132 pids inside a group start at a block offset of 0 or 4 and so touch exactly
    17 blocks of 8 pids: 8 A rows and 17 B columns of 128, K deep.  Waves that cross a group boundary
    (one in ~470,000 at N = 10**9) and the partial last panels change the total by less than 1e-5."""
    m = registry.get("gemm.l2")
    for n in (10 ** 9, 10 ** 18, 10 ** 30):
        v = m.evaluate("hbm_reads_no_reuse", M=n, N=n, K=4096)
        waves = (-(-n // 128)) ** 2 // 132
        assert abs(v / (waves * (8 + 17) * 128 * 4096) - 1) < 1e-5


# ------------------------------------------------------------------------------------------ the LRU count
def request_stream(M, N, K, bm, bn, bk, group, wave):
    out = []
    run_gemm(M, N, K, bm, bn, bk, group=group, wave=wave, real=False,
             on_request=lambda kind, i, k, size: out.append(((kind, i, k), size)))
    return out


def stack_distance_misses(stream, capacity):
    """Lemma 1 applied to the raw stream: a request hits iff its line was used before and the distinct
    lines touched since, plus itself, fit.  Quadratic scan; no cache object."""
    last, misses = {}, 0
    for t, (line, size) in enumerate(stream):
        if line in last:
            seen = {}
            for other, osize in stream[last[line] + 1:t]:
                if other != line:
                    seen[other] = osize
            hit = sum(seen.values()) + size <= capacity
        else:
            hit = False
        if not hit:
            misses += size
        last[line] = t
    return misses


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 30), st.sampled_from([3, 4, 8, 16]),
       st.sampled_from([2, 4, 8, 16]), st.sampled_from([2, 4, 8, 32]), st.sampled_from([1, 2, 4, 8]),
       st.integers(1, 12), st.floats(0, 1))
def test_stack_property_on_the_raw_stream(M, N, K, bm, bn, bk, group, wave, u):
    """Lemma 1 (the simulated LRU = the stack-distance rule) and the count (= both), capacity from one
    step's footprint to everything."""
    sf = gemm_l2.step_footprint(M, N, bm, bn, bk, group, wave) * min(bk, K) // bk
    cap = sf + int(u * (M * K + K * N))
    stream = request_stream(M, N, K, bm, bn, bk, group, wave)
    want = stack_distance_misses(stream, cap)
    assert simulate_l2(M, N, K, bm, bn, bk, group, wave, cap).hbm_reads == want
    assert gemm_lru.lru_reads(M, N, K, bm, bn, bk, group, wave, cap) == want


def lemma3_terms(M, N, K, bm, bn, bk, group, wave, capacity):
    """Lemma 3 term by term: for every chunk and every wave that uses it, the previous wave using it, the
    pids of the two uses and the three footprints, and every K-step tested one by one."""
    tm, tn = -(-M // bm), -(-N // bn)
    order = written_out_order(tm, tn, group)
    T = len(order)

    def f(a, b):                                      # valid elements per unit depth of pids [a, b)
        rows = {order[i][0] for i in range(max(a, 0), min(b, T))}
        cols = {order[i][1] for i in range(max(a, 0), min(b, T))}
        return sum(min(bm, M - m * bm) for m in rows) + sum(min(bn, N - n * bn) for n in cols)

    depths = [min(bk, K - k) for k in range(0, K, bk)]
    total = 0
    for kind in ("A", "B"):
        uses = {}
        for pid, (m, n) in enumerate(order):
            uses.setdefault(m if kind == "A" else n, []).append(pid)
        for idx, pids in uses.items():
            size = min(bm, M - idx * bm) if kind == "A" else min(bn, N - idx * bn)
            total += size * K                         # the first use of each chunk
            for prev, cur in zip(pids, pids[1:]):
                w, w2 = prev // wave, cur // wave
                if w == w2:
                    continue                          # same wave, same step: a hit (Lemma 2)
                a = f(w * wave, w2 * wave)
                b = f((w + 1) * wave, (w2 + 1) * wave)
                x = f(prev, cur) if kind == "A" else f(prev + 1, cur + 1)
                for k, d in enumerate(depths):
                    D = a * sum(depths[k + 1:]) + b * sum(depths[:k]) + x * d
                    if D > capacity:
                        total += size * d
    return total


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 90), st.integers(1, 90), st.integers(1, 120), st.sampled_from([1, 3, 4, 8, 16, 32]),
       st.sampled_from([1, 2, 5, 8, 16, 32]), st.sampled_from([1, 4, 8, 16, 100]), st.sampled_from([1, 2, 3, 4, 8]),
       st.one_of(st.integers(1, 12), st.integers(1, 300)), st.floats(0, 1))
@example(1936 // 8, 784 // 8, 128, 4, 16, 64, 1, 15, 0.3)
def test_pieces_equal_lemma3_term_by_term(M, N, K, bm, bn, bk, group, wave, u):
    """The pieces (three kinds of reuse, cut where x, the size or the previous wave change) give what
    Lemma 3 gives chunk by chunk and step by step."""
    sf = gemm_l2.step_footprint(M, N, bm, bn, bk, group, wave) * min(bk, K) // bk
    cap = sf + int(u * (M * K + K * N))
    assert gemm_lru.lru_reads(M, N, K, bm, bn, bk, group, wave, cap) == lemma3_terms(M, N, K, bm, bn, bk, group, wave, cap)


def test_lru_by_hand():
    """2 x 2 tiles of 8 x 8, K = B_K = 10 (one step: chunks are panels of 80 elements), one tile a wave,
    row-major: requests A0 B0 | A0 B1 | A1 B0 | A1 B1.
    capacity 160 (two chunks): A0 B0 miss, A0 hit, B1 miss (evicts B0), A1 miss (evicts A0), B0 miss
    (evicts B1), A1 hit, B1 miss: 6 misses = 480.
    capacity 240: A0 B0 miss, A0 hit, B1 miss, A1 miss (evicts B0), B0 miss (evicts A0), A1 hit, B1 hit:
    5 misses = 400.  capacity 320: everything fits, 4 misses = 320."""
    for cap, want in ((160, 480), (240, 400), (320, 320)):
        assert gemm_lru.lru_reads(16, 16, 10, 8, 8, 10, 1, 1, cap) == want
        assert simulate_l2(16, 16, 10, 8, 8, 10, 1, 1, cap).hbm_reads == want


def test_issue_points():
    """Issue 10's pinned point: B (784 x 128 = 100,352) stays while the A rows stream past: the LRU reads
    exactly M K + K N = 348,160."""
    m = registry.get("gemm.l2.lru")
    v = m.evaluate(M=1936, N=784, K=128, B_M=32, B_N=128, B_K=64, G_M=1, P=15, capacity=111_296)
    assert v["hbm_reads_lru"] == 1936 * 128 + 128 * 784 == 348_160
    assert v["hbm_reads_fits"] <= v["hbm_reads_lru"] <= v["hbm_reads_no_reuse"] == 3_256_320


def test_many_tilings_at_once(monkeypatch):
    """Tilings counted together (sharing pieces across B_K, in chunks of waves, in object arithmetic)
    give what each gives alone."""
    M, N, K, cap = 150, 130, 70, 5000
    tilings = [(8, 8, 8, 1, 5), (8, 8, 16, 1, 5), (16, 4, 8, 2, 9), (4, 32, 32, 8, 3), (8, 8, 8, 1, 5), (32, 32, 8, 4, 200)]
    one = [gemm_lru.lru_reads(M, N, K, *t, cap) for t in tilings]
    assert gemm_lru.lru_reads_many(M, N, K, *zip(*tilings), cap) == one
    monkeypatch.setattr(gemm_lru, "_CHUNK_WAVES", 3)
    assert gemm_lru.lru_reads_many(M, N, K, *zip(*tilings), cap) == one
    monkeypatch.setattr(gemm_lru, "_INT64_SAFE", 1000)          # every intermediate as a Python int
    assert gemm_lru.lru_reads_many(M, N, K, *zip(*tilings), cap) == one


def test_beyond_int64_against_the_simulation():
    """Blocks of 10**18 and more, K-steps of 10**24, a wave of 10**25 programs: few tiles and steps (the
    simulator stays cheap) but every size, pid and product past int64 - the count falls back to Python ints."""
    import random
    rng = random.Random(11)
    for _ in range(60):
        bm, bn = rng.choice([10 ** 18, 3 * 10 ** 17 + 1, 10 ** 19, 5]), rng.choice([1, 2, 10 ** 15, 10 ** 20])
        M, N = rng.randint(1, 12) * bm - rng.randint(0, bm - 1), rng.randint(1, 9) * bn - rng.randint(0, bn - 1)
        bk = rng.choice([10 ** 24, 7 * 10 ** 23, 3])
        K = rng.randint(1, 6) * bk - rng.randint(0, bk - 1)
        group, wave = rng.choice([1, 2, 4]), rng.choice([rng.randint(1, 12), 10 ** 25])
        cap = gemm_l2.step_footprint(M, N, bm, bn, bk, group, wave) * min(bk, K) // bk + rng.randint(0, M * K + K * N)
        want = simulate_l2(M, N, K, bm, bn, bk, group, wave, cap).hbm_reads
        assert gemm_lru.lru_reads(M, N, K, bm, bn, bk, group, wave, cap) == want


@pytest.mark.parametrize("call,param", [
    (lambda: gemm_lru.lru_reads(64, 64, 64, 16, 16, 16, 1, 4, 1000), "capacity"),      # below one step (1,280)
    (lambda: gemm_lru.lru_reads(64, 64, 64, 16, 16, 16, 1, 0, 10 ** 6), "P"),
    (lambda: gemm_lru.lru_reads(64, 64, 64, 16, 16, 16, 1, -3, 10 ** 6), "P"),
    (lambda: gemm_lru.lru_reads(64, 64, 64, 16, 16, 16, 0, 4, 10 ** 6), "G_M"),
    (lambda: gemm_lru.lru_reads(64, 64, 64, 16, 16, 16, 1, 4, 0), "capacity"),
    # wave by wave beyond its budget of waves
    (lambda: gemm_lru.lru_reads(10 ** 9, 10 ** 6, 64, 16, 16, 16, 1, 4, 10 ** 6, method="waves"), "M"),
    (lambda: gemm_lru.lru_reads(10 ** 6, 10 ** 9, 64, 16, 16, 16, 1, 4, 10 ** 6, method="waves"), "N"),
    # by classes: the work grows with G_M (a group's middle repeats every G_M waves) and P (the alignments)
    (lambda: gemm_lru.lru_reads(10 ** 30, 10 ** 30, 64, 1, 1, 1, 10 ** 29, 4, 10 ** 6), "G_M"),
    (lambda: gemm_lru.lru_reads(10 ** 30, 10 ** 30, 64, 1, 1, 1, 10 ** 7, 10 ** 7, 10 ** 6), "P"),
    (lambda: gemm_lru.lru_reads(64, 64, 64, 16, 16, 16, 1, 4, 10 ** 6, method="simulate"), "method"),
    (lambda: registry.get("gemm.l2.lru").evaluate(capacity=1000), "capacity"),
    (lambda: registry.get("gemm.l2.lru").evaluate(P=0), "P"),
    (lambda: gemm_lru.lru_reads_many(64, 64, 64, [16], [16, 8], [16], [1], [4], 10 ** 6), "B_M"),
])
def test_bad_input(call, param):
    with pytest.raises(BadInput) as e:
        call()
    assert e.value.param == param and str(e.value).startswith(param + ":")


def test_budget_message_says_how_to_raise_it():
    with pytest.raises(BadInput) as e:
        gemm_lru.lru_reads(10 ** 9, 10 ** 6, 64, 16, 16, 16, 1, 4, 10 ** 6, method="waves")
    msg = str(e.value)
    assert "waves" in msg and "EXACT_WAVES_BUDGET" in msg and f"{gemm_lru.EXACT_WAVES_BUDGET:,}" in msg
    assert "method='classes'" in msg
    with pytest.raises(BadInput) as e:
        gemm_lru.lru_reads(10 ** 30, 10 ** 30, 64, 1, 1, 1, 10 ** 29, 4, 10 ** 6)
    msg = str(e.value)
    assert "representative waves" in msg and "EXACT_WAVES_BUDGET" in msg and "not with M, N, K" in msg


def test_refuse_false_gives_none(monkeypatch):
    v = gemm_lru.lru_reads_many(64, 64, 64, [16, 16], [16, 16], [16, 16], [1, 1], [4, 2], 2048, budget=4, refuse=False)
    assert v[0] is not None and v[1] is None      # 16 tiles: 4 waves of 4 (in the budget), 8 waves of 2 (not)
    # a wave of 4 tiles is one tile row: 16 + 4 x 16 = 80 elements per unit depth
    v = gemm_lru.lru_reads_many(64, 64, 64, [16, 16], [16, 16], [16, 64], [1, 1], [4, 4], 3000, refuse=False)
    assert v[0] is not None and v[1] is None      # one step: 80 x 16 = 1,280 fits; 80 x 64 = 5,120 does not


def test_fits_and_no_reuse_regimes():
    """The count meets its bounds where they are exact: all of A and B in the cache (M K + K N), and a
    cache below the reuse floor (the wave sum)."""
    args = (200, 200, 160, 16, 16, 16, 8, 13)
    comp = 200 * 160 * 2
    assert gemm_lru.lru_reads(*args, comp) == comp
    rf = gemm_l2.reuse_floor(*args)
    sf = gemm_l2.step_footprint(200, 200, 16, 16, 16, 8, 13)
    assert sf < rf
    assert gemm_lru.lru_reads(*args, rf - 1) == gemm_l2.wave_reads(200, 200, 160, 16, 16, 8, 13)


def test_model_module_does_not_import_numpy():
    """tilebound list imports the model modules: NumPy waits until an array is computed."""
    code = "import sys, symbolic.models.gemm_l2; from symbolic import registry; registry.names(); " \
           "print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
