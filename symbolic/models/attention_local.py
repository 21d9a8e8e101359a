r"""Local attention cost formulas: sliding windows and chunked attention, forward and backward, and FlashAttention-3
at the tiles it ships.

**Conventions** (``docs/conventions.md`` §1, the causal models' own): query row ``r`` sits at position
``p = N_k - N + r`` (``D = N_k - N`` may be negative: rows at ``p < 0`` see only what their window reaches).

* window ``(W_l, W_r)``: key ``j`` is visible from ``p`` iff ``p - W_l <= j <= p + W_r`` (FlashAttention's
  ``window_size``; ``W = W_l + W_r + 1`` keys; ``W_r = 0`` is the causal sliding window);
* chunk ``C``: key ``j`` is visible from ``p`` iff ``floor(j/C) = floor(p/C)`` and ``j <= p`` (Llama 4).

A block pair is *visited* iff one of its elements is visible; a fully masked pair costs nothing; everything
else is counted as ``attention.fa2.fwd.causal`` and ``attention.flash.bwd.causal`` count (FlashAttention-2,
Dao 2023, arXiv 2307.08691, Algorithms 1 and 2): ``Q_i`` once per query block that visits a key block,
``K_c, V_c`` per visited pair, ``O_i``, ``L_i`` for every query block (zeros and ``-inf`` for one that sees
nothing, as FlashAttention-3 writes them); backward: ``D``'s pre-pass ``2 N d`` + ``N``, ``dQ``'s
initialisation ``N d``, ``K_c, V_c`` per key block some row sees, ``(3 d + 2)`` per row of every visited pair
and ``d`` back for ``dQ_i``, ``dK_c, dV_c`` for every key block.  ``flops`` counts the products over the
visited blocks (``4 d`` per score forward, ``10 d`` backward), ``flops_visible`` over the visible elements,
``blocks`` the visited pairs.

**Derivation.**  Query block ``i`` (rows ``i B_r .. e_i``) sees the keys from its first row's first visible
key to its last row's last one: the visible keys of a position are an interval whose ends never decrease
with the position, and consecutive intervals overlap or touch.  With ``T_r = ceil(N/B_r)``,
``T_c = ceil(N_k/B_c)``, for a full block (``e_i = (i + 1) B_r - 1``):

* window: ``hi_i = min(T_c - 1, floor((B_r i + D + W_r + B_r - 1)/B_c))``,
  ``lo_i = max(0, floor((B_r i + D - W_l)/B_c))``; it visits anything iff ``B_r i + D + W_r + B_r - 1 >= 0``;
* chunk: ``hi_i = floor((B_r i + D + B_r - 1)/B_c)``, ``lo_i = floor(C floor(max(0, B_r i + D)/C)/B_c)`` (the
  first key of the chunk of its first row that sees anything).

The sums over the blocks of ``hi_i``, ``lo_i`` and of the key rows loaded, ``min(N_k, (hi_i + 1) B_c) - lo_i
B_c``, split where ``min`` and ``max`` change sides (the indices are ceilings: the floors are monotone), and each
piece is a floor sum ``sum_t floor((a t + c)/b)`` - lattice points under a line, :class:`~symbolic.floorsum.FloorSum`
(a window is a band) - or, for the chunk's ``floor(C floor(x/C)/B_c)``, a floor of a floor
(:class:`NestedFloorSum`, summed in O(B log) steps by grouping the chunks by residue: a chunk is block-
diagonal).  The last query block (partial, and always visiting: its last row sees itself) is added alone.
The backward pass is the same sweep over key blocks, with rows and keys exchanged (``D -> -D``,
``W_l <-> W_r``; the chunk's key block meets the rows up to the end of its last key's chunk).  The visible
elements are a band (window: two sums of clamped lines) or ``sum_p (p mod C + 1)`` (chunk).

Every quantity evaluates exactly at any size in bounded time; the executor :mod:`numeric.attention_local` counts
the same numbers by running the loops, and ``verify/checks/attention_local.py`` checks they agree.

**FlashAttention-3** (``attention.fa3.fwd``, ``.causal``, ``.window``): the forward counts at the tiles
``tile_size_fwd_sm90`` returns (Dao-AILab/flash-attention @ ``0251105``, ``hopper/tile_size.h`` lines 10-54)
for head dimensions ``d`` and ``d_v`` (``V``, ``O``; ``d`` unless given: DeepSeek-V3's 192/128 takes line 37),
element size ``e`` bytes, its causal/local flags as ``mha_fwd`` sets
them (``hopper/flash_api.cpp`` lines 796-805, 146-149), TMA loads, no softcap (``tile_size_fwd_sm90`` is called
so at ``hopper/flash_api.cpp`` line 418).  FA3's forward is FlashAttention-2's loop order (one CTA per query
block, ``hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp``), and its key-block ranges equal the visited set exactly
(``docs/attention-variants.md``), so its counts are these models' counts at its tiles.
"""

from __future__ import annotations

from functools import lru_cache, partial
from math import gcd as _gcd

import sympy as sp

from base.errors import BadInput

from ..asymptotics import Regime, leading_term
from ..floorsum import FloorSum, floor_sum
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..registry import ModelRef
from ..shown_as import ShownAs
from .attention import FA2_SOURCE, B_c, B_r, N, N_k, d, d_v, flash_counts

__all__ = ["W_l", "W_r", "C", "e", "NestedFloorSum", "ShownSum", "nested_floor_sum", "MAX_RESIDUES",
           "window_counts", "chunk_counts", "divisible_window", "divisible_chunk", "fa3_tiles", "FA3Tile", "fa3_window_flags", "fa3_flags", "fa3_tile_nodes", "FA3_SOURCE",
           "fa2_fwd_window", "flash_bwd_window", "fa2_fwd_chunked", "flash_bwd_chunked",
           "fa3_fwd", "fa3_fwd_causal", "fa3_fwd_window", "LOCAL_MODELS"]

