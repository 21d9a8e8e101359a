"""base: what every layer shares and nothing else - the one bad-input error, the one validator, the
one table of element sizes.  It imports no other package of the project, so :mod:`symbolic` and
:mod:`numeric` can both use it without importing each other.
"""
