"""FlashAttention-3's block ranges, restated as pure functions of Python ints (no GPU, no SymPy).

Source: Dao-AILab/flash-attention @ ``0251105`` (``0251105a2fb19d2957484b7f023cd8c115286ced``):

* ``hopper/block.h`` lines 14-59, ``BlockMN::get_n_block_min_max``: for query (row) block ``m_block`` of
  ``kBlockM`` rows, the key blocks ``[n_block_min, n_block_max)`` its CTA loads - :func:`n_block_min_max`;
  lines 83-101, ``get_m_block_min_max``: for key block ``n_block``, the query blocks of the backward pass -
  :func:`m_block_min_max`.
* ``hopper/utils.h`` lines 103-117, ``div_floor``, ``round_down``, ``round_up`` (floor division that takes care
  of a negative dividend) - :func:`_div_floor`, :func:`_round_down`, :func:`_round_up`.
* ``hopper/tile_size.h`` lines 10-54, ``tile_size_fwd_sm90``: the forward's ``(kBlockM, kBlockN)`` for Hopper -
  :func:`tile_size_fwd_sm90`, with the line of the ``return`` it takes; ``hopper/flash_api.cpp`` lines 492-518
  (``round_up_headdim``, ``round_up_headdimv``) and 878-879 (``d_v`` rounded on its own only when it differs
  from ``d``): the head dimensions ``mha_fwd`` hands it (line 418) - :func:`headdims_rounded`.
* ``hopper/flash_api.cpp`` lines 794-805 (``mha_fwd``: a window at least as wide as the sequence becomes
  ``-1``; ``is_causal`` sets ``window_size_right = 0``; one query row and no window is not causal) and lines
  146-160 (``set_params_fprop``: causal iff ``W_l < 0``, ``W_r = 0``, no chunk; local otherwise when any is set;
  ``-1`` becomes ``seqlen_k - 1`` / ``seqlen_q - 1``; a chunk caps both windows at ``attention_chunk - 1``) -
  :func:`kernel_window`, what the kernel is handed for a user's ``(W_l, W_r, attention_chunk, causal)``.

Where this module sits: it is a kernel's scheduling rule executed on integers, as the executors of
:mod:`numeric.attention_local` are; it lives beside them (``numeric`` never imports ``symbolic``) so the tests can
compare the kernel's ranges with the executor's exact visited set, and the models in
:mod:`symbolic.models.attention_local` take FA3's tiles from the same source file without depending on it.

C++ integer semantics are kept where they matter: ``/`` on ``int`` truncates toward zero (:func:`_div_trunc`),
``cute::ceil_div(a, b)`` is ``(a + b - 1) / b`` with that truncation (:func:`_ceil_div`), and
``FastDivmod::divide`` is floor division of a nonnegative dividend (every dividend it gets here is ``>= 0``).
The flags (``is_causal``, ``is_local``, ``pack_gqa``, ...) take ``True`` or ``False`` only
(:func:`base.validate.flag`: a truthy ``'False'`` would pick another branch silently).
"""

from __future__ import annotations

from typing import NamedTuple

from base import validate
from base.errors import BadInput

__all__ = ["KernelWindow", "kernel_window", "n_block_min_max", "m_block_min_max", "Tile", "tile_size_fwd_sm90",
           "round_up_headdim", "round_up_headdimv", "headdims_rounded"]


def _div_trunc(a: int, b: int) -> int:
    """C's ``a / b`` on ``int`` (``b > 0``): truncation toward zero."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _ceil_div(a: int, b: int) -> int:
    """``cute::ceil_div(a, b) = (a + b - 1) / b`` in C ``int`` arithmetic."""
    return _div_trunc(a + b - 1, b)


def _div_floor(divisor: int, dividend: int) -> int:
    """``div_floor`` (hopper/utils.h:103-107): ``dividend >= 0 ? divide(dividend) : -1 - divide(-1 - dividend)``."""
    return dividend // divisor if dividend >= 0 else -1 - (-1 - dividend) // divisor


def _round_down(divisor: int, dividend: int) -> int:
    """``round_down`` (hopper/utils.h:109-112): ``div_floor(divmod, dividend) * divisor``."""
    return _div_floor(divisor, dividend) * divisor


def _round_up(divisor: int, dividend: int) -> int:
    """``round_up`` (hopper/utils.h:114-117): ``div_floor(divmod, dividend - 1) * divisor + divisor``."""
    return _div_floor(divisor, dividend - 1) * divisor + divisor


class KernelWindow(NamedTuple):
    """What ``flash_fwd`` runs with: its ``Is_causal`` and ``Is_local`` template flags and the window sizes and
    chunk of ``params`` (``-1`` already replaced)."""

    is_causal: bool
    is_local: bool
    window_size_left: int
    window_size_right: int
    attention_chunk: int


def kernel_window(seqlen_q: int, seqlen_k: int, window_size_left: int = -1, window_size_right: int = -1,
                  attention_chunk: int = 0, is_causal: bool = False) -> KernelWindow:
    """``mha_fwd``'s normalisation (hopper/flash_api.cpp:796-805) then ``set_params_fprop``'s
    (lines 146-160): the flags and windows the kernel gets for a user's call.  ``-1`` is "no limit"."""
    is_causal = validate.flag("is_causal", is_causal)
    if window_size_left >= seqlen_k - 1:                                  # line 796
        window_size_left = -1
    if window_size_right >= seqlen_q - 1:                                 # line 797
        window_size_right = -1
    if seqlen_q == 1 and window_size_left == -1 and window_size_right == -1 and attention_chunk == 0:
        is_causal = False                                                 # lines 799-802 (one query row)
    if is_causal:                                                         # line 805
        window_size_right = 0
    causal = window_size_left < 0 and window_size_right == 0 and attention_chunk == 0     # line 148
    local = (window_size_left >= 0 or window_size_right >= 0 or attention_chunk >= 1) and not causal   # 149
    if window_size_left < 0:                                              # line 152
        window_size_left = seqlen_k - 1
    if window_size_right < 0:                                             # line 153
        window_size_right = seqlen_q - 1
    if attention_chunk > 0:                                               # lines 154-157
        window_size_left = min(window_size_left, attention_chunk - 1)
        window_size_right = min(window_size_right, attention_chunk - 1)
    return KernelWindow(causal, local, window_size_left, window_size_right, attention_chunk)


