"""Missing entries in Bernoulli and categorical naive Bayes (issue 23), and CategoricalNB's
``handle_unknown``.

Under missing at random a missing entry's factor drops out of the likelihood, so each (class,
feature) cell's posterior counts only the rows observed there. Every expected value below is
computed by hand from X and y (Beta / Dirichlet posteriors, Beta-binomial and
Dirichlet-multinomial evidence with ``gammaln``, the joint over the observed features), or by
refitting without a row; none is read off the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.special import betaln, gammaln, logsumexp
from scipy.stats import beta as beta_dist
from scipy.stats import gamma as gamma_dist

import bayesgen
from bayesgen import BernoulliNB, CategoricalNB, MultinomialNB, closed_form
from bayesgen.families import family

#: Category counts of the categorical data's features.
WIDTHS = (2, 3, 4)
CONJUGATE = {"inference": "conjugate", "draws": 200, "chains": 2, "compute_map": False}


def binary_data(seed=0, n=60, n_features=5, share=0.15):
    """0/1 rows of two classes with about ``share`` of the entries missing (NaN), every
    column keeping observed entries in each class."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], [n // 2, n - n // 2])
    prob = np.where(y[:, None] == 0, 0.3, 0.7) * np.linspace(0.5, 1.2, n_features)
    X = (rng.random((n, n_features)) < np.clip(prob, 0.05, 0.95)).astype(np.float64)
    X[rng.random(X.shape) < share] = np.nan
    return X, y


def categorical_data(seed=0, n=60, share=0.15):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], [n // 2, n - n // 2])
    X = np.column_stack([rng.integers(0, k, n) for k in WIDTHS]).astype(np.float64)
    X[rng.random(X.shape) < share] = np.nan
    return X, y


def hand_bernoulli(X, y, lam=1.0):
    """(present, observed rows) per (class, feature) and the Beta posterior mean."""
    present = np.array([[np.nansum(X[y == k, j]) for j in range(X.shape[1])] for k in (0, 1)])
    rows = np.array([[np.sum(~np.isnan(X[y == k, j])) for j in range(X.shape[1])] for k in (0, 1)])
    return present, rows, (present + lam) / (rows + 2 * lam)


def hand_categorical(X, y, lam=1.0):
    """Category counts (class, feature, category), padded with 0 beyond each K_n, and the
    Dirichlet posterior mean over the real categories."""
    width = max(WIDTHS)
    counts = np.zeros((2, len(WIDTHS), width))
    for k in (0, 1):
        for n, K in enumerate(WIDTHS):
            column = X[y == k, n]
            for c in range(K):
                counts[k, n, c] = np.sum(column == c)
    totals = counts.sum(axis=-1, keepdims=True)
    real = np.arange(width) < np.array(WIDTHS)[:, None]
    mean = np.where(real, (counts + lam) / (totals + np.array(WIDTHS)[:, None] * lam), 0.0)
    return counts, real, mean


def hand_class_prob(y, a=1.0):
    counts = np.bincount(y, minlength=2)
    return (counts + a) / (counts.sum() + 2 * a)


def class_log_evidence(y, a=1.0):
    counts = np.bincount(y, minlength=2).astype(float)
    return gammaln(2 * a) - gammaln(counts.sum() + 2 * a) + np.sum(gammaln(counts + a) - gammaln(a))


# --------------------------------------------------------------------------------------------
# Without a missing entry nothing changes.


@pytest.mark.parametrize("name", ["bernoulli_nb", "categorical_nb"])
def test_without_missing_entries_the_fit_has_no_cell_count(name):
    X, y = binary_data(share=0.0)
    fit = family(name).fit(X, y, alpha=0.7)
    assert "cell_count" not in fit
    assert "cell_count" not in family(name).statistics_of(fit)
    if name == "bernoulli_nb":
        present, rows, _ = hand_bernoulli(X, y)
        np.testing.assert_allclose(fit["feature_prob"].values, (present + 0.7) / (rows + 1.4))


# --------------------------------------------------------------------------------------------
# The posterior, the evidence and the pooled prior mean, by hand.


@pytest.mark.parametrize("lam", [1.0, 0.5])
def test_bernoulli_cells_have_the_beta_posterior_of_their_observed_rows(lam):
    X, y = binary_data()
    assert 0.1 < np.isnan(X).mean() < 0.2
    fit = closed_form.bernoulli_nb(X, y, alpha=lam)
    present, rows, mean = hand_bernoulli(X, y, lam)
    np.testing.assert_array_equal(fit["cell_count"].values, rows)
    np.testing.assert_array_equal(fit["feature_count"].values, present)
    np.testing.assert_allclose(fit["feature_prob"].values, mean, rtol=1e-12)
    np.testing.assert_allclose(fit["feature_prob_mle"].values, present / rows, rtol=1e-12)
    # The Beta marginals: their SD and mode are the textbook ones of Beta(n1 + λ, n0 + λ).
    a, b = present + lam, rows - present + lam
    marginal = family("bernoulli_nb").exact_marginals(fit)["feature_prob"]
    np.testing.assert_allclose(marginal.mean, a / (a + b), rtol=1e-12)
    np.testing.assert_allclose(
        marginal.sd, np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))), rtol=1e-12
    )
    np.testing.assert_allclose(marginal.distribution.ppf(0.9), beta_dist(a, b).ppf(0.9))
    mode = family("bernoulli_nb").conjugate_mode(fit)["feature_prob"][1]
    if lam >= 1.0:
        np.testing.assert_allclose(mode, (a - 1) / (a + b - 2), rtol=1e-12)


