"""The semi-supervised posterior by NUTS, the unlabelled rows' labels marginalised.

The expected values come from outside the code under test: the Gibbs sampler's draws of the
same posterior (data augmentation, exact conditionals; tests/test_semi_supervised_gibbs.py
checks it against the enumerated exact posterior), compared within Monte Carlo error; and, for
every model's symbolic per-class log-likelihood, the model's own NumPy ``row_log_likelihood``
at a point drawn from its PyMC model.

PyMC compiles each model once per shape (a minute cold, seconds warm): the NUTS fits are made
once per module and shared.
"""

import time
import warnings

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import pytest
import xarray as xr
from pytensor.graph.replace import graph_replace
from scipy.special import logsumexp

import bayesgen
from bayesgen import DirichletMultinomialNB, GaussianDiscriminantAnalysis, GaussianNB, MultinomialNB
from bayesgen.families import family
from bayesgen.families.results import parameter_coords
from bayesgen.families.unlabelled_pymc import (
    UNLABELLED_POTENTIAL,
    RowTerms,
    add_unlabelled_rows,
    class_log_likelihood,
    has_mixture_form,
)
from bayesgen.inference import semi_supervised as semi_supervised_inference
from bayesgen.inference.semi_supervised_nuts import start_at
from bayesgen.maths.diagnostics import convergence_problems

N_LABELLED, N_UNLABELLED = 20, 40
# 1,000 draws a chain, not 500: sampling these models takes seconds (compiling them dominates),
# and the SDs' Monte Carlo error then stays well inside the 15 % they are held to (at 500 the
# largest of ten gaps reached 11 % in 10 runs; at 1,000 6.5 % in 6).
NUTS = {"inference": "nuts", "draws": 1000, "tune": 300, "chains": 2, "cores": 1}
GIBBS = {"inference": "conjugate", "draws": 1500, "tune": 50, "chains": 2, "compute_map": False}
COMMON = {"prior_draws": 0, "random_seed": 1}


