"""``est.idata_`` follows PyMC's layout, so ArviZ's functions work on it with no ``var_names``.

Every training row has one observed variable, ``y`` (its class code), under the same name in
``observed_data``, ``log_likelihood`` (the joint log p(x_i, y_i | θ)) and the predictive groups
(labels drawn from p(y | x_i, θ)); the rows themselves and their statistics are in
``constant_data``. Expected values come from NumPy/SciPy densities written here and from
bayesgen's exact leave-one-out, never from the code that builds the groups.
"""

import copy
import warnings
from pathlib import Path

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pytest
import scipy.sparse as sp
import xarray as xr
from conftest import DATA, bernoulli_data, categorical_data, gaussian_data, multinomial_data
from scipy import stats
from scipy.special import logsumexp

import bayesgen

ROWS_LAYOUT = Path(__file__).parent / "data" / "rows-layout"
CONJUGATE = {"inference": "conjugate", "compute_map": False, "chains": 2, "prior_draws": 100}
MODELS = {
    "multinomial": (bayesgen.MultinomialNB, multinomial_data),
    "bernoulli": (bayesgen.BernoulliNB, bernoulli_data),
    "categorical": (bayesgen.CategoricalNB, categorical_data),
    "gda": (bayesgen.GaussianDiscriminantAnalysis, gaussian_data),
    "qda": (bayesgen.QuadraticDiscriminantAnalysis, gaussian_data),
}


def _fit(name, *, draws=300, random_seed=0, **params):
    cls, data = MODELS[name]
    X, y = data()
    est = cls(**CONJUGATE, draws=draws, random_seed=random_seed, **params).fit(X, y)
    return est, X, y


def _figure(plot_collection):
    return plot_collection.viz["figure"].item()


#: Each ArviZ function a user would call on a fit, on the tree alone (``az.compare`` gets a
#: second fit of the same model, ``az.plot_khat`` the pointwise ``az.loo`` it plots).
ARVIZ_CALLS = {
    "summary": lambda dt, other: az.summary(dt),
    "loo": lambda dt, other: az.loo(dt),
    "loo_pit": lambda dt, other: az.loo_pit(dt),
    "compare": lambda dt, other: az.compare({"one": dt, "other": other}),
    "plot_trace_dist": lambda dt, other: _figure(az.plot_trace_dist(dt)),
    "plot_forest": lambda dt, other: _figure(az.plot_forest(dt)),
    "plot_rank": lambda dt, other: _figure(az.plot_rank(dt)),
    "plot_ess": lambda dt, other: _figure(az.plot_ess(dt)),
    "plot_ppc_dist": lambda dt, other: _figure(az.plot_ppc_dist(dt)),
    "plot_ppc_rootogram": lambda dt, other: _figure(az.plot_ppc_rootogram(dt)),
    "plot_loo_pit": lambda dt, other: _figure(az.plot_loo_pit(dt)),
    "plot_khat": lambda dt, other: _figure(az.plot_khat(az.loo(dt, pointwise=True))),
    "plot_prior_posterior": lambda dt, other: _figure(az.plot_prior_posterior(dt)),
}


