"""``tilebound splits``: the split count each real kernel's rule picks for one decode shape, and what the
model says that count costs.

    tilebound splits --gpu H100 --at B=1 H=32 H_kv=8 L_q=1 N_k=32768 d=128

One row per rule of :mod:`tuning.splits` (FlashAttention-2, FlashAttention-3, FlashInfer, vLLM), then the
unsplit kernel and the model's own best count, each with the HBM bytes of ``decode.packed`` and the time
and HBM-bandwidth fraction of ``decode.time`` at that count, on the GPU's SM count and bandwidth.  The
traffic and time are the same packed kernel's at every count: the rows compare split counts, not the
four kernels.  ``--at`` takes ``B H H_kv L_q N_k d d_v B_n`` (``d_v`` defaults to ``d``, ``B_n`` to
FA2's key block for ``d``), the page size ``P`` (default 16) and FlashInfer's occupancy
``ctas_per_sm`` (default 2: FlashInfer asks CUDA for it).  Bad input is one line and exit 2.
"""

from __future__ import annotations

from fractions import Fraction

from base.errors import BadInput

from . import FORMATS, Command

__all__ = ["COMMAND", "run", "splits_table", "OPTIMUM_UP_TO"]

#: the model's best count is searched over S = 1 .. this (FA2's and FA3's cap, flash_api.cpp:343)
OPTIMUM_UP_TO = 128
_SHAPE = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n")
_EXTRA = {"P": 16, "ctas_per_sm": 2}


def add_arguments(s) -> None:
    s.add_argument("--gpu", default="H100", help="hardware (A100, A100-80GB, H100, H200, B200; default H100)")
    s.add_argument("--at", nargs="+", action="extend", metavar="NAME=VALUE",
                   help="B, H, H_kv, L_q, N_k, d, d_v, B_n, P (page size), ctas_per_sm (FlashInfer's occupancy)")
    s.add_argument("--mla", action="store_true",
                   help="an MLA decode shape (decode.mla: B, H, L_q, N_k, d_c, d_r, B_h, B_n, P): FlashMLA's "
                        "scheduler's splits of each sequence (get_mla_metadata), with the bytes at them")
    s.add_argument("--format", choices=FORMATS, default="text")


#: --mla: at most this many sequences are scheduled one by one (the scheduler lists each sequence)
MLA_MAX_BATCH = 4096


def mla_table(gpu_name: str, at: dict):
    """FlashMLA's splits for a uniform batch of MLA decode (:func:`tuning.mla_splits.flashmla_splits`), and
    ``decode.mla``'s bytes at that schedule against the unsplit kernel's."""
    from collections import Counter

    from printing.tables import Measure, Table
    from symbolic.hardware import get_hardware
    from symbolic.models.mla import decode_mla
    from tuning.mla_splits import counts_at_schedule, flashmla_splits

    from ..report import check_names, point

    try:
        gpu = get_hardware(gpu_name)
    except BadInput as exc:
        raise BadInput("gpu", exc.problem) from None
    if gpu.sms is None:
        raise BadInput("gpu", f"{gpu.name} has no SM count in the hardware table")
    m = decode_mla.model
    check_names(at, [m])
    if "S" in at:
        raise BadInput("S", "is what the scheduler chooses here; leave it out")
    pt = point(m, {**at, "S": 1})
    if pt["B"] > MLA_MAX_BATCH:
        raise BadInput("B", f"FlashMLA's scheduler lists every sequence; {pt['B']:,} exceed the {MLA_MAX_BATCH:,} "
                            "this command schedules one by one")
    lengths = [pt["N_k"]] * pt["B"]
    splits = flashmla_splits(lengths, gpu.sms, pt["H"], pt["L_q"])
    unsplit = m.evaluate(**pt)
    # the sequences are alike but the scheduler may cut them differently: each group at its own S
    rows = [(f"FlashMLA ({n} sequence{'s' if n > 1 else ''})", s,
             Measure(counts_at_schedule(m, pt, [pt["N_k"]] * n, [s] * n)["bytes"], "B"),
             "csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu:28-101; csrc/api/dense_decode.h:78")
            for s, n in sorted(Counter(splits).items())]
    rows.append(("no split", 1, Measure(unsplit["bytes"], "B"), "S = 1"))
    where = ", ".join(f"{k} = {v}" for k, v in pt.items() if k != "S")
    return Table(("rule", "S", "bytes", "source"), tuple(rows),
                 caption=f"FlashMLA's splits on {gpu.name} ({gpu.sms} SMs) at {where}",
                 notes=("bytes as decode.mla counts them at the scheduler's splits (each sequence at its own S)",))