def labels(seed=0):
    """Classes of 60 rows, the first 20 alternating (labelled), and y with the last 40 hidden."""
    rng = np.random.default_rng(seed)
    y = np.r_[[0, 1] * (N_LABELLED // 2), rng.integers(0, 2, N_UNLABELLED)]
    hidden = y.astype(float)
    hidden[N_LABELLED:] = np.nan
    return y, hidden, rng


def multinomial_data():
    """Two classes of 8-word documents over 4 words."""
    y, hidden, rng = labels()
    theta = np.array([[0.45, 0.3, 0.15, 0.1], [0.1, 0.15, 0.3, 0.45]])
    return np.array([rng.multinomial(8, theta[k]) for k in y]), y, hidden


def gaussian_data():
    """Two classes in two dimensions, means 1.5 apart, SDs 1 and 1.5."""
    y, hidden, rng = labels(1)
    return rng.normal(size=(len(y), 2)) * np.array([1.0, 1.5]) + 1.5 * y[:, None], y, hidden


def fit_both(Estimator, X, hidden, **options):
    """The NUTS and the Gibbs fit of the same semi-supervised posterior, and NUTS' seconds."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # NUTS must not warn of non-convergence
        nuts = Estimator(**NUTS, **COMMON, **options).fit(X, hidden)
    seconds = time.perf_counter() - start
    gibbs = Estimator(**GIBBS, **COMMON, **options).fit(X, hidden)
    return nuts, gibbs, seconds


@pytest.fixture(scope="module")
def multinomial_fits():
    X, y, hidden = multinomial_data()
    return (*fit_both(MultinomialNB, X, hidden, alpha=2.0), X, y, hidden)


@pytest.fixture(scope="module")
def gaussian_fits():
    X, _, hidden = gaussian_data()
    return fit_both(GaussianNB, X, hidden)


def assert_same_posterior(nuts, gibbs, record):
    """Means within 4 combined MCSEs, SDs within 15 %, NUTS converged by the package's own
    family-wise limits; R-hat and ESS recorded."""
    first = nuts.idata_["posterior"].dataset
    second = gibbs.idata_["posterior"].dataset
    assert set(first.data_vars) == set(second.data_vars)
    for name in first.data_vars:
        a, b = first[[name]], second[[name]]
        gap = np.abs(a[name].mean(("chain", "draw")) - b[name].mean(("chain", "draw"))).values
        mcse = np.hypot(az.mcse(a)[name].values, az.mcse(b)[name].values)
        assert np.all(gap < 4 * mcse), (name, gap / mcse)
        ratio = (a[name].std(("chain", "draw")) / b[name].std(("chain", "draw"))).values
        assert np.all(np.abs(ratio - 1) < 0.15), (name, ratio)
    draws = {name: first[name].values for name in first.data_vars}
    divergences = int(nuts.idata_["sample_stats"]["diverging"].values.sum())
    assert convergence_problems(draws, divergences=divergences) == []
    rhat = float(az.rhat(first).to_array().max())
    ess = float(az.ess(first).to_array().min())
    record("nuts_max_rhat", round(rhat, 4))
    record("nuts_min_bulk_ess", round(ess, 1))
    assert rhat < 1.01


# -- the acceptance test: NUTS and Gibbs sample the same posterior ------------------------------


def test_nuts_and_gibbs_agree_on_multinomial_naive_bayes(multinomial_fits, record_property):
    nuts, gibbs, seconds, *_ = multinomial_fits
    record_property("nuts_fit_seconds", round(seconds, 1))
    assert nuts.closed_form_.attrs["semi_supervised_posterior"] == "nuts"
    assert gibbs.closed_form_.attrs["semi_supervised_posterior"] == "gibbs"
    assert_same_posterior(nuts, gibbs, record_property)
    # Both average p(y | x_i, θ) over their draws: the same probabilities within MC error.
    np.testing.assert_allclose(
        nuts.posterior_label_distributions_, gibbs.posterior_label_distributions_, atol=0.03
    )


@pytest.mark.slow  # about 40 s on a loaded 2-core machine: a second model to compile and Gibbs
def test_nuts_and_gibbs_agree_on_gaussian_naive_bayes(gaussian_fits, record_property):
    nuts, gibbs, seconds = gaussian_fits
    record_property("nuts_fit_seconds", round(seconds, 1))
    assert_same_posterior(nuts, gibbs, record_property)


# -- what the fit holds ---------------------------------------------------------------------------


def test_a_nuts_fit_holds_the_em_map_the_draws_and_the_labelled_rows(multinomial_fits):
    nuts, gibbs, _, X, y, _ = multinomial_fits
    stats = nuts.closed_form_
    # EM's closed form and MAP, as the Gibbs fit has them.
    np.testing.assert_allclose(
        stats["feature_count"].values, gibbs.closed_form_["feature_count"].values, rtol=1e-12
    )
    assert stats.attrs["em_converged"] == 1 and stats.attrs["unlabelled_rows"] == N_UNLABELLED
    counts = stats["feature_count"].values
    mode = (counts + 1.0) / (counts + 1.0).sum(axis=1, keepdims=True)  # α = 2: (n + 1) / Σ
    np.testing.assert_allclose(nuts.map_["feature_prob"].values, mode, rtol=1e-10)
    np.testing.assert_array_equal(nuts.transduction_, gibbs.transduction_)
    # The draws: NUTS' own groups, the labelled rows only as observed rows.
    idata = nuts.idata_
    assert idata["posterior"].attrs["inference_library"] == "pymc"
    assert dict(idata["posterior"].sizes) == {"chain": 2, "draw": 1000, "class": 2, "feature": 4}
    assert "sample_stats" in idata.children
    assert idata["observed_data"]["y"].size == N_LABELLED
    assert idata["log_likelihood"]["y"].shape == (2, 1000, N_LABELLED)
    # constant_data: the statistics the PyMC model observed, those of the labelled rows.
    np.testing.assert_array_equal(
        idata["constant_data"]["feature_count"].values,
        np.stack([X[:N_LABELLED][y[:N_LABELLED] == k].sum(axis=0) for k in (0, 1)]),
    )
    # One-hot for a labelled row, probabilities for an unlabelled one.
    distributions = nuts.posterior_label_distributions_
    assert distributions.shape == (len(X), 2)
    np.testing.assert_array_equal(distributions[:N_LABELLED].argmax(axis=1), y[:N_LABELLED])
    np.testing.assert_allclose(distributions.sum(axis=1), 1.0)


def test_compare_on_a_nuts_fit_checks_the_map_and_says_why_not_the_moments(multinomial_fits):
    nuts = multinomial_fits[0]
    result = bayesgen.compare(nuts)
    assert result.ok
    assert result.table["reason"].str.contains("classes are latent").all()
    assert np.isfinite(result.table["map"]).all() and result.table["agrees"].all()


def test_a_fit_with_every_row_labelled_is_the_supervised_nuts_fit():
    X, y, _ = multinomial_data()
    est = MultinomialNB(alpha=2.0, **{**NUTS, "draws": 200, "tune": 200}, **COMMON).fit(X, y)
    assert "semi_supervised_posterior" not in est.closed_form_.attrs
    assert not hasattr(est, "posterior_label_distributions_")
    assert [potential.name for potential in est.pymc_model().potentials] == []
    # The supervised posterior: add-λ means, conjugate, within Monte Carlo error.
    draws = est.idata_["posterior"].dataset[["feature_prob"]]
    counts = est.closed_form_["feature_count"].values + 2.0
    gap = np.abs(
        draws["feature_prob"].mean(("chain", "draw")).values - counts / counts.sum(1)[:, None]
    )
    assert np.all(gap < 4 * az.mcse(draws)["feature_prob"].values)


# -- every model's per-class log-likelihood, against its NumPy one ------------------------------


def _table(X, rng):
    return pd.DataFrame(
        {
            "count": rng.poisson(2, len(X)).astype(float),
            "level": np.where(X[:, 0] > 0, "high", "low"),
            "size": X[:, 1],
        }
    )


def model_and_rows(name):
    """A small fit of the model ``name``, rows of its kind (some with a missing entry where the
    model takes one), and the options of its fit."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 8)
    counts = rng.poisson(2, (16, 4)).astype(float)
    new_counts = np.r_[rng.poisson(2, (4, 4)), [[0, 5, 1, 0]]].astype(float)
    real = rng.normal(size=(16, 3)) + y[:, None]
    new_real = rng.normal(size=(5, 3))
    with_missing = np.r_[new_real[:4], [[np.nan, 0.3, 1.0]]]
    cases = {
        "multinomial_nb": (counts, new_counts, {"alpha": 2.0}),
        "poisson_nb": (counts, np.r_[new_counts[:4], [[np.nan, 1, 2, 0]]], {}),
        "bernoulli_nb": (
            (counts > 1).astype(float),
            np.r_[(new_counts[:4] > 1), [[np.nan, 1, 0, 1]]].astype(float),
            {},
        ),
        "categorical_nb": (
            np.minimum(counts, 3),
            np.r_[np.minimum(new_counts[:4], 3), [[np.nan, 1, 2, 0]]],
            {},
        ),
        "gaussian_nb": (real, with_missing, {}),
        "gda": (real, new_real, {}),
        "qda": (real, new_real, {}),
        "mixed_nb": (
            _table(real, rng),
            _table(np.r_[new_real[:4], [[-1.0, np.nan, 0.0]]], rng),
            {},
        ),
    }
    X, rows, options = cases[name]
    model = family(name)
    fit = model.fit(X, y, **options)
    return model, fit, model.training_features(fit, rows)


def drawn_point(pymc_model, names):
    """One draw of every free variable and of the parameters ``names`` (deterministics too),
    made together so that they agree; compiled without numba (a second each)."""
    free = list(pymc_model.free_RVs)
    values = pm.draw(free + [pymc_model[n] for n in names], random_seed=7, mode="FAST_COMPILE")
    return dict(zip(free, values[: len(free)], strict=True)), dict(
        zip(names, values[len(free) :], strict=True)
    )


def at_point(expression, free_values):
    """``expression`` with the model's free variables replaced by their drawn values."""
    replaced = graph_replace(
        expression, {rv: pt.constant(v) for rv, v in free_values.items()}, strict=False
    )
    return replaced.eval(mode="FAST_COMPILE")


def numpy_row_log_likelihood(model, fit, rows, parameters):
    """log p(x_i, y = k | θ) by the model's own ``row_log_likelihood``, every row given class
    k in turn, shape (n_rows, n_classes)."""
    dims = model.parameter_dims(fit)
    draws = xr.Dataset(
        {name: (("draw", *dims[name]), value[None]) for name, value in parameters.items()},
        coords=parameter_coords(fit),
    )
    n_rows = rows.shape[0]
    return np.stack(
        [model.row_log_likelihood(fit, rows, np.full(n_rows, k), draws)[0] for k in range(2)],
        axis=1,
    )


MODELS = [
    "multinomial_nb",
    "poisson_nb",
    "bernoulli_nb",
    "categorical_nb",
    "gaussian_nb",
    "gda",
    "qda",
    "mixed_nb",
]


@pytest.mark.parametrize("name", MODELS)
def test_each_model_form_is_its_numpy_row_log_likelihood(name):
    model, fit, rows = model_and_rows(name)
    assert has_mixture_form(model)
    pymc_model = model.pymc_model(fit)
    per_class = class_log_likelihood(model, fit, rows, RowTerms(pymc_model))
    free_values, parameters = drawn_point(pymc_model, list(model.parameter_dims(fit)))
    got = at_point(per_class, free_values) + model.row_log_constant(rows)[:, None]
    expected = numpy_row_log_likelihood(model, fit, rows, parameters)
    expected -= np.log(parameters["class_prob"])[None, :]
    assert got.shape == (rows.shape[0], 2)
    assert np.all(np.isfinite(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_the_potential_is_the_weighted_log_marginal_of_the_rows():
    model, fit, rows = model_and_rows("poisson_nb")
    pymc_model = model.pymc_model(fit)
    weights = np.array([2.0, 1.0, 0.0, 3.0, 0.5])  # 0: left out; 0.5: tempered
    marginal = add_unlabelled_rows(pymc_model, model, fit, rows, weights=weights)
    free_values, parameters = drawn_point(pymc_model, list(model.parameter_dims(fit)))
    joint = numpy_row_log_likelihood(model, fit, rows, parameters)
    kept = weights > 0
    np.testing.assert_allclose(
        at_point(marginal, free_values), logsumexp(joint[kept], axis=1), rtol=1e-10
    )
    [potential] = pymc_model.potentials
    assert potential.name == UNLABELLED_POTENTIAL
    np.testing.assert_allclose(
        at_point(potential, free_values),
        np.sum(weights[kept] * logsumexp(joint[kept], axis=1)),
        rtol=1e-10,
    )


def test_nuts_starts_at_the_map_inside_the_support():
    model, fit, _ = model_and_rows("gaussian_nb")
    pymc_model = model.pymc_model(fit)
    point = xr.Dataset(
        {
            "class_prob": ("class", [0.3, 0.7]),
            "mu": (("class", "feature"), np.zeros((2, 3))),
            "var": (("class", "feature"), np.r_[np.ones((1, 3)), [[1.0, 0.0, 1.0]]]),
        }
    )
    # var has a 0: on the boundary of its support, no finite start; it keeps its own.
    assert start_at(pymc_model, point) == ["class_prob", "mu"]
    start = pymc_model.rvs_to_initial_values
    np.testing.assert_array_equal(start[pymc_model["class_prob"]], [0.3, 0.7])
    assert start[pymc_model["var"]] is None


def test_nuts_starts_a_capped_logit_only_below_its_cap():
    # λ = 0.2 and a feature in every row of class 0: the model caps the logit at σ(35), whose
    # transform has no finite value for a probability between σ(35) and 1.
    X = np.zeros((8, 2))
    X[:4, 0] = 1.0
    X[::3, 1] = 1.0
    fit = bayesgen.closed_form.bernoulli_nb(X, np.repeat([0, 1], 4), alpha=0.2)
    pymc_model = family("bernoulli_nb").pymc_model(fit)
    assert pymc_model.rvs_to_transforms[pymc_model["feature_prob"]].cap is not None
    for top, started in [(0.9, ["feature_prob"]), (1.0 - 2.2e-16, [])]:
        point = xr.Dataset({"feature_prob": (("class", "feature"), [[top, 0.5], [0.2, 0.5]])})
        assert start_at(pymc_model, point) == started


def _transforms():
    """One of each of bayesgen's transforms, with constants of its usual kind."""
    from bayesgen.families.beta_transforms_pymc import StandardisedLogit
    from bayesgen.families.dcm_transforms_pymc import StandardisedLogRatio
    from bayesgen.families.gamma_transforms_pymc import CubeRootGamma, cube_root_gamma_constants
    from bayesgen.families.shared_pymc import Standardise, StandardisedLog, StandardisedSimplex

    three = np.zeros(3)
    return {
        "standardised_log": StandardisedLog(0.5, 0.7, np.log(0.7)),
        "standardised_log, shape-corrected": StandardisedLog(
            0.5, 0.7, np.log(0.7), shape_corrected=True
        ),
        "standardised_logit": StandardisedLogit(0.0, 1.0, 0.0),
        "standardised_logit, capped": StandardisedLogit(0.0, 1.0, 0.0, cap=35.0),
        "standardised_simplex": StandardisedSimplex(np.array([2.0, 3.0, 4.0])),
        "cube_root_gamma": CubeRootGamma(*cube_root_gamma_constants(2.0, 1.0)),
        "standardise": Standardise(1.0, 2.0, np.log(2.0)),
        "standardised_log_ratio": StandardisedLogRatio(
            three, np.ones(3), three, np.array([0.5, 0.3, 0.2])
        ),
    }


#: Values inside and on or beyond each domain's boundary (a simplex's values sum to one).
_PROBES = [
    np.array([0.2, 0.3, 0.5]),
    np.array([0.0, 0.5, 0.5]),
    np.array([0.5, 0.5, 1e-300]),
    np.array([1.0 - 2.2e-16, 1e-17, 1e-17]),
    np.array([-0.1, 0.6, 0.5]),
]


@pytest.mark.parametrize("name", list(_transforms()))
def test_each_transform_says_which_values_have_a_finite_image(name):
    """``contains`` (what start_at reads, without compiling) agrees with the transform's own
    forward map, evaluated: True exactly where every coordinate is finite."""
    import pytensor
    import pytensor.tensor as pt

    transform = _transforms()[name]
    value = pt.vector("value")
    forward = pytensor.function([value], transform.forward(value), mode="FAST_COMPILE")
    for probe in _PROBES:
        with np.errstate(all="ignore"):
            finite = bool(np.all(np.isfinite(forward(probe))))
        assert transform.contains(probe) == finite, (name, probe)


# -- what is refused, before any work -------------------------------------------------------------


class WithoutMixtureForm:
    """A model that declares no per-class log-likelihood for PyMC (otherwise the multinomial)."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name):
        return getattr(self._model, name)


@pytest.fixture
def no_em(monkeypatch):
    """Fail a test whose fit reaches EM."""

    def reached(*args, **kwargs):
        raise AssertionError("EM ran before the refusal")

    monkeypatch.setattr(semi_supervised_inference, "fit_labelled_and_unlabelled", reached)


def test_a_model_without_a_mixture_form_is_refused_naming_inference(no_em):
    X, _, hidden = multinomial_data()
    est = MultinomialNB(**NUTS)
    est._family = WithoutMixtureForm(est._family)
    assert not has_mixture_form(est._family)
    with pytest.raises(ValueError, match=r"^inference: 40 rows are unlabelled, .* has none\. Use"):
        est.fit(X, hidden)


def test_the_dirichlet_compound_multinomial_has_no_mixture_form_and_is_refused(no_em):
    X, _, hidden = multinomial_data()
    with pytest.raises(ValueError, match=r"^inference: 40 rows .* 'dcm_nb' model has none"):
        DirichletMultinomialNB().fit(X, hidden)


def test_adding_rows_of_a_model_without_a_form_is_refused():
    model, fit, rows = model_and_rows("multinomial_nb")
    with pytest.raises(ValueError, match=r"^inference: the 'multinomial_nb' model has no mixture"):
        add_unlabelled_rows(model.pymc_model(fit), WithoutMixtureForm(model), fit, rows)


def test_fractional_weights_are_refused(no_em):
    X, _, hidden = multinomial_data()
    weights = np.ones(len(X))
    weights[-1] = 0.5
    with pytest.raises(ValueError, match=r"^sample_weight: inference='nuts' needs whole-number"):
        MultinomialNB(**NUTS).fit(X, hidden, sample_weight=weights)


def test_a_prior_without_a_conjugate_form_is_refused(no_em):
    X, _, hidden = gaussian_data()
    with pytest.raises(ValueError, match=r"^inference: 40 rows are unlabelled, .* conjugate prior"):
        GaussianDiscriminantAnalysis(cov_prior="lkj", **NUTS).fit(X, hidden)
