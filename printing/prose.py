r"""A model's prose (summaries, sources, notes, regimes, captions) as LaTeX with its math typeset as math.

A model's notes are written in plain text: ``B_r <= N, B_c <= N_k``, ``whole N x N_k matrices``,
``all sizes >= 1``, ``Omega(N^2 d^2 / M)``.  :func:`segments` reads such a line and returns it as runs
of text and of math; in a math run every parameter is written in its own LaTeX form
(:attr:`symbolic.params.Param.latex`), relations and operators as math (``<=`` -> ``\le``, ``x``
between operands -> ``\times``, ``ceil(X)`` -> ``\lceil X \rceil``, ``N^2`` -> ``N^{2}``).  What the
reader sees is ``$B_r \le N$, $B_c \le N_k$``, ``whole $N \times N_k$ matrices``, ``all sizes $\ge 1$``.

The reading is a small grammar, not a guess per character: a math run is an expression -
operands (a parameter, a single-letter name, a number, a code name such as ``step_footprint``, a
bracketed expression, a function call ``min(a, b)``) joined by operators and relations, or by
juxtaposition (``2 M N K``, ``S max(t_x, t_c)``).  What does not parse stays text.  A number alone
(``Theorem 2``, ``100 KB``) stays text; a relation or ``x`` between words is set as math on its own
(``bytes in flight $=$ bandwidth $\times$ latency``).  Inline math the author wrote (``$...$``) is kept
as it is.

Two renderings: :func:`prose` for LaTeX text mode (notes, captions, ``\intertext``), :func:`prose_math`
for math mode (a notebook's ``aligned`` block, which MathJax reads: text runs in ``\text{}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

__all__ = ["segments", "prose", "prose_math", "symbol_latex", "name_math", "sentence_ends"]

#: words set as Greek letters when they stand as operands
GREEK = {name: "\\" + name for name in (
    "alpha", "beta", "gamma", "delta", "epsilon", "lambda", "mu", "sigma", "tau", "theta", "omega",
    "Gamma", "Delta", "Lambda", "Sigma", "Theta", "Omega")}

#: function names read as math when followed directly by ``(``: name -> (before args, after args)
FUNCTIONS = {
    "ceil": (r"\lceil ", r" \rceil"), "floor": (r"\lfloor ", r" \rfloor"), "sqrt": (r"\sqrt{", "}"),
    "min": (r"\min(", ")"), "max": (r"\max(", ")"), "log": (r"\log(", ")"), "exp": (r"\exp(", ")"),
    "Theta": (r"\Theta(", ")"), "Omega": (r"\Omega(", ")"), "O": (r"O(", ")"),
    "softmax": (r"\operatorname{softmax}(", ")"), "rowsum": (r"\operatorname{rowsum}(", ")"),
}

#: single letters that are words, not names: the article, the pronoun, and ``s`` (seconds, as in ``(s)``)
NOT_NAMES = frozenset({"a", "I", "s"})

#: a word before ``x`` that makes ``x`` a name rather than a times sign (``the x chunk``, ``A and x``)
BEFORE_NAME_X = frozenset({"the", "a", "an", "of", "and", "or", "to", "with", "each", "vector", "load",
                           "store", "per", "its", "input", "output"})

#: relations (ASCII and Unicode) -> LaTeX math
RELATIONS = {"<=": r"\le", ">=": r"\ge", "!=": r"\ne", "=": "=", "<": "<", ">": ">", "~": r"\sim",
             "≤": r"\le", "≥": r"\ge", "≠": r"\ne", "≈": r"\approx", "≲": r"\lesssim", "∈": r"\in",
             "in": r"\in", "->": r"\to", "→": r"\to"}

#: binary operators -> LaTeX math (``x`` is one only between operands; ``^`` is handled apart)
OPERATORS = {"+": "+", "-": "-", "*": r"\cdot", "/": "/", "×": r"\times", "÷": r"\div", "·": r"\cdot",
             "x": r"\times", "±": r"\pm"}

_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))

_TOKEN = re.compile(r"""
    (?P<inline>\$[^$]+\$)
  | (?P<path>(?<![\w/])[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)+(?:\.[A-Za-z]{1,4})?(?![\w/]))
  | (?P<space>\s+)
  | (?P<num>\d{1,3}(?:,\d{3})+(?![\d,]\d)(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-zµμ][A-Za-z0-9_µμ]*(?:(?:\.|<[A-Za-z0-9_]+>)[A-Za-z0-9_]+)*)
  | (?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)
  | (?P<op><=|>=|!=|->|\*\*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


_TOKEN_NO_PATH = re.compile(_TOKEN.pattern.replace("(?P<path>", "(?P<nopath>(?!)"), re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class Tok:
    kind: str       # inline, space, num, word, sup, op, other
    text: str


_PATHLIKE = re.compile(r"(?=.*[A-Za-z0-9_.\-]{3})[^/]*/[^/]*/.*|.*\.[A-Za-z]{1,4}")


def _tokens(text: str) -> list[Tok]:
    """Tokens of one line; a path (``csrc/flash_attn/flash_api.cpp``, ``docs/conventions.md``) is one token,
    a slash between plain words (``exp/s``, ``I/O``) is not a path."""
    out = []
    for m in _TOKEN.finditer(text):
        if m.lastgroup == "path" and not _PATHLIKE.fullmatch(m.group()):
            out += [Tok(n.lastgroup, n.group()) for n in _TOKEN_NO_PATH.finditer(m.group())]
        else:
            out.append(Tok(m.lastgroup, m.group()))
    return out


def symbol_latex(name: str) -> str:
    """LaTeX of a name that is not a parameter: ``t_m`` -> ``t_{m}``, ``S_tile`` -> ``S_{\\mathrm{tile}}``."""
    head, sep, tail = name.partition("_")
    if not sep:
        return GREEK.get(name, name)
    sub = tail if len(tail) == 1 or tail.isdigit() else rf"\mathrm{{{tail}}}"
    return f"{GREEK.get(head, head)}_{{{sub}}}"


def name_math(name: str) -> str:
    r"""A code name (``step_footprint``, ``tuning.l2_estimate``) in math mode: upright text pieces with
    the specials between them as math (``\text{step}\_\text{footprint}``), as the formula labels are."""
    from .latex import math_text
    return math_text(name)


_SHORT_SYMBOL = re.compile(r"[A-Za-z]_[A-Za-z0-9]{1,4}")
_CODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._<>][A-Za-z0-9<>]+)*")
_WEAK = re.compile(r"d?[A-Z]{1,2}|[A-Z]d?[A-Z]")


