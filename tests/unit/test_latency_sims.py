"""numeric.pipeline / littles / pingpong: the simulators against hand-worked timelines and identities,
their bad-input errors, and the verify checks and properties (including that they catch a broken
simulator)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from base.errors import BadInput
from numeric.littles import simulate_requests
from numeric.pingpong import simulate_pingpong
from numeric.pipeline import simulate


def test_simulators_do_not_import_symbolic():
    # the simulators are the independent side of verify.checks.latency: loading them must not load a formula
    import subprocess
    import sys
    code = ("import sys, numeric.pipeline, numeric.littles, numeric.pingpong; "
            "print(sorted(m for m in sys.modules if m == 'symbolic' or m.startswith('symbolic.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------------- pipeline
def test_pipeline_hand_timeline():
    # n=3, S=2, L=5, t_x=2, t_c=3 (worked by hand): issues 0, 0, 10; arrivals 7, 9, 17; finishes 10, 13, 20
    r = simulate(3, 3.0, 2.0, 5.0, 2)
    assert r.issue.tolist() == [0, 0, 10]
    assert r.arrive.tolist() == [7, 9, 17]
    assert r.start.tolist() == [7, 10, 17]
    assert r.finish.tolist() == [10, 13, 20]
    assert r.busy == pytest.approx(9 / 20)


def test_synchronous_hand_timeline():
    # load, wait, compute: each tile takes L + t_x + t_c = 10, whatever the buffers
    for stages in (1, 4):
        r = simulate(4, 3.0, 2.0, 5.0, stages, issue_ahead=False)
        assert r.finish.tolist() == [10, 20, 30, 40]
        assert r.issue.tolist() == [0, 10, 20, 30]


def test_bandwidth_serialises_transfers():
    # all loads issue at 0 (S >= n); transfers queue on the channel: arrivals L + t_x, L + 2 t_x, ...
    r = simulate(5, 1.0, 4.0, 10.0, 8)
    assert r.arrive.tolist() == [14, 18, 22, 26, 30]
    assert r.makespan == 31


def brute_force_makespan(n, S, L, t_x, t_c):
    """Time-stepped oracle on integer times: advance a clock one unit at a time, start whatever may
    start.  Independent of the simulator's event formulation."""
    issue, arrive, finish = [None] * n, [None] * n, [None] * n
    channel_until = tc_until = 0
    xfer_q = []               # tiles whose latency has elapsed, waiting for the channel (issue order)
    nxt_issue, nxt_comp = 0, 0
    t = 0
    while finish[n - 1] is None:
        for i in range(nxt_issue, n):                          # issue while buffers allow
            if i < S or (finish[i - S] is not None and finish[i - S] <= t):
                issue[i] = t
                nxt_issue = i + 1
            else:
                break
        for i in range(n):
            if issue[i] is not None and issue[i] + L == t:
                xfer_q.append(i)
        if xfer_q and channel_until <= t:
            i = xfer_q.pop(0)
            channel_until = t + t_x
            arrive[i] = channel_until
        if nxt_comp < n and arrive[nxt_comp] is not None and arrive[nxt_comp] <= t and tc_until <= t:
            tc_until = t + t_c
            finish[nxt_comp] = tc_until
            nxt_comp += 1
        t += 1
    return finish[n - 1]


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 12), S=st.integers(1, 5), L=st.integers(1, 9), t_x=st.integers(1, 5), t_c=st.integers(1, 5))
@example(n=5, S=2, L=9, t_x=1, t_c=1)
@example(n=6, S=6, L=1, t_x=5, t_c=1)
def test_pipeline_against_time_stepped_oracle(n, S, L, t_x, t_c):
    assert simulate(n, t_c, t_x, L, S).makespan == brute_force_makespan(n, S, L, t_x, t_c)


def test_inflight_profile_integrates_to_the_outstanding_time():
    r = simulate(50, 3.0, 2.0, 17.0, 4, tile_bytes=32768, jitter=0.5, seed=3)
    t, level = r.inflight()
    assert level[-1] == 0 and level.min() >= 0
    assert level.max() <= 4 * 32768                             # at most one load per buffer
    expected = np.sum(r.arrive - r.issue) * 32768 / r.makespan  # identity, computed another way
    assert r.mean_inflight_bytes == pytest.approx(expected, rel=1e-12)


