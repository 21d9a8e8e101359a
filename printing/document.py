r"""LaTeX of models for lecture notes: a complete document, or fragments to ``\input`` in one's own.

A model's LaTeX (:func:`model_fragment`) renders its content tree (:func:`printing.content.model_printout`):
its summary, source, parameters with their meanings, notes and its formulas as an ``align*`` environment
(:func:`~printing.latex.sections_to_latex`); every piece of prose is a :class:`symbolic.notes.Note`, its
math set as math piece by piece (:func:`~printing.latex.note_to_latex`).  A sweep table is a siunitx/booktabs table
(:func:`~printing.tables.render_latex`), an algorithm listing an ``algorithm`` float
(:mod:`.listing`), a figure a ``figure`` float around a pgfplots axis (:mod:`.pgfplot`; made by the command
line, which has the sweeps and executed points, and handed in as LaTeX).

A fragment needs only the packages of :data:`PREAMBLE` (``tilebound latex --preamble`` prints it): all of
them from Debian's texlive-latex-base, -recommended and -science plus pgfplots (texlive-pictures), and every
fragment is pure ASCII.  :func:`to_document` wraps the models in a complete document (:data:`DOCUMENT_HEAD`:
a class, a page, :data:`PREAMBLE`, floats kept in their model's section) that ``pdflatex`` compiles as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .content import model_printout
from .latex import escape, math_text, note_to_latex, sections_to_latex
from .listing import listing_to_latex
from .tables import render_latex

__all__ = ["ModelEntry", "PREAMBLE", "DOCUMENT_HEAD", "model_fragment", "table_fragment", "figure_fragment",
           "listing_fragment", "fragments", "section_of", "to_document", "document_of", "print_document"]

#: the packages a fragment needs, one a line with what it is for; ``tilebound latex --preamble`` prints it
PREAMBLE = r"""\usepackage{amsmath}       % align*, \intertext, \text: the formulas
\usepackage{amssymb}       % \lesssim
\usepackage{booktabs}      % \toprule, \midrule, \bottomrule: the tables
\usepackage{siunitx}       % S columns: numbers aligned on the decimal point, digit groups
\usepackage{algorithm}     % the listings' float
\usepackage{algpseudocode}  % \For, \State, \Comment: the listings (algorithmicx)
\usepackage{url}           % \path: file and code names, breakable
\usepackage{graphicx}      % \resizebox: a figure no wider than the text
\usepackage{pgfplots}      % the figures: axes, log ticks and legends typeset by TeX
\pgfplotsset{compat=1.16}  % pgfplots' current behaviour (1.16: TeX Live 2018 and later)
"""

#: the head of a complete document: class, page, :data:`PREAMBLE`, floats kept where they are placed
DOCUMENT_HEAD = r"""\documentclass[10pt]{article}
\usepackage[margin=2cm,landscape]{geometry}
""" + PREAMBLE + r"""\usepackage{float}
\floatplacement{table}{H}
\floatplacement{figure}{H}
\floatplacement{algorithm}{H}
\allowdisplaybreaks[4]
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5em}
"""

@dataclass(frozen=True)
class ModelEntry:
    """A model and what to print with it: sweep tables (already evaluated), a figure (LaTeX of a PGF
    picture, or ``""``), an algorithm listing (:class:`symbolic.listings.Listing` or ``None``)."""

    model: object
    tables: tuple = ()
    figure: str = ""
    figure_caption: str = ""
    listing: object = None


def _params_line(doc) -> str:
    if not doc.params:
        return ""
    parts = [f"${p.symbol.latex if hasattr(p.symbol, 'latex') else p.symbol.name}$"
             + (f", {note_to_latex(p.meaning)}" if p.meaning else "") for p in doc.params]
    return r"\emph{Parameters:} " + "; ".join(parts) + "."


def _sentence(tex: str) -> str:
    """``tex`` ending in one full stop."""
    return tex.rstrip().rstrip(".") + "."


def model_fragment(m, environment: str = "align*") -> str:
    """A model's prose and formulas, without a heading: summary, source, parameters, notes, formulas."""
    doc = model_printout(m)
    lines = [_sentence(note_to_latex(doc.summary))]
    if doc.source:
        lines.append(rf"\emph{{Source:}} {_sentence(note_to_latex(doc.source))}")
    pl = _params_line(doc)
    if pl:
        lines.append(pl)
    for note in doc.notes:
        lines.append(rf"\emph{{Note:}} {note_to_latex(note)}")
    # prose with paths and long code names: sloppypar lets its lines stretch rather than run into the margin
    lines = [r"\begin{sloppypar}" + ln + r"\end{sloppypar}" for ln in lines]
    # a long list of formulas may break across pages: \allowdisplaybreaks, kept inside a group
    lines.append("\\begingroup\\allowdisplaybreaks[4]%\n" + sections_to_latex(doc.sections, environment)
                 + "\n\\endgroup")
    return "\n\n".join(lines)


