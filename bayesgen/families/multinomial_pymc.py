"""Multinomial naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.multinomial.MultinomialFamily.pymc_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms


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


def multinomial_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log p(x_i | y = k, θ) of every row and class from the model's ``feature_prob``, up to
    the multinomial coefficient (the block's ``row_log_constant``): Σ_w x_iw log θ_kw, shape
    (n_rows, n_classes), at the cost of the rows' nonzero counts.

    ``terms`` (:class:`~bayesgen.families.unlabelled_pymc.RowTerms`) reads the variables of
    :func:`multinomial_nb_pymc_model`'s model; the unlabelled rows' mixture over the classes is
    built on this (:func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> fit = family("multinomial_nb").fit(np.array([[3, 1], [0, 4]]), ["a", "b"])
    >>> terms = RowTerms(family("multinomial_nb").pymc_model(fit))
    >>> multinomial_class_log_likelihood(fit, np.array([[2, 2]]), terms).ndim  # (row, class)
    2
    """
    return terms.rows_times(rows, pt.log(terms.variable("feature_prob")).T)
