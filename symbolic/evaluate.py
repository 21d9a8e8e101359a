"""Exact evaluation of cost expressions.

``sympy.lambdify`` prints ``ceiling(N/B_r)`` as ``math.ceil(N/B_r)`` - a float division, wrong
beyond 2**53.  Here an expression is compiled once into Python source over Python ints and
:class:`fractions.Fraction` (one function per expression, a quotient under ``floor``/``ceiling`` a floor
division), so ``N = 3*10**9`` (or ``10**30``) evaluates exactly, far faster than ``expr.subs(...)``.
Supported: integers, rationals, symbols, ``+ * **``, ``ceiling``, ``floor``, ``Min``, ``Max``,
``Piecewise``, relations, ``Abs``, ``Mod``, :class:`~symbolic.floorsum.gcd`,
:class:`~symbolic.floorsum.FloorSum` (the value of its closed form, by :func:`~symbolic.floorsum.floor_sum`),
a ``sympy.Function`` whose class defines ``exact_value(*ints) -> int`` (by that), and finite ``Sum``: a sum
of ``floor(affine in the index)`` in O(log) steps (:func:`symbolic.floorsum.floor_sum`), any other sum by a
loop over the index.  Anything else raises ``TypeError`` at compile time, never a silent float.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral
from typing import Callable, Mapping

import sympy as sp

from .floorsum import FloorSum, floor_sum, gcd

__all__ = ["compile_exact", "compile_env", "exact", "to_python_number", "affine_floor_sum"]

Env = Mapping[sp.Symbol, object]


def to_python_number(v):
    """Fraction/int -> int when integral, else Fraction; bools pass through."""
    if isinstance(v, bool):
        return v
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else v
    if isinstance(v, Integral):
        return int(v)
    raise TypeError(f"not an exact number: {v!r}")


_MISS = object()          # a memo slot not yet filled (a repeated node reached only lazily)
_DEPTH = 48               # the deepest nesting of one generated expression before a node becomes a local def

_OPS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">", sp.GreaterThan: ">=",
        sp.Equality: "==", sp.Unequality: "!="}


def _repeats(e: sp.Basic) -> set:
    """The non-atomic subexpressions that occur more than once in ``e``'s tree, each counted below its first
    occurrence only: a node inside a repeated node is evaluated once through that node's local, so it
    repeats only if it occurs elsewhere."""
    seen: set = set()
    again: set = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if node.is_Atom:
            continue
        if node in seen:
            again.add(node)
            continue
        seen.add(node)
        stack.extend(_compiled_args(node))
    return again


def _own_closed_form(e) -> bool:
    """Whether ``e`` is a FloorSum subclass with a closed form of its own (a ShownSum: it evaluates by its
    ``closed_form`` and prints as something else), rather than the lattice-point sum of its four arguments."""
    return isinstance(e, FloorSum) and type(e).closed_form is not FloorSum.closed_form


def _compiled_args(node) -> tuple:
    """The children of ``node`` that its compiled form evaluates."""
    return (node.closed_form(),) if _own_closed_form(node) else node.args


def _eager_children(node) -> tuple:
    """The children every evaluation of ``node`` evaluates: a ``Piecewise`` its first condition, ``And``/``Or``
    their first argument (the rest short-circuit), a loop ``Sum`` none (its body is a scope of its own)."""
    if isinstance(node, sp.Piecewise):
        return (node.args[0].cond,)
    if isinstance(node, (sp.And, sp.Or)):
        return node.args[:1]
    if isinstance(node, sp.Sum) and affine_floor_sum(node) is None:
        return ()
    return _compiled_args(node)


def _eager(root: sp.Basic, repeated: set) -> set:
    """The repeated nodes that every evaluation of ``root`` evaluates (through eager children only): they are
    computed once, as straight-line statements; a repeated node reached only lazily is filled on first use."""
    out, seen, stack = set(), set(), [root]
    while stack:
        node = stack.pop()
        if node.is_Atom or node in seen:
            continue
        seen.add(node)
        if node in repeated:
            out.add(node)
        stack.extend(_eager_children(node))
    return out


class _Scope:
    """One function body of the generated source: the whole expression, or the loop of one ``Sum``.

    ``lines`` are its statements in order; a repeated node every evaluation reaches is a statement
    ``h<k> = ...`` (emitted when first met, after the statements it uses); one reached only lazily is a slot
    ``m<k>``, ``_MISS`` until its local def fills it; ``defs`` hold those defs and the depth-limit defs."""

    def __init__(self, gen: "_Source", root, indices: dict):
        self.indices = indices                         # {Sum index: loop variable} in scope
        self.plain = root is None                      # a sum's limits: written out, nothing memoised
        self.eager = set() if self.plain else _eager(root, gen.repeated)
        self.names: dict = {}
        self.slots: list = []
        self.defs: list = []
        self.lines: list = []


class _Source:
    """Python source for one expression over Python ints and Fractions (:func:`_compile`)."""

    def __init__(self, e: sp.Basic):
        self.expr, self.repeated = e, _repeats(e)
        self.ns: dict = {"_MISS": _MISS, "_div": _div, "_int": _int, "_ceil": math.ceil, "_floor": math.floor,
                         "_gcd": math.gcd, "_lattice": _lattice, "_affine_sum": _affine_sum,
                         "_nopiece": _nopiece}
        self._consts: dict = {}
        self.vars: dict = {}                            # {Symbol: local}, each read from env once a call
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, obj, prefix="k") -> str:
        key = (type(obj), obj) if isinstance(obj, (int, Fraction)) else id(obj)
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = self.fresh("_" + prefix)
            self.ns[name] = obj
        return name

    # ------------------------------------------------------------------ the function
    def function(self) -> Callable[[dict], object]:
        top = _Scope(self, self.expr, {})
        result = self.src(self.expr, top, 0)
        body = [f"{v} = env[{self.const(x, 's')}]" for x, v in self.vars.items()]
        body += self.scope_body(top) + [f"return {result}"]
        text = "def _f(env):\n" + "".join(f"    {line}\n" for line in body)
        exec(compile(text, "<tilebound.exact>", "exec"), self.ns)
        f = self.ns["_f"]
        f.source = text
        return f

    @staticmethod
    def scope_body(scope: _Scope) -> list:
        return [f"{m} = _MISS" for m in scope.slots] + scope.defs + scope.lines

    # ------------------------------------------------------------------ one node
    def src(self, e: sp.Basic, scope: _Scope, depth: int) -> str:
        """``e`` as a Python expression in ``scope``."""
        if e.is_Atom:
            return self.atom(e, scope)
        name = scope.names.get(e)
        if name is not None:
            return name if name.startswith("h") else f"({name} if {name} is not _MISS else g{name}())"
        if e in self.repeated and not scope.plain:
            if e in scope.eager:                       # always evaluated: a statement, once
                text = self.node(e, scope, 0)
                name = scope.names[e] = self.fresh("h")
                scope.lines.append(f"{name} = {text}")
                return name
            name = scope.names[e] = self.fresh("m")    # evaluated on some paths only: filled on first use
            scope.slots.append(name)
            text = self.node(e, scope, 0)
            scope.defs += [f"def g{name}():", f"    nonlocal {name}", f"    {name} = {text}",
                           f"    return {name}"]
            return f"({name} if {name} is not _MISS else g{name}())"
        if depth > _DEPTH:                              # bound the nesting of one expression: a local def
            name = self.fresh("d")
            scope.defs += [f"def {name}():", f"    return {self.node(e, scope, 0)}"]
            return f"{name}()"
        return self.node(e, scope, depth)

    def atom(self, e, scope: _Scope) -> str:
        if e is sp.true or e is sp.S.true:
            return "True"
        if e is sp.false or e is sp.S.false:
            return "False"
        if isinstance(e, sp.Integer):
            return f"({int(e)})"
        if isinstance(e, sp.Rational):
            return self.const(Fraction(int(e.p), int(e.q)))
        if isinstance(e, sp.Symbol):
            if e in scope.indices:
                return scope.indices[e]
            if e not in self.vars:
                self.vars[e] = f"v{len(self.vars)}"
            return self.vars[e]
        raise TypeError(f"cannot evaluate {type(e).__name__} exactly: {e}")

    def quotient(self, e: sp.Mul, scope: _Scope, depth: int):
        """``(numerator, denominator)`` sources of a product (``None`` for a denominator of 1): integer and
        rational coefficients and negative integer powers go below the line."""
        num, den = [], []
        for a in e.args:
            if isinstance(a, sp.Rational) and not isinstance(a, sp.Integer):
                if int(a.p) != 1:
                    num.append(f"({int(a.p)})")
                den.append(f"({int(a.q)})")
            elif isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0:
                k, b = -int(a.exp), self.src(a.base, scope, depth + 1)
                den.append(b if k == 1 else f"({b} ** {k})")
            else:
                num.append(self.src(a, scope, depth + 1))
        top = "(" + " * ".join(num) + ")" if num else "1"
        return top, ("(" + " * ".join(den) + ")" if den else None)

    def node(self, e: sp.Basic, scope: _Scope, depth: int) -> str:
        def arg(x):
            return self.src(x, scope, depth + 1)

        def args(xs):
            return ", ".join(arg(x) for x in xs)

        if isinstance(e, sp.Add):
            return "(" + " + ".join(arg(a) for a in e.args) + ")"
        if isinstance(e, sp.Mul):
            top, den = self.quotient(e, scope, depth)
            return top if den is None else f"_div({top}, {den})"
        if isinstance(e, sp.Pow):
            if not e.exp.is_Integer:
                raise TypeError(f"non-integer power in a count: {e}")
            k = int(e.exp)
            return f"({arg(e.base)} ** {k})" if k >= 0 else f"_div(1, ({arg(e.base)} ** {-k}))"
        if isinstance(e, (sp.ceiling, sp.floor)):
            x = e.args[0]
            if isinstance(x, sp.Mul):                   # a quotient: floor division, no Fraction built
                top, den = self.quotient(x, scope, depth)
                if den is not None:
                    return f"({top} // {den})" if isinstance(e, sp.floor) else f"(-((-{top}) // {den}))"
            return f"{'_floor' if isinstance(e, sp.floor) else '_ceil'}({arg(x)})"
        if _own_closed_form(e):
            return arg(e.closed_form())
        if isinstance(e, FloorSum):                     # the number its closed form gives, in O(log) steps
            return f"_lattice({args(e.args)}, {self.const(e, 'e')})"
        if isinstance(e, sp.Function) and callable(getattr(type(e), "exact_value", None)):
            # a node that evaluates itself exactly from its arguments' values (gemm_l2's wave sum, the LRU
            # count of gemm.l2.lru, FlashAttention-3's tile): ints in, an int out
            where = self.const(e, "e")
            ints = ", ".join(f"_int({arg(x)}, {where})" for x in e.args)
            return f"{self.const(type(e).exact_value, 'f')}({ints})"
        if isinstance(e, gcd):
            where = self.const(e, "e")
            return f"_gcd(_int({arg(e.args[0])}, {where}), _int({arg(e.args[1])}, {where}))"
        if isinstance(e, sp.Mod):                       # Python's % and SymPy's Mod share the divisor's sign
            return f"({arg(e.args[0])} % {arg(e.args[1])})"
        if isinstance(e, sp.Abs):
            return f"abs({arg(e.args[0])})"
        if isinstance(e, (sp.Min, sp.Max)):
            return f"{'min' if isinstance(e, sp.Min) else 'max'}({args(e.args)})"
        if isinstance(e, sp.Piecewise):                 # a conditional expression: untaken pieces never run
            out = f"_nopiece({self.const(e, 'e')}, env)"
            for ex, c in reversed(e.args):
                out = arg(ex) if c is sp.true else f"({arg(ex)} if {arg(c)} else {out})"
            return out
        if isinstance(e, sp.core.relational.Relational):
            return f"({arg(e.lhs)} {_OPS[type(e)]} {arg(e.rhs)})"
        if isinstance(e, (sp.And, sp.Or)):
            joined = (" and " if isinstance(e, sp.And) else " or ").join(arg(a) for a in e.args)
            return f"bool({joined})"
        if isinstance(e, sp.Not):
            return f"(not {arg(e.args[0])})"
        if isinstance(e, sp.Sum) and affine_floor_sum(e) is not None:
            slope, offset = affine_floor_sum(e)
            _, lo, hi = e.limits[0]
            return f"_affine_sum({args((lo, hi, slope, offset))})"
        if isinstance(e, sp.Sum):
            return self.loop(e, scope)
        raise TypeError(f"cannot evaluate {type(e).__name__} exactly: {e}")

    def loop(self, e: sp.Sum, scope: _Scope) -> str:
        """A ``Sum`` that is no floor sum: a local def looping over its indices, the body a scope of its own
        (a repeated node that may depend on the index is evaluated afresh at each index).
        ``Sum(f, (j, 1, J_i), (i, 1, T))``: the last limit is the outermost, and an inner limit may use an
        outer index, so the loops nest from the last limit in; SymPy's limits are inclusive."""
        name = self.fresh("s")
        indices = dict(scope.indices)
        header = []
        for level, (var, lo, hi) in enumerate(reversed(e.limits)):
            limits_scope = _Scope(self, None, indices)        # limits written out, in the outer indices
            lo_s, hi_s = self.src(lo, limits_scope, 1), self.src(hi, limits_scope, 1)
            if limits_scope.defs:
                raise TypeError(f"a sum's limits too deep to evaluate exactly: {e}")
            indices[var] = self.fresh("i")
            header.append("    " * level + f"    for {indices[var]} in range({lo_s}, ({hi_s}) + 1):")
        inner = _Scope(self, e.function, indices)
        body = self.src(e.function, inner, 0)
        pad = "    " * (len(e.limits) + 1)
        loop_body = [f"{m} = _MISS" for m in inner.slots] + inner.lines + [f"t += {body}"]
        scope.defs += ([f"def {name}():", "    t = 0"] + ["    " + d for d in inner.defs] + header
                       + [pad + line for line in loop_body] + ["    return t"])
        return f"{name}()"


