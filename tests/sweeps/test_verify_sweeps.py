"""Every registered formula agrees with its executor/simulator over its default sweep (the same sweep
``python -m verify`` runs), and over the long sweep under ``-m slow``.

Each default sweep runs once per session: its report is kept (:func:`default_report`) and the size
test reads the same reports instead of running the sweeps again.
"""

from functools import lru_cache

import pytest

from verify.core import run_check
from verify.registry import all_checks

CHECKS = {c.name: c for c in all_checks()}


@lru_cache(maxsize=None)
def default_report(name: str):
    """The default sweep of the check called ``name``, run once and kept."""
    return run_check(CHECKS[name])


def _assert_clean(rep):
    bad = rep.smallest_failure()
    assert bad is None, f"{rep.name}: {rep.failed} of {rep.points} disagree; smallest {bad.point}: {bad.message}"
    assert rep.points > 0


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_default_sweep_agrees(name):
    _assert_clean(default_report(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_full_sweep_agrees(name):
    _assert_clean(run_check(CHECKS[name], full=True, seed=1))


def test_default_sweep_is_large_enough():
    """The attention sweeps reach 200 points and sizes of 4096 (the reports of the sweeps above)."""
    reps = [default_report(n) for n in sorted(CHECKS) if n.startswith("attention.")]
    assert reps, "no attention check registered"
    assert sum(r.points for r in reps) >= 200
    assert max(r.largest for r in reps) >= 4096

