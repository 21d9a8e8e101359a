r"""LaTeX for cost expressions and models: ``\left\lceil \frac{N}{B_c} \right\rceil``, ``\Theta\left(…\right)``.

:class:`TileboundLatexPrinter` subclasses SymPy's ``LatexPrinter`` and overrides only what the
project's notation needs (``_print_ceiling``, ``_print_floor``, ``_print_Theta``, ``_print_Omega``,
a parameter's own LaTeX form, :attr:`symbolic.params.Param.latex`); every option is declared in
``_default_settings`` and an unknown one raises ``TypeError``.  ``to_latex`` returns a string,
``print_latex`` prints it, ``model_to_latex`` renders a model's sections (the content tree of
:mod:`printing.content`) as an ``align`` (or ``align*`` / ``aligned``) environment, :func:`escape` makes
any text safe for pdfLaTeX, and :func:`note_to_latex` / :func:`note_to_math` render a
:class:`symbolic.notes.Note` piece by piece - text as text, math by this printer, code as code - in text
and in math mode.
"""

from __future__ import annotations

import re
from types import MappingProxyType

import sympy as sp
from sympy.printing.latex import LatexPrinter

from base.errors import BadInput

from symbolic.notes import Code, as_note
from symbolic.params import Param

from .content import model_printout
from .glyphs import GLYPHS as GLYPH_TABLE
from .glyphs import RELATIONS as GLYPH_RELATIONS
from .glyphs import TEX_MATH, Superscript, pieces, relation, tex_math, tex_text

__all__ = ["TileboundLatexPrinter", "to_latex", "print_latex", "model_to_latex", "sections_to_latex", "escape",
           "math_text", "note_to_latex", "note_to_math", "text_to_latex", "code_to_latex", "code_to_math",
           "sentence_ends", "ENVIRONMENTS"]

#: environment -> whether it is a display of its own (``align``) or sits inside ``$$…$$`` (``aligned``)
ENVIRONMENTS = MappingProxyType({"align": True, "align*": True, "aligned": False})

#: relation -> LaTeX (from the one glyph table)
RELATIONS = MappingProxyType({r: relation(r, "latex") for r in GLYPH_RELATIONS})


def escape(text: str) -> str:
    """Plain text -> pdfLaTeX-safe text: special characters escaped, every character of the glyph
    table in its text-mode form (superscript runs as ``\\textsuperscript``), and any other non-ASCII
    character written as its code point so the document still compiles."""
    out = []
    for ch in pieces(text):
        if isinstance(ch, Superscript):
            out.append(rf"\textsuperscript{{{ch}}}")
            continue
        tex = tex_text(ch)
        out.append(tex if tex is not None else ch if ord(ch) <= 127 else f"[U+{ord(ch):04X}]")
    return "".join(out)


class TileboundLatexPrinter(LatexPrinter):
    r"""SymPy's LaTeX printer with the project's notation (``\lceil``, ``\Theta``, ``B_r``)."""

    printmethod = "_tilebound_latex"
    _default_settings = dict(LatexPrinter._default_settings)

    def _print_Symbol(self, expr, style="plain"):
        if isinstance(expr, Param):
            return expr.latex
        return super()._print_Symbol(expr, style=style)

    def _print_Basic(self, expr):
        # SymPy's own atoms (oo, -oo, pi) carry their LaTeX in a ``_latex`` method, SymPy's print method:
        # this printer's is ``_tilebound_latex``, so ask ``_latex`` before the fallback (``\text{Infinity}``)
        if hasattr(expr, "_latex"):
            return expr._latex(self)
        return super()._print_Basic(expr)

    def _print_Quantity(self, expr):
        """A quantity's name (:class:`printing.content.Quantity`) as the formula labels set it: upright text."""
        return math_text(expr.name)

    def _print_ceiling(self, expr, exp=None):
        tex = rf"\left\lceil {self._print(expr.args[0])} \right\rceil"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _print_floor(self, expr, exp=None):
        tex = rf"\left\lfloor {self._print(expr.args[0])} \right\rfloor"
        return f"{tex}^{{{exp}}}" if exp else tex

    def _print_Theta(self, expr, exp=None):
        return rf"\Theta\left({self._print(expr.args[0])}\right)"

    def _print_Omega(self, expr, exp=None):
        return rf"\Omega\left({self._print(expr.args[0])}\right)"


