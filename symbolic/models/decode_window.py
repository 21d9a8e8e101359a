"""Split-KV decode over a sliding window (Mistral's ``sliding_window``, Gemma 2's local layers).

The kernel is :mod:`symbolic.models.decode`'s (same parameters, same tensor classes, same partials and
combine), with a left window ``W_l``.  Sources, read at FlashAttention commit
``0251105a2fb19d2957484b7f023cd8c115286ced`` (Dao-AILab/flash-attention):

* FA2 ``csrc/flash_attn/src/flash_fwd_kernel.h:535-543`` (the split kernel's key-block range),
  ``csrc/flash_attn/src/mask.h:172-173`` (the local mask), ``csrc/flash_attn/flash_api.cpp:1313-1328``
  (``mha_fwd_kvcache``: the window and the GQA swap);
* FA3 ``hopper/block.h:35-55`` (``get_n_block_min_max``: PackGQA, local, split).

**Which keys a query sees.**  The ``L_q`` new queries of a sequence sit at absolute positions
``p_i = N_k - L_q + i`` (``i = 0 .. L_q - 1``; the new tokens are the last ``L_q`` of the ``N_k`` keys, so
``L_q <= N_k``), and the query at ``p`` sees the keys ``j`` with ``p - W_l <= j <= p``: causal within the
new tokens, ``W_l + 1`` keys at most.  That is FA2's ``window_size = (W_l, 0)``: its mask keeps column
``j`` of row ``r`` when ``r + N_k - L_q - W_l <= j < r + 1 + N_k - L_q + W_r`` (``mask.h:172-173``), with
``W_r = 0``.  (For ``L_q = 1`` any ``W_r >= 0`` is the same: no key lies right of the last query.)
Hugging Face's mask for ``sliding_window = w`` keeps ``kv_idx > q_idx - w`` (transformers
``src/transformers/masking_utils.py``, ``sliding_window_overlay``, commit
``2ccc6cae21faaf11631efa5fb9054687ae5dc931``): ``w`` keys including the query's own, so
**``W_l = sliding_window - 1``** (Mistral-7B's 4096 is ``W_l = 4095``).  Older transformers passed
``window_size = (sliding_window, sliding_window)`` to FA2 (``_flash_attention_forward`` in
``modeling_flash_attention_utils.py`` at commit ``7713be1e51fbf31eb2c5eb27624369e08af29243``), one key
more: ``W_l = sliding_window``.  The model takes ``W_l`` as given; the caller states which.

**The key blocks visited.**  A CTA's rows share one loop over key blocks.  The earliest key any of its
rows sees is ``lo = max(0, N_k - L_q - W_l)`` (the first new query's window) and the latest is
``N_k - 1`` (the last query's own key), so it visits blocks ``j_min .. nb - 1`` with::

    nb = ceil(N_k / B_n),    j_min = floor(max(0, N_k - L_q - W_l) / B_n)

FA2: ``n_block_min = max(split start, (m_block kBlockM + N_k - L_q - W_l) / kBlockN)`` and ``n_block_max
= min(nb, split end, ceil(((m_block + 1) kBlockM + N_k - L_q + W_r) / kBlockN))`` (``flash_fwd_kernel.h:
536-542``; ``actual_seqlen_k = N_k`` and ``actual_seqlen_q = L_q`` from ``block_info.h:19-24``) at ``m_block = 0``: C++'s division truncates toward zero, and the ``max`` with the split start
(>= 0) makes it the floor of ``max(0, .)``; ``kBlockM >= L_q`` makes ``n_block_max = nb``.  FA3 computes
the same range for a packed CTA (``block.h:35-44``: with PackGQA the row index is divided by
``qhead_per_khead`` first, so its rows span the same ``L_q`` positions).  The blocks are loaded whole
(masked loads move the valid rows only, ``docs/conventions.md`` §1.7), as the causal models load a block
the diagonal crosses, so a head group reads ``K_w = N_k - j_min B_n`` keys (``min(N_k, W_l + L_q) <= K_w
< min(N_k, W_l + L_q) + B_n``), and FLOPs are counted on them: ``2 g L_q K_w (d + d_v)`` a head group.

**The splits** (``split_rule``), each a registered model:

* ``fa2`` (``decode.packed.window``, ``decode.unpacked.window``) - FA2's rule: the splits are cut from
  *all* ``nb`` blocks of the cache as :mod:`symbolic.models.decode` cuts them, ``nbps = ceil(nb / S)``,
  and the window clips them: split ``s`` takes ``[max(s nbps, j_min), min(nb, (s + 1) nbps))``
  (``flash_fwd_kernel.h:535-539``; ``nbps`` from ``params.seqlen_k``, the cache's length).  The splits
  before ``j_min`` are empty and exit early, writing their partials ``0`` and ``-inf`` (``:544-585``).
  Split ``s`` holds blocks iff ``floor(j_min / nbps) <= s < ceil(nb / nbps)``::

      S_ne = ceil(nb / nbps) - floor(j_min / nbps)

* ``fa3`` (``decode.packed.window.fa3``) - FA3's rule: the blocks in range are cut into ``S`` splits of
  ``nbps_w = ceil(n_w / S)``, ``n_w = nb - j_min`` (``block.h:52-54``: ``ceil_div(n_block_max -
  n_block_min, num_splits)``), so ``S_ne = ceil(n_w / nbps_w)``.

**The grid.**  ``decode.packed.window`` is the packed grid of ``decode.packed``: one CTA per (sequence, KV
head, split) holding the ``g L_q`` rows of the ``g`` query heads sharing the KV head - FA3's PackGQA, which
it runs with a window.  NOTE: FA2 itself does *not* pack under a window: ``mha_fwd_kvcache`` swaps the
``g`` heads into the rows only when ``window_size_left < 0 && window_size_right < 0``
(``flash_api.cpp:1319``; the test comes before ``window_size_left >= seqlen_k`` resets the window to
``-1`` at ``:1327``, so any window given disables it), and then runs one CTA per *query* head:
``decode.unpacked.window``, which reads ``K`` and ``V`` ``g`` times as often.

**Counts** (``R = B H L_q`` query rows, ``G`` CTAs per sequence and split: ``H_kv`` packed, ``H``
unpacked, ``[S > 1]`` the split launch of :class:`~symbolic.models.decode.SplitLaunch`)::

    reads_Q = R d S_ne,   reads_K = B G K_w d,   reads_V = B G K_w d_v
    writes_O_s = reads_O_s = [S > 1] R S d_v,    writes_LSE_s = reads_LSE_s = [S > 1] R S   (FP32)
    writes_O = R d_v,     writes_LSE = R,        flops = 2 R K_w (d + d_v)

With ``W_l >= N_k - L_q`` (the window reaches key 0: ``j_min = 0``, ``K_w = N_k``) every count is
``decode.packed``'s (``decode.unpacked``'s), whatever the rule: the causal mask within the new tokens
hides no whole block, since the last query sees every key.
"""

