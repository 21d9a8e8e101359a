"""tilebound: the command line and its report glue, on top of every other layer.

* :mod:`tilebound.cli` - ``tilebound`` / ``python -m tilebound``: ``list``, ``show``, ``table``, ``latex``, ``plot``.
* :mod:`tilebound.report` - what a user types (numbers, ``--at``, ``--vary``, ``--per``) and the tables and
  plot series built from models: ``sweep``/``sweep_table``, ``values_table``, ``roofline_table``, ``default_sweep``.
* :mod:`tilebound.executed` - executed points for plots, from the model's own check in :mod:`verify`.

Nothing in the project imports this package; only the entry points do.  Importing it is cheap: each
module loads what it needs when it is used.
"""
