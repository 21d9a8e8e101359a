"""Printers: expressions and values in, strings out.  Nothing here computes a cost."""
