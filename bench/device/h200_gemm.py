"""The GEMM time model (:mod:`tuning.schedule`) against a real GPU: the project's own Triton kernel, timed.

Runs on a machine with a CUDA GPU, PyTorch and Triton (written for the H200 this workplace lends; see
``docs/measured-h200.md``).  For each shape of :data:`SHAPES` it draws a seeded sample of launchable
configs of the schedule space (:func:`plan`: the model's best few, the model's pick at every ``G_M``, and
one config drawn at random from each of equal-count strata of the model's ranking), then for each:

1. launches :func:`tb_matmul_kernel` (a tiled fp16 GEMM, fp32 accumulation, masked loads on every
   ragged edge, the ``GROUP_M`` launch order of :mod:`symbolic.models.gemm_l2`) with ``BLOCK_M=B_M,
   BLOCK_N=B_N, BLOCK_K=B_K, num_warps=warps, num_stages=s, GROUP_M=G_M`` on fresh random inputs and
   an output poisoned with NaN, and checks ``||C - ref|| / ||ref||`` against an fp32 reference
   (``torch.matmul`` on fp32 copies, TF32 off): every element written, error under :data:`TOLERANCE`;
2. times it with CUDA events: a few warm-up launches, then :func:`bench` repeats, each after a 256 MB
   write that evicts the 50/60 MB L2 (so every launch starts cold, as the model counts HBM reads from
   an empty cache), and keeps the median (and the 20th/80th percentiles).

``torch.matmul`` (cuBLAS) is timed the same way per shape, at the start and again at the end (its
spread is the run's noise), and so is the model's pick.  Triton compiles each config on first launch
(about a second); :func:`precompile` does that in parallel worker processes that fill Triton's on-disk
cache first, so the timed process only loads the binaries.  Optionally (``--ncu``) Nsight Compute
reads ``dram__bytes_read.sum`` of a few launches (:data:`NCU_PICKS`) for ``bench/device/compare.py``
to set beside the exact LRU count of HBM reads (model ``gemm.l2.lru``).

Everything goes to ``OUT/h200_gemm.json``, rewritten after every measurement (a run cut short keeps what
it measured); configs that fail to compile or launch, or compute a wrong result, are logged there and skipped.

    # on any machine with the project (no GPU): the sample, with the model's predictions
    python bench/device/h200_gemm.py --plan-out plan.json
    # on the GPU machine (the plan is recomputed when --plan is not given; that imports the project)
    PYTHONUNBUFFERED=1 PYTHONPATH=. python3 bench/device/h200_gemm.py --plan plan.json --out $OUT --ncu

The sample is seeded (:data:`SEED`), so ``--plan-out`` reproduces the plan of a recorded run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the shapes (M, N, K): two large squares-ish, two ragged (sizes no tile divides), two skinny decode-like
SHAPES = ((4096, 4096, 4096), (8192, 8192, 4096), (1000, 1000, 1000), (3000, 5000, 2000),
          (16, 8192, 8192), (64, 14336, 4096))
#: configs timed per shape: the model's best :data:`TOP` (distinct but for G_M), its pick at each G_M, and one
#: from each of the equal-count strata of the rest
PER_SHAPE = 30
TOP = 4
SEED = 20261204
#: ||C - ref|| / ||ref|| above this is a wrong result (fp16 output rounding alone is ~3e-4)
TOLERANCE = 1e-2
#: (shape index, which): the launches Nsight Compute reads DRAM bytes of; "pick" is the model's pick at G_M=1,
#: "pick_g8" the same tile at G_M=8
NCU_PICKS = ((1, "pick"), (1, "pick_g8"), (0, "pick"), (0, "pick_g8"))
KNOBS = ("B_M", "B_N", "B_K", "warps", "s", "G_M")
KERNEL_NAME = "tb_matmul_kernel"


# ------------------------------------------------------------------------------------------- the plan (CPU)
def plan(shapes=SHAPES, per_shape=PER_SHAPE, top=TOP, seed=SEED, hw="H200") -> dict:
    """The configs to time, per shape, with the model's predicted seconds.  Needs the project (numpy), not a GPU."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from tuning.schedule import landscape

    out = {"seed": seed, "hw": hw, "per_shape": per_shape, "top": top, "shapes": []}
    for i, (M, N, K) in enumerate(shapes):
        land = landscape(M, N, K, hw=hw)
        order = np.argsort(land.times, kind="stable")
        cfgs = [land.configs[j] for j in order]
        pick = cfgs[0]
        chosen, why = [], {}

        def add(c, reason):
            if c not in why:
                chosen.append(c)
                why[c] = reason

        tiles = set()
        for c in cfgs:                      # the model's best `top` distinct schedules (G_M aside)
            if len(tiles) == top:
                break
            if c.as_tuple()[:5] not in tiles:
                tiles.add(c.as_tuple()[:5])
                add(c, "model top")
        for g in (1, 4, 8):
            d = pick.as_dict()
            d["G_M"] = g
            add(type(pick)(**d), "model pick, G_M varied")
        rest = [c for c in cfgs if c not in why]
        strata = per_shape - len(chosen)
        rng = random.Random(seed + i)
        bounds = np.linspace(0, len(rest), strata + 1).round().astype(int)
        for a, b in zip(bounds[:-1], bounds[1:]):
            if b > a:
                add(rest[rng.randrange(a, b)], "stratum")
        out["shapes"].append({
            "M": M, "N": N, "K": K, "launchable": len(cfgs),
            "pick": list(pick.as_tuple()),
            "configs": [{"config": list(c.as_tuple()), "why": why[c], "model_s": land.time_of(c),
                         "model_rank": int(cfgs.index(c)) + 1} for c in chosen],
        })
    return out


