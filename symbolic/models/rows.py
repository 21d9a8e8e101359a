"""Row kernels of an LLM step: softmax (naive and fused), RMSNorm (alone and fused with the residual add), SwiGLU,
rotary position embedding - exact element traffic, bytes, and elementwise arithmetic.

Counting convention (``docs/conventions.md`` §1.0): elements moved between global memory and one program's
on-chip memory, each program's loads and stores counted (a tensor every program reads, like a norm's weight,
is counted once per program that loads it).  Bytes use each tensor's own element type
(:func:`base.dtypes.element_bytes`).  ``docs/conventions.md`` keeps ``flops`` for matrix products, so the
arithmetic here is ``ops``: **one op per elementwise add, subtract, multiply, divide, comparison (a max),
exp or rsqrt**, counted on valid elements; a reduction of ``n`` values is ``n - 1`` ops; a negation folded
into an exponent's argument (``expf(-x)``) is not an op.  ``exps`` and ``rsqrts`` count the special-function
ops among them.  ``M`` rows of ``N`` elements.

**softmax.naive** - Triton tutorial 02, "Fused Softmax" (triton-lang/triton
``python/tutorials/02-fused-softmax.py:41-58`` at commit fd237c7): the numerically stable softmax as five
PyTorch kernels, each through global memory, as the tutorial counts them line by line::

    x_max = x.max(dim=1)[0]                  read  MN       write M
    z = x - x_max[:, None]                   read  MN + M   write MN
    numerator = torch.exp(z)                 read  MN       write MN
    denominator = numerator.sum(dim=1)       read  MN       write M
    ret = numerator / denominator[:, None]   read  MN + M   write MN
                                     total:  read 5MN + 2M ; write 3MN + 2M   (line 57)

ops ``M (N - 1)`` (max) + ``MN`` (subtract) + ``MN`` (exp) + ``M (N - 1)`` (sum) + ``MN`` (divide)
``= M (5N - 2)``, ``exps = MN``; FP32 tensors (the tutorial's benchmark, ``dtype=torch.float32``).

**softmax.fused** - the tutorial's ``softmax_kernel`` (``:83-108``): a program loads a row once (masked to
its ``N`` valid elements), computes on chip and stores it once: reads ``MN``, writes ``MN``, the same ops.
``ratio_unfused = (8MN + 4M) / (2MN)``, the tutorial's own "(8MN + 4M) / 2MN" (``:67``).

**norm.rms** - RMSNorm (Zhang & Sennrich 2019; Llama's ``y = x / sqrt(mean(x^2) + eps) * w``) as vLLM's
``rms_norm_kernel`` runs it (vllm-project/vllm ``csrc/layernorm_kernels.cu:19-48`` at commit 0112cf2): one
program per ``B_R`` rows (vLLM: one token per thread block, ``B_R = 1``) loads the weight once, reads each
row twice - for the sum of squares (``:29-32``) and again to scale it (``:43-47``) - and writes it once::

    reads = 2MN + ceil(M/B_R) N,   writes = MN,   ops = M (4N + 2),   rsqrts = M

(per row: ``N`` squares, ``N - 1`` adds, the divide by ``N``, ``+ eps`` and the rsqrt (``:38-40``), two
multiplies per element).  BF16 tensors.

**norm.rms_residual** - vLLM's ``fused_add_rms_norm_kernel`` (``:54-106``): pass 1 reads ``input`` and
``residual``, adds, stores ``residual`` (``:80-87``); pass 2 reads ``residual`` again, scales, multiplies by
the weight and stores ``input`` (``:98-105``)::

    reads = 3MN + ceil(M/B_R) N,   writes = 2MN,   ops = M (5N + 2),   rsqrts = M

Unfused (an add kernel: reads ``2MN``, writes ``MN``; then ``norm.rms``) it moves
``6MN + ceil(M/B_R) N`` elements against ``5MN + ceil(M/B_R) N``: ``ratio_unfused`` is their quotient.

**act.swiglu** - SwiGLU, ``silu(gate) * up`` (Shazeer 2020, *GLU Variants Improve Transformer*, arXiv
2002.05202, eq. (6); Llama's MLP), as vLLM's ``silu_and_mul`` (``csrc/activation_kernels.cu:21-30``: each
token's ``gate`` and ``up`` halves of a ``[M, 2N]`` input read once, the ``[M, N]`` output written once;
``silu_kernel`` ``:45-48`` is ``x / (1 + expf(-x))``)::

    reads = 2MN,   writes = MN,   ops = 4MN (exp, add, divide, multiply),   exps = MN

Unfused (``F.silu(gate)``: reads ``MN``, writes ``MN``; then ``* up``: reads ``2MN``, writes ``MN``) it moves
``5MN`` against ``3MN``: ``ratio_unfused = 5/3``.  BF16 tensors.

**rope.rotate_half** - rotary position embedding (Su et al. 2021, *RoFormer*, arXiv 2104.09864, §3.4.2
eq. (34)) in the rotate-half (GPT-NeoX / Llama) layout of Hugging Face's ``rotate_half`` and
``apply_rotary_pos_emb``: the pair ``(x_i, x_{i + d/2})`` becomes ``(x_i cos - x_{i+d/2} sin, x_{i+d/2} cos +
x_i sin)``.  Counted as vLLM's ``rotary_embedding_kernel`` with ``is_neox`` (``csrc/pos_encoding_kernels.cu``
at commit 0f5257e: one program per token reads its position (``:92``), then for each of the ``H`` query and
``H_kv`` key heads and each of the ``d/2`` pairs loads ``cos`` and ``sin`` from the cache row (``:18-19``)
and the pair (``:29-30``) and stores it in place (``:31-32``))::

    reads = 2 T (H + H_kv) d + T,   writes = T (H + H_kv) d,   ops = 3 T (H + H_kv) d

``q``, ``k`` and the ``cos``/``sin`` cache BF16, positions int64.  ``d`` must be even.
"""

