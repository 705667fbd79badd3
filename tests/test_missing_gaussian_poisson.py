"""Missing entries in Gaussian and Poisson naive Bayes, integrated out (missing at random).

A missing x_ij drops out of the likelihood: each cell (class, feature) is updated by the rows of
its class where the feature is observed. The expectations are written here from X and y: the
textbook normal–inverse-gamma and Gamma–Poisson updates over each cell's observed entries, the
evidence as the chain rule of SciPy's predictive densities, refits without a row, and SciPy's
densities over the observed features; never taken from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats as scipy_stats
from scipy.special import gammaln, softmax

import bayesgen
from bayesgen import closed_form
from bayesgen.estimators.gaussian_nb import GaussianNB
from bayesgen.estimators.poisson_nb import PoissonNB
from bayesgen.families.gaussian_nb import posterior_parameters
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma

FAST = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
M0, K0, A0, B0 = np.array([0.5, -0.5, 0.0]), 0.7, 2.0, np.array([1.3, 0.6, 0.9])
PRIOR = NormalInverseGamma(mean=M0, kappa=K0, shape=A0, scale=B0)
RATE_PRIOR = (2.0, 0.5)  # Gamma(a₀, b₀), shape and rate
CLASSES = np.array(["a", "b"])


def real_data(seed=0, n=(12, 9), share=0.15):
    """Two classes of three real features, about ``share`` of the entries missing (every
    column keeps an observed entry)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(CLASSES, n)
    means = np.array([[0.0, 1.0, -0.5], [2.0, -1.0, 0.5]])[np.searchsorted(CLASSES, y)]
    X = rng.normal(means, [1.0, 0.5, 1.5])
    X[rng.random(X.shape) < share] = np.nan
    return X, y


def count_data(seed=0, n=(12, 9), share=0.15):
    rng = np.random.default_rng(seed)
    y = np.repeat(CLASSES, n)
    rates = np.array([[1.0, 4.0, 0.5], [3.0, 1.0, 2.5]])[np.searchsorted(CLASSES, y)]
    X = rng.poisson(rates).astype(float)
    X[rng.random(X.shape) < share] = np.nan
    return X, y


# --------------------------------------------------------------------------------------------
# Textbook updates over each cell's observed entries.


def nig_posterior(X, y, prior=(M0, K0, A0, B0)):
    m0, k0, a0, b0 = prior
    out = {key: np.zeros((2, X.shape[1])) for key in ("mean", "kappa", "shape", "scale")}
    for k, label in enumerate(CLASSES):
        for j in range(X.shape[1]):
            x = X[y == label, j]
            x = x[~np.isnan(x)]
            n = len(x)
            mean = x.mean() if n else 0.0
            squares = ((x - mean) ** 2).sum()
            kappa = k0 + n
            out["mean"][k, j] = (k0 * m0[j] + n * mean) / kappa
            out["kappa"][k, j] = kappa
            out["shape"][k, j] = a0 + n / 2
            out["scale"][k, j] = b0[j] + squares / 2 + k0 * n * (mean - m0[j]) ** 2 / (2 * kappa)
    return out


def student_t_logpdf(x, m, kappa, a, b):
    return scipy_stats.t.logpdf(x, 2 * a, loc=m, scale=np.sqrt(b * (kappa + 1) / (a * kappa)))


def nig_sequential_log_evidence(x, m, kappa, a, b):
    """log p(x_1, …, x_n) by the chain rule: each x_i's Student-t given the ones before it."""
    total = 0.0
    for value in x:
        total += student_t_logpdf(value, m, kappa, a, b)
        b = b + kappa * (value - m) ** 2 / (2 * (kappa + 1))
        m = (kappa * m + value) / (kappa + 1)
        kappa, a = kappa + 1, a + 0.5
    return total


def gamma_posterior(X, y, prior=RATE_PRIOR):
    a0, b0 = prior
    shape, rate = np.zeros((2, X.shape[1])), np.zeros((2, X.shape[1]))
    for k, label in enumerate(CLASSES):
        for j in range(X.shape[1]):
            x = X[y == label, j]
            x = x[~np.isnan(x)]
            shape[k, j], rate[k, j] = a0 + x.sum(), b0 + len(x)
    return shape, rate