# ------------------------------------------------------------------------------------- parameters
W_l = param("W_l", "keys a query sees to its left (the window's left size; 0 is legal)", latex="W_l", least=0)
W_r = param("W_r", "keys a query sees to its right (0: the causal sliding window)", latex="W_r", least=0)
C = param("C", "chunk length: a query sees the keys of its own chunk up to itself", latex="C")
e = param("e", "bytes per element of Q, K, V: 2 (FP16/BF16) or 1 (FP8 E4M3), for FA3's tile table")

FA3_SOURCE = "Shah et al. 2024, FlashAttention-3, arXiv 2407.08608; Dao-AILab/flash-attention @ 0251105"

_t = sp.Dummy("t", integer=True, nonnegative=True)

# ------------------------------------------------------------------------------------- a floor of a floor
#: the most residue classes one :func:`nested_floor_sum` walks (each costs a floor sum, O(log) steps);
#: the count is ``min(a', b' - a')`` for the reduced slope ``a'/b'`` of the outer floor, at most half the
#: block size (a chunk a multiple of the block needs none)
MAX_RESIDUES = 1 << 12


def nested_floor_sum(n: int, a: int, c: int, g: int, alpha: int, delta: int, b: int) -> int:
    r"""``sum_{t=0}^{n-1} floor((alpha y_t + delta)/b)`` with ``y_t = floor((a t + c)/g)`` (``a, c >= 0``,
    ``g, b >= 1``, ``alpha >= 0``, any ``delta``), exactly, in O(min(alpha', b' - alpha') log) steps.

    With ``h(y) = floor((alpha y + delta)/b)``: first ``delta`` and ``alpha`` are reduced modulo ``b``
    (``h = q_0 + q_1 y + h'``), then by ``gcd(alpha, b)``, and a slope above one half is complemented
    (``floor((a y + s)/b) = y - floor(((b - a) y + b - 1 - s)/b)``).  Then, summing by parts over the values
    ``y`` of ``y_t`` (``T(y) = #{t : y_t < y} = ceil((g y - c)/a)`` between the first and the last),

        sum_t h(y_t) = n h(y_last) - sum_{y_first < y <= y_last} T(y) (h(y) - h(y - 1)),

    and ``h`` steps by one exactly at ``y_s = ceil((s b - delta)/alpha)``, ``h(y_first) < s <= h(y_last)``.
    ``y_{s + alpha w} = y_s + b w``, so for each residue of ``s`` modulo ``alpha`` the terms ``T(y_s + b w)``
    are a floor sum in ``w`` (:func:`~symbolic.floorsum.floor_sum`).  More than :data:`MAX_RESIDUES` residues
    are refused (:class:`BadInput` naming ``C``: the chunk against the block it is summed over)."""
    if n <= 0:
        return 0
    q0, delta = divmod(delta, b)
    q1, alpha = divmod(alpha, b)
    total = n * q0
    sum_y = floor_sum(n, g, a, c)
    total += q1 * sum_y
    if alpha == 0:
        return total
    G = _gcd(alpha, b)
    alpha, delta, b = alpha // G, delta // G, b // G
    sign = 1
    if 2 * alpha > b:                                   # complement: sum h = sum y - sum h~
        total += sum_y
        alpha, delta, sign = b - alpha, b - 1 - delta, -1
    if alpha > MAX_RESIDUES:
        raise BadInput("C", f"the chunk's floor of a floor needs {alpha:,} residue classes, beyond the budget of "
                            f"{MAX_RESIDUES:,}; take C a multiple of the block (or nearly so)")

    def h(y):
        return (alpha * y + delta) // b
    y_first, y_last = c // g, (a * (n - 1) + c) // g
    s_first, s_last = h(y_first) + 1, h(y_last)
    by_parts = 0
    for sigma in range(alpha):
        s = s_first + sigma
        if s > s_last:
            break
        count = (s_last - s) // alpha + 1
        y_s = -((delta - s * b) // alpha)               # ceil((s b - delta) / alpha)
        # T(y_s + b w) = ceil((g y_s + g b w - c) / a) = floor((g b w + g y_s - c + a - 1) / a)
        by_parts += floor_sum(count, a, g * b, g * y_s - c + a - 1)
    return total + sign * (n * h(y_last) - by_parts)


class NestedFloorSum(ShownAs, sp.Function):
    r"""``NestedFloorSum(n, a, c, g, alpha, delta, b)`` = ``sum_{t=0}^{n-1} floor((alpha floor((a t + c)/g) + delta)/b)``.

    Printed as that sum; evaluated exactly by :func:`nested_floor_sum` (``exact_value``, which
    :mod:`symbolic.evaluate` calls with the arguments' integer values)."""

    nargs = 7
    is_integer = True

    @classmethod
    def eval(cls, *args):
        if all(x.is_Integer for x in args) and int(args[3]) >= 1 and int(args[6]) >= 1:
            return sp.Integer(nested_floor_sum(*(int(x) for x in args)))
        if args[0].is_Integer and int(args[0]) <= 0:
            return sp.Integer(0)
        return None

    @staticmethod
    def exact_value(n, a, c, g, alpha, delta, b) -> int:
        return nested_floor_sum(n, a, c, g, alpha, delta, b)

    def _display(self) -> sp.Sum:
        n, a, c, g, alpha, delta, b = self.args
        t = sp.Symbol("t", integer=True, nonnegative=True)
        return sp.Sum(sp.floor((alpha * sp.floor((a * t + c) / g) + delta) / b), (t, 0, n - 1))


# ------------------------------------------------------------------------------------- monotone block bounds
class _Linear:
    """``f(t) = floor((a t + c)/b)``, nondecreasing in ``t`` (``a, b >= 1``)."""

    def __init__(self, a, c, b):
        self.a, self.c, self.b = a, c, b

    def at(self, t):
        return sp.floor((self.a * t + self.c) / self.b)

    def first_at_least(self, y):
        """The least integer ``t`` with ``f(t) >= y``: ``a t + c >= y b``."""
        return sp.ceiling((y * self.b - self.c) / self.a)

    def sum(self, s, stop):
        """``sum_{t=s}^{stop-1} f(t)``, for ranges where ``a t + c >= 0``."""
        return FloorSum(stop - s, self.a, self.a * s + self.c, self.b)


class _Nested:
    """``f(t) = floor((alpha floor((a t + c)/g) + delta)/b)``, nondecreasing in ``t``."""

    def __init__(self, a, c, g, alpha, delta, b):
        self.a, self.c, self.g, self.alpha, self.delta, self.b = a, c, g, alpha, delta, b

    def at(self, t):
        return sp.floor((self.alpha * sp.floor((self.a * t + self.c) / self.g) + self.delta) / self.b)

    def first_at_least(self, y):
        """``f(t) >= y`` iff ``floor((a t + c)/g) >= ceil((y b - delta)/alpha)`` iff ``a t + c >= g`` times that."""
        return sp.ceiling((self.g * sp.ceiling((y * self.b - self.delta) / self.alpha) - self.c) / self.a)

    def sum(self, s, stop):
        """``sum_{t=s}^{stop-1} f(t)``, for ranges where ``a t + c >= 0``."""
        return NestedFloorSum(stop - s, self.a, self.a * s + self.c, self.g, self.alpha, self.delta, self.b)


def _clip(x, lo, hi):
    return sp.Min(sp.Max(x, lo), hi)


def _sweep(n, b, n_c, b_c, hi, lo, lo_last):
    """The sums over the row blocks of one direction (rows ``n`` in blocks of ``b``, columns ``n_c`` in blocks
    of ``b_c``): ``(V, E, H, R)`` = visited pairs, column elements loaded (``sum min(n_c, (hi + 1) b_c) -
    lo b_c``), the same weighted by the block's rows, and the rows of the blocks that visit anything.

    Full blocks ``t < T - 1`` take ``hi_t = min(T_c - 1, hi(t))``, ``lo_t = max(0, lo(t))`` and visit iff
    ``hi(t) >= 0``; the last block (partial) always visits, up to the last column block, from ``lo_last``."""
    T, T_c = sp.ceiling(n / b), sp.ceiling(n_c / b_c)
    m = T - 1                                          # full blocks 0 .. m - 1
    s = _clip(hi.first_at_least(0), 0, m)              # the first that visits anything
    k = _clip(hi.first_at_least(T_c - 1), s, m)        # from k on hi_t is the last column block
    z = _clip(lo.first_at_least(0), s, m)              # before z, lo_t = 0
    below = hi.sum(s, k)
    sum_hi = below + (T_c - 1) * (m - k)
    sum_end = b_c * (below + (k - s)) + n_c * (m - k)  # sum min(n_c, (hi_t + 1) b_c)
    sum_lo = lo.sum(z, m)
    h_last = n - m * b
    e_full = sum_end - b_c * sum_lo
    e_last = n_c - b_c * lo_last
    V = sum_hi - sum_lo + (m - s) + (T_c - lo_last)
    return V, e_full + e_last, b * e_full + h_last * e_last, b * (m - s) + h_last


def _clamp_prefix(x, w):
    """``sum_{y <= x} clamp(y, 0, w)``."""
    y = sp.Min(sp.Max(x, 0), w)
    return y * (y + 1) / 2 + w * sp.Max(x - w, 0)


def _visible_window():
    """Visible pairs of the band: ``F(W_r) - F(-W_l - 1)``, ``F(k) = #{(p, j) : D <= p < N_k, 0 <= j < N_k,
    j <= p + k} = sum_p clamp(p + k + 1, 0, N_k)``."""
    D = N_k - N

    def F(k):
        return _clamp_prefix(N_k + k, N_k) - _clamp_prefix(D + k, N_k)
    return F(W_r) - F(-W_l - 1)


def _visible_chunk():
    """Visible pairs under the chunk mask: ``sum_{p = max(D, 0)}^{N_k - 1} (p mod C + 1)``."""
    def G(x):                                          # sum_{p < x} (p mod C + 1)
        q = sp.floor(x / C)
        r = x - C * q
        return q * C * (C + 1) / 2 + r * (r + 1) / 2
    return G(N_k) - G(sp.Max(N_k - N, 0))


class ShownSum(FloorSum):
    r"""``ShownSum(closed, shown)``: a count that evaluates by its closed form ``closed`` (floor sums, O(log)
    steps) and prints as ``shown``, the sum over the blocks it stands for (the loop's own definition, as
    :class:`~symbolic.floorsum.FloorSum` prints as its sum).  :mod:`symbolic.evaluate` compiles
    :meth:`closed_form`; the tests check ``shown``, summed term by term, against it."""

    nargs = 2

    @classmethod
    def eval(cls, closed, shown):
        return closed if closed.is_Integer else None

    def _eval_is_nonnegative(self):
        return None

    def closed_form(self) -> sp.Expr:
        return self.args[0]

    def as_sum(self, index=None) -> sp.Expr:
        return self.args[1]

    def _display(self) -> sp.Expr:
        return self.args[1]


def _per_block(n, b, n_c, b_c, hi, lo, index):
    """The definition the sweep sums: over the row blocks ``t = 0 .. T - 1`` (rows ``n`` in blocks of ``b``),
    with ``hi(t)``, ``lo(t)`` the last and first column block a block visits (``hi < 0``: none), the per-block
    terms of :func:`_sweep`'s ``(V, E, H, R)`` and a function summing a per-block term as a plain ``Sum``
    (``O(T)`` terms: what is printed, and what the tests add up term by term)."""
    t = index
    h = sp.Min(b, n - t * b)
    pairs = sp.Max(0, hi - lo + 1)
    cols = sp.Max(0, sp.Min(n_c, b_c * (hi + 1)) - b_c * lo)

    def over(f):
        return sp.Sum(f, (t, 0, sp.ceiling(n / b) - 1))
    return (pairs, cols, h * cols, h * sp.Min(1, sp.Max(0, hi + 1))), over     # it visits iff hi >= 0


def _quantities(kind, fwd, bwd, visible, shown, dv=d):
    """Reads, writes, FLOPs, FLOPs over visible elements and visited pairs from the forward sweep ``fwd``
    (over query blocks) or the backward one ``bwd`` (over key blocks); each prints as one sum over the blocks
    (``shown``: the per-block terms and their sum).  ``dv``: the width of ``V`` and ``O`` (forward only)."""
    V, E, H, R = fwd if kind == "fwd" else bwd
    (v, e_, h, r), over = shown
    if kind == "fwd":
        reads = (d * R + (d + dv) * E, over(d * r + (d + dv) * e_))
        writes = (N * dv + N, 0)
        flops = (2 * (d + dv) * H, over(2 * (d + dv) * h))
    else:
        reads = (2 * N * d + 2 * d * R + (3 * d + 2) * E, 2 * N * d + over(2 * d * r + (3 * d + 2) * e_))
        writes = (N + N * d + d * E + 2 * d * N_k, N + N * d + 2 * d * N_k + over(d * e_))
        flops = (10 * d * H, over(10 * d * h))
    const = N * dv + N if kind == "fwd" else 2 * N * d + N + N * d + 2 * d * N_k
    body = (d * r + (d + dv) * e_) if kind == "fwd" else (2 * d * r + (4 * d + 2) * e_)
    return {"reads": ShownSum(*reads),
            "writes": writes[0] if kind == "fwd" else ShownSum(*writes),
            "flops": ShownSum(*flops), "flops_visible": (2 * (d + dv) if kind == "fwd" else 10 * d) * visible,
            "blocks": ShownSum(V, over(v)),
            "total": ShownSum(reads[0] + writes[0], const + over(body))}


_I = sp.Symbol("i", integer=True, nonnegative=True)     # a query block (bound in the printed sums)
_J = sp.Symbol("j", integer=True, nonnegative=True)     # a key block


def window_counts(kind: str, dv=d) -> dict:
    """The window model's quantities (``kind`` "fwd" or "bwd") in closed form; ``dv`` the forward's value width."""
    D = N_k - N
    T_r, T_c = sp.ceiling(N / B_r), sp.ceiling(N_k / B_c)
    if kind == "fwd":
        m = T_r - 1
        sweep = _sweep(N, B_r, N_k, B_c, _Linear(B_r, D + W_r + B_r - 1, B_c), _Linear(B_r, D - W_l, B_c),
                       sp.Max(0, sp.floor((D + m * B_r - W_l) / B_c)))
        shown = _per_block(N, B_r, N_k, B_c, sp.Min(T_c - 1, sp.floor((D + sp.Min((_I + 1) * B_r, N) - 1 + W_r) / B_c)),
                           sp.Max(0, sp.floor((D + _I * B_r - W_l) / B_c)), _I)
        return _quantities(kind, sweep, None, _visible_window(), shown, dv)
    m = T_c - 1                                        # rows and keys exchanged: D -> -D, W_l <-> W_r
    sweep = _sweep(N_k, B_c, N, B_r, _Linear(B_c, -D + W_l + B_c - 1, B_r), _Linear(B_c, -D - W_r, B_r),
                   sp.Max(0, sp.floor((-D + m * B_c - W_r) / B_r)))
    shown = _per_block(N_k, B_c, N, B_r, sp.Min(T_r - 1, sp.floor((sp.Min((_J + 1) * B_c, N_k) - 1 + W_l - D) / B_r)),
                       sp.Max(0, sp.floor((_J * B_c - W_r - D) / B_r)), _J)
    return _quantities(kind, None, sweep, _visible_window(), shown)


def chunk_counts(kind: str) -> dict:
    """The chunked model's quantities (``kind`` "fwd" or "bwd") in closed form."""
    D = N_k - N
    T_r, T_c = sp.ceiling(N / B_r), sp.ceiling(N_k / B_c)
    if kind == "fwd":
        m = T_r - 1
        lo_last = sp.floor(C * sp.floor(sp.Max(0, D + m * B_r) / C) / B_c)
        sweep = _sweep(N, B_r, N_k, B_c, _Linear(B_r, D + B_r - 1, B_c), _Nested(B_r, D, C, C, 0, B_c), lo_last)
        shown = _per_block(N, B_r, N_k, B_c, sp.floor((D + sp.Min((_I + 1) * B_r, N) - 1) / B_c),
                           sp.floor(C * sp.floor(sp.Max(0, D + _I * B_r) / C) / B_c), _I)
        return _quantities(kind, sweep, None, _visible_chunk(), shown)
    # key block t (keys t B_c .. (t + 1) B_c - 1) meets the positions max(t B_c, D) .. C floor(f/C) + C - 1
    m = T_c - 1
    sweep = _sweep(N_k, B_c, N, B_r, _Nested(B_c, B_c - 1, C, C, C - 1 - D, B_r), _Linear(B_c, -D, B_r),
                   sp.Max(0, sp.floor((m * B_c - D) / B_r)))
    last_key = sp.Min((_J + 1) * B_c, N_k) - 1
    shown = _per_block(N_k, B_c, N, B_r, sp.Min(T_r - 1, sp.floor((C * sp.floor(last_key / C) + C - 1 - D) / B_r)),
                       sp.Max(0, sp.floor((_J * B_c - D) / B_r)), _J)
    return _quantities(kind, None, sweep, _visible_chunk(), shown)


# ------------------------------------------------------------------------------------- divisible forms
def divisible_window(kind: str, dv=d) -> dict:
    """The window counts when ``B_c = B_r = B`` divides ``N = N_k``, ``W_l`` and ``W_r``, and ``W_l, W_r <= N - B``.

    Query block ``i`` (of ``T = N/B``) visits key blocks ``max(0, i - a) .. min(T - 1, i + b)`` with
    ``a = W_l/B``, ``b = W_r/B``: ``V = T (a + b + 1) - a (a + 1)/2 - b (b + 1)/2`` pairs, each ``B x B``; the
    band holds ``N (W_l + W_r + 1) - W_l (W_l + 1)/2 - W_r (W_r + 1)/2`` visible elements."""
    B = B_r
    a, b = W_l / B, W_r / B
    V = (N / B) * (a + b + 1) - a * (a + 1) / 2 - b * (b + 1) / 2
    X = N * (W_l + W_r + 1) - W_l * (W_l + 1) / 2 - W_r * (W_r + 1) / 2
    return _divisible_quantities(kind, V, X, dv)


def divisible_chunk(kind: str) -> dict:
    """The chunked counts when ``B_c = B_r = B`` divides ``C`` and ``C`` divides ``N = N_k``: ``N/C`` chunks,
    each a causal triangle of ``c = C/B`` blocks, ``c (c + 1)/2`` pairs; ``C (C + 1)/2`` visible elements each."""
    c = C / B_r
    V = (N / C) * c * (c + 1) / 2
    X = N * (C + 1) / 2
    return _divisible_quantities(kind, V, X)


def _divisible_quantities(kind, V, X, dv=d):
    B = B_r
    if kind == "fwd":          # every query block visits (N_k = N): Q once, K and V B rows per pair
        return {"reads": N * d + (d + dv) * B * V, "writes": N * dv + N, "flops": 2 * (d + dv) * B**2 * V,
                "flops_visible": 2 * (d + dv) * X, "blocks": V}
    return {"reads": 2 * N * d + 2 * d * N + (3 * d + 2) * B * V, "writes": N + N * d + d * B * V + 2 * d * N,
            "flops": 10 * d * B**2 * V, "flops_visible": 10 * d * X, "blocks": V}


# ------------------------------------------------------------------------------------- models
_UNITS = {"flops_visible": "FLOP", "blocks": "block pairs"}
_QUANTITIES = ("reads", "writes", "flops", "flops_visible", "blocks")
_BLOCKS_EQUAL = sp.Eq(B_c, B_r, evaluate=False)
_N_EQ = sp.Eq(N, N_k, evaluate=False)
_WINDOW_REGIME = Regime(note(sp.Le(W_l, N), ", ", sp.Le(W_r, N), " (divisible form: ", _BLOCKS_EQUAL, " divides ",
                             _N_EQ, ", ", W_l, " and ", W_r, ")"),
                        le=((B_r, N), (W_l, N), (W_r, N)))
_CHUNK_REGIME = Regime(note(sp.Le(B_r, C), ", ", sp.Le(C, N), " (divisible form: ", _BLOCKS_EQUAL, " divides ", C,
                            ", ", C, " divides ", _N_EQ, ")"),
                       le=((B_r, C), (C, N)))

_POSITION = note("query row r sits at position ", N_k - N + symbol("r"), " (as in the causal models; ",
                 N_k < N, " is legal: rows before key 0 see only what their window reaches); a block pair is "
                 "visited iff one of its elements is visible, a fully masked pair costs nothing, a visited one is "
                 "loaded and computed whole")
_SEES_NOTHING = note("a query block that sees no key loads nothing and writes zeros to ", code("O_i"),
                     " and minus infinity to ", code("L_i"), "; a key block no row sees writes zeros to ",
                     code("dK_j"), " and ", code("dV_j"), " (FlashAttention-3: ", code("hopper/flash_fwd_kernel_sm90.h"), ":446-449, ",
                     code("hopper/flash_bwd_kernel_sm90.h"), ":262-272)")


def _asymptotic_notes(forms, regime):
    """The leading terms of ``flops`` and ``flops_visible`` over the regime (computed from the divisible forms,
    expanded into monomials, ``B_r`` in some denominators: ``simplify`` gave the same terms at three times the cost)."""
    f = leading_term(sp.expand(forms["flops"]), regime)
    fv = leading_term(sp.expand(forms["flops_visible"]), regime)
    return note("over the regime: ", code("flops"), " ~ ", f, ", ", code("flops_visible"), " ~ ", fv,
                ", against ", 4 * N * N_k * d, " for full attention forward")


def _local_model(name, summary, kind, mask):
    dv = d_v if (kind, mask) == ("fwd", "window") else d      # the forward window takes a value width
    q = window_counts(kind, dv) if mask == "window" else chunk_counts(kind)
    forms = divisible_window(kind, dv) if mask == "window" else divisible_chunk(kind)
    regime = _WINDOW_REGIME if mask == "window" else _CHUNK_REGIME
    mask_params = (W_l, W_r) if mask == "window" else (C,)
    defaults = {"N": 32768, "N_k": 32768, "d": 128, "B_r": 128, "B_c": 128,
                **({"W_l": 4095, "W_r": 0} if mask == "window" else {"C": 8192})}
    p, j = symbol("p"), symbol("j")
    rule = (note("window: key ", j, " is visible from position ", p, " iff ", p - W_l <= j, " and ", j <= p + W_r,
                 " (FlashAttention's ", code("window_size"), ": ", W_l + W_r + 1, " keys)")
            if mask == "window" else
            note("chunk: key ", j, " is visible from position ", p, " iff it lies in the same chunk of ", C,
                 " positions and ", j <= p, " (Llama 4's chunked attention; FlashAttention-3's ", code("attention_chunk"),
                 " with a causal mask)"))
    if dv is d_v:
        defaults["d_v"] = defaults["d"]
    return Model(
        name=name, summary=summary, quantities=q,
        params=(N, N_k, d) + ((d_v,) if dv is d_v else ()) + (B_r, B_c) + mask_params, units=_UNITS,
        divisible_forms=forms,
        divisible_note=(note(_BLOCKS_EQUAL, " divides ", _N_EQ, ", ", W_l, " and ", W_r, ", and ",
                             sp.Le(W_l, N - B_r), ", ", sp.Le(W_r, N - B_r)) if mask == "window"
                        else note(_BLOCKS_EQUAL, " divides ", C, ", and ", C, " divides ", _N_EQ)),
        regime=regime, asymptotics_from_divisible=True,
        defaults=defaults, default_from={"d_v": "d"} if dv is d_v else {},
        source=FA2_SOURCE + (", Algorithm 1" if kind == "fwd" else ", Algorithm 2") + " with a local mask",
        notes=(rule, _POSITION, _SEES_NOTHING, _asymptotic_notes(forms, regime)) + ((_DV,) if dv is d_v else ()),
    )


_DV = note(d_v, ": the width of ", code("V"), " and ", code("O"), " (", code("Q"), " and ", code("K"), " have ", d,
           "); ", sp.Eq(d_v, d), " unless given, where the counts are those without it")


_LOCAL = {
    ("fwd", "window"): ("attention.fa2.fwd.window",
                        note("FlashAttention forward, FlashAttention-2 order, sliding window (", W_l, ", ", W_r, ")")),
    ("bwd", "window"): ("attention.flash.bwd.window",
                        note("FlashAttention backward, sliding window (", W_l, ", ", W_r, ")")),
    ("fwd", "chunk"): ("attention.fa2.fwd.chunked", note("FlashAttention forward, FlashAttention-2 order, chunked (", C, ")")),
    ("bwd", "chunk"): ("attention.flash.bwd.chunked", note("FlashAttention backward, chunked attention (", C, ")")),
}


def _local_ref(kind, mask) -> ModelRef:
    name, summary = _LOCAL[(kind, mask)]
    return ModelRef(name, str(summary), partial(_local_model, name, summary, kind, mask))


fa2_fwd_window = _local_ref("fwd", "window")
flash_bwd_window = _local_ref("bwd", "window")
fa2_fwd_chunked = _local_ref("fwd", "chunk")
flash_bwd_chunked = _local_ref("bwd", "chunk")


# ------------------------------------------------------------------------------------- FlashAttention-3's tiles
def fa3_tiles(causal, local):
    """``(B_r, B_c, line)``: ``tile_size_fwd_sm90(d, d_v, causal, local, e)`` (hopper/tile_size.h:10-54, no V
    column-major, TMA loads, no softcap) as SymPy ``Piecewise`` in ``d``, ``d_v`` and ``e``, and the line of the
    ``return`` it takes.  ``causal``/``local`` are SymPy booleans (or Python ones).  ``mha_fwd`` passes the head
    dimensions rounded up (``hopper/flash_api.cpp``:563-564, 879: ``d_v`` by ``round_up_headdimv``, :511-518,
    when it differs from ``d``), so the rows test ``d_v`` through its rounding: rounded ``== 512`` iff ``d_v >
    256``, ``== 256`` iff ``192 < d_v <= 256``, ``<= 128`` iff ``d_v <= 128`` (with ``d_v = d`` the rounding of
    ``d`` gives the same answers)."""
    causal, local = sp.sympify(causal), sp.sympify(local)
    n128 = sp.Or(causal, local)
    two = [  # element_size == 2 (line 13): (condition, kBlockM, kBlockN, line)
        (sp.And(d <= 64, d_v > 256), 64, 64, 19),                                          # lines 18-19
        (sp.And(d <= 64, d_v > 192), 128, 96, 21),                                         # lines 20-21
        (d <= 64, 192, sp.Piecewise((128, n128), (192, True), evaluate=False), 25),        # lines 24-25
        (d <= 96, 192, sp.Piecewise((128, local), (144, True), evaluate=False), 30),       # line 30
        (d <= 128, 128, sp.Piecewise((128, n128), (176, True), evaluate=False), 33),       # lines 32-33
        (d <= 192, 128, sp.Piecewise((96, local), (128, d_v <= 128), (112, True), evaluate=False), 37),  # line 37
        (d <= 256, 128, sp.Piecewise((64, local), (80, True), evaluate=False), 39),        # line 39
    ]
    one = [  # FP8 (line 41)
        (d <= 64, 192, 160, 43), (d <= 96, 192, 128, 45), (d <= 128, 128, 224, 47), (d <= 192, 128, 160, 49),
        (d <= 256, 128, sp.Piecewise((64, local), (128, True), evaluate=False), 51),
    ]

    def table(col):
        rows = [(r[col], sp.And(sp.Eq(e, 2), r[0])) for r in two] + [(r[col], r[0]) for r in one]
        return sp.Piecewise(*rows, evaluate=False)        # the rows as the source has them, not merged
    return table(1), table(2), table(3)


def fa3_window_flags():
    """``(Is_causal, Is_local)`` of the kernel ``mha_fwd`` runs for a window ``(W_l, W_r)``, as SymPy booleans
    (hopper/flash_api.cpp:796-797, 148-149): a window at least as wide as the sequence becomes ``-1``; then
    ``(-1, -1)`` is full attention, ``(-1, 0)`` causal, anything else local."""
    full_left, full_right = W_l >= N_k - 1, W_r >= N - 1
    causal = sp.And(full_left, sp.Not(full_right), sp.Eq(W_r, 0))
    return causal, sp.Not(sp.Or(sp.And(full_left, full_right), causal))


#: the FA3 models' kernels: the flags (Is_causal, Is_local) as SymPy booleans, by variant
_VARIANTS = ("full", "causal", "window")


def fa3_flags(variant: str):
    """``(Is_causal, Is_local)`` for the variant: full ``(False, False)``; causal ``(N > 1, False)`` (one query row
    is not causal: hopper/flash_api.cpp:799-802); window :func:`fa3_window_flags`."""
    if variant == "full":
        return sp.false, sp.false
    if variant == "causal":
        return N > 1, sp.false
    return fa3_window_flags()


class FA3Tile(ShownAs, sp.Function):
    """``FA3Tile(column, d, d_v, e, variant, N, N_k, W_l, W_r)``: column 0 (kBlockM), 1 (kBlockN) or 2 (the source
    line) of :func:`fa3_tiles` for the kernel variant 0 (full), 1 (causal) or 2 (window), as one node inside the
    count formulas.  It prints as ``B_r``, ``B_c`` (the model's ``B_r``/``B_c`` quantities show the table) and
    evaluates exactly from the table (``exact_value``), so the floor sums around it keep their O(log) evaluation
    (a ``Piecewise`` inside a floor's slope would not), and its arguments stay plain symbols."""

    nargs = 9
    is_integer = True
    is_positive = True

    @staticmethod
    def exact_value(column, d_, dv_, e_, variant, n, n_k, w_l, w_r) -> int:
        causal, local = (f(N=n, N_k=n_k, W_l=w_l, W_r=w_r) for f in _compiled_flags(int(variant)))
        return _tile_value(int(column), int(d_), int(dv_), int(e_), bool(causal), bool(local))

    def _display(self):
        return sp.Symbol(("B_r", "B_c", "line")[int(self.args[0])], integer=True, positive=True)


def fa3_tile_nodes(variant: str) -> dict:
    """``{B_r: ..., B_c: ...}``: the :class:`FA3Tile` nodes the FA3 models (and their listings) put for the blocks."""
    k = _VARIANTS.index(variant)
    w = (W_l, W_r) if variant == "window" else (0, 0)
    return {B_r: FA3Tile(0, d, d_v, e, k, N, N_k, *w), B_c: FA3Tile(1, d, d_v, e, k, N, N_k, *w)}


@lru_cache(maxsize=None)
def _compiled_flags(variant: int):
    from ..evaluate import compile_exact
    return tuple(compile_exact(sp.sympify(f), (N, N_k, W_l, W_r)) for f in fa3_flags(_VARIANTS[variant]))


@lru_cache(maxsize=None)
def _tile_value(column, d_, dv_, e_, causal, local) -> int:
    if e_ not in (1, 2) or not 1 <= d_ <= 256:
        raise BadInput("e" if e_ not in (1, 2) else "d", "outside FA3's tile table (e in 1, 2; d up to 256)")
    return _compiled_table(column, causal, local)(d=d_, d_v=dv_, e=e_)


@lru_cache(maxsize=None)
def _compiled_table(column, causal, local):
    """Column ``column`` of :func:`fa3_tiles` at the flags, compiled once for exact evaluation in ``(d, d_v, e)``
    (twelve tables in all; a ``subs`` into the ``Piecewise`` per new point cost milliseconds)."""
    from ..evaluate import compile_exact
    return compile_exact(fa3_tiles(causal, local)[column], (d, d_v, e))


def _fa3_check(pt):
    if pt["e"] not in (1, 2):
        raise BadInput("e", f"FA3's tile table has 2-byte (FP16/BF16) and 1-byte (FP8) rows, got e={pt['e']}")
    if pt["d"] > 256:
        raise BadInput("d", f"FA3's forward supports head dimensions up to 256, got d={pt['d']}")
    d_, dv_ = pt["d"], pt["d_v"]
    if dv_ != d_ and not (128 < d_ <= 192 and 96 < dv_ <= 128 or d_ <= 64 and dv_ <= 512):
        raise BadInput("d_v", f"FA3 takes a V head dimension other than d only for 128 < d <= 192 with "
                              f"96 < d_v <= 128, or d <= 64 with d_v <= 512 (hopper/flash_api.cpp:782-786); "
                              f"got d={d_}, d_v={dv_}")
    if dv_ > 256 and pt["e"] != 2:
        raise BadInput("d_v", f"FA3 needs FP16/BF16 (e = 2) for d_v > 256 (hopper/flash_api.cpp:788-790), "
                              f"got e={pt['e']}")


def _fa3_causal_check(pt):
    _fa3_check(pt)
    if pt["N_k"] < pt["N"]:
        raise BadInput("N_k", f"causal attention needs N_k >= N, got N_k={pt['N_k']} < N={pt['N']}")


def _fa3_model(name, summary, variant):
    causal, local = fa3_flags(variant)
    if variant == "full":
        base = flash_counts("fa2", False, dv=d_v)
        forms = flash_counts("fa2", False, divisible=True)
        extra, check = (), _fa3_check
        row = note("not causal, not local")
    elif variant == "causal":
        base = flash_counts("fa2", True, dv=d_v)
        forms = flash_counts("fa2", True, divisible=True)
        extra, check = (), _fa3_causal_check
        row = note("causal")
    else:
        base = window_counts("fwd", d_v)
        forms = divisible_window("fwd")
        extra, check = (W_l, W_r), _fa3_check
        row = note("local unless ", code("mha_fwd"), " makes the window causal or full; the formulas print its "
                   "columns as ", code("kBlockM"), ", ", code("kBlockN"), " and ", code("line"), " of the head "
                   "dimension, the element size and the window")
    t_r, t_c, line = fa3_tiles(causal, local)
    q = {k: sp.sympify(v).subs(fa3_tile_nodes(variant)) for k, v in base.items()}
    if variant == "window":     # the flags' conditions are long: print the table's columns as functions
        shown = [sp.Function(f)(d, d_v, e, N, N_k, W_l, W_r) for f in ("kBlockM", "kBlockN", "line")]
        t_r, t_c, line = (ShownSum(x, y) for x, y in zip((t_r, t_c, line), shown))
    q.update({"B_r": t_r, "B_c": t_c, "tile_line": line})
    at_128 = 176 if variant == "full" else 128          # kBlockN at 96 < d <= 128, e = 2 (lines 32-33)
    forms = {k: sp.sympify(v).subs({B_r: 128, B_c: at_128}) for k, v in forms.items()}
    tiles_128 = note(" at the tiles of ", sp.Lt(96, d, evaluate=False), " and ", sp.Le(d, 128), ", ",
                     sp.Eq(e, 2, evaluate=False))
    t_rs, t_cs = symbol("B_r"), symbol("B_c")          # the tile quantities, not parameters of these models
    if variant == "full":
        regime = Regime(note(sp.Le(t_rs, N), ", ", sp.Le(t_cs, N_k)) + tiles_128, le=((d, N),))
    elif variant == "causal":
        regime = Regime(note(_N_EQ) + tiles_128, le=((d, N),))
    else:
        regime = Regime(note(sp.Le(W_l, N), ", ", sp.Le(W_r, N)) + tiles_128, le=((d, N), (W_l, N), (W_r, N)))
    return Model(
        name=name, summary=summary, quantities=q, params=(N, N_k, d, d_v, e) + extra,
        units={**_UNITS, "B_r": "rows", "B_c": "rows", "tile_line": "line"},
        divisible_forms=forms,
        divisible_note=note("at ", sp.Eq(d, 128, evaluate=False), ", ", sp.Eq(d_v, d, evaluate=False), ", ",
                            sp.Eq(e, 2, evaluate=False), " (",
                            sp.Eq(t_rs, 128, evaluate=False), ", ", sp.Eq(t_cs, at_128, evaluate=False),
                            ") with the blocks dividing ", _N_EQ,
                            *((", ", W_l, " and ", W_r) if variant == "window" else ())),
        regime=regime, asymptotics_from_divisible=True,
        defaults={"N": 32768, "N_k": 32768, "d": 128, "d_v": 128, "e": 2,
                  **({"W_l": 4095, "W_r": 0} if extra else {})},
        default_from={"d_v": "d"},
        source=note(FA3_SOURCE, ", ", code("hopper/tile_size.h"), ":10-54 (", code("tile_size_fwd_sm90"), "), ",
                    code("hopper/flash_api.cpp"), ":418"),
        validate=check,
        notes=(note("tiles: ", code("B_r"), " is kBlockM and ", code("B_c"), " kBlockN of ",
                    code("tile_size_fwd_sm90"), " (", *row, "); ", code("tile_line"), " is the line of ",
                    code("hopper/tile_size.h"), " whose return it takes: 25, 30, 33, 37, 39 for 2-byte elements at head "
                    "dimensions up to 64, 96, 128, 192, 256 (19 and 21 for ", d_v, " above 256 and 192 at ",
                    sp.Le(d, 64), "), and 43, 45, 47, 49, 51 for FP8; TMA loads, no softcap"),
               note(d_v, ": the width of ", code("V"), " and ", code("O"), ", ", sp.Eq(d_v, d), " unless given; FA3 "
                    "takes another only for ", sp.Lt(128, d), " up to 192 with ", d_v, " in 97 to 128 (DeepSeek-V3's "
                    "192 and 128: 128 by 128 tiles, 128 by 96 local, line 37), or ", sp.Le(d, 64), " with ", d_v,
                    " up to 512 (", code("hopper/flash_api.cpp"), ":782-786)"),
               note("the counts are FlashAttention-2's forward loop at those tiles: FA3 runs one CTA per query block "
                    "over the key blocks ", code("get_n_block_min_max"), " gives (", code("hopper/block.h"),
                    ":14-59), which are exactly the visited ones (", code("docs/attention-variants.md"), ")")),
    )


def _fa3_ref(name, summary, variant) -> ModelRef:
    return ModelRef(name, str(summary), partial(_fa3_model, name, summary, variant))


fa3_fwd = _fa3_ref("attention.fa3.fwd",
                   note("FlashAttention-3 forward at the tiles it ships (", code("tile_size_fwd_sm90"), "), no mask"),
                   "full")
fa3_fwd_causal = _fa3_ref("attention.fa3.fwd.causal",
                          "FlashAttention-3 forward at its shipped tiles, causal mask", "causal")
fa3_fwd_window = _fa3_ref("attention.fa3.fwd.window",
                          note("FlashAttention-3 forward at its shipped tiles, sliding window (", W_l, ", ", W_r, ")"),
                          "window")

#: the models of this file
LOCAL_MODELS = (fa2_fwd_window, flash_bwd_window, fa2_fwd_chunked, flash_bwd_chunked,
                fa3_fwd, fa3_fwd_causal, fa3_fwd_window)