from __future__ import annotations

import sympy as sp

from base.dtypes import element_bytes
from base.errors import BadInput

from ..asymptotics import Regime
from ..model import Model
from ..notes import code, note, symbol
from ..params import param
from ..registry import defines

__all__ = ["M", "N", "B_R", "T", "H", "H_kv", "d", "SOFTMAX_DTYPE", "ACT_DTYPE", "POS_DTYPE", "softmax_naive",
           "softmax_fused", "norm_rms", "norm_rms_residual", "act_swiglu", "rope_rotate_half"]

M = param("M", "rows: tokens, or the softmax's rows", latex="M")
N = param("N", "columns: a row's length (the hidden size; the softmax's row)", latex="N")
B_R = param("B_R", "rows a program normalises (vLLM: one token per thread block)", latex="B_R")
T = param("T", "tokens", latex="T")
H = param("H", "query heads", latex="H")
H_kv = param("H_kv", "key heads", latex="H_{kv}")
d = param("d", "head dimension (rotated whole; even)", latex="d")

#: element types: the tutorial's softmax is FP32; the LLM activations and weights BF16; positions int64
SOFTMAX_DTYPE, ACT_DTYPE, POS_DTYPE = "fp32", "bf16", "int64"
_ES, _EA, _EP = element_bytes(SOFTMAX_DTYPE), element_bytes(ACT_DTYPE), element_bytes(POS_DTYPE)

#: names the notes use that are not parameters: a reduction's length; the tensors of the kernels' formulas
_n = symbol("n")
_x, _y, _w, _r = symbol("x"), symbol("y"), symbol("w"), symbol("residual", r"\mathrm{residual}")
_eps = symbol("epsilon")
_out, _gate, _up = (symbol(n, rf"\mathrm{{{n}}}") for n in ("out", "gate", "up"))
_q, _k = symbol("q"), symbol("k")
_x1, _x2, _theta = symbol("x_1"), symbol("x_2"), symbol("theta")
_mean, _silu = sp.Function("mean"), sp.Function("silu")


class RMSNorm(sp.Function):
    """``RMSNorm(x)`` in a note (SymPy's LaTeX printer would read the name's ``Norm`` as a norm's bars)."""

    nargs = 1

    def _tilebound_latex(self, printer, exp=None):
        tex = r"\operatorname{RMSNorm}\left(" + printer._print(self.args[0]) + r"\right)"
        return rf"{tex}^{{{exp}}}" if exp else tex

    _latex = _tilebound_latex

_OPS_NOTE = note(code("ops"), ": one per elementwise add, subtract, multiply, divide, comparison, exp or rsqrt on "
                 "valid elements; a reduction of ", _n, " values is ", _n - 1, " ops (", code("docs/conventions.md"),
                 " keeps ", code("flops"), " for matrix products)")
_UNITS = {"ops": "ops", "exps": "ops", "rsqrts": "ops", "bytes": "bytes", "launches": "kernels",
          "ratio_unfused": "1", "reads_x": "elements", "reads_w": "elements", "reads_r": "elements",
          "reads_cache": "elements", "reads_pos": "elements"}
