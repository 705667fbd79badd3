"""Closed-form estimates (bayesgen.closed_form).

Expected values come from scikit-learn, from the worked examples of the lecture notes, or from
the textbook formulas written out again here; never from this package's own output.
"""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import logsumexp
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, MultinomialNB

from bayesgen.closed_form import (
    BoundaryModeError,
    NormalInverseWishart,
    bernoulli_nb,
    categorical_nb,
    dirichlet_mode,
    feature_counts,
    gda,
    multinomial_nb,
    predict,
    predict_proba,
)
from bayesgen.input.data import vectorize_text

TOL = {"rtol": 1e-10, "atol": 1e-10}
ALPHAS = [0.01, 0.5, 1.0, 2.7]
FORMATS = ["dense", "csr_matrix", "csr_array"]


def as_format(X, fmt):
    if fmt == "dense":
        return np.asarray(X, dtype=float)
    if fmt == "csr_matrix":
        return sp.csr_matrix(X, dtype=float)
    return sp.csr_array(X, dtype=float)


def count_data(seed=0, n=60, d=25, k=3):
    """Sparse-ish word counts whose rate depends on the class, and labels covering k classes."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rates = rng.gamma(0.3, 2.0, size=(k, d))
    X = rng.poisson(rates[y]).astype(float)
    return X, y


def binary_data(seed=0, n=60, d=25, k=3):
    X, y = count_data(seed, n, d, k)
    return (X > 0).astype(float), y


def categorical_data(seed=0, n=80, k=3):
    """Four features with 2, 3, 5 and 4 categories (so the padding is exercised)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    widths = [2, 3, 5, 4]
    columns = []
    for width in widths:
        probs = rng.dirichlet(np.ones(width), size=k)
        columns.append([rng.choice(width, p=probs[c]) for c in y])
    X = np.array(columns, dtype=float).T
    X[: len(widths), range(len(widths))] = np.array(widths) - 1  # every category code is seen
    return X, y


