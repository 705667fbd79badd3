"""The model families, one module each, and the registry the generic layers look them up in.

Adding a model means adding its module (a :class:`~bayesgen.families.base.Family` subclass and
its ``FAMILY`` instance) and one line below.
"""

from __future__ import annotations

import xarray as xr

from bayesgen.families import bernoulli, categorical, gda, multinomial, qda
from bayesgen.families.base import Family

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (multinomial.FAMILY, bernoulli.FAMILY, categorical.FAMILY, gda.FAMILY, qda.FAMILY)
}


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


__all__ = ["FAMILIES", "Family", "family"]