from __future__ import annotations

from functools import partial

import sympy as sp

from base.dtypes import element_bytes
from base.errors import BadInput

from ..asymptotics import Regime
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..registry import ModelRef
from .decode import (TENSOR_CLASSES, B, B_n, H, H_kv, L_q, N_k, S, SplitLaunch, check_decode_point, d, d_v,
                     totals)

__all__ = ["W_l", "RULES", "window_blocks", "window_counts", "check_window_point", "decode_packed_window",
           "decode_unpacked_window", "decode_packed_window_fa3", "WINDOW_MODELS"]

_Q, _K, _V, _O = (symbol(n) for n in ("Q", "K", "V", "O"))
_j_min, _K_w, _S_ne = symbol("j_min", r"j_{\min}"), symbol("K_w"), symbol("S_ne")

W_l = param("W_l", note("keys left of a query that it sees, besides its own (FA2's ", code("window_size_left"),
                        "; Hugging Face's ", code("sliding_window"), " minus one)"), latex="W_{l}", least=0)

#: the split rules, by the source whose kernel cuts the blocks so (module docstring)
RULES = ("fa2", "fa3")

#: the window's first key, max(0, N_k - L_q - W_l): one object, so that the regime can resolve it
_LO = sp.Max(0, N_k - L_q - W_l)