def n_block_min_max(seqlen_q: int, seqlen_k: int, m_block: int, kBlockM: int, kBlockN: int, *,
                    is_causal: bool = False, is_local: bool = False, window_size_left: int = 0,
                    window_size_right: int = 0, attention_chunk: int = 0, pack_gqa: bool = False,
                    qhead_per_khead: int = 1, split_idx: int = 0, num_splits: int = 1) -> tuple:
    """``(n_block_min, n_block_max)``: ``get_n_block_min_max`` (hopper/block.h:14-59), line by line.

    With ``pack_gqa`` the rows of a query block are packed ``(position, head)`` pairs, ``qhead_per_khead``
    heads per position (row ``m`` is position ``m // qhead_per_khead``).  ``split_idx`` and ``num_splits`` are
    the plain values (the dynamic-split bits of ``split_idx``'s upper half are 0).  The range is empty when
    ``n_block_max <= n_block_min`` (the kernel then loads nothing: mainloop_fwd_sm90_tma_gmma_ws.hpp:612-617)."""
    for name, v in (("seqlen_q", seqlen_q), ("seqlen_k", seqlen_k), ("kBlockM", kBlockM), ("kBlockN", kBlockN),
                    ("qhead_per_khead", qhead_per_khead), ("num_splits", num_splits)):
        validate.integer(name, v)
    validate.integer("m_block", m_block, 0)
    validate.integer("split_idx", split_idx, 0)
    is_causal, is_local, pack_gqa = (validate.flag(n, v) for n, v in
                                     (("is_causal", is_causal), ("is_local", is_local), ("pack_gqa", pack_gqa)))
    if split_idx >= num_splits:
        raise BadInput("split_idx", f"must be below num_splits={num_splits}, got {split_idx}")
    n_block_max = _ceil_div(seqlen_k, kBlockN)                                        # line 23
    if is_causal or is_local:                                                         # line 24
        m_idx_max = (m_block + 1) * kBlockM                                           # line 25
        if pack_gqa:                                                                  # line 27 (the TODO)
            m_idx_max = (m_idx_max - 1) // qhead_per_khead + 1
        n_idx = m_idx_max + seqlen_k - seqlen_q                                       # line 28
        n_idx_right = n_idx if not is_local else n_idx + window_size_right            # line 29
        if is_local and attention_chunk > 0:                                          # lines 30-32
            n_idx_right = min(n_idx_right, _round_up(attention_chunk, n_idx))
        n_block_max = min(n_block_max, _ceil_div(n_idx_right, kBlockN))               # line 33
    n_block_min = 0                                                                   # line 35
    if is_local:                                                                      # line 36
        m_idx_min = m_block * kBlockM                                                 # line 37
        if pack_gqa:                                                                  # line 38
            m_idx_min = m_idx_min // qhead_per_khead
        n_idx = m_idx_min + seqlen_k - seqlen_q                                       # line 39
        n_idx_left = n_idx - window_size_left                                         # line 40
        if attention_chunk > 0:                                                       # lines 41-43
            n_idx_left = max(n_idx_left, _round_down(attention_chunk, n_idx))
        n_block_min = max(0, _div_trunc(n_idx_left, kBlockN))                         # line 44
    if num_splits > 1:                                                                # lines 47-56 (Split)
        per_split = 0 if n_block_max <= n_block_min else _ceil_div(n_block_max - n_block_min, num_splits)
        n_block_min = n_block_min + split_idx * per_split
        n_block_max = min(n_block_min + per_split, n_block_max)
    return n_block_min, n_block_max


