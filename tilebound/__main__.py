"""``python -m tilebound``: the command line of :mod:`tilebound.cli`, started by :mod:`tilebound.start`."""

from .start import main

raise SystemExit(main())
