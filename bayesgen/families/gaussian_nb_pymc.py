"""Gaussian naive Bayes as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.gaussian_nb.GaussianNaiveBayesFamily.pymc_model`).

Imported only when a PyMC model is asked for, so that the block's closed forms stay importable
without PyMC and PyTensor.
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
    positive_priors,
)

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms


def gaussian_nb_pymc_model(estimates: xr.Dataset) -> pm.Model:
    """Gaussian naive Bayes: π ~ Dirichlet(a), and for every class k and feature j
    ``var`` σ²_kj ~ Inv-Gamma(a₀, b₀_j) and ``mu`` μ_kj | σ²_kj ~ N(m₀_j, σ²_kj / κ₀).

    The rows' likelihood Π_i N(x_ij | μ_kj, σ²_kj) factorises (Fisher–Neyman) into a term free
    of (μ, σ²) times that of the cell's statistics, which are independent given (μ, σ²):

    * ``class_mean`` x̄_kj ~ N(μ_kj, σ²_kj / N_k), observed for the classes with rows;
    * ``sum_squares`` S_kj ~ Gamma((N_k − 1) / 2, rate 1 / (2 σ²_kj)) (S_kj / σ²_kj ~
      χ²(N_k − 1)), whose log density is written without its term free of σ²,
      ((N_k − 1) / 2 − 1) log S_kj − lnΓ((N_k − 1) / 2): a feature constant within a class
      (S_kj = 0) has no Gamma density, but its kernel −((N_k − 1) / 2) log(2 σ²_kj) is the
      likelihood's. A class with at most one row has shape 0 there (S = 0 always): no term.

    So the posterior is that of the per-row model, at a cost that does not grow with the rows;
    both observed variables stay random variables that PyMC simulates.

    With missing entries (``cell_count`` in ``estimates``) each cell's statistics are those of
    its observed rows and N_k is that cell's count n_kj: a missing entry's factor integrates to
    1, and a cell without an observed row contributes nothing (its μ and σ² keep the prior).

    Parameters
    ----------
    estimates : xarray.Dataset
        From :meth:`~bayesgen.families.gaussian_nb.GaussianNaiveBayesFamily.from_statistics`
        (its resolved prior ``prior_mean``, ``prior_scale``, ``prior_kappa``,
        ``prior_shape``).
    """
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    if "cell_count" in estimates:
        return _cell_model(estimates, class_alpha)
    count = estimates["class_count"].values.astype(np.float64)
    has_rows = count > 0
    cell = block_dims("class", "feature")
    with block_model(estimates) as model:
        class_count, _ = class_prob_prior(estimates, class_alpha)
        # Hyperparameters are data too, so one compiled graph serves every data set of this shape.
        feature = block_dims("feature")
        prior_mean = pm.Data("prior_mean", estimates["prior_mean"].values, dims=feature)
        prior_scale = pm.Data("prior_scale", estimates["prior_scale"].values, dims=feature)
        prior_kappa = pm.Data("prior_kappa", float(estimates.attrs["prior_kappa"]))
        prior_shape = pm.Data("prior_shape", float(estimates.attrs["prior_shape"]))
        var = pm.InverseGamma("var", alpha=prior_shape, beta=prior_scale, dims=cell)
        mu = pm.Normal("mu", mu=prior_mean, sigma=pt.sqrt(var / prior_kappa), dims=cell)
        n = pt.cast(class_count, "float64")[:, None]
        if has_rows.all():
            pm.Normal(
                "class_mean",
                mu=mu,
                sigma=pt.sqrt(var / n),
                observed=estimates["class_mean"].values,
                dims=cell,
            )
        else:  # classes given to partial_fit without rows yet have no mean to observe
            present = np.flatnonzero(has_rows)
            pm.Normal(
                "class_mean",
                mu=mu[present],
                sigma=pt.sqrt(var[present] / n[present]),
                observed=estimates["class_mean"].values[present],
            )
        pm.CustomDist(
            "sum_squares",
            pt.maximum(n - 1.0, 0.0) / 2.0,
            1.0 / (2.0 * var),
            dist=_gamma,
            logp=_gamma_kernel,
            observed=estimates["sum_squares"].values,
            dims=cell,
        )
    return model


def _cell_model(estimates: xr.Dataset, class_alpha) -> pm.Model:
    """:func:`gaussian_nb_pymc_model` with a count n_kj per cell (data with missing entries)."""
    cells = estimates["cell_count"].values.astype(np.float64)
    present = np.nonzero(cells > 0)
    cell = block_dims("class", "feature")
    with block_model(estimates) as model:
        class_prob_prior(estimates, class_alpha)
        feature = block_dims("feature")
        prior_mean = pm.Data("prior_mean", estimates["prior_mean"].values, dims=feature)
        prior_scale = pm.Data("prior_scale", estimates["prior_scale"].values, dims=feature)
        prior_kappa = pm.Data("prior_kappa", float(estimates.attrs["prior_kappa"]))
        prior_shape = pm.Data("prior_shape", float(estimates.attrs["prior_shape"]))
        var = pm.InverseGamma("var", alpha=prior_shape, beta=prior_scale, dims=cell)
        mu = pm.Normal("mu", mu=prior_mean, sigma=pt.sqrt(var / prior_kappa), dims=cell)
        n = pm.Data("cell_count", cells, dims=cell)
        # Only the cells with an observed row have a mean to observe.
        pm.Normal(
            "class_mean",
            mu=mu[present],
            sigma=pt.sqrt(var[present] / n[present]),
            observed=estimates["class_mean"].values[present],
        )
        pm.CustomDist(
            "sum_squares",
            pt.maximum(n - 1.0, 0.0) / 2.0,
            1.0 / (2.0 * var),
            dist=_gamma,
            logp=_gamma_kernel,
            observed=estimates["sum_squares"].values,
            dims=cell,
        )
    return model


def _gamma(shape, rate, size):
    return pm.Gamma.dist(alpha=shape, beta=rate, size=size)


def _gamma_kernel(value, shape, rate):
    """log Gamma(value | shape, rate) without (shape − 1) log value − lnΓ(shape), which do not
    depend on σ² (and are infinite at value = 0)."""
    return shape * pt.log(rate) - rate * value


def gaussian_nb_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log p(x_i | y = k, μ, σ²) of every row and class from the model's ``mu`` and ``var``,
    in full: Σ_j log N(x_ij | μ_kj, σ²_kj) over each row's observed features (a missing entry,
    NaN, adds nothing), shape (n_rows, n_classes).

    ``terms`` (:class:`~bayesgen.families.unlabelled_pymc.RowTerms`) reads the variables of
    :func:`gaussian_nb_pymc_model`'s model (see
    :func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> X = np.array([[0.1, 1.0], [0.4, 0.8], [2.0, 3.1], [2.5, 2.9]])
    >>> fit = family("gaussian_nb").fit(X, ["a", "a", "b", "b"])
    >>> terms = RowTerms(family("gaussian_nb").pymc_model(fit))
    >>> gaussian_nb_class_log_likelihood(fit, np.array([[1.0, np.nan]]), terms).ndim  # (row, class)
    2
    """
    rows = np.asarray(rows, dtype=np.float64)
    observed = ~np.isnan(rows)
    values = np.where(observed, rows, 0.0)[:, None, :]  # (row, class, feature)
    mu, var = terms.variable("mu")[None], terms.variable("var")[None]
    per_feature = -0.5 * (pt.log(2.0 * np.pi * var) + (values - mu) ** 2 / var)
    if not observed.all():
        per_feature = per_feature * observed[:, None, :]
    return pt.sum(per_feature, axis=-1)
