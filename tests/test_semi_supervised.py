"""The semi-supervised fit: rows without a label, their class latent, the MAP found by EM.

All fits are conjugate (nothing compiles). The expected values come from outside the code
under test: scipy's Dirichlet and multinomial densities for the log posterior, the textbook
closed form for the supervised fit, and held-out labels for the accuracy.
"""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from scipy.special import logsumexp

import bayesgen
from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    MultinomialNB,
    NaiveBayes,
    PoissonNB,
    QuadraticDiscriminantAnalysis,
    closed_form,
)
from bayesgen.families import family
from bayesgen.inference.sampling import conjugate_map
from bayesgen.inference.semi_supervised import em_map, stack_rows

# Few Gibbs sweeps (tune 20, 2 chains): these tests check EM and the layout, not the draws.
FAST = {
    "inference": "conjugate",
    "draws": 50,
    "tune": 20,
    "chains": 2,
    "prior_draws": 0,
    "random_seed": 0,
}
N_LABELLED, N_UNLABELLED, N_TEST = 10, 500, 1000


def multinomial_data(seed=0, *, n_unlabelled=N_UNLABELLED, concentration=300.0, length=20):
    """Two classes of 20-word documents over 100 words, whose word probabilities differ
    moderately (each a Dirichlet draw around a shared base); the first ten rows alternate the
    classes, so that both are labelled."""
    rng = np.random.default_rng(seed)
    base = rng.dirichlet(np.ones(100))
    theta = np.array([rng.dirichlet(base * concentration) for _ in range(2)])
    n_rows = N_LABELLED + n_unlabelled + N_TEST
    y = np.r_[[0, 1] * (N_LABELLED // 2), rng.integers(0, 2, n_rows - N_LABELLED)]
    X = np.array([rng.multinomial(length, theta[k]) for k in y])
    return X, y


def gaussian_data(seed=0):
    """Two classes in five dimensions, means 0.8 apart per feature, SDs 1 and 1.5."""
    rng = np.random.default_rng(seed)
    n_rows = N_LABELLED + N_UNLABELLED + N_TEST
    y = np.r_[[0, 1] * (N_LABELLED // 2), rng.integers(0, 2, n_rows - N_LABELLED)]
    means, sds = np.array([0.0, 0.8]), np.array([1.0, 1.5])
    X = means[y][:, None] + sds[y][:, None] * rng.normal(size=(n_rows, 5))
    return X, y


def hide_labels(y, n_training):
    """The training labels with all but the first ten missing (NaN)."""
    hidden = y[:n_training].astype(float)
    hidden[N_LABELLED:] = np.nan
    return hidden


def small_data(seed=0):
    """A small two-class count data set: 6 labelled rows, 30 unlabelled."""
    rng = np.random.default_rng(seed)
    y = np.r_[[0, 1] * 3, rng.integers(0, 2, 30)]
    rates = np.array([[4.0, 1.0, 1.0, 2.0], [1.0, 4.0, 2.0, 1.0]])
    X = rng.poisson(rates[y]).astype(float)
    return X, y


def log_posterior(X_labelled, y_labelled, X_unlabelled, point, *, alpha, class_alpha):
    """log p(θ) + Σ_L log p(x, y | θ) + Σ_U log p(x | θ) of multinomial naive Bayes, by scipy:
    π ~ Dirichlet(class_alpha), θ_k ~ Dirichlet(alpha), x | y = k ~ Multinomial(L, θ_k)."""
    class_prob = point["class_prob"].values
    feature_prob = point["feature_prob"].values
    n_classes, n_features = feature_prob.shape
    total = stats.dirichlet.logpdf(class_prob, np.full(n_classes, class_alpha))
    total += sum(stats.dirichlet.logpdf(row, np.full(n_features, alpha)) for row in feature_prob)

    def joint(X):
        lengths = X.sum(axis=1)
        return np.stack(
            [
                np.log(class_prob[k]) + stats.multinomial.logpmf(X, lengths, feature_prob[k])
                for k in range(n_classes)
            ],
            axis=1,
        )

    total += joint(X_labelled)[np.arange(len(y_labelled)), y_labelled].sum()
    return total + logsumexp(joint(X_unlabelled), axis=1).sum()


def em_step_by_step(X_labelled, y_labelled, X_unlabelled, n_steps, *, alpha, class_alpha):
    """The EM's iterates θ_1, θ_2, … (each from one step started at the responsibilities of
    the one before), and the EM's own trace of each step."""
    model = family("multinomial_nb")
    classes = np.array([0, 1])
    labelled = model.sufficient_statistics(X_labelled, y_labelled)
    stacked = stack_rows(X_unlabelled, 2)

    def unlabelled(weights):
        return model.sufficient_statistics(
            stacked,
            np.repeat(classes, len(X_unlabelled)),
            sample_weight=weights.T.ravel(),
            classes=classes,
        )

    def estimates_of(statistics):
        return model.from_statistics(statistics, alpha=alpha, class_alpha=class_alpha)

    common = {
        "labelled_statistics": labelled,
        "unlabelled_statistics": unlabelled,
        "estimates_of": estimates_of,
        "labelled_rows": X_labelled,
        "labelled_codes": y_labelled,
        "unlabelled_rows": X_unlabelled,
        "max_iter": 1,
    }
    responsibilities, points, trace = None, [], []
    for _ in range(n_steps):
        step = em_map(model, initial=responsibilities, **common)
        points.append(conjugate_map(step.estimates, model_family=model))
        trace.append(step.log_likelihood[0])
        responsibilities = step.responsibilities
    return points, np.array(trace), common


# -- with every row labelled: the supervised fit, bit for bit ----------------------------------


def test_every_row_labelled_is_the_supervised_closed_form_bit_for_bit():
    X, y = small_data()
    est = MultinomialNB(alpha=2.0, **FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight=0.5)
    textbook = closed_form.multinomial_nb(X, y, alpha=2.0)
    for name in ("class_count", "feature_count", "class_prob", "feature_prob"):
        assert_array_equal(est.closed_form_[name].values, textbook[name].values)
    assert "unlabelled_rows" not in est.closed_form_.attrs
    assert not hasattr(est, "transduction_")


@pytest.mark.parametrize("Estimator", [MultinomialNB, GaussianNB, PoissonNB])
def test_every_row_labelled_draws_the_supervised_posterior_bit_for_bit(Estimator):
    X, y = small_data()
    plain = Estimator(**FAST).fit(X, y)
    marked = Estimator(**FAST).fit(X, y, unlabelled_label=-1)
    for name in plain.idata_["posterior"].data_vars:
        assert_array_equal(
            marked.idata_["posterior"][name].values, plain.idata_["posterior"][name].values
        )


def test_minus_one_is_a_class_unless_it_is_named_the_unlabelled_label():
    X, y = small_data()
    signed = np.where(y == 0, -1, 1)
    est = MultinomialNB(**FAST).fit(X, signed)
    assert est.classes_.tolist() == [-1, 1]
    assert not hasattr(est, "transduction_")


# -- EM ------------------------------------------------------------------------------------------


def test_em_increases_the_log_posterior_at_every_step():
    X, y = multinomial_data(0, n_unlabelled=200, concentration=1000.0)
    X_labelled, y_labelled = X[:N_LABELLED], y[:N_LABELLED]
    X_unlabelled = X[N_LABELLED : N_LABELLED + 200]
    points, _, _ = em_step_by_step(
        X_labelled, y_labelled, X_unlabelled, 25, alpha=2.0, class_alpha=2.0
    )
    values = np.array(
        [
            log_posterior(X_labelled, y_labelled, X_unlabelled, point, alpha=2.0, class_alpha=2.0)
            for point in points
        ]
    )
    steps = np.diff(values)
    assert np.all(steps >= -1e-9 * np.abs(values[1:])), steps
    assert values[-1] - values[0] > 1.0  # it did climb, not merely stand still


def test_em_trace_is_the_log_likelihood_at_each_map():
    X, y = small_data()
    X_labelled, y_labelled, X_unlabelled = X[:6], y[:6], X[6:]
    points, trace, _ = em_step_by_step(
        X_labelled, y_labelled, X_unlabelled, 3, alpha=2.0, class_alpha=2.0
    )
    for point, value in zip(points, trace, strict=True):
        prior = stats.dirichlet.logpdf(point["class_prob"].values, [2.0, 2.0]) + sum(
            stats.dirichlet.logpdf(row, np.full(4, 2.0)) for row in point["feature_prob"].values
        )
        expected = log_posterior(
            X_labelled, y_labelled, X_unlabelled, point, alpha=2.0, class_alpha=2.0
        )
        assert_allclose(value, expected - prior, rtol=1e-10)


def test_em_reaches_the_same_map_from_random_starts():
    X, y = multinomial_data(0, n_unlabelled=200)
    X_labelled, y_labelled = X[:N_LABELLED], y[:N_LABELLED]
    X_unlabelled = X[N_LABELLED : N_LABELLED + 200]
    _, _, common = em_step_by_step(
        X_labelled, y_labelled, X_unlabelled, 1, alpha=2.0, class_alpha=2.0
    )
    common = common | {"max_iter": 1000, "tol": 1e-12}
    model = family("multinomial_nb")
    reference = em_map(model, **common)
    assert reference.converged
    rng = np.random.default_rng(1)
    for _ in range(4):
        start = rng.dirichlet(np.ones(2), size=len(X_unlabelled))
        result = em_map(model, initial=start, **common)
        assert result.converged
        for name in ("class_prob", "feature_prob"):
            assert_allclose(
                conjugate_map(result.estimates, model_family=model)[name].values,
                conjugate_map(reference.estimates, model_family=model)[name].values,
                atol=1e-8,
            )


@pytest.mark.parametrize(
    ("Estimator", "make", "options"),
    [(MultinomialNB, multinomial_data, {"alpha": 2.0}), (GaussianNB, gaussian_data, {})],
    ids=["multinomial", "gaussian"],
)
def test_unlabelled_rows_raise_held_out_accuracy(Estimator, make, options):
    X, y = make(0)
    n_training = N_LABELLED + N_UNLABELLED
    X_test, y_test = X[n_training:], y[n_training:]
    em = Estimator(**options, **FAST).fit(X[:n_training], hide_labels(y, n_training))
    labelled_only = Estimator(**options, **FAST).fit(X[:N_LABELLED], y[:N_LABELLED])
    assert em.closed_form_.attrs["em_converged"] == 1
    em_accuracy = np.mean(em.predict(X_test) == y_test)
    labelled_accuracy = np.mean(labelled_only.predict(X_test) == y_test)
    assert em_accuracy > labelled_accuracy + 0.05, (em_accuracy, labelled_accuracy)


# -- what the estimator holds ----------------------------------------------------------------------


def test_transduction_labels_every_training_row_at_the_map():
    X, y = small_data()
    labels = np.where(y == 0, "ham", "spam").astype(object)
    labels[6:] = None
    est = MultinomialNB(alpha=2.0, **FAST).fit(X, labels)
    assert est.transduction_.shape == (len(X),)
    assert est.label_distributions_.shape == (len(X), 2)
    assert_array_equal(est.transduction_[:6], labels[:6])
    assert_allclose(est.label_distributions_.sum(axis=1), 1.0)
    point = est.map_  # the MAP: responsibilities are p(y | x, θ̂) there
    log_joint = np.log(point["class_prob"].values) + X[6:] @ np.log(point["feature_prob"].values).T
    expected = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    assert_allclose(est.label_distributions_[6:], expected, rtol=1e-6)
    assert_array_equal(est.transduction_[6:], est.classes_[expected.argmax(axis=1)])
    attrs = est.closed_form_.attrs
    assert attrs["unlabelled_rows"] == 30 and attrs["unlabelled_weight"] == 1.0
    assert attrs["em_iterations"] == len(est.em_log_likelihood_)


@pytest.mark.parametrize(
    ("marker", "labels"),
    [(-1, np.array([0, 1, 0, 1, 0, 1])), ("", np.array(["a", "b", "a", "b", "a", "b"]))],
    ids=["minus-one", "empty-string"],
)
def test_unlabelled_label_marks_rows(marker, labels):
    X, _ = small_data()
    y = np.r_[labels, np.full(30, marker, dtype=labels.dtype)]
    est = MultinomialNB(alpha=2.0, **FAST).fit(X, y, unlabelled_label=marker)
    assert est.classes_.tolist() == sorted(set(labels.tolist()))
    assert est.closed_form_.attrs["unlabelled_rows"] == 30


def test_unlabelled_weight_zero_is_the_supervised_fit_on_the_labelled_rows():
    X, y = small_data()
    hidden = y.astype(float)
    hidden[6:] = np.nan
    zero = MultinomialNB(alpha=2.0, **FAST).fit(X, hidden, unlabelled_weight=0.0)
    labelled = MultinomialNB(alpha=2.0, **FAST).fit(X[:6], y[:6])
    for name in labelled.closed_form_.data_vars:
        assert_array_equal(zero.closed_form_[name].values, labelled.closed_form_[name].values)
    for name in labelled.idata_["posterior"].data_vars:
        assert_array_equal(
            zero.idata_["posterior"][name].values, labelled.idata_["posterior"][name].values
        )
    assert zero.closed_form_.attrs["em_iterations"] == 0


def test_unlabelled_rows_count_by_their_weight():
    X, y = small_data()
    hidden = y.astype(float)
    hidden[6:] = np.nan
    half = MultinomialNB(alpha=2.0, **FAST).fit(X, hidden, unlabelled_weight=0.5)
    total = half.closed_form_["class_count"].values.sum()
    assert_allclose(total, 6 + 0.5 * 30)


@pytest.mark.parametrize(
    "Estimator",
    [
        BernoulliNB,
        CategoricalNB,
        PoissonNB,
        GaussianNB,
        GaussianDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
    ],
)
def test_every_model_fits_unlabelled_rows(Estimator):
    X, y = small_data()
    options = {}
    if Estimator is BernoulliNB:
        # With alpha=1 the MAP is the MLE, whose probabilities EM pushes towards 0 or 1
        # slowly (500 iterations do not settle); alpha=2 keeps them inside.
        X, options = (X > 1).astype(float), {"alpha": 2.0}
    if Estimator is CategoricalNB:
        X = np.minimum(X, 4)
    hidden = y.astype(object)
    hidden[6:] = None
    est = Estimator(**options, **FAST).fit(X, hidden)
    assert est.closed_form_.attrs["em_converged"] == 1
    assert_allclose(est.closed_form_["class_count"].values.sum(), len(X))
    assert np.mean(est.transduction_[6:] == y[6:]) > 0.6


def test_mixed_columns_fit_unlabelled_rows():
    X, y = small_data()
    table = pd.DataFrame(
        {"count": X[:, 0], "level": np.where(X[:, 1] > 1, "high", "low"), "size": X[:, 2] + 0.5}
    )
    hidden = pd.Series(np.where(y == 0, "a", "b"), dtype=object)
    hidden[6:] = None
    est = NaiveBayes(**FAST).fit(table, hidden)
    assert est.transduction_.shape == (len(X),)
    assert est.closed_form_.attrs["unlabelled_rows"] == 30


# -- bad input -------------------------------------------------------------------------------------


def test_all_rows_unlabelled_is_refused():
    X, _ = small_data()
    with pytest.raises(ValueError, match=r"^y: all 36 rows are unlabelled"):
        MultinomialNB(**FAST).fit(X, [None] * len(X))


def test_one_labelled_class_is_refused():
    X, _ = small_data()
    y = np.full(len(X), np.nan)
    y[:3] = 1
    with pytest.raises(ValueError, match=r"^y: the labelled rows hold only one class"):
        MultinomialNB(**FAST).fit(X, y)


def test_unlabelled_rows_in_partial_fit_are_refused():
    X, y = small_data()
    hidden = y.astype(float)
    hidden[6:] = np.nan
    with pytest.raises(ValueError, match=r"^y: missing labels \(None/NaN\) at positions "):
        MultinomialNB(**FAST).partial_fit(X, hidden, classes=[0, 1])


def test_missing_labels_in_closed_form_functions_are_refused():
    X, y = small_data()
    hidden = y.astype(float)
    hidden[6:] = np.nan
    with pytest.raises(ValueError, match=r"^y: missing labels .* fit\(X, y\)"):
        closed_form.multinomial_nb(X, hidden)


@pytest.mark.parametrize(
    ("weight", "error"), [(1.5, ValueError), (-0.1, ValueError), ([0.5], TypeError)]
)
def test_unlabelled_weight_outside_0_1_is_refused(weight, error):
    X, y = small_data()
    with pytest.raises(error, match=r"^unlabelled_weight: expected a number in \[0, 1\]"):
        MultinomialNB(**FAST).fit(X, y, unlabelled_weight=weight)


def test_no_interior_mode_is_refused():
    X, y = small_data()
    X = np.c_[X, np.zeros(len(X))]  # a word no document has: n + α < 1 with α < 1
    hidden = y.astype(float)
    hidden[6:] = np.nan
    with pytest.raises(ValueError, match=r"^alpha: the posterior has no interior mode"):
        MultinomialNB(alpha=0.5, **FAST).fit(X, hidden)


def test_compare_on_a_gibbs_fit_checks_the_map_and_says_why_not_the_moments():
    rng = np.random.default_rng(0)
    X = np.r_[rng.poisson([5, 1, 1], (20, 3)), rng.poisson([1, 1, 5], (20, 3))].astype(float)
    y = np.repeat(["a", "b"], 20).astype(object)
    y[5:18], y[25:38] = None, None
    est = MultinomialNB(alpha=2.0, **{**FAST, "draws": 200}).fit(X, y)
    assert est.closed_form_.attrs["semi_supervised_posterior"] == "gibbs"
    result = bayesgen.compare(est)
    assert result.ok
    table = result.table
    assert table["reason"].str.contains("classes are latent").all()
    assert np.isfinite(table["map"]).all() and table["agrees"].all()
    # The MAP: the conjugate mode at the completed expected statistics, (n + α − 1) / Σ.
    counts = est.closed_form_["feature_count"].values
    mode = (counts + 1.0) / (counts + 1.0).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(est.map_["feature_prob"].values, mode, rtol=1e-10)
