"""The formula modules.  Every module here is found by :mod:`symbolic.registry` (no list to edit):
each module-level :class:`~symbolic.registry.ModelRef` is a model."""
