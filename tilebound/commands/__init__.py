"""Further subcommands, one module each, found by :func:`tilebound.cli.build_parser` (no list to
edit).  A module defines ``add_parser(sub)``: it adds its subparser to ``sub`` (an argparse
subparsers action) and sets ``run=fn(args, out) -> exit status`` with ``set_defaults``.  Heavy
imports go inside ``run`` so that ``tilebound list`` stays cheap."""
