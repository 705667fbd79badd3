"""NUTS at vocabulary scale: the standardising transforms under which NUTS samples the naive
Bayes rates and the class probabilities (bayesgen.generative.StandardisedLog,
StandardisedSimplex), the exactness of the posterior they leave, and the one BLAS thread per
chain that bayesgen.inference.sampling.sample_nuts sets.

Expected values come from SciPy, from finite differences and from random draws, not from the
transforms' code.
"""

import json
import os

import numpy as np
import pytest
from scipy import integrate, optimize, stats

pytest.importorskip("pymc")

import pytensor
import pytensor.tensor as pt
from conftest import curvature_range

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.generative import (
    StandardisedLog,
    StandardisedSimplex,
    categorical_nb_model,
    log_gamma_standardisation,
    multinomial_nb_model,
)

SHAPE = np.array([0.3, 1.0, 4.0, 250.0])
RATE = np.array([1.0, 1.03, 2.5, 0.7])
CONCENTRATION = np.array([21.0, 50.0, 31.0])
#: The transforms' small graphs are evaluated without the numba compile (seconds each).
FAST = "FAST_COMPILE"


#: Shapes of zero-count rates at small λ, where the rates' log is shape-corrected.
SKEWED = np.array([0.02, 0.05, 0.2, 0.45])
#: StandardisedLog affine and shape-corrected (a fixed λ below 0.15).
CORRECTED = pytest.mark.parametrize("corrected", [False, True], ids=["affine", "corrected"])


def _log_transform(shape=SHAPE, rate=RATE, corrected=False):
    return StandardisedLog(*log_gamma_standardisation(shape, rate), shape_corrected=corrected)


# -- the constants ------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(SHAPE.size))
def test_log_gamma_location_and_scale_are_the_mode_and_curvature_of_log_g(index):
    shape, rate = SHAPE[index], RATE[index]

    def log_density(u):  # the density of u = log g: Gamma(eᵘ) times the Jacobian eᵘ
        return stats.gamma.logpdf(np.exp(u), shape, scale=1.0 / rate) + u

    mode = optimize.minimize_scalar(lambda u: -log_density(u), bracket=(-5.0, 5.0)).x
    step = 1e-4
    curvature = -(log_density(mode + step) - 2 * log_density(mode) + log_density(mode - step))
    curvature /= step**2
    location, scale, log_scale = log_gamma_standardisation(shape, rate)
    assert location == pytest.approx(mode, abs=1e-6)
    assert scale == pytest.approx(1.0 / np.sqrt(curvature), rel=1e-5)
    assert log_scale == pytest.approx(np.log(scale), rel=1e-12)


# -- StandardisedLog ----------------------------------------------------------------------------


@CORRECTED
def test_standardised_log_round_trip(corrected):
    rates = np.array([1e-4, 0.9, 3.3, 400.0])
    transform = _log_transform(corrected=corrected)
    z = transform.forward(rates).eval(mode=FAST)
    np.testing.assert_allclose(transform.backward(z).eval(mode=FAST), rates, rtol=1e-12)


@CORRECTED
def test_standardised_log_maps_the_mode_of_log_g_to_zero(corrected):
    # log g under Gamma(a, b) has its mode at log(a / b).
    z = _log_transform(corrected=corrected).forward(SHAPE / RATE).eval(mode=FAST)
    np.testing.assert_allclose(z, 0.0, atol=1e-12)


@CORRECTED
def test_standardised_log_jacobian_equals_finite_differences(corrected):
    transform = _log_transform(corrected=corrected)
    z = np.array([-2.0, -0.3, 0.4, 1.7])
    step = 1e-6
    up, down = transform.backward(z + step), transform.backward(z - step)
    slope = (up.eval(mode=FAST) - down.eval(mode=FAST)) / (2 * step)
    np.testing.assert_allclose(transform.log_jac_det(z).eval(mode=FAST), np.log(slope), rtol=1e-7)


