"""The evidence under a Gamma hyperprior on λ (``alpha_prior``): λ integrated out.

log p(y, X) = log p(y | a) + log ∫ p(X | y, λ) Gamma(λ; shape, rate) dλ. Every expected value
is computed here from the rows: the Dirichlet–multinomial evidences by ``gammaln`` and the
integral over λ by ``scipy.integrate.quad`` in u = log λ, never by bayesgen's grid quadrature
or its evidence functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import gammaln

from bayesgen import BernoulliNB, CategoricalNB, MultinomialNB
from bayesgen import closed_form as cf
from bayesgen.families import family
from bayesgen.families import hyperprior as hp

#: The tolerance stated in closed_form.log_evidence: 1e-9 in the log (relative, in p(y, X)).
ATOL = 1e-9

Y = np.array([0, 1, 0, 0, 1, 1, 0])
X_WORDS = np.array([[3, 0, 1], [0, 2, 2], [1, 1, 0], [4, 0, 1], [0, 3, 1], [1, 2, 0], [2, 1, 0]])
X_BINARY = (X_WORDS > 0).astype(np.int64)
X_CODES = np.minimum(X_WORDS, 2)  # K_j = 3 categories each
FIT = {
    "multinomial": cf.multinomial_nb,
    "bernoulli": cf.bernoulli_nb,
    "categorical": cf.categorical_nb,
}
ESTIMATORS = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB, "categorical": CategoricalNB}
X_OF = {"multinomial": X_WORDS, "bernoulli": X_BINARY, "categorical": X_CODES}
# A Gamma prior near the data's λ, a wide one and a narrow one far from it.
PRIORS = [(2.0, 1.5), (0.5, 0.1), (20.0, 2.0)]


def simplex_log_evidence(counts, lam):
    """lnΓ(O λ) − lnΓ(T + O λ) + Σ_o [lnΓ(c_o + λ) − lnΓ(λ)] of one simplex's counts, at
    each λ of ``lam`` (any shape)."""
    counts = np.asarray(counts, dtype=float)
    lam = np.asarray(lam, dtype=float)
    outcomes = counts.size
    return (
        gammaln(outcomes * lam)
        - gammaln(counts.sum() + outcomes * lam)
        + np.sum(gammaln(counts + lam[..., None]) - gammaln(lam[..., None]), axis=-1)
    )


def feature_log_evidence_by_hand(name, lam):
    """log p(X | y, λ): one simplex per class (multinomial), per (class, feature) otherwise."""
    X = X_OF[name]
    total = 0.0
    for k in (0, 1):
        rows = X[Y == k]
        if name == "multinomial":
            total += simplex_log_evidence(rows.sum(axis=0), lam)
        elif name == "bernoulli":
            for present in rows.sum(axis=0):
                total += simplex_log_evidence([present, len(rows) - present], lam)
        else:
            for column in rows.T:
                total += simplex_log_evidence(np.bincount(column, minlength=3), lam)
    return total


def label_log_evidence_by_hand(class_alpha=1.0):
    counts = np.bincount(Y)
    a, n_classes = class_alpha, counts.size
    return (
        gammaln(n_classes * a)
        - gammaln(counts.sum() + n_classes * a)
        + np.sum(gammaln(counts + a) - gammaln(a))
    )


def integrated_by_quad(log_evidence, shape, rate):
    """log ∫ exp(log_evidence(λ)) Gamma(λ; shape, rate) dλ, by quad in u = log λ (dλ = λ du),
    split around the integrand's peak so that quad sees where the mass is."""

    def log_integrand(u):  # u an array or a number
        lam = np.exp(u)
        log_prior = shape * math.log(rate) - gammaln(shape) + (shape - 1) * u - rate * lam
        return log_evidence(lam) + log_prior + u

    grid = np.linspace(-30.0, 10.0, 4001)
    values = log_integrand(grid)
    centre, shift = grid[np.argmax(values)], values.max()
    # Beyond [-200, 50] the integrand is below e^(-shape · 190) and e^(-rate · e^50) of its peak.
    value, _ = integrate.quad(
        lambda u: math.exp(float(log_integrand(u)) - shift),
        -200.0,
        50.0,
        points=[centre - 5.0, centre, centre + 5.0],
        epsabs=0.0,
        epsrel=1e-13,
        limit=1000,
    )
    return shift + math.log(value)


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_log_evidence_integrates_lambda_over_its_gamma_prior(name, prior):
    est = hp.with_alpha_prior(family(f"{name}_nb"), FIT[name](X_OF[name], Y), prior)
    expected = label_log_evidence_by_hand() + integrated_by_quad(
        lambda lam: feature_log_evidence_by_hand(name, lam), *prior
    )
    assert cf.log_evidence(est) == pytest.approx(expected, abs=ATOL, rel=0)


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_log_evidence_is_below_the_evidence_at_the_posterior_mean_of_lambda(name):
    # The old answer, log p(y, X | λ = E[λ | D]), overstated the evidence by a nat or more.
    est = hp.with_alpha_prior(family(f"{name}_nb"), FIT[name](X_OF[name], Y), PRIORS[0])
    at_the_mean = label_log_evidence_by_hand() + feature_log_evidence_by_hand(
        name, est.attrs["alpha"]
    )
    assert cf.log_evidence(est) < at_the_mean - 0.1


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_fitted_estimator_evidence_integrates_lambda_too(name):
    prior = PRIORS[1]
    model = ESTIMATORS[name](
        alpha_prior=prior, class_alpha=2.0, inference="conjugate", compute_map=False, draws=10
    ).fit(X_OF[name], Y)
    expected = label_log_evidence_by_hand(2.0) + integrated_by_quad(
        lambda lam: feature_log_evidence_by_hand(name, lam), *prior
    )
    assert cf.log_evidence(model.closed_form_) == pytest.approx(expected, abs=ATOL, rel=0)