def table_fragment(table, model=None) -> str:
    return render_latex(table, tuple(getattr(model, "params", ())))


def figure_fragment(picture: str, caption: str) -> str:
    r"""A ``figure`` float around a picture, scaled down to the text's width when wider.  The picture is
    boxed with ``\setbox`` and measured, not read as a macro argument (any picture's catcode changes stay
    safe)."""
    return "\n".join([r"\begin{figure}", r"\centering", r"\setbox0=\hbox{%", picture.rstrip() + "%", "}%",
                      r"\ifdim\wd0>\linewidth\resizebox{\linewidth}{!}{\box0}\else\leavevmode\box0\fi",
                      rf"\caption{{{caption}}}", r"\end{figure}"])


def listing_fragment(listing) -> str:
    return listing_to_latex(listing)


def fragments(entry: ModelEntry) -> list[tuple[str, str]]:
    """``[(suffix, latex), ...]`` for one model: ``""`` (the model), ``.sweep``/``.sweep2``... (tables),
    ``.algorithm`` (the listing), ``.figure``; the file of each is ``<model name><suffix>.tex``."""
    m = entry.model
    out = [("", model_fragment(m))]
    for k, t in enumerate(entry.tables):
        out.append((".sweep" + (str(k + 1) if k else ""), table_fragment(t, m)))
    if entry.listing is not None:
        out.append((".algorithm", listing_fragment(entry.listing)))
    if entry.figure:
        out.append((".figure", figure_fragment(entry.figure, entry.figure_caption)))
    return out


def _name(name: str) -> str:
    """A model's name in a heading: a code name in typewriter (``\\detokenize`` keeps ``_`` as it is), or -
    with characters TeX would read as commands (``%``, ``#``, braces) - as the formula labels set names."""
    if re.fullmatch(r"[A-Za-z0-9._\-]+", name):
        return rf"\texttt{{\detokenize{{{name}}}}}"
    return f"${math_text(name)}$"


def section_of(name: str, frags) -> str:
    """A model's section: its heading, then its :func:`fragments` (``[(suffix, latex), ...]``) in order."""
    return "\n\n".join([rf"\section{{{_name(name)}}}"] + [tex for _, tex in frags])


def _section(entry: ModelEntry) -> str:
    return section_of(entry.model.name, fragments(entry))


def to_document(entries, title: str = "tilebound: cost formulas", author: str = "generated by tilebound",
                notes: tuple = ()) -> str:
    """The whole document as a string (``entries``: :class:`ModelEntry` or bare models); ``notes`` are
    paragraphs for its introduction (:class:`~symbolic.notes.Note` records or plain text)."""
    entries = [e if isinstance(e, ModelEntry) else ModelEntry(e) for e in entries]
    return document_of([_section(e) for e in entries], title, author, notes)


def document_of(sections, title: str = "tilebound: cost formulas", author: str = "generated by tilebound",
                notes: tuple = ()) -> str:
    """The whole document around ``sections`` (each one model's LaTeX, :func:`section_of`; what
    ``tilebound latex --standalone`` draws in worker processes and joins here)."""
    body = [DOCUMENT_HEAD,
            rf"\title{{{escape(title)}}}", rf"\author{{{escape(author)}}}", r"\date{}",
            r"\begin{document}", r"\maketitle",
            r"Counts are exact: elements moved between HBM and on-chip memory, FLOPs, or times in seconds, "
            r"with ceilings where the loops have them. $\sim$ marks the leading term with its constant, "
            r"$\Theta$ the class with constants dropped, both over the regime stated beside them."]
    body += [note_to_latex(n) for n in notes]
    body += list(sections)
    body.append(r"\end{document}")
    return "\n\n".join(body) + "\n"


def print_document(entries, **kw) -> None:
    print(to_document(entries, **kw), end="")
