"""The check modules.  Every module here is found by :mod:`verify.registry` (no list to edit): each
module-level :class:`~verify.core.Check` or :class:`~verify.core.Property` is a check."""
