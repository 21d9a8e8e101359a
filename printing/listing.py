r"""An annotated algorithm listing (:class:`symbolic.listings.Listing`) as LaTeX: algorithmicx and a table.

The algorithm is an ``algorithm`` float holding an ``algorithmic`` environment (algpseudocode), its lines
numbered as the paper numbers them.  A line that moves data carries a comment with what one run of it
reads or writes and how many times it runs (``load $2 d w_j$ $\times$ $T_c$``), both printed from the
listing's SymPy expressions; the abbreviations (``T_c``, ``w_j``) are defined under the ``Require`` line.
After the algorithm a table gives each moving line's elements in all and their sum, which is the model's
formula (``python -m verify`` checks it, exactly, over the model's sweep).

A listing's title, source, ``Require`` line, line and loop texts and the meanings of its abbreviations
are each either a :class:`symbolic.notes.Note` (text, SymPy math and code pieces, rendered piece by
piece by :func:`printing.latex.note_to_latex`) or a ``str`` of LaTeX markup with its math between ``$``,
which is set as it is written (nothing in it is read as math that its author did not put in ``$``).
A title or source given as a ``str`` is plain text with its math between ``$`` (:func:`caption_text`).
The printer is handed the :class:`~symbolic.listings.Line` and :class:`~symbolic.listings.Loop` objects;
it never looks a listing up.
"""

from __future__ import annotations

import re

import sympy as sp

from symbolic.listings import Line, Loop
from symbolic.notes import Note

from .latex import code_to_latex, note_to_latex, sentence_ends, text_to_latex, to_latex

__all__ = ["listing_to_latex", "listing_text", "caption_text"]


def listing_text(text, moving: bool = False) -> str:
    """A listing's line, loop head, ``Require`` line or abbreviation meaning as LaTeX: a
    :class:`~symbolic.notes.Note` rendered piece by piece (``moving`` in a caption), or a ``str`` of LaTeX
    markup as it is written, with ``\\@`` where a capital ends a sentence outside its ``$...$`` math."""
    if isinstance(text, Note):
        return note_to_latex(text, moving=moving)
    parts = str(text).split("$")
    return "$".join(sentence_ends(p) if k % 2 == 0 else p for k, p in enumerate(parts))


#: a word of a citation that is a file or code name: it holds a ``/``, ``_`` or ``<`` (``csrc/flash_api.cpp``,
#: ``cublas<t>gemv()``); a trailing ``()`` belongs to it, a trailing ``:line`` or punctuation does not
_CODE_WORD = re.compile(r"(?<![\w./<>-])(?=[\w.<>/-]*[/_<])[\w.<>/-]*[\w>](?:\(\))?")


def caption_text(text) -> str:
    """A listing's title or source for its caption (a moving argument): a :class:`~symbolic.notes.Note`
    rendered piece by piece, or a ``str`` of plain text with its math between ``$`` - the text escaped, the
    math as written, and each file or code name in it (a word holding ``/``, ``_`` or ``<``) in typewriter.
    A citation written as a note says which words are code (``code("csrc/flash_api.cpp")``) and needs no
    such rule."""
    if isinstance(text, Note):
        return note_to_latex(text, moving=True)
    out = []
    for k, part in enumerate(str(text).split("$")):
        if k % 2:
            out.append(f"${part}$")
            continue
        last = 0
        for m in _CODE_WORD.finditer(part):
            out.append(text_to_latex(part[last:m.start()]) + code_to_latex(m.group(), moving=True))
            last = m.end()
        out.append(text_to_latex(part[last:]))
    return "".join(out)


def _annotation(line, times) -> str:
    parts = []
    for q, word in (("reads", "load"), ("writes", "store")):
        e = sp.sympify(getattr(line, q))
        if e != 0:
            parts.append(f"{word} ${to_latex(e)}$")
    runs = "once" if times == 1 else rf"$\times\ {to_latex(times)}$"
    return ", ".join(parts) + " " + runs


def listing_to_latex(listing) -> str:
    """The listing as an ``algorithm`` float: the annotated algorithm, then the per-line totals."""
    out = [r"\begin{algorithm}",
           rf"\caption{{{caption_text(listing.title)} ({caption_text(listing.source)}): each load and store with the "
           r"elements one run moves and how many times it runs; the lines sum to the model's reads and writes "
           r"(\texttt{python -m verify} checks it exactly over the model's sweep)}",
           r"\begin{algorithmic}[1]",
           rf"\Require {listing_text(listing.require)}"]
    if listing.defs:
        defs = "; ".join(rf"${to_latex(s)} = {to_latex(v)}$ {listing_text(m)}" for s, v, m in listing.defs)
        out.append(rf"\Statex \hspace*{{\algorithmicindent}}\emph{{where}} {defs}")

    def emit(items, loops, depth):
        for it in items:
            if isinstance(it, Loop):
                head = listing_text(it.text) if it.text else \
                    rf"${to_latex(it.lo)} \le {to_latex(it.index)} \le {to_latex(it.hi)}$"
                out.append("  " * depth + rf"\For{{{head}}}")
                emit(it.body, loops + (it,), depth + 1)
                out.append("  " * depth + r"\EndFor")
            elif isinstance(it, Line):
                note = rf" \Comment{{{_annotation(it, listing.times(loops))}}}" if it.moves else ""
                cmd = r"\State \Return" if it.command == "Return" else rf"\{it.command}"
                out.append("  " * depth + rf"{cmd} {listing_text(it.text)}{note}")
    emit(listing.body, (), 1)
    out.append(r"\end{algorithmic}")
    out.append(_totals(listing))
    out.append(r"\end{algorithm}")
    return "\n".join(out)


def _common_out(expr: sp.Expr) -> sp.Expr:
    """``expr`` with the factors every term shares taken out (``B H_kv`` of the windowed decode's four terms),
    looking at each term's top-level factors only: a sum over blocks is one factor, never entered (SymPy's
    ``factor_terms`` moves a summand's own factors, such as ``w_j``, out of the sum)."""
    terms = sp.Add.make_args(expr)
    if len(terms) < 2:
        return expr
    factors = [sp.Mul.make_args(t) for t in terms]
    common = {f for f in factors[0] if not f.is_Number}
    for fs in factors[1:]:
        common &= set(fs)
    if not common:
        return expr
    rest = sp.Add(*[sp.Mul(*[f for f in fs if f not in common]) for fs in factors])
    return sp.Mul(*sorted(common, key=sp.default_sort_key), rest)


def _totals(listing) -> str:
    rows = listing.rows()
    lines = [r"\par\smallskip", r"{\small", r"\begin{tabular}{@{}rll@{}}", r"\toprule",
             r"line & moves & in all \\", r"\midrule"]
    sums = {"reads": sp.Integer(0), "writes": sp.Integer(0)}
    for n, _, q, _, _, tot in rows:
        lines.append(rf"{n} & {'loads' if q == 'reads' else 'stores'} & ${to_latex(tot)}$ \\")
        sums[q] += tot
    lines.append(r"\midrule")
    for q in ("reads", "writes"):
        if sums[q] != 0:
            total = _common_out(sums[q]) if sums[q].has(sp.Sum) else sp.factor_terms(sp.expand(sums[q]))
            lines.append(rf"\multicolumn{{2}}{{@{{}}l}}{{{q}, the lines' sum}} & ${to_latex(total)}$ \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\par}"]
    return "\n".join(lines)
