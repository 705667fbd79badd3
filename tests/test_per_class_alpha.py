"""Per-class smoothing λ_k of the naive Bayes models: ``alpha`` as a mapping {class label: λ}
(an array in class order for the closed-form functions), and ``alpha="evidence_per_class"``
(one λ per class where the Bayes factor of "one λ per class" against "one λ for all" is > 0).
The estimators refuse a plain array (scikit-learn reads one as one λ per feature; see
tests/test_alpha_meaning.py).

The prior of class k's feature probabilities is Dirichlet(λ_k w) (Bernoulli: Beta(λ_k w,
λ_k (2 − w))). Every expected value here is computed in the test from the rows, with NumPy and
SciPy (add-λ_k, Dirichlet–multinomial evidences with ``gammaln``, the Bayes factor by
``scipy.integrate.quad``, leave-one-out by refitting), never taken from bayesgen's output.
"""

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

import bayesgen
from bayesgen import BernoulliNB, CategoricalNB, MultinomialNB
from bayesgen import closed_form as cf
from bayesgen.checks.calibration import sbc
from bayesgen.checks.loo import loo_proba
from bayesgen.inference import smoothing

FAST = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "prior_draws": 0}
NB_MODELS = ("multinomial", "bernoulli", "categorical")
ESTIMATORS = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB, "categorical": CategoricalNB}
FIT = {
    "multinomial": cf.multinomial_nb,
    "bernoulli": cf.bernoulli_nb,
    "categorical": cf.categorical_nb,
}

# Three classes and three features: λ broadcast over the feature axis instead of the class
# axis would have the right shape and the wrong values. The labels appear out of order, so
# that λ_k must follow classes_ (sorted), not the order of y.
CLASSES = np.array(["eggs", "ham", "spam"])
Y = np.array(["spam", "ham", "eggs", "ham", "spam", "eggs", "spam", "ham", "eggs", "spam"])
CODES = np.searchsorted(CLASSES, Y)
X_WORDS = np.array(
    [
        [3, 0, 1],
        [0, 2, 2],
        [1, 1, 0],
        [0, 4, 1],
        [2, 0, 3],
        [2, 2, 0],
        [5, 1, 0],
        [1, 3, 0],
        [0, 1, 1],
        [1, 0, 2],
    ]
)
X_BINARY = np.array(
    [
        [1, 0, 1],
        [0, 1, 1],
        [1, 1, 0],
        [0, 1, 0],
        [1, 0, 1],
        [1, 1, 0],
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [1, 0, 1],
    ]
)
# K_j = 2, 3, 4 categories, every one occurring (so the default K_j = max code + 1)
X_CODES = np.array(
    [
        [0, 2, 3],
        [1, 0, 2],
        [0, 1, 0],
        [1, 2, 1],
        [0, 0, 3],
        [1, 1, 2],
        [0, 2, 0],
        [1, 0, 1],
        [1, 1, 3],
        [0, 2, 2],
    ]
)
N_CATEGORIES = np.array([2, 3, 4])
X_OF = {"multinomial": X_WORDS, "bernoulli": X_BINARY, "categorical": X_CODES}
ALPHA = np.array([0.4, 1.7, 5.0])
#: ALPHA as the estimators take it: by class label, listed out of the classes' order.
ALPHA_BY_CLASS = {"spam": 5.0, "eggs": 0.4, "ham": 1.7}
LOW, HIGH = math.log(1e-6), math.log(1e6)  # smoothing.BOUNDS, in log λ


# --------------------------------------------------------------------------------------------
# Hand-computed statistics, estimates and evidences.


def class_rows(X, codes, n_classes=3):
    return [np.asarray(X, dtype=float)[codes == k] for k in range(n_classes)]


def category_counts(rows, n_categories=N_CATEGORIES):
    """(feature, max K_j) counts of each category among ``rows``."""
    counts = np.zeros((len(n_categories), n_categories.max()))
    for j, width in enumerate(n_categories):
        counts[j, :width] = np.bincount(rows[:, j].astype(int), minlength=width)
    return counts


def add_lambda_by_hand(name, X, codes, alpha, weight=None):
    """feature_prob of each class: add-λ_k, or (count + λ_k w) / (total + O λ_k)."""
    probs = []
    for rows, lam in zip(class_rows(X, codes, len(alpha)), alpha, strict=True):
        if name == "multinomial":
            counts, outcomes = rows.sum(axis=0), rows.shape[1]
            w = np.ones_like(counts) if weight is None else weight
            probs.append((counts + lam * w) / (counts.sum() + outcomes * lam))
        elif name == "bernoulli":
            counts = rows.sum(axis=0)
            w = np.ones_like(counts) if weight is None else weight
            probs.append((counts + lam * w) / (len(rows) + 2 * lam))
        else:
            counts = category_counts(rows)
            real = np.arange(N_CATEGORIES.max()) < N_CATEGORIES[:, None]
            w = real.astype(float) if weight is None else weight
            prob = (counts + lam * w) / (len(rows) + N_CATEGORIES[:, None] * lam)
            probs.append(np.where(real, prob, 0.0))
    return np.array(probs)


