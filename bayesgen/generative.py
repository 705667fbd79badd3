"""The generative classifiers as PyMC models, declared on sufficient statistics.

Each model's ``pymc_model`` lives in its family module (:mod:`bayesgen.families`); this module
holds the building blocks they share and the public entry points. ``model_for(stats)`` (and
each ``*_model(stats)``) takes the ``xarray.Dataset`` of a :mod:`bayesgen.closed_form` fit
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

from bayesgen.families import FAMILIES, family

# The model's coords are those of its parameters.
from bayesgen.families.base import parameter_coords as model_coords  # noqa: F401

#: Variables kept in the trace for each model (raw parameterisation variables are dropped).
TRACE_VARS = {name: list(model_family.parameters) for name, model_family in FAMILIES.items()}


def model_for(stats: xr.Dataset, **options) -> pm.Model:
    """The PyMC model of the family ``stats`` belongs to (``stats.attrs["model"]``)."""
    return family(stats).pymc_model(stats, **options)


def multinomial_nb_model(stats: xr.Dataset) -> pm.Model:
    """Multinomial (bag-of-words) naive Bayes: :mod:`bayesgen.families.multinomial`."""
    return family("multinomial_nb").pymc_model(stats)


def bernoulli_nb_model(stats: xr.Dataset) -> pm.Model:
    """Multivariate Bernoulli (set-of-words) naive Bayes: :mod:`bayesgen.families.bernoulli`."""
    return family("bernoulli_nb").pymc_model(stats)


def categorical_nb_model(stats: xr.Dataset) -> pm.Model:
    """Categorical naive Bayes: :mod:`bayesgen.families.categorical`."""
    return family("categorical_nb").pymc_model(stats)


def gda_model(stats: xr.Dataset, *, cov_prior: str = "conjugate", lkj_eta: float = 2.0) -> pm.Model:
    """Gaussian discriminant analysis with a shared Σ: :mod:`bayesgen.families.gda`."""
    return family("gda").pymc_model(stats, cov_prior=cov_prior, lkj_eta=lkj_eta)


# --------------------------------------------------------------------------------------------
# Building blocks shared by the families' models.


def class_prob_prior(stats: xr.Dataset, class_alpha: float):
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


def positive_priors(stats: xr.Dataset, needs_alpha: bool = True) -> tuple[float, float]:
    """``alpha`` and ``class_alpha`` of ``stats``, refused unless > 0 (a proper prior)."""
    alpha = float(stats.attrs.get("alpha", 1.0))
    class_alpha = float(stats.attrs["class_alpha"])
    for name, value in (("alpha", alpha if needs_alpha else 1.0), ("class_alpha", class_alpha)):
        if value <= 0:
            raise ValueError(
                f"{name}: the Bayesian model needs a proper Dirichlet/Beta prior, {name} > 0; "
                f"got {value}. {name}=0 (the MLE) exists only as a closed form."
            )
    return alpha, class_alpha


def gamma_poisson_rates(prefix: str, counts: np.ndarray, alpha: float, *, dims):
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
