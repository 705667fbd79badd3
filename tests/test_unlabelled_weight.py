"""λ_u, the weight of the unlabelled rows, chosen by exact leave-one-out of the labelled rows.

The expected values come from outside the code under test: supervised refits without each
row, and the Dirichlet-multinomial predictive written out with scipy's gammaln from the fit's
counts; the choices are checked against data built to make unlabelled rows help or hurt.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import gammaln, logsumexp

from bayesgen import MultinomialNB
from bayesgen.inference.unlabelled_weight import (
    DEFAULT_GRID,
    choose_unlabelled_weight,
    fitted_loo_log_proba,
)

FAST = {
    "alpha": 2.0,
    "inference": "conjugate",
    "draws": 20,
    "tune": 5,
    "chains": 1,
    "prior_draws": 0,
    "compute_map": False,
    "random_seed": 0,
}
N_LABELLED, N_UNLABELLED, LENGTH, N_WORDS = 20, 200, 20, 100


def two_topics(seed: int, *, misfit: bool):
    """Twenty labelled documents of two classes whose word probabilities differ moderately,
    and 200 unlabelled ones: of the same two classes, or (misfit) of a third word
    distribution that neither class has."""
    rng = np.random.default_rng(seed)
    base = rng.dirichlet(np.ones(N_WORDS))
    theta = np.array([rng.dirichlet(base * 300.0) for _ in range(2)])
    y_labelled = np.tile([0, 1], N_LABELLED // 2)
    X_labelled = np.array([rng.multinomial(LENGTH, theta[k]) for k in y_labelled])
    if misfit:
        elsewhere = rng.dirichlet(np.ones(N_WORDS))
        X_unlabelled = rng.multinomial(LENGTH, elsewhere, size=N_UNLABELLED)
    else:
        X_unlabelled = np.array(
            [rng.multinomial(LENGTH, theta[k]) for k in rng.integers(0, 2, N_UNLABELLED)]
        )
    X = np.vstack([X_labelled, X_unlabelled])
    y = np.r_[y_labelled, np.full(N_UNLABELLED, -1)]
    return X, y


def small_data(seed=0):
    X, y = two_topics(seed, misfit=False)
    keep = np.r_[np.arange(8), N_LABELLED + np.arange(30)]
    return X[keep], y[keep]


def dirichlet_multinomial_loo(est, X, codes):
    """log p(y = k | x_i, D_{-i}) by hand: the fit's class and word counts less row i's, the
    Dirichlet-multinomial predictive of the counts (its multinomial coefficient, the same for
    every class, left out) and the Dirichlet(class_alpha) predictive of the class."""
    class_count = est.closed_form_["class_count"].values
    word_count = est.closed_form_["feature_count"].values
    alpha, class_alpha = FAST["alpha"], 1.0
    n_classes = class_count.size
    joint = np.empty((X.shape[0], n_classes))
    for i, x in enumerate(X):
        for k in range(n_classes):
            own = k == codes[i]
            counts = word_count[k] - (x if own else 0) + alpha
            rows = class_count[k] - own
            joint[i, k] = (
                np.log(rows + class_alpha)
                + gammaln(counts.sum())
                - gammaln(counts.sum() + x.sum())
                + np.sum(gammaln(counts + x) - gammaln(counts))
            )
    return joint - logsumexp(joint, axis=1, keepdims=True)


def test_at_zero_weight_the_score_is_the_supervised_leave_one_out_by_refits():
    X, y = small_data()
    labelled = np.flatnonzero(y != -1)
    est = MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight=0.0)
    log_proba, codes = fitted_loo_log_proba(est)
    for position, row in enumerate(labelled):
        others = np.delete(labelled, position)
        refit = MultinomialNB(**FAST).fit(X[others], y[others])
        expected = np.log(refit.posterior_predictive_proba(X[[row]])[0])
        assert_allclose(log_proba[position], expected, rtol=1e-10)
    assert codes.tolist() == y[labelled].tolist()


def test_with_unlabelled_rows_the_score_leaves_the_row_out_of_the_completed_statistics():
    X, y = small_data()
    labelled = np.flatnonzero(y != -1)
    est = MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight=0.3)
    log_proba, codes = fitted_loo_log_proba(est)
    assert_allclose(log_proba, dirichlet_multinomial_loo(est, X[labelled], codes), rtol=1e-10)


def test_unlabelled_rows_from_elsewhere_get_a_small_weight():
    for seed in (0, 1):
        X, y = two_topics(seed, misfit=True)
        choice = choose_unlabelled_weight(MultinomialNB(**FAST), X, y, unlabelled_label=-1)
        assert choice.best <= 0.03, choice.table()
        assert choice.elpd[0] > choice.elpd[-1] + 10  # λ_u = 1 is far worse than none


def test_unlabelled_rows_of_the_same_classes_get_a_large_weight():
    for seed in (0, 2):
        X, y = two_topics(seed, misfit=False)
        choice = choose_unlabelled_weight(MultinomialNB(**FAST), X, y, unlabelled_label=-1)
        assert choice.best >= 0.3, choice.table()
        assert choice.elpd[-1] > choice.elpd[0] + 2  # λ_u = 1 beats the labelled rows alone


def test_the_chosen_fit_is_refitted_with_the_estimators_own_settings():
    X, y = small_data()
    choice = choose_unlabelled_weight(MultinomialNB(**FAST), X, y, unlabelled_label=-1)
    assert choice.grid.tolist() == list(DEFAULT_GRID)
    assert choice.estimator.closed_form_.attrs["unlabelled_weight"] == choice.best
    assert choice.estimator.draws == FAST["draws"]
    direct = MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight=choice.best)
    assert_allclose(
        choice.estimator.closed_form_["feature_count"], direct.closed_form_["feature_count"]
    )
    table = choice.table()
    assert table.index.name == "unlabelled_weight" and table["se_diff"].min() == 0.0
    assert table["elpd_loo"].idxmax() == choice.best


def test_without_refit_the_grid_fit_is_returned_with_its_single_draw():
    X, y = small_data()
    choice = choose_unlabelled_weight(
        MultinomialNB(**FAST), X, y, unlabelled_label=-1, grid=[0.0, 0.1], refit=False
    )
    assert choice.estimator.draws == 1
    assert choice.estimator.closed_form_.attrs["unlabelled_weight"] == choice.best


def test_the_choice_does_not_depend_on_the_order_of_the_grid():
    X, y = small_data()
    forward, backward = (
        choose_unlabelled_weight(
            MultinomialNB(**FAST), X, y, unlabelled_label=-1, grid=grid, refit=False
        )
        for grid in ([0.0, 0.1, 1.0], [1.0, 0.1, 0.0])
    )
    assert forward.best == backward.best
    assert_allclose(forward.elpd, backward.elpd[::-1])


@pytest.mark.parametrize("grid", [[], [0.5, 1.5], [-0.1]])
def test_a_grid_outside_zero_one_is_refused(grid):
    X, y = small_data()
    with pytest.raises(ValueError, match="grid"):
        choose_unlabelled_weight(MultinomialNB(**FAST), X, y, unlabelled_label=-1, grid=grid)


def test_a_fit_with_sample_weight_is_refused():
    X, y = small_data()
    est = MultinomialNB(**FAST).fit(
        X, y, unlabelled_label=-1, sample_weight=np.full(y.size, 2.0), unlabelled_weight=0.5
    )
    with pytest.raises(ValueError, match="sample_weight"):
        fitted_loo_log_proba(est)


# -- fit(..., unlabelled_weight="loo") -----------------------------------------------------------


def test_fit_with_loo_is_the_fit_at_the_weight_the_chooser_picks():
    X, y = two_topics(0, misfit=True)  # unlabelled rows from elsewhere: a small λ_u wins
    choice = choose_unlabelled_weight(MultinomialNB(**FAST), X, y, unlabelled_label=-1)
    direct = MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight=choice.best)
    loo = MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight="loo")
    assert choice.best < 1.0  # not the default fit
    for name, variable in direct.closed_form_.data_vars.items():
        assert_array_equal(loo.closed_form_[name].values, variable.values)
    for name, draws in direct.idata_["posterior"].data_vars.items():
        assert_array_equal(loo.idata_["posterior"][name].values, draws.values)
    attrs = loo.closed_form_.attrs
    assert attrs["unlabelled_weight"] == choice.best
    assert attrs["unlabelled_weight_rule"] == "loo"
    assert_array_equal(attrs["unlabelled_weight_grid"], DEFAULT_GRID)
    assert_allclose(attrs["unlabelled_weight_elpd"], choice.elpd, rtol=1e-12)
    assert "unlabelled_weight_rule" not in direct.closed_form_.attrs


def test_fit_with_loo_and_every_row_labelled_is_the_supervised_fit():
    X, y = small_data()
    labelled = y != -1
    plain = MultinomialNB(**FAST).fit(X[labelled], y[labelled])
    loo = MultinomialNB(**FAST).fit(X[labelled], y[labelled], unlabelled_weight="loo")
    for name, variable in plain.closed_form_.data_vars.items():
        assert_array_equal(loo.closed_form_[name].values, variable.values)
    assert "unlabelled_weight_rule" not in loo.closed_form_.attrs


def test_a_rule_other_than_loo_is_refused_naming_what_was_expected_and_what_came():
    X, y = small_data()
    with pytest.raises(
        ValueError,
        match=r"^unlabelled_weight: expected a number in \[0, 1\] or 'loo' .*; got 'evidence'\.$",
    ):
        MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1, unlabelled_weight="evidence")


def test_loo_with_sample_weight_is_refused_before_any_fit():
    X, y = small_data()
    with pytest.raises(ValueError, match=r"^sample_weight: unlabelled_weight='loo' scores"):
        MultinomialNB(**FAST).fit(
            X, y, unlabelled_label=-1, sample_weight=np.ones(y.size), unlabelled_weight="loo"
        )
