"""verify: where the formulas (:mod:`symbolic`) meet the executors (:mod:`numeric`).

Command line: ``python -m verify [--full] [--model PATTERN]``.  Python: :func:`assert_agree`,
:func:`run_check`, :func:`verify.registry.select`.
"""

from .core import Check, Property, Report, assert_agree, exact_equal, rel_close, run_check  # noqa: F401
