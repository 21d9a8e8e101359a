"""The expression grammar a user types: a SymPy expression in a model's parameters, read without running code.

It is the command line's ``--per`` grammar (:mod:`tilebound.per`) and a grader's ``--formula``
(:mod:`verify.grade`): numbers (read exactly by :func:`base.typed.parse_number`), the model's parameter
names, ``+ - * / ** ^ ( )``, implicit products (``2 N``, ``N(d + 1)``) and the functions ``ceil``,
``floor``, ``min``, ``max``.  The recursive descent below builds a SymPy expression of the model's own
:class:`~symbolic.params.Param` symbols - never ``eval`` or SymPy's ``parse_expr`` (which runs Python).  A
sign binds as in Python: ``-2**2`` is ``-4``, ``2**-1`` is ``1/2``.

The work is bounded before it is done, so no expression hangs or exhausts the stack:

* at most :data:`MAX_LENGTH` characters, nested (parentheses, calls, exponents, signs) at most
  :data:`MAX_DEPTH` deep;
* an exponent is an integer in ``-64 .. 64``;
* every intermediate value is bounded *before* it is built: its degree in the parameters is at most
  :data:`MAX_DEGREE` and its constants at most ``10**4096`` (the bound of a typed number), so the tower
  ``(((2**64)**64)**64)**64`` and ``((N + 1)**64 + 1)**64`` are refused up front, as ``10**10**10`` is.

Every bad input is :class:`~base.errors.BadInput` naming the option the caller gives (``per``, ``formula``);
an unknown name comes with the nearest parameter names.
"""

from __future__ import annotations

import re
from typing import Mapping, NamedTuple

from base.discovery import did_you_mean
from base.errors import BadInput
from base.typed import MAX_MAGNITUDE, parse_number

__all__ = ["parse_expression", "quoted", "FUNCTIONS", "MAX_LENGTH", "MAX_DEPTH", "MAX_DEGREE", "MAX_POWER"]

#: the functions an expression may call (each evaluates exactly)
FUNCTIONS = ("ceil", "floor", "min", "max")
#: the longest expression read
MAX_LENGTH = 1000
#: the deepest nesting of parentheses, calls, exponents and signs
MAX_DEPTH = 32
#: the largest degree in the parameters of any intermediate value
MAX_DEGREE = 64
#: the largest exponent magnitude
MAX_POWER = 64
_MAX_BITS = MAX_MAGNITUDE.bit_length()

_TOKEN = re.compile(r"\s*(?:(?P<num>\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
                    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>\*\*|[-+*/^(),]))")


def quoted(text: str) -> str:
    """``text`` quoted for a message, cut when long."""
    return repr(text) if len(text) <= 60 else repr(text[:40]) + "..."


