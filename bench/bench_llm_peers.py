"""LLM-Viewer, llm-analysis and GenZ beside tilebound's exact bytes, per operation.

    python bench/bench_llm_peers.py                 # every shipped config, decode at 32K and prefill of 4096
    python bench/bench_llm_peers.py --config llama-3.1-8b --phase decode --context 32768
    python bench/bench_llm_peers.py --write         # regenerate docs/llm.md's peers section (between markers)

For each config and step it prints, per operation group, each peer's whole-step bytes (the restatements of
``bench/peers/``, each cited to its source lines), tilebound's exact bytes for the same operations
(``tuning.llm.step``: every figure a registered model's count), the ratio peer / tilebound and one line on why they
differ.  A group is the operations a peer row prices: llm-analysis's ``attn`` is the projections and the
attention together, so it is set beside tilebound's QKV, attention and O rows summed.  Rows a peer has no
operation for (GenZ has no norms) show a dash.  Then the decode attention of Llama-3.1-8B over its context, where
LLM-Viewer's output term grows with the context.

Bytes are per step (per layer x the layers, plus the LM head once), batch and dtype as stated (BF16 everywhere:
the peers' ``w16a16``).  Nothing here is a test: ``tests/unit/test_llm_peers.py`` checks the restatements.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

from peers import genz, llm_analysis, llm_viewer  # noqa: E402
from peers.common import CATEGORIES, Unsupported, groups, step_total  # noqa: E402
from peers.hf_configs import HF_CONFIGS, hf_config  # noqa: E402

DOC = ROOT / "docs" / "llm.md"
START, END = "<!-- peers:start -->", "<!-- peers:end -->"
PEERS = ("LLM-Viewer", "llm-analysis", "GenZ")
FFN = ("router", "gate_up", "act", "down", "experts", "combine")
DEFAULT_GPU = "H100"


# ------------------------------------------------------------------------------------------------ the peers
def peer_ops(peer: str, config: str, *, phase: str, batch: int, context: int, new_tokens: int = 1):
    """The peer's rows for one step.  Decode: ``context`` tokens cached, one new token a sequence (none of the
    peers has more); prefill: a prompt of ``new_tokens`` on an empty cache."""
    hf = hf_config(config)
    seq = context + new_tokens if phase == "decode" else new_tokens      # the keys the new token attends to
    if phase == "decode" and new_tokens != 1:
        raise Unsupported(f"{peer} has no decode of {new_tokens} tokens a sequence")
    if phase == "prefill" and context:
        raise Unsupported(f"{peer} has no prefill onto a cache")
    if peer == "LLM-Viewer":
        ops = llm_viewer.analyze(hf, phase=phase, batch=batch, seqlen=seq)
        if "num_local_experts" in hf or "n_routed_experts" in hf:    # its dense FFN stands for the whole MoE block
            ops = [replace(o, category=FFN) if o.category in ("gate_up", "act", "down") else o for o in ops]
        return ops
    if peer == "llm-analysis":                   # its cache is sized at seq_len + num_tokens_to_generate
        return llm_analysis.inference(hf, phase=phase, batch=batch, seq_len=seq - new_tokens if phase == "decode"
                                      else seq, num_tokens_to_generate=new_tokens)
    if peer == "GenZ":
        return genz.layers(config, phase=phase, batch=batch, seq=seq)
    raise ValueError(peer)


# -------------------------------------------------------------------------------------------- the tilebound side
_KEYWORDS = (  # (category, words in an op's name/model that put it there), first match wins
    ("lm_head", ("lm_head", "lm head", "logits")),
    ("embed", ("embed",)),
    ("comm", ("all-reduce", "allreduce", "all_reduce")),
    ("router", ("router",)),
    ("experts", ("expert", "grouped", "moe.")),
    ("combine", ("combine",)),
    ("norm", ("norm",)),
    ("rope", ("rope", "rotary")),
    ("o_proj", ("o_proj", "o proj", "out_proj", "w_uv")),             # MLA's W_UV: the value side, before O
    ("qkv", ("qkv", "q_proj", "q projection", "q_a", "q_b", "kv_a", "kv_b", "w_uk", "absorb")),
    ("act", ("swiglu", "silu", "gelu", "geglu", "act.")),
    ("gate_up", ("gate_up", "gate/up", "gate", "up projection")),
    ("down", ("down",)),
    ("attention", ("attn", "attention", "decode", "flash", "mla")),
)


def categorize(name: str, model: str = "") -> str:
    """The :data:`peers.common.CATEGORIES` entry of a tilebound op, from its name (then its model's name)."""
    for text in (name.lower(), model.lower()):
        for cat, words in _KEYWORDS:
            if any(w in f" {text} " for w in words):
                return cat
    raise ValueError(f"no category for tilebound op {name!r} ({model})")


def tilebound_ops(config: str, *, phase: str, batch: int, context: int, new_tokens: int = 1, gpu: str = DEFAULT_GPU):
    """tilebound's step, as ``[(name, category, step_bytes, step_flops)]``: ``tuning.llm.step`` at the same
    settings (BF16 activations, weights and KV cache), each op's bytes and FLOPs times its count."""
    from tuning.llm import load_config, step

    st = step(load_config(config), gpu=gpu, phase=phase, batch=batch, context=context, new_tokens=new_tokens,
              dtype="bf16", weights="bf16")
    return [(op.name, categorize(op.name, op.model or ""), None if op.bytes is None else op.bytes * op.count,
             None if op.flops is None else op.flops * op.count) for op in st.ops]


def _sum(tb, cats):
    """tilebound's bytes over some categories; ``"pending"`` if one of its ops there has no model yet."""
    vals = [b for _, cat, b, _ in tb if cat in cats]
    if not vals:
        return "no op"
    return "pending" if any(v is None for v in vals) else sum(vals, 0)


def tilebound_available() -> bool:
    try:
        import tuning.llm  # noqa: F401
    except ImportError:
        return False
    return True


# -------------------------------------------------------------------------------------------- why they differ
#: tilebound's GEMM rows count what every tile loads (gemm.tiled: A once per N tile, B once per M tile, no L2)
GEMM_DECODE = ("tilebound re-reads the activation row once per N tile (B_N = 16 or 32 at M = 1): 3-6 % on the "
               "weights")
GEMM_PREFILL = ("tilebound counts every tile's loads (A x N/B_N, B x M/B_M: global traffic, no L2); the peer each "
                "operand once; HBM bytes lie between (gemm.l2.lru prices them)")


def why(peer: str, cats: tuple, config: str, phase: str) -> str:
    """One line: what the peer's formula does differently for this group (from the restated source)."""
    text = _why(peer, cats, config, phase)
    window = HF_CONFIGS[config].get("sliding_window")
    if window and "attention" in cats and text:
        text += f"; no sliding window: every key, not the {window:,}-token window"
    return text


def _why(peer: str, cats: tuple, config: str, phase: str) -> str:
    hf = HF_CONFIGS[config]
    moe = "num_local_experts" in hf or "n_routed_experts" in hf
    mla = "kv_lora_rank" in hf
    c = set(cats)
    gemm = GEMM_DECODE if phase == "decode" else GEMM_PREFILL
    if peer == "LLM-Viewer":
        if "attention" in c:
            if mla:
                return "no MLA: 128 heads of hidden/heads = 56 read as K, V, once per query head"
            if phase == "decode":
                return "K, V for every query head (GQA ignored, :250) and O stored twice as seqlen a head (:242)"
            return "O stored twice as seqlen x seqlen a head (:338); K, V re-read ceil(s/head_size) x, all heads"
        if c & {"gate_up", "down"} and moe:
            return "a dense FFN of one expert's width (configs/Llama.py): no router, no top-k"
        if "act" in c:
            return "SwiGLU sized hidden_size, not intermediate_size (:315-325)"
        if "norm" in c:
            return ("norm: the hidden state read and written, no weight; add: one operand read (:291-314); "
                    "tilebound's fused add + RMSNorm reads both and writes both")
        if "lm_head" in c:
            return "one token's input whatever the batch; B h V OPs, not 2 B h V (configs/Llama.py:33-35)"
        if mla and "qkv" in c:
            return "square q_proj and k/v at hidden x kv/heads: no low-rank MLA projections"
        return "weights, input and output once each; " + gemm
    if peer == "llm-analysis":
        if "attention" in c:
            if phase == "decode":
                return "weights + activation footprint, not traffic; the whole KV cache loaded and stored (2x, :1698)"
            return "weights + the activation footprint 3 a s B h (:620): no K, V re-reads, no per-op traffic"
        if c & {"gate_up", "down"}:
            return ("every expert's weights read, one expert's FLOPs (:1136, :954)" if moe else
                    "weights + the largest activation (ffn wide) as its traffic; " + gemm)
        if "norm" in c:
            return "one tensor's footprint a layernorm, no write, no weight (:755)"
        if "embed" in c:
            return "the whole vocab x hidden table charged every step (:1367)"
        if "lm_head" in c:
            return "compute only: the LM head's weights never charged (:1385)"
    if peer == "GenZ":
        if "attention" in c:
            return ("K, V once a KV head, O and S on chip (AC_onchip): no partials, no combine" if phase == "decode"
                    else "K, V read once whatever the SRAM (residency flag); FA re-reads them per query block")
        if c & {"gate_up", "down"} and moe:
            return "top-k experts at the dense intermediate size (ffn.py:62, 114)" if mla else \
                "top-k experts' weights once (ffn.py:114)"
        if "embed" in c:
            return "a GEMM of a one-hot (B, s, vocab) input with the table"
        if "lm_head" in c:
            return ("logits for all s prompt tokens (embedding.py:23-41); tilebound the last token's"
                    if phase == "prefill" else "A, W and C once each (All_offchip); " + gemm)
        if "router" in c:
            return "A, W and C once each (All_offchip, ffn.py:84): the router's few weights"
        if phase == "decode":
            return "weights only: the activations pinned on chip (AC_onchip); " + gemm
        return "A, W and C once each (All_offchip); " + gemm
    return ""


# ------------------------------------------------------------------------------------------------- printing
def _gb(x) -> str:
    return "—" if x is None else x if isinstance(x, str) else f"{float(x) / 1e9:,.3f}"


def _ratio(p, t) -> str:
    if p is None or not t or isinstance(t, str):
        return "—"
    return f"{float(Fraction(p) / Fraction(t)):.2f}"


def compare(config: str, *, phase: str, batch: int, context: int, new_tokens: int = 1, gpu: str = DEFAULT_GPU):
    """Rows ``(peer, operations, peer_bytes, tilebound_bytes, why)`` for one step; tilebound's bytes ``None`` when
    ``tuning.llm`` is not on this branch; a peer that cannot price the config gives one row saying why."""
    tb = tilebound_ops(config, phase=phase, batch=batch, context=context, new_tokens=new_tokens, gpu=gpu) \
        if tilebound_available() else None
    out = []
    for peer in PEERS:
        try:
            ops = peer_ops(peer, config, phase=phase, batch=batch, context=context, new_tokens=new_tokens)
        except Unsupported as exc:
            out.append((peer, "(all)", None, None, str(exc)))
            continue
        seen = set()
        for cats, rows in groups(ops):
            seen |= set(cats)
            t = None if tb is None else _sum(tb, cats)
            names = ", ".join(dict.fromkeys(r.name for r in rows))
            out.append((peer, f"{names} ({'/'.join(cats)})", step_total(rows), t, why(peer, cats, config, phase)))
        if tb is not None:
            missing = [cat for cat in CATEGORIES if cat not in seen and any(c == cat for _, c, _, _ in tb)]
            if missing:
                t = _sum(tb, missing)
                out.append((peer, f"(no row: {'/'.join(missing)})", None, t, "not priced by the peer"))
    return out


def table(config: str, **kw) -> str:
    lines = ["| peer | operations | peer GB | tilebound GB | peer / tilebound | why they differ |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    for peer, ops, p, t, w in compare(config, **kw):
        lines.append(f"| {peer} | {ops} | {_gb(p)} | {_gb(t)} | {_ratio(p, t)} | {w} |")
    return "\n".join(lines) + "\n"


def context_sweep(config: str = "llama-3.1-8b", contexts=(1024, 4096, 16384, 32768), batch: int = 1) -> str:
    """Decode attention bytes a layer over the context: LLM-Viewer's O term, its K, V term, GenZ's K, V, and
    tilebound's attention row."""
    hf = hf_config(config)
    lines = ["| context (+1 new) | LLM-Viewer O term (B) | LLM-Viewer K, V (B) | LLM-Viewer attention (B) | GenZ attention (B) "
             "| tilebound attention (B) | true O (B) |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    heads, hs = hf["num_attention_heads"], hf["hidden_size"] // hf["num_attention_heads"]
    for n in contexts:
        k = n + 1                                                            # the cache and the new token
        lv = [o for o in llm_viewer.analyze(hf, phase="decode", batch=batch, seqlen=k) if o.category == "attention"][0]
        o_term = 2 * k * batch * heads * 2                                   # model_analyzer.py:242, :249
        kv_term = k * hs * batch * heads * 2 * 2                              # :250
        gz = sum(o.bytes for o in genz.layers(config, phase="decode", batch=batch, seq=k) if o.category == "attention")
        tb = "—"
        if tilebound_available():
            ops = tilebound_ops(config, phase="decode", batch=batch, context=n)
            layers = hf["num_hidden_layers"]
            t = _sum(ops, ("attention",))
            tb = t if isinstance(t, str) else f"{int(t / layers):,}"
        lines.append(f"| {n:,} | {o_term:,} | {kv_term:,} | {lv.bytes:,} | {gz:,} | {tb} | {batch * heads * hs * 2:,} |")
    return "\n".join(lines) + "\n"


STEPS = (
    ("decode", dict(batch=1, context=32768, new_tokens=1)),
    ("prefill", dict(batch=1, context=0, new_tokens=4096)),
)


def _context_for(config: str, context: int, new_tokens: int = 1) -> int:
    """The context, cut to leave the new tokens within the config's ``max_position_embeddings`` (which
    ``tilebound llm`` and llm-analysis enforce)."""
    return min(context, HF_CONFIGS[config].get("max_position_embeddings", context + new_tokens) - new_tokens)


def report(configs=None, steps=STEPS) -> str:
    configs = list(configs or HF_CONFIGS)
    parts = []
    if not tilebound_available():
        parts.append("_tilebound's column is empty: `tuning.llm` is not on this branch._\n")
    for config in configs:
        for phase, kw in steps:
            kw = dict(kw, context=_context_for(config, kw["context"])) if phase == "decode" else kw
            what = (f"decode, batch {kw['batch']}, context {kw['context']:,}" if phase == "decode"
                    else f"prefill, batch {kw['batch']}, prompt {kw['new_tokens']:,}")
            parts.append(f"#### {config}: {what}\n\n" + table(config, phase=phase, **kw))
    parts.append("#### Llama-3.1-8B decode attention a layer, batch 1, over the context\n\n" + context_sweep())
    return "\n".join(parts)


def write(doc: Path = DOC) -> None:
    text = doc.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"bench_llm_peers: {doc} has no {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + START + "\n" + report() + END + tail, encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_llm_peers", description=__doc__.splitlines()[0])
    ap.add_argument("--config", choices=sorted(HF_CONFIGS), help="one config (default: all shipped)")
    ap.add_argument("--phase", choices=("decode", "prefill"))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--context", type=int, default=32768)
    ap.add_argument("--new-tokens", type=int, default=None)
    ap.add_argument("--write", action="store_true", help="regenerate docs/llm.md's peers section")
    args = ap.parse_args(argv)
    if args.batch < 1 or args.context < 0 or (args.new_tokens is not None and args.new_tokens < 1):
        sys.stderr.write("bench_llm_peers: --batch and --new-tokens must be >= 1, --context >= 0\n")
        return 2
    if args.write:
        write()
        return 0
    steps = STEPS
    if args.phase:
        nt = args.new_tokens or (1 if args.phase == "decode" else 4096)
        ctx = args.context if args.phase == "decode" else 0
        steps = ((args.phase, dict(batch=args.batch, context=ctx, new_tokens=nt)),)
    from base.errors import BadInput
    try:
        text = report([args.config] if args.config else None, steps)
    except BadInput as exc:                       # e.g. a context beyond the config's max_position_embeddings
        sys.stderr.write(f"bench_llm_peers: {exc}\n")
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
