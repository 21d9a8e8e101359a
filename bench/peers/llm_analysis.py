"""llm-analysis's per-operation formulas, restated.

Source: cli99/llm-analysis, ``llm_analysis/analysis.py`` (``LLMAnalysis``) and ``llm_analysis/config.py``
(``get_model_config_from_hf``), at commit ``d841e40aec8c84b9e76ba9cfbce67418adb172bd`` (2024-11-13, the head of
``main``).  Every row names the lines it restates.

llm-analysis prices a layer as three latencies: attention, MLP and two layernorms
(``analysis.py:1324``), each ``max(compute, memory)`` where the memory side is **weights plus the activation
memory footprint** over the HBM bandwidth (``:1072-1082``, ``:1136-1147``, ``:1189-1195``): the footprint a
buffer-reusing inference needs (``get_activation_memory_per_layer_*``, ``:553-756``) stands in for the traffic.
Decode adds the KV cache, read *and written* whole every step: ``2 x kv_cache_memory`` (``:1697-1699``), and the
whole input-embedding table is read every step (``:1367-1369``); the output embedding (LM head) is compute only
(``:1385-1391``: its weights are never charged).  The bytes of a row here are what its latency divides by the
bandwidth (with ``flops_efficiency = hbm_memory_efficiency = 1``); its FLOPs are what the compute side divides by
the peak.

The mapping used: ``inference(batch_size_per_gpu=batch, seq_len=context, num_tokens_to_generate=1)`` for decode
(the cache is sized at ``seq_len + num_tokens_to_generate``, ``:1691-1695``) and ``seq_len = prompt`` for prefill;
dtype ``w16a16e16``, ``layernorm_dtype_bytes = 2`` (``inference``'s default, ``:1553``), ``tp = ep = sp = 1``.

Known errors it keeps, restated as they are:

* the attention FLOPs are ``4 B s h^2 (1 + 1/g) + 4 B s^2 h`` (``:935-939``): in decode ``s = 1``, so the
  attention-over-the-cache FLOPs do not grow with the context;
* the MLP reads every expert's weights (``get_num_params_per_layer_mlp`` x ``moe_num_experts``, ``:290-292``,
  ``:1136-1139``) but computes one expert (``:954-956`` has no ``moe_top_k``), and the reader never sets
  ``moe_top_k`` (``config.py:223-237``: the default 1 of ``config.py:63``): Mixtral runs as top-1 over 8 experts;
* ``head_dim = hidden / n_head`` (``:907``) and square Q/O projections (``:279-281``);
* the Hugging Face reader sets ``mlp_gated_linear_units`` only when ``intermediate / hidden == 3.5``
  (``config.py:216-221``); any other ratio leaves it unbound, and ``ModelConfig(...)`` at ``config.py:223-237``
  raises ``UnboundLocalError``: Qwen2.5-7B (5.29), Gemma-2-9B (4) and DeepSeek-V3 (2.57) cannot be read
  (:class:`peers.common.Unsupported`).
"""

from __future__ import annotations

from fractions import Fraction

from .common import PeerOp, Unsupported

COMMIT = "d841e40aec8c84b9e76ba9cfbce67418adb172bd"
REPO = "cli99/llm-analysis"
FFN = ("router", "gate_up", "act", "down", "experts", "combine")


def _src(lines: str, path: str = "llm_analysis/analysis.py") -> str:
    return f"{REPO} {path}:{lines}@{COMMIT[:7]}"


def model_config(hf: dict) -> dict:
    """``get_model_config_from_hf`` (``config.py:157-238``) and ``ModelConfig.__post_init__`` (``:66-78``) on a
    ``config.json``: the fields the analysis uses.  Raises :class:`Unsupported` where the reader fails."""
    h = hf["hidden_size"]
    experts = hf.get("moe_num_experts", hf.get("num_local_experts", 1))          # config.py:199-207
    ffn = hf.get("ffn_embed_dim", hf.get("intermediate_size"))                   # :209-214
    ratio = Fraction(ffn, h)                                                     # :217
    if ratio != Fraction(7, 2):                                                  # :218-221
        raise Unsupported(f"llm-analysis cannot read this config: intermediate/hidden = {float(ratio):.4g} != 3.5 "
                          f"leaves mlp_gated_linear_units unbound (llm_analysis/config.py:216-221), so "
                          f"ModelConfig(...) raises UnboundLocalError (:223-237)")
    return model_config_json({"num_layers": hf["num_hidden_layers"], "n_head": hf["num_attention_heads"],
                              "hidden_dim": h, "vocab_size": hf["vocab_size"],
                              "max_seq_len": hf.get("max_position_embeddings"),
                              "num_key_value_heads": hf.get("num_key_value_heads"), "ffn_embed_dim": ffn,
                              "moe_num_experts": experts, "mlp_gated_linear_units": True})   # :223-237


