"""Missing entries in a table of mixed columns (bayesgen.NaiveBayes): each block integrates
its missing entries out, so the mixed model's exact quantities are still the blocks' own
combined; the chunked fits, the report and the command line take them as the blocks do.

Expected values come from the single-block estimators fitted alone on the same entries, from
counting the NaN by hand, and from a fit on the whole table; never from the mixed model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

import bayesgen
from bayesgen import CategoricalNB, GaussianNB, NaiveBayes
from bayesgen.cli import main
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma

FAST = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
PRIOR = NormalInverseGamma(mean=[3.5, 10.0], kappa=0.5, shape=2.0, scale=[0.4, 1.5])
ISLANDS = ["Biscoe", "Dream", "Torgersen"]


def table_with_gaps(seed=0, n=30, share=0.15):
    """Two classes: two measurements and an island, ``share`` of the entries blanked at
    random (never a whole row's label)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["adelie", "gentoo"], [n // 2, n - n // 2])
    gentoo = y == "gentoo"
    table = pd.DataFrame(
        {
            "mass": np.where(gentoo, rng.normal(4.5, 0.5, n), rng.normal(3.3, 0.4, n)),
            "length": np.where(gentoo, rng.normal(11.0, 1.0, n), rng.normal(9.5, 1.2, n)),
            "island": pd.Categorical(
                np.where(gentoo, "Biscoe", rng.choice(ISLANDS, n)), categories=ISLANDS
            ),
        }
    )
    blank = rng.random(table.shape) < share
    for j, column in enumerate(table.columns):
        table.loc[blank[:, j], column] = np.nan
    return table, y


def blocks():
    return [
        ("size", GaussianNB(prior=PRIOR), ["mass", "length"]),
        ("where", "categorical", ["island"]),
    ]


def test_the_evidence_is_the_blocks_fitted_alone_on_the_same_entries():
    table, y = table_with_gaps()
    mixed = NaiveBayes(blocks(), **FAST).fit(table, y)
    numeric = GaussianNB(prior=PRIOR, **FAST).fit(table[["mass", "length"]], y)
    codes = table["island"].cat.codes.to_numpy().astype(float)
    codes[codes < 0] = np.nan
    categorical = CategoricalNB(n_categories=3, **FAST).fit(codes[:, None], y)
    counts = np.array([np.sum(y == k) for k in mixed.classes_], dtype=float)
    labels = gammaln(2.0) - gammaln(counts.sum() + 2.0) + gammaln(counts + 1.0).sum()
    expected = (
        numeric.model_.log_evidence(numeric.closed_form_)
        + categorical.model_.log_evidence(categorical.closed_form_)
        - labels
    )
    assert mixed.model_.log_evidence(mixed.closed_form_) == pytest.approx(expected, rel=1e-12)
    observed = (~table[["mass", "length"]].isna()).groupby(y).sum().to_numpy(dtype=float)
    np.testing.assert_array_equal(mixed.closed_form_["size::cell_count"].values, observed)


def test_exact_leave_one_out_with_gaps_equals_refitting_without_each_row():
    table, y = table_with_gaps(n=14)
    est = NaiveBayes(blocks(), **FAST).fit(table, y)
    refits = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refit = NaiveBayes(blocks(), **FAST).fit(table[keep], y[keep])
        refits.append(refit.posterior_predictive_proba(table.iloc[[i]])[0])
    np.testing.assert_allclose(bayesgen.loo_proba(est), np.array(refits), rtol=1e-10)


def test_chunks_with_gaps_give_the_statistics_of_one_fit():
    table, y = table_with_gaps()
    whole = NaiveBayes(blocks(), **FAST).fit(table, y)
    chunked = NaiveBayes(blocks(), **FAST)
    for rows in (slice(0, 11), slice(11, 30)):
        chunked.partial_fit(table.iloc[rows], y[rows], classes=["adelie", "gentoo"])
    for name, variable in whole.closed_form_.data_vars.items():
        if variable.dtype.kind == "f":
            np.testing.assert_allclose(
                chunked.closed_form_[name].values, variable.values, rtol=1e-12, err_msg=name
            )


def test_dask_chunks_with_gaps_give_the_statistics_of_one_fit():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    table, y = table_with_gaps()
    with dask.config.set(scheduler="synchronous"):
        chunked = NaiveBayes(blocks(), **FAST).fit(
            dd.from_pandas(table, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
        )
    whole = NaiveBayes(blocks(), **FAST).fit(table, y)
    for name, variable in whole.closed_form_.data_vars.items():
        if variable.dtype.kind == "f":
            np.testing.assert_allclose(
                chunked.closed_form_[name].values, variable.values, rtol=1e-12, err_msg=name
            )


def test_the_report_shows_the_share_missing_per_feature_and_class(tmp_path):
    from bayesgen.plotting.missing import missing_table

    table, y = table_with_gaps()
    est = NaiveBayes(blocks(), inference="conjugate", draws=100, random_seed=0).fit(table, y)
    shares = missing_table(est)
    expected = table.isna().groupby(y).mean()
    for feature, column in (("size::mass", "mass"), ("where::island", "island")):
        for label in est.classes_:
            assert shares.loc[feature, label] == pytest.approx(expected.loc[label, column])
    index = bayesgen.report(est, tmp_path / "report")
    assert (index.parent / "missing.png").is_file()
    assert "Missing entries" in index.read_text(encoding="utf-8")


def test_the_command_line_reads_empty_cells_and_named_fields_as_missing(tmp_path, capsys):
    table, y = table_with_gaps()
    csv = table.assign(species=y)
    csv["island"] = csv["island"].astype(object).where(csv["island"].notna(), "NA")
    path = tmp_path / "birds.csv"
    csv.to_csv(path, index=False)  # a missing number is an empty cell, an island "NA"
    model = tmp_path / "birds.nc"
    options = ["--target", "species", "--inference", "conjugate", "--output", str(model)]
    assert main(["fit", "mixed", str(path), *options, "--na-values", "NA", "--quiet"]) == 0
    est = bayesgen.load(model)
    observed = (~table.isna()).groupby(y).sum()
    np.testing.assert_array_equal(
        est.closed_form_["categorical::feature_count"].values.sum(axis=-1)[:, 0],
        observed["island"].to_numpy(dtype=float),
    )
    assert main(["predict", str(model), str(path), "--na-values", "NA"]) == 0
    assert "p_gentoo" in capsys.readouterr().out


def test_a_count_block_beside_a_text_column_takes_its_missing_entries():
    texts = ["win a free prize", "free prize now", "lunch at noon", "see you at lunch"] * 3
    table = pd.DataFrame({"text": texts, "digits": [4.0, np.nan, 0.0, 1.0] * 3})
    y = np.array(["spam", "spam", "ham", "ham"] * 3)
    blocks = [("words", "multinomial", "text"), ("digits", "poisson", ["digits"])]
    est = NaiveBayes(blocks, **FAST).fit(table, y)
    observed = (~table["digits"].isna()).groupby(y).sum()
    np.testing.assert_array_equal(
        est.closed_form_["digits::cell_count"].values[:, 0],
        observed.loc[est.classes_].to_numpy(dtype=float),
    )
    assert np.isfinite(est.predict_proba(table)).all()
    assert np.isfinite(bayesgen.loo_proba(est)).all()


@pytest.mark.parametrize("model", ["gda", "qda"])
def test_a_gibbs_fit_with_missing_entries_saves_and_loads(tmp_path, model):
    from bayesgen import GaussianDiscriminantAnalysis, QuadraticDiscriminantAnalysis

    cls = GaussianDiscriminantAnalysis if model == "gda" else QuadraticDiscriminantAnalysis
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (30, 3)), rng.normal(2, 1, (30, 3))]
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.repeat(["a", "b"], 30)
    est = cls(inference="conjugate", draws=200, chains=2, random_seed=0).fit(X, y)
    loaded = bayesgen.load(est.save(tmp_path / f"{model}.nc"))
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    assert loaded.closed_form_.attrs["missing_fit"] == "gibbs"
