"""``python -m symbolic``: the command line of :mod:`symbolic.cli`."""

from .cli import main

raise SystemExit(main())
