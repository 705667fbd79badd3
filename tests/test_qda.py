"""Quadratic discriminant analysis (bayesgen.families.qda), added through the family interface.

The expectations are written out here from X and y (the per-class normal-inverse-Wishart
formulas, SciPy's densities, scikit-learn's QDA), never taken from the code under test. All
but one test use exact conjugate draws; one small NUTS fit checks the PyMC model.
"""

import numpy as np
import pandas as pd
import pytest
import sklearn
from scipy import stats as scipy_stats
from scipy.special import softmax
from sklearn.datasets import load_wine
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SklearnQDA
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.cli import main
from bayesgen.families import family

PRIOR = {
    "mean": [0.5, -0.5],
    "kappa": 0.5,
    "dof": 6.0,
    "scale": [[2.0, 0.3], [0.3, 1.0]],
}
FAST = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}


def two_class_data(seed=0):
    """Two classes with different covariances, 30 : 20 rows, as a DataFrame."""
    rng = np.random.default_rng(seed)
    a = rng.normal([0.0, 0.0], [1.0, 0.5], (30, 2))
    b = rng.normal([2.0, 1.0], [0.5, 1.5], (20, 2))
    X = pd.DataFrame(np.vstack([a, b]), columns=["length", "width"])
    return X, np.repeat(["setosa", "virginica"], [30, 20])


def niw_by_hand(X, y, prior):
    """(m_k, κ_k, ν_k, Ψ_k) of every class, written from the textbook update."""
    X = np.asarray(X, dtype=float)
    m0, k0, v0, psi0 = (np.asarray(prior[key], dtype=float) for key in PRIOR)
    out = []
    for label in np.unique(y):
        rows = X[y == label]
        n, mean = len(rows), rows.mean(axis=0)
        scatter = (rows - mean).T @ (rows - mean)
        kappa = k0 + n
        offset = mean - m0
        out.append(
            {
                "mean": (k0 * m0 + n * mean) / kappa,
                "kappa": kappa,
                "dof": v0 + n,
                "scale": psi0 + scatter + k0 * n / kappa * np.outer(offset, offset),
            }
        )
    return out


# --------------------------------------------------------------------------------------------
# Closed forms.