_SOURCE = note("FlashAttention-2 ", code("csrc/flash_attn/src/flash_fwd_kernel.h"), ":535-585 (split range, window, "
               "empty splits), ", code("mask.h"), ":172-173, ", code("flash_api.cpp"), ":1313-1328; FlashAttention-3 ",
               code("hopper/block.h"), ":35-55 (commit 0251105a); Dao, Haziza, Massa, Sizov 2023, Flash-Decoding; ",
               code("docs/conventions.md"), " §6")


def _rule_pieces(rule: str) -> tuple:
    if rule == "fa2":
        return ("FA2's split rule: splits cut from all ", sp.ceiling(N_k / B_n), " key blocks of the cache, "
                    "clipped to the window (", code("flash_fwd_kernel.h"), ":535-539)")
    return ("FA3's split rule: the window's key blocks cut into ", S, " splits (", code("hopper/block.h"), ":52-54)")


def check_window_point(pt) -> None:
    """``decode``'s constraint (``H_kv`` divides ``H``) and the window's: the ``L_q`` new tokens are among
    the ``N_k`` keys (:class:`BadInput` naming ``L_q``)."""
    check_decode_point(pt)
    if pt["L_q"] > pt["N_k"]:
        raise BadInput("L_q", f"the {pt['L_q']} new tokens sit at positions N_k - L_q .. N_k - 1 of the cache, "
                              f"so L_q <= N_k = {pt['N_k']}")


def window_blocks(rule: str = "fa2") -> dict:
    """``nb`` (key blocks of the cache), ``j_min`` (the first block visited), ``K_w`` (keys a head group
    reads), ``nbps`` (blocks a split, by ``rule``) and ``S_ne`` (splits holding blocks)."""
    if rule not in RULES:
        raise ValueError(f"split rule {rule!r}: one of {', '.join(RULES)}")  # a caller's bug, not input
    nb = sp.ceiling(N_k / B_n)
    j_min = sp.floor(_LO / B_n)
    if rule == "fa2":
        nbps = sp.ceiling(nb / S)
        s_ne = sp.ceiling(nb / nbps) - sp.floor(j_min / nbps)
    else:
        nbps = sp.ceiling((nb - j_min) / S)
        s_ne = sp.ceiling((nb - j_min) / nbps)
    return {"nb": nb, "j_min": j_min, "K_w": N_k - B_n * j_min, "nbps": nbps, "S_ne": s_ne}


def window_counts(packed: bool, rule: str = "fa2") -> dict:
    """Elements per tensor class, totals, bytes, FLOPs, CTAs and the split overhead (module docstring):
    the quantities of ``decode.packed`` / ``decode.unpacked``, plus ``keys_visited`` and ``splits_loading``."""
    w = window_blocks(rule)
    s_ne, keys = w["S_ne"], w["K_w"]
    split = SplitLaunch(S)
    G = H_kv if packed else H
    R = B * H * L_q
    q = {
        "reads_Q": R * d * s_ne,
        "reads_K": B * G * keys * d,
        "reads_V": B * G * keys * d_v,
        "reads_O_s": split * R * S * d_v,
        "reads_LSE_s": split * R * S,
        "writes_O_s": split * R * S * d_v,
        "writes_LSE_s": split * R * S,
        "writes_O": R * d_v,
        "writes_LSE": R,
    }
    return {**totals(q, R=R, G=G, keys=keys, s_ne=s_ne, split=split), "keys_visited": keys, "splits_loading": s_ne}


def _units() -> dict:
    u = {k: "elements" for k, _ in TENSOR_CLASSES if k != "reads_table"}
    u.update({"bytes_read": "bytes", "bytes_written": "bytes", "bytes": "bytes", "intensity": "FLOP/byte",
              "ctas": "1", "split_overhead": "elements", "split_overhead_bytes": "bytes", "keys_visited": "keys",
              "splits_loading": "1"})
    return u


