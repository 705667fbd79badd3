"""The mixed model as one PyMC model (see
:meth:`bayesgen.families.mixed.MixedFamily.pymc_model`): the class prior once, and every
block's own model as a named sub-model on it.

Imported only when a PyMC model is asked for, so that the closed forms stay importable without
PyMC and PyTensor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pymc as pm
import xarray as xr

from bayesgen.families.shared_pymc import block_scope, class_prob_prior, positive_priors

if TYPE_CHECKING:
    from bayesgen.families.mixed import MixedFamily
    from bayesgen.families.unlabelled_pymc import RowTerms


def mixed_pymc_model(
    model: MixedFamily, estimates: xr.Dataset, options: Mapping[str, Mapping]
) -> pm.Model:
    """π ~ Dirichlet(a) with the class counts observed, then each block's model (its
    ``pymc_model`` on its own statistics, with ``options[name]``) inside
    :func:`~bayesgen.families.shared_pymc.block_scope`: its variables are ``name::mu`` …,
    its dims ``name::feature`` … (the names of :mod:`bayesgen.families.block_layout`), and
    it observes its own statistics given the shared π.

    The blocks' likelihoods multiply, as their parameters are independent a priori: the
    model's posterior is the product of π's and every block's own, which
    :meth:`~bayesgen.families.mixed.MixedFamily.conjugate_draws` draws exactly.
    """
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    with pm.Model(coords={"class": estimates.indexes["class"]}) as mixed:
        class_count, class_prob = class_prob_prior(estimates, class_alpha)
        for block in model.blocks(estimates):
            with block_scope(block.name, class_count=class_count, class_prob=class_prob):
                block.model.pymc_model(block.estimates, **dict(options.get(block.name, {})))
    return mixed


def mixed_class_log_likelihood(
    model: MixedFamily, estimates: xr.Dataset, rows, terms: RowTerms, block_form
):
    """log p(x_i | y = k, θ) of every row and class of the mixed model, in full: the sum over
    the blocks of each block's form (``block_form``, :func:`bayesgen.families.unlabelled_pymc.
    class_log_likelihood`) on its own columns of ``rows`` and its own variables
    (``terms.of_block``), with its ``row_log_constant``; None where a block has no form.

    The blocks are independent given the class, so their densities multiply; the class
    probabilities, shared, are the caller's to add once.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms, class_log_likelihood
    >>> table = pd.DataFrame({"mass": [3.1, 3.4, 4.6, 4.9], "island": ["A", "A", "B", "B"]})
    >>> mixed = family("mixed_nb")
    >>> fit = mixed.fit(table, ["x", "x", "y", "y"])
    >>> rows = mixed.training_features(fit, table.head(1))
    >>> terms = RowTerms(mixed.pymc_model(fit))
    >>> mixed_class_log_likelihood(mixed, fit, rows, terms, class_log_likelihood).ndim
    2
    """
    total = None
    for block in model.blocks(estimates):
        block_rows = block.rows(rows)
        own = block_form(block.model, block.estimates, block_rows, terms.of_block(block.name))
        if own is None:
            return None
        own = own + block.model.row_log_constant(block_rows)[:, None]
        total = own if total is None else total + own
    return total
