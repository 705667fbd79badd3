"""partial_fit and sample_weight: sufficient statistics that merge and weigh rows.

Every model's posterior depends on the data through sums over the rows, so a fit merged chunk
by chunk equals one fit on all the rows, integer weights equal repeated rows and zero weights
equal dropping the rows. All fits here are conjugate (nothing compiles).
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
    loo_proba,
)
from bayesgen.families import family

FAST = {"inference": "conjugate", "compute_map": False, "draws": 20, "prior_draws": 0}
MODELS = {
    "multinomial": MultinomialNB,
    "bernoulli": BernoulliNB,
    "categorical": CategoricalNB,
    "gda": GaussianDiscriminantAnalysis,
    "qda": QuadraticDiscriminantAnalysis,
}
N_ROWS, N_FEATURES = 60, 4


def data(model: str, seed: int = 0):
    """Rows of the model's kind (three classes, 20 rows each, shuffled)."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.repeat(["a", "b", "c"], N_ROWS // 3))
    shift = (y == "b")[:, None] * 1.5 + (y == "c")[:, None] * 3.0
    if model in ("gda", "qda"):
        X = rng.normal(size=(N_ROWS, N_FEATURES)) * [1.0, 2.0, 0.5, 3.0] + shift
    elif model == "categorical":
        X = np.minimum(rng.poisson(1.0 + shift, size=(N_ROWS, N_FEATURES)), 4).astype(float)
    else:
        X = rng.poisson(1.0 + shift, size=(N_ROWS, N_FEATURES)).astype(float)
        if model == "bernoulli":
            X = (X > 1).astype(float)
    return X, y


def assert_same_fit(first, second, rtol: float = 1e-12) -> None:
    """Same coordinates, and every variable of the closed form equal to ``rtol``."""
    a, b = first.closed_form_, second.closed_form_
    assert list(a.data_vars) == list(b.data_vars)
    for name in ("class", "feature"):
        np.testing.assert_array_equal(a[name].values, b[name].values)
    for name, variable in a.data_vars.items():
        left, right = variable.values, b[name].values
        if left.dtype.kind == "f":
            scale = np.nanmax(np.abs(left)) if np.any(np.isfinite(left)) else 1.0
            np.testing.assert_allclose(right, left, rtol=rtol, atol=rtol * scale, err_msg=name)
        else:
            np.testing.assert_array_equal(right, left, err_msg=name)
    assert a.attrs["n_samples"] == b.attrs["n_samples"]


# -- partial_fit over chunks equals fit on the whole ------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("model", list(MODELS))
def test_partial_fit_over_chunks_equals_fit_on_all_rows(model, sparse):
    X, y = data(model)
    X_in = sp.csr_array(X) if sparse else X
    whole = MODELS[model](random_seed=0, **FAST).fit(X_in, y)
    streamed = MODELS[model](random_seed=0, **FAST)
    # Uneven chunks; the first holds one class only (the classes are given up front).
    order = np.argsort(y != "a", kind="stable")
    for rows in np.split(order, [7, 25, 26, 44]):
        streamed.partial_fit(X_in[rows], y[rows], classes=["a", "b", "c"])
    assert_same_fit(whole, streamed)
    assert streamed.closed_form_.attrs["partial_fit_calls"] == 5
    # Counts computed here, independently of the fit.
    expected_counts = [np.sum(y == label) for label in ("a", "b", "c")]
    np.testing.assert_array_equal(streamed.class_count_, expected_counts)
    # The same statistics give the same exact posterior under the same seed.
    for name, draws in whole.idata_["posterior"].data_vars.items():
        np.testing.assert_allclose(
            streamed.idata_["posterior"][name].values, draws.values, rtol=1e-9, atol=1e-12
        )


def test_gaussian_statistics_merge_by_chan_update():
    X, y = data("qda")
    model_family = family("qda")
    halves = [
        model_family.sufficient_statistics(X[rows], y[rows])
        for rows in (slice(0, 30), slice(30, None))
    ]
    merged = model_family.merge_statistics(*halves)
    for k, label in enumerate(["a", "b", "c"]):
        rows = X[y == label]
        centred = rows - rows.mean(axis=0)
        np.testing.assert_allclose(merged["class_mean"].values[k], rows.mean(axis=0), rtol=1e-13)
        np.testing.assert_allclose(merged["scatter"].values[k], centred.T @ centred, rtol=1e-12)