def to_latex(expr, **settings) -> str:
    """LaTeX of ``expr`` (math mode, no delimiters); settings as SymPy's ``latex()``."""
    return TileboundLatexPrinter(settings).doprint(sp.sympify(expr))


def print_latex(expr, **settings) -> None:
    print(to_latex(expr, **settings))


# ----------------------------------------------------------------------------- breaking long formulas
#: break points the marking printer leaves in its output (control characters, never in LaTeX text):
#: before a sum's ``+``/``-``, between a product's factors, after a function argument's comma
_BEFORE_OP, _BETWEEN_FACTORS, _AFTER_COMMA = "\x1f", "\x1e", "\x1d"
_MARKS = _BEFORE_OP + _BETWEEN_FACTORS + _AFTER_COMMA

#: the width (in :func:`latex_width` units, about one character of 10pt math) a formula's right-hand
#: side may take before it is broken; chosen so that label, formula and unit fit a portrait A4 page
#: with 2.5 cm margins (the fragments' target) and a fortiori the notes' landscape page
BREAK_AT = 64
#: a line ends at the shallowest break point that leaves it at least this share of the width
SHORTEST = 0.45
#: preference among break points at one depth: before a sum's operator, after a comma, between factors
_PENALTY = {_BEFORE_OP: 0, _AFTER_COMMA: 1, _BETWEEN_FACTORS: 3, "": 0}


class _MarkingPrinter(TileboundLatexPrinter):
    r"""The project's printer, leaving break points in its output.  One change of form: a fraction
    whose numerator is wider than ``long_numerator`` is set as ``\frac{1}{den} \left(num\right)``,
    which can break inside its numerator.  Built with ``marks=False`` it prints the same text without the
    marks (``test_latex_breaking`` checks both: the marks removed, the texts agree)."""

    _default_settings = dict(TileboundLatexPrinter._default_settings, long_numerator=None)

    def __init__(self, settings=None, marks: bool = True):
        settings = dict(settings or {})
        self._marks = marks
        settings.setdefault("mul_symbol", " " + (_BETWEEN_FACTORS if marks else ""))
        super().__init__(settings)

    def _mark(self, m: str) -> str:
        return m if self._marks else ""

    def _print_Mul(self, expr):
        from sympy.simplify import fraction
        limit = self._settings["long_numerator"]
        e, sign = expr, ""
        if limit is not None and e.could_extract_minus_sign():
            e, sign = -e, "- "
        if limit is not None and e.is_Mul:
            numer, denom = fraction(e, exact=True)
            if denom is not sp.S.One:
                num_tex, den_tex = self._print(numer), self._print(denom)
                if max(latex_width(num_tex), latex_width(den_tex)) > limit:   # a flat, breakable quotient
                    def part(x, tex):
                        return tex if x.is_Atom or isinstance(x, sp.Function) else r"\left(%s\right)" % tex
                    return sign + part(numer, num_tex) + self._mark(_BEFORE_OP) + " / " + part(denom, den_tex)
        return super()._print_Mul(expr)

    def _print_Piecewise(self, expr):
        limit = self._settings["long_numerator"]
        if limit is None:
            return super()._print_Piecewise(expr)
        rows = []
        for e, c in expr.args:
            cond = r"\text{otherwise}" if c is sp.true else r"\text{for}\: " + self._print(c)
            # each branch broken on its own: rows of the cases environment with an empty condition cell
            pieces = break_latex(e, max(24.0, limit / 0.6 - latex_width(cond) - 4))
            rows.append(r" \\ \quad ".join(pieces) + " & " + cond)
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"

    def _print_Add(self, expr, order=None):      # SymPy's own, with a mark before each operator
        terms = self._as_ordered_terms(expr, order=order)
        tex = ""
        for i, term in enumerate(terms):
            if i == 0:
                pass
            elif term.could_extract_minus_sign():
                tex += self._mark(_BEFORE_OP) + " - "
                term = -term
            else:
                tex += self._mark(_BEFORE_OP) + " + "
            term_tex = self._print(term)
            if self._needs_add_brackets(term):
                term_tex = r"\left(%s\right)" % term_tex
            tex += term_tex
        return tex

    def _minmax(self, expr, exp=None):
        args = sorted(expr.args, key=sp.default_sort_key)
        sep = ", " + self._mark(_AFTER_COMMA)
        tex = r"\%s\left(%s\right)" % (str(expr.func).lower(), sep.join(self._print(a) for a in args))
        return r"%s^{%s}" % (tex, exp) if exp is not None else tex

    _print_Min = _minmax
    _print_Max = _minmax