# ------------------------------------------------------------------------------------------- the kernel
def _define_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def tb_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr):
        # the GROUP_M launch order (symbolic/models/gemm_l2.py's docstring, Triton's matmul tutorial)
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m

        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        m_ok = offs_m[:, None] < M
        n_ok = offs_n[None, :] < N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & n_ok, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = acc.to(tl.float16)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, c, mask=m_ok & n_ok)

    return tb_matmul_kernel


_KERNEL = None


def launch(a, b, c, cfg):
    """One launch of the kernel with config ``cfg`` = (B_M, B_N, B_K, warps, s, G_M); returns Triton's compiled kernel."""
    global _KERNEL
    import triton
    if _KERNEL is None:
        _KERNEL = _define_kernel()
    bm, bn, bk, warps, s, gm = cfg
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    return _KERNEL[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                         num_warps=warps, num_stages=s)


def kernel_facts(compiled) -> dict:
    """Registers, spills and shared memory of a compiled kernel, where this Triton exposes them."""
    facts = {}
    for key, get in (("n_regs", lambda k: k.n_regs), ("n_spills", lambda k: k.n_spills),
                     ("shared_bytes", lambda k: k.metadata.shared)):
        try:
            facts[key] = int(get(compiled))
        except Exception:           # noqa: BLE001 - an attribute this Triton lacks is left out
            pass
    return facts


# ------------------------------------------------------------------------------------------- timing
_FLUSH = None


def bench(fn, torch, target_ms=40.0, min_reps=10, max_reps=200) -> dict:
    """Median of CUDA-event times of ``fn``, each launch after a 256 MB write that evicts the L2."""
    global _FLUSH
    if _FLUSH is None:
        _FLUSH = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(3):
        fn()
    e.record()
    torch.cuda.synchronize()
    est_ms = max(s.elapsed_time(e) / 3, 1e-3)
    reps = int(min(max_reps, max(min_reps, target_ms / est_ms)))
    for _ in range(min(reps, 5)):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        _FLUSH.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) * 1e-3 for a, b in zip(starts, ends))

    def q(p):
        return ts[min(len(ts) - 1, int(round(p * (len(ts) - 1))))]

    return {"median_s": q(0.5), "p20_s": q(0.2), "p80_s": q(0.8), "reps": reps}


# ------------------------------------------------------------------------------------------- the run
def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


class Record:
    """The run's JSON, rewritten (atomically) after every change."""

    def __init__(self, path: Path, data: dict):
        self.path, self.data = path, data
        self.save()

    def save(self):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(_json_safe(self.data), indent=1))
        os.replace(tmp, self.path)


def nvidia_smi() -> dict:
    q = "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20)
        return dict(zip(q.split(","), (v.strip() for v in out.stdout.strip().splitlines()[0].split(","))))
    except Exception as exc:        # noqa: BLE001 - recorded, not fatal
        return {"error": repr(exc)}


def make_inputs(torch, M, N, K, seed):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    a = torch.randn((M, K), generator=g, device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), generator=g, device="cuda", dtype=torch.float16)
    return a, b


