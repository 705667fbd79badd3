"""The naive Bayes families (bayesgen.families.multinomial, .bernoulli, .categorical).

Two kinds of test. The "same as the current code" tests compare every method of a family with
the code it was moved from (closed_form, inference, generative, estimators), bit for bit; they
are scaffolding for the move. The "independent" tests compute the expected values by hand from
X and y (tests/conftest.py's ``expected_statistics``, or the formulas written out here).
Nothing here samples with NUTS or compiles a PyMC graph.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import xarray as xr
from conftest import DATA, NB_MODELS, expected_statistics

from bayesgen import closed_form as cf
from bayesgen.families import bernoulli, categorical, multinomial

FAMILIES = {
    "multinomial_nb": multinomial.FAMILY,
    "bernoulli_nb": bernoulli.FAMILY,
    "categorical_nb": categorical.FAMILY,
}
OLD_FIT = {
    "multinomial_nb": cf.multinomial_nb,
    "bernoulli_nb": cf.bernoulli_nb,
    "categorical_nb": cf.categorical_nb,
}
#: Smoothing settings: the default, the MLE (λ = 0 leaves zero probabilities and an order),
#: and a prior with a mode everywhere.
SMOOTHING = [
    {"alpha": 1.0, "class_alpha": 1.0},
    {"alpha": 0.0, "class_alpha": 0.0},
    {"alpha": 2.5, "class_alpha": 2.0},
]


def _fit(name, **smoothing):
    X, y = DATA[name]()
    return X, y, FAMILIES[name].fit(X, y, **smoothing)


def _checked(name, estimates, X):
    return FAMILIES[name].prediction_features(estimates, X)


# --------------------------------------------------------------------------------------------
# Class attributes.


@pytest.mark.parametrize(
    ("name", "estimator", "cli_name", "kind"),
    [
        ("multinomial_nb", "MultinomialNB", "multinomial", "count"),
        ("bernoulli_nb", "BernoulliNB", "bernoulli", "binary"),
        ("categorical_nb", "CategoricalNB", "categorical", "categorical"),
    ],
)
def test_family_names(name, estimator, cli_name, kind):
    family = FAMILIES[name]
    assert (family.name, family.estimator, family.cli_name, family.feature_kind) == (
        name,
        estimator,
        cli_name,
        kind,
    )


@pytest.mark.parametrize("name", NB_MODELS)
def test_parameters_and_statistics_are_the_dims_of_the_fit(name):
    _, _, estimates = _fit(name)
    family = FAMILIES[name]
    assert list(family.parameters) == ["class_prob", "feature_prob"]
    for variable, dims in {**family.parameters, **family.statistics}.items():
        assert estimates[variable].dims == dims


# --------------------------------------------------------------------------------------------
# Orders of zero probabilities.


def test_the_mle_has_an_order_where_probabilities_are_zero():
    # Exercises the order branch above: word "win" never occurs in class 0 of this X.
    X = np.array([[2, 0], [1, 0], [0, 3], [1, 1]])
    estimates = multinomial.FAMILY.fit(X, [0, 0, 1, 1], alpha=0.0, class_alpha=0.0)
    _, order = multinomial.FAMILY.plug_in_log_joint(
        estimates, _checked("multinomial_nb", estimates, X)
    )
    np.testing.assert_array_equal(order, [[0, 0], [0, 0], [3, 0], [1, 0]])


# --------------------------------------------------------------------------------------------
# Independent expectations, computed from X and y.


def _hand_joint(name, X, class_prob, feature_prob):
    """log π_k + Σ_j log p(x_j | k), written out per model (multinomial without its
    coefficient)."""
    X = np.asarray(X, dtype=float)
    if name == "multinomial_nb":
        features = X @ np.log(feature_prob).T
    elif name == "bernoulli_nb":
        features = X @ np.log(feature_prob).T + (1 - X) @ np.log1p(-feature_prob).T
    else:
        codes = X.astype(int)
        features = np.array(
            [
                [sum(np.log(feature_prob[k, j, c]) for j, c in enumerate(row)) for k in range(3)]
                for row in codes
            ]
        )
    return features + np.log(class_prob)


@pytest.mark.parametrize("alpha", [1.0, 0.3])
@pytest.mark.parametrize("name", NB_MODELS)
def test_fit_gives_the_add_lambda_estimates(name, alpha):
    X, y, estimates = _fit(name, alpha=alpha, class_alpha=2.0)
    expected = expected_statistics(name, X, y, alpha=alpha, class_alpha=2.0)
    np.testing.assert_array_equal(estimates["class"].values, expected["classes"])
    np.testing.assert_array_equal(estimates["class_count"].values, expected["class_count"])
    np.testing.assert_array_equal(estimates["feature_count"].values, expected["feature_count"])
    np.testing.assert_allclose(estimates["class_prob"].values, expected["class_prob"], rtol=1e-14)
    np.testing.assert_allclose(
        estimates["feature_prob"].values, expected["feature_prob"], rtol=1e-14
    )
    assert estimates.attrs == {
        "model": name,
        "alpha": alpha,
        "class_alpha": 2.0,
        "n_samples": len(y),
        "feature_names_given": int(name == "multinomial_nb"),  # its X is a DataFrame
    }


@pytest.mark.parametrize("name", NB_MODELS)
def test_mle_is_add_lambda_with_lambda_zero(name):
    X, y, estimates = _fit(name, alpha=0.0, class_alpha=0.0)
    expected = expected_statistics(name, X, y, alpha=0.0, class_alpha=0.0)
    np.testing.assert_allclose(estimates["class_prob_mle"].values, expected["class_prob"])
    np.testing.assert_allclose(estimates["feature_prob_mle"].values, expected["feature_prob"])


def test_categorical_fit_pads_beyond_n_categories():
    _, _, estimates = _fit("categorical_nb")
    np.testing.assert_array_equal(estimates["n_categories"].values, [2, 3, 4])
    np.testing.assert_array_equal(
        estimates["category_mask"].values,
        [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]],
    )
    np.testing.assert_array_equal(estimates["category"].values, [0, 1, 2, 3])
    np.testing.assert_array_equal(estimates["feature_prob"].values[:, 0, 2:], 0.0)
    np.testing.assert_allclose(estimates["feature_prob"].values.sum(axis=-1), 1.0, rtol=1e-14)


def test_bernoulli_fit_thresholds_with_binarize():
    X = np.array([[0.2, 3.0], [0.9, 0.0], [0.6, 0.4], [0.1, 2.0]])
    estimates = bernoulli.FAMILY.fit(X, [0, 0, 1, 1], alpha=1.0, binarize=0.5)
    # Above 0.5 the rows are [0, 1], [1, 0] (class 0) and [1, 0], [0, 1] (class 1).
    np.testing.assert_array_equal(estimates["feature_count"].values, [[1, 1], [1, 1]])
    np.testing.assert_allclose(estimates["feature_prob"].values, np.full((2, 2), 2 / 4))
    assert estimates.attrs["binarize"] == 0.5


def test_multinomial_fit_refuses_binarize():
    X, y = DATA["multinomial_nb"]()
    with pytest.raises(TypeError, match="binarize"):
        multinomial.FAMILY.fit(X, y, binarize=0.5)


@pytest.mark.parametrize("name", NB_MODELS)
def test_fit_refuses_negative_alpha(name):
    X, y = DATA[name]()
    with pytest.raises(ValueError, match=r"alpha: expected a finite number >= 0; got -1.0"):
        FAMILIES[name].fit(X, y, alpha=-1)


@pytest.mark.parametrize("name", NB_MODELS)
def test_plug_in_log_joint_is_the_log_of_the_add_lambda_model(name):
    X, y, estimates = _fit(name, alpha=0.6)
    expected = expected_statistics(name, X, y, alpha=0.6)
    joint, order = FAMILIES[name].plug_in_log_joint(estimates, _checked(name, estimates, X))
    hand = _hand_joint(name, X, expected["class_prob"], expected["feature_prob"])
    np.testing.assert_allclose(joint, hand, rtol=1e-12)
    assert order is None


@pytest.mark.parametrize("name", NB_MODELS)
def test_draw_log_joint_of_one_draw_is_its_plug_in_joint(name):
    X, y, estimates = _fit(name)
    expected = expected_statistics(name, X, y)
    parameters = FAMILIES[name].parameters
    draws = xr.Dataset(
        {
            "class_prob": (("draw", *parameters["class_prob"]), expected["class_prob"][None]),
            "feature_prob": (
                ("draw", *parameters["feature_prob"]),
                expected["feature_prob"][None],
            ),
        }
    )
    joint = FAMILIES[name].draw_log_joint(estimates, _checked(name, estimates, X), draws)
    hand = _hand_joint(name, X, expected["class_prob"], expected["feature_prob"])
    assert joint.shape == (1, *hand.shape)
    np.testing.assert_allclose(joint[0], hand, rtol=1e-12)


def test_multinomial_predictive_of_one_word_equals_the_plug_in():
    _, _, estimates = _fit("multinomial_nb", alpha=0.7)
    one_word = np.eye(4)
    predictive = multinomial.FAMILY.predictive_log_joint(estimates, one_word)
    plug_in, _ = multinomial.FAMILY.plug_in_log_joint(estimates, one_word)
    np.testing.assert_allclose(
        cf.normalize_log_proba(predictive), cf.normalize_log_proba(plug_in), rtol=1e-12
    )


def test_multinomial_predictive_is_the_dirichlet_multinomial():
    # Two words, λ = 1, class k: p(x = [2, 0] | k) ∝ a_k0 (a_k0 + 1) / (A_k (A_k + 1)).
    X = np.array([[1, 0], [1, 1], [0, 2]])
    estimates = multinomial.FAMILY.fit(X, [0, 0, 1], alpha=1.0, class_alpha=1.0)
    a = np.array([[3.0, 2.0], [1.0, 3.0]])  # counts + λ
    total = a.sum(axis=1)
    class_prob = np.array([3 / 5, 2 / 5])
    hand = np.log(a[:, 0] * (a[:, 0] + 1) / (total * (total + 1)) * class_prob)
    joint = multinomial.FAMILY.predictive_log_joint(estimates, np.array([[2.0, 0.0]]))
    np.testing.assert_allclose(joint[0], hand, rtol=1e-12)


@pytest.mark.parametrize("name", NB_MODELS)
def test_predictive_needs_a_proper_prior(name):
    X, _, estimates = _fit(name, alpha=0.0)
    with pytest.raises(ValueError, match=r"needs alpha > 0 \(a proper Dirichlet prior\)"):
        FAMILIES[name].predictive_log_joint(estimates, _checked(name, estimates, X))


def test_categorical_prediction_refuses_an_unseen_code():
    _, _, estimates = _fit("categorical_nb")
    X = np.array([[0, 0, 0], [1, 3, 0]])
    with pytest.raises(
        ValueError, match=r"X: category code 3 of feature 'x1' \(row 1\) was not among the 3"
    ):
        categorical.FAMILY.prediction_features(estimates, X)


@pytest.mark.parametrize("name", NB_MODELS)
def test_conjugate_mode_with_lambda_plus_one_is_add_lambda(name):
    # The mode of Dirichlet(n + λ + 1) is (n + λ) / (N + Kλ): add-λ with λ one smaller.
    X, y, estimates = _fit(name, alpha=1.5, class_alpha=2.0)
    expected = expected_statistics(name, X, y, alpha=0.5, class_alpha=1.0)
    mode = FAMILIES[name].conjugate_mode(estimates)
    np.testing.assert_allclose(mode["class_prob"][1], expected["class_prob"], rtol=1e-12)
    np.testing.assert_allclose(mode["feature_prob"][1], expected["feature_prob"], rtol=1e-12)


@pytest.mark.parametrize("name", NB_MODELS)
def test_conjugate_mode_is_nan_without_a_mode(name):
    # Feature 1 never takes value 1 in class 0 (codes 0 only for the categorical model): with
    # λ = 0.5 < 1 that count of 0 makes the density unbounded, so the simplex has no mode.
    X = np.array([[1, 0, 0], [1, 0, 1], [0, 1, 1], [0, 1, 0]])
    estimates = FAMILIES[name].fit(X, [0, 0, 1, 1], alpha=0.5)
    mode = FAMILIES[name].conjugate_mode(estimates)
    assert np.isnan(mode["feature_prob"][1][0, 1]).all()
    np.testing.assert_array_equal(mode["class_prob"][1], [0.5, 0.5])


def _prior_means(name, estimates):
    """Means of the symmetric priors: 1/K per class, 1/V per word, 1/2, 1/K_n per category."""
    n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
    if name == "multinomial_nb":
        feature_prob = np.full((n_classes, n_features), 1 / n_features)
    elif name == "bernoulli_nb":
        feature_prob = np.full((n_classes, n_features), 0.5)
    else:
        widths = estimates["n_categories"].values
        mask = np.arange(widths.max()) < widths[:, None]
        feature_prob = np.broadcast_to(
            np.where(mask, 1 / widths[:, None], 0.0), (n_classes, *mask.shape)
        )
    return {"class_prob": np.full(n_classes, 1 / n_classes), "feature_prob": feature_prob}


@pytest.mark.parametrize("posterior", [True, False])
@pytest.mark.parametrize("name", NB_MODELS)
def test_conjugate_draws_have_the_exact_means(name, posterior):
    X, y, estimates = _fit(name, alpha=0.8)
    if posterior:
        expected = expected_statistics(name, X, y, alpha=0.8)
        sd = expected["sd"]
    else:  # the prior is the posterior given no data
        expected = _prior_means(name, estimates)
        sd = {"class_prob": 0.5, "feature_prob": 0.5}  # the largest sd of a Dirichlet component
    n_draws = 4000
    draws = FAMILIES[name].conjugate_draws(
        estimates, np.random.default_rng(0), (1, n_draws), "float64", posterior=posterior
    )
    for variable in ("class_prob", "feature_prob"):
        values = draws[variable][1][0]
        np.testing.assert_allclose(
            values.mean(axis=0),
            expected[variable],
            rtol=0,
            atol=6 * np.max(sd[variable]) / np.sqrt(n_draws),
        )


def _simulated_word_totals(theta, n_draws=400, seed=0):
    """Per class, the mean over ``n_draws`` simulations of each word's total count, with the
    documents' lengths: class 0 has 40 documents of 40 tokens over 4 words (more tokens than
    cells: one multinomial draw per document), class 1 has 200 one-token documents (fewer
    tokens than cells: one stream of tokens)."""
    X = sp.csr_array(np.vstack([np.full((40, 4), 10), np.eye(4)[np.arange(200) % 4]]))
    y = np.r_[np.zeros(40, dtype=int), np.ones(200, dtype=int)]
    rng = np.random.default_rng(seed)
    totals = np.zeros((2, 4))
    for _ in range(n_draws):
        simulated = multinomial.FAMILY.simulate_rows(None, X, y, {"feature_prob": theta}, rng)
        np.testing.assert_array_equal(simulated.sum(axis=1), X.sum(axis=1))
        dense = simulated.toarray()
        totals += [dense[:40].sum(axis=0), dense[40:].sum(axis=0)]
    return totals / n_draws, np.array([1600, 200])


def test_a_token_stream_is_split_into_documents_at_random():
    # 300 documents of 3 tokens over 1,000 Zipf words: fewer tokens than cells, so one stream
    # of tokens for the class. Each document's tokens must be independent draws from θ: its
    # distinct words then average Σ_w 1 − (1 − θ_w)³ (2.91 here); a stream cut into
    # documents in word order would give runs of one word (1.69). Each count is 1 to 3,
    # so its SD is at most 1 and the mean of 6,000 documents is off by 4 / √6000 at most.
    n_words, n_docs, n_sims = 1000, 300, 20
    zipf = 1.0 / np.arange(1, n_words + 1)
    theta = (zipf / zipf.sum())[None, :]
    X = sp.csr_array(
        (np.full(n_docs, 3.0), (np.arange(n_docs), np.zeros(n_docs, int))), shape=(n_docs, n_words)
    )
    y = np.zeros(n_docs, dtype=int)
    rng = np.random.default_rng(0)
    distinct = [
        np.diff(
            (multinomial.FAMILY.simulate_rows(None, X, y, {"feature_prob": theta}, rng) > 0)
            .tocsr()
            .indptr
        )
        for _ in range(n_sims)
    ]
    expected = (1.0 - (1.0 - theta[0]) ** 3).sum()
    assert abs(np.mean(distinct) - expected) < 4.0 / np.sqrt(n_docs * n_sims)


@pytest.mark.parametrize("assumed_shift", [0.0, 0.05])
def test_simulated_documents_keep_their_lengths_and_draw_words_by_theta(assumed_shift):
    # Both ways of drawing (per document, and as a token stream) give each class's word totals
    # the mean N_k θ_k and the binomial spread N_k θ (1 − θ) over documents, and never draw
    # the zero-probability last word. Checked against θ shifted by 0.05 the z-scores must be
    # large.
    theta = np.array([[0.5, 0.3, 0.2, 0.0], [0.2, 0.1, 0.7, 0.0]])
    means, tokens = _simulated_word_totals(theta)
    assumed = theta + assumed_shift * np.array([[1, -1, 0, 0], [1, -1, 0, 0]])
    expected = tokens[:, None] * assumed
    spread = np.sqrt(tokens[:, None] * assumed * (1 - assumed) / 400)
    np.testing.assert_array_equal(means[:, 3], 0.0)
    z = np.abs(means - expected)[:, :3] / spread[:, :3]
    if assumed_shift:
        assert z.max() > 10
    else:
        assert z.max() < 4.5
