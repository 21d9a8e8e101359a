"""The verification layer must be able to fail: a deliberately wrong formula is caught, the smallest
failing point is reported with both values, and the CLI's exit codes say so.

The models here are the toys of ``toy_models.py`` (``toy.halo``: reads = N + 2⌈N/B⌉, counted by
``halo_brute_force``), so these tests need no model family and run no family's sweep (that is
``test_verify_sweeps.py``'s, once).  The wrong model forgets the last partial tile's halo:
reads = N + 2⌊N/B⌋, wrong exactly where B does not divide N.
"""

import subprocess
import sys

import pytest
import sympy as sp

from base.errors import BadInput
from symbolic.model import Model
from symbolic.registry import ModelRef
from verify import Check, assert_agree, rel_close, run_check
from verify.core import Property
from verify import __main__ as cli
from verify import registry

import toy_models
from toy_models import B, N, halo, halo_brute_force


def _wrong_model():
    return Model(name="toy.wrong", summary="toy.halo without the last partial tile's halo",
                 quantities={"reads": N + 2 * sp.floor(N / B), "writes": N, "flops": 3 * N},
                 params=(N, B), defaults={"B": 32})


wrong = ModelRef("toy.wrong", "toy.halo without the last partial tile's halo", _wrong_model)


def test_wrong_formula_is_caught_with_smallest_point():
    # N = 50, B = 8: formula 50 + 2·6 = 62, executed 50 + 2·7 = 64; N = 3, B = 2: 5 vs 7; N = 4, B = 2 agree
    c = Check(model=wrong, execute=halo_brute_force,
              grid=lambda full: [dict(N=50, B=8), dict(N=3, B=2), dict(N=4, B=2)])
    assert c.name == "toy.wrong"
    rep = run_check(c)
    assert (rep.points, rep.agreed, rep.failed) == (3, 1, 2)
    bad = rep.smallest_failure()
    assert bad.point == {"N": 3, "B": 2}
    assert (bad.formula["reads"], bad.executed["reads"]) == (5, 7)
    assert "reads: formula 5 != executed 7" in bad.message


def test_the_formula_side_is_the_models_own():
    """A check restates no formula: its formula is ``model.evaluate`` of its quantities, at the point's
    model keys (an executor-only ``extra`` key is not passed to the model)."""
    c = Check(model=halo, execute=halo_brute_force, grid=lambda full: [], quantities=("reads", "flops"),
              extra=("seed",))
    assert c.formula({"N": 100, "B": 32, "seed": 7}) == {"reads": 108, "flops": 300}


def test_hypothesis_shrinks_a_failure():
    from hypothesis import strategies as st
    pts = st.fixed_dictionaries(dict(N=st.integers(1, 60), B=st.integers(1, 16)))
    c = Check(model=wrong, execute=halo_brute_force, grid=lambda full: [], strategy=pts, draws=40)
    rep = run_check(c)
    assert rep.failed == 1                                   # shrinking re-runs are not counted as failures
    assert rep.smallest_failure().point == {"N": 1, "B": 2}  # the smallest N, B with B not dividing N


def test_agreeing_check_passes():
    c = toy_models.halo_check()
    rep = run_check(c)
    assert (rep.points, rep.agreed, rep.failed) == (18, 18, 0)
    assert rep.largest == 1024


def test_property_holds_and_can_fail():
    """An inequality is a Property: reads >= N + 2 (every element and one halo pair) holds; the
    claim reads <= N (no halo at all) fails at every point, the smallest reported."""
    grid = lambda full: [dict(N=n, B=b) for n in (1, 7, 64) for b in (1, 8)]   # noqa: E731
    holds = Property("toy.halo.floor", model=halo, grid=grid,
                     holds=lambda p: None if halo.evaluate("reads", **p) >= p["N"] + 2 else "below N + 2")
    rep = run_check(holds)
    assert (rep.points, rep.agreed) == (6, 6)
    broken = Property("toy.halo.no_halo", model=halo, grid=grid,
                      holds=lambda p: None if halo.evaluate("reads", **p) <= p["N"] else
                      f"reads {halo.evaluate('reads', **p)} > N {p['N']}")
    rep = run_check(broken)
    assert rep.failed == 6
    assert rep.smallest_failure().point == {"N": 1, "B": 1}
    assert rep.smallest_failure().message == "reads 3 > N 1"