def _gamma_z_log_density(shape, rate, corrected):
    """log p(z) of the transformed Gamma(shape, rate) as a NumPy function: SciPy's log density
    of log g (Gamma(eᵘ) eᵘ), on the transform's own log g so that no tail underflows, plus
    the log-Jacobian of log g."""
    transform = _log_transform(shape, rate, corrected)
    z = pt.dvector("z")
    log_rate, _ = transform.log_rate(z)
    parts = pytensor.function([z], [log_rate, transform.log_jac_det(z) - log_rate], mode=FAST)

    def log_density(value):
        u, log_slope = parts(np.atleast_1d(np.asarray(value, dtype=np.float64)))
        return stats.loggamma.logpdf(u, shape, loc=-np.log(rate)) + log_slope

    return log_density


@pytest.mark.parametrize(
    ("shape", "corrected"),
    [(shape, False) for shape in SHAPE] + [(shape, True) for shape in np.r_[SHAPE, SKEWED]],
)
def test_standardised_log_density_of_a_gamma_integrates_to_one(shape, corrected):
    # p(z) = Gamma(g(z); a, b) g'(z): the change of variables is exact, not approximate.
    # The left tail of the affine z decays like exp(√a z): slowest for a = 0.3, < 1e-15 at -70.
    rate = 1.3
    density = _gamma_z_log_density(shape, rate, corrected)
    total, _ = integrate.quad(lambda z: np.exp(density(z)[0]), -70.0, 30.0, limit=400, points=[0.0])
    assert total == pytest.approx(1.0, abs=1e-7)


def test_standardised_log_density_is_scipys_gamma():
    # SciPy's log-Gamma density above is that of log g for g ~ Gamma(a, rate b).
    u = np.array([-3.0, 0.2, 1.5])
    expected = stats.gamma.logpdf(np.exp(u), 0.4, scale=1.0 / 1.3) + u
    np.testing.assert_allclose(stats.loggamma.logpdf(u, 0.4, loc=-np.log(1.3)), expected)


def _z_curvature_range(shape, corrected):
    log_density = _gamma_z_log_density(shape, 1.3, corrected)
    return curvature_range(log_density, np.linspace(-60.0, 60.0, 240_001))


@pytest.mark.parametrize("shape", [0.05, 0.2, 0.45])
def test_the_shape_corrected_log_keeps_the_curvature_near_one(shape):
    # A zero count at small λ: the affine z's curvature e^{z/√a} meets a wall on the right
    # (21 at a = 0.45, 132 at a = 0.05) and falls to 0 on the left.
    low, high = _z_curvature_range(shape, corrected=True)
    assert -0.3 < low and high < 2.6
    assert _z_curvature_range(shape, corrected=False)[1] > 20.0


@pytest.mark.parametrize("shape", [0.05, 0.2, 0.45])
def test_the_shape_corrected_log_gives_a_small_shape_gamma_unit_scale_and_little_skew(shape):
    # Gamma draws from NumPy: the affine z of a zero count at small λ has an SD of 1.6-4.5 and
    # a skewness of −1.6 to −2 (a long left tail); the corrected z has an SD of 0.87-1.02
    # and a skewness of 0.07-0.28. (Its centre moves left by up to 1: the Jacobian's doing,
    # which NUTS, adapting its step and mass matrix, does not mind.)
    rng = np.random.default_rng(1)
    draws = rng.gamma(shape, 1.0 / 1.3, size=200_000)
    draws = draws[draws > 0.0]  # Gamma(0.05) underflows to 0 in about 1 draw in 10⁶
    g = pt.dvector("g")

    def z_of(corrected):
        forward = _log_transform(shape, 1.3, corrected).forward(g)
        return pytensor.function([g], forward, mode=FAST)(draws)

    corrected, affine = z_of(True), z_of(False)
    assert 0.8 < corrected.std() < 1.1 and abs(stats.skew(corrected)) < 0.35
    assert affine.std() > 1.5 and stats.skew(affine) < -1.5


def test_standardised_log_makes_a_large_count_gamma_a_unit_normal():
    shape, rate = 250.0, 0.7
    draws = np.random.default_rng(0).gamma(shape, 1.0 / rate, size=200_000)
    forward = _log_transform(shape, rate).forward(g := pt.dvector("g"))
    z = pytensor.function([g], forward, mode=FAST)(draws)
    assert abs(z.mean()) < 0.05  # the mean of log g is below its mode by 1/(2a)
    assert z.std() == pytest.approx(1.0, rel=0.02)


# -- StandardisedSimplex ------------------------------------------------------------------------