def _tokens(text: str, option: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            bad = text[pos:].lstrip()[:1]
            raise BadInput(option, f"cannot read {quoted(text)}: unexpected {bad!r}; an expression has numbers, "
                                  f"parameter names, + - * / ** ^ ( ) and {', '.join(FUNCTIONS)}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Term(NamedTuple):
    """A subexpression with bounds on what evaluating it can build: its degree in the parameters and the
    bits of its constants (a product adds both, a power multiplies them, a sum takes the larger)."""

    expr: object
    degree: int
    bits: int


class _Reader:
    """Recursive descent over the tokens, depth-bounded; builds a SymPy expression from the model's own Params."""

    def __init__(self, text: str, symbols: Mapping, model_name: str, option: str):
        import sympy as sp
        self.sp, self.text, self.symbols, self.model_name, self.option = sp, text, symbols, model_name, option
        self.toks, self.i, self.depth = _tokens(text, option), 0, 0

    def fail(self, why: str):
        raise BadInput(self.option, f"cannot read {quoted(self.text)}: {why}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, op=None):
        kind, val = self.peek()
        if kind is None:
            self.fail("it ends too early")
        if op is not None and val != op:
            self.fail(f"expected {op!r}, got {val!r}")
        self.i += 1
        return kind, val

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nested more than {MAX_DEPTH} deep")

    def leave(self):
        self.depth -= 1

    def bounded(self, expr, degree: int, bits: int) -> _Term:
        """``expr`` with its bounds, refused when they exceed the limits (checked before ``expr`` is built
        where building it is the cost: see :meth:`power`)."""
        if degree > MAX_DEGREE:
            self.fail(f"its degree in the parameters reaches {degree}; at most {MAX_DEGREE}")
        if bits > _MAX_BITS:
            self.fail("a value in it is beyond 10**4096")
        return _Term(expr, degree, bits)

    def read(self) -> _Term:
        if not self.toks:
            self.fail("it is empty")
        e = self.sum()
        if self.i != len(self.toks):
            self.fail(f"unexpected {self.peek()[1]!r}")
        return e

    def sum(self) -> _Term:
        e = self.product()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            r = self.product()
            e = self.bounded(e.expr + r.expr if op == "+" else e.expr - r.expr, max(e.degree, r.degree),
                             max(e.bits, r.bits) + 1)
        return e

    def product(self) -> _Term:
        e = self.unary()
        while True:
            kind, val = self.peek()
            if val in ("*", "/"):
                self.take()
                r = self.unary()
            elif kind in ("num", "name") or val == "(":    # implicit product: 2 N, N(d + 1)
                r = self.power()
            else:
                return e
            if val == "/" and r.expr == 0:
                self.fail("division by zero")
            degree, bits = e.degree + r.degree, e.bits + r.bits
            self.bounded(None, degree, bits)
            e = _Term(e.expr / r.expr if val == "/" else e.expr * r.expr, degree, bits)

    def unary(self) -> _Term:
        signs = 0
        while self.peek()[1] in ("+", "-"):             # iterative: a run of signs uses no stack
            signs += self.take()[1] == "-"
            if signs > MAX_DEPTH:
                self.fail(f"more than {MAX_DEPTH} signs in a row")
        e = self.power()
        return _Term(-e.expr, e.degree, e.bits) if signs % 2 else e

    def power(self) -> _Term:
        base = self.atom()
        if self.peek()[1] not in ("**", "^"):
            return base
        self.take()
        self.enter()
        exp = self.unary()
        self.leave()
        if not exp.expr.is_Integer:
            self.fail(f"an exponent must be an integer, got {exp.expr}")
        k = int(exp.expr)
        if abs(k) > MAX_POWER:
            self.fail(f"exponent {k} out of range (-{MAX_POWER} to {MAX_POWER})")
        if k < 0 and base.expr == 0:
            self.fail("division by zero")
        self.bounded(None, base.degree * abs(k), base.bits * abs(k))     # before SymPy builds the power
        return _Term(base.expr ** k, base.degree * abs(k), base.bits * abs(k))

    def atom(self) -> _Term:
        sp = self.sp
        kind, val = self.take()
        if kind == "num":
            v = parse_number(self.option, val)
            e = sp.Integer(v) if isinstance(v, int) else sp.Rational(v.numerator, v.denominator)
            return self.bounded(e, 0, max(int(e.p).bit_length(), int(e.q).bit_length()))
        if kind == "name":
            if self.peek()[1] == "(" and val not in self.symbols:      # N(d + 1) is a product, ceil(N) a call
                return self.call(val)
            if val not in self.symbols:
                raise BadInput(self.option, f"{val} is not a parameter of {self.model_name}"
                                      f"{did_you_mean(val, list(self.symbols))}")
            return _Term(self.symbols[val], 1, 0)
        if val == "(":
            self.enter()
            e = self.sum()
            self.take(")")
            self.leave()
            return e
        self.fail(f"unexpected {val!r}")

    def call(self, fname: str) -> _Term:
        sp = self.sp
        if fname not in FUNCTIONS:
            self.fail(f"unknown function {fname}; the functions are {', '.join(FUNCTIONS)}")
        self.take("(")
        self.enter()
        args = [self.sum()]
        while self.peek()[1] == ",":
            self.take()
            args.append(self.sum())
        self.take(")")
        self.leave()
        degree, bits = max(a.degree for a in args), max(a.bits for a in args) + 1
        if fname in ("ceil", "floor"):
            if len(args) != 1:
                self.fail(f"{fname} takes one argument")
            return self.bounded((sp.ceiling if fname == "ceil" else sp.floor)(args[0].expr), degree, bits)
        if len(args) < 2:
            self.fail(f"{fname} takes two or more arguments")
        return self.bounded((sp.Min if fname == "min" else sp.Max)(*(a.expr for a in args)), degree, bits)


def parse_expression(text: str, params, owner: str, option: str = "per"):
    """``text`` as a SymPy expression in ``params`` (the :class:`~symbolic.params.Param` symbols a model
    declares; ``owner`` names it in messages), by the grammar above (no ``eval``).  :class:`BadInput`
    naming ``option`` for anything it cannot read, with the nearest names for an unknown one."""
    text = str(text)
    if len(text) > MAX_LENGTH:
        raise BadInput(option, f"an expression of {len(text):,} characters; at most {MAX_LENGTH:,}")
    return _Reader(text, {p.name: p for p in params}, owner, option).read().expr
