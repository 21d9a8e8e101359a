"""symbolic: every cost as an exact SymPy formula.

``registry.get(name)`` gives a :class:`~symbolic.model.Model` (quantities, divisible form, leading
term, Θ class, lower bounds, exact evaluation); :mod:`symbolic.printing` renders them;
``python -m symbolic`` (or ``tilebound``) is the command line.  Importing this package is cheap:
model families load on first use of the registry.
"""