class _Reader:
    """Recursive descent over the tokens of one line; ``parse_run(i)`` reads the longest math run at ``i``."""

    def __init__(self, toks: list[Tok], params: dict):
        self.t, self.params = toks, params

    # ------------------------------------------------------------------ helpers
    def tok(self, i) -> Optional[Tok]:
        return self.t[i] if 0 <= i < len(self.t) else None

    def skip(self, i) -> int:
        while i < len(self.t) and self.t[i].kind == "space":
            i += 1
        return i

    def glued(self, i) -> bool:
        """Is token ``i`` glued (no space) to a word on either side through ``/``, ``-`` or ``'``?"""
        for a, b in ((i - 2, i - 1), (i + 2, i + 1)):
            p, q = self.tok(b), self.tok(a)
            if p is not None and p.text in "/-'" and q is not None and q.kind == "word" \
                    and self.kind_of_word(a) == "word":
                return True
        return False

    def kind_of_word(self, i) -> str:
        """``param``, ``greek``, ``letter``, ``symbol``, ``code``, ``weak`` or ``word`` for word token ``i``."""
        w = self.t[i].text
        if w in self.params:
            return "param"
        nxt, prev = self.tok(i + 1), self.tok(i - 1)
        if w in GREEK:
            return "greek"
        if len(w) == 1 and w.isalpha() and w.isascii():
            if w in NOT_NAMES:
                return "word"
            before = [t for t in self.t[:i] if t.kind != "space"]
            after = [t for t in self.t[i + 1:] if t.kind != "space"][:1]
            if w == "A" and (not before or before[-1].text in ".:;\"“(") and after and after[0].kind == "word" \
                    and after[0].text.islower() and after[0].text not in ("and", "or", "is", "x", "in"):
                return "word"           # the article at the start of a sentence: "A proof for ..."
            if nxt is not None and nxt.text == "." and (self.tok(i + 2) is None or self.tok(i + 2).kind == "space"):
                return "word"           # an initial (J. D. C. Little) or the end of a sentence
            return "letter"
        if _SHORT_SYMBOL.fullmatch(w):
            return "symbol"
        if "_" in w or "<" in w:
            return "code"
        if _WEAK.fullmatch(w) and not (prev is not None and prev.kind == "num"):
            return "weak"
        return "word"

    # ------------------------------------------------------------------ grammar
    def operand(self, i, strong_only=False):
        """An operand at ``i``: ``(end, latex, core)`` or None.  ``core``: it holds a name (not only numbers)."""
        t = self.tok(i)
        if t is None:
            return None
        if t.text == "-" and self.tok(i + 1) is not None and self.tok(i + 1).kind in ("num", "word"):
            got = self.operand(i + 1, strong_only)
            return (got[0], "-" + got[1], got[2]) if got else None
        if t.kind == "num":
            end, tex, core = i + 1, _number(t.text), False
            # juxtaposition with a name glued to the number: 4d
            nxt = self.tok(end)
            if nxt is not None and nxt.kind == "word" and self.kind_of_word(end) in ("param", "letter", "symbol"):
                got = self.operand(end)
                if got:
                    end, tex, core = got[0], tex + got[1], True
            return self.postfix(end, tex, core)
        if t.kind == "word":
            w, kind = t.text, self.kind_of_word(i)
            nxt = self.tok(i + 1)
            if nxt is not None and nxt.text == "(" and w in FUNCTIONS:
                got = self.args(i + 2, ")")
                if got is None:
                    return None
                end, inner, _ = got
                before, after = FUNCTIONS[w]
                return self.postfix(end, before + inner + after, True)
            if kind in ("letter", "symbol", "greek") and self.glued(i):
                return None
            if self.tok(i - 1) is not None and self.tok(i - 1).text == "'":
                return None                              # the course's, the block's
            if kind == "param":
                return self.postfix(i + 1, self.params[w].latex, True)
            if kind in ("letter", "greek", "symbol"):
                return self.postfix(i + 1, symbol_latex(w), True)
            if kind == "code" and not strong_only and not _typewriter(w):
                return self.postfix(i + 1, name_math(w), True)
            if kind == "weak" and nxt is not None and nxt.text == "^":
                return self.postfix(i + 1, w, True)
            return None
        if t.text in ("(", "["):
            close = ")" if t.text == "(" else "]"
            got = self.args(i + 1, close)
            if got is None:
                return None
            end, inner, core = got
            return self.postfix(end, t.text + inner + close, core)
        if t.text in ("⌈", "⌊"):
            close = "⌉" if t.text == "⌈" else "⌋"
            got = self.args(i + 1, close)
            if got is None:
                return None
            end, inner, _ = got
            a, b = (r"\lceil ", r" \rceil") if t.text == "⌈" else (r"\lfloor ", r" \rfloor")
            return self.postfix(end, a + inner + b, True)
        if t.text in ("Θ", "Ω") and self.tok(i + 1) is not None and self.tok(i + 1).text == "(":
            got = self.args(i + 2, ")")
            if got is None:
                return None
            end, inner, _ = got
            return self.postfix(end, (r"\Theta(" if t.text == "Θ" else r"\Omega(") + inner + ")", True)
        return None

    def postfix(self, end, tex, core):
        """Exponents after an operand: ``^2``, ``^{...}``, ``**2``, ``²``."""
        t = self.tok(end)
        if t is not None and t.kind == "sup":
            return end + 1, f"{tex}^{{{''.join(_SUPERSCRIPTS[c] for c in t.text)}}}", core
        if t is not None and t.text in ("^", "**"):
            got = self.operand(end + 1, strong_only=True)
            if got is None:
                return end, tex, core
            e_end, e_tex, _ = got
            if e_tex.startswith("(") and e_tex.endswith(")"):
                e_tex = e_tex[1:-1]
            return e_end, f"{tex}^{{{e_tex}}}", core
        return end, tex, core

    def args(self, i, close):
        """Comma-separated expressions up to ``close``: ``(end after close, latex, core)`` or None."""
        parts, core = [], False
        while True:
            j = self.skip(i)
            got = self.expr(j)
            if got is None:
                return None
            j, tex, c = got
            parts.append(tex)
            core = core or c
            j = self.skip(j)
            t = self.tok(j)
            if t is None:
                return None
            if t.text == ",":
                i = j + 1
                continue
            if t.text == close:
                return j + 1, ", ".join(parts), core
            return None

    def binary(self, i, prev_end):
        """An operator or relation at ``i`` (after skipping space): ``(end, latex)`` or None."""
        j = self.skip(i)
        t = self.tok(j)
        if t is None:
            return None
        spaced = j > i
        if t.kind == "op" or t.kind == "other" or (t.kind == "word" and t.text in ("x", "in")):
            sym = t.text
            if sym in RELATIONS:
                return j + 1, RELATIONS[sym]
            if sym == "x":
                after = self.tok(j + 1)
                if not (spaced and after is not None and after.kind == "space"):
                    return None
                return j + 1, OPERATORS["x"]
            if sym in OPERATORS:
                after = self.tok(j + 1)
                if sym in "-/" and not spaced and after is not None and after.kind == "word" \
                        and self.kind_of_word(j + 1) == "word":
                    return None                       # K-step, exp/s: a compound word
                return j + 1, OPERATORS[sym]
        return None

    def expr(self, i):
        """Operands joined by operators, relations or juxtaposition: ``(end, latex, core)`` or None."""
        got = self.operand(i)
        if got is None:
            return None
        end, tex, core = got
        parts = [tex]
        while True:
            op = self.binary(end, end)
            if op is not None:
                o_end, o_tex = op
                right = self.operand(self.skip(o_end))
                if right is not None:
                    end, r_tex, r_core = right
                    parts += [o_tex, r_tex]
                    core = core or r_core or o_tex in RELATIONS.values() and o_tex not in ("=", "<", ">")
                    continue
                if o_tex != OPERATORS["x"]:
                    break
            # juxtaposition: ``2 M N K``, ``S max(...)``, ``(B_M + B_N) B_K``; a number never follows
            j = self.skip(end)
            t = self.tok(j)
            if t is None or t.kind != "word" or j == end:
                break
            if self.kind_of_word(j) in ("param", "letter", "symbol", "greek") \
                    or (t.text in FUNCTIONS and self.tok(j + 1) is not None and self.tok(j + 1).text == "("):
                right = self.operand(j, strong_only=True)
                if right is None:
                    break
                end, r_tex, _ = right
                parts.append(r_tex)
                core = True
                continue
            break
        return end, " ".join(parts), core


