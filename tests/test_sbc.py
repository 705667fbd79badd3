"""Simulation-based calibration (bayesgen.sbc): every conjugate posterior is calibrated, and a
25-fold prior mismatch is caught.

Each estimator is fitted once per module to 30 rows of 2–3 features (conjugate inference, so
no PyMC compilation); the SBC runs are cached per model, since several tests read the same.
"""

import warnings
from functools import cache

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError

import bayesgen
from bayesgen import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    NormalInverseWishart,
    QuadraticDiscriminantAnalysis,
)
from bayesgen.checks.calibration import SBCResult, sbc

CONJUGATE = {"inference": "conjugate", "compute_map": False, "random_seed": 0}
NB_MODELS = ("multinomial", "bernoulli", "categorical")
GAUSSIAN_MODELS = ("gda", "qda")
N_SIMULATIONS = 120
N_ROWS = 30


def _data(name):
    rng = np.random.default_rng(7)
    y = np.arange(N_ROWS) % 2
    if name == "multinomial":
        return rng.poisson(2.0, (N_ROWS, 3)), y
    if name == "bernoulli":
        return (rng.random((N_ROWS, 3)) < 0.4).astype(int), y
    if name == "categorical":  # 2 and 4 categories: the first feature's cells 2, 3 are padding
        return np.column_stack([rng.integers(0, 2, N_ROWS), rng.integers(0, 4, N_ROWS)]), y
    return rng.normal(size=(N_ROWS, 2)) + y[:, None], y


ESTIMATORS = {
    "multinomial": MultinomialNB,
    "bernoulli": BernoulliNB,
    "categorical": CategoricalNB,
    "gda": GaussianDiscriminantAnalysis,
    "qda": QuadraticDiscriminantAnalysis,
}


@cache
def fitted(name):
    return ESTIMATORS[name](**CONJUGATE).fit(*_data(name))


@cache
def calibrated(name) -> SBCResult:
    return sbc(fitted(name), n_simulations=N_SIMULATIONS, random_seed=11)


@cache
def mismatched(name) -> SBCResult:
    """The parameters drawn from a prior 25 times weaker than the fit's: λ / 25 for naive
    Bayes (sparse probabilities, which the fit's λ smooths away), Ψ₀ / 25 for GDA and QDA
    (covariances 25 times smaller than the fit's prior expects)."""
    est = fitted(name)
    if name in NB_MODELS:
        return sbc(est, n_simulations=60, random_seed=12, prior_alpha=est.alpha / 25)
    scale = est.closed_form_["prior_scale"].values
    prior = NormalInverseWishart(scale=scale / 25)
    return sbc(est, n_simulations=60, random_seed=12, simulation_prior=prior)


# -- calibrated models pass, mismatched priors fail ----------------------------------------


@pytest.mark.parametrize("name", [*NB_MODELS, *GAUSSIAN_MODELS])
def test_sbc_is_ok_for_every_conjugate_model(name):
    result = calibrated(name)
    assert result.ok, str(result)
    assert (result.p_values >= 0.001 / len(result.p_values)).all()


@pytest.mark.parametrize("name", [*NB_MODELS, *GAUSSIAN_MODELS])
def test_sbc_fails_for_a_25_fold_prior_mismatch(name):
    result = mismatched(name)
    assert not result.ok
    changed = "feature_prob" if name in NB_MODELS else "cov"
    assert result.p_values[changed] < 1e-6
    # The class probabilities' prior is the fit's: they stay uniform.
    assert result.p_values["class_prob"] >= result.threshold


def test_ranks_lie_between_0_and_n_draws_one_row_per_simulation():
    result = calibrated("multinomial")
    assert result.ranks.shape[0] == N_SIMULATIONS
    assert result.ranks.to_numpy().min() >= 0
    assert result.ranks.to_numpy().max() <= 99
    assert result.n_draws == 99


