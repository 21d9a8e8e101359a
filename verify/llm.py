"""Every operation of an LLM step executed: its model's executor, count-only, at exactly the step's shapes.

:func:`verify_step` takes a :class:`tuning.llm.Step` and, for each operation, runs the executor that
``python -m verify`` checks the operation's model against (the check bound to the model, ``verify/checks/``:
the same executor binding, no second one here) at the operation's parameters.  A row agrees when

* every quantity the check compares (reads, writes, FLOPs, each tensor class, bytes) is equal, formula and
  executed, exactly; and
* the row's own ``bytes`` and ``flops`` follow from the *executed* counts by the rule the step priced them
  with (the model's own ``bytes``; or its elements times the element size; the grouped GEMM's w13 row
  without the combine).

An executor that refuses a shape (its budget, in its own work unit) makes the row say so, with the
executor's message; a row with no model (the all-reduce, a closed form) or with a pending model says that.
Identical operations (two norms at one shape) run once.  Executors run serially, in the order of the step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Optional

from base.dtypes import element_bytes
from base.errors import BadInput

__all__ = ["RowCheck", "verify_step", "AGREES", "DIFFERS", "REFUSED", "CLOSED_FORM", "PENDING", "NO_CHECK"]

AGREES, DIFFERS, REFUSED, CLOSED_FORM, PENDING, NO_CHECK = (
    "agrees", "differs", "refused", "closed form", "pending", "no check")


@dataclass(frozen=True)
class RowCheck:
    """One operation's verification: ``status`` (one of the constants above), the ``check`` that ran, how
    many quantities agreed, a ``detail`` line, and the executor's seconds."""

    op: object
    status: str
    check: Optional[str]
    quantities: int
    detail: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.status in (AGREES, CLOSED_FORM, PENDING)

    def to_json(self) -> dict:
        return {"name": self.op.name, "layer_type": self.op.layer_type, "status": self.status, "check": self.check,
                "quantities": self.quantities, "detail": self.detail, "seconds": self.seconds}


def _check_for(model_name: str):
    """The check ``python -m verify`` binds to the model (:func:`verify.registry.check_for`: the one named like
    the model first), or ``None``."""
    from symbolic import registry as models

    from .registry import check_for
    return check_for(models.get(model_name))


def _point(check, params: dict) -> dict:
    pt = dict(params)
    for key in check.extra:                      # executor-only keys the bound executor reads without a default
        if key == "B_R":
            pt.setdefault("B_R", 1)              # one row a program, as the step's element-wise kernels run
    return pt


def _priced(op, executed: dict, settings: dict):
    """The row's bytes from the executed counts, by the step's rule (tuning.llm.step)."""
    if op.model == "gemm.tiled":
        return (executed["reads"] + executed["writes"]) * element_bytes(settings["weights"])
    if op.model.startswith("attention."):
        return (executed["reads"] + executed["writes"]) * element_bytes(settings["dtype"])
    b = executed["bytes"]
    if op.name == "experts gate/up":
        b -= 2 * (executed["reads_combine"] + executed["writes_combine"])
    return b


def verify_step(step, jobs: int = 1) -> list:
    """:class:`RowCheck` per operation of ``step``, in order.  ``jobs > 1`` runs the distinct executor runs in
    that many worker processes (:func:`base.pool.run_each`; each finds the check by its model's name in its own
    registry); the rows are the same, only the wall time differs.  A progress bar on a terminal's stderr counts
    the runs done."""
    from base import validate
    jobs = validate.positive_int("jobs", jobs)
    rows: list = [None] * len(step.ops)
    todo: dict = {}
    for i, op in enumerate(step.ops):
        if op.model is None:
            rows[i] = RowCheck(op, CLOSED_FORM, None, 0, "no executor: a closed form (tuning/llm/shapes.py)", 0.0)
        elif op.pending:
            rows[i] = RowCheck(op, PENDING, None, 0, op.why.split(". ")[0], 0.0)
        else:
            key = (op.model, tuple(sorted(op.params.items())), op.name == "experts gate/up")
            todo.setdefault(key, []).append(i)
    # the longest runs first: the executors' work grows with the programs x K-steps they walk
    firsts = sorted(((key, idx[0]) for key, idx in todo.items()), key=lambda f: -_work(step.ops[f[1]].params))
    from base.pool import run_each
    done = run_each(_run, [(step.ops[i], step.settings) for _, i in firsts], jobs, "llm --verify", "run",
                    labels=[step.ops[i].name for _, i in firsts])
    results = {key: r for (key, _), r in zip(firsts, done)}
    for key, idx in todo.items():
        first = replace(results[key], op=step.ops[idx[0]])     # a worker's row holds a copy of the op
        rows[idx[0]] = first
        for i in idx[1:]:
            rows[i] = RowCheck(step.ops[i], first.status, first.check, first.quantities,
                               first.detail + " (the same run as above)", 0.0)
    return rows


def _work(p: dict) -> int:
    """A GEMM-like run's program x K-step iterations (what its executor walks), else 0: the order of a pool."""
    if {"B_M", "B_N", "B_K"} <= set(p):
        m = p.get("M", p.get("T", 1) * p.get("k", 1))
        return -(-m // p["B_M"]) * -(-p["N"] // p["B_N"]) * -(-p["K"] // p["B_K"])
    return 0


def _run(op, settings) -> RowCheck:
    check = _check_for(op.model)
    if check is None:
        return RowCheck(op, NO_CHECK, None, 0, f"no check is bound to {op.model}", 0.0)
    pt = _point(check, op.params)
    t0 = time.perf_counter()
    try:
        executed = check.execute(pt)
    except BadInput as exc:
        return RowCheck(op, REFUSED, check.name, 0, f"the executor refused this shape: {exc}",
                        time.perf_counter() - t0)
    secs = time.perf_counter() - t0
    formula = check.formula(pt)
    msg = check.compare(formula, executed)
    if msg is not None:
        return RowCheck(op, DIFFERS, check.name, 0, msg, secs)
    problems = []
    b = _priced(op, executed, settings)
    if Fraction(b) != Fraction(op.bytes):
        problems.append(f"bytes: the row's {op.bytes} != {b} from the executed counts")
    if "flops" in executed and executed["flops"] != op.flops:
        problems.append(f"flops: the row's {op.flops} != executed {executed['flops']}")
    if problems:
        return RowCheck(op, DIFFERS, check.name, len(formula), "; ".join(problems), secs)
    return RowCheck(op, AGREES, check.name, len(formula),
                    f"{len(formula)} quantities equal, formula and executed ({check.name})", secs)