def gaussian_data(seed=0, n=90, d=4, k=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    means = rng.normal(scale=2.0, size=(k, d))
    root = rng.normal(size=(d, d)) / np.sqrt(d) + np.eye(d)
    X = means[y] + rng.normal(size=(n, d)) @ root.T
    return X, y


# --------------------------------------------------------------------------------------------
# Agreement with scikit-learn.


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_multinomial_feature_prob_matches_sklearn(alpha, fmt):
    X, y = count_data()
    ref = MultinomialNB(alpha=alpha, force_alpha=True).fit(as_format(X, fmt), y)
    est = multinomial_nb(as_format(X, fmt), y, alpha=alpha, class_alpha=0)
    np.testing.assert_allclose(np.log(est["feature_prob"].values), ref.feature_log_prob_, **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_multinomial_predict_proba_matches_sklearn(alpha, fmt):
    X, y = count_data()
    X_new, _ = count_data(seed=1, n=20)
    ref = MultinomialNB(alpha=alpha, force_alpha=True).fit(as_format(X, fmt), y)
    est = multinomial_nb(as_format(X, fmt), y, alpha=alpha, class_alpha=0)
    expected = ref.predict_proba(as_format(X_new, fmt))
    np.testing.assert_allclose(predict_proba(est, as_format(X_new, fmt)), expected, **TOL)


def test_class_prob_with_zero_class_alpha_matches_sklearn_prior():
    X, y = count_data(n=61)  # 21, 20, 20 samples per class
    ref = MultinomialNB().fit(X, y)
    est = multinomial_nb(X, y, class_alpha=0)
    np.testing.assert_allclose(np.log(est["class_prob"].values), ref.class_log_prior_, **TOL)


def test_class_prob_is_add_class_alpha():
    est = multinomial_nb(np.ones((6, 2)), [0, 0, 0, 0, 1, 2], class_alpha=2.5)
    # (N_k + a) / (N + K a) with N = 6, K = 3, a = 2.5
    np.testing.assert_allclose(est["class_prob"].values, np.array([6.5, 3.5, 3.5]) / 13.5, **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_bernoulli_feature_prob_matches_sklearn(alpha, fmt):
    X, y = binary_data()
    ref = BernoulliNB(alpha=alpha, binarize=None, force_alpha=True).fit(as_format(X, fmt), y)
    est = bernoulli_nb(as_format(X, fmt), y, alpha=alpha, class_alpha=0)
    np.testing.assert_allclose(np.log(est["feature_prob"].values), ref.feature_log_prob_, **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_bernoulli_predict_proba_matches_sklearn(alpha, fmt):
    X, y = binary_data()
    X_new, _ = binary_data(seed=1, n=20)
    ref = BernoulliNB(alpha=alpha, binarize=None, force_alpha=True).fit(as_format(X, fmt), y)
    est = bernoulli_nb(as_format(X, fmt), y, alpha=alpha, class_alpha=0)
    expected = ref.predict_proba(as_format(X_new, fmt))
    np.testing.assert_allclose(predict_proba(est, as_format(X_new, fmt)), expected, **TOL)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.7])
def test_bernoulli_with_binarize_matches_sklearn(alpha):
    X, y = count_data()
    ref = BernoulliNB(alpha=alpha, binarize=1.5, force_alpha=True).fit(X, y)
    est = bernoulli_nb(X, y, alpha=alpha, class_alpha=0, binarize=1.5)
    np.testing.assert_allclose(np.log(est["feature_prob"].values), ref.feature_log_prob_, **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_categorical_feature_prob_matches_sklearn(alpha, fmt):
    X, y = categorical_data()
    ref = CategoricalNB(alpha=alpha, force_alpha=True).fit(X, y)  # sklearn: dense only
    est = categorical_nb(as_format(X, fmt), y, alpha=alpha, class_alpha=0)
    prob, mask = est["feature_prob"].values, est["category_mask"].values
    for j, ref_log_prob in enumerate(ref.feature_log_prob_):
        assert mask[j].sum() == ref_log_prob.shape[1]
        np.testing.assert_allclose(np.log(prob[:, j, mask[j]]), ref_log_prob, **TOL)


def test_categorical_padding_outside_the_mask_has_probability_zero():
    X, y = categorical_data()
    est = categorical_nb(X, y)
    padded = est["feature_prob"].values[:, ~est["category_mask"].values]
    assert padded.size > 0
    assert np.all(padded == 0.0)


def test_categorical_n_categories_follows_sklearn_rule():
    X, y = categorical_data()
    ref = CategoricalNB().fit(X, y)
    est = categorical_nb(X, y)
    np.testing.assert_array_equal(est["n_categories"].values, ref.n_categories_)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_categorical_predict_proba_matches_sklearn(alpha, fmt):
    X, y = categorical_data()
    X_new, _ = categorical_data(seed=1, n=20)
    ref = CategoricalNB(alpha=alpha, force_alpha=True).fit(X, y)
    est = categorical_nb(as_format(X, fmt), y, alpha=alpha, class_alpha=0)
    expected = ref.predict_proba(X_new)
    np.testing.assert_allclose(predict_proba(est, as_format(X_new, fmt)), expected, **TOL)


def _lda_pair(n_classes, fmt):
    X, y = gaussian_data(k=n_classes)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)  # sklearn LDA: dense only
    est = gda(as_format(X, fmt), y, class_alpha=0, prior=None)
    return est, ref


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_mle_means_match_lda(n_classes, fmt):
    est, ref = _lda_pair(n_classes, fmt)
    np.testing.assert_allclose(est["mu"].values, ref.means_, **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_mle_covariance_matches_lda(n_classes, fmt):
    est, ref = _lda_pair(n_classes, fmt)
    np.testing.assert_allclose(est["cov"].values, ref.covariance_, **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_coef_matches_lda(n_classes, fmt):
    est, ref = _lda_pair(n_classes, fmt)
    expected_dims = ("feature",) if n_classes == 2 else ("class", "feature")
    assert est["coef"].dims == expected_dims
    np.testing.assert_allclose(est["coef"].values, np.squeeze(ref.coef_), **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_intercept_matches_lda(n_classes, fmt):
    est, ref = _lda_pair(n_classes, fmt)
    expected_dims = () if n_classes == 2 else ("class",)
    assert est["intercept"].dims == expected_dims
    np.testing.assert_allclose(est["intercept"].values, np.squeeze(ref.intercept_), **TOL)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_predict_proba_matches_lda(n_classes, fmt):
    est, ref = _lda_pair(n_classes, fmt)
    X_new, _ = gaussian_data(seed=5, n=30, k=n_classes)
    expected = ref.predict_proba(X_new)
    np.testing.assert_allclose(predict_proba(est, as_format(X_new, fmt)), expected, **TOL)


# --------------------------------------------------------------------------------------------
# Worked examples of the lecture notes.

# Seed 000: four e-mails over the words a, b, c; y = 1 is spam.
SEED_EMAILS = [["a", "b"], ["b", "a"], ["a", "c", "b"], ["c", "c", "c"]]
SEED_LABELS = [1, 0, 0, 1]


def _seed_email_fit(**options):
    X, vectorizer = vectorize_text(SEED_EMAILS)
    assert vectorizer.get_feature_names_out().tolist() == ["a", "b", "c"]
    return multinomial_nb(X, SEED_LABELS, **options), vectorizer


def test_seed_emails_mle_word_probabilities_of_spam():
    est, _ = _seed_email_fit(alpha=0, class_alpha=0)
    np.testing.assert_allclose(est["feature_prob"].sel({"class": 1}), [1 / 5, 1 / 5, 3 / 5])


def test_seed_emails_mle_word_probabilities_of_ham():
    est, _ = _seed_email_fit(alpha=0, class_alpha=0)
    np.testing.assert_allclose(est["feature_prob"].sel({"class": 0}), [2 / 5, 2 / 5, 1 / 5])


def test_seed_emails_mle_class_prior_is_one_half():
    est, _ = _seed_email_fit(alpha=0, class_alpha=0)
    np.testing.assert_allclose(est["class_prob"].values, [0.5, 0.5])


def test_seed_emails_mle_spam_probability_of_b_c_is_0_6():
    est, vectorizer = _seed_email_fit(alpha=0, class_alpha=0)
    X_new = vectorizer.transform([["b", "c"]])
    # 0.2 * 0.6 * 0.5 / (0.2 * 0.6 * 0.5 + 0.4 * 0.2 * 0.5)
    assert predict_proba(est, X_new)[0, 1] == pytest.approx(0.6, abs=1e-12)


def test_seed_emails_add_one_word_probabilities():
    est, _ = _seed_email_fit(alpha=1, class_alpha=0)
    # (N_kw + 1) / (N_k + |V|), N_1 = N_0 = 5 tokens, |V| = 3
    np.testing.assert_allclose(est["feature_prob"].sel({"class": 1}), [2 / 8, 2 / 8, 4 / 8])
    np.testing.assert_allclose(est["feature_prob"].sel({"class": 0}), [3 / 8, 3 / 8, 2 / 8])


def test_seed_emails_add_one_spam_probability_of_b_c():
    est, vectorizer = _seed_email_fit(alpha=1, class_alpha=1)
    X_new = vectorizer.transform([["b", "c"]])
    # (2/8 * 4/8) / (2/8 * 4/8 + 3/8 * 2/8) = 8 / 14; the add-1 class prior is still 1/2.
    assert predict_proba(est, X_new)[0, 1] == pytest.approx(4 / 7, abs=1e-12)


# Seed 003: loadDataSet, six posts, 1 = abusive.
SEED_POSTS = [
    ["my", "dog", "has", "flea", "problems", "help", "please"],
    ["maybe", "not", "take", "him", "to", "dog", "park", "stupid"],
    ["my", "dalmation", "is", "so", "cute", "I", "love", "him"],
    ["stop", "posting", "stupid", "worthless", "garbage"],
    ["mr", "licks", "ate", "my", "steak", "how", "to", "stop", "him"],
    ["quit", "buying", "worthless", "dog", "food", "stupid"],
]
SEED_CLASSES = [0, 1, 0, 1, 0, 1]


def _seed_posts_fit(**options):
    X, vectorizer = vectorize_text(SEED_POSTS, binary=True)
    return bernoulli_nb(X, SEED_CLASSES, **options), vectorizer


def test_seed_posts_love_my_dalmation_is_classified_not_abusive():
    est, vectorizer = _seed_posts_fit()
    assert predict(est, vectorizer.transform([["love", "my", "dalmation"]])).tolist() == [0]


def test_seed_posts_stupid_garbage_is_classified_abusive():
    est, vectorizer = _seed_posts_fit()
    assert predict(est, vectorizer.transform([["stupid", "garbage"]])).tolist() == [1]


def test_seed_posts_add_one_word_probabilities_by_hand():
    est, _ = _seed_posts_fit(alpha=1)
    # (documents of the class containing the word + 1) / (3 documents + 2)
    prob = est["feature_prob"].values
    vocabulary = {w: j for j, w in enumerate(sorted({w for post in SEED_POSTS for w in post}))}
    assert prob[1, vocabulary["stupid"]] == pytest.approx(4 / 5)
    assert prob[0, vocabulary["stupid"]] == pytest.approx(1 / 5)
    assert prob[0, vocabulary["my"]] == pytest.approx(4 / 5)
    assert prob[0, vocabulary["dog"]] == pytest.approx(2 / 5)
    assert prob[1, vocabulary["dog"]] == pytest.approx(3 / 5)


def test_seed_posts_abusive_probability_of_stupid_garbage_by_hand():
    est, vectorizer = _seed_posts_fit(alpha=1, class_alpha=1)
    query = {"stupid", "garbage"}
    log_joint = []
    for k in (0, 1):
        docs = [set(p) for p, c in zip(SEED_POSTS, SEED_CLASSES, strict=True) if c == k]
        words = sorted(set().union(*map(set, SEED_POSTS)))
        log_p = np.log(0.5)  # (3 + 1) / (6 + 2)
        for word in words:
            phi = (sum(word in d for d in docs) + 1) / (len(docs) + 2)
            log_p += np.log(phi if word in query else 1 - phi)
        log_joint.append(log_p)
    expected = np.exp(log_joint[1] - logsumexp(log_joint))
    got = predict_proba(est, vectorizer.transform([sorted(query)]))[0, 1]
    assert got == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------------
# Normal-inverse-Wishart posterior means.


def textbook_niw_posterior_means(X, y, m0, kappa0, nu0, psi0):
    """E[μ_k | data] and E[Σ | data], written out from the NormalInverseWishart docstring."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    classes = np.unique(y)
    mu = np.empty((len(classes), d))
    psi = np.array(psi0, dtype=float)
    for i, c in enumerate(classes):
        Xc = X[y == c]
        n_k = len(Xc)
        xbar = Xc.sum(axis=0) / n_k
        kappa_k = kappa0 + n_k
        mu[i] = (kappa0 * m0 + n_k * xbar) / kappa_k
        for row in Xc:
            psi += np.outer(row - xbar, row - xbar)
        psi += kappa0 * n_k / kappa_k * np.outer(xbar - m0, xbar - m0)
    nu = nu0 + n
    return mu, psi / (nu - d - 1)


def _default_prior_expectation(X, y):
    d = X.shape[1]
    m0 = X.mean(axis=0)
    variance = ((X - m0) ** 2).mean(axis=0)
    nu0 = d + 2
    psi0 = (nu0 - d - 1) * np.diag(variance)
    return textbook_niw_posterior_means(X, y, m0, 0.01, nu0, psi0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_default_prior_posterior_mean_of_mu(n_classes):
    X, y = gaussian_data(n=30, k=n_classes)
    expected_mu, _ = _default_prior_expectation(X, y)
    np.testing.assert_allclose(gda(X, y)["mu"].values, expected_mu, **TOL)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gda_default_prior_posterior_mean_of_cov(n_classes):
    X, y = gaussian_data(n=30, k=n_classes)
    _, expected_cov = _default_prior_expectation(X, y)
    np.testing.assert_allclose(gda(X, y)["cov"].values, expected_cov, **TOL)


@pytest.mark.parametrize("extra_dof", [0.5, 1.0, 4.0])
def test_gda_default_prior_scale_puts_the_prior_mean_of_cov_on_the_feature_variances(extra_dof):
    X, y = gaussian_data(n=30, d=3, k=2)
    dof = 3 + 1 + extra_dof  # E[Σ] = Ψ₀ / (ν₀ - D - 1) exists for ν₀ > D + 1
    est = gda(X, y, prior=NormalInverseWishart(dof=dof))
    prior_mean_cov = est["prior_scale"].values / (dof - 3 - 1)
    variance = ((X - X.mean(axis=0)) ** 2).mean(axis=0)
    np.testing.assert_allclose(prior_mean_cov, np.diag(variance), **TOL)


def test_gda_explicit_prior_posterior_means():
    X, y = gaussian_data(n=25, d=3, k=3)
    m0, kappa0, nu0 = np.array([1.0, -2.0, 0.5]), 3.0, 7.5
    psi0 = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]])
    prior = NormalInverseWishart(mean=m0, kappa=kappa0, dof=nu0, scale=psi0)
    est = gda(X, y, prior=prior)
    expected_mu, expected_cov = textbook_niw_posterior_means(X, y, m0, kappa0, nu0, psi0)
    np.testing.assert_allclose(est["mu"].values, expected_mu, **TOL)
    np.testing.assert_allclose(est["cov"].values, expected_cov, **TOL)


def test_gda_huge_kappa_shrinks_mu_to_the_prior_mean():
    X, y = gaussian_data(n=40, k=3)
    m0 = np.array([10.0, -10.0, 3.0, 0.0])
    est = gda(X, y, prior=NormalInverseWishart(mean=m0, kappa=1e12))
    np.testing.assert_allclose(est["mu"].values, np.tile(m0, (3, 1)), rtol=0, atol=1e-8)


def test_gda_huge_kappa_default_prior_shrinks_mu_to_the_grand_mean():
    X, y = gaussian_data(n=40, k=2)
    est = gda(X, y, prior=NormalInverseWishart(kappa=1e12))
    grand_mean = X.sum(axis=0) / len(X)
    np.testing.assert_allclose(est["mu"].values, np.tile(grand_mean, (2, 1)), atol=1e-8)


def test_gda_with_lots_of_data_approaches_the_mle():
    X, y = gaussian_data(n=200_000, d=3, k=2)
    est = gda(X, y)
    mle_mu = np.array([X[y == c].mean(axis=0) for c in (0, 1)])
    centered = X - mle_mu[y]
    mle_cov = centered.T @ centered / len(X)
    np.testing.assert_allclose(est["mu"].values, mle_mu, rtol=0, atol=1e-6)
    np.testing.assert_allclose(est["cov"].values, mle_cov, rtol=1e-4, atol=1e-4)


def test_gda_prior_moves_further_from_the_mle_with_less_data():
    X, y = gaussian_data(n=200_000, d=3, k=2)
    gaps = []
    for n in (200, 200_000):
        est = gda(X[:n], y[:n])
        gaps.append(np.abs(est["cov"].values - est["cov_mle"].values).max())
    assert gaps[1] < gaps[0] / 100


# --------------------------------------------------------------------------------------------
# Dirichlet mode (MAP).


@pytest.mark.parametrize("lam", [0.25, 1.0, 2.7])
def test_dirichlet_mode_with_alpha_lambda_plus_one_equals_add_lambda(lam):
    counts = np.array([[0.0, 3.0, 5.0, 1.0], [2.0, 2.0, 0.0, 0.0]])
    add_lambda = (counts + lam) / (counts.sum(axis=1, keepdims=True) + 4 * lam)
    np.testing.assert_allclose(dirichlet_mode(counts, lam + 1), add_lambda, **TOL)


def test_dirichlet_mode_with_alpha_one_equals_mle_when_boundary_allowed():
    counts = np.array([0.0, 3.0, 5.0, 2.0])
    mode = dirichlet_mode(counts, 1.0, allow_boundary=True)
    np.testing.assert_allclose(mode, [0.0, 0.3, 0.5, 0.2], **TOL)


def test_dirichlet_mode_normalises_along_the_given_axis():
    counts = np.array([[1.0, 4.0], [3.0, 0.0]])
    np.testing.assert_allclose(
        dirichlet_mode(counts, 2.0, axis=0), [[2 / 6, 5 / 6], [4 / 6, 1 / 6]]
    )


def test_dirichlet_mode_raises_when_n_plus_alpha_is_below_one():
    with pytest.raises(BoundaryModeError, match=r"no mode: 1 outcomes have n \+ α < 1"):
        dirichlet_mode([0.0, 2.0, 3.0], 0.5, allow_boundary=True)


def test_dirichlet_mode_raises_on_the_boundary_without_allow_boundary():
    with pytest.raises(BoundaryModeError, match=r"boundary .* 2 outcomes have n \+ α = 1"):
        dirichlet_mode([0.0, 2.0, 0.0], 1.0)


def test_boundary_mode_error_is_a_value_error():
    assert issubclass(BoundaryModeError, ValueError)


# --------------------------------------------------------------------------------------------
# λ = 0: zero probabilities and the "NIPS" document.

# Seed e-mails plus one more ham e-mail "a", so that the classes have different token totals
# (N_0 = 6, N_1 = 5); the fourth word ("nips") occurs in no training e-mail.
ZERO_X = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 3, 0], [1, 0, 0, 0]])
ZERO_Y = np.array([1, 0, 0, 1, 0])


def test_zero_alpha_word_unseen_in_one_class_gives_that_class_probability_zero():
    X = np.array([[1, 1, 0], [2, 0, 1], [0, 3, 1]])  # word 2 never occurs in class 0
    est = multinomial_nb(X, [0, 1, 1], alpha=0)
    # word 0 is 10 times likelier in class 0 (1/2 vs 1/7) ... but word 2 has P = 0 there.
    proba = predict_proba(est, [[10, 0, 1]])
    assert proba[0, 0] == 0.0
    assert proba[0, 1] == 1.0


def test_zero_alpha_bernoulli_word_unseen_in_one_class_gives_that_class_probability_zero():
    X = np.array([[1, 1, 0], [0, 1, 1], [0, 1, 1]])  # word 2 never occurs in class 0
    est = bernoulli_nb(X, [0, 1, 1], alpha=0)
    assert predict_proba(est, [[0, 1, 1]])[0, 0] == 0.0


def test_zero_alpha_nips_document_gives_finite_probabilities():
    est = multinomial_nb(ZERO_X, ZERO_Y, alpha=0)
    proba = predict_proba(est, [[0, 1, 1, 1]])
    assert np.all(np.isfinite(proba))
    assert proba.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "document", [[0, 1, 1, 1], [0, 0, 0, 2], [1, 1, 0, 1], [2, 0, 1, 3]], ids=str
)
def test_zero_alpha_multinomial_is_the_limit_of_add_lambda(document):
    limit = predict_proba(multinomial_nb(ZERO_X, ZERO_Y, alpha=0), [document])
    tiny = predict_proba(multinomial_nb(ZERO_X, ZERO_Y, alpha=1e-9), [document])
    np.testing.assert_allclose(limit, tiny, rtol=0, atol=1e-6)


def test_zero_alpha_nips_document_is_not_uniform_when_class_totals_differ():
    # λ/(N_k + Vλ) ≈ λ/N_k: the unseen word favours the class with fewer tokens (here spam),
    # so "nips" alone gives spam the odds 6 : 5 on top of the 2 : 3 class prior.
    est = multinomial_nb(ZERO_X, ZERO_Y, alpha=0, class_alpha=0)
    proba = predict_proba(est, [[0, 0, 0, 1]])
    np.testing.assert_allclose(proba[0], np.array([3 * 5, 2 * 6]) / 27, **TOL)


@pytest.mark.parametrize("document", [[0, 0, 0, 1], [1, 1, 0, 1], [0, 1, 1, 1]], ids=str)
def test_zero_alpha_bernoulli_is_the_limit_of_add_lambda(document):
    X = (ZERO_X > 0).astype(float)
    limit = predict_proba(bernoulli_nb(X, ZERO_Y, alpha=0), [document])
    tiny = predict_proba(bernoulli_nb(X, ZERO_Y, alpha=1e-9), [document])
    assert np.all(np.isfinite(limit))
    np.testing.assert_allclose(limit, tiny, rtol=0, atol=1e-6)


# --------------------------------------------------------------------------------------------
# Many features: no underflow.


def _long_documents(n_features=50_000, n_docs=6, length=200_000, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n_docs) % 2
    rates = rng.dirichlet(np.full(n_features, 0.5), size=2)
    X = np.stack([rng.multinomial(length, rates[c]) for c in y]).astype(float)
    return sp.csr_array(X), y


def test_multinomial_probabilities_do_not_underflow_with_50000_features():
    X, y = _long_documents()
    est = multinomial_nb(X, y)
    proba = predict_proba(est, X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(proba.argmax(axis=1), y)


def test_bernoulli_probabilities_do_not_underflow_with_50000_features():
    X, y = _long_documents(length=20_000)
    X.data[:] = 1.0
    est = bernoulli_nb(X, y)
    proba = predict_proba(est, X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(proba.argmax(axis=1), y)


# --------------------------------------------------------------------------------------------
# Sparse input is never densified.


def test_feature_counts_on_a_huge_sparse_matrix_never_densifies():
    n = 10**6  # dense float64 form: 8 TB
    rows = np.array([0, 1, 1, 999_998, 999_999])
    cols = np.array([5, 5, 999_999, 0, 5])
    X = sp.csr_array((np.array([1.0, 2.0, 3.0, 4.0, 5.0]), (rows, cols)), shape=(n, n))
    y = np.arange(n) % 2
    counts = feature_counts(X, y, 2)
    assert counts.shape == (2, n)
    assert counts[0, 5] == 1.0 and counts[0, 0] == 4.0
    assert counts[1, 5] == 7.0 and counts[1, 999_999] == 3.0
    assert counts.sum() == 15.0


def test_multinomial_fit_on_a_huge_sparse_matrix_never_densifies():
    n = 10**6
    rows, cols = np.array([0, 1, 2, 3]), np.array([7, 7, 8, 999_999])
    X = sp.csr_matrix((np.ones(4), (rows, cols)), shape=(n, n))
    est = multinomial_nb(X, np.arange(n) % 2, alpha=0)
    assert est["feature_prob"].sel({"class": 0}).values[[7, 8]].tolist() == [0.5, 0.5]


def test_feature_counts_dense_equals_hand_sum():
    X, y = count_data(n=12, d=4, k=3)
    expected = np.array([X[y == k].sum(axis=0) for k in range(3)])
    np.testing.assert_array_equal(feature_counts(X, y, 3), expected)


# --------------------------------------------------------------------------------------------
# Properties (hypothesis).

PROPERTY_SETTINGS = settings(max_examples=30, deadline=None)


@st.composite
def labelled_counts(draw, max_value=5):
    n = draw(st.integers(3, 12))
    d = draw(st.integers(1, 6))
    X = draw(arrays(np.int64, (n, d), elements=st.integers(0, max_value)))
    y = draw(arrays(np.int64, n, elements=st.integers(0, 2)))
    y[:2] = [0, 1]  # at least two classes
    return X.astype(float), y


smoothing = st.sampled_from([0.1, 0.5, 1.0, 3.3])


@PROPERTY_SETTINGS
@given(data=labelled_counts(), alpha=smoothing)
def test_multinomial_smoothed_probabilities_sum_to_one_over_words(data, alpha):
    est = multinomial_nb(*data, alpha=alpha)
    np.testing.assert_allclose(est["feature_prob"].sum("feature"), 1.0, rtol=1e-12)


@PROPERTY_SETTINGS
@given(data=labelled_counts(max_value=1), alpha=smoothing)
def test_bernoulli_smoothed_probabilities_of_present_and_absent_sum_to_one(data, alpha):
    X, y = data
    present = bernoulli_nb(X, y, alpha=alpha)["feature_prob"].values
    absent = bernoulli_nb(1 - X, y, alpha=alpha)["feature_prob"].values
    np.testing.assert_allclose(present + absent, 1.0, rtol=1e-12)


@PROPERTY_SETTINGS
@given(data=labelled_counts(), alpha=smoothing)
def test_categorical_smoothed_probabilities_sum_to_one_over_categories(data, alpha):
    est = categorical_nb(*data, alpha=alpha)
    np.testing.assert_allclose(est["feature_prob"].sum("category"), 1.0, rtol=1e-12)


@PROPERTY_SETTINGS
@given(data=labelled_counts(), class_alpha=st.sampled_from([0.0, 0.5, 1.0, 3.3]))
def test_class_probabilities_sum_to_one(data, class_alpha):
    est = multinomial_nb(*data, class_alpha=class_alpha)
    assert est["class_prob"].sum().item() == pytest.approx(1.0, rel=1e-12)


NB_MODELS = {
    "multinomial_nb": (multinomial_nb, {}),
    "bernoulli_nb": (bernoulli_nb, {"binarize": 2.5}),
    "categorical_nb": (categorical_nb, {}),
}


@pytest.mark.parametrize("model", sorted(NB_MODELS))
@PROPERTY_SETTINGS
@given(data=labelled_counts(), seed=st.integers(0, 2**32 - 1))
def test_permuting_rows_does_not_change_estimates(model, data, seed):
    fit, options = NB_MODELS[model]
    X, y = data
    order = np.random.default_rng(seed).permutation(len(y))
    before, after = fit(X, y, **options), fit(X[order], y[order], **options)
    for name in ("class_count", "feature_count", "class_prob", "feature_prob"):
        np.testing.assert_allclose(after[name].values, before[name].values, rtol=1e-12)


@pytest.mark.parametrize("model", sorted(NB_MODELS))
@PROPERTY_SETTINGS
@given(data=labelled_counts())
def test_duplicating_every_row_doubles_the_counts(model, data):
    fit, options = NB_MODELS[model]
    X, y = data
    once, twice = fit(X, y, **options), fit(np.vstack([X, X]), np.concatenate([y, y]), **options)
    for name in ("class_count", "feature_count"):
        np.testing.assert_array_equal(twice[name].values, 2 * once[name].values)


@pytest.mark.parametrize("model", sorted(NB_MODELS))
@PROPERTY_SETTINGS
@given(data=labelled_counts())
def test_duplicating_every_row_leaves_the_mle_unchanged(model, data):
    fit, options = NB_MODELS[model]
    X, y = data
    once, twice = fit(X, y, **options), fit(np.vstack([X, X]), np.concatenate([y, y]), **options)
    for name in ("class_prob_mle", "feature_prob_mle"):
        np.testing.assert_allclose(twice[name].values, once[name].values, rtol=1e-12)


@PROPERTY_SETTINGS
@given(data=labelled_counts(max_value=20), seed=st.integers(0, 2**32 - 1))
def test_permuting_rows_does_not_change_gda_estimates(data, seed):
    X, y = data
    X = X + np.random.default_rng(seed).normal(size=X.shape)  # real-valued, full rank
    order = np.random.default_rng(seed + 1).permutation(len(y))
    before, after = gda(X, y), gda(X[order], y[order])
    for name in ("mu", "cov"):
        np.testing.assert_allclose(after[name].values, before[name].values, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------------
# GDA with a singular pooled covariance (maximum likelihood, no prior).


def test_gda_zero_variance_feature_is_named():
    X, y = gaussian_data(n=20, d=2)
    frame = pd.DataFrame({"height": X[:, 0], "constant": 4.2, "weight": X[:, 1]})
    with pytest.raises(ValueError, match=r"features \['constant'\] do not vary within classes"):
        gda(frame, y, prior=None)


def test_gda_feature_constant_within_each_class_is_named():
    X, y = gaussian_data(n=20, d=2)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label_copy": 3.0 * y})
    with pytest.raises(ValueError, match=r"features \['label_copy'\] do not vary"):
        gda(frame, y, prior=None)


def test_gda_two_collinear_features_are_named():
    X, y = gaussian_data(n=20, d=3)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "twice_b": 2.0 * X[:, 1]})
    with pytest.raises(ValueError, match=r"features \['b', 'twice_b'\] are collinear"):
        gda(frame, y, prior=None)


def test_gda_fewer_rows_than_features_is_rejected():
    X, y = gaussian_data(n=4, d=6)
    with pytest.raises(ValueError, match=r"4 samples in 2 classes leave 2 degrees of freedom"):
        gda(X, y, prior=None)


def test_gda_features_in_very_different_units_are_not_called_constant():
    # income in dollars (variance ~1e9) next to a fraction (variance ~1e-4): both vary.
    rng = np.random.default_rng(3)
    y = np.arange(200) % 2
    income = 5e4 + 3e4 * rng.normal(size=200) + 1e4 * y
    fraction = 0.3 + 0.01 * rng.normal(size=200) + 0.005 * y
    X = np.column_stack([income, fraction])
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    est = gda(X, y, class_alpha=0, prior=None)
    np.testing.assert_allclose(est["coef"].values, ref.coef_[0], rtol=1e-10)


def test_gda_with_prior_fits_fewer_rows_than_features():
    X, y = gaussian_data(n=4, d=6)
    cov = gda(X, y)["cov"].values
    assert np.linalg.eigvalsh(cov).min() > 0


# --------------------------------------------------------------------------------------------
# Imports.


def test_import_closed_form_does_not_import_pymc_or_pytensor():
    code = (
        "import sys, bayesgen.closed_form; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pymc', 'pytensor')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("batch", [(), (3,), (2, 4)])
def test_categorical_log_likelihood_equals_a_loop_over_rows_and_features(batch):
    """The vectorised (one-hot product) likelihood against the definition, row by row, with
    an impossible cell (probability 0) that one row falls into and another does not."""
    from bayesgen.maths.likelihood import categorical_log_likelihood

    rng = np.random.default_rng(7)
    feature_prob = rng.dirichlet(np.ones(4), size=(*batch, 3, 5))  # (..., K, F, C)
    feature_prob[..., 1, 2, 3] = 0.0
    class_prob = rng.dirichlet(np.ones(3), size=batch)
    codes = rng.integers(0, 4, size=(6, 5))
    codes[0, 2], codes[1, 2] = 3, 0
    with np.errstate(divide="ignore"):
        got = categorical_log_likelihood(codes, np.log(class_prob), np.log(feature_prob))
    assert got.shape == (*batch, 6, 3)
    for index in np.ndindex(*batch):
        for n, row in enumerate(codes):
            for k in range(3):
                prob = class_prob[index][k] * np.prod(
                    [feature_prob[index][k, j, code] for j, code in enumerate(row)]
                )
                with np.errstate(divide="ignore"):
                    expected = np.log(prob)
                if np.isinf(expected):
                    assert got[(*index, n, k)] == -np.inf
                else:
                    assert got[(*index, n, k)] == pytest.approx(expected, rel=1e-12)
    assert np.isneginf(got[..., 0, 1]).all() and np.isfinite(got[..., 1, 1]).all()