def test_jitter_is_seeded_and_has_the_stated_mean():
    a = simulate(1000, 1.0, 1.0, 10.0, 3, jitter=1.0, seed=7)
    b = simulate(1000, 1.0, 1.0, 10.0, 3, jitter=1.0, seed=7)
    c = simulate(1000, 1.0, 1.0, 10.0, 3, jitter=1.0, seed=8)
    assert a.makespan == b.makespan and a.makespan != c.makespan
    assert simulate(10, 1.0, 1.0, 10.0, 3, seed=1).makespan == simulate(10, 1.0, 1.0, 10.0, 3, seed=2).makespan
    big = simulate(200_000, 1.0, 1.0, 10.0, 3, jitter=0.5, seed=0)
    extra = big.latencies - 10.0
    assert extra.min() >= 0
    assert abs(extra.mean() - 5.0) < 5 * 5.0 / math.sqrt(len(extra))   # exponential: sd == mean


@pytest.mark.parametrize("seed", range(5))
def test_more_buffers_never_slow_a_seed_down(seed):
    # the same per-tile latencies (same seed); issue times can only move earlier with more buffers
    spans = [simulate(300, 2.0, 1.5, 9.0, S, jitter=1.0, seed=seed).makespan for S in (1, 2, 3, 5, 8, 13, 300)]
    assert all(x >= y for x, y in zip(spans, spans[1:]))


@pytest.mark.parametrize("kw,param", [
    (dict(n=0), "n"), (dict(n=2.5), "n"), (dict(n=True), "n"), (dict(stages=0), "stages"),
    (dict(t_comp=0.0), "t_comp"), (dict(t_x=-1.0), "t_x"), (dict(latency=0.0), "latency"),
    (dict(latency=float("nan")), "latency"), (dict(jitter=-0.1), "jitter"), (dict(t_comp="1"), "t_comp"),
    (dict(issue_ahead="yes"), "issue_ahead"),
])
def test_pipeline_bad_input(kw, param):
    args = dict(n=4, t_comp=1.0, t_x=1.0, latency=1.0, stages=2)
    args.update(kw)
    with pytest.raises(BadInput) as exc:
        simulate(**args)
    assert str(exc.value).startswith(f"{param}:") and exc.value.param == param


# --------------------------------------------------------------------------------- Little's law
@pytest.mark.parametrize("n,b,bw,lat", [(1000, 16, 1.6e10, 1e-6), (5000, 4, 1e9, 7e-7), (10, 1, 1.0, 3.0)])
def test_littles_deterministic_deviation_is_exact(n, b, bw, lat):
    # hand derivation: bytes x time = n b L over the window (n - 1) b / bw + L
    r = simulate_requests(n, b, bw, lat)
    expected = n * b * lat / ((n - 1) * b / bw + lat)
    assert r.mean_inflight_bytes == pytest.approx(expected, rel=1e-9)


def test_littles_identity_with_jitter():
    # over a window that starts and ends empty, average in flight == throughput x mean latency exactly
    r = simulate_requests(20_000, 16, 2.5e10, 7e-7, jitter=1.0, seed=4)
    assert r.mean_inflight_bytes == pytest.approx(r.throughput * r.mean_latency, rel=1e-9)


def test_littles_error_shrinks_with_run_length():
    target = 2.5e10 * 7e-7
    errs = [abs(simulate_requests(n, 16, 2.5e10, 7e-7).mean_inflight_bytes / target - 1) for n in (10**3, 10**4, 10**5)]
    assert errs[0] > errs[1] > errs[2]


@pytest.mark.parametrize("kw,param", [(dict(n=0), "n"), (dict(request_bytes=0), "request_bytes"),
                                      (dict(bandwidth=-1), "bandwidth"), (dict(latency=0), "latency"),
                                      (dict(jitter=-1), "jitter")])
def test_littles_bad_input(kw, param):
    args = dict(n=4, request_bytes=16, bandwidth=1e9, latency=1e-6)
    args.update(kw)
    with pytest.raises(BadInput) as exc:
        simulate_requests(**args)
    assert str(exc.value).startswith(f"{param}:") and exc.value.param == param


