"""Catalogue of bad estimator parameters: each raises its exact error at fit, naming itself.

As in scikit-learn, ``__init__`` stores its arguments and ``fit`` validates them, before it
reads X or draws or compiles anything (the inference entry points are replaced below by
functions that fail the test if reached). Each message names the parameter, what was
expected and what came. The two parameters about the data, ``binarize`` and ``n_categories``,
are checked with the data (tests/test_bad_input_data.py); here only that they are checked.
"""

import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import bayesgen
from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    NormalInverseWishart,
)

M, B, C, G = MultinomialNB, BernoulliNB, CategoricalNB, GaussianDiscriminantAnalysis
Y = [0, 0, 1, 1, 0, 1]
DATA = {
    M: ([[1, 0, 2], [0, 3, 1], [2, 1, 0], [0, 0, 4], [1, 1, 1], [3, 0, 0]], Y),
    B: ([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 1, 1], [1, 0, 0]], Y),
    C: ([[0, 2, 1], [1, 0, 1], [2, 1, 0], [0, 0, 2], [1, 2, 1], [2, 0, 0]], Y),
    G: ([[0.1, 1.2], [0.4, 0.9], [1.8, 2.5], [2.2, 2.9], [0.3, 1.1], [2.0, 2.2]], Y),
}
FAST = {
    "inference": "conjugate",
    "compute_map": False,
    "draws": 20,
    "prior_draws": 0,
    "random_seed": 0,
}


#: What naive Bayes smoothing accepts: a λ, or "evidence" (bayesgen.inference.smoothing); alpha also
#: one λ per class, by class label.
SMOOTHING = "a finite number > 0 or 'evidence'"
ALPHA = (
    "a finite number > 0 or 'evidence' or 'evidence_per_class' or a mapping "
    "{class label: λ > 0} (a dict or a pandas Series indexed by the classes)"
)
#: Why an array alpha is refused (scikit-learn reads it per feature).
ALPHA_ARRAY = (
    "scikit-learn's naive Bayes reads an array alpha as one λ per feature; bayesgen has no "
    "per-feature λ, and reading the array as one λ per class instead would give the same call "
    "two meanings. For one λ per class give a mapping from class label to λ, e.g. "
    "alpha={'ham': 0.5, 'spam': 2.0}, or a pandas Series indexed by the class labels."
)


def _proper_prior(name, value, model):
    expected = "a finite number > 0"
    if model.endswith("_nb"):
        expected = ALPHA if name == "alpha" else SMOOTHING
    return (
        f"{name}: expected {expected}; got {value}. The Bayesian model needs a proper "
        f"prior; for the maximum-likelihood estimate ({name}=0) use "
        f"bayesgen.closed_form.{model}(X, y, {name}=0)."
    )


GENERATOR = np.random.default_rng(0)  # fits, but a model file could not store it
SEED = "None or an integer >= 0 (a seed the model file can store)"
SAMPLERS = "one of 'pymc', 'nutpie', 'numpyro', 'blackjax'"
NIW = "None or a bayesgen.NormalInverseWishart"

