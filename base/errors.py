"""The one bad-input error.

``BadInput(param, problem)`` is a :class:`ValueError` that carries the offending parameter's name;
its message reads ``"param: problem"``.  The command line prints it as one line and exits 2; any
other exception is a bug and shows its traceback (after click's ``BadParameter``).
"""

from __future__ import annotations

__all__ = ["BadInput"]


class BadInput(ValueError):
    """Bad input, naming the parameter: ``BadInput("N", "must be >= 1, got 0")``."""

    def __init__(self, param: str, problem: str):
        self.param = str(param)
        self.problem = str(problem)
        super().__init__(f"{self.param}: {self.problem}")

    def __reduce__(self):          # picklable (hypothesis and multiprocessing pass errors around)
        return (type(self), (self.param, self.problem))
