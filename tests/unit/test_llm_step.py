"""One LLM step against figures worked out by hand: KV reads, projection FLOPs, the TP rules, MoE counts."""

from fractions import Fraction

import pytest

from base.errors import BadInput
from tuning.llm import load_config, step
from tuning.llm.shapes import per_gpu, ring_allreduce_bytes


def _op(s, name, layer_type=None):
    hits = [o for o in s.ops if o.name == name and (layer_type is None or o.layer_type == layer_type)]
    assert len(hits) == 1, [o.name for o in s.ops]
    return hits[0]


def test_kv_cache_llama_8b_per_token():
    # 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 B a token (docs: REFERENCE §10)
    s = step("llama-3.1-8b", context=0, new_tokens=1)
    assert s.totals["kv_cache_bytes"] == 131_072
    assert step("llama-3.1-8b", context=999, batch=3).totals["kv_cache_bytes"] == 131_072 * 3 * 1000


def test_kv_cache_mla():
    # DeepSeek-V3: (512 + 64) x 2 bytes x 61 layers a token; FlashMLA's FP8 layout 656 B a layer
    assert step("deepseek-v3").totals["kv_cache_bytes"] == 576 * 2 * 61
    assert step("deepseek-v3", kv_dtype="fp8").totals["kv_cache_bytes"] == 656 * 61


