"""Attention cost formulas: standard attention and FlashAttention, forward and backward.

Counting conventions: ``docs/conventions.md`` §1, in elements moved between HBM and on-chip memory
(bytes = elements x dtype size); FLOPs are matrix-multiply FLOPs, ``2 m n k`` per product.
Sources: Dao et al. 2022, *FlashAttention* (arXiv 2205.14135), Algorithm 1, Theorem 2,
Proposition 3; Dao 2023, *FlashAttention-2* (arXiv 2307.08691), Algorithms 1-2.

Each formula is *derived from the loop structure* the executor in :mod:`numeric.attention` runs:
``T_r = ceil(N/B_r)`` query blocks, ``T_c = ceil(N_k/B_c)`` key blocks; key block ``j`` holds
``min(B_c, N_k - j B_c)`` rows; under a causal mask key block ``j`` is seen by the query blocks
``i >= I_j = max(0, floor((j B_c - N_k + N)/B_r))`` (query row ``r`` sits at position
``N_k - N + r``), i.e. by ``N - B_r I_j`` query rows.  Causal counts are finite sums over ``j``, written
in closed form (:func:`causal_skips`: full periods of the diagonal plus a remainder of fewer than ``B_r``
terms, evaluated in O(log) steps), so they evaluate exactly at any size; without a mask the sums
collapse (``sum_j min(B_c, N_k - j B_c) = N_k``).

The family declares its own parameters (:data:`N`, :data:`N_k`, :data:`d`, :data:`d_v`, :data:`B_r`,
:data:`B_c`, :data:`M`); each model below is a module-level :class:`~symbolic.registry.ModelRef`.

**Value width** ``d_v`` (``attention.fa2.fwd``, ``.causal``; DeepSeek-V3's MLA prefill has ``d = 192`` for
``Q, K`` and ``d_v = 128`` for ``V, O``): ``Q_i`` and ``K_j`` move ``d`` per row, ``V_j`` and ``O_i`` ``d_v``,
and the two products ``S = Q K^T`` and ``P V`` take ``2 d`` and ``2 d_v`` FLOPs a score.  FlashAttention-2's
Algorithm 1 with ``V`` of width ``d_v``::

    reads = N d + (d + d_v) sum_{visited (i, j)} w_j,   writes = N d_v + N,   flops = 2 (d + d_v) sum w_j h_i

``d_v`` defaults to ``d`` (:attr:`~symbolic.model.Model.default_from`): a point without it is the point
with ``d_v = d``, whose counts are the ``d``-only forms (``2 d`` for ``d + d_v``, ``4 d`` for ``2 (d +
d_v)``), so every figure stated before ``d_v`` existed is unchanged.
"""

from __future__ import annotations

import sympy as sp

from base import validate
from base.errors import BadInput

from ..asymptotics import Regime
from ..evaluate import exact
from ..floorsum import FloorSum
from ..model import Model
from ..notes import Omega, Theta, note, symbol
from ..params import param
from ..registry import ModelRef, defines

__all__ = ["N", "N_k", "d", "d_v", "B_r", "B_c", "M", "PARAMS", "fwd_lower_bound",
           "kernel_counts", "flash_counts", "causal_skips", "standard_counts", "paper_block_sizes", "paper_blocks_at",
           "FA_SOURCE", "FA2_SOURCE",
           "standard_fwd", "standard_bwd", "fa1_fwd", "fa2_fwd", "flash_bwd",
           "fa1_fwd_causal", "fa2_fwd_causal", "flash_bwd_causal",
           "fa1_fwd_paper", "fa2_fwd_paper", "flash_bwd_paper", "FLASH_MODELS"]

# ------------------------------------------------------------------------------------- parameters
N = param("N", "query rows (the sequence length)")
N_k = param("N_k", "key rows (as many as the query rows for self-attention; more when decoding against a cache)",
            latex="N_k")
d = param("d", "head dimension")
d_v = param("d_v", note("head dimension of ", symbol("V"), " and ", symbol("O"), "; that of ", symbol("Q"), " and ",
                        symbol("K"), " unless given (DeepSeek-V3's prefill: 128 for these, 192 for those)"),
            latex="d_v")
B_r = param("B_r", "query (row) block size", latex="B_r")
B_c = param("B_c", "key (column) block size", latex="B_c")
M = param("M", "on-chip SRAM in elements (100 KB of FP16 is 51,200 elements)", latex="M")

#: every parameter of the family, in display order
PARAMS = (N, N_k, d, d_v, B_r, B_c, M)

