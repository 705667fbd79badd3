"""Categorical naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.categorical.CategoricalFamily.pymc_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import scipy.sparse as sp
import xarray as xr

from bayesgen.families.shared_pymc import (
    alpha_variable,
    block_dims,
    block_model,
    class_prob_prior,
    gamma_poisson_rates,
    positive_priors,
    simplex_sums,
)

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms


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
        rate = gamma_poisson_rates(
            "cell",
            counts,
            alpha,
            dims=block_dims("class", "cell"),
            groups=cell_feature,
            random_alpha=alpha_variable(estimates),
            weight=(
                estimates["prior_weight"].values[cell_feature, cell_category]
                if "prior_weight" in estimates
                else None
            ),
        )
        totals = simplex_sums(rate, cell_feature, n_features)  # (class, feature)
        cell_prob = rate / totals[:, cell_feature]
        padded = pt.zeros((len(estimates["class"]), *mask.shape))
        padded = pt.set_subtensor(padded[:, cell_feature, cell_category], cell_prob)
        pm.Deterministic("feature_prob", padded, dims=block_dims("class", "feature", "category"))
    return model


def categorical_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log p(x_i | y = k, θ) of every row and class from the model's ``feature_prob``:
    Σ_n log θ_kn,x_in over each row's observed features, shape (n_rows, n_classes).

    Each observed entry picks one real (feature, category) cell: the rows become an indicator
    matrix (row, cell) and the sum a sparse product with log θ of the real cells only (a
    padding cell's θ = 0 has no finite logarithm, and no gradient through it). ``terms``
    (:class:`~bayesgen.families.unlabelled_pymc.RowTerms`) reads the variables of
    :func:`categorical_nb_pymc_model`'s model (see
    :func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Raises
    ------
    ValueError
        Naming X, for a category code that the fit has no cell for.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> fit = family("categorical_nb").fit(np.array([[2, 0], [0, 1]]), ["a", "b"])
    >>> terms = RowTerms(family("categorical_nb").pymc_model(fit))
    >>> categorical_class_log_likelihood(fit, np.array([[1.0, np.nan]]), terms).ndim  # (row, class)
    2
    """
    mask = estimates["category_mask"].values
    cell_feature, cell_category = np.nonzero(mask)
    cell_of = np.full(mask.shape, -1, dtype=np.int64)
    cell_of[cell_feature, cell_category] = np.arange(cell_feature.size)
    codes = rows.toarray() if sp.issparse(rows) else np.asarray(rows, dtype=np.float64)
    row, feature = np.nonzero(~np.isnan(codes))
    category = codes[row, feature].astype(np.int64)
    known = (category >= 0) & (category < mask.shape[1])
    cell = np.full(category.shape, -1)
    cell[known] = cell_of[feature[known], category[known]]
    if np.any(cell < 0):
        first = np.flatnonzero(cell < 0)[0]
        raise ValueError(
            f"X: row {row[first]} has category code {category[first]} at feature "
            f"{feature[first]}, which the fit has no cell for."
        )
    indicator = sp.csr_matrix(
        (np.ones(cell.size), (row, cell)), shape=(codes.shape[0], cell_feature.size)
    )
    log_cells = pt.log(terms.variable("feature_prob")[:, cell_feature, cell_category])
    return terms.rows_times(indicator, log_cells.T)
