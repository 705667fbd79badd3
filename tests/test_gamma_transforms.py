"""The Wilson–Hilferty cube-root transform of Gamma rates
(bayesgen.families.gamma_transforms_pymc): a bijection ℝ → ℝ₊ whose log-Jacobian is the log
derivative of its backward map, and under which a Gamma(a, b) rate becomes close to N(0, 1),
checked against SciPy's Gamma distribution."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

import bayesgen
from bayesgen.families import shared_pymc
from bayesgen.families.gamma_transforms_pymc import CubeRootGamma, cube_root_gamma_constants
from bayesgen.families.shared_pymc import StandardisedLog, log_gamma_standardisation

SHAPES = np.array([0.3, 0.5, 1.0, 2.0, 5.0, 30.0, 1_000.0, 50_000.0])
RATES = np.array([2.0, 1.0, 1.5, 0.2, 3.0, 1.01, 1.3, 11.0])
Z = np.linspace(-8.0, 8.0, 4_001)


def compiled(transform_of, method):
    """``transform.method`` compiled for a vector of values, one cell per (shape, rate)."""
    value = pt.dvector("value")
    transform = transform_of(SHAPES, RATES)
    return pytensor.function([value], getattr(transform, method)(value))


def cube_root(shape, rate):
    return CubeRootGamma(*cube_root_gamma_constants(shape, rate))


def standardised_log(shape, rate):
    return StandardisedLog(*log_gamma_standardisation(shape, rate))


def on_grid(function):
    """``function`` (a transform's method) at every z of Z for every cell: (len(Z), cells)."""
    return np.stack([function(np.full(SHAPES.size, z)) for z in Z])


def test_backward_then_forward_is_the_identity():
    backward, forward = compiled(cube_root, "backward"), compiled(cube_root, "forward")
    z = np.linspace(-6.0, 6.0, 25)
    for value in z:
        cells = np.full(SHAPES.size, value)
        np.testing.assert_allclose(forward(backward(cells)), cells, atol=1e-8)


def test_backward_maps_reals_to_positive_rates_with_a_finite_log_jacobian():
    backward = compiled(cube_root, "backward")
    log_jacobian = compiled(cube_root, "log_jac_det")
    for value in (-12.0, -5.0, 0.0, 5.0, 40.0):
        rates = backward(np.full(SHAPES.size, value))
        assert np.all(np.isfinite(rates)) and np.all(rates > 0)
    # Far out the rate underflows (log g is quadratic in z, as for the exact quantile map),
    # but the log density NUTS evaluates stays finite.
    assert np.all(np.isfinite(log_jacobian(np.full(SHAPES.size, -200.0))))


def test_backward_is_increasing():
    rates = on_grid(compiled(cube_root, "backward"))
    assert np.all(np.diff(rates, axis=0) > 0)


def test_log_jacobian_is_the_log_derivative_of_backward():
    backward = compiled(cube_root, "backward")
    log_jacobian = compiled(cube_root, "log_jac_det")
    step = 1e-5
    # Away from the lower tail's start, where the second derivative jumps (the first does not).
    for value in (-4.0, -2.5, -1.0, 0.0, 0.7, 2.0, 4.0):
        cells = np.full(SHAPES.size, value)
        slope = (backward(cells + step) - backward(cells - step)) / (2 * step)
        np.testing.assert_allclose(log_jacobian(cells), np.log(slope), rtol=1e-6, atol=1e-6)


def transformed_log_density(transform_of):
    """log p(z) when g ~ Gamma(a, b) (SciPy) and z is the transform's image of g."""
    rates = on_grid(compiled(transform_of, "backward"))
    log_jacobian = on_grid(compiled(transform_of, "log_jac_det"))
    return stats.gamma.logpdf(rates, SHAPES, scale=1.0 / RATES) + log_jacobian, rates


def test_the_transformed_gamma_density_integrates_to_one():
    log_density, _ = transformed_log_density(cube_root)
    mass = np.trapezoid(np.exp(log_density), Z, axis=0)
    np.testing.assert_allclose(mass, 1.0, atol=2e-3)


def test_a_gamma_rate_becomes_close_to_a_standard_normal():
    _, rates = transformed_log_density(cube_root)
    # The largest distance between z's CDF, F_Gamma(g(z)), and Φ(z): 0.027 at worst (a = 0.3).
    ks = np.abs(stats.gamma.cdf(rates, SHAPES, scale=1.0 / RATES) - stats.norm.cdf(Z)[:, None])
    assert ks.max(axis=0)[SHAPES >= 1.0].max() < 0.013
    assert ks.max() < 0.03


def test_closer_to_a_standard_normal_than_the_standardised_log_for_small_shapes():
    def ks_distance(transform_of):
        _, rates = transformed_log_density(transform_of)
        cdf = stats.gamma.cdf(rates, SHAPES, scale=1.0 / RATES)
        return np.abs(cdf - stats.norm.cdf(Z)[:, None]).max(axis=0)

    small = SHAPES <= 5.0
    assert np.all(ks_distance(cube_root)[small] < ks_distance(standardised_log)[small] / 4)


def test_pymc_log_density_in_transformed_space_matches_scipy():
    shape, rate = SHAPES[:4], RATES[:4]
    with pm.Model() as model:
        pm.Gamma(
            "rate",
            alpha=shape,
            beta=rate,
            default_transform=CubeRootGamma(*cube_root_gamma_constants(shape, rate)),
        )
    logp = model.compile_logp(jacobian=True, sum=False)
    backward = pytensor.function(
        [value := pt.dvector()],
        CubeRootGamma(*cube_root_gamma_constants(shape, rate)).backward(value),
    )
    z = np.array([-1.7, 0.2, 1.1, -0.4])
    point = {"rate_cube_root_gamma__": z}
    expected = stats.gamma.logpdf(backward(z), shape, scale=1.0 / rate)
    slope = (backward(z + 1e-6) - backward(z - 1e-6)) / 2e-6
    np.testing.assert_allclose(logp(point)[0], expected + np.log(slope), rtol=1e-6)


@pytest.mark.parametrize("shape", [0.5, 1.0, 4.0])
def test_constants_put_the_wilson_hilferty_mean_at_zero(shape):
    # z = 0 is the rate whose cube root is at the Wilson–Hilferty mean, c = 1 − 1/(9a).
    backward = pytensor.function(
        [value := pt.dvector()],
        CubeRootGamma(*cube_root_gamma_constants(shape, 2.0)).backward(value),
    )
    expected = shape / 2.0 * (1.0 - 1.0 / (9.0 * shape)) ** 3
    np.testing.assert_allclose(backward(np.zeros(1)), expected, rtol=1e-12)


# -- NUTS fits made with the cube-root transform -----------------------------------------


@pytest.mark.parametrize(
    ("estimator", "params"),
    [
        ("MultinomialNB", {}),
        # The same transform on a Poisson model's rates: its own graph (16 s cold).
        pytest.param("PoissonNB", {}, marks=pytest.mark.slow),
        # The categorical model's cells are Gamma rates too; λ under a hyperprior moves the
        # rates' shapes away from those the transform's constants were set for.
        pytest.param("CategoricalNB", {}, marks=pytest.mark.slow),
        pytest.param("MultinomialNB", {"alpha_prior": (2.0, 2.0)}, marks=pytest.mark.slow),
    ],
)
def test_compare_passes_a_nuts_fit_made_with_the_cube_root_transform(
    monkeypatch, estimator, params
):
    monkeypatch.setattr(shared_pymc, "GAMMA_RATE_TRANSFORM", "cube_root")
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 15)
    rates = np.array([[4.0, 0.3, 1.0, 0.05], [0.5, 3.0, 1.0, 0.2]])
    X = rng.poisson(rates[y])
    est = getattr(bayesgen, estimator)(
        inference="nuts", draws=500, tune=500, chains=2, random_seed=1, progressbar=False, **params
    ).fit(X, y)
    transforms = est.pymc_model().rvs_to_transforms.values()
    assert any(isinstance(transform, CubeRootGamma) for transform in transforms)
    result = bayesgen.compare(est)
    assert result.ok, str(result)
