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
