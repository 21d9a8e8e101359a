"""The GEMM time model against a run of ``bench/device/h200_gemm.py``: rank correlation, the model's pick, ratios.

Runs on the CPU (no GPU): loads the run's JSON (default: the committed H200 run, ``h200-2026-12-04.json``
beside this file), prices every measured config with the time model as it is now
(:func:`tuning.schedule.times_for_shape`, ``hw="H200"``) and prints, per shape:

* ``spearman``: the rank correlation of model and measured times over the measured configs (Pearson's
  correlation of the ranks, ties given their average rank: the model ties a tile's ``G_M`` variants);
* the model's pick (its fastest config over the whole space) and its rank among the measured configs
  (1 = fastest measured), and ``best / pick``: the best measured time over the pick's measured time (1 when
  the model picked the fastest);
* ``measured / model``: the median of the per-config ratios, and their 10th and 90th percentiles;
* cuBLAS (``torch.matmul``) beside the best measured config, with both of its timings (start and end of the
  run: the run's own spread);

then a diagnostic table (configs whose compiled kernel spills registers, and the rank correlation without
them), and, where the run has Nsight Compute's ``dram__bytes_read.sum``, the DRAM bytes read beside the exact
LRU count of HBM reads of model ``gemm.l2.lru`` (x 2 bytes) at the model's L2 and at the L2 the device reports,
the no-reuse count (``hbm_reads_no_reuse``) and the compulsory ``M K + K N``.

    python bench/device/compare.py [run.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from symbolic import registry  # noqa: E402
from tuning.schedule import (GemmConfig, blocks_per_sm, config_table, landscape, launchable,  # noqa: E402
                             time_model_constants, times_for_shape)

#: the committed run
DEFAULT_RUN = Path(__file__).with_name("h200-2026-12-04.json")
HW = "H200"
#: bytes of one FP16 element (the run's operands)
FP16 = 2
#: ncu's byte units (``--print-units base`` gives ``byte``; the default scales them)
_BYTE_UNITS = {"byte": 1, "kbyte": 10**3, "mbyte": 10**6, "gbyte": 10**9, "tbyte": 10**12}


def load(path=DEFAULT_RUN) -> dict:
    return json.loads(Path(path).read_text())


def ranks(x) -> np.ndarray:
    """Ranks 1..n of ``x`` (ascending); tied values share the average of the ranks they span."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x), dtype=float)
    r[order] = np.arange(1, len(x) + 1, dtype=float)
    for v in np.unique(x):
        tied = x == v
        if tied.sum() > 1:
            r[tied] = r[tied].mean()
    return r


def spearman(x, y) -> float:
    """Spearman's rank correlation: Pearson's correlation of the :func:`ranks` of ``x`` and ``y``; nan if either
    is constant."""
    rx, ry = ranks(x), ranks(y)
    if len(rx) != len(ry):
        raise ValueError("x and y must have the same length")
    dx, dy = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((dx * dx).sum() * (dy * dy).sum()))
    return float((dx * dy).sum() / den) if den > 0 else float("nan")


def measured_configs(entry: dict) -> list[GemmConfig]:
    return [GemmConfig(*c["config"]) for c in entry["configs"]]


def model_times(entry: dict) -> np.ndarray:
    """The time model's seconds for each measured config of one shape entry."""
    return times_for_shape(entry["M"], entry["N"], entry["K"], measured_configs(entry), hw=HW)


