"""symbolic: every cost as an exact SymPy formula.

``registry.get(name)`` gives a :class:`~symbolic.model.Model` (quantities, divisible form, leading
term, Θ class, lower bounds, exact evaluation); :mod:`printing` renders them;
the command line is ``tilebound`` (package :mod:`tilebound`, ``python -m tilebound``).  Importing
this package is cheap: formula modules are found and loaded on first use of the registry.
"""
