"""GenZ's per-operation formulas, restated.

Source: abhibambhaniya/GenZ-LLM-Analyzer at commit ``091bdd0a2777dfe4d405a8fcdd91c8f12b474bf3`` (the head of
``main``): ``GenZ/operators.py`` (each operator's tensors and MACs), ``GenZ/operator_base.py`` (sizes, memory
time), ``GenZ/analyse_model.py`` (the residency flags and the batch column), ``GenZ/Models/attention.py``,
``ffn.py``, ``embedding.py``, ``get_language_model.py`` (the layer lists) and its own model table
``GenZ/Models/Model_sets/*.py``.  Every row names the lines it restates.

GenZ gives each operator three tensors (input ``A``, weight-or-second-operand ``W``, output ``C``,
``operators.py``), pins each ``off`` or ``on`` chip from a residency flag in the layer list
(``analyse_model.py:203-221``), and charges its memory time as the ``off`` tensors over the HBM bandwidth and the
``on`` ones over the on-chip bandwidth (``operator_base.py:131-146``); an operator with no MACs has no memory
time (``:275-276``).  The bytes of a row here are its ``off``-chip tensors x 2 bytes (``bits='bf16'``,
``system.py:7``); FLOPs are ``2 x`` its MACs (``operator_base.py:261``).  The batch is inserted as each row's
first dimension (``analyse_model.py:245``): weights are counted once, activations ``B`` times.

FlashAttention is a residency flag: prefill's ``Logit`` keeps ``S`` on chip (``C_onchip``) and ``Attend`` reads
``P`` from chip (``A_onchip``, ``attention.py:38-41``), decode's keep ``Q``, ``S``, ``P``, ``O`` on chip
(``AC_onchip``, ``:65-69``): ``K`` and ``V`` are read exactly once a KV head (GQA counted right:
``operators.py:145-149``) whatever the on-chip memory, where a tiled kernel re-reads them once a query block.
Decode's projections and FFN are ``AC_onchip`` too (``attention.py:65,70``, ``ffn.py:114-115, 127-128``): only
their weights move.  There are no norm, RoPE, activation or residual operators in these layer lists, and no
sliding window (``sliding_window`` is in the model table but the decode attention reads the whole context).

Its DeepSeek-V3 entry (``Model_sets/misc.py:140-148``) has ``num_key_value_heads=2`` and no MLA (``attention.py:16``:
"TODO: implement Latent attention"), and decode prices every layer as MoE with the dense ``intermediate_size``
(18,432) per routed expert (``ffn.py:60-136``: ``Df = intermediate_size``), not ``moe_intermediate_size`` (2,048).
The mapping used: ``create_full_prefill_model(input_sequence_length=prompt)`` and
``create_full_decode_model(input_sequence_length=context, output_gen_tokens=0)`` (the default,
``get_language_model.py:178``), ``tp = ep = sp = 1``.
"""

from __future__ import annotations

from math import ceil
from types import MappingProxyType

from .common import PeerOp

COMMIT = "091bdd0a2777dfe4d405a8fcdd91c8f12b474bf3"
REPO = "abhibambhaniya/GenZ-LLM-Analyzer"
BYTES = 2                                      # system.py:7, mem_multiplier['bf16']


def _src(path: str, lines: str) -> str:
    return f"{REPO} GenZ/{path}:{lines}@{COMMIT[:7]}"


