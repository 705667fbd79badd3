"""The Bernoulli model's probabilities as NUTS samples them
(bayesgen.families.beta_transforms_pymc): the standardised logit and its Jacobian, the log
densities written on the logit, checked against SciPy's Beta and binomial; the model's log
posterior in these coordinates; the one softplus per cell the gradient costs; and NUTS fits
through them checked by ``compare()``."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

pytest.importorskip("pymc")

import pytensor
import pytensor.tensor as pt
from conftest import curvature_range
from pytensor.scalar.basic import Composite

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.families import family
from bayesgen.families.beta_transforms_pymc import (
    LOGIT_CAP,
    StandardisedLogit,
    binomial_logit_kernel,
    logit_beta_logp,
    logit_beta_standardisation,
    logit_cap_needed,
)
from bayesgen.families.gamma_transforms_pymc import root_deviance_offset

FAST = "FAST_COMPILE"
#: Beta shapes from a flat prior to the cells of 20,000 rows: a zero count, a count in every
#: row, both shapes below one.
A = np.array([1.0, 0.5, 3.0, 1.0, 20_001.0, 250.0, 0.4])
B = np.array([1.0, 0.5, 7.0, 20_001.0, 1.0, 9_000.0, 2.5])


def _transform(a=A, b=B, **options):
    return StandardisedLogit(*logit_beta_standardisation(a, b), **options)


#: The transform's options: affine, shape-corrected, and either with the cap.
OPTIONS = [
    {},
    {"shape_corrected": True},
    {"cap": LOGIT_CAP},
    {"shape_corrected": True, "cap": LOGIT_CAP},
]
OPTION_IDS = ["affine", "corrected", "capped", "corrected-capped"]


def _logit_density(a, b):
    """log p(x) of x = logit φ, φ ~ Beta(a, b): SciPy's density times dφ/dx = φ (1 − φ)."""

    def log_density(x):
        prob = special.expit(x)
        return stats.beta.logpdf(prob, a, b) + np.log(prob) + np.log1p(-prob)

    return log_density


# -- the constants ------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(A.size))
def test_location_and_scale_are_the_mode_and_curvature_of_the_logit(index):
    a, b = A[index], B[index]
    log_density = _logit_density(a, b)
    guess = np.log(a / b)
    mode = optimize.minimize_scalar(lambda x: -log_density(x), bracket=(guess - 1, guess + 1)).x
    step = 1e-4
    curvature = -(log_density(mode + step) - 2 * log_density(mode) + log_density(mode - step))
    curvature /= step**2
    location, scale, log_scale = logit_beta_standardisation(a, b)
    assert location == pytest.approx(mode, abs=1e-6)
    assert scale == pytest.approx(1.0 / np.sqrt(curvature), rel=1e-4)
    assert log_scale == pytest.approx(np.log(scale), rel=1e-12)


# -- StandardisedLogit --------------------------------------------------------------------------


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_round_trip(options):
    probs = np.array([1e-6, 0.2, 0.5, 0.9, 0.999, 1 - 1e-7, 0.03])
    transform = _transform(**options)
    z = transform.forward(probs).eval(mode=FAST)
    np.testing.assert_allclose(transform.backward(z).eval(mode=FAST), probs, rtol=1e-9)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_the_mode_of_the_logit_maps_to_zero(options):
    # The logit of a Beta(a, b) has its mode at log(a / b), i.e. φ = a / (a + b).
    z = _transform(**options).forward(A / (A + B)).eval(mode=FAST)
    np.testing.assert_allclose(z, 0.0, atol=1e-9)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_jacobian_equals_finite_differences(options):
    transform = _transform(**options)
    z = np.array([-2.0, -0.3, 0.4, 1.7, 0.0, -1.1, 2.5])
    step = 1e-6
    up, down = transform.backward(z + step), transform.backward(z - step)
    slope = (up.eval(mode=FAST) - down.eval(mode=FAST)) / (2 * step)
    np.testing.assert_allclose(transform.log_jac_det(z).eval(mode=FAST), np.log(slope), rtol=1e-6)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_jacobian_stays_finite_far_out(options):
    # Written on the logit, the log-Jacobian needs no log σ(x) that would underflow to −∞.
    z = np.full(A.size, -400.0 if not options.get("shape_corrected") else -15.0)
    assert np.all(np.isfinite(_transform(**options).log_jac_det(z).eval(mode=FAST)))
    assert np.all(np.isfinite(_transform(**options).log_jac_det(-z).eval(mode=FAST)))