# derivation-only: the key-block index of the causal sums
_j = sp.Dummy("j", integer=True, nonnegative=True)

FA_SOURCE = "Dao et al. 2022, FlashAttention, arXiv 2205.14135"
FA2_SOURCE = "Dao 2023, FlashAttention-2, arXiv 2307.08691"

_TR = sp.ceiling(N / B_r)
_TC = sp.ceiling(N_k / B_c)


# ------------------------------------------------------------------------------------- standard
def kernel_counts(kernels, shapes):
    """Reads, writes of a sequence of kernels that each read their operands once and write their
    results once: ``kernels`` is ``[(label, [operands], [results], flops), ...]``."""
    size = {name: sp.Mul(*dims) for name, dims in shapes.items()}
    reads = sp.Add(*[size[x] for _, ins, _, _ in kernels for x in ins])
    writes = sp.Add(*[size[x] for _, _, outs, _ in kernels for x in outs])
    flops = sp.Add(*[f for *_, f in kernels])
    return {"reads": sp.expand(reads), "writes": sp.expand(writes), "flops": sp.expand(flops)}


_SHAPES = {"Q": (N, d), "K": (N_k, d), "V": (N_k, d), "O": (N, d), "dO": (N, d), "dQ": (N, d),
           "dK": (N_k, d), "dV": (N_k, d), "S": (N, N_k), "P": (N, N_k), "dP": (N, N_k), "dS": (N, N_k)}

#: docs/conventions.md §1.1; FlashAttention (arXiv 2205.14135) Algorithm 0:
#: S = QK^T; P = softmax(S); O = PV - each operand read once, each result written once
STANDARD_FORWARD = (("S = Q K^T", ["Q", "K"], ["S"], 2 * N * N_k * d),
                    ("P = softmax(S)", ["S"], ["P"], 0),
                    ("O = P V", ["P", "V"], ["O"], 2 * N * N_k * d))
#: docs/conventions.md §1.2; FlashAttention (arXiv 2205.14135) Algorithm 3:
#: dV = P^T dO; dP = dO V^T; dS = P (dP - rowsum(P dP)); dQ = dS K; dK = dS^T Q
STANDARD_BACKWARD = (("dV = P^T dO", ["P", "dO"], ["dV"], 2 * N * N_k * d),
                     ("dP = dO V^T", ["dO", "V"], ["dP"], 2 * N * N_k * d),
                     ("dS = P*(dP - rowsum(P*dP))", ["P", "dP"], ["dS"], 0),
                     ("dQ = dS K", ["dS", "K"], ["dQ"], 2 * N * N_k * d),
                     ("dK = dS^T Q", ["dS", "Q"], ["dK"], 2 * N * N_k * d))


def standard_counts(direction: str):
    return kernel_counts(STANDARD_FORWARD if direction == "fwd" else STANDARD_BACKWARD, _SHAPES)


# ------------------------------------------------------------------------------------- flash
def causal_skips():
    r"""The two sums a causal mask adds, in closed form: ``(S, S_w)`` with

        S   = Σ_j I_j                       query blocks skipped, summed over the key blocks
        S_w = Σ_j min(B_c, N_k - j B_c) I_j  the same, each weighted by its key block's width

    over ``j = 0 .. T_c - 1``, ``I_j = max(0, ⌊(j B_c - D)/B_r⌋)``, ``D = N_k - N >= 0``.  ``I_j = 0`` up to
    ``j_0 = ⌈D/B_c⌉``; from there ``j = j_0 + t`` gives ``I_j = ⌊(B_c t + c)/B_r⌋`` with
    ``c = B_c j_0 - D`` in ``[0, B_c)``, a floor sum over ``n = T_c - j_0`` terms: full periods of the
    diagonal in closed form plus the remainder (:class:`symbolic.floorsum.FloorSum`, which prints as the
    sum and evaluates by :func:`~symbolic.floorsum.floor_sum_expr`).  Every key
    block but the last is ``B_c`` wide, so ``S_w = B_c S + (w_last - B_c) I_{T_c - 1}``."""
    D = N_k - N
    j0 = sp.ceiling(D / B_c)
    S = FloorSum(_TC - j0, B_c, B_c * j0 - D, B_r)
    last = sp.Max(0, sp.floor(((_TC - 1) * B_c - D) / B_r))
    S_w = B_c * S + (N_k - _TC * B_c) * last
    return S, S_w