def m_block_min_max(seqlen_q: int, seqlen_k: int, n_block: int, kBlockM: int, kBlockN: int, *,
                    is_causal: bool = False, is_local: bool = False, window_size_left: int = 0,
                    window_size_right: int = 0, sink_token_length: int = 0) -> tuple:
    """``(m_block_min, m_block_max)``: ``get_m_block_min_max`` (hopper/block.h:83-101), the backward pass's
    query blocks for key block ``n_block`` (no ``attention_chunk``: "TODO: support attention_chunk", line 87)."""
    for name, v in (("seqlen_q", seqlen_q), ("seqlen_k", seqlen_k), ("kBlockM", kBlockM), ("kBlockN", kBlockN)):
        validate.integer(name, v)
    validate.integer("n_block", n_block, 0)
    is_causal, is_local = validate.flag("is_causal", is_causal), validate.flag("is_local", is_local)
    m_block_max = _ceil_div(seqlen_q, kBlockM)                                        # line 90
    if is_local and n_block >= _ceil_div(sink_token_length, kBlockN):                 # lines 91-92
        m_block_max = min(m_block_max, _ceil_div((n_block + 1) * kBlockN + seqlen_q - seqlen_k
                                                 + window_size_left, kBlockM))        # line 93
    m_block_min = 0                                                                   # line 96
    if is_causal or is_local:                                                         # line 97
        m_block_min = max(m_block_min, _div_trunc(n_block * kBlockN + seqlen_q - seqlen_k - window_size_right,
                                                  kBlockM))                           # line 98
    return m_block_min, m_block_max


class Tile(NamedTuple):
    """``tile_size_fwd_sm90``'s ``{kBlockM, kBlockN, MmaPV_is_RS, IntraWGOverlap}`` and the source line of the
    ``return`` that produced it."""

    kBlockM: int
    kBlockN: int
    MmaPV_is_RS: bool
    IntraWGOverlap: bool
    line: int


def tile_size_fwd_sm90(headdim: int, headdim_v: int, is_causal: bool, is_local: bool, element_size: int = 2,
                       v_colmajor: bool = False, paged_kv_non_TMA: bool = False, softcap: bool = False) -> Tile:
    """``tile_size_fwd_sm90`` (hopper/tile_size.h:10-54), branch by branch."""
    validate.integer("headdim", headdim)
    validate.integer("headdim_v", headdim_v)
    is_causal, is_local, v_colmajor, paged_kv_non_TMA, softcap = (
        validate.flag(n, v) for n, v in (("is_causal", is_causal), ("is_local", is_local), ("v_colmajor", v_colmajor),
                                         ("paged_kv_non_TMA", paged_kv_non_TMA), ("softcap", softcap)))
    if element_size == 2:                                                             # line 13
        if headdim <= 64:                                                             # line 14
            if headdim_v == 512:
                return Tile(64, 64, False, False, 19)
            if headdim_v == 256:
                return Tile(128, 96, True, False, 21)
            use_blockN_128 = is_causal or is_local or paged_kv_non_TMA                # line 24
            return Tile(192, 128 if use_blockN_128 else 192, use_blockN_128, True, 25)
        if headdim <= 96:
            return Tile(192, 128 if is_local or paged_kv_non_TMA else 144, False, True, 30)
        if headdim <= 128:
            use_blockN_128 = is_causal or is_local or paged_kv_non_TMA                # line 32
            return Tile(128, 128 if use_blockN_128 else 176, True, True, 33)
        if headdim <= 192:
            return Tile(128, 96 if paged_kv_non_TMA or is_local else (128 if headdim_v <= 128 else 112), True, True, 37)
        return Tile(128, 64 if is_local else 80, True, True, 39)
    if headdim <= 64:                                                                 # FP8, line 41
        return Tile(192, 160, True, True, 43)
    if headdim <= 96:
        return Tile(192, 128, True, True, 45)
    if headdim <= 128:
        return Tile(128, 160 if paged_kv_non_TMA else (192 if v_colmajor or (softcap and is_local) else 224), True,
                    True, 47)
    if headdim <= 192:
        return Tile(128, 128 if (paged_kv_non_TMA or softcap) and is_local else 160, True, True, 49)
    return Tile(128, 64 if is_local else 128, True, not paged_kv_non_TMA, 51)


def round_up_headdim(head_size: int) -> int:
    """``round_up_headdim`` (hopper/flash_api.cpp:492-509, every head dimension compiled in): 64, 96, 128, 192, 256."""
    validate.integer("head_size", head_size)
    for r in (64, 96, 128, 192, 256):
        if head_size <= r:
            return r
    return 256


def round_up_headdimv(head_size: int) -> int:
    """``round_up_headdimv`` (hopper/flash_api.cpp:511-518): 64, 96, 128, 192, 256, else 512."""
    validate.integer("head_size", head_size)
    for r in (64, 96, 128, 192, 256):
        if head_size <= r:
            return r
    return 512


def headdims_rounded(d: int, d_v: int) -> tuple:
    """``(d_rounded, dv_rounded)`` as ``mha_fwd`` computes them (hopper/flash_api.cpp:878-879): ``d_v`` takes
    ``d``'s rounding when they are equal, its own otherwise."""
    d_r = round_up_headdim(d)
    return d_r, d_r if d_v == d else round_up_headdimv(d_v)
