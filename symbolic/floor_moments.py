"""Moments of floors of a linear function - sum q, sum i q, sum q**2 - exact in O(log) steps (Python ints).

``floor_sums(n, a, b, c)`` returns ``(f, g, h)`` with, over ``i = 0 .. n - 1`` and ``q_i = floor((a i + b) / c)``::

    f = sum q_i,    g = sum i q_i,    h = sum q_i**2

by the Euclid-like reduction of the lattice points under a line (Graham, Knuth and Patashnik, *Concrete
Mathematics*, 2nd ed., §3.5, the sum ``sum floor((m k + x) / n)`` and its reciprocity law): first
``a, b`` are reduced modulo ``c`` (which adds polynomial sums in ``n``), then, with ``a, b < c``, the
points are counted by columns instead of rows, which swaps ``a`` and ``c``; the steps follow
Euclid's algorithm on ``(a, c)``, so there are O(log min(a, c)) of them.  
``floor_prefix_sums`` adds up ``S(y) = sum_{t < y} floor(t / P)`` along an arithmetic progression
``y = A i + B``: what the closed form of the GEMM wave sum (:mod:`symbolic.models.gemm_l2`) needs, a
double sum of floors whose inner sum is ``S(y + G) - S(y)``.  (The plain ``f`` is also
:func:`symbolic.floorsum.floor_sum`; the second moments ``g`` and ``h`` are what this module adds.)
"""

from __future__ import annotations

__all__ = ["floor_sums", "floor_prefix", "floor_prefix_sums"]


def floor_sums(n: int, a: int, b: int, c: int) -> tuple[int, int, int]:
    """``(sum q_i, sum i q_i, sum q_i**2)`` over ``i = 0 .. n - 1`` with ``q_i = floor((a i + b) / c)``."""
    if c < 1:
        raise ValueError(f"c must be >= 1, got {c}")
    if n <= 0:
        return 0, 0, 0
    return _sums(n - 1, a, b, c)


def _poly(n: int) -> tuple[int, int, int]:
    """``(n + 1, sum_{i<=n} i, sum_{i<=n} i**2)``."""
    return n + 1, n * (n + 1) // 2, n * (n + 1) * (2 * n + 1) // 6


def _sums(n: int, a: int, b: int, c: int) -> tuple[int, int, int]:
    """The three sums over ``i = 0 .. n`` (inclusive), iteratively on Euclid's steps."""
    # Each frame reduces (a, b) mod c, records the polynomial part, then swaps a and c; the inner
    # result is combined on the way back.  Written with an explicit stack (no recursion limit).
    stack = []
    while True:
        A, a = divmod(a, c)
        B, b = divmod(b, c)
        m = (a * n + b) // c if a else 0
        stack.append((n, A, B, m))
        if a == 0 or m == 0:
            f = g = h = 0
            break
        n, a, b, c = m - 1, c, c - b - 1, a
    for depth in range(len(stack) - 1, -1, -1):
        n_, A, B, m = stack[depth]
        if depth < len(stack) - 1 or m:   # undo the swap: points counted by columns
            if m:
                f, g, h = (n_ * m - f,
                           (m * n_ * (n_ + 1) - h - f) // 2,
                           n_ * m * (m + 1) - 2 * g - 2 * f - (n_ * m - f))
        # undo the reduction a -> a mod c, b -> b mod c
        s0, s1, s2 = _poly(n_)
        f, g, h = (f + A * s1 + B * s0,
                   g + A * s2 + B * s1,
                   h + A * A * s2 + B * B * s0 + 2 * A * B * s1 + 2 * B * f + 2 * A * g)
    return f, g, h


def floor_prefix(y: int, P: int) -> int:
    """``S(y) = sum_{t=0}^{y-1} floor(t / P) = q y - P q (q + 1) / 2`` with ``q = floor(y / P)`` (``y >= 0``)."""
    q = y // P
    return q * y - P * q * (q + 1) // 2


def floor_prefix_sums(n: int, A: int, B: int, P: int) -> int:
    """``sum_{i=0}^{n-1} S(A i + B)`` (:func:`floor_prefix`; ``A i + B >= 0``): with ``q_i = floor((A i + B) / P)``,
    ``S = q_i (A i + B) - P (q_i**2 + q_i) / 2``, so the sum is ``A g + B f - P (h + f) / 2``."""
    f, g, h = floor_sums(n, A, B, P)
    return A * g + B * f - P * (h + f) // 2
