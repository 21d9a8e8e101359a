"""The restated peers (bench/peers/) against figures derived by hand from each peer's formula, and against the
upstream example outputs that print the quantities restated: llm-analysis's ``examples/llama/outputs_infer_ideal``
and GenZ's ``tests/golden/mixtral_8x7b_{decode,prefill}_on_GH200.csv`` (LLM-Viewer's notebooks print no figures).

Each expected value is written out from the cited source line, not from the restatement: a toy config (hidden 8,
4 heads, 2 KV heads, head size 2, intermediate 28, so intermediate/hidden = 3.5 as llm-analysis's reader needs).
The known errors are reproduced on purpose: LLM-Viewer's fused attention stores O as seqlen elements a head (decode)
or seqlen x seqlen (prefill) and loads K, V for every query head; llm-analysis's decode attention FLOPs do not
see the context; GenZ reads K, V once a KV head whatever the on-chip memory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from peers import genz, llm_analysis, llm_viewer  # noqa: E402
from peers.common import PeerOp, Unsupported, groups, step_total  # noqa: E402
from peers.hf_configs import HF_CONFIGS, hf_config  # noqa: E402

TOY = dict(hidden_size=8, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=3, intermediate_size=28,
           vocab_size=10, max_position_embeddings=4096)


def _row(ops, name):
    (op,) = [o for o in ops if o.name == name]
    return op


# ------------------------------------------------------------------------------------------------ LLM-Viewer
@pytest.mark.parametrize("s", [1, 7, 512, 32768])
def test_llm_viewer_fused_decode_attention_by_hand(s):
    # model_analyzer.py:239-252 with B = 2, H = 4, head_size = 8 // 4 = 2, 2-byte everything:
    # Q = 2*2*4*2 = 32; O stored twice as s*B*H elements = 2*(s*2*4*2) = 32 s; K,V = 1*s*2*2*4*2*2 = 64 s
    op = _row(llm_viewer.analyze(TOY, phase="decode", batch=2, seqlen=s), "fused_attention")
    assert op.bytes == 32 + 32 * s + 64 * s
    assert op.flops == 32 * s + 32 * s + 40 * s          # qk, sv (2 s hs H B each) and 5 B H s softmax OPs
    assert op.count == 3


def test_llm_viewer_decode_output_term_grows_with_the_context():
    """O is B*H*head_size elements whatever the context; LLM-Viewer's store grows with seqlen (:242, :249)."""
    def store_o(s):
        op = _row(llm_viewer.analyze(TOY, phase="decode", batch=2, seqlen=s), "fused_attention")
        return op.bytes - 32 - 64 * s                    # less Q and K,V (test above)
    true_o = 2 * 4 * 2 * 2                               # B H head_size elements x 2 bytes, once
    assert [store_o(s) for s in (1, 10, 100)] == [32, 320, 3200]
    assert store_o(100) / true_o == 100


