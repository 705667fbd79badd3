"""Posterior against closed form (bayesgen.compare).

Every expected value is a textbook formula written out again here (add-λ, the Dirichlet mode,
the normal-inverse-Wishart posterior), or ArviZ / scikit-learn; never this package's output.
Fitted estimators are shared per module: find_MAP compiles a PyMC graph (seconds with a warm
compile cache, up to a minute cold), so each distinct model is fitted once.
"""

import copy
import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from matplotlib.figure import Figure
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
)
from bayesgen.checks import parameter_table
from bayesgen.checks.comparison import TABLE_COLUMNS, compare
from bayesgen.checks.predictions import compare_predictions, predictive_probabilities
from bayesgen.checks.sweep import lambda_sweep, plot_lambda_sweep
from bayesgen.maths.diagnostics import chain_diagnostics, ess_mean, ess_within, mc_diagnostics

MAP_TOL = {"rtol": 1e-3, "atol": 1e-4}  # compare()'s documented MAP tolerance
WORDS = ["free", "money", "meeting", "lunch"]
CLASSES = ["eggs", "ham", "spam"]

# --------------------------------------------------------------------------------------------
# Data: tiny, with the zero counts the boundary cases need.


def count_data():
    rng = np.random.default_rng(0)
    y = np.repeat(CLASSES, 4)
    rates = np.array([[1.0, 1.0, 4.0, 3.0], [2.0, 1.0, 3.0, 3.0], [5.0, 4.0, 1.0, 0.5]])
    X = rng.poisson(np.repeat(rates, 4, axis=0)).astype(float)
    return pd.DataFrame(X, columns=WORDS), y


def binary_data():
    """Class 0 always has feature 0 and never feature 1; class 2 never has feature 3."""
    X = np.array(
        [
            [1, 0, 1, 0],
            [1, 0, 0, 1],
            [1, 0, 1, 1],
            [1, 0, 0, 0],
            [0, 1, 1, 0],
            [1, 0, 1, 1],
            [0, 1, 0, 1],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [0, 1, 1, 0],
            [1, 0, 0, 0],
            [0, 1, 1, 0],
        ],
        dtype=float,
    )
    return X, np.repeat([0, 1, 2], 4)


def categorical_data():
    """Features with 3, 2 and 3 categories: the middle one is padded."""
    X = np.array(
        [
            [0, 0, 2],
            [1, 0, 2],
            [0, 1, 1],
            [2, 0, 2],
            [2, 1, 0],
            [2, 1, 0],
            [1, 1, 1],
            [2, 0, 0],
            [0, 0, 1],
            [1, 1, 1],
            [0, 0, 2],
            [1, 0, 1],
        ]
    )
    return X, np.repeat([0, 1, 2], 4)


def gaussian_data(n=40):
    rng = np.random.default_rng(3)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 3)) @ np.array([[1.0, 0.3, 0], [0, 1.0, 0.2], [0, 0, 0.7]])
    X[y == 1] += [1.0, -0.5, 0.8]
    return X, y


