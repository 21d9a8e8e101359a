"""The ``decode.*`` models against :func:`numeric.decode.run_decode`: every count equal at every point.

Checks (the formula side is the model's own ``evaluate``; point keys are the model's parameter names):

* ``decode.packed``, ``decode.unpacked``, ``decode.packed.paged``, ``decode.unpacked.paged`` - reads,
  writes and FLOPs, the elements of every tensor class, the bytes and the CTAs, over a grid with more
  splits than key blocks, fewer keys than one block, ``N_k`` that ``B_n`` and ``P`` do not divide, page
  sizes that do not divide ``B_n``, ``L_q > 1``, MHA (``g = 1``), MQA (``H_kv = 1``) and ``N_k = 10**9``
  (count-only), plus hypothesis draws.  Points with little data run the executor in real mode, so the
  sizes of real NumPy slices are counted too; the paged points use a randomly permuted block table.
* ``decode.*.ragged`` - one length per sequence (``extra = ("lengths",)``; ``B`` is their number and
  ``N_k`` the longest): the executor's counts equal the sum of the model at ``B = 1`` over the
  sequences (the closed forms take one ``N_k``; a ragged batch is their sum).
* ``decode.time`` - its bytes (as the packed kernel moves them) and CTAs against the executor.

Properties:

* ``decode.gqa_ratio`` - executed and modelled, the unpacked grid reads ``K`` and ``V`` exactly ``g``
  times as often as the packed one (and the block table too; ``Q``, ``O`` and the partials are equal).
* ``decode.time.bounds`` - the time model never beats the HBM roofline nor its busiest CTA's latency
  chain, its fraction of HBM bandwidth lies in ``(0, 1]``, and its bytes split into the main kernel's
  and the combine's.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from numeric.decode import run_decode
from symbolic.models.decode import (decode_packed, decode_packed_paged, decode_time, decode_unpacked,
                                    decode_unpacked_paged)

from ..core import Check, Property

__all__ = ["RaggedCheck", "checks", "ragged_checks", "time_check", "gqa_ratio", "time_bounds", "QUANTITIES"]

#: every count the executor measures and the models give
QUANTITIES = ("reads", "writes", "flops", "reads_Q", "reads_K", "reads_V", "reads_O_s", "reads_LSE_s",
              "writes_O_s", "writes_LSE_s", "writes_O", "writes_LSE", "bytes_read", "bytes_written", "bytes",
              "ctas")
_REAL_UP_TO = 20_000        # K and V elements of a point run in real mode

_SHAPE = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S")


def _execute(packed: bool, paged: bool):
    def run(p) -> dict:
        lengths = p.get("lengths")
        lens = list(lengths) if lengths is not None else [p["N_k"]] * p["B"]
        real = sum(lens) * p["H_kv"] * (p["d"] + p["d_v"]) <= _REAL_UP_TO
        return run_decode(*(p[k] for k in _SHAPE), packed=packed, P=p["P"] if paged else None,
                          lengths=lengths, real=real, seed=p.get("seed", 0)).counts()
    return run


def _size(p) -> int:
    return p["N_k"] * p["B"]


def _grid(paged: bool):
    def grid(full: bool):
        base = {"B": 1, "H": 8, "H_kv": 2, "L_q": 1, "d": 4, "d_v": 3}
        pages = {"P": 16} if paged else {}
        yield {**base, "N_k": 1, "B_n": 16, "S": 1, **pages}                   # one key, N_k < B_n
        yield {**base, "N_k": 1, "B_n": 16, "S": 4, **pages}                   # S > nblocks = 1
        yield {**base, "N_k": 100, "B_n": 16, "S": 3, **pages}                 # B_n and P do not divide N_k
        yield {**base, "N_k": 100, "B_n": 16, "S": 6, **pages}                 # ceil(7/2)=4 holds: S_ne = 4 < 6
        yield {**base, "N_k": 100, "B_n": 16, "S": 13, **pages}                # S > nblocks = 7
        yield {**base, "N_k": 64, "B_n": 16, "S": 4, **pages}                  # divisible: S_ne = S
        yield {**base, "L_q": 3, "N_k": 50, "B_n": 8, "S": 5, **pages}         # L_q > 1
        yield {**base, "H": 4, "H_kv": 4, "N_k": 33, "B_n": 8, "S": 2, **pages}    # MHA, g = 1
        yield {**base, "H": 6, "H_kv": 1, "N_k": 33, "B_n": 8, "S": 2, **pages}    # MQA, H_kv = 1
        yield {**base, "B": 3, "d": 5, "d_v": 7, "N_k": 77, "B_n": 4, "S": 7, **pages}
        yield {"B": 2, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 32768, "d": 128, "d_v": 128, "B_n": 128, "S": 29,
               **({"P": 256} if paged else {})}                                  # Llama-3-8B-like, FA2's count
        yield {"B": 1, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 10**9, "d": 128, "d_v": 128, "B_n": 1024, "S": 128,
               **({"P": 3000} if paged else {})}                                 # count-only, exact at 10**9
        if paged:
            for P in (1, 3, 5, 7, 32, 48, 200):          # pages below, above, dividing and not dividing B_n
                yield {**base, "N_k": 100, "B_n": 16, "S": 3, "P": P}
        sizes = (1, 7, 16, 17, 100) if full else (1, 17, 100)
        blocks = (1, 4, 16) if full else (4, 16)
        splits = (1, 2, 3, 5, 9, 40) if full else (1, 3, 9)
        heads = ((4, 4), (8, 2), (6, 1))
        for N_k, B_n, S, (H, H_kv), L_q in product(sizes, blocks, splits, heads, (1, 2)):
            pt = {"B": 2, "H": H, "H_kv": H_kv, "L_q": L_q, "N_k": N_k, "d": 3, "d_v": 2, "B_n": B_n, "S": S}
            if paged:
                pt["P"] = (3, 8, 32)[(N_k + S) % 3]
            yield pt
    return grid


def _points(paged: bool):
    def strategy():
        from hypothesis import strategies as st

        @st.composite
        def point(draw):
            H_kv = draw(st.integers(1, 4))
            pt = {"B": draw(st.integers(1, 3)), "H": H_kv * draw(st.integers(1, 4)), "H_kv": H_kv,
                  "L_q": draw(st.integers(1, 3)), "N_k": draw(st.integers(1, 400)), "d": draw(st.integers(1, 8)),
                  "d_v": draw(st.integers(1, 8)), "B_n": draw(st.integers(1, 64)), "S": draw(st.integers(1, 24))}
            if paged:
                pt["P"] = draw(st.integers(1, 80))
            return pt
        return point()
    return strategy


def _check(model, packed: bool, paged: bool) -> Check:
    return Check(model=model, execute=_execute(packed, paged), grid=_grid(paged), strategy=_points(paged),
                 quantities=QUANTITIES + (("reads_table",) if paged else ()), size=_size,
                 description=f"split-KV decode, {'packed' if packed else 'unpacked'}"
                             f"{', paged' if paged else ''}: every tensor class, bytes, FLOPs, CTAs")


checks = [_check(decode_packed, True, False), _check(decode_unpacked, False, False),
          _check(decode_packed_paged, True, True), _check(decode_unpacked_paged, False, True)]


# ------------------------------------------------------------------------------------------ ragged
@dataclass(frozen=True)
class RaggedCheck(Check):
    """A check over ragged batches: the formula side is the model's own ``evaluate`` at ``B = 1`` and
    ``N_k = n``, summed over the sequences' lengths ``n`` (the point's ``lengths``)."""

    def formula(self, point) -> dict:
        pt = {k: v for k, v in point.items() if k not in self.extra}
        lengths = point["lengths"]
        return {q: sum(self.model.evaluate(q, **{**pt, "B": 1, "N_k": n}) for n in lengths)
                for q in self.quantities}


_RAGGED = ((1, 100, 17), (5, 5), (300, 1, 64, 65), (16, 33, 2, 128, 7), (1,), (1000, 3))


def _ragged_grid(paged: bool):
    def grid(full: bool):
        shapes = ((8, 2, 1), (4, 4, 2), (6, 1, 1))
        splits = (1, 2, 5, 40) if full else (1, 3, 40)
        for lengths, (H, H_kv, L_q), S in product(_RAGGED, shapes, splits):
            pt = {"B": len(lengths), "H": H, "H_kv": H_kv, "L_q": L_q, "N_k": max(lengths), "d": 4, "d_v": 3,
                  "B_n": 16, "S": S, "lengths": lengths}
            if paged:
                pt["P"] = 5 if S % 2 else 32
            yield pt
    return grid


def _ragged_points(paged: bool):
    def strategy():
        from hypothesis import strategies as st

        @st.composite
        def point(draw):
            lengths = tuple(draw(st.lists(st.integers(1, 300), min_size=1, max_size=4)))
            H_kv = draw(st.integers(1, 3))
            pt = {"B": len(lengths), "H": H_kv * draw(st.integers(1, 3)), "H_kv": H_kv,
                  "L_q": draw(st.integers(1, 2)), "N_k": max(lengths), "d": draw(st.integers(1, 5)),
                  "d_v": draw(st.integers(1, 5)), "B_n": draw(st.integers(1, 40)), "S": draw(st.integers(1, 20)),
                  "lengths": lengths}
            if paged:
                pt["P"] = draw(st.integers(1, 40))
            return pt
        return point()
    return strategy


def _ragged(model, packed: bool, paged: bool) -> RaggedCheck:
    return RaggedCheck(model=model, execute=_execute(packed, paged), grid=_ragged_grid(paged),
                       strategy=_ragged_points(paged), quantities=QUANTITIES + (("reads_table",) if paged else ()),
                       name=f"{model.name}.ragged", extra=("lengths",), size=lambda p: sum(p["lengths"]),
                       draws=20, description="ragged batch: the sum of the model at B = 1 over the sequences")


ragged_checks = [_ragged(decode_packed, True, False), _ragged(decode_unpacked, False, False),
                 _ragged(decode_packed_paged, True, True), _ragged(decode_unpacked_paged, False, True)]


# ------------------------------------------------------------------------------------------ time model
def _time_grid(full: bool):
    yield {}                                                           # the defaults: Llama-3-8B-like on H100
    for S in (1, 2, 8, 16, 29, 64, 128, 300):
        yield {"S": S}
    yield {"B": 4, "N_k": 1000, "S": 3}
    yield {"B": 64, "H": 32, "H_kv": 8, "N_k": 4096, "S": 1}           # many CTAs: more than one wave
    yield {"H": 8, "H_kv": 1, "L_q": 4, "N_k": 100, "B_n": 16, "S": 9, "d": 64, "d_v": 64}
    yield {"N_k": 10**9, "S": 128, "B_n": 1024}
    if full:
        for N_k, S in product((1, 127, 128, 129, 4096), (1, 2, 3, 7, 33)):
            yield {"N_k": N_k, "S": S}


def _time_execute(p) -> dict:
    pt = {**decode_time.defaults, **p}
    return run_decode(*(pt[k] for k in _SHAPE), packed=True).counts()


time_check = Check(model=decode_time, execute=_time_execute, grid=_time_grid, quantities=("bytes", "ctas"),
                   size=lambda p: p.get("N_k", 32768),
                   description="decode.time: the bytes it prices and its CTAs are the packed kernel's, executed")


def _time_holds(p):
    v = decode_time.evaluate(**p)
    pt = decode_time.check_point(p)
    if v["time"] < v["t_roofline"]:
        return f"time {v['time']} beats the HBM roofline {v['t_roofline']}"
    if v["time"] < v["t_cta"]:
        return f"time {v['time']} beats the busiest CTA's latency chain {v['t_cta']}"
    if not 0 < v["hbm_fraction"] <= 1:
        return f"hbm_fraction {v['hbm_fraction']} outside (0, 1]"
    if v["bytes"] != v["bytes_main"] + v["bytes_combine"]:
        return f"bytes {v['bytes']} != main {v['bytes_main']} + combine {v['bytes_combine']}"
    if (pt["S"] == 1) != (v["t_combine"] == 0):
        return "a combine kernel runs exactly when S > 1"
    return None


time_bounds = Property("decode.time.bounds", holds=_time_holds, grid=lambda full: _time_grid(True),
                       model=decode_time,
                       description="time >= roofline and >= the busiest CTA's chain; 0 < hbm_fraction <= 1")


# ------------------------------------------------------------------------------------------ GQA ratio
def _gqa_holds(p):
    g = p["H"] // p["H_kv"]
    ex_u = run_decode(*(p[k] for k in _SHAPE), packed=False).counts()
    ex_p = run_decode(*(p[k] for k in _SHAPE), packed=True).counts()
    fo_u, fo_p = decode_unpacked.evaluate(**p), decode_packed.evaluate(**p)
    for who, u, pk in (("executed", ex_u, ex_p), ("modelled", fo_u, fo_p)):
        for q in ("reads_K", "reads_V"):
            if u[q] != g * pk[q]:
                return f"{who} {q}: unpacked {u[q]} != g = {g} x packed {pk[q]}"
        for q in ("reads_Q", "writes_O", "writes_O_s", "reads_O_s", "flops"):
            if u[q] != pk[q]:
                return f"{who} {q}: unpacked {u[q]} != packed {pk[q]}"
    return None


def _gqa_grid(full: bool):
    for (H, H_kv), N_k, S in product(((4, 4), (8, 2), (32, 8), (8, 1), (12, 3)), (1, 100, 4096),
                                     (1, 3, 64) if full else (1, 3)):
        yield {"B": 2, "H": H, "H_kv": H_kv, "L_q": 1, "N_k": N_k, "d": 8, "d_v": 8, "B_n": 16, "S": S}


gqa_ratio = Property("decode.gqa_ratio", holds=_gqa_holds, grid=_gqa_grid, model=decode_unpacked,
                     description="unpacked / packed K and V reads = g = H/H_kv exactly, executed and modelled")