def test_assert_agree_for_user_suites():
    pts = [dict(N=n, B=4) for n in (1, 5, 9)]
    formula = lambda p: {"reads": halo.evaluate("reads", **p)}          # noqa: E731
    wrong_formula = lambda p: {"reads": wrong.evaluate("reads", **p)}   # noqa: E731
    assert assert_agree(formula, halo_brute_force, pts) == 3
    # N = 1, B = 4: formula 1 + 0 = 1, executed 1 + 2 = 3; N = 5: 7 vs 9; N = 9: 13 vs 15
    with pytest.raises(AssertionError, match=r"3 of 3 points disagree; smallest \{'N': 1, 'B': 4\}: "
                                             r"reads: formula 1 != executed 3"):
        assert_agree(wrong_formula, halo_brute_force, pts)


def test_assert_agree_refuses_no_points():
    with pytest.raises(BadInput, match=r"^points: no points to check; give at least one mapping \{parameter: value\}"):
        assert_agree(lambda p: {"reads": 1}, lambda p: {"reads": 1}, [])
    with pytest.raises(BadInput, match=r"^points: each point is a mapping \{parameter: value\}, got 5"):
        assert_agree(lambda p: {"reads": 1}, lambda p: {"reads": 1}, [5])


@pytest.mark.parametrize("formula,execute,expected", [
    (lambda p: {}, lambda p: {"reads": 1}, "the formula returned no quantities (an empty mapping); it must return {quantity: value}"),
    (lambda p: 5, lambda p: {"reads": 1}, "the formula must return a mapping {quantity: value}, got int"),
    (lambda p: {"reads": 1}, lambda p: {}, "the executor returned no quantities (an empty mapping); it must return {quantity: value}"),
    (lambda p: {"reads": 1}, lambda p: [1], "the executor must return a mapping {quantity: value}, got list"),
], ids=["formula {}", "formula int", "executor {}", "executor list"])
def test_assert_agree_refuses_what_is_not_a_mapping_of_quantities(formula, execute, expected):
    """An empty or non-mapping return never passes, and the message says what is expected."""
    with pytest.raises((AssertionError, BadInput, TypeError)) as exc:
        assert_agree(formula, execute, [dict(N=1)])
    assert expected in str(exc.value)


def test_rel_close():
    cmp = rel_close(1e-9)
    assert cmp({"t": 1.0}, {"t": 1.0 + 1e-12}) is None
    assert "t:" in cmp({"t": 1.0}, {"t": 1.001})


def test_cli_exit_one_on_disagreement(monkeypatch, capsys):
    c = Check(model=wrong, execute=halo_brute_force, grid=lambda full: [dict(N=2, B=4), dict(N=8, B=4)])
    monkeypatch.setattr(registry, "all_checks", lambda: [c])
    assert cli.main(["--model", "toy.wrong"]) == 1
    out = capsys.readouterr().out
    assert "1 passed, 1 failed" in out and "FAIL toy.wrong at {'N': 2, 'B': 4}" in out


def test_cli_exit_zero_and_closing_line(monkeypatch, capsys):
    monkeypatch.setattr(registry, "all_checks", lambda: [toy_models.halo_check()])
    assert cli.main(["--model", "toy.halo"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "18 passed, 0 failed"


def test_cli_model_repeats_add_up(monkeypatch, capsys):
    """Two --model patterns select the checks of both (the last one alone was kept before)."""
    c = Check(model=wrong, execute=halo_brute_force, grid=lambda full: [dict(N=8, B=4)])
    monkeypatch.setattr(registry, "all_checks", lambda: [toy_models.halo_check(), c])
    assert cli.main(["--model", "toy.halo", "--model", "toy.wrong", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.strip().splitlines()]
    assert listed == ["toy.halo", "toy.wrong"]


@pytest.mark.parametrize("args", [["--bogus"], ["--model", "no-such-model"], ["--seed", "x"],
                                  ["--model", "gemm.tiled", "--model", "no-such-model"]])
def test_cli_bad_usage_exit_two_one_line(args):
    p = subprocess.run([sys.executable, "-m", "verify", *args], capture_output=True, text=True)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_sweep_without_hypothesis_runs_grid_only(monkeypatch):
    from hypothesis import strategies as st
    from verify import core
    monkeypatch.setattr(core, "hypothesis_available", lambda: False)
    grid = [dict(N=5, B=2), dict(N=1, B=1)]
    pts = st.fixed_dictionaries(dict(N=st.integers(1, 9), B=st.integers(1, 4)))
    rep = run_check(Check(model=halo, execute=halo_brute_force, grid=lambda full: grid, strategy=lambda: pts,
                          draws=20))
    assert (rep.points, rep.agreed) == (2, 2)


def test_strategy_factory_is_called_only_when_drawing():
    calls = []

    def factory():
        from hypothesis import strategies as st
        calls.append(1)
        return st.just(dict(N=3, B=1))
    c = Check(model=halo, execute=halo_brute_force, grid=lambda full: [], strategy=factory, draws=3)
    assert calls == []
    rep = run_check(c)
    assert calls == [1] and rep.agreed == rep.points >= 1
