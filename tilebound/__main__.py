"""``python -m tilebound``: the command line of :mod:`tilebound.cli`."""

from .cli import main

raise SystemExit(main())