# (estimator class, parameters, exception, the whole message)
CATALOGUE = [
    # Posterior draws and chains.
    (M, {"draws": 0}, ValueError, "draws: expected an integer >= 1; got 0."),
    (M, {"draws": -1}, ValueError, "draws: expected an integer >= 1; got -1."),
    (M, {"draws": 1.5}, TypeError, "draws: expected an integer >= 1; got 1.5."),
    (M, {"draws": "10"}, TypeError, "draws: expected an integer >= 1; got '10'."),
    (M, {"draws": True}, TypeError, "draws: expected an integer >= 1; got True."),
    (G, {"draws": None}, TypeError, "draws: expected an integer >= 1; got None."),
    (B, {"chains": 0}, ValueError, "chains: expected an integer >= 1; got 0."),
    (C, {"chains": 2.0}, TypeError, "chains: expected an integer >= 1; got 2.0."),
    (M, {"tune": -1, "inference": "nuts"}, ValueError, "tune: expected an integer >= 0; got -1."),
    (G, {"tune": "500"}, TypeError, "tune: expected an integer >= 0; got '500'."),
    (M, {"cores": 0}, ValueError, "cores: expected an integer >= 1 or None; got 0."),
    (B, {"cores": 1.0}, TypeError, "cores: expected an integer >= 1 or None; got 1.0."),
    (M, {"prior_draws": -1}, ValueError, "prior_draws: expected an integer >= 0; got -1."),
    (C, {"prior_draws": 10.0}, TypeError, "prior_draws: expected an integer >= 0; got 10.0."),
    # Seeds.
    (M, {"random_seed": "abc"}, TypeError, f"random_seed: expected {SEED}; got 'abc'."),
    (B, {"random_seed": 1.5}, TypeError, f"random_seed: expected {SEED}; got 1.5."),
    (C, {"random_seed": -1}, ValueError, f"random_seed: expected {SEED}; got -1."),
    (
        G,
        {"random_seed": np.int64(-3)},
        ValueError,
        f"random_seed: expected {SEED}; got np.int64(-3).",
    ),
    (M, {"random_seed": True}, TypeError, f"random_seed: expected {SEED}; got True."),
    (M, {"random_seed": GENERATOR}, TypeError, f"random_seed: expected {SEED}; got {GENERATOR!r}."),
    # Sampler settings.
    (M, {"inference": "vi"}, ValueError, "inference: expected 'nuts' or 'conjugate'; got 'vi'."),
    (G, {"inference": None}, TypeError, "inference: expected 'nuts' or 'conjugate'; got None."),
    (M, {"nuts_sampler": "stan"}, ValueError, f"nuts_sampler: expected {SAMPLERS}; got 'stan'."),
    (B, {"nuts_sampler": None}, TypeError, f"nuts_sampler: expected {SAMPLERS}; got None."),
    (M, {"target_accept": 0}, ValueError, "target_accept: expected a number in (0, 1); got 0."),
    (B, {"target_accept": 1.0}, ValueError, "target_accept: expected a number in (0, 1); got 1.0."),
    (C, {"target_accept": 1.5}, ValueError, "target_accept: expected a number in (0, 1); got 1.5."),
    (
        G,
        {"target_accept": np.nan},
        ValueError,
        "target_accept: expected a number in (0, 1); got nan.",
    ),
    (
        M,
        {"target_accept": "0.9"},
        TypeError,
        "target_accept: expected a number in (0, 1); got '0.9'.",
    ),
    (
        M,
        {"compute_map": "yes"},
        ValueError,
        "compute_map: expected True, False or 'find_map'; got 'yes'.",
    ),
    (G, {"compute_map": 1}, TypeError, "compute_map: expected True, False or 'find_map'; got 1."),
    (
        M,
        {"progressbar": "no"},
        ValueError,
        "progressbar: expected True, False or 'auto'; got 'no'.",
    ),
    (C, {"progressbar": None}, TypeError, "progressbar: expected True, False or 'auto'; got None."),
    # Storage type.
    (M, {"dtype": "float16"}, ValueError, "dtype: expected 'float64' or 'float32'; got 'float16'."),
    (B, {"dtype": "int"}, ValueError, "dtype: expected 'float64' or 'float32'; got 'int'."),
    (
        C,
        {"dtype": np.float16},
        TypeError,
        "dtype: expected 'float64' or 'float32'; got <class 'numpy.float16'>.",
    ),
    (G, {"dtype": None}, TypeError, "dtype: expected 'float64' or 'float32'; got None."),
    # Priors: the Bayesian model needs proper ones, so 0 is refused with every inference.
    (M, {"alpha": 0}, ValueError, _proper_prior("alpha", 0, "multinomial_nb")),
    (B, {"alpha": 0.0}, ValueError, _proper_prior("alpha", 0.0, "bernoulli_nb")),
    (C, {"alpha": 0, "inference": "nuts"}, ValueError, _proper_prior("alpha", 0, "categorical_nb")),
    (M, {"alpha": -1}, ValueError, _proper_prior("alpha", -1, "multinomial_nb")),
    (B, {"alpha": np.nan}, ValueError, _proper_prior("alpha", "nan", "bernoulli_nb")),
    (C, {"alpha": np.inf}, ValueError, _proper_prior("alpha", "inf", "categorical_nb")),
    (M, {"alpha": "1"}, ValueError, f"alpha: expected {ALPHA}; got '1'."),
    (B, {"alpha": None}, TypeError, f"alpha: expected {ALPHA}; got None."),
    (
        M,
        {"alpha": [0.5, 2.0]},
        TypeError,
        f"alpha: expected {ALPHA}; got [0.5, 2.0]. {ALPHA_ARRAY}",
    ),
    (
        C,
        {"alpha": np.array([1.0, 2.0])},
        TypeError,
        f"alpha: expected {ALPHA}; got array([1., 2.]). {ALPHA_ARRAY}",
    ),
    (M, {"class_alpha": 0}, ValueError, _proper_prior("class_alpha", 0, "multinomial_nb")),
    (G, {"class_alpha": 0.0}, ValueError, _proper_prior("class_alpha", 0.0, "gda")),
    (B, {"class_alpha": -0.5}, ValueError, _proper_prior("class_alpha", -0.5, "bernoulli_nb")),
    (G, {"class_alpha": np.nan}, ValueError, _proper_prior("class_alpha", "nan", "gda")),
    (C, {"class_alpha": "a"}, ValueError, f"class_alpha: expected {SMOOTHING}; got 'a'."),
    # GDA priors.
    (
        G,
        {"cov_prior": "wishart"},
        ValueError,
        "cov_prior: expected 'conjugate' or 'lkj'; got 'wishart'.",
    ),
    (G, {"prior": {"kappa": 1.0}}, TypeError, f"prior: expected {NIW}; got {{'kappa': 1.0}}."),
    (
        G,
        {"prior": NormalInverseWishart},
        TypeError,
        f"prior: expected {NIW}; got {NormalInverseWishart!r}.",
    ),
    (G, {"lkj_eta": 0}, ValueError, "lkj_eta: expected a finite number > 0; got 0."),
    (G, {"lkj_eta": -1.0}, ValueError, "lkj_eta: expected a finite number > 0; got -1.0."),
    (G, {"lkj_eta": "2"}, TypeError, "lkj_eta: expected a finite number > 0; got '2'."),
    (
        G,
        {"cov_prior": "lkj"},
        ValueError,
        "inference='conjugate' needs cov_prior='conjugate' (the LKJ prior has no closed-form "
        "posterior); use inference='nuts' for cov_prior='lkj'.",
    ),
]


