"""The shipped configs against their model cards, typed by hand, and the reader's refusals."""

import json

import pytest

from base.errors import BadInput
from tuning.llm import CONFIGS, load_config
from tuning.llm.configs import read_config

# name: (layers, heads, kv heads, head_dim, hidden, the card's parameter count, its rounding)
CARDS = {
    "llama-3.1-8b": (32, 32, 8, 128, 4096, 8.03e9, 0.005e9),      # "8.03B" (Llama 3.1 model card)
    "llama-3.1-70b": (80, 64, 8, 128, 8192, 70.6e9, 0.05e9),      # "70.6B"
    "mistral-7b": (32, 32, 8, 128, 4096, 7.24e9, 0.005e9),        # "7.24B" (Mistral-7B-v0.1 card)
    "qwen2.5-7b": (28, 28, 4, 128, 3584, 7.615e9, 0.005e9),       # "7.61B" truncated: [7.61, 7.62) (below)
    "gemma-2-9b": (42, 16, 8, 256, 3584, 9.24e9, 0.005e9),        # "9.24B" (gemma-2-9b card)
    "mixtral-8x7b": (32, 32, 8, 128, 4096, 46.7e9, 0.05e9),       # "46.7B" (Mixtral paper, §2)
    "deepseek-v3": (61, 128, 128, 192, 7168, 671e9, 0.5e9),       # "671B" (DeepSeek-V3 report, main model)
}


def test_every_shipped_config_has_a_card_row():
    assert set(CONFIGS) == set(CARDS)


@pytest.mark.parametrize("name", sorted(CARDS))
def test_card_figures(name):
    layers, heads, kv, hd, hidden, params, tol = CARDS[name]
    c = load_config(name)
    assert (c.layers, c.heads, c.kv_heads, c.head_dim, c.hidden) == (layers, heads, kv, hd, hidden)
    assert abs(c.param_count() - params) <= tol, f"{c.param_count():,} vs the card's {params:,.0f}"


def test_llama_8b_params_by_hand():
    # 2 x 128256 x 4096 (embeddings, untied head) + 32 x (4096 x 6144 + 4096^2 + 3 x 4096 x 14336 + 2 x 4096) + 4096
    assert load_config("llama-3.1-8b").param_count() == 8_030_261_248


def test_qwen_card_truncates():
    # the Qwen2.5-7B card gives 7.61B in all and 6.53B without the embeddings (the input table and the
    # untied head, 2 x 152064 x 3584): the first figure is truncated, the second rounded
    c = load_config("qwen2.5-7b")
    assert 7.61e9 <= c.param_count() < 7.62e9
    assert abs(c.param_count() - 2 * 152064 * 3584 - 6.53e9) <= 0.005e9


def test_layer_patterns():
    g = load_config("gemma-2-9b")
    assert [k.attention for k in g.layer_kinds[:4]] == ["window", "full", "window", "full"]
    assert g.window_left == 4095 and g.tie_embeddings and g.sandwich_norms
    ds = dict((k.name, n) for k, n in load_config("deepseek-v3").groups())
    assert ds == {"mla.dense": 3, "mla.moe": 58}
    mx = load_config("mixtral-8x7b")
    assert (mx.experts, mx.top_k, mx.sliding_window) == (8, 2, None)
    assert {k.attention for k in load_config("mistral-7b").layer_kinds} == {"window"}
    assert {k.attention for k in load_config("qwen2.5-7b").layer_kinds} == {"full"}   # use_sliding_window false


def test_unused_fields_are_listed():
    assert "query_pre_attn_scalar" in load_config("gemma-2-9b").unused
    assert "rope_theta" in load_config("llama-3.1-8b").unused
    assert "num_nextn_predict_layers" in load_config("deepseek-v3").unused
    assert "hidden_size" not in load_config("llama-3.1-8b").unused


def _fields(name):
    with open(CONFIGS[name]) as f:
        return json.load(f)


def test_unknown_model_type_named():
    with pytest.raises(BadInput) as e:
        read_config({**_fields("llama-3.1-8b"), "model_type": "falcon"})
    assert e.value.param == "model_type" and "falcon" in e.value.problem


def test_missing_field_named():
    f = _fields("mixtral-8x7b")
    del f["num_local_experts"]
    with pytest.raises(BadInput) as e:
        read_config(f)
    assert e.value.param == "num_local_experts"


def test_heads_not_divisible_by_kv_heads():
    with pytest.raises(BadInput) as e:
        read_config({**_fields("llama-3.1-8b"), "num_key_value_heads": 5})
    assert e.value.param == "num_key_value_heads"


def test_not_json_and_unknown_name(tmp_path):
    p = tmp_path / "config.json"
    p.write_text("{not json")
    with pytest.raises(BadInput) as e:
        load_config(str(p))
    assert e.value.param == "config" and "not JSON" in e.value.problem
    with pytest.raises(BadInput) as e:
        load_config("llama-3.1-8")
    assert "llama-3.1-8b" in e.value.problem


def test_a_path_reads_like_the_name(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(_fields("qwen2.5-7b")))
    assert load_config(str(p)).param_count() == load_config("qwen2.5-7b").param_count()


def test_qwen3_reader():
    # Qwen/Qwen3-8B's config.json fields as its model card states them: 36 layers, 32 query / 8 KV heads, head_dim
    # 128, intermediate 12288; the card: 8.2B parameters, 6.95B without the embeddings
    c = read_config({"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
                     "max_position_embeddings": 40960, "tie_word_embeddings": False, "rope_theta": 1000000})
    assert c.qk_norm and not c.qkv_bias and c.unused == ("rope_theta",)
    assert abs(c.param_count() - 8.2e9) <= 0.05e9
    assert abs(c.param_count() - 2 * 151936 * 4096 - 6.95e9) <= 0.005e9
