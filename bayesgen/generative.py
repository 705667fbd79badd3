"""The generative classifiers as PyMC models, declared on sufficient statistics.

Each ``*_model(stats)`` takes the ``xarray.Dataset`` of a :mod:`bayesgen.closed_form` fit
function and returns a ``pm.Model``; it declares priors, likelihood and coords/dims and nothing
else (no sampling, no I/O). The data enter as ``pm.Data`` holding the sufficient statistics
(class counts, feature counts, class means, scatter), so the graph and the cost of one gradient
do not depend on the number of rows, and one compiled graph serves any data set of the same
shape (``pm.set_data``).

The likelihoods are written as ``pm.Potential`` terms on those statistics. By the factorisation
theorem they differ from the per-row likelihood only by a constant, so the posterior is the
same. Shared names: ``class_prob`` (class), ``feature_prob`` (class, feature[, category]),
GDA ``mu`` (class, feature), ``cov`` (feature, feature2), ``coef`` and ``intercept``.

Parameterisations (why they are fast):

* multinomial and categorical NB use the Gamma-Poisson form of the Dirichlet: independent
  g ~ Gamma(λ, 1) with the Poisson kernel Σ n log g - g give a posterior in which every g is an
  independent Gamma(λ + n, 2), and θ = g / Σg is then exactly Dirichlet(λ + n). NUTS sees a
  diagonal target instead of the correlated simplex of ``pm.Dirichlet`` + ``pm.Multinomial``.
  Fractional counts (TF-IDF) enter the same kernel as weights: each token contributes its
  weight to the log-likelihood (a weighted, or power, likelihood).
* Bernoulli NB: φ ~ Beta(λ, λ) with the binomial kernel, independent per (class, feature).
* GDA, conjugate: the precision Λ ~ Wishart(ν₀, Ψ₀⁻¹) through its Bartlett decomposition
  (Λ = L A Aᵀ Lᵀ with χ² diagonal and N(0, 1) below it), and μ_k | Λ ~ N(m₀, (κ₀Λ)⁻¹); then
  Σ = Λ⁻¹ follows the inverse-Wishart of :class:`bayesgen.closed_form.NormalInverseWishart`,
  whose posterior means are exact.
* GDA, LKJ: Σ = diag(σ) R diag(σ) with R ~ LKJ(η) and σ_j ~ HalfNormal(2.5 s_j), and
  μ_k ~ N(m₀, (10 s)²), s_j being the overall standard deviation of feature j.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

#: Variables kept in the trace for each model (raw parameterisation variables are dropped).
TRACE_VARS = {
    "multinomial_nb": ["class_prob", "feature_prob"],
    "bernoulli_nb": ["class_prob", "feature_prob"],
    "categorical_nb": ["class_prob", "feature_prob"],
    "gda": ["class_prob", "mu", "cov", "coef", "intercept"],
}


def model_for(stats: xr.Dataset, **options) -> pm.Model:
    """Dispatch on ``stats.attrs["model"]`` to the matching model function."""
    builders = {
        "multinomial_nb": multinomial_nb_model,
        "bernoulli_nb": bernoulli_nb_model,
        "categorical_nb": categorical_nb_model,
        "gda": gda_model,
    }
    return builders[stats.attrs["model"]](stats, **options)


def multinomial_nb_model(stats: xr.Dataset) -> pm.Model:
    """Multinomial (bag-of-words) naive Bayes.

    π ~ Dirichlet(a), θ_k ~ Dirichlet(λ) over the vocabulary for each class, with
    a = ``class_alpha`` and λ = ``alpha`` from ``stats.attrs``; likelihood of the class counts
    N_k and word counts N_kw.
    """
    alpha, class_alpha = _positive_priors(stats)
    with pm.Model(coords=_coords(stats)) as model:
        _class_prob(stats, class_alpha)
        rate = _gamma_poisson_rates(
            "feature", stats["feature_count"].values, alpha, dims=("class", "feature")
        )
        pm.Deterministic(
            "feature_prob", rate / rate.sum(axis=-1, keepdims=True), dims=("class", "feature")
        )
    return model


def bernoulli_nb_model(stats: xr.Dataset) -> pm.Model:
    """Multivariate Bernoulli (set-of-words) naive Bayes.

    π ~ Dirichlet(a), φ_jk ~ Beta(λ, λ); N_jk of the N_k class-k samples have feature j.
    """
    alpha, class_alpha = _positive_priors(stats)
    with pm.Model(coords=_coords(stats)) as model:
        class_count, _ = _class_prob(stats, class_alpha)
        present = pm.Data("feature_count", stats["feature_count"].values, dims=("class", "feature"))
        alpha = pm.Data("alpha", alpha)
        prob = pm.Beta("feature_prob", alpha=alpha, beta=alpha, dims=("class", "feature"))
        absent = class_count[:, None] - present
        pm.Potential("feature_loglik", pt.sum(present * pt.log(prob) + absent * pt.log1p(-prob)))
    return model


def categorical_nb_model(stats: xr.Dataset) -> pm.Model:
    """Categorical naive Bayes: θ_kn ~ Dirichlet(λ) over the K_n categories of feature n.

    ``feature_prob`` has dims (class, feature, category), padded with 0 beyond K_n (see
    ``category_mask``), as in :func:`bayesgen.closed_form.categorical_nb`.
    """
    alpha, class_alpha = _positive_priors(stats)
    mask = stats["category_mask"].values
    cell_feature, cell_category = np.nonzero(mask)  # the real (feature, category) cells
    n_features = mask.shape[0]
    coords = _coords(stats) | {"cell": np.arange(cell_feature.size)}
    with pm.Model(coords=coords) as model:
        _class_prob(stats, class_alpha)
        counts = stats["feature_count"].values[:, cell_feature, cell_category]
        rate = _gamma_poisson_rates("cell", counts, alpha, dims=("class", "cell"))
        membership = np.eye(n_features)[cell_feature]  # (cell, feature) indicator
        totals = pt.dot(rate, membership)  # (class, feature)
        cell_prob = rate / totals[:, cell_feature]
        padded = pt.zeros((len(stats["class"]), *mask.shape))
        padded = pt.set_subtensor(padded[:, cell_feature, cell_category], cell_prob)
        pm.Deterministic("feature_prob", padded, dims=("class", "feature", "category"))
    return model


def gda_model(stats: xr.Dataset, *, cov_prior: str = "conjugate", lkj_eta: float = 2.0) -> pm.Model:
    """Gaussian discriminant analysis with one covariance Σ shared by the K ≥ 2 classes.

    Parameters
    ----------
    stats : xarray.Dataset
        From :func:`bayesgen.closed_form.gda` with a normal-inverse-Wishart prior (its resolved
        hyperparameters ``prior_mean``, ``prior_scale``, ``prior_kappa``, ``prior_dof`` define
        the conjugate prior and the scales of the LKJ one).
    cov_prior : {"conjugate", "lkj"}
        "conjugate": normal-inverse-Wishart (through a Bartlett-decomposed Wishart on Σ⁻¹), for
        which the closed-form posterior means are exact. "lkj": LKJ(η) correlation with
        half-normal standard deviations and independent normal μ_k, PyMC's recommended prior
        for covariances, with no closed form.
    lkj_eta : float, default 2.0
        LKJ shape; 1 is uniform over correlation matrices, larger favours weaker correlation.
    """
    if "prior_mean" not in stats:
        raise ValueError(
            "stats: the GDA model needs the prior hyperparameters; compute stats with "
            "closed_form.gda(X, y, prior=NormalInverseWishart(...)), not prior=None."
        )
    _, class_alpha = _positive_priors(stats, needs_alpha=False)
    n_features = stats.sizes["feature"]
    with pm.Model(coords=_coords(stats)) as model:
        # Hyperparameters are data too, so one compiled graph serves every data set of this shape.
        prior_mean = pm.Data("prior_mean", stats["prior_mean"].values, dims="feature")
        prior_kappa = pm.Data("prior_kappa", stats.attrs["prior_kappa"])
        class_count, class_prob = _class_prob(stats, class_alpha)
        class_mean = pm.Data("class_mean", stats["class_mean"].values, dims=("class", "feature"))
        # Any R with S = R Rᵀ turns tr(Λ S) into a sum of squares; eigh tolerates a singular S.
        scatter_root = _matrix_root(stats["scatter"].values)
        root = pm.Data("scatter_root", scatter_root, dims=("feature", "feature2"))
        if cov_prior == "conjugate":
            prec_chol = _bartlett_precision_chol(stats, n_features)
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
        elif cov_prior == "lkj":
            scale = np.sqrt(np.diag(stats["prior_scale"].values) / _prior_cov_divisor(stats))
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
        else:
            raise ValueError(f"cov_prior: expected 'conjugate' or 'lkj'; got {cov_prior!r}.")
        # Σ_i log N(x_i | μ_{y_i}, Σ) from the statistics, without the -ND/2 log 2π constant.
        offset = (class_mean - mu).T  # (feature, class)
        pm.Potential(
            "gaussian_loglik",
            0.5 * class_count.sum() * log_det_precision
            - 0.5 * pt.sum(whiten(root) ** 2)
            - 0.5 * pt.sum(class_count * pt.sum(whiten(offset) ** 2, axis=0)),
        )
        pm.Deterministic("cov", cov, dims=("feature", "feature2"))
        _gda_linear_form(class_prob, mu, cov, n_classes=stats.sizes["class"])
    return model


def _bartlett_precision_chol(stats: xr.Dataset, n_features: int):
    """Cholesky factor L_V A of Λ ~ Wishart(ν₀, V = Ψ₀⁻¹) by the Bartlett decomposition."""
    dof = pm.Data("prior_dof", stats.attrs["prior_dof"])
    scale_chol = np.linalg.cholesky(np.linalg.inv(stats["prior_scale"].values))
    scale_chol = pm.Data("prior_precision_chol", scale_chol, dims=("feature", "feature2"))
    lower = np.tril_indices(n_features, k=-1)
    chi2 = pm.ChiSquared("bartlett_chi2", nu=dof - np.arange(n_features), shape=n_features)
    below = pm.Normal("bartlett_normal", 0.0, 1.0, shape=len(lower[0]))
    factor = pt.diag(pt.sqrt(chi2))
    factor = pt.set_subtensor(factor[lower], below)
    return scale_chol @ factor


def _gda_linear_form(class_prob, mu, cov, *, n_classes: int) -> None:
    coef = pt.linalg.solve(cov, mu.T, assume_a="pos").T  # w_k = Σ⁻¹ μ_k
    intercept = -0.5 * pt.sum(mu * coef, axis=-1) + pt.log(class_prob)
    if n_classes == 2:
        pm.Deterministic("coef", coef[1] - coef[0], dims="feature")
        pm.Deterministic("intercept", intercept[1] - intercept[0])
    else:
        pm.Deterministic("coef", coef, dims=("class", "feature"))
        pm.Deterministic("intercept", intercept, dims="class")


def _class_prob(stats: xr.Dataset, class_alpha: float):
    """π ~ Dirichlet(a) with the multinomial kernel of the class counts.

    Returns the class counts (as ``pm.Data``) and π.
    """
    n_classes = stats.sizes["class"]
    class_count = pm.Data("class_count", stats["class_count"].values, dims="class")
    # Priors are data too, so a grid of λ reuses one compiled graph.
    concentration = pm.Data("class_alpha", np.full(n_classes, class_alpha), dims="class")
    prob = pm.Dirichlet("class_prob", a=concentration, dims="class")
    pm.Potential("class_loglik", pt.sum(class_count * pt.log(prob)))
    return class_count, prob


def _positive_priors(stats: xr.Dataset, needs_alpha: bool = True) -> tuple[float, float]:
    alpha = float(stats.attrs.get("alpha", 1.0))
    class_alpha = float(stats.attrs["class_alpha"])
    for name, value in (("alpha", alpha if needs_alpha else 1.0), ("class_alpha", class_alpha)):
        if value <= 0:
            raise ValueError(
                f"{name}: the Bayesian model needs a proper Dirichlet/Beta prior, {name} > 0; "
                f"got {value}. {name}=0 (the MLE) exists only as a closed form."
            )
    return alpha, class_alpha


def _gamma_poisson_rates(prefix: str, counts: np.ndarray, alpha: float, *, dims):
    """Rates g ~ Gamma(λ, 1) with the Poisson kernel Σ n log g - g of the counts.

    Declares ``{prefix}_count`` (data), ``alpha`` (data), ``{prefix}_rate`` and the potential
    ``feature_loglik``; returns the rates, whose normalisation is Dirichlet(λ + n). NUTS starts
    at their posterior mean (λ + n) / 2: from the prior the gradient is of the order of the
    counts (10⁵ with 50,000 documents) and the first tuning steps run into the maximum tree
    depth, from here tuning costs the same at any N. (After ``pm.set_data`` the start is
    stale, which costs only tuning time.)
    """
    data = pm.Data(f"{prefix}_count", counts, dims=dims)
    concentration = pm.Data("alpha", alpha)
    start = (np.asarray(counts, dtype=np.float64) + alpha) / 2.0
    rate = pm.Gamma(f"{prefix}_rate", alpha=concentration, beta=1.0, dims=dims, initval=start)
    pm.Potential("feature_loglik", pt.sum(data * pt.log(rate) - rate))
    return rate


def _coords(stats: xr.Dataset) -> dict:
    names = ("class", "feature", "feature2", "category")
    return {name: stats[name].values for name in names if name in stats.coords}


def _matrix_root(matrix: np.ndarray) -> np.ndarray:
    eigenvalues, eigenvectors = np.linalg.eigh(matrix)
    return eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))


def _prior_cov_divisor(stats: xr.Dataset) -> float:
    return max(stats.attrs["prior_dof"] - stats.sizes["feature"] - 1, 1.0)
