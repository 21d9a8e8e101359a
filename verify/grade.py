"""The grader: a student's formula (or Python function) against a model's *executed* count.

A course asks "what is the IO of FlashAttention's forward pass?"; a student answers
``2*N*d + 8*N**2*d**2/M + 8*N**2*d/M`` (the question of flash-attention issue #1705).  :func:`grade`
runs the executor of the model's own verify check (:func:`verify.registry.check_for`: the same
``Check.execute`` that ``python -m verify`` holds the model's formula to) and searches the model's
parameter space for the smallest point where the student's value differs from the executed count:

1. the check's pinned grid, smallest first (:func:`point_key`), up to its first disagreement;
2. hypothesis (when installed: the ``verify`` or ``grade`` extra) drawing ``max_examples`` points from
   the check's own strategy - the parameter constraints the check states - derandomised and with no
   example database, so a grade is reproducible; a disagreement is shrunk by hypothesis;
3. from the smallest disagreeing point found, smaller steps are taken while the point still disagrees:
   one parameter lowered (to its least value, then halfway, ..., then by one), or an amount moved from a
   parameter to a later one.

**Smallest** is by :func:`point_key`: the sum of the model's parameter values, then the values in the
model's parameter order.  The point reported is the smallest disagreeing point evaluated, and step 3
makes it a local minimum: lowering one parameter by one, or moving one from a parameter to a later one,
to a point the model accepts and the executor runs, agrees.  It is not a proof that no point of smaller
sum disagrees elsewhere.

Without hypothesis the search is the check's full grid, smallest first, and the result says so
(``Search.method == "grid"``).  The comparison is the check's own (``Check.compare``: exact equality
for counts; a relative tolerance for a simulated time).  ``total`` executed is ``reads + writes``, the
model's own definition of it.  A student function that raises, or a formula undefined at a point (a
division by zero), is a disagreement there, reported with its error.

The result also sets the leading terms (with their constants) of the student's formula and of the
model's quantity side by side, by :func:`symbolic.asymptotics.leading_term` over the model's regime.
:func:`grade_leading` grades that leading term alone, symbolically (``tilebound grade --leading``).

The student's formula is read by the ``--per`` grammar (:mod:`symbolic.grammar`): no code runs.
:func:`load_function` imports a student's ``FILE.py`` and so *runs their code*.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import inspect
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral, Rational, Real
from pathlib import Path
from typing import Callable, Mapping, Optional

import sympy as sp

from base.discovery import did_you_mean
from base.errors import BadInput
from symbolic.asymptotics import leading_term, theta
from symbolic.evaluate import compile_exact
from symbolic.grammar import parse_expression

from .registry import check_for, covers

__all__ = ["Student", "Search", "Grade", "StudentCodeError", "formula_student", "function_student",
           "load_function", "grade", "grade_leading", "failed_import", "point_key", "model_leading", "SMALLEST",
           "DEFAULT_EXAMPLES", "MAX_EXAMPLES"]

#: what "smallest" means, as the result states it
SMALLEST = "smallest by the sum of the parameter values, then their order (a local minimum)"
#: hypothesis draws this many points unless told otherwise
DEFAULT_EXAMPLES = 200
#: the most a search draws (each draw runs the executor once)
MAX_EXAMPLES = 100_000
_DESCENT_BUDGET = 2_000          # points the lowering step may evaluate


class StudentCodeError(Exception):
    """The student's file failed to import (its own error, one line): a failed grade, not bad input."""


@dataclass(frozen=True)
class Student:
    """What is graded: ``text`` as given (the formula, or ``FILE.py:FUNC``), ``value(params)`` its value at
    a point of the model's parameters, and ``expr`` the SymPy expression (``None`` for a function)."""

    text: str
    value: Callable[[Mapping], object]
    expr: Optional[sp.Expr] = None


