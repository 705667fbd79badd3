"""The row-level generative workflow: the training rows, the pointwise log-likelihood that
az.loo reads, and prior and posterior predictive simulation of whole data sets.

Expected values come from SciPy's densities on the raw rows and from the textbook moments of
the posterior, never from bayesgen's own likelihood code.
"""

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import bernoulli_data, categorical_data, gaussian_data, multinomial_data
from scipy import stats

import bayesgen
from bayesgen.inference import simulation

CONJUGATE = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "chains": 2}


def _fit(name, draws=400, **params):
    X, y = {
        "multinomial": multinomial_data,
        "bernoulli": bernoulli_data,
        "categorical": categorical_data,
        "gda": gaussian_data,
        "qda": gaussian_data,
    }[name]()
    cls = {
        "multinomial": bayesgen.MultinomialNB,
        "bernoulli": bayesgen.BernoulliNB,
        "categorical": bayesgen.CategoricalNB,
        "gda": bayesgen.GaussianDiscriminantAnalysis,
        "qda": bayesgen.QuadraticDiscriminantAnalysis,
    }[name]
    return cls(**{**CONJUGATE, "draws": draws, **params}).fit(X, y), X, y


MODELS = ("multinomial", "bernoulli", "categorical", "gda", "qda")


def _scipy_row_log_likelihood(name, est, X, y, chain, draw):
    """log π_{y_i} + log p(x_i | y_i, θ) of one draw, from SciPy's distributions."""
    point = est.idata_["posterior"].to_dataset().isel(chain=chain, draw=draw)
    codes = np.searchsorted(est.classes_, y)
    X = np.asarray(X, dtype=float)
    log_class = np.log(point["class_prob"].values[codes])
    if name == "multinomial":
        theta = point["feature_prob"].values
        rows = [
            stats.multinomial.logpmf(x, n=x.sum(), p=theta[k])
            for x, k in zip(X, codes, strict=True)
        ]
    elif name == "bernoulli":
        phi = point["feature_prob"].values[codes]
        rows = stats.bernoulli.logpmf(X, phi).sum(axis=1)
    elif name == "categorical":
        theta = point["feature_prob"].values  # (class, feature, category)
        features = np.arange(X.shape[1])
        rows = [
            np.log(theta[k, features, x.astype(int)]).sum() for x, k in zip(X, codes, strict=True)
        ]
    else:
        mu = point["mu"].values
        cov = point["cov"].values
        covs = [cov[k] if cov.ndim == 3 else cov for k in codes]
        rows = [
            stats.multivariate_normal.logpdf(x, mu[k], c)
            for x, k, c in zip(X, codes, covs, strict=True)
        ]
    return log_class + np.asarray(rows)


