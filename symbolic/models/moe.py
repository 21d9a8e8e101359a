"""Mixture-of-experts grouped GEMM (``moe.grouped``): vLLM's fused MoE kernel and the top-k combine.

**The layer counted.**  ``T`` tokens, each routed to ``k`` of ``E`` experts (top-k picks ``k`` *distinct*
experts), so ``P = T k`` (token, slot) pairs, of which expert ``e`` receives ``n_e`` (``sum_e n_e = T k``,
``0 <= n_e <= T``).  Each expert multiplies its pairs' activation rows (``K`` features) by its own
``K x N`` weight; the routed weight of each pair scales its output row; the ``k`` rows of a token are
summed back into one (the combine).  This is the expert MLP's down projection, the GEMM that vLLM runs
with ``MUL_ROUTED_WEIGHT`` before ``moe_sum``; its gate/up projection is the same GEMM without the
routed weight and the combine.  Shared experts (DeepSeek) are a dense GEMM beside it: ``gemm.tiled``
with ``M = T``, not a special case here.

**Alignment** (vLLM ``vllm/model_executor/layers/fused_moe/moe_align_block_size.py`` at commit
``05be992``): the pairs are sorted by expert and each expert's segment is padded to a multiple of
``B_M`` (``:63``, ``cdiv(token_cnt, block_size) * block_size``), so the ``sorted_token_ids`` array holds
``padded_rows = sum_e ceil(n_e / B_M) B_M`` live entries, padding entries holding the sentinel
``T k`` (``:206``), in a buffer of ``T k + E (B_M - 1)`` entries, the worst case (``:200``);
``expert_ids`` holds one expert per block of ``B_M`` (``:85``).  ``m_blocks = sum_e ceil(n_e / B_M)``.

**The kernel** (``vllm/model_executor/layers/fused_moe/fused_moe.py`` at commit ``13cb3e4``,
``fused_moe_kernel`` from ``:313``): a grid of ``ceil(EM / B_M) ceil(N / B_N)`` programs, ``EM`` the buffer
length, cut to ``min(EM, T k B_M)`` when ``T < B_M`` (``:587-597``).  Every program loads
``num_tokens_post_padded`` (one int32) and returns if its block lies beyond the live entries
(``:411-413``); a live program loads its ``B_M`` sorted ids (``:415``, unmasked: padding entries are
read too) and its expert id (``:418``), then per K-step the *gathered* activation rows of its valid
pairs (``:488-491``: masked by the token mask and ``K``) and a ``B_K x B_N`` weight tile of its expert
(``:493``), loads the routed weights of its valid pairs (``:521``) and stores their output rows
(``:535-538``).  The weight tile's columns wrap modulo ``N`` (``:437``) instead of being masked; the
wrapped columns repeat addresses of the same tile, so a load moves the tile's valid columns once.
The combine (``csrc/moe/moe_align_sum_kernels.cu``, ``moe_sum_kernel``) reads the ``k`` rows of each
token and writes one.  Counts are of elements moved (``docs/conventions.md`` §4.1); with
``t_n = ceil(N / B_N)``, ``t_k = ceil(K / B_K)``, every partition sum collapsing as in ``gemm.tiled``::

    reads_A            = t_n T k K            each pair's row once per tile column (gathered)
    reads_W            = m_blocks N K         an expert's weight once per M-block it owns
    reads_sorted_ids   = t_n padded_rows      int32
    reads_expert_ids   = t_n m_blocks         int32
    reads_num_padded   = programs             int32, every launched program
    reads_topk_weights = t_n T k              FP32 routed weights
    writes_gemm        = T k N;   reads_combine = T k N;   writes_combine = T N
    flops              = 2 T k N K            useful;   flops_padded = 2 padded_rows (t_n B_N)(t_k B_K)

DeepGEMM's M-grouped layouts (``README.md:80-88`` at commit ``54e2261``) pad the same way: the *contiguous*
layout aligns each expert's segment to the M block size, and the *masked* layout (decode) runs
``ceil(masked_m[e] / BLOCK_M)`` blocks for expert ``e`` (``deep_gemm/include/deep_gemm/scheduler/gemm.cuh:207``),
so ``padded_rows``, ``m_blocks``, ``reads_W`` and ``flops_padded`` hold for them too; their index reads (a
per-row int32 layout, or one count per expert) are not vLLM's and are not modelled here.

Bytes use each tensor's own element size (:mod:`base.dtypes`): activations, weights, the ``T k x N``
intermediate and the output in FP16/BF16; ids int32; routed weights FP32.  FLOPs are matrix-multiply
FLOPs only (``docs/conventions.md`` §1.0): the routed-weight scaling and the combine's additions are
not counted.  The routing-dependent part of every count is ``m_blocks`` alone.

**Routings.**  A count vector gives ``m_blocks`` as a finite sum: :func:`grouped_for` builds the model
for one (the Python API; ``counts=``).  The registered models give it in closed form:

* ``moe.grouped`` - balanced routing: ``q = floor(T k / E)``, ``r = T k - E q`` experts get ``q + 1``,
  the rest ``q``: ``m_blocks = r ceil((q + 1)/B_M) + (E - r) ceil(q / B_M)``;
* ``moe.grouped.skewed`` - the most skewed routing: ``k`` experts take every token (``n_e = T``), the
  others none: ``m_blocks = k ceil(T / B_M)``;
* ``moe.grouped.uniform`` - uniform random routing (each token's ``k`` experts a uniformly random
  ``k``-subset): each ``n_e`` is binomial ``Bin(T, k/E)``, so by linearity
  ``E[m_blocks] = E sum_j C(T, j) (k/E)^j (1 - k/E)^(T-j) ceil(j / B_M)``, exact in
  :func:`uniform_expectation` up to ``T k <= 4096`` (its denominator is ``E^T``: beyond that it is refused,
  naming ``T``).  The model gives bounds valid at any ``T``: with ``mu = T k / E`` and
  ``ceil(x/B) >= max(x/B, [x >= 1])``, ``ceil(x/B) <= x/B + (B - 1)/B [x >= 1]``,
  ``P(n_e >= 1) <= min(1, mu)`` (union bound) and
  ``P(n_e = 0) = (1 - q)^T <= (1 - q)/(1 + (T - 1) q)`` (``(1 + n q)(1 - q)^n <= e^(nq) e^(-nq)``), so
  ``E max(mu/B_M, T k/(E + (T - 1) k)) <= E[m_blocks] <= E (mu/B_M + (B_M - 1)/B_M min(1, mu))``.

Bad input is :class:`~base.errors.BadInput` naming the parameter: ``k > E`` (``k``); a count vector of
the wrong length, with a negative entry, an entry above ``T`` or a sum other than ``T k`` (``counts``).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy as sp

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from ..asymptotics import Regime
from ..evaluate import compile_exact
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..registry import defines

__all__ = ["T", "E", "k", "N", "K", "B_M", "B_N", "B_K", "PARAMS", "DEFAULTS", "SOURCE", "DTYPES",
           "grouped_counts", "balanced_blocks", "skewed_blocks", "counts_blocks", "check_counts",
           "parse_counts", "balanced_counts", "skewed_counts", "grouped_for", "with_counts",
           "uniform_expectation", "uniform_bounds", "EXACT_EXPECTATION_MAX_PAIRS",
           "grouped", "skewed", "uniform"]

#: the output tensor (one row per pair), the names the notes use for it
_C = symbol("C")
T = param("T", "tokens routed through the layer")
E = param("E", "routed experts")
k = param("k", "experts per token (top-k; distinct experts)")
K = param("K", "input features: the reduction dimension")
N = param("N", note("output features of an expert: the columns of its weight, which has ", K, " rows"))
B_M = param("B_M", note("rows of one M-block: the (token, slot) pairs one program owns (", code("BLOCK_SIZE_M"), ")"),
            latex="B_M")
B_N = param("B_N", note("columns of ", _C, " one program computes (", code("BLOCK_SIZE_N"), ")"), latex="B_N")
B_K = param("B_K", note("K-step: the depth of the activation and weight chunks a program loads (",
                        code("BLOCK_SIZE_K"), ")"), latex="B_K")
PARAMS = (T, E, k, N, K, B_M, B_N, B_K)

#: Mixtral-8x7B's expert down projection (K = 14336 -> N = 4096) at 512 tokens, blocks of 64 x 128 x 64
DEFAULTS = {"T": 512, "E": 8, "k": 2, "N": 4096, "K": 14336, "B_M": 64, "B_N": 128, "B_K": 64}

SOURCE = note("vLLM ", code("vllm/model_executor/layers/fused_moe/moe_align_block_size.py"), " at 05be992, lines 63 "
              "(padding to ", code("BLOCK_M"), ") and 200 (the worst case, ", code("numel"), " plus ", E,
              " times one less than ", code("BLOCK_M"), "); ",
              code("vllm/model_executor/layers/fused_moe/fused_moe.py"), " at 13cb3e4, lines 313-538 (",
              code("fused_moe_kernel"), ") and 587-597 (the grid); ", code("csrc/moe/moe_align_sum_kernels.cu"), ", ",
              code("moe_sum_kernel"), " (the combine)")

#: the element type of each tensor class (bytes from base.dtypes)
DTYPES = {"activation": "bf16", "weight": "bf16", "index": "int32", "routing_weight": "fp32"}

#: the exact expectation is computed up to this many pairs (T k); beyond, it is refused naming T
EXACT_EXPECTATION_MAX_PAIRS = 4096


# ------------------------------------------------------------------------------------- counts
def grouped_counts(m_blocks) -> dict:
    """Every quantity of the grouped GEMM and combine (module docstring) given ``m_blocks``, the live
    M-blocks ``sum_e ceil(n_e / B_M)``: the only place the routing enters."""
    P = T * k
    t_n, t_k = sp.ceiling(N / B_N), sp.ceiling(K / B_K)
    padded = B_M * m_blocks
    programs = _programs()
    q = {
        "padded_rows": padded,
        "m_blocks": m_blocks,
        "programs": programs,
        "reads_A": t_n * P * K,
        "reads_W": m_blocks * N * K,
        "reads_sorted_ids": t_n * padded,
        "reads_expert_ids": t_n * m_blocks,
        "reads_num_padded": programs,
        "reads_topk_weights": t_n * P,
        "reads_combine": P * N,
        "writes_gemm": P * N,
        "writes_combine": T * N,
    }
    reads = sum(v for n, v in q.items() if n.startswith("reads_"))
    writes = q["writes_gemm"] + q["writes_combine"]
    e16, e32, f32 = (element_bytes(DTYPES[c]) for c in ("activation", "index", "routing_weight"))
    nbytes = (e16 * (q["reads_A"] + q["reads_W"] + q["reads_combine"] + writes)
              + e32 * (q["reads_sorted_ids"] + q["reads_expert_ids"] + q["reads_num_padded"])
              + f32 * q["reads_topk_weights"])
    return {"reads": reads, "writes": writes, "flops": 2 * P * N * K,
            "flops_padded": 2 * padded * (t_n * B_N) * (t_k * B_K), **q, "bytes": nbytes}


@lru_cache(maxsize=None)
def _programs() -> sp.Expr:
    """The programs launched, which no routing changes: built once (SymPy's ``Min`` compares its arguments on
    every construction, and a sweep builds a model per count vector)."""
    P = T * k
    em = P + E * (B_M - 1)                                    # the sorted_token_ids buffer (align :200)
    # fused_moe.py:589-593: when T < B_M the grid stops at T k B_M rows; Min(1, floor(T/B_M)) = [T >= B_M]
    em_launch = sp.Min(em, P * B_M + em * sp.Min(1, sp.floor(T / B_M)))
    return sp.ceiling(N / B_N) * sp.ceiling(em_launch / B_M)


def balanced_blocks():
    """``m_blocks`` of the balanced routing: ``r`` experts with ``q + 1`` pairs, ``E - r`` with ``q``."""
    q = sp.floor(T * k / E)
    r = T * k - E * q
    return r * sp.ceiling((q + 1) / B_M) + (E - r) * sp.ceiling(q / B_M)


def skewed_blocks():
    """``m_blocks`` of the most skewed routing: ``k`` experts with every token, ``E - k`` with none."""
    return k * sp.ceiling(T / B_M)


def counts_blocks(counts) -> sp.Expr:
    """``sum_e ceil(n_e / B_M)`` for a count vector, one term per distinct count (times how often it occurs)."""
    mult: dict = {}
    for n in counts:
        mult[n] = mult.get(n, 0) + 1
    return sp.Add(*(m * sp.ceiling(sp.Integer(n) / B_M) for n, m in sorted(mult.items()) if n))


UNITS = {"padded_rows": "rows", "m_blocks": "blocks", "programs": "programs", "flops_padded": "FLOP",
         "bytes": "bytes", **{n: "elements" for n in ("reads_A", "reads_W", "reads_sorted_ids", "reads_expert_ids",
                                                     "reads_num_padded", "reads_topk_weights", "reads_combine",
                                                     "writes_gemm", "writes_combine")}}

_NOTES = (
    note("sorted by expert, each expert's pairs padded to a multiple of ", B_M, ": ", code("padded_rows"),
         " is at most ", T * k + E * (B_M - 1), " (vLLM's buffer)"),
    note(code("reads_W"), ": an expert's weight is re-read by each of its M-blocks; ", code("reads_A"),
         " gathers each pair's token row once per tile column"),
    note("int32 index reads: ", B_M, " sorted ids and one expert id per live program, one padded-row count per "
         "launched program"),
    note(code("flops"), ": matrix products only; the routed-weight scaling and the combine's additions are not "
         "counted"),
    note("shared experts are a dense GEMM beside this one: ", code("gemm.tiled"), " with one row per token"),
)


def _validate_ke(pt):
    if pt["k"] > pt["E"]:
        raise BadInput("k", f"top-k picks k distinct experts: k = {pt['k']} exceeds E = {pt['E']}")


@lru_cache(maxsize=None)
def _regime() -> Regime:
    return Regime(note(sp.Le(B_M, T), ", ", sp.Le(B_N, N), ", ", sp.Le(B_K, K), ", ", sp.Le(E, T), ", ",
                       sp.Le(k, E)),
                  le=((B_M, T), (B_N, N), (B_K, K), (E, T), (k, E)), subs={sp.Min(1, sp.floor(T / B_M)): 1})


def _model(name, summary, m_blocks, notes=(), validate_point=_validate_ke, defaults=DEFAULTS, inputs=None):
    t, u, v = (sp.Dummy(n, integer=True, positive=True) for n in ("t", "u", "v"))
    return Model(
        name, summary, grouped_counts(m_blocks), params=PARAMS, units=UNITS,
        divisible_subs={T: E * B_M * t, N: B_N * u, K: B_K * v},
        regime=_regime(),
        asymptotic_quantity="total", defaults=defaults, source=SOURCE, notes=_NOTES + tuple(notes),
        validate=validate_point, inputs=inputs or {})


@defines("moe.grouped", "MoE grouped GEMM (vLLM fused_moe) + top-k combine, balanced routing; counts= for any routing")
def grouped():
    return _model("moe.grouped", note("grouped expert GEMM with block padding and the top-", k,
                                      " combine, balanced routing"),
                  balanced_blocks(),
                  notes=(note("balanced routing: ", sp.Mod(T * k, E), " experts get ", sp.floor(T * k / E) + 1,
                              " pairs, the others ", sp.floor(T * k / E), "; any count vector: ",
                              code("symbolic.models.moe.grouped_for(counts)"), ", or ", code("--counts"),
                              " on the command line"),),
                  inputs={"counts": lambda text: grouped_for(parse_counts(text))})


@defines("moe.grouped.skewed", "MoE grouped GEMM + combine, most skewed routing: k experts take every token")
def skewed():
    return _model("moe.grouped.skewed", note("grouped expert GEMM and combine when ", k, " experts take all ", T,
                                             " tokens"),
                  skewed_blocks(), notes=(note("most skewed routing: ", k, " experts get ", T,
                                               " pairs each, the other ", E - k, " none"),))


# ------------------------------------------------------------------------------------- count vectors
def check_counts(counts) -> tuple:
    """``counts`` as a tuple of ints ``>= 0`` (at least one); :class:`BadInput` naming ``counts``."""
    if isinstance(counts, (str, bytes)) or not hasattr(counts, "__iter__"):
        raise BadInput("counts", f"a sequence of pair counts per expert, got {counts!r}")
    out = tuple(validate.integer("counts", n, 0) for n in counts)
    if not out:
        raise BadInput("counts", "no experts: give one count per expert")
    return out


def parse_counts(text: str) -> tuple:
    """``"7,0,13"`` -> ``(7, 0, 13)`` (what a command line's ``--counts`` takes); :class:`BadInput` naming
    ``counts`` for anything else."""
    parts = [p.strip() for p in str(text).split(",")]
    if not all(p.lstrip("-").isdigit() for p in parts):
        raise BadInput("counts", f"comma-separated integers, one per expert (e.g. 7,0,13), got {text!r}")
    return check_counts(int(p) for p in parts)


def _consistent(counts):
    def check(pt):
        _validate_ke(pt)
        if len(counts) != pt["E"]:
            raise BadInput("counts", f"{len(counts)} counts for E = {pt['E']} experts: give one per expert")
        total, pairs = sum(counts), pt["T"] * pt["k"]
        if total != pairs:
            hint = f"; T = {total // pt['k']} fits" if total % pt["k"] == 0 else ""
            raise BadInput("counts", f"the counts sum to {total:,}, not T k = {pt['T']:,} x {pt['k']} = {pairs:,}{hint}")
        worst = max(counts)
        if worst > pt["T"]:
            raise BadInput("counts", f"an expert gets {worst:,} pairs, more than T = {pt['T']:,} tokens "
                                     "(top-k picks k distinct experts per token)")
    return check


@lru_cache(maxsize=256)
def _for_sorted(counts: tuple) -> Model:
    total = sum(counts)
    return _model("moe.grouped", note("grouped expert GEMM and combine for the routing ",
                                      sp.Eq(_n, _shown(counts), evaluate=False)),
                  counts_blocks(counts),
                  notes=(note("the routing given: ", len(counts), " experts, ", sum(1 for n in counts if n == 0),
                              " of them with no pairs"),),
                  validate_point=_consistent(counts),
                  defaults={**DEFAULTS, "E": len(counts), "k": 1, "T": max(total, 1)})


_n = symbol("n")
_MORE = symbol("...", r"\ldots")


def _shown(counts) -> sp.Tuple:
    """The count vector as math, cut after ten entries when it has more than twelve."""
    shown = counts if len(counts) <= 12 else counts[:10]
    return sp.Tuple(*shown, *(() if len(counts) <= 12 else (_MORE,)))


def grouped_for(counts) -> Model:
    """The ``moe.grouped`` model for one routing: ``counts[e]`` pairs to expert ``e``.  Its parameters are the
    registered model's; a point must agree with the counts (``E = len(counts)``, ``sum = T k``,
    each ``<= T``), else :class:`BadInput` naming ``counts``.  Defaults: ``E = len(counts)``, ``k = 1``,
    ``T = sum(counts)``.  The counts enter through ``m_blocks`` alone, so their order does not matter."""
    return _for_sorted(tuple(sorted(check_counts(counts))))


def with_counts(model, counts):
    """``model`` evaluated for the routing ``counts``: :func:`grouped_for` when ``model`` is ``moe.grouped``
    (a name, a registry entry or a model), and :class:`BadInput` naming ``counts`` for any other model - the
    hook a command line's ``--counts`` calls."""
    name = model if isinstance(model, str) else getattr(model, "name", None)
    if name != "moe.grouped":
        raise BadInput("counts", f"{name} takes no count vector (only moe.grouped does)")
    return grouped_for(counts)


