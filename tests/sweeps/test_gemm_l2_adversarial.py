"""The exact LRU count (model gemm.l2.lru) against the LRU simulation (numeric.l2cache) where it is
hardest: adversarial points (verify.checks.gemm.adversarial_l2_point - few K-steps, G_M in {1, 2, 4, 8},
P from 1 to 264, capacities within +-5 % of the footprints where the LRU's decisions flip), the points
where the old estimate broke its stated bound (issue 10), and the course's real shapes at 50 MB.

The default run draws 400 points; ``-m slow`` adds the 20,000-point sweep (about a minute, in four parts
that the test workers share) and the real shapes, and 3,000 points (in three parts) for the count by classes
of waves (what answers beyond 16,384 waves), drawn where its classes stand for more waves than they hold.
``python -m verify --l2-draws N --seed S`` prints the same comparison.
"""

import random

import pytest

from numeric.l2cache import simulate_l2
from symbolic import registry
from symbolic.models.gemm_l2 import compulsory_reads, wave_reads
from symbolic.gemm_lru import lru_reads
from verify.checks.gemm import L2_ESTIMATE_FAILURES, L2_KEYS, adversarial_l2_point, classes_l2_point
from verify.gemm import real_shape_points

LRU = registry.get("gemm.l2.lru")


def _disagreements(points):
    bad, between = [], 0
    for p in points:
        exact = LRU.evaluate("hbm_reads_lru", **p)
        sim = simulate_l2(*(p[k] for k in L2_KEYS), p["capacity"]).hbm_reads
        if exact != sim:
            bad.append((p, exact, sim))
        args = {k: p[k] for k in ("M", "N", "K", "B_M", "B_N", "G_M", "P")}
        between += compulsory_reads(p["M"], p["N"], p["K"]) < sim < wave_reads(**args)
    return bad, between


def _assert_none(bad, n):
    assert not bad, f"{len(bad)} of {n} disagree, e.g. {bad[:3]}"


@pytest.mark.parametrize("point,reads", sorted(L2_ESTIMATE_FAILURES.items()))
def test_issue_points(point, reads):
    """The old estimate's failures (9.35x, 4.19x, 6.45x): the exact count is the simulation."""
    p = dict(zip(L2_KEYS + ("capacity",), point))
    assert LRU.evaluate("hbm_reads_lru", **p) == reads == simulate_l2(*point).hbm_reads


def test_adversarial_points():
    points = [adversarial_l2_point(random.Random(seed)) for seed in range(400)]
    bad, between = _disagreements(points)
    _assert_none(bad, len(points))
    assert between >= 40                          # the sweep reaches the regime between the two exact bounds


def test_adversarial_points_cover_what_the_issue_asks():
    """Footprints near the capacity: for a good share of points the capacity is within 5 % of one wave's
    or a few waves' panels over K; G_M takes all of 1, 2, 4, 8; P reaches both 1 and 200+; few K-steps."""
    rng = random.Random(7)
    pts = [adversarial_l2_point(rng) for _ in range(2000)]
    assert {p["G_M"] for p in pts} == {1, 2, 4, 8}
    assert min(p["P"] for p in pts) == 1 and max(p["P"] for p in pts) >= 200
    steps = [-(-p["K"] // p["B_K"]) for p in pts]
    assert sum(s <= 3 for s in steps) >= len(pts) // 4


def _drawn(draw, seed: int, n: int, part: int, parts: int) -> list:
    """Part ``part`` of ``parts`` of the ``n`` points drawn from ``random.Random(seed)``: the same points
    whatever the split, in pieces that the test workers (``pytest -n``) run side by side."""
    rng = random.Random(seed)
    points = [draw(rng) for _ in range(n)]
    size = n // parts
    return points[part * size:(part + 1) * size]


@pytest.mark.slow
@pytest.mark.parametrize("part", range(4))
def test_twenty_thousand_adversarial_points(part):
    points = _drawn(adversarial_l2_point, 20_000, 20_000, part, 4)
    bad, between = _disagreements(points)
    _assert_none(bad, len(points))
    assert between >= 500                         # a tenth in between the bounds, in each quarter


@pytest.mark.slow
def test_course_shapes_at_50MB():
    """4096^3, decode M = 16 and 8192^2 x 4096 at 25,000,000 FP16 elements, configs with real reuse
    between the bounds among them."""
    points = real_shape_points()
    bad, between = _disagreements(points)
    _assert_none(bad, len(points))
    assert between >= 3


@pytest.mark.slow
@pytest.mark.parametrize("part", range(3))
def test_three_thousand_points_by_classes(part):
    bad, between = [], 0
    for p in _drawn(classes_l2_point, 3_000, 3_000, part, 3):
        args = [p[k] for k in L2_KEYS]
        got = lru_reads(*args, p["capacity"], method="classes")
        sim = simulate_l2(*args, p["capacity"]).hbm_reads
        if got != sim:
            bad.append((p, got, sim))
        between += compulsory_reads(p["M"], p["N"], p["K"]) < sim < wave_reads(*args[:5], p["G_M"], p["P"])
    _assert_none(bad, 1_000)
    assert between >= 100                         # a tenth in between, in each third