def test_standardised_simplex_round_trip():
    prob = np.array([0.2, 0.5, 0.3])
    transform = StandardisedSimplex(CONCENTRATION)
    z = transform.forward(prob).eval(mode=FAST)
    assert z.shape == (2,)
    np.testing.assert_allclose(transform.backward(z).eval(mode=FAST), prob, rtol=1e-12)


def test_standardised_simplex_maps_the_modes_of_the_log_ratios_to_zero():
    mode = CONCENTRATION / CONCENTRATION.sum()
    z = StandardisedSimplex(CONCENTRATION).forward(mode).eval(mode=FAST)
    np.testing.assert_allclose(z, 0.0, atol=1e-12)


def test_standardised_simplex_jacobian_equals_finite_differences():
    # The density of the free coordinates (π_1, ..., π_{K-1}) changes by |det ∂π_{1:K-1}/∂z|.
    transform = StandardisedSimplex(CONCENTRATION)
    z = np.array([0.4, -1.1])
    step = 1e-6
    jacobian = np.empty((2, 2))
    for j in range(2):
        shift = np.zeros(2)
        shift[j] = step
        up = transform.backward(z + shift).eval(mode=FAST)[:2]
        down = transform.backward(z - shift).eval(mode=FAST)[:2]
        jacobian[:, j] = (up - down) / (2 * step)
    expected = np.log(abs(np.linalg.det(jacobian)))
    assert float(transform.log_jac_det(z).eval(mode=FAST)) == pytest.approx(expected, rel=1e-6)


def test_standardised_simplex_makes_a_dirichlet_about_unit_normal():
    concentration = 10 * CONCENTRATION
    draws = np.random.default_rng(1).dirichlet(concentration, size=100_000)
    forward = StandardisedSimplex(concentration).forward(prob := pt.dmatrix("prob"))
    z = pytensor.function([prob], forward, mode=FAST)(draws)
    np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose(z.std(axis=0), 1.0, rtol=0.03)


# -- the models ---------------------------------------------------------------------------------


def _stats(**options):
    X = np.array([[3, 0, 1, 0], [0, 2, 0, 0], [4, 1, 0, 0], [0, 0, 2, 0], [1, 5, 0, 0]])
    y = np.array([0, 1, 0, 1, 1])
    return cf.multinomial_nb(X, y, **options)


@pytest.mark.parametrize("alpha", [0.7, 0.1])  # 0.1: zero counts below 0.15, shape-corrected
def test_multinomial_model_log_posterior_is_the_closed_form_in_the_new_coordinates(alpha):
    """log p(z | D) from the model equals, up to one constant, the exact posterior
    Gamma(λ + n, β + 1) per rate and Dirichlet(a + N_k) for π, each pushed through the
    transform with its log-Jacobian (taken by finite differences here)."""
    stats_ = _stats(alpha=alpha, class_alpha=1.5)
    model = multinomial_nb_model(stats_)
    assert [rv.name for rv in model.observed_RVs] == ["class_count", "feature_count"]
    counts = stats_["feature_count"].values
    class_count = stats_["class_count"].values
    beta = counts.shape[1] * alpha / counts.sum(axis=1, keepdims=True)
    logp = model.compile_logp(mode=FAST)  # with the Jacobian: the density NUTS samples
    rate_transform = model.rvs_to_transforms[model["feature_rate"]]
    assert rate_transform.shape_corrected == (alpha < 0.15)
    prob_transform = model.rvs_to_transforms[model["class_prob"]]
    rate_of = pytensor.function([z := pt.dmatrix("z")], rate_transform.backward(z), mode=FAST)
    prob_of = pytensor.function([w := pt.dvector("w")], prob_transform.backward(w), mode=FAST)
    rng = np.random.default_rng(3)
    step = 1e-6
    differences = []
    for _ in range(3):
        z_rate, z_prob = rng.normal(size=counts.shape), rng.normal(size=1)
        point = {
            "feature_rate_standardised_log__": z_rate,
            "class_prob_standardised_simplex__": z_prob,
        }
        rate = rate_of(z_rate)
        slope = (rate_of(z_rate + step) - rate_of(z_rate - step)) / (2 * step)
        prob = prob_of(z_prob)
        prob_slope = (prob_of(z_prob + step)[0] - prob_of(z_prob - step)[0]) / (2 * step)
        exact = (
            stats.gamma.logpdf(rate, alpha + counts, scale=1.0 / (beta + 1.0)).sum()
            + np.log(slope).sum()
            + stats.dirichlet.logpdf(prob, 1.5 + class_count)
            + np.log(abs(prob_slope))
        )
        differences.append(logp(point) - exact)
    np.testing.assert_allclose(differences, differences[0], atol=1e-6)


