"""Decoding attention: split-KV ("flash-decoding"), grouped-query packing, paged KV caches.

Sources (cited by file and line; the commits read are named in ``docs/decoding.md``): Dao, Haziza, Massa,
Sizov, *Flash-Decoding for long-context inference* (Stanford CRFM / PyTorch blog, October 2023);
FlashAttention-2 ``csrc/flash_attn/flash_api.cpp`` and ``csrc/flash_attn/src/flash_fwd_kernel.h``;
vLLM ``csrc/attention/attention_kernels.cu``; ``docs/conventions.md`` §6 (decoding) and §1.0 (units).

**The kernel counted.**  ``B`` sequences, each with ``L_q`` query tokens against ``N_k`` cached keys;
``H`` query heads share ``H_kv`` key/value heads in groups of ``g = H / H_kv``.  The keys are cut into
``nb = ceil(N_k / B_n)`` key blocks and the blocks into ``S`` splits of ``nbps = ceil(nb / S)`` blocks:
split ``s`` takes blocks ``[s nbps, min(nb, (s + 1) nbps))`` (``flash_fwd_kernel.h:535-539``).  One CTA
runs one (sequence, head group, split):

* **packed** (FlashAttention-2's decode path: ``flash_api.cpp:429-437`` reshapes ``Q`` so that the ``g``
  query heads of one KV head are the rows of one CTA) - ``H_kv`` CTAs per sequence and split, each
  holding ``g L_q`` query rows (assumed to fit one row block: FA2's ``kBlockM`` is 64);
* **unpacked** (vLLM's paged kernel: grid ``(num_heads, num_seqs, max_num_partitions)``, one CTA per
  *query* head, ``kv_head_idx = head_idx / num_queries_per_kv``) - ``H`` CTAs, ``L_q`` rows each.

A CTA whose split holds blocks loads its ``Q`` rows (each split reloads them), then every key and value
row of its blocks once (a masked load moves the valid rows only, ``docs/conventions.md`` §1.7).  A split
that holds no block (``s nbps >= nb``: it happens when ``S > nb`` or when ``ceil(nb / nbps) < S``) exits
before it loads anything, but still writes its partials, ``O_s = 0`` and ``LSE_s = -inf``
(``flash_fwd_kernel.h:543-585``; ``Q`` is loaded only at ``:795``).  So ``S_ne = ceil(nb / nbps)`` splits
load ``Q``.  With ``S > 1`` every split writes ``O_s`` (``d_v`` per row) and ``LSE_s`` (one per row) in
FP32 (``flash_api.cpp:337-339``), and the combine kernel reads all ``S`` of them and writes ``O`` and
the final ``LSE`` (``flash_fwd_kernel.h:1117-1299``: the ``LSE`` of every split, then one ``O_accum``
tile per split).  With ``S = 1`` there are no partials and no combine: the kernel writes ``O`` and
``LSE`` itself.

**Paged KV** (``P`` tokens a page; an int32 block table per sequence).  The element reads of ``K`` and
``V`` do not change: only valid tokens are read, wherever their page lies.  A key block looks up the
table entry of each page it touches (FA2's loop reads ``block_table[n_block * kBlockN /
page_block_size]`` per key block, ``flash_fwd_kernel.h:949-957`` for V and ``:977-981`` for K).  Block
``j`` covers keys ``[j B_n, min(N_k, (j+1) B_n))``; summed over the blocks, the pages touched telescope to
the ``ceil(N_k / P)`` pages of the sequence plus one for each block boundary ``j B_n`` (``1 <= j < nb``)
that falls inside a page, i.e. that ``P`` does not divide.  ``P`` divides ``j B_n`` exactly when
``P / gcd(P, B_n)`` divides ``j``, so a head group reads, per sequence and whatever the split count,

    ceil(N_k / P) + (nb - 1) - floor((nb - 1) gcd(P, B_n) / P)

table entries: ``ceil(N_k / P)`` when ``P`` divides ``B_n`` (vLLM's pages of 16 tokens), ``nb`` when ``B_n``
divides ``P`` (FA2: pages of 256 k tokens, ``flash_api.cpp:613``, with ``B_n <= 256``).

**Derivation** (``R = B H L_q`` query rows in the batch, ``G`` CTAs per sequence and split: ``H_kv``
packed, ``H`` unpacked, ``[S > 1]`` the indicator of a split launch).  Summing the valid rows of the
blocks of one sequence gives ``N_k`` (the blocks partition the keys), so::

    reads_Q     = R d S_ne                      S_ne = ceil(nb / nbps) splits that hold blocks
    reads_K     = B G N_k d,   reads_V = B G N_k d_v
    reads_table = B G (ceil(N_k/P) + (nb - 1) - floor((nb - 1) gcd(P, B_n)/P))   (paged models only)
    writes_O_s  = reads_O_s   = [S > 1] R S d_v                    (FP32)
    writes_LSE_s = reads_LSE_s = [S > 1] R S                       (FP32)
    writes_O    = R d_v,        writes_LSE = R                     (LSE in FP32)
    flops       = 2 R N_k (d + d_v)       (QK^T and PV on the valid keys; the combine is not a matmul, §1.0)

Bytes use each tensor's own element size (:mod:`base.dtypes`): ``Q, K, V, O`` in FP16/BF16 (2 bytes),
the partials and ``LSE`` in FP32, the block table in int32.  The **split overhead** over ``S = 1`` is::

    split_overhead = R (d (S_ne - 1) + 2 [S > 1] S (d_v + 1))            elements

The ``K``/``V`` traffic does not change with ``S``.  ``S_ne = S`` for every split count that leaves no
split empty: whenever ``B_n S`` divides ``N_k`` (the form shown as "divisible"), and for every count
FA2's heuristic may choose (its eligibility test, ``flash_api.cpp:293-295``, admits ``S <= nb`` only
when ``ceil(nb/S) < ceil(nb/(S-1))``, i.e. ``nb > (S-1) ceil(nb/S)``, i.e. ``S_ne = S``).  There the
overhead is ``R (d (S - 1) + 2 S (d_v + 1))``: it does not depend on ``N_k``.

**One length.**  These closed forms take one ``N_k`` for the whole batch.  A ragged batch (one length a
sequence) is the sum of the models at ``B = 1`` over its sequences, each split by its own ``nbps``; the
executor (:func:`numeric.decode.run_decode`) runs ragged batches and ``verify/checks/decode.py`` checks
that sum.  NOTE: FlashAttention-2 sizes ``nbps`` from the batch's *longest* sequence (``params.seqlen_k``
at ``flash_fwd_kernel.h:535``), so a short sequence of a ragged batch has more empty splits there.

**The time model** (``decode.time``) is a separate model below, with its assumptions stated there.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import sympy as sp

from base.dtypes import element_bytes
from base.errors import BadInput

from ..asymptotics import Regime
from ..floorsum import gcd
from ..hardware import H100, LOADED_HBM_LATENCY, UNLOADED_L2_LATENCY_CLK
from ..model import Model
from ..notes import code, note, symbol
from ..params import param, real_param
from ..registry import ModelRef, defines

__all__ = ["B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S", "P", "n_SM", "c_SM", "BW", "L", "L_2",
           "decode_packed", "decode_unpacked", "decode_packed_paged", "decode_unpacked_paged", "decode_time",
           "COUNT_MODELS", "DTYPES", "TENSOR_CLASSES", "counts", "totals", "split_counts",
           "COMBINE_ROWS_PER_CTA", "COMBINE_CTAS_PER_SM", "check_decode_point", "table_entries", "SplitLaunch"]

# ------------------------------------------------------------------------------------------ parameters
# the names the notes use that are not parameters: the tensors, and the listing's abbreviations
_Q, _K, _V, _O = (symbol(n) for n in ("Q", "K", "V", "O"))
_LSE = symbol("LSE", r"\mathrm{LSE}")
_n_b, _n_bps, _S_ne = symbol("n_b"), symbol("n_bps"), symbol("S_ne")

B = param("B", "sequences in the batch")
H = param("H", "query heads")
H_kv = param("H_kv", note("key/value heads; their number divides ", H, " and each serves an equal group of query "
                          "heads"), latex="H_{kv}")
L_q = param("L_q", "query tokens per sequence (1 when decoding, more for speculative decoding)", latex="L_{q}")
N_k = param("N_k", "cached keys per sequence", latex="N_{k}")
d = param("d", note("head dimension of ", _Q, " and ", _K))
d_v = param("d_v", note("head dimension of ", _V, " and ", _O), latex="d_{v}")
B_n = param("B_n", note("keys per key block (FlashAttention-2's ", code("kBlockN"), ")"), latex="B_{n}")
S = param("S", note("splits of the keys (", code("num_splits"), ")"))
P = param("P", "tokens per page of the paged KV cache")

n_SM = param("n_SM", "streaming multiprocessors", latex="n_{SM}")
c_SM = param("c_SM", note("split-kernel CTAs resident per SM (FA2 assumes 2: ", code("flash_api.cpp:334"), ")"),
             latex="c_{SM}")
BW = real_param("BW", "HBM bandwidth (bytes/s)", latex="BW")
L = real_param("L", "loaded HBM latency, issue to data (s)", latex="L")
L_2 = real_param("L_2", "L2 hit latency of a combine load (s)", latex="L_{2}")

#: the element type of each tensor class (bytes from base.dtypes): inputs and O in FP16/BF16, the
#: partials and LSE in FP32 (flash_api.cpp:338-339), the block table int32 (flash_api.cpp:591)
DTYPES = {"Q": "fp16", "K": "fp16", "V": "fp16", "O": "fp16", "LSE": "fp32", "O_s": "fp32", "LSE_s": "fp32",
          "table": "int32"}
#: one model serves both 16-bit input types: base.dtypes gives FP16 and BF16 two bytes each

#: the quantities per tensor class, in the order shown: (quantity, tensor class)
TENSOR_CLASSES = (("reads_Q", "Q"), ("reads_K", "K"), ("reads_V", "V"), ("reads_table", "table"),
                  ("reads_O_s", "O_s"), ("reads_LSE_s", "LSE_s"), ("writes_O_s", "O_s"),
                  ("writes_LSE_s", "LSE_s"), ("writes_O", "O"), ("writes_LSE", "LSE"))

#: rows per combine CTA for d_v % 128 == 0 (flash_fwd_launch_template.h:140: 4, 8 or 16 by head dim)
COMBINE_ROWS_PER_CTA = 4
#: combine CTAs of 128 threads resident per SM: 64 warps per SM (docs/conventions.md §3.2) / 4 warps
COMBINE_CTAS_PER_SM = 16

_SOURCE = note("Dao, Haziza, Massa, Sizov 2023, Flash-Decoding for long-context inference; FlashAttention-2 ",
               code("csrc/flash_attn/flash_api.cpp"), ":281-347, 429-437, 613 and ", code("src/flash_fwd_kernel.h"),
               ":535-585, 944-987, 1117-1299; vLLM ", code("csrc/attention/attention_kernels.cu"), " (",
               code("paged_attention_kernel"), ", unpacked grid); ", code("docs/conventions.md"), " §6")


def check_decode_point(pt) -> None:
    """The constraint every decode model shares: ``H_kv`` divides ``H`` (:class:`BadInput` naming
    ``H_kv``); the splits ``S >= 1`` and every size ``>= 1`` come from the parameters themselves."""
    if pt["H"] % pt["H_kv"]:
        raise BadInput("H_kv", f"must divide H (g = H/H_kv query heads share a KV head), got H={pt['H']}, "
                               f"H_kv={pt['H_kv']}")


# ------------------------------------------------------------------------------------------ counts
class SplitLaunch(sp.Function):
    """``[S > 1]`` (an Iverson bracket): 1 when the keys are split - partials and a combine kernel - and 0
    for ``S = 1``, where the kernel writes ``O`` and ``LSE`` itself.  One opaque factor, so that SymPy
    simplifies the forms around it quickly; exact evaluation through :meth:`exact_value`."""

    nargs = 1
    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, s):
        if s.is_Integer:
            return sp.Integer(1 if s > 1 else 0)
        return None

    @staticmethod
    def exact_value(s: int) -> int:
        return 1 if s > 1 else 0

    def _tilebound_text(self, printer):
        return f"[{printer._print(self.args[0])} > 1]"

    def _tilebound_latex(self, printer, exp=None):
        tex = rf"\left[{printer._print(self.args[0])} > 1\right]"
        return f"{tex}^{{{exp}}}" if exp else tex

    _sympystr = _tilebound_text
    _latex = _tilebound_latex


def split_counts():
    """``(nb, nbps, S_ne, split)``: key blocks, blocks per split, splits holding blocks, ``[S > 1]``."""
    nb = sp.ceiling(N_k / B_n)
    nbps = sp.ceiling(nb / S)
    s_ne = sp.ceiling(nb / nbps)
    return nb, nbps, s_ne, SplitLaunch(S)


def table_entries(divisible: bool = False) -> sp.Expr:
    """Block-table entries one head group reads per sequence: the pages each key block touches, summed
    (module docstring): ``ceil(N_k/P) + (nb - 1) - floor((nb - 1) gcd(P, B_n) / P)``."""
    nb = N_k / B_n if divisible else sp.ceiling(N_k / B_n)
    return sp.ceiling(N_k / P) + (nb - 1) - sp.floor((nb - 1) * gcd(P, B_n) / P)


def counts(packed: bool, paged: bool, divisible: bool = False) -> dict:
    """Elements per tensor class, totals, bytes, FLOPs, CTAs and the split overhead (module docstring).
    ``divisible``: the same loops when ``B_n S`` divides ``N_k`` - ``nb = N_k/B_n`` blocks, ``nbps =
    N_k/(B_n S)`` a split, every split holding blocks (``S_ne = S``)."""
    nb, nbps, s_ne, split = split_counts()
    if divisible:
        s_ne = S
    G = H_kv if packed else H
    R = B * H * L_q
    q = {
        "reads_Q": R * d * s_ne,
        "reads_K": B * G * N_k * d,
        "reads_V": B * G * N_k * d_v,
        "reads_table": B * G * table_entries(divisible) if paged else sp.Integer(0),
        "reads_O_s": split * R * S * d_v,
        "reads_LSE_s": split * R * S,
        "writes_O_s": split * R * S * d_v,
        "writes_LSE_s": split * R * S,
        "writes_O": R * d_v,
        "writes_LSE": R,
    }
    if not paged:
        del q["reads_table"]
    return totals(q, R=R, G=G, keys=N_k, s_ne=s_ne, split=split)


def totals(q: dict, *, R, G, keys, s_ne, split) -> dict:
    """The per-class elements ``q`` (``reads_*``, ``writes_*``) with what every split-KV decode model derives
    from them: totals, bytes at each class's element size (``TENSOR_CLASSES``), FLOPs ``2 R keys (d + d_v)``
    over the ``keys`` each query row scores, intensity, CTAs, and the split overhead (the ``S_ne - 1`` extra
    query loads and the partials' round trip).  Shared by the contiguous, paged and windowed models."""
    reads = sp.Add(*[v for k, v in q.items() if k.startswith("reads_")])
    writes = sp.Add(*[v for k, v in q.items() if k.startswith("writes_")])
    size = {k: element_bytes(DTYPES[c]) for k, c in TENSOR_CLASSES}
    bytes_read = sp.Add(*[size[k] * v for k, v in q.items() if k.startswith("reads_")])
    bytes_written = sp.Add(*[size[k] * v for k, v in q.items() if k.startswith("writes_")])
    flops = 2 * R * keys * (d + d_v)
    e, f32 = element_bytes("fp16"), element_bytes("fp32")
    return {
        "reads": reads, "writes": writes, "flops": flops, **q,
        "bytes_read": bytes_read, "bytes_written": bytes_written, "bytes": bytes_read + bytes_written,
        "intensity": flops / (bytes_read + bytes_written),
        "ctas": B * G * S,
        "split_overhead": R * (d * (s_ne - 1) + 2 * split * S * (d_v + 1)),
        "split_overhead_bytes": R * (e * d * (s_ne - 1) + 2 * f32 * split * S * (d_v + 1)),
    }


def _units(paged: bool) -> dict:
    u = {k: "elements" for k, _ in TENSOR_CLASSES if paged or k != "reads_table"}
    u.update({"bytes_read": "bytes", "bytes_written": "bytes", "bytes": "bytes", "intensity": "FLOP/byte",
              "ctas": "1", "split_overhead": "elements", "split_overhead_bytes": "bytes"})
    return u


def _regime(packed: bool, paged: bool) -> Regime:
    """Long decoding, split launches: the query rows of the batch times the splits stay within the key
    rows read (``g L_q S <= N_k``: so when every split holds blocks, ``S B_n <= N_k``, and a CTA's rows
    fit one key block, ``g L_q <= B_n``); ``S >= 2``; paged, the table term at ``P | B_n``."""
    _, _, _, split = split_counts()
    rows = (H * L_q * S, H_kv * N_k) if packed else (L_q * S, N_k)
    subs = {split: 1}
    if paged:
        subs[gcd(P, B_n)] = P        # the table term is of lower order whatever the page size; taken at P | B_n
    return Regime(note(sp.Le(*rows), ", ", sp.Ge(S, 2), *((", ", P, " divides ", B_n) if paged else ())),
                  le=(rows,), subs=subs)


def _build(name: str, packed: bool, paged: bool) -> Model:
    params = (B, H, H_kv, L_q, N_k, d, d_v, B_n, S) + ((P,) if paged else ())
    defaults = {"B": 1, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 32768, "d": 128, "d_v": 128, "B_n": 128, "S": 1}
    if paged:
        defaults["P"] = 256
    e = element_bytes("fp16")
    return Model(
        name, f"split-KV decode, {'packed GQA (one CTA per KV head)' if packed else 'one CTA per query head'}"
              f"{', paged KV' if paged else ''}: HBM traffic per tensor class",
        counts(packed, paged),
        params=params,
        units=_units(paged),
        divisible_forms=counts(packed, paged, divisible=True),
        divisible_note=note(B_n * S, " divides ", N_k, ": every split holds ", N_k / (B_n * S),
                            " key blocks, none is empty"),
        regime=_regime(packed, paged),
        asymptotic_quantity="bytes",
        lower_bounds={note("compulsory: ", _K, ", ", _V, f" once per {'KV' if packed else 'query'} head, ", _Q,
                           " once, ", _O, " once (bytes)"):
                      e * (B * (H_kv if packed else H) * N_k * (d + d_v) + B * H * L_q * (d + d_v))},
        defaults=defaults,
        source=_SOURCE,
        notes=(note(H_kv if packed else H, " CTAs per sequence and split, ", H * L_q / H_kv if packed else L_q,
                    " query rows each; ", _K, " and ", _V, " read once per CTA group: the unpacked/packed ratio of ",
                    _K, ", ", _V, " reads is ", H / H_kv),
               note(sp.Eq(_S_ne, sp.ceiling(_n_b / _n_bps)), " splits load ", _Q, " (", sp.Eq(_n_b, sp.ceiling(N_k / B_n)),
                    " key blocks, ", sp.Eq(_n_bps, sp.ceiling(_n_b / S)), " a split); an empty split writes only its "
                    "partials (", sp.Integer(0), " and ", -sp.oo, ")"),
               note("partials and ", _LSE, " are FP32, ", _Q, ", ", _K, ", ", _V, ", ", _O, " FP16 or BF16",
                    ", the block table int32" if paged else ""),
               note("one ", N_k, " for the whole batch: a ragged batch is the sum over its sequences at ", sp.Eq(B, 1)),
               note(code("split_overhead"), ": the total at ", S, " splits less the total at ", sp.Eq(S, 1),
                    "; it is free of ", N_k, " when ", B_n * S, " divides ", N_k, " (divisible form)"))
        + ((note("a key block reads the table entries of the pages it touches: ", sp.ceiling(N_k / P),
                 " per head group and sequence when ", P, " divides ", B_n, ", ", sp.ceiling(N_k / B_n), " when ",
                 B_n, " divides ", P),) if paged else ()),
        validate=check_decode_point,
    )


decode_packed = ModelRef("decode.packed", "split-KV decode, GQA packed (FA2's decode path), contiguous KV: "
                         "reads/writes per tensor class, bytes, FLOPs", partial(_build, "decode.packed", True, False))
decode_unpacked = ModelRef("decode.unpacked", "split-KV decode, one CTA per query head (vLLM's grid), "
                           "contiguous KV", partial(_build, "decode.unpacked", False, False))
decode_packed_paged = ModelRef("decode.packed.paged", "split-KV decode, GQA packed, paged KV (int32 block table)",
                               partial(_build, "decode.packed.paged", True, True))
decode_unpacked_paged = ModelRef("decode.unpacked.paged", "split-KV decode, one CTA per query head, paged KV",
                                 partial(_build, "decode.unpacked.paged", False, True))

COUNT_MODELS = (decode_packed, decode_unpacked, decode_packed_paged, decode_unpacked_paged)


# ------------------------------------------------------------------------------------------ time model
@defines("decode.time", "split-KV decode time on a GPU: waves of CTAs, Little's law per CTA, HBM roofline, "
                        "combine kernel")
def decode_time() -> Model:
    """Time of the packed, contiguous split-KV decode (FA2's decode path) - a model, exact in its figures.

    Assumptions, each with its source:

    1. *Grid.*  ``B H_kv S`` CTAs (the packed grid above), ``c_SM`` resident per SM: FA2 sizes its
       split count for ``2 x SMs`` slots, "we're using 128 threads per block" (``flash_api.cpp:334-335``).
       They run in ``waves = ceil(ctas / slots)`` waves; FA2's own measure of the last wave's waste is
       ``wave_efficiency = (ctas/slots) / waves`` (``flash_api.cpp:300-301``).
    2. *One CTA's bandwidth: Little's law* (Little 1961; ``docs/conventions.md`` §5.1).  FA2's main loop
       waits for every tile it has issued before it issues the next (``cp_async_wait<0>`` at
       ``flash_fwd_kernel.h:947`` and ``:970``): one ``K`` or ``V`` tile is in flight at a time, so a
       CTA pays two loaded latencies ``L`` per key block and its bandwidth is
       ``B_n (d + d_v) e / (2 L)`` (``cta_bandwidth``; ``e = 2`` bytes).  The busiest CTA holds ``nbps``
       blocks: ``t_cta = 2 L nbps``.  ``L`` defaults to the latency layer's loaded HBM latency
       (``symbolic.hardware.LOADED_HBM_LATENCY``, 700 ns, an assumption of the course's model).
    3. *HBM roofline.*  A wave of ``a`` CTAs takes ``max(t_cta, a cta_bytes / BW)`` (its CTAs move
       their ``K``, ``V`` bytes at once over the shared HBM); the main kernel takes the sum over its
       waves, and no less than all its bytes over ``BW``.
    4. *The combine kernel* (``S > 1``).  Its CTAs read the ``S`` partial ``LSE`` at once, then loop over
       the splits reading one ``O_accum`` tile per iteration (``flash_fwd_kernel.h:1252-1270``): ``S + 1``
       dependent loads, each an L2 hit (the partials were just written and are far smaller than L2), at
       the L2 latency ``L_2`` (default: Luo et al.'s 262 cycles, ``symbolic.hardware``, at 1.83 GHz).
       ``ceil(B H L_q / 4)`` CTAs of 4 rows (``flash_fwd_launch_template.h:140``), 16 resident per SM.
       It takes ``max((S + 1) L_2 waves_c, combine bytes / BW)``.
    5. Kernel launches, the ``Q`` load and the epilogue cost nothing more; ``g L_q <= 64`` (one row
       block per CTA).

    ``hbm_fraction = (bytes / BW) / time``: the share of the HBM roofline reached.
    """
    e, f32 = element_bytes("fp16"), element_bytes("fp32")
    nb, nbps, s_ne, split = split_counts()
    c = counts(packed=True, paged=False)
    R = B * H * L_q
    ctas = B * H_kv * S
    slots = c_SM * n_SM
    waves = sp.ceiling(ctas / slots)
    last = ctas - (waves - 1) * slots
    cta_bytes = e * sp.Min(N_k, nbps * B_n) * (d + d_v)
    t_cta = 2 * L * nbps
    main_bytes = e * (c["reads_Q"] + c["reads_K"] + c["reads_V"]) + f32 * (c["writes_O_s"] + c["writes_LSE_s"]) \
        + (1 - split) * (e * c["writes_O"] + f32 * c["writes_LSE"])
    t_main = sp.Max((waves - 1) * sp.Max(t_cta, slots * cta_bytes / BW) + sp.Max(t_cta, last * cta_bytes / BW),
                    main_bytes / BW)
    combine_bytes = f32 * (c["reads_O_s"] + c["reads_LSE_s"]) + e * c["writes_O"] + f32 * c["writes_LSE"]
    waves_c = sp.ceiling(sp.ceiling(R / COMBINE_ROWS_PER_CTA) / (COMBINE_CTAS_PER_SM * n_SM))
    t_combine = split * sp.Max((S + 1) * L_2 * waves_c, combine_bytes / BW)
    time = t_main + t_combine
    total_bytes = c["bytes"]            # = main_bytes + [S > 1] combine_bytes (tests/unit/test_decode_time.py)
    l2 = Fraction(UNLOADED_L2_LATENCY_CLK.value) / H100.clock_hz
    return Model(
        "decode.time", "split-KV decode time: waves over SMs, Little's law per CTA, HBM roofline, combine",
        {"time": time, "t_main": t_main, "t_combine": t_combine, "hbm_fraction": total_bytes / (BW * time),
         "t_roofline": total_bytes / BW, "bytes": total_bytes, "bytes_main": main_bytes,
         "bytes_combine": split * combine_bytes, "ctas": ctas, "waves": waves,
         "wave_efficiency": ctas / (slots * waves), "t_cta": t_cta,
         "cta_bandwidth": B_n * (d + d_v) * e / (2 * L)},
        params=(B, H, H_kv, L_q, N_k, d, d_v, B_n, S, n_SM, c_SM, BW, L, L_2),
        units={"time": "s", "t_main": "s", "t_combine": "s", "hbm_fraction": "1", "t_roofline": "s",
               "bytes": "bytes", "bytes_main": "bytes", "bytes_combine": "bytes", "ctas": "1", "waves": "1", "wave_efficiency": "1", "t_cta": "s",
               "cta_bandwidth": "bytes/s"},
        regime=_regime(True, False),
        asymptotic_quantity="bytes",
        defaults={"B": 1, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 32768, "d": 128, "d_v": 128, "B_n": 128, "S": 1,
                  "n_SM": H100.sms, "c_SM": 2, "BW": H100.hbm_bytes_per_s, "L": LOADED_HBM_LATENCY.value,
                  "L_2": l2},
        source=note("FlashAttention-2 ", code("csrc/flash_attn/flash_api.cpp"), ":300-301, 334-335 (waves, slots) "
                    "and ", code("src/flash_fwd_kernel.h"), ":944-987 (one tile in flight), 1252-1270 (combine loop); "
                    "Little 1961 (", code("docs/conventions.md"), " §5.1); ", code("LOADED_HBM_LATENCY"), " and ",
                    code("UNLOADED_L2_LATENCY_CLK"), " of ", code("symbolic/hardware.py"), " (",
                    code("docs/conventions.md"), " §5.2); H100 figures ", code("docs/conventions.md"), " §3.1"),
        notes=(note("a model, not a measurement: one ", _K, " or ", _V, " tile in flight per CTA (FA2's loop), two "
                    "loaded latencies per key block, waves of ", c_SM, " CTAs per SM, the combine's ", S + 1,
                    " dependent L2 loads"),
               note("defaults: H100 SXM (132 SMs, 3.35 TB/s), ", L, " is 700 ns (an assumption), ", L_2,
                    " is 262 clk at 1.83 GHz"),
               note(code("hbm_fraction"), ": the share of the HBM roofline reached, ",
                    symbol("bytes", r"\mathrm{bytes}") / (BW * symbol("time", r"\mathrm{time}")), ", with ",
                    code("bytes"), " as ", code("decode.packed"), " counts them (FP16 inputs, FP32 partials)")),
        validate=check_decode_point,
    )
