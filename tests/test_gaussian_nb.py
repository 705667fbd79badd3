"""Gaussian naive Bayes (bayesgen.families.gaussian_nb, bayesgen.GaussianNB).

x_j | y = k ~ N(μ_kj, σ²_kj) with σ²_kj ~ Inv-Gamma(a₀, b₀_j) and μ_kj | σ²_kj ~ N(m₀_j, σ²_kj/κ₀).
The expectations are written out here from X and y: scikit-learn's ``GaussianNB``, the textbook
normal–inverse-gamma update (:func:`textbook_posterior`), SciPy's densities, quadrature over μ
and σ², refits without a row, a per-row PyMC model and QDA in one dimension; never taken from
the code under test. All but the slow tests use exact conjugate draws.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize
from scipy import stats as scipy_stats
from scipy.special import gammaln, softmax
from sklearn.datasets import load_iris, load_wine
from sklearn.naive_bayes import GaussianNB as SklearnGaussianNB

import bayesgen
from bayesgen import closed_form
from bayesgen.estimators.gaussian_nb import GaussianNB
from bayesgen.families.gaussian_nb import FAMILY, GaussianNaiveBayesFamily
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma

FAST = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
#: A prior with every hyperparameter given (none resolved from the data), strong enough that a
#: wrong prior term would show: refits without a row keep it, so leave-one-out can be checked.
PRIOR = NormalInverseGamma(mean=[0.5, -0.5], kappa=0.7, shape=2.0, scale=[1.3, 0.6])
PRIOR_VALUES = {"mean": [0.5, -0.5], "kappa": 0.7, "shape": 2.0, "scale": [1.3, 0.6]}


def two_class_data(seed=0, n=(12, 8)):
    """Two classes of two real features as a DataFrame, n[0] : n[1] rows."""
    rng = np.random.default_rng(seed)
    a = rng.normal([0.0, 1.0], [1.0, 0.5], (n[0], 2))
    b = rng.normal([2.0, -1.0], [0.5, 1.5], (n[1], 2))
    X = pd.DataFrame(np.vstack([a, b]), columns=["length", "width"])
    return X, np.repeat(["setosa", "virginica"], n)


def textbook_posterior(X, y, classes, prior: dict) -> dict:
    """(m, κ, a, b) of every cell (class, feature), written from the conjugate update."""
    X = np.asarray(X, dtype=float)
    m0, k0, a0, b0 = (np.asarray(prior[key], dtype=float) for key in PRIOR_VALUES)
    cells = {"mean": [], "kappa": [], "shape": [], "scale": []}
    for label in classes:
        rows = X[np.asarray(y) == label]
        n = len(rows)
        mean = rows.mean(axis=0) if n else np.zeros(X.shape[1])
        squares = ((rows - mean) ** 2).sum(axis=0)
        kappa = k0 + n
        cells["mean"].append((k0 * m0 + n * mean) / kappa)
        cells["kappa"].append(np.full(X.shape[1], kappa))
        cells["shape"].append(np.full(X.shape[1], a0 + n / 2))
        cells["scale"].append(b0 + squares / 2 + k0 * n * (mean - m0) ** 2 / (2 * kappa))
    return {key: np.array(value) for key, value in cells.items()}


def default_prior_values(X, shape=1.5) -> dict:
    """The documented default: m₀ the overall mean, b₀ = (a₀ − 1) s², κ₀ = 0.01."""
    X = np.asarray(X, dtype=float)
    factor = shape - 1 if shape > 1 else 0.5
    return {"mean": X.mean(axis=0), "kappa": 0.01, "shape": shape, "scale": factor * X.var(axis=0)}


def scipy_log_joint(x, X, y, classes, prior: dict, class_alpha=1.0) -> np.ndarray:
    """log p(x, y = k | X, y) from SciPy's Student-t and the Dirichlet's mean."""
    post = textbook_posterior(X, y, classes, prior)
    counts = np.array([np.sum(np.asarray(y) == label) for label in classes])
    class_term = np.log((counts + class_alpha) / (counts.sum() + len(classes) * class_alpha))
    a, b, k = post["shape"], post["scale"], post["kappa"]
    density = scipy_stats.t.logpdf(
        np.asarray(x, dtype=float)[None, :],
        2 * a,
        loc=post["mean"],
        scale=np.sqrt(b * (k + 1) / (a * k)),
    )
    return class_term + density.sum(axis=1)


# --------------------------------------------------------------------------------------------
# The MLE and the closed forms.


@pytest.mark.parametrize("load", [load_iris, load_wine], ids=["iris", "wine"])
def test_mle_equals_scikit_learn_gaussian_nb_without_var_smoothing(load):
    X, y = load(return_X_y=True)
    reference = SklearnGaussianNB(var_smoothing=0).fit(X, y)
    fit = GaussianNB(**FAST).fit(X, y).closed_form_
    np.testing.assert_allclose(fit["mu_mle"].values, reference.theta_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fit["var_mle"].values, reference.var_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fit["class_prob_mle"].values, reference.class_prior_, rtol=1e-12)


def test_the_default_prior_is_centred_on_the_data_and_scaled_to_its_variance():
    X, y = two_class_data()
    for shape in (1.5, 3.0, 0.8):
        prior = None if shape == 1.5 else NormalInverseGamma(shape=shape)
        fit = GaussianNB(prior=prior, **FAST).fit(X, y).closed_form_
        expected = default_prior_values(X, shape)
        np.testing.assert_allclose(fit["prior_mean"].values, expected["mean"], rtol=1e-12)
        np.testing.assert_allclose(fit["prior_scale"].values, expected["scale"], rtol=1e-12)
        assert (fit.attrs["prior_kappa"], fit.attrs["prior_shape"]) == (0.01, shape)
    # a₀ > 1: the prior mean of σ², b₀ / (a₀ − 1), is each feature's overall variance.
    fit = GaussianNB(**FAST).fit(X, y).closed_form_
    prior_mean_variance = fit["prior_scale"].values / (fit.attrs["prior_shape"] - 1)
    np.testing.assert_allclose(prior_mean_variance, X.var(axis=0, ddof=0), rtol=1e-12)


def test_a_feature_constant_over_all_rows_needs_a_given_scale():
    X, y = two_class_data()
    X["flag"] = 3.0
    with pytest.raises(ValueError, match=r"features \['flag'\] are constant"):
        GaussianNB(**FAST).fit(X, y)
    fit = GaussianNB(prior=NormalInverseGamma(scale=0.1), **FAST).fit(X, y).closed_form_
    # Constant within each class (S = 0): the variance is the prior's, shrunk by the rows.
    a = 1.5 + np.array([12, 8]) / 2
    np.testing.assert_allclose(fit["var"].sel(feature="flag").values, 0.1 / (a - 1), rtol=1e-12)


def test_a_shape_that_leaves_no_posterior_mean_variance_is_refused():
    X, y = two_class_data(n=(1, 3))
    with pytest.raises(ValueError, match=r"prior shape: class 'setosa' has N_k = 1"):
        GaussianNB(prior=NormalInverseGamma(shape=0.4), **FAST).fit(X, y)


def test_posterior_means_sds_and_modes_follow_the_normal_inverse_gamma_update():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, inference="conjugate", random_seed=0).fit(X, y)
    post = textbook_posterior(X, y, est.classes_, PRIOR_VALUES)
    m, k, a, b = post["mean"], post["kappa"], post["shape"], post["scale"]
    expected = {
        "mean": {"mu": m, "var": b / (a - 1)},
        "sd": {"mu": np.sqrt(b / (k * (a - 1))), "var": b / ((a - 1) * np.sqrt(a - 2))},
        "mode": {"mu": m, "var": b / (a + 1.5)},  # the joint mode of (μ, σ²)
    }
    mean, sd = est.posterior_.mean(), est.posterior_.sd()
    for name in ("mu", "var"):
        np.testing.assert_allclose(
            est.closed_form_[name].values, expected["mean"][name], rtol=1e-12
        )
        np.testing.assert_allclose(mean[name].values, expected["mean"][name], rtol=1e-12)
        np.testing.assert_allclose(sd[name].values, expected["sd"][name], rtol=1e-12)
        np.testing.assert_allclose(est.map_[name].values, expected["mode"][name], rtol=1e-12)
    np.testing.assert_allclose(est.theta_, m, rtol=1e-12)
    np.testing.assert_allclose(est.var_, b / (a - 1), rtol=1e-12)


def test_credible_intervals_are_those_of_the_student_t_and_inverse_gamma_marginals():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    post = textbook_posterior(X, y, est.classes_, PRIOR_VALUES)
    m, k, a, b = post["mean"], post["kappa"], post["shape"], post["scale"]
    interval = est.posterior_.interval(0.9)
    mu = scipy_stats.t(2 * a, loc=m, scale=np.sqrt(b / (a * k)))
    var = scipy_stats.invgamma(a, scale=b)
    for name, marginal in (("mu", mu), ("var", var)):
        bounds = interval[name].transpose("bound", "class", "feature").values
        np.testing.assert_allclose(bounds, [marginal.ppf(0.05), marginal.ppf(0.95)], rtol=1e-10)


# --------------------------------------------------------------------------------------------
# The evidence, the predictive and leave-one-out.


def cell_log_density(x, mu, log_var, prior):
    """log [Π_i N(x_i | μ, σ²) N(μ | m₀, σ²/κ₀) Inv-Gamma(σ² | a₀, b₀)] + log σ², the integrand
    in (μ, log σ²), written out so that quadrature stays fast (checked against SciPy's)."""
    m0, k0, a0, b0 = prior
    n, total, squares = len(x), math.fsum(x), math.fsum(v * v for v in x)
    var = math.exp(log_var)
    log_2pi = math.log(2 * math.pi)
    rows = -0.5 * n * (log_2pi + log_var) - (squares - 2 * mu * total + n * mu * mu) / (2 * var)
    mean = -0.5 * (log_2pi + log_var - math.log(k0)) - k0 * (mu - m0) ** 2 / (2 * var)
    variance = a0 * math.log(b0) - math.lgamma(a0) - (a0 + 1) * log_var - b0 / var
    return rows + mean + variance + log_var


def quadrature_log_evidence(x, prior) -> float:
    """log ∫∫ p(x | μ, σ²) p(μ, σ²) dμ dσ² by scipy.integrate.dblquad, over (μ, log σ²)."""
    x = [float(v) for v in x]
    peak = optimize.minimize(
        lambda p: -cell_log_density(x, p[0], p[1], prior), [np.mean(x), np.log(np.var(x) + 0.1)]
    )
    (mu_hat, t_hat), log_peak = peak.x, -peak.fun
    width = lambda t: 40 * math.sqrt(math.exp(t) / (prior[1] + len(x)))  # noqa: E731
    value, _ = integrate.dblquad(
        lambda mu, t: math.exp(cell_log_density(x, mu, t, prior) - log_peak),
        t_hat - 12,
        t_hat + 25,
        lambda t: mu_hat - width(t),
        lambda t: mu_hat + width(t),
        epsabs=0,
        epsrel=1e-11,
    )
    return log_peak + math.log(value)


def test_the_quadrature_integrand_is_scipys_densities():
    x, prior = np.array([0.3, 1.2, -0.4]), (0.5, 0.7, 2.0, 1.3)
    for mu, log_var in ((0.4, 0.2), (-1.0, -2.0), (3.0, 1.5)):
        var = math.exp(log_var)
        scipy_value = (
            scipy_stats.norm.logpdf(x, mu, math.sqrt(var)).sum()
            + scipy_stats.norm.logpdf(mu, prior[0], math.sqrt(var / prior[1]))
            + scipy_stats.invgamma.logpdf(var, prior[2], scale=prior[3])
            + log_var
        )
        assert cell_log_density(list(x), mu, log_var, prior) == pytest.approx(
            scipy_value, abs=1e-12
        )


def test_the_evidence_equals_quadrature_over_mu_and_sigma2_on_tiny_data():
    X, y = two_class_data(n=(3, 4))
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    X = np.asarray(X)
    cells = 0.0
    for label in est.classes_:
        for j in range(2):
            prior = (PRIOR_VALUES["mean"][j], 0.7, 2.0, PRIOR_VALUES["scale"][j])
            cells += quadrature_log_evidence(X[y == label, j], prior)
    counts, a = np.array([3, 4]), 1.0  # the labels in order: Dirichlet(1, 1)
    labels = (
        gammaln(2 * a) - gammaln(counts.sum() + 2 * a) + (gammaln(counts + a) - gammaln(a)).sum()
    )
    assert closed_form.log_evidence(est.closed_form_) == pytest.approx(labels + cells, abs=1e-8)


def test_the_exact_predictive_is_a_student_t_per_feature():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    rows = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.0], [8.0, 5.0]])
    joint = np.stack([scipy_log_joint(x, X, y, est.classes_, PRIOR_VALUES) for x in rows])
    np.testing.assert_allclose(
        est.posterior_predictive_proba(rows), softmax(joint, axis=1), rtol=1e-10
    )
    np.testing.assert_allclose(
        est.model_.predictive_log_joint(est.closed_form_, rows), joint, rtol=1e-12
    )


