"""One call, one meaning: the naive Bayes ``alpha``, and the other estimator arguments of
issue 20 (section 4) with their exact outcomes.

scikit-learn's naive Bayes reads an array ``alpha`` as one λ per *feature*. bayesgen has one λ
per *class*, given as a mapping {class label: λ} (a dict, or a pandas Series read by its
index), and refuses a plain array, so that a scikit-learn user's per-feature array is never
silently read per class. Expected values are computed here by hand (add-λ per class).
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
import sklearn.naive_bayes
import xarray as xr
from sklearn.base import clone

import bayesgen
from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from bayesgen import closed_form as cf

FAST = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "prior_draws": 0}
NB = (MultinomialNB, BernoulliNB, CategoricalNB)
ALL = (*NB, GaussianDiscriminantAnalysis, QuadraticDiscriminantAnalysis)

#: The whole message for an array alpha (after "got <repr>. ").
ARRAY_HINT = (
    "scikit-learn's naive Bayes reads an array alpha as one λ per feature; bayesgen has no "
    "per-feature λ, and reading the array as one λ per class instead would give the same call "
    "two meanings. For one λ per class give a mapping from class label to λ, e.g. "
    "alpha={'ham': 0.5, 'spam': 2.0}, or a pandas Series indexed by the class labels."
)
EXPECTED = (
    "a finite number > 0 or 'evidence' or 'evidence_per_class' or a mapping "
    "{class label: λ > 0} (a dict or a pandas Series indexed by the classes)"
)


def array_message(value) -> str:
    return f"alpha: expected {EXPECTED}; got {value!r}. {ARRAY_HINT}"


# --------------------------------------------------------------------------------------------
# scikit-learn's test_alpha_vector (sklearn/tests/test_naive_bayes.py), ported.

SK_X = np.array([[1, 0], [1, 1]])
SK_Y = np.array([0, 1])


def test_scikit_learn_reads_the_array_per_feature():
    # Why an array is refused: the same call in scikit-learn means one λ per feature.
    nb = sklearn.naive_bayes.MultinomialNB(alpha=np.array([1, 2]), force_alpha=False)
    nb.partial_fit(SK_X, SK_Y, classes=[0, 1])
    np.testing.assert_allclose(nb.feature_log_prob_, np.log([[1 / 2, 1 / 2], [2 / 5, 3 / 5]]))
    np.testing.assert_allclose(nb.predict_proba(SK_X), [[5 / 9, 4 / 9], [25 / 49, 24 / 49]])


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
@pytest.mark.parametrize(
    "alpha",
    [np.array([1, 2]), [1, 2], (1, 2), np.array([1.0, -0.1]), np.array([1.0, 2.0, 3.0])],
    ids=["array", "list", "tuple", "negative", "three"],
)
def test_alpha_vector_of_scikit_learn_is_refused_not_read_per_class(alpha, method):
    est = MultinomialNB(alpha=alpha, **FAST)
    with pytest.raises(TypeError, match=f"^{re.escape(array_message(alpha))}$"):
        if method == "fit":
            est.fit(SK_X, SK_Y)
        else:
            est.partial_fit(SK_X, SK_Y, classes=[0, 1])


@pytest.mark.parametrize("cls", NB)
def test_every_naive_bayes_estimator_refuses_an_array(cls):
    X = [[1, 0], [0, 1], [1, 1], [0, 0]]
    with pytest.raises(TypeError, match=re.escape(ARRAY_HINT)):
        cls(alpha=np.array([0.5, 2.0]), **FAST).fit(X, [0, 1, 0, 1])


def test_a_series_without_class_labels_is_refused_naming_the_labels():
    # A Series on a RangeIndex, as pd.Series([1, 2]) gives, while the classes are strings:
    # its positions are never used.
    alpha = pd.Series([1.0, 2.0])
    message = (
        "alpha: expected one λ for each class ['ham', 'spam']; missing ['ham', 'spam'] and "
        "not classes [0, 1] (keys are class labels, as in classes_, and a Series is read by "
        "its index, never by position)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MultinomialNB(alpha=alpha, **FAST).fit(SK_X, ["ham", "spam"])


def test_the_same_data_with_lambda_per_class_by_label():
    # λ = 1 for class 0 (row [1, 0]), λ = 2 for class 1 (row [1, 1]), add-λ by hand.
    est = MultinomialNB(alpha={1: 2.0, 0: 1.0}, **FAST).fit(SK_X, SK_Y)
    np.testing.assert_array_equal(est.alpha_, [1.0, 2.0])
    expected = [[(1 + 1) / (1 + 2), (0 + 1) / (1 + 2)], [(1 + 2) / (2 + 4), (1 + 2) / (2 + 4)]]
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, expected, rtol=1e-14)


# --------------------------------------------------------------------------------------------
# A mapping {class label: λ}: read by label, in any order.

X_WORDS = np.array([[3, 0, 1], [0, 2, 2], [1, 1, 0], [0, 4, 1], [2, 0, 3], [5, 1, 0]])
Y_WORDS = np.array(["spam", "ham", "spam", "ham", "spam", "ham"])


def add_lambda(X, y, lam_of):
    rows = []
    for label in ("ham", "spam"):
        counts = X[y == label].sum(axis=0).astype(float)
        rows.append((counts + lam_of[label]) / (counts.sum() + X.shape[1] * lam_of[label]))
    return np.array(rows)


@pytest.mark.parametrize(
    "alpha",
    [
        {"spam": 5.0, "ham": 0.1},
        pd.Series({"spam": 5.0, "ham": 0.1}),
        pd.Series([0.1, 5.0], index=["ham", "spam"]),
        {np.str_("ham"): 0.1, np.str_("spam"): 5},
    ],
    ids=["dict", "Series-spam-first", "Series-ham-first", "numpy-keys"],
)
def test_a_mapping_is_read_by_its_labels(alpha):
    est = MultinomialNB(alpha=alpha, **FAST).fit(X_WORDS, Y_WORDS)
    assert est.classes_.tolist() == ["ham", "spam"]
    np.testing.assert_array_equal(est.alpha_, [0.1, 5.0])  # in the order of classes_
    assert est.alpha_.dtype == np.float64
    expected = add_lambda(X_WORDS, Y_WORDS, {"ham": 0.1, "spam": 5.0})
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, expected, rtol=1e-13)


def test_closed_form_functions_read_a_mapping_by_label_too():
    expected = add_lambda(X_WORDS, Y_WORDS, {"ham": 0.1, "spam": 5.0})
    for alpha in ({"spam": 5.0, "ham": 0.1}, pd.Series({"spam": 5.0, "ham": 0.1})):
        est = cf.multinomial_nb(X_WORDS, Y_WORDS, alpha=alpha)
        np.testing.assert_allclose(est["feature_prob"].values, expected, rtol=1e-13)


def test_compare_reads_a_mapping_by_label():
    est = MultinomialNB(alpha={"spam": 5.0, "ham": 0.1}, **FAST).fit(X_WORDS, Y_WORDS)
    swapped = bayesgen.compare(est, alpha={"spam": 0.1, "ham": 5.0})
    same = bayesgen.compare(est, alpha={"ham": 0.1, "spam": 5.0})
    assert same.ok and not swapped.ok


def test_the_users_mapping_is_kept_as_given_and_not_modified():
    alpha = {"spam": 5.0, "ham": 0.1}
    est = MultinomialNB(alpha=alpha, **FAST).fit(X_WORDS, Y_WORDS)
    assert est.get_params()["alpha"] is alpha
    assert alpha == {"spam": 5.0, "ham": 0.1} and list(alpha) == ["spam", "ham"]


@pytest.mark.parametrize(
    ("alpha", "error", "message"),
    [
        (
            {"ham": 0.1},
            ValueError,
            "alpha: expected one λ for each class ['ham', 'spam']; missing ['spam'] (keys are "
            "class labels, as in classes_, and a Series is read by its index, never by "
            "position).",
        ),
        (
            {"ham": 0.1, "spam": 5.0, "eggs": 1.0},
            ValueError,
            "alpha: expected one λ for each class ['ham', 'spam']; not classes ['eggs'] (keys "
            "are class labels, as in classes_, and a Series is read by its index, never by "
            "position).",
        ),
        (
            {"ham": 0.0, "spam": 5.0},
            ValueError,
            "alpha: expected a finite number > 0 for class 'ham'; got 0.0.",
        ),
        (
            {"ham": 0.1, "spam": np.nan},
            ValueError,
            "alpha: expected a finite number > 0 for class 'spam'; got nan.",
        ),
        (
            {"ham": "0.1", "spam": 5.0},
            TypeError,
            "alpha: expected a number > 0 for class 'ham'; got '0.1'.",
        ),
        (
            pd.Series([0.1, 5.0, 1.0], index=["ham", "spam", "ham"]),
            ValueError,
            "alpha: a Series with a repeated class label ['ham'].",
        ),
    ],
    ids=["missing", "extra", "zero", "nan", "string", "repeated"],
)
def test_a_wrong_mapping_is_refused_naming_the_labels(alpha, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        MultinomialNB(alpha=alpha, **FAST).fit(X_WORDS, Y_WORDS)


def test_a_mapping_beside_alpha_prior_is_refused():
    with pytest.raises(ValueError, match=re.escape("alpha: leave it at its default 1.0 when")):
        MultinomialNB(alpha={"ham": 1.0, "spam": 2.0}, alpha_prior=(3.0, 1.5), **FAST).fit(
            X_WORDS, Y_WORDS
        )


# --------------------------------------------------------------------------------------------
# Saved models: per-class λ stored as a list in classes_ order (as before), loaded as a mapping.


def test_save_stores_a_list_in_class_order_and_load_gives_the_mapping(tmp_path):
    est = MultinomialNB(alpha={"spam": 5.0, "ham": 0.1}, draws=50, **FAST).fit(X_WORDS, Y_WORDS)
    path = est.save(tmp_path / "model.nc")
    with xr.open_datatree(path) as tree:
        stored = json.loads(tree.attrs["params"])["alpha"]
    assert stored == [0.1, 5.0]  # the format of files written before: classes_ order
    loaded = bayesgen.load(path)
    assert loaded.get_params()["alpha"] == {"ham": 0.1, "spam": 5.0}
    np.testing.assert_array_equal(loaded.alpha_, [0.1, 5.0])
    np.testing.assert_array_equal(loaded.predict_proba(X_WORDS), est.predict_proba(X_WORDS))
    # The loaded parameters refit to the same model.
    refit = clone(loaded).fit(X_WORDS, Y_WORDS)
    np.testing.assert_array_equal(refit.alpha_, [0.1, 5.0])


def test_a_file_saved_when_alpha_was_an_array_loads_as_the_mapping():
    from pathlib import Path

    folder = Path(__file__).parent / "data" / "per-class-alpha"  # written by its make.py
    loaded = bayesgen.load(folder / "multinomial-array-alpha.nc")
    assert loaded.get_params()["alpha"] == {"ham": 0.1, "spam": 5.0}
    np.testing.assert_array_equal(loaded.alpha_, [0.1, 5.0])
    expected = np.load(folder / "multinomial-array-alpha-proba.npy")
    np.testing.assert_array_equal(loaded.predict_proba(X_WORDS), expected)
    refit = clone(loaded).fit(X_WORDS, Y_WORDS)
    np.testing.assert_allclose(
        refit.closed_form_["feature_prob"].values,
        add_lambda(X_WORDS, Y_WORDS, {"ham": 0.1, "spam": 5.0}),
        rtol=1e-13,
    )


def test_integer_class_labels_round_trip_as_integers(tmp_path):
    est = MultinomialNB(alpha={1: 2.0, 0: 1.0}, draws=20, **FAST).fit(SK_X, SK_Y)
    loaded = bayesgen.load(est.save(tmp_path / "model.nc"))
    assert loaded.get_params()["alpha"] == {0: 1.0, 1: 2.0}
    assert all(type(key) is int for key in loaded.get_params()["alpha"])


def test_sbc_of_evidence_per_class_refits_at_the_lambdas_chosen_by_label():
    from bayesgen.checks.calibration import sbc

    rng = np.random.default_rng(7)
    y = np.repeat(["ham", "spam"], 15)
    X = np.vstack([rng.poisson([4.0, 1.0, 1.0], (15, 3)), rng.poisson([1.0, 2.0, 3.0], (15, 3))])
    est = MultinomialNB(alpha="evidence_per_class", **FAST).fit(X, y)
    result = sbc(est, n_simulations=10, random_seed=1)  # refits with alpha={label: λ_k}
    assert result.n_simulations == 10


# --------------------------------------------------------------------------------------------
# sample_weight out of range.


WHY = (
    "A weight counts its row that many times in the sufficient statistics, and float64 holds "
    "such counts as whole numbers only up to 2**53 (half of it is kept for later rows); far "
    "above it their sums overflow to infinity."
)


@pytest.mark.parametrize(
    ("weights", "total", "largest", "position"),
    [
        (1e308, "inf", "1e+308", 0),
        ([1.0, 1e308, 1.0, 1.0, 1.0, 1.0], "1e+308", "1e+308", 1),
        ([2.0**52, 1, 1, 1, 1, 1], "4.5036e+15", "4.5036e+15", 0),
    ],
    ids=["scalar", "one", "just-above"],
)
def test_a_huge_sample_weight_is_refused_saying_the_range_and_why(
    weights, total, largest, position
):
    message = (
        "sample_weight: expected weights whose sum is at most 2**52 = 4.5036e+15; got a sum "
        f"of {total} (the largest weight {largest}, at position {position}). {WHY}"
    )
    X_GAUSS = X_WORDS + np.arange(18).reshape(6, 3)  # no constant column
    for est, X in (
        (MultinomialNB(**FAST), X_WORDS),
        (GaussianDiscriminantAnalysis(**FAST), X_GAUSS),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            est.fit(X, Y_WORDS, sample_weight=weights)


def test_the_largest_sum_of_sample_weights_is_accepted_and_counted_exactly():
    weights = [2.0**52 - 5, 1, 1, 1, 1, 1]  # sum 2**52
    est = MultinomialNB(**FAST).fit(X_WORDS, Y_WORDS, sample_weight=weights)
    assert est.class_count_.tolist() == [3.0, 2.0**52 - 3]  # ham rows 1, 3, 5; spam 0, 2, 4


# --------------------------------------------------------------------------------------------
# random_seed of the predictive simulations; prob of the credible interval.


@pytest.fixture(scope="module")
def fitted():
    return MultinomialNB(draws=20, **{**FAST, "prior_draws": 20}).fit(X_WORDS, Y_WORDS)


SEED_EXPECTED = "None, an integer >= 0 or a numpy.random.Generator"


@pytest.mark.parametrize("method", ["sample_posterior_predictive", "sample_prior_predictive"])
@pytest.mark.parametrize(
    ("seed", "error"),
    [("x", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError), ([1], TypeError)],
    ids=repr,
)
def test_a_bad_random_seed_of_a_simulation_is_refused(fitted, method, seed, error):
    message = f"random_seed: expected {SEED_EXPECTED}; got {seed!r}."
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        getattr(fitted, method)(random_seed=seed, draws=5)


def test_a_generator_is_a_random_seed_of_a_simulation(fitted):
    by_seed = fitted.sample_posterior_predictive(random_seed=3, draws=5)
    first = by_seed["posterior_predictive"].to_dataset().copy(deep=True)
    by_generator = fitted.sample_posterior_predictive(random_seed=np.random.default_rng(3), draws=5)
    second = by_generator["posterior_predictive"].to_dataset()
    for name in first.data_vars:
        np.testing.assert_array_equal(first[name].values, second[name].values)


@pytest.mark.parametrize(
    ("prob", "error", "message"),
    [
        ("0.9", TypeError, "got '0.9' (str)"),
        (None, TypeError, "got None (NoneType)"),
        (np.array([0.9]), TypeError, "got array([0.9]) (ndarray)"),
        ([0.05, 0.95], TypeError, "got [0.05, 0.95] (list)"),
        (np.nan, ValueError, "got nan"),
        (0, ValueError, "got 0"),
        (1.0, ValueError, "got 1.0"),
    ],
    ids=repr,
)
def test_a_bad_interval_probability_is_refused(fitted, prob, error, message):
    start = (
        "prob: expected a probability in (0, 1), a number such as 0.9; "
        if error is TypeError
        else "prob: expected a probability in (0, 1); "
    )
    with pytest.raises(error, match=f"^{re.escape(start + message)}.$"):
        fitted.predict_proba_interval(X_WORDS, prob=prob)


def test_a_numpy_interval_probability_is_accepted(fitted):
    low, high = fitted.predict_proba_interval(X_WORDS, prob=np.float32(0.5))
    assert np.all(low <= high)


# --------------------------------------------------------------------------------------------
# Defaults as PyMC users expect: four chains, run two at a time on two cores.


@pytest.mark.parametrize("cls", ALL)
def test_four_chains_by_default(cls):
    assert cls().get_params()["chains"] == 4


def test_a_default_nuts_fit_samples_four_chains_on_every_core(monkeypatch, sample_call):
    import os

    from conftest import SampleCalled

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with pytest.raises(SampleCalled):
        MultinomialNB(compute_map=False).fit(X_WORDS, Y_WORDS)
    seen = sample_call
    assert (seen["chains"], seen["cores"], seen["draws"], seen["tune"]) == (4, 2, 1000, 1000)


def test_a_default_conjugate_fit_has_four_chains():
    est = MultinomialNB(**{**FAST, "draws": 10}).fit(X_WORDS, Y_WORDS)
    assert dict(est.idata_["posterior"].sizes) == {
        "chain": 4,
        "draw": 10,
        "class": 2,
        "feature": 3,
    }


# --------------------------------------------------------------------------------------------
# Every parameter described, with its default.


@pytest.mark.parametrize("cls", ALL)
def test_every_parameter_is_described_with_its_default(cls):
    import inspect

    from numpydoc.docscrape import ClassDoc

    documented = {}
    for parameter in ClassDoc(cls)["Parameters"]:
        for name in parameter.name.split(","):
            documented[name.strip()] = parameter
    for name, spec in inspect.signature(cls.__init__).parameters.items():
        if name == "self":
            continue
        assert name in documented, f"{cls.__name__}: {name} is not documented"
        entry = documented[name]
        assert " ".join(entry.desc).strip(), f"{cls.__name__}: {name} has no description"
        default = spec.default
        shown = f'"{default}"' if isinstance(default, str) else repr(default)
        assert f"default {shown}" in entry.type, (cls.__name__, name, entry.type)


@pytest.mark.parametrize("cls", [MultinomialNB, QuadraticDiscriminantAnalysis])
def test_every_public_method_describes_its_parameters(cls):
    import inspect

    from numpydoc.docscrape import FunctionDoc

    for name, method in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("_") or not method.__module__.startswith("bayesgen"):
            continue
        documented = {}
        for parameter in FunctionDoc(method)["Parameters"]:
            for each in parameter.name.split(","):
                documented[each.strip()] = " ".join(parameter.desc).strip()
        for parameter in inspect.signature(method).parameters:
            if parameter != "self":
                assert documented.get(parameter), f"{cls.__name__}.{name}: {parameter}"
