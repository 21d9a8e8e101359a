"""What the peer restatements return: one row per operation, in exact numbers.

The peers compute in floats (``w_bit / 8``, ``hidden * kv_heads / heads``); the restatements compute the same
expressions in :class:`fractions.Fraction`, so a figure is the peer's formula evaluated exactly (an integer
wherever the peer's own result is one).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Union

Number = Union[int, Fraction]

#: the operation classes the comparison lines up (tilebound's op names and each peer's are mapped onto these)
CATEGORIES = ("embed", "norm", "qkv", "rope", "attention", "o_proj", "residual", "router", "gate_up", "act",
              "down", "experts", "combine", "kv_cache", "lm_head", "comm")


def exact(x) -> Number:
    """A Fraction that is an integer as an ``int``; ints stay ints."""
    x = Fraction(x)
    return int(x) if x.denominator == 1 else x


@dataclass(frozen=True)
class PeerOp:
    """One operation as a peer prices it.

    ``bytes`` and ``flops`` are per run (one layer); ``count`` is how many times it runs in the step (the layers,
    or 1 for the LM head); ``category`` is one of :data:`CATEGORIES`, or a tuple of them for a row that lumps
    several operations (llm-analysis's ``attn`` is the projections and the attention together);
    ``source`` the file:lines@commit restated."""

    name: str
    category: object
    bytes: Number
    flops: Number
    count: int
    source: str
    note: str = ""

    def __post_init__(self):
        if not self.covers or any(c not in CATEGORIES for c in self.covers):
            raise ValueError(f"unknown category {self.category!r}")
        object.__setattr__(self, "bytes", exact(self.bytes))
        object.__setattr__(self, "flops", exact(self.flops))

    @property
    def covers(self) -> tuple:
        """The categories this row prices."""
        return (self.category,) if isinstance(self.category, str) else tuple(self.category)

    @property
    def step_bytes(self) -> Number:
        return exact(self.bytes * self.count)

    @property
    def step_flops(self) -> Number:
        return exact(self.flops * self.count)


class Unsupported(Exception):
    """The peer cannot price this config (its reader fails or refuses it); the message says where and why."""


def groups(ops) -> list[tuple[tuple, list]]:
    """The rows cut into groups that price the same operations: rows whose categories overlap share a group.
    Returns ``[(categories, rows)]`` in the order the categories first appear (:data:`CATEGORIES` order within)."""
    out: list[list] = []                         # [set of categories, rows]
    for op in ops:
        hit = [g for g in out if g[0] & set(op.covers)]
        merged = [set(op.covers), [op]]
        for g in hit:
            merged[0] |= g[0]
            merged[1] = g[1] + merged[1]
            out.remove(g)
        out.append(merged)
    out.sort(key=lambda g: min(CATEGORIES.index(c) for c in g[0]))
    return [(tuple(c for c in CATEGORIES if c in g[0]), g[1]) for g in out]


def step_total(rows, what: str = "bytes") -> Number:
    """Whole-step bytes (or flops) of some rows."""
    return exact(sum((getattr(r, "step_" + what) for r in rows), 0))