def test_exact_leave_one_out_equals_refitting_without_each_row():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    X_rows = np.asarray(X)
    refits = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refits.append(scipy_log_joint(X_rows[i], X_rows[keep], y[keep], est.classes_, PRIOR_VALUES))
    refits = np.stack(refits)
    codes = np.searchsorted(est.classes_, y)
    loo = est.model_.loo_log_joint(est.closed_form_, X_rows, codes)
    np.testing.assert_allclose(loo, refits, rtol=1e-11)
    np.testing.assert_allclose(bayesgen.loo_proba(est), softmax(refits, axis=1), rtol=1e-10)


def test_predict_proba_is_the_posterior_mean_of_p_y_given_x():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, inference="conjugate", draws=200, chains=2, random_seed=1)
    est.fit(X, y)
    posterior = est.idata_["posterior"]

    def flat(name, *dims):
        values = posterior[name].transpose("chain", "draw", *dims).values
        return values.reshape(-1, *values.shape[2:])

    class_prob = flat("class_prob", "class")
    mu, var = flat("mu", "class", "feature"), flat("var", "class", "feature")
    rows = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.0]])
    joint = np.log(class_prob)[:, None, :] + scipy_stats.norm.logpdf(
        rows[None, :, None, :], mu[:, None], np.sqrt(var[:, None])
    ).sum(axis=-1)
    np.testing.assert_allclose(
        est.predict_proba(rows), softmax(joint, axis=-1).mean(axis=0), rtol=1e-9
    )
    assert est.predict(rows[:2]).tolist() == ["setosa", "virginica"]