def model_config_json(d: dict) -> dict:
    """``ModelConfig(**d)`` (``config.py:45-78``), as for a config of ``llm_analysis/model_configs/*.json``: the
    defaults (``ffn_embed_dim = 4 h``, ``moe_top_k = 1``, not gated) and ``__post_init__``'s derived fields."""
    m = {"max_seq_len": None, "num_key_value_heads": None, "ffn_embed_dim": None, "expansion_ratio": None,
         "moe_num_experts": 1, "moe_top_k": 1, "mlp_gated_linear_units": False}
    m.update({k: v for k, v in d.items() if v is not None or k not in m})
    h = m["hidden_dim"]
    if m["ffn_embed_dim"] is None and m["expansion_ratio"] is None:              # :67-69
        m["ffn_embed_dim"], m["expansion_ratio"] = 4 * h, 4
    elif m["ffn_embed_dim"] is None:                                             # :70-71
        m["ffn_embed_dim"] = h * m["expansion_ratio"]
    elif m["expansion_ratio"] is None:                                           # :72-73
        m["expansion_ratio"] = Fraction(m["ffn_embed_dim"], h)
    if m["num_key_value_heads"] is None:                                         # :75-76
        m["num_key_value_heads"] = m["n_head"]
    m["num_key_value_groups"] = Fraction(m["n_head"], m["num_key_value_heads"])  # :78
    return m


def inference(hf: dict, *, phase: str, batch: int, seq_len: int, num_tokens_to_generate: int = 1,
              weight_bits: int = 16, activation_bits: int = 16, embedding_bits: int = 16,
              layernorm_dtype_bytes: int = 2, kv_cache_dtype_bytes=None) -> list[PeerOp]:
    """The rows of ``LLMAnalysis.inference`` (``analysis.py:1546-1836``) for one phase at ``tp = 1``, the model
    read from a ``config.json`` (:func:`model_config`), or given as :func:`model_config_json`'s record."""
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase must be decode or prefill, got {phase!r}")
    m = hf if "num_key_value_groups" in hf else model_config(hf)
    if m["max_seq_len"] is not None and seq_len > m["max_seq_len"]:             # :1577-1580
        raise Unsupported(f"llm-analysis refuses seq_len {seq_len} > max_seq_len {m['max_seq_len']} "
                          f"(analysis.py:1577-1580)")
    w, a, emb = Fraction(weight_bits, 8), Fraction(activation_bits, 8), Fraction(embedding_bits, 8)
    kvb = a if kv_cache_dtype_bytes is None else Fraction(kv_cache_dtype_bytes)  # :1586-1588
    B, h, n_head, L = batch, m["hidden_dim"], m["n_head"], m["num_layers"]
    s = 1 if phase == "decode" else seq_len                                      # :1766-1768 (use_kv_cache)
    E, g, ratio = m["moe_num_experts"], m["num_key_value_groups"], m["expansion_ratio"]
    kv_heads = max(Fraction(m["num_key_value_heads"]), 1)                        # :273-277 at tp = 1
    params_attn = 2 * h**2 + 2 * h * (h * kv_heads / n_head)                     # :279-281
    gated = m["mlp_gated_linear_units"]
    params_mlp = (3 if gated else 2) * h * m["ffn_embed_dim"] * E                # :290-292
    # get_activation_memory_per_layer_attn, inference, flash_attn=True (:604-607, :618-621)
    attn_compute = (2 * s * B * h + 4 * n_head * s * B) * a
    act_attn = max(3 * a * s * B * h, attn_compute)
    # get_activation_memory_per_layer_mlp, inference (:695-699)
    act_mlp = max(a, a * ratio) * s * B * h * m["moe_top_k"]
    flops_attn = 4 * B * s * h**2 + 4 * B * s * h**2 / g + 4 * B * s**2 * h      # :935-939
    flops_mlp = (6 if gated else 4) * B * s * h**2 * ratio                       # :954-956
    ops = [
        PeerOp("attn", ("qkv", "attention", "o_proj"), params_attn * w + act_attn, flops_attn, L,
               _src("1044-1093"), "weights + activation footprint max(3 a s B h, (2 s B h + 4 n s B) a)"),
        PeerOp("mlp", FFN, params_mlp * w + act_mlp, flops_mlp, L, _src("1108-1166"),
               "every expert's weights (x %d), one expert's FLOPs" % E if E > 1 else
               "weights + activation footprint a (ffn/h) s B h"),
        PeerOp("layernorm", "norm", s * B * h * layernorm_dtype_bytes, s * B * h * 5, 2 * L, _src("1168-1195"),
               "one tensor's footprint, x2 a layer (:1324)"),
        PeerOp("input_embedding", "embed", m["vocab_size"] * h * emb, 0, 1, _src("1351-1372"),
               "the whole vocab x hidden table read every step"),
        PeerOp("output_embedding", "lm_head", 0, 2 * s * B * m["vocab_size"] * h, 1, _src("1374-1391"),
               "compute only: the LM head's weights are never charged"),
    ]
    if phase == "decode":
        head_dim = Fraction(h, n_head)                                           # :907
        per_layer = 2 * B * (seq_len + num_tokens_to_generate) * head_dim * kv_heads * kvb   # :913-914
        ops.append(PeerOp("kv_cache", "attention", 2 * per_layer, 0, L, _src("1691-1699"),
                          "the whole cache loaded and stored every step (2 x its size)"))
    return ops
