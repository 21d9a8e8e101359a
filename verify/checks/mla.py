"""The ``decode.mla*`` models against :func:`numeric.mla.run_mla`: every count equal at every point.

Checks (the formula side is the model's own ``evaluate``; point keys are the model's parameter names):

* ``decode.mla``, ``decode.mla.fp8`` - reads, writes and FLOPs, the elements of every tensor class, the
  bytes (``bytes_KV``, ``bytes_Q``, ...), the whole-tile FLOPs and tokens and the segments, over a grid with
  ``H L_q`` not a multiple of ``B_h``, more splits than key blocks, fewer tokens than one block, pages that
  do not divide ``N_k`` (nor ``B_n``, nor are divided by it), ``L_q > 1``, DeepSeek-V3's shape, and
  ``N_k = 10**9`` and ``10**30`` (count-only), plus hypothesis draws.  Points with little data run the
  executor in real mode (a randomly permuted block table; FP8 quantized and dequantized), so the sizes
  of real NumPy slices are counted.
* ``decode.mla.ragged``, ``decode.mla.fp8.ragged`` - one length per sequence (``extra = ("lengths",)``): the
  executor's counts equal the sum of the model at ``B = 1`` over the sequences.
* ``decode.mla.flashmla``, ``decode.mla.fp8.flashmla`` - ragged batches split as FlashMLA's scheduler splits
  them (:func:`tuning.mla_splits.flashmla_schedule`, its block ranges handed to the executor): the counts
  equal the sum of the model at ``B = 1``, ``S`` = each sequence's split count.
* ``decode.mla.time``, ``decode.mla.fp8.time`` - the bytes they price and the tile FLOPs are the executed
  kernel's.

Properties:

* ``decode.mla.time.roofs`` (and ``.fp8``) - the time is the largest of its roofs and no less than any, the
  HBM bytes lie between the compulsory bytes and the executed bytes, and with one row group they are the
  executed bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from numeric.mla import run_mla
from symbolic.evaluate import compile_exact
from symbolic.models.mla import (decode_mla, decode_mla_fp8, decode_mla_fp8_time, decode_mla_time)
from tuning.mla_splits import flashmla_num_sm_parts, flashmla_schedule

from ..core import Check, Property
from .decode import RaggedCheck

__all__ = ["checks", "ragged_checks", "schedule_checks", "time_checks", "roof_properties", "QUANTITIES",
           "ScheduleCheck"]

#: every count the executor measures and the models give (FP8 adds reads_KV_scale)
QUANTITIES = ("reads", "writes", "flops", "reads_Q", "reads_KV_nope", "reads_KV_rope", "reads_table", "reads_O_s",
              "reads_LSE_s", "writes_O_s", "writes_LSE_s", "writes_O", "writes_LSE", "bytes_KV", "bytes_Q",
              "bytes_read", "bytes_written", "bytes", "flops_tiles", "tokens_tiles")
_REAL_UP_TO = 40_000        # elements held by a point run in real mode
_SHAPE = ("B", "H", "L_q", "N_k", "d_c", "d_r", "B_h", "B_n", "S", "P")


def _quantities(fp8: bool) -> tuple:
    return QUANTITIES + (("reads_KV_scale",) if fp8 else ())


def _execute(fp8: bool):
    def run(p) -> dict:
        lengths = p.get("lengths")
        lens = list(lengths) if lengths is not None else [p["N_k"]] * p["B"]
        real = sum(lens) * (p["d_c"] + p["d_r"] + p["H"] * p["L_q"]) <= _REAL_UP_TO
        return run_mla(*(p[k] for k in _SHAPE), fp8=fp8, lengths=lengths, splits=p.get("splits"), real=real,
                       seed=p.get("seed", 0)).counts()
    return run


def _grid(fp8: bool):
    dc = 128 if fp8 else 6
    def grid(full: bool):
        base = {"B": 1, "H": 5, "L_q": 1, "d_c": dc, "d_r": 3, "B_h": 4, "B_n": 16, "P": 16}
        yield {**base, "N_k": 1, "S": 1}                                  # one token, N_k < B_n
        yield {**base, "N_k": 1, "S": 4}                                  # S > nb = 1
        yield {**base, "N_k": 100, "S": 3, "P": 7}                        # B_n and P divide neither N_k nor each other
        yield {**base, "N_k": 100, "S": 13}                               # S > nb = 7
        yield {**base, "N_k": 64, "S": 4, "B_h": 5}                       # H L_q = B_h: one row group, divisible
        yield {**base, "L_q": 3, "N_k": 50, "B_n": 8, "S": 5, "P": 3}     # L_q > 1: 15 rows in 4 row groups
        yield {**base, "H": 9, "B_h": 64, "N_k": 77, "B_n": 4, "S": 7, "P": 32}    # B_h > H L_q, P > B_n
        yield {**base, "B": 3, "H": 8, "B_h": 3, "N_k": 33, "S": 2, "P": 5}
        yield {"B": 2, "H": 128, "L_q": 1, "N_k": 4096, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "S": 64,
               "P": 64}                                                   # DeepSeek-V3 on an H800: FlashMLA's 64 splits
        yield {"B": 1, "H": 128, "L_q": 2, "N_k": 10**9, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64, "S": 128,
               "P": 3000}                                                 # count-only, exact at 10**9
        yield {"B": 7, "H": 129, "L_q": 1, "N_k": 10**30 + 7, "d_c": 512, "d_r": 64, "B_h": 64, "B_n": 64,
               "S": 10**3, "P": 10**29 + 3}                               # count-only beyond int64
        for P in (1, 3, 5, 16, 32, 48, 200):          # pages below, above, dividing and not dividing B_n
            yield {**base, "N_k": 100, "S": 3, "P": P}
        sizes = (1, 7, 16, 17, 100) if full else (1, 17, 100)
        splits = (1, 2, 3, 9, 40) if full else (1, 3, 40)
        rows = ((1, 1, 1), (5, 1, 4), (4, 2, 8), (3, 3, 2)) if full else ((5, 1, 4), (3, 3, 2))
        for N_k, S, (H, L_q, B_h), B_n in product(sizes, splits, rows, (4, 16)):
            yield {"B": 2, "H": H, "L_q": L_q, "N_k": N_k, "d_c": dc, "d_r": 2, "B_h": B_h, "B_n": B_n, "S": S,
                   "P": (3, 8, 16)[(N_k + S) % 3]}
    return grid


def _points(fp8: bool):
    def strategy():
        from hypothesis import strategies as st
        return st.fixed_dictionaries({
            "B": st.integers(1, 3), "H": st.integers(1, 12), "L_q": st.integers(1, 3), "N_k": st.integers(1, 400),
            "d_c": st.sampled_from((128, 256)) if fp8 else st.integers(1, 8), "d_r": st.integers(1, 6),
            "B_h": st.integers(1, 20), "B_n": st.integers(1, 64), "S": st.integers(1, 30), "P": st.integers(1, 80)})
    return strategy


def _check(model, fp8: bool) -> Check:
    return Check(model=model, execute=_execute(fp8), grid=_grid(fp8), strategy=_points(fp8),
                 quantities=_quantities(fp8), size=lambda p: p["N_k"] * p["B"],
                 description=f"MLA decode ({'FP8' if fp8 else 'BF16'} cache): every tensor class, bytes, FLOPs")


checks = [_check(decode_mla, False), _check(decode_mla_fp8, True)]


# ------------------------------------------------------------------------------------------ ragged
_RAGGED = ((1, 100, 17), (5, 5), (300, 1, 64, 65), (16, 33, 2, 128, 7), (1,), (1000, 3))


def _ragged_grid(fp8: bool):
    def grid(full: bool):
        rows = ((5, 1, 4), (4, 2, 8), (3, 1, 64))
        for lengths, (H, L_q, B_h), S in product(_RAGGED, rows, (1, 2, 5, 40) if full else (1, 3, 40)):
            yield {"B": len(lengths), "H": H, "L_q": L_q, "N_k": max(lengths), "d_c": 128 if fp8 else 5, "d_r": 3,
                   "B_h": B_h, "B_n": 16, "S": S, "P": 5 if S % 2 else 32, "lengths": lengths}
    return grid


def _ragged_points(fp8: bool):
    def strategy():
        from hypothesis import strategies as st

        @st.composite
        def point(draw):
            lengths = tuple(draw(st.lists(st.integers(1, 300), min_size=1, max_size=4)))
            return {"B": len(lengths), "H": draw(st.integers(1, 9)), "L_q": draw(st.integers(1, 2)),
                    "N_k": max(lengths), "d_c": 128 if fp8 else draw(st.integers(1, 6)),
                    "d_r": draw(st.integers(1, 4)), "B_h": draw(st.integers(1, 16)), "B_n": draw(st.integers(1, 40)),
                    "S": draw(st.integers(1, 20)), "P": draw(st.integers(1, 40)), "lengths": lengths}
        return point()
    return strategy


def _ragged(model, fp8: bool) -> RaggedCheck:
    return RaggedCheck(model=model, execute=_execute(fp8), grid=_ragged_grid(fp8), strategy=_ragged_points(fp8),
                       quantities=_quantities(fp8), name=f"{model.name}.ragged", extra=("lengths",),
                       size=lambda p: sum(p["lengths"]), draws=20,
                       description="ragged batch: the sum of the model at B = 1 over the sequences")


ragged_checks = [_ragged(decode_mla, False), _ragged(decode_mla_fp8, True)]


# ------------------------------------------------------------------------------------------ FlashMLA's splits
@dataclass(frozen=True)
class ScheduleCheck(Check):
    """A ragged batch split by FlashMLA's scheduler: the formula side is the model at ``B = 1``, ``N_k = n``,
    ``S`` = the sequence's split count, summed; the executor runs the scheduler's block ranges."""

    def formula(self, point) -> dict:
        pt = {k: v for k, v in point.items() if k not in self.extra}
        per = _schedule(point).splits_per_sequence()
        return {q: sum(self.model.evaluate(q, **{**pt, "B": 1, "N_k": n, "S": s})
                       for n, s in zip(point["lengths"], per)) for q in self.quantities}


def _schedule(p):
    return flashmla_schedule(p["lengths"], flashmla_num_sm_parts(p["num_sms"], p["H"], p["L_q"]),
                             block_size_n=p["B_n"])


def _schedule_execute(fp8: bool):
    run = _execute(fp8)

    def execute(p) -> dict:
        return run({**p, "splits": [list(r) for r in _schedule(p).splits]})
    return execute


_SCHED = ((4096,), (32768,), (100, 5000, 1, 64 * 7), (1, 1, 1), (20000, 300, 70000, 64, 65), (129,) * 9)


def _schedule_grid(fp8: bool):
    def grid(full: bool):
        for lengths, (H, L_q), sms in product(_SCHED, ((128, 1), (128, 2), (16, 1), (100, 3)),
                                              (132, 78, 8) if full else (132, 8)):
            yield {"B": len(lengths), "H": H, "L_q": L_q, "N_k": max(lengths), "d_c": 512, "d_r": 64, "B_h": 64,
                   "B_n": 64, "S": 1, "P": 64, "lengths": lengths, "num_sms": sms}
    return grid


def _schedule_check(model, fp8: bool) -> ScheduleCheck:
    return ScheduleCheck(model=model, execute=_schedule_execute(fp8), grid=_schedule_grid(fp8),
                         quantities=_quantities(fp8), name=f"{model.name}.flashmla", extra=("lengths", "num_sms"),
                         size=lambda p: sum(p["lengths"]),
                         description="FlashMLA's own splits (get_mla_metadata): the model summed at each "
                                     "sequence's split count")


schedule_checks = [_schedule_check(decode_mla, False), _schedule_check(decode_mla_fp8, True)]


# ------------------------------------------------------------------------------------------ time models
_TIME_SHAPES = ({}, {"H": 16}, {"H": 64}, {"H": 128, "L_q": 2}, {"H": 129}, {"H": 256, "S": 8}, {"N_k": 100, "S": 3},
                {"B": 4, "N_k": 65, "S": 2, "P": 16}, {"N_k": 10**9, "S": 64})


def _time_execute(model, fp8: bool):
    def execute(p) -> dict:
        pt = {**model.defaults, **p}
        return run_mla(*(pt[k] for k in _SHAPE), fp8=fp8).counts()
    return execute


def _time_check(model, fp8: bool) -> Check:
    return Check(model=model, execute=_time_execute(model, fp8), grid=lambda full: iter(_TIME_SHAPES),
                 quantities=("bytes", "flops", "flops_tiles", "segments"), size=lambda p: p.get("N_k", 32768),
                 description="the bytes and tile FLOPs the time model prices are the executed kernel's")


time_checks = [_time_check(decode_mla_time, False), _time_check(decode_mla_fp8_time, True)]


def _roofs(model, count_model, fp8: bool):
    def holds(p):
        v = model.evaluate(**p)
        pt = model.check_point(p)
        roofs = {k: v[k] for k in ("t_hbm", "t_mma", "t_dequant") if k in v}
        if v["time"] != max(roofs.values()):
            return f"time {v['time']} is not the largest roof of {roofs}"
        c = count_model.evaluate(**{k: pt[k] for k in _SHAPE})
        if not v["bytes_hbm"] <= c["bytes"]:
            return f"bytes_hbm {v['bytes_hbm']} above the executed bytes {c['bytes']}"
        if v["row_groups"] == 1 and v["bytes_hbm"] != c["bytes"]:
            return "one row group: nothing to share, bytes_hbm must be the executed bytes"
        low = next(iter(count_model.lower_bounds.values()))
        if v["bytes_hbm"] < compile_exact(low, count_model.params)(**{k: pt[k] for k in _SHAPE}):
            return f"bytes_hbm {v['bytes_hbm']} below the compulsory bytes"
        return None
    return holds


roof_properties = [Property(f"{m.name}.roofs", holds=_roofs(m, c, fp8), grid=lambda full: iter(_TIME_SHAPES), model=m,
                            description="time = the largest roof; compulsory <= bytes_hbm <= executed bytes")
                   for m, c, fp8 in ((decode_mla_time, decode_mla, False), (decode_mla_fp8_time, decode_mla_fp8, True))]
