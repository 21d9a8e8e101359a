"""Reading a Hugging Face ``config.json`` into the architecture a step is priced on.

A reader per ``model_type`` (:data:`READERS`) names the fields it needs (a missing one is
:class:`~base.errors.BadInput` naming the field) and the optional ones it uses with their defaults; every
other field of the file is listed in :attr:`Config.unused` (shown as a note), never ignored silently.  An
unknown ``model_type`` is refused, naming it.  Heads not divisible by the KV heads are refused.

The families and the rules each reader transcribes from Hugging Face ``transformers`` (``models/<family>/
modeling_<family>.py``):

* **llama**, **mistral**, **qwen2**, **qwen3**: grouped-query attention (``num_key_value_heads``), SwiGLU MLP,
  two RMSNorms a layer.  ``head_dim`` defaults to ``hidden_size / num_attention_heads``.  Mistral's
  ``sliding_window`` (when not null) windows every layer; Qwen2's only when ``use_sliding_window`` and from layer
  ``max_window_layers`` on (``Qwen2Attention``: ``layer_idx >= max_window_layers``).  Qwen2 has a bias on Q, K
  and V; Qwen3 has none but an RMSNorm over each query and key head (``q_norm``, ``k_norm``).  A window of
  ``sliding_window = w`` lets query ``i`` see keys ``j`` with ``i - w < j <= i`` (the mask of
  ``sliding_window_causal``), so the attention models' left width is ``W_l = w - 1``.
* **gemma2**: alternating local and global layers (``Gemma2DecoderLayer.is_sliding = not bool(layer_idx % 2)``:
  layers 0, 2, 4, ... local), ``head_dim`` given (256), four RMSNorms a layer (pre- and post-attention,
  pre- and post-feed-forward), a GeGLU MLP (``gelu_pytorch_tanh``), tied embeddings.  ``query_pre_attn_scalar``
  and the soft-capping values change the arithmetic, not the traffic: listed as unused.
* **mixtral**: Mistral's attention with a sparse MoE in every layer: ``num_local_experts`` experts, the top
  ``num_experts_per_tok`` of each token.
* **deepseek_v3**: multi-head latent attention (MLA; DeepSeek-V2, arXiv 2405.04434, §2.1): queries through a
  ``q_lora_rank`` bottleneck, keys and values from a ``kv_lora_rank`` latent plus a ``qk_rope_head_dim`` RoPE key
  shared by the heads; query/key width ``qk_nope_head_dim + qk_rope_head_dim``, value width ``v_head_dim``.
  The first ``first_k_dense_replace`` layers have a dense MLP (``intermediate_size``), the others a MoE of
  ``n_routed_experts`` (top ``num_experts_per_tok``) plus ``n_shared_experts`` shared experts of
  ``moe_intermediate_size`` (``DeepseekV3DecoderLayer``: ``layer_idx >= first_k_dense_replace and layer_idx %
  moe_layer_freq == 0``).  The multi-token-prediction layer (``num_nextn_predict_layers``) is not part of a
  plain decode step: listed as unused.

:func:`Config.param_count` adds the weights up from the shapes; ``tests/unit/test_llm_configs.py`` checks it
against each model card's published count.  :data:`SOURCES` says where each shipped config comes from.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Optional

from base.errors import BadInput

__all__ = ["Config", "LayerKind", "READERS", "SOURCES", "CONFIGS", "CONFIG_DIR", "load_config", "read_config"]

#: the folder of the shipped configs (``tuning/llm/configs/<name>.json``; pyproject's package-data ships them)
CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs")

_HF = "https://huggingface.co/{}/blob/main/config.json"
#: where each shipped config's architecture fields come from: the model's Hugging Face repository and its
#: config.json (the fields copied as they are there; tokenizer ids and training-only fields left out)
SOURCES: Mapping[str, str] = MappingProxyType({
    "llama-3.1-8b": _HF.format("meta-llama/Llama-3.1-8B") + "; model card: 8.03B parameters "
                    "(also in transformers tests/utils/test_modeling_utils.py's llama_3_1_config)",
    "llama-3.1-70b": _HF.format("meta-llama/Llama-3.1-70B") + "; model card: 70.6B parameters",
    "mistral-7b": _HF.format("mistralai/Mistral-7B-v0.1") + "; Jiang et al. 2023, Mistral 7B (arXiv 2310.06825), "
                  "Table 1 (window 4096); model card: 7.24B parameters",
    "qwen2.5-7b": _HF.format("Qwen/Qwen2.5-7B") + "; model card: 7.61B parameters (6.53B non-embedding)",
    "gemma-2-9b": _HF.format("google/gemma-2-9b") + "; Gemma 2 report (arXiv 2408.00118), Table 1; model card: "
                  "9.24B parameters",
    "mixtral-8x7b": _HF.format("mistralai/Mixtral-8x7B-v0.1") + "; Jiang et al. 2024, Mixtral of Experts "
                    "(arXiv 2401.04088), Table 1; 46.7B parameters",
    "deepseek-v3": _HF.format("deepseek-ai/DeepSeek-V3") + "; DeepSeek-V3 report (arXiv 2412.19437), §4.2; "
                   "671B parameters (685B with the 14B multi-token-prediction module)",
})

#: shipped name -> path of its config.json
CONFIGS: Mapping[str, str] = MappingProxyType({n: os.path.join(CONFIG_DIR, n + ".json") for n in SOURCES})


@dataclass(frozen=True)
class LayerKind:
    """What a decoder layer is made of: its attention (``"full"``, ``"window"`` or ``"mla"``) and its
    feed-forward (``"dense"`` or ``"moe"``)."""

    attention: str
    ffn: str

    @property
    def name(self) -> str:
        att = {"full": "global", "window": "local", "mla": "mla"}[self.attention]
        return f"{att}.{self.ffn}"


@dataclass(frozen=True)
class Config:
    """The architecture one step is priced on.  Sizes are the model's (before tensor parallelism)."""

    name: str
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_position: int
    layer_kinds: tuple                      # one LayerKind per layer, in order
    tie_embeddings: bool = False
    qkv_bias: bool = False
    qk_norm: bool = False                   # Qwen3: RMSNorm over each query and key head
    sandwich_norms: bool = False            # Gemma 2: four RMSNorms a layer
    activation: str = "silu"
    sliding_window: Optional[int] = None
    rope_scaling: Optional[str] = None
    # MoE
    experts: int = 0
    top_k: int = 0
    moe_intermediate: int = 0
    shared_experts: int = 0
    # MLA
    q_lora_rank: Optional[int] = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    unused: tuple = ()
    source: str = ""
    raw: Mapping = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def window_left(self) -> Optional[int]:
        """``W_l`` of the attention models for a windowed layer: ``sliding_window - 1`` (see the module)."""
        return None if self.sliding_window is None else self.sliding_window - 1

    def groups(self) -> list:
        """``[(LayerKind, count)]`` in the order the kinds first appear."""
        out: dict = {}
        for k in self.layer_kinds:
            out[k] = out.get(k, 0) + 1
        return list(out.items())

    # ------------------------------------------------------------------------------------ parameters
    def attention_params(self) -> int:
        h, H, Hkv, d = self.hidden, self.heads, self.kv_heads, self.head_dim
        if self.mla:
            qk = self.qk_nope_head_dim + self.qk_rope_head_dim
            q = (h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * H * qk) if self.q_lora_rank \
                else h * H * qk
            kv = h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank \
                + self.kv_lora_rank * H * (self.qk_nope_head_dim + self.v_head_dim)
            return q + kv + H * self.v_head_dim * h
        n = h * (H + 2 * Hkv) * d + H * d * h
        if self.qkv_bias:
            n += (H + 2 * Hkv) * d
        if self.qk_norm:
            n += 2 * d
        return n

    def ffn_params(self, kind: LayerKind) -> int:
        h = self.hidden
        if kind.ffn == "dense":
            return 3 * h * self.intermediate
        n = self.experts * 3 * h * self.moe_intermediate + h * self.experts          # experts + router
        n += self.shared_experts * 3 * h * self.moe_intermediate
        if self.model_type == "deepseek_v3":
            n += self.experts                                                      # e_score_correction_bias
        return n

    def param_count(self) -> int:
        """Every weight, from the shapes: embeddings, the LM head unless tied, each layer's attention,
        feed-forward and norms, the final norm."""
        norms = (4 if self.sandwich_norms else 2) * self.hidden
        n = self.vocab * self.hidden * (1 if self.tie_embeddings else 2) + self.hidden
        for kind, count in self.groups():
            n += count * (self.attention_params() + self.ffn_params(kind) + norms)
        return n


