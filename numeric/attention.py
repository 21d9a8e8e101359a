"""Attention executors: standard attention and FlashAttention, run block by block on a counted global memory.

Counting conventions are those of ``docs/conventions.md`` §1, in elements:

* **Standard forward** - three kernels, each reading its operands once and writing its result once:
  ``S = Q K^T / sqrt(d)``; ``P = softmax(S)`` (the causal mask is applied here: the standard kernels
  move the whole ``N x Nk`` matrices, causal or not); ``O = P V``.
* **Standard backward** from ``(Q, K, V, P, dO)``: ``dV = P^T dO``; ``dP = dO V^T``;
  ``dS = P * (dP - rowsum(P * dP))``; ``dQ = dS K / sqrt(d)``; ``dK = dS^T Q / sqrt(d)``.
* **FlashAttention forward, order ``fa1``** - Algorithm 1 of Dao et al. 2022 (arXiv 2205.14135)
  counted literally: line 2 initialises ``O, l, m`` in HBM; line 5 loads ``K_j, V_j`` (outer loop
  over key blocks); line 8 loads ``Q_i, O_i, l_i, m_i``; lines 12-13 write ``O_i, l_i, m_i``.
* **FlashAttention forward, order ``fa2``** - FlashAttention-2 (arXiv 2307.08691, Algorithm 1):
  outer loop over query blocks; ``Q_i`` loaded once, ``K_j, V_j`` for every key block visited,
  ``O_i`` and the log-sum-exp ``L_i`` written once.  The forward passes take ``V`` of its own width
  ``d_v`` (DeepSeek-V3's prefill: ``d = 192``, ``d_v = 128``): ``V_j`` and ``O_i`` move ``d_v`` a row.
* **FlashAttention backward** (FlashAttention-2 style, Algorithm 2): ``D = rowsum(dO * O)``
  (reads ``dO, O``, writes ``D``); ``dQ`` initialised in HBM; outer loop over key blocks loads
  ``K_j, V_j``; the inner loop over visible query blocks loads ``Q_i, dO_i, dQ_i, L_i, D_i`` and
  writes ``dQ_i``; after it ``dK_j, dV_j`` are written.

Causal masks: query row ``r`` sits at position ``Nk - N + r`` and sees keys ``0 .. Nk - N + r``.
A block masked entirely is skipped (no loads, no FLOPs); a block the diagonal crosses is loaded
whole.  Partial last blocks move only the rows they hold.  FLOPs are matrix-multiply FLOPs only
(``2 m n k`` each), counted per block actually computed.

Execution: the outer loop runs block by block; the query blocks of one step, independent of each
other (concurrent thread blocks on a GPU), run together as one slab of rows, each still charged its
own loads (see the note above ``_flash_forward_fa1``).  Every function runs in real mode (NumPy
arrays in, outputs and a :class:`~numeric.memory.Tally` out) or, through the ``count_*`` wrappers,
in shape-only mode (sizes in, the same Tally, no arithmetic; shapes are Python ints, so any size
counts exactly).

Cost is stated and bounded up front (:func:`base.validate.budget`): a FlashAttention run takes one step
per key block, at most :data:`MAX_STEPS` (``max_steps=``); a real-mode run at most :data:`MAX_ELEMENTS`
scores ``N x Nk`` (``max_elements=``).  Beyond them the call is refused with :class:`~base.errors.BadInput`
naming ``Bc`` (or ``N``/``Nk``), the work it would take and the keyword that raises the budget.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from base import validate
from base.errors import BadInput

from .memory import GlobalMemory, Phantom, Tally, is_phantom

__all__ = [
    "ORDERS", "MAX_STEPS", "MAX_ELEMENTS", "flash_forward", "flash_backward", "standard_forward", "standard_backward",
    "count_flash_forward", "count_flash_backward", "count_standard_forward", "count_standard_backward",
    "reference_attention", "reference_attention_grads", "first_visible_query_block",
]

ORDERS = ("fa1", "fa2")

#: either mode: at most this many outer-loop steps (key blocks, ``ceil(Nk/Bc)``) per FlashAttention run;
#: a count-only step costs about 20 us, so the budget is about 20 s.  Raise it with ``max_steps=``.
MAX_STEPS = 1 << 20
#: real mode: at most this many attention scores (``N x Nk``) per run - the matrices standard attention
#: holds (8 bytes each, S and P and their temporaries), the work FlashAttention does (``4 N Nk d``
#: FLOPs).  Raise it with ``max_elements=``, or count with the ``count_*`` functions, which hold no data.
MAX_ELEMENTS = 1 << 26


class Forward(NamedTuple):
    O: object
    aux: object      # P for standard attention, the log-sum-exp L for FlashAttention
    tally: Tally


class Backward(NamedTuple):
    dQ: object
    dK: object
    dV: object
    tally: Tally


# ------------------------------------------------------------------------------------- validation
def _shapes(Q, K, V, causal, v_width=False):
    """``(N, Nk, d)`` of the operands (arrays, or shape tuples in count-only mode); :class:`BadInput`
    naming the operand whose shape is wrong (and ``causal`` when it is not a bool: ``'False'`` is truthy).
    ``v_width``: ``V`` may have a width ``d_v`` of its own (``Nk`` rows all the same): the forward passes."""
    causal = validate.flag("causal", causal)
    qs, ks, vs = (tuple(np.shape(x)) if not isinstance(x, tuple) else x for x in (Q, K, V))
    for name, s in (("Q", qs), ("K", ks), ("V", vs)):
        if len(s) != 2:
            raise BadInput(name, f"must be 2-D (rows, d), got shape {s}")
        if s[0] < 1 or s[1] < 1:
            raise BadInput(name, f"sizes must be >= 1, got shape {s}")
    if ks[1] != qs[1]:
        raise BadInput("K", f"head dimension {ks[1]} does not match Q's {qs[1]}")
    if vs != ks and not (v_width and vs[0] == ks[0]):
        raise BadInput("V", f"shape {vs} does not match K's {ks}" + (" in its rows" if v_width else ""))
    N, d = qs
    Nk = ks[0]
    if causal and Nk < N:
        raise BadInput("Nk", f"causal attention needs Nk >= N (query i sits at position Nk - N + i), got Nk={Nk} < N={N}")
    return N, Nk, d


def _arrays(**arrays):
    """Each operand as a real NumPy array (:func:`base.validate.real_array`: complex, object, string
    and boolean arrays are refused, naming the operand), in the order given."""
    return tuple(validate.real_array(name, a) for name, a in arrays.items())


def _blocks(Br, Bc):
    return validate.integer("Br", Br), validate.integer("Bc", Bc)


def _steps_budget(Nk, Bc, max_steps):
    """Refuse a FlashAttention run of more than ``max_steps`` key blocks before it starts."""
    validate.budget("Bc", -(-Nk // Bc), max_steps, f"key blocks (ceil(Nk/Bc), Nk={Nk:,}, Bc={Bc:,})",
                    "max_steps", "take a larger Bc")


def _elements_budget(N, Nk, max_elements):
    """Refuse a real-mode run of more than ``max_elements`` scores (``N x Nk``) before it allocates."""
    validate.budget("Nk" if Nk >= N else "N", N * Nk, max_elements, f"scores (N x Nk = {N:,} x {Nk:,})",
                    "max_elements", "count with count_* (no data)")


def _check_order(order):
    if order not in ORDERS:
        raise BadInput("order", f"must be one of {', '.join(ORDERS)}, got {order!r}")


# ------------------------------------------------------------------------------------- causal geometry
def first_visible_query_block(j, N, Nk, Br, Bc):
    """Index of the first query block that sees any key of key block ``j`` (causal).

    Block (i, j) is visible iff its smallest key ``j Bc`` <= its largest position
    ``Nk - N + min((i+1) Br, N) - 1``; the least such i is ``max(0, floor((j Bc - Nk + N) / Br))``."""
    return max(0, (j * Bc - Nk + N) // Br)


def _mask(S, r0, c0, N, Nk):
    """Set the masked scores of a tile/slab whose first row is query row ``r0`` and first column key
    ``c0`` to -inf.  Only the leading rows the diagonal crosses (position < last key) are touched."""
    if is_phantom(S):
        return S
    first_pos = Nk - N + r0
    crossing = min(S.shape[0], max(0, c0 + S.shape[1] - 1 - first_pos))
    if crossing:
        pos = first_pos + np.arange(crossing)[:, None]
        key = c0 + np.arange(S.shape[1])[None, :]
        S[:crossing] = np.where(key <= pos, S[:crossing], -np.inf)
    return S


# ------------------------------------------------------------------------------------- standard
def _standard_forward(mem, Qa, Ka, Va, N, Nk, d, causal):
    scale = 1.0 / math.sqrt(d)
    Sa = mem.empty("S", (N, Nk))
    Pa = mem.empty("P", (N, Nk))
    Oa = mem.empty("O", (N, d))
    # kernel 1: S = Q K^T / sqrt(d)
    Q, K = mem.load(Qa), mem.load(Ka)
    mem.store(Sa, slice(None), mem.matmul(Q, K.T) * scale)
    # kernel 2: P = softmax(S) (mask applied here)
    S = mem.load(Sa)
    if causal:
        S = _mask(S.copy() if mem.real else S, 0, 0, N, Nk)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    mem.store(Pa, slice(None), e / e.sum(axis=1, keepdims=True))
    # kernel 3: O = P V
    P, V = mem.load(Pa), mem.load(Va)
    mem.store(Oa, slice(None), mem.matmul(P, V))
    return Forward(mem.result(Oa), mem.result(Pa), mem.tally)


def _standard_backward(mem, Qa, Ka, Va, Pa, dOa, N, Nk, d):
    scale = 1.0 / math.sqrt(d)
    dVa, dPa, dSa = mem.empty("dV", (Nk, d)), mem.empty("dP", (N, Nk)), mem.empty("dS", (N, Nk))
    dQa, dKa = mem.empty("dQ", (N, d)), mem.empty("dK", (Nk, d))
    P, dO = mem.load(Pa), mem.load(dOa)                       # dV = P^T dO
    mem.store(dVa, slice(None), mem.matmul(P.T, dO))
    dO, V = mem.load(dOa), mem.load(Va)                       # dP = dO V^T
    mem.store(dPa, slice(None), mem.matmul(dO, V.T))
    P, dP = mem.load(Pa), mem.load(dPa)                       # dS = P * (dP - rowsum(P * dP))
    mem.store(dSa, slice(None), P * (dP - (P * dP).sum(axis=1, keepdims=True)))
    dS, K = mem.load(dSa), mem.load(Ka)                       # dQ = dS K / sqrt(d)
    mem.store(dQa, slice(None), mem.matmul(dS, K) * scale)
    dS, Q = mem.load(dSa), mem.load(Qa)                       # dK = dS^T Q / sqrt(d)
    mem.store(dKa, slice(None), mem.matmul(dS.T, Q) * scale)
    return Backward(mem.result(dQa), mem.result(dKa), mem.result(dVa), mem.tally)


def standard_forward(Q, K, V, causal=False, *, max_elements=MAX_ELEMENTS) -> Forward:
    """Standard attention on real arrays: returns ``(O, P, tally)``.  More than ``max_elements`` scores
    (``N x Nk``, :data:`MAX_ELEMENTS`) are refused up front."""
    Q, K, V = _arrays(Q=Q, K=K, V=V)
    N, Nk, d = _shapes(Q, K, V, causal)
    _elements_budget(N, Nk, max_elements)
    mem = GlobalMemory(real=True)
    return _standard_forward(mem, mem.put("Q", Q), mem.put("K", K), mem.put("V", V), N, Nk, d, causal)


def standard_backward(Q, K, V, P, dO, *, max_elements=MAX_ELEMENTS) -> Backward:
    """Standard attention backward on real arrays: returns ``(dQ, dK, dV, tally)``.  More than
    ``max_elements`` scores (``N x Nk``) are refused up front."""
    Q, K, V, P, dO = _arrays(Q=Q, K=K, V=V, P=P, dO=dO)
    N, Nk, d = _shapes(Q, K, V, False)
    _elements_budget(N, Nk, max_elements)
    if np.shape(P) != (N, Nk):
        raise BadInput("P", f"shape {np.shape(P)} does not match (N, Nk) = {(N, Nk)}")
    if np.shape(dO) != (N, d):
        raise BadInput("dO", f"shape {np.shape(dO)} does not match (N, d) = {(N, d)}")
    mem = GlobalMemory(real=True)
    return _standard_backward(mem, mem.put("Q", Q), mem.put("K", K), mem.put("V", V), mem.put("P", P),
                              mem.put("dO", dO), N, Nk, d)


# ------------------------------------------------------------------------------------- flash forward
# NOTE: the query blocks of one step are independent - each reads and writes only its own rows (on a
# GPU they are thread blocks running concurrently on different SMs).  The executors therefore run the
# query blocks that take part in a step together, as one slab of rows [I_j B_r, N): a slab load moves
# exactly the elements of the per-block loads, and a tile that every block of the slab loads (K_j, V_j
# in the FA-2 order) is charged once per block (``copies``).  Which blocks take part is decided per
# block (``first_visible_query_block``), so partial blocks and the causal diagonal count as in the
# block-by-block loop.

def _flash_forward_fa1(mem, Qa, Ka, Va, N, Nk, d, Br, Bc, causal):
    scale = 1.0 / math.sqrt(d)
    Tc, dv = -(-Nk // Bc), Va.shape[1]
    Oa, la, ma = mem.empty("O", (N, dv)), mem.empty("l", (N,)), mem.empty("m", (N,))
    mem.store(Oa, slice(None), _full(mem, (N, dv), 0.0))                         # line 2
    mem.store(la, slice(None), _full(mem, (N,), 0.0))
    mem.store(ma, slice(None), _full(mem, (N,), -np.inf))
    tile = np.empty((N, Bc)) if mem.real else None      # the score tiles' registers, reused by every step
    for j in range(Tc):                                                          # line 5
        cols = slice(j * Bc, min((j + 1) * Bc, Nk))
        Kj, Vj = mem.load(Ka, cols), mem.load(Va, cols)                          # line 6
        r0 = first_visible_query_block(j, N, Nk, Br, Bc) * Br if causal else 0
        rows = slice(r0, N)                                                      # line 7: blocks i >= I_j
        Qi, Oi, li, mi = mem.load(Qa, rows), mem.load(Oa, rows), mem.load(la, rows), mem.load(ma, rows)  # line 8
        S = mem.matmul(Qi * scale, Kj.T,                                         # line 9
                       out=None if tile is None else tile[r0:, :cols.stop - cols.start])
        if causal:
            S = _mask(S, r0, cols.start, N, Nk)
        m_new, alpha, l_new, PV = _online_softmax(mem, S, Vj, mi, li)            # lines 10-11
        mem.store(Oa, rows, _rescale(alpha, li, Oi, PV, l_new))                  # line 12
        mem.store(la, rows, l_new)                                               # line 13
        mem.store(ma, rows, m_new)
    if not mem.real:
        return Forward(None, None, mem.tally)
    l, m = mem.result(la), mem.result(ma)
    return Forward(mem.result(Oa), m + np.log(l), mem.tally)   # L read back on the host (not counted)


def _flash_forward_fa2(mem, Qa, Ka, Va, N, Nk, d, Br, Bc, causal):
    scale = 1.0 / math.sqrt(d)
    Tr, Tc, dv = -(-N // Br), -(-Nk // Bc), Va.shape[1]     # V and O are d_v wide (d_v = d but for MLA-like heads)
    Oa, La = mem.empty("O", (N, dv)), mem.empty("L", (N,))
    Qs = mem.load(Qa) * scale                  # every query block loads its Q_i once (line 4)
    acc, m, l = _full(mem, (N, dv), 0.0), _full(mem, (N,), -np.inf), _full(mem, (N,), 0.0)
    # the score tiles' and the P V products' registers, reused by every step
    tile, pv = (np.empty((N, Bc)), np.empty((N, dv))) if mem.real else (None, None)
    for j in range(Tc):                        # the inner loop of every query block, in step
        i0 = first_visible_query_block(j, N, Nk, Br, Bc) if causal else 0
        r0, cols = i0 * Br, slice(j * Bc, min((j + 1) * Bc, Nk))
        Kj, Vj = mem.load(Ka, cols, copies=Tr - i0), mem.load(Va, cols, copies=Tr - i0)   # line 7, per block
        width = cols.stop - cols.start
        S = mem.matmul(Qs[r0:], Kj.T, out=None if tile is None else tile[r0:, :width])     # line 8
        if causal:
            S = _mask(S, r0, cols.start, N, Nk)
        m_new, alpha, l_new, PV = _online_softmax(mem, S, Vj, m[r0:], l[r0:],
                                                  masked_rows_impossible=not causal and j > 0,
                                                  out=None if pv is None else pv[r0:])
        if mem.real:                                                                       # line 9
            acc[r0:] *= alpha[:, None]
            acc[r0:] += PV
            m[r0:], l[r0:] = m_new, l_new
    mem.store(Oa, slice(None), acc / _nonzero(l)[:, None] if mem.real else acc)           # lines 12, 14
    mem.store(La, slice(None), m + np.log(l) if mem.real else l)                          # lines 13, 15
    return Forward(mem.result(Oa), mem.result(La), mem.tally)


def _full(mem, shape, value):
    """An on-chip buffer (registers/shared memory): a NumPy array, or a Phantom in count-only mode."""
    return np.full(shape, value) if mem.real else Phantom(shape)


def _online_softmax(mem, S, Vj, m, l, masked_rows_impossible=False, out=None):
    """One online-softmax step on a score tile ``S`` (Algorithm 1 lines 10-11 of FlashAttention;
    Algorithm 1 lines 8-9 of FlashAttention-2): returns ``(m_new, alpha, l_new, P~ V_j)`` with
    ``alpha = exp(m - m_new)`` the rescaling of the old state.  Rows masked so far keep ``m = -inf``
    and contribute zeros (``masked_rows_impossible`` skips that guard when every row of ``S`` and of
    the running max is finite).  In shape-only mode only the counted ``P~ V_j`` product is formed."""
    if not mem.real:
        return m, m, l, mem.matmul(S, Vj)
    m_new = np.maximum(m, S.max(axis=1))
    ms = m_new if masked_rows_impossible else np.where(np.isfinite(m_new), m_new, 0.0)
    Pt = np.exp(np.subtract(S, ms[:, None], out=S), out=S)     # S is this step's own tile: reuse it
    alpha = np.exp(m - ms)
    return m_new, alpha, alpha * l + Pt.sum(axis=1), mem.matmul(Pt, Vj, out=out)


def _rescale(alpha, l_old, O_old, PV, l_new):
    """Algorithm 1 line 12: ``O_i <- diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i + e^(...) P~ V_j)``."""
    if is_phantom(PV):
        return O_old
    return ((alpha * l_old)[:, None] * O_old + PV) / _nonzero(l_new)[:, None]


def _backward_step(mem, S, Qi, Kj, Vj, dOi, dQi, Li, Di, scale):
    """FlashAttention-2 Algorithm 2 lines 11-16 on the query rows that meet key block ``j``:
    ``P = exp(S - L_i)``; ``dV_j = P^T dO_i``; ``dP = dO_i V_j^T``; ``dS = P * (dP - D_i)``;
    ``dQ_i += dS K_j``; ``dK_j = dS^T Q_i`` (the last two scaled by ``1/sqrt(d)``).  Four counted
    products; summing over the rows of all blocks is the sum over the inner loop's iterations."""
    P = np.exp(S - Li[:, None]) if mem.real else S
    dVj = mem.matmul(P.T, dOi)
    dP = mem.matmul(dOi, Vj.T)
    dS = P * (dP - Di[:, None]) if mem.real else P
    dQ_add = mem.matmul(dS, Kj)
    dKj = mem.matmul(dS.T, Qi)
    if not mem.real:
        return dQi, dKj, dVj
    return dQi + dQ_add * scale, dKj * scale, dVj