def nbinom_logpmf(x, a, b):
    return scipy_stats.nbinom.logpmf(x, a, b / (b + 1))


def label_log_evidence(y, alpha=1.0):
    """The labels in order under Dirichlet(α, α)."""
    counts = np.array([np.sum(y == label) for label in CLASSES])
    return (
        gammaln(2 * alpha)
        - gammaln(counts.sum() + 2 * alpha)
        + (gammaln(counts + alpha) - gammaln(alpha)).sum()
    )


def class_term(y, alpha=1.0):
    counts = np.array([np.sum(y == label) for label in CLASSES])
    return np.log((counts + alpha) / (counts.sum() + 2 * alpha))


def gaussian_predictive_joint(x, X, y):
    post = nig_posterior(X, y)
    seen = ~np.isnan(x)
    density = student_t_logpdf(
        x[None, seen],
        post["mean"][:, seen],
        post["kappa"][:, seen],
        post["shape"][:, seen],
        post["scale"][:, seen],
    )
    return class_term(y) + density.sum(axis=1)


def poisson_predictive_joint(x, X, y):
    shape, rate = gamma_posterior(X, y)
    seen = ~np.isnan(x)
    density = nbinom_logpmf(x[None, seen], shape[:, seen], rate[:, seen])
    return class_term(y) + density.sum(axis=1)


# --------------------------------------------------------------------------------------------
# Complete data: as before, no cell counts.


def test_complete_data_have_no_cell_count_and_the_textbook_posterior():
    X, y = real_data(share=0.0)
    gaussian = GaussianNB(prior=PRIOR, **FAST).fit(X, y).closed_form_
    assert "cell_count" not in gaussian
    post = nig_posterior(X, y)
    np.testing.assert_allclose(gaussian["mu"].values, post["mean"], rtol=1e-13)
    np.testing.assert_allclose(
        gaussian["var"].values, post["scale"] / (post["shape"] - 1), rtol=1e-13
    )
    counts, cy = count_data(share=0.0)
    poisson = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(counts, cy).closed_form_
    assert "cell_count" not in poisson
    shape, rate = gamma_posterior(counts, cy)
    np.testing.assert_allclose(poisson["feature_rate"].values, shape / rate, rtol=1e-14)
    # The same data with a NaN-free float copy and as a list: bit for bit the same fit.
    again = GaussianNB(prior=PRIOR, **FAST).fit(X.tolist(), list(y)).closed_form_
    for name in ("class_mean", "sum_squares", "mu", "var"):
        np.testing.assert_array_equal(gaussian[name].values, again[name].values)


# --------------------------------------------------------------------------------------------
# Posterior and evidence per cell.


def test_gaussian_cells_follow_the_textbook_update_of_their_observed_entries():
    X, y = real_data()
    assert 0.08 < np.isnan(X).mean() < 0.25
    fit = GaussianNB(prior=PRIOR, **FAST).fit(X, y).closed_form_
    expected_cells = [[np.sum(~np.isnan(X[y == label, j])) for j in range(3)] for label in CLASSES]
    np.testing.assert_array_equal(fit["cell_count"].values, expected_cells)
    np.testing.assert_array_equal(fit["class_count"].values, [12, 9])
    post = nig_posterior(X, y)
    got = posterior_parameters(fit)
    for key in post:
        np.testing.assert_allclose(got[key], post[key], rtol=1e-12, err_msg=key)
    np.testing.assert_allclose(fit["var"].values, post["scale"] / (post["shape"] - 1), rtol=1e-12)
    mle_mean = [[np.nanmean(X[y == label, j]) for j in range(3)] for label in CLASSES]
    mle_var = [[np.nanvar(X[y == label, j]) for j in range(3)] for label in CLASSES]
    np.testing.assert_allclose(fit["mu_mle"].values, mle_mean, rtol=1e-12)
    np.testing.assert_allclose(fit["var_mle"].values, mle_var, rtol=1e-12)


