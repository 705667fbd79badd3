"""The generative classifiers as PyMC models, declared on sufficient statistics.

Each model's ``pymc_model`` lives in its family's ``*_pymc`` module (:mod:`bayesgen.families`),
the building blocks they share in :mod:`bayesgen.families.shared_pymc`; this module holds the
public entry points. ``model_for(stats)`` (and
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

import pymc as pm
import xarray as xr

from bayesgen.families import FAMILIES, bernoulli, categorical, family, gda, multinomial
from bayesgen.families.shared_pymc import (  # re-exported: the building blocks users found here
    StandardisedLog as StandardisedLog,
)
from bayesgen.families.shared_pymc import StandardisedSimplex as StandardisedSimplex
from bayesgen.families.shared_pymc import gamma_poisson_rates as gamma_poisson_rates
from bayesgen.families.shared_pymc import log_gamma_standardisation as log_gamma_standardisation
from bayesgen.families.shared_pymc import model_coords as model_coords

#: Variables kept in the trace for each model (raw parameterisation variables are dropped).
TRACE_VARS = {name: list(model_family.parameters) for name, model_family in FAMILIES.items()}


def model_for(stats: xr.Dataset, **options) -> pm.Model:
    """The PyMC model of the family ``stats`` belongs to (``stats.attrs["model"]``).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> stats = closed_form.multinomial_nb(X, ["ham", "ham", "spam", "spam"])
    >>> from bayesgen.generative import model_for
    >>> model = model_for(stats)
    >>> [rv.name for rv in model.observed_RVs]
    ['class_count', 'feature_count']
    """
    return family(stats).pymc_model(stats, **options)


def multinomial_nb_model(stats: xr.Dataset) -> pm.Model:
    """Multinomial (bag-of-words) naive Bayes: :mod:`bayesgen.families.multinomial`.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> stats = closed_form.multinomial_nb(X, ["ham", "ham", "spam", "spam"])
    >>> from bayesgen.generative import multinomial_nb_model
    >>> model = multinomial_nb_model(stats)
    >>> [rv.name for rv in model.observed_RVs]
    ['class_count', 'feature_count']
    >>> [str(name) for name in model.coords["feature"]]
    ['x0', 'x1', 'x2']
    """
    return multinomial.FAMILY.pymc_model(stats)


def bernoulli_nb_model(stats: xr.Dataset) -> pm.Model:
    """Multivariate Bernoulli (set-of-words) naive Bayes: :mod:`bayesgen.families.bernoulli`.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.generative import bernoulli_nb_model
    >>> stats = closed_form.bernoulli_nb([[1, 0], [1, 1], [0, 1]], ["a", "a", "b"])
    >>> model = bernoulli_nb_model(stats)
    >>> type(model).__name__, [str(name) for name in model.coords["class"]]
    ('Model', ['a', 'b'])
    """
    return bernoulli.FAMILY.pymc_model(stats)


def categorical_nb_model(stats: xr.Dataset) -> pm.Model:
    """Categorical naive Bayes: :mod:`bayesgen.families.categorical`.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.generative import categorical_nb_model
    >>> stats = closed_form.categorical_nb([[0, 2], [1, 2], [0, 0], [1, 1]], ["a", "a", "b", "b"])
    >>> model = categorical_nb_model(stats)
    >>> type(model).__name__, [int(code) for code in model.coords["category"]]
    ('Model', [0, 1, 2])
    """
    return categorical.FAMILY.pymc_model(stats)


def gda_model(stats: xr.Dataset, *, cov_prior: str = "conjugate", lkj_eta: float = 2.0) -> pm.Model:
    """Gaussian discriminant analysis with a shared Σ: :mod:`bayesgen.families.gda`.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.generative import gda_model
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> stats = closed_form.gda(X, [0, 0, 0, 1, 1, 1])
    >>> model = gda_model(stats)
    >>> type(model).__name__, [str(name) for name in model.coords["feature"]]
    ('Model', ['x0', 'x1'])
    """
    return gda.FAMILY.pymc_model(stats, cov_prior=cov_prior, lkj_eta=lkj_eta)
