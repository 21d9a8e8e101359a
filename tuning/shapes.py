"""The GEMM shapes the tuning study runs on: the course's four and the layers of LLMs.

A shape is ``(M, N, K)`` for ``C[M, N] = A[M, K] B[K, N]`` (FP16), as in :mod:`tuning.schedule`.

**The course's four** (:data:`COURSE_SHAPES`) are lecture 13's (script 03, demo 3): the 4096^3 square, a
prefill of 512 tokens through Llama-3-8B's up projection (N = 14336), a small square with a short K, and
a decode batch of 16 through a 4096 x 4096 projection.

**LLM layers** (:func:`llm_shapes`).  A decoder layer multiplies the ``M`` tokens of a batch (decode:
one token per sequence, ``M`` = batch size; prefill: ``M`` = prompt tokens) by four weights, with
``K`` the input width and ``N`` the output width (tensor parallelism 1):

=========  ===============================================  =====================
layer      N                                                K
=========  ===============================================  =====================
qkv        ``(heads + 2 kv_heads) head_dim`` (fused Q, K, V)  ``hidden``
o          ``hidden``                                        ``heads head_dim``
gate_up    ``2 intermediate`` (fused gate and up)            ``hidden``
down       ``hidden``                                        ``intermediate``
=========  ===============================================  =====================

The fused QKV and gate/up weights are how vLLM runs them (``QKVParallelLinear``,
``MergedColumnParallelLinear``).  The models' sizes (:data:`MODELS`) are their published configs:

* Llama-2-7B, Llama-2-13B: Touvron et al., *Llama 2* (arXiv 2307.09288), with the widths of the
  released ``config.json`` (``meta-llama/Llama-2-7b-hf``: hidden_size 4096, intermediate_size 11008,
  32 heads, 32 KV heads; ``Llama-2-13b-hf``: 5120, 13824, 40, 40); head_dim = hidden / heads = 128;
* Llama-3-8B, Llama-3-70B: *The Llama 3 Herd of Models* (arXiv 2407.21783), Table 3 (model dimension
  4096 / 8192, FFN dimension 14336 / 28672, 32 / 64 attention heads, 8 KV heads), as in
  ``meta-llama/Meta-Llama-3-8B`` / ``-70B``'s ``config.json``.  Llama-2-70B has the same widths as
  Llama-3-70B.

Batch sizes: decode ``M`` in :data:`DECODE_M` (1-256), prefill ``M`` in :data:`PREFILL_M` (512-8192).
Both lists mix powers of two with sizes between them, as traffic does, so that the bucket study of
:mod:`tuning.buckets` meets shapes its tables do not hold.

:data:`LLM_SCORE_SHAPES` is the smaller set the strategy scores run on (every layer of Llama-3-8B and
Llama-3-70B at M = 1, 16, 256, 512, 8192: the ends of decode and prefill and one batch between).
:data:`SHAPE_SETS` names the sets for the command line: ``course``, ``llm`` (the score set) and ``llm-all``
(every model, layer and batch size above).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Mapping

from base.errors import BadInput
from base.validate import positive_int

__all__ = ["Shape", "as_mnk", "COURSE_SHAPES", "LlmModel", "MODELS", "LAYERS", "DECODE_M", "PREFILL_M", "layer_nk",
           "llm_shapes", "LLM_SCORE_SHAPES", "shape", "parse_shape", "shape_set", "SHAPE_SETS"]


@dataclass(frozen=True)
class Shape:
    """One GEMM ``C[M, N] = A[M, K] B[K, N]`` with a name saying where it comes from."""

    M: int
    N: int
    K: int
    name: str = ""

    @property
    def mnk(self) -> tuple:
        return (self.M, self.N, self.K)

    def __str__(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"


def shape(M, N, K, name: str = "") -> Shape:
    """A :class:`Shape` with each size validated: a positive int, else :class:`~base.errors.BadInput`
    naming ``M``, ``N`` or ``K``."""
    return Shape(positive_int("M", M), positive_int("N", N), positive_int("K", K), name)


def parse_shape(text: str) -> Shape:
    """``"M,N,K"`` (also ``MxNxK``) as a :class:`Shape`; :class:`~base.errors.BadInput` naming ``shape``
    for a malformed text, or the size (``M``, ``N``, ``K``) that is not a positive integer.  A size is read as
    ``--at`` reads a number (:func:`base.typed.parse_number`: ``4096``, ``4_096``, ``2**12``, ``10**9``), so
    the command line takes one integer syntax everywhere."""
    from base.typed import parse_number
    parts = [p.strip() for p in str(text).replace("x", ",").replace("×", ",").split(",")]
    if len(parts) != 3 or not all(parts):
        raise BadInput("shape", f"give three sizes M,N,K (e.g. 4096,4096,4096), got {text!r}")
    sizes = []
    for name, p in zip("MNK", parts):
        try:
            v = parse_number(name, p)
        except BadInput as exc:
            raise BadInput(name, f"{exc.problem} in --shape {text[:120]!r}") from None
        if isinstance(v, int) and v < 1:
            raise BadInput(name, f"must be a positive integer, got {v} in --shape {text[:120]!r}")
        sizes.append(v)
    return shape(*sizes)


#: lecture 13, script 03, demo 3 (names as the script's table gives them, in English)
COURSE_SHAPES: tuple = (
    Shape(4096, 4096, 4096, "square 4096^3 (large GEMM)"),
    Shape(512, 14336, 4096, "prefill 512 tokens x Llama-3-8B up projection"),
    Shape(2048, 2048, 512, "small square, short K"),
    Shape(16, 4096, 4096, "decode batch 16 x 4096^2 projection"),
)


@dataclass(frozen=True)
class LlmModel:
    """A decoder's widths: ``hidden`` (model dimension), ``intermediate`` (FFN dimension), attention
    ``heads`` and ``kv_heads`` (grouped-query attention when fewer), ``head_dim``."""

    name: str
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    source: str


MODELS: Mapping[str, LlmModel] = MappingProxyType({m.name: m for m in (
    LlmModel("Llama-2-7B", 4096, 11008, 32, 32, 128,
             "Llama 2 (arXiv 2307.09288); meta-llama/Llama-2-7b-hf config.json"),
    LlmModel("Llama-2-13B", 5120, 13824, 40, 40, 128,
             "Llama 2 (arXiv 2307.09288); meta-llama/Llama-2-13b-hf config.json"),
    LlmModel("Llama-3-8B", 4096, 14336, 32, 8, 128,
             "The Llama 3 Herd of Models (arXiv 2407.21783), Table 3; meta-llama/Meta-Llama-3-8B config.json"),
    LlmModel("Llama-3-70B", 8192, 28672, 64, 8, 128,
             "The Llama 3 Herd of Models (arXiv 2407.21783), Table 3; meta-llama/Meta-Llama-3-70B config.json"),
)})

#: the four weight GEMMs of a decoder layer
LAYERS = ("qkv", "o", "gate_up", "down")
#: decode batch sizes (tokens per step = sequences), powers of two and sizes between them
DECODE_M = (1, 3, 8, 12, 16, 24, 40, 64, 100, 128, 200, 256)
#: prefill token counts
PREFILL_M = (512, 1000, 1536, 2048, 3000, 4096, 6144, 8192)


def layer_nk(model: LlmModel | str, layer: str) -> tuple:
    """``(N, K)`` of ``layer`` (one of :data:`LAYERS`) in ``model`` (see the module's table)."""
    m = model if isinstance(model, LlmModel) else _model(model)
    if layer == "qkv":
        return ((m.heads + 2 * m.kv_heads) * m.head_dim, m.hidden)
    if layer == "o":
        return (m.hidden, m.heads * m.head_dim)
    if layer == "gate_up":
        return (2 * m.intermediate, m.hidden)
    if layer == "down":
        return (m.hidden, m.intermediate)
    raise BadInput("layer", f"unknown layer {layer!r}; known: {', '.join(LAYERS)}")


def _model(name: str) -> LlmModel:
    for k, m in MODELS.items():
        if k.lower() == str(name).lower():
            return m
    raise BadInput("model", f"unknown model {name!r}; known: {', '.join(MODELS)}")


def llm_shapes(models: Iterable[str] | None = None, layers: Iterable[str] = LAYERS,
               ms: Iterable[int] | None = None) -> tuple:
    """Every distinct ``(M, N, K)`` of ``layers`` of ``models`` (default: all of :data:`MODELS`) at the
    batch sizes ``ms`` (default: :data:`DECODE_M` + :data:`PREFILL_M`).  A shape two models share (the
    4096 x 4096 O projection of Llama-2-7B and Llama-3-8B) appears once, named after both."""
    models = list(MODELS) if models is None else [_model(m).name for m in models]
    ms = DECODE_M + PREFILL_M if ms is None else tuple(positive_int("M", m) for m in ms)
    names: dict[tuple, list] = {}
    for m in ms:
        for model in models:
            for layer in layers:
                n, k = layer_nk(model, layer)
                names.setdefault((m, n, k), []).append(f"{model} {layer}")
    return tuple(Shape(m, n, k, f"{' / '.join(v)} M={m}") for (m, n, k), v in names.items())


#: the strategy scores' LLM set: every layer of Llama-3-8B and Llama-3-70B at decode 1, 16, 256 and prefill 512, 8192
LLM_SCORE_SHAPES: tuple = llm_shapes(("Llama-3-8B", "Llama-3-70B"), ms=(1, 16, 256, 512, 8192))

#: named shape sets for the command line's ``--shapes``
SHAPE_SETS: Mapping[str, tuple] = MappingProxyType({"course": COURSE_SHAPES, "llm": LLM_SCORE_SHAPES,
                                                    "llm-all": llm_shapes()})


def as_mnk(value) -> tuple:
    """``(M, N, K)`` of a :class:`Shape` or of any ``(M, N, K)`` triple (validated by :func:`shape`)."""
    if isinstance(value, Shape):
        return value.mnk
    try:
        M, N, K = value
    except (TypeError, ValueError):
        raise BadInput("shape", f"must be (M, N, K), got {value!r}") from None
    return shape(M, N, K).mnk


def shape_set(name: str) -> tuple:
    """A named set of :data:`SHAPE_SETS`; :class:`~base.errors.BadInput` naming ``shapes`` otherwise."""
    try:
        return SHAPE_SETS[name]
    except (KeyError, TypeError):
        raise BadInput("shapes", f"unknown shape set {name!r}; known: {', '.join(SHAPE_SETS)}") from None
