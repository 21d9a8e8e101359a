"""Per-GPU shapes under tensor parallelism, and the all-reduce traffic it adds.

Megatron-style tensor parallelism over ``T`` GPUs (Shoeybi et al. 2019, arXiv 1909.08053, §3), as vLLM runs
it: the QKV and gate/up projections are split by columns (each GPU holds ``H / T`` query heads and
``intermediate / T`` of the MLP), O and down by rows, and each row-split product ends in an all-reduce of
its ``tokens x hidden`` output - two a layer.  Experts are split the same way (each GPU holds every
expert's ``moe_intermediate / T`` columns; vLLM's ``FusedMoE`` without expert parallelism) and the MoE's
output is all-reduced once; the LM head is split over the vocabulary.

**KV heads.**  vLLM's ``QKVParallelLinear.__init__`` (``vllm/model_executor/layers/linear.py`` @ ``0036d38``,
the branch ``if tp_size >= self.total_num_kv_heads``): with ``T >= H_kv`` each GPU holds one KV head,
replicated ``T / H_kv`` times (``divide`` asserts that ``H_kv`` divides ``T``); otherwise ``H_kv / T`` each
(``divide`` asserts ``T`` divides ``H_kv``).  MLA's latent cache is one head shared by all query heads,
so every GPU holds all of it.

**All-reduce.**  A ring all-reduce of ``m`` bytes over ``T`` GPUs is a reduce-scatter and an all-gather, each
``T - 1`` steps of ``m / T`` bytes: every GPU sends (and receives) ``2 (T - 1) / T x m`` (Patarasuk & Yuan
2009, "Bandwidth optimal all-reduce algorithms", §3; NCCL's ring).  Sending and receiving run at once on
NVLink's two directions, so the time is those bytes over **one direction**: half the datasheet's
bidirectional figure (:attr:`symbolic.hardware.GPU.nvlink_bytes_per_s`).  No latency term: a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from base import validate
from base.errors import BadInput

from .configs import Config

__all__ = ["Parallel", "per_gpu", "ring_allreduce_bytes", "link_bytes_per_s"]


@dataclass(frozen=True)
class Parallel:
    """One GPU's share of a layer under ``tp``-way tensor parallelism."""

    tp: int
    heads: int
    kv_heads: int
    kv_replicas: int
    intermediate: int
    moe_intermediate: int
    vocab: int
    notes: tuple = ()


def _split(name: str, total: int, tp: int, what: str) -> int:
    if total % tp:
        raise BadInput("tp", f"--tp {tp} does not divide {what} ({name} = {total})")
    return total // tp


def per_gpu(cfg: Config, tp: int = 1) -> Parallel:
    """The per-GPU sizes of ``cfg`` at ``tp``; :class:`~base.errors.BadInput` naming ``tp`` when it does not
    divide the heads, the MLP, or (``T < H_kv``) the KV heads, or when ``H_kv`` does not divide it."""
    tp = validate.positive_int("tp", tp)
    notes = []
    heads = _split("num_attention_heads", cfg.heads, tp, "the attention heads")
    if cfg.mla:
        kv, rep = 1, tp
        if tp > 1:
            notes.append(f"MLA: the latent KV cache is one head, held whole on each of the {tp} GPUs")
    elif tp >= cfg.kv_heads:
        if tp % cfg.kv_heads:
            raise BadInput("tp", f"--tp {tp} is not a multiple of the {cfg.kv_heads} KV heads (vLLM's "
                                 "QKVParallelLinear replicates a KV head tp / H_kv times)")
        kv, rep = 1, tp // cfg.kv_heads
        if rep > 1:
            notes.append(f"KV heads: {cfg.kv_heads} for {tp} GPUs, so each GPU holds one, replicated {rep} times "
                         "(vLLM QKVParallelLinear)")
    else:
        kv, rep = _split("num_key_value_heads", cfg.kv_heads, tp, "the KV heads"), 1
    inter = _split("intermediate_size", cfg.intermediate, tp, "the MLP width")
    moe = _split("moe_intermediate_size", cfg.moe_intermediate, tp, "the experts' width") if cfg.experts else 0
    vocab = -(-cfg.vocab // tp)
    if tp > 1 and cfg.vocab % tp:
        notes.append(f"LM head: {cfg.vocab:,} tokens over {tp} GPUs, {vocab:,} each (the last one padded)")
    return Parallel(tp, heads, kv, rep, inter, moe, vocab, tuple(notes))


def ring_allreduce_bytes(message_bytes, tp: int):
    """Bytes each GPU sends in a ring all-reduce of ``message_bytes``: ``2 (T - 1) / T x message`` (exact)."""
    tp = validate.positive_int("tp", tp)
    return Fraction(2 * (tp - 1), tp) * message_bytes


def link_bytes_per_s(gpu) -> int:
    """One direction of the GPU's NVLink: half the datasheet's total (see the module)."""
    if gpu.nvlink_bytes_per_s is None:
        raise BadInput("gpu", f"{gpu.name} has no NVLink bandwidth in the hardware table")
    return gpu.nvlink_bytes_per_s // 2