@dataclass(frozen=True)
class Search:
    """How the points were found: ``method`` (``hypothesis``, ``grid``, ``symbolic`` for ``--leading``, or
    ``none`` when the student's file failed to import), the distinct points evaluated, and a note (why the
    grid was searched alone)."""

    method: str
    examples: int
    note: str = ""


@dataclass(frozen=True)
class Grade:
    """A grade.  ``agree`` over the whole search; on a disagreement ``point`` (the model's parameters,
    plus any executor-only keys of the check), ``student``, ``executed``, ``formula`` (the model's own
    value) and ``difference`` (student - executed) there, or ``error`` (what the student's code raised).
    ``leading`` is ``{"student": expr or None, "model": expr or None}``, ``theta`` the same for the Θ
    classes, and ``why_no_leading`` says why one is missing."""

    model: str
    quantity: str
    text: str
    agree: bool
    search: Search
    mode: str = "values"
    point: Optional[dict] = None
    student: object = None
    executed: object = None
    formula: object = None
    difference: object = None
    error: Optional[str] = None
    leading: dict = field(default_factory=dict)
    theta: dict = field(default_factory=dict)
    why_no_leading: dict = field(default_factory=dict)
    regime: object = ""
    smallest: str = SMALLEST

    def to_json(self) -> dict:
        """The grade as JSON data for an autograder.  Exact values are strings (an integer, or ``p/q``: a
        JSON number rounds beyond 2**53); expressions are SymPy's strings (``12*N**2*d**2/M``), which the
        ``--formula`` grammar reads back for a leading term or a Θ class (sums of monomials)."""
        def exact(v):
            return None if v is None else str(v)

        def expr(e):
            return None if e is None else str(e)

        return {
            "model": self.model, "quantity": self.quantity, "student": self.text, "mode": self.mode,
            "agree": self.agree,
            "point": None if self.point is None else {k: exact(v) if isinstance(v, (Integral, Fraction)) else v
                                                      for k, v in self.point.items()},
            "values": None if self.point is None else {"student": exact(self.student),
                                                       "executed": exact(self.executed),
                                                       "formula": exact(self.formula)},
            "difference": exact(self.difference),
            "error": self.error,
            "leading": {k: expr(v) for k, v in self.leading.items()},
            "theta": {k: expr(v) for k, v in self.theta.items()},
            "why_no_leading": dict(self.why_no_leading),
            "regime": str(self.regime),
            "search": {"method": self.search.method, "examples": self.search.examples, "note": self.search.note},
            "smallest": self.smallest,
        }


# ------------------------------------------------------------------------------------------ students
def _model_and_quantity(model, quantity: str):
    if isinstance(model, str):
        from symbolic import registry
        model = registry.get(model)              # BadInput naming model, with the nearest names
    if quantity not in model.all_quantities:
        raise BadInput("quantity", f"{model.name} has no quantity {quantity!r}"
                                   f"{did_you_mean(str(quantity), list(model.all_quantities), 'quantities')}")
    return model


class _NotANumber(TypeError):
    """A student's value that is not a number."""


def _number(v):
    """A student's value as an exact number where it is one (SymPy numbers to int/Fraction); a float stays
    the float it is.  ``TypeError`` for anything that is not a number."""
    if isinstance(v, bool) or not isinstance(v, (Real, sp.Number)):
        raise _NotANumber(f"returned {v!r:.60}, not a number")
    if isinstance(v, sp.Number):
        if v.is_Integer:
            return int(v)
        if v.is_Rational:
            return Fraction(int(v.p), int(v.q))
        return float(v)
    if isinstance(v, Integral):
        return int(v)
    if isinstance(v, Rational):
        f = Fraction(v)
        return f.numerator if f.denominator == 1 else f
    return v


def formula_student(model, text: str) -> Student:
    """A formula typed in the ``--per`` grammar over ``model``'s parameters (no code runs).  :class:`BadInput`
    naming ``formula`` when it cannot be read, or names a symbol that is not a parameter (nearest names)."""
    expr = sp.sympify(parse_expression(text, model.params, model.name, "formula"))
    fn = compile_exact(expr)

    def value(params):
        return fn(**{n: params[n] for n in fn.names})
    return Student(str(text), value, expr)


