"""The Palmer penguins: the data set's loader, and the mixed naive Bayes on real mixed columns."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

import bayesgen
from bayesgen.input.datasets import PENGUIN_CATEGORIES, PENGUIN_MEASUREMENTS, load_penguins

OPTIONS = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
CATEGORIES = list(PENGUIN_CATEGORIES)
MEASUREMENTS = list(PENGUIN_MEASUREMENTS)


@pytest.fixture(scope="module")
def penguins() -> tuple[pd.DataFrame, np.ndarray]:
    return load_penguins()


@pytest.fixture(scope="module")
def gaussian_prior(penguins):
    """The measurements' default prior fitted to all rows, frozen: the default is centred on
    the rows' mean and variance, so without it a refit without row i would move the prior."""
    X, y = penguins
    return bayesgen.GaussianNB(**OPTIONS).fit(X[MEASUREMENTS], y).prior_


@pytest.fixture(scope="module")
def blocks(gaussian_prior) -> list[tuple]:
    return [
        ("categorical", "categorical", CATEGORIES),
        ("gaussian", bayesgen.GaussianNB(prior=gaussian_prior), MEASUREMENTS),
    ]


@pytest.fixture(scope="module")
def mixed(penguins, blocks):
    X, y = penguins
    return bayesgen.NaiveBayes(blocks, **OPTIONS).fit(X, y)


# --------------------------------------------------------------------------------------------
# The loader.


def test_penguins_without_missing_entries_are_the_333_of_the_published_counts(penguins):
    X, y = penguins
    # Horst, Hill and Gorman's complete cases: 146 Adelie, 68 Chinstrap, 119 Gentoo.
    assert X.shape == (333, 6) and y.shape == (333,)
    species, counts = np.unique(y, return_counts=True)
    assert dict(zip(species.tolist(), counts.tolist(), strict=True)) == {
        "Adelie": 146,
        "Chinstrap": 68,
        "Gentoo": 119,
    }
    assert not X.isna().any().any()
    assert list(X.index) == list(range(333))


def test_penguin_columns_are_two_categories_then_four_measurements(penguins):
    X, _ = penguins
    assert list(X.columns) == [*CATEGORIES, *MEASUREMENTS]
    assert list(X["island"].cat.categories) == ["Biscoe", "Dream", "Torgersen"]
    assert list(X["sex"].cat.categories) == ["female", "male"]
    assert (X[MEASUREMENTS].dtypes == np.float64).all()
    assert "year" not in X.columns


def test_penguins_with_missing_entries_keep_all_344_rows_with_nan():
    X, y = load_penguins(dropna=False)
    assert X.shape == (344, 6) and y.shape == (344,)
    # Two penguins were not measured; nine more have no recorded sex.
    assert X[MEASUREMENTS].isna().sum().tolist() == [2, 2, 2, 2]
    assert int(X["sex"].isna().sum()) == 11
    assert isinstance(X["sex"].dtype, pd.CategoricalDtype)


# --------------------------------------------------------------------------------------------
# The mixed model on them.


def test_mixed_model_predicts_held_out_species_better_than_either_half_alone(penguins, mixed):
    X, y = penguins
    models = {
        "mixed": mixed,
        "measurements": bayesgen.GaussianNB(**OPTIONS).fit(X[MEASUREMENTS], y),
        "categories": bayesgen.NaiveBayes(**OPTIONS).fit(X[CATEGORIES], y),
    }
    table = bayesgen.compare_models(models)
    assert table.index[0] == "mixed"
    # Not only ahead: ahead by more than two standard errors of each difference.
    others = table.drop(index="mixed")
    assert (others["elpd_diff"] > 2 * others["se_diff"]).all(), table


@pytest.mark.parametrize("row", [0, 150, 332])
def test_exact_leave_one_out_is_the_refit_without_the_row(penguins, blocks, mixed, row):
    X, y = penguins
    keep = np.arange(len(y)) != row
    refit = bayesgen.NaiveBayes(blocks, **OPTIONS).fit(X[keep], y[keep])
    assert list(refit.classes_) == list(mixed.classes_)
    refit_proba = refit.posterior_predictive_proba(X.iloc[[row]])[0]
    loo_proba = bayesgen.loo_proba(mixed)[row]
    # Compared as logs: a species the row rules out has a probability of 1e-13 or less.
    np.testing.assert_allclose(np.log(loo_proba), np.log(refit_proba), rtol=0, atol=1e-10)


def test_evidence_is_the_blocks_evidences_with_the_class_term_once(penguins, mixed):
    X, y = penguins
    measurements = bayesgen.GaussianNB(**OPTIONS).fit(X[MEASUREMENTS], y)
    categories = bayesgen.NaiveBayes(**OPTIONS).fit(X[CATEGORIES], y)
    # log p(y) under the class probabilities' Dirichlet(1, 1, 1), integrated out.
    _, counts = np.unique(y, return_counts=True)
    alpha, n_classes = 1.0, counts.size
    class_term = (
        gammaln(n_classes * alpha)
        - gammaln(counts.sum() + n_classes * alpha)
        + np.sum(gammaln(counts + alpha) - gammaln(alpha))
    )

    def evidence(est):
        return est.model_.log_evidence(est.closed_form_)

    expected = evidence(measurements) + evidence(categories) - class_term
    assert evidence(mixed) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------------
# blocks="auto" on them.


def test_auto_plan_takes_the_whole_number_measurements_as_gaussian_not_counts(penguins):
    X, _ = penguins
    plan = bayesgen.NaiveBayes().plan(X)
    # Flipper length (mm) and body mass (g) are whole numbers, but no counts: no 0, means of
    # about 200 and 4,200, variances far from their means.
    assert dict(zip(plan["column"], plan["model"], strict=True)) == {
        "island": "categorical",
        "sex": "categorical",
        "bill_length_mm": "gaussian",
        "bill_depth_mm": "gaussian",
        "flipper_length_mm": "gaussian",
        "body_mass_g": "gaussian",
    }


def test_auto_model_is_the_categorical_block_beside_the_gaussian_block(penguins):
    X, y = penguins
    auto = bayesgen.NaiveBayes(**OPTIONS).fit(X, y)
    declared = bayesgen.NaiveBayes(
        [("where", "categorical", CATEGORIES), ("size", "gaussian", MEASUREMENTS)], **OPTIONS
    ).fit(X, y)
    assert auto.model_.log_evidence(auto.closed_form_) == pytest.approx(
        declared.model_.log_evidence(declared.closed_form_), rel=1e-12
    )