def _compile(e: sp.Basic) -> Callable[[dict], object]:
    """``e`` compiled into ``f(env)`` over ``{Symbol: int or Fraction}``: Python source generated for the whole
    tree (:class:`_Source`), so one evaluation is one call, not one per node.  A subexpression that occurs more
    than once (FlashAttention-3's tile node in every term of the window model's sums, a block count in each
    line of a listing) is evaluated once per call: a local when every evaluation reaches it, else a slot its
    first use fills; inside a loop ``Sum``, once per index.  A quotient is a floor division under ``floor`` and
    ``ceiling``, else an int where it divides and a Fraction where it does not."""
    return _Source(e).function()


def _div(a, b):
    """``a / b`` exactly: an int where ``b`` divides ``a``, else a Fraction (ints, Fractions; NumPy object
    arrays of them elementwise)."""
    if type(a) is int and type(b) is int:
        q, r = divmod(a, b)
        return q if r == 0 else Fraction(a, b)
    if isinstance(a, int) and isinstance(b, int):       # a bool (a relation's value) too: never a float
        return Fraction(a, b)
    return a / b


def _lattice(n, a, c, b, e):
    """``FloorSum(n, a, c, b)``: the number its closed form (``FloorSum.closed_form``) gives, by the Euclid-like
    reduction in O(log) steps, without building and compiling that closed form per model."""
    n, a, c, b = (_int(x, e) for x in (n, a, c, b))
    if b < 1:
        raise ValueError(f"{e}: the divisor b of FloorSum(n, a, c, b) must be >= 1, got {b}")
    return floor_sum(n, b, a, c)