def precompile(plan_path: Path, items, workers: int, timeout_s: float, log) -> dict:
    """Compile ``items`` (shape index, config) in ``workers`` processes (Triton's disk cache), at most ``timeout_s``."""
    t0 = time.time()
    procs = []
    for w in range(workers):
        share = items[w::workers]
        if not share:
            continue
        cmd = [sys.executable, str(Path(__file__).resolve()), "--compile-worker", json.dumps(share),
               "--plan", str(plan_path)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs, killed = [], 0
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, timeout_s - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            killed += 1
        outs.append(out)
    lines = [ln for o in outs for ln in (o or "").splitlines()]
    ok = sum(ln.startswith("compiled ") for ln in lines)
    failed = [ln for ln in lines if ln.startswith("failed ")]
    log(f"precompile: {ok} compiled, {len(failed)} failed, {killed} workers cut off, {time.time() - t0:.1f} s")
    return {"workers": len(procs), "compiled": ok, "failed": failed, "killed": killed, "wall_s": time.time() - t0}


def compile_worker(plan_data: dict, share) -> None:
    import torch
    torch.manual_seed(0)
    cache = {}
    for si, cfg in share:
        sh = plan_data["shapes"][si]
        M, N, K = sh["M"], sh["N"], sh["K"]
        try:
            if si not in cache:
                a, b = make_inputs(torch, M, N, K, 1)
                cache[si] = (a, b, torch.empty((M, N), device="cuda", dtype=torch.float16))
            launch(*cache[si], tuple(cfg))
            torch.cuda.synchronize()
            print(f"compiled {si} {cfg}", flush=True)
        except Exception as exc:    # noqa: BLE001 - the timed process meets and records it again
            print(f"failed {si} {cfg} {type(exc).__name__}: {str(exc)[:200]}", flush=True)


def ncu_launch(plan_data: dict, picks) -> None:
    """Under Nsight Compute: one launch of each pick, in order (the kernel name filter selects them)."""
    import torch
    for si, cfg in picks:
        sh = plan_data["shapes"][si]
        a, b = make_inputs(torch, sh["M"], sh["N"], sh["K"], 2)
        c = torch.empty((sh["M"], sh["N"]), device="cuda", dtype=torch.float16)
        torch.cuda.synchronize()
        launch(a, b, c, tuple(cfg))
        torch.cuda.synchronize()
        del a, b, c


def ncu_picks(plan_data: dict) -> list:
    picks = []
    for si, which in NCU_PICKS:
        if si >= len(plan_data["shapes"]):
            continue
        cfg = list(plan_data["shapes"][si]["pick"])
        if which == "pick_g8":
            cfg[5] = 8
        picks.append([si, cfg])
    return picks


def run_ncu(plan_path: Path, plan_data: dict, out_dir: Path, timeout_s: float, log) -> dict:
    ncu = shutil.which("ncu")
    if ncu is None:
        for cand in sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu")) + [Path("/usr/local/cuda/bin/ncu")]:
            if cand.exists():
                ncu = str(cand)
    if ncu is None:
        return {"error": "ncu not found"}
    picks = ncu_picks(plan_data)
    # --cache-control all (the default) flushes the caches before each profiled launch: a cold L2, as timed
    opts = ["--clock-control", "none", "--cache-control", "all", "--print-units", "base", "--csv",
            "--metrics", "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum",
            "--kernel-name", f"regex:{KERNEL_NAME}", "--launch-count", str(len(picks))]
    prog = [sys.executable, str(Path(__file__).resolve()), "--ncu-launch", json.dumps(picks), "--plan", str(plan_path)]
    t0 = time.time()
    try:
        cmd = [ncu, *opts, *prog]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        rows = parse_ncu_csv(res.stdout)
        if not rows and "print-units" in res.stderr + res.stdout:     # an ncu without --print-units
            opts = [o for o in opts if o not in ("--print-units", "base")]
            cmd = [ncu, *opts, *prog]
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=max(1.0, timeout_s - (time.time() - t0)))
            rows = parse_ncu_csv(res.stdout)
        (out_dir / "ncu.csv").write_text(res.stdout)
        (out_dir / "ncu.stderr.txt").write_text(res.stderr[-20000:])
        log(f"ncu: rc {res.returncode}, {len(rows)} metric rows, {time.time() - t0:.1f} s")
        return {"picks": picks, "rc": res.returncode, "rows": rows, "wall_s": time.time() - t0,
                "command": " ".join([ncu, *opts])}
    except Exception as exc:        # noqa: BLE001 - optional step
        return {"picks": picks, "error": f"{type(exc).__name__}: {exc}", "wall_s": time.time() - t0}