_CONTROL = re.compile(r"\\([A-Za-z]+|.)")
_WIDE = {"min": 3, "max": 3, "sum": 2, "lceil": 0.6, "rceil": 0.6, "lfloor": 0.6, "rfloor": 0.6,
         "cdot": 1.5, "times": 1.5, "le": 2, "ge": 2, "sim": 2, "in": 2, "quad": 2, "Theta": 1, "Omega": 1,
         "infty": 1.2, "sqrt": 1, "mathrm": 0, "text": 0, "frac": 0, "left": 0, "right": 0, "operatorname": 0}


def _group(tex: str, i: int) -> int:
    """Index after the brace group starting at ``tex[i] == '{'``."""
    depth = 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def latex_width(tex: str, scale: float = 1.0) -> float:
    """Rough printed width of math ``tex`` in characters: a fraction is as wide as its wider part, sub-
    and superscripts count 0.7, ``\\left``/``\\right`` nothing, a binary operator with its spacing 2.
    A proxy, calibrated against pdflatex's overfull-box report on the notes (0 overfull boxes)."""
    tex = tex.translate({ord(c): None for c in _MARKS})
    w, i = 0.0, 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = _CONTROL.match(tex, i)
            word = m.group(1)
            i = m.end()
            if word == "frac" and i < len(tex) and tex[i] == "{":
                j = _group(tex, i)
                k = _group(tex, j)
                w += max(latex_width(tex[i + 1:j - 1], scale * 0.9), latex_width(tex[j + 1:k - 1], scale * 0.9)) + 0.4 * scale
                i = k
            elif word in ("text", "mathrm", "operatorname") and i < len(tex) and tex[i] == "{":
                j = _group(tex, i)
                w += len(tex[i + 1:j - 1]) * scale
                i = j
            elif word in ("left", "right"):
                if i < len(tex) and tex[i] == "\\":
                    m = _CONTROL.match(tex, i)
                    w += (0.6 if m.group(1) != "." else 0) * scale
                    i = m.end()
                else:
                    w += (0.6 if i < len(tex) and tex[i] != "." else 0) * scale
                    i += 1
            else:
                w += _WIDE.get(word, 1.0) * scale
            continue
        if c in "_^":
            i += 1
            if i < len(tex) and tex[i] == "{":
                j = _group(tex, i)
                w += latex_width(tex[i + 1:j - 1], scale * 0.7)
                i = j
            elif i < len(tex):
                w += 0.7 * scale
                i += 1
            continue
        if c in "{} ":
            i += 1
            continue
        w += (2.0 if c in "+-=<>" else 0.6 if c in "(),." else 1.35 if c.isupper() else 1.0) * scale
        i += 1
    return w


_DELIM = re.compile(r"\\(left|right)(\\[A-Za-z]+|\\[{}|]|[()\[\].|/])")


def _chunks(marked: str) -> list[tuple[str, str, int]]:
    """Split printed math at its break points at brace depth 0: ``[(mark, text, open \\left count), ...]``;
    ``mark`` is the break point the chunk starts after ('' for the first), the count is of the
    ``\\left`` delimiters open at that break point."""
    out, buf, depth, lefts, mark = [], [], 0, 0, ""
    i = 0
    while i < len(marked):
        c = marked[i]
        if c == "\\":
            m = _DELIM.match(marked, i)
            if m:
                if depth == 0:
                    lefts += 1 if m.group(1) == "left" else -1
                buf.append(m.group())
                i = m.end()
                continue
            m = _CONTROL.match(marked, i)
            if m.group(1) in ("begin", "end"):    # no break inside an environment (cases)
                depth += 1 if m.group(1) == "begin" else -1
            buf.append(m.group())
            i = m.end()
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c in _MARKS:
            if depth == 0:
                out.append((mark, "".join(buf), lefts))
                buf, mark = [], c
            i += 1
            continue
        buf.append(c)
        i += 1
    out.append((mark, "".join(buf), lefts))
    # the count stored with a chunk is the one open *before* it: shift by one
    fixed, before = [], 0
    for mk, text, after in out:
        fixed.append((mk, text, before))
        before = after
    return fixed