# ------------------------------------------------------------------------------------------ readers
@dataclass(frozen=True)
class Reader:
    """A family's reader: the fields it needs, the optional ones it reads with their defaults, and
    ``build(fields, name) -> Config``.  ``informational`` fields are read to check them (the model type,
    the architecture name, the stored weights' type) and are not listed as unused."""

    needs: tuple
    optional: Mapping
    build: Callable
    informational: tuple = ("model_type", "architectures", "torch_dtype", "transformers_version")


_GQA_NEEDS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size",
              "max_position_embeddings")
_GQA_OPTIONAL = {"num_key_value_heads": None, "head_dim": None, "tie_word_embeddings": False,
                 "hidden_act": "silu", "rope_scaling": None, "attention_bias": False, "mlp_bias": False}


def _int(f: Mapping, key: str, least: int = 1) -> int:
    v = f[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < least:
        raise BadInput(key, f"must be an integer >= {least}, got {v!r}")
    return v


def _common(f: Mapping, name: str, model_type: str) -> dict:
    heads = _int(f, "num_attention_heads")
    kv = f.get("num_key_value_heads")
    kv = heads if kv is None else _int(f, "num_key_value_heads")
    if heads % kv:
        raise BadInput("num_key_value_heads", f"{heads} attention heads are not divisible by {kv} KV heads")
    hidden = _int(f, "hidden_size")
    hd = f.get("head_dim")
    if hd is None:
        if hidden % heads:
            raise BadInput("head_dim", f"not given, and hidden_size {hidden} is not divisible by {heads} heads")
        hd = hidden // heads
    else:
        hd = _int(f, "head_dim")
    if f.get("mlp_bias"):
        raise BadInput("mlp_bias", "a bias on the MLP weights is not modelled")
    rs = f.get("rope_scaling")
    return dict(name=name, model_type=model_type, hidden=hidden, layers=_int(f, "num_hidden_layers"), heads=heads,
                kv_heads=kv, head_dim=hd, intermediate=_int(f, "intermediate_size"), vocab=_int(f, "vocab_size"),
                max_position=_int(f, "max_position_embeddings"), tie_embeddings=bool(f.get("tie_word_embeddings")),
                rope_scaling=(rs.get("rope_type") or rs.get("type")) if isinstance(rs, dict) else None,
                activation="gelu_tanh" if "gelu" in str(f.get("hidden_activation") or f.get("hidden_act")) else "silu")


def _window(f: Mapping, key: str = "sliding_window") -> Optional[int]:
    return None if f.get(key) is None else _int(f, key)


def _llama(f, name):
    c = _common(f, name, "llama")
    if f.get("attention_bias"):
        c["qkv_bias"] = True
    return Config(**c, layer_kinds=(LayerKind("full", "dense"),) * c["layers"])


def _mistral(f, name):
    c = _common(f, name, "mistral")
    w = _window(f)
    return Config(**c, sliding_window=w, layer_kinds=(LayerKind("window" if w else "full", "dense"),) * c["layers"])


def _qwen(model_type):
    def build(f, name):
        c = _common(f, name, model_type)
        w = _window(f) if f.get("use_sliding_window") else None
        first = f.get("max_window_layers", c["layers"]) if w else c["layers"]
        kinds = tuple(LayerKind("window" if (w and i >= first) else "full", "dense") for i in range(c["layers"]))
        extra = dict(qkv_bias=True) if model_type == "qwen2" else dict(qk_norm=True, qkv_bias=bool(f.get("attention_bias")))
        return Config(**c, **extra, sliding_window=w, layer_kinds=kinds)
    return build


def _gemma2(f, name):
    c = _common(f, name, "gemma2")
    c["tie_embeddings"] = bool(f.get("tie_word_embeddings", True))
    w = _window(f)
    kinds = tuple(LayerKind("window" if (w and i % 2 == 0) else "full", "dense") for i in range(c["layers"]))
    return Config(**c, sliding_window=w, sandwich_norms=True, layer_kinds=kinds)


def _mixtral(f, name):
    c = _common(f, name, "mixtral")
    w = _window(f)
    E, k = _int(f, "num_local_experts"), _int(f, "num_experts_per_tok")
    if k > E:
        raise BadInput("num_experts_per_tok", f"{k} exceeds the {E} experts")
    return Config(**c, sliding_window=w, experts=E, top_k=k, moe_intermediate=c["intermediate"],
                  layer_kinds=(LayerKind("window" if w else "full", "moe"),) * c["layers"])


def _deepseek_v3(f, name):
    c = _common({**f, "head_dim": f["qk_nope_head_dim"] + f["qk_rope_head_dim"]}, name, "deepseek_v3")
    E, k = _int(f, "n_routed_experts"), _int(f, "num_experts_per_tok")
    if k > E:
        raise BadInput("num_experts_per_tok", f"{k} exceeds the {E} experts")
    first, freq = _int(f, "first_k_dense_replace", 0), _int(f, "moe_layer_freq")
    kinds = tuple(LayerKind("mla", "moe" if (i >= first and i % freq == 0) else "dense") for i in range(c["layers"]))
    q = f.get("q_lora_rank")
    return Config(**c, layer_kinds=kinds, experts=E, top_k=k, moe_intermediate=_int(f, "moe_intermediate_size"),
                  shared_experts=_int(f, "n_shared_experts", 0), q_lora_rank=None if q is None else _int(f, "q_lora_rank"),
                  kv_lora_rank=_int(f, "kv_lora_rank"), qk_nope_head_dim=_int(f, "qk_nope_head_dim"),
                  qk_rope_head_dim=_int(f, "qk_rope_head_dim"), v_head_dim=_int(f, "v_head_dim"))


READERS: Mapping[str, Reader] = MappingProxyType({
    "llama": Reader(_GQA_NEEDS, _GQA_OPTIONAL, _llama),
    "mistral": Reader(_GQA_NEEDS, {**_GQA_OPTIONAL, "sliding_window": None}, _mistral),
    "qwen2": Reader(_GQA_NEEDS, {**_GQA_OPTIONAL, "sliding_window": None, "use_sliding_window": False,
                                 "max_window_layers": None}, _qwen("qwen2")),
    "qwen3": Reader(_GQA_NEEDS, {**_GQA_OPTIONAL, "sliding_window": None, "use_sliding_window": False,
                                 "max_window_layers": None}, _qwen("qwen3")),
    "gemma2": Reader(_GQA_NEEDS + ("head_dim",), {**_GQA_OPTIONAL, "sliding_window": None,
                                                  "hidden_activation": None, "tie_word_embeddings": True}, _gemma2),
    "mixtral": Reader(_GQA_NEEDS + ("num_local_experts", "num_experts_per_tok"),
                      {**_GQA_OPTIONAL, "sliding_window": None}, _mixtral),
    "deepseek_v3": Reader(_GQA_NEEDS + ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                                        "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                        "first_k_dense_replace"),
                          {**_GQA_OPTIONAL, "q_lora_rank": None, "n_shared_experts": 0, "moe_layer_freq": 1},
                          _deepseek_v3),
})


def read_config(fields: Mapping, name: str = "config.json", source: str = "") -> Config:
    """A :class:`Config` from the parsed fields of a ``config.json``."""
    if not isinstance(fields, Mapping):
        raise BadInput("config", f"{name}: a config.json holds one JSON object, got {type(fields).__name__}")
    mt = fields.get("model_type")
    if mt is None:
        raise BadInput("model_type", f"{name} has no model_type; known: {', '.join(READERS)}")
    reader = READERS.get(mt)
    if reader is None:
        raise BadInput("model_type", f"unknown architecture {mt!r} in {name}; known: {', '.join(READERS)}")
    for key in reader.needs:
        if fields.get(key) is None:
            raise BadInput(key, f"{name} ({mt}) lacks the field {key!r}, which the {mt} reader needs")
    defaults = {k: v for k, v in reader.optional.items() if v is not None and fields.get(k) is None}
    cfg = reader.build({**fields, **defaults}, name)
    read = set(reader.needs) | set(reader.optional) | set(reader.informational)
    unused = tuple(sorted(k for k in fields if k not in read))
    return _replace(cfg, unused=unused, source=source, raw=MappingProxyType(dict(fields)))


def _replace(cfg: Config, **kw) -> Config:
    from dataclasses import replace
    return replace(cfg, **kw)


def load_config(config) -> Config:
    """A shipped config by name (:data:`CONFIGS`), a path to a ``config.json``, or a mapping of its fields.
    :class:`~base.errors.BadInput` naming ``config`` for an unknown name (with the nearest names), a file that
    cannot be read or is not JSON; naming the field for a missing or bad one."""
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        return read_config(config)
    text = str(config)
    if text in CONFIGS:
        path, name, source = CONFIGS[text], text, SOURCES[text]
    elif os.path.exists(text):
        path, name, source = text, os.path.basename(os.path.dirname(os.path.abspath(text))) or text, text
        if os.path.isdir(path):
            path = os.path.join(path, "config.json")
    else:
        near = difflib.get_close_matches(text.lower(), list(CONFIGS), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(near)}?" if near else f"; shipped: {', '.join(CONFIGS)}"
        raise BadInput("config", f"{text!r} is neither a file nor a shipped config{hint}")
    try:
        with open(path, encoding="utf-8") as fh:
            fields = json.load(fh)
    except OSError as exc:
        raise BadInput("config", f"cannot read {path!r}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput("config", f"{path!r} is not JSON: {exc}") from None
    cfg = read_config(fields, name if text in CONFIGS else os.path.basename(path), source)
    return _replace(cfg, name=name)