def shape_summary(entry: dict) -> dict:
    """The per-shape figures (see the module docstring) of one shape entry of the run."""
    M, N, K = entry["M"], entry["N"], entry["K"]
    cfgs = measured_configs(entry)
    meas = np.array([c["median_s"] for c in entry["configs"]], dtype=float)
    model = model_times(entry)
    pick = landscape(M, N, K, hw=HW).best(1)[0][0]
    order = np.argsort(meas, kind="stable")
    best = cfgs[order[0]]
    out = {"shape": (M, N, K), "n": len(cfgs), "spearman": spearman(model, meas), "pick": pick,
           "best": best, "best_s": float(meas[order[0]]), "pick_rank": None, "pick_s": None, "best_over_pick": None}
    if pick in cfgs:
        i = cfgs.index(pick)
        out["pick_s"] = float(meas[i])
        out["pick_rank"] = int((meas < meas[i]).sum()) + 1
        out["best_over_pick"] = float(meas[order[0]] / meas[i])
    ratio = meas / model
    out["ratio_median"], out["ratio_p10"], out["ratio_p90"] = (float(np.percentile(ratio, q)) for q in (50, 10, 90))
    out["model_changed"] = any(abs(c["model_s_plan"] - m) > 1e-9 * m for c, m in zip(entry["configs"], model))
    out["cublas"] = [entry[k]["median_s"] for k in ("cublas", "cublas_again") if k in entry]
    spill = np.array([c.get("n_spills", 0) > 0 for c in entry["configs"]])
    out["spilling"] = int(spill.sum())
    out["spearman_no_spill"] = spearman(model[~spill], meas[~spill]) if (~spill).sum() > 2 else float("nan")
    return out


def ncu_bytes(rows, launch_id: int, metric: str):
    for r in rows:
        if r["id"] == launch_id and r["metric"] == metric:
            return r["value"] * _BYTE_UNITS.get(r["unit"].lower(), 1) if metric.startswith("dram") else r["value"]
    return None


def model_waves(config: GemmConfig) -> int:
    """``P``, the programs of one wave in the time model: SMs x its co-resident blocks per SM."""
    k = time_model_constants(HW)
    return int(blocks_per_sm(config_table([config]), k)[0]) * k.hw.sms


def ncu_summary(data: dict) -> list[dict]:
    """One row per Nsight Compute launch: measured DRAM bytes read beside the LRU, no-reuse and compulsory counts."""
    ncu = data.get("ncu") or {}
    rows = ncu.get("rows") or []
    if not rows:
        return []
    lru = registry.get("gemm.l2.lru")
    cap_model = time_model_constants(HW).l2_bytes // FP16
    cap_device = (data["env"].get("l2_bytes") or 0) // FP16
    out = []
    for launch_id, (si, cfg) in enumerate(ncu["picks"]):
        M, N, K = (data["shapes"][si][x] for x in ("M", "N", "K"))
        c = GemmConfig(*cfg)
        P = model_waves(c)
        point = dict(M=M, N=N, K=K, B_M=c.B_M, B_N=c.B_N, B_K=c.B_K, G_M=c.G_M, P=P)
        read = ncu_bytes(rows, launch_id, "dram__bytes_read.sum")
        grid = next((r["grid"] for r in rows if r["id"] == launch_id), "")
        row = {"shape": (M, N, K), "config": c, "P": P, "grid": grid,
               "measured": read,
               "lru_model_l2": FP16 * lru.evaluate("hbm_reads_lru", **point, capacity=cap_model),
               "lru_device_l2": (FP16 * lru.evaluate("hbm_reads_lru", **point, capacity=cap_device)
                                 if cap_device else None),
               "no_reuse": FP16 * lru.evaluate("hbm_reads_no_reuse", **point, capacity=cap_model),
               "compulsory": FP16 * (M * K + K * N),
               "kernel_s": (ncu_bytes(rows, launch_id, "gpu__time_duration.sum") or float("nan")) * 1e-9}
        out.append(row)
    return out


def _us(s):
    return "-" if s is None else f"{s * 1e6:,.1f}"


def _cfg(c: GemmConfig) -> str:
    return "x".join(map(str, c.as_tuple()[:3])) + f" w{c.warps} s{c.s} g{c.G_M}"


