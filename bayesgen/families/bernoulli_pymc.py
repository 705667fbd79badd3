"""Bernoulli naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.bernoulli.BernoulliFamily.pymc_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayesgen.families.beta_transforms_pymc import binomial_logit_kernel, standardised_beta
from bayesgen.families.shared_pymc import (
    alpha_data,
    alpha_variable,
    block_dims,
    block_model,
    class_prob_prior,
    observed_counts,
    positive_priors,
    whole_counts,
)
from bayesgen.maths.counts import missing_entries
from bayesgen.maths.dirichlet import per_class

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms


def _binomial(n, p, size):
    return pm.Binomial.dist(n=n, p=p, size=size)


def bernoulli_nb_pymc_model(estimates: xr.Dataset) -> pm.Model:
    """Multivariate Bernoulli (set-of-words) naive Bayes.

    π ~ Dirichlet(a), φ_jk ~ Beta(λ, λ); observed: the class counts ``class_count`` ~
    Multinomial(N, π) and ``feature_count`` N_jk ~ Binomial(N_k, φ_jk), the number of the
    N_k class-k samples that have feature j. Where entries are missing, a cell's trials are
    the class-k rows observed at feature j (``cell_count``, the pm.Data ``cell_count_data``)
    instead of N_k: a missing entry's factor drops out.

    NUTS samples φ on its logit, standardised by the posterior Beta(λ + N_jk, λ + N_k − N_jk)
    of the start λ and started at its mean
    (:func:`~bayesgen.families.beta_transforms_pymc.standardised_beta`), with the log
    densities written at one softplus per cell; where some posterior shape is below 0.5 the
    logit is also shape-corrected, and capped below σ(35) where φ could round to 1 (always
    under a hyperprior).
    """
    alpha, class_alpha = positive_priors(estimates)
    counts = whole_counts(estimates["feature_count"].values)
    if counts is None:
        raise ValueError(
            "stats: feature_count of the Bernoulli model must hold whole numbers ≥ 0 (the "
            "samples of each class that have each feature)."
        )
    trials = None
    if "cell_count" in estimates:
        trials = whole_counts(estimates["cell_count"].values)
        if trials is None:
            raise ValueError(
                "stats: cell_count of the Bernoulli model must hold whole numbers ≥ 0 (the "
                "samples of each class observed at each feature)."
            )
    dims = block_dims("class", "feature")
    with block_model(estimates) as model:
        class_count, _ = class_prob_prior(estimates, class_alpha)
        present = pm.Data("feature_count_data", counts, dims=dims)
        if trials is None:
            rows = class_count[:, None]
        else:  # each cell's observed rows
            rows = pm.Data("cell_count_data", trials, dims=dims)
        start_a = start_b = per_class(alpha, counts.ndim)  # one λ per class: a column
        random_alpha = alpha_variable(estimates)  # λ ~ Gamma with a hyperprior
        alpha = alpha_data(start_a) if random_alpha is None else random_alpha
        if "prior_weight" in estimates:  # Beta(λ w, λ (2 − w)) of a shared mean w / 2
            weight = estimates["prior_weight"].values
            data_weight = pm.Data("feature_prior_weight", weight)
            a, b = alpha * data_weight, alpha * (2.0 - data_weight)
            start_a, start_b = start_a * weight, start_b * (2.0 - weight)
        else:
            a = b = alpha
        cell_rows = estimates["class_count"].values[:, None] if trials is None else trials
        posterior = (counts + start_a, np.maximum(cell_rows - counts, 0.0) + start_b)
        prob = standardised_beta(
            "feature_prob",
            a,
            b,
            posterior=posterior,
            dims=dims,
            random_shapes=random_alpha is not None,
        )
        observed_counts(
            "feature_count",
            _binomial,
            binomial_logit_kernel,
            rows,
            prob,
            observed=present,
            dims=dims,
        )
    return model


def bernoulli_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log p(x_i | y = k, φ) of every row and class from the model's ``feature_prob``:
    Σ_j [x_ij log φ_kj + (1 − x_ij) log(1 − φ_kj)] over each row's observed features, shape
    (n_rows, n_classes), written as Σ_j log(1 − φ_kj) plus the present features' log-odds
    (a product at the cost of the rows' ones) less the missing entries' log(1 − φ_kj).

    ``terms`` (:class:`~bayesgen.families.unlabelled_pymc.RowTerms`) reads the variables of
    :func:`bernoulli_nb_pymc_model`'s model (see
    :func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> fit = family("bernoulli_nb").fit(np.array([[1, 0], [0, 1]]), ["a", "b"])
    >>> terms = RowTerms(family("bernoulli_nb").pymc_model(fit))
    >>> bernoulli_class_log_likelihood(fit, np.array([[1.0, np.nan]]), terms).ndim  # (row, class)
    2
    """
    prob = terms.variable("feature_prob")
    log_absent = pt.log1p(-prob)
    missing = missing_entries(rows)
    present = rows if missing is None else np.where(missing, 0.0, rows)
    log_density = terms.rows_times(present, pm.math.logit(prob).T)  # log φ − log(1 − φ)
    log_density = log_density + pt.sum(log_absent, axis=1)[None, :]
    if missing is not None:
        log_density = log_density - terms.rows_times(missing, log_absent.T)
    return log_density
