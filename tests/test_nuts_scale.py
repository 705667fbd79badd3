"""The standardising transforms under which NUTS samples the naive Bayes rates and the class
probabilities (bayesgen.generative.StandardisedLog, StandardisedSimplex), and the exactness of
the posterior they leave.

Expected values come from SciPy and from finite differences, not from the transforms' code.
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import integrate, stats

pytest.importorskip("pymc")

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.generative import (
    StandardisedLog,
    StandardisedSimplex,
    multinomial_nb_model,
)

SHAPE = np.array([0.3, 1.0, 4.0, 250.0])
RATE = np.array([1.0, 1.03, 2.5, 0.7])


def _log_transform():
    return StandardisedLog(SHAPE, RATE)


def test_standardised_log_round_trip():
    rates = np.array([1e-4, 0.9, 3.3, 400.0])
    transform = _log_transform()
    z = transform.forward(rates).eval()
    np.testing.assert_allclose(transform.backward(z).eval(), rates, rtol=1e-12)


def test_standardised_log_maps_the_gamma_mode_of_log_g_to_zero():
    # log g under Gamma(a, b) has its mode at log(a / b).
    z = _log_transform().forward(SHAPE / RATE).eval()
    np.testing.assert_allclose(z, 0.0, atol=1e-12)


def test_standardised_log_jacobian_equals_finite_differences():
    transform = _log_transform()
    z = np.array([-2.0, -0.3, 0.4, 1.7])
    step = 1e-6
    slope = (transform.backward(z + step).eval() - transform.backward(z - step).eval()) / (2 * step)
    np.testing.assert_allclose(transform.log_jac_det(z).eval(), np.log(slope), rtol=1e-7)


@pytest.mark.parametrize("index", range(SHAPE.size))
def test_standardised_log_density_of_a_gamma_integrates_to_one(index):
    # p(z) = Gamma(g(z); a, b) g'(z): the change of variables is exact, not approximate.
    shape, rate = SHAPE[index], RATE[index]
    transform = StandardisedLog(shape, rate)
    z = pt.dscalar("z")
    backward = pytensor.function([z], [transform.backward(z), transform.log_jac_det(z)])

    def density(value):
        g, log_jac = backward(value)
        return np.exp(stats.gamma.logpdf(g, shape, scale=1.0 / rate) + log_jac)

    # The left tail of z decays like exp(√a z): slowest for a = 0.3, still < 1e-15 at -70.
    total, _ = integrate.quad(density, -70.0, 30.0, limit=400, points=[0.0])
    assert total == pytest.approx(1.0, abs=1e-7)


def test_standardised_simplex_round_trip():
    prob = np.array([0.2, 0.5, 0.3])
    transform = StandardisedSimplex(np.array([21.0, 50.0, 31.0]))
    z = transform.forward(prob).eval()
    assert z.shape == (2,)
    np.testing.assert_allclose(transform.backward(z).eval(), prob, rtol=1e-12)


def test_standardised_simplex_maps_the_dirichlet_modes_of_the_log_ratios_to_zero():
    shape = np.array([21.0, 50.0, 31.0])
    z = StandardisedSimplex(shape).forward(shape / shape.sum()).eval()
    np.testing.assert_allclose(z, 0.0, atol=1e-12)


def test_standardised_simplex_jacobian_equals_finite_differences():
    # The density of the free coordinates (π_1, ..., π_{K-1}) changes by |det ∂π_{1:K-1}/∂z|.
    transform = StandardisedSimplex(np.array([21.0, 50.0, 31.0]))
    z = np.array([0.4, -1.1])
    step = 1e-6
    jacobian = np.empty((2, 2))
    for j in range(2):
        shift = np.zeros(2)
        shift[j] = step
        up = transform.backward(z + shift).eval()[:2]
        down = transform.backward(z - shift).eval()[:2]
        jacobian[:, j] = (up - down) / (2 * step)
    expected = np.log(abs(np.linalg.det(jacobian)))
    assert float(transform.log_jac_det(z).eval()) == pytest.approx(expected, rel=1e-6)


def _model_and_stats():
    X = np.array([[3, 0, 1, 0], [0, 2, 0, 0], [4, 1, 0, 0], [0, 0, 2, 0], [1, 5, 0, 0]])
    y = np.array([0, 1, 0, 1, 1])
    stats_ = cf.multinomial_nb(X, y, alpha=0.7, class_alpha=1.5)
    return multinomial_nb_model(stats_), stats_


def test_multinomial_model_log_posterior_is_the_closed_form_in_the_new_coordinates():
    """log p(z | D) from the model equals, up to one constant, the exact posterior
    Gamma(λ + n, β + 1) per rate and Dirichlet(a + N_k) for π, each pushed through the
    transform with its log-Jacobian (taken by finite differences here)."""
    model, stats_ = _model_and_stats()
    assert [rv.name for rv in model.observed_RVs] == ["class_count", "feature_count"]
    counts = stats_["feature_count"].values
    class_count = stats_["class_count"].values
    beta = counts.shape[1] * 0.7 / counts.sum(axis=1, keepdims=True)
    logp = model.compile_logp()  # with the Jacobian: the density NUTS samples
    rate_transform = model.rvs_to_transforms[model["feature_rate"]]
    prob_transform = model.rvs_to_transforms[model["class_prob"]]
    rng = np.random.default_rng(3)
    differences = []
    for _ in range(3):
        z_rate = rng.normal(size=counts.shape)
        z_prob = rng.normal(size=1)
        point = {
            "feature_rate_standardised_log__": z_rate,
            "class_prob_standardised_simplex__": z_prob,
        }
        rate = rate_transform.backward(z_rate).eval()
        step = 1e-6
        slope = (
            rate_transform.backward(z_rate + step).eval()
            - rate_transform.backward(z_rate - step).eval()
        ) / (2 * step)
        prob = prob_transform.backward(z_prob).eval()
        prob_slope = (
            prob_transform.backward(z_prob + step).eval()[0]
            - prob_transform.backward(z_prob - step).eval()[0]
        ) / (2 * step)
        exact = (
            stats.gamma.logpdf(rate, 0.7 + counts, scale=1.0 / (beta + 1.0)).sum()
            + np.log(slope).sum()
            + stats.dirichlet.logpdf(prob, 1.5 + class_count)
            + np.log(abs(prob_slope))
        )
        differences.append(logp(point) - exact)
    np.testing.assert_allclose(differences, differences[0], atol=1e-6)


def test_multinomial_model_starts_at_the_mode_of_the_standardised_rates():
    model, _ = _model_and_stats()
    start = model.initial_point()
    np.testing.assert_allclose(start["feature_rate_standardised_log__"], 0.0, atol=1e-12)
    gradient = model.compile_dlogp(vars=[model["feature_rate"]])(start)
    np.testing.assert_allclose(gradient, 0.0, atol=1e-9)


def test_nuts_fit_through_the_transforms_matches_the_closed_form(fits):
    # The session's multinomial NUTS fit (tests/conftest.py) is sampled through the new
    # transforms; compare() checks every posterior mean and SD against add-λ.
    case = fits.nuts("multinomial_nb")
    report = bayesgen.compare(case.est)
    assert report.ok, report.warnings
