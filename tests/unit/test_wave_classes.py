"""The waves of a launch in classes of equal neighbourhood (symbolic.wave_classes) and the exact LRU count
summed over them (symbolic.gemm_lru.lru_reads_by_classes, what answers beyond 16,384 waves).

Oracles, each independent of the plan:

* the count wave by wave (``method="waves"``: every wave visited; itself checked against the LRU
  simulation on 20,000 adversarial points) and the LRU simulation (numeric.l2cache) directly;
* the no-reuse wave sum in closed form (floor sums, no waves): the plan's multiplicities times each
  representative's own footprint must give it at any size;
* a count by hand at ``M = N = 10**30``.
"""

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import symbolic.gemm_lru as gemm_lru
from base.errors import BadInput
from numeric.l2cache import simulate_l2
from symbolic import wave_classes
from symbolic.models import gemm_l2
from verify.checks.gemm import classes_l2_point


def _cdiv(a, b):
    return -(-a // b)


def _config(rng):
    """(M, N, K, B_M, B_N, B_K, G_M, P) of a launch small enough to visit wave by wave, in either regime
    of the plan, with at least four groups most of the time."""
    bm, bn, bk = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 5])
    G, P = rng.choice([1, 2, 3, 4, 5, 8, 12]), rng.choice([1, 2, 3, 4, 5, 6, 7, 9, 13, 16, 24])
    if rng.random() < 0.5:                            # big groups: facts 2 and 3
        tn = _cdiv(wave_classes.big_group(G, P), G) + rng.randint(0, 200)
        tm = G * rng.randint(1, 12) - rng.randint(0, G - 1)
    else:                                             # small groups: fact 1
        tn, tm = rng.randint(1, 30), rng.randint(1, 400)
        if rng.random() < 0.1:
            G = tm + rng.randint(0, 3)                # G_M beyond t_m: one group
    M, N = tm * bm - rng.randint(0, bm - 1), tn * bn - rng.randint(0, bn - 1)
    return M, N, rng.randint(1, 12), bm, bn, bk, G, P


def _capacity(rng, M, N, K, bm, bn, bk, G, P):
    """From one step's footprint up to three average waves' panels over K: reuse across waves both hits
    and misses there."""
    sf = gemm_l2.step_footprint(M, N, bm, bn, bk, G, P) * min(bk, K) // bk
    W = _cdiv(_cdiv(M, bm) * _cdiv(N, bn), P)
    return rng.randint(sf, max(sf, 3 * gemm_l2.wave_reads(M, N, K, bm, bn, G, P) // W))


# ------------------------------------------------------------------------------------------ the plan
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 20), st.integers(1, 30))
@example(1, 1, 1, 1)
@example(7, 300, 2, 3)          # big groups
@example(300, 3, 1, 2)          # small groups, many of them
@example(5, 100, 9, 4)          # G_M beyond t_m
@example(15, 18, 14, 1)         # no interior waves in the small regime: the last run was empty
def test_plan_stands_for_every_wave_once(tm, tn, G, P):
    """Multiplicities add up to the waves, and every representative is a wave of the launch."""
    runs = wave_classes.plan(tm, tn, G, P)
    W = _cdiv(tm * tn, min(P, tm * tn))
    assert sum(n * m for _, n, m in runs) == W
    assert all(0 <= w0 and w0 + n <= W and n >= 1 and m >= 1 for w0, n, m in runs)


@pytest.mark.parametrize("tm,tn,G,P", [
    (10 ** 20, 10 ** 20, 8, 132), (10 ** 28, 3, 1, 5), (5, 10 ** 28, 4, 7), (10 ** 27 + 3, 10 ** 26 + 1, 3, 264),
    (10 ** 6 + 1, 10 ** 6 - 1, 8, 132), (12, 10 ** 30, 8, 132),
])
def test_plan_reproduces_the_closed_wave_sum_at_any_size(tm, tn, G, P):
    """Each wave's own footprint is a quantity of its neighbourhood: the plan's multiplicities times the
    representatives' footprints equal the no-reuse wave sum, which is computed in closed form (floor sums,
    no waves) - at sizes where no wave can be visited."""
    B_M, B_N = 3, 5
    M, N = tm * B_M - 1, tn * B_N - 2
    runs = wave_classes.plan(tm, tn, G, P)
    reps = [w0 + i for w0, n, _ in runs for i in range(n)]
    mult = [m for _, n, m in runs for _ in range(n)]
    v = gemm_lru._waves_at(M, N, B_M, B_N, min(G, tm), min(P, tm * tn), reps, object)
    assert sum(m * f for m, f in zip(mult, v.f.tolist())) == gemm_l2.wave_reads(M, N, 1, B_M, B_N, G, P)


def test_work_grows_with_G_and_P_not_with_the_sizes():
    at = {e: wave_classes.work(10 ** e, 10 ** e, 8, 132) for e in (4, 6, 12, 20, 28)}
    assert max(at.values()) <= 300 and max(at.values()) - min(at.values()) <= 10
    # P = 997 (prime): the groups fall at 997 alignments g A mod P, each with its own zone waves
    assert wave_classes.work(10 ** 28, 10 ** 28, 8, 997) > 997