def test_mle_equals_scikit_learn_qda():
    X, y = load_wine(return_X_y=True)
    stats = cf.qda(X, y, prior=None, class_alpha=0)
    reference = SklearnQDA(reg_param=0, store_covariance=True).fit(X, y)
    count = stats["class_count"].values
    np.testing.assert_allclose(stats["mu"].values, reference.means_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(stats["class_prob"].values, reference.priors_, rtol=0, atol=1e-12)
    # scikit-learn divided the scatter by n_k − 1 before 1.9 and by n_k (the MLE) since.
    ddof = 0 if tuple(map(int, sklearn.__version__.split(".")[:2])) >= (1, 9) else 1
    for k in range(len(count)):
        expected = np.asarray(reference.covariance_[k])
        ours = stats["cov_mle"].values[k] * count[k] / (count[k] - ddof)
        np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    if ddof == 0:  # the same Gaussians: the same probabilities
        np.testing.assert_allclose(
            cf.predict_proba(stats, X), reference.predict_proba(X), rtol=0, atol=1e-10
        )


def test_class_with_no_more_samples_than_features_is_refused_without_prior():
    X, y = two_class_data()
    X, y = X.iloc[:32], y[:32].copy()
    y[30:] = "virginica"
    y[[0]] = "tiny"  # class "tiny" has 1 row, "virginica" 2: both ≤ D = 2
    with pytest.raises(ValueError, match=r"class 'tiny' has 1 samples for 2 features.*prior="):
        cf.qda(X, y, prior=None)
    stats = cf.qda(X, y)  # the default prior serves every class
    assert np.all(np.linalg.eigvalsh(stats["cov"].values) > 0)


def test_feature_constant_within_a_class_is_refused_without_prior():
    X, y = two_class_data()
    X.loc[y == "virginica", "width"] = 3.0
    with pytest.raises(ValueError, match=r"class 'virginica' is singular.*\['width'\]"):
        cf.qda(X, y, prior=None)


def test_prior_dof_too_small_for_a_class_mean_covariance_is_refused():
    X, y = two_class_data()
    y = y.copy()
    y[0] = "single"
    with pytest.raises(ValueError, match=r"prior dof: class 'single' has N_k = 1"):
        cf.qda(X, y, prior=cf.NormalInverseWishart(dof=1.5))


def test_posterior_means_follow_the_per_class_niw_update():
    X, y = two_class_data()
    stats = cf.qda(X, y, class_alpha=2.0, prior=cf.NormalInverseWishart(**PRIOR))
    count = np.array([30.0, 20.0])
    np.testing.assert_allclose(stats["class_prob"].values, (count + 2) / (50 + 4), rtol=1e-14)
    for k, post in enumerate(niw_by_hand(X, y, PRIOR)):
        np.testing.assert_allclose(stats["mu"].values[k], post["mean"], rtol=1e-12)
        expected_cov = post["scale"] / (post["dof"] - 2 - 1)
        np.testing.assert_allclose(stats["cov"].values[k], expected_cov, rtol=1e-12)
    assert stats["cov"].dims == ("class", "feature", "feature2")
    assert stats.attrs["model"] == "qda" and stats.attrs["prior_dof"] == 6.0


def test_plug_in_probabilities_are_the_gaussian_densities():
    X, y = two_class_data()
    stats = cf.qda(X, y, prior=cf.NormalInverseWishart(**PRIOR))
    pi, mu, cov = (stats[name].values for name in ("class_prob", "mu", "cov"))
    joint = np.column_stack(
        [scipy_stats.multivariate_normal.logpdf(X, mu[k], cov[k]) + np.log(pi[k]) for k in range(2)]
    )
    np.testing.assert_allclose(cf.predict_proba(stats, X), softmax(joint, axis=1), atol=1e-12)


def test_posterior_predictive_is_the_per_class_student_t():
    X, y = two_class_data()
    stats = cf.qda(X, y, prior=cf.NormalInverseWishart(**PRIOR))
    log_pi = np.log(stats["class_prob"].values)
    columns = []
    for k, post in enumerate(niw_by_hand(X, y, PRIOR)):
        dof = post["dof"] - 2 + 1
        shape = post["scale"] * (post["kappa"] + 1) / (post["kappa"] * dof)
        columns.append(
            scipy_stats.multivariate_t.logpdf(X, loc=post["mean"], shape=shape, df=dof) + log_pi[k]
        )
    expected = softmax(np.column_stack(columns), axis=1)
    np.testing.assert_allclose(cf.posterior_predictive_proba(stats, X), expected, atol=1e-12)
    est = bayesgen.QuadraticDiscriminantAnalysis(prior=cf.NormalInverseWishart(**PRIOR), **FAST)
    np.testing.assert_allclose(est.fit(X, y).posterior_predictive_proba(X), expected, atol=1e-12)


# --------------------------------------------------------------------------------------------
# The exact conjugate posterior.


def test_conjugate_draws_have_the_closed_form_means():
    X, y = two_class_data()
    est = bayesgen.QuadraticDiscriminantAnalysis(
        prior=cf.NormalInverseWishart(**PRIOR), draws=4000, chains=1, **FAST
    ).fit(X, y)
    posterior = est.idata_["posterior"]
    for name in ("mu", "cov"):
        draws = posterior[name].values.reshape(4000, *posterior[name].shape[2:])
        error = draws.std(axis=0) / np.sqrt(4000)
        expected = est.closed_form_[name].values
        assert np.all(np.abs(draws.mean(axis=0) - expected) < 4.5 * error), name
    # A conjugate fit's point attributes are the exact posterior means, not the draws' means.
    np.testing.assert_allclose(est.means_, est.closed_form_["mu"].values, rtol=1e-12)
    assert est.covariance_.shape == (2, 2, 2)


def test_prior_draws_follow_the_prior():
    X, y = two_class_data()
    prior = {**PRIOR, "dof": 12.0}
    est = bayesgen.QuadraticDiscriminantAnalysis(
        prior=cf.NormalInverseWishart(**prior),
        inference="conjugate",
        compute_map=False,
        draws=10,
        prior_draws=4000,
        random_seed=1,
    ).fit(X, y)
    cov = est.idata_["prior"]["cov"].values[0]  # (draw, class, feature, feature2)
    expected = np.array(prior["scale"]) / (12.0 - 2 - 1)
    error = cov.std(axis=0) / np.sqrt(4000)
    assert np.all(np.abs(cov.mean(axis=0) - expected) < 4.5 * error)


def _niw_log_density(mu, cov, post):
    return scipy_stats.invwishart.logpdf(
        cov, df=post["dof"], scale=post["scale"]
    ) + scipy_stats.multivariate_normal.logpdf(mu, post["mean"], cov / post["kappa"])


def test_conjugate_map_is_the_joint_mode_of_each_class():
    X, y = two_class_data()
    est = bayesgen.QuadraticDiscriminantAnalysis(
        prior=cf.NormalInverseWishart(**PRIOR), inference="conjugate", draws=10, random_seed=0
    ).fit(X, y)
    rng = np.random.default_rng(0)
    for k, post in enumerate(niw_by_hand(X, y, PRIOR)):
        mu, cov = est.map_["mu"].values[k], est.map_["cov"].values[k]
        np.testing.assert_allclose(cov, post["scale"] / (post["dof"] + 2 + 2), rtol=1e-12)
        best = _niw_log_density(mu, cov, post)
        for _ in range(20):  # every nearby point has a lower density
            bump = rng.normal(size=(2, 2)) * 1e-3
            nearby_cov = cov + bump @ bump.T + (bump + bump.T) * 0.1
            nearby_mu = mu + rng.normal(size=2) * 1e-3
            assert _niw_log_density(nearby_mu, nearby_cov, post) < best


def test_compare_agrees_for_conjugate_draws_of_wine():
    X, y = load_wine(return_X_y=True)
    est = bayesgen.QuadraticDiscriminantAnalysis(inference="conjugate", random_seed=0).fit(X, y)
    comparison = bayesgen.compare(est)
    assert comparison.ok, comparison.warnings
    assert set(comparison.table["variable"]) == {"class_prob", "mu", "cov"}


# --------------------------------------------------------------------------------------------
# Files, the command line and scikit-learn.


def test_saved_model_loads_and_predicts_the_same(tmp_path):
    X, y = two_class_data()
    est = bayesgen.QuadraticDiscriminantAnalysis(
        prior=cf.NormalInverseWishart(**PRIOR), draws=50, **{**FAST, "compute_map": True}
    ).fit(X, y)
    est.save(tmp_path / "qda.nc")
    loaded = bayesgen.load(tmp_path / "qda.nc")
    assert type(loaded) is bayesgen.QuadraticDiscriminantAnalysis
    assert loaded.prior == est.prior
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(loaded.covariance_, est.covariance_)


def test_cli_fits_qda(tmp_path, capsys):
    X, y = two_class_data()
    path = tmp_path / "flowers.csv"
    X.assign(label=y).to_csv(path, index=False)
    model = tmp_path / "flowers-qda.nc"
    argv = ["fit", "qda", str(path), "--target", "label", "--inference", "conjugate"]
    assert main([*argv, "--draws", "100", "--output", str(model), "--quiet"]) == 0
    assert (
        "QuadraticDiscriminantAnalysis, 50 rows, 2 classes, 2 features" in capsys.readouterr().out
    )
    assert bayesgen.load(model).closed_form_.attrs["model"] == "qda"


@parametrize_with_checks([bayesgen.QuadraticDiscriminantAnalysis(draws=100, **FAST)])
def test_scikit_learn_estimator_check(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------------------------
# The PyMC model.


@pytest.mark.filterwarnings("ignore:NUTS")  # 300 draws on purpose: a small, fast fit
def test_nuts_posterior_means_match_the_closed_form():
    X, y = two_class_data()
    est = bayesgen.QuadraticDiscriminantAnalysis(
        inference="nuts",
        tune=300,
        draws=300,
        chains=1,
        prior_draws=0,
        compute_map=False,
        random_seed=1,
    ).fit(X, y)
    posterior = est.idata_["posterior"]
    assert set(family("qda").parameters) <= set(posterior.data_vars)
    for name in ("mu", "cov"):
        draws = posterior[name].values[0]
        # 300 NUTS draws hold at least 100 effective ones here.
        error = draws.std(axis=0) / np.sqrt(100)
        assert np.all(np.abs(draws.mean(axis=0) - est.closed_form_[name].values) < 4 * error)
