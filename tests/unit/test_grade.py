"""verify.grade: a student's formula or function against a model's executed count.

The references are independent of the code under test: FlashAttention's Algorithm 1 (Dao et al. 2022,
arXiv 2205.14135) counted by a plain loop here, with the paper's blocks (line 1: ``B_c = ceil(M/4d)``,
``B_r = min(B_c, d)``), itself checked against the closed form of docs/conventions.md §1.3 where the blocks
divide; the student's values computed with Fractions by hand; and the smallest disagreeing point found by
brute force over every point in order of :func:`verify.grade.point_key`'s definition (sum, then order).
"""

from __future__ import annotations

import sys
from fractions import Fraction
from itertools import product

import pytest
import sympy as sp

from base.errors import BadInput
from symbolic import registry
from verify import grade as grader

MODEL = "attention.fa1.fwd.paper"
#: flash-attention issue #1705: "Is this IO-complexity calculation correct?"
ISSUE_1705 = "2*N*d + 8*N**2*d**2/M + 8*N**2*d/M"
#: Algorithm 1 counted line by line (docs/conventions.md §1.3) with partial blocks (§1.7), re-typed by hand:
#: O, l, m initialised (N d + 2 N), K and V read once (2 N d), and per key block every query row's Q, O, l, m
#: read and O, l, m written ((3 d + 4) N)
BY_HAND = "3*N*d + 2*N + (3*d + 4)*N*ceil(N/ceil(M/(4*d)))"


