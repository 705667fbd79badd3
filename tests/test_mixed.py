"""The mixed-column model (bayesgen.NaiveBayes, bayesgen.families.mixed).

A mixed model is the class prior times blocks on their own columns, so its exact quantities
must be those of the blocks fitted alone, combined as the factorisation says: the evidence and
the log predictive are the sums of the single-block models' less the class term counted more
than once. The expectations come from the single-block estimators, SciPy's Γ function and
refits without a row; never from the mixed model's own code. All but one test use exact
conjugate draws.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, softmax

import bayesgen
from bayesgen import CategoricalNB, GaussianNB, MultinomialNB, NaiveBayes, PoissonNB
from bayesgen.estimators.mixed import auto_blocks
from bayesgen.families.gaussian_nb import GaussianNaiveBayesFamily
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma

FAST = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
ISLANDS = ["Biscoe", "Dream", "Torgersen"]
#: Priors given in full, so that a refit without a row has the same prior (exact LOO).
NUMERIC_PRIOR = NormalInverseGamma(mean=[3.5, 10.0], kappa=0.5, shape=2.0, scale=[0.4, 1.5])
RATE_PRIOR = (2.0, 1.0)


def penguin_like(seed=0, n=(14, 10)):
    """Two classes: two measurements, an island (pandas category with all three islands),
    a count and a flag."""
    rng = np.random.default_rng(seed)
    size = sum(n)
    y = np.repeat(["adelie", "gentoo"], n)
    gentoo = y == "gentoo"
    table = pd.DataFrame(
        {
            "mass": np.where(gentoo, rng.normal(4.5, 0.5, size), rng.normal(3.3, 0.4, size)),
            "length": np.where(gentoo, rng.normal(11.0, 1.0, size), rng.normal(9.5, 1.2, size)),
            "island": pd.Categorical(
                np.where(
                    gentoo, rng.choice(ISLANDS, size, p=[0.8, 0.1, 0.1]), rng.choice(ISLANDS, size)
                ),
                categories=ISLANDS,
            ),
            "eggs": np.where(gentoo, rng.poisson(3.0, size), rng.poisson(1.0, size)),
        }
    )
    return table, y


def given_blocks():
    return [
        ("size", GaussianNB(prior=NUMERIC_PRIOR), ["mass", "length"]),
        ("where", "categorical", ["island"]),
        ("eggs", PoissonNB(rate_prior=RATE_PRIOR), ["eggs"]),
    ]


def label_log_evidence(y, classes, class_alpha=1.0) -> float:
    """log p(y | a) of a label sequence under π ~ Dirichlet(a), written from Γ functions."""
    counts = np.array([np.sum(y == label) for label in classes], dtype=float)
    k = len(classes)
    return float(
        gammaln(k * class_alpha)
        - gammaln(counts.sum() + k * class_alpha)
        + (gammaln(counts + class_alpha) - gammaln(class_alpha)).sum()
    )


def single_block_fits(table, y):
    """The three blocks fitted alone by their own estimators (island as integer codes)."""
    numeric = GaussianNB(prior=NUMERIC_PRIOR, **FAST).fit(table[["mass", "length"]], y)
    codes = table[["island"]].apply(lambda c: c.cat.codes).to_numpy()
    categorical = CategoricalNB(n_categories=3, **FAST).fit(codes, y)
    counts = PoissonNB(rate_prior=RATE_PRIOR, **FAST).fit(table[["eggs"]], y)
    return numeric, (categorical, codes), counts


# --------------------------------------------------------------------------------------------
# The plan.


def test_auto_proposes_a_block_per_column_type_and_one_per_text_column():
    table = pd.DataFrame(
        {
            "mass": [3.1, 4.2, 3.9],
            "island": ["Dream", "Biscoe", "Dream"],
            "eggs": [2, 0, 5],
            "banded": [True, False, True],
            "colour": pd.Categorical(["red", "blue", "red"]),
            "note": ["seen near the shore today", "a big one here", "two of them at dusk"],
        }
    )
    assert auto_blocks(table) == [
        ("gaussian", "gaussian", ["mass"]),
        ("categorical", "categorical", ["island", "colour"]),
        ("poisson", "poisson", ["eggs"]),
        ("bernoulli", "bernoulli", ["banded"]),
        ("note", "multinomial", "note"),
    ]
    plan = NaiveBayes().plan(table)
    assert plan.set_index("column").loc["note", "encoding"] == "text"
    assert plan.set_index("column").loc["eggs", "model"] == "poisson"
    overridden = auto_blocks(table, overrides={"eggs": "categorical"})
    assert ("categorical", "categorical", ["island", "eggs", "colour"]) in overridden


def test_the_fitted_blocks_and_their_columns_are_reported():
    table, y = penguin_like()
    est = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    assert [(name, type(model).__name__, cols) for name, model, cols in est.blocks_] == [
        ("size", "GaussianNB", ["mass", "length"]),
        ("where", "CategoricalNB", ["island"]),
        ("eggs", "PoissonNB", ["eggs"]),
    ]
    assert est.n_features_in_ == 4
    assert est.feature_names_in_.tolist() == ["mass", "length", "island", "eggs"]
    assert {"size::mu", "where::feature_prob", "eggs::feature_rate"} <= set(
        est.closed_form_.data_vars
    )


# --------------------------------------------------------------------------------------------
# Exact quantities are the blocks' combined.


def test_the_evidence_is_the_blocks_sum_with_the_labels_counted_once():
    table, y = penguin_like()
    est = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    numeric, (categorical, _), counts = single_block_fits(table, y)
    blocks = [m.model_.log_evidence(m.closed_form_) for m in (numeric, categorical, counts)]
    expected = sum(blocks) - 2 * label_log_evidence(y, est.classes_)
    assert est.model_.log_evidence(est.closed_form_) == pytest.approx(expected, rel=1e-12)


def test_the_exact_predictive_is_the_product_of_the_blocks_over_the_class_prior_twice():
    table, y = penguin_like()
    test_table, _ = penguin_like(seed=1, n=(5, 5))
    est = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    numeric, (categorical, _), counts = single_block_fits(table, y)
    test_codes = test_table[["island"]].apply(lambda c: c.cat.codes).to_numpy()
    log_p = (
        np.log(numeric.posterior_predictive_proba(test_table[["mass", "length"]]))
        + np.log(categorical.posterior_predictive_proba(test_codes))
        + np.log(counts.posterior_predictive_proba(test_table[["eggs"]]))
        - 2 * np.log(numeric.class_prior_)
    )
    np.testing.assert_allclose(
        est.posterior_predictive_proba(test_table), softmax(log_p, axis=1), rtol=1e-10
    )


def test_exact_leave_one_out_equals_refitting_without_each_row():
    table, y = penguin_like(n=(8, 6))
    est = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    refits = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refit = NaiveBayes(given_blocks(), **FAST).fit(table[keep], y[keep])
        refits.append(refit.posterior_predictive_proba(table.iloc[[i]])[0])
    np.testing.assert_allclose(bayesgen.loo_proba(est), np.array(refits), rtol=1e-10)


def test_psis_loo_of_the_pointwise_log_likelihood_is_close_to_the_exact_elpd():
    import arviz as az

    table, y = penguin_like()
    est = NaiveBayes(given_blocks(), inference="conjugate", draws=1000, random_seed=0).fit(table, y)
    psis = az.loo(est.idata_)
    exact = bayesgen.leave_one_out(est, method="exact")
    own = exact.log_joint[np.arange(len(y)), exact.y_codes] if hasattr(exact, "log_joint") else None
    assert np.isfinite(psis.elpd)
    if own is not None:
        assert psis.elpd == pytest.approx(own.sum(), abs=3 * psis.se / np.sqrt(len(y)) + 0.5)


# --------------------------------------------------------------------------------------------
# compare() and SBC.


def test_compare_agrees_with_exact_draws_in_49_of_50_seeds():
    table, y = penguin_like()
    failed = []
    for seed in range(50):
        est = NaiveBayes(
            given_blocks(), inference="conjugate", draws=500, chains=2, random_seed=seed
        )
        result = bayesgen.compare(est.fit(table, y))
        if not result.ok:
            failed.append(seed)
    assert len(failed) <= 1, failed
    assert set(result.table["variable"]) == {
        "class_prob",
        "size::mu",
        "size::var",
        "where::feature_prob",
        "eggs::feature_rate",
    }


@pytest.mark.parametrize("how", ["shift", "halve"])
def test_compare_fails_a_wrong_posterior_of_one_block(monkeypatch, how):
    exact = GaussianNaiveBayesFamily.conjugate_draws

    def wrong(self, estimates, rng, sample_shape, dtype, *, posterior):
        draws = exact(self, estimates, rng, sample_shape, dtype, posterior=posterior)
        if posterior:
            dims, values = draws["mu"]
            axes = tuple(range(len(sample_shape)))
            mean, sd = values.mean(axis=axes), values.std(axis=axes)
            moved = values + sd if how == "shift" else mean + 0.5 * (values - mean)
            draws["mu"] = (dims, moved.astype(dtype))
        return draws

    monkeypatch.setattr(GaussianNaiveBayesFamily, "conjugate_draws", wrong)
    table, y = penguin_like()
    est = NaiveBayes(given_blocks(), inference="conjugate", draws=500, chains=2, random_seed=0)
    result = bayesgen.compare(est.fit(table, y))
    assert not result.agrees
    rows = result.table.set_index("variable")["agrees"]
    assert not rows["size::mu"].any()
    assert rows["class_prob"].all() and rows["where::feature_prob"].all()


def test_sbc_finds_the_mixed_posterior_calibrated():
    table, y = penguin_like()
    est = NaiveBayes(**FAST).fit(table, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert result.ok, str(result)
    assert {"class_prob", "gaussian::mu", "categorical::feature_prob"} <= set(result.p_values.index)


def test_sbc_fails_a_25_fold_prior_mismatch_in_one_block(monkeypatch):
    exact = GaussianNaiveBayesFamily.conjugate_draws

    def mismatched(self, estimates, rng, sample_shape, dtype, *, posterior):
        if not posterior:
            estimates = estimates.assign(prior_scale=estimates["prior_scale"] * 25.0)
        return exact(self, estimates, rng, sample_shape, dtype, posterior=posterior)

    monkeypatch.setattr(GaussianNaiveBayesFamily, "conjugate_draws", mismatched)
    table, y = penguin_like()
    est = NaiveBayes(**FAST).fit(table, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert not result.ok
    assert result.p_values["gaussian::var"] < result.level


# --------------------------------------------------------------------------------------------
# Inputs: text, arrays, sparse matrices, chunks, weights, files.


def test_a_text_column_becomes_a_bag_of_words_block_with_its_vectorizer():
    from sklearn.feature_extraction.text import CountVectorizer

    table = pd.DataFrame(
        {
            "text": ["win a free prize", "free prize now", "lunch at noon", "see you at lunch"],
            "length": [4.0, 3.0, 3.0, 4.0],
        }
    )
    y = np.array(["spam", "spam", "ham", "ham"])
    blocks = [
        ("words", MultinomialNB(alpha=0.5), "text", CountVectorizer(stop_words=["a", "at"])),
        ("length", "gaussian", ["length"]),
    ]
    est = NaiveBayes(blocks, **FAST).fit(table, y)
    words = est.closed_form_["words::feature"].values.tolist()
    assert words == ["free", "lunch", "noon", "now", "prize", "see", "win", "you"]
    alone = MultinomialNB(alpha=0.5, **FAST).fit(
        CountVectorizer(stop_words=["a", "at"]).fit_transform(table["text"]), y
    )
    np.testing.assert_allclose(
        est.closed_form_["words::feature_prob"].values, alone.closed_form_["feature_prob"].values
    )


def test_blocks_by_position_on_an_array_and_on_a_sparse_matrix():
    rng = np.random.default_rng(0)
    counts = rng.poisson(2.0, (20, 4)).astype(float)
    real = rng.normal(size=(20, 2))
    y = np.repeat(["a", "b"], 10)
    X = np.hstack([counts, real])
    blocks = [("words", "multinomial", range(4)), ("real", "gaussian", slice(4, 6))]
    dense = NaiveBayes(blocks, **FAST).fit(X, y)
    alone = MultinomialNB(**FAST).fit(counts, y)
    np.testing.assert_allclose(
        dense.closed_form_["words::feature_prob"].values, alone.closed_form_["feature_prob"].values
    )
    sparse = NaiveBayes(blocks, **FAST).fit(sp.csr_array(X), y)
    np.testing.assert_allclose(
        sparse.predict_proba(sp.csr_array(X)), dense.predict_proba(X), rtol=1e-12
    )


def test_partial_fit_on_chunks_equals_one_fit():
    table, y = penguin_like()
    whole = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    chunked = NaiveBayes(given_blocks(), **FAST)
    for rows in (slice(0, 9), slice(9, 24)):
        chunked.partial_fit(table.iloc[rows], y[rows], classes=["adelie", "gentoo"])
    for name, variable in whole.closed_form_.data_vars.items():
        if variable.dtype.kind == "f":
            np.testing.assert_allclose(
                chunked.closed_form_[name].values, variable.values, rtol=1e-12, err_msg=name
            )


def test_integer_sample_weights_equal_repeated_rows():
    table, y = penguin_like()
    weights = np.tile([1, 2, 3], 8)
    weighted = NaiveBayes(given_blocks(), **FAST).fit(table, y, sample_weight=weights)
    repeated = NaiveBayes(given_blocks(), **FAST).fit(
        table.loc[table.index.repeat(weights)], np.repeat(y, weights)
    )
    for name, variable in repeated.closed_form_.data_vars.items():
        if variable.dtype.kind == "f":
            np.testing.assert_allclose(
                weighted.closed_form_[name].values, variable.values, rtol=1e-10, err_msg=name
            )


def test_a_saved_model_loads_with_its_encodings_and_predicts_the_same(tmp_path):
    table, y = penguin_like()
    table["island"] = table["island"].astype(str)  # categories learned from strings
    est = NaiveBayes(given_blocks(), inference="conjugate", draws=100, random_seed=0).fit(table, y)
    loaded = bayesgen.load(est.save(tmp_path / "mixed.nc"))
    assert type(loaded) is NaiveBayes
    np.testing.assert_array_equal(loaded.predict_proba(table), est.predict_proba(table))
    assert [b[0] for b in loaded.get_params()["blocks"]] == ["size", "where", "eggs"]
    assert loaded.get_params()["blocks"][0][1].prior.kappa == 0.5


def test_bad_input_is_refused_naming_what_is_wrong():
    table, y = penguin_like()
    table["island"] = table["island"].astype(str)
    est = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    unseen = table.iloc[:2].assign(island=["Dream", "Anvers"])
    with pytest.raises(ValueError, match=r"island.*'Anvers'"):
        est.predict(unseen)
    with pytest.raises(ValueError, match="block 'size' names the column 'mass_g'"):
        NaiveBayes([("size", "gaussian", ["mass_g"])], **FAST).fit(table, y)
    with pytest.raises(ValueError, match="blocks"):
        NaiveBayes([("a", "gaussian", ["mass"]), ("a", "poisson", ["eggs"])], **FAST).fit(table, y)
    with pytest.raises(ValueError, match="blocks"):
        NaiveBayes([("a", "lognormal", ["mass"])], **FAST).fit(table, y)
    with pytest.raises(ValueError, match="must hold numbers"):
        NaiveBayes([("a", "gaussian", ["island"])], **FAST).fit(table, y)


# --------------------------------------------------------------------------------------------
# NUTS on the one PyMC model.


def test_nuts_on_the_mixed_pymc_model_agrees_with_the_closed_forms():
    table, y = penguin_like()
    est = NaiveBayes(
        given_blocks(), draws=500, tune=500, chains=2, random_seed=1, progressbar=False
    ).fit(table, y)
    names = {rv.name for rv in est.pymc_model().free_RVs}
    assert (
        names == {"class_prob", "size::mu", "size::var", "where::cell_rate", "eggs::feature_rate"}
        or {
            "class_prob",
            "size::mu",
            "size::var",
        }
        <= names
    )
    result = bayesgen.compare(est)
    assert result.ok, result.table


# --------------------------------------------------------------------------------------------
# Dask: the encodings fixed from the dtypes, the statistics reduced chunk by chunk.


def test_a_dask_dataframe_gives_the_statistics_of_the_whole_table():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    table, y = penguin_like()
    with dask.config.set(scheduler="synchronous"):
        chunked = NaiveBayes(given_blocks(), **FAST).fit(
            dd.from_pandas(table, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
        )
    whole = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    assert chunked.closed_form_.attrs["dask_chunks"] == 3
    for name, variable in whole.closed_form_.data_vars.items():
        if variable.dtype.kind == "f":
            np.testing.assert_allclose(
                chunked.closed_form_[name].values, variable.values, rtol=1e-12, err_msg=name
            )


def test_dask_refuses_a_category_column_whose_categories_it_cannot_know_beforehand():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    table, y = penguin_like()
    strings = table.assign(island=table["island"].astype(str))
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="categorize"):
        NaiveBayes(given_blocks(), **FAST).fit(
            dd.from_pandas(strings, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
        )


# --------------------------------------------------------------------------------------------
# A full-covariance block beside naive ones; simulation; model comparison.


def test_a_gda_block_beside_a_categorical_one_sums_its_evidence():
    from bayesgen import GaussianDiscriminantAnalysis

    table, y = penguin_like()
    blocks = [("shape", "gda", ["mass", "length"]), ("where", "categorical", ["island"])]
    est = NaiveBayes(blocks, **FAST).fit(table, y)
    gda = GaussianDiscriminantAnalysis(**FAST).fit(table[["mass", "length"]], y)
    codes = table[["island"]].apply(lambda c: c.cat.codes).to_numpy()
    categorical = CategoricalNB(n_categories=3, **FAST).fit(codes, y)
    expected = (
        gda.model_.log_evidence(gda.closed_form_)
        + categorical.model_.log_evidence(categorical.closed_form_)
        - label_log_evidence(y, est.classes_)
    )
    assert est.model_.log_evidence(est.closed_form_) == pytest.approx(expected, rel=1e-12)
    assert {"shape::mu", "shape::cov"} <= set(est.idata_["posterior"].data_vars)


def test_rows_simulated_from_the_posterior_have_each_blocks_predictive_mean():
    table, y = penguin_like()
    est = NaiveBayes(given_blocks(), inference="conjugate", draws=400, chains=1, random_seed=0)
    est.fit(table, y)
    rows = est.sample_posterior_predictive(random_seed=1)["posterior_predictive_rows"]["X"]
    simulated = rows.values.reshape(-1, len(y), rows.shape[-1])  # (draw, obs, feature)
    features = rows["feature"].values.tolist()
    adelie = y == "adelie"
    mass = simulated[:, adelie, features.index("size::mass")]
    expected_mass = est.closed_form_["size::mu"].sel({"class": "adelie"}).values[0]
    assert mass.mean() == pytest.approx(
        expected_mass, abs=4 * mass.std() / np.sqrt(mass.size) + 0.05
    )
    eggs = simulated[:, :, features.index("eggs::eggs")]
    assert np.array_equal(eggs, np.round(eggs)) and (eggs >= 0).all()
    island = simulated[:, :, features.index("where::island")]
    assert set(np.unique(island)) <= {0.0, 1.0, 2.0}


def test_compare_models_ranks_the_mixed_model_by_its_exact_leave_one_out():
    table, y = penguin_like()
    mixed = NaiveBayes(given_blocks(), **FAST).fit(table, y)
    numeric = GaussianNB(prior=NUMERIC_PRIOR, **FAST).fit(table[["mass", "length"]], y)
    ranking = bayesgen.compare_models({"mixed": mixed, "numeric": numeric}, method="exact")
    loo = bayesgen.loo_proba(mixed)
    codes = np.searchsorted(mixed.classes_, y)
    expected = np.log(loo[np.arange(len(y)), codes]).sum()
    assert ranking.loc["mixed", "elpd_loo"] == pytest.approx(expected, rel=1e-12)
    assert set(ranking["method"]) == {"exact"}


def test_every_block_model_name_is_an_estimator_whose_model_has_that_cli_name():
    from bayesgen.estimators.mixed import BLOCK_ESTIMATORS
    from bayesgen.input.columns import MODELS

    assert tuple(BLOCK_ESTIMATORS) == MODELS
    for name, estimator in BLOCK_ESTIMATORS.items():
        assert estimator().model_.cli_name == name


def test_the_mixed_family_fits_a_table_without_a_plan_by_the_auto_one():
    from bayesgen.families import family

    table, y = penguin_like()
    stats = family("mixed_nb").fit(table, y)
    assert [b.name for b in family("mixed_nb").blocks(stats)] == [
        "gaussian",
        "categorical",
        "poisson",
    ]


def test_class_alpha_by_the_evidence_is_chosen_once_from_the_class_counts():
    table, y = penguin_like(n=(21, 3))  # unequal classes: a finite a maximises p(y | a)
    est = NaiveBayes(given_blocks(), class_alpha="evidence", **FAST).fit(table, y)
    counts = np.array([np.sum(y == label) for label in est.classes_], dtype=float)
    grid = np.exp(np.linspace(np.log(1e-3), np.log(1e3), 20001))
    log_evidence = [
        gammaln(2 * a) - gammaln(counts.sum() + 2 * a) + (gammaln(counts + a) - gammaln(a)).sum()
        for a in grid
    ]
    assert est.class_alpha_ == pytest.approx(grid[int(np.argmax(log_evidence))], rel=1e-3)
    assert est.closed_form_["class_prob"].values == pytest.approx(
        (counts + est.class_alpha_) / (counts.sum() + 2 * est.class_alpha_)
    )