def test_categorical_cells_have_the_dirichlet_posterior_of_their_observed_rows():
    X, y = categorical_data()
    fit = closed_form.categorical_nb(X, y, alpha=1.0)
    counts, real, mean = hand_categorical(X, y)
    np.testing.assert_array_equal(fit["feature_count"].values, counts)
    np.testing.assert_array_equal(fit["cell_count"].values, counts.sum(axis=-1))
    np.testing.assert_allclose(fit["feature_prob"].values, mean, rtol=1e-12)
    assert fit["n_categories"].values.tolist() == list(WIDTHS)
    concentration = np.where(real, counts + 1.0, 0.0)
    marginal = family("categorical_nb").exact_marginals(fit)["feature_prob"]
    a0 = concentration.sum(axis=-1, keepdims=True)
    m = concentration / a0
    np.testing.assert_allclose(marginal.mean, m, rtol=1e-12)
    np.testing.assert_allclose(marginal.sd, np.sqrt(m * (1 - m) / (a0 + 1)), rtol=1e-12)
    mode = family("categorical_nb").conjugate_mode(fit)["feature_prob"][1]
    totals = counts.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(
        mode, np.where(real, counts / totals, 0.0), rtol=1e-12, atol=1e-15
    )  # Dirichlet(c + 1): its mode is c / T


def test_bernoulli_evidence_is_the_sum_of_beta_binomial_terms_over_cells():
    X, y = binary_data()
    lam = 0.8
    fit = closed_form.bernoulli_nb(X, y, alpha=lam, class_alpha=1.5)
    present, rows, _ = hand_bernoulli(X, y)
    expected = class_log_evidence(y, 1.5) + np.sum(
        betaln(present + lam, rows - present + lam) - betaln(lam, lam)
    )
    assert closed_form.log_evidence(fit) == pytest.approx(expected, rel=1e-12)


def test_categorical_evidence_is_the_sum_of_dirichlet_multinomial_terms_over_cells():
    X, y = categorical_data()
    lam = 0.6
    fit = closed_form.categorical_nb(X, y, alpha=lam)
    counts, _, _ = hand_categorical(X, y)
    expected = class_log_evidence(y)
    for k in (0, 1):
        for n, K in enumerate(WIDTHS):
            c = counts[k, n, :K]
            expected += gammaln(K * lam) - gammaln(c.sum() + K * lam)
            expected += np.sum(gammaln(c + lam) - gammaln(lam))
    assert closed_form.log_evidence(fit) == pytest.approx(expected, rel=1e-12)


def test_the_evidence_chooses_the_lambda_that_maximises_the_hand_evidence():
    X, y = binary_data()
    present, rows, _ = hand_bernoulli(X, y)
    grid = np.exp(np.linspace(np.log(0.05), np.log(50), 4001))
    hand = [np.sum(betaln(present + g, rows - present + g) - betaln(g, g)) for g in grid]
    est = BernoulliNB(alpha="evidence", **CONJUGATE).fit(X, y)
    assert est.alpha_ == pytest.approx(grid[int(np.argmax(hand))], rel=5e-3)


def test_a_gamma_hyperprior_integrates_lambda_over_the_hand_evidence():
    X, y = binary_data()
    present, rows, _ = hand_bernoulli(X, y)

    def integrand(lam):
        log_features = np.sum(betaln(present + lam, rows - present + lam) - betaln(lam, lam))
        return np.exp(log_features + gamma_dist(2.0, scale=1.0).logpdf(lam) + 180.0)

    value, _ = integrate.quad(integrand, 0, np.inf, epsabs=0, epsrel=1e-11, limit=200)
    est = BernoulliNB(alpha_prior=(2.0, 1.0), **CONJUGATE, random_seed=0).fit(X, y)
    expected = class_log_evidence(y) + np.log(value) - 180.0
    assert closed_form.log_evidence(est.closed_form_) == pytest.approx(expected, rel=1e-8)