def _regime(packed: bool) -> Regime:
    """A long cache and a window within it: ``W_l + L_q <= N_k`` (so ``j_min B_n`` is about ``N_k - L_q -
    W_l``), the new rows and a split's rows within the window (``L_q <= W_l``, and the query rows times the
    splits within the keys read), split launches."""
    rows = (H * L_q * S, H_kv * W_l) if packed else (L_q * S, W_l)
    return Regime(note(sp.Le(W_l + L_q, N_k), ", ", sp.Le(L_q, W_l), ", ", sp.Le(*rows), ", ", sp.Ge(S, 2)),
                  le=((W_l, N_k), (L_q, W_l), rows), subs={_LO: N_k - L_q - W_l, SplitLaunch(S): 1})


def _build(name: str, packed: bool, rule: str) -> Model:
    e = element_bytes("fp16")
    grid = "packed GQA (one CTA per KV head)" if packed else "one CTA per query head"
    seen = sp.Min(N_k, W_l + L_q)
    return Model(
        name, note("split-KV decode over a sliding window of ", W_l, " keys left of each query, ", grid, ", ",
                   rule.upper(), "'s split rule: HBM traffic per tensor class"),
        window_counts(packed, rule),
        params=(B, H, H_kv, L_q, N_k, d, d_v, B_n, S, W_l),
        units=_units(),
        regime=_regime(packed),
        asymptotic_quantity="bytes",
        lower_bounds={note("compulsory: the ", seen, " keys of ", _K, ", ", _V, " some query sees, once per ",
                           "KV head" if packed else "query head", "; ", _Q, " and ", _O, " once (bytes)"):
                      e * (B * (H_kv if packed else H) * seen * (d + d_v) + B * H * L_q * (d + d_v))},
        defaults={"B": 1, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 32768, "d": 128, "d_v": 128, "B_n": 128, "S": 1,
                  "W_l": 4095},
        source=_SOURCE,
        notes=(note("query ", symbol("i"), " sits at position ", N_k - L_q + symbol("i"), " and sees the keys ",
                    N_k - L_q + symbol("i") - W_l, " to ", N_k - L_q + symbol("i"), " (causal within the new tokens; "
                    "FA2's ", code("window_size=(W_l, 0)"), ")"),
               note("a CTA visits the key blocks ", sp.Eq(_j_min, sp.floor(_LO / B_n)), " to ",
                    sp.ceiling(N_k / B_n) - 1, ", loaded whole: ", sp.Eq(_K_w, N_k - B_n * _j_min),
                    " keys per head group"),
               note(*_rule_pieces(rule), "; ", _S_ne, " of them load ", _Q, " and the rest write only their "
                    "partials"),
               note(sp.Ge(W_l, N_k - L_q), ": every count is ", code("decode.packed" if packed else "decode.unpacked"),
                    "'s"),
               note("FA2 packs the ", H / H_kv, " query heads of a KV head only without a window (",
                    code("flash_api.cpp:1319"), "): with one it runs ", code("decode.unpacked.window"), "'s grid")),
        validate=check_window_point,
    )


decode_packed_window = ModelRef(
    "decode.packed.window", "split-KV decode over a sliding window W_l, GQA packed, FA2's split rule (splits of "
    "the whole cache clipped to the window)", partial(_build, "decode.packed.window", True, "fa2"))
decode_unpacked_window = ModelRef(
    "decode.unpacked.window", "split-KV decode over a sliding window W_l, one CTA per query head: FA2's grid "
    "under a window (flash_api.cpp:1319)", partial(_build, "decode.unpacked.window", False, "fa2"))
decode_packed_window_fa3 = ModelRef(
    "decode.packed.window.fa3", "split-KV decode over a sliding window W_l, GQA packed, FA3's split rule (the "
    "window's blocks cut into S splits)", partial(_build, "decode.packed.window.fa3", True, "fa3"))

WINDOW_MODELS = {"decode.packed.window": (decode_packed_window, True, "fa2"),
                 "decode.unpacked.window": (decode_unpacked_window, False, "fa2"),
                 "decode.packed.window.fa3": (decode_packed_window_fa3, True, "fa3")}