def report(data: dict) -> str:
    """The tables, as text."""
    env = data["env"]
    lines = [f"{env['gpu']}, torch {env['torch']}, triton {env['triton']}, CUDA {env['cuda']}; run {data['date']}; "
             f"model hw={HW}",
             "configs: B_MxB_NxB_K, w = warps, s = num_stages, g = GROUP_M; times in us (median of the run's "
             "repeats)", ""]
    sums = [shape_summary(e) for e in data["shapes"]]
    head = ["shape MxNxK", "n", "spearman", "model pick", "pick rank", "pick us", "best measured", "best us",
            "best/pick", "meas/model median", "p10", "p90"]
    body = [["x".join(map(str, s["shape"])), s["n"], f"{s['spearman']:.2f}", _cfg(s["pick"]),
             "-" if s["pick_rank"] is None else f"{s['pick_rank']}/{s['n']}", _us(s["pick_s"]), _cfg(s["best"]),
             _us(s["best_s"]), "-" if s["best_over_pick"] is None else f"{s['best_over_pick']:.2f}",
             f"{s['ratio_median']:.2f}", f"{s['ratio_p10']:.2f}", f"{s['ratio_p90']:.2f}"] for s in sums]
    lines += ["Time model vs measured (per shape)", tabulate(body, head, tablefmt="github"), ""]
    head = ["shape MxNxK", "cuBLAS us (start, end)", "best measured / cuBLAS", "configs spilling",
            "spearman without them"]
    body = [["x".join(map(str, s["shape"])), ", ".join(_us(t) for t in s["cublas"]),
             f"{s['best_s'] / s['cublas'][0]:.2f}" if s["cublas"] else "-", f"{s['spilling']}/{s['n']}",
             f"{s['spearman_no_spill']:.2f}"] for s in sums]
    lines += ["Reference and diagnostics", tabulate(body, head, tablefmt="github"), ""]
    if any(s["model_changed"] for s in sums):
        lines += ["NOTE: the time model's predictions differ from those recorded in the run (the model changed "
                  "since)", ""]
    nc = ncu_summary(data)
    if nc:
        head = ["shape MxNxK", "config", "P", "ncu DRAM read MB", "LRU (model L2) MB", "LRU (device L2) MB",
                "no-reuse MB", "compulsory MB", "ncu/LRU", "ncu/no-reuse", "kernel us (ncu)"]
        body = [["x".join(map(str, r["shape"])), _cfg(r["config"]), r["P"], f"{r['measured'] / 1e6:,.1f}",
                 f"{r['lru_model_l2'] / 1e6:,.1f}",
                 "-" if r["lru_device_l2"] is None else f"{r['lru_device_l2'] / 1e6:,.1f}",
                 f"{r['no_reuse'] / 1e6:,.1f}", f"{r['compulsory'] / 1e6:,.1f}",
                 f"{r['measured'] / r['lru_model_l2']:.3f}", f"{r['measured'] / r['no_reuse']:.3f}",
                 _us(r["kernel_s"])] for r in nc]
        cap_model = time_model_constants(HW).l2_bytes
        lines += [f"HBM reads: Nsight Compute dram__bytes_read.sum vs model gemm.l2.lru x {FP16} B "
                  f"(model L2 {cap_model / 1e6:g} MB, device-reported L2 {env.get('l2_bytes', 0) / 2**20:g} MiB; "
                  f"P = SMs x the model's blocks per SM)", tabulate(body, head, tablefmt="github"), ""]
    fails = data.get("failures") or []
    lines.append(f"failures in the run: {len(fails)}")
    return "\n".join(lines)


def check_configs(data: dict) -> list[str]:
    """Problems with the run's configs: any not launchable on the model's H200, or with a non-finite prediction."""
    problems = []
    hw = time_model_constants(HW).hw
    for e in data["shapes"]:
        cfgs = measured_configs(e)
        ok = launchable(config_table(cfgs), hw)
        model = model_times(e)
        for c, good, t in zip(cfgs, ok, model):
            if not good:
                problems.append(f"{e['M']}x{e['N']}x{e['K']} {c}: not launchable")
            elif not math.isfinite(t):
                problems.append(f"{e['M']}x{e['N']}x{e['K']} {c}: prediction {t}")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", nargs="?", default=str(DEFAULT_RUN), help="the run's JSON (default: the committed H200 run)")
    args = p.parse_args(argv)
    data = load(args.run)
    problems = check_configs(data)
    print(report(data))
    for line in problems:
        print("PROBLEM:", line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
