"""The registry: every model family by its name.

Adding a model means adding its module (a :class:`~bayesgen.families.base.Family` subclass and
its ``FAMILY`` instance) and one line: its ``FAMILY`` in the tuple below, or, for a block
defined outside the package (the toy block of ``tests/test_toy_block.py``),
``register(FAMILY)``. Only the public front ends that take a model's name or a closed-form
Dataset (:mod:`bayesgen.closed_form`, :mod:`bayesgen.generative`), the estimators and model
files look a model up here; every other layer is handed the model.
"""

from __future__ import annotations

import xarray as xr

import bayesgen.families.bernoulli as bernoulli
import bayesgen.families.categorical as categorical
import bayesgen.families.dcm as dcm
import bayesgen.families.gaussian_nb as gaussian_nb
import bayesgen.families.gda as gda
import bayesgen.families.mixed as mixed
import bayesgen.families.multinomial as multinomial
import bayesgen.families.poisson_nb as poisson_nb
import bayesgen.families.qda as qda
from bayesgen.families.base import Family

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        multinomial.FAMILY,
        bernoulli.FAMILY,
        categorical.FAMILY,
        gda.FAMILY,
        qda.FAMILY,
        gaussian_nb.FAMILY,
        poisson_nb.FAMILY,
        dcm.FAMILY,
    )
}
# The mixed model's blocks are the models above, handed in by name (it stores their names).
FAMILIES[mixed.MixedFamily.name] = mixed.MixedFamily(FAMILIES)


def register(model: Family) -> Family:
    """Add a block to :data:`FAMILIES` under its ``name``; returns it.

    Raises
    ------
    TypeError
        For anything but a :class:`~bayesgen.families.base.Family`.
    ValueError
        For a name another block has.

    Examples
    --------
    >>> from bayesgen.families.registry import FAMILIES, family, register
    >>> register(family("qda")) is FAMILIES["qda"]  # the same block again: nothing changes
    True
    >>> class Renamed(type(family("qda"))):
    ...     pass
    >>> register(Renamed())
    Traceback (most recent call last):
        ...
    ValueError: model: the name 'qda' is taken by QuadraticFamily.
    """
    if not isinstance(model, Family):
        raise TypeError(f"model: expected a Family; got {type(model).__name__}.")
    taken = FAMILIES.get(model.name)
    if taken is not None and taken is not model:
        raise ValueError(f"model: the name {model.name!r} is taken by {type(taken).__name__}.")
    FAMILIES[model.name] = model
    return model


def family(model: str | xr.Dataset) -> Family:
    """The family of a model name (``"multinomial_nb"``, …) or of a closed-form Dataset.

    Raises
    ------
    ValueError
        For a name no family has.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> family("multinomial_nb").estimator
    'MultinomialNB'
    >>> family(closed_form.bernoulli_nb([[1, 0], [0, 1]], [0, 1])).name
    'bernoulli_nb'
    >>> family("naive")
    Traceback (most recent call last):
        ...
    ValueError: model: expected one of [...]; got 'naive'.
    """
    name = model.attrs.get("model") if isinstance(model, xr.Dataset) else model
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"model: expected one of {sorted(FAMILIES)}; got {name!r}.") from None


__all__ = ["FAMILIES", "Family", "family", "register"]
