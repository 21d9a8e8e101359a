"""tilebound: the command line and its report glue, on top of every other layer.

* :mod:`tilebound.cli` - ``tilebound`` / ``python -m tilebound``: the parser of every subcommand found.
* :mod:`tilebound.commands` - the subcommands, one module each (``list``, ``show``, ``table``, ``plot``,
  ``latex``, ``splits``, ``tune``) plus plugins' (entry-point group ``tilebound.commands``).
* :mod:`tilebound.numbers` - numbers a user types, ``--at`` and ``--vary``; :mod:`tilebound.per` - the
  ``--per`` grammar; :mod:`tilebound.asymptotics` - Θ class and leading term of any quantity.
* :mod:`tilebound.report` - tables built from models: ``sweep``/``sweep_table``, ``values_table``,
  ``roofline_table``, ``default_sweep``; :mod:`tilebound.plots` - the series a plot draws.
* :mod:`tilebound.executed` - executed points for plots, from the model's own check in :mod:`verify`.

Nothing in the project imports this package; only the entry points do.  Importing it is cheap: each
module loads what it needs when it is used.
"""