def test_the_pooled_prior_mean_counts_the_rows_observed_at_each_feature():
    X, y = binary_data()
    present, rows, _ = hand_bernoulli(X, y)
    fit = closed_form.bernoulli_nb(X, y, alpha=2.0, prior_mean="pooled")
    m = (present.sum(axis=0) + 0.5) / (rows.sum(axis=0) + 1.0)
    np.testing.assert_allclose(fit["prior_weight"].values, 2 * m, rtol=1e-12)
    np.testing.assert_allclose(
        fit["feature_prob"].values, (present + 4.0 * m) / (rows + 4.0), rtol=1e-12
    )


# --------------------------------------------------------------------------------------------
# Prediction: the joint over the observed features.


def _hand_bernoulli_proba(X_train, y, X_new, lam=1.0):
    _, _, phi = hand_bernoulli(X_train, y, lam)
    joint = np.log(hand_class_prob(y))[None, :].repeat(len(X_new), axis=0)
    for i, row in enumerate(X_new):
        seen = ~np.isnan(row)
        joint[i] += np.sum(
            np.where(row[seen] == 1, np.log(phi[:, seen]), np.log1p(-phi[:, seen])), axis=1
        )
    return np.exp(joint - logsumexp(joint, axis=1, keepdims=True))


def test_bernoulli_prediction_drops_the_missing_factors():
    X, y = binary_data()
    X_new = np.array(
        [[1, np.nan, 0, 1, np.nan], [np.nan] * 5, [0, 1, np.nan, np.nan, 1], [1, 1, 0, 0, 1]]
    )
    fit = closed_form.bernoulli_nb(X, y)
    expected = _hand_bernoulli_proba(X, y, X_new)
    np.testing.assert_allclose(closed_form.predict_proba(fit, X_new), expected, rtol=1e-12)
    np.testing.assert_allclose(
        closed_form.posterior_predictive_proba(fit, X_new), expected, rtol=1e-12
    )
    # A row with every feature missing predicts E[π].
    np.testing.assert_allclose(expected[1], hand_class_prob(y), rtol=1e-12)
    est = BernoulliNB(**CONJUGATE, random_seed=0).fit(X, y)
    np.testing.assert_allclose(est.posterior_predictive_proba(X_new), expected, rtol=1e-12)


def test_categorical_prediction_drops_the_missing_factors():
    X, y = categorical_data()
    X_new = np.array([[1, np.nan, 3], [np.nan] * 3, [0, 2, np.nan]])
    fit = closed_form.categorical_nb(X, y)
    _, _, theta = hand_categorical(X, y)
    joint = np.log(hand_class_prob(y))[None, :].repeat(len(X_new), axis=0)
    for i, row in enumerate(X_new):
        for n, code in enumerate(row):
            if not np.isnan(code):
                joint[i] += np.log(theta[:, n, int(code)])
    expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(
        closed_form.posterior_predictive_proba(fit, X_new), expected, rtol=1e-12
    )
    np.testing.assert_allclose(expected[1], hand_class_prob(y), rtol=1e-12)