def _case_id(case):
    cls, params, _, _ = case
    return f"{cls.__name__}-" + "-".join(f"{key}={_stable(value)}" for key, value in params.items())


def _stable(value) -> str:
    """A test id that is the same in every process (pytest-xdist's workers compare their
    collections): a Generator's repr holds its address."""
    return type(value).__name__ if isinstance(value, np.random.Generator) else repr(value)


@pytest.fixture(autouse=True)
def no_inference(monkeypatch):
    """Fail any test that reaches the sampler, the MAP optimiser or the exact draws."""
    from bayesgen.inference import sampling as inference

    def reached(*args, **kwargs):
        raise AssertionError("parameter validation should have stopped fit before inference")

    for name in ("sample_nuts", "find_map", "conjugate_posterior"):
        monkeypatch.setattr(inference, name, reached)


def test_catalogue_size():
    assert len(CATALOGUE) >= 40


@pytest.mark.parametrize("case", CATALOGUE, ids=[_case_id(case) for case in CATALOGUE])
def test_bad_parameter_raises_its_exact_error_at_fit(case):
    cls, params, error, message = case
    X, y = DATA[cls]
    est = cls(**{**FAST, **params})  # __init__ accepts anything, as in scikit-learn
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        est.fit(X, y)


@pytest.mark.parametrize("cls", [M, B, C, G])
def test_every_parameter_is_validated_by_name(cls):
    X, y = DATA[cls]
    for name in cls().get_params():
        est = cls(**FAST).set_params(**{name: object()})
        # binarize and n_categories are checked by the data layer, which names the type too.
        with pytest.raises(TypeError, match=f"^{name}: expected .*; got (object )?<object object"):
            est.fit(X, y)


def test_a_bad_parameter_is_reported_before_the_data():
    with pytest.raises(ValueError, match=r"^draws: "):
        MultinomialNB(**{**FAST, "draws": 0}).fit(None, None)


def test_init_stores_bad_parameters_without_complaint():
    est = MultinomialNB(alpha=-1, draws="x")
    assert est.get_params()["alpha"] == -1
    assert est.get_params()["draws"] == "x"


# --------------------------------------------------------------------------------------------
# Values that look odd but are valid.


@pytest.mark.parametrize(
    "params",
    [
        {"random_seed": np.int64(3)},
        {"draws": np.int64(5), "chains": np.int32(1)},
        {"alpha": np.float32(0.5), "class_alpha": 2},
        {"compute_map": np.False_},
        {"dtype": "float32"},
    ],
    ids=_stable,
)
def test_numpy_scalars_and_generators_are_accepted(monkeypatch, params):
    monkeypatch.undo()  # this test runs inference
    X, y = DATA[M]
    est = MultinomialNB(**{**FAST, **params}).fit(X, y)
    draws = est.idata_["posterior"]["feature_prob"]
    assert draws.sizes["draw"] == int(params.get("draws", FAST["draws"]))
    assert draws.dtype == np.dtype(params.get("dtype", "float64"))


@pytest.mark.parametrize("n_categories", [4, np.array([3, 3, 4])], ids=repr)
def test_n_categories_as_one_count_or_one_per_feature(monkeypatch, n_categories):
    monkeypatch.undo()
    X, y = DATA[C]
    est = CategoricalNB(n_categories=n_categories, **FAST).fit(X, y)
    expected = np.broadcast_to(np.asarray(n_categories, dtype=np.int64), (3,))
    np.testing.assert_array_equal(est.n_categories_, expected)


# --------------------------------------------------------------------------------------------
# NUTS settings too short for the comparison: a warning at fit, before sampling.