def _nonzero(x):
    if is_phantom(x):
        return x
    return np.where(x == 0, 1.0, x)


def flash_forward(Q, K, V, Br, Bc, causal=False, order="fa2", *, max_steps=MAX_STEPS,
                  max_elements=MAX_ELEMENTS) -> Forward:
    """FlashAttention forward on real arrays; returns ``(O, L, tally)`` with ``L = m + log l``.  ``V`` may be
    ``d_v`` wide (``O`` is then ``N x d_v``).  More than ``max_steps`` key blocks or ``max_elements`` scores
    are refused up front."""
    _check_order(order)
    Q, K, V = _arrays(Q=Q, K=K, V=V)
    N, Nk, d = _shapes(Q, K, V, causal, v_width=True)
    Br, Bc = _blocks(Br, Bc)
    _steps_budget(Nk, Bc, max_steps)
    _elements_budget(N, Nk, max_elements)
    mem = GlobalMemory(real=True)
    run = _flash_forward_fa1 if order == "fa1" else _flash_forward_fa2
    return run(mem, mem.put("Q", np.asarray(Q, float)), mem.put("K", np.asarray(K, float)),
               mem.put("V", np.asarray(V, float)), N, Nk, d, Br, Bc, causal)


# ------------------------------------------------------------------------------------- flash backward
def _flash_backward(mem, Qa, Ka, Va, Oa, dOa, La, N, Nk, d, Br, Bc, causal):
    scale = 1.0 / math.sqrt(d)
    Tc = -(-Nk // Bc)
    Da = mem.empty("D", (N,))
    dQa, dKa, dVa = mem.empty("dQ", (N, d)), mem.empty("dK", (Nk, d)), mem.empty("dV", (Nk, d))
    mem.store(Da, slice(None), (mem.load(dOa) * mem.load(Oa)).sum(axis=1))      # D = rowsum(dO * O)
    mem.store(dQa, slice(None), _full(mem, (N, d), 0.0))                        # dQ initialised in HBM
    for j in range(Tc):                                                         # line 5
        cols = slice(j * Bc, min((j + 1) * Bc, Nk))
        Kj, Vj = mem.load(Ka, cols), mem.load(Va, cols)                         # line 6
        r0 = first_visible_query_block(j, N, Nk, Br, Bc) * Br if causal else 0
        rows = slice(r0, N)                                                     # line 8: blocks i >= I_j
        Qi, dOi, dQi = mem.load(Qa, rows), mem.load(dOa, rows), mem.load(dQa, rows)   # line 9
        Li, Di = mem.load(La, rows), mem.load(Da, rows)
        S = mem.matmul(Qi, Kj.T) * scale                                        # line 10
        if causal:
            S = _mask(S, r0, cols.start, N, Nk)
        dQi, dKj, dVj = _backward_step(mem, S, Qi, Kj, Vj, dOi, dQi, Li, Di, scale)
        mem.store(dQa, rows, dQi)                                               # line 15
        mem.store(dKa, cols, dKj)                                               # line 18
        mem.store(dVa, cols, dVj)
    return Backward(mem.result(dQa), mem.result(dKa), mem.result(dVa), mem.tally)


def flash_backward(Q, K, V, O, dO, L, Br, Bc, causal=False, *, max_steps=MAX_STEPS,
                   max_elements=MAX_ELEMENTS) -> Backward:
    """FlashAttention backward on real arrays; returns ``(dQ, dK, dV, tally)``.  More than ``max_steps``
    key blocks or ``max_elements`` scores are refused up front."""
    Q, K, V, O, dO, L = _arrays(Q=Q, K=K, V=V, O=O, dO=dO, L=L)
    N, Nk, d = _shapes(Q, K, V, causal)
    Br, Bc = _blocks(Br, Bc)
    _steps_budget(Nk, Bc, max_steps)
    _elements_budget(N, Nk, max_elements)
    for name, x, shape in (("O", O, (N, d)), ("dO", dO, (N, d)), ("L", L, (N,))):
        if np.shape(x) != shape:
            raise BadInput(name, f"shape {np.shape(x)} does not match {shape}")
    mem = GlobalMemory(real=True)
    return _flash_backward(mem, *(mem.put(n, np.asarray(x, float)) for n, x in
                                  (("Q", Q), ("K", K), ("V", V), ("O", O), ("dO", dO), ("L", L))),
                           N, Nk, d, Br, Bc, causal)


# ------------------------------------------------------------------------------------- count-only
def _count_inputs(N, Nk, d, causal):
    N, Nk, d = (validate.integer(n, v) for n, v in (("N", N), ("Nk", Nk), ("d", d)))
    _shapes((N, d), (Nk, d), (Nk, d), causal)
    mem = GlobalMemory(real=False)
    return mem, N, Nk, d


def _value_width(d_v, d):
    """``d_v`` validated (``None``: ``d``)."""
    return d if d_v is None else validate.integer("d_v", d_v)


def count_standard_forward(N, Nk, d, causal=False) -> Tally:
    mem, N, Nk, d = _count_inputs(N, Nk, d, causal)
    return _standard_forward(mem, mem.put("Q", (N, d)), mem.put("K", (Nk, d)), mem.put("V", (Nk, d)),
                             N, Nk, d, causal).tally


def count_standard_backward(N, Nk, d) -> Tally:
    mem, N, Nk, d = _count_inputs(N, Nk, d, False)
    return _standard_backward(mem, mem.put("Q", (N, d)), mem.put("K", (Nk, d)), mem.put("V", (Nk, d)),
                              mem.put("P", (N, Nk)), mem.put("dO", (N, d)), N, Nk, d).tally


def count_flash_forward(N, Nk, d, Br, Bc, causal=False, order="fa2", *, d_v=None,
                        max_steps=MAX_STEPS) -> Tally:
    """The counts of :func:`flash_forward` from sizes alone (no data, any size), ``V`` and ``O`` ``d_v``
    wide (default ``d``): one step per key block, so more than ``max_steps`` key blocks (:data:`MAX_STEPS`)
    are refused up front."""
    _check_order(order)
    mem, N, Nk, d = _count_inputs(N, Nk, d, causal)
    d_v = _value_width(d_v, d)
    Br, Bc = _blocks(Br, Bc)
    _steps_budget(Nk, Bc, max_steps)
    run = _flash_forward_fa1 if order == "fa1" else _flash_forward_fa2
    return run(mem, mem.put("Q", (N, d)), mem.put("K", (Nk, d)), mem.put("V", (Nk, d_v)), N, Nk, d, Br, Bc,
               causal).tally


def count_flash_backward(N, Nk, d, Br, Bc, causal=False, *, max_steps=MAX_STEPS) -> Tally:
    """The counts of :func:`flash_backward` from sizes alone; more than ``max_steps`` key blocks are refused."""
    mem, N, Nk, d = _count_inputs(N, Nk, d, causal)
    Br, Bc = _blocks(Br, Bc)
    _steps_budget(Nk, Bc, max_steps)
    return _flash_backward(mem, *(mem.put(n, s) for n, s in (("Q", (N, d)), ("K", (Nk, d)), ("V", (Nk, d)),
                                                             ("O", (N, d)), ("dO", (N, d)), ("L", (N,)))),
                           N, Nk, d, Br, Bc, causal).tally


# ------------------------------------------------------------------------------------- reference
def reference_attention(Q, K, V, causal=False):
    """Plain ``softmax(Q K^T / sqrt(d)) V`` in one shot (no tiling, no counting): the oracle (``V`` of any width)."""
    validate.flag("causal", causal)
    Q, K, V = _arrays(Q=Q, K=K, V=V)
    N, Nk, d = _shapes(Q, K, V, causal, v_width=True)
    S = (Q @ K.T) / math.sqrt(d)
    if causal:
        S = np.where(np.arange(Nk)[None, :] <= (Nk - N) + np.arange(N)[:, None], S, -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return P @ V, P


def reference_attention_grads(Q, K, V, dO, causal=False):
    """Gradients of ``<dO, attention(Q, K, V)>`` by the textbook formulas, in one shot."""
    validate.flag("causal", causal)
    Q, K, V, dO = _arrays(Q=Q, K=K, V=V, dO=dO)
    d = Q.shape[1]
    O, P = reference_attention(Q, K, V, causal)
    dV = P.T @ dO
    dP = dO @ V.T
    dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
    return dS @ K / math.sqrt(d), dS.T @ Q / math.sqrt(d), dV
