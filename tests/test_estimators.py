"""The scikit-learn estimators (bayesgen.estimators): predictions, names, sklearn integration.

Predictions are checked against p(y | x, θ) computed here from the posterior draws with the
textbook likelihoods, and the posterior predictive against the Dirichlet-multinomial and add-λ
formulas written out with scipy.
"""

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, MODELS, NB_MODELS, make_estimator
from scipy.special import gammaln, logsumexp, softmax

N_NEW = 6


def _new_rows(name):
    X, _ = DATA[name](seed=99, n=N_NEW)
    return X


# --------------------------------------------------------------------------------------------
# Predictions from the posterior draws.


def _plug_in_log_joint(name, X, draws):
    """log p(x, y = k | θ) per draw, (S, n, K), from the model's likelihood."""
    X = np.asarray(X, dtype=float)
    log_pi = np.log(draws["class_prob"])  # (S, K)
    if name == "multinomial_nb":
        terms = np.einsum("nw,skw->snk", X, np.log(draws["feature_prob"]))
    elif name == "bernoulli_nb":
        phi = draws["feature_prob"]
        terms = np.einsum("nw,skw->snk", X, np.log(phi)) + np.einsum(
            "nw,skw->snk", 1 - X, np.log1p(-phi)
        )
    elif name == "categorical_nb":
        theta = draws["feature_prob"]  # (S, K, F, C)
        codes = X.astype(int)
        terms = np.zeros((theta.shape[0], len(X), theta.shape[1]))
        for i, row in enumerate(codes):
            for j, c in enumerate(row):
                terms[:, i, :] += np.log(theta[:, :, j, c])
    else:  # log N(x | μ_k, Σ) with the full quadratic form
        mu, cov = draws["mu"], draws["cov"]  # (S, K, D), (S, D, D)
        diff = X[None, :, None, :] - mu[:, None, :, :]  # (S, n, K, D)
        chol = np.linalg.cholesky(cov)
        solved = np.linalg.solve(chol[:, None, None], diff[..., None])[..., 0]
        log_det = 2 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        terms = -0.5 * (solved**2).sum(-1) - 0.5 * log_det[:, None, None]
    return terms + log_pi[:, None, :]


def _flat_draws(est):
    posterior = est.idata_["posterior"].to_dataset()
    return {
        name: posterior[name].values.reshape(-1, *posterior[name].shape[2:]).astype(float)
        for name in posterior.data_vars
    }


def test_predict_proba_is_the_posterior_average_of_the_plug_in(nuts_case):
    X_new = _new_rows(nuts_case.name)
    joint = _plug_in_log_joint(nuts_case.name, X_new, _flat_draws(nuts_case.est))
    expected = softmax(joint, axis=-1).mean(axis=0)
    np.testing.assert_allclose(nuts_case.est.predict_proba(X_new), expected, rtol=1e-9, atol=1e-12)


def test_predict_proba_rows_sum_to_one(nuts_case):
    proba = nuts_case.est.predict_proba(_new_rows(nuts_case.name))
    assert proba.shape == (N_NEW, len(nuts_case.expected["classes"]))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all((proba > 0) & (proba < 1))


def test_predict_returns_the_label_of_the_most_probable_class(nuts_case):
    X_new = _new_rows(nuts_case.name)
    proba = nuts_case.est.predict_proba(X_new)
    labels = nuts_case.est.predict(X_new)
    np.testing.assert_array_equal(labels, nuts_case.expected["classes"][proba.argmax(axis=1)])


def test_predict_proba_interval_brackets_the_mean(nuts_case):
    X_new = _new_rows(nuts_case.name)
    lower, upper = nuts_case.est.predict_proba_interval(X_new)
    mean = nuts_case.est.predict_proba(X_new)
    assert lower.shape == upper.shape == mean.shape
    assert np.all(lower <= mean) and np.all(mean <= upper)
    assert np.all(upper - lower > 1e-6)  # a posterior, not a point
    narrow_lower, narrow_upper = nuts_case.est.predict_proba_interval(X_new, prob=0.5)
    assert np.all(narrow_lower >= lower) and np.all(narrow_upper <= upper)