def function_student(model, fn: Callable, text: str = "") -> Student:
    """A Python function, called with the model's parameters it names as keyword arguments (all of them
    when it takes ``**kwargs``).  :class:`BadInput` naming ``function`` for a parameter the model lacks."""
    if not callable(fn):
        raise BadInput("function", f"{text or fn!r:.60} is not callable")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    names = [p.name for p in model.params]
    takes = names
    if sig is not None:
        params = list(sig.parameters.values())
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            takes = []
            for p in params:
                if p.kind in (p.VAR_POSITIONAL,):
                    continue
                if p.name in names:
                    takes.append(p.name)
                elif p.default is p.empty:
                    raise BadInput("function", f"{text or fn.__name__} takes {p.name}, not a parameter of {model.name}"
                                               f"{did_you_mean(p.name, names, 'parameters')}")

    def value(point):
        with contextlib.redirect_stdout(sys.stderr):      # what it prints is not the grade (--json stays JSON)
            return fn(**{n: point[n] for n in takes})
    return Student(text or getattr(fn, "__qualname__", repr(fn)), value, None)


def load_function(spec: str) -> tuple[Callable, str]:
    """``FILE.py:FUNC`` -> (the function, ``spec``).  This imports ``FILE.py``: it **runs the student's
    code**.  :class:`BadInput` naming ``function`` for a missing file or function; :class:`StudentCodeError`
    when the file itself fails to import (its error in one line)."""
    path_s, sep, name = str(spec).rpartition(":")
    if not sep or not path_s.endswith(".py") or not name.isidentifier():
        raise BadInput("function", f"expected FILE.py:FUNC, got {spec!r:.80}" +
                       ("" if ".py" in str(spec) else ' (a formula is given as --formula "EXPR")'))
    path = Path(path_s)
    if not path.is_file():
        raise BadInput("function", f"no file {path_s!r:.80}")
    mod_name = "_tilebound_student_" + "".join(c if c.isalnum() else "_" for c in path.stem)
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            module_spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001  the student's code: any failure is theirs, in one line
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise StudentCodeError(f"{path_s} failed to import: {type(exc).__name__}: {_one_line(exc)}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        defined = [k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                   and getattr(v, "__module__", None) == mod_name]
        raise BadInput("function", f"{path_s} defines no function {name}{did_you_mean(name, defined, 'functions')}")
    return fn, str(spec)


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:200] + "..."


# ------------------------------------------------------------------------------------------ leading terms
def model_leading(model, quantity: str):
    """``(leading term, Θ class)`` of ``quantity`` over the model's regime (``Model.leading``/``theta``, the
    model asked with ``quantity`` as its main one); ``ValueError`` when the model cannot derive them."""
    m = model if quantity == model.main_quantity else dataclasses.replace(model, asymptotic_quantity=quantity)
    return m.leading(), m.theta()


#: a student's formula whose expansion may have more terms than this gets no leading term (the dominance test
#: compares every pair of terms: ``(N + d + M + 1)**64`` would be 47,905 terms)
MAX_TERMS = 256


def _terms(e) -> int:
    """An upper bound on the number of terms of ``e`` expanded, computed without expanding (a sum adds its
    parts' counts, a product multiplies them, ``a**k`` is at most ``C(t + k - 1, k)`` for ``t`` terms of ``a``;
    a quotient's denominator counts one, a ceiling or floor its argument, a ``min``/``max`` its largest)."""
    from math import comb
    if e.is_Add:
        return sum(_terms(a) for a in e.args)
    if e.is_Mul:
        out = 1
        for a in e.args:
            out *= _terms(a)
        return out
    if e.is_Pow:
        k = e.exp
        if k.is_Integer and k > 1:
            return comb(_terms(e.base) + int(k) - 1, int(k))
        return 1
    if isinstance(e, (sp.ceiling, sp.floor)):
        return _terms(e.args[0])
    if isinstance(e, (sp.Min, sp.Max)):
        return max(_terms(a) for a in e.args)
    return 1