def test_gaussian_default_prior_is_centred_on_the_observed_entries():
    X, y = real_data()
    fit = GaussianNB(**FAST).fit(X, y).closed_form_
    np.testing.assert_allclose(fit["prior_mean"].values, np.nanmean(X, axis=0), rtol=1e-12)
    np.testing.assert_allclose(fit["prior_scale"].values, 0.5 * np.nanvar(X, axis=0), rtol=1e-12)


def test_poisson_cells_follow_the_gamma_update_of_their_observed_entries():
    X, y = count_data()
    fit = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(X, y).closed_form_
    shape, rate = gamma_posterior(X, y)
    np.testing.assert_allclose(fit["feature_rate"].values, shape / rate, rtol=1e-14)
    marginal = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(X, y).model_.exact_marginals(fit)
    np.testing.assert_allclose(marginal["feature_rate"].sd, np.sqrt(shape) / rate, rtol=1e-14)
    # The default prior's m̄ is the mean of the observed entries.
    default = PoissonNB(**FAST).fit(X, y).closed_form_
    assert default.attrs["rate_prior_rate"] == pytest.approx(1.0 / np.nanmean(X), rel=1e-14)


def test_the_evidence_is_the_sum_of_each_cells_evidence_of_its_observed_entries():
    X, y = real_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    cells = 0.0
    for label in CLASSES:
        for j in range(3):
            x = X[y == label, j]
            cells += nig_sequential_log_evidence(x[~np.isnan(x)], M0[j], K0, A0, B0[j])
    expected = label_log_evidence(y) + cells
    assert closed_form.log_evidence(est.closed_form_) == pytest.approx(expected, abs=1e-9)

    counts, cy = count_data()
    poisson = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(counts, cy)
    total = label_log_evidence(cy)
    for label in CLASSES:
        for j in range(3):
            x = counts[cy == label, j]
            a, b = RATE_PRIOR
            for value in x[~np.isnan(x)]:
                total += nbinom_logpmf(value, a, b)
                a, b = a + value, b + 1
    assert closed_form.log_evidence(poisson.closed_form_) == pytest.approx(total, abs=1e-9)


def test_the_evidence_chosen_priors_search_the_observed_entries():
    """The evidence of the chosen prior is at least that of nearby priors (a maximum)."""
    X, y = real_data(n=(30, 25))
    est = GaussianNB(prior="evidence", **FAST).fit(X, y)
    chosen = est.prior_
    best = closed_form.log_evidence(est.closed_form_)
    for factor in (0.7, 1.4):
        for field in ("kappa", "shape"):
            values = {
                "mean": chosen.mean,
                "kappa": chosen.kappa,
                "shape": chosen.shape,
                "scale": chosen.scale,
            }
            values[field] = values[field] * factor
            if field == "shape":  # keep r = b₀ / (a₀ s²) as chosen
                values["scale"] = chosen.scale * factor
            other = GaussianNB(prior=NormalInverseGamma(**values), **FAST).fit(X, y)
            assert closed_form.log_evidence(other.closed_form_) < best
    counts, cy = count_data(n=(30, 25))
    poisson = PoissonNB(rate_prior="evidence", **FAST).fit(counts, cy)
    shape, rate = poisson.rate_prior_
    best = closed_form.log_evidence(poisson.closed_form_)
    for moved in ((shape * 1.5, rate * 1.5), (shape / 1.5, rate / 1.5), (shape, rate * 1.3)):
        other = PoissonNB(rate_prior=moved, **FAST).fit(counts, cy)
        assert closed_form.log_evidence(other.closed_form_) < best


def test_a_class_whose_rows_all_miss_a_feature_keeps_the_prior_there():
    X, y = real_data()
    X[y == "b", 1] = np.nan
    fit = GaussianNB(prior=PRIOR, **FAST).fit(X, y).closed_form_
    assert fit["cell_count"].values[1, 1] == 0
    assert fit["mu"].values[1, 1] == pytest.approx(M0[1], rel=1e-15)
    assert fit["var"].values[1, 1] == pytest.approx(B0[1] / (A0 - 1), rel=1e-15)
    assert np.isnan(fit["mu_mle"].values[1, 1]) and np.isnan(fit["var_mle"].values[1, 1])
    counts, cy = count_data()
    counts[cy == "a", 2] = np.nan
    poisson = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(counts, cy).closed_form_
    assert poisson["feature_rate"].values[0, 2] == pytest.approx(2.0 / 0.5, rel=1e-15)