def _z_log_density(a, b, **options):
    """log p(z) of the transformed Beta(a, b) as a NumPy function: SciPy-free Beta terms on
    the transform's own logit x(z), so that neither tail underflows, plus its log-Jacobian."""
    transform = _transform(a, b, **options)
    z = pt.dvector("z")
    parts = pytensor.function([z], [transform.logit(z)[0], transform.log_jac_det(z)], mode=FAST)

    def log_density(value):
        x, log_jacobian = parts(np.atleast_1d(np.asarray(value, dtype=np.float64)))
        log_prob, log_absent = -np.logaddexp(0.0, -x), -np.logaddexp(0.0, x)
        return (a - 1) * log_prob + (b - 1) * log_absent - special.betaln(a, b) + log_jacobian

    return log_density


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("index", range(A.size))
def test_the_standardised_beta_density_integrates_to_one(index, options):
    # p(z) = Beta(φ(z); a, b) φ'(z): the change of variables is exact (with the cap, up to
    # the mass above σ(35), below 1e-12 for these shapes).
    z = np.linspace(-60.0, 60.0, 240_001)
    total = integrate.trapezoid(np.exp(_z_log_density(A[index], B[index], **options)(z)), z)
    assert total == pytest.approx(1.0, abs=1e-7)


def test_a_large_count_beta_becomes_a_unit_normal():
    a, b = 800.0, 3_000.0
    draws = np.random.default_rng(0).beta(a, b, size=200_000)
    z = _transform(a, b).forward(draws).eval(mode=FAST)
    assert abs(z.mean()) < 0.05
    assert z.std() == pytest.approx(1.0, rel=0.02)


def _exact_root_deviance_inverse(u):
    """F(u): the t with sign(t) √(2 (eᵗ − 1 − t)) = u, from SciPy's Lambert W (branch 0 below
    zero, −1 above): eᵗ − 1 − t = c gives t = −1 − c − W(−e^{−1−c})."""
    u = np.asarray(u, dtype=np.float64)
    c = u * u / 2.0
    argument = -np.exp(-1.0 - c)
    branch = np.where(
        u < 0, special.lambertw(argument, 0).real, special.lambertw(argument, -1).real
    )
    return np.where(u == 0, 0.0, -1.0 - c - branch)


@pytest.mark.parametrize("weight", [0.0, 0.02, 0.5, 0.9, 1.0])
def test_root_deviance_offset_blends_the_exact_inverse(weight):
    u = np.linspace(-6.0, 6.0, 49)
    exact = (1 - weight) * _exact_root_deviance_inverse(u)
    exact -= weight * _exact_root_deviance_inverse(-u)
    offset, log_slope = root_deviance_offset(pt.as_tensor(u), weight)
    np.testing.assert_allclose(offset.eval(mode=FAST), exact, atol=0.01)
    step = 1e-6
    up = root_deviance_offset(pt.as_tensor(u + step), weight)[0].eval(mode=FAST)
    down = root_deviance_offset(pt.as_tensor(u - step), weight)[0].eval(mode=FAST)
    np.testing.assert_allclose(
        log_slope.eval(mode=FAST), np.log((up - down) / (2 * step)), atol=1e-6
    )


def _curvature_range(a, b, **options):
    return curvature_range(_z_log_density(a, b, **options), np.linspace(-40.0, 40.0, 160_001))


@pytest.mark.parametrize(
    ("a", "b"), [(0.05, 500.0), (0.2, 500.0), (500.2, 0.2), (0.2, 5.0), (1.0, 50.0)]
)
def test_the_shape_corrected_logit_keeps_the_curvature_near_one(a, b):
    # Skewed logits (a zero count, or a count in every row): the affine z meets a wall of
    # curvature 6.8 (0.2, 5) to 130 (0.05, 500) on one side and flattens on the other.
    low, high = _curvature_range(a, b, shape_corrected=True)
    assert -0.3 < low and high < 2.6
    assert _curvature_range(a, b)[1] > 6.0


