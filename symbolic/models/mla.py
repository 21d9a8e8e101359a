r"""MLA decoding as FlashMLA runs it: the absorbed multi-head latent attention, split-KV over a paged cache.

Sources (FlashMLA, ``deepseek-ai/FlashMLA`` @ ``9241ae3ef9bac614dd25e45e507e089f888280e0``; line numbers are
that commit's): ``csrc/api/dense_decode.h`` (the interface), ``csrc/params.h`` (``DenseAttnDecodeParams``,
``DecodingSchedMeta``), ``csrc/sm90/decode/dense/splitkv_mla.cuh`` (the kernel), ``config.h`` (its tiles),
``csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu`` (the tile scheduler),
``csrc/smxx/decode/combine/combine.cu`` (the LSE combine), ``README.md`` and
``flash_mla/flash_mla_interface.py:94-98`` (the FP8 format), ``docs/20250422-new-kernel-deep-dive.md`` and
``docs/20250929-hopper-fp8-sparse-deep-dive.md``.  The absorbed form: DeepSeek-AI, *DeepSeek-V2* (arXiv
2405.04434) §2.1.2-2.1.3 (the latent ``c^KV`` of ``d_c`` = ``kv_lora_rank`` columns, the decoupled RoPE key
of ``d_h^R`` = ``qk_rope_head_dim`` columns shared by all heads; ``W^UK`` absorbed into ``W^Q``, ``W^UV``
into ``W^O``), *DeepSeek-V3* (arXiv 2412.19437) §4.2: 128 heads, ``d_c = 512``, ``d_h^R = 64``.

**The absorbed form.**  ``B`` sequences of ``N_k`` cached tokens, ``L_q`` query tokens each (1 when decoding,
more with MTP).  Each token's cache entry is one latent of width ``W = d_c + d_r``: ``d_c`` compressed
columns ("NoPE") and ``d_r`` RoPE columns, shared by all ``H`` heads (MQA with one KV head: FlashMLA's
``h_k = 1``).  Each query row (a head at a query position: ``R = H L_q`` rows a sequence; the kernel's
row ``s_q_idx H + h``, ``dense_decode.h:73-77``) has width ``W``; ``O = softmax(Q C^T scale) C[:, :d_c]``:
the value is the latent's first ``d_c`` columns, already on chip (``traits.h:56-59``: ``SmemLayoutV`` is
the transposed view of the ``K`` tile), so there is no separate ``V`` read.  ``head_size_k = 576``,
``head_size_v = 512`` (``dense_decode.h:60-61``; ``config.h:8-9``).

**The kernel counted** (``splitkv_mla.cuh``).  Grid ``(ceil(R / 64), h_k, num_sm_parts)`` (``:1342-1344``):
a CTA serves ``B_h = 64`` query rows (``BLOCK_SIZE_M``, ``config.h:5``), so a sequence's rows form
``G = ceil(H L_q / B_h)`` *row groups*, and every row group's CTA walks the same key blocks
(``tile_scheduler_metadata[partition_idx]``, ``:1020``, does not depend on ``m_block_idx``): each
sequence's KV is read ``G`` times.  The scheduler cuts each sequence's ``nb = ceil(N_k / B_n)`` key blocks
(``B_n = 64`` = the page size, ``config.h:6``) into contiguous *splits*, each holding at least one block
(``get_decoding_sched_meta.cu:84-87``: a partition takes a piece only when blocks remain for it).  Per
(row group, split) the CTA

* loads its ``Q`` rows (``launch_q_copy``, ``:1024`` and ``:1222``; the TMA box past row ``R`` is out of
  bounds, so only valid rows move): ``reads_Q = R W`` per split, over the row groups;
* for each key block, looks up its page in the int32 block table (``__ldg(block_table_ptr + block_idx)``,
  ``:1082-1085``, ``:769``) and loads the ``B_n`` cache rows (``launch_kv_tiles_copy_tma``, nine 64-column
  TMA boxes, ``:1082``);
* with one split for the sequence (``is_no_split``, ``:1033``), writes ``O`` (BF16) and ``LSE`` (FP32) for
  its valid rows (``store_o<T, true>``, ``:1231``; ``num_valid_seq_q``, ``:1229``); else the FP32 partials
  ``O_accum`` (``d_c`` a row) and ``LSE_accum`` (``:1242-1253``);
* the combine kernel (``combine.cu:20-162``) returns at once for a sequence of one split (``:39-41``);
  otherwise, per row, it reads the ``m`` partial ``LSE`` (``:78``) and ``m`` rows of ``O_accum``
  (``:64-69``, ``:141``), and writes ``LSE`` (``:100``) and ``O`` (``:159``).

**Conventions.**  Counts are elements between HBM and a CTA, bytes at each tensor's own size
(:mod:`base.dtypes`): ``Q``, ``O`` and the BF16 cache 2 bytes, the partials and ``LSE`` FP32, the block table
int32; FP8 cache: the NoPE codes ``fp8``, the scales FP32, the RoPE part BF16.  A key block moves its
*valid* tokens (``docs/conventions.md`` §1.7); FlashMLA's TMA moves the whole 64-token page and zeroes the
rows past ``N_k`` on chip (``fill_oob_V``, ``:783``), which ``tokens_tiles`` counts.  A key block reads the
table entry of every page it touches once (as the paged decode models count it; FlashMLA's ``B_n = P``
makes that one entry a block).  FLOPs are the deep-dive's (``20250422-new-kernel-deep-dive.md:11``),
``2 h_q s_q s_k (d_k + d_v)`` exactly, with ``h_q s_q = H L_q``, ``s_k = N_k``, ``d_k = d_c + d_r``,
``d_v = d_c``: the ``Q C^T`` and ``P C[:, :d_c]`` products over the valid keys; ``flops_tiles`` is what the
tensor cores issue, whole ``B_h x B_n`` tiles.  Softmax, scaling, dequantization and the combine are
not FLOPs (§1.0).

**The splits.**  ``S`` is the model's input, as in the other decode models: the splits a sequence's
blocks are cut into.  FlashMLA never makes an empty split, so a sequence runs ``m = min(S, nb)`` splits;
the counts depend on the splits only through ``m`` (every split loads ``Q`` once and writes one partial;
the blocks, whoever holds them, are read once a row group), so they hold for *any* partition of the blocks
into ``m`` contiguous non-empty splits - FlashMLA's scheduler's (:func:`tuning.mla_splits.flashmla_splits`)
or an even one.  With ``T = ceil(N_k/P) + (nb - 1) - floor((nb - 1) gcd(P, B_n) / P)`` the table entries
one row group reads a sequence (the pages each block touches, summed: the paged decode models' telescoping
sum, :mod:`symbolic.models.decode`), ``[m > 1]`` the Iverson bracket::

    reads_Q          = B R W m                       BF16
    reads_KV_nope    = B G N_k d_c                   BF16, or FP8 codes
    reads_KV_scale   = B G N_k d_c / 128             FP32 (FP8 only: one scale per 128 codes)
    reads_KV_rope    = B G N_k d_r                   BF16
    reads_table      = B G T                         int32
    writes_O_s = reads_O_s = [m > 1] B R m d_c,   writes_LSE_s = reads_LSE_s = [m > 1] B R m     FP32
    writes_O   = B R d_c (BF16),   writes_LSE = B R (FP32)
    flops            = 2 B R N_k (2 d_c + d_r),     flops_tiles = 2 B G B_h nb B_n (2 d_c + d_r)

So ``bytes_KV = B G N_k (2 d_c + 2 d_r)`` for BF16 and ``B G N_k (d_c + 4 d_c/128 + 2 d_r)`` for FP8: at
``d_c = 512``, ``d_r = 64`` that is 1,152 and 656 bytes a token per row group.  The **split overhead**
over one split is ``B R (W (m - 1) + 2 [m > 1] m (d_c + 1))`` elements,
``B R (2 W (m - 1) + 8 [m > 1] m (d_c + 1))`` bytes: free of ``N_k`` once ``m = S``.

**FP8** (``decode.mla.fp8``): FlashMLA's 656-byte token (``README.md`` "FP8 KV Cache";
``flash_mla_interface.py:94-98``; ``tests/quant.py:35-53``): 512 ``float8_e4m3`` codes, 4 FP32 scales (one
per 128 codes) and the 64 BF16 RoPE values, dequantized to BF16 on chip
(``20250929-hopper-fp8-sparse-deep-dive.md`` "The FP8 KVCache Format").  NOTE: FlashMLA ships this format
with its *sparse* decode kernel; ``decode.mla.fp8`` is the dense schedule above reading that format (the
sparse kernel's "crossover" of two CTAs, each loading half of the cache, is not modelled).

**One length.**  The closed forms take one ``N_k`` and one ``S`` for the batch; a ragged batch (FlashMLA's
``seqlens_k``, its per-sequence splits) is the sum of the model at ``B = 1`` over its sequences.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import sympy as sp

from base.dtypes import element_bytes
from base.errors import BadInput

from ..asymptotics import Regime
from ..floorsum import gcd
from ..model import Model
from ..notes import code, note, symbol
from ..params import param, real_param
from ..registry import ModelRef
from .decode import SplitLaunch

__all__ = ["B", "H", "L_q", "N_k", "d_c", "d_r", "B_h", "B_n", "S", "P", "n_SM", "f_clk", "F_SM", "BW", "c_dq",
           "decode_mla", "decode_mla_fp8", "decode_mla_time", "decode_mla_fp8_time", "COUNT_MODELS", "TIME_MODELS",
           "SCALE_GROUP", "DTYPES", "H800", "counts", "bytes_per_token", "table_entries", "check_mla_point", "FLASHMLA"]

# ------------------------------------------------------------------------------------------ parameters
# the tensors the notes name, which are not parameters
_Q, _V, _O = (symbol(n) for n in ("Q", "V", "O"))

B = param("B", "sequences in the batch")
H = param("H", "query heads (all share the one latent KV)")
L_q = param("L_q", "query tokens per sequence (1 when decoding, more with MTP)", latex="L_{q}")
N_k = param("N_k", "cached tokens per sequence", latex="N_{k}")
d_c = param("d_c", note("latent (NoPE) columns: DeepSeek's ", code("kv_lora_rank"), "; also the value and output "
                          "width"), latex="d_{c}")
d_r = param("d_r", note("RoPE columns of the key: DeepSeek's ", code("qk_rope_head_dim")), latex="d_{r}")
B_h = param("B_h", note("query rows per CTA (FlashMLA's ", code("BLOCK_SIZE_M"), ", 64)"), latex="B_{h}")
B_n = param("B_n", "tokens per key block (FlashMLA: the page, 64)", latex="B_{n}")
S = param("S", "splits a sequence's key blocks are cut into (at most one per block)")
P = param("P", "tokens per page of the paged cache (FlashMLA: 64)")

n_SM = param("n_SM", "streaming multiprocessors (one CTA each)", latex="n_{SM}")
F_SM = param("F_SM", "dense BF16 MMA FLOP per SM per clock", latex="F_{SM}")
f_clk = real_param("f_clk", "SM clock under load (Hz)", latex="f")
BW = real_param("BW", "HBM bandwidth (bytes/s)", latex="BW")
c_dq = real_param("c_dq", "CUDA-core cycles per SM to dequantize one FP8 code", latex="c_{dq}")

#: one FP32 scale per 128 FP8 codes (tile-level quantization 1 x 128: fp8 deep-dive, "The FP8 KVCache Format")
SCALE_GROUP = 128
#: the element type of each counted tensor class; "nope" is the cache's NoPE part (BF16, or FP8 codes)
DTYPES = {"Q": "bf16", "nope": "bf16", "scale": "fp32", "rope": "bf16", "table": "int32", "O": "bf16",
          "LSE": "fp32", "O_s": "fp32", "LSE_s": "fp32"}
#: FlashMLA's shipped point: 128 heads (DeepSeek-V3 §4.2), d_c = 512, d_r = 64 (dense_decode.h:60-61),
#: BLOCK_SIZE_M = 64, PAGE_BLOCK_SIZE = 64 (config.h:5-6; dense_decode.h:67)
FLASHMLA = {"H": 128, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "P": 64}

_SOURCE = note("FlashMLA (", code("deepseek-ai/FlashMLA"), " @ ", code("9241ae3"), ") ",
               code("csrc/api/dense_decode.h"), ":60-113, 164-166; ", code("csrc/sm90/decode/dense/splitkv_mla.cuh"),
               ":1020-1262, 1342-1344; ", code("config.h"), ":5-9; ",
               code("csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu"), ":28-101; ",
               code("csrc/smxx/decode/combine/combine.cu"), ":36-160; ", code("docs/20250422-new-kernel-deep-dive.md"),
               ":11; DeepSeek-V2 (arXiv 2405.04434) §2.1.2-2.1.3")
_SOURCE_FP8 = _SOURCE + note("; FP8 format: ", code("README.md"), " (FP8 KV Cache), ",
                             code("flash_mla/flash_mla_interface.py"), ":94-98, ", code("tests/quant.py"), ":35-53, ",
                             code("docs/20250929-hopper-fp8-sparse-deep-dive.md"))


def check_mla_point(fp8: bool):
    """The constraint beyond the parameters' own: an FP8 cache's ``d_c`` is a whole number of scale groups
    of 128 (:class:`BadInput` naming ``d_c``)."""
    def check(pt) -> None:
        if fp8 and pt["d_c"] % SCALE_GROUP:
            raise BadInput("d_c", f"the FP8 cache quantizes the NoPE part in groups of {SCALE_GROUP} (one FP32 "
                                  f"scale each), so d_c must be a multiple of {SCALE_GROUP}, got {pt['d_c']}")
    return check


# ------------------------------------------------------------------------------------------ counts
def bytes_per_token(fp8: bool) -> sp.Expr:
    """Bytes of one cached token (one row group's read of it): BF16 ``2 (d_c + d_r)``; FP8 ``d_c`` codes of
    one byte, ``d_c / 128`` FP32 scales and ``d_r`` BF16 RoPE values - 1,152 and 656 at ``d_c = 512``,
    ``d_r = 64``."""
    if fp8:
        return (element_bytes("fp8") * d_c + element_bytes(DTYPES["scale"]) * d_c / SCALE_GROUP
                + element_bytes(DTYPES["rope"]) * d_r)
    return element_bytes(DTYPES["nope"]) * d_c + element_bytes(DTYPES["rope"]) * d_r


def table_entries(divisible: bool = False) -> sp.Expr:
    """Block-table entries one row group reads for one sequence: each key block's pages, summed over the
    blocks - ``ceil(N_k/P) + (nb - 1) - floor((nb - 1) gcd(P, B_n) / P)`` (the telescoping of the paged
    decode models, :func:`symbolic.models.decode.table_entries`, in this model's parameters)."""
    nb = N_k / B_n if divisible else sp.ceiling(N_k / B_n)
    return sp.ceiling(N_k / P) + (nb - 1) - sp.floor((nb - 1) * gcd(P, B_n) / P)


def counts(fp8: bool, divisible: bool = False) -> dict:
    """Every quantity of ``decode.mla`` (``fp8``: ``decode.mla.fp8``), module docstring.  ``divisible``: the
    same loops when ``B_h`` divides ``H L_q`` and ``B_n S`` divides ``N_k`` (so ``m = S``)."""
    R = H * L_q
    W = d_c + d_r
    if divisible:
        G, nb, m = R / B_h, N_k / B_n, S
    else:
        G, nb = sp.ceiling(R / B_h), sp.ceiling(N_k / B_n)
        m = sp.Min(S, nb)
    split = SplitLaunch(m)
    q = {
        "reads_Q": B * R * W * m,
        "reads_KV_nope": B * G * N_k * d_c,
        "reads_KV_scale": B * G * N_k * d_c / SCALE_GROUP,
        "reads_KV_rope": B * G * N_k * d_r,
        "reads_table": B * G * table_entries(divisible),
        "reads_O_s": split * B * R * m * d_c,
        "reads_LSE_s": split * B * R * m,
        "writes_O_s": split * B * R * m * d_c,
        "writes_LSE_s": split * B * R * m,
        "writes_O": B * R * d_c,
        "writes_LSE": B * R,
    }
    if not fp8:
        del q["reads_KV_scale"]
    size = {"reads_Q": element_bytes(DTYPES["Q"]),
            "reads_KV_nope": element_bytes("fp8" if fp8 else DTYPES["nope"]),
            "reads_KV_scale": element_bytes(DTYPES["scale"]), "reads_KV_rope": element_bytes(DTYPES["rope"]),
            "reads_table": element_bytes(DTYPES["table"]), "reads_O_s": element_bytes(DTYPES["O_s"]),
            "reads_LSE_s": element_bytes(DTYPES["LSE_s"]), "writes_O_s": element_bytes(DTYPES["O_s"]),
            "writes_LSE_s": element_bytes(DTYPES["LSE_s"]), "writes_O": element_bytes(DTYPES["O"]),
            "writes_LSE": element_bytes(DTYPES["LSE"])}
    reads = sp.Add(*[v for k, v in q.items() if k.startswith("reads_")])
    writes = sp.Add(*[v for k, v in q.items() if k.startswith("writes_")])
    bytes_read = sp.Add(*[size[k] * v for k, v in q.items() if k.startswith("reads_")])
    bytes_written = sp.Add(*[size[k] * v for k, v in q.items() if k.startswith("writes_")])
    bytes_kv = sp.Add(*[size[k] * v for k, v in q.items() if k.startswith("reads_KV_")])
    flops = 2 * B * R * N_k * (W + d_c)
    e, f32 = element_bytes(DTYPES["Q"]), element_bytes(DTYPES["O_s"])
    return {
        "reads": reads, "writes": writes, "flops": flops, **q,
        "bytes_KV": bytes_kv, "bytes_Q": size["reads_Q"] * q["reads_Q"],
        "bytes_read": bytes_read, "bytes_written": bytes_written, "bytes": bytes_read + bytes_written,
        "intensity": flops / (bytes_read + bytes_written),
        "row_groups": G, "splits_run": m, "segments": B * G * m,
        "tokens_tiles": B * G * nb * B_n,
        "flops_tiles": 2 * B * G * B_h * nb * B_n * (W + d_c),
        "split_overhead": B * R * (W * (m - 1) + 2 * split * m * (d_c + 1)),
        "split_overhead_bytes": B * R * (e * W * (m - 1) + 2 * f32 * split * m * (d_c + 1)),
    }


#: what :func:`counts` derives for the time models but the count models do not show (a model's default
#: sweep table in the notes holds at most 25 quantities on a page)
_INTERNAL = ("row_groups", "splits_run", "segments")


def _units(fp8: bool) -> dict:
    u = {k: "elements" for k in ("reads_Q", "reads_KV_nope", "reads_KV_scale", "reads_KV_rope", "reads_table",
                                 "reads_O_s", "reads_LSE_s", "writes_O_s", "writes_LSE_s", "writes_O", "writes_LSE",
                                 "split_overhead", "tokens_tiles")}
    if not fp8:
        del u["reads_KV_scale"]
    u.update({"bytes_KV": "bytes", "bytes_Q": "bytes", "bytes_read": "bytes", "bytes_written": "bytes",
              "bytes": "bytes", "intensity": "FLOP/byte", "flops_tiles": "FLOP", "split_overhead_bytes": "bytes"})
    return u


def _regime() -> Regime:
    """Long decoding: the splits' key blocks and query rows stay within the keys (``S B_n <= N_k``, so every
    split holds blocks and ``m = S``; ``S B_h <= N_k``, so reloading ``Q`` a split costs less than the cache
    a row group reads); split launches (``S >= 2``); the table term taken at ``P | B_n``."""
    m = sp.Min(S, sp.ceiling(N_k / B_n))
    return Regime(note(sp.Le(S * B_n, N_k), ", ", sp.Le(S * B_h, N_k), ", ", sp.Ge(S, 2), ", ", P, " divides ", B_n),
                  le=((S * B_n, N_k), (S * B_h, N_k)),
                  subs={SplitLaunch(m): 1, SplitLaunch(S): 1, m: S, gcd(P, B_n): P})


def _time_regime() -> Regime:
    """As :func:`_regime`, with the cache read once a sequence: all query rows of the splits within the
    tokens (``H L_q S <= N_k``), so that reloading ``Q`` a split costs less than the cache."""
    r = _regime()
    return Regime(note(sp.Le(S * B_n, N_k), ", ", sp.Le(H * L_q * S, N_k), ", ", sp.Ge(S, 2), ", ", P, " divides ",
                       B_n),
                  le=((S * B_n, N_k), (H * L_q * S, N_k)), subs=r.subs)


def _shown(q: dict) -> dict:
    return {k: v for k, v in q.items() if k not in _INTERNAL}


def _build(name: str, fp8: bool) -> Model:
    fmt = note("FP8 cache (656 bytes a token at ", sp.Eq(d_c, 512), ", ", sp.Eq(d_r, 64), ")") if fp8 else "BF16 cache"
    per_token = bytes_per_token(fp8)
    R, W = H * L_q, d_c + d_r
    e = element_bytes("bf16")
    return Model(
        name, note("MLA decode (FlashMLA's dense split-KV kernel, absorbed form), ") + fmt
        + ": HBM traffic per tensor class",
        _shown(counts(fp8)),
        params=(B, H, L_q, N_k, d_c, d_r, B_h, B_n, S, P),
        units=_units(fp8),
        divisible_forms=_shown(counts(fp8, divisible=True)),
        divisible_note=note(B_h, " divides ", R, " and ", B_n * S, " divides ", N_k, ": every row group full, every "
                            "split holds blocks"),
        regime=_regime(),
        asymptotic_quantity="bytes",
        lower_bounds={note("compulsory: the cache once a sequence, ", _Q, " and ", _O, " once (bytes)"):
                      B * N_k * per_token + e * B * R * (W + d_c)},
        defaults={"B": 1, "H": 128, "L_q": 1, "N_k": 32768, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "S": 1,
                  "P": 64},
        source=_SOURCE_FP8 if fp8 else _SOURCE,
        notes=(note(sp.ceiling(R / B_h), " row groups of ", B_h, " query rows (FlashMLA: ", sp.Eq(B_h, 64), "); each "
                    "reads the whole cache of its sequence (FlashMLA: ", code("splitkv_mla.cuh"), ":1020, the schedule "
                    "is shared by the row groups)"),
               note(sp.Min(S, sp.ceiling(N_k / B_n)), " splits run (FlashMLA makes no empty split); each loads ",
                    _Q, " once and, when more than one, writes FP32 partials that the combine reads"),
               note("the value is the latent's first ", d_c, " columns, already on chip: no ", _V, " read"),
               note("bytes a cached token, per row group: ", per_token,
                    " (BF16 payload and RoPE)" if not fp8 else " (FP8 codes, one FP32 scale per 128, BF16 RoPE)"),
               note(code("flops"), ": the deep-dive's ", 2 * R * N_k * (W + d_c), " per sequence; ",
                    code("flops_tiles"), ": the whole tiles the tensor cores issue"),
               note("one ", N_k, " for the whole batch: a ragged batch is the sum of the model at ", sp.Eq(B, 1),
                    " over its sequences")),
        validate=check_mla_point(fp8),
    )


decode_mla = ModelRef("decode.mla", "MLA decode (FlashMLA, absorbed form), BF16 paged cache: reads/writes per "
                      "tensor class, bytes, FLOPs, split overhead", partial(_build, "decode.mla", False))
decode_mla_fp8 = ModelRef("decode.mla.fp8", "MLA decode, FlashMLA's FP8 cache (codes, FP32 scales, BF16 RoPE)",
                          partial(_build, "decode.mla.fp8", True))

COUNT_MODELS = (decode_mla, decode_mla_fp8)


# ------------------------------------------------------------------------------------------ time model
class _H800:
    """The H800 SXM5 figures of FlashMLA's deep-dives (not in :mod:`symbolic.hardware`, which has no H800):

    * 132 SMs and 4,096 dense BF16 MMA FLOP per SM per clock: ``20250929-hopper-fp8-sparse-deep-dive.md:17``
      ("989 TFlops / 1830 MHz / 132 SMs on H800");
    * 3.35 TB/s HBM and a clock throttled to about 1,600 MHz under load, so about 865 TFLOPS:
      ``20250422-new-kernel-deep-dive.md:13`` (132 x 4096 x 1.6 GHz = 865.1 TFLOPS);
    * dequantizing one FP8 code to BF16 takes ``1/64 + 1/64 + 1/16 + 1/256 = 25/256`` SM cycles (FP8 -> FP16,
      FP16 -> FP32, FP32 -> BF16 conversions and the scale multiply, at the throughputs of the CUDA C++ Best
      Practices Guide's arithmetic-instruction table): ``20250929-hopper-fp8-sparse-deep-dive.md:19-25``
      ("~50 cycles" for 512 codes)."""

    name = "H800"
    sms = 132
    tc_flops_per_sm_clk = 4096
    clock_hz = 1_600_000_000
    hbm_bytes_per_s = 3_350 * 10**9
    dequant_cycles = Fraction(1, 64) + Fraction(1, 64) + Fraction(1, 16) + Fraction(1, 256)


#: the H800 figures the time model defaults to (each with its source: :class:`_H800`)
H800 = _H800()


def _time(name: str, fp8: bool) -> Model:
    """Time of MLA decode on a GPU: the larger of three roofs - a model, exact in its figures.

    Assumptions, each with its source:

    1. *HBM roof.*  Every byte of :func:`counts` moves once at the bandwidth ``BW``, except that the ``G``
       row groups of a sequence share one read of its cache and table: the ``G`` CTAs of a partition
       walk the same blocks at the same time (grid ``(G, 1, num_sm_parts)``, ``splitkv_mla.cuh:1344``), and
       the second one's TMA loads hit L2 (``EVICT_FIRST`` hints "improve L2 cache hit rates",
       ``20250422-new-kernel-deep-dive.md:55``; its memory volume counts the cache once, ``:11``).
       ``t_hbm_unshared`` is the roof without that sharing.
    2. *MMA roof.*  The tensor cores issue whole ``B_h x B_n`` tiles (``flops_tiles``) at ``F_SM`` FLOP per SM
       per clock, spread evenly over ``busy = min(n_SM, B G m)`` SMs: FlashMLA runs one CTA per SM
       (``num_sm_parts = n_SM / G``, ``dense_decode.h:78``) and balances their payloads
       (``get_decoding_sched_meta.cu:62``); with fewer (row group, split) segments than SMs, only as many
       SMs work.
    3. *Dequantization roof* (FP8 only).  Each CTA dequantizes the ``d_c`` codes of every token it loads,
       ``c_dq`` cycles a code on its SM, over the same ``busy`` SMs: ``c_dq d_c = 50`` cycles a token at
       ``d_c = 512`` against 34 of MMA for 64 rows (``20250929-hopper-fp8-sparse-deep-dive.md:17-25``).
       NOTE: the HBM roof is not capped by the busy SMs: with few segments it is optimistic (FlashMLA's
       scheduler makes enough: :func:`tuning.mla_splits.flashmla_splits`).  The FP32 partials are priced
       at HBM too, though a few MB of them may stay in L2.
    4. The three overlap perfectly (the "seesaw" schedule overlaps memory, CUDA-core and tensor-core work,
       ``20250422-new-kernel-deep-dive.md:42``; the combine overlaps by programmatic dependent launch, ``:60``):
       ``time = max(t_hbm, t_mma, t_dequant)``.  Launch, prologue and epilogue cost nothing.

    Defaults: the H800 SXM5 of the deep-dives (:data:`H800`), DeepSeek-V3's shape (128 heads, ``d_c = 512``,
    ``d_r = 64``) at 32k tokens, a batch of 128 sequences (the fp8 deep-dive's benchmark batch, ``:48``), one
    split each (256 segments fill the 132 SMs).  With ``B_h | H L_q`` and ``B_n | N_k`` the MMA and HBM roofs meet at
    ``H L_q = n_SM f F_SM e (d_c + d_r) / (2 BW (2 d_c + d_r))`` rows (the cache term alone): 136.7 on the
    H800; the deep-dive's 128 takes ``(d_k + d_v)/d_k`` as 2 (``:11-13``).
    """
    c = counts(fp8)
    G, nb = c["row_groups"], sp.ceiling(N_k / B_n)
    per_token = bytes_per_token(fp8)
    # the cache and the table once a sequence, not once a row group (assumption 1)
    shared = c["bytes"] - (G - 1) * B * (N_k * per_token + element_bytes(DTYPES["table"]) * table_entries())
    busy = sp.Min(n_SM, c["segments"])
    peak = n_SM * f_clk * F_SM
    t_hbm = shared / BW
    t_mma = c["flops_tiles"] / (busy * f_clk * F_SM)
    q = {"time": None, "t_hbm": t_hbm, "t_mma": t_mma}
    if fp8:
        q["t_dequant"] = B * G * nb * B_n * d_c * c_dq / (busy * f_clk)
    q["time"] = sp.Max(*[v for k, v in q.items() if k != "time"])
    q.update({"t_hbm_unshared": c["bytes"] / BW, "bytes_hbm": shared, "bytes": c["bytes"], "flops": c["flops"],
              "flops_tiles": c["flops_tiles"], "mma_over_hbm": t_mma / t_hbm, "intensity_hbm": c["flops"] / shared,
              "ridge": peak / BW, "row_groups": G, "segments": c["segments"], "busy_SMs": busy})
    if fp8:
        q["dequant_over_mma"] = q["t_dequant"] / t_mma
    units = {k: "s" for k in q if k.startswith("t_") or k == "time"}
    units.update({"bytes_hbm": "bytes", "bytes": "bytes", "flops": "FLOP", "flops_tiles": "FLOP", "mma_over_hbm": "1",
                  "intensity_hbm": "FLOP/byte", "ridge": "FLOP/byte", "row_groups": "1", "segments": "1", "dequant_over_mma": "1",
                  "busy_SMs": "1"})
    params = (B, H, L_q, N_k, d_c, d_r, B_h, B_n, S, P, n_SM, f_clk, F_SM, BW) + ((c_dq,) if fp8 else ())
    defaults = {"B": 128, "H": 128, "L_q": 1, "N_k": 32768, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "S": 1,
                "P": 64, "n_SM": H800.sms, "f_clk": H800.clock_hz, "F_SM": H800.tc_flops_per_sm_clk,
                "BW": H800.hbm_bytes_per_s}
    if fp8:
        defaults["c_dq"] = H800.dequant_cycles
    return Model(
        name, "MLA decode time: max of the HBM roof (row groups share the cache through L2), the MMA roof"
              + (" and the FP8 dequantization roof" if fp8 else ""),
        dict(q),
        params=params, units=units, regime=_time_regime(), asymptotic_quantity="bytes_hbm",
        defaults=defaults,
        source=note("FlashMLA ", code("docs/20250422-new-kernel-deep-dive.md"), ":11-13, 42, 55, 60; ",
                    code("docs/20250929-hopper-fp8-sparse-deep-dive.md"), ":17-25; ", code("csrc/api/dense_decode.h"),
                    ":78; ", code("csrc/sm90/decode/dense/splitkv_mla.cuh"), ":1344; ",
                    code("get_decoding_sched_meta.cu"), ":62"),
        notes=(note("a model, not a measurement: three roofs that overlap perfectly; the ", G,
                    " row groups of a sequence share one HBM read of its cache (L2)"),
               note("defaults: H800 SXM5 as FlashMLA's deep-dives give it: ", sp.Eq(n_SM, H800.sms), " SMs, ",
                    sp.Eq(F_SM, H800.tc_flops_per_sm_clk), " FLOP per SM per clock, a clock ", f_clk, " of 1.6 GHz "
                    "under load (about 865 TFLOPS), a bandwidth ", BW, " of 3.35 TB/s"))
        + ((note("FP8: ", sp.Eq(c_dq, sp.Add(*(sp.Rational(1, n) for n in (64, 64, 16, 256)), evaluate=False)),
                 " cycles a code (fp8 deep-dive), so ", c_dq * d_c, " is 50 cycles a token at ", sp.Eq(d_c, 512)),)
           if fp8 else ()),
        validate=check_mla_point(fp8),
    )


decode_mla_time = ModelRef("decode.mla.time", "MLA decode time (BF16 cache): HBM roof vs MMA roof; the turn "
                           "near 128 query rows a sequence on an H800", partial(_time, "decode.mla.time", False))
decode_mla_fp8_time = ModelRef("decode.mla.fp8.time", "MLA decode time (FP8 cache): HBM, MMA and dequantization "
                               "roofs", partial(_time, "decode.mla.fp8.time", True))

TIME_MODELS = (decode_mla_time, decode_mla_fp8_time)