def test_draw_predictions_average_the_observed_factors_over_the_draws():
    X, y = binary_data()
    est = BernoulliNB(**CONJUGATE, random_seed=1).fit(X, y)
    X_new = np.array([[1, np.nan, 0, 1, np.nan], [np.nan, 0, 1, 1, 0]])
    posterior = est.idata_["posterior"].to_dataset()
    pi = posterior["class_prob"].values.reshape(-1, 2)
    phi = posterior["feature_prob"].values.reshape(-1, 2, X.shape[1])
    expected = np.zeros((len(X_new), 2))
    for i, row in enumerate(X_new):
        seen = ~np.isnan(row)
        joint = np.log(pi) + np.sum(
            np.where(row[seen] == 1, np.log(phi[..., seen]), np.log1p(-phi[..., seen])), axis=-1
        )
        expected[i] = np.mean(np.exp(joint - logsumexp(joint, axis=1, keepdims=True)), axis=0)
    np.testing.assert_allclose(est.predict_proba(X_new), expected, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# Exact leave-one-out: refitting without each row.


def _refit_joint(name, X, y, i, **options):
    """log p(x_i, y = k | D without row i) from a fit without row i, by hand from its
    estimates (the add-λ predictive of each observed feature)."""
    keep = np.arange(len(y)) != i
    fit = getattr(closed_form, name)(X[keep], y[keep], **options)
    joint = np.log(fit["class_prob"].values)
    prob = fit["feature_prob"].values
    for j, x in enumerate(X[i]):
        if np.isnan(x):
            continue
        if name == "bernoulli_nb":
            joint = joint + (np.log(prob[:, j]) if x == 1 else np.log1p(-prob[:, j]))
        else:
            joint = joint + np.log(prob[:, j, int(x)])
    return joint


@pytest.mark.parametrize("name", ["bernoulli_nb", "categorical_nb"])
def test_exact_loo_equals_refitting_without_each_row(name):
    X, y = binary_data(n=30) if name == "bernoulli_nb" else categorical_data(n=30)
    options = {"alpha": 0.7}
    if name == "categorical_nb":
        options["n_categories"] = list(WIDTHS)
    fit = getattr(closed_form, name)(X, y, **options)
    model = family(name)
    loo = model.loo_log_joint(fit, model.training_features(fit, X), y)
    for i in range(len(y)):
        np.testing.assert_allclose(loo[i], _refit_joint(name, X, y, i, **options), rtol=1e-10)
    proba = np.exp(loo - logsumexp(loo, axis=1, keepdims=True))
    estimator = BernoulliNB if name == "bernoulli_nb" else CategoricalNB
    est = estimator(**CONJUGATE, random_seed=0, **options).fit(X, y)
    np.testing.assert_allclose(bayesgen.loo_proba(est), proba, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# compare(), SBC, NUTS.


@pytest.mark.parametrize("estimator", [BernoulliNB, CategoricalNB])
def test_compare_agrees_with_exact_draws_in_49_of_50_seeds(estimator):
    X, y = binary_data(n=40) if estimator is BernoulliNB else categorical_data(n=40)
    failed = []
    for seed in range(50):
        est = estimator(inference="conjugate", draws=500, chains=2, random_seed=seed)
        result = bayesgen.compare(est.fit(X, y))
        if not result.ok:
            failed.append(seed)
    assert len(failed) <= 1, failed


def test_compare_fails_posteriors_that_ignore_the_missing_pattern(monkeypatch):
    # Draws from Beta(n1 + λ, N_k − n1 + λ), a missing entry counted as absent: compare()
    # must see them off the exact posterior.
    X, y = binary_data(n=40, share=0.3)
    model = family("bernoulli_nb")
    exact = type(model).conjugate_draws

    def as_absent(self, estimates, rng, sample_shape, dtype, *, posterior):
        return exact(
            self, estimates.drop_vars("cell_count"), rng, sample_shape, dtype, posterior=posterior
        )

    monkeypatch.setattr(type(model), "conjugate_draws", as_absent)
    est = BernoulliNB(inference="conjugate", draws=500, chains=2, random_seed=0)
    assert not bayesgen.compare(est.fit(X, y)).ok


@pytest.mark.parametrize("estimator", [BernoulliNB, CategoricalNB])
def test_sbc_finds_the_conjugate_posterior_with_missing_entries_calibrated(estimator):
    X, y = binary_data(n=40) if estimator is BernoulliNB else categorical_data(n=40)
    est = estimator(**CONJUGATE, random_seed=0).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert result.ok, str(result)


def test_simulated_rows_keep_the_missing_pattern():
    X, y = binary_data()
    for name, data in (("bernoulli_nb", (X, y)), ("categorical_nb", categorical_data())):
        model = family(name)
        fit = model.fit(*data)
        rows = model.training_features(fit, data[0])
        parameters = {"feature_prob": fit["feature_prob"].values}
        simulated = model.simulate_rows(fit, rows, data[1], parameters, np.random.default_rng(0))
        np.testing.assert_array_equal(np.isnan(simulated), np.isnan(data[0]))
        stats = model.predictive_statistics(fit, simulated, data[1])
        assert all(np.isfinite(np.nan_to_num(v[1], nan=0.0)).all() for v in stats.values())


def test_nuts_with_missing_entries_agrees_with_the_closed_form():
    # About 10 s, compilation included: the Bernoulli model with its cell_count_data trials.
    X, y = binary_data(n=40)
    est = BernoulliNB(
        draws=1500, tune=1000, chains=2, random_seed=0, compute_map=False, prior_draws=50
    ).fit(X, y)
    _, _, mean = hand_bernoulli(X, y)
    posterior = est.idata_["posterior"]["feature_prob"]
    np.testing.assert_allclose(posterior.mean(("chain", "draw")).values, mean, atol=0.02)
    assert bayesgen.compare(est).ok


# --------------------------------------------------------------------------------------------
# partial_fit, inputs kept, handle_unknown, the multinomial's refusal.


@pytest.mark.parametrize("name", ["bernoulli_nb", "categorical_nb"])
def test_partial_fit_with_missing_chunks_equals_one_fit(name):
    X, y = binary_data(share=0.0) if name == "bernoulli_nb" else categorical_data(share=0.0)
    order = np.random.default_rng(1).permutation(len(y))
    X, y = X[order], y[order]  # classes mixed in every chunk
    X[30:][np.random.default_rng(5).random(X[30:].shape) < 0.2] = np.nan  # rows 30 on only
    estimator = BernoulliNB if name == "bernoulli_nb" else CategoricalNB
    one = estimator(**CONJUGATE, random_seed=0).fit(X, y)
    chunked = estimator(**CONJUGATE, random_seed=0)
    for part in np.array_split(np.arange(len(y)), 3):
        chunked.partial_fit(X[part], y[part], classes=[0, 1])
    for variable in ("class_count", "feature_count", "cell_count", "feature_prob"):
        np.testing.assert_allclose(
            chunked.closed_form_[variable].values, one.closed_form_[variable].values, rtol=1e-12
        )
    # A chunk without missing entries first, then one with them.
    first = estimator(**CONJUGATE, random_seed=0).partial_fit(X[:30], y[:30])
    assert "cell_count" not in first.closed_form_
    first.partial_fit(X[30:], y[30:])
    np.testing.assert_allclose(
        first.closed_form_["cell_count"].values, one.closed_form_["cell_count"].values
    )


def test_nan_inputs_are_never_modified():
    X, y = categorical_data()
    X[0, 0] = 7  # an unseen code at prediction (fit on the other rows)
    kept = X.copy()
    est = CategoricalNB(**CONJUGATE, random_seed=0, handle_unknown="ignore").fit(X[1:], y[1:])
    est.predict_proba(X)
    est.posterior_predictive_proba(X)
    np.testing.assert_array_equal(X, kept)
    Xb, yb = binary_data()
    kept = Xb.copy()
    BernoulliNB(**CONJUGATE, random_seed=0, binarize=0.5).fit(Xb, yb).predict(Xb)
    np.testing.assert_array_equal(Xb, kept)


def test_handle_unknown_ignore_equals_the_entry_blanked():
    X, y = categorical_data()
    est = CategoricalNB(**CONJUGATE, random_seed=0, handle_unknown="ignore").fit(X, y)
    unseen = np.array([[1, 5, 3], [9, 2, np.nan], [0, 1, 2]])
    blanked = np.array([[1, np.nan, 3], [np.nan, 2, np.nan], [0, 1, 2]])
    np.testing.assert_allclose(
        est.posterior_predictive_proba(unseen), est.posterior_predictive_proba(blanked)
    )
    np.testing.assert_allclose(est.predict_proba(unseen), est.predict_proba(blanked))
    default = CategoricalNB(**CONJUGATE, random_seed=0).fit(X, y)
    with pytest.raises(ValueError, match=r"category code 5 of feature 'x1'"):
        default.predict(unseen)
    with pytest.raises(ValueError, match="handle_unknown"):
        CategoricalNB(handle_unknown="skip", **CONJUGATE).fit(X, y)


def test_handle_unknown_survives_saving_and_loading(tmp_path):
    X, y = categorical_data(share=0.0)
    est = CategoricalNB(**CONJUGATE, random_seed=0, handle_unknown="ignore").fit(X, y)
    loaded = bayesgen.load(est.save(tmp_path / "categorical.nc"))
    assert loaded.get_params()["handle_unknown"] == "ignore"
    unseen = np.array([[1, 5, 3], [0, 1, 2]])
    np.testing.assert_allclose(loaded.predict_proba(unseen), est.predict_proba(unseen))


def test_multinomial_refuses_a_missing_count_saying_why():
    X = np.array([[1.0, 2.0], [np.nan, 1.0], [3.0, 0.0]])
    with pytest.raises(ValueError, match="missing word count has no known length"):
        MultinomialNB(**CONJUGATE).fit(X, [0, 1, 1])
    fitted = MultinomialNB(**CONJUGATE, random_seed=0).fit(np.nan_to_num(X), [0, 1, 1])
    with pytest.raises(ValueError, match="no known length"):
        fitted.predict(X)