class _ValueMarkingPrinter(_MarkingPrinter):
    """:class:`_MarkingPrinter` printing each parameter of ``values`` as its value (a worked calculation)."""

    def __init__(self, values, settings=None, marks: bool = True):
        super().__init__(settings, marks)
        self._values = values

    def _print_Symbol(self, expr, style="plain"):
        from fractions import Fraction
        if isinstance(expr, Param) and expr.name in self._values:
            v = self._values[expr.name]
            return to_latex(sp.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else sp.Integer(v))
        return super()._print_Symbol(expr, style=style)


def _printer(values, settings, marks):
    return _MarkingPrinter(settings, marks) if values is None else _ValueMarkingPrinter(values, settings, marks)


def break_latex(expr, width: float = BREAK_AT, values=None, **settings) -> list[str]:
    r"""``expr`` as LaTeX lines no wider than ``width`` (:func:`latex_width`) where it can be broken: at
    any depth, before a sum's operator, between a product's factors (the next line starts with
    ``\cdot``) or after a ``\min``/``\max`` argument.  A break inside ``\left( ... \right)`` closes the
    line with ``\right.`` and opens the next with ``\left.``, so each line is balanced on its own.  A
    fraction, a sub- or superscript is never broken.  One line when it fits.  With ``values``
    (``{parameter name: number}``) each parameter prints as its value: a worked calculation's middle line."""
    expr = sp.sympify(expr)
    plain = to_latex(expr, **settings) if values is None else _printer(values, settings, False).doprint(expr)
    if latex_width(plain) <= width:
        return [plain]
    marked = _printer(values, {"long_numerator": width * 0.6, **settings}, True).doprint(expr)
    chunks = _chunks(marked)
    widths = [latex_width(text) for _, text, _ in chunks]
    # choose where each line ends: among the break points that leave the line at least SHORTEST of the
    # width, the shallowest (fewest open \left's; a sum before a comma before a product), then the last
    ends, start = [], 0
    while start < len(chunks):
        used, k, best = widths[start], start + 1, None
        while k < len(chunks) and used + widths[k] <= width:
            used += widths[k]
            k += 1
        if k >= len(chunks):
            break
        cands = []
        acc = widths[start]
        for b in range(start + 1, k + 1):       # a break before chunk b
            if acc >= SHORTEST * width or b == k:
                mark, _, depth = chunks[b]
                cands.append((depth * 10 + _PENALTY[mark], -b, b))
            if b < k:
                acc += widths[b]
        best = min(cands)[2] if cands else k
        ends.append(best)
        start = best
    bounds = [0, *ends, len(chunks)]
    out = []
    for n in range(len(bounds) - 1):
        lo, hi = bounds[n], bounds[n + 1]
        mark, text, opened = chunks[lo]
        first = (r"\cdot " if lo and mark == _BETWEEN_FACTORS else "") + (text.lstrip() if lo else text)
        body = first + "".join(t for _, t, _ in chunks[lo + 1:hi])
        head = r"\left. " * opened if lo else ""
        tail = r" \right." * chunks[hi][2] if hi < len(chunks) else ""
        out.append(head + body.rstrip() + tail)
    return out


def unmarked(tex: str) -> str:
    """Printed math with the break points removed (what :func:`to_latex` prints)."""
    return tex.translate({ord(c): None for c in _MARKS})


