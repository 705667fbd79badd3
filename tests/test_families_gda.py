"""The GDA family (bayesgen.families.gda).

Two kinds of test. The "same as the code it replaces" tests compare the family with
``closed_form.gda``, ``inference`` and ``generative.gda_model`` bit for bit while both exist
(they go once the old code is deleted). The others check the family against the
normal-inverse-Wishart formulas, written out again here from X and y, and against SciPy's
multivariate normal density. Nothing here samples with NUTS or compiles a PyMC graph.
"""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import DATA, GDA_PRIOR
from scipy import stats as scipy_stats
from scipy.special import softmax
from sklearn.datasets import load_wine

from bayesgen import closed_form as cf
from bayesgen.families.gda import FAMILY

WINE_FEATURES = ["alcohol", "flavanoids", "hue", "proline"]  # scales from ~1 to ~10³


def wine_data():
    """Three classes, four features on very different scales."""
    frame = load_wine(as_frame=True)
    return frame.data[WINE_FEATURES], np.array(["barolo", "grignolino", "barbera"])[frame.target]


DATASETS = {"two_classes": DATA["gda"], "three_classes": wine_data}
PRIORS = {
    "default": cf.NormalInverseWishart(),
    "informative": cf.NormalInverseWishart(**GDA_PRIOR),
    "none": None,
}


def prior_for(data_name, prior_name):
    # GDA_PRIOR is written for the three features of the two-class data.
    if prior_name == "informative" and data_name != "two_classes":
        return cf.NormalInverseWishart(kappa=0.5, dof=7.0)
    return PRIORS[prior_name]


@pytest.fixture(params=list(DATASETS))
def data(request):
    X, y = DATASETS[request.param]()
    return request.param, X, y


@pytest.fixture
def stats(data):
    _, X, y = data
    return FAMILY.fit(X, y, prior=cf.NormalInverseWishart(kappa=0.5, dof=7.0), class_alpha=2.0)


# --------------------------------------------------------------------------------------------
# The PyMC model's options.


def test_pymc_model_refuses_an_unknown_cov_prior(stats):
    with pytest.raises(ValueError, match="cov_prior: expected 'conjugate' or 'lkj'; got 'wishart'"):
        FAMILY.pymc_model(stats, cov_prior="wishart")


def test_pymc_model_needs_the_prior_hyperparameters():
    X, y = DATA["gda"]()
    with pytest.raises(ValueError, match=r"needs the prior hyperparameters.*not prior=None"):
        FAMILY.pymc_model(FAMILY.fit(X, y, prior=None))


# --------------------------------------------------------------------------------------------
# Independent checks: the formulas written out again from X and y.


def niw_by_hand(X, y, *, mean, kappa, dof, scale):
    """Class labels, counts N_k, and the posterior m_k, κ_k, ν_N, Ψ_N, one class at a time."""
    X = np.asarray(X, dtype=float)
    labels = np.unique(y)
    m0, psi0 = np.asarray(mean, dtype=float), np.asarray(scale, dtype=float)
    counts, means, kappas = [], [], []
    psi = psi0.copy()
    for label in labels:
        rows = X[y == label]
        n_k, xbar = len(rows), rows.mean(axis=0)
        counts.append(n_k)
        kappas.append(kappa + n_k)
        means.append((kappa * m0 + n_k * xbar) / (kappa + n_k))
        psi += (rows - xbar).T @ (rows - xbar)
        psi += kappa * n_k / (kappa + n_k) * np.outer(xbar - m0, xbar - m0)
    return labels, np.array(counts), np.array(means), np.array(kappas), dof + len(y), psi


def test_posterior_means_are_the_normal_inverse_wishart_formulas():
    X, y = DATA["gda"]()
    estimates = FAMILY.fit(X, y, prior=cf.NormalInverseWishart(**GDA_PRIOR), class_alpha=2.0)
    labels, counts, means, _, dof_n, psi_n = niw_by_hand(X, y, **GDA_PRIOR)
    n_features = X.shape[1]
    np.testing.assert_array_equal(estimates["class"].values, labels)
    np.testing.assert_allclose(estimates["class_prob"].values, (counts + 2.0) / (len(y) + 4.0))
    np.testing.assert_allclose(estimates["mu"].values, means, rtol=1e-12)
    np.testing.assert_allclose(
        estimates["cov"].values, psi_n / (dof_n - n_features - 1), rtol=1e-12
    )


def test_conjugate_mode_is_psi_over_nu_plus_d_plus_1_plus_k():
    X, y = wine_data()
    prior = {"mean": [13.0, 2.0, 1.0, 700.0], "kappa": 0.5, "dof": 7.0}
    prior["scale"] = np.diag([0.6, 1.0, 0.05, 1e5])
    estimates = FAMILY.fit(X, y, prior=cf.NormalInverseWishart(**prior), class_alpha=3.0)
    _, counts, means, _, dof_n, psi_n = niw_by_hand(X, y, **prior)
    mode = FAMILY.conjugate_mode(estimates)
    n_classes, n_features = 3, 4
    np.testing.assert_allclose(mode["mu"][1], means, rtol=1e-12)
    np.testing.assert_allclose(
        mode["cov"][1], psi_n / (dof_n + n_features + 1 + n_classes), rtol=1e-12
    )
    # Dirichlet(N_k + 3) mode: (N_k + 2) / (N + 3 · 2).
    np.testing.assert_allclose(mode["class_prob"][1], (counts + 2.0) / (len(y) + 6.0))
    assert mode["coef"][0] == ("class", "feature") and mode["intercept"][0] == ("class",)


