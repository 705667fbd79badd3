"""The generative classifiers as PyMC models, declared on sufficient statistics.

Each model's ``pymc_model`` lives in its family module (:mod:`bayesgen.families`); this module
holds the building blocks they share and the public entry points. ``model_for(stats)`` (and
each ``*_model(stats)``) takes the ``xarray.Dataset`` of a :mod:`bayesgen.closed_form` fit
function and returns a ``pm.Model``; it declares priors, likelihood and coords/dims and nothing
else (no sampling, no I/O). The data enter as ``pm.Data`` holding the sufficient statistics
(class counts, feature counts, class means, scatter), so the graph and the cost of one gradient
do not depend on the number of rows, and one compiled graph serves any data set of the same
shape (``pm.set_data``).

The likelihoods are *observed random variables* on those statistics, named after them, whose
joint density is the per-row likelihood up to a factor free of the parameters (so the posterior
is exactly that of the per-row model, by the factorisation theorem), and which PyMC can
simulate (``pm.sample_prior_predictive``, ``pm.sample_posterior_predictive``):

* every model: ``class_count`` ~ Multinomial(N, π);
* multinomial NB: ``feature_count`` N_kw ~ Poisson(g_kw) (the Gamma-Poisson form below);
* Bernoulli NB: ``feature_count`` N_kj ~ Binomial(N_k, φ_kj);
* categorical NB: ``cell_count`` (class, cell), the counts of the real (feature, category)
  cells, ~ Poisson(g_k,cell); the padding cells are not observed (they have no category);
* GDA: ``class_mean`` x̄_k ~ N(μ_k, Σ / N_k) and ``scatter`` S ~ Wishart(N − K, Σ);
* QDA: ``class_mean`` x̄_k ~ N(μ_k, Σ_k / N_k) and ``scatter_0``, ``scatter_1``, …
  S_k ~ Wishart(N_k − 1, Σ_k), one per class.

The observed values live in ``pm.Data`` containers named ``<statistic>_data``
(``class_count_data``, ``feature_count_data``, …), so that the statistic's own name is the
observed (and simulated) variable's. Three cases keep a ``pm.Potential`` with the same kernel,
because no observed variable has that density: fractional feature counts of the multinomial
model (TF-IDF weights, a weighted likelihood), and a Gaussian scatter that is singular (fewer
rows than features beyond the class means, N − K < D or N_k − 1 < D, or collinear features),
for which the Wishart has no density; the class means stay observed there. Classes without
rows have no mean to observe. Which of these applies is decided when the model is built: a
``pm.set_data`` must keep it (same empty classes, whole counts, regular scatter).

Shared names: ``class_prob`` (class), ``feature_prob`` (class, feature[, category]), GDA ``mu``
(class, feature), ``cov`` (feature, feature2), ``coef`` and ``intercept``.

Parameterisations (why they are fast):

* multinomial and categorical NB use the Gamma-Poisson form of the Dirichlet: independent
  g ~ Gamma(λ, β) and counts n ~ Poisson(g), whose kernel n log g − g gives a posterior in
  which every g is an independent Gamma(λ + n, β + 1), so θ = g / Σg is exactly
  Dirichlet(λ + n) for any rate β shared by a simplex. NUTS sees a diagonal target instead of
  the correlated simplex of ``pm.Dirichlet`` + ``pm.Multinomial``. The rate β = V λ / T (T the
  simplex's total count, V its number of cells) makes the simulated totals right: their prior
  and posterior predictive means are both T. Fractional counts (TF-IDF) enter the same kernel
  as weights (a weighted, or power, likelihood) through a potential.
* The Poisson and binomial count variables are declared with their log-pmf less its
  parameter-free combinatorial term, for speed (see :func:`observed_counts`).
* Bernoulli NB: φ ~ Beta(λ, λ) with the binomial likelihood, independent per (class, feature).
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


def whole_counts(values) -> np.ndarray | None:
    """``values`` as int64 when they are all whole numbers ≥ 0 (counts), else None."""
    values = np.asarray(values, dtype=np.float64)
    if np.all(np.isfinite(values)) and np.all(values >= 0) and np.all(values == np.round(values)):
        return values.astype(np.int64)
    return None


def class_prob_prior(stats: xr.Dataset, class_alpha: float):
    """π ~ Dirichlet(a) and the class counts observed as ``class_count`` ~ Multinomial(N, π).

    Returns the class counts (the ``pm.Data`` ``class_count_data``, int64) and π.
    """
    counts = whole_counts(stats["class_count"].values)
    if counts is None:
        raise ValueError(
            "stats: class_count must hold whole numbers ≥ 0 (the rows of each class); got "
            f"{stats['class_count'].values.tolist()[:10]}."
        )
    n_classes = stats.sizes["class"]
    class_count = pm.Data("class_count_data", counts, dims="class")
    # Priors are data too, so a grid of λ reuses one compiled graph.
    concentration = pm.Data("class_alpha", np.full(n_classes, class_alpha), dims="class")
    prob = pm.Dirichlet("class_prob", a=concentration, dims="class")
    pm.Multinomial("class_count", n=class_count.sum(), p=prob, observed=class_count, dims="class")
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


def observed_counts(name: str, dist, kernel, *params, observed, dims):
    """An observed count variable simulated by ``dist(*params, size=...)`` whose log density
    is ``kernel(value, *params)``: the distribution's log-pmf without its parameter-free
    combinatorial term (log n! of the Poisson, log C(N, n) of the binomial).

    That term is a constant for the posterior, but ``pm.Poisson`` and ``pm.Binomial`` evaluate
    a ``gammaln`` per cell at every gradient: 2.6 times the cost of the whole gradient of a
    2 × 2,000-word model (73 against 28 µs, measured). PyMC's pointwise log-likelihood of such
    a variable is therefore the log-pmf up to that constant.
    """
    return pm.CustomDist(name, *params, dist=dist, logp=kernel, observed=observed, dims=dims)


def _poisson_kernel(value, mu):
    return value * pt.log(mu) - mu


def _poisson(mu, size):
    return pm.Poisson.dist(mu=mu, size=size)


def gamma_poisson_rates(
    prefix: str, counts: np.ndarray, alpha: float, *, dims, groups=None, random_alpha=None
):
    """Rates g ~ Gamma(λ, β) with the counts observed as ``{prefix}_count`` ~ Poisson(g).

    Each simplex (the last axis of ``counts``, or with ``groups``, an indicator matrix
    (cell, simplex), the cells of one column) shares the prior rate β = V λ / T: T its total
    count (at least 1), V its number of cells. The posterior of the rates is then independent
    Gamma(λ + n, β + 1), so their normalisation within a simplex is exactly Dirichlet(λ + n)
    (the Dirichlet is the normalisation of independent Gammas of one rate, whatever the
    rate), and the simulated totals have prior and posterior predictive mean T. (With β = 1
    the posterior predictive counts would be about half the observed ones.) Fractional counts
    (TF-IDF weights) cannot be observed as Poisson: they enter the same kernel n log g − g
    through the potential ``{prefix}_loglik`` (a weighted likelihood), which PyMC does not
    simulate.

    Declares ``{prefix}_count_data`` (data), ``alpha`` (data), ``{prefix}_rate`` and the
    observed ``{prefix}_count`` (see :func:`observed_counts`; or the potential); returns the
    rates. With ``random_alpha`` (λ a random variable, under the hyperprior of
    :mod:`bayesgen.hyperprior`) that variable is the concentration instead of the data
    ``alpha``, and ``alpha`` only sets the start; see :func:`total_correction` for the term
    that keeps p(λ | D) exact. NUTS starts at their posterior mean (λ + n) / (β + 1): from
    the prior the gradient is of the order of the counts (10⁵ with 50,000 documents) and the
    first tuning steps run into the maximum tree depth, from here tuning costs the same at
    any N. (After
    ``pm.set_data`` the start is stale, which costs only tuning time.)
    """
    counts = np.asarray(counts, dtype=np.float64)
    whole = whole_counts(counts)
    data = pm.Data(f"{prefix}_count_data", counts if whole is None else whole, dims=dims)
    concentration = pm.Data("alpha", alpha) if random_alpha is None else random_alpha
    if groups is None:
        size = counts.shape[-1]
        total = np.maximum(counts.sum(axis=-1, keepdims=True), 1.0)
        graph_total = pt.maximum(pt.sum(data, axis=-1, keepdims=True), 1.0)
        prior_rate = size * alpha / total
        graph_rate = size * concentration / graph_total
    else:
        groups = np.asarray(groups, dtype=np.float64)
        size = groups.sum(axis=0)  # cells per simplex
        prior_rate = (size * alpha / np.maximum(counts @ groups, 1.0)) @ groups.T
        graph_total = pt.maximum(pt.dot(data, groups), 1.0)
        graph_rate = pt.dot(size * concentration / graph_total, groups.T)
    if random_alpha is not None:
        raw_total = pt.sum(data, axis=-1) if groups is None else pt.dot(data, groups)
        per_simplex = size * concentration / graph_total
        if groups is None:
            per_simplex = per_simplex[..., 0]
        total_correction(prefix, raw_total, size * concentration, per_simplex)
    start = (counts + alpha) / (prior_rate + 1.0)
    rate = pm.Gamma(
        f"{prefix}_rate", alpha=concentration, beta=graph_rate, dims=dims, initval=start
    )
    if whole is None:
        pm.Potential(f"{prefix}_loglik", pt.sum(_poisson_kernel(data, rate)))
    else:
        observed_counts(
            f"{prefix}_count", _poisson, _poisson_kernel, rate, observed=data, dims=dims
        )
    return rate


def total_correction(prefix: str, total, shape, rate) -> None:
    """The potential ``{prefix}_total_correction`` = −Σ log NB(T; V λ, β) over the simplices.

    In the Gamma-Poisson form the rates g of a simplex factor into θ = g / Σg ~ Dirichlet(λ)
    and S = Σg ~ Gamma(V λ, β), and the Poisson counts into Multinomial(n | T, θ) ·
    Poisson(T | S). Integrating S out leaves p(λ) Dirichlet(θ | λ) Multinomial(n | θ) times
    the negative binomial NB(T; V λ, β) = ∫ Gamma(S; V λ, β) Poisson(T | S) dS of the
    simplex's total T. For a fixed λ that factor is a constant; for a random λ it would bias
    p(λ | D), so it is divided out here (up to log T!, free of λ), making the joint of (λ, θ)
    exactly p(λ) Dirichlet(θ | λ) Multinomial(n | θ).
    """
    log_nb = (
        pt.gammaln(total + shape)
        - pt.gammaln(shape)
        + shape * (pt.log(rate) - pt.log1p(rate))
        - total * pt.log1p(rate)
    )
    pm.Potential(f"{prefix}_total_correction", -pt.sum(log_nb))


# --------------------------------------------------------------------------------------------
# The Gaussian statistics (GDA, QDA): x̄_k ~ N(μ_k, Σ_k / N_k), S_k ~ Wishart(N_k − 1, Σ_k).


def observed_class_means(stats: xr.Dataset, class_count, mu, cov_chol) -> None:
    """The class means observed as ``class_mean`` x̄_k ~ N(μ_k, Σ_k / N_k), one batched
    MvNormal over the classes with rows (a class without rows has no mean).

    ``cov_chol`` is the lower Cholesky factor of Σ (feature, feature2), or of every Σ_k
    (class, feature, feature2). It enters as ``chol``: PyMC 6.4 computes a wrongly shaped log
    density for a batched ``tau`` or ``cov`` that depends on other random variables, while a
    batched ``chol`` is right (checked against SciPy in tests/test_observed_rvs.py). With
    empty classes, the observed classes get their own coord ``observed_class``.
    """
    count = stats["class_count"].values
    present = np.flatnonzero(count > 0)
    everyone = present.size == count.size
    if everyone:
        dims = ("class", "feature")
        index = slice(None)
    else:
        pm.modelcontext(None).add_coord("observed_class", stats["class"].values[present])
        dims = ("observed_class", "feature")
        index = present
    data = pm.Data("class_mean_data", stats["class_mean"].values[present], dims=dims)
    n_rows = pt.cast(class_count[index], "float64")
    chol = cov_chol[index] if cov_chol.ndim == 3 else cov_chol[None]
    pm.MvNormal(
        "class_mean",
        mu=mu[index],
        chol=chol / pt.sqrt(n_rows)[:, None, None],
        observed=data,
        dims=dims,
    )


def wishart_is_regular(scatter: np.ndarray, dof: float) -> bool:
    """Whether a scatter matrix S with ``dof`` degrees of freedom has a Wishart density: at
    least D degrees of freedom and S positive definite (its correlation matrix's smallest
    eigenvalue above 1e-8, well clear of a Cholesky failure in the compiled graph)."""
    scatter = np.asarray(scatter, dtype=np.float64)
    if dof < scatter.shape[-1]:
        return False
    sd = np.sqrt(np.diag(scatter))
    if not np.all(np.isfinite(sd)) or np.any(sd <= 0):
        return False
    return bool(np.linalg.eigvalsh(scatter / np.outer(sd, sd)).min() > 1e-8)
