"""A lab's own tilebound model: the tiled row-wise softmax.

* :mod:`tilebound_softmax_lab.formulas` - the model ``lab.softmax.rowwise`` (exact SymPy counts);
* :mod:`tilebound_softmax_lab.executor` - the kernel in NumPy, counting every element it moves;
* :mod:`tilebound_softmax_lab.checks` - the check that the two agree.

tilebound finds the formula and check modules through this package's entry points (``pyproject.toml``);
nothing is imported here, so listing the models stays cheap.
"""

__version__ = "0.1.0"
