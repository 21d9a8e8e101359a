"""A SymPy node that evaluates by a closed form but prints as what it stands for.

:class:`ShownAs` is a mixin for such nodes (the causal attention models' :class:`~symbolic.floorsum.FloorSum`,
the GEMM L2 counts of :mod:`symbolic.models.gemm_l2`): every printer - tilebound's text and LaTeX
printers, SymPy's ``str`` and ``latex`` - renders the expression ``_display()`` returns (a ``Sum``
over blocks or waves), so a reader sees the count's definition while evaluation uses its closed form.
"""

from __future__ import annotations

__all__ = ["ShownAs"]


class ShownAs:
    """Mixin: print as ``self._display()``."""

    def _display(self):
        raise NotImplementedError

    def _tilebound_text(self, printer):
        return printer._print(self._display())

    def _tilebound_latex(self, printer, exp=None):
        tex = printer._print(self._display())
        return rf"\left({tex}\right)^{{{exp}}}" if exp else tex

    def _sympystr(self, printer):
        return printer._print(self._display())

    _latex = _tilebound_latex