_TUTORIAL = note("triton-lang/triton ", code("python/tutorials/02-fused-softmax.py"), " at commit fd237c7")


def _vllm_norm(lines: str, *what):
    """vLLM's ``csrc/layernorm_kernels.cu`` at the commit counted, lines ``lines``, ``what`` they hold."""
    return note("vllm-project/vllm ", code("csrc/layernorm_kernels.cu"), f":{lines} at commit 0112cf2 (", *what, ")")


def _softmax_ops():
    return M * (5 * N - 2)


@defines("softmax.naive", "row softmax as five PyTorch kernels (Triton tutorial 02's naive_softmax): reads 5MN + 2M, "
                          "writes 3MN + 2M, FP32")
def softmax_naive():
    reads, writes = 5 * M * N + 2 * M, 3 * M * N + 2 * M
    return Model("softmax.naive", "numerically stable row softmax, five kernels through global memory",
                 {"reads": reads, "writes": writes, "ops": _softmax_ops(), "exps": M * N,
                  "bytes": _ES * (reads + writes), "launches": sp.Integer(5)},
                 params=(M, N), units=_UNITS, defaults={"M": 4096, "N": 4096},
                 source=_TUTORIAL + ", lines 41-58 (the total at line 57)",
                 notes=(note("the tutorial's count, line by line: max ", M * N, " in, ", M, " out; subtract ",
                             M * N + M, " in, ", M * N, " out; exp; sum; divide"), _OPS_NOTE,
                        "FP32 tensors, as the tutorial's benchmark"))


@defines("softmax.fused", "row softmax in one kernel (Triton tutorial 02's softmax_kernel): reads MN, writes MN, FP32")
def softmax_fused():
    reads = writes = M * N
    unfused = 8 * M * N + 4 * M
    return Model("softmax.fused", "fused row softmax: each row loaded once and stored once",
                 {"reads": reads, "writes": writes, "ops": _softmax_ops(), "exps": M * N,
                  "bytes": _ES * (reads + writes), "launches": sp.Integer(1),
                  "ratio_unfused": unfused / (reads + writes)},
                 params=(M, N), units=_UNITS, defaults={"M": 4096, "N": 4096},
                 source=_TUTORIAL + ", lines 83-108 (the kernel) and 67 (the tutorial's ratio of the two)",
                 notes=(note(code("ratio_unfused"), ": ", code("softmax.naive"), "'s traffic over this kernel's, ",
                             unfused / (2 * M * N), " (the tutorial's expected speed-up, about four)"), _OPS_NOTE))


def _norm_regime():
    return Regime(note(sp.Le(B_R, M)), le=((B_R, M),))


@defines("norm.rms", "RMSNorm as vLLM's rms_norm_kernel: each row read twice, the weight once per program, BF16")
def norm_rms():
    w = sp.ceiling(M / B_R) * N
    reads, writes = 2 * M * N + w, M * N
    t = sp.Dummy("t", integer=True, positive=True)
    return Model("norm.rms", note("RMSNorm ", sp.Eq(_y, _x * _w / sp.sqrt(_mean(_x ** 2) + _eps)),
                                  ", one program per ", B_R, " rows"),
                 {"reads": reads, "writes": writes, "reads_x": 2 * M * N, "reads_w": w,
                  "ops": M * (4 * N + 2), "rsqrts": M, "bytes": _EA * (reads + writes)},
                 params=(M, N, B_R), units=_UNITS, divisible_subs={M: B_R * t}, regime=_norm_regime(),
                 defaults={"M": 4096, "N": 4096, "B_R": 1},
                 source=_vllm_norm("19-48", code("rms_norm_kernel"), ": the two passes 29-32 and 43-47"),
                 notes=(note("the row is read twice (sum of squares, then the scaling): ", 2 * M * N,
                             "; the weight once per program: ", w), _OPS_NOTE))


@defines("norm.rms_residual", "residual add fused with RMSNorm (vLLM fused_add_rms_norm): residual updated in place, "
                              "BF16; with its traffic ratio to add + norm.rms")
