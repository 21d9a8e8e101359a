r"""JavaScript that evaluates a model's expressions exactly, with ``BigInt``: the page's calculator.

:class:`JavaScriptPrinter` is a SymPy code printer (``CodePrinter``, as SymPy's own ``jscode`` is): it
dispatches on the expression's class (``_print_ceiling``, ``_print_Piecewise``, ...), declares its options in
``_default_settings`` and returns a JavaScript expression over one object ``v`` of parameter values.  Every
number is an exact rational, a pair ``[num, den]`` of ``BigInt`` with ``den > 0`` reduced by their gcd
(an integer is ``[n, 1n]``); the functions the expressions call are :data:`RUNTIME` (``Q.add``, ``Q.floor``,
...), which a page includes once.  The counting conventions are :mod:`symbolic.evaluate`'s, node for node:

* integers, rationals, parameters; ``+``, ``*``, powers with integer exponents (a negative one divides);
* ``ceiling`` / ``floor`` of rationals (``floor(n/d)`` rounds toward minus infinity, as Python's ``//``);
* ``Min``, ``Max``, ``Abs``, ``Mod`` (the divisor's sign, as Python's ``%`` and SymPy's ``Mod``),
  :class:`symbolic.floorsum.gcd`;
* ``Piecewise`` with relations, ``And`` / ``Or`` / ``Not`` (the first true condition's piece);
* the floor sums: :class:`~symbolic.floorsum.FloorSum` ``S(n; a, c, b)`` by the Euclid-like reduction of
  :func:`symbolic.floorsum.floor_sum` (O(log max(a, b)) steps, never a loop over the blocks), and a ``Sum``
  of ``floor(affine in its index)`` by the same reduction; a node with a :meth:`closed_form` of its own
  (:class:`symbolic.models.attention_local.ShownSum`) by that closed form;
* a rational power (``sqrt``) exactly when the root is rational; otherwise ``Q.root`` throws
  ``Q.NotExact``, and the page evaluates the expression again under ``Q.approximately``, where each root is a
  rational within ``10**-40`` of its value: an approximation of the whole expression, labelled as one.

Anything else - a count computed by an algorithm (a node whose class only defines ``exact_value``, such as
``gemm.l2.lru``'s LRU misses), a ``Sum`` that is not a floor sum, a Θ class - raises
:class:`NotExpressible` at print time, naming the node: the page then shows that quantity as a table at
stated points, computed in Python, and says so.  Never a float, never a silent approximation.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.codeprinter import CodePrinter

from symbolic.evaluate import affine_floor_sum     # the one test of a floor sum's shape, shared with evaluation
from symbolic.floorsum import FloorSum
from symbolic.params import Param

__all__ = ["JavaScriptPrinter", "NotExpressible", "to_javascript", "RUNTIME"]


class NotExpressible(TypeError):
    """An expression the printer cannot write as exact JavaScript; ``node`` is the offending subexpression's
    class name and ``str(exc)`` the reason a page shows."""

    def __init__(self, node: str, reason: str):
        super().__init__(reason)
        self.node = node


#: the exact rational arithmetic the printed expressions call (a page includes it once, before them)
RUNTIME = r"""
const Q = (() => {
  "use strict";
  class NotExact extends Error {
    constructor(message) { super(message); }
  }
  const abs = x => (x < 0n ? -x : x);
  const igcd = (a, b) => { a = abs(a); b = abs(b); while (b) { [a, b] = [b, a % b]; } return a; };
  const fdiv = (n, d) => { const q = n / d; return (n % d !== 0n && (n < 0n) !== (d < 0n)) ? q - 1n : q; };
  const mk = (n, d) => {
    if (d === 0n) throw new RangeError("division by zero");
    if (d < 0n) { n = -n; d = -d; }
    const g = igcd(n, d);
    return g > 1n ? [n / g, d / g] : [n, d];
  };
  const int = n => [n, 1n];
  const rat = (n, d) => mk(n, d);
  const add = (...xs) => xs.reduce((a, b) => (a[1] === 1n && b[1] === 1n ? [a[0] + b[0], 1n]
                                                : mk(a[0] * b[1] + b[0] * a[1], a[1] * b[1])));
  const mul = (...xs) => xs.reduce((a, b) => (a[1] === 1n && b[1] === 1n ? [a[0] * b[0], 1n]
                                                : mk(a[0] * b[0], a[1] * b[1])));
  const pow = (x, k) => {
    const e = BigInt(k);
    if (e >= 0n) return [x[0] ** e, x[1] ** e];
    if (x[0] === 0n) throw new RangeError("division by zero");
    return mk(x[1] ** -e, x[0] ** -e);
  };
  const iroot = (n, q) => {          // the integer q-th root of n >= 0, rounded down (Newton's method)
    if (n < 2n) return n;
    let x = 1n << BigInt(Math.ceil(n.toString(2).length / Number(q)));
    for (;;) {
      const y = ((q - 1n) * x + n / x ** (q - 1n)) / q;
      if (y >= x) return x;
      x = y;
    }
  };
  // x ** (p/q): exact when the root is rational; else NotExact, or - inside approximately() - a rational
  // within 10**-DIGITS (relative) of the root, so that the whole expression is approximated, not one root
  const DIGITS = 40n;
  let approximating = false;
  const root = (x, p, q) => {
    const Q_ = BigInt(q);
    if (x[0] < 0n) throw new RangeError("a root of a negative number");
    const rn = iroot(x[0], Q_), rd = iroot(x[1], Q_);
    if (rn ** Q_ === x[0] && rd ** Q_ === x[1]) return pow([rn, rd], p);
    if (!approximating) throw new NotExact("not exact: an irrational root");
    // (n/d)^(1/q) = (n d^(q-1))^(1/q) / d, scaled by 10^DIGITS before the integer root
    const scale = 10n ** DIGITS;
    const r = mk(iroot(x[0] * x[1] ** (Q_ - 1n) * scale ** Q_, Q_), x[1] * scale);
    return pow(r, p);
  };
  // a rational in scientific notation with `digits` significant digits (any size: no float overflow)
  const sci = (x, digits = 6) => {
    if (x[0] === 0n) return "0";
    const sign = x[0] < 0n ? "-" : "", n = abs(x[0]), d = x[1];
    let e = n.toString().length - d.toString().length;
    const k = BigInt(digits - 1);
    const lead = ee => (ee <= k ? n * 10n ** (k - ee) / d : n / (d * 10n ** (ee - k)));
    let m = lead(BigInt(e));
    if (m < 10n ** k) { e -= 1; m = lead(BigInt(e)); }
    const t = m.toString();
    return sign + t[0] + (t.length > 1 ? "." + t.slice(1) : "") + "e" + (e >= 0 ? "+" : "") + e;
  };
  const approximately = f => {
    approximating = true;
    try { return sci(f()); } finally { approximating = false; }
  };
  const floor = x => [fdiv(x[0], x[1]), 1n];
  const ceil = x => [-fdiv(-x[0], x[1]), 1n];
  const cmp = (a, b) => { const s = a[0] * b[1] - b[0] * a[1]; return s > 0n ? 1 : s < 0n ? -1 : 0; };
  const lt = (a, b) => cmp(a, b) < 0, le = (a, b) => cmp(a, b) <= 0;
  const gt = (a, b) => cmp(a, b) > 0, ge = (a, b) => cmp(a, b) >= 0;
  const eq = (a, b) => cmp(a, b) === 0, ne = (a, b) => cmp(a, b) !== 0;
  const min = (...xs) => xs.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
  const max = (...xs) => xs.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
  const absq = x => [abs(x[0]), x[1]];
  const mod = (a, b) => add(a, mul([-1n, 1n], b, floor(mk(a[0] * b[1], a[1] * b[0]))));
  const asInt = (x, what) => {
    if (x[1] !== 1n) throw new RangeError(what + ": an integer argument expected");
    return x[0];
  };
  const gcd = (a, b) => int(igcd(asInt(a, "gcd"), asInt(b, "gcd")));
  // sum_{i=0}^{n-1} floor((a i + b)/m), n >= 0, m >= 1: symbolic.floorsum.floor_sum's reduction, O(log) steps
  const floorSumInt = (n, m, a, b) => {
    if (n <= 0n) return 0n;
    if (m < 1n) throw new RangeError("floor_sum: m must be >= 1");
    let total = 0n;
    if (a < 0n || a >= m) { total += n * (n - 1n) / 2n * fdiv(a, m); a -= m * fdiv(a, m); }
    if (b < 0n || b >= m) { total += n * fdiv(b, m); b -= m * fdiv(b, m); }
    for (;;) {
      const yMax = a * n + b;
      if (yMax < m) return total;
      n = yMax / m; b = yMax % m;
      [m, a] = [a, m];
      if (a >= m) { total += n * (n - 1n) / 2n * (a / m); a %= m; }
      if (b >= m) { total += n * (b / m); b %= m; }
    }
  };
  // FloorSum(n, a, c, b) = sum_{t=0}^{n-1} floor((a t + c)/b)
  const floorSum = (n, a, c, b) => int(floorSumInt(asInt(n, "FloorSum"), asInt(b, "FloorSum"),
                                                   asInt(a, "FloorSum"), asInt(c, "FloorSum")));
  // sum_{i=lo}^{hi} floor(s i + o) for rationals s, o: i = lo + k, over the common denominator
  const affineFloorSum = (lo, hi, s, o) => {
    const n = asInt(hi, "Sum") - asInt(lo, "Sum") + 1n;
    if (n <= 0n) return int(0n);
    const o2 = add(o, mul(s, lo));
    const m = s[1] * o2[1] / igcd(s[1], o2[1]);
    return int(floorSumInt(n, m, s[0] * (m / s[1]), o2[0] * (m / o2[1])));
  };
  const nopiece = () => { throw new RangeError("no piece of a Piecewise applies"); };
  const show = x => (x[1] === 1n ? x[0].toString() : x[0].toString() + "/" + x[1].toString());
  return { NotExact, int, rat, add, mul, pow, root, floor, ceil, lt, le, gt, ge, eq, ne, min, max,
           abs: absq, mod, gcd, floorSum, affineFloorSum, nopiece, show, sci, approximately };
})();
"""


class JavaScriptPrinter(CodePrinter):
    """SymPy expression -> a JavaScript expression over ``v`` (``{name: [num, den]}``) calling :data:`RUNTIME`.

    ``values`` (a setting) is the name of the object of parameter values (default ``v``)."""

    printmethod = "_tilebound_javascript"
    language = "JavaScript"
    _default_settings = dict(CodePrinter._default_settings, values="v", strict=False, contract=False,
                             allow_unknown_functions=False)

    # ---------------------------------------------------------------------- atoms
    def _print_Integer(self, expr):
        return f"Q.int({int(expr)}n)"

    _print_Zero = _print_One = _print_NegativeOne = _print_Integer

    def _print_Rational(self, expr):
        return f"Q.rat({int(expr.p)}n, {int(expr.q)}n)"

    _print_Half = _print_Rational

    def _print_Symbol(self, expr):
        if not isinstance(expr, Param):        # a note's symbol, a summation index, a derivation's quotient
            raise NotExpressible(type(expr).__name__, f"the symbol {expr} is not a parameter")
        return f"{self._settings['values']}[{_js_string(expr.name)}]"

    _print_Dummy = _print_Symbol

    def _print_BooleanTrue(self, expr):
        return "true"

    def _print_BooleanFalse(self, expr):
        return "false"

    # ---------------------------------------------------------------------- arithmetic
    def _print_Add(self, expr, order=None):
        return "Q.add(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Mul(self, expr):
        return "Q.mul(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Pow(self, expr, rational=False):
        base = self._print(expr.base)
        if expr.exp.is_Integer:
            return f"Q.pow({base}, {int(expr.exp)})"
        if expr.exp.is_Rational:
            return f"Q.root({base}, {int(expr.exp.p)}, {int(expr.exp.q)})"
        raise NotExpressible("Pow", f"a power with exponent {expr.exp}, which is not a rational number")

    def _print_ceiling(self, expr):
        return f"Q.ceil({self._print(expr.args[0])})"

    def _print_floor(self, expr):
        return f"Q.floor({self._print(expr.args[0])})"

    def _print_Min(self, expr):
        return "Q.min(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Max(self, expr):
        return "Q.max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Abs(self, expr):
        return f"Q.abs({self._print(expr.args[0])})"

    def _print_Mod(self, expr):
        return f"Q.mod({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_gcd(self, expr):
        return f"Q.gcd({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_SplitLaunch(self, expr):
        # decode's Iverson bracket [S > 1] (symbolic.models.decode.SplitLaunch.exact_value)
        return f"(Q.gt({self._print(expr.args[0])}, Q.int(1n)) ? Q.int(1n) : Q.int(0n))"

    # ---------------------------------------------------------------------- logic
    def _print_Relational(self, expr):
        ops = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
        return f"Q.{ops[expr.rel_op]}({self._print(expr.lhs)}, {self._print(expr.rhs)})"

    def _print_And(self, expr):
        return "(" + " && ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr):
        return "(" + " || ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr):
        return f"!({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr):
        out = "Q.nopiece()"
        for e, c in reversed(expr.args):
            out = self._print(e) if c is sp.true and out == "Q.nopiece()" else \
                f"({self._print(c)} ? {self._print(e)} : {out})"
        return out

    # ---------------------------------------------------------------------- sums
    def _print_FloorSum(self, expr):
        if type(expr).closed_form is not FloorSum.closed_form:        # a node with a closed form of its own
            return self._print(expr.closed_form())
        n, a, c, b = expr.args
        return f"Q.floorSum({self._print(n)}, {self._print(a)}, {self._print(c)}, {self._print(b)})"

    def _print_Sum(self, expr):
        affine = affine_floor_sum(expr)
        if affine is None:
            raise NotExpressible("Sum", f"a sum that is not a floor sum ({sp.sstr(expr.function)}), which would "
                                        "take a loop over its terms")
        slope, offset = affine
        _, lo, hi = expr.limits[0]
        return (f"Q.affineFloorSum({self._print(lo)}, {self._print(hi)}, {self._print(slope)}, "
                f"{self._print(offset)})")

    # ---------------------------------------------------------------------- the rest
    def _print_Function(self, expr):
        if callable(getattr(type(expr), "closed_form", None)):
            return self._print(expr.closed_form())
        if callable(getattr(type(expr), "exact_value", None)):
            raise NotExpressible(type(expr).__name__, f"{type(expr).__name__} is computed by an algorithm "
                                                      "(its exact_value), not by a formula")
        raise NotExpressible(type(expr).__name__, f"no exact JavaScript for {type(expr).__name__}")

    def _print_Basic(self, expr):
        raise NotExpressible(type(expr).__name__, f"no exact JavaScript for {type(expr).__name__}")

    _print_not_supported = _print_Basic
    emptyPrinter = _print_Basic

    def _format_code(self, lines):
        return lines

    def _get_statement(self, codestring):
        return codestring

    def _get_comment(self, text):
        return f"// {text}"

    def _print_Float(self, expr):
        raise NotExpressible("Float", f"the float {expr} is not exact")

    def _print_NaN(self, expr):
        raise NotExpressible("NaN", "not a number")

    _print_Infinity = _print_NegativeInfinity = _print_ComplexInfinity = _print_NaN

    def _print_ImaginaryUnit(self, expr):
        raise NotExpressible("ImaginaryUnit", "a complex number")


def _js_string(text: str) -> str:
    import json
    return json.dumps(str(text))


def to_javascript(expr, **settings) -> str:
    """``expr`` as one JavaScript expression over ``v`` (see :class:`JavaScriptPrinter`); raises
    :class:`NotExpressible` naming the node it cannot write exactly."""
    return JavaScriptPrinter(settings).doprint(sp.sympify(expr))