def _number(text: str) -> str:
    if "," in text:
        return text.replace(",", "{,}")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)[eE]([+-]?\d+)", text)
    if m:
        return rf"{m.group(1)} \cdot 10^{{{int(m.group(2))}}}"
    return text


def _quotes(text: str) -> str:
    """Straight double quotes in pairs -> the opening and closing quote characters (escaped as TeX's quotes)."""
    out, open_ = [], True
    for ch in text:
        if ch == '"':
            out.append("“" if open_ else "”")
            open_ = not open_
        else:
            out.append(ch)
    return "".join(out)


def segments(text: str, params: Iterable = ()) -> list[tuple[bool, str]]:
    """``text`` as ``[(is_math, piece), ...]``: math pieces are LaTeX math (no ``$``), text pieces are
    plain text still to be escaped, and ``is_math`` ``None`` marks a path or code name to set verbatim
    (``\\path{...}``, url's: typewriter, breakable after ``/``, ``.`` and ``_``).  ``params`` (:class:`~symbolic.params.Param` objects) give their
    names' LaTeX forms; other names get :func:`symbol_latex`."""
    table = {p.name: p for p in params}
    toks = _tokens(_quotes(str(text)))
    r = _Reader(toks, table)
    out: list[tuple[bool, str]] = []

    def add(is_math: bool, piece: str):
        if out and out[-1][0] == is_math and not is_math:
            out[-1] = (False, out[-1][1] + piece)
        else:
            out.append((is_math, piece))

    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "inline":
            out.append((True, t.text[1:-1].strip()))
            i += 1
            continue
        if t.kind == "word" and t.text == "x" and _spaced(toks, i) and i >= 2 and toks[i - 2].kind == "word" \
                and r.kind_of_word(i - 2) == "word" and toks[i - 2].text.lower() not in BEFORE_NAME_X \
                and i + 2 < len(toks) and toks[i + 2].kind == "word" and r.kind_of_word(i + 2) == "word":
            add(True, r"\times")
            i += 1
            continue
        if t.text in ("->", "→"):
            add(True, r"\to")
            i += 1
            continue
        if t.kind == "path" or (t.kind == "word" and r.kind_of_word(i) == "code" and _typewriter(t.text)):
            name, i = t.text, i + 1
            if i + 1 < len(toks) and toks[i].text == "(" and toks[i + 1].text == ")":
                name, i = name + "()", i + 2              # a function's name: cublas<t>gemv()
            out.append((None, name))
            continue
        got = None
        if t.kind in ("word", "num", "other"):
            got = r.expr(i)
        if got is not None and got[2]:
            end, tex, _ = got
            # a run never ends on a bracket it did not open: trailing ')' stays text (handled by the grammar)
            add(True, tex)
            i = end
            continue
        # a relation or a times sign standing between words: math on its own
        if t.kind in ("op", "other") and t.text in RELATIONS and _spaced(toks, i):
            right = r.expr(r.skip(i + 1))
            if right is not None:
                add(True, RELATIONS[t.text] + " " + right[1])
                i = right[0]
            else:
                add(True, RELATIONS[t.text])
                i += 1
            continue
        if t.kind == "word" and r.kind_of_word(i) in ("code",):
            add(True, name_math(t.text))
            i += 1
            continue
        add(False, t.text)
        i += 1
    return out