def test_categorical_chunks_with_fewer_categories_merge_to_the_whole_data_categories():
    X, y = data("categorical")
    low = np.flatnonzero(X.max(axis=1) <= 2)  # a first chunk whose codes stop at 2
    rest = np.setdiff1d(np.arange(N_ROWS), low)
    streamed = CategoricalNB(random_seed=0, **FAST)
    streamed.partial_fit(X[low], y[low], classes=["a", "b", "c"])
    assert streamed.n_categories_.max() <= 3
    streamed.partial_fit(X[rest], y[rest])
    whole = CategoricalNB(random_seed=0, **FAST).fit(X, y)
    np.testing.assert_array_equal(streamed.n_categories_, X.max(axis=0) + 1)
    assert_same_fit(whole, streamed)


def test_partial_fit_with_evidence_alpha_equals_fit():
    rng = np.random.default_rng(4)
    y = np.repeat(["a", "b"], N_ROWS // 2)
    # Words with very different rates, so that the evidence has an interior maximum.
    X = rng.poisson(np.where((y == "a")[:, None], [8.0, 1.0, 0.2, 3.0], [1.0, 6.0, 0.5, 3.0]))
    whole = MultinomialNB(alpha="evidence", random_seed=0, **FAST).fit(X, y)
    streamed = MultinomialNB(alpha="evidence", random_seed=0, **FAST)
    for rows in np.array_split(np.arange(N_ROWS), 3):
        streamed.partial_fit(X[rows], y[rows], classes=["a", "b"])
    assert streamed.alpha_ == pytest.approx(whole.alpha_, rel=1e-9)
    assert_same_fit(whole, streamed, rtol=1e-9)


def test_partial_fit_continues_a_fit_and_fit_starts_afresh():
    X, y = data("gda")
    est = GaussianDiscriminantAnalysis(random_seed=0, **FAST).fit(X[:30], y[:30])
    est.partial_fit(X[30:], y[30:])
    assert_same_fit(GaussianDiscriminantAnalysis(random_seed=0, **FAST).fit(X, y), est)
    est.fit(X[:30], y[:30])
    assert "partial_fit_calls" not in est.closed_form_.attrs
    assert est.closed_form_.attrs["n_samples"] == 30


# -- sample_weight -----------------------------------------------------------------------------


@pytest.mark.parametrize("model", list(MODELS))
def test_integer_weights_equal_repeated_rows(model):
    X, y = data(model)
    weights = np.random.default_rng(1).integers(1, 4, size=N_ROWS)
    repeated = MODELS[model](random_seed=3, **FAST).fit(
        X.repeat(weights, axis=0), y.repeat(weights)
    )
    weighted = MODELS[model](random_seed=3, **FAST).fit(X, y, sample_weight=weights)
    assert_same_fit(repeated, weighted)
    posterior = weighted.idata_["posterior"]
    for name, draws in repeated.idata_["posterior"].data_vars.items():
        if model in ("gda", "qda"):  # the scatter sums in another order: rounding only
            np.testing.assert_allclose(posterior[name].values, draws.values, rtol=1e-9)
        else:  # whole counts: the same bits, so the same seeded draws
            np.testing.assert_array_equal(posterior[name].values, draws.values)
    np.testing.assert_array_equal(weighted.idata_["constant_data"]["sample_weight"], weights)


@pytest.mark.parametrize("model", list(MODELS))
def test_zero_weights_equal_dropping_the_rows(model):
    X, y = data(model)
    weights = np.ones(N_ROWS)
    weights[::4] = 0.0
    weights[y == "c"] = 0.0  # a whole class: it leaves the fit
    kept = weights > 0
    dropped = MODELS[model](random_seed=0, **FAST).fit(X[kept], y[kept])
    weighted = MODELS[model](random_seed=0, **FAST).fit(X, y, sample_weight=weights)
    assert weighted.classes_.tolist() == ["a", "b"]
    assert_same_fit(dropped, weighted)
    # Only the kept rows, and no weights (all 1): leave-one-out is that of the kept rows.
    assert "sample_weight" not in weighted.idata_["constant_data"]
    np.testing.assert_allclose(loo_proba(weighted), loo_proba(dropped), rtol=1e-10)


def test_fractional_weights_give_weighted_means_and_scatter():
    X, y = data("gda")
    weights = np.random.default_rng(2).uniform(0.1, 2.0, size=N_ROWS)
    est = GaussianDiscriminantAnalysis(random_seed=0, **FAST).fit(X, y, sample_weight=weights)
    scatter = np.zeros((N_FEATURES, N_FEATURES))
    for k, label in enumerate(["a", "b", "c"]):
        w, rows = weights[y == label], X[y == label]
        mean = w @ rows / w.sum()
        scatter += (rows - mean).T @ ((rows - mean) * w[:, None])
        np.testing.assert_allclose(est.closed_form_["class_mean"].values[k], mean, rtol=1e-12)
        assert est.class_count_[k] == pytest.approx(w.sum(), rel=1e-14)
    np.testing.assert_allclose(est.closed_form_["scatter"].values, scatter, rtol=1e-12)


def test_weighted_fit_keeps_unweighted_rows_and_refuses_leave_one_out():
    X, y = data("multinomial")
    weights = np.full(N_ROWS, 2.0)
    est = MultinomialNB(random_seed=0, **FAST).fit(X, y, sample_weight=weights)
    plain = MultinomialNB(random_seed=0, **FAST).fit(X, y)
    np.testing.assert_array_equal(est.training_rows()[0], X)
    # log p(x_i, y_i | θ) per row, unweighted: the same function of θ as the unweighted fit's.
    row = est.idata_["log_likelihood"]["y"]
    assert row.shape == plain.idata_["log_likelihood"]["y"].shape
    with pytest.raises(
        ValueError, match="leave-one-out is not defined for a fit with sample_weight"
    ):
        loo_proba(est)


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        (-np.ones(N_ROWS), ValueError, r"sample_weight: expected finite weights >= 0; got -1\.0"),
        (np.r_[np.nan, np.ones(N_ROWS - 1)], ValueError, "sample_weight: expected finite weights"),
        (np.ones(N_ROWS - 1), ValueError, rf"sample_weight: expected shape \({N_ROWS},\)"),
        (np.ones((N_ROWS, 2)), ValueError, r"sample_weight: expected shape .* got shape \(60, 2\)"),
        (np.zeros(N_ROWS), ValueError, "sample_weight: all weights are zero"),
        (["a"] * N_ROWS, TypeError, "sample_weight: expected a 1-D array of numbers"),
    ],
    ids=["negative", "nan", "length", "2d", "all-zero", "strings"],
)
def test_bad_sample_weight_is_refused_naming_it(weights, error, match):
    X, y = data("multinomial")
    with pytest.raises(error, match=match):
        MultinomialNB(**FAST).fit(X, y, sample_weight=weights)