def fit_quietly(estimator, X, y):
    """Fit, hiding PyMC's "optimizer did not converge" (expected where no mode exists)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The optimizer did not converge")
        return estimator.fit(X, y)


CONJUGATE = {"inference": "conjugate", "random_seed": 0, "prior_draws": 0}


@pytest.fixture(scope="module")
def multinomial():
    """λ = 2, so the MAP under Dirichlet(λ) is add-(λ − 1) = add-1."""
    return fit_quietly(MultinomialNB(alpha=2.0, **CONJUGATE), *count_data())


@pytest.fixture(scope="module")
def bernoulli():
    return fit_quietly(BernoulliNB(alpha=1.0, **CONJUGATE), *binary_data())


@pytest.fixture(scope="module")
def bernoulli_boundary():
    """α = 0.5 with counts of 0 and N_k: Beta(n + α, N_k − n + α) has no mode there."""
    return fit_quietly(BernoulliNB(alpha=0.5, **CONJUGATE), *binary_data())


@pytest.fixture(scope="module")
def bernoulli_nuts():
    est = BernoulliNB(alpha=1.0, inference="nuts", draws=1000, tune=1000, chains=2, random_seed=1)
    return fit_quietly(est, *binary_data())


@pytest.fixture(scope="module")
def categorical():
    est = CategoricalNB(alpha=1.0, n_categories=[3, 2, 3], **CONJUGATE)
    return fit_quietly(est, *categorical_data())


@pytest.fixture(scope="module")
def gda():
    # No MAP: the GDA graph is the slowest to compile, and its Σ mode is not comparable anyway.
    est = GaussianDiscriminantAnalysis(compute_map=False, **CONJUGATE)
    return est.fit(*gaussian_data())


# --------------------------------------------------------------------------------------------
# Closed forms, written out again.


def add_lambda(counts, totals, lam, n_outcomes):
    return (np.asarray(counts, float) + lam) / (np.asarray(totals, float) + n_outcomes * lam)


def dirichlet_mode(counts, totals, alpha, n_outcomes):
    """(n + α − 1) / (N + K(α − 1))."""
    return (np.asarray(counts, float) + alpha - 1) / (
        np.asarray(totals, float) + n_outcomes * (alpha - 1)
    )


def class_counts(y, classes):
    return np.array([np.sum(np.asarray(y) == c) for c in classes], dtype=float)


def multinomial_counts(X, y, classes=CLASSES):
    X = np.asarray(X, float)
    return np.array([X[np.asarray(y) == c].sum(axis=0) for c in classes])


def niw_posterior_means(X, y, kappa0=0.01):
    """E[μ_k] and E[Σ] under the estimator's default prior: m₀ = grand mean, ν₀ = D + 2,
    Ψ₀ = (ν₀ − D − 1) diag(var X) = diag(var X)."""
    n, d = X.shape
    m0, psi0, nu0 = X.mean(axis=0), np.diag(X.var(axis=0)), d + 2
    means, psi = [], psi0.copy()
    for k in (0, 1):
        Xk = X[y == k]
        nk, xbar = len(Xk), Xk.mean(axis=0)
        means.append((kappa0 * m0 + nk * xbar) / (kappa0 + nk))
        centered = Xk - xbar
        psi += centered.T @ centered + kappa0 * nk / (kappa0 + nk) * np.outer(xbar - m0, xbar - m0)
    return np.array(means), psi / (nu0 + n - d - 1)


def rows(table, variable):
    part = table[table["variable"] == variable]
    return part.set_index("coords")


# --------------------------------------------------------------------------------------------
# The table agrees on every model.


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical", "gda"])
def test_every_conjugate_model_agrees(name, request):
    result = compare(request.getfixturevalue(name))
    assert result.ok, str(result)
    assert result.table["agrees"].all()
    assert list(result.table.columns) == TABLE_COLUMNS


def test_nuts_fit_agrees_and_its_diagnostics_are_clean(bernoulli_nuts):
    result = compare(bernoulli_nuts)
    assert result.ok, str(result)
    assert result.inference == "nuts"
    assert result.divergences == 0
    assert result.table["r_hat"].max() <= 1.01
    X, y = binary_data()
    counts = multinomial_counts(X, y, classes=[0, 1, 2])
    expected = add_lambda(counts, 4.0, 1.0, 2).ravel()  # (n + 1) / (N_k + 2)
    feature = rows(result.table, "feature_prob")
    assert np.all(np.abs(feature["posterior_mean"] - expected) <= 4 * feature["mcse"])


def test_multinomial_closed_form_column_is_add_lambda(multinomial):
    X, y = count_data()
    counts = multinomial_counts(X, y)
    expected = add_lambda(counts, counts.sum(axis=1, keepdims=True), 2.0, 4)
    feature = rows(compare(multinomial).table, "feature_prob")
    labels = [f"{c}, {w}" for c in CLASSES for w in WORDS]
    np.testing.assert_allclose(feature.loc[labels, "closed_form"], expected.ravel(), rtol=1e-12)


def test_multinomial_map_is_the_dirichlet_mode(multinomial):
    """MAP under Dirichlet(λ + 1) is add-λ: here λ + 1 = 2, so the mode is add-1."""
    X, y = count_data()
    counts = multinomial_counts(X, y)
    add_one = add_lambda(counts, counts.sum(axis=1, keepdims=True), 1.0, 4).ravel()
    feature = rows(compare(multinomial).table, "feature_prob")
    np.testing.assert_allclose(feature["expected_map"], add_one, rtol=1e-12)
    np.testing.assert_allclose(feature["map"], add_one, **MAP_TOL)


def test_class_map_under_dirichlet_one_is_the_mle(multinomial):
    _, y = count_data()
    mle = class_counts(y, CLASSES) / len(y)
    classes = rows(compare(multinomial).table, "class_prob")
    np.testing.assert_allclose(classes["mle"], mle, rtol=1e-12)
    np.testing.assert_allclose(classes["expected_map"], mle, rtol=1e-12)
    np.testing.assert_allclose(classes["map"], mle, **MAP_TOL)


def test_bernoulli_closed_form_is_add_lambda_over_two_outcomes(bernoulli):
    X, y = binary_data()
    expected = add_lambda(multinomial_counts(X, y, [0, 1, 2]), 4.0, 1.0, 2)
    feature = rows(compare(bernoulli).table, "feature_prob")
    np.testing.assert_allclose(feature["closed_form"], expected.ravel(), rtol=1e-12)


def test_categorical_table_leaves_out_the_padding(categorical):
    X, y = categorical_data()
    table = compare(categorical).table
    feature = rows(table, "feature_prob")
    # 3 classes × (3 + 2 + 3) real categories; the padded (x1, 2) cells have no row
    assert len(feature) == 3 * 8
    assert not any(label.endswith("x1, 2") for label in feature.index)
    counts = np.array([np.sum((y == k) & (X[:, 1] == 1)) for k in range(3)])
    expected = add_lambda(counts, 4.0, 1.0, 2)  # feature x1 has 2 categories
    np.testing.assert_allclose(
        feature.loc[[f"{k}, x1, 1" for k in range(3)], "closed_form"], expected, rtol=1e-12
    )


def test_gda_rows_are_the_normal_inverse_wishart_means(gda):
    X, y = gaussian_data()
    mu, cov = niw_posterior_means(X, y)
    table = compare(gda).table
    np.testing.assert_allclose(rows(table, "mu")["closed_form"], mu.ravel(), rtol=1e-10)
    # one row per entry of the symmetric Σ: the upper triangle
    upper = np.triu_indices(3)
    np.testing.assert_allclose(rows(table, "cov")["closed_form"], cov[upper], rtol=1e-10)
    assert len(table) == 2 + 6 + 6 + 3 + 1


def test_gda_explains_the_rows_without_closed_form(gda):
    table = compare(gda).table
    nonlinear = table[table["variable"].isin(["coef", "intercept"])]
    # their means have closed forms (tests/test_check_power.py); their modes have none
    assert nonlinear["expected_map"].isna().all()
    assert nonlinear["reason"].str.contains("no closed-form mode for the linear form").all()
    assert rows(table, "intercept")["closed_form_sd"].isna().all()
    assert rows(table, "intercept")["reason"].str.contains("SD not compared").all()
    cov = rows(table, "cov")
    assert cov["expected_map"].isna().all()
    assert cov["reason"].str.contains("Bartlett").all()
    assert (rows(table, "mu")["reason"] == "").all()


def test_gda_lkj_prior_has_no_closed_form_for_mu_and_cov(gda):
    """The comparison reads the prior from the estimator; under LKJ only π keeps a closed form."""
    lkj = copy.copy(gda)
    lkj.cov_prior = "lkj"
    table = compare(lkj).table
    for variable in ("mu", "cov"):
        part = rows(table, variable)
        assert part["closed_form"].isna().all()
        assert part["reason"].str.contains("LKJ").all()
    assert rows(table, "class_prob")["closed_form"].notna().all()


@pytest.mark.slow
def test_gda_lkj_nuts_fit_is_compared():
    est = GaussianDiscriminantAnalysis(
        cov_prior="lkj",
        inference="nuts",
        draws=500,
        tune=500,
        chains=2,
        random_seed=0,
        compute_map=False,
    ).fit(*gaussian_data())
    result = compare(est)
    assert rows(result.table, "mu")["reason"].str.contains("LKJ").all()
    assert rows(result.table, "class_prob")["agrees"].all()


# --------------------------------------------------------------------------------------------
# The check can fail.


def test_wrong_lambda_makes_posterior_means_disagree(multinomial):
    result = compare(multinomial, alpha=0.5)  # fitted with λ = 2
    X, y = count_data()
    counts = multinomial_counts(X, y)
    wrong = add_lambda(counts, counts.sum(axis=1, keepdims=True), 0.5, 4).ravel()
    feature = rows(result.table, "feature_prob")
    np.testing.assert_allclose(feature["closed_form"], wrong, rtol=1e-12)
    far = np.abs(feature["posterior_mean"] - wrong) > 6 * feature["mcse"]
    assert far.any()
    assert not feature.loc[far, "agrees"].any()
    assert not result.ok
    assert any("posterior means differ" in w for w in result.warnings)


def test_wrong_lambda_makes_the_map_disagree_on_its_own(multinomial):
    """With the z check switched off, the MAP check alone still fails."""
    result = compare(multinomial, alpha=0.5, z_threshold=np.inf)
    X, y = count_data()
    counts = multinomial_counts(X, y)
    totals = counts.sum(axis=1, keepdims=True)
    true_mode = dirichlet_mode(counts, totals, 2.0, 4).ravel()
    wrong_mode = dirichlet_mode(counts, totals, 0.5, 4).ravel()  # all n > 0.5: a mode exists
    feature = rows(result.table, "feature_prob")
    np.testing.assert_allclose(feature["expected_map"], wrong_mode, rtol=1e-12)
    expected_agrees = np.abs(true_mode - wrong_mode) <= 1e-4 + 1e-3 * np.abs(wrong_mode)
    np.testing.assert_array_equal(feature["agrees"], expected_agrees)
    assert not result.ok


def test_divergences_make_the_comparison_fail(bernoulli):
    est = copy.copy(bernoulli)
    est.idata_ = est.idata_.copy()
    diverging = np.zeros((2, 1000), dtype=bool)
    diverging[0, :3] = True
    est.idata_["sample_stats"] = xr.Dataset({"diverging": (("chain", "draw"), diverging)})
    result = compare(est)
    assert result.table["agrees"].all()
    assert not result.ok
    assert result.divergences == 3
    assert any("3 divergent transitions" in w for w in result.warnings)


def test_chains_that_disagree_fail_r_hat(bernoulli):
    est = copy.copy(bernoulli)
    est.inference = "nuts"  # chains that disagree are what a sampler that has not mixed gives
    posterior = est.idata_["posterior"].to_dataset()
    shifted = posterior["feature_prob"].values.copy()
    shifted[1] = np.clip(shifted[1] + 0.1, 0, 1)
    est.idata_ = est.idata_.copy()
    est.idata_["posterior"] = posterior.assign(
        feature_prob=(posterior["feature_prob"].dims, shifted)
    )
    result = compare(est)
    assert (result.table["r_hat"] > 1.01).any()
    assert not result.ok
    assert any("above the R-hat limit" in w for w in result.warnings)


def few_draws_fit():
    return MultinomialNB(
        inference="conjugate", chains=2, draws=50, compute_map=False, random_seed=0, prior_draws=0
    ).fit(*count_data())


def test_few_mcmc_draws_fail_the_ess_check():
    est = few_draws_fit()
    est.inference = "nuts"  # as if a sampler had produced these draws
    result = compare(est)
    assert (result.table["ess_bulk"] < 400).all()
    assert not result.ok
    assert any("bulk ESS below" in w for w in result.warnings)


def test_exact_draws_report_low_ess_without_failing():
    result = compare(few_draws_fit())
    assert (result.table["ess_bulk"] < 400).all()
    assert result.table["agrees"].all()
    assert result.ok
    assert any("bulk ESS below" in w and "chance fluctuation" in w for w in result.warnings)


# --------------------------------------------------------------------------------------------
# Boundary modes are reported, not hidden.


def test_boundary_map_is_reported_not_compared(bernoulli_boundary):
    X, y = binary_data()
    counts = multinomial_counts(X, y, [0, 1, 2]).ravel()
    no_mode = (counts == 0) | (counts == 4)  # Beta(n + ½, 4 − n + ½) with a parameter < 1
    assert no_mode.sum() == 3
    result = compare(bernoulli_boundary)
    feature = rows(result.table, "feature_prob")
    boundary = feature["reason"].str.startswith("boundary").to_numpy()
    np.testing.assert_array_equal(boundary, no_mode)
    assert feature.loc[boundary, "expected_map"].isna().all()
    assert feature.loc[boundary, "map"].isna().all()  # the optimizer's artefact is not shown
    assert feature["agrees"].all()  # not counted as disagreement
    assert any("no interior posterior mode" in w for w in result.warnings)
    assert "boundary: no interior mode" in str(result)


def test_boundary_keeps_every_other_mode_and_hides_the_failed_optimizer(bernoulli_boundary):
    X, y = binary_data()
    counts = multinomial_counts(X, y, [0, 1, 2]).ravel()
    interior = (counts > 0) & (counts < 4)
    feature = rows(compare(bernoulli_boundary).table, "feature_prob")
    expected = dirichlet_mode(counts[interior], 4.0, 0.5, 2)  # (n − ½) / (N_k − 1)
    np.testing.assert_allclose(feature.loc[interior, "expected_map"], expected, rtol=1e-12)
    # no joint mode exists, so find_MAP's other values are artefacts too
    assert feature["map"].isna().all()
    assert feature.loc[interior, "reason"].str.contains("fitted posterior has no mode").all()


def test_boundary_posterior_means_are_still_checked(bernoulli_boundary):
    X, y = binary_data()
    expected = add_lambda(multinomial_counts(X, y, [0, 1, 2]), 4.0, 0.5, 2).ravel()
    result = compare(bernoulli_boundary)
    feature = rows(result.table, "feature_prob")
    np.testing.assert_allclose(feature["closed_form"], expected, rtol=1e-12)
    assert result.ok


def test_mode_of_exactly_zero_is_compared(bernoulli):
    """n + α = 1 (a zero count with α = 1): the mode is 0, on the boundary but defined."""
    feature = rows(compare(bernoulli).table, "feature_prob")
    assert feature.loc["0, x1", "expected_map"] == 0.0
    assert feature.loc["0, x0", "expected_map"] == 1.0  # count N_k: the absent outcome is 0
    assert feature.loc["0, x1", "map"] < 1e-4
    assert feature.loc["0, x1", "reason"] == ""
    assert feature["agrees"].all()


# --------------------------------------------------------------------------------------------
# Identities.


DIRICHLET_SD = "posterior SD under Dirichlet(a) = √(a_i (a₀ − a_i) / (a₀² (a₀ + 1)))"


def identity_counts(result):
    return {
        (row.identity, row.variable): (row.checked, row.satisfied)
        for row in result.identities.itertuples()
    }


def test_identities_name_each_dirichlet_check(multinomial):
    counts = identity_counts(compare(multinomial))
    assert counts == {
        ("posterior mean under Dirichlet(λ) = add-λ", "class_prob"): (3, 3),
        ("MAP under Dirichlet(1) = MLE", "class_prob"): (3, 3),
        ("posterior mean under Dirichlet(λ) = add-λ", "feature_prob"): (12, 12),
        ("MAP under Dirichlet(λ + 1) = add-λ", "feature_prob"): (12, 12),
        (DIRICHLET_SD, "class_prob"): (3, 3),
        (DIRICHLET_SD, "feature_prob"): (12, 12),
        # the per-draw joint statistics: location and spread each
        ("Σ log class_prob per draw follows its exact law", "class_prob"): (2, 2),
        ("Σ log feature_prob per draw follows its exact law", "feature_prob"): (2, 2),
        # a conjugate multinomial fit's prediction draws, per class: plain and signed sums
        **{
            (
                f"prediction draws π θ_w of one-word documents, {signed}class {label} per draw "
                "follows its exact law",
                "feature_prob",
            ): (2, 2)
            for label in CLASSES
            for signed in ("", "signed by θ_w − prior mean, ")
        },
    }


def test_identities_name_the_beta_analogues(bernoulli):
    counts = identity_counts(compare(bernoulli))
    assert counts[("posterior mean under Beta(λ, λ) = add-λ", "feature_prob")] == (12, 12)
    assert counts[("MAP under Beta(1, 1) = MLE", "feature_prob")] == (12, 12)


def test_identities_name_the_normal_inverse_wishart_means(gda):
    counts = identity_counts(compare(gda))
    assert counts[("posterior mean of μ_k under normal-inverse-Wishart = m_k", "mu")] == (6, 6)
    key = ("posterior mean of Σ under normal-inverse-Wishart = Ψ_N / (ν_N − D − 1)", "cov")
    assert counts[key] == (6, 6)


def test_identities_count_failures(multinomial):
    result = compare(multinomial, alpha=0.5, z_threshold=np.inf)
    counts = identity_counts(result)
    feature = rows(result.table, "feature_prob")
    checked, satisfied = counts[
        ("MAP under Dirichlet(α) = (n + α − 1) / (N + K(α − 1))", "feature_prob")
    ]
    assert (checked, satisfied) == (12, int(feature["agrees"].sum()))
    assert satisfied < checked


# --------------------------------------------------------------------------------------------
# Printing.


def test_str_lists_every_row_of_a_small_table(multinomial):
    text = str(compare(multinomial))
    assert "OK: every row agrees" in text
    assert text.count("feature_prob") >= 12
    assert "spam, free" in text


def test_str_summarises_a_large_table():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, 200)).astype(float)
    est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0, prior_draws=0)
    result = compare(est.fit(X, np.arange(30) % 3))
    assert len(result.table) == 3 + 600
    text = str(result)
    assert len(text.splitlines()) < 40
    assert "603 parameters" in text
    assert "The 10 worst of 603 parameters" in text
    worst = result.table.loc[result.table["z"].abs().idxmax()]
    assert f"worst |z| = {abs(worst['z']):.3g}" in text
    assert f"{worst['coords']} " in text


def test_repr_html_escapes_feature_names():
    X, y = count_data()
    X.columns = ["<script>alert(1)</script>", "b&b", "c", "d"]
    est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0, prior_draws=0)
    page = compare(est.fit(X, y))._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "b&amp;b" in page


def test_package_level_compare_is_callable_after_the_module_is_imported(multinomial):
    import bayesgen.checks.comparison  # binds the module, not the function bayesgen.compare

    assert bayesgen.compare(multinomial).ok


# --------------------------------------------------------------------------------------------
# Monte Carlo diagnostics equal ArviZ's.


def test_mc_diagnostics_equal_arviz():
    rng = np.random.default_rng(5)
    n_params, n_chains, n_draws = 12, 3, 201
    noise = rng.normal(size=(n_params, n_chains, n_draws))
    phi = rng.uniform(-0.3, 0.9, size=(n_params, 1))
    draws = np.empty_like(noise)
    draws[..., 0] = noise[..., 0]
    for t in range(1, n_draws):
        draws[..., t] = phi * draws[..., t - 1] + noise[..., t]
    draws[:3] += 2 * rng.normal(size=(3, n_chains, 1))  # chains that disagree
    draws[3] = np.round(draws[3])  # ties
    data = xr.Dataset({"x": (("chain", "draw", "p"), np.moveaxis(draws, 0, -1))})
    mcse, ess_bulk, r_hat = mc_diagnostics(draws)
    np.testing.assert_allclose(mcse, az.mcse(data, method="mean")["x"].values, rtol=1e-9)
    np.testing.assert_allclose(ess_bulk, az.ess(data, method="bulk")["x"].values, rtol=1e-9)
    np.testing.assert_allclose(r_hat, az.rhat(data)["x"].values, rtol=1e-9)
    both = chain_diagnostics(draws)  # the same numbers, in one pass
    for name, expected in zip(("mcse", "ess_bulk", "r_hat"), (mcse, ess_bulk, r_hat), strict=True):
        np.testing.assert_array_equal(getattr(both, name), expected)
    np.testing.assert_array_equal(both.ess_within, ess_within(draws))
    expected_mean_ess = az.ess(data, method="mean")["x"].values
    np.testing.assert_allclose(ess_mean(draws), expected_mean_ess, rtol=1e-9)
    assert not np.allclose(expected_mean_ess, az.ess(data, method="bulk")["x"].values, rtol=1e-3)


@pytest.mark.parametrize("cores", [2, 3])
def test_summaries_in_threads_equal_those_in_one(monkeypatch, cores):
    """summarise runs its chunks in one thread per core; the table must not depend on it."""
    rng = np.random.default_rng(6)
    values = rng.gamma(0.5, size=(2, 400, 1400))  # 700 kept: more chunks than threads
    keep = np.arange(0, 1400, 2)
    monkeypatch.setattr(parameter_table, "_available_cores", lambda: 1)
    alone = parameter_table.summarise(values, keep)
    monkeypatch.setattr(parameter_table, "_available_cores", lambda: cores)
    threaded = parameter_table.summarise(values, keep)
    step = parameter_table._CHUNK_ELEMENTS // (2 * 400)
    assert keep.size > cores * step  # every thread gets chunks
    for name in parameter_table.SUMMARY_COLUMNS:
        np.testing.assert_array_equal(threaded[name], alone[name], err_msg=name)
    ess_bulk = mc_diagnostics(np.moveaxis(values[:, :, keep], -1, 0))[1]  # all at once
    np.testing.assert_allclose(threaded["ess_bulk"], ess_bulk, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Predictions compared.


def test_compare_predictions_has_one_row_per_method(multinomial):
    X, y = count_data()
    frame = compare_predictions(multinomial, X, y)
    assert list(frame.index) == [
        "plug-in add-λ",
        "MAP",
        "posterior mean p(y|x)",
        "exact predictive",
    ]
    assert list(frame.columns) == [
        "accuracy",
        "log_loss",
        "brier",
        "max_abs_diff_vs_posterior_mean",
        "worst_example",
    ]
    assert frame.loc["posterior mean p(y|x)", "max_abs_diff_vs_posterior_mean"] == 0.0


def test_plug_in_metrics_match_sklearn_on_the_add_lambda_probabilities(multinomial):
    X, y = count_data()
    counts = multinomial_counts(X, y)
    theta = add_lambda(counts, counts.sum(axis=1, keepdims=True), 2.0, 4)
    prior = add_lambda(class_counts(y, CLASSES), len(y), 1.0, 3)
    joint = np.asarray(X) @ np.log(theta).T + np.log(prior)
    proba = np.exp(joint - joint.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    row = compare_predictions(multinomial, X, y).loc["plug-in add-λ"]
    assert row["accuracy"] == accuracy_score(y, np.array(CLASSES)[proba.argmax(axis=1)])
    assert row["log_loss"] == pytest.approx(log_loss(y, proba, labels=CLASSES), rel=1e-10)
    brier = brier_score_loss(y, proba, labels=CLASSES, scale_by_half=False)
    assert row["brier"] == pytest.approx(brier, rel=1e-10)


def test_map_prediction_is_the_add_lambda_plug_in_with_lambda_minus_one(multinomial):
    """MAP under Dirichlet(2) for words = add-1, and under Dirichlet(1) for classes = MLE."""
    X, y = count_data()
    counts = multinomial_counts(X, y)
    theta = add_lambda(counts, counts.sum(axis=1, keepdims=True), 1.0, 4)
    prior = class_counts(y, CLASSES) / len(y)
    joint = np.asarray(X) @ np.log(theta).T + np.log(prior)
    expected = np.exp(joint - joint.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(predictive_probabilities(multinomial, X)["MAP"], expected, atol=1e-3)


def test_exact_predictive_equals_plug_in_for_bernoulli(bernoulli):
    """One Bernoulli draw per feature: E[φ] is add-λ, so integrating φ out changes nothing."""
    X, y = binary_data()
    probabilities = predictive_probabilities(bernoulli, X)
    np.testing.assert_allclose(
        probabilities["exact predictive"], probabilities["plug-in add-λ"], rtol=1e-12
    )
    frame = compare_predictions(bernoulli, X, y)
    pd.testing.assert_series_equal(
        frame.loc["exact predictive"], frame.loc["plug-in add-λ"], check_names=False
    )


def test_exact_predictive_differs_from_plug_in_for_multinomial(multinomial):
    """Repeated words: the Dirichlet-multinomial is less confident than the plug-in."""
    X, _ = count_data()
    probabilities = predictive_probabilities(multinomial, X)
    gap = np.abs(probabilities["exact predictive"] - probabilities["plug-in add-λ"]).max()
    assert gap > 1e-3


def test_gda_exact_predictive_matches_monte_carlo_over_the_draws(gda):
    """p(x, y = k | data) = E[π_k] · E[N(x | μ_k, Σ)], averaged over exact posterior draws."""
    X, y = gaussian_data()
    X_new = X[:8]
    posterior = gda.idata_["posterior"]
    mu = posterior["mu"].values.reshape(-1, 2, 3)
    cov = posterior["cov"].values.reshape(-1, 3, 3)
    prior = add_lambda(class_counts(y, [0, 1]), len(y), 1.0, 2)
    offset = X_new[None, None, :, :] - mu[:, :, None, :]  # (draw, class, example, feature)
    quad = np.einsum("skni,sij,sknj->skn", offset, np.linalg.inv(cov), offset)
    norm = np.sqrt((2 * np.pi) ** 3 * np.linalg.det(cov))[:, None, None]
    density = (np.exp(-0.5 * quad) / norm).mean(axis=0)  # (class, example)
    expected = (density.T * prior) / (density.T * prior).sum(axis=1, keepdims=True)
    exact = predictive_probabilities(gda, X_new)["exact predictive"]
    np.testing.assert_allclose(exact, expected, atol=0.02)


def test_gda_predictions_name_the_niw_plug_in_and_leave_out_the_map(gda):
    X, y = gaussian_data()
    frame = compare_predictions(gda, X, y)
    assert "plug-in NIW mean" in frame.index
    assert frame.loc["MAP"].isna().all()  # compute_map=False


# --------------------------------------------------------------------------------------------
# λ sweep.


def test_lambda_sweep_coincides_for_multinomial():
    X, y = count_data()
    lambdas = (0.5, 1.0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The optimizer did not converge")
        sweep = lambda_sweep(X, y, lambdas=lambdas, draws=1000, random_seed=0)
    counts = multinomial_counts(X, y)
    assert len(sweep) == len(lambdas) * 12
    for lam in lambdas:
        part = sweep[sweep["lambda"] == lam]
        expected = add_lambda(counts, counts.sum(axis=1, keepdims=True), lam, 4).ravel()
        np.testing.assert_allclose(part["add_lambda"], expected, rtol=1e-12)
        assert np.all(np.abs(part["posterior_mean"] - expected) <= 4 * part["posterior_mcse"])
        np.testing.assert_allclose(part["map_alpha_plus_1"], expected, **MAP_TOL)


@pytest.mark.parametrize(
    ("model", "data", "n_outcomes"),
    [("bernoulli_nb", binary_data, 2), ("categorical_nb", categorical_data, None)],
)
def test_lambda_sweep_posterior_mean_coincides(model, data, n_outcomes):
    X, y = data()
    sweep = lambda_sweep(X, y, model=model, lambdas=(0.1, 1, 5), compute_map=False, draws=1000)
    assert sweep["map_alpha_plus_1"].isna().all()
    for lam, part in sweep.groupby("lambda"):
        if model == "bernoulli_nb":
            expected = add_lambda(multinomial_counts(X, y, [0, 1, 2]), 4.0, lam, 2).ravel()
        else:
            widths = X.max(axis=0) + 1
            expected = [
                add_lambda(np.sum((y == k) & (X[:, j] == c)), 4.0, lam, widths[j])
                for k in range(3)
                for j in range(3)
                for c in range(widths[j])
            ]
        np.testing.assert_allclose(part["add_lambda"], expected, rtol=1e-12)
        assert np.all(np.abs(part["posterior_mean"] - expected) <= 4 * part["posterior_mcse"])


def test_lambda_sweep_rejects_non_positive_lambda_and_gda():
    X, y = count_data()
    with pytest.raises(ValueError, match="λ must be > 0"):
        lambda_sweep(X, y, lambdas=(0.0,), compute_map=False)
    with pytest.raises(ValueError, match="model"):
        lambda_sweep(*gaussian_data(), model="gda", compute_map=False)


def test_plot_lambda_sweep_draws_lines_and_markers():
    sweep = pd.DataFrame(
        {
            "lambda": [0.5, 1.0, 0.5, 1.0],
            "variable": "feature_prob",
            "coords": ["a, x", "a, x", "a, y", "a, y"],
            "add_lambda": [0.2, 0.25, 0.8, 0.75],
            "posterior_mean": [0.21, 0.25, 0.79, 0.75],
            "posterior_mcse": 0.01,
            "z": 0.0,
            "map_alpha_plus_1": [0.2, 0.25, 0.8, 0.75],
        }
    )
    fig = plot_lambda_sweep(sweep)
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_allclose(lines["feature_prob[a, y]"].get_ydata(), [0.8, 0.75])
    assert len(ax.containers) == 2  # one error bar series of posterior means per parameter
    legend_texts = {
        t.get_text() for legend in (ax.get_legend(), *ax.artists) for t in legend.get_texts()
    }
    assert {"add-λ (closed form)", "posterior mean ± 2 MCSE", "MAP, α = λ + 1"} <= legend_texts


def test_family_threshold_is_bonferroni_and_never_below_four():
    from scipy.stats import norm

    from bayesgen.checks.comparison import family_wise_threshold

    assert family_wise_threshold(1) == 4.0  # Φ⁻¹(1 − 0.0005) = 3.29 < 4
    for n in (650, 17_000):
        expected = norm.isf(0.001 / (2 * n))  # a 0.1 % family-wise rate
        assert family_wise_threshold(n) == pytest.approx(expected, rel=1e-9)
        assert expected > 4


def test_family_threshold_lets_a_chance_outlier_pass_but_not_a_wrong_prior():
    est = MultinomialNB(
        inference="conjugate", draws=500, compute_map=False, random_seed=0, prior_draws=0
    ).fit(*count_data())
    from scipy.stats import norm

    result = compare(est, z_threshold="family")
    assert result.ok
    n_checked = int(np.isfinite(result.table["z"]).sum() + np.isfinite(result.table["z_sd"]).sum())
    n_checked += int(result.joint[["z_mean", "z_spread"]].notna().to_numpy().sum())
    # means, SDs and the joint statistics' location and spread, 0.1 % family-wise
    expected = max(4.0, norm.isf(0.001 / (2 * n_checked)))
    assert result.settings["z_threshold"] == pytest.approx(expected, rel=1e-9)
    wrong = compare(est, z_threshold="family", alpha=est.alpha + 1.0)
    assert not wrong.table["agrees"].all()
    with pytest.raises(ValueError, match="z_threshold"):
        compare(est, z_threshold="bonferroni")


# --------------------------------------------------------------------------------------------
# The comparison asks each model family; it holds no model ladder.


def family_training_data(kind: str):
    rng = np.random.default_rng(3)
    y = np.repeat(["a", "b", "c"], 8)
    if kind == "real":
        return rng.normal(size=(24, 2)) + (np.arange(24) % 3)[:, None], y
    X = rng.poisson(1.5, size=(24, 3))
    return (np.minimum(X, 1) if kind == "binary" else np.minimum(X, 2)), y


def _family_names():
    from bayesgen.families import FAMILIES

    return sorted(FAMILIES)


@pytest.mark.parametrize("name", _family_names())
def test_every_family_expects_one_block_per_posterior_variable_in_order(name):
    from bayesgen.families import family

    model_family = family(name)
    stats = model_family.fit(*family_training_data(model_family.feature_kind))
    blocks = model_family.expected(
        stats,
        alpha=stats.attrs.get("alpha"),
        class_alpha=stats.attrs["class_alpha"],
        options={},
        map_method=None,
    )
    dims = model_family.parameter_dims(stats)
    assert [block.variable for block in blocks] == list(dims)
    for block in blocks:
        assert np.shape(block.closed_form) == stats[block.variable].shape
        assert np.shape(block.keep) == stats[block.variable].shape


def test_a_family_per_draw_identity_fails_exactly_the_rows_it_flags(monkeypatch):
    from bayesgen.families import family
    from bayesgen.families.results import DrawIdentity

    est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0, prior_draws=0)
    est.fit(*count_data())
    errors = np.zeros((3, 4))
    errors[1, 2] = 7.0  # ham, meeting: 7 tolerances off in some draw
    identity = DrawIdentity(
        statements={"feature_prob": "feature_prob = itself"},
        errors={"feature_prob": errors},
        failure="feature_prob values are not themselves",
    )
    monkeypatch.setattr(family("multinomial_nb"), "draw_identities", lambda posterior: [identity])
    result = compare(est)
    failed = result.table.loc[~result.table["agrees"], ["variable", "coords"]]
    assert failed.values.tolist() == [["feature_prob", "ham, meeting"]]
    assert not result.ok
    row = result.identities[result.identities["identity"] == "feature_prob = itself"]
    assert row[["checked", "satisfied"]].values.tolist() == [[12, 11]]
    assert any(
        w.startswith("1 feature_prob values are not themselves (worst: feature_prob[ham, meeting]")
        for w in result.warnings
    )


def test_package_level_compare_is_a_plain_function():
    import inspect

    import bayesgen
    import bayesgen.checks.comparison

    assert inspect.isfunction(bayesgen.compare)
    assert bayesgen.compare is bayesgen.checks.comparison.compare


def test_feature_expected_names_a_model_without_lambda():
    est = GaussianDiscriminantAnalysis(inference="conjugate", compute_map=False)
    est.fit(*family_training_data("real"))
    with pytest.raises(ValueError, match="feature_expected needs a naive Bayes model; got 'gda'"):
        est.model_.feature_expected(est.closed_form_, 1.0)


def test_alpha_is_refused_for_gda_by_name():
    est = GaussianDiscriminantAnalysis(inference="conjugate", compute_map=False, random_seed=0)
    est.fit(*family_training_data("real"))
    with pytest.raises(ValueError, match="alpha: GDA has no λ; pass class_alpha"):
        compare(est, alpha=1.0)
