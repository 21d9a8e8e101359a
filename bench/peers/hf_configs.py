"""The ``config.json`` fields the peers read, for the configs ``tilebound llm`` ships.

LLM-Viewer and llm-analysis read a model through ``transformers.AutoConfig`` (the Hugging Face ``config.json``),
so their restatements take these dicts.  The values are the architecture fields of each model card's
``config.json`` on the Hugging Face Hub (the repository named beside each); only the fields some peer reads, and
those that show what it leaves out, are kept.  ``tests/unit/test_llm_peers.py`` checks them against the configs
``tuning.llm`` ships (an independent transcription of the same cards).
"""

from __future__ import annotations

from types import MappingProxyType

_LLAMA = dict(model_type="llama", hidden_act="silu")

HF_CONFIGS = MappingProxyType({
    # huggingface.co/meta-llama/Llama-3.1-8B, config.json
    "llama-3.1-8b": dict(_LLAMA, hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
                         num_hidden_layers=32, intermediate_size=14336, vocab_size=128256,
                         max_position_embeddings=131072, tie_word_embeddings=False),
    # huggingface.co/meta-llama/Llama-3.1-70B, config.json
    "llama-3.1-70b": dict(_LLAMA, hidden_size=8192, num_attention_heads=64, num_key_value_heads=8,
                          num_hidden_layers=80, intermediate_size=28672, vocab_size=128256,
                          max_position_embeddings=131072, tie_word_embeddings=False),
    # huggingface.co/mistralai/Mistral-7B-v0.1, config.json
    "mistral-7b": dict(model_type="mistral", hidden_act="silu", hidden_size=4096, num_attention_heads=32,
                       num_key_value_heads=8, num_hidden_layers=32, intermediate_size=14336, vocab_size=32000,
                       max_position_embeddings=32768, sliding_window=4096, tie_word_embeddings=False),
    # huggingface.co/Qwen/Qwen2.5-7B, config.json
    "qwen2.5-7b": dict(model_type="qwen2", hidden_act="silu", hidden_size=3584, num_attention_heads=28,
                       num_key_value_heads=4, num_hidden_layers=28, intermediate_size=18944, vocab_size=152064,
                       max_position_embeddings=131072, tie_word_embeddings=False),
    # huggingface.co/google/gemma-2-9b, config.json
    "gemma-2-9b": dict(model_type="gemma2", hidden_act="gelu_pytorch_tanh", hidden_size=3584,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=256, num_hidden_layers=42,
                       intermediate_size=14336, vocab_size=256000, max_position_embeddings=8192,
                       sliding_window=4096),
    # huggingface.co/mistralai/Mixtral-8x7B-v0.1, config.json
    "mixtral-8x7b": dict(model_type="mixtral", hidden_act="silu", hidden_size=4096, num_attention_heads=32,
                         num_key_value_heads=8, num_hidden_layers=32, intermediate_size=14336, vocab_size=32000,
                         max_position_embeddings=32768, num_local_experts=8, num_experts_per_tok=2,
                         tie_word_embeddings=False),
    # huggingface.co/deepseek-ai/DeepSeek-V3, config.json
    "deepseek-v3": dict(model_type="deepseek_v3", hidden_act="silu", hidden_size=7168, num_attention_heads=128,
                        num_key_value_heads=128, num_hidden_layers=61, intermediate_size=18432,
                        moe_intermediate_size=2048, n_routed_experts=256, num_experts_per_tok=8,
                        n_shared_experts=1, first_k_dense_replace=3, q_lora_rank=1536, kv_lora_rank=512,
                        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, vocab_size=129280,
                        max_position_embeddings=163840, tie_word_embeddings=False),
})


def hf_config(name: str) -> dict:
    """A copy of the shipped config's ``config.json`` fields (KeyError names the unknown config)."""
    return dict(HF_CONFIGS[name])