def test_the_pointwise_log_likelihood_is_that_of_each_row_under_its_class():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, inference="conjugate", draws=50, chains=2, random_seed=2)
    est.fit(X, y)
    posterior = est.idata_["posterior"]
    codes = np.searchsorted(est.classes_, y)
    class_prob = posterior["class_prob"].transpose("chain", "draw", "class").values
    mu = posterior["mu"].transpose("chain", "draw", "class", "feature").values[:, :, codes]
    var = posterior["var"].transpose("chain", "draw", "class", "feature").values[:, :, codes]
    expected = np.log(class_prob[:, :, codes]) + scipy_stats.norm.logpdf(
        np.asarray(X), mu, np.sqrt(var)
    ).sum(axis=-1)
    log_likelihood = est.idata_["log_likelihood"]["y"].transpose("chain", "draw", "obs").values
    np.testing.assert_allclose(log_likelihood, expected, rtol=1e-10)


def test_plug_in_probabilities_are_the_normal_densities_at_the_posterior_means():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    fit = est.closed_form_
    rows = np.array([[0.0, 1.0], [2.0, -1.0]])
    joint = np.log(fit["class_prob"].values) + scipy_stats.norm.logpdf(
        rows[:, None, :], fit["mu"].values, np.sqrt(fit["var"].values)
    ).sum(axis=-1)
    np.testing.assert_allclose(
        closed_form.predict_proba(fit, rows), softmax(joint, axis=1), rtol=1e-10
    )