def _leading_pair(model, quantity: str, student: Student) -> tuple[dict, dict, dict]:
    lead, th, why = {}, {}, {}
    if student.expr is None:
        lead["student"] = th["student"] = None
        why["student"] = "a Python function has no leading term"
    elif _terms(student.expr) > MAX_TERMS:
        lead["student"] = th["student"] = None
        why["student"] = f"expanded, the formula may have more than {MAX_TERMS} terms; its leading term is not sought"
    else:
        try:
            lead["student"] = leading_term(student.expr, model.regime)
            th["student"] = theta(student.expr, model.regime)
        except ValueError as exc:
            lead["student"] = th["student"] = None
            why["student"] = _one_line(exc)
    try:
        lead["model"], th["model"] = model_leading(model, quantity)
        foreign = sorted(str(s) for s in lead["model"].free_symbols if s not in set(model.params))
        if foreign:
            why["model"] = (f"the model's leading term is taken of its divisible form, in {', '.join(foreign)}, "
                            "not its parameters")
    except ValueError as exc:
        lead["model"] = th["model"] = None
        why["model"] = _one_line(exc)
    return lead, th, why


# ------------------------------------------------------------------------------------------ the search
def point_key(point: Mapping, names) -> tuple:
    """The order of "smallest": ``(sum of the parameter values, the values in parameter order)``, over the
    model's parameters ``names`` (a non-numeric value counts 0 in the sum)."""
    vals = [point.get(n, 0) for n in names]
    nums = [v if isinstance(v, (Integral, Fraction)) and not isinstance(v, bool) else 0 for v in vals]
    return (sum(nums), tuple(nums))


@dataclass
class _Outcome:
    point: dict          # as the executor took it (the model's parameters and any executor-only keys)
    params: dict         # the model's parameters, validated, defaults filled in
    student: object
    executed: object
    error: Optional[str]
    disagrees: bool