def _point(at: dict, time_model) -> tuple[dict, dict]:
    """The decode point (the time model's parameters, validated) and the rules' extra inputs."""
    from tuning.splits import fa2_block_n

    known = (*_SHAPE, *_EXTRA)
    for name in at:
        if name not in known:
            from base.discovery import did_you_mean
            raise BadInput(name, "not a parameter of splits" + did_you_mean(name, known, "it takes"))
    pt = {k: at[k] for k in _SHAPE if k in at}
    d = time_model.param("d").check(pt.get("d", time_model.defaults["d"]))
    pt.setdefault("d_v", d)
    pt.setdefault("B_n", fa2_block_n(d))
    pt = {k: v for k, v in time_model.check_point({**pt, "S": 1}).items() if k in _SHAPE}
    from base import validate
    extra = {k: validate.positive_int(k, at.get(k, v)) for k, v in _EXTRA.items()}
    return pt, extra


def splits_table(gpu_name: str, at: dict):
    """The table ``tilebound splits`` prints (a :class:`printing.tables.Table`)."""
    from symbolic.hardware import H100, LOADED_HBM_LATENCY, UNLOADED_L2_LATENCY_CLK, get_hardware
    from symbolic.models.decode import decode_packed, decode_time
    from printing.tables import Measure, Table
    from tuning.splits import RULES

    try:
        gpu = get_hardware(gpu_name)
    except BadInput as exc:
        raise BadInput("gpu", exc.problem) from None
    tm = decode_time.model
    pt, extra = _point(at, tm)
    notes = []
    clock = gpu.clock_hz
    if clock is None:
        clock = H100.clock_hz
        notes.append(f"{gpu.name} has no clock in the hardware table: the combine's L2 latency takes H100's 1.83 GHz")
    hw = {"n_SM": gpu.sms, "BW": gpu.hbm_bytes_per_s, "L": LOADED_HBM_LATENCY.value,
          "L_2": Fraction(UNLOADED_L2_LATENCY_CLK.value) / clock, "c_SM": 2}
    if gpu.sms is None:
        raise BadInput("gpu", f"{gpu.name} has no SM count in the hardware table")

    def row(label, S, source):
        t = tm.evaluate(**pt, **hw, S=S)
        b = decode_packed.evaluate(**pt, S=S)
        return (label, S, Measure(b["bytes"], "B"), Measure(b["split_overhead_bytes"], "B"), Measure(t["time"], "s"),
                t["hbm_fraction"], source)

    chosen, rows = [], []
    for r in RULES:                     # a rule that has no answer at this shape says so in its row
        try:
            chosen.append((r, r.choose({**pt, **extra}, gpu)))
            rows.append(row(r.name, chosen[-1][1], r.source))
        except BadInput as exc:
            rows.append((r.name, "-", "-", "-", "-", "-", f"refused: {exc.param}: {exc.problem}"))
    rows.append(row("no split", 1, "S = 1"))
    # bounded work at any N_k: the counts 1..128 and each rule's own (vLLM's 512-token partitions are
    # ceil(N_k / 512) of them: 1,953,125 at N_k = 10**9, which a search over 1..S would visit one by one)
    candidates = sorted(set(range(1, OPTIMUM_UP_TO + 1)) | {s for _, s in chosen})
    times = {s: tm.evaluate("time", **pt, **hw, S=s) for s in candidates}
    best = min(times, key=lambda s: (times[s], s))
    beyond = [s for _, s in chosen if s > OPTIMUM_UP_TO]
    rows.append(row("decode.time optimum", best, f"argmin over S = 1..{OPTIMUM_UP_TO}"
                                                  + (f" and {', '.join(map(str, beyond))}" if beyond else "")))
    where = ", ".join(f"{k} = {v}" for k, v in {**pt, **extra}.items())
    notes += [f"bytes and split overhead as decode.packed counts them; time and HBM fraction by decode.time "
              f"({gpu.sms} SMs, {gpu.hbm_bytes_per_s / 10**12:g} TB/s, L = 700 ns, 2 CTAs per SM)",
              "FlashInfer: chunks of whole pages of P tokens, max_grid_size = ctas_per_sm x SMs; "
              "vLLM: 512-token partitions (its V1 kernel, S = 1, when that suffices)"]
    return Table(("rule", "S", "bytes", "split overhead", "time", "HBM fraction", "source"), tuple(rows),
                 caption=f"split counts on {gpu.name} at {where}", notes=tuple(notes))


def run(args, out) -> int:
    from printing.tables import render

    from ..numbers import parse_assignments
    from . import target

    at = parse_assignments(args.at)
    table = mla_table(args.gpu, at) if args.mla else splits_table(args.gpu, at)
    out.write(render(table, target(args.format, out)) + "\n")
    return 0


COMMAND = Command("splits", "each kernel's split rule for a decode shape, with the model's bytes and time",
                  add_arguments, run)
