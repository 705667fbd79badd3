"""Multinomial naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.multinomial.MultinomialFamily.pymc_model`).
"""

from __future__ import annotations

import pymc as pm
import xarray as xr

from bayesgen.families.shared_pymc import (
    alpha_variable,
    block_dims,
    block_model,
    class_prob_prior,
    gamma_poisson_rates,
    positive_priors,
)


def multinomial_nb_pymc_model(estimates: xr.Dataset) -> pm.Model:
    """Multinomial (bag-of-words) naive Bayes.

    π ~ Dirichlet(a), θ_k ~ Dirichlet(λ) (with a shared mean Dirichlet(λ w), w the
    ``prior_weight``) over the vocabulary for each class, with
    a = ``class_alpha`` and λ = ``alpha`` from ``estimates.attrs``, or with a hyperprior
    the random variable ``alpha`` ~ Gamma (:mod:`bayesgen.families.hyperprior`). Observed: the
    class
    counts ``class_count`` ~ Multinomial(N, π) and the word counts ``feature_count`` N_kw ~
    Poisson(g_kw), the Gamma-Poisson form of the Dirichlet (θ_k = g_k / Σ_w g_kw; see
    :mod:`bayesgen.generative`). Fractional counts (TF-IDF weights) enter as a weighted
    likelihood through the potential ``feature_loglik`` instead, which PyMC cannot
    simulate; the class counts stay observed.
    """
    alpha, class_alpha = positive_priors(estimates)
    dims = block_dims("class", "feature")
    with block_model(estimates) as model:
        class_prob_prior(estimates, class_alpha)
        rate = gamma_poisson_rates(
            "feature",
            estimates["feature_count"].values,
            alpha,
            dims=dims,
            random_alpha=alpha_variable(estimates),
            weight=estimates["prior_weight"].values if "prior_weight" in estimates else None,
        )
        pm.Deterministic("feature_prob", rate / rate.sum(axis=-1, keepdims=True), dims=dims)
    return model
