"""Executed points for plots: what a model's executor counts, at the points a plot draws.

The executor is the one :mod:`verify` already checks the model against: the
:class:`~verify.core.Check` bound to the model object (:func:`verify.registry.check_for`).  Its point
keys are the model's own parameter names, so the model's full point (``--at`` values plus the
model's defaults) is what the executor is given; keys only the executor takes (``Check.extra``: an
L2 capacity, a seed) come from the check's first pinned point that gives them.

Executors are run only where they are cheap.  A check that states its executor's work (``Check.work``, in
the executor's own budget unit: the LRU simulation's tile requests, the tiled GEMM's program x K-step
iterations) is run wherever that work is within the plot's budget for that unit (:func:`work_budget`: about two
seconds of the executor); any other at points no larger (by the check's own ``size``) than the largest point
of its default grid - the sizes ``python -m verify`` runs on every commit.  Other points are drawn as formula
only, and a note says so.
"""

from __future__ import annotations

from typing import Sequence

from base.errors import BadInput
from verify.registry import check_for

__all__ = ["check_for", "executed_points", "work_budget", "DEFAULT_SIZE_LIMIT", "PLOT_WORK_BUDGET",
           "PLOT_WORK_BUDGETS"]

#: the size limit for a check whose default grid is empty (drawn points only)
DEFAULT_SIZE_LIMIT = 4096
#: a plot runs an executor that states its work at points of at most this many of its work units (the LRU
#: simulation replays about a million tile requests a second: 4096^3 in 128 x 128 x 16 tiles is 524,288)
PLOT_WORK_BUDGET = 2_000_000
#: the budget of a unit whose step costs more: a shape-only tiled GEMM step (a program's A and B tile loads and
#: its accumulate) takes about 4 us here, so 2**19 of them (8192^3 in 128 x 128 x 32 tiles is twice that) ~2 s
PLOT_WORK_BUDGETS = {"program x K-step iterations": 1 << 19}


def work_budget(check) -> int:
    """The most work (in ``check.work_unit``) a plot runs ``check``'s executor at, at one point."""
    return PLOT_WORK_BUDGETS.get(check.work_unit, PLOT_WORK_BUDGET)


def executed_points(model, quantity: str, points: Sequence[tuple]) -> tuple[list, list, list[str]]:
    """Run the model's executor at each ``(x, point)``; returns ``(xs, values, notes)``: the x of each
    point it ran at, the executed ``quantity`` there, and one-line notes for what it did not run.

    An executor reporting ``reads`` and ``writes`` gives ``total`` as their sum (the model's own
    definition of ``total``).  An executor that refuses a point (:class:`BadInput`, e.g. over its work
    budget) leaves that point out with a note; any other exception is a bug and propagates."""
    check = check_for(model, quantity)
    if check is None:
        return [], [], [f"no executor check for {model.name}; plotting the formula only"]
    grid = list(check.grid(False))
    limit = max((check.size_of(p) for p in grid), default=DEFAULT_SIZE_LIMIT)
    # keys only the executor reads (an L2 capacity, a launch order): as the check's first pinned point
    # gives them; one the grid does not give is left to the executor's own default
    first = next((p for p in grid if any(k in p for k in check.extra)), {})
    extra = {k: first[k] for k in check.extra if k in first}
    budget = work_budget(check)
    xs, ys, skipped, notes = [], [], [], []
    for x, pt in points:
        full = {**pt, **extra}
        if (check.work(full) > budget) if check.work is not None else (check.size_of(full) > limit):
            skipped.append(x)
            continue
        try:
            got = check.execute(full)
        except BadInput as exc:
            notes.append(f"the {check.name} executor refused {x}: {exc}")
            continue
        got = dict(got)
        if "total" not in got and "reads" in got and "writes" in got:
            got["total"] = got["reads"] + got["writes"]
        if quantity not in got:
            return [], [], [f"the {check.name} executor reports no {quantity!r} (it reports "
                            f"{', '.join(got)}); plotting the formula only"]
        xs.append(x)
        ys.append(got[quantity])
    if skipped and check.work is not None:
        notes.append(f"{model.name}: executor not run at {', '.join(map(str, skipped))}: the {check.name} executor's "
                     f"work there exceeds {budget:,} {check.work_unit or 'units'}; formula only there")
    elif skipped:
        notes.append(f"{model.name}: executor not run at {', '.join(map(str, skipped))}: the {check.name} check "
                     f"sizes those points beyond {limit:,}, the largest of its default sweep; formula only there")
    return xs, ys, notes