def pooled_weight_by_hand(name, X):
    """O m: m the add-½ frequencies of the counts pooled over the classes, per simplex."""
    X = np.asarray(X, dtype=float)
    if name == "multinomial":
        pooled = X.sum(axis=0) + 0.5
        return X.shape[1] * pooled / pooled.sum()
    if name == "bernoulli":
        return 2.0 * (X.sum(axis=0) + 0.5) / (len(X) + 1.0)
    counts = category_counts(X)
    real = np.arange(N_CATEGORIES.max()) < N_CATEGORIES[:, None]
    pooled = np.where(real, counts + 0.5, 0.0)
    return N_CATEGORIES[:, None] * pooled / pooled.sum(axis=1, keepdims=True)


def simplices_by_hand(name, rows, weight=None):
    """Class k's Dirichlet simplices as (counts, prior weights) pairs."""
    if name == "multinomial":
        counts = rows.sum(axis=0)
        return [(counts, np.ones_like(counts) if weight is None else weight)]
    if name == "bernoulli":
        present = rows.sum(axis=0)
        w = np.ones_like(present) if weight is None else weight
        return [
            (np.array([p, len(rows) - p]), np.array([wj, 2.0 - wj]))
            for p, wj in zip(present, w, strict=True)
        ]
    counts = category_counts(rows)
    out = []
    for j, width in enumerate(N_CATEGORIES):
        w = np.ones(width) if weight is None else weight[j, :width]
        out.append((counts[j, :width], w))
    return out


def class_log_evidence_by_hand(simplices, lam):
    """Σ over class k's simplices of lnΓ(λ W) − lnΓ(T + λ W) + Σ_o [lnΓ(c_o + λ w_o) −
    lnΓ(λ w_o)], W = Σ_o w_o, at each λ of ``lam`` (any shape)."""
    lam = np.asarray(lam, dtype=float)
    total = np.zeros(lam.shape)
    for counts, weight in simplices:
        a = lam[..., None] * weight
        total += gammaln(a.sum(axis=-1)) - gammaln(counts.sum() + a.sum(axis=-1))
        total += (gammaln(counts + a) - gammaln(a)).sum(axis=-1)
    return total


def label_log_evidence_by_hand(codes, n_classes, class_alpha=1.0):
    counts = np.bincount(codes, minlength=n_classes)
    a = class_alpha
    return (
        gammaln(n_classes * a)
        - gammaln(counts.sum() + n_classes * a)
        + np.sum(gammaln(counts + a) - gammaln(a))
    )


def log_integral_over_log_lambda(log_f):
    """log ∫ f(λ) p(λ) dλ under the log-uniform prior of smoothing.BOUNDS: density
    1 / log(1e12) in log λ. Shifted by the integrand's largest value on a fine grid."""
    grid = np.linspace(LOW, HIGH, 20001)
    values = log_f(np.exp(grid))
    centre, shift = grid[np.argmax(values)], values.max()
    with warnings.catch_warnings():
        # quad's roundoff notice on the flat tail (λ → ∞): the value still agrees with
        # bayesgen's to 1e-9, far inside the test's 1e-6
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, _ = integrate.quad(
            lambda t: math.exp(float(log_f(np.array(math.exp(t)))) - shift),
            LOW,
            HIGH,
            points=[centre],
            epsabs=0.0,
            epsrel=1e-10,
            limit=1000,
        )
    return math.log(value) + shift - math.log(HIGH - LOW)


def log_bayes_factor_by_hand(per_class_simplices):
    separate = sum(
        log_integral_over_log_lambda(lambda lam, s=s: class_log_evidence_by_hand(s, lam))
        for s in per_class_simplices
    )
    shared = log_integral_over_log_lambda(
        lambda lam: sum(class_log_evidence_by_hand(s, lam) for s in per_class_simplices)
    )
    return separate - shared


def grid_argmax(simplices):
    grid = np.exp(np.linspace(np.log(1e-3), np.log(1e4), 8001))  # steps of 0.1 %
    return grid[np.argmax(class_log_evidence_by_hand(simplices, grid))]