def flash_counts(kind: str, causal: bool, divisible: bool = False, finite_sum: bool = False, dv=None):
    """Reads, writes, FLOPs of FlashAttention ``kind`` in {"fa1", "fa2", "bwd"}.

    ``dv`` is the width of ``V`` and ``O`` (``fa2`` only; default ``d``: the forms without ``d_v``).

    Causal counts are closed forms (:func:`causal_skips`); ``finite_sum=True`` gives them as the finite
    sums over the key blocks that the loops run (``O(T_c)`` terms: a reference for tests).

    ``divisible=True`` derives the same loops under the assumption that the blocks divide the sizes
    (``B_r | N``, ``B_c | N_k``; causal: ``B_c = B_r`` and ``N_k = N``, so ``I_j = j``; the form is
    then written in ``B_r``, one of the model's own parameters).
    """
    j = _j
    if divisible and causal:
        n, nk, br = N, N, B_r
        Tr, Tc = N / B_r, N / B_r
        first = j                                   # I_j = floor(j B_r / B_r) = j
        width = B_r
    else:
        n, nk, br = N, N_k, B_r
        Tr, Tc = (N / B_r, N_k / B_c) if divisible else (_TR, _TC)
        first = sp.Max(0, sp.floor((j * B_c - N_k + N) / B_r))
        width = sp.Min(B_c, N_k - j * B_c)

    if causal and (divisible or finite_sum):
        rows = n - br * first               # query rows that key block j meets
        blocks = Tr - first                 # query blocks that key block j meets

        def over_j(f):
            return sp.Sum(f, (j, 0, Tc - 1))
        sum_width = nk                      # every key block is loaded (the last query row sees all keys)
        sum_rows = over_j(rows)
        sum_width_rows = over_j(width * rows)
        sum_width_blocks = over_j(width * blocks)
    elif causal:                            # the same sums in closed form (see causal_skips)
        skipped, skipped_rows = causal_skips()
        sum_width = nk
        sum_rows = Tc * n - br * skipped
        sum_width_rows = n * nk - br * skipped_rows
        sum_width_blocks = Tr * nk - skipped_rows
    else:
        sum_width, sum_rows, sum_width_rows, sum_width_blocks = nk, Tc * n, nk * n, nk * Tr

    if kind == "fa1":       # Algorithm 1: init O,l,m; outer j loads K_j,V_j; inner loads Q_i,O_i,l_i,m_i, writes O_i,l_i,m_i
        reads = 2 * d * sum_width + (2 * d + 2) * sum_rows
        writes = n * d + 2 * n + (d + 2) * sum_rows
        flops = 4 * d * sum_width_rows
    elif kind == "fa2":     # FA-2: Q_i once; K_j,V_j per visible (i, j); O_i and L_i written once
        dv = d if dv is None else dv
        reads = n * d + (d + dv) * sum_width_blocks
        writes = n * dv + n
        flops = 2 * (d + dv) * sum_width_rows
    elif kind == "bwd":     # D = rowsum(dO*O); dQ init; outer j: K_j,V_j; inner: Q_i,dO_i,dQ_i,L_i,D_i; dQ_i; then dK_j,dV_j
        reads = 2 * n * d + 2 * d * sum_width + (3 * d + 2) * sum_rows
        writes = n + n * d + d * sum_rows + 2 * d * sum_width
        flops = 10 * d * sum_width_rows
    else:
        raise BadInput("kind", f"unknown FlashAttention kind {kind!r} (fa1, fa2, bwd)")
    if dv is not None and dv is not d and kind != "fa2":
        raise ValueError(f"flash_counts: a value width d_v only for fa2, not {kind!r}")   # a caller's bug
    return {"reads": reads, "writes": writes, "flops": flops}


def paper_block_sizes(M_=M, d_=d):
    """The paper's block sizes (Algorithm 1 line 1): ``B_c = ceil(M / 4d)``, ``B_r = min(B_c, d)``."""
    bc = sp.ceiling(M_ / (4 * d_))
    return sp.Min(bc, d_), bc


def paper_blocks_at(M_, d_) -> tuple[int, int]:
    """``(B_r, B_c)`` as ints for on-chip memory ``M_`` elements and head dimension ``d_``.

    Both are validated as :meth:`Model.evaluate <symbolic.model.Model.evaluate>` validates them
    (:func:`base.validate.integer`: ``51200.0`` is 51200, ``1.5`` and ``1e30`` are refused);
    :class:`~base.errors.BadInput` names ``M`` or ``d``."""
    M_ = validate.integer(M.name, M_, M.least)
    d_ = validate.integer(d.name, d_, d.least)
    br, bc = paper_block_sizes()
    return exact(br, M=M_, d=d_), exact(bc, M=M_, d=d_)


