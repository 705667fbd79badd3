"""Poisson naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.poisson_nb.PoissonFamily.pymc_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayesgen.families.shared_pymc import (
    block_dims,
    block_model,
    class_prob_prior,
    gamma_rate_transform,
    observed_counts,
    positive_priors,
    whole_counts,
)
from bayesgen.maths.counts import missing_entries

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms


def _poisson_exposure_kernel(value, exposure, rate):
    """log Poisson(value | exposure · rate) less its terms free of the rate (value log exposure
    and log value!); 0 for a class without rows (value and exposure both 0)."""
    return value * pt.log(rate) - exposure * rate


def _poisson_exposure(exposure, rate, size):
    return pm.Poisson.dist(mu=exposure * rate, size=size)


def poisson_nb_pymc_model(estimates: xr.Dataset, prior_shape: float, prior_rate: float) -> pm.Model:
    """Poisson naive Bayes on its sufficient statistics.

    π ~ Dirichlet(a), a = ``class_alpha`` from ``estimates.attrs``, and every rate
    ``feature_rate`` λ_kj ~ Gamma(``prior_shape``, ``prior_rate``). Observed: the class counts
    ``class_count`` ~ Multinomial(N, π) and the sums ``feature_count`` S_kj ~ Poisson(N_k λ_kj).
    The rows' likelihood Π_i Poisson(x_ij | λ_kj) is λ^S e^(−N λ) / Π_i x_ij!, so the sum
    carries all that the rows say about λ (the factorisation theorem): the posterior is
    exactly that of the rows, Gamma(a₀ + S_kj, b₀ + N_k), at a cost that does not grow with
    them. PyMC's pointwise log-likelihood of ``feature_count`` leaves out the terms free of λ
    (:func:`~bayesgen.families.shared_pymc.observed_counts`).

    With missing entries (``cell_count`` in ``estimates``) S_kj sums the observed entries and
    its exposure is the cell's count n_kj of observed rows, S_kj ~ Poisson(n_kj λ_kj): a
    cell without an observed row contributes nothing (S = n = 0).

    Fractional sums (weighted or fractional counts) cannot be observed as Poisson: they enter
    the same kernel S log λ − N λ through the potential ``feature_loglik`` (a weighted
    likelihood), which PyMC does not simulate.

    NUTS samples the rates through the transform of
    :func:`~bayesgen.families.shared_pymc.gamma_rate_transform` (by default
    :class:`~bayesgen.families.shared_pymc.StandardisedLog`), standardised by their posterior
    Gamma (the data ``feature_rate_standardisation``), and starts at its mean.
    """
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    dims = block_dims("class", "feature")
    counts = estimates["feature_count"].values.astype(np.float64)
    whole = whole_counts(counts)
    rows = estimates["class_count"].values.astype(np.float64)
    cells = estimates["cell_count"].values.astype(np.float64) if "cell_count" in estimates else None
    posterior_shape = prior_shape + counts
    posterior_rate = (prior_rate + rows)[:, None] if cells is None else prior_rate + cells
    with block_model(estimates) as model:
        class_count, _ = class_prob_prior(estimates, class_alpha)
        data = pm.Data("feature_count_data", counts if whole is None else whole, dims=dims)
        # Priors are data, so that one compiled graph serves another prior of the same shape.
        shape = pm.Data("rate_prior_shape", prior_shape)
        rate_of_rate = pm.Data("rate_prior_rate", prior_rate)
        constants, transform = gamma_rate_transform(
            "feature_rate",
            posterior_shape,
            np.broadcast_to(posterior_rate, posterior_shape.shape),
            dims=dims,
        )
        rate = pm.Gamma(
            "feature_rate",
            alpha=shape,
            beta=rate_of_rate,
            dims=dims,
            shape=constants.shape[1:],  # see standardisation_data
            initval=posterior_shape / posterior_rate,
            default_transform=transform,
        )
        if cells is None:
            exposure = pt.cast(class_count, "float64")[:, None]
        else:
            exposure = pm.Data("cell_count", cells, dims=dims)
        if whole is None:
            pm.Potential("feature_loglik", pt.sum(_poisson_exposure_kernel(data, exposure, rate)))
        else:
            observed_counts(
                "feature_count",
                _poisson_exposure,
                _poisson_exposure_kernel,
                exposure,
                rate,
                observed=data,
                dims=dims,
            )
    return model


def poisson_nb_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log p(x_i | y = k, λ) of every row and class from the model's ``feature_rate``, up to
    −Σ_j log x_ij! (the block's ``row_log_constant``): Σ_j (x_ij log λ_kj − λ_kj) over each
    row's observed features, shape (n_rows, n_classes); the counts' term is a product at the
    cost of their nonzero entries, a missing entry's λ_kj is added back.

    ``terms`` (:class:`~bayesgen.families.unlabelled_pymc.RowTerms`) reads the variables of
    :func:`poisson_nb_pymc_model`'s model (see
    :func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> fit = family("poisson_nb").fit(np.array([[3, 1], [0, 4]]), ["a", "b"])
    >>> terms = RowTerms(family("poisson_nb").pymc_model(fit))
    >>> poisson_nb_class_log_likelihood(fit, np.array([[2.0, np.nan]]), terms).ndim  # (row, class)
    2
    """
    rate = terms.variable("feature_rate")
    missing = missing_entries(rows)
    counts = rows if missing is None else np.where(missing, 0.0, rows)
    log_density = terms.rows_times(counts, pt.log(rate).T) - pt.sum(rate, axis=1)[None, :]
    if missing is not None:
        log_density = log_density + terms.rows_times(missing, rate.T)
    return log_density
