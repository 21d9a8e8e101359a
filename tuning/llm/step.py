"""One prefill or decode step of an LLM, operation by operation, each a registered model at stated parameters.

:func:`step` lists, for each layer type of the config (:meth:`tuning.llm.configs.Config.groups`) and then the
LM head, one :class:`Op` per operation: the registered model it uses, that model's parameters (every choice
stated: the GEMM tile the schedule space picks, FlashAttention-2's decode key block and split count, FA3's
tile table, FlashMLA's scheduler), how many times it runs per step, its exact bytes and FLOPs **per run**,
its roofline time per run (:mod:`symbolic.roofline`: ``max(FLOPs / peak, bytes / HBM bandwidth)``) and
what bounds it.  The step's time is the sum over operations of ``count x time``: the kernels of a step run
one after another.  That is a lower bound for each kernel, and the floats are a time *model*; the bytes and
FLOPs are exact (Python ints, or Fractions for an all-reduce).

Counting conventions (``docs/conventions.md``): a GEMM ``C[M, N] = A[M, K] B[K, N]`` has ``M`` = tokens
(decode: batch x new tokens; prefill: batch x prompt), ``K`` its input width and ``N`` its output width;
attention's ``N_k`` = ``context + new_tokens`` keys, its ``L_q`` (``N`` in prefill) the new tokens; the
element-wise kernels (RMSNorm, RoPE, SwiGLU) have no tensor FLOPs (their ``ops`` are not priced on the
tensor peak) and are memory-bound by construction.  Which kernels run is vLLM's model code
(``vllm/model_executor/models/llama.py``, ``mixtral.py``, ``gemma2.py``, ``deepseek_v2.py``): fused QKV and
gate/up projections, ``fused_add_rms_norm``, ``silu_and_mul``, ``rotary_embedding``, ``fused_moe``.

A row whose model is not registered yet says ``pending: needs <model>``; it switches on by itself once a
model of that name (with the parameter it needs) is in the registry.  Totals leave pending rows out and say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Optional

from base import validate
from base.dtypes import element_bytes
from base.errors import BadInput

from .configs import Config, LayerKind, load_config
from .shapes import Parallel, link_bytes_per_s, per_gpu, ring_allreduce_bytes

__all__ = ["Op", "Step", "step", "PHASES", "DTYPES", "WEIGHTS", "KV_DTYPES", "FLASHMLA_FP8_BYTES_PER_TOKEN",
           "kv_cache_bytes_per_token"]

PHASES = ("prefill", "decode")
DTYPES = ("bf16", "fp16", "fp8")
WEIGHTS = ("bf16", "fp16", "fp8", "mxfp8", "mxfp4", "nvfp4")
KV_DTYPES = ("bf16", "fp16", "fp8")
#: FlashMLA's FP8 cache: 512 FP8 codes + 4 FP32 scales + 64 BF16 RoPE values a token
#: (docs/20250929-hopper-fp8-sparse-deep-dive.md; the decode.mla.fp8 model's layout)
FLASHMLA_FP8_BYTES_PER_TOKEN = 656
#: the block-scaled GEMM model of each --weights format
_SCALED = {"fp8": "gemm.scaled.fp8_block", "mxfp8": "gemm.scaled.mxfp8", "mxfp4": "gemm.scaled.mxfp4",
           "nvfp4": "gemm.scaled.nvfp4"}
#: the block-scaled GEMMs' tile: DeepGEMM's BLOCK_K = 128 (sm90_fp8_gemm_1d2d.cuh:58) and a 128 x 128 tile of C
_SCALED_TILE = {"B_M": 128, "B_N": 128, "B_K": 128}


@dataclass(frozen=True)
class Op:
    """One operation of the step.  ``bytes``, ``flops`` and ``time_s`` are those of **one run** at ``params``;
    the step runs it ``count`` times.  ``model`` is the registered model's name (``None`` for a closed form
    with no model, the all-reduce); ``bound`` is ``"memory"``, ``"compute"``, ``"link"`` (NVLink) or
    ``"pending"`` (the model is not registered yet: no figures)."""

    name: str
    model: Optional[str]
    params: dict
    count: int
    bytes: object
    flops: object
    time_s: Optional[float]
    bound: str
    layer_type: str
    why: str

    @property
    def pending(self) -> bool:
        return self.bound == "pending"

    @property
    def intensity(self) -> Optional[Fraction]:
        if self.pending or not self.bytes:
            return None
        return Fraction(self.flops) / Fraction(self.bytes)

    @property
    def step_time_s(self) -> float:
        return 0.0 if self.pending else self.count * self.time_s


def _exact(v):
    """JSON for an exact number: an int, or a Fraction as ``"p/q"``."""
    if v is None:
        return None
    v = Fraction(v)
    return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


@dataclass(frozen=True)
class Step:
    """The step: its operations, totals per layer type and in all, notes, and the settings it was priced at."""

    config: Config
    ops: tuple
    totals: dict
    layer_totals: dict
    notes: tuple
    settings: dict

    def to_json(self) -> dict:
        """``{"ops": [...], "totals": {...}, "layer_types": {...}, "notes": [...], "settings": {...}}``; exact
        counts as ints (a Fraction as ``"p/q"``), times as floats."""
        ops = [{"name": o.name, "model": o.model, "params": {k: _param_json(v) for k, v in o.params.items()},
                "count": o.count, "bytes": _exact(o.bytes), "flops": _exact(o.flops),
                "intensity": None if o.intensity is None else float(o.intensity), "time_s": o.time_s,
                "step_time_s": None if o.pending else o.step_time_s, "bound": o.bound, "layer_type": o.layer_type,
                "why": o.why} for o in self.ops]
        tot = {k: (_exact(v) if k in ("bytes", "flops", "kv_cache_bytes") else v) for k, v in self.totals.items()}
        layers = {lt: {k: (_exact(v) if k in ("bytes", "flops") else v) for k, v in t.items()}
                  for lt, t in self.layer_totals.items()}
        return {"ops": ops, "totals": tot, "layer_types": layers, "notes": list(self.notes),
                "settings": dict(self.settings)}


def _param_json(v):
    return v if isinstance(v, (int, str, bool)) or v is None else str(v)


# ------------------------------------------------------------------------------------------ the registry
def _registered(name: str, needs: tuple = ()) -> bool:
    """Is ``name`` a registered model with every parameter in ``needs``?  Asked at run time, so a model that
    lands later switches its row on."""
    from symbolic import registry
    if name not in registry.names():
        return False
    if not needs:
        return True
    have = {p.name for p in registry.get(name).params}
    return all(n in have for n in needs)


def _evaluate(name: str, params: dict) -> dict:
    from symbolic import registry
    return registry.get(name).evaluate(**params)


# ------------------------------------------------------------------------------------------ pricing
@dataclass
class _Pricing:
    gpu: object
    dtype: str
    notes: list

    def peak(self, dt: str) -> int:
        """The tensor peak for ``dt``; a type the GPU lacks is priced at a stated fallback, noted once."""
        g = self.gpu
        if dt in ("bf16", "fp16"):
            return g.bf16_flops
        if dt in ("fp8", "mxfp8"):
            if g.fp8_flops is None:
                self._note(f"{g.name} has no FP8 tensor peak in the hardware table: {dt} products are priced at "
                           f"its BF16 peak ({g.bf16_flops / 1e12:g} TFLOP/s), as a weight-only FP8 kernel runs them "
                           "(FP8 bytes, BF16 arithmetic)")
                return g.bf16_flops
            return g.fp8_flops
        # mxfp4, nvfp4: the table has no FP4 peak
        fallback = g.fp8_flops or g.bf16_flops
        self._note(f"the hardware table has no FP4 tensor peak: {dt} products are priced at {g.name}'s "
                   f"{'FP8' if g.fp8_flops else 'BF16'} peak ({fallback / 1e12:g} TFLOP/s)")
        return fallback

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def time(self, flops, nbytes, peak) -> tuple:
        from symbolic.roofline import Roofline
        r = Roofline(int(flops), nbytes, peak, self.gpu.hbm_bytes_per_s)
        return float(r.time), r.bound


@lru_cache(maxsize=256)
def _best_gemm(gpu_name: str, M: int, N: int, K: int):
    """The schedule space's best config for ``(M, N, K)`` on ``gpu_name`` (its time model), and the GPU whose
    time-model constants picked it."""
    from tuning.schedule import TIME_MODELS, landscape
    hw = gpu_name if gpu_name in TIME_MODELS else "H100"
    cfg, t = landscape(M, N, K, hw=hw).best(1)[0]
    return cfg, hw


class _Builder:
    def __init__(self, cfg: Config, par: Parallel, pricing: _Pricing, s: dict):
        self.cfg, self.par, self.pr, self.s = cfg, par, pricing, s
        self.ops: list = []
        self.B, self.L = s["batch"], s["new_tokens"]
        self.T = self.B * self.L
        self.N_k = s["context"] + s["new_tokens"]
        self.decode = s["phase"] == "decode"

    # --------------------------------------------------------------------------------- one row
    def add(self, name, model, params, count, layer_type, why, *, bytes_from="own", peak_dtype=None,
            needs=(), minus=None, dtype=None):
        if not _registered(model, needs):
            missing = f"{model} with {', '.join(needs)}" if needs and _registered(model) else model
            self.ops.append(Op(name, model, dict(params), count, None, None, None, "pending", layer_type,
                               f"pending: needs {missing}. " + why))
            return
        v = _evaluate(model, params)
        if bytes_from == "own":
            nbytes = v["bytes"]
        else:                                         # element counts times one element size
            nbytes = v["total"] * element_bytes(dtype or self.pr.dtype)
        if minus:
            nbytes = nbytes - sum(v[q] for q in minus) * 2
        flops = v.get("flops", 0)
        t, bound = self.pr.time(flops, nbytes, self.pr.peak(peak_dtype or self.pr.dtype))
        self.ops.append(Op(name, model, dict(params), count, _int_or_frac(nbytes), int(flops), t, bound, layer_type,
                           why))

    def gemm(self, name, M, N, K, count, layer_type, why):
        w = self.s["weights"]
        if w in _SCALED:
            model = _SCALED[w]
            self.add(name, model, {"M": M, "N": N, "K": K, **_SCALED_TILE}, count, layer_type,
                     f"{why}; {w} weights: {model} at a 128 x 128 tile, K-step 128 (DeepGEMM's BLOCK_K, "
                     "sm90_fp8_gemm_1d2d.cuh:58)", peak_dtype=w)
            return
        try:
            c, hw = _best_gemm(self.pr.gpu.name, M, N, K)
        except BadInput as exc:
            raise BadInput("batch" if exc.param in ("M", "shape") else exc.param,
                           f"{name} ({M:,} x {N:,} x {K:,}): {exc.problem}") from None
        picked = "" if hw == self.pr.gpu.name else f" (picked on {hw}'s time model: none for {self.pr.gpu.name})"
        self.add(name, "gemm.tiled", {"M": M, "N": N, "K": K, "B_M": c.B_M, "B_N": c.B_N, "B_K": c.B_K}, count,
                 layer_type, f"{why}; the schedule space's best config {c}{picked} (tuning/schedule.py)",
                 bytes_from="total", dtype=w)

    def norm(self, name, M, N, count, layer_type, why, residual=True):
        model = "norm.rms_residual" if residual else "norm.rms"
        self.add(name, model, {"M": M, "N": N, "B_R": 1}, count, layer_type,
                 f"{why}; vLLM's {'fused_add_rms_norm' if residual else 'rms_norm'} kernel, one row a program (B_R = 1)")

    def allreduce(self, name, count, layer_type):
        tp = self.par.tp
        if tp == 1:
            return
        msg = self.T * self.cfg.hidden * element_bytes(self.s["dtype"])
        sent = ring_allreduce_bytes(msg, tp)
        bw = link_bytes_per_s(self.pr.gpu)
        t = float(Fraction(sent) / bw)
        self.ops.append(Op(name, None, {"tp": tp, "message_bytes": msg}, count, _int_or_frac(sent), 0, t, "link",
                           layer_type, f"ring all-reduce of the {self.T} x {self.cfg.hidden} output: 2(T-1)/T x "
                           f"{msg:,} B sent per GPU over one NVLink direction ({bw / 1e9:g} GB/s, half the "
                           "datasheet's total; tuning/llm/shapes.py)"))

    # --------------------------------------------------------------------------------- a layer
    def layer(self, kind: LayerKind, n: int):
        lt = kind.name
        cfg, par, T = self.cfg, self.par, self.T
        sandwich = cfg.sandwich_norms
        self.norm("input norm", T, cfg.hidden, n, lt, "residual add + RMSNorm before attention")
        if kind.attention == "mla":
            self.mla(n, lt)
        else:
            self.gqa(kind, n, lt)
        self.allreduce("all-reduce (attention)", n, lt)
        if sandwich:
            self.norm("post-attention norm", T, cfg.hidden, n, lt, "Gemma 2's RMSNorm of the attention output",
                      residual=False)
        self.norm("pre-FFN norm", T, cfg.hidden, n, lt, "residual add + RMSNorm before the feed-forward")
        if kind.ffn == "dense":
            self.dense(n, lt, par.intermediate)
        else:
            self.moe(n, lt)
        if sandwich:
            self.norm("post-FFN norm", T, cfg.hidden, n, lt, "Gemma 2's RMSNorm of the feed-forward output",
                      residual=False)
        self.allreduce("all-reduce (FFN)", n, lt)

    def dense(self, n, lt, inter, prefix=""):
        cfg, T = self.cfg, self.T
        act = "GeGLU (gelu_tanh)" if cfg.activation == "gelu_tanh" else "SwiGLU"
        self.gemm(f"{prefix}gate/up projection", T, 2 * inter, cfg.hidden, n, lt,
                  f"fused gate and up weights (MergedColumnParallelLinear): N = 2 x {inter}")
        self.add(f"{prefix}{act}", "act.swiglu", {"M": T, "N": inter}, n, lt,
                 "silu(gate) x up in one pass (vLLM silu_and_mul)" + (
                     "; Gemma 2's gelu_tanh(gate) x up moves the same elements (gelu_and_mul)"
                     if cfg.activation == "gelu_tanh" else ""))
        self.gemm(f"{prefix}down projection", T, cfg.hidden, inter, n, lt, "RowParallelLinear down projection")

    def moe(self, n, lt):
        cfg, par, T = self.cfg, self.par, self.T
        E, k, I = cfg.experts, cfg.top_k, par.moe_intermediate
        self.gemm("router", T, E, cfg.hidden, n, lt, f"the gate's logits over {E} experts (replicated on each GPU)")
        # vLLM fused_moe get_default_config (no tuned table for the shape): 16/32/64 when M <= E, else 64/64/32
        small = T <= E
        blocks = {"B_M": 16, "B_N": 32, "B_K": 64} if small else {"B_M": 64, "B_N": 64, "B_K": 32}
        bwhy = (f"vLLM fused_moe's default config (get_default_config, fused_moe.py): BLOCK_SIZE_M/N/K = "
                f"{blocks['B_M']}/{blocks['B_N']}/{blocks['B_K']} ({'M <= E' if small else 'M > E'}); balanced "
                f"routing: every expert gets T k / E pairs, the remainder one more")
        if self.s["weights"] not in ("bf16", "fp16"):
            self.pr._note(f"moe.grouped counts BF16 expert weights: --weights {self.s['weights']} is priced at BF16 "
                          "for the experts (no block-scaled grouped GEMM model)")
        self.add("experts gate/up", "moe.grouped", {"T": T, "E": E, "k": k, "N": 2 * I, "K": cfg.hidden, **blocks},
                 n, lt, f"{bwhy}; w13 writes each (token, slot) pair's row and has no combine, so the model's "
                        "combine (reads_combine, writes_combine, BF16) is taken out of its bytes",
                 minus=("reads_combine", "writes_combine"))
        act = "GeGLU (gelu_tanh)" if cfg.activation == "gelu_tanh" else "SwiGLU"
        self.add(f"experts {act}", "act.swiglu", {"M": T * k, "N": I}, n, lt,
                 f"silu_and_mul over the {T} x {k} (token, slot) rows")
        self.add("experts down + combine", "moe.grouped", {"T": T, "E": E, "k": k, "N": cfg.hidden, "K": I, **blocks},
                 n, lt, f"{bwhy}; the top-{k} weighted sum (moe_sum) included")
        if cfg.shared_experts:
            self.dense(n, lt, cfg.shared_experts * I, prefix="shared expert ")

    def gqa(self, kind: LayerKind, n, lt):
        cfg, par, T, B, L = self.cfg, self.par, self.T, self.B, self.L
        H, Hkv, d = par.heads, par.kv_heads, cfg.head_dim
        self.gemm("QKV projection", T, (H + 2 * Hkv) * d, cfg.hidden, n, lt,
                  f"fused Q, K, V weights (QKVParallelLinear): N = ({H} + 2 x {Hkv}) x {d}"
                  + ("; the QKV bias (Qwen2) is not counted" if cfg.qkv_bias else ""))
        if cfg.qk_norm:
            self.norm("q/k norm", T * (H + Hkv), d, n, lt, "Qwen3's RMSNorm over each query and key head",
                      residual=False)
        self.add("RoPE", "rope.rotate_half", {"T": T, "H": H, "H_kv": Hkv, "d": d}, n, lt,
                 "rotary embedding of the new tokens' query and key heads, in place")
        window = kind.attention == "window"
        W = cfg.window_left
        if self.decode:
            self.decode_attention(n, lt, H, Hkv, d, window, W)
        else:
            self.prefill_attention(n, lt, H, d, d, window, W)
        self.gemm("O projection", T, cfg.hidden, H * d, n, lt, "RowParallelLinear output projection")

    def decode_attention(self, n, lt, H, Hkv, d, window, W):
        from tuning.splits import fa2_block_n, fa2_num_splits
        B, L, N_k = self.B, self.L, self.N_k
        Bn = fa2_block_n(d)
        try:
            S = fa2_num_splits(B, H, Hkv, L, N_k, d, self.pr.gpu.sms)
        except BadInput as exc:                        # the rule's own names, as the command line's options
            raise BadInput({"B": "batch", "N_k": "context"}.get(exc.param, exc.param),
                           f"FlashAttention-2's split rule: {exc.problem}") from None
        p = {"B": B, "H": H, "H_kv": Hkv, "L_q": L, "N_k": N_k, "d": d, "d_v": d, "B_n": Bn, "S": S}
        why = (f"FlashAttention-2's split-KV decode, GQA packed: key block B_n = {Bn} for d = {d} "
               f"(flash_api.cpp:323), S = {S} by its num_splits_heuristic on {self.pr.gpu.sms} SMs "
               "(flash_api.cpp:281-347; tuning/splits.py)")
        if self.s["kv_dtype"] not in ("bf16", "fp16"):
            self.pr._note(f"decode.packed counts a BF16 KV cache: --kv-dtype {self.s['kv_dtype']} is priced at BF16 "
                          "for the GQA decode attention (an upper bound on its traffic)")
        if window and N_k > W + L:
            # FA2 drops its GQA swap under a window (flash_api.cpp:429-437, 1313-1328: the swap needs
            # window_size_left < 0), so the kernel it runs is one CTA per query head, and its split rule counts
            # H heads of L_q rows
            try:
                S_w = fa2_num_splits(B, H, Hkv, L, N_k, d, self.pr.gpu.sms, window=True)
            except BadInput as exc:
                raise BadInput({"B": "batch", "N_k": "context"}.get(exc.param, exc.param),
                               f"FlashAttention-2's split rule: {exc.problem}") from None
            self.add("attention (windowed decode)", "decode.unpacked.window", {**p, "S": S_w, "W_l": W}, n, lt,
                     f"FlashAttention-2's split-KV decode under a sliding window W_l = {W}: query i sees keys "
                     f"pos - {W} .. pos; mha_fwd drops its GQA swap when a window is set (flash_api.cpp:429-437), "
                     f"so one CTA per query head reads its KV head's window (g = {H // Hkv} times over); key block "
                     f"B_n = {Bn} (flash_api.cpp:323), S = {S_w} by num_splits_heuristic over {H} heads "
                     "(tuning/splits.py), the splits cut from the whole cache and clipped to the window as FA2 "
                     "cuts them (flash_fwd_kernel.h:535-543)")
        else:
            extra = f"; the window (W_l = {W}) covers all {N_k} keys, so it does not bind" if window else ""
            self.add("attention (decode)", "decode.packed", p, n, lt, why + extra)

    def prefill_attention(self, n, lt, H, d, d_v, window, W):
        B, L, N_k = self.B, self.L, self.N_k
        e = element_bytes(self.s["dtype"])
        hopper = self.pr.gpu.name in ("H100", "H200")
        count = n * B * H
        needs = ("d_v",) if d_v != d else ()
        dv = {"d_v": d_v} if d_v != d else {}
        per = f"{n} layers x batch {B} x {H} heads"
        if hopper:
            if window and N_k > W + 1:
                self.add("attention (windowed prefill)", "attention.fa3.fwd.window",
                         {"N": L, "N_k": N_k, "d": d, "e": e, "W_l": W, "W_r": 0}, count, lt,
                         f"FlashAttention-3 forward at its shipped tiles (tile_size_fwd_sm90) with the causal sliding "
                         f"window W_l = {W}, W_r = 0; one run per head: {per}", bytes_from="total")
            else:
                self.add("attention (causal prefill)", "attention.fa3.fwd.causal",
                         {"N": L, "N_k": N_k, "d": d, "e": e, **dv}, count, lt,
                         f"FlashAttention-3 forward on Hopper at its shipped tiles (tile_size_fwd_sm90, "
                         f"hopper/tile_size.h), causal; one run per head: {per}", bytes_from="total", needs=needs)
            return
        # FA2 forward tiles (Dao-AILab/flash-attention @ 01afd16, csrc/flash_attn/src/flash_fwd_launch_template.h,
        # run_mha_fwd_hdim32 .. hdim256, no dropout, not sm86/89): 128 x 128 for d <= 64, else 128 x 64 (hdim256
        # on A100's shared memory too)
        Br, Bc = 128, (128 if d <= 64 else 64)
        tiles = (f"FlashAttention-2 forward (not Hopper: FA3 runs on sm90 only) at its sm80 tiles B_r = {Br}, "
                 f"B_c = {Bc} (flash_fwd_launch_template.h @ 01afd16, run_mha_fwd_hdim{_hdim(d)}); one run per head: {per}")
        if window and N_k > W + 1:
            self.add("attention (windowed prefill)", "attention.fa2.fwd.window",
                     {"N": L, "N_k": N_k, "d": d, "B_r": Br, "B_c": Bc, "W_l": W, "W_r": 0}, count, lt,
                     tiles + f"; causal sliding window W_l = {W}", bytes_from="total")
        else:
            self.add("attention (causal prefill)", "attention.fa2.fwd.causal",
                     {"N": L, "N_k": N_k, "d": d, "B_r": Br, "B_c": Bc, **dv}, count, lt, tiles,
                     bytes_from="total", needs=needs)

    def mla(self, n, lt):
        from tuning.mla_splits import flashmla_splits_uniform
        cfg, par, T, B, L, N_k = self.cfg, self.par, self.T, self.B, self.L, self.N_k
        H, nope, rope, dc, dv = par.heads, cfg.qk_nope_head_dim, cfg.qk_rope_head_dim, cfg.kv_lora_rank, cfg.v_head_dim
        qr = cfg.q_lora_rank
        if qr:
            self.gemm("q_a + kv_a projection", T, qr + dc + rope, cfg.hidden, n, lt,
                      f"fused q_a ({qr}) and kv_a ({dc} + {rope}) down-projections, replicated on each GPU "
                      "(DeepseekV2MLAAttention's fused_qkv_a_proj)")
            self.norm("q_a norm", T, qr, n, lt, "RMSNorm of the query latent", residual=False)
            self.norm("kv_a norm", T, dc, n, lt, "RMSNorm of the KV latent", residual=False)
            self.gemm("q_b projection", T, H * (nope + rope), qr, n, lt,
                      f"query up-projection to {H} heads of {nope} + {rope}")
        else:
            self.gemm("kv_a projection", T, dc + rope, cfg.hidden, n, lt, "the KV latent and the RoPE key")
            self.norm("kv_a norm", T, dc, n, lt, "RMSNorm of the KV latent", residual=False)
            self.gemm("q projection", T, H * (nope + rope), cfg.hidden, n, lt, "queries, no latent")
        self.add("RoPE", "rope.rotate_half", {"T": T, "H": H, "H_kv": 1, "d": rope}, n, lt,
                 f"rotary embedding of the {rope}-wide RoPE parts of {H} query heads and the one shared key "
                 "(DeepSeek rotates interleaved pairs: the same elements move)")
        if self.decode:
            self.gemm("q absorb (W_UK)", T, dc, nope, n * H, lt,
                      f"absorbed form: each head's q_nope ({nope}) times its W_UK into the {dc}-wide latent; one "
                      f"GEMM per head ({n} layers x {H} heads)")
            fp8 = self.s["kv_dtype"] == "fp8"
            model = "decode.mla.fp8" if fp8 else "decode.mla"
            try:                                       # B equal sequences, counted without listing them
                groups = flashmla_splits_uniform(B, N_k, self.pr.gpu.sms, H, L)
            except BadInput as exc:
                raise BadInput("context" if exc.param == "N_k" else "batch",
                               f"FlashMLA's scheduler: {exc.problem}") from None
            for S, nb in groups.items():
                label = "attention (MLA decode)" if len(groups) == 1 else f"attention (MLA decode, {nb} seq. at S={S})"
                self.add(label, model, {"B": nb, "H": H, "L_q": L, "N_k": N_k, "d_c": dc, "d_r": rope, "B_h": 64,
                                        "B_n": 64, "S": S, "P": 64}, n, lt,
                         f"FlashMLA's dense split-KV decode, absorbed form ({'FP8' if fp8 else 'BF16'} cache): "
                         f"64 query rows a CTA, 64-token blocks = pages (config.h:5-9, dense_decode.h:67); S = {S} "
                         f"from FlashMLA's scheduler on {self.pr.gpu.sms} SMs (get_mla_metadata; "
                         f"tuning/mla_splits.py) for {nb} of the {B} sequences")
            self.gemm("v up-projection (W_UV)", T, dv, dc, n * H, lt,
                      f"absorbed form: each head's {dc}-wide latent output times its W_UV to {dv}; one GEMM per head")
        else:
            self.gemm("kv_b projection", B * N_k, H * (nope + dv), dc, n, lt,
                      f"non-absorbed prefill: the latent of all {N_k} keys a sequence (context and new) up-projected "
                      f"to {H} heads of K ({nope}) and V ({dv})")
            self.prefill_attention(n, lt, H, nope + rope, dv, False, None)
        self.gemm("O projection", T, cfg.hidden, H * dv, n, lt, "RowParallelLinear output projection")

    def head(self):
        cfg, par = self.cfg, self.par
        lt = "head"
        self.norm("final norm", self.T, cfg.hidden, 1, lt, "the last residual add + RMSNorm")
        M = self.B * (self.L if self.decode else 1)
        self.gemm("LM head", M, par.vocab, cfg.hidden, 1, lt,
                  f"logits of {'every new token' if self.decode else 'the last prompt token'} of each sequence "
                  f"(M = {M}) over the {'vocabulary' if par.tp == 1 else f'{par.vocab:,} tokens of this GPU'}")


def _hdim(d: int) -> int:
    for h in (32, 64, 96, 128, 160, 192, 224, 256):
        if d <= h:
            return h
    return d


def _int_or_frac(v):
    v = Fraction(v)
    return v.numerator if v.denominator == 1 else v


def kv_cache_bytes_per_token(cfg: Config, par: Parallel, kv_dtype: str) -> int:
    """KV-cache bytes one token costs on one GPU, over all layers: ``2 x layers x H_kv x head_dim x bytes``
    (GQA; ``H_kv`` this GPU's), or ``layers x (d_c + d_r) x bytes`` for MLA (FlashMLA's FP8 layout: 656 B a
    layer).  Llama-3.1-8B in BF16: 2 x 32 x 8 x 128 x 2 = 131,072."""
    if cfg.mla:
        per = FLASHMLA_FP8_BYTES_PER_TOKEN if kv_dtype == "fp8" else \
            (cfg.kv_lora_rank + cfg.qk_rope_head_dim) * element_bytes(kv_dtype)
        return cfg.layers * per
    return 2 * cfg.layers * par.kv_heads * cfg.head_dim * element_bytes(kv_dtype)


def _choice(name: str, value, allowed) -> str:
    v = str(value).lower()
    if v not in allowed:
        raise BadInput(name, f"must be one of {', '.join(allowed)}, got {value!r}")
    return v


def step(config, *, gpu="H100", phase="decode", batch=1, context=0, new_tokens=1, dtype="bf16", kv_dtype=None,
         weights="bf16", tp=1, allow_long_context=False) -> Step:
    """One step of ``config`` (a :class:`~tuning.llm.configs.Config`, a shipped name or a ``config.json`` path) on
    ``gpu``: ``batch`` sequences, ``context`` tokens already in each one's KV cache and ``new_tokens`` new ones
    (the prompt in prefill, 1 or more in decode).  Bad input is :class:`~base.errors.BadInput` naming the option;
    an MLA decode step of more than :data:`tuning.mla_splits.MAX_BATCH` sequences (what FlashMLA's scheduler
    holds) is refused naming ``batch`` before anything is priced, and the scheduler's splits of the ``batch``
    equal sequences are counted without listing them (:func:`tuning.mla_splits.flashmla_splits_uniform`)."""
    from symbolic.hardware import get_hardware
    cfg = load_config(config)
    try:
        g = get_hardware(gpu)
    except BadInput as exc:
        raise BadInput("gpu", exc.problem) from None
    if g.sms is None:
        raise BadInput("gpu", f"{g.name} has no SM count in the hardware table")
    phase = _choice("phase", phase, PHASES)
    dtype = _choice("dtype", dtype, DTYPES)
    kv_dtype = _choice("kv-dtype", dtype if kv_dtype is None else kv_dtype, KV_DTYPES)
    weights = _choice("weights", weights, WEIGHTS)
    batch = validate.positive_int("batch", batch)
    context = validate.integer("context", context, least=0)
    new_tokens = validate.positive_int("new-tokens", new_tokens)
    par = per_gpu(cfg, tp)
    N_k = context + new_tokens
    if cfg.mla and phase == "decode":
        from tuning.mla_splits import MAX_BATCH
        if batch > MAX_BATCH:                          # up front: FlashMLA's scheduler holds at most this many
            many = f"{batch:,}" if batch < 10 ** 30 else "more than 10**30"
            raise BadInput("batch", f"{many} sequences exceed the {MAX_BATCH:,} FlashMLA's decode scheduler "
                                    "holds (5 b + 1 ints of shared memory within 227 KiB, "
                                    "get_decoding_sched_meta.cu:110; tuning/mla_splits.py)")
    if N_k > cfg.max_position and not allow_long_context:
        raise BadInput("context", f"context + new tokens = {N_k:,} exceeds {cfg.name}'s max_position_embeddings "
                                  f"{cfg.max_position:,}; RoPE scaling changes the model beyond it "
                                  "(give --allow-long-context to price it anyway)")
    notes: list = []
    if cfg.unused:
        notes.append(f"fields of {cfg.name} not used by the {cfg.model_type} reader: {', '.join(cfg.unused)}")
    notes.extend(par.notes)
    if N_k > cfg.max_position:
        notes.append(f"context beyond max_position_embeddings ({cfg.max_position:,}), priced as asked")
    settings = dict(config=cfg.name, gpu=g.name, phase=phase, batch=batch, context=context, new_tokens=new_tokens,
                    N_k=N_k, dtype=dtype, kv_dtype=kv_dtype, weights=weights, tp=par.tp)
    pr = _Pricing(g, dtype, notes)
    b = _Builder(cfg, par, pr, settings)
    for kind, n in cfg.groups():
        b.layer(kind, n)
    b.head()
    ops = tuple(b.ops)
    notes.append("the embedding lookup (a gather of one row per token) is not priced; nor are the bias adds, "
                 "sampling and the all-gather of the LM head's logits under --tp")
    if cfg.mla:
        notes.append("MLA prefill runs the non-absorbed form (K and V up-projected from the latent, kv_b); decode "
                     "the absorbed one (W_UK, W_UV per head around FlashMLA)")
    pending = [o for o in ops if o.pending]
    if pending:
        notes.append(f"totals leave out {len(pending)} pending row(s): "
                     + "; ".join(sorted({o.why.split('.')[0] for o in pending})))
    layer_totals: dict = {}
    for o in ops:
        t = layer_totals.setdefault(o.layer_type, {"layers": 0, "bytes": 0, "flops": 0, "time_s": 0.0})
        if not o.pending:
            t["bytes"] += o.count * o.bytes
            t["flops"] += o.count * o.flops
            t["time_s"] += o.step_time_s
    for kind, n in cfg.groups():
        layer_totals[kind.name]["layers"] = n
    layer_totals["head"]["layers"] = 1
    tb = sum(t["bytes"] for t in layer_totals.values())
    tf = sum(t["flops"] for t in layer_totals.values())
    tt = sum(t["time_s"] for t in layer_totals.values())
    tokens = batch * new_tokens
    totals = {"bytes": _int_or_frac(tb), "flops": tf, "time_s": tt,
              "kv_cache_bytes": kv_cache_bytes_per_token(cfg, par, kv_dtype) * batch * N_k,
              "tokens_per_s": tokens / tt if tt else None}
    return Step(cfg, ops, totals, layer_totals, tuple(notes), settings)
