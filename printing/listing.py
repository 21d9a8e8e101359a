r"""An annotated algorithm listing (:class:`symbolic.listings.Listing`) as LaTeX: algorithmicx and a table.

The algorithm is an ``algorithm`` float holding an ``algorithmic`` environment (algpseudocode), its lines
numbered as the paper numbers them.  A line that moves data carries a comment with what one run of it
reads or writes and how many times it runs (``load $2 d w_j$ $\times$ $T_c$``), both printed from the
listing's SymPy expressions; the abbreviations (``T_c``, ``w_j``) are defined under the ``Require`` line.
After the algorithm a table gives each moving line's elements in all and their sum, which is the model's
formula (``python -m verify`` checks it, exactly, over the model's sweep).
"""

from __future__ import annotations

import sympy as sp

from .latex import to_latex
from .prose import prose, sentence_ends

__all__ = ["listing_to_latex"]


def _text(tex: str) -> str:
    """A line's LaTeX with ``\\@`` where a capital ends a sentence, outside its math."""
    parts = tex.split("$")
    return "$".join(sentence_ends(p) if k % 2 == 0 else p for k, p in enumerate(parts))


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
    from symbolic.listings import Line, Loop

    out = [r"\begin{algorithm}",
           rf"\caption{{{prose(listing.title, moving=True)} ({prose(listing.source, moving=True)}): each load and store with the "
           r"elements one run moves and how many times it runs; the lines sum to the model's reads and writes "
           r"(\texttt{python -m verify} checks it exactly over the model's sweep)}",
           r"\begin{algorithmic}[1]",
           rf"\Require {listing.require}"]
    if listing.defs:
        defs = "; ".join(rf"${to_latex(s)} = {to_latex(v)}$ {m}" for s, v, m in listing.defs)
        out.append(rf"\Statex \hspace*{{\algorithmicindent}}\emph{{where}} {defs}")

    def emit(items, loops, depth):
        for it in items:
            if isinstance(it, Loop):
                head = it.text or rf"${to_latex(it.lo)} \le {to_latex(it.index)} \le {to_latex(it.hi)}$"
                out.append("  " * depth + rf"\For{{{head}}}")
                emit(it.body, loops + (it,), depth + 1)
                out.append("  " * depth + r"\EndFor")
            elif isinstance(it, Line):
                note = rf" \Comment{{{_annotation(it, listing.times(loops))}}}" if it.moves else ""
                cmd = r"\State \Return" if it.command == "Return" else rf"\{it.command}"
                out.append("  " * depth + rf"{cmd} {_text(it.text)}{note}")
    emit(listing.body, (), 1)
    out.append(r"\end{algorithmic}")
    out.append(_totals(listing))
    out.append(r"\end{algorithm}")
    return "\n".join(out)


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
            total = sums[q] if sums[q].has(sp.Sum) else sp.factor_terms(sp.expand(sums[q]))
            lines.append(rf"\multicolumn{{2}}{{@{{}}l}}{{{q}, the lines' sum}} & ${to_latex(total)}$ \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\par}"]
    return "\n".join(lines)
