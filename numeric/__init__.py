"""Executors: the algorithms run tile by tile in NumPy with every global-memory access counted.

This package is the *living spec*: it never imports :mod:`symbolic`.  Agreement between the two
independent derivations is checked in :mod:`verify` only.
"""