def norm_rms_residual():
    w = sp.ceiling(M / B_R) * N
    reads, writes = 3 * M * N + w, 2 * M * N
    unfused = 6 * M * N + w
    t = sp.Dummy("t", integer=True, positive=True)
    return Model("norm.rms_residual", note("residual add and RMSNorm in one kernel: ", _r, " is replaced by ",
                                           _x + _r, ", then ", _x, " by ", RMSNorm(_r) * _w),
                 {"reads": reads, "writes": writes, "reads_x": M * N, "reads_r": 2 * M * N, "reads_w": w,
                  "ops": M * (5 * N + 2), "rsqrts": M, "bytes": _EA * (reads + writes),
                  "ratio_unfused": unfused / (reads + writes)},
                 params=(M, N, B_R), units=_UNITS, divisible_subs={M: B_R * t}, regime=_norm_regime(),
                 defaults={"M": 4096, "N": 4096, "B_R": 1},
                 source=_vllm_norm("54-106", code("fused_add_rms_norm_kernel"), ": pass 1 80-87, pass 2 98-105"),
                 notes=(note("the residual is stored in pass 1 and read again in pass 2: ", 2 * M * N, " reads"),
                        note(code("ratio_unfused"), ": an add kernel (", 3 * M * N, " elements) and ",
                             code("norm.rms"), " (", 3 * M * N + w, ") over this kernel's ", 5 * M * N + w),
                        _OPS_NOTE))


@defines("act.swiglu", "SwiGLU silu(gate) * up as vLLM's silu_and_mul: reads 2MN, writes MN, BF16; with its ratio "
                       "to silu + multiply")
def act_swiglu():
    reads, writes = 2 * M * N, M * N
    return Model("act.swiglu", note("SwiGLU: ", sp.Eq(_out, _silu(_gate) * _up), " over an input of ", M,
                                    " rows by ", 2 * N, " columns, one pass"),
                 {"reads": reads, "writes": writes, "ops": 4 * M * N, "exps": M * N, "bytes": _EA * (reads + writes),
                  "ratio_unfused": sp.Rational(5, 3)},
                 params=(M, N), units=_UNITS, defaults={"M": 4096, "N": 14336},
                 source=note("Shazeer 2020, GLU Variants Improve Transformer (arXiv 2002.05202), eq. (6); "
                             "vllm-project/vllm ", code("csrc/activation_kernels.cu"), ":21-30 (",
                             code("_act_and_mul_kernel"), "), 45-48 (", code("silu_kernel"), "), commit 00ccbd4"),
                 notes=(note(code("ratio_unfused"), ": ", code("F.silu(gate)"), " (", 2 * M * N,
                             " elements) then the multiply by ", _up, " (", 3 * M * N, ") over this kernel's ",
                             3 * M * N), _OPS_NOTE))


def _check_rope(point):
    if point["d"] % 2:
        raise BadInput("d", f"rotate-half pairs x_i with x_(i + d/2): d must be even, got {point['d']}")


@defines("rope.rotate_half", "rotary embedding, rotate-half layout, of T tokens' H query and H_kv key heads (vLLM "
                             "rotary_embedding_kernel, is_neox): cos/sin per head and pair, BF16")
def rope_rotate_half():
    x = T * (H + H_kv) * d
    reads, writes = 2 * x + T, x
    rotated = sp.Tuple(_x1 * sp.cos(_theta) - _x2 * sp.sin(_theta), _x2 * sp.cos(_theta) + _x1 * sp.sin(_theta))
    return Model("rope.rotate_half", note("RoPE in place on ", _q, " and ", _k, ": a pair ", sp.Tuple(_x1, _x2),
                                          " becomes ", rotated),
                 {"reads": reads, "writes": writes, "reads_x": x, "reads_cache": x, "reads_pos": T,
                  "ops": 3 * x, "bytes": _EA * (2 * x + writes) + _EP * T},
                 params=(T, H, H_kv, d), units=_UNITS, defaults={"T": 4096, "H": 32, "H_kv": 8, "d": 128},
                 validate=_check_rope,
                 source=note("Su et al. 2021, RoFormer (arXiv 2104.09864), eq. (34); Hugging Face transformers ",
                             code("modeling_llama.py"), " ", code("rotate_half"), ", ", code("apply_rotary_pos_emb"),
                             "; vllm-project/vllm ", code("csrc/pos_encoding_kernels.cu"), ":8-33 (a pair), 36-74 "
                             "(the heads), 92 (the position), commit 0f5257e"),
                 notes=(note(code("cos"), " and ", code("sin"), " are loaded for every head and pair: ",
                             T * (H + H_kv) * d,
                             " cache reads; the position once per token (int64)"),
                        note("per pair: 4 multiplies and 2 adds, ", 3 * T * (H + H_kv) * d, " ops in all"),
                        _OPS_NOTE))