def balanced_counts(T: int, E: int, k: int) -> tuple:
    """The balanced count vector: the first ``T k mod E`` experts get one pair more."""
    q, r = divmod(T * k, E)
    return tuple(q + 1 if e < r else q for e in range(E))


def skewed_counts(T: int, E: int, k: int) -> tuple:
    """The most skewed count vector: ``k`` experts with ``T`` pairs, ``E - k`` with none."""
    return tuple(T if e < k else 0 for e in range(E))


# ------------------------------------------------------------------------------------- uniform routing
_M_B = sp.Symbol("m_blocks_value", positive=True)


@lru_cache(maxsize=1)
def _by_blocks():
    return {q: compile_exact(v, PARAMS + (_M_B,)) for q, v in grouped_counts(_M_B).items()}


def _point(point) -> dict:
    return grouped.check_point(point)


def uniform_expectation(*, max_pairs: int = EXACT_EXPECTATION_MAX_PAIRS, **point) -> dict:
    """Every quantity's exact expectation (an int or Fraction) under uniform random routing (module
    docstring), at a point of ``moe.grouped``'s parameters (missing ones take its defaults).  ``T k`` above
    ``max_pairs`` (:data:`EXACT_EXPECTATION_MAX_PAIRS`) is refused with :class:`BadInput` naming ``T`` (the
    value's denominator is ``E^T``); :func:`uniform_bounds` holds at any size."""
    pt = _point(point)
    t, e, kk, bm = pt["T"], pt["E"], pt["k"], pt["B_M"]
    validate.budget("T", t * kk, max_pairs, f"pairs (T k = {t:,} x {kk})", "max_pairs",
                    "the exact expectation's denominator is E^T: take the bounds, uniform_bounds()")
    # E[ceil(n_e / B_M)] with n_e ~ Bin(T, k/E):  sum_j C(T, j) k^j (E - k)^(T - j) ceil(j / B_M) / E^T, the
    # terms by their ratio C(T, j+1) k^(j+1) (E-k)^(T-j-1) = C(T, j) k^j (E-k)^(T-j) (T - j) k / ((j + 1)(E - k))
    if kk == e:                                   # every expert takes every token
        num = -(-t // bm)
    else:
        term, num = (e - kk) ** t, 0
        for j in range(t + 1):
            num += term * (-(-j // bm))
            term = term * (t - j) * kk // ((j + 1) * (e - kk))
    m_blocks = Fraction(e * num, e ** t if kk != e else 1)
    return {q: f(**pt, m_blocks_value=m_blocks) for q, f in _by_blocks().items()}


def _bound_blocks():
    mu = T * k / E
    lower = E * sp.Max(mu / B_M, T * k / (E + (T - 1) * k))
    upper = E * (mu / B_M + (B_M - 1) / B_M * sp.Min(1, mu))
    return lower, upper


#: the routing-dependent quantities moe.grouped.uniform bounds (every other one that depends on the routing,
#: as all do, through m_blocks and linearly, follows from the bounds on m_blocks)
ROUTED = ("m_blocks", "padded_rows", "reads_W", "flops_padded", "bytes")


_BOUND_UNITS = {**UNITS, "reads": "elements"}


@defines("moe.grouped.uniform", "MoE grouped GEMM + combine, uniform random routing: bounds on the expectation")
def uniform():
    lo, hi = _bound_blocks()
    q_lo, q_hi = grouped_counts(lo), grouped_counts(hi)
    qs = {}
    for name in ROUTED:
        qs[f"{name}_lower"] = q_lo[name]
        qs[f"{name}_upper"] = q_hi[name]
    t = sp.Dummy("t", integer=True, positive=True)
    return Model(
        "moe.grouped.uniform", note("bounds on the expected counts under uniform random top-", k, " routing"),
        qs,
        params=PARAMS, units={n: _BOUND_UNITS[n.rsplit("_", 1)[0]] for n in qs},
        divisible_subs={T: E * B_M * t},
        regime=Regime(note(sp.Le(B_M, T), ", ", sp.Le(E, T), ", ", sp.Le(k, E)), le=((B_M, T), (E, T), (k, E)),
                      subs={sp.Min(1, T * k / E): 1, sp.Min(1, sp.floor(T / B_M)): 1}),
        asymptotic_quantity="padded_rows_upper", defaults=DEFAULTS, source=SOURCE,
        notes=(note("each expert's count is binomial, ", T, " trials of probability ", k / E,
                    " (a uniformly random subset of ", k, " experts per token); the exact expectation: ",
                    code("symbolic.models.moe.uniform_expectation"), ", up to ",
                    sp.Integer(EXACT_EXPECTATION_MAX_PAIRS), " pairs"),
               note("lower: ", sp.Max(T * k / (E * B_M), T * k / (E + (T - 1) * k)),
                    " blocks per expert; upper: ", T * k / (E * B_M) + (B_M - 1) / B_M * sp.Min(1, T * k / E))),
        validate=_validate_ke)


def uniform_bounds(**point) -> dict:
    """``{quantity: (lower, upper)}`` for the routed quantities (:data:`ROUTED`) under uniform random
    routing, exact rationals at any size (model ``moe.grouped.uniform``)."""
    v = uniform.evaluate(**point)
    return {q: (v[f"{q}_lower"], v[f"{q}_upper"]) for q in ROUTED}