# --------------------------------------------------------------------------------------------
# Leave-one-out and predictions.


def test_gaussian_exact_leave_one_out_equals_refitting_without_each_row():
    X, y = real_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    refits = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refit = GaussianNB(prior=PRIOR, **FAST).fit(X[keep], y[keep])
        refits.append(refit.model_.predictive_log_joint(refit.closed_form_, X[i : i + 1])[0])
        np.testing.assert_allclose(
            refits[-1], gaussian_predictive_joint(X[i], X[keep], y[keep]), rtol=1e-11
        )
    refits = np.stack(refits)
    codes = np.searchsorted(est.classes_, y)
    np.testing.assert_allclose(
        est.model_.loo_log_joint(est.closed_form_, X, codes), refits, rtol=1e-10
    )
    np.testing.assert_allclose(bayesgen.loo_proba(est), softmax(refits, axis=1), rtol=1e-9)


def test_poisson_exact_leave_one_out_equals_refitting_without_each_row():
    X, y = count_data()
    est = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(X, y)
    refits = np.stack(
        [
            poisson_predictive_joint(X[i], X[np.arange(len(y)) != i], y[np.arange(len(y)) != i])
            for i in range(len(y))
        ]
    )
    codes = np.searchsorted(est.classes_, y)
    np.testing.assert_allclose(
        est.model_.loo_log_joint(est.closed_form_, X, codes), refits, rtol=1e-10
    )
    np.testing.assert_allclose(bayesgen.loo_proba(est), softmax(refits, axis=1), rtol=1e-9)


def test_the_exact_predictive_drops_the_missing_factors():
    X, y = real_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    rows = np.array([[0.3, np.nan, -1.0], [np.nan, 0.2, np.nan], [1.5, -0.5, 0.1]])
    joint = np.stack([gaussian_predictive_joint(row, X, y) for row in rows])
    np.testing.assert_allclose(
        est.posterior_predictive_proba(rows), softmax(joint, axis=1), rtol=1e-10
    )
    # The same as a model fitted without the missing feature's column.
    keep = [0, 2]
    narrow = GaussianNB(
        prior=NormalInverseGamma(mean=M0[keep], kappa=K0, shape=A0, scale=B0[keep]), **FAST
    ).fit(X[:, keep], y)
    # (Rows 0 and 2: a column with no observed entry at all is refused.)
    np.testing.assert_allclose(
        est.posterior_predictive_proba(rows[[0, 2]])[0],
        narrow.posterior_predictive_proba(rows[:1, keep])[0],
        rtol=1e-12,
    )

    counts, cy = count_data()
    poisson = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(counts, cy)
    rows = np.array([[1.0, np.nan, 0.0], [np.nan, 3.0, np.nan], [2.0, 0.0, 4.0]])
    joint = np.stack([poisson_predictive_joint(row, counts, cy) for row in rows])
    np.testing.assert_allclose(
        poisson.posterior_predictive_proba(rows), softmax(joint, axis=1), rtol=1e-10
    )


