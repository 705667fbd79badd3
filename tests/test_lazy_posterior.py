"""A conjugate fit keeps its exact posterior as parameters (bayesgen.inference.conjugate).

The exact means, SDs and intervals are checked against scipy.stats marginals written out here
from the counts, and against many materialised draws; the lazily drawn ``idata_`` is the same,
seed for seed, as ``inference.conjugate_posterior``; the aggregated prediction draws of the
multinomial model have the law of fully materialised ones.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
import xarray as xr
from scipy import stats
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

import bayesgen
from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
    compare,
)
from bayesgen.inference import sampling as inference
from bayesgen.inference.conjugate import ConjugatePosterior

FAST = {"inference": "conjugate", "compute_map": False, "random_seed": 0}


def counts_data():
    rng = np.random.default_rng(1)
    X = rng.poisson(1.5, size=(40, 6))
    y = np.arange(40) % 3
    return X, y


def gaussian_data():
    rng = np.random.default_rng(2)
    y = np.arange(45) % 3
    X = rng.normal(size=(45, 3)) + y[:, None]
    return X, y


# --------------------------------------------------------------------------------------------
# Exact summaries equal scipy.stats marginals computed from the counts.


def test_multinomial_marginals_are_the_beta_components_of_the_dirichlet():
    X, y = counts_data()
    est = MultinomialNB(alpha=0.5, **FAST).fit(X, y)
    counts = np.stack([X[y == k].sum(axis=0) for k in range(3)]) + 0.5
    beta = stats.beta(counts, counts.sum(axis=1, keepdims=True) - counts)
    post = est.posterior_
    np.testing.assert_allclose(post.mean()["feature_prob"].values, beta.mean(), rtol=1e-12)
    np.testing.assert_allclose(post.sd()["feature_prob"].values, beta.std(), rtol=1e-12)
    bounds = post.interval(0.9)["feature_prob"].values
    np.testing.assert_allclose(bounds[0], beta.ppf(0.05), rtol=1e-10)
    np.testing.assert_allclose(bounds[1], beta.ppf(0.95), rtol=1e-10)
    class_beta = stats.beta(np.bincount(y) + 1.0, 40 + 3.0 - np.bincount(y) - 1.0)
    np.testing.assert_allclose(post.sd()["class_prob"].values, class_beta.std(), rtol=1e-12)


def test_hdi_is_the_shortest_interval_of_the_marginal():
    X, y = counts_data()
    est = BernoulliNB(alpha=0.5, **FAST).fit(np.minimum(X, 1), y)
    present = np.stack([np.minimum(X, 1)[y == k].sum(axis=0) for k in range(3)])
    rows = np.bincount(y)[:, None]
    a, b = present + 0.5, rows - present + 0.5
    lower, upper = est.posterior_.interval(0.8, kind="hdi")["feature_prob"].values
    for k, j in [(0, 0), (1, 3), (2, 5)]:
        dist = stats.beta(a[k, j], b[k, j])
        # Independent: a bounded scalar minimisation of the width over the lower tail mass.
        from scipy.optimize import minimize_scalar

        best = minimize_scalar(
            lambda p, d=dist: d.ppf(p + 0.8) - d.ppf(p),
            bounds=(0, 0.2),
            method="bounded",
            options={"xatol": 1e-12},
        )
        width = min(best.fun, dist.ppf(0.8) - dist.ppf(0.0), dist.ppf(1.0) - dist.ppf(0.2))
        assert upper[k, j] - lower[k, j] == pytest.approx(width, rel=1e-7, abs=1e-10)
        assert dist.cdf(upper[k, j]) - dist.cdf(lower[k, j]) == pytest.approx(0.8, abs=1e-9)


def test_categorical_padding_cells_are_a_point_mass_at_zero():
    X = np.array([[0, 1], [1, 2], [0, 0], [1, 1], [0, 2], [1, 0]])
    est = CategoricalNB(**FAST).fit(X, [0, 0, 1, 1, 0, 1])
    summary = est.posterior_.summary()
    padding = summary.loc["feature_prob[0, x0, 2]"]
    assert (padding["mean"], padding["sd"], padding["eti94_lb"], padding["eti94_ub"]) == (
        0.0,
        0.0,
        0.0,
        0.0,
    )
    real = summary.loc["feature_prob[0, x1, 1]"]  # class 0 has x1 = 1 once, 2 twice, 0 never
    assert real["mean"] == pytest.approx(2.0 / 6.0, rel=1e-12)


@pytest.mark.parametrize("model", [GaussianDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_gaussian_marginals_are_student_t_and_inverse_gamma(model):
    X, y = gaussian_data()
    est = model(**FAST).fit(X, y)
    post = est.posterior_
    family = est._family
    from bayesgen.families import gda, qda

    params = (gda if model is GaussianDiscriminantAnalysis else qda).niw_posterior_parameters(
        est.closed_form_
    )
    n_features = 3
    dof = np.broadcast_to(params["dof"], (3,)).astype(float)
    scale = params["scale"] if params["scale"].ndim == 3 else np.stack([params["scale"]] * 3)
    bounds = post.interval(0.9)
    for k in range(3):
        df = dof[k] - n_features + 1
        for j in range(n_features):
            t = stats.t(
                df,
                loc=params["mean"][k, j],
                scale=np.sqrt(scale[k, j, j] / (params["kappa"][k] * df)),
            )
            assert post.sd()["mu"].values[k, j] == pytest.approx(t.std(), rel=1e-10)
            assert bounds["mu"].values[1, k, j] == pytest.approx(t.ppf(0.95), rel=1e-9)
            ig = stats.invgamma(df / 2, scale=scale[k, j, j] / 2)
            cov_sd = post.sd()["cov"].values
            cov_sd = cov_sd[k] if cov_sd.ndim == 3 else cov_sd
            assert cov_sd[j, j] == pytest.approx(ig.std(), rel=1e-10)
    assert family.name in ("gda", "qda")


def test_exact_summaries_match_many_materialised_draws():
    X, y = gaussian_data()
    est = GaussianDiscriminantAnalysis(**FAST).fit(X, y)
    draws = est.posterior_.draws(20_000, random_seed=5)
    for name in ("mu", "cov"):
        values = draws[name].values.reshape(20_000, -1)
        mean = est.posterior_.mean()[name].values.ravel()
        sd = est.posterior_.sd()[name].values.ravel()
        z = (values.mean(axis=0) - mean) / (sd / np.sqrt(20_000))
        assert np.abs(z).max() < 4.5, name
        np.testing.assert_allclose(values.std(axis=0, ddof=1), sd, rtol=0.05)
    lower, upper = est.posterior_.interval(0.9)["mu"].values.reshape(2, -1)
    inside = (
        (draws["mu"].values.reshape(20_000, -1) >= lower)
        & (draws["mu"].values.reshape(20_000, -1) <= upper)
    ).mean(axis=0)
    np.testing.assert_allclose(inside, 0.9, atol=0.01)


def test_summary_marks_fallback_rows_not_exact():
    X, y = gaussian_data()
    summary = GaussianDiscriminantAnalysis(**FAST).fit(X, y).posterior_.summary()
    assert summary.loc["cov[x0, x0]", "exact"]
    assert not summary.loc["cov[x0, x1]", "exact"]
    assert not summary.loc["coef[0, x0]", "exact"]
    assert list(summary.columns) == ["mean", "sd", "eti94_lb", "eti94_ub", "exact"]


def test_interval_refuses_a_bad_probability_and_kind():
    post = MultinomialNB(**FAST).fit(*counts_data()).posterior_
    with pytest.raises(ValueError, match=r"prob: expected a probability in \(0, 1\); got 1.5"):
        post.interval(1.5)
    with pytest.raises(ValueError, match="kind: expected 'eti' or 'hdi'; got 'hpd'"):
        post.interval(kind="hpd")
    with pytest.raises(ValueError, match="var_names: expected names among"):
        post.mean(["theta"])


# --------------------------------------------------------------------------------------------
# Draws on demand.


def test_feature_subset_draws_have_the_aggregated_dirichlet_law():
    X, y = counts_data()
    est = MultinomialNB(**FAST).fit(X, y)
    subset = est.posterior_.draws(4000, features=["x1", "x4"], var_names=["feature_prob"])
    assert subset["feature_prob"].dims == ("chain", "draw", "class", "feature")
    assert subset["feature"].values.tolist() == ["x1", "x4"]
    full = est.posterior_.draws(4000, random_seed=9)["feature_prob"].sel(feature=["x1", "x4"])
    a = np.stack([X[y == k].sum(axis=0) for k in range(3)]) + 1.0
    beta = stats.beta(a[:, [1, 4]], a.sum(axis=1, keepdims=True) - a[:, [1, 4]])
    for draws in (subset["feature_prob"], full):
        z = (draws.mean(("chain", "draw")).values - beta.mean()) / (beta.std() / np.sqrt(4000))
        assert np.abs(z).max() < 4.5
    ks = stats.ks_2samp(subset["feature_prob"].values[0, :, 0, 0], full.values[0, :, 0, 0])
    assert ks.pvalue > 0.001


def test_draws_refuse_more_than_the_memory_bound():
    post = MultinomialNB(**FAST).fit(*counts_data()).posterior_
    with pytest.raises(ValueError, match="n_draws: 1 x 2000000 draws of 21 scalars"):
        post.draws(2_000_000)
    with pytest.raises(ValueError, match="features: expected one or more labels"):
        post.draws(10, features=["nope"])


# --------------------------------------------------------------------------------------------
# The estimator: fit draws nothing, idata_ is the same draws when asked.


def test_fit_holds_no_draws_until_idata_is_read():
    est = MultinomialNB(**FAST).fit(*counts_data())
    assert isinstance(est.posterior_, ConjugatePosterior)
    assert est.__dict__["_idata"].made is None
    check_is_fitted(est)
    est.predict(counts_data()[0])  # the aggregated draws: still nothing materialised
    assert est.__dict__["_idata"].made is None


@pytest.mark.parametrize("model", [MultinomialNB, GaussianDiscriminantAnalysis])
def test_lazy_idata_equals_the_draws_made_at_once(model):
    X, y = gaussian_data() if model is GaussianDiscriminantAnalysis else counts_data()
    est = model(inference="conjugate", random_seed=3, draws=200, prior_draws=50).fit(X, y)
    reference = inference.conjugate_posterior(
        est.closed_form_, draws=200, chains=est.chains, random_seed=3, prior_draws=50
    )
    for group in ("posterior", "prior"):
        for name, values in reference[group].data_vars.items():
            np.testing.assert_array_equal(est.idata_[group][name].values, values.values)
    assert set(est.idata_.children) == {
        "posterior",
        "constant_data",
        "prior",
        "observed_data",
        "log_likelihood",
    }


def test_posterior_mean_is_exact_for_a_conjugate_fit():
    X, y = counts_data()
    est = MultinomialNB(**FAST).fit(X, y)
    np.testing.assert_allclose(
        est.posterior_mean()["feature_prob"].values,
        est.closed_form_["feature_prob"].values,
        rtol=1e-14,
    )


def test_clone_pickle_and_save_keep_the_exact_posterior(tmp_path):
    X, y = counts_data()
    est = MultinomialNB(**FAST, draws=100).fit(X, y)
    assert not hasattr(clone(est), "posterior_")
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.predict_proba(X), est.predict_proba(X))
    est.save(tmp_path / "m.nc")
    loaded = bayesgen.load(tmp_path / "m.nc")
    assert loaded.posterior_.random_seed == est.posterior_.random_seed
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(loaded.feature_log_prob_, est.feature_log_prob_)


@pytest.mark.parametrize("sparse", [True, False])
def test_a_loaded_fit_uses_its_training_rows_before_drawing(tmp_path, sparse):
    # A loaded conjugate fit reads its rows from the file, not from draws it has not made:
    # rows stored sparse (text) once lost the number of features on the way.
    X, y = counts_data()
    X = sp.csr_array(X) if sparse else X
    est = MultinomialNB(**FAST, draws=100).fit(X, y)
    est.save(tmp_path / "m.nc")
    loaded = bayesgen.load(tmp_path / "m.nc")
    assert loaded.__dict__["_idata"].made is None
    rows, codes = loaded.training_rows()
    assert sp.issparse(rows) == sparse and rows.shape == (40, 6)
    np.testing.assert_array_equal(sp.csr_array(rows).toarray(), sp.csr_array(X).toarray())
    np.testing.assert_array_equal(codes, y)
    from bayesgen.checks.loo import leave_one_out

    expected = leave_one_out(est)
    got = leave_one_out(loaded)
    assert loaded.__dict__["_idata"].made is None  # the exact leave-one-out draws nothing
    np.testing.assert_allclose(got.log_proba, expected.log_proba, rtol=1e-12)


def test_refit_with_nuts_settings_drops_the_exact_posterior():
    est = MultinomialNB(**FAST, draws=50).fit(*counts_data())
    est.set_posterior(est.closed_form_, est.idata_)
    assert not hasattr(est, "posterior_")


# --------------------------------------------------------------------------------------------
# compare() from the exact moments.


def test_exact_compare_agrees_and_fails_for_another_prior():
    est = MultinomialNB(**FAST).fit(*counts_data())
    result = compare(est, exact=True)
    assert result.ok
    # exact moments for every row; a small model's cells are all in the sample of draws
    # that is checked as well, drawn without materialising idata_
    assert result.settings["moments"] == "exact"
    assert result.settings["draws_checked"] == len(result.table)
    assert (result.table["mcse"] > 0).all() and np.isfinite(result.table["ess_bulk"]).all()
    assert est.__dict__["_idata"].made is None
    wrong = compare(est, exact=True, alpha=2.0)
    assert not wrong.table.loc[wrong.table["variable"] == "feature_prob", "agrees"].any()


def test_exact_compare_is_refused_where_a_variable_has_no_exact_moments():
    est = GaussianDiscriminantAnalysis(**FAST).fit(*gaussian_data())
    with pytest.raises(ValueError, match="exact: True needs a conjugate fit"):
        compare(est, exact=True)


# --------------------------------------------------------------------------------------------
# Predictions from aggregated draws.


def test_aggregated_prediction_draws_have_the_law_of_materialised_ones():
    X, y = counts_data()
    est = MultinomialNB(**FAST, draws=4000, chains=1).fit(X, y)
    X_new = X[:5]
    aggregated = est.predict_proba_draws(X_new).values[0]  # (draw, obs, class)
    posterior = est.posterior_.draws(4000, random_seed=11)
    from bayesgen import closed_form as cf

    joint = est._family.draw_log_joint(
        est.closed_form_, cf.prediction_features(est.closed_form_, X_new), posterior.isel(chain=0)
    )
    materialised = cf.normalize_log_proba(joint)
    se = np.sqrt(aggregated.var(axis=0) / 4000 + materialised.var(axis=0) / 4000)
    assert np.abs((aggregated.mean(axis=0) - materialised.mean(axis=0)) / se).max() < 4.5
    ks = stats.ks_2samp(aggregated[:, 0, 0], materialised[:, 0, 0])
    assert ks.pvalue > 0.001


def test_aggregated_predictions_do_not_depend_on_the_batch():
    X, y = counts_data()
    est = MultinomialNB(**FAST, draws=100).fit(X, y)
    whole = est.predict_proba(X)
    np.testing.assert_array_equal(est.predict_proba(X[10:20]), whole[10:20])
    np.testing.assert_array_equal(est.predict_proba(sp.csr_array(X[::-1])), whole[::-1])


def test_conjugate_map_is_computed_on_first_access_and_kept(monkeypatch):
    from bayesgen.inference import sampling as inference

    calls = []
    real = inference.conjugate_map
    monkeypatch.setattr(inference, "conjugate_map", lambda stats: calls.append(1) or real(stats))
    X, y = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], ["ham", "ham", "spam", "spam"]
    est = bayesgen.MultinomialNB(inference="conjugate", alpha=2.0, random_seed=0).fit(X, y)
    assert calls == []  # the fit did not compute it
    xr.testing.assert_identical(est.map_, real(est.closed_form_))
    xr.testing.assert_identical(est.map_, real(est.closed_form_))
    assert calls == [1]  # once, then kept
    again = pickle.loads(pickle.dumps(est))
    xr.testing.assert_identical(again.map_, est.map_)
    assert bayesgen.MultinomialNB(inference="conjugate", compute_map=False).fit(X, y).map_ is None
