"""The JavaScript printer (:mod:`printing.javascript`): exact BigInt evaluation under node, against
independent references - Python's exact evaluation (:mod:`symbolic.evaluate`, ints and Fractions), a floor
sum added term by term (:func:`symbolic.floorsum.floor_sum_loop`), and values worked by hand - and the
expressions it refuses (a count computed by an algorithm, a sum that would be a loop, a float).

The node tests run every case in one node process and skip without node (``CI=true``: they fail).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from fractions import Fraction

import pytest
import sympy as sp

from printing.javascript import RUNTIME, NotExpressible, to_javascript
from symbolic.evaluate import compile_exact
from symbolic.floorsum import FloorSum, floor_sum_loop, gcd
from symbolic.params import param, real_param

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None and os.environ.get("CI") != "true", reason="needs node")

N, B, C = param("N"), param("B"), param("C")
Z = param("Z", least=0)
T = real_param("T")


def _value(v) -> str:
    f = Fraction(v)
    return f"Q.rat({f.numerator}n, {f.denominator}n)"


def run_node(cases) -> list[str]:
    """``cases``: ``(expr, {name: value})``; each evaluated by the printed JavaScript in one node process
    (``Q.show``: digits, or ``num/den``; ``ERR <message>`` when it throws)."""
    if NODE is None:
        pytest.fail("node is not installed")
    lines = ["const out = [];"]
    for expr, point in cases:
        v = ", ".join(f"{json.dumps(k)}: {_value(x)}" for k, x in point.items())
        lines.append(f"try {{ const v = {{{v}}}; out.push(Q.show({to_javascript(expr)})); }} "
                     f"catch (e) {{ out.push('ERR ' + e.message); }}")
    lines.append("console.log(JSON.stringify(out));")
    run = subprocess.run([NODE, "-e", RUNTIME + "\n".join(lines)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def shown(v) -> str:
    f = Fraction(v)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


# values worked by hand: Python's // and % (floor toward minus infinity; the divisor's sign)
HAND = [
    (sp.floor(-N / 2), {"N": 7}, "-4"),
    (sp.ceiling(-N / 2), {"N": 7}, "-3"),
    (sp.ceiling(N / B), {"N": 10 ** 30 + 1, "B": 10 ** 15}, str(10 ** 15 + 1)),
    (sp.Mod(-N, 3), {"N": 7}, "2"),
    (sp.Mod(N, B), {"N": 10 ** 30 + 5, "B": 7}, str((10 ** 30 + 5) % 7)),
    (N / B, {"N": 6, "B": 4}, "3/2"),                            # 6/4 reduced by the gcd
    (B ** -2 * N, {"N": 9, "B": 6}, "1/4"),
    (sp.Min(N, B, C), {"N": 5, "B": 3, "C": 4}, "3"),
    (sp.Max(N - B, 0), {"N": 5, "B": 9}, "0"),
    (sp.Piecewise((N, N < B), (B, sp.Eq(N, B)), (N + B, True)), {"N": 5, "B": 5}, "5"),
    (sp.Piecewise((N, N < B), (B, sp.Eq(N, B)), (N + B, True)), {"N": 6, "B": 5}, "11"),
    (gcd(N, B), {"N": 12, "B": 18}, "6"),
    (FloorSum(N, 3, 2, 7), {"N": 10}, str(sum((3 * t + 2) // 7 for t in range(10)))),
    (FloorSum(N, B, C, 7), {"N": 0, "B": 3, "C": 5}, "0"),
    (sp.sqrt(N), {"N": 10 ** 30}, str(10 ** 15)),                 # an exact root is exact
    (sp.sqrt(N / B), {"N": 9, "B": 4}, "3/2"),
    (T * N, {"T": Fraction(7, 10), "N": 3}, "21/10"),
    (sp.Abs(N - B), {"N": 2, "B": 9}, "7"),
]


@needs_node
def test_hand_worked_values():
    got = run_node([(e, p) for e, p, _ in HAND])
    assert got == [want for _, _, want in HAND]


@needs_node
def test_an_irrational_root_is_not_exact():
    (got,) = run_node([(sp.sqrt(N), {"N": 2})])
    assert got.startswith("ERR not exact")


def _random_expr(rng: random.Random, depth: int):
    atoms = [N, B, C, Z, sp.Integer(rng.randint(-9, 9)), sp.Rational(rng.randint(-9, 9), rng.randint(1, 9))]
    if depth == 0:
        return rng.choice(atoms)
    kind = rng.randrange(9)
    a, b = _random_expr(rng, depth - 1), _random_expr(rng, depth - 1)
    if kind == 0:
        return a + b
    if kind == 1:
        return a * b
    if kind == 2:
        return sp.ceiling(a / B)
    if kind == 3:
        return sp.floor(a / C)
    if kind == 4:
        return sp.Min(a, b)
    if kind == 5:
        return sp.Max(a, b)
    if kind == 6:
        return sp.Piecewise((a, N < B * C), (b, True))          # a condition SymPy keeps as a relation
    if kind == 7:
        return a ** rng.randint(0, 3)
    return sp.Mod(a, B)


@needs_node
@pytest.mark.parametrize("seed", range(3))
def test_random_expressions_equal_exact_python(seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(80):
        e = _random_expr(rng, 3)
        pt = {"N": rng.choice([1, 7, 4096, 10 ** 30]), "B": rng.choice([1, 3, 64]), "C": rng.choice([2, 5, 128]),
              "Z": rng.choice([0, 1, 9])}
        cases.append((e, pt))
    got = run_node(cases)
    for (e, pt), g in zip(cases, got):
        want = shown(compile_exact(e, (N, B, C, Z))(**pt))
        assert g == want, (e, pt)


@needs_node
def test_floor_sums_equal_the_sum_term_by_term():
    rng = random.Random(7)
    cases, wants = [], []
    for _ in range(150):
        n, a, c, b = rng.randint(0, 300), rng.randint(0, 50), rng.randint(0, 50), rng.randint(1, 40)
        cases.append((FloorSum(N, B, C, Z + 1), {"N": n, "B": a, "C": c, "Z": b - 1}))
        wants.append(str(floor_sum_loop(n, b, a, c)))
        t = sp.Dummy("t", integer=True)                  # a Sum of floor(affine): the same reduction
        lo = rng.randint(-5, 5)
        cases.append((sp.Sum(sp.floor((B * t + C) / (Z + 1)), (t, lo, N + lo - 1)),
                      {"N": n, "B": a, "C": c, "Z": b - 1}))
        wants.append(str(sum((a * i + c) // b for i in range(lo, n + lo))))
    assert run_node(cases) == wants


@needs_node
def test_floor_sum_at_10_30_is_bounded_time_and_exact():
    # the closed form of Graham, Knuth, Patashnik, Concrete Mathematics eq. (3.32) with gcd(a, b) = 1:
    # sum_{t=0}^{b-1} floor(a t / b) = (a - 1)(b - 1)/2, over Q full periods plus the periods' rise
    a, b, q = 3, 10 ** 30 + 1, 5           # coprime; n = q b terms
    n = q * b
    want = q * (a - 1) * (b - 1) // 2 + a * b * q * (q - 1) // 2
    (got,) = run_node([(FloorSum(N, 3, 0, B), {"N": n, "B": b})])
    assert got == str(want)


def test_an_algorithm_is_not_expressible():
    from symbolic import registry
    lru = registry.get("gemm.l2.lru")
    with pytest.raises(NotExpressible) as exc:
        to_javascript(lru["hbm_reads_lru"])
    assert exc.value.node == "LRUReads" and "algorithm" in str(exc.value)


def test_a_sum_that_is_a_loop_a_float_and_a_stray_symbol_are_refused():
    t = sp.Dummy("t", integer=True)
    for e in (sp.Sum(t ** 2, (t, 0, N)), N * sp.Float(0.5), N + sp.Dummy("x")):
        with pytest.raises(NotExpressible):
            to_javascript(e)


def test_a_parameter_is_read_from_the_values_object():
    assert to_javascript(N) == 'v["N"]'
    assert to_javascript(param("B_r"), values="point") == 'point["B_r"]'