def algorithm1_total(N, d, M):
    """Elements moved by FlashAttention's Algorithm 1 with the paper's blocks, counted loop by loop."""
    B_c = -(-M // (4 * d))
    B_r = min(B_c, d)
    moved = N * d + 2 * N                         # line 2: O, l, m initialised in HBM
    for j0 in range(0, N, B_c):                   # lines 5-6: load K_j, V_j
        moved += 2 * min(B_c, N - j0) * d
        for i0 in range(0, N, B_r):               # lines 7-8: load Q_i, O_i, l_i, m_i
            b = min(B_r, N - i0)
            moved += 2 * b * d + 2 * b
            moved += b * d + 2 * b                # lines 12-13: write O_i, l_i, m_i
    return moved


def issue_1705(N, d, M):
    return 2 * N * d + Fraction(8 * N**2 * d**2, M) + Fraction(8 * N**2 * d, M)


def in_key_order(limit):
    """Every (N, d, M) with N + d + M <= limit, smallest sum first, then in parameter order."""
    pts = [p for p in product(range(1, limit), repeat=3) if sum(p) <= limit]
    return sorted(pts, key=lambda p: (sum(p), p))


def smallest_disagreement(student, limit=24):
    return next((p for p in in_key_order(limit) if student(*p) != algorithm1_total(*p)), None)


# ------------------------------------------------------------------------------------------ the oracle
@pytest.mark.parametrize("N,d,M", [(64, 4, 64), (256, 16, 1024), (96, 8, 128), (12, 3, 48)])
def test_oracle_is_section_1_3_where_the_blocks_divide(N, d, M):
    B_c = M // (4 * d)
    assert M % (4 * d) == 0 and N % B_c == 0 and N % min(B_c, d) == 0
    T_c = N // B_c
    reads = 2 * N * d + T_c * (2 * N * d + 2 * N)
    writes = N * d + 2 * N + T_c * (N * d + 2 * N)
    assert algorithm1_total(N, d, M) == reads + writes


def test_the_formula_typed_by_hand_is_the_oracle():
    expr = grader.formula_student(registry.get(MODEL), BY_HAND)
    for N, d, M in in_key_order(30)[::7]:
        assert expr.value({"N": N, "d": d, "M": M}) == algorithm1_total(N, d, M)


# ------------------------------------------------------------------------------------------ the issue's example
def test_issue_1705_smallest_point_and_both_values():
    g = grader.grade(MODEL, "total", ISSUE_1705)
    assert not g.agree and g.search.method == "hypothesis"
    N, d, M = smallest_disagreement(issue_1705)
    assert (N, d, M) == (1, 1, 1)
    assert g.point == {"N": N, "d": d, "M": M}
    assert g.student == issue_1705(N, d, M) == 18          # 2 + 8 + 8
    assert g.executed == algorithm1_total(N, d, M) == 12   # 3 + 2 + 7: one block each way
    assert g.formula == 12 and g.difference == 6
    N_, d_, M_ = registry.get(MODEL).params              # the model's own symbols (Params)
    assert sp.simplify(g.leading["student"] - 8 * N_**2 * d_**2 / M_) == 0   # the student's constant
    assert sp.simplify(g.leading["model"] - 12 * N_**2 * d_**2 / M_) == 0    # (3d + 4) N^2 4d/M -> 12
    assert g.theta["student"] == g.theta["model"]


def test_the_formula_typed_by_hand_agrees():
    g = grader.grade(MODEL, "total", BY_HAND)
    assert g.agree and g.point is None and g.search.examples > 100


def test_partial_blocks_forgotten_smallest_point_is_found():
    # N/B_c instead of ceil(N/B_c): right whenever B_c divides N, so (1, 1, 1) agrees; the first point where
    # B_c = ceil(M/4) >= 2 does not divide N = 1 is M = 5
    text = "3*N*d + 2*N + (3*d + 4)*N*N/ceil(M/(4*d))"

    def student(N, d, M):
        return 3 * N * d + 2 * N + (3 * d + 4) * N * Fraction(N, -(-M // (4 * d)))
    g = grader.grade(MODEL, "total", text)
    pt = smallest_disagreement(student)
    assert pt == (1, 1, 5)
    assert g.point == dict(zip("NdM", pt))
    assert g.student == student(*pt) == Fraction(17, 2) and g.executed == algorithm1_total(*pt) == 12
    assert g.difference == Fraction(-7, 2)


def test_the_lowering_step_reaches_the_smallest_point():
    # wrong only from N = 7 and d = 2 on: hypothesis finds some such point, the lowering step walks it down
    text = BY_HAND + " + floor(N/7)*floor(d/2)"

    def student(N, d, M):
        return algorithm1_total(N, d, M) + (N // 7) * (d // 2)
    g = grader.grade(MODEL, "total", text)
    pt = smallest_disagreement(student)
    assert pt == (7, 2, 1)
    assert g.point == dict(zip("NdM", pt)) and g.difference == 1


def test_a_formula_undefined_at_a_point_disagrees_there():
    g = grader.grade(MODEL, "total", BY_HAND + " + 1/(N - 1) - 1/(N - 1)")
    # SymPy cancels the two terms: no point is undefined
    assert g.agree
    g = grader.grade(MODEL, "total", BY_HAND + " + d/(N - 1)")
    assert not g.agree and g.point == {"N": 1, "d": 1, "M": 1} and "undefined" in g.error


# ------------------------------------------------------------------------------------------ --leading
def test_leading_agrees_for_the_right_constant():
    g = grader.grade_leading(MODEL, "total", "12*N**2*d**2/M + 5*N*d")
    assert g.agree and g.mode == "leading"


def test_leading_disagrees_for_a_wrong_constant():
    g = grader.grade_leading(MODEL, "total", ISSUE_1705)
    assert not g.agree
    assert g.theta["student"] == g.theta["model"]            # the right Θ class, the wrong constant


def test_leading_refuses_a_function():
    with pytest.raises(BadInput) as e:
        grader.grade_leading(MODEL, "total", grader.function_student(
            registry.get(MODEL), lambda N, d, M: N))
    assert e.value.param == "leading"


# ------------------------------------------------------------------------------------------ without hypothesis
def test_grid_fallback_without_hypothesis(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)       # import hypothesis -> ImportError
    g = grader.grade(MODEL, "total", ISSUE_1705)
    assert g.search.method == "grid" and "hypothesis is not installed" in g.search.note
    assert g.point == {"N": 1, "d": 1, "M": 1} and g.student == 18 and g.executed == 12
    from verify.registry import check_for

    grid = {tuple(sorted(p.items())) for p in check_for(registry.get(MODEL), "total").grid(True)}
    g = grader.grade(MODEL, "total", BY_HAND)
    assert g.agree and g.search.method == "grid" and g.search.examples == len(grid)      # each distinct point once


def test_without_hypothesis_the_lowering_step_walks_the_grid_point_down(monkeypatch):
    # the grid's smallest disagreeing point is (64, 64, 64); lowered one parameter at a time it becomes (7, 2, 1),
    # the brute-force smallest
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    g = grader.grade(MODEL, "total", BY_HAND + " + floor(N/7)*floor(d/2)")

    def student(N, d, M):
        return algorithm1_total(N, d, M) + (N // 7) * (d // 2)
    assert g.search.method == "grid"
    assert g.point == dict(zip("NdM", smallest_disagreement(student))) == {"N": 7, "d": 2, "M": 1}


# ------------------------------------------------------------------------------------------ Python functions
def _module(tmp_path, body: str):
    path = tmp_path / "student.py"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_python_function_from_a_file(tmp_path):
    path = _module(tmp_path, "import math\n\n"
                             "def total(N, d, M):\n"
                             "    B_c = math.ceil(M / (4 * d))\n"
                             "    return 3*N*d + 2*N + (3*d + 4) * N * -(-N // B_c)\n\n"
                             "def wrong(N, d, M):\n"
                             "    return 12 * N**2 * d**2 // M\n")
    m = registry.get(MODEL)
    fn, spec = grader.load_function(f"{path}:total")
    assert grader.grade(m, "total", grader.function_student(m, fn, spec)).agree
    fn, spec = grader.load_function(f"{path}:wrong")
    g = grader.grade(m, "total", grader.function_student(m, fn, spec))

    def wrong(N, d, M):
        return 12 * N**2 * d**2 // M
    pt = smallest_disagreement(wrong)
    assert g.point == dict(zip("NdM", pt)) and g.student == wrong(*pt) and g.executed == algorithm1_total(*pt)
    assert g.leading["student"] is None and "function" in g.why_no_leading["student"]


def test_a_function_that_raises_reports_the_smallest_point_that_raised(tmp_path):
    path = _module(tmp_path, "def total(N, d, M):\n"
                             "    if N + d > 5:\n"
                             "        raise ValueError('not implemented beyond N + d = 5')\n"
                             f"    return {BY_HAND.replace('ceil(N/ceil(M/(4*d)))', '-(-N // -(-M // (4*d)))')}\n")
    m = registry.get(MODEL)
    fn, spec = grader.load_function(f"{path}:total")
    g = grader.grade(m, "total", grader.function_student(m, fn, spec))
    assert not g.agree and g.student is None
    assert g.error == "raised ValueError: not implemented beyond N + d = 5"
    # the points that raise have N + d >= 6; the smallest sum is 7 with M = 1, and of those (1, 5, 1) comes first
    # in parameter order
    assert g.point == {"N": 1, "d": 5, "M": 1}


def test_a_file_that_fails_to_import(tmp_path):
    path = _module(tmp_path, "def total(N, d, M)\n    return N\n")
    with pytest.raises(grader.StudentCodeError, match="SyntaxError"):
        grader.load_function(f"{path}:total")


@pytest.mark.parametrize("spec,param", [("nope.py:total", "function"), ("student.py", "function"),
                                        ("{path}:totl", "function")])
def test_bad_function_specs(tmp_path, spec, param):
    path = _module(tmp_path, "def total(N, d, M):\n    return N\n")
    with pytest.raises(BadInput) as e:
        grader.load_function(spec.format(path=path))
    assert e.value.param == param
    if "totl" in spec:
        assert "total" in e.value.problem                 # the nearest name


def test_a_function_naming_a_parameter_the_model_lacks(tmp_path):
    with pytest.raises(BadInput) as e:
        grader.function_student(registry.get(MODEL), lambda N, d, SRAM: N)
    assert e.value.param == "function" and "SRAM" in e.value.problem


# ------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("model,quantity,text,param,hint", [
    ("attention.fa1.fwd.papr", "total", "N", "model", "attention.fa1.fwd.paper"),
    (MODEL, "totl", "N", "quantity", "total"),
    (MODEL, "total", "N*d_k", "formula", "d"),
    (MODEL, "total", "2*N*(", "formula", "ends too early"),
    (MODEL, "total", "__import__('os')", "formula", "cannot read"),
])
def test_bad_input_names_the_option(model, quantity, text, param, hint):
    with pytest.raises(BadInput) as e:
        grader.grade(model, quantity, text)
    assert e.value.param == param and hint in e.value.problem


def test_max_examples_is_bounded():
    with pytest.raises(BadInput) as e:
        grader.grade(MODEL, "total", "N", max_examples=0)
    assert e.value.param == "max_examples"


def test_point_key_is_sum_then_order():
    names = ["N", "d", "M"]
    pts = [{"N": 1, "d": 5, "M": 1}, {"N": 2, "d": 1, "M": 1}, {"N": 1, "d": 1, "M": 5}, {"N": 1, "d": 1, "M": 2}]
    assert sorted(pts, key=lambda p: grader.point_key(p, names)) == [pts[3], pts[1], pts[2], pts[0]]
