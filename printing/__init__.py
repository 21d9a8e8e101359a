"""Printers: expressions, notes and models in, strings out.  Nothing here computes a cost.

A layer of its own, above :mod:`symbolic` (whose models, parameters, notes and listings it renders) and
below the command line; it imports nothing from :mod:`numeric`, :mod:`tuning` or :mod:`verify`.

The modules, in pipeline order (import the one you need; this package imports none of them, so that
``printing.human`` stays cheap for the course scripts):

* :mod:`.glyphs` - the one glyph table: each non-ASCII character in Unicode, ASCII, LaTeX math and text.
* :mod:`.notation` - ``Theta`` / ``Omega``, display-only SymPy functions.
* :mod:`.content` - the one format-free content tree of a model's printout (header, sections of labelled
  expressions, notes as :class:`symbolic.notes.Note` records) that every printer below renders.
* :mod:`.text` - one-line Unicode/ASCII printer (``⌈N/B_c⌉``, ``N²``); ``to_text``, ``note_to_text``,
  ``model_to_text``, ``ascii_text`` (text for a terminal without Unicode).
* :mod:`.latex` - LaTeX printer (``\\lceil``, ``\\Theta``, ``B_r``); ``to_latex``, ``note_to_latex`` (text
  mode), ``note_to_math`` (math mode), ``model_to_latex``, ``escape``.
* :mod:`.tables` - one table renderer for the terminal (Unicode or ASCII), Markdown and LaTeX booktabs
  (tabulate); ``note_to_markdown``.
* :mod:`.listing` - an annotated algorithm listing (:class:`symbolic.listings.Listing`) as an ``algorithm`` float.
* :mod:`.document` - a standalone LaTeX document of models that ``pdflatex`` compiles as it is.
* :mod:`.notebook` - Jupyter display of models and worked evaluations; ``init_printing`` registers it.
* :mod:`.plot` - curves and points with matplotlib (the optional ``plot`` extra), imported lazily.
* :mod:`.human` - bytes, times and counts in human units.

A note is rendered piece by piece in every format: its text as text, its math through that format's
expression printer, its code as code.  No printer reads math out of English.
"""