class _Trials:
    """Every point evaluated once (memoised by its values): the model's point, the executor, the student."""

    def __init__(self, model, quantity: str, check, student: Student):
        self.model, self.quantity, self.check, self.student = model, quantity, check, student
        self.names = [p.name for p in model.params]
        self.seen: dict = {}
        self.best: Optional[_Outcome] = None

    def key(self, o: _Outcome) -> tuple:
        return point_key(o.params, self.names)

    def __call__(self, point: Mapping) -> Optional[_Outcome]:
        """The outcome at ``point``, or ``None`` where the model refuses it or the executor does
        (:class:`BadInput`: outside the model's domain, over the executor's budget)."""
        memo = tuple(sorted((k, repr(v)) for k, v in point.items()))
        if memo in self.seen:
            return self.seen[memo]
        self.seen[memo] = o = self._run(dict(point))
        if o is not None and o.disagrees and (self.best is None or self.key(o) < self.key(self.best)):
            self.best = o
        return o

    def _run(self, point: dict) -> Optional[_Outcome]:
        check, q = self.check, self.quantity
        try:
            params = self.model.check_point({k: v for k, v in point.items() if k not in check.extra})
            got = dict(check.execute(point))
        except BadInput:
            return None
        if q not in got and q == "total" and "reads" in got and "writes" in got:
            got["total"] = got["reads"] + got["writes"]
        executed = got[q]
        try:
            s = _number(self.student.value(params))
        except ZeroDivisionError as exc:
            how = "undefined (division by zero)" if self.student.expr is not None else \
                f"raised ZeroDivisionError: {_one_line(exc)}"
            return _Outcome(point, params, None, executed, how, True)
        except _NotANumber as exc:
            return _Outcome(point, params, None, executed, str(exc), True)
        except BaseException as exc:  # noqa: BLE001  the student's code failed here (sys.exit too): a failed grade
            if isinstance(exc, KeyboardInterrupt):
                raise
            return _Outcome(point, params, None, executed, f"raised {type(exc).__name__}: {_one_line(exc)}", True)
        msg = check.compare({q: s}, {q: executed})
        return _Outcome(point, params, s, executed, None, msg is not None)

    def lower(self) -> None:
        """From the best disagreement, take smaller steps while the point still disagrees: lower one parameter
        (to its least value, halfway, ..., by one), or move an amount from a parameter to a later one (the
        same sum, earlier in the order).  Ends at a point where no such step of one disagrees."""
        spent = 0
        while self.best is not None and spent < _DESCENT_BUDGET:
            for pt in self._steps(self.best):
                if not self._affordable(pt, self.best.point):
                    continue
                spent += 1
                r = self(pt)
                if r is not None and r.disagrees:
                    break
            else:
                return

    def _steps(self, o: _Outcome):
        """The candidate points below ``o`` in :func:`point_key` order, the longest steps first."""
        counts = [p for p in self.model.params
                  if isinstance(o.params[p.name], int) and not isinstance(o.params[p.name], bool)]
        for k, p in enumerate(counts):
            v = o.params[p.name]
            for gap in _halvings(v - int(p.least)):            # lower p
                yield {**o.point, p.name: v - gap}
            for q in counts[k + 1:]:                           # move from p to a later q
                for gap in _halvings(v - int(p.least)):
                    yield {**o.point, p.name: v - gap, q.name: o.params[q.name] + gap}

    def _affordable(self, pt, than) -> bool:
        """A lowered point runs no more executor work than the point it lowers (``Check.work`` where the
        check states it, else ``Check.size``)."""
        c = self.check
        try:
            if c.work is not None:
                return c.work(pt) <= c.work(than)
            return c.size_of(pt) <= c.size_of(than)
        except Exception:  # noqa: BLE001  a size the check cannot take is a point not to run
            return False


def _halvings(gap: int) -> list:
    """``gap, gap // 2, ..., 1``: the step sizes tried, longest first."""
    out = []
    while gap > 0:
        out.append(gap)
        gap //= 2
    return out


