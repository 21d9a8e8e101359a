"""Attention formulas: closed forms derived by hand, leading terms, exactness at scale, and the
course's and paper's figures; the family's parameters and the one validator.  Counts by the executor
are compared by verify/checks/attention.py (``python -m verify --model attention``)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import sympy as sp

from base.errors import BadInput
from symbolic import registry
from symbolic.evaluate import exact
from symbolic.floorsum import FloorSum
from symbolic.models import attention
from symbolic.models.attention import B_c, B_r, M, N, N_k, d, d_v, paper_block_sizes, paper_blocks_at
from symbolic.params import Param
from symbolic.roofline import roofline

B = B_r   # the causal divisible forms are written in B_r (B_c = B_r)


def q(name, key):
    return registry.get(name)[key]


# ----------------------------------------------------------------------------- closed forms (by hand)
@pytest.mark.parametrize("name,key,hand", [
    # docs/conventions.md §1.1-1.2 (FlashAttention, arXiv 2205.14135, Algorithms 0 and 3), typed from the text
    ("attention.standard.fwd", "reads", N * d + N_k * d + 2 * N * N_k + N_k * d),
    ("attention.standard.fwd", "writes", 2 * N * N_k + N * d),
    ("attention.standard.fwd", "flops", 4 * N * N_k * d),
    ("attention.standard.bwd", "reads", 5 * N * N_k + 3 * N * d + 2 * N_k * d),
    ("attention.standard.bwd", "writes", 2 * N * N_k + 2 * N_k * d + N * d),
    ("attention.standard.bwd", "flops", 8 * N * N_k * d),
])
def test_standard_matches_reference_text(name, key, hand):
    assert sp.simplify(q(name, key) - hand) == 0


@pytest.mark.parametrize("name,key,hand", [
    # fa1, B_c | N_k: init O,l,m (N d + 2N); K,V once (2 N_k d); per key block Q,O,l,m in, O,l,m out
    ("attention.fa1.fwd", "reads", 2 * N_k * d + (N_k / B_c) * N * (2 * d + 2)),
    ("attention.fa1.fwd", "writes", N * d + 2 * N + (N_k / B_c) * N * (d + 2)),
    # fa2, B_r | N: Q once, K,V once per query block, O and L written once
    ("attention.fa2.fwd", "reads", N * d + (N / B_r) * 2 * N_k * d),
    ("attention.fa2.fwd", "writes", N * d + N),
    # backward: D pass 2Nd in, N out; dQ init; K,V; per key block Q,dO,dQ,L,D in and dQ out; dK,dV out
    ("attention.flash.bwd", "reads", 2 * N * d + 2 * N_k * d + (N_k / B_c) * N * (3 * d + 2)),
    ("attention.flash.bwd", "writes", N + N * d + (N_k / B_c) * N * d + 2 * N_k * d),
    ("attention.flash.bwd", "flops", 10 * N * N_k * d),
    # causal, B_c = B_r = B | N = N_k: key block j is met by T - j query blocks (T = N/B):
    # fa2 reads N d + 2 d B sum_{j<T} (T - j) = N d + d B T (T + 1)
    ("attention.fa2.fwd.causal", "reads", N * d + d * N * (N / B + 1)),
    # flops 4 d B sum_j B (T - j) = 2 d N (N + B)
    ("attention.fa2.fwd.causal", "flops", 2 * d * N * (N + B)),
    ("attention.fa1.fwd.causal", "reads", 2 * N * d + (2 * d + 2) * N * (N + B) / (2 * B)),
    ("attention.flash.bwd.causal", "flops", 5 * d * N * (N + B)),
])
def test_divisible_forms_match_hand_derivation(name, key, hand):
    # the hand forms take V as wide as K (the fa2 forwards' d_v at its default, d; d_v != d: test_attention_dv.py)
    assert sp.simplify(registry.get(name).divisible()[key].subs(d_v, d) - hand) == 0


@pytest.mark.parametrize("name", ["attention.fa1.fwd", "attention.fa2.fwd", "attention.flash.bwd"])
@pytest.mark.parametrize("pt", [dict(N=256, N_k=512, d=64, B_r=64, B_c=128), dict(N=12, N_k=12, d=3, B_r=4, B_c=3)])
def test_divisible_form_equals_exact_formula_where_blocks_divide(name, pt):
    m = registry.get(name)
    subs = {N: pt["N"], N_k: pt["N_k"], d: pt["d"], d_v: pt["d"], B_r: pt["B_r"], B_c: pt["B_c"]}
    for key, form in m.divisible().items():
        assert form.subs(subs) == m.evaluate(key, **pt)


@pytest.mark.parametrize("name", ["attention.fa1.fwd.causal", "attention.fa2.fwd.causal", "attention.flash.bwd.causal"])
def test_causal_divisible_form_equals_exact_sum(name):
    m = registry.get(name)
    for n, b in ((256, 64), (96, 32), (5, 1)):
        for key, form in m.divisible().items():
            assert form.subs({N: n, d: 16, d_v: 16, B: b}) == m.evaluate(key, N=n, N_k=n, d=16, B_r=b, B_c=b)


# ----------------------------------------------------------------------------- asymptotics
@pytest.mark.parametrize("name,leading,theta", [
    ("attention.fa1.fwd.paper", 12 * N**2 * d**2 / M, N**2 * d**2 / M),    # Theorem 2
    ("attention.flash.bwd.paper", 16 * N**2 * d**2 / M, N**2 * d**2 / M),  # Theorem 5
    ("attention.fa2.fwd.paper", 2 * N**2, N**2),                          # B_r = d once M >= 4 d^2
    # causal (B_r = B_c = B, N_k = N): half the blocks, so half the non-causal leading term
    ("attention.fa1.fwd.causal", 3 * N**2 * d / (2 * B), N**2 * d / B),
    ("attention.fa2.fwd.causal", N**2 * (d + d_v) / (2 * B), N**2 * d / B + N**2 * d_v / B),   # V is d_v wide
    ("attention.flash.bwd.causal", 2 * N**2 * d / B, N**2 * d / B),
    ("attention.standard.fwd", 4 * N * N_k + 2 * N * d + 2 * N_k * d, N * N_k + N * d + N_k * d),  # Theta(Nd + N^2)
])
def test_leading_terms(name, leading, theta):
    m = registry.get(name)
    assert sp.simplify(m.leading() - leading) == 0
    assert sp.simplify(m.theta() - theta) == 0


def test_course_ratio_to_lower_bound_is_flat():
    # course demo 2: "÷ (N²d²/M)" about 12 for Algorithm 1's order, about 25 for FA-2's, flat in N
    m1, m2 = registry.get("attention.fa1.fwd.paper"), registry.get("attention.fa2.fwd.paper")
    for n in (1024, 4096, 8192):
        unit = Fraction(n * n * 64 * 64, 51200)
        assert 12 <= m1.evaluate("total", N=n, d=64, M=51200) / unit <= 17
        assert 25 <= m2.evaluate("total", N=n, d=64, M=51200) / unit <= 27


def test_paper_block_sizes():
    br, bc = paper_block_sizes()
    assert (exact(br, M=51200, d=64), exact(bc, M=51200, d=64)) == (64, 200)   # course demo 2
    assert paper_blocks_at(8192, 64) == (32, 32)                               # 16 KB
    assert paper_blocks_at(1, 5) == (1, 1)
    for bad, param in (((0, 64), "M"), ((-5, 64), "M"), ((51200, 0), "d"), ((51200.5, 64), "M"),
                       ((1e30, 64), "M"), ((51200, True), "d"), (("51200", 64), "M")):
        with pytest.raises(BadInput, match=rf"^{param}:") as err:
            paper_blocks_at(*bad)
        assert err.value.param == param


def test_paper_blocks_validate_as_evaluate_does():
    # one positive-integer rule (issue 8): an integral float is the integer, as Model.evaluate takes it
    assert paper_blocks_at(51200.0, 64) == paper_blocks_at(51200, 64) == (64, 200)
    assert paper_blocks_at(51200, 64.0) == (64, 200)
    m = registry.get("attention.fa1.fwd.paper")
    assert m.evaluate("total", N=4096.0, d=64, M=51200.0) == m.evaluate("total", N=4096, d=64, M=51200)
    # ... and a float beyond 2**53, whose binary value is not what was typed, is refused by both
    with pytest.raises(BadInput, match=r"^N:") as err:
        m.evaluate(N=1e30, d=64, M=51200)
    assert err.value.param == "N"
    with pytest.raises(BadInput, match=r"^M:"):
        paper_blocks_at(1e30, 64)
    # the exact int is fine: B_c = 200 | N, so by hand total = (2d + d + 2) N + (2d + 2 + d + 2) (N / 200) N
    n = 10**30
    assert m.evaluate("total", N=n, d=64, M=51200) == 194 * n + 196 * (n // 200) * n


# ----------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("p,name,latex,meaning_word", [
    (N, "N", "N", "query"), (N_k, "N_k", "N_k", "key"), (d, "d", "d", "head"),
    (B_r, "B_r", "B_r", "query"), (B_c, "B_c", "B_c", "key"), (M, "M", "M", "SRAM"),
])
def test_params_carry_name_least_latex_meaning(p, name, latex, meaning_word):
    assert isinstance(p, Param) and p.name == name and p.least == 1 and p.counts
    assert p.latex == latex and sp.latex(p) == latex
    assert meaning_word in p.meaning and "\n" not in p.meaning and len(p.meaning) < 100
    assert p.is_integer and p.is_positive


def test_models_own_the_family_params():
    # the base family (symbolic/models/attention.py); the local and FA3 variants own their own file
    names = [r.name for r in registry.refs() if r.module == "symbolic.models.attention"]
    assert len(names) == 11
    for n in names:
        m = registry.get(n)
        assert all(any(p is q for q in attention.PARAMS) for p in m.params), n
        assert "REFERENCE" not in " ".join(map(str, (m.source, *m.notes, m.summary))), n    # notes are records
    assert [p.name for p in registry.get("attention.fa1.fwd").params] == ["N", "N_k", "d", "B_r", "B_c"]
    assert [p.name for p in registry.get("attention.fa1.fwd.paper").params] == ["N", "d", "M"]
    # the summation index of the causal sums is a dummy, not a parameter a user could type: in the
    # finite-sum form, and in the sum the closed form's FloorSum stands for
    reads = registry.get("attention.fa2.fwd.causal")["reads"]
    assert {s.name for s in reads.free_symbols} <= {"N", "N_k", "d", "d_v", "B_r", "B_c"}
    finite = attention.flash_counts("fa2", causal=True, finite_sum=True)["reads"].atoms(sp.Symbol)
    assert {s.name for s in finite if not isinstance(s, sp.Dummy)} <= {"N", "N_k", "d", "B_r", "B_c"}
    assert any(isinstance(s, sp.Dummy) for s in finite)
    (fs,) = reads.atoms(FloorSum)
    assert all(isinstance(s, sp.Dummy) for s in fs.as_sum().atoms(sp.Symbol) - set(attention.PARAMS))


# ----------------------------------------------------------------------------- exactness
def test_exact_at_three_billion():
    m = registry.get("attention.fa2.fwd")
    n = 3 * 10**9
    got = m.evaluate("reads", N=n, N_k=n, d=128, B_r=128, B_c=128)
    tr = -(-n // 128)
    assert got == n * 128 + tr * 2 * n * 128 and type(got) is int
    assert got > 2**63


def test_evaluate_grid_is_exact_and_vectorised():
    import numpy as np
    m = registry.get("attention.standard.fwd")
    g = m.evaluate_grid("total", N=np.array([1, 2, 10**10]), N_k=np.array([1, 2, 10**10]), d=64)
    assert list(g) == [4 + 4 * 64, 16 + 8 * 64, 4 * 10**20 + 4 * 64 * 10**10]


@pytest.mark.parametrize("bad,param", [(dict(N=0), "N"), (dict(d=-3), "d"), (dict(B_r=1.5), "B_r"),
                                       (dict(Q=3), "Q")])
def test_bad_points_name_the_parameter(bad, param):
    pt = dict(N=8, N_k=8, d=4, B_r=2, B_c=2)
    pt.update(bad)
    with pytest.raises(BadInput, match=rf"^{param}:"):
        registry.get("attention.fa1.fwd").evaluate(**pt)


def test_causal_needs_cache_at_least_as_long():
    with pytest.raises(BadInput, match=r"^N_k:") as err:
        registry.get("attention.fa2.fwd.causal").evaluate(N=8, N_k=4, d=4, B_r=2, B_c=2)
    assert err.value.param == "N_k"


# ----------------------------------------------------------------------------- the paper's figure 2
def test_gpt2_medium_figure2_setting():
    """GPT-2 medium (N 1024, d 64, 16 heads x batch 64) on an A100 40 GB, forward + backward.

    Course (lecture 11, demo 4): standard 25 GB, FlashAttention 7.7-8.8 GB; roofline 16.3 -> 4.9-5.6 ms;
    FlashAttention does ~17 % more matmul FLOPs (the paper measured 13 %)."""
    pt = dict(N=1024, N_k=1024, d=64)
    heads = 16 * 64
    std = [roofline(registry.get(f"attention.standard.{k}"), pt, "A100", "fp16", heads) for k in ("fwd", "bwd")]
    std_bytes = sum(r.bytes for r in std)
    std_time = sum(r.bytes for r in std) / Fraction(1_555 * 10**9)
    assert round(std_bytes / 1e9, 1) == 25.2
    assert 16.2 <= float(std_time) * 1e3 <= 16.3
    for (br, bc), gb, ms in (((64, 200), 8.75, 5.63), ((128, 128), 7.69, 4.94)):
        p = dict(pt, B_r=br, B_c=bc)
        fwd = roofline(registry.get("attention.fa2.fwd"), p, "A100", "fp16", heads)
        bwd = roofline(registry.get("attention.flash.bwd"), p, "A100", "fp16", heads)
        assert round((fwd.bytes + bwd.bytes) / 1e9, 2) == gb
        assert round(float(fwd.t_memory + bwd.t_memory) * 1e3, 2) == ms
        assert fwd.bound == bwd.bound == "memory"
        assert Fraction(fwd.flops + bwd.flops, sum(r.flops for r in std)) == Fraction(14, 12)


# ----------------------------------------------------------------------------- closed forms at any size
CAUSAL = {"fa1": "attention.fa1.fwd.causal", "fa2": "attention.fa2.fwd.causal", "bwd": "attention.flash.bwd.causal"}
_FIVE = (N, N_k, d, B_r, B_c)


def _finite_sum(kind):
    """The causal counts as the finite sums over key blocks the loops run (O(T_c) terms)."""
    from symbolic.evaluate import compile_exact
    return {k: compile_exact(v, _FIVE) for k, v in attention.flash_counts(kind, True, finite_sum=True).items()}


def _small_points():
    pts = [dict(N=n, N_k=nk, d=dd, B_r=br, B_c=bc)
           for n, nk in ((1, 1), (1, 7), (5, 5), (12, 12), (13, 40), (100, 100), (100, 257), (255, 256))
           for br, bc in ((1, 1), (4, 4), (4, 3), (3, 4), (8, 12), (12, 8), (7, 5), (16, 16), (64, 48), (300, 7))
           for dd in (1, 5)]
    return pts + [dict(N=1000, N_k=3001, d=64, B_r=96, B_c=80), dict(N=4096, N_k=4096, d=64, B_r=128, B_c=64),
                  dict(N=4095, N_k=5000, d=64, B_r=128, B_c=100), dict(N=2000, N_k=2000, d=8, B_r=1, B_c=3)]


@pytest.mark.parametrize("kind", list(CAUSAL))
def test_causal_closed_form_equals_the_finite_sum(kind):
    """N_k != N, B_r != B_c and blocks that do not divide: the closed form is the loops' finite sum."""
    m, finite = registry.get(CAUSAL[kind]), _finite_sum(kind)
    for pt in _small_points():
        for key in ("reads", "writes", "flops"):
            assert m.evaluate(key, **pt) == finite[key](**pt), (key, pt)


