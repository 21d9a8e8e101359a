"""Agreement checks: a formula and an executor, evaluated at the same points, must give the same numbers.

A :class:`Check` pairs ``formula(point) -> {quantity: value}`` (from :mod:`symbolic`) with
``execute(point) -> {quantity: value}`` (from :mod:`numeric`) over a grid of pinned points plus
points drawn by hypothesis.  Exact equality by default; a check may supply its own ``compare``
(e.g. a relative tolerance for simulated times, or an inequality that a bound promises).

The same machinery serves three callers: ``python -m verify`` (the CLI), the project's tests, and a
user's own pytest suite through :func:`assert_agree`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional, Sequence

__all__ = ["Check", "Report", "Failure", "run_check", "assert_agree", "exact_equal", "rel_close", "hypothesis_available"]

Point = Mapping[str, object]
Values = Mapping[str, object]


def exact_equal(formula: Values, executed: Values) -> Optional[str]:
    """``None`` when every quantity the formula gives equals the executed one exactly; else a message."""
    bad = [k for k in formula if k in executed and formula[k] != executed[k]]
    missing = [k for k in formula if k not in executed]
    if missing:
        return f"executor gives no {', '.join(missing)}"
    if bad:
        return "; ".join(f"{k}: formula {formula[k]} != executed {executed[k]}" for k in bad)
    return None


def rel_close(rtol: float) -> Callable[[Values, Values], Optional[str]]:
    """Comparison within a relative tolerance (for simulated times; counts use :func:`exact_equal`)."""
    def compare(formula: Values, executed: Values) -> Optional[str]:
        msgs = []
        for k, f in formula.items():
            e = executed.get(k)
            if e is None:
                msgs.append(f"executor gives no {k}")
                continue
            f, e = float(f), float(e)
            if abs(f - e) > rtol * max(abs(f), abs(e), 1e-300):
                msgs.append(f"{k}: formula {f!r} vs executed {e!r} (rel. diff {abs(f - e) / max(abs(f), abs(e)):.2e} > {rtol:g})")
        return "; ".join(msgs) or None
    compare.__name__ = f"rel_close({rtol:g})"
    return compare


@dataclass(frozen=True)
class Check:
    """One model checked against one executor.

    ``grid(full)`` yields the pinned points (edge cases first); ``strategy`` (optional) is a
    hypothesis strategy of points, or a zero-argument function building one (so hypothesis is
    imported only when a sweep draws), drawn ``draws`` times (``draws_full`` with ``--full``).
    ``size(point)`` is the figure reported as "largest size" (default: the point's largest value).
    """

    name: str
    formula: Callable[[Point], Values]
    execute: Callable[[Point], Values]
    grid: Callable[[bool], Iterable[Point]]
    strategy: object = None
    draws: int = 40
    draws_full: int = 400
    compare: Callable[[Values, Values], Optional[str]] = exact_equal
    size: Optional[Callable[[Point], int]] = None
    description: str = ""

    def size_of(self, point: Point) -> int:
        if self.size is not None:
            return self.size(point)
        nums = [v for v in point.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return max(nums) if nums else 0


@dataclass(frozen=True)
class Failure:
    point: Mapping
    formula: Values
    executed: Values
    message: str


@dataclass
class Report:
    name: str
    points: int = 0
    agreed: int = 0
    largest: int = 0
    seconds: float = 0.0
    failures: list = field(default_factory=list)

    @property
    def failed(self) -> int:
        return self.points - self.agreed

    def smallest_failure(self) -> Optional[Failure]:
        if not self.failures:
            return None
        return min(self.failures, key=lambda f: (sum(v for v in f.point.values() if isinstance(v, int)), str(f.point)))


def _one(check: Check, point: Point, report: Report) -> bool:
    report.points += 1
    report.largest = max(report.largest, check.size_of(point))
    try:
        f = check.formula(point)
        e = check.execute(point)
        msg = check.compare(f, e)
    except Exception as exc:  # an exception at a point is a disagreement, reported with the point
        f, e, msg = {}, {}, f"{type(exc).__name__}: {exc}"
    if msg is None:
        report.agreed += 1
        return True
    report.failures.append(Failure(dict(point), dict(f), dict(e), msg))
    return False


def hypothesis_available() -> bool:
    """Sweeps draw points with hypothesis (the ``verify`` extra); without it they run their grids only."""
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return False
    return True


def run_check(check: Check, full: bool = False, seed: int = 0, use_hypothesis: bool = True) -> Report:
    """Evaluate the check over its grid and (when it has a strategy) ``draws`` hypothesis points.

    Hypothesis runs derandomised from ``seed`` so a sweep is reproducible; it shrinks a failing point
    to a small one before it is reported.
    """
    report = Report(check.name)
    t0 = time.perf_counter()
    for point in check.grid(full):
        _one(check, point, report)
    if use_hypothesis and check.strategy is not None and hypothesis_available():
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hseed

        strategy = check.strategy
        if callable(strategy) and not hasattr(strategy, "example"):   # a factory, not a strategy
            strategy = strategy()

        n = check.draws_full if full else check.draws
        failed: list = []

        @hseed(seed)
        @settings(max_examples=n, database=None, deadline=None, derandomize=False, print_blob=False,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def sweep(point):
            # once a point has failed, hypothesis re-runs smaller ones to shrink it: those
            # evaluations go to a scratch report, so the sweep counts one failure, the smallest
            target = Report(check.name) if failed else report
            ok = _one(check, point, target)
            if not ok:
                failed.append(target.failures.pop())
                raise AssertionError(failed[-1].message)

        try:
            sweep()
        except AssertionError:
            pass
        if failed:
            report.failures.append(min(failed, key=lambda f: sum(v for v in f.point.values() if isinstance(v, int))))
    report.seconds = time.perf_counter() - t0
    return report


def assert_agree(formula: Callable[[Point], Values], execute: Callable[[Point], Values],
                 points: Iterable[Point], compare: Callable = exact_equal) -> int:
    """For a user's pytest: raise ``AssertionError`` (smallest failing point, both values) unless the
    formula and the executor agree at every point.  Returns the number of points checked."""
    check = Check("user", formula, execute, lambda full: list(points), compare=compare)
    rep = run_check(check, use_hypothesis=False)
    bad = rep.smallest_failure()
    if bad is not None:
        raise AssertionError(f"{rep.failed} of {rep.points} points disagree; smallest {bad.point}: {bad.message}")
    return rep.points
