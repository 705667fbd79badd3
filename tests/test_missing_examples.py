"""What the missing-value examples claim, checked on their own functions (issue 23).

examples/penguins_missing.py: keeping the 11 incomplete penguins changes the complete rows'
exact leave-one-out score by a negligible amount (they add 3 % more rows, of species the other
columns tell apart easily), and every incomplete penguin gets a finite prediction from its
observed entries; GDA fitted with the missing entries by NUTS, by Gibbs and by EM finds the
exact posterior of μ (that on the measured rows). examples/sms_metadata_missing.py: blanking
metadata keeps every row usable, dropping the incomplete rows loses against integrating the
blanks out, and the Bernoulli block on 0/1 flags with blanks is the categorical "no"/"yes"
block's model.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesgen
from bayesgen.input.datasets import load_penguins, load_toy_spam

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str):
    """The example as a module (its ``__main__`` block does not run)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def penguins():
    return load_penguins(dropna=False)


def test_penguins_keeping_incomplete_rows_changes_the_complete_rows_loo_negligibly(penguins):
    example = load_example("penguins_missing")
    X, y = penguins
    table = example.leave_one_out_on_complete_rows(X, y)
    keep, drop = table.loc[example.KEEP], table.loc[example.DROP]
    # Both score the same 333 labels: about -21 nats each; the 11 extra rows move it by
    # well under a nat in all (a NaN read as a value, or a row misaligned, moves it by more).
    assert -30 < drop["elpd_loo"] < -15
    assert abs(keep["elpd_loo"] - drop["elpd_loo"]) < 1.0
    assert max(keep["se_diff"], drop["se_diff"]) < 0.5


def test_penguins_incomplete_rows_get_finite_predictions_of_their_species(penguins):
    example = load_example("penguins_missing")
    X, y = penguins
    table = example.incomplete_predictions(X, y)
    assert len(table) == 11
    proba = table.filter(like=") LOO").to_numpy()
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)
    # The 9 that miss only their sex keep island and measurements: each species is plain.
    sex_only = (table["missing"] == "sex").to_numpy()
    assert sex_only.sum() == 9
    predicted = np.array(["Adelie", "Chinstrap", "Gentoo"])[proba.argmax(axis=1)]
    assert (predicted[sex_only] == table["species"].to_numpy()[sex_only]).all()
    assert (proba[sex_only].max(axis=1) > 0.99).all()


def test_sms_blanks_hit_about_the_share_asked_and_only_metadata():
    example = load_example("sms_metadata_missing")
    texts, _ = load_toy_spam()
    whole = example.with_metadata(list(texts))
    blanked = example.blank(whole, 0.2, seed=0)
    assert blanked["text"].notna().all()
    share = blanked[example.METADATA].isna().to_numpy().mean()
    assert 0.1 < share < 0.3  # 250 entries, each blanked with probability 0.2
    observed = blanked[example.METADATA].notna()
    assert (blanked["length"][observed["length"]] == whole["length"][observed["length"]]).all()


def test_sms_dropping_incomplete_rows_scores_below_integrating_the_blanks_out():
    example = load_example("sms_metadata_missing")
    texts, labels = load_toy_spam()
    y = np.asarray(labels)
    X = example.blank(example.with_metadata(list(texts)), 0.2, seed=0)
    complete = X[example.METADATA].notna().all(axis=1).to_numpy()
    kept = example.fit(example.BLOCKS, X, y)
    dropped = example.fit(example.BLOCKS, X[complete], y[complete])
    on_complete = bayesgen.leave_one_out(kept).pointwise[complete]
    assert np.isfinite(on_complete).all()
    assert on_complete.sum() > bayesgen.leave_one_out(dropped).pointwise.sum()


@pytest.mark.slow  # NUTS: 14 s with a warm compile cache, about a minute cold
def test_penguins_gda_nuts_gibbs_and_em_agree_with_the_exact_posterior_of_mu(penguins):
    example = load_example("penguins_missing")
    X, y = penguins
    table, worst = example.gda_comparison(X, y, draws=300, nuts_draws=200)
    assert len(table) == 12  # 3 species x 4 measurements
    # The 2 rows with nothing measured tell μ nothing: EM's mode of μ is the conjugate posterior
    # mean on the 342 measured rows (the NIW's joint mode of μ is its mean), to EM's tolerance.
    assert np.allclose(table["EM mode"], table["exact mean"], rtol=1e-4)
    # Seeded draws, so this is not flaky; a sampler that used the blank rows' imputed values as
    # data, or dropped a class's rows, would sit tens of MCSEs away.
    assert worst["NUTS"] < 4.5 and worst["Gibbs"] < 4.5
    assert (table["(NUTS - Gibbs) / MCSE"].abs() < 4.5).all()
    for sampler in ("NUTS", "Gibbs"):
        ratio = table[f"{sampler} sd"] / table["exact sd"]
        assert ((0.8 < ratio) & (ratio < 1.25)).all()


def test_sms_bernoulli_flags_with_blanks_score_as_the_categorical_yes_no_block():
    example = load_example("sms_metadata_missing")
    texts, labels = load_toy_spam()
    y = np.asarray(labels)
    X = example.blank(example.with_metadata(list(texts)), 0.2, seed=0)
    flags = X[list(example.FLAGS)].to_numpy()
    assert set(np.unique(flags[~np.isnan(flags)])) <= {0.0, 1.0} and np.isnan(flags).any()
    # Beta(1, 1) is Dirichlet(1, 1): the Bernoulli block on 0/1 flags and a categorical block on
    # the same flags as "no"/"yes" strings (missing where blanked) are one model, so their exact
    # LOO must agree row by row, blanks included.
    as_strings = X.copy()
    for flag in example.FLAGS:
        as_strings[flag] = pd.Categorical(
            X[flag].map({0.0: "no", 1.0: "yes"}), categories=["no", "yes"]
        )
    categorical = [block for block in example.BLOCKS if block[0] != "flags"]
    categorical.append(("flags", "categorical", list(example.FLAGS)))
    bernoulli = bayesgen.leave_one_out(example.fit(example.BLOCKS, X, y)).pointwise
    reference = bayesgen.leave_one_out(example.fit(categorical, as_strings, y)).pointwise
    assert np.allclose(bernoulli, reference, rtol=1e-9, atol=1e-12)
