"""The Python API under hostile input (issue 18): the notebook display beyond Python's digit limit, and
``assert_agree`` given no list of points or array values."""

from __future__ import annotations

import numpy as np
import pytest

from base.errors import BadInput
from printing.notebook import evaluation_latex, evaluation_text
from symbolic import registry
from verify import assert_agree


@pytest.mark.parametrize("N", [10 ** 2200, 10 ** 4400], ids=["1e2200", "1e4400"])
def test_notebook_display_beyond_the_digit_limit(N):
    """At N = 10**2200 the reads have about 4,400 digits, past the 4,300 Python's str() takes; the display
    writes the scientific form and the digit count, as the terminal printer does.  By hand: reads =
    2 N d + N (2 d + 2) ceil(N / ceil(M / 4d)) ~ 130 N^2 / 200 = 0.65 N^2, so 6.50e+4399 at N = 10**2200."""
    m = registry.get("attention.fa1.fwd.paper")
    ev = m.at(N=N, d=64, M=51200)
    tex, text = evaluation_latex(ev), evaluation_text(ev)
    import sys
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)                       # the test's own reference: every digit, counted
    try:
        digits = len(str(ev["reads"]))
    finally:
        sys.set_int_max_str_digits(limit)
    assert f"({digits:,} digits)" in text and f"({digits:,} digits)" in tex
    if N == 10 ** 2200:
        assert r"6.50 \times 10^{4399}" in tex and "6.50e+4399" in text


@pytest.mark.parametrize("points", [None, 5, "abc", {"N": 1}])
def test_assert_agree_wants_a_list_of_points(points):
    with pytest.raises(BadInput, match="^points: a list of points"):
        assert_agree(lambda p: {"a": 1}, lambda p: {"a": 1}, points)


def test_assert_agree_compares_arrays_element_by_element():
    same = lambda p: {"y": np.arange(3) * p["N"]}       # noqa: E731
    assert assert_agree(same, same, [dict(N=1), dict(N=2)]) == 2
    with pytest.raises(AssertionError, match="y: formula"):
        assert_agree(same, lambda p: {"y": np.arange(3) * p["N"] + (p["N"] == 2)}, [dict(N=1), dict(N=2)])
    with pytest.raises(AssertionError):                 # a shape mismatch is a disagreement, not an error
        assert_agree(same, lambda p: {"y": np.arange(4)}, [dict(N=1)])


def test_a_plot_runs_an_executor_by_its_stated_work():
    """gemm.l2 at M = N = K = 4096 in 128 x 128 tiles and K-steps of 16 (the check's pinned B_K): 2 x 32 x 32 x
    256 = 524,288 tile requests, within the plot's budget though far beyond the check's default sweep's
    largest size; at M = N = 65,536 it is 2 x 512 x 512 x 256 = 134,217,728 requests, beyond it: formula
    only, with a note naming the unit."""
    from tilebound.executed import PLOT_WORK_BUDGET, executed_points
    from tilebound.report import point
    from verify.checks.gemm import l2_requests

    m = registry.get("gemm.l2")
    small, big = (point(m, dict(M=n, N=n, K=4096)) for n in (4096, 65536))
    assert l2_requests({**small, "B_K": 16}) == 524_288 <= PLOT_WORK_BUDGET < l2_requests({**big, "B_K": 16}) \
        == 134_217_728
    xs, ys, notes = executed_points(m, "hbm_reads_fits", [(4096, small), (65536, big)])
    assert xs == [4096] and ys == [m.evaluate("hbm_reads_fits", **small)]
    assert any("tile requests" in n and "65536" in n for n in notes)