def math_text(text: str) -> str:
    r"""Text for math mode that pdfLaTeX and a notebook's MathJax both read: plain runs in ``\text{}``,
    every special character and glyph as math markup between them (``t_compute`` ->
    ``\text{t}\_\text{compute}``, ``≲`` -> ``\lesssim``, ``N⁻¹`` -> ``\text{N}^{-1}``)."""
    out, run = [], []

    def flush():
        if run:
            out.append(rf"\text{{{''.join(run)}}}")
            run.clear()

    def markup(tex: str):
        flush()
        out.append(tex + (" " if tex[-1:].isalpha() else ""))

    for ch in pieces(text):
        if isinstance(ch, Superscript):
            markup(f"^{{{ch}}}")
            continue
        tex = tex_math(ch)
        if tex is not None:
            markup(tex)
        elif ch in GLYPH_TABLE:            # punctuation whose ASCII spelling reads the same in \text{}
            run.append(GLYPH_TABLE[ch].ascii)
        elif ord(ch) > 127:
            run.append(f"[U+{ord(ch):04X}]")
        else:
            run.append(ch)
    flush()
    return "".join(out).rstrip()


# ----------------------------------------------------------------------------------- notes
_CAPITAL_STOP = re.compile(r"(?<=[A-Z]{2})\.(?=\s|$)")      # an acronym (HBM.), not an initial (J. D.)


def sentence_ends(tex: str) -> str:
    """``\\@`` before a full stop that follows two capitals (``HBM.``): TeX would take it for an
    abbreviation's and space it as within a sentence."""
    return _CAPITAL_STOP.sub(r"\\@.", tex)


def _quotes(text: str) -> str:
    """Straight double quotes in pairs -> the opening and closing quote characters (TeX's ``````, ``''``)."""
    out, open_ = [], True
    for ch in text:
        if ch == '"':
            out.append("“" if open_ else "”")
            open_ = not open_
        else:
            out.append(ch)
    return "".join(out)


def text_to_latex(text: str) -> str:
    r"""A note's text piece for LaTeX text mode: escaped (:func:`escape`), with the typography a typeset
    page wants - a spaced hyphen is an em dash, one between digits (pages ``383-387``) an en dash, quotes
    in pairs, ``\@`` after a capital's full stop, a slash a break point (``exp/s``).  Nothing is read as
    math: a note's math is its SymPy pieces."""
    tex = escape(_quotes(str(text)))
    tex = re.sub(r"(?<=\d)-(?=\d)", "--", re.sub(r"(?<=\w) - (?=\w)", "---", tex))
    return sentence_ends(tex.replace("/", r"/\allowbreak{}"))


def code_to_latex(name: str, moving: bool = False) -> str:
    r"""An identifier in typewriter: ``\path`` (url's: verbatim, breakable after ``/``, ``.`` and ``_``), or in a
    moving argument (a caption), and for a command line with spaces, ``\texttt{\detokenize{...}}``."""
    name = str(name)
    if moving or " " in name:        # url's \path drops spaces
        return rf"\texttt{{\detokenize{{{name}}}}}"
    delim = next(c for c in "|!+=@;:" if c not in name)
    return rf"\path{delim}{name}{delim}"


def code_to_math(name: str) -> str:
    r"""An identifier in math mode (a notebook's ``aligned`` block, which MathJax reads): ``\mathtt{}``
    with the characters TeX treats specially as math markup (``hbm\_reads``)."""
    return r"\mathtt{" + "".join(TEX_MATH.get(c, c) for c in str(name)) + "}"


def note_to_latex(note, moving: bool = False) -> str:
    r"""A :class:`~symbolic.notes.Note` (or a ``str``: one text piece) for LaTeX text mode, piece by piece:
    text escaped (:func:`text_to_latex`), math ``$...$`` by this printer (:func:`to_latex`), code in
    typewriter (:func:`code_to_latex`; ``moving=True`` inside a caption)."""
    out = []
    for piece in as_note(note):
        if isinstance(piece, Code):
            out.append(code_to_latex(piece, moving))
        elif isinstance(piece, str):
            out.append(text_to_latex(piece))
        else:
            out.append(f"${to_latex(piece)}$")
    return "".join(out)


def note_to_math(note) -> str:
    r"""A note for LaTeX math mode (a notebook's ``aligned`` block, which MathJax reads): text runs in
    ``\text{}`` (:func:`math_text`), math as it is, code by :func:`code_to_math`."""
    out = []
    for piece in as_note(note):
        if isinstance(piece, Code):
            out.append(code_to_math(piece))
        elif isinstance(piece, str):
            out.append(math_text(piece))
        else:
            out.append(" " + to_latex(piece) + " ")
    return re.sub(r" {2,}", " ", "".join(out)).strip()


