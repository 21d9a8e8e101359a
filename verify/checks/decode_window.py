"""The ``decode.*.window`` models against :func:`numeric.decode_window.run_decode_window`.

Checks (the formula side is the model's own ``evaluate``; point keys are the model's parameter names):
``decode.packed.window``, ``decode.unpacked.window`` (FA2's split rule) and ``decode.packed.window.fa3``
(FA3's) - reads, writes, FLOPs, every tensor class, bytes, CTAs, the keys visited and the splits that
load ``Q`` - over a grid of windows that see one key (``W_l = 0``), end inside the first block, one short
of key 0 (``W_l = N_k - L_q - 1``), at key 0 and beyond (``W_l >= N_k``: ``decode.packed``'s counts),
``L_q > 1`` with windows shorter than the new tokens, more splits than blocks, and count-only points at
``N_k = 2**63 - 1``, ``2**63 + 1`` and ``10**30``, plus hypothesis draws.  Points with little data run the
executor in real mode.

Property ``decode.window.full`` - with ``W_l >= N_k - L_q`` each window model equals its unwindowed
decode model (``decode.packed``, ``decode.unpacked``) in every count they share, executed and modelled.
"""

from __future__ import annotations

from itertools import product

from numeric.decode import run_decode
from numeric.decode_window import run_decode_window
from symbolic.models.decode import decode_packed, decode_unpacked
from symbolic.models.decode_window import WINDOW_MODELS

from ..core import Check, Property
from .decode import QUANTITIES

__all__ = ["checks", "full_window", "WINDOW_QUANTITIES"]

WINDOW_QUANTITIES = QUANTITIES + ("keys_visited", "splits_loading")
_REAL_UP_TO = 20_000        # K and V elements of a point run in real mode
_SHAPE = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S", "W_l")


def _execute(packed: bool, rule: str):
    def run(p) -> dict:
        real = p["B"] * p["N_k"] * p["H_kv"] * (p["d"] + p["d_v"]) <= _REAL_UP_TO
        return run_decode_window(*(p[k] for k in _SHAPE), packed=packed, split_rule=rule, real=real).counts()
    return run