def _cfg(src, **kw):
    kw.setdefault("num_experts", 1)
    kw.setdefault("expert_top_k", 1)
    kw.setdefault("head_dim", kw["hidden_size"] // kw["num_attention_heads"])   # default_models.py:95-96
    kw["source"] = src
    return MappingProxyType(kw)


#: GenZ's own model table (its ``ModelConfig`` entries), by the name ``tilebound llm`` ships them under
MODELS = MappingProxyType({
    "llama-3.1-8b": _cfg(_src("Models/Model_sets/meta.py", "102-108"), hidden_size=4096, num_attention_heads=32,
                         num_key_value_heads=8, num_ffi=2, intermediate_size=14336, num_decoder_layers=32,
                         vocab_size=128256),
    "llama-3.1-70b": _cfg(_src("Models/Model_sets/meta.py", "111-117"), hidden_size=8192, num_attention_heads=64,
                          num_key_value_heads=8, num_ffi=2, intermediate_size=28672, num_decoder_layers=80,
                          vocab_size=128256),
    "mistral-7b": _cfg(_src("Models/Model_sets/mistral.py", "6-12"), hidden_size=4096, num_attention_heads=32,
                       num_key_value_heads=8, num_ffi=2, intermediate_size=14336, num_decoder_layers=32,
                       vocab_size=32000),
    "qwen2.5-7b": _cfg(_src("Models/Model_sets/alibaba.py", "124-128"), hidden_size=3584, num_attention_heads=28,
                       num_key_value_heads=4, num_ffi=2, intermediate_size=18944, num_decoder_layers=28,
                       vocab_size=152064),
    "gemma-2-9b": _cfg(_src("Models/Model_sets/google.py", "32-39"), hidden_size=3584, num_attention_heads=16,
                       num_key_value_heads=8, head_dim=256, num_ffi=2, intermediate_size=14336,
                       num_decoder_layers=42, vocab_size=256000),
    "mixtral-8x7b": _cfg(_src("Models/Model_sets/mistral.py", "14-21"), hidden_size=4096, num_attention_heads=32,
                         num_key_value_heads=8, num_ffi=2, intermediate_size=14336, num_decoder_layers=32,
                         num_experts=8, expert_top_k=2, vocab_size=32000),
    "deepseek-v3": _cfg(_src("Models/Model_sets/misc.py", "140-148"), hidden_size=7168, num_attention_heads=128,
                        num_key_value_heads=2, num_ffi=2, intermediate_size=18432, num_decoder_layers=61,
                        num_experts=256, expert_top_k=8, moe_intermediate_size=2048, vocab_size=129280),
})

# residency flags (Models/utils.py ResidencyInfo) -> which of (A, W, C) stay on chip (analyse_model.py:203-221)
ALL_OFF, A_ON, C_ON, AC_ON = (), ("A",), ("C",), ("A", "C")


def gemm(B, M, N, K):
    """``GEMM`` (``operators.py:94-125``) with the batch inserted: ``A = (B, N, K)``, ``W = (M, K)``,
    ``C = (B, N, M)``; ``B M N K`` MACs."""
    return {"A": B * N * K, "W": M * K, "C": B * N * M}, B * M * N * K


def logit(B, H, M, N, D, Hkv):
    """``Logit`` (``operators.py:128-163``): ``Q = (B, H, M, D)``, ``K = (B, Hkv, N, D)``, ``S = (B, H, M, N)``."""
    return {"A": B * H * M * D, "W": B * Hkv * N * D, "C": B * H * M * N}, B * H * M * N * D


def attend(B, H, M, N, D, Hkv):
    """``Attend`` (``operators.py:165-191``): ``P = (B, H, M, N)``, ``V = (B, Hkv, N, D)``, ``O = (B, H, M, D)``."""
    return {"A": B * H * M * N, "W": B * Hkv * N * D, "C": B * H * M * D}, B * H * M * N * D


def _row(name, category, count, src, op, on_chip, note=""):
    sizes, macs = op
    if macs == 0:                      # operator_base.py:275-276: no compute, no memory time
        return None
    off = sum(v for k, v in sizes.items() if k not in on_chip)
    return PeerOp(name, category, off * BYTES, 2 * macs, count, src, note)


def layers(name: str, *, phase: str, batch: int, seq: int, output_gen_tokens: int = 0) -> list[PeerOp]:
    """The rows of GenZ's full model (``create_full_prefill_model`` / ``create_full_decode_model``) for a config
    of :data:`MODELS` at ``tp = ep = sp = 1``: ``seq`` is the prompt (prefill) or the context (decode)."""
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase must be decode or prefill, got {phase!r}")
    m = MODELS[name]
    B, D, H, Hkv, Dq = batch, m["hidden_size"], m["num_attention_heads"], m["num_key_value_heads"], m["head_dim"]
    Df, fi, E, K, V = m["intermediate_size"], m["num_ffi"], m["num_experts"], m["expert_top_k"], m["vocab_size"]
    L = m["num_decoder_layers"]
    qkv_out = H * Dq + 2 * Hkv * Dq
    rows = []
    if phase == "prefill":
        s = seq
        rows.append(_row("embeddings", "embed", 1, _src("Models/embedding.py", "5-21"), gemm(B, D, s, V), ALL_OFF,
                         "a GEMM with a one-hot (B, s, vocab) input"))
        att = "Models/attention.py"
        rows.append(_row("QKV", "qkv", L, _src(att, "35"), gemm(B, qkv_out, s, D), ALL_OFF))
        rows.append(_row("Logit", "attention", L, _src(att, "38"), logit(B, H, s, s, Dq, Hkv), C_ON,
                         "S on chip; K read once a KV head"))
        rows.append(_row("Attend", "attention", L, _src(att, "41"), attend(B, H, s, s, Dq, Hkv), A_ON,
                         "P on chip; V read once a KV head"))
        rows.append(_row("Out Proj", "o_proj", L, _src(att, "44"), gemm(B, D, s, H * Dq), ALL_OFF))
        ffn = "Models/ffn.py"
        if E > 1:
            rows.append(_row("Gate", "router", L, _src(ffn, "31"), gemm(B, E, s, D), ALL_OFF))
            t = s * K // E                                                        # ffn.py:36
            rows.append(_row("up+gate", ("gate_up", "experts"), L, _src(ffn, "41"), gemm(B, E * Df * fi, t, D),
                             ALL_OFF, "every expert's weights; s K / E tokens each"))
            rows.append(_row("down", ("down", "experts"), L, _src(ffn, "42"), gemm(B, D, t, E * Df), ALL_OFF))
        else:
            rows.append(_row("up+gate", "gate_up", L, _src(ffn, "49"), gemm(B, Df * fi, s, D), ALL_OFF))
            rows.append(_row("down", "down", L, _src(ffn, "50"), gemm(B, D, s, Df), ALL_OFF))
        rows.append(_row("classifier", "lm_head", 1, _src("Models/embedding.py", "23-41"), gemm(B, V, s, D),
                         ALL_OFF, "logits for every prompt token"))
    else:
        n = seq
        att = "Models/attention.py"
        rows.append(_row("QKV", "qkv", L, _src(att, "65"), gemm(B, qkv_out, 1, D), AC_ON, "weights only"))
        rows.append(_row("Logit Pre", "attention", L, _src(att, "66"), logit(B, H, 1, n, Dq, Hkv), AC_ON,
                         "K once a KV head"))
        rows.append(_row("Logit Suf", "attention", L, _src(att, "68"), logit(B, H, 1, output_gen_tokens, Dq, Hkv),
                         AC_ON))
        rows.append(_row("Attend Pre", "attention", L, _src(att, "67"), attend(B, H, 1, n, Dq, Hkv), AC_ON,
                         "V once a KV head"))
        rows.append(_row("Attend Suf", "attention", L, _src(att, "69"),
                         attend(B, H, 1, output_gen_tokens, Dq, Hkv), AC_ON))
        rows.append(_row("Out Proj", "o_proj", L, _src(att, "70"), gemm(B, D, 1, H * Dq), AC_ON, "weights only"))
        ffn = "Models/ffn.py"
        if E > 1:
            rows.append(_row("Gate", "router", L, _src(ffn, "84"), gemm(B, E, 1, D), ALL_OFF))
            a = max(1, ceil(K / 1))                        # ffn.py:95-97: A = K activated, over ep = 1 chips
            rows.append(_row("up+gate", ("gate_up", "experts"), L, _src(ffn, "114"), gemm(B, a * Df * fi, 1, D),
                             AC_ON, "top-k experts' weights at the dense intermediate size"))
            rows.append(_row("down", ("down", "experts"), L, _src(ffn, "115"), gemm(B, D, 1, a * Df), AC_ON))
            # ffn.py:118-122: the unused experts have no tokens, so no MACs and no memory time
        else:
            rows.append(_row("up+gate", "gate_up", L, _src(ffn, "127"), gemm(B, Df * fi, 1, D), AC_ON,
                             "weights only"))
            rows.append(_row("down", "down", L, _src(ffn, "128"), gemm(B, D, 1, Df), AC_ON, "weights only"))
        rows.append(_row("classifier", "lm_head", 1, _src("Models/embedding.py", "23-41"), gemm(B, V, 1, D), ALL_OFF))
    return [r for r in rows if r is not None]