def _assumptions_tex(assumptions) -> str:
    return ", ".join(f"{to_latex(a)} {RELATIONS.get(r, r)} {to_latex(b)}" for a, r, b in assumptions)


#: the width in points one row of a model's formulas may take: a portrait A4 page with 2.5 cm margins has
#: 455pt (the fragments' target; the notes' landscape page has more)
ROW_POINTS = 450
#: points per :func:`latex_width` unit, measured with pdflatex on every formula line of the toolkit: about 6
#: on average (labels and units, set as text), up to 8.6 on short lines of subscripted capitals; a formula's
#: budget uses 7.5, which leaves every line of every model inside a portrait page (at 6.4 three ran over;
#: ``tests/integration/test_latex_fragments.py`` checks it under ``-m slow``)
POINTS_TEXT, POINTS_MATH_MOST = 6.0, 7.5


def model_to_latex(model, environment: str = "align", points: float = ROW_POINTS) -> str:
    r"""A model's sections (:func:`printing.content.model_printout`) as one ``align`` / ``align*`` /
    ``aligned`` environment; see :func:`sections_to_latex`."""
    if environment not in ENVIRONMENTS:
        raise BadInput("environment", f"must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}")
    return sections_to_latex(model_printout(model).sections, environment, points)


def sections_to_latex(sections, environment: str = "align", points: float = ROW_POINTS) -> str:
    r"""Sections of the content tree as one ``align`` / ``align*`` / ``aligned`` environment.

    ``align`` and ``align*`` put each section title in an ``\intertext``; ``aligned`` (for
    ``$$…$$``, as a notebook shows a model) puts it on a row of its own.  Titles, their notes and long
    labels are :class:`~symbolic.notes.Note` records, rendered piece by piece (:func:`note_to_latex` in
    ``\intertext``, :func:`note_to_math` in ``aligned``); a formula wider than its share of ``points``
    breaks across rows as math (:func:`break_latex`), continuation rows indented by a quad under its relation.
    """
    if environment not in ENVIRONMENTS:
        raise BadInput("environment", f"must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}")
    standalone = ENVIRONMENTS[environment]
    lines = [ln for sec in sections for ln in sec.lines]
    label_w = max((latex_width(note_to_math(ln.label)) for ln in lines if not ln.own_line), default=0)
    unit_w = max((latex_width(math_text(ln.unit)) for ln in lines if ln.unit and ln.unit != "1"), default=0)
    budget = max(24.0, (points - POINTS_TEXT * (label_w + unit_w) - 36) / POINTS_MATH_MOST)

    rows: list[str] = []
    for sec in sections:
        cond = _assumptions_tex(sec.assumptions) if sec.assumptions else ""
        if standalone:
            rows.append(rf"\intertext{{{note_to_latex(sec.heading)}" + (rf", when ${cond}$" if cond else "") + ":}")
        else:  # no \intertext in aligned, and no $…$ inside \text (a notebook's MathJax may not read it)
            rows.append("&" + note_to_math(sec.heading + (", when " if cond else "")) + (f" {cond}" if cond else "")
                        + r"\text{:}")
        for ln in sec.lines:
            unit = rf" && {math_text(ln.unit)}" if ln.unit and ln.unit != "1" else ""
            label = note_to_math(ln.label)
            if ln.own_line:      # a long name (a bound's citation) on a line of its own
                rows.append(rf"\intertext{{{note_to_latex(ln.label)}:}}" if standalone
                            else "&" + note_to_math(ln.label) + r"\text{:}")
                label = ""
            rel = RELATIONS.get(ln.relation, ln.relation)
            pieces = break_latex(ln.expr, budget)
            for k, piece in enumerate(pieces):
                last = k == len(pieces) - 1
                lead = rf"{label} &{rel} " if k == 0 else r"&\quad "
                rows.append(lead + piece + (unit if last else ""))
    body = []
    for i, row in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        # \intertext starts its own line: the row before it needs no \\ of its own beyond the usual one
        body.append(row + (r" \\" if nxt is not None and not row.startswith(r"\intertext") else ""))
    return f"\\begin{{{environment}}}\n" + "\n".join(body) + f"\n\\end{{{environment}}}"
