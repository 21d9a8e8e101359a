"""A plot's executed points stop where the caller asks (tilebound.plots.plot_series(executed_up_to=...)): the
notes' figures run the executor up to the sweep's middle point.  The points run are the executor's own counts
(the check's executor, run here by hand at the same points), the points beyond are formula only, with a note."""

from __future__ import annotations

from symbolic import registry
from tilebound.executed import check_for
from tilebound.plots import plot_series
from tilebound.report import point


def test_the_executor_runs_up_to_the_point_asked_for_and_no_further():
    m = registry.get("gemv.tiled")
    xs = [1024, 2048, 4096, 8192, 16384]
    q = m.main_quantity
    series, _, _, _, notes = plot_series([m], "M", xs, {}, executed_up_to=4096)
    (dots,) = [s for s in series if s.kind == "points"]
    assert list(dots.xs) == [1024, 2048, 4096]
    check = check_for(m, q)
    by_hand = []
    for x in (1024, 2048, 4096):
        got = dict(check.execute(point(m, {"M": x})))
        by_hand.append(got[q] if q in got else got["reads"] + got["writes"])
    assert list(dots.ys) == by_hand
    assert any("not run beyond M = 4096" in n for n in notes)
    series, _, _, _, notes = plot_series([m], "M", xs, {})          # a plain plot: every point that is cheap
    (dots,) = [s for s in series if s.kind == "points"]
    assert list(dots.xs) == xs and not any("beyond M" in n for n in notes)