def _typewriter(name: str) -> bool:
    """A code name set as a path (typewriter): a dotted module name or a constant in capitals."""
    return "." in name or "<" in name or (name.upper() == name and "_" in name)


def _spaced(toks, i) -> bool:
    before = toks[i - 1] if i > 0 else None
    after = toks[i + 1] if i + 1 < len(toks) else None
    return (before is None or before.kind == "space") and (after is None or after.kind == "space")


def _path(name: str, moving: bool = False) -> str:
    """``\\path`` with a delimiter the name does not hold (url's verbatim: no escaping inside, breaks after
    ``/`` and ``.``); in a moving argument (a caption) ``\\texttt{\\detokenize{...}}``, which survives it."""
    if moving:
        return rf"\texttt{{\detokenize{{{name}}}}}"
    delim = next(c for c in "|!+=@;" if c not in name)
    return rf"\path{delim}{name}{delim}"


def _dashes(tex: str) -> str:
    """Typographic dashes in prose: a spaced hyphen between words is an em dash (``exact---the misses``),
    one between numbers an en dash (pages ``383--387``, lines ``944--987``)."""
    return re.sub(r"(?<=\d)-(?=\d)", "--", re.sub(r"(?<=\w) - (?=\w)", "---", tex))


_CAPITAL_STOP = re.compile(r"(?<=[A-Z]{2})\.(?=\s|$)")      # an acronym (HBM.), not an initial (J. D.)


