"""The Θ class and leading term of any quantity of a model, from the model's own :meth:`~symbolic.model.Model.theta`
and :meth:`~symbolic.model.Model.leading`.

A :class:`~symbolic.model.Model` derives them for its main quantity (``asymptotic_quantity``), over its
regime, from its exact or its divisible form as the model says.  For another quantity the same model with
that quantity as its main one is asked (:func:`dataclasses.replace`, kept once per model and quantity), so
the rule of which form the asymptotics are taken of lives in the model alone.  A term the asymptotics cannot
classify (a ``Piecewise``, a ``Max`` of sums) is the model's :class:`ValueError`.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from base.errors import BadInput

__all__ = ["theta_of", "leading_of", "asymptotics", "foreign_symbols"]


@lru_cache(maxsize=None)
def _as_main(model, quantity: str):
    return dataclasses.replace(model, asymptotic_quantity=quantity)


def _model_for(model, quantity: str | None):
    if quantity is None or quantity == model.main_quantity:
        return model
    model[quantity]                       # BadInput naming quantity when the model has no such quantity
    return _as_main(model, quantity)


def theta_of(model, quantity: str | None = None):
    """The Θ class of ``quantity`` (default: the main one) over the model's regime: ``Model.theta``."""
    return _model_for(model, quantity).theta()


def leading_of(model, quantity: str | None = None):
    """The leading term (with its constant) of ``quantity`` (default: the main one): ``Model.leading``."""
    return _model_for(model, quantity).leading()


def asymptotics(model, quantity: str):
    """``(Θ class, leading term)`` of ``quantity``, or ``(None, None)`` when the model cannot derive them
    (a plot then goes without the class in its legend and without the dashed guide)."""
    try:
        return theta_of(model, quantity), leading_of(model, quantity)
    except BadInput:
        raise
    except ValueError:              # a term that is not a monomial over the regime
        return None, None


def foreign_symbols(model, expr) -> list[str]:
    """Names of the symbols of ``expr`` that are not parameters of ``model`` (sorted): the causal models'
    asymptotics are taken of their divisible form, in its own quotient symbols."""
    params = set(model.params)
    return sorted(s.name for s in expr.free_symbols if s not in params)