# ------------------------------------------------------------------------------------- models
_SELF = {N_k: N}
# the tensors and the query row a note names (math, not parameters)
_Q, _K, _V, _O, _dO, _dQ, _dK, _dV = (symbol(n) for n in ("Q", "K", "V", "O", "dO", "dQ", "dK", "dV"))
_row = symbol("r")

_THEOREM2 = Regime(note(sp.Le(d, M), ", ", sp.Le(M, N * d), " (Theorem 2)"), le=((d, M), (M, N * d)))
_FWD_LB = {note("compulsory: read ", _Q, ", ", _K, ", ", _V, " and write ", _O, " (exact)"): 2 * N * d + 2 * N_k * d}


def fwd_lower_bound(dv=d) -> dict:
    """The forward's compulsory traffic with ``V``, ``O`` of width ``dv``: ``N d + N_k d + N_k d_v + N d_v``."""
    return {note("compulsory: read ", _Q, ", ", _K, ", ", _V, " and write ", _O, " (exact)"):
            N * d + N_k * d + N_k * dv + N * dv}
_BWD_LB = {note("compulsory: read ", _Q, ", ", _K, ", ", _V, ", ", _O, ", ", _dO, " and write ", _dQ, ", ", _dK,
                ", ", _dV, " (exact)"): 4 * N * d + 4 * N_k * d}
_PROP3 = note("Proposition 3: ", Omega(N**2 * d**2 / M), " for every exact algorithm, all ", M, " from ", d, " to ",
              N * d, " (constant unknown)")


def _divisible_note(causal: bool):
    return (note(sp.Eq(B_c, B_r), " divides ", sp.Eq(N, N_k)) if causal
            else note(B_r, " divides ", N, " and ", B_c, " divides ", N_k))


def _causal_ok(pt):
    if pt["N_k"] < pt["N"]:
        raise BadInput("N_k", f"causal attention needs N_k >= N, got N_k={pt['N_k']} < N={pt['N']}")


def _flash_model(name, kind, causal, summary, source):
    dv = d_v if kind == "fa2" else None            # the forward of FlashAttention-2's order takes a value width
    q = flash_counts(kind, causal, dv=dv)
    return Model(
        name=name, summary=summary, quantities=q, params=(N, N_k, d) + ((d_v,) if dv else ()) + (B_r, B_c),
        divisible_forms=flash_counts(kind, causal, divisible=True, dv=dv), divisible_note=_divisible_note(causal),
        regime=(Regime(note(sp.Le(B_r, N), " (divisible form: ", sp.Eq(B_c, B_r), ", ", sp.Eq(N_k, N), ")"),
                       le=((B_r, N),)) if causal
                else Regime(note(sp.Le(B_r, N), ", ", sp.Le(B_c, N_k)), le=((B_r, N), (B_c, N_k)))),
        asymptotics_from_divisible=causal,
        lower_bounds=_BWD_LB if kind == "bwd" else fwd_lower_bound(dv) if dv else _FWD_LB,
        defaults={"N": 4096, "N_k": 4096, "d": 64, "B_r": 128, "B_c": 128, **({"d_v": 64} if dv else {})},
        default_from={"d_v": "d"} if dv else {},
        source=source, validate=_causal_ok if causal else None,
        notes=((note("causal: a fully masked block is skipped, a block the diagonal crosses is loaded whole; "
                     "query row ", _row, " sits at key position ", N_k - N + _row),) if causal else ())
        + ((_DV_NOTE,) if dv else ()),
    )


_DV_NOTE = note(d_v, ": the width of ", _V, " and ", _O, " (", _Q, " and ", _K, " have ", d, "); ", sp.Eq(d_v, d),
                " unless given, where the counts are those without it")


_FLASH_KINDS = {
    "fa1": ("attention.fa1.fwd", FA_SOURCE + ", Algorithm 1",
            "FlashAttention forward, Algorithm 1 order (outer loop over key blocks)"),
    "fa2": ("attention.fa2.fwd", FA2_SOURCE + ", Algorithm 1",
            "FlashAttention forward, FlashAttention-2 order (outer loop over query blocks)"),
    "bwd": ("attention.flash.bwd", FA2_SOURCE + ", Algorithm 2",
            "FlashAttention backward, FlashAttention-2 style"),
}


def _flash_ref(kind: str, causal: bool) -> ModelRef:
    base_name, source, text = _FLASH_KINDS[kind]
    name = base_name + (".causal" if causal else "")
    summary = text + (" with a causal mask" if causal else "")

    def build():
        return _flash_model(name, kind, causal, summary, source)
    return ModelRef(name, summary, build)


