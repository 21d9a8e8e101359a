"""verify.llm: every row executed; a wrong row is caught; a shape over an executor's budget is said so."""

from dataclasses import replace

from tuning.llm import step
from verify.llm import AGREES, CLOSED_FORM, DIFFERS, REFUSED, verify_step


# small configs of the real families (the readers' own fields), so that the executors run in moments
TINY = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096}
TINY_MOE = {**TINY, "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2}
TINY_MLA = {**TINY, "model_type": "deepseek_v3", "num_attention_heads": 8, "num_key_value_heads": 8,
            "kv_lora_rank": 64, "q_lora_rank": 96, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32,
            "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "first_k_dense_replace": 1,
            "n_shared_experts": 1}


def _with_ops(s, ops):
    return replace(s, ops=tuple(ops))


def test_a_step_agrees_row_by_row():
    for cfg, kw in ((TINY_MOE, dict(batch=3, context=40, tp=2)), (TINY_MLA, dict(batch=2, context=100)),
                    (TINY, dict(phase="prefill", new_tokens=70, gpu="A100"))):
        s = step(cfg, **kw)
        rows = verify_step(s)
        assert [r.op for r in rows] == list(s.ops)
        assert {r.status for r in rows} <= {AGREES, CLOSED_FORM}, [(r.op.name, r.detail) for r in rows]
        assert all(r.quantities > 0 for r in rows if r.status == AGREES)


def test_a_wrong_row_is_caught():
    s = step(TINY, context=10)
    ops = list(s.ops)
    i = next(i for i, o in enumerate(ops) if o.name == "attention (decode)")
    ops[i] = replace(ops[i], bytes=ops[i].bytes + 2)                       # one BF16 element too many
    j = next(i for i, o in enumerate(ops) if o.name == "experts gate/up" or o.name == "QKV projection")
    ops[j] = replace(ops[j], flops=ops[j].flops - 1)
    rows = verify_step(_with_ops(s, ops))
    assert rows[i].status == DIFFERS and "bytes" in rows[i].detail
    assert rows[j].status == DIFFERS and "flops" in rows[j].detail


def test_a_shape_beyond_the_budget_is_refused():
    s = step(TINY)
    ops = list(s.ops)
    i = next(i for i, o in enumerate(ops) if o.name == "QKV projection")
    ops[i] = replace(ops[i], params={**ops[i].params, "M": 10**7, "B_M": 16})   # 625,000 row tiles
    rows = verify_step(_with_ops(s, ops))
    assert rows[i].status == REFUSED and "budget" in rows[i].detail


def test_jobs_give_the_same_rows():
    s = step(TINY_MOE, batch=2, context=30)
    a, b = verify_step(s), verify_step(s, jobs=2)
    assert [(r.status, r.quantities) for r in a] == [(r.status, r.quantities) for r in b]
    assert [r.op for r in b] == list(s.ops)
