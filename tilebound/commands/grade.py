"""``tilebound grade --against MODEL -q QUANTITY (--formula "EXPR" | FILE.py:FUNC) [--leading] [--json]``: a
student's formula against the model's executed count (:mod:`verify.grade`).

It prints the smallest point where the two disagree (by the sum of the parameter values; a local minimum),
the student's value, the executed count and the model's formula there, the difference, and the leading
terms (with their constants) of the student's formula and of the model's quantity side by side, over the
model's regime.  ``--leading`` grades the leading term alone, symbolically.  ``--json`` writes the grade
as JSON for an autograder (:meth:`verify.grade.Grade.to_json`).

Exit status: 0 when the student agrees over the whole search, 1 on a disagreement (a student function
that raises, or a file of theirs that fails to import, is a disagreement: its error in one line, with the
point), 2 on bad input (an unknown model, quantity or parameter, with the nearest names; a formula that
does not parse; ``--leading`` with a function): one line.  The search needs hypothesis (the ``grade`` or
``verify`` extra); without it the check's grid is searched and the output says so.
"""

from __future__ import annotations

from base.errors import BadInput

from . import Command, IntOption

DESCRIPTION = ("Grade a student's formula (--formula, read by the --per grammar: no code runs) or Python function "
               "(FILE.py:FUNC: this runs their code) against the model's executed count: the smallest point where "
               "they disagree (by the sum of the parameter values; a local minimum), both values, the difference, "
               "and the leading terms side by side.  Exit 0 when it agrees over the whole search, 1 on a "
               "disagreement (or when the student's code raises), 2 on bad input.  The search draws with "
               "hypothesis (pip install 'tilebound[grade]'); without it, it searches the check's grid and says so.")


def add_arguments(s) -> None:
    s.add_argument("function", nargs="?", metavar="FILE.py:FUNC",
                   help="the student's Python function: imports FILE.py and calls FUNC with the model's "
                        "parameters as keyword arguments - this RUNS THE STUDENT'S CODE")
    s.add_argument("--formula", metavar="EXPR",
                   help="the student's formula in the model's parameters, read by the --per grammar "
                        "(numbers, + - * / ** ( ), ceil, floor, min, max); no code runs")
    s.add_argument("--against", required=True, metavar="MODEL", help="the model whose executed count grades it")
    s.add_argument("-q", "--quantity", required=True, metavar="QUANTITY", help="the quantity (total, reads, ...)")
    s.add_argument("--leading", action="store_true",
                   help="grade only the leading term with its constant, over the model's regime (--formula only)")
    s.add_argument("--json", action="store_true", help="write the grade as JSON (for an autograder)")
    s.add_argument("--max-examples", action=IntOption, default=None, metavar="N",
                   help="points hypothesis draws (default 200)")


def run(args, out) -> int:
    import json

    from symbolic import registry
    from verify import grade as grader

    from . import unicode_ok

    if (args.formula is None) == (args.function is None):
        raise BadInput("formula", 'give the student\'s formula as --formula "EXPR" or their function as '
                                  "FILE.py:FUNC (one of the two)")
    if args.leading and args.formula is None:
        raise BadInput("leading", "a Python function has no leading term to compare; --leading grades a --formula")
    model = registry.get(args.against)
    examples = grader.DEFAULT_EXAMPLES if args.max_examples is None else args.max_examples
    if args.leading:
        if args.max_examples is not None:
            raise BadInput("max-examples", "--leading compares leading terms symbolically: no points are drawn")
        result = grader.grade_leading(model, args.quantity, args.formula)
    else:
        result = _grade_values(grader, model, args, examples)
    if args.json:
        out.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        out.write(to_text(result, unicode=unicode_ok(out)) + "\n")
    return 0 if result.agree else 1


def _grade_values(grader, model, args, examples: int):
    """The values grade of ``--formula`` or ``FILE.py:FUNC`` (a file that fails to import is a failed grade)."""
    student = args.formula
    if student is None:
        try:
            fn, spec = grader.load_function(args.function)
        except grader.StudentCodeError as exc:
            return grader.failed_import(model, args.quantity, args.function, str(exc))
        student = grader.function_student(model, fn, spec)
    try:
        return grader.grade(model, args.quantity, student, max_examples=examples)
    except BadInput as exc:
        if exc.param == "max_examples":
            raise BadInput("max-examples", exc.problem) from None
        raise


# ------------------------------------------------------------------------------------------ text
def _point(point: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items())


def to_text(g, unicode: bool = True) -> str:
    """The grade as lines of text: the verdict, the point and values, the leading terms side by side."""
    from printing.text import ascii_text, note_to_text
    from printing.text import to_text as expr_text

    def ex(e):
        return "-" if e is None else expr_text(e, unicode=unicode)

    head = f"{g.model} {g.quantity}"
    lines = []
    if g.mode == "leading":
        verdict = "agrees" if g.agree else "disagrees"
        lines.append(f"{head}: the leading term {verdict} with the model's")
    elif g.agree:
        lines.append(f"{head}: agrees with the executed count at every point searched")
    elif g.point is None:
        lines.append(f"{head}: {g.error}")
    elif g.error is not None and g.student is None:        # the student's code raised: one line
        text = f"{head}: {g.text} {g.error} at {_point(g.point)}"
        return text if unicode else ascii_text(text)
    else:
        lines.append(f"{head}: disagrees with the executed count")
    if g.mode == "values" and not g.agree and g.point is not None:
        rows = [("smallest disagreeing point", _point(g.point))]
        if g.student is not None:
            rows += [("yours", str(g.student)), ("executed", str(g.executed)),
                     ("the model's formula", str(g.formula)), ("difference (yours - executed)", str(g.difference))]
        else:
            rows += [("executed", str(g.executed)), ("the model's formula", str(g.formula))]
        width = max(len(k) for k, _ in rows)
        lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    regime = note_to_text(g.regime, unicode=unicode) if g.regime else ""
    lead_s, lead_m = ex(g.leading.get("student")), ex(g.leading.get("model"))
    th = lambda who: "" if g.theta.get(who) is None else f"Θ({ex(g.theta[who])})"     # noqa: E731
    if g.leading:
        lines.append(f"  leading terms over {regime}:" if regime else "  leading terms:")
        w = max(len(lead_s), len(lead_m))
        lines.append(f"    {'yours':<11}  {lead_s:<{w}}  {th('student')}".rstrip())
        lines.append(f"    {'the model':<11}  {lead_m:<{w}}  {th('model')}".rstrip())
        for who, why in g.why_no_leading.items():
            lines.append(f"    ({'yours' if who == 'student' else 'the model'}: {why})")
        if g.mode == "leading" and not g.agree and g.theta.get("student") is not None \
                and g.theta.get("student") == g.theta.get("model"):
            lines.append("  the same Θ class, a different constant")
    if g.mode == "values" and (g.point is not None or g.agree):
        n = g.search.examples
        lines.append(f"  searched {n} point{'' if n == 1 else 's'} with {g.search.method}"
                     + (f" ({g.search.note})" if g.search.note else ""))
        if not g.agree:
            lines.append(f"  {g.smallest}")
    text = "\n".join(lines)
    return text if unicode else ascii_text(text)


COMMAND = Command("grade", "a student's formula or function against a model's executed count", add_arguments, run,
                  description=DESCRIPTION)