# --------------------------------------------------------------------------------- ping-pong
def test_pingpong_hand_timeline():
    # t_mma = 2, t_exp = 1, two warpgroups, 4 tiles (worked by hand):
    # M0 0-2, M1 2-4, E0 2-3, E1 4-5, M2 4-6 (after E0 and M1), E2 6-7, M3 6-8 (after E1, M2), E3 8-9
    r = simulate_pingpong(4, 2.0, 1.0, 2)
    assert r.mma_start.tolist() == [0, 2, 4, 6]
    assert r.exp_start.tolist() == [2, 4, 6, 8]
    assert r.makespan == 9


def test_pingpong_one_warpgroup_is_serial_and_two_overlap():
    # dyadic times, so the float sums are exact
    assert simulate_pingpong(10, 0.5, 0.25, 1).makespan == 10 * 0.75
    # two warpgroups: the first tile's t_mma + t_exp, then one tile per max(t_mma, t_exp)
    r = simulate_pingpong(1000, 0.5, 0.25, 2)
    assert r.makespan == 0.75 + 999 * 0.5
    assert r.mma_start.tolist() == [0.5 * j for j in range(1000)]          # tensor cores never idle


def test_pingpong_exp_bound_hand_timeline():
    # t_mma = 1, t_exp = 3 (exp-bound, like FP8 with a slow SFU), two warpgroups (worked by hand):
    # M0 0-1, E0 1-4, M1 1-2, E1 4-7 (exp unit busy until 4), M2 4-5 (after E0), E2 7-10, M3 7-8, E3 10-13
    r = simulate_pingpong(4, 1.0, 3.0, 2)
    assert r.mma_start.tolist() == [0, 1, 4, 7]
    assert r.exp_start.tolist() == [1, 4, 7, 10]
    assert r.makespan == 13
    assert simulate_pingpong(4, 1.0, 3.0, 3).makespan == 13           # the exp unit is the bottleneck


@pytest.mark.parametrize("kw,param", [(dict(n_tiles=0), "n_tiles"), (dict(warpgroups=0), "warpgroups"),
                                      (dict(t_mma=0.0), "t_mma"), (dict(t_exp=-2.0), "t_exp")])
def test_pingpong_bad_input(kw, param):
    args = dict(n_tiles=4, t_mma=1.0, t_exp=1.0, warpgroups=2)
    args.update(kw)
    with pytest.raises(BadInput) as exc:
        simulate_pingpong(**args)
    assert str(exc.value).startswith(f"{param}:") and exc.value.param == param


# --------------------------------------------------------------------------------- the verify checks
def _latency_checks():
    """The module's checks and properties, as discovery finds them (module-level objects)."""
    import verify.checks.latency as vl
    from symbolic.registry import scan_module
    from verify.core import Check, Property
    return {c.name: c for c in scan_module(vl, (Check, Property))}


def test_checks_are_bound_to_the_models():
    # each check names its model object; its points use the model's own parameter names (plus the
    # executor-only keys it declares); the statistical and inequality claims are Properties
    from symbolic.models import latency as lt
    from verify.core import Check, Property
    found = _latency_checks()
    assert set(found) == {"latency.pipeline", "latency.pipeline_sync", "latency.littles_law", "latency.pingpong",
                          "latency.pipeline.jitter", "latency.pipeline.jitter_limit"}
    kinds = {name: type(c) for name, c in found.items()}
    assert kinds == {"latency.pipeline": Check, "latency.pipeline_sync": Check, "latency.pingpong": Check,
                     "latency.littles_law": Property, "latency.pipeline.jitter": Property,
                     "latency.pipeline.jitter_limit": Property}
    models = {name: c.model for name, c in found.items()}
    assert models == {"latency.pipeline": lt.pipeline, "latency.pipeline_sync": lt.pipeline_sync,
                      "latency.pingpong": lt.pingpong, "latency.littles_law": lt.littles_law,
                      "latency.pipeline.jitter": lt.pipeline, "latency.pipeline.jitter_limit": lt.pipeline}
    extra_of_property = {"latency.littles_law": {"requests", "jitter", "seed"},
                         "latency.pipeline.jitter": {"jitter"}, "latency.pipeline.jitter_limit": {"jitter"}}
    swept = {"latency.pipeline.jitter_limit": {"S"}}      # the property runs S = 1, 2, 4, ..., n itself
    for name, c in found.items():
        names = {p.name for p in c.model.params}
        extra = set(c.extra) if isinstance(c, Check) else extra_of_property[name]
        need = names - set(c.model.defaults) - swept.get(name, set())
        for point in c.grid(False):
            assert set(point) - extra <= names and set(point) >= need, (name, point)
    assert found["latency.pipeline_sync"].extra == ("S",)