def words_data(seed, concentrations, n=150, vocabulary=40, length=30):
    """Documents of class k drawn from θ_k ~ Dirichlet(concentrations[k]) over the words."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for k, lam in enumerate(concentrations):
        theta = rng.dirichlet(np.full(vocabulary, lam))
        X.append(rng.multinomial(length, theta, size=n))
        y += [k] * n
    return np.vstack(X), np.array(y)


# Class 0 near-uniform, class 1 very peaked: per-class λ (about 10 and 0.1) wins by far.
DISTINCT = words_data(0, [10.0, 0.1])
# Both classes from one λ: the extra λ does not pay its Occam factor (log BF about −3.6).
EXCHANGEABLE = words_data(0, [1.0, 1.0], n=300)


def _fit(name, alpha, X=None, y=Y, **params):
    X = X_OF[name] if X is None else X
    return ESTIMATORS[name](alpha=alpha, **{**FAST, **params}).fit(X, y)


# --------------------------------------------------------------------------------------------
# The closed form: add-λ_k, class by class.


@pytest.mark.parametrize("name", NB_MODELS)
def test_closed_form_feature_prob_is_add_lambda_k_per_class(name):
    expected = add_lambda_by_hand(name, X_OF[name], CODES, ALPHA)
    est = FIT[name](X_OF[name], Y, alpha=ALPHA)
    np.testing.assert_array_equal(est["class"].values, CLASSES)
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        _fit(name, ALPHA_BY_CLASS).closed_form_["feature_prob"].values,
        expected,
        rtol=1e-13,
        atol=1e-15,
    )


@pytest.mark.parametrize("name", NB_MODELS)
def test_pooled_prior_mean_with_per_class_lambda(name):
    weight = pooled_weight_by_hand(name, X_OF[name])
    expected = add_lambda_by_hand(name, X_OF[name], CODES, ALPHA, weight=weight)
    est = FIT[name](X_OF[name], Y, alpha=ALPHA, prior_mean="pooled")
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13, atol=1e-15)
    fitted = _fit(name, ALPHA_BY_CLASS, prior_mean="pooled").closed_form_
    np.testing.assert_allclose(fitted["feature_prob"].values, expected, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", NB_MODELS)
def test_alpha_attr_is_an_array_per_class_and_a_float_for_one_lambda(name):
    per_class = FIT[name](X_OF[name], Y, alpha=ALPHA)
    assert isinstance(per_class.attrs["alpha"], np.ndarray)
    assert per_class.attrs["alpha"].shape == (3,)
    np.testing.assert_array_equal(per_class.attrs["alpha"], ALPHA)
    shared = FIT[name](X_OF[name], Y, alpha=0.5)
    assert isinstance(shared.attrs["alpha"], float)
    est = _fit(name, ALPHA_BY_CLASS)
    assert isinstance(est.alpha_, np.ndarray) and est.alpha_.dtype == np.float64
    np.testing.assert_array_equal(est.alpha_, ALPHA)


def test_a_list_is_taken_as_the_array():
    est = cf.multinomial_nb(X_WORDS, Y, alpha=ALPHA.tolist())
    expected = add_lambda_by_hand("multinomial", X_WORDS, CODES, ALPHA)
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13)


@pytest.mark.parametrize(
    "alpha",
    [
        ALPHA_BY_CLASS,
        {"eggs": 1, "ham": 2, "spam": 5},
        pd.Series(ALPHA_BY_CLASS),
        pd.Series(ALPHA, index=CLASSES),
        {np.str_(label): np.float32(lam) for label, lam in ALPHA_BY_CLASS.items()},
    ],
    ids=["dict", "int-values", "Series", "Series-in-class-order", "numpy-keys-and-values"],
)
def test_any_mapping_is_read_by_label_by_the_estimator(alpha):
    est = MultinomialNB(alpha=alpha, **FAST).fit(X_WORDS, Y)
    expected = np.array([float(alpha[label]) for label in CLASSES])
    assert est.alpha_.dtype == np.float64
    np.testing.assert_array_equal(est.alpha_, expected)
    np.testing.assert_allclose(
        est.closed_form_["feature_prob"].values,
        add_lambda_by_hand("multinomial", X_WORDS, CODES, expected),
        rtol=1e-13,
    )


@pytest.mark.parametrize(
    "alpha",
    [ALPHA.tolist(), tuple(ALPHA), np.array([1, 2, 5]), pd.array(ALPHA)],
    ids=["list", "tuple", "int-array", "pandas-array"],
)
def test_any_plain_array_is_refused_by_the_estimator(alpha):
    with pytest.raises(TypeError, match=r"(?s)^alpha: .*reads an array alpha as one λ per feature"):
        MultinomialNB(alpha=alpha, **FAST).fit(X_WORDS, Y)


def test_equal_per_class_values_give_the_scalar_fit():
    per_class = cf.bernoulli_nb(X_BINARY, Y, alpha=np.full(3, 0.8))
    shared = cf.bernoulli_nb(X_BINARY, Y, alpha=0.8)
    np.testing.assert_allclose(per_class["feature_prob"].values, shared["feature_prob"].values)
    assert cf.log_evidence(per_class) == pytest.approx(cf.log_evidence(shared), rel=1e-12)


# --------------------------------------------------------------------------------------------
# The evidence.


@pytest.mark.parametrize("prior_mean", ["uniform", "pooled"])
@pytest.mark.parametrize("name", NB_MODELS)
def test_log_evidence_is_the_sum_of_the_per_class_dirichlet_multinomial_terms(name, prior_mean):
    weight = pooled_weight_by_hand(name, X_OF[name]) if prior_mean == "pooled" else None
    features = sum(
        class_log_evidence_by_hand(simplices_by_hand(name, rows, weight), lam)
        for rows, lam in zip(class_rows(X_OF[name], CODES), ALPHA, strict=True)
    )
    labels = label_log_evidence_by_hand(CODES, 3)
    est = FIT[name](X_OF[name], Y, alpha=ALPHA, prior_mean=prior_mean)
    assert cf.log_evidence(est) == pytest.approx(labels + features, rel=1e-12)
    # the label term is that of a scalar fit: the difference is the features' alone
    shared = FIT[name](X_OF[name], Y, alpha=1.0, prior_mean=prior_mean)
    features_at_one = sum(
        class_log_evidence_by_hand(simplices_by_hand(name, rows, weight), 1.0)
        for rows in class_rows(X_OF[name], CODES)
    )
    assert cf.log_evidence(est) - cf.log_evidence(shared) == pytest.approx(
        features - features_at_one, rel=1e-10, abs=1e-10
    )


@pytest.mark.parametrize("name", NB_MODELS)
def test_per_class_log_bayes_factor_equals_quadrature(name):
    est = FIT[name](X_OF[name], Y)
    simplices = [simplices_by_hand(name, rows) for rows in class_rows(X_OF[name], CODES)]
    expected = log_bayes_factor_by_hand(simplices)
    value = smoothing.per_class_log_bayes_factor(est)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, rel=1e-6)


def test_per_class_log_bayes_factor_does_not_use_the_fitted_alpha():
    first = cf.multinomial_nb(X_WORDS, Y, alpha=1.0)
    second = cf.multinomial_nb(X_WORDS, Y, alpha=ALPHA)
    assert smoothing.per_class_log_bayes_factor(first) == pytest.approx(
        smoothing.per_class_log_bayes_factor(second), rel=1e-12
    )


def test_evidence_alpha_per_class_is_each_class_argmax():
    X, y = DISTINCT
    est = cf.multinomial_nb(X, y)
    lam = smoothing.evidence_alpha(est, per_class=True)
    assert isinstance(lam, np.ndarray) and lam.shape == (2,)
    for k, rows in enumerate(class_rows(X, y, 2)):
        best = grid_argmax(simplices_by_hand("multinomial", rows))
        assert lam[k] == pytest.approx(best, rel=0.01)


# --------------------------------------------------------------------------------------------
# alpha="evidence_per_class": per-class λ where the Bayes factor says so.


def test_distinct_classes_get_their_own_lambda_each_at_its_evidence_maximum():
    X, y = DISTINCT
    est = MultinomialNB(alpha="evidence_per_class", **FAST).fit(X, y)
    log_bf = est.closed_form_.attrs["alpha_log_bayes_factor"]
    assert isinstance(log_bf, float) and log_bf > 0
    simplices = [simplices_by_hand("multinomial", rows) for rows in class_rows(X, y, 2)]
    assert log_bf == pytest.approx(log_bayes_factor_by_hand(simplices), rel=1e-6)
    assert isinstance(est.alpha_, np.ndarray) and est.alpha_.shape == (2,)
    assert est.alpha_.dtype == np.float64
    assert max(est.alpha_) > 2 * min(est.alpha_)
    for k in range(2):
        assert est.alpha_[k] == pytest.approx(grid_argmax(simplices[k]), rel=0.01)
    np.testing.assert_array_equal(est.closed_form_.attrs["alpha"], est.alpha_)
    # and the closed form is add-λ_k at them
    expected = add_lambda_by_hand("multinomial", X, y, est.alpha_)
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, expected, rtol=1e-12)


def test_exchangeable_classes_share_the_evidence_lambda():
    X, y = EXCHANGEABLE
    est = MultinomialNB(alpha="evidence_per_class", **FAST).fit(X, y)
    simplices = [simplices_by_hand("multinomial", rows) for rows in class_rows(X, y, 2)]
    assert log_bayes_factor_by_hand(simplices) < 0  # the data are as meant
    assert est.closed_form_.attrs["alpha_log_bayes_factor"] < 0
    shared = smoothing.evidence_alpha(cf.multinomial_nb(X, y))
    assert isinstance(est.alpha_, np.ndarray) and est.alpha_.shape == (2,)
    np.testing.assert_allclose(est.alpha_, [shared, shared], rtol=1e-9)
    scalar = MultinomialNB(alpha="evidence", **FAST).fit(X, y)
    np.testing.assert_allclose(est.alpha_, scalar.alpha_, rtol=1e-9)


def test_evidence_per_class_with_the_pooled_mean_maximises_the_pooled_evidence():
    X, y = DISTINCT
    est = MultinomialNB(alpha="evidence_per_class", prior_mean="pooled", **FAST).fit(X, y)
    assert est.closed_form_.attrs["alpha_log_bayes_factor"] > 0
    weight = pooled_weight_by_hand("multinomial", X)
    for k, rows in enumerate(class_rows(X, y, 2)):
        best = grid_argmax(simplices_by_hand("multinomial", rows, weight))
        assert est.alpha_[k] == pytest.approx(best, rel=0.01)


@pytest.mark.parametrize("name", ["bernoulli", "categorical"])
def test_evidence_per_class_gives_an_array_for_the_other_models(name):
    est = _fit(name, "evidence_per_class")
    assert isinstance(est.alpha_, np.ndarray) and est.alpha_.shape == (3,)
    assert isinstance(est.closed_form_.attrs["alpha_log_bayes_factor"], float)
    expected = add_lambda_by_hand(name, X_OF[name], CODES, est.alpha_)
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, expected, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Everything downstream of the closed form.


def loo_log_joint_by_hand(name, X, codes, i, alpha, class_alpha=1.0):
    """log p(x_i, y = k | D without row i) for each class k, refitted by hand."""
    X = np.asarray(X, dtype=float)
    keep = np.arange(len(codes)) != i
    others, other_codes, x = X[keep], codes[keep], X[i]
    n_classes = len(alpha)
    count = np.bincount(other_codes, minlength=n_classes).astype(float)
    joint = np.log((count + class_alpha) / (count.sum() + n_classes * class_alpha))
    for k, lam in enumerate(alpha):
        rows = others[other_codes == k]
        if name == "multinomial":
            joint[k] += stats.dirichlet_multinomial.logpmf(x, rows.sum(axis=0) + lam, x.sum())
        elif name == "bernoulli":
            prob = (rows.sum(axis=0) + lam) / (len(rows) + 2 * lam)
            joint[k] += stats.bernoulli.logpmf(x, prob).sum()
        else:
            joint[k] += sum(
                np.log((np.sum(rows[:, j] == x[j]) + lam) / (len(rows) + width * lam))
                for j, width in enumerate(N_CATEGORIES)
            )
    return joint


def softmax(joint):
    return np.exp(joint - np.logaddexp.reduce(joint))


@pytest.mark.parametrize("name", NB_MODELS)
def test_loo_proba_equals_refits_without_each_row(name):
    est = _fit(name, ALPHA_BY_CLASS)
    expected = np.array(
        [softmax(loo_log_joint_by_hand(name, X_OF[name], CODES, i, ALPHA)) for i in range(10)]
    )
    np.testing.assert_allclose(loo_proba(est), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", NB_MODELS)
def test_loo_proba_equals_bayesgens_own_refit_with_per_class_lambda(name):
    est = _fit(name, ALPHA_BY_CLASS)
    proba = loo_proba(est)
    options = {"n_categories": N_CATEGORIES} if name == "categorical" else {}
    for i in (0, 4, 9):
        keep = np.arange(10) != i
        refit = FIT[name](X_OF[name][keep], Y[keep], alpha=ALPHA, **options)
        expected = cf.posterior_predictive_proba(refit, X_OF[name][[i]])[0]
        np.testing.assert_allclose(proba[i], expected, rtol=0, atol=1e-12)


def test_posterior_predictive_is_the_dirichlet_multinomial_per_class():
    new = np.array([[0, 0, 4], [3, 1, 0], [1, 1, 1]])
    counts = np.array([rows.sum(axis=0) for rows in class_rows(X_WORDS, CODES)])
    class_count = np.bincount(CODES, minlength=3)
    log_class = np.log((class_count + 1.0) / (class_count.sum() + 3.0))
    expected = []
    for x in new:
        joint = log_class + np.array(
            [stats.dirichlet_multinomial.logpmf(x, counts[k] + ALPHA[k], x.sum()) for k in range(3)]
        )
        expected.append(softmax(joint))
    est = cf.multinomial_nb(X_WORDS, Y, alpha=ALPHA)
    np.testing.assert_allclose(cf.posterior_predictive_proba(est, new), expected, rtol=1e-12)
    fitted = _fit("multinomial", ALPHA_BY_CLASS)
    np.testing.assert_allclose(fitted.posterior_predictive_proba(new), expected, rtol=1e-12)


def test_bernoulli_posterior_predictive_is_the_add_lambda_k_plug_in():
    new = np.array([[1, 1, 0], [0, 0, 1]])
    prob = add_lambda_by_hand("bernoulli", X_BINARY, CODES, ALPHA)
    class_count = np.bincount(CODES, minlength=3)
    log_class = np.log((class_count + 1.0) / (class_count.sum() + 3.0))
    expected = [softmax(log_class + stats.bernoulli.logpmf(x, prob).sum(axis=1)) for x in new]
    est = cf.bernoulli_nb(X_BINARY, Y, alpha=ALPHA)
    np.testing.assert_allclose(cf.posterior_predictive_proba(est, new), expected, rtol=1e-12)


@pytest.mark.parametrize("name", NB_MODELS)
def test_exact_draws_have_the_per_class_beta_moments(name):
    est = _fit(name, ALPHA_BY_CLASS, draws=2000, chains=2)
    draws = est.idata_["posterior"]["feature_prob"].values
    draws = draws.reshape(-1, *draws.shape[2:])
    mean = add_lambda_by_hand(name, X_OF[name], CODES, ALPHA)
    # each cell is Beta(a, A − a): A the class's total posterior concentration on its simplex
    rows = np.bincount(CODES, minlength=3).astype(float)
    if name == "multinomial":
        totals = np.array([r.sum() for r in class_rows(X_WORDS, CODES)]) + 3 * ALPHA
        total = totals[:, None]
    elif name == "bernoulli":
        total = (rows + 2 * ALPHA)[:, None]
    else:
        total = rows[:, None, None] + N_CATEGORIES[None, :, None] * ALPHA[:, None, None]
    sd = np.sqrt(mean * (1 - mean) / (total + 1))
    real = sd > 0
    n = draws.shape[0]
    z = (draws.mean(axis=0) - mean)[real] / (sd[real] / math.sqrt(n))
    assert np.all(np.abs(z) < 5), z
    # the SD as well: λ_k sets it (the sample SD's own SD is about sd / sqrt(2 n))
    np.testing.assert_allclose(draws.std(axis=0)[real], sd[real], rtol=0.08)


@pytest.mark.parametrize("name", NB_MODELS)
def test_compare_agrees_with_per_class_lambda(name):
    est = _fit(name, ALPHA_BY_CLASS, draws=1000, chains=2)
    result = bayesgen.compare(est)
    assert result.ok, str(result)


def test_compare_with_the_classes_lambdas_swapped_disagrees_where_they_differ():
    est = _fit("multinomial", ALPHA_BY_CLASS, draws=1000, chains=2)
    swapped = {"eggs": 5.0, "ham": 1.7, "spam": 0.4}  # eggs and spam swap, ham keeps 1.7
    result = bayesgen.compare(est, alpha=swapped)
    assert not result.ok
    feature = result.table[result.table["variable"] == "feature_prob"]
    by_class = feature.groupby(feature["coords"].str.split(",").str[0])["agrees"]
    assert by_class.all().to_dict() == {"eggs": False, "ham": True, "spam": False}
    assert not bayesgen.compare(est, alpha=1.0).ok


@pytest.mark.parametrize("name", NB_MODELS)
def test_exact_draws_and_compare_with_the_pooled_mean(name):
    est = _fit(name, ALPHA_BY_CLASS, prior_mean="pooled", draws=1000, chains=2)
    weight = pooled_weight_by_hand(name, X_OF[name])
    expected = add_lambda_by_hand(name, X_OF[name], CODES, ALPHA, weight=weight)
    draws = est.idata_["posterior"]["feature_prob"].values.reshape(2000, *expected.shape)
    sd = draws.std(axis=0)
    real = sd > 0  # the categorical padding is 0 in every draw
    z = (draws.mean(axis=0) - expected)[real] / (sd[real] / math.sqrt(len(draws)))
    assert np.all(np.abs(z) < 5), z
    assert bayesgen.compare(est).ok


def test_predict_proba_is_the_posterior_mean_of_the_plug_in():
    """E[p(y | x, θ)] over θ_k ~ Dirichlet(counts_k + λ_k), by our own Monte Carlo."""
    est = _fit("multinomial", ALPHA_BY_CLASS, draws=4000, chains=1)
    new = np.array([[0, 0, 4], [3, 1, 0]])
    counts = np.array([rows.sum(axis=0) for rows in class_rows(X_WORDS, CODES)])
    class_count = np.bincount(CODES, minlength=3)
    rng = np.random.default_rng(3)
    n = 20_000
    class_prob = rng.dirichlet(class_count + 1.0, size=n)
    feature_prob = np.stack([rng.dirichlet(counts[k] + ALPHA[k], size=n) for k in range(3)], 1)
    joint = np.log(class_prob)[:, None, :] + np.einsum("nw,dkw->dnk", new, np.log(feature_prob))
    proba = np.exp(joint - np.logaddexp.reduce(joint, axis=2, keepdims=True))
    expected, spread = proba.mean(axis=0), proba.std(axis=0)
    error = spread * math.sqrt(1 / n + 1 / 4000)
    assert np.all(np.abs(est.predict_proba(new) - expected) < 5 * error)


def _sbc_fit(name):
    rng = np.random.default_rng(7)
    y = np.arange(30) % 2
    if name == "multinomial":
        X = rng.poisson(2.0, (30, 3))
    else:
        X = (rng.random((30, 3)) < 0.4).astype(int)
    return ESTIMATORS[name](alpha={0: 0.3, 1: 4.0}, **FAST).fit(X, y)


@pytest.mark.parametrize("name", ["multinomial", "bernoulli"])
def test_sbc_is_ok_with_per_class_lambda(name):
    result = sbc(_sbc_fit(name), n_simulations=120, random_seed=11)
    assert result.ok, str(result)


@pytest.mark.parametrize(("name", "prior_alpha"), [("multinomial", 0.3), ("bernoulli", 1.1)])
def test_sbc_catches_one_lambda_for_every_class_in_the_simulation(name, prior_alpha):
    """Parameters drawn with one λ for all classes (class 0's, or about their mean) while the
    fits keep λ_k = (0.3, 4.0): the check that passes above can fail."""
    result = sbc(_sbc_fit(name), n_simulations=120, random_seed=11, prior_alpha=prior_alpha)
    assert not result.ok
    assert result.p_values["feature_prob"] < 1e-5


def test_partial_fit_with_per_class_lambda_equals_fit_on_all_rows():
    est = MultinomialNB(alpha=ALPHA_BY_CLASS, **FAST)
    est.partial_fit(X_WORDS[:4], Y[:4], classes=CLASSES)
    est.partial_fit(X_WORDS[4:], Y[4:])
    expected = add_lambda_by_hand("multinomial", X_WORDS, CODES, ALPHA)
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, expected, rtol=1e-12)
    np.testing.assert_array_equal(est.alpha_, ALPHA)


def test_partial_fit_with_evidence_per_class_equals_fit_on_all_rows():
    X, y = DISTINCT
    order = np.random.default_rng(1).permutation(len(y))
    est = MultinomialNB(alpha="evidence_per_class", **FAST)
    for chunk in np.array_split(order, 3):
        est.partial_fit(X[chunk], y[chunk], classes=[0, 1])
    whole = MultinomialNB(alpha="evidence_per_class", **FAST).fit(X, y)
    np.testing.assert_allclose(est.alpha_, whole.alpha_, rtol=1e-9)
    assert est.closed_form_.attrs["alpha_log_bayes_factor"] == pytest.approx(
        whole.closed_form_.attrs["alpha_log_bayes_factor"], rel=1e-9
    )


def test_sample_weight_counts_rows_with_per_class_lambda():
    weights = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.0, 2.0, 1.0, 1.5])
    counts = np.array([(weights[CODES == k, None] * X_WORDS[CODES == k]).sum(0) for k in range(3)])
    lam = ALPHA[:, None]
    expected = (counts + lam) / (counts.sum(axis=1, keepdims=True) + 3 * lam)
    est = MultinomialNB(alpha=ALPHA_BY_CLASS, **FAST).fit(X_WORDS, Y, sample_weight=weights)
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, expected, rtol=1e-12)


def test_dask_input_gives_the_in_memory_closed_form():
    da = pytest.importorskip("dask.array")
    chunked = da.from_array(X_WORDS, chunks=(4, 3))
    labels = da.from_array(Y, chunks=4)
    est = cf.multinomial_nb(chunked, labels, alpha=ALPHA)
    expected = add_lambda_by_hand("multinomial", X_WORDS, CODES, ALPHA)
    np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-12)
    np.testing.assert_array_equal(est.attrs["alpha"], ALPHA)


def test_clone_keeps_the_mapping_and_refits_the_same():
    from sklearn.base import clone

    est = _fit("categorical", ALPHA_BY_CLASS)
    again = clone(est).fit(X_CODES, Y)
    np.testing.assert_array_equal(again.alpha_, est.alpha_)
    np.testing.assert_array_equal(
        again.closed_form_["feature_prob"].values, est.closed_form_["feature_prob"].values
    )


def test_conjugate_map_is_the_per_class_dirichlet_mode():
    # every λ_k > 1: an interior mode, (c + λ_k − 1) / (N_k + V(λ_k − 1))
    alpha = {label: lam + 1.0 for label, lam in ALPHA_BY_CLASS.items()}
    est = MultinomialNB(alpha=alpha, **{**FAST, "compute_map": True}).fit(X_WORDS, Y)
    expected = add_lambda_by_hand("multinomial", X_WORDS, CODES, ALPHA)
    np.testing.assert_allclose(est.map_["feature_prob"].values, expected, rtol=1e-10)


def test_prior_draws_follow_each_classs_dirichlet():
    est = MultinomialNB(alpha=ALPHA_BY_CLASS, **{**FAST, "prior_draws": 4000, "draws": 10})
    prior = est.fit(X_WORDS, Y).idata_["prior"]["feature_prob"].values.reshape(-1, 3, 3)
    # Dirichlet(λ_k, λ_k, λ_k): mean 1/3, SD sqrt((1/3)(2/3) / (3 λ_k + 1))
    sd = np.sqrt(2 / 9 / (3 * ALPHA + 1))[:, None]
    assert np.all(np.abs(prior.mean(axis=0) - 1 / 3) < 5 * sd / math.sqrt(4000))
    np.testing.assert_allclose(prior.std(axis=0), np.broadcast_to(sd, (3, 3)), rtol=0.08)


def test_log_evidence_of_evidence_per_class_is_at_the_chosen_lambdas():
    X, y = DISTINCT
    est = MultinomialNB(alpha="evidence_per_class", **FAST).fit(X, y)
    expected = label_log_evidence_by_hand(y, 2) + sum(
        class_log_evidence_by_hand(simplices_by_hand("multinomial", rows), lam)
        for rows, lam in zip(class_rows(X, y, 2), est.alpha_, strict=True)
    )
    assert cf.log_evidence(est.closed_form_) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_nuts_posterior_agrees_with_the_per_class_closed_form():
    est = MultinomialNB(
        alpha=ALPHA_BY_CLASS,
        inference="nuts",
        draws=1000,
        tune=500,
        chains=2,
        compute_map=False,
        prior_draws=0,
        random_seed=1,
    ).fit(X_WORDS, Y)
    result = bayesgen.compare(est)
    assert result.ok, str(result)


@pytest.mark.parametrize("alpha", [ALPHA_BY_CLASS, "evidence_per_class"])
def test_save_and_load_keep_alpha_and_the_predictions_bit_for_bit(alpha, tmp_path):
    est = _fit("multinomial", alpha, draws=100, chains=1)
    new = np.array([[0, 0, 4], [3, 1, 0], [1, 1, 1]])
    proba = est.predict_proba(new)
    predictive = est.posterior_predictive_proba(new)
    est.save(tmp_path / "model.nc")
    loaded = bayesgen.load(tmp_path / "model.nc")
    assert isinstance(loaded.alpha_, np.ndarray)
    assert loaded.alpha_.tobytes() == est.alpha_.tobytes()
    np.testing.assert_array_equal(loaded.closed_form_.attrs["alpha"], est.alpha_)
    if isinstance(alpha, str):
        assert loaded.alpha == "evidence_per_class"
        assert (
            loaded.closed_form_.attrs["alpha_log_bayes_factor"]
            == est.closed_form_.attrs["alpha_log_bayes_factor"]
        )
    else:
        assert loaded.alpha == ALPHA_BY_CLASS  # stored in classes_ order, read back by label
    assert np.array_equal(loaded.predict_proba(new), proba)
    assert np.array_equal(loaded.posterior_predictive_proba(new), predictive)


def _tampered_alpha(tmp_path, alpha):
    import json

    import xarray as xr

    est = _fit("multinomial", ALPHA_BY_CLASS, draws=20, chains=1)
    est.save(tmp_path / "model.nc")
    tree = xr.open_datatree(tmp_path / "model.nc").load()
    params = json.loads(tree.attrs["params"])
    params["alpha"] = alpha
    tree.attrs["params"] = json.dumps(params)
    tree.to_netcdf(tmp_path / "tampered.nc")
    return tmp_path / "tampered.nc"


def test_load_refuses_per_class_alphas_that_the_closed_form_does_not_record(tmp_path):
    path = _tampered_alpha(tmp_path, [5.0, 1.7, 0.4])
    with pytest.raises(ValueError, match=re.escape("params say alpha=[5.0, 1.7, 0.4]")):
        bayesgen.load(path)


@pytest.mark.parametrize("alpha", [[0.4, 1.7], [0.4, 1.7, -5.0], [0.4, "a", 5.0]])
def test_load_refuses_a_per_class_alpha_list_of_the_wrong_length_or_values(tmp_path, alpha):
    path = _tampered_alpha(tmp_path, alpha)
    with pytest.raises(ValueError, match=re.escape("list of 3 finite numbers > 0")):
        bayesgen.load(path)


def _cli_fit(tmp_path, alpha):
    from bayesgen.cli import main

    table = pd.DataFrame(X_WORDS, columns=["w0", "w1", "w2"]).assign(label=Y)
    table.to_csv(tmp_path / "counts.csv", index=False)
    argv = ["fit", "multinomial", str(tmp_path / "counts.csv"), "--target", "label"]
    options = ["--inference", "conjugate", "--draws", "20", "--no-map", "--quiet"]
    return main([*argv, *options, "--alpha", alpha, "--output", str(tmp_path / "model.nc")])


def test_cli_takes_one_lambda_per_class_by_label(tmp_path):
    assert _cli_fit(tmp_path, "spam=5,eggs=0.4,ham=1.7") == 0
    loaded = bayesgen.load(tmp_path / "model.nc")
    np.testing.assert_array_equal(loaded.alpha_, ALPHA)
    assert loaded.alpha == ALPHA_BY_CLASS
    expected = add_lambda_by_hand("multinomial", X_WORDS, CODES, ALPHA)
    np.testing.assert_allclose(loaded.closed_form_["feature_prob"].values, expected, rtol=1e-13)


def test_cli_takes_evidence_per_class(tmp_path):
    assert _cli_fit(tmp_path, "evidence_per_class") == 0
    loaded = bayesgen.load(tmp_path / "model.nc")
    assert loaded.alpha == "evidence_per_class"
    assert loaded.alpha_.shape == (3,)
    assert "alpha_log_bayes_factor" in loaded.closed_form_.attrs


@pytest.mark.parametrize(
    "alpha", ["0.4,1.7,5", "eggs=0.4,ham=1.7", "eggs=0.4,ham=0,spam=5", "eggs=0.4,ham=x,spam=5"]
)
def test_cli_refuses_a_wrong_list_naming_alpha(tmp_path, capsys, alpha):
    assert _cli_fit(tmp_path, alpha) == 2
    assert "alpha" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# The user's mapping or array is the user's.


@pytest.mark.parametrize("name", NB_MODELS)
def test_the_users_alpha_is_not_modified(name):
    alpha = dict(ALPHA_BY_CLASS)
    est = _fit(name, alpha)
    assert alpha == ALPHA_BY_CLASS and list(alpha) == list(ALPHA_BY_CLASS)
    assert est.get_params()["alpha"] is alpha  # scikit-learn: __init__ stores it as given
    array = np.array([0.4, 1.7, 5.0])
    before = array.copy()
    FIT[name](X_OF[name], Y, alpha=array)  # the closed form takes λ in class order
    assert array.tobytes() == before.tobytes() and array.dtype == before.dtype


# --------------------------------------------------------------------------------------------
# Bad input: each refused naming alpha, saying what was expected and what came.

BAD_SHAPES = [np.ones(4), np.ones(2), np.ones((1, 3)), np.ones((3, 1)), np.array([])]
BAD_VALUES = [
    np.array([1.0, 0.0, 2.0]),
    np.array([1.0, -1.0, 2.0]),
    np.array([1.0, np.nan, 2.0]),
    np.array([1.0, np.inf, 2.0]),
]


@pytest.mark.parametrize("alpha", BAD_SHAPES, ids=lambda a: f"shape{a.shape}")
def test_an_array_of_the_wrong_shape_is_refused_by_the_closed_form(alpha):
    with pytest.raises(ValueError, match=r"^alpha: ") as caught:
        cf.multinomial_nb(X_WORDS, Y, alpha=alpha)
    message = str(caught.value)
    assert "(3,)" in message  # the shape expected: (n_classes,) = (3,)
    assert str(alpha.shape) in message  # the shape that came


@pytest.mark.parametrize("alpha", BAD_SHAPES, ids=lambda a: f"shape{a.shape}")
def test_an_array_of_any_shape_is_refused_by_the_estimator(alpha):
    with pytest.raises(TypeError, match=r"(?s)^alpha: .*one λ per feature"):
        _fit("multinomial", alpha)


@pytest.mark.parametrize("alpha", BAD_VALUES, ids=lambda a: str(a[1]))
@pytest.mark.parametrize("name", NB_MODELS)
def test_a_lambda_not_above_zero_is_refused(alpha, name):
    by_class = dict(zip(CLASSES.tolist(), alpha.tolist(), strict=True))
    for fit in (lambda: _fit(name, by_class), lambda: FIT[name](X_OF[name], Y, alpha=alpha)):
        with pytest.raises(ValueError, match=r"^alpha: ") as caught:
            fit()
        message = str(caught.value)
        assert "> 0" in message
        assert str(alpha[1]) in message  # the value that came


@pytest.mark.parametrize("alpha", ["evidence_per_klass", "per_class", "Evidence_per_class"])
def test_other_strings_are_refused(alpha):
    with pytest.raises(ValueError, match=rf"^alpha: expected .*got {re.escape(repr(alpha))}"):
        _fit("bernoulli", alpha)


def test_an_array_of_strings_is_refused():
    with pytest.raises((TypeError, ValueError), match=r"^alpha: "):
        _fit("multinomial", np.array(["a", "b", "c"]))


@pytest.mark.parametrize("alpha", [ALPHA_BY_CLASS, "evidence_per_class"], ids=["mapping", "string"])
def test_per_class_alpha_beside_alpha_prior_is_refused(alpha):
    with pytest.raises(ValueError, match=re.escape("alpha: leave it at its default 1.0 when")):
        _fit("multinomial", alpha, alpha_prior=(3.0, 1.5))
