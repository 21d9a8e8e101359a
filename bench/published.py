"""Published performance figures beside what the project's time models predict at the same settings.

    python bench/published.py            # print the table (Markdown)
    python bench/published.py --write    # regenerate it in docs/llm.md, between the markers

Each row is a figure a paper, a README or a commit publishes (cited with its table or figure, or file, line and
commit), the settings it states, and the prediction of an existing model at those settings - nothing here is fitted
to the figures:

* FlashAttention-3's forward TFLOP/s: ``attention.fa3.fwd`` / ``.causal`` (the FA2 loop at FA3's shipped tiles) on
  the roofline of ``symbolic/hardware.py``'s H100 (989 TFLOP/s BF16, 1979 FP8, 3.35 TB/s), ``batch x heads``
  copies; the predicted TFLOP/s uses the paper's FLOP convention (``4 N^2 d`` a head, halved when causal:
  FlashAttention-2, Dao 2023, §4.1) over the predicted time, so both columns divide the same work;
* FlashMLA's memory-bound GB/s and compute-bound TFLOP/s: ``decode.mla.time`` (H800 figures of FlashMLA's
  deep-dive), the split count from ``tuning.mla_splits.flashmla_splits``, and the bytes and FLOPs FlashMLA's own
  benchmark divides (``tests/test_flash_mla.py:108-113`` @ c2067be);
* decode tokens/s of a stated model, GPU and batch: ``tuning.llm.step`` (when it is on this branch).

The error is ``(predicted - published) / published``.  A roofline is an upper bound on speed, so a positive error is
the share of the peak the kernel does not reach; the page says why where it is large.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "llm.md"
START, END = "<!-- published:start -->", "<!-- published:end -->"

FA3 = "Shah et al. 2024, FlashAttention-3, arXiv 2407.08608v2"
FA3_SETUP = "seqlen 16k, batch 1, hidden 2048 (heads = 2048 / d), as §4.1 states for its speed figures"
FLASHMLA = "deepseek-ai/FlashMLA"
GPTFAST = "pytorch-labs/gpt-fast README.md:98 @32971d3"


@dataclass(frozen=True)
class Published:
    key: str
    what: str
    figure: float
    unit: str
    citation: str
    settings: dict = field(default_factory=dict)
    why: str = ""


ROWS = (
    Published("fa3-bf16-d64", "FA3 forward, BF16, d = 64, not causal", 497, "TFLOP/s",
              f"{FA3}, Fig. 5, panel head dim 64 without causal mask (bar label at 16k)", dict(kind="fa3", d=64, e=2, causal=False),
              "at d = 64 the N^2 exponentials (3.9 T/s MUFU, FA3 §1) take as long as the 4 N^2 d MMA FLOPs; "
              "neither the exp unit nor L2 is in the roofline, and the two errors partly cancel"),
    Published("fa3-bf16-d128", "FA3 forward, BF16, d = 128, not causal", 648, "TFLOP/s",
              f"{FA3}, Fig. 5, panel head dim 128 without causal mask (bar label at 16k)", dict(kind="fa3", d=128, e=2, causal=False),
              "the model counts every K, V tile a query block loads as HBM traffic; a head's K, V (8 MB at 16k) "
              "stays in the 50 MB L2, so the GPU runs at the compute roof, 66 % of the 989 peak"),
    Published("fa3-bf16-d128-causal", "FA3 forward, BF16, d = 128, causal", 616, "TFLOP/s",
              f"{FA3}, Fig. 5, panel head dim 128 with causal mask (bar label at 16k)", dict(kind="fa3", d=128, e=2, causal=True),
              "as above (L2 serves the K, V re-reads); causal halves both the FLOPs and the tiles"),
    Published("fa3-bf16-d256", "FA3 forward, BF16, d = 256, not causal", 756, "TFLOP/s",
              f"{FA3}, Fig. 5, panel head dim 256 without causal mask (bar label at 16k)", dict(kind="fa3", d=256, e=2, causal=False),
              "L2 serves the K, V re-reads; the largest head dimension amortises the softmax best (76 % of "
              "the compute roof)"),
    Published("fa3-bf16-d256-causal", "FA3 forward, BF16, d = 256, causal", 642, "TFLOP/s",
              f"{FA3}, Fig. 5, panel head dim 256 with causal mask (bar label at 16k)", dict(kind="fa3", d=256, e=2, causal=True),
              "L2 serves the K, V re-reads; causal work per query block is uneven (not in the model)"),
    Published("fa3-fp8-d256", "FA3 forward, FP8, d = 256, not causal", 1171, "TFLOP/s",
              f"{FA3}, the FP8 forward-speed figure, panel head dim 256 without causal mask (bar label at 16k; "
              "'close to 1.2 PFLOPs/s', abstract)",
              dict(kind="fa3", d=256, e=1, causal=False),
              "L2 serves the K, V re-reads; FP8 halves the bytes and doubles the peak, and the exp and the "
              "in-kernel V transpose (§3.3) are not in the roofline"),
    Published("fa3-ablation", "FA3 forward, FP16, d = 128, not causal, seqlen 8448, batch x heads 64", 661,
              "TFLOP/s", f"{FA3}, Table 2 (the full kernel: 3.538 ms)",
              dict(kind="fa3", d=128, e=2, causal=False, N=8448, copies=64),
              "L2 serves the K, V re-reads; the ablation's own rows (582 without warp specialization, 570 without "
              "the 2-stage pipeline) show how much of the rest is scheduling"),
    Published("flashmla-mem", "FlashMLA dense decode, memory-bound, BF16 (b 128, h_q 16, s_q 1, s_k 16384)", 3000,
              "GB/s", f"{FLASHMLA} README.md:35 @9241ae3 ('up to'; sweep of tests/test_flash_mla.py:125-134 @c2067be)",
              dict(kind="mla", B=128, H=16, L_q=1, N_k=16384),
              "HBM roof at 3.35 TB/s; 3000 GB/s is 90 % of it, the usual ceiling of a streaming kernel"),
    Published("flashmla-compute", "FlashMLA dense decode, compute-bound, BF16 (b 128, h_q 128, s_q 2, s_k 16384)",
              660, "TFLOP/s",
              f"{FLASHMLA} README.md:35 @9241ae3; docs/20250422-new-kernel-deep-dive.md:3 (580 before it)",
              dict(kind="mla", B=128, H=128, L_q=2, N_k=16384),
              "MMA roof at the deep-dive's throttled 1.6 GHz (865 TFLOP/s); 660 is 76 % of it"),
    Published("gptfast-llama31-8b", "gpt-fast decode, Llama-3.1-8B, BF16, 1 x A100-80GB, batch 1", 93.89,
              "tokens/s", f"{GPTFAST} (prompt of 5 tokens, 100 generated: generate.py:276 default)",
              dict(kind="llm", config="llama-3.1-8b", gpu="A100-80GB", batch=1, context=55),
              "HBM roof at the 2.039 TB/s datasheet figure; the README's own column measures 1410.76 GB/s, and "
              "its GPUs are power-limited to 330 W"),
    Published("gptfast-llama31-70b-tp8", "gpt-fast decode, Llama-3.1-70B, BF16, 8 x A100-80GB (tensor parallel), "
              "batch 1", 58.78, "tokens/s", "pytorch-labs/gpt-fast README.md:124 @32971d3 (the tensor-parallel table)",
              dict(kind="llm", config="llama-3.1-70b", gpu="A100-80GB", batch=1, context=55, tp=8),
              "at tp 8 a GPU reads 2.2 GB a token (about 1 ms): the 160 all-reduces' latency and the kernel "
              "launches, which the model prices at zero, are then a large share of the step"),
    Published("gptfast-mixtral-tp2", "gpt-fast decode, Mixtral-8x7B, BF16, 2 x A100-80GB (tensor parallel), batch 1",
              96.67, "tokens/s", "pytorch-labs/gpt-fast README.md:27 @32971d3 (the Mixtral table)",
              dict(kind="llm", config="mixtral-8x7b", gpu="A100-80GB", batch=1, context=55, tp=2),
              "as above: the all-reduce latency and the kernel launches are not priced; the top-2 experts' "
              "weights are read at the datasheet bandwidth"),
)


# ----------------------------------------------------------------------------------------------- the models
def predict_fa3(s: dict) -> tuple[Fraction, str]:
    """Predicted TFLOP/s in the paper's convention, and how."""
    from symbolic import registry
    from symbolic.roofline import roofline

    d, e, causal = s["d"], s["e"], s["causal"]
    N = s.get("N", 16384)
    copies = s.get("copies", (16384 // N) * (2048 // d))
    model = registry.get("attention.fa3.fwd.causal" if causal else "attention.fa3.fwd")
    r = roofline(model, dict(N=N, N_k=N, d=d, e=e), hw="H100", dtype="bf16" if e == 2 else "fp8", copies=copies)
    paper_flops = Fraction(4 * N * N * d * copies, 2 if causal else 1)
    t_r = -(-N // int(model.evaluate(N=N, N_k=N, d=d, e=e)["B_r"]))
    compute_only = paper_flops / r.t_compute / 10**12
    how = (f"{model.name} x{copies}, H100 roofline: {r.bound} roof (K, V read T_r = {t_r} times at HBM speed); "
           f"the compute roof alone: {_num(compute_only)} TFLOP/s")
    return paper_flops / r.time / 10**12, how


def predict_mla(s: dict) -> tuple[Fraction, str]:
    """Predicted GB/s (h_q s_q < 64) or TFLOP/s as FlashMLA's benchmark counts them."""
    from symbolic import registry
    from tuning.mla_splits import flashmla_splits

    B, H, L_q, n = s["B"], s["H"], s["L_q"], s["N_k"]
    splits = flashmla_splits([n] * B, 132, H, L_q)
    S = max(splits) if len(set(splits)) == 1 else 1
    v = registry.get("decode.mla.time").evaluate(B=B, H=H, L_q=L_q, N_k=n, S=S)
    d, dv = 576, 512
    total = B * n
    if H * L_q < 64:
        moved = (total * d + B * L_q * H * d + B * L_q * H * dv) * 2            # test_flash_mla.py:109-111
        return Fraction(moved) / v["time"] / 10**9, f"decode.mla.time, S={S}, {_bound(v)}"
    flops = L_q * total * H * (d + dv) * 2                                     # test_flash_mla.py:108
    return Fraction(flops) / v["time"] / 10**12, f"decode.mla.time, S={S}, {_bound(v)}"


def _bound(v) -> str:
    return "HBM roof" if v["time"] == v["t_hbm"] else "MMA roof"


def predict_llm(s: dict):
    try:
        from tuning.llm import load_config, step
    except ImportError:
        return None, "tuning.llm is not on this branch"
    st = step(load_config(s["config"]), gpu=s["gpu"], phase="decode", batch=s["batch"], context=s["context"],
              tp=s.get("tp", 1))
    tps = st.totals["tokens_per_s"] if isinstance(st.totals, dict) else st.totals.tokens_per_s
    tp = f", tp={s['tp']}" if s.get("tp", 1) > 1 else ""
    return Fraction(tps), f"tuning.llm.step(context={s['context']}{tp}), {s['gpu']}, {_bound_llm(st)}"


def _bound_llm(st) -> str:
    """The share of the step's time the memory-bound operations take."""
    mem = sum(o.step_time_s for o in st.ops if o.bound == "memory")
    tot = sum(o.step_time_s for o in st.ops)
    return f"{100 * mem / tot:.0f} % of the time memory-bound" if tot else "no time"


PREDICTORS = {"fa3": predict_fa3, "mla": predict_mla, "llm": predict_llm}


def predict(row: Published):
    return PREDICTORS[row.settings["kind"]](row.settings)


def rows() -> list[dict]:
    out = []
    for r in ROWS:
        pred, how = predict(r)
        err = None if pred is None else (Fraction(pred) - Fraction(r.figure).limit_denominator(1000)) / \
            Fraction(r.figure).limit_denominator(1000)
        out.append({"row": r, "predicted": pred, "how": how, "error": err})
    return out


def _num(x) -> str:
    if x is None:
        return "—"
    x = float(x)
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.1f}"


def table() -> str:
    lines = ["| published figure | settings | published | predicted | error | model | source | why the gap |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for x in rows():
        r = x["row"]
        settings = FA3_SETUP if r.settings["kind"] == "fa3" and "N" not in r.settings else \
            ", ".join(f"{k}={v}" for k, v in r.settings.items() if k != "kind")
        err = "—" if x["error"] is None else f"{float(x['error']) * 100:+.0f} %"
        lines.append(f"| {r.what} | {settings} | {_num(r.figure)} {r.unit} | {_num(x['predicted'])} {r.unit} | "
                     f"{err} | {x['how']} | {r.citation} | {r.why} |")
    return "\n".join(lines) + "\n"


def write(doc: Path = DOC) -> None:
    text = doc.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"published: {doc} has no {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + START + "\n" + table() + END + tail, encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="published", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="regenerate the table in docs/llm.md between its markers")
    args = ap.parse_args(argv)
    if args.write:
        write()
    else:
        sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