@pytest.mark.parametrize("alpha", [0.7, 0.1])
def test_multinomial_model_starts_at_the_mode_of_the_standardised_rates(alpha):
    model = multinomial_nb_model(_stats(alpha=alpha))
    start = model.initial_point()
    np.testing.assert_allclose(start["feature_rate_standardised_log__"], 0.0, atol=1e-12)
    np.testing.assert_allclose(start["class_prob_standardised_simplex__"], 0.0, atol=1e-12)
    gradient = model.compile_dlogp(vars=[model["feature_rate"]], mode=FAST)(start)
    # z = 0 is the mode of log g; in the affine z it is z's mode too, while the corrected
    # z's Jacobian moves its centre (for a zero count at λ = 0.2, its median to z = −0.74).
    if alpha >= 0.15:
        np.testing.assert_allclose(gradient, 0.0, atol=1e-9)
    else:
        assert np.all(np.isfinite(gradient)) and np.abs(gradient).max() > 0.1


def test_rate_constants_are_data_computed_from_the_statistics():
    """The transform's constants are ``pm.Data`` (one compiled graph for every data set of
    the same shape, nothing recomputed per gradient), equal to the posterior Gamma's log(a/b),
    1/√a and log(1/√a), and inputs of the log density."""
    from pytensor.graph.traversal import graph_inputs

    stats_ = _stats(alpha=0.7)
    model = multinomial_nb_model(stats_)
    data = model["feature_rate_standardisation"]
    assert data in model.data_vars
    counts = stats_["feature_count"].values
    shape = counts + 0.7
    rate = counts.shape[1] * 0.7 / counts.sum(axis=1, keepdims=True) + 1.0
    expected = np.stack([np.log(shape / rate), shape**-0.5, -0.5 * np.log(shape)])
    np.testing.assert_allclose(data.get_value(), expected, rtol=1e-12)
    assert data in set(graph_inputs([model.logp()]))


@pytest.mark.parametrize("alpha", [1.0, 0.1])
def test_categorical_model_starts_at_the_mode_of_the_standardised_cells(alpha):
    X = np.array([[0, 1], [1, 2], [0, 0], [1, 1], [0, 2]])
    model = categorical_nb_model(cf.categorical_nb(X, np.array([0, 1, 0, 1, 1]), alpha=alpha))
    assert model.rvs_to_transforms[model["cell_rate"]].shape_corrected == (alpha < 0.15)
    start = model.initial_point()
    np.testing.assert_allclose(start["cell_rate_standardised_log__"], 0.0, atol=1e-12)


def test_rates_under_a_hyperprior_on_lambda_are_standardised_at_its_start():
    from bayesgen.families import family, hyperprior

    X = np.array([[3, 0, 1], [0, 2, 0], [4, 1, 0], [1, 5, 0]])
    stats_ = hyperprior.with_alpha_prior(
        family("multinomial_nb"),
        cf.multinomial_nb(X, np.array([0, 1, 0, 1])),
        (2.0, 1.0),
    )
    model = multinomial_nb_model(stats_)
    # PyMC raises "Random variables detected in the logp graph" if the transform used λ.
    assert np.isfinite(model.compile_logp()(model.initial_point()))
    start = model.initial_point()["feature_rate_standardised_log__"]
    np.testing.assert_allclose(start, 0.0, atol=1e-12)  # standardised at the start λ