def test_pooled_prior_mean_evidence_integrates_lambda():
    # Dirichlet(λ V m), m the add-½ frequencies of the counts pooled over the classes.
    pooled = X_WORDS.sum(axis=0) + 0.5
    weight = X_WORDS.shape[1] * pooled / pooled.sum()

    def by_hand(lam):
        a = np.asarray(lam, dtype=float)[..., None] * weight
        total = 0.0
        for k in (0, 1):
            counts = X_WORDS[Y == k].sum(axis=0)
            total += gammaln(a.sum(axis=-1)) - gammaln(counts.sum() + a.sum(axis=-1))
            total += np.sum(gammaln(counts + a) - gammaln(a), axis=-1)
        return total

    prior = PRIORS[0]
    est = hp.with_alpha_prior(
        family("multinomial_nb"), cf.multinomial_nb(X_WORDS, Y, prior_mean="pooled"), prior
    )
    expected = label_log_evidence_by_hand() + integrated_by_quad(by_hand, *prior)
    assert cf.log_evidence(est) == pytest.approx(expected, abs=ATOL, rel=0)


def test_feature_log_evidence_without_a_hyperprior_is_refused():
    est = cf.multinomial_nb(X_WORDS, Y, alpha=0.5)
    with pytest.raises(ValueError, match=r"^feature_log_evidence: expected estimates fitted with"):
        hp.feature_log_evidence(family(est), est)


def test_log_evidence_leaves_the_estimates_unchanged():
    est = hp.with_alpha_prior(family("multinomial_nb"), cf.multinomial_nb(X_WORDS, Y), PRIORS[0])
    before = est.copy(deep=True)
    cf.log_evidence(est)
    assert est.identical(before)
    assert est.attrs == before.attrs


def test_without_a_hyperprior_the_evidence_is_at_the_fixed_lambda():
    est = cf.multinomial_nb(X_WORDS, Y, alpha=0.7)
    expected = label_log_evidence_by_hand() + feature_log_evidence_by_hand("multinomial", 0.7)
    assert cf.log_evidence(est) == pytest.approx(expected, abs=1e-10, rel=0)
    assert family(est).log_evidence(est) == cf.log_evidence(est)