def _paper_model(name, kind, summary, regime):
    br, bc = paper_block_sizes()
    subs = {B_r: br, B_c: bc, N_k: N}
    q = {k: v.subs(subs) for k, v in flash_counts(kind, False).items()}
    return Model(
        name=name, summary=summary, quantities=q, params=(N, d, M),
        divisible_forms={k: v.subs({B_r: sp.Min(M / (4 * d), d), B_c: M / (4 * d), N_k: N})
                         for k, v in flash_counts(kind, False, divisible=True).items()},
        divisible_note=note(4 * d, " divides ", M, " and the blocks divide ", N),
        regime=regime,
        lower_bounds={**{k: v.subs(_SELF) for k, v in (_BWD_LB if kind == "bwd" else _FWD_LB).items()},
                      _PROP3: N**2 * d**2 / M},
        defaults={"N": 4096, "d": 64, "M": 51200},
        source=FA_SOURCE + ", Algorithm 1 line 1 (block sizes), Theorem 2, Proposition 3",
        notes=(note(M, ": on-chip SRAM in elements (100 KB of FP16 is 51,200 elements)"),),
    )


@defines("attention.standard.fwd", "standard attention forward: S = QK^T, softmax, O = PV, each a kernel through HBM")
def standard_fwd():
    return Model("attention.standard.fwd", "standard attention forward (three kernels through HBM)",
                 standard_counts("fwd"), params=(N, N_k, d), lower_bounds=_FWD_LB,
                 defaults={"N": 4096, "N_k": 4096, "d": 64},
                 source=note(FA_SOURCE + ", Algorithm 0 and Theorem 2 (", Theta(N * d + N**2), ")"),
                 notes=(note("a causal mask changes no count: the standard kernels move whole ", N, " × ", N_k,
                             " matrices"),))


@defines("attention.standard.bwd", "standard attention backward from (Q, K, V, P, dO), five kernels through HBM")
def standard_bwd():
    return Model("attention.standard.bwd", "standard attention backward (five kernels through HBM)",
                 standard_counts("bwd"), params=(N, N_k, d), lower_bounds=_BWD_LB,
                 defaults={"N": 4096, "N_k": 4096, "d": 64},
                 source=FA_SOURCE + ", Algorithm 3 and Theorem 5")


fa1_fwd = _flash_ref("fa1", causal=False)
fa2_fwd = _flash_ref("fa2", causal=False)
flash_bwd = _flash_ref("bwd", causal=False)
fa1_fwd_causal = _flash_ref("fa1", causal=True)
fa2_fwd_causal = _flash_ref("fa2", causal=True)
flash_bwd_causal = _flash_ref("bwd", causal=True)

#: the six blocked FlashAttention models (non-causal first)
FLASH_MODELS = (fa1_fwd, fa2_fwd, flash_bwd, fa1_fwd_causal, fa2_fwd_causal, flash_bwd_causal)


@defines("attention.fa1.fwd.paper", "FlashAttention forward, Algorithm 1, the paper's blocks B_c = ceil(M/4d), B_r = min(B_c, d)")
def fa1_fwd_paper():
    return _paper_model("attention.fa1.fwd.paper", "fa1",
                        "FlashAttention forward (Algorithm 1) with the paper's block sizes", _THEOREM2)


@defines("attention.fa2.fwd.paper", "FlashAttention forward, FlashAttention-2 order, the paper's blocks")
def fa2_fwd_paper():
    br, bc = paper_block_sizes()
    # NOTE: with the paper's B_r = min(B_c, d) the FA-2 order reloads K, V N/B_r times; for
    # M >= 4 d^2 (the course's 100 KB and d = 64) B_r = d and the count is Theta(N^2), not N^2 d^2/M.
    regime = Regime(note(sp.Le(4 * d**2, M), ", ", sp.Le(M, N * d), " (so ", sp.Eq(B_r, d), ")"),
                    le=((d**2, M), (M, N * d)), subs={br: d})
    return _paper_model("attention.fa2.fwd.paper", "fa2",
                        "FlashAttention forward (FlashAttention-2 order) with the paper's block sizes", regime)


@defines("attention.flash.bwd.paper", "FlashAttention backward with the paper's blocks")
def flash_bwd_paper():
    return _paper_model("attention.flash.bwd.paper", "bwd",
                        "FlashAttention backward with the paper's block sizes", _THEOREM2)