class _Stop(Exception):
    """Raised in place of sampling, once the warnings have been given."""


@pytest.fixture
def stop_at_sampling(monkeypatch):
    from bayesgen.inference import sampling as inference

    def stop(*args, **kwargs):
        raise _Stop

    monkeypatch.setattr(inference, "sample_nuts", stop)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"tune": 5, "draws": 10},
            "NUTS: draws=10 x chains=2 keeps 20 draws, fewer than the 400 effective draws that "
            "compare() asks for; tune=5 is below 200 tuning steps, too few for NUTS to adapt its "
            "step size and mass matrix. Use draws * chains >= 400 and tune >= 200 (the defaults: "
            "draws=1000, tune=1000, chains=4).",
        ),
        (
            {"tune": 1000, "draws": 199},
            "NUTS: draws=199 x chains=2 keeps 398 draws, fewer than the 400 effective draws that "
            "compare() asks for. Use",
        ),
        (
            {"tune": 199, "draws": 1000},
            "NUTS: tune=199 is below 200 tuning steps, too few for NUTS to adapt its step size "
            "and mass matrix. Use",
        ),
    ],
)
def test_short_nuts_run_warns_at_fit(stop_at_sampling, params, message):
    X, y = DATA[M]
    est = MultinomialNB(inference="nuts", chains=2, compute_map=False, **params)
    with pytest.warns(UserWarning, match=f"^{re.escape(message)}"), pytest.raises(_Stop):
        est.fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        {"inference": "nuts", "tune": 200, "draws": 100, "chains": 4},
        {"inference": "nuts", "tune": 1000, "draws": 1000, "chains": 2},
    ],
)
def test_long_enough_nuts_run_does_not_warn(stop_at_sampling, params, recwarn):
    X, y = DATA[M]
    with pytest.raises(_Stop):
        MultinomialNB(compute_map=False, **params).fit(X, y)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_short_conjugate_run_does_not_warn(monkeypatch, recwarn):
    monkeypatch.undo()
    X, y = DATA[M]
    MultinomialNB(**{**FAST, "draws": 10, "chains": 1}).fit(X, y)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_the_warning_threshold_is_compares_ess_min():
    from bayesgen.maths.diagnostics import ESS_MIN

    assert ESS_MIN == 400  # the figure the messages above are written with


# --------------------------------------------------------------------------------------------
# Using an estimator wrongly.


@pytest.mark.parametrize(
    "method",
    [
        "predict",
        "predict_proba",
        "predict_log_proba",
        "predict_proba_interval",
        "predict_proba_draws",
        "posterior_predictive_proba",
    ],
)
def test_unfitted_estimator_raises_not_fitted_error(method):
    X, _ = DATA[M]
    with pytest.raises(NotFittedError, match=r"^This MultinomialNB is not fitted yet; call fit"):
        getattr(MultinomialNB(), method)(X)


def test_posterior_mean_of_unfitted_estimator_raises_not_fitted_error():
    with pytest.raises(NotFittedError, match=r"^This GaussianDiscriminantAnalysis is not fitted"):
        GaussianDiscriminantAnalysis().posterior_mean()


@pytest.mark.parametrize("cls", [M, B, C, G])
def test_predicting_with_another_number_of_features_names_the_estimator(monkeypatch, cls):
    monkeypatch.undo()
    X, y = DATA[cls]
    est = cls(**FAST).fit(X, y)
    message = (
        f"X has 2 features, but {cls.__name__} is expecting 3 features as input. Pass the same "
        "columns (or the same vectorizer) as at fit."
        if cls is not G
        else f"X has 3 features, but {cls.__name__} is expecting 2 features as input. Pass the "
        "same columns (or the same vectorizer) as at fit."
    )
    X_bad = [row[:2] for row in X] if cls is not G else [[*row, 0.0] for row in X]
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        est.predict(X_bad)


def test_column_vector_y_warns_and_fits_as_its_ravel(monkeypatch):
    from sklearn.exceptions import DataConversionWarning

    monkeypatch.undo()
    X, y = DATA[M]
    with pytest.warns(DataConversionWarning, match="^A column-vector y was passed when a 1d"):
        column = MultinomialNB(**FAST).fit(X, np.asarray(y)[:, None])
    flat = MultinomialNB(**FAST).fit(X, y)
    np.testing.assert_array_equal(column.predict_proba(X), flat.predict_proba(X))


def test_closed_form_still_gives_the_mle_with_alpha_zero():
    X, y = DATA[M]
    counts = np.asarray(X, dtype=float)
    est = bayesgen.closed_form.multinomial_nb(X, y, alpha=0)
    class_one = counts[np.asarray(y) == 1].sum(axis=0)
    np.testing.assert_allclose(
        est["feature_prob"].sel({"class": 1}).values, class_one / class_one.sum()
    )
