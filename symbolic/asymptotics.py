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
from typing import Mapping, Sequence

import sympy as sp

__all__ = ["Regime", "deceil", "monomials", "dominated", "leading_term", "theta", "UNRESTRICTED"]


@dataclass(frozen=True)
class Regime:
    """Assumptions for asymptotics: ``le`` pairs ``(a, b)`` meaning ``a <= b`` (monomials, constants
    ignored) on top of every symbol ``>= 1``; ``subs`` applied first (to resolve ``Min``/``Max``)."""

    description: object = "all sizes at least 1"      # a str or a symbolic.notes.Note
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
    """Is ``target`` a non-negative combination of ``rows``?  Exact: phase I of the simplex method over
    :class:`~fractions.Fraction` (find ``lam >= 0`` with ``sum_i lam_i rows[i] = target``: one artificial
    variable per equation, minimise their sum; feasible iff the minimum is 0), with Bland's rule (the
    smallest eligible index enters and leaves), which cannot cycle (Bland, "New finite pivoting rules
    for the simplex method", Math. of Operations Research 2(2), 1977).  Polynomial per pivot, where
    trying every linearly independent subset of rows grows as their binomial count."""
    n, m = len(target), len(rows)
    if all(t == 0 for t in target):
        return True
    tab = []                                         # equation k: sum_i rows[i][k] lam_i + art_k = target[k]
    for k in range(n):
        sign = -1 if target[k] < 0 else 1            # right-hand sides >= 0: the artificials start feasible
        tab.append([Fraction(sign * rows[i][k]) for i in range(m)] + [Fraction(int(j == k)) for j in range(n)]
                   + [Fraction(sign * target[k])])
    basis = [m + k for k in range(n)]
    cols = m + n
    cost = [-sum(tab[k][j] for k in range(n)) for j in range(m)] + [Fraction(0)] * n   # reduced costs
    value = sum(tab[k][cols] for k in range(n))      # the artificials' sum
    while value > 0:
        enter = next((j for j in range(cols) if cost[j] < 0), None)
        if enter is None:
            return False                             # optimal with artificials left: infeasible
        leave = None
        for k in range(n):
            if tab[k][enter] > 0:
                ratio = tab[k][cols] / tab[k][enter]
                if leave is None or ratio < leave[0] or (ratio == leave[0] and basis[k] < basis[leave[1]]):
                    leave = (ratio, k)
        r = leave[1]                                 # bounded: the sum of artificials is at least 0
        piv = tab[r][enter]
        tab[r] = [x / piv for x in tab[r]]
        for k in range(n):
            if k != r and tab[k][enter] != 0:
                f = tab[k][enter]
                tab[k] = [x - f * y for x, y in zip(tab[k], tab[r])]
        f = cost[enter]
        cost = [c - f * y for c, y in zip(cost, tab[r])]
        value += f * tab[r][cols]                   # w = value + sum of cost_j x_j over the non-basic j
        basis[r] = enter
    return True


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
