"""Categorical naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.categorical.CategoricalFamily.pymc_model`).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayesgen.families.shared_pymc import (
    alpha_variable,
    block_dims,
    block_model,
    class_prob_prior,
    gamma_poisson_rates,
    positive_priors,
)


def categorical_nb_pymc_model(estimates: xr.Dataset) -> pm.Model:
    """Categorical naive Bayes: θ_kn ~ Dirichlet(λ) over the K_n categories of feature n.

    ``feature_prob`` has dims (class, feature, category), padded with 0 beyond K_n (see
    ``category_mask``), as in :meth:`fit`. Observed: the class counts ``class_count`` ~
    Multinomial(N, π) and the counts of the real (feature, category) cells ``cell_count``
    (class, cell) ~ Poisson(g_k,cell), the Gamma-Poisson form of each feature's
    Dirichlet (see :mod:`bayesgen.generative`). The padding cells are not observed: their
    count is always 0 and their probability 0, so they add nothing to the likelihood.
    """
    alpha, class_alpha = positive_priors(estimates)
    mask = estimates["category_mask"].values
    cell_feature, cell_category = np.nonzero(mask)  # the real (feature, category) cells
    n_features = mask.shape[0]
    with block_model(estimates, extra_coords={"cell": np.arange(cell_feature.size)}) as model:
        class_prob_prior(estimates, class_alpha)
        counts = estimates["feature_count"].values[:, cell_feature, cell_category]
        membership = np.eye(n_features)[cell_feature]  # (cell, feature) indicator
        rate = gamma_poisson_rates(
            "cell",
            counts,
            alpha,
            dims=block_dims("class", "cell"),
            groups=membership,
            random_alpha=alpha_variable(estimates),
            weight=(
                estimates["prior_weight"].values[cell_feature, cell_category]
                if "prior_weight" in estimates
                else None
            ),
        )
        totals = pt.dot(rate, membership)  # (class, feature)
        cell_prob = rate / totals[:, cell_feature]
        padded = pt.zeros((len(estimates["class"]), *mask.shape))
        padded = pt.set_subtensor(padded[:, cell_feature, cell_category], cell_prob)
        pm.Deterministic("feature_prob", padded, dims=block_dims("class", "feature", "category"))
    return model