def test_the_cap_keeps_the_gradient_finite_where_the_probability_would_round_to_one():
    """A feature in all 30 rows of class 0 at λ = 0.2: its posterior Beta(30.2, 0.2) has
    0.3 % of its mass above logit 36.7, where σ(x) rounds to 1 and PyMC's gradient through
    log(1 − φ) is ∞ · 0. The model caps that logit; uncapped, the same graph gives NaN."""
    X = np.zeros((60, 2))
    X[:30, 0] = 1.0
    X[::3, 1] = 1.0
    stats_ = cf.bernoulli_nb(X, np.repeat([0, 1], 30), alpha=0.2)
    for cap in (LOGIT_CAP, None):
        model = family("bernoulli_nb").pymc_model(stats_)
        transform = model.rvs_to_transforms[model["feature_prob"]]
        assert transform.cap == LOGIT_CAP and transform.shape_corrected
        transform.cap = cap
        point = {value.name: np.zeros(1) for value in model.value_vars}  # the 2 classes' simplex
        point["feature_prob_standardised_logit__"] = np.array([[12.0, 0.0], [0.0, 0.0]])
        gradient = model.compile_dlogp(mode=FAST)(point)
        assert bool(np.all(np.isfinite(gradient))) == (cap is not None)


@pytest.mark.parametrize(
    ("a", "b", "needed"),
    [
        ([501.0, 1.0], [1.0, 501.0], False),  # λ = 1, n = 500: 3e-13 above the cap
        ([500.2], [0.2], True),  # λ = 0.2: 0.2 %
        ([0.2], [500.2], False),  # a zero count: its mass is near 0, which float64 holds
    ],
)
def test_the_cap_is_needed_where_scipy_puts_mass_above_it(a, b, needed):
    # SciPy's Beta survival function of the complement, 1 − φ ~ Beta(b, a)
    above = stats.beta.cdf(special.expit(-LOGIT_CAP), np.asarray(b), np.asarray(a))
    assert bool(np.any(above > 1e-9)) == needed
    assert logit_cap_needed(a, b) == needed


# -- the log densities on the logit -------------------------------------------------------------


def test_beta_log_density_equals_scipy():
    probs = np.array([0.3, 1e-4, 0.6, 0.02, 0.99995, 0.97, 0.5])
    got = logit_beta_logp(pt.as_tensor(probs), pt.as_tensor(A), pt.as_tensor(B)).eval(mode=FAST)
    np.testing.assert_allclose(got, stats.beta.logpdf(probs, A, B), rtol=1e-9)


def test_binomial_kernel_is_scipy_less_the_binomial_coefficient():
    n = np.array([10.0, 0.0, 7.0, 20_000.0, 20_000.0, 3.0])
    count = np.array([3.0, 0.0, 7.0, 0.0, 19_990.0, 1.0])
    prob = np.array([0.25, 0.4, 0.9, 1e-5, 0.9995, 0.5])
    got = binomial_logit_kernel(pt.as_tensor(count), pt.as_tensor(n), pt.as_tensor(prob))
    coefficient = special.gammaln(n + 1) - special.gammaln(count + 1)
    coefficient -= special.gammaln(n - count + 1)
    expected = stats.binom.logpmf(count, n, prob) - coefficient
    np.testing.assert_allclose(got.eval(mode=FAST), expected, rtol=1e-9)


# -- the Bernoulli model in these coordinates -----------------------------------------------------


def _stats(**options):
    X = np.array([[1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 1, 1]])
    y = np.array([0, 1, 0, 1, 1])
    return cf.bernoulli_nb(X, y, **options)


@pytest.mark.parametrize("options", [{"alpha": 0.7}, {"alpha": 2.0, "class_alpha": 1.5}])
def test_bernoulli_log_posterior_is_the_closed_form_in_the_new_coordinates(options):
    """log p(z | D) from the model equals, up to one constant, the exact posterior
    Beta(λ + n, λ + N − n) of each cell pushed through the transform with its log-Jacobian
    (by finite differences here)."""
    stats_ = _stats(**options)
    lam = options["alpha"]
    model = family("bernoulli_nb").pymc_model(stats_)
    logp = model.compile_logp()  # with the Jacobian: the density NUTS samples
    transform = model.rvs_to_transforms[model["feature_prob"]]
    prob_of = pytensor.function([z := pt.dmatrix("z")], transform.backward(z), mode=FAST)
    counts = stats_["feature_count"].values
    rows = stats_["class_count"].values[:, None]
    rng = np.random.default_rng(4)
    step = 1e-6
    start = model.initial_point()
    differences = []
    for _ in range(3):
        z = rng.normal(size=counts.shape)
        prob = prob_of(z)
        slope = (prob_of(z + step) - prob_of(z - step)) / (2 * step)
        exact = stats.beta.logpdf(prob, lam + counts, lam + rows - counts).sum()
        differences.append(logp(start | {"feature_prob_standardised_logit__": z}) - exact)
        differences[-1] -= np.log(slope).sum()
    np.testing.assert_allclose(differences, differences[0], atol=1e-7)