def sentence_ends(tex: str) -> str:
    """``\\@`` before a full stop that follows a capital letter (``HBM.``): TeX would take it for an
    abbreviation's and space it as within a sentence."""
    return _CAPITAL_STOP.sub(r"\\@.", tex)


def prose(text: str, params: Iterable = (), moving: bool = False) -> str:
    """``text`` for LaTeX text mode: text escaped, math between ``$``; ``moving=True`` for a caption (no
    verbatim ``\\path`` in it)."""
    from .latex import escape
    out = []
    for is_math, piece in segments(text, params):
        if is_math is None:
            out.append(_path(piece, moving))
        elif is_math:
            out.append(f"${piece}$")
        else:         # a unit (exp/s, FLOP/byte) may break after its slash; a capital ends a sentence (HBM.)
            out.append(sentence_ends(_dashes(escape(piece)).replace("/", r"/\allowbreak{}")))
    return "".join(out)


def prose_math(text: str, params: Iterable = ()) -> str:
    r"""``text`` for math mode (a notebook's ``aligned`` block): text runs in ``\text{}``, math as it is."""
    from .latex import math_text
    out = []
    for is_math, piece in segments(text, params):
        if is_math is None:
            out.append(math_text(piece))
        elif is_math:
            out.append(piece + " ")
        else:
            out.append(math_text(piece))
    return "".join(out).rstrip()