def test_a_plan_beyond_its_budget_is_refused_before_it_is_built():
    """G_M = 10**20 inside a launch of 10**28 rows: a group's middle repeats only every 10**20 waves."""
    with pytest.raises(wave_classes.TooMuchWork) as e:
        wave_classes.plan(10 ** 28, 10 ** 28, 10 ** 20, 10 ** 20, budget=10 ** 6)
    assert e.value.cost > 10 ** 6


# --------------------------------------------------------------------------- the LRU count by classes
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32))
@example(0)
@example(12345)
def test_by_classes_equals_wave_by_wave(seed):
    rng = random.Random(seed)
    args = _config(rng)
    cap = _capacity(rng, *args)
    assert gemm_lru.lru_reads(*args, cap, method="classes") == gemm_lru.lru_reads(*args, cap, method="waves")


def test_by_classes_compresses_and_reaches_reuse():
    """The sweep above is not vacuous: most drawn plans stand for more waves than they hold, and most
    counts lie strictly between the two exact bounds (reuse across waves hits at some steps, not all)."""
    rng = random.Random(1)
    compressed = between = n = 0
    for _ in range(150):
        args = _config(rng)
        M, N, K, bm, bn, bk, G, P = args
        cap = _capacity(rng, *args)
        tm, tn = _cdiv(M, bm), _cdiv(N, bn)
        compressed += wave_classes.work(tm, tn, G, P) < _cdiv(tm * tn, min(P, tm * tn))
        between += M * K + K * N < gemm_lru.lru_reads(*args, cap, method="classes") < gemm_l2.wave_reads(
            M, N, K, bm, bn, G, P)
        n += 1
    assert compressed >= n // 2 and between >= n // 2


def test_by_classes_equals_the_simulation():
    rng = random.Random(3)
    for _ in range(40):
        p = classes_l2_point(rng)
        args = tuple(p[k] for k in ("M", "N", "K", "B_M", "B_N", "B_K", "G_M", "P"))
        assert gemm_lru.lru_reads(*args, p["capacity"], method="classes") == simulate_l2(*args, p["capacity"]).hbm_reads


def test_by_hand_at_10_to_the_30():
    """M = N = 10**30, K = 4096, 128 x 128 x 64 tiles, G_M = 8, P = 132, 25,000,000 elements.  By hand: an A
    row panel is reused by the next wave while the two waves' panels over K (about 25 x 128 x 4096 = 13.1M
    elements) and its own chunk fit, so each A element is read once (K M); a B column is reused inside its
    group (a few pids apart: a hit) but reaches the next group only after all N columns, N x 64 > 25,000,000
    elements at its step: each of the n_g = M / (128 x 8) groups reads all of B once (n_g K N)."""
    M = N = 10 ** 30
    K, ng = 4096, 10 ** 30 // (128 * 8)
    assert gemm_lru.lru_reads(M, N, K, 128, 128, 64, 8, 132, 25_000_000) == K * M + ng * K * N


@pytest.mark.slow
def test_by_hand_where_every_wave_can_be_visited():
    """The same count by hand at M = N = 2**20 (508,400 waves), against the count wave by wave."""
    M = N = 2 ** 20
    K, ng = 4096, M // (128 * 8)
    assert gemm_lru.lru_reads(M, N, K, 128, 128, 64, 8, 132, 25_000_000, method="waves") == K * M + ng * K * N


def test_auto_takes_classes_beyond_CLASSES_FROM():
    """Far beyond the wave budget the model answers (it refused before): the same as by classes."""
    args = (10 ** 9, 10 ** 9, 4096, 128, 128, 64, 8, 132, 25_000_000)
    assert gemm_lru.waves(*args[:2], 128, 128, 132) > gemm_lru.EXACT_WAVES_BUDGET
    from symbolic import registry
    got = registry.get("gemm.l2.lru").evaluate("hbm_reads_lru", M=10 ** 9, N=10 ** 9)
    assert got == gemm_lru.lru_reads(*args, method="classes") == gemm_lru.lru_reads(*args)


def test_step_footprint_at_any_size():
    """One wave's largest footprint at 10**30, by hand.  t_n = 10**30 / 128 columns, a group A = 8 t_n =
    2**26 5**30 pids, so gcd(A, 132) = 4 and a wave that crosses a group boundary leaves t = 4, 8, .., 128
    of its 132 pids in the first group: min(t, 8) + min(132 - t, 8) rows and ceil(t / 8) + ceil((132 - t)
    / 8) columns.  A wave inside a group: 8 rows, at most 18 columns."""
    hand = max([8 + 18] + [min(t, 8) + min(132 - t, 8) + -(-t // 8) + -(-(132 - t) // 8) for t in range(4, 132, 4)])
    sf = gemm_l2.step_footprint(10 ** 30, 10 ** 30, 128, 128, 64, 8, 132)
    assert sf == hand * 128 * 64
    with pytest.raises(BadInput) as e:
        gemm_lru.lru_reads(10 ** 30, 10 ** 30, 64, 128, 128, 64, 8, 132, sf - 1)
    assert e.value.param == "capacity"