@pytest.mark.parametrize("name", MODELS)
def test_log_likelihood_is_the_full_row_density(name):
    est, X, y = _fit(name, draws=20)
    loglik = est.idata_["log_likelihood"]["y"]
    assert loglik.dims == ("chain", "draw", "obs")
    assert loglik.shape == (2, 20, len(y))
    for chain, draw in [(0, 0), (1, 13)]:
        expected = _scipy_row_log_likelihood(name, est, X, y, chain, draw)
        np.testing.assert_allclose(loglik.values[chain, draw], expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", MODELS)
def test_az_loo_is_finite_for_every_model(name):
    est, _, y = _fit(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a few large Pareto k on tiny data
        loo = az.loo(est.idata_, pointwise=True)
    assert np.isfinite(loo.elpd) and np.isfinite(loo.se)
    assert loo.n_data_points == len(y)
    assert loo.pareto_k.shape == (len(y),)


def test_log_likelihood_follows_the_posterior_float_type():
    est, _, _ = _fit("bernoulli", draws=20, dtype="float32")
    assert est.idata_["log_likelihood"]["y"].dtype == np.float32


def test_constant_data_holds_the_rows_the_model_saw():
    X, y = bernoulli_data()
    X = X * 3.0  # binarize=1.0 turns these into the 0/1 rows the model sees
    est = bayesgen.BernoulliNB(**CONJUGATE, draws=20, binarize=1.0).fit(sp.csr_array(X), y)
    rows, codes = est.training_rows()
    assert sp.issparse(rows)
    np.testing.assert_array_equal(rows.toarray(), (X > 1.0).astype(float))
    np.testing.assert_array_equal(est.classes_[codes], y)
    assert list(est.idata_["observed_data"].data_vars) == ["y"]
    data = est.idata_["constant_data"].to_dataset()
    assert {"X_data", "X_indices", "X_indptr"} <= set(data.data_vars) and "X" not in data
    np.testing.assert_array_equal(data["present_features"].values, (X > 1.0).sum(axis=1))


def test_dense_rows_and_labels_round_trip():
    X, y = gaussian_data()
    est = bayesgen.GaussianDiscriminantAnalysis(**CONJUGATE, draws=20).fit(X, y)
    rows, codes = est.training_rows()
    np.testing.assert_array_equal(rows, X.to_numpy())
    np.testing.assert_array_equal(est.classes_[codes], y)


def test_saved_model_keeps_rows_and_log_likelihood(tmp_path):
    est, _, _ = _fit("multinomial", draws=20)
    est.save(tmp_path / "m.nc")
    loaded = bayesgen.load(tmp_path / "m.nc")
    for group in ("observed_data", "constant_data", "log_likelihood"):
        assert loaded.idata_[group].to_dataset().equals(est.idata_[group].to_dataset())
    np.testing.assert_array_equal(loaded.training_rows()[0], est.training_rows()[0])


# -- simulation ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_predictive_groups_are_shaped_like_the_training_data(name):
    est, X, _ = _fit(name, draws=30)
    tree = est.sample_posterior_predictive(random_seed=1, draws=10)
    assert list(tree["posterior_predictive"].data_vars) == ["y"]
    # A label for every draw (az.loo_pit pairs them with the log-likelihood), rows for 5.
    assert tree["posterior_predictive"]["y"].shape == (2, 30, np.shape(X)[0])
    predictive = tree["posterior_predictive_rows"].to_dataset()
    assert predictive["X"].shape == (2, 5, *np.shape(X))
    observed = tree["constant_data"].to_dataset()
    statistics = {
        name
        for name, variable in observed.data_vars.items()
        if variable.attrs.get("source") == "training rows"
    } - {"X", "X_data", "X_indices", "X_indptr", "sample_weight"}
    assert statistics and statistics <= set(predictive.data_vars)
    for statistic in statistics:
        assert predictive[statistic].dims == ("chain", "draw", *observed[statistic].dims)
    prior = est.sample_prior_predictive(random_seed=1, draws=4)
    assert prior["prior_predictive_rows"]["X"].shape == (1, 4, *np.shape(X))
    assert prior["prior_predictive"]["y"].shape == (1, est.prior_draws, np.shape(X)[0])


def test_simulated_documents_keep_their_lengths_and_draw_from_theta():
    est, X, y = _fit("multinomial", draws=200)
    predictive = est.sample_posterior_predictive(random_seed=2)["posterior_predictive_rows"]
    lengths = np.asarray(X).sum(axis=1)
    np.testing.assert_array_equal(
        predictive["doc_length"].values, np.broadcast_to(lengths, (2, 200, len(y)))
    )
    np.testing.assert_array_equal(
        predictive["X"].values.sum(axis=-1), np.broadcast_to(lengths, (2, 200, len(y)))
    )
    # The word shares of each class's simulated tokens average to E[θ_k] = add-λ.
    codes = np.searchsorted(est.classes_, y)
    simulated = predictive["X"].values.reshape(400, *np.shape(X))
    counts = np.asarray(X, dtype=float)
    for k in range(len(est.classes_)):
        words = simulated[:, codes == k].sum(axis=1)  # (draws, feature)
        shares = words / words.sum(axis=1, keepdims=True)
        n_k = counts[codes == k].sum(axis=0)
        add_lambda = (n_k + 1.0) / (n_k.sum() + counts.shape[1])
        se = shares.std(axis=0, ddof=1) / np.sqrt(len(shares))
        assert np.all(np.abs(shares.mean(axis=0) - add_lambda) < 5 * se)


def test_bernoulli_predictive_frequencies_match_add_lambda():
    """Under the posterior predictive the share of class-k rows with feature j has mean
    E[φ_jk] = (N_jk + λ) / (N_k + 2λ); its Monte Carlo error is the SD over draws / √S."""
    X, y = bernoulli_data()
    est = bayesgen.BernoulliNB(**CONJUGATE, draws=500, alpha=2.0).fit(X, y)
    tree = est.sample_posterior_predictive(random_seed=3, keep_rows=False)
    freq = tree["posterior_predictive_rows"]
    assert "X" not in freq
    draws = freq["class_feature_freq"].values.reshape(1000, 2, 5)
    codes = np.searchsorted(est.classes_, y)
    n_k = np.bincount(codes)
    n_jk = np.stack([X[codes == k].sum(axis=0) for k in range(2)])
    add_lambda = (n_jk + 2.0) / (n_k[:, None] + 4.0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    z = (draws.mean(axis=0) - add_lambda) / se
    assert np.all(np.abs(z) < 4.5), z
    # A wrong λ is far outside that error: the check can fail.
    wrong = (n_jk + 0.5) / (n_k[:, None] + 1.0)
    assert np.max(np.abs((draws.mean(axis=0) - wrong) / se)) > 4.5


def test_gaussian_predictive_class_means_centre_on_the_posterior_means():
    est, _, _ = _fit("qda", draws=500)
    predictive = est.sample_posterior_predictive(random_seed=4, keep_rows=False)
    means = predictive["posterior_predictive_rows"]["class_feature_mean"].values.reshape(1000, 2, 3)
    expected = est.posterior_mean()["mu"].values
    se = means.std(axis=0, ddof=1) / np.sqrt(len(means))
    assert np.all(np.abs(means.mean(axis=0) - expected) < 4.5 * se)


def test_prior_predictive_bernoulli_is_centred_on_one_half():
    est, _, _ = _fit("bernoulli", draws=20, prior_draws=800, alpha=3.0)
    prior = est.sample_prior_predictive(random_seed=5, keep_rows=False)["prior_predictive_rows"]
    freq = prior["class_feature_freq"].values.reshape(800, -1)
    se = freq.std(axis=0, ddof=1) / np.sqrt(800)
    assert np.all(np.abs(freq.mean(axis=0) - 0.5) < 4.5 * se)


def test_simulation_is_reproducible_with_a_seed():
    est, _, _ = _fit("categorical", draws=20)
    first = est.sample_posterior_predictive(random_seed=7)["posterior_predictive_rows"]["X"].values
    second = est.sample_posterior_predictive(random_seed=7)["posterior_predictive_rows"]["X"].values
    np.testing.assert_array_equal(first, second)
    third = est.sample_posterior_predictive(random_seed=8)["posterior_predictive_rows"]["X"].values
    assert not np.array_equal(first, third)


def test_simulated_categories_stay_within_each_feature():
    est, _, _ = _fit("categorical", draws=50)
    X = est.sample_posterior_predictive(random_seed=9)["posterior_predictive_rows"]["X"].values
    widths = est.closed_form_["n_categories"].values
    assert X.min() >= 0 and np.all(X.max(axis=(0, 1, 2)) <= widths - 1)


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("draws", [0, -3, 2.5, True, "10"])
def test_draws_must_be_a_positive_integer(draws):
    est, _, _ = _fit("bernoulli", draws=20)
    with pytest.raises(ValueError, match=r"draws: expected a positive integer or None; got"):
        est.sample_posterior_predictive(draws=draws)


def test_rows_too_large_name_the_remedy(monkeypatch):
    est, _, _ = _fit("bernoulli", draws=20)
    monkeypatch.setattr(simulation, "MAX_ROWS_BYTES", 40 * 5 * 8 * 3)
    with pytest.raises(
        ValueError,
        match=r"draws: simulating rows for 40 draws .* pass draws <= 3, or keep_rows=False",
    ):
        est.sample_posterior_predictive()
    est.sample_posterior_predictive(keep_rows=False)  # the statistics alone fit


def test_tf_idf_weights_cannot_be_simulated():
    X, y = multinomial_data()
    est = bayesgen.MultinomialNB(**CONJUGATE, draws=20).fit(X.to_numpy() * 0.5, y)
    with pytest.raises(ValueError, match=r"X: simulating documents needs whole word counts"):
        est.sample_posterior_predictive(draws=2)


def test_no_prior_group_names_prior_draws():
    est, _, _ = _fit("gda", draws=20, prior_draws=0)
    with pytest.raises(ValueError, match=r"prior_draws: this fit has no prior group"):
        est.sample_prior_predictive()


def test_a_fit_without_rows_says_so():
    est, _, _ = _fit("bernoulli", draws=20)
    del est.idata_["observed_data"]
    with pytest.raises(ValueError, match=r"idata_: this fit holds no observed_data group"):
        est.sample_posterior_predictive()


def test_unfitted_estimator_raises_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        bayesgen.BernoulliNB().sample_posterior_predictive()
    with pytest.raises(NotFittedError):
        bayesgen.BernoulliNB().pymc_model()


def test_pymc_model_is_the_fitted_model():
    est, _, _ = _fit("bernoulli", draws=20)
    model = est.pymc_model()
    assert set(model.coords["class"]) == set(est.classes_)
    assert len(model.coords["feature"]) == est.n_features_in_


def test_user_frame_is_not_modified_by_fit_or_simulation():
    X, y = gaussian_data()
    before = X.copy()
    est = bayesgen.GaussianDiscriminantAnalysis(**CONJUGATE, draws=20).fit(X, y)
    est.sample_posterior_predictive(random_seed=0, draws=4)
    pd.testing.assert_frame_equal(X, before)


# -- tampered model files -------------------------------------------------------------------


def _tampered(tmp_path, est, change):
    import xarray as xr

    est.save(tmp_path / "good.nc")
    tree = xr.load_datatree(tmp_path / "good.nc", engine="netcdf4")
    change(tree)
    tree.to_netcdf(tmp_path / "bad.nc", engine="netcdf4")
    return tmp_path / "bad.nc"


def _set(tree, group, name, values):
    data = tree[group].to_dataset()
    data[name] = (data[name].dims, values)
    tree[group] = data


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        (
            "gda",
            lambda t: _set(t, "observed_data", "y", t["observed_data"]["y"].values + 5),
            r"observed_data 'y' must hold class indices 0\.\.1",
        ),
        (
            "gda",
            lambda t: _set(t, "constant_data", "X", t["constant_data"]["X"].values * np.inf),
            r"constant_data's training rows hold NaN or infinite values",
        ),
        (
            "bernoulli_sparse",
            lambda t: _set(
                t, "constant_data", "X_indptr", t["constant_data"]["X_indptr"].values[::-1].copy()
            ),
            r"sparse rows \(X_indptr, X_indices\) are corrupt",
        ),
        (
            "gda",
            lambda t: t.__setitem__(
                "log_likelihood", t["log_likelihood"].to_dataset().isel(obs=slice(0, 5))
            ),
            r"log_likelihood 'y' has shape \(2, 20, 5\); expected \(2, 20, 40\)",
        ),
    ],
)
def test_tampered_rows_are_named_on_load(tmp_path, name, change, message):
    if name == "bernoulli_sparse":
        X, y = bernoulli_data()
        est = bayesgen.BernoulliNB(**CONJUGATE, draws=20).fit(sp.csr_array(X), y)
    else:
        est, _, _ = _fit(name, draws=20)
    with pytest.raises(ValueError, match=message):
        bayesgen.load(_tampered(tmp_path, est, change))


@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_bernoulli_simulation_draws_independent_cells(seed):
    """The sparse sampler (a Binomial count per class and feature, then a uniform subset of
    rows) must give independent Bernoulli(φ) cells: each cell's frequency, each row's count
    variance Σ φ(1 − φ), and no correlation between two rows of one column. Columns with
    φ > 1/2 take the complement path."""
    from bayesgen.families.bernoulli import _sparse_bernoulli_rows

    rng = np.random.default_rng(seed)
    prob = np.array([[0.02, 0.3, 0.5, 0.9, 0.7], [0.1, 0.6, 0.05, 0.97, 0.4]])
    y_codes = np.array([0, 0, 0, 1, 1, 0, 1])
    class_size = np.bincount(y_codes)
    draws = np.stack(
        [_sparse_bernoulli_rows(prob, y_codes, class_size, rng).toarray() for _ in range(4000)]
    )
    assert set(np.unique(draws)) <= {0, 1}
    expected = prob[y_codes]
    se = np.sqrt(expected * (1 - expected) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 4.5 * se)
    row_count_var = draws.sum(axis=2).var(axis=0, ddof=1)
    expected_var = (expected * (1 - expected)).sum(axis=1)
    assert np.all(np.abs(row_count_var / expected_var - 1) < 0.15)
    # Rows 0 and 1 (both class 0) in the same column: independent, covariance 0.
    for column in range(prob.shape[1]):
        a, b = draws[:, 0, column].astype(float), draws[:, 1, column].astype(float)
        covariance = np.mean((a - a.mean()) * (b - b.mean()))
        scale = np.sqrt(a.var() * b.var() / len(draws)) + 1e-12
        assert abs(covariance) < 4.5 * scale


def test_bernoulli_text_is_simulated_sparse_and_matches_add_lambda():
    rng = np.random.default_rng(5)
    y = (np.arange(300) % 3 == 0).astype(int)
    prob = np.where(rng.random((2, 400)) < 0.1, 0.2, 0.003)
    X = sp.csr_array((rng.random((300, 400)) < prob[y]).astype(float))
    est = bayesgen.BernoulliNB(**CONJUGATE, draws=400).fit(X, y)
    from bayesgen.families.bernoulli import FAMILY

    point = {"feature_prob": est.closed_form_["feature_prob"].values}
    assert sp.issparse(FAMILY.simulate_rows(est.closed_form_, X, y, point, rng))
    tree = est.sample_posterior_predictive(random_seed=6, keep_rows=False)
    freq = tree["posterior_predictive_rows"]
    draws = freq["class_feature_freq"].values.reshape(800, 2, 400)
    se = draws.std(axis=0, ddof=1) / np.sqrt(800)
    z = (draws.mean(axis=0) - est.closed_form_["feature_prob"].values) / se
    assert np.mean(np.abs(z) > 4.5) < 0.002  # 800 cells: family-wise false alarms are rare


def test_az_compare_of_gda_and_qda_agrees_with_their_exact_leave_one_out():
    """Same representation of x: az.compare on the stored joint log-likelihoods works, and
    each model's PSIS elpd_loo is the exact Σ_i log p(x_i, y_i | D without row i) (the own
    column of the family's loo_log_joint) within PSIS's error."""
    X, y = gaussian_data(n=150)
    fits = {
        "gda": bayesgen.GaussianDiscriminantAnalysis(**CONJUGATE, draws=2000).fit(X, y),
        "qda": bayesgen.QuadraticDiscriminantAnalysis(**CONJUGATE, draws=2000).fit(X, y),
    }
    table = az.compare({name: est.idata_ for name, est in fits.items()})
    assert set(table.index) == {"gda", "qda"}
    for name, est in fits.items():
        rows, codes = est.training_rows()
        joint = est._family.loo_log_joint(est.closed_form_, rows, codes, options=est.get_params())
        exact = joint[np.arange(len(codes)), codes].sum()
        loo = az.loo(est.idata_)  # az.compare's table rounds its elpd column for display
        assert abs(loo.elpd - exact) < 0.2, (name, loo.elpd, exact)
        assert abs(table.loc[name, "elpd"] - exact) < 0.01 * abs(exact)
    # The data have one shared covariance: GDA's fewer parameters predict better.
    assert table.index[0] == "gda"
