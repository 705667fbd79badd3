"""The shared-mean prior of the naive Bayes models (``prior_mean``): Dirichlet(λ O m) over each
simplex of O outcomes, m uniform (add-λ), pooled over the classes, or given.

Every expected value here is computed in the test from the formulas (or by quadrature, or by
refitting without a row), never taken from bayesgen's output.
"""

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import betaln, gammaln

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.families import family

X_WORDS = np.array([[3, 0, 1, 0], [4, 1, 0, 0], [0, 3, 2, 1], [1, 4, 3, 0], [2, 0, 0, 1]])
Y_WORDS = np.array([0, 0, 1, 1, 0])
X_BINARY = (X_WORDS > 0).astype(np.int64)
X_CODES = np.array([[0, 2], [1, 0], [0, 1], [1, 2], [0, 0]])
LAMBDA = 0.7


def pooled_mean(simplex_counts: np.ndarray) -> np.ndarray:
    """The add-½ frequencies of the class-summed counts over the last axis."""
    pooled = simplex_counts.sum(axis=0) + 0.5
    return pooled / pooled.sum(axis=-1, keepdims=True)


def class_counts(X, y, n_classes=2):
    return np.array([X[y == k].sum(axis=0) for k in range(n_classes)], dtype=np.float64)


def test_multinomial_pooled_posterior_mean_is_count_plus_lambda_v_m():
    counts = class_counts(X_WORDS, Y_WORDS)
    m = pooled_mean(counts)
    V = counts.shape[1]
    expected = (counts + LAMBDA * V * m) / (counts.sum(axis=1, keepdims=True) + V * LAMBDA)
    est = cf.multinomial_nb(X_WORDS, Y_WORDS, alpha=LAMBDA, prior_mean="pooled")
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13)
    np.testing.assert_allclose(family(est).prior_mean(est), m, rtol=1e-13)


def test_bernoulli_pooled_posterior_mean_is_beta_2lm_2l_1_minus_m():
    present = class_counts(X_BINARY, Y_WORDS)
    rows = np.bincount(Y_WORDS).astype(np.float64)
    m = (present.sum(axis=0) + 0.5) / (rows.sum() + 1.0)
    expected = (present + 2 * LAMBDA * m) / (rows[:, None] + 2 * LAMBDA)
    est = cf.bernoulli_nb(X_BINARY, Y_WORDS, alpha=LAMBDA, prior_mean="pooled")
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13)
    np.testing.assert_allclose(family(est).prior_mean(est), m, rtol=1e-13)


def test_categorical_pooled_mean_covers_only_the_real_categories():
    est = cf.categorical_nb(X_CODES, Y_WORDS, alpha=LAMBDA, prior_mean="pooled")
    # feature 0 has 2 categories, feature 1 has 3: padding cell (0, 2) gets no prior mass
    counts = np.zeros((2, 2, 3))
    for row, k in zip(X_CODES, Y_WORDS, strict=True):
        for j, code in enumerate(row):
            counts[k, j, code] += 1
    n_cat = np.array([2, 3])
    mean = np.zeros((2, 3))
    for j in range(2):
        pooled = counts[:, j, : n_cat[j]].sum(axis=0) + 0.5
        mean[j, : n_cat[j]] = pooled / pooled.sum()
    rows = np.bincount(Y_WORDS)[:, None, None]
    expected = (counts + LAMBDA * n_cat[None, :, None] * mean) / (
        rows + LAMBDA * n_cat[None, :, None]
    )
    expected[:, 0, 2] = 0.0
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13)
    np.testing.assert_allclose(family(est).prior_mean(est), mean, rtol=1e-13)