def test_one_feature_is_qda_in_one_dimension_under_the_matching_default_prior():
    # NormalInverseWishart() in one dimension: ν₀ = 3, Ψ₀ = s², i.e. a₀ = 1.5, b₀ = s² / 2.
    X, y = two_class_data()
    X = X[["length"]]
    ours = GaussianNB(**FAST).fit(X, y)
    qda = bayesgen.QuadraticDiscriminantAnalysis(**FAST).fit(X, y)
    np.testing.assert_allclose(ours.theta_, qda.means_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, qda.covariance_[:, :, 0], rtol=1e-12)
    assert closed_form.log_evidence(ours.closed_form_) == pytest.approx(
        closed_form.log_evidence(qda.closed_form_), rel=1e-12
    )
    np.testing.assert_allclose(bayesgen.loo_proba(ours), bayesgen.loo_proba(qda), rtol=1e-10)


# --------------------------------------------------------------------------------------------
# Statistics that merge.


def test_partial_fit_on_chunks_equals_one_fit():
    X, y = two_class_data()
    whole = GaussianNB(**FAST).fit(X, y)
    chunks = GaussianNB(**FAST)
    chunks.partial_fit(X[:5], y[:5], classes=["setosa", "virginica"])  # setosa only
    chunks.partial_fit(X[5:14], y[5:14]).partial_fit(X[14:], y[14:])
    names = ["class_count", "class_mean", "sum_squares", "mu", "var", "prior_scale"]
    for name in names:
        np.testing.assert_allclose(
            chunks.closed_form_[name].values, whole.closed_form_[name].values, rtol=1e-12
        )


