"""Printers: expressions and values in, strings out.  Nothing here computes a cost.

The modules, in pipeline order (import the one you need; this package imports none of them, so that
``printing.human`` stays cheap for the course scripts):

* :mod:`.glyphs` - the one glyph table: each non-ASCII character in Unicode, ASCII, LaTeX math and text.
* :mod:`.notation` - ``Theta`` / ``Omega``, display-only SymPy functions.
* :mod:`.content` - what a model's printout holds (sections of labelled expressions), format-free.
* :mod:`.text` - one-line Unicode/ASCII printer (``⌈N/B_c⌉``, ``N²``); ``to_text``, ``model_to_text``,
  ``ascii_text`` (prose for a terminal without Unicode).
* :mod:`.latex` - LaTeX printer (``\\lceil``, ``\\Theta``, ``B_r``); ``to_latex``, ``model_to_latex``, ``escape``.
* :mod:`.tables` - one table renderer for the terminal (Unicode or ASCII), Markdown and LaTeX booktabs (tabulate).
* :mod:`.document` - a standalone LaTeX document of models that ``pdflatex`` compiles as it is.
* :mod:`.plot` - curves and points with matplotlib (the optional ``plot`` extra), imported lazily.
* :mod:`.human` - bytes, times and counts in human units.
"""