@given(st.integers(1, 400), st.integers(0, 400), st.integers(1, 70), st.integers(1, 70), st.integers(1, 9))
@settings(max_examples=150, deadline=None)
def test_causal_closed_form_equals_the_finite_sum_drawn(n, extra, br, bc, dd):
    pt = dict(N=n, N_k=n + extra, d=dd, B_r=br, B_c=bc)
    for kind in CAUSAL:
        m, finite = registry.get(CAUSAL[kind]), _finite_sum(kind)
        for key in ("reads", "writes", "flops"):
            assert m.evaluate(key, **pt) == finite[key](**pt), (kind, key, pt)


BIG = 10**30


@pytest.mark.parametrize("name", [n for n in registry.select("attention")])
def test_every_attention_model_is_exact_at_ten_to_the_thirty(name):
    """Every quantity evaluates as a Python int at N = N_k = 10**30 (no loop over blocks)."""
    m = registry.get(name)
    pt = {p.name: BIG for p in m.params if p.name in ("N", "N_k")}
    values = m.evaluate(**pt)
    assert all(type(v) is int and v > 0 for v in values.values()), values


@pytest.mark.parametrize("kind,hand", [
    # B_c = B_r = B divides N = N_k (= 10**30, 128 | 10**30): the hand-derived divisible forms above
    ("fa2", {"reads": lambda n, dd, b: n * dd + dd * n * (n // b + 1), "flops": lambda n, dd, b: 2 * dd * n * (n + b)}),
    ("fa1", {"reads": lambda n, dd, b: 2 * n * dd + (2 * dd + 2) * n * (n + b) // (2 * b)}),
    ("bwd", {"flops": lambda n, dd, b: 5 * dd * n * (n + b)}),
])
def test_causal_at_ten_to_the_thirty_matches_the_hand_forms(kind, hand):
    m = registry.get(CAUSAL[kind])
    for key, f in hand.items():
        assert m.evaluate(key, N=BIG, N_k=BIG, d=64, B_r=128, B_c=128) == f(BIG, 64, 128)


@pytest.mark.parametrize("kind", list(CAUSAL))
def test_causal_scales_with_blocks_at_ten_to_the_thirty(kind):
    """Scaling every size and block by s leaves which blocks meet unchanged (I_j = ⌊(j s B_c - s D)/(s B_r)⌋)
    and multiplies every row count and width by s: reads, writes of fa1/fa2/bwd are affine in s with the
    d-free parts fixed, flops scale by s**2.  So the value at s * (small point) is fixed by the finite sum
    at the small point and at 2 * (small point): a check at 10**30 by an independent route."""
    m, finite = registry.get(CAUSAL[kind]), _finite_sum(kind)
    small = dict(N=1000, N_k=3001, d=8, B_r=96, B_c=80)
    s = 10**27
    big = {k: v * s if k != "d" else v for k, v in small.items()}
    for key in ("reads", "writes", "flops"):
        one = finite[key](**small)
        two = finite[key](**{k: v * 2 if k != "d" else v for k, v in small.items()})
        if key == "flops":
            assert two == 4 * one
            assert m.evaluate(key, **big) == s * s * one
        else:                      # every term is a row count or width times a constant: linear in s
            assert two == 2 * one
            assert m.evaluate(key, **big) == s * one


@pytest.mark.parametrize("kind", list(CAUSAL))
def test_causal_many_blocks_at_ten_to_the_thirty(kind):
    """10**30 rows, 96 x 80 blocks, N_k != N: agrees with Euclid's floor-sum reduction, a second algorithm."""
    from symbolic.floorsum import floor_sum
    n, nk, dd, br, bc = BIG, 3 * BIG + 7, 64, 96, 80
    D = nk - n
    tc, tr = -(-nk // bc), -(-n // br)
    j0 = -(-D // bc)
    S = floor_sum(tc - j0, br, bc, bc * j0 - D)                  # Σ_j max(0, ⌊(j B_c - D)/B_r⌋)
    last = max(0, ((tc - 1) * bc - D) // br)
    S_w = bc * S + (nk - tc * bc) * last
    rows, width_rows, width_blocks = tc * n - br * S, n * nk - br * S_w, tr * nk - S_w
    expected = {"fa1": {"reads": 2 * dd * nk + (2 * dd + 2) * rows, "flops": 4 * dd * width_rows},
                "fa2": {"reads": n * dd + 2 * dd * width_blocks, "flops": 4 * dd * width_rows},
                "bwd": {"reads": 2 * n * dd + 2 * dd * nk + (3 * dd + 2) * rows, "flops": 10 * dd * width_rows}}[kind]
    m = registry.get(CAUSAL[kind])
    for key, v in expected.items():
        assert m.evaluate(key, N=n, N_k=nk, d=dd, B_r=br, B_c=bc) == v
