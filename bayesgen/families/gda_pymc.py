"""GDA as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.gda.GaussianFamily.pymc_model`).

Imported only when a PyMC model is asked for, so that the GDA closed forms stay importable
without PyMC and PyTensor.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr


def gda_pymc_model(estimates: xr.Dataset, *, cov_prior: str, lkj_eta: float) -> pm.Model:
    """The model :meth:`~bayesgen.families.gda.GaussianFamily.pymc_model` documents."""
    from bayesgen.generative import (
        class_prob_prior,
        model_coords,
        observed_class_means,
        positive_priors,
        wishart_is_regular,
    )

    if "prior_mean" not in estimates:
        raise ValueError(
            "stats: the GDA model needs the prior hyperparameters; compute stats with "
            "closed_form.gda(X, y, prior=NormalInverseWishart(...)), not prior=None."
        )
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    n_features = estimates.sizes["feature"]
    with pm.Model(coords=model_coords(estimates)) as model:
        # Hyperparameters are data too, so one compiled graph serves every data set of
        # this shape.
        prior_mean = pm.Data("prior_mean", estimates["prior_mean"].values, dims="feature")
        prior_kappa = pm.Data("prior_kappa", estimates.attrs["prior_kappa"])
        class_count, class_prob = class_prob_prior(estimates, class_alpha)
        if cov_prior == "conjugate":
            prec_chol = _bartlett_precision_chol(estimates, n_features)
            precision = prec_chol @ prec_chol.T
            mu = pm.MvNormal(
                "mu",
                mu=prior_mean,
                tau=prior_kappa * precision,
                dims=("class", "feature"),
            )
            log_det_precision = 2 * pt.sum(pt.log(pt.diag(prec_chol)))
            whiten = lambda m: prec_chol.T @ m  # noqa: E731 - vᵀΛv = |Lᵀv|²
            cov = pt.linalg.inv(precision)
            cov_chol = pt.linalg.cholesky(cov)
        elif cov_prior == "lkj":
            scale = np.sqrt(
                np.diag(estimates["prior_scale"].values) / _prior_cov_divisor(estimates)
            )
            scale = pm.Data("prior_sd", scale, dims="feature")
            chol, _, _ = pm.LKJCholeskyCov(
                "cov_chol",
                n=n_features,
                eta=lkj_eta,
                sd_dist=pm.HalfNormal.dist(sigma=2.5 * scale, shape=n_features),
                compute_corr=True,
            )
            mu = pm.Normal("mu", mu=prior_mean, sigma=10 * scale, dims=("class", "feature"))
            log_det_precision = -2 * pt.sum(pt.log(pt.diag(chol)))
            whiten = lambda m: pt.linalg.solve_triangular(chol, m, lower=True)  # noqa: E731
            cov = chol @ chol.T
            cov_chol = chol
        else:
            raise ValueError(f"cov_prior: expected 'conjugate' or 'lkj'; got {cov_prior!r}.")
        observed_class_means(estimates, class_count, mu, cov_chol)
        # S ~ Wishart(N − K, Σ), K counting the classes with rows.
        n_present = int(np.count_nonzero(estimates["class_count"].values > 0))
        dof = class_count.sum() - n_present
        scatter = estimates["scatter"].values
        square = ("feature", "feature2")
        if wishart_is_regular(scatter, float(estimates["class_count"].sum()) - n_present):
            observed = pm.Data("scatter_data", scatter, dims=square)
            pm.Wishart("scatter", nu=dof, scale_chol=cov_chol, observed=observed, dims=square)
        else:
            # Any R with S = R Rᵀ turns tr(Λ S) into a sum of squares; eigh tolerates a
            # singular S.
            root = pm.Data("scatter_root", _matrix_root(scatter), dims=square)
            pm.Potential(
                "scatter_loglik",
                0.5 * dof * log_det_precision - 0.5 * pt.sum(whiten(root) ** 2),
            )
        pm.Deterministic("cov", cov, dims=("feature", "feature2"))
        _pymc_linear_form(class_prob, mu, cov, n_classes=estimates.sizes["class"])
    return model


def _bartlett_precision_chol(estimates: xr.Dataset, n_features: int):
    """Cholesky factor L_V A of Λ ~ Wishart(ν₀, V = Ψ₀⁻¹) by the Bartlett decomposition."""
    dof = pm.Data("prior_dof", estimates.attrs["prior_dof"])
    scale_chol = np.linalg.cholesky(np.linalg.inv(estimates["prior_scale"].values))
    scale_chol = pm.Data("prior_precision_chol", scale_chol, dims=("feature", "feature2"))
    lower = np.tril_indices(n_features, k=-1)
    chi2 = pm.ChiSquared("bartlett_chi2", nu=dof - np.arange(n_features), shape=n_features)
    below = pm.Normal("bartlett_normal", 0.0, 1.0, shape=len(lower[0]))
    factor = pt.diag(pt.sqrt(chi2))
    factor = pt.set_subtensor(factor[lower], below)
    return scale_chol @ factor


def _pymc_linear_form(class_prob, mu, cov, *, n_classes: int) -> None:
    """Declare ``coef`` and ``intercept`` as deterministics of the PyMC model."""
    coef = pt.linalg.solve(cov, mu.T, assume_a="pos").T  # w_k = Σ⁻¹ μ_k
    intercept = -0.5 * pt.sum(mu * coef, axis=-1) + pt.log(class_prob)
    if n_classes == 2:
        pm.Deterministic("coef", coef[1] - coef[0], dims="feature")
        pm.Deterministic("intercept", intercept[1] - intercept[0])
    else:
        pm.Deterministic("coef", coef, dims=("class", "feature"))
        pm.Deterministic("intercept", intercept, dims="class")


def _matrix_root(matrix: np.ndarray) -> np.ndarray:
    """R with R Rᵀ = ``matrix`` for a positive semi-definite matrix."""
    eigenvalues, eigenvectors = np.linalg.eigh(matrix)
    return eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))


def _prior_cov_divisor(estimates: xr.Dataset) -> float:
    """ν₀ − D − 1, the divisor of Ψ₀ giving the prior mean of Σ (1 where that mean is
    undefined), for the LKJ prior's scales."""
    return max(estimates.attrs["prior_dof"] - estimates.sizes["feature"] - 1, 1.0)
