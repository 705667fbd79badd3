"""QDA as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.qda.QuadraticFamily.pymc_model`).

Imported only when a PyMC model is asked for, so that the QDA closed forms stay importable
without PyMC and PyTensor.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr


def qda_pymc_model(estimates: xr.Dataset) -> pm.Model:
    """The model :meth:`~bayesgen.families.qda.QuadraticFamily.pymc_model` documents."""
    from bayesgen.generative import (
        class_prob_prior,
        model_coords,
        observed_class_means,
        positive_priors,
    )

    if "prior_mean" not in estimates:
        raise ValueError(
            "stats: the QDA model needs the prior hyperparameters; compute stats with "
            "closed_form.qda(X, y, prior=NormalInverseWishart(...)), not prior=None."
        )
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
    with pm.Model(coords=model_coords(estimates)) as model:
        # Hyperparameters are data too, so one compiled graph serves every data set of
        # this shape.
        prior_mean = pm.Data("prior_mean", estimates["prior_mean"].values, dims="feature")
        prior_kappa = pm.Data("prior_kappa", estimates.attrs["prior_kappa"])
        prior_dof = pm.Data("prior_dof", estimates.attrs["prior_dof"])
        scale_chol = np.linalg.cholesky(np.linalg.inv(estimates["prior_scale"].values))
        scale_chol = pm.Data("prior_precision_chol", scale_chol, dims=("feature", "feature2"))
        class_count, _ = class_prob_prior(estimates, class_alpha)
        lower = np.tril_indices(n_features, k=-1)
        diagonal = np.arange(n_features)
        chi2 = pm.ChiSquared(
            "bartlett_chi2", nu=prior_dof - diagonal, shape=(n_classes, n_features)
        )
        below = pm.Normal("bartlett_normal", 0.0, 1.0, shape=(n_classes, len(lower[0])))
        factor = pt.zeros((n_classes, n_features, n_features))
        factor = pt.set_subtensor(factor[:, diagonal, diagonal], pt.sqrt(chi2))
        factor = pt.set_subtensor(factor[:, lower[0], lower[1]], below)
        prec_chol = pt.matmul(scale_chol, factor)  # (class, feature, feature2), lower
        precision = pt.matmul(prec_chol, prec_chol.mT)
        # One MvNormal per class: PyMC 6.4 gives a wrongly shaped (and wrong) log density
        # for one MvNormal whose batched precision depends on other random variables.
        mu = pt.stack(
            [
                pm.MvNormal(
                    f"mu_{k}", mu=prior_mean, tau=prior_kappa * precision[k], dims="feature"
                )
                for k in range(n_classes)
            ]
        )
        cov = pt.linalg.inv(precision)
        cov_chol = pt.linalg.cholesky(cov)
        observed_class_means(estimates, class_count, mu, cov_chol)
        _pymc_class_scatters(estimates, class_count, prec_chol, cov_chol)
        pm.Deterministic("mu", mu, dims=("class", "feature"))
        pm.Deterministic("cov", cov, dims=("class", "feature", "feature2"))
    return model


def _pymc_class_scatters(estimates, class_count, prec_chol, cov_chol) -> None:
    """S_k ~ Wishart(N_k − 1, Σ_k) observed as ``scatter_k`` for every class where it has a
    density; the kernel of the others (N_k ≥ 2) in the potential ``scatter_loglik``."""
    from bayesgen.generative import wishart_is_regular

    count = estimates["class_count"].values
    scatter = estimates["scatter"].values
    square = ("feature", "feature2")
    singular = []
    for k in range(len(count)):
        if wishart_is_regular(scatter[k], float(count[k]) - 1.0):
            observed = pm.Data(f"scatter_{k}_data", scatter[k], dims=square)
            dof = class_count[k] - 1
            pm.Wishart(
                f"scatter_{k}", nu=dof, scale_chol=cov_chol[k], observed=observed, dims=square
            )
        elif count[k] >= 2:
            singular.append(k)
    if singular:
        # Any R_k with S_k = R_k R_kᵀ turns tr(Λ_k S_k) into a sum of squares; eigh
        # tolerates a singular S_k (a class with fewer samples than features).
        root = pm.Data("scatter_root", _matrix_roots(scatter[singular]))
        chol = prec_chol[singular]
        log_det_precision = 2 * pt.sum(pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        whitened = pt.matmul(chol.mT, root)  # vᵀΛ_k v = |L_kᵀ v|²
        dof = pt.cast(class_count[singular], "float64") - 1.0
        pm.Potential(
            "scatter_loglik",
            pt.sum(0.5 * dof * log_det_precision - 0.5 * pt.sum(whitened**2, axis=(-2, -1))),
        )


def _matrix_roots(matrices: np.ndarray) -> np.ndarray:
    """R_k with R_k R_kᵀ = S_k for a stack of positive semi-definite matrices."""
    eigenvalues, eigenvectors = np.linalg.eigh(matrices)
    return eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))[..., None, :]