def test_sample_weight_is_not_modified():
    X, y = data("gda")
    weights = np.linspace(0.0, 2.0, N_ROWS)
    before = weights.copy()
    GaussianDiscriminantAnalysis(random_seed=0, **FAST).fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(weights, before)


def test_nuts_refuses_fractional_weights_before_compiling():
    X, y = data("multinomial")
    with pytest.raises(ValueError, match=r"sample_weight: inference='nuts' needs whole-number"):
        MultinomialNB(compute_map=False).fit(X, y, sample_weight=np.full(N_ROWS, 0.5))


# -- partial_fit's errors and what it keeps ----------------------------------------------------


def test_later_chunk_with_a_new_class_is_refused():
    X, y = data("multinomial")
    est = MultinomialNB(**FAST).partial_fit(X[y != "c"], y[y != "c"])
    with pytest.raises(ValueError, match=r"y: labels \['c'\] are not among the classes"):
        est.partial_fit(X, y)


def test_first_chunk_of_one_class_needs_classes():
    X, y = data("multinomial")
    with pytest.raises(ValueError, match="y: a classifier needs at least two classes"):
        MultinomialNB(**FAST).partial_fit(X[y == "a"], y[y == "a"])


def test_classes_that_change_between_calls_are_refused():
    X, y = data("bernoulli")
    est = BernoulliNB(**FAST).partial_fit(X, y, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"classes: expected those of the first partial_fit"):
        est.partial_fit(X, y, classes=["a", "b", "c", "d"])


def test_changed_number_of_features_is_refused():
    X, y = data("qda")
    est = QuadraticDiscriminantAnalysis(**FAST).partial_fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but QuadraticDiscriminantAnalysis"):
        est.partial_fit(X[:, :3], y)


def test_changed_feature_names_are_refused():
    X, y = data("multinomial")
    columns = ["w0", "w1", "w2", "w3"]
    est = MultinomialNB(**FAST).partial_fit(pd.DataFrame(X, columns=columns), y)
    renamed = pd.DataFrame(X, columns=["w0", "w1", "w2", "other"])
    with pytest.raises(ValueError, match=r"X: feature names differ .* \['w3'\] there"):
        est.partial_fit(renamed, y)


def test_partial_fit_keeps_no_rows_and_says_so():
    X, y = data("categorical")
    est = CategoricalNB(**FAST).partial_fit(X, y)
    assert "observed_data" not in est.idata_.children
    with pytest.raises(ValueError, match="training_rows: this model was fitted by partial_fit"):
        est.training_rows()
    with pytest.raises(ValueError, match="fitted by partial_fit"):
        loo_proba(est)