def _call(function, dt, other):
    """Run one ArviZ call; its advice (discrete data, large Pareto k) is shown, not raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return ARVIZ_CALLS[function](dt, other)
    finally:
        plt.close("all")


@pytest.fixture(scope="module")
def conjugate_fits():
    """Per model: a fit with a posterior predictive group, and a second fit to compare."""
    fits = {}
    for name in MODELS:
        est, _, _ = _fit(name, draws=150)
        est.sample_posterior_predictive(random_seed=1, draws=100)
        other, _, _ = _fit(name, draws=150, random_seed=1)
        fits[name] = (est.idata_, other.idata_)
    return fits


# -- the layout ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_every_group_holds_y_alone_under_the_same_name(name):
    est, X, y = _fit(name, draws=20)
    est.sample_posterior_predictive(random_seed=0, draws=10)
    est.sample_prior_predictive(random_seed=0, draws=10)
    tree = est.idata_
    n_rows = len(y)
    for group, dims in [
        ("observed_data", ("obs",)),
        ("log_likelihood", ("chain", "draw", "obs")),
        ("posterior_predictive", ("chain", "draw", "obs")),
        ("prior_predictive", ("chain", "draw", "obs")),
    ]:
        assert list(tree[group].data_vars) == ["y"], group
        assert tree[group]["y"].dims == dims, group
        assert tree[group].sizes["obs"] == n_rows
    np.testing.assert_array_equal(est.classes_[tree["observed_data"]["y"].values], y)
    for group in ("posterior_predictive", "prior_predictive"):
        codes = tree[group]["y"].values
        assert codes.dtype.kind == "i" and codes.min() >= 0 and codes.max() < len(est.classes_)
    # The rows and their statistics are constants of the fit, marked as such.
    constant = tree["constant_data"].to_dataset()
    assert constant["X"].dims == ("obs", "feature")
    np.testing.assert_array_equal(constant["X"].values, np.asarray(X, dtype=float))
    for statistic in est._family.ppc_variables:
        assert constant[statistic].attrs["source"] == "training rows"
        assert statistic in tree["posterior_predictive_rows"].data_vars


def test_sparse_rows_are_kept_in_constant_data_by_their_non_zeros():
    X, y = multinomial_data()
    X = sp.csr_array(X.to_numpy())
    est = bayesgen.MultinomialNB(**CONJUGATE, draws=20, random_seed=0).fit(X, y)
    constant = est.idata_["constant_data"].to_dataset()
    np.testing.assert_array_equal(constant["X_data"].values, X.data)
    np.testing.assert_array_equal(constant["X_indices"].values, X.indices)
    np.testing.assert_array_equal(constant["X_indptr"].values, X.indptr)
    assert list(est.idata_["observed_data"].data_vars) == ["y"]


@pytest.mark.parametrize("name", ["multinomial", "gda"])
def test_log_likelihood_y_is_the_joint_density_of_each_row(name):
    """log p(x_i, y_i | θ) = log π_{y_i} + log p(x_i | y_i, θ), from SciPy's densities."""
    est, X, y = _fit(name, draws=10)
    post = est.idata_["posterior"]
    codes = np.searchsorted(est.classes_, y)
    X = np.asarray(X, dtype=float)
    got = est.idata_["log_likelihood"]["y"].values
    for chain, draw in [(0, 0), (1, 7)]:
        pi = post["class_prob"].values[chain, draw]
        if name == "multinomial":
            theta = post["feature_prob"].values[chain, draw]
            density = [
                stats.multinomial.logpmf(x, n=x.sum(), p=theta[k])
                for x, k in zip(X, codes, strict=True)
            ]
        else:
            mu, cov = post["mu"].values[chain, draw], post["cov"].values[chain, draw]
            density = [
                stats.multivariate_normal.logpdf(x, mu[k], cov)
                for x, k in zip(X, codes, strict=True)
            ]
        expected = np.log(pi[codes]) + np.array(density)
        np.testing.assert_allclose(got[chain, draw], expected, rtol=1e-10)


def _class_proba(name, est, X):
    """p(y = k | x_i, θ_s) for every draw s (chain and draw flattened), from SciPy."""
    post = est.idata_["posterior"].to_dataset().stack(sample=("chain", "draw"))
    X = np.asarray(X, dtype=float)
    pi = post["class_prob"].transpose("sample", ...).values
    if name == "multinomial":
        theta = post["feature_prob"].transpose("sample", ...).values  # (S, K, V)
        joint = np.log(pi)[:, None, :] + np.einsum("nv,skv->snk", X, np.log(theta))
    else:
        mu = post["mu"].transpose("sample", ...).values
        cov = post["cov"].transpose("sample", ...).values
        joint = np.log(pi)[:, None, :] + np.stack(
            [
                np.stack(
                    [stats.multivariate_normal.logpdf(X, mu[s, k], cov[s]) for k in range(2)],
                    axis=-1,
                )
                for s in range(len(pi))
            ]
        )
    return np.exp(joint - logsumexp(joint, axis=-1, keepdims=True))  # (S, n, K)