@pytest.mark.parametrize(
    ("fit", "X", "uniform"),
    [
        (cf.multinomial_nb, X_WORDS, np.full(4, 0.25)),
        (cf.bernoulli_nb, X_BINARY, np.full(4, 0.5)),
        (cf.categorical_nb, X_CODES, np.array([[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])),
    ],
)
def test_a_given_uniform_mean_is_add_lambda_with_the_same_evidence(fit, X, uniform):
    plain = fit(X, Y_WORDS, alpha=LAMBDA)
    given = fit(X, Y_WORDS, alpha=LAMBDA, prior_mean=uniform)
    np.testing.assert_allclose(given["feature_prob"].values, plain["feature_prob"].values)
    assert cf.log_evidence(given) == pytest.approx(cf.log_evidence(plain), rel=1e-12)


def test_multinomial_pooled_evidence_is_the_dirichlet_multinomial_formula():
    counts = class_counts(X_WORDS, Y_WORDS)
    a = LAMBDA * counts.shape[1] * pooled_mean(counts)
    words = np.sum(
        gammaln(a.sum())
        - gammaln(counts.sum(axis=1) + a.sum())
        + np.sum(gammaln(counts + a) - gammaln(a), axis=1)
    )
    est = cf.multinomial_nb(X_WORDS, Y_WORDS, alpha=LAMBDA, prior_mean="pooled")
    assert family(est).feature_log_evidence(est, LAMBDA) == pytest.approx(words, rel=1e-12)


def test_bernoulli_pooled_evidence_equals_quadrature():
    present = class_counts(X_BINARY, Y_WORDS)
    rows = np.bincount(Y_WORDS)
    m = (present.sum(axis=0) + 0.5) / (rows.sum() + 1.0)
    total = 0.0
    for k in range(2):
        for j in range(present.shape[1]):
            a, b = 2 * LAMBDA * m[j], 2 * LAMBDA * (1 - m[j])
            c, n = present[k, j], rows[k]

            def integrand(phi, a=a, b=b, c=c, n=n):
                return math.exp(
                    (c + a - 1) * math.log(phi) + (n - c + b - 1) * math.log1p(-phi) - betaln(a, b)
                )

            value, _ = integrate.quad(integrand, 0, 1, epsabs=0, epsrel=1e-10, limit=200)
            total += math.log(value)
    est = cf.bernoulli_nb(X_BINARY, Y_WORDS, alpha=LAMBDA, prior_mean="pooled")
    assert family(est).feature_log_evidence(est, LAMBDA) == pytest.approx(total, rel=1e-8)


@pytest.mark.parametrize("cls", [bayesgen.MultinomialNB, bayesgen.BernoulliNB])
def test_evidence_alpha_of_the_pooled_prior_is_the_grid_argmax(cls, text_data_small):
    X, y = text_data_small
    options = {"binarize": 0.0} if cls is bayesgen.BernoulliNB else {}
    est = cls(
        alpha="evidence", prior_mean="pooled", inference="conjugate", compute_map=False, **options
    ).fit(X, y)
    evidence = family(est.closed_form_).feature_evidence(est.closed_form_)
    grid = np.exp(np.linspace(np.log(1e-3), np.log(1e4), 4001))
    best = grid[np.argmax(evidence(grid))]
    assert est.alpha_ == pytest.approx(best, rel=0.01)
    assert est.closed_form_["prior_weight"].shape == (X.shape[1],)


@pytest.fixture(scope="module")
def text_data_small():
    """Two classes of Zipf-like word counts that share their frequent words."""
    rng = np.random.default_rng(3)
    base = 1.0 / np.arange(1, 41) ** 1.1
    rates = np.stack([base * rng.gamma(5, 0.2, 40) for _ in range(2)])
    y = rng.integers(0, 2, 120)
    X = rng.poisson(3 * rates[y] / rates.sum(axis=1, keepdims=True)[y] * 10)
    return X, y


def test_posterior_draws_and_compare_agree_with_the_pooled_closed_form(text_data_small):
    X, y = text_data_small
    est = bayesgen.MultinomialNB(
        alpha=0.5, prior_mean="pooled", inference="conjugate", draws=4000, random_seed=0
    ).fit(X, y)
    drawn = est.idata_.posterior["feature_prob"].mean(("chain", "draw")).values
    np.testing.assert_allclose(drawn, est.closed_form_["feature_prob"].values, atol=5e-3)
    assert bayesgen.compare(est).ok


def test_compare_fails_when_the_draws_come_from_the_uniform_prior(text_data_small):
    X, y = text_data_small
    pooled = bayesgen.MultinomialNB(
        alpha=5.0, prior_mean="pooled", inference="conjugate", draws=2000, random_seed=0
    ).fit(X, y)
    uniform = bayesgen.MultinomialNB(
        alpha=5.0, inference="conjugate", draws=2000, random_seed=0
    ).fit(X, y)
    assert bayesgen.compare(pooled).ok
    pooled.idata_["posterior"]["feature_prob"] = uniform.idata_["posterior"]["feature_prob"]
    assert not bayesgen.compare(pooled).ok


def test_loo_of_the_pooled_prior_equals_refits_without_the_row():
    est = bayesgen.MultinomialNB(
        alpha=LAMBDA, prior_mean="pooled", inference="conjugate", compute_map=False, draws=10
    ).fit(X_WORDS, Y_WORDS)
    loo = bayesgen.loo_proba(est)
    m = est.prior_mean_  # the prior is fixed: leaving a row out does not move m
    for i in range(len(Y_WORDS)):
        keep = np.arange(len(Y_WORDS)) != i
        refit = bayesgen.MultinomialNB(
            alpha=LAMBDA, prior_mean=m, inference="conjugate", compute_map=False, draws=10
        ).fit(X_WORDS[keep], Y_WORDS[keep])
        np.testing.assert_allclose(
            loo[i], refit.posterior_predictive_proba(X_WORDS[i : i + 1])[0], rtol=1e-10
        )


def test_bernoulli_loo_of_the_pooled_prior_equals_refits_without_the_row():
    est = bayesgen.BernoulliNB(
        alpha=LAMBDA, prior_mean="pooled", inference="conjugate", compute_map=False, draws=10
    ).fit(X_BINARY, Y_WORDS)
    loo = bayesgen.loo_proba(est)
    for i in range(len(Y_WORDS)):
        keep = np.arange(len(Y_WORDS)) != i
        refit = bayesgen.BernoulliNB(
            alpha=LAMBDA,
            prior_mean=est.prior_mean_,
            inference="conjugate",
            compute_map=False,
            draws=10,
        ).fit(X_BINARY[keep], Y_WORDS[keep])
        np.testing.assert_allclose(
            loo[i], refit.posterior_predictive_proba(X_BINARY[i : i + 1])[0], rtol=1e-10
        )


def test_save_and_load_keep_the_prior(tmp_path, text_data_small):
    X, y = text_data_small
    est = bayesgen.BernoulliNB(
        alpha="evidence", prior_mean="pooled", binarize=0.0, inference="conjugate", random_seed=1
    ).fit(X, y)
    path = tmp_path / "pooled.nc"
    est.save(path)
    loaded = bayesgen.load(path)
    np.testing.assert_array_equal(loaded.prior_mean_, est.prior_mean_)
    np.testing.assert_array_equal(loaded.predict_proba(X[:5]), est.predict_proba(X[:5]))


def test_a_given_prior_mean_array_is_not_modified():
    mean = np.array([0.4, 0.3, 0.2, 0.1])
    before = mean.copy()
    bayesgen.MultinomialNB(prior_mean=mean, inference="conjugate", compute_map=False, draws=10).fit(
        X_WORDS, Y_WORDS
    )
    np.testing.assert_array_equal(mean, before)


@pytest.mark.parametrize(
    ("prior_mean", "error", "match"),
    [
        ("pool", ValueError, r"prior_mean: expected 'uniform' or 'pooled' or an array"),
        ({"a": 1}, TypeError, r"prior_mean: expected 'uniform' or 'pooled'"),
        ([0.5, 0.5], ValueError, r"prior_mean: .*shape \(4,\).*got shape \(2,\)"),
        ([0.5, 0.5, 0.0, 0.0], ValueError, r"prior_mean: expected a probability > 0"),
        ([0.4, 0.4, 0.4, 0.4], ValueError, r"prior_mean: expected probabilities that sum to 1"),
    ],
)
def test_bad_prior_mean_is_refused_by_name(prior_mean, error, match):
    with pytest.raises(error, match=match):
        bayesgen.MultinomialNB(prior_mean=prior_mean, inference="conjugate").fit(X_WORDS, Y_WORDS)


def test_bernoulli_prior_mean_of_one_is_refused():
    with pytest.raises(ValueError, match=r"prior_mean: .*P\(present\) < 1"):
        cf.bernoulli_nb(X_BINARY, Y_WORDS, prior_mean=[0.5, 1.0, 0.5, 0.5])


def test_alpha_prior_with_the_pooled_mean_mixes_the_right_conditionals(text_data_small):
    X, y = text_data_small
    est = bayesgen.MultinomialNB(
        alpha_prior=(2.0, 1.0),
        prior_mean="pooled",
        inference="conjugate",
        draws=3000,
        random_seed=0,
    ).fit(X, y)
    assert bayesgen.compare(est).ok
    # E[θ] = E_λ[(n + λ V m) / (N + V λ)]: between the add-λ means of λ's 1st and 99th percentile
    lam = est.idata_.posterior["alpha"].values.ravel()
    counts = est.closed_form_["feature_count"].values
    weight = est.closed_form_["prior_weight"].values
    low, high = np.quantile(lam, [0.001, 0.999])
    ends = [
        (counts + value * weight) / (counts.sum(1, keepdims=True) + value * counts.shape[1])
        for value in (low, high)
    ]
    mean = est.idata_.posterior["feature_prob"].mean(("chain", "draw")).values
    assert np.all(mean >= np.minimum(*ends) - 3e-3)
    assert np.all(mean <= np.maximum(*ends) + 3e-3)


def test_sbc_of_the_pooled_prior_is_ok(text_data_small):
    X, y = text_data_small
    est = bayesgen.MultinomialNB(
        alpha=2.0, prior_mean="pooled", inference="conjugate", random_seed=0
    ).fit(X[:60], y[:60])
    result = bayesgen.sbc(est, n_simulations=100, random_seed=5)
    assert result.ok, str(result)
    mismatch = bayesgen.sbc(est, n_simulations=100, random_seed=5, prior_alpha=2.0 / 25)
    assert not mismatch.ok, str(mismatch)


@pytest.mark.parametrize(
    ("name", "X"),
    [("multinomial_nb", X_WORDS), ("bernoulli_nb", X_BINARY), ("categorical_nb", X_CODES)],
)
def test_the_pymc_models_prior_has_the_shared_mean(name, X):
    import pymc as pm

    est = family(name).fit(X, Y_WORDS, alpha=3.0, prior_mean="pooled")
    model = family(name).pymc_model(est)
    draws = pm.draw(model["feature_prob"], draws=4000, random_seed=1)
    mean = family(name).prior_mean(est)
    # the prior mean of every class is m; the Monte Carlo SE of 4,000 draws is < 0.01 here
    np.testing.assert_allclose(
        draws.mean(axis=0), np.broadcast_to(mean, draws.shape[1:]), atol=0.02
    )
    assert not np.allclose(mean, mean.flat[0])  # a pooled mean, not the uniform one


@pytest.mark.slow
def test_nuts_posterior_of_the_pooled_prior_matches_the_closed_form(text_data_small):
    X, y = text_data_small
    est = bayesgen.MultinomialNB(
        alpha=2.0, prior_mean="pooled", draws=1000, tune=1000, chains=2, random_seed=0
    ).fit(X[:, :10], y)
    assert bayesgen.compare(est).ok


@pytest.mark.parametrize("prior_mean", ["uniform", "pooled"])
@pytest.mark.parametrize("weighted_rows", [False, True])
def test_bernoulli_evidence_from_the_non_zeros_equals_the_generic_pairs(prior_mean, weighted_rows):
    from bayesgen.maths.evidence import DirichletEvidence

    rng = np.random.default_rng(4)
    X = (rng.random((150, 25)) < rng.random(25) * 0.4).astype(np.int64)
    X[:, 3] = 1  # a feature every row has: its absent counts are zero
    y = rng.integers(0, 3, 150)
    weight = rng.uniform(0.5, 2.0, 150) if weighted_rows else None  # fractional counts
    est = family("bernoulli_nb").fit(X, y, prior_mean=prior_mean, sample_weight=weight)
    counts = est["feature_count"].values
    pairs = np.stack([counts, est["class_count"].values[:, None] - counts], axis=-1)
    w = est["prior_weight"].values if prior_mean == "pooled" else np.ones(25)
    generic = DirichletEvidence(pairs, weight=np.stack([w, 2.0 - w], axis=-1))
    fast = family(est).feature_evidence(est)
    lam = np.array([1e-3, 0.2, 1.0, 13.0, 4e3])
    np.testing.assert_allclose(fast(lam), generic(lam), rtol=1e-10)
    np.testing.assert_allclose(fast.derivative(lam), generic.derivative(lam), rtol=1e-6, atol=1e-9)
    per_class = np.array([[0.3, 2.0, 9.0]])
    np.testing.assert_allclose(
        fast(per_class, per_class=True), generic(per_class, per_class=True), rtol=1e-10
    )