def test_integer_sample_weights_equal_repeated_rows():
    X, y = two_class_data()
    weights = np.arange(len(y)) % 3  # 0, 1 and 2: dropped, once, twice
    weighted = GaussianNB(**FAST).fit(X, y, sample_weight=weights).closed_form_
    repeated = GaussianNB(**FAST).fit(X.loc[X.index.repeat(weights)], np.repeat(y, weights))
    for name in ("class_count", "class_mean", "sum_squares", "mu", "var", "prior_mean"):
        np.testing.assert_allclose(
            weighted[name].values, repeated.closed_form_[name].values, rtol=1e-12, atol=1e-14
        )


def test_a_class_without_rows_keeps_the_prior():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, **FAST)
    est.partial_fit(X, y, classes=["other", "setosa", "virginica"])
    fit = est.closed_form_.sel({"class": "other"})
    np.testing.assert_allclose(fit["mu"].values, PRIOR_VALUES["mean"], rtol=1e-12)
    np.testing.assert_allclose(fit["var"].values, np.array(PRIOR_VALUES["scale"]) / 1.0, rtol=1e-12)
    assert np.isnan(fit["mu_mle"].values).all() and np.isnan(fit["var_mle"].values).all()


# --------------------------------------------------------------------------------------------
# compare(), SBC, saving and loading.


def test_compare_agrees_with_exact_draws_in_49_of_50_seeds():
    X, y = two_class_data()
    failed = []
    for seed in range(50):
        est = GaussianNB(prior=PRIOR, inference="conjugate", draws=500, chains=2, random_seed=seed)
        result = bayesgen.compare(est.fit(X, y))
        if not result.ok:
            failed.append(seed)
    assert len(failed) <= 1, failed
    assert set(result.table["variable"]) == {"class_prob", "mu", "var"}


def _wrong_draws(monkeypatch, variable: str, how: str):
    """Posterior draws of ``variable`` with their mean moved by one posterior SD, or with
    their spread about their mean halved (the prior's draws stay right)."""
    exact = GaussianNaiveBayesFamily.conjugate_draws

    def wrong(self, estimates, rng, sample_shape, dtype, *, posterior):
        draws = exact(self, estimates, rng, sample_shape, dtype, posterior=posterior)
        if posterior:
            dims, values = draws[variable]
            sample_axes = tuple(range(len(sample_shape)))
            mean, sd = values.mean(axis=sample_axes), values.std(axis=sample_axes)
            moved = values + sd if how == "shift" else mean + 0.5 * (values - mean)
            draws[variable] = (dims, moved.astype(dtype))
        return draws

    monkeypatch.setattr(GaussianNaiveBayesFamily, "conjugate_draws", wrong)


@pytest.mark.parametrize("how", ["shift", "halve"])
@pytest.mark.parametrize("variable", ["mu", "var"])
def test_compare_fails_a_wrong_posterior(monkeypatch, variable, how):
    X, y = two_class_data()
    _wrong_draws(monkeypatch, variable, how)
    est = GaussianNB(prior=PRIOR, inference="conjugate", draws=500, chains=2, random_seed=0)
    result = bayesgen.compare(est.fit(X, y))
    assert not result.agrees
    rows = result.table.set_index("variable")["agrees"]
    assert not rows[variable].any() and rows["class_prob"].all()


def test_sbc_refits_under_the_prior_this_fit_resolved():
    # SBC draws the truth from the fit's prior and refits each simulated data set under the
    # same prior, not one rescaled to the simulated data: the block says what it resolved.
    X, y = two_class_data()
    est = GaussianNB(**FAST).fit(X, y)
    frozen = est.model_.fitted_prior(est.closed_form_, est.get_params())["prior"]
    fitted = est.closed_form_
    np.testing.assert_array_equal(frozen.mean, fitted["prior_mean"].values)
    np.testing.assert_array_equal(frozen.scale, fitted["prior_scale"].values)
    assert (frozen.kappa, frozen.shape) == (
        fitted.attrs["prior_kappa"],
        fitted.attrs["prior_shape"],
    )