@pytest.mark.parametrize("name", ["multinomial", "gda"])
def test_posterior_predictive_y_is_drawn_from_the_class_given_the_row(name):
    """The share of draws that predict class k for row i estimates E_θ[p(y = k | x_i, θ)];
    its Monte Carlo error is at most √(p(1 − p) / S) for S independent draws."""
    est, X, _ = _fit(name, draws=1000)
    predicted = est.sample_posterior_predictive(random_seed=3)["posterior_predictive"]["y"]
    codes = predicted.stack(sample=("chain", "draw")).transpose("sample", "obs").values
    proba = _class_proba(name, est, X)
    n_classes = proba.shape[-1]
    share = np.stack([(codes == k).mean(axis=0) for k in range(n_classes)], axis=-1)
    expected = proba.mean(axis=0)
    se = np.sqrt(np.maximum(expected * (1 - expected), 1e-4) / len(codes))
    assert np.all(np.abs(share - expected) < 5 * se)
    # The labels depend on the row: drawn from the class prior π alone, they would not fit.
    prior_only = est.idata_["posterior"]["class_prob"].mean(("chain", "draw")).values
    assert np.max(np.abs(share - prior_only) / se) > 5


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "gda"])
def test_loo_pit_is_the_leave_one_out_class_probability_below_the_label(name):
    """With the joint log-likelihood as PSIS weights and labels drawn from p(y | x_i, θ),
    LOO-PIT_i = P(ỹ < y_i | x_i, D_-i) + U_i P(ỹ = y_i | x_i, D_-i), the cumulative
    probabilities from the exact leave-one-out class probabilities (``bayesgen.loo_proba``, no
    draws), up to Monte Carlo error. ArviZ breaks the ties of discrete data with
    U = default_rng(random_state).uniform(size=n_rows) (arviz_stats' ``_loo_pit``)."""
    est, _, y = _fit(name, draws=1000)
    est.sample_posterior_predictive(random_seed=4, draws=10)
    codes = np.searchsorted(est.classes_, y)
    cumulative = np.cumsum(bayesgen.loo_proba(est), axis=1)
    rows = np.arange(len(codes))
    below = np.where(codes > 0, cumulative[rows, codes - 1], 0.0)
    at = cumulative[rows, codes]
    expected = below + np.random.default_rng(1).uniform(size=len(codes)) * (at - below)
    tolerance = 0.06  # a few Monte Carlo errors of a share among 2,000 weighted draws
    pit = az.loo_pit(est.idata_, random_state=1)["y"].values
    np.testing.assert_allclose(pit, expected, atol=tolerance)
    # Labels drawn without looking at the row (from the class prior) are far from it.
    wrong = est.idata_.copy()
    predicted = wrong["posterior_predictive"].to_dataset()
    rng = np.random.default_rng(0)
    pi = est.idata_["posterior"]["class_prob"].mean(("chain", "draw")).values
    labels = rng.choice(len(pi), size=predicted["y"].shape, p=pi)
    predicted["y"] = (predicted["y"].dims, labels)
    wrong["posterior_predictive"] = predicted
    wrong_pit = az.loo_pit(wrong, random_state=1)["y"].values
    assert np.max(np.abs(wrong_pit - expected)) > 5 * tolerance


# -- every ArviZ function, no var_names ---------------------------------------------------


@pytest.mark.parametrize("function", ARVIZ_CALLS)
@pytest.mark.parametrize("name", MODELS)
def test_arviz_function_works_on_a_conjugate_fit(conjugate_fits, name, function):
    dt, other = conjugate_fits[name]
    _call(function, dt, other)


