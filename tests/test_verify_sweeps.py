"""Every registered formula agrees with its executor/simulator over its default sweep (the same sweep
``python -m verify`` runs), and over the long sweep under ``-m slow``."""

import pytest

from verify.core import run_check
from verify.registry import all_checks

CHECKS = {c.name: c for c in all_checks()}


def _assert_clean(rep):
    bad = rep.smallest_failure()
    assert bad is None, f"{rep.name}: {rep.failed} of {rep.points} disagree; smallest {bad.point}: {bad.message}"
    assert rep.points > 0


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_default_sweep_agrees(name):
    _assert_clean(run_check(CHECKS[name]))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_full_sweep_agrees(name):
    _assert_clean(run_check(CHECKS[name], full=True, seed=1))


def test_default_sweep_is_large_enough():
    reps = [run_check(c) for c in all_checks() if c.name.startswith("attention.")]
    assert sum(r.points for r in reps) >= 200
    assert max(r.largest for r in reps) >= 4096