def test_sbc_finds_the_conjugate_posterior_calibrated():
    X, y = two_class_data()
    est = GaussianNB(**FAST).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert result.ok, str(result)
    assert set(result.p_values.index) == {"class_prob", "mu", "var"}


def test_sbc_fails_a_25_fold_prior_mismatch(monkeypatch):
    """The true parameters come from a prior whose scale b₀ is 25 times the fit's."""
    exact = GaussianNaiveBayesFamily.conjugate_draws

    def mismatched(self, estimates, rng, sample_shape, dtype, *, posterior):
        if not posterior:
            estimates = estimates.assign(prior_scale=estimates["prior_scale"] * 25.0)
        return exact(self, estimates, rng, sample_shape, dtype, posterior=posterior)

    monkeypatch.setattr(GaussianNaiveBayesFamily, "conjugate_draws", mismatched)
    X, y = two_class_data()
    est = GaussianNB(**FAST).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert not result.ok
    assert result.p_values["var"] < result.level


def test_a_saved_model_loads_and_predicts_the_same(tmp_path):
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, inference="conjugate", draws=100, random_seed=0).fit(X, y)
    loaded = bayesgen.load(est.save(tmp_path / "gaussian.nc"))
    assert type(loaded) is GaussianNB and loaded.model_ is FAMILY
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(loaded.theta_, est.theta_)
    prior = loaded.get_params()["prior"]
    assert isinstance(prior, NormalInverseGamma)
    for field, value in PRIOR_VALUES.items():
        np.testing.assert_array_equal(getattr(prior, field), value)


def test_the_block_is_registered_and_its_estimator_public():
    from bayesgen.estimators.loading import ESTIMATORS
    from bayesgen.families import family

    assert family("gaussian_nb") is FAMILY and bayesgen.GaussianNB is GaussianNB
    assert GaussianNB in ESTIMATORS
    assert list(FAMILY.parameters) == ["class_prob", "mu", "var"]


# --------------------------------------------------------------------------------------------
# The PyMC model.


def per_row_model(X, y_codes, fit):
    """The textbook model on the rows: x_ij ~ N(μ_{y_i} j, σ²_{y_i} j)."""
    import pymc as pm

    with pm.Model() as model:
        class_prob = pm.Dirichlet("class_prob", a=np.ones(2))
        pm.Categorical("y", p=class_prob, observed=y_codes)
        var = pm.InverseGamma(
            "var", alpha=fit.attrs["prior_shape"], beta=fit["prior_scale"].values, shape=(2, 2)
        )
        mu = pm.Normal(
            "mu", mu=fit["prior_mean"].values, sigma=pm.math.sqrt(var / fit.attrs["prior_kappa"])
        )
        pm.Normal("x", mu=mu[y_codes], sigma=pm.math.sqrt(var[y_codes]), observed=X)
    return model


def test_the_pymc_model_on_statistics_has_the_per_row_models_posterior():
    """By the factorisation theorem the two log densities differ by a constant."""
    X, y = two_class_data(n=(6, 5))
    X = np.array(X)
    X[y == "setosa", 1] = 0.25  # constant within a class: S = 0 has no Gamma density
    fit = GaussianNB(prior=PRIOR, **FAST).fit(X, y).closed_form_
    codes = np.searchsorted(fit["class"].values, y)
    statistics_model = FAMILY.pymc_model(fit)
    rows_model = per_row_model(X, codes, fit)
    logps = [model.compile_logp(jacobian=False) for model in (statistics_model, rows_model)]
    # π stays at each model's start (its terms are then constants); μ and σ² move.
    starts = [model.initial_point() for model in (statistics_model, rows_model)]
    rng = np.random.default_rng(0)
    differences = []
    for _ in range(4):
        moved = {"mu": rng.normal(size=(2, 2)), "var_log__": rng.normal(size=(2, 2))}
        values = [logp({**start, **moved}) for logp, start in zip(logps, starts, strict=True)]
        differences.append(values[0] - values[1])
    np.testing.assert_allclose(differences, differences[0], rtol=0, atol=1e-9)
    observed = {rv.name for rv in statistics_model.observed_RVs}
    assert observed == {"class_count", "class_mean", "sum_squares"}


@pytest.mark.slow
def test_nuts_on_the_pymc_model_agrees_with_the_closed_forms():
    X, y = two_class_data()
    est = GaussianNB(prior=PRIOR, draws=1000, tune=1000, chains=2, random_seed=0, progressbar=False)
    result = bayesgen.compare(est.fit(X, y))
    assert result.ok, str(result)