def test_draw_by_draw_likelihoods_drop_the_missing_factors():
    rng = np.random.default_rng(1)
    X, y = real_data()
    est = GaussianNB(prior=PRIOR, **FAST).fit(X, y)
    prob = rng.dirichlet([1, 1], size=4)
    mu, var = rng.normal(size=(4, 2, 3)), rng.gamma(2.0, size=(4, 2, 3))
    draws = xr.Dataset(
        {
            "class_prob": (("draw", "class"), prob),
            "mu": (("draw", "class", "feature"), mu),
            "var": (("draw", "class", "feature"), var),
        }
    )
    got = est.model_.draw_log_joint(est.closed_form_, X, draws)
    seen = ~np.isnan(X)
    expected = np.log(prob)[:, None, :] + np.stack(
        [
            np.where(
                seen[:, None, :], scipy_stats.norm.logpdf(X[:, None, :], mu[s], np.sqrt(var[s])), 0
            ).sum(-1)
            for s in range(4)
        ]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    codes = np.searchsorted(CLASSES, y)
    rows = est.model_.row_log_likelihood(est.closed_form_, X, codes, draws)
    np.testing.assert_allclose(rows, expected[:, np.arange(len(y)), codes], rtol=1e-12)

    counts, cy = count_data()
    poisson = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(counts, cy)
    rates = rng.gamma(2.0, size=(4, 2, 3))
    draws = xr.Dataset(
        {
            "class_prob": (("draw", "class"), prob),
            "feature_rate": (("draw", "class", "feature"), rates),
        }
    )
    seen = ~np.isnan(counts)
    full = np.log(prob)[:, None, :] + np.stack(
        [
            np.where(
                seen[:, None, :], scipy_stats.poisson.logpmf(counts[:, None, :], rates[s]), 0
            ).sum(-1)
            for s in range(4)
        ]
    )
    codes = np.searchsorted(CLASSES, cy)
    rows = poisson.model_.row_log_likelihood(poisson.closed_form_, counts, codes, draws)
    np.testing.assert_allclose(rows, full[:, np.arange(len(cy)), codes], rtol=1e-12)
    joint = poisson.model_.draw_log_joint(poisson.closed_form_, counts, draws)
    joint += poisson.model_.row_log_constant(counts)[None, :, None]
    np.testing.assert_allclose(joint, full, rtol=1e-12)


def test_predict_proba_with_a_nan_is_the_model_without_that_feature():
    X, y = real_data()
    est = GaussianNB(prior=PRIOR, draws=200, chains=2, **{**FAST, "random_seed": 3}).fit(X, y)
    rows = np.array([[0.3, np.nan, -1.0], [0.1, 0.2, 0.3]])
    proba = est.predict_proba(rows)
    samples = est.idata_["posterior"].to_dataset()
    mu = samples["mu"].values.reshape(-1, 2, 3)
    var = samples["var"].values.reshape(-1, 2, 3)
    prob = samples["class_prob"].values.reshape(-1, 2)
    seen = ~np.isnan(rows)
    log = np.log(prob)[:, None, :] + np.where(
        seen[None, :, None, :],
        scipy_stats.norm.logpdf(rows[None, :, None, :], mu[:, None], np.sqrt(var[:, None])),
        0.0,
    ).sum(-1)
    np.testing.assert_allclose(proba, softmax(log, axis=-1).mean(axis=0), rtol=1e-10)
    lower, upper = est.predict_proba_interval(rows)
    assert np.all(lower <= proba) and np.all(proba <= upper)


def test_a_row_with_every_feature_missing_predicts_the_class_prior():
    """The exact predictive gives E[π | y]; predict_proba averages p(y | x, θ) = π over the
    draws, so it gives the mean of the draws of π."""
    X, y = real_data()
    rows = np.array([[np.nan, np.nan, np.nan], [0.0, 0.0, 0.0]])  # a column needs one entry
    prior = np.array([12 + 1, 9 + 1]) / (21 + 2)
    counts, cy = count_data()
    for est in (
        GaussianNB(prior=PRIOR, **FAST).fit(X, y),
        PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(counts, cy),
    ):
        np.testing.assert_allclose(est.posterior_predictive_proba(rows)[0], prior, rtol=1e-12)
        draws = est.idata_["posterior"]["class_prob"].values.reshape(-1, 2)
        np.testing.assert_allclose(est.predict_proba(rows)[0], draws.mean(axis=0), rtol=1e-12)
        assert est.predict_proba(rows)[0] == pytest.approx(prior, abs=0.01)


# --------------------------------------------------------------------------------------------
# partial_fit, the inputs, simulation.


@pytest.mark.parametrize("make", ["gaussian", "poisson"])
def test_partial_fit_over_chunks_with_nan_equals_one_fit_and_leaves_x_alone(make):
    X, y = real_data() if make == "gaussian" else count_data()
    X[:4] = np.nan_to_num(X[:4], nan=1.0)  # one chunk without any missing entry
    order = np.r_[0:4, 12:16, 4:12, 16:21]
    X, y = X[order], y[order]
    X.setflags(write=False)
    copy = X.copy()
    Estimator, prior = (
        (GaussianNB, {"prior": PRIOR})
        if make == "gaussian"
        else (PoissonNB, {"rate_prior": RATE_PRIOR})
    )
    one = Estimator(**prior, **FAST).fit(X, y).closed_form_
    chunked = Estimator(**prior, **FAST)
    for start in (0, 8, 14):
        rows = slice(start, {0: 8, 8: 14, 14: 21}[start])
        chunked.partial_fit(X[rows], y[rows], classes=CLASSES)
    merged = chunked.closed_form_
    assert (
        "cell_count"
        not in Estimator(**prior, **FAST).partial_fit(X[:4], y[:4], classes=CLASSES).closed_form_
    )
    for name in one.data_vars:
        np.testing.assert_allclose(merged[name].values, one[name].values, rtol=1e-12, err_msg=name)
    np.testing.assert_array_equal(X, copy)


def test_simulations_keep_the_missing_pattern():
    X, y = real_data()
    est = GaussianNB(**FAST).fit(X, y)
    codes = np.searchsorted(CLASSES, y)
    rng = np.random.default_rng(0)
    parameters = {"mu": np.zeros((2, 3)), "var": np.ones((2, 3))}
    simulated = est.model_.simulate_rows(est.closed_form_, X, codes, parameters, rng)
    np.testing.assert_array_equal(np.isnan(simulated), np.isnan(X))
    stats = est.model_.predictive_statistics(est.closed_form_, X, codes)["class_feature_mean"][1]
    expected = [[np.nanmean(X[y == label, j]) for j in range(3)] for label in CLASSES]
    np.testing.assert_allclose(stats, expected, rtol=1e-12)
    counts, cy = count_data()
    poisson = PoissonNB(**FAST).fit(counts, cy)
    simulated = poisson.model_.simulate_rows(
        poisson.closed_form_, counts, codes, {"feature_rate": np.ones((2, 3))}, rng
    )
    np.testing.assert_array_equal(np.isnan(simulated), np.isnan(counts))
    stats = poisson.model_.predictive_statistics(poisson.closed_form_, counts, codes)
    np.testing.assert_array_equal(stats["row_total"][1], np.nansum(counts, axis=1))
    np.testing.assert_array_equal(stats["zero_counts"][1], (counts == 0).sum(axis=1))


# --------------------------------------------------------------------------------------------
# compare() and SBC.


@pytest.mark.parametrize("make", ["gaussian", "poisson"])
def test_compare_agrees_with_exact_draws_in_49_of_50_seeds(make):
    X, y = real_data() if make == "gaussian" else count_data()
    failed = []
    for seed in range(50):
        if make == "gaussian":
            est = GaussianNB(
                prior=PRIOR, inference="conjugate", draws=500, chains=2, random_seed=seed
            )
        else:
            est = PoissonNB(
                rate_prior=RATE_PRIOR, inference="conjugate", draws=500, chains=2, random_seed=seed
            )
        result = bayesgen.compare(est.fit(X, y))
        if not result.ok:
            failed.append(seed)
    assert len(failed) <= 1, failed


@pytest.mark.parametrize("make", ["gaussian", "poisson"])
def test_sbc_is_calibrated_with_missing_entries(make):
    X, y = real_data() if make == "gaussian" else count_data()
    est = (GaussianNB if make == "gaussian" else PoissonNB)(**FAST).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert result.ok, str(result)


# --------------------------------------------------------------------------------------------
# NUTS on the PyMC models.


@pytest.mark.slow
@pytest.mark.parametrize("make", ["gaussian", "poisson"])
def test_nuts_on_the_pymc_model_with_missing_entries_agrees_with_the_closed_forms(make):
    X, y = real_data() if make == "gaussian" else count_data()
    X[y == "b", 1] = np.nan  # a cell without any observed row: its prior
    options = {"draws": 1000, "tune": 1000, "chains": 2, "random_seed": 0, "progressbar": False}
    if make == "gaussian":
        est = GaussianNB(prior=PRIOR, **options)
    else:
        est = PoissonNB(rate_prior=RATE_PRIOR, **options)
    result = bayesgen.compare(est.fit(X, y))
    assert result.ok, str(result)