def test_properties_are_found_by_the_verify_registry():
    from verify.registry import checks_of
    assert {c.name for c in checks_of("latency.pipeline")} == {
        "latency.pipeline", "latency.pipeline.jitter", "latency.pipeline.jitter_limit"}
    for model in ("latency.pipeline_sync", "latency.littles_law", "latency.pingpong"):
        assert [c.name for c in checks_of(model)] == [model]


@pytest.mark.parametrize("name", ["latency.pipeline", "latency.pipeline_sync", "latency.littles_law",
                                  "latency.pingpong", "latency.pipeline.jitter", "latency.pipeline.jitter_limit"])
def test_verify_checks_pass(name):
    from verify.core import run_check
    rep = run_check(_latency_checks()[name])
    assert rep.points > 0 and rep.failed == 0, rep.smallest_failure()


def _unserialised(n, t_comp, t_x, latency, stages, **kw):
    """A broken simulator: transfers overlap (no bandwidth limit).  The check must catch it."""
    issue, fin = [0.0] * n, [0.0] * n
    tc = 0.0
    for i in range(n):
        issue[i] = fin[i - stages] if i >= stages else 0.0
        tc = max(issue[i] + latency + t_x, tc) + t_comp
        fin[i] = tc

    class R:
        def as_dict(self):
            return {"makespan": fin[-1], "busy": n * t_comp / fin[-1]}
    return R()


def test_pipeline_check_catches_a_simulator_without_bandwidth_limit(monkeypatch):
    import verify.checks.latency as vl
    from verify.core import run_check
    monkeypatch.setattr(vl, "simulate", _unserialised)
    rep = run_check(_latency_checks()["latency.pipeline"], use_hypothesis=False)
    assert rep.failed > 0
    bad = [f.point for f in rep.failures]
    assert any(p["t_x"] > p["t_c"] for p in bad)           # the bandwidth-bound points fail


def test_jitter_check_catches_latencies_below_the_base(monkeypatch):
    # if the simulator drew latencies *below* the base latency, the sure lower bound would break
    import numeric.pipeline as npipe
    from verify.core import run_check
    monkeypatch.setattr(npipe, "draw_latencies",
                        lambda n, latency, jitter, seed: np.random.default_rng(seed).uniform(0.1, 1.0, n) * latency)
    rep = run_check(_latency_checks()["latency.pipeline.jitter"], use_hypothesis=False)
    assert rep.failed > 0


@pytest.mark.slow
def test_a_million_tiles():
    n = 10**6
    # deterministic, S = 6: L + t_x + t_c = 1260 <= 6 x 280, so (hand) makespan = 1260 + (n - 1) 280
    r = simulate(n, 280.0, 280.0, 700.0, 6)
    assert r.finish.shape == (n,) and r.makespan == pytest.approx(1260 + (n - 1) * 280, rel=1e-12)
    # mean latency 1400: one tile per max(280, 1960 / 6) at best (Jensen), so busy <= 280 x 6 / 1960
    jittered = simulate(n, 280.0, 280.0, 700.0, 6, jitter=1.0, seed=0)
    assert jittered.busy < 6 * 280 / 1960


def test_jitter_limit_check_catches_a_simulator_that_ignores_the_buffers(monkeypatch):
    # a simulator stuck at one buffer never approaches the mean-latency formula as S grows
    import verify.checks.latency as vl
    from verify.core import run_check
    real = vl.simulate

    def one_buffer(n, t_comp, t_x, latency, stages, **kw):
        return real(n, t_comp, t_x, latency, 1, **kw)
    monkeypatch.setattr(vl, "simulate", one_buffer)
    rep = run_check(_latency_checks()["latency.pipeline.jitter_limit"], use_hypothesis=False)
    assert rep.failed == rep.points
