"""The power and the calibration of bayesgen.compare: it rejects wrong posteriors and accepts
right ones.

Wrong posteriors are built by replacing the draws of a conjugate fit (no PyMC compilation):
the right mean with half or double the spread, a mean shifted by 6 Monte Carlo errors,
a doubled ``coef`` and an ``intercept`` off by 5. A right posterior must pass at the default
settings (2 chains × 1000 draws) for at least 49 of 50 seeds. Every closed form the check
uses for a spread or for the linear form is written out here again and verified by Monte
Carlo with SciPy's samplers.
"""

import copy

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from scipy.special import digamma, ndtri

from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
    compare,
)
from bayesgen.cli import main

CONJUGATE = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "chains": 2}


# --------------------------------------------------------------------------------------------
# Data and fits.


def count_data(n_features=12, n=45, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    rates = rng.gamma(1.0, 1.5, size=(3, n_features))
    return rng.poisson(rates[y]).astype(float), y


def binary_data(n_features=10, n=45, seed=1):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    prob = rng.beta(1.0, 2.0, size=(3, n_features))
    return (rng.random((n, n_features)) < prob[y]).astype(float), y


def sparse_count_data(n_features=300, n=40, seed=30):
    """Two classes of 20-token documents from permuted Zipf word distributions."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    zipf = 1.0 / np.arange(1, n_features + 1)
    probs = np.stack([rng.permutation(zipf), rng.permutation(zipf)])
    probs /= probs.sum(axis=1, keepdims=True)
    return np.stack([rng.multinomial(20, probs[k]) for k in y]).astype(float), y


def sparse_binary_data(n_features=200, n=40, seed=31):
    """Two classes of mostly rare binary features (presence probabilities ~ Beta(0.2, 5))."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    prob = rng.beta(0.2, 5.0, size=(2, n_features))
    return (rng.random((n, n_features)) < prob[y]).astype(float), y


def categorical_data(n_features=6, n=45, seed=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    return rng.integers(0, 4, size=(n, n_features)), y


def gaussian_data(n_classes=2, n_features=3, n=60, seed=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, n_features)) @ np.triu(np.full((n_features, n_features), 0.3), 1)
    X += rng.normal(size=(n, n_features)) + y[:, None] * np.linspace(1.0, -1.0, n_features)
    return X, y


def fit(cls, data, seed=0, **params):
    return cls(random_seed=seed, **CONJUGATE, **params).fit(*data)


@pytest.fixture(scope="module")
def multinomial():
    return fit(MultinomialNB, count_data())


@pytest.fixture(scope="module")
def bernoulli():
    return fit(BernoulliNB, binary_data())


@pytest.fixture(scope="module")
def categorical():
    return fit(CategoricalNB, categorical_data())


@pytest.fixture(scope="module")
def gda():
    return fit(GaussianDiscriminantAnalysis, gaussian_data())


@pytest.fixture(scope="module")
def gda3():
    return fit(GaussianDiscriminantAnalysis, gaussian_data(n_classes=3))


def with_posterior(est, **variables):
    """A copy of ``est`` whose posterior draws of ``variables`` are replaced."""
    wrong = copy.copy(est)
    wrong.idata_ = est.idata_.copy()
    posterior = est.idata_["posterior"].to_dataset()
    wrong.idata_["posterior"] = posterior.assign(
        {name: (posterior[name].dims, values) for name, values in variables.items()}
    )
    return wrong


def rows(result, variable):
    return result.table[result.table["variable"] == variable]


def dirichlet_draws(concentration, seed, shape=(2, 1000)):
    """Dirichlet draws along the last axis by normalised Gamma variates (0 where a = 0)."""
    rng = np.random.default_rng(seed)
    gamma = rng.standard_gamma(
        np.where(concentration > 0, concentration, 1.0), size=(*shape, *concentration.shape)
    )
    gamma = np.where(concentration > 0, gamma, 0.0)
    return gamma / gamma.sum(axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------------
# Closed forms, written out again, and verified by Monte Carlo.


def dirichlet_sd(a):
    a0 = a.sum(axis=-1, keepdims=True)
    return np.sqrt(a * (a0 - a) / (a0**2 * (a0 + 1)))


def niw_posterior(X, y, est):
    """(m_k, κ_k, ν_N, Ψ_N) from X, y and the fitted prior (GDA shares Σ across classes)."""
    stats_ = est.closed_form_
    m0, psi0 = stats_["prior_mean"].values, stats_["prior_scale"].values
    k0, nu0 = stats_.attrs["prior_kappa"], stats_.attrs["prior_dof"]
    classes = np.unique(y)
    n_k = np.array([np.sum(y == k) for k in classes], dtype=float)
    xbar = np.array([X[y == k].mean(axis=0) for k in classes])
    psi = psi0.copy()
    for k in classes:
        centred = X[y == k] - xbar[k]
        d = xbar[k] - m0
        psi += centred.T @ centred + k0 * n_k[k] / (k0 + n_k[k]) * np.outer(d, d)
    kappa = k0 + n_k
    m = (k0 * m0 + n_k[:, None] * xbar) / kappa[:, None]
    return m, kappa, nu0 + len(y), psi, n_k


def inverse_wishart_var(nu, psi):
    D = psi.shape[0]
    d = np.diag(psi)
    return ((nu - D + 1) * psi**2 + (nu - D - 1) * np.outer(d, d)) / (
        (nu - D) * (nu - D - 1) ** 2 * (nu - D - 3)
    )


def linear_form_moments(m, kappa, nu, psi, class_concentration):
    """E and SD of w_k = Σ⁻¹μ_k, and E of b_k = −½ μ_kᵀΣ⁻¹μ_k + log π_k, per class."""
    V = np.linalg.inv(psi)
    D = psi.shape[0]
    Vm = m @ V
    quad = np.einsum("kd,kd->k", m, Vm)
    coef = nu * Vm
    coef_var = nu * (np.diag(V) * quad[:, None] + Vm**2 + np.diag(V) / kappa[:, None])
    log_pi = digamma(class_concentration) - digamma(class_concentration.sum())
    intercept = -0.5 * (nu * quad + D / kappa) + log_pi
    return coef, np.sqrt(coef_var), intercept


def niw_monte_carlo(m, kappa, nu, psi, class_concentration, n, seed):
    """Draws of (π, μ, Σ, w, b) from the normal-inverse-Wishart posterior, with SciPy."""
    rng = np.random.default_rng(seed)
    cov = stats.invwishart.rvs(df=nu, scale=psi, size=n, random_state=rng)
    chol = np.linalg.cholesky(cov)
    z = rng.standard_normal((n, *m.shape))
    mu = m + np.einsum("sij,skj->ski", chol, z) / np.sqrt(kappa)[:, None]
    pi = stats.dirichlet.rvs(class_concentration, size=n, random_state=rng)
    w = np.linalg.solve(cov[:, None], mu[..., None])[..., 0]
    b = -0.5 * np.einsum("skd,skd->sk", mu, w) + np.log(pi)
    return pi, mu, cov, w, b


def assert_monte_carlo(draws, mean=None, sd=None, n_sigma=5.0):
    """Sample mean / SD within ``n_sigma`` standard errors of the formula (axis 0 = draws)."""
    n = draws.shape[0]
    centred = draws - draws.mean(axis=0)
    if mean is not None:
        se = draws.std(axis=0) / np.sqrt(n)
        assert np.all(np.abs(draws.mean(axis=0) - mean) <= n_sigma * se)
    if sd is not None:
        var = centred.var(axis=0)
        se_var = np.sqrt(((centred**4).mean(axis=0) - var**2) / n)
        assert np.all(np.abs(var - sd**2) <= n_sigma * se_var)


def test_dirichlet_sd_formula_is_scipys_variance():
    a = np.array([0.5, 1.0, 3.0, 10.0])
    np.testing.assert_allclose(dirichlet_sd(a) ** 2, stats.dirichlet.var(a), rtol=1e-12)
    np.testing.assert_allclose(dirichlet_sd(np.array([2.0, 5.0]))[0], stats.beta.std(2, 5))


def test_normal_inverse_wishart_spread_formulas_by_monte_carlo():
    X, y = gaussian_data(n_classes=3)
    m, kappa, nu, psi = niw_posterior(X, y, fit(GaussianDiscriminantAnalysis, (X, y)))[:4]
    # a small ν makes the formulas' ν-dependence visible; ν > D + 7 keeps fourth moments
    nu = psi.shape[0] + 9.0
    _, mu, cov, _, _ = niw_monte_carlo(m, kappa, nu, psi, np.ones(3), 200_000, seed=0)
    D = psi.shape[0]
    assert_monte_carlo(mu, mean=m, sd=np.sqrt(np.diag(psi) / (kappa[:, None] * (nu - D - 1))))
    assert_monte_carlo(cov, mean=psi / (nu - D - 1), sd=np.sqrt(inverse_wishart_var(nu, psi)))


def test_linear_form_moments_by_monte_carlo():
    X, y = gaussian_data(n_classes=3, n=30)
    m, kappa, nu, psi, n_k = niw_posterior(X, y, fit(GaussianDiscriminantAnalysis, (X, y)))
    concentration = n_k + 1.0
    coef, coef_sd, intercept = linear_form_moments(m, kappa, nu, psi, concentration)
    *_, w, b = niw_monte_carlo(m, kappa, nu, psi, concentration, 200_000, seed=1)
    assert_monte_carlo(w, mean=coef, sd=coef_sd)
    assert_monte_carlo(b, mean=intercept)
    # the two-class difference: m_1 − m_0 and 1/κ_0 + 1/κ_1
    diff, diff_sd, _ = linear_form_moments(
        (m[1] - m[0])[None], np.array([1 / (1 / kappa[0] + 1 / kappa[1])]), nu, psi, np.ones(1)
    )
    assert_monte_carlo(w[:, 1] - w[:, 0], mean=diff[0], sd=diff_sd[0])


# --------------------------------------------------------------------------------------------
# The table's new columns hold those closed forms.


def test_naive_bayes_closed_form_sd_is_the_dirichlet_and_beta_sd(multinomial, bernoulli):
    X, y = count_data()
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    table = compare(multinomial).table
    np.testing.assert_allclose(
        rows_of(table, "feature_prob")["closed_form_sd"], dirichlet_sd(counts + 1.0).ravel()
    )
    class_sd = dirichlet_sd(np.array([15.0, 15.0, 15.0]) + 1.0)
    np.testing.assert_allclose(rows_of(table, "class_prob")["closed_form_sd"], class_sd)
    X, y = binary_data()
    present = np.array([X[y == k].sum(axis=0) for k in range(3)])
    beta_sd = stats.beta.std(present + 1.0, 15.0 - present + 1.0)
    table = compare(bernoulli).table
    np.testing.assert_allclose(rows_of(table, "feature_prob")["closed_form_sd"], beta_sd.ravel())


def test_categorical_closed_form_sd_uses_only_the_real_categories():
    X = np.array([[0, 0], [1, 1], [2, 0], [0, 1], [1, 0], [0, 1]])
    y = np.array([0, 0, 0, 1, 1, 1])
    est = fit(CategoricalNB, (X, y), n_categories=[3, 2])
    feature = rows_of(compare(est).table, "feature_prob")
    expected = np.concatenate(
        [
            dirichlet_sd(np.array([1.0, 1.0, 1.0]) + 1.0),  # class 0, x0: one of each
            dirichlet_sd(np.array([2.0, 1.0]) + 1.0),  # class 0, x1: two 0s, one 1
            dirichlet_sd(np.array([2.0, 1.0, 0.0]) + 1.0),  # class 1, x0: two 0s, one 1
            dirichlet_sd(np.array([1.0, 2.0]) + 1.0),  # class 1, x1: one 0, two 1s
        ]
    )
    np.testing.assert_allclose(feature["closed_form_sd"], expected)


def test_gda_closed_forms_of_spread_and_linear_form(gda3):
    X, y = gaussian_data(n_classes=3)
    m, kappa, nu, psi, n_k = niw_posterior(X, y, gda3)
    D = psi.shape[0]
    coef, coef_sd, intercept = linear_form_moments(m, kappa, nu, psi, n_k + 1.0)
    table = compare(gda3).table
    mu_sd = np.sqrt(np.diag(psi) / (kappa[:, None] * (nu - D - 1)))
    np.testing.assert_allclose(rows_of(table, "mu")["closed_form_sd"], mu_sd.ravel())
    cov_sd = np.sqrt(inverse_wishart_var(nu, psi))[np.triu_indices(D)]
    np.testing.assert_allclose(rows_of(table, "cov")["closed_form_sd"], cov_sd)
    np.testing.assert_allclose(rows_of(table, "coef")["closed_form"], coef.ravel())
    np.testing.assert_allclose(rows_of(table, "coef")["closed_form_sd"], coef_sd.ravel())
    np.testing.assert_allclose(rows_of(table, "intercept")["closed_form"], intercept)


def test_two_class_gda_checks_the_differences(gda):
    X, y = gaussian_data()
    m, kappa, nu, psi, n_k = niw_posterior(X, y, gda)
    coef, _, intercept = linear_form_moments(m, kappa, nu, psi, n_k + 1.0)
    table = compare(gda).table
    np.testing.assert_allclose(rows_of(table, "coef")["closed_form"], coef[1] - coef[0])
    np.testing.assert_allclose(
        rows_of(table, "intercept")["closed_form"], [intercept[1] - intercept[0]]
    )


def test_spread_of_sigma_is_not_checked_without_a_fourth_moment():
    """ν_N = D + 7 exactly: Var(Σ) exists, but the MCSE of its SD does not."""
    X, y = gaussian_data(n=5)  # ν_N = ν₀ + N = (D + 2) + 5
    table = compare(fit(GaussianDiscriminantAnalysis, (X, y))).table
    cov = rows_of(table, "cov")
    assert cov["closed_form_sd"].isna().all() and cov["z_sd"].isna().all()
    assert cov["reason"].str.contains("needs a finite fourth moment, ν_N > D \\+ 7").all()
    assert rows_of(table, "mu")["closed_form_sd"].notna().all()


def rows_of(table, variable):
    return table[table["variable"] == variable]


# --------------------------------------------------------------------------------------------
# Wrong spreads are rejected.


@pytest.mark.parametrize("factor", [4.0, 0.25], ids=["half_sd", "double_sd"])
def test_multinomial_with_the_wrong_spread_is_rejected(multinomial, factor):
    X, y = count_data()
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    draws = dirichlet_draws(factor * (counts + 1.0), seed=10)
    result = compare(with_posterior(multinomial, feature_prob=draws))
    feature = rows(result, "feature_prob")
    assert not result.ok
    threshold = result.settings["z_threshold"]
    # The means are right. Too narrow draws have only their spread flagged; too wide ones may
    # have means flagged as well, since z's Monte Carlo error is that of the closed-form SD.
    if factor > 1:
        assert (feature["z"].abs() <= threshold).all()
    assert (feature["z_sd"].abs() > threshold).mean() > 0.9
    sign = np.sign(feature["z_sd"]).unique()
    assert list(sign) == ([-1.0] if factor > 1 else [1.0])
    assert any("posterior SDs differ from their closed form" in w for w in result.warnings)


@pytest.mark.parametrize("factor", [4.0, 0.25], ids=["half_sd", "double_sd"])
def test_bernoulli_with_the_wrong_spread_is_rejected(bernoulli, factor):
    X, y = binary_data()
    present = np.array([X[y == k].sum(axis=0) for k in range(3)])
    pair = np.stack([present + 1.0, 15.0 - present + 1.0], axis=-1)
    draws = dirichlet_draws(factor * pair, seed=11)[..., 0]
    result = compare(with_posterior(bernoulli, feature_prob=draws))
    feature = rows(result, "feature_prob")
    assert not result.ok
    if factor > 1:  # too narrow: the means are right and only the spread is flagged
        assert (feature["z"].abs() <= result.settings["z_threshold"]).all()
    assert (feature["z_sd"].abs() > result.settings["z_threshold"]).mean() > 0.9


@pytest.mark.parametrize("factor", [4.0, 0.25], ids=["half_sd", "double_sd"])
def test_categorical_with_the_wrong_spread_is_rejected(categorical, factor):
    X, y = categorical_data()
    counts = np.array(
        [[np.bincount(X[y == k, j], minlength=4) for j in range(6)] for k in range(3)]
    )
    draws = dirichlet_draws(factor * (counts + 1.0), seed=12)
    result = compare(with_posterior(categorical, feature_prob=draws))
    assert not result.ok
    feature = rows(result, "feature_prob")
    assert (feature["z_sd"].abs() > result.settings["z_threshold"]).mean() > 0.9


def test_class_probabilities_with_the_wrong_spread_are_rejected(multinomial):
    draws = dirichlet_draws(4.0 * (np.array([15.0, 15.0, 15.0]) + 1.0), seed=13)
    result = compare(with_posterior(multinomial, class_prob=draws))
    assert not result.ok
    assert not rows(result, "class_prob")["agrees"].any()


def gda_draws(est):
    posterior = est.idata_["posterior"].to_dataset()
    return (posterior[name].values for name in ("class_prob", "mu", "cov"))


def linear_form(class_prob, mu, cov):
    """coef and intercept of each draw, as the posterior stores them (written out again)."""
    w = np.linalg.solve(cov[..., None, :, :], mu[..., None])[..., 0]
    b = -0.5 * np.sum(mu * w, axis=-1) + np.log(class_prob)
    if class_prob.shape[-1] == 2:
        return w[..., 1, :] - w[..., 0, :], b[..., 1] - b[..., 0]
    return w, b


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_gda_with_the_wrong_spread_of_mu_is_rejected(gda, scale):
    X, y = gaussian_data()
    m = niw_posterior(X, y, gda)[0]
    class_prob, mu, cov = gda_draws(gda)
    mu = m + scale * (mu - m)
    coef, intercept = linear_form(class_prob, mu, cov)  # consistent, so only the spread is off
    result = compare(with_posterior(gda, mu=mu, coef=coef, intercept=intercept))
    assert not result.ok
    assert (rows(result, "mu")["z_sd"].abs() > result.settings["z_threshold"]).all()
    assert (rows(result, "mu")["z"].abs() <= result.settings["z_threshold"]).all()


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_qda_with_the_wrong_spread_of_mu_is_rejected(scale):
    qda = fit(QuadraticDiscriminantAnalysis, gaussian_data())
    m = qda.closed_form_["mu"].values  # the posterior means m_k, from the closed form
    mu = qda.idata_["posterior"]["mu"].values
    result = compare(with_posterior(qda, mu=m + scale * (mu - m)))
    assert not result.ok
    assert (rows(result, "mu")["z_sd"].abs() > result.settings["z_threshold"]).all()
    assert compare(qda).ok  # the same fit with its own draws passes


@pytest.mark.parametrize("dof_change", [-20, 40])
def test_gda_with_sigma_from_the_wrong_dof_is_rejected(gda, dof_change):
    """Σ ~ IW(ν', Ψ (ν' − D − 1) / (ν_N − D − 1)): the right mean with the wrong spread."""
    X, y = gaussian_data()
    m, kappa, nu, psi, _ = niw_posterior(X, y, gda)
    D = psi.shape[0]
    wrong_nu = nu + dof_change
    rng = np.random.default_rng(14)
    scale = psi * (wrong_nu - D - 1) / (nu - D - 1)
    cov = stats.invwishart.rvs(df=wrong_nu, scale=scale, size=2000, random_state=rng)
    chol = np.linalg.cholesky(cov)
    mu = (
        m
        + np.einsum("sij,skj->ski", chol, rng.standard_normal((2000, 2, D)))
        / np.sqrt(kappa)[:, None]
    )
    class_prob = next(gda_draws(gda)).reshape(2000, 2)
    coef, intercept = linear_form(class_prob, mu, cov)
    shape = (2, 1000)
    result = compare(
        with_posterior(
            gda,
            mu=mu.reshape(*shape, 2, D),
            cov=cov.reshape(*shape, D, D),
            coef=coef.reshape(*shape, D),
            intercept=intercept.reshape(shape),
        )
    )
    assert not result.ok
    cov_rows = rows(result, "cov")
    assert (cov_rows["z"].abs() <= result.settings["z_threshold"]).all()
    assert (cov_rows["z_sd"].abs() > result.settings["z_threshold"]).any()


# --------------------------------------------------------------------------------------------
# Wrong means and a wrong linear form are rejected.


def test_a_mean_shifted_by_six_mcse_is_rejected(multinomial):
    """One parameter's draws moved by 6 MCSE: that row, and only it, disagrees (z₀ + 6 > 4
    unless its chance z₀ was below −2, which this seed's is not)."""
    right = compare(multinomial)
    row = right.table.index[right.table["coords"] == "1, x3"][0]
    target = right.table.loc[row]
    assert target["z"] > -2
    posterior = multinomial.idata_["posterior"].to_dataset()
    draws = posterior["feature_prob"].values.copy()
    draws[:, :, 1, 3] += 6 * target["mcse"]
    result = compare(with_posterior(multinomial, feature_prob=draws))
    assert not result.ok
    assert result.table.loc[row, "z"] == pytest.approx(target["z"] + 6, abs=0.3)
    assert list(result.table.index[~result.table["agrees"]]) == [row]
    assert any("1 posterior mean differs" in w for w in result.warnings)


@pytest.mark.parametrize("name", ["gda", "gda3"])
def test_doubled_coef_is_rejected(name, request):
    est = request.getfixturevalue(name)
    coef = est.idata_["posterior"]["coef"].values
    result = compare(with_posterior(est, coef=2 * coef))
    assert not result.ok
    assert not rows(result, "coef")["agrees"].any()
    assert rows(result, "intercept")["agrees"].all()
    assert any("coef/intercept values are not the linear form" in w for w in result.warnings)


@pytest.mark.parametrize("name", ["gda", "gda3"])
def test_intercept_plus_five_is_rejected(name, request):
    est = request.getfixturevalue(name)
    intercept = est.idata_["posterior"]["intercept"].values
    result = compare(with_posterior(est, intercept=intercept + 5))
    assert not result.ok
    assert not rows(result, "intercept")["agrees"].any()
    assert (rows(result, "intercept")["z"] > 50).all()


def test_linear_form_is_checked_in_every_draw_under_lkj_too(gda):
    """Under LKJ there is no closed form; the per-draw identity still catches a bad coef."""
    lkj = copy.copy(gda)
    lkj.cov_prior = "lkj"
    assert compare(lkj).ok
    coef = gda.idata_["posterior"]["coef"].values.copy()
    coef[0, 17, 1] *= 1.001  # one draw of one coefficient, off by 0.1 %
    wrong = with_posterior(gda, coef=coef)
    wrong.cov_prior = "lkj"
    result = compare(wrong)
    assert rows(result, "coef")["closed_form"].isna().all()
    assert list(rows(result, "coef")["agrees"]) == [True, False, True]
    assert not result.ok


def test_float32_draws_pass_the_linear_form_within_their_rounding():
    est = fit(GaussianDiscriminantAnalysis, gaussian_data(n_classes=3), dtype="float32")
    assert est.idata_["posterior"]["coef"].dtype == np.float32
    assert compare(est).ok
    coef = est.idata_["posterior"]["coef"].values * np.float32(1.001)
    assert not compare(with_posterior(est, coef=coef)).ok


# --------------------------------------------------------------------------------------------
# A MAP optimiser that did not converge says nothing about the posterior.


def map_point(est, converged=None, method="find_MAP", message="ABNORMAL_TERMINATION_IN_LNSRCH"):
    """The closed-form mode (written out again: add-(λ − 1) = MLE at λ = 1 for the classes;
    (n + λ − 1) / (N + K(λ − 1)) = add-0 for λ = 1 words), one value off by 0.05."""
    X, y = count_data()
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    feature = counts / counts.sum(axis=1, keepdims=True)
    feature[0, 0] += 0.05
    stats_ = est.closed_form_
    point = xr.Dataset(
        {
            "class_prob": (("class",), np.full(3, 1 / 3)),
            "feature_prob": (("class", "feature"), feature),
        },
        coords={"class": stats_["class"].values, "feature": stats_["feature"].values},
    )
    point.attrs = {"map_method": method, "map_message": message}
    if converged is not None:
        point.attrs["map_converged"] = converged
    return point


def with_map(est, point):
    out = copy.copy(est)
    out.map_ = point
    return out


def test_a_map_that_did_not_converge_is_reported_not_compared(multinomial):
    result = compare(with_map(multinomial, map_point(multinomial, converged=0)))
    assert result.ok
    assert result.table["agrees"].all()
    assert result.map_converged is False
    expected = (
        "MAP optimiser did not converge (ABNORMAL_TERMINATION_IN_LNSRCH): its values are not "
        "compared"
    )
    assert any(w.startswith(expected) for w in result.warnings)
    off = result.table["reason"].str.contains("MAP not compared: the optimiser did not converge")
    assert list(result.table.loc[off, "coords"]) == ["0, x0"]
    assert "MAP: find_MAP (L-BFGS-B), did not converge" in str(result)
    assert not any("from the closed-form mode (worst" in w for w in result.warnings)


def test_a_map_that_converged_away_from_the_mode_fails(multinomial):
    result = compare(with_map(multinomial, map_point(multinomial, converged=1)))
    assert not result.ok
    assert list(result.table.loc[~result.table["agrees"], "coords"]) == ["0, x0"]
    assert "MAP: find_MAP (L-BFGS-B), converged" in str(result)
    assert any("1 MAP value differs from the closed-form mode" in w for w in result.warnings)


def test_a_map_of_unknown_convergence_is_compared(multinomial):
    """Files from before map_converged was recorded: treated as converged."""
    result = compare(with_map(multinomial, map_point(multinomial)))
    assert not result.ok
    assert result.map_converged is None
    assert "MAP: find_MAP (L-BFGS-B), convergence not recorded" in str(result)


def test_a_closed_form_map_is_named_exact(multinomial):
    point = map_point(multinomial, converged=1, method="closed_form", message="exact")
    point["feature_prob"][0, 0] -= 0.05
    result = compare(with_map(multinomial, point))
    assert result.ok
    assert "MAP: closed form (exact)" in str(result)
    assert result.map_method == "closed_form"


def test_an_unconverged_map_does_not_hide_a_wrong_posterior(multinomial):
    wrong = with_map(multinomial, map_point(multinomial, converged=0))
    result = compare(wrong, alpha=0.2)
    assert not result.ok
    assert any("posterior means differ from their closed form" in w for w in result.warnings)
    assert any(w.startswith("MAP optimiser did not converge") for w in result.warnings)


# --------------------------------------------------------------------------------------------
# The CLI exits 1 on a saved model with the wrong spread.


def test_cli_compare_exits_one_for_a_saved_model_with_the_wrong_spread(multinomial, tmp_path):
    X, y = count_data()
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    wrong = with_posterior(multinomial, feature_prob=dirichlet_draws(4 * (counts + 1.0), 15))
    wrong.save(tmp_path / "wrong.nc")
    multinomial.save(tmp_path / "right.nc")
    assert main(["compare", str(tmp_path / "right.nc")]) == 0
    assert main(["compare", str(tmp_path / "wrong.nc")]) == 1


# --------------------------------------------------------------------------------------------
# Calibration: a right posterior passes at the default settings for 49 of 50 seeds.


def test_the_default_threshold_is_family_wise_over_means_and_sds(multinomial):
    result = compare(multinomial)
    n_checks = int(result.table["z"].notna().sum() + result.table["z_sd"].notna().sum())
    # every mean and SD, and the location and spread of each per-draw joint statistic
    assert n_checks == 2 * len(result.table)
    n_checks += int(result.joint[["z_mean", "z_spread"]].notna().to_numpy().sum())
    assert result.settings["n_checks"] == n_checks
    expected = max(4.0, float(ndtri(1 - 0.001 / (2 * n_checks))))  # 0.1 % family-wise
    assert result.settings["z_threshold"] == pytest.approx(expected, rel=1e-12)
    assert compare(multinomial, z_threshold=3.5).settings["z_threshold"] == 3.5
    with pytest.raises(ValueError, match="z_threshold: expected a number, 'auto' or 'family'"):
        compare(multinomial, z_threshold="bonferroni")


CALIBRATION = {
    # realistic sizes: 3 classes × 100 words (606 checks), GDA with 4 features and 3 classes
    "multinomial": (MultinomialNB, lambda: count_data(n_features=100, n=90, seed=20)),
    "bernoulli": (BernoulliNB, lambda: binary_data(n_features=30, n=60, seed=21)),
    "categorical": (CategoricalNB, lambda: categorical_data(n_features=10, n=60, seed=22)),
    "gda": (GaussianDiscriminantAnalysis, lambda: gaussian_data(3, 4, n=90, seed=23)),
    "qda": (QuadraticDiscriminantAnalysis, lambda: gaussian_data(3, 4, n=90, seed=24)),
    # text-like: a third to a half of the cells have zero counts, so most marginals are skewed
    # Beta(1 + n, ~N) whose sample mean and SD drop together when the rare large draws are
    # missing (the reason for the closed-form SD and kurtosis in the Monte Carlo errors)
    "sparse-multinomial": (MultinomialNB, lambda: sparse_count_data(n_features=300, seed=30)),
    "sparse-bernoulli": (BernoulliNB, lambda: sparse_binary_data(n_features=200, seed=31)),
}


#: The sparse text-like cases take 20-30 s each (300 and 200 features × 50 seeds): slow suite.
SLOW_CALIBRATION = {"sparse-multinomial", "sparse-bernoulli"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_CALIBRATION else name
        for name in CALIBRATION
    ],
)
def test_a_right_posterior_passes_for_at_least_49_of_50_seeds(name):
    cls, data = CALIBRATION[name]
    X, y = data()
    failed = [
        seed
        for seed in range(50)
        if not compare(cls(random_seed=1000 + seed, **CONJUGATE).fit(X, y)).ok
    ]
    assert len(failed) <= 1, f"{name}: {len(failed)} of 50 right posteriors failed: {failed}"


def test_dirichlet_kurtosis_is_that_of_the_beta_marginals():
    from scipy import stats

    from bayesgen.families.expected import dirichlet_kurtosis

    concentration = np.array([[1.0, 2.0, 350.0], [0.5, 0.5, 4.0]])
    b = concentration.sum(axis=-1, keepdims=True) - concentration
    expected = 3.0 + stats.beta.stats(concentration, b, moments="k")
    np.testing.assert_allclose(dirichlet_kurtosis(concentration), expected, rtol=1e-12)


def test_mcse_sd_with_a_known_kurtosis_uses_it_and_no_fourth_moment_estimate():
    from bayesgen.maths.diagnostics import mcse_sd

    rng = np.random.default_rng(8)
    draws = rng.exponential(size=(3, 2, 4000))  # kurtosis 9
    estimated = mcse_sd(draws)
    known = mcse_sd(draws, kurtosis=np.array([9.0, np.nan, 3.0]))
    sd, n = draws.reshape(3, -1).std(axis=1), draws[0].size
    # Var(s) ≈ (κ − 1) σ² / (4 ESS); the draws are independent, so ESS ≈ n.
    np.testing.assert_allclose(known[0], sd[0] * np.sqrt(8.0 / (4 * n)), rtol=0.1)
    assert known[1] == estimated[1]  # unknown kurtosis: ArviZ's estimate
    np.testing.assert_allclose(known[2], sd[2] * np.sqrt(2.0 / (4 * n)), rtol=0.1)


def test_mcse_sd_equals_arviz():
    import arviz as az

    from bayesgen.maths.diagnostics import mcse_sd

    rng = np.random.default_rng(5)
    draws = rng.standard_normal((6, 3, 301))
    draws[:, :, 1:] += 0.6 * draws[:, :, :-1]  # autocorrelated
    draws[2] = rng.exponential(size=(3, 301))  # skewed
    draws[3] = np.round(draws[3])  # ties
    data = xr.Dataset({"x": (("chain", "draw", "p"), np.moveaxis(draws, 0, -1))})
    expected = az.mcse(data, method="sd")["x"].values
    np.testing.assert_allclose(mcse_sd(draws), expected, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# Per-draw joint statistics see what the marginals barely can (bayesgen.maths.joint_statistics).


def joint_row(result, statistic):
    return result.joint.set_index("statistic").loc[statistic]


def test_gda_with_nu_plus_one_is_seen_by_the_trace_statistic(gda):
    """Σ ~ IW(ν_N + 1, Ψ_N): each of Σ's means and SDs moves by about 1/ν_N, tr(Ψ Σ⁻¹) by D."""
    X, y = gaussian_data()
    m, kappa, nu, psi, _ = niw_posterior(X, y, gda)
    D = psi.shape[0]
    rng = np.random.default_rng(15)
    cov = stats.invwishart.rvs(df=nu + 1, scale=psi, size=2000, random_state=rng)
    chol = np.linalg.cholesky(cov)
    noise = rng.standard_normal((2000, 2, D))
    mu = m + np.einsum("sij,skj->ski", chol, noise) / np.sqrt(kappa)[:, None]
    class_prob = next(gda_draws(gda)).reshape(2000, 2)
    coef, intercept = linear_form(class_prob, mu, cov)
    shape = (2, 1000)
    result = compare(
        with_posterior(
            gda,
            mu=mu.reshape(*shape, 2, D),
            cov=cov.reshape(*shape, D, D),
            coef=coef.reshape(*shape, D),
            intercept=intercept.reshape(shape),
        )
    )
    assert not joint_row(result, "tr(Ψ Σ⁻¹)")["agrees"]
    assert not result.ok
    assert joint_row(compare(gda), "tr(Ψ Σ⁻¹)")["agrees"]


def test_qda_with_kappa_times_point_nine_is_seen_by_the_quadratic_statistic():
    """μ_k | Σ_k ~ N(m_k, Σ_k / (0.9 κ_k)): SDs 5 % wider, κ (μ − m)ᵀ Σ⁻¹ (μ − m) 11 % larger."""
    qda = fit(QuadraticDiscriminantAnalysis, gaussian_data(3, 4, n=90, seed=24))
    m = qda.closed_form_["mu"].values
    mu = qda.idata_["posterior"]["mu"].values
    result = compare(with_posterior(qda, mu=m + (mu - m) / np.sqrt(0.9)))
    statistic = "κ (μ − m)ᵀ Σ⁻¹ (μ − m) summed over classes"
    assert joint_row(result, statistic)["z_mean"] > result.settings["z_threshold"]
    assert not result.ok
    assert joint_row(compare(qda), statistic)["agrees"]