def _hypothesis_search(trials: _Trials, max_examples: int, seed: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    strategy = trials.check.strategy
    if callable(strategy) and not hasattr(strategy, "example"):      # a factory, as Check allows
        strategy = strategy()

    class _Disagrees(Exception):
        pass

    @hseed(seed)
    @settings(max_examples=max_examples, database=None, deadline=None, derandomize=False, print_blob=False,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
              # no explain phase: it re-runs the executor ~100 times after shrinking to annotate a report
              # that the grade never prints (two thirds of a grade's time); the search phases are all kept
              phases=[p for p in Phase if p.name != "explain"])
    @given(strategy)
    def probe(point):
        o = trials(point)
        if o is not None and o.disagrees:
            raise _Disagrees()

    try:
        probe()
    except _Disagrees:
        pass


def _hypothesis() -> bool:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return False
    return True


def grade(model, quantity: str, student, *, max_examples: int = DEFAULT_EXAMPLES, seed: int = 0) -> Grade:
    """Grade ``student`` (a formula string in the ``--per`` grammar, a :class:`Student`, or a callable taking
    the model's parameters as keywords) against the executed ``quantity`` of ``model`` (a name or a model).

    :class:`BadInput` naming ``model``, ``quantity``, ``formula``, ``function`` or ``max_examples`` for bad
    input; a student's error at a point is a disagreement in the returned :class:`Grade`."""
    model = _model_and_quantity(model, quantity)
    if isinstance(max_examples, bool) or not isinstance(max_examples, int) or not 1 <= max_examples <= MAX_EXAMPLES:
        raise BadInput("max_examples", f"must be an integer from 1 to {MAX_EXAMPLES:,}, got {max_examples!r}")
    if isinstance(student, str):
        student = formula_student(model, student)
    elif not isinstance(student, Student):
        student = function_student(model, student)
    check = check_for(model, quantity)
    if check is None:
        from .exemptions import EXEMPT
        why = EXEMPT.get(model.name) if isinstance(EXEMPT, Mapping) else None
        raise BadInput("model", f"{model.name} has no executor check to grade against" + (f" ({why})" if why else ""))
    if not covers(check, quantity):
        checked = [q for q in model.all_quantities if covers(check, q)]
        raise BadInput("quantity", f"the {check.name} check executes no {quantity!r}; grade one of {', '.join(checked)}")
    trials = _Trials(model, quantity, check, student)
    use_hypothesis = _hypothesis() and check.strategy is not None
    grid = sorted(check.grid(not use_hypothesis), key=lambda p: point_key(p, trials.names))
    for point in grid:                      # smallest first: the first disagreement is the grid's smallest
        o = trials(point)
        if o is not None and o.disagrees:
            break
    if use_hypothesis:
        _hypothesis_search(trials, max_examples, seed)
        search = ("hypothesis", "")
    elif check.strategy is None:
        search = ("grid", f"the {check.name} check draws no points; searched its grid")
    else:
        search = ("grid", "hypothesis is not installed (pip install 'tilebound[grade]'): searched the "
                          f"{check.name} check's grid alone")
    trials.lower()
    lead, th, why = _leading_pair(model, quantity, student)
    common = dict(model=model.name, quantity=quantity, text=student.text, leading=lead, theta=th,
                  why_no_leading=why, regime=model.regime.description)
    best = trials.best
    result_search = Search(search[0], sum(1 for o in trials.seen.values() if o is not None), search[1])
    if best is None:
        return Grade(agree=True, search=result_search, **common)
    formula = model.evaluate(quantity, **best.params)
    diff = None if best.student is None else best.student - best.executed
    shown = {**best.params, **{k: v for k, v in best.point.items() if k in check.extra}}
    return Grade(agree=False, search=result_search, point=shown, student=best.student, executed=best.executed,
                 formula=formula, difference=diff, error=best.error, **common)


def grade_leading(model, quantity: str, student) -> Grade:
    """Grade only the leading term, with its constant: the student formula's leading term over the model's
    regime against the model's, compared symbolically.  :class:`BadInput` naming ``leading`` for a Python
    function (it has no leading term), or where either side has none over the regime."""
    model = _model_and_quantity(model, quantity)
    if not isinstance(student, (str, Student)) or isinstance(student, Student) and student.expr is None:
        raise BadInput("leading", "a Python function has no leading term to compare; --leading grades a --formula")
    if isinstance(student, str):
        student = formula_student(model, student)
    lead, th, why = _leading_pair(model, quantity, student)
    for who in ("student", "model"):
        if who in why:
            owner = "the formula" if who == "student" else f"{model.name}'s {quantity}"
            raise BadInput("leading", f"{owner} has no leading term over the regime "
                                      f"{model.regime.description}: {why[who]}")
    agree = sp.simplify(lead["student"] - lead["model"]) == 0
    return Grade(model=model.name, quantity=quantity, text=student.text, agree=bool(agree), mode="leading",
                 search=Search("symbolic", 0, "the leading terms compared symbolically over the model's regime"),
                 leading=lead, theta=th, regime=model.regime.description,
                 smallest="")


def failed_import(model, quantity: str, text: str, message: str) -> Grade:
    """The grade of a student's file that failed to import (:class:`StudentCodeError`): a disagreement with
    no point, its error in one line."""
    model = _model_and_quantity(model, quantity)
    return Grade(model=model.name, quantity=quantity, text=str(text), agree=False, error=str(message),
                 search=Search("none", 0, "the student's file failed to import"), regime=model.regime.description,
                 smallest="")