def test_predict_proba_interval_is_the_equal_tailed_quantile_of_the_plug_in(nuts_case):
    X_new = _new_rows(nuts_case.name)
    joint = _plug_in_log_joint(nuts_case.name, X_new, _flat_draws(nuts_case.est))
    draws = softmax(joint, axis=-1)
    lower, upper = nuts_case.est.predict_proba_interval(X_new, prob=0.9)
    np.testing.assert_allclose(lower, np.quantile(draws, 0.05, axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(upper, np.quantile(draws, 0.95, axis=0), rtol=1e-9, atol=1e-12)


def test_predict_proba_interval_rejects_a_probability_outside_0_1(nuts_case):
    with pytest.raises(ValueError, match="prob"):
        nuts_case.est.predict_proba_interval(_new_rows(nuts_case.name), prob=1.5)


def test_predict_proba_draws_dims(nuts_case):
    draws = nuts_case.est.predict_proba_draws(_new_rows(nuts_case.name))
    classes = nuts_case.expected["classes"]
    assert draws.dims == ("chain", "draw", "obs", "class")
    assert draws.shape == (2, 2000, N_NEW, len(classes))
    np.testing.assert_array_equal(draws["class"].values, classes)
    np.testing.assert_allclose(draws.sum("class").values, 1.0, atol=1e-12)


def test_closed_form_matches_the_textbook_formulas(nuts_case):
    """closed_form_ (the reference the posteriors are compared with) is right too."""
    for variable in nuts_case.parameters:
        np.testing.assert_allclose(
            nuts_case.est.closed_form_[variable].values,
            nuts_case.expected[variable],
            rtol=1e-12,
            atol=1e-14,
        )


# --------------------------------------------------------------------------------------------
# Feature names and class labels.


def test_dataframe_feature_names_and_string_labels_become_coords(fits):
    case = fits.nuts("multinomial_nb")
    posterior = case.est.idata_["posterior"]
    columns = ["cheap", "meeting", "offer", "win"]
    np.testing.assert_array_equal(posterior["feature"].values, columns)
    np.testing.assert_array_equal(posterior["class"].values, ["eggs", "ham", "spam"])
    assert posterior["feature_prob"].dims == ("chain", "draw", "class", "feature")
    np.testing.assert_array_equal(case.est.feature_names_in_, columns)
    np.testing.assert_array_equal(case.est.classes_, ["eggs", "ham", "spam"])
    assert set(case.est.predict(_new_rows("multinomial_nb"))) <= {"eggs", "ham", "spam"}


def test_gda_dataframe_names_label_both_covariance_dims(fits):
    case = fits.nuts("gda")
    posterior = case.est.idata_["posterior"]
    names = ["length", "width", "depth"]
    assert posterior["cov"].dims == ("chain", "draw", "feature", "feature2")
    np.testing.assert_array_equal(posterior["feature"].values, names)
    np.testing.assert_array_equal(posterior["feature2"].values, names)
    np.testing.assert_array_equal(posterior["class"].values, ["setosa", "virginica"])
    assert posterior["coef"].dims == ("chain", "draw", "feature")  # two classes: logistic form
    np.testing.assert_array_equal(case.est.feature_names_in_, names)


def test_numpy_input_gets_default_feature_names_and_no_feature_names_in(fits):
    case = fits.nuts("bernoulli_nb")
    posterior = case.est.idata_["posterior"]
    np.testing.assert_array_equal(posterior["feature"].values, [f"x{j}" for j in range(5)])
    np.testing.assert_array_equal(case.est.classes_, [0, 1])
    assert not hasattr(case.est, "feature_names_in_")


def test_predicting_with_reordered_columns_raises(fits):
    case = fits.nuts("multinomial_nb")
    X_new = _new_rows("multinomial_nb")
    with pytest.raises(ValueError, match="feature names"):
        case.est.predict_proba(X_new[X_new.columns[::-1]])


# --------------------------------------------------------------------------------------------
# Exact posterior predictive.


def test_multinomial_posterior_predictive_is_the_dirichlet_multinomial(fits):
    case = fits.conjugate("multinomial_nb")
    X_new = np.asarray(_new_rows("multinomial_nb"), dtype=float)
    counts, class_count = case.expected["feature_count"], case.expected["class_count"]
    a = counts + 1.0  # alpha = 1
    A = a.sum(axis=1)
    log_class = np.log((class_count + 1) / (class_count.sum() + len(class_count)))
    expected = np.empty((len(X_new), len(A)))
    for i, x in enumerate(X_new):
        for k in range(len(A)):
            expected[i, k] = (
                gammaln(A[k])
                - gammaln(A[k] + x.sum())
                + np.sum(gammaln(a[k] + x) - gammaln(a[k]))
                + log_class[k]
            )
    expected = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    got = case.est.posterior_predictive_proba(X_new)
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    plug_in = softmax(X_new @ np.log(case.expected["feature_prob"]).T + log_class, axis=1)
    assert not np.allclose(got, plug_in, atol=1e-3)  # longer documents: less confident


def test_multinomial_posterior_predictive_of_one_word_is_the_add_lambda_plug_in(fits):
    case = fits.conjugate("multinomial_nb")
    one_word = pd.DataFrame(np.eye(4, dtype=int), columns=case.X.columns)
    class_count = case.expected["class_count"]
    prior = (class_count + 1) / (class_count.sum() + len(class_count))
    joint = case.expected["feature_prob"].T * prior  # (word, class)
    expected = joint / joint.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(case.est.posterior_predictive_proba(one_word), expected, rtol=1e-10)


def test_bernoulli_posterior_predictive_is_the_add_lambda_plug_in(fits):
    case = fits.conjugate("bernoulli_nb")
    X_new = _new_rows("bernoulli_nb")
    phi = case.expected["feature_prob"]
    log_joint = X_new @ np.log(phi).T + (1 - X_new) @ np.log1p(-phi).T
    log_joint += np.log(case.expected["class_prob"])
    expected = softmax(log_joint, axis=1)
    np.testing.assert_allclose(case.est.posterior_predictive_proba(X_new), expected, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# scikit-learn integration (conjugate inference: no compilation).

TEXTS = [
    "win cheap money now",
    "cheap offer win prize",
    "claim your prize money",
    "win win cheap offer now",
    "meeting agenda for tomorrow",
    "lunch meeting tomorrow",
    "project agenda and notes",
    "notes from the project meeting",
]
LABELS = ["spam"] * 4 + ["ham"] * 4
FAST = {"inference": "conjugate", "compute_map": False, "draws": 200, "prior_draws": 0}


def test_clone_gives_an_unfitted_copy_with_the_same_params(fits):
    from sklearn.base import clone

    est = fits.conjugate("multinomial_nb").est
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    assert not hasattr(copy, "idata_")
    assert hasattr(est, "idata_")


def test_pipeline_with_count_vectorizer():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import Pipeline

    from bayesgen import MultinomialNB

    pipe = Pipeline(
        [("vect", CountVectorizer()), ("clf", MultinomialNB(random_seed=0, **FAST))]
    ).fit(TEXTS, LABELS)
    new = ["cheap prize money", "agenda for the meeting"]
    np.testing.assert_array_equal(pipe.predict(new), ["spam", "ham"])
    proba = pipe.predict_proba(new)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    vocabulary = pipe.named_steps["vect"].get_feature_names_out()
    np.testing.assert_array_equal(
        pipe.named_steps["clf"].idata_["posterior"]["feature"].values,
        [f"x{j}" for j in range(len(vocabulary))],
    )
    assert pipe.score(TEXTS, LABELS) == 1.0


def test_grid_search_over_alpha():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from bayesgen import MultinomialNB

    pipe = Pipeline([("vect", CountVectorizer()), ("clf", MultinomialNB(random_seed=0, **FAST))])
    grid = [0.1, 1.0, 10.0]
    search = GridSearchCV(pipe, {"clf__alpha": grid}, cv=2).fit(TEXTS, LABELS)
    assert search.best_params_["clf__alpha"] in grid
    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 3 and np.all((scores >= 0) & (scores <= 1))
    best = search.best_estimator_.named_steps["clf"]
    assert best.alpha == search.best_params_["clf__alpha"]
    assert best.closed_form_.attrs["alpha"] == best.alpha  # the refit used the chosen alpha


# --------------------------------------------------------------------------------------------
# Configuration errors.


def test_conjugate_inference_with_the_lkj_prior_raises():
    from bayesgen import GaussianDiscriminantAnalysis

    X, y = DATA["gda"]()
    est = GaussianDiscriminantAnalysis(cov_prior="lkj", inference="conjugate")
    with pytest.raises(ValueError, match="conjugate"):
        est.fit(X, y)


@pytest.mark.parametrize("name", NB_MODELS)
def test_alpha_zero_with_nuts_raises_a_clear_error(name):
    X, y = DATA[name]()
    with pytest.raises(ValueError, match=r"alpha.*> 0"):
        make_estimator(name, alpha=0.0, inference="nuts").fit(X, y)


def test_class_alpha_zero_with_nuts_raises_a_clear_error():
    X, y = DATA["gda"]()
    with pytest.raises(ValueError, match=r"class_alpha.*> 0"):
        make_estimator("gda", class_alpha=0.0, inference="nuts").fit(X, y)


def test_unknown_inference_raises():
    X, y = DATA["bernoulli_nb"]()
    with pytest.raises(ValueError, match="inference"):
        make_estimator("bernoulli_nb", inference="vi").fit(X, y)


# --------------------------------------------------------------------------------------------
# float32 storage.


@pytest.mark.parametrize("name", MODELS)
def test_float32_draws_and_predictions_close_to_float64(fits, name):
    single = fits.conjugate(name, dtype="float32").est
    double = fits.conjugate(name).est
    for group in ("posterior", "prior"):
        for variable in single.idata_[group].data_vars.values():
            assert variable.dtype == np.float32
    X_new = _new_rows(name)
    proba = single.predict_proba(X_new)
    assert proba.dtype == np.float64
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    # different random streams: agreement within Monte Carlo error of 4,000 draws
    np.testing.assert_allclose(proba, double.predict_proba(X_new), atol=0.02)
    for variable in fits.conjugate(name).parameters:
        np.testing.assert_allclose(
            single.posterior_mean()[variable].values,
            fits.conjugate(name).expected[variable],
            atol=0.02,
        )


# --------------------------------------------------------------------------------------------
# LKJ prior (no closed form): NUTS only, another graph to compile.


@pytest.mark.slow
def test_gda_lkj_nuts_gives_mu_near_the_mle():
    from bayesgen import GaussianDiscriminantAnalysis

    rng = np.random.default_rng(5)
    y = np.arange(90) % 3
    means = np.array([[0.0, 0.0, 0.0], [2.0, -1.0, 0.5], [-1.0, 1.5, 2.0]])
    X = means[y] + rng.normal(size=(90, 3)) @ np.array([[1, 0, 0], [0.4, 0.8, 0], [0, 0.3, 0.7]])
    est = GaussianDiscriminantAnalysis(
        cov_prior="lkj",
        draws=1000,
        tune=1000,
        chains=2,
        cores=1,
        random_seed=1,
        compute_map=False,
        prior_draws=0,
    ).fit(X, y)
    mle_mu = np.array([X[y == k].mean(axis=0) for k in range(3)])
    scatter = sum((X[y == k] - mle_mu[k]).T @ (X[y == k] - mle_mu[k]) for k in range(3))
    means = est.posterior_mean()
    np.testing.assert_allclose(means["mu"].values, mle_mu, atol=0.05)
    np.testing.assert_allclose(np.diag(means["cov"].values), np.diag(scatter) / 90, rtol=0.2)
    assert means["coef"].dims == ("class", "feature")


def test_draw_quantiles_on_two_threads_equal_numpys_and_cover_every_column():
    from bayesgen.estimators.prediction import _THREADED_QUANTILE_VALUES
    from bayesgen.estimators.prediction import draw_quantiles as _draw_quantiles

    rng = np.random.default_rng(0)
    samples = rng.random((200, 101, 70))  # odd columns: the halves differ in size
    assert samples.size >= _THREADED_QUANTILE_VALUES  # the threaded path
    expected = np.quantile(samples, [0.03, 0.97], axis=0)
    np.testing.assert_array_equal(_draw_quantiles(samples.copy(), [0.03, 0.97]), expected)
    small = samples[:, :3, :5].copy()
    np.testing.assert_array_equal(
        _draw_quantiles(small.copy(), [0.1, 0.9]), np.quantile(small, [0.1, 0.9], axis=0)
    )