def _affine_sum(lo, hi, s, o):
    """``Σ_{i=lo}^{hi} ⌊s i + o⌋`` by :func:`~symbolic.floorsum.floor_sum`: O(log) steps at any size."""
    n = hi - lo + 1
    if n <= 0:
        return 0
    s = Fraction(s)
    o = Fraction(o) + s * lo               # i = lo + k, k = 0 .. n-1
    m = s.denominator * o.denominator // math.gcd(s.denominator, o.denominator)
    return floor_sum(int(n), m, s.numerator * (m // s.denominator), o.numerator * (m // o.denominator))


def _nopiece(e, env):
    raise ValueError(f"no piece of {e} applies at {dict(env)}")


def _int(v, where) -> int:
    if isinstance(v, Fraction):
        if v.denominator != 1:
            raise ValueError(f"{where}: an integer argument expected, got {v}")
        return v.numerator
    return int(v)


def affine_floor_sum(e: sp.Sum):
    """``(slope, offset)`` when ``e`` is ``Sum(floor(slope*i + offset), (i, lo, hi))`` with ``slope`` and
    ``offset`` free of ``i`` (and of floors, ceilings, ``Min``, ``Max``, ``Piecewise`` and sums); else ``None``.

    The one test of a floor sum's shape: what this module evaluates in O(log) steps
    (:func:`symbolic.floorsum.floor_sum`) and :mod:`printing.javascript` prints as ``Q.affineFloorSum``; any
    other ``Sum`` is a loop here and not expressible there."""
    if len(e.limits) != 1 or not isinstance(e.function, sp.floor):
        return None
    var = e.limits[0][0]
    arg = sp.expand(e.function.args[0])
    slope = sp.diff(arg, var)
    if slope.has(var) or slope.has(sp.floor, sp.ceiling, sp.Min, sp.Max, sp.Piecewise, sp.Sum):
        return None
    offset = sp.expand(arg - slope * var)
    if offset.has(var):
        return None
    return slope, offset


def compile_exact(expr: sp.Expr, symbols=None) -> Callable[..., object]:
    """Compile ``expr`` once; the result takes keyword values (by symbol name) and returns an int or
    Fraction.  Integer inputs only: a float argument raises ``TypeError`` rather than rounding."""
    expr = sp.sympify(expr)
    f = _compile(expr)
    free = sorted(expr.free_symbols, key=lambda s: s.name) if symbols is None else list(symbols)
    by_name = {s.name: s for s in free}

    def run(**values):
        env = {}
        for name, s in by_name.items():
            if name not in values:
                raise ValueError(f"{name}: value missing")
            v = values[name]
            if type(v) is int:                        # the usual value, checked without the ABCs below
                env[s] = v
                continue
            if isinstance(v, (bool, float)) or not isinstance(v, (Integral, Fraction, sp.Integer, sp.Rational)):
                raise TypeError(f"{name}: exact value required, got {v!r}")
            env[s] = int(v) if isinstance(v, (Integral, sp.Integer)) else (
                Fraction(int(v.p), int(v.q)) if isinstance(v, sp.Rational) else v)
        return to_python_number(f(env))
    run.expr = expr
    run.names = tuple(by_name)
    return run


def compile_env(expr: sp.Expr) -> Callable[[dict], object]:
    """``expr`` compiled once into ``f(env)`` over an ``env`` of ``{Symbol: int or Fraction}``, with no
    argument checks: for a caller that validates a point once and then evaluates many expressions at it,
    or one expression at many values of a loop index (:meth:`symbolic.listings.Listing.count`).  The
    result is an int or a Fraction (:func:`to_python_number` makes an integral one an int).  ``env`` holds
    every symbol of ``expr`` (each is read once a call, a missing one is a ``KeyError``)."""
    return _compile(sp.sympify(expr))


def exact(expr: sp.Expr, **values):
    """One-shot exact evaluation (compiles every call; use :func:`compile_exact` in loops)."""
    return compile_exact(expr)(**values)