def test_p_values_are_pearson_chi_square_of_ten_equal_rank_bins():
    result = calibrated("bernoulli")
    for column in result.ranks.columns:
        counts = np.bincount(result.ranks[column].to_numpy() // 10, minlength=10)
        expected = stats.chisquare(counts).pvalue  # equal bins: 100 ranks, 10 a bin
        assert result.parameter_p_values[column] == pytest.approx(expected, rel=1e-12)


def test_variable_p_value_is_bonferroni_over_its_parameters():
    result = calibrated("gda")
    cov = result.parameter_p_values["cov"]
    assert result.p_values["cov"] == pytest.approx(min(1.0, len(cov) * cov.min()))


def test_ok_needs_five_simulations_a_bin():
    result = sbc(fitted("bernoulli"), n_simulations=40, random_seed=3)
    assert not result.enough_simulations
    assert not result.ok
    assert "Too few simulations: 40 < 5 x 10 bins" in str(result)


# -- which parameters are ranked -----------------------------------------------------------


def test_gda_ranks_class_prob_mu_and_the_upper_triangle_of_cov_not_coef():
    result = calibrated("gda")
    assert list(result.p_values.index) == ["class_prob", "mu", "cov"]
    assert sorted(result.ranks["cov"].columns) == [
        "cov[x0, x0]",
        "cov[x0, x1]",
        "cov[x1, x1]",
    ]


def test_categorical_padding_cells_are_never_ranked():
    labels = calibrated("categorical").ranks["feature_prob"].columns
    # feature x0 has 2 categories: categories 2 and 3 are padding.
    assert not any(label.endswith(("x0, 2]", "x0, 3]")) for label in labels)
    assert len(labels) == 8  # max_cells of 2 classes x (2 + 4) real cells


def test_max_cells_bounds_the_parameters_of_each_variable():
    result = sbc(fitted("multinomial"), n_simulations=5, random_seed=0, max_cells=2)
    assert result.ranks["feature_prob"].shape[1] == 2
    assert result.ranks["class_prob"].shape[1] == 2


# -- the result ----------------------------------------------------------------------------


def test_plot_has_one_axis_per_variable():
    fig = calibrated("qda").plot()
    try:
        assert len(fig.axes) == 3
        assert [ax.get_title().split()[0] for ax in fig.axes] == ["class_prob", "mu", "cov"]
    finally:
        plt.close(fig)


def test_str_is_a_table_of_the_variables():
    text = str(mismatched("bernoulli"))
    assert "feature_prob" in text and "NOT uniform" in text
    assert text.splitlines()[-1].startswith("NOT calibrated")
    assert repr(calibrated("bernoulli")).startswith("<SBCResult ok=True>")


def test_rejected_data_sets_are_counted():
    # class_alpha = 0.5 puts much of π's prior mass near the corners: on 6 rows a class is
    # empty in 45 % of the data sets (2 E[p^6] under Beta(0.5, 0.5)); they are drawn again.
    rng = np.random.default_rng(0)
    est = MultinomialNB(class_alpha=0.5, **CONJUGATE).fit(rng.poisson(2, (6, 2)), [0, 1] * 3)
    result = sbc(est, n_simulations=20, random_seed=0, max_retries=200)
    assert 5 <= result.rejected <= 40
    with pytest.raises(ValueError, match="max_retries: more than 0 simulated data sets"):
        sbc(est, n_simulations=20, random_seed=0, max_retries=0)


def test_the_estimator_is_not_modified():
    est = fitted("categorical")
    params, idata = est.get_params(), est.idata_
    sbc(est, n_simulations=3, random_seed=0)
    assert est.get_params() == params
    assert est.idata_ is idata


def test_sbc_is_exported_lazily():
    assert bayesgen.sbc is sbc
    assert bayesgen.SBCResult is SBCResult


# -- bad arguments ------------------------------------------------------------------------


def test_unfitted_estimator_is_refused():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        sbc(MultinomialNB())


def test_prior_alpha_is_refused_for_gda():
    with pytest.raises(ValueError, match="prior_alpha: defined for the naive Bayes models"):
        sbc(fitted("gda"), prior_alpha=1.0)


def test_simulation_prior_is_refused_for_naive_bayes():
    with pytest.raises(ValueError, match="simulation_prior: defined for GDA and QDA"):
        sbc(fitted("bernoulli"), simulation_prior=NormalInverseWishart())


def test_prior_alpha_must_be_positive():
    with pytest.raises(ValueError, match="prior_alpha: expected a positive number; got 0"):
        sbc(fitted("bernoulli"), prior_alpha=0)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"n_simulations": 0}, ValueError, "n_simulations: expected an integer >= 1; got 0"),
        ({"n_simulations": 2.5}, TypeError, "n_simulations: expected an integer >= 1; got 2.5"),
        ({"n_bins": 101}, ValueError, "n_bins: expected at most n_draws \\+ 1 = 100; got 101"),
        ({"level": 1.5}, ValueError, "level: expected a number in \\(0, 1\\); got 1.5"),
    ],
)
def test_bad_arguments_are_refused(options, error, message):
    with pytest.raises(error, match=message):
        sbc(fitted("bernoulli"), **options)


def test_a_hyperprior_on_lambda_is_refused():
    est = MultinomialNB(alpha_prior=(2.0, 1.0), **CONJUGATE).fit(*_data("multinomial"))
    with pytest.raises(ValueError, match="estimator: SBC draws θ from the prior at a fixed λ"):
        sbc(est)


def test_alpha_chosen_by_the_evidence_is_held_at_the_fitted_value():
    # Words with different rates in the two classes: the evidence has an interior maximum.
    y = np.arange(N_ROWS) % 2
    X = np.random.default_rng(5).poisson(np.array([[4.0, 1.0, 0.5], [0.5, 1.0, 4.0]])[y])
    est = MultinomialNB(alpha="evidence", **CONJUGATE).fit(X, y)
    assert 0 < est.alpha_ < 1e3
    result = sbc(est, n_simulations=60, random_seed=4)
    assert result.ok, str(result)
    assert est.alpha == "evidence"


def test_lkj_covariance_prior_is_refused():
    est = GaussianDiscriminantAnalysis(**CONJUGATE).fit(*_data("gda"))
    est.set_params(cov_prior="lkj", inference="nuts")
    with pytest.raises(ValueError, match="cov_prior='lkj', which has no exact prior draws"):
        sbc(est)


def test_nuts_needs_as_many_draws_as_ranks():
    est = BernoulliNB(**CONJUGATE).fit(*_data("bernoulli"))
    est.set_params(inference="nuts", draws=40, chains=2)
    with pytest.raises(ValueError, match="n_draws: expected at most the estimator's draws x"):
        sbc(est, n_draws=99)


# -- NUTS -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_sbc_of_nuts_bernoulli_is_ok():
    X, y = _data("bernoulli")
    est = BernoulliNB(
        inference="nuts",
        draws=200,
        tune=300,
        chains=1,
        cores=1,
        compute_map=False,
        prior_draws=0,
        random_seed=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # draws * chains below compare's ess_min
        est.fit(X[:, :2], y)
        result = sbc(est, n_simulations=20, random_seed=5, n_bins=4)
    assert result.inference == "nuts"
    assert result.ok, str(result)
