r"""The one glyph table: every non-ASCII character the printers write, in each output's form.

Each :class:`Glyph` names a character (``≤``) and how it is spelled

* in ``ascii`` - a terminal that cannot show Unicode (``<=``);
* in LaTeX ``math`` mode - formulas, and the labels of a notebook's ``aligned`` block (``\le``);
  ``None`` where the character is punctuation that reads the same as its ASCII spelling inside
  ``\text{}`` (quotes, a non-breaking space);
* in LaTeX ``text`` mode - the notes' prose (``$\le$``; by default the math form between ``$``).

The text printer (:mod:`.text`), the LaTeX printer and escaper (:mod:`.latex`) and through them the
table renderer (:mod:`.tables`) all read this table, so the outputs cannot disagree about a character
(before it, the notebook labels printed ``≲`` as ``[U+2272]`` while the other printers spelled it).
Superscript digits form runs: ``N⁻¹`` is ``N^-1`` in ASCII, ``N^{-1}`` in math and
``N\textsuperscript{-1}`` in text (see :func:`superscript_runs`).

The ASCII characters that LaTeX treats specially have a math and a text form too
(:data:`TEX_TEXT`, :data:`TEX_MATH`), and the relations that printed lines use (``<=``, ``in``, ``~``)
are in :data:`RELATIONS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Optional

from base.errors import BadInput

__all__ = ["Glyph", "GLYPHS", "SUPERSCRIPTS", "RELATIONS", "TEX_TEXT", "TEX_MATH", "superscript_runs", "pieces", "Superscript",
           "to_ascii", "tex_text", "tex_math", "relation"]


@dataclass(frozen=True)
class Glyph:
    char: str
    ascii: str
    math: Optional[str]
    text: Optional[str] = None     # None: ``$<math>$``

    @property
    def tex_text(self) -> str:
        if self.text is not None:
            return self.text
        return f"${self.math}$" if self.math is not None else self.ascii


def _table(*glyphs: Glyph) -> MappingProxyType:
    out = {}
    for g in glyphs:
        assert len(g.char) == 1 and g.char not in out and g.ascii.isascii()
        assert (g.math is None or g.math.isascii()) and g.tex_text.isascii()
        out[g.char] = g
    return MappingProxyType(out)


#: superscript character -> its plain character (``²`` -> ``2``)
SUPERSCRIPTS = MappingProxyType(dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")))

#: every non-ASCII character the project prints, by character
GLYPHS = _table(
    # operators and relations
    Glyph("÷", "/", r"\div"),
    Glyph("×", "x", r"\times"),
    Glyph("·", "*", r"\cdot"),
    Glyph("≈", "~", r"\approx"),
    Glyph("≲", "<~", r"\lesssim"),
    Glyph("≤", "<=", r"\le"),
    Glyph("≥", ">=", r"\ge"),
    Glyph("≠", "!=", r"\ne"),
    Glyph("∈", "in", r"\in"),
    Glyph("±", "+-", r"\pm"),
    Glyph("→", "->", r"\to"),
    Glyph("←", "<-", r"\leftarrow"),
    Glyph("∞", "inf", r"\infty"),
    Glyph("√", "sqrt", r"\surd"),
    # brackets of the rounding functions
    Glyph("⌈", "ceil(", r"\lceil"),
    Glyph("⌉", ")", r"\rceil"),
    Glyph("⌊", "floor(", r"\lfloor"),
    Glyph("⌋", ")", r"\rfloor"),
    # Greek (µ is the micro sign U+00B5, μ the letter U+03BC: both appear in units)
    Glyph("Θ", "Theta", r"\Theta"),
    Glyph("Ω", "Omega", r"\Omega"),
    Glyph("Σ", "Sum", r"\Sigma"),
    Glyph("λ", "lambda", r"\lambda"),
    Glyph("µ", "u", r"\mu"),
    Glyph("μ", "u", r"\mu"),
    # typography
    Glyph("–", "-", "-", "--"),
    Glyph("—", "--", "-", "---"),
    Glyph("−", "-", "-", "-"),
    Glyph("‘", "'", None, "`"),
    Glyph("’", "'", None, "'"),
    Glyph("“", '"', None, "``"),
    Glyph("”", '"', None, "''"),
    Glyph("…", "...", r"\ldots", r"\ldots{}"),
    Glyph("§", "sec. ", r"\S", r"\S{}"),
    Glyph("°", " deg", r"^{\circ}", r"\textdegree{}"),
    Glyph("\u00a0", " ", None, "~"),
    # superscripts: single ones here; runs are handled by superscript_runs
    *(Glyph(s, "^" + p, f"^{{{p}}}", rf"\textsuperscript{{{p}}}") for s, p in SUPERSCRIPTS.items()),
)

#: ASCII characters that LaTeX treats specially, in text mode
TEX_TEXT = MappingProxyType({
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
})

#: ASCII characters that may not stand inside ``\text{}`` when MathJax reads it, as math markup
TEX_MATH = MappingProxyType({
    "_": r"\_", "%": r"\%", "&": r"\&", "$": r"\$", "#": r"\#", "{": r"\{", "}": r"\}", "\\": r"\backslash",
    "^": r"\hat{}", "~": r"\sim", "<": "<", ">": ">", "|": "|",
})

#: a printed line's relation (the keys :mod:`.content` uses, and SymPy's ``rel_op``) -> its character
RELATIONS = MappingProxyType({"=": "=", "==": "=", "!=": "≠", "<=": "≤", ">=": "≥", "<": "<", ">": ">",
                              "in": "∈", "~": "~"})

_SUPERSCRIPT_RUN = re.compile("[" + "".join(SUPERSCRIPTS) + "]+")


def superscript_runs(text: str, form) -> str:
    """``text`` with each run of superscript characters replaced by ``form(plain)`` (``"-1"`` for ``⁻¹``)."""
    return _SUPERSCRIPT_RUN.sub(lambda m: form("".join(SUPERSCRIPTS[c] for c in m.group())), str(text))


class Superscript(str):
    """A run of superscript characters, as its plain text (``⁻¹`` -> ``Superscript("-1")``)."""


def pieces(text: str) -> list:
    """``text`` as single characters, with each superscript run as one :class:`Superscript`."""
    text, out, last = str(text), [], 0
    for m in _SUPERSCRIPT_RUN.finditer(text):
        out += list(text[last:m.start()])
        out.append(Superscript("".join(SUPERSCRIPTS[c] for c in m.group())))
        last = m.end()
    return out + list(text[last:])


_ASCII = str.maketrans({c: g.ascii for c, g in GLYPHS.items() if c not in SUPERSCRIPTS})


def to_ascii(text: str) -> str:
    """``text`` with every glyph spelled in ASCII (``'Θ(N²) ≈ 4.56 µs'`` -> ``'Theta(N^2) ~ 4.56 us'``);
    any other character is left as it is."""
    return superscript_runs(text, lambda p: "^" + p).translate(_ASCII)


def tex_text(ch: str) -> Optional[str]:
    """The LaTeX text-mode form of one character (special ASCII or glyph); ``None`` for a plain one."""
    if ch in TEX_TEXT:
        return TEX_TEXT[ch]
    g = GLYPHS.get(ch)
    return g.tex_text if g is not None else None


def tex_math(ch: str) -> Optional[str]:
    """The LaTeX math-mode form of one character; ``None`` for a plain one (or punctuation whose
    ASCII spelling stands in ``\\text{}``, see :attr:`Glyph.math`)."""
    if ch in TEX_MATH:
        return TEX_MATH[ch]
    g = GLYPHS.get(ch)
    return g.math if g is not None else None


def relation(rel: str, target: str = "unicode") -> str:
    """A relation in ``unicode``, ``ascii`` or ``latex`` (math): ``"<="`` -> ``≤``, ``<=``, ``\\le``."""
    ch = RELATIONS.get(rel, rel)
    if target == "unicode":
        return ch
    if target == "ascii":
        return to_ascii(ch)
    if target == "latex":
        return tex_math(ch) or ch if len(ch) == 1 else ch
    raise BadInput("target", f"must be unicode, ascii or latex, got {target!r}")