def _grid(full: bool):
    base = {"B": 1, "H": 8, "H_kv": 2, "L_q": 1, "d": 4, "d_v": 3}
    yield {**base, "N_k": 1, "B_n": 16, "S": 1, "W_l": 0}                    # one key, one query
    yield {**base, "N_k": 100, "B_n": 16, "S": 3, "W_l": 0}                  # the query sees its own key only
    yield {**base, "N_k": 100, "B_n": 16, "S": 7, "W_l": 5}                  # window inside the last block
    yield {**base, "N_k": 100, "B_n": 16, "S": 7, "W_l": 20}                 # window over a block boundary
    yield {**base, "N_k": 100, "B_n": 16, "S": 7, "W_l": 98}                 # one short of key 0
    yield {**base, "N_k": 100, "B_n": 16, "S": 7, "W_l": 99}                 # reaches key 0: decode.packed
    yield {**base, "N_k": 100, "B_n": 16, "S": 13, "W_l": 10**6}             # beyond the cache, S > blocks
    yield {**base, "L_q": 5, "N_k": 50, "B_n": 8, "S": 5, "W_l": 2}          # window shorter than the new tokens
    yield {**base, "L_q": 5, "N_k": 5, "B_n": 2, "S": 4, "W_l": 1}           # every key is new
    yield {**base, "H": 4, "H_kv": 4, "N_k": 33, "B_n": 8, "S": 2, "W_l": 9}  # MHA, g = 1
    yield {**base, "H": 6, "H_kv": 1, "N_k": 33, "B_n": 8, "S": 2, "W_l": 9}  # MQA, H_kv = 1
    yield {"B": 2, "H": 32, "H_kv": 8, "L_q": 1, "N_k": 32768, "d": 128, "d_v": 128, "B_n": 128, "S": 29,
           "W_l": 4095}                                                         # Mistral-7B at 32K, FA2's 29 splits
    for N_k in (2 ** 63 - 1, 2 ** 63 + 1, 10 ** 30):                            # count-only, exact past int64
        yield {"B": 1, "H": 32, "H_kv": 8, "L_q": 3, "N_k": N_k, "d": 128, "d_v": 96, "B_n": 128, "S": 29,
               "W_l": 4095}
        yield {"B": 1, "H": 8, "H_kv": 8, "L_q": 1, "N_k": N_k, "d": 64, "d_v": 64, "B_n": N_k // 97, "S": 128,
               "W_l": N_k // 3}                                                 # a window of a third of the cache
    sizes = (1, 7, 16, 17, 100) if full else (1, 17, 100)
    windows = (0, 1, 7, 16, 60, 200) if full else (0, 7, 60, 200)
    splits = (1, 2, 5, 40) if full else (1, 3, 9)
    for N_k, W_l, S, (H, H_kv), L_q, B_n in product(sizes, windows, splits, ((4, 4), (8, 2), (6, 1)), (1, 2),
                                                   (4, 16)):
        if L_q <= N_k:
            yield {"B": 2, "H": H, "H_kv": H_kv, "L_q": L_q, "N_k": N_k, "d": 3, "d_v": 2, "B_n": B_n, "S": S,
                   "W_l": W_l}


def _points():
    from hypothesis import strategies as st

    @st.composite
    def point(draw):
        H_kv = draw(st.integers(1, 4))
        N_k = draw(st.integers(1, 400))
        return {"B": draw(st.integers(1, 3)), "H": H_kv * draw(st.integers(1, 4)), "H_kv": H_kv,
                "L_q": draw(st.integers(1, min(3, N_k))), "N_k": N_k, "d": draw(st.integers(1, 8)),
                "d_v": draw(st.integers(1, 8)), "B_n": draw(st.integers(1, 64)), "S": draw(st.integers(1, 24)),
                "W_l": draw(st.integers(0, 450))}
    return point()


checks = [Check(model=model, execute=_execute(packed, rule), grid=_grid, strategy=_points,
                quantities=WINDOW_QUANTITIES, size=lambda p: p["N_k"] * p["B"],
                description=f"split-KV decode over a sliding window, {'packed' if packed else 'unpacked'}, "
                            f"{rule.upper()}'s splits: every tensor class, bytes, FLOPs, CTAs, keys visited")
          for model, packed, rule in WINDOW_MODELS.values()]


# ------------------------------------------------------------------------------------------ W_l >= N_k - L_q
_PLAIN = ("B", "H", "H_kv", "L_q", "N_k", "d", "d_v", "B_n", "S")


def _full_holds(p):
    for name, (model, packed, rule) in WINDOW_MODELS.items():
        plain = decode_packed if packed else decode_unpacked
        fo_w = model.evaluate(**p)
        fo_p = plain.evaluate(**{k: p[k] for k in _PLAIN})
        ex_w = run_decode_window(*(p[k] for k in _SHAPE), packed=packed, split_rule=rule).counts()
        ex_p = run_decode(*(p[k] for k in _PLAIN), packed=packed).counts()
        for q in QUANTITIES:
            if not fo_w[q] == fo_p[q] == ex_w[q] == ex_p[q]:
                return (f"{name} {q} at W_l = {p['W_l']}: window model {fo_w[q]}, executed {ex_w[q]}; "
                        f"{plain.name} {fo_p[q]}, executed {ex_p[q]}")
    return None


def _full_grid(full: bool):
    for N_k, L_q, S, B_n in product((1, 17, 100, 4096), (1, 3), (1, 3, 40), (4, 16, 128)):
        if L_q <= N_k:
            for W_l in (N_k - L_q, N_k, 10 * N_k + 7):
                yield {"B": 2, "H": 8, "H_kv": 2, "L_q": L_q, "N_k": N_k, "d": 5, "d_v": 3, "B_n": B_n, "S": S,
                       "W_l": W_l}


full_window = Property("decode.window.full", holds=_full_holds, grid=_full_grid,
                       model=WINDOW_MODELS["decode.packed.window"][0],
                       description="W_l >= N_k - L_q: the window models equal decode.packed/unpacked, "
                                   "executed and modelled")
