"""Leading terms and Θ classes, computed rather than typed in.

Method (Θ analysis over a *regime*: a cone of admissible sizes):

1. ``ceiling(x)``/``floor(x)`` -> ``x`` (they differ by < 1, a lower-order change); finite sums are
   evaluated in closed form; the regime's substitutions resolve ``Min``/``Max`` that the regime
   decides (e.g. the paper's ``B_r = min(B_c, d)`` when ``M <= 4 d^2``).
2. The result is expanded into monomials ``c * x1^e1 * x2^e2 ...`` of positive symbols.
3. Monomial ``t`` is *dominated* by ``u`` when ``t/u`` is bounded above on the regime.  In log space
   the regime is the cone ``{x >= 0, (a_k - b_k) . x <= 0}`` for each assumption ``a_k <= b_k``;
   ``t/u`` is bounded iff its exponent vector is a non-negative combination of the cone's rows
   (Farkas' lemma), checked exactly over rational subsets (Carathéodory).
4. Θ class = sum of the monomials no other monomial strictly dominates, constants dropped; the
   leading term keeps their constants.

E.g. FlashAttention (Algorithm 1 order, the paper's blocks) over ``d <= M <= N d`` gives the leading
term ``12 N^2 d^2 / M`` and ``Θ(N^2 d^2 / M)``, Theorem 2 of Dao et al. 2022.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import Mapping, Sequence

import sympy as sp

__all__ = ["Regime", "deceil", "monomials", "dominated", "leading_term", "theta", "UNRESTRICTED"]


@dataclass(frozen=True)
class Regime:
    """Assumptions for asymptotics: ``le`` pairs ``(a, b)`` meaning ``a <= b`` (monomials, constants
    ignored) on top of every symbol ``>= 1``; ``subs`` applied first (to resolve ``Min``/``Max``)."""

    description: str = "all sizes >= 1"
    le: tuple = ()
    subs: Mapping = field(default_factory=dict)


UNRESTRICTED = Regime()


def deceil(expr: sp.Expr) -> sp.Expr:
    """Drop ceilings/floors and evaluate finite sums symbolically."""
    expr = sp.sympify(expr)
    expr = expr.replace(lambda e: isinstance(e, (sp.ceiling, sp.floor)), lambda e: e.args[0])
    if expr.has(sp.Sum):
        expr = expr.doit()
        expr = expr.replace(lambda e: isinstance(e, (sp.ceiling, sp.floor)), lambda e: e.args[0])
    return expr


def monomials(expr: sp.Expr) -> dict[tuple, sp.Expr]:
    """``{exponent-key: coefficient}`` of the expanded expression; the key is a tuple of
    ``(symbol, exponent)`` pairs (sorted by name).  Raises ``ValueError`` on non-monomial pieces."""
    expr = sp.expand(expr)
    out: dict[tuple, sp.Expr] = {}
    for term in sp.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        powers = rest.as_powers_dict() if rest != 1 else {}
        key = []
        for base, exp in powers.items():
            if not (isinstance(base, sp.Symbol) and exp.is_Rational):
                raise ValueError(f"not a monomial in positive symbols: {term} (resolve {base} in the regime)")
            key.append((base, sp.Rational(exp)))
        k = tuple(sorted(key, key=lambda p: p[0].name))
        out[k] = out.get(k, 0) + coeff
    return {k: c for k, c in out.items() if c != 0}


def _vec(key, syms):
    d = dict(key)
    return [Fraction(int(sp.Rational(d.get(s, 0)).p), int(sp.Rational(d.get(s, 0)).q)) for s in syms]


def _solve_nonneg(rows: Sequence[Sequence[Fraction]], target: Sequence[Fraction]) -> bool:
    """Is ``target`` a non-negative combination of ``rows``?  Exact, by trying linearly independent
    subsets (sizes are tiny: a handful of symbols and assumptions), solved by Gaussian elimination
    over :class:`~fractions.Fraction`."""
    n = len(target)
    if all(t == 0 for t in target):
        return True
    for r in range(1, min(n, len(rows)) + 1):
        for subset in combinations(range(len(rows)), r):
            lam = _solve_exact([[rows[i][k] for i in subset] for k in range(n)], list(target))
            if lam is not None and all(x >= 0 for x in lam):
                return True
    return False


def _solve_exact(A: list, b: list):
    """The unique solution of ``A x = b`` (``A`` is n x r with full column rank r), or ``None`` when
    the columns are dependent or the system is inconsistent."""
    n, r = len(A), len(A[0])
    M = [list(map(Fraction, row)) + [Fraction(v)] for row, v in zip(A, b)]
    pivot_row = 0
    for col in range(r):
        p = next((i for i in range(pivot_row, n) if M[i][col] != 0), None)
        if p is None:
            return None                                  # dependent columns
        M[pivot_row], M[p] = M[p], M[pivot_row]
        piv = M[pivot_row][col]
        M[pivot_row] = [x / piv for x in M[pivot_row]]
        for i in range(n):
            if i != pivot_row and M[i][col] != 0:
                f = M[i][col]
                M[i] = [x - f * y for x, y in zip(M[i], M[pivot_row])]
        pivot_row += 1
    if any(M[i][r] != 0 for i in range(pivot_row, n)):
        return None                                      # inconsistent
    return [M[i][r] for i in range(r)]


def dominated(t: tuple, u: tuple, syms: Sequence[sp.Symbol], regime: Regime) -> bool:
    """``t/u`` bounded above on the regime (constants ignored)."""
    rows = []
    for s in syms:  # s >= 1  <=>  (0 - e_s) . x <= 0  -> generator: -e_s  (ratio 1/s is bounded)
        rows.append([Fraction(-1) if s2 == s else Fraction(0) for s2 in syms])
    for a, b in regime.le:
        ka, kb = _key(a), _key(b)
        va, vb = _vec(ka, syms), _vec(kb, syms)
        rows.append([x - y for x, y in zip(va, vb)])
    v = [x - y for x, y in zip(_vec(t, syms), _vec(u, syms))]
    return _solve_nonneg(rows, v)


def _key(expr) -> tuple:
    m = monomials(expr)
    if len(m) != 1:
        raise ValueError(f"regime bounds must be monomials: {expr}")
    return next(iter(m))


_ANALYSED: dict = {}


def _analyse(expr: sp.Expr, regime: Regime):
    """(monomials, undominated keys) of ``expr`` over ``regime``; memoised, since the leading term and
    the Θ class of one quantity share the analysis."""
    key = (sp.sympify(expr), regime.le, tuple(sorted(dict(regime.subs).items(), key=str)))
    hit = _ANALYSED.get(key)
    if hit is None:
        hit = _ANALYSED[key] = _analyse_uncached(expr, regime)
    return hit


def _analyse_uncached(expr: sp.Expr, regime: Regime):
    e = deceil(sp.sympify(expr).subs(dict(regime.subs)))
    mons = monomials(e)
    syms = sorted({s for k in mons for s, _ in k} | {s for a, b in regime.le for s in (sp.sympify(a) * sp.sympify(b)).free_symbols},
                  key=lambda s: s.name)
    keep = []
    for t in mons:
        strictly = any(u != t and dominated(t, u, syms, regime) and not dominated(u, t, syms, regime) for u in mons)
        if not strictly:
            keep.append(t)
    return mons, keep


def _mono(key) -> sp.Expr:
    return sp.Mul(*[s ** e for s, e in key])


def leading_term(expr: sp.Expr, regime: Regime = UNRESTRICTED) -> sp.Expr:
    """Sum of the undominated monomials with their constants (``12 N^2 d^2/M`` for fa1)."""
    mons, keep = _analyse(expr, regime)
    return sp.Add(*[mons[k] * _mono(k) for k in keep])


def theta(expr: sp.Expr, regime: Regime = UNRESTRICTED) -> sp.Expr:
    """The Θ class as an expression without constants (``N**2*d**2/M``); wrap in ``Theta`` to print."""
    mons, keep = _analyse(expr, regime)
    return sp.Add(*[_mono(k) for k in keep])