def test_llama_8b_decode_32k_attention_bytes_by_hand():
    s = step("llama-3.1-8b", context=32767, new_tokens=1)          # N_k = 32768
    a = _op(s, "attention (decode)")
    assert a.count == 32 and a.params["N_k"] == 32768 and a.params["B_n"] == 128
    S = a.params["S"]
    # K and V: each KV head's 32768 x 128 elements read once (GQA packed), BF16
    kv = 2 * 8 * 32768 * 128 * 2
    nblocks = 32768 // 128
    per = -(-nblocks // S)
    s_ne = -(-nblocks // per)                                      # splits that hold blocks read Q
    q = 32 * 128 * s_ne * 2
    partials = (8 * 32 * S * (128 + 1)) if S > 1 else 0          # O_s, LSE_s written and read back, FP32
    out = 32 * 128 * 2 + 32 * 4                                    # O (BF16) and LSE (FP32)
    assert a.bytes == kv + q + partials + out
    assert a.flops == 2 * 32 * 32768 * (128 + 128)


def test_projection_flops_by_hand():
    B = 4
    s = step("llama-3.1-8b", batch=B, context=100)
    assert _op(s, "QKV projection").flops == 2 * B * 4096 * (32 + 2 * 8) * 128
    assert _op(s, "O projection").flops == 2 * B * 4096 * 4096
    assert _op(s, "gate/up projection").flops == 2 * B * 4096 * 2 * 14336
    assert _op(s, "down projection").flops == 2 * B * 14336 * 4096
    assert _op(s, "LM head").flops == 2 * B * 4096 * 128256
    qkv = _op(s, "QKV projection")
    # gemm.tiled at its tile: A re-read once per column tile, B once per row tile, C written once, BF16
    p = qkv.params
    M, N, K = B, 6144, 4096
    elems = M * K * -(-N // p["B_N"]) + K * N * -(-M // p["B_M"]) + M * N
    assert qkv.bytes == 2 * elems


def test_tp_rules():
    c = load_config("llama-3.1-70b")
    p = per_gpu(c, 8)
    assert (p.heads, p.kv_heads, p.kv_replicas, p.intermediate) == (8, 1, 1, 3584)
    p16 = per_gpu(c, 16)                                           # 8 KV heads on 16 GPUs: one each, twice
    assert (p16.heads, p16.kv_heads, p16.kv_replicas) == (4, 1, 2)
    assert per_gpu(load_config("qwen2.5-7b"), 2).kv_heads == 2
    with pytest.raises(BadInput) as e:
        per_gpu(c, 3)                                              # 64 heads
    assert e.value.param == "tp"
    with pytest.raises(BadInput):
        per_gpu(load_config("qwen2.5-7b"), 7)                      # 28 heads, 4 KV heads: 7 is no multiple of 4
    assert ring_allreduce_bytes(1000, 4) == Fraction(1500)
    s = step("llama-3.1-70b", tp=4, batch=2)
    ar = [o for o in s.ops if o.model is None]
    assert len(ar) == 2 and all(o.count == 80 for o in ar)
    msg = 2 * 8192 * 2
    assert ar[0].bytes == Fraction(2 * 3, 4) * msg
    assert ar[0].time_s == pytest.approx(ar[0].bytes / 450e9)     # 900 GB/s both ways: 450 one way


def test_mixtral_moe_counts():
    T = 16
    s = step("mixtral-8x7b", batch=T, context=10)
    gu = _op(s, "experts gate/up")
    down = _op(s, "experts down + combine")
    assert gu.count == down.count == 32
    assert gu.params["E"] == 8 and gu.params["k"] == 2 and gu.params["N"] == 2 * 14336
    assert gu.flops == 2 * T * 2 * 4096 * 2 * 14336                # T k pairs x K x N
    assert down.flops == 2 * T * 2 * 14336 * 4096
    assert _op(s, "router").params["N"] == 8
    # balanced routing, T k = 32 pairs over 8 experts: 4 each, one M-block each (T > E: BLOCK_SIZE_M/N = 64/64);
    # vLLM fused_moe by hand: each block reads its expert's whole K x N weight, every program re-reads its rows
    # of A, the int32 ids per program, the grid over the worst-case padded size; then moe_sum
    assert (down.params["B_M"], down.params["B_N"]) == (64, 64)
    K, N, pairs, blocks, tn = 14336, 4096, T * 2, 8, 4096 // 64
    programs = -(-min(8 * 63 + pairs, 64 * pairs) // 64) * tn
    ids = 4 * (64 * blocks * tn + blocks * tn + programs + pairs * tn)   # sorted ids, expert ids, num padded, weights
    assert down.bytes == 2 * K * N * blocks + 2 * K * pairs * tn + ids + 2 * N * pairs + 2 * N * pairs + 2 * N * T
    # gate/up: the same kernel without moe_sum (no combine reads, no combine writes)
    K, N = 4096, 2 * 14336
    tn = N // 64
    programs = -(-min(8 * 63 + pairs, 64 * pairs) // 64) * tn
    ids = 4 * (64 * blocks * tn + blocks * tn + programs + pairs * tn)
    assert gu.bytes == 2 * K * N * blocks + 2 * K * pairs * tn + ids + 2 * N * pairs
    assert _op(s, "experts SwiGLU").params == {"M": T * 2, "N": 14336}


def test_deepseek_layers_and_rows():
    s = step("deepseek-v3", context=4095)
    assert s.layer_totals["mla.dense"]["layers"] == 3 and s.layer_totals["mla.moe"]["layers"] == 58
    a = [o for o in s.ops if o.model == "decode.mla"]
    assert {o.count for o in a} == {3, 58} and a[0].params["d_c"] == 512 and a[0].params["N_k"] == 4096
    assert _op(s, "experts gate/up").params["E"] == 256
    # prefill: query/key width 192, value width 128 (the flash forward's d_v); pending until the model has d_v
    p = step("deepseek-v3", phase="prefill", new_tokens=512)
    att = [o for o in p.ops if o.name.startswith("attention")]
    assert {(o.params["d"], o.params["d_v"]) for o in att} == {(192, 128)}
    assert {o.count for o in att} == {3 * 128, 58 * 128}
    from symbolic import registry
    if "d_v" not in {q.name for q in registry.get("attention.fa3.fwd.causal").params}:
        assert all(o.why.startswith("pending: needs attention.fa3.fwd.causal with d_v") for o in att)


def test_bad_inputs_name_the_option():
    for kw, param in [(dict(context=200_000), "context"), (dict(phase="train"), "phase"), (dict(tp=5), "tp"),
                      (dict(gpu="V100"), "gpu"), (dict(batch=0), "batch"), (dict(weights="int3"), "weights")]:
        with pytest.raises(BadInput) as e:
            step("llama-3.1-8b", **kw)
        assert e.value.param == param, kw
    assert step("llama-3.1-8b", context=200_000, allow_long_context=True).settings["N_k"] == 200_001


def test_fp8_on_a100_priced_at_a_stated_fallback():
    s = step("llama-3.1-8b", gpu="A100", weights="fp8")
    assert _op(s, "QKV projection").model == "gemm.scaled.fp8_block"
    assert any("A100 has no FP8" in n for n in s.notes)


def test_totals_add_up():
    s = step("gemma-2-9b", context=100, batch=2)
    done = [o for o in s.ops if not o.pending]
    assert s.totals["bytes"] == sum(o.count * o.bytes for o in done)
    assert s.totals["time_s"] == pytest.approx(sum(o.count * o.time_s for o in done))
    assert s.totals["tokens_per_s"] == pytest.approx(2 / s.totals["time_s"])


def test_pending_rows_switch_on_when_the_model_registers(monkeypatch):
    """A windowed decode layer needs decode.unpacked.window (``W_l``); until it is registered the row says so and
    the totals leave it out; once a model of that name and parameter is in the registry, the row uses it."""
    from types import SimpleNamespace

    from symbolic import registry
    from symbolic.registry import ModelRef

    kw = dict(context=9000)                                        # beyond Mistral's 4096 window: it binds
    if "decode.unpacked.window" not in registry.names():
        s = step("mistral-7b", **kw)
        a = _op(s, "attention (windowed decode)")
        assert a.pending and a.why.startswith("pending: needs decode.unpacked.window")
        assert any("pending" in n for n in s.notes)
        assert s.totals["bytes"] == sum(o.count * o.bytes for o in s.ops if not o.pending)

    packed = registry.get("decode.unpacked")

    class StandIn:                                                 # the unpacked model, with a W_l it ignores
        name = "decode.unpacked.window"
        params = tuple(packed.params) + (SimpleNamespace(name="W_l"),)

        def evaluate(self, **p):
            p.pop("W_l")
            return packed.evaluate(**p)

    found = {**registry._refs(), "decode.unpacked.window": ModelRef("decode.unpacked.window", "stand-in", StandIn)}
    monkeypatch.setattr(registry, "_refs", lambda: found)
    a = _op(step("mistral-7b", **kw), "attention (windowed decode)")
    assert not a.pending and a.model == "decode.unpacked.window" and a.params["W_l"] == 4095
    assert a.bytes == packed.evaluate(**{k: v for k, v in a.params.items() if k != "W_l"})["bytes"]


def test_window_that_does_not_bind_uses_the_plain_model():
    a = _op(step("mistral-7b", context=1000), "attention (decode)")
    assert a.model == "decode.packed" and "does not bind" in a.why


def test_qwen3_qk_norm_rows():
    from tuning.llm.configs import read_config
    c = read_config({"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
                     "max_position_embeddings": 40960})
    n = _op(step(c, batch=2), "q/k norm")
    assert n.model == "norm.rms" and n.params["M"] == 2 * (32 + 8) and n.params["N"] == 128



# ------------------------------------------------------------------------------------- MLA decode batch
def test_an_mla_decode_batch_beyond_flashmla_s_scheduler_is_refused_up_front(monkeypatch):
    """More sequences than FlashMLA's scheduler holds (tuning.mla_splits.MAX_BATCH) is refused naming batch
    before anything is priced or listed: the pricing and the scheduler are replaced by functions that fail."""
    import importlib

    import tuning.mla_splits as mla_splits
    step_module = importlib.import_module("tuning.llm.step")      # the module (tuning.llm.step is the function)

    def priced(*args, **kwargs):
        raise AssertionError("priced or scheduled before the refusal")

    monkeypatch.setattr(step_module, "_evaluate", priced)
    monkeypatch.setattr(mla_splits, "flashmla_splits", priced)
    monkeypatch.setattr(mla_splits, "flashmla_schedule", priced)
    for batch in (mla_splits.MAX_BATCH + 1, 100_000_000, 10**9, 10**40):
        with pytest.raises(BadInput) as e:
            step("deepseek-v3", batch=batch)
        assert e.value.param == "batch" and f"{mla_splits.MAX_BATCH:,}" in str(e.value), batch
        assert len(str(e.value)) < 300


@pytest.mark.parametrize("batch,context", [(1, 4000), (7, 4000), (50, 100_000), (5000, 4000),
                                           (11_622, 1000)])
def test_mla_decode_rows_are_flashmla_s_listed_schedule(batch, context):
    """The MLA rows hold, for each split count S, the sequences the listed scheduler cuts into S splits."""
    from collections import Counter

    from tuning.mla_splits import flashmla_splits
    s = step("deepseek-v3", batch=batch, context=context)
    want = dict(Counter(flashmla_splits([context + 1] * batch, 132, 128, 1)))
    for kind, n in s.config.groups():                       # each layer type: its own rows, n runs each
        rows = [o for o in s.ops if o.name.startswith("attention (MLA decode") and o.layer_type == kind.name]
        assert {o.params["S"]: o.params["B"] for o in rows} == want and len(rows) == len(want)
        assert {o.count for o in rows} == {n}
