"""QDA as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.qda.QuadraticFamily.pymc_model`).

Imported only when a PyMC model is asked for, so that the QDA closed forms stay importable
without PyMC and PyTensor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayesgen.families.gda_pymc import (
    bartlett_precision_chol,
    covariance,
    model_precision_chol,
    observe_incomplete_rows,
    observed_means_by_precision,
    precision_normal,
    precision_normal_logp,
    rows_log_density,
    singular_scatter_potential,
    static_data,
    wishart_by_precision,
)
from bayesgen.families.shared_pymc import (
    block_dims,
    block_model,
    class_prob_prior,
    positive_priors,
    wishart_is_regular,
)

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms


def qda_pymc_model(estimates: xr.Dataset, *, incomplete_rows=None) -> pm.Model:
    """The model :meth:`~bayesgen.families.qda.QuadraticFamily.pymc_model` documents."""
    if "prior_mean" not in estimates:
        raise ValueError(
            "stats: the QDA model needs the prior hyperparameters; compute stats with "
            "closed_form.qda(X, y, prior=NormalInverseWishart(...)), not prior=None."
        )
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    n_classes = estimates.sizes["class"]
    with block_model(estimates) as model:
        # Hyperparameters are data too, so one compiled graph serves every data set of
        # this shape.
        prior_mean = static_data(
            "prior_mean", estimates["prior_mean"].values, dims=block_dims("feature")
        )
        prior_kappa = pm.Data("prior_kappa", estimates.attrs["prior_kappa"])
        class_count, class_prob = class_prob_prior(estimates, class_alpha)
        # L_k, the Cholesky factor of Λ_k, and the Gaussian densities on it: see gda_pymc.
        prec_chol, half_log_det = bartlett_precision_chol(estimates, n_classes)
        mu = precision_normal("mu", prior_mean, prec_chol, half_log_det, prior_kappa)
        observed_means_by_precision(estimates, class_count, mu, prec_chol, half_log_det)
        _pymc_class_scatters(estimates, class_count, prec_chol, half_log_det)
        if incomplete_rows is not None:

            def row_log_density(rows, k):
                return precision_normal_logp(rows, mu[k], prec_chol[k], half_log_det[k], 1.0)

            observe_incomplete_rows(estimates, class_prob, *incomplete_rows, row_log_density)
        pm.Deterministic(
            "cov", covariance(prec_chol), dims=block_dims("class", "feature", "feature2")
        )
    return model


def _pymc_class_scatters(estimates, class_count, prec_chol, half_log_det) -> None:
    """S_k ~ Wishart(N_k − 1, Σ_k) observed as ``scatter_k`` for every class where it has a
    density; the kernel of the others (N_k ≥ 2) in the potential ``scatter_loglik``."""
    count = estimates["class_count"].values
    scatter = estimates["scatter"].values
    square = block_dims("feature", "feature2")
    singular = []
    for k in range(len(count)):
        if wishart_is_regular(scatter[k], float(count[k]) - 1.0):
            observed = static_data(f"scatter_{k}_data", scatter[k], dims=square)
            dof = class_count[k] - 1
            wishart_by_precision(f"scatter_{k}", dof, prec_chol[k], half_log_det[k], observed)
        elif count[k] >= 2:
            singular.append(k)
    if singular:
        # Any R_k with S_k = R_k R_kᵀ turns tr(Λ_k S_k) into a sum of squares; eigh
        # tolerates a singular S_k (a class with fewer samples than features).
        singular_scatter_potential(
            static_data("scatter_root", _matrix_roots(scatter[singular])),
            pt.cast(class_count[singular], "float64") - 1.0,
            prec_chol[singular],
            half_log_det[singular],
        )


def _matrix_roots(matrices: np.ndarray) -> np.ndarray:
    """R_k with R_k R_kᵀ = S_k for a stack of positive semi-definite matrices."""
    eigenvalues, eigenvectors = np.linalg.eigh(matrices)
    return eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))[..., None, :]


def qda_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log N(x_i | μ_k, Σ_k) of every row and class from the variables of
    :func:`qda_pymc_model`'s model (each class's precision factor from its Bartlett
    variables), in full, shape (n_rows, n_classes) (see
    :func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> X = np.array([[0.1, 1.0], [0.4, 0.8], [0.3, 1.3], [2.0, 3.1], [2.5, 2.9], [2.2, 3.5]])
    >>> fit = family("qda").fit(X, list("aaabbb"))
    >>> terms = RowTerms(family("qda").pymc_model(fit))
    >>> qda_class_log_likelihood(fit, np.array([[1.0, 2.0]]), terms).ndim  # (row, class)
    2
    """
    prec_chol, half_log_det = model_precision_chol(estimates, terms, estimates.sizes["class"])
    return rows_log_density(rows, terms.variable("mu"), prec_chol, half_log_det)