def test_bernoulli_model_starts_at_the_mode_of_the_standardised_logits():
    model = family("bernoulli_nb").pymc_model(_stats(alpha=0.7))
    start = model.initial_point()
    np.testing.assert_allclose(start["feature_prob_standardised_logit__"], 0.0, atol=1e-12)
    gradient = model.compile_dlogp(vars=[model["feature_prob"]])(start)
    np.testing.assert_allclose(gradient, 0.0, atol=1e-9)


def test_missing_entries_standardise_each_cell_by_its_observed_rows():
    X = np.array([[1, np.nan], [0, 1], [1, 1], [np.nan, 0], [1, 0], [0, np.nan]])
    stats_ = cf.bernoulli_nb(X, np.array([0, 0, 0, 1, 1, 1]), alpha=1.0)
    model = family("bernoulli_nb").pymc_model(stats_)
    counts, observed = stats_["feature_count"].values, stats_["cell_count"].values
    a, b = 1.0 + counts, 1.0 + observed - counts
    location, scale, _ = model["feature_prob_standardisation"].get_value()
    np.testing.assert_allclose(location, np.log(a / b), rtol=1e-12)
    np.testing.assert_allclose(scale, np.sqrt(1 / a + 1 / b), rtol=1e-12)


def _scalar_ops(model) -> collections.Counter:
    """The scalar operations of the compiled logp + gradient, inside its fused loops."""
    counts = collections.Counter()

    def walk(graph):
        for node in graph.apply_nodes:
            if isinstance(node.op, Composite):
                walk(node.op.fgraph)
            else:
                counts[type(node.op).__name__] += 1

    def composites(op):
        scalar = getattr(op, "scalar_op", None)
        return [scalar] if isinstance(scalar, Composite) else []

    function = model.logp_dlogp_function(ravel_inputs=True)
    for node in function._pytensor_function.maker.fgraph.apply_nodes:
        inner = composites(node.op)  # a fused loop, or a loop fused with its reductions
        if getattr(node.op, "fgraph", None) is not None:
            inner += [c for n in node.op.fgraph.apply_nodes for c in composites(n.op)]
        for composite in inner:
            walk(composite.fgraph)
    return counts


def test_the_gradient_costs_one_softplus_and_one_sigmoid_per_cell():
    # On log φ and log(1 − φ) (PyMC's Beta and Binomial), PyTensor computes softplus(x) and
    # softplus(−x), and two sigmoids in the gradient: 1.6-1.8 times the time per gradient.
    ops = _scalar_ops(family("bernoulli_nb").pymc_model(_stats(alpha=1.0)))
    assert ops["Softplus"] == 1
    assert ops["Sigmoid"] == 1


# -- NUTS through the transform -----------------------------------------------------------------


@pytest.mark.slow  # 11-27 s; the default suite's Bernoulli NUTS fits go through it too
@pytest.mark.parametrize(
    "params",
    # λ under a hyperprior moves the shapes away from those the constants were set for.
    [{}, {"alpha_prior": (2.0, 2.0)}],
    ids=["fixed", "alpha-prior"],
)
def test_compare_passes_a_nuts_fit_with_missing_entries(params):
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 20)
    X = rng.random((40, 4)) < np.array([[0.8, 0.1, 0.5, 0.05], [0.2, 0.7, 0.5, 0.3]])[y]
    X = X.astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    est = bayesgen.BernoulliNB(
        inference="nuts", draws=500, tune=500, chains=2, random_seed=1, progressbar=False, **params
    ).fit(X, y)
    model = est.pymc_model()
    assert isinstance(model.rvs_to_transforms[model["feature_prob"]], StandardisedLogit)
    result = bayesgen.compare(est)
    assert result.ok, str(result)


@pytest.mark.slow  # 11 s
def test_a_small_lambda_fit_has_no_divergences_and_passes_compare():
    """λ = 0.2 with 8 features in every row of each class: before the cap and the shape
    correction, 43 of these 1,000 draws diverged and compare() failed the fit."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 60)
    prob = rng.uniform(0.02, 0.4, size=(2, 40))
    prob[0, :8] = prob[1, 8:16] = 1.0
    X = (rng.random((120, 40)) < prob[y]).astype(float)
    est = bayesgen.BernoulliNB(
        alpha=0.2, inference="nuts", draws=500, tune=500, chains=2, random_seed=1, progressbar=False
    ).fit(X, y)
    assert int(est.idata_["sample_stats"]["diverging"].sum()) == 0
    result = bayesgen.compare(est)
    assert result.ok, str(result)