def test_class_prob_mode_is_nan_where_the_dirichlet_has_none():
    X, y = DATA["gda"]()
    estimates = FAMILY.fit(X, y, class_alpha=0.5)
    assert np.all(np.isfinite(FAMILY.conjugate_mode(estimates)["class_prob"][1]))
    # An empty class with α = 0.5 < 1 makes the density unbounded at π_0 = 0: no mode.
    estimates["class_count"] = (("class",), np.array([0.0, 40.0]))
    assert np.all(np.isnan(FAMILY.conjugate_mode(estimates)["class_prob"][1]))


def test_parameter_dims_follow_the_number_of_classes():
    two = FAMILY.fit(*DATA["gda"]())
    three = FAMILY.fit(*wine_data())
    assert FAMILY.parameter_dims(two)["coef"] == ("feature",)
    assert FAMILY.parameter_dims(two)["intercept"] == ()
    assert FAMILY.parameter_dims(three) == FAMILY.parameters
    for estimates in (two, three):
        for name, dims in FAMILY.parameter_dims(estimates).items():
            assert estimates[name].dims == dims
        for name, dims in FAMILY.statistics.items():
            assert estimates[name].dims == dims


def test_map_problem_restores_the_standardised_mode_to_the_original_one(stats):
    scaled, restore = FAMILY.map_problem(stats)
    # Standardised features: every pooled within-class variance is 1.
    np.testing.assert_allclose(np.diag(scaled["scatter"].values), stats.attrs["n_samples"])
    mode = FAMILY.conjugate_mode(scaled)
    point = xr.Dataset(mode, coords={"class": stats["class"], "feature": stats["feature"]})
    restored = restore(point)
    for name, (dims, values) in FAMILY.conjugate_mode(stats).items():
        assert restored[name].dims == dims
        np.testing.assert_allclose(restored[name].values, values, rtol=1e-9, atol=1e-12)


def test_draw_log_joint_gives_the_gaussian_class_posterior(stats, data):
    _, X, _ = data
    rng = np.random.default_rng(0)
    draws = FAMILY.conjugate_draws(stats, rng, (3,), "float64", posterior=True)
    dataset = xr.Dataset({name: (("draw", *dims), draw) for name, (dims, draw) in draws.items()})
    checked = FAMILY.prediction_features(stats, X)
    proba = softmax(FAMILY.draw_log_joint(stats, checked, dataset), axis=-1)
    X = np.asarray(X, dtype=float)
    for draw in range(3):
        class_prob, mu, cov = (draws[name][1][draw] for name in ("class_prob", "mu", "cov"))
        joint = np.stack(
            [
                scipy_stats.multivariate_normal(mu[k], cov).logpdf(X) + np.log(class_prob[k])
                for k in range(len(class_prob))
            ],
            axis=-1,
        )
        np.testing.assert_allclose(proba[draw], softmax(joint, axis=-1), rtol=1e-9, atol=1e-12)


def test_conjugate_draws_average_to_the_posterior_means():
    X, y = DATA["gda"]()
    estimates = FAMILY.fit(X, y, prior=cf.NormalInverseWishart(**GDA_PRIOR))
    draws = FAMILY.conjugate_draws(
        estimates, np.random.default_rng(1), (4000,), "float64", posterior=True
    )
    for name in ("class_prob", "mu", "cov"):
        values = draws[name][1]
        error = values.std(axis=0) / np.sqrt(len(values))
        assert np.all(np.abs(values.mean(axis=0) - estimates[name].values) < 5 * error), name


def test_plug_in_log_joint_gives_the_gaussian_class_posterior():
    X, y = wine_data()
    estimates = FAMILY.fit(X, y, prior=None, class_alpha=0.0)
    checked = FAMILY.prediction_features(estimates, X)
    joint, order = FAMILY.plug_in_log_joint(estimates, checked)
    assert order is None
    mu, cov = estimates["mu"].values, estimates["cov"].values
    _, counts, *_ = niw_by_hand(X, y, mean=np.zeros(4), kappa=1.0, dof=5.0, scale=np.eye(4))
    expected = np.stack(
        [
            scipy_stats.multivariate_normal(mu[k], cov).logpdf(np.asarray(X, dtype=float))
            + np.log(counts[k] / len(y))
            for k in range(3)
        ],
        axis=-1,
    )
    np.testing.assert_allclose(softmax(joint, axis=-1), softmax(expected, axis=-1), atol=1e-10)


def test_fit_does_not_modify_its_inputs():
    X, y = wine_data()
    X_before, y_before = X.copy(), y.copy()
    FAMILY.fit(X, y)
    pd.testing.assert_frame_equal(X, X_before)
    np.testing.assert_array_equal(y, y_before)
