"""Split-K, stream-K and row-kernel executors: count-only mode against real mode at realistic shapes.

For each family (``gemm.splitk``, ``gemm.splitk.serial``, ``gemm.streamk``, and the six row kernels) the
executor runs at one shape of a Llama-class model in real mode (float64 data, every product and elementwise
operation computed) and in count-only mode (the same schedule on shape-only tiles), best of ``--repeat``
runs each; the counts of the two modes must be equal.  Target (issue 20): count-only at least 20x faster
than real for every family.  The exit status is 1 when a family misses it or the counts differ.

    python bench/bench_gemm_variants.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from numeric import gemm_splitk as gk  # noqa: E402
from numeric import rows  # noqa: E402
from timing import best  # noqa: E402  (bench/ is on sys.path when a script runs)

TARGET = 20.0

#: (family, shape as text, runner taking real=) - realistic shapes, sized to a few hundred MB of real data
CASES = (
    ("gemm.splitk", "M=512 N=4096 K=4096, 128x128x64 tiles, S_k=4, P=132",
     lambda real: gk.run_splitk_parallel(512, 4096, 4096, 128, 128, 64, 4, 132, real=real)),
    ("gemm.splitk.serial", "M=512 N=4096 K=4096, 128x128x64 tiles, S_k=4, P=132",
     lambda real: gk.run_splitk_serial(512, 4096, 4096, 128, 128, 64, 4, 132, real=real)),
    ("gemm.streamk", "M=N=3072 K=4096, 128x128x64 tiles, P_s=132",
     lambda real: gk.run_streamk(3072, 3072, 4096, 128, 128, 64, 132, real=real)),
    ("softmax.naive", "M=512 N=16384 (logits), B_R=16",
     lambda real: rows.softmax_naive(512, 16384, 16, real=real)),
    ("softmax.fused", "M=512 N=16384, B_R=16",
     lambda real: rows.softmax_fused(512, 16384, 16, real=real, unfused=False)),
    ("norm.rms", "M=4096 N=4096 (Llama-3-8B hidden), B_R=64",
     lambda real: rows.rms_norm(4096, 4096, 64, real=real)),
    ("norm.rms_residual", "M=4096 N=4096, B_R=64",
     lambda real: rows.fused_add_rms_norm(4096, 4096, 64, real=real, unfused=False)),
    ("act.swiglu", "M=512 N=14336 (Llama-3-8B FFN), B_R=32",
     lambda real: rows.silu_and_mul(512, 14336, 32, real=real, unfused=False)),
    ("rope.rotate_half", "T=2048 H=32 H_kv=8 d=128, 64 tokens a program",
     lambda real: rows.rotary_embedding(2048, 32, 8, 128, 64, real=real)),
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"{'family':20} {'real':>10} {'count-only':>12} {'ratio':>8}  shape")
    ok = True
    for family, shape, run in CASES:
        t_real = best(lambda: run(True), args.repeat)
        t_count = best(lambda: run(False), args.repeat)
        same = run(True).counts == run(False).counts
        ratio = t_real / t_count
        ok &= same and ratio >= TARGET
        print(f"{family:20} {t_real * 1e3:8.1f}ms {t_count * 1e3:10.2f}ms {ratio:7.0f}x  {shape}"
              f"{'' if same else '  COUNTS DIFFER'}")
    print(f"target: count-only >= {TARGET:.0f}x faster than real for every family: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