def test_every_arviz_function_works_on_a_nuts_fit(fits):
    """The session's NUTS fit (PyMC's own constant_data beside the rows), on a copy: the
    shared fit keeps its groups."""
    est = copy.deepcopy(fits.nuts("multinomial_nb").est)
    est.sample_posterior_predictive(random_seed=1, draws=100)
    other = copy.deepcopy(est.idata_)
    for function in ARVIZ_CALLS:
        _call(function, est.idata_, other)
    assert "posterior_predictive" not in fits.nuts("multinomial_nb").est.idata_.children


# -- files in the earlier layout ------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "model"),
    [
        ("multinomial-drawn", "multinomial_nb"),
        ("multinomial-lazy", "multinomial_nb"),
        ("gda-weighted", "gda"),
    ],
)
def test_a_file_of_the_earlier_layout_loads_predicts_as_it_did_and_is_upgraded(stem, model):
    path = ROWS_LAYOUT / f"{stem}.nc"
    est = bayesgen.load(path)
    X, _ = DATA[model]()
    np.testing.assert_array_equal(est.predict_proba(X), np.load(ROWS_LAYOUT / f"{stem}-proba.npy"))
    old = xr.load_datatree(path, engine="netcdf4")
    tree = est.idata_
    assert list(tree["observed_data"].data_vars) == ["y"]
    np.testing.assert_array_equal(tree["observed_data"]["y"], old["observed_data"]["y"])
    if "log_likelihood" in old.children:  # the lazy file's is computed again, the same
        np.testing.assert_array_equal(tree["log_likelihood"]["y"], old["log_likelihood"]["row"])
    constant = tree["constant_data"].to_dataset()
    for name, values in old["observed_data"].data_vars.items():
        if name != "y":
            np.testing.assert_array_equal(constant[name].values, values.values)
            assert constant[name].attrs["source"] == "training rows"
    rows, _ = est.training_rows()
    dense = rows.toarray() if sp.issparse(rows) else rows
    np.testing.assert_array_equal(dense, np.asarray(X, dtype=float))
    if "posterior_predictive" in old.children:  # simulated rows, no labels: kept apart
        assert "posterior_predictive" not in tree.children
        xr.testing.assert_equal(
            tree["posterior_predictive_rows"].to_dataset(),
            old["posterior_predictive"].to_dataset(),
        )


def test_an_upgraded_file_saves_and_loads_in_the_new_layout(tmp_path):
    est = bayesgen.load(ROWS_LAYOUT / "multinomial-drawn.nc")
    est.sample_posterior_predictive(random_seed=0, draws=10)
    est.save(tmp_path / "again.nc")
    again = bayesgen.load(tmp_path / "again.nc")
    for group in ("observed_data", "constant_data", "log_likelihood", "posterior_predictive"):
        xr.testing.assert_identical(
            again.idata_[group].to_dataset(), est.idata_[group].to_dataset()
        )
    _call("loo_pit", again.idata_, None)
    _call("plot_ppc_rootogram", again.idata_, None)


def test_a_file_whose_rows_group_is_gone_says_so(tmp_path):
    est, _, _ = _fit("gda", draws=20)
    est.save(tmp_path / "good.nc")
    tree = xr.load_datatree(tmp_path / "good.nc", engine="netcdf4")
    del tree["constant_data"]
    tree.to_netcdf(tmp_path / "bad.nc", engine="netcdf4")
    with pytest.raises(ValueError, match=r"the 'constant_data' group \(the training rows\)"):
        bayesgen.load(tmp_path / "bad.nc")


def test_categorical_rows_round_trip_through_constant_data():
    est, X, y = _fit("categorical", draws=20)
    rows, codes = est.training_rows()
    np.testing.assert_array_equal(rows, X)
    np.testing.assert_array_equal(est.classes_[codes], y)
