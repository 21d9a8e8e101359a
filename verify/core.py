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

__all__ = ["Check", "Property", "Report", "Failure", "run_check", "assert_agree", "exact_equal", "rel_close", "hypothesis_available"]

Point = Mapping[str, object]
Values = Mapping[str, object]


def _same(a, b) -> bool:
    """Exact equality of two values; arrays (NumPy, or anything with a ``shape``) compare element by element
    and equal when every element is (``==`` on arrays gives an array, whose truth is ambiguous)."""
    if hasattr(a, "shape") or hasattr(b, "shape"):
        import numpy as np
        return bool(np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


def exact_equal(formula: Values, executed: Values) -> Optional[str]:
    """``None`` when every quantity the formula gives equals the executed one exactly (arrays element by
    element); else a message."""
    bad = [k for k in formula if k in executed and not _same(formula[k], executed[k])]
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
    """One model checked against one executor, at points named by the model's own parameters.

    ``model`` is the model object (a :class:`~symbolic.registry.ModelRef` or a
    :class:`~symbolic.model.Model`); the formula side is ``model.evaluate`` of ``quantities``, so a
    check never restates a formula.  ``execute(point) -> {quantity: value}`` runs the executor.
    ``grid(full)`` yields the pinned points (edge cases first); ``strategy`` (optional) is a
    hypothesis strategy of points, or a zero-argument function building one (so hypothesis is
    imported only when a sweep draws), drawn ``draws`` times (``draws_full`` with ``--full``).
    A point's keys are the model's parameter names, plus the executor-only keys declared in
    ``extra`` (an L2 capacity, a seed), which the formula does not see.  ``name`` defaults to the
    model's; a second check of one model names itself (``gemm.l2.fits``).
    """

    model: object
    execute: Callable[[Point], Values]
    grid: Callable[[bool], Iterable[Point]]
    quantities: Sequence[str] = ("reads", "writes", "flops")
    name: str = ""
    strategy: object = None
    draws: int = 40
    draws_full: int = 400
    compare: Callable[[Values, Values], Optional[str]] = exact_equal
    size: Optional[Callable[[Point], int]] = None
    extra: Sequence[str] = ()
    description: str = ""
    #: the executor's work at a point in its own budget unit (``work_unit``: requests simulated, blocks
    #: walked), where it states one: what a caller (a plot) asks to judge a point cheap, instead of ``size``
    work: Optional[Callable[[Point], int]] = None
    work_unit: str = ""

    def __post_init__(self):
        if not self.name:
            object.__setattr__(self, "name", self.model.name)
        if isinstance(self.quantities, str):
            raise TypeError(f"{self.name}: quantities is a sequence of names, got the string {self.quantities!r}")

    def formula(self, point: Point) -> dict:
        """The model's exact values at ``point`` (its ``extra`` keys dropped)."""
        pt = {k: v for k, v in point.items() if k not in self.extra}
        if _validates_once(self.model):     # the point validated once for all the quantities
            return self.model.evaluate(tuple(self.quantities), **pt)
        return {q: self.model.evaluate(q, **pt) for q in self.quantities}

    def size_of(self, point: Point) -> int:
        return _size_of(self.size, point)


def _validates_once(model) -> bool:
    """Does ``model`` take a tuple of quantities (a :class:`~symbolic.model.Model` or its ``ModelRef``)?  Any
    other object with an ``evaluate(quantity, **point)`` is asked one quantity at a time."""
    from symbolic.model import Model
    from symbolic.registry import ModelRef
    return isinstance(model, (Model, ModelRef))


@dataclass(frozen=True)
class Property:
    """A claim that is not an equality of counts: an inequality (a bound), or a statistical
    property over seeds (jitter).  ``holds(point)`` returns ``None`` when the claim holds and a
    message saying what broke otherwise.  ``model`` names the model whose claim it tests (``None``
    for a claim about a simulator alone)."""

    name: str
    holds: Callable[[Point], Optional[str]]
    grid: Callable[[bool], Iterable[Point]]
    model: object = None
    strategy: object = None
    draws: int = 40
    draws_full: int = 400
    size: Optional[Callable[[Point], int]] = None
    description: str = ""
    #: how many points ``grid(full)`` yields, where running the grid first does set-up work (a listing's
    #: check against its model builds the model): what :func:`verify.estimated_cost` schedules by, so that a
    #: parent process sending checks to workers builds nothing; ``None`` counts the grid
    grid_points: Optional[Callable[[bool], int]] = None

    def size_of(self, point: Point) -> int:
        return _size_of(self.size, point)


def _size_of(size, point: Point) -> int:
    if size is not None:
        return size(point)
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
    f, e = {}, {}
    try:
        if isinstance(check, Property):
            msg = check.holds(point)
        else:
            f = check.formula(point)
            e = check.execute(point)
            msg = _values_error("executor", e) or check.compare(f, e)
    except Exception as exc:  # an exception at a point is a disagreement, reported with the point
        f, e, msg = {}, {}, f"{type(exc).__name__}: {exc}"
    if msg is None:
        report.agreed += 1
        return True
    report.failures.append(Failure(dict(point), dict(f) if isinstance(f, Mapping) else {},
                                   dict(e) if isinstance(e, Mapping) else {}, msg))
    return False


def _values_error(who: str, values) -> Optional[str]:
    """The ``{quantity: value}`` contract: a non-empty mapping."""
    if not isinstance(values, Mapping):
        return f"the {who} must return a mapping {{quantity: value}}, got {type(values).__name__}"
    if not values:
        return f"the {who} returned no quantities (an empty mapping); it must return {{quantity: value}}"
    return None


def hypothesis_available() -> bool:
    """Sweeps draw points with hypothesis (the ``verify`` extra); without it they run their grids only."""
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return False
    return True


def run_check(check: Check, full: bool = False, seed: int = 0, use_hypothesis: bool = True,
              on_point: Optional[Callable[[Report], None]] = None) -> Report:
    """Evaluate the check over its grid and (when it has a strategy) ``draws`` hypothesis points.

    Hypothesis runs derandomised from ``seed`` so a sweep is reproducible; it shrinks a failing point
    to a small one before it is reported.  ``on_point(report)``, when given, is called after each
    counted point (a progress display; the shrinking re-runs are not counted).
    """
    report = Report(check.name)
    tick = on_point if on_point is not None else (lambda r: None)
    t0 = time.perf_counter()
    for point in check.grid(full):
        _one(check, point, report)
        tick(report)
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
            if target is report:
                tick(report)
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


@dataclass(frozen=True)
class _UserCheck:
    """:func:`assert_agree`'s pairing of two plain callables (no model object)."""

    formula: Callable[[Point], Values]
    execute: Callable[[Point], Values]
    grid: Callable[[bool], Iterable[Point]]
    compare: Callable[[Values, Values], Optional[str]] = exact_equal
    name: str = "user"
    strategy: object = None
    size: Optional[Callable[[Point], int]] = None

    def size_of(self, point: Point) -> int:
        return _size_of(self.size, point)


def assert_agree(formula: Callable[[Point], Values], execute: Callable[[Point], Values],
                 points: Iterable[Point], compare: Callable = exact_equal) -> int:
    """For a user's pytest: raise ``AssertionError`` (smallest failing point, both values) unless the
    formula and the executor agree at every point.  Both callables take a point (a mapping of
    parameter names to values) and return a non-empty mapping ``{quantity: value}``; every quantity
    the formula returns must be among the executor's and equal to it.  Returns the number of points
    checked.  ``BadInput`` for no points, and (naming ``formula`` or ``executor``) for a return that is not
    a non-empty mapping - that is a broken contract, not a disagreement."""
    from base.errors import BadInput
    if isinstance(points, (Mapping, str, bytes)) or not isinstance(points, Iterable):
        raise BadInput("points", f"a list of points, each a mapping {{parameter: value}}, got {points!r:.80}"
                                 + (" (one point? wrap it in a list)" if isinstance(points, Mapping) else ""))
    pts = list(points)
    if not pts:
        raise BadInput("points", "no points to check; give at least one mapping {parameter: value}")
    bad = [p for p in pts if not isinstance(p, Mapping)]
    if bad:
        raise BadInput("points", f"each point is a mapping {{parameter: value}}, got {bad[0]!r}")

    broken: list = []            # (who, message): a callable that broke the {quantity: value} contract

    def contract(who, fn):
        def run(point):
            v = fn(point)
            msg = _values_error(who, v)
            if msg:
                broken.append((who, msg))
                raise TypeError(msg)
            return v
        return run

    check = _UserCheck(contract("formula", formula), contract("executor", execute), lambda full: pts,
                       compare=compare)
    rep = run_check(check, use_hypothesis=False)
    if broken:                   # not a disagreement: the callable returned something that is not counts
        who, msg = broken[0]
        raise BadInput(who, msg)
    worst = rep.smallest_failure()
    if worst is not None:
        raise AssertionError(f"{rep.failed} of {rep.points} points disagree; smallest {worst.point}: {worst.message}")
    return rep.points
