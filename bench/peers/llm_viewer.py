"""LLM-Viewer's per-operation formulas, restated.

Source: hahnyuan/LLM-Viewer, ``model_analyzer.py`` (``ModelAnalyzer.analyze``) and ``configs/Llama.py``, at commit
``472f71f1a1807e80b573252e9185fd5e8d795e95`` (2024-07-30, "fix bug in compute flashattntion kv load data"; the
head of ``main``).  Every row below names the lines it restates.

What LLM-Viewer charges an operation is ``load_weight + load_act + store_act + load_kv_cache + store_kv_cache``
bytes (``model_analyzer.py:69``) and its ``OPs``; per layer, times ``num_hidden_layers`` in the totals
(``:422-425``), plus the LM head once (``:444-452``).  Its ``seqlen`` is the prompt in prefill and the tokens in
the KV cache in decode (one new token a sequence: it has no ``L_q``).

Its model comes from the Hugging Face config through a config module; ``configs/Llama.py`` is the one the
auto-search (``model_analyzer.py:29-36``: a file name contained in the model id) finds for the Llama ids; other
families are priced by passing that module as ``config_file``: the restatement does so, so Mixtral is a dense
model with one expert's FFN and DeepSeek-V3 a dense GQA model (neither MoE nor MLA exist in it).

Known errors it keeps, restated as they are:

* fused attention (``use_flashattention=True``) stores the output ``O`` as ``seqlen`` elements a head in decode
  (``:242``: ``o_numel = 1 * seqlen * batchsize * num_attention_heads``) and ``seqlen x seqlen`` in prefill
  (``:338``), where ``O`` is ``head_size`` a query row; and stores it twice ("initialize O and save O", ``:249``,
  ``:345``): the output term grows with the context in decode and with its square in prefill;
* fused attention loads ``K, V`` for ``num_attention_heads`` (``:250``, ``:346``): GQA's sharing ignored (its
  issue #12); the unfused path uses ``num_key_value_heads`` (``:263``, ``:274``);
* ``n_blocks_r = ceil(1 / block_size_r)`` in decode (``:240``) is always 1; in prefill ``ceil(seqlen /
  block_size_r)`` with ``block_size_r = min(ceil(onchip_buffer / (kv_byte * head_size)), head_size)``
  (``:335-336``), ``onchip_buffer`` the whole GPU's register file and shared memory (``hardwares/
  hardware_params.py:17``, H100: 33,792,000 B), so ``block_size_r = head_size``;
* ``head_size = hidden_size // num_attention_heads`` (``:224``) and ``q_proj``/``out_proj`` square in
  ``hidden_size`` (``configs/Llama.py:46-49``), whatever ``head_dim`` the config has;
* the residual adds are rows of their own (category ``norm`` and ``residual``: tilebound fuses the add into the
  RMSNorm row, so the two are compared together);
* the SwiGLU (``mlp_act``) reads ``2 x hidden_size`` and writes ``hidden_size`` elements (``:315-325``), not the
  intermediate size; a residual add reads one operand (``:304-314``);
* the LM head counts ``batch x hidden x vocab`` OPs (one per multiply-add, ``configs/Llama.py:33``) and reads one
  token's activation whatever the batch (``:35``).
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil

from .common import PeerOp

COMMIT = "472f71f1a1807e80b573252e9185fd5e8d795e95"
REPO = "hahnyuan/LLM-Viewer"
#: ``hardware_params["nvidia_H100"]["onchip_buffer"]`` (hardwares/hardware_params.py:17): bytes
H100_ONCHIP_BUFFER = 33_792_000
A100_ONCHIP_BUFFER = 27_648_000          # nvidia_A100_80G, hardwares/hardware_params.py:13


def _src(lines: str, path: str = "model_analyzer.py") -> str:
    return f"{REPO} {path}:{lines}@{COMMIT[:7]}"


def _op(name, category, count, lines, *, OPs, load_weight=0, load_act=0, store_act=0, load_kv_cache=0,
        store_kv_cache=0, path="model_analyzer.py", note=""):
    """``_analyze_to_results`` (``model_analyzer.py:56-84``): memory_access is the sum of the five terms (``:69``)."""
    access = load_weight + load_act + store_act + load_kv_cache + store_kv_cache
    return PeerOp(name, category, access, OPs, count, _src(lines, path), note)


def linear_layers(hf: dict) -> dict:
    """``configs/Llama.py:40-53``: name -> (in, out) features, ``k_proj``/``v_proj`` scaled by kv_heads/heads."""
    h, i = hf["hidden_size"], hf["intermediate_size"]
    kv = Fraction(h * hf["num_key_value_heads"], hf["num_attention_heads"])
    return {"q_proj": (h, h), "k_proj": (h, kv), "v_proj": (h, kv), "out_proj": (h, h),
            "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}


_CATEGORY = {"q_proj": "qkv", "k_proj": "qkv", "v_proj": "qkv", "out_proj": "o_proj", "gate_proj": "gate_up",
             "up_proj": "gate_up", "down_proj": "down"}


def analyze(hf: dict, *, phase: str, batch: int, seqlen: int, w_bit: int = 16, a_bit: int = 16, kv_bit=None,
            use_flashattention: bool = True, onchip_buffer: int = H100_ONCHIP_BUFFER) -> list[PeerOp]:
    """``ModelAnalyzer.analyze(seqlen, batchsize, w_bit, a_bit, kv_bit, use_flashattention)`` for one stage
    (``phase``: ``"decode"`` or ``"prefill"``), as exact numbers: one :class:`PeerOp` per row of its results."""
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase must be decode or prefill, got {phase!r}")
    kv_bit = a_bit if kv_bit is None else kv_bit                                  # :178-179
    w_byte, a_byte, kv_byte = Fraction(w_bit, 8), Fraction(a_bit, 8), Fraction(kv_bit, 8)   # :186-188
    heads, h = hf["num_attention_heads"], hf["hidden_size"]
    kv_heads, layers = hf["num_key_value_heads"], hf["num_hidden_layers"]
    B, s = batch, seqlen
    L = layers
    ops = []
    # linear layers (:197-221); the decode stage's rows per token, the prefill's per token x seqlen
    tokens = B if phase == "decode" else B * s
    for name, (ic, oc) in linear_layers(hf).items():
        is_kv = name in ("k_proj", "v_proj")
        ops.append(_op(name, _CATEGORY[name], L, "197-221", OPs=ic * oc * tokens * 2, load_weight=ic * oc * w_byte,
                       load_act=ic * tokens * a_byte, store_act=0 if is_kv else oc * tokens * a_byte,
                       store_kv_cache=oc * tokens * kv_byte if is_kv else 0))
    head_size = h // heads                                                        # :224
    if phase == "decode":
        qk = s * head_size * heads * B * 2                                        # :226
        sv = 1 * head_size * s * heads * B * 2                                    # :227
        softmax = B * heads * s * 1 * 5                                           # :234
        if use_flashattention:                                                    # :235-252
            block_size_r = min(ceil(Fraction(onchip_buffer) / (kv_byte * head_size)), head_size)   # :239
            n_blocks_r = ceil(Fraction(1, block_size_r))                          # :240 (always 1)
            q_numel = 1 * head_size * B * heads * a_byte                          # :241
            o_numel = 1 * s * B * heads * a_byte                                  # :242: seqlen, not head_size
            ops.append(_op("fused_attention", "attention", L, "235-252", OPs=qk + sv + softmax, load_act=q_numel,
                           store_act=o_numel * 2,
                           load_kv_cache=n_blocks_r * s * head_size * B * heads * kv_byte * 2,
                           note="O stored as seqlen elements a head, twice; K, V for all query heads"))
        else:                                                                     # :254-289
            ops.append(_op("qk_matmul", "attention", L, "255-265", OPs=qk, load_act=head_size * B * heads * a_byte,
                           store_act=s * B * heads * a_byte, load_kv_cache=s * head_size * B * kv_heads * kv_byte))
            ops.append(_op("sv_matmul", "attention", L, "266-276", OPs=sv, load_act=s * B * heads * a_byte,
                           store_act=head_size * B * heads * a_byte,
                           load_kv_cache=s * head_size * B * kv_heads * kv_byte))
            ops.append(_op("softmax", "attention", L, "278-289", OPs=softmax, load_act=B * heads * s * a_byte,
                           store_act=B * heads * s * a_byte))
        n = B                                                                     # the decode rows: 1 token each
        lines = ("291-302", "304-314", "315-325")
    else:
        qk = s * s * head_size * heads * B * 2                                    # :328
        sv = s * head_size * s * heads * B * 2                                    # :329
        softmax = B * heads * s * s * 5                                           # :330
        if use_flashattention:                                                    # :331-348
            block_size_r = min(ceil(Fraction(onchip_buffer) / (kv_byte * head_size)), head_size)   # :335
            n_blocks_r = ceil(Fraction(s, block_size_r))                          # :336
            q_numel = s * head_size * B * heads * a_byte                          # :337
            o_numel = s * s * B * heads * a_byte                                  # :338: seqlen x seqlen
            ops.append(_op("fused_attention", "attention", L, "331-348", OPs=qk + sv + softmax, load_act=q_numel,
                           store_act=o_numel * 2,
                           load_kv_cache=n_blocks_r * s * head_size * B * heads * kv_byte * 2,
                           note="O stored as seqlen x seqlen a head, twice; K, V for all query heads"))
        else:                                                                     # :349-382
            ops.append(_op("qk_matmul", "attention", L, "350-360", OPs=qk,
                           load_act=s * head_size * B * kv_heads * a_byte, store_act=s * s * B * heads * a_byte,
                           load_kv_cache=s * head_size * B * kv_heads * kv_byte))
            ops.append(_op("sv_matmul", "attention", L, "361-371", OPs=sv, load_act=s * s * B * heads * a_byte,
                           store_act=s * head_size * B * heads * a_byte,
                           load_kv_cache=s * head_size * B * kv_heads * kv_byte))
            ops.append(_op("softmax", "attention", L, "372-382", OPs=softmax, load_act=B * heads * s * s * a_byte,
                           store_act=B * heads * s * s * a_byte))
        n = B * s
        lines = ("383-393", "394-404", "405-415")
    for name in ("attn_norm", "mlp_norm"):                                        # configs/Llama.py:13-14
        ops.append(_op(name, "norm", L, lines[0], OPs=n * h * 7, load_act=n * h * a_byte, store_act=n * h * a_byte))
    for name in ("attn_add", "mlp_add"):
        ops.append(_op(name, ("norm", "residual"), L, lines[1], OPs=n * h, load_act=n * h * a_byte, store_act=n * h * a_byte,
                       note="one operand read"))
    ops.append(_op("mlp_act", "act", L, lines[2], OPs=n * h * 2, load_act=n * h * a_byte * 2,
                   store_act=n * h * a_byte, note="hidden_size wide, not intermediate_size"))
    V = hf["vocab_size"]                                                          # configs/Llama.py:25-38
    ops.append(_op("lm_head", "lm_head", 1, "25-38", path="configs/Llama.py", OPs=B * h * V * 1,
                   load_weight=h * V * w_byte, load_act=h * a_byte, store_act=V * a_byte,
                   note="B h V OPs (one per multiply-add); one token's input whatever the batch"))
    return ops