@pytest.mark.parametrize("s", [4, 8, 9])
def test_llm_viewer_fused_prefill_attention_by_hand(s):
    # :335-348: block_size_r = min(ceil(buffer / (2*2)), 2) = 2, n_blocks_r = ceil(s / 2); B = 2
    q = s * 2 * 2 * 4 * 2
    o = 2 * (s * s * 2 * 4 * 2)                          # seqlen x seqlen a head, twice
    kv = -(-s // 2) * s * 2 * 2 * 4 * 2 * 2
    op = _row(llm_viewer.analyze(TOY, phase="prefill", batch=2, seqlen=s), "fused_attention")
    assert op.bytes == q + o + kv


def test_llm_viewer_fused_prefill_at_4_written_out():
    # s = 4, B = 2: Q 4*2*2*4*2 = 128, O 2*(16*2*4*2) = 512, K,V 2*4*2*2*4*2*2 = 512
    assert _row(llm_viewer.analyze(TOY, phase="prefill", batch=2, seqlen=4), "fused_attention").bytes == 1152


def test_llm_viewer_prefill_output_term_grows_as_the_square():
    def o_term(s):
        op = _row(llm_viewer.analyze(TOY, phase="prefill", batch=1, seqlen=s), "fused_attention")
        return op.bytes - s * 2 * 1 * 4 * 2 - (-(-s // 2)) * s * 2 * 1 * 4 * 2 * 2
    assert o_term(64) == 4 * o_term(32) == 16 * o_term(16)


def test_llm_viewer_fused_path_ignores_gqa():
    """Fused K,V loads use num_attention_heads (:250), the unfused path num_key_value_heads (:263, :274)."""
    s = 100
    fused = _row(llm_viewer.analyze(TOY, phase="decode", batch=1, seqlen=s), "fused_attention")
    unfused = llm_viewer.analyze(TOY, phase="decode", batch=1, seqlen=s, use_flashattention=False)
    kv_unfused = 2 * (s * 2 * 1 * 2 * 2)                  # qk and sv each load s*hs*B*H_kv*2 bytes
    kv_fused = fused.bytes - 1 * 2 * 1 * 4 * 2 - 2 * (s * 1 * 4 * 2)
    assert kv_fused == 2 * kv_unfused                     # H / H_kv = 4 / 2
    assert sum(o.bytes for o in unfused if o.name in ("qk_matmul", "sv_matmul")) == \
        kv_unfused + (2 * 1 * 4 * 2 + s * 4 * 2) + (s * 4 * 2 + 2 * 4 * 2)


def test_llm_viewer_linear_rows_by_hand():
    ops = llm_viewer.analyze(TOY, phase="decode", batch=2, seqlen=5)
    k = _row(ops, "k_proj")                               # (8, 8*2/4 = 4): OPs 8*4*2*2; W 32*2, in 8*2*2, kv 4*2*2
    assert (k.flops, k.bytes) == (128, 64 + 32 + 16)
    down = _row(ops, "down_proj")                         # (28, 8): W 224*2, in 28*2*2, out 8*2*2
    assert (down.flops, down.bytes) == (28 * 8 * 2 * 2, 448 + 112 + 32)
    act = _row(ops, "mlp_act")                            # :315-325: hidden_size wide, 2 in 1 out
    assert act.bytes == 2 * 8 * 2 * 2 + 2 * 8 * 2
    head = _row(ops, "lm_head")                           # configs/Llama.py:33-36: B h V OPs, one token's input
    assert (head.flops, head.bytes, head.count) == (2 * 8 * 10, 8 * 10 * 2 + 8 * 2 + 10 * 2, 1)


def test_llm_viewer_llama_8b_decode_attention_at_32k():
    """The figure docs/llm.md quotes: per layer 2*32768*128*32*2 (K,V for 32 heads) + 2*32768*32*2 (O) + Q."""
    op = _row(llm_viewer.analyze(hf_config("llama-3.1-8b"), phase="decode", batch=1, seqlen=32768),
              "fused_attention")
    assert op.bytes == 536_870_912 + 4_194_304 + 8_192
    assert 536_870_912 == 4 * (2 * 32768 * 128 * 8 * 2)   # four times the GQA cache (8 KV heads)


# ---------------------------------------------------------------------------------------------- llm-analysis
def test_llm_analysis_example_output_kv_cache_and_flops():
    """cli99/llm-analysis examples/llama/outputs_infer_ideal/decapoda-research_llama-7b-hf-a100-sxm-80gb-w16a16e16-
    tp1-pp1-dp1-sp1-fe1-hbme1-summary.json @b60b392: kv_cache_memory_per_gpu 285212672, kv_cache_latency
    0.00027975740264835704 s at 2039 GB/s, decode_num_flops_fwd_total 13147570176; the model from
    llm_analysis/model_configs/decapoda-research_llama-7b-hf.json; batch 1, seq_len 512, 32 tokens generated."""
    m = llm_analysis.model_config_json(dict(name="decapoda-research_llama-7b-hf", num_layers=32, n_head=32,
                                            hidden_dim=4096, vocab_size=32000, max_seq_len=2048,
                                            ffn_embed_dim=16384, model_type="llama"))
    ops = llm_analysis.inference(m, phase="decode", batch=1, seq_len=512, num_tokens_to_generate=32)
    kv = _row(ops, "kv_cache")
    assert kv.step_bytes == 2 * 285_212_672
    assert kv.step_bytes / (2039 * 10**9) == pytest.approx(0.00027975740264835704, rel=1e-15)
    # decode_num_flops_fwd_total is get_num_flops_fwd_total (:978-1011): layers and logits, no layernorm
    assert sum(o.step_flops for o in ops if o.name != "layernorm") == 13_147_570_176


def test_llm_analysis_decode_rows_by_hand():
    ops = llm_analysis.inference(TOY, phase="decode", batch=2, seq_len=9)
    attn = _row(ops, "attn")
    # :279-281 params 2*64 + 2*8*(8*2/4) = 192, x2 bytes; :618-621 max(3*2*1*2*8, (2*1*2*8 + 4*4*1*2)*2)
    # = max(96, 128): at this toy size the flash term (4 n s B per head) wins
    assert attn.bytes == 192 * 2 + 128
    # :935-939 4*2*64 + 4*2*64/2 + 4*2*1*8
    assert attn.flops == 512 + 256 + 64
    mlp = _row(ops, "mlp")                               # 3*8*28 params x2; act max(2, 2*3.5)*1*2*8
    assert (mlp.bytes, mlp.flops) == (3 * 8 * 28 * 2 + 112, 6 * 2 * 64 * 7 // 2)
    kv = _row(ops, "kv_cache")                           # 2 x (2*B*(9+1)*head_dim 2*kv 2)*2
    assert (kv.bytes, kv.count) == (2 * (2 * 2 * 10 * 2 * 2) * 2, 3)
    assert _row(ops, "input_embedding").bytes == 10 * 8 * 2 and _row(ops, "output_embedding").bytes == 0


def test_llm_analysis_decode_attention_flops_ignore_the_context():
    f = [_row(llm_analysis.inference(TOY, phase="decode", batch=1, seq_len=s), "attn").flops for s in (1, 100, 4000)]
    assert f[0] == f[1] == f[2]


def test_llm_analysis_mixtral_reads_every_expert_computes_one():
    ops = llm_analysis.inference(hf_config("mixtral-8x7b"), phase="decode", batch=1, seq_len=1024)
    mlp = _row(ops, "mlp")
    assert mlp.bytes == 3 * 4096 * 14336 * 8 * 2 + 2 * 14336          # 8 experts' weights + a*ffn*B*s
    assert mlp.flops == 6 * 4096 * 14336                               # one expert (2 h ffn per matrix, 3 of them)


@pytest.mark.parametrize("name", ["qwen2.5-7b", "gemma-2-9b", "deepseek-v3"])
def test_llm_analysis_reader_fails_off_ratio_3_5(name):
    with pytest.raises(Unsupported, match="config.py:216-221"):
        llm_analysis.inference(hf_config(name), phase="decode", batch=1, seq_len=128)


def test_llm_analysis_refuses_beyond_max_seq_len():
    with pytest.raises(Unsupported, match="1577-1580"):
        llm_analysis.inference(TOY, phase="decode", batch=1, seq_len=4097)


# --------------------------------------------------------------------------------------------------- GenZ
def test_genz_decode_reads_kv_once_per_kv_head():
    """Logit Pre / Attend Pre with AC_onchip: only K (B, Hkv, N, D) and V move (operators.py:145-149, 174-178)."""
    ops = genz.layers("llama-3.1-8b", phase="decode", batch=3, seq=32768)
    logit, attend = _row(ops, "Logit Pre"), _row(ops, "Attend Pre")
    assert logit.bytes == attend.bytes == 3 * 8 * 32768 * 128 * 2
    assert logit.flops == attend.flops == 2 * 3 * 32 * 1 * 32768 * 128
    assert not [o for o in ops if o.name in ("Logit Suf", "Attend Suf")]      # output_gen_tokens = 0: no MACs
    qkv = _row(ops, "QKV")                                                     # weights only: (32+16)*128 x 4096
    assert qkv.bytes == (32 * 128 + 2 * 8 * 128) * 4096 * 2


def test_genz_prefill_flash_is_compulsory_traffic():
    """Prefill Logit keeps S on chip, Attend keeps P: Q+K and V+O once, whatever the SRAM (attention.py:38-41)."""
    s, B = 4096, 2
    ops = genz.layers("llama-3.1-8b", phase="prefill", batch=B, seq=s)
    logit, attend = _row(ops, "Logit"), _row(ops, "Attend")
    assert logit.bytes == (B * 32 * s * 128 + B * 8 * s * 128) * 2
    assert attend.bytes == (B * 8 * s * 128 + B * 32 * s * 128) * 2
    emb = _row(ops, "embeddings")                                              # one-hot (B, s, V) input GEMM
    assert emb.bytes == (B * s * 128256 + 4096 * 128256 + B * s * 4096) * 2


#: abhibambhaniya/GenZ-LLM-Analyzer tests/golden/mixtral_8x7b_decode_on_GH200.csv @091bdd0: one MoE decode layer,
#: create_inference_moe_decode_layer(1024, "mixtral_8x7b") (output_gen_tokens = 32) on System(offchip_mem_bw=4900,
#: memory_efficiency=0.8, bits='bf16') (tests/test_model_df_analysis.py:71-90): per row Num ops (MFLOP), the three
#: tensors (MB = 2**20 B) and Memory time (msec), as the file has them
GENZ_GOLDEN = (
    ("QKV", 50.331648, 0.0078125, 48.0, 0.01171875, 0.01195923271092698),
    ("Logit Pre", 8.388608, 0.0078125, 2.0, 0.0625, 0.0005030145450514189),
    ("Logit Suf", 0.262144, 0.0078125, 0.0625, 0.001953125, 1.623246675175604e-05),
    ("Attend Pre", 8.388608, 0.0625, 2.0, 0.0078125, 0.0005030145450514189),
    ("Attend Suf", 0.262144, 0.001953125, 0.0625, 0.0078125, 1.623246675175604e-05),
    ("Out Proj", 33.554432, 0.0078125, 32.0, 0.0078125, 0.007972998413639545),
    ("Gate", 0.065536, 0.0078125, 0.0625, 1.52587890625e-05, 1.7520268352664246e-05),
    ("up+gate", 469.762048, 0.0078125, 448.0, 0.109375, 0.1116150901431129),
    ("down", 234.881024, 0.0546875, 224.0, 0.0078125, 0.055807809981088786),
)


def test_genz_restatement_reproduces_its_golden_output():
    """Every row's FLOPs exactly, and its memory time as the off-chip bytes the restatement charges over 4900 GiB/s
    plus the rest (the on-chip tensors) over the default 18000 GiB/s (system.py:10-11; Unit's GB is 2**30),
    both at memory_efficiency 0.8 (operator_base.py:270): the residency of every tensor is right."""
    rows = [r for r in genz.layers("mixtral-8x7b", phase="decode", batch=1, seq=1024, output_gen_tokens=32)
            if r.name != "classifier"]             # the golden is one layer: no LM head
    assert [r.name for r in rows] == [g[0] for g in GENZ_GOLDEN]
    off_bw, on_bw = 4900 * 2**30 * 0.8, 18000 * 2**30 * 0.8
    for r, (name, mflop, a, w, c, ms) in zip(rows, GENZ_GOLDEN):
        assert r.flops == round(mflop * 10**6), name
        on_chip = (a + w + c) * 2**20 - r.bytes
        assert on_chip >= 0, name
        assert r.bytes / off_bw + on_chip / on_bw == pytest.approx(ms * 1e-3, rel=1e-12), name


#: ... tests/golden/mixtral_8x7b_prefill_on_GH200.csv @091bdd0: create_inference_moe_prefill_layer(1024,
#: "mixtral_8x7b") on the same system (tests/test_model_df_analysis.py:49-69)
GENZ_GOLDEN_PREFILL = (
    ("QKV", 51539.607552, 8.0, 48.0, 12.0, 0.016940369897959183),
    ("Logit", 8589.934592, 8.0, 2.0, 64.0, 0.006831508645124717),
    ("Attend", 8589.934592, 64.0, 2.0, 8.0, 0.006831508645124716),
    ("Out Proj", 34359.738368, 8.0, 32.0, 8.0, 0.011957908163265307),
    ("Gate", 67.108864, 8.0, 0.0625, 0.015625, 0.002012447435028699),
    ("up+gate", 481036.337152, 2.0, 1792.0, 112.0, 0.47482860331632654),
    ("down", 240518.168576, 56.0, 896.0, 2.0, 0.23766342474489796),
)


def test_genz_prefill_restatement_reproduces_its_golden_output():
    """Prefill: S kept on chip by Logit, P read from chip by Attend (C_onchip, A_onchip), the rest off chip."""
    rows = [r for r in genz.layers("mixtral-8x7b", phase="prefill", batch=1, seq=1024)
            if r.name not in ("embeddings", "classifier")]
    assert [r.name for r in rows] == [g[0] for g in GENZ_GOLDEN_PREFILL]
    off_bw, on_bw = 4900 * 2**30 * 0.8, 18000 * 2**30 * 0.8
    for r, (name, mflop, a, w, c, ms) in zip(rows, GENZ_GOLDEN_PREFILL):
        assert r.flops == round(mflop * 10**6), name
        on_chip = (a + w + c) * 2**20 - r.bytes
        assert r.bytes / off_bw + on_chip / on_bw == pytest.approx(ms * 1e-3, rel=1e-12), name


def test_genz_deepseek_decode_uses_the_dense_width_per_expert():
    ops = genz.layers("deepseek-v3", phase="decode", batch=1, seq=1024)
    up = _row(ops, "up+gate")
    assert up.bytes == 8 * 18432 * 2 * 7168 * 2 and up.count == 61
    assert _row(ops, "Logit Pre").bytes == 1 * 2 * 1024 * 56 * 2               # 2 KV heads of 7168 / 128


# --------------------------------------------------------------------------------------------------- common
def test_groups_merge_overlapping_rows():
    a = PeerOp("attn", ("qkv", "attention", "o_proj"), 10, 1, 2, "x")
    b = PeerOp("kv", "attention", 5, 0, 2, "x")
    c = PeerOp("norm", "norm", 1, 1, 4, "x")
    (g1, r1), (g2, r2) = groups([a, c, b])
    assert g1 == ("norm",) and g2 == ("qkv", "attention", "o_proj") and {r.name for r in r2} == {"attn", "kv"}
    assert step_total(r2) == 30 and step_total(r2, "flops") == 2


def test_peer_op_refuses_an_unknown_category():
    with pytest.raises(ValueError):
        PeerOp("x", "nonsense", 1, 1, 1, "x")


# --------------------------------------------------------------------------------- against tuning.llm's configs
def test_hf_fields_match_the_shipped_configs():
    """bench/peers/hf_configs.py and tuning/llm/configs/*.json transcribe the same model cards independently."""
    from tuning.llm import CONFIGS, load_config
    assert set(HF_CONFIGS) == set(CONFIGS)
    for name, hf in HF_CONFIGS.items():
        raw = load_config(name).raw
        for key, value in hf.items():
            assert raw.get(key) == value, (name, key, raw.get(key), value)


# ------------------------------------------------------------------------------------------- beside tilebound
def _bench():
    import bench_llm_peers
    return bench_llm_peers


@pytest.mark.parametrize("phase,kw", [("decode", dict(batch=1, context=4096)),
                                      ("prefill", dict(batch=1, context=0, new_tokens=512))])
def test_every_tilebound_op_has_a_category(phase, kw):
    bench = _bench()
    for name in HF_CONFIGS:
        for op, cat, _, _ in bench.tilebound_ops(name, phase=phase, **kw):
            assert cat in bench.CATEGORIES, (name, op)


def test_tilebound_decode_attention_is_at_least_the_compulsory_kv():
    """GenZ's decode attention is exactly K and V once a KV head (2 B H_kv N_k d bytes x 2, the test above):
    a lower bound any exact count must meet; LLM-Viewer's is four times it plus its O term (H / H_kv = 4)."""
    bench = _bench()
    n = 32768
    tb = bench._sum(bench.tilebound_ops("llama-3.1-8b", phase="decode", batch=1, context=n), ("attention",))
    compulsory = 32 * 2 * (8 * (n + 1) * 128) * 2
    assert tb >= compulsory
    lv = bench.peer_ops("LLM-Viewer", "llama-3.1-8b", phase="decode", batch=1, context=n)
    lv_attn = step_total([o for o in lv if o.category == "attention"])
    assert lv_attn == 4 * compulsory + 32 * (2 * (n + 1) * 32 * 2 + 128 * 32 * 2)
    assert 3.9 < lv_attn / tb <= 4.04


def test_llm_analysis_charges_the_cache_twice_against_tilebound():
    bench = _bench()
    n = 32768
    la = bench.peer_ops("llm-analysis", "llama-3.1-8b", phase="decode", batch=1, context=n)
    kv = _row(la, "kv_cache").step_bytes
    assert kv == 2 * (32 * 2 * (8 * (n + 1) * 128) * 2)       # its cache at seq_len + 1, loaded and stored