def parse_ncu_csv(text: str) -> list:
    """``[{"id", "kernel", "grid", "metric", "unit", "value"}]`` from ``ncu --csv`` output (other lines skipped)."""
    import csv
    import io
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            rows.append({"id": int(r["ID"]), "kernel": r.get("Kernel Name", ""), "grid": r.get("Grid Size", ""),
                         "block": r.get("Block Size", ""), "metric": r["Metric Name"], "unit": r.get("Metric Unit", ""),
                         "value": float(r["Metric Value"].replace(",", ""))})
        except (KeyError, ValueError):
            continue
    return rows


def main_run(args) -> int:
    t_start = time.time()
    deadline = t_start + args.budget_s
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    def log(msg):
        print(f"[{time.time() - t_start:6.1f}s] {msg}", flush=True)

    if args.plan:
        plan_path = Path(args.plan)
        plan_data = json.loads(plan_path.read_text())
    else:
        plan_data = plan()
        plan_path = out_dir / "plan.json"
        plan_path.write_text(json.dumps(plan_data))
    import torch
    import triton
    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    rec = Record(out_dir / "h200_gemm.json", {
        "what": "tilebound GEMM time model vs the project's Triton kernel (bench/device/h200_gemm.py)",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "env": {"gpu": props.name, "sms": props.multi_processor_count,
                "l2_bytes": getattr(props, "L2_cache_size", None), "total_memory": props.total_memory,
                "capability": list(torch.cuda.get_device_capability(0)), "torch": torch.__version__,
                "cuda": torch.version.cuda, "triton": triton.__version__, "python": platform.python_version(),
                "nvidia_smi_start": nvidia_smi()},
        "timing": {"method": "CUDA events around each launch, each after a 256 MB write evicting the L2; median",
                   "target_ms": args.target_ms},
        "tolerance": TOLERANCE, "plan": {k: v for k, v in plan_data.items() if k != "shapes"},
        "shapes": [], "failures": [], "complete": False})
    log(f"{props.name}, torch {torch.__version__}, triton {triton.__version__}")

    # inputs, fp32 references, cuBLAS (first pass)
    tensors = []
    for si, sh in enumerate(plan_data["shapes"]):
        M, N, K = sh["M"], sh["N"], sh["K"]
        a, b = make_inputs(torch, M, N, K, SEED + si)
        ref = torch.matmul(a.float(), b.float())
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        tensors.append((a, b, c, ref))
        entry = {"M": M, "N": N, "K": K, "launchable": sh["launchable"], "pick": sh["pick"], "configs": []}
        try:
            cb = torch.empty((M, N), device="cuda", dtype=torch.float16)
            t = bench(lambda: torch.matmul(a, b, out=cb), torch, args.target_ms)
            err = float((cb.float() - ref).norm() / ref.norm())
            entry["cublas"] = {**t, "rel_err": err}
            log(f"{M}x{N}x{K} cuBLAS {t['median_s'] * 1e6:.1f} us")
        except Exception as exc:    # noqa: BLE001
            rec.data["failures"].append({"shape": [M, N, K], "what": "cublas", "error": repr(exc)[:500]})
        rec.data["shapes"].append(entry)
    rec.save()

    items = [[si, c["config"]] for si, sh in enumerate(plan_data["shapes"]) for c in sh["configs"]]
    if args.workers > 0:
        rec.data["precompile"] = precompile(plan_path, items, args.workers,
                                            min(args.compile_timeout_s, deadline - time.time() - 60), log)
        rec.save()

    # round robin over the shapes, so that a run cut short has some of every shape
    order = []
    longest = max(len(sh["configs"]) for sh in plan_data["shapes"])
    for j in range(longest):
        for si, sh in enumerate(plan_data["shapes"]):
            if j < len(sh["configs"]):
                order.append((si, sh["configs"][j]))
    reserve = 45 if args.ncu else 10
    for n, (si, pc) in enumerate(order):
        sh = plan_data["shapes"][si]
        cfg = tuple(pc["config"])
        if time.time() > deadline - reserve:
            rec.data["failures"].append({"shape": [sh["M"], sh["N"], sh["K"]], "config": list(cfg),
                                         "what": "skipped", "error": "out of time"})
            continue
        a, b, c, ref = tensors[si]
        row = {"config": list(cfg), "why": pc["why"], "model_s_plan": pc["model_s"], "model_rank": pc["model_rank"]}
        try:
            t0 = time.time()
            c.fill_(float("nan"))
            compiled = launch(a, b, c, cfg)
            torch.cuda.synchronize()
            row["first_launch_s"] = time.time() - t0
            row.update(kernel_facts(compiled))
            written = bool(torch.isfinite(c).all())
            err = float((c.float() - ref).norm() / ref.norm()) if written else float("nan")
            row["rel_err"] = err
            if not written or not err < TOLERANCE:
                raise RuntimeError(f"wrong result: all written {written}, rel err {err}")
            row.update(bench(lambda: launch(a, b, c, cfg), torch, args.target_ms))
            rec.data["shapes"][si]["configs"].append(row)
            log(f"{n + 1}/{len(order)} {sh['M']}x{sh['N']}x{sh['K']} {cfg} {row['median_s'] * 1e6:9.1f} us "
                f"(model {pc['model_s'] * 1e6:9.1f} us) regs {row.get('n_regs')} spills {row.get('n_spills')}")
        except Exception as exc:    # noqa: BLE001 - logged and skipped
            rec.data["failures"].append({"shape": [sh["M"], sh["N"], sh["K"]], "config": list(cfg),
                                         "what": type(exc).__name__, "error": str(exc)[:500]})
            log(f"{n + 1}/{len(order)} {sh['M']}x{sh['N']}x{sh['K']} {cfg} FAILED {type(exc).__name__}: "
                f"{str(exc)[:120]}")
            try:
                torch.cuda.synchronize()
            except Exception as sync_exc:   # noqa: BLE001 - a broken context: the rest would fail too
                rec.data["failures"].append({"what": "context lost", "error": repr(sync_exc)[:500]})
                rec.save()
                raise
        rec.save()

    # second pass: cuBLAS and the model's pick again (the run's own spread)
    for si, sh in enumerate(plan_data["shapes"]):
        if time.time() > deadline - reserve:
            break
        a, b, c, ref = tensors[si]
        try:
            cb = torch.empty_like(c)
            rec.data["shapes"][si]["cublas_again"] = bench(lambda: torch.matmul(a, b, out=cb), torch, args.target_ms)
            pick = tuple(sh["pick"])
            rec.data["shapes"][si]["pick_again"] = bench(lambda: launch(a, b, c, pick), torch, args.target_ms)
        except Exception as exc:    # noqa: BLE001
            rec.data["failures"].append({"shape": [sh["M"], sh["N"], sh["K"]], "what": "second pass",
                                         "error": repr(exc)[:500]})
    rec.data["env"]["nvidia_smi_end"] = nvidia_smi()
    rec.save()
    del tensors
    torch.cuda.empty_cache()

    if args.ncu:
        left = deadline - time.time() - 5
        if left > 30:
            rec.data["ncu"] = run_ncu(plan_path, plan_data, out_dir, left, log)
        else:
            rec.data["ncu"] = {"error": f"skipped: {left:.0f} s left"}
    rec.data["complete"] = True
    rec.data["wall_s"] = time.time() - t_start
    rec.save()
    log(f"done: {sum(len(s['configs']) for s in rec.data['shapes'])} configs timed, "
        f"{len(rec.data['failures'])} failures")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--plan-out", help="write the sample (with the model's predictions) to this file and stop (no GPU)")
    p.add_argument("--plan", help="a plan written by --plan-out (default: computed here, importing the project)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for h200_gemm.json (default $OUT)")
    p.add_argument("--workers", type=int, default=12, help="parallel Triton compile processes (0: none)")
    p.add_argument("--compile-timeout-s", type=float, default=120.0)
    p.add_argument("--budget-s", type=float, default=270.0, help="stop timing configs after this many seconds")
    p.add_argument("--target-ms", type=float, default=40.0, help="timed launches per config: about this many ms")
    p.add_argument("--ncu", action="store_true", help="read DRAM bytes of NCU_PICKS with Nsight Compute at the end")
    p.add_argument("--compile-worker", help=argparse.SUPPRESS)
    p.add_argument("--ncu-launch", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.plan_out:
        Path(args.plan_out).write_text(json.dumps(plan(), indent=1))
        return 0
    if args.compile_worker or args.ncu_launch:
        plan_data = json.loads(Path(args.plan).read_text())
        if args.compile_worker:
            compile_worker(plan_data, json.loads(args.compile_worker))
        else:
            ncu_launch(plan_data, json.loads(args.ncu_launch))
        return 0
    try:
        return main_run(args)
    except Exception:               # noqa: BLE001 - whatever was recorded stays in OUT
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
