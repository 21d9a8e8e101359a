"""symbolic.models.latency: the formulas against independent references.

* The pipeline makespan against an exact brute-force *longest path* over the schedule's dependency
  graph, built node by node here (the oracle), which is itself checked against a literal
  event-by-event recurrence and a hand-worked timeline first.
* Closed forms derived by hand: synchronous ``n (L + t_x + t_c)``; ``n <= S`` ->
  ``L + t_x + t_c + (n-1) max(t_x, t_c)``; the steady state of docs/conventions.md §5.
* Figures quoted in docs/conventions.md §3/§5 (NVIDIA's H100 figures) and the FlashAttention-3 paper.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from symbolic.models import latency as lt
from symbolic.hardware import H100, LOADED_HBM_LATENCY, L2_BYTES_PER_CLK_PER_SM


# --------------------------------------------------------------------------------- the oracle
def recurrence_oracle(n, S, L, t_x, t_c):
    """The schedule written as its rules, in exact arithmetic: issue when the buffer frees,
    transfer after the latency and after the previous transfer, compute in order."""
    a, r, f = [], [], []
    for i in range(n):
        a.append(F(0) if i < S else f[i - S])
        start_x = max(a[i] + L, r[i - 1]) if i else a[i] + L
        r.append(start_x + t_x)
        f.append((max(r[i], f[i - 1]) if i else r[i]) + t_c)
    return f[-1]


def longest_path_oracle(n, S, L, t_x, t_c):
    """Longest path through the explicit dependency graph (nodes issue/arrive/finish per tile),
    relaxed in topological order - a different computation from the recurrence."""
    nodes = [(i, k) for i in range(n) for k in ("a", "r", "f")]
    edges = {v: [] for v in nodes}          # v -> [(u, weight)] meaning time(v) >= time(u) + weight
    for i in range(n):
        if i >= S:
            edges[(i, "a")].append(((i - S, "f"), 0))
        edges[(i, "r")].append(((i, "a"), L + t_x))
        if i:
            edges[(i, "r")].append(((i - 1, "r"), t_x))
            edges[(i, "f")].append(((i - 1, "f"), t_c))
        edges[(i, "f")].append(((i, "r"), t_c))
    dist = {}
    for v in nodes:                          # tile order, a -> r -> f is topological
        dist[v] = max([F(0)] + [dist[u] + w for u, w in edges[v]])
    return dist[(n - 1, "f")]


def test_oracles_agree_with_a_hand_timeline():
    # n=3, S=2, L=5, t_x=2, t_c=3:
    # tile0 issue 0, data 5..7, compute 7..10; tile1 issue 0, transfer 7..9, compute 10..13;
    # tile2 issues at 10 (buffer of tile0), data 15..17, compute 17..20.
    assert recurrence_oracle(3, 2, 5, 2, 3) == 20
    assert longest_path_oracle(3, 2, 5, 2, 3) == 20


times = st.integers(1, 60).map(lambda k: F(k, 4))


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 25), S=st.integers(1, 7), L=times, t_x=times, t_c=times)
@example(n=1, S=1, L=F(1, 4), t_x=F(1, 4), t_c=F(1, 4))          # a single tile
@example(n=3, S=7, L=F(5), t_x=F(1), t_c=F(2))                   # n < S: every load issues at 0
@example(n=11, S=3, L=F(15), t_x=F(1, 2), t_c=F(1, 4))          # latency-bound, partial last round
def test_the_two_oracles_agree(n, S, L, t_x, t_c):
    assert recurrence_oracle(n, S, L, t_x, t_c) == longest_path_oracle(n, S, L, t_x, t_c)


# --------------------------------------------------------------------------------- the makespan
def makespan(**pt):
    return lt.pipeline.evaluate("makespan", **pt)


@pytest.mark.parametrize("n,S,L,t_x,t_c,regime", [
    (1, 1, 7, 2, 3, "one tile"),
    (256, 1, 700, 280, 280, "synchronous"),
    (256, 2, 700, 280, 280, "latency-bound"),
    (256, 8, 700, 100, 280, "compute-bound"),
    (256, 8, 700, 1291, 280, "bandwidth-bound"),
    (3, 8, 700, 280, 280, "n < S"),
    (8, 8, 700, 280, 280, "n == S"),
    (9, 8, 5000, 1, 1, "n == S + 1"),
    (100, 4, 560, 280, 280, "boundary T == S p"),
    (31, 5, F(1, 3), F(2, 7), F(5, 11), "rationals"),
])
def test_makespan_equals_longest_path(n, S, L, t_x, t_c, regime):
    L, t_x, t_c = F(L), F(t_x), F(t_c)
    assert makespan(n=n, S=S, L=L, t_x=t_x, t_c=t_c) == longest_path_oracle(n, S, L, t_x, t_c), regime


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 60), S=st.integers(1, 12), L=times, t_x=times, t_c=times)
@example(n=1, S=1, L=F(1, 4), t_x=F(1, 4), t_c=F(1, 4))
@example(n=12, S=4, L=F(2), t_x=F(1), t_c=F(1))        # T == S p exactly
@example(n=13, S=4, L=F(15), t_x=F(1, 4), t_c=F(1, 2))  # latency-bound, partial last round
def test_makespan_equals_recurrence(n, S, L, t_x, t_c):
    assert makespan(n=n, S=S, L=L, t_x=t_x, t_c=t_c) == recurrence_oracle(n, S, L, t_x, t_c)


def test_hand_closed_forms():
    T = lt.L + lt.t_x + lt.t_c
    p = sp.Max(lt.t_x, lt.t_c)
    sync = lt.pipeline_sync
    assert sp.simplify(sync["makespan"] - lt.n * T) == 0
    assert sp.simplify(sync["busy"] - lt.t_c / T) == 0
    # n <= S: every load issues at 0, one segment
    pl = lt.pipeline
    for n_, S_ in ((1, 1), (3, 8), (8, 8)):
        e = pl["makespan"].subs({lt.n: n_, lt.S: S_})
        assert sp.simplify(e - (T + (n_ - 1) * p)) == 0, (n_, S_)
    # the two pieces agree on the boundary T == S p (the makespan is continuous in L)
    path1, pathM = (piece for piece, _ in pl["makespan"].args)
    on_boundary = {lt.L: lt.S * lt.t_c - lt.t_x - lt.t_c}
    pts = [{lt.n: n_, lt.S: S_, lt.t_x: F(1), lt.t_c: F(2)} for n_ in (5, 17, 40) for S_ in (2, 3, 6)]
    for pt in pts:
        a = path1.subs(on_boundary).subs(pt)
        b = pathM.subs(on_boundary).subs(pt)
        assert sp.nsimplify(a - b) == 0, pt


@pytest.mark.parametrize("S,L,t_x,t_c", [(1, 700, 280, 280), (3, 700, 280, 280), (8, 700, 100, 280),
                                         (8, 700, 1291, 280), (2, 10, 3, 1)])
def test_steady_state_is_the_limit_of_the_makespan(S, L, t_x, t_c):
    # docs/conventions.md §5: one tile per max(t_c, t_x, (L + t_x + t_c)/S), written out here by hand
    L, t_x, t_c = F(L), F(t_x), F(t_c)
    period = max(t_c, t_x, (L + t_x + t_c) / S)
    pl = lt.pipeline
    assert pl.evaluate("period", n=1, S=S, L=L, t_x=t_x, t_c=t_c) == period
    for n_ in (10**3, 10**6, 10**9):
        ms = pl.evaluate("makespan", n=n_, S=S, L=L, t_x=t_x, t_c=t_c)
        assert abs(ms / n_ - period) <= (L + t_x + t_c) * 2 / n_


def test_stage_counts_for_the_course_numbers():
    # lecture-8 model: 128x128x64 tile at 4096 FLOP/clk, 32 KiB at 64 B/clk, both at 1.83 GHz; 700 ns
    clk = F(H100.clock_hz)
    t_c = F(2 * 128 * 128 * 64, H100.tc_flops_per_sm_clk) / clk
    t_x = F(32 * 1024, L2_BYTES_PER_CLK_PER_SM.value) / clk
    L = LOADED_HBM_LATENCY.value
    pl = lt.pipeline
    v = pl.evaluate(n=256, S=1, L=L, t_x=t_x, t_c=t_c)
    assert v["stages_to_hide"] == 5                      # (700 + 280 + 280) / 280 = 4.5 -> 5
    assert abs(float(v["busy"]) - 0.222) < 0.001         # synchronous: 280 / 1260
    t_hbm = F(32 * 1024 * H100.sms, H100.hbm_bytes_per_s)
    cap = pl.evaluate("bandwidth_cap", n=1, S=1, L=L, t_x=t_hbm, t_c=t_c)
    assert abs(float(cap) - 0.2167) < 0.001              # t_c / t_x, 4.6x slower transfer


def test_stages_to_saturate_is_the_regime_boundary():
    pl = lt.pipeline
    for L, t_x, t_c in ((700, 280, 280), (50, 30, 7), (1, 1, 1)):
        pt = dict(n=40, L=F(L), t_x=F(t_x), t_c=F(t_c))
        need = pl.evaluate("stages_to_saturate", S=1, **pt)
        p = max(F(t_x), F(t_c))
        first_piece = F(L + t_x + t_c) + 39 * p                  # hand: T + (n - 1) max(t_x, t_c)
        for S_ in range(1, need + 3):                               # need + 2 < n = 40: never n <= S
            assert (pl.evaluate("makespan", S=S_, **pt) == first_piece) == (S_ >= need), S_


# --------------------------------------------------------------------------------- Little's law
def test_littles_law_reference_figures():
    # docs/conventions.md §5: 3.35 TB/s x 700 ns = 2.35 MB, 17.8 KB per SM on 132 SMs
    m = lt.littles_law
    v = m.evaluate(BW=F(H100.hbm_bytes_per_s), L=F(700, 10**9), n_SM=132, w=4)
    assert v["inflight_bytes"] == 2_345_000
    assert round(float(v["inflight_per_sm"])) == 17_765
    assert round(float(v["warps_per_sm"]), 1) == 138.8          # the course: ~139 warps for 4-byte loads
    assert v["loads_per_thread"] == 3                            # 4441 requests / (64 warps x 32 threads)
    v16 = m.evaluate(BW=F(H100.hbm_bytes_per_s), L=F(700, 10**9), n_SM=132, w=16)
    assert round(float(v16["requests_per_sm"])) == 1110
    tma = m.evaluate("requests_per_sm", BW=F(H100.hbm_bytes_per_s), L=F(700, 10**9), n_SM=132, w=32 * 1024)
    assert tma < 1


@pytest.mark.parametrize("kind,warps,requests", [
    ("ld.global.f32 (4 B per thread)", 138.8, 4441),
    ("ld.global.v4 (16 B per thread)", 34.7, 1110),
    ("cp.async (16 B per thread, bypasses registers)", 34.7, 1110),
])
def test_access_widths(kind, warps, requests):
    # hand: 3.35e12 B/s x 700e-9 s / 132 SMs = 17,765 B per SM, divided by the width, by 32 threads
    width, issuer = lt.ACCESS_WIDTHS[kind]
    v = lt.littles_law.evaluate(BW=F(H100.hbm_bytes_per_s), L=F(700, 10**9), n_SM=132, w=width)
    assert round(float(v["requests_per_sm"])) == requests and round(float(v["warps_per_sm"]), 1) == warps
    assert issuer == "thread"


# --------------------------------------------------------------------------------- ping-pong
@pytest.mark.parametrize("fp8,exp_rate,gain,ratio", [
    (False, 4_500 * 10**9, 1.43, 0.43), (True, 4_500 * 10**9, 1.86, 0.86),     # NVIDIA's table (the course)
    (False, 3_900 * 10**9, 1.50, 0.50), (True, 3_900 * 10**9, 1.99, 0.99),     # the FlashAttention-3 paper
])
def test_pingpong_gain_h100(fp8, exp_rate, gain, ratio):
    # H100: 989.4 TFLOPS BF16 (x2 for FP8); 4 d = 512 FLOP per score; hand: gain = 1 + t_exp / t_mma
    assert exp_rate in (H100.exp_per_s, H100.exp_per_s_alt)
    m = lt.pingpong
    peak = F(H100.tc_peak_flops * (2 if fp8 else 1))
    v = m.evaluate(d=128, F_tc=peak, R_exp=F(exp_rate))
    assert v["t_mma"] == F(512) / peak and v["t_exp"] == F(1, exp_rate)
    assert round(float(v["gain"]), 2) == gain
    assert round(float(v["exp_over_mma"]), 2) == ratio


def test_pingpong_fa3_exp_figure_is_the_other_source():
    # FlashAttention-3: 16 ops/SM/clk x 132 x 1.83 GHz = 3.87 T/s; the table keeps both
    assert abs(H100.exp_per_s_alt - 16 * 132 * 1_830_000_000) / H100.exp_per_s_alt < 0.01


@pytest.mark.parametrize("n,G,t_mma,t_exp", [
    (1, 1, 1, 1), (5, 1, 1, 1), (1, 2, 1, 1), (6, 2, 1, 1), (7, 3, 1, 1),
    (4, 2, 1, 3), (4, 3, 1, 3), (5, 2, 3, 1), (9, 4, 2, 5),
])
def test_pingpong_makespan_hand_forms(n, G, t_mma, t_exp):
    m = lt.pingpong
    pt = dict(d=2, F_tc=F(8, t_mma), R_exp=F(1, t_exp), n=n, k=1, G=G)    # 4 d / F_tc = t_mma, 1 / R_exp = t_exp
    got = m.evaluate("makespan", **pt)
    # hand: one warpgroup serialises, n (t_mma + t_exp); two or more: the first tile's t_mma + t_exp, then
    # one tile per max(t_mma, t_exp) (e.g. t_mma = 1, t_exp = 3, n = 4: exps at 1, 4, 7, 10 -> 13)
    serial = n * (t_mma + t_exp)
    assert got == (serial if G == 1 else t_mma + t_exp + (n - 1) * max(t_mma, t_exp))
    assert m.evaluate("serial_makespan", **pt) == serial


# --------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("model,point,param", [
    (lt.pipeline, dict(n=0, S=1, L=1, t_x=1, t_c=1), "n"),
    (lt.pipeline, dict(n=1, S=0, L=1, t_x=1, t_c=1), "S"),
    (lt.pipeline, dict(n=1, S=1, L=0, t_x=1, t_c=1), "L"),
    (lt.pipeline, dict(n=1, S=1, L=1, t_x=-1, t_c=1), "t_x"),
    (lt.pipeline, dict(n=1, S=1, L=1, t_x=1, t_c=F(-1, 2)), "t_c"),
    (lt.pipeline, dict(n=2.5, S=1, L=1, t_x=1, t_c=1), "n"),          # a count is an integer
    (lt.pipeline, dict(n=1, S=1, L=float("inf"), t_x=1, t_c=1), "L"),  # a time is finite
    (lt.pipeline_sync, dict(n=1, L=1, t_x=1, t_c=0), "t_c"),
    (lt.littles_law, dict(BW=0, L=1, n_SM=1, w=4), "BW"),
    (lt.littles_law, dict(BW=1, L=1, n_SM=1, w=0), "w"),
    (lt.pingpong, dict(d=1, F_tc=1, R_exp=-3), "R_exp"),
    (lt.pingpong, dict(d=1, F_tc=1, R_exp=1, G=0), "G"),
], ids=lambda v: getattr(v, "name", None))
def test_bad_input_names_the_parameter(model, point, param):
    with pytest.raises(BadInput) as exc:
        model.evaluate(**point)
    assert str(exc.value).startswith(f"{param}:") and exc.value.param == param


def test_models_are_registered():
    from symbolic.registry import get, names
    for ref in (lt.littles_law, lt.pipeline, lt.pipeline_sync, lt.pingpong):
        assert ref.name in names()                       # found by discovery, no list to edit
        m = get(ref.name)
        assert m is ref.model
        assert all(m.unit(q) for q in m.quantities), ref.name


def test_parameters_are_the_models_own():
    # each parameter carries the name a user types, its least value, its LaTeX form and a meaning;
    # times and rates are positive reals, counts positive integers; no global symbol table
    import subprocess
    import sys
    code = "import sys, symbolic.models.latency; print('symbolic.symbols' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
    reals = {"L", "t_x", "t_c", "BW", "F_tc", "R_exp"}
    latex = {"BW": "B", "n_SM": "n_{SM}", "W_max": "W_{max}", "F_tc": "F_{tc}", "R_exp": "R_{exp}"}
    for ref in (lt.littles_law, lt.pipeline, lt.pipeline_sync, lt.pingpong):
        for p in ref.params:
            assert p.meaning and p.latex, (ref.name, p.name)
            assert p.counts == (p.name not in reals), (ref.name, p.name)
            assert p.is_positive and (p.is_integer if p.counts else p.is_integer is False)
            if p.name in latex:
                assert p.latex == latex[p.name]
    assert sp.latex(lt.littles_law["inflight_bytes"]) == "B L"
    # the segment count of the makespan's derivation is a dummy, not a parameter
    assert not any(s.name == "m" for s in lt.pipeline["makespan"].free_symbols)


def test_sources_are_primary():
    for ref in (lt.littles_law, lt.pipeline, lt.pipeline_sync, lt.pingpong):
        text = " ".join(map(str, [ref.summary, ref.source, *ref.notes]))      # notes are records: their text
        assert "REFERENCE" not in text and "shared/" not in text, ref.name
    little, pingpong, pipeline = (str(r.source) for r in (lt.littles_law, lt.pingpong, lt.pipeline))
    assert "Little" in little and "Operations Research 9(3)" in little
    assert "2407.08608" in pingpong and "3.1" in pingpong
    assert "docs/conventions.md §5" in pipeline
