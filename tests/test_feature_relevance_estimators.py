"""Which features matter, on fitted estimators (bayesgen.estimators.feature_relevance): the
table, averaging's limit ρ → 1 (the fitted model's own exact predictive and leave-one-out),
mixed models and the refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayesgen
from bayesgen.estimators import feature_relevance as relevance

CONJUGATE = {"inference": "conjugate", "compute_map": False, "random_seed": 0}
ALMOST_SURE = 1.0 - 1e-13  # every feature relevant: the fitted model itself


@pytest.fixture(scope="module")
def binary_data():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 40)
    signal = rng.random(80) < np.where(y == 0, 0.15, 0.85)
    X = np.column_stack([signal, rng.random(80) < 0.5, rng.random(80) < 0.3]).astype(int)
    return X, np.array(["ham", "spam"])[y]


@pytest.fixture(scope="module")
def real_data():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 3)) + np.outer(y, [2.0, 0.0, 0.0])
    return X, y


def fitted(estimator, data):
    return estimator.set_params(**CONJUGATE).fit(*data)


def test_table_ranks_the_signal_first_with_its_columns(binary_data):
    table = fitted(bayesgen.BernoulliNB(), binary_data).feature_relevance()
    assert table["feature"].iloc[0] == "x0"
    assert table["p_relevant"].iloc[0] > 0.999
    assert list(table.columns[:5]) == [
        "feature",
        "log_bayes_factor",
        "p_relevant",
        "effect_kind",
        "effect[ham]",
    ]
    assert table["log_bayes_factor"].is_monotonic_decreasing
    # spam has x0 far more often: its log-odds interval is above 0, ham's below
    first = table.iloc[0]
    assert first["effect_lower[spam]"] > 0 > first["effect_upper[ham]"]


def test_gaussian_and_poisson_tables(real_data):
    table = relevance.feature_relevance(fitted(bayesgen.GaussianNB(), real_data))
    assert table["feature"].iloc[0] == "x0" and table["p_relevant"].iloc[0] > 0.999
    assert set(table["effect_kind"]) == {"standardised mean difference"}
    _, y = real_data
    counts = np.random.default_rng(2).poisson(np.where(y[:, None] == 2, [6, 1], [1, 1]))
    table = relevance.feature_relevance(fitted(bayesgen.PoissonNB(), (counts, y)))
    assert table["feature"].iloc[0] == "x0" and table["p_relevant"].iloc[0] > 0.999


def test_gaussian_and_poisson_estimators_have_the_method(real_data):
    _, y = real_data
    counts = np.random.default_rng(2).poisson(np.where(y[:, None] == 2, [6, 1], [1, 1]))
    for estimator, data in (
        (bayesgen.GaussianNB(), real_data),
        (bayesgen.PoissonNB(), (counts, y)),
    ):
        est = fitted(estimator, data)
        method = est.feature_relevance()[["feature", "log_bayes_factor"]]
        function = relevance.feature_relevance(est)[["feature", "log_bayes_factor"]]
        pd.testing.assert_frame_equal(method, function)


def test_categorical_table_has_a_row_per_real_category():
    X = np.array([[0, 1], [0, 0], [1, 1], [2, 0], [2, 1], [2, 0]] * 4)
    y = np.array([0, 0, 0, 1, 1, 1] * 4)
    table = fitted(bayesgen.CategoricalNB(), (X, y)).feature_relevance()
    assert sorted(zip(table["feature"], table["category"], strict=True)) == [
        ("x0", 0),
        ("x0", 1),
        ("x0", 2),
        ("x1", 0),
        ("x1", 1),
    ]
    assert table["feature"].iloc[0] == "x0"


def test_multinomial_table_has_monroe_z_scores_and_top():
    X = np.array([[5, 0, 1, 1], [4, 1, 0, 1], [0, 5, 1, 1], [1, 4, 1, 0]] * 5)
    y = np.array(["a", "a", "b", "b"] * 5)
    table = fitted(bayesgen.MultinomialNB(), (X, y)).feature_relevance(top=2)
    assert len(table) == 2 and set(table["feature"]) == {"x0", "x1"}
    row = table.set_index("feature").loc["x0"]
    assert row["z[a]"] > 2 and row["z[b]"] < -2


def test_averaging_with_every_feature_relevant_is_the_fitted_model(binary_data, real_data):
    for estimator, data in (
        (bayesgen.BernoulliNB(alpha=0.7), binary_data),
        (bayesgen.GaussianNB(), real_data),
    ):
        est = fitted(estimator, data)
        X = data[0][:10]
        got = relevance.average_features_predict_proba(est, X, prior_inclusion=ALMOST_SURE)
        np.testing.assert_allclose(got, est.posterior_predictive_proba(X), rtol=1e-8)
        loo = relevance.average_features_loo_proba(est, prior_inclusion=ALMOST_SURE)
        np.testing.assert_allclose(loo, bayesgen.loo_proba(est), rtol=1e-8)


def test_averaging_with_pooled_prior_mean_and_per_class_alpha(binary_data):
    est = fitted(
        bayesgen.BernoulliNB(alpha={"ham": 0.5, "spam": 2.0}, prior_mean="pooled"), binary_data
    )
    X = binary_data[0][:5]
    got = est.average_features_predict_proba(X, prior_inclusion=ALMOST_SURE)
    np.testing.assert_allclose(got, est.posterior_predictive_proba(X), rtol=1e-8)


def test_averaging_a_noise_feature_moves_predictions_towards_the_signal_alone(binary_data):
    X, y = binary_data
    est = fitted(bayesgen.BernoulliNB(), binary_data)
    averaged = est.average_features_predict_proba(X)
    signal_only = fitted(bayesgen.BernoulliNB(), (X[:, :1], y)).posterior_predictive_proba(X[:, :1])
    full = est.posterior_predictive_proba(X)
    assert np.abs(averaged - signal_only).mean() < np.abs(full - signal_only).mean()


def test_mixed_model_gives_every_naive_bayes_block():
    rng = np.random.default_rng(3)
    y = np.repeat(["a", "b"], 30)
    table = pd.DataFrame(
        {
            "mass": rng.normal(size=60) + (y == "b") * 3.0,
            "island": rng.choice(["P", "Q", "R"], size=60),
        }
    )
    est = bayesgen.NaiveBayes(**CONJUGATE).fit(table, y)
    frame = est.feature_relevance()
    assert "block" in frame.columns and frame["feature"].iloc[0] == "mass"
    proba = relevance.average_features_predict_proba(est, table, prior_inclusion=ALMOST_SURE)
    np.testing.assert_allclose(proba, est.posterior_predictive_proba(table), rtol=1e-8)


@pytest.mark.parametrize("bad", [0, 1, 1.2, -0.5])
def test_bad_prior_inclusion_is_refused_by_name(binary_data, bad):
    est = fitted(bayesgen.BernoulliNB(), binary_data)
    with pytest.raises(ValueError, match="prior_inclusion"):
        est.feature_relevance(prior_inclusion=bad)
    with pytest.raises(ValueError, match="prior_inclusion"):
        est.average_features_predict_proba(binary_data[0], prior_inclusion=bad)


def test_a_fit_without_its_statistics_is_refused(binary_data):
    est = fitted(bayesgen.BernoulliNB(), binary_data)
    est.closed_form_ = est.closed_form_.drop_vars("feature_count")
    with pytest.raises(ValueError, match="feature_count"):
        est.feature_relevance()


def test_a_hyperprior_on_alpha_is_refused(binary_data):
    est = fitted(bayesgen.BernoulliNB(alpha_prior=(2.0, 1.0)), binary_data)
    with pytest.raises(ValueError, match="alpha_prior"):
        est.feature_relevance()


def test_an_unfitted_estimator_is_refused():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        bayesgen.BernoulliNB().feature_relevance()


def test_loo_method_is_the_function(binary_data):
    est = fitted(bayesgen.BernoulliNB(), binary_data)
    np.testing.assert_array_equal(
        est.average_features_loo_proba(prior_inclusion=0.3),
        relevance.average_features_loo_proba(est, prior_inclusion=0.3),
    )


def test_unavailable_is_none_where_the_table_is_given_and_the_refusal_otherwise(binary_data):
    est = fitted(bayesgen.BernoulliNB(), binary_data)
    assert relevance.relevance_unavailable(est) is None
    est.closed_form_ = est.closed_form_.drop_vars("feature_count")
    reason = relevance.relevance_unavailable(est)
    with pytest.raises(ValueError) as refused:
        est.feature_relevance()
    assert reason == str(refused.value) and "feature_count" in reason
    rng = np.random.default_rng(0)
    gda = bayesgen.GaussianDiscriminantAnalysis(**CONJUGATE)
    gda.fit(rng.normal(size=(20, 2)), np.arange(20) % 2)
    assert "naive Bayes block" in relevance.relevance_unavailable(gda)


def test_unavailable_for_a_mixed_model_of_no_naive_bayes_block():
    rng = np.random.default_rng(1)
    y = np.arange(30) % 2
    X = rng.normal(size=(30, 2)) + y[:, None]
    est = bayesgen.NaiveBayes(blocks=[("all", "gda", [0, 1])], **CONJUGATE).fit(X, y)
    assert relevance.relevance_unavailable(est) == (
        "est: no block of this mixed model is a naive Bayes block."
    )
    with pytest.raises(ValueError, match="no block of this mixed model"):
        est.feature_relevance()
