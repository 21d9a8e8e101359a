"""The verification layer must be able to fail: a deliberately wrong formula is caught, the smallest
failing point is reported with both values, and the CLI's exit codes say so."""

import subprocess
import sys

import pytest

from verify import Check, assert_agree, rel_close, run_check
from verify import attention as va
from verify import __main__ as cli
from verify import registry


def _right(p):
    return va.execute("attention.fa2.fwd", p)


def _wrong(p):   # forgets the log-sum-exp write: N too few writes
    v = dict(va.execute("attention.fa2.fwd", p))
    v["writes"] -= p["N"]
    return v


def test_wrong_formula_is_caught_with_smallest_point():
    c = Check("wrong", _wrong, _right, lambda full: [dict(N=50, N_k=50, d=4, B_r=8, B_c=8),
                                                      dict(N=3, N_k=3, d=1, B_r=1, B_c=1)])
    rep = run_check(c)
    assert rep.failed == 2 and rep.agreed == 0
    bad = rep.smallest_failure()
    assert bad.point["N"] == 3
    assert "writes" in bad.message and str(bad.formula["writes"]) in bad.message


def test_hypothesis_shrinks_a_failure():
    from hypothesis import strategies as st
    pts = st.fixed_dictionaries(dict(N=st.integers(1, 60), N_k=st.integers(1, 60), d=st.integers(1, 8),
                                     B_r=st.integers(1, 16), B_c=st.integers(1, 16)))
    c = Check("wrong", _wrong, _right, lambda full: [], strategy=pts, draws=30)
    rep = run_check(c)
    assert rep.failed == 1                          # shrinking re-runs are not counted as failures
    assert rep.smallest_failure().point["N"] == 1   # shrunk to the smallest N


def test_agreeing_check_passes():
    c = Check("right", _right, _right, lambda full: [dict(N=5, N_k=9, d=2, B_r=2, B_c=4)])
    rep = run_check(c)
    assert (rep.points, rep.agreed, rep.failed) == (1, 1, 0)


def test_assert_agree_for_user_suites():
    pts = [dict(N=n, N_k=n, d=8, B_r=4, B_c=4) for n in (1, 5, 9)]
    assert assert_agree(_right, _right, pts) == 3
    with pytest.raises(AssertionError, match=r"3 of 3 points disagree; smallest \{'N': 1"):
        assert_agree(_wrong, _right, pts)


def test_rel_close():
    cmp = rel_close(1e-9)
    assert cmp({"t": 1.0}, {"t": 1.0 + 1e-12}) is None
    assert "t:" in cmp({"t": 1.0}, {"t": 1.001})


def test_cli_exit_one_on_disagreement(monkeypatch, capsys):
    c = Check("attention.wrong", _wrong, _right, lambda full: [dict(N=2, N_k=2, d=1, B_r=1, B_c=1)])
    monkeypatch.setattr(registry, "all_checks", lambda: [c])
    assert cli.main(["--model", "wrong"]) == 1
    out = capsys.readouterr().out
    assert "0 passed, 1 failed" in out and "FAIL attention.wrong at {'N': 2" in out


def test_cli_exit_zero_and_closing_line(capsys):
    assert cli.main(["--model", "attention.fa2.fwd"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.endswith("passed, 0 failed")


@pytest.mark.parametrize("args", [["--bogus"], ["--model", "no-such-model"], ["--seed", "x"]])
def test_cli_bad_usage_exit_two_one_line(args):
    p = subprocess.run([sys.executable, "-m", "verify", *args], capture_output=True, text=True)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_sweep_without_hypothesis_runs_grid_only(monkeypatch):
    from hypothesis import strategies as st
    from verify import core
    monkeypatch.setattr(core, "hypothesis_available", lambda: False)
    grid = [dict(N=5, N_k=9, d=2, B_r=2, B_c=4), dict(N=1, N_k=1, d=1, B_r=1, B_c=1)]
    pts = st.fixed_dictionaries(dict(N=st.integers(1, 9), N_k=st.integers(1, 9), d=st.integers(1, 3),
                                     B_r=st.integers(1, 4), B_c=st.integers(1, 4)))
    rep = run_check(Check("right", _right, _right, lambda full: grid, strategy=lambda: pts, draws=20))
    assert (rep.points, rep.agreed) == (2, 2)


def test_strategy_factory_is_called_only_when_drawing():
    calls = []

    def factory():
        from hypothesis import strategies as st
        calls.append(1)
        return st.just(dict(N=3, N_k=3, d=1, B_r=1, B_c=1))
    c = Check("right", _right, _right, lambda full: [], strategy=factory, draws=3)
    assert calls == []
    rep = run_check(c)
    assert calls == [1] and rep.agreed == rep.points >= 1