def test_rates_under_a_hyperprior_on_lambda_are_not_shape_corrected():
    """Under a hyperprior the correction cost more than it gave (docs/performance.md): the
    rates keep the affine log even where the start λ is small, and a fixed λ as small is
    corrected."""
    from bayesgen.families import family, hyperprior

    X = np.array([[3, 0, 1], [0, 2, 0], [4, 1, 0], [1, 5, 0]])
    y = np.array([0, 1, 0, 1])
    stats_ = hyperprior.with_alpha_prior(
        family("multinomial_nb"), cf.multinomial_nb(X, y), (1.0, 20.0)
    )
    start = stats_.attrs["alpha"]
    assert start < 0.15  # E[λ | D] under a prior mean of 0.05
    model = multinomial_nb_model(stats_)
    assert not model.rvs_to_transforms[model["feature_rate"]].shape_corrected
    fixed = multinomial_nb_model(cf.multinomial_nb(X, y, alpha=start))
    assert fixed.rvs_to_transforms[fixed["feature_rate"]].shape_corrected


def test_nuts_fit_through_the_transforms_matches_the_closed_form(fits):
    # The session's multinomial NUTS fit (tests/conftest.py) is sampled through the new
    # transforms; compare() checks every posterior mean and SD against add-λ.
    case = fits.nuts("multinomial_nb")
    report = bayesgen.compare(case.est)
    assert report.ok, report.warnings


@pytest.mark.slow  # 20-40 s: two new graphs
@pytest.mark.parametrize("kind", ["multinomial", "categorical"])
def test_a_small_lambda_fit_through_the_shape_corrected_rates_passes_compare(kind):
    """λ = 0.1: every class has zero counts, so the rates are sampled through the
    shape-corrected log, and compare() checks the draws against the closed forms."""
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], 60)
    if kind == "multinomial":
        rate = rng.gamma(0.3, 1.0, size=(2, 40))
        X = rng.poisson(rate[y])
        est = bayesgen.MultinomialNB(alpha=0.1, inference="nuts")
    else:
        prob = rng.dirichlet(np.full(4, 0.3), size=(2, 8))  # (class, feature, category)
        X = np.stack([[rng.choice(4, p=prob[k, j]) for j in range(8)] for k in y])
        est = bayesgen.CategoricalNB(alpha=0.1, inference="nuts")
    est.set_params(draws=500, tune=500, chains=2, random_seed=1, progressbar=False).fit(X, y)
    model = est.pymc_model()
    rate = model["feature_rate" if kind == "multinomial" else "cell_rate"]
    assert model.rvs_to_transforms[rate].shape_corrected
    assert int(est.idata_["sample_stats"]["diverging"].sum()) == 0
    result = bayesgen.compare(est)
    assert result.ok, str(result)


# -- one BLAS thread per chain ------------------------------------------------------------------

_FORK_LOG = {"path": None}


def _report_blas_threads():
    """Runs in every child forked by this process (os.register_at_fork has no way back, so
    it does nothing once the test is over)."""
    if _FORK_LOG["path"] is None:
        return
    from threadpoolctl import threadpool_info

    threads = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    with open(_FORK_LOG["path"], "a") as handle:
        handle.write(json.dumps(threads) + "\n")


os.register_at_fork(after_in_child=_report_blas_threads)


@pytest.mark.filterwarnings("ignore:NUTS. draws=5")  # few draws: only the workers matter
@pytest.mark.filterwarnings("ignore:NUTS did not converge")  # 5 draws cannot
def test_sample_nuts_runs_each_forked_chain_on_one_blas_thread(tmp_path):
    from conftest import DATA, make_estimator
    from threadpoolctl import threadpool_info, threadpool_limits

    if not any(info["user_api"] == "blas" for info in threadpool_info()):
        pytest.skip("threadpoolctl sees no BLAS library")
    X, y = DATA["multinomial_nb"]()  # the session fit's shapes: its compiled graph is reused
    est = make_estimator(
        "multinomial_nb", draws=5, tune=5, chains=2, cores=2, prior_draws=0, compute_map=False
    )
    _FORK_LOG["path"] = tmp_path / "blas.jsonl"
    try:
        # Two threads in the parent: a worker that inherited no limit would report 2.
        with threadpool_limits(limits=2, user_api="blas"):
            est.fit(X, y)
    finally:
        _FORK_LOG["path"] = None
    reports = [json.loads(line) for line in (tmp_path / "blas.jsonl").read_text().splitlines()]
    assert len(reports) >= 2  # one per chain's worker
    assert all(threads == 1 for report in reports for threads in report), reports
